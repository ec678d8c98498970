#!/bin/bash
# SPDX-License-Identifier: MIT
# Off-CPU and wall-clock modes on a workload that blocks in known functions and
# measures, itself, the wall time it spent in each (tests/workloads/block.c):
# scorch's shares must be within 3 points of that truth and the totals within 5 %.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# truth FILE FIELD: a field of the workload's "truth ..." line, in microseconds
truth() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$1"; }
# sum FILE FRAME: microseconds of the main thread's stacks that contain FRAME
sum() { frame_total "$1" block "$2"; }

# offcpu: 30 ms in wait_sleep and 20 ms in wait_pipe per round
"$SCORCH" record --mode offcpu -o "$TMP/off.folded" -- "$BLOCK" --seconds 3 \
	>"$TMP/truth" 2>"$TMP/err" || fail "offcpu record failed: $(cat "$TMP/err")"
cat "$TMP/err" "$TMP/truth"
check_folded "$TMP/off.folded"
ts=$(truth "$TMP/truth" wait_sleep)
tp=$(truth "$TMP/truth" wait_pipe)
ss=$(sum "$TMP/off.folded" wait_sleep)
sp=$(sum "$TMP/off.folded" wait_pipe)
echo "offcpu: wait_sleep $ss us (truth $ts), wait_pipe $sp us (truth $tp)"
awk -v ss="$ss" -v sp="$sp" -v ts="$ts" -v tp="$tp" 'BEGIN {
	share = 100 * ss / (ss + sp); tshare = 100 * ts / (ts + tp)
	ratio = (ss + sp) / (ts + tp)
	printf "wait_sleep share %.1f%% (truth %.1f%%); blocked total %.3f of the truth\n", share, tshare, ratio
	if (share < tshare - 3 || share > tshare + 3) exit 1
	if (ratio < 0.95 || ratio > 1.05) exit 1
}' || fail "off-CPU profile is not true"
# kernel stacks end where the thread entered the scheduler, not in BPF plumbing
grep -q 'bpf_prog\|__bpf_trace\|bpf_trace_run' "$TMP/off.folded" && fail "BPF frames in off-CPU stacks"
grep -q '^block;.*;wait_sleep;.*;__schedule_\[k\] [0-9]*$' "$TMP/off.folded" ||
	fail "off-CPU stacks do not end at __schedule"
grep -q '^swapper' "$TMP/off.folded" && fail "the idle task was counted"

# --min-block drops the 20 ms pipe waits and keeps the 30 ms sleeps
"$SCORCH" record -v --mode offcpu --min-block 25000 -o "$TMP/min.folded" -- "$BLOCK" --seconds 2 \
	>/dev/null 2>"$TMP/err" || fail "--min-block record failed: $(cat "$TMP/err")"
ss=$(sum "$TMP/min.folded" wait_sleep)
sp=$(sum "$TMP/min.folded" wait_pipe)
echo "--min-block 25000: wait_sleep $ss us, wait_pipe $sp us"
[ "$ss" -gt 1000000 ] || fail "--min-block dropped the long sleeps ($ss us)"
[ "$sp" -eq 0 ] || fail "--min-block kept short pipe waits ($sp us)"
grep -qE '[1-9][0-9]* shorter than --min-block' "$TMP/err" || fail "dropped intervals not reported"

# wall: 15 ms burning, 30 ms sleeping, 20 ms on the pipe per round, in wall time
"$SCORCH" record --mode wall -F 999 -o "$TMP/wall.folded" -- "$BLOCK" --seconds 3 --burn \
	>"$TMP/truth" 2>"$TMP/err" || fail "wall record failed: $(cat "$TMP/err")"
cat "$TMP/truth"
check_folded "$TMP/wall.folded"
tb=$(truth "$TMP/truth" burn_cpu)
ts=$(truth "$TMP/truth" wait_sleep)
tp=$(truth "$TMP/truth" wait_pipe)
tt=$(truth "$TMP/truth" total)
sb=$(sum "$TMP/wall.folded" burn_cpu)
ss=$(sum "$TMP/wall.folded" wait_sleep)
sp=$(sum "$TMP/wall.folded" wait_pipe)
all=$(comm_total "$TMP/wall.folded" block)
echo "wall: burn_cpu $sb (truth $tb), wait_sleep $ss ($ts), wait_pipe $sp ($tp); thread total $all us, wall $tt us"
awk -v sb="$sb" -v ss="$ss" -v sp="$sp" -v tb="$tb" -v ts="$ts" -v tp="$tp" -v all="$all" -v tt="$tt" 'BEGIN {
	s = sb + ss + sp; t = tb + ts + tp; bad = 0
	split("burn_cpu wait_sleep wait_pipe", n, " ")
	m[1] = sb; m[2] = ss; m[3] = sp; w[1] = tb; w[2] = ts; w[3] = tp
	for (i = 1; i <= 3; i++) {
		printf "%s: %.1f%% of wall (truth %.1f%%)\n", n[i], 100 * m[i] / s, 100 * w[i] / t
		if (100 * m[i] / s < 100 * w[i] / t - 3 || 100 * m[i] / s > 100 * w[i] / t + 3) bad = 1
	}
	printf "thread total %.3f of its wall time\n", all / tt
	if (all < 0.95 * tt || all > 1.05 * tt) bad = 1
	exit bad
}' || fail "wall-clock profile is not true"
grep -q ';\[off-cpu\] [0-9]*$' "$TMP/wall.folded" || fail "no [off-cpu] marker in wall mode"
grep '^block;.*;burn_cpu' "$TMP/wall.folded" | grep -q '\[off-cpu\]' &&
	echo "note: burn_cpu was also seen off CPU (preempted or clock syscalls)"

