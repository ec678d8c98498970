#!/bin/sh
# SPDX-License-Identifier: MIT
# bench: scorch flamegraph against flamegraph.pl on the same inputs, same run.
# usage: bench/flamegraph-bench.sh SCORCH_FLAMEGRAPH FLAMEGRAPH_DIR [WORKDIR]
#   SCORCH_FLAMEGRAPH: the command, e.g. "build/profiler/scorch flamegraph" or
#                      build/tests/flamegraph/fg_cli
#   FLAMEGRAPH_DIR:    a checkout of brendangregg/FlameGraph (run only, never copied)
# Prints wall time, peak RSS and the speed-up for: 100k synthetic lines, 1M lines
# (ours only; flamegraph.pl needs ~2 min and 7 GB, set BENCH_PL_1M=1 to run it too),
# and inferno's benchmark config (example-perf-stacks collapsed, --reverse).
set -eu
ours=$1
fgdir=$2
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"

measure() { # label, command...: prints "label  seconds  peak-MB"
	label=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || true
	set -- $(tail -1 "$work/time")
	printf '%-34s %8.2f s %8.1f MB\n' "$label" "$1" "$(echo "$2 / 1024" | bc -l)"
	echo "$1" >"$work/last"
}
ratio() { echo "scale=1; $1 / $2" | bc -l; }

[ -f "$work/100k.folded" ] || python3 "$here/flamegraph-gen.py" 100000 40 1 >"$work/100k.folded"
[ -f "$work/1m.folded" ] || python3 "$here/flamegraph-gen.py" 1000000 40 2 >"$work/1m.folded"
if [ ! -f "$work/inferno.folded" ]; then
	gunzip -c "$fgdir/example-perf-stacks.txt.gz" | perl "$fgdir/stackcollapse-perf.pl" --all \
		>"$work/inferno.folded"
fi
wc -l "$work/100k.folded" "$work/1m.folded" "$work/inferno.folded"

echo "== 100k lines (depth 3-40)"
measure "flamegraph.pl" perl "$fgdir/flamegraph.pl" "$work/100k.folded"
pl=$(cat "$work/last")
measure "scorch flamegraph" $ours "$work/100k.folded"
us=$(cat "$work/last")
echo "speed-up: $(ratio "$pl" "$us")x (goal >= 50x)"

echo "== 1M lines (goal < 3 s, < 500 MB)"
measure "scorch flamegraph" $ours "$work/1m.folded"
if [ "${BENCH_PL_1M:-0}" = 1 ]; then
	measure "flamegraph.pl" perl "$fgdir/flamegraph.pl" "$work/1m.folded"
fi

echo "== inferno's benchmark: example-perf-stacks collapsed, --reverse (inferno: ~18x; MB column: the loop shell only)"
# several runs each: single runs are too short to time
measure "flamegraph.pl --reverse x10" sh -c \
	"for i in 1 2 3 4 5 6 7 8 9 10; do perl '$fgdir/flamegraph.pl' --reverse '$work/inferno.folded'; done"
pl=$(cat "$work/last")
measure "scorch flamegraph --reverse x10" sh -c \
	"for i in 1 2 3 4 5 6 7 8 9 10; do $ours --reverse '$work/inferno.folded'; done"
us=$(cat "$work/last")
echo "speed-up: $(ratio "$pl" "$us")x (inferno ~18x)"
