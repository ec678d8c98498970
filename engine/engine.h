/* SPDX-License-Identifier: MIT */
/*
 * engine: recording stacks with the BPF programs, and counts to named outputs.
 *
 * The face the command line sees; nothing else in engine/ is included from outside it.
 *   - a recorder, made from struct record_opts, run once, freed (`scorch record`);
 *   - report__run(): a capture file to the same outputs (`scorch report`);
 *   - what the options are built from: the outputs asked for (-o, --format), an --event
 *     spec, and the probes of the host (`scorch check`, and the recorder's preflight).
 */
#ifndef SCORCH_ENGINE_H
#define SCORCH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "flamegraph.h"
#include "symbolize.h"

#define DEFAULT_CHAIN_DEPTH 3	  /* --mode chain: the waker, its waker, and that one's */
#define DEFAULT_STACK_SIZE 16384 /* --unwind dwarf: bytes of stack copied per sample */

enum record_mode {
	MODE_CPU = 0, /* on-CPU samples, counted in samples */
	MODE_OFFCPU,  /* off-CPU time, in microseconds */
	MODE_WALL,    /* both, in microseconds of wall time */
	MODE_EVENT,   /* stacks at an event (record --event): calls, a weight or latency */
};

enum unwind_mode {
	UNWIND_AUTO = 0, /* dwarf in cpu mode, fp off CPU: see resolve_unwind() */
	UNWIND_FP,	 /* frame pointers, walked in the kernel */
	UNWIND_DWARF,	 /* registers + stack copied, unwound here with the files' CFI */
	UNWIND_KERNEL,	 /* walked in the BPF programs with tables from the files' CFI */
};

/* ---- output formats: what each command writes, by file name or --format ---- */

/*
 * The one rule every command follows to choose an output's format. --format, when
 * given, names it whatever the file's name. Else the name's ending does
 * (case-insensitive, after at least one character of the file's name):
 *   folded      .folded, .collapsed, .txt
 *   svg         .svg
 *   html        .html, .htm
 *   pprof       .pb.gz, .pb
 *   speedscope  .json
 *   capture     .scorch
 * Standard output ("-" or no -o) and a name with no such ending get the command's
 * default format, except names ending in an image or document format (.png, .jpg,
 * .jpeg, .gif, .webp, .bmp, .tif, .tiff, .pdf, .ps, .eps) or a compressed one (.gz,
 * .zst, .xz, .bz2, .lz4, .zip, .7z, but .pb.gz): no command writes those, and writing
 * text or an SVG under such a name would only make a file nothing opens.
 */
enum output_fmt {
	FMT_FOLDED = 0,
	FMT_SVG,
	FMT_HTML,
	FMT_PPROF,
	FMT_SPEEDSCOPE,
	FMT_CAPTURE,
	FMT_NR,
};
#define FMT_BIT(f) (1u << (f))

/* What one command writes: its name in messages ("diff"), the FMT_BIT()s of the formats
 * it writes, and the one of them standard output and names of no known ending get. */
struct output_formats {
	const char *cmd;
	unsigned int can;
	enum output_fmt dflt;
};

/*
 * The format @w's command writes to @path (NULL or "-": standard output) given --format
 * @format (NULL: none). Returns 0 with *@fmt set, or -EINVAL for a name or --format the
 * command does not write (one error line naming the file or the format, and a hint
 * listing what the command writes: exit status 2, a usage error).
 */
int output_format__choose(const struct output_formats *w, const char *path, const char *format,
			  enum output_fmt *fmt);
/* The --format name of @fmt ("folded", "svg", ...). */
const char *output_format__name(enum output_fmt fmt);

/* ---- outputs: the files a recording or a report writes ---- */

/*
 * The outputs of a recording, one per -o (none: standard output, folded), each in the
 * format output_format__choose() gave it. With --interval every format but HTML is
 * written to numbered files, one per interval; an HTML page is one file holding every
 * interval so far (a timeline), written again at each interval. Every file is opened by
 * outputs__open() before sampling starts (errors early) and written atomically by
 * outputs__write().
 */
struct outputs;
struct outputs *outputs__new(void);
void outputs__free(struct outputs *o); /* uncommitted files are removed; NULL accepted */
/* Adds -o @path ("-" or NULL: standard output) in format @fmt (not FMT_CAPTURE: the
 * recorder writes captures itself). -EINVAL (logged) for a path given twice. */
