// SPDX-License-Identifier: MIT
/* profiler: `scorch record`: sample stacks with BPF, symbolize, write folded stacks. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common.h"
#include "cmds.h"
#include "flamegraph.h"
#include "perfmap.h"
#include "profiler-private.h"
#include "symbolize.h"
#include "unwind.h"

#define DEFAULT_FREQ	 99
#define MAX_TARGETS	 4096
#define POLL_PERIOD_MS	 250 /* --unwind dwarf, or exits pending: wake up this often */
#define POLL_PERIOD_FP_MS 1000 /* else (JIT_REFRESH_SEC): new images wake us up, exits wait */
/*
 * The rings are read in slices: at high rates the kernel fills them faster than their
 * records are unwound, and the loop must still see its deadline and signals. What the
 * kernel cannot write meanwhile it counts as lost (ring full). At the stop, what is
 * left after STOP_SLICE_MS is counted, not unwound.
 */
#define CONSUME_SLICE_MS 50
#define STOP_SLICE_MS	 100
#define PARTIAL_LOSS_PCT 5.0
/* reaps of exited processes (reap_due(); the other limits: reap_mark__exceeded()) */
#define REAP_PERIOD_SEC	 1.0  /* once a period, */
#define REAP_IDLE_CPUS	 0.5  /* if the CPUs were this idle lately (IDLE_WINDOW_SEC); */
#define REAP_HELD	 1024 /* else once this many exited images wait */
#define IDLE_WINDOW_SEC	 0.2 /* idle time is read over the last 0.2 to 0.45 s */
#define JIT_REFRESH_SEC	 1.0 /* perf maps and jitdumps: appended bytes read this often */
/* and at most this much per wake-up, waking this often while more is left: the ring
 * buffer is drained between slices however large a map is */
#define JIT_SLICE_BYTES (1u << 20)
#define JIT_SLICE_MS	20
#define MAX_OUTPUTS 16
/* each CPU's ring of fork/exec/mmap records (~1.5 KiB a dynamically linked process; a
 * quarter of it wakes scorch): 512 KiB, less past 16 CPUs (8 MiB in all), >= 64 KiB */
#define SIDEBAND_RING_MAX   (512 * 1024)
#define SIDEBAND_RING_MIN   (64 * 1024)
#define SIDEBAND_RING_TOTAL (8 * 1024 * 1024)
#define DEFAULT_STACK_SIZE 16384 /* --unwind dwarf: bytes of stack copied per sample */

enum unwind_mode {
	UNWIND_AUTO = 0, /* dwarf in cpu mode, fp off CPU: see resolve_unwind() */
	UNWIND_FP,	 /* frame pointers, walked in the kernel */
	UNWIND_DWARF,	 /* registers + stack copied, unwound here with the files' CFI */
};

struct record_opts {
	enum record_mode mode;
	pid_t *pids;
	size_t nr_pids;
	pid_t *tids;
	size_t nr_tids;
	bool all;
	double duration; /* seconds; 0: until Ctrl-C or the target exits */
	long freq;
	bool user_only;
	bool kernel_only;
	bool include_idle;
	bool quiet;
	int verbose;
	struct outputs *outs; /* -o (repeatable) but captures, --format */
	const char *capture_path; /* -o FILE.scorch or --format capture ('-': stdout) */
	double interval;      /* --interval seconds; 0: one output at the end */
	long max_stacks;
	char **cmd; /* NULL-terminated argv after --, or NULL */
	/* off-CPU */
	uint64_t min_block_us;
	uint64_t max_block_us;
	uint32_t state_mask;
	bool user_threads_only;
	bool kernel_threads_only;
	/* names */
	bool lines;
	bool no_demangle;
	bool keep_params;
	bool no_inline;
	/* unwinding */
	enum unwind_mode unwind;
	long stack_size;
	bool timing; /* --timing: print how long start-up and the end take */
	long ring_size; /* bytes of each sample ring buffer; 0: sized from the rate */
	/* an SVG among the outputs */
	bool svg;
	/* a capture (capture_path) */
	bool capture;
	/* the named outputs (folded, SVG, pprof, speedscope): any at all */
	bool named;
	struct flamegraph_opts fg;
};

/* /proc/stat's "cpu" line, USER_HZ ticks of all CPUs (read_cpu_ticks()) */
struct cpu_ticks {
	uint64_t idle; /* idle + iowait */
	uint64_t steal;
	uint64_t total;
};

struct record {
	struct record_opts opts;
	struct cpu_ticks cpu_at[2]; /* at the attach and the detach (total 0: unread) */
	struct sampler *sampler;
	struct sideband *sb; /* NULL: every new process's maps are read from /proc */
	struct symbolizer *sym;
	struct perfmaps *pm; /* JIT symbol files of the processes seen */
	struct unwinder *unw; /* --unwind dwarf */
	bool cmd_failed; /* the -- command exited non-zero or was killed, not by scorch */
	struct stack_trace *ubuf, *kbuf; /* one sample's stacks */
	uint64_t uips[SCORCH_MAX_STACK_DEPTH];
	uint32_t ring_bytes;
	uint64_t unwind_skipped; /* samples of processes released or never read */
	/* --unwind dwarf: stack tops given to the kernel (sampler__set_stack_top()), the last
	 * by TID slot so that the samples already in flight do not set it again */
	struct {
		uint32_t tid, unbounded; /* copies to the stack end since the top was set */
		uint32_t forgets;	 /* tops of the thread that proved too low */
		uint64_t key, top;	 /* scorch_sample.thread_key */
	} tops[256];
	uint64_t tops_set, tops_forgotten, tops_cut; /* cut: walks truncated by a top */
	/* --unwind dwarf off CPU: copies taken at switch-out, joined to their interval */
	struct copytab *copies;
	struct ustacks *ustacks; /* --unwind dwarf: unwound samples, named when taken */
	uint64_t copies_joined;	 /* counted with their interval's length */
	uint64_t copies_dropped; /* their interval was outside --min/--max-block */
	uint64_t copies_open;	 /* their interval was still open at the end: closed then */
	uint64_t copies_orphan;	 /* their interval never came (its record lost) */
	uint64_t intervals_orphan; /* interval records without their copy */
	double last_jit_refresh;
	struct fold fold; /* counted stacks to names (fold.c) */
	struct capture_rec *cap; /* -o x.scorch (capture-record.c) */
	struct proctab *procs;
	struct launch launch;
	size_t stacks_written; /* distinct stacks in the outputs of finished intervals */
	double next_interval;  /* --interval: when the current files are written */
	int *pidfds;
	bool *gone;
	unsigned int max_depth;
	uint64_t drain_lost;
	uint64_t drain_lost_ns;
	uint64_t ring_left; /* sample records left in the rings at the stop, not unwound */
	/* process images */
	size_t pending_exits;  /* exited, not reaped yet */
	size_t pending_replaced; /* images replaced by exec, not reaped yet */
	double last_reap;
	double idle_at;	       /* when idle_ticks was read (CLOCK_MONOTONIC s) */
	bool idle_lately;      /* the CPUs were REAP_IDLE_CPUS idle from idle_at back */
	uint64_t idle_ticks;   /* idle + iowait of all CPUs in /proc/stat, USER_HZ */
	uint64_t reaps;	       /* reaps of exited processes during the recording */
	uint64_t reaps_forced[REAP_WHY_MAX]; /* by why: on busy CPUs, for what waits */
	uint64_t reaps_deferred;	     /* periodic reaps put off: no idle CPU */
	uint64_t stacks_aged;		     /* --interval: stacks unused for one deleted */
	uint32_t map_entries;		     /* of each count map (map_entries()) */
	struct reap_mark mark;		     /* after the last reap (or --interval's drain) */
	uint64_t procs_seen;
	uint64_t procs_released; /* reaped during the recording */
	uint64_t procs_held;     /* snapshotted and not released, now ... */
	uint64_t procs_held_max; /* ... and at most */
	uint64_t procs_sideband; /* named from the kernel's mmap records (no /proc read) */
	uint64_t procs_read;	 /* named from /proc/PID/maps, read when first seen */
	uint64_t reaped_counts;  /* count keys taken out early */
	uint64_t reaped_stacks;	 /* user stacks deleted with them (sampler__reap()) */
	double elapsed;
	struct timing startup, finish; /* --timing */
	/* kallsyms read on a thread of its own while the BPF programs load (ksyms_start());
	 * r->sym is the thread's alone until ksyms_wait() */
	pthread_t ksyms_thread;
	bool ksyms_running;
	int ksyms_err;
	int err;
	bool write_failed; /* an output could not be written: the summary still follows */
};

static void *ksyms_load(void *arg)
{
	struct record *r = arg;

	r->ksyms_err = symbolizer__load_kernel(r->sym);
	return NULL;
}

/*
 * Reads the kernel's symbols (/proc/kallsyms: ~50 ms, most of it the kernel printing
 * them) on a thread of its own, beside the BPF programs' load, with every signal blocked
 * there (SIGINT and SIGTERM are for the main thread's ppoll()). Nothing may use r->sym
 * until ksyms_wait(). If the thread cannot start, ksyms_wait() reads them itself.
 */
static void ksyms_start(struct record *r)
{
	sigset_t all, old;
	int err;

	if (r->opts.user_only)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->ksyms_thread, NULL, ksyms_load, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		pr_debug("cannot start a thread for kallsyms (read after the load): %s\n",
			 strerror(err));
	r->ksyms_running = !err;
}

