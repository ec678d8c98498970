#!/bin/bash
# SPDX-License-Identifier: MIT
# Wall-clock totals that add up: every thread's on-CPU, off-CPU and runqueue time in
# --mode wall equals the time it existed within the recording, within 2 %
# (tests/workloads/lifetimes.c): a thread blocked from before the recording to after
# it ("sleeper"), one blocked at the start that wakes inside ("lifetimes", the main
# thread), one that burns all along ("busy"), and one born and ended inside ("short",
# which measures its own lifetime). In --mode offcpu the sleeper alone is blocked the
# whole recording. The recording's length is the summary's.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# within A B PCT: A is within PCT % of B
# the tolerance of thread T's wall total, in %: 2, but 5 for "busy", whose time is
# on-CPU samples at 999 Hz with missed periods credited: under AddressSanitizer and the
# suite's load it came out 3.1-3.3 % high (on a build without this tree's changes too)
tolerance() { [ "$1" = busy ] && echo 5 || echo 2; }
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b > 0 && a >= b * (1 - p / 100) && a <= b * (1 + p / 100)) }'; }

# run MODE [ARGS...]: records the workload with --mode MODE -d 3 -v ARGS; "go" once
# sampling began
run() {
	local mode=$1 line
	shift
	rm -f "$TMP/in" "$TMP/out" "$TMP/err.fifo"
	mkfifo "$TMP/in" "$TMP/out" "$TMP/err.fifo"
	"$LIFETIMES" 1 <"$TMP/in" >"$TMP/out" &
	WL=$!
	exec 7>"$TMP/in" 8<"$TMP/out"
	read -r -t 30 line <&8 || fail "the workload did not start"
	[ "$line" = ready ] || fail "unexpected workload line: $line"
	local target=(-p "$WL")
	[ -z "${ALL:-}" ] || target=(-a)
	"$SCORCH" record -v --mode "$mode" -F 999 "${target[@]}" -d 3 "$@" -o "$TMP/$mode.folded" \
		2>"$TMP/err.fifo" &
	REC=$!
	exec 9<"$TMP/err.fifo"
	while read -r -t 30 line <&9; do
		printf '%s\n' "$line" >>"$TMP/$mode.err"
		case "$line" in "scorch: sampling"*) break ;; esac
	done
	# the rest of stderr is read meanwhile: -v writes much, a full FIFO would stall it
	cat <&9 >>"$TMP/$mode.err" &
	local cat_pid=$!
	echo go >&7
	read -r -t 30 line <&8 || fail "$mode: no lifetime from the short thread"
	SHORT_US=${line#short }
	local rc=0 lost unended
	wait "$REC" || rc=$?
	# exit 3 (over 5 % lost) is accepted only when every loss is an interval whose
	# switch-in the kernel never traced (the sched_switch tracepoint itself shows two
	# switch-outs of a thread in a row now and then: bpftrace sees them too); with ~90
	# intervals in 3 s, 5 of them pass 5 %
	if [ "$rc" = 3 ]; then
		lost=$(figure lost "$TMP/$mode.err")
		lost=${lost% *}
		unended=$(sed -n 's/^scorch: lost: \([0-9]*\) off-CPU intervals without a switch-in.*/\1/p' "$TMP/$mode.err")
		[ -n "$lost" ] && [ "$lost" = "$unended" ] && rc=0
	fi
	[ "$rc" = 0 ] || fail "$mode: record failed ($rc): $(grep -v '^debug: \|^libbpf: ' "$TMP/$mode.err")"
	wait "$cat_pid"
	exec 7>&- 9<&-
	wait "$WL" || true
	exec 8<&-
	grep -v '^debug: \|^libbpf: ' "$TMP/$mode.err"
	[ $# -gt 0 ] || check_folded "$TMP/$mode.folded"
	SECS=$(figure seconds "$TMP/$mode.err") || fail "$mode: no recording length in the summary"
}

run wall
window=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 1e6 }')
grep -q '^scorch: threads at the start: .* [1-9][0-9]* off CPU counted from the start' "$TMP/wall.err" ||
	fail "no thread counted from the start: $(cat "$TMP/wall.err")"
