#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: why bench/overhead.sh pins the job's threads. Unpinned, how often the scheduler
# starts the 2-thread job's threads on one CPU (one is moved away 10 to 40 ms later), the
# job run at once when each profiler says it samples or after a delay; and the same
# without a profiler, after tasks that burned one or both CPUs and now sleep.
#
# usage: sudo bench/placement.sh [ROUNDS]        (default 5)
# environment: TOOLS (default "scorch-fp perf"; kind@PATH runs another scorch build);
#   DELAYS (default "0 0.05 0.3 1") seconds from the start of sampling to the job; HZ
#   (default 99); UNITS (default 300, ~0.15 s of CPU per thread); SCORCH.
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
read -ra tools <<<"${TOOLS:-scorch-fp perf}"
read -ra delays <<<"${DELAYS:-0 0.05 0.3 1}"
bench_py placement --cpujob "$work/cpujob" --hz "${HZ:-99}" --units "${UNITS:-300}" --rounds "$rounds" \
	--tools "${tools[@]}" --delays "${delays[@]}" \
	--argv "HZ=${HZ:-99}" "UNITS=${UNITS:-300}" "DELAYS=\"${delays[*]}\"" "$0" "$@"
