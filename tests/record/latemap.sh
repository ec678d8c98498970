#!/bin/bash
# SPDX-License-Identifier: MIT
# Code mapped after a process was first sampled (tests/workloads/latemap.c): a library
# loaded with dlopen() and an anonymous page made executable, each after 0.5 s of
# samples. Their frames must be named ("late_spin", "[jit]"), not [unknown], with frame
# pointers and with --unwind dwarf: the BPF programs see the process's executable
# mappings change and scorch reads its maps again while it lives. Then a process that turns
# a page executable and back thousands of times a second: the notices stay within their
# limit (one per process image per 100 ms).
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

for mode in fp dwarf; do
	"$SCORCH" record -v --unwind $mode -F 999 -o "$TMP/$mode.folded" -- \
		"$LATEMAP" 0.5 2 "$LATELIB" >"$TMP/out" 2>"$TMP/err" ||
		fail "$mode: record failed ($?): $(cat "$TMP/err")"
	grep -q "^latemap: [1-9]" "$TMP/out" || fail "$mode: the workload did not run: $(cat "$TMP/out") $(cat "$TMP/err")"
	check_folded "$TMP/$mode.folded"
	total=$(comm_total "$TMP/$mode.folded" latemap)
	early=$(frame_total "$TMP/$mode.folded" latemap early_spin)
	lib=$(frame_total "$TMP/$mode.folded" latemap late_spin)
	jit=$(frame_total "$TMP/$mode.folded" latemap "[jit]")
	echo "$mode: samples $total: early_spin $early, late_spin (dlopen) $lib, anonymous page $jit;" \
		"$(grep -o '[0-9]* notices of new executable mappings' "$TMP/err")"
	[ "$total" -ge 1000 ] || fail "$mode: too few samples of the workload ($total)"
	# 0.5 s before, 1 s in each late part: a quarter of the samples is a wide margin
	[ "$early" -ge $((total / 8)) ] || fail "$mode: early_spin has $early of $total samples"
	[ "$lib" -ge $((total / 4)) ] ||
		fail "$mode: the library loaded late is named in $lib of $total samples: $(sort -t' ' -k2 -rn "$TMP/$mode.folded" | head -n 3)"
	[ "$jit" -ge $((total / 4)) ] ||
		fail "$mode: the executable page mapped late is named in $jit of $total samples: $(sort -t' ' -k2 -rn "$TMP/$mode.folded" | head -n 3)"
done

"$SCORCH" record -v -F 999 -o "$TMP/flip.folded" -- "$LATEMAP" flip 2 >"$TMP/out" 2>"$TMP/err" ||
	fail "flip: record failed ($?): $(cat "$TMP/err")"
flips=$(sed -n 's/^latemap: \([0-9]*\) flips$/\1/p' "$TMP/out")
notices=$(sed -n 's/.*; \([0-9]*\) notices of new executable mappings.*/\1/p' "$TMP/err")
echo "flip: $flips flips in 2 s, $notices notices"
[ "${flips:-0}" -ge 200 ] || fail "flip: the workload flipped too little: $(cat "$TMP/out")"
[ -n "$notices" ] && [ "$notices" -ge 1 ] || fail "flip: no notice of the flips: $(cat "$TMP/err")"
# 2 s at one per 100 ms, for the image after exec and the one before (scorch's child)
[ "$notices" -le 25 ] || fail "flip: $notices notices for $flips flips: not rate-limited"
echo PASS
