#!/bin/bash
# SPDX-License-Identifier: MIT
# --unwind dwarf copies a thread's stack only up to what its complete walks read (its
# learned stack top). tests/unwind/stacktop.c first runs on a coroutine stack inside
# main()'s frame (top learned there), then on the real stack below it, where that top
# cuts main() and _start off: the profiler must forget it after the first cut walks,
# learn the higher one, and count the few walks cut meanwhile as [truncated].
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

"$SCORCH" record -v --unwind dwarf -F 999 -o "$TMP/s.folded" -- "$STACKTOP" 2 >"$TMP/out" 2>"$TMP/err" ||
	fail "record failed ($?): $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/s.folded"
grep -q "^stacktop: done" "$TMP/out" || fail "the workload did not run: $(cat "$TMP/out")"
line=$(grep "copies ended at their thread's known stack top" "$TMP/err") || fail "no stack top summary"
learned=$(sed -n 's/.*(\([0-9]*\) tops learned.*/\1/p' <<<"$line")
forgot=$(sed -n 's/.* \([0-9]*\) forgotten after.*/\1/p' <<<"$line")
cut=$(sed -n 's/.*; \([0-9]*\) walks cut by them.*/\1/p' <<<"$line")
co=$(frame_total "$TMP/s.folded" stacktop co_entry)
stack=$(frame_total "$TMP/s.folded" stacktop on_stack)
full=$(awk '{ n = split($0, a, ";"); if (a[1] == "stacktop" && a[2] == "_start" && $0 ~ /;on_stack;/) t += $NF } END { print t + 0 }' "$TMP/s.folded")
trunc=$(awk '{ n = split($0, a, ";"); if (a[1] == "stacktop" && a[2] == "[truncated]") t += $NF } END { print t + 0 }' "$TMP/s.folded")
echo "tops learned $learned, forgotten $forgot, walks cut $cut; coroutine $co, real stack $stack ($full from _start), [truncated] $trunc"
[ "$co" -ge 500 ] && [ "$stack" -ge 500 ] || fail "too few samples on one of the stacks"
[ "$forgot" -ge 1 ] || fail "the coroutine's top was never forgotten"
[ "$learned" -ge 2 ] || fail "no top learned on the real stack"
[ "$trunc" -eq "$cut" ] || fail "[truncated] stacks ($trunc) are not the walks cut by tops ($cut)"
# every real-stack sample reaches _start or is counted as cut; the cut ones are those taken
# before scorch read the first of them and forgot the top: a few ms of samples, up to the
# ring's read period (250 ms) on a slow (sanitized, loaded) scorch
[ $((full + trunc)) -ge $((stack * 99 / 100)) ] ||
	fail "real-stack samples neither reaching _start nor counted as cut: $((stack - full - trunc)) of $stack"
[ "$full" -ge $((stack * 75 / 100)) ] || fail "fewer than 75% of the real stack's samples reach _start"
echo PASS
