// SPDX-License-Identifier: MIT
/* engine: the sampler's counts and stacks read back, passed on and deleted; its counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "engine.h"
#include "procs.h"
#include "sampler.h"
#include "sampler-private.h"

/* The sum of the @nr_cpus per-CPU slots of one value in @pcpu. */
static __u64 percpu_sum(const __u64 *pcpu, int nr_cpus)
{
	__u64 sum = 0;
	int cpu;

	for (cpu = 0; cpu < nr_cpus; cpu++)
		sum += pcpu[cpu];
	return sum;
}

/*
 * The maps of counts a program set has: "counts" (struct count_key), and in offwake mode
 * "wake_counts" (struct wake_key, the blocked thread's count_key first). Both are read,
 * taken and aged by the same code, by key size.
 */
#define MAX_COUNT_MAPS 2

_Static_assert(sizeof(struct count_key) == 48,
	       "count_key keeps its size in every mode: offwake's waker is in wake_key only");

static int count_maps(const struct prog_set *ps, struct bpf_map **maps, size_t *ksz)
{
	int n = 0;

	maps[n] = ps->counts;
	ksz[n++] = sizeof(struct count_key);
	if (ps->wake_counts) {
		maps[n] = ps->wake_counts;
		ksz[n++] = ps->wake_ksz;
	}
	return n;
}

/* Key @i of an array of keys of @ksz bytes, each a count_key first. */
static struct count_key *key_at(void *keys, size_t i, size_t ksz)
{
	return (struct count_key *)((char *)keys + i * ksz);
}

/*
 * Reads every (key, value) of the counts map @fd, with keys of @ksz bytes (<= sizeof(struct
 * wake_key)), into arrays grown as needed: in batches (one syscall per batch) where the
 * kernel supports it, else key by key. Entries added meanwhile may or may not be seen.
 * Returns 0 or -errno.
 */
static int read_counts(int fd, size_t ksz, void **keys, __u64 **vals, size_t *nr)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 batch_max = 4096, count;
	size_t kcap = 0, vcap = 0, n = 0;
	struct wake_key batch_key, next, last;
	char *k = NULL;
	bool have_last = false;
	__u64 *v = NULL;
	bool batch = true, done = false;
	int err = 0;

	while (!done) {
		if (array__grow((void **)&k, &kcap, n + batch_max, ksz) ||
		    array__grow((void **)&v, &vcap, n + batch_max, sizeof(*v))) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (batch) {
			count = batch_max;
			err = bpf_map_lookup_batch(fd, n ? &batch_key : NULL, &batch_key,
						   k + n * ksz, v + n, &count, &opts);
			if (!err || err == -ENOENT) {
				n += count;
				done = err == -ENOENT;
				err = 0;
				continue;
			}
			if (n || (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP))
				goto cleanup;
			batch = false; /* no batch operations: walk key by key */
			err = 0;
		}
		if (bpf_map_get_next_key(fd, have_last ? &last : NULL, &next)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		memcpy(&last, &next, ksz);
		have_last = true;
		memcpy(k + n * ksz, &next, ksz);
		if (!bpf_map_lookup_elem(fd, k + n * ksz, &v[n]))
			n++;
	}
cleanup:
	if (err) {
		pr_err("cannot read the BPF counts map: %s\n", strerror(-err));
		free(k);
		free(v);
		return err;
	}
	*keys = k;
	*vals = v;
	*nr = n;
	return 0;
}

/*
 * Reads back the stacks of @key (a key of @ksz bytes) and of its wakers and calls @cb;
 * unreadable stacks add to *lost. The parts of the user stacks read are left in @ps
 * (uparts, wakers[].parts).
 */
static int drain_one(struct prog_set *ps, const struct count_key *key, size_t ksz, __u64 value,
		     sampler_drain_fn cb, void *ctx, uint64_t *lost, struct stack *user,
		     struct stack *kernel)
{
	int stacks_fd = bpf_map__fd(ps->stacks), err;
	struct count_key k = *key;

