#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what a system-wide recording costs the machine at 999, 10,000 and 100,000 Hz,
# scorch (its default: the kernel walk governed by --max-overhead, 5 %; the stack copy,
# --unwind dwarf, governed too; and with --max-overhead 0) beside perf record -a -g, in
# one run. A CPU job (cpujob, one thread per CPU, fixed work)
# runs while each tool samples every CPU; then the tool gets SIGINT.
#
#   job speed   the job's time alone (the faster of before and after) over its time
#               under the tool
#   samples     samples the tool kept (scorch: taken less lost; perf: written)
#   rate        the effective rate per CPU: scorch's average after the governor, perf's
#               samples over the recording's length and CPUs
#   stop        SIGINT to the end of sampling (scorch: its exit less what --timing
#               counts after the stop; perf: its exit, which includes writing perf.data)
#   exit        SIGINT to the tool's exit (scorch names and writes its output first)
#
# kernel.perf_event_max_sample_rate is set to 100000 (a fresh machine's) for the run
# and restored. CHURN=1 adds 200 new processes a second (bench/loadgen.c).
#
# usage: bench/governor-bench.sh [RATE...]       (default: 999 10000 100000)
# env:   SCORCH (default build/profiler/scorch), UNITS (job work per thread, default
#        2000: about 2 s alone), CHURN, BENCH_KEEP
set -eu
. "$(dirname "$0")/lib.sh"

UNITS=${UNITS:-2000}
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(999 10000 100000)
for hz in "${rates[@]}"; do
	[[ $hz =~ ^[1-9][0-9]*$ ]] && [ "$hz" -le 100000 ] ||
		die "invalid RATE '$hz'" "give rates in Hz up to 100000, e.g. $0 999 100000"
done
need_root
need_scorch
need_tool perf linux-perf
nr=$(nproc)
make_work
rate_path=/proc/sys/kernel/perf_event_max_sample_rate
old_rate=$(cat "$rate_path")
trap 'echo "$old_rate" >"$rate_path"; bench_cleanup' EXIT
echo 100000 >"$rate_path"
build_cpujob
if [ "${CHURN:-0}" = 1 ]; then
	cc -O1 -fno-omit-frame-pointer -pthread "$here/loadgen.c" -o "$work/loadgen" ||
		die "cannot build bench/loadgen.c"
	"$work/loadgen" -r 200 -p 0 -d 3600 >/dev/null 2>&1 &
	lg_pid=$!
fi

job() { "$work/cpujob" "$nr" "$UNITS" | awk '{ print $7 }'; }

# scorch RATE ARGS...: prints "under samples rate stop exit"
run_scorch() {
	local hz=$1 fifo="$work/s.fifo" under t0 t1 n lost rate end
	shift
	rm -f "$fifo"
	mkfifo "$fifo"
	"$scorch" record -a -F "$hz" --timing "$@" -o "$work/s.folded" 2>"$fifo" &
	local pid=$!
	exec 7<"$fifo"
	read -r -t 60 line <&7 || die "scorch did not start"
	under=$(job)
	t0=$EPOCHREALTIME
	kill -INT "$pid"
	cat <&7 >"$work/s.err"
	wait "$pid" || true
	t1=$EPOCHREALTIME
	exec 7<&-
	n=$(figure scorch samples "$work/s.err") || exit 1
	lost=$(figure scorch lost-pct "$work/s.err") || exit 1
	rate=$(figure scorch rate "$work/s.err") || exit 1
	end=$(figure scorch timing "$work/s.err" "end of recording to output") || exit 1
	# the end phases (--timing) count from the stop: the rest is the signal's way to it
	awk -v u="$under" -v n="$n" -v l="$lost" -v e="${rate#* }" -v m="$end" -v t0="$t0" \
		-v t1="$t1" 'BEGIN {
		stop = t1 - t0 - m / 1000; if (stop < 0) stop = 0
		printf "%s %d %d %.3f %.3f\n", u, n * (1 - l / 100), e, stop, t1 - t0 }'
}

# perf RATE: the same fields
run_perf() {
	local hz=$1 under t0 t1 n t_start
	rm -f "$work/p.ctl" "$work/p.ack"
	mkfifo "$work/p.ctl" "$work/p.ack"
	perf record -a -g -F "$hz" -D -1 --control "fifo:$work/p.ctl,$work/p.ack" \
		-o "$work/perf.data" >"$work/p.out" 2>"$work/p.err" &
	local pid=$!
	exec 5>"$work/p.ctl" 6<"$work/p.ack"
	echo enable >&5
	read -r -t 60 ack <&6 || die "perf did not start: $(cat "$work/p.err")"
	t_start=$EPOCHREALTIME
	under=$(job)
	t0=$EPOCHREALTIME
	kill -INT "$pid"
	wait "$pid" || true
	t1=$EPOCHREALTIME
	exec 5>&- 6<&-
	n=$(figure perf samples "$work/p.err") || exit 1
	awk -v u="$under" -v n="$n" -v ts="$t_start" -v t0="$t0" -v t1="$t1" -v nr="$nr" 'BEGIN {
		printf "%s %d %d %.3f %.3f\n", u, n, n / ((t0 - ts) * nr), t1 - t0, t1 - t0 }'
	rm -f "$work/perf.data"
}

echo "# governor-bench: $nr CPUs, cpujob $nr threads x $UNITS units$([ "${CHURN:-0}" = 1 ] && echo ", 200 new processes/s"); $(date -u +%F) $(git rev-parse --short HEAD 2>/dev/null)"
echo
echo "| -F | tool | job speed | samples kept | rate (Hz/CPU) | stop (s) | exit (s) |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for hz in "${rates[@]}"; do
	for tool in scorch "scorch --unwind dwarf" "scorch --max-overhead 0" perf; do
		alone1=$(job)
		case $tool in
		perf) read -r under n eff stop ex < <(run_perf "$hz") ;;
		scorch) read -r under n eff stop ex < <(run_scorch "$hz") ;;
		*) read -r under n eff stop ex < <(run_scorch "$hz" ${tool#scorch }) ;;
		esac
		alone2=$(job)
		[ -n "${ex:-}" ] || die "$tool at $hz Hz: no figures (see above)"
		awk -v hz="$hz" -v t="$tool" -v a1="$alone1" -v a2="$alone2" -v u="$under" -v n="$n" \
			-v e="$eff" -v s="$stop" -v x="$ex" 'BEGIN {
			a = a1 < a2 ? a1 : a2
			printf "| %d | %s | %.0f %% | %d | %d | %.2f | %.2f |\n", hz, t, 100 * a / u, n, e, s, x }'
	done
done
