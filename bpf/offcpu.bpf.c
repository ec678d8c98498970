// SPDX-License-Identifier: GPL-2.0
/* Off-CPU time: a sched_switch program that adds blocked nanoseconds to counts by stack. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"
#include "stacks.bpf.h"
#include "kunwind.bpf.h"

#define TASK_INTERRUPTIBLE   0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD	     0x80

const volatile __u64 min_block_ns = 0;
const volatile __u64 max_block_ns = ~0ULL;
const volatile __u32 state_mask = TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE;
const volatile bool with_runqueue = true;
const volatile bool user_threads_only = false;
const volatile bool kernel_threads_only = false;
/* wall mode: map "last_tick" is oncpu's; every switch is marked in it */
const volatile bool mark_switches = false;
/* --unwind dwarf: scorch itself; its switches are not copied (each copy wakes it) */
const volatile __u32 self_pid = 0;
/* sched_switch passes prev_state as its 4th argument (kernel 5.18 on; user space reads
 * the tracepoint's arity in the kernel's BTF) */
const volatile bool has_prev_state = false;
/* offwake mode: blocked parts are counted in "wake_counts" under (blocked stacks, waker) */
const volatile bool offwake = false;
/* offwake: the wakers kept per blocked part, the waker first (> 1: chain mode; user space
 * sized the keys of "wake_counts" to match: WAKE_KEY_SIZE(chain_depth)) */
const volatile __u32 chain_depth = 1;

/* chain mode: the kernel's interrupt entry text, [start, end) (0: unknown), from user
 * space (the preempt count, per CPU, is not readable where kallsyms has no data symbols) */
const volatile __u64 irq_text[2][2] = {};
/* kernel frames searched for one in irq_text: interrupt entries lie within the first
 * dozen or so above try_to_wake_up */
#define IRQ_SCAN_FRAMES 48

/*
 * One slot per matching thread, by TID (sized by user space): ts != 0 while the
 * thread is off CPU. Slots are reused across intervals rather than deleted and
 * re-created (each creation copies a 2 KiB value) and are deleted when the thread
 * dies (its last switch-out has TASK_DEAD).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} start SEC(".maps");

/* A zeroed slot to create "start" entries from (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} start_init SEC(".maps");

/*
 * offwake: the blocked parts by struct wake_key (sized by user space; one entry in the
 * other modes, which count in "counts" alone and keep its 48-byte key)
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct wake_key)); /* set by user space: WAKE_KEY_SIZE() */
	__uint(value_size, sizeof(__u64));
} wake_counts SEC(".maps");

/* offwake: the key of "wake_counts" being built (too large for the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wake_key);
} wake_scratch SEC(".maps");

/* offwake: the waker's stacks, walked at sched_waking (too large for the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_trace);
} waker_scratch SEC(".maps");

static __always_inline __u32 task_state(struct task_struct *t)
{
	struct task_struct___old {
		long state;
	} *o = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ(o, state);
}

/*
 * --unwind dwarf: the stacks of @st's thread (current) go to ring buffer "samples"
 * now, as a copy of its user registers and stack (the kernel stack inline); the slot
 * keeps only the time and key, and its switch-in sends the interval's length. A copy
 * the ring cannot take loses the interval (counted; the slot is closed).
 */
static __always_inline void copy_out(void *ctx, struct offcpu_start *st, __u32 tid)
{
	struct sample_buf *b = sample_buf_get();

	if (!b) {
		st->ts = 0;
		return;
	}
	b->hdr.pid = st->key.pid;
	b->hdr.tid = tid;
	b->hdr.gen = st->key.gen;
	b->hdr.value = st->ts;
	b->hdr.flags = st->key.flags;
	__builtin_memcpy(b->hdr.comm, st->key.comm, sizeof(b->hdr.comm));
	if (!user_only)
		sample_kernel_stack(ctx, b);
	announce(bpf_get_current_task_btf(), st->key.pid, st->key.gen);
	if (!sample_send(b, SCORCH_EVENT_OFFCPU_COPY)) {
		st->ts = 0;
		return;
	}
	stat_inc(STAT_OFF_COPIES);
	st->key.flags |= KEY_OFFCPU_COPY;
}

