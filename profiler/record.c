// SPDX-License-Identifier: MIT
/* profiler: `scorch record`: sample stacks with BPF, symbolize, write folded stacks. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common.h"
#include "cmds.h"
#include "flamegraph.h"
#include "profiler-private.h"
#include "symbolize.h"

#define DEFAULT_FREQ	 99
#define MAX_TARGETS	 4096
#define POLL_PERIOD_MS	 250
#define PARTIAL_LOSS_PCT 5.0
#define MAX_INLINE	 32

struct record_opts {
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
	const char *output;
	long max_stacks;
	char **cmd; /* NULL-terminated argv after --, or NULL */
};

struct record {
	struct record_opts opts;
	struct sampler *sampler;
	struct symbolizer *sym;
	struct folded *folded;
	struct strset *names; /* kernel names with their _[k] suffix */
	struct launch launch;
	struct out_file out; /* opened before sampling starts: fail before, not after */
	int *pidfds;
	bool *gone;
	const char **frames;
	size_t frames_cap;
	struct frame fbuf[MAX_INLINE];
	unsigned int max_depth;
	uint64_t drain_lost;
	uint64_t truncated_user;
	uint64_t truncated_kernel;
	double elapsed;
	int err;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch record [options] [-- command [args...]]\n"
		"\n"
		"Samples on-CPU user and kernel stacks with a BPF program on a cpu-clock perf\n"
		"event per CPU, counts them in the kernel, and writes folded stacks\n"
		"(\"comm;root;...;leaf COUNT\", kernel frames suffixed _[k]).\n"
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
		"  -K, --kernel-only          kernel stacks only\n"
		"  -I, --include-idle         count the idle task (excluded by default)\n"
		"  -o, --output FILE          write here ('-' or absent: standard output);\n"
		"                             files are replaced atomically\n"
		"      --max-stacks N         distinct stacks kept in the kernel, preallocated at\n"
		"                             about 1.1 KiB each (default: frequency x duration x\n"
		"                             CPUs within 4096..65536; 32768 without -d)\n"
		"  -q, --quiet                no summary on standard error\n"
		"  -v, --verbose              debug messages, including libbpf's\n"
		"  -h, --help                 this help\n"
		"\n"
		"The summary on standard error counts samples taken and lost (and why), missed\n"
		"and truncated stacks, and frames that could not be symbolized.\n"
		"\n"
		"exit status: 0 success (also when stopped by Ctrl-C), 1 error, 2 usage error,\n"
		"3 output written but more than 5%% of samples were lost\n"
		"\n"
		"examples:\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.folded     # a PID for 10 s\n"
		"  sudo scorch record -p 1234,1240 -F 999 -o cpu.folded\n"
		"  sudo scorch record -a -d 5                         # whole system, to stdout\n"
		"  sudo scorch record -o cpu.folded -- ./myprog args  # a command and its children\n",
		DEFAULT_FREQ);
}

static int parse_id_list(const char *arg, const char *what, pid_t **ids, size_t *nr)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	pid_t *tmp;
	long v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse__long(tok, 1, INT_MAX, &v)) {
			pr_err("invalid %s '%s' in '%s'\n", what, tok, arg);
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
	if (!*nr) {
		pr_err("empty %s list\n", what);
		err = -EINVAL;
	}
cleanup:
	free(copy);
	return err;
}

enum {
	OPT_MAX_STACKS = 256,
};

