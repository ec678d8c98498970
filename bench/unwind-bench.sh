#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what --unwind dwarf and --unwind kernel cost beside --unwind fp, perf record -g
# and perf record --call-graph dwarf, at 99 and 999 Hz, measured in one run.
#
# usage: sudo bench/unwind-bench.sh [SCORCH] [ITER] [RUNS]
#   SCORCH  the scorch binary (default build/profiler/scorch)
#   ITER    rounds of the fixed-work workload (default 20000, about 2.5 s alone)
#   RUNS    runs per configuration, interleaved (default 3); medians are reported
#
# The workload (tests/workloads/work.c, built here -O2 -fomit-frame-pointer) does a
# fixed amount of work 10 calls deep, partly in libc, and reports its own wall and
# CPU time. Per configuration:
#   slowdown  workload wall time / its wall time without a profiler
#   prof CPU  CPU seconds of the profiler itself (its process tree minus the workload),
#             for perf: perf record + perf report (perf unwinds in report)
#   B/sample  bytes crossing to user space per sample: scorch's ring-buffer records
#             (its -v summary), perf.data size / samples (perf report --stats) for perf
#   KB/s      those bytes per second of the workload's wall time (ring-buffer bandwidth
#             for scorch, perf.data write rate for perf)
#   main%     samples whose stack reaches main (a correctness check of each walk)
# Configurations: scorch --unwind fp, scorch --unwind kernel (walked in BPF with the
# files' .eh_frame tables), scorch --unwind dwarf (--stack-size 16384 and 8192), perf
# record -g (frame pointers), perf record --call-graph dwarf (8192 bytes per sample,
# perf's default).
set -eu
. "$(dirname "$0")/lib.sh" # figure; the script cleans up after itself (its own trap)
scorch=${1:-$here/../build/profiler/scorch}
iter=${2:-20000}
runs=${3:-3}

[ "$(id -u)" = 0 ] || { echo "unwind-bench: must run as root" >&2; exit 1; }
[ -x "$scorch" ] || { echo "unwind-bench: no scorch binary at $scorch" >&2
	echo "hint: run scripts/build.sh first" >&2; exit 1; }
