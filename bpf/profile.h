/* SPDX-License-Identifier: MIT */
/* Structs shared by the BPF programs and user space: fixed-width types only. */
#ifndef SCORCH_PROFILE_H
#define SCORCH_PROFILE_H

/* words of one stored stack (kernel.perf_event_max_stack's default) */
#define SCORCH_MAX_STACK_DEPTH 127
/* user frames a walk with tables (in the BPF program, or here) keeps: at most, by default
 * (record --max-depth) */
#define SCORCH_MAX_USER_DEPTH 1024
#define SCORCH_DEF_USER_DEPTH 512
#define SCORCH_COMM_LEN        16
#define SCORCH_STACK_PROBES    4 /* linear probes on a 64-bit stack-hash collision */
#define SCORCH_MAX_STACK_COPY  65536 /* --unwind dwarf: copy buffer; copies are < this */
/* values of map "pids": a process followed; one followed from its next exec (record --
 * cmd: the command, held between scorch's fork and its exec) */
#define SCORCH_PID_FOLLOWED    1
#define SCORCH_PID_AT_EXEC     2

/* Loss and event counters, one per-CPU u64 each (map "stats" of each program). */
enum scorch_stat {
	/* oncpu */
	STAT_SAMPLES = 0,     /* samples of matching tasks */
	STAT_IDLE,            /* samples of the idle task, skipped (no -I) */
	STAT_COUNTED,         /* samples added to "counts" */
	STAT_LOST_COUNTS,     /* "counts" full or out of memory: sample dropped */
	STAT_LOST_STACKS,     /* "stacks" full or out of memory: sample dropped */
	STAT_LOST_COLLISION,  /* SCORCH_STACK_PROBES distinct stacks on one hash: dropped */
	STAT_USTACK_ERR,      /* user stack walk failed: counted as [missed user stack] */
	STAT_KSTACK_ERR,      /* kernel stack walk failed: counted as [missed kernel stack] */
	STAT_LOST_EVENTS,     /* process notifications lost (ring buffer full) */
	STAT_PROCS_FULL,      /* "procs" full: process not announced (symbolized late) */
	STAT_FORKS_FOLLOWED,  /* children added to the PID filter (record -- cmd) */
	STAT_EXITS,           /* announced processes that exited (reported to user space) */
	/* offcpu */
	STAT_SWITCHES,        /* switch-outs of matching threads (stacks walked) */
	STAT_OFF_COUNTED,     /* off-CPU intervals counted */
	STAT_OFF_SHORT,       /* intervals below --min-block, dropped as asked */
	STAT_OFF_LONG,        /* intervals above --max-block, dropped as asked */
	STAT_LOST_START,      /* "start" full: an interval was not tracked */
	/* --unwind dwarf */
	STAT_SAMPLES_SENT,    /* sample records written to ring buffer "samples" */
	STAT_LOST_RINGBUF,    /* ring buffer "samples" full: sample dropped */
	STAT_STACK_PARTIAL,   /* less than --stack-size above sp was readable (stack top) */
	STAT_SAMPLE_BYTES,    /* bytes written to ring buffer "samples" */
	/* --unwind dwarf, offcpu */
	STAT_OFF_COPIES,      /* stack copies sent at switch-out (STAT_SAMPLES_SENT counts them too) */
	STAT_LOST_INTERVAL,   /* interval records lost (ring buffer "samples" full) */
	STAT_OFF_UNENDED,     /* switch-out of a thread whose last interval saw no switch-in */
	STAT_STACK_TOP,       /* copies that ended at the thread's known stack top */
	STAT_MAPS_CHANGED,    /* SCORCH_EVENT_MAPS sent: executable mappings changed */
	/* wall mode: sample periods that passed unsampled while a thread kept its CPU
	 * (throttling, steal) */
	STAT_MISSED_PERIODS,  /* oncpu: ended by a sample of that thread (credited to it) */
	STAT_MISSED_TAIL,     /* offcpu, wall mode: ended by its switch-out (no sample) */
	STAT_COUNT_KEYS,      /* keys created in "counts" (user space deletes those it reaps) */
	/* offcpu */
	STAT_OFF_WOKEN,       /* intervals split at their wakeup: blocked, then [runqueue] */
	STAT_OFF_CUT,         /* parts of open intervals counted at an --interval boundary */
	STAT_OFF_RACED,       /* switch-ins that lost their slot to a concurrent change: not counted */
	/* --unwind kernel: how user stacks ended */
	STAT_KU_WALKS,        /* walks with tables */
	STAT_KU_NO_PROC,      /* stacks of processes without tables yet: frame pointers */
	STAT_KU_OUTERMOST,    /* ended at the outermost frame (complete) */
	STAT_KU_FP_STEPS,     /* frames stepped by frame pointer (no rule) */
	STAT_KU_END_NO_INFO,  /* ended: no rule and no frame pointer */
	STAT_KU_END_READ,     /* ended: stack memory unreadable (not paged in) */
	STAT_KU_END_BAD,      /* ended: the caller's registers made no sense */
	STAT_KU_END_DEPTH,    /* ended at the depth limit */
	/* --unwind kernel, CPython processes */
	STAT_PY_WALKS,        /* stacks of a thread with a Python thread state */
	STAT_PY_FRAMES,       /* Python frames put in stacks */
	STAT_PY_UNMATCHED,    /* runs of Python frames put where no native frame held them */
	STAT_PY_CUT,          /* walks cut: a frame unreadable, or more than PY_MAX_FRAMES */
	/* event --latency */
	STAT_CALLS_ABANDONED, /* outermost calls left without a return (longjmp, exception) */
	/* offcpu, offwake mode */
	STAT_WAKERS,          /* wakers captured at sched_waking of a matching thread */
	STAT_WAKE_COUNTED,    /* blocked intervals counted under their waker */
	STAT_WAKE_NONE,       /* blocked intervals with no waker seen: under [unknown waker] */
	STAT_WAKE_LOST,       /* waker stacks not stored ("stacks" full): under [unknown waker] */
	/* --unwind kernel */
	STAT_KU_END_FULL,     /* ended: a part of a deep stack not stored ("stacks" full) */
	STAT_PERIODS,         /* -F's periods the on-CPU samples stand for (their weights) */
	STAT_OFF_JOINED,      /* switch-outs of a thread that has not run since its last: one wait */
	STAT_OFF_RECOVERED,   /* intervals whose switch-in was not traced, ended at its time */
	STAT_KU_PY_TRAMPOLINES, /* CPython perf trampolines stepped through, left out */
	STAT_USER_LEAF,       /* user stacks not walkable (exit, exec): their leaf alone */
	/* chain mode: wakings by a target whose own last waker was known (copied one level
	 * up), and wakings in an interrupt (the chain ends there) */
	STAT_CHAIN_LINKED,
	STAT_CHAIN_IRQ,
	STAT_EXEC_LEAF, /* samples in an exec's window: leaf alone, of the image it replaced */
	SCORCH_NR_STATS,
};

