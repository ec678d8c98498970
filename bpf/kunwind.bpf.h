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
/* --unwind auto on CPU (copies) and at events (frame pointers): CPython processes, those
 * with a "kunwind_procs" entry, are walked in the kernel all the same, for their Python
 * frames */
const volatile bool kunwind_python_only = false;

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

/*
 * CPython's perf trampolines (-X perf, -X perf_jit; 3.12+): stubs in anonymous memory,
 * without CFI, that call the eval loop through %rcx. @ip, a return address, is in one
 * when the code around it is "call *%rcx" then 3.12's "add $8,%rsp; ret" or 3.13's
 * "pop %rbp; ret": either frame is 16 bytes above @sp, its return address at the top,
 * 3.13's saved rbp at @sp. Returns true, with @cfa (and 3.13's @bp) set, when it is one.
 */
static __always_inline bool kunwind_py_trampoline(__u64 ip, __u64 sp, __u64 *cfa, __u64 *bp)
{
	__u8 code[8];

	if (bpf_probe_read_user(code, sizeof(code), (void *)(ip - 2)) || code[0] != 0xff ||
	    code[1] != 0xd1)
		return false;
	if (code[2] == 0x48 && code[3] == 0x83 && code[4] == 0xc4 && code[5] == 0x08 &&
	    code[6] == 0xc3) {
		*cfa = sp + 16;
		return true;
	}
	if (code[2] == 0x5d && code[3] == 0xc3 && !bpf_probe_read_user(bp, 8, (void *)sp)) {
		*cfa = sp + 16;
		return true;
	}
	return false;
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
	} else if (i && !m && proc->py.tss_key && kunwind_py_trampoline(ip, sp, &cfa, &bp)) {
		/* a CPython process's trampoline: stepped through, and left out of the stack
		 * (the Python frame it stands for is read from the interpreter) */
		if (bpf_probe_read_user(&pair[1], 8, (void *)(cfa - 8))) {
			r->end = STAT_KU_END_READ;
			return 1;
		}
		out->nr = n;
		stat_inc(STAT_KU_PY_TRAMPOLINES);
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

/* A thread's Python frames, collected before its native walk (per CPU). */
#define PY_SLOTS 64 /* >= PY_MAX_FRAMES, a power of 2: indexes are masked with it */
#define PY_SEEN_SLOTS 256

struct py_frames {
	__u64 code[PY_SLOTS];
	__u64 pos[PY_SLOTS];
	__u64 marker[PY_SLOTS]; /* the C-stack address of the run's eval activation */
	__u8 chunk[128];	     /* one frame's fields, read at once */
	/* (pid, code, guard)s announced lately from this CPU, direct-mapped: most frames
	 * of most samples were, and this spares their lookup in py_seen. A collision only
	 * leaves a code object unannounced: scorch reads it when it names the stack. */
	__u64 seen[PY_SEEN_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_frames);
} py_frames_map SEC(".maps");

/* Code objects already announced to user space, with their guard: by (pid, address).
 * (Preallocated: 16,384 entries take about 1.2 MiB; one evicted is announced again, and
 * found in scorch's cache.) */
struct py_seen_key {
	__u32 pid;
	__u32 pad;
	__u64 code;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_seen_key);
	__type(value, __u32);
} py_seen SEC(".maps");

/* Where the collection is (no pointers: a global function is given it, see below). */
struct py_cursor {
	__u64 frame;	 /* next frame to read; 0: the chain's end */
	__u64 cframe;	 /* PY_RUN_ONE, PY_RUN_ENTRY: the marker of the run being read */
	__u32 nr;	 /* frames collected */
	__u32 run_start; /* PY_RUN_SHIM: the first frame of the run being read */
	__u32 cut;
	__u32 pid;
	__u64 gen;
};

/* The collection in progress, for bpf_loop. */
struct py_collect {
	const struct kunwind_python *py;
	struct py_frames *pf;
	struct py_cursor c;
};

static __always_inline __u64 chunk_u64(const struct py_frames *pf, __u32 off)
{
	__u64 v = 0;

	off &= 127;
	if (off <= 120)
		__builtin_memcpy(&v, &pf->chunk[off], 8);
	return v;
}

