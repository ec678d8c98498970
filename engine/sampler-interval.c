// SPDX-License-Identifier: MIT
/* profiler: off-CPU intervals and --latency calls still open: --interval cuts, seeds,
 * their ends at the stop. */
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "engine.h"
#include "sampler.h"
#include "timing.h"
#include "sampler-private.h"
#include "offcpu.skel.h"
#include "event.skel.h"

/* Now, or when sampling stopped (bpf_ktime_get_ns() is CLOCK_MONOTONIC). */
static uint64_t end_ns(const struct sampler *s)
{
	uint64_t stop = __atomic_load_n(&s->stop_ns, __ATOMIC_ACQUIRE);

	return stop ? stop : timing__now_ns();
}

/*
 * The parts of the interval @st still open at @now_ns: its length and, when it was woken
 * (struct offcpu_start), the part of it since the wakeup.
 */
static void open_parts(const struct offcpu_start *st, uint64_t now_ns, uint64_t *delta,
		       uint64_t *runq)
{
	*delta = now_ns - st->ts;
	*runq = st->wake >= st->ts && st->wake < now_ns ? now_ns - st->wake : 0;
}

struct runq_split runq__split(uint64_t len, uint64_t runq, bool with_runqueue)
{
	struct runq_split sp;

	sp.runq = MIN(runq, len);
	sp.blocked = len - sp.runq;
	if (!with_runqueue)
		sp.runq = 0; /* the blocked part alone is counted */
	return sp;
}

/* The whole interval of @st up to @now_ns, from its switch-out (--interval cuts aside):
 * what --min-block and --max-block judge. */
static uint64_t open_whole(const struct offcpu_start *st, uint64_t now_ns)
{
	return now_ns - (st->first && st->first <= st->ts ? st->first : st->ts);
}

int sampler__cut_intervals(struct sampler *s, uint64_t at_ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u64 args[1] = { at_ns };
	int err;

	if (!s->off || !bpf_program__autoload(s->off->progs.offcpu_cut))
		return -ENOENT;
	opts.ctx_in = args;
	opts.ctx_size_in = sizeof(args);
	err = bpf_prog_test_run_opts(bpf_program__fd(s->off->progs.offcpu_cut), &opts);
	return err ? -errno : 0;
}

/* The program set of the off-CPU program, or NULL. */
static struct prog_set *off_set(struct sampler *s)
{
	int i;

	for (i = 0; i < s->nr_sets; i++)
		if (s->sets[i].offcpu)
			return &s->sets[i];
	return NULL;
}

/* An open interval's stacks, read back (NULL: none), and its key. */
struct open_stacks {
	struct count_key key;
	const struct stack *user, *kernel;
};

/*
 * offwake: the blocked part @value of the open interval @st at @now_ns to @cb, under its
 * waker as the BPF program's switch-in would (wake_count_add()): the sched_waking since
 * its last switch-in, else KEY_NO_WAKER (not woken yet, or its waker's stacks gone).
 */
static int open_waker(struct sampler *s, const struct offcpu_start *st,
		      const struct open_stacks *os, uint64_t now_ns, uint64_t value,
		      sampler_drain_fn cb, void *ctx)
{
	struct prog_set *ps = off_set(s);
	struct wake_key wk = {.key = os->key};
	bool woken = st->waking && st->waking > st->last_in && st->waking <= now_ns;
	int err;

	if (!ps)
		return -ENOENT;
	if (woken && (st->waker.kernel_stack || (st->waker.flags & KEY_KERNEL_MISSED))) {
		wk.key.flags |= KEY_WAKER;
		wk.waker = st->waker;
		if (ps->wake_ksz > WAKE_KEY_SIZE(1))
			memcpy(wk.chain, st->chain, sizeof(wk.chain));
	} else {
		wk.key.flags |= KEY_NO_WAKER;
	}
	err = waker_set(ps, &wk.key, ps->wake_ksz);
	if (err == -ENOENT) {
		/* its stacks are gone */
		wk.key.flags = (wk.key.flags & ~KEY_WAKER) | KEY_NO_WAKER;
		waker_unset(ps);
		err = 0;
	}
	if (err)
		return err;
	err = cb(ctx, true, &wk.key, value, os->user, os->kernel);
	waker_unset(ps);
	return err;
}

/*
 * The stacks of open interval @st into @user and @kernel, in @os: the user stack's parts
 * before the one in the slot are in the stack map @fd. 0, or -ENOENT when one is gone.
 */
