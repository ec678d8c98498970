// SPDX-License-Identifier: MIT
/*
 * tests/common: libFuzzer target for the hash table against a plain array. The first byte
 * says how many hashes the 256 keys share (1..256, so runs of collisions are common);
 * then each pair of bytes is an operation and a key: add, remove, find, or a pass over
 * the table removing the keys of one residue. After every operation the table and the
 * array must agree on the count; at the end, on every key and on what iteration sees.
 */
#include <string.h>

#include "../fuzz/fuzz.h"

struct ref {
	bool in[256];
	size_t nr;
	unsigned nr_hashes;
};

static uint64_t key_hash(const struct ref *r, unsigned key)
{
	/* near the top of any mask: runs wrap around the end of the slots */
	return ~(uint64_t)(key % r->nr_hashes);
}

static bool key_eq(uint64_t val, const void *ctx)
{
	return val == *(const unsigned *)ctx + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hashmap hm = {0};
	struct hashmap_iter it;
	struct ref r = {0};
	unsigned seen[256] = {0}, key;
	uint64_t val;
	size_t i, n, before;

	fuzz__init_log();
	if (!size)
		return 0;
	r.nr_hashes = (unsigned)data[0] + 1;
	for (i = 1; i + 1 < size; i += 2) {
		key = data[i + 1];
		switch (data[i] & 3) {
		case 0:
			if (hashmap__find(&hm, key_hash(&r, key), key_eq, &key) !=
			    (r.in[key] ? key + 1 : 0))
				abort();
			if (!r.in[key]) {
				if (hashmap__insert(&hm, key_hash(&r, key), key + 1))
					abort();
				r.in[key] = true;
				r.nr++;
			}
			break;
		case 1:
			if (hashmap__remove(&hm, key_hash(&r, key), key_eq, &key) !=
			    (r.in[key] ? key + 1 : 0))
				abort();
			r.nr -= r.in[key];
			r.in[key] = false;
			break;
		case 2:
			if (hashmap__find(&hm, key_hash(&r, key), key_eq, &key) !=
			    (r.in[key] ? key + 1 : 0))
				abort();
			break;
		default: /* remove the keys k with k % 4 == key % 4 while iterating */
			before = r.nr;
			n = 0;
			for (hashmap__iter_init(&hm, &it); hashmap__iter_next(&hm, &it, &val);
			     n++) {
				if (!val || val > 256 || !r.in[val - 1])
					abort();
				if ((val - 1) % 4 == key % 4) {
					hashmap__iter_remove(&hm, &it);
					r.in[val - 1] = false;
					r.nr--;
				}
			}
			if (n != before) /* each value visited once */
				abort();
			break;
		}
		if (hm.nr != r.nr || (hm.nr_slots && hm.nr * 4 > hm.nr_slots * 3))
			abort();
	}
	for (key = 0; key < 256; key++)
		if (hashmap__find(&hm, key_hash(&r, key), key_eq, &key) !=
		    (r.in[key] ? key + 1 : 0))
			abort();
	n = 0;
	for (hashmap__iter_init(&hm, &it); hashmap__iter_next(&hm, &it, &val); n++)
		if (!val || val > 256 || !r.in[val - 1] || seen[val - 1]++)
			abort();
	if (n != r.nr)
		abort();
	hashmap__free(&hm);
	return 0;
}
