#!/bin/bash
# SPDX-License-Identifier: MIT
# Stripped binaries whose symbols live elsewhere, named as perf names them:
#  - a binary stripped with its debug file attached by .gnu_debuglink: functions the
#    DWARF does not cover (_start, from crt1.o built without -g) come from the debug
#    file's .symtab;
#  - MiniDebugInfo (.gnu_debugdata, xz): the functions .dynsym lacks, made here with
#    the recipe of Fedora's find-debuginfo.
# The addresses come from nm on the unstripped copy: the truth by construction.
set -eu
. "$(dirname "$0")/../lib.sh"
: "${SCORCH:?SCORCH must point to the scorch binary}"
for t in objcopy strip nm xz; do command -v $t >/dev/null || fail "$t is needed"; done
cd "$TMP"
cat >m.c <<'C'
#include <stdio.h>
static __attribute__((noinline)) int hidden_fn(int x)
{
	return x * 3 + 1;
}
int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", hidden_fn(argc));
	return 0;
}
C
addr() { nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1 }'; }
# expect FILE SYMBOL...: each symbol's address (from full) is named exactly so, with
# DWARF read and without (--no-dwarf: the names come from the symbol tables alone)
expect() {
	local file=$1 full=$2 sym got opt
	shift 2
	for sym in "$@"; do
		for opt in --lines --no-dwarf; do
			got=$("$SCORCH" symbolize $opt --elf "$file" "$(addr "$full" "$sym")" |
				cut -f2 | sed 's/ (.*//')
			[ "$got" = "$sym" ] || fail "$file: $sym is named '$got' ($opt)"
		done
	done
	echo "$file: $* named"
}

# .gnu_debuglink
cc -O1 -g m.c -o usex
cp usex usex.full
objcopy --only-keep-debug usex usex.debug
strip --strip-all usex
objcopy --add-gnu-debuglink=usex.debug usex
expect usex usex.full _start main hidden_fn

# MiniDebugInfo
cc -O1 -g m.c -o mini
cp mini mini.full
nm -D mini --format=posix --defined-only | awk '{ print $1 }' | sort >dynsyms
nm mini --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >funcsyms
comm -13 dynsyms funcsyms >keep
objcopy --only-keep-debug mini.full mini_debuginfo
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep \
	mini_debuginfo mini_debuginfo.small
xz mini_debuginfo.small
strip --strip-all mini
objcopy --add-section .gnu_debugdata=mini_debuginfo.small.xz mini
expect mini mini.full _start main hidden_fn
# a corrupt stream is skipped, not fatal: the file is still read as stripped
printf 'not xz' >bad.xz
cp mini.full bad
strip --strip-all bad
objcopy --add-section .gnu_debugdata=bad.xz bad
got=$("$SCORCH" symbolize --elf bad "$(addr mini.full main)" | cut -f2)
[ "$got" = "[bad]" ] || fail "a corrupt .gnu_debugdata: main is named '$got'"
echo PASS
