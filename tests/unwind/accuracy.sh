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
sent=$(figure records "$TMP/err")
sent=${sent% *}
topped=$(sed -n 's/.*unwind dwarf: \([0-9]*\) copies ended at their thread.s known stack top.*/\1/p' "$TMP/err")
echo "copies: $sent, ended at the learned stack top: $topped"
[ -n "$topped" ] && [ "$topped" -ge $((sent * 9 / 10)) ] ||
	fail "fewer than 90% of the copies ended at the learned stack top ($topped of $sent)"

comm=$(basename "$SPLIT_NOFP")
total=$(comm_total "$TMP/dwarf.folded" "$comm")
m=$(frame_total "$TMP/dwarf.folded" "$comm" main)
l=$(frame_total "$TMP/dwarf.folded" "$comm" __libc_start_call_main)
echo "dwarf: $total samples, reaching main $m (via libc $l)"
[ "$total" -ge 2000 ] || fail "too few samples of the workload ($total)"
[ "$l" -ge "$m" ] || fail "main reached without its libc caller ($l < $m)"
burn=$(($(frame_total "$TMP/dwarf.folded" "$comm" burn_a) + $(frame_total "$TMP/dwarf.folded" "$comm" burn_b) +
	$(frame_total "$TMP/dwarf.folded" "$comm" burn_c)))
[ $((burn * 100)) -ge $((total * 95)) ] || fail "fewer than 95% of the samples are in burn_a/b/c ($burn of $total)"
split_shares "$TMP/dwarf.folded" "$comm" 95 || fail "dwarf profile of the known workload is not true"

# the same binary with frame pointers walked: for comparison only (what dwarf fixes)
"$SCORCH" record --unwind fp -F 999 -q -o "$TMP/fp.folded" -- "$SPLIT_NOFP" --seconds 1 2>/dev/null ||
	fail "record --unwind fp failed"
echo "fp: $(comm_total "$TMP/fp.folded" "$comm") samples, $(frame_total "$TMP/fp.folded" "$comm" main) reaching main"
echo PASS
