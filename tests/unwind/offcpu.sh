#!/bin/bash
# SPDX-License-Identifier: MIT
# --unwind dwarf off CPU: tests/workloads/block.c built -O2 -fomit-frame-pointer
# -fno-optimize-sibling-calls -g and run with --libc blocks in libc's nanosleep()
# and read() (Debian's libc has no frame pointers) called from wait_sleep() and
# wait_pipe(); it measures its own time in each. The copy taken at switch-out and
# the interval's length sent at switch-in must meet: in offcpu and wall modes
# >= 98 % of the blocked time in libc keeps its caller, and the shares are within 3
# points of the workload's own measurements (totals within 5 %). The frame-pointer
# walk of the same binary is recorded for comparison (it loses the callers).
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

truth() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$1"; }
comm=$(basename "$BLOCK_NOFP")

# time of the main thread's stacks through libc's wait NAME, and the part of it whose
# caller of NAME is CALLER: "TOTAL WITH_CALLER"
callers() { # FILE NAME CALLER
	awk -v c="$comm" -v fn="$2" -v caller="$3" '{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		n = split(line, a, ";"); if (a[1] != c) next
		for (i = 3; i <= n; i++) if (a[i] == fn) {
			t += cnt; if (a[i - 1] == caller) k += cnt; break
		}
	} END { printf "%d %d\n", t, k }' "$1"
}

check_callers() { # FILE MODE
	local t k
	read -r t k < <(callers "$1" __nanosleep wait_sleep)
	echo "$2: $t us in __nanosleep, $k with wait_sleep as its caller"
	[ "$t" -gt 500000 ] || fail "$2: too little time in __nanosleep ($t us)"
	[ $((k * 100)) -ge $((t * 98)) ] || fail "$2: __nanosleep lost its caller ($k of $t us)"
	read -r t k < <(callers "$1" read wait_pipe)
	echo "$2: $t us in read, $k with wait_pipe as its caller"
	[ "$t" -gt 300000 ] || fail "$2: too little time in read ($t us)"
	[ $((k * 100)) -ge $((t * 98)) ] || fail "$2: read lost its caller ($k of $t us)"
}

# offcpu: 30 ms in wait_sleep and 20 ms in wait_pipe per round
"$SCORCH" record -v --unwind dwarf --mode offcpu -o "$TMP/off.folded" -- "$BLOCK_NOFP" \
	--seconds 3 --libc >"$TMP/truth" 2>"$TMP/err" || fail "offcpu record failed: $(cat "$TMP/err")"
cat "$TMP/err" "$TMP/truth"
check_folded "$TMP/off.folded"
grep -q "unwind dwarf: off CPU: [1-9][0-9]* stack copies at switch-out: [1-9][0-9]* counted" \
	"$TMP/err" || fail "no off-CPU copy summary"
check_callers "$TMP/off.folded" offcpu
ts=$(truth "$TMP/truth" wait_sleep)
tp=$(truth "$TMP/truth" wait_pipe)
ss=$(frame_total "$TMP/off.folded" "$comm" wait_sleep)
sp=$(frame_total "$TMP/off.folded" "$comm" wait_pipe)
echo "offcpu: wait_sleep $ss us (truth $ts), wait_pipe $sp us (truth $tp)"
awk -v ss="$ss" -v sp="$sp" -v ts="$ts" -v tp="$tp" 'BEGIN {
	share = 100 * ss / (ss + sp); tshare = 100 * ts / (ts + tp); ratio = (ss + sp) / (ts + tp)
	printf "wait_sleep share %.1f%% (truth %.1f%%); blocked total %.3f of the truth\n", share, tshare, ratio
	exit (share < tshare - 3 || share > tshare + 3 || ratio < 0.95 || ratio > 1.05)
}' || fail "dwarf off-CPU profile is not true"
grep -q "^$comm;.*;wait_sleep;__nanosleep;.*;__schedule_\[k\] [0-9]*$" "$TMP/off.folded" ||
	fail "kernel stacks do not end at __schedule"

# the frame-pointer walk of the same binary, for comparison
"$SCORCH" record --unwind fp --mode offcpu -o "$TMP/fp.folded" -- "$BLOCK_NOFP" --seconds 1 \
	--libc >/dev/null 2>"$TMP/fp.err" || fail "offcpu --unwind fp record failed: $(cat "$TMP/fp.err")"
read -r t k < <(callers "$TMP/fp.folded" __nanosleep wait_sleep)
echo "offcpu fp (for comparison): $t us in __nanosleep, $k with wait_sleep as its caller"
# the walk through code without frame pointers reaches data: cut there as [unknown]
# at the root, never named as a mapping of data, and the summary says where and why
awk '{ n = split($0, a, ";"); for (i = 2; i <= n; i++) if (a[i] ~ /^\[(heap|stack|anon)/) { print; exit 1 } }' \
	"$TMP/fp.folded" || fail "frame-pointer junk named as data"
