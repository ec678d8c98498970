#!/bin/bash
# SPDX-License-Identifier: MIT
# --unwind dwarf on code without CFI whose rbp is -1 (tests/unwind/badframe.c): the
# frame-pointer fallback reads at addresses that wrap around; the recording must end
# normally and count the workload's samples (scorch crashed here once: an overflow in
# the stack-copy bounds check).
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

"$SCORCH" record --unwind dwarf -F 999 -o "$TMP/b.folded" -- "$BADFRAME" 2 >"$TMP/out" 2>"$TMP/err" ||
	fail "record failed ($?): $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/b.folded"
grep -q "^badframe: [1-9]" "$TMP/out" || fail "the workload did not run: $(cat "$TMP/out")"
total=$(comm_total "$TMP/b.folded" badframe)
jit=$(frame_total "$TMP/b.folded" badframe "[jit]")
echo "samples $total, in the anonymous page $jit"
[ "$total" -ge 500 ] || fail "too few samples of the workload ($total)"
[ "$jit" -ge $((total / 2)) ] || fail "fewer than half the samples are in the anonymous code"
echo PASS
