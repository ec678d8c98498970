// SPDX-License-Identifier: MIT
/* profiler: `scorch record`: counts to the outputs, each --interval and at the end,
 * and the end-of-run summary. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "perfmap.h"
#include "python.h"
#include "record.h"
#include "symbolize.h"
#include "capture-record.h"
#include "event.h"
#include "fold.h"
#include "governor.h"
#include "ktables.h"
#include "output.h"
#include "procs.h"
#include "sampler.h"
#include "sideband.h"
#include "summary.h"
#include "timing.h"
#include "ustacks.h"

int record__add_stack(void *ctx, bool offcpu, const struct count_key *key, uint64_t value,
		     const struct stack *user, const struct stack *kernel)
{
	struct record *r = ctx;
	struct proc_entry *p = proctab__find(r->procs, key->pid, key->gen);
	/* gone before its maps were read (or released): never guess from a PID
	 * that may belong to another process by now */
	bool lost_proc = p && (p->flags & (PROC_MISSING | PROC_RELEASED));
	int err = 0;

	r->fold.nr_wakers = 0;
	while ((key->flags & KEY_WAKER) && r->fold.nr_wakers < SCORCH_CHAIN_MAX) {
		struct fold_waker *fw = &r->fold.wakers[r->fold.nr_wakers];

		err = sampler__waker(r->sampler, r->fold.nr_wakers, &fw->w, &fw->user, &fw->kernel);
		if (err == -ESTALE)
			r->fold.chain_cut_us += offcpu ? value / 1000 : 0;
		if ((err == -ENOENT || err == -ESTALE) && r->fold.nr_wakers) {
			err = 0; /* the chain's end */
			break;
		}
		if (err)
			return err;
		p = proctab__find(r->procs, fw->w->pid, fw->w->gen);
		fw->lost_proc = p && (p->flags & (PROC_MISSING | PROC_RELEASED));
		r->fold.nr_wakers++;
	}
	if (r->cap)
		err = capture_rec__add(r->cap, offcpu, key, value, user, kernel, lost_proc);
	if (!err && r->opts.named)
		err = fold__add(&r->fold, offcpu, key, value, user, kernel, lost_proc);
	else if (!err)
		fold__tally(&r->fold, offcpu, key, value); /* a capture alone: its summary */
	return err;
}

/* The summary's last line: where the outputs went. */
static void report_written(const struct record *r)
{
	char where[1024] = "";
	size_t n;

	if (r->opts.named)
		outputs__describe(r->opts.outs, where, sizeof(where));
	n = strlen(where);
	if (r->cap && n < sizeof(where))
		snprintf(where + n, sizeof(where) - n, "%s%s", n ? ", " : "",
			 strcmp(r->opts.capture_path, "-") ? r->opts.capture_path
							   : "capture to standard output");
	pr_warn("wrote %s\n", where);
}

/*
 * CPython processes: with -v, what was walked and named; a warning when Python frames
 * went unnamed in more than 1 % of them (their code objects freed before they were read).
 */
static void report_python(const struct record *r, const uint64_t *st,
			  const struct ktables_stats *ks)
{
	struct pycodes_stats ps;

	pycodes__stats(r->py, &ps);
	if (r->opts.verbose && (ks->py_procs || ks->py_refused))
		pr_warn("python: %" PRIu64 " CPython process images walked (%" PRIu64
			" refused: not the layout of their version); %" PRIu64
			" stacks with a thread state, %" PRIu64 " Python frames (%" PRIu64
			" runs put where no native frame held them, %" PRIu64
			" chains cut); %" PRIu64 " code objects read (%" PRIu64
			" unreadable, %" PRIu64 " released with their process), %" PRIu64
			" frames named, %" PRIu64 " not\n",
			ks->py_procs, ks->py_refused, st[STAT_PY_WALKS], st[STAT_PY_FRAMES],
			st[STAT_PY_UNMATCHED], st[STAT_PY_CUT], ps.codes, ps.unreadable, ps.released,
			ps.frames, ps.unnamed);
	if (ps.unnamed * 100 > ps.frames && ps.unnamed > 10) {
		pr_warn("python: %" PRIu64 " of %" PRIu64
			" Python frames are [unknown python]: their code objects could not be read\n",
			ps.unnamed, ps.frames);
		pr_hint("code objects freed or processes gone before scorch read them; -v counts "
			"them\n");
	}
}