/* Announces the code object @code of guard @guard if it is new to user space. */
static __always_inline void py_announce(struct py_cursor *c, struct py_frames *pf, __u64 code,
					__u32 guard)
{
	struct py_seen_key k = {.pid = c->pid, .code = code};
	__u64 tag = code ^ ((__u64)guard << 40) ^ ((__u64)c->pid << 20) ^ 1;
	__u32 slot = (__u32)((code >> 4) ^ (code >> 12) ^ guard) & (PY_SEEN_SLOTS - 1);
	__u32 *seen;

	if (pf->seen[slot] == tag)
		return;
	pf->seen[slot] = tag;
	seen = bpf_map_lookup_elem(&py_seen, &k);
	if (seen && *seen == guard)
		return;
	bpf_map_update_elem(&py_seen, &k, &guard, BPF_ANY);
	emit_from(SCORCH_EVENT_PYCODE, c->pid, c->gen, guard, code, 0, BPF_RB_FORCE_WAKEUP);
}

/*
 * One frame of the chain into @c->pf, or the end of a run. Global, verified once.
 * Returns 1 when the chain ends (or cannot be read further), else 0.
 */
__noinline int py_collect_frame(struct py_cursor *c, const struct kunwind_python *py,
				struct py_frames *pf)
{
	__u64 frame, code, instr, g = 0;
	__u32 n, lasti, guard, i, span, base;
	__u8 flag = 0;

	if (!c || !py || !pf)
		return 1;
	frame = c->frame;
	n = c->nr;
	if (!frame)
		return 1;
	if (n >= PY_MAX_FRAMES) {
		c->cut = 1;
		return 1;
	}
	/* the fields lie in [fr_base, fr_base + fr_span): 40 bytes in 3.11, at most 104 */
	span = py->fr_span;
	if (span > 104)
		span = 104;
	if (!span || bpf_probe_read_user(pf->chunk, span, (void *)(frame + py->fr_base))) {
		c->cut = 1;
		return 1;
	}
	base = py->fr_base;
	if (py->fr_flag != PY_NONE)
		flag = pf->chunk[(py->fr_flag - base) & 127];
	code = chunk_u64(pf, py->fr_code - base);
	c->frame = chunk_u64(pf, py->fr_prev - base);
	if (c->frame == frame) /* a frame its own caller: a chain being rewritten */
		c->frame = 0;
	if (py->run == PY_RUN_SHIM && flag == PY_CSTACK) {
		/* the entry frame on the C stack: it marks the run before it */
		for (i = 0; i < PY_MAX_FRAMES; i++) {
			__u32 k = c->run_start + i;

			if (k >= n)
				break;
			barrier_var(k);
			pf->marker[k & (PY_SLOTS - 1)] = frame;
		}
		c->run_start = n;
		return 0;
	}
	if (!code || code >= 0x800000000000ULL) {
		c->cut = 1;
		return 1;
	}
	instr = chunk_u64(pf, py->fr_instr - base);
	if (py->co_code == PY_NONE) {
		lasti = (__u32)instr; /* 3.10: f_lasti, an int */
	} else {
		__u64 base = code + py->co_code;

		lasti = instr >= base && instr - base < 2ull * PY_LASTI_NONE ?
				(__u32)((instr - base) / 2) :
				PY_LASTI_NONE;
	}
	if (lasti > PY_LASTI_NONE)
		lasti = PY_LASTI_NONE;
	bpf_probe_read_user(&g, 8, (void *)(code + py->co_guard));
	guard = (__u32)g ^ (__u32)(g >> 32);
	pf->code[n] = PY_WORD | code;
	pf->pos[n] = PY_WORD | PY_WORD_POS | (__u64)lasti << 32 | guard;
	pf->marker[n] = py->run == PY_RUN_SHIM ? 0 : c->cframe;
	c->nr = n + 1;
	py_announce(c, pf, code, guard);
	/* the run of one native activation ends here: the next has the previous cframe */
	if ((py->run == PY_RUN_ENTRY && flag) || py->run == PY_RUN_ONE) {
		__u64 prev = 0;

		if (c->cframe)
			bpf_probe_read_user(&prev, 8, (void *)(c->cframe + py->cf_prev));
		c->cframe = prev;
	}
	return 0;
}