/*
 * The end of an interval whose stacks were copied: its length and the part of it on a
 * runqueue after the wakeup, or that it is dropped.
 */
static __always_inline void interval_send(struct offcpu_start *st, __u32 tid, __u64 delta,
					  __u64 runq, __u32 flags)
{
	struct scorch_interval *iv = bpf_ringbuf_reserve(&samples, sizeof(*iv), 0);

	if (!iv) {
		stat_inc(STAT_LOST_INTERVAL);
		return;
	}
	iv->type = SCORCH_EVENT_INTERVAL;
	iv->pid = st->key.pid;
	iv->gen = st->key.gen;
	iv->tid = tid;
	iv->flags = flags;
	iv->ts = st->first;
	iv->value = delta;
	iv->runq = runq;
	bpf_ringbuf_submit(iv, samples_wakeup());
	if (!flags)
		stat_inc(STAT_OFF_COUNTED);
}

/*
 * The state @prev switches out in, as __schedule() read it before it dequeued the task
 * (sched_switch's prev_state): its low byte, as perf does (TASK_FREEZABLE and the like
 * sit above it). Not prev->__state now: a wakeup racing the switch-out has already set
 * that to TASK_WAKING (0x200), which is neither a sleep nor runnable (measured: 51 of
 * 161,262 blocking switch-outs of a pipe ping-pong on 2 CPUs, each interval lost).
 */
static __always_inline __u32 switch_state(unsigned long long *ctx, struct task_struct *prev)
{
	if (has_prev_state)
		return (__u32)ctx[3] & 0xff;
	return task_state(prev);
}

/* @prev is current: filter first, then walk its stacks into its "start" slot. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       __u32 state, __u64 now)
{
	__u32 tid = BPF_CORE_READ(prev, pid), pid = BPF_CORE_READ(prev, tgid), zero = 0;
	bool kthread = BPF_CORE_READ(prev, flags) & PF_KTHREAD;
	/* preempted in the kernel, or switched out TASK_RUNNING (preempted on the way to user
	 * space, which passes preempt false, or a yield): it waits on a runqueue */
	bool runq = preempt || state == 0;
	struct offcpu_start *st, *init;
	bool in_exec = false;
	long n;

	if ((user_threads_only && kthread) || (kernel_threads_only && !kthread))
		return;
	/* stopped, traced, parked or dead threads are not waiting: skip them */
	if (runq ? !with_runqueue : !(state & state_mask))
		return;
	if (!filter_match(pid, tid))
		return;

	st = bpf_map_lookup_elem(&start, &tid);
	if (!st) {
		/* first interval of this thread */
		init = bpf_map_lookup_elem(&start_init, &zero);
		if (!init)
			return;
		/* a full map makes the lookup below fail, which is counted */
		bpf_map_update_elem(&start, &tid, init, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&start, &tid);
		if (!st) {
			stat_inc(STAT_LOST_START);
			return;
		}
	}
	stat_inc(STAT_SWITCHES);
	/*
	 * Its last interval is still open, and the thread has not run since
	 * (recover_switch_in() ended it otherwise): two blocking switch-outs with no wakeup
	 * seen are one wait, counted from the first to the next switch-in, as schedstat
	 * counts it. Else (woken, or its CPU time unknown) the interval ended unseen.
	 */
	if (st->ts && st->first) {
		if (!runq && !st->wake && !(st->key.flags & KEY_RUNQUEUE)) {
			stat_inc(STAT_OFF_JOINED);
			return;
		}
		stat_inc(STAT_OFF_UNENDED);
	} else if (st->ts) {
		stat_inc(STAT_OFF_UNENDED);
	}
	/* a cut (offcpu_cut) leaves the slot alone until @first says it is filled */
	st->first = 0;
	st->ts = now;
	st->wake = 0;
	st->ran = BPF_CORE_READ(prev, se.sum_exec_runtime);
	st->task = (__u64)prev;
	st->key.pid = pid;
	st->key.flags = runq ? KEY_RUNQUEUE : 0;
	/* prev is current here */
	if (kthread)
		st->key.gen = 0;
	else if (kernel_only)
		st->key.gen = task_gen(prev);
	else
		in_exec = user_image(bpf_get_current_task_btf(), pid, &st->key);
	st->key.user_stack = 0;
	st->key.kernel_stack = 0;
	bpf_get_current_comm(st->key.comm, sizeof(st->key.comm));
	st->kernel.nr = 0;
	st->user.nr = 0;
	if (unwind_dwarf && !kernel_only && !kthread && pid != self_pid) {
		st->first = now;
		copy_out(ctx, st, tid);
		return;
	}
	if (!user_only) {
		n = stack_get(ctx, &st->kernel, 0);
		if (n > 0) {
			st->kernel.nr = n / sizeof(__u64);
		} else {
			st->key.flags |= KEY_KERNEL_MISSED;
			stat_inc(STAT_KSTACK_ERR);
		}
	}
	if (!kernel_only && !kthread) {
		if (in_exec)
			n = user_leaf(bpf_get_current_task_btf(), &st->user, &st->key.flags);
		else if (unwind_kernel &&
			 kunwind_user(bpf_get_current_task_btf(), pid, st->key.gen, &st->user))
			n = (long)st->user.nr * 8;
		else
			n = user_stack_get(ctx, bpf_get_current_task_btf(), &st->user,
					   &st->key.flags);
		if (n > 0) {
			st->user.nr = n / sizeof(__u64);
		} else {
			st->key.flags |= KEY_USER_MISSED;
			stat_inc(STAT_USTACK_ERR);
		}
		announce(bpf_get_current_task_btf(), pid, st->key.gen);
	}
	st->first = now;
}

