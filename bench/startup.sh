#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: start-up, from a profiler's exec to the moment it samples the whole system:
# scorch (fp, dwarf) beside perf record -g (its events enabled through its control fifo:
# perf's ack) and bpftrace profile:hz (its BEGIN), one at a time, rounds interleaved, in
# one run; scorch's own --timing phases (BPF load, attach, the wait for kallsyms) beside.
#
# usage: sudo bench/startup.sh [ROUNDS]        (default 5)
# environment: HZ (default 99); TOOLS (default "scorch-fp scorch-dwarf perf bpftrace";
#   scorch-fp@PATH runs another scorch binary, say a build of an older commit); SCORCH.
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
read -ra tools <<<"${TOOLS:-scorch-fp scorch-dwarf perf bpftrace}"
bench_py startup --hz "${HZ:-99}" --rounds "$rounds" --tools "${tools[@]}" \
	--argv "HZ=${HZ:-99}" "$0" "$@"
