// SPDX-License-Identifier: MIT
/* profiler: what every subcommand shares: the debug cache's place, the version line. */
#include <stdio.h>
#include <stdlib.h>

#include "cmds.h"

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
	       "gzip-zstd-input, capture-report, pprof-output, speedscope-output, interval-outputs\n");
}