/*
 * offwake: counts the blocked part @val of @st's interval ending at @now under its waker:
 * the sched_waking after the thread's last switch-in @last_in, which may precede the
 * switch-out that opened the interval (a wakeup racing it); else under KEY_NO_WAKER.
 * Returns false when "wake_counts" is full.
 */
static __always_inline bool wake_count_add(struct offcpu_start *st, __u64 last_in, __u64 now,
					   __u64 val)
{
	__u64 waking = st->waking;
	struct wake_key *wk;
	__u32 zero = 0;

	wk = bpf_map_lookup_elem(&wake_scratch, &zero);
	if (!wk)
		return false;
	wk->key = st->key;
	if (!waking || waking <= last_in || waking > now) {
		wk->key.flags |= KEY_NO_WAKER;
		stat_inc(STAT_WAKE_NONE);
	} else if (!st->waker.kernel_stack && !(st->waker.flags & KEY_KERNEL_MISSED)) {
		/* its stacks were not stored */
		wk->key.flags |= KEY_NO_WAKER;
		stat_inc(STAT_WAKE_LOST);
	} else {
		wk->key.flags |= KEY_WAKER;
		stat_inc(STAT_WAKE_COUNTED);
	}
	/* the key's bytes past WAKE_KEY_SIZE(chain_depth) are not the map's */
	if (wk->key.flags & KEY_NO_WAKER) {
		__builtin_memset(&wk->waker, 0, sizeof(wk->waker));
		if (chain_depth > 1)
			__builtin_memset(wk->chain, 0, sizeof(wk->chain));
	} else {
		wk->waker = st->waker;
		if (chain_depth > 1)
			__builtin_memcpy(wk->chain, st->chain, sizeof(wk->chain));
	}
	return count_add_to(&wake_counts, wk, val);
}

