#!/bin/bash
# SPDX-License-Identifier: MIT
# Bad input gets one clear line and the documented exit code; SIGINT still writes
# the output; files are replaced atomically.
set -eu
. "$(dirname "$0")/../lib.sh"

expect() { # expect CODE PATTERN -- args...
	local code=$1 pat=$2 rc=0
	shift 3
	"$SCORCH" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ "$rc" -eq "$code" ] || fail "'scorch $*' exited $rc, expected $code: $(cat "$TMP/err")"
	grep -qE "$pat" "$TMP/err" || fail "'scorch $*': stderr lacks /$pat/: $(cat "$TMP/err")"
}

"$SCORCH" record --help | grep -q '^examples:' || fail "--help does not end with examples"
"$SCORCH" --version | grep -q '^scorch ' || fail "--version"
expect 2 "unknown command" -- nosuch
expect 2 "unknown option '--bogus'" -- record --bogus
expect 2 "exclude each other" -- record -U -K
expect 2 "invalid duration 'abc'" -- record -d abc
expect 2 "invalid duration '-1'" -- record -d -1
expect 2 "invalid frequency '0'" -- record -F 0
expect 2 "invalid PID 'x'" -- record -p 1,x
expect 2 "needs a value" -- record -p
expect 2 "cannot be combined" -- record -a -p 1
# empty fields are refused, not read as "1,2"
expect 2 "empty PID in '1,,2'" -- record -p 1,,2
expect 2 "empty TID in '1,'" -- record -t 1,
expect 2 "empty PID in ',1'" -- record -p ,1
expect 2 "quiet and -v/--verbose exclude each other" -- record -q -v -- true
expect 2 "no user stack for --unwind dwarf" -- record -K --unwind dwarf -- true
grep -q '^hint: ' "$TMP/err" || fail "-K --unwind dwarf: no hint"

if [ "$(id -u)" != 0 ]; then
	echo "not root: the rest needs root"
	[ "${CI:-}" = true ] && fail "CI must run as root"
	exit 0
fi
require_bpf

# a PID that cannot exist (above pid_max)
expect 1 "no such process: 2147483647" -- record -p 2147483647
expect 1 "cannot run 'does-not-exist-scorch'" -- record -o "$TMP/x.folded" -- does-not-exist-scorch
[ ! -e "$TMP/x.folded" ] || fail "a failed run left an output file"
ls "$TMP" | grep -q 'tmp\.' && fail "a failed run left a temporary file"
expect 1 "above kernel.perf_event_max_sample_rate" -- record -F 999999 -d 1

# SIGINT and SIGTERM stop a recording and still write it; exit 0. Sync on the
# "sampling" line, which is printed once the BPF program is attached.
stop_with() {
	local sig=$1 out="$TMP/$1.folded" line rc=0
	rm -f "$TMP/err.fifo"
	mkfifo "$TMP/err.fifo"
	"$SCORCH" record -a -o "$out" 2>"$TMP/err.fifo" &
	local rec=$!
	exec 8<"$TMP/err.fifo"
	read -r -t 30 line <&8 || fail "$sig: record did not start"
	case "$line" in *sampling*) ;; *) fail "$sig: unexpected first line: $line" ;; esac
	[ ! -e "$out" ] || fail "$sig: output exists before the recording ends"
	kill -"$sig" "$rec"
	cat <&8 >"$TMP/$sig.err"
	exec 8<&-
	wait "$rec" || rc=$?
	[ "$rc" -eq 0 ] || fail "$sig: exit $rc: $(cat "$TMP/$sig.err")"
	grep -q ' at 99 Hz on ' "$TMP/$sig.err" || fail "$sig: no summary: $(cat "$TMP/$sig.err")"
	[ -f "$out" ] || fail "$sig: no output written"
	# an idle machine may give no sample before the signal: empty is valid then
	[ ! -s "$out" ] || check_folded "$out"
}
stop_with INT
stop_with TERM

# a command that fails: status 4 after the output is written; stopped by -d it is no
# failure
expect 4 "the command exited with status 7" -- record -o "$TMP/c.folded" -- sh -c 'exit 7'
[ -f "$TMP/c.folded" ] || fail "a failed command: no output written"
expect 4 "the command was killed by signal 9" -- record -o "$TMP/c.folded" -- sh -c 'kill -9 $$'
"$SCORCH" record -q -d 0.2 -o "$TMP/c.folded" -- sleep 30 || fail "a command stopped by -d: exit $?"
"$SCORCH" record -q -o "$TMP/c.folded" -- true || fail "a command that succeeds: exit $?"

# an output that cannot be created fails before sampling, not after
expect 1 "cannot create /nonexistent-scorch-dir/x.folded" -- record -d 0.1 -o /nonexistent-scorch-dir/x.folded

