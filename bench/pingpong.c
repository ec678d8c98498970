// SPDX-License-Identifier: MIT
/*
 * pingpong: a context-switch-bound workload for bench/offcpu-bench.sh. Two
 * threads pass one byte back and forth over two pipes ROUNDS times, so every
 * hand-off blocks one thread and wakes the other (two sched_switch events per
 * round trip when both run on one CPU). Prints its own elapsed time, measured
 * from after both threads are ready to the last reply, so profiler start-up and
 * symbolization are not part of the figure.
 *
 *   pingpong ROUNDS    ->  "rounds R elapsed_ns N"
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds; /* set before the echo thread starts, read-only after */

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *echo(void *arg)
{
	char c;
	long i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		if (read(ping[0], &c, 1) != 1)
			die("read");
		if (write(pong[1], &c, 1) != 1)
			die("write");
	}
	return NULL;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	pthread_t t;
	long long start;
	char c = 'x';
	long i;

	if (argc != 2 || (rounds = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: pingpong ROUNDS\n");
		return 2;
	}
	if (pipe(ping) || pipe(pong))
		die("pipe");
	if (pthread_create(&t, NULL, echo, NULL))
		die("pthread_create");
	/* one warm-up round trip: both threads exist and have run once */
	if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
		die("warm-up");
	start = now_ns();
	for (i = 1; i < rounds; i++) {
		if (write(ping[1], &c, 1) != 1)
			die("write");
		if (read(pong[0], &c, 1) != 1)
			die("read");
	}
	printf("rounds %ld elapsed_ns %lld\n", rounds - 1, now_ns() - start);
	pthread_join(t, NULL);
	return 0;
}
