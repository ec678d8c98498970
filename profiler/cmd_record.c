// SPDX-License-Identifier: MIT
/* profiler: `scorch record`'s command line: its options parsed and checked, --help. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "common.h"
#include "cmds.h"
#include "engine.h"
#include "profile.h" /* the limits of the BPF programs: depths, stack copies */
#include "flamegraph.h"
#include "symbolize.h"

#define MAX_OUTPUTS 16

/* The command line, what record does, its modes and events. */
static void usage_modes(FILE *out)
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
		"                             counts are microseconds; the wait for a CPU\n"
		"                             after the wakeup (or a preemption) is counted\n"
		"                             apart, under the same stack with a [runqueue]\n"
		"                             frame on top\n"
		"      --mode offwake         offcpu, with the stack of the task that woke\n"
		"                             each blocked thread on top of its blocked stack:\n"
		"                             \"comm;blocked...;--;waker leaf...root;waker_comm\"\n"
		"                             (wakeups in interrupts end in [irq] or\n"
		"                             [softirq]; none seen: [unknown waker])\n"
		"      --mode wakeup          the wakers alone: each blocked thread's time\n"
		"                             under the stack that woke it, as bcc's\n"
		"                             wakeuptime draws it: \"waker_comm;waker\n"
		"                             root...leaf;comm\" (no runqueue waits)\n"
		"      --mode chain           offwake, and on top of each waker the task that\n"
		"                             woke it at its last wakeup, and so on: a chain\n"
		"                             graph, each level after a \"--\" frame, up to\n"
		"                             --chain-depth wakers; a chain ends at an\n"
		"                             interrupt ([irq], [softirq]) or at a waker\n"
		"                             outside the targets (its comm)\n"
		"      --mode wall            both in microseconds (a CPU sample weighs 1e6/HZ,\n"
		"                             and the periods before it that the kernel did not\n"
		"                             sample while its thread kept the CPU): each\n"
		"                             thread's total is its wall time; off-CPU stacks\n"
		"                             end in [off-cpu] (blocked) or [runqueue]\n"
		"                             (waiting for a CPU), as in offcpu mode\n"
		"\n"
		"events (instead of timed sampling; counts are exact, not sampled):\n"
		"      --event SPEC           count the targets' stacks at each event:\n"
		"                             uprobe:FILE:SYMBOL[+OFF]  a function's entry\n"
		"                             uretprobe:FILE:SYMBOL     its returns (the stack\n"
		"                               returned to)\n"
		"                             usdt:FILE:PROVIDER:NAME   a USDT (SystemTap) probe\n"
		"                             tracepoint:CATEGORY:NAME  a kernel tracepoint (as a\n"
		"                               raw tracepoint, found by BTF)\n"
		"                             page-faults, context-switches, cpu-migrations\n"
		"                             FILE: a path, or a file name (libc, libc.so.6)\n"
		"                             found in the targets' mappings, the command's\n"
		"                             executable or the library directories; SYMBOL:\n"
		"                             the symbol, its demangled name (C++, Rust, D),\n"
		"                             the end of a qualified name (Gcx.fullcollect) or\n"
		"                             a glob; one naming several functions is refused\n"
		"                             with the candidates listed. Counts are calls or\n"
		"                             events; frame pointers by default (--unwind dwarf\n"
		"                             for code without them)\n"
		"      --weight ARGn[:UNIT]   count argument n (1..6) of the function, probe or\n"
		"                             tracepoint instead of 1: bytes (malloc's size is\n"
		"                             ARG1)\n"
		"      --period N             count one event in N of each CPU (the kernel's\n"
		"                             sample period for software events); pprof's\n"
		"                             period and the SVG's subtitle say so\n"
		"      --latency              uprobe only: microseconds from the function's\n"
		"                             entry to its return by the stack at entry; a\n"
		"                             nested or recursive call counts in its outermost,\n"
		"                             a thread exiting inside counts to its exit, calls\n"
		"                             open at the end to the end\n"
		"\n");
}

