#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what off-CPU recording costs a context-switch-bound program, scorch beside
# bpftrace doing the same work, measured in one run.
#
# usage: sudo bench/offcpu-bench.sh [SCORCH] [ROUNDS] [RUNS]
#   SCORCH  the scorch binary (default build/profiler/scorch)
#   ROUNDS  pipe round trips per run (default 300000; two context switches each)
#   RUNS    runs per configuration, interleaved (default 5); medians are reported
#
# The workload (bench/pingpong.c) is two threads passing a byte over two pipes,
# pinned to one CPU (PIN=0 to let them spread), so every hand-off is a
# sched_switch: several hundred thousand a second. It times itself from after
# start-up to its last round trip, so profiler start-up and symbolization are not
# in the figure. Configurations, each following only the workload's threads:
#   base      no profiler
#   scorch    scorch record --mode offcpu -- pingpong        (stacks walked at
#             switch-out only for the traced threads, counted in the kernel)
#   scorch-kernel  --unwind kernel: user stacks walked in the BPF program with the
#             files' .eh_frame tables at switch-out, counted in the kernel
#   scorch-U  the same with user stacks only (-U): no kernel stack walk, which is
#             most of the cost of recording a switch
#   scorch-dwarf  --unwind dwarf: registers + --stack-size bytes of stack copied to a
#             ring buffer at every switch-out and unwound in user space (its summary
#             line, with the records lost to a full ring, is printed at the end)
#   bpftrace  tracepoint:sched:sched_switch: per-thread start time, kernel and user
#             stacks saved at switch-out, sum(ns) by stacks at switch-in -- the usual
#             bpftrace off-CPU recipe (kprobes, and so offcputime.bt's
#             finish_task_switch probe, are not available on every kernel)
# bpftrace 0.17 needs tracefs for tracepoints: the script mounts it at
# /sys/kernel/tracing when it is not mounted, and unmounts it at the end.
#
# Exits nonzero only when it cannot run (not root, no bpftrace, build failure).
set -eu
. "$(dirname "$0")/lib.sh" # figure; the script cleans up after itself (its own trap)
scorch=${1:-$here/../build/profiler/scorch}
rounds=${2:-300000}
runs=${3:-5}
pin=${PIN:-1}

[ "$(id -u)" = 0 ] || { echo "offcpu-bench: must run as root" >&2; exit 1; }
[ -x "$scorch" ] || { echo "offcpu-bench: no scorch binary at $scorch" >&2
	echo "hint: run scripts/build.sh first" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "offcpu-bench: bpftrace is not installed" >&2
	echo "hint: run scripts/setup.sh --test (it installs bpftrace)" >&2; exit 1; }

work=$(mktemp -d)
mounted=0
cleanup() {
	[ "$mounted" = 1 ] && umount /sys/kernel/tracing 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

cc -O2 -Wall -pthread -o "$work/pingpong" "$here/pingpong.c"
if ! [ -e /sys/kernel/tracing/events/sched/sched_switch ]; then
	mount -t tracefs nodev /sys/kernel/tracing
	mounted=1
fi
cat >"$work/offcpu.bt" <<'EOF'
tracepoint:sched:sched_switch
{
	if (pid == cpid) {
		@start[tid] = nsecs;
		@ks[tid] = kstack;
		@us[tid] = ustack;
	}
	$s = @start[args->next_pid];
	if ($s) {
		@off[@ks[args->next_pid], @us[args->next_pid]] = sum(nsecs - $s);
		delete(@start[args->next_pid]);
	}
}
EOF

wl=("$work/pingpong" "$rounds")
[ "$pin" = 1 ] && wl=("$(command -v taskset)" -c 0 "${wl[@]}") # bpftrace -c wants a path

# run CONFIG: prints the workload's elapsed_ns; checks that the profiler saw it
run() {
	local out="$work/$1.out" err="$work/$1.err"
	case $1 in
	base) "${wl[@]}" >"$out" 2>"$err" ;;
	scorch)
		"$scorch" record --mode offcpu -o "$work/scorch.folded" -- "${wl[@]}" >"$out" 2>"$err"
		grep -q pingpong "$work/scorch.folded" || { echo "scorch recorded nothing" >&2; return 1; } ;;
	scorch-dwarf)
		"$scorch" record --mode offcpu --unwind dwarf -o "$work/scorch-dwarf.folded" -- "${wl[@]}" >"$out" 2>"$err" ||
			[ $? = 3 ] # more than 5 % lost to a full ring: measured, reported below
		grep -q pingpong "$work/scorch-dwarf.folded" || { echo "scorch dwarf recorded nothing" >&2; return 1; } ;;
	scorch-kernel)
		"$scorch" record --mode offcpu --unwind kernel -o "$work/scorch-kernel.folded" -- "${wl[@]}" >"$out" 2>"$err"
		grep -q pingpong "$work/scorch-kernel.folded" || { echo "scorch kernel recorded nothing" >&2; return 1; } ;;
	scorch-U)
		"$scorch" record --mode offcpu -U -o "$work/scorch-U.folded" -- "${wl[@]}" >"$out" 2>"$err"
		grep -q pingpong "$work/scorch-U.folded" || { echo "scorch -U recorded nothing" >&2; return 1; } ;;
	bpftrace)
		bpftrace -c "${wl[*]}" "$work/offcpu.bt" >"$out" 2>"$err"
		figure bpftrace entries "$out" @off >/dev/null || return 1 ;;
	esac || { echo "offcpu-bench: $1 run failed:" >&2; tail -3 "$err" >&2; return 1; }
	sed -n 's/^rounds [0-9]* elapsed_ns \([0-9]*\)$/\1/p' "$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

configs=(base scorch scorch-kernel scorch-dwarf scorch-U bpftrace)
for c in "${configs[@]}"; do : >"$work/$c.times"; done
echo "offcpu-bench: $rounds round trips ($((2 * rounds)) context switches) x $runs runs," \
	"interleaved; pinned to one CPU: $([ "$pin" = 1 ] && echo yes || echo no)"
for ((i = 1; i <= runs; i++)); do
	for c in "${configs[@]}"; do
		t=$(run "$c") || exit 1
		echo "$t" >>"$work/$c.times"
	done
done

base=$(median <"$work/base.times")
printf '%-10s %12s %14s %12s %16s\n' config "median ms" "switches/s" slowdown "ns per switch"
for c in "${configs[@]}"; do
	m=$(median <"$work/$c.times")
	awk -v c="$c" -v m="$m" -v b="$base" -v r="$rounds" 'BEGIN {
		printf "%-10s %12.1f %14.0f %11.1f%% %16.0f\n", c, m / 1e6, 2 * r / (m / 1e9),
			100 * (m - b) / b, (m - b) / (2 * r)
	}'
done
grep -h 'intervals counted' "$work/scorch.err" | sed 's/^/last scorch run: /' || true
grep -h 'intervals counted\|^scorch: lost: [0-9]* of\|sample records\|stack copies' "$work/scorch-dwarf.err" |
	sed 's/^/last scorch-dwarf run: /' || true
echo "runs (ns): $(for c in "${configs[@]}"; do printf '%s=[%s] ' "$c" "$(paste -sd, "$work/$c.times")"; done)"