static int open_stacks(int fd, const struct offcpu_start *st, struct stack *user,
		       struct stack *kernel, struct open_stacks *os)
{
	struct stack_parts parts = {};

	os->key = st->key;
	os->user = st->user.nr ? user : NULL;
	os->kernel = st->kernel.nr ? kernel : NULL;
	if ((os->user && stack_join(fd, &st->user, user, &parts)) ||
	    (os->kernel && stack_join(fd, &st->kernel, kernel, NULL)))
		return -ENOENT;
	if (parts.deep)
		os->key.flags |= KEY_USER_DEEP;
	return 0;
}

/* Threads still off CPU: their interval ends now, or at the stop. */
int drain_open_intervals(struct sampler *s, sampler_drain_fn cb, void *ctx)
{
	int fd = bpf_map__fd(s->off->maps.start), sfd = bpf_map__fd(s->off->maps.stacks);
	struct stack *user = malloc(sizeof(*user)), *kernel = malloc(sizeof(*kernel));
	struct offcpu_start *st = malloc(sizeof(*st));
	__u32 tid, next, *prev = NULL;
	uint64_t now_ns, delta, runq, whole;
	struct runq_split sp;
	struct open_stacks os;
	int err = 0;

	if (!st || !user || !kernel) {
		err = -ENOMEM;
		goto cleanup;
	}
	now_ns = end_ns(s);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		tid = next;
		prev = &tid;
		/* copied slots: their stacks are in user space (sampler__open_interval) */
		if (bpf_map_lookup_elem(fd, &tid, st) || !st->ts || st->ts > now_ns ||
		    (st->key.flags & KEY_OFFCPU_COPY))
			continue;
		open_parts(st, now_ns, &delta, &runq);
		whole = open_whole(st, now_ns);
		if (whole < s->opts.min_block_ns || whole > s->opts.max_block_ns ||
		    open_stacks(sfd, st, user, kernel, &os))
			continue;
		sp = runq__split(delta, runq, s->opts.with_runqueue);
		if (sp.blocked && s->opts.offwake && !(os.key.flags & KEY_RUNQUEUE))
			err = open_waker(s, st, &os, now_ns, sp.blocked, cb, ctx);
		else if (sp.blocked)
			err = cb(ctx, true, &os.key, sp.blocked, os.user, os.kernel);
		/* woken, not switched in yet */
		os.key.flags |= KEY_RUNQUEUE;
		if (!err && sp.runq)
			err = cb(ctx, true, &os.key, sp.runq, os.user, os.kernel);
		if (err)
			break;
	}
cleanup:
	free(st);
	free(user);
	free(kernel);
	return err;
}

void note_open_intervals(struct sampler *s, struct prog_set *ps)
{
	int fd = bpf_map__fd(s->off->maps.start), stacks_fd = bpf_map__fd(ps->stacks);
	struct offcpu_start *st = malloc(sizeof(*st));
	__u32 tid, next, *prev = NULL;

	if (!st) {
		ps->used_lost = true;
		return;
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		tid = next;
		prev = &tid;
		if (bpf_map_lookup_elem(fd, &tid, st) || !st->ts)
			continue;
		if ((st->user.flags & STACK_CHAINED) && st->user.nr)
			used_add_parts(ps, stacks_fd, st->user.ips[0]);
		used_add_parts(ps, stacks_fd, st->waker.user_stack);
		used_add_parts(ps, stacks_fd, st->waker.kernel_stack);
	}
	free(st);
}

/* --latency: calls still open at the end count until then, under their entry's stacks. */
int drain_open_calls(struct sampler *s, sampler_drain_fn cb, void *ctx)
{
	int fd = bpf_map__fd(s->ev->maps.inside), sfd = bpf_map__fd(s->ev->maps.stacks);
	struct stack *user = NULL, *kernel = NULL;
	struct stack_parts parts;
	struct latency_slot slot;
	__u32 tid, next, *prev = NULL;
	uint64_t now_ns = end_ns(s);
	int err = 0;

	user = malloc(sizeof(*user));
	kernel = malloc(sizeof(*kernel));
	if (!user || !kernel) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		tid = next;
		prev = &tid;
		/* copies (--unwind dwarf): their stacks are in user space (sampler__open_interval) */
		if (bpf_map_lookup_elem(fd, &tid, &slot) || !slot.ts || slot.ts > now_ns ||
		    (slot.key.flags & KEY_OFFCPU_COPY))
			continue;
		if ((slot.key.user_stack &&
		     lookup_stack(sfd, slot.key.user_stack, user, &parts)) ||
		    (slot.key.kernel_stack &&
		     lookup_stack(sfd, slot.key.kernel_stack, kernel, NULL)))
			continue;
		if (slot.key.user_stack && parts.deep)
			slot.key.flags |= KEY_USER_DEEP;
		err = cb(ctx, false, &slot.key, now_ns - slot.ts,
			 slot.key.user_stack ? user : NULL, slot.key.kernel_stack ? kernel : NULL);
	}