/* What is sampled, for how long, and where the outputs go. */
static void usage_targets(FILE *out)
{
	fprintf(out,
		"targets (default: the whole system):\n"
		"  -p, --pid PID[,PID...]     processes (all their threads)\n"
		"  -t, --tid TID[,TID...]     threads\n"
		"  -a, --all                  every process on the system\n"
		"  -- command [args...]       run the command, following its children, until it\n"
		"                             exits (with -d it gets SIGTERM when time is up)\n"
		"\n"
		"options:\n"
		"  -d, --duration SECONDS     stop after SECONDS (decimals allowed); default: "
		"until\n"
		"                             Ctrl-C, or until the targets exit\n"
		"  -F, --frequency HZ         samples per second per CPU (default %d)\n"
		"      --max-overhead PCT     what scorch may cost the machine, in %% of all\n"
		"                             its CPUs' time: the BPF programs' run time (as\n"
		"                             the kernel measures it), what each sample takes\n"
		"                             from the thread it interrupts (measured from 2\n"
		"                             kHz per CPU on) and scorch's own CPU; over it\n"
		"                             the sampling rate is lowered, back up\n"
		"                             when there is room, each sample counting the\n"
		"                             periods it stands for (default %g; 0: no limit)\n"
		"  -U, --user-only            user stacks only\n"
		"  -K, --kernel-only          kernel stacks only (not with --unwind dwarf)\n"
		"  -I, --include-idle         count the idle task (excluded by default)\n"
		"  -o, --output FILE          write here ('-' or absent: standard output);\n"
		"                             files are replaced atomically, keeping their mode\n"
		"                             and owner (new ones: 0666 minus the umask);\n"
		"                             repeatable, one recording written in several\n"
		"                             formats, chosen by the name: .svg flame graph,\n"
		"                             .html profile viewer (flame graph, icicle,\n"
		"                             function table, sandwich, search; one file),\n"
		"                             .pb.gz or .pb pprof (gzipped profile.proto, for\n"
		"                             go tool pprof), .json speedscope, .scorch a\n"
		"                             capture (below), .folded, .txt or any other\n"
		"                             name folded stacks (.png, .pdf, .gz ... are\n"
		"                             refused: scorch(1), OUTPUT FILES)\n"
		"      --format FMT           folded, svg, html, pprof, speedscope or capture\n"
		"                             for a single -o (or standard output), whatever\n"
		"                             its name\n"
		"      --interval SECONDS     write every output every SECONDS (decimals\n"
		"                             allowed) to numbered files, cpu.svg ->\n"
		"                             cpu-0001.svg, cpu-0002.svg ...; each holds that\n"
		"                             interval only; the last, partial one included;\n"
		"                             an .html page is one file of every interval so\n"
		"                             far, with a timeline whose brush restricts every\n"
		"                             view; a capture is one file whose counts keep\n"
		"                             their interval (report draws the same timeline)\n"
		"      --max-stacks N         distinct stacks kept in the kernel, preallocated at\n"
		"                             about 1.2 KiB each with its count (default:\n"
		"                             frequency x duration x CPUs within 4096..65536;\n"
		"                             32768 without -d); in scorch at most 262144\n"
		"                             named stacks, then [stack table full]\n"
		"\n",
		DEFAULT_FREQ, DEFAULT_MAX_OVERHEAD);
}

/* The off-CPU options and how user stacks are unwound. */
static void usage_unwinding(FILE *out)
{
	fprintf(out,
		"off-CPU options (offcpu, offwake, chain and wall modes):\n"
		"      --min-block USEC       ignore blocks shorter than USEC microseconds\n"
		"      --max-block USEC       ignore blocks longer than USEC microseconds\n"
		"                             (both judge the whole interval, switch-out to\n"
		"                             switch-in: blocked and [runqueue] together)\n"
		"      --state STATE          sleeps counted: interruptible, uninterruptible or\n"
		"                             both (default); runqueue waits are always counted\n"
		"      --user-threads-only    only user threads\n"
		"      --kernel-threads-only  only kernel threads\n"
		"      --chain-depth N        --mode chain: wakers kept per chain, 1 to %d\n"
		"                             (default %d: the waker, its waker, and that one's)\n"
		"  The idle task is never counted. Waits of -p/-t threads blocked at the\n"
		"  start count from it; waits open at an --interval boundary are split\n"
		"  there (not with --max-block); those open at the end are closed then.\n"
		"\n"
		"unwinding (user stacks):\n"
		"      --unwind auto          kernel in every mode, fp at events (default;\n"
		"                             -K, or no bpf_loop in the kernel: fp)\n"
		"      --unwind fp            frame pointers, walked in the kernel; code built\n"
		"                             without them (Debian's libc) loses its callers\n"
		"      --unwind dwarf         copy the user registers and the top of the stack\n"
		"                             per sample (off CPU: per switch-out) and unwind\n"
		"                             here with the files' .eh_frame CFI;\n"
		"                             frame pointers where a file has none (JIT code);\n"
		"                             for what the kernel walk cannot follow (-v\n"
		"                             counts it), at a cost per sample in scorch\n"
		"      --unwind kernel        walk user stacks in the BPF programs with tables\n"
		"                             compiled from the files' .eh_frame and count\n"
		"                             them in the kernel, on and off CPU and at\n"
		"                             events; frame pointers where there is no rule\n"
		"                             (JIT code, signal frames) and\n"
		"                             for a process's first samples, until its tables\n"
		"                             are loaded\n"
		"      --max-depth N          user frames kept per stack by the walks with\n"
		"                             tables (kernel, dwarf; default %d, 1..%d);\n"
		"                             frame pointers stop at 127 or the kernel's\n"
		"                             perf_event_max_stack; deeper stacks keep\n"
		"                             their leaf end and begin with [truncated]\n"
		"      --stack-size BYTES     stack copied per sample with --unwind dwarf\n"
		"                             (default %d, 512..65528, a multiple of 8); deeper\n"
		"                             stacks begin with [truncated]\n"
		"      --ring-size BYTES      ring buffer for the copies, per BPF program (a\n"
		"                             power of 2, 4096..1 GiB; default: 0.25 s of\n"
		"                             records, 1..64 MiB); a full ring loses samples\n"
		"      --no-python            no Python frames: CPython processes unwound as\n"
		"                             any other\n"
		"  CPython 3.10-3.13 processes show their Python functions, 'qualname\n"
		"  (file.py)', in place of the interpreter's eval loop, read in the BPF\n"
		"  programs beside a kernel walk of the native stack: with --unwind kernel,\n"
		"  and with auto in every mode (on CPU and at events such processes alone\n"
		"  are walked in the kernel); not with fp or an explicit dwarf.\n"
		"\n",
		SCORCH_CHAIN_MAX, DEFAULT_CHAIN_DEPTH, SCORCH_DEF_USER_DEPTH, SCORCH_MAX_USER_DEPTH,
		DEFAULT_STACK_SIZE);
}