/*
 * --unwind kernel: the BPF programs walk user stacks with tables compiled from the
 * files' .eh_frame (unwind/'s unwind_ktable__build() writes these rows; this is their
 * one definition). Map "kunwind_rows" holds every file's rows, each file a range of it;
 * map "kunwind_procs" gives, by PID, the executable mappings that have rows, sorted.
 */
#define KUNWIND_MAX_MAPS 128

enum kunwind_cfa {
	KROW_INVALID = 0, /* no rule to follow here (a gap, or not supported) */
	KROW_RSP,	  /* CFA = rsp + cfa_off */
	KROW_RBP,	  /* CFA = rbp + cfa_off */
	KROW_PLT,	  /* .plt: CFA = rsp + 8, and 8 more once (pc & 15) >= cfa_off */
	KROW_STOP,	  /* the outermost frame (the return address is undefined) */
};

enum kunwind_rbp {
	KROW_RBP_SAME = 0, /* the caller's rbp is this frame's */
	KROW_RBP_SAVED,	   /* saved at CFA + rbp_off */
	KROW_RBP_LOST,	   /* not recoverable here: the caller's rbp is unknown */
};

/* A row is valid from its @pc up to the next row's. */
struct kunwind_row {
	__u32 pc; /* ELF virtual address where the row begins */
	__u8 cfa; /* enum kunwind_cfa */
	__u8 rbp; /* enum kunwind_rbp */
	__s16 rbp_off;
	__s32 cfa_off;
};

