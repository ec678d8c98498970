// SPDX-License-Identifier: MIT
/*
 * tests/flamegraph: the folded set's memory follows its distinct stacks in a compact
 * form (frame ids), not their text: 100,000 stacks of 32 frames named from a pool of
 * 512 long names (as a long recording's: the same functions in many combinations).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "flamegraph.h"
#include "test.h"

/* bytes the heap holds: AddressSanitizer's allocator does not fill mallinfo2() */
#if defined(__SANITIZE_ADDRESS__)
#define SCORCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCORCH_ASAN 1
#endif
#endif
#ifdef SCORCH_ASAN
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_used(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}
#endif

#define NR_STACKS 100000
#define DEPTH	  32
#define NR_NAMES  512

int main(void)
{
	static char names[NR_NAMES][64];
	const char *frames[DEPTH];
	size_t before;
	struct folded *f;
	uint64_t x = 88172645463325252ULL;
	size_t i, j, text = 0, used;

	for (i = 0; i < NR_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "namespace::Class%zu::method_with_a_long_name",
			 i);
	before = heap_used();
	f = folded__new();
	CHECK(f != NULL);
	if (!f)
		return TEST_DONE();
	for (i = 0; i < NR_STACKS; i++) {
		for (j = 0; j < DEPTH; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: fixed seed */
			frames[j] = names[x % NR_NAMES];
			text += strlen(frames[j]) + 1;
		}
		CHECK(folded__add(f, frames, DEPTH, 1) == 0);
	}
	CHECK(folded__nr_stacks(f) == NR_STACKS);
	used = heap_used() - before;
	/* the ids: 4 bytes a frame (128 a stack) plus the table (about 50 bytes a stack);
	 * the text would be over 1,400 bytes a stack */
	printf("%zu stacks: %zu bytes held, %zu a stack (their text: %zu a stack)\n",
	       (size_t)NR_STACKS, used, used / NR_STACKS, text / NR_STACKS);
	CHECK(used / NR_STACKS < 300);
	folded__free(f);
	return TEST_DONE();
}