/* Waits for ksyms_start()'s thread, if any; r->sym is the caller's again. 0 or -ENOMEM. */
static int ksyms_wait(struct record *r)
{
	if (!r->ksyms_running)
		return symbolizer__load_kernel(r->sym);
	pthread_join(r->ksyms_thread, NULL);
	r->ksyms_running = false;
	return r->ksyms_err;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch record [options] [-- command [args...]]\n"
		"\n"
		"Samples on-CPU user and kernel stacks with a BPF program on a cpu-clock perf\n"
		"event per CPU (or measures off-CPU time on sched_switch), counts them in the\n"
		"kernel, and writes folded stacks (\"comm;root;...;leaf COUNT\", kernel frames\n"
		"suffixed _[k]).\n"
		"\n"
		"modes:\n"
		"      --mode cpu             on-CPU samples; counts are samples (default)\n"
		"      --mode offcpu          time off CPU by the stack where threads blocked;\n"
		"                             counts are microseconds; time waiting for a CPU\n"
		"                             while runnable ends in a [runqueue] frame\n"
		"      --mode wall            both in microseconds (a CPU sample weighs 1e6/HZ,\n"
		"                             and the periods before it that the kernel did not\n"
		"                             sample while its thread kept the CPU): each\n"
		"                             thread's total is its wall time; off-CPU stacks\n"
		"                             end in [off-cpu] or [runqueue]\n"
		"\n"
		"targets (default: the whole system):\n"
		"  -p, --pid PID[,PID...]     processes (all their threads)\n"
		"  -t, --tid TID[,TID...]     threads\n"
		"  -a, --all                  every process on the system\n"
		"  -- command [args...]       run the command, following its children, until it\n"
		"                             exits (with -d it gets SIGTERM when time is up)\n"
		"\n"
		"options:\n"
		"  -d, --duration SECONDS     stop after SECONDS (decimals allowed); default: until\n"
		"                             Ctrl-C, or until the targets exit\n"
		"  -F, --frequency HZ         samples per second per CPU (default %d)\n"
		"  -U, --user-only            user stacks only\n"
		"  -K, --kernel-only          kernel stacks only (not with --unwind dwarf)\n"
		"  -I, --include-idle         count the idle task (excluded by default)\n"
		"  -o, --output FILE          write here ('-' or absent: standard output);\n"
		"                             files are replaced atomically, keeping their mode\n"
		"                             and owner (new ones: 0666 minus the umask);\n"
		"                             repeatable, one recording written in several\n"
		"                             formats, chosen by the name: .svg flame graph,\n"
		"                             .pb.gz or .pb pprof (gzipped profile.proto, for\n"
		"                             go tool pprof), .json speedscope, .scorch a\n"
		"                             capture (below), anything else folded stacks\n"
		"      --format FMT           folded, svg, pprof, speedscope or capture for a\n"
		"                             single -o (or standard output), whatever its name\n"
		"      --interval SECONDS     write every output every SECONDS (decimals\n"
		"                             allowed) to numbered files, cpu.svg ->\n"
		"                             cpu-0001.svg, cpu-0002.svg ...; each holds that\n"
		"                             interval only; the last, partial one included\n"
		"                             (not for captures)\n"
		"      --max-stacks N         distinct stacks kept in the kernel, preallocated at\n"
		"                             about 1.2 KiB each with its count (default:\n"
		"                             frequency x duration x CPUs within 4096..65536;\n"
		"                             32768 without -d); in scorch at most 262144\n"
		"                             named stacks, then [stack table full]\n"
		"\n"
		"off-CPU options (offcpu and wall modes):\n"
		"      --min-block USEC       ignore blocks shorter than USEC microseconds\n"
		"      --max-block USEC       ignore blocks longer than USEC microseconds\n"
		"      --state STATE          sleeps counted: interruptible, uninterruptible or\n"
		"                             both (default); runqueue waits are always counted\n"
		"      --user-threads-only    only user threads\n"
		"      --kernel-threads-only  only kernel threads\n"
		"  The idle task is never counted. Only intervals that begin during the\n"
		"  recording are counted; those still open at its end are closed then.\n"
		"\n"
		"unwinding (user stacks):\n"
		"      --unwind auto          dwarf in cpu mode, fp in offcpu and wall modes\n"
		"                             (default; -K: fp)\n"
		"      --unwind fp            frame pointers, walked in the kernel; code built\n"
		"                             without them (Debian's libc) loses its callers\n"
		"      --unwind dwarf         copy the user registers and the top of the stack\n"
		"                             per sample (off CPU: per switch-out) and unwind\n"
		"                             here with the files' .eh_frame CFI;\n"
		"                             frame pointers where a file has none (JIT code)\n"
		"      --stack-size BYTES     stack copied per sample with --unwind dwarf\n"
		"                             (default %d, 512..65528, a multiple of 8); deeper\n"
		"                             stacks end in [truncated]\n"
		"      --ring-size BYTES      ring buffer for the copies, per BPF program (a\n"
		"                             power of 2, 4096..1 GiB; default: 0.25 s of\n"
		"                             records, 1..64 MiB); a full ring loses samples\n"
		"\n"
		"names:\n"
		"      --lines                name frames 'func (file.c:123)' (DWARF line tables)\n"
		"      --no-demangle          keep C++/Rust/D symbols mangled\n"
		"      --params               keep C++/D parameter lists (dropped by default)\n"
		"      --no-inline            no DWARF inline frames (shown by default, suffixed _[i])\n"
		"\n"
		"      --timing               print how long start-up (load, attach, the wait\n"
		"                             for kallsyms, read beside the load) and each\n"
		"                             phase from the end of the recording to the output\n"
		"                             on disk (stop, last reads, drain and symbolize,\n"
		"                             render or sort and write) took\n"
		"  -q, --quiet                no summary on standard error (not with -v)\n"
		"  -v, --verbose              debug messages, including libbpf's\n"
		"  -h, --help                 this help\n"
		"\n"
		"A capture (-o FILE.scorch) keeps the counts with raw addresses, the mappings\n"
		"of the processes (with build-ids) and the kernel and JIT symbols they need;\n"
		"user frames are named later by 'scorch report FILE.scorch', here or on\n"
		"another machine that has the binaries (docs/capture-format.md).\n"
		"\n"
		"An output ending in .svg is an interactive flame graph; these options of\n"
		"'scorch flamegraph' (flamegraph.pl's) apply to it:\n",
		DEFAULT_FREQ, DEFAULT_STACK_SIZE);
	flamegraph__print_options_help(out);
	fprintf(out,
		"\n"
		"The summary on standard error counts samples taken and lost (and why), missed\n"
		"and truncated stacks, and frames that could not be symbolized; with --interval\n"
		"it covers the whole recording (all intervals).\n"
		"\n"
		"exit status: 0 success (also when stopped by Ctrl-C), 1 error, 2 usage error,\n"
		"3 output written but more than 5%% of samples were lost (with --interval: over\n"
		"the whole recording; the intervals' files are all written), 4 output written but\n"
		"the command given after -- exited non-zero or was killed by a signal (4 also\n"
		"when more than 5%% were lost)\n"
		"\n"
		"examples:\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.folded     # a PID for 10 s\n"
		"  sudo scorch record -p 1234,1240 -F 999 -o cpu.folded\n"
		"  sudo scorch record -a -d 5                         # whole system, to stdout\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.svg --title 'My app'\n"
		"  sudo scorch record -o cpu.folded -- ./myprog args  # a command and its children\n"
		"  sudo scorch record --mode offcpu -p 1234 -d 10 -o off.folded\n"
		"  sudo scorch record --mode wall -p 1234 -d 10 -o wall.folded\n"
		"  sudo scorch record --unwind dwarf -o cpu.folded -- ./prog  # no frame pointers\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.scorch     # name the frames later:\n"
		"  scorch report cpu.scorch -o cpu.svg\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.svg -o cpu.pb.gz -o cpu.json\n"
		"  go tool pprof -top cpu.pb.gz\n"
		"  sudo scorch record -p 1234 -d 60 --interval 5 -o cpu.svg  # cpu-0001.svg ...\n"

		"  sudo scorch record --mode offcpu --unwind dwarf -p 1234 -d 5 -o off.folded\n"
		"  sudo scorch record --unwind fp -a -d 5 -o cpu.folded  # no stack copies\n");
}

static int parse_id_list(const char *arg, const char *what, pid_t **ids, size_t *nr)
{
	char *copy = strdup(arg), *tok, *next;
	pid_t *tmp;
	long v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	/* strtok_r would skip empty fields: "1,,2" or "1," is refused, not read as "1,2" */
	for (tok = copy; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		if (parse__long(tok, 1, INT_MAX, &v)) {
			if (*tok)
				pr_err("invalid %s '%s' in '%s'\n", what, tok, arg);
			else
				pr_err("empty %s in '%s'\n", what, arg);
			pr_hint("give positive numbers separated by commas, e.g. 1234,1240\n");
			err = -EINVAL;
			goto cleanup;
		}
		if (*nr >= MAX_TARGETS) {
			pr_err("too many %ss (at most %d)\n", what, MAX_TARGETS);
			err = -E2BIG;
			goto cleanup;
		}
		tmp = realloc(*ids, (*nr + 1) * sizeof(**ids));
		if (!tmp) {
			err = -ENOMEM;
			goto cleanup;
		}
		*ids = tmp;
		(*ids)[(*nr)++] = v;
	}
cleanup:
	free(copy);
	return err;
}

enum {
	OPT_MAX_STACKS = 256,
	OPT_MODE,
	OPT_MIN_BLOCK,
	OPT_MAX_BLOCK,
	OPT_STATE,
	OPT_USER_THREADS,
	OPT_KERNEL_THREADS,
	OPT_LINES,
	OPT_NO_DEMANGLE,
	OPT_PARAMS,
	OPT_NO_INLINE,
	OPT_UNWIND,
	OPT_STACK_SIZE,
	OPT_FORMAT,
	OPT_TIMING,
	OPT_INTERVAL,
	OPT_RING_SIZE,
};

/*
 * --unwind auto (the default), chosen from bench/unwind-bench.sh and
 * bench/offcpu-bench.sh (docs/BENCHMARKS.md, "Other figures"): in cpu mode the
 * copy costs a bounded F x CPUs records per second and recovers the callers that
 * Debian's libc (no frame pointers) hides, so dwarf; off CPU a copy is taken per
 * context switch, a cost that grows with the switch rate without bound (a pipe
 * ping-pong makes 10^5 switches a second), so frame pointers unless asked. With
 * -K there is no user stack to unwind; x86_64 is the only dwarf target.
 */
static enum unwind_mode resolve_unwind(const struct record_opts *o)
{
	if (o->unwind != UNWIND_AUTO)
		return o->unwind;
#if defined(__x86_64__)
	if (o->mode == MODE_CPU && !o->kernel_only)
		return UNWIND_DWARF;
#endif
	return UNWIND_FP;
}

