// SPDX-License-Identifier: MIT
/* profiler: `scorch record` while sampling: the rings, new processes, their maps,
 * reaps and --interval's outputs, until the duration, a signal or the targets end it. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>

#include "common.h"
#include "perfmap.h"
#include "python.h"
#include "record.h"
#include "symbolize.h"
#include "ktables.h"
#include "launch.h"
#include "procs.h"
#include "sampler.h"
#include "sideband.h"
#include "stop.h"
#include "timing.h"

#define POLL_PERIOD_MS	 250 /* --unwind dwarf, or exits pending: wake up this often */

#define POLL_PERIOD_FP_MS 1000 /* else (JIT_REFRESH_SEC): new images wake us up, exits wait */

#define JIT_REFRESH_SEC	 1.0 /* perf maps and jitdumps: appended bytes read this often */

#define JIT_SLICE_MS	20

/*
 * The mappings of the image @p, the one its PID ran at @p->ts, from the kernel's mmap
 * records read so far (not given again when none was added since @p->sb_version):
 * 0, -ENOENT (not known completely: read /proc), -ENOMEM.
 */
static int sideband_snapshot(struct record *r, struct proc_entry *p)
{
	const struct symbolizer_vma *v;
	uint32_t version;
	size_t n;
	int err;

	if (!r->sb)
		return -ENOENT;
	err = sideband__drain(r->sb);
	if (!err)
		err = sideband__image(r->sb, p->pid, p->ts, &v, &n, &version);
	if (err || version == p->sb_version)
		return err;
	err = symbolizer__snapshot_vmas(r->sym, p->pid, p->gen, v, n);
	if (!err)
		p->sb_version = version;
	return err;
}

/*
 * The executable mappings of a live process changed after its snapshot (dlopen, JIT
 * code, a jitdump mapped): read its maps again, reusing the files already parsed, and
 * look for a new jitdump. A process gone meanwhile keeps its snapshot.
 */
static void maps_changed(struct record *r, struct proc_entry *p)
{
	int err = -ENOENT;

	if (p->flags & PROC_SIDEBAND)
		err = sideband_snapshot(r, p);
	if (err && err != -ENOMEM)
		err = symbolizer__snapshot_gen(r->sym, p->pid, p->gen);
	if (err == -ENOMEM) {
		r->err = err;
		return;
	}
	if (err && err != -ESRCH)
		pr_debug("cannot read the mappings of %u again: %s\n", p->pid, strerror(-err));
	/* new libraries only (ld.so mapping libc after the first sample): no JIT file yet */
	/* new libraries: their tables for the kernel's walk */
	if (!err && r->kt && ktables__add_image(r->kt, r->sym, p->pid, p->gen, p->gen) == -ENOMEM) {
		r->err = -ENOMEM;
		return;
	}
	if (!err && !symbolizer__jit_hints(r->sym, p->pid, p->gen))
		return;
	err = perfmaps__maps_changed(r->pm, p->pid);
	if (err == -ENOMEM)
		r->err = err;
}

