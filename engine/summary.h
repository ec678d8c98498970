/* SPDX-License-Identifier: MIT */
/* engine: summary.c: the end-of-run summary (record and report) */
#ifndef SCORCH_ENGINE_SUMMARY_H
#define SCORCH_ENGINE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"
#include "fold.h"
#include "governor.h"
#include "sideband.h"

struct summary {
	const struct fold *fold;
	const uint64_t *st; /* SCORCH_NR_STATS BPF counters */
	enum record_mode mode;
	long freq;
	const char *event;     /* MODE_EVENT: --event as given */
	uint64_t event_period; /* MODE_EVENT: --period */
	int nr_cpus;
	double elapsed;
	bool quiet;   /* -q: warnings only */
	bool verbose; /* -v: every counter that is not zero, no first line */
	uint64_t drain_lost;
	uint64_t ring_bytes;
	uint64_t ring_left; /* of st[STAT_LOST_RINGBUF]: left in the rings at the stop */
	uint64_t max_stacks;
	uint64_t procs_seen, procs_released, procs_held_max, procs_missing;
	uint64_t procs_copied;		   /* snapshots copied from the parent's (0: not known) */
	uint64_t procs_sideband;	   /* mappings from the kernel's mmap records */
	uint64_t procs_read;		   /* mappings read from /proc/PID/maps */
	uint64_t reaps, reaps_deferred;	   /* exited processes reaped; periods put off */
	uint64_t reaps_held, reaps_keys;   /* reaps forced on busy CPUs: images, count keys, */
	uint64_t reaps_tables;		   /* ... unwind tables */
	uint64_t reaps_left;		   /* exited images not reaped at the end */
	const struct sideband_stats *sbs;  /* NULL: no side-band events */
	const struct symbolizer_stats *ss; /* NULL: frames were not named (capture only) */
	const struct perfmaps_stats *js;   /* NULL: no JIT maps line */
	size_t stacks_written;		   /* --interval: stacks of the intervals already written */
	double steal_pct;  /* CPU time the hypervisor gave to others, % (< 0: unknown) */
	long max_rate_end; /* kernel.perf_event_max_sample_rate at the end (0: unknown) */
	const struct governor_stats *gov; /* NULL: not governed (report) */
	long stack_size; /* --unwind dwarf: bytes copied per stack (0: no copies) */
};
/*
 * The end of a run, like perf's: one line of what was captured (samples, stacks, lost
 * %), then warnings that need the user's action, each with its hint; with -v the detail
 * lines instead of the first line, counters that are all zero left out; with -q the
 * warnings only. The caller prints where the outputs went.
 * summary__counts(): samples and losses; returns the share lost, in percent.
 * summary__details(): frames, files, processes, JIT maps.
 */
double summary__counts(const struct summary *sm);
/*
 * The events of the counters @st that could be counted (samples, switch-outs) in
 * *@taken and those lost in *@lost, @drained_lost (counts unreadable when drained, in
 * -F's periods on CPU) included: the summary's figures, for any span of counters.
 */
void summary__loss(const uint64_t *st, enum record_mode mode, uint64_t drained_lost,
		   uint64_t *taken, uint64_t *lost);
void summary__details(const struct summary *sm);

/* --mode's name of @mode: "cpu", "offcpu", "wall", "event". */
const char *summary__mode_name(enum record_mode mode);

/* What a recording was, beside its counts (struct summary): who, when, where. */
struct recording_desc {
	const char *what;      /* "cpu", "offcpu", "offwake"...; MODE_EVENT: the event phrase */
	const char *target;    /* "PID 42 (app)", "all CPUs", "command: make" (NULL, "": unknown) */
	int64_t start_ns;      /* CLOCK_REALTIME at the start (0: unknown) */
	const char *host;      /* the recording's host (NULL, "": unknown) */
	unsigned int interval; /* --interval's files: their number (1-based); 0: the whole */
};

/*
 * One line saying what a recording was, for its outputs (the SVG's and HTML page's
 * subtitle, pprof's comment, speedscope's name): "cpu at 99 Hz, PID 42 (app), 5.00 s
 * from 2025-01-02 10:11:12 UTC on box: 495 samples, 0.00% lost". The rate is -F's, with
 * the average the samples were taken at when the governor lowered it (from the
 * counters, as record and report both have them). Of @sm it reads mode, freq, elapsed,
 * st (NULL: an --interval's files, no totals: the counters are the whole recording's)
 * and drain_lost. Writes @buf (cut to @size) and returns it.
 */
const char *summary__describe(const struct summary *sm, const struct recording_desc *rd, char *buf,
			      size_t size);

#endif /* SCORCH_ENGINE_SUMMARY_H */