static int parse_args(int argc, char **argv, struct record_opts *o, bool *help)
{
	static const struct option own_opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "all", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "user-only", no_argument, NULL, 'U' },
		{ "kernel-only", no_argument, NULL, 'K' },
		{ "include-idle", no_argument, NULL, 'I' },
		{ "output", required_argument, NULL, 'o' },
		{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
		{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "user-threads-only", no_argument, NULL, OPT_USER_THREADS },
		{ "kernel-threads-only", no_argument, NULL, OPT_KERNEL_THREADS },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "params", no_argument, NULL, OPT_PARAMS },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "timing", no_argument, NULL, OPT_TIMING },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "ring-size", required_argument, NULL, OPT_RING_SIZE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option *long_opts;
	bool off_opts = false, fg_opts = false, stack_opt = false;
	const char *format = NULL, *paths[MAX_OUTPUTS];
	size_t nr_paths = 0, i;
	int c, err = -EINVAL;

	/* the flame graph options work on record -o x.svg too */
	long_opts = flamegraph_long_options__with(own_opts, ARRAY_SIZE(own_opts));
	if (!long_opts)
		return -ENOMEM;
	flamegraph_opts__init(&o->fg);

	o->freq = DEFAULT_FREQ;
	o->stack_size = DEFAULT_STACK_SIZE;
	o->max_block_us = UINT64_MAX / 1000;
	o->state_mask = 3;
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, which starts the command to run */
	while ((c = getopt_long(argc, argv, "+:p:t:ad:F:UKIo:qvh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_id_list(optarg, "PID", &o->pids, &o->nr_pids))
				goto cleanup;
			break;
		case 't':
			if (parse_id_list(optarg, "TID", &o->tids, &o->nr_tids))
				goto cleanup;
			break;
		case 'a':
			o->all = true;
			break;
		case 'd':
			if (parse__double(optarg, 0.001, 1e7, &o->duration)) {
				pr_err("invalid duration '%s'\n", optarg);
				pr_hint("give seconds between 0.001 and 10000000, e.g. -d 10 or -d 2.5\n");
				goto cleanup;
			}
			break;
		case 'F':
			if (parse__long(optarg, 1, 1000000, &o->freq)) {
				pr_err("invalid frequency '%s'\n", optarg);
				pr_hint("give samples per second as a whole number, e.g. -F 99\n");
				goto cleanup;
			}
			break;
		case 'U':
			o->user_only = true;
			break;
		case 'K':
			o->kernel_only = true;
			break;
		case 'I':
			o->include_idle = true;
			break;
		case 'o':
			if (nr_paths == MAX_OUTPUTS) {
				pr_err("more than %d outputs (-o)\n", MAX_OUTPUTS);
				goto cleanup;
			}
			paths[nr_paths++] = optarg;
			break;
		case OPT_INTERVAL:
			if (parse__double(optarg, 0.01, 1e7, &o->interval)) {
				pr_err("invalid --interval '%s'\n", optarg);
				pr_hint("give seconds between 0.01 and 10000000, e.g. --interval 5\n");
				goto cleanup;
			}
			break;
		case OPT_MAX_STACKS:
			if (parse__long(optarg, 64, 1 << 24, &o->max_stacks)) {
				pr_err("invalid --max-stacks '%s' (64 to 16777216)\n", optarg);
				goto cleanup;
			}
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "cpu")) {
				o->mode = MODE_CPU;
			} else if (!strcmp(optarg, "offcpu")) {
				o->mode = MODE_OFFCPU;
			} else if (!strcmp(optarg, "wall")) {
				o->mode = MODE_WALL;
			} else {
				pr_err("invalid mode '%s'\n", optarg);
				pr_hint("use --mode cpu, --mode offcpu or --mode wall\n");
				goto cleanup;
			}
			break;
		case OPT_MIN_BLOCK:
		case OPT_MAX_BLOCK:
			off_opts = true;
			if (parse__u64(optarg, 10, c == OPT_MIN_BLOCK ? &o->min_block_us
								      : &o->max_block_us) ||
			    (c == OPT_MIN_BLOCK ? o->min_block_us : o->max_block_us) >
				    UINT64_MAX / 1000) {
				pr_err("invalid %s '%s'\n", argv[optind - 1], optarg);
				pr_hint("give microseconds as a whole number, e.g. 1000\n");
				goto cleanup;
			}
			break;
		case OPT_STATE:
			off_opts = true;
			if (!strcmp(optarg, "interruptible")) {
				o->state_mask = 1;
			} else if (!strcmp(optarg, "uninterruptible")) {
				o->state_mask = 2;
			} else if (!strcmp(optarg, "both")) {
				o->state_mask = 3;
			} else {
				pr_err("invalid state '%s'\n", optarg);
				pr_hint("use interruptible, uninterruptible or both\n");
				goto cleanup;
			}
			break;
		case OPT_USER_THREADS:
			off_opts = true;
			o->user_threads_only = true;
			break;
		case OPT_KERNEL_THREADS:
			off_opts = true;
			o->kernel_threads_only = true;
			break;
		case OPT_LINES:
			o->lines = true;
			break;
		case OPT_NO_DEMANGLE:
			o->no_demangle = true;
			break;
		case OPT_PARAMS:
			o->keep_params = true;
			break;
		case OPT_NO_INLINE:
			o->no_inline = true;
			break;
		case OPT_UNWIND:
			if (!strcmp(optarg, "fp")) {
				o->unwind = UNWIND_FP;
			} else if (!strcmp(optarg, "dwarf")) {
				o->unwind = UNWIND_DWARF;
			} else if (!strcmp(optarg, "auto")) {
				o->unwind = UNWIND_AUTO;
			} else {
				pr_err("invalid --unwind '%s'\n", optarg);
				pr_hint("use --unwind auto, --unwind fp or --unwind dwarf\n");
				goto cleanup;
			}
			break;
		case OPT_STACK_SIZE:
			if (parse__long(optarg, 512, SCORCH_MAX_STACK_COPY - 8, &o->stack_size) ||
			    o->stack_size % 8) {
				pr_err("invalid --stack-size '%s'\n", optarg);
				pr_hint("give bytes, a multiple of 8 from 512 to %d, e.g. 16384\n",
					SCORCH_MAX_STACK_COPY - 8);
				goto cleanup;
			}
			stack_opt = true;
			break;
		case OPT_FORMAT:
			format = optarg; /* checked below */
			break;
		case OPT_TIMING:
			o->timing = true;
			break;
		case OPT_RING_SIZE:
			if (parse__long(optarg, 4096, 1L << 30, &o->ring_size) ||
			    (o->ring_size & (o->ring_size - 1))) {
				pr_err("invalid --ring-size '%s'\n", optarg);
				pr_hint("give bytes, a power of 2 from 4096 to 1073741824, e.g. 8388608\n");
				goto cleanup;
			}
			stack_opt = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			*help = true;
			err = 0;
			goto cleanup;
		case ':':
			pr_err("option '%s' needs a value\n", argv[optind - 1]);
			pr_hint("run 'scorch record --help'\n");
			goto cleanup;
		default:
			err = flamegraph_opts__set_getopt(&o->fg, c, optarg);
			if (!err) {
				fg_opts = true;
				break;
			}
			if (err == -ENOENT) {
				pr_err("unknown option '%s'\n", argv[optind - 1]);
				pr_hint("run 'scorch record --help'\n");
			}
			err = -EINVAL;
			goto cleanup;
		}
	}
	/* a flame graph option set err to 0: every check below must fail with -EINVAL */
	err = -EINVAL;
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->user_only && o->kernel_only) {
		pr_err("-U/--user-only and -K/--kernel-only exclude each other\n");
		goto cleanup;
	}
	if (o->quiet && o->verbose) {
		pr_err("-q/--quiet and -v/--verbose exclude each other\n");
		pr_hint("-q drops the summary, -v adds debug messages: choose one\n");
		goto cleanup;
	}
	if (o->kernel_only && o->unwind == UNWIND_DWARF) {
		pr_err("-K/--kernel-only records no user stack for --unwind dwarf to unwind\n");
		pr_hint("drop --unwind dwarf (kernel stacks are walked in the kernel), or drop -K\n");
		goto cleanup;
	}
	if (o->all && (o->nr_pids || o->nr_tids || o->cmd)) {
		pr_err("-a/--all cannot be combined with -p, -t or a command\n");
		goto cleanup;
	}
	if (o->cmd && (o->nr_pids || o->nr_tids)) {
		pr_err("a command cannot be combined with -p or -t\n");
		pr_hint("profile the command alone, or its PID with -p once it runs\n");
		goto cleanup;
	}
	if (off_opts && o->mode == MODE_CPU) {
		pr_err("off-CPU options need --mode offcpu or --mode wall\n");
		goto cleanup;
	}
	if (o->unwind == UNWIND_AUTO && stack_opt && o->mode != MODE_CPU) {
		pr_err("--stack-size and --ring-size need --unwind dwarf off CPU\n");
		pr_hint("--unwind auto walks frame pointers in offcpu and wall modes; add --unwind dwarf\n");
		goto cleanup;
	}
	o->unwind = resolve_unwind(o);
	if (stack_opt && o->unwind != UNWIND_DWARF) {
		pr_err("--stack-size and --ring-size need --unwind dwarf\n");
		goto cleanup;
	}
	if (o->min_block_us > o->max_block_us) {
		pr_err("--min-block %" PRIu64 " is above --max-block %" PRIu64 "\n",
		       o->min_block_us, o->max_block_us);
		goto cleanup;
	}
	if (o->user_threads_only && o->kernel_threads_only) {
		pr_err("--user-threads-only and --kernel-threads-only exclude each other\n");
		goto cleanup;
	}
	if (o->include_idle && o->mode != MODE_CPU) {
		pr_err("-I/--include-idle: the idle task is never counted off CPU\n");
		goto cleanup;
	}
	if (o->include_idle && (o->nr_pids || o->nr_tids || o->cmd)) {
		pr_err("-I/--include-idle only makes sense for a system-wide recording\n");
		goto cleanup;
	}
	if (!o->nr_pids && !o->nr_tids && !o->cmd)
		o->all = true;
	/* outputs: a capture (-o FILE.scorch, --format capture) is written from the raw
	 * counts; every other format goes through the output table (output.c) */
	o->outs = outputs__new();
	if (!o->outs) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (format && nr_paths > 1) {
		pr_err("--format applies to one output; %zu are given\n", nr_paths);
		pr_hint("name each -o FILE with its extension (.svg, .folded, .pb.gz, .json, "
			".scorch)\n");
		goto cleanup;
	}
	for (i = 0; i < nr_paths; i++) {
		size_t n = strlen(paths[i]);
		bool cap = format ? !strcmp(format, "capture")
				  : n > 7 && !strcasecmp(paths[i] + n - 7, ".scorch");

		if (cap && o->capture_path) {
			pr_err("one capture per recording: -o %s and -o %s\n", o->capture_path,
			       paths[i]);
			goto cleanup;
		}
		if (cap)
			o->capture_path = paths[i];
		else if (outputs__add(o->outs, paths[i]))
			goto cleanup;
	}
	if (format && !strcmp(format, "capture") && !nr_paths)
		o->capture_path = "-";
	if (format && strcmp(format, "capture") && outputs__set_format(o->outs, format))
		goto cleanup;
	o->capture = o->capture_path != NULL;
	o->named = !o->capture || outputs__count(o->outs, NULL) > 0;
	o->svg = outputs__count(o->outs, "svg") > 0;
	if (o->capture && !strcmp(o->capture_path, "-") && isatty(STDOUT_FILENO)) {
		pr_err("a capture is binary: not written to a terminal\n");
		pr_hint("give a file, e.g. -o profile.scorch\n");
		goto cleanup;
	}
	if (o->capture && o->named && outputs__to_stdout(o->outs) &&
	    !strcmp(o->capture_path, "-")) {
		pr_err("the capture and another output cannot both go to standard output\n");
		goto cleanup;
	}
	if (fg_opts && !o->svg) {
		pr_err("flame graph options need an SVG output (-o FILE.svg)\n");
		goto cleanup;
	}
	if (o->interval && o->capture) {
		pr_err("--interval writes numbered outputs; a capture holds the whole recording\n");
		pr_hint("record the capture without --interval, or the intervals without -o "
			"FILE.scorch\n");
		goto cleanup;
	}
	if (o->interval && (!outputs__count(o->outs, NULL) || outputs__to_stdout(o->outs))) {
		pr_err("--interval writes numbered files: it needs -o FILE, not standard output\n");
		pr_hint("e.g. --interval 5 -o cpu.svg writes cpu-0001.svg, cpu-0002.svg ...\n");
		goto cleanup;
	}
	err = 0;
