// SPDX-License-Identifier: MIT
/*
 * tests/common: the hash table (common/hashmap.c) against a plain array: insert, find,
 * match, remove and iteration with removals at every size up to a few thousand, with
 * weak hashes that collide and wrap around the end of the slots; growth limits;
 * hash__u64() undone; strset, which is built on it.
 */
#include <errno.h>

#include "check.h"
#include "common.h"

/* The reference: keys 0..NR_KEYS-1, present or not; a key's value is key + 1. */
#define NR_KEYS 4096

struct model {
	struct hashmap hm;
	bool in[NR_KEYS];
	size_t nr;
	uint64_t (*hash)(uint32_t key);
};

static bool key_eq(uint64_t val, const void *ctx)
{
	return val == *(const uint32_t *)ctx + 1;
}

/* weak hashes: many keys per hash, and hashes near the top of any mask (runs wrap) */
static uint64_t hash_weak(uint32_t key)
{
	return ~(uint64_t)(key % 61);
}

static uint64_t hash_one(uint32_t key)
{
	(void)key;
	return 7;
}

static uint64_t hash_good(uint32_t key)
{
	return hash__bytes(&key, sizeof(key), 0);
}

/* hashmap__find(), checked against a loop over hashmap__match() */
static uint64_t find(struct model *m, uint32_t key)
{
	uint64_t val, found = 0, h = m->hash(key);
	size_t probe = 0, nr = 0;

	while ((val = hashmap__match(&m->hm, h, &probe))) {
		if (val == key + 1)
			found = val;
		nr += val == key + 1;
	}
	CHECK(nr <= 1);
	val = hashmap__find(&m->hm, h, key_eq, &key);
	CHECK(val == found);
	return val;
}

static void put(struct model *m, uint32_t key)
{
	if (m->in[key]) {
		CHECK(find(m, key) == key + 1);
		return;
	}
	CHECK(find(m, key) == 0);
	CHECK(hashmap__insert(&m->hm, m->hash(key), key + 1) == 0);
	m->in[key] = true;
	m->nr++;
}

static void del(struct model *m, uint32_t key)
{
	CHECK(hashmap__remove(&m->hm, m->hash(key), key_eq, &key) == (m->in[key] ? key + 1 : 0));
	if (m->in[key])
		m->nr--;
	m->in[key] = false;
}

/* Every key is found or not as the model says, and iteration sees each value once. */
static void verify(struct model *m, uint32_t nr_keys)
{
	static unsigned char seen[NR_KEYS];
	struct hashmap_iter it;
	uint64_t val;
	size_t n = 0;
	uint32_t k;

	CHECK(m->hm.nr == m->nr);
	CHECK(m->hm.nr_slots == 0 || m->hm.nr * 4 <= m->hm.nr_slots * 3);
	CHECK((m->hm.nr_slots & (m->hm.nr_slots - 1)) == 0);
	for (k = 0; k < nr_keys; k++)
		CHECK(find(m, k) == (m->in[k] ? k + 1 : 0));
	memset(seen, 0, sizeof(seen));
	for (hashmap__iter_init(&m->hm, &it); hashmap__iter_next(&m->hm, &it, &val);) {
		CHECK(val >= 1 && val <= NR_KEYS && m->in[val - 1] && !seen[val - 1]);
		if (val >= 1 && val <= NR_KEYS)
			seen[val - 1] = 1;
		n++;
	}
	CHECK(n == m->nr);
}

static uint64_t rnd_state = 0x2545f4914f6cdd1dULL;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

/* Random inserts and removals over @nr_keys keys, checked against the model throughout. */
static void random_ops(uint64_t (*hash)(uint32_t), uint32_t nr_keys, size_t nr_ops)
{
	struct model *m = calloc(1, sizeof(*m));
	size_t i;

	m->hash = hash;
	for (i = 0; i < nr_ops; i++) {
		uint32_t key = rnd(nr_keys);

		if (rnd(3))
			put(m, key);
		else
			del(m, key);
		if (i % 97 == 0)
			verify(m, nr_keys);
	}
	verify(m, nr_keys);
	hashmap__free(&m->hm);
	free(m);
}

/*
 * Fills 0..n-1 (growing through every size), removes every third key while iterating,
 * then the rest in another order: all through the collisions of @hash.
 */
