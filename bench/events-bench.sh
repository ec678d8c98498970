#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what counting stacks at a probe costs per hit, scorch record --event beside
# bpftrace doing the same work on the same probe, measured in one run.
#
# usage: sudo bench/events-bench.sh [HITS] [RUNS]
#   HITS  probe hits per run (default 200000)
#   RUNS  runs per configuration, interleaved (default 3); medians are reported
#
# The workload (bench/hits.c, pinned to one CPU, PIN=0 to let it move) hits one probe
# point HITS times and times itself from the first hit to the last, so start-up and
# symbolization are not in the figure. Probes, each counted by stack:
#   uprobe  a function's entry (probed()); scorch --event uprobe:hits:probed,
#           bpftrace uprobe:hits:probed { @[ustack] = count(); }
#   usdt    a USDT probe (bench:tick); scorch --event usdt:hits:bench:tick,
#           bpftrace usdt:hits:bench:tick { @[ustack] = count(); }
#   malloc  libc's malloc at 1 M calls a second and more: scorch with --period 100,
#           beside bpftrace's uprobe:libc:malloc { @[ustack] = count(); } (every call)
#           and scorch counting every call
# The cost per hit is (median time with the tool - median time without) / HITS.
#
# Exits nonzero only when it cannot run (not root, no bpftrace, build failure).
set -eu
. "$(dirname "$0")/lib.sh"
need_root
need_scorch
need_tool bpftrace bpftrace
need_tool cc gcc
hits=${1:-200000}
rounds_arg "${2:-3}"
[[ $hits =~ ^[1-9][0-9]*$ ]] || die "invalid HITS '$hits'" "e.g. $0 200000"
make_work
cc -O2 -fno-omit-frame-pointer -I "$root/tests/workloads" -o "$work/hits" "$here/hits.c" ||
	die "cannot build bench/hits.c"
libc=$(ldd "$work/hits" | awk '/libc.so/ { print $3 }')
[ -n "$libc" ] || die "cannot find the libc hits uses"

wl=("$work/hits")
[ "${PIN:-1}" = 1 ] && export HITS_CPU=0

# run TOOL PROBE: prints the workload's elapsed_ns; checks the tool counted the hits
run() {
	local tool=$1 probe=$2 out="$work/$1-$2.out" err="$work/$1-$2.err" spec bt
	local mode=calls
	case $probe in
	uprobe) spec="uprobe:$work/hits:probed"; bt="uprobe:$work/hits:probed" ;;
	usdt) spec="usdt:$work/hits:bench:tick"; bt="usdt:$work/hits:bench:tick"; mode=usdt ;;
	malloc) spec="uprobe:$libc:malloc"; bt="uprobe:$libc:malloc"; mode=malloc ;;
	esac
	case $tool in
	base) "${wl[@]}" "$mode" "$hits" >"$out" 2>"$err" ;;
	scorch)
		"$scorch" record -q --event "$spec" -o "$work/s.folded" -- "${wl[@]}" "$mode" "$hits" >"$out" 2>"$err"
		grep -q '^hits;' "$work/s.folded" || { echo "scorch counted nothing" >&2; return 1; } ;;
	scorch-p100)
		"$scorch" record -q --event "$spec" --period 100 -o "$work/s.folded" -- "${wl[@]}" "$mode" "$hits" >"$out" 2>"$err"
		grep -q '^hits;' "$work/s.folded" || { echo "scorch counted nothing" >&2; return 1; } ;;
	bpftrace)
		bpftrace -e "$bt /pid == cpid/ { @[ustack] = count(); }" -c "${wl[*]} $mode $hits" >"$out" 2>"$err"
		figure bpftrace entries "$out" @ >/dev/null || return 1 ;;
	esac || { echo "events-bench: $tool on $probe failed:" >&2; tail -3 "$err" >&2; return 1; }
	sed -n 's/^hits [0-9]* elapsed_ns \([0-9]*\)$/\1/p' "$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "### Cost per probe hit: $hits hits, $rounds runs interleaved, medians ($(date -u +%H:%M) UTC)"
echo
echo "\`sudo bench/events-bench.sh $hits $rounds\`; the workload pinned to one CPU: $([ "${PIN:-1}" = 1 ] && echo yes || echo no)."
echo
echo "| probe | tool | median ms | ns per hit added |"
echo "| --- | --- | --- | --- |"
for probe in uprobe usdt malloc; do
	tools=(base scorch bpftrace)
	[ "$probe" = malloc ] && tools=(base scorch scorch-p100 bpftrace)
	for t in "${tools[@]}"; do : >"$work/$t-$probe.times"; done
	for ((i = 1; i <= rounds; i++)); do
		for t in "${tools[@]}"; do
			v=$(run "$t" "$probe") || exit 1
			echo "$v" >>"$work/$t-$probe.times"
		done
	done
	base=$(median <"$work/base-$probe.times")
	for t in "${tools[@]}"; do
		m=$(median <"$work/$t-$probe.times")
		label=$t
		[ "$t" = scorch-p100 ] && label="scorch --period 100"
		awk -v p="$probe" -v t="$label" -v m="$m" -v b="$base" -v h="$hits" 'BEGIN {
			printf "| %s | %s | %.1f | %s |\n", p, t, m / 1e6, t == "base" ? "-" : sprintf("%.0f", (m - b) / h)
		}'
	done
done