static int parse_args(int argc, char **argv, struct record_opts *o, bool *help)
{
	static const struct option long_opts[] = {
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	o->freq = DEFAULT_FREQ;
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, which starts the command to run */
	while ((c = getopt_long(argc, argv, "+:p:t:ad:F:UKIo:qvh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_id_list(optarg, "PID", &o->pids, &o->nr_pids))
				return -EINVAL;
			break;
		case 't':
			if (parse_id_list(optarg, "TID", &o->tids, &o->nr_tids))
				return -EINVAL;
			break;
		case 'a':
			o->all = true;
			break;
		case 'd':
			if (parse__double(optarg, 0.001, 1e7, &o->duration)) {
				pr_err("invalid duration '%s'\n", optarg);
				pr_hint("give seconds between 0.001 and 10000000, e.g. -d 10 or -d 2.5\n");
				return -EINVAL;
			}
			break;
		case 'F':
			if (parse__long(optarg, 1, 1000000, &o->freq)) {
				pr_err("invalid frequency '%s'\n", optarg);
				pr_hint("give samples per second as a whole number, e.g. -F 99\n");
				return -EINVAL;
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
			o->output = optarg;
			break;
		case OPT_MAX_STACKS:
			if (parse__long(optarg, 64, 1 << 24, &o->max_stacks)) {
				pr_err("invalid --max-stacks '%s' (64 to 16777216)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			*help = true;
			return 0;
		case ':':
			pr_err("option '%s' needs a value\n", argv[optind - 1]);
			pr_hint("run 'scorch record --help'\n");
			return -EINVAL;
		default:
			pr_err("unknown option '%s'\n", argv[optind - 1]);
			pr_hint("run 'scorch record --help'\n");
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->user_only && o->kernel_only) {
		pr_err("-U/--user-only and -K/--kernel-only exclude each other\n");
		return -EINVAL;
	}
	if (o->all && (o->nr_pids || o->nr_tids || o->cmd)) {
		pr_err("-a/--all cannot be combined with -p, -t or a command\n");
		return -EINVAL;
	}
	if (o->cmd && (o->nr_pids || o->nr_tids)) {
		pr_err("a command cannot be combined with -p or -t\n");
		pr_hint("profile the command alone, or its PID with -p once it runs\n");
		return -EINVAL;
	}
	if (o->include_idle && (o->nr_pids || o->nr_tids || o->cmd)) {
		pr_err("-I/--include-idle only makes sense for a system-wide recording\n");
		return -EINVAL;
	}
	if (!o->nr_pids && !o->nr_tids && !o->cmd)
		o->all = true;
	return 0;
}

static bool have_caps(void)
{
	char *buf = NULL, *line;
	uint64_t eff = 0;
	size_t len;
	bool ok = false;

	if (file__read_bounded(AT_FDCWD, "/proc/self/status", 1 << 20, &buf, &len))
		return geteuid() == 0;
	line = strstr(buf, "\nCapEff:");
	if (line && sscanf(line + 8, "%lx", &eff) == 1) {
		/* CAP_BPF (39) + CAP_PERFMON (38), or CAP_SYS_ADMIN (21) on older kernels */
		ok = ((eff >> 39) & 1 && (eff >> 38) & 1) || ((eff >> 21) & 1);
	}
	free(buf);
	return ok;
}

static long read_sysctl(const char *path, long dflt)
{
	char *buf = NULL;
	size_t len;
	long v = dflt;

	if (!file__read_bounded(AT_FDCWD, path, 4096, &buf, &len)) {
		buf[strcspn(buf, "\n")] = '\0';
		if (parse__long(buf, LONG_MIN, LONG_MAX, &v))
			v = dflt;
	}
	free(buf);
	return v;
}

static int preflight(struct record *r)
{
	const struct record_opts *o = &r->opts;
	long max_rate;
	size_t i;

	if (!have_caps()) {
		pr_err("recording needs root (CAP_BPF and CAP_PERFMON)\n");
		pr_hint("run it with sudo\n");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): %s\n", strerror(errno));
		pr_hint("scorch needs a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return -ENOENT;
	}
	for (i = 0; i < o->nr_pids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			pr_err("no such process: %d\n", o->pids[i]);
			pr_hint("check the PID with 'ps -p %d'\n", o->pids[i]);
			return -ESRCH;
		}
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (kill(o->tids[i], 0) && errno == ESRCH) {
			pr_err("no such thread: %d\n", o->tids[i]);
			pr_hint("list a process's threads with 'ps -T -p PID'\n");
			return -ESRCH;
		}
	}
	max_rate = read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
	if (o->freq > max_rate) {
		pr_err("-F %ld is above kernel.perf_event_max_sample_rate (%ld)\n", o->freq,
		       max_rate);
		pr_hint("lower -F, or raise it: sysctl kernel.perf_event_max_sample_rate=%ld\n",
			o->freq);
		return -EINVAL;
	}
	r->max_depth = MIN(read_sysctl("/proc/sys/kernel/perf_event_max_stack", 127),
			   SCORCH_MAX_STACK_DEPTH);
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

static void on_event(void *ctx, const struct scorch_event *e)
{
	struct record *r = ctx;
	int err;

	/* read the maps while the process is alive; exec replaces them */
	err = symbolizer__snapshot(r->sym, e->pid);
	if (err && err != -ESRCH)
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

/* Waits until the duration ends, a signal arrives, or the targets exit. */
static int record_loop(struct record *r, const sigset_t *waitmask)
{
	const struct record_opts *o = &r->opts;
	size_t nr_targets = o->nr_pids + o->nr_tids, i;
	struct pollfd *pfds;
	double start = now_sec(), deadline = start + o->duration;
	int nfds = 0, first_pid, n, err = 0;

	pfds = calloc(2 + nr_targets, sizeof(*pfds));
	if (!pfds)
		return -ENOMEM;
	pfds[nfds++] = (struct pollfd){ .fd = sampler__event_fd(r->sampler), .events = POLLIN };
	if (r->launch.pid)
		pfds[nfds++] = (struct pollfd){ .fd = r->launch.pidfd, .events = POLLIN };
	first_pid = nfds;
	for (i = 0; i < o->nr_pids; i++)
		pfds[nfds++] = (struct pollfd){ .fd = r->pidfds[i], .events = POLLIN };

	while (!stop_signal) {
		double left = o->duration ? deadline - now_sec() : POLL_PERIOD_MS / 1e3;
		struct timespec ts;

		if (left <= 0)
			break;
		left = MIN(left, POLL_PERIOD_MS / 1e3);
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		n = ppoll(pfds, nfds, &ts, waitmask);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			pr_err("poll failed: %s\n", strerror(errno));
			break;
		}
		sampler__consume(r->sampler, on_event, r);
		if (r->launch.pid) {
			bool exited = r->launch.pidfd >= 0 ? n > 0 && (pfds[1].revents & POLLIN)
							   : launch__wait(&r->launch, true) != -EAGAIN;
			if (exited)
				break;
		}
		if (targets_gone(r, pfds, first_pid, nfds)) {
			pr_info("scorch: the target%s exited\n", nr_targets > 1 ? "s" : "");
			break;
		}
	}
	r->elapsed = now_sec() - start;
	/* last notifications: processes seen just before the end */
	sampler__consume(r->sampler, on_event, r);
	free(pfds);
	return err;
}

static const char *kernel_name(struct record *r, const char *name)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%s_[k]", name);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return name;
	return strset__intern_len(r->names, buf, n);
}

static int push_frame(struct record *r, size_t *n, const char *name)
{
	if (*n == r->frames_cap) {
		size_t cap = r->frames_cap ? r->frames_cap * 2 : 512;
		const char **tmp = realloc(r->frames, cap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		r->frames = tmp;
		r->frames_cap = cap;
	}
	if (!name)
		return -ENOMEM;
	r->frames[(*n)++] = name;
	return 0;
}

static int add_stack(void *ctx, const struct count_key *key, uint64_t count,
		     const struct stack_trace *user, const struct stack_trace *kernel)
{
	struct record *r = ctx;
	char comm[SCORCH_COMM_LEN + 1];
	size_t n = 0;
	int i, j, k, err;

	memcpy(comm, key->comm, SCORCH_COMM_LEN);
	comm[SCORCH_COMM_LEN] = '\0';
	err = push_frame(r, &n, strset__intern(r->names, comm[0] ? comm : "[unknown]"));
	if (err)
		return err;
	if (key->flags & KEY_USER_MISSED) {
		err = push_frame(r, &n, "[missed user stack]");
	} else if (user) {
		if (user->nr >= r->max_depth) {
			r->truncated_user += count;
			err = push_frame(r, &n, "[truncated]");
		}
		for (i = (int)user->nr - 1; i >= 0 && !err; i--) {
			k = symbolizer__user(r->sym, key->pid, user->ips[i], i > 0, r->fbuf,
					     MAX_INLINE);
			if (k < 0)
				return k;
			for (j = 0; j < k && !err; j++)
				err = push_frame(r, &n, r->fbuf[j].name);
		}
	}
	if (err)
		return err;
	if (key->flags & KEY_KERNEL_MISSED) {
		err = push_frame(r, &n, "[missed kernel stack]");
	} else if (kernel) {
		if (kernel->nr >= r->max_depth) {
			r->truncated_kernel += count;
			err = push_frame(r, &n, "[truncated]_[k]");
		}
		for (i = (int)kernel->nr - 1; i >= 0 && !err; i--) {
			k = symbolizer__kernel(r->sym, kernel->ips[i], i > 0, r->fbuf, MAX_INLINE);
			if (k < 0)
				return k;
			for (j = 0; j < k && !err; j++)
				err = push_frame(r, &n, kernel_name(r, r->fbuf[j].name));
		}
	}
	if (err)
		return err;
	return folded__add(r->folded, r->frames, n, count);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* The end-of-run summary. Returns the share of samples lost, in percent. */
static double report_summary(struct record *r, const uint64_t *st)
{
	const struct record_opts *o = &r->opts;
	uint64_t lost = st[STAT_LOST_COUNTS] + st[STAT_LOST_STACKS] + st[STAT_LOST_COLLISION] +
			r->drain_lost;
	uint64_t taken = st[STAT_SAMPLES];
	struct symbolizer_stats ss;
	double lost_pct = pct(lost, taken);

	symbolizer__stats(r->sym, &ss);
	if (o->quiet && !lost)
		return lost_pct;
	pr_warn("%" PRIu64 " samples at %ld Hz on %d CPUs in %.2f s: %" PRIu64
		" counted in %zu stacks, %" PRIu64 " lost (%.2f%%)\n",
		taken, o->freq, sampler__nr_cpus(r->sampler), r->elapsed, st[STAT_COUNTED],
		folded__nr_stacks(r->folded), lost, lost_pct);
	if (lost) {
		pr_warn("lost samples: %" PRIu64 " stack map full, %" PRIu64
			" count map full, %" PRIu64 " stack hash collisions, %" PRIu64
			" unreadable at the end\n",
			st[STAT_LOST_STACKS], st[STAT_LOST_COUNTS], st[STAT_LOST_COLLISION],
			r->drain_lost);
		pr_hint("raise --max-stacks (now %u) or lower -F\n",
			map_entries(r, sampler__nr_cpus(r->sampler)));
	}
	if (o->quiet)
		return lost_pct;
	if (st[STAT_USTACK_ERR] || st[STAT_KSTACK_ERR])
		pr_warn("missed stacks: %" PRIu64 " user, %" PRIu64
			" kernel (counted as [missed user stack] / [missed kernel stack])\n",
			st[STAT_USTACK_ERR], st[STAT_KSTACK_ERR]);
	if (r->truncated_user || r->truncated_kernel)
		pr_warn("truncated stacks: %" PRIu64 " user, %" PRIu64
			" kernel samples deeper than %u frames (marked [truncated])\n",
			r->truncated_user, r->truncated_kernel, r->max_depth);
	if (st[STAT_LOST_EVENTS] || st[STAT_PROCS_FULL])
		pr_warn("process notifications lost: %" PRIu64 " (their maps were read late)\n",
			st[STAT_LOST_EVENTS] + st[STAT_PROCS_FULL]);
	pr_warn("frames: %" PRIu64 " user (%" PRIu64 " unresolved, %.1f%%), %" PRIu64
		" kernel (%" PRIu64 " unresolved); %" PRIu64
		" processes exited before their maps were read\n",
		ss.user_frames, ss.user_unresolved, pct(ss.user_unresolved, ss.user_frames),
		ss.kernel_frames, ss.kernel_unresolved, ss.procs_missing);
	if (ss.procs_missing)
		pr_hint("short-lived processes resolve better when they live past their first sample\n");
	return lost_pct;
}

static int write_output(struct record *r)
{
	int err;

	err = folded__write(r->folded, r->out.fp);
	if (err)
		pr_err("cannot write %s: %s\n", r->opts.output ? r->opts.output : "standard output",
		       strerror(-err));
	return out__close(&r->out, !err) ?: err;
}

static int finish_command(struct record *r)
{
	struct pollfd pfd = { .fd = r->launch.pidfd, .events = POLLIN };
	int status;

	if (!r->launch.pid)
		return 0;
	status = launch__wait(&r->launch, true);
	if (status == -EAGAIN) {
		/* stopped early (duration or signal): end the command, then reap it */
		kill(r->launch.pid, SIGTERM);
		if (pfd.fd < 0 || poll(&pfd, 1, 2000) <= 0)
			kill(r->launch.pid, SIGKILL);
		status = launch__wait(&r->launch, false);
	}
	if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status))
		pr_info("scorch: the command exited with status %d\n", WEXITSTATUS(status));
	else if (status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM)
		pr_info("scorch: the command was killed by signal %d\n", WTERMSIG(status));
	return 0;
}

static int record_run(struct record *r)
{
	struct record_opts *o = &r->opts;
	struct sampler_opts sopts = {
		.sz = sizeof(sopts),
		.freq = o->freq,
		.user_only = o->user_only,
		.kernel_only = o->kernel_only,
		.include_idle = o->include_idle,
		.filter_pid = o->nr_pids || o->cmd,
		.filter_tid = o->nr_tids > 0,
		.follow_forks = o->cmd != NULL,
		.nr_filter = MAX(o->nr_pids, o->nr_tids) + 1,
	};
	struct symbolizer_opts yopts = { .sz = sizeof(yopts), .no_kernel = o->user_only };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, waitmask;
	uint64_t st[SCORCH_NR_STATS];
	size_t i;
	int err;

	err = preflight(r);
	if (err)
		return err;
	err = out__open(&r->out, o->output);
	if (err)
		return err;
	r->sym = symbolizer__new(&yopts);
	r->folded = folded__new();
	r->names = strset__new();
	r->pidfds = malloc((o->nr_pids + 1) * sizeof(*r->pidfds));
	r->gone = calloc(o->nr_pids + o->nr_tids + 1, sizeof(*r->gone));
	if (!r->sym || !r->folded || !r->names || !r->pidfds || !r->gone)
		return -ENOMEM;
	for (i = 0; i < o->nr_pids; i++)
		r->pidfds[i] = syscall(SYS_pidfd_open, o->pids[i], 0);

	/* signals are only delivered inside ppoll(): no lost wake-up */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	sopts.max_stacks = map_entries(r, libbpf_num_possible_cpus());
	err = sampler__new(&sopts, &r->sampler);
	if (err)
		return err;
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
	if (o->cmd) {
		err = launch__go(&r->launch, o->cmd[0]);
		if (err)
			goto cleanup;
	}
	if (!o->quiet)
		pr_info("scorch: sampling %s at %ld Hz%s\n",
			o->cmd ? o->cmd[0] : o->all ? "all CPUs" : "the targets", o->freq,
			o->duration ? "" : "; Ctrl-C to stop");

	err = record_loop(r, &waitmask);
	sampler__detach(r->sampler);
	finish_command(r);
	if (err)
		goto cleanup;

	err = sampler__drain(r->sampler, add_stack, r, &r->drain_lost);
	if (err) {
		pr_err("cannot read the recorded stacks: %s\n", strerror(-err));
		goto cleanup;
	}
	sampler__stats(r->sampler, st);
	err = write_output(r);
	if (err)
		goto cleanup;
	if (report_summary(r, st) > PARTIAL_LOSS_PCT)
		err = 1; /* partial result */
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
		return help ? EXIT_OK : EXIT_USAGE;
	}
	if (r.opts.verbose)
		log__set_level(LOG_DEBUG);
	libbpf_set_print(libbpf_print);

	err = record_run(&r);

	if (r.pidfds) {
		for (size_t i = 0; i < r.opts.nr_pids; i++)
			if (r.pidfds[i] >= 0)
				close(r.pidfds[i]);
	}
	out__close(&r.out, false); /* no-op once written */
	sampler__free(r.sampler);
	symbolizer__free(r.sym);
	folded__free(r.folded);
	strset__free(r.names);
	free(r.pidfds);
	free(r.gone);
	free(r.frames);
	free(r.opts.pids);
	free(r.opts.tids);
	if (err == 1)
		return EXIT_PARTIAL;
	return err ? EXIT_ERROR : EXIT_OK;
}
