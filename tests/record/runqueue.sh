#!/bin/bash
# SPDX-License-Identifier: MIT
# Off-CPU intervals split at the wakeup, on a workload whose runqueue waits are known by
# construction (tests/workloads/runq.c): a thread sleeps 10 ms ROUNDS times beside two
# threads burning its CPU. Its [runqueue] time must match the growth of its own
# /proc/thread-self/schedstat run_delay over its sleeps within 5 %, under the same
# stack as the sleep; its blocked time must match the sleep asked for within 2 %: per
# 10 ms sleep, the blocked part differs from the request by the time from the syscall to
# the switch-out (arming the timer traps to the hypervisor in a VM: 76 us measured from
# the syscall's entry on the 2-vCPU test machine) and by the timer interrupt's latency,
# each under 1 % of 10 ms. In offcpu mode with frame pointers and --unwind dwarf
# (the interval's end carries both parts), and in wall mode. A switch-in sched_switch
# did not show (a few a run, more under load; perf's tracefs events miss them too) is
# placed by the thread's CPU time (-v: "did not show N switch-ins"); one lost whole is
# "without a switch-in": the failure message quotes both.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

rounds=200
# field NAME: a field of the workload's "sleeper TID rounds N ..." line
field() { sed -n "s/^sleeper .* $1 \([0-9]*\).*/\1/p" "$TMP/out"; }
# the sleeper's time in the folded file $1, microseconds: its [runqueue] lines, the
# others off CPU (not the on-CPU samples of wall mode: no __schedule), and the [runqueue]
# lines with the sleep's stack
parts() {
	awk '$0 ~ /^rq-sleeper;/ {
		n = $NF
		if ($0 ~ /;\[runqueue\] [0-9]+$/) {
			rq += n
			if ($0 ~ /;wait_sleep;/ && $0 ~ /;do_nanosleep_\[k\];/) same += n
		} else if ($0 ~ /;__schedule_\[k\](;\[off-cpu\])? [0-9]+$/) {
			blocked += n
		}
	} END { print blocked + 0, rq + 0, same + 0 }' "$1"
}

# check NAME ARGS...: records the workload with ARGS, compares
check() {
	local name=$1
	shift
	"$SCORCH" record -v "$@" -o "$TMP/$name.folded" -- "$RUNQ" --rounds $rounds \
		>"$TMP/out" 2>"$TMP/err" || fail "$name: record failed: $(cat "$TMP/err")"
	check_folded "$TMP/$name.folded"
	grep -q '^sleeper ' "$TMP/out" || fail "$name: no sleeper line: $(cat "$TMP/out")"
	cat "$TMP/out"
	read -r blocked rq same <<<"$(parts "$TMP/$name.folded")"
	awk -v name="$name" -v b="$blocked" -v rq="$rq" -v same="$same" \
		-v d0="$(field run_delay_start)" -v d1="$(field run_delay_end)" \
		-v sleep="$(field sleep_ns)" -v s0="$(field slices_start)" \
		-v s1="$(field slices_end)" -v n=$rounds 'BEGIN {
		delay = (d1 - d0) / 1000; asked = sleep / 1000; bad = 0
		printf "%s: [runqueue] %.3f ms, schedstat run_delay %.3f ms (%.3f); blocked %.3f ms, asked %.3f ms (%.3f); [runqueue] under the sleep stack %.1f%%; timeslices %d for %d sleeps\n",
			name, rq / 1000, delay / 1000, delay ? rq / delay : 0, b / 1000, asked / 1000,
			b / asked, rq ? 100 * same / rq : 0, s1 - s0, n
		if (delay <= 0 || rq < 0.95 * delay || rq > 1.05 * delay) bad = 1
		if (b < 0.98 * asked || b > 1.02 * asked) bad = 1
		if (same < 0.99 * rq) bad = 1
		exit bad
	}' || fail "$name: the split of the sleeper's off-CPU time is not true" \
		"($(grep -h 'intervals counted\|lost: [0-9]* off-CPU\|switch-ins' "$TMP/err" | tr '\n' ' ')" \
		"load: $(cut -d' ' -f1-3 /proc/loadavg))"
}

check offcpu --mode offcpu
check dwarf --mode offcpu --unwind dwarf
check wall --mode wall -F 99
grep -q ';\[off-cpu\] [0-9]*$' "$TMP/wall.folded" || fail "wall: no [off-cpu] part"

# --max-block judges the whole interval: a 10 ms sleep and the wait after it are one
# interval longer than 10.5 ms whenever the wait took over ~0.6 ms (here a wakeup
# waits for the burner's slice to end: a tick, 4 ms, about a third of the time).
# Whole intervals are dropped, so no kept one has a [runqueue] part over 0.6 ms; parts
# judged apart would each pass.
"$SCORCH" record -v --mode offcpu --max-block 10500 -o "$TMP/max.folded" -- "$RUNQ" \
	--rounds $rounds >"$TMP/out" 2>"$TMP/err" || fail "--max-block record failed: $(cat "$TMP/err")"
read -r blocked rq same <<<"$(parts "$TMP/max.folded")"
long=$(sed -n 's/.* \([0-9]*\) longer than --max-block.*/\1/p' "$TMP/err")
echo "--max-block 10500: blocked $blocked us, [runqueue] $rq us, $long intervals dropped"
[ "${long:-0}" -gt 0 ] || fail "--max-block dropped no interval"
[ "$rq" -le $((rounds * 600)) ] || fail "--max-block kept parts of long intervals ($rq us)"
echo PASS
