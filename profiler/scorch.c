// SPDX-License-Identifier: MIT
/* profiler: what the subcommands share: the debug cache's place, the version line, the
 * targets and the unwinder of a recording. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cmds.h"
#include "engine.h"

#ifndef SCORCH_VERSION
#define SCORCH_VERSION "unknown"
#endif

const char *scorch__cache_dir(void)
{
	const char *dir = getenv("SCORCH_CACHE_DIR");

	if (!dir)
		return SCORCH_CACHE_DIR_DEFAULT;
	return *dir ? dir : NULL;
}

void scorch__print_version(void)
{
	printf("scorch %s\n", SCORCH_VERSION);
	printf("features: bpf-perf-event, offcpu-sched-switch, in-kernel-aggregation, kallsyms, "
	       "elf-symtab, dwarf-inline-lines, debuginfo-buildid-debuglink, zlib-zstd-debug-sections, "
	       "demangle-cxx-rust-d, perf-map, jitdump, process-generations, svg-flamegraph, diff, collapse, "
	       "gzip-zstd-input, capture-report, pprof-output, speedscope-output, interval-outputs, "
	       "live-top\n");
}

int scorch__parse_ids(const char *arg, const char *what, pid_t **ids, size_t *nr, size_t *cap)
{
	char *copy = strdup(arg), *tok, *next;
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
		if (array__grow((void **)ids, cap, *nr + 1, sizeof(**ids))) {
			err = -ENOMEM;
			goto cleanup;
		}
		(*ids)[(*nr)++] = v;
	}
cleanup:
	free(copy);
	return err;
}

/*
 * --unwind auto (the default), chosen from bench/unwind-bench.sh, bench/bpf-cost.sh and
 * bench/offcpu-bench.sh (docs/BENCHMARKS.md): off CPU a copy would be taken per context
 * switch, a cost that grows with the switch rate without bound (a pipe ping-pong makes
 * 10^5 switches a second), while the walk in the BPF program with the files' tables
 * costs 3 % more per switch than frame pointers and recovers the callers Debian's libc
 * (no frame pointers) hides: kernel in offcpu and wall modes. In cpu mode too: a sample
 * walked in the kernel is counted there, while a copy crosses to scorch and is unwound
 * there, a cost in user space per sample that does not scale to high rates or many CPUs
 * (200,000 samples a second is a 200-CPU server at 999 Hz). The copy stays for what the
 * walk cannot follow (--unwind dwarf). With -K there is no user stack to unwind;
 * x86_64 is the only target of both.
 */
const struct option scorch_target_options[] = {
	{"pid", required_argument, NULL, 'p'},
	{"tid", required_argument, NULL, 't'},
	{"all", no_argument, NULL, 'a'},
	{"duration", required_argument, NULL, 'd'},
	{"frequency", required_argument, NULL, 'F'},
	{"max-overhead", required_argument, NULL, OPT_MAX_OVERHEAD},
	{"user-only", no_argument, NULL, 'U'},
	{"kernel-only", no_argument, NULL, 'K'},
	{"include-idle", no_argument, NULL, 'I'},
	{"mode", required_argument, NULL, OPT_MODE},
	{NULL, 0, NULL, 0},
};

static const struct {
	const char *name;
	unsigned int bit;
	enum record_mode mode;
} mode_names[] = {
	{"cpu", TARGET_MODE_CPU, MODE_CPU},
	{"offcpu", TARGET_MODE_OFFCPU, MODE_OFFCPU},
	{"offwake", TARGET_MODE_OFFWAKE, MODE_OFFCPU},
	{"wakeup", TARGET_MODE_OFFWAKE, MODE_OFFCPU},
	{"chain", TARGET_MODE_CHAIN, MODE_OFFCPU},
	{"wall", TARGET_MODE_WALL, MODE_WALL},
};

