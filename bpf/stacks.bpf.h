/* SPDX-License-Identifier: GPL-2.0 */
/* BPF-only: the maps and helpers every scorch program shares (each object has its own copy). */
#ifndef SCORCH_STACKS_BPF_H
#define SCORCH_STACKS_BPF_H

#define PF_KTHREAD 0x00200000
#define EEXIST	   17

/* Set by user space before load. */
const volatile bool user_only = false;
const volatile bool kernel_only = false;
const volatile bool filter_pid = false;
const volatile bool filter_tid = false;
const volatile bool follow_forks = false;
/* --unwind dwarf: user stacks are copied to ring buffer "samples", not walked */
const volatile bool unwind_dwarf = false;
const volatile __u32 stack_size = 16384; /* bytes copied from sp, <= SCORCH_MAX_STACK_COPY */
/* user frames the kernel's frame-pointer walk keeps (kernel.perf_event_max_stack, at most
 * SCORCH_MAX_STACK_DEPTH), and the walk with tables (record --max-stack) */
const volatile __u32 fp_depth = SCORCH_MAX_STACK_DEPTH;
const volatile __u32 max_user_depth = SCORCH_DEF_USER_DEPTH;
/* --unwind dwarf: user space is woken once this many bytes wait in "samples" (0: at every
 * record). A wake-up per sample would switch to scorch 2,000 times a second at 999 Hz on two
 * CPUs, preempting the sampled threads; user space also reads the ring on a timer. */
const volatile __u64 wakeup_bytes = 0;
/* the cpu-clock event's period: 1e9 / -F, at least 10 us (perf_swevent_init_hrtimer) */
const volatile __u64 period_ns = 0;
/* the kernel's mmap records are read from this time on (CLOCK_MONOTONIC ns; 0: not at
 * all) by a process in the mount namespace @sideband_mntns (profiler/sideband.c) */
const volatile __u64 sideband_since = 0;
const volatile __u32 sideband_mntns = 0;

/* Set by user space (the mapped .bss) the moment the recording ends: from then on the
 * sampling programs return at once, whatever user space is still busy with. */
volatile bool stopped = false;
/* The cost governor's multiple of -F's period (profiler/governor.c; 0 or 1: none): the
 * cpu-clock events then fire every period_mult periods, and each sample stands for
 * that many, so counts stay in -F's periods however the rate was lowered. */
volatile __u32 period_mult = 0;

static __always_inline __u64 sample_weight(void)
{
	__u32 m = period_mult;

	return m > 1 ? m : 1;
}

/* --unwind kernel (kunwind.bpf.h): process images are announced at once */
const volatile bool kunwind_wanted = false;
/* -d's end (CLOCK_MONOTONIC ns; 0: none), set after the attach: the programs stop by
 * themselves then, however late user space, starved on a saturated machine, sees it */
volatile __u64 stop_at_ns = 0;

/* The recording is over at @now: stopped by user space, or past -d's end. */
static __always_inline bool sampling_over(__u64 now)
{
	return stopped || (stop_at_ns && now >= stop_at_ns);
}

/* Sizes of every map are set by user space before load (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");

/*
 * One value per key, added to atomically. A per-CPU hash would save ~50 ns a
 * sample where threads of one pool sample the same stack on several CPUs, but the
 * kernel preallocates its values one per-CPU allocation per entry: 16 ms to create at
 * 32768 entries (40 at 65536) before sampling could start, and more than that in a
 * kworker freeing them after scorch exits, in whatever runs then.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct count_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} tids SEC(".maps");

/* Processes announced to user space, by PID (struct proc_state). Entries are deleted
 * when the process exits, so the map holds live processes only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct proc_state);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* --unwind dwarf: sample records (struct scorch_sample); sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} samples SEC(".maps");

/*
 * A sample record is built here, one slot per CPU (a per-CPU value cannot exceed 32 KiB):
 * the header, the kernel addresses from data[0], the stack after them. The kernel part is
 * reserved at its bounded size (KSTACK_ROOM) so that the verifier can bound the stack's
 * offset; only kernel_nr addresses are sent.
 */
