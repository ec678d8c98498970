#!/bin/sh
# SPDX-License-Identifier: MIT
# bench: scorch collapse against stackcollapse-perf.pl, same input, same run.
# usage: bench/collapse-bench.sh SCORCH_COLLAPSE FLAMEGRAPH_DIR [REPEAT] [WORKDIR]
#   SCORCH_COLLAPSE: the command, e.g. "build/profiler/scorch collapse" or
#                    build/tests/collapse/collapse_cli
#   FLAMEGRAPH_DIR:  a checkout of brendangregg/FlameGraph (run only, never copied)
#   REPEAT:          copies of example-perf-stacks.txt (37k lines, 3.1 MB each; default 10)
# Input: FlameGraph's example-perf-stacks.txt.gz (the input of inferno's collapse
# benchmark) decompressed and repeated. Prints the best wall time of 5 runs and the peak
# RSS of each tool, the speed-up, and checks that both outputs are identical
# (scorch's default annotations = stackcollapse-perf.pl --all). inferno-collapse-perf is
# run too when it is on PATH.
set -eu
ours=$1
fgdir=$2
repeat=${3:-10}
work=${4:-$(mktemp -d)}
mkdir -p "$work"

in="$work/perf-x$repeat.txt"
if [ ! -f "$in" ]; then
	gunzip -c "$fgdir/example-perf-stacks.txt.gz" >"$work/one.txt"
	i=0
	: >"$in"
	while [ "$i" -lt "$repeat" ]; do
		cat "$work/one.txt" >>"$in"
		i=$((i + 1))
	done
fi
echo "input: $(wc -l <"$in") lines, $(($(wc -c <"$in") / 1048576)) MB ($repeat x example-perf-stacks.txt)"

# label, output file, command...: prints "label  best-of-5 seconds  peak MB"
measure() {
	label=$1
	out=$2
	shift 2
	best=""
	for run in 1 2 3 4 5; do
		t0=$(date +%s%N)
		/usr/bin/time -f "%M" -o "$work/rss" "$@" "$in" >"$out" 2>"$work/stderr"
		t1=$(date +%s%N)
		t=$((t1 - t0))
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	printf '%-28s %9.3f s %8.1f MB\n' "$label" "$(echo "$best / 1000000000" | bc -l)" \
		"$(echo "$(cat "$work/rss") / 1024" | bc -l)"
	echo "$best" >"$work/last"
}

measure "stackcollapse-perf.pl --all" "$work/pl.folded" perl "$fgdir/stackcollapse-perf.pl" --all
pl=$(cat "$work/last")
measure "scorch collapse" "$work/ours.folded" $ours
us=$(cat "$work/last")
echo "speed-up: $(echo "scale=1; $pl / $us" | bc -l)x (goal >= 20x; inferno claims 20x for its port)"
if cmp -s "$work/pl.folded" "$work/ours.folded"; then
	echo "outputs identical: yes ($(wc -l <"$work/ours.folded") folded lines)"
else
	echo "outputs identical: NO"
	diff "$work/pl.folded" "$work/ours.folded" | head -5
	exit 1
fi
if command -v inferno-collapse-perf >/dev/null; then
	measure "inferno-collapse-perf --all" "$work/inferno.folded" inferno-collapse-perf --all
else
	echo "inferno-collapse-perf: not on PATH, not measured"
fi
