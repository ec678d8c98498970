#!/bin/bash
# SPDX-License-Identifier: MIT
# Limits are reported, never silent: stacks deeper than the depth limit start with
# [truncated]; a stack map too small for the distinct stacks loses samples, says so
# with a hint, and exits 3 (partial result); with --interval, stacks of the past leave it.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

max=$(cat /proc/sys/kernel/perf_event_max_stack)
[ "$max" -gt 127 ] && max=127

# depths 1..300 in turn: stacks deeper than the limit are cut at the root
"$SCORCH" record -v --unwind fp -U -F 999 -o "$TMP/deep.folded" -- "$SPLIT" --recurse 300 --seconds 2 \
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
grep -q "^scorch: cut stacks: .* of on-CPU samples have user stacks deeper than their walk goes (.*, $max by frame pointers" "$TMP/err" ||
	fail "no cut-stacks line for the depth limit"
grep -q '^hint: .*perf_event_max_stack' "$TMP/err" || fail "no hint for the depth limit"
echo "truncation ok: $trunc truncated stacks"

# without -v, a cut root is warned of by the share of samples it misplaces: depths
# 1..100 in turn, 103 frames kept, so about 3 % of the samples are [truncated]
"$SCORCH" record --unwind kernel --max-depth 103 -F 999 -o "$TMP/few.folded" -- \
	"$SPLIT" --recurse 100 --seconds 2 >/dev/null 2>"$TMP/err" || fail "record failed: $(cat "$TMP/err")"
share=$(awk '{ c = $NF; t += c } /\[truncated\]/ { x += c } END { printf "%.1f", 100 * x / t }' "$TMP/few.folded")
echo "[truncated]: $share % of the samples"
awk -v s="$share" 'BEGIN { exit !(s >= 2.2 && s <= 5) }' || fail "[truncated] is $share % of the samples, not about 3"
grep -q "^scorch: cut stacks: .* of on-CPU samples have user stacks deeper than their walk goes" "$TMP/err" ||
	fail "no warning for $share % of the samples cut at the root: $(cat "$TMP/err")"

# 300 distinct stacks into a 64-entry map: losses counted, hinted, exit 3
rc=0
"$SCORCH" record -v --unwind fp -U -F 999 --max-stacks 64 -o "$TMP/small.folded" -- \
	"$SPLIT" --recurse 300 --seconds 2 2>"$TMP/err" || rc=$?
cat "$TMP/err"
[ "$rc" -eq 3 ] || fail "a run that lost most samples exited $rc, expected 3"
grep -qE 'lost: [1-9][0-9]* stack map full' "$TMP/err" || fail "no stack-map loss reported"
grep -q '^hint: raise --max-stacks' "$TMP/err" || fail "no hint for the loss"
[ -s "$TMP/small.folded" ] || fail "no output for a partial result"
stacks=$(wc -l <"$TMP/small.folded")
# a line per count key (the count map has 64 entries too); a reap of an exited process
# (a child that ran before exec) takes its keys out: the map takes as many new ones
freed=$(sed -n 's/^debug: reaps: \([0-9]*\) count keys .*/\1/p' "$TMP/err")
[ -n "$freed" ] || fail "no reaps line in -v's output"
[ "$stacks" -le $((64 + freed)) ] || fail "$stacks stacks from 64-entry maps ($freed keys reaped)"

# --interval: a stack no key used for a whole interval leaves the stack map, so a long
# recording does not fill it with the past. split's stacks drift (depths 1..96, 8 at a
# time: 12 phases of 0.5 s, about 20 distinct stacks each, 250 in all) through a 128-entry
# map in 0.5-s intervals: nothing lost (without the aging half the samples are), and the
# last phase (depths 89-96) is in the last interval that has samples.
mkdir "$TMP/drift"
rc=0
"$SCORCH" record -v --unwind fp -U -F 999 --max-stacks 128 --interval 0.5 -o "$TMP/drift/d.folded" \
	-- "$SPLIT" --recurse 96 --drift 8 --seconds 6 2>"$TMP/err" >/dev/null || rc=$?
cat "$TMP/err"
[ "$rc" -eq 0 ] || fail "drifting stacks through a 128-entry map: exit $rc, expected 0"
grep -q '^scorch: lost: 0 of [1-9]' "$TMP/err" || fail "drifting stacks lost samples"
counted=$(figure counted "$TMP/err")
total=$(cat "$TMP"/drift/d-*.folded | awk '{ s += $NF } END { print s + 0 }')
[ -n "$counted" ] && [ "$total" -eq "$counted" ] ||
	fail "the intervals hold $total samples, the summary counted '$counted'"
last=$(for f in "$TMP"/drift/d-*.folded; do [ -s "$f" ] && echo "$f"; done | tail -1)
deepest=$(awk '{ n = gsub(/;recurse/, ""); if (n > m) m = n } END { print m + 0 }' "$last")
[ "$deepest" -ge 89 ] || fail "the last interval ($last) is $deepest deep at most, not 89-96"
echo "drift ok: $total samples in $(ls "$TMP"/drift | wc -l) intervals, the last $deepest deep"
echo PASS
