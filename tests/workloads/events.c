// SPDX-License-Identifier: MIT
/*
 * Events whose stacks and counts are known by construction (tests/record/events.sh):
 *   events calls N      probed() called exactly N times from caller_a() and N times
 *                       from caller_b() (2N in all), probed_deep() recursing 4 deep
 *                       N times from caller_a() (entered 4N times, N outermost)
 *   events malloc N     big() and small() each call malloc N times, big() for 3x the
 *                       bytes (3072 against 1024): 75 % of the bytes under big()
 *   events faults N     touch_a() faults in 3x the new pages of touch_b() (3N against
 *                       N pages, mapped fresh without huge pages): 75 % of the faults
 *   events sleepy N     nap() sleeps 3 ms called from slow() and 1 ms from fast(), N
 *                       times each; prints "truth slow=US fast=US", the time it measured
 *                       inside nap() under each (about 75 % under slow())
 *   events exits N      N threads each enter stuck() and exit inside it (pthread_exit)
 *   events jumps N      jumpy() called N times (N even): every other call leaves by
 *                       longjmp, the last one among them, so N / 2 - 1 calls are left
 *                       without returning while the thread goes on
 *   events usdt N       the USDT probe scorch:tick, argument i % 4 + 1, N times from
 *                       tick_loop(): N hits weighing 2.5 N in all (N a multiple of 4)
 *   events ready N      prints "ready PID" and waits for a signal (list-events -p)
 *   events wait N       prints "ready PID", waits for SIGUSR1, then does what calls N
 *                       does (record -p attached before the calls)
 * Built with frame pointers:
 *   cc -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread events.c -o events
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sdt.h"

void *volatile sink;
volatile unsigned long counter;

__attribute__((noinline)) void probed(unsigned long i)
{
	counter += i;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void probed_deep(int depth)
{
	counter++;
	if (depth > 1)
		probed_deep(depth - 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void caller_a(long n)
{
	for (long i = 0; i < n; i++) {
		probed(i);
		probed_deep(4);
	}
}

__attribute__((noinline)) void caller_b(long n)
{
	for (long i = 0; i < n; i++)
		probed(i);
}

__attribute__((noinline)) void big(void)
{
	char *p = malloc(3072);

	p[0] = 1;
	sink = p;
	free(p);
}

__attribute__((noinline)) void small(void)
{
	char *p = malloc(1024);

	p[0] = 1;
	sink = p;
	free(p);
}

/* Faults in @pages new pages, one write each. */
static void touch(long pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p =
		mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(p, pages * psz, MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		((volatile char *)p)[i * psz] = 1;
	munmap(p, pages * psz);
}

__attribute__((noinline)) void touch_a(long pages)
{
	touch(3 * pages);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void touch_b(long pages)
{
	touch(pages);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void nap(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000};

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double slow_us, fast_us;

__attribute__((noinline)) void slow(void)
{
	double t = now_us();

	nap(3);
	slow_us += now_us() - t;
}

__attribute__((noinline)) void fast(void)
{
	double t = now_us();

	nap(1);
	fast_us += now_us() - t;
}

/* not a leaf (it calls probed()): it has a frame of its own, so a frame-pointer walk
 * from the probe inside it keeps its caller */
__attribute__((noinline)) void tick_loop(long n)
{
	for (long i = 0; i < n; i++) {
		SDT_PROBE1(scorch, tick, i % 4 + 1);
		probed(i);
	}
}

static jmp_buf jump_back;

__attribute__((noinline)) void jumpy(long i)
{
	counter += i;
	if (i & 1)
		longjmp(jump_back, 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void stuck(void)
{
	pthread_exit(NULL);
}

static void *exiting(void *arg)
{
	(void)arg;
	stuck();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc != 3 || n <= 0) {
		fprintf(stderr,
			"usage: events calls|malloc|faults|sleepy|exits|jumps|usdt|ready|wait N\n");
		return 2;
	}
	if (!strcmp(argv[1], "calls")) {
		caller_a(n);
		caller_b(n);
	} else if (!strcmp(argv[1], "malloc")) {
		for (long i = 0; i < n; i++) {
			big();
			small();
		}
	} else if (!strcmp(argv[1], "faults")) {
		for (long i = 0; i < 10; i++) {
			touch_a(n / 10);
			touch_b(n / 10);
		}
	} else if (!strcmp(argv[1], "sleepy")) {
		for (long i = 0; i < n; i++) {
			slow();
			fast();
		}
		printf("truth slow=%.0f fast=%.0f\n", slow_us, fast_us);
	} else if (!strcmp(argv[1], "jumps")) {
		for (volatile long i = 0; i < n; i++)
			if (!setjmp(jump_back))
				jumpy(i);
	} else if (!strcmp(argv[1], "usdt")) {
		tick_loop(n);
	} else if (!strcmp(argv[1], "wait")) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (sigwait(&set, &sig))
			return 1;
		caller_a(n);
		caller_b(n);
	} else if (!strcmp(argv[1], "ready")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		pause();
	} else if (!strcmp(argv[1], "exits")) {
		for (long i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, exiting, NULL) || pthread_join(t, NULL))
				return 1;
		}
	} else {
		fprintf(stderr, "events: unknown mode %s\n", argv[1]);
		return 2;
	}
	return 0;
}
