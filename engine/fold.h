/* SPDX-License-Identifier: MIT */
/* engine: fold.c: counted stacks to named folded stacks (record and report share it) */
#ifndef SCORCH_ENGINE_FOLD_H
#define SCORCH_ENGINE_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "python.h"
#include "engine.h"
#include "sampler.h"

#define FOLD_MAX_INLINE 32
/* offwake frames: between the blocked and the waker stacks, and for their wakers */
#define FOLD_WAKER_SEP	   "--"
#define FOLD_WAKER_UNKNOWN "[unknown waker]"
#define FOLD_WAKER_IRQ	   "[irq]"
#define FOLD_WAKER_SOFTIRQ "[softirq]"
/* distinct named stacks held in memory (folded__set_max_stacks()): at 32 frames about
 * 250 bytes each, 64 MiB at most; beyond, counted under ROOT;[stack table full] */
#define FOLD_MAX_STACKS (256 * 1024)

struct outputs;

struct fold {
	/* set by the caller before fold__add() */
	struct symbolizer *sym;
	enum record_mode mode;
	long freq;		/* MODE_WALL: a CPU sample weighs 1e6 / freq us */
	unsigned int max_depth; /* kernel stacks this deep are marked [truncated] */
	/* the walks with tables keep this many user frames (--max-depth); 0: a capture
	 * before 1.4, whose user stacks max_depth deep are cut too (no KEY_USER_DEEP) */
	unsigned int user_depth;
	bool fp;	    /* user stacks walked by frame pointers in the kernel */
	bool kwalk;	    /* ... or by the kernel walk's tables, frame pointers where none */
	bool ns_values;	    /* on-CPU set values are nanoseconds, named in microseconds */
	struct pycodes *py; /* names of Python frames (PY_WORD words); NULL: none */
	bool wakeup;	    /* --mode wakeup: offwake lines turned into the wakers' alone */
	/* offwake, set before each fold__add() of a key with KEY_WAKER: its wakers (the
	 * waker first; chain mode: then the waker's own...), each with its stacks (leaf
	 * first, NULL when absent) and whether its process was lost */
	struct fold_waker {
		const struct waker *w;
		const struct stack *user, *kernel;
		bool lost_proc;
	} wakers[SCORCH_CHAIN_MAX];
	unsigned int nr_wakers;
	/* owned: fold__init() / fold__release() */
	struct folded *folded;
	struct strset *names; /* comms and names with their _[k], _[i] or _[j] suffix */
	const char **frames;
	size_t frames_cap;
	struct frame fbuf[FOLD_MAX_INLINE];
	/* optional (set by the caller): the outputs that want each stack's addresses and
	 * frames (pprof, speedscope); NULL: folded stacks only */
	struct outputs *outs;
	/* optional (set and owned by the caller): a second table every folded stack also
	 * goes to (report: the counts of one interval, for the HTML page's timeline) */
	struct folded *slice;
	/* counted by fold__add() for the summary */
	uint64_t offcpu_ns;   /* off-CPU time counted */
	uint64_t runqueue_ns; /* of which runnable, waiting for a CPU ([runqueue]) */
	uint64_t truncated_user, truncated_kernel;
	uint64_t truncated_copy;	    /* samples whose unwinding ran past the stack copy */
	uint64_t noproc_samples, noproc_us; /* of processes whose user frames are [unknown] */
	/* offwake: blocked us under a waker, under [unknown waker], woken in an interrupt;
	 * chain mode: under a chain cut short (a waker's stacks gone with its process) */
	uint64_t waker_us, nowaker_us, irq_waker_us, chain_cut_us;
	uint64_t last_count; /* the count of the stack being folded */
	/*
	 * User stacks whose walk reached an address outside every executable mapping (a
	 * frame pointer register used for data: the caller's code has none), cut there
	 * under [unknown]; counts (samples or us) of all user stacks and of those cut, by
	 * mode (on, off CPU), and the file holding the last frame of the most cut ones.
	 */
	uint64_t user_counts[2], cut_counts[2];
	/* by mode: user stacks whose outermost frame is JIT code (its runtime keeps no frame
	 * pointer there), the comm with the most; user stacks cut at max_depth */
	uint64_t jit_end[2], deep[2];
	const char *jit_comm;
	uint64_t jit_comm_count;
	/* by mode: stacks whose leaf is JIT code no perf map or jitdump names ("[jit]"),
	 * and the process with the most of them */
	uint64_t jit_unnamed[2];
	const char *unnamed_comm;
	uint32_t unnamed_pid;
	uint64_t unnamed_count;
	struct fold_cut {
		const char *path; /* interned in the symbolizer */
		uint64_t count;
	} cut_files[8];
};

int fold__init(struct fold *f);
void fold__release(struct fold *f);
/*
 * Names one counted (key, value) and adds it to the folded set: "comm;user root..leaf;
 * kernel root..leaf_[k]" (see DESIGN.md), off-CPU values converted to microseconds.
 * @lost_proc: the process could not be read, its user frames are "[unknown]". Returns 0
 * or -errno. sampler_drain_fn's stacks: @user/@kernel leaf first, NULL when absent.
 */
int fold__add(struct fold *f, bool offcpu, const struct count_key *key, uint64_t value,
	      const struct stack *user, const struct stack *kernel, bool lost_proc);
/* What fold__add() counts of time off CPU, without naming (a capture alone's summary). */
void fold__tally(struct fold *f, bool offcpu, const struct count_key *key, uint64_t value);
/* Titles, units and palette of an SVG by mode, unless the user chose them. */
void fold__svg_defaults(enum record_mode mode, struct flamegraph_opts *fg);

#endif /* SCORCH_ENGINE_FOLD_H */