struct kunwind_map {
	__u64 start, end; /* [start, end) of the mapping */
	__u64 bias;	  /* address - ELF virtual address */
	__u32 lo, hi;	  /* its file's rows: [lo, hi) of "kunwind_rows" */
};

/*
 * CPython's frames, walked beside the native ones (struct kunwind_python). A Python frame
 * takes two words of a user stack: PY_WORD | its code object's address, then
 * PY_WORD | PY_WORD_POS | lasti << 32 | guard, where lasti is the index of the code unit
 * it executes (PY_LASTI_NONE: not started) and guard the code object's PY_GUARD bytes
 * folded, which tell two code objects at one address apart. User addresses never have
 * bit 63 set.
 */
#define PY_WORD	      (1ull << 63)
#define PY_WORD_POS   (1ull << 62)
#define PY_LASTI_NONE 0x3fffffffu
#define PY_MAX_FRAMES 56     /* per stack */
#define PY_NONE	      0xffff /* an offset that does not exist in this version */
#define PY_CSTACK     3      /* 3.12+: owner of a frame on the C stack (an eval loop's entry) */

enum py_runs {
	PY_RUN_ONE = 1, /* 3.10: every native eval activation runs one frame */
	PY_RUN_ENTRY,	/* 3.11: a run ends at its frame with is_entry set */
	PY_RUN_SHIM,	/* 3.12+: a run ends before a frame owned by PY_CSTACK */
};

/*
 * How to find and walk a thread's Python frames in one process (offsets in bytes, from
 * the interpreter's version: python/python.c). The thread's PyThreadState is in glibc's
 * thread-specific data under CPython's pthread key: fsbase + @specific + 16 * key + 8.
 * A run of frames belongs to the native eval activation whose stack frame holds its
 * marker: the _PyCFrame of that activation (3.10, 3.11) or the entry frame that ends the
 * run (3.12+); so runs are spliced where the activations are, whatever their code.
 */
struct kunwind_python {
	__u64 tss_key;	 /* address of the pthread key (u32) of thread states; 0: not CPython */
	__u16 specific;	 /* glibc's struct pthread: specific_1stblock */
	__u16 ts_cframe; /* PyThreadState: cframe (PY_NONE: 3.13) */
	__u16 ts_frame;	 /* PyThreadState: the innermost frame, if cf_frame is PY_NONE */
	__u16 cf_frame;	 /* _PyCFrame: current_frame (PY_NONE: 3.10, 3.13) */
	__u16 cf_prev;	 /* _PyCFrame: previous */
	__u16 fr_code;	 /* frame: its code object */
	__u16 fr_prev;	 /* frame: the caller's */
	__u16 fr_instr;	 /* frame: the instruction (3.11+), or f_lasti (3.10: int) */
	__u16 fr_flag;	 /* frame: is_entry (3.11), owner (3.12+); PY_NONE: 3.10 */
	__u16 co_code;	 /* code: the bytecode (PY_NONE: fr_instr is f_lasti) */
	__u16 co_guard;	 /* code: 8 bytes that differ between code objects (PY_GUARD) */
	__u8 run;	 /* enum py_runs */
	__u8 fr_base;	 /* the fields above lie in [fr_base, fr_base + fr_span) of a frame */
	__u8 fr_span;	 /* (<= 104): one read of a frame */
	__u8 pad[7];
};

struct kunwind_proc {
	__u64 gen; /* the image the mappings are of (struct scorch_event's gen); 0: any */
	__u32 nr;
	__u32 pad;
	struct kunwind_python py;
	struct kunwind_map maps[KUNWIND_MAX_MAPS];
};

