// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: user-space lookups against fixture binaries built by CMake (PIE,
 * non-PIE, shared library, stripped copy), after the process exits, in our own process
 * (vdso, pseudo mappings, dlopen), and on corrupt ELF files that must not crash us.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "symbolize-private.h"

struct fixture {
	pid_t pid;
	int in_fd;
	uint64_t exe_func, exe_local, ends_with_call, after_call;
	uint64_t lib_func, lib_local, lib_before_gap, lib_after_gap;
	uint64_t ret;
};

static const char *dir;

static void fixture_start(const char *name, struct fixture *fx)
{
	int in[2], out[2];
	char path[4096], line[256], key[64];
	uint64_t v;
	FILE *f;

	memset(fx, 0, sizeof(*fx));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(!pipe2(in, O_CLOEXEC) && !pipe2(out, O_CLOEXEC));
	fx->pid = fork();
	CHECK(fx->pid >= 0);
	if (!fx->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fx->in_fd = in[1];
	f = fdopen(out[0], "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "ready\n"))
			break;
		CHECK(sscanf(line, "%63s %" SCNx64, key, &v) == 2);
		if (!strcmp(key, "exe_func"))
			fx->exe_func = v;
		else if (!strcmp(key, "exe_local"))
			fx->exe_local = v;
		else if (!strcmp(key, "ends_with_call"))
			fx->ends_with_call = v;
		else if (!strcmp(key, "after_call"))
			fx->after_call = v;
		else if (!strcmp(key, "lib_func"))
			fx->lib_func = v;
		else if (!strcmp(key, "lib_local"))
			fx->lib_local = v;
		else if (!strcmp(key, "lib_before_gap"))
			fx->lib_before_gap = v;
		else if (!strcmp(key, "lib_after_gap"))
			fx->lib_after_gap = v;
		else if (!strcmp(key, "ret"))
			fx->ret = v;
	}
	fclose(f);
	CHECK(fx->exe_func && fx->exe_local && fx->ends_with_call && fx->after_call);
	CHECK(fx->lib_func && fx->lib_local && fx->lib_before_gap && fx->lib_after_gap && fx->ret);
}

static void fixture_stop(struct fixture *fx)
{
	int status;

	kill(fx->pid, SIGKILL);
	CHECK(waitpid(fx->pid, &status, 0) == fx->pid);
	close(fx->in_fd);
}

static struct frame user(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return)
{
	struct frame fr;

	CHECK(symbolizer__user(s, pid, ip, is_return, &fr, 1) == 1);
	CHECK(fr.name);
	CHECK(fr.kind == FRAME_SYMBOL || fr.kind == FRAME_MODULE || fr.kind == FRAME_UNKNOWN ||
	      fr.kind == FRAME_JIT);
	return fr;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

static void check_sym(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return,
		      const char *name, uint64_t offset, const char *module_suffix, int line)
{
	struct frame fr = user(s, pid, ip, is_return);

	if (fr.kind != FRAME_SYMBOL || strcmp(fr.name, name) || fr.offset != offset ||
	    !ends_with(fr.module, module_suffix)) {
		fprintf(stderr,
			"%s:%d: %#" PRIx64 "%s: got %s+%#" PRIx64 " (%s, kind %d), want "
			"%s+%#" PRIx64 " (*%s)\n",
			__FILE__, line, ip, is_return ? " (return)" : "", fr.name, fr.offset,
			fr.module ? fr.module : "no module", fr.kind, name, offset, module_suffix);
		exit(1);
	}
}

#define CHECK_SYM(s, pid, ip, ret, name, off, mod)                                                 \
	check_sym(s, pid, ip, ret, name, off, mod, __LINE__)

/* The [vdso] range of @pid from its maps. */
static bool vdso_range(pid_t pid, uint64_t *start, uint64_t *end)
{
	struct strset *strs = strset__new();
	struct map_entry *e = NULL;
	size_t len, nr = 0, bad, i;
	char path[64], *text;
	bool found = false;

	CHECK(strs);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	CHECK(!file__read_bounded(AT_FDCWD, path, MAPS_MAX_BYTES, &text, &len));
	CHECK(!maps__parse(text, len, strs, &e, &nr, &bad));
	for (i = 0; i < nr && !found; i++) {
		if (!strcmp(e[i].path, "[vdso]")) {
			*start = e[i].start;
			*end = e[i].end;
			found = true;
		}
	}
	free(e);
	free(text);
	strset__free(strs);
	return found;
}

/* Every address of the vdso names a __vdso_ function or "[vdso]"; some name one. */
static void check_vdso(struct symbolizer *s, pid_t pid)
{
	uint64_t start, end, a;
	size_t named = 0;
	struct frame fr;

	if (!vdso_range(pid, &start, &end)) {
		printf("no vdso in pid %d\n", (int)pid);
		return;
	}
	for (a = start; a < end; a += 4) {
		fr = user(s, pid, a, false);
		CHECK(fr.kind != FRAME_UNKNOWN);
		if (fr.kind == FRAME_MODULE) {
			CHECK_STR(fr.name, "[vdso]");
			continue;
		}
		CHECK_STR(fr.module, "[vdso]");
		if (!strncmp(fr.name, "__vdso_", 7))
			named++;
	}
	CHECK(named > 0);
}

static void test_fixture(struct symbolizer *s, const char *exe, bool second)
{
	struct symbolizer_stats st0, st;
	struct symbolizer *s2;
	char exe_suffix[64];
	struct fixture fx;
	struct frame fr;

	snprintf(exe_suffix, sizeof(exe_suffix), "/%s", exe);
	fixture_start(exe, &fx);
	symbolizer__stats(s, &st0);
	CHECK(!symbolizer__snapshot(s, fx.pid));
	symbolizer__stats(s, &st);
	/* the exe, libsymfix.so, libc, ld.so; the second fixture shares all but its exe */
	if (second)
		CHECK_U64(st.files_cached, st0.files_cached + 1);
	else
		CHECK(st.files_cached >= 4);
	CHECK_U64(st.files_unreadable, st0.files_unreadable);
	/* only headers so far: symbol tables are read at the first lookup in each file */
	CHECK_U64(st.files_symbols, st0.files_symbols);
	CHECK_SYM(s, fx.pid, fx.exe_func, false, "symfix_exe_func", 0, exe_suffix);
	symbolizer__stats(s, &st);
	CHECK_U64(st.files_symbols, st0.files_symbols + 1);

	CHECK_SYM(s, fx.pid, fx.exe_func, false, "symfix_exe_func", 0, exe_suffix);
	CHECK_SYM(s, fx.pid, fx.exe_func + 1, false, "symfix_exe_func", 1, exe_suffix);
	CHECK_SYM(s, fx.pid, fx.exe_local, false, "symfix_exe_local", 0, exe_suffix);
	CHECK_SYM(s, fx.pid, fx.after_call, false, "symfix_after_call", 0, exe_suffix);
	/* the return address is just past symfix_ends_with_call's last instruction */
	CHECK_SYM(s, fx.pid, fx.ret, true, "symfix_ends_with_call", fx.ret - fx.ends_with_call,
		  exe_suffix);
	fr = user(s, fx.pid, fx.ret, false);
	CHECK(strcmp(fr.name, "symfix_ends_with_call"));

	/* the global name wins over the hidden alias at the same address */
	CHECK_SYM(s, fx.pid, fx.lib_func, false, "symfix_lib_func", 0, "/libsymfix.so");
	CHECK_SYM(s, fx.pid, fx.lib_func + 2, true, "symfix_lib_func", 2, "/libsymfix.so");
	CHECK_SYM(s, fx.pid, fx.lib_local, false, "symfix_lib_local", 0, "/libsymfix.so");
	CHECK_SYM(s, fx.pid, fx.lib_after_gap, false, "symfix_lib_after_gap", 0, "/libsymfix.so");
	/* the padding before the aligned function: in the mapping, in no symbol */
	CHECK(fx.lib_after_gap - fx.lib_before_gap > 32);
	fr = user(s, fx.pid, fx.lib_after_gap - 8, false);
	CHECK(fr.kind == FRAME_MODULE);
	CHECK_STR(fr.name, "[libsymfix.so]");
	CHECK(ends_with(fr.module, "/libsymfix.so"));
	/* nothing mapped */
	fr = user(s, fx.pid, 0x1000, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	CHECK_STR(fr.name, "[unknown]");
	CHECK(!fr.module);
	fr = user(s, fx.pid, 0, true);
	CHECK(fr.kind == FRAME_UNKNOWN);
	check_vdso(s, fx.pid);

	/* never snapshotted: the first lookup takes the snapshot */
	s2 = symbolizer__new(NULL);
	CHECK(s2);
	CHECK_SYM(s2, fx.pid, fx.lib_func, false, "symfix_lib_func", 0, "/libsymfix.so");
	CHECK_SYM(s2, fx.pid, fx.exe_func, false, "symfix_exe_func", 0, exe_suffix);
	symbolizer__stats(s2, &st);
	CHECK_U64(st.user_frames, 2);
	CHECK_U64(st.user_unresolved, 0);
	CHECK_U64(st.procs_missing, 0);
	symbolizer__free(s2);

	/* gone: what the snapshot kept still resolves; a new snapshot keeps it */
	fixture_stop(&fx);
	CHECK(symbolizer__snapshot(s, fx.pid) == -ESRCH);
	CHECK_SYM(s, fx.pid, fx.exe_func, false, "symfix_exe_func", 0, exe_suffix);
	CHECK_SYM(s, fx.pid, fx.lib_local, false, "symfix_lib_local", 0, "/libsymfix.so");
	CHECK_SYM(s, fx.pid, fx.ret, true, "symfix_ends_with_call", fx.ret - fx.ends_with_call,
		  exe_suffix);

	/* gone and never seen: unknown frames, counted, not an error */
	s2 = symbolizer__new(NULL);
	CHECK(s2);
	fr = user(s2, fx.pid, fx.exe_func, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	fr = user(s2, fx.pid, fx.lib_func, true);
	CHECK(fr.kind == FRAME_UNKNOWN);
	symbolizer__stats(s2, &st);
	CHECK_U64(st.procs_missing, 1);
	CHECK_U64(st.user_frames, 2);
	CHECK_U64(st.user_unresolved, 2);
	symbolizer__free(s2);

	/* forget drops the mappings; the pid then counts as missing */
	symbolizer__forget(s, fx.pid);
	fr = user(s, fx.pid, fx.exe_func, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	CHECK(!close(fd));
}

static void *read_whole(const char *path, size_t *len)
{
	char *buf;

	CHECK(!file__read_bounded(AT_FDCWD, path, 64u << 20, &buf, len));
	return buf;
}

/* Maps @path executable in this process; returns the address. */
static uint64_t map_exec(const char *path, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	CHECK(fd >= 0);
	p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	close(fd);
	return (uintptr_t)p;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

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

/* Mappings made after the snapshot, and mappings gone since. */
static void test_refresh(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	pid_t self = getpid();
	struct frame fr;
	void *late, *later;

	CHECK(s);
	CHECK(!symbolizer__snapshot(s, self));
	CHECK(symbolizer__jit_hints(s, self, 0) == 0); /* no JIT code in this process yet */
	CHECK(symbolizer__jit_hints(s, self, 1) == -ENOENT);
	late = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(late != MAP_FAILED);
	CHECK(!symbolizer__snapshot_gen(s, self, 1));
	CHECK(symbolizer__jit_hints(s, self, 1) == SYMBOLIZER_JIT_ANON);
	/* a miss re-reads the maps, once per process */
	fr = user(s, self, (uintptr_t)late + 8, false);
	CHECK_STR(fr.name, "[jit]");
	later = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(later != MAP_FAILED);
	fr = user(s, self, (uintptr_t)later + 8, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	/* an explicit snapshot sees it; one that no longer sees @late keeps it */
	CHECK(!munmap(late, 4096));
	CHECK(!symbolizer__snapshot(s, self));
	fr = user(s, self, (uintptr_t)later + 8, false);
	CHECK_STR(fr.name, "[jit]");
	fr = user(s, self, (uintptr_t)late + 8, false);
	CHECK_STR(fr.name, "[jit]");
	/* still a lookup-time binary search on the merged, sorted mappings */
	CHECK_SYM(s, self, (uintptr_t)test_refresh, false, "test_refresh", 0,
		  "/test_symbolize_elf");
	CHECK(!munmap(later, 4096));
	symbolizer__free(s);
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Our own process: dlopen'ed stripped library, build-id sharing, pseudo mappings. */
static void test_self(void)
{
	void (*addrs)(void **, void **, void **, void **);
	void *func, *local, *before_gap, *after_gap, *h, *anon, *data;
	struct symbolizer_stats st0, st;
	uint64_t heap_start, heap_end;
	char path[4096], copy[4096], copy2[4096], *lib;
	struct symbolizer *s;
	pid_t self = getpid();
	Dl_info info;
	struct frame fr;
	size_t len;
	int local_var = 0;

	snprintf(path, sizeof(path), "%s/libsymfix-stripped.so", dir);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h);
	*(void **)&addrs = dlsym(h, "symfix_lib_addrs");
	CHECK(addrs);
	addrs(&func, &local, &before_gap, &after_gap);
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	data = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED && data != MAP_FAILED);

	s = symbolizer__new(NULL);
	CHECK(s);
	CHECK(!symbolizer__snapshot(s, self));
	/* .dynsym only: exported names resolve, the static function cannot */
	CHECK_SYM(s, self, (uintptr_t)func, false, "symfix_lib_func", 0, "/libsymfix-stripped.so");
	CHECK_SYM(s, self, (uintptr_t)after_gap + 3, true, "symfix_lib_after_gap", 3,
		  "/libsymfix-stripped.so");
	fr = user(s, self, (uintptr_t)local, false);
	CHECK(fr.kind == FRAME_MODULE);
	CHECK_STR(fr.name, "[libsymfix-stripped.so]");
	CHECK(ends_with(fr.module, "/libsymfix-stripped.so"));
	/* this test binary and its libraries */
	CHECK_SYM(s, self, (uintptr_t)test_self, false, "test_self", 0, "/test_symbolize_elf");
	CHECK_SYM(s, self, (uintptr_t)symbolizer__user + 1, false, "symbolizer__user", 1,
		  "/test_symbolize_elf");
	CHECK(dladdr((void *)getpid, &info) && info.dli_sname);
	fr = user(s, self, (uintptr_t)getpid, false);
	CHECK(fr.kind == FRAME_SYMBOL);
	printf("getpid -> %s in %s (dladdr: %s)\n", fr.name, fr.module, info.dli_sname);
	CHECK(ends_with(fr.module,
			info.dli_fname + (strrchr(info.dli_fname, '/') - info.dli_fname)));

	fr = user(s, self, (uintptr_t)anon + 100, false);
	CHECK(fr.kind == FRAME_MODULE);
	CHECK_STR(fr.name, "[jit]");
	CHECK(!fr.module);
	fr = user(s, self, (uintptr_t)data + 100, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	fr = user(s, self, (uintptr_t)&local_var, false);
	CHECK(fr.kind == FRAME_MODULE);
	CHECK_STR(fr.name, "[stack]");
	CHECK(!fr.module);
	if (vdso_range(self, &heap_start, &heap_end))
		check_vdso(s, self);

	/*
	 * Same build-id under other inodes (as in containers). The first unstripped copy is
	 * parsed once and its .symtab upgrades the stripped library seen before; a second
	 * copy is not parsed at all.
	 */
	snprintf(path, sizeof(path), "%s/libsymfix.so", dir);
	lib = read_whole(path, &len);
	snprintf(copy, sizeof(copy), "%s/libsymfix-copy.so", dir);
	write_file(copy, lib, len);
	snprintf(copy2, sizeof(copy2), "%s/libsymfix-copy2.so", dir);
	write_file(copy2, lib, len);
	CHECK(dladdr(func, &info));
	{
		uint64_t off = (uintptr_t)func - (uintptr_t)info.dli_fbase, at, at2;

		symbolizer__stats(s, &st0);
		at = map_exec(copy, len);
		CHECK(!symbolizer__snapshot(s, self));
		symbolizer__stats(s, &st);
		CHECK_U64(st.files_cached, st0.files_cached + 1);
		/* the text segment's file offsets equal its addresses in this library */
		CHECK_SYM(s, self, at + off, false, "symfix_lib_func", 0, "/libsymfix-copy.so");
		CHECK_SYM(s, self, (uintptr_t)local, false, "symfix_lib_local", 0,
			  "/libsymfix-stripped.so");
		at2 = map_exec(copy2, len);
		CHECK(!symbolizer__snapshot(s, self));
		symbolizer__stats(s, &st);
		CHECK_U64(st.files_cached, st0.files_cached + 1);
		CHECK_SYM(s, self, at2 + off, false, "symfix_lib_func", 0, "/libsymfix-copy2.so");
		munmap((void *)(uintptr_t)at, len);
		munmap((void *)(uintptr_t)at2, len);
	}
	free(lib);

	/* performance: many lookups in one process, no allocation per lookup */
	{
		uint64_t base = (uintptr_t)getpid, span = 1u << 20, sum = 0;
		size_t i, n = 2000000;
		double t0, t1;

		CHECK(dladdr((void *)getpid, &info));
		base = (uintptr_t)info.dli_fbase;
		t0 = now();
		for (i = 0; i < n; i++) {
			fr = user(s, self, base + rng() % span, i & 1);
			sum += fr.kind;
		}
		t1 = now();
		printf("perf: %zu lookups in %s in %.3f s (%.0f ns each)\n", n, info.dli_fname,
		       t1 - t0, (t1 - t0) * 1e9 / n);
		t0 = now();
		symbolizer__free(s);
		s = symbolizer__new(NULL);
		CHECK(s);
		CHECK(!symbolizer__snapshot(s, self));
		t1 = now();
		symbolizer__stats(s, &st);
		printf("perf: cold snapshot of this process: %.1f ms (%" PRIu64 " files)\n",
		       (t1 - t0) * 1e3, st.files_cached);
		(void)sum;
	}
	symbolizer__free(s);
	munmap(anon, 4096);
	munmap(data, 4096);
	dlclose(h);
}

struct jit_ctx {
	uint64_t base;
	int calls;
};

/* A JIT map: one function at [base, base + 64), a map without an entry elsewhere. */
static int jit_resolve(void *vctx, pid_t pid, uint64_t ip, const char **name, uint64_t *offset)
{
	struct jit_ctx *ctx = vctx;
	static char label[64];

	ctx->calls++;
	if (ip >= ctx->base && ip < ctx->base + 64) {
		char buf[32];

		/* borrowed and overwritten at the next call: the symbolizer interns it */
		snprintf(buf, sizeof(buf), "jit_fn_%d", 7);
		*name = strcpy(label, buf);
		*offset = ip - ctx->base;
		return 0;
	}
	if (ip >= ctx->base && ip < ctx->base + 4096) {
		snprintf(label, sizeof(label), "[perf-%d.map]", (int)pid);
		*name = label;
	}
	return -ENOENT;
}

/* The JIT resolver hook: named frames, fallback labels, "[jit]" without a resolver. */
static void test_jit(void)
{
	struct jit_ctx ctx = {0};
	struct symbolizer_opts o = {.sz = sizeof(o), .jit_lookup = jit_resolve, .jit_ctx = &ctx};
	struct symbolizer *s = symbolizer__new(&o), *plain = symbolizer__new(NULL);
	struct symbolizer_stats st;
	char want[64];
	void *code;
	struct frame fr;

	CHECK(s && plain);
	code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(code != MAP_FAILED);
	ctx.base = (uintptr_t)code;
	fr = user(s, getpid(), ctx.base + 9, true);
	CHECK(fr.kind == FRAME_JIT);
	CHECK_STR(fr.name, "jit_fn_7");
	CHECK_U64(fr.offset, 9);
	fr = user(s, getpid(), ctx.base + 100, false);
	CHECK(fr.kind == FRAME_MODULE);
	snprintf(want, sizeof(want), "[perf-%d.map]", (int)getpid());
	CHECK_STR(fr.name, want);
	/* no mapping and nothing from the resolver */
	fr = user(s, getpid(), 0x1000, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	CHECK_STR(fr.name, "[unknown]");
	CHECK(ctx.calls == 3);
	/* file-backed code never asks the resolver */
	fr = user(s, getpid(), (uintptr_t)test_jit, false);
	CHECK_STR(fr.name, "test_jit");
	CHECK(ctx.calls == 3);
	symbolizer__stats(s, &st);
	CHECK_U64(st.jit_frames, 1);
	fr = user(plain, getpid(), ctx.base + 9, false);
	CHECK(fr.kind == FRAME_MODULE);
	CHECK_STR(fr.name, "[jit]");
	munmap(code, 4096);
	symbolizer__free(s);
	symbolizer__free(plain);
}

/* (pid, gen) entries: separate images of one PID, forgotten independently. */
static void test_gen(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct symbolizer_stats st0, st;
	struct fixture fx;
	struct frame fr;
	double t0, t1;
	int i;

	CHECK(s);
	fixture_start("symfix-pie", &fx);
	t0 = now();
	CHECK(!symbolizer__snapshot_gen(s, fx.pid, 7));
	t1 = now();
	printf("perf: cold snapshot of the fixture: %.3f ms\n", (t1 - t0) * 1e3);
	t0 = now();
	for (i = 0; i < 100; i++)
		CHECK(!symbolizer__snapshot_gen(s, fx.pid, 100 + i));
	t1 = now();
	printf("perf: snapshot of the fixture, files cached: %.1f us\n", (t1 - t0) * 1e6 / 100);
	CHECK(symbolizer__user_gen(s, fx.pid, 7, fx.exe_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_exe_func");
	/* gen 8 was never snapshotted: taken now, while the image is the same */
	CHECK(symbolizer__user_gen(s, fx.pid, 8, fx.lib_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_lib_func");
	/* gen 0 is the pid-only API */
	CHECK(!symbolizer__snapshot(s, fx.pid));
	fixture_stop(&fx);
	symbolizer__forget_gen(s, fx.pid, 7);
	symbolizer__stats(s, &st0);
	CHECK(symbolizer__user_gen(s, fx.pid, 7, fx.exe_func, false, &fr, 1) == 1);
	CHECK(fr.kind == FRAME_UNKNOWN);
	symbolizer__stats(s, &st);
	CHECK_U64(st.procs_missing, st0.procs_missing + 1);
	/* the other entries still name the exited process */
	CHECK(symbolizer__user_gen(s, fx.pid, 8, fx.exe_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_exe_func");
	CHECK(symbolizer__user(s, fx.pid, fx.exe_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_exe_func");
	for (i = 0; i < 100; i++)
		symbolizer__forget_gen(s, fx.pid, 100 + i);
	symbolizer__forget_gen(s, fx.pid, 8);
	symbolizer__forget(s, fx.pid);
	symbolizer__free(s);
}

/*
 * A forked child's snapshot copied from its parent's: named without reading the child's
 * maps (the child here is a PID no process has), and still after the parent's entry is
 * gone; nothing to copy from an image never read or one that could not be.
 */
static void test_copy(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	const pid_t child = 0x3ffffff0, other = 0x3ffffff1;
	struct symbolizer_stats st;
	struct fixture fx;
	struct frame fr;
	double t0, t1;
	int i;

	CHECK(s);
	CHECK(kill(child, 0) && errno == ESRCH);
	fixture_start("symfix-pie", &fx);
	CHECK(!symbolizer__snapshot_gen(s, fx.pid, 7));
	CHECK(symbolizer__snapshot_copy(s, child, 1, fx.pid, 8) == -ENOENT);
	CHECK(!symbolizer__snapshot_copy(s, child, 1, fx.pid, 7));
	CHECK(symbolizer__snapshot_copy(s, child, 1, fx.pid, 7) == -EEXIST);
	CHECK(symbolizer__snapshot_copy(s, fx.pid, 7, fx.pid, 7) == -ENOENT);
	t0 = now();
	for (i = 0; i < 100; i++)
		CHECK(!symbolizer__snapshot_copy(s, fx.pid, 100 + i, fx.pid, 7));
	t1 = now();
	printf("perf: copy of the fixture's snapshot: %.2f us\n", (t1 - t0) * 1e6 / 100);
	fixture_stop(&fx);
	symbolizer__forget_gen(s, fx.pid, 7);
	CHECK(symbolizer__user_gen(s, child, 1, fx.exe_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_exe_func");
	CHECK(symbolizer__user_gen(s, child, 1, fx.lib_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_lib_func");
	/* a process gone before its maps were read: no mappings to hand down */
	CHECK(symbolizer__snapshot_gen(s, fx.pid, 9) == -ESRCH);
	CHECK(symbolizer__snapshot_copy(s, other, 1, fx.pid, 9) == -ENOENT);
	symbolizer__stats(s, &st);
	CHECK_U64(st.procs_copied, 101);
	CHECK_U64(st.procs_missing, 1);
	for (i = 0; i < 100; i++)
		symbolizer__forget_gen(s, fx.pid, 100 + i);
	symbolizer__forget_gen(s, child, 1);
	symbolizer__free(s);
}

/*
 * The executable mappings of the fixture @fx, from its /proc/PID/maps, into @v[0..return)
 * as the kernel's mmap records give them (@cap at most); *@text and *@ents (the caller
 * frees them) hold what the paths point into.
 */
static size_t fixture_vmas(const struct fixture *fx, struct strset *strs, struct symbolizer_vma *v,
			   size_t cap, char **text, struct map_entry **ents)
{
	size_t nr = 0, nbad = 0, len, i, n = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)fx->pid);
	CHECK(!file__read_bounded(AT_FDCWD, path, 1 << 20, text, &len));
	CHECK(!maps__parse(*text, len, strs, ents, &nr, &nbad));
	for (i = 0; i < nr && n < cap; i++) {
		if (!((*ents)[i].perms & MAP_PERM_X))
			continue;
		v[n++] = (struct symbolizer_vma){
			.start = (*ents)[i].start,
			.end = (*ents)[i].end,
			.pgoff = (*ents)[i].pgoff,
			.inode = (*ents)[i].inode,
			.dev_major = (*ents)[i].dev_major,
			.dev_minor = (*ents)[i].dev_minor,
			.exec = true,
			.path = (*ents)[i].path,
		};
	}
	return n;
}

/* The index in @v[0..n) of the mapping that holds @addr, or n. */
static size_t vma_of(const struct symbolizer_vma *v, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].start <= addr && addr < v[i].end)
			break;
	return i;
}

/*
 * symbolizer__snapshot_vmas(): mappings given (as the kernel's mmap records give them),
 * the process gone before the snapshot: its files are opened by path from here and
 * taken only when the path names the mapped inode; a deleted file is not looked for.
 */
static void test_vmas(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct strset *strs = strset__new();
	struct symbolizer_vma v[64], bad;
	struct map_entry *ents = NULL;
	size_t i, n;
	char path[64], *text = NULL;
	struct fixture fx;
	struct frame fr;

	CHECK(s && strs);
	fixture_start("symfix-pie", &fx);
	n = fixture_vmas(&fx, strs, v, 64, &text, &ents);
	fixture_stop(&fx);
	CHECK(n >= 3);
	CHECK(kill(fx.pid, 0) && errno == ESRCH);
	CHECK(!symbolizer__snapshot_vmas(s, fx.pid, 3, v, n));
	CHECK(symbolizer__user_gen(s, fx.pid, 3, fx.exe_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_exe_func");
	CHECK(symbolizer__user_gen(s, fx.pid, 3, fx.lib_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_lib_func");
	/* another inode at the library's path (replaced since): not taken */
	i = vma_of(v, n, fx.lib_func);
	CHECK(i < n);
	v[i].inode++;
	CHECK(!symbolizer__snapshot_vmas(s, fx.pid, 4, v, n));
	CHECK(symbolizer__user_gen(s, fx.pid, 4, fx.lib_func, false, &fr, 1) == 1);
	CHECK(fr.kind == FRAME_MODULE && ends_with(fr.name, "libsymfix.so]"));
	CHECK(symbolizer__user_gen(s, fx.pid, 4, fx.exe_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_exe_func");
	/* deleted since it was mapped: never opened by a path that names another file */
	bad = v[i];
	bad.inode--;
	snprintf(path, sizeof(path), "%s (deleted)", v[i].path);
	bad.path = path;
	CHECK(!symbolizer__snapshot_vmas(s, fx.pid, 5, &bad, 1));
	CHECK(symbolizer__user_gen(s, fx.pid, 5, fx.lib_func, false, &fr, 1) == 1);
	CHECK(fr.kind == FRAME_MODULE);
	bad.end = bad.start;
	CHECK(symbolizer__snapshot_vmas(s, fx.pid, 6, &bad, 1) == -EINVAL);
	free(ents);
	free(text);
	strset__free(strs);
	symbolizer__free(s);
}

/*
 * The same mappings given for a live process, one with another inode than the file now
 * at its range: the map_files link (the file mapped there now: after an exec, or a PID
 * reused, another one than the notice said) is not taken either.
 */
static void test_vmas_live(void)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct strset *strs = strset__new();
	struct symbolizer_vma v[64];
	struct map_entry *ents = NULL;
	char *text = NULL;
	struct fixture fx;
	struct frame fr;
	size_t n, lib;

	CHECK(s && strs);
	fixture_start("symfix-pie", &fx);
	n = fixture_vmas(&fx, strs, v, 64, &text, &ents);
	lib = vma_of(v, n, fx.lib_func);
	CHECK(lib < n);
	v[lib].inode++;
	CHECK(!kill(fx.pid, 0));
	CHECK(!symbolizer__snapshot_vmas(s, fx.pid, 3, v, n));
	CHECK(symbolizer__user_gen(s, fx.pid, 3, fx.lib_func, false, &fr, 1) == 1);
	CHECK(fr.kind == FRAME_MODULE && ends_with(fr.name, "libsymfix.so]"));
	CHECK(symbolizer__user_gen(s, fx.pid, 3, fx.exe_func, false, &fr, 1) == 1);
	CHECK_STR(fr.name, "symfix_exe_func");
	fixture_stop(&fx);
	free(ents);
	free(text);
	strset__free(strs);
	symbolizer__forget_gen(s, fx.pid, 3);
	symbolizer__free(s);
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

/* One lookup's answer, copied out of its index. */
struct dw_answer {
	int n;
	char text[1024];
};

static void dw_answer(struct dwarf_index *idx, uint64_t addr, struct dw_answer *a)
{
	struct dw_frame fr[8];
	size_t len = 0;
	int i;

	a->n = dwarf_index__lookup(idx, addr, fr, ARRAY_SIZE(fr));
	CHECK(a->n >= 0);
	a->text[0] = '\0';
	for (i = 0; i < (a->n ? a->n : 1) && len < sizeof(a->text); i++)
		len += (size_t)snprintf(a->text + len, sizeof(a->text) - len,
					"%s@%" PRIx64 "%s %s:%u;", fr[i].name ? fr[i].name : "-",
					fr[i].entry, fr[i].inlined ? "[i]" : "",
					fr[i].file ? fr[i].file : "-", fr[i].line);
}

/*
 * A compile unit is read on the first lookup inside it (libc's debug file: a lookup
 * reads one of ~2,000), and what a lookup answers does not depend on which units were
 * read before it: the same addresses asked in opposite orders of two indexes, and the
 * frames of a few ones that are known. Needs Debian's libc6-dbg (installed by
 * scripts/setup.sh): required under CI=true.
 */
static void test_dwarf_lazy(void)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct dwarf_index *a = NULL, *b = NULL;
	struct strset *strs = strset__new();
	struct elf_file *f = NULL;
	struct dw_answer *ans, one;
	size_t read, total, i, n = 4000, inlined = 0, named = 0;
	uint64_t *addrs, text = 0, text_size = 0, x = 88172645463325252ull;
	int fd, dfd = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	CHECK(strs);
	fd = open(libc, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		f = elf_file__parse(fd, NULL, 0, strs, libc);
	if (f)
		dfd = debuginfo__open(f, "/usr/lib/debug");
	if (dfd < 0) {
		CHECK(!getenv("CI") || strcmp(getenv("CI"), "true"));
		printf("note: libc6-dbg not installed, lazy DWARF units not tested\n");
		goto cleanup;
	}
	/* .text's addresses (NOBITS in the debug file, its header kept) */
	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_begin(dfd, ELF_C_READ, NULL);
	CHECK(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".text")) {
			text = sh.sh_addr;
			text_size = sh.sh_size;
		}
	elf_end(elf);
	CHECK(text_size > 0x10000);

	CHECK(!dwarf_index__build_lines(dfd, libc, true, NULL, &a));
	CHECK(!dwarf_index__build_lines(dfd, libc, true, NULL, &b));
	dwarf_index__units(a, &read, &total);
	CHECK(read == 0 && total > 500);
	dw_answer(a, text + text_size / 2, &one);
	dwarf_index__units(a, &read, &total);
	CHECK(read >= 1 && read <= 2);

	addrs = calloc(n, sizeof(*addrs));
	ans = calloc(n, sizeof(*ans));
	CHECK(addrs && ans);
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		addrs[i] = text + x % text_size;
	}
	for (i = 0; i < n; i++)
		dw_answer(a, addrs[i], &ans[i]);
	for (i = n; i-- > 0;) {
		dw_answer(b, addrs[i], &one);
		CHECK(one.n == ans[i].n);
		CHECK_STR(one.text, ans[i].text);
		named += one.n > 0;
		inlined += one.n > 1;
	}
	/* DWARF names most of libc's text, inline chains a good part of it */
	CHECK(named > n * 9 / 10 && inlined > n / 10);
	dwarf_index__units(b, &read, &total);
	CHECK(read > 100 && read <= total);
	free(addrs);
	free(ans);
cleanup:
	dwarf_index__free(a);
	dwarf_index__free(b);
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0)
		close(fd);
	elf_file__free(f);
	strset__free(strs);
}

/* The entry of build-id @id in @cdir (the first file named after it): true if found. */
static bool cache_entry(const char *cdir, const uint8_t *id, size_t id_len, char *path, size_t size)
{
	char hex[2 * BUILD_ID_MAX + 1];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(cdir);
	size_t i;

	CHECK(d);
	for (i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	while (!found && (de = readdir(d)))
		if (!strncmp(de->d_name, hex, 2 * id_len)) {
			snprintf(path, size, "%s/%s", cdir, de->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

static void rm_dir(const char *cdir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(cdir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", cdir, de->d_name);
			CHECK(!unlink(path));
		}
	closedir(d);
	CHECK(!rmdir(cdir));
}

/* The blob stored with the sections (a DWARF index's unit list, opaque to the cache). */
static char cache_extra[333];

/* Loads @secs' sizes and names under @id into @got; returns dw_cache__load's result and
 * unmaps what it read after comparing it with @secs, and the blob with cache_extra's
 * first @extra_len bytes. */
static int cache_load(struct dw_cache *c, const uint8_t *id, const struct dw_cache_sec *secs,
		      size_t extra_len)
{
	struct dw_cache_sec got[2];
	struct dw_cache_map map;
	const void *extra;
	uint64_t got_len;
	int err, i;

	for (i = 0; i < 2; i++)
		got[i] = (struct dw_cache_sec){
			.name = secs[i].name, .csize = secs[i].csize, .usize = secs[i].usize};
	err = dw_cache__load(c, id, 20, got, 2, "test", &map, &extra, &got_len);
	for (i = 0; i < 2; i++) {
		if (!err)
			CHECK(!memcmp(got[i].data, secs[i].data, secs[i].usize));
		else
			CHECK(!got[i].data);
	}
	if (!err) {
		CHECK_U64(got_len, extra_len);
		CHECK(extra_len ? extra && !memcmp(extra, cache_extra, extra_len) : !extra);
	} else {
		CHECK(!extra && !got_len);
	}
	CHECK(!err == !!map.base);
	dw_cache__unmap(&map);
	CHECK(!map.base && !map.len);
	return err;
}

/*
 * The cache of decompressed debug sections: an entry is read back only when it matches
 * the file asked about (build-id, section names and sizes) and is intact, in a directory
 * and a file of ours alone that are not symlinks; the least recently used go first.
 */
static void test_dwcache(void)
{
	char cdir[] = "/tmp/scorch-dwcache-XXXXXX", path[PATH_MAX], other[PATH_MAX + 8];
	static char info[3000], abbrev[200];
	struct dw_cache_sec secs[2] = {
		{.name = ".debug_info", .csize = 1000, .usize = sizeof(info), .data = info},
		{.name = ".debug_abbrev", .csize = 90, .usize = sizeof(abbrev), .data = abbrev},
	};
	uint8_t id[5][20];
	struct timespec ts[2];
	struct dw_cache *c = NULL, *c2 = NULL;
	struct stat st;
	size_t i, j;
	char *img;
	size_t len;

	for (i = 0; i < sizeof(info); i++)
		info[i] = (char)rng();
	for (i = 0; i < sizeof(abbrev); i++)
		abbrev[i] = (char)rng();
	for (i = 0; i < sizeof(cache_extra); i++)
		cache_extra[i] = (char)rng();
	for (i = 0; i < 5; i++)
		for (j = 0; j < 20; j++)
			id[i][j] = (uint8_t)(i * 31 + j);
	CHECK(mkdtemp(cdir));
	CHECK(!dw_cache__open(cdir, &c) && c);

	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!dw_cache__store(c, id[0], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra)));
	CHECK(cache_entry(cdir, id[0], 20, path, sizeof(path)));
	CHECK(!stat(path, &st) && (st.st_mode & 0777) == 0600);
	/* another build-id; another compressed size (another build of the file): no entry */
	CHECK(cache_load(c, id[1], secs, sizeof(cache_extra)) == -ENOENT);
	secs[1].csize++;
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	secs[1].csize--;

	/* one byte of a section changed, or of the blob after them: the CRC refuses it; a
	 * store mends it */
	img = read_whole(path, &len);
	img[len - sizeof(cache_extra) - 1] ^= 1;
	write_file(path, img, len);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	img[len - sizeof(cache_extra) - 1] ^= 1;
	img[len - 1] ^= 1;
	write_file(path, img, len);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	/* torn: shorter than its header says */
	write_file(path, img, len - 100);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	/* the build-id in the header is not the name's */
	img[len - 1] ^= 1;
	img[8 + 4 + 4 + 8 + 4] ^= 0xff;
	write_file(path, img, len);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!dw_cache__store(c, id[0], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra)));
	/* writable by others */
	CHECK(!chmod(path, 0622));
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!chmod(path, 0600));
	/* a symlink in its place, to an intact copy: not followed */
	snprintf(other, sizeof(other), "%s.copy", cdir);
	img[8 + 4 + 4 + 8 + 4] ^= 0xff;
	write_file(other, img, len);
	CHECK(!unlink(path));
	CHECK(!symlink(other, path));
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!unlink(path));
	CHECK(!rename(other, path));
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra)));
	free(img);

	/* five entries where four and a half fit: the least recently used goes */
	dw_cache__set_max(c, len * 9 / 2);
	for (i = 1; i < 4; i++)
		CHECK(!dw_cache__store(c, id[i], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	for (i = 0; i < 4; i++) {
		CHECK(cache_entry(cdir, id[i], 20, path, sizeof(path)));
		ts[0] = ts[1] = (struct timespec){.tv_sec = time(NULL) - 100 + (time_t)i};
		CHECK(!utimensat(AT_FDCWD, path, ts, 0));
	}
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra))); /* used now: the newest */
	CHECK(!dw_cache__store(c, id[4], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	CHECK(!cache_entry(cdir, id[1], 20, path, sizeof(path)));
	for (i = 0; i < 5; i++)
		CHECK(i == 1 || cache_entry(cdir, id[i], 20, path, sizeof(path)));
	/* an entry without a blob gives none back */
	CHECK(!dw_cache__store(c, id[1], 20, secs, 2, NULL, 0));
	CHECK(!cache_load(c, id[1], secs, 0));
	/* an entry over a quarter of the cache is not written */
	dw_cache__set_max(c, len * 3);
	CHECK(dw_cache__store(c, id[1], 20, secs, 2, NULL, 0) == -EFBIG);
	dw_cache__free(c);

	/* the directory: writable by others, or a symlink, is no cache */
	CHECK(!chmod(cdir, 0733));
	CHECK(!dw_cache__open(cdir, &c2) && !c2);
	CHECK(!chmod(cdir, 0700));
	snprintf(other, sizeof(other), "%s.link", cdir);
	CHECK(!symlink(cdir, other));
	CHECK(!dw_cache__open(other, &c2) && !c2);
	CHECK(!unlink(other));
	/* made when missing (its parent existing), mode 0700; none asked: none */
	snprintf(other, sizeof(other), "%s/sub", cdir);
	CHECK(!dw_cache__open(other, &c2) && c2);
	CHECK(!stat(other, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	dw_cache__free(c2);
	CHECK(!rmdir(other));
	CHECK(!dw_cache__open(NULL, &c2) && !c2);
	CHECK(!dw_cache__open("", &c2) && !c2);
	rm_dir(cdir);
}

int main(int argc, char **argv)
{
	struct symbolizer *s;

	CHECK(argc == 2);
	dir = argv[1];
	if (getenv("SCORCH_TEST_DEBUG"))
		log__set_level(LOG_DEBUG);
	s = symbolizer__new(NULL);
	CHECK(s);
	test_fixture(s, "symfix-pie", false);
	test_fixture(s, "symfix-nopie", true);
	symbolizer__free(s);
	test_self();
	test_refresh();
	test_gen();
	test_copy();
	test_vmas();
	test_vmas_live();
	test_evict();
	test_marker_names();
	test_deferred();
	test_jit();
	test_corrupt();
	test_jitdump_marker();
	test_shadowed_path();
	test_fuzz();
	test_dwarf_lazy();
	test_dwcache();
	printf("ok\n");
	return 0;
}
