/* SPDX-License-Identifier: MIT */
/* engine: governor.c: what a recording costs the machine, within a budget */
#ifndef SCORCH_ENGINE_GOVERNOR_H
#define SCORCH_ENGINE_GOVERNOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

/* /proc/stat's "cpu" line, USER_HZ ticks of all CPUs (cpu_ticks__read(), in
 * record-reap.c) */
struct cpu_ticks {
	uint64_t idle; /* idle + iowait */
	uint64_t steal;
	uint64_t total;
};

/* Reads the ticks so far; false when /proc/stat is unreadable. */
bool cpu_ticks__read(struct cpu_ticks *t);

struct governor_opts {
	double budget_pct;   /* --max-overhead: % of all the CPUs' time; 0: not governed */
	long freq;	     /* -F */
	int nr_cpus;	     /* the machine's online CPUs */
	bool lever;	     /* cpu-clock events to slow down (cpu and wall modes) */
	bool per_sample_cpu; /* scorch reads samples' records (--unwind dwarf): the CPU
			      * time it spends reading the rings is spent per sample */
};
struct governor {
	struct sampler *s;	/* NULL: not started */
	struct cpu_ticks ticks; /* /proc/stat at the last tick (total 0: unreadable) */
	long clk_tck;
	double budget;
	long freq;
	int nr_cpus;
	bool lever, measured, per_sample_cpu;
	uint32_t mult, mult_max, mult_peak; /* -F's period times mult: the rate is freq/mult */
	unsigned int calm;		    /* ticks in a row under half the budget */
	unsigned int over;		    /* ticks in a row over it */
	uint64_t start_ns, last_ns, since_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t clock0, other0, cpu0;		      /* at the start: BPF ns, own CPU ns */
	uint64_t last_clock, last_other, last_cpu, last_consume, last_runs;
	uint64_t clock_end, other_end, cpu_end;
	double last_cost, peak_cost; /* shares of the CPUs, per tick */
	double last_per_sample;	     /* of last_cost: the samples' */
	double last_ns_per_run;	     /* BPF run time per sample in the last tick */
	double rate_time;	     /* integral of dt / mult: the average rate's */
	double rate_cap;	     /* Hz: the kernel throttled above it (0: not seen) */
	double sample_ns;	     /* a sample's cost to the thread it hits (0: not measured) */
	unsigned int probe_ticks;    /* ticks since it was measured */
	uint64_t lowered_ns, changes, throttled;
};
struct governor_stats {
	double budget_pct;   /* 0: not governed */
	int nr_cpus;	     /* the budget's: the machine's online CPUs */
	bool measured;	     /* BPF run time measured by the kernel */
	double bpf_s, cpu_s; /* BPF run time, scorch's CPU time, from attach to stop */
	double cost_pct;     /* both, as a share of all the CPUs over that time */
	double peak_pct;     /* the most in one tick */
	long min_rate;	     /* the lowest effective rate the costs measured led to (Hz) */
	long end_rate;	     /* the rate at the end */
	double avg_rate;     /* the effective rate averaged over time */
	double lowered_s, lowered_pct; /* time below -F */
	uint64_t changes;
	uint64_t throttled; /* ticks the kernel delivered fewer samples than asked */
};
/* Starts measuring at @now (the attach); no change to the rate yet. */
void governor__start(struct governor *g, struct sampler *s, const struct governor_opts *o,
		     uint64_t now);
/* Measures the last tick and moves the rate if needed; returns when the next tick is
 * due (CLOCK_MONOTONIC ns), 0 when not started. Called on one thread. */
uint64_t governor__tick(struct governor *g, uint64_t now);
/* The end of sampling: the totals are taken. Safe to repeat. */
void governor__end(struct governor *g, uint64_t now);
void governor__stats(const struct governor *g, struct governor_stats *st);
/* The rate sampled now (Hz): -F's, or the lower one the governor set; 0 when not
 * started. Safe on any thread while the stop thread ticks it. */
long governor__rate(const struct governor *g);

#endif /* SCORCH_ENGINE_GOVERNOR_H */
