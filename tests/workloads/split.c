// SPDX-License-Identifier: MIT
/*
 * A workload whose CPU profile is known by construction: burn_a, burn_b and burn_c
 * take 50 %, 30 % and 20 % of each thread's CPU time. Each round's length varies
 * (1-9 ms of thread CPU time, pseudo-random) so periodic sampling cannot lock onto
 * the phase. Build with frame pointers: cc -O1 -fno-omit-frame-pointer.
 *
 * usage: split [--seconds S] [--threads N] [--kernel] [--recurse N [--drift W] | --mix D]
 *   --seconds S  run for S seconds of wall time (default 3)
 *   --threads N  N worker threads named "split-w0".. run the split; the main thread
 *                only waits (default 0: the main thread runs it, so stacks reach main)
 *   --kernel     also spend time in the kernel: burn_kernel() reads /dev/zero
 *   --recurse N  instead of the split, burn in burn_a at the bottom of recurse()
 *                called N-1 times recursively, for depths 1..N in turn: N distinct
 *                stacks, as deep as N + 4 frames
 *   --drift W    with --recurse: only W of those depths at a time, a window that moves
 *                from 1..W to N-W+1..N over the run (N/W phases of equal length, each
 *                with stacks no other phase has), as a long-running program's stacks
 *                change over hours
 *   --mix D      instead of the split, burn in burn_a at the end of a chain of D calls,
 *                each mix_0() or mix_1() by a bit of the round's number: a stack not
 *                seen for 2^D rounds every round, all as deep (D + 5 frames), as a
 *                program whose stacks keep changing while their shape does not
 * Prints "ready PID [TID...]" on stdout once the burning starts, then stays silent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double seconds = 3.0;
static int kernel_mode;
static int recurse_max;
static int drift;
static int mix_depth;
static volatile unsigned long sink;
static unsigned long chunk = 20000; /* spin iterations between clock reads */

static long long thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define SPIN(n)                                                                                    \
	do {                                                                                       \
		unsigned long x = sink;                                                            \
		for (unsigned long i = 0; i < (n); i++)                                            \
			x = x * 6364136223846793005UL + 1442695040888963407UL;                     \
		sink = x;                                                                          \
	} while (0)

__attribute__((noinline)) void burn_a(long long ns)
{
	long long end = thread_ns() + ns;

	while (thread_ns() < end)
		SPIN(chunk);
}

__attribute__((noinline)) void burn_b(long long ns)
{
	long long end = thread_ns() + ns;

	while (thread_ns() < end)
		SPIN(chunk);
}

__attribute__((noinline)) void burn_c(long long ns)
{
	long long end = thread_ns() + ns;

	while (thread_ns() < end)
		SPIN(chunk);
}

__attribute__((noinline)) void burn_kernel(long long ns)
{
	static char buf[65536];
	long long end = thread_ns() + ns;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return;
	while (thread_ns() < end)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

__attribute__((noinline)) void recurse(int depth, long long ns)
{
	if (depth <= 1) {
		burn_a(ns);
		return;
	}
	recurse(depth - 1, ns);
	sink++; /* no tail call: every level keeps its frame */
}

__attribute__((noinline)) void mix_0(int depth, unsigned long bits, long long ns);
__attribute__((noinline)) void mix_1(int depth, unsigned long bits, long long ns);

static void mix(int depth, unsigned long bits, long long ns)
{
	if (depth <= 0)
		burn_a(ns);
	else if (bits & 1)
		mix_1(depth - 1, bits >> 1, ns);
	else
		mix_0(depth - 1, bits >> 1, ns);
}

__attribute__((noinline)) void mix_0(int depth, unsigned long bits, long long ns)
{
	mix(depth, bits, ns);
	sink++; /* no tail call: every level keeps its frame */
}

__attribute__((noinline)) void mix_1(int depth, unsigned long bits, long long ns)
{
	mix(depth, bits, ns);
	sink += 2;
}

__attribute__((noinline)) void run_rounds(unsigned int seed)
{
	double start = wall(), end = start + seconds;
	int depth = 0, phases = drift ? (recurse_max + drift - 1) / drift : 1, turn = 0;
	unsigned long round_nr = 0;

	while (wall() < end) {
		/* xorshift: round lengths 1..9 ms of CPU time */
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		long long round = 1000000LL + (seed % 8000) * 1000LL;

		if (mix_depth) {
			mix(mix_depth, round_nr++, round / 4);
			continue;
		}
		if (recurse_max && drift) {
			int phase = (int)((wall() - start) / seconds * phases);

			phase = phase < phases ? phase : phases - 1;
			depth = phase * drift + turn++ % drift + 1;
			recurse(depth < recurse_max ? depth : recurse_max, round / 4);
			continue;
		}
		if (recurse_max) {
			depth = depth % recurse_max + 1;
			recurse(depth, round / 4);
			continue;
		}
		burn_a(round * 50 / 100);
		burn_b(round * 30 / 100);
		burn_c(round * 20 / 100);
		if (kernel_mode)
			burn_kernel(round * 20 / 100);
	}
}

static pthread_barrier_t started;
static long tids[64];

static void *worker(void *arg)
{
	long idx = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "split-w%ld", idx);
	pthread_setname_np(pthread_self(), name);
	tids[idx] = syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	run_rounds(0x9e3779b9u + (unsigned int)idx);
	return NULL;
}

/* Sizes a spin chunk to about 50 us so clock reads cost about 1 % of the time. */
static void calibrate(void)
{
	long long t0 = thread_ns();

	chunk = 100000;
	SPIN(chunk);
	long long dt = thread_ns() - t0;

	if (dt > 0)
		chunk = (unsigned long)(100000.0 * 50000.0 / dt) + 1;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	long nthreads = 0, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--kernel"))
			kernel_mode = 1;
		else if (!strcmp(argv[i], "--recurse") && i + 1 < argc)
			recurse_max = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--drift") && i + 1 < argc)
			drift = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--mix") && i + 1 < argc)
			mix_depth = strtol(argv[++i], NULL, 10);
		else {
			fprintf(stderr,
				"usage: split [--seconds S] [--threads N] [--kernel] [--recurse N "
				"[--drift W] | --mix D]\n");
			return 2;
		}
	}
	if (nthreads < 0 || nthreads > 64 || seconds <= 0 || recurse_max < 0 ||
	    recurse_max > 100000 || drift < 0 || drift > recurse_max || (drift && !recurse_max) ||
	    mix_depth < 0 || mix_depth > 60 || (mix_depth && recurse_max)) {
		fprintf(stderr, "split: bad arguments\n");
		return 2;
	}
	calibrate();
	if (!nthreads) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		run_rounds(0x12345u);
		return 0;
	}
	pthread_barrier_init(&started, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&started);
	printf("ready %d", getpid());
	for (i = 0; i < nthreads; i++)
		printf(" %ld", tids[i]);
	printf("\n");
	fflush(stdout);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