/*
 * --unwind kernel: with -v, how the walks ended and what the tables hold; a warning
 * when tables did not fit (those processes' stacks were walked by frame pointers).
 */
static void report_kunwind(const struct record *r, const uint64_t *st)
{
	struct ktables_stats ks;
	uint64_t walks = st[STAT_KU_WALKS];

	ktables__stats(r->kt, &ks);
	if (r->opts.verbose && st[STAT_KU_FP_STEPS])
		pr_warn("unwind kernel: %" PRIu64 " frames had no rule the walk follows (signal "
			"frames, DWARF expressions) and were stepped by frame pointer: --unwind "
			"dwarf unwinds a copy of each stack in scorch instead, with every rule\n",
			st[STAT_KU_FP_STEPS]);
	if (r->opts.verbose && st[STAT_KU_PY_TRAMPOLINES])
		pr_warn("unwind kernel: %" PRIu64 " CPython perf trampolines (-X perf) stepped "
			"through and left out: the Python frames they stand for are read from "
			"the interpreter\n",
			st[STAT_KU_PY_TRAMPOLINES]);
	if (r->opts.verbose && (walks || st[STAT_KU_NO_PROC]))
		pr_warn("unwind kernel: %" PRIu64 " walks with tables: %" PRIu64 " complete, %" PRIu64
			" ended without a rule or frame pointer, %" PRIu64 " at unreadable stack, %" PRIu64
			" at bad registers, %" PRIu64 " at the depth limit (%ld), %" PRIu64
			" with the stack map full; %" PRIu64 " frame-pointer steps; %" PRIu64
			" stacks of processes without tables yet (frame pointers)\n",
			walks, st[STAT_KU_OUTERMOST], st[STAT_KU_END_NO_INFO], st[STAT_KU_END_READ],
			st[STAT_KU_END_BAD], st[STAT_KU_END_DEPTH], r->opts.max_depth,
			st[STAT_KU_END_FULL], st[STAT_KU_FP_STEPS], st[STAT_KU_NO_PROC]);
	if (r->opts.verbose) {
		pr_warn("unwind kernel: tables of %" PRIu64 " files (compiled in %.0f ms), %" PRIu64
			" of %" PRIu64 " rows (%.1f MiB; %" PRIu64
			" rules walked by frame pointer), for %" PRIu64
			" process images; %" PRIu64 " files with .debug_frame, %" PRIu64
			" without CFI, %" PRIu64 " unreadable, %" PRIu64 " mappings past %d per image\n",
			ks.files, ks.build_s * 1e3, ks.rows, ks.rows_cap,
			ks.rows * sizeof(struct kunwind_row) / 1048576.0,
			ks.rows_invalid, ks.images, ks.files_debug_frame, ks.files_no_cfi,
			ks.files_unreadable,
			ks.maps_dropped, KUNWIND_MAX_MAPS);
	}
	report_python(r, st, &ks);
	if (ks.files_too_big || ks.procs_full) {
		pr_warn("unwind kernel: %" PRIu64 " files did not fit the %" PRIu64
			" rows of tables, %" PRIu64 " process images the table of processes: their "
			"stacks were walked by frame pointers\n",
			ks.files_too_big, ks.rows_cap, ks.procs_full);
		pr_hint("record fewer processes (-p) or shorter runs\n");
	}
}
/* --unwind dwarf: what crossed to user space and how the walks ended. */
static void report_dwarf(const struct record *r, const uint64_t *st)
{
	struct unwind_stats us;
	uint64_t bad = sampler__bad_samples(r->sampler), cut;

	unwinder__stats(r->dw.unw, &us);
	/* walks cut short by the copy's size, not by a stack top learned too low */
	cut = us.ends[UNWIND_END_TRUNCATED] - MIN(us.ends[UNWIND_END_TRUNCATED], r->dw.tops_cut);
	/* without -v, stacks cut by the copy are the summary's, by the share they count */
	if (!r->opts.verbose)
		return;
	if (!st[STAT_SAMPLES_SENT] && !us.samples && !us.files_loaded && !st[STAT_OFF_COPIES])
		return; /* nothing crossed: all zero */
	pr_warn("unwind dwarf: %" PRIu64 " sample records, %.1f KiB each on average (%" PRIu64
		" near the stack top copied short), %" PRIu64 " malformed\n",
		st[STAT_SAMPLES_SENT],
		st[STAT_SAMPLES_SENT] ? st[STAT_SAMPLE_BYTES] / 1024.0 / st[STAT_SAMPLES_SENT] : 0.0,
		st[STAT_STACK_PARTIAL], bad);
	pr_warn("unwind dwarf: %" PRIu64 " walks: %" PRIu64 " complete, %" PRIu64
		" cut at the --stack-size copy ([truncated]), %" PRIu64 " at %u frames, %" PRIu64
		" without CFI or frame pointer, %" PRIu64 " errors; %" PRIu64
		" of released processes\n",
		us.samples, us.ends[UNWIND_END_OUTERMOST], us.ends[UNWIND_END_TRUNCATED],
		us.ends[UNWIND_END_DEPTH], (unsigned int)r->opts.max_depth,
		us.ends[UNWIND_END_NO_INFO],
		us.ends[UNWIND_END_ERROR], r->dw.skipped);
	/* no file read (no sample in user code): no line of zeros */
	if (us.files_loaded || us.files_no_cfi || us.files_unreadable)
			pr_warn("unwind dwarf: tables read %" PRIu64 " times, of %" PRIu64 " files at most at once (%.1f MiB"
			" at most, %" PRIu64 " files / %.1f MiB at the end), %" PRIu64
			" dropped when unused; %" PRIu64 " files with .debug_frame, %" PRIu64
			" without CFI (frame pointers used), %" PRIu64 " unreadable\n",
			us.files_loaded, us.files_held_max, us.table_bytes_max / 1048576.0, us.files_held,
			us.table_bytes / 1048576.0, us.files_evicted, us.files_debug_frame, us.files_no_cfi,
			us.files_unreadable);
	if (st[STAT_STACK_TOP] || r->dw.tops_set || r->dw.tops_forgotten || r->dw.tops_cut)
		pr_warn("unwind dwarf: %" PRIu64 " copies ended at their thread's known stack top (%" PRIu64
			" tops learned from complete walks, %" PRIu64
			" forgotten after a walk needed more; %" PRIu64 " walks cut by them: [truncated])\n",
			st[STAT_STACK_TOP], r->dw.tops_set, r->dw.tops_forgotten, r->dw.tops_cut);
	if (r->opts.mode == MODE_OFFCPU || r->opts.mode == MODE_WALL)
		pr_warn("unwind dwarf: off CPU: %" PRIu64 " stack copies at switch-out: %" PRIu64
			" counted with their interval, %" PRIu64 " closed at the end, %" PRIu64
			" dropped by --min-block/--max-block, %" PRIu64
			" without their interval's end; %" PRIu64 " intervals without their copy\n",
			st[STAT_OFF_COPIES], r->dw.copies_joined, r->dw.copies_open, r->dw.copies_dropped,
			r->dw.copies_orphan, r->dw.intervals_orphan);
	if (cut)
		pr_hint("raise --stack-size (now %ld) for deeper stacks\n", r->opts.stack_size);
}


