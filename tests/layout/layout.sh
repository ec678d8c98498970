#!/bin/bash
# SPDX-License-Identifier: MIT
# The layout of the source tree (DESIGN.md, "Layout"), checked:
#  - each folder includes only headers of its own and of folders below it in LAYERS
#    (no cycle between folders);
#  - a "-private.h" header, and any engine/ header but engine.h, is included only
#    from its own folder (tests and bench/ may reach into a module they exercise);
#  - no source file is over 1,200 lines;
#  - DESIGN.md, the design in about two pages, is at most 160 lines.
set -eu
ROOT=${1:?usage: layout.sh SOURCE_DIR}
cd "$ROOT"
fail() { echo "FAIL: $*" >&2; exit 1; }

# lowest first: a folder may include the headers of the folders before it
LAYERS="common bpf symbolize python perfmap unwind flamegraph capture export engine profiler"

rank() {
	local i=0 l
	for l in $LAYERS; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

# header name -> its folder (names are unique across the folders)
declare -A home
for d in $LAYERS; do
	[ -d "$d" ] || continue
	for h in "$d"/*.h; do
		[ -f "$h" ] || continue
		n=$(basename "$h")
		[ -z "${home[$n]:-}" ] || fail "$h: a header named $n is also in ${home[$n]}/"
		home[$n]=$d
	done
done

checked=0
for d in $LAYERS; do
	[ -d "$d" ] || continue
	rd=$(rank "$d")
	for f in "$d"/*.c "$d"/*.h; do
		[ -f "$f" ] || continue
		while read -r n; do
			h=${home[$n]:-}
			[ -n "$h" ] && [ "$h" != "$d" ] || continue
			checked=$((checked + 1))
			[ "$(rank "$h")" -lt "$rd" ] ||
				fail "$f includes $n of $h/, a folder above $d/ (LAYERS: $LAYERS)"
			case $n in
			*-private.h) fail "$f includes $h/$n, private to $h/" ;;
			esac
			[ "$h" != engine ] || [ "$n" = engine.h ] ||
				fail "$f includes engine/$n: outside engine/, only engine.h"
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
done
[ "$checked" -gt 20 ] || fail "only $checked includes across folders checked: is $ROOT the source tree?"

big=$(find . -path ./build\* -prune -o \( -name '*.c' -o -name '*.h' \) -type f -print |
	xargs wc -l | awk '$2 != "total" && $1 > 1200 { print $2 " (" $1 " lines)" }')
[ -z "$big" ] || fail "source files over 1,200 lines: $big"
design=$(wc -l < DESIGN.md)
[ "$design" -le 160 ] || fail "DESIGN.md is $design lines: the design fits in 160 (figures go to docs/BENCHMARKS.md)"
echo "ok: $checked includes across folders point down; no source file over 1,200 lines; DESIGN.md $design lines"
