// SPDX-License-Identifier: MIT
/*
 * tests/unwind: walks checked against an independent unwinder. This process takes a
 * snapshot of itself as the BPF program would (ip, sp, bp and a copy of its stack from
 * sp to the top) and, at the same point, asks glibc's backtrace() (libgcc's unwinder)
 * for the return addresses. unwinder__unwind() over the snapshot, with this process's
 * own mappings, must give the same addresses and end at the outermost frame:
 *   - in the main thread, through frames that keep the CFA in rsp and in rbp (alloca),
 *     built without frame pointers (rbp holds data), down to _start;
 *   - in a thread, down to clone3;
 *   - in a signal handler, through the signal frame (__restore_rt: augmentation 'S',
 *     DWARF expressions over the saved context) into the interrupted code.
 * A copy cut where the walk stopped reading (unwinder__stack_used()) gives the same
 * walk; one word shorter, and the main thread's copy cut below main()'s frame, end
 * marked truncated, not wrong.
 * backtrace() cannot walk code whose CFI is in .debug_frame only (libdbgframe_dbg.so):
 * a walk through it is checked against the return addresses its frames noted
 * themselves (__builtin_return_address()), and must go on through main() to _start.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <alloca.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "unwind.h"

#define MAX_FRAMES 64
#define DBG_RAS	   16

/* libdbgframe_dbg.so (dbgframe_code.c) */
extern void *dbg_ras[DBG_RAS];
extern int dbg_nr;
void dbg_chain(void (*fn)(void *), void *arg);
#define MAX_MAPS   64
#define STACK_MAX  (512u << 10)

/* This process's executable mappings, as the record command's symbolizer gives them. */
struct map {
	uint64_t start, end, bias;
	char path[256];
	bool vdso;
};

static struct map maps[MAX_MAPS];
static int nr_maps;

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum && nr_maps < MAX_MAPS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct map *m = &maps[nr_maps];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		m->start = info->dlpi_addr + ph->p_vaddr;
		m->end = m->start + ph->p_memsz;
		m->bias = info->dlpi_addr;
		m->vdso = strstr(info->dlpi_name, "linux-vdso") != NULL;
		snprintf(m->path, sizeof(m->path), "%s",
			 info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
		nr_maps++;
	}
	return 0;
}

