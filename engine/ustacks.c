// SPDX-License-Identifier: MIT
/*
 * profiler: --unwind dwarf stacks counted in user space, as the kernel maps count
 * frame-pointer ones: a sample is unwound when it arrives (its files must be readable
 * then) but named only when its process is reaped or the recording ends, once per
 * distinct stack instead of once per sample.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "engine.h"
#include "sampler.h"
#include "ustacks.h"

struct ustack {
	uint64_t value;
	struct count_key key;
	bool offcpu;
	uint32_t user_nr, kernel_nr; /* user_nr UINT32_MAX: no user stack (NULL) */
	__u64 ips[];		     /* user, then kernel */
};

struct ustacks {
	struct hashmap index; /* values: struct ustack * */
};

struct ustacks *ustacks__new(void)
{
	struct ustacks *t = calloc(1, sizeof(*t));

	if (!t || hashmap__reserve(&t->index, 768)) {
		free(t);
		return NULL;
	}
	return t;
}

void ustacks__free(struct ustacks *t)
{
	struct hashmap_iter it;
	uint64_t val;

	if (!t)
		return;
	for (hashmap__iter_init(&t->index, &it); hashmap__iter_next(&t->index, &it, &val);)
		free((struct ustack *)(uintptr_t)val);
	hashmap__free(&t->index);
	free(t);
}

size_t ustacks__nr(const struct ustacks *t)
{
	return t->index.nr;
}

bool ustacks__full(const struct ustacks *t)
{
	return t->index.nr >= USTACKS_MAX_HELD;
}

static uint64_t stack_hash(const struct count_key *key, bool offcpu, uint32_t unr,
			   const __u64 *user, uint32_t knr, const __u64 *kernel)
{
	uint64_t h = hash__bytes(key, sizeof(*key), offcpu ? 0x9e37 : 0x79b9);

	h = hash__bytes(&unr, sizeof(unr), h);
	if (unr != UINT32_MAX)
		h = hash__bytes(user, unr * sizeof(*user), h);
	h = hash__bytes(&knr, sizeof(knr), h);
	return hash__bytes(kernel, knr * sizeof(*kernel), h);
}

int ustacks__add(struct ustacks *t, bool offcpu, const struct count_key *key, uint64_t value,
		 const struct stack *user, const struct stack *kernel)
{
	uint32_t unr = user ? user->nr : UINT32_MAX, knr = kernel ? kernel->nr : 0;
	size_t nips = (user ? unr : 0) + knr;
	const __u64 *uips = user ? user->ips : NULL, *kips = kernel ? kernel->ips : NULL;
	uint64_t h, val;
	struct ustack *e;
	size_t probe = 0;

	if ((user && unr > SCORCH_STACK_WORDS) || knr > SCORCH_MAX_STACK_DEPTH)
		return -EINVAL;
	h = stack_hash(key, offcpu, unr, uips, knr, kips);
	while ((val = hashmap__match(&t->index, h, &probe))) {
		e = (struct ustack *)(uintptr_t)val;
		if (e->offcpu != offcpu || e->user_nr != unr || e->kernel_nr != knr ||
		    memcmp(&e->key, key, sizeof(*key)))
			continue;
		if (user && unr && memcmp(e->ips, uips, unr * sizeof(*uips)))
			continue;
		if (knr && memcmp(e->ips + (user ? unr : 0), kips, knr * sizeof(*kips)))
			continue;
		e->value += value;
		return 0;
	}
	e = malloc(sizeof(*e) + nips * sizeof(e->ips[0]));
	if (!e || hashmap__insert(&t->index, h, (uintptr_t)e)) {
		free(e);
		return -ENOMEM;
	}
	e->value = value;
	e->key = *key;
	e->offcpu = offcpu;
	e->user_nr = unr;
	e->kernel_nr = knr;
	if (user && unr)
		memcpy(e->ips, uips, unr * sizeof(*uips));
	if (knr)
		memcpy(e->ips + (user ? unr : 0), kips, knr * sizeof(*kips));
	return 0;
}

int ustacks__take(struct ustacks *t, sampler_select_fn select, sampler_drain_fn cb, void *ctx,
		  struct stack *ubuf, struct stack *kbuf)
{
	struct hashmap_iter it;
	struct ustack *e;
	uint64_t val;
	int err = 0;

	for (hashmap__iter_init(&t->index, &it);
	     !err && hashmap__iter_next(&t->index, &it, &val);) {
		bool has_user;
		uint32_t unr;

		e = (struct ustack *)(uintptr_t)val;
		if (select && !select(ctx, &e->key))
			continue;
		hashmap__iter_remove(&t->index, &it);
		has_user = e->user_nr != UINT32_MAX;
		unr = has_user ? e->user_nr : 0;
		ubuf->nr = unr;
		memcpy(ubuf->ips, e->ips, unr * sizeof(e->ips[0]));
		kbuf->nr = e->kernel_nr;
		memcpy(kbuf->ips, e->ips + unr, e->kernel_nr * sizeof(e->ips[0]));
		err = cb(ctx, e->offcpu, &e->key, e->value, has_user ? ubuf : NULL,
			 e->kernel_nr ? kbuf : NULL);
		free(e);
	}
	return err;
}
