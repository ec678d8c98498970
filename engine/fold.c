// SPDX-License-Identifier: MIT
/* profiler: counted stacks (raw key and addresses) to named folded stacks, for record and report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "python.h"
#include "engine.h"
#include "fold.h"
#include "output.h"
#include "sampler.h"

int fold__init(struct fold *f)
{
	f->folded = folded__new();
	f->names = strset__new();
	if (!f->folded || !f->names)
		return -ENOMEM;
	folded__set_max_stacks(f->folded, FOLD_MAX_STACKS);
	return 0;
}

void fold__release(struct fold *f)
{
	folded__free(f->folded);
	strset__free(f->names);
	free(f->frames);
	f->folded = NULL;
	f->names = NULL;
	f->frames = NULL;
}

/* @name and @suffix, interned; @name itself when the two do not fit @size bytes. */
static const char *annotated(struct fold *f, const char *name, const char *suffix, size_t size)
{
	char buf[1024];
	int n;

	if (!*suffix)
		return name;
	size = MIN(size, sizeof(buf));
	n = snprintf(buf, size, "%s%s", name, suffix);
	if (n < 0 || (size_t)n >= size)
		return name;
	return strset__intern_len(f->names, buf, n);
}

static const char *kernel_name(struct fold *f, const char *name)
{
	return annotated(f, name, fg_annot__suffix(FG_ANNOT_KERNEL), 512);
}

const char *fold__frame_suffix(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_INLINE:
		return fg_annot__suffix(FG_ANNOT_INLINE);
	case FRAME_JIT:
		return fg_annot__suffix(FG_ANNOT_JIT);
	default:
		return fg_annot__suffix(FG_ANNOT_NONE);
	}
}

static const char *user_name(struct fold *f, const struct frame *fr)
{
	return annotated(f, fr->name, fold__frame_suffix(fr->kind), 1024);
}

static int push_frame(struct fold *f, size_t *n, const char *name)
{
	if (array__grow((void **)&f->frames, &f->frames_cap, *n + 1, sizeof(*f->frames)))
		return -ENOMEM;
	if (!name)
		return -ENOMEM;
	f->frames[(*n)++] = name;
	return 0;
}

/* A frame with no address ("[truncated]", "[off-cpu]"...): in folded and the profile. */
static int push_marker(struct fold *f, size_t *n, const char *name)
{
	int err = push_frame(f, n, name);

	if (!err && f->outs)
		err = outputs__stack_marker(f->outs, name);
	return err;
}

/* Kernel frames of off-CPU stacks start inside the BPF program and tracepoint;
 * the reader wants them to end where the thread entered the scheduler. */
static bool is_sched_entry(const char *name)
{
	return !strcmp(name, "__schedule");
}

/* A frame of the BPF machinery between a tracepoint and the program it runs. */
static bool is_bpf_plumbing(const char *name)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
						"__bpf_trace_" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static int add_kernel_frames(struct fold *f, size_t *n, const struct stack *kernel,
			     bool offcpu)
{
	int i, j, k, top = (int)kernel->nr - 1, leaf = 0, err = 0;

	if (f->mode == MODE_EVENT) {
		/* a stack walked at a raw tracepoint begins in the BPF program and the
		 * tracepoint's call of it: not the traced code. The program itself may be
		 * unnamed (kallsyms read while it loaded): the plumbing after it tells. */
		for (i = 0; i <= top; i++) {
			k = symbolizer__kernel(f->sym, kernel->ips[i], i > 0, f->fbuf, 1);
			if (k > 0 && is_bpf_plumbing(f->fbuf[0].name))
				leaf = i + 1;
			else if (k <= 0 || f->fbuf[0].kind != FRAME_UNKNOWN)
				break;
		}
		if (leaf > top)
			leaf = 0;
	} else if (offcpu) {
		/* the leafmost __schedule: frames below it are plumbing */
		for (i = 0; i <= top; i++) {
			k = symbolizer__kernel(f->sym, kernel->ips[i], i > 0, f->fbuf, 1);
			if (k > 0 && is_sched_entry(f->fbuf[0].name)) {
				leaf = i;
				break;
			}
		}
	}
	for (i = top; i >= leaf && !err; i--) {
		k = symbolizer__kernel(f->sym, kernel->ips[i], i > 0, f->fbuf, FOLD_MAX_INLINE);
		if (k < 0)
			return k;
		for (j = 0; j < k && !err; j++)
			err = push_frame(f, n, kernel_name(f, f->fbuf[j].name));
		if (!err && f->outs)
			err = outputs__stack_kernel(f->outs, kernel->ips[i], f->fbuf, k);
	}
	return err;
}

