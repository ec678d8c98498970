// SPDX-License-Identifier: MIT
/* profiler: the process images (pid, gen) a recording has seen, and what became of them
 * (and when those that exited are reaped: reap_mark__exceeded()). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "engine.h"
#include "procs.h"

struct proctab {
	struct proc_entry *v; /* in order of arrival */
	size_t nr, cap;
	struct hashmap index; /* (pid, gen) -> index in v[] + 1 */
};

struct proctab *proctab__new(void)
{
	struct proctab *t = calloc(1, sizeof(*t));

	if (!t || hashmap__reserve(&t->index, 128)) {
		free(t);
		return NULL;
	}
	return t;
}

void proctab__free(struct proctab *t)
{
	if (!t)
		return;
	free(t->v);
	hashmap__free(&t->index);
	free(t);
}

struct proc_key {
	const struct proctab *t;
	pid_t pid;
	uint64_t gen;
};

static uint64_t proc_hash(pid_t pid, uint64_t gen)
{
	return hash__u64((uint64_t)(uint32_t)pid << 32 ^ gen);
}

static bool proc_eq(uint64_t val, const void *ctx)
{
	const struct proc_key *k = ctx;
	const struct proc_entry *e = &k->t->v[val - 1];

	return e->pid == k->pid && e->gen == k->gen;
}

struct proc_entry *proctab__find(const struct proctab *t, pid_t pid, uint64_t gen)
{
	uint64_t val;

	if (pid <= 0)
		return NULL;
	val = hashmap__find(&t->index, proc_hash(pid, gen), proc_eq,
			    &(struct proc_key){t, pid, gen});
	return val ? &t->v[val - 1] : NULL;
}

struct proc_entry *proctab__get(struct proctab *t, pid_t pid, uint64_t gen)
{
	struct proc_entry *e = proctab__find(t, pid, gen);

	if (e || pid <= 0)
		return e;
	if (array__grow((void **)&t->v, &t->cap, t->nr + 1, sizeof(*t->v)))
		return NULL;
	if (hashmap__insert(&t->index, proc_hash(pid, gen), t->nr + 1))
		return NULL;
	e = &t->v[t->nr++];
	*e = (struct proc_entry){.pid = pid, .gen = gen};
	return e;
}

size_t proctab__nr(const struct proctab *t)
{
	return t->nr;
}

struct proc_entry *proctab__next(const struct proctab *t, struct proc_entry *prev)
{
	size_t i = prev ? (size_t)(prev - t->v) + 1 : 0;

	return i < t->nr ? &t->v[i] : NULL;
}

static int id_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

size_t reap__sort_unique(__u64 *ids, size_t n)
{
	size_t i, k = 0;

	if (!n)
		return 0; /* @ids may be NULL then (qsort() must not see it) */
	qsort(ids, n, sizeof(*ids), id_cmp);
	for (i = 0; i < n; i++)
		if (!k || ids[k - 1] != ids[i])
			ids[k++] = ids[i];
	return k;
}

size_t reap__unused(const __u64 *kept, size_t nr_kept, __u64 *gone, size_t nr_gone)
{
	const __u64 *hit;
	size_t i, n = reap__sort_unique(gone, nr_gone);
	bool *used;

	used = n ? calloc(n, sizeof(*used)) : NULL;
	if (!used)
		return 0; /* none taken, or no memory: every stack stays */
	for (i = 0; i < nr_kept; i++) {
		hit = bsearch(&kept[i], gone, n, sizeof(*gone), id_cmp);
		if (hit)
			used[hit - gone] = true;
	}
	nr_gone = n;
	for (i = 0, n = 0; i < nr_gone; i++)
		if (!used[i])
			gone[n++] = gone[i];
	free(used);
	return n;
}

enum reap_why reap_mark__exceeded(const struct reap_mark *was, const struct reap_mark *now,
				  uint32_t map_entries)
{
	/* an interval's drain deletes keys: ustacks__nr() may be below the mark */
	uint64_t added = (now->keys > was->keys ? now->keys - was->keys : 0) +
			 (now->ukeys > was->ukeys ? now->ukeys - was->ukeys : 0);

	if (added >= map_entries / REAP_KEYS_DIV)
		return REAP_FORCED_KEYS;
	if (now->table_bytes > was->table_bytes + REAP_TABLE_BYTES)
		return REAP_FORCED_TABLES;
	return REAP_NOT_YET;
}

int reap__cpu_free(const char *loadavg, long nr_cpus)
{
	unsigned long running, threads;

	/* "0.52 0.58 0.59 3/150 4605": loads over 1, 5 and 15 min, runnable/all, last PID */
	if (sscanf(loadavg, "%*f %*f %*f %lu/%lu", &running, &threads) != 2 || !running ||
	    running > threads)
		return -EINVAL;
	return running - 1 < (unsigned long)MAX(nr_cpus, 1L);
}
