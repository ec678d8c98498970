/* SPDX-License-Identifier: MIT */
/* engine: sampler.c, sampler-drain.c, sampler-interval.c: the BPF programs' lifecycle */
#ifndef SCORCH_ENGINE_SAMPLER_H
#define SCORCH_ENGINE_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

/*
 * A stack read back from the kernel (a user stack's parts joined: struct stack_trace) or
 * unwound in scorch, leaf first.
 */
struct stack {
	__u32 nr;
	__u64 ips[SCORCH_STACK_WORDS];
};

struct sampler;

#define SAMPLER_IRQ_TEXT 2

struct sampler_opts {
	size_t sz;
	bool oncpu;  /* sample on-CPU stacks (perf_event, cpu-clock) */
	bool offcpu; /* count off-CPU time by stack (raw tracepoint sched_switch) */
	/* count stacks at this event instead (record --event; resolved): neither of the above */
	const struct event_spec *event;
	long freq;	     /* oncpu: samples per second per CPU */
	bool user_only;	     /* no kernel stacks */
	bool kernel_only;    /* no user stacks */
	bool include_idle;   /* count the idle task */
	bool credit_missed;  /* a sample weighs the periods missed before it (wall mode) */
	bool filter_pid;     /* only PIDs added with sampler__add_pid() */
	bool filter_tid;     /* only TIDs added with sampler__add_tid() */
	bool follow_forks;   /* children of filtered PIDs join the filter */
	size_t nr_filter;    /* number of PIDs/TIDs that will be added */
	uint32_t max_stacks; /* entries of the stack and count maps */
	bool age_stacks;     /* stacks go once unused for an interval: sampler__age_stacks() */
	bool cut_intervals;  /* offcpu: sampler__cut_intervals() at --interval boundaries */
	/* --unwind kernel: user stacks walked in BPF with tables (ktables.c) of
	 * @kunwind_rows rows, for up to @kunwind_procs process images at once */
	bool unwind_kernel;
	/* --unwind dwarf (auto, on CPU): CPython processes walked in the kernel all the same,
	 * for their Python frames (ktables.c enters only them) */
	bool python_walk;
	uint32_t kunwind_rows;
	uint32_t kunwind_procs;
	/* offcpu only */
	uint64_t min_block_ns; /* shorter intervals are dropped */
	uint64_t max_block_ns; /* longer intervals are dropped */
	uint32_t state_mask;   /* 1: interruptible (S), 2: uninterruptible (D) */
	bool with_runqueue;    /* count time runnable but waiting for a CPU */
	bool user_threads_only;
	bool kernel_threads_only;
	bool offwake;	      /* blocked time by (blocked stacks, waker) pair: sched_waking */
	uint32_t chain_depth; /* offwake: wakers kept, up to SCORCH_CHAIN_MAX (0, 1: one) */
	/* chain_depth > 1: the kernel's interrupt entry text, [start, end) (0: unknown); a
	 * wakeup with an address in one on its kernel stack ends its chain */
	uint64_t irq_text[SAMPLER_IRQ_TEXT][2];
	uint32_t max_threads; /* threads off CPU at once that can be tracked */
	/* --unwind dwarf: user registers and stack copied to user space per sample */
	bool unwind_dwarf;
	uint32_t stack_size; /* bytes of stack copied from sp (multiple of 8) */
	uint32_t fp_depth;   /* user frames of a frame-pointer walk (perf_event_max_stack) */
	uint32_t user_depth; /* user frames of a walk with tables (--max-depth) */
	uint32_t ring_bytes; /* size of the sample ring buffer (power of 2, >= 4096) */
	/* the kernel's mmap records are read from this time on (sideband__since()) by a
	 * process in mount namespace @sideband_mntns: the images they cover announce
	 * themselves without waking user space (0: no side-band) */
	uint64_t sideband_since;
	uint32_t sideband_mntns;
};

/* Opens, configures and loads the BPF object. Returns 0 or -errno (logged, with hints). */
int sampler__new(const struct sampler_opts *opts, struct sampler **out);
void sampler__free(struct sampler *s);
int sampler__add_pid(struct sampler *s, pid_t pid);
/* sampler__add_pid() of a process followed from its next exec on (record -- cmd's child,
 * held before it: what it does until then is scorch's, not the command's). */
int sampler__add_pid_at_exec(struct sampler *s, pid_t pid);
int sampler__add_tid(struct sampler *s, pid_t tid);
/* Opens one cpu-clock perf event per online CPU (oncpu) and the sched_switch raw
 * tracepoint (offcpu), and attaches. Returns 0 or -errno. */
int sampler__attach(struct sampler *s);
/* Number of CPUs sampled (still known after sampler__detach()). */
int sampler__nr_cpus(const struct sampler *s);
/* Stops sampling (detaches everything); maps stay readable. */
void sampler__detach(struct sampler *s);
/*
 * The BPF programs stop by themselves at @ns (CLOCK_MONOTONIC): what they see from
 * then on is not counted, however late sampler__stop() comes. Call once, after attach.
 */
