#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/summary.py on what a real recording prints: scorch record of the known split
# (tests/workloads/split.c: 2 threads busy for 1 s) in cpu mode, with and without -v,
# and of the blocking workload off CPU and in wall mode. The reader must find the
# summary's figures, and they must be the recording's: samples no more than 2 threads x
# 999 Hz take in the seconds read and equal to the samples in the folded output (none
# lost), intervals counted off CPU. A summary whose wording the reader does not follow fails
# here, as in the benches (bench/time-to-result.sh, load-bench.sh) that count on it.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

folded_total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }

# the cost governor's line: at -F 100000 on both threads the rate is lowered, and the
# reader gives the lowest and average rates it says
rate_path=/proc/sys/kernel/perf_event_max_sample_rate
old_rate=$(cat "$rate_path")
trap 'echo "$old_rate" >"$rate_path"; rm -rf "$TMP"' EXIT
echo 100000 >"$rate_path"
"$SCORCH" record -F 100000 -o "$TMP/gov.folded" -- "$SPLIT" --seconds 1 --threads 2 \
	2>"$TMP/gov.err" || fail "record -F 100000 failed: $(cat "$TMP/gov.err")"
read -r lowest average < <(figure rate "$TMP/gov.err") || fail "no rate read"
echo "record -F 100000: the reader read the rate lowered to $lowest Hz, $average on average"
[ "$lowest" -lt 100000 ] && [ "$average" -lt 100000 ] && [ "$lowest" -le "$average" ] ||
	fail "record -F 100000: read $lowest and $average Hz: $(cat "$TMP/gov.err")"
echo "$old_rate" >"$rate_path"

# cpu, the default summary and -v's
for v in "" -v; do
	"$SCORCH" record $v -F 999 -o "$TMP/cpu.folded" -- "$SPLIT" --seconds 1 --threads 2 \
		2>"$TMP/cpu.err" || fail "record $v failed: $(cat "$TMP/cpu.err")"
	grep -v '^debug: ' "$TMP/cpu.err"
	what="record${v:+ $v}"
	samples=$(figure samples "$TMP/cpu.err") || fail "$what: no sample count read"
	hz=$(figure hz "$TMP/cpu.err")
	lost=$(figure lost-pct "$TMP/cpu.err")
	total=$(folded_total "$TMP/cpu.folded")
	echo "$what: the reader read $samples samples at $hz Hz, $lost % lost; the output holds $total"
	[ "$hz" = 999 ] || fail "$what: read $hz Hz, recorded at 999"
	# at most 2 threads x 999 Hz over the seconds read; at least a tenth of that (the
	# machine may be busy: the figure is the reader's, not the sampler's accuracy)
	secs=$(figure seconds "$TMP/cpu.err")
	awk -v n="$samples" -v s="$secs" 'BEGIN { exit !(n >= 200 && n <= 2 * 999 * s * 1.02 + 2) }' ||
		fail "$what: read $samples samples in $secs s, 2 threads at 999 Hz take about 2,000"
	if [ "$lost" = 0.0 ] || [ "$lost" = 0 ]; then
		[ "$total" -eq "$samples" ] || fail "$what: read $samples samples, the output holds $total"
	fi
	if [ -n "$v" ]; then
		counted=$(figure counted "$TMP/cpu.err")
		[ "$counted" -eq "$total" ] || fail "record -v: read $counted counted, the output holds $total"
	fi
done

# off CPU and wall: intervals counted, seconds recorded
for mode in offcpu wall; do
	"$SCORCH" record --mode "$mode" -F 999 -o "$TMP/$mode.folded" -- "$BLOCK" --seconds 1 \
		2>"$TMP/$mode.err" || fail "record --mode $mode failed: $(cat "$TMP/$mode.err")"
	cat "$TMP/$mode.err"
	[ "$(figure mode "$TMP/$mode.err")" = "$mode" ] || fail "$mode: read another mode's summary"
	intervals=$(figure intervals "$TMP/$mode.err")
	secs=$(figure seconds "$TMP/$mode.err")
	echo "--mode $mode: the reader read $intervals intervals in $secs s"
	[ "$intervals" -gt 0 ] || fail "--mode $mode: read no off-CPU interval"
	awk -v s="$secs" 'BEGIN { exit !(s >= 0.9 && s <= 3) }' || fail "--mode $mode: read $secs s"
done
echo PASS
