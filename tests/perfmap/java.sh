#!/bin/bash
# SPDX-License-Identifier: MIT
# End to end (needs record's perfmap wiring; CMake registers it with -DSCORCH_JIT_E2E=ON):
# a JVM with -XX:+PreserveFramePointer whose map is written by `jcmd PID Compiler.perfmap`
# while `scorch record -p PID` runs; Hot.hot() is a _[j] frame in >= 90 % of the samples.
set -eu
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/e2e-lib.sh"
require_bpf
for t in java javac jcmd; do
	command -v $t >/dev/null || fail "$t is not installed (scripts/setup.sh installs it)"
done

cd "$TMP"
javac -d "$TMP" "$WORKLOADS/Hot.java"
start_ready java -XX:+PreserveFramePointer -XX:CompileCommand=quiet \
	-XX:CompileCommand=dontinline,Hot::hot -cp "$TMP" Hot 8
jcmd "$BG_PID" Compiler.perfmap >/dev/null || fail "jcmd Compiler.perfmap failed"
"$SCORCH" record --unwind fp -F 999 -d 3 -p "$BG_PID" -o "$TMP/java.folded" 2>"$TMP/err" ||
	fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/java.folded"
read -r total matched < <(jit_share "$TMP/java.folded" java 'Hot\.hot\(')
check_share "$total" "$matched" "java: Hot.hot() as a JIT frame"
rm -f "/tmp/perf-$BG_PID.map"
kill "$BG_PID" 2>/dev/null || true
wait "$BG_PID" 2>/dev/null || true

# without -XX:+PreserveFramePointer the walk cannot leave the JIT's code: the stacks end
# there, and the summary says so with the JVM option that fixes it
start_ready java -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,Hot::hot -cp "$TMP" Hot 8
jcmd "$BG_PID" Compiler.perfmap >/dev/null || fail "jcmd Compiler.perfmap failed"
"$SCORCH" record --unwind fp -F 999 -d 2 -p "$BG_PID" -o "$TMP/nofp.folded" 2>"$TMP/err" ||
	fail "record without frame pointers failed: $(cat "$TMP/err")"
cat "$TMP/err"
grep -q '^scorch: cut stacks: .* of on-CPU samples have user stacks that end in JIT code' "$TMP/err" ||
	fail "no warning of stacks ending in JIT code"
grep -q '^hint: Java: run it with -XX:+PreserveFramePointer' "$TMP/err" || fail "no -XX:+PreserveFramePointer hint"
rm -f "/tmp/perf-$BG_PID.map"
kill "$BG_PID" 2>/dev/null || true
wait "$BG_PID" 2>/dev/null || true

# no map at all: its JIT frames are [jit], and the summary names the process and how to
# have the JVM write its map
start_ready java -XX:+PreserveFramePointer -XX:CompileCommand=quiet \
	-XX:CompileCommand=dontinline,Hot::hot -cp "$TMP" Hot 8
"$SCORCH" record --unwind fp -F 999 -d 2 -p "$BG_PID" -o "$TMP/nomap.folded" 2>"$TMP/err" ||
	fail "record without a map failed: $(cat "$TMP/err")"
cat "$TMP/err"
grep -q "^scorch: JIT code unnamed: .* of on-CPU samples are in JIT code .*, most in java (PID $BG_PID)" \
	"$TMP/err" || fail "no warning of unnamed JIT code"
grep -q "^hint: .*jcmd $BG_PID Compiler.perfmap" "$TMP/err" || fail "no jcmd hint"
kill "$BG_PID" 2>/dev/null || true
wait "$BG_PID" 2>/dev/null || true

# -XX:+DumpPerfMapAtExit: the map comes when the JVM exits, after a recording that ended
# before: the capture's JIT frames are named by `scorch report` run after the exit
start_ready java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:CompileCommand=quiet \
	-XX:CompileCommand=dontinline,Hot::hot -cp "$TMP" Hot 4
"$SCORCH" record --unwind fp -F 999 -d 2 -p "$BG_PID" -o "$TMP/late.scorch" -o "$TMP/late.folded" \
	2>"$TMP/err" || fail "record of the capture failed: $(cat "$TMP/err")"
grep -q "^hint: .*scorch report" "$TMP/err" || fail "no hint to report a capture later: $(cat "$TMP/err")"
# unnamed JIT frames are the JIT hint's, not a reason to install debug symbols
grep -q 'dbgsym' "$TMP/err" && fail "JIT frames sent to debug symbols: $(cat "$TMP/err")"
wait "$BG_PID" 2>/dev/null || true
[ -f "/tmp/perf-$BG_PID.map" ] || fail "the JVM wrote no map at exit"
"$SCORCH" report -v "$TMP/late.scorch" -o "$TMP/late-report.folded" 2>"$TMP/rep.err" ||
	fail "report failed: $(grep -v '^debug' "$TMP/rep.err")"
grep '^scorch: report: .* perf maps written after the recording' "$TMP/rep.err" ||
	fail "report read no map written after the recording"
read -r total matched < <(jit_share "$TMP/late-report.folded" java 'Hot\.hot\(')
check_share "$total" "$matched" "java (map written at exit, named by report)"
rm -f "/tmp/perf-$BG_PID.map"
echo PASS