# without privileges: a clear error and a hint
if command -v setpriv >/dev/null; then
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SCORCH" record -d 0.1 >/dev/null 2>"$TMP/err" || rc=$?
	[ "$rc" -eq 1 ] || fail "unprivileged: exit $rc"
	grep -q "recording needs root" "$TMP/err" || fail "unprivileged: $(cat "$TMP/err")"
	grep -q "^hint: " "$TMP/err" || fail "unprivileged: no hint"
fi

# devices are written in place, never replaced by a regular file
"$SCORCH" record -a -d 0.1 -q -o /dev/null || fail "-o /dev/null"
[ -c /dev/null ] || fail "-o /dev/null replaced the device"

# folded output to stdout without -o; -q prints nothing
"$SCORCH" record -a -d 0.5 -q >"$TMP/stdout.folded" 2>"$TMP/err" || fail "stdout: $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "-q printed: $(cat "$TMP/err")"

# --timing: start-up and end phases in milliseconds, even with -q; the end phases add
# up to the total (rounding aside), SVG and folded outputs alike
for out in t.svg t.folded; do
	"$SCORCH" record -a -d 0.3 -q --timing -o "$TMP/$out" 2>"$TMP/err" || fail "--timing: $(cat "$TMP/err")"
	grep -Eq '^scorch: timing: start-up [0-9.]+ ms: load [0-9.]+ ms, attach [0-9.]+ ms, kallsyms [0-9.]+ ms$' "$TMP/err" ||
		fail "--timing start-up line: $(cat "$TMP/err")"
	line=$(grep '^scorch: timing: end of recording to output' "$TMP/err") || fail "--timing: no end line: $(cat "$TMP/err")"
	echo "$line"
	echo "$line" | awk -v out="$out" '{
		sub(/.*output /, ""); total = $1 + 0; sum = 0; n = 0
		while (match($0, /[0-9.]+ ms/)) { v = substr($0, RSTART, RLENGTH - 3) + 0; if (n++) sum += v; $0 = substr($0, RSTART + RLENGTH) }
		if (n < 4 || sum < total - 0.5 || sum > total + 0.5) { print "phases " n ", sum " sum " vs total " total; exit 1 }
	}' || fail "--timing: phases do not add up: $line"
done
"$SCORCH" record -a -d 0.1 -q -o "$TMP/n.folded" 2>"$TMP/err" || fail "no --timing"
grep -q timing "$TMP/err" && fail "timing printed without --timing"

# a clean run is quiet: after "sampling", one line of what was captured and one of
# where it went; -v adds the details, but never a line whose counters are all zero
for v in "" -v; do
	"$SCORCH" record $v -F 999 -d 2 -o "$TMP/quiet.folded" -- "$SPLIT" --seconds 0.5 \
		>/dev/null 2>"$TMP/err" || fail "quiet${v}: $(cat "$TMP/err")"
	grep '^scorch: ' "$TMP/err" | grep -v '^scorch: sampling' >"$TMP/after" || true
	[ "$v" ] || {
		[ "$(wc -l <"$TMP/after")" -eq 2 ] || fail "a clean run printed: $(cat "$TMP/err")"
		grep -Eq '^scorch: [1-9][0-9]* samples in [0-9.]+ s at 999 Hz on [0-9]+ CPUs: [1-9][0-9]* stacks, 0\.00% lost$' \
			"$TMP/after" || fail "no line of what was captured: $(cat "$TMP/err")"
	}
	grep -qx "scorch: wrote $TMP/quiet.folded" "$TMP/after" || fail "no line of where it went: $(cat "$TMP/err")"
	# the numbers after the line's subject ("unwind dwarf: ...") all 0: a zero counter line
	# (file names, as in "wrote", are no counters)
	awk '/^scorch: wrote / { next } { sub(/^scorch: [^:0-9]*: /, ""); n = 0; z = 0
		while (match($0, /[0-9]+(\.[0-9]+)?/)) { n++; z += substr($0, RSTART, RLENGTH) + 0 == 0; $0 = substr($0, RSTART + RLENGTH) }
		if (n && z == n) { print; bad = 1 } } END { exit bad }' "$TMP/after" ||
		fail "quiet${v}: a line of zero counters: $(cat "$TMP/after")"
done
# a program seldom sampled (sleep): what -v prints still has no line of zeros
"$SCORCH" record -v -d 0.5 -o "$TMP/quiet.folded" -- sleep 0.2 2>"$TMP/err" || fail "sleep: $(cat "$TMP/err")"
grep '^scorch: ' "$TMP/err" | grep -Ev '^scorch: (sampling|wrote)' | grep -v ' samples at 99 Hz ' |
	awk '/^scorch: wrote / { next } { sub(/^scorch: [^:0-9]*: /, ""); n = 0; z = 0
		while (match($0, /[0-9]+(\.[0-9]+)?/)) { n++; z += substr($0, RSTART, RLENGTH) + 0 == 0; $0 = substr($0, RSTART + RLENGTH) }
		if (n && z == n) { print; bad = 1 } } END { exit bad }' ||
	fail "zero counters printed for a program seldom sampled: $(grep -v '^debug\|^libbpf' "$TMP/err")"
echo PASS
