// SPDX-License-Identifier: MIT
/*
 * Threads whose wall time in a recording is known by construction, each with its own
 * name (the folded stacks' first frame):
 *   "lifetimes" (main) blocks reading standard input; on a line "go" it starts
 *   "short", waits for it to end and reads again, until EOF;
 *   "sleeper" blocks reading a pipe no one writes, from start to exit;
 *   "busy" burns CPU from start to exit;
 *   "short" lives about @seconds, half of each 20 ms round burning, half sleeping,
 *   and measures its own lifetime (CLOCK_MONOTONIC, its first instruction to its
 *   last), printed by main as "short US".
 * It prints "ready" once every long-lived thread runs. Each thread that exists for the
 * whole recording has a wall total equal to the recording's length; "short" one equal
 * to its lifetime.
 * usage: lifetimes [seconds-of-short]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int never[2];
static double short_seconds = 1.0;
static long long short_us;
static volatile unsigned long sink;
static pthread_barrier_t started;

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void burn_us(long long us)
{
	long long end = now_us() + us;

	while (now_us() < end)
		sink++;
}

static void *sleeper(void *arg)
{
	char c;

	pthread_setname_np(pthread_self(), "sleeper");
	pthread_barrier_wait(&started);
	return read(never[0], &c, 1) < 0 ? arg : NULL;
}

static void *busy(void *arg)
{
	pthread_setname_np(pthread_self(), "busy");
	pthread_barrier_wait(&started);
	for (;;)
		burn_us(1000);
	return arg;
}

static void *short_lived(void *arg)
{
	long long start = now_us(), end = start + (long long)(short_seconds * 1e6);
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	pthread_setname_np(pthread_self(), "short");
	while (now_us() < end) {
		burn_us(10000);
		nanosleep(&ten_ms, NULL);
	}
	short_us = now_us() - start;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char line[64];

	if (argc > 1)
		short_seconds = atof(argv[1]);
	if (pipe(never))
		return 1;
	pthread_barrier_init(&started, NULL, 3);
	if (pthread_create(&t, NULL, sleeper, NULL) || pthread_create(&t, NULL, busy, NULL))
		return 1;
	pthread_barrier_wait(&started);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "go", 2))
			continue;
		if (pthread_create(&t, NULL, short_lived, NULL) || pthread_join(t, NULL))
			return 1;
		printf("short %lld\n", short_us);
		fflush(stdout);
	}
	return 0;
}