/* The end-of-run summary. Returns the share of samples or intervals lost, in percent. */
double record__summary(struct record *r, const uint64_t *st)
{
	const struct record_opts *o = &r->opts;
	struct symbolizer_stats ss;
	struct perfmaps_stats js;
	struct summary sm = {
		.stack_size = o->unwind == UNWIND_DWARF ? o->stack_size : 0,
		.fold = &r->fold,
		.st = st,
		.mode = o->mode,
		.freq = o->freq,
		.event = o->event.spec,
		.event_period = o->event.period,
		.nr_cpus = sampler__nr_cpus(r->sampler),
		.elapsed = r->elapsed,
		.quiet = o->quiet,
		.verbose = o->verbose > 0,
		.drain_lost = r->drain_lost,
		.ring_bytes = r->dw.ring_bytes,
		.ring_left = r->ring_left,
		.max_stacks = record__map_entries(r, sampler__nr_cpus(r->sampler)),
		.procs_seen = r->nprocs.seen,
		.procs_released = r->nprocs.released,
		.procs_held_max = r->nprocs.held_max,
		.ss = o->named ? &ss : NULL,
		/* a capture alone names no stack: its counts, by address */
		.stacks_written = o->named ? r->stacks_written : capture_rec__counts(r->cap),
		.js = &js,
		.steal_pct = -1,
	};
	struct sideband_stats sbs;
	struct governor_stats gs;
	struct probe_result pr;
	double lost_pct;

	governor__stats(&r->gov, &gs);
	sm.gov = &gs;
	if (r->cpu_at[0].total && r->cpu_at[1].total > r->cpu_at[0].total &&
	    r->cpu_at[1].steal >= r->cpu_at[0].steal)
		sm.steal_pct = 100.0 * (r->cpu_at[1].steal - r->cpu_at[0].steal) /
			       (r->cpu_at[1].total - r->cpu_at[0].total);
	if ((o->mode == MODE_CPU || o->mode == MODE_WALL) && !probe__run(PROBE_MAX_RATE, &pr) && pr.value >= 0)
		sm.max_rate_end = pr.value;

	symbolizer__stats(r->sym, &ss);
	perfmaps__stats(r->pm, &js);
	sm.procs_missing = ss.procs_missing;
	sm.procs_copied = ss.procs_copied;
	sm.procs_sideband = r->nprocs.sideband;
	sm.procs_read = r->nprocs.read;
	sm.reaps = r->reap.reaps;
	sm.reaps_deferred = r->reap.deferred;
	sm.reaps_held = r->reap.forced[REAP_FORCED_HELD];
	sm.reaps_keys = r->reap.forced[REAP_FORCED_KEYS];
	sm.reaps_tables = r->reap.forced[REAP_FORCED_TABLES];
	sm.reaps_left = r->reap.pending_exits + r->reap.pending_replaced;
	sideband__stats(r->sb, &sbs);
	sm.sbs = r->sb ? &sbs : NULL;
	lost_pct = summary__counts(&sm);
	if (o->unwind == UNWIND_DWARF && !o->quiet)
		report_dwarf(r, st);
	if (r->kt && !o->quiet)
		report_kunwind(r, st);
	summary__details(&sm);
	if (o->verbose && r->edges.threads)
		pr_warn("threads at the start: %" PRIu64 " read, %" PRIu64
			" off CPU counted from the start, %" PRIu64 " ran while read (not counted "
			"from the start), %" PRIu64 " unreadable or gone, %" PRIu64
			" not read in time\n",
			r->edges.threads, r->edges.seeded, r->edges.ran, r->edges.unreadable,
			r->edges.late);
	if (!o->verbose && !o->quiet && r->edges.late) {
		pr_warn("threads at the start: %" PRIu64 " of %" PRIu64 " not read in time: the "
			"time they were blocked before their first switch-in is missing\n",
			r->edges.late, r->edges.threads);
		pr_hint("the reading gets a quarter of -d, at most a second: record longer, or "
			"fewer targets (-p)\n");
	}
	if (r->cap && o->verbose)
		capture_rec__summary(r->cap);
	if (!o->quiet && !r->write_failed && !o->on_interval)
		report_written(r);
	return lost_pct;
}

