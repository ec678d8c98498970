#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: what one sample costs in the kernel: the run time per sample of scorch's
# perf_event program beside bpftrace's `profile:hz:N { @[kstack, ustack] = count(); }`,
# the tools one at a time on the same 2-thread job, rounds interleaved, in one run.
#
# usage: sudo bench/bpf-cost.sh [ROUNDS]        (default 5)
# environment: HZ (default 4999); THREADS (default 2); UNITS (default 4000) the job's
#   work per thread; TOOLS (default "scorch-fp scorch-dwarf bpftrace"; the last is the
#   reference of the "vs" column), where scorch-fp@PATH is another scorch binary (say,
#   a build of an older commit, to measure a change); SCORCH.
# kernel.bpf_stats_enabled is set during the run and restored. Prints a markdown table.
# Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool bpftrace bpftrace
need_tool python3 python3
rounds_arg "$@"
[ -w /proc/sys/kernel/bpf_stats_enabled ] || die "cannot write /proc/sys/kernel/bpf_stats_enabled" \
	"run as root on a kernel with BPF statistics (5.8 or later)"
make_work
build_cpujob
read -ra tools <<<"${TOOLS:-scorch-fp scorch-dwarf bpftrace}"
bench_py bpfcost --cpujob "$work/cpujob" --threads "${THREADS:-2}" --units "${UNITS:-4000}" \
	--hz "${HZ:-4999}" --rounds "$rounds" --tools "${tools[@]}" --argv "$0" "$@"