/* Flags in count_key.flags */
#define KEY_USER_MISSED   (1u << 0)
#define KEY_KERNEL_MISSED (1u << 1)
#define KEY_RUNQUEUE      (1u << 2) /* off CPU runnable (preempted, or woken): waiting for a CPU */
#define KEY_USER_TRUNCATED (1u << 3) /* user space: unwinding ran past the copied stack */
#define KEY_OFFCPU_COPY    (1u << 4) /* offcpu slot: the stacks went to ring buffer "samples" */
#define KEY_WAKER	   (1u << 6) /* offwake: a wake_key whose waker names who woke it */
#define KEY_NO_WAKER	   (1u << 7) /* offwake: blocked, no wakeup seen: [unknown waker] */
/* user space: the user stack stopped at its walk's depth limit (STACK_DEEP, or the
 * unwinder's): its root is [truncated] */
#define KEY_USER_DEEP	   (1u << 9)
/* the user stack is its leaf alone, the interrupted instruction: the kernel could not walk
 * the process's memory (torn down at its exit, replaced by an exec). Its root is [unknown] */
#define KEY_USER_LEAF	   (1u << 10)
/* scorch_sample.flags only (never in a count_key): the copy ended at the thread's stack top */
#define SAMPLE_STACK_TOP (1u << 5)

/*
 * --unwind dwarf: value of map "stack_tops", by TID, written by user space: how far up the
 * stack of thread @tid the complete walks of its samples read (the outermost frame's
 * saved registers). Copies of its stack then end there instead of at the end of the
 * mapping, several KiB higher. @key (scorch_sample.thread_key) tells a reused TID and an
 * exec (another stack) apart.
 */
struct stack_top {
	__u64 key;
	__u64 top;
};

/*
 * Value of map "stacks": a stack, leaf first, as bpf_get_stack() returns it. A user stack
 * deeper than one value is stored in parts of up to SCORCH_MAX_STACK_DEPTH words, the
 * leaf's first: each next part begins with the id of the one before (STACK_CHAINED),
 * and the id counted is the last part's, which holds the root.
 */
struct stack_trace {
	__u32 nr;
	__u32 flags; /* STACK_* */
	__u64 ips[SCORCH_MAX_STACK_DEPTH];
};

#define STACK_CHAINED (1u << 0) /* ips[0] is the id of the part nearer the leaf */
#define STACK_DEEP    (1u << 1) /* the walk stopped at its depth limit: the root is cut */
/* Words of a user stack read back whole: its frames, and a Python frame's second word. */
#define SCORCH_STACK_WORDS (SCORCH_MAX_USER_DEPTH + PY_MAX_FRAMES)

/*
 * Key of map "counts"; the value is a __u64: a sample count (oncpu) or nanoseconds off
 * CPU (offcpu). Stack id 0: no stack.
 */
struct count_key {
	__u32 pid; /* thread group id */
	__u32 flags;
	__u64 gen; /* which image of process @pid: see scorch_event.gen */
	__u64 user_stack;
	__u64 kernel_stack;
	char comm[SCORCH_COMM_LEN]; /* thread name */
};

#define WAKER_KTHREAD (1u << 8) /* waker.flags: the waker (or the interrupted task) is a kthread */

/*
 * offwake mode: the task whose sched_waking woke a thread, its process image and stacks
 * (ids in "stacks"), and KEY_USER_MISSED / KEY_KERNEL_MISSED / WAKER_KTHREAD for them.
 */
struct waker {
	__u64 gen;
	__u64 user_stack;
	__u64 kernel_stack;
	__u32 pid;
	__u32 flags;
	char comm[SCORCH_COMM_LEN];
};

/*
 * Chain graphs: the wakers a blocked interval is counted under, at most SCORCH_CHAIN_MAX:
 * its waker, the waker's own waker at its last wakeup, and so on up the chain.
 */
#define SCORCH_CHAIN_MAX 4

/*
 * Key of map "wake_counts" (offwake and chain modes; the others count in "counts" alone):
 * the blocked part of an interval by the blocked thread's key (flags KEY_WAKER, or
 * KEY_NO_WAKER with the wakers zeroed) and its wakers: @waker, then (chain mode) @chain,
 * the waker's waker first, ended by a zeroed one. The map's keys hold WAKE_KEY_SIZE(n)
 * bytes, n the wakers kept (user space sets it: 1 in offwake mode). The value is
 * nanoseconds, as in "counts", which keeps the runqueue parts.
 */
struct wake_key {
	struct count_key key;
	struct waker waker;
	struct waker chain[SCORCH_CHAIN_MAX - 1];
};

