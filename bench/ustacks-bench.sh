#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: the sample table of --unwind dwarf (engine/ustacks.c) alone, no BPF, no root:
# bench/ustacks-table.c built from this tree and, to compare, from another checkout
# (e.g. of the previous commit), run interleaved; medians of ns per sample.
# usage: bench/ustacks-bench.sh [OTHER_TREE] [RUNS] [STACKS] [SAMPLES]
#   OTHER_TREE  a source tree to compare with (git worktree add /tmp/old HEAD~1)
#   RUNS        runs of each build (default 5)
#   STACKS      distinct stacks (default 50000; a recording holds at most 65536)
#   SAMPLES     samples added (default 4000000)
# Each build: cc -O2 -g -D_GNU_SOURCE -fno-omit-frame-pointer -I{common,engine,bpf,
# capture,symbolize,flamegraph} bench/ustacks-table.c engine/ustacks.c common/*.c -lm
# (a tree from before engine/ existed: profiler/ in its place)
set -eu
. "$(dirname "$0")/lib.sh"
other=${1:-}
runs=${2:-5}
stacks=${3:-50000}
samples=${4:-4000000}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "invalid RUNS '$runs'" "e.g. $0 '' 5"
[ -z "$other" ] || [ -f "$other/engine/ustacks.c" ] || [ -f "$other/profiler/ustacks.c" ] ||
	die "$other is not a scorch source tree" "git worktree add /tmp/old HEAD~1; $0 /tmp/old"
need_tool cc gcc
make_work

build() { # TREE OUT
	local d eng=engine
	local inc=()
	[ -f "$1/engine/ustacks.c" ] || eng=profiler
	for d in common $eng bpf capture symbolize flamegraph; do inc+=(-I"$1/$d"); done
	cc -O2 -g -D_GNU_SOURCE -fno-omit-frame-pointer "${inc[@]}" -o "$2" \
		"$root/bench/ustacks-table.c" "$1/$eng/ustacks.c" "$1"/common/*.c -lm ||
		die "cannot build bench/ustacks-table.c against $1"
}
build "$root" "$work/this"
builds=(this)
if [ -n "$other" ]; then
	build "$other" "$work/other"
	builds+=(other)
fi
for r in $(seq "$runs"); do
	for b in "${builds[@]}"; do
		"$work/$b" "$stacks" "$samples" | awk '{ print $NF }' >>"$work/$b.ns" ||
			die "the $b build failed"
	done
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for b in "${builds[@]}"; do
	printf '%-6s %s ns/sample (median of %s; all: %s)\n' "$b" "$(median "$work/$b.ns")" "$runs" \
		"$(tr '\n' ' ' <"$work/$b.ns")"
done