cleanup:
	free(long_opts);
	return err;
}

/*
 * A zombie has exited: no thread is left to sample, so it is refused. A kernel thread
 * has no user stack: its kernel stacks are sampled while it runs (most sleep, so 0
 * samples is likely), which a note says; with -U nothing could be recorded.
 */
static int check_target(const struct record_opts *o, pid_t pid)
{
	struct proc_stat st;

	if (proc__read_stat(pid, &st))
		return 0; /* gone or unreadable: the attach reports it */
	if (st.state == 'Z' || st.state == 'X') {
		pr_err("process %d has exited (a zombie): it has no threads to sample\n", pid);
		pr_hint("profile a live process; its parent ('ps -o ppid= -p %d') has not reaped it\n",
			pid);
		return -ESRCH;
	}
	if (!(st.flags & PROC_PF_KTHREAD))
		return 0;
	if (o->user_only) {
		pr_err("process %d is a kernel thread: it has no user stack for -U/--user-only\n",
		       pid);
		pr_hint("drop -U to sample its kernel stacks\n");
		return -EINVAL;
	}
	pr_warn("process %d is a kernel thread: only its kernel stacks are sampled, while it "
		"runs on a CPU\n",
		pid);
	pr_hint("an idle kernel thread gives no samples; --mode offcpu shows where it waits\n");
	return 0;
}

/* The host probes of probe.c decide; the refusal is the probe's detail and hint. */
static int preflight(struct record *r)
{
	const struct record_opts *o = &r->opts;
	enum probe_id ids[8] = { PROBE_CAPS, PROBE_BTF, PROBE_MAP_RINGBUF };
	uint32_t need = PROBE_NEED_RECORD;
	struct probe_result pr;
	long max_rate;
	size_t i, nr_ids = 3;
	int err;

	if (o->mode != MODE_CPU) {
		need |= PROBE_NEED_OFFCPU;
		ids[nr_ids++] = PROBE_TP_SWITCH;
	}
	if (o->unwind == UNWIND_DWARF) {
		need |= PROBE_NEED_DWARF;
		ids[nr_ids++] = PROBE_HELPER_READ_USER;
		ids[nr_ids++] = PROBE_HELPER_PT_REGS;
		ids[nr_ids++] = PROBE_HELPER_TASK_BTF;
	}
	err = probe__require(need, ids, nr_ids, &pr);
	if (err)
		return err;
	for (i = 0; i < o->nr_pids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			pr_err("no such process: %d\n", o->pids[i]);
			pr_hint("check the PID with 'ps -p %d'\n", o->pids[i]);
			return -ESRCH;
		}
		err = check_target(o, o->pids[i]);
		if (err)
			return err;
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (kill(o->tids[i], 0) && errno == ESRCH) {
			pr_err("no such thread: %d\n", o->tids[i]);
			pr_hint("list a process's threads with 'ps -T -p PID'\n");
			return -ESRCH;
		}
	}
	probe__run(PROBE_MAX_RATE, &pr);
	max_rate = pr.value >= 0 ? pr.value : 100000;
	if (o->mode != MODE_OFFCPU && o->freq > max_rate) {
		pr_err("-F %ld is above kernel.perf_event_max_sample_rate (%ld)\n", o->freq,
		       max_rate);
		pr_hint("lower -F, or raise it: sysctl kernel.perf_event_max_sample_rate=%ld\n",
			o->freq);
		return -EINVAL;
	}
	probe__run(PROBE_MAX_STACK, &pr);
	r->max_depth = MIN(pr.value >= 0 ? pr.value : 127, SCORCH_MAX_STACK_DEPTH);
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!log__enabled(LOG_DEBUG))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Entries of the stack and count maps (both preallocated): at most one new stack
 * per sample is assumed, within [4096, 65536] (about 4.5 to 72 MiB of kernel
 * memory); without a duration, 32768.
 */
static uint32_t map_entries(const struct record *r, int nr_cpus)
{
	const struct record_opts *o = &r->opts;
	double n;

	if (o->max_stacks)
		return o->max_stacks;
	if (!o->duration)
		return 32768;
	n = (double)o->freq * o->duration * nr_cpus + 1024;
	return n < 4096 ? 4096 : n > 65536 ? 65536 : (uint32_t)n;
}

static void on_interval(struct record *r, const struct scorch_interval *iv);

static size_t sideband_ring_bytes(void)
{
	long nr = sysconf(_SC_NPROCESSORS_ONLN);
	size_t bytes = SIDEBAND_RING_MAX;

	while (nr > 0 && bytes > SIDEBAND_RING_MIN && bytes * (size_t)nr > SIDEBAND_RING_TOTAL)
		bytes /= 2;
	return bytes;
}

/*
 * The mappings of the image @p, the one its PID ran at @p->ts, from the kernel's mmap
 * records read so far (not given again when none was added since @p->sb_version):
 * 0, -ENOENT (not known completely: read /proc), -ENOMEM.
 */
static int sideband_snapshot(struct record *r, struct proc_entry *p)
{
	const struct symbolizer_vma *v;
	uint32_t version;
	size_t n;
	int err;

	if (!r->sb)
		return -ENOENT;
	err = sideband__drain(r->sb);
	if (!err)
		err = sideband__image(r->sb, p->pid, p->ts, &v, &n, &version);
	if (err || version == p->sb_version)
		return err;
	err = symbolizer__snapshot_vmas(r->sym, p->pid, p->gen, v, n);
	if (!err)
		p->sb_version = version;
	return err;
}

/*
 * The executable mappings of a live process changed after its snapshot (dlopen, JIT
 * code, a jitdump mapped): read its maps again, reusing the files already parsed, and
 * look for a new jitdump. A process gone meanwhile keeps its snapshot.
 */
static void maps_changed(struct record *r, struct proc_entry *p)
{
	int err = -ENOENT;

	if (p->flags & PROC_SIDEBAND)
		err = sideband_snapshot(r, p);
	if (err && err != -ENOMEM)
		err = symbolizer__snapshot_gen(r->sym, p->pid, p->gen);
	if (err == -ENOMEM) {
		r->err = err;
		return;
	}
	if (err && err != -ESRCH)
		pr_debug("cannot read the mappings of %u again: %s\n", p->pid, strerror(-err));
	/* new libraries only (ld.so mapping libc after the first sample): no JIT file yet */
	if (!err && !symbolizer__jit_hints(r->sym, p->pid, p->gen))
		return;
	err = perfmaps__maps_changed(r->pm, p->pid);
	if (err == -ENOMEM)
		r->err = err;
}

