#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what one sample costs in the sampling interrupt, perf included: the time in the
# cpu-clock event's handler per sample that lands on a 2-thread job, for scorch (--unwind
# fp and dwarf), perf record -g, perf record --call-graph dwarf and bpftrace
# (profile:hz:N { @[kstack, ustack] = count(); }), the tools one at a time, rounds
# interleaved, all timed by the same meter in one run.
#
# usage: sudo bench/handler-cost.sh [ROUNDS]        (default 5)
# environment: HZ (default 4999); THREADS (default 2); UNITS (default 4000) the job's
#   work per thread; TOOLS (default "scorch-fp scorch-dwarf perf-dwarf bpftrace perf";
#   the last is the reference of the "vs" column; scorch-fp@PATH runs another scorch
#   binary, say a build of an older commit); SCORCH.
# The meter is a bpftrace program on the timer tracepoints hrtimer_expire_entry/_exit
# around each expiry of perf_swevent_hrtimer (the event's timer) on the job's threads.
# Prints markdown tables. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool bpftrace bpftrace
need_tool python3 python3
rounds_arg "$@"
need_tracefs
grep -qw perf_swevent_hrtimer /proc/kallsyms ||
	die "perf_swevent_hrtimer is not in /proc/kallsyms" "the meter needs the kernel's symbols (run as root; CONFIG_KALLSYMS_ALL)"
make_work
build_cpujob
read -ra tools <<<"${TOOLS:-scorch-fp scorch-dwarf perf-dwarf bpftrace perf}"
bench_py handler --cpujob "$work/cpujob" --threads "${THREADS:-2}" --units "${UNITS:-4000}" \
	--hz "${HZ:-4999}" --rounds "$rounds" --tools "${tools[@]}" --argv "HZ=${HZ:-4999}" ${TOOLS:+"TOOLS=\"$TOOLS\""} "$0" "$@"