int outputs__add(struct outputs *o, const char *path, enum output_fmt fmt);
/* Outputs of @format ("svg", ...), or all with NULL. */
size_t outputs__count(const struct outputs *o, const char *format);
bool outputs__to_stdout(const struct outputs *o);

/* ---- events: record --event ---- */

enum event_kind {
	EVENT_NONE = 0,
	EVENT_UPROBE,	  /* uprobe:FILE:SYMBOL[+OFF] */
	EVENT_URETPROBE,  /* uretprobe:FILE:SYMBOL[+OFF] */
	EVENT_USDT,	  /* usdt:FILE:PROVIDER:NAME */
	EVENT_TRACEPOINT, /* tracepoint:CATEGORY:NAME, as a raw tracepoint */
	EVENT_SOFTWARE,	  /* page-faults, context-switches, cpu-migrations */
};

struct event_spec {
	enum event_kind kind;
	const char *spec;   /* as given (borrowed from argv) */
	char *copy;	    /* owned: the fields below point into it */
	const char *file;   /* uprobe, usdt: FILE as given */
	const char *symbol; /* uprobe: SYMBOL; usdt: PROVIDER */
	const char *name;   /* usdt: NAME; tracepoint: NAME; software: the event's name */
	uint64_t add;	    /* uprobe: +OFF */
	char *path;	    /* owned, after event__resolve(): the file probed */
	uint64_t offset;    /* uprobe: file offset probed */
	uint64_t func_size;
	uint32_t sw_config;	 /* software: PERF_COUNT_SW_* */
	unsigned int weight_arg; /* --weight ARGn; 0: count */
	char weight_unit[33];	 /* --weight ARGn:UNIT, what the argument counts ("": bytes) */
	uint64_t period;	 /* --period: every Nth event counted (1: all) */
	bool latency;		 /* --latency: entry to return, by the stacks at entry */
	char subtitle[512];	 /* the SVG's (event__svg_defaults()) */
};

/* Parses --event @arg (borrowed) into @ev (zeroed here). 0, -EINVAL (logged), -ENOMEM. */
int event__parse(const char *arg, struct event_spec *ev);
void event__free(struct event_spec *ev);

/* ---- the recorder ---- */

/*
 * A live view's figures of one interval (struct record_opts.on_interval): what the
 * kernel counted from the end of the last interval (or the attach) to the end of this
 * one, as the end-of-run summary counts it.
 */
struct interval_info {
	size_t sz;	   /* sizeof(struct interval_info) */
	unsigned int seq;  /* 1 for the first interval */
	bool last;	   /* the partial interval at the end of the recording */
	double elapsed;	   /* seconds from the attach to the interval's end */
	double seconds;	   /* the interval's length */
	int nr_cpus;	   /* with a cpu-clock event (cpu, wall); 0 off CPU */
	long freq;	   /* -F */
	long rate;	   /* Hz at the interval's end: -F's, or lower where the cost governor
			    * lowered it (--max-overhead); 0 off CPU */
	uint64_t samples;  /* on-CPU samples of the targets (cpu and wall modes) */
	uint64_t switches; /* switch-outs of the targets' threads (offcpu and wall modes) */
	uint64_t taken;	   /* samples and switch-outs: events that could be counted ... */
	uint64_t lost;	   /* ... and those lost (a full map, a full ring, unreadable) */
};

/*
 * Called with one interval's counts, named and folded as record's outputs would have
 * them (@f, borrowed for the call; its unit is the mode's: samples, microseconds), on
 * the recorder's thread. A negative return stops the recording with that error.
 */
typedef int (*record_interval_fn)(void *ctx, const struct folded *f,
				  const struct interval_info *info);