/* Counts a stack cut at a junk address after the frame at @ip (its file, if any). */
static void count_cut(struct fold *f, const struct count_key *key, uint64_t ip, uint64_t count,
		      bool offcpu)
{
	struct symbolizer_mapping m;
	const char *path = NULL;
	size_t i, least = 0;

	f->cut_counts[offcpu] += count;
	if (!symbolizer__mapping_gen(f->sym, key->pid, key->gen, ip, &m))
		path = m.path;
	if (!path)
		return;
	for (i = 0; i < ARRAY_SIZE(f->cut_files); i++) {
		if (f->cut_files[i].path == path || !f->cut_files[i].path) {
			f->cut_files[i].path = path;
			f->cut_files[i].count += count;
			return;
		}
		if (f->cut_files[i].count < f->cut_files[least].count)
			least = i;
	}
	/* full: the least counted file makes room (an estimate, as top-k sketches are) */
	f->cut_files[least].path = path;
	f->cut_files[least].count += count;
}

/* A stack that ends in JIT code, of the comm f->frames[0] (interned: compared by pointer). */
static void count_jit_end(struct fold *f, uint64_t count, bool offcpu)
{
	f->jit_end[offcpu] += count;
	if (f->jit_comm == f->frames[0]) {
		f->jit_comm_count += count;
	} else if (count > f->jit_comm_count) {
		/* the largest single stack's comm: most often the process at fault */
		f->jit_comm = f->frames[0];
		f->jit_comm_count = count;
	}
}

/* A leaf in JIT code no map names: by mode, and the process with the most. */
static void count_unnamed(struct fold *f, const struct count_key *key, uint64_t count, bool offcpu)
{
	f->jit_unnamed[offcpu] += count;
	if (f->unnamed_comm == f->frames[0] && f->unnamed_pid == key->pid) {
		f->unnamed_count += count;
	} else if (count > f->unnamed_count) {
		f->unnamed_comm = f->frames[0];
		f->unnamed_pid = key->pid;
		f->unnamed_count = count;
	}
}

/*
 * The outermost frame of @user to name: a return address outside every executable
 * mapping is no return address (a frame pointer register that held data: code built
 * without frame pointers ran there), and neither is anything past it. The leaf is the
 * sampled pc, kept as it is. Returns the number of frames to keep; *cut when fewer
 * than @user->nr.
 */
static int walk_end(struct fold *f, const struct count_key *key, const struct stack *user,
		    bool *cut)
{
	struct symbolizer_mapping m;
	int i;

	*cut = false;
	for (i = 1; i < (int)user->nr; i++) {
		if (user->ips[i] & PY_WORD)
			continue; /* a Python frame's: no address */
		if (symbolizer__mapping_gen(f->sym, key->pid, key->gen, user->ips[i], &m) ==
		    -ENOENT) {
			*cut = true;
			return i;
		}
	}
	return (int)user->nr;
}

/* Interrupt entries: a wakeup below one ran in whatever task the interrupt came to. */
static const char *irq_context(const char *name)
{
	static const char *const soft[] = {"handle_softirqs", "__do_softirq", "do_softirq",
					   "run_ksoftirqd"};
	static const char *const hard[] = {"irq_exit_rcu", "common_interrupt",
					   "asm_common_interrupt"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(soft); i++)
		if (!strcmp(name, soft[i]))
			return FOLD_WAKER_SOFTIRQ;
	if (!strncmp(name, "asm_sysvec_", 11) || !strncmp(name, "sysvec_", 7) ||
	    !strncmp(name, "__sysvec_", 9))
		return FOLD_WAKER_IRQ;
	for (i = 0; i < ARRAY_SIZE(hard); i++)
		if (!strcmp(name, hard[i]))
			return FOLD_WAKER_IRQ;
	return NULL;
}

/*
 * The Python frame of @user's words @i (its code object) and @i + 1 (its position),
 * named by f->py; the position word alone (seen first, from the root) is skipped.
 */
