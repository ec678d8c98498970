/* SPDX-License-Identifier: MIT */
/*
 * engine: the recorder's pieces, each with one job (calls go down this list, never up):
 *   record.c         set-up, start, the end of the recording in order (recorder__run())
 *   record-loop.c    the loop while sampling: the rings (the only reader), --interval
 *   record-edges.c   threads already off CPU when the recording begins
 *   record-output.c  counts to the outputs: each --interval, the end, the summary
 *   record-reap.c    when and how the images of exited processes are released
 *   record-dwarf.c   --unwind dwarf: samples unwound here, off-CPU copies joined
 * They share struct record; each piece owns the part named after it. The dwarf
 * unwinder and the reaps hand counted stacks to r->sink (record__add_stack()).
 */
#ifndef SCORCH_RECORD_H
#define SCORCH_RECORD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flamegraph.h"
#include "engine.h"
#include "fold.h"
#include "governor.h"
#include "launch.h"
#include "procs.h"
#include "stop.h"
#include "timing.h"
#include "python.h"
#include "symbolize.h"
#include "unwind.h"
#include "sampler.h"

/*
 * The rings are read in slices: at high rates the kernel fills them faster than their
 * records are unwound, and the loop must still see its deadline and signals. What the
 * kernel cannot write meanwhile it counts as lost (ring full). At the stop, what is
 * left after STOP_SLICE_MS (record.c) is counted, not unwound.
 */
#define CONSUME_SLICE_MS 50

struct record;

/* ---- record-reap.c: exited processes, released during the recording ---- */

struct record_reap {
	size_t pending_exits;	       /* exited, not reaped yet */
	size_t pending_replaced;       /* images replaced by exec, not reaped yet */
	double last;		       /* when the last reap ran (timing__now()) */
	double idle_at;		       /* when idle_ticks was read */
	bool idle_lately;	       /* the CPUs were idle enough from idle_at back */
	uint64_t idle_ticks;	       /* idle + iowait of all CPUs in /proc/stat, USER_HZ */
	uint64_t reaps;		       /* reaps of exited processes during the recording */
	uint64_t forced[REAP_WHY_MAX]; /* by why: on busy CPUs, for what waits */
	uint64_t deferred;	       /* periodic reaps put off: no idle CPU */
	uint64_t counts;	       /* count keys taken out early */
	uint64_t stacks;	       /* user stacks deleted with them (sampler__reap()) */
	uint32_t map_entries;	       /* of each count map (record__map_entries()) */
	struct reap_mark mark;	       /* after the last reap (or --interval's drain) */
};

/* Once per turn of the loop: how idle the CPUs were lately, while exits wait. */
void record__idle_update(struct record *r);
/* Is a reap due? Returns the reason (> REAP_NOT_YET), REAP_NOT_YET, or -ENOMEM. */
int record__reap_due(struct record *r);
/* Counts and names the stacks of exited processes, then releases their images. 0/-errno. */
int record__reap_exited(struct record *r);
/* What waits for a reap is counted from now on. 0 or -ENOMEM. */
int record__reset_reap_mark(struct record *r);

/* ---- record-dwarf.c: --unwind dwarf ---- */

struct record_dwarf {
	struct unwinder *unw;
	struct stack *ubuf, *kbuf; /* one sample's stacks */
	uint64_t uips[SCORCH_MAX_USER_DEPTH];
	uint32_t ring_bytes;
	uint64_t skipped; /* samples of processes released or never read */
	/* stack tops given to the kernel (sampler__set_stack_top()), the last by TID slot
	 * so that the samples already in flight do not set it again */
	struct {
		uint32_t tid, unbounded; /* copies to the stack end since the top was set */
		uint32_t forgets;	 /* tops of the thread that proved too low */
		uint64_t key, top;	 /* scorch_sample.thread_key */
	} tops[256];
	uint64_t tops_set, tops_forgotten, tops_cut; /* cut: walks truncated by a top */
	/* off CPU: copies taken at switch-out, joined to their interval */
	struct copytab *copies;
	struct ustacks *ustacks;   /* unwound samples, named when taken */
	uint64_t copies_joined;	   /* counted with their interval's length */
	uint64_t copies_dropped;   /* their interval was outside --min/--max-block */
	uint64_t copies_open;	   /* their interval was still open at the end: closed then */
	uint64_t copies_orphan;	   /* their interval never came (its record lost) */
	uint64_t intervals_orphan; /* interval records without their copy */
	/* the last process whose perf map an unwind read again, and when (record-dwarf.c) */
	pid_t reread_pid;
	uint64_t reread_ns;
};

