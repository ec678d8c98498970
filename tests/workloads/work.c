// SPDX-License-Identifier: MIT
/*
 * A fixed amount of CPU work (for overhead benchmarks): ITER rounds, each through a
 * chain of 8 non-inlined calls down to a loop that also calls libc (memcpy). Built
 * without frame pointers by bench/unwind-bench.sh:
 *   cc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -g work.c -o work
 * usage: work ITER     prints "work: WALL_S CPU_S" (its own wall and CPU time) on stderr
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static volatile unsigned long sink;
static char src[4096], dst[4096];

__attribute__((noinline)) static void leaf(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		if (!(i & 1023)) {
			src[x & 4095] = (char)x;
			memcpy(dst, src, sizeof(dst));
		}
	}
	sink = x + (unsigned char)dst[x & 4095];
}

#define LEVEL(name, next)                                                                          \
	__attribute__((noinline)) static void name(unsigned long n)                                \
	{                                                                                          \
		char pad[64];                                                                      \
		memset(pad, (int)n, sizeof(pad));                                                  \
		next(n + (pad[n & 63] & 0));                                                       \
		sink += pad[1];                                                                    \
	}
LEVEL(l8, leaf)
LEVEL(l7, l8)
LEVEL(l6, l7)
LEVEL(l5, l6)
LEVEL(l4, l5)
LEVEL(l3, l4)
LEVEL(l2, l3)
LEVEL(l1, l2)

int main(int argc, char **argv)
{
	long iter = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	struct timespec a, b;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < iter; i++)
		l1(100000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "work: %.3f %.3f\n", b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9,
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return 0;
}
