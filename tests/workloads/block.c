// SPDX-License-Identifier: MIT
/*
 * A workload whose off-CPU profile is known by construction: its main thread, in
 * rounds, sleeps 30 ms in wait_sleep() and blocks 20 ms on a pipe in wait_pipe()
 * (a second thread, "block-waker", writes the byte), and with --burn first burns
 * 15 ms of CPU in burn_cpu(). The syscalls are issued inline (x86_64) so the
 * blocked instruction lies in the named function even with frame-pointer unwinding.
 * It measures the wall time it spent in each function itself (CLOCK_MONOTONIC) and
 * prints it at exit: "truth burn_cpu=US wait_sleep=US wait_pipe=US total=US".
 * Build: cc -O1 -fno-omit-frame-pointer -pthread.
 * With --libc the waits call libc's nanosleep() and read() instead, so the blocked
 * instruction lies in libc (Debian's has no frame pointers) and the named function
 * is its caller: what --unwind dwarf must recover (tests/unwind/offcpu.sh).
 * With --deep N each round runs at the bottom of descend() called N times
 * recursively: stacks N + 4 frames deep (or more) at every wait.
 *
 * usage: block [--seconds S] [--burn] [--libc] [--deep N]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2], kick[2];
static int use_libc, burn;
static long long t_burn, t_sleep, t_pipe;
static volatile unsigned long sink;

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static __attribute__((unused)) long sys3(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long ret;

	asm volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
#else
	return syscall(nr, a, b, c);
#endif
}

/* Inline so that the syscall instruction is inside each caller. */
#if defined(__x86_64__)
#define SYSCALL3(nr, a, b, c)                                                                      \
	({                                                                                         \
		long __ret;                                                                        \
		asm volatile("syscall"                                                             \
			     : "=a"(__ret)                                                         \
			     : "a"((long)(nr)), "D"((long)(a)), "S"((long)(b)), "d"((long)(c))     \
			     : "rcx", "r11", "memory");                                            \
		__ret;                                                                             \
	})
#else
#define SYSCALL3(nr, a, b, c) sys3(nr, (long)(a), (long)(b), (long)(c))
#endif

__attribute__((noinline)) void wait_sleep(long ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	if (use_libc) {
		while (nanosleep(&ts, &ts))
			;
		return;
	}
	while (SYSCALL3(SYS_nanosleep, &ts, &ts, 0) == -4 /* EINTR */)
		;
}

__attribute__((noinline)) void wait_pipe(void)
{
	char c;

	if (use_libc) {
		while (read(pipefd[0], &c, 1) < 0)
			;
		return;
	}
	while (SYSCALL3(SYS_read, pipefd[0], &c, 1) == -4)
		;
}

__attribute__((noinline)) void burn_cpu(long ms)
{
	struct timespec ts;
	long long end;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec * 1000000000LL + ts.tv_nsec + ms * 1000000LL;
	do {
		unsigned long x = sink;

		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec * 1000000000LL + ts.tv_nsec < end);
}

/* Writes the byte wait_pipe() waits for, 20 ms after being kicked. */
static void *waker(void *arg __attribute__((unused)))
{
	char c = 1;

	pthread_setname_np(pthread_self(), "block-waker");
	for (;;) {
		if (read(kick[0], &c, 1) != 1)
			return NULL;
		wait_sleep(20);
		if (write(pipefd[1], &c, 1) != 1)
			return NULL;
	}
}

/*
 * One round: the burn, the sleep, the wait on the pipe; -1 when the waker is gone. A
 * macro, so that without --deep the waits are main's callees (no inline frame between).
 */
#define ONE_ROUND()                                                                                \
	({                                                                                         \
		long long __t0, __t1;                                                              \
		char __c = 1;                                                                      \
		int __ret = 0;                                                                     \
                                                                                                   \
		if (burn) {                                                                        \
			__t0 = now_us();                                                           \
			burn_cpu(15);                                                              \
			t_burn += now_us() - __t0;                                                 \
		}                                                                                  \
		__t0 = now_us();                                                                   \
		wait_sleep(30);                                                                    \
		__t1 = now_us();                                                                   \
		t_sleep += __t1 - __t0;                                                            \
		if (write(kick[1], &__c, 1) != 1)                                                  \
			__ret = -1;                                                                \
		else                                                                               \
			wait_pipe();                                                               \
		t_pipe += now_us() - __t1;                                                         \
		__ret;                                                                             \
	})

/* ONE_ROUND() @n calls down (not a tail call: the add after it) */
__attribute__((noinline)) int descend(int n)
{
	int err;

	if (!n)
		return ONE_ROUND();
	err = descend(n - 1);
	sink += (unsigned long)n;
	return err;
}

int main(int argc, char **argv)
{
	long long start, end;
	double seconds = 3.0;
	int deep = 0, i;
	pthread_t th;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--burn"))
			burn = 1;
		else if (!strcmp(argv[i], "--libc"))
			use_libc = 1;
		else if (!strcmp(argv[i], "--deep") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);

			deep = *end || v < 0 || v > 100000 ? -1 : (int)v;
		} else {
			fprintf(stderr, "usage: block [--seconds S] [--burn] [--libc] [--deep N]\n");
			return 2;
		}
	}
	if (seconds <= 0 || deep < 0 || deep > 100000 || pipe(pipefd) || pipe(kick))
		return 2;
	pthread_create(&th, NULL, waker, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	start = now_us();
	end = start + (long long)(seconds * 1e6);
	while (now_us() < end)
		if (deep ? descend(deep) : ONE_ROUND())
			return 1;
	printf("truth burn_cpu=%lld wait_sleep=%lld wait_pipe=%lld total=%lld\n", t_burn, t_sleep,
	       t_pipe, now_us() - start);
	fflush(stdout);
	return 0;
}
