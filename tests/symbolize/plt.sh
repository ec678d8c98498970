#!/bin/bash
# SPDX-License-Identifier: MIT
# PLT stubs are named "func@plt", as objdump names them, on Debian's own libraries and
# programs (lazy .plt, .plt.got) and on a program linked here with IBT stubs
# (.plt.sec): every stub objdump labels must come out of `scorch symbolize --elf` with
# the same name. objdump's "*ABS*+0x...@plt" (an ifunc slot, no symbol) must still be
# some "...@plt".
set -eu
. "$(dirname "$0")/../lib.sh"
: "${SCORCH:?SCORCH must point to the scorch binary}"
command -v objdump >/dev/null || fail "objdump (binutils) is needed"

printf '#include <stdio.h>\n#include <stdlib.h>\nint main(int c, char **v)\n{\n\tputs(v[0]);\n\treturn atoi(c > 1 ? v[1] : "0");\n}\n' >"$TMP/ibt.c"
cc -O1 -fcf-protection=full -Wl,-z,ibtplt -Wl,-z,now "$TMP/ibt.c" -o "$TMP/ibt"
objdump -h "$TMP/ibt" | grep -q '\.plt\.sec' || fail "the IBT program has no .plt.sec"

total=0
for f in "$TMP/ibt" /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
	"$(readlink -f /usr/bin/python3)"; do
	[ -e "$f" ] || { echo "skip $f (not installed)"; continue; }
	objdump -d "$f" -j .plt -j .plt.sec -j .plt.got 2>/dev/null |
		sed -n 's/^\([0-9a-f]*\) <\(.*@plt\)>:$/0x\1 \2/p' >"$TMP/want"
	n=$(wc -l <"$TMP/want")
	[ "$n" -gt 0 ] || fail "$f: objdump labels no PLT stub"
	cut -d' ' -f1 "$TMP/want" | "$SCORCH" symbolize --elf "$f" >"$TMP/got" ||
		fail "$f: scorch symbolize failed"
	paste -d' ' "$TMP/want" <(cut -f2 "$TMP/got") | awk -v f="$f" '
		{ want = $2; got = $3
		  if (want ~ /^\*ABS\*/ ? got !~ /@plt$/ : got != want) { print f ": " $1 " is " want ", scorch says " got; bad++ } }
		END { exit bad > 0 }' || fail "$f: PLT stubs misnamed"
	echo "$f: $n PLT stubs named as objdump names them"
	total=$((total + n))
done
[ "$total" -ge 100 ] || fail "only $total stubs checked"
echo PASS