static void fill_and_drain(uint64_t (*hash)(uint32_t), uint32_t n)
{
	struct model *m = calloc(1, sizeof(*m));
	struct hashmap_iter it;
	uint64_t val;
	size_t visits = 0, before;
	uint32_t k;

	m->hash = hash;
	for (k = 0; k < n; k++) {
		put(m, k);
		if (k < 64 || k % 61 == 0)
			verify(m, n);
	}
	verify(m, n);
	before = m->nr;
	for (hashmap__iter_init(&m->hm, &it); hashmap__iter_next(&m->hm, &it, &val);) {
		visits++;
		if ((val - 1) % 3 == 0) {
			hashmap__iter_remove(&m->hm, &it);
			m->in[val - 1] = false;
			m->nr--;
		}
	}
	CHECK(visits == before);
	verify(m, n);
	for (k = n; k-- > 0;)
		if (k % 2)
			del(m, k);
	verify(m, n);
	for (k = 0; k < n; k++)
		del(m, k);
	verify(m, n);
	CHECK(m->hm.nr == 0);
	/* empty but with slots: used again after a clear too */
	put(m, 5);
	hashmap__clear(&m->hm);
	m->in[5] = false;
	m->nr = 0;
	verify(m, n);
	put(m, 6);
	verify(m, n);
	hashmap__free(&m->hm);
	CHECK(m->hm.nr == 0 && m->hm.nr_slots == 0 && !m->hm.slots);
	free(m);
}

/* Keys of at most 64 bits under hash__u64() need no equality test. */
static void no_eq(void)
{
	struct hashmap hm = {0};
	uint64_t k;

	for (k = 0; k < 3000; k++)
		CHECK(hashmap__insert(&hm, hash__u64(k * 4096), k + 1) == 0);
	for (k = 0; k < 3000; k++) {
		CHECK(hashmap__find(&hm, hash__u64(k * 4096), NULL, NULL) == k + 1);
		CHECK(hashmap__find(&hm, hash__u64(k * 4096 + 1), NULL, NULL) == 0);
	}
	for (k = 0; k < 3000; k += 2)
		CHECK(hashmap__remove(&hm, hash__u64(k * 4096), NULL, NULL) == k + 1);
	for (k = 0; k < 3000; k++)
		CHECK(hashmap__find(&hm, hash__u64(k * 4096), NULL, NULL) == (k % 2 ? k + 1 : 0));
	hashmap__free(&hm);
}

