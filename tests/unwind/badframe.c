// SPDX-License-Identifier: MIT
/*
 * A workload that spins in code without CFI (an anonymous executable page, as JIT code
 * is) with rbp set to -1, so an unwinder falling back to the frame pointer reads the
 * words at 0xffffffffffffffff and 0x7 (address arithmetic that wraps).
 * usage: badframe SECONDS     prints "badframe: N rounds" when done
 * Built by tests/unwind/CMakeLists.txt: cc -O2 badframe.c -o badframe (x86-64 only)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* push rbp; mov rbp, -1; mov rcx, 2000000; 1: dec rcx; jnz 1b; pop rbp; ret */
static const unsigned char code[] = {
	0x55, 0x48, 0xc7, 0xc5, 0xff, 0xff, 0xff, 0xff, 0x48, 0xc7, 0xc1,
	0x80, 0x84, 0x1e, 0x00, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0x5d, 0xc3,
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc == 2 ? strtod(argv[1], NULL) : 0, end;
	unsigned long rounds = 0;
	void *page;

	if (!(seconds > 0)) {
		fprintf(stderr, "usage: badframe SECONDS\n");
		return 2;
	}
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("badframe: mmap");
		return 1;
	}
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) {
		perror("badframe: mprotect");
		return 1;
	}
	end = now() + seconds;
	while (now() < end) {
		((void (*)(void))page)();
		rounds++;
	}
	printf("badframe: %lu rounds\n", rounds);
	return 0;
}
