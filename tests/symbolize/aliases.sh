#!/bin/bash
# SPDX-License-Identifier: MIT
# Names of addresses that several symbols share, as perf names them (its
# choose_best_symbol(): symbolize/symtab.c), never with a symbol version:
#  - a library built here from assembly, one function per rule, with the aliases that
#    rule decides between (the library's symbol table is the truth by construction):
#      cc -shared -nostdlib -Wl,--version-script=aliases.map -o libaliases.so aliases.s
#  - Debian's libc, with its debug file's .symtab when libc6-dbg is installed: every
#    address with several function symbols is named as perf_names.py (perf's pairwise
#    rule over `readelf -s`, apart from scorch) names it; __libc_start_main,
#    clock_nanosleep and __libc_pread by their names without a version.
set -eu
. "$(dirname "$0")/../lib.sh"
: "${SCORCH:?SCORCH must point to the scorch binary}"
for t in cc nm readelf python3; do command -v $t >/dev/null || fail "$t is needed"; done
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$TMP"

cat >aliases.s <<'S'
	.text
# one 16-byte function per rule, all its names at its address
	.macro	fn name, type=@function, bind=local, size=16
	.type	\name, \type
	.ifnc	\bind, local
	.\bind	\name
	.endif
	.size	\name, \size
	.endm

# versions: a local implementation and its versioned global name (glibc's
# __libc_start_main_impl, __libc_start_main@GLIBC_2.2.5 and @@GLIBC_2.34)
	.p2align 4
	fn	api_impl
	fn	api_v1, bind=globl
	fn	api_v2, bind=globl
	.symver	api_v1, api@V1
	.symver	api_v2, api@@V2
api_impl:
api_v1:
api_v2:
	ret
# a weak name loses to a global one, whatever its length
	.p2align 4
	fn	g2_weak_with_the_longest_name, bind=weak
	fn	g2_global, bind=globl
g2_weak_with_the_longest_name:
g2_global:
	ret
# ... and to a local one, whatever its underscores
	.p2align 4
	fn	g3_weak, bind=weak
	fn	__g3_local
g3_weak:
__g3_local:
	ret
# fewer leading underscores, whatever the length
	.p2align 4
	fn	__g4_two_underscores_longer
	fn	_g4_one
__g4_two_underscores_longer:
_g4_one:
	ret
# the longer name (glibc's __memmove_avx512_unaligned_erms over __memcpy_...)
	.p2align 4
	fn	__g5_memcpy_erms
	fn	__g5_memmove_erms
__g5_memcpy_erms:
__g5_memmove_erms:
	ret
# a sized symbol over an unsized one, whatever its binding
	.p2align 4
	fn	g6_unsized, bind=globl, size=0
	fn	g6_sized
g6_unsized:
g6_sized:
	ret
# a function over a label (STT_NOTYPE), whatever its binding
	.p2align 4
	fn	g7_label, type=@notype, bind=globl
	fn	g7_func
g7_label:
g7_func:
	ret
# a tie: the first in the table
	.p2align 4
	fn	g8_aa
	fn	g8_bb
g8_aa:
g8_bb:
	ret
S
# api_v1 and api_v2 local, as glibc's __libc_start_main_alias_1 and _2
cat >aliases.map <<'M'
V1 { global: api; g2_*; g3_weak; g6_unsized; g7_label; local: *; };
V2 { global: api; } V1;
M
cc -shared -nostdlib -Wl,--version-script=aliases.map -o libaliases.so aliases.s
readelf -sW libaliases.so | grep -q ' api@@V2$' || fail "the fixture has no versioned api@@V2"

# expect SYMBOL NAME: the address of SYMBOL is named NAME
expect() {
	local addr got
	addr=$(nm libaliases.so | awk -v s="$1" '$3 == s { print "0x" $1 }')
	[ -n "$addr" ] || fail "the fixture has no $1"
	got=$("$SCORCH" symbolize --elf libaliases.so "$addr" | cut -f2)
	[ "$got" = "$2" ] || fail "$addr ($1): named '$got', perf names it '$2'"
	echo "$addr: $got"
}
expect api_impl api
expect g2_global g2_global
expect __g3_local __g3_local
expect _g4_one _g4_one
expect __g5_memmove_erms __g5_memmove_erms
expect g6_sized g6_sized
expect g7_func g7_func
expect g8_aa g8_aa
# the fixture's whole table, as perf_names.py reads it, agrees
python3 "$HERE/perf_names.py" libaliases.so >want
[ "$(wc -l <want)" -eq 8 ] || fail "perf_names.py found $(wc -l <want) alias groups, not 8"

# Debian's libc: the table scorch reads (its debug file's, else its own)
libc=/lib/x86_64-linux-gnu/libc.so.6
[ -e "$libc" ] || { echo "SKIP part: $libc is missing"; exit 0; }
bid=$(readelf -n "$libc" | sed -n 's/.*Build ID: \([0-9a-f]*\)/\1/p')
debug=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if [ -n "$bid" ] && [ -e "$debug" ]; then
	python3 "$HERE/perf_names.py" "$debug" .symtab >want
elif readelf -SW "$libc" | grep -q '\.symtab'; then
	python3 "$HERE/perf_names.py" "$libc" .symtab >want
else
	[ "${CI:-}" != true ] || fail "libc6-dbg is missing under CI"
	echo "note: libc6-dbg is not installed: .dynsym's aliases only"
	python3 "$HERE/perf_names.py" "$libc" .dynsym >want
fi
[ "$(wc -l <want)" -gt 100 ] || fail "libc: only $(wc -l <want) alias groups"
cut -d' ' -f1 want | "$SCORCH" symbolize --elf "$libc" >got || fail "scorch symbolize failed"
# the outermost frame (DWARF adds the inlined ones after it)
paste -d' ' want <(cut -f2 got | sed 's/;.*//') | awk '
	$2 != $3 { print "libc " $1 ": perf names it " $2 ", scorch " $3; bad++ }
	END { exit bad > 0 }' || fail "libc: aliases named otherwise than perf names them"
grep -q @ <(cut -f2 got) && fail "libc: a name with a symbol version: $(grep @ got | head -3)"
echo "libc: $(wc -l <want) addresses with aliases named as perf names them"
for f in __libc_start_main clock_nanosleep __libc_pread; do
	addr=$(nm -D "$libc" | awk -v f="$f" '$3 ~ "^" f "@" { print "0x" $1; exit }')
	got=$("$SCORCH" symbolize --elf "$libc" "$addr" | cut -f2)
	[ "$got" = "$f" ] || fail "libc $addr: named '$got', not $f"
	echo "libc $addr: $got"
done
