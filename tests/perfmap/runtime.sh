#!/bin/bash
# SPDX-License-Identifier: MIT
# Real runtimes without `scorch record`: a Node or Java workload that spends nearly all of
# its CPU in hot() (tests/workloads/jit/) writes its perf map; `perf record -g -p` samples
# it; perfmap_resolve tracks the process while it runs (refreshing once a second, once
# more after it exits) and resolves the sampled stacks through libscorch_perfmap. The hot
# function must be in >= 90 % of the main thread's samples.
# node-jitdump runs Node with --perf-prof instead: its jit-PID.dump (in the working
# directory, mapped by the process) is found through /proc/PID/maps.
#   runtime.sh node|node-jitdump|java   (env: RESOLVE, WORKLOADS; root, perf, node, java)
set -eu
. "$(dirname "$0")/../lib.sh"
runtime=$1

# Also release the resolver (blocked on the go FIFO) if we fail before the samples exist.
cleanup() {
	[ -n "${BG_PID:-}" ] && kill "$BG_PID" 2>/dev/null
	if [ -p "$TMP/go" ] && [ -z "${GO_SENT:-}" ]; then
		exec 7<>"$TMP/go"
		echo go >&7
	fi
	wait 2>/dev/null
	[ -n "${pid:-}" ] && rm -f "/tmp/perf-$pid.map"
	rm -rf "$TMP"
}
trap cleanup EXIT
MIN_SHARE=${MIN_SHARE:-90}

need() {
	command -v "$1" >/dev/null && return
	if [ "${CI:-}" = true ]; then
		fail "$1 is not installed (scripts/setup.sh installs it)"
	fi
	echo "SKIP: $1 is not installed"
	exit 77
}
need perf
[ "$(id -u)" = 0 ] || { echo "SKIP: not root (perf -p on another process)"; exit 77; }

case "$runtime" in
node)
	need node
	comm=node hot='hot /'
	start_ready node --perf-basic-prof --no-turbo-inlining "$WORKLOADS/hot.js" 6
	;;
node-jitdump)
	need node
	comm=node hot='hot /'
	cd "$TMP"
	start_ready node --perf-prof --no-turbo-inlining "$WORKLOADS/hot.js" 6
	;;
java)
	need java
	need javac
	need jcmd
	cd "$TMP" # the JVM's hsperfdata and any crash logs stay out of the source tree
	javac -d "$TMP" "$WORKLOADS/Hot.java"
	comm=java hot='Hot.hot('
	# DumpPerfMapAtExit rewrites the map at exit: the final refresh must notice
	start_ready java -XX:+PreserveFramePointer -XX:CompileCommand=quiet \
		-XX:CompileCommand=dontinline,Hot::hot -XX:+UnlockDiagnosticVMOptions \
		-XX:+DumpPerfMapAtExit -cp "$TMP" Hot 6
	jcmd "$BG_PID" Compiler.perfmap >/dev/null || fail "jcmd $BG_PID Compiler.perfmap failed"
	;;
*)
	fail "usage: runtime.sh node|node-jitdump|java"
	;;
esac
pid=$BG_PID

# The resolver starts now (while the process runs) and reads the samples once they exist.
mkfifo "$TMP/go"
(
	read -r _ <"$TMP/go"
	perf script -i "$TMP/perf.data" -F comm,tid,ip 2>/dev/null | awk '
		/^[^ \t]/ { if (s != "") print s; $NF = ""; sub(/ +$/, ""); gsub(/ /, "_"); s = $0; next }
		/^[ \t]+[0-9a-f]+$/ { s = s " " $1; next }
		END { if (s != "") print s }'
) | "$RESOLVE" "$pid" "$comm" "$hot" >"$TMP/resolved" 2>"$TMP/resolve.err" &
resolver=$!

perf record -q -g -F 499 -p "$pid" -o "$TMP/perf.data" -- sleep 3 2>"$TMP/perf.err" ||
	fail "perf record failed: $(cat "$TMP/perf.err")"
wait "$pid" || fail "the $runtime workload failed"
BG_PID=
echo go >"$TMP/go"
GO_SENT=1
wait "$resolver" || fail "perfmap_resolve failed: $(cat "$TMP/resolve.err")"
cat "$TMP/resolved" "$TMP/resolve.err"

read -r _ samples _ hot _ leaf _ frames _ resolved <"$TMP/resolved"
[ "$samples" -ge 300 ] || fail "too few samples of $comm ($samples)"
awk -v s="$samples" -v h="$hot" -v l="$leaf" -v min="$MIN_SHARE" -v r="$runtime" 'BEGIN {
	printf "%s: hot function in %.1f%% of %d samples (leaf named by the JIT map in %.1f%%)\n",
		r, 100 * h / s, s, 100 * l / s
	exit (100 * h / s >= min) ? 0 : 1
}' || fail "the hot function is in fewer than $MIN_SHARE% of the samples"
echo PASS