/* The unwinder's view of the processes' mappings: the symbolizer's, and the perf maps
 * read again for CPython's trampolines (ctx: the struct record). */
extern const struct unwind_maps_ops record__unwind_ops;
/* Bytes of each sample ring buffer for @o on @nr_cpus CPUs. */
uint32_t record__ring_size(const struct record_opts *o, int nr_cpus);
/* sampler_sample_fn: one sample record, unwound now (r->err set on failure). */
void record__on_sample(void *ctx, const struct scorch_sample *smp, size_t len);
/* The end of an off-CPU interval whose stacks were copied: joined and counted. */
void record__on_interval(struct record *r, const struct scorch_interval *iv);
/* At the end: copies whose thread is still off CPU are counted until now. 0/-errno. */
int record__close_copies(struct record *r);

/* ---- record-edges.c: threads off CPU when the recording begins ---- */

struct record_edges {
	uint64_t threads;    /* target threads read */
	uint64_t seeded;     /* found off CPU: counted from the start */
	uint64_t ran;	     /* ran while they were read: not counted from the start */
	uint64_t unreadable; /* gone, or /proc unreadable */
	uint64_t late;	     /* not read: the recording stopped, or the time allowed ran out */
};

/*
 * Offcpu and wall modes (not with a command, which starts inside the recording): each
 * target thread off CPU at the attach is counted from then on to its switch-in, or to
 * the end, with the stacks /proc shows. Threads not read when @stop (NULL: none)
 * stops or by @until (timing__now()) are counted as late. 0 or -ENOMEM (other failures are
 * counted).
 */
struct stopper;
int record__edges_start(struct record *r, struct stopper *stop, double until);

/* ---- record-loop.c: while sampling ---- */

/* Process counts of the summary. */
struct record_procs {
	uint64_t seen;
	uint64_t released; /* reaped during the recording */
	uint64_t held;	   /* snapshotted and not released, now ... */
	uint64_t held_max; /* ... and at most */
	uint64_t sideband; /* named from the kernel's mmap records (no /proc read) */
	uint64_t read;	   /* named from /proc/PID/maps, read when first seen */
};

/* sampler_event_fn: new processes, exits, new mappings, off-CPU interval ends. */
void record__on_event(void *ctx, const struct scorch_event *e);
/*
 * Waits until the duration ends, a signal arrives, or the targets exit, serving the
 * rings, reaps and --interval meanwhile; sampling has stopped when it returns. 0/-errno.
 */
int record__loop(struct record *r);

/* ---- record-output.c: counts to the outputs ---- */

/* sampler_drain_fn: one counted stack to the capture and the named outputs. */
int record__add_stack(void *ctx, bool offcpu, const struct count_key *key, uint64_t value,
		      const struct stack *user, const struct stack *kernel);
/* --interval: every count so far to this interval's files (or, with on_interval, to
 * the callback); the next starts empty. */
int record__write_interval(struct record *r);
/* The end: the named outputs, then the capture with the stats @st. 0/-errno. */
int record__write_output(struct record *r, const uint64_t *st);
/* The end-of-run summary; returns the share of samples or intervals lost, in percent. */
double record__summary(struct record *r, const uint64_t *st);

