// SPDX-License-Identifier: MIT
/*
 * bench: a fixed amount of multi-threaded CPU work, timed inside (CLOCK_MONOTONIC), for
 * the overhead, time-to-result and footprint benchmarks.
 *
 * usage: cpujob THREADS UNITS     each thread does UNITS units of work (about 1 ms each
 *                                 alone on a CPU); prints on stdout, once all are done:
 *                                 "cpujob: threads N units U wall_s W cpu_s C"
 *        cpujob THREADS -t SECONDS  the threads work until SECONDS of wall time passed
 *                                 (for recordings of a fixed length); same line
 *
 * Build with frame pointers so every profiler walks the same stacks:
 *   cc -O2 -fno-omit-frame-pointer -pthread cpujob.c -o cpujob
 * A unit is 3 calls (job_a, job_b, job_c, 50/30/20 % of its iterations) below
 * job_unit; no system calls, no memory traffic: only the CPU time a profiler takes
 * from the threads (interrupts, cache and TLB pollution) slows it down.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNIT_ITERS 400000UL /* about 1 ms at 1.3 ns per dependent multiply-add */

static unsigned long units;
static double seconds;
static double start;

static double now(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define SPIN(x, n)                                                                                 \
	for (unsigned long i = 0; i < (n); i++)                                                    \
	x = x * 6364136223846793005UL + 1442695040888963407UL

__attribute__((noinline)) static unsigned long job_a(unsigned long x)
{
	SPIN(x, UNIT_ITERS * 50 / 100);
	return x;
}

__attribute__((noinline)) static unsigned long job_b(unsigned long x)
{
	SPIN(x, UNIT_ITERS * 30 / 100);
	return x;
}

__attribute__((noinline)) static unsigned long job_c(unsigned long x)
{
	SPIN(x, UNIT_ITERS * 20 / 100);
	return x;
}

__attribute__((noinline)) static unsigned long job_unit(unsigned long x)
{
	x = job_a(x);
	x = job_b(x);
	x = job_c(x);
	__asm__ volatile("" : "+r"(x)); /* keep the frame (no tail call) */
	return x;
}

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg;

	if (seconds > 0) {
		while (now(CLOCK_MONOTONIC) - start < seconds)
			for (int i = 0; i < 10; i++)
				x = job_unit(x);
	} else {
		for (unsigned long u = 0; u < units; u++)
			x = job_unit(x);
	}
	return (void *)x;
}

int main(int argc, char **argv)
{
	pthread_t th[256];
	unsigned long sink = 0;
	char *end;
	long n;

	if (argc == 4 && !strcmp(argv[2], "-t")) {
		seconds = strtod(argv[3], &end);
		if (*end || !(seconds > 0 && seconds < 1e6))
			goto usage;
	} else if (argc == 3) {
		units = strtoul(argv[2], &end, 10);
		if (*end || !units)
			goto usage;
	} else {
		goto usage;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 1 || n > 256)
		goto usage;

	start = now(CLOCK_MONOTONIC);
	double cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(i + 1))) {
			perror("cpujob: pthread_create");
			return 1;
		}
	for (long i = 0; i < n; i++) {
		void *r;

		pthread_join(th[i], &r);
		sink += (unsigned long)r;
	}
	printf("cpujob: threads %ld units %lu wall_s %.6f cpu_s %.6f sink %lu\n", n, units,
	       now(CLOCK_MONOTONIC) - start, now(CLOCK_PROCESS_CPUTIME_ID) - cpu0, sink & 1);
	return 0;
usage:
	fprintf(stderr, "usage: cpujob THREADS UNITS | cpujob THREADS -t SECONDS\n");
	return 2;
}