static long py_collect_step(__u32 i, struct py_collect *c)
{
	return py_collect_frame(&c->c, c->py, c->pf) ? 1 : 0;
}

/*
 * Collects the current thread's Python frames (innermost first) for process @pid: their
 * words and each run's marker. Returns how many, 0 when the thread has no thread state.
 */
static __always_inline __u32 py_collect(struct task_struct *task, const struct kunwind_python *py,
					struct py_frames *pf, __u32 pid, __u64 gen)
{
	struct py_collect c = {.py = py, .pf = pf, .c = {.pid = pid, .gen = gen}};
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase), tstate = 0, slot, top = 0;
	__u32 key = 0;

	if (!fsbase || bpf_probe_read_user(&key, 4, (void *)py->tss_key))
		return 0;
	if (key < 32) {
		slot = fsbase + py->specific + 16ull * key + 8;
	} else {
		/* glibc: the second level, a pointer per 32 keys after the first block */
		__u64 block = 0;

		if (key >= 1024 || bpf_probe_read_user(&block, 8, (void *)(fsbase + py->specific +
									     512 + 8ull * (key / 32))) ||
		    !block)
			return 0;
		slot = block + 16ull * (key % 32) + 8;
	}
	if (bpf_probe_read_user(&tstate, 8, (void *)slot) || !tstate)
		return 0;
	if (py->ts_cframe != PY_NONE &&
	    bpf_probe_read_user(&c.c.cframe, 8, (void *)(tstate + py->ts_cframe)))
		return 0;
	if (py->cf_frame != PY_NONE) {
		if (!c.c.cframe ||
		    bpf_probe_read_user(&top, 8, (void *)(c.c.cframe + py->cf_frame)))
			return 0;
	} else if (bpf_probe_read_user(&top, 8, (void *)(tstate + py->ts_frame))) {
		return 0;
	}
	stat_inc(STAT_PY_WALKS);
	c.c.frame = top;
	bpf_loop(2 * PY_MAX_FRAMES, py_collect_step, &c, 0);
	if (c.c.cut)
		stat_inc(STAT_PY_CUT);
	return c.c.nr;
}

/* The walk in progress, for bpf_loop (its context must lie on the stack). */
struct kunwind_walk {
	struct kunwind_regs regs;
	struct kunwind_proc *proc;
	struct stack_trace *out;
	__u32 py_nr;	      /* Python frames to splice in (py_frames_map) */
	__u32 py_next;	      /* the next to put in the stack */
	__u64 py_emit;	      /* the marker of the run being put in; 0: none */
	__u32 py_all;	      /* the native walk ended: the rest go at the root end */
	__u32 native_done;
	__u32 native_i; /* native frames walked */
	__u32 frames;	/* frames in the stack so far (its parts stored included) */
};

/* The marker of Python frame @i in @pf, or 0. */
static __always_inline __u64 py_marker(const struct py_frames *pf, __u32 i)
{
	return i < PY_MAX_FRAMES && pf ? pf->marker[i] : 0;
}

/*
 * Puts Python frames @from.. of @pf in @out: those of marker @m (a run), or with @m 0
 * every one up to @nr (no run has marker 0), until @out is full. Global, verified once;
 * @w's fields stay with the caller (a global function given @w would leave the verifier
 * nothing known of its pointers). Returns the index of the next frame, or -1.
 */
__noinline int py_emit_run(const struct py_frames *pf, struct stack_trace *out, __u32 from,
			   __u32 nr, __u64 m)
{
	__u32 i, n;

	if (!pf || !out)
		return -1;
	for (i = from; i < nr && i < PY_MAX_FRAMES; i++) {
		if (m && pf->marker[i] != m)
			break;
		n = out->nr;
		if (n >= SCORCH_MAX_STACK_DEPTH - 1)
			break;
		out->ips[n] = pf->code[i];
		out->ips[n + 1] = pf->pos[i];
		out->nr = n + 2;
		stat_inc(STAT_PY_FRAMES);
	}
	return (int)i;
}

