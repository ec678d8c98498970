// SPDX-License-Identifier: MIT
/*
 * tests/unwind: the unwinder without BPF or privilege. (1) Register and stack values
 * near 2^64 (another process's garbage) never make it read outside the stack copy.
 * (2) The table cache: 40 file identities, all backed by this test binary's own
 * .eh_frame, are loaded; unwinder__trim(16) keeps the 16 most recently used of those
 * no process uses, drops the others and never drops one in use; a dropped file is
 * read again when a sample needs it. (3) Unwind rules are cached per process image:
 * a second sample at the same ip of the same image looks nothing up; another image, or
 * the same one after unwinder__forget(), does. (4) An FDE of 70,000 instructions (more
 * than the unwinder runs per row) ends the walk as an error. (Walks checked against
 * glibc's backtrace(): test_unwind_oracle.c.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "unwind.h"

#define NR_FILES 40
#define SPAN	 0x100000000ULL /* fake mapping i: [SPAN * (i + 1), + text size) */

static char ids[NR_FILES]; /* identities: &ids[i] */
static bool in_use[NR_FILES];
static uint64_t load_bias, text_end;
static int opens, finds;

static int find_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	load_bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			text_end = ph->p_vaddr + ph->p_memsz;
	}
	return 1; /* the main program comes first */
}

static int fake_find(void *ctx, pid_t pid, uint64_t gen, uint64_t addr, struct unwind_map *out)
{
	uint64_t i = addr / SPAN;

	(void)ctx;
	(void)pid;
	(void)gen;
	finds++;
	if (!i || i > NR_FILES || addr % SPAN >= text_end)
		return -ENOENT;
	*out = (struct unwind_map){.kind = UNWIND_MAP_FILE,
				   .start = i * SPAN,
				   .end = i * SPAN + text_end,
				   .bias = i * SPAN,
				   .file = &ids[i - 1],
				   .path = "test_unwind"};
	return 0;
}

static int fake_open(void *ctx, pid_t pid, uint64_t gen, uint64_t addr)
{
	(void)ctx;
	(void)pid;
	(void)gen;
	(void)addr;
	opens++;
	return open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
}

static bool fake_in_use(void *ctx, const void *file)
{
	(void)ctx;
	return in_use[(const char *)file - ids];
}

static int none_find(void *ctx, pid_t pid, uint64_t gen, uint64_t addr, struct unwind_map *out)
{
	(void)ctx;
	(void)pid;
	(void)gen;
	(void)addr;
	(void)out;
	return -ENOENT;
}

__attribute__((noinline)) static int some_function(int x)
{
	return x * 3 + 1;
}

/* A function whose FDE runs 70,000 DW_CFA_GNU_args_size before its first row (crafted). */
void huge_cfi(void);
__asm__(".text\n"
	".globl huge_cfi\n"
	".type huge_cfi, @function\n"
	"huge_cfi:\n"
	".cfi_startproc\n"
	".rept 70000\n"
	".cfi_escape 0x2e, 0\n"
	".endr\n"
	"	nop\n"
	"	ret\n"
	".cfi_endproc\n"
	".size huge_cfi, .-huge_cfi\n");

/* One sample of image (@pid, 0) whose ip is some_function() in fake file @i (1-based). */
static void unwind_in_pid(struct unwinder *u, int i, pid_t pid)
{
	uint64_t stack[8] = {0}, ips[4];
	struct unwind_sample smp = {
		.pid = pid,
		.ip = SPAN * i + ((uintptr_t)some_function - load_bias) + 1,
		.sp = 0x7fff0000,
		.bp = 0,
		.stack = stack,
		.stack_len = sizeof(stack),
	};
	enum unwind_end end;

	CHECK(unwinder__unwind(u, &smp, ips, 4, &end) >= 1);
}

static void unwind_in(struct unwinder *u, int i)
{
	unwind_in_pid(u, i, 1);
}