/* The summary, the exit status and the examples. */
static void usage_end(FILE *out)
{
	fprintf(out,
		"\n"
		"At the end, two lines on standard error: what was captured (samples, stacks,\n"
		"the share lost) and where it went; a warning with a hint only when something\n"
		"needs action. -v gives every counter: losses and why, missed and truncated\n"
		"stacks, frames not named, processes, unwinding. With --interval the summary\n"
		"covers the whole recording (all intervals).\n"
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
		"  sudo scorch record -o cpu.folded -- ./myprog args  # a command and its "
		"children\n"
		"  sudo scorch record --mode offcpu -p 1234 -d 10 -o off.folded\n"
		"  sudo scorch record --mode wall -p 1234 -d 10 -o wall.folded\n"
		"  sudo scorch record --unwind dwarf -o cpu.folded -- ./prog  # no frame pointers\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.scorch     # name the frames later:\n"
		"  scorch report cpu.scorch -o cpu.svg\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.svg -o cpu.pb.gz -o cpu.json\n"
		"  go tool pprof -top cpu.pb.gz\n"
		"  sudo scorch record -p 1234 -d 60 --interval 5 -o cpu.svg  # cpu-0001.svg ...\n"
		"  sudo scorch record --mode offcpu --unwind dwarf -p 1234 -d 5 -o off.folded\n"
		"  sudo scorch record --unwind fp -a -d 5 -o cpu.folded  # no stack copies\n"
		"  sudo scorch record --event uprobe:libc.so.6:malloc --weight ARG1 -o mem.svg -- "
		"./prog\n"
		"  sudo scorch record --event page-faults -p 1234 -d 10 -o faults.svg\n"
		"  sudo scorch record --event tracepoint:sched:sched_process_fork -a -d 5\n"
		"  sudo scorch record --event uprobe:./server:handle --latency -p 1234 -d 10 -o "
		"lat.svg\n"
		"  sudo scorch record --unwind dwarf --latency -o gc.svg \\\n"
		"      --event uprobe:libgphobos.so:Gcx.fullcollect -- ./dprog  # D GC pauses\n");
}

/* --help: the sections in the order the user reads them; the naming and flame-graph
 * options are printed by the libraries that declare them. */
static void record_opts__usage(FILE *out)
{
	usage_modes(out);
	usage_targets(out);
	usage_unwinding(out);
	fprintf(out, "names:\n");
	symbolizer__print_options_help(out);
	fprintf(out,
		"\n"
		"      --timing               print how long start-up (load, attach, the wait\n"
		"                             for kallsyms, read beside the load) and each\n"
		"                             phase from the end of the recording to the output\n"
		"                             on disk (stop, last reads, drain and symbolize,\n"
		"                             render or sort and write) took\n"
		"  -q, --quiet                no summary on standard error, warnings only (not\n"
		"                             with -v)\n"
		"  -v, --verbose              the full summary and debug messages; -vv: libbpf's "
		"load log too\n"
		"  -h, --help                 this help\n"
		"\n"
		"A capture (-o FILE.scorch) keeps the counts with raw addresses, the mappings\n"
		"of the processes (with build-ids) and the kernel and JIT symbols they need;\n"
		"user frames are named later by 'scorch report FILE.scorch', here or on\n"
		"another machine that has the binaries (docs/capture-format.md).\n"
		"\n"
		"An output ending in .svg is an interactive flame graph, in .html a profile\n"
		"viewer; these options of 'scorch flamegraph' (flamegraph.pl's) apply to them:\n");
	flamegraph__print_options_help(out);
	usage_end(out);
}

