/* SPDX-License-Identifier: MIT */
/* export: a symbolized profile model (pprof's) and its writers: pprof and speedscope. */
#ifndef SCORCH_EXPORT_H
#define SCORCH_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A profile under construction, in the model of pprof's profile.proto: samples
 * point to locations (leaf first), a location is an address in a mapping with the
 * chain of functions inlined at it (pprof "lines"), a function is a (name, source
 * file) pair, a mapping a range of memory backed by a file with a build-id.
 *
 * Everything is interned by value: adding an equal mapping, function, location or
 * sample stack again returns the same id (samples: the values are added), so the
 * caller never keeps tables of its own. Ids are 1-based (0 means "none", as in
 * pprof). Strings are copied into the profile; callers' strings are borrowed for
 * the call only. A profile is written by any number of writers, any number of times.
 *
 * Errors: int returns are 0 or -errno (-EINVAL for a bad argument, -ENOMEM). Bad
 * input is never fatal for the profile: after an error it stays consistent.
 */
struct profile;

#define PROFILE_MAX_VALUES 2

/* A value's meaning, pprof's ValueType: e.g. {"cpu", "nanoseconds"}. Borrowed strings. */
struct profile_value_type {
	const char *type;
	const char *unit;
};

struct profile_opts {
	size_t sz;	  /* sizeof(struct profile_opts) */
	size_t nr_values; /* values per sample, 1..PROFILE_MAX_VALUES */
	struct profile_value_type values[PROFILE_MAX_VALUES];
	struct profile_value_type period_type; /* {NULL, NULL}: none */
	int64_t period;			       /* e.g. 1e9 / frequency for cpu/nanoseconds */
	int64_t time_nanos;		       /* start, ns since the epoch (0: unknown) */
	int64_t duration_nanos;		       /* 0: unknown */
	/* mapping flags written to pprof (what symbolization gave) */
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
	/* speedscope: the value used as the weight (index into values) */
	size_t weight_value;
};

/* Returns an empty profile, or NULL with errno set (EINVAL for bad options, ENOMEM). */
struct profile *profile__new(const struct profile_opts *opts);
/* NULL is accepted. */
void profile__free(struct profile *p);

/*
 * A mapping: [start, limit) of a process's memory backed by @file at @offset (the
 * file offset of @start). @file NULL or "" for none (e.g. "[kernel.kallsyms]" may be
 * given as a file name, as perf does). @build_id: raw bytes (written as lower-case
 * hex), NULL/0 for none. Sets *@id. Returns 0 or -errno.
 */
struct profile_mapping {
	uint64_t start, limit, offset;
	const char *file;
	const uint8_t *build_id;
	size_t build_id_len;
};
int profile__add_mapping(struct profile *p, const struct profile_mapping *m, uint32_t *id);

/*
 * One function of a location's inline chain: @function (never NULL or empty),
 * @file its source file (NULL: unknown), @line the line in that function (the
 * call site for a function that has another inlined into it; 0: unknown).
 * @verbatim: @function is a name as its language writes it, not a symbol (Python's
 * "<module>", "<lambda>"): pprof gets it as the name with no system_name, which it
 * takes as already demangled; else its demangler's heuristics would cut what looks
 * like C++ templates or parameters ("<module>" became ""). A symbol's name is both.
 */
struct profile_line {
	const char *function;
	const char *file;
	int64_t line;
	bool verbatim;
};

/*
 * A location: @address (as sampled; 0 when unknown) in @mapping (an id from
 * profile__add_mapping, 0: none) with @lines[0..nr) (1..64 entries) OUTERMOST FIRST
 * (the function, then what is inlined into it: the order of symbolize.h's frames;
 * pprof stores the innermost first, the writer reverses). Interned by
 * (mapping, address, lines). Sets *@id. Returns 0, -EINVAL (bad mapping id, nr 0),
 * -ENOMEM.
 */
#define PROFILE_MAX_LINES 64
int profile__add_location(struct profile *p, uint32_t mapping, uint64_t address,
			  const struct profile_line *lines, size_t nr, uint32_t *id);

/*
 * Convenience for frames without an address (markers such as "[truncated]", folded
 * input): the location of function @name alone, no mapping. Sets *@id.
 */
int profile__add_name(struct profile *p, const char *name, uint32_t *id);