#define WAKE_KEY_SIZE(n) (sizeof(struct count_key) + (n) * sizeof(struct waker))

/*
 * Map "start" of offcpu: a matching thread that switched out, by TID. Its stacks can
 * only be read while it is current, so they are walked at switch-out into this slot;
 * they are hashed, stored and counted at switch-in only if the interval is kept. A
 * blocked interval is split at its first sched_wakeup: [ts, wake) under the key,
 * [wake, switch-in) under the key with KEY_RUNQUEUE. With --interval, each boundary
 * counts the part of the interval before it and moves @ts there (offcpu_cut); the
 * whole interval, from @first, is what --min-block and --max-block judge. @ts is
 * claimed with compare-and-swap by the switch-in (to 0) and by a cut (to the boundary).
 */
struct offcpu_start {
	__u64 ts;    /* switch-out time, or the last --interval boundary since, ns; 0: on CPU */
	__u64 wake;  /* its wakeup (sched_wakeup), ns; 0: none yet, or a runqueue interval */
	__u64 first; /* switch-out time, ns, once the slot is filled; 0 while it is */
	__u64 task;  /* its task_struct, for offcpu_cut (0: a thread read from /proc) */
	/* offwake: the thread's last switch-in, and the last sched_waking of it (ns), whose
	 * @waker woke the interval when it came after @last_in */
	__u64 last_in;
	__u64 waking;
	/* the thread's CPU time (se.sum_exec_runtime, ns) at the switch-out; 0: unknown */
	__u64 ran;
	struct waker waker;
	/* chain mode: @waker's own waker at its last wakeup, and so on (zeroed: none) */
	struct waker chain[SCORCH_CHAIN_MAX - 1];
	struct count_key key; /* stack ids unset */
	struct stack_trace user;
	struct stack_trace kernel;
};

/*
 * Map "inside" of the event program (record --event --latency): the outermost call of
 * the probed function a thread is inside, by TID: entered at @ts with @key's stacks
 * (stored at entry), its stack pointer @sp at entry. Nested and recursive calls (below
 * @sp on the stack) only move @depth: the time inside the function is the outermost
 * call's, counted once, when a return comes back above @sp.
 */
struct latency_slot {
	__u64 ts;
	__u32 depth;
	__u32 pad;
	__u64 sp;
	struct count_key key;
};

enum scorch_event_type {
	SCORCH_EVENT_NEW = 1, /* first sample of this (pid, gen): a new process or a new image */
	SCORCH_EVENT_EXIT,    /* an announced process exited (its last thread) */
	SCORCH_EVENT_SAMPLE,  /* --unwind dwarf: struct scorch_sample, ring buffer "samples" */
	SCORCH_EVENT_REPLACED, /* the image (pid, gen) was replaced by an exec: it runs no more */
	SCORCH_EVENT_OFFCPU_COPY, /* --unwind dwarf, offcpu: struct scorch_sample at switch-out */
	SCORCH_EVENT_INTERVAL,    /* --unwind dwarf, offcpu: struct scorch_interval at switch-in */
	SCORCH_EVENT_MAPS,        /* the executable mappings of (pid, gen) changed: read them again */
	SCORCH_EVENT_PYCODE,      /* a Python code object first seen in (pid, gen)'s stacks: its
				   * address in @pgen, its guard in @ppid; read it while it lives */
};

/*
 * Value of map "procs", by PID: the image announced to user space and what its
 * mappings looked like when user space was last told to read them. A sample that finds
 * mm->exec_vm (pages mapped executable and not writable: every ELF text, vDSO aside, a
 * jitdump mapped for perf, JIT code made read-only) changed sends SCORCH_EVENT_MAPS, at
 * most once per SCORCH_MAPS_EVENT_NS per process, so that mappings made after the first
 * sample (dlopen, JIT code) are read while the process lives.
 */
struct proc_state {
	__u64 gen;
	__u64 exec_vm; /* mm->exec_vm at the last SCORCH_EVENT_NEW or SCORCH_EVENT_MAPS */
	__u64 next_ns; /* no SCORCH_EVENT_MAPS before this time (bpf_ktime_get_ns) */
};

#define SCORCH_MAPS_EVENT_NS 100000000ull /* 100 ms */

