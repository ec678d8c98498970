#!/bin/bash
# SPDX-License-Identifier: MIT
# Bash completion (docs/completion/scorch.bash) against the commands themselves: every
# command of 'scorch --help' is completed, every option each command's --help defines
# is completed and nothing else is (no drift either way), each value --format
# completes is one the command takes, and cmake --install puts the file in
# share/bash-completion/completions/scorch. Needs no privilege.
set -eu
. "$(dirname "$0")/../lib.sh"
FILE="$(cd "$(dirname "$0")/../../docs/completion" && pwd)/scorch.bash"

bash -n "$FILE" || fail "scorch.bash does not parse"
# complete WORD...: what completing the last WORD offers, one per line
complete_words() {
	bash -c '
		. "$0"
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		_scorch
		printf "%s\n" "${COMPREPLY[@]}"' "$FILE" "$@" 2>"$TMP/comp.err"
	[ ! -s "$TMP/comp.err" ] || fail "completing '$*' printed: $(cat "$TMP/comp.err")"
}

cmds=$("$SCORCH" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ -n "$cmds" ] || fail "no commands in 'scorch --help'"
complete_words scorch "" | sort >"$TMP/got"
for c in $cmds --help --version; do
	grep -qxF -- "$c" "$TMP/got" || fail "'scorch <TAB>' does not offer $c"
done
for c in $cmds; do
	# the options --help defines: "  -x, --name ..." or "      --name ..." lines
	"$SCORCH" "$c" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' |
		grep -oE -- '--[a-z][a-z-]*' | sort -u >"$TMP/help"
	"$SCORCH" "$c" --help | grep -oE '^ +-[a-zA-Z][ ,]' | grep -oE -- '-[a-zA-Z]' |
		sort -u >>"$TMP/help"
	sort -u -o "$TMP/help" "$TMP/help"
	{ complete_words scorch "$c" --; complete_words scorch "$c" -; } | sort -u >"$TMP/got"
	missing=$(comm -23 "$TMP/help" "$TMP/got" | tr '\n' ' ')
	[ -z "$missing" ] || fail "scorch $c --help has options bash does not complete: $missing"
	extra=$(comm -13 "$TMP/help" "$TMP/got" | tr '\n' ' ')
	[ -z "$extra" ] || fail "bash completes options scorch $c --help does not have: $extra"
done

# --format: each value completed is one the command takes (not a usage error, 2)
printf 'main;x 1\n' >"$TMP/a.folded"
takes() { # takes CMD FORMAT ARGS...: runs it, fails on exit status 2
	local rc=0 c=$1 f=$2
	shift 2
	"$SCORCH" "$c" --format "$f" "$@" >/dev/null 2>"$TMP/err" </dev/null || rc=$?
	[ "$rc" -ne 2 ] || fail "bash completes 'scorch $c --format $f', which refuses it: $(cat "$TMP/err")"
}
for c in $cmds; do
	for f in $(complete_words scorch "$c" --format ""); do
		case $c in
		record) takes record "$f" -p 999999999 -d 1 -o "$TMP/r.out" ;;
		report) takes report "$f" "$TMP/missing.scorch" -o "$TMP/r.out" ;;
		flamegraph) takes flamegraph "$f" "$TMP/a.folded" -o "$TMP/f.out" ;;
		diff) takes diff "$f" "$TMP/a.folded" "$TMP/a.folded" -o "$TMP/d.out" ;;
		collapse) takes collapse "$f" "$TMP/missing.txt" ;;
		*) fail "bash completes --format for scorch $c" ;;
		esac
	done
done
# record's modes: those its --help lists
modes=$("$SCORCH" record --help | sed -n 's/^ *--mode \([a-z]*\) .*/\1/p' | sort | tr '\n' ' ')
[ -n "$modes" ] || fail "record --help lists no modes"
[ "$(complete_words scorch record --mode "" | sort | tr '\n' ' ')" = "$modes" ] ||
	fail "record --mode completes $(complete_words scorch record --mode "" | tr '\n' ' '), --help has $modes"
complete_words scorch record --output = "" >/dev/null

# cmake --install: share/bash-completion/completions/scorch
if [ -n "${BUILD_DIR:-}" ]; then
	cmake --install "$BUILD_DIR" --prefix "$TMP/inst" >/dev/null || fail "cmake --install failed"
	cmp -s "$FILE" "$TMP/inst/share/bash-completion/completions/scorch" ||
		fail "the completion is not installed as share/bash-completion/completions/scorch"
fi
echo PASS
