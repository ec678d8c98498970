#!/bin/bash
# SPDX-License-Identifier: MIT
# scorch check: one line per probe, a hint for each problem, exit 0 when recording
# can work and 1 when it cannot; --json says the same; record refuses with the
# same probe's words.
set -eu
. "$(dirname "$0")/../lib.sh"

rc=0
"$SCORCH" check --bogus >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "check --bogus exited $rc, expected 2"
grep -q "unknown option '--bogus'" "$TMP/err" || fail "check --bogus: $(cat "$TMP/err")"
rc=0
"$SCORCH" check extra >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "check extra exited $rc, expected 2"
"$SCORCH" check --help | grep -q '^exit status: 0' || fail "check --help states no exit status"

# the probes every run must show, by their stable names
names="privileges kernel.perf_event_paranoid kernel.perf_event_max_sample_rate
kernel.perf_event_max_stack kernel.unprivileged_bpf_disabled BTF prog@perf_event
prog@raw_tracepoint prog@tracepoint prog@kprobe prog@tracing map@ringbuf map@stack_trace
map@batch@ops helper@get_stack helper@probe_read_user helper@task_pt_regs event@cpu-clock
event@cycles event@uprobe tp@sched_process_exit tp@sched_switch tp@sched_wakeup tp@sched_waking
tracefs debuginfo memlock"

check_table() { # check_table FILE: every probe listed once with a known status
	local f=$1 n
	for n in $names; do
		n=${n//@/ }
		c=$(grep -E '^(ok|degraded|missing|skipped) ' "$f" | cut -c11-44 | sed 's/ *$//' |
			grep -cxF "$n" || true)
		[ "$c" -eq 1 ] || fail "probe '$n' listed $c times in: $(cat "$f")"
	done
}

if [ "$(id -u)" != 0 ]; then
	echo "not root: the rest needs root"
	[ "${CI:-}" = true ] && fail "CI must run as root"
	exit 0
fi
require_bpf

# as root on this host recording works: exit 0, and the verdict says so
rc=0
"$SCORCH" check >"$TMP/root.txt" 2>"$TMP/root.err" || rc=$?
[ "$rc" -eq 0 ] || fail "check as root exited $rc: $(cat "$TMP/root.txt" "$TMP/root.err")"
check_table "$TMP/root.txt"
grep -q '^record: works: --mode cpu' "$TMP/root.txt" || fail "no verdict: $(cat "$TMP/root.txt")"
# the verdict names every mode, unwinder and event kind, as working or not
verdict=$(grep '^record: works: ' "$TMP/root.txt")
for w in offcpu wall offwake wakeup '--unwind' kernel dwarf fp '--event' tracepoint page-faults \
	context-switches cpu-migrations uprobe uretprobe usdt; do
	echo "$verdict" | grep -qw -- "$w" || fail "the verdict does not say whether $w works: $verdict"
done
grep -qE '^ok +privileges .*CAP_BPF' "$TMP/root.txt" || fail "root lacks CAP_BPF?"
grep -qE '^ok +map ringbuf ' "$TMP/root.txt" || fail "ring buffers not found"
# every problem line carries a hint, unless it needs nothing ('-')
awk '/^(missing|degraded) / && $0 !~ / - / { want = NR + 1; line = $0 }
     NR == want && !/^ +hint: / { print "no hint after: " line; bad = 1 }
     END { exit bad }' "$TMP/root.txt" || fail "a problem without a hint"
# the sysctls show their values as /proc/sys has them
for s in perf_event_max_stack perf_event_max_sample_rate perf_event_paranoid; do
	v=$(cat /proc/sys/kernel/$s)
	grep -qE "^[a-z]+ +kernel\.$s +[a-z-]+ +$v\b" "$TMP/root.txt" ||
		fail "kernel.$s: value $v not shown: $(grep "$s" "$TMP/root.txt")"
done
# stderr stays quiet: libbpf's probe failures only with -v
[ ! -s "$TMP/root.err" ] || fail "check printed on stderr: $(cat "$TMP/root.err")"

# --json: the same verdict and probes
"$SCORCH" check --json >"$TMP/root.json"
python3 - "$TMP/root.json" "$TMP/root.txt" <<'PY' || fail "--json disagrees with the table"
import json, sys
j = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read().splitlines()
assert j["can_record"] is True, j
assert j["modes"]["cpu"] is True
for m in ("offcpu", "wall", "offwake", "wakeup", "unwind_fp", "unwind_dwarf", "unwind_kernel",
          "event_tracepoint", "event_software", "event_uprobe", "event_usdt"):
    assert j["modes"][m] in (True, False), (m, j["modes"])
rows = {}
for line in table[1:]:
    parts = line.split()
    if parts and parts[0] in ("ok", "degraded", "missing", "skipped"):
        rows[line[10:44].strip()] = parts[0]
assert len(rows) == len(j["probes"]) >= 25, (len(rows), len(j["probes"]))
for p in j["probes"]:
    assert rows[p["name"]] == p["status"], p
    assert p["needed_by"] in ("record", "offcpu", "offwake", "dwarf", "uprobe", "-"), p
    if p["status"] in ("missing", "degraded") and p["needed_by"] != "-":
        assert p["hint"], p
PY

# without privileges: exit 1, the privileges probe says why, BPF probes are skipped
# (not reported as unsupported), and record refuses with the same words and hint
if command -v setpriv >/dev/null; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
	rc=0
	nobody "$SCORCH" check >"$TMP/user.txt" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "check as nobody exited $rc: $(cat "$TMP/user.txt")"
	check_table "$TMP/user.txt"
	grep -qE '^missing +privileges +record +recording needs root' "$TMP/user.txt" ||
		fail "privileges not missing: $(cat "$TMP/user.txt")"
	grep -qE '^skipped +map ringbuf ' "$TMP/user.txt" || fail "BPF probes not skipped"
	grep -q '^record: cannot work here; missing: privileges;' "$TMP/user.txt" ||
		fail "no negative verdict: $(tail -n 2 "$TMP/user.txt")"
	detail=$(grep -E '^missing +privileges' "$TMP/user.txt" | sed -E 's/^missing +privileges +record +//')
	hint=$(grep -A1 -E '^missing +privileges' "$TMP/user.txt" | sed -n '2s/^ *//p')
	rc=0
	nobody "$SCORCH" record -d 0.1 -o /dev/null 2>"$TMP/rec.err" || rc=$?
	[ "$rc" -eq 1 ] || fail "record as nobody exited $rc"
	grep -qxF "scorch: $detail" "$TMP/rec.err" || fail "record's refusal differs from check's: $(cat "$TMP/rec.err") vs $detail"
	grep -qxF "$hint" "$TMP/rec.err" || fail "record's hint differs: $(cat "$TMP/rec.err") vs $hint"
	nobody "$SCORCH" check --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["can_record"] is False
st = {p["name"]: p["status"] for p in j["probes"]}
assert st["privileges"] == "missing" and st["map ringbuf"] == "skipped", st' ||
		fail "--json as nobody"
fi
echo "PASS"
