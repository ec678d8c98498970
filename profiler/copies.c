// SPDX-License-Identifier: MIT
/* profiler: off-CPU stacks unwound at switch-out, waiting for their interval's length. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "profiler-private.h"

struct copytab {
	struct pending_copy **buckets; /* chained by tid; a power of two */
	size_t cap;
	size_t nr;
};

struct copytab *copytab__new(void)
{
	struct copytab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 256;
	t->buckets = calloc(t->cap, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return NULL;
	}
	return t;
}

void copytab__free(struct copytab *t)
{
	struct pending_copy *c;

	if (!t)
		return;
	while ((c = copytab__pop(t)))
		free(c);
	free(t->buckets);
	free(t);
}

static size_t bucket_of(size_t cap, uint32_t tid)
{
	return ((uint64_t)tid * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1);
}

static int grow(struct copytab *t)
{
	size_t cap = t->cap * 2, i;
	struct pending_copy **b = calloc(cap, sizeof(*b)), *c, *next;

	if (!b)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		for (c = t->buckets[i]; c; c = next) {
			next = c->next;
			c->next = b[bucket_of(cap, c->tid)];
			b[bucket_of(cap, c->tid)] = c;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->cap = cap;
	return 0;
}

/* Unlinks and returns the entry of @tid, or NULL. */
static struct pending_copy *unlink_tid(struct copytab *t, uint32_t tid)
{
	struct pending_copy **pp = &t->buckets[bucket_of(t->cap, tid)], *c;

	for (; (c = *pp); pp = &c->next) {
		if (c->tid == tid) {
			*pp = c->next;
			c->next = NULL;
			t->nr--;
			return c;
		}
	}
	return NULL;
}

int copytab__put(struct copytab *t, uint32_t tid, uint64_t ts, const struct count_key *key,
		 const __u64 *user, uint32_t user_nr, const __u64 *kernel, uint32_t kernel_nr,
		 bool *replaced)
{
	struct pending_copy *old = unlink_tid(t, tid), *c;
	size_t i;

	*replaced = old != NULL;
	free(old);
	if (user_nr > SCORCH_MAX_STACK_DEPTH || kernel_nr > SCORCH_MAX_STACK_DEPTH)
		return -EINVAL;
	if (t->nr >= t->cap && grow(t))
		return -ENOMEM;
	c = malloc(sizeof(*c) + (user_nr + kernel_nr) * sizeof(c->ips[0]));
	if (!c)
		return -ENOMEM;
	c->tid = tid;
	c->ts = ts;
	c->key = *key;
	c->user_nr = user_nr;
	c->kernel_nr = kernel_nr;
	/* a stack may be absent (NULL, 0): memcpy must not see NULL even for 0 bytes */
	if (user_nr)
		memcpy(c->ips, user, user_nr * sizeof(c->ips[0]));
	if (kernel_nr)
		memcpy(c->ips + user_nr, kernel, kernel_nr * sizeof(c->ips[0]));
	i = bucket_of(t->cap, tid);
	c->next = t->buckets[i];
	t->buckets[i] = c;
	t->nr++;
	return 0;
}

struct pending_copy *copytab__take(struct copytab *t, uint32_t tid, uint64_t ts)
{
	struct pending_copy *c;

	for (c = t->buckets[bucket_of(t->cap, tid)]; c; c = c->next)
		if (c->tid == tid)
			break;
	if (!c || c->ts != ts)
		return NULL;
	return unlink_tid(t, tid);
}

struct pending_copy *copytab__pop(struct copytab *t)
{
	size_t i;

	if (!t->nr)
		return NULL;
	for (i = 0; i < t->cap; i++)
		if (t->buckets[i])
			return unlink_tid(t, t->buckets[i]->tid);
	return NULL;
}

size_t copytab__nr(const struct copytab *t)
{
	return t->nr;
}
