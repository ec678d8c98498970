#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what a live view costs: scorch top beside perf top, system-wide at the same
# rate and refresh, on the same CPU job, one after the other in one run.
#
# usage: sudo bench/top-bench.sh
# environment: EACH (default 30) seconds each tool runs; FREQ (default 999); REFRESH
#   (default 1) seconds; SETTLE (default 3) seconds of start-up left out of the steady
#   figures; THREADS (default 2) threads of bench/cpujob.c, pinned one per CPU (PIN=0:
#   not); CHURN (default 0) new processes a second beside them (bench/loadgen.c, all
#   the run); SCORCH the binary.
# For each of: no profiler, scorch top -b, perf top --stdio, perf top -g --stdio (call
# graphs, as scorch top keeps whole stacks): the tool starts, SETTLE s later the job
# runs for EACH - SETTLE - 1 s, at EACH the tool is stopped (timeout: scorch SIGTERM,
# perf SIGINT). Printed, a markdown table: the tool's CPU time (user + sys of all its
# threads) in % of one CPU, over the job's run (steady: /proc/PID/stat's ticks) and over
# its whole run (start-up and end included: wait4's rusage), its peak RSS, the share of
# the job threads' time taken from them (bench/cpujob.c's taken_s / alive_s: the
# sampling interrupts with scorch's BPF program or perf's handler, the tools' own work
# where it ran on their CPUs, and on a shared machine whatever else ran: compare with
# the row without a profiler), and the refreshes it printed. perf top reads keys from
# standard input: it gets a pipe that stays open and silent (at end of file it spins).
# Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
-h | --help)
	sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
'') ;;
*) die "no arguments: the environment sets the run" "EACH=60 FREQ=99 $0" ;;
esac
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool python3 python3
need_tool timeout coreutils
each=${EACH:-30}
freq=${FREQ:-999}
refresh=${REFRESH:-1}
threads=${THREADS:-2}
churn=${CHURN:-0}
settle=${SETTLE:-3}
[[ $settle =~ ^[0-9]+$ ]] || die "invalid SETTLE '$settle'" "give whole seconds, e.g. SETTLE=3"
[[ $each =~ ^[0-9]+$ ]] && [ "$each" -ge $((settle + 3)) ] ||
	die "invalid EACH '$each'" "give whole seconds, SETTLE + 3 or more"
[[ $freq =~ ^[1-9][0-9]*$ ]] || die "invalid FREQ '$freq'" "e.g. FREQ=999"
[[ $refresh =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "invalid REFRESH '$refresh'" "e.g. REFRESH=1"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "invalid THREADS '$threads'" "e.g. THREADS=2"
[[ $churn =~ ^[0-9]+$ ]] || die "invalid CHURN '$churn'" "new processes a second, e.g. CHURN=50"
max=$(sysctl -n kernel.perf_event_max_sample_rate)
[ "$freq" -le "$max" ] || die "FREQ $freq is above kernel.perf_event_max_sample_rate ($max)" \
	"lower FREQ, or sysctl kernel.perf_event_max_sample_rate=$freq"
make_work
build_cpujob
pin_job
if [ "$churn" != 0 ]; then
	build_loadgen
	load_start "$churn" 0 $((each * 4 + 60)) "$work/loadgen.err"
fi

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run NAME SIGNAL [COMMAND...]: the job beside COMMAND (none: alone)
run() {
	local name=$1 sig=$2 tool= pid= t0=0 t1=0 start end
	shift 2
	if [ $# -gt 0 ]; then
		sleep $((each + 10)) | python3 "$here/runstat.py" --period 0.5 "$work/$name.json" -- \
			timeout -k 5 -s "$sig" "$each" "$@" >"$work/$name.out" 2>"$work/$name.err" &
		tool=$!
		sleep "$settle" # its start-up (programs, symbols) is not the live view's cost
		# runstat.py -> timeout -> the tool
		pid=$(pgrep -P "$(pgrep -P "$tool" | head -n 1)" | head -n 1)
		[ -n "$pid" ] || die "$name did not start: $(head -n 2 "$work/$name.err")"
		t0=$(ticks "$pid")
	fi
	start=$(date +%s.%N)
	"$work/cpujob" "$threads" -t $((each - settle - 1)) >"$work/$name.job" ||
		die "the CPU job failed"
	end=$(date +%s.%N)
	[ -z "$pid" ] || t1=$(ticks "$pid")
	echo "$t0 $t1 $start $end" >"$work/$name.steady"
	[ -z "$tool" ] || wait "$tool" || true
}

s_cmd=("$scorch" top -a -b -F "$freq" --refresh "$refresh" -n 20)
p_cmd=(perf top -a --stdio -F "$freq" -d "$refresh" -E 20)
run none -
run scorch TERM "${s_cmd[@]}"
run perf INT "${p_cmd[@]}"
run perf-g INT "${p_cmd[@]}" -g
[ "$churn" = 0 ] || load_end "$work/loadgen.err"

python3 - "$work" "$each" "$freq" "$refresh" "$threads" "$churn" "$(nproc)" \
	"${s_cmd[*]}" "${p_cmd[*]}" "$(getconf CLK_TCK)" <<'PY'
import json, os, re, sys
work, each, freq, refresh, threads, churn, cpus, s_cmd, p_cmd, hz = sys.argv[1:]
def job(name):
    line = open(f"{work}/{name}.job").read()
    f = dict(re.findall(r"(\w+) ([0-9.]+)", line))
    return 100.0 * float(f["taken_s"]) / float(f["alive_s"])
def refreshes(name, pat):
    try:
        return sum(1 for l in open(f"{work}/{name}.out", errors="replace") if re.search(pat, l))
    except OSError:
        return 0
print(f"scorch top beside perf top: system-wide at {freq} Hz, refresh {refresh} s, {each} s "
      f"each, a {threads}-thread CPU job{' (pinned)' if os.environ.get('CPUJOB_PIN') == '1' else ''}"
      f"{f', {churn} new processes/s' if churn != '0' else ''}, {cpus} CPUs")
print()
def steady(name):
    t0, t1, start, end = (float(x) for x in open(f"{work}/{name}.steady").read().split())
    return 100.0 * (t1 - t0) / float(hz) / (end - start)
print("| tool | CPU steady, % of one CPU | CPU in all | peak RSS, MiB | job's time taken | "
      "refreshes |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
print(f"| no profiler | - | - | - | {job('none'):.2f}% | - |")
rows = [("scorch", f"`{os.path.basename(s_cmd.split()[0])} {' '.join(s_cmd.split()[1:])}`", r"^# refresh="),
        ("perf", f"`{p_cmd}`", r"PerfTop:"),
        ("perf-g", f"`{p_cmd} -g`", r"PerfTop:")]
for name, label, pat in rows:
    j = json.load(open(f"{work}/{name}.json"))
    cpu = 100.0 * (j["user_s"] + j["sys_s"]) / j["wall_s"]
    print(f"| {label} | {steady(name):.2f}% | {cpu:.2f}% | {j['maxrss_kib'] / 1024:.1f} | "
          f"{job(name):.2f}% | {refreshes(name, pat)} |")
PY
for t in scorch perf perf-g; do
	[ ! -s "$work/$t.err" ] || { echo "$t's standard error:"; head -n 5 "$work/$t.err" | sed 's/^/  /'; }
done
