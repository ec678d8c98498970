#!/bin/bash
# SPDX-License-Identifier: MIT
# A profiled process's perf map past the cap of entries per process (1,000,000): scorch
# record keeps the cap, reads the map in slices between ring-buffer drains, and names the
# map it cut once in the summary, with a hint.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

bash -c 'while :; do :; done' &
BG_PID=$!
map=/tmp/perf-$BG_PID.map
trap 'rm -rf "$TMP" "$map"; kill "$BG_PID" 2>/dev/null; true' EXIT
# 1,000,100 lines of 40 bytes: 100 past the cap
awk 'BEGIN { for (i = 0; i < 1000100; i++) printf "%x 40 Lbig/Class;::method_%07d\n", 4096 * 1048576 + i * 64, i }' >"$map"

"$SCORCH" record -v -p "$BG_PID" -d 2 -o "$TMP/out.folded" 2>"$TMP/err" ||
	fail "record failed ($?): $(cat "$TMP/err")"
grep "JIT maps" "$TMP/err" || true
grep -q "JIT maps: 1 files cut at the cap of entries per process, first $map of process $BG_PID after [1-9][0-9]* bytes; 100 entries past the cap dropped" "$TMP/err" ||
	fail "the cut map is not named: $(cat "$TMP/err")"
grep -q "(1000000 entries," "$TMP/err" || fail "not 1,000,000 entries kept: $(cat "$TMP/err")"
[ "$(grep -c "files cut at the cap" "$TMP/err")" = 1 ] || fail "the cut map is named more than once"
grep -q "^hint: scorch keeps 1,000,000 JIT entries per process" "$TMP/err" || fail "no hint"
echo PASS