	ps->uparts.nr = 0;
	err = waker_set(ps, key, ksz);
	if (err == -ENOENT ||
	    (key->user_stack && lookup_stack(stacks_fd, key->user_stack, user, &ps->uparts)) ||
	    (key->kernel_stack && lookup_kernel_stack(ps, stacks_fd, key->kernel_stack, kernel))) {
		*lost += value;
		return 0;
	}
	if (err)
		return err;
	if (key->user_stack && ps->uparts.deep)
		k.flags |= KEY_USER_DEEP;
	err = cb(ctx, ps->offcpu, &k, value, key->user_stack ? user : NULL,
		 key->kernel_stack ? kernel : NULL);
	ps->nr_wakers = 0; /* their parts stay for the caller */
	return err;
}

/*
 * Deletes the keys @keys[0..n) whose values were read (sampler__reap() @final): in one
 * call where the kernel can. Returns how many were deleted (0 without batch deletes).
 */
static size_t delete_read(int fd, void *keys, size_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = n;

	if (!n || n > UINT32_MAX)
		return 0;
	if (bpf_map_delete_batch(fd, keys, &count, &opts))
		return count <= n ? count : 0;
	return n;
}

/* Deletes the stacks @ids[0..n) from the stack map @fd; returns how many were deleted. */
static size_t delete_stacks(int fd, const __u64 *ids, size_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = n; /* n <= the map's entries */
	size_t i, nr_deleted = 0;

	if (!n || !bpf_map_delete_batch(fd, ids, &count, &opts))
		return n;
	/* one stack missing (unreadable, counted lost, or deleted by a reap) stopped the
	 * batch after @count, or no batch deletes (@count not written): the rest one by one */
	for (i = 0; i < n; i++)
		nr_deleted += !bpf_map_delete_elem(fd, &ids[i]);
	return MIN(n, (count < n ? count : 0) + nr_deleted);
}

/*
 * After a reap: deletes from the stack map @fd the user stacks @gone[0..nr_gone) of the
 * keys taken but those a key left in the map uses (@kept[0..nr_kept): reap__unused()),
 * so that the stacks of exited processes (each one's own under ASLR) do not fill the
 * map. Kernel stacks stay: shared by every process, and cached by id. A live process
 * whose sample stores one of the same stacks between the read and the delete finds it
 * there, and its key's stack is then gone when read back: counted as lost, never named
 * wrong (a stack is stored again when not found). Returns how many were deleted.
 */
static size_t forget_stacks(int fd, const __u64 *kept, size_t nr_kept, __u64 *gone, size_t nr_gone)
{
	return delete_stacks(fd, gone, reap__unused(kept, nr_kept, gone, nr_gone));
}

/* Does @select pick the process image of waker @w (NULL: none)? */
static bool waker_selected(sampler_select_fn select, void *ctx, const struct waker *w)
{
	struct count_key wkey = {};

	if (!w || (w->flags & WAKER_KTHREAD))
		return false;
	wkey.pid = w->pid;
	wkey.gen = w->gen;
	return select(ctx, &wkey);
}

/* Does @select pick @key (of @ksz bytes), or (offwake) one of its wakers' process images?
 * A key woken by a process that exited no longer changes either: its wakers are named
 * before they are released. */
static bool selected(sampler_select_fn select, void *ctx, const struct count_key *key, size_t ksz)
{
	unsigned int l;

	if (select(ctx, key))
		return true;
	for (l = 0; l < SCORCH_CHAIN_MAX; l++)
		if (waker_selected(select, ctx, key_waker(key, ksz, l)))
			return true;
	return false;
}

/*
 * sampler__reap() @final, over every counts map of a program set: the stacks of the keys
 * left (@kept) and the user stacks of those taken (@gone), for forget_stacks() once all
 * the maps were read (a blocked part in "wake_counts" and its runqueue part in "counts"
 * share their stacks). @failed: one could not be noted, no stack is deleted.
 */
