// SPDX-License-Identifier: GPL-2.0
/* Stacks at events (record --event): uprobes, USDT, raw tracepoints, software perf events. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "profile.h"
#include "stacks.bpf.h"
#include "kunwind.bpf.h"

/* Set by user space before load. */
/* scorch itself: its own calls (a probe on malloc) are not counted */
const volatile __u32 self_pid = 0;
/* count every period-th event of a CPU (1: every one) */
const volatile __u32 event_period = 1;
/* a uprobe on a function's first instruction: the user stack is walked here (entry_walk()) */
const volatile bool entry_walk = false;
/* the weight: 0 one per event, 1..6 that argument of the probed function, tracepoint or
 * USDT probe */
const volatile __u32 weight_arg = 0;

struct scratch {
	struct stack_trace user;
	struct stack_trace kernel;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

/* --period: events seen on this CPU since the last counted */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} period_left SEC(".maps");

/* --latency: the outermost call of the probed function each thread is inside (profile.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* threads inside at once, set by user space */
	__type(key, __u32);
	__type(value, struct latency_slot);
} inside SEC(".maps");

/* --period: is this event of the CPU one to count? */
static __always_inline bool period_due(void)
{
	__u32 zero = 0;
	__u64 *left;

	if (event_period <= 1)
		return true;
	left = bpf_map_lookup_elem(&period_left, &zero);
	if (!left)
		return false;
	if (++*left < event_period)
		return false;
	*left = 0;
	return true;
}

/*
 * The user stack at a probe on a function's first instruction, by frame pointers. There
 * the frame pointer still holds the caller's frame, whose return address is the
 * caller's caller: a walk from it, as the kernel's (which adds the return address at
 * sp only when the function begins with push %rbp or endbr64), skips the direct caller.
 * That caller is the return address at sp; the frames from bp on follow as the kernel
 * walks them (each above the last, above sp). Returns the bytes stored (the leaf alone
 * when the return address cannot be read).
 */
static __always_inline long entry_walk_user(struct pt_regs *regs, struct stack_trace *st)
{
	__u64 sp = PT_REGS_SP(regs), fp = PT_REGS_FP(regs), frame[2];
	__u32 n = 1, i;

	st->flags = 0;
	st->ips[0] = PT_REGS_IP(regs);
	if (bpf_probe_read_user(&st->ips[1], sizeof(__u64), (void *)sp))
		return 8;
	n = 2;
	for (i = 0; i < SCORCH_MAX_STACK_DEPTH - 2; i++) {
		if (fp < sp || (fp & 7) || bpf_probe_read_user(frame, sizeof(frame), (void *)fp))
			break;
		if (!frame[1] || n >= SCORCH_MAX_STACK_DEPTH)
			break;
		st->ips[n++] = frame[1];
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	if (n >= SCORCH_MAX_STACK_DEPTH)
		st->flags = STACK_DEEP;
	return n * sizeof(__u64);
}

/*
 * The stacks of the current task into @key: the kernel's (not at a user probe), the
 * user's by the kernel walk (--unwind kernel; a CPython process's by default) or frame
 * pointers, each stored in "stacks". The walk starts from the user registers the task
 * trapped with (a probe's breakpoint, a syscall, a fault). Returns false when a stack could
 * not be stored (counted).
 */
static __always_inline bool walk_stacks(void *ctx, struct task_struct *task, struct count_key *key,
					bool kstack)
{
	struct scratch *sc;
	__u32 zero = 0;
	long n;

	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return false;
	if (!user_only && kstack) {
		n = stack_get(ctx, &sc->kernel, 0);
		if (n > 0) {
			sc->kernel.nr = n / sizeof(__u64);
			key->kernel_stack = stack_store(&sc->kernel);
			if (!key->kernel_stack)
				return false;
		} else {
			key->flags |= KEY_KERNEL_MISSED;
			stat_inc(STAT_KSTACK_ERR);
		}
	}
	if (!kernel_only && !(task->flags & PF_KTHREAD)) {
		if (key->flags & KEY_USER_LEAF)
			n = user_leaf(task, &sc->user, &key->flags);
		else if (unwind_kernel &&
			 (!kunwind_python_only || kunwind_has_python(key->pid, key->gen)) &&
			 kunwind_user(task, key->pid, key->gen, &sc->user))
			n = (long)sc->user.nr * sizeof(__u64);
		else if (entry_walk)
			n = entry_walk_user(ctx, &sc->user);
		else
			n = stack_get(ctx, &sc->user, BPF_F_USER_STACK);
		if (n > 0) {
			sc->user.nr = n / sizeof(__u64);
			key->user_stack = stack_store(&sc->user);
			if (!key->user_stack)
				return false;
		} else {
			key->flags |= KEY_USER_MISSED;
			stat_inc(STAT_USTACK_ERR);
		}
	}
	return true;
}

/* Is the current thread one to count now? Fills @key's process part. */
static __always_inline bool event_begin(struct task_struct *task, struct count_key *key)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;

	/* the clock read only when -d set a deadline */
	if (stopped || (stop_at_ns && sampling_over(bpf_ktime_get_ns())))
		return false;
	if (tid == 0 || pid == self_pid || !filter_match(pid, tid))
		return false;
	key->pid = pid;
	__builtin_memcpy(key->comm, task->comm, sizeof(key->comm));
	if (task->flags & PF_KTHREAD)
		return true;
	/* in an exec's window, the user part is the replaced image's leaf (walk_stacks) */
	if (kernel_only)
		key->gen = current_gen(task);
	else
		user_image(task, pid, key);
	announce(task, pid, key->gen);
	return true;
}