enum {
	OPT_MAX_STACKS = 256,
	OPT_MIN_BLOCK,
	OPT_MAX_BLOCK,
	OPT_STATE,
	OPT_USER_THREADS,
	OPT_KERNEL_THREADS,
	OPT_UNWIND,
	OPT_STACK_SIZE,
	OPT_MAX_DEPTH,
	OPT_FORMAT,
	OPT_TIMING,
	OPT_INTERVAL,
	OPT_RING_SIZE,
	OPT_EVENT,
	OPT_WEIGHT,
	OPT_PERIOD,
	OPT_LATENCY,
	OPT_NO_PYTHON,
	OPT_CHAIN_DEPTH,
};

static const struct option record_options[] = {
	{"output", required_argument, NULL, 'o'},
	{"max-stacks", required_argument, NULL, OPT_MAX_STACKS},
	{"min-block", required_argument, NULL, OPT_MIN_BLOCK},
	{"max-block", required_argument, NULL, OPT_MAX_BLOCK},
	{"state", required_argument, NULL, OPT_STATE},
	{"user-threads-only", no_argument, NULL, OPT_USER_THREADS},
	{"kernel-threads-only", no_argument, NULL, OPT_KERNEL_THREADS},
	{"unwind", required_argument, NULL, OPT_UNWIND},
	{"stack-size", required_argument, NULL, OPT_STACK_SIZE},
	{"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
	{"no-python", no_argument, NULL, OPT_NO_PYTHON},
	{"chain-depth", required_argument, NULL, OPT_CHAIN_DEPTH},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"timing", no_argument, NULL, OPT_TIMING},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"ring-size", required_argument, NULL, OPT_RING_SIZE},
	{"event", required_argument, NULL, OPT_EVENT},
	{"weight", required_argument, NULL, OPT_WEIGHT},
	{"period", required_argument, NULL, OPT_PERIOD},
	{"latency", no_argument, NULL, OPT_LATENCY},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* What parsing remembers until the options are checked together. */
struct parse_state {
	bool off_opts;	 /* an option of the off-CPU modes */
	bool fg_opts;	 /* a flame graph option */
	bool stack_opt;	 /* --stack-size or --ring-size */
	bool event_opts; /* --weight, --period or --latency */
	const char *format;
	const char *paths[MAX_OUTPUTS];
	size_t nr_paths;
	struct target_parse target; /* -p, -t, -a, --mode... */
	bool chain_depth;	    /* --chain-depth */
};

/* The name of @o's mode that counts wakers, for messages. */
static const char *wake_mode(const struct record_opts *o)
{
	return o->wakeup ? "wakeup" : o->chain ? "chain" : "offwake";
}

/* The off-CPU options. 0, -ENOENT (not one of them), -EINVAL. */
static int parse_mode_opt(struct record_opts *o, struct parse_state *ps, int c, char **argv)
{
	uint64_t *us = c == OPT_MIN_BLOCK ? &o->min_block_us : &o->max_block_us;
	long n;

	switch (c) {
	case OPT_MIN_BLOCK:
	case OPT_MAX_BLOCK:
		ps->off_opts = true;
		if (parse__u64(optarg, 10, us) || *us > UINT64_MAX / 1000) {
			pr_err("invalid %s '%s'\n", argv[optind - 1], optarg);
			pr_hint("give microseconds as a whole number, e.g. 1000\n");
			return -EINVAL;
		}
		return 0;
	case OPT_STATE:
		ps->off_opts = true;
		if (!strcmp(optarg, "interruptible")) {
			o->state_mask = 1;
		} else if (!strcmp(optarg, "uninterruptible")) {
			o->state_mask = 2;
		} else if (!strcmp(optarg, "both")) {
			o->state_mask = 3;
		} else {
			pr_err("invalid state '%s'\n", optarg);
			pr_hint("use interruptible, uninterruptible or both\n");
			return -EINVAL;
		}
		return 0;
	case OPT_CHAIN_DEPTH:
		ps->chain_depth = true;
		if (parse__long(optarg, 1, SCORCH_CHAIN_MAX, &n)) {
			pr_err("invalid --chain-depth '%s'\n", optarg);
			pr_hint("give the wakers kept per chain, 1 to %d, e.g. --chain-depth 3\n",
				SCORCH_CHAIN_MAX);
			return -EINVAL;
		}
		o->chain_depth = (uint32_t)n;
		return 0;
	case OPT_USER_THREADS:
		ps->off_opts = true;
		o->user_threads_only = true;
		return 0;
	case OPT_KERNEL_THREADS:
		ps->off_opts = true;
		o->kernel_threads_only = true;
		return 0;
	default:
		return -ENOENT;
	}
}

/* --unwind, --max-depth, --stack-size, --ring-size, --no-python. 0, -ENOENT (not one of
 * them), -EINVAL. */
