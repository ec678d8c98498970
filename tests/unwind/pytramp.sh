#!/bin/bash
# SPDX-License-Identifier: MIT
# CPython's perf trampolines (-X perf) are walked through, not where stacks end: a
# program without frame pointers calls through both stub layouts (3.12's, no frame
# pointer; 3.13's, rbp pushed) in anonymous memory named "py::..." in its perf map
# (tests/workloads/pytramp.c). Nearly every sample under a py:: frame must reach main
# through outer_*, and show the stub as a JIT frame between outer_* and inner_*. Also
# a real CPython with -X perf when pyenv holds one (3.12 or later), its functions first
# called after its perf map was first read.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# reach FOLDED VERSION: "total reached" of the samples with py::fake_VERSION
reach() {
	awk -v v="$2" '$0 ~ "py::fake_" v {
		t += $NF
		if ($0 ~ ";main;outer_" v "[^;]*;py::fake_" v ":/pytramp.py_\\[j\\];inner_" v "[^;]*( |;)") r += $NF
	} END { print t + 0, r + 0 }' "$1"
}

"$SCORCH" record --unwind dwarf -F 999 -o "$TMP/t.folded" -- "$PYTRAMP" 2 >/dev/null \
	2>"$TMP/err" || fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/t.folded"
for v in 312 313; do
	read -r t r < <(reach "$TMP/t.folded" $v)
	echo "py::fake_$v: $r of $t samples reach main through the stub"
	[ "$t" -ge 300 ] || fail "py::fake_$v: too few samples ($t)"
	awk -v t="$t" -v r="$r" 'BEGIN { exit !(r >= 0.95 * t) }' ||
		fail "py::fake_$v: stacks end at the trampoline: $(grep "py::fake_$v" "$TMP/t.folded" | head -n 3)"
done

# the real thing, if this machine has it; the perf maps CPython's -X perf leaves behind
# (its PIDs are not known here) are removed at exit
touch "$TMP/marker"
trap 'find /tmp -maxdepth 1 -name "perf-*.map" -newer "$TMP/marker" -user 0 \
	-exec grep -l -F "$TMP/work.py" {} + 2>/dev/null | xargs -r rm -f; rm -rf "$TMP"
	[ -z "${BG_PID:-}" ] || kill "$BG_PID" 2>/dev/null || true' EXIT
for py in "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.1[2-9]*/bin/python3.1[2-9]; do
	[ -x "$py" ] || continue
	# the functions first run 0.3 s in, after the perf map was first read (when the
	# trampolines' memory was mapped): their lines come later in the same map, read
	# again when an unwind meets code it does not name yet (not at the next sweep, up to
	# a second later: 535 of 995 samples were cut so)
	cat >"$TMP/work.py" <<'PY'
import time
time.sleep(0.3)
def leaf(n):
    s = 0
    for i in range(n):
        s += i
    return s
def mid(n):
    return leaf(n)
end = time.time() + 2
while time.time() < end:
    mid(10000)
PY
	"$SCORCH" record --unwind dwarf -F 499 -o "$TMP/py.folded" -- "$py" -X perf "$TMP/work.py" \
		2>"$TMP/err" || fail "$py: record failed: $(cat "$TMP/err")"
	awk '/py::leaf/ { t += $NF; if ($0 ~ /;_start;.*py::mid:.*py::leaf:/) r += $NF }
		END { printf "%s: %d of %d samples in py::leaf reach _start through py::mid\n", py, r, t
		      exit !(t > 100 && r >= 0.9 * t) }' py="$py" "$TMP/py.folded" ||
		fail "$py: Python frames cut at the first trampoline"
done
echo PASS
