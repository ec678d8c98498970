#!/bin/bash
# SPDX-License-Identifier: MIT
# --unwind and --stack-size: bad values are one-line errors with a hint and exit 2.
set -eu
. "$(dirname "$0")/../lib.sh"

expect_usage() {
	local rc=0
	"$SCORCH" record "$@" -d 0.1 -o "$TMP/x" 2>"$TMP/err" || rc=$?
	[ "$rc" = 2 ] || fail "'record $*' exited $rc, not 2"
	grep -q "^scorch: " "$TMP/err" || fail "'record $*': no error line: $(cat "$TMP/err")"
}
expect_usage --unwind frames
grep -q "^hint: use --unwind auto" "$TMP/err" || fail "no hint for a bad --unwind"
expect_usage --unwind dwarf --stack-size 100
expect_usage --unwind dwarf --stack-size 1001
expect_usage --unwind dwarf --stack-size 70000
expect_usage --unwind fp --stack-size 4096
expect_usage --mode offcpu --stack-size 4096
grep -q "^hint: .*--unwind dwarf" "$TMP/err" || fail "no hint for --stack-size off CPU under auto"
expect_usage --unwind fp --ring-size 8192
expect_usage --unwind dwarf --ring-size 5000
grep -q "^hint: " "$TMP/err" || fail "no hint for a bad --ring-size"
"$SCORCH" record --help | grep -q -- "--unwind dwarf" || fail "--help does not document --unwind"
echo PASS