/* The inverse of an odd number modulo 2^64 (Newton's iteration). */
static uint64_t inverse(uint64_t a)
{
	uint64_t x = a;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

/* hash__u64() undone step by step: it is a bijection. */
static void u64_bijection(void)
{
	uint64_t m1 = inverse(0xff51afd7ed558ccdULL), m2 = inverse(0xc4ceb9fe1a85ec53ULL), x, h;
	int i;

	CHECK(0xff51afd7ed558ccdULL * m1 == 1 && 0xc4ceb9fe1a85ec53ULL * m2 == 1);
	for (i = 0; i < 100000; i++) {
		x = i < 1000 ? (uint64_t)i : ((uint64_t)rnd(UINT32_MAX) << 32) ^ rnd(UINT32_MAX);
		h = hash__u64(x);
		/* x ^= x >> 33 is its own inverse */
		h ^= h >> 33;
		h *= m2;
		h ^= h >> 33;
		h *= m1;
		h ^= h >> 33;
		CHECK(h == x);
	}
}

static void limits(void)
{
	struct hashmap hm = {0};
	struct hashmap_slot one[16] = {0};

	CHECK(hashmap__insert(&hm, 1, 0) == -EINVAL);
	CHECK(hm.nr == 0 && !hm.slots);
	/* counts whose slots would not fit a size_t of bytes are refused, not wrapped */
	CHECK(hashmap__reserve(&hm, SIZE_MAX) == -EOVERFLOW);
	CHECK(hashmap__reserve(&hm, SIZE_MAX / 2) == -EOVERFLOW);
	CHECK(hashmap__reserve(&hm, SIZE_MAX / sizeof(struct hashmap_slot)) == -EOVERFLOW);
	CHECK(hashmap__reserve(&hm, SIZE_MAX / sizeof(struct hashmap_slot) / 2) == -EOVERFLOW);
	CHECK(hm.nr == 0 && !hm.slots && hm.nr_slots == 0);
	CHECK(hashmap__reserve(&hm, 100) == 0 && hm.nr_slots == 256);
	CHECK(hashmap__reserve(&hm, 192) == 0 && hm.nr_slots == 256);
	CHECK(hashmap__reserve(&hm, 193) == 0 && hm.nr_slots == 512);
	CHECK(hashmap__insert(&hm, 3, 4) == 0);
	CHECK(hashmap__reserve(&hm, SIZE_MAX - 1) == -EOVERFLOW);
	CHECK(hashmap__reserve(&hm, SIZE_MAX) == -EOVERFLOW);
	CHECK(hm.nr == 1 && hm.nr_slots == 512 && hashmap__find(&hm, 3, NULL, NULL) == 4);
	hashmap__free(&hm);

	/*
	 * A table as full as the largest one can be, faked over 16 real slots: doubling it
	 * would overflow, so inserting is refused before any slot is touched.
	 */
	hm = (struct hashmap){.slots = one,
			      .nr_slots = (SIZE_MAX / 2 + 1) / sizeof(struct hashmap_slot),
			      .nr = (SIZE_MAX / 2 + 1) / sizeof(struct hashmap_slot) / 4 * 3};
	CHECK(hashmap__insert(&hm, 1, 1) == -EOVERFLOW);
	CHECK(hm.slots == one && hm.nr_slots == (SIZE_MAX / 2 + 1) / sizeof(struct hashmap_slot));
	hashmap__free(NULL);
}

/* strset, built on the table: equal strings are one pointer, whatever they hold */
static void strset(void)
{
	struct strset *set = strset__new();
	static char big[100000];
	const char *a, *b, *c, *strs[3000];
	char buf[32];
	size_t i;

	CHECK(set && strset__count(set) == 0);
	if (!set)
		return;
	a = strset__intern_len(set, "ab\0cd", 5);
	b = strset__intern_len(set, "ab\0ce", 5);
	c = strset__intern_len(set, "ab", 2);
	CHECK(a && b && c && a != b && a != c && b != c);
	CHECK(a && !memcmp(a, "ab\0cd", 6) && c && !strcmp(c, "ab"));
	CHECK(strset__intern_len(set, "ab\0cdx", 5) == a && strset__intern(set, "ab") == c);
	CHECK(strset__intern(set, "") == strset__intern_len(set, "x", 0));
	memset(big, 'b', sizeof(big) - 1);
	a = strset__intern(set, big);
	CHECK(a && strlen(a) == sizeof(big) - 1 && strset__intern(set, big) == a);
	for (i = 0; i < ARRAY_SIZE(strs); i++) {
		snprintf(buf, sizeof(buf), "s%zu", i);
		strs[i] = strset__intern(set, buf);
	}
	for (i = 0; i < ARRAY_SIZE(strs); i++) {
		snprintf(buf, sizeof(buf), "s%zu", i);
		CHECK(strs[i] && strset__intern(set, buf) == strs[i] && !strcmp(strs[i], buf));
	}
	CHECK(strset__count(set) == 5 + ARRAY_SIZE(strs));
	strset__free(set);
	strset__free(NULL);
}

int main(void)
{
	uint64_t (*hashes[])(uint32_t) = {hash_good, hash_weak, hash_one};
	uint32_t n;
	size_t h;

	limits();
	strset();
	u64_bijection();
	no_eq();
	for (h = 0; h < ARRAY_SIZE(hashes); h++) {
		/* colliding keys make one run of them all: a lookup costs them all */
		uint32_t most = hashes[h] == hash_good	 ? NR_KEYS
				: hashes[h] == hash_weak ? 600
							 : 150;

		/* every size through the first growths, then a few larger ones */
		for (n = 1; n <= 200; n++)
			fill_and_drain(hashes[h], MIN(n, most));
		for (n = 256; n <= NR_KEYS; n *= 2)
			fill_and_drain(hashes[h], MIN(n - 1, most));
		random_ops(hashes[h], 50, 20000);
		random_ops(hashes[h], most, 60000);
	}
	printf("hashmap: all checks passed\n");
	return 0;
}
