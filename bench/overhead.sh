#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: the slowdown of a fixed multi-threaded CPU job under system-wide recording:
# scorch (--unwind fp and dwarf) beside perf record -g, perf record --call-graph dwarf
# and bpftrace (profile:hz:N { @[kstack, ustack] = count(); }), measured in one run.
#
# usage: sudo bench/overhead.sh [RATES...]        (default 99 999 4999)
# environment: ROUNDS (default 3) interleaved rounds per rate, medians reported;
#   UNITS (default 4000, about 2 s of CPU per thread) and THREADS (default 2) size the
#   job; TOOLS (default "scorch-fp scorch-dwarf perf perf-dwarf bpftrace"; kind@PATH
#   runs another scorch build, e.g. scorch-fp@/tmp/old/scorch); SCORCH the binary;
#   CHURN (default 0) short processes started a second beside the job in every run;
#   SETTLE (default 0) seconds from the profiler's start of sampling to the job's start
#   (SETTLE=1: the job misses what a profiler does in its first moments); PIN (default 1,
#   0 with CHURN) creates the job's threads one per CPU and keeps them there (PIN=0: the
#   scheduler places them, and now and then starts both on one CPU, one moved away 10 to
#   40 ms later: bench/placement.sh; with CHURN, pinned threads cannot move away from the
#   short processes, which then take ~18 % of their time, and the rounds spread +-5 points).
# Each round runs the job alone, then under each profiler (the order rotates per
# round): the profiler is started, the job runs once it samples, the profiler stops.
# Prints markdown tables: the share of the job threads' time each profiler took from
# them (the job's threads time their own loop and sum its interruptions: a figure the
# speed of a shared machine's CPUs does not blur), the slowdown of the job's wall and CPU
# time, min..max over rounds, the profiler's own CPU time; what the threads saw
# (interruptions, run-queue wait, migrations, the median interruption: at 4999 Hz what
# one sample costs the thread it lands on); then each scorch mode against perf's walk
# of the same kind, round by round. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool bpftrace bpftrace
need_tool python3 python3
make_work
build_cpujob
[ "${CHURN:-0}" = 0 ] || PIN="${PIN:-0}"
pin_job
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(99 999 4999)
for r in "${rates[@]}"; do
	[[ $r =~ ^[1-9][0-9]*$ ]] || die "invalid rate '$r'" "give rates in Hz, e.g. $0 99 999"
done
read -ra tools <<<"${TOOLS:-scorch-fp scorch-dwarf perf perf-dwarf bpftrace}"
# the command line printed: the environment that shapes the run, then the arguments
shown=("ROUNDS=${ROUNDS:-3}" "PIN=$CPUJOB_PIN")
for v in CHURN SETTLE UNITS THREADS TOOLS; do
	if [[ ${!v:-} == *" "* ]]; then shown+=("$v=\"${!v}\""); elif [ -n "${!v:-}" ]; then shown+=("$v=${!v}"); fi
done
bench_py overhead --cpujob "$work/cpujob" --threads "${THREADS:-2}" --units "${UNITS:-4000}" \
	--rounds "${ROUNDS:-3}" --churn "${CHURN:-0}" --settle "${SETTLE:-0}" --rates "${rates[@]}" --tools "${tools[@]}" \
	--argv "${shown[@]}" "$0" "$@"