command -v perf >/dev/null || { echo "unwind-bench: perf is not installed" >&2
	echo "hint: apt-get install linux-perf" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -g "$here/../tests/workloads/work.c" \
	-o "$tmp/work"

# run CMD...: prints "WALL_S TREE_CPU_S" (workload wall; CPU of the whole process tree)
run() {
	python3 - "$@" <<'PY'
import os, re, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
err = p.stderr.read().decode(errors="replace")
_, status, ru = os.wait4(p.pid, 0)
m = re.search(r"work: ([0-9.]+) ([0-9.]+)", err)
if not m or status:
    sys.stderr.write(err)
    sys.exit(1)
open(os.environ["BENCH_ERR"], "w").write(err)
print(m.group(1), float(m.group(2)), ru.ru_utime + ru.ru_stime)
PY
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

main_pct() { # folded file
	awk '{ t += $NF; if ($0 ~ /;main;/ || $0 ~ /;main /) m += $NF } END { printf "%.1f", t ? 100 * m / t : 0 }' "$1"
}

configs="base fp kernel dwarf16k dwarf8k perffp perf"
export BENCH_ERR=$tmp/err
for hz in 99 999; do
	for c in $configs; do : >"$tmp/$hz.$c"; done
	for r in $(seq "$runs"); do
		for c in $configs; do
			case $c in
			base) out=$(run "$tmp/work" "$iter") ;;
			fp) out=$(run "$scorch" record -F "$hz" --unwind fp -o "$tmp/$c.folded" -- "$tmp/work" "$iter") ;;
			kernel) out=$(run "$scorch" record -F "$hz" --unwind kernel -o "$tmp/$c.folded" -- "$tmp/work" "$iter") ;;
			perffp) out=$(run perf record -q -F "$hz" -g -o "$tmp/perf.data" -- "$tmp/work" "$iter") ;;
			dwarf16k) out=$(run "$scorch" record -v -F "$hz" --unwind dwarf -o "$tmp/$c.folded" -- "$tmp/work" "$iter") ;;
			dwarf8k) out=$(run "$scorch" record -v -F "$hz" --unwind dwarf --stack-size 8192 -o "$tmp/$c.folded" -- "$tmp/work" "$iter") ;;
			perf) out=$(run perf record -q -F "$hz" --call-graph dwarf -o "$tmp/perf.data" -- "$tmp/work" "$iter") ;;
			esac
			read -r wall wcpu tree <<<"$out"
			extra=0
			bps=-
			rate=-
			pct=-
			case $c in
			fp | kernel)
				bps=0 # nothing per sample: counted in the kernel
				pct=$(main_pct "$tmp/$c.folded")
				;;
			dwarf*)
				recs=$(figure scorch records "$BENCH_ERR")
				read -r nrec kib <<<"$recs"
				bps=$(awk -v k="$kib" 'BEGIN { printf "%d", k * 1024 }')
				rate=$(awk -v n="$nrec" -v b="$bps" -v w="$wall" 'BEGIN { printf "%.1f", n * b / w / 1000 }')
				pct=$(main_pct "$tmp/$c.folded")
				;;
			perf | perffp)
				t0=$(python3 -c 'import resource as r; u=r.getrusage(r.RUSAGE_CHILDREN); print(u.ru_utime+u.ru_stime)')
				extra=$(python3 - "$tmp/perf.data" "$tmp/perf.folded" <<'PY'
import resource, subprocess, sys
with open(sys.argv[2], "w") as out:
    subprocess.run(["perf", "script", "-i", sys.argv[1], "-F", "ip,sym"], stdout=out,
                   stderr=subprocess.DEVNULL, check=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(u.ru_utime + u.ru_stime)
PY
)
				perf report -i "$tmp/perf.data" --stats >"$tmp/perf.stats" 2>/dev/null
				samples=$(figure perf sample-events "$tmp/perf.stats")
				size=$(stat -c %s "$tmp/perf.data")
				bps=$(awk -v s="$size" -v n="$samples" 'BEGIN { printf "%d", n ? s / n : 0 }')
				rate=$(awk -v s="$size" -v w="$wall" 'BEGIN { printf "%.1f", s / w / 1000 }')
				pct=$(awk 'BEGIN { RS = "" } { t++; if ($0 ~ /[ \t]main\n/ || $0 ~ /[ \t]main$/) m++ } END { printf "%.1f", t ? 100 * m / t : 0 }' "$tmp/perf.folded")
				;;
			esac
			echo "$wall $(awk -v t="$tree" -v w="$wcpu" -v e="$extra" 'BEGIN { printf "%.3f", t - w + e }') $bps $pct $rate" >>"$tmp/$hz.$c"
		done
	done
	base=$(cut -d' ' -f1 "$tmp/$hz.base" | median)
	printf '\n%d Hz, median of %d runs (workload alone: %.2f s)\n' "$hz" "$runs" "$base"
	printf '%-10s %9s %10s %10s %9s %7s\n' config slowdown "prof CPU" B/sample KB/s main%
	for c in $configs; do
		w=$(cut -d' ' -f1 "$tmp/$hz.$c" | median)
		p=$(cut -d' ' -f2 "$tmp/$hz.$c" | median)
		b=$(cut -d' ' -f3 "$tmp/$hz.$c" | tail -n 1)
		m=$(cut -d' ' -f4 "$tmp/$hz.$c" | tail -n 1)
		k=$(cut -d' ' -f5 "$tmp/$hz.$c" | tail -n 1)
		[ "$c" = base ] && p=0
		printf '%-10s %8.3fx %9.3fs %10s %9s %7s\n' "$c" "$(awk -v w="$w" -v b="$base" 'BEGIN { print w / b }')" "$p" "$b" "${k:--}" "$m"
	done
done
