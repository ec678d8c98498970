// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: source of the fuzz_elf seeds (built by CMakeLists.txt with the commands
 * written there): no libc, so the binaries stay a few KB, with DWARF for a function, an
 * inline chain and line tables, and a USDT note (symbolize__usdt_notes()).
 */
#include "../workloads/sdt.h"

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long inner(unsigned long x)
{
	return x * 2654435761u + (x >> 7);
}

static inline __attribute__((always_inline)) unsigned long outer(unsigned long x)
{
	return inner(x) ^ inner(x + 1);
}

__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++) {
		SDT_PROBE1(fuzz, tick, i);
		acc += outer(i);
	}
	return acc;
}

void _start(void)
{
	sink = work(sink + 3);
	for (;;)
		;
}
