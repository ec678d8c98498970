#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: sample accuracy on a workload whose split is known by construction
# (tests/workloads/split.c: 50/30/20 % of each thread's CPU in burn_a/b/c): scorch
# record's shares beside perf record -g's (perf script | stackcollapse-perf.pl), at
# several rates, in one run.
#
# usage: sudo FLAMEGRAPH_DIR=/path/to/FlameGraph bench/accuracy.sh [RATES...]
#   RATES  default 49 99 999 4999
# environment: SECONDS_EACH (default 4) seconds per recording, THREADS (default 2) worker threads.
# Prints a markdown table: shares, the largest error in points and the binomial
# standard error for the number of samples. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool python3 python3
need_flamegraph
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(49 99 999 4999)
for r in "${rates[@]}"; do
	[[ $r =~ ^[1-9][0-9]*$ ]] || die "invalid rate '$r'" "give rates in Hz, e.g. $0 99 999"
done
make_work
need_tool cc gcc
# as tests/CMakeLists.txt builds it: frame pointers, so both profilers walk it whole
cc -O1 -fno-omit-frame-pointer -pthread -o "$work/split" "$root/tests/workloads/split.c" ||
	die "cannot build tests/workloads/split.c"
bench_py accuracy --split "$work/split" --threads "${THREADS:-2}" --seconds "${SECONDS_EACH:-4}" \
	--rates "${rates[@]}" --flamegraph-dir "$fgdir" --argv "$0" "$@"