static int parse_unwind_opt(struct record_opts *o, struct parse_state *ps, int c)
{
	switch (c) {
	case OPT_NO_PYTHON:
		o->no_python = true;
		return 0;
	case OPT_UNWIND:
		if (!strcmp(optarg, "fp")) {
			o->unwind = UNWIND_FP;
		} else if (!strcmp(optarg, "dwarf")) {
			o->unwind = UNWIND_DWARF;
		} else if (!strcmp(optarg, "kernel")) {
			o->unwind = UNWIND_KERNEL;
		} else if (!strcmp(optarg, "auto")) {
			o->unwind = UNWIND_AUTO;
		} else {
			pr_err("invalid --unwind '%s'\n", optarg);
			pr_hint("use --unwind auto, fp, dwarf or kernel\n");
			return -EINVAL;
		}
		return 0;
	case OPT_MAX_DEPTH:
		if (parse__long(optarg, 1, SCORCH_MAX_USER_DEPTH, &o->max_depth)) {
			pr_err("invalid --max-depth '%s'\n", optarg);
			pr_hint("give user frames per stack, from 1 to %d\n",
				SCORCH_MAX_USER_DEPTH);
			return -EINVAL;
		}
		return 0;
	case OPT_STACK_SIZE:
		if (parse__long(optarg, 512, SCORCH_MAX_STACK_COPY - 8, &o->stack_size) ||
		    o->stack_size % 8) {
			pr_err("invalid --stack-size '%s'\n", optarg);
			pr_hint("give bytes, a multiple of 8 from 512 to %d, e.g. 16384\n",
				SCORCH_MAX_STACK_COPY - 8);
			return -EINVAL;
		}
		ps->stack_opt = true;
		return 0;
	case OPT_RING_SIZE:
		if (parse__long(optarg, 4096, 1L << 30, &o->ring_size) ||
		    (o->ring_size & (o->ring_size - 1))) {
			pr_err("invalid --ring-size '%s'\n", optarg);
			pr_hint("give bytes, a power of 2 from 4096 to 1073741824, e.g. 8388608\n");
			return -EINVAL;
		}
		ps->stack_opt = true;
		return 0;
	default:
		return -ENOENT;
	}
}

/* A --weight unit: 1 to 32 letters, digits, '_' or '-' (it names pprof's sample type). */
static bool unit_ok(const char *u)
{
	size_t i, n = strlen(u);

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)u[i]) && u[i] != '_' && u[i] != '-')
			return false;
	return n >= 1 && n <= 32;
}

/* --event, --weight, --period, --latency. 0, -ENOENT (not one of them), -EINVAL, -ENOMEM. */
static int parse_event_opt(struct record_opts *o, struct parse_state *ps, int c)
{
	struct event_spec *ev = &o->event;
	long n;
	int err;

	switch (c) {
	case OPT_EVENT:
		if (ev->kind) {
			pr_err("one --event per recording: '%s' and '%s'\n", ev->spec, optarg);
			pr_hint("record each event apart\n");
			return -EINVAL;
		}
		err = event__parse(optarg, ev);
		if (err)
			return err;
		o->mode = MODE_EVENT;
		return 0;
	case OPT_WEIGHT: {
		const char *unit = strchr(optarg, ':');
		char num[8] = "";

		ps->event_opts = true;
		if (strncasecmp(optarg, "arg", 3) ||
		    (unit && (size_t)(unit - optarg) >= sizeof(num)) ||
		    parse__long(unit ? memcpy(num, optarg, (size_t)(unit - optarg)) + 3
				     : optarg + 3,
				1, 6, &n) ||
		    (unit && !unit_ok(unit + 1))) {
			pr_err("invalid --weight '%s'\n", optarg);
			pr_hint("give the argument that weighs each event, ARG1 to ARG6, and what "
				"it "
				"counts if not bytes: ARG1 (malloc's size), ARG2:items\n");
			return -EINVAL;
		}
		o->weight_arg = n;
		if (unit)
			snprintf(o->weight_unit, sizeof(o->weight_unit), "%s", unit + 1);
		return 0;
	}
	case OPT_PERIOD:
		ps->event_opts = true;
		if (parse__long(optarg, 1, 1000000000, &n)) {
			pr_err("invalid --period '%s'\n", optarg);
			pr_hint("give N to count every Nth event, from 1 to 1000000000, e.g. "
				"100\n");
			return -EINVAL;
		}
		o->period = n;
		return 0;
	case OPT_LATENCY:
		ps->event_opts = true;
		o->latency = true;
		return 0;
	default:
		return -ENOENT;
	}
}