#define KSTACK_ROOM 1024 /* >= SCORCH_MAX_STACK_DEPTH * 8, a power of 2 */

struct sample_buf {
	struct scorch_sample hdr;
	__u8 data[KSTACK_ROOM + SCORCH_MAX_STACK_COPY];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* number of possible CPUs, set by user space */
	__type(key, __u32);
	__type(value, struct sample_buf);
} sample_bufs SEC(".maps");

/*
 * --unwind dwarf: where the readable stack of a thread ends (the first address that
 * faulted when its pages were probed) in address space @mm, kept with the thread and
 * freed when it exits. end 0: not known (more than --stack-size was readable).
 */
struct stack_end {
	__u64 mm, end;
	__u32 uses; /* samples since the end was found: found again every STACK_END_USES */
};

#define STACK_END_USES 16

/* --unwind dwarf: what the walks of a thread need of its stack (struct stack_top), by TID */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* set by user space */
	__type(key, __u32);
	__type(value, struct stack_top);
} stack_tops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stack_end);
} stack_ends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCORCH_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Wall mode: the last sample or switch on a CPU, from which oncpu counts the sample
 * periods its thread missed. Both objects share it (user space gives offcpu oncpu's
 * map); in other modes it is unused.
 */
struct last_tick {
	__u64 ts;  /* bpf_ktime_get_ns() */
	__u32 tid; /* the thread on the CPU since @ts */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_tick);
} last_tick SEC(".maps");

/* Whole sample periods from @from to @to, rounded: the timer fires a little early or
 * late, never half a period off. */
static __always_inline __u64 periods_between(__u64 from, __u64 to)
{
	if (!from || to <= from || !period_ns)
		return 0;
	return (to - from + period_ns / 2) / period_ns;
}

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1; /* per-CPU: no atomics needed */
}

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

static __always_inline __u64 stack_hash(const struct stack_trace *st, __u64 salt)
{
	__u64 h = (0xcbf29ce484222325ULL ^ st->nr ^ ((__u64)st->flags << 32)) + salt;
	__u32 i;

	for (i = 0; i < SCORCH_MAX_STACK_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h ^= st->ips[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

static __always_inline bool stack_equal(const struct stack_trace *a, const struct stack_trace *b)
{
	__u32 i;

	if (a->nr != b->nr || a->flags != b->flags)
		return false;
	for (i = 0; i < SCORCH_MAX_STACK_DEPTH; i++) {
		if (i >= a->nr)
			break;
		if (a->ips[i] != b->ips[i])
			return false;
	}
	return true;
}

/*
 * Stores @st under its 64-bit hash (of its words and @salt) and returns the id, or 0
 * when it could not be stored (counted). A different stack already under the same id
 * is detected by comparison and the next id is probed: collisions never merge or drop
 * silently.
 */
static __always_inline __u64 stack_store_salted(struct stack_trace *st, __u64 salt)
{
	__u64 h = stack_hash(st, salt);
	struct stack_trace *old;
	__u32 probe;
	long err;

	for (probe = 0; probe < SCORCH_STACK_PROBES; probe++) {
		__u64 id = h + probe;

		if (!id)
			id = 1;
		old = bpf_map_lookup_elem(&stacks, &id);
		if (!old) {
			err = bpf_map_update_elem(&stacks, &id, st, BPF_NOEXIST);
			if (!err)
				return id;
			if (err != -EEXIST) {
				stat_inc(STAT_LOST_STACKS);
				return 0;
			}
			/* another CPU inserted this id just now */
			old = bpf_map_lookup_elem(&stacks, &id);
			if (!old)
				continue;
		}
		if (stack_equal(old, st))
			return id;
	}
	stat_inc(STAT_LOST_COLLISION);
	return 0;
}

static __always_inline __u64 stack_store(struct stack_trace *st)
{
	return stack_store_salted(st, 0);
}

/*
 * bpf_get_stack() into @st: the kernel stack (@flags 0) or the user stack by frame
 * pointers (BPF_F_USER_STACK), a user stack as deep as that walk goes marked STACK_DEEP.
 * Returns the helper's result (bytes, or -errno).
 */
static __always_inline long stack_get(void *ctx, struct stack_trace *st, __u64 flags)
{
	long n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);

	st->flags = 0;
	st->nr = n > 0 ? n / sizeof(__u64) : 0;
	if ((flags & BPF_F_USER_STACK) && st->nr >= fp_depth)
		st->flags = STACK_DEEP;
	return n;
}

/* The user instruction @task trapped at, alone in @st, KEY_USER_LEAF added to @flags:
 * sizeof(__u64), or -1 when the registers hold no user address. */
static __always_inline long user_leaf(struct task_struct *task, struct stack_trace *st,
				      __u32 *flags)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 ip = BPF_CORE_READ(regs, ip);

	st->flags = 0;
	if (!ip || ip >= 0x800000000000ULL)
		return -1;
	st->ips[0] = ip;
	st->nr = 1;
	*flags |= KEY_USER_LEAF;
	return sizeof(__u64);
}

/*
 * The user stack of @task (current) by frame pointers; when the kernel cannot walk it
 * (the process's memory is torn down at its exit, or replaced by an exec), its leaf
 * alone, the interrupted instruction, as perf keeps it: KEY_USER_LEAF is added to
 * @flags then. Returns what bpf_get_stack() does.
 */
static __always_inline long user_stack_get(void *ctx, struct task_struct *task,
					   struct stack_trace *st, __u32 *flags)
{
	long n = stack_get(ctx, st, BPF_F_USER_STACK);

	if (n > 0)
		return n;
	if (user_leaf(task, st, flags) < 0)
		return n;
	stat_inc(STAT_USER_LEAF);
	return sizeof(__u64);
}

/* The image of @t's process: see struct scorch_event. */
static __always_inline __u64 task_gen(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_time) + BPF_CORE_READ(t, self_exec_id);
}

