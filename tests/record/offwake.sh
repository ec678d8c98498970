#!/bin/bash
# SPDX-License-Identifier: MIT
# record --mode offwake on workloads whose wakers are known by construction
# (tests/workloads/wake.c):
# - pipe ping-pong: at least 95 % of the consumer's blocked time (its lines without
#   [runqueue]) lies under consume;...read...;--;...write...;produce;...;ww-producer;
# - a mutex handed to a waiter by three holders in the schedule a a a b c c, each
#   holding it 2 ms: the waiter's blocked time by waker comm is within 3 points of the
#   shares the waiter measured around its hand-offs in the same run (3:1:2, 50 %,
#   16.7 %, 33.3 % nominally, which they must be within 10 points of: a loaded machine
#   stretches some hand-offs);
# - a 2 ms sleeper: at least 95 % of its blocked time is woken by the timer interrupt
#   (hrtimer_wakeup under the interrupt's entry, then [irq]), never dropped; its total
#   off-CPU time equals that of --mode offcpu recording the same run within 2 % (an
#   offcpu recording of the offwake recording of the workload: both see the sleeper's
#   whole life; on a loaded machine two runs differ by more, in their runqueue waits).
# - a process asleep through the whole recording: its wait has no wakeup seen and is
#   kept under --;[unknown waker], the whole window, and counted by -v.
# - the waker's user stack is walked by the kernel walk (the default): the producer's
#   reaches its thread's outermost frame clone3 (libc's __clone3; perf's name, the
#   shortest-prefixed of its local aliases), which --unwind fp does not.
# Every folded line of a blocked interval holds exactly one "--" frame. Refused: a
# capture, --unwind dwarf, --interval.
# --mode wakeup, the wakers alone (bcc wakeuptime's layout): at least 95 % of the time
# the consumer was blocked lies under ww-producer;...;produce;...write...;ww-consumer,
# no line has a [runqueue] or "--" frame; pprof is refused.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# record NAME MODE WORKLOAD [-o FILE...]: the folded file $TMP/NAME.folded
record() {
	local name=$1 mode=$2 what=$3
	shift 3
	"$SCORCH" record -v --mode "$mode" -o "$TMP/$name.folded" "$@" -- "$WAKE" "$what" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || fail "$name: record failed: $(cat "$TMP/$name.err")"
	check_folded "$TMP/$name.folded"
	grep -q '^done$' "$TMP/$name.out" || fail "$name: the workload did not finish"
}

# blocked COMM FILE [REGEX]: COMM's time not on a runqueue, and the part matching REGEX
blocked() {
	awk -v c="$1" -v re="${3:-^$}" '{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		if (index(line, c ";") != 1 || line ~ /;\[runqueue\]$/) next
		t += cnt
		if (re != "^$" && line ~ re) m += cnt
	} END { print t + 0, m + 0 }' "$2"
}

# refused: no capture, no --unwind dwarf, no --interval
"$SCORCH" record --mode offwake -o "$TMP/x.scorch" -- true 2>"$TMP/err" &&
	fail "--mode offwake wrote a capture"
grep -q 'offwake writes no capture' "$TMP/err" || fail "capture refused without the reason: $(cat "$TMP/err")"
"$SCORCH" record --mode offwake --unwind dwarf -o "$TMP/x.folded" -- true 2>"$TMP/err" &&
	fail "--mode offwake took --unwind dwarf"
grep -q '^hint:' "$TMP/err" || fail "--unwind dwarf refused without a hint"
"$SCORCH" record --mode offwake --interval 1 -o "$TMP/x.folded" -- true 2>"$TMP/err" &&
	fail "--mode offwake took --interval"
grep -q 'offwake.*--interval' "$TMP/err" && grep -q '^hint:' "$TMP/err" ||
	fail "--interval refused without the reason and a hint: $(cat "$TMP/err")"

record pingpong offwake pingpong -o "$TMP/pingpong.pb.gz" -o "$TMP/pingpong.json" \
	-o "$TMP/pingpong.svg"
read -r total under <<<"$(blocked ww-consumer "$TMP/pingpong.folded" \
	';consume;.*read[^;]*;.*;--;.*write[^;]*;.*;produce;.*;ww-producer$')"
echo "pingpong: consumer blocked $total us, $under us under consume...read...--...write...produce"
[ "$total" -gt 0 ] || fail "pingpong: no blocked time of ww-consumer"
awk -v t="$total" -v u="$under" 'BEGIN { exit !(u >= 0.95 * t) }' ||
	fail "pingpong: only $under of $total us of the consumer's blocked time name the producer's write"
awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = gsub(/;--;/, "&", line)
	if (line ~ /;\[runqueue\]$/ ? n != 0 : n != 1) { print; bad = 1 } } END { exit bad }' \
	"$TMP/pingpong.folded" || fail "pingpong: a line without exactly one -- frame"
# the waker's user stack by the kernel walk (--unwind auto): complete through libc to the
# thread's outermost frame (clone3, found by its CFI), which frame pointers never reach
# (most of the time, not all: the wakeups before the producer's tables are loaded, late
# on a loaded machine, are walked by frame pointers; 82 to 100 % measured)
read -r _ deep <<<"$(blocked ww-consumer "$TMP/pingpong.folded" \
	';--;.*;produce;producer;start_thread;clone3;ww-producer$')"
echo "pingpong: $deep us of it with the waker's user stack walked to clone3 (kernel walk)"
awk -v t="$total" -v u="$deep" 'BEGIN { exit !(u >= 0.5 * t) }' ||
	fail "pingpong: only $deep of $total us have the waker's stack walked to clone3"
# the wakers alone
record wakeup wakeup pingpong -o "$TMP/wakeup.svg"
read -r wtotal wunder <<<"$(awk '{
	line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
	if (line !~ /;ww-consumer$/) next
	t += cnt
	if (line ~ /^ww-producer;.*;produce;.*write[^;]*;.*try_to_wake_up_\[k\];ww-consumer$/) m += cnt
} END { print t + 0, m + 0 }' "$TMP/wakeup.folded")"
echo "wakeup: consumer woken after $wtotal us blocked, $wunder us under the producer's write"
[ "$wtotal" -gt 0 ] && awk -v t="$wtotal" -v u="$wunder" 'BEGIN { exit !(u >= 0.95 * t) }' ||
	fail "wakeup: only $wunder of $wtotal us of the consumer's waits under the producer's write"
! grep -q '\[runqueue\]\|;--;' "$TMP/wakeup.folded" || fail "wakeup: a runqueue or -- frame"
grep -q 'Wakeup Time Flame Graph' "$TMP/wakeup.svg" || fail "wakeup: the SVG's title"
"$SCORCH" record --mode wakeup -o "$TMP/x.pb.gz" -- true 2>"$TMP/err" &&
	fail "--mode wakeup wrote pprof"
grep -q '^hint:' "$TMP/err" || fail "pprof refused without a hint"
record pingpong-fp offwake pingpong --unwind fp
read -r fptotal fpdeep <<<"$(blocked ww-consumer "$TMP/pingpong-fp.folded" \
	';--;.*;clone3;ww-producer$')"
echo "pingpong --unwind fp: $fpdeep of $fptotal us with the waker's stack to clone3"
[ "$fptotal" -gt 0 ] && [ "$fpdeep" -lt "$((fptotal / 2))" ] ||
	fail "pingpong --unwind fp: the waker's stack reached clone3 by frame pointers"
# the other outputs: the same stacks, the waker as pprof labels, its frames blue in the SVG
if command -v go >/dev/null; then
	HOME="$TMP" GOCACHE="$TMP/gocache" go tool pprof -tags "$TMP/pingpong.pb.gz" \
		>"$TMP/tags" 2>&1 || fail "go tool pprof -tags: $(cat "$TMP/tags")"
	grep -q 'waker_comm:' "$TMP/tags" && grep -q ': ww-producer$' "$TMP/tags" &&
		grep -q 'waker_pid:' "$TMP/tags" ||
		fail "pprof: no waker_comm ww-producer / waker_pid labels: $(cat "$TMP/tags")"
elif [ "${CI:-}" = true ]; then
	fail "go (golang-go) is missing: run scripts/setup.sh"
fi
python3 - "$TMP/pingpong.json" <<'PY' || fail "speedscope: the waker's frames are missing"
import json, sys
names = {f["name"] for f in json.load(open(sys.argv[1]))["shared"]["frames"]}
sys.exit(0 if {"--", "try_to_wake_up", "produce", "consume"} <= names else 1)
PY
grep -q 'fill="rgb(160,160,160)"' "$TMP/pingpong.svg" || fail "svg: the -- frame is not grey"
grep -o '<title>produce ([^<]*</title><rect[^>]*fill="rgb([0-9]*,[0-9]*,[0-9]*)' \
	"$TMP/pingpong.svg" | grep -q 'fill="rgb(\([0-9]*\),\1,' ||
	fail "svg: the waker's frame produce is not blue (wakeup palette)"

