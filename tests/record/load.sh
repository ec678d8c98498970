#!/bin/bash
# SPDX-License-Identifier: MIT
# Load: system-wide recording at 999 Hz while hundreds of processes per second
# fork, exec and exit and thread pairs ping-pong (bench/loadgen.c). scorch must
# exit 0 (or 3, partial) with every loss in its summary, release the processes
# that exit, stay within a memory bound, and show the load's known hot function.
# (bench/load-bench.sh is the long version, with perf record beside it.)
# --unwind fp: this measures the per-process work under churn; the copies of --unwind
# dwarf and their ring-buffer losses are tested by tests/unwind/ringfull.sh. Not
# governed: a child is seen at its first sample, and the churn makes samples cost
# enough (BPF time, scorch's own per process) that the governor would lower the rate.
set -eu
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || { [ "${CI:-}" = true ] && fail "CI must run as root"; echo "SKIP: not root"; exit 77; }
require_bpf
RUNSTAT="$(dirname "$0")/../../bench/runstat.py"
RATE=300 DUR=10

# baseline, same conditions minus the load: what the rest of this (shared) machine
# costs a system-wide recording in memory and processes
python3 "$RUNSTAT" "$TMP/base.json" -- "$SCORCH" record -v -a -F 999 --unwind fp -d 2 -o "$TMP/base.folded" \
	2>"$TMP/base.err" || fail "baseline recording failed: $(cat "$TMP/base.err")"

start_ready "$LOADGEN" -r $RATE -p 4 -d $((DUR + 3)) 2>"$TMP/loadgen.err"
rc=0
python3 "$RUNSTAT" "$TMP/load.json" -- "$SCORCH" record -v -a -F 999 --unwind fp --max-overhead 0 -d $DUR -o "$TMP/load.folded" \
	2>"$TMP/load.err" || rc=$?
wait "$BG_PID" || fail "loadgen failed: $(cat "$TMP/loadgen.err")"
BG_PID=
cat "$TMP/loadgen.err" "$TMP/load.err"
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "record under load exited $rc"
check_folded "$TMP/load.folded"
# processes sampled while exit or exec takes their memory away keep their user leaf,
# as perf does: [unknown];_exit, not [missed user stack]
awk '{ c = $NF; t += c } /\[missed user stack\]/ { m += c } END {
	printf "[missed user stack]: %d of %d samples\n", m, t; exit !(m * 100 <= t) }' \
	"$TMP/load.folded" || fail "more than 1 % of the samples under [missed user stack]"

# every sample is either in the output or counted as lost, and the loss line
# breaks the total down completely
# under AddressSanitizer (build-asan/) RSS includes its quarantine and shadow
# memory: the bound is checked in the normal build only
asan=0
ldd "$SCORCH" 2>/dev/null | grep -q libasan && asan=1
ASAN=$asan PYTHONPATH="$(dirname "$0")/../../bench" python3 - "$TMP/load.err" "$TMP/load.folded" "$TMP/base.err" "$TMP/base.json" "$TMP/load.json" \
	$RATE $DUR "$TMP/loadgen.err" <<'PY' || fail "load accounting (see above)"
import json, os, re, sys
import summary  # bench/summary.py: the benches' reader of the summary
err, folded, base_err = (open(f).read() for f in sys.argv[1:4])
base, load = (json.load(open(f)) for f in sys.argv[4:6])
rate, dur = int(sys.argv[6]), int(sys.argv[7])

def grab(pat, text):
    m = re.search(pat, text, re.M)
    assert m, f"summary lacks /{pat}/"
    return [int(x) for x in m.groups()]

s = summary.scorch_summary(err, "the summary")
assert (s.mode, s.verbose, s.hz) == ("cpu", True, 999), s
samples, counted = s.samples, s.counted
lost, taken = summary.scorch_lost(err, "the summary")
total = sum(int(l.rsplit(" ", 1)[1]) for l in folded.splitlines())
assert taken == samples, (taken, samples)
assert total + lost == samples, f"output {total} + lost {lost} != samples {samples}"
if lost:
    parts = grab(r"^scorch: lost: (\d+) stack map full, (\d+) count map full, (\d+) stack hash "
                 r"collisions, (\d+) unreadable at the end, (\d+) off-CPU", err)
    ring = re.search(r"^scorch: lost: (\d+) samples with the sample ring buffer full", err, re.M)
    assert sum(parts) + (int(ring.group(1)) if ring else 0) == lost, (parts, lost)
