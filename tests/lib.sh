# SPDX-License-Identifier: MIT
# Shared helpers for scorch's shell tests. Source it; set -eu is the caller's.

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Privileged BPF tests: skip (77) where BPF cannot run, except under CI=true,
# where a skip is a failure.
require_bpf() {
	local reason=""
	if [ "$(id -u)" != 0 ]; then
		reason="not root"
	elif [ ! -r /sys/kernel/btf/vmlinux ]; then
		reason="no kernel BTF at /sys/kernel/btf/vmlinux"
	elif ! "$SCORCH" record --unwind fp -a -d 0.05 -q -o /dev/null 2>"$TMP/probe.err"; then
		reason="scorch cannot record here: $(head -n 2 "$TMP/probe.err" | tr '\n' ' ')"
	fi
	if [ -n "$reason" ]; then
		if [ "${CI:-}" = true ]; then
			fail "BPF test cannot run under CI: $reason"
		fi
		echo "SKIP: $reason"
		exit 77
	fi
}

# Starts "$@" in the background with its stdout on a FIFO and waits (blocking
# read, no sleep) for its "ready PID [TID...]" line. Sets BG_PID and READY.
start_ready() {
	local fifo="$TMP/ready.fifo"
	rm -f "$fifo"
	mkfifo "$fifo"
	"$@" >"$fifo" &
	BG_PID=$!
	exec 9<"$fifo"
	if ! read -r -t 30 READY <&9; then
		fail "workload did not become ready: $*"
	fi
	exec 9<&-
	case "$READY" in
	"ready $BG_PID"*) ;;
	*) fail "unexpected ready line '$READY' from $*" ;;
	esac
}

# Checks the folded contract: "frame[;frame...] COUNT" per line, sorted bytewise,
# no duplicate stacks.
check_folded() {
	local f="$1"
	[ -s "$f" ] || fail "$f is empty"
	if grep -nvE '^[^;]+(;[^;]+)* [0-9]+$' "$f" | head -n 3 | grep .; then
		fail "$f has lines that are not folded stacks"
	fi
	LC_ALL=C sort -c "$f" || fail "$f is not sorted bytewise"
	if sed 's/ [0-9]*$//' "$f" | LC_ALL=C uniq -d | head -n 1 | grep .; then
		fail "$f repeats a stack"
	fi
}

# Sum of counts of lines whose first frame (comm) is $2, in file $1.
comm_total() {
	awk -v c="$2" '{ n = split($0, a, ";"); if (a[1] == c) t += $NF } END { print t + 0 }' "$1"
}

# Sum of counts of lines of comm $2 that contain frame $3 anywhere.
frame_total() {
	awk -v c="$2" -v fr="$3" '{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		n = split(line, a, ";"); if (a[1] != c) next
		for (i = 2; i <= n; i++) if (a[i] == fr) { t += cnt; break }
	} END { print t + 0 }' "$1"
}

# The known split (tests/workloads/split.c, pyframes.py) in folded file $1, comm $2:
# frames $5, $6, $7 (default burn_a, burn_b, burn_c) within 3 points of 50/30/20 of
# their sum, and >= $3 % of comm's samples holding frame $4 (default main). Prints the
# figures; returns 1, saying what is off, when it is not so.
split_shares() {
	local f="$1" comm="$2" min="$3" root="${4:-main}" fa="${5:-burn_a}" fb="${6:-burn_b}"
	local fc="${7:-burn_c}" t a b c m

	t=$(comm_total "$f" "$comm")
	a=$(frame_total "$f" "$comm" "$fa")
	b=$(frame_total "$f" "$comm" "$fb")
	c=$(frame_total "$f" "$comm" "$fc")
	m=$(frame_total "$f" "$comm" "$root")
	awk -v a="$a" -v b="$b" -v c="$c" -v m="$m" -v t="$t" -v min="$min" -v fa="$fa" \
		-v fb="$fb" -v fc="$fc" -v root="$root" 'BEGIN {
		s = a + b + c
		if (!s || !t) { printf "no samples in %s, %s, %s\n", fa, fb, fc; exit 1 }
		pa = 100 * a / s; pb = 100 * b / s; pc = 100 * c / s; pm = 100 * m / t
		printf "shares: %s %.1f%% (50), %s %.1f%% (30), %s %.1f%% (20); %s in %.1f%% of %d\n",
			fa, pa, fb, pb, fc, pc, root, pm, t
		d = 0
		if (pa < 47 || pa > 53 || pb < 27 || pb > 33 || pc < 17 || pc > 23) { print "a share is off by more than 3 points"; d = 1 }
		if (pm < min) { printf "fewer than %d%% of the samples reach %s\n", min, root; d = 1 }
		exit d
	}'
}

# figure FIGURE FILE [ARG]: a figure of scorch's summary in FILE, read by the reader the
# benches take their figures from (bench/summary.py: its usage lists the figures). When
# the line is not there it says which it looked for and fails: x=$(figure ...) stops the
# test, so a summary whose wording the reader does not follow fails the tests too.
figure() { python3 "$(dirname "${BASH_SOURCE[0]}")/../bench/summary.py" scorch "$@"; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; [ -z "${BG_PID:-}" ] || kill "$BG_PID" 2>/dev/null || true' EXIT
