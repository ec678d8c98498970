#!/bin/bash
# SPDX-License-Identifier: MIT
# Several outputs from one recording: the known 50/30/20 split recorded at once to
# folded, SVG, pprof and speedscope; `go tool pprof -top` must list burn_a first at
# 50 % (within 3 points) and every format must hold the same samples. --interval on
# the phases workload (phase_one burns, then execs phase_two) must put phase one in
# the early files and phase two in the late ones, the files must add up to the
# summary, and one HTML page must hold every interval with the same samples; a
# capture of the same recording, reported to a page, must hold each interval's samples
# too and its folded output their sum (a capture alone: no numbered files, the same
# page). Bad option combinations are usage errors. A program named "jit" keeps its
# symbols; a full file system is reported once, as such, after which the summary follows.
set -eu
. "$(dirname "$0")/../lib.sh"
CHECKS="$(dirname "$0")/../export"

expect() { # expect CODE PATTERN -- args...
	local code=$1 pat=$2 rc=0
	shift 3
	"$SCORCH" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ "$rc" -eq "$code" ] || fail "'scorch $*' exited $rc, expected $code: $(cat "$TMP/err")"
	grep -qE -- "$pat" "$TMP/err" || fail "'scorch $*': stderr lacks /$pat/: $(cat "$TMP/err")"
	grep -q '^hint: ' "$TMP/err" || [ "$code" -ne 2 ] || [ -n "${NOHINT:-}" ] ||
		fail "'scorch $*': no hint line: $(cat "$TMP/err")"
}

expect 2 "unknown --format 'xml'" -- record --format xml
expect 2 "applies to one output" -- record --format pprof -o "$TMP/a.pb.gz" -o "$TMP/b.svg"
NOHINT=1 expect 2 "-o $TMP/a.svg is given twice" -- record -o "$TMP/a.svg" -o "$TMP/a.svg"
expect 2 "needs -o FILE" -- record --interval 1
expect 2 "needs -o FILE" -- record --interval 1 -o "$TMP/x.svg" -o -
expect 2 "needs -o FILE" -- record --interval 1 -o "$TMP/x.scorch" -o -
expect 2 "invalid --interval '0'" -- record --interval 0 -o "$TMP/x.svg"
NOHINT=1 expect 2 "flame graph options need an SVG or HTML output" -- record --title x -o "$TMP/x.pb.gz"
"$SCORCH" record --help | grep -q -- '--interval SECONDS' || fail "--help lacks --interval"
# refused while parsing, before anything is recorded
expect 2 "-o '' names no file" -- record -o '' -- true

require_bpf
if ! command -v go >/dev/null; then
	[ "${CI:-}" = true ] && fail "go (golang-go) is missing: run scripts/setup.sh"
	echo "SKIP: go tool pprof is not installed"
	exit 77
fi

# --- one recording, four formats ---
"$SCORCH" record -F 999 -o "$TMP/s.folded" -o "$TMP/s.svg" -o "$TMP/s.pb.gz" \
	-o "$TMP/s.json" -- "$SPLIT" --seconds 6 2>"$TMP/err" ||
	fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/s.folded"
xmllint --noout "$TMP/s.svg" || fail "the SVG is not valid XML"
python3 - "$CHECKS" "$TMP" <<'EOF' || fail "the outputs disagree with the known split"
import sys
sys.path.insert(0, sys.argv[1])
from checks import CheckError, check, load_html, load_speedscope, pprof_top, speedscope_shares
d = sys.argv[2]
try:
    folded = {}
    for line in open(f"{d}/s.folded"):
        stack, n = line.rsplit(" ", 1)
        folded[stack] = int(n)
    split_total = sum(n for s, n in folded.items() if s.split(";")[0] == "split")
    total = sum(folded.values())
    check(split_total >= 1000, f"too few samples of the workload ({split_total})")

    rows, out = pprof_top(f"{d}/s.pb.gz", ["-tagfocus=comm=^split$"])
    print(out)
    check(rows[0][2] == "burn_a", f"go tool pprof -top lists {rows[0][2]} first, not burn_a")
    check(47 <= rows[0][0] <= 53, f"burn_a flat {rows[0][0]}% is not 50 +- 3")
    flat = {name: f for f, _, name in rows}
    check(27 <= flat.get("burn_b", 0) <= 33, f"burn_b {flat.get('burn_b')}% is not 30 +- 3")
    check(17 <= flat.get("burn_c", 0) <= 23, f"burn_c {flat.get('burn_c')}% is not 20 +- 3")
    # the same samples in every format: counts, not just shares
    rows, out = pprof_top(f"{d}/s.pb.gz", ["-sample_index=samples"])
    check(f"of {total} total" in out, f"pprof holds {out.splitlines()[4]!r}, folded {total}")

    doc = load_speedscope(f"{d}/s.json")
    names = [p["name"] for p in doc["profiles"]]
    check(any(n.startswith("split (pid ") for n in names), f"no split profile: {names}")
    # cpu: weights in nanoseconds, each sample 1e9 / 999 of them
    incl, t = speedscope_shares(doc, lambda p: p["name"].startswith("split (pid "), 1e9 / 999)
    check(t == split_total, f"speedscope weights {t} != folded {split_total}")
    _, all_t = speedscope_shares(doc, None, 1e9 / 999)
    check(all_t == total, f"speedscope total {all_t} != folded {total}")
    s = incl["burn_a"] + incl["burn_b"] + incl["burn_c"]
    for fn, want in (("burn_a", 50), ("burn_b", 30), ("burn_c", 20)):
        got = 100 * incl[fn] / s
        print(f"speedscope {fn}: {got:.1f}% ({want})")
        check(abs(got - want) <= 3, f"speedscope {fn} {got:.1f}% is not {want} +- 3")
    check(doc["profiles"][0]["unit"] == "nanoseconds", "cpu weights are CPU time")