/*
 * Off the sampling path, pointers are followed from the current task (a BTF pointer) by
 * probe reads, not loads: the verifier checks each load of a pointer field of a trusted
 * pointer against the __safe_trusted, _or_null and __safe_rcu types it looks up by name,
 * a walk of all of vmlinux's BTF every time (kernel 6.18: 60 % of the programs' load
 * time when fork_parent() and sideband_covers() loaded theirs). The loads run at every
 * sample stay loads (this one, announce()'s mm, sample_send()'s): probe reads there cost
 * ~80 ns a sample (bench/bpf-cost.sh) to save a few ms of verification once.
 */

/* task_gen() of the current task, by direct loads (no helper call per field). */
static __always_inline __u64 current_gen(struct task_struct *cur)
{
	return cur->group_leader->start_time + cur->self_exec_id;
}

/*
 * A walk's full @st stored, and @st made the next part of the stack (STACK_CHAINED,
 * struct stack_trace): 0, or -1 when it could not be stored (counted), @st unchanged.
 * Its id is salted with the current task's process image: a part is one image's, so
 * user space deletes an exited image's parts without taking another's (the last part,
 * the one a key counts, is deleted as any stack is). Global: the verifier checks its
 * loops once.
 */
__noinline int stack_chain(struct stack_trace *st)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u64 id;

	if (!st)
		return -1;
	id = stack_store_salted(st, ((__u64)cur->tgid << 32) ^ current_gen(cur));
	if (!id)
		return -1;
	st->nr = 1;
	st->flags = STACK_CHAINED;
	st->ips[0] = id;
	return 0;
}

/*
 * Sends event @type of (@pid, @gen) to user space. @flags: BPF_RB_FORCE_WAKEUP wakes user
 * space (a new image's maps must be read while it lives), BPF_RB_NO_WAKEUP leaves the
 * event for the next read (an exit: the reap waits for a period anyway; the wake-up
 * would cost an interrupt here and a switch to scorch for nothing). Forced, because a
 * plain submit wakes only a consumer that had read everything: it would not behind an
 * exit left unread.
 */
