// SPDX-License-Identifier: MIT
/* common: the hash table every module indexes its entries with, and the hashes it takes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* the first table: a small one costs 256 bytes */
#define HASHMAP_MIN_SLOTS 16

uint64_t hash__bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	/* spread the low bits used for slot selection */
	return hash__u64(h);
}

uint64_t hash__u64(uint64_t x)
{
	/* murmur3's finalizer: each step (xor-shift, odd multiply) can be undone */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Slots for @nr values at most 3/4 full (0 when that overflows a size_t of bytes). */
static size_t slots_for(size_t nr)
{
	size_t n = HASHMAP_MIN_SLOTS;

	while (n / 4 * 3 < nr) {
		if (n > SIZE_MAX / 2 / sizeof(struct hashmap_slot))
			return 0;
		n *= 2;
	}
	return n;
}

/* Moves every value into @nr_slots new slots (a power of two that holds them). */
static int rehash(struct hashmap *hm, size_t nr_slots)
{
	struct hashmap_slot *slots = calloc(nr_slots, sizeof(*slots));
	size_t mask = nr_slots - 1, i, j;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < hm->nr_slots; i++) {
		if (!hm->slots[i].val)
			continue;
		for (j = hm->slots[i].hash & mask; slots[j].val; j = (j + 1) & mask)
			;
		slots[j] = hm->slots[i];
	}
	free(hm->slots);
	hm->slots = slots;
	hm->nr_slots = nr_slots;
	return 0;
}

int hashmap__reserve(struct hashmap *hm, size_t more)
{
	size_t n;

	if (more > SIZE_MAX - hm->nr)
		return -EOVERFLOW;
	n = slots_for(hm->nr + more);
	if (!n)
		return -EOVERFLOW;
	return n > hm->nr_slots ? rehash(hm, n) : 0;
}

uint64_t hashmap__find(const struct hashmap *hm, uint64_t hash, hashmap_eq_fn eq, const void *ctx)
{
	size_t probe = 0;
	uint64_t val;

	while ((val = hashmap__match(hm, hash, &probe)))
		if (!eq || eq(val, ctx))
			return val;
	return 0;
}

int hashmap__insert(struct hashmap *hm, uint64_t hash, uint64_t val)
{
	size_t mask, i;
	int err;

	if (!val)
		return -EINVAL;
	if (hm->nr >= hm->nr_slots / 4 * 3) {
		err = hashmap__reserve(hm, hm->nr_slots ? hm->nr_slots / 4 * 3 : 1);
		if (err)
			return err;
	}
	mask = hm->nr_slots - 1;
	for (i = hash & mask; hm->slots[i].val; i = (i + 1) & mask)
		;
	hm->slots[i] = (struct hashmap_slot){.hash = hash, .val = val};
	hm->nr++;
	return 0;
}

/*
 * Empties slot @i and moves back the values after it that probing would no longer
 * reach (backward-shift deletion: no tombstones, lookups stay as short as before).
 */
static void remove_at(struct hashmap *hm, size_t i)
{
	size_t mask = hm->nr_slots - 1, j, home;

	for (j = (i + 1) & mask; hm->slots[j].val; j = (j + 1) & mask) {
		home = hm->slots[j].hash & mask;
		/* slot j stays when its home lies cyclically in (i, j] */
		if (((j - home) & mask) < ((j - i) & mask))
			continue;
		hm->slots[i] = hm->slots[j];
		i = j;
	}
	hm->slots[i] = (struct hashmap_slot){0};
	hm->nr--;
}

uint64_t hashmap__remove(struct hashmap *hm, uint64_t hash, hashmap_eq_fn eq, const void *ctx)
{
	size_t probe = 0;
	uint64_t val;

	while ((val = hashmap__match(hm, hash, &probe))) {
		if (!eq || eq(val, ctx)) {
			remove_at(hm, (hash + probe - 1) & (hm->nr_slots - 1));
			return val;
		}
	}
	return 0;
}

void hashmap__clear(struct hashmap *hm)
{
	if (hm->slots)
		memset(hm->slots, 0, hm->nr_slots * sizeof(*hm->slots));
	hm->nr = 0;
}

void hashmap__free(struct hashmap *hm)
{
	if (!hm)
		return;
	free(hm->slots);
	*hm = (struct hashmap){0};
}

/*
 * Iteration starts after an empty slot (the table is never full) and goes once
 * around: a removal shifts back only values of the run it is in, which then lie at
 * or after the slot removed and before the next empty one, so none is seen twice or
 * skipped.
 */
void hashmap__iter_init(const struct hashmap *hm, struct hashmap_iter *it)
{
	size_t i = 0;

	*it = (struct hashmap_iter){0};
	if (!hm->nr)
		return;
	while (hm->slots[i].val)
		i++;
	it->pos = (i + 1) & (hm->nr_slots - 1);
	it->left = hm->nr_slots;
}

bool hashmap__iter_next(const struct hashmap *hm, struct hashmap_iter *it, uint64_t *val)
{
	size_t mask = hm->nr_slots - 1;

	for (; it->left; it->pos = (it->pos + 1) & mask, it->left--) {
		if (hm->slots[it->pos].val) {
			*val = hm->slots[it->pos].val;
			it->cur = it->pos;
			it->pos = (it->pos + 1) & mask;
			it->left--;
			return true;
		}
	}
	return false;
}

void hashmap__iter_remove(struct hashmap *hm, struct hashmap_iter *it)
{
	remove_at(hm, it->cur);
	/* the slot may now hold a value not seen yet */
	it->pos = it->cur;
	it->left++;
}