# SVG: microseconds, title, palette by mode
"$SCORCH" record --mode offcpu -o "$TMP/off.svg" -- "$BLOCK" --seconds 0.5 >/dev/null 2>&1 ||
	fail "offcpu SVG record failed"
xmllint --noout "$TMP/off.svg" || fail "offcpu SVG is not valid XML"
grep -q 'Off-CPU Time Flame Graph' "$TMP/off.svg" || fail "offcpu SVG title"
grep -q ' us' "$TMP/off.svg" || fail "offcpu SVG unit"
"$SCORCH" record --mode wall -o "$TMP/wall.svg" -- "$BLOCK" --seconds 0.5 --burn >/dev/null 2>&1 ||
	fail "wall SVG record failed"
grep -q 'Wall-Clock Flame Graph' "$TMP/wall.svg" || fail "wall SVG title"
# the wall palette: blocked functions in blue hues, CPU-burning ones in warm hues
fill_of() { # fill_of SVG FUNC -> "r g b" of the widest rect named FUNC
	grep -o "<title>$2 ([^<]*</title><rect[^>]*fill=\"rgb([0-9,]*)\"" "$1" |
		sed 's/.*width="\([0-9.]*\)".*rgb(\([0-9]*\),\([0-9]*\),\([0-9]*\)).*/\1 \2 \3 \4/' |
		sort -rn | head -1 | cut -d' ' -f2-
}
read -r r g b <<<"$(fill_of "$TMP/wall.svg" wait_pipe)"
[ -n "$b" ] && [ "$b" -gt "$r" ] || fail "wall: wait_pipe is not blue (rgb $r,$g,$b)"
read -r r g b <<<"$(fill_of "$TMP/wall.svg" burn_cpu)"
[ -n "$r" ] && [ "$r" -gt "$b" ] || fail "wall: burn_cpu is not warm (rgb $r,$g,$b)"

# a timer sleeper nobody here wrote (Debian's python3): now and then sched_switch shows
# it switching out twice in a row, with neither its wakeup nor its switch-in between
# (bpftrace on the tracepoints sees it too). That is one wait, from the first
# switch-out to the next switch-in, as schedstat counts it: not an interval lost.
exec {sl}< <(exec python3 -u -c 'import time
print("ready")
while True: time.sleep(0.005)')
sleeper=$!
read -r -u "$sl" _ || fail "the sleeper did not start"
run_ns() { awk '{ print $1 }' "/proc/$sleeper/schedstat"; }
r0=$(run_ns); w0=$(date +%s%N)
"$SCORCH" record -v --mode offcpu -p "$sleeper" -d 5 -o "$TMP/sleeper.folded" \
	2>"$TMP/err" || fail "sleeper record failed: $(cat "$TMP/err")"
r1=$(run_ns); w1=$(date +%s%N)
kill "$sleeper"
exec {sl}<&-
grep 'switches off CPU\|without a switch-in\|one wait' "$TMP/err" || true
grep -q 'intervals without a switch-in' "$TMP/err" &&
	fail "sleeper: off-CPU intervals lost without a switch-in"
# scorch's share of the window off CPU against schedstat's over the same steady state
read -r win off <<<"$(sed -n 's/.* switches off CPU in \([0-9.]*\) s: .*(\([0-9.]*\) s off CPU.*/\1 \2/p' "$TMP/err")"
[ -n "$off" ] || fail "sleeper: no off-CPU summary line"
awk -v win="$win" -v off="$off" -v r=$((r1 - r0)) -v w=$((w1 - w0)) 'BEGIN {
	want = 1 - r / w; got = off / win
	printf "sleeper: off CPU %.2f%% of the window (schedstat: %.2f%%)\n", 100 * got, 100 * want
	exit !(got >= want - 0.02 && got <= want + 0.01)
}' || fail "sleeper: off-CPU time is not schedstat's"

# bad option combinations
rc=0; "$SCORCH" record --min-block 10 -d 1 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'need --mode offcpu' "$TMP/err" || fail "--min-block without offcpu: $rc"
rc=0; "$SCORCH" record --mode offcpu --min-block 10 --max-block 5 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "--min-block above --max-block accepted"
rc=0; "$SCORCH" record --mode bogus 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "invalid mode 'bogus'" "$TMP/err" || fail "--mode bogus"
echo PASS
