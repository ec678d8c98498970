#!/bin/bash
# SPDX-License-Identifier: MIT
# Captures end to end: record the known workload (50/30/20 % in burn_a/b/c) to a
# .scorch, name it with `scorch report` (shares within 3 points, main reached, the
# same bytes as the folded output of the same recording, pprof from report); a
# replaced binary (another build-id) is refused and counted, never misnamed; --symfs
# finds a moved binary; an off-CPU capture keeps its mode; damaged captures give a
# one-line error, a hint and exit 1.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# shares FOLDED: checks burn_a/b/c within 3 points of 50/30/20 and >= 97 % reaching main
shares() {
	local total

	total=$(comm_total "$1" split)
	[ "$total" -ge 1000 ] || fail "$1: too few samples of the workload ($total)"
	split_shares "$1" split 97 || fail "the report of $1 is not the known profile"
}

# The workload runs from a copy we can replace and move.
mkdir -p "$TMP/bin"
cp "$SPLIT" "$TMP/bin/split"
"$SCORCH" record -v -F 999 -o "$TMP/x.scorch" -o "$TMP/direct.folded" -- "$TMP/bin/split" --seconds 4 \
	2>"$TMP/rec.err" ||
	fail "record failed: $(cat "$TMP/rec.err")"
cat "$TMP/rec.err"
grep -q "^scorch: capture: .* counts" "$TMP/rec.err" || fail "no capture summary line"
head -c 8 "$TMP/x.scorch" | grep -q SCORCHCP || fail "not a capture file"

"$SCORCH" report -v "$TMP/x.scorch" -o "$TMP/x.folded" 2>"$TMP/rep.err" ||
	fail "report failed: $(cat "$TMP/rep.err")"
cat "$TMP/rep.err"
check_folded "$TMP/x.folded"
shares "$TMP/x.folded"
grep -q "refused" "$TMP/rep.err" && grep -q " 0 refused" "$TMP/rep.err" ||
	fail "report summary lacks the file counts"
# the round trip: one recording written as a capture and as folded stacks; the
# report of the capture is the same folded stacks, byte for byte
cmp "$TMP/direct.folded" "$TMP/x.folded" ||
	fail "report of the capture differs from the folded stacks of the same recording: $(diff "$TMP/direct.folded" "$TMP/x.folded" | head -5)"
# and to pprof (go tool pprof names the hot function)
"$SCORCH" report "$TMP/x.scorch" -o "$TMP/x.pb.gz" -q || fail "report to pprof failed"
gzip -t "$TMP/x.pb.gz" || fail "report's pprof output is not gzip"
if command -v go >/dev/null; then
	HOME="$TMP" GOCACHE="$TMP/gocache" go tool pprof -top "$TMP/x.pb.gz" >"$TMP/top" 2>&1 ||
		fail "go tool pprof -top on report's output: $(cat "$TMP/top")"
	grep -q "burn_a" "$TMP/top" || fail "go tool pprof -top does not list burn_a: $(head -20 "$TMP/top")"
elif [ "${CI:-}" = true ]; then
	fail "go is not installed (scripts/setup.sh installs golang-go)"
fi
# the same capture, to SVG, with flame graph options
"$SCORCH" report "$TMP/x.scorch" -o "$TMP/x.svg" --title "capture test" -q ||
	fail "report to SVG failed"
grep -q "capture test" "$TMP/x.svg" && grep -q "burn_a" "$TMP/x.svg" || fail "SVG lacks the frames"
# report is deterministic: the same bytes twice
"$SCORCH" report "$TMP/x.scorch" -q >"$TMP/again.folded"
cmp "$TMP/x.folded" "$TMP/again.folded" || fail "two reports of one capture differ"

# --symfs: the binary moved away; without it, not found and not named
mkdir -p "$TMP/sysroot$TMP/bin"
mv "$TMP/bin/split" "$TMP/sysroot$TMP/bin/split"
"$SCORCH" report "$TMP/x.scorch" -o "$TMP/moved.folded" 2>"$TMP/moved.err" ||
	fail "report without the binary failed: $(cat "$TMP/moved.err")"
grep -q " 1 not found" "$TMP/moved.err" || fail "a missing binary is not counted: $(cat "$TMP/moved.err")"
grep -q "^hint: .*--symfs" "$TMP/moved.err" || fail "no --symfs hint"
! grep -q "burn_a" "$TMP/moved.folded" || fail "frames named without their binary"
grep -q ";\[split\]" "$TMP/moved.folded" || fail "missing binary's frames are not [split]"
"$SCORCH" report "$TMP/x.scorch" --symfs "$TMP/sysroot" -o "$TMP/symfs.folded" 2>"$TMP/symfs.err" ||
	fail "report --symfs failed: $(cat "$TMP/symfs.err")"