static void on_event(void *ctx, const struct scorch_event *e)
{
	struct record *r = ctx;
	struct proc_entry *p;
	int err;

	if (e->type == SCORCH_EVENT_INTERVAL) {
		on_interval(r, (const struct scorch_interval *)e);
		return;
	}
	if (e->type == SCORCH_EVENT_EXIT || e->type == SCORCH_EVENT_REPLACED) {
		p = proctab__find(r->procs, e->pid, e->gen);
		if (p && !(p->flags & (PROC_EXITED | PROC_RELEASED))) {
			/* what it mapped since the last notice (no read while it lived) */
			if ((p->flags & PROC_SIDEBAND) && sideband_snapshot(r, p) == -ENOMEM) {
				r->err = -ENOMEM;
				return;
			}
			p->flags |= PROC_EXITED;
			/* images replaced by exec wait for the periodic reap: they must not
			 * double the reaps of fork+exec loads (each reap reads every count) */
			if (e->type == SCORCH_EVENT_EXIT) {
				r->pending_exits++;
			} else {
				p->flags |= PROC_REPLACED;
				r->pending_replaced++;
			}
			/* its last JIT entries, through the descriptors kept open */
			perfmaps__refresh(r->pm, e->pid);
		}
		return;
	}
	if (e->type == SCORCH_EVENT_MAPS) {
		p = proctab__find(r->procs, e->pid, e->gen);
		if (p && (p->flags & PROC_SNAPPED) && !(p->flags & (PROC_EXITED | PROC_RELEASED))) {
			maps_changed(r, p);
			return;
		}
		/* not known: its SCORCH_EVENT_NEW was lost; read it as new */
	} else if (e->type != SCORCH_EVENT_NEW) {
		return;
	}
	p = proctab__get(r->procs, e->pid, e->gen);
	if (!p) {
		r->err = -ENOMEM;
		return;
	}
	if (p->flags & (PROC_SNAPPED | PROC_MISSING))
		return; /* announced by both programs (wall mode) */
	r->procs_seen++;
	/* a child that has not exec'd since its fork has its parent's mappings: copied
	 * (0.1 us; no /proc read: its maps may show the next image already); else an image
	 * begun during the recording is known from the kernel's mmap records (sideband.c);
	 * else read the maps while the process is alive: after exit or exec they are gone */
	err = -ENOENT;
	if (e->type == SCORCH_EVENT_NEW && e->ppid)
		err = symbolizer__snapshot_copy(r->sym, e->pid, e->gen, e->ppid, e->pgen);
	if (err && err != -ENOMEM) {
		p->ts = e->ts;
		err = sideband_snapshot(r, p);
		if (!err) {
			p->flags |= PROC_SIDEBAND;
			r->procs_sideband++;
		}
	}
	if (err == -ENOMEM) {
		r->err = err;
		return;
	}
	if (err) {
		err = symbolizer__snapshot_gen(r->sym, e->pid, e->gen);
		if (!err)
			r->procs_read++;
	}
	/* a runtime's perf map or jitdump: found now, read as it grows; looked for later
	 * (sweeps, new executable mappings) when nothing mapped needs one, as for most
	 * processes: a look (ns stat, open under /proc/PID/root, a second maps read) was
	 * about 17 of the ~150 us a short-lived process cost (bench/proc-cost.sh) */
	if (err || symbolizer__jit_hints(r->sym, e->pid, e->gen))
		perfmaps__track(r->pm, e->pid);
	else if (perfmaps__track_later(r->pm, e->pid) == -ENOMEM)
		r->err = -ENOMEM;
	if (!err) {
		p->flags |= PROC_SNAPPED;
		r->procs_held++;
		r->procs_held_max = MAX(r->procs_held, r->procs_held_max);
		return;
	}
	p->flags |= PROC_MISSING;
	if (err != -ESRCH)
		pr_debug("cannot snapshot the mappings of %u: %s\n", e->pid, strerror(-err));
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool targets_gone(struct record *r, struct pollfd *pfds, int first, int nfds)
{
	const struct record_opts *o = &r->opts;
	size_t i, alive = 0;

	for (i = 0; i < o->nr_pids; i++) {
		if (!r->gone[i]) {
			if (r->pidfds[i] >= 0) {
				int k = first + (int)i;

				if (k < nfds && (pfds[k].revents & (POLLIN | POLLHUP)))
					r->gone[i] = true;
			} else if (kill(o->pids[i], 0) && errno == ESRCH) {
				r->gone[i] = true;
			}
		}
		alive += !r->gone[i];
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (!r->gone[o->nr_pids + i] && kill(o->tids[i], 0) && errno == ESRCH)
			r->gone[o->nr_pids + i] = true;
		alive += !r->gone[o->nr_pids + i];
	}
	return (o->nr_pids || o->nr_tids) && !alive;
}

static int add_stack(void *ctx, bool offcpu, const struct count_key *key, uint64_t value,
		     const struct stack_trace *user, const struct stack_trace *kernel);
static int write_interval(struct record *r);

/* ---- --unwind dwarf ---- */

static int unw_find(void *ctx, pid_t pid, uint64_t gen, uint64_t addr, struct unwind_map *out)
{
	struct symbolizer_mapping m;
	int err = symbolizer__mapping_gen(ctx, pid, gen, addr, &m);

	if (err)
		return err;
	*out = (struct unwind_map){
		.kind = m.kind == SYMBOLIZER_MAP_FILE	? UNWIND_MAP_FILE
			: m.kind == SYMBOLIZER_MAP_VDSO ? UNWIND_MAP_VDSO
							: UNWIND_MAP_OTHER,
		.start = m.start,
		.end = m.end,
		.bias = m.bias,
		.file = m.file,
		.path = m.path,
	};
	return 0;
}

static int unw_open(void *ctx, pid_t pid, uint64_t gen, uint64_t addr)
{
	return symbolizer__open_mapping_gen(ctx, pid, gen, addr);
}

static bool unw_in_use(void *ctx, const void *file)
{
	return symbolizer__file_in_use(ctx, file);
}

static const struct unwind_maps_ops unw_ops = {
	.find = unw_find,
	.open = unw_open,
	.in_use = unw_in_use,
};

#define TOP_FORGETS_MAX 4 /* a thread's tops forgotten this often: none learned any more */

/*
 * After a walk of @smp: a complete walk of a copy that went to the end of the stack tells
 * how much of the thread's stack its walks need; the kernel copies only that from then
 * on. A copy so bounded that proved too short (the walk needed more) makes it forget; a
 * complete walk of one that needed less lowers it (the first walk of a program's main
 * thread is often in the dynamic loader at exec, whose frames reach the very end of the
 * stack: the kernel would copy up to there for good).
 */
static void learn_stack_top(struct record *r, const struct scorch_sample *smp, enum unwind_end end)
{
	typeof(r->tops[0]) *t = &r->tops[smp->tid % ARRAY_SIZE(r->tops)];
	bool same = t->tid == smp->tid && t->key == smp->thread_key;
	uint64_t top = unwinder__stack_used(r->unw);
	uint32_t forgets = same ? t->forgets : 0;

	if ((smp->flags & SAMPLE_STACK_TOP) && end == UNWIND_END_OUTERMOST) {
		/* complete, and it needed less than the known top: that is the top now */
		if (!same || top <= smp->sp || top >= t->top || forgets >= TOP_FORGETS_MAX)
			return;
		r->tops_set++;
	} else if (smp->flags & SAMPLE_STACK_TOP) {
		if (end != UNWIND_END_TRUNCATED)
			return;
		r->tops_cut++;
		/* a copy so bounded ends at the top: one from before the top now known is
		 * stale (in flight when it changed), and a forgotten top is not forgotten again */
		if (same && t->top != smp->sp + smp->stack_len)
			return;
		top = 0;
		forgets++;
		r->tops_forgotten++;
	} else if (end != UNWIND_END_OUTERMOST || top <= smp->sp) {
		return;
	} else if (same && forgets >= TOP_FORGETS_MAX) {
		/* its tops keep proving too low (a thread that runs many stacks, as goroutines
		 * or coroutines do): its copies go to the stack end */
		return;
	} else if (same && t->top == top && ++t->unbounded < 64) {
		/* set already: this copy was in flight, or (after 64 of them) the kernel's
		 * map evicted the entry, and it is set again */
		return;
	} else {
		r->tops_set++;
	}
	if (sampler__set_stack_top(r->sampler, smp->tid, smp->thread_key, top))
		return; /* the map is full of live threads: copies go to the stack end */
	t->tid = smp->tid;
	t->key = smp->thread_key;
	t->top = top;
	t->unbounded = 0;
	t->forgets = forgets;
}

/*
 * One sample record: the user stack is unwound now (the files it needs are open or
 * openable while the process lives), then counted like a drained key. An off-CPU
 * copy (taken at switch-out) waits in r->copies for its interval's length.
 */
static void on_sample(void *ctx, const struct scorch_sample *smp, size_t len)
{
	struct record *r = ctx;
	struct count_key key = { .pid = smp->pid, .gen = smp->gen, .flags = smp->flags };
	/* the record: header, kernel addresses, stack (checked by the sampler) */
	const __u64 *kips = (const __u64 *)(smp + 1);
	struct unwind_sample us = {
		.pid = smp->pid,
		.gen = smp->gen,
		.ip = smp->ip,
		.sp = smp->sp,
		.bp = smp->bp,
		.stack = kips + smp->kernel_nr,
		.stack_len = smp->stack_len,
	};
	struct proc_entry *p = proctab__find(r->procs, smp->pid, smp->gen);
	struct stack_trace *user = NULL;
	enum unwind_end end;
	bool replaced;
	int n, err;

	if (r->err)
		return;
	memcpy(key.comm, smp->comm, sizeof(key.comm));
	key.flags &= ~(KEY_OFFCPU_COPY | SAMPLE_STACK_TOP);
	if (!(key.flags & KEY_USER_MISSED)) {
		user = r->ubuf;
		if (p && (p->flags & (PROC_MISSING | PROC_RELEASED))) {
			/* its files cannot be read: the leaf alone, named [unknown] */
			r->unwind_skipped++;
			user->ips[0] = smp->ip;
			n = 1;
		} else {
			n = unwinder__unwind(r->unw, &us, r->uips, r->max_depth, &end);
			if (n < 0) {
				r->err = n;
				return;
			}
			for (int i = 0; i < n; i++)
				user->ips[i] = r->uips[i];
			if (end == UNWIND_END_TRUNCATED)
				key.flags |= KEY_USER_TRUNCATED;
			learn_stack_top(r, smp, end);
		}
		user->nr = n;
		if (!n) {
			key.flags |= KEY_USER_MISSED;
			user = NULL;
		}
	}
	if (smp->type == SCORCH_EVENT_OFFCPU_COPY) {
		err = copytab__put(r->copies, smp->tid, smp->value, &key, user ? user->ips : NULL,
				   user ? user->nr : 0, kips, smp->kernel_nr, &replaced);
		if (replaced)
			r->copies_orphan++;
		if (err)
			r->err = err;
		return;
	}
	r->kbuf->nr = smp->kernel_nr;
	memcpy(r->kbuf->ips, kips, smp->kernel_nr * sizeof(kips[0]));
	/* named when its process is reaped or the recording ends, once per distinct stack */
	err = ustacks__add(r->ustacks, false, &key, smp->value, user,
			   smp->kernel_nr ? r->kbuf : NULL);
	/* bounded: named now, merged with their names into the folded set */
	if (!err && ustacks__full(r->ustacks)) {
		pr_debug("unwind dwarf: %zu distinct stacks held: named now\n",
			 ustacks__nr(r->ustacks));
		err = ustacks__take(r->ustacks, NULL, add_stack, r, r->ubuf, r->kbuf);
	}
	if (err)
		r->err = err;
}

/* Counts a pending copy's stacks for @ns nanoseconds off CPU and frees it. */
static int count_copy(struct record *r, struct pending_copy *c, uint64_t ns)
{
	int err;

	r->ubuf->nr = c->user_nr;
	memcpy(r->ubuf->ips, c->ips, c->user_nr * sizeof(c->ips[0]));
	r->kbuf->nr = c->kernel_nr;
	memcpy(r->kbuf->ips, c->ips + c->user_nr, c->kernel_nr * sizeof(c->ips[0]));
	err = add_stack(r, true, &c->key, ns, c->user_nr ? r->ubuf : NULL,
			c->kernel_nr ? r->kbuf : NULL);
	free(c);
	return err;
}

/* The end of an off-CPU interval whose stacks were copied: join them. */
static void on_interval(struct record *r, const struct scorch_interval *iv)
{
	struct pending_copy *c = copytab__take(r->copies, iv->tid, iv->ts);
	int err;

	if (!c) {
		r->intervals_orphan++;
		return;
	}
	if (iv->flags & INTERVAL_DROPPED) {
		r->copies_dropped++;
		free(c);
		return;
	}
	r->copies_joined++;
	err = count_copy(r, c, iv->value);
	if (err && !r->err)
		r->err = err;
}

/* At the end: copies whose thread is still off CPU are closed now; others were lost. */
static int close_copies(struct record *r)
{
	struct pending_copy *c;
	uint64_t delta;
	int err = 0, e;

	while ((c = copytab__pop(r->copies))) {
		e = err ? -ENOENT : sampler__open_interval(r->sampler, c->tid, c->ts, &delta);
		if (!e) {
			r->copies_open++;
			err = count_copy(r, c, delta);
			continue;
		}
		if (e == -ERANGE)
			r->copies_dropped++;
		else if (e == -ENOENT)
			r->copies_orphan++;
		else
			err = e;
		free(c);
	}
	return err;
}

/*
 * Ring buffer for sample records (one per BPF program): about 0.25 s of records on
 * every CPU, 1..64 MiB; off CPU, 1,000 switch-outs per second and CPU are assumed.
 * --ring-size overrides.
 */
static uint32_t ring_size(const struct record_opts *o, int nr_cpus)
{
	double rate = o->mode == MODE_CPU ? o->freq : MAX(o->freq, 1000);
	double want = rate * nr_cpus *
		      (sizeof(struct scorch_sample) + SCORCH_MAX_STACK_DEPTH * 8 + o->stack_size) / 4;
	uint32_t sz = 1u << 20;

	if (o->ring_size)
		return o->ring_size;

	while (sz < want && sz < (64u << 20))
		sz <<= 1;
	return sz;
}

static bool is_exited(void *ctx, const struct count_key *key)
{
	struct record *r = ctx;
	struct proc_entry *p = proctab__find(r->procs, key->pid, key->gen);

	return p && (p->flags & PROC_EXITED) && !(p->flags & PROC_RELEASED);
}

/* What waits for a reap, now. 0 or -ENOMEM. */
static int reap_mark__read(struct record *r, struct reap_mark *m)
{
	struct unwind_stats us = {};

	if (r->unw)
		unwinder__stats(r->unw, &us);
	m->table_bytes = us.table_bytes;
	m->ukeys = r->ustacks ? ustacks__nr(r->ustacks) : 0;
	return sampler__stat(r->sampler, STAT_COUNT_KEYS, &m->keys);
}

/* Counts what is added from now on (after a reap, or an interval's drain). */
static int reap_mark__reset(struct record *r)
{
	return reap_mark__read(r, &r->mark);
}

/*
 * Processes that exited: their counts are taken out of the kernel maps and
 * symbolized now, then their mappings are released, so memory follows the
 * processes alive, not every process the recording has seen.
 */
static int reap_exited(struct record *r)
{
	struct proc_entry *p = NULL;
	size_t nr = 0, nr_stacks = 0;
	int err;

	err = sampler__reap(r->sampler, is_exited, true, add_stack, r, &r->drain_lost,
			    &r->drain_lost_ns, &nr, &nr_stacks);
	if (err) {
		pr_err("cannot read the stacks of exited processes: %s\n", strerror(-err));
		return err;
	}
	r->reaped_counts += nr;
	r->reaped_stacks += nr_stacks;
	if (r->ustacks) {
		err = ustacks__take(r->ustacks, is_exited, add_stack, r, r->ubuf, r->kbuf);
		if (err)
			return err;
	}
	while ((p = proctab__next(r->procs, p))) {
		if (!(p->flags & PROC_EXITED) || (p->flags & PROC_RELEASED))
			continue;
		if (r->cap) {
			err = capture_rec__release(r->cap, p->pid, p->gen);
			if (err)
				return err;
		}
		symbolizer__forget_gen(r->sym, p->pid, p->gen);
		unwinder__forget(r->unw, p->pid, p->gen);
		/* JIT maps are per PID: after an exec the new image may be tracking it */
		if (!(p->flags & PROC_REPLACED))
			perfmaps__forget(r->pm, p->pid);
		if (p->flags & PROC_SNAPPED)
			r->procs_held--;
		p->flags |= PROC_RELEASED;
		r->procs_released++;
	}
	/* unwind tables: like the symbolizer's files, 16 released ones stay loaded */
	unwinder__trim(r->unw, 16);
	r->pending_exits = 0;
	r->pending_replaced = 0;
	r->last_reap = now_sec();
	r->reaps++;
	return reap_mark__reset(r);
}

/* Ticks (USER_HZ) of all CPUs so far from /proc/stat's "cpu" line; false when
 * unreadable. @idle: idle + iowait; @total: every field up to steal. */
static bool read_cpu_ticks(struct cpu_ticks *t)
{
	unsigned long long v[8] = {};
	char buf[256];
	ssize_t n;
	int fd, i;

	fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* cpu  user nice system idle iowait irq softirq steal ... */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) < 5)
		return false;
	t->idle = v[3] + v[4];
	t->steal = v[7];
	t->total = 0;
	for (i = 0; i < 8; i++)
		t->total += v[i];
	return true;
}