struct record_opts {
	enum record_mode mode;
	bool offwake; /* --mode offwake: MODE_OFFCPU, blocked time by (blocked, waker) stacks */
	bool wakeup;  /* --mode wakeup: offwake, folded as the wakers alone */
	/* --mode chain: offwake, each waker's own waker on top of it, up to chain_depth
	 * wakers (2..SCORCH_CHAIN_MAX; --chain-depth) */
	bool chain;
	uint32_t chain_depth;
	pid_t *pids;
	size_t nr_pids;
	pid_t *tids;
	size_t nr_tids;
	bool all;
	double duration; /* seconds; 0: until Ctrl-C or the target exits */
	long freq;
	double max_overhead; /* --max-overhead: % of all the CPUs scorch may cost; 0: any */
	bool user_only;
	bool kernel_only;
	bool include_idle;
	bool quiet;
	int verbose;
	struct outputs *outs;	  /* -o (repeatable) but captures, --format */
	const char *capture_path; /* -o FILE.scorch or --format capture ('-': stdout) */
	double interval;	  /* --interval seconds; 0: one output at the end */
	long max_stacks;
	char **cmd; /* NULL-terminated argv after --, or NULL */
	/* off-CPU */
	uint64_t min_block_us;
	uint64_t max_block_us;
	uint32_t state_mask;
	bool user_threads_only;
	bool kernel_threads_only;
	struct symbolizer_opts names; /* --lines, --no-demangle, --params, --no-inline */
	/* unwinding */
	enum unwind_mode unwind;
	bool unwind_auto; /* --unwind auto chose it */
	bool python_walk; /* auto on CPU: CPython processes walked in the kernel (Python frames) */
	bool no_python;	  /* --no-python: CPython processes unwound as any other */
	long max_depth;	  /* --max-depth: user frames the walks with tables keep */
	long stack_size;
	bool timing;	/* --timing: print how long start-up and the end take */
	long ring_size; /* bytes of each sample ring buffer; 0: sized from the rate */
	bool graph;	/* an SVG or HTML page among the outputs */
	bool capture;	/* a capture (capture_path) */
	bool named;	/* the named outputs (folded, SVG, HTML, pprof, speedscope): any */
	struct flamegraph_opts fg;
	bool freq_given;	 /* -F given */
	struct event_spec event; /* --event (kind EVENT_NONE: timed sampling) */
	unsigned int weight_arg; /* --weight ARGn */
	char weight_unit[33];	 /* --weight ARGn:UNIT ("": bytes) */
	long period;		 /* --period N (0: not given) */
	bool latency;		 /* --latency */
	/*
	 * A live view (scorch top): every @interval seconds, and once for the partial
	 * interval at the end, the counts so far go to @on_interval instead of outputs,
	 * and the next interval starts empty. @outs and captures are not used then, and
	 * the summary says nothing of outputs. Needs @interval > 0 and a timed mode (not
	 * MODE_EVENT, not offwake).
	 */
	record_interval_fn on_interval;
	void *on_interval_ctx;
};

/* Frees what the options hold (outputs not committed are removed); @o may be reused. */
void record_opts__free(struct record_opts *o);

/*
 * A recording: its BPF programs, targets, tables and outputs. recorder__new() takes
 * over what @o holds (the caller's copy is zeroed) and checks nothing yet;
 * recorder__run() probes the host, starts, samples until the duration ends, a signal
 * comes or the targets exit, then writes the outputs and the summary. It returns 0 or
 * -errno (logged, with hints). recorder__free() releases everything; NULL accepted.
 */
struct recorder;
int recorder__new(struct record_opts *o, struct recorder **out);
int recorder__run(struct recorder *r);
/* After recorder__run(): the -- command failed (exited non-zero or was killed, not by
 * scorch); more than the allowed share of the samples was lost (a partial result). */
bool recorder__command_failed(const struct recorder *r);
bool recorder__partial(const struct recorder *r);
/*
 * Asks the recording to stop as Ctrl-C does: from any thread, or a signal handler
 * (async-signal-safe), at any time between recorder__new() and recorder__free(); a
 * request before sampling starts stops it as soon as it has started.
 */
void recorder__stop(struct recorder *r);
void recorder__free(struct recorder *r);

/* ---- the report: a capture to outputs ---- */

struct report_opts {
	const char *input;	      /* the capture file */
	struct outputs *outs;	      /* -o (repeatable), --format; the caller's */
	struct symbolizer_opts names; /* --lines, ..., --symfs, --debug-root; cache_dir */
	bool quiet;
	bool graph; /* an SVG or HTML page among the outputs */
	struct flamegraph_opts fg;
};

/*
 * Names the frames of the capture @o->input as they were when it was recorded and
 * writes @o->outs, then a summary. Returns 0 or -errno (logged); *partial is set when
 * the recording lost more than the allowed share of its samples.
 */
int report__run(struct report_opts *o, bool *partial);

/* The suffix folded stacks give a user frame of @kind: "_[i]", "_[j]" or "". */
const char *fold__frame_suffix(enum frame_kind kind);

/* ---- probes: what the host allows ---- */