except CheckError as e:
    print(f"FAIL: {e}")
    sys.exit(1)
EOF

# mappings carry the file, its offset and its build-id
HOME="$TMP" GOCACHE="$TMP/gocache" go tool pprof -raw "$TMP/s.pb.gz" >"$TMP/raw" 2>&1 ||
	fail "go tool pprof -raw: $(cat "$TMP/raw")"
bid=$(readelf -n "$SPLIT" | awk '/Build ID/ { print $3 }')
exe=$(readlink -f "$SPLIT")
grep -E "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $exe $bid " "$TMP/raw" ||
	fail "no mapping of $exe with build-id $bid: $(grep -A5 Mappings "$TMP/raw")"

# --format applies to standard output
# (the workload's own "ready" line must not land in the JSON)
"$SCORCH" record -F 99 -q --format speedscope -- sh -c 'exec "$0" --seconds 0.3 >/dev/null' \
	"$SPLIT" >"$TMP/stdout.json" ||
	fail "--format speedscope to stdout"
python3 -c "import sys, json; d = json.load(open(sys.argv[1])); assert d['profiles']" \
	"$TMP/stdout.json" || fail "--format speedscope wrote no profile"

# pprof's duration is the recording window, from the attach to the stop: not the start-up
# before it (BPF load, kallsyms) nor the naming and writing after it
"$SCORCH" record -a -F 99 -d 1 -q -o "$TMP/d.pb.gz" 2>"$TMP/err" ||
	fail "record -d 1: $(cat "$TMP/err")"
python3 - "$CHECKS" "$TMP/d.pb.gz" <<'EOF' || fail "pprof duration is not the recording's 1 s"
import sys, time
sys.path.insert(0, sys.argv[1])
from checks import pprof_scalars
pp = pprof_scalars(sys.argv[2])
print(f"pprof duration_nanos {pp.get(10)}, time_nanos {pp.get(9)}")
assert 0.99e9 <= pp.get(10, 0) <= 1.1e9, pp
assert abs(pp.get(9, 0) / 1e9 - time.time()) < 60, pp
EOF

# --- --interval: phases in order, files add up to the summary ---
"$SCORCH" record -v -F 499 --interval 0.25 -o "$TMP/ph.folded" -o "$TMP/ph.pb.gz" \
	-o "$TMP/ph.json" -o "$TMP/ph.html" -o "$TMP/ph.scorch" -- "$PHASE_ONE" 800 "$PHASE_TWO" \
	2>"$TMP/err" || fail "record --interval failed: $(cat "$TMP/err")"
cat "$TMP/err"
ls "$TMP"/ph* | head -n 4
[ -e "$TMP/ph-0001.folded" ] && [ -e "$TMP/ph-0001.pb.gz" ] && [ -e "$TMP/ph-0001.json" ] ||
	fail "no numbered files ph-0001.folded/.pb.gz/.json"
[ ! -e "$TMP/ph.folded" ] || fail "--interval also wrote the unnumbered file"
[ -e "$TMP/ph.html" ] && [ ! -e "$TMP/ph-0001.html" ] || fail "--interval: not one ph.html page"
n=$(ls "$TMP"/ph-*.folded | wc -l)
[ "$(ls "$TMP"/ph-*.pb.gz | wc -l)" -eq "$n" ] && [ "$(ls "$TMP"/ph-*.json | wc -l)" -eq "$n" ] ||
	fail "not one file per output per interval"
