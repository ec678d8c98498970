# SPDX-License-Identifier: MIT
# Shared by node.sh and java.sh: the share of a comm's samples whose stack holds a JIT
# frame (suffixed _[j]) matching an awk regex.

# jit_share FOLDED COMM REGEX: prints "total matched"
jit_share() {
	awk -v c="$2" -v re="$3" '{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		n = split(line, a, ";"); if (a[1] != c) next
		t += cnt
		for (i = 2; i <= n; i++)
			if (a[i] ~ /_\[j\]$/ && a[i] ~ re) { m += cnt; break }
	} END { print t + 0, m + 0 }' "$1"
}

check_share() {
	local total=$1 matched=$2 what=$3
	[ "$total" -ge 1000 ] || fail "too few samples ($total)"
	awk -v t="$total" -v m="$matched" -v w="$what" 'BEGIN {
		printf "%s: %d of %d samples (%.1f%%)\n", w, m, t, 100 * m / t
		exit (100 * m / t >= 90) ? 0 : 1
	}' || fail "$what is in fewer than 90% of the samples"
}
