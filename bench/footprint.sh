#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what recording the whole system costs the profiler itself: CPU seconds
# (user+sys of the process, plus the run time of its BPF programs with
# kernel.bpf_stats_enabled=1), peak RSS and kernel map memory; scorch record -a beside
# perf record -a -g, at 99 and 999 Hz, in one run.
#
# usage: sudo bench/footprint.sh [SECONDS]      (default 60)
# environment: RATES (default "99 999"), THREADS (default 2) busy threads of
#   bench/cpujob.c during the recordings, TOOLS (default "scorch-fp perf"; scorch-dwarf,
#   and kind@PATH for another scorch build beside this one, e.g. scorch-fp@/tmp/old/scorch),
#   SCORCH.
# The profilers of one rate record at the same time (each sees the others as load);
# rates run one after the other. kernel.bpf_stats_enabled is restored at the end.
# Prints a markdown table. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool python3 python3
seconds=${1:-60}
[[ $seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ "$seconds" != 0 ] ||
	die "invalid SECONDS '$seconds'" "give the recording length in seconds, e.g. $0 60"
[ -w /proc/sys/kernel/bpf_stats_enabled ] || die "cannot write /proc/sys/kernel/bpf_stats_enabled" \
	"run as root on a kernel with BPF statistics (5.8 or later)"
make_work
build_cpujob
read -ra rates <<<"${RATES:-99 999}"
read -ra tools <<<"${TOOLS:-scorch-fp perf}"
bench_py footprint --cpujob "$work/cpujob" --threads "${THREADS:-2}" --seconds "$seconds" \
	--rates "${rates[@]}" --tools "${tools[@]}" --argv "$0" "$@"