void record__on_event(void *ctx, const struct scorch_event *e)
{
	struct record *r = ctx;
	struct proc_entry *p;
	int err;

	if (e->type == SCORCH_EVENT_INTERVAL) {
		record__on_interval(r, (const struct scorch_interval *)e);
		return;
	}
	/* a Python code object new to the stacks: named now, while the process lives */
	if (e->type == SCORCH_EVENT_PYCODE) {
		if (r->py)
			pycodes__note(r->py, (pid_t)e->pid, e->gen, e->pgen, e->ppid);
		return;
	}
	if (e->type == SCORCH_EVENT_EXIT || e->type == SCORCH_EVENT_REPLACED) {
		p = proctab__find(r->procs, e->pid, e->gen);
		if (p && !(p->flags & (PROC_EXITED | PROC_RELEASED))) {
			/* what it mapped since the last notice (no read while it lived) */
			if ((p->flags & PROC_SIDEBAND) && sideband_snapshot(r, p) == -ENOMEM) {
				r->err = -ENOMEM;
				return;
			}
			p->flags |= PROC_EXITED;
			/* images replaced by exec wait for the periodic reap: they must not
			 * double the reaps of fork+exec loads (each reap reads every count) */
			if (e->type == SCORCH_EVENT_EXIT) {
				r->reap.pending_exits++;
			} else {
				p->flags |= PROC_REPLACED;
				r->reap.pending_replaced++;
			}
			/* its last JIT entries, through the descriptors kept open */
			perfmaps__refresh(r->pm, e->pid);
		}
		return;
	}
	if (e->type == SCORCH_EVENT_MAPS) {
		p = proctab__find(r->procs, e->pid, e->gen);
		if (p && (p->flags & PROC_SNAPPED) && !(p->flags & (PROC_EXITED | PROC_RELEASED))) {
			maps_changed(r, p);
			return;
		}
		/* not known: its SCORCH_EVENT_NEW was lost; read it as new */
	} else if (e->type != SCORCH_EVENT_NEW) {
		return;
	}
	p = proctab__get(r->procs, e->pid, e->gen);
	if (!p) {
		r->err = -ENOMEM;
		return;
	}
	if (p->flags & (PROC_SNAPPED | PROC_MISSING))
		return; /* announced by both programs (wall mode) */
	r->nprocs.seen++;
	/* an image an exec replaced, seen in the exec's window only: its parent's at the
	 * fork, or nothing (what /proc and the mmap records show now is the next image);
	 * no JIT files nor unwind tables: it runs no more */
	if (e->type == SCORCH_EVENT_NEW && (e->flags & SCORCH_EVENT_F_REPLACED)) {
		err = symbolizer__snapshot_copy(r->sym, e->pid, e->gen, e->ppid, e->pgen);
		if (err == -ENOMEM)
			r->err = err;
		goto held;
	}
	/* a child that has not exec'd since its fork has its parent's mappings: copied
	 * (0.1 us; no /proc read: its maps may show the next image already); else an image
	 * begun during the recording is known from the kernel's mmap records (sideband.c);
	 * else read the maps while the process is alive: after exit or exec they are gone */
	err = -ENOENT;
	if (e->type == SCORCH_EVENT_NEW && e->ppid)
		err = symbolizer__snapshot_copy(r->sym, e->pid, e->gen, e->ppid, e->pgen);
	if (err && err != -ENOMEM) {
		p->ts = e->ts;
		err = sideband_snapshot(r, p);
		if (!err) {
			p->flags |= PROC_SIDEBAND;
			r->nprocs.sideband++;
		}
	}
	if (err == -ENOMEM) {
		r->err = err;
		return;
	}
	if (err) {
		err = symbolizer__snapshot_gen(r->sym, e->pid, e->gen);
		if (!err)
			r->nprocs.read++;
	}
	/* a runtime's perf map or jitdump: found now, read as it grows; looked for later
	 * (sweeps, new executable mappings) when nothing mapped needs one, as for most
	 * processes: a look (ns stat, open under /proc/PID/root, a second maps read) was
	 * about 17 of the ~150 us a short-lived process cost (bench/proc-cost.sh) */
	if (err || symbolizer__jit_hints(r->sym, e->pid, e->gen))
		perfmaps__track(r->pm, e->pid);
	else if (perfmaps__track_later(r->pm, e->pid) == -ENOMEM)
		r->err = -ENOMEM;
	/* --unwind kernel: from now on its samples are walked with its files' tables */
	if (!err && r->kt) {
		int e2 = ktables__add_image(r->kt, r->sym, e->pid, e->gen, e->gen);

		if (e2 == -ENOMEM)
			r->err = e2;
		else if (e2)
			pr_debug("cannot load the unwind tables of %u: %s\n", e->pid, strerror(-e2));
	}
held:
	if (!err) {
		p->flags |= PROC_SNAPPED;
		r->nprocs.held++;
		r->nprocs.held_max = MAX(r->nprocs.held, r->nprocs.held_max);
		return;
	}
	p->flags |= PROC_MISSING;
	if (err != -ESRCH)
		pr_debug("cannot snapshot the mappings of %u: %s\n", e->pid, strerror(-err));
}

static bool targets_gone(struct record *r, struct pollfd *pfds, int first, int nfds)
{
	const struct record_opts *o = &r->opts;
	size_t i, alive = 0;

	for (i = 0; i < o->nr_pids; i++) {
		if (!r->gone[i]) {
			if (r->pidfds[i] >= 0) {
				int k = first + (int)i;

				if (k < nfds && (pfds[k].revents & (POLLIN | POLLHUP)))
					r->gone[i] = true;
			} else if (kill(o->pids[i], 0) && errno == ESRCH) {
				r->gone[i] = true;
			}
		}
		alive += !r->gone[i];
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (!r->gone[o->nr_pids + i] && kill(o->tids[i], 0) && errno == ESRCH)
			r->gone[o->nr_pids + i] = true;
		alive += !r->gone[o->nr_pids + i];
	}
	return (o->nr_pids || o->nr_tids) && !alive;
}

/*
 * --interval: the waits still open count up to here in this interval (in the kernel; a
 * copied one's part through the ring, read here), the rest in the next; then every
 * count so far goes to this interval's files.
 */
static int end_interval(struct record *r)
{
	int err;

	if (r->cut_intervals) {
		err = sampler__cut_intervals(r->sampler, timing__now_ns());
		if (err) {
			pr_err("cannot count the off-CPU waits still open: %s\n", strerror(-err));
			return err;
		}
		if (r->dw.copies)
			sampler__consume(r->sampler, record__on_event, record__on_sample, r,
					 CONSUME_SLICE_MS * 1000000ULL);
	}
	return record__write_interval(r);
}

