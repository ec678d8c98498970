// SPDX-License-Identifier: MIT
/* profiler: what the subcommands share: the debug cache's place, the version line, the
 * targets and the unwinder of a recording. */
#include <errno.h>
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
