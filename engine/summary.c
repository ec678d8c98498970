// SPDX-License-Identifier: MIT
/* profiler: the end-of-run summary on standard error, shared by record and report. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include "common.h"
#include "flamegraph.h"
#include "perfmap.h"
#include "engine.h"
#include "fold.h"
#include "governor.h"
#include "summary.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* a share of samples lost, of frames unnamed...: past this a warning, below it -v */
#define WARN_PCT 1.0
/* stacks cut by JIT code or the depth limit: a warning past this share (by mode) */
#define CUT_WARN_PCT 5.0
/* a stack cut at its root misplaces its samples under [truncated]: a warning from 2 % */
#define TRUNC_WARN_PCT 2.0

/*
 * Sample periods the kernel did not deliver: it throttles the cpu-clock event past
 * kernel.perf_event_max_sample_rate / HZ samples in a tick (a limit it lowers itself
 * after slow interrupts), and a VM's CPUs miss periods while the hypervisor runs
 * something else (steal). Wall mode credits those a thread's later sample ends to that
 * sample and counts the rest; cpu mode counts samples taken, as perf does: /proc/stat's
 * steal and the limit at the end say how much to expect. Throttling is a warning (a
 * lower -F avoids it); the rest is -v's.
 */
static void missed_periods(const struct summary *sm)
{
	const uint64_t *st = sm->st;
	uint64_t missed = st[STAT_MISSED_PERIODS], tail = st[STAT_MISSED_TAIL];
	bool wall = sm->mode == MODE_WALL;
	bool throttled = sm->max_rate_end > 0 && sm->max_rate_end < sm->freq;
	bool steal = sm->steal_pct >= 1.0;

	if (sm->mode == MODE_OFFCPU || sm->mode == MODE_EVENT)
		return;
	if (sm->verbose && (missed || tail))
		pr_warn("missed periods: %" PRIu64 " sample periods passed unsampled while the "
			"thread kept its CPU: %" PRIu64 " credited to the sample that ended them, "
			"%" PRIu64 " ended by a switch-out (not credited: %.3f s short)\n",
			missed + tail, missed, tail, tail / (double)sm->freq);
	if (throttled) {
		pr_warn("throttled: kernel.perf_event_max_sample_rate fell to %ld during the "
			"recording (-F %ld): past that rate the kernel drops samples, tick by "
			"tick, on each CPU%s\n",
			sm->max_rate_end, sm->freq,
			wall ? "" : " (not counted: --mode cpu counts samples taken)");
		pr_hint("the kernel lowers the limit after slow sample interrupts (dmesg: "
			"'perf: interrupt took too long'): a lower -F avoids it\n");
	}
	if (sm->verbose && steal)
		pr_warn("steal: the hypervisor ran something else on these CPUs for %.1f%% of the "
			"recording (/proc/stat); periods then went unsampled%s\n",
			sm->steal_pct, wall ? "" : " (--mode cpu counts samples taken)");
}

/*
 * Counts unreadable at the end, in samples: an on-CPU count is in -F's periods, which
 * a sample weighs several of when the governor lowered the rate (STAT_PERIODS).
 */
static uint64_t drain_lost(const uint64_t *st, enum record_mode mode, uint64_t lost)
{
	if (mode == MODE_OFFCPU || mode == MODE_EVENT || !st[STAT_SAMPLES] ||
	    st[STAT_PERIODS] <= st[STAT_SAMPLES])
		return lost;
	return (uint64_t)((double)lost * st[STAT_SAMPLES] / st[STAT_PERIODS] + 0.5);
}

void summary__loss(const uint64_t *st, enum record_mode mode, uint64_t drained_lost,
		   uint64_t *taken, uint64_t *lost)
{
	/* events: samples, and switch-outs of matching threads (tracked or not) */
	*taken = st[STAT_SAMPLES] + st[STAT_SWITCHES] + st[STAT_LOST_START];
	*lost = st[STAT_LOST_COUNTS] + st[STAT_LOST_STACKS] + st[STAT_LOST_COLLISION] +
		st[STAT_LOST_START] + st[STAT_LOST_RINGBUF] + st[STAT_LOST_INTERVAL] +
		st[STAT_OFF_UNENDED] + st[STAT_OFF_RACED] + drain_lost(st, mode, drained_lost);
}