/* One event of the current task weighing @weight: its stacks counted, or sent to be
 * unwound in user space with --unwind dwarf. @kstack: the kernel stack is walked. */
static __always_inline int count_event(void *ctx, __u64 weight, bool kstack)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct count_key key = {};

	if (!event_begin(task, &key) || !period_due())
		return 0;
	stat_inc(STAT_SAMPLES);
	if (unwind_dwarf && !kernel_only && !(task->flags & PF_KTHREAD)) {
		struct sample_buf *b = sample_buf_get();

		if (!b)
			return 0;
		b->hdr.pid = key.pid;
		b->hdr.tid = (__u32)bpf_get_current_pid_tgid();
		b->hdr.gen = key.gen;
		b->hdr.value = weight;
		b->hdr.flags = key.flags; /* KEY_USER_LEAF in an exec's window */
		__builtin_memcpy(b->hdr.comm, key.comm, sizeof(key.comm));
		if (!user_only && kstack)
			sample_kernel_stack(ctx, b);
		sample_send(b, SCORCH_EVENT_SAMPLE);
		return 0;
	}
	if (!walk_stacks(ctx, task, &key, kstack))
		return 0;
	if (!count_add(&key, weight)) {
		stat_inc(STAT_LOST_COUNTS);
		return 0;
	}
	stat_inc(STAT_COUNTED);
	return 0;
}

#ifndef PT_REGS_PARM6 /* libbpf before 1.2 */
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) ((x)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x) ((x)->regs[5])
#endif
#endif

/* One load of @field of @ctx at its constant offset, in assembly: the compiler would
 * merge the cases of a switch into one load at a computed offset, which the verifier
 * refuses on a context. */
#define CTX_LOAD(ctx, field)                                                                       \
	({                                                                                         \
		__u64 __v;                                                                         \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                                              \
			     : "=r"(__v)                                                           \
			     : "r"(ctx), "i"(__builtin_offsetof(typeof(*(ctx)), field)));          \
		__v;                                                                               \
	})

/* The weight of a uprobe hit: the argument asked for, read from the registers. */
static __always_inline __u64 uprobe_weight(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	switch (weight_arg) {
	case 1:
		return CTX_LOAD(ctx, di);
	case 2:
		return CTX_LOAD(ctx, si);
	case 3:
		return CTX_LOAD(ctx, dx);
	case 4:
		return CTX_LOAD(ctx, cx);
	case 5:
		return CTX_LOAD(ctx, r8);
	case 6:
		return CTX_LOAD(ctx, r9);
	default:
		return 1;
	}
#else
	switch (weight_arg) {
	case 1:
		return PT_REGS_PARM1(ctx);
	case 2:
		return PT_REGS_PARM2(ctx);
	case 3:
		return PT_REGS_PARM3(ctx);
	case 4:
		return PT_REGS_PARM4(ctx);
	case 5:
		return PT_REGS_PARM5(ctx);
	case 6:
		return PT_REGS_PARM6(ctx);
	default:
		return 1;
	}
#endif
}

SEC("uprobe")
int event_uprobe(struct pt_regs *ctx)
{
	return count_event(ctx, uprobe_weight(ctx), false);
}

SEC("usdt")
int event_usdt(struct pt_regs *ctx)
{
	long v = 0;

	if (weight_arg && bpf_usdt_arg(ctx, weight_arg - 1, &v))
		v = 0;
	return count_event(ctx, weight_arg ? (__u64)v : 1, false);
}

SEC("raw_tp")
int event_raw_tp(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 w;

	/* constant offsets: the verifier prunes the branches weight_arg rules out, and
	 * the attach checks the last argument read against the tracepoint's */
	switch (weight_arg) {
	case 1:
		w = CTX_LOAD(ctx, args[0]);
		break;
	case 2:
		w = CTX_LOAD(ctx, args[1]);
		break;
	case 3:
		w = CTX_LOAD(ctx, args[2]);
		break;
	case 4:
		w = CTX_LOAD(ctx, args[3]);
		break;
	case 5:
		w = CTX_LOAD(ctx, args[4]);
		break;
	case 6:
		w = CTX_LOAD(ctx, args[5]);
		break;
	default:
		w = 1;
		break;
	}
	return count_event(ctx, w, true);
}

