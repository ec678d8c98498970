// SPDX-License-Identifier: GPL-2.0
/* On-CPU sampling: a perf_event program that counts (process, thread, stacks) in maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"
#include "stacks.bpf.h"
#include "kunwind.bpf.h"

const volatile bool include_idle = false;
/* --mode wall: a sample weighs the periods since the CPU's last sample or switch-in when
 * its thread kept the CPU all along (the missed periods were its time); else its own
 * period (sample_weight()). Needs offcpu's switch marks in map "last_tick". */
const volatile bool credit_missed = false;

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

/*
 * Wall mode: sample periods since this CPU's last sample or switch, if @tid ran since
 * (else the sample's weight: its own period, in -F's). The cpu-clock timer fires once
 * per period; when it does not (the kernel throttles the event past
 * kernel.perf_event_max_sample_rate / HZ per tick, or the hypervisor did not run the
 * vCPU: steal), the periods in between pass unsampled.
 * offcpu marks every switch in the same map, so finding @tid there means it held the
 * CPU all along: those periods were its. (Without the marks, cpu mode, a thread that
 * blocked and woke on the same CPU would look the same: idle periods go unsampled.)
 */
static __always_inline __u64 periods_since_last(__u32 tid)
{
	struct last_tick *t;
	__u32 zero = 0;
	__u64 now, n = 0;

	t = bpf_map_lookup_elem(&last_tick, &zero);
	if (!t)
		return sample_weight();
	now = bpf_ktime_get_ns();
	if (tid && t->tid == tid)
		n = periods_between(t->ts, now) ?: 1;
	t->ts = now;
	t->tid = tid;
	return n ? n : sample_weight();
}

SEC("perf_event")
int oncpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, zero = 0;
	struct task_struct *task;
	struct count_key key = {};
	struct scratch *sc;
	__u64 periods, weight;
	long n;
	bool in_kernel;

	if (stopped || (stop_at_ns && sampling_over(bpf_ktime_get_ns())))
		return 0;
	/* BTF pointer: its fields are read by plain loads, not bpf_probe_read_kernel() or
	 * a helper (bpf_get_current_comm() costs a call per sample) */
	task = bpf_get_current_task_btf();
	periods = weight = sample_weight();
	if (credit_missed)
		periods = periods_since_last(tid);
	if (tid == 0) {
		if (!include_idle) {
			stat_inc(STAT_IDLE);
			return 0;
		}
	} else if (!filter_match(pid, tid)) {
		return 0;
	}
	stat_inc(STAT_SAMPLES);
	stat_add(STAT_PERIODS, periods);
	if (periods > weight)
		stat_add(STAT_MISSED_PERIODS, periods - weight);

	sc = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!sc)
		return 0;

	key.pid = pid;
	__builtin_memcpy(key.comm, task->comm, sizeof(key.comm));
	/* x86_64 and arm64 both map the kernel in the upper half */
	in_kernel = (long)PT_REGS_IP(&ctx->regs) < 0;

	/* --unwind dwarf: the record carries both stacks; nothing is counted here */
	if (unwind_dwarf && !kernel_only && tid != 0 && !(task->flags & PF_KTHREAD) &&
	    !(kunwind_python_only && kunwind_has_python(pid, current_gen(task)))) {
		struct sample_buf *b = sample_buf_get();

		if (!b)
			return 0;
		user_image(task, pid, &key);
		b->hdr.pid = pid;
		b->hdr.tid = tid;
		b->hdr.gen = key.gen;
		b->hdr.value = periods;
		b->hdr.flags = key.flags; /* KEY_USER_LEAF in an exec's window */
		__builtin_memcpy(b->hdr.comm, key.comm, sizeof(key.comm));
		if (!user_only && in_kernel)
			sample_kernel_stack(ctx, b);
		announce(task, pid, key.gen);
		sample_send(b, SCORCH_EVENT_SAMPLE);
		return 0;
	}

	if (!user_only && in_kernel) {
		n = stack_get(ctx, &sc->kernel, 0);
		if (n > 0) {
			sc->kernel.nr = n / sizeof(__u64);
			key.kernel_stack = stack_store(&sc->kernel);
			if (!key.kernel_stack)
				return 0;
		} else {
			key.flags |= KEY_KERNEL_MISSED;
			stat_inc(STAT_KSTACK_ERR);
		}
	}
	if (!kernel_only && tid != 0 && !(task->flags & PF_KTHREAD)) {
		bool in_exec = user_image(task, pid, &key);

		/* --unwind kernel: with the process's tables, else frame pointers */
		if (in_exec)
			n = user_leaf(task, &sc->user, &key.flags);
		else if (unwind_kernel && kunwind_user(task, pid, key.gen, &sc->user))
			n = (long)sc->user.nr * 8;
		else
			n = user_stack_get(ctx, task, &sc->user, &key.flags);
		if (n > 0) {
			sc->user.nr = n / sizeof(__u64);
			key.user_stack = stack_store(&sc->user);
			if (!key.user_stack)
				return 0;
		} else {
			key.flags |= KEY_USER_MISSED;
			stat_inc(STAT_USTACK_ERR);
		}
		announce(task, pid, key.gen);
	}

	if (!count_add(&key, periods)) {
		stat_inc(STAT_LOST_COUNTS);
		return 0;
	}
	stat_inc(STAT_COUNTED);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
