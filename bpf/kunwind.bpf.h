/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind kernel: user stacks walked in the BPF program with tables compiled from the
 * files' .eh_frame (profile.h). Per frame: the mapping of the address (a binary search
 * of the process's mappings), its row (a binary search of the file's rows, in a global
 * function the verifier checks once), then one 8- or 16-byte read of the stack. No rule
 * (JIT code, a file without CFI, a gap): a frame-pointer step. The frames go to a
 * struct stack_trace, stored and counted in the kernel as frame-pointer stacks are.
 * Included by oncpu.bpf.c and offcpu.bpf.c after stacks.bpf.h.
 */
#ifndef SCORCH_KUNWIND_BPF_H
#define SCORCH_KUNWIND_BPF_H

/* Sized by user space; shared between the two objects (bpf_map__reuse_fd). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kunwind_row);
} kunwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kunwind_proc);
} kunwind_procs SEC(".maps");

const volatile bool unwind_kernel = false;

/*
 * The row of [@lo, @hi) in force at @pc: the last that begins at or before it. Global
 * (verified once, whatever calls it). Returns its index, or -1.
 */
__noinline int kunwind_find_row(__u32 lo, __u32 hi, __u32 pc)
{
	__u32 first = lo, mid, i;
	struct kunwind_row *row;

	/* 2^24 rows at most: 25 halvings */
	for (i = 0; i < 25 && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		row = bpf_map_lookup_elem(&kunwind_rows, &mid);
		if (!row)
			return -1;
		if (row->pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first ? (int)(lo - 1) : -1;
}

/*
 * The mapping of @proc holding @ip: the last beginning at or below it, if it ends above.
 * Global, as kunwind_find_row(). Returns its index, or -1.
 */
__noinline int kunwind_find_map(struct kunwind_proc *proc, __u64 ip)
{
	__u32 lo = 0, hi, mid, i;

	if (!proc)
		return -1;
	hi = proc->nr;
	if (hi > KUNWIND_MAX_MAPS)
		return -1;
	/* 128 mappings at most: 8 halvings */
	for (i = 0; i < 8 && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		if (mid >= KUNWIND_MAX_MAPS)
			return -1;
		if (proc->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || lo > KUNWIND_MAX_MAPS)
		return -1;
	lo--;
	if (lo >= KUNWIND_MAX_MAPS || ip >= proc->maps[lo].end)
		return -1;
	return (int)lo;
}

/* The registers of the frame to unwind, and how the walk ended (STAT_KU_*; 0: going on). */
struct kunwind_regs {
	__u64 ip, sp, bp;
	__u64 end;
};

/*
 * One frame: @r's ip is recorded in @out, then the caller's registers found with
 * @proc's tables (@i: the frame's depth, 0 for the interrupted instruction). Global,
 * so that the verifier checks it once, not once per path of the loop that calls it.
 * Returns 1 when the walk ends (@r->end says why), else 0.
 */
__noinline int kunwind_frame(struct kunwind_regs *r, struct kunwind_proc *proc,
			     struct stack_trace *out, __u32 i)
{
	__u64 ip, sp, bp, cfa, pair[2] = {};
	struct kunwind_map *m = NULL;
	struct kunwind_row *row = NULL;
	__u32 n;
	int idx;

	if (!r || !proc || !out)
		return 1;
	ip = r->ip;
	sp = r->sp;
	bp = r->bp;
	n = out->nr;
	if (n >= SCORCH_MAX_STACK_DEPTH) {
		r->end = STAT_KU_END_DEPTH;
		return 1;
	}
	out->ips[n] = ip;
	out->nr = n + 1;
	idx = kunwind_find_map(proc, ip);
	if (idx >= 0) {
		__u32 k = (__u32)idx;

		/* a mask the verifier sees (a compare on a copy of idx it may not) */
		barrier_var(k);
		k &= KUNWIND_MAX_MAPS - 1;
		m = &proc->maps[k];
	}
	if (m && m->hi > m->lo) {
		/* a return address is past its call: the call's row is at ip - 1 */
		__u64 rel = ip - m->bias - (i ? 1 : 0);

		idx = rel <= 0xffffffffULL ? kunwind_find_row(m->lo, m->hi, (__u32)rel) : -1;
		if (idx >= 0) {
			__u32 k = (__u32)idx;

			row = bpf_map_lookup_elem(&kunwind_rows, &k);
		}
	}
	if (row && row->cfa == KROW_STOP) {
		r->end = STAT_KU_OUTERMOST;
		return 1;
	}
	if (row && (row->cfa == KROW_RSP || (row->cfa == KROW_RBP && bp) || row->cfa == KROW_PLT)) {
		if (row->cfa == KROW_RSP)
			cfa = sp + (__s64)row->cfa_off;
		else if (row->cfa == KROW_RBP)
			cfa = bp + (__s64)row->cfa_off;
		else
			cfa = sp + 8 + ((ip & 15) >= (__u64)row->cfa_off ? 8 : 0);
		if (cfa <= sp) {
			r->end = STAT_KU_END_BAD;
			return 1;
		}
		if (bpf_probe_read_user(&pair[1], 8, (void *)(cfa - 8))) {
			r->end = STAT_KU_END_READ;
			return 1;
		}
		if (row->rbp == KROW_RBP_SAVED) {
			if (bpf_probe_read_user(&bp, 8, (void *)(cfa + (__s64)row->rbp_off))) {
				r->end = STAT_KU_END_READ;
				return 1;
			}
		} else if (row->rbp == KROW_RBP_LOST) {
			bp = 0;
		}
	} else {
		/* no rule: the frame pointer, if there is one (JIT code, files without CFI).
		 * It may point to another stack (Go's g0 and vDSO stacks): only its form is
		 * checked, as the kernel's own frame-pointer walk does */
		if (!bp || (bp & 7) || bp >= 0x800000000000ULL) {
			/* rbp 0 below frames found: the outermost (the psABI's deepest frame) */
			r->end = !bp && i ? STAT_KU_OUTERMOST : STAT_KU_END_NO_INFO;
			return 1;
		}
		if (bpf_probe_read_user(pair, 16, (void *)bp)) {
			r->end = STAT_KU_END_READ;
			return 1;
		}
		stat_inc(STAT_KU_FP_STEPS);
		cfa = bp + 16;
		bp = pair[0];
	}
	/* the outermost frame of a thread without CFI there: a zero return address */
	if (!pair[1]) {
		r->end = STAT_KU_OUTERMOST;
		return 1;
	}
	if ((__s64)pair[1] < 0 || pair[1] < 0x1000) {
		r->end = STAT_KU_END_BAD;
		return 1;
	}
	r->ip = pair[1];
	r->sp = cfa;
	r->bp = bp;
	return 0;
}

/* The walk in progress, for bpf_loop (its context must lie on the stack). */
struct kunwind_walk {
	struct kunwind_regs regs;
	struct kunwind_proc *proc;
	struct stack_trace *out;
};

static long kunwind_step(__u32 i, struct kunwind_walk *w)
{
	return kunwind_frame(&w->regs, w->proc, w->out, i) ? 1 : 0;
}

/*
 * Walks the user stack of the current task (a user thread of image @pid, @gen) into
 * @out. Returns false when that image has no tables (yet: a process new to user space,
 * or just exec'd): the caller walks frame pointers instead.
 */
static __always_inline bool kunwind_user(struct task_struct *task, __u32 pid, __u64 gen,
					 struct stack_trace *out)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct kunwind_walk w = {};

	w.proc = bpf_map_lookup_elem(&kunwind_procs, &pid);
	/* gen 0: tables loaded before the recording, for whatever image the PID runs */
	if (!w.proc || (w.proc->gen && w.proc->gen != gen)) {
		stat_inc(STAT_KU_NO_PROC);
		return false;
	}
	w.out = out;
	w.regs.ip = BPF_CORE_READ(regs, ip);
	w.regs.sp = BPF_CORE_READ(regs, sp);
	w.regs.bp = BPF_CORE_READ(regs, bp);
	out->nr = 0;
	if (!w.regs.ip)
		return true;
	stat_inc(STAT_KU_WALKS);
	bpf_loop(SCORCH_MAX_STACK_DEPTH + 1, kunwind_step, &w, 0);
	if (w.regs.end)
		stat_inc((__u32)w.regs.end);
	return true;
}

#endif /* SCORCH_KUNWIND_BPF_H */