void sampler__end_at(struct sampler *s, uint64_t ns);
/*
 * Ends the recording at once: the BPF programs return on their next event (a store
 * to their mapped data: no system call, safe on any thread but one at a time), and
 * off-CPU intervals still open end now when drained, or at the sampler__end_at() time
 * if that is earlier. Returns that end (CLOCK_MONOTONIC ns); later calls return it too.
 */
uint64_t sampler__stop(struct sampler *s);
/*
 * The cost governor's lever: the cpu-clock events fire every @mult periods of -F's
 * (0 or 1: -F's own), and each sample counts @mult periods. Safe on any one thread
 * while attached. 0, -EOPNOTSUPP (no cpu-clock events), or the ioctl's -errno.
 */
int sampler__set_period_mult(struct sampler *s, uint32_t mult);
/* CPU time spent reading the rings so far (sampler__consume()'s thread's): with
 * --unwind dwarf, mostly unwinding samples. Safe on any thread. */
uint64_t sampler__consume_ns(const struct sampler *s);
/* Has the kernel measure every BPF program's run time (BPF_ENABLE_STATS) until the
 * sampler is freed. 0 or -errno. */
int sampler__enable_run_stats(struct sampler *s);
/* The run time (ns) of the sampler's programs so far, as the kernel counts it: the
 * cpu-clock program's in @clock_ns (its runs in @clock_runs), the others' in
 * @other_ns. 0 unless sampler__enable_run_stats() (or another process) enabled the
 * kernel's measure. */
void sampler__run_time(const struct sampler *s, uint64_t *clock_ns, uint64_t *clock_runs,
		       uint64_t *other_ns);

/*
 * Process notifications and (--unwind dwarf) sample records, both from ring buffers:
 * one fd to poll, and a consumer calling @cb per notification and @sample_cb per
 * sample record (NULL: records are dropped). A sample record given to @sample_cb
 * (type SCORCH_EVENT_SAMPLE or SCORCH_EVENT_OFFCPU_COPY) has been checked: @len >=
 * sizeof(*smp), smp->stack_len == len - sizeof(*smp), smp->kernel_nr <=
 * SCORCH_MAX_STACK_DEPTH; malformed ones are counted in sampler__bad_samples().
 * Off-CPU interval records (SCORCH_EVENT_INTERVAL, exactly a struct scorch_interval)
 * go to @cb: cast the event to it by its type. Records are valid during the call only.
 */
typedef void (*sampler_event_fn)(void *ctx, const struct scorch_event *e);
typedef void (*sampler_sample_fn)(void *ctx, const struct scorch_sample *smp, size_t len);
int sampler__event_fd(const struct sampler *s);
/*
 * Reads the rings until they are empty or, with @budget_ns > 0, until the record that
 * ends past @budget_ns from now: the kernel may fill a ring faster than its records are
 * unwound, and the caller must get back to its deadline and signals. Returns 0 (all
 * read), -EAGAIN (the budget ran out; the next call starts with the next ring, and what
 * the kernel cannot write meanwhile it counts as lost), or -errno.
 */
int sampler__consume(struct sampler *s, sampler_event_fn cb, sampler_sample_fn sample_cb, void *ctx,
		     uint64_t budget_ns);
/*
 * After sampler__detach(): empties the rings, passing notifications and interval ends
 * to the callbacks of the last sampler__consume() but counting sample records instead
 * of passing them (the recording has stopped; unwinding them could take seconds).
 * Returns how many sample records were dropped so.
 */
uint64_t sampler__discard(struct sampler *s);
uint64_t sampler__bad_samples(const struct sampler *s);

/*
 * Calls @cb for every counted (key, value): @offcpu false: a sample count; true:
 * nanoseconds off CPU. Off-CPU intervals still open are closed at the time of the
 * call (threads blocked when the recording ends). @user / @kernel point to the
 * stacks (leaf first) or are NULL when the key has none; valid during the call
 * only. Returns 0, a negative @cb return, or -errno. Values of stacks that could
 * not be read back are added to *lost (samples) or *lost_ns.
 */
typedef int (*sampler_drain_fn)(void *ctx, bool offcpu, const struct count_key *key, uint64_t value,
				const struct stack *user, const struct stack *kernel);
int sampler__drain(struct sampler *s, sampler_drain_fn cb, void *ctx, uint64_t *lost,
		   uint64_t *lost_ns);
/*
 * offwake: inside a sampler_drain_fn called for a key with KEY_WAKER (a blocked part,
 * counted in map "wake_counts"), its waker @level (0: the waker; chain mode: 1 its own
 * waker at its last wakeup, and so on) and that one's stacks (leaf first; NULL when
 * absent), borrowed until the callback returns. 0, or -ENOENT for any other key or past
 * the chain's end; -ESTALE at a level whose stacks are gone (their process exited and
 * was reaped meanwhile): the chain was cut there.
 */
int sampler__waker(struct sampler *s, unsigned int level, const struct waker **w,
		   const struct stack **user, const struct stack **kernel);

