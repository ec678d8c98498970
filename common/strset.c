// SPDX-License-Identifier: MIT
/* common: string interning in an arena with an open-addressing index. */
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

struct strset_slot {
	uint64_t hash;
	const char *str; /* NULL: empty */
	size_t len;
};

struct strset {
	struct arena_chunk *chunks;
	struct strset_slot *slots;
	size_t nr_slots; /* power of two */
	size_t count;
};

struct strset *strset__new(void)
{
	struct strset *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->nr_slots = 1024;
	set->slots = calloc(set->nr_slots, sizeof(*set->slots));
	if (!set->slots) {
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
	free(set->slots);
	free(set);
}

size_t strset__count(const struct strset *set)
{
	return set ? set->count : 0;
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

static int strset_grow(struct strset *set)
{
	size_t nr = set->nr_slots * 2, i;
	struct strset_slot *slots = calloc(nr, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < set->nr_slots; i++) {
		struct strset_slot *s = &set->slots[i];
		size_t j;

		if (!s->str)
			continue;
		for (j = s->hash & (nr - 1); slots[j].str; j = (j + 1) & (nr - 1))
			;
		slots[j] = *s;
	}
	free(set->slots);
	set->slots = slots;
	set->nr_slots = nr;
	return 0;
}

const char *strset__intern_len(struct strset *set, const char *str, size_t len)
{
	uint64_t h = hash__bytes(str, len, 0);
	size_t i;
	char *copy;

	if ((set->count + 1) * 4 > set->nr_slots * 3 && strset_grow(set)) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = h & (set->nr_slots - 1); set->slots[i].str; i = (i + 1) & (set->nr_slots - 1)) {
		struct strset_slot *s = &set->slots[i];

		if (s->hash == h && s->len == len && !memcmp(s->str, str, len))
			return s->str;
	}
	copy = arena_alloc(set, len + 1);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, str, len);
	copy[len] = '\0';
	set->slots[i] = (struct strset_slot){ .hash = h, .str = copy, .len = len };
	set->count++;
	return copy;
}

const char *strset__intern(struct strset *set, const char *str)
{
	return strset__intern_len(set, str, strlen(str));
}
