/* SPDX-License-Identifier: MIT */
/* engine: output.c: the outputs of a recording */
#ifndef SCORCH_ENGINE_OUTPUT_H
#define SCORCH_ENGINE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

struct folded;
struct flamegraph_opts;
struct profile;
struct symbolizer;
struct frame;

/* What a writer gets: the folded stacks, the pprof/speedscope profile (NULL when no
 * output needs it), the SVG options, the name of the file being written, and what the
 * recording was (summary__describe(): pprof's comment, speedscope's name; the SVG's
 * subtitle comes with @fg). */
struct output_data {
	const struct folded *folded;
	const struct profile *prof;
	const struct flamegraph_opts *fg;
	const char *name;
	const char *desc;
	/* the HTML page's graph options (NULL: @fg): with --interval the page holds every
	 * interval, the other outputs one */
	const struct flamegraph_opts *page_fg;
	/* NULL, or the HTML page's graph, built by the caller with its intervals (report of
	 * a capture recorded with --interval): written as it is, @folded not added */
	struct flamegraph *page;
	/* the window the counts were taken in, as pprof's time_nanos and duration_nanos:
	 * its start (CLOCK_REALTIME, ns since the epoch) and length in ns; both 0: from
	 * outputs__open() or outputs__next() to outputs__write() */
	int64_t time_ns, duration_ns;
};

/* One output format: its --format name, the file name endings that choose it, and its
 * writer (returns 0 or -errno; the caller logs). Formats live in a table in output.c;
 * a new format is one entry there. */
struct output_format {
	const char *name;
	const char *const *exts;
	bool needs_profile; /* written from the profile, which is then built */
	bool whole;	    /* html: one file for every interval, not numbered (write NULL) */
	int (*write)(const struct output_data *d, FILE *fp);
};

enum outputs_kind {
	OUTPUTS_CPU = 0, /* samples/count + cpu/nanoseconds (period 1e9 / freq) */
	OUTPUTS_OFFCPU,	 /* off-cpu/microseconds */
	OUTPUTS_WALL,	 /* wall/microseconds */
	OUTPUTS_EVENT,	 /* record --event: value_type/value_unit, period */
};

struct outputs_opts {
	size_t sz;
	enum outputs_kind kind;
	long freq;	    /* samples per second (cpu) */
	bool interval;	    /* files numbered per interval: cpu-0001.svg, ... */
	double seconds;	    /* --interval's length (the HTML page's timeline) */
	bool lines;	    /* frame names carry " (file:line)" (record --lines) */
	bool inline_frames; /* inline chains are symbolized */
	/* OUTPUTS_EVENT: the sample type ("calls", "count") and --period's N */
	const char *value_type, *value_unit;
	uint64_t period;
};

/* Opens every output (with opts.interval: the files of interval 1). Returns 0 or -errno. */
int outputs__open(struct outputs *o, const struct outputs_opts *opts);
/* Writes and closes every open output from @d (its prof and name are set here).
 * Returns 0 or the first -errno (each failure logged with its file). */
int outputs__write(struct outputs *o, struct output_data *d);
/* --interval: opens the next interval's files and starts an empty profile. */
int outputs__next(struct outputs *o);
unsigned int outputs__seq(const struct outputs *o);
/* Where the outputs went, for the summary: "cpu.folded, cpu-0001.svg ... cpu-0012.svg,
 * folded to standard output" into @buf (cut to @size bytes). */
void outputs__describe(const struct outputs *o, char *buf, size_t size);

/*
 * The profile's side of add_stack(): a stack is begun, gets its locations root first
 * (markers such as "[truncated]" by name, user and kernel addresses with their
 * symbolized frames, outermost first), and ends with its process and count. No-ops
 * when no output needs the profile. Return 0 or -ENOMEM.
 */
bool outputs__want_stacks(const struct outputs *o);
void outputs__stack_begin(struct outputs *o);
int outputs__stack_marker(struct outputs *o, const char *name);
int outputs__stack_user(struct outputs *o, struct symbolizer *sym, pid_t pid, uint64_t gen,
			uint64_t ip, const struct frame *fr, int k);
int outputs__stack_kernel(struct outputs *o, uint64_t ip, const struct frame *fr, int k);
/* A Python frame: function @qualname ("<module>") of source file @file (NULL: unknown) at
 * @line (0: unknown), @word its code-object word (no address of a mapping). */
int outputs__stack_python(struct outputs *o, uint64_t word, const char *qualname, const char *file,
			  uint32_t line);
int outputs__stack_end(struct outputs *o, uint32_t pid, const char *comm, uint64_t count);
/* outputs__stack_end() of an off-wake or chain stack: the pprof labels of its @nr wakers
 * too (profile__add_sample_wakers()). */
int outputs__stack_end_wakers(struct outputs *o, uint32_t pid, const char *comm,
			      const uint32_t *waker_pids, const char *const *waker_comms, size_t nr,
			      uint64_t count);
/* Stacks left out of the profile (a frame it could not hold). */
uint64_t outputs__skipped(const struct outputs *o);

#endif /* SCORCH_ENGINE_OUTPUT_H */
