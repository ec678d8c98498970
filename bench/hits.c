// SPDX-License-Identifier: MIT
/*
 * A loop that hits one probe point a known number of times and times itself, for
 * bench/events-bench.sh:
 *   hits calls N    calls probed() N times (a function's entry: uprobe)
 *   hits usdt N     passes the USDT probe bench:tick N times
 *   hits malloc N   malloc(64) and free N times
 * prints "hits N elapsed_ns NS" (from the first hit to the last). HITS_CPU=K pins it to
 * CPU K (set in the environment, so that a tool running it as a command probes it, not a
 * wrapper such as taskset).
 *   cc -O2 -fno-omit-frame-pointer -I tests/workloads bench/hits.c -o hits
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdt.h"

void *volatile sink;
volatile unsigned long counter;

__attribute__((noinline)) void probed(unsigned long i)
{
	counter += i;
	__asm__ volatile("" ::: "memory");
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	unsigned long long t;

	if (argc != 3 || n <= 0) {
		fprintf(stderr, "usage: hits calls|usdt|malloc N\n");
		return 2;
	}
	if (getenv("HITS_CPU")) {
		const char *v = getenv("HITS_CPU");
		char *end;
		long cpu = strtol(v, &end, 10);
		cpu_set_t set;

		if (end == v || *end || cpu < 0 || cpu >= CPU_SETSIZE) {
			fprintf(stderr, "hits: HITS_CPU=%s is not a CPU number\n", v);
			return 2;
		}
		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("hits: sched_setaffinity");
	}
	t = now_ns();
	if (!strcmp(argv[1], "calls")) {
		for (long i = 0; i < n; i++)
			probed(i);
	} else if (!strcmp(argv[1], "usdt")) {
		for (long i = 0; i < n; i++) {
			SDT_PROBE1(bench, tick, i);
			counter += i;
		}
	} else if (!strcmp(argv[1], "malloc")) {
		for (long i = 0; i < n; i++) {
			sink = malloc(64);
			free(sink);
		}
	} else {
		fprintf(stderr, "hits: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("hits %ld elapsed_ns %llu\n", n, now_ns() - t);
	return 0;
}
