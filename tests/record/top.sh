#!/bin/bash
# SPDX-License-Identifier: MIT
# scorch top on the 50/30/20 workload (tests/workloads/split.c):
#  1. on a terminal (a pane of a tmux server of the test's own): once the header says
#     4 s have passed, the pane lists burn_a, burn_b, burn_c in that order with burn_a's
#     self share within 8 points of 50 %; the stacks view (k) shows them whole; q ends it
#     with status 0 within 1 s, the terminal back in canonical mode with echo;
#  2. through a pipe: -d 3 --refresh 1 prints >= 2 refreshes whose lines parse (the
#     format of scorch-top(1)), each listing burn_a, burn_b, burn_c in that order;
#  3. memory: at --refresh 0.1 and 999 Hz on stacks that keep changing (split --mix 16:
#     a new stack every round, the old ones aged out of the kernel's maps and the
#     tables), RSS after 50 s within 5 % of RSS after 20 s (record --interval's
#     grows as much until about 15 s, its caches and the allocator's warming up); not
#     under AddressSanitizer, whose quarantine of freed blocks grows RSS by design.
# No fixed sleep synchronises anything: every wait polls with a deadline.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf
if ! command -v tmux >/dev/null; then
	[ "${CI:-}" != true ] || fail "no tmux under CI (scripts/setup.sh --test installs it)"
	echo "SKIP: no tmux (scripts/setup.sh --test installs it)"
	exit 77
fi

# poll CMD...: true once CMD succeeds, false at the deadline $DEADLINE (date +%s.%N)
now() { date +%s.%N; }
before() { awk -v d="$1" -v n="$(now)" 'BEGIN { exit !(n < d) }'; }
poll() {
	while ! "$@"; do
		before "$DEADLINE" || return 1
		sleep 0.05
	done
}
deadline() { DEADLINE=$(awk -v n="$(now)" -v s="$1" 'BEGIN { printf "%.3f", n + s }'); }

# -F within what the kernel allows now (others may have lowered it)
rate() { local m; m=$(sysctl -n kernel.perf_event_max_sample_rate); echo $(($1 < m ? $1 : m)); }

start_ready "$SPLIT" --seconds 120
SPLIT_PID=$BG_PID

# ---- 1. the screen ----
unset TMUX
tm() { tmux -S "$TMP/tmux.sock" "$@"; }
trap 'tm kill-server 2>/dev/null || true; rm -rf "$TMP"; kill "$SPLIT_PID" 2>/dev/null || true' EXIT
tm new-session -d -s top -x 120 -y 30 \
	"$SCORCH top -p $SPLIT_PID -F $(rate 499) 2>$TMP/screen.err; echo \$? >$TMP/screen.rc; stty -a >$TMP/stty.txt; exec sleep 600"
pane_pid=$(tm display -p -t top '#{pane_pid}')
scorch_pid() { pgrep -P "$pane_pid" -x scorch; }
deadline 10
poll scorch_pid >/dev/null || fail "scorch top did not start in the pane"
TOP_PID=$(scorch_pid)

# the header's "- N s, 2 CPUs": the seconds sampled so far
elapsed() { tm capture-pane -p -t top >"$TMP/pane.txt" && sed -n 's/.* - \([0-9]*\) s, [0-9]* CPUs.*/\1/p' "$TMP/pane.txt" | head -n 1; }
shown_4s() { local e; e=$(elapsed); [ -n "$e" ] && [ "$e" -ge 4 ]; }
deadline 30
poll shown_4s || fail "no refresh 4 s in after 30 s: $(cat "$TMP/pane.txt" "$TMP/screen.err" 2>/dev/null)"
echo "the pane after 4 s:"
sed 's/^/  /' "$TMP/pane.txt"
# rows "  50.1%   50.1%  split            burn_a": the functions in order, burn_a's self
order=$(awk '$NF ~ /^burn_[abc]$/ { printf "%s ", $NF }' "$TMP/pane.txt")
[ "$order" = "burn_a burn_b burn_c " ] || fail "the pane lists '$order', not burn_a burn_b burn_c"
a=$(awk '$NF == "burn_a" { sub(/%/, "", $1); print $1; exit }' "$TMP/pane.txt")
awk -v a="$a" 'BEGIN { exit !(a >= 42 && a <= 58) }' || fail "burn_a's self share is $a %, not 50 +- 8"

# the stacks view: each burn whole, from main
tm send-keys -t top k
stacks_shown() { tm capture-pane -p -t top >"$TMP/pane.txt" && grep -q 'run_rounds;burn_a$' "$TMP/pane.txt"; }
deadline 5
poll stacks_shown || fail "k shows no stack ending in run_rounds;burn_a: $(cat "$TMP/pane.txt")"