static __always_inline void emit_from(__u32 type, __u32 pid, __u64 gen, __u32 ppid, __u64 pgen,
				      __u32 evflags, __u64 flags)
{
	struct scorch_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(STAT_LOST_EVENTS);
		return;
	}
	e->type = type;
	e->pid = pid;
	e->gen = gen;
	e->ppid = ppid;
	e->flags = evflags;
	e->pgen = pgen;
	e->ts = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, flags);
}

static __always_inline void emit(__u32 type, __u32 pid, __u64 gen, __u64 flags)
{
	emit_from(type, pid, gen, 0, 0, 0, flags);
}

/*
 * The image the parent of @leader's process ran when it forked it (@fork_exec_id: the
 * leader's parent_exec_id) in *@ppid and *@pgen: true when that is the parent's image
 * last announced, with @exec_vm executable pages.
 */
static __always_inline bool fork_parent_known(struct task_struct *leader, __u64 fork_exec_id,
					      __u64 exec_vm, __u32 *ppid, __u64 *pgen)
{
	struct task_struct *parent = BPF_CORE_READ(leader, real_parent);
	struct proc_state *known;

	*ppid = BPF_CORE_READ(parent, tgid);
	*pgen = BPF_CORE_READ(parent, group_leader, start_time) + fork_exec_id;
	known = bpf_map_lookup_elem(&procs, ppid);
	return known && known->gen == *pgen && known->exec_vm == exec_vm;
}

/*
 * For the SCORCH_EVENT_NEW of @cur's process, whose mm has @exec_vm executable pages:
 * when the process is a child that has not exec'd since its fork, still has its
 * parent's layout (stack, code and heap starts: fork copies them, an exec randomizes
 * them) and executable pages, and the parent's image was announced with those pages,
 * sets *@ppid and *@pgen to that image (struct scorch_event).
 */
static __always_inline void fork_parent(struct task_struct *cur, __u64 exec_vm, __u32 *ppid,
					__u64 *pgen)
{
	struct task_struct *leader = BPF_CORE_READ(cur, group_leader);
	struct task_struct *parent = BPF_CORE_READ(leader, real_parent);
	struct mm_struct *mm = BPF_CORE_READ(cur, mm), *pmm = BPF_CORE_READ(parent, mm);
	__u64 fork_exec_id = BPF_CORE_READ(leader, parent_exec_id), gen;
	__u32 pid;

	/* exec increments self_exec_id; fork copies the parent's to both fields */
	if (BPF_CORE_READ(leader, self_exec_id) != fork_exec_id ||
	    BPF_CORE_READ(parent, self_exec_id) != fork_exec_id)
		return;
	if (!mm || !pmm || BPF_CORE_READ(mm, start_stack) != BPF_CORE_READ(pmm, start_stack) ||
	    BPF_CORE_READ(mm, start_code) != BPF_CORE_READ(pmm, start_code) ||
	    BPF_CORE_READ(mm, start_brk) != BPF_CORE_READ(pmm, start_brk) ||
	    BPF_CORE_READ(pmm, exec_vm) != exec_vm)
		return;
	if (!fork_parent_known(leader, fork_exec_id, exec_vm, &pid, &gen))
		return;
	*ppid = pid;
	*pgen = gen;
}

/*
 * Is the current image of @cur's process known from the kernel's mmap records alone?
 * Its process was forked after they were first read and has exec'd since (exec bumps
 * self_exec_id past the parent_exec_id fork set), so every executable mapping of the
 * image is on record, and its files are found under the same paths as user space's
 * (same mount namespace) after it exits. Then nothing about it needs reading while it
 * lives, and its notifications need not wake user space.
 */
static __always_inline bool sideband_covers(struct task_struct *cur)
{
	struct task_struct *leader;

	if (!sideband_since)
		return false;
	leader = BPF_CORE_READ(cur, group_leader);
	if (BPF_CORE_READ(leader, start_time) <= sideband_since ||
	    BPF_CORE_READ(leader, self_exec_id) == BPF_CORE_READ(leader, parent_exec_id))
		return false;
	return BPF_CORE_READ(cur, nsproxy, mnt_ns, ns.inum) == sideband_mntns;
}