/* Was the wakeup whose kernel stack is @st made in an interrupt or softirq? */
static __always_inline bool in_interrupt_stack(const struct stack_trace *st)
{
	__u32 i, nr = st->nr;
	__u64 ip;

	for (i = 0; i < IRQ_SCAN_FRAMES && i < nr && i < SCORCH_MAX_STACK_DEPTH; i++) {
		ip = st->ips[i];
		if ((ip >= irq_text[0][0] && ip < irq_text[0][1]) ||
		    (ip >= irq_text[1][0] && ip < irq_text[1][1]))
			return true;
	}
	return false;
}

/*
 * chain mode: the chain above waker @cur of @st's thread: @cur's own waker at its last
 * wakeup, then that one's, copied from @cur's slot (a target's) one level up, at most
 * chain_depth - 1 of them; none (zeroed) when @cur is an interrupt's or has no slot, or
 * when its last waker is unknown or lost. @tid is @st's thread.
 */
static __always_inline void chain_copy(struct offcpu_start *st, __u32 tid, struct task_struct *cur,
				       bool in_irq)
{
	struct offcpu_start *cst;
	__u32 ctid;
	int i;

	__builtin_memset(st->chain, 0, sizeof(st->chain));
	if (in_irq) {
		stat_inc(STAT_CHAIN_IRQ);
		return;
	}
	ctid = cur->pid;
	if (ctid == tid)
		return;
	cst = bpf_map_lookup_elem(&start, &ctid);
	if (!cst || !cst->waking ||
	    (!cst->waker.kernel_stack && !(cst->waker.flags & KEY_KERNEL_MISSED)))
		return;
	st->chain[0] = cst->waker;
	for (i = 1; i < SCORCH_CHAIN_MAX - 1; i++) {
		if (i + 1 >= chain_depth)
			break;
		st->chain[i] = cst->chain[i - 1];
	}
	stat_inc(STAT_CHAIN_LINKED);
}

/*
 * @tid switches in: count the interval if it is kept (--min-block and --max-block judge
 * it whole); stacks are stored only then. A blocked interval woken on the way is
 * counted in two parts: to the wakeup under its key, from there under the same stacks
 * with KEY_RUNQUEUE. The runqueue split, as user space applies it to the waits it counts
 * (runq__split() in engine/sampler-interval.c); cut_one() splits the same way.
 */
/* Global: verified once, not once per caller (offcpu_switch calls it twice). Returns 0. */
__noinline int switch_in(__u32 tid, __u64 now)
{
	struct offcpu_start *st = bpf_map_lookup_elem(&start, &tid);
	__u64 ts, whole, delta, runq = 0, last_in;
	bool woken;

	if (!st)
		return 0;
	last_in = st->last_in;
	if (offwake)
		st->last_in = now;
	/* the slot is this switch-in's once @ts is 0: a cut moving @ts to a boundary
	 * meanwhile makes the first try fail, and the second take the moved @ts */
	ts = st->ts;
	if (!ts)
		return 0;
	if (__sync_val_compare_and_swap(&st->ts, ts, 0) != ts) {
		ts = st->ts;
		if (!ts || __sync_val_compare_and_swap(&st->ts, ts, 0) != ts) {
			stat_inc(STAT_OFF_RACED);
			return 0;
		}
	}
	delta = now - ts;
	/* --min-block and --max-block judge the whole interval, cut or not */
	whole = st->first && st->first <= ts ? now - st->first : delta;
	/* st->wake is 0 unless woken since the switch-out (one clock on every CPU) */
	woken = st->wake >= ts && st->wake <= now;
	if (woken)
		runq = now - st->wake;
	if (whole < min_block_ns) {
		stat_inc(STAT_OFF_SHORT);
		if (st->key.flags & KEY_OFFCPU_COPY)
			interval_send(st, tid, delta, runq, INTERVAL_DROPPED);
		return 0;
	}
	if (whole > max_block_ns) {
		stat_inc(STAT_OFF_LONG);
		if (st->key.flags & KEY_OFFCPU_COPY)
			interval_send(st, tid, delta, runq, INTERVAL_DROPPED);
		return 0;
	}
	if (woken && !with_runqueue) {
		/* runqueue waits not counted: the blocked part only */
		delta -= runq;
		runq = 0;
	} else if (woken) {
		stat_inc(STAT_OFF_WOKEN);
	}
	if (st->key.flags & KEY_OFFCPU_COPY) {
		interval_send(st, tid, delta, runq, 0);
		return 0;
	}
	if (st->kernel.nr) {
		st->key.kernel_stack = stack_store(&st->kernel);
		if (!st->key.kernel_stack)
			return 0;
	}
	if (st->user.nr) {
		st->key.user_stack = stack_store(&st->user);
		if (!st->key.user_stack)
			return 0;
	}
	if (delta > runq && offwake && !(st->key.flags & KEY_RUNQUEUE)) {
		if (!wake_count_add(st, last_in, now, delta - runq)) {
			stat_inc(STAT_LOST_COUNTS);
			return 0;
		}
	} else if (delta > runq && !count_add(&st->key, delta - runq)) {
		stat_inc(STAT_LOST_COUNTS);
		return 0;
	}
	if (runq) {
		/* the wait for a CPU is no waker's doing: counted as in offcpu mode */
		st->key.flags |= KEY_RUNQUEUE;
		if (!count_add(&st->key, runq)) {
			stat_inc(STAT_LOST_COUNTS);
			return 0;
		}
	}
	stat_inc(STAT_OFF_COUNTED);
	return 0;
}

