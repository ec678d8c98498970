#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what a profiler leaves the machine when it exits: the fixed 2-thread job run at
# once after a system-wide recording ends, against the same job 2 s later (the kernel
# freeing the profiler's BPF maps, programs and perf buffers in kworkers meanwhile);
# scorch (fp, dwarf) beside perf record -g and bpftrace, one at a time, rounds
# interleaved, in one run.
#
# usage: sudo bench/exit-cost.sh [ROUNDS]        (default 5)
# environment: AT=start: the same at the start, the job at once when the profiler says it
#   samples against the same job 2 s later in the same recording (what its start leaves
#   to the kernel, and its first moments); HZ (default 999); SECONDS_EACH (default 1) of
#   recording an idle machine before the exit;
#   UNITS (default 2000) the job's work per thread; TOOLS (default "scorch-fp
#   scorch-dwarf perf bpftrace"; scorch-fp@PATH runs another scorch binary); SCORCH;
#   PIN (default 1) the job's threads one per CPU, as in bench/overhead.sh.
# Prints a markdown table. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool bpftrace bpftrace
need_tool python3 python3
rounds_arg "$@"
make_work
build_cpujob
pin_job
read -ra tools <<<"${TOOLS:-scorch-fp scorch-dwarf perf bpftrace}"
bench_py exitcost --at "${AT:-exit}" --cpujob "$work/cpujob" --hz "${HZ:-999}" --seconds "${SECONDS_EACH:-1}" \
	--units "${UNITS:-2000}" --rounds "$rounds" --tools "${tools[@]}" \
	--argv "AT=${AT:-exit}" "PIN=$CPUJOB_PIN" "HZ=${HZ:-999}" "SECONDS_EACH=${SECONDS_EACH:-1}" "UNITS=${UNITS:-2000}" "$0" "$@"
