// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: the files behind the mappings, mapped into this process from copies of
 * the fixture library made by the test: parsed files evicted and parsed again, files named
 * like the markers of pseudo mappings, symbol tables read after the file is gone, a
 * jitdump marker, a path shadowed by a bind mount, and corrupt ELF files (made by hand
 * and by random byte flips) that must not crash us.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "elf-test.h"

static const char *dir;

/* The section header of @type in an ELF64 image, or NULL. */
static Elf64_Shdr *find_shdr(char *img, size_t len, uint32_t type)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	size_t i;

	CHECK(len >= sizeof(*eh) && !memcmp(eh->e_ident, ELFMAG, SELFMAG));
	CHECK(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= len);
	for (i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff) + i;

		if (sh->sh_type == type)
			return sh;
	}
	return NULL;
}

/* Corrupt files mapped executable: "[basename]", counted unreadable, no crash. */
static void test_corrupt(void)
{
	static const char *const names[] = {"garbage.so", "truncated.so", "badhdr.so", "badlink.so",
					    "badsize.so"};
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st0, st;
	char path[4096], *lib, *img;
	uint64_t addr[5];
	size_t len, i;
	Elf64_Shdr *sh;
	struct frame fr;

	CHECK(s);
	snprintf(path, sizeof(path), "%s/libsymfix.so", dir);
	lib = read_whole(path, &len);
	CHECK(len > 8192);
	img = malloc(len);
	CHECK(img);

	for (i = 0; i < len; i++)
		img[i] = (char)rng();
	snprintf(path, sizeof(path), "%s/garbage.so", dir);
	write_file(path, img, 8192);
	/* truncated, with its own build-id (else it may borrow the intact file's symbols) */
	memcpy(img, lib, 4096);
	for (i = 0; i + 32 < 4096; i++) {
		if (!memcmp(img + i, "\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU", 16)) {
			img[i + 16] ^= 0xff;
			break;
		}
	}
	CHECK(i + 32 < 4096);
	snprintf(path, sizeof(path), "%s/truncated.so", dir);
	write_file(path, img, 4096);
	/* a valid ELF header, then garbage */
	memcpy(img, lib, sizeof(Elf64_Ehdr));
	snprintf(path, sizeof(path), "%s/badhdr.so", dir);
	write_file(path, img, 8192);
	/* .symtab's string table link out of range */
	memcpy(img, lib, len);
	sh = find_shdr(img, len, SHT_SYMTAB);
	CHECK(sh);
	sh->sh_link = 0x7fff;
	snprintf(path, sizeof(path), "%s/badlink.so", dir);
	write_file(path, img, len);
	/* .symtab far larger than the file */
	memcpy(img, lib, len);
	sh = find_shdr(img, len, SHT_SYMTAB);
	sh->sh_size = 1ull << 40;
	snprintf(path, sizeof(path), "%s/badsize.so", dir);
	write_file(path, img, len);

	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		addr[i] = map_exec(path, i == 1 ? 4096 : 8192);
	}
	symbolizer__stats(s, &st0);
	CHECK(!symbolizer__snapshot(s, getpid()));
	symbolizer__stats(s, &st);
	/* garbage, truncated, badhdr fail at their headers; the symbol tables of the
	 * others are read (and fail) at their first lookup */
	CHECK(st.files_unreadable >= st0.files_unreadable + 3);
	CHECK(st.files_unreadable <= st0.files_unreadable + 5);
	for (i = 0; i < 5; i++) {
		char want[64];

		snprintf(want, sizeof(want), "[%s]", names[i]);
		fr = user(s, getpid(), addr[i] + 0x10, false);
		CHECK(fr.kind == FRAME_MODULE);
		CHECK_STR(fr.name, want);
		CHECK(ends_with(fr.module, names[i]));
		fr = user(s, getpid(), addr[i] + 0x1000 - 1, true);
		CHECK(fr.kind == FRAME_MODULE);
		munmap((void *)(uintptr_t)addr[i], i == 1 ? 4096 : 8192);
	}
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_unreadable, st0.files_unreadable + 5);
	/* a refresh does not count them again */
	CHECK(!symbolizer__snapshot(s, getpid()));
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_unreadable, st0.files_unreadable + 5);
	symbolizer__free(s);
	free(img);
	free(lib);
}

