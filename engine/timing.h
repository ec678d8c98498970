/* SPDX-License-Identifier: MIT */
/* engine: timing.c: record --timing, phases measured on the monotonic clock */
#ifndef SCORCH_ENGINE_TIMING_H
#define SCORCH_ENGINE_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

#define TIMING_MAX_PHASES 8

struct timing {
	bool on; /* false: every call but timing__now() does nothing */
	int nr;
	double start;
	const char *phase[TIMING_MAX_PHASES]; /* static strings */
	double end[TIMING_MAX_PHASES];
};

/* Seconds on CLOCK_MONOTONIC. */
/* CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns()): in seconds, in nanoseconds. */
double timing__now(void);
uint64_t timing__now_ns(void);
/* Clock @clock in ns (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID...); 0 on error. */
uint64_t timing__clock_ns(clockid_t clock);
/* Starts a sequence of phases now. */
void timing__start(struct timing *t, bool on);
/* The phase @phase (a static string) ended now; it began where the previous one ended. */
void timing__mark(struct timing *t, const char *phase);
/* Prints "scorch: timing: WHAT TOTAL ms: phase N ms, ..." on stderr (when on). */
void timing__report(const struct timing *t, const char *what);

#endif /* SCORCH_ENGINE_TIMING_H */
