#!/bin/bash
# SPDX-License-Identifier: MIT
# Limits are reported, never silent: stacks deeper than the depth limit start with
# [truncated]; a stack map too small for the distinct stacks loses samples, says so
# with a hint, and exits 3 (partial result).
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

max=$(cat /proc/sys/kernel/perf_event_max_stack)
[ "$max" -gt 127 ] && max=127

# depths 1..300 in turn: stacks deeper than the limit are cut at the root
"$SCORCH" record --unwind fp -U -F 999 -o "$TMP/deep.folded" -- "$SPLIT" --recurse 300 --seconds 2 \
	2>"$TMP/err" || fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/deep.folded"
trunc=$(grep -c '^split;\[truncated\];recurse;' "$TMP/deep.folded" || true)
[ "$trunc" -gt 0 ] || fail "no [truncated] stacks from a 300-deep recursion"
grep -q ';\[truncated\]' "$TMP/deep.folded" && grep -v '^split;\[truncated\];' "$TMP/deep.folded" |
	grep -q ';\[truncated\]' && fail "[truncated] not right after the comm"
# a truncated stack holds exactly the depth limit of user frames
awk -v max="$max" '/^split;\[truncated\];/ { line = $0; sub(/ [0-9]+$/, "", line)
	n = split(line, a, ";"); if (n - 2 != max) { print "frames: " n - 2 ", limit " max; exit 1 } }' \
	"$TMP/deep.folded" || fail "truncated stacks are not cut at the limit"
# shallow ones are complete: they reach main
grep -v '^split;\[truncated\];' "$TMP/deep.folded" | grep '^split;' | grep -qv ';main;' &&
	grep -v '^split;\[truncated\];' "$TMP/deep.folded" | grep '^split;' | grep -v ';main;' |
	awk '{ s += $NF } END { exit !(s > 10) }' && fail "untruncated stacks do not reach main"
grep -q 'truncated stacks: [1-9][0-9]* user' "$TMP/err" || fail "summary does not count truncated stacks"
echo "truncation ok: $trunc truncated stacks"

# 300 distinct stacks into a 64-entry map: losses counted, hinted, exit 3
rc=0
"$SCORCH" record --unwind fp -U -F 999 --max-stacks 64 -o "$TMP/small.folded" -- \
	"$SPLIT" --recurse 300 --seconds 2 2>"$TMP/err" || rc=$?
cat "$TMP/err"
[ "$rc" -eq 3 ] || fail "a run that lost most samples exited $rc, expected 3"
grep -qE 'lost: [1-9][0-9]* stack map full' "$TMP/err" || fail "no stack-map loss reported"
grep -q '^hint: raise --max-stacks' "$TMP/err" || fail "no hint for the loss"
[ -s "$TMP/small.folded" ] || fail "no output for a partial result"
stacks=$(wc -l <"$TMP/small.folded")
[ "$stacks" -le 64 ] || fail "$stacks stacks from a 64-entry map"
echo PASS