for t in sleeper lifetimes busy; do
	total=$(comm_total "$TMP/wall.folded" "$t")
	echo "wall: $t $total us of a $window us recording"
	within "$total" "$window" "$(tolerance "$t")" || fail "wall: $t totals $total us, the recording $window us"
done
total=$(comm_total "$TMP/wall.folded" short)
echo "wall: short $total us of its $SHORT_US us lifetime"
within "$total" "$SHORT_US" 2 || fail "wall: short totals $total us, it lived $SHORT_US us"
# the sleeper, blocked all along, under its own stack: read() on the pipe
grep -q '^sleeper;.*;read;.*\[off-cpu\] [0-9]*$' "$TMP/wall.folded" ||
	fail "the sleeper's stack lacks its read(): $(grep '^sleeper' "$TMP/wall.folded")"

run offcpu
window=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 1e6 }')
total=$(comm_total "$TMP/offcpu.folded" sleeper)
echo "offcpu: sleeper $total us of a $window us recording"
within "$total" "$window" 2 || fail "offcpu: the sleeper totals $total us, the recording $window us"

# --interval: the numbered files add up to the whole, thread by thread, and each file
# holds its own second: a wait still open at a boundary is counted up to it there, the
# rest in the next file
rm -f "$TMP"/wall*.err
run wall --interval 1
window=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 1e6 }')
ls "$TMP"/wall-000[1-9].folded >/dev/null || fail "--interval wrote no numbered files"
for t in sleeper lifetimes busy; do
	total=0
	for f in "$TMP"/wall-0*.folded; do
		total=$((total + $(comm_total "$f" "$t")))
	done
	echo "wall --interval 1: $t $total us over $(ls "$TMP"/wall-0*.folded | wc -l) files, a $window us recording"
	within "$total" "$window" "$(tolerance "$t")" || fail "wall --interval: $t totals $total us over the files"
done
# per_file MODE THREAD...: every file but the last (a second each; the last ends at the
# stop) gives each thread within 2 % of 1 s. Threads off CPU only: on-CPU time is
# sampled, and its share of one second varies by a few periods more than that
per_file() {
	local mode=$1 t f n=0 last total
	shift
	last=$(ls "$TMP/$mode"-0*.folded | tail -n 1)
	for f in "$TMP/$mode"-0*.folded; do
		[ "$f" = "$last" ] && continue
		n=$((n + 1))
		for t in "$@"; do
			total=$(comm_total "$f" "$t")
			echo "$mode --interval 1: $t $total us in $(basename "$f")"
			within "$total" 1000000 2 || fail "$mode --interval: $t has $total us in $f, not its second"
		done
	done
	[ "$n" -ge 2 ] || fail "$mode --interval: $n whole intervals written"
}
per_file wall sleeper
grep -q '^scorch: [1-9][0-9]* waits still open at an --interval boundary' "$TMP/wall.err" ||
	fail "wall --interval: no wait counted at a boundary"

# off CPU with copied stacks: the main thread's join, begun inside the recording and
# open across a boundary, comes in two parts; the sleeper's wait, begun before it
rm -f "$TMP"/offcpu*.err "$TMP"/offcpu*.folded
run offcpu --unwind dwarf --interval 1
per_file offcpu sleeper lifetimes

# -a: every thread of the system is read at the start, the workload's too
rm -f "$TMP"/wall*.err "$TMP"/wall*.folded
ALL=1 run wall
window=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 1e6 }')
for t in sleeper busy; do
	total=$(comm_total "$TMP/wall.folded" "$t")
	echo "wall -a: $t $total us of a $window us recording"
	within "$total" "$window" "$(tolerance "$t")" || fail "wall -a: $t totals $total us, the recording $window us"
done
echo PASS
