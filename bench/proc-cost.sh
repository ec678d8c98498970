#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what each new process costs a system-wide recording in the profiler's own
# process (scorch reads the kernel's records of its mappings, or /proc for an image begun
# before, and symbolizes and releases it when it exits; perf record copies the kernel's
# records of it), beside perf record -g and
# bpftrace, the tools one at a time, rounds interleaved, in one run; and what the
# processes themselves took more than alone (the kernel's work in them for each tool).
#
# usage: sudo bench/proc-cost.sh [ROUNDS]        (default 5)
# environment: PROCS (default 200) processes per run, each `cpujob 1 UNITS` (UNITS
#   default 10, about 10 ms of CPU); HZ (default 999); TOOLS (default "scorch-fp
#   scorch-dwarf perf bpftrace"; scorch-fp@PATH runs another scorch binary); SCORCH;
#   SPAWN=fork: the processes are children forked by one cpujob that do not exec (a
#   worker pool's), instead of programs started by a shell loop.
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
read -ra tools <<<"${TOOLS:-scorch-fp scorch-dwarf perf bpftrace}"
bench_py proccost --cpujob "$work/cpujob" --procs "${PROCS:-200}" --units "${UNITS:-10}" \
	--hz "${HZ:-999}" --spawn "${SPAWN:-exec}" --rounds "$rounds" --tools "${tools[@]}" \
	--argv "PROCS=${PROCS:-200}" "UNITS=${UNITS:-10}" "HZ=${HZ:-999}" "SPAWN=${SPAWN:-exec}" "$0" "$@"
