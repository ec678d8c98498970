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

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; [ -z "${BG_PID:-}" ] || kill "$BG_PID" 2>/dev/null || true' EXIT