# q: the process gone within 1 s, status 0, the terminal as it was
start=$(now)
tm send-keys -t top q
gone() { ! kill -0 "$TOP_PID" 2>/dev/null; }
deadline 1
poll gone || fail "scorch top still runs 1 s after q"
took=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
echo "q: exited in $took s"
deadline 5
poll test -s "$TMP/stty.txt" || fail "the pane's shell did not go on after scorch top"
[ "$(cat "$TMP/screen.rc")" = 0 ] || fail "scorch top exited $(cat "$TMP/screen.rc") after q: $(cat "$TMP/screen.err")"
grep -qw -- '-icanon' "$TMP/stty.txt" && fail "the terminal was left in raw mode"
grep -qw -- '-echo' "$TMP/stty.txt" && fail "the terminal was left without echo"
tm kill-server

# ---- 2. text through a pipe ----
F=$(rate 499)
"$SCORCH" top -p "$SPLIT_PID" -F "$F" -d 3 --refresh 1 2>"$TMP/text.err" | cat >"$TMP/text.txt" ||
	fail "scorch top | cat failed: $(cat "$TMP/text.err")"
awk -F'\t' -v F="$F" '
	BEGIN { hdr = "^# refresh=[0-9]+ elapsed=[0-9.]+ seconds=[0-9.]+ target=pid:[0-9]+ mode=cpu freq=" F " rate=[0-9]+ samples_per_s=[0-9.]+ switches_per_s=[0-9.]+ lost_pct=[0-9.]+ shares=decayed half_life=2 sort=self$" }
	/^# / { if ($0 !~ hdr) { print "bad header: " $0; bad = 1 } n++; order = ""; next }
	/^$/ { if (order != "burn_a burn_b burn_c ") { print "refresh " n " lists '\''" order "'\''"; bad = 1 } next }
	NF != 4 || $1 !~ /^[0-9]+\.[0-9][0-9]$/ || $2 !~ /^[0-9]+\.[0-9][0-9]$/ || $1 + 0 > $2 + 0.001 {
		print "bad row: " $0; bad = 1; next }
	$4 ~ /^burn_[abc]$/ { order = order $4 " " }
	END { if (n < 2) { print "only " n " refreshes"; bad = 1 } exit bad }
' "$TMP/text.txt" || fail "the text refreshes do not parse (above)"
echo "text: $(grep -c '^# ' "$TMP/text.txt") refreshes, e.g."
sed -n '/^# refresh=2 /,/^$/p' "$TMP/text.txt" | head -n 5 | sed 's/^/  /'
kill "$SPLIT_PID" 2>/dev/null || true

# ---- 3. memory at a high refresh rate, stacks churning ----
start_ready "$SPLIT" --seconds 120 --mix 16
MIX_PID=$BG_PID
trap 'rm -rf "$TMP"; kill "$MIX_PID" "${MEM_PID:-}" 2>/dev/null || true' EXIT
"$SCORCH" top -p "$MIX_PID" -F "$(rate 999)" --refresh 0.1 -b -n 50 -d 90 >"$TMP/mem.txt" 2>"$TMP/mem.err" &
MEM_PID=$!
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$MEM_PID/status"; }
refreshes() { grep -c '^# refresh=' "$TMP/mem.txt" || true; }
# by the top's own clock: its refresh count (10 a second)
at() { local want=$(($1 * 10)); [ "$(refreshes)" -ge "$want" ]; }
deadline 40
poll at 20 || fail "no 200 refreshes in 40 s: $(cat "$TMP/mem.err")"
r20=$(rss)
deadline 60
poll at 50 || fail "no 500 refreshes 60 s after the 200th: $(cat "$TMP/mem.err")"
r50=$(rss)
kill -TERM "$MEM_PID"
wait "$MEM_PID" || fail "scorch top (memory) failed: $(cat "$TMP/mem.err")"
MEM_PID=
# under AddressSanitizer (build-asan/) RSS holds its quarantine of freed blocks (up to
# 256 MiB) and shadow memory: the bound is checked in the normal build only
asan=0
ldd "$SCORCH" 2>/dev/null | grep -q libasan && asan=1
awk -v a="$r20" -v b="$r50" -v asan=$asan 'BEGIN {
	g = 100 * (b - a) / a
	printf "memory: RSS %.1f MiB after 20 s, %.1f MiB after 50 s (%+.1f%%)%s\n", a / 1024,
		b / 1024, g, asan ? " (AddressSanitizer: not checked)" : ""
	exit !(asan || (g <= 5 && g >= -50))
}' || fail "RSS grew by more than 5 % from 20 s to 50 s"
grep -q 'target=pid:' "$TMP/mem.txt" || fail "no refresh in the memory run"
echo PASS