static int add_python_frame(struct fold *f, size_t *n, const struct count_key *key,
			    const struct stack *user, int i)
{
	uint64_t w = user->ips[i], pos = 0;
	const char *qualname, *file;
	struct frame fr;
	int err;

	if (w & PY_WORD_POS)
		return 0;
	if (i + 1 < (int)user->nr && (user->ips[i + 1] & (PY_WORD | PY_WORD_POS)) ==
						 (PY_WORD | PY_WORD_POS))
		pos = user->ips[i + 1];
	if (!f->py || !pos) {
		memset(&fr, 0, sizeof(fr));
		fr.name = "[unknown python]";
		fr.kind = FRAME_UNKNOWN;
	} else {
		err = pycodes__frame(f->py, key->pid, key->gen, w, pos, &fr);
		if (err)
			return err;
	}
	err = push_frame(f, n, fr.name);
	if (err || !f->outs)
		return err;
	/* a profile's function is a name and a file: "<module>" of app.py, not
	 * "<module> (app.py)" of no file (pprof's demangler cut that to "") */
	if (fr.kind == FRAME_UNKNOWN ||
	    pycodes__function(f->py, key->pid, key->gen, w, pos, &qualname, &file))
		return outputs__stack_marker(f->outs, fr.name);
	return outputs__stack_python(f->outs, w, qualname, file, fr.line);
}

/* Reverses @fr[0..k): the waker side is folded leaf to root. */
static void frames_reverse(struct frame *fr, int k)
{
	struct frame t;
	int i;

	for (i = 0; i < k / 2; i++) {
		t = fr[i];
		fr[i] = fr[k - 1 - i];
		fr[k - 1 - i] = t;
	}
}

/*
 * offwake: "--", then waker @level's frames leaf to root (its kernel stack from
 * try_to_wake_up, then its user stack), then its comm. A wakeup in an interrupt or
 * softirq is cut at the interrupt's entry and named [irq] or [softirq] instead: the
 * task interrupted (its comm and user stack) did not wake anyone; *@task is false then.
 */
static int add_waker_level(struct fold *f, size_t *n, unsigned int level, bool *task)
{
	const struct fold_waker *fw = &f->wakers[level];
	const struct stack *kernel = fw->kernel, *user = fw->user;
	const struct waker *w = fw->w;
	struct count_key wkey = {};
	char comm[SCORCH_COMM_LEN + 1];
	const char *ctxname = NULL;
	int i, j, k, nr, leaf = 0, end, err;
	bool cut = false;

	*task = false;
	err = push_marker(f, n, FOLD_WAKER_SEP);
	if (err)
		return err;
	wkey.pid = w->pid;
	wkey.gen = w->gen;
	if (w->flags & KEY_KERNEL_MISSED) {
		err = push_marker(f, n, "[missed kernel stack]");
	} else if (kernel) {
		end = (int)kernel->nr;
		/* frames below try_to_wake_up are the tracepoint's and the program's */
		for (i = 0; i < end; i++) {
			k = symbolizer__kernel(f->sym, kernel->ips[i], i > 0, f->fbuf, 1);
			if (k > 0 && !strcmp(f->fbuf[0].name, "try_to_wake_up")) {
				leaf = i;
				break;
			}
		}
		for (i = leaf; i < end && !err; i++) {
			k = symbolizer__kernel(f->sym, kernel->ips[i], i > 0, f->fbuf,
					       FOLD_MAX_INLINE);
			if (k < 0)
				return k;
			frames_reverse(f->fbuf, k);
			for (j = 0; j < k && !err; j++) {
				err = push_frame(f, n, kernel_name(f, f->fbuf[j].name));
				if (!ctxname)
					ctxname = irq_context(f->fbuf[j].name);
			}
			if (!err && f->outs)
				err = outputs__stack_kernel(f->outs, kernel->ips[i], f->fbuf, k);
			if (ctxname)
				break;
		}
	}
	if (err)
		return err;
	if (ctxname) {
		if (!level)
			f->irq_waker_us += f->last_count;
		return push_marker(f, n, ctxname);
	}
	*task = true;
	if (w->flags & WAKER_KTHREAD) {
		/* no user stack */
	} else if (w->flags & KEY_USER_MISSED) {
		err = push_marker(f, n, "[missed user stack]");
	} else if (user) {
		nr = fw->lost_proc ? (int)user->nr : walk_end(f, &wkey, user, &cut);
		for (i = 0; i < nr && !err; i++) {
			if (fw->lost_proc) {
				err = push_marker(f, n, "[unknown]");
				continue;
			}
			if (user->ips[i] & PY_WORD) {
				err = add_python_frame(f, n, &wkey, user, i);
				continue;
			}
			k = symbolizer__user_gen(f->sym, wkey.pid, wkey.gen, user->ips[i], i > 0,
						 f->fbuf, FOLD_MAX_INLINE);
			if (k < 0)
				return k;
			frames_reverse(f->fbuf, k);
			for (j = 0; j < k && !err; j++)
				err = push_frame(f, n, user_name(f, &f->fbuf[j]));
			if (!err && f->outs)
				err = outputs__stack_user(f->outs, f->sym, wkey.pid, wkey.gen,
							  user->ips[i], f->fbuf, k);
		}
		if (!err && cut)
			err = push_marker(f, n, "[unknown]");
	}
	if (err)
		return err;
	memcpy(comm, w->comm, SCORCH_COMM_LEN);
	comm[SCORCH_COMM_LEN] = '\0';
	return push_marker(f, n, strset__intern(f->names, comm[0] ? comm : "[unknown]"));
}

