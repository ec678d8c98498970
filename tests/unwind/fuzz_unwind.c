// SPDX-License-Identifier: MIT
/*
 * tests/unwind: libFuzzer target for the CFI reader and interpreter, on corrupted ELF
 * files (the .eh_frame_hdr, .eh_frame and .debug_frame of files other users control). The
 * input is an ELF image (seeds: small shared objects built by tests/unwind/CMakeLists.txt
 * from fuzz_seed.c, one with its CFI in .debug_frame only; their CFI uses every rule kind: CFA in rsp and rbp, CFA expressions,
 * remember/restore_state, val_offset, register, a signal frame, an undefined return
 * address). It is mapped at 0 in a fake process; one walk starts at every third address
 * of its first 64 KiB over a stack of words that point into the stack, into the image and
 * anywhere. The contract checked: a walk gives 1..cap frames, the first the sample's ip.
 * The same image is compiled into the kernel walk's rows (unwind_ktable__build()): at
 * most the rows asked for, strictly sorted by address, each of a known kind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "../fuzz/fuzz.h"
#include "unwind.h"

#define CAP	    32
#define STACK_WORDS 128
#define SP	    0x7fff0000ULL

static char path[64];
static const char id;

static int one_find(void *ctx, pid_t pid, uint64_t gen, uint64_t addr, struct unwind_map *out)
{
	(void)ctx;
	(void)pid;
	(void)gen;
	if (addr >= (1ULL << 32))
		return -ENOENT;
	*out = (struct unwind_map){.kind = UNWIND_MAP_FILE,
				   .start = 0,
				   .end = 1ULL << 32,
				   .file = &id,
				   .path = "fuzz"};
	return 0;
}

static int one_open(void *ctx, pid_t pid, uint64_t gen, uint64_t addr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	(void)ctx;
	(void)pid;
	(void)gen;
	(void)addr;
	return fd < 0 ? -errno : fd;
}

static bool none_in_use(void *ctx, const void *file)
{
	(void)ctx;
	(void)file;
	return false;
}

static void check_ktable(void)
{
	struct unwind_ktable_stats st;
	struct kunwind_row *rows = NULL;
	size_t nr = 0, i;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return;
	err = unwind_ktable__build(fd, 4096, &rows, &nr, &st);
	close(fd);
	if (err && (rows || nr))
		abort();
	if (nr > 4096 || st.rows != nr || st.build_id_len > sizeof(st.build_id))
		abort();
	for (i = 0; i < nr; i++) {
		if (rows[i].cfa > KROW_STOP || rows[i].rbp > KROW_RBP_LOST ||
		    (i && rows[i - 1].pc >= rows[i].pc))
			abort();
	}
	free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct unwind_maps_ops ops = {
		.find = one_find, .open = one_open, .in_use = none_in_use};
	struct unwind_opts o = {.sz = sizeof(o), .maps = &ops};
	uint64_t stack[STACK_WORDS], ips[CAP], x = size * 0x9e3779b97f4a7c15ULL + 1;
	struct unwinder *u;
	enum unwind_end end;
	size_t i, limit = size < 65536 ? size : 65536;
	int n;

	fuzz__init_log();
	fuzz__memfd("fuzz-unwind", data, size, path, sizeof(path));
	for (i = 0; i < STACK_WORDS; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		switch (i % 3) {
		case 0:
			stack[i] = SP + (x >> 33) % (STACK_WORDS * 8 + 64);
			break;
		case 1:
			stack[i] = size ? (x >> 33) % size : 0;
			break;
		default:
			stack[i] = x;
		}
	}
	check_ktable();
	u = unwinder__new(&o);
	if (!u)
		return 0;
	for (i = 1; i < limit; i += 3) {
		struct unwind_sample smp = {.pid = 1,
					    .ip = i,
					    .sp = SP,
					    .bp = SP + (i % 16) * 8,
					    .stack = stack,
					    .stack_len = sizeof(stack)};

		n = unwinder__unwind(u, &smp, ips, CAP, &end);
		if (n == -ENOMEM)
			break;
		if (n < 1 || n > CAP || ips[0] != i || end > UNWIND_END_ERROR)
			abort();
		if (i % 301 == 1)
			unwinder__trim(u, 0); /* drops the tables: read again by the next walk */
	}
	unwinder__free(u);
	return 0;
}
