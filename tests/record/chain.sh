#!/bin/bash
# SPDX-License-Identifier: MIT
# record --mode chain: who woke the waker, on pipelines whose chains are known.
# - By construction (tests/workloads/wake.c pipeline): ww-origin naps 1 ms (a timer wakes
#   it) and writes pipe A; ww-relay blocks reading A, then writes pipe B; ww-sink blocks
#   reading B. At least 80 % of the sink's blocked time lies under
#   sink_read;...;--;...relay_write;...;ww-relay;--;...origin_write;...;ww-origin, in
#   that order, and at least half of it then under the timer that woke the origin
#   (hrtimer_wakeup, then [irq]: the interrupt ends the chain); the relay's under
#   relay_read;...;--;...origin_write;...;ww-origin. No line has more levels than
#   --chain-depth (3 by default, 2 asked); pprof labels each level (waker_comm,
#   waker2_comm), the SVG is a "Chain Graph".
# - A real program (Debian's python3, tests/workloads/pychain.py: three threads over
#   queue.Queue, the origin sleeping 1 ms): bpftrace on sched_waking, on the same run,
#   counts each wakeup of pq-sink by (its waker, the waker's own last waker); both it
#   and scorch put at least 80 % of the sink's wakeups (bpftrace) and blocked time
#   (scorch) under pq-relay then pq-origin.
# Refused: --chain-depth without --mode chain, or out of 1..4; a capture.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# refusals
rc=0; "$SCORCH" record --chain-depth 2 -o "$TMP/x.folded" -- true 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--chain-depth is for --mode chain' "$TMP/err" &&
	grep -q '^hint:' "$TMP/err" || fail "--chain-depth without --mode chain: rc $rc, $(cat "$TMP/err")"
rc=0; "$SCORCH" record --mode chain --chain-depth 5 -o "$TMP/x.folded" -- true 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q '^hint:' "$TMP/err" || fail "--chain-depth 5 accepted: rc $rc"
rc=0; "$SCORCH" record --mode chain -o "$TMP/x.scorch" -- true 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'chain writes no capture' "$TMP/err" ||
	fail "--mode chain wrote a capture: rc $rc, $(cat "$TMP/err")"

# chain_of COMM FILE: COMM's blocked time (no [runqueue]) by its chain of waker names
# (the top frame of each level), most first: "SHARE% <- waker <- its waker ..."
chain_of() {
	awk -v c="$1" '{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		if (index(line, c ";") != 1 || line ~ /;\[runqueue\]$/) next
		n = split(line, lv, ";--;"); k = ""
		for (i = 2; i <= n; i++) { m = split(lv[i], f, ";"); k = k " <- " f[m] }
		t[k] += cnt; s += cnt
	} END { for (k in t) printf "%.1f%%%s\n", 100 * t[k] / s, k }' "$2" | sort -rn
}

# share COMM FILE RE0 [RE1...]: the percentage of COMM's blocked time whose level i
# (0: the blocked stack, i: the frames after the i-th "--") matches REi, each level asked
# present ("" matches any)
share() {
	local c=$1 f=$2
	shift 2
	awk -v c="$c" -v res="$(printf '%s\n' "$@")" 'BEGIN { nr = split(res, re, "\n") - 1 }
	{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		if (index(line, c ";") != 1 || line ~ /;\[runqueue\]$/) next
		t += cnt
		n = split(line, lv, ";--;")
		if (n < nr) next
		for (i = 1; i <= nr; i++) if (lv[i] !~ re[i]) next
		m += cnt
	} END { printf "%.1f\n", t ? 100 * m / t : 0 }' "$f"
}

# levels FILE: the most "--" frames in a line
levels() { awk '{ n = gsub(/;--;/, "&"); if (n > m) m = n } END { print m + 0 }' "$1"; }

relay_level='^try_to_wake_up_\[k\];.*write[^;]*;.*;relay_write;relay;.*;ww-relay$'
origin_level='^try_to_wake_up_\[k\];.*write[^;]*;.*;origin_write;origin;.*;ww-origin$'

"$SCORCH" record -v --mode chain -o "$TMP/pipe.folded" -o "$TMP/pipe.pb.gz" \
	-o "$TMP/pipe.svg" -- "$WAKE" pipeline >"$TMP/pipe.out" 2>"$TMP/pipe.err" ||
	fail "pipeline: record failed: $(cat "$TMP/pipe.err")"
check_folded "$TMP/pipe.folded"
grep -q '^done$' "$TMP/pipe.out" || fail "pipeline: the workload did not finish"
echo "pipeline: the sink's blocked time by chain:"
chain_of ww-sink "$TMP/pipe.folded" | head -n 4 | sed 's/^/  /'
sink=$(share ww-sink "$TMP/pipe.folded" ';sink_read;' "$relay_level" "$origin_level")
irq=$(share ww-sink "$TMP/pipe.folded" ';sink_read;' "$relay_level" "$origin_level" \
	'^try_to_wake_up_\[k\];hrtimer_wakeup_\[k\];.*;\[irq\]$')
relay=$(share ww-relay "$TMP/pipe.folded" ';relay_read;' "$origin_level")
echo "pipeline: sink <- relay's write <- origin's write: $sink% of the sink's blocked time" \
	"($irq% then <- the timer's [irq]); relay <- origin's write: $relay% of the relay's"
