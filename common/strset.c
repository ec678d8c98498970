// SPDX-License-Identifier: MIT
/* common: string interning in an arena, indexed by the common hash table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define ARENA_CHUNK (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
};

/*
 * The strings are packed in the arena as they came, without a header: the readers of
 * interned names (the flame graph sorts and draws them) touch fewer cache lines so.
 * Their lengths are in the entries the index points to.
 */
struct strset_ent {
	const char *str;
	size_t len;
};

struct strset {
	struct arena_chunk *chunks;
	struct strset_ent *v;
	size_t nr, cap;
	struct hashmap index; /* text -> index in v[] + 1 */
};

struct strset *strset__new(void)
{
	struct strset *set = calloc(1, sizeof(*set));

	if (!set || hashmap__reserve(&set->index, 768)) {
		free(set);
		errno = ENOMEM;
		return NULL;
	}
	return set;
}

void strset__free(struct strset *set)
{
	struct arena_chunk *c, *next;

	if (!set)
		return;
	for (c = set->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(set->v);
	hashmap__free(&set->index);
	free(set);
}

size_t strset__count(const struct strset *set)
{
	return set ? set->nr : 0;
}

static char *arena_alloc(struct strset *set, size_t sz)
{
	struct arena_chunk *c = set->chunks;

	if (!c || c->cap - c->used < sz) {
		size_t cap = sz > ARENA_CHUNK ? sz : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = set->chunks;
		set->chunks = c;
	}
	c->used += sz;
	return c->data + c->used - sz;
}

const char *strset__intern_len(struct strset *set, const char *str, size_t len)
{
	uint64_t h = hash__bytes(str, len, 0), val;
	const struct strset_ent *e;
	size_t probe = 0;
	char *copy;

	while ((val = hashmap__match(&set->index, h, &probe))) {
		e = &set->v[val - 1];
		if (e->len == len && !memcmp(e->str, str, len))
			return e->str;
	}
	if (array__grow((void **)&set->v, &set->cap, set->nr + 1, sizeof(*set->v)))
		goto nomem;
	copy = len < SIZE_MAX ? arena_alloc(set, len + 1) : NULL;
	if (!copy)
		goto nomem;
	if (hashmap__insert(&set->index, h, set->nr + 1)) {
		set->chunks->used -= len + 1; /* the last allocation: taken back */
		goto nomem;
	}
	memcpy(copy, str, len);
	copy[len] = '\0';
	set->v[set->nr++] = (struct strset_ent){.str = copy, .len = len};
	return copy;
nomem:
	errno = ENOMEM;
	return NULL;
}

const char *strset__intern(struct strset *set, const char *str)
{
	return strset__intern_len(set, str, strlen(str));
}
