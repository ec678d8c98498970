/* SPDX-License-Identifier: MIT */
/* profiler: the sampler's state, shared by sampler.c (open, attach, rings),
 * sampler-drain.c (counts and stacks) and sampler-interval.c (intervals still open). */
#ifndef SCORCH_SAMPLER_PRIVATE_H
#define SCORCH_SAMPLER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "engine.h"
#include "sampler.h"

struct bpf_link;
struct bpf_map;
struct bpf_program;
struct ring_buffer;
struct oncpu_bpf;
struct offcpu_bpf;
struct event_bpf;

/* What both skeletons have in common (stacks.bpf.h), seen the same way. */
/* kernel stacks read back, by id: the same few recur in every process (stack ids name
 * their contents, and the stack map never drops a kernel stack, so an id's kernel stack
 * never changes: forget_stacks() deletes user stacks only) */
#define KSTACK_CACHE_SLOTS 256
#define SAMPLER_MAX_RINGS  4 /* per set: process notifications, sample records */

/* The parts of a stack read back: at most one per SCORCH_MAX_STACK_DEPTH - 2 words. */
#define STACK_MAX_PARTS (SCORCH_STACK_WORDS / (SCORCH_MAX_STACK_DEPTH - 2) + 2)

struct stack_parts {
	__u64 ids[STACK_MAX_PARTS]; /* the parts before the last (whose id is the stack's) */
	unsigned int nr;
	bool deep; /* STACK_DEEP: the walk stopped at its depth limit */
};

struct kstack_slot {
	__u64 id; /* 0: empty */
	struct stack_trace st;
};

struct prog_set {
	struct bpf_map *stacks, *counts, *pids, *tids, *procs, *events, *stats, *samples, *bufs,
		*tops;
	struct kstack_slot *kcache; /* KSTACK_CACHE_SLOTS, allocated at the first reap */
	/* sampler_opts.age_stacks: the stack ids of the keys taken in this interval and in
	 * the last one (sampler__age_stacks()); @used_lost: one could not be kept */
	__u64 *used, *used_prev;
	size_t nr_used, cap_used, nr_used_prev, cap_prev;
	bool used_lost;
	struct bpf_program *fork, *exit, *exec;
	struct bpf_link *fork_link, *exit_link, *exec_link;
	bool offcpu;
	bool aging; /* sampler_opts.age_stacks */
	/* offwake: map "wake_counts" (NULL in the other modes) and its keys' size, and the
	 * wakers of the key being passed to a sampler_drain_fn (sampler__waker()) with
	 * their stacks, the waker first */
	struct bpf_map *wake_counts;
	size_t wake_ksz;
	struct waker_read {
		const struct waker *w;
		struct stack *user, *kernel; /* allocated at first use */
		bool have_user, have_kernel;
		struct stack_parts parts; /* of the user stack */
	} wakers[SCORCH_CHAIN_MAX];
	unsigned int nr_wakers;
	bool chain_cut; /* the chain ends below a waker whose stack is gone */
	/* the parts of the key's user stack drain_one() read last */
	struct stack_parts uparts;
};

struct sampler {
	struct oncpu_bpf *on;
	struct offcpu_bpf *off;
	struct event_bpf *ev; /* record --event: instead of both */
	/* --event: the -p/-t targets a user probe is placed in (none: every process that
	 * maps the file, as for a command and its children) */
	pid_t *probe_ids;
	int nr_probe_ids;
	size_t cap_probe_ids;
	struct prog_set sets[2];
	int nr_sets;
	/* one consumer per ring, taken in turn so that none starves another when the
	 * budget of sampler__consume() runs out; @epfd polls them all */
	struct ring_buffer *rbs[SAMPLER_MAX_RINGS];
	int nr_rbs, next_rb, epfd;
	uint64_t deadline_ns; /* sampler__consume(): stop after the record past it (0: never) */
	bool discard;	      /* sampler__discard(): count sample records, pass none */
	uint64_t discarded;
	uint64_t stop_ns; /* sampler__stop(), on the stop thread: CLOCK_MONOTONIC ns; 0: sampling */
	uint64_t end_at_ns;	 /* sampler__end_at(): the programs' own deadline; 0: none */
	struct bpf_link **links; /* perf events and sched_switch */
	int *pfds;
	int nr_links;
	int nr_attached;	   /* CPUs sampled, kept after detach for the summary */
	int clock_first, nr_clock; /* the cpu-clock events among links[] and pfds[] */
	int stats_fd;		   /* sampler__enable_run_stats()'s; 0: none */
	uint64_t consume_ns;	   /* thread CPU time in sampler__consume(), atomic */
	long freq;
	struct sampler_opts opts;
	sampler_event_fn event_cb;
	sampler_sample_fn sample_cb;
	void *event_ctx;
	uint64_t bad_samples;
};

/* sampler-stacks.c: stacks read back (both the drain and the open intervals use them) */
/*
 * Reads stack @id of the stack map @fd into @st, its parts joined; @parts (or NULL) gets
 * their ids and STACK_DEEP. 0, -ENOENT when a part is gone, -EINVAL when malformed.
 */
int lookup_stack(int fd, __u64 id, struct stack *st, struct stack_parts *parts);
/* lookup_stack() of a kernel stack, through @ps's cache when it has one. */
int lookup_kernel_stack(struct prog_set *ps, int fd, __u64 id, struct stack *st);
/* sampler_opts.age_stacks: notes stack @id (0: none) as used in this interval */
void used_add(struct prog_set *ps, __u64 id);
/* sampler_opts.age_stacks: notes stack @id (0: none) as used in this interval, with
 * the parts before its last */
void used_add_parts(struct prog_set *ps, int stacks_fd, __u64 id);
/* lookup_stack() of a stack whose last part @last is in hand (an open interval's). */
int stack_join(int fd, const struct stack_trace *last, struct stack *st, struct stack_parts *parts);

/*
 * offwake: waker @level (0: the waker, 1: its own waker...) of a key of @ksz bytes, or
 * NULL (a count_key, a key with no waker, or past its chain's end). waker_set() reads
 * the stacks of @key's wakers for sampler__waker() and makes them the ones passed: 0,
 * -ENOENT (the waker's stack gone; a stack of one further up ends the chain there),
 * -ENOMEM. waker_unset() passes none.
 */
const struct waker *key_waker(const struct count_key *key, size_t ksz, unsigned int level);
int waker_set(struct prog_set *ps, const struct count_key *key, size_t ksz);
void waker_unset(struct prog_set *ps);

/* sampler-interval.c, for sampler-drain.c: the stacks the threads off CPU now count at
 * their switch-in, stored before it (a deep user stack's earlier parts, the waker's),
 * noted as used in this interval */
void note_open_intervals(struct sampler *s, struct prog_set *ps);
/* ... and the off-CPU intervals and --latency calls still
 * open, passed to @cb as they stand at the stop. 0, a negative @cb return, or -ENOMEM. */
int drain_open_intervals(struct sampler *s, sampler_drain_fn cb, void *ctx);
int drain_open_calls(struct sampler *s, sampler_drain_fn cb, void *ctx);

#endif /* SCORCH_SAMPLER_PRIVATE_H */
