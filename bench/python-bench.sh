#!/bin/bash
# SPDX-License-Identifier: MIT
# What reading Python frames costs a busy Python process: Debian's python3 runs
# bench/pyjob.py (small calls 30 Python frames deep) for SECONDS_EACH seconds, alone and
# under each profiler at 999 Hz, in interleaved rounds. For each: the job's throughput
# (its slowdown is the overhead; at 999 Hz it is within this machine's noise), the time
# scorch's BPF programs ran per sample (kernel.bpf_stats_enabled, read from scorch's
# fdinfo by a shell scorch itself runs after the job, so before scorch detaches), and
# scorch's own CPU while the job ran (its threads' schedstat, read by that shell before
# and after the job: start-up and the end's naming and writing left out, which a longer
# recording spreads over more samples). scorch records with
# Python frames (the default: CPython processes walked in the kernel), with --no-python
# (native stacks copied to scorch, the on-CPU default for other processes) and with
# --unwind kernel --no-python (the same kernel walk without the Python frames); perf
# records frame pointers (-g) and DWARF copies (--call-graph dwarf) for reference.
# The last line: the Python frames' cost per sample (kernel + scorch) as a multiple of
# --no-python's.
# usage: bench/python-bench.sh [ROUNDS]   (root; perf; SECONDS_EACH=3, ROUNDS=5)
set -eu
. "$(dirname "$0")/lib.sh"
need_root
need_scorch
need_tool perf linux-perf
rounds_arg "${1:-5}"
secs=${SECONDS_EACH:-3}
py=/usr/bin/python3
job="$here/pyjob.py"
[ -x "$py" ] || die "no $py" "apt-get install python3"
[ -w /proc/sys/kernel/bpf_stats_enabled ] || die "cannot write kernel.bpf_stats_enabled" \
	"run as root on a kernel with BPF statistics (5.8 or later)"
make_work
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
trap 'echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled; bench_cleanup' EXIT

# the job, then (under scorch) its BPF programs' statistics, and the job's own CPU time
cat >"$work/job.sh" <<SH
oncpu() { cat /proc/\$PPID/task/*/schedstat 2>/dev/null | awk '{ t += \$1 } END { print t + 0 }'; }
[ "\${1:-}" != stats ] || echo "scorch0 \$(oncpu)"
"$py" -c "
import os, runpy, sys
sys.argv = ['$job', '$secs']
runpy.run_path('$job', run_name='__main__')
t = os.times()
print('jobcpu', t.user + t.system)
"
[ "\${1:-}" != stats ] || echo "scorch1 \$(oncpu)"
[ "\${1:-}" != stats ] || cat /proc/\$PPID/fdinfo/* 2>/dev/null |
	awk '/^prog_type:\t7\$/ { p = 1 } /^run_time_ns:/ && p { ns += \$2 } /^run_cnt:/ && p { n += \$2; p = 0 }
		END { print "bpf", ns + 0, n + 0 }'
SH

run() { # tool: prints "ops jobcpu bpf_ns bpf_runs profiler_cpu"
	local out="$work/out"
	case $1 in
	base) set -- sh "$work/job.sh" ;;
	scorch) set -- "$scorch" record -q -F 999 -o "$work/s.folded" -- sh "$work/job.sh" stats ;;
	scorch-nopy) set -- "$scorch" record -q --no-python -F 999 -o "$work/s.folded" -- \
		sh "$work/job.sh" stats ;;
	scorch-kernel) set -- "$scorch" record -q --unwind kernel --no-python -F 999 \
		-o "$work/s.folded" -- sh "$work/job.sh" stats ;;
	perf-fp) set -- perf record -q -F 999 -g -o "$work/perf.data" -- sh "$work/job.sh" ;;
	perf-dwarf) set -- perf record -q -F 999 --call-graph dwarf -o "$work/perf.data" -- \
		sh "$work/job.sh" ;;
	esac
	"$@" >"$out" 2>/dev/null
	awk '/^ops/ { ops = $2 } /^jobcpu/ { j = $2 } /^bpf/ { ns = $2; n = $3 }
		/^scorch0/ { s0 = $2 } /^scorch1/ { s1 = $2 }
		END { printf "%d %.3f %d %d %.6f\n", ops, j, ns, n, (s1 - s0) / 1e9 }' "$out"
}

tools=(base scorch scorch-nopy scorch-kernel perf-fp perf-dwarf)
for ((r = 1; r <= rounds; r++)); do
	for t in "${tools[@]}"; do
		echo "$t $(run "$t")" >>"$work/results"
	done
done
python3 - "$work/results" "$secs" "$rounds" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    t, *v = line.split()
    rows.setdefault(t, []).append([float(x) for x in v])
secs, rounds = float(sys.argv[2]), int(sys.argv[3])
med = lambda t, i: statistics.median(r[i] for r in rows[t])
base = med("base", 0)
print(f"python-bench: Debian python3, bench/pyjob.py 30 Python frames deep, {secs:g} s at "
      f"999 Hz, {rounds} rounds (medians)")
print()
print("| profiler | job ops/s | slowdown | BPF ns/sample | scorch CPU during the job, ms | "
      "cost/sample (BPF + scorch) |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
names = {"base": "none", "scorch": "scorch (Python frames)", "scorch-nopy": "scorch --no-python",
         "scorch-kernel": "scorch --unwind kernel --no-python", "perf-fp": "perf record -g",
         "perf-dwarf": "perf --call-graph dwarf"}
cost = {}
for t in ("base", "scorch", "scorch-nopy", "scorch-kernel", "perf-fp", "perf-dwarf"):
    ops = med(t, 0)
    slow = 100 * (base / ops - 1)
    if t.startswith("scorch"):
        per = [r[2] / r[3] if r[3] else 0 for r in rows[t]]
        tot = [(r[2] + r[4] * 1e9) / r[3] if r[3] else 0 for r in rows[t]]
        cost[t] = statistics.median(tot)
        print(f"| {names[t]} | {ops / secs:,.0f} | {slow:.1f} % | {statistics.median(per):,.0f} | "
              f"{1000 * med(t, 4):,.0f} | {cost[t]:,.0f} ns |")
    else:
        print(f"| {names[t]} | {ops / secs:,.0f} | {slow:.1f} % | | | |")
print()
print(f"Python frames: {cost['scorch']:,.0f} ns a sample against {cost['scorch-nopy']:,.0f} "
      f"with --no-python ({cost['scorch'] / cost['scorch-nopy']:.2f}x) and "
      f"{cost['scorch-kernel']:,.0f} for the same kernel walk without them "
      f"({cost['scorch'] / cost['scorch-kernel']:.2f}x)")
PY