enum probe_status {
	PROBE_OK = 0,	/* works */
	PROBE_DEGRADED, /* works with a limit the detail names */
	PROBE_MISSING,	/* absent or refused */
	PROBE_SKIPPED,	/* not checked: it needs a privilege scorch does not have */
};

/* What depends on a probe (probe_result.need bits); 0: informational only. */
#define PROBE_NEED_RECORD (1u << 0) /* every recording */
#define PROBE_NEED_OFFCPU (1u << 1) /* --mode offcpu and --mode wall */
#define PROBE_NEED_DWARF  (1u << 2) /* --unwind dwarf */
#define PROBE_NEED_OFFWAKE (1u << 3) /* --mode offwake and --mode wakeup */
#define PROBE_NEED_UPROBE  (1u << 4) /* --event uprobe:, uretprobe:, usdt: */

enum probe_id {
	PROBE_CAPS,	       /* euid, CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN, CAP_SYS_PTRACE */
	PROBE_PARANOID,	       /* kernel.perf_event_paranoid (value) */
	PROBE_MAX_RATE,	       /* kernel.perf_event_max_sample_rate (value, Hz) */
	PROBE_MAX_STACK,       /* kernel.perf_event_max_stack (value, frames) */
	PROBE_UNPRIV_BPF,      /* kernel.unprivileged_bpf_disabled (value) */
	PROBE_BTF,	       /* /sys/kernel/btf/vmlinux (value: bytes) */
	PROBE_PROG_PERF_EVENT, /* BPF program types, loaded by libbpf_probe_bpf_prog_type() */
	PROBE_PROG_RAW_TP,
	PROBE_PROG_TRACEPOINT,
	PROBE_PROG_KPROBE,
	PROBE_PROG_TRACING,
	PROBE_MAP_RINGBUF, /* BPF map types, created by libbpf_probe_bpf_map_type() */
	PROBE_MAP_STACK_TRACE,
	PROBE_MAP_BATCH,	/* hash map batch lookup on a real map */
	PROBE_HELPER_GET_STACK, /* helpers, in a perf_event program (libbpf_probe_bpf_helper) */
	PROBE_HELPER_RINGBUF,
	PROBE_HELPER_READ_USER,
	PROBE_HELPER_PT_REGS,
	PROBE_HELPER_TASK_BTF,
	PROBE_HELPER_LOOP, /* --unwind kernel (the default off CPU falls back to fp) */
	PROBE_CPU_CLOCK,   /* perf_event_open of a sampling event on this CPU, closed */
	PROBE_CYCLES,
	PROBE_UPROBE,  /* perf's uprobe PMU (value: its type), else tracefs's uprobe_events */
	PROBE_TP_EXIT, /* a trivial program attached to the raw tracepoint and detached */
	PROBE_TP_FORK,
	PROBE_TP_SWITCH,
	PROBE_TP_WAKEUP,
	PROBE_TP_WAKING,
	PROBE_TRACEFS,	 /* mounted or not (scorch does not need it) */
	PROBE_DEBUGINFO, /* /usr/lib/debug/.build-id (value: entries) */
	PROBE_MEMLOCK,	 /* RLIMIT_MEMLOCK (value: bytes, -1 unlimited) vs memcg accounting */
	PROBE_NR,
};

struct probe_result {
	enum probe_id id;
	const char *name; /* stable short name, e.g. "kernel.perf_event_max_stack" (static) */
	enum probe_status status;
	uint32_t need;	  /* PROBE_NEED_* bits */
	long value;	  /* sysctls and sizes (see enum probe_id); -1 otherwise */
	char detail[320]; /* one line: what was found (for a missing required probe: the error) */
	char hint[192];	  /* what to do about it; empty when nothing */
};

/* Runs one probe (side effects: a BPF object or perf event opened and closed).
 * Never logs. Returns 0, or -EINVAL for an unknown @id. */
int probe__run(enum probe_id id, struct probe_result *res);
/*
 * Runs @ids in order; at the first whose need intersects @need and whose status is
 * PROBE_MISSING, logs its detail as the error and its hint, and returns -EPERM
 * (privileges), -ENOENT (BTF) or -EOPNOTSUPP; @res then holds that probe. Returns 0
 * when none is missing (@res holds the last probe run).
 */
int probe__require(uint32_t need, const enum probe_id *ids, size_t nr, struct probe_result *res);
/* "ok", "degraded", "missing", "skipped" (static). */
const char *probe__status_name(enum probe_status st);

#endif /* SCORCH_ENGINE_H */
