// SPDX-License-Identifier: MIT
/*
 * profiler: the cost governor. What a recording costs the machine is the kernel's
 * measure of its BPF programs' run time (BPF_ENABLE_STATS) plus scorch's own CPU time.
 * Every 100 ms on the stop thread it is compared with the budget (--max-overhead,
 * a share of all the CPUs); over it, the cpu-clock events' period is lengthened to a
 * whole multiple of -F's, under it again, shortened back (the rate starts where a
 * sample's usual cost fits the budget, and rises from there). Each sample counts the
 * periods it stands for (the programs' period_mult), so counts stay in -F's periods:
 * shares and CPU time stay true at any rate, only their resolution drops.
 *
 * What a sample costs the thread it interrupts is more than the program's run time:
 * the timer interrupt and the perf code around the program (in a VM, an exit to the
 * hypervisor per expiry: 23 us a sample where the program ran 2). From 2 kHz per CPU
 * the stop thread measures it (probe_sample_cost()) and a sample counts at least that.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "engine.h"
#include "governor.h"
#include "sampler.h"
#include "timing.h"

#define GOV_TICK_NS (100 * 1000000ULL)
/* aim below the budget, so that a noisy window does not cross it at once */
#define GOV_AIM 0.8
/* raise the rate after this many ticks in a row at less than half the budget; lower it
 * after this many over it */
#define GOV_CALM_TICKS 3
#define GOV_OVER_TICKS 2
/* the lowest rate the governor goes to: lower, a sample's cost is not the reason */
#define GOV_MIN_RATE 10
/* what a sample is taken to cost until measured, the interrupt included (23 us on a
 * VM whose timer expiries exit to the hypervisor, 2 to 5 on bare metal): the rate
 * starts where that fits the budget and rises once measured cheaper, so a recording
 * never begins by overloading the machine (nor has the kernel lower
 * kernel.perf_event_max_sample_rate after slow interrupts) */
#define GOV_GUESS_NS 10000.0
/* a tick that delivered less than this share of the samples asked while the CPUs
 * were busy was throttled by the kernel (judged from this rate up: a tick of a few
 * samples is noise) */
#define GOV_THROTTLE_SHARE  0.8
#define GOV_THROTTLE_MIN_HZ 2000.0
/* ... over a tick whose CPUs were busy this long at least (/proc/stat's ticks are
 * USER_HZ: 10 ms) */
#define GOV_THROTTLE_BUSY_S 0.05
/* probe_sample_cost(): from this rate per CPU up (below it the interrupts cost too
 * little to matter: 2,000 a second at 23 us is 4.6 %), every GOV_PROBE_EVERY ticks once
 * measured, in a window of 1 to 4 ms; an interruption is a gap of 1 us or more */
#define GOV_PROBE_MIN_HZ 2000.0
#define GOV_PROBE_EVERY	 5
#define GOV_PROBE_HITS	 8.0
#define GOV_PROBE_MIN_NS 1e6
#define GOV_PROBE_MAX_NS 4e6
#define GOV_PROBE_MAX	 512
#define GOV_GAP_NS	 1000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * What a sample costs the thread it interrupts, the timer interrupt and the perf
 * machinery included: the BPF run time is only part of it (in a VM each timer expiry
 * is an exit to the hypervisor: 23 us a sample where the program took 2). This
 * thread, SCHED_FIFO, spins reading the clock for a window long enough to be hit
 * GOV_PROBE_HITS times at @hz per CPU; each gap over GOV_GAP_NS is an interruption,
 * and at these rates most are samples: their median is the cost. 0: too few seen.
 */
static double probe_sample_cost(double hz)
{
	uint64_t gaps[GOV_PROBE_MAX], window, start, prev, t;
	size_t n = 0;

	window = (uint64_t)MIN(MAX(GOV_PROBE_HITS / hz * 1e9, GOV_PROBE_MIN_NS), GOV_PROBE_MAX_NS);
	start = prev = timing__now_ns();
	while ((t = timing__now_ns()) - start < window) {
		if (t - prev > GOV_GAP_NS && n < GOV_PROBE_MAX)
			gaps[n++] = t - prev;
		prev = t;
	}
	if (n < GOV_PROBE_HITS / 2)
		return 0;
	qsort(gaps, n, sizeof(*gaps), cmp_u64);
	return (double)gaps[n / 2];
}

/* Time at the current multiple since the last change, added to the totals. */
static void account(struct governor *g, uint64_t now)
{
	double dt = (double)(now - g->since_ns);

	if (now <= g->since_ns)
		return;
	g->rate_time += dt / g->mult;
	if (g->mult > 1)
		g->lowered_ns += now - g->since_ns;
	g->since_ns = now;
}

