// SPDX-License-Identifier: MIT
/* profiler: `scorch record --unwind dwarf`: sample records unwound here with the files'
 * CFI, stack tops learned, off-CPU copies joined to their interval. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "record.h"
#include "symbolize.h"
#include "perfmap.h"
#include "copies.h"
#include "procs.h"
#include "sampler.h"
#include "ustacks.h"

/* The unwinder's maps are the symbolizer's; @ctx is the recording (struct record). */
static int unw_find(void *ctx, pid_t pid, uint64_t gen, uint64_t addr, struct unwind_map *out)
{
	struct record *r = ctx;
	struct symbolizer_mapping m;
	int err = symbolizer__mapping_gen(r->sym, pid, gen, addr, &m);

	if (err)
		return err;
	*out = (struct unwind_map){
		.kind = m.kind == SYMBOLIZER_MAP_FILE	? UNWIND_MAP_FILE
			: m.kind == SYMBOLIZER_MAP_VDSO ? UNWIND_MAP_VDSO
							: UNWIND_MAP_OTHER,
		.start = m.start,
		.end = m.end,
		.bias = m.bias,
		.file = m.file,
		.path = m.path,
	};
	return 0;
}

static int unw_open(void *ctx, pid_t pid, uint64_t gen, uint64_t addr)
{
	return symbolizer__open_mapping_gen(((struct record *)ctx)->sym, pid, gen, addr);
}

static bool unw_in_use(void *ctx, const void *file)
{
	return symbolizer__file_in_use(((struct record *)ctx)->sym, file);
}

/* A "py::" entry of the process's perf map (CPython -X perf) names anonymous code
 * only inside its trampolines. */
static bool py_trampoline(struct symbolizer *sym, pid_t pid, uint64_t gen, uint64_t addr)
{
	struct frame fr;

	return symbolizer__user_gen(sym, pid, gen, addr, false, &fr, 1) == 1 &&
	       fr.kind == FRAME_JIT && !strncmp(fr.name, "py::", 4);
}

#define TRAMPOLINE_REREAD_NS (10 * 1000000ULL)

/*
 * Is @addr inside a CPython trampoline? CPython writes a trampoline's perf map line as
 * it makes it, and the sweep reads the maps about once a second: a copy unwound in
 * between would be cut there. Anonymous code the map does not name yet has the
 * process's map read again (what was appended), at most every 10 ms for a process.
 */
static bool unw_trampoline(void *ctx, pid_t pid, uint64_t gen, uint64_t addr)
{
	struct record *r = ctx;
	uint64_t now;

	if (py_trampoline(r->sym, pid, gen, addr))
		return true;
	now = timing__now_ns();
	if (!r->pm || (pid == r->dw.reread_pid && now - r->dw.reread_ns < TRAMPOLINE_REREAD_NS))
		return false;
	r->dw.reread_pid = pid;
	r->dw.reread_ns = now;
	if (perfmaps__refresh(r->pm, pid))
		return false;
	return py_trampoline(r->sym, pid, gen, addr);
}

const struct unwind_maps_ops record__unwind_ops = {
	.find = unw_find,
	.open = unw_open,
	.in_use = unw_in_use,
	.trampoline = unw_trampoline,
};

#define TOP_FORGETS_MAX 4 /* a thread's tops forgotten this often: none learned any more */

/*
 * After a walk of @smp: a complete walk of a copy that went to the end of the stack tells
 * how much of the thread's stack its walks need; the kernel copies only that from then
 * on. A copy so bounded that proved too short (the walk needed more) makes it forget; a
 * complete walk of one that needed less lowers it (the first walk of a program's main
 * thread is often in the dynamic loader at exec, whose frames reach the very end of the
 * stack: the kernel would copy up to there for good).
 */
