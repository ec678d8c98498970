#!/bin/bash
# SPDX-License-Identifier: MIT
# A recording stops when asked, whatever the rate: system-wide at 100 kHz (the
# kernel's default perf_event_max_sample_rate, set for the test and restored after)
# on a machine kept busy by two CPU loops and a churn of short processes. With
# --unwind dwarf the kernel fills the sample ring faster than its records are unwound.
# scorch must still honour -d, SIGINT and SIGTERM within 250 ms in every mode (the
# rings are read in slices; what is left at the stop is counted as lost, not unwound),
# and say what it lost.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=100000
STOP=0.25
rate_path=/proc/sys/kernel/perf_event_max_sample_rate
old_rate=$(cat "$rate_path")
LOAD_PID= SPIN_PID=
trap 'kill $LOAD_PID $SPIN_PID 2>/dev/null || true; echo "$old_rate" >"$rate_path"; rm -rf "$TMP"' EXIT
echo "$HZ" >"$rate_path" || fail "cannot set $rate_path to $HZ"

# the machine's load: two CPU loops and 200 new processes a second
start_ready "$LOADGEN" -r 200 -p 2 -d 120
LOAD_PID=$BG_PID
"$SPLIT" --seconds 120 --threads 2 >/dev/null &
SPIN_PID=$!

# -d: the summary gives the time until sampling stopped: within STOP of -d
for mode in "" "--unwind fp" "--mode wall --unwind dwarf"; do
	rc=0
	timeout -s KILL 60 "$SCORCH" record -a -F "$HZ" $mode -d 1 --timing \
		-o "$TMP/d.folded" 2>"$TMP/d.err" || rc=$?
	grep -v '^scorch: unwind dwarf' "$TMP/d.err"
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "-d 1 ${mode:-(default)}: exit $rc"
	secs=$(figure seconds "$TMP/d.err")
	echo "-d 1 ${mode:-(default)}: recorded ${secs} s"
	awk -v s="$secs" -v b="$STOP" 'BEGIN { exit !(s != "" && s - 1 <= b) }' ||
		fail "-d 1 ${mode:-(default)} overran by more than ${STOP} s"
	check_folded "$TMP/d.folded"
done

# SIGINT and SIGTERM once sampling has begun: the time from the signal to the end of
# the summary, less what --timing counts after the stop (reading the maps, naming,
# writing), within STOP
for sig in INT TERM; do
	for mode in "" "--mode offcpu --unwind dwarf"; do
		fifo="$TMP/err.fifo"
		rm -f "$fifo" "$TMP/t.end"
		mkfifo "$fifo"
		timeout -s KILL 60 "$SCORCH" record -a -F "$HZ" $mode --timing -o "$TMP/s.folded" \
			2>"$fifo" &
		pid=$!
		exec 9<"$fifo"
		read -r -t 30 first <&9 || fail "no start line from record ${mode:-(default)}"
		case "$first" in "scorch: sampling"*) ;; *) fail "unexpected line: $first" ;; esac
		# the time the summary's last line comes: the exit after it (freeing the maps and
		# rings; a sanitizer's leak check) is no part of the stop
		while IFS= read -r line; do
			printf '%s\n' "$line"
			case "$line" in
			"scorch: timing: end of recording"*) echo "$EPOCHREALTIME" >"$TMP/t.end" ;;
			esac
		done <&9 >"$TMP/s.err" &
		cat_pid=$!
		exec 9<&-
		# the recording under test lasts a second; the signal goes to scorch itself,
		# not through timeout(1), and the times are bash's own: on a machine this busy a
		# relay or a fork of date(1) can wait hundreds of ms for a CPU
		sleep 1
		spid=$(pgrep -P "$pid" -x scorch) || fail "no scorch process under timeout"
		t0=$EPOCHREALTIME
		kill -s "$sig" "$spid"
		rc=0
		wait "$pid" || rc=$?
		wait "$cat_pid"
		t1=$(cat "$TMP/t.end" 2>/dev/null) || fail "SIG$sig ${mode:-(default)}: no --timing line"
		grep -v '^scorch: unwind dwarf' "$TMP/s.err"
		[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "SIG$sig ${mode:-(default)}: exit $rc"
		# the end phases count from the stop: the rest is the signal's way to it
		total=$(figure timing "$TMP/s.err" "end of recording to output")
		echo "SIG$sig ${mode:-(default)}: summary $(awk -v a="$t0" -v b="$t1" \
			'BEGIN { printf "%.3f", b - a }') s after the signal, ${total} ms of it after the stop"
		awk -v a="$t0" -v b="$t1" -v m="$total" -v s="$STOP" 'BEGIN { exit !(m != "" &&
			b - a - m / 1000 <= s) }' || fail "SIG$sig ${mode:-(default)}: not stopped in time"
		check_folded "$TMP/s.folded"
	done
done
echo PASS