/*
 * offwake: the wakers of @key above its blocked stack, each as add_waker_level() adds
 * it: the waker, then (chain mode) the waker's own waker at its last wakeup, and so on;
 * an interrupt ends the chain. No waker seen: "--;[unknown waker]". For the profiles,
 * each level's process (0: an interrupt's) and top frame in @pids and @names, *@nr.
 */
static int add_wakers(struct fold *f, size_t *n, const struct count_key *key,
		      uint32_t pids[SCORCH_CHAIN_MAX], const char *names[SCORCH_CHAIN_MAX],
		      size_t *nr)
{
	unsigned int l;
	bool task = true;
	int err;

	*nr = 0;
	if ((key->flags & KEY_NO_WAKER) || !f->nr_wakers) {
		f->nowaker_us += f->last_count;
		err = push_marker(f, n, FOLD_WAKER_SEP);
		if (!err)
			err = push_marker(f, n, FOLD_WAKER_UNKNOWN);
		pids[0] = 0;
		names[0] = FOLD_WAKER_UNKNOWN;
		*nr = 1;
		return err;
	}
	f->waker_us += f->last_count;
	for (l = 0; l < f->nr_wakers && l < SCORCH_CHAIN_MAX && task; l++) {
		err = add_waker_level(f, n, l, &task);
		if (err)
			return err;
		pids[l] = task ? f->wakers[l].w->pid : 0;
		names[l] = f->frames[*n - 1];
		*nr = l + 1;
	}
	return 0;
}

/*
 * --mode wakeup: the offwake line in f->frames[0..*n) ("comm;blocked...;--;waker leaf
 * ...root;waker_comm") turned into the wakers' graph of bcc's wakeuptime: "waker_comm;
 * waker root...leaf;comm", the blocked side dropped.
 */
