#!/bin/bash
# SPDX-License-Identifier: MIT
# Manual pages and exit codes: every page renders without warnings and has the
# required sections; every command has a page; every long option of a command's
# --help is in its page (drift); --help and the pages state the exit codes, and
# the cheap ones are checked for real; cmake --install puts the pages in
# share/man/man1. Needs no privilege.
set -eu
. "$(dirname "$0")/../lib.sh"
MANDIR="$(cd "$(dirname "$0")/../../docs/man" && pwd)"

sections="NAME SYNOPSIS DESCRIPTION OPTIONS EXIT STATUS OVERHEAD EXAMPLES SEE ALSO"
for page in "$MANDIR"/*.1; do
	LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>"$TMP/groff.err" || fail "groff failed on $page"
	[ ! -s "$TMP/groff.err" ] || fail "groff warns on $(basename "$page"): $(cat "$TMP/groff.err")"
	if command -v man >/dev/null; then
		MANWIDTH=80 man -l "$page" >"$TMP/page.txt" 2>"$TMP/man.err" || fail "man -l $page failed"
		[ ! -s "$TMP/man.err" ] || fail "man -l warns on $(basename "$page"): $(cat "$TMP/man.err")"
	fi
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" OVERHEAD EXAMPLES "SEE ALSO"; do
		grep -qx "\.SH $s" "$page" || fail "$(basename "$page") has no $s section"
	done
done
: "$sections"

# the commands of 'scorch --help', each with its page
cmds=$("$SCORCH" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ -n "$cmds" ] || fail "no commands in 'scorch --help'"
[ -f "$MANDIR/scorch.1" ] || fail "no scorch.1"
for c in $cmds; do
	page="$MANDIR/scorch-$c.1"
	[ -f "$page" ] || fail "command '$c' has no manual page docs/man/scorch-$c.1"
	grep -q "fBscorch\\\\-$c\\\\fR(1)" "$MANDIR/scorch.1" || fail "scorch.1 does not list scorch-$c(1)"
	# every long option of --help appears in the page (roff writes - as \-)
	"$SCORCH" "$c" --help >"$TMP/help.txt"
	sed 's/\\-/-/g' "$page" >"$TMP/page.src"
	for o in $(grep -oE '(^|[ ,(])--[a-z][a-z-]*' "$TMP/help.txt" | sed 's/^[ ,(]//' | sort -u); do
		grep -qE -- "$o([^a-z-]|$)" "$TMP/page.src" ||
			fail "scorch $c --help has $o, scorch-$c.1 does not"
	done
	# exit codes: --help states them, the page's EXIT STATUS has the same ones
	line=$(awk '/^exit status:/ { on = 1 } on { printf "%s ", $0 } on && /^$/ { exit }' "$TMP/help.txt")
	[ -n "$line" ] || fail "scorch $c --help states no exit status"
	for code in 0 1 2; do
		echo "$line" | grep -qE "(^|[ ,])$code " || fail "scorch $c --help: exit status $code missing: $line"
	done
	exits=$(awk '/^\.SH EXIT STATUS/ { on = 1; next } /^\.SH/ { on = 0 } on && /^\.B [0-9]$/ { print $2 }' "$page" | tr '\n' ' ')
	help_codes=$(echo "$line" | grep -oE '(^|[ ,:])[0-4] ' | tr -dc '0-4\n' | sort -u | tr '\n' ' ')
	[ "$exits" = "$help_codes" ] || fail "scorch-$c.1 exit codes '$exits' differ from --help's '$help_codes'"
done
# the README's list of pages names every command's
ROOT="$(cd "$MANDIR/../.." && pwd)"
for c in $cmds; do
	grep -q "\`scorch-$c(1)\`" "$ROOT/README.md" || fail "README.md does not list scorch-$c(1)"
done
# a stack cut at a depth limit keeps its leaf end: [truncated] is its root (engine/fold.c)
"$SCORCH" record --help >"$TMP/help.txt"
for f in "$ROOT/README.md" "$ROOT"/docs/*.md "$MANDIR"/*.1 "$TMP/help.txt"; do
	! tr '\n' ' ' <"$f" | grep -qiE '(ends?|end up) +in +.?\[truncated\]' ||
		fail "$(basename "$f") says cut stacks end in [truncated]: they begin with it"
done
"$SCORCH" --help | grep -q '^exit status: 0 success, 1 error, 2 usage error, 3 partial' ||
	fail "scorch --help does not state the exit codes"

# the codes, for real where it is cheap (3: tests/record/limits.sh, 1 of check:
# tests/record/check.sh)
code() { # code EXPECTED args...
	local want=$1 rc=0
	shift
	"$SCORCH" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	[ "$rc" -eq "$want" ] || fail "'scorch $*' exited $rc, expected $want: $(cat "$TMP/err")"
	if [ "$want" -ne 0 ]; then
		grep -qv '^hint: ' "$TMP/err" || fail "'scorch $*': no error line"
		grep -q '^hint: ' "$TMP/err" || fail "'scorch $*': no hint line: $(cat "$TMP/err")"
	fi
}
for c in $cmds; do
	code 2 "$c" --no-such-option
done
code 2 no-such-command
printf 'main;work 3\nmain;idle 1\n' >"$TMP/a.folded"
code 0 flamegraph "$TMP/a.folded" -o "$TMP/a.svg"
code 0 diff "$TMP/a.folded" "$TMP/a.folded" -o "$TMP/d.folded"
code 0 symbolize --elf "$SCORCH" 0x0
code 1 flamegraph "$TMP/missing.folded" -o "$TMP/m.svg"
code 1 diff "$TMP/a.folded" "$TMP/missing.folded"
code 1 symbolize --elf "$TMP/missing" 0x1000
code 1 collapse "$TMP/missing.txt"
# an -o name or --format the command cannot write: 2, before anything is read or
# recorded, naming the file, the hint listing what the command writes
# (tests/{diff,collapse,flamegraph} check their commands' in detail)
writes() { # writes CMD: the hint that lists what CMD writes
	grep -q "^hint: scorch $1 writes " "$TMP/err" || fail "scorch $1: no list of formats: $(cat "$TMP/err")"
}
code 2 record -o "$TMP/r.png" -p 999999999 -d 1
grep -q "cannot write $TMP/r.png" "$TMP/err" || fail "record -o r.png: $(cat "$TMP/err")"
writes record
code 2 record -o "$TMP/r.folded.gz" -p 999999999 -d 1
writes record
code 2 report "$TMP/missing.scorch" -o "$TMP/r.scorch"
grep -q "cannot write $TMP/r.scorch" "$TMP/err" || fail "report -o r.scorch: $(cat "$TMP/err")"
writes report
code 2 report "$TMP/missing.scorch" -o "$TMP/r.pdf"
writes report
code 2 report "$TMP/missing.scorch" --format capture
writes report
[ ! -e "$TMP/r.png" ] && [ ! -e "$TMP/r.scorch" ] && [ ! -e "$TMP/r.pdf" ] ||
	fail "a refused output was written"

# cmake --install: the pages land in share/man/man1
if [ -n "${BUILD_DIR:-}" ]; then
	cmake --install "$BUILD_DIR" --prefix "$TMP/inst" >/dev/null || fail "cmake --install failed"
	for page in "$MANDIR"/*.1; do
		cmp -s "$page" "$TMP/inst/share/man/man1/$(basename "$page")" ||
			fail "$(basename "$page") not installed in share/man/man1"
	done
	MANPATH="$TMP/inst/share/man" man -w scorch-record >/dev/null 2>&1 ||
		fail "man does not find scorch-record in the installed tree"
fi
echo PASS
