#!/bin/bash
# SPDX-License-Identifier: MIT
# A full sample ring buffer: with --ring-size 4096 no record of a worker thread (1 KiB
# of header + a 16 KiB stack copy) fits, so their samples are dropped in the kernel
# (the main thread's few, near its stack top, are short and may fit). The drops must
# be counted (the ring-buffer line is the whole of the loss, >= 95 % of the samples
# taken), reported
# with a hint, and the exit status must be 3 (more than 5 % lost) with the output
# still written. A ring of the default size on the same workload loses nothing.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

rc=0
"$SCORCH" record -v --unwind dwarf --ring-size 4096 -F 999 -o "$TMP/r.folded" -- "$SPLIT_NOFP" \
	--seconds 1 --threads 2 >/dev/null 2>"$TMP/err" || rc=$?
cat "$TMP/err"
[ "$rc" = 3 ] || fail "a full ring buffer exited $rc, not 3"
[ -e "$TMP/r.folded" ] || fail "no output written"
taken=$(figure samples "$TMP/err")
dropped=$(sed -n 's/^scorch: lost: \([0-9]*\) samples or off-CPU stack copies .* ring buffer full (4 KiB)$/\1/p' "$TMP/err")
lost_of=$(figure lost "$TMP/err")
read -r lost of <<<"$lost_of"
pct=$(figure lost-pct "$TMP/err")
echo "taken $taken, dropped with the ring full $dropped, lost $lost of $of ($pct%)"
[ -n "$taken" ] && [ "$taken" -ge 500 ] || fail "too few samples taken ($taken)"
[ -n "$dropped" ] && [ $((dropped * 100)) -ge $((taken * 95)) ] ||
	fail "ring-buffer drops ($dropped) are not the samples of the workers ($taken taken)"
[ "$lost" = "$dropped" ] && [ "$of" = "$taken" ] || fail "lost line does not count them"
grep -q '^hint: .*raise --ring-size' "$TMP/err" || fail "no hint about the ring size"

# the default ring on the same workload: nothing lost, exit 0
"$SCORCH" record -v --unwind dwarf -F 999 -o "$TMP/ok.folded" -- "$SPLIT_NOFP" --seconds 1 \
	--threads 2 >/dev/null 2>"$TMP/err" || fail "default ring: exit $?: $(cat "$TMP/err")"
grep -q '^scorch: lost: 0 of ' "$TMP/err" || fail "default ring lost samples: $(cat "$TMP/err")"
check_folded "$TMP/ok.folded"
echo PASS