/* Why samples were lost, and what to change: -v, or a warning past WARN_PCT. */
static void lost_details(const struct summary *sm, uint64_t lost)
{
	const uint64_t *st = sm->st;

	if (st[STAT_OFF_UNENDED])
		pr_warn("lost: %" PRIu64 " off-CPU intervals without a switch-in (the thread switched "
			"out again before sched_switch showed it switching in)\n",
			st[STAT_OFF_UNENDED]);
	if (lost == st[STAT_OFF_UNENDED])
		return;
	pr_warn("lost: %" PRIu64 " stack map full, %" PRIu64 " count map full, %" PRIu64
		" stack hash collisions, %" PRIu64 " unreadable at the end, %" PRIu64
		" off-CPU intervals untracked (start map full)\n",
		st[STAT_LOST_STACKS], st[STAT_LOST_COUNTS], st[STAT_LOST_COLLISION],
		drain_lost(st, sm->mode, sm->drain_lost), st[STAT_LOST_START]);
	if (st[STAT_LOST_RINGBUF] || st[STAT_LOST_INTERVAL]) {
		char left[96] = "";

		if (sm->ring_left)
			snprintf(left, sizeof(left),
				 " (%" PRIu64 " of them left in it at the stop, not unwound)",
				 sm->ring_left);
		pr_warn("lost: %" PRIu64 " samples or off-CPU stack copies and %" PRIu64
			" off-CPU interval ends with the sample ring buffer full (%" PRIu64
			" KiB)%s\n",
			st[STAT_LOST_RINGBUF], st[STAT_LOST_INTERVAL], sm->ring_bytes >> 10, left);
		pr_hint("lower -F or --stack-size, or raise --ring-size: unwinding did not "
			"keep up\n");
	} else {
		pr_hint("raise --max-stacks (now %" PRIu64 ") or lower -F\n", sm->max_stacks);
	}
}

/* offwake: any blocked time folded with its waker side */
static bool has_wakers(const struct summary *sm)
{
	return sm->fold->waker_us || sm->fold->nowaker_us;
}

/* The first line of a clean run: what was captured, in how many stacks, how much lost. */
static void captured(const struct summary *sm, double lost_pct)
{
	const uint64_t *st = sm->st;
	size_t stacks = sm->stacks_written + folded__nr_stacks(sm->fold->folded);
	double off_s = sm->fold->offcpu_ns / 1e9;

	if (sm->mode == MODE_EVENT)
		pr_warn("%" PRIu64 " events%s at %s in %.2f s: %zu stacks, %.2f%% lost\n",
			st[STAT_SAMPLES], sm->event_period > 1 ? " counted" : "", sm->event,
			sm->elapsed, stacks, lost_pct);
	else if (sm->mode == MODE_CPU)
		pr_warn("%" PRIu64 " samples in %.2f s at %ld Hz on %d CPUs: %zu stacks, %.2f%% "
			"lost\n",
			st[STAT_SAMPLES], sm->elapsed, sm->freq, sm->nr_cpus, stacks, lost_pct);
	else if (sm->mode == MODE_OFFCPU)
		pr_warn("%" PRIu64 " off-CPU intervals (%.3f s) in %.2f s: %zu stacks, %.2f%% lost\n",
			st[STAT_OFF_COUNTED], off_s, sm->elapsed, stacks, lost_pct);
	else
		pr_warn("%" PRIu64 " samples and %" PRIu64 " off-CPU intervals (%.3f s) in %.2f s "
			"at %ld Hz on %d CPUs: %zu stacks, %.2f%% lost\n",
			st[STAT_SAMPLES], st[STAT_OFF_COUNTED], off_s, sm->elapsed, sm->freq,
			sm->nr_cpus, stacks, lost_pct);
}

/*
 * The cost governor: the rate it lowered, once, with what allows more; with -v what the
 * recording cost. A rate never lowered is not mentioned without -v.
 */
