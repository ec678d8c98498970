#!/bin/bash
# SPDX-License-Identifier: MIT
# End to end (needs record's perfmap wiring; CMake registers it with -DSCORCH_JIT_E2E=ON):
# `scorch record -- node --perf-basic-prof --no-turbo-inlining hot.js` names the JIT
# frames from /tmp/perf-PID.map, annotated _[j], and hot() is in >= 90 % of the samples.
set -eu
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/e2e-lib.sh"
require_bpf
command -v node >/dev/null || fail "node is not installed (scripts/setup.sh installs it)"

touch "$TMP/marker"
# the perf map node leaves behind (its PID is not known here)
trap 'find /tmp -maxdepth 1 -name "perf-*.map" -newer "$TMP/marker" -user 0 \
	-exec grep -l -F "$WORKLOADS/hot.js" {} + 2>/dev/null | xargs -r rm -f; rm -rf "$TMP"' EXIT
"$SCORCH" record --unwind fp -F 999 -o "$TMP/node.folded" -- \
	node --perf-basic-prof --no-turbo-inlining "$WORKLOADS/hot.js" 4 2>"$TMP/err" ||
	fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/node.folded"
read -r total matched < <(jit_share "$TMP/node.folded" node 'hot /')
check_share "$total" "$matched" "node: hot() as a JIT frame"
echo PASS
