// SPDX-License-Identifier: MIT
/*
 * engine: stacks read back from the sampler's maps: a deep user stack's parts joined,
 * a waker's stacks, the stacks an interval used. Shared by the drain (sampler-drain.c)
 * and the intervals still open (sampler-interval.c); calls nothing of theirs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "sampler.h"
#include "sampler-private.h"

int stack_join(int fd, const struct stack_trace *last, struct stack *st, struct stack_parts *parts)
{
	size_t end = SCORCH_STACK_WORDS, nr, skip;
	const struct stack_trace *part = last;
	struct stack_trace prev;
	unsigned int n;
	__u64 id;

	if (parts) {
		parts->nr = 0;
		parts->deep = last->flags & STACK_DEEP;
	}
	/* from the root's part back to the leaf's, each put before the last */
	for (n = 0;; n++) {
		skip = part->flags & STACK_CHAINED ? 1 : 0;
		if (part->nr > SCORCH_MAX_STACK_DEPTH || part->nr < skip || part->nr - skip > end)
			return -EINVAL;
		nr = part->nr - skip;
		end -= nr;
		memcpy(st->ips + end, part->ips + skip, nr * sizeof(part->ips[0]));
		if (!skip)
			break;
		if (n + 1 >= STACK_MAX_PARTS)
			return -EINVAL;
		id = part->ips[0];
		if (parts)
			parts->ids[parts->nr++] = id;
		if (bpf_map_lookup_elem(fd, &id, &prev))
			return -errno;
		part = &prev;
	}
	st->nr = SCORCH_STACK_WORDS - end;
	memmove(st->ips, st->ips + end, st->nr * sizeof(st->ips[0]));
	return 0;
}

int lookup_stack(int fd, __u64 id, struct stack *st, struct stack_parts *parts)
{
	struct stack_trace last;

	if (bpf_map_lookup_elem(fd, &id, &last))
		return -errno;
	return stack_join(fd, &last, st, parts);
}

const struct waker *key_waker(const struct count_key *key, size_t ksz, unsigned int level)
{
	const struct wake_key *wk = (const struct wake_key *)key;
	const struct waker *w;

	if (level >= SCORCH_CHAIN_MAX || ksz < WAKE_KEY_SIZE(level + 1) ||
	    !(key->flags & KEY_WAKER))
		return NULL;
	w = level ? &wk->chain[level - 1] : &wk->waker;
	/* a chain ends at a zeroed waker: a stored one has a kernel stack or says why not */
	if (level && !w->kernel_stack && !(w->flags & KEY_KERNEL_MISSED))
		return NULL;
	return w;
}

/* lookup_stack() of a kernel stack, through @ps's cache when it has one. */
int lookup_kernel_stack(struct prog_set *ps, int fd, __u64 id, struct stack *st)
{
	struct kstack_slot *slot = ps->kcache ? &ps->kcache[id % KSTACK_CACHE_SLOTS] : NULL;
	int err;

	if (slot && slot->id == id) {
		st->nr = slot->st.nr;
		memcpy(st->ips, slot->st.ips, st->nr * sizeof(st->ips[0]));
		return 0;
	}
	err = lookup_stack(fd, id, st, NULL);
	if (!err && slot && st->nr <= SCORCH_MAX_STACK_DEPTH) {
		slot->id = id;
		slot->st.nr = st->nr;
		memcpy(slot->st.ips, st->ips, st->nr * sizeof(st->ips[0]));
	}
	return err;
}

/* Reads the stacks of waker @w into @r. 0, -ENOENT (one gone), -ENOMEM. */
static int waker_read(struct prog_set *ps, struct waker_read *r, const struct waker *w)
{
	int fd = bpf_map__fd(ps->stacks);

	r->w = NULL;
	r->have_user = r->have_kernel = false;
	r->parts.nr = 0;
	if (!r->user)
		r->user = malloc(sizeof(*r->user));
	if (!r->kernel)
		r->kernel = malloc(sizeof(*r->kernel));
	if (!r->user || !r->kernel)
		return -ENOMEM;
	if ((w->user_stack && lookup_stack(fd, w->user_stack, r->user, &r->parts)) ||
	    (w->kernel_stack && lookup_kernel_stack(ps, fd, w->kernel_stack, r->kernel)))
		return -ENOENT;
	r->have_user = w->user_stack != 0;
	r->have_kernel = w->kernel_stack != 0;
	r->w = w;
	return 0;
}

int waker_set(struct prog_set *ps, const struct count_key *key, size_t ksz)
{
	const struct waker *w;
	unsigned int i;
	int err;

	waker_unset(ps);
	for (i = 0; (w = key_waker(key, ksz, i)); i++) {
		err = waker_read(ps, &ps->wakers[i], w);
		if (err == -ENOENT && i) {
			/* a stack of a process that exited, taken out at its reap while a
			 * slot's chain still named it: the chain ends below it */
			ps->chain_cut = true;
			break;
		}
		if (err)
			return err;
		ps->nr_wakers = i + 1;
	}
	return 0;
}

void waker_unset(struct prog_set *ps)
{
	ps->nr_wakers = 0;
	ps->chain_cut = false;
	for (unsigned int i = 0; i < SCORCH_CHAIN_MAX; i++)
		ps->wakers[i].parts.nr = 0;
}

/* Notes that a key taken in this interval used stack @id (0: none). */
void used_add(struct prog_set *ps, __u64 id)
{
	if (!id || ps->used_lost)
		return;
	if (array__grow((void **)&ps->used, &ps->cap_used, ps->nr_used + 1, sizeof(*ps->used))) {
		ps->used_lost = true; /* this interval deletes nothing */
		return;
	}
	ps->used[ps->nr_used++] = id;
}

void used_add_parts(struct prog_set *ps, int stacks_fd, __u64 id)
{
	struct stack_trace part;
	unsigned int n;

	for (n = 0; id && n < STACK_MAX_PARTS; n++) {
		used_add(ps, id);
		if (bpf_map_lookup_elem(stacks_fd, &id, &part) || !(part.flags & STACK_CHAINED) ||
		    !part.nr)
			break;
		id = part.ips[0];
	}
}
