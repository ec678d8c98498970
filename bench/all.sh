#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: the whole suite in quick mode (a few minutes on 2 CPUs): overhead at 99 and
# 999 Hz (2 rounds), time to result on 10-second recordings, footprint over 20 s,
# accuracy at 99 and 999 Hz. Output: the markdown sections for docs/BENCHMARKS.md on
# stdout, progress on stderr. For the figures of record, run each script with its
# defaults (see docs/BENCHMARKS.md).
#
# usage: sudo FLAMEGRAPH_DIR=/path/to/FlameGraph bench/all.sh
# Exits 1 when a benchmark cannot run (a missing tool: each script says which).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-2} UNITS=${UNITS:-2000} "$here/overhead.sh" 99 999
"$here/time-to-result.sh" 10
RATES="99 999" "$here/footprint.sh" 20
SECONDS_EACH=3 "$here/accuracy.sh" 99 999