struct reap_ids {
	__u64 *kept, *gone;
	size_t nr_kept, nr_gone, cap_kept, cap_gone;
	bool failed;
};

/* Appends @id (0: none) to @ids[0..*nr), grown as needed; false when out of memory. */
static bool ids_add(__u64 **ids, size_t *nr, size_t *cap, __u64 id)
{
	if (!id)
		return true;
	if (array__grow((void **)ids, cap, *nr + 1, sizeof(**ids)))
		return false;
	(*ids)[(*nr)++] = id;
	return true;
}

static void reap_ids__keep(struct reap_ids *r, __u64 id)
{
	if (!ids_add(&r->kept, &r->nr_kept, &r->cap_kept, id))
		r->failed = true;
}

static void reap_ids__forget(struct reap_ids *r, __u64 id)
{
	if (!ids_add(&r->gone, &r->nr_gone, &r->cap_gone, id))
		r->failed = true;
}

/* reap_ids__forget() of every part of @parts. */
static void forget_parts(struct reap_ids *r, const struct stack_parts *parts)
{
	unsigned int i;

	for (i = 0; i < parts->nr; i++)
		reap_ids__forget(r, parts->ids[i]);
}

/*
 * Passes counts of the map @map of @ps (keys of @ksz bytes) to @cb: every one as read
 * (@select NULL: the final drain), or those @select picks, each taken out of the map
 * atomically, so a count added after the read is taken too and none is lost or passed
 * twice; with @final (their counts no longer change) the values read are kept and the
 * keys deleted in one call, and the stacks of the keys left and the user stacks of
 * those taken are noted in @ids for forget_stacks().
 */
static int take_counts(struct prog_set *ps, struct bpf_map *map, size_t ksz,
		       sampler_select_fn select, bool final, sampler_drain_fn cb, void *ctx,
		       uint64_t *lost, struct stack *user, struct stack *kernel,
		       size_t *nr_taken, struct reap_ids *ids)
{
	int fd = bpf_map__fd(map);
	void *keys = NULL;
	struct count_key *key;
	const struct waker *w;
	__u64 *vals = NULL, value;
	size_t i, n = 0, nr_sel = 0, nr_deleted = 0;
	unsigned int p, l;
	int err;

	if (!ps->kcache)
		ps->kcache = calloc(KSTACK_CACHE_SLOTS, sizeof(*ps->kcache)); /* NULL: no cache */
	err = read_counts(fd, ksz, &keys, &vals, &n);
	if (!err && select && final) {
		/* the selected first, in place (their values with them) */
		for (i = 0; i < n; i++) {
			key = key_at(keys, i, ksz);
			if (!selected(select, ctx, key, ksz)) {
				reap_ids__keep(ids, key->user_stack);
				reap_ids__keep(ids, key->kernel_stack);
				/* the wakers' user stacks (kernel stacks stay anyway) */
				for (l = 0; (w = key_waker(key, ksz, l)); l++)
					reap_ids__keep(ids, w->user_stack);
				continue;
			}
			memmove(key_at(keys, nr_sel, ksz), key, ksz);
			vals[nr_sel++] = vals[i];
		}
		n = nr_sel;
		nr_deleted = delete_read(fd, keys, n);
	}
	for (i = 0; i < n && !err; i++) {
		key = key_at(keys, i, ksz);
		value = vals[i];
		if (select && i >= nr_deleted) {
			if ((!final && !selected(select, ctx, key, ksz)) ||
			    bpf_map_lookup_and_delete_elem(fd, key, &value))
				continue;
		}
		(*nr_taken)++;
		waker_unset(ps);
		err = drain_one(ps, key, ksz, value, cb, ctx, lost, user, kernel);
		if (select && final) {
			reap_ids__forget(ids, key->user_stack);
			/* the other parts of deep ones, their image's own (stack_chain()):
			 * when that image is the one taken */
			if (select(ctx, key))
				forget_parts(ids, &ps->uparts);
		}
		if (ps->aging) {
			used_add(ps, key->user_stack);
			used_add(ps, key->kernel_stack);
			for (p = 0; p < ps->uparts.nr; p++)
				used_add(ps, ps->uparts.ids[p]);
		}
		for (l = 0; (w = key_waker(key, ksz, l)); l++) {
			if (select && final) {
				/* deleted unless a key left uses it, as the key's are */
				reap_ids__forget(ids, w->user_stack);
				if (waker_selected(select, ctx, w))
					forget_parts(ids, &ps->wakers[l].parts);
			}
			if (ps->aging) {
				used_add(ps, w->user_stack);
				used_add(ps, w->kernel_stack);
				for (p = 0; p < ps->wakers[l].parts.nr; p++)
					used_add(ps, ps->wakers[l].parts.ids[p]);
			}
		}
	}
	free(keys);
	free(vals);
	return err;
}

