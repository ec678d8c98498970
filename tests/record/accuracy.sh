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
[ "$total" -ge 2000 ] || fail "too few samples of the workload ($total)"
burn=$(($(frame_total "$TMP/split.folded" split burn_a) + $(frame_total "$TMP/split.folded" split burn_b) +
	$(frame_total "$TMP/split.folded" split burn_c)))
[ $((burn * 100)) -ge $((total * 95)) ] || fail "fewer than 95% of the samples are in burn_a/b/c ($burn of $total)"
split_shares "$TMP/split.folded" split 97 || fail "profile of the known workload is not true"
echo PASS