/* --mode NAME, among those @tp takes. */
static int parse_mode(struct target_parse *tp, struct record_opts *o, const char *arg)
{
	char list[64] = "";
	const char *sep;
	size_t i, n = 0, nr = 0, len = 0;

	for (i = 0; i < ARRAY_SIZE(mode_names); i++) {
		if (!(tp->modes & mode_names[i].bit) || strcmp(arg, mode_names[i].name))
			continue;
		tp->mode_given = true;
		o->mode = mode_names[i].mode;
		o->offwake = mode_names[i].bit & (TARGET_MODE_OFFWAKE | TARGET_MODE_CHAIN);
		o->wakeup = !strcmp(arg, "wakeup");
		o->chain = mode_names[i].bit == TARGET_MODE_CHAIN;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(mode_names); i++)
		nr += !!(tp->modes & mode_names[i].bit);
	/* "cpu, offcpu or wall" */
	for (i = 0; i < ARRAY_SIZE(mode_names) && len < sizeof(list); i++) {
		if (!(tp->modes & mode_names[i].bit))
			continue;
		sep = ++n == 1 ? "" : n == nr ? " or " : ", ";
		len += snprintf(list + len, sizeof(list) - len, "%s%s", sep, mode_names[i].name);
	}
	pr_err("invalid mode '%s'\n", arg);
	pr_hint("use --mode %s\n", list);
	return -EINVAL;
}

int target_parse__opt(struct target_parse *tp, struct record_opts *o, int c)
{
	int err;

	switch (c) {
	case 'p':
		err = scorch__parse_ids(optarg, "PID", &o->pids, &o->nr_pids, &tp->cap_pids);
		return err == -ENOMEM ? err : err ? -EINVAL : 0;
	case 't':
		err = scorch__parse_ids(optarg, "TID", &o->tids, &o->nr_tids, &tp->cap_tids);
		return err == -ENOMEM ? err : err ? -EINVAL : 0;
	case 'a':
		o->all = true;
		return 0;
	case 'd':
		if (parse__double(optarg, 0.001, 1e7, &o->duration)) {
			pr_err("invalid duration '%s'\n", optarg);
			pr_hint("give seconds between 0.001 and 10000000, e.g. -d 10 or -d 2.5\n");
			return -EINVAL;
		}
		return 0;
	case 'F':
		o->freq_given = true;
		if (parse__long(optarg, 1, 1000000, &o->freq)) {
			pr_err("invalid frequency '%s'\n", optarg);
			pr_hint("give samples per second as a whole number, e.g. -F 99\n");
			return -EINVAL;
		}
		return 0;
	case OPT_MAX_OVERHEAD:
		if (parse__double(optarg, 0, 100, &o->max_overhead)) {
			pr_err("invalid --max-overhead '%s'\n", optarg);
			pr_hint("give a share of the CPUs in percent from 0 (no limit) to 100, "
				"e.g. --max-overhead 10\n");
			return -EINVAL;
		}
		return 0;
	case 'U':
		o->user_only = true;
		return 0;
	case 'K':
		o->kernel_only = true;
		return 0;
	case 'I':
		o->include_idle = true;
		return 0;
	case OPT_MODE:
		return parse_mode(tp, o, optarg);
	default:
		return -ENOENT;
	}
}

int target_parse__check(const struct record_opts *o)
{
	if (o->all && (o->nr_pids || o->nr_tids || o->cmd)) {
		pr_err("-a/--all cannot be combined with %s\n", o->cmd ? "a command" : "-p or -t");
		pr_hint("drop -a: without it, %s the targets\n",
			o->cmd ? "the command and its children are" : "-p or -t are");
		return -EINVAL;
	}
	if (o->user_only && o->kernel_only) {
		pr_err("-U/--user-only and -K/--kernel-only exclude each other\n");
		pr_hint("drop one: both user and kernel stacks are kept by default\n");
		return -EINVAL;
	}
	return 0;
}

enum unwind_mode scorch__resolve_unwind(const struct record_opts *o)
{
	if (o->unwind != UNWIND_AUTO)
		return o->unwind;
	/* events come at any rate: a copy per event would cost without bound */
	if (o->mode == MODE_EVENT)
		return UNWIND_FP;
#if defined(__x86_64__)
	if (!o->kernel_only)
		return UNWIND_KERNEL;
#endif
	return UNWIND_FP;
}