/* take_counts() over every counts map of every program set, with the buffers it needs;
 * with @select and @final, the user stacks no key left uses are deleted after each set. */
static int take_all(struct sampler *s, sampler_select_fn select, bool final, sampler_drain_fn cb,
		    void *ctx, uint64_t *lost, uint64_t *lost_ns, size_t *nr_taken,
		    size_t *nr_forgot)
{
	struct stack *user = NULL, *kernel = NULL;
	struct reap_ids ids = {};
	struct bpf_map *maps[MAX_COUNT_MAPS];
	size_t ksz[MAX_COUNT_MAPS];
	int err = 0, i, m, nr_maps;

	*nr_taken = 0;
	*nr_forgot = 0;
	user = malloc(sizeof(*user));
	kernel = malloc(sizeof(*kernel));
	if (!user || !kernel) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < s->nr_sets && !err; i++) {
		struct prog_set *ps = &s->sets[i];

		ids.nr_kept = ids.nr_gone = 0;
		ids.failed = false;
		nr_maps = count_maps(ps, maps, ksz);
		for (m = 0; m < nr_maps && !err; m++)
			err = take_counts(ps, maps[m], ksz[m], select, final, cb, ctx,
					  ps->offcpu ? lost_ns : lost, user, kernel, nr_taken,
					  &ids);
		if (!err && select && final && !ids.failed)
			*nr_forgot += forget_stacks(bpf_map__fd(ps->stacks), ids.kept, ids.nr_kept,
						    ids.gone, ids.nr_gone);
	}
cleanup:
	free(ids.kept);
	free(ids.gone);
	free(user);
	free(kernel);
	return err;
}

int sampler__reap(struct sampler *s, sampler_select_fn select, bool final, sampler_drain_fn cb,
		  void *ctx, uint64_t *lost, uint64_t *lost_ns, size_t *nr_reaped,
		  size_t *nr_forgot)
{
	return take_all(s, select, final, cb, ctx, lost, lost_ns, nr_reaped, nr_forgot);
}

/* Notes the stacks of every key now in the counts map @fd (keys of @ksz bytes) as used. */
static void note_keys(struct prog_set *ps, int fd, size_t ksz)
{
	int stacks_fd = bpf_map__fd(ps->stacks);
	struct wake_key key, next;
	const struct waker *w;
	void *prev = NULL;
	unsigned int l;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		memcpy(&key, &next, ksz);
		prev = &key;
		used_add_parts(ps, stacks_fd, key.key.user_stack);
		used_add(ps, key.key.kernel_stack);
		for (l = 0; (w = key_waker(&key.key, ksz, l)); l++) {
			used_add_parts(ps, stacks_fd, w->user_stack);
			used_add(ps, w->kernel_stack);
		}
	}
	if (errno != ENOENT)
		ps->used_lost = true; /* not all read: delete nothing */
}

/*
 * sampler__age_stacks() for one program set: deletes the stacks used in the last interval
 * and not in this one, and keeps this one's for the next.
 */