static long kunwind_step(__u32 i, struct kunwind_walk *w)
{
	struct py_frames *pf = NULL;
	__u32 n, zero = 0;
	__u64 sp, m;
	int done;

	/* a full stack is stored, and continued by its next part; past the map's room the
	 * walk ends with the leaf's part */
	if (w->out->nr >= SCORCH_MAX_STACK_DEPTH - 1 && stack_chain(w->out)) {
		w->regs.end = STAT_KU_END_FULL;
		return 1;
	}
	/* (looked up here: a pointer kept in @w would reach this callback as a number) */
	if (w->py_nr)
		pf = bpf_map_lookup_elem(&py_frames_map, &zero);
	/* a run to put in, or the rest after the native walk ended */
	if (w->py_next < w->py_nr && (w->py_all || w->py_emit)) {
		__u32 room = max_user_depth > w->frames ? max_user_depth - w->frames : 0;
		int next = py_emit_run(pf, w->out, w->py_next,
				       w->py_nr - w->py_next > room ? w->py_next + room : w->py_nr,
				       w->py_all ? 0 : w->py_emit);

		if (next < 0)
			return 1;
		w->frames += (__u32)next - w->py_next;
		w->py_next = (__u32)next;
		if (w->frames >= max_user_depth && w->py_next < w->py_nr) {
			w->regs.end = STAT_KU_END_DEPTH;
			return 1;
		}
		/* @out filled up before the run ended: the next step goes on with it */
		if (w->out->nr >= SCORCH_MAX_STACK_DEPTH - 1)
			return 0;
	}
	w->py_emit = 0;
	if (w->native_done) {
		if (w->py_next >= w->py_nr || w->py_all)
			return 1;
		stat_inc(STAT_PY_UNMATCHED);
		w->py_all = 1;
		return 0;
	}
	sp = w->regs.sp;
	m = py_marker(pf, w->py_next);
	/* a run whose activation was passed unseen: put in before the next frame */
	if (w->py_next < w->py_nr && m && m < sp) {
		stat_inc(STAT_PY_UNMATCHED);
		w->py_emit = m;
		return 0;
	}
	if (w->frames >= max_user_depth) {
		w->regs.end = STAT_KU_END_DEPTH;
		return 1;
	}
	n = w->out->nr;
	done = kunwind_frame(&w->regs, w->proc, w->out, w->native_i++);
	w->frames += w->out->nr - n;
	if (done) {
		w->native_done = 1;
		return w->py_next < w->py_nr && w->regs.end != STAT_KU_END_DEPTH ? 0 : 1;
	}
	/* this frame's stack, [sp, the caller's sp), holds the marker: its activation
	 * ran that run, which takes its place */
	if (w->py_next < w->py_nr && m && m >= sp && m < w->regs.sp) {
		w->out->nr = n;
		w->frames--;
		w->py_emit = m;
	}
	return 0;
}

/* Whether image (@pid, @gen) runs CPython with a layout the walk knows. */
static __always_inline bool kunwind_has_python(__u32 pid, __u64 gen)
{
	struct kunwind_proc *proc = bpf_map_lookup_elem(&kunwind_procs, &pid);

	return proc && (!proc->gen || proc->gen == gen) && proc->py.tss_key;
}

/*
 * Walks the user stack of the current task (a user thread of image @pid, @gen) into
 * @out, with its Python frames in place of the eval loop's native frames when the
 * process runs CPython. Returns false when that image has no tables (yet: a process new
 * to user space, or just exec'd): the caller walks frame pointers instead.
 */
static __always_inline bool kunwind_user(struct task_struct *task, __u32 pid, __u64 gen,
					 struct stack_trace *out)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct kunwind_walk w = {};
	__u32 zero = 0;

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
	out->flags = 0;
	if (!w.regs.ip)
		return true;
	if (w.proc->py.tss_key) {
		struct py_frames *pf = bpf_map_lookup_elem(&py_frames_map, &zero);

		if (pf)
			w.py_nr = py_collect(task, &w.proc->py, pf, pid, gen);
	}
	stat_inc(STAT_KU_WALKS);
	bpf_loop(2 * SCORCH_MAX_USER_DEPTH + 2, kunwind_step, &w, 0);
	if (w.regs.end)
		stat_inc((__u32)w.regs.end);
	if (w.regs.end == STAT_KU_END_DEPTH || w.regs.end == STAT_KU_END_FULL)
		out->flags |= STACK_DEEP;
	return true;
}

#endif /* SCORCH_KUNWIND_BPF_H */
