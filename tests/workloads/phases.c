// SPDX-License-Identifier: MIT
/*
 * phases: built twice, as phase_one (-DFIRST) and phase_two. phase_one burns MS
 * milliseconds of CPU in first_phase_burn() and then execs phase_two under the
 * same PID, which burns MS in second_phase_burn(): a profile must show each
 * binary's function under its own comm, never the other's.
 *
 *   phase_one MS PATH_TO_PHASE_TWO
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef FIRST
#define BURN first_phase_burn
#else
#define BURN second_phase_burn
#endif

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static unsigned long BURN(double ms)
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
	double ms = argc > 1 ? atof(argv[1]) : 300;

	if (ms <= 0 || ms > 60000) {
		fprintf(stderr, "usage: %s MS [NEXT]\n", argv[0]);
		return 2;
	}
	if (BURN(ms) == 1)
		return 1;
#ifdef FIRST
	if (argc > 2) {
		char *const args[] = { argv[2], argv[1], NULL };

		execv(argv[2], args);
		perror("phase_one: execv");
		return 1;
	}
#endif
	return 0;
}