static void learn_stack_top(struct record *r, const struct scorch_sample *smp, enum unwind_end end)
{
	typeof(r->dw.tops[0]) *t = &r->dw.tops[smp->tid % ARRAY_SIZE(r->dw.tops)];
	bool same = t->tid == smp->tid && t->key == smp->thread_key;
	uint64_t top = unwinder__stack_used(r->dw.unw);
	uint32_t forgets = same ? t->forgets : 0;

	if ((smp->flags & SAMPLE_STACK_TOP) && end == UNWIND_END_OUTERMOST) {
		/* complete, and it needed less than the known top: that is the top now */
		if (!same || top <= smp->sp || top >= t->top || forgets >= TOP_FORGETS_MAX)
			return;
		r->dw.tops_set++;
	} else if (smp->flags & SAMPLE_STACK_TOP) {
		if (end != UNWIND_END_TRUNCATED)
			return;
		r->dw.tops_cut++;
		/* a copy so bounded ends at the top: one from before the top now known is
		 * stale (in flight when it changed), and a forgotten top is not forgotten again */
		if (same && t->top != smp->sp + smp->stack_len)
			return;
		top = 0;
		forgets++;
		r->dw.tops_forgotten++;
	} else if (end != UNWIND_END_OUTERMOST || top <= smp->sp) {
		return;
	} else if (same && forgets >= TOP_FORGETS_MAX) {
		/* its tops keep proving too low (a thread that runs many stacks, as goroutines
		 * or coroutines do): its copies go to the stack end */
		return;
	} else if (same && t->top == top && ++t->unbounded < 64) {
		/* set already: this copy was in flight, or (after 64 of them) the kernel's
		 * map evicted the entry, and it is set again */
		return;
	} else {
		r->dw.tops_set++;
	}
	if (sampler__set_stack_top(r->sampler, smp->tid, smp->thread_key, top))
		return; /* the map is full of live threads: copies go to the stack end */
	t->tid = smp->tid;
	t->key = smp->thread_key;
	t->top = top;
	t->unbounded = 0;
	t->forgets = forgets;
}

/*
 * One sample record: the user stack is unwound now (the files it needs are open or
 * openable while the process lives), then counted like a drained key. An off-CPU
 * copy (taken at switch-out) waits in r->dw.copies for its interval's length.
 */
void record__on_sample(void *ctx, const struct scorch_sample *smp, size_t len)
{
	struct record *r = ctx;
	struct count_key key = { .pid = smp->pid, .gen = smp->gen, .flags = smp->flags };
	/* the record: header, kernel addresses, stack (checked by the sampler) */
	const __u64 *kips = (const __u64 *)(smp + 1);
	struct unwind_sample us = {
		.pid = smp->pid,
		.gen = smp->gen,
		.ip = smp->ip,
		.sp = smp->sp,
		.bp = smp->bp,
		.stack = kips + smp->kernel_nr,
		.stack_len = smp->stack_len,
	};
	struct proc_entry *p = proctab__find(r->procs, smp->pid, smp->gen);
	struct stack *user = NULL;
	enum unwind_end end;
	bool replaced;
	int n, err;

	if (r->err)
		return;
	memcpy(key.comm, smp->comm, sizeof(key.comm));
	key.flags &= ~(KEY_OFFCPU_COPY | SAMPLE_STACK_TOP);
	if (!(key.flags & KEY_USER_MISSED)) {
		bool leaf = key.flags & KEY_USER_LEAF;
		bool gone = p && (p->flags & (PROC_MISSING | PROC_RELEASED));

		user = r->dw.ubuf;
		/* the leaf alone: in an exec's window (no stack of that image's), or its
		 * files cannot be read (named [unknown]) */
		if (leaf || gone) {
			r->dw.skipped += !leaf;
			user->ips[0] = smp->ip;
			n = 1;
		} else {
			n = unwinder__unwind(r->dw.unw, &us, r->dw.uips, (size_t)r->opts.max_depth,
					     &end);
			if (n < 0) {
				r->err = n;
				return;
			}
			for (int i = 0; i < n; i++)
				user->ips[i] = r->dw.uips[i];
			if (end == UNWIND_END_TRUNCATED)
				key.flags |= KEY_USER_TRUNCATED;
			else if (end == UNWIND_END_DEPTH)
				key.flags |= KEY_USER_DEEP;
			learn_stack_top(r, smp, end);
		}
		user->nr = n;
		if (!n) {
			key.flags |= KEY_USER_MISSED;
			user = NULL;
		}
	}
	if (smp->type == SCORCH_EVENT_OFFCPU_COPY) {
		err = copytab__put(r->dw.copies, smp->tid, smp->value, &key, user ? user->ips : NULL,
				   user ? user->nr : 0, kips, smp->kernel_nr, &replaced);
		if (replaced)
			r->dw.copies_orphan++;
		if (err)
			r->err = err;
		return;
	}
	r->dw.kbuf->nr = smp->kernel_nr;
	memcpy(r->dw.kbuf->ips, kips, smp->kernel_nr * sizeof(kips[0]));
	/* named when its process is reaped or the recording ends, once per distinct stack */
	err = ustacks__add(r->dw.ustacks, false, &key, smp->value, user,
			   smp->kernel_nr ? r->dw.kbuf : NULL);
	/* bounded: named now, merged with their names into the folded set */
	if (!err && ustacks__full(r->dw.ustacks)) {
		pr_debug("unwind dwarf: %zu distinct stacks held: named now\n",
			 ustacks__nr(r->dw.ustacks));
		err = ustacks__take(r->dw.ustacks, NULL, r->sink, r, r->dw.ubuf, r->dw.kbuf);
	}
	if (err)
		r->err = err;
}