/*
 * Wall mode: counts the sample periods @prev_tid missed since its last sample or
 * switch-in (none carries their time), and marks @next_tid's switch-in, from which
 * oncpu counts the periods its first sample missed.
 */
static __always_inline void mark_switch(struct task_struct *prev, __u32 prev_tid, __u32 next_tid,
					__u64 now)
{
	struct last_tick *t;
	__u32 zero = 0;
	__u64 n;

	t = bpf_map_lookup_elem(&last_tick, &zero);
	if (!t)
		return;
	if (prev_tid && t->tid == prev_tid && filter_match(BPF_CORE_READ(prev, tgid), prev_tid)) {
		n = periods_between(t->ts, now);
		if (n > 1)
			stat_add(STAT_MISSED_TAIL, n - 1);
	}
	t->ts = now;
	t->tid = next_tid;
}

/*
 * @prev (current, switching out) may hold an interval whose switch-in sched_switch never
 * showed: the stream has gaps (bpftrace sees a thread switch out twice in a row, its
 * wakeup and switch-in between unseen: 4 in 1,263 switch-outs of a 5 ms timer sleeper).
 * The CPU time it ran since its last switch-out (se.sum_exec_runtime, brought up to date
 * before this tracepoint) places that switch-in: the interval is counted to there, as
 * the switch-in would have counted it, and the run since is not.
 */
static __always_inline void recover_switch_in(struct task_struct *prev, __u32 tid, __u64 now)
{
	struct offcpu_start *st = bpf_map_lookup_elem(&start, &tid);
	__u64 ran, si;

	if (!st || !st->ts || !st->first || !st->ran)
		return;
	ran = BPF_CORE_READ(prev, se.sum_exec_runtime);
	if (ran <= st->ran || ran - st->ran >= now)
		return; /* it has not run since: one wait (switch_out() joins them) */
	si = now - (ran - st->ran);
	if (si <= st->ts)
		return;
	stat_inc(STAT_OFF_RECOVERED);
	switch_in(tid, si);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 next_tid = BPF_CORE_READ(next, pid), prev_tid = BPF_CORE_READ(prev, pid), state;

	/* intervals still open end at the stop (sampler__drain()) */
	if (sampling_over(now))
		return 0;
	if (mark_switches)
		mark_switch(prev, prev_tid, next_tid, now);

	/* the idle task (TID 0) is never counted, on any CPU */
	if (next_tid)
		switch_in(next_tid, now);
	if (!prev_tid)
		return 0;
	state = switch_state(ctx, prev);
	if (state & TASK_DEAD) {
		bpf_map_delete_elem(&start, &prev_tid);
	} else {
		recover_switch_in(prev, prev_tid, now);
		switch_out(ctx, prev, preempt, state, now);
	}
	return 0;
}

