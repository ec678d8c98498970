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

/* The waker of a key of @ksz bytes, or NULL (a count_key, or a key with no waker). */
const struct waker *key_waker(const struct count_key *key, size_t ksz)
{
	if (ksz != sizeof(struct wake_key) || !(key->flags & KEY_WAKER))
		return NULL;
	return &((const struct wake_key *)key)->waker;
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

/*
 * offwake: reads the stacks of waker @w (NULL: none) for sampler__waker() and makes it
 * the one passed. 0, -ENOENT when a stack is gone (deleted by a reap or an aging),
 * -ENOMEM.
 */
int waker_set(struct prog_set *ps, const struct waker *w)
{
	int fd = bpf_map__fd(ps->stacks);

	ps->waker = NULL;
	ps->have_wuser = ps->have_wkernel = false;
	ps->wparts.nr = 0;
	if (!w)
		return 0;
	if (!ps->wuser)
		ps->wuser = malloc(sizeof(*ps->wuser));
	if (!ps->wkernel)
		ps->wkernel = malloc(sizeof(*ps->wkernel));
	if (!ps->wuser || !ps->wkernel)
		return -ENOMEM;
	if ((w->user_stack && lookup_stack(fd, w->user_stack, ps->wuser, &ps->wparts)) ||
	    (w->kernel_stack && lookup_kernel_stack(ps, fd, w->kernel_stack, ps->wkernel)))
		return -ENOENT;
	ps->have_wuser = w->user_stack != 0;
	ps->have_wkernel = w->kernel_stack != 0;
	ps->waker = w;
	return 0;
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