/*
 * Counts a pending copy's stacks for @ns nanoseconds off CPU, @runq of them on a runqueue
 * after its wakeup (under the key with KEY_RUNQUEUE).
 */
static int count_copy(struct record *r, const struct pending_copy *c, uint64_t ns, uint64_t runq)
{
	struct count_key key = c->key;
	struct runq_split sp;
	int err = 0;

	r->dw.ubuf->nr = c->user_nr;
	memcpy(r->dw.ubuf->ips, c->ips, c->user_nr * sizeof(c->ips[0]));
	r->dw.kbuf->nr = c->kernel_nr;
	memcpy(r->dw.kbuf->ips, c->ips + c->user_nr, c->kernel_nr * sizeof(c->ips[0]));
	/* @runq is 0 when runqueue waits are not counted: dropped where it was measured */
	sp = runq__split(ns, runq, true);
	if (sp.blocked)
		err = r->sink(r, true, &key, sp.blocked, c->user_nr ? r->dw.ubuf : NULL,
			      c->kernel_nr ? r->dw.kbuf : NULL);
	key.flags |= KEY_RUNQUEUE;
	if (!err && sp.runq)
		err = r->sink(r, true, &key, sp.runq, c->user_nr ? r->dw.ubuf : NULL,
			      c->kernel_nr ? r->dw.kbuf : NULL);
	return err;
}

/* The end of an off-CPU interval whose stacks were copied, or its part before an
 * --interval boundary: join them. */
void record__on_interval(struct record *r, const struct scorch_interval *iv)
{
	struct pending_copy *c;
	int err;

	if (iv->flags & INTERVAL_PARTIAL) {
		/* the copy waits for the rest */
		c = copytab__find(r->dw.copies, iv->tid, iv->ts);
		if (!c) {
			r->dw.intervals_orphan++;
			return;
		}
		err = count_copy(r, c, iv->value, iv->runq);
		if (err && !r->err)
			r->err = err;
		return;
	}
	c = copytab__take(r->dw.copies, iv->tid, iv->ts);
	if (!c) {
		r->dw.intervals_orphan++;
		return;
	}
	if (iv->flags & INTERVAL_DROPPED) {
		r->dw.copies_dropped++;
		free(c);
		return;
	}
	r->dw.copies_joined++;
	err = count_copy(r, c, iv->value, iv->runq);
	free(c);
	if (err && !r->err)
		r->err = err;
}

/* At the end: copies whose thread is still off CPU are closed now; others were lost. */
int record__close_copies(struct record *r)
{
	struct pending_copy *c;
	uint64_t delta, runq;
	int err = 0, e;

	while ((c = copytab__pop(r->dw.copies))) {
		e = err ? -ENOENT : sampler__open_interval(r->sampler, c->tid, c->ts, &delta, &runq);
		if (!e) {
			r->dw.copies_open++;
			err = count_copy(r, c, delta, runq);
			free(c);
			continue;
		}
		if (e == -ERANGE)
			r->dw.copies_dropped++;
		else if (e == -ENOENT)
			r->dw.copies_orphan++;
		else
			err = e;
		free(c);
	}
	return err;
}

/*
 * Ring buffer for sample records (one per BPF program): about 0.25 s of records on
 * every CPU, 1..64 MiB; off CPU, 1,000 switch-outs per second and CPU are assumed.
 * --ring-size overrides.
 */
uint32_t record__ring_size(const struct record_opts *o, int nr_cpus)
{
	double rate = o->mode == MODE_CPU ? o->freq : MAX(o->freq, 1000);
	double want = rate * nr_cpus *
		      (sizeof(struct scorch_sample) + SCORCH_MAX_STACK_DEPTH * 8 + o->stack_size) / 4;
	uint32_t sz = 1u << 20;

	if (o->ring_size)
		return o->ring_size;

	while (sz < want && sz < (64u << 20))
		sz <<= 1;
	return sz;
}