/*
 * During the recording: takes the counts whose key @select returns true for out
 * of the kernel maps (atomically per key, so nothing counted is lost or counted
 * twice) and passes each to @cb as sampler__drain() does. For processes that
 * exited: their stacks are symbolized and what is kept of them released early.
 * @final: the selected counts no longer change (their processes exited or exec'd):
 * the values read in batches are kept and the keys deleted in one call, instead of
 * one system call per key, and the user stacks only they used are deleted from the
 * stack map (a live process's key stored with one of them in the meantime is counted
 * lost when read back). *nr_reaped is set to the number of keys taken, *nr_forgot to
 * the stacks deleted. Returns 0, @cb's error, -errno.
 */
typedef bool (*sampler_select_fn)(void *ctx, const struct count_key *key);
int sampler__reap(struct sampler *s, sampler_select_fn select, bool final, sampler_drain_fn cb,
		  void *ctx, uint64_t *lost, uint64_t *lost_ns, size_t *nr_reaped,
		  size_t *nr_forgot);
/*
 * --interval, at the end of each after sampler__reap() took every count: deletes from
 * the stack maps the stacks that keys taken in the last interval used and none taken in
 * this one (with sampler_opts.age_stacks; else nothing), so that a long recording of
 * live processes does not fill them with stacks of the past (all kernel stacks, and
 * the user stacks of processes still running, which reaps keep). A stack stored again
 * gets its id back (content-addressed). A key added after this interval's counts were
 * read, in the moment before the delete, with a stack unused for a whole interval,
 * finds it gone when read back unless a later sample stored it again: counted as lost,
 * never named wrong. *nr_deleted: how many were deleted. Returns 0.
 */
int sampler__age_stacks(struct sampler *s, size_t *nr_deleted);

/*
 * --unwind dwarf, offcpu: is the interval of thread @tid that began at @ts (a copy's
 * value) still open? 0 and *@delta = its length so far, *@runq = the part of it since
 * its wakeup (0 if none was seen: struct scorch_interval), -ERANGE when that length
 * is outside --min-block/--max-block, -ENOENT when it is not open (it ended, or its
 * record was lost), -ENOMEM. For the copies left without an interval at the end.
 */
int sampler__open_interval(struct sampler *s, uint32_t tid, uint64_t ts, uint64_t *delta,
			   uint64_t *runq);
/*
 * --interval, offcpu: counts the part before @at_ns (CLOCK_MONOTONIC) of every interval
 * still open, in the kernel (a copied one's part comes as a struct scorch_interval with
 * INTERVAL_PARTIAL), and starts the rest at @at_ns: take the counts right after. Needs
 * sampler_opts.cut_intervals. 0, -ENOENT without it, -errno.
 */
int sampler__cut_intervals(struct sampler *s, uint64_t at_ns);
/*
 * The runqueue split, in user space only here: of an off-CPU wait @len ns long whose
 * last @runq ns came after its wakeup, the part blocked and the part on a runqueue
 * (counted under KEY_RUNQUEUE; 0 without @with_runqueue, the wait then counting its
 * blocked part alone). The BPF programs split the waits they count by the same rule:
 * switch_in() and cut_one() in bpf/offcpu.bpf.c.
 */
struct runq_split {
	uint64_t blocked, runq;
};
struct runq_split runq__split(uint64_t len, uint64_t runq, bool with_runqueue);
/* --unwind kernel: the fds of maps "kunwind_rows" and "kunwind_procs" (-1 without). */
void sampler__kunwind_fds(const struct sampler *s, int *rows_fd, int *procs_fd);

/*
 * --unwind dwarf: the stack of thread @tid (@key: its samples' thread_key) is needed up
 * to @top: later copies end there (struct stack_top). @top 0 forgets it (a walk needed
 * more). Returns 0 or -errno.
 */
int sampler__set_stack_top(struct sampler *s, uint32_t tid, uint64_t key, uint64_t top);
/*
 * Off CPU: an interval of thread @tid that began before the recording (found blocked in
 * /proc), given to the BPF program as if @st's thread had switched out at @st->ts (and
 * @st->first, the same time): its
 * switch-in, or the end, counts it. 0; -EEXIST when the thread switched out since (its
 * own slot stands); -ENOENT without the off-CPU program; -errno.
 * sampler__unseed_interval() takes it back while it is still the one seeded at @ts
 * (0, or -ENOENT: counted or replaced already).
 */
int sampler__seed_interval(struct sampler *s, uint32_t tid, const struct offcpu_start *st);
int sampler__unseed_interval(struct sampler *s, uint32_t tid, uint64_t ts);

/* Sums the per-CPU counters of every program into @stats[SCORCH_NR_STATS]. */
int sampler__stats(struct sampler *s, uint64_t *stats);
/* One of them (@k < SCORCH_NR_STATS), summed the same way: 0 or -ENOMEM. */
int sampler__stat(struct sampler *s, enum scorch_stat k, uint64_t *val);

#endif /* SCORCH_ENGINE_SAMPLER_H */