/* The options of --event, and what they exclude. 0 or -EINVAL. */
static int check_event(struct record_opts *o, const struct parse_state *ps)
{
	struct event_spec *ev = &o->event;

	if (!ev->kind) {
		if (ps->event_opts) {
			pr_err("--weight, --period and --latency need --event\n");
			pr_hint("add --event, e.g. --event uprobe:libc.so.6:malloc --weight "
				"ARG1\n");
			return -EINVAL;
		}
		return 0;
	}
	if (ps->target.mode_given || ps->off_opts || o->freq_given || o->include_idle) {
		pr_err("--event counts stacks at an event: --mode, -F, -I and the off-CPU options "
		       "are for timed sampling\n");
		pr_hint("drop them, or record without --event\n");
		return -EINVAL;
	}
	if (o->weight_arg && (ev->kind == EVENT_SOFTWARE || ev->kind == EVENT_URETPROBE)) {
		pr_err("--weight: %s has no arguments to read\n", ev->spec);
		pr_hint("--weight reads an argument of a uprobe, USDT probe or tracepoint\n");
		return -EINVAL;
	}
	if (o->latency && ev->kind != EVENT_UPROBE) {
		pr_err("--latency times a function from entry to return: it needs a uprobe\n");
		pr_hint("use --event uprobe:FILE:SYMBOL --latency\n");
		return -EINVAL;
	}
	if (o->latency && (o->weight_arg || o->period > 1 || ev->add)) {
		pr_err("--latency times every call from the function's entry: not with --weight, "
		       "--period or +OFF\n");
		pr_hint("drop them\n");
		return -EINVAL;
	}
	ev->weight_arg = o->weight_arg;
	memcpy(ev->weight_unit, o->weight_unit, sizeof(ev->weight_unit));
	ev->period = o->period ? o->period : 1;
	ev->latency = o->latency;
	return 0;
}

/* Outputs, --interval, --max-stacks and the rest. 0, -ENOENT (not one of them), -EINVAL. */
static int parse_output_opt(struct record_opts *o, struct parse_state *ps, int c)
{
	switch (c) {
	case 'o':
		if (ps->nr_paths == MAX_OUTPUTS) {
			pr_err("more than %d outputs (-o)\n", MAX_OUTPUTS);
			pr_hint("record once and convert the output with 'scorch flamegraph' or "
				"'scorch report'\n");
			return -EINVAL;
		}
		ps->paths[ps->nr_paths++] = optarg;
		return 0;
	case OPT_FORMAT:
		ps->format = optarg; /* checked with the outputs */
		return 0;
	case OPT_INTERVAL:
		if (parse__double(optarg, 0.01, 1e7, &o->interval)) {
			pr_err("invalid --interval '%s'\n", optarg);
			pr_hint("give seconds between 0.01 and 10000000, e.g. --interval 5\n");
			return -EINVAL;
		}
		return 0;
	case OPT_MAX_STACKS:
		if (parse__long(optarg, 64, 1 << 24, &o->max_stacks)) {
			pr_err("invalid --max-stacks '%s'\n", optarg);
			pr_hint("give a number of stacks from 64 to 16777216, e.g. 65536\n");
			return -EINVAL;
		}
		return 0;
	case OPT_TIMING:
		o->timing = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	default:
		return -ENOENT;
	}
}

/* The options that exclude or need each other. 0 or -EINVAL. */
static int check_combinations(struct record_opts *o, const struct parse_state *ps)
{
	if (target_parse__check(o))
		return -EINVAL;
	if (o->quiet && o->verbose) {
		pr_err("-q/--quiet and -v/--verbose exclude each other\n");
		pr_hint("-q drops the summary, -v adds details and debug messages: choose one\n");
		return -EINVAL;
	}
	if (o->kernel_only && o->unwind == UNWIND_DWARF) {
		pr_err("-K/--kernel-only records no user stack for --unwind dwarf to unwind\n");
		pr_hint("drop --unwind dwarf (kernel stacks are walked in the kernel), or drop "
			"-K\n");
		return -EINVAL;
	}
	if (o->cmd && (o->nr_pids || o->nr_tids)) {
		pr_err("a command cannot be combined with -p or -t\n");
		pr_hint("profile the command alone, or its PID with -p once it runs\n");
		return -EINVAL;
	}
	if (ps->off_opts && o->mode == MODE_CPU && !o->event.kind) {
		pr_err("off-CPU options need --mode offcpu or --mode wall\n");
		pr_hint("add --mode offcpu (time blocked) or --mode wall (on and off CPU)\n");
		return -EINVAL;
	}
	if (o->unwind == UNWIND_AUTO && ps->stack_opt && o->mode != MODE_CPU) {
		if (o->mode == MODE_EVENT) {
			pr_err("--stack-size and --ring-size need --unwind dwarf with --event\n");
			pr_hint("--unwind auto walks frame pointers at events; add --unwind "
				"dwarf\n");
			return -EINVAL;
		}
		pr_err("--stack-size and --ring-size need --unwind dwarf off CPU\n");
		pr_hint("--unwind auto walks stacks in the kernel in offcpu and wall modes; add "
			"--unwind dwarf\n");
		return -EINVAL;
	}
	o->unwind_auto = o->unwind == UNWIND_AUTO;
	o->unwind = scorch__resolve_unwind(o);
	if (ps->chain_depth && !o->chain) {
		pr_err("--chain-depth is for --mode chain\n");
		pr_hint("add --mode chain, or drop --chain-depth\n");
		return -EINVAL;
	}
	if (o->chain && !ps->chain_depth)
		o->chain_depth = DEFAULT_CHAIN_DEPTH;
	if (o->offwake && o->unwind == UNWIND_DWARF) {
		pr_err("--mode %s walks frame pointers only\n", wake_mode(o));
		pr_hint("drop --unwind dwarf, or record --mode offcpu\n");
		return -EINVAL;
	}
	/* CPython's frames are read at the sample, beside a kernel walk of its stack */
	o->python_walk = o->unwind_auto && !o->no_python && !o->kernel_only &&
			 ((o->unwind == UNWIND_DWARF && o->mode == MODE_CPU) ||
			  (o->unwind == UNWIND_FP && o->mode == MODE_EVENT));
	if (ps->stack_opt && o->unwind != UNWIND_DWARF) {
		pr_err("--stack-size and --ring-size need --unwind dwarf\n");
		pr_hint("add --unwind dwarf, or drop them\n");
		return -EINVAL;
	}
	if (o->min_block_us > o->max_block_us) {
		pr_err("--min-block %" PRIu64 " is above --max-block %" PRIu64 "\n",
		       o->min_block_us, o->max_block_us);
		pr_hint("give a --min-block below --max-block\n");
		return -EINVAL;
	}
	if (o->user_threads_only && o->kernel_threads_only) {
		pr_err("--user-threads-only and --kernel-threads-only exclude each other\n");
		pr_hint("drop both to count every thread\n");
		return -EINVAL;
	}
	if (o->include_idle && o->mode != MODE_CPU && !o->event.kind) {
		pr_err("-I/--include-idle: the idle task is never counted off CPU\n");
		pr_hint("drop -I, or record --mode cpu\n");
		return -EINVAL;
	}
	if (o->include_idle && (o->nr_pids || o->nr_tids || o->cmd)) {
		pr_err("-I/--include-idle only makes sense for a system-wide recording\n");
		pr_hint("drop -I, or the targets\n");
		return -EINVAL;
	}
	if (!o->nr_pids && !o->nr_tids && !o->cmd)
		o->all = true;
	return 0;
}

