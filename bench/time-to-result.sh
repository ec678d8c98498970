#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: time from the end of a system-wide recording to the flame graph on disk:
# scorch record -a -F 999 -d SECONDS -o x.svg beside perf record -a -g -F 999, then
# perf script | stackcollapse-perf.pl | flamegraph.pl, on the same workload, one run.
# scorch records twice, with an empty debug cache (a first run on the machine: the
# debug files it needs, libc's from libc6-dbg, decompressed) and with the cache the
# first run left (SCORCH_CACHE_DIR, a directory of the run's own).
#
# usage: sudo FLAMEGRAPH_DIR=/path/to/FlameGraph bench/time-to-result.sh [SECONDS]
#   SECONDS  length of each recording (default 30; 5 for a quick run)
# environment: HZ (default 999), THREADS (default 2) busy threads of bench/cpujob.c
#   running through the three recordings; CHURN (default 0) short processes started a
#   second beside them (exited processes scorch symbolizes during the recording or,
#   while the CPUs are busy, at the end); SCORCH the binary.
# scorch's figure is measured from outside (its -d deadline, counted from the moment
# it says it samples, to its exit) and printed beside its own --timing phases; perf's
# from the SIGINT to perf record's exit plus the pipeline to the SVG. Also prints
# perf's pipeline stage by stage and scorch collapse + scorch flamegraph on the same
# perf.data. Prints a markdown table. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool python3 python3
need_flamegraph
seconds=${1:-30}
[[ $seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ "$seconds" != 0 ] ||
	die "invalid SECONDS '$seconds'" "give the recording length in seconds, e.g. $0 30"
make_work
build_cpujob
bench_py ttr --cpujob "$work/cpujob" --threads "${THREADS:-2}" --seconds "$seconds" \
	--hz "${HZ:-999}" --churn "${CHURN:-0}" --flamegraph-dir "$fgdir" --argv "$0" "$@"