static const struct map *map_of(uint64_t addr)
{
	for (int i = 0; i < nr_maps; i++)
		if (addr >= maps[i].start && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

static int self_find(void *ctx, pid_t pid, uint64_t gen, uint64_t addr, struct unwind_map *out)
{
	const struct map *m = map_of(addr);

	(void)ctx;
	(void)pid;
	(void)gen;
	if (!m)
		return -ENOENT;
	*out = (struct unwind_map){.kind = m->vdso ? UNWIND_MAP_VDSO : UNWIND_MAP_FILE,
				   .start = m->start,
				   .end = m->end,
				   .bias = m->bias,
				   .file = m,
				   .path = m->path};
	return 0;
}

static int self_open(void *ctx, pid_t pid, uint64_t gen, uint64_t addr)
{
	const struct map *m = map_of(addr);
	int fd;

	(void)ctx;
	(void)pid;
	(void)gen;
	if (!m)
		return -ENOENT;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A snapshot: registers, the stack from sp to the top, and backtrace()'s answer. */
struct snap {
	uint64_t ip, sp, bp;
	size_t len;
	void *bt[MAX_FRAMES];
	int nbt;
	uint8_t stack[STACK_MAX];
};

static struct snap snaps[4];
static __thread uint64_t stack_top; /* of the calling thread */
static uint64_t main_sp;	    /* main()'s sp when it calls recurse() */

/* Copies without instrumentation: the words above sp include other frames' redzones. */
__attribute__((noinline, no_sanitize_address)) static void copy_stack(uint8_t *dst, uint64_t sp,
								      size_t len)
{
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;

	for (size_t i = 0; i < len; i++)
		dst[i] = src[i];
}

__attribute__((noinline)) static void snapshot(struct snap *s)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	s->ip = ip;
	s->sp = sp;
	s->bp = bp;
	s->len = stack_top - sp < STACK_MAX ? stack_top - sp : STACK_MAX;
	copy_stack(s->stack, sp, s->len);
	s->nbt = backtrace(s->bt, MAX_FRAMES);
}

/* A call chain with frames of both kinds: the CFA kept in rsp, and in rbp (alloca). */
static volatile int sink;

__attribute__((noinline)) static void leaf(struct snap *s)
{
	snapshot(s);
	sink++;
}

__attribute__((noinline)) static void with_alloca(struct snap *s, int n)
{
	volatile char *buf = alloca(n);

	buf[0] = (char)n;
	leaf(s);
	sink += buf[0];
}

__attribute__((noinline)) static void recurse(struct snap *s, int depth)
{
	volatile long pad[4] = {depth};

	if (depth)
		recurse(s, depth - 1);
	else
		with_alloca(s, 200);
	sink += (int)pad[0];
}

static uint64_t top_of(pthread_t t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	CHECK(!pthread_getattr_np(t, &attr));
	CHECK(!pthread_attr_getstack(&attr, &addr, &size));
	pthread_attr_destroy(&attr);
	return (uint64_t)(uintptr_t)addr + size;
}

static void *thread_main(void *arg)
{
	(void)arg;
	stack_top = top_of(pthread_self());
	recurse(&snaps[1], 3);
	return NULL;
}

/* raise() returns through the signal frame: the handler's snapshot crosses it. */
static void on_signal(int sig)
{
	(void)sig;
	leaf(&snaps[2]);
}

__attribute__((noinline)) static void interrupted(void)
{
	raise(SIGUSR1);
	sink++;
}

/*
 * Unwinds @s, its copy cut to @len bytes, and checks it against backtrace(): the same
 * return addresses, all of them when the copy is whole.
 */
static void check_snap(const char *what, const struct snap *s, size_t len)
{
	static const struct unwind_maps_ops ops = {.find = self_find, .open = self_open};
	struct unwind_opts o = {.sz = sizeof(o), .maps = &ops};
	struct unwinder *u = unwinder__new(&o);
	struct unwind_sample smp = {.pid = getpid(),
				    .ip = s->ip,
				    .sp = s->sp,
				    .bp = s->bp,
				    .stack = s->stack,
				    .stack_len = len};
	uint64_t ips[MAX_FRAMES];
	enum unwind_end end;
	int n, skip;

	CHECK(u);
	n = unwinder__unwind(u, &smp, ips, MAX_FRAMES, &end);
	printf("%s: %d frames (backtrace() %d), end %d%s\n", what, n, s->nbt, (int)end,
	       len < s->len ? " (copy cut)" : "");
	CHECK(s->nbt >= 5);
	CHECK(n >= 2);
	CHECK(ips[0] == s->ip);
	/*
	 * backtrace()'s [0] is its own return address in snapshot(); the callers follow.
	 * Under the sanitizers its interceptor adds one frame before them.
	 */
	skip = ips[1] == (uint64_t)(uintptr_t)s->bt[1] ? 1 : 2;
	for (int i = 1; i < n && i + skip - 1 < s->nbt; i++) {
		if (ips[i] != (uint64_t)(uintptr_t)s->bt[i + skip - 1]) {
			fprintf(stderr, "%s: frame %d: %#llx, backtrace() %p\n", what, i,
				(unsigned long long)ips[i], s->bt[i + skip - 1]);
			CHECK(ips[i] == (uint64_t)(uintptr_t)s->bt[i + skip - 1]);
		}
	}
	if (len == s->len) {
		uint64_t used = unwinder__stack_used(u), cut[MAX_FRAMES];

		CHECK(end == UNWIND_END_OUTERMOST);
		CHECK(n == s->nbt - (skip - 1));
		/* a copy that ends where the walk stopped reading gives the same walk, and one
		 * word shorter does not (as the kernel's copies bounded by a thread's top) */
		CHECK(used > s->sp && used <= s->sp + len);
		smp.stack_len = used - s->sp;
		CHECK(unwinder__unwind(u, &smp, cut, MAX_FRAMES, &end) == n);
		CHECK(end == UNWIND_END_OUTERMOST && !memcmp(cut, ips, n * sizeof(ips[0])));
		smp.stack_len = used - s->sp - 8;
		CHECK(unwinder__unwind(u, &smp, cut, MAX_FRAMES, &end) < n);
		CHECK(end == UNWIND_END_TRUNCATED);
		smp.stack_len = len;
	} else {
		CHECK(end == UNWIND_END_TRUNCATED);
		CHECK(n < s->nbt - (skip - 1));
	}
	/* the same walk again comes from cached rows and gives the same frames */
	{
		uint64_t again[MAX_FRAMES];
		struct unwind_stats st;
		int m = unwinder__unwind(u, &smp, again, MAX_FRAMES, &end);

		CHECK(m == n && !memcmp(again, ips, n * sizeof(ips[0])));
		unwinder__stats(u, &st);
		CHECK(st.rows_reused >= (uint64_t)n - 1);
	}
	unwinder__free(u);
}

/* Called by libdbgframe_dbg.so's innermost frame: notes its return address, then snaps. */
__attribute__((noinline)) static void dbg_callback(void *arg)
{
	if (dbg_nr < DBG_RAS)
		dbg_ras[dbg_nr++] = __builtin_return_address(0);
	leaf(arg);
}

/*
 * The walk of snaps[3], taken through libdbgframe_dbg.so: the return addresses its frames
 * noted (innermost last), in a row after leaf()'s and dbg_callback()'s, then main()'s
 * callers down to the outermost frame; the library's rules came from .debug_frame.
 */
static void check_dbgframe(const struct snap *s)
{
	static const struct unwind_maps_ops ops = {.find = self_find, .open = self_open};
	struct unwind_opts o = {.sz = sizeof(o), .maps = &ops};
	struct unwinder *u = unwinder__new(&o);
	struct unwind_sample smp = {.pid = getpid(),
				    .ip = s->ip,
				    .sp = s->sp,
				    .bp = s->bp,
				    .stack = s->stack,
				    .stack_len = s->len};
	uint64_t ips[MAX_FRAMES];
	struct unwind_stats st;
	enum unwind_end end;
	int n, i, at = -1;

	CHECK(u);
	n = unwinder__unwind(u, &smp, ips, MAX_FRAMES, &end);
	unwinder__stats(u, &st);
	printf("through .debug_frame: %d frames, end %d; %d return addresses noted, %llu files "
	       "with .debug_frame\n",
	       n, (int)end, dbg_nr, (unsigned long long)st.files_debug_frame);
	CHECK(dbg_nr == 7); /* dbg_chain, dbg_recurse x3, dbg_alloca, dbg_leaf, dbg_callback */
	CHECK(st.files_debug_frame >= 1);
	for (i = 0; i < n && at < 0; i++)
		if (ips[i] == (uint64_t)(uintptr_t)dbg_ras[dbg_nr - 1])
			at = i;
	CHECK(at == 3); /* snapshot(), leaf(), dbg_callback() */
	for (i = 0; at >= 0 && i < dbg_nr; i++) {
		uint64_t want = (uint64_t)(uintptr_t)dbg_ras[dbg_nr - 1 - i];

		if (at + i >= n || ips[at + i] != want) {
			fprintf(stderr, "through .debug_frame: frame %d: %#llx, noted %#llx\n",
				at + i, at + i < n ? (unsigned long long)ips[at + i] : 0ULL,
				(unsigned long long)want);
			CHECK(0);
		}
	}
	/* main() and its callers: __libc_start_call_main, __libc_start_main, _start */
	CHECK(end == UNWIND_END_OUTERMOST);
	CHECK(at >= 0 && n >= at + dbg_nr + 2);
	unwinder__free(u);
}

/* The top of the main thread's stack: the end of [stack] in /proc/self/maps. */
static uint64_t main_stack_top(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long long lo, hi, top = 0;

	CHECK(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			top = hi;
	fclose(f);
	CHECK(top);
	return top;
}

int main(void)
{
	pthread_t t;
	void *warm[4];

	backtrace(warm, 4); /* loads libgcc_s before the mappings are listed */
	stack_top = main_stack_top();
	__asm__ volatile("mov %%rsp, %0" : "=r"(main_sp));
	recurse(&snaps[0], 5);
	dbg_chain(dbg_callback, &snaps[3]);
	CHECK(!pthread_create(&t, NULL, thread_main, NULL));
	CHECK(!pthread_join(t, NULL));
	CHECK(signal(SIGUSR1, on_signal) != SIG_ERR);
	interrupted();
	dl_iterate_phdr(add_object, NULL);
	CHECK(nr_maps >= 2);

	check_snap("main thread", &snaps[0], snaps[0].len);
	check_snap("thread", &snaps[1], snaps[1].len);
	check_snap("signal handler", &snaps[2], snaps[2].len);
	/* the copy ends where main()'s frame begins: its return address is out of reach */
	CHECK(main_sp > snaps[0].sp && main_sp - snaps[0].sp < snaps[0].len);
	check_snap("main thread", &snaps[0], main_sp - snaps[0].sp);
	check_dbgframe(&snaps[3]);
	printf("PASS\n");
	return 0;
}