print(f"accounting: {samples} samples = {total} in the output + {lost} lost")

seen, released, held, gone = summary.scorch_processes(err, "the summary")
# an idle machine's baseline may sample no process: -v prints no line of zeros then
b_seen, _, b_held, _ = (summary.scorch_processes(base_err, "the baseline's summary")
                        if "scorch: processes:" in base_err else (0, 0, 0, 0))
# loadgen starts RATE a second where the machine allows (an ASan build's fork is slow:
# 24 a second on this VM): half of what it says it started during the recording
started = grab(r"^loadgen: (\d+) processes started", open(sys.argv[8]).read())[0]
started = started * dur / (dur + 3)
assert started >= 100, f"loadgen started only {started:.0f} processes: no load to speak of"
assert seen >= started / 2, f"only {seen} processes seen of about {started:.0f} started"
# exited processes are released by a reap within a period (1 s) when the CPUs are idle,
# else once 1,024 exited images are held (REAP_HELD in engine/record-reap.c; the count
# keys' bound comes later here: about one key per child): what is held is what lives
# plus 1,024 and the exits until the next look (about 3,000 if none were released);
# what is never released is what still lives at the end (the machine's other
# processes, as in the baseline)
# Under AddressSanitizer scorch needs several times the CPU and competes for it with the
# load on this 2-CPU machine: a stretch without CPU lets more exits pile up (29 runs of
# earlier ASan builds: 290 to 1,224 held, 8 over the normal bound; the normal
# build: under 100, when 64 exits forced a reap). There the bound allows 5 s of exits
# beyond the 1,024 (about 2,700 here, near the 3,000 seen): what catches a release that
# never comes is the count of processes never released below.
import os
limit = b_held + 1024 + (5 if os.environ.get("ASAN") == "1" else 2) * rate + 64
assert held <= limit, f"{held} processes held at once (baseline {b_held}, bound {limit})"
# (plus 5 % for other users' processes started meanwhile on a shared machine;
# before exec released the pre-exec image, 14 % were never released); those that
# exited while reaps were put off are left for the end (the reaps line counts them)
left = re.search(r"^scorch: reaps of .*; exited images left for the end: (\d+)$", err, re.M)
left = int(left.group(1)) if left else 0
assert seen - released - left <= b_seen + 64 + seen // 20, \
    f"{seen - released - left} of {seen} never released ({left} left for the end; " \
    f"baseline saw {b_seen})"
print(f"processes: {seen} seen, {released} released, at most {held} held (baseline {b_held})")

# memory: the baseline (kernel symbols, the files of what runs here) plus what
# may come on top during the load: the symbolizer keeps the 16 most recently
# released files parsed (DESIGN.md), which other users' programs exiting during
# the 10 s (a compiler's symbol tables: under 8 MiB each) may fill where the 2-s
# baseline did not: 128 MiB; the load's own share: held processes' mappings
# (about 100 x under 64 KiB) and the folded stacks (the stack map bounds them:
# 21,000 entries x about 1 KiB of frames): 32 MiB. A leak of 64 KiB per
# process (3,000 here) or 8 KiB per sample (20,000) would break it.
bound = base["maxrss_kib"] + 160 * 1024
print(f"peak RSS {load['maxrss_kib']} KiB (baseline {base['maxrss_kib']} KiB, bound {bound} KiB); "
      f"CPU {load['user_s'] + load['sys_s']:.2f} s")
import os
if os.environ.get("ASAN") == "1":
    print("AddressSanitizer build: the RSS bound is not checked (normal build only)")
else:
    assert load["maxrss_kib"] <= bound, "peak RSS over the bound"
PY

# the children's hot function shows under their name: each burns about 1 ms of
# CPU, one sample at 999 Hz, so as many samples as children started during the
# recording are expected (loadgen's own count: RATE a second where the machine
# allows); a quarter must be named (the rest: processes gone before their maps were
# read, counted)
started=$(sed -n 's/^loadgen: \([0-9]*\) processes started.*/\1/p' "$TMP/loadgen.err")
want=$((${started:-0} * DUR / (DUR + 3) / 4))
hot=$(frame_total "$TMP/load.folded" loadgen loadgen_child_hot)
[ "$hot" -ge "$want" ] || fail "loadgen_child_hot: $hot samples, expected >= $want"
echo "loadgen_child_hot: $hot samples"
echo PASS
