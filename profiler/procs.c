// SPDX-License-Identifier: MIT
/* profiler: the process images (pid, gen) a recording has seen, and what became of them
 * (and when those that exited are reaped: reap_mark__exceeded()). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "profiler-private.h"

struct proctab {
	struct proc_entry *slots; /* open addressing, linear probing; pid 0 = empty */
	size_t cap;		  /* a power of two */
	size_t nr;
};

struct proctab *proctab__new(void)
{
	struct proctab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 256;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void proctab__free(struct proctab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static size_t slot_of(const struct proctab *t, pid_t pid, uint64_t gen)
{
	uint64_t h = ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ULL) ^ (gen * 0xc2b2ae3d27d4eb4fULL);

	return (h ^ (h >> 31)) & (t->cap - 1);
}

static struct proc_entry *probe(const struct proctab *t, pid_t pid, uint64_t gen)
{
	size_t i = slot_of(t, pid, gen);

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct proc_entry *e = &t->slots[i];

		if (!e->pid || (e->pid == pid && e->gen == gen))
			return e;
	}
}

struct proc_entry *proctab__find(const struct proctab *t, pid_t pid, uint64_t gen)
{
	struct proc_entry *e;

	if (pid <= 0)
		return NULL;
	e = probe(t, pid, gen);
	return e->pid ? e : NULL;
}

static int grow(struct proctab *t)
{
	struct proctab bigger = { .cap = t->cap * 2 };
	size_t i;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (t->slots[i].pid)
			*probe(&bigger, t->slots[i].pid, t->slots[i].gen) = t->slots[i];
	}
	free(t->slots);
	t->slots = bigger.slots;
	t->cap = bigger.cap;
	return 0;
}

struct proc_entry *proctab__get(struct proctab *t, pid_t pid, uint64_t gen)
{
	struct proc_entry *e;

	if (pid <= 0)
		return NULL;
	e = probe(t, pid, gen);
	if (e->pid)
		return e;
	if ((t->nr + 1) * 2 > t->cap) {
		if (grow(t))
			return NULL;
		e = probe(t, pid, gen);
	}
	e->pid = pid;
	e->gen = gen;
	e->flags = 0;
	t->nr++;
	return e;
}

size_t proctab__nr(const struct proctab *t)
{
	return t->nr;
}

struct proc_entry *proctab__next(const struct proctab *t, struct proc_entry *prev)
{
	size_t i = prev ? (size_t)(prev - t->slots) + 1 : 0;

	for (; i < t->cap; i++) {
		if (t->slots[i].pid)
			return &t->slots[i];
	}
	return NULL;
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