/*
 * @p is woken: the first wakeup of a blocked interval ends its blocked part; the time
 * to its switch-in is spent on a runqueue. sched_wakeup, not sched_waking: it fires when
 * the task is queued (on the wakee's CPU for a remote wakeup, after its switch-out when
 * the two race), where schedstat's run_delay starts too; sched_waking comes earlier in
 * the waker's context, by the IPI's latency (~25 us here). A task woken before it
 * switched out has no open interval: it switches out runnable (prev_state 0).
 */
SEC("raw_tp/sched_wakeup")
int BPF_PROG(offcpu_wakeup, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct offcpu_start *st;

	if (stopped || (stop_at_ns && sampling_over(bpf_ktime_get_ns())))
		return 0;
	/* only threads that passed the filters have a slot */
	st = bpf_map_lookup_elem(&start, &tid);
	if (!st || !st->ts || st->wake || (st->key.flags & KEY_RUNQUEUE))
		return 0;
	st->wake = bpf_ktime_get_ns();
	return 0;
}

/*
 * --interval: at each boundary user space runs offcpu_cut (BPF_PROG_TEST_RUN, args[0]
 * the boundary's time) before it takes the counts, so that each interval's output holds
 * the time its threads spent off CPU within it, not whole waits in the interval where
 * they end. Every open interval that began before the boundary is counted up to it
 * under its stacks (split at its wakeup as a switch-in splits it) and goes on from it.
 * One that could still fall short of --min-block is left whole to its switch-in; user
 * space does not cut with --max-block, which only the whole interval can meet.
 */
struct cut_ctx {
	__u64 cut;
};

static long cut_one(struct bpf_map *map, __u32 *tid, struct offcpu_start *st, struct cut_ctx *c)
{
	__u64 ts = st->ts, first = st->first, cut = c->cut, wake, blocked, runq = 0;
	struct count_key key;

	if (!ts || !first || first > ts || ts >= cut || cut - first < min_block_ns)
		return 0;
	/* on a CPU now, with an interval begun before the boundary: its switch-in was never
	 * traced (sched_switch shows two switch-outs of a thread in a row now and then), and
	 * the slot holds no wait but the time it ran. Its next switch-out would have
	 * replaced it uncounted (STAT_OFF_UNENDED); a cut must not count it either. (A wait
	 * that ended since the boundary was claimed by its switch-in, which the tracepoint
	 * runs before the task is marked on_cpu.) */
	if (st->task) {
		struct task_struct *t = (struct task_struct *)st->task;

		if (BPF_CORE_READ(t, pid) == (int)*tid && BPF_CORE_READ(t, on_cpu)) {
			if (__sync_val_compare_and_swap(&st->ts, ts, 0) == ts)
				stat_inc(STAT_OFF_UNENDED);
			return 0;
		}
	}
	/* a switch-in taking the slot meanwhile counts the whole interval itself */
	if (__sync_val_compare_and_swap(&st->ts, ts, cut) != ts)
		return 0;
	wake = st->wake;
	if (wake >= ts && wake < cut) {
		/* woken before the boundary: on a runqueue from there on */
		runq = cut - wake;
		st->wake = cut;
	}
	blocked = cut - ts - runq;
	if (!with_runqueue)
		runq = 0;
	stat_inc(STAT_OFF_CUT);
	if (st->key.flags & KEY_OFFCPU_COPY) {
		interval_send(st, *tid, blocked + runq, runq, INTERVAL_PARTIAL);
		return 0;
	}
	key = st->key;
	key.kernel_stack = 0;
	key.user_stack = 0;
	if (st->kernel.nr) {
		key.kernel_stack = stack_store(&st->kernel);
		if (!key.kernel_stack)
			return 0;
	}
	if (st->user.nr) {
		key.user_stack = stack_store(&st->user);
		if (!key.user_stack)
			return 0;
	}
	if (blocked && !count_add(&key, blocked)) {
		stat_inc(STAT_LOST_COUNTS);
		return 0;
	}
	key.flags |= KEY_RUNQUEUE;
	if (runq && !count_add(&key, runq))
		stat_inc(STAT_LOST_COUNTS);
	return 0;
}

