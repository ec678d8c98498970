// SPDX-License-Identifier: MIT
/*
 * A workload whose runqueue waits are known by construction: a thread named
 * "rq-sleeper" sleeps 10 ms in wait_sleep() (nanosleep, issued inline) ROUNDS times on
 * one CPU beside two threads ("rq-busy") that burn it, all pinned there (the main
 * thread pins itself with sched_setaffinity before it creates them): each wakeup of the
 * sleeper waits for that CPU. The sleeper is SCHED_BATCH, so its wakeups do not preempt
 * the burner on the CPU: each waits for that one's slice to end, a millisecond or two,
 * long beside the microseconds by which the kernel's own stamps of a wait's ends differ
 * from a tracer's. Its timer slack is 1 ns: each sleep lasts the time asked plus the
 * timer interrupt's latency.
 *
 * The sleeper reads its own /proc/thread-self/schedstat (on-CPU ns, run_delay ns,
 * timeslices) just before its first sleep and just after its last, while it runs and
 * after nothing that blocks, so the two reads bracket exactly the off-CPU intervals of
 * its sleeps: the runqueue part of each is added to run_delay at its switch-in. It
 * then prints this line and returns:
 *
 *   sleeper TID rounds N sleep_ns NS run_delay_start NS run_delay_end NS
 *   exec_start NS exec_end NS slices_start N slices_end N slept_ns NS
 *
 * slept_ns is the wall time its nanosleep calls took (CLOCK_MONOTONIC around each),
 * sleep_ns the time asked for in all. Build: cc -O1 -fno-omit-frame-pointer -pthread.
 *
 * usage: runq [--rounds N] [--sleep-us US] [--cpu CPU]
 *   --cpu CPU  the CPU all three share (default: the last one this process may use)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long rounds = 200, sleep_us = 10000;
static int cpu = -1;
static volatile int done;
static volatile unsigned long sink;

struct schedstat {
	unsigned long long exec_ns, run_delay_ns, slices;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "runq: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void read_schedstat(int fd, struct schedstat *s)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		die("read /proc/thread-self/schedstat");
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu %llu", &s->exec_ns, &s->run_delay_ns, &s->slices) != 3) {
		errno = EINVAL;
		die("parse /proc/thread-self/schedstat");
	}
}

/* The syscall inline, so that the blocked instruction lies in this function. */
__attribute__((noinline)) void wait_sleep(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };
	long ret;

#if defined(__x86_64__)
	do {
		asm volatile("syscall"
			     : "=a"(ret)
			     : "a"((long)SYS_nanosleep), "D"(&ts), "S"(&ts)
			     : "rcx", "r11", "memory");
	} while (ret == -EINTR);
#else
	while ((ret = nanosleep(&ts, &ts)) && errno == EINTR)
		;
#endif
}

__attribute__((noinline)) void burn(void)
{
	while (!done) {
		unsigned long x = sink;

		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}

static void *busy(void *arg __attribute__((unused)))
{
	pthread_setname_np(pthread_self(), "rq-busy");
	burn();
	return NULL;
}

static void *sleeper(void *arg __attribute__((unused)))
{
	struct sched_param sp = { .sched_priority = 0 };
	struct schedstat a, b;
	long long slept = 0, t0;
	int fd;
	long i;

	pthread_setname_np(pthread_self(), "rq-sleeper");
	if (sched_setscheduler(0, SCHED_BATCH, &sp))
		die("sched_setscheduler SCHED_BATCH");
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL))
		die("prctl PR_SET_TIMERSLACK");
	fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open /proc/thread-self/schedstat");
	read_schedstat(fd, &a);
	for (i = 0; i < rounds; i++) {
		t0 = now_ns();
		wait_sleep(sleep_us);
		slept += now_ns() - t0;
	}
	read_schedstat(fd, &b);
	close(fd);
	printf("sleeper %ld rounds %ld sleep_ns %lld run_delay_start %llu run_delay_end %llu "
	       "exec_start %llu exec_end %llu slices_start %llu slices_end %llu slept_ns %lld\n",
	       (long)syscall(SYS_gettid), rounds, (long long)rounds * sleep_us * 1000,
	       a.run_delay_ns, b.run_delay_ns, a.exec_ns, b.exec_ns, a.slices, b.slices, slept);
	fflush(stdout);
	return NULL;
}

static long arg_long(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "runq: invalid %s '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	pthread_t th[3];
	cpu_set_t set;
	int i, err;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = arg_long("--rounds", argv[++i], 1, 1000000);
		} else if (!strcmp(argv[i], "--sleep-us") && i + 1 < argc) {
			sleep_us = arg_long("--sleep-us", argv[++i], 1, 10000000);
		} else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
			cpu = arg_long("--cpu", argv[++i], 0, CPU_SETSIZE - 1);
		} else {
			fprintf(stderr, "usage: runq [--rounds N] [--sleep-us US] [--cpu CPU]\n");
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity");
	for (i = CPU_SETSIZE - 1; cpu < 0 && i >= 0; i--)
		if (CPU_ISSET(i, &set))
			cpu = i;
	if (cpu < 0 || !CPU_ISSET(cpu, &set)) {
		fprintf(stderr, "runq: CPU %d is not one this process may use\n", cpu);
		return 2;
	}
	pin(); /* the threads inherit it: none of them migrates after it starts */
	/* the burners first: the sleeper's every wakeup finds its CPU taken */
	for (i = 0; i < 3; i++) {
		err = pthread_create(&th[i], NULL, i < 2 ? busy : sleeper, NULL);
		if (err) {
			errno = err;
			die("pthread_create");
		}
	}
	pthread_join(th[2], NULL);
	done = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	return 0;
}