record mutex offwake mutex
read -r _ _ wa _ wb _ wc <<<"$(grep '^waited ' "$TMP/mutex.out")"
[ -n "${wc:-}" ] || fail "mutex: the workload printed no waits: $(cat "$TMP/mutex.out")"
awk -v wa="$wa" -v wb="$wb" -v wc="$wc" '{
	line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
	if (index(line, "ww-waiter;") != 1 || line ~ /;\[runqueue\]$/) next
	n = split(line, f, ";"); t[f[n]] += cnt; s += cnt
} END {
	all = wa + wb + wc
	want["ww-a"] = 100 * wa / all; want["ww-b"] = 100 * wb / all; want["ww-c"] = 100 * wc / all
	nominal["ww-a"] = 50; nominal["ww-b"] = 100 / 6; nominal["ww-c"] = 100 / 3
	for (w in want) {
		got = s ? 100 * t[w] / s : 0
		printf "mutex: woken by %s %.1f%% (measured by the waiter %.1f%%, by construction %.1f%%)\n",
			w, got, want[w], nominal[w]
		if (got < want[w] - 3 || got > want[w] + 3) bad = 1
		if (want[w] < nominal[w] - 10 || want[w] > nominal[w] + 10) bad = 1
	}
	exit bad
}' "$TMP/mutex.folded" || fail "mutex: the waker shares are not the waiter's within 3 points"

"$SCORCH" record -v --mode offcpu -o "$TMP/timer-offcpu.folded" -- \
	"$SCORCH" record -v --mode offwake -o "$TMP/timer.folded" -- "$WAKE" timer \
	>"$TMP/timer.out" 2>"$TMP/timer.err" || fail "timer: record failed: $(cat "$TMP/timer.err")"
check_folded "$TMP/timer.folded"
check_folded "$TMP/timer-offcpu.folded"
grep -q '^done$' "$TMP/timer.out" || fail "timer: the workload did not finish"
read -r total irq <<<"$(blocked ww-sleeper "$TMP/timer.folded" ';hrtimer_wakeup_\[k\];.*;\[irq\]$')"
echo "timer: sleeper blocked $total us, $irq us woken by the timer interrupt"
[ "$total" -gt 0 ] || fail "timer: no blocked time of ww-sleeper"
awk -v t="$total" -v u="$irq" 'BEGIN { exit !(u >= 0.95 * t) }' ||
	fail "timer: only $irq of $total us of the sleeper's blocked time are the timer's"
wake_all=$(comm_total "$TMP/timer.folded" ww-sleeper)
off_all=$(comm_total "$TMP/timer-offcpu.folded" ww-sleeper)
echo "timer: sleeper off CPU $wake_all us (offwake), $off_all us (offcpu)"
awk -v a="$wake_all" -v b="$off_all" 'BEGIN { exit !(b > 0 && a >= 0.98 * b && a <= 1.02 * b) }' ||
	fail "timer: offwake's total $wake_all us is not offcpu's $off_all us within 2 %"
grep -q 'wakers:' "$TMP/timer.err" || fail "timer: -v names no waker counters"
# no wakeup seen: kept, under [unknown waker], the whole window
sleep 60 &
BG_PID=$!
"$SCORCH" record -v --mode offwake -p "$BG_PID" -d 1 -o "$TMP/asleep.folded" \
	2>"$TMP/asleep.err" || fail "asleep: record failed: $(cat "$TMP/asleep.err")"
check_folded "$TMP/asleep.folded"
asleep=$(awk '$0 ~ /^sleep;.*;--;\[unknown waker\] [0-9]+$/ { t += $NF }
	END { print t + 0 }' "$TMP/asleep.folded")
echo "asleep: $asleep us under [unknown waker] of a 1000000 us recording"
awk -v t="$asleep" 'BEGIN { exit !(t >= 990000 && t <= 1010000) }' ||
	fail "asleep: $asleep us under [unknown waker], not the 1 s window: $(cat "$TMP/asleep.folded")"
grep -q 'wakers:.*s under \[unknown waker\]' "$TMP/asleep.err" ||
	fail "asleep: -v does not count the waits with no waker"
echo PASS
