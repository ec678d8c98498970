// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: user-space lookups in processes: the fixture binaries built by CMake
 * (PIE, non-PIE, shared library, stripped copy) while they run and after they exit, our
 * own process (vdso, pseudo mappings, dlopen), snapshots refreshed, taken per generation,
 * copied from a parent or made from mappings given, and JIT code. The files behind the
 * mappings are test_elf_files.c's, DWARF test_dwarf.c's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "elf-test.h"

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
	test_jit();
	printf("ok\n");
	return 0;
}
