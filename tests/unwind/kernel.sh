#!/bin/bash
# SPDX-License-Identifier: MIT
# --unwind kernel: user stacks walked in the BPF programs with tables compiled from the
# files' .eh_frame, counted in the kernel. On code without frame pointers (split.c and
# block.c built -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -g, and Debian's
# libc):
# - cpu mode, a process already running (-p: its tables are read before sampling):
#   the 50/30/20 split of burn_a/b/c within 3 points, >= 97 % of the samples reaching
#   main through libc's __libc_start_call_main, every walk with tables complete;
# - offcpu mode, a command (its first waits, before its tables load, are walked by
#   frame pointers): >= 95 % of the time blocked in libc's nanosleep and read keeps
#   its caller and reaches main, the shares within 3 points of the workload's own
#   measurements, the total within 5 %;
# - recursion 1..300 deep, deeper than one stored stack (127 words): >= 95 % of the
#   samples reach main, on CPU by default (the copy unwound here) and with the kernel
#   walk, and off CPU (block.c's rounds 300 calls down);
# - the parts of deep stacks leave the stack map with their keys: 20 processes in turn,
#   each blocking 300 calls down, through a 64-entry map (kept, they would lose 40 % of
#   the intervals): at most 2 % lost (a reap put off while the CPUs are busy may let a
#   few processes' stacks pile up); stacks drifting through depths 1..296 in a
#   256-entry map with --interval 0.25: the aging deletes no part still in use (at most
#   2 % lost);
# - the same with --max-depth 100: the walk stops at 100 frames, those stacks begin
#   with [truncated] and the summary counts the walks ended at the depth limit; every
#   other sample reaches main.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# cpu mode, -p
"$SPLIT_NOFP" --seconds 8 >/dev/null &
WL=$!
trap 'kill $WL 2>/dev/null || true; rm -rf "$TMP"' EXIT
"$SCORCH" record -v --unwind kernel -F 999 -p "$WL" -d 3 -o "$TMP/cpu.folded" 2>"$TMP/err" ||
	fail "record --unwind kernel failed: $(grep -v '^debug' "$TMP/err")"
kill $WL 2>/dev/null || true
grep '^scorch: unwind kernel' "$TMP/err"
check_folded "$TMP/cpu.folded"
walks=$(sed -n 's/^scorch: unwind kernel: \([0-9]*\) walks with tables: \([0-9]*\) complete.*/\1 \2/p' "$TMP/err")
read -r w c <<<"$walks"
# all complete but a rare sample at a process's edges (ld.so before its stack is set)
[ -n "$w" ] && [ "$w" -ge 1000 ] && [ $((c * 1000)) -ge $((w * 995)) ] ||
	fail "walks with tables: '$walks' (want >= 1000, 99.5 % complete)"
comm=$(basename "$SPLIT_NOFP")
m=$(frame_total "$TMP/cpu.folded" "$comm" main)
l=$(frame_total "$TMP/cpu.folded" "$comm" __libc_start_call_main)
echo "cpu: reaching main $m (via libc $l)"
[ "$l" -ge "$m" ] || fail "main reached without its libc caller ($l < $m)"
split_shares "$TMP/cpu.folded" "$comm" 97 || fail "the kernel-walked profile of the known workload is not true"

# offcpu mode, a command: 30 ms in wait_sleep and 20 ms in wait_pipe per round
"$SCORCH" record -v --unwind kernel --mode offcpu -o "$TMP/off.folded" -- "$BLOCK_NOFP" \
	--seconds 3 --libc >"$TMP/truth" 2>"$TMP/err" ||
	fail "offcpu record failed: $(grep -v '^debug' "$TMP/err")"
