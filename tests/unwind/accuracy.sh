#!/bin/bash
# SPDX-License-Identifier: MIT
# --unwind dwarf on code without frame pointers (split.c built -O2
# -fomit-frame-pointer -fno-optimize-sibling-calls -g): the known 50/30/20 split of
# burn_a/b/c must come out within 3 points, with >= 95 % of the samples reaching main
# through libc's frames (__libc_start_call_main). After the first complete walks the
# kernel copies each thread's stack only up to what they read (its learned stack top):
# most copies must end there, with the walks still complete. The frame-pointer walk of
# the same binary is recorded too and its share reaching main printed, for comparison.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

"$SCORCH" record -v --unwind dwarf -F 999 -o "$TMP/dwarf.folded" -- "$SPLIT_NOFP" --seconds 5 \
	2>"$TMP/err" || fail "record --unwind dwarf failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/dwarf.folded"
grep -q "unwind dwarf: .* walks: " "$TMP/err" || fail "no unwinding summary"
sent=$(sed -n 's/.*unwind dwarf: \([0-9]*\) sample records.*/\1/p' "$TMP/err")
topped=$(sed -n 's/.*unwind dwarf: \([0-9]*\) copies ended at their thread.s known stack top.*/\1/p' "$TMP/err")
echo "copies: $sent, ended at the learned stack top: $topped"
[ -n "$topped" ] && [ "$topped" -ge $((sent * 9 / 10)) ] ||
	fail "fewer than 90% of the copies ended at the learned stack top ($topped of $sent)"

comm=$(basename "$SPLIT_NOFP")
total=$(comm_total "$TMP/dwarf.folded" "$comm")
a=$(frame_total "$TMP/dwarf.folded" "$comm" burn_a)
b=$(frame_total "$TMP/dwarf.folded" "$comm" burn_b)
c=$(frame_total "$TMP/dwarf.folded" "$comm" burn_c)
m=$(frame_total "$TMP/dwarf.folded" "$comm" main)
l=$(frame_total "$TMP/dwarf.folded" "$comm" __libc_start_call_main)
echo "dwarf: $total samples; burn_a $a, burn_b $b, burn_c $c; reaching main $m (via libc $l)"
[ "$total" -ge 2000 ] || fail "too few samples of the workload ($total)"
[ "$l" -ge "$m" ] || fail "main reached without its libc caller ($l < $m)"

awk -v a="$a" -v b="$b" -v c="$c" -v m="$m" -v t="$total" 'BEGIN {
	s = a + b + c
	pa = 100 * a / s; pb = 100 * b / s; pc = 100 * c / s; pm = 100 * m / t
	printf "shares: burn_a %.1f%% (50), burn_b %.1f%% (30), burn_c %.1f%% (20); main %.1f%%\n", pa, pb, pc, pm
	d = 0
	if (pa < 47 || pa > 53) { print "burn_a share off by more than 3 points"; d = 1 }
	if (pb < 27 || pb > 33) { print "burn_b share off by more than 3 points"; d = 1 }
	if (pc < 17 || pc > 23) { print "burn_c share off by more than 3 points"; d = 1 }
	if (pm < 95) { print "fewer than 95% of samples reach main"; d = 1 }
	if (s < 0.95 * t) { print "fewer than 95% of samples are in burn_a/b/c"; d = 1 }
	exit d
}' || fail "dwarf profile of the known workload is not true"

# the same binary with frame pointers walked: for comparison only (what dwarf fixes)
"$SCORCH" record --unwind fp -F 999 -q -o "$TMP/fp.folded" -- "$SPLIT_NOFP" --seconds 1 2>/dev/null ||
	fail "record --unwind fp failed"
echo "fp: $(comm_total "$TMP/fp.folded" "$comm") samples, $(frame_total "$TMP/fp.folded" "$comm" main) reaching main"
echo PASS