/* -o x.scorch: what the report needs to show the same summary. */
static int close_capture(struct record *r, const uint64_t *st)
{
	struct capture_stats cs = {
		.elapsed_ns = (uint64_t)(r->elapsed * 1e9),
		.nr_cpus = sampler__nr_cpus(r->sampler),
		.nr_bpf = SCORCH_NR_STATS,
		.drain_lost = r->drain_lost,
		.drain_lost_ns = r->drain_lost_ns,
		.procs_seen = r->nprocs.seen,
		.procs_released = r->nprocs.released,
		.procs_held_max = r->nprocs.held_max,
		.max_stacks = record__map_entries(r, sampler__nr_cpus(r->sampler)),
		.ring_bytes = r->dw.ring_bytes,
	};
	struct symbolizer_stats ss;

	_Static_assert(SCORCH_NR_STATS <= CAPTURE_MAX_STATS, "stats fit a capture");
	symbolizer__stats(r->sym, &ss);
	cs.procs_missing = ss.procs_missing;
	memcpy(cs.bpf, st, SCORCH_NR_STATS * sizeof(*st));
	return capture_rec__close(r->cap, &cs, true);
}

/*
 * The graphs' defaults, unless the user chose: title, palette, count name, and the
 * subtitle @subtitle (what the recording was).
 */