grep -q "^$comm;\[unknown\];" "$TMP/fp.folded" || fail "no stack cut at a junk address: $(head -n 3 "$TMP/fp.folded")"
grep -q '^scorch: cut stacks: .* of off-CPU time have user stacks cut at an address in no code' "$TMP/fp.err" ||
	fail "no warning of the cut stacks: $(cat "$TMP/fp.err")"
grep -q '^hint: record with --unwind kernel or --unwind dwarf' "$TMP/fp.err" || fail "no hint for the cut stacks"

# --min-block: the 30 ms sleeps are kept, the 20 ms pipe waits dropped and their copies
# counted as dropped (a pipe wait is the waker's 20 ms sleep plus its wake-up, which
# on a loaded machine can pass 25 ms: those are kept, rightly)
"$SCORCH" record -v --unwind dwarf --mode offcpu --min-block 25000 -o "$TMP/min.folded" -- \
	"$BLOCK_NOFP" --seconds 2 --libc >"$TMP/truth" 2>"$TMP/err" ||
	fail "--min-block record failed: $(cat "$TMP/err")"
ts=$(truth "$TMP/truth" wait_sleep)
tp=$(truth "$TMP/truth" wait_pipe)
ss=$(frame_total "$TMP/min.folded" "$comm" wait_sleep)
sp=$(frame_total "$TMP/min.folded" "$comm" wait_pipe)
echo "--min-block 25000: wait_sleep $ss us (truth $ts), wait_pipe $sp us (truth $tp)"
[ $((ss * 100)) -ge $((ts * 95)) ] || fail "--min-block dropped the long sleeps ($ss of $ts us)"
[ "$sp" -lt "$tp" ] || fail "--min-block kept every pipe wait ($sp us)"
grep -qE ' [1-9][0-9]* dropped by --min-block/--max-block' "$TMP/err" ||
	fail "dropped copies not reported: $(cat "$TMP/err")"

# wall: 15 ms burning, 30 ms sleeping, 20 ms on the pipe per round
"$SCORCH" record -v --unwind dwarf --mode wall -F 999 -o "$TMP/wall.folded" -- "$BLOCK_NOFP" \
	--seconds 3 --burn --libc >"$TMP/truth" 2>"$TMP/err" || fail "wall record failed: $(cat "$TMP/err")"
cat "$TMP/err" "$TMP/truth"
check_folded "$TMP/wall.folded"
check_callers "$TMP/wall.folded" wall
tb=$(truth "$TMP/truth" burn_cpu)
ts=$(truth "$TMP/truth" wait_sleep)
tp=$(truth "$TMP/truth" wait_pipe)
tt=$(truth "$TMP/truth" total)
sb=$(frame_total "$TMP/wall.folded" "$comm" burn_cpu)
ss=$(frame_total "$TMP/wall.folded" "$comm" wait_sleep)
sp=$(frame_total "$TMP/wall.folded" "$comm" wait_pipe)
all=$(comm_total "$TMP/wall.folded" "$comm")
m=$(frame_total "$TMP/wall.folded" "$comm" main)
echo "wall: burn_cpu $sb (truth $tb), wait_sleep $ss ($ts), wait_pipe $sp ($tp); thread $all us, $m reaching main, wall $tt us"
awk -v sb="$sb" -v ss="$ss" -v sp="$sp" -v tb="$tb" -v ts="$ts" -v tp="$tp" -v all="$all" -v tt="$tt" -v m="$m" 'BEGIN {
	s = sb + ss + sp; t = tb + ts + tp; bad = 0
	split("burn_cpu wait_sleep wait_pipe", n, " ")
	v[1] = sb; v[2] = ss; v[3] = sp; w[1] = tb; w[2] = ts; w[3] = tp
	for (i = 1; i <= 3; i++) {
		printf "%s: %.1f%% of wall (truth %.1f%%)\n", n[i], 100 * v[i] / s, 100 * w[i] / t
		if (100 * v[i] / s < 100 * w[i] / t - 3 || 100 * v[i] / s > 100 * w[i] / t + 3) bad = 1
	}
	printf "thread total %.3f of its wall time; %.1f%% reaching main\n", all / tt, 100 * m / all
	if (all < 0.95 * tt || all > 1.05 * tt || m < 0.95 * all) bad = 1
	exit bad
}' || fail "dwarf wall-clock profile is not true"
grep -q ";\[off-cpu\] [0-9]*$" "$TMP/wall.folded" || fail "no [off-cpu] marker in wall mode"
echo PASS
