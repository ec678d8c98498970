#!/bin/bash
# SPDX-License-Identifier: MIT
# Python frames in native stacks, on Debian's python3 (stripped, no frame pointers) and
# on the other CPython versions pyenv holds, with workloads known by construction
# (tests/workloads/pyframes.py):
# - cpu mode, default options, a command: hot_a/hot_b/hot_c within 3 points of
#   50/30/20, >= 95 % of the samples reaching <module> through the native stack;
# - a process already running (-p), four threads each in its own function: each
#   function gets its thread's share and no stack holds two of them;
# - offcpu mode: napper's time is under napper above the kernel's schedule, waiter's
#   under waiter;Queue.get;
# - short-lived processes (60 ms) begun during the recording: their frames named;
# - a capture names them in report as record does;
# - --lines: the hot line of work() is named with its number;
# - a version without a layout (3.9): said once with a hint, its native stacks kept.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf
PY=/usr/bin/python3
W="$(dirname "$0")/../workloads/pyframes.py"
# the perf maps CPython's -X perf leaves behind (its PIDs are not known here)
touch "$TMP/marker"
trap 'find /tmp -maxdepth 1 -name "perf-*.map" -newer "$TMP/marker" -user 0 \
	-exec grep -l -F "pyframes.py" {} + 2>/dev/null | xargs -r rm -f; rm -rf "$TMP";
	[ -z "${BG_PID:-}" ] || kill "$BG_PID" 2>/dev/null || true' EXIT
[ -x "$PY" ] || fail "$PY is missing (Debian's python3)"

# shares of hot_a/b/c among samples of comm $2 in $1, and the share reaching <module>
check_shares() {
	local f="$1" comm="$2" what="$3" s

	s=$(($(frame_total "$f" "$comm" "hot_a (pyframes.py)") + $(frame_total "$f" "$comm" "hot_b (pyframes.py)") +
		$(frame_total "$f" "$comm" "hot_c (pyframes.py)")))
	echo -n "$what: "
	[ "$s" -ge 500 ] || { echo "$s samples in hot_a/b/c (want >= 500)"; return 1; }
	split_shares "$f" "$comm" 95 "<module> (pyframes.py)" "hot_a (pyframes.py)" \
		"hot_b (pyframes.py)" "hot_c (pyframes.py)"
}

# cpu mode, default options, a command
"$SCORCH" record -v -F 999 -o "$TMP/cpu.folded" -- "$PY" "$W" cpu 4 >/dev/null 2>"$TMP/err" ||
	fail "record failed: $(grep -v '^debug' "$TMP/err")"
grep '^scorch: python' "$TMP/err" || fail "no python line in the -v summary"
check_folded "$TMP/cpu.folded"
check_shares "$TMP/cpu.folded" python3 "cpu, python3" ||
	fail "the Python profile of the known workload is not true"
# the Python frames stand where the eval loop's native frames were: below them only
# native frames of the interpreter, above <module> only Python frames down to the leaf
grep -q ';<module> (pyframes.py);main (pyframes.py);cpu (pyframes.py);hot_a (pyframes.py);work (pyframes.py)' \
	"$TMP/cpu.folded" || fail "no stack <module>;main;cpu;hot_a;work"

# a running process, four threads each in its own function
start_ready "$PY" "$W" threads 6
"$SCORCH" record -F 499 -p "$BG_PID" -d 2 -o "$TMP/thr.folded" 2>"$TMP/err" ||
	fail "record -p failed: $(cat "$TMP/err")"
wait "$BG_PID" || true
check_folded "$TMP/thr.folded"
t=$(comm_total "$TMP/thr.folded" python3)
for k in 1 2 3 4; do
	n=$(frame_total "$TMP/thr.folded" python3 "spin_$k (pyframes.py)")
	r=$(frame_total "$TMP/thr.folded" python3 "Thread.run (threading.py)")
	echo "threads: spin_$k $n of $t samples"
	# four spinning threads on two CPUs: a quarter each, give or take the scheduler
	[ $((n * 100)) -ge $((t * 12)) ] || fail "spin_$k has $n of $t samples (want >= 12 %)"