SEC("perf_event")
int event_perf(struct bpf_perf_event_data *ctx)
{
	/* x86_64 and arm64 both map the kernel in the upper half: a fault taken in user
	 * mode has no kernel stack of its own */
	return count_event(ctx, 1, (long)PT_REGS_IP(&ctx->regs) < 0);
}

/* --latency: entry of the probed function. The stacks are walked here, where the
 * caller's frames are, and counted at the return with the time inside. */
SEC("uprobe")
int event_entry(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct latency_slot *slot, init = {};
	__u64 sp = PT_REGS_SP(ctx);

	slot = bpf_map_lookup_elem(&inside, &tid);
	if (slot) {
		/* nested (deeper on the stack than the outermost call): that one counts */
		if (sp < slot->sp) {
			slot->depth++;
			return 0;
		}
		/* at or above the outermost call's entry: it was left without returning
		 * (longjmp, an exception unwound through it), and is forgotten */
		stat_inc(STAT_CALLS_ABANDONED);
		bpf_map_delete_elem(&inside, &tid);
	}
	if (!event_begin(task, &init.key))
		return 0;
	stat_inc(STAT_SAMPLES);
	init.depth = 1;
	init.sp = sp;
	init.ts = bpf_ktime_get_ns();
	if (unwind_dwarf && !kernel_only && !(task->flags & PF_KTHREAD)) {
		/* the stack goes to user space now, its time when the call ends (an
		 * interval record, as off CPU): the copy's value is the entry time */
		struct sample_buf *b = sample_buf_get();

		if (!b)
			return 0;
		b->hdr.pid = init.key.pid;
		b->hdr.tid = tid;
		b->hdr.gen = init.key.gen;
		b->hdr.value = init.ts;
		__builtin_memcpy(b->hdr.comm, init.key.comm, sizeof(init.key.comm));
		init.key.flags |= KEY_OFFCPU_COPY;
		if (bpf_map_update_elem(&inside, &tid, &init, BPF_NOEXIST)) {
			stat_inc(STAT_LOST_START);
			return 0;
		}
		if (sample_send(b, SCORCH_EVENT_OFFCPU_COPY))
			stat_inc(STAT_OFF_COPIES);
		return 0;
	}
	if (!walk_stacks(ctx, task, &init.key, false))
		return 0;
	if (bpf_map_update_elem(&inside, &tid, &init, BPF_NOEXIST))
		stat_inc(STAT_LOST_START);
	return 0;
}

/* Counts the time of @slot's call, to @now, and forgets it. */
static __always_inline void latency_end(__u32 tid, struct latency_slot *slot, __u64 now)
{
	struct count_key key = slot->key;
	__u64 delta = now > slot->ts ? now - slot->ts : 0;
	struct scorch_interval iv = {
		.type = SCORCH_EVENT_INTERVAL,
		.pid = key.pid,
		.gen = key.gen,
		.tid = tid,
		.ts = slot->ts,
		.value = delta,
	};

	bpf_map_delete_elem(&inside, &tid);
	if (key.flags & KEY_OFFCPU_COPY) {
		/* --unwind dwarf: the copy taken at entry is counted in user space */
		if (bpf_ringbuf_output(&samples, &iv, sizeof(iv), samples_wakeup()))
			stat_inc(STAT_LOST_INTERVAL);
		else
			stat_inc(STAT_COUNTED);
		return;
	}
	if (!count_add(&key, delta)) {
		stat_inc(STAT_LOST_COUNTS);
		return;
	}
	stat_inc(STAT_COUNTED);
}

SEC("uretprobe")
int event_return(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct latency_slot *slot = bpf_map_lookup_elem(&inside, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (!slot)
		return 0;
	/* a nested call returns below the outermost call's entry sp; the outermost one
	 * returns above it (its return address popped), whatever nested calls were left
	 * without returning in between */
	if (PT_REGS_SP(ctx) <= slot->sp) {
		if (slot->depth > 1)
			slot->depth--;
		return 0;
	}
	/* past the end of the recording: counted until then */
	if (stop_at_ns && now > stop_at_ns)
		now = stop_at_ns;
	if (stopped)
		return 0; /* user space counts what is open at the stop */
	latency_end(tid, slot, now);
	return 0;
}

/* --latency: a thread that exits inside the function never returns: counted to its exit. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(event_thread_exit, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct latency_slot *slot = bpf_map_lookup_elem(&inside, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (!slot || stopped)
		return 0;
	if (stop_at_ns && now > stop_at_ns)
		now = stop_at_ns;
	latency_end(tid, slot, now);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
