#!/bin/bash
# SPDX-License-Identifier: MIT
# The bench/ programs answer --help with their usage and exit 0 (no traceback), and
# flamegraph-gen.py still takes its positional arguments. Needs no privilege.
set -eu
. "$(dirname "$0")/../lib.sh"
BENCH="$(cd "$(dirname "$0")/../../bench" && pwd)"

for p in bench.py flamegraph-gen.py pyjob.py rqpool.py runstat.py summary.py; do
	rc=0
	python3 "$BENCH/$p" --help >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "$p --help exited $rc: $(tail -n 3 "$TMP/err")"
	! grep -q Traceback "$TMP/err" || fail "$p --help: $(cat "$TMP/err")"
	grep -q 'usage:' "$TMP/out" || fail "$p --help prints no usage: $(head -n 3 "$TMP/out")"
done
# LINES MAXDEPTH SEED [KIND], as the benches call it: LINES folded stacks, the same each run
python3 "$BENCH/flamegraph-gen.py" 50 8 3 >"$TMP/a.folded"
python3 "$BENCH/flamegraph-gen.py" 50 8 3 >"$TMP/b.folded"
[ "$(wc -l <"$TMP/a.folded")" -eq 50 ] || fail "flamegraph-gen.py 50 wrote $(wc -l <"$TMP/a.folded") lines"
cmp -s "$TMP/a.folded" "$TMP/b.folded" || fail "flamegraph-gen.py is not deterministic"
! grep -qvE '^[^ ]+ [0-9]+$' "$TMP/a.folded" || fail "flamegraph-gen.py wrote lines that are not folded"
python3 "$BENCH/flamegraph-gen.py" 20 6 1 tree | grep -q . || fail "flamegraph-gen.py tree wrote nothing"
python3 "$BENCH/flamegraph-gen.py" 3 6 1 perf | grep -q 'cpu-clock:' || fail "flamegraph-gen.py perf"
rc=0
python3 "$BENCH/flamegraph-gen.py" x >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && ! grep -q Traceback "$TMP/err" || fail "flamegraph-gen.py x: rc $rc, $(cat "$TMP/err")"
echo PASS