done
if grep -E 'spin_[1-4] \(pyframes.py\).*spin_[1-4] \(pyframes.py\)' "$TMP/thr.folded" | grep -q .; then
	fail "a stack holds the functions of two threads"
fi
[ "$r" -ge $((t * 9 / 10)) ] || fail "only $r of $t samples under Thread.run (threading.py)"

# offcpu mode: the blocked threads' Python frames above the kernel's wait
start_ready "$PY" "$W" off 6
"$SCORCH" record --mode offcpu -p "$BG_PID" -d 2 -o "$TMP/off.folded" 2>"$TMP/err" ||
	fail "record offcpu failed: $(cat "$TMP/err")"
wait "$BG_PID" || true
check_folded "$TMP/off.folded"
nap=$(frame_total "$TMP/off.folded" python3 "napper (pyframes.py)")
# (a thread blocked since before the recording has the kernel stack /proc shows)
napk=$(grep ';napper (pyframes.py);.*_\[k\];' "$TMP/off.folded" |
	awk '{ t += $NF } END { print t + 0 }')
wai=$(grep ';waiter (pyframes.py);Queue.get (queue.py);.*_\[k\];' "$TMP/off.folded" |
	awk '{ t += $NF } END { print t + 0 }')
echo "offcpu: napper ${nap} us (${napk} above the kernel's wait), waiter;Queue.get ${wai} us"
# 2 s recorded: each thread blocked nearly all of it
[ "$napk" -ge 1600000 ] || fail "napper's blocked time is ${napk} us under napper (want >= 1.6 s)"
[ "$wai" -ge 1800000 ] || fail "waiter's blocked time is ${wai} us under waiter;Queue.get (want >= 1.8 s)"

# short-lived processes begun during the recording
"$SCORCH" record -F 999 -o "$TMP/short.folded" -- sh -c \
	"'$PY' '$W' short; '$PY' '$W' short; '$PY' '$W' short" 2>"$TMP/err" ||
	fail "record of short-lived processes failed: $(cat "$TMP/err")"
s=$(frame_total "$TMP/short.folded" python3 "short_lived (pyframes.py)")
u=$(frame_total "$TMP/short.folded" python3 "[unknown python]")
echo "short-lived: $s samples in short_lived, $u unnamed Python frames' samples"
# 3 x 60 ms at 999 Hz: about 180
[ "$s" -ge 100 ] || fail "only $s samples named short_lived (want >= 100)"
# a module's code object runs once at import and may be freed before scorch reads it
[ $((u * 20)) -le "$s" ] || fail "$u samples with Python frames left unnamed (want <= 5 % of $s)"

# a capture keeps the names: report names the frames as record did
"$SCORCH" record -F 999 -o "$TMP/cap.scorch" -o "$TMP/cap.folded" -- "$PY" "$W" cpu 1 \
	>/dev/null 2>"$TMP/err" || fail "record -o .scorch failed: $(cat "$TMP/err")"
"$SCORCH" report "$TMP/cap.scorch" -o "$TMP/rep.folded" 2>"$TMP/err" ||
	fail "report failed: $(cat "$TMP/err")"
grep -q 'hot_a (pyframes.py)' "$TMP/rep.folded" || fail "the report names no Python frame"
cmp "$TMP/cap.folded" "$TMP/rep.folded" || fail "report's folded stacks differ from record's"

# --lines: the hot line
line=$(grep -n '# the hot line' "$W" | cut -d: -f1)
"$SCORCH" record --lines -F 999 -o "$TMP/lines.folded" -- "$PY" "$W" cpu 1 >/dev/null 2>"$TMP/err" ||
	fail "record --lines failed: $(cat "$TMP/err")"