/*
 * Tells user space, once per process image, to read its mappings while it lives, and
 * again when its executable mappings have changed since (struct proc_state). @cur is
 * the current task (a BTF pointer), @pid and @gen its process and image.
 */
static __always_inline void announce(struct task_struct *cur, __u32 pid, __u64 gen)
{
	struct proc_state *known, init = {};
	struct mm_struct *mm = cur->mm;
	__u64 exec_vm, now, pgen = 0;
	__u32 ppid = 0;
	long err;

	/* in an exec's window the memory is neither image's yet (exec_image_gen()) */
	if (mm && !mm->start_code)
		return;
	exec_vm = mm ? mm->exec_vm : 0;
	known = bpf_map_lookup_elem(&procs, &pid);
	if (known) {
		if (known->gen == gen) {
			if (known->exec_vm == exec_vm)
				return;
			now = bpf_ktime_get_ns();
			if (now < known->next_ns)
				return; /* told lately: a later sample tells again */
			known->exec_vm = exec_vm;
			known->next_ns = now + SCORCH_MAPS_EVENT_NS;
			stat_inc(STAT_MAPS_CHANGED);
			/* --unwind kernel: the new files' tables are wanted now */
			emit(SCORCH_EVENT_MAPS, pid, gen,
			     sideband_covers(cur) && !kunwind_wanted ? BPF_RB_NO_WAKEUP
								     : BPF_RB_FORCE_WAKEUP);
			return;
		}
		/* exec: a new image under the same PID; the old one can run no more (exec
		 * ended its other threads), so user space may release it as on exit */
		emit(SCORCH_EVENT_REPLACED, pid, known->gen, BPF_RB_NO_WAKEUP);
		known->gen = gen;
		known->exec_vm = exec_vm;
		known->next_ns = 0;
	} else {
		init.gen = gen;
		init.exec_vm = exec_vm;
		err = bpf_map_update_elem(&procs, &pid, &init, BPF_NOEXIST);
		if (err) {
			if (err != -EEXIST)
				stat_inc(STAT_PROCS_FULL);
			return;
		}
	}
	/* --unwind kernel: user space loads the image's tables when told: at once */
	if (sideband_covers(cur) && !kunwind_wanted) {
		emit(SCORCH_EVENT_NEW, pid, gen, BPF_RB_NO_WAKEUP);
		return;
	}
	fork_parent(cur, exec_vm, &ppid, &pgen);
	emit_from(SCORCH_EVENT_NEW, pid, gen, ppid, pgen, 0, BPF_RB_FORCE_WAKEUP);
}

/*
 * exec() puts the new image's memory in place (exec_mmap() in begin_new_exec()), tears
 * the old memory down, and then adds one to self_exec_id, well before it gives the
 * thread the registers the new image starts with (start_thread() at the end of
 * load_elf_binary(): mapping the program and its interpreter, most of an exec's time,
 * lies between). A sample in that window has the replaced image's last instruction,
 * its execve call, as user registers, on memory that is not that image's: its user
 * stack is the leaf alone, and perf names it in the maps it has not dropped yet. The
 * new memory's start_code is 0 until just before start_thread(): that is the window.
 *
 * Returns the gen of the image the registers are of, when user space knows it: the one
 * last announced for @pid, @gen or @gen - 1 (self_exec_id not yet or already bumped:
 * exec adds one), or, for a child that exec'd before any sample of it, its image from
 * the fork when its parent's image then is the one announced, with the same executable
 * pages: announced now as replaced (SCORCH_EVENT_F_REPLACED), to be copied from the
 * parent's. Else @gen, as it is.
 */
