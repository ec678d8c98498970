// SPDX-License-Identifier: MIT
/*
 * bench: a thread pool woken at a fixed rate (bench/offwake-bench.sh). A dispatcher
 * hands RATE tasks a second, one every 1/RATE s (absolute timer), to WORKERS threads
 * waiting on a semaphore; each task is a fixed bit of work (about 10 us, shorter than
 * the period), so every task wakes a blocked worker: RATE wakeups a second by the
 * dispatcher, and as many by its timer. Prints "ready PID" at start and, after
 * SECONDS:
 *
 *   tasks N cpu_ns NS elapsed_ns NS
 *
 * cpu_ns is the process's user + system time (getrusage): what the BPF programs run in
 * its threads' context (switches, wakeups) add to it is the recording's overhead.
 *
 * usage: wakepool [RATE] [SECONDS] [WORKERS]  (defaults 20000 2 4)
 * Build: cc -O2 -fno-omit-frame-pointer -pthread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static sem_t work;
static atomic_long done_tasks;
static atomic_int stop;
static volatile unsigned long sink;

static long arg(int argc, char **argv, int i, long dflt, long max)
{
	char *end;
	long v;

	if (argc <= i)
		return dflt;
	errno = 0;
	v = strtol(argv[i], &end, 10);
	if (errno || *end || v <= 0 || v > max) {
		fprintf(stderr, "wakepool: invalid argument '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

__attribute__((noinline)) static void task(void)
{
	unsigned long x = sink;
	int i;

	for (i = 0; i < 1500; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

static void *worker(void *a)
{
	(void)a;
	for (;;) {
		while (sem_wait(&work) && errno == EINTR)
			;
		if (atomic_load(&stop))
			return NULL;
		task();
		atomic_fetch_add(&done_tasks, 1);
	}
}

static long long ns(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

int main(int argc, char **argv)
{
	long rate = arg(argc, argv, 1, 20000, 1000000);
	long seconds = arg(argc, argv, 2, 2, 3600);
	long workers = arg(argc, argv, 3, 4, 64), period = 1000000000 / rate, i;
	struct timespec t0, next, t1;
	struct rusage ru;
	pthread_t *th = calloc(workers, sizeof(*th));

	if (!th || sem_init(&work, 0, 0))
		return 1;
	for (i = 0; i < workers; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	for (i = 0; i < seconds * rate; i++) {
		sem_post(&work);
		next.tv_nsec += period;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	atomic_store(&stop, 1);
	for (i = 0; i < workers; i++)
		sem_post(&work);
	for (i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru);
	printf("tasks %ld cpu_ns %lld elapsed_ns %lld\n", atomic_load(&done_tasks),
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL,
	       ns(&t1) - ns(&t0));
	free(th);
	return 0;
}