static void set_mult(struct governor *g, uint32_t mult, uint64_t now, bool measured)
{
	int err;

	if (mult == g->mult)
		return;
	err = sampler__set_period_mult(g->s, mult);
	if (err) {
		/* the lever is gone (the events closed meanwhile): measure on, change nothing */
		g->lever = false;
		return;
	}
	account(g, now);
	pr_debug("governor: %.1f%% of the CPUs over %.0f ms (%.1f%% the samples', %.0f ns a "
		 "sample in BPF, %.0f in all): rate %ld Hz -> %ld Hz\n",
		 100.0 * g->last_cost, GOV_TICK_NS / 1e6, 100.0 * g->last_per_sample,
		 g->last_ns_per_run, g->sample_ns, g->freq / g->mult, g->freq / mult);
	__atomic_store_n(&g->mult, mult, __ATOMIC_RELAXED); /* governor__rate() reads it */
	if (measured)
		g->mult_peak = MAX(g->mult_peak, mult);
	g->changes++;
}

void governor__start(struct governor *g, struct sampler *s, const struct governor_opts *o,
		     uint64_t now)
{
	memset(g, 0, sizeof(*g));
	g->s = s;
	g->budget = o->budget_pct / 100.0;
	g->freq = o->freq;
	g->nr_cpus = o->nr_cpus > 0 ? o->nr_cpus : 1;
	g->per_sample_cpu = o->per_sample_cpu;
	g->mult = g->mult_peak = 1;
	g->mult_max = o->freq > GOV_MIN_RATE ? (uint32_t)(o->freq / GOV_MIN_RATE) : 1;
	g->lever = o->lever && g->budget > 0 && g->mult_max > 1;
	g->measured = !sampler__enable_run_stats(s);
	if (!g->measured)
		pr_debug("governor: the kernel does not measure BPF run time (BPF_ENABLE_STATS): "
			 "scorch's own CPU time alone is governed\n");
	sampler__run_time(s, &g->clock0, &g->last_runs, &g->other0);
	g->cpu0 = timing__clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	g->start_ns = g->last_ns = g->since_ns = now;
	g->last_clock = g->clock0;
	g->last_other = g->other0;
	g->last_cpu = g->cpu0;
	g->last_consume = sampler__consume_ns(s);
	g->clk_tck = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	if (!cpu_ticks__read(&g->ticks))
		g->ticks.total = 0;
	if (g->lever) {
		double guess = ceil(g->freq * GOV_GUESS_NS / 1e9 / (GOV_AIM * g->budget));

		set_mult(g, (uint32_t)MIN(guess, (double)g->mult_max), now, false);
	}
}

/*
 * One tick: the share of the CPUs spent per sample (the cpu-clock program, and scorch's
 * reading of the rings when it unwinds each sample there) and the rest (the other programs,
 * scorch's own work otherwise: reading maps, naming, kallsyms), which a lower rate would not
 * reduce. Over the budget, the samples get what the rest leaves of it, half of it at least (the
 * rest is mostly start-up, kallsyms and the first processes' tables, and passes): the period grows
 * in proportion to their cost.
 */