static __always_inline __u64 exec_image_gen(struct task_struct *cur, __u32 pid, __u64 gen)
{
	struct task_struct *leader;
	struct proc_state *known, init = {};
	__u64 fork_exec_id, self_exec_id, pgen, old, exec_vm;
	__u32 ppid;

	known = bpf_map_lookup_elem(&procs, &pid);
	if (known)
		return known->gen == gen - 1 ? gen - 1 : gen;
	/* fork copies the parent's self_exec_id to both fields: the fork image is the
	 * one this exec replaces when it is the first exec since */
	leader = BPF_CORE_READ(cur, group_leader);
	fork_exec_id = BPF_CORE_READ(leader, parent_exec_id);
	self_exec_id = BPF_CORE_READ(leader, self_exec_id);
	if (self_exec_id == fork_exec_id + 1)
		old = gen - 1;
	else if (self_exec_id == fork_exec_id)
		old = gen;
	else
		return gen;
	exec_vm = BPF_CORE_READ(leader, real_parent, mm, exec_vm);
	if (!fork_parent_known(leader, fork_exec_id, exec_vm, &ppid, &pgen))
		return gen;
	init.gen = old;
	init.exec_vm = exec_vm;
	if (bpf_map_update_elem(&procs, &pid, &init, BPF_NOEXIST))
		return gen;
	/* the new image's announce follows at once: it wakes user space */
	emit_from(SCORCH_EVENT_NEW, pid, old, ppid, pgen, SCORCH_EVENT_F_REPLACED,
		  BPF_RB_NO_WAKEUP);
	return old;
}

/*
 * The user part of a sample of @cur (current, a user thread) in @key: its image's gen
 * in key->gen, and true when the sample is in an exec's window (exec_image_gen()):
 * then key->gen is the image of its registers, KEY_USER_LEAF is set, and the caller
 * stores the leaf alone (user_leaf()). announce() sends nothing in the window: callers
 * call it as anywhere else.
 */
static __always_inline bool user_image(struct task_struct *cur, __u32 pid, struct count_key *key)
{
	struct mm_struct *mm = cur->mm;

	key->gen = current_gen(cur);
	if (!mm || mm->start_code)
		return false;
	key->gen = exec_image_gen(cur, pid, key->gen);
	key->flags |= KEY_USER_LEAF;
	stat_inc(STAT_EXEC_LEAF);
	return true;
}

/* Does the thread @tid of process @pid pass the -p/-t filter? */
static __always_inline bool filter_match(__u32 pid, __u32 tid)
{
	if (!filter_pid && !filter_tid)
		return true;
	__u8 *followed;

	if (filter_pid) {
		followed = bpf_map_lookup_elem(&pids, &pid);
		if (followed && *followed == SCORCH_PID_FOLLOWED)
			return true;
	}
	if (filter_tid && bpf_map_lookup_elem(&tids, &tid))
		return true;
	return false;
}

/*
 * @map[@key] += @val in a map of __u64 counts ("counts", or offwake's "wake_counts");
 * returns false when the map is full. Atomic: the programs on other CPUs add to the
 * same keys.
 */
static __always_inline bool count_add_to(void *map, const void *key, __u64 val)
{
	__u64 *cnt = bpf_map_lookup_elem(map, key);
	long err;

	if (!cnt) {
		err = bpf_map_update_elem(map, key, &val, BPF_NOEXIST);
		if (!err) {
			stat_inc(STAT_COUNT_KEYS);
			return true;
		}
		if (err != -EEXIST)
			return false;
		cnt = bpf_map_lookup_elem(map, key);
		if (!cnt)
			return false;
	}
	__sync_fetch_and_add(cnt, val);
	return true;
}

/* counts[@key] += @val: count_add_to() of map "counts". */
static __always_inline bool count_add(struct count_key *key, __u64 val)
{
	return count_add_to(&counts, key, val);
}

/* This CPU's sample record (flags and lengths zeroed; kernel_ips stale), or NULL. */
static __always_inline struct sample_buf *sample_buf_get(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sample_buf *b = bpf_map_lookup_elem(&sample_bufs, &cpu);

	if (b) {
		b->hdr.flags = 0;
		b->hdr.kernel_nr = 0;
		b->hdr.stack_len = 0;
	}
	return b;
}