grep '^scorch: unwind kernel' "$TMP/err"
cat "$TMP/truth"
check_folded "$TMP/off.folded"
comm=$(basename "$BLOCK_NOFP")
truth() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$1"; }
# time of the main thread's stacks through libc's NAME, and the part of it under
# CALLER reaching main: "TOTAL WITH_CALLER"
callers() { # FILE NAME CALLER
	awk -v c="$comm" -v fn="$2" -v caller="$3" '{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		n = split(line, a, ";"); if (a[1] != c) next
		for (i = 3; i <= n; i++) if (a[i] == fn) {
			t += cnt; if (a[i - 1] == caller && a[i - 2] == "main") k += cnt; break
		}
	} END { printf "%d %d\n", t, k }' "$1"
}
for pair in "__nanosleep wait_sleep" "read wait_pipe"; do
	read -r fn caller <<<"$pair"
	read -r t k < <(callers "$TMP/off.folded" "$fn" "$caller")
	echo "offcpu: $t us in $fn, $k under main;$caller"
	[ "$t" -gt 300000 ] || fail "too little time in $fn ($t us)"
	[ $((k * 100)) -ge $((t * 95)) ] || fail "$fn lost its callers ($k of $t us)"
done
ts=$(truth "$TMP/truth" wait_sleep)
tp=$(truth "$TMP/truth" wait_pipe)
ss=$(frame_total "$TMP/off.folded" "$comm" wait_sleep)
sp=$(frame_total "$TMP/off.folded" "$comm" wait_pipe)
echo "offcpu: wait_sleep $ss us (truth $ts), wait_pipe $sp us (truth $tp)"
awk -v ss="$ss" -v sp="$sp" -v ts="$ts" -v tp="$tp" 'BEGIN {
	share = 100 * ss / (ss + sp); tshare = 100 * ts / (ts + tp); ratio = (ss + sp) / (ts + tp)
	printf "wait_sleep share %.1f%% (truth %.1f%%); blocked total %.3f of the truth\n", share, tshare, ratio
	exit (share < tshare - 3 || share > tshare + 3 || ratio < 0.95 || ratio > 1.05)
}' || fail "the kernel-walked off-CPU profile is not true"
# deep stacks: recursion 1..300 deep reaches main on CPU, by the copy (the default)
# and by the kernel walk, whose stacks take several parts of the stack map
comm=$(basename "$SPLIT_NOFP")
for unwind in auto kernel; do
	"$SCORCH" record -v --unwind $unwind -F 999 -o "$TMP/deep.folded" -- "$SPLIT_NOFP" \
		--seconds 2 --recurse 300 2>"$TMP/err" >/dev/null ||
		fail "deep record ($unwind) failed: $(grep -v '^debug' "$TMP/err")"
	total=$(comm_total "$TMP/deep.folded" "$comm")
	m=$(frame_total "$TMP/deep.folded" "$comm" main)
	deepest=$(awk '{ n = gsub(/;recurse/, ""); if (n > d) d = n } END { print d + 0 }' "$TMP/deep.folded")
	echo "deep ($unwind): $total samples, $m reaching main, $deepest recurse frames at most"
	[ "$deepest" -ge 290 ] || fail "the deepest stack ($unwind) has $deepest recurse frames, not ~300"
	[ $((m * 100)) -ge $((total * 95)) ] || fail "deep stacks ($unwind) do not reach main ($m of $total)"
	grep -q 'cut stacks: .*deeper than' "$TMP/err" && fail "deep stacks ($unwind) reported cut"
done
# off CPU: the main thread waits 300 calls down
bcomm=$(basename "$BLOCK_NOFP")
"$SCORCH" record -v --mode offcpu -o "$TMP/doff.folded" -- "$BLOCK_NOFP" --seconds 2 --libc \
	--deep 300 >/dev/null 2>"$TMP/err" || fail "deep offcpu record failed: $(grep -v '^debug' "$TMP/err")"
read -r t k < <(awk -v c="$bcomm" '{
	line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
	n = split(line, a, ";"); if (a[1] != c || line !~ /;descend;/) next
	t += cnt; for (i = 2; i <= n; i++) if (a[i] == "main") { k += cnt; break }
} END { printf "%d %d\n", t, k }' "$TMP/doff.folded")
echo "deep offcpu: $t us blocked under descend, $k reaching main"
[ "$t" -gt 1000000 ] || fail "too little time blocked 300 calls down ($t us)"
[ $((k * 100)) -ge $((t * 95)) ] || fail "deep off-CPU stacks do not reach main ($k of $t us)"
# "LOST TOTAL" of the summary in FILE
lost_of() { figure lost "$1"; }
# the parts of deep stacks leave the map with the keys of exited processes ...
"$SCORCH" record -v --mode offcpu --max-stacks 64 -o "$TMP/reap.folded" -- sh -c \
	"for i in \$(seq 20); do '$BLOCK_NOFP' --seconds 0.2 --libc --deep 300 >/dev/null; done" \
	2>"$TMP/err" || fail "deep processes in turn: exit $? ($(grep '^scorch: lost' "$TMP/err"))"