SEC("raw_tp")
int BPF_PROG(offcpu_cut, __u64 cut)
{
	struct cut_ctx c = { .cut = cut };

	if (stopped)
		return 0;
	bpf_for_each_map_elem(&start, cut_one, &c, 0);
	return 0;
}

/*
 * offwake: @p is woken by the current task, or by an interrupt of it (a timer, I/O
 * completion: user space tells those apart by the kernel stack). sched_waking, not
 * sched_wakeup: it runs in the waker's context, while a remote wakeup's sched_wakeup
 * runs on the wakee's CPU in whatever the IPI interrupted (the idle task, mostly). It
 * fires once per sleep, only when the wakeup succeeds, and may precede the wakee's own
 * switch-out: the waker is kept in the slot by its time, apart from the interval. The
 * waker's user stack is walked as the blocked ones are: with the kernel walk's tables
 * when it is a target that has them, else by frame pointers.
 */
SEC("raw_tp/sched_waking")
int BPF_PROG(offwake_waking, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), zero = 0;
	struct stack_trace *scratch;
	struct task_struct *cur;
	struct offcpu_start *st;
	struct waker *w;
	bool kthread, target, in_irq = false;
	__u64 now, id;
	long n;

	if (!offwake)
		return 0;
	now = bpf_ktime_get_ns();
	if (sampling_over(now))
		return 0;
	/* only threads that passed the filters have a slot */
	st = bpf_map_lookup_elem(&start, &tid);
	if (!st)
		return 0;
	scratch = bpf_map_lookup_elem(&waker_scratch, &zero);
	if (!scratch)
		return 0;
	cur = bpf_get_current_task_btf();
	kthread = cur->flags & PF_KTHREAD;
	w = &st->waker;
	st->waking = 0;
	w->flags = kthread ? WAKER_KTHREAD : 0;
	w->pid = cur->tgid;
	w->gen = kthread ? 0 : current_gen(cur);
	w->user_stack = 0;
	w->kernel_stack = 0;
	bpf_get_current_comm(w->comm, sizeof(w->comm));
	n = stack_get(ctx, scratch, 0);
	if (n > 0) {
		scratch->nr = n / sizeof(__u64);
		in_irq = chain_depth > 1 && in_interrupt_stack(scratch);
		id = stack_store(scratch);
		if (!id)
			goto done; /* counted; the interval goes under [unknown waker], lost */
		w->kernel_stack = id;
	} else {
		w->flags |= KEY_KERNEL_MISSED;
		stat_inc(STAT_KSTACK_ERR);
	}
	if (kthread || kernel_only) {
		w->flags |= KEY_USER_MISSED;
		goto done;
	}
	/* a waker among the targets is symbolized (and has tables) as they are; others
	 * are not announced: most are whatever task an interrupt came to */
	target = filter_match(w->pid, cur->pid);
	if (target && unwind_kernel && kunwind_user(cur, w->pid, w->gen, scratch))
		n = (long)scratch->nr * 8;
	else
		n = stack_get(ctx, scratch, BPF_F_USER_STACK);
	if (n > 0) {
		scratch->nr = n / sizeof(__u64);
		w->user_stack = stack_store(scratch);
	}
	if (w->user_stack && target)
		announce(cur, w->pid, w->gen);
	else if (!w->user_stack)
		w->flags |= KEY_USER_MISSED;
done:
	if (chain_depth > 1)
		chain_copy(st, tid, cur, in_irq);
	st->waking = now;
	stat_inc(STAT_WAKERS);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
