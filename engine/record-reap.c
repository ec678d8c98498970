// SPDX-License-Identifier: MIT
/* profiler: `scorch record`: exited processes' images, released during the recording
 * when the CPUs are idle or what waits costs too much. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "perfmap.h"
#include "python.h"
#include "record.h"
#include "symbolize.h"
#include "capture-record.h"
#include "governor.h"
#include "ktables.h"
#include "procs.h"
#include "sampler.h"
#include "timing.h"
#include "ustacks.h"

/* reaps of exited processes (record__reap_due(); the other limits: reap_mark__exceeded()) */
#define REAP_PERIOD_SEC	 1.0  /* once a period, */

#define REAP_IDLE_CPUS	 0.5  /* if the CPUs were this idle lately (IDLE_WINDOW_SEC); */

#define REAP_HELD	 1024 /* else once this many exited images wait */

#define IDLE_WINDOW_SEC	 0.2 /* idle time is read over the last 0.2 to 0.45 s */

static bool is_exited(void *ctx, const struct count_key *key)
{
	struct record *r = ctx;
	struct proc_entry *p = proctab__find(r->procs, key->pid, key->gen);

	return p && (p->flags & PROC_EXITED) && !(p->flags & PROC_RELEASED);
}

/* What waits for a reap, now. 0 or -ENOMEM. */
static int reap_mark__read(struct record *r, struct reap_mark *m)
{
	struct unwind_stats us = {};

	if (r->dw.unw)
		unwinder__stats(r->dw.unw, &us);
	m->table_bytes = us.table_bytes;
	m->ukeys = r->dw.ustacks ? ustacks__nr(r->dw.ustacks) : 0;
	return sampler__stat(r->sampler, STAT_COUNT_KEYS, &m->keys);
}

/* Counts what is added from now on (after a reap, or an interval's drain). */
int record__reset_reap_mark(struct record *r)
{
	return reap_mark__read(r, &r->reap.mark);
}

/*
 * Processes that exited: their counts are taken out of the kernel maps and
 * symbolized now, then their mappings are released, so memory follows the
 * processes alive, not every process the recording has seen.
 */
int record__reap_exited(struct record *r)
{
	struct proc_entry *p = NULL;
	size_t nr = 0, nr_stacks = 0;
	size_t exits = r->reap.pending_exits;
	double t0 = timing__now();
	int err;

	err = sampler__reap(r->sampler, is_exited, true, r->sink, r, &r->drain_lost,
			    &r->drain_lost_ns, &nr, &nr_stacks);
	if (err) {
		pr_err("cannot read the stacks of exited processes: %s\n", strerror(-err));
		return err;
	}
	r->reap.counts += nr;
	r->reap.stacks += nr_stacks;
	if (r->dw.ustacks) {
		err = ustacks__take(r->dw.ustacks, is_exited, r->sink, r, r->dw.ubuf, r->dw.kbuf);
		if (err)
			return err;
	}
	while ((p = proctab__next(r->procs, p))) {
		if (!(p->flags & PROC_EXITED) || (p->flags & PROC_RELEASED))
			continue;
		if (r->cap) {
			err = capture_rec__release(r->cap, p->pid, p->gen);
			if (err)
				return err;
		}
		if (r->kt)
			ktables__forget(r->kt, p->pid, p->gen);
		/* (written to the capture above, when there is one) */
		pycodes__release(r->py, p->pid, p->gen, NULL, NULL);
		symbolizer__forget_gen(r->sym, p->pid, p->gen);
		unwinder__forget(r->dw.unw, p->pid, p->gen);
		/* JIT maps are per PID: after an exec the new image may be tracking it */
		if (!(p->flags & PROC_REPLACED))
			perfmaps__forget(r->pm, p->pid);
		if (p->flags & PROC_SNAPPED)
			r->nprocs.held--;
		p->flags |= PROC_RELEASED;
		r->nprocs.released++;
	}
	/* unwind tables: like the symbolizer's files, 16 released ones stay loaded */
	unwinder__trim(r->dw.unw, 16);
	r->reap.pending_exits = 0;
	r->reap.pending_replaced = 0;
	r->reap.last = timing__now();
	r->reap.reaps++;
	pr_debug("reap: %zu count keys of %zu exited processes in %.1f ms\n", nr,
		 exits, (r->reap.last - t0) * 1e3);
	return record__reset_reap_mark(r);
}

