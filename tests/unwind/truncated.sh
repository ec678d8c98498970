#!/bin/bash
# SPDX-License-Identifier: MIT
# Stacks deeper than the copy: with --stack-size 1024 and recursion 1..80 deep
# (recurse() frames are at least 16 bytes: depth 80 needs more than 1 KiB), the
# deep samples must end in [truncated] at the root and be counted in the summary,
# and every other sample must reach main: nothing cut silently.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# not governed: the walks the summary counts are compared with the folded counts, which
# weigh each sample by the periods it stands for once the governor lowers the rate (an
# ASan build's start-up can cost that much)
"$SCORCH" record -v --unwind dwarf --stack-size 1024 -F 999 --max-overhead 0 -o "$TMP/t.folded" -- \
	"$SPLIT_NOFP" --seconds 3 --recurse 80 2>"$TMP/err" || fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/t.folded"
comm=$(basename "$SPLIT_NOFP")
total=$(comm_total "$TMP/t.folded" "$comm")
trunc=$(awk -v c="$comm" '{ n = split($0, a, ";"); if (a[1] == c && a[2] == "[truncated]") t += $NF } END { print t + 0 }' "$TMP/t.folded")
m=$(frame_total "$TMP/t.folded" "$comm" main)
echo "samples $total, [truncated] $trunc, reaching main $m"
[ "$trunc" -gt 0 ] || fail "no stack marked [truncated]"
[ $((trunc + m)) -ge $((total * 98 / 100)) ] || fail "stacks neither complete nor marked [truncated]"
reported=$(sed -n 's/.* complete, \([0-9]*\) cut at the --stack-size copy.*/\1/p' "$TMP/err")
[ -n "$reported" ] && [ "$reported" -ge "$trunc" ] || fail "summary does not count the truncated walks ($reported < $trunc)"
grep -q "hint: raise --stack-size" "$TMP/err" || fail "no hint about --stack-size"
echo PASS
