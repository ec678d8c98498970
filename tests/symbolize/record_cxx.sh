#!/bin/bash
# SPDX-License-Identifier: MIT
# `scorch record` with default options on a C++ workload (all CPU in
# app::Spinner<int>::spin, built with c++ -O1 -g -fno-omit-frame-pointer): the folded
# output names it demangled, without parameters.
set -eu
. "$(dirname "$0")/../lib.sh"
: "${SCORCH:?SCORCH must point to the scorch binary}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
require_bpf
c++ -O1 -g -fno-omit-frame-pointer -o "$TMP/cxxwork" "$(dirname "$0")/fixtures/cxxwork.cpp"
"$SCORCH" record -F 499 -q -o "$TMP/out.folded" -- "$TMP/cxxwork" >/dev/null
check_folded "$TMP/out.folded"
total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/out.folded")
spin=$(awk '/;app::Spinner<int>::spin(;|$| )/ { s += $NF } END { print s + 0 }' "$TMP/out.folded")
[ "$total" -gt 100 ] || fail "only $total samples"
grep -q '_ZN' "$TMP/out.folded" && fail "mangled names left: $(grep -o '_ZN[^;]*' "$TMP/out.folded" | head -3)"
# the workload spins in spin() for all but its start-up: most samples are there
[ $((spin * 100 / total)) -ge 80 ] || fail "app::Spinner<int>::spin has $spin of $total samples: $(sort -k2 -n -r "$TMP/out.folded" | head -3)"
echo "ok: $spin of $total samples in app::Spinner<int>::spin"
