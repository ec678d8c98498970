#!/bin/bash
# SPDX-License-Identifier: MIT
# CFI in .debug_frame only: split.c built -O2 -fomit-frame-pointer
# -fno-optimize-sibling-calls -fno-asynchronous-unwind-tables -g (its .eh_frame covers
# _start alone; libc keeps its .eh_frame). With --unwind kernel (a process already
# running: its tables are read before sampling) and with --unwind dwarf (a command):
# the 50/30/20 split of burn_a/b/c within 3 points, >= 95 % of the samples reaching main
# through libc's __libc_start_call_main, and -v counting the file read from .debug_frame.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

comm=$(basename "$SPLIT_DBGFRAME")
readelf -S "$SPLIT_DBGFRAME" | grep -q '\.debug_frame' || fail "$SPLIT_DBGFRAME has no .debug_frame"

# Checks the profile $1 of the workload ($2: how it was walked).
check_split() {
	local f="$1" how="$2" total m l
	check_folded "$f"
	total=$(comm_total "$f" "$comm")
	m=$(frame_total "$f" "$comm" main)
	l=$(frame_total "$f" "$comm" __libc_start_call_main)
	echo "$how: $total samples, reaching main $m (via libc $l)"
	[ "$total" -ge 1000 ] || fail "$how: too few samples of the workload ($total)"
	[ "$l" -ge "$m" ] || fail "$how: main reached without its libc caller ($l < $m)"
	split_shares "$f" "$comm" 95 || fail "$how: the profile of the known workload is not true"
}

# --unwind kernel, -p
start_ready "$SPLIT_DBGFRAME" --seconds 8
"$SCORCH" record -v --unwind kernel -F 999 -p "$BG_PID" -d 3 -o "$TMP/kernel.folded" 2>"$TMP/err" ||
	fail "record --unwind kernel failed: $(grep -v '^debug' "$TMP/err")"
kill "$BG_PID" 2>/dev/null || true
grep '^scorch: unwind kernel' "$TMP/err"
n=$(sed -n 's/^scorch: unwind kernel: tables of .* \([0-9]*\) files with \.debug_frame.*/\1/p' "$TMP/err")
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "kernel: no file compiled from .debug_frame ('$n')"
check_split "$TMP/kernel.folded" kernel

# --unwind dwarf, a command
"$SCORCH" record -v --unwind dwarf -F 999 -o "$TMP/dwarf.folded" -- "$SPLIT_DBGFRAME" --seconds 4 \
	>/dev/null 2>"$TMP/err" || fail "record --unwind dwarf failed: $(grep -v '^debug' "$TMP/err")"
grep '^scorch: unwind dwarf' "$TMP/err"
n=$(sed -n 's/^scorch: unwind dwarf: tables read .* \([0-9]*\) files with \.debug_frame.*/\1/p' "$TMP/err")
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "dwarf: no file read with .debug_frame ('$n')"
check_split "$TMP/dwarf.folded" dwarf
echo PASS