/*
 * A runtime's jitdump mapped executable (for perf to find): a marker, not code. It is
 * not read as ELF (not counted unreadable) and an address in it names the file.
 */
static void test_jitdump_marker(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st0, st;
	char path[4096], img[8192];
	struct frame fr;
	uint64_t addr;
	size_t i;

	CHECK(s);
	for (i = 0; i < sizeof(img); i++)
		img[i] = (char)rng();
	snprintf(path, sizeof(path), "%s/jit-77.dump", dir);
	write_file(path, img, sizeof(img));
	CHECK(!symbolizer__snapshot(s, getpid()));
	symbolizer__stats(s, &st0);
	CHECK(!(symbolizer__jit_hints(s, getpid(), 0) & SYMBOLIZER_JIT_DUMP));
	addr = map_exec(path, sizeof(img));
	CHECK(!symbolizer__snapshot(s, getpid()));
	CHECK(symbolizer__jit_hints(s, getpid(), 0) & SYMBOLIZER_JIT_DUMP);
	fr = user(s, getpid(), addr + 0x10, false);
	CHECK(fr.kind == FRAME_MODULE);
	CHECK_STR(fr.name, "[jit-77.dump]");
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_unreadable, st0.files_unreadable);
	CHECK_U64(st.files_cached, st0.files_cached);
	munmap((void *)(uintptr_t)addr, sizeof(img));
	symbolizer__free(s);
}

static const char *name_gen(struct symbolizer *s, uint64_t gen, uint64_t ip)
{
	struct frame fr;

	CHECK(symbolizer__user_gen(s, getpid(), gen, ip, false, &fr, 1) == 1);
	return fr.name;
}

/*
 * A parsed file is found again by one stat of the path the maps line shows, taken only
 * when it names the mapped inode: with another file bind-mounted over that path (and
 * parsed too), a new snapshot still gets the mapped file's symbols. Needs a mount
 * namespace of its own (root): run in a child.
 */