read -r l t < <(lost_of "$TMP/err")
echo "deep processes in turn: ${l:-?} of ${t:-?} intervals lost"
[ -n "$t" ] && [ "$t" -gt 100 ] && [ $((l * 50)) -le "$t" ] ||
	fail "deep processes in turn lost ${l:-?} of ${t:-?} intervals"
grep -c ';descend;descend;' "$TMP/reap.folded" >/dev/null || fail "no deep stacks from the processes in turn"
# ... and with --interval, once unused for one
mkdir "$TMP/drift"
"$SCORCH" record -v --unwind kernel -U -F 999 --max-stacks 256 --interval 0.25 \
	-o "$TMP/drift/d.folded" -- "$SPLIT_NOFP" --recurse 296 --drift 8 --seconds 6 \
	2>"$TMP/err" >/dev/null || fail "drifting deep stacks: exit $? ($(grep '^scorch: lost' "$TMP/err"))"
read -r l t < <(lost_of "$TMP/err")
echo "drifting deep stacks: ${l:-?} of ${t:-?} samples lost"
[ -n "$t" ] && [ "$t" -gt 1000 ] && [ $((l * 50)) -le "$t" ] ||
	fail "drifting deep stacks lost ${l:-?} of ${t:-?} samples"
deepest=$(cat "$TMP"/drift/d-*.folded | awk '{ n = gsub(/;recurse/, ""); if (n > d) d = n } END { print d + 0 }')
[ "$deepest" -ge 250 ] || fail "drifting stacks are $deepest deep at most"
# the depth limit: --max-depth 100; not governed: the walks counted are compared with the
# folded counts, which weigh samples by their periods when the governor lowers the rate
"$SCORCH" record -v --unwind kernel --max-depth 100 -F 999 --max-overhead 0 -o "$TMP/deep.folded" -- \
	"$SPLIT_NOFP" --seconds 2 --recurse 300 2>"$TMP/err" >/dev/null ||
	fail "deep record failed: $(grep -v '^debug' "$TMP/err")"
total=$(comm_total "$TMP/deep.folded" "$comm")
trunc=$(awk -v c="$comm" '{ n = split($0, a, ";"); if (a[1] == c && a[2] == "[truncated]") t += $NF } END { print t + 0 }' "$TMP/deep.folded")
m=$(frame_total "$TMP/deep.folded" "$comm" main)
depth=$(sed -n 's/.* at bad registers, \([0-9]*\) at the depth limit (100).*/\1/p' "$TMP/err")
# the first samples, before the tables, are frame-pointer walks: cut at 127
early=$(sed -n 's/.*; \([0-9]*\) stacks of processes without tables yet.*/\1/p' "$TMP/err")
echo "depth limit: $total samples, [truncated] $trunc, reaching main $m, walks at the depth limit ${depth:-?}, ${early:-?} before the tables"
[ "$trunc" -gt 0 ] || fail "no stack marked [truncated]"
[ -n "$depth" ] && [ $((depth + ${early:-0})) -ge "$trunc" ] && [ "$depth" -le "$trunc" ] ||
	fail "the depth limit is not counted (${depth:-none} + ${early:-0} against $trunc)"
[ $((trunc + m)) -ge $((total * 98 / 100)) ] || fail "deep stacks neither complete nor marked [truncated]"
grep -q 'cut stacks: .*deeper than their walk goes (100 frames with tables' "$TMP/err" ||
	fail "no cut-stacks line for --max-depth"
grep -q '^hint: raise --max-depth' "$TMP/err" || fail "no hint for --max-depth"
echo PASS