awk -v s="$sink" -v r="$relay" -v i="$irq" 'BEGIN { exit !(s >= 80 && r >= 80 && i >= 50) }' ||
	fail "pipeline: the chains by construction are not found (sink $sink%, relay $relay%, irq $irq%)"
[ "$(levels "$TMP/pipe.folded")" -le 3 ] || fail "pipeline: more than 3 levels at the default depth"
grep -q 'Chain Graph' "$TMP/pipe.svg" || fail "pipeline: the SVG is not titled Chain Graph"
grep -q "chain: [1-9][0-9]* wakeups by a waker whose own waker was known" "$TMP/pipe.err" ||
	fail "pipeline: no chain line in the -v summary"
if command -v go >/dev/null; then
	HOME="$TMP" GOCACHE="$TMP/gocache" go tool pprof -tags "$TMP/pipe.pb.gz" \
		>"$TMP/tags" 2>&1 || fail "go tool pprof -tags: $(cat "$TMP/tags")"
	grep -A3 '^ *waker_comm:' "$TMP/tags" | grep -q 'ww-relay' &&
		grep -A3 '^ *waker2_comm:' "$TMP/tags" | grep -q 'ww-origin' ||
		fail "pprof: no waker_comm ww-relay / waker2_comm ww-origin labels: $(cat "$TMP/tags")"
elif [ "${CI:-}" = true ]; then
	fail "go (golang-go) is missing: run scripts/setup.sh"
fi

"$SCORCH" record --mode chain --chain-depth 2 -o "$TMP/pipe2.folded" -- "$WAKE" pipeline \
	>/dev/null 2>"$TMP/pipe2.err" || fail "pipeline, depth 2: $(cat "$TMP/pipe2.err")"
check_folded "$TMP/pipe2.folded"
sink2=$(share ww-sink "$TMP/pipe2.folded" ';sink_read;' "$relay_level" "$origin_level")
echo "pipeline --chain-depth 2: $sink2% of the sink's blocked time ends with the origin"
[ "$(levels "$TMP/pipe2.folded")" -le 2 ] || fail "pipeline: more than 2 levels at --chain-depth 2"
awk -v s="$sink2" 'BEGIN { exit !(s >= 80) }' || fail "pipeline, depth 2: $sink2%"

# a real program beside bpftrace, which needs tracefs: mounted for the test if it is not
command -v bpftrace >/dev/null || {
	[ "${CI:-}" = true ] && fail "bpftrace is missing: run scripts/setup.sh"
	echo "SKIP (bpftrace part): bpftrace is not installed"
	echo PASS
	exit 0
}
mounted=0
if [ ! -e /sys/kernel/tracing/events/sched ]; then
	mount -t tracefs nodev /sys/kernel/tracing || fail "cannot mount tracefs for bpftrace"
	mounted=1
fi
trap 'rm -rf "$TMP"; [ -z "${BT:-}" ] || kill "$BT" 2>/dev/null || true;
	[ "$mounted" = 0 ] || umount /sys/kernel/tracing 2>/dev/null || true' EXIT
# each wakeup of pq-sink by (waker, the waker's last waker), among the pipeline's threads
mkfifo "$TMP/bt.fifo"
# bounded: SIGINT at the latest after 120 s (timeout passes the test's on to it)
timeout -s INT -k 10 120 bpftrace -e 'tracepoint:sched:sched_waking
/comm == "pq-origin" || comm == "pq-relay" || comm == "pq-sink"/ {
	if (args->comm == "pq-sink") { @chain[comm, @by[tid]] = count(); }
	@by[args->pid] = comm;
}
END { clear(@by); }' >"$TMP/bt.fifo" 2>"$TMP/bt.err" &
BT=$!
exec 8<"$TMP/bt.fifo"
read -r -t 60 line <&8 || fail "bpftrace did not start: $(cat "$TMP/bt.err")"
case "$line" in Attaching*) ;; *) fail "bpftrace: $line $(cat "$TMP/bt.err")" ;; esac
cat <&8 >"$TMP/bt.out" &
CAT=$!
"$SCORCH" record --mode chain -o "$TMP/py.folded" -- \
	python3 "$(dirname "$0")/../workloads/pychain.py" 3 >"$TMP/py.out" 2>"$TMP/py.err" ||
	fail "python pipeline: record failed: $(cat "$TMP/py.err")"
kill -INT "$BT"
wait "$BT" || true
BT=
wait "$CAT" || true
exec 8<&-
check_folded "$TMP/py.folded"
grep -q '^done ' "$TMP/py.out" || fail "python pipeline: the workload did not finish"
echo "python pipeline: pq-sink's blocked time by chain:"
chain_of pq-sink "$TMP/py.folded" | head -n 4 | sed 's/^/  /'
ours=$(share pq-sink "$TMP/py.folded" '' ';pq-relay$' ';pq-origin$')
theirs=$(awk -F'[][,:]+' '/^@chain\[/ {
	gsub(/ /, ""); n = $NF; t += n; if ($2 == "pq-relay" && $3 == "pq-origin") m += n
} END { printf "%.1f\n", t ? 100 * m / t : 0 }' "$TMP/bt.out")
echo "python pipeline: pq-sink <- pq-relay <- pq-origin: $ours% of its blocked time" \
	"(scorch), $theirs% of its wakeups (bpftrace on sched_waking)"
awk -v a="$ours" -v b="$theirs" 'BEGIN { exit !(a >= 80 && b >= 80) }' ||
	fail "python pipeline: scorch ($ours%) and bpftrace ($theirs%) do not both see the chain"
echo PASS
