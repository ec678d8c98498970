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

/* each string is stored after its length, 8-byte aligned */
struct strset_str {
	size_t len;
	char str[];
};

struct strset {
	struct arena_chunk *chunks;
	struct hashmap index; /* values: struct strset_str * */
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
	hashmap__free(&set->index);
	free(set);
}

size_t strset__count(const struct strset *set)
{
	return set ? set->index.nr : 0;
}

static void *arena_alloc(struct strset *set, size_t sz)
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

struct strset_key {
	const char *str;
	size_t len;
};

static bool str_eq(uint64_t val, const void *ctx)
{
	const struct strset_str *s = (const struct strset_str *)(uintptr_t)val;
	const struct strset_key *k = ctx;

	return s->len == k->len && !memcmp(s->str, k->str, k->len);
}

const char *strset__intern_len(struct strset *set, const char *str, size_t len)
{
	struct strset_key key = {str, len};
	uint64_t h = hash__bytes(str, len, 0), val;
	struct strset_str *s;
	size_t sz;

	val = hashmap__find(&set->index, h, str_eq, &key);
	if (val)
		return ((struct strset_str *)(uintptr_t)val)->str;
	if (len > SIZE_MAX - sizeof(*s) - 8) {
		errno = ENOMEM;
		return NULL;
	}
	sz = (sizeof(*s) + len + 1 + 7) & ~(size_t)7;
	s = arena_alloc(set, sz);
	if (!s || hashmap__insert(&set->index, h, (uintptr_t)s)) {
		/* an unused string at the end of the arena: taken by the next one */
		if (s)
			set->chunks->used -= sz;
		errno = ENOMEM;
		return NULL;
	}
	s->len = len;
	memcpy(s->str, str, len);
	s->str[len] = '\0';
	return s->str;
}

const char *strset__intern(struct strset *set, const char *str)
{
	return strset__intern_len(set, str, strlen(str));
}