static void test_shadowed_path(void)
{
	char a[4096], b[4096], *img;
	struct symbolizer *s;
	uint64_t base_a, base_b, off;
	size_t len, i;
	int status;
	pid_t pid;

	if (geteuid()) {
		printf("test_shadowed_path: skipped (a bind mount needs root)\n");
		return;
	}
	snprintf(a, sizeof(a), "%s/libsymfix.so", dir);
	img = read_whole(a, &len);
	snprintf(a, sizeof(a), "%s/shadow-a.so", dir);
	write_file(a, img, len);
	/* B: the same layout, another build-id and "symfix_lib_funX" for the function */
	for (i = 0; i + 32 < len; i++)
		if (!memcmp(img + i, "\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU", 16))
			img[i + 16] ^= 0xff;
	for (i = 0; i + 15 < len; i++)
		if (!memcmp(img + i, "symfix_lib_func", 15))
			img[i + 14] = 'X';
	snprintf(b, sizeof(b), "%s/shadow-b.so", dir);
	write_file(b, img, len);
	free(img);

	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		CHECK(!unshare(CLONE_NEWNS));
		CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
		s = symbolizer__new(NULL);
		CHECK(s);
		base_a = map_exec(a, len);
		base_b = map_exec(b, len);
		CHECK(!symbolizer__snapshot_gen(s, getpid(), 1));
		for (off = 0; off < len; off++)
			if (!strcmp(name_gen(s, 1, base_a + off), "symfix_lib_func"))
				break;
		CHECK(off < len);
		CHECK_STR(name_gen(s, 1, base_b + off), "symfix_lib_funX");
		/* both parsed; B now sits on A's path */
		CHECK(!mount(b, a, NULL, MS_BIND, NULL));
		CHECK(!symbolizer__snapshot_gen(s, getpid(), 2));
		CHECK_STR(name_gen(s, 2, base_a + off), "symfix_lib_func");
		CHECK_STR(name_gen(s, 2, base_b + off), "symfix_lib_funX");
		symbolizer__free(s);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * Random byte flips in a good library, parsed from memory: whatever libelf makes of it,
 * we never read out of bounds (run under ASan) and every answer is well-formed.
 */
static void test_fuzz(void)
{
	struct strset *strs = strset__new();
	char path[4096], *lib, *img;
	size_t len, i, j, parsed = 0;
	struct elf_file *f;
	uint64_t vaddr;

	CHECK(strs);
	snprintf(path, sizeof(path), "%s/libsymfix.so", dir);
	lib = read_whole(path, &len);
	img = malloc(len);
	CHECK(img);
	for (i = 0; i < 3000; i++) {
		size_t flips = 1 + rng() % 16;

		memcpy(img, lib, len);
		for (j = 0; j < flips; j++) {
			/* mostly the headers and tables at both ends of the file */
			size_t at = rng() % 4 ? (rng() % 2 ? rng() % 1024 : len - 1 - rng() % 3072)
					      : rng() % len;
			img[at] = (char)rng();
		}
		f = elf_file__parse(-1, img, len - (i % 7 ? 0 : rng() % len), strs, "fuzz");
		if (!f) {
			CHECK(errno == EINVAL);
			continue;
		}
		parsed++;
		for (j = 0; j < 64; j++) {
			const struct sym *sym;

			if (!elf_file__offset_to_vaddr(f, rng() % (len + 4096), &vaddr))
				continue;
			sym = symtab__find(&f->tab, vaddr);
			CHECK(!sym || (sym->name && vaddr >= sym->start && vaddr < sym->end));
		}
		elf_file__free(f);
	}
	printf("fuzz: %zu of 3000 mutants parsed\n", parsed);
	CHECK(parsed > 0);
	free(img);
	free(lib);
	strset__free(strs);
}

/*
 * libsymfix.so, for copies with build-ids of their own: loaded (*@h, to dlclose), its bytes
 * returned (*@len; malloc'ed), with the offset of symfix_lib_func from its load base (*@off)
 * and of its GNU build-id note (*@bid: the build-id is at *@bid + 16).
 */
static char *symfix_lib_image(void **h, size_t *len, uint64_t *off, size_t *bid)
{
	void (*addrs)(void **, void **, void **, void **), *func, *x;
	char path[4096], *lib;
	Dl_info info;

	snprintf(path, sizeof(path), "%s/libsymfix.so", dir);
	*h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(*h);
	*(void **)&addrs = dlsym(*h, "symfix_lib_addrs");
	CHECK(addrs);
	addrs(&func, &x, &x, &x);
	CHECK(dladdr(func, &info));
	*off = (uintptr_t)func - (uintptr_t)info.dli_fbase;
	lib = read_whole(path, len);
	for (*bid = 0; *bid + 32 < *len; (*bid)++)
		if (!memcmp(lib + *bid, "\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU", 16))
			break;
	CHECK(*bid + 32 < *len);
	return lib;
}

/*
 * Files no process uses: the 16 most recently released stay parsed, older ones drop
 * their tables and are parsed again when mapped again.
 */
static void test_evict(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st0, st;
	uint64_t addr[20], off;
	char path[4096], *img;
	size_t len, i, bid;
	struct frame fr;
	void *h;

	CHECK(s);
	img = symfix_lib_image(&h, &len, &off, &bid);
	/* 20 distinct files (own build-ids), mapped under generation 1 */
	for (i = 0; i < 20; i++) {
		img[bid + 16] = (char)i;
		img[bid + 17] = (char)0xee;
		snprintf(path, sizeof(path), "%s/evict%zu.so", dir, i);
		write_file(path, img, len);
		addr[i] = map_exec(path, len);
	}
	symbolizer__stats(s, &st0);
	CHECK(!symbolizer__snapshot_gen(s, getpid(), 1));
	symbolizer__stats(s, &st);
	CHECK(st.files_cached >= st0.files_cached + 20);
	CHECK(symbolizer__user_gen(s, getpid(), 1, addr[0] + off, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_lib_func");
	/* unmapped and forgotten: 20 unused files, the 4 released first lose their tables */
	for (i = 0; i < 20; i++)
		munmap((void *)(uintptr_t)addr[i], len);
	symbolizer__forget_gen(s, getpid(), 1);
	symbolizer__stats(s, &st);
	CHECK(st.files_evicted >= 4);
	/* mapped again: parsed again, not a new file */
	st0 = st;
	for (i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "%s/evict%zu.so", dir, i);
		addr[i] = map_exec(path, len);
	}
	CHECK(!symbolizer__snapshot_gen(s, getpid(), 2));
	for (i = 0; i < 20; i++) {
		CHECK(symbolizer__user_gen(s, getpid(), 2, addr[i] + off, false, &fr, 1) == 1);
		CHECK_STR(fr.name, "symfix_lib_func");
		munmap((void *)(uintptr_t)addr[i], len);
	}
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_cached, st0.files_cached);
	CHECK_U64(st.files_unreadable, st0.files_unreadable);
	symbolizer__free(s);
	dlclose(h);
	free(img);
}

/*
 * Files named like the markers of mappings that are no file ("[jit]" for anonymous
 * executable memory, "[heap]", "[vdso]"...): still files, their symbols found, live and
 * through an exported and imported snapshot, and no JIT hint from them.
 */
static void test_marker_names(void)
{
	static const char *const names[] = {
		"jit",	  "[jit]",   "heap",	  "[heap]", "stack",  "[stack]",  "vdso",
		"[vdso]", "unknown", "[unknown]", "anon",   "[anon]", "vsyscall", "[vsyscall]",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct symbolizer *s = symbolizer__new(NULL), *s2 = symbolizer__new(NULL);
	struct symbolizer_mapping *mv = NULL, mp;
	uint64_t addr[N], off;
	char path[4096], *img;
	size_t len, bid, nm, i;
	int hints0, hints;
	struct frame fr;
	void *h;

	CHECK(s && s2);
	img = symfix_lib_image(&h, &len, &off, &bid);
	CHECK(!symbolizer__snapshot_gen(s, getpid(), 1));
	hints0 = symbolizer__jit_hints(s, getpid(), 1);
	CHECK(hints0 >= 0);
	for (i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		write_file(path, img, len);
		addr[i] = map_exec(path, len);
	}
	CHECK(!symbolizer__snapshot_gen(s, getpid(), 2));
	hints = symbolizer__jit_hints(s, getpid(), 2);
	CHECK(hints == hints0);
	for (i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		CHECK(symbolizer__user_gen(s, getpid(), 2, addr[i] + off, false, &fr, 1) == 1);
		CHECK_STR(fr.name, "symfix_lib_func");
		CHECK(fr.module && !strcmp(fr.module, path));
		CHECK(!symbolizer__mapping_gen(s, getpid(), 2, addr[i] + off, &mp));
		CHECK(mp.kind == SYMBOLIZER_MAP_FILE && mp.path && !strcmp(mp.path, path));
	}
	/* as a capture carries them to report */
	CHECK(!symbolizer__mappings_gen(s, getpid(), 2, &mv, &nm));
	CHECK(!symbolizer__import_gen(s2, 77, 1, mv, nm));
	for (i = 0; i < N; i++) {
		CHECK(symbolizer__user_gen(s2, 77, 1, addr[i] + off, false, &fr, 1) == 1);
		CHECK_STR(fr.name, "symfix_lib_func");
	}
	CHECK(symbolizer__jit_hints(s2, 77, 1) == hints0);
	for (i = 0; i < N; i++) {
		munmap((void *)(uintptr_t)addr[i], len);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		CHECK(!unlink(path));
	}
	free(mv);
	symbolizer__forget_gen(s, getpid(), 1);
	symbolizer__forget_gen(s, getpid(), 2);
	symbolizer__free(s2);
	symbolizer__free(s);
	dlclose(h);
	free(img);
}

/*
 * A file's symbol tables are read at its first lookup, after the process may have unmapped
 * it and the file may be gone: the descriptor the snapshot opened still reads it.
 */
#define NR_DEFERRED 300

/* Descriptors open in this process. */
static size_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	CHECK(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_deferred(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st0, st;
	uint64_t addr, off, many[NR_DEFERRED];
	char path[4096], *lib, *grown;
	size_t len, bid, i, fds0;
	struct frame fr;
	void *h;

	CHECK(s);
	lib = symfix_lib_image(&h, &len, &off, &bid);
	lib[bid + 16] ^= 0x5a; /* its own build-id: nothing to borrow symbols from */
	lib[bid + 17] = (char)0xdd;
	snprintf(path, sizeof(path), "%s/deferred.so", dir);
	write_file(path, lib, len);
	addr = map_exec(path, len);
	symbolizer__stats(s, &st0);
	CHECK(!symbolizer__snapshot_gen(s, getpid(), 7));
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_symbols, st0.files_symbols);
	/* gone before the first lookup: unmapped, its path unlinked */
	munmap((void *)(uintptr_t)addr, len);
	CHECK(!unlink(path));
	CHECK(symbolizer__user_gen(s, getpid(), 7, addr + off, false, &fr, 1) == 1);
	CHECK(fr.kind == FRAME_SYMBOL);
	CHECK_STR(fr.name, "symfix_lib_func");
	CHECK(ends_with(fr.module, "/deferred.so"));
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_symbols, st0.files_symbols + 1);
	CHECK_U64(st.files_unreadable, st0.files_unreadable);

	/*
	 * Rewritten in place (same inode) before the first lookup: what was mapped is not
	 * there any more, so it is not read (here the new contents would still resolve).
	 */
	lib[bid + 16] ^= 0x33;
	snprintf(path, sizeof(path), "%s/rewritten.so", dir);
	write_file(path, lib, len);
	addr = map_exec(path, len);
	CHECK(!symbolizer__snapshot_gen(s, getpid(), 9));
	munmap((void *)(uintptr_t)addr, len);
	grown = malloc(len + 4096);
	CHECK(grown);
	memcpy(grown, lib, len);
	memset(grown + len, 0, 4096);
	write_file(path, grown, len + 4096);
	free(grown);
	symbolizer__stats(s, &st0);
	CHECK(symbolizer__user_gen(s, getpid(), 9, addr + off, false, &fr, 1) == 1);
	CHECK(fr.kind == FRAME_MODULE);
	CHECK_STR(fr.name, "[rewritten.so]");
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_unreadable, st0.files_unreadable + 1);
	CHECK_U64(st.files_symbols, st0.files_symbols);
	CHECK(!unlink(path));

	/*
	 * More new files than descriptors may be held (256): the ones past the limit are read
	 * at once, the descriptors held stay bounded, and every file resolves after it is gone.
	 */
	for (i = 0; i < NR_DEFERRED; i++) {
		lib[bid + 16] = (char)i;
		lib[bid + 17] = (char)(0xd0 + (i >> 8));
		snprintf(path, sizeof(path), "%s/deferred%zu.so", dir, i);
		write_file(path, lib, len);
		many[i] = map_exec(path, len);
	}
	fds0 = count_fds();
	symbolizer__stats(s, &st0);
	CHECK(!symbolizer__snapshot_gen(s, getpid(), 8));
	symbolizer__stats(s, &st);
	CHECK(count_fds() <= fds0 + 256);
	CHECK(st.files_symbols >= st0.files_symbols + NR_DEFERRED - 256);
	CHECK(st.files_symbols < st0.files_symbols + NR_DEFERRED);
	for (i = 0; i < NR_DEFERRED; i++) {
		munmap((void *)(uintptr_t)many[i], len);
		snprintf(path, sizeof(path), "%s/deferred%zu.so", dir, i);
		CHECK(!unlink(path));
	}
	for (i = 0; i < NR_DEFERRED; i++) {
		CHECK(symbolizer__user_gen(s, getpid(), 8, many[i] + off, false, &fr, 1) == 1);
		CHECK_STR(fr.name, "symfix_lib_func");
	}
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_symbols, st0.files_symbols + NR_DEFERRED);
	CHECK_U64(st.files_unreadable, st0.files_unreadable);
	symbolizer__free(s);
	CHECK(count_fds() <= fds0);
	dlclose(h);
	free(lib);
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	dir = argv[1];
	if (getenv("SCORCH_TEST_DEBUG"))
		log__set_level(LOG_DEBUG);
	test_evict();
	test_marker_names();
	test_deferred();
	test_corrupt();
	test_jitdump_marker();
	test_shadowed_path();
	test_fuzz();
	printf("ok\n");
	return 0;
}
