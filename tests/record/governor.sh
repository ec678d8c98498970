#!/bin/bash
# SPDX-License-Identifier: MIT
# The cost governor (--max-overhead, 5 % of the CPUs by default). At -F 100000 on every
# CPU, the kernel walk's run time alone is 10 to 20 % of the CPUs: scorch lowers the
# rate, says so once, and weighs each sample by the periods it stands for, so that
# shares and CPU time stay true; a CPU job running meanwhile keeps most of its speed,
# and the recording ends on time. With --max-overhead 0 nothing is lowered.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

HZ=100000
rate_path=/proc/sys/kernel/perf_event_max_sample_rate
old_rate=$(cat "$rate_path")
trap 'echo "$old_rate" >"$rate_path"; rm -rf "$TMP"; [ -z "${BG_PID:-}" ] || kill "$BG_PID" 2>/dev/null || true' EXIT
echo "$HZ" >"$rate_path" || fail "cannot set $rate_path to $HZ"
nr=$(nproc)

# 1. shares and CPU time: split's threads, one per CPU, for 3 s; the CPU time they
#    took is time(1)'s, the one recorded is their samples over -F (each sample
#    counting its period)
"$SCORCH" record -F "$HZ" -o "$TMP/split.folded" -- \
	/usr/bin/time -f "%U %S" -o "$TMP/time" "$SPLIT" --seconds 3 --threads "$nr" \
	>/dev/null 2>"$TMP/err" || fail "record failed: $(cat "$TMP/err")"
cat "$TMP/err"
grep -q "^scorch: rate lowered to [0-9]* Hz (from -F $HZ; .*within 5% of the CPUs" "$TMP/err" ||
	fail "the rate was not lowered, or the summary does not say so"
[ "$(grep -c '^scorch: rate lowered' "$TMP/err")" = 1 ] || fail "the lowered rate said more than once"
grep -q '^hint: --max-overhead' "$TMP/err" || fail "no hint for --max-overhead"
check_folded "$TMP/split.folded"
# the workers' comms are split-w0, split-w1...: one comm for the shares
sed 's/^split-w[0-9]*;/split-w;/' "$TMP/split.folded" >"$TMP/w.folded"
split_shares "$TMP/w.folded" split-w 90 worker || fail "shares off with the rate lowered"
recorded=$(awk -v hz="$HZ" '/^split-w/ { t += $NF } END { printf "%.3f", t / hz }' "$TMP/split.folded")
took=$(awk '{ printf "%.3f", $1 + $2 }' "$TMP/time")
echo "CPU time: $recorded s recorded, $took s by time(1)"
awk -v r="$recorded" -v t="$took" 'BEGIN { exit !(t > 1 && r >= 0.9 * t && r <= 1.1 * t) }' ||
	fail "the counts do not add up to the CPU time taken ($recorded s of $took s)"

# 2. under -a -F 100000 -d 2, a CPU job keeps >= 60 % of its speed alone (cpujob's
#    fixed work, about a second a thread; alone before and after, the faster), and
#    the recording returns within 4 s
units=3000
job() { "$CPUJOB" "$nr" "$units" | awk '{ print $7 }'; }
alone=$(job)
mkfifo "$TMP/rec.fifo"
t0=$EPOCHREALTIME
"$SCORCH" record -a -F "$HZ" -d 2 -o "$TMP/all.folded" 2>"$TMP/rec.fifo" &
rec=$!
exec 8<"$TMP/rec.fifo"
read -r -t 30 first <&8 || fail "no start line from record"
case "$first" in "scorch: sampling"*) ;; *) fail "unexpected line: $first" ;; esac
under=$(job)
cat <&8 >"$TMP/err"
rc=0
wait "$rec" || rc=$?
t1=$EPOCHREALTIME
exec 8<&-
cat "$TMP/err"
[ "$rc" = 0 ] || fail "record -a -F $HZ -d 2 exited $rc"
second=$(job)
alone=$(awk -v a="$alone" -v b="$second" 'BEGIN { print (a < b ? a : b) }')
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
echo "job: $alone s alone, $under s under record -a -F $HZ; record -d 2 returned in $took s"
awk -v a="$alone" -v u="$under" 'BEGIN { exit !(u > 0 && a / u >= 0.6) }' ||
	fail "the job kept less than 60 % of its speed ($alone s alone, $under s)"
awk -v t="$took" 'BEGIN { exit !(t <= 4.0) }' || fail "record -d 2 took $took s, more than 4"
grep -q "^scorch: rate lowered to" "$TMP/err" || fail "-a: the rate was not lowered"
check_folded "$TMP/all.folded"

# 3. --max-overhead 0: not governed, nothing said
"$SCORCH" record -F "$HZ" --max-overhead 0 -o "$TMP/free.folded" -- "$SPLIT" --seconds 0.5 \
	>/dev/null 2>"$TMP/err" || fail "record --max-overhead 0 failed: $(cat "$TMP/err")"
! grep -q "rate lowered" "$TMP/err" || fail "--max-overhead 0 lowered the rate"
check_folded "$TMP/free.folded"
echo PASS