/* Flags for a record written to "samples": wake user space only past wakeup_bytes. */
static __always_inline __u64 samples_wakeup(void)
{
	if (!wakeup_bytes)
		return 0;
	return bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									      : BPF_RB_NO_WAKEUP;
}

/* Is the byte at @addr readable? A probe that faults costs a page fault, not a copy. */
static __always_inline bool user_readable(__u64 addr)
{
	__u8 c;

	return !bpf_probe_read_user(&c, 1, (void *)addr);
}

/* Can @len bytes at @sp be copied after the kernel addresses? (zeroed when not) */
static __always_inline bool stack_copy(struct sample_buf *b, __u64 sp, __u64 len)
{
	__u64 off = (__u64)b->hdr.kernel_nr * 8;

	if (len >= SCORCH_MAX_STACK_COPY)
		return false;
	/* the masks bound the registers passed (a compare may bound a 32-bit copy of
	 * them); the barriers keep the compiler from dropping them after the compare */
	barrier_var(len);
	len &= SCORCH_MAX_STACK_COPY - 1;
	barrier_var(off);
	off &= KSTACK_ROOM - 1;
	return !bpf_probe_read_user(b->data + off, len, (void *)sp);
}

/* Walks the kernel stack of @ctx into @b (kernel_nr, or KEY_KERNEL_MISSED counted). */
static __always_inline void sample_kernel_stack(void *ctx, struct sample_buf *b)
{
	long n = bpf_get_stack(ctx, b->data, SCORCH_MAX_STACK_DEPTH * 8, 0);

	if (n > 0) {
		b->hdr.kernel_nr = n / sizeof(__u64);
	} else {
		b->hdr.flags |= KEY_KERNEL_MISSED;
		stat_inc(STAT_KSTACK_ERR);
	}
}

/*
 * --unwind dwarf: copies the user registers of the current task and --stack-size bytes of its
 * stack from sp into @b (header filled by the caller) and writes the record of @type to
 * "samples". Near the top of a stack fewer bytes are mapped: the readable part (to the
 * first page that faults) is copied instead. Returns false when the ring buffer was
 * full (counted).
 */
