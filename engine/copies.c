// SPDX-License-Identifier: MIT
/* profiler: off-CPU stacks unwound at switch-out, waiting for their interval's length. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "engine.h"
#include "copies.h"

struct copytab {
	struct hashmap index; /* hash__u64(tid) -> struct pending_copy * */
};

struct copytab *copytab__new(void)
{
	struct copytab *t = calloc(1, sizeof(*t));

	if (!t || hashmap__reserve(&t->index, 192)) {
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
	hashmap__free(&t->index);
	free(t);
}

int copytab__put(struct copytab *t, uint32_t tid, uint64_t ts, const struct count_key *key,
		 const __u64 *user, uint32_t user_nr, const __u64 *kernel, uint32_t kernel_nr,
		 bool *replaced)
{
	struct pending_copy *old, *c;

	old = (struct pending_copy *)(uintptr_t)hashmap__remove(&t->index, hash__u64(tid), NULL,
								NULL);
	*replaced = old != NULL;
	free(old);
	if (user_nr > SCORCH_STACK_WORDS || kernel_nr > SCORCH_MAX_STACK_DEPTH)
		return -EINVAL;
	c = malloc(sizeof(*c) + (user_nr + kernel_nr) * sizeof(c->ips[0]));
	if (!c || hashmap__insert(&t->index, hash__u64(tid), (uintptr_t)c)) {
		free(c);
		return -ENOMEM;
	}
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
	return 0;
}

struct pending_copy *copytab__find(struct copytab *t, uint32_t tid, uint64_t ts)
{
	struct pending_copy *c;

	c = (struct pending_copy *)(uintptr_t)hashmap__find(&t->index, hash__u64(tid), NULL, NULL);
	return c && c->ts == ts ? c : NULL;
}

struct pending_copy *copytab__take(struct copytab *t, uint32_t tid, uint64_t ts)
{
	struct pending_copy *c = copytab__find(t, tid, ts);

	if (c)
		hashmap__remove(&t->index, hash__u64(tid), NULL, NULL);
	return c;
}

struct pending_copy *copytab__pop(struct copytab *t)
{
	struct hashmap_iter it;
	uint64_t val;

	hashmap__iter_init(&t->index, &it);
	if (!hashmap__iter_next(&t->index, &it, &val))
		return NULL;
	hashmap__iter_remove(&t->index, &it);
	return (struct pending_copy *)(uintptr_t)val;
}

size_t copytab__nr(const struct copytab *t)
{
	return t->index.nr;
}