/*
 * The outputs: a capture (-o FILE.scorch, --format capture) is written from the raw
 * counts; every other format goes through the output table (output.c). 0, -EINVAL or
 * -ENOMEM.
 */
static int check_outputs(struct record_opts *o, const struct parse_state *ps)
{
	static const struct output_formats writes = {
		.cmd = "record",
		.can = FMT_BIT(FMT_FOLDED) | FMT_BIT(FMT_SVG) | FMT_BIT(FMT_HTML) |
		       FMT_BIT(FMT_PPROF) | FMT_BIT(FMT_SPEEDSCOPE) | FMT_BIT(FMT_CAPTURE),
		.dflt = FMT_FOLDED,
	};
	const char *format = ps->format;
	enum output_fmt fmt;
	size_t i, nr = MAX(ps->nr_paths, 1);
	int err;

	o->outs = outputs__new();
	if (!o->outs)
		return -ENOMEM;
	if (format && ps->nr_paths > 1) {
		pr_err("--format applies to one output; %zu are given\n", ps->nr_paths);
		pr_hint("name each -o FILE with its extension (.svg, .folded, .pb.gz, .json, "
			".scorch)\n");
		return -EINVAL;
	}
	/* no -o: standard output, in --format's format or folded */
	for (i = 0; i < nr; i++) {
		const char *path = ps->nr_paths ? ps->paths[i] : NULL;

		err = output_format__choose(&writes, path, format, &fmt);
		if (err)
			return err;
		if (fmt == FMT_CAPTURE && o->capture_path) {
			pr_err("one capture per recording: -o %s and -o %s\n", o->capture_path,
			       path);
			pr_hint("keep one -o FILE.scorch\n");
			return -EINVAL;
		}
		if (fmt == FMT_CAPTURE)
			o->capture_path = path ? path : "-";
		else if ((err = outputs__add(o->outs, path, fmt)))
			return err;
	}
	o->capture = o->capture_path != NULL;
	o->named = !o->capture || outputs__count(o->outs, NULL) > 0;
	o->graph = outputs__count(o->outs, "svg") + outputs__count(o->outs, "html") > 0;
	if (o->capture && !strcmp(o->capture_path, "-") && isatty(STDOUT_FILENO)) {
		pr_err("a capture is binary: not written to a terminal\n");
		pr_hint("give a file, e.g. -o profile.scorch\n");
		return -EINVAL;
	}
	if (o->capture && o->named && outputs__to_stdout(o->outs) &&
	    !strcmp(o->capture_path, "-")) {
		pr_err("the capture and another output cannot both go to standard output\n");
		pr_hint("give one of them a file: -o FILE\n");
		return -EINVAL;
	}
	if (ps->fg_opts && !o->graph) {
		pr_err("flame graph options need an SVG or HTML output (-o FILE.svg, FILE.html)\n");
		pr_hint("add -o FILE.svg or -o FILE.html, or render the folded output with "
			"'scorch flamegraph'\n");
		return -EINVAL;
	}
	if (o->wakeup &&
	    (outputs__count(o->outs, "pprof") || outputs__count(o->outs, "speedscope"))) {
		pr_err("--mode wakeup writes folded stacks, SVG and HTML, not pprof or "
		       "speedscope\n");
		pr_hint("record --mode offwake for a pprof or speedscope profile of the wakers\n");
		return -EINVAL;
	}
	if (o->offwake && o->capture) {
		pr_err("--mode %s writes no capture\n", wake_mode(o));
		pr_hint("write folded, SVG, pprof or speedscope outputs with -o\n");
		return -EINVAL;
	}
	if (o->offwake && o->interval) {
		/* a wait open at a boundary has no waker yet: it cannot be split there */
		pr_err("--mode %s counts each wait whole when it ends: no --interval\n",
		       wake_mode(o));
		pr_hint("record --mode %s without --interval, or --mode offcpu with it\n",
			wake_mode(o));
		return -EINVAL;
	}
	/* a capture is one file (it keeps each count's interval): only the others need one */
	if (o->interval && o->named &&
	    (!outputs__count(o->outs, NULL) || outputs__to_stdout(o->outs))) {
		pr_err("--interval writes numbered files: it needs -o FILE, not standard output\n");
		pr_hint("e.g. --interval 5 -o cpu.svg writes cpu-0001.svg, cpu-0002.svg ...\n");
		return -EINVAL;
	}
	return 0;
}

