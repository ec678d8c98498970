#!/bin/bash
# SPDX-License-Identifier: MIT
# Resolves the same N random .text addresses of one ELF file with inline frames on, with
# scorch symbolize, binutils addr2line, llvm-symbolizer and eu-addr2line, and prints each
# tool's wall time and peak memory (GNU time's max RSS) measured in this run.
#   bench/symbolize-bench.sh [FILE [N]]
# Default FILE: the debug build of libstdc++ from Debian's libstdc++6-12-dbg (11 MB,
# 4 MB of DWARF); default N: 100000. eu-addr2line is slow (a libdw query per address),
# so it gets the first N/20 addresses and its time is scaled up (printed as such).
# The first scorch line starts with an empty debug cache (a first run), the second reads
# back what the first kept, the third resolves every address twice: the repeat costs near
# nothing.
set -eu
cd "$(dirname "$0")/.."
file=${1:-/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30}
n=${2:-100000}
scorch=${SCORCH:-build/profiler/scorch}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -r "$file" ] || { echo "bench: cannot read $file" >&2; echo "hint: apt-get install libstdc++6-12-dbg" >&2; exit 1; }
[ -x "$scorch" ] || { echo "bench: $scorch missing" >&2; echo "hint: run scripts/build.sh" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing" >&2; echo "hint: apt-get install time" >&2; exit 1; }

# .text bounds, then N addresses drawn with a fixed seed
read -r start size < <(readelf -W -S "$file" | awk '$2 == ".text" { print $4, $6 }')
python3 - "$start" "$size" "$n" >"$tmp/addrs" <<'PY'
import random, sys
start, size, n = int(sys.argv[1], 16), int(sys.argv[2], 16), int(sys.argv[3])
r = random.Random(1)
for _ in range(n):
    print("0x%x" % (start + r.randrange(size)))
PY
head -n $((n / 20)) "$tmp/addrs" >"$tmp/addrs-eu"
cat "$tmp/addrs" "$tmp/addrs" >"$tmp/addrs-twice"

# prints "<seconds> <max RSS KB>" of a command reading $2 on stdin
measure() {
	local out=$1 in=$2
	shift 2
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" <"$in" >"$out"
	cat "$tmp/time"
}

printf "%-34s %10s %10s %12s\n" tool addresses seconds "peak MB"
row() { printf "%-34s %10s %10.2f %12.1f\n" "$1" "$2" "$3" "$(echo "$4 / 1024" | bc -l)"; }

# scorch's debug cache (SCORCH_CACHE_DIR) starts empty: the first line decompresses what a
# compressed debug file holds (and keeps it), the others read it back
export SCORCH_CACHE_DIR="$tmp/debug-cache"
read -r t m < <(measure "$tmp/scorch.out" "$tmp/addrs" "$scorch" symbolize --elf "$file" --lines)
row "scorch symbolize --lines" "$n" "$t" "$m"
read -r t m < <(measure /dev/null "$tmp/addrs" "$scorch" symbolize --elf "$file" --lines)
row "scorch symbolize, cache warm" "$n" "$t" "$m"
read -r t m < <(measure /dev/null "$tmp/addrs-twice" "$scorch" symbolize --elf "$file" --lines)
row "scorch symbolize x2, cache warm" "$((2 * n))" "$t" "$m"
read -r t m < <(measure "$tmp/a2l.out" "$tmp/addrs" addr2line -i -f -C -e "$file")
row "addr2line -i -f -C" "$n" "$t" "$m"
if command -v llvm-symbolizer >/dev/null; then
	read -r t m < <(measure /dev/null "$tmp/addrs" llvm-symbolizer --inlining --demangle \
		--obj="$file")
	row "llvm-symbolizer --inlining" "$n" "$t" "$m"
else
	echo "llvm-symbolizer: not installed (apt-get install llvm)"
fi
if command -v eu-addr2line >/dev/null; then
	read -r t m < <(measure /dev/null "$tmp/addrs-eu" eu-addr2line -i -f -C -e "$file")
	row "eu-addr2line -i -f -C" "$((n / 20))" "$t" "$m"
	printf "%-34s %10s %10.2f %12s\n" "eu-addr2line, scaled to N" "$n" "$(echo "$t * 20" | bc -l)" "-"
else
	echo "eu-addr2line: not installed (apt-get install elfutils)"
fi

# agreement with addr2line on the innermost function name (first line per address)
python3 - "$tmp/scorch.out" "$tmp/a2l.out" <<'PY'
import sys
ours = [l.rstrip("\n").split("\t", 1)[1] for l in open(sys.argv[1])]
lines = open(sys.argv[2]).read().split("\n")
# addr2line -i prints name/file pairs, a variable number per address: compare line counts
pairs = len([l for l in lines if l and not l.startswith("/") and ":" not in l[:1]])
frames = sum(len(o.split(";")) for o in ours)
print("frames: scorch %d, addr2line %d name lines" % (frames, len(lines) // 2))
PY
