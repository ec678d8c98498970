#!/bin/bash
# SPDX-License-Identifier: MIT
# -p, -t and -a each select what they say; the recording ends when a -p target
# exits; kernel frames come after user frames and carry _[k]; idle is excluded.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# -p: no duration, so the recording must end by itself when the target exits.
start_ready "$SPLIT" --seconds 2
pid=$BG_PID
timeout 60 "$SCORCH" record -p "$pid" -F 499 -o "$TMP/pid.folded" 2>"$TMP/err" ||
	fail "record -p failed or hung: $(cat "$TMP/err")"
wait "$pid" || true
BG_PID=
check_folded "$TMP/pid.folded"
others=$(awk -F';' '$1 != "split"' "$TMP/pid.folded" | wc -l)
[ "$others" -eq 0 ] || fail "-p $pid recorded other processes: $(awk -F';' '$1 != "split"' "$TMP/pid.folded" | head -n 3)"
[ "$(frame_total "$TMP/pid.folded" split burn_a)" -gt 0 ] || fail "-p: burn_a missing"
echo "-p ok: $(comm_total "$TMP/pid.folded" split) samples, ended when the target exited"

# -t: only the chosen thread (its comm is split-w1), never its sibling.
start_ready "$SPLIT" --seconds 3 --threads 2
set -- $READY
tid1=$4
"$SCORCH" record -t "$tid1" -d 1 -F 499 -o "$TMP/tid.folded" 2>"$TMP/err" ||
	fail "record -t failed: $(cat "$TMP/err")"
kill "$BG_PID" 2>/dev/null || true
wait "$BG_PID" 2>/dev/null || true
BG_PID=
check_folded "$TMP/tid.folded"
bad=$(awk -F';' '$1 != "split-w1"' "$TMP/tid.folded" | wc -l)
[ "$bad" -eq 0 ] || fail "-t $tid1 recorded other threads: $(awk -F';' '$1 != "split-w1"' "$TMP/tid.folded" | head -n 3)"
[ "$(frame_total "$TMP/tid.folded" split-w1 burn_b)" -gt 0 ] || fail "-t: burn_b missing"
echo "-t ok: $(comm_total "$TMP/tid.folded" split-w1) samples of split-w1 only"

# -a (the default target) with a workload that spends time in the kernel.
start_ready "$SPLIT" --seconds 3 --kernel
"$SCORCH" record -d 1.5 -F 499 -o "$TMP/all.folded" 2>"$TMP/err" ||
	fail "record -a failed: $(cat "$TMP/err")"
kill "$BG_PID" 2>/dev/null || true
wait "$BG_PID" 2>/dev/null || true
BG_PID=
check_folded "$TMP/all.folded"
[ "$(comm_total "$TMP/all.folded" split)" -gt 0 ] || fail "-a: the workload is missing"
[ "$(frame_total "$TMP/all.folded" split burn_kernel)" -gt 0 ] || fail "-a: burn_kernel missing"
# kernel frames: present under burn_kernel, suffixed _[k], and never followed by a user frame
grep -q '^split;.*;burn_kernel;.*_\[k\] [0-9]*$' "$TMP/all.folded" ||
	fail "-a: no kernel frames under burn_kernel"
awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = split(line, a, ";"); k = 0
	for (i = 2; i <= n; i++) {
		if (a[i] ~ /_\[k\]$/) k = 1
		else if (k && a[i] !~ /^\[missed/) { print "user frame after kernel frame: " $0; exit 1 }
	} }' "$TMP/all.folded" || fail "-a: frame order"
grep -q '^swapper' "$TMP/all.folded" && fail "-a: idle task recorded without -I"
grep -qE '^scorch;' "$TMP/all.folded" && echo "note: scorch itself was sampled"
echo "-a ok: $(wc -l <"$TMP/all.folded") stacks"

# -K: kernel frames only; -U: user frames only.
start_ready "$SPLIT" --seconds 3 --kernel
"$SCORCH" record -p "$BG_PID" -K -d 1 -F 499 -o "$TMP/k.folded" 2>"$TMP/err" || fail "-K: $(cat "$TMP/err")"
"$SCORCH" record -p "$BG_PID" -U -d 1 -F 499 -o "$TMP/u.folded" 2>"$TMP/err" || fail "-U: $(cat "$TMP/err")"
kill "$BG_PID" 2>/dev/null || true
wait "$BG_PID" 2>/dev/null || true
BG_PID=
awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = split(line, a, ";")
	for (i = 2; i <= n; i++) if (a[i] !~ /_\[k\]$/ && a[i] !~ /^\[/) { print; exit 1 } }' \
	"$TMP/k.folded" || fail "-K recorded a user frame"
grep -q '_\[k\]' "$TMP/u.folded" && fail "-U recorded a kernel frame"
[ "$(frame_total "$TMP/u.folded" split burn_a)" -gt 0 ] || fail "-U: burn_a missing"
# a kernel thread (kthreadd, PID 2): a note and a hint, its kernel stacks only; -U
# would record nothing: refused
"$SCORCH" record -p 2 -d 0.2 -o "$TMP/kthread.folded" 2>"$TMP/err" ||
	fail "record -p 2: $(cat "$TMP/err")"
grep -q "process 2 is a kernel thread" "$TMP/err" || fail "-p 2: no note: $(cat "$TMP/err")"
grep -q "^hint: " "$TMP/err" || fail "-p 2: no hint"
rc=0
"$SCORCH" record -p 2 -U -d 0.2 -o "$TMP/kthread.folded" 2>"$TMP/err" || rc=$?
[ "$rc" -eq 1 ] || fail "record -p 2 -U: exit $rc: $(cat "$TMP/err")"
grep -q "no user stack for -U" "$TMP/err" || fail "-p 2 -U: $(cat "$TMP/err")"

# a zombie (exited, not reaped: waitid WNOWAIT leaves it so) has no thread to sample:
# refused with a hint, not a silent empty recording
exec 7< <(exec python3 -c 'import os, signal
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
print(pid, flush=True)
signal.pause()')
zparent=$!
read -r -t 30 zpid <&7 || fail "no zombie"
rc=0
"$SCORCH" record -p "$zpid" -d 0.2 -o "$TMP/zombie.folded" 2>"$TMP/err" || rc=$?
kill "$zparent"
exec 7<&-
[ "$rc" -eq 1 ] || fail "record -p zombie: exit $rc: $(cat "$TMP/err")"
grep -q "process $zpid has exited (a zombie)" "$TMP/err" || fail "zombie: $(cat "$TMP/err")"
grep -q "^hint: " "$TMP/err" || fail "zombie: no hint"
[ ! -e "$TMP/zombie.folded" ] || fail "zombie: an output was written"

echo PASS