static void governed(const struct summary *sm)
{
	const struct governor_stats *g = sm->gov;

	if (!g || !g->budget_pct)
		return;
	if (sm->verbose) {
		char rate[96] = "";

		if (sm->mode == MODE_CPU || sm->mode == MODE_WALL)
			snprintf(rate, sizeof(rate),
				 "; rate %.0f Hz on average, %ld at the end, %" PRIu64 " changes",
				 g->avg_rate, g->end_rate, g->changes);
		pr_warn("cost: BPF programs %.3f s%s, scorch %.3f s: %.2f%% of %d CPUs over the "
			"recording (at most %.1f%% in a tenth of a second; --max-overhead %g%%)%s\n",
			g->bpf_s, g->measured ? "" : " (not measured)", g->cpu_s, g->cost_pct,
			g->nr_cpus, g->peak_pct, g->budget_pct, rate);
	}
	/* the rate starts low and rises as costs are measured: that alone is -v's */
	if (g->min_rate >= sm->freq && g->end_rate >= sm->freq)
		return;
	pr_warn("rate lowered to %ld Hz (from -F %ld; %.0f Hz on average, below -F %.0f%% of "
		"the time) to keep scorch within %g%% of the CPUs%s: each sample counts the "
		"periods it stands for\n",
		MIN(g->min_rate, g->end_rate), sm->freq, g->avg_rate, g->lowered_pct, g->budget_pct,
		g->throttled ? " and below what the kernel delivers "
			       "(kernel.perf_event_max_sample_rate)"
			     : "");
	pr_hint("--max-overhead PCT allows more (0: no limit)\n");
}

/* The samples and off-CPU intervals lost (*@lost) of those taken (*@taken), in percent. */
static double lost_share(const struct summary *sm, uint64_t *lost, uint64_t *taken)
{
	summary__loss(sm->st, sm->mode, sm->drain_lost, taken, lost);
	return pct(*lost, *taken);
}

/*
 * The rate the on-CPU samples were taken at on average, when the governor lowered it
 * below -F: each sample then stands for several periods (STAT_PERIODS, less those of
 * missed periods credited to it), so -F * samples / periods. 0: never lowered.
 */
static double governed_rate(const struct summary *sm)
{
	const uint64_t *st = sm->st;
	uint64_t periods;

	if (sm->mode != MODE_CPU && sm->mode != MODE_WALL)
		return 0;
	periods = st[STAT_PERIODS] - MIN(st[STAT_PERIODS], st[STAT_MISSED_PERIODS]);
	if (!st[STAT_SAMPLES] || periods <= st[STAT_SAMPLES])
		return 0;
	return (double)sm->freq * st[STAT_SAMPLES] / periods;
}