static void graph_defaults(struct record *r, struct flamegraph_opts *fg, const char *subtitle)
{
	struct flamegraph_opts dflt;

	if (!fg->subtitle)
		fg->subtitle = subtitle;
	/* offwake: its own title and palette, before the off-CPU defaults */
	if (r->opts.offwake) {
		flamegraph_opts__init(&dflt);
		if (!fg->title)
			fg->title = r->opts.wakeup  ? "Wakeup Time Flame Graph"
				    : r->opts.chain ? "Chain Graph"
						    : "Off-Wake Time Flame Graph";
		if (fg->colors == dflt.colors)
			fg->colors = r->opts.chain ? FG_PAL_CHAIN : FG_PAL_WAKEUP;
	}
	if (r->opts.mode == MODE_EVENT)
		event__svg_defaults(&r->opts.event, fg);
	else
		fold__svg_defaults(r->opts.mode, fg);
}

/*
 * What the recording was: so far (@st: the counters at its end, NULL before; @end_ns
 * its end, CLOCK_MONOTONIC) into r->page_desc, for the page of every interval; into
 * r->desc for the other outputs, which with --interval hold one interval each, from
 * @start_ns (CLOCK_REALTIME) to @end_ns: its number, start and length then.
 */
static void describe(struct record *r, const uint64_t *st, int64_t start_ns, uint64_t end_ns)
{
	const struct record_opts *o = &r->opts;
	struct summary sm = {
		.fold = &r->fold,
		.st = st,
		.mode = o->mode,
		.freq = o->freq,
		.elapsed = st ? r->elapsed : (end_ns - MIN(end_ns, r->attach_ns)) / 1e9,
		.drain_lost = r->drain_lost,
	};
	struct recording_desc rd = {
		.what = o->mode == MODE_EVENT ? event__describe(&r->opts.event)
			: o->wakeup	      ? "wakeup"
			: o->chain	      ? "chain"
			: o->offwake	      ? "offwake"
					      : summary__mode_name(o->mode),
		.target = r->target,
		.start_ns = r->start_ns,
		.host = r->host,
	};

	summary__describe(&sm, &rd, r->page_desc, sizeof(r->page_desc));
	if (o->interval <= 0) {
		memcpy(r->desc, r->page_desc, sizeof(r->desc));
		return;
	}
	/* the counters are the whole recording's: no totals for one interval */
	sm.st = NULL;
	rd.interval = o->named ? outputs__seq(o->outs) : 0;
	rd.start_ns = start_ns;
	sm.elapsed = (end_ns - MIN(end_ns, r->window_ns)) / 1e9;
	summary__describe(&sm, &rd, r->desc, sizeof(r->desc));
}

/*
 * The named outputs (folded, SVG, pprof, speedscope) of the counts taken from
 * r->window_ns to @end_ns (CLOCK_MONOTONIC): the recording window pprof states, not
 * the start-up before the attach nor the naming and writing after the stop. @st: the
 * counters at the end of the recording, NULL for an --interval's files.
 */
static int write_named(struct record *r, const uint64_t *st, uint64_t end_ns)
{
	struct flamegraph_opts fg = r->opts.fg, page = r->opts.fg;
	struct output_data d = {.folded = r->fold.folded, .fg = &fg, .page_fg = &page};
	struct timespec ts;
	uint64_t now = timing__now_ns();

	if (r->window_ns && end_ns > r->window_ns && !clock_gettime(CLOCK_REALTIME, &ts)) {
		d.duration_ns = (int64_t)(end_ns - r->window_ns);
		d.time_ns = ts.tv_sec * 1000000000LL + ts.tv_nsec - (int64_t)(now - r->window_ns);
	}
	describe(r, st, d.time_ns, end_ns);
	d.desc = r->desc;
	if (r->opts.graph) {
		graph_defaults(r, &fg, r->desc);
		graph_defaults(r, &page, r->page_desc);
	}
	return outputs__write(r->opts.outs, &d);
}

/*
 * on_interval (a live view): the interval's counts, named, to the callback with the
 * figures of its counters @st, read at @end (timing__now()) when its counts were taken;
 * @last: the partial interval at the end of the recording.
 */