/*
 * Adds @values (opts.nr_values of them, saturating at INT64_MAX) to the sample with
 * stack @locs[0..nr) ROOT FIRST (the order of folded stacks; 0 < nr) of process
 * @pid (0: none) named @comm (NULL: none). Equal (stack, pid, comm) merge.
 * pid and comm become pprof labels "pid" (number) and "comm" (string) and choose
 * the speedscope profile. Returns 0, -EINVAL (unknown location id, nr 0), -ENOMEM.
 */
int profile__add_sample(struct profile *p, const uint32_t *locs, size_t nr, const int64_t *values,
			uint32_t pid, const char *comm);
/*
 * profile__add_sample() of an off-wake or chain stack: also woken by the @nr_wakers
 * (<= PROFILE_MAX_WAKERS) of @waker_pids (0: none, or an interrupt) named by
 * @waker_comms (NULL: none; "[irq]", "[unknown waker]"...): the waker, then its own
 * waker, and so on. They become the pprof labels "waker_pid" (number) and "waker_comm"
 * (string) for the waker, "waker2_pid" and "waker2_comm" for its own, ... Equal (stack,
 * pid, comm, wakers) merge. Same returns, and -EINVAL for too many wakers.
 */
#define PROFILE_MAX_WAKERS 4
int profile__add_sample_wakers(struct profile *p, const uint32_t *locs, size_t nr,
			       const int64_t *values, uint32_t pid, const char *comm,
			       const uint32_t *waker_pids, const char *const *waker_comms,
			       size_t nr_wakers);

/* Sets the profile's start (ns since the epoch) and duration (ns), as pprof writes them. */
void profile__set_time(struct profile *p, int64_t time_nanos, int64_t duration_nanos);

/*
 * Sets the profile's comments, pprof's Profile.comment (what `go tool pprof -comments`
 * prints): @lines[0..n) (copied; NULL or "" entries skipped), replacing any set before.
 * Returns 0 or -ENOMEM (the comments then none).
 */
int profile__set_comments(struct profile *p, const char *const *lines, size_t n);

/* Distinct samples, and the sum of value @i over them (saturating). */
size_t profile__nr_samples(const struct profile *p);
int64_t profile__total(const struct profile *p, size_t i);

/*
 * Writes the profile as pprof: profile.proto (github.com/google/pprof,
 * proto/profile.proto) encoded with libprotobuf-c and gzip-compressed, as `go tool
 * pprof` reads it. Every id referenced is defined; string 0 is "". Returns 0 or
 * -errno (-EIO on a write error).
 */
int profile__write_pprof(const struct profile *p, FILE *out);

/*
 * Writes the profile as speedscope JSON (https://www.speedscope.app/file-format-schema.json):
 * "$schema", shared.frames (one per function: name, and file = its source file, else
 * the file of its mapping), and one "sampled" profile per (pid, comm), named
 * "comm (pid PID)" (processes in order of pid, then comm), whose samples are stacks
 * root first, sorted by their functions' names root first (the folded order: speedscope's
 * Time Order view then draws a flame graph), with weights from value opts.weight_value;
 * unit "nanoseconds", "microseconds", "milliseconds", "seconds" or "bytes" when that
 * value's unit is one, else "none" (a count); startValue 0, endValue the weights' sum.
 * The format cannot ask speedscope for a view: it opens Time Order.
 * @name is the file's "name" (NULL: none). Strings are escaped (quotes, backslash,
 * control bytes as \u00XX) and invalid UTF-8 is replaced by U+FFFD, so the output is
 * always valid JSON. Returns 0 or -errno.
 */
int profile__write_speedscope(const struct profile *p, FILE *out, const char *name);

/*
 * Reads folded stacks ("frame;...;frame COUNT" lines, e.g. from
 * folded_input__open()) into @p: each frame a location of that name alone
 * (profile__add_name), COUNT as value 0 (other values 0). Lines that do not parse,
 * two-count lines ("stack BEFORE AFTER", a diff) and lines over LINE_MAX_FOLDED (1 MiB) are
 * skipped and counted in *@bad. Returns 0 or -errno (read error, -ENOMEM).
 */
int profile__read_folded(struct profile *p, FILE *in, size_t *bad);

#endif /* SCORCH_EXPORT_H */