cmp "$TMP/x.folded" "$TMP/symfs.folded" || fail "--symfs gives another profile than the original binary"
echo "--symfs: found the moved binary, same folded output"

# a binary replaced by another build (another build-id): refused, counted, never named
cp "$BLOCK" "$TMP/bin/split"
"$SCORCH" report "$TMP/x.scorch" -o "$TMP/replaced.folded" 2>"$TMP/replaced.err" ||
	fail "report with a replaced binary failed: $(cat "$TMP/replaced.err")"
cat "$TMP/replaced.err"
grep -q "^scorch: symbolize: $TMP/bin/split: build-id .* not used" "$TMP/replaced.err" ||
	fail "no warning about the replaced binary"
grep -q " 1 refused (another build-id)" "$TMP/replaced.err" || fail "the refusal is not counted"
! grep -qE ";(burn_[abc]|main|run_rounds|wait_[a-z]*)(;| )" "$TMP/replaced.folded" || fail "frames named from the wrong binary"
grep -q ";\[split\]" "$TMP/replaced.folded" || fail "refused binary's frames are not [split]"
rm -f "$TMP/bin/split"

# off-CPU: the mode travels with the capture (microseconds, [off-cpu]-free, block's functions)
"$SCORCH" record --mode offcpu -o "$TMP/off.scorch" -- "$BLOCK" --seconds 1 >/dev/null \
	2>"$TMP/off.err" || fail "offcpu record failed: $(cat "$TMP/off.err")"
"$SCORCH" report -v "$TMP/off.scorch" -o "$TMP/off.folded" 2>"$TMP/offrep.err" ||
	fail "offcpu report failed: $(cat "$TMP/offrep.err")"
check_folded "$TMP/off.folded"
grep -q "switches off CPU" "$TMP/offrep.err" || fail "offcpu summary missing"
us=$(frame_total "$TMP/off.folded" block wait_sleep)
echo "offcpu capture: wait_sleep $us us"
[ "$us" -ge 200000 ] || fail "offcpu capture lost the blocked time ($us us in wait_sleep)"

# damaged captures: one line naming the file, a hint, exit 1, never a crash
bad() {
	local what="$1" file="$2" rc=0
	"$SCORCH" report "$file" -o "$TMP/bad.folded" 2>"$TMP/bad.err" || rc=$?
	[ "$rc" = 1 ] || fail "$what: exit status $rc, want 1: $(cat "$TMP/bad.err")"
	[ "$(grep -c '^scorch: ' "$TMP/bad.err")" = 1 ] || fail "$what: not one error line: $(cat "$TMP/bad.err")"
	grep -q "^hint: " "$TMP/bad.err" || fail "$what: no hint"
	[ ! -e "$TMP/bad.folded" ] || fail "$what: an output was written"
	echo "$what: $(head -n 1 "$TMP/bad.err")"
}
size=$(stat -c %s "$TMP/x.scorch")
for cut in 0 7 16 17 40 $((size / 2)) $((size - 1)); do
	head -c "$cut" "$TMP/x.scorch" >"$TMP/cut.scorch"
	bad "cut at $cut of $size" "$TMP/cut.scorch"
done
cp "$TMP/x.scorch" "$TMP/flip.scorch"
# the byte's complement: writing a fixed value left the file intact when it held that value
byte=$(od -An -tu1 -j $((size / 2)) -N1 "$TMP/x.scorch" | tr -d ' ')
printf "\\$(printf '%03o' $((255 - byte)))" |
	dd of="$TMP/flip.scorch" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
cmp -s "$TMP/x.scorch" "$TMP/flip.scorch" && fail "the overwritten byte did not change"
bad "a byte overwritten" "$TMP/flip.scorch"
printf 'NOTSCORCH-------' >"$TMP/magic.scorch"
bad "bad magic" "$TMP/magic.scorch"
{ printf 'SCORCHCP\x09\x00\x00\x00\x01\x00\x00\x00'; tail -c +17 "$TMP/x.scorch"; } >"$TMP/future.scorch"
bad "future version" "$TMP/future.scorch"
grep -q "version 9.x" "$TMP/bad.err" || fail "future version not named"
bad "no such file" "$TMP/nonexistent.scorch"
echo PASS