uint64_t governor__tick(struct governor *g, uint64_t now)
{
	uint64_t clock, runs, other, cpu, dcpu, consume, dcons = 0;
	double span, per_sample, rest, room, want, asked, got;
	struct cpu_ticks ticks = {};
	bool steady;

	if (!g->s)
		return 0;
	if (now < g->last_ns + GOV_TICK_NS / 2)
		return g->last_ns + GOV_TICK_NS;
	span = (double)(now - g->last_ns) * g->nr_cpus;
	/* the whole tick at one period: what the kernel delivered is comparable */
	steady = g->since_ns <= g->last_ns;
	sampler__run_time(g->s, &clock, &runs, &other);
	cpu = timing__clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	dcpu = cpu > g->last_cpu ? cpu - g->last_cpu : 0;
	consume = sampler__consume_ns(g->s);
	if (g->per_sample_cpu)
		dcons = MIN(consume - g->last_consume, dcpu);
	per_sample = (double)(clock - g->last_clock) + (double)dcons;
	/* the interrupts' cost, where measured: a sample costs at least its gap */
	if (g->lever && (double)g->freq / g->mult >= GOV_PROBE_MIN_HZ &&
	    (!g->sample_ns || ++g->probe_ticks >= GOV_PROBE_EVERY)) {
		double c = probe_sample_cost((double)g->freq / g->mult);

		g->probe_ticks = 0;
		if (c > 0)
			g->sample_ns = g->sample_ns ? (g->sample_ns + c) / 2 : c;
	}
	if (g->sample_ns && runs > g->last_runs)
		per_sample = MAX(per_sample,
				 g->sample_ns * (double)(runs - g->last_runs) + (double)dcons);
	rest = (double)(other - g->last_other) + (double)(dcpu - dcons);
	per_sample /= span;
	rest /= span;
	g->last_ns_per_run = runs > g->last_runs ? (double)(clock - g->last_clock) /
							   (double)(runs - g->last_runs)
						 : 0;
	/* samples per CPU-second asked and delivered while the CPUs ran something (an
	 * idle CPU's timer is not run; nor is a VM's CPU while the host runs another) */
	asked = (double)g->freq / g->mult;
	got = 0;
	/* read only where judged (/proc/stat: a file read a tick); unread, the next read
	 * starts over */
	if (g->lever && asked >= GOV_THROTTLE_MIN_HZ && cpu_ticks__read(&ticks) && g->ticks.total) {
		double busy = (double)(ticks.total - g->ticks.total) -
			      (double)(ticks.idle - g->ticks.idle) -
			      (double)(ticks.steal - g->ticks.steal);

		busy /= (double)g->clk_tck;
		if (busy >= GOV_THROTTLE_BUSY_S)
			got = (double)(runs - g->last_runs) / busy;
		else
			steady = false;
	} else {
		steady = false;
	}
	g->ticks = ticks;
	g->last_runs = runs;
	g->last_ns = now;
	g->last_clock = clock;
	g->last_other = other;
	g->last_cpu = cpu;
	g->last_consume = consume;
	g->last_cost = per_sample + rest;
	g->last_per_sample = per_sample;
	g->peak_cost = MAX(g->peak_cost, g->last_cost);
	if (!g->lever)
		return now + GOV_TICK_NS;
	room = MAX(GOV_AIM * g->budget - rest, g->budget / 2);
	if (steady && asked >= GOV_THROTTLE_MIN_HZ && got < GOV_THROTTLE_SHARE * asked) {
		/*
		 * The kernel did not deliver the periods asked (it throttles an event past
		 * kernel.perf_event_max_sample_rate / HZ samples in a tick, for the rest of
		 * the tick): samples weighed by their period would undercount. Below what it
		 * delivered, and never above that again.
		 */
		pr_debug("governor: %.0f samples a CPU-second delivered of %.0f asked: throttled\n",
			 got, asked);
		want = ceil(g->freq / (GOV_AIM * got));
		g->rate_cap = g->rate_cap ? MIN(g->rate_cap, GOV_AIM * got) : GOV_AIM * got;
		g->calm = 0;
		g->throttled++;
		set_mult(g, (uint32_t)MIN(MAX(want, g->mult + 1.0), (double)g->mult_max), now,
			 true);
	} else if (g->last_cost > g->budget && per_sample > room &&
		   (++g->over >= GOV_OVER_TICKS || per_sample > 2 * room)) {
		/* over twice in a row, or far over: a lone tick over is most often a new
		 * process's first samples, before its tables load */
		want = ceil(g->mult * per_sample / room);
		g->calm = 0;
		g->over = 0;
		set_mult(g, (uint32_t)MIN(want, (double)g->mult_max), now, true);
	} else if (g->mult > 1 && g->last_cost < g->budget / 2 && ++g->calm >= GOV_CALM_TICKS) {
		/* room again: back towards -F, at most twice the rate a step */
		want = floor(g->mult * MAX(per_sample / room, 0.5));
		if (g->rate_cap)
			want = MAX(want, ceil(g->freq / g->rate_cap));
		g->calm = 0;
		if (want < g->mult)
			set_mult(g, (uint32_t)MAX(want, 1.0), now, true);
	} else if (g->last_cost >= g->budget / 2) {
		g->calm = 0;
	}
	if (g->last_cost <= g->budget || per_sample <= room)
		g->over = 0;
	return now + GOV_TICK_NS;
}

void governor__end(struct governor *g, uint64_t now)
{
	uint64_t runs;

	if (!g->s || g->end_ns)
		return;
	account(g, now);
	g->end_ns = now;
	sampler__run_time(g->s, &g->clock_end, &runs, &g->other_end);
	g->cpu_end = timing__clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

void governor__stats(const struct governor *g, struct governor_stats *st)
{
	double span = g->end_ns > g->start_ns ? (double)(g->end_ns - g->start_ns) : 0;

	memset(st, 0, sizeof(*st));
	if (!g->s || !span)
		return;
	st->budget_pct = 100.0 * g->budget;
	st->nr_cpus = g->nr_cpus;
	st->measured = g->measured;
	st->bpf_s = (g->clock_end - g->clock0 + g->other_end - g->other0) / 1e9;
	st->cpu_s = g->cpu_end > g->cpu0 ? (g->cpu_end - g->cpu0) / 1e9 : 0;
	st->cost_pct = 100.0 * (st->bpf_s + st->cpu_s) / (span / 1e9 * g->nr_cpus);
	st->peak_pct = 100.0 * g->peak_cost;
	st->min_rate = g->freq / g->mult_peak;
	st->end_rate = g->freq / g->mult;
	st->avg_rate = g->freq * g->rate_time / span;
	st->lowered_s = g->lowered_ns / 1e9;
	st->lowered_pct = 100.0 * g->lowered_ns / span;
	st->changes = g->changes;
	st->throttled = g->throttled;
}

long governor__rate(const struct governor *g)
{
	uint32_t mult;

	if (!g->s)
		return 0;
	mult = __atomic_load_n(&g->mult, __ATOMIC_RELAXED);
	return g->freq / (mult ? mult : 1);
}
