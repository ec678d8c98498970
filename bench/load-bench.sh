#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: system-wide recording at 999 Hz under load -- hundreds of processes a
# second forking, exec'ing and exiting, and thread pairs ping-ponging over pipes
# and condition variables (bench/loadgen.c) -- scorch beside perf record -a -g in
# the same run.
#
# usage: sudo bench/load-bench.sh [SCORCH] [SECONDS] [PROCS_PER_SEC] [PAIRS]
#   SCORCH         the scorch binary (default build/profiler/scorch)
#   SECONDS        recording length (default 25)
#   PROCS_PER_SEC  processes started per second (default 300)
#   PAIRS          ping-pong thread pairs (default 4)
#
# For each profiler, a fresh load runs for SECONDS + 3 and the profiler records
# the whole system for SECONDS under bench/runstat.py, which gives its CPU time
# (user + system, from wait4) and its peak RSS, and samples RSS every 0.5 s. Rows:
#   scorch        scorch record -v -a -F 999 -d SECONDS -o out.folded: the result is
#                 ready when it exits (-v: its summary's losses and processes)
#   perf record   perf record -a -g -F 999 -o perf.data -- sleep SECONDS (frame
#                 pointers, as scorch's default); perf report needs the second row:
#   perf script   perf script > /dev/null on that perf.data, the symbolization perf
#                 defers
# Samples, losses and processes come from each tool's own accounting, read by
# bench/summary.py: scorch's summary; perf's "Captured ... samples" line and the LOST
# events of perf report --stats. The machine may be shared: compare rows of one run.
#
# Exits nonzero only when it cannot run (not root, no perf, build failure).
set -eu
. "$(dirname "$0")/lib.sh"
scorch=${1:-$root/build/profiler/scorch}
secs=${2:-25}
rate=${3:-300}
pairs=${4:-4}

need_root
[ -x "$scorch" ] || die "no scorch binary at $scorch" "run scripts/build.sh first"
need_tool perf linux-perf
make_work
build_loadgen

# rss_summary FILE.json: peak and the sampled series at each quarter of the run
stat_fields() {
	python3 - "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = [r for _, r in j["rss_kib"]] or [0]
q = [s[min(len(s) - 1, len(s) * k // 4)] for k in (1, 2, 3)] + [s[-1]]
print(f"{j['user_s'] + j['sys_s']:.2f} {j['maxrss_kib'] / 1024:.1f} "
      + "/".join(f"{x / 1024:.0f}" for x in q))
PY
}

echo "load: $rate processes/s (fork+exec+exit, ~1 ms of CPU each), $pairs ping-pong pairs;" \
	"recording ${secs} s system-wide at 999 Hz on $(nproc) CPUs"

load_start "$rate" "$pairs" $((secs + 3)) "$work/loadgen.scorch"
rc=0
python3 "$here/runstat.py" "$work/scorch.json" -- "$scorch" record -v -a -F 999 -d "$secs" \
	-o "$work/scorch.folded" 2>"$work/scorch.err" || rc=$?
load_end "$work/loadgen.scorch"
sed 's/^/  /' "$work/loadgen.scorch"
grep -v '^debug: ' "$work/scorch.err" | sed 's/^/  /'
read -r s_cpu s_rss s_series < <(stat_fields "$work/scorch.json")
s_samples=$(figure scorch samples "$work/scorch.err")
s_lost=$(figure scorch lost "$work/scorch.err")
s_lost=${s_lost% *}
s_procs=$(figure scorch processes "$work/scorch.err")
read -r seen released held _ <<<"$s_procs"
s_procs="$seen seen, $released released, <=$held held"
s_hot=$(awk '/^loadgen;/ && /loadgen_child_hot/ { t += $NF } END { print t + 0 }' "$work/scorch.folded")

load_start "$rate" "$pairs" $((secs + 3)) "$work/loadgen.perf"
python3 "$here/runstat.py" "$work/perf.json" -- perf record -a -g -F 999 -o "$work/perf.data" \
	-- sleep "$secs" 2>"$work/perf.err" >/dev/null || true
load_end "$work/loadgen.perf"
sed 's/^/  /' "$work/loadgen.perf"
sed 's/^/  /' "$work/perf.err"
read -r p_cpu p_rss p_series < <(stat_fields "$work/perf.json")
python3 "$here/runstat.py" "$work/script.json" -- sh -c \
	"perf script -i '$work/perf.data' > '$work/perf.script' 2>/dev/null" || true
read -r ps_cpu ps_rss ps_series < <(stat_fields "$work/script.json")
p_samples=$(figure perf samples "$work/perf.err")
perf report -i "$work/perf.data" --stats >"$work/perf.stats" 2>/dev/null
p_lost=$(figure perf lost "$work/perf.stats")
p_lost="${p_lost% *} samples, ${p_lost#* } LOST events"
p_hot=$(grep -c 'loadgen_child_hot' "$work/perf.script" || true)
p_size=$(du -k "$work/perf.data" | cut -f1)

printf '\n%-13s %8s %9s %-17s %9s %-26s %s\n' tool "CPU s" "peak MiB" "RSS q1/q2/q3/end" samples lost "other"
printf '%-13s %8s %9s %-17s %9s %-26s %s\n' scorch "$s_cpu" "$s_rss" "$s_series" "$s_samples" \
	"$s_lost" "processes: $s_procs; loadgen_child_hot $s_hot samples"
printf '%-13s %8s %9s %-17s %9s %-26s %s\n' "perf record" "$p_cpu" "$p_rss" "$p_series" \
	"$p_samples" "$p_lost" "perf.data $((p_size / 1024)) MiB"
printf '%-13s %8s %9s %-17s %9s %-26s %s\n' "perf script" "$ps_cpu" "$ps_rss" "$ps_series" "-" "-" \
	"frames in loadgen_child_hot: $p_hot"
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "load-bench: scorch exited $rc" >&2; exit 1; }
