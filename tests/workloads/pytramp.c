// SPDX-License-Identifier: MIT
/*
 * CPython's perf trampolines (-X perf), made here so the test needs no Python: the two
 * stub layouts CPython writes into anonymous executable memory and names "py::..." in
 * its perf map, each called the way CPython calls it (the function in rcx):
 *   3.12: sub $8,%rsp; call *%rcx; add $8,%rsp; ret        (no frame pointer)
 *   3.13: push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret
 * main() -> outer_312() -> [py::fake_312] -> inner_312() burns, and the same for 313,
 * for @seconds. Built without frame pointers: only CFI and the stubs' known layout
 * lead from inner_* back to main. Prints "ready PID" once the map is written; removes
 * the map at exit. usage: pytramp [seconds]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef long (*tramp_fn)(long a, long b, long c, long (*fn)(long, long, long));

static volatile unsigned long sink;
static double until;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) long inner_312(long a, long b, long c)
{
	for (long i = 0; i < 200000; i++)
		sink += i ^ a;
	return b + c;
}

static __attribute__((noinline)) long inner_313(long a, long b, long c)
{
	for (long i = 0; i < 200000; i++)
		sink += i ^ b;
	return a + c;
}

static __attribute__((noinline)) long outer_312(tramp_fn t)
{
	long r = t(1, 2, 3, inner_312);

	__asm__ volatile("" ::: "memory"); /* not a tail call: outer_312 stays on the stack */
	return r;
}

static __attribute__((noinline)) long outer_313(tramp_fn t)
{
	long r = t(4, 5, 6, inner_313);

	__asm__ volatile("" ::: "memory");
	return r;
}

int main(int argc, char **argv)
{
	static const unsigned char s312[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					      0x48, 0x83, 0xc4, 0x08, 0xc3 };
	static const unsigned char s313[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 };
	char path[64];
	unsigned char *code;
	FILE *map;

	until = now() + (argc > 1 ? atof(argv[1]) : 2.0);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, s312, sizeof(s312));
	memcpy(code + 64, s313, sizeof(s313));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx py::fake_312:/pytramp.py\n", (unsigned long)code, sizeof(s312));
	fprintf(map, "%lx %zx py::fake_313:/pytramp.py\n", (unsigned long)(code + 64), sizeof(s313));
	fclose(map);
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (now() < until) {
		outer_312((tramp_fn)(void *)code);
		outer_313((tramp_fn)(void *)(code + 64));
	}
	unlink(path);
	return (int)(sink & 0);
}