/*
 * Waits until the duration ends, a signal arrives, or the targets exit; sampling has
 * stopped when it returns. The duration and signals are a stop thread's: the loop may
 * be busy for a while (naming the stacks of exited processes), the recording is not.
 */
int record__loop(struct record *r)
{
	const struct record_opts *o = &r->opts;
	size_t nr_targets = o->nr_pids + o->nr_tids, i;
	struct pollfd *pfds = NULL;
	/* the recording began at the attach: -d and the elapsed time count from there */
	double start = r->attach_ns ? r->attach_ns / 1e9 : timing__now();
	double deadline = start + o->duration;
	struct stopper *stop = &r->stop; /* started at the attach (record.c) */
	int nfds = 0, first_pid, n, err;

	pfds = calloc(3 + sideband__nr_fds(r->sb) + nr_targets, sizeof(*pfds));
	if (!pfds) {
		err = -ENOMEM;
		goto cleanup;
	}
	pfds[nfds++] = (struct pollfd){ .fd = stopper__fd(stop), .events = POLLIN };
	pfds[nfds++] = (struct pollfd){ .fd = sampler__event_fd(r->sampler), .events = POLLIN };
	if (r->launch.pid)
		pfds[nfds++] = (struct pollfd){ .fd = r->launch.pidfd, .events = POLLIN };
	for (i = 0; i < (size_t)sideband__nr_fds(r->sb); i++)
		pfds[nfds++] = (struct pollfd){.fd = sideband__fd(r->sb, i), .events = POLLIN};
	first_pid = nfds;
	for (i = 0; i < o->nr_pids; i++)
		pfds[nfds++] = (struct pollfd){ .fd = r->pidfds[i], .events = POLLIN };

	r->next_interval = start + o->interval;
	while (!stopper__stopped(stop)) {
		/* each wake-up takes a CPU from the programs profiled: only as often as needed
		 * (the idle window of a pending reap is read every IDLE_WINDOW_SEC or so) */
		bool often = o->unwind == UNWIND_DWARF || r->reap.pending_exits || r->reap.pending_replaced;
		double period = (often ? POLL_PERIOD_MS : POLL_PERIOD_FP_MS) / 1e3, left;
		struct timespec ts;

		if (perfmaps__pending(r->pm))
			period = JIT_SLICE_MS / 1e3;
		left = o->duration ? deadline - timing__now() : period;
		if (left <= 0)
			break;
		left = MIN(left, period);
		if (o->interval)
			left = MAX(0, MIN(left, r->next_interval - timing__now()));
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		n = ppoll(pfds, nfds, &ts, NULL);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			pr_err("poll failed: %s\n", strerror(errno));
			break;
		}
		/* a quarter of a side-band ring waits: read it before it fills */
		if (sideband__drain(r->sb) == -ENOMEM)
			r->err = -ENOMEM;
		sampler__consume(r->sampler, record__on_event, record__on_sample, r, CONSUME_SLICE_MS * 1000000ULL);
		if (r->err) {
			err = r->err;
			break;
		}
		/* the rest can wait for the end: stop as soon as asked */
		if (stopper__stopped(stop))
			break;
		record__idle_update(r);
		if (timing__now() - r->last_jit_refresh >= JIT_REFRESH_SEC) {
			perfmaps__refresh(r->pm, 0);
			r->last_jit_refresh = timing__now();
		} else if (perfmaps__continue(r->pm, false) == -ENOMEM) {
			r->err = -ENOMEM;
		}
		/* an interval ending with the duration is written once, at the end */
		if (o->interval && timing__now() >= r->next_interval &&
		    (!o->duration || r->next_interval < deadline)) {
			err = end_interval(r);
			if (err)
				break;
		}
		err = record__reap_due(r);
		if (err > REAP_NOT_YET) {
			r->reap.forced[err]++;
			err = record__reap_exited(r);
		}
		if (err)
			break;
		if (r->launch.pid) {
			bool exited = r->launch.pidfd >= 0 ? n > 0 && (pfds[2].revents & POLLIN)
							   : launch__wait(&r->launch, true) != -EAGAIN;
			if (exited)
				break;
		}
		if (targets_gone(r, pfds, first_pid, nfds)) {
			pr_debug("the target%s exited\n", nr_targets > 1 ? "s" : "");
			break;
		}
	}
cleanup:
	stopper__finish(stop);
	r->elapsed = stop->stopped_at - start;
	pr_debug("reaps: %" PRIu64 " count keys of exited processes and %" PRIu64
		 " user stacks only they used taken out of the kernel maps; intervals: %" PRIu64
		 " stacks unused for one\n",
		 r->reap.counts, r->reap.stacks, r->stacks_aged);
	timing__start(&r->finish, o->timing);
	r->finish.start = stop->stopped_at; /* the end phases count from the stop */
	free(pfds);
	return err;
}
