#!/bin/bash
# SPDX-License-Identifier: MIT
# How many user frames stay unnamed, scorch beside perf, on programs nobody here wrote
# and one stripped with a debug link: each workload is recorded by `scorch record` and by
# `perf record --call-graph dwarf` (both at 999 Hz, one after the other, in this run).
# A user frame is unnamed when scorch names it by its file or [unknown]/[jit]/[heap]
# ("[libfoo.so]") and when perf script says [unknown]. Shares are weighted by samples.
# A JVM (-XX:+DumpPerfMapAtExit, so its JIT map exists only once it has exited) is
# recorded for 2 s of its 4 s: scorch to a capture named by `scorch report` after the
# exit, perf to perf.data named by `perf script` after the exit.
# usage: bench/naming.sh     (root; perf, sqlite3, gcc, python3, java)
set -eu
. "$(dirname "$0")/lib.sh"
need_root
need_scorch
need_tool perf linux-perf
need_tool sqlite3 sqlite3
need_tool gcc gcc
make_work
cd "$work"

# the stripped program: no DWARF, its .symtab only in prog.debug (.gnu_debuglink)
cat >prog.c <<'C'
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin(long n) { for (long i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) static void level2(long n) { spin(n); }
__attribute__((noinline)) static void level1(long n) { level2(n); }
int main(int argc, char **argv) { for (int i = 0; i < 40; i++) level1(argc > 1 ? atol(argv[1]) : 20000000); return 0; }
C
gcc -O1 -fno-omit-frame-pointer prog.c -o prog
objcopy --only-keep-debug prog prog.debug
strip --strip-all prog
objcopy --add-gnu-debuglink=prog.debug prog
python3 -c 'print("\n".join(f"int f{i}(int x) {{ int s = 0; for (int j = 0; j < x; j++) s += j * {i} % (x + 3); return s; }}" for i in range(6000)))' >big.c

declare -A cmds=(
	[sqlite3]="sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000000) SELECT sum(x * x % 7) FROM c;'"
	[python3]="/usr/bin/python3 -c 'import json; d = [{\"k\": i, \"v\": str(i) * 3} for i in range(300000)]; [json.loads(json.dumps(d)) for _ in range(3)]'"
	[cc1]="gcc -O2 -S -o /dev/null big.c"
	[stripped+debuglink]="./prog"
)

# scorch_share FOLDED: "unnamed total" user frame-samples (bracketed names, not markers)
scorch_share() {
	awk '{ cnt = $NF; line = $0; sub(/ [0-9]+$/, "", line); n = split(line, a, ";")
		for (i = 2; i <= n; i++) {
			f = a[i]
			if (f ~ /_\[k\]$/ || f ~ /^\[(truncated|off-cpu|runqueue|missed|stack table)/) continue
			t += cnt
			if (f ~ /^\[.*\]$/) u += cnt
		} } END { print u + 0, t + 0 }' "$1"
}
# perf_share: "unnamed total" user frames of perf script (frames outside the kernel)
perf_share() {
	perf script -i "$1" -F ip,sym,dso 2>/dev/null | awk '
		/^[ \t]*[0-9a-f]+ / { if ($0 ~ /\[kernel\.kallsyms\]/ || $0 ~ /\(\[unknown\]\)$/ && $2 == "[unknown]" && $1 ~ /^ffff/) next
			t++; if ($2 == "[unknown]") u++ } END { print u + 0, t + 0 }'
}

printf '%-20s %10s %10s %10s %10s\n' workload scorch-samp scorch-% perf-samp perf-%
for w in sqlite3 python3 cc1 stripped+debuglink; do
	eval "$scorch record -F 999 -o s.folded -- ${cmds[$w]}" >/dev/null 2>s.err ||
		die "$w: scorch record failed: $(tail -n 3 s.err)"
	eval "perf record -q -F 999 --call-graph dwarf -o p.data -- ${cmds[$w]}" >/dev/null 2>p.err ||
		die "$w: perf record failed: $(tail -n 3 p.err)"
	read -r su st < <(scorch_share s.folded)
	read -r pu pt < <(perf_share p.data)
	samp=$(awk '{ s += $NF } END { print s + 0 }' s.folded)
	psamp=$(perf script -i p.data -F ip 2>/dev/null | grep -c '^$' || true)
	awk -v w="$w" -v su="$su" -v st="$st" -v pu="$pu" -v pt="$pt" -v s="$samp" -v ps="$psamp" 'BEGIN {
		printf "%-20s %10d %9.1f%% %10d %9.1f%%\n", w, s, st ? 100 * su / st : 0, ps, pt ? 100 * pu / pt : 0 }'
done
# the JVM whose map is written at its exit: recorded while it runs, named after
if command -v javac >/dev/null && command -v java >/dev/null; then
	javac -d . "$root/tests/workloads/jit/Hot.java"
	jvm=(java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit
		-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,Hot::hot -cp . Hot 4)
	"${jvm[@]}" >jvm.out 2>&1 &
	jpid=$!
	timeout 30 bash -c 'until grep -q ready jvm.out 2>/dev/null; do sleep 0.1; done' ||
		die "java: the JVM did not get ready" "check java -version" 
	$scorch record --unwind fp -F 999 -d 2 -p "$jpid" -o s.scorch >/dev/null 2>s.err ||
		die "java: scorch record failed: $(tail -n 3 s.err)"
	wait "$jpid" || true
	$scorch report s.scorch -o s.folded 2>s.err || die "java: scorch report failed: $(tail -n 3 s.err)"
	rm -f "/tmp/perf-$jpid.map"
	"${jvm[@]}" >jvm.out 2>&1 &
	jpid=$!
	timeout 30 bash -c 'until grep -q ready jvm.out 2>/dev/null; do sleep 0.1; done' ||
		die "java: the JVM did not get ready" "check java -version" 
	perf record -q -F 999 -g -p "$jpid" -o p.data -- sleep 2 >/dev/null 2>p.err ||
		die "java: perf record failed: $(tail -n 3 p.err)"
	wait "$jpid" || true
	read -r su st < <(scorch_share s.folded)
	read -r pu pt < <(perf_share p.data)
	rm -f "/tmp/perf-$jpid.map"
	samp=$(awk '{ s += $NF } END { print s + 0 }' s.folded)
	psamp=$(perf script -i p.data -F ip 2>/dev/null | grep -c '^$' || true)
	awk -v w="java (map at exit)" -v su="$su" -v st="$st" -v pu="$pu" -v pt="$pt" -v s="$samp" -v ps="$psamp" 'BEGIN {
		printf "%-20s %10d %9.1f%% %10d %9.1f%%\n", w, s, st ? 100 * su / st : 0, ps, pt ? 100 * pu / pt : 0 }'
fi
echo "(unnamed user frames, share of all user frames weighted by samples; machine: $(nproc) CPUs, $(uname -r), $(date -u +%F))"