/*
 * Reads how idle the CPUs were over the last IDLE_WINDOW_SEC or a little more (called at
 * every turn of the loop), while exited processes wait to be reaped; with none waiting
 * /proc/stat is not read and the next wait starts a new window (not idle until it ends).
 * The window is short on purpose: measured since the last reap instead, the idle seconds
 * before a job started would let a reap run during it.
 */
static void idle_update(struct record *r)
{
	double now, elapsed;
	struct cpu_ticks ct;
	uint64_t ticks;

	if (!r->pending_exits && !r->pending_replaced) {
		r->idle_at = 0;
		return;
	}
	now = now_sec();
	elapsed = now - r->idle_at;
	if (r->idle_at && elapsed < IDLE_WINDOW_SEC)
		return; /* too short for clock ticks: the last verdict stands */
	if (!read_cpu_ticks(&ct)) {
		r->idle_lately = true; /* unknown counts as idle */
		return;
	}
	ticks = ct.idle;
	if (!r->idle_at) {
		r->idle_lately = false;
		r->idle_ticks = ticks;
		r->idle_at = now;
		return;
	}
	r->idle_lately = ticks < r->idle_ticks ||
			 (double)(ticks - r->idle_ticks) / sysconf(_SC_CLK_TCK) >=
				 REAP_IDLE_CPUS * elapsed;
	r->idle_ticks = ticks;
	r->idle_at = now;
}

/* Is a CPU free this instant for a reap (reap__cpu_free())? Unknown counts as free, as
 * an unreadable idle share does. */
static bool cpu_free_now(void)
{
	char *text = NULL;
	size_t len;
	bool free_now;

	if (file__read_bounded(AT_FDCWD, "/proc/loadavg", 4096, &text, &len))
		return true;
	free_now = reap__cpu_free(text, sysconf(_SC_NPROCESSORS_ONLN)) != 0;
	free(text);
	return free_now;
}

/*
 * Is it time to reap the processes that exited (and the images exec replaced)? That
 * work (reading their counts, symbolizing their stacks, building DWARF indexes of their
 * files: tens of ms for libc's) takes CPU from the programs being profiled: it is done
 * once a period when the CPUs were idle lately and one is free now, else put off, as
 * perf leaves its symbolizing to perf report, until the end or until what waits costs
 * too much:
 * - REAP_HELD exited images: their mappings, about 1 KiB each for a small program
 *   (DESIGN.md), and their files' descriptors and headers;
 * - keys added to 1/REAP_KEYS_DIV of a count map since the last reap: keys of exited
 *   processes, which a reap deletes, never fill much more than that share of the map,
 *   whose fill loses samples. --unwind dwarf's table of stacks (ustacks.c) likewise;
 * - --unwind dwarf: REAP_TABLE_BYTES more unwind tables loaded (files of exited
 *   processes stay loaded until a reap, unwinder__trim()).
 * Returns why, or REAP_NOT_YET; -ENOMEM.
 */
static int reap_due(struct record *r)
{
	const struct reap_mark *was = &r->mark;
	struct reap_mark now;
	int err;

	if (!r->pending_exits && !r->pending_replaced)
		return REAP_NOT_YET;
	if (now_sec() - r->last_reap >= REAP_PERIOD_SEC) {
		/* idle over the last window, and a CPU free now: a job may have begun since */
		if (r->idle_lately && cpu_free_now())
			return REAP_IDLE;
		r->reaps_deferred++;
		r->last_reap = now_sec(); /* look again in a period */
	}
	if (r->pending_exits + r->pending_replaced >= REAP_HELD)
		return REAP_FORCED_HELD;
	err = reap_mark__read(r, &now);
	if (err)
		return err;
	return reap_mark__exceeded(was, &now, r->map_entries);
}

/*
 * Waits until the duration ends, a signal arrives, or the targets exit; sampling has
 * stopped when it returns. The duration and signals are a stop thread's: the loop may
 * be busy for a while (naming the stacks of exited processes), the recording is not.
 */
static int record_loop(struct record *r)
{
	const struct record_opts *o = &r->opts;
	size_t nr_targets = o->nr_pids + o->nr_tids, i;
	struct pollfd *pfds = NULL;
	double start = now_sec(), deadline = start + o->duration;
	struct stopper stopper, *stop = &stopper;
	int nfds = 0, first_pid, n, err;

	err = stopper__start(stop, r->sampler, o->duration ? deadline : 0);
	if (err)
		return err;
	pfds = calloc(3 + sideband__nr_fds(r->sb) + nr_targets, sizeof(*pfds));
	if (!pfds) {
		err = -ENOMEM;
		goto cleanup;
	}
	pfds[nfds++] = (struct pollfd){ .fd = stopper__fd(stop), .events = POLLIN };
	pfds[nfds++] = (struct pollfd){ .fd = sampler__event_fd(r->sampler), .events = POLLIN };
	if (r->launch.pid)
		pfds[nfds++] = (struct pollfd){ .fd = r->launch.pidfd, .events = POLLIN };
	for (i = 0; i < (size_t)sideband__nr_fds(r->sb); i++)
		pfds[nfds++] = (struct pollfd){.fd = sideband__fd(r->sb, i), .events = POLLIN};
	first_pid = nfds;
	for (i = 0; i < o->nr_pids; i++)
		pfds[nfds++] = (struct pollfd){ .fd = r->pidfds[i], .events = POLLIN };

	r->next_interval = start + o->interval;
	while (!stopper__stopped(stop)) {
		/* each wake-up takes a CPU from the programs profiled: only as often as needed
		 * (the idle window of a pending reap is read every IDLE_WINDOW_SEC or so) */
		bool often = o->unwind == UNWIND_DWARF || r->pending_exits || r->pending_replaced;
		double period = (often ? POLL_PERIOD_MS : POLL_PERIOD_FP_MS) / 1e3, left;
		struct timespec ts;

		if (perfmaps__pending(r->pm))
			period = JIT_SLICE_MS / 1e3;
		left = o->duration ? deadline - now_sec() : period;
		if (left <= 0)
			break;
		left = MIN(left, period);
		if (o->interval)
			left = MAX(0, MIN(left, r->next_interval - now_sec()));
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		n = ppoll(pfds, nfds, &ts, NULL);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			pr_err("poll failed: %s\n", strerror(errno));
			break;
		}
		/* a quarter of a side-band ring waits: read it before it fills */
		if (sideband__drain(r->sb) == -ENOMEM)
			r->err = -ENOMEM;
		sampler__consume(r->sampler, on_event, on_sample, r, CONSUME_SLICE_MS * 1000000ULL);
		if (r->err) {
			err = r->err;
			break;
		}
		/* the rest can wait for the end: stop as soon as asked */
		if (stopper__stopped(stop))
			break;
		idle_update(r);
		if (now_sec() - r->last_jit_refresh >= JIT_REFRESH_SEC) {
			perfmaps__refresh(r->pm, 0);
			r->last_jit_refresh = now_sec();
		} else if (perfmaps__continue(r->pm, false) == -ENOMEM) {
			r->err = -ENOMEM;
		}
		/* an interval ending with the duration is written once, at the end */
		if (o->interval && now_sec() >= r->next_interval &&
		    (!o->duration || r->next_interval < deadline)) {
			err = write_interval(r);
			if (err)
				break;
		}
		err = reap_due(r);
		if (err > REAP_NOT_YET) {
			r->reaps_forced[err]++;
			err = reap_exited(r);
		}
		if (err)
			break;
		if (r->launch.pid) {
			bool exited = r->launch.pidfd >= 0 ? n > 0 && (pfds[2].revents & POLLIN)
							   : launch__wait(&r->launch, true) != -EAGAIN;
			if (exited)
				break;
		}
		if (targets_gone(r, pfds, first_pid, nfds)) {
			pr_info("scorch: the target%s exited\n", nr_targets > 1 ? "s" : "");
			break;
		}
	}
cleanup:
	stopper__finish(stop);
	r->elapsed = stop->stopped_at - start;
	pr_debug("reaps: %" PRIu64 " count keys of exited processes and %" PRIu64
		 " user stacks only they used taken out of the kernel maps; intervals: %" PRIu64
		 " stacks unused for one\n",
		 r->reaped_counts, r->reaped_stacks, r->stacks_aged);
	timing__start(&r->finish, o->timing);
	r->finish.start = stop->stopped_at; /* the end phases count from the stop */
	free(pfds);
	return err;
}

static int add_stack(void *ctx, bool offcpu, const struct count_key *key, uint64_t value,
		     const struct stack_trace *user, const struct stack_trace *kernel)
{
	struct record *r = ctx;
	struct proc_entry *p = proctab__find(r->procs, key->pid, key->gen);
	/* gone before its maps were read (or released): never guess from a PID
	 * that may belong to another process by now */
	bool lost_proc = p && (p->flags & (PROC_MISSING | PROC_RELEASED));
	int err = 0;

	if (r->cap)
		err = capture_rec__add(r->cap, offcpu, key, value, user, kernel, lost_proc);
	if (!err && r->opts.named)
		err = fold__add(&r->fold, offcpu, key, value, user, kernel, lost_proc);
	return err;
}

