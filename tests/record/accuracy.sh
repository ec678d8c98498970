#!/bin/bash
# SPDX-License-Identifier: MIT
# A workload whose split is known by construction (50/30/20 % of its CPU time in
# burn_a/b/c) must come out within 3 points, with >= 97 % of its samples reaching
# main. Exercises `record -- cmd` and the folded contract.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

"$SCORCH" record --unwind fp -F 999 -o "$TMP/split.folded" -- "$SPLIT" --seconds 5 2>"$TMP/err" ||
	fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/split.folded"

total=$(comm_total "$TMP/split.folded" split)
a=$(frame_total "$TMP/split.folded" split burn_a)
b=$(frame_total "$TMP/split.folded" split burn_b)
c=$(frame_total "$TMP/split.folded" split burn_c)
m=$(frame_total "$TMP/split.folded" split main)
echo "split samples: $total; burn_a $a, burn_b $b, burn_c $c; reaching main $m"
[ "$total" -ge 2000 ] || fail "too few samples of the workload ($total)"

awk -v a="$a" -v b="$b" -v c="$c" -v m="$m" -v t="$total" 'BEGIN {
	s = a + b + c
	pa = 100 * a / s; pb = 100 * b / s; pc = 100 * c / s; pm = 100 * m / t
	printf "shares: burn_a %.1f%% (50), burn_b %.1f%% (30), burn_c %.1f%% (20); main %.1f%%\n", pa, pb, pc, pm
	d = 0
	if (pa < 47 || pa > 53) { print "burn_a share off by more than 3 points"; d = 1 }
	if (pb < 27 || pb > 33) { print "burn_b share off by more than 3 points"; d = 1 }
	if (pc < 17 || pc > 23) { print "burn_c share off by more than 3 points"; d = 1 }
	if (pm < 97) { print "fewer than 97% of samples reach main"; d = 1 }
	if (s < 0.95 * t) { print "fewer than 95% of samples are in burn_a/b/c"; d = 1 }
	exit d
}' || fail "profile of the known workload is not true"
echo PASS
