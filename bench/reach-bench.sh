#!/bin/bash
# SPDX-License-Identifier: MIT
# How many user stacks reach their thread's root, on programs nobody here wrote (none
# keeps frame pointers: Debian's sqlite3, python3, xz, zstd and gcc's cc1): each workload
# is recorded by scorch --unwind kernel (walked in BPF with the files' .eh_frame), scorch
# --unwind dwarf (a stack copy per sample, unwound in scorch), scorch --unwind fp and
# perf record --call-graph dwarf (8 KiB copies, unwound by perf script), all at 999 Hz,
# one after the other, in this run. A stack reaches the root when it holds libc's
# __libc_start_call_main (a main thread's, below main) or start_thread (another
# thread's): libc's frames are named even in stripped programs. Shares are of the
# samples of the workload's own command, weighted by samples. The sixth workload, deepjson,
# is python3's C JSON encoder on a list nested 400 deep: native stacks of about 420
# frames, more than one stored stack (127 words) and more than an 8 KiB copy holds.
# usage: bench/reach-bench.sh [WORKLOAD...]   (default: all six; root; perf, sqlite3,
#   xz-utils, zstd, gcc, python3)
set -eu
. "$(dirname "$0")/lib.sh"
need_root
need_scorch
need_tool perf linux-perf
need_tool sqlite3 sqlite3
need_tool xz xz-utils
need_tool zstd zstd
need_tool gcc gcc
make_work
cd "$work"

head -c 40000000 /dev/urandom | base64 >data.txt
python3 -c 'print("\n".join(f"int f{i}(int x) {{ int s = 0; for (int j = 0; j < x; j++) s += j * {i} % (x + 3); return s; }}" for i in range(6000)))' >big.c

declare -A cmds=(
	[sqlite3]="sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000000) SELECT sum(x * x % 7) FROM c;'"
	[python3]="/usr/bin/python3 -c 'import json; d = [{\"k\": i, \"v\": str(i) * 3} for i in range(300000)]; [json.loads(json.dumps(d)) for _ in range(3)]'"
	[xz]="xz -6 -T1 -c data.txt"
	[zstd]="zstd -15 -T1 -c data.txt"
	[cc1]="gcc -O2 -S -o /dev/null big.c"
	[deepjson]="/usr/bin/python3 -c 'import json, sys, time
sys.setrecursionlimit(10000)
d = 1
for _ in range(400): d = [d, {\"k\": 2}]
end = time.time() + 4
while time.time() < end: json.dumps(d)'"
)
declare -A comms=([sqlite3]=sqlite3 [python3]=python3 [xz]=xz [zstd]=zstd [cc1]=cc1 [deepjson]=python3)

# scorch_reach FOLDED COMM: "reaching total" samples of COMM
scorch_reach() {
	awk -v c="$2" '{ cnt = $NF; line = $0; sub(/ [0-9]+$/, "", line); n = split(line, a, ";")
		if (a[1] != c) next
		t += cnt
		for (i = 2; i <= n; i++)
			if (a[i] == "__libc_start_call_main" || a[i] == "start_thread") { r += cnt; break }
	} END { print r + 0, t + 0 }' "$1"
}
# perf_reach DATA COMM: the same from perf script (the last user frame of each sample)
perf_reach() {
	perf script -i "$1" --comm "$2" -F comm,ip,sym 2>/dev/null | awk '
		function flush() { if (seen) { t++; r += root } seen = 0; root = 0 }
		/^[^ \t]/ { flush(); seen = 1; next }
		/^[ \t]*[0-9a-f]+ / { if ($2 == "__libc_start_call_main" || $2 == "start_thread") root = 1; next }
		/^$/ { flush() }
		END { flush(); print r + 0, t + 0 }'
}
pct() { awk -v r="$1" -v t="$2" 'BEGIN { printf "%.1f", t ? 100 * r / t : 0 }'; }

printf '| workload | scorch kernel | scorch dwarf | scorch fp | perf --call-graph dwarf |\n'
printf '| --- | ---: | ---: | ---: | ---: |\n'
[ $# -gt 0 ] || set -- sqlite3 python3 xz zstd cc1 deepjson
for w in "$@"; do
	[ -n "${cmds[$w]:-}" ] || die "unknown workload '$w'" "one of: sqlite3 python3 xz zstd cc1 deepjson"
	row="| $w"
	for u in kernel dwarf fp; do
		eval "$scorch record -F 999 --unwind $u -o s.folded -- ${cmds[$w]}" >/dev/null 2>s.err ||
			die "scorch --unwind $u failed on $w: $(tail -n 1 s.err)"
		read -r r t < <(scorch_reach s.folded "${comms[$w]}")
		row="$row | $(pct "$r" "$t") % of $t"
	done
	eval "perf record -q -F 999 --call-graph dwarf -o p.data -- ${cmds[$w]}" >/dev/null 2>p.err ||
		die "perf record failed on $w: $(tail -n 1 p.err)"
	read -r r t < <(perf_reach p.data "${comms[$w]}")
	echo "$row | $(pct "$r" "$t") % of $t |"
done