/* Appends printf(@fmt, ...) to @buf at *@at, cut to @size. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, size - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = MIN(size, *at + (size_t)n);
}

const char *summary__mode_name(enum record_mode mode)
{
	switch (mode) {
	case MODE_OFFCPU:
		return "offcpu";
	case MODE_WALL:
		return "wall";
	case MODE_EVENT:
		return "event";
	default:
		return "cpu";
	}
}

const char *summary__describe(const struct summary *sm, const struct recording_desc *rd, char *buf,
			      size_t size)
{
	const uint64_t *st = sm->st;
	uint64_t lost, taken;
	struct tm tm;
	double avg;
	time_t t;
	size_t at = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	append(buf, size, &at, "%s", rd->what);
	if (sm->mode == MODE_CPU || sm->mode == MODE_WALL) {
		append(buf, size, &at, " at %ld Hz", sm->freq);
		avg = st ? governed_rate(sm) : 0;
		if (avg > 0)
			append(buf, size, &at, " (lowered: %.0f Hz on average)", avg);
	}
	if (rd->target && *rd->target)
		append(buf, size, &at, ", %s", rd->target);
	if (rd->interval)
		append(buf, size, &at, ", interval %u", rd->interval);
	append(buf, size, &at, ", %.2f s", sm->elapsed);
	if (rd->start_ns > 0) {
		t = (time_t)(rd->start_ns / 1000000000);
		if (gmtime_r(&t, &tm))
			append(buf, size, &at, " from %04d-%02d-%02d %02d:%02d:%02d UTC",
			       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			       tm.tm_sec);
	}
	if (rd->host && *rd->host)
		append(buf, size, &at, " on %s", rd->host);
	if (!st)
		return buf;
	if (sm->mode == MODE_EVENT)
		append(buf, size, &at, ": %" PRIu64 " events", st[STAT_SAMPLES]);
	else if (sm->mode != MODE_OFFCPU)
		append(buf, size, &at, ": %" PRIu64 " samples", st[STAT_SAMPLES]);
	if (sm->mode == MODE_OFFCPU || sm->mode == MODE_WALL)
		append(buf, size, &at, "%s%" PRIu64 " intervals off CPU (%.3f s)",
		       sm->mode == MODE_WALL ? ", " : ": ", st[STAT_OFF_COUNTED],
		       sm->fold ? sm->fold->offcpu_ns / 1e9 : 0.0);
	append(buf, size, &at, ", %.2f%% lost", lost_share(sm, &lost, &taken));
	return buf;
}

double summary__counts(const struct summary *sm)
{
	const uint64_t *st = sm->st;
	uint64_t taken, lost;
	double lost_pct = lost_share(sm, &lost, &taken);

	if (!sm->quiet && !sm->verbose)
		captured(sm, lost_pct);
	if (!sm->quiet)
		governed(sm);
	if (folded__over_cap(sm->fold->folded)) {
		pr_warn("stacks: %zu distinct ones held (the most kept in memory); %" PRIu64
			" %s of new stacks beyond them are under ROOT;" FOLDED_FULL_FRAME "\n",
			(size_t)FOLD_MAX_STACKS, folded__over_cap(sm->fold->folded),
			sm->mode == MODE_CPU ? "samples" : "counts");
		pr_hint("record shorter runs, or use --interval to write and empty the table "
			"each interval\n");
	}
	if (!sm->verbose) {
		if (st[STAT_WAKE_LOST])
			pr_warn("wakers lost: %" PRIu64 " blocked intervals under [unknown waker]"
				" because their waker's stacks could not be stored\n",
				st[STAT_WAKE_LOST]);
		missed_periods(sm);
		if (lost_pct >= WARN_PCT)
			lost_details(sm, lost);
		return lost_pct;
	}
	if (sm->mode == MODE_EVENT)
		pr_warn("%" PRIu64 " events%s at %s in %.2f s: %" PRIu64 " counted in %zu stacks\n",
			st[STAT_SAMPLES], sm->event_period > 1 ? " (one in --period)" : "", sm->event,
			sm->elapsed, st[STAT_COUNTED] + st[STAT_SAMPLES_SENT] - st[STAT_OFF_COPIES],
			sm->stacks_written + folded__nr_stacks(sm->fold->folded));
	if (sm->mode == MODE_EVENT && st[STAT_CALLS_ABANDONED])
		pr_warn("--latency: %" PRIu64 " calls left without returning (longjmp, an exception "
			"unwound through them): not counted\n",
			st[STAT_CALLS_ABANDONED]);
	if (sm->mode == MODE_CPU || sm->mode == MODE_WALL)
		pr_warn("%" PRIu64 " samples at %ld Hz on %d CPUs in %.2f s: %" PRIu64
			" counted in %zu stacks\n",
			st[STAT_SAMPLES], sm->freq, sm->nr_cpus, sm->elapsed,
			st[STAT_COUNTED] + st[STAT_SAMPLES_SENT] - st[STAT_OFF_COPIES],
			sm->stacks_written + folded__nr_stacks(sm->fold->folded));
	if (sm->mode != MODE_OFFCPU && sm->mode != MODE_EVENT &&
	    st[STAT_PERIODS] > st[STAT_SAMPLES] + st[STAT_MISSED_PERIODS])
		pr_warn("weights: the samples stand for %" PRIu64 " periods of -F's, as many as "
			"the counts written add up to (the rate was lowered)\n",
			st[STAT_PERIODS]);
	missed_periods(sm);
	if (sm->mode == MODE_OFFCPU || sm->mode == MODE_WALL)
		pr_warn("%" PRIu64 " switches off CPU in %.2f s: %" PRIu64
			" intervals counted (%.3f s off CPU, %.3f s of it on a runqueue: after a "
			"preemption, or after the wakeup of %" PRIu64 " blocked ones), %" PRIu64
			" shorter than --min-block, %" PRIu64 " longer than --max-block\n",
			st[STAT_SWITCHES], sm->elapsed, st[STAT_OFF_COUNTED],
			sm->fold->offcpu_ns / 1e9, sm->fold->runqueue_ns / 1e9, st[STAT_OFF_WOKEN],
			st[STAT_OFF_SHORT], st[STAT_OFF_LONG]);
	if (sm->mode != MODE_CPU && st[STAT_OFF_CUT])
		pr_warn("%" PRIu64 " waits still open at an --interval boundary counted up to "
			"it, the rest in the next interval\n",
			st[STAT_OFF_CUT]);
	if (st[STAT_OFF_RACED])
		pr_warn("lost: %" PRIu64 " off-CPU intervals whose switch-in lost its slot to a "
			"concurrent change\n",
			st[STAT_OFF_RACED]);
	if (st[STAT_WAKERS] || has_wakers(sm))
		pr_warn("wakers: %" PRIu64 " taken at sched_waking; blocked intervals: %" PRIu64
			" under their waker, %" PRIu64
			" under [unknown waker] (no wakeup seen), %" PRIu64
			" whose waker stacks were lost; %.3f s blocked under a waker (%.3f s"
			" of it woken in an interrupt), %.3f s under [unknown waker]\n",
			st[STAT_WAKERS], st[STAT_WAKE_COUNTED], st[STAT_WAKE_NONE],
			st[STAT_WAKE_LOST], sm->fold->waker_us / 1e6, sm->fold->irq_waker_us / 1e6,
			sm->fold->nowaker_us / 1e6);
	if (st[STAT_CHAIN_LINKED] || st[STAT_CHAIN_IRQ])
		pr_warn("chain: %" PRIu64 " wakeups by a waker whose own waker was known (its "
			"chain carried one level up), %" PRIu64 " in an interrupt (the chain "
			"ends there); the rest by a waker outside the targets or never woken "
			"while traced; %.3f s blocked under a chain cut short (a waker's stacks "
			"gone with its process)\n",
			st[STAT_CHAIN_LINKED], st[STAT_CHAIN_IRQ], sm->fold->chain_cut_us / 1e6);
	if (taken)
		pr_warn("lost: %" PRIu64 " of %" PRIu64 " (%.2f%%)\n", lost, taken, lost_pct);
	if (lost)
		lost_details(sm, lost);
	return lost_pct;
}

/* Frames, files and processes: -v's lines (all-zero ones left out). */
static void details_verbose(const struct summary *sm)
{
	const struct fold *f = sm->fold;
	const uint64_t *st = sm->st;
	const struct perfmaps_stats *js = sm->js;
	const struct symbolizer_stats *ss = sm->ss;
	char maps[192] = "";

	if (st[STAT_USTACK_ERR] || st[STAT_KSTACK_ERR])
		pr_warn("missed stacks: %" PRIu64 " user, %" PRIu64
			" kernel (counted as [missed user stack] / [missed kernel stack])\n",
			st[STAT_USTACK_ERR], st[STAT_KSTACK_ERR]);
	if (f->truncated_user || f->truncated_kernel)
		pr_warn("truncated stacks: %" PRIu64 " user, %" PRIu64
			" kernel %s deeper than their walk goes (marked [truncated])\n",
			f->truncated_user, f->truncated_kernel,
			sm->mode == MODE_CPU	? "samples" :
			sm->mode == MODE_EVENT	? "counts" :
						  "microseconds");
	if (st[STAT_OFF_RECOVERED] || st[STAT_OFF_JOINED])
		pr_warn("off CPU: sched_switch did not show %" PRIu64 " switch-ins: %" PRIu64
			" intervals ended where the thread's CPU time places them, %" PRIu64
			" joined to the next (the thread had not run)\n",
			st[STAT_OFF_RECOVERED] + st[STAT_OFF_JOINED], st[STAT_OFF_RECOVERED],
			st[STAT_OFF_JOINED]);
	if (st[STAT_LOST_EVENTS] || st[STAT_PROCS_FULL])
		pr_warn("process notifications lost: %" PRIu64 " (their maps were read late)\n",
			st[STAT_LOST_EVENTS] + st[STAT_PROCS_FULL]);
	if (ss && (ss->user_frames || ss->kernel_frames))
		pr_warn("frames: %" PRIu64 " user (%" PRIu64 " unresolved, %.1f%%), %" PRIu64
			" kernel (%" PRIu64 " unresolved)\n",
			ss->user_frames, ss->user_unresolved,
			pct(ss->user_unresolved, ss->user_frames), ss->kernel_frames,
			ss->kernel_unresolved);
	/* what symbolizing cost: a file's tables read again after it was dropped unused
	 * (short-lived processes of many programs) cost as much as the first time */
	if (ss)
		pr_debug("symbolize: %" PRIu64 " files read, %" PRIu64 " symbol tables, %" PRIu64
			 " DWARF indexes; %" PRIu64 " dropped when unused\n",
			 ss->files_cached, ss->files_symbols, ss->dwarf_files, ss->files_evicted);
	if (ss && ss->dwarf_incomplete)
		pr_warn("DWARF partly unreadable or over the index's bounds in %" PRIu64
			" of %" PRIu64 " files (frames there may lack inlined calls or fall back"
			" to symbols; -v names them)\n",
			ss->dwarf_incomplete, ss->dwarf_files);
	if (ss && ss->files_unreadable)
		pr_warn("mapped files unreadable: %" PRIu64
			" (not ELF, corrupt, replaced since mapped, or not openable; their frames"
			" are [file name], counted unresolved)\n",
			ss->files_unreadable);
	if (sm->procs_sideband || sm->procs_copied || sm->procs_read)
		snprintf(maps, sizeof(maps),
			 "; maps of %" PRIu64 " from the kernel's mmap records, %" PRIu64
			 " copied from the parent (forked children), %" PRIu64 " read from /proc",
			 sm->procs_sideband, sm->procs_copied, sm->procs_read);
	if (sm->procs_seen || sm->procs_missing || st[STAT_MAPS_CHANGED])
		pr_warn("processes: %" PRIu64 " seen, %" PRIu64
			" exited and released during the recording (at most %" PRIu64
			" held at once), %" PRIu64 " gone before their maps were read%s; %" PRIu64
			" notices of new executable mappings\n",
			sm->procs_seen, sm->procs_released, sm->procs_held_max, sm->procs_missing,
			maps, st[STAT_MAPS_CHANGED]);
	if (st[STAT_EXEC_LEAF])
		pr_warn("exec: %" PRIu64 " samples or waits of a thread in execve after its new "
			"memory, before its first instruction: the leaf named in the image the "
			"exec replaced\n",
			st[STAT_EXEC_LEAF]);
	/* record-reap.c's record__reap_due() */
	if (sm->reaps_deferred || sm->reaps_held || sm->reaps_keys || sm->reaps_tables)
		pr_warn("reaps of exited processes during the recording: %" PRIu64
			"; put off while the CPUs were busy: %" PRIu64
			"; forced then by the images held: %" PRIu64
			", by the count keys added: %" PRIu64
			", by the unwind tables loaded: %" PRIu64
			"; exited images left for the end: %" PRIu64 "\n",
			sm->reaps, sm->reaps_deferred, sm->reaps_held, sm->reaps_keys,
			sm->reaps_tables, sm->reaps_left);
	if (sm->sbs && (sm->sbs->lost || sm->sbs->rings_full))
		pr_warn("mmap records: %" PRIu64 " lost by the kernel, rings found full %" PRIu64
			" times: the processes then running were read from /proc instead (%" PRIu64
			" records read in all)\n",
			sm->sbs->lost, sm->sbs->rings_full, sm->sbs->records);
	if (sm->sbs)
		pr_debug("mmap records: %" PRIu64 " read (%" PRIu64 " execs, %" PRIu64
			 " forks, %" PRIu64 " executable mappings, %" PRIu64
			 " of processes begun before), %" PRIu64 " malformed; %" PRIu64
			 " images found, %" PRIu64 " not known\n",
			 sm->sbs->records, sm->sbs->execs, sm->sbs->forks, sm->sbs->mmaps,
			 sm->sbs->mmaps_unknown, sm->sbs->bad, sm->sbs->lookups,
			 sm->sbs->lookups_missed);
	if (js && (js->maps_opened || js->dumps_opened || js->files_refused || js->maps_stale))
		pr_warn("JIT maps: %" PRIu64 " perf maps and %" PRIu64 " jitdumps read (%" PRIu64
			" entries, %" PRIu64 " bad lines, %" PRIu64
			" bad records skipped), %" PRIu64 " files refused, %" PRIu64
			" perf maps older than their process ignored, %" PRIu64
			" capped; %" PRIu64 " of %" PRIu64 " JIT lookups named\n",
			js->maps_opened, js->dumps_opened, js->lines_parsed + js->records_parsed,
			js->lines_bad, js->records_bad, js->files_refused, js->maps_stale,
			js->files_capped, js->lookups_resolved, js->lookups);
}

