#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: memory of a long system-wide recording under process churn -- scorch record -a
# beside perf record -a -g on the same run: peak RSS, RSS at minute 2 and at the end,
# and the growth from minute 2 to the end. TOP=1: the live view instead, scorch top -a -b
# beside perf top -a -g --stdio, both refreshing every second (their text thrown away).
#
# usage: sudo bench/longrun-memory.sh
#   DURATION  recording length in seconds (default 600; DURATION=120 for a quick run)
#   RATE      new processes per second (default 50: fork+exec+exit, ~1 ms of CPU each)
#   FREQ      sampling frequency (default 999)
#   TOP=1     scorch top and perf top instead of the two recordings (DURATION=3600: an hour)
#   SEQUENTIAL=1  one profiler after the other, each beside a fresh load (default: both
#             at once on one load, so that they see the same processes)
#   SCORCH    the scorch binary (default build/profiler/scorch)
#
# bench/loadgen.c makes the churn (with 2 ping-pong thread pairs); bench/runstat.py runs
# each profiler and samples its VmRSS every 5 s. "minute 2" is the sample nearest
# min(120 s, DURATION / 2). The machine may be shared: compare rows of one run.
# Exits nonzero only when it cannot run (not root, no perf, no scorch).
set -eu
. "$(dirname "$0")/lib.sh"
need_root
need_scorch
need_tool perf linux-perf
dur=${DURATION:-600}
rate=${RATE:-50}
freq=${FREQ:-999}

make_work
s_pid=
# the recording beside perf is killed too when the script stops early
trap 'bench_cleanup; [ -z "$s_pid" ] || kill "$s_pid" 2>/dev/null || true' EXIT
build_loadgen

top=${TOP:-0}
run_scorch() {
	if [ "$top" = 1 ]; then
		python3 "$here/runstat.py" --period 5 "$work/scorch.json" -- "$scorch" top -a -b \
			-F "$freq" --refresh 1 -d "$dur" >/dev/null 2>"$work/scorch.err"
		return
	fi
	python3 "$here/runstat.py" --period 5 "$work/scorch.json" -- "$scorch" record -a \
		-F "$freq" -d "$dur" -o "$work/scorch.folded" 2>"$work/scorch.err"
}
run_perf() {
	local rs perf
	if [ "$top" = 1 ]; then
		# perf top has no duration: SIGINT after it; its keys come from a silent pipe (at
		# end of file it spins)
		sleep $((dur + 60)) | python3 "$here/runstat.py" --period 5 "$work/perf.json" -- \
			perf top -a -g --stdio -F "$freq" -d 1 -E 20 >/dev/null 2>"$work/perf.err" &
		rs=$!
		sleep 1
		perf=$(pgrep -P "$(pgrep -f "runstat.py --period 5 $work/perf.json" | head -n 1)" | head -n 1)
		sleep "$dur"
		[ -z "$perf" ] || kill -INT "$perf" 2>/dev/null || true
		wait "$rs" || true
		return
	fi
	python3 "$here/runstat.py" --period 5 "$work/perf.json" -- perf record -a -g -F "$freq" \
		-o "$work/perf.data" -- sleep "$dur" >/dev/null 2>"$work/perf.err"
}

what=recording
[ "$top" = 0 ] || what="a live view (top),"
echo "load: $rate processes/s, 2 ping-pong pairs; $what $dur s system-wide at $freq Hz" \
	"on $(nproc) CPUs ($([ "${SEQUENTIAL:-0}" = 1 ] && echo "one after the other" ||
	echo "both at once"))"
s_rc=0
if [ "${SEQUENTIAL:-0}" = 1 ]; then
	load_start "$rate" 2 $((dur + 3)) "$work/loadgen.err"
	run_scorch || s_rc=$?
	load_end "$work/loadgen.err"
	load_start "$rate" 2 $((dur + 3)) "$work/loadgen.err"
	run_perf || true
	load_end "$work/loadgen.err"
else
	load_start "$rate" 2 $((dur + 3)) "$work/loadgen.err"
	run_scorch &
	s_pid=$!
	run_perf || true
	wait "$s_pid" || s_rc=$?
	s_pid=
	load_end "$work/loadgen.err"
fi
sed 's/^/  /' "$work/scorch.err"

# row TOOL FILE.json: peak, minute 2, end, growth
row() {
	python3 - "$1" "$2" "$dur" <<'PY'
import json, sys
tool, path, dur = sys.argv[1], sys.argv[2], float(sys.argv[3])
j = json.load(open(path))
s = j["rss_kib"] or [[0, 0]]
t2 = min(120.0, dur / 2)
m2 = min(s, key=lambda p: abs(p[0] - t2))[1]
end = s[-1][1]
growth = 100.0 * (end - m2) / m2 if m2 else 0.0
print(f"{tool:<13} {j['maxrss_kib'] / 1024:9.1f} {m2 / 1024:12.1f} {end / 1024:9.1f} "
      f"{growth:+9.1f}% {j['user_s'] + j['sys_s']:8.1f}")
PY
}
printf '\n%-13s %9s %12s %9s %10s %8s\n' tool "peak MiB" "minute 2 MiB" "end MiB" growth "CPU s"
row scorch "$work/scorch.json"
if [ "$top" = 1 ]; then
	row "perf top -g" "$work/perf.json"
else
	row "perf record" "$work/perf.json"
	echo "scorch: $(figure scorch stacks "$work/scorch.err") distinct stacks;" \
		"perf.data $(($(du -k "$work/perf.data" | cut -f1) / 1024)) MiB"
fi
[ "$s_rc" -eq 0 ] || [ "$s_rc" -eq 3 ] || die "scorch exited $s_rc" "see its messages above"
