#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: off-CPU time split into blocked and runqueue (waiting for a CPU after a wakeup
# or a preemption), scorch beside perf sched timehist, bpftrace and the kernel's own
# schedstat run_delay, all on the same run. Workloads, each pinned to one CPU beside two
# shell busy loops pinned there: `dd if=/dev/zero of=FILE bs=4k count=COUNT oflag=sync`
# (FILE in the work directory under /tmp) and a Python thread pool (bench/rqpool.py).
#
# usage: sudo bench/runqueue-bench.sh [ROUNDS]          (default 1)
# environment: COUNT (default 20000) dd's 4 KiB blocks; TASKS (default 2000) and
#   WORKERS (default 4) the pool's; SCORCH.
# perf sched record needs tracefs: mounted at /sys/kernel/tracing for the run if it is
# not. Prints a markdown table. Exits 1 only when it cannot run.
set -eu
. "$(dirname "$0")/lib.sh"
need_root "$@"
need_scorch
need_tool perf linux-perf
need_tool bpftrace bpftrace
need_tool python3 python3
need_tool dd coreutils
rounds_arg "${1:-1}"
for v in COUNT TASKS WORKERS; do
	[[ ${!v:-1} =~ ^[1-9][0-9]*$ ]] || die "invalid $v '${!v}'" "a positive count, e.g. $v=1000"
done
need_tracefs
make_work
bench_py runqueue --rounds "$rounds" --count "${COUNT:-20000}" --tasks "${TASKS:-2000}" \
	--workers "${WORKERS:-4}" --pool "$here/rqpool.py" \
	--argv ${COUNT:+"COUNT=$COUNT"} ${TASKS:+"TASKS=$TASKS"} ${WORKERS:+"WORKERS=$WORKERS"} "$0" "$@"