/* --unwind dwarf: what crossed to user space and how the walks ended. */
static void report_unwind(struct record *r, const uint64_t *st)
{
	struct unwind_stats us;
	uint64_t bad = sampler__bad_samples(r->sampler);

	unwinder__stats(r->unw, &us);
	pr_warn("unwind dwarf: %" PRIu64 " sample records, %.1f KiB each on average (%" PRIu64
		" near the stack top copied short), %" PRIu64 " malformed\n",
		st[STAT_SAMPLES_SENT],
		st[STAT_SAMPLES_SENT] ? st[STAT_SAMPLE_BYTES] / 1024.0 / st[STAT_SAMPLES_SENT] : 0.0,
		st[STAT_STACK_PARTIAL], bad);
	pr_warn("unwind dwarf: %" PRIu64 " walks: %" PRIu64 " complete, %" PRIu64
		" cut at the --stack-size copy ([truncated]), %" PRIu64 " at %u frames, %" PRIu64
		" without CFI or frame pointer, %" PRIu64 " errors; %" PRIu64
		" of released processes\n",
		us.samples, us.ends[UNWIND_END_OUTERMOST], us.ends[UNWIND_END_TRUNCATED],
		us.ends[UNWIND_END_DEPTH], r->max_depth, us.ends[UNWIND_END_NO_INFO],
		us.ends[UNWIND_END_ERROR], r->unwind_skipped);
	pr_warn("unwind dwarf: tables read %" PRIu64 " times, of %" PRIu64 " files at most at once (%.1f MiB"
		" at most, %" PRIu64 " files / %.1f MiB at the end), %" PRIu64
		" dropped when unused; %" PRIu64 " files without .eh_frame_hdr (%" PRIu64
		" with only .debug_frame: frame pointers used), %" PRIu64 " unreadable\n",
		us.files_loaded, us.files_held_max, us.table_bytes_max / 1048576.0, us.files_held,
		us.table_bytes / 1048576.0, us.files_evicted, us.files_no_cfi, us.files_debug_frame,
		us.files_unreadable);
	pr_warn("unwind dwarf: %" PRIu64 " copies ended at their thread's known stack top (%" PRIu64
		" tops learned from complete walks, %" PRIu64
		" forgotten after a walk needed more; %" PRIu64 " walks cut by them: [truncated])\n",
		st[STAT_STACK_TOP], r->tops_set, r->tops_forgotten, r->tops_cut);
	if (r->opts.mode != MODE_CPU)
		pr_warn("unwind dwarf: off CPU: %" PRIu64 " stack copies at switch-out: %" PRIu64
			" counted with their interval, %" PRIu64 " closed at the end, %" PRIu64
			" dropped by --min-block/--max-block, %" PRIu64
			" without their interval's end; %" PRIu64 " intervals without their copy\n",
			st[STAT_OFF_COPIES], r->copies_joined, r->copies_open, r->copies_dropped,
			r->copies_orphan, r->intervals_orphan);
	if (us.ends[UNWIND_END_TRUNCATED] > r->tops_cut)
		pr_hint("raise --stack-size (now %ld) for deeper stacks\n", r->opts.stack_size);
}

/* The end-of-run summary. Returns the share of samples or intervals lost, in percent. */
static double report_summary(struct record *r, const uint64_t *st)
{
	const struct record_opts *o = &r->opts;
	struct symbolizer_stats ss;
	struct perfmaps_stats js;
	struct summary sm = {
		.fold = &r->fold,
		.st = st,
		.mode = o->mode,
		.freq = o->freq,
		.nr_cpus = sampler__nr_cpus(r->sampler),
		.elapsed = r->elapsed,
		.quiet = o->quiet,
		.drain_lost = r->drain_lost,
		.ring_bytes = r->ring_bytes,
		.ring_left = r->ring_left,
		.max_stacks = map_entries(r, sampler__nr_cpus(r->sampler)),
		.procs_seen = r->procs_seen,
		.procs_released = r->procs_released,
		.procs_held_max = r->procs_held_max,
		.ss = o->named ? &ss : NULL,
		.stacks_written = r->stacks_written,
		.js = &js,
		.steal_pct = -1,
	};
	struct sideband_stats sbs;
	struct probe_result pr;
	double lost_pct;

	if (r->cpu_at[0].total && r->cpu_at[1].total > r->cpu_at[0].total &&
	    r->cpu_at[1].steal >= r->cpu_at[0].steal)
		sm.steal_pct = 100.0 * (r->cpu_at[1].steal - r->cpu_at[0].steal) /
			       (r->cpu_at[1].total - r->cpu_at[0].total);
	if (o->mode != MODE_OFFCPU && !probe__run(PROBE_MAX_RATE, &pr) && pr.value >= 0)
		sm.max_rate_end = pr.value;

	symbolizer__stats(r->sym, &ss);
	perfmaps__stats(r->pm, &js);
	sm.procs_missing = ss.procs_missing;
	sm.procs_copied = ss.procs_copied;
	sm.procs_sideband = r->procs_sideband;
	sm.procs_read = r->procs_read;
	sm.reaps = r->reaps;
	sm.reaps_deferred = r->reaps_deferred;
	sm.reaps_held = r->reaps_forced[REAP_FORCED_HELD];
	sm.reaps_keys = r->reaps_forced[REAP_FORCED_KEYS];
	sm.reaps_tables = r->reaps_forced[REAP_FORCED_TABLES];
	sm.reaps_left = r->pending_exits + r->pending_replaced;
	sideband__stats(r->sb, &sbs);
	sm.sbs = r->sb ? &sbs : NULL;
	lost_pct = summary__counts(&sm);
	if (o->unwind == UNWIND_DWARF && !o->quiet)
		report_unwind(r, st);
	summary__details(&sm);
	if (r->cap && !o->quiet)
		capture_rec__summary(r->cap);
	return lost_pct;
}

/* -o x.scorch: what the report needs to show the same summary. */
static int close_capture(struct record *r, const uint64_t *st)
{
	struct capture_stats cs = {
		.elapsed_ns = (uint64_t)(r->elapsed * 1e9),
		.nr_cpus = sampler__nr_cpus(r->sampler),
		.nr_bpf = SCORCH_NR_STATS,
		.drain_lost = r->drain_lost,
		.drain_lost_ns = r->drain_lost_ns,
		.procs_seen = r->procs_seen,
		.procs_released = r->procs_released,
		.procs_held_max = r->procs_held_max,
		.max_stacks = map_entries(r, sampler__nr_cpus(r->sampler)),
		.ring_bytes = r->ring_bytes,
	};
	struct symbolizer_stats ss;

	_Static_assert(SCORCH_NR_STATS <= CAPTURE_MAX_STATS, "stats fit a capture");
	symbolizer__stats(r->sym, &ss);
	cs.procs_missing = ss.procs_missing;
	memcpy(cs.bpf, st, SCORCH_NR_STATS * sizeof(*st));
	return capture_rec__close(r->cap, &cs, true);
}

/* The named outputs (folded, SVG, pprof, speedscope) of the counts so far. */
static int write_named(struct record *r)
{
	struct output_data d = { .folded = r->fold.folded, .fg = &r->opts.fg };

	if (r->opts.svg)
		fold__svg_defaults(r->opts.mode, &r->opts.fg);
	return outputs__write(r->opts.outs, &d);
}

/* @st NULL: an interval's outputs, else the end of the recording (with the capture). */
static int write_output(struct record *r, const uint64_t *st)
{
	int err = 0, e;

	if (r->opts.named) {
		err = write_named(r);
		timing__mark(&r->finish, "render and write");
	}
	/* the capture is written even when another output could not be */
	if (r->opts.capture && err != -ENOMEM) {
		e = close_capture(r, st);
		err = err ?: e;
	}
	r->write_failed = err != 0;
	return err;
}

/*
 * --interval: every count so far is taken out of the kernel maps (atomically per
 * key), written to this interval's files, and the next interval starts empty.
 */
static bool select_all(void *ctx, const struct count_key *key)
{
	return true;
}

static int write_interval(struct record *r)
{
	size_t nr = 0, nr_stacks, nr_aged = 0;
	int err;

	err = sampler__reap(r->sampler, select_all, false, add_stack, r, &r->drain_lost,
			    &r->drain_lost_ns, &nr, &nr_stacks);
	if (!err)
		err = sampler__age_stacks(r->sampler, &nr_aged);
	if (!err && r->ustacks)
		err = ustacks__take(r->ustacks, NULL, add_stack, r, r->ubuf, r->kbuf);
	if (!err)
		err = reap_mark__reset(r);
	if (err) {
		pr_err("cannot read the recorded stacks: %s\n", strerror(-err));
		return err;
	}
	err = write_named(r);
	if (err) {
		r->write_failed = true;
		return err;
	}
	pr_debug("interval %u written: %zu stacks; %zu unused since the last deleted from the "
		 "kernel's stack maps\n",
		 outputs__seq(r->opts.outs), folded__nr_stacks(r->fold.folded), nr_aged);
	r->stacks_aged += nr_aged;
	r->stacks_written += folded__nr_stacks(r->fold.folded);
	folded__free(r->fold.folded);
	r->fold.folded = folded__new();
	if (!r->fold.folded)
		return -ENOMEM;
	folded__set_max_stacks(r->fold.folded, FOLD_MAX_STACKS);
	r->next_interval += r->opts.interval;
	err = outputs__next(r->opts.outs);
	r->write_failed = err != 0;
	return err;
}

/*
 * Reaps the -- command. It failed (r->cmd_failed, exit status EXIT_COMMAND) when it
 * exited non-zero or was killed by a signal other than SIGINT or SIGTERM; ended by
 * scorch (-d, Ctrl-C) it did not.
 */
static int finish_command(struct record *r)
{
	struct pollfd pfd = { .fd = r->launch.pidfd, .events = POLLIN };
	bool stopped = false;
	int status;

	if (!r->launch.pid)
		return 0;
	status = launch__wait(&r->launch, true);
	if (status == -EAGAIN) {
		/* stopped early (duration or signal): end the command, then reap it */
		stopped = true;
		kill(r->launch.pid, SIGTERM);
		if (pfd.fd < 0 || poll(&pfd, 1, 2000) <= 0)
			kill(r->launch.pid, SIGKILL);
		status = launch__wait(&r->launch, false);
	}
	if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status)) {
		pr_info("scorch: the command exited with status %d\n", WEXITSTATUS(status));
		r->cmd_failed = !stopped;
	} else if (status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM) {
		pr_info("scorch: the command was killed by signal %d\n", WTERMSIG(status));
		/* Ctrl-C reaches the terminal's whole process group: a stop, not a failure */
		r->cmd_failed = !stopped && WTERMSIG(status) != SIGINT;
	}
	return 0;
}