/*
 * Ring buffer record: one per process image, not per sample. A process image is
 * (pid, gen): gen = start time of the thread group leader (ns since boot) + the
 * leader's exec count (task_struct.self_exec_id), so it changes at every exec and
 * differs between two processes that reuse a PID.
 */
struct scorch_event {
	__u32 type;
	__u32 pid;
	__u64 gen;
	/*
	 * SCORCH_EVENT_NEW of a child that has not exec'd since its fork (a worker of a
	 * pool, the instant between fork and exec): the image (@ppid, @pgen) of its parent,
	 * announced before it, whose mappings it still has (same layout, same executable
	 * pages). User space may copy the parent's snapshot instead of reading the child's
	 * maps, which show the next image already if it exec'd meanwhile. 0 otherwise.
	 */
	__u32 ppid;
	__u32 flags; /* SCORCH_EVENT_F_* */
	__u64 pgen;
	/* when it was sent (bpf_ktime_get_ns(): CLOCK_MONOTONIC): for SCORCH_EVENT_NEW and
	 * SCORCH_EVENT_MAPS, a time at which the image was running, to find it among the
	 * kernel's mmap records (profiler/sideband.c) */
	__u64 ts;
};

/*
 * scorch_event.flags of a SCORCH_EVENT_NEW: the image is one an exec has replaced
 * already (its registers were seen in the exec's window, see exec_image_gen() in
 * bpf/stacks.bpf.h); its mappings are (@ppid, @pgen)'s, and neither /proc/PID/maps nor
 * the mmap records at @ts show them any more.
 */
#define SCORCH_EVENT_F_REPLACED (1u << 0)

/*
 * --unwind dwarf: one record per sample (or per off-CPU interval), unwound in user
 * space. The record is the header, then the @kernel_nr addresses of the kernel stack
 * (__u64, leaf first: walked in the kernel as in fp mode), then @stack_len bytes of the
 * user stack copied from @sp upwards: sizeof(struct scorch_sample) + 8 * kernel_nr +
 * stack_len bytes, the addresses 8-byte aligned.
 *
 * Off CPU (type SCORCH_EVENT_OFFCPU_COPY) the copy is taken at switch-out, when the
 * interval's length is not known yet: @value is then the switch-out time (ns), and
 * the struct scorch_interval with the same @tid and @ts, written at switch-in, gives
 * the length. In one ring buffer the interval always follows its copy (records are
 * ordered by reservation, and switch-in comes after switch-out).
 */
struct scorch_sample {
	__u32 type; /* SCORCH_EVENT_SAMPLE */
	__u32 pid;
	__u64 gen;
	__u32 tid;
	__u32 flags;  /* KEY_* */
	__u64 value;  /* 1 sample, or nanoseconds off CPU */
	__u64 thread_key; /* the thread's start time + @gen: see struct stack_top */
	char comm[SCORCH_COMM_LEN];
	__u64 ip, sp, bp; /* user registers (x86_64 rip, rsp, rbp) */
	__u32 stack_len;  /* bytes of stack that follow the kernel addresses */
	__u32 kernel_nr;  /* kernel addresses that follow the header (<= SCORCH_MAX_STACK_DEPTH) */
	/* followed by kernel_nr __u64 addresses, then stack_len bytes of stack */
};

#define INTERVAL_DROPPED (1u << 0) /* outside --min-block/--max-block: copy to be dropped */
#define INTERVAL_PARTIAL (1u << 1) /* the part before an --interval boundary: copy kept */

/* --unwind dwarf, offcpu: the end of an interval whose stacks were copied at switch-out. */
struct scorch_interval {
	__u32 type; /* SCORCH_EVENT_INTERVAL */
	__u32 pid;
	__u64 gen;
	__u32 tid;
	__u32 flags; /* INTERVAL_* */
	__u64 ts;    /* switch-out time: the copy's value */
	__u64 value; /* nanoseconds off CPU (since the last --interval boundary) */
	__u64 runq;  /* of which on a runqueue after the wakeup (the copy's key has no
		      * KEY_RUNQUEUE), counted under the key with KEY_RUNQUEUE */
};

#endif /* SCORCH_PROFILE_H */