/* ---- record.c ---- */

struct record {
	struct record_opts opts;
	struct cpu_ticks cpu_at[2]; /* at the attach and the detach (total 0: unread) */
	struct sampler *sampler;
	struct sideband *sb; /* NULL: every new process's maps are read from /proc */
	struct symbolizer *sym;
	struct perfmaps *pm;	 /* JIT symbol files of the processes seen */
	struct fold fold;	 /* counted stacks to names (fold.c) */
	struct capture_rec *cap; /* -o x.scorch (capture-record.c) */
	struct proctab *procs;	 /* the images seen (procs.c) */
	struct record_procs nprocs;
	struct record_reap reap;
	struct record_dwarf dw; /* --unwind dwarf */
	struct record_edges edges;
	struct launch launch;
	struct stopper stop;
	struct governor gov; /* ticked by the stop thread */ /* the duration and signals, from the
								attach on (stop.c) */
	bool stop_started;
	bool boosted;	 /* at STARTUP_NICE: start-up or the end (record.c) */
	bool cmd_failed; /* the -- command exited non-zero or was killed, not by scorch */
	int *pidfds;	 /* of opts.pids, -1 where none */
	bool *gone;	 /* of opts.pids then opts.tids */
	unsigned int max_depth;
	uint64_t attach_ns; /* when sampling began (timing__now_ns(), bpf_ktime_get_ns()) */
	uint64_t window_ns; /* when the counts of the files being written began: the attach,
			     * then each --interval's end (timing__now_ns()) */
	double last_jit_refresh;
	size_t stacks_written; /* distinct stacks in the outputs of finished intervals */
	double next_interval;  /* --interval: when the current files are written */
	uint64_t stacks_aged;  /* --interval: stacks unused for one deleted */
	uint64_t drain_lost;
	uint64_t drain_lost_ns;
	uint64_t ring_left; /* sample records left in the rings at the stop, not unwound */
	double elapsed;
	struct timing startup, finish; /* --timing */
	/* kallsyms read on a thread of its own while the BPF programs load (record.c);
	 * r->sym is the thread's alone until then */
	pthread_t ksyms_thread;
	bool ksyms_running;
	int ksyms_err;
	/* where a counted stack goes (record__add_stack()): the dwarf unwinder and the
	 * reaps hand theirs on through it, not knowing the outputs */
	sampler_drain_fn sink;
	int err;	    /* of a callback: the loop stops */
	bool write_failed;  /* an output could not be written: the summary still follows */
	bool cut_intervals; /* --interval, offcpu: open waits are cut at each boundary */
	struct ktables *kt; /* --unwind kernel: the tables in the BPF maps (ktables.c) */
	struct pycodes *py; /* --unwind kernel: CPython code objects' names */
	bool partial;	    /* more than PARTIAL_LOSS_PCT of the samples were lost */
	/* what is recorded ("PID 42 (app)", "all CPUs", "command: make -j8"; record.c), for
	 * the outputs' descriptions and the capture */
	char target[256];
	int64_t start_ns; /* CLOCK_REALTIME when the recording began (its outputs opened) */
	char host[65];	  /* uname's nodename */
	/* the outputs' descriptions (summary__describe()), written before each output: the
	 * graphs hold pointers to them. page_desc: the HTML page of every --interval */
	char desc[512], page_desc[512];
	int ask_fd;	    /* an eventfd: recorder__stop() asks the stop thread to stop */
	/* on_interval: where the last interval ended (timing__now()), its counters and
	 * counts unreadable then; intervals given so far */
	struct {
		double end;
		uint64_t st[SCORCH_NR_STATS];
		uint64_t drain_lost;
		unsigned int seq;
	} live;
};

/* Entries of the stack and count maps (both preallocated) on @nr_cpus CPUs. */
uint32_t record__map_entries(const struct record *r, int nr_cpus);

#endif /* SCORCH_RECORD_H */