cleanup:
	free(user);
	free(kernel);
	return err;
}

int sampler__waker(struct sampler *s, unsigned int level, const struct waker **w,
		   const struct stack **user, const struct stack **kernel)
{
	struct prog_set *ps = off_set(s);
	const struct waker_read *r;

	*w = NULL;
	*user = *kernel = NULL;
	if (!ps || level > ps->nr_wakers || (level == ps->nr_wakers && !ps->chain_cut))
		return -ENOENT;
	if (level == ps->nr_wakers)
		return -ESTALE;
	r = &ps->wakers[level];
	*w = r->w;
	*user = r->have_user ? r->user : NULL;
	*kernel = r->have_kernel ? r->kernel : NULL;
	return 0;
}

int sampler__set_stack_top(struct sampler *s, uint32_t tid, uint64_t key, uint64_t top)
{
	struct stack_top v = {.key = key, .top = top};
	int i, err = 0;

	for (i = 0; i < s->nr_sets; i++) {
		int fd = bpf_map__fd(s->sets[i].tops);

		if (top && bpf_map_update_elem(fd, &tid, &v, BPF_ANY))
			err = -errno;
		else if (!top && bpf_map_delete_elem(fd, &tid) && errno != ENOENT)
			err = -errno;
	}
	return err;
}

int sampler__seed_interval(struct sampler *s, uint32_t tid, const struct offcpu_start *st)
{
	if (!s->off)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(s->off->maps.start), &tid, st, BPF_NOEXIST))
		return errno == EEXIST ? -EEXIST : -errno;
	return 0;
}

int sampler__unseed_interval(struct sampler *s, uint32_t tid, uint64_t ts)
{
	struct offcpu_start *st;
	int fd, err = -ENOENT;

	if (!s->off)
		return -ENOENT;
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	fd = bpf_map__fd(s->off->maps.start);
	/* only the slot seeded: a switch-out since then owns it */
	if (!bpf_map_lookup_elem(fd, &tid, st) && st->ts && st->first == ts &&
	    !bpf_map_delete_elem(fd, &tid))
		err = 0;
	free(st);
	return err;
}

int sampler__open_interval(struct sampler *s, uint32_t tid, uint64_t ts, uint64_t *delta,
			   uint64_t *runq)
{
	struct offcpu_start *st;
	struct latency_slot slot;
	struct runq_split sp;
	uint64_t now_ns;
	int err = 0;

	if (s->ev) {
		/* --latency --unwind dwarf: a call still open */
		now_ns = end_ns(s);
		if (bpf_map_lookup_elem(bpf_map__fd(s->ev->maps.inside), &tid, &slot) ||
		    slot.ts != ts || !(slot.key.flags & KEY_OFFCPU_COPY) || ts > now_ns)
			return -ENOENT;
		*delta = now_ns - ts;
		*runq = 0;
		return 0;
	}
	if (!s->off)
		return -ENOENT;
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	now_ns = end_ns(s);
	/* the copy is the switch-out's (@first); --interval cuts moved @ts since */
	if (bpf_map_lookup_elem(bpf_map__fd(s->off->maps.start), &tid, st) || !st->ts ||
	    st->first != ts || !(st->key.flags & KEY_OFFCPU_COPY) || st->ts > now_ns) {
		err = -ENOENT;
		goto cleanup;
	}
	open_parts(st, now_ns, delta, runq);
	if (open_whole(st, now_ns) < s->opts.min_block_ns ||
	    open_whole(st, now_ns) > s->opts.max_block_ns) {
		err = -ERANGE;
		goto cleanup;
	}
	sp = runq__split(*delta, *runq, s->opts.with_runqueue);
	*delta = sp.blocked + sp.runq;
	*runq = sp.runq;
cleanup:
	free(st);
	return err;
}