/* What keeps frame pointers in the JIT code of the runtime @comm runs (NULL: unknown). */
static void jit_hint(const char *comm)
{
	if (comm && !strncmp(comm, "java", 4))
		pr_hint("Java: run it with -XX:+PreserveFramePointer\n");
	else if (comm && !strncmp(comm, "python", 6))
		pr_hint("CPython's -X perf trampolines: the kernel walk steps through them "
			"where scorch reads the Python frames itself (3.12 and 3.13, not with "
			"--no-python); else run without -X perf, or record --unwind dwarf\n");
	else
		pr_hint("the runtime's option to keep frame pointers in its JIT code, or "
			"--unwind dwarf where it writes unwind tables (jitdump)\n");
}

/*
 * User stacks cut where the walk met an address in no code (fold.c's walk_end()): code
 * built without frame pointers lost its callers there. -v counts them; a warning with
 * the file most of them end in when they are WARN_PCT of the on- or off-CPU counts.
 */
static void walks_cut(const struct summary *sm)
{
	const struct fold *f = sm->fold;
	const char *what[2] = { sm->mode == MODE_EVENT ? "the counts" : "on-CPU samples",
				"off-CPU time" };
	const struct fold_cut *top = &f->cut_files[0];
	size_t i;
	int off;

	for (i = 1; i < ARRAY_SIZE(f->cut_files); i++)
		if (f->cut_files[i].count > top->count)
			top = &f->cut_files[i];
	for (off = 0; off < 2; off++) {
		double share = pct(f->cut_counts[off], f->user_counts[off]);

		if (!f->cut_counts[off] || (!sm->verbose && share < CUT_WARN_PCT))
			continue;
		pr_warn("cut stacks: %.1f%% of %s have user stacks cut at an address in no code "
			"(marked [unknown]): their walk met code without frame pointers%s%s\n",
			share, what[off], top->path ? ", most often in " : "",
			top->path ? top->path : "");
		if (f->fp)
			pr_hint("record with --unwind kernel or --unwind dwarf: they unwind with the "
				"files' CFI, frame pointers or not\n");
		else if (f->kwalk)
			pr_hint("the kernel walk fell back to frame pointers there (a rule it "
				"cannot follow, or a process whose tables were not loaded yet: "
				"short-lived commands; -v counts them): --unwind dwarf unwinds "
				"each sample's stack copy later, with every rule over ip, sp "
				"and bp\n");
	}
	for (off = 0; off < 2; off++) {
		double share = pct(f->jit_end[off], f->user_counts[off]);

		if (!f->jit_end[off] || (!sm->verbose && share < CUT_WARN_PCT))
			continue;
		pr_warn("cut stacks: %.1f%% of %s have user stacks that end in JIT code%s%s: the "
			"runtime's compiled code keeps no frame pointer to walk on\n",
			share, what[off], f->jit_comm ? ", most in " : "",
			f->jit_comm ? f->jit_comm : "");
		jit_hint(f->jit_comm);
	}
	for (off = 0; off < 2; off++) {
		double share = pct(f->jit_unnamed[off], f->user_counts[off]);

		if (!f->jit_unnamed[off] || (!sm->verbose && share < CUT_WARN_PCT))
			continue;
		pr_warn("JIT code unnamed: %.1f%% of %s are in JIT code no perf map or jitdump "
			"names ([jit]), most in %s (PID %u)\n",
			share, what[off], f->unnamed_comm ? f->unnamed_comm : "?", f->unnamed_pid);
		pr_hint("have the runtime write its map while scorch records (Java: jcmd %u "
			"Compiler.perfmap; Node: --perf-basic-prof), or record a capture (-o "
			"FILE.scorch) and run 'scorch report' once it wrote its map at exit "
			"(-XX:+DumpPerfMapAtExit); docs/jit.md\n",
			f->unnamed_pid);
	}
	for (off = 0; off < 2; off++) {
		double share = pct(f->deep[off], f->user_counts[off]);

		if (!f->deep[off] || (!sm->verbose && share < TRUNC_WARN_PCT))
			continue;
		if (!f->user_depth) {
			/* a capture before 1.4: one limit for both walks */
			pr_warn("cut stacks: %.1f%% of %s have user stacks deeper than %u frames "
				"(their root is [truncated])\n",
				share, what[off], f->max_depth);
			continue;
		}
		pr_warn("cut stacks: %.1f%% of %s have user stacks deeper than their walk goes "
			"(%u frames with tables, %u by frame pointers; their root is "
			"[truncated])\n",
			share, what[off], f->user_depth, f->max_depth);
		if (f->user_depth < SCORCH_MAX_USER_DEPTH)
			pr_hint("raise --max-depth (at most %d); walks by frame pointers (--unwind "
				"fp) stop at kernel.perf_event_max_stack, %d at most\n",
				SCORCH_MAX_USER_DEPTH, SCORCH_MAX_STACK_DEPTH);
		else
			pr_hint("%d frames is the most a stack keeps: a flame graph shows the leaf "
				"end of deeper ones\n",
				SCORCH_MAX_USER_DEPTH);
	}
	/* --unwind dwarf: stacks deeper than the copy, by the share of what they count */
	if (f->truncated_copy && sm->stack_size) {
		uint64_t all = f->user_counts[0] + f->user_counts[1];
		double share = pct(f->truncated_copy, all);

		if (sm->verbose || share >= TRUNC_WARN_PCT) {
			pr_warn("cut stacks: %.1f%% of %s have user stacks cut at the --stack-size "
				"copy (their root is [truncated])\n",
				share, sm->mode == MODE_OFFCPU ? "off-CPU time" : what[0]);
			pr_hint("raise --stack-size (now %ld) for deeper stacks\n", sm->stack_size);
		}
	}
}

