// SPDX-License-Identifier: MIT
/*
 * burst: a short-lived process for tests/record/procs.sh. It burns MS
 * milliseconds of its own CPU time in burst_burn() and exits, so every sample of
 * it taken after start-up should name burst_burn.
 *
 *   burst MS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long burst_burn(double ms)
{
	double end = cpu_ms() + ms;
	volatile unsigned long x = 0;

	while (cpu_ms() < end) {
		for (int i = 0; i < 1000; i++)
			x += i;
	}
	return x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 60;

	if (ms <= 0 || ms > 60000) {
		fprintf(stderr, "usage: burst MS (0 < MS <= 60000)\n");
		return 2;
	}
	return burst_burn(ms) == 1; /* never 1: keeps the call */
}
