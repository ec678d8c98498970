// SPDX-License-Identifier: MIT
/*
 * bench: the table --unwind dwarf counts its samples in (profiler/ustacks.c), alone: the
 * part of a sample's cost that is the lookup of its (key, user stack, kernel stack).
 * Built and run by bench/ustacks-bench.sh, which compares two source trees.
 *
 * usage: ustacks-table STACKS SAMPLES
 *   STACKS   distinct stacks, at most 2^24 (a recording holds at most USTACKS_MAX_HELD)
 *   SAMPLES  samples added, in rounds: a few stacks are hot, most are seen rarely;
 *            after each round the stacks of one process in 16 are taken out (its exit
 *            reaped), and come back in the next round
 * Prints "ustacks-table: stacks N samples S ns_per_sample X" (process CPU time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if __has_include("engine.h")
#include "engine.h"
#include "sampler.h"
#include "ustacks.h"
#else /* a tree from before engine/ (the bench compares with one) */
#include "profiler-private.h"
#endif

#define NR_PIDS 64
#define ROUNDS	8

struct bench_stack {
	struct count_key key;
	struct stack user, kernel;
};

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static int drop(void *ctx, bool offcpu, const struct count_key *key, uint64_t value,
		const struct stack *user, const struct stack *kernel)
{
	uint64_t *sum = ctx;

	(void)offcpu, (void)key, (void)user, (void)kernel;
	*sum += value;
	return 0;
}

static uint32_t exiting;

static bool is_exiting(void *ctx, const struct count_key *key)
{
	(void)ctx;
	return key->pid % 16 == exiting;
}

int main(int argc, char **argv)
{
	static struct stack ubuf, kbuf;
	struct bench_stack *st;
	struct ustacks *t;
	struct timespec t0, t1;
	size_t nr, samples, i, j, r;
	uint64_t sum = 0;
	double ns;

	if (argc != 3 || !(nr = strtoul(argv[1], NULL, 0)) || nr > (1u << 24) ||
	    !(samples = strtoul(argv[2], NULL, 0))) {
		fprintf(stderr, "usage: ustacks-table STACKS SAMPLES\n");
		return 2;
	}
	st = calloc(nr, sizeof(*st));
	t = ustacks__new();
	if (!st || !t)
		return 1;
	for (i = 0; i < nr; i++) {
		/* a program's stacks share their outer frames: main, a loop, a handler */
		st[i].key.pid = 1000 + (uint32_t)(rnd() % NR_PIDS);
		st[i].key.gen = st[i].key.pid * 7;
		snprintf(st[i].key.comm, sizeof(st[i].key.comm), "worker-%u", st[i].key.pid);
		st[i].user.nr = 8 + rnd() % 33;
		for (j = 0; j < st[i].user.nr; j++)
			st[i].user.ips[j] = 0x400000 + (j < 6 ? j * 64 : rnd() % 0x100000);
		st[i].kernel.nr = rnd() % 4 ? 0 : 4 + rnd() % 9;
		for (j = 0; j < st[i].kernel.nr; j++)
			st[i].kernel.ips[j] = 0xffffffff81000000ULL + rnd() % 0x1000000;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < samples / ROUNDS; i++) {
			/* the square of a uniform pick in [0, 1): low indexes are hot */
			uint64_t u = rnd() >> 40;
			struct bench_stack *s = &st[(u * u >> 24) * nr >> 24];

			if (ustacks__add(t, false, &s->key, 1, &s->user,
					 s->kernel.nr ? &s->kernel : NULL))
				return 1;
		}
		exiting = (uint32_t)r % 16;
		if (ustacks__take(t, is_exiting, drop, &sum, &ubuf, &kbuf))
			return 1;
	}
	if (ustacks__take(t, NULL, drop, &sum, &ubuf, &kbuf) || ustacks__nr(t))
		return 1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	if (sum != samples / ROUNDS * ROUNDS) {
		fprintf(stderr, "ustacks-table: %llu samples counted, not %zu\n",
			(unsigned long long)sum, samples / ROUNDS * ROUNDS);
		return 1;
	}
	ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
	     (double)sum;
	printf("ustacks-table: stacks %zu samples %llu ns_per_sample %.1f\n", nr,
	       (unsigned long long)sum, ns);
	ustacks__free(t);
	free(st);
	return 0;
}