[ "$n" -ge 3 ] || fail "only $n intervals in a recording of more than 1.6 s CPU"
last_one=0 first_two=0 sum=0
for i in $(seq 1 "$n"); do
	f=$(printf '%s/ph-%04d.folded' "$TMP" "$i")
	[ -e "$f" ] || fail "missing $f"
	one=$(awk '/first_phase_burn/ { s += $NF } END { print s + 0 }' "$f")
	two=$(awk '/second_phase_burn/ { s += $NF } END { print s + 0 }' "$f")
	sum=$((sum + $(awk '{ s += $NF } END { print s + 0 }' "$f")))
	echo "interval $i: phase one $one, phase two $two"
	[ "$one" -gt 0 ] && last_one=$i
	[ "$two" -gt 0 ] && [ "$first_two" -eq 0 ] && first_two=$i
done
[ "$last_one" -gt 0 ] && [ "$first_two" -gt 0 ] || fail "both phases must appear"
[ "$last_one" -le "$first_two" ] ||
	fail "phase one seen in interval $last_one after phase two in $first_two"
[ "$last_one" -lt "$n" ] && [ "$first_two" -gt 1 ] ||
	fail "early files must be phase one's, late ones phase two's"
counted=$(figure counted "$TMP/err")
if grep -q 'lost: 0 of' "$TMP/err"; then
	[ "$sum" -eq "$counted" ] || fail "intervals hold $sum samples, the summary counted $counted"
fi
python3 - "$CHECKS" "$TMP" "$n" <<'EOF' || fail "interval pprof/speedscope/HTML files"
import sys
sys.path.insert(0, sys.argv[1])
from checks import CheckError, check, load_html, load_speedscope, pprof_top, speedscope_shares
d, n = sys.argv[2], int(sys.argv[3])
try:
    for i in range(1, n + 1):
        folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(f"{d}/ph-{i:04d}.folded"))
        doc = load_speedscope(f"{d}/ph-{i:04d}.json")
        _, w = speedscope_shares(doc, None, 1e9 / 499)
        check(w == folded, f"interval {i}: speedscope {w} != folded {folded}")
        if folded:
            _, out = pprof_top(f"{d}/ph-{i:04d}.pb.gz", ["-sample_index=samples"])
            check(f"of {folded} total" in out, f"interval {i}: pprof != folded {folded}")
    # the page: one file of every interval, each holding that interval's samples
    meta, nodes, intervals = load_html(f"{d}/ph.html")
    check(len(intervals) == n, f"the page has {len(intervals)} intervals, not {n}")
    check(meta["interval"] == 0.25, f"the page's interval is {meta['interval']}")
    check(sum(s for _, _, s in nodes) == sum(sum(iv.values()) for iv in intervals),
          "the page's intervals do not add up to its tree")
    for i in range(1, n + 1):
        folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(f"{d}/ph-{i:04d}.folded"))
        got = sum(intervals[i - 1].values())
        check(got == folded, f"interval {i}: the page holds {got} samples, folded {folded}")
except CheckError as e:
    print(f"FAIL: {e}")
    sys.exit(1)
EOF

# --- the capture of the same recording: report's page has the same intervals ---
[ ! -e "$TMP/ph-0001.scorch" ] || fail "--interval numbered the capture"
"$SCORCH" report "$TMP/ph.scorch" -o "$TMP/rep.html" -o "$TMP/rep.folded" 2>"$TMP/err" ||
	fail "report of the --interval capture failed: $(cat "$TMP/err")"
cat "$TMP/err"
check_folded "$TMP/rep.folded"
python3 - "$CHECKS" "$TMP" "$n" <<'EOF' || fail "report of the --interval capture"
import sys
from collections import Counter
sys.path.insert(0, sys.argv[1])
from checks import CheckError, check, load_html
d, n = sys.argv[2], int(sys.argv[3])


def folded(path):
    c = Counter()
    for line in open(path):
        stack, count = line.rsplit(" ", 1)
        c[stack] += int(count)
    return c


