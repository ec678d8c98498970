// SPDX-License-Identifier: MIT
/*
 * bench: a load for system-wide recording: N processes per second fork, exec this
 * program again as a child that burns about 1 ms of CPU in loadgen_child_hot()
 * and exits, while pairs of threads ping-pong over pipes and condition variables
 * (a context switch per hop). Prints "ready PID" on standard output when
 * everything runs, and a summary line on standard error when done.
 *
 * cc -O1 -fno-omit-frame-pointer -pthread bench/loadgen.c -o loadgen
 * loadgen [-r PROCS_PER_SEC] [-p PAIRS] [-d SECONDS] [-b CHILD_BURN_US]
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;
static atomic_ulong hops;
static atomic_ulong spawned, reaped, spawn_failed;

static double now_sec(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The child's work: the frame a profile of the load must show. */
__attribute__((noinline)) static unsigned long loadgen_child_hot(double burn_sec)
{
	volatile unsigned long x = 0;
	double end = now_sec(CLOCK_THREAD_CPUTIME_ID) + burn_sec;

	while (now_sec(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			x += i;
	return x;
}

struct pair {
	int kind; /* 0: pipes, 1: condition variable */
	int ab[2], ba[2];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int turn;
};

struct side {
	struct pair *p;
	int me;
};

static void *pingpong(void *arg)
{
	struct side *s = arg;
	struct pair *p = s->p;
	char c = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (p->kind == 0) {
			if (s->me == 0) {
				if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
					break;
			} else {
				if (read(p->ab[0], &c, 1) != 1 || write(p->ba[1], &c, 1) != 1)
					break;
			}
		} else {
			pthread_mutex_lock(&p->mu);
			while (p->turn != s->me && !atomic_load(&stop))
				pthread_cond_wait(&p->cv, &p->mu);
			p->turn = !s->me;
			pthread_cond_signal(&p->cv);
			pthread_mutex_unlock(&p->mu);
		}
		atomic_fetch_add_explicit(&hops, 1, memory_order_relaxed);
	}
	/* wake the other side so it can see stop */
	if (p->kind == 0) {
		close(s->me == 0 ? p->ab[1] : p->ba[1]);
	} else {
		pthread_mutex_lock(&p->mu);
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

static void *reaper(void *arg __attribute__((unused)))
{
	for (;;) {
		pid_t pid = wait(NULL);

		if (pid > 0) {
			atomic_fetch_add(&reaped, 1);
			continue;
		}
		if (errno == ECHILD && atomic_load(&stop))
			return NULL;
		if (errno == ECHILD) {
			/* no child yet: wait for the spawner (rare; a short pause, not a sync) */
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
	}
}

int main(int argc, char **argv)
{
	double rate = 200, duration = 10, burn_us = 1000;
	long pairs = 4;
	char *end, exe[PATH_MAX], burn_arg[32];
	struct timespec next;
	pthread_t *threads, reap_thread;
	struct pair *ps;
	struct side *sides;
	double t0;
	ssize_t n;
	int c;

	if (argc == 3 && !strcmp(argv[1], "child")) {
		loadgen_child_hot(strtod(argv[2], NULL) / 1e6);
		return 0;
	}
	while ((c = getopt(argc, argv, "r:p:d:b:")) != -1) {
		errno = 0;
		switch (c) {
		case 'r':
			rate = strtod(optarg, &end);
			break;
		case 'p':
			pairs = strtol(optarg, &end, 10);
			break;
		case 'd':
			duration = strtod(optarg, &end);
			break;
		case 'b':
			burn_us = strtod(optarg, &end);
			break;
		default:
			fprintf(stderr, "usage: loadgen [-r PROCS_PER_SEC] [-p PAIRS] [-d SECONDS] "
					"[-b CHILD_BURN_US]\n");
			return 2;
		}
		if (errno || *end || end == optarg) {
			fprintf(stderr, "loadgen: invalid -%c '%s'\n", c, optarg);
			return 2;
		}
	}
	if (rate < 0 || pairs < 0 || pairs > 512 || duration <= 0 || burn_us < 0) {
		fprintf(stderr, "loadgen: out of range\n");
		return 2;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		perror("loadgen: /proc/self/exe");
		return 1;
	}
	exe[n] = '\0';
	snprintf(burn_arg, sizeof(burn_arg), "%.0f", burn_us);

	threads = calloc(2 * pairs + 1, sizeof(*threads));
	ps = calloc(pairs + 1, sizeof(*ps));
	sides = calloc(2 * pairs + 1, sizeof(*sides));
	if (!threads || !ps || !sides)
		return 1;
	for (long i = 0; i < pairs; i++) {
		ps[i].kind = i % 2;
		if (pipe(ps[i].ab) || pipe(ps[i].ba)) {
			perror("loadgen: pipe");
			return 1;
		}
		pthread_mutex_init(&ps[i].mu, NULL);
		pthread_cond_init(&ps[i].cv, NULL);
		for (int s = 0; s < 2; s++) {
			sides[2 * i + s] = (struct side){&ps[i], s};
			if (pthread_create(&threads[2 * i + s], NULL, pingpong,
					   &sides[2 * i + s])) {
				fprintf(stderr, "loadgen: cannot create threads\n");
				return 1;
			}
		}
	}
	if (pthread_create(&reap_thread, NULL, reaper, NULL)) {
		fprintf(stderr, "loadgen: cannot create the reaper\n");
		return 1;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);

	/* spawner: fork+exec at @rate per second, paced on absolute deadlines */
	t0 = now_sec(CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (now_sec(CLOCK_MONOTONIC) - t0 < duration) {
		if (rate > 0) {
			pid_t pid = fork();

			if (pid == 0) {
				execl(exe, exe, "child", burn_arg, (char *)NULL);
				_exit(127);
			}
			if (pid < 0)
				atomic_fetch_add(&spawn_failed, 1);
			else
				atomic_fetch_add(&spawned, 1);
			next.tv_nsec += (long)(1e9 / rate);
			while (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
		} else {
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	atomic_store(&stop, true);
	for (long i = 0; i < 2 * pairs; i++)
		pthread_join(threads[i], NULL);
	pthread_join(reap_thread, NULL);
	fprintf(stderr,
		"loadgen: %lu processes started (%lu failed), %lu reaped, %lu ping-pong hops in "
		"%.1f s\n",
		atomic_load(&spawned), atomic_load(&spawn_failed), atomic_load(&reaped),
		atomic_load(&hops), now_sec(CLOCK_MONOTONIC) - t0);
	free(threads);
	free(ps);
	free(sides);
	return 0;
}
