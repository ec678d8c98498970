// SPDX-License-Identifier: MIT
/*
 * latemap: code mapped after the process was first sampled. Spins in early_spin() for
 * BEFORE seconds, then dlopen()s LIB and spins in its late_spin() for AFTER / 2 seconds,
 * then copies a function into an anonymous page made executable (as a JIT does) and
 * spins there for AFTER / 2 seconds. The mappings of LIB and of the page do not exist
 * when a profiler first sees the process: a profile names them only if it reads the
 * process's mappings again.
 *
 *   latemap BEFORE AFTER LIB        prints "latemap: N rounds" when done
 *   latemap flip SECONDS            turns one page executable and back, over and over
 *                                   (as a W^X JIT does), for SECONDS; prints
 *                                   "latemap: N flips": each flip changes the process's
 *                                   count of executable pages twice
 *
 * Built by tests/record/CMakeLists.txt (x86-64 only: the page holds machine code):
 *   cc -O1 -fno-omit-frame-pointer tests/workloads/latemap.c -o latemap
 *   cc -O1 -fno-omit-frame-pointer -shared -fPIC tests/workloads/latelib.c -o liblatelib.so
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* push rbp; mov rbp, rsp; mov ecx, 100000; 1: dec rcx; jnz 1b; pop rbp; ret */
static const unsigned char code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb9, 0xa0, 0x86, 0x01, 0x00,
	0x48, 0xff, 0xc9, 0x75, 0xfb, 0x5d, 0xc3,
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long early_spin(double seconds)
{
	double end = now() + seconds;
	volatile unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += i;
	return x;
}

static int flip(double seconds)
{
	double end = now() + seconds;
	unsigned long flips = 0;
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED) {
		perror("latemap: mmap");
		return 1;
	}
	while (now() < end) {
		/* a while in each state, so that samples see both */
		if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) {
			perror("latemap: mprotect");
			return 1;
		}
		early_spin(1e-3);
		if (mprotect(page, 4096, PROT_READ | PROT_WRITE)) {
			perror("latemap: mprotect");
			return 1;
		}
		early_spin(1e-3);
		flips++;
	}
	printf("latemap: %lu flips\n", flips);
	return 0;
}

int main(int argc, char **argv)
{
	double before = argc == 4 ? strtod(argv[1], NULL) : 0;
	double after = argc == 4 ? strtod(argv[2], NULL) : 0, end;
	unsigned long (*late_spin)(unsigned long);
	unsigned long rounds = 0;
	void *lib, *page;

	if (argc == 3 && !strcmp(argv[1], "flip") && strtod(argv[2], NULL) > 0)
		return flip(strtod(argv[2], NULL));
	if (!(before > 0 && after > 0)) {
		fprintf(stderr, "usage: latemap BEFORE AFTER LIB | latemap flip SECONDS\n");
		return 2;
	}
	early_spin(before);
	lib = dlopen(argv[3], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "latemap: %s\n", dlerror());
		return 1;
	}
	late_spin = (unsigned long (*)(unsigned long))dlsym(lib, "late_spin");
	if (!late_spin) {
		fprintf(stderr, "latemap: %s\n", dlerror());
		return 1;
	}
	end = now() + after / 2;
	while (now() < end) {
		late_spin(100000);
		rounds++;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("latemap: mmap");
		return 1;
	}
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) {
		perror("latemap: mprotect");
		return 1;
	}
	end = now() + after / 2;
	while (now() < end) {
		((void (*)(void))page)();
		rounds++;
	}
	printf("latemap: %lu rounds\n", rounds);
	return 0;
}