try:
    files = [folded(f"{d}/ph-{i:04d}.folded") for i in range(1, n + 1)]
    meta, nodes, intervals = load_html(f"{d}/rep.html")
    check(len(intervals) == n, f"report's page has {len(intervals)} intervals, record's files {n}")
    check(meta["interval"] == 0.25, f"report's page's interval is {meta['interval']}")
    got = [sum(iv.values()) for iv in intervals]
    want = [sum(f.values()) for f in files]
    print(f"per interval: report's page {got}, record's files {want}")
    check(got == want, "report's page and the numbered folded files disagree")
    check(sum(s for _, _, s in nodes) == sum(want), "the page's tree is not its intervals' sum")
    # the merged whole: the numbered files summed, stack by stack
    rep, merged = folded(f"{d}/rep.folded"), sum(files, Counter())
    print(f"report's folded: {sum(rep.values())} samples in {len(rep)} stacks; "
          f"the files' sum {sum(merged.values())} in {len(merged)}")
    check(rep == merged, "report's folded output is not the sum of the numbered files")
except CheckError as e:
    print(f"FAIL: {e}")
    sys.exit(1)
EOF

# --- a capture alone with --interval: no numbered files, report draws the timeline ---
mkdir "$TMP/alone"
"$SCORCH" record -F 499 --interval 0.25 -o "$TMP/alone/a.scorch" -- "$SPLIT" --seconds 1 \
	>/dev/null 2>"$TMP/err" || fail "record --interval of a capture alone: $(cat "$TMP/err")"
cat "$TMP/err"
grep -q "^scorch: wrote $TMP/alone/a.scorch\$" "$TMP/err" ||
	fail "the summary does not say the capture was written"
grep -Eq '^scorch: [1-9][0-9]* samples in .*: [1-9][0-9]* stacks, ' "$TMP/err" ||
	fail "the summary of a capture alone counts no stacks: $(cat "$TMP/err")"
[ "$(ls "$TMP/alone")" = a.scorch ] || fail "a capture alone wrote $(ls "$TMP/alone")"
"$SCORCH" report -q "$TMP/alone/a.scorch" -o "$TMP/alone.html" -o "$TMP/alone.folded" ||
	fail "report of a capture alone failed"
python3 - "$CHECKS" "$TMP" <<'EOF' || fail "report of a capture alone with --interval"
import sys
sys.path.insert(0, sys.argv[1])
from checks import CheckError, check, load_html
d = sys.argv[2]
try:
    meta, nodes, intervals = load_html(f"{d}/alone.html")
    got = [sum(iv.values()) for iv in intervals]
    total = sum(int(l.rsplit(" ", 1)[1]) for l in open(f"{d}/alone.folded"))
    print(f"a capture alone: {len(intervals)} intervals {got}, folded {total}")
    # 1 s of one busy thread in 0.25 s intervals: four of them at least, each with samples
    check(len(intervals) >= 4, f"{len(intervals)} intervals in a 1 s recording at 0.25 s")
    check(all(got[:4]), f"an interval of the busy workload without samples: {got}")
    check(sum(got) == total, f"the page's intervals hold {sum(got)}, the folded output {total}")
except CheckError as e:
    print(f"FAIL: {e}")
    sys.exit(1)
EOF

# --- a program named "jit", as anonymous executable memory is shown: still symbolized ---
cp "$SPLIT" "$TMP/jit"
"$SCORCH" record -F 999 -q -o "$TMP/jit.folded" -- "$TMP/jit" --seconds 0.5 >/dev/null ||
	fail "record of ./jit failed"
grep -q ';main;run_rounds;burn_a' "$TMP/jit.folded" ||
	fail "./jit lost its symbols: $(head -n 3 "$TMP/jit.folded")"

# --- a full file system: said once with the file's name; the summary still printed ---
FULL="$TMP/full"
mkdir "$FULL"
mount -t tmpfs -o size=4k tmpfs "$FULL" || fail "cannot mount a tmpfs on $FULL"
trap 'umount "$FULL" 2>/dev/null || true; rm -rf "$TMP"; true' EXIT
rc=0
"$SCORCH" record -v -F 999 -o "$FULL/x.svg" -- "$SPLIT" --seconds 0.5 >/dev/null 2>"$TMP/err" ||
	rc=$?
cat "$TMP/err"
[ "$rc" -eq 1 ] || fail "record to a full file system exited $rc, expected 1"
[ "$(grep -c 'No space left on device' "$TMP/err")" -eq 1 ] ||
	fail "ENOSPC not reported exactly once"
grep -q "cannot write $FULL/x.svg: No space left on device" "$TMP/err" ||
	fail "the error does not name $FULL/x.svg"
grep -q 'samples at 999 Hz' "$TMP/err" || fail "no summary after the failed write"
[ -z "$(ls -A "$FULL")" ] || fail "files left on the full file system: $(ls -A "$FULL")"
umount "$FULL"
echo PASS
