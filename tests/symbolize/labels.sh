#!/bin/bash
# SPDX-License-Identifier: MIT
# Code labels (NOTYPE symbols, local ones included, of size 0) name the code up to the
# next symbol, as perf and addr2line name it: a label written in assembly outside any
# function, and ld.so's _start and _dl_start_user (LOCAL NOTYPE in its debug file),
# which short-lived processes spend their first samples in.
set -eu
. "$(dirname "$0")/../lib.sh"
: "${SCORCH:?SCORCH must point to the scorch binary}"
command -v addr2line >/dev/null || fail "addr2line (binutils) is needed"

printf '%s\n' '__asm__(".text\n.p2align 4\nbare_label:\n\tnop\n\tnop\n\tret\n");' \
	'int main(void) { return 0; }' >"$TMP/label.c"
cc -O1 -g "$TMP/label.c" -o "$TMP/label"
addr=$(nm "$TMP/label" | awk '$2 == "t" && $3 == "bare_label" { print "0x" $1 }')
[ -n "$addr" ] || fail "the fixture has no local label bare_label: $(nm "$TMP/label" | head)"
next=$(printf '0x%x' $((addr + 1)))
got=$(printf '%s\n%s\n' "$addr" "$next" | "$SCORCH" symbolize --elf "$TMP/label" | cut -f2 | paste -sd' ')
[ "$got" = "bare_label bare_label" ] || fail "bare_label at $addr: scorch says '$got'"
want=$(addr2line -f -e "$TMP/label" "$next" | head -1)
[ "$want" = bare_label ] || fail "addr2line names $next '$want': the fixture is not what it means"

ld=/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
n=0
if [ -e "$ld" ]; then
	# the labels of its debug file (when installed), as addr2line names them
	for name in _start _dl_start_user; do
		dbg=$(readelf -n "$ld" | awk '/Build ID/ { print $3 }')
		f=/usr/lib/debug/.build-id/${dbg:0:2}/${dbg:2}.debug
		[ -e "$f" ] || { echo "skip ld.so: no debug file"; break; }
		a=$(nm "$f" | awk -v s="$name" '$3 == s { print "0x" $1; exit }')
		[ -n "$a" ] || continue
		want=$(addr2line -f -e "$ld" "$a" | head -1)
		got=$("$SCORCH" symbolize --elf "$ld" "$a" | cut -f2)
		echo "ld.so $a: addr2line $want, scorch $got"
		[ "$got" = "$want" ] || fail "ld.so $a: scorch says '$got', addr2line '$want'"
		n=$((n + 1))
	done
fi
echo "PASS: local labels named ($n of ld.so's checked)"
