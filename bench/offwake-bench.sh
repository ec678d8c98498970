#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what --mode offwake costs beside --mode offcpu, and --mode chain (the waker's
# own waker too, --chain-depth 3) beside offwake, on a thread pool woken 20,000 times a
# second (bench/wakepool.c: a dispatcher hands a ~10 us task to one of 4 blocked
# workers every 50 us), and whether any wakeup is lost at that rate. Runs are
# interleaved: base (no profiler), offcpu, offwake and chain (scorch record -v --mode M
# -- wakepool), RUNS of each. The overhead of a mode is the median growth of the pool's
# own CPU time over base (the BPF programs run in its threads' context at each switch
# and wakeup) and of the CPU time of scorch and the pool together (scorch's reading
# and symbolizing too), per wakeup. The last offwake run's waker counters (-v) say how
# many blocked intervals had their waker, none seen, or their waker's stacks lost.
#
# usage: sudo bench/offwake-bench.sh [RUNS]     (default 3)
# environment: RATE (default 20000) wakeups a second, SECONDS (default 2) per run,
#   SCORCH. Prints a markdown table for docs/BENCHMARKS.md. Exits 1 only when it
#   cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool cc gcc
rounds_arg "${1:-3}"
rate=${RATE:-20000}
secs=${SECONDS_EACH:-${SECS:-2}}
[[ $rate =~ ^[1-9][0-9]*$ ]] || die "invalid RATE '$rate'" "e.g. RATE=20000"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "invalid SECS '$secs'" "e.g. SECS=2"
make_work
cc -O2 -Wall -fno-omit-frame-pointer -pthread -o "$work/wakepool" "$here/wakepool.c" ||
	die "cannot build bench/wakepool.c"

# run CONFIG I: appends "pool_cpu_ns total_cpu_ns tasks" to $work/CONFIG.runs
run() {
	local c=$1 out="$work/$1.$2.out" err="$work/$1.$2.err" t
	local TIMEFORMAT='%3U %3S'
	case $c in
	base) t=$({ time "$work/wakepool" "$rate" "$secs" >"$out" 2>"$err"; } 2>&1) ;;
	*) t=$({ time "$scorch" record -v --mode "$c" -o "$work/$c.folded" -- \
		"$work/wakepool" "$rate" "$secs" >"$out" 2>"$err"; } 2>&1) ;;
	esac || die "$c run failed: $(tail -n 2 "$err")"
	grep -q '^tasks ' "$out" || die "$c: wakepool printed no result: $(tail -n 2 "$err")"
	awk -v t="$t" '/^tasks / {
		split(t, a, " ")
		printf "%s %.0f %s\n", $4, (a[1] + a[2]) * 1e9, $2
	}' "$out" >>"$work/$c.runs"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

configs=(base offcpu offwake chain)
for ((i = 1; i <= rounds; i++)); do
	for c in "${configs[@]}"; do
		echo "$name: round $i/$rounds: $c" >&2
		run "$c" "$i"
	done
done
last="$work/offwake.$rounds.err"
counters=$(figure scorch wakers "$last")
read -r wakers with none lost <<<"$counters"
lostall=$(figure scorch lost "$last")
lostall="${lostall% *} of ${lostall#* }"

base_pool=$(cut -d' ' -f1 "$work/base.runs" | median)
base_all=$(cut -d' ' -f2 "$work/base.runs" | median)
tasks=$(cut -d' ' -f3 "$work/base.runs" | median)
echo
echo "### Off-wake against off-CPU recording: a thread pool woken $rate times a second"
echo
echo "bench/offwake-bench.sh $rounds (RATE=$rate, $secs s a run, $tasks tasks a run: $tasks" \
	"wakeups of workers and as many timer wakeups of the dispatcher), medians of $rounds" \
	"interleaved runs, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) at the end."
echo
echo "| mode | pool CPU ms | pool overhead | ns per task | pool + scorch CPU ms | overhead | ns per task |"
echo "|---|---|---|---|---|---|---|"
for c in "${configs[@]}"; do
	p=$(cut -d' ' -f1 "$work/$c.runs" | median)
	a=$(cut -d' ' -f2 "$work/$c.runs" | median)
	awk -v c="$c" -v p="$p" -v a="$a" -v bp="$base_pool" -v ba="$base_all" -v n="$tasks" 'BEGIN {
		printf "| %s | %.1f | %+.1f%% | %.0f | %.1f | %+.1f%% | %.0f |\n", c, p / 1e6,
			100 * (p - bp) / bp, (p - bp) / n, a / 1e6, 100 * (a - ba) / ba, (a - ba) / n
	}'
done
po=$(cut -d' ' -f1 "$work/offcpu.runs" | median)
pw=$(cut -d' ' -f1 "$work/offwake.runs" | median)
pc=$(cut -d' ' -f1 "$work/chain.runs" | median)
awk -v o="$po" -v w="$pw" -v c="$pc" -v b="$base_pool" 'BEGIN {
	if (o > b) printf "\nThe overhead of offwake on the pool is %.2f times that of offcpu.", (w - b) / (o - b)
	else printf "\nThe overhead of offcpu on the pool is within the noise (%.1f ms).", (o - b) / 1e6
	if (w > b) printf " The overhead of chain is %.2f times that of offwake.", (c - b) / (w - b)
}'
echo " Last offwake run: $wakers wakers taken at sched_waking; blocked intervals: $with" \
	"under their waker, $none under [unknown waker], $lost whose waker stacks were lost;" \
	"scorch lost $lostall intervals."
echo "runs (pool_ns total_ns tasks): $(for c in "${configs[@]}"; do printf '%s=[%s] ' "$c" "$(paste -sd, "$work/$c.runs")"; done)"