static int wakeup_line(struct fold *f, size_t *n)
{
	size_t i, sep = *n, o = 0;
	const char **w;

	for (i = 1; i < *n; i++) {
		if (!strcmp(f->frames[i], FOLD_WAKER_SEP)) {
			sep = i;
			break;
		}
	}
	if (sep + 1 >= *n)
		return -EINVAL;
	w = malloc((*n - sep) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (i = *n - 1; i > sep; i--)
		w[o++] = f->frames[i];
	w[o++] = f->frames[0];
	memcpy(f->frames, w, o * sizeof(*w));
	free(w);
	*n = o;
	return 0;
}

void fold__tally(struct fold *f, bool offcpu, const struct count_key *key, uint64_t value)
{
	if (!offcpu)
		return;
	f->offcpu_ns += value;
	if (key->flags & KEY_RUNQUEUE)
		f->runqueue_ns += value;
}

int fold__add(struct fold *f, bool offcpu, const struct count_key *key, uint64_t value,
	      const struct stack *user, const struct stack *kernel, bool lost_proc)
{
	char comm[SCORCH_COMM_LEN + 1];
	uint32_t wpids[SCORCH_CHAIN_MAX];
	const char *wnames[SCORCH_CHAIN_MAX];
	uint64_t count = value;
	size_t n = 0, nr_w = 0;
	int i, j, k, nr, err;
	bool cut = false, deep;

	fold__tally(f, offcpu, key, value);
	if (offcpu) {
		count = (value + 500) / 1000; /* microseconds */
	} else if (f->mode == MODE_WALL) {
		count = (uint64_t)(value * 1e6 / f->freq + 0.5);
	} else if (f->ns_values) {
		count = (value + 500) / 1000; /* microseconds */
	}
	if (!count)
		return 0;
	memcpy(comm, key->comm, SCORCH_COMM_LEN);
	comm[SCORCH_COMM_LEN] = '\0';
	err = push_frame(f, &n, strset__intern(f->names, comm[0] ? comm : "[unknown]"));
	if (err)
		return err;
	if (f->outs)
		outputs__stack_begin(f->outs);
	if (key->flags & KEY_USER_MISSED) {
		err = push_marker(f, &n, "[missed user stack]");
	} else if (user) {
		nr = lost_proc ? (int)user->nr : walk_end(f, key, user, &cut);
		f->user_counts[offcpu] += count;
		deep = f->user_depth ? (key->flags & KEY_USER_DEEP) : user->nr >= f->max_depth;
		/* a leaf alone (the process's memory was gone): its callers are unknown */
		if (cut || (key->flags & KEY_USER_LEAF)) {
			err = push_marker(f, &n, "[unknown]");
		} else if (deep || (key->flags & KEY_USER_TRUNCATED)) {
			if (key->flags & KEY_USER_TRUNCATED) {
				f->truncated_copy += count;
			} else {
				f->truncated_user += count;
				f->deep[offcpu] += count;
			}
			err = push_marker(f, &n, "[truncated]");
		}
		if (lost_proc) {
			if (offcpu)
				f->noproc_us += count;
			else
				f->noproc_samples += value;
		}
		for (i = nr - 1; i >= 0 && !err; i--) {
			if (lost_proc) {
				err = push_marker(f, &n, "[unknown]");
				continue;
			}
			if (user->ips[i] & PY_WORD) {
				err = add_python_frame(f, &n, key, user, i);
				continue;
			}
			k = symbolizer__user_gen(f->sym, key->pid, key->gen, user->ips[i], i > 0,
						 f->fbuf, FOLD_MAX_INLINE);
			if (k < 0)
				return k;
			/* why the walk ended there: JIT code keeps no frame pointer (whether
			 * the walk then read junk or stopped), or other code without one */
			if (i == nr - 1 && k > 0 && f->fbuf[0].kind == FRAME_JIT &&
			    (cut || (!deep && !(key->flags & KEY_USER_TRUNCATED))))
				count_jit_end(f, count, offcpu);
			else if (i == nr - 1 && cut)
				count_cut(f, key, user->ips[i], count, offcpu);
			if (i == 0 && k > 0 && !strcmp(f->fbuf[k - 1].name, "[jit]"))
				count_unnamed(f, key, count, offcpu);
			for (j = 0; j < k && !err; j++)
				err = push_frame(f, &n, user_name(f, &f->fbuf[j]));
			if (!err && f->outs)
				err = outputs__stack_user(f->outs, f->sym, key->pid, key->gen,
							  user->ips[i], f->fbuf, k);
		}
	}
	if (err)
		return err;
	if (key->flags & KEY_KERNEL_MISSED) {
		err = push_marker(f, &n, "[missed kernel stack]");
	} else if (kernel) {
		if (kernel->nr >= f->max_depth) {
			f->truncated_kernel += count;
			err = push_marker(f, &n, kernel_name(f, "[truncated]"));
		}
		if (!err)
			err = add_kernel_frames(f, &n, kernel, offcpu);
	}
	f->last_count = count;
	if (!err && offcpu && (key->flags & (KEY_WAKER | KEY_NO_WAKER)))
		err = add_wakers(f, &n, key, wpids, wnames, &nr_w);
	else if (!err && offcpu && key->flags & KEY_RUNQUEUE)
		err = push_marker(f, &n, FG_FRAME_RUNQUEUE);
	else if (!err && offcpu && f->mode == MODE_WALL)
		err = push_marker(f, &n, FG_FRAME_OFFCPU);
	if (!err && f->outs && nr_w)
		/* each level's top frame names its waker: its comm, [irq], [unknown waker]... */
		err = outputs__stack_end_wakers(f->outs, key->pid, f->frames[0], wpids, wnames,
						nr_w, count);
	else if (!err && f->outs)
		err = outputs__stack_end(f->outs, key->pid, f->frames[0], count);
	if (err)
		return err;
	if (f->wakeup) {
		/* the wakers' graph: blocked time only, no runqueue waits */
		if (!(key->flags & (KEY_WAKER | KEY_NO_WAKER)))
			return 0;
		err = wakeup_line(f, &n);
		if (err)
			return err;
	}
	err = folded__add(f->folded, f->frames, n, count);
	if (!err && f->slice)
		err = folded__add(f->slice, f->frames, n, count);
	return err;
}

/* Titles, units and palette by mode, unless the user chose them. */
void fold__svg_defaults(enum record_mode mode, struct flamegraph_opts *fg)
{
	struct flamegraph_opts dflt;

	flamegraph_opts__init(&dflt);
	if (mode == MODE_CPU)
		return;
	if (!fg->title)
		fg->title =
			mode == MODE_OFFCPU ? "Off-CPU Time Flame Graph" : "Wall-Clock Flame Graph";
	if (fg->countname == dflt.countname || !strcmp(fg->countname, dflt.countname))
		fg->countname = "us";
	if (fg->colors == dflt.colors)
		fg->colors = mode == MODE_OFFCPU ? FG_PAL_IO : FG_PAL_WALL;
}
