#!/bin/bash
# SPDX-License-Identifier: MIT
# A function that burns inside libc keeps its caller: split --kernel spends 20 % of
# its rounds in burn_kernel(), which loops on read(2) of /dev/zero through Debian's
# libc (built without frame pointers). Walked in the kernel with tables (the default)
# or with --unwind dwarf, >= 98 % of the samples whose user leaf is libc's read must
# have burn_kernel as read's caller, for the workload built with frame pointers and
# without. (The frame-pointer walk of the
# same samples skips burn_kernel: libc's read keeps the caller's rbp, so the walk
# takes burn_kernel's return address for read's; its figure is printed.)
# The off-CPU variant (callers of nanosleep and read) is tests/unwind/offcpu.sh.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

# share of samples with a user frame "read" whose parent is burn_kernel
callers() {
	awk -v c="$2" '{
		line = $0; cnt = $NF; sub(/ [0-9]+$/, "", line)
		n = split(line, a, ";"); if (a[1] != c) next
		for (i = 3; i <= n; i++) if (a[i] == "read" || a[i] == "__libc_read") {
			t += cnt; if (a[i - 1] == "burn_kernel") k += cnt; break
		}
	} END { printf "%d %d\n", t, k }' "$1"
}

# the no-fp build with the default (--unwind auto: the kernel walk) and with --unwind
# dwarf, the fp build with --unwind dwarf
for run in "$SPLIT_NOFP kernel" "$SPLIT_NOFP dwarf" "$SPLIT dwarf"; do
	read -r bin walk <<<"$run"
	comm=$(basename "$bin")
	how=(--unwind dwarf)
	[ "$walk" = kernel ] && how=()
	"$SCORCH" record -v ${how[@]+"${how[@]}"} -F 999 -o "$TMP/d.folded" -- "$bin" --seconds 2 \
		--kernel 2>"$TMP/err" || fail "record ${how[*]} $comm failed: $(cat "$TMP/err")"
	case $walk in
	kernel) grep -q "unwind kernel: .* walks with tables: " "$TMP/err" ||
		fail "$comm: not walked in the kernel: $(cat "$TMP/err")" ;;
	dwarf) grep -q "unwind dwarf: .* walks: " "$TMP/err" ||
		fail "$comm: not unwound with dwarf: $(cat "$TMP/err")" ;;
	esac
	check_folded "$TMP/d.folded"
	read -r t k < <(callers "$TMP/d.folded" "$comm")
	echo "$comm $walk: $t samples in read, $k with burn_kernel as its caller"
	[ "$t" -ge 100 ] || fail "$comm: too few samples in read ($t)"
	[ $((k * 100)) -ge $((t * 98)) ] || fail "$comm $walk: read lost its caller ($k of $t)"
done

"$SCORCH" record --unwind fp -F 999 -q -o "$TMP/fp.folded" -- "$SPLIT" --seconds 1 --kernel 2>/dev/null ||
	fail "record --unwind fp failed"
read -r t k < <(callers "$TMP/fp.folded" "$(basename "$SPLIT")")
echo "split fp (for comparison): $t samples in read, $k with burn_kernel as its caller"
echo PASS
