#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: scorch's own CPU time while a 2-thread job runs under a system-wide recording
# (the part of its work that competes with the profiled programs), per --unwind mode.
#
# usage: sudo bench/cpu-during.sh [RUNS]        (default 3 runs per mode)
# environment: SCORCH the binary; HZ (default 999); MODES (default "fp dwarf");
#   WHERE=1: perf record --call-graph dwarf samples scorch during each job, and the
#   line adds the share of those samples under each of scorch's user-space tasks;
#   SETTLE (default 0) seconds from scorch's start of sampling to the job's start (its
#   first moments: the processes it samples first, their maps and files read).
# Each run: scorch record -a -F HZ --unwind MODE starts, and once it prints that it
# samples, cpujob 2 4000 (about 2 s on 2 CPUs) runs; scorch's run time (schedstat, ns)
# before and after the job gives the line. The shell polling for the message starts
# short processes (grep, awk) as a busy machine would. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
make_work
build_cpujob
runs=${1:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "invalid run count '$runs'" "e.g. $0 3"
hz=${HZ:-999}
where=${WHERE:-0}
settle=${SETTLE:-0}
[[ $settle =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "invalid SETTLE '$settle'" "give seconds, e.g. SETTLE=1"
# scorch's tasks while it records, as perf report names them (inclusive shares)
tasks=(symbolizer__snapshot_gen symbolizer__snapshot_vmas file_get perfmaps__refresh
	unwinder__unwind reap_exited ppoll)
if [ "$where" = 1 ]; then
	need_tool perf linux-perf
	echo "| --unwind | run | scorch CPU during the job | job wall | perf samples of scorch |$(printf ' %s |' "${tasks[@]}")"
	echo "| --- | ---: | ---: | ---: | ---: |$(printf ' ---: |%.0s' "${tasks[@]}")"
else
	echo "| --unwind | run | scorch CPU during the job | job wall |"
	echo "| --- | ---: | ---: | ---: |"
fi
for mode in ${MODES:-fp dwarf}; do
	for i in $(seq "$runs"); do
		"$scorch" record -a -F "$hz" --unwind "$mode" -o "$work/cd.folded" 2>"$work/cd.err" &
		sp=$!
		until grep -q "scorch: sampling" "$work/cd.err"; do
			kill -0 $sp 2>/dev/null || die "scorch record failed: $(tail -1 "$work/cd.err")"
			sleep 0.05
		done
		if [ "$where" = 1 ]; then
			perf record -q -F 9999 --call-graph dwarf,16384 -p $sp -o "$work/cd.data" \
				2>"$work/cd.perf" &
			pp=$!
			# perf samples once its output file has a header
			until [ -s "$work/cd.data" ]; do
				kill -0 $pp 2>/dev/null || die "perf record failed: $(tail -1 "$work/cd.perf")"
				sleep 0.05
			done
		fi
		sleep "$settle"
		a=$(awk '{print $1}' "/proc/$sp/schedstat")
		wall=$("$work/cpujob" 2 4000 | awk '{print $7}')
		b=$(awk '{print $1}' "/proc/$sp/schedstat")
		extra=""
		if [ "$where" = 1 ]; then
			kill -INT $pp
			wait $pp || true
			perf report -i "$work/cd.data" --children --stdio -g none --percent-limit 0 \
				>"$work/cd.report" 2>/dev/null || die "perf report failed"
			n=$(figure perf report-samples "$work/cd.report")
			extra=" $n |"
			for t in "${tasks[@]}"; do
				pct=$(awk -v t="$t" '!/^#/ { for (f = 5; f <= NF; f++)
					if ($f == t) { print $1; exit } }' "$work/cd.report")
				extra="$extra ${pct:-0%} |"
			done
		fi
		kill -INT $sp
		wait $sp || [ $? -eq 3 ] || die "scorch record exited with an error: $(tail -1 "$work/cd.err")"
		echo "| $mode | $i | $(awk -v d=$((b - a)) 'BEGIN { printf "%.2f", d / 1e6 }') ms | ${wall} s |$extra"
	done
done
