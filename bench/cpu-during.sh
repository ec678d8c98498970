#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: scorch's own CPU time while a 2-thread job runs under a system-wide recording
# (the part of its work that competes with the profiled programs), per --unwind mode.
#
# usage: sudo bench/cpu-during.sh [RUNS]        (default 3 runs per mode)
# environment: SCORCH the binary; HZ (default 999); MODES (default "fp dwarf").
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
echo "| --unwind | run | scorch CPU during the job | job wall |"
echo "| --- | ---: | ---: | ---: |"
for mode in ${MODES:-fp dwarf}; do
	for i in $(seq "$runs"); do
		"$scorch" record -a -F "$hz" --unwind "$mode" -o "$work/cd.folded" 2>"$work/cd.err" &
		sp=$!
		until grep -q "scorch: sampling" "$work/cd.err"; do
			kill -0 $sp 2>/dev/null || die "scorch record failed: $(tail -1 "$work/cd.err")"
			sleep 0.05
		done
		a=$(awk '{print $1}' "/proc/$sp/schedstat")
		wall=$("$work/cpujob" 2 4000 | awk '{print $7}')
		b=$(awk '{print $1}' "/proc/$sp/schedstat")
		kill -INT $sp
		wait $sp || [ $? -eq 3 ] || die "scorch record exited with an error: $(tail -1 "$work/cd.err")"
		echo "| $mode | $i | $(( (b - a) / 1000000 )) ms | ${wall} s |"
	done
done