static void test_wraparound(void)
{
	static const struct unwind_maps_ops ops = {.find = none_find, .open = fake_open};
	struct unwind_opts o = {.sz = sizeof(o), .maps = &ops};
	struct unwinder *u = unwinder__new(&o);
	uint64_t stack[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ips[8];
	/* frame-pointer fallback reads [bp] and [bp + 8]: addresses that wrap past 2^64 */
	uint64_t bps[] = {UINT64_MAX - 7, UINT64_MAX - 3, UINT64_MAX, 0x7fff0000 + 60,
			  0x7fff0000 + 64};
	enum unwind_end end;

	CHECK(u);
	for (size_t i = 0; i < sizeof(bps) / sizeof(bps[0]); i++) {
		struct unwind_sample smp = {.pid = 1,
					    .ip = 0x1234,
					    .sp = 0x7fff0000,
					    .bp = bps[i],
					    .stack = stack,
					    .stack_len = sizeof(stack)};
		int n = unwinder__unwind(u, &smp, ips, 8, &end);

		CHECK(n >= 1 && n <= 8);
		CHECK(ips[0] == 0x1234);
	}
	unwinder__free(u);
}

static void test_trim(void)
{
	static const struct unwind_maps_ops ops = {
		.find = fake_find, .open = fake_open, .in_use = fake_in_use};
	struct unwind_opts o = {.sz = sizeof(o), .maps = &ops};
	struct unwinder *u = unwinder__new(&o);
	struct unwind_stats st;
	int i;

	CHECK(u);
	dl_iterate_phdr(find_bias, NULL);
	CHECK(text_end > (uintptr_t)some_function - load_bias);
	CHECK(some_function(1) == 4);
	for (i = 0; i < NR_FILES; i++)
		in_use[i] = true;
	for (i = 1; i <= NR_FILES; i++)
		unwind_in(u, i);
	unwinder__stats(u, &st);
	CHECK_U64(st.files_loaded, NR_FILES);
	CHECK_U64(st.files_held, NR_FILES);
	CHECK_U64(opens, NR_FILES);
	CHECK(st.table_bytes > 0);

	unwinder__trim(u, 0); /* all in use: nothing dropped */
	unwinder__stats(u, &st);
	CHECK_U64(st.files_held, NR_FILES);

	/* files 1..5 stay in use; the 35 others are released, used in order 6..40 */
	for (i = 5; i < NR_FILES; i++)
		in_use[i] = false;
	unwinder__trim(u, 16);
	unwinder__stats(u, &st);
	CHECK_U64(st.files_held, 5 + 16);
	CHECK_U64(st.files_evicted, NR_FILES - 5 - 16);
	CHECK_U64(st.files_held_max, NR_FILES);
	CHECK(st.table_bytes < st.table_bytes_max);

	/* the most recent released ones (25..40) and those in use are still loaded */
	unwind_in(u, NR_FILES);
	unwinder__stats(u, &st);
	unwind_in(u, 1);
	unwinder__stats(u, &st);
	CHECK_U64(st.files_loaded, NR_FILES);
	/* a dropped one (6) is read again (by another image: image 1 has the rules cached) */
	unwind_in_pid(u, 6, 2);
	unwinder__stats(u, &st);
	CHECK_U64(st.files_loaded, NR_FILES + 1);
	CHECK_U64(opens, NR_FILES + 1);
	CHECK_U64(st.files_held, 5 + 16 + 1);

	/* bounded across many rounds of short-lived users */
	for (int round = 0; round < 10; round++) {
		for (i = 6; i <= NR_FILES; i++)
			unwind_in_pid(u, i, 100 + round);
		unwinder__trim(u, 16);
		unwinder__stats(u, &st);
		CHECK_U64(st.files_held, 5 + 16);
	}
	unwinder__free(u);
}

static void test_rows(void)
{
	static const struct unwind_maps_ops ops = {.find = fake_find, .open = fake_open};
	struct unwind_opts o = {.sz = sizeof(o), .maps = &ops};
	struct unwinder *u = unwinder__new(&o);
	struct unwind_stats st;
	int before;

	CHECK(u);
	unwind_in_pid(u, 3, 7);
	CHECK(finds > 0);
	unwinder__stats(u, &st);
	CHECK(st.rows_computed > 0);
	before = finds;
	unwind_in_pid(u, 3, 7); /* cached */
	CHECK(finds == before);
	unwinder__stats(u, &st);
	CHECK(st.rows_reused > 0);
	unwind_in_pid(u, 3, 8); /* another image: its own rows */
	CHECK(finds > before);
	before = finds;
	unwinder__forget(u, 7, 0);
	unwind_in_pid(u, 3, 7);
	CHECK(finds > before);
	before = finds;
	unwind_in_pid(u, 3, 8); /* forgetting 7 kept 8's */
	CHECK(finds == before);
	unwinder__free(u);
}

/* The CFA program run per row is bounded: a crafted FDE ends the walk, in bounded time. */
static void test_huge_fde(void)
{
	static const struct unwind_maps_ops ops = {.find = fake_find, .open = fake_open};
	struct unwind_opts o = {.sz = sizeof(o), .maps = &ops};
	struct unwinder *u = unwinder__new(&o);
	uint64_t stack[8] = {0}, ips[4];
	struct unwind_sample smp = {
		.pid = 1,
		.ip = SPAN + ((uintptr_t)huge_cfi - load_bias) + 1,
		.sp = 0x7fff0000,
		.stack = stack,
		.stack_len = sizeof(stack),
	};
	enum unwind_end end;

	CHECK(u);
	CHECK(unwinder__unwind(u, &smp, ips, 4, &end) == 1);
	CHECK(end == UNWIND_END_ERROR);
	unwinder__free(u);
}

int main(void)
{
	test_wraparound();
	test_trim();
	test_rows();
	test_huge_fde();
	printf("PASS\n");
	return 0;
}