static int record_run(struct record *r)
{
	struct record_opts *o = &r->opts;
	struct sampler_opts sopts = {
		.sz = sizeof(sopts),
		.oncpu = o->mode != MODE_OFFCPU,
		.offcpu = o->mode != MODE_CPU,
		.freq = o->freq,
		.min_block_ns = o->min_block_us * 1000,
		.max_block_ns = o->max_block_us * 1000,
		.state_mask = o->state_mask,
		.with_runqueue = true,
		.user_threads_only = o->user_threads_only,
		.kernel_threads_only = o->kernel_threads_only,
		.user_only = o->user_only,
		.kernel_only = o->kernel_only,
		.include_idle = o->include_idle,
		.credit_missed = o->mode == MODE_WALL,
		.filter_pid = o->nr_pids || o->cmd,
		.filter_tid = o->nr_tids > 0,
		.follow_forks = o->cmd != NULL,
		.nr_filter = MAX(o->nr_pids, o->nr_tids) + 1,
		.unwind_dwarf = o->unwind == UNWIND_DWARF,
		.stack_size = o->stack_size,
	};
	struct symbolizer_opts yopts = {
		.sz = sizeof(yopts),
		.no_kernel = o->user_only,
		.lines = o->lines,
		.no_demangle = o->no_demangle,
		.keep_params = o->keep_params,
		.no_inline = o->no_inline,
		.jit_lookup = perfmaps__lookup,
		.cache_dir = scorch__cache_dir(),
	};
	sigset_t block;
	uint64_t st[SCORCH_NR_STATS];
	struct stat nst;
	size_t i;
	int err;

	timing__start(&r->startup, o->timing);
	err = preflight(r);
	if (err)
		return err;
	if (o->capture) {
		struct capture_rec_opts copts = {
			.sz = sizeof(copts),
			.mode = o->mode,
			.freq = o->freq,
			.max_depth = r->max_depth,
			.user_only = o->user_only,
			.kernel_only = o->kernel_only,
			.unwind_dwarf = o->unwind == UNWIND_DWARF,
			.only = !o->named,
		};

		err = capture_rec__open(o->capture_path, &copts, &r->cap);
		if (err)
			return err;
	}
	if (o->named) {
		struct outputs_opts oopts = {
			.sz = sizeof(oopts),
			.kind = o->mode == MODE_CPU	 ? OUTPUTS_CPU
				: o->mode == MODE_OFFCPU ? OUTPUTS_OFFCPU
							 : OUTPUTS_WALL,
			.freq = o->freq,
			.interval = o->interval > 0,
			.lines = o->lines,
			.inline_frames = !o->no_inline,
		};

		err = outputs__open(o->outs, &oopts);
		if (err)
			return err;
	}
	/* the BPF programs tell of new executable mappings (SCORCH_EVENT_MAPS) */
	r->pm = perfmaps__new(&(struct perfmaps_opts){.sz = sizeof(struct perfmaps_opts),
						       .scan_on_notice = true,
						       .slice_bytes = JIT_SLICE_BYTES});
	yopts.jit_ctx = r->pm;
	if (r->cap) {
		/* JIT answers are kept for the capture on their way through */
		yopts.jit_lookup = capture_rec__jit_lookup;
		yopts.jit_ctx = r->cap;
	}
	r->sym = symbolizer__new(&yopts);
	capture_rec__attach(r->cap, r->sym, r->pm);
	r->fold = (struct fold){ .sym = r->sym,
				 .mode = o->mode,
				 .freq = o->freq,
				 .max_depth = r->max_depth,
				 .outs = o->outs };
	err = fold__init(&r->fold);
	r->procs = proctab__new();
	r->pidfds = malloc((o->nr_pids + 1) * sizeof(*r->pidfds));
	r->gone = calloc(o->nr_pids + o->nr_tids + 1, sizeof(*r->gone));
	if (!r->pm || !r->sym || err || !r->procs || !r->pidfds || !r->gone)
		return -ENOMEM;
	if (o->unwind == UNWIND_DWARF) {
		struct unwind_opts uopts = {
			.sz = sizeof(uopts), .maps = &unw_ops, .maps_ctx = r->sym };

		r->unw = unwinder__new(&uopts);
		r->ubuf = malloc(sizeof(*r->ubuf));
		r->kbuf = malloc(sizeof(*r->kbuf));
		r->copies = copytab__new();
		r->ustacks = ustacks__new();
		if (!r->unw || !r->ubuf || !r->kbuf || !r->copies || !r->ustacks)
			return -ENOMEM;
		sopts.ring_bytes = r->ring_bytes = ring_size(o, libbpf_num_possible_cpus());
	}
	for (i = 0; i < o->nr_pids; i++)
		r->pidfds[i] = syscall(SYS_pidfd_open, o->pids[i], 0);

	/* blocked in every thread from here on: the stop thread takes them (stop.c) */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	ksyms_start(r);

	/* before the BPF programs: a process begun from now on needs no /proc read */
	err = sideband__open(sideband_ring_bytes(), &r->sb);
	if (err == -ENOMEM)
		return err;
	if (err)
		pr_debug("cannot open the mmap side-band events (maps read from /proc): %s\n",
			 strerror(-err));
	if (r->sb && !stat("/proc/self/ns/mnt", &nst)) {
		sopts.sideband_since = sideband__since(r->sb);
		sopts.sideband_mntns = nst.st_ino;
	}
	sopts.max_stacks = r->map_entries = map_entries(r, libbpf_num_possible_cpus());
	sopts.age_stacks = o->interval > 0;
	err = sampler__new(&sopts, &r->sampler);
	if (err)
		return err;
	timing__mark(&r->startup, "load");
	for (i = 0; i < o->nr_pids && !err; i++)
		err = sampler__add_pid(r->sampler, o->pids[i]);
	for (i = 0; i < o->nr_tids && !err; i++)
		err = sampler__add_tid(r->sampler, o->tids[i]);
	if (!err && o->cmd) {
		err = launch__start(&r->launch, o->cmd);
		if (err)
			pr_err("cannot start '%s': %s\n", o->cmd[0], strerror(-err));
		else
			err = sampler__add_pid(r->sampler, r->launch.pid);
	}
	if (err) {
		if (err != -ENOMEM && !o->cmd)
			pr_err("cannot set the target filter: %s\n", strerror(-err));
		goto cleanup;
	}
	err = sampler__attach(r->sampler);
	if (err)
		goto cleanup;
	read_cpu_ticks(&r->cpu_at[0]);
	timing__mark(&r->startup, "attach");
	/* kallsyms, read beside the load: what is left of it */
	err = ksyms_wait(r);
	if (err)
		goto cleanup;
	timing__mark(&r->startup, "kallsyms");
	if (o->cmd) {
		err = launch__go(&r->launch, o->cmd[0]);
		if (err)
			goto cleanup;
	}
	if (!o->quiet)
		pr_info("scorch: sampling %s%s%s\n",
			o->cmd ? o->cmd[0] : o->all ? "all CPUs" : "the targets",
			o->mode == MODE_CPU ? "" : o->mode == MODE_OFFCPU ? " off CPU" : " wall-clock",
			o->duration ? "" : "; Ctrl-C to stop");

	err = record_loop(r);
	sampler__detach(r->sampler);
	read_cpu_ticks(&r->cpu_at[1]);
	finish_command(r);
	timing__mark(&r->finish, "stop");
	/* what the rings still hold (the last notifications, samples written before the
	 * detach), then the JIT maps as they are at the end */
	if (!err) {
		if (sampler__consume(r->sampler, on_event, on_sample, r,
				     STOP_SLICE_MS * 1000000ULL) == -EAGAIN)
			r->ring_left = sampler__discard(r->sampler);
		err = r->err;
	}
	if (!err) {
		perfmaps__refresh(r->pm, 0);
		if (perfmaps__continue(r->pm, true) == -ENOMEM)
			err = -ENOMEM;
	}
	timing__mark(&r->finish, "last reads");
	if (err && r->write_failed) {
		/* what was recorded until the output failed: its summary still counts */
		sampler__stats(r->sampler, st);
		report_summary(r, st);
	}
	if (err)
		goto cleanup;

	err = sampler__drain(r->sampler, add_stack, r, &r->drain_lost, &r->drain_lost_ns);
	if (!err && r->copies)
		err = close_copies(r);
	if (!err && r->ustacks)
		err = ustacks__take(r->ustacks, NULL, add_stack, r, r->ubuf, r->kbuf);
	if (err) {
		pr_err("cannot read the recorded stacks: %s\n", strerror(-err));
		goto cleanup;
	}
	timing__mark(&r->finish, "drain and symbolize");
	sampler__stats(r->sampler, st);
	/* dropped from the full rings at the stop: lost as the kernel's drops are */
	st[STAT_LOST_RINGBUF] += r->ring_left;
	err = write_output(r, st);
	if (report_summary(r, st) > PARTIAL_LOSS_PCT && !err)
		err = 1; /* partial result */
	if (err < 0)
		goto cleanup;
	timing__report(&r->startup, "start-up");
	timing__report(&r->finish, "end of recording to output");
cleanup:
	if (r->launch.pid)
		launch__abort(&r->launch);
	return err;
}

int cmd_record(int argc, char **argv)
{
	struct record r = {};
	bool help = false;
	int err;

	r.launch.go_fd = r.launch.err_fd = r.launch.pidfd = -1;
	err = parse_args(argc, argv, &r.opts, &help);
	if (err || help) {
		if (help)
			usage(stdout);
		free(r.opts.pids);
		free(r.opts.tids);
		outputs__free(r.opts.outs);
		return help ? EXIT_OK : EXIT_USAGE;
	}
	if (r.opts.verbose)
		log__set_level(LOG_DEBUG);
	libbpf_set_print(libbpf_print);

	err = record_run(&r);
	if (r.ksyms_running)
		ksyms_wait(&r); /* record_run() failed during the load: r.sym is freed below */

	if (r.pidfds) {
		for (size_t i = 0; i < r.opts.nr_pids; i++)
			if (r.pidfds[i] >= 0)
				close(r.pidfds[i]);
	}
	if (r.cap)
		capture_rec__close(r.cap, NULL, false); /* no-op once written */
	capture_rec__free(r.cap);
	sampler__free(r.sampler);
	sideband__free(r.sb);
	unwinder__free(r.unw);
	copytab__free(r.copies);
	ustacks__free(r.ustacks);
	free(r.ubuf);
	free(r.kbuf);
	symbolizer__free(r.sym);
	perfmaps__free(r.pm);
	fold__release(&r.fold);
	proctab__free(r.procs);
	free(r.pidfds);
	free(r.gone);
	free(r.opts.pids);
	free(r.opts.tids);
	outputs__free(r.opts.outs); /* uncommitted files removed */
	/* both a failed command and a partial result: the command's failure wins */
	if ((!err || err == 1) && r.cmd_failed)
		return EXIT_COMMAND;
	if (err == 1)
		return EXIT_PARTIAL;
	return err ? EXIT_ERROR : EXIT_OK;
}
