#!/bin/bash
# SPDX-License-Identifier: MIT
# Longer fuzzing runs: every libFuzzer target (scripts/fuzz.sh) for SECONDS each (default
# 120), then the totals. Prints per target executions, exec/s, corpus growth, peak RSS and
# crashes, and the sums; exits 1 on any crash (inputs and logs in build-fuzz/fuzz-out/).
#
# usage: bench/fuzz-bench.sh [SECONDS] [TARGET...]
set -u
cd "$(dirname "$0")/.."
secs=${1:-120}
shift || true
t0=$(cut -d' ' -f1 /proc/uptime)
scripts/fuzz.sh "$secs" "$@"
rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
sum=build-fuzz/fuzz-out/summary.tsv
[ -f "$sum" ] || exit 2
echo
echo "fuzz-bench: $secs s per target, $(nproc) CPUs, clang $(clang -dumpversion), one job per target"
awk -F'\t' -v wall="$(echo "$t1 - $t0" | bc)" 'NR > 1 {
		n++; execs += $2; crashes += $7; if ($8 != "ok") bad = bad " " $1 "(" $8 ")"
	}
	END {
		printf "total: %d targets, %d executions, %d crashes%s; wall time %.0f s (build included)\n",
			n, execs, crashes, bad ? ":" bad : "", wall
	}' "$sum"
exit $rc