/* Ticks (USER_HZ) of all CPUs so far from /proc/stat's "cpu" line; false when
 * unreadable. @idle: idle + iowait; @total: every field up to steal. */
bool cpu_ticks__read(struct cpu_ticks *t)
{
	unsigned long long v[8] = {};
	char buf[256];
	ssize_t n;
	int fd, i;

	fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* cpu  user nice system idle iowait irq softirq steal ... */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) < 5)
		return false;
	t->idle = v[3] + v[4];
	t->steal = v[7];
	t->total = 0;
	for (i = 0; i < 8; i++)
		t->total += v[i];
	return true;
}

/*
 * Reads how idle the CPUs were over the last IDLE_WINDOW_SEC or a little more (called at
 * every turn of the loop), while exited processes wait to be reaped; with none waiting
 * /proc/stat is not read and the next wait starts a new window (not idle until it ends).
 * The window is short on purpose: measured since the last reap instead, the idle seconds
 * before a job started would let a reap run during it.
 */
void record__idle_update(struct record *r)
{
	double now, elapsed;
	struct cpu_ticks ct;
	uint64_t ticks;

	if (!r->reap.pending_exits && !r->reap.pending_replaced) {
		r->reap.idle_at = 0;
		return;
	}
	now = timing__now();
	elapsed = now - r->reap.idle_at;
	if (r->reap.idle_at && elapsed < IDLE_WINDOW_SEC)
		return; /* too short for clock ticks: the last verdict stands */
	if (!cpu_ticks__read(&ct)) {
		r->reap.idle_lately = true; /* unknown counts as idle */
		return;
	}
	ticks = ct.idle;
	if (!r->reap.idle_at) {
		r->reap.idle_lately = false;
		r->reap.idle_ticks = ticks;
		r->reap.idle_at = now;
		return;
	}
	r->reap.idle_lately = ticks < r->reap.idle_ticks ||
			 (double)(ticks - r->reap.idle_ticks) / sysconf(_SC_CLK_TCK) >=
				 REAP_IDLE_CPUS * elapsed;
	r->reap.idle_ticks = ticks;
	r->reap.idle_at = now;
}

/* Is a CPU free this instant for a reap (reap__cpu_free())? Unknown counts as free, as
 * an unreadable idle share does. */
static bool cpu_free_now(void)
{
	char *text = NULL;
	size_t len;
	bool free_now;

	if (file__read_bounded(AT_FDCWD, "/proc/loadavg", 4096, &text, &len))
		return true;
	free_now = reap__cpu_free(text, sysconf(_SC_NPROCESSORS_ONLN)) != 0;
	free(text);
	return free_now;
}

/*
 * Is it time to reap the processes that exited (and the images exec replaced)? That
 * work (reading their counts, symbolizing their stacks, building DWARF indexes of their
 * files: tens of ms for libc's) takes CPU from the programs being profiled: it is done
 * once a period when the CPUs were idle lately and one is free now, else put off, as
 * perf leaves its symbolizing to perf report, until the end or until what waits costs
 * too much:
 * - REAP_HELD exited images: their mappings, about 1 KiB each for a small program
 *   (DESIGN.md), and their files' descriptors and headers;
 * - keys added to 1/REAP_KEYS_DIV of a count map since the last reap: keys of exited
 *   processes, which a reap deletes, never fill much more than that share of the map,
 *   whose fill loses samples. --unwind dwarf's table of stacks (ustacks.c) likewise;
 * - --unwind dwarf: REAP_TABLE_BYTES more unwind tables loaded (files of exited
 *   processes stay loaded until a reap, unwinder__trim()).
 * Returns why, or REAP_NOT_YET; -ENOMEM.
 */
int record__reap_due(struct record *r)
{
	const struct reap_mark *was = &r->reap.mark;
	struct reap_mark now;
	int err;

	if (!r->reap.pending_exits && !r->reap.pending_replaced)
		return REAP_NOT_YET;
	if (timing__now() - r->reap.last >= REAP_PERIOD_SEC) {
		/* idle over the last window, and a CPU free now: a job may have begun since */
		if (r->reap.idle_lately && cpu_free_now())
			return REAP_IDLE;
		r->reap.deferred++;
		r->reap.last = timing__now(); /* look again in a period */
	}
	if (r->reap.pending_exits + r->reap.pending_replaced >= REAP_HELD)
		return REAP_FORCED_HELD;
	err = reap_mark__read(r, &now);
	if (err)
		return err;
	return reap_mark__exceeded(was, &now, r->reap.map_entries);
}