hot=$(frame_total "$TMP/lines.folded" python3 "work (pyframes.py:$line)")
all=$(grep -o 'work (pyframes.py:[0-9]*)' "$TMP/lines.folded" | sort | uniq -c | tr '\n' ' ')
wt=$(grep 'work (pyframes.py:' "$TMP/lines.folded" | awk '{ t += $NF } END { print t + 0 }')
echo "--lines: work at line $line in $hot of $wt samples in work ($all)"
[ "$wt" -ge 200 ] && [ $((hot * 100)) -ge $((wt * 50)) ] ||
	fail "work's hot line $line has $hot of $wt samples"

# a version without a layout here (3.9, where pyenv holds it): said once, native frames kept
py=$(ls -d "$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")"/versions/3.9.*/bin/python3.9 \
	2>/dev/null | head -n 1)
if [ -n "$py" ]; then
	"$SCORCH" record -F 999 -o "$TMP/v39.folded" -- "$py" "$W" cpu 1 >/dev/null 2>"$TMP/err" ||
		fail "record of $py failed: $(cat "$TMP/err")"
	cat "$TMP/err"
	[ "$(grep -c 'runs CPython 3.9' "$TMP/err")" = 1 ] || fail "CPython 3.9 not said once"
	grep -q '^hint: scorch reads the frames of CPython 3.10 to 3.13' "$TMP/err" ||
		fail "no hint for CPython 3.9"
	grep -q ';PyEval_EvalCode;' "$TMP/v39.folded" || fail "CPython 3.9's native frames are missing"
	! grep -q '(pyframes.py)' "$TMP/v39.folded" || fail "Python frames read from CPython 3.9"
else
	echo "CPython 3.9: not installed (pyenv), not tested"
fi

# the other CPython versions, where pyenv holds them (their own layouts)
root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
for v in 3.10 3.12 3.13; do
	py=$(ls -d "$root"/versions/$v.*/bin/python$v 2>/dev/null | head -n 1)
	if [ -z "$py" ]; then
		echo "CPython $v: not installed (pyenv), not tested"
		continue
	fi
	"$SCORCH" record -F 999 -o "$TMP/v$v.folded" -- "$py" "$W" cpu 3 >/dev/null 2>"$TMP/err" ||
		fail "record of $py failed: $(cat "$TMP/err")"
	check_shares "$TMP/v$v.folded" "python$v" "cpu, $py" ||
		check_shares "$TMP/v$v.folded" python3 "cpu, $py" ||
		fail "the Python profile of CPython $v is not true"
	[ "$v" = 3.10 ] && continue
	# -X perf: the perf trampolines (anonymous code, no CFI) are stepped through, and
	# left out where the Python frames they stand for are read from the interpreter
	"$SCORCH" record -F 999 -o "$TMP/xp$v.folded" -- "$py" -X perf "$W" cpu 3 >/dev/null \
		2>"$TMP/err" || fail "record of $py -X perf failed: $(cat "$TMP/err")"
	# (a sample may stop inside a trampoline's own four instructions: that leaf stays)
	awk '{ c = $NF; t += c } /py::/ { k += c } END { exit !(k * 100 > t) }' "$TMP/xp$v.folded" &&
		fail "CPython $v -X perf: trampoline frames kept: $(grep -m1 'py::' "$TMP/xp$v.folded")"
	grep -q 'JIT code' "$TMP/err" && fail "CPython $v -X perf: JIT warning: $(cat "$TMP/err")"
	check_shares "$TMP/xp$v.folded" "python$v" "cpu -X perf, $py" ||
		check_shares "$TMP/xp$v.folded" python3 "cpu -X perf, $py" ||
		fail "the Python profile of CPython $v -X perf is not true"
	# without the Python walk the trampolines end the stacks: the hint is about CPython
	"$SCORCH" record --no-python -F 499 -o "$TMP/np$v.folded" -- "$py" -X perf "$W" cpu 1 \
		>/dev/null 2>"$TMP/err" || fail "record of $py -X perf --no-python failed: $(cat "$TMP/err")"
	if grep -q 'end in JIT code' "$TMP/err"; then
		grep -q "^hint: CPython's -X perf trampolines" "$TMP/err" ||
			fail "CPython $v -X perf --no-python: the hint is not about CPython: $(cat "$TMP/err")"
	fi
done
