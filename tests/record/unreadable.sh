#!/bin/bash
# SPDX-License-Identifier: MIT
# Files a process maps executable that cannot be read as ELF are counted and reported in
# the summary ("mapped files unreadable: N"), never silently: a workload maps a garbage
# file executable after it started. A jitdump mapped the same way (what runtimes do for
# perf: jit-PID.dump, a marker and not code) is not a file the symbolizer reads: not counted.
set -eu
. "$(dirname "$0")/../lib.sh"
require_bpf

head -c 8192 /dev/urandom >"$TMP/garbage.so"
head -c 8192 /dev/urandom >"$TMP/jit-4242.dump"
cat >"$TMP/work.py" <<'EOF'
import mmap, sys, time
maps = []
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        maps.append(mmap.mmap(f.fileno(), 4096, flags=mmap.MAP_PRIVATE,
                              prot=mmap.PROT_READ | mmap.PROT_EXEC))
print("mapped", len(maps), flush=True)
end = time.monotonic() + 1.5
while time.monotonic() < end:
    pass
EOF

for mode in fp dwarf; do
	"$SCORCH" record -v --unwind $mode -F 499 -o "$TMP/$mode.folded" -- \
		python3 "$TMP/work.py" "$TMP/garbage.so" "$TMP/jit-4242.dump" >"$TMP/out" 2>"$TMP/err" ||
		fail "$mode: record failed ($?): $(cat "$TMP/err")"
	grep -q "^mapped 2" "$TMP/out" || fail "$mode: the workload did not run: $(cat "$TMP/out") $(cat "$TMP/err")"
	check_folded "$TMP/$mode.folded"
	notices=$(sed -n 's/.*; \([0-9]*\) notices of new executable mappings.*/\1/p' "$TMP/err")
	line=$(grep "mapped files unreadable" "$TMP/err" || true)
	echo "$mode: $notices notices; ${line:-no unreadable files reported}"
	# the files were mapped after the first sample: read at a notice while it ran
	[ "${notices:-0}" -ge 1 ] || fail "$mode: no notice of the new mappings: $(cat "$TMP/err")"
	case "$line" in
	"scorch: mapped files unreadable: 1 "*) ;;
	*) fail "$mode: want 1 unreadable file (garbage.so, not the jitdump): $(cat "$TMP/err")" ;;
	esac
done
echo PASS
