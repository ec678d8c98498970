#!/bin/bash
# SPDX-License-Identifier: MIT
# Every output says what its recording was (summary__describe()): a short recording of
# the split workload (-p, -d 1.5, -F 199) to SVG, HTML, pprof and speedscope, each
# checked for the mode, the length, the rate and the target (its PID), the host and
# the totals: the SVG's and page's subtitle, pprof's comment (go tool pprof -comments)
# and its time and duration, speedscope's name; and no output holds the path it was
# written to. --title/--subtitle given win; a command as the target is named; a
# capture reported later says the same as the recording did.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf
CHECKS="$(dirname "$0")/../export"
HOST=$(uname -n)

# want FILE TEXT WHAT: TEXT (a description) says mode, length, rate, target, host
want() {
	local text=$2 what=$3
	echo "$what: $text"
	case "$text" in
	"cpu at 199 Hz, PID $BG_PID (split), 1.5"[0-9]" s from "*" UTC on $HOST: "*" samples, "*"% lost") ;;
	*) fail "$what does not describe the recording: '$text'" ;;
	esac
}

start_ready "$SPLIT" --seconds 8
"$SCORCH" record -q -F 199 -p "$BG_PID" -d 1.5 -o "$TMP/d.svg" -o "$TMP/d.html" \
	-o "$TMP/d.pb.gz" -o "$TMP/d.json" -o "$TMP/d.scorch" 2>"$TMP/err" ||
	fail "record failed: $(cat "$TMP/err")"
kill "$BG_PID" 2>/dev/null || true
wait "$BG_PID" 2>/dev/null || true

svg=$(python3 - "$TMP/d.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print("".join(e.text or "" for e in root.iter() if e.get("id") == "subtitle"))
PY
)
want "$TMP/d.svg" "$svg" "SVG subtitle"
page=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from checks import load_html
print(load_html(sys.argv[2])[0]["subtitle"])' "$CHECKS" "$TMP/d.html")
want "$TMP/d.html" "$page" "HTML subtitle"
json=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$TMP/d.json")
want "$TMP/d.json" "$json" "speedscope name"
for f in d.svg d.html d.pb.gz d.json; do
	! grep -aq "$TMP" "$TMP/$f" || fail "$f holds the directory it was written to"
done
if command -v go >/dev/null; then
	export HOME="$TMP" GOCACHE="$TMP/gocache" GOPATH="$TMP/go"
	comment=$(go tool pprof -comments "$TMP/d.pb.gz" 2>/dev/null)
	want "$TMP/d.pb.gz" "$comment" "pprof comment"
	raw=$(go tool pprof -raw "$TMP/d.pb.gz" 2>/dev/null)
	grep -q '^Duration: 1\.5' <<<"$raw" || fail "pprof duration: $(grep Duration <<<"$raw")"
	grep -q "^Time: $(date -u +%Y-%m-%d)" <<<"$raw" ||
		[ "$(date -u +%H%M)" = 0000 ] || fail "pprof time: $(grep '^Time' <<<"$raw")"
elif [ "${CI:-}" = true ]; then
	fail "go (golang-go) is missing under CI"
fi

# a capture reported later says the same
"$SCORCH" report -q "$TMP/d.scorch" -o "$TMP/r.svg" 2>/dev/null || fail "report failed"
grep -qF ">$svg<" "$TMP/r.svg" || fail "the report's subtitle differs: $(grep -o '<text id="subtitle"[^<]*' "$TMP/r.svg")"
echo "report: the same subtitle"

# the user's title and subtitle win
"$SCORCH" record -q -F 199 -d 0.3 --title 'My title' --subtitle 'My subtitle' \
	-o "$TMP/u.svg" -- "$SPLIT" --seconds 1 2>"$TMP/err" || fail "record failed: $(cat "$TMP/err")"
grep -q '>My title<' "$TMP/u.svg" && grep -q '>My subtitle<' "$TMP/u.svg" ||
	fail "--title/--subtitle were not kept"
# a command: named as given
"$SCORCH" record -q -F 199 -o "$TMP/c.json" -- "$SPLIT" --seconds 0.3 2>"$TMP/err" ||
	fail "record failed: $(cat "$TMP/err")"
name=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$TMP/c.json")
echo "command: $name"
case "$name" in
"cpu at 199 Hz, command: $SPLIT --seconds 0.3, 0."*" s from "*) ;;
*) fail "the command is not named: '$name'" ;;
esac
echo PASS