static int record_opts__parse(int argc, char **argv, struct record_opts *o, bool *help)
{
	/* the naming options and flame graph options are shared with other subcommands */
	const struct option *const tables[] = {scorch_target_options, record_options,
					       symbolizer_name_options, flamegraph_long_options};
	struct parse_state ps = {
		.target.modes = TARGET_MODE_CPU | TARGET_MODE_OFFCPU | TARGET_MODE_OFFWAKE |
				TARGET_MODE_CHAIN | TARGET_MODE_WALL,
	};
	struct option *long_opts;
	int c, err = 0;

	long_opts = cli__options(tables, ARRAY_SIZE(tables));
	if (!long_opts)
		return -ENOMEM;
	flamegraph_opts__init(&o->fg);
	o->names.sz = sizeof(o->names);
	o->freq = DEFAULT_FREQ;
	o->max_overhead = DEFAULT_MAX_OVERHEAD;
	o->stack_size = DEFAULT_STACK_SIZE;
	o->max_depth = SCORCH_DEF_USER_DEPTH;
	o->max_block_us = UINT64_MAX / 1000;
	o->state_mask = 3;
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, which starts the command to run */
	while (!err &&
	       (c = getopt_long(argc, argv, "+:p:t:ad:F:UKIo:qvh", long_opts, NULL)) != -1) {
		if (c == 'h') {
			*help = true;
			goto cleanup;
		}
		if (c == '?' || c == ':') {
			err = cli__bad_option("record", c, argv);
			goto cleanup;
		}
		err = target_parse__opt(&ps.target, o, c);
		if (err == -ENOENT)
			err = parse_mode_opt(o, &ps, c, argv);
		if (err == -ENOENT)
			err = parse_unwind_opt(o, &ps, c);
		if (err == -ENOENT)
			err = parse_output_opt(o, &ps, c);
		if (err == -ENOENT)
			err = parse_event_opt(o, &ps, c);
		if (err == -ENOENT)
			err = symbolizer_opts__set_getopt(&o->names, c);
		if (err == -ENOENT) {
			/* a value out of range was reported; -ENOENT: not an option of ours */
			err = flamegraph_opts__set_getopt(&o->fg, c, optarg);
			ps.fg_opts |= !err;
			if (err == -ENOENT)
				err = cli__bad_option("record", '?', argv);
		}
	}
	if (err)
		goto cleanup;
	if (optind < argc)
		o->cmd = &argv[optind];
	err = check_combinations(o, &ps);
	if (!err)
		err = check_outputs(o, &ps);
	if (!err)
		err = check_event(o, &ps);
cleanup:
	free(long_opts);
	return err == -ENOMEM ? err : err ? -EINVAL : 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct recorder *r = NULL;
	bool help = false;
	int err, status;

	err = record_opts__parse(argc, argv, &o, &help);
	if (err || help) {
		if (help)
			record_opts__usage(stdout);
		record_opts__free(&o);
		return help ? EXIT_OK : err == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
	}
	o.names.cache_dir = scorch__cache_dir();
	err = recorder__new(&o, &r);
	if (!err)
		err = recorder__run(r);
	/* both a failed command and a partial result: the command's failure wins */
	status = err			       ? EXIT_ERROR
		 : recorder__command_failed(r) ? EXIT_COMMAND
		 : recorder__partial(r)	       ? EXIT_PARTIAL
					       : EXIT_OK;
	recorder__free(r);
	record_opts__free(&o);
	return status;
}
