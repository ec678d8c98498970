#!/bin/bash
# SPDX-License-Identifier: MIT
# The main job: installs what is missing, builds, profiles the bundled demo
# workload (tests/workloads/split.c: 50/30/20 % of its CPU in burn_a/b/c) for
# 3 seconds and writes its folded profile and flame graph to ./demo/.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
mkdir -p demo
build/profiler/scorch record -F 999 -o demo/cpu.folded -- build/tests/record/split --seconds 3
build/profiler/scorch flamegraph demo/cpu.folded -o demo/cpu.svg --title "scorch demo: split"
echo
echo "demo: folded stacks written to $(pwd)/demo/cpu.folded, flame graph to $(pwd)/demo/cpu.svg"
echo "demo: the hottest stacks:"
sort -k2 -t' ' -n -r demo/cpu.folded | head -n 5