static int give_interval(struct record *r, const uint64_t *st, double end, bool last)
{
	const struct record_opts *o = &r->opts;
	double start = r->live.end ? r->live.end : r->attach_ns / 1e9;
	struct interval_info info = {
		.sz = sizeof(info),
		.seq = ++r->live.seq,
		.last = last,
		.elapsed = end - r->attach_ns / 1e9,
		.seconds = end - start,
		.nr_cpus = sampler__nr_cpus(r->sampler),
		.freq = o->freq,
	};
	uint64_t d[SCORCH_NR_STATS];
	size_t i;

	for (i = 0; i < SCORCH_NR_STATS; i++)
		d[i] = st[i] >= r->live.st[i] ? st[i] - r->live.st[i] : 0;
	summary__loss(d, o->mode, r->drain_lost - r->live.drain_lost, &info.taken, &info.lost);
	info.samples = d[STAT_SAMPLES];
	info.switches = d[STAT_SWITCHES];
	if (o->mode == MODE_CPU || o->mode == MODE_WALL)
		info.rate = governor__rate(&r->gov) ?: o->freq;
	memcpy(r->live.st, st, sizeof(r->live.st));
	r->live.drain_lost = r->drain_lost;
	r->live.end = end;
	return o->on_interval(o->on_interval_ctx, r->fold.folded, &info);
}

int record__write_output(struct record *r, const uint64_t *st)
{
	int err = 0, e;

	if (r->opts.on_interval)
		return give_interval(r, st, r->stop.stopped_at, true);
	if (r->opts.named) {
		/* sampling ended at the stop, whatever came after it */
		err = write_named(r, st,
				  r->stop.stopped_at > 0 ? (uint64_t)(r->stop.stopped_at * 1e9)
							 : timing__now_ns());
		timing__mark(&r->finish, "render and write");
	}
	/* the capture is written even when another output could not be */
	if (r->opts.capture && err != -ENOMEM) {
		e = close_capture(r, st);
		err = err ?: e;
	}
	r->write_failed = err != 0;
	return err;
}

/*
 * --interval: every count so far is taken out of the kernel maps (atomically per
 * key), written to this interval's files and to the capture with this interval's
 * number, and the next interval starts empty. A capture alone has no files to write.
 */
static bool select_all(void *ctx, const struct count_key *key)
{
	return true;
}

/* The named stacks of the interval just written or given: the next starts empty. */
static int next_folded(struct record *r)
{
	r->stacks_written += folded__nr_stacks(r->fold.folded);
	folded__free(r->fold.folded);
	r->fold.folded = folded__new();
	if (!r->fold.folded)
		return -ENOMEM;
	folded__set_max_stacks(r->fold.folded, FOLD_MAX_STACKS);
	return 0;
}

int record__write_interval(struct record *r)
{
	size_t nr = 0, nr_stacks, nr_aged = 0;
	uint64_t end_ns = timing__now_ns(); /* the interval's counts are taken from here */
	uint64_t st[SCORCH_NR_STATS];
	int err = 0;

	/* a live view's figures: the counters as the counts are taken */
	if (r->opts.on_interval)
		err = sampler__stats(r->sampler, st);
	if (!err)
		err = sampler__reap(r->sampler, select_all, false, record__add_stack, r,
				    &r->drain_lost, &r->drain_lost_ns, &nr, &nr_stacks);
	if (!err)
		err = sampler__age_stacks(r->sampler, &nr_aged);
	if (!err && r->dw.ustacks)
		err = ustacks__take(r->dw.ustacks, NULL, record__add_stack, r, r->dw.ubuf, r->dw.kbuf);
	if (!err)
		err = record__reset_reap_mark(r);
	if (err) {
		pr_err("cannot read the recorded stacks: %s\n", strerror(-err));
		return err;
	}
	r->stacks_aged += nr_aged;
	r->next_interval += r->opts.interval;
	if (r->opts.on_interval) {
		r->window_ns = end_ns;
		err = give_interval(r, st, end_ns / 1e9, false);
		pr_debug("interval %u given: %zu stacks; %zu unused since the last deleted from "
			 "the kernel's stack maps\n",
			 r->live.seq, folded__nr_stacks(r->fold.folded), nr_aged);
		return err ?: next_folded(r);
	}
	if (r->opts.named) {
		err = write_named(r, NULL, end_ns);
		if (err) {
			r->write_failed = true;
			return err;
		}
		pr_debug("interval %u written: %zu stacks; %zu unused since the last deleted "
			 "from the kernel's stack maps\n",
			 outputs__seq(r->opts.outs), folded__nr_stacks(r->fold.folded), nr_aged);
		err = next_folded(r);
		if (!err)
			err = outputs__next(r->opts.outs);
	}
	r->window_ns = end_ns;
	if (!err && r->cap)
		err = capture_rec__next_interval(r->cap);
	r->write_failed = err != 0;
	return err;
}