static size_t age_set(struct prog_set *ps)
{
	struct bpf_map *maps[MAX_COUNT_MAPS];
	size_t i, nr_now, nr_old, nr_deleted = 0, cap, ksz[MAX_COUNT_MAPS];
	int m, nr_maps = count_maps(ps, maps, ksz);
	__u64 *swap;

	/* keys added since the counts were read (while they were symbolized): theirs stay */
	for (m = 0; m < nr_maps; m++)
		note_keys(ps, bpf_map__fd(maps[m]), ksz[m]);
	/* this interval's, each once: the next one's last interval */
	nr_now = reap__sort_unique(ps->used, ps->nr_used);
	if (!ps->used_lost) {
		nr_old = reap__unused(ps->used, nr_now, ps->used_prev, ps->nr_used_prev);
		nr_deleted = delete_stacks(bpf_map__fd(ps->stacks), ps->used_prev, nr_old);
		/* an id may come back with other contents (a collision's probe): not cached */
		for (i = 0; ps->kcache && i < nr_old; i++) {
			struct kstack_slot *slot =
				&ps->kcache[ps->used_prev[i] % KSTACK_CACHE_SLOTS];

			if (slot->id == ps->used_prev[i])
				slot->id = 0;
		}
	}
	swap = ps->used_prev;
	cap = ps->cap_prev;
	ps->used_prev = ps->used;
	ps->cap_prev = ps->cap_used;
	/* stacks this interval used but not all noted: none is deleted at the next */
	ps->nr_used_prev = ps->used_lost ? 0 : nr_now;
	ps->used = swap;
	ps->cap_used = cap;
	ps->nr_used = 0;
	ps->used_lost = false;
	return nr_deleted;
}

int sampler__age_stacks(struct sampler *s, size_t *nr_deleted)
{
	int i;

	*nr_deleted = 0;
	for (i = 0; i < s->nr_sets; i++) {
		if (!s->sets[i].aging)
			continue;
		if (s->sets[i].offcpu && s->off)
			note_open_intervals(s, &s->sets[i]);
		*nr_deleted += age_set(&s->sets[i]);
	}
	return 0;
}

int sampler__drain(struct sampler *s, sampler_drain_fn cb, void *ctx, uint64_t *lost,
		   uint64_t *lost_ns)
{
	size_t nr, nr_forgot;
	int err = take_all(s, NULL, false, cb, ctx, lost, lost_ns, &nr, &nr_forgot);

	if (!err && s->off)
		err = drain_open_intervals(s, cb, ctx);
	if (!err && s->ev && s->opts.event->latency)
		err = drain_open_calls(s, cb, ctx);
	return err;
}

/* Counter @k of every program set, each summed over the CPUs, added to *@val. */
static void stat_sum(struct sampler *s, __u32 k, __u64 *vals, int nr_cpus, uint64_t *val)
{
	int i;

	for (i = 0; i < s->nr_sets; i++) {
		if (!bpf_map_lookup_elem(bpf_map__fd(s->sets[i].stats), &k, vals))
			*val += percpu_sum(vals, nr_cpus);
	}
}

int sampler__stats(struct sampler *s, uint64_t *stats)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u64 *vals;
	__u32 k;

	if (nr_cpus < 0)
		return nr_cpus;
	memset(stats, 0, sizeof(*stats) * SCORCH_NR_STATS);
	vals = calloc(nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (k = 0; k < SCORCH_NR_STATS; k++)
		stat_sum(s, k, vals, nr_cpus, &stats[k]);
	free(vals);
	return 0;
}

int sampler__stat(struct sampler *s, enum scorch_stat k, uint64_t *val)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u64 *vals;

	*val = 0;
	if (nr_cpus < 0)
		return nr_cpus;
	vals = calloc(nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	stat_sum(s, k, vals, nr_cpus, val);
	free(vals);
	return 0;
}