void summary__details(const struct summary *sm)
{
	const struct fold *f = sm->fold;
	const uint64_t *st = sm->st;
	const struct perfmaps_stats *js = sm->js;
	const struct symbolizer_stats *ss = sm->ss;
	uint64_t samples = st[STAT_COUNTED] + st[STAT_SAMPLES_SENT] - st[STAT_OFF_COPIES];
	double noproc_pct = pct(f->noproc_samples, samples);

	if (sm->quiet)
		return;
	if (sm->verbose)
		details_verbose(sm);
	/* the warnings: each needs the user's action, which its hint names */
	/* in files: frames in JIT code are the JIT hint's (walks_cut()), not debug symbols' */
	if (!sm->verbose && ss && ss->user_frames >= 100 &&
	    pct(ss->user_unresolved - MIN(ss->jit_unresolved, ss->user_unresolved),
		ss->user_frames) >= 10.0) {
		uint64_t unnamed = ss->user_unresolved - MIN(ss->jit_unresolved, ss->user_unresolved);

		pr_warn("frames: %" PRIu64 " of %" PRIu64 " user frames (%.1f%%) unnamed in "
			"their files\n",
			unnamed, ss->user_frames, pct(unnamed, ss->user_frames));
		pr_hint("install the programs' debug symbols (-dbgsym packages) or keep their "
			"symbol tables; -v counts unreadable files\n");
	}
	walks_cut(sm);
	if (js && js->files_refused)
		pr_warn("JIT maps: %" PRIu64 " files refused\n", js->files_refused);
	if (js && js->files_refused)
		pr_hint("perf maps must be regular files owned by the process's user or root, "
			"not symlinks\n");
	if (js && js->files_cut) {
		pr_warn("JIT maps: %" PRIu64 " files cut at the cap of entries per process, first"
			" %s of process %d after %" PRIu64 " bytes; %" PRIu64
			" entries past the cap dropped, %" PRIu64 " frames unnamed there\n",
			js->files_cut, js->cut_path, (int)js->cut_pid, js->cut_bytes,
			js->entries_dropped, js->lookups_cut);
		pr_hint("scorch keeps 1,000,000 JIT entries per process (docs/jit.md): a runtime"
			" that appends to its map on every recompile outgrows it; restart it\n");
	}
	if ((f->noproc_samples || f->noproc_us) && (sm->verbose || noproc_pct >= WARN_PCT)) {
		if (sm->mode == MODE_CPU)
			pr_warn("unresolved processes: %" PRIu64
				" samples (%.2f%%) have [unknown] user frames\n",
				f->noproc_samples, noproc_pct);
		else
			pr_warn("unresolved processes: %" PRIu64 " samples and %" PRIu64
				" us off CPU have [unknown] user frames\n",
				f->noproc_samples, f->noproc_us);
		pr_hint("a process sampled for the first time just before it exits cannot be "
			"read any more; a higher -F catches it earlier\n");
	}
}