static __always_inline bool sample_send(struct sample_buf *b, __u32 type)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u32 len = stack_size, first, n = 0, i;
	struct stack_end *se;
	struct stack_top *st;
	__u64 sp, mm, total, koff;

	b->hdr.type = type;
	b->hdr.ip = BPF_CORE_READ(regs, ip);
	b->hdr.sp = sp = BPF_CORE_READ(regs, sp);
	b->hdr.bp = BPF_CORE_READ(regs, bp);
	if (len > SCORCH_MAX_STACK_COPY - 8)
		len = SCORCH_MAX_STACK_COPY - 8;
	/* in an exec's window (user_image()): the leaf alone, the stack is not this memory's */
	if (b->hdr.flags & KEY_USER_LEAF)
		goto send;
	/*
	 * The walks of this thread's earlier samples read nothing above top (user space
	 * wrote it after a complete walk): the copy ends there, usually a few hundred bytes
	 * instead of the KiB of TLS and the thread descriptor up to the end of the stack.
	 * A walk that needs more ends truncated and user space forgets the top.
	 */
	b->hdr.thread_key = task->start_time + b->hdr.gen;
	st = bpf_map_lookup_elem(&stack_tops, &b->hdr.tid);
	if (st && st->key == b->hdr.thread_key && st->top > sp && st->top - sp <= len) {
		n = st->top - sp;
		if (stack_copy(b, sp, n)) {
			b->hdr.flags |= SAMPLE_STACK_TOP;
			stat_inc(STAT_STACK_TOP);
			goto send;
		}
		n = 0;
	}
	/*
	 * Most samples of a thread lie less than len below the top of its stack, where a copy
	 * of len bytes would fault. The end found by an earlier sample of the thread bounds
	 * the copy: one copy, no probe. A copy that faults (the thread moved to another stack:
	 * sigaltstack, a coroutine) finds the end again, and so does every STACK_END_USES-th
	 * sample, lest an end found too low (a page not yet touched) stay.
	 */
	mm = (__u64)task->mm;
	se = bpf_task_storage_get(&stack_ends, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (se && se->mm == mm && se->end > sp && ++se->uses < STACK_END_USES) {
		n = se->end - sp < len ? se->end - sp : len;
		if (stack_copy(b, sp, n)) {
			if (n < len)
				stat_inc(STAT_STACK_PARTIAL);
			goto send;
		}
		n = 0;
	}
	/*
	 * The readable length is found first, one byte per page upward from sp's page until
	 * one faults: at most one fault (a copy that faults part-way costs the bytes copied
	 * and the zeroing of len), and never past a hole (probing the end of len could land in
	 * another mapping beyond the guard page above a thread's stack).
	 */
	first = 4096 - (sp & 4095);
	for (i = 0; i < SCORCH_MAX_STACK_COPY / 4096 + 1; i++) {
		if (!user_readable(i ? sp + first + (i - 1) * 4096 : sp))
			break;
		n = first + i * 4096; /* readable through the end of this page */
		if (n >= len)
			break;
	}
	if (n >= len)
		n = len;
	else
		stat_inc(STAT_STACK_PARTIAL);
	if (se) {
		se->mm = mm;
		se->end = n && n < len ? sp + n : 0;
		se->uses = 0;
	}
	/* a page unmapped meanwhile: the copy decides */
	if (n && !stack_copy(b, sp, n))
		n = 0;
send:
	if (!n && !(b->hdr.flags & KEY_USER_LEAF))
		b->hdr.flags |= KEY_USER_MISSED;
	b->hdr.stack_len = n;
	total = n;
	barrier_var(total); /* as in stack_copy(): bound the register passed */
	total &= SCORCH_MAX_STACK_COPY - 1;
	koff = (__u64)b->hdr.kernel_nr * 8;
	barrier_var(koff);
	koff &= KSTACK_ROOM - 1;
	total += sizeof(b->hdr) + koff;
	if (bpf_ringbuf_output(&samples, b, total, samples_wakeup())) {
		stat_inc(STAT_LOST_RINGBUF);
		return false;
	}
	stat_inc(STAT_SAMPLES_SENT);
	stat_add(STAT_SAMPLE_BYTES, total);
	return true;
}

/* record -- cmd: children of a followed process are followed too. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid);
	__u32 cpid = BPF_CORE_READ(child, tgid);
	__u8 *followed, how;

	if (!follow_forks || ppid == cpid)
		return 0;
	followed = bpf_map_lookup_elem(&pids, &ppid);
	if (!followed)
		return 0;
	how = *followed; /* a child of a process not exec'd yet waits for its own exec */
	if (!bpf_map_update_elem(&pids, &cpid, &how, BPF_ANY))
		stat_inc(STAT_FORKS_FOLLOWED);
	return 0;
}

/*
 * record -- cmd: the command is followed from its exec on, as perf's enable_on_exec:
 * what the child did before (scorch's code, between its fork and the exec) is not the
 * command's.
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(follow_exec, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, tgid);
	__u8 *followed = bpf_map_lookup_elem(&pids, &pid);

	if (followed && *followed == SCORCH_PID_AT_EXEC)
		*followed = SCORCH_PID_FOLLOWED;
	return 0;
}

/*
 * The last thread of an announced process exits: user space may symbolize and
 * release what it keeps of it. Followed children leave the PID filter, so a
 * process that later reuses the PID is not taken for them.
 */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, tgid);
	struct proc_state *known;

	/* signal->live drops to 0 before this tracepoint when the group is dead */
	if (BPF_CORE_READ(p, signal, live.counter))
		return 0;
	if (follow_forks)
		bpf_map_delete_elem(&pids, &pid);
	known = bpf_map_lookup_elem(&procs, &pid);
	if (!known)
		return 0;
	stat_inc(STAT_EXITS);
	emit(SCORCH_EVENT_EXIT, pid, known->gen, BPF_RB_NO_WAKEUP);
	bpf_map_delete_elem(&procs, &pid);
	return 0;
}

#endif /* SCORCH_STACKS_BPF_H */
