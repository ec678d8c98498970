#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets with clang into build-fuzz/ (-DSCORCH_FUZZ=ON: ASan, UBSan,
# coverage on every library) and runs each executable named fuzz_* for SECONDS (default
# 15) from a copy of its seed corpus, so the repository's corpus is never grown:
#   tests/<area>/corpus/<name>/  (committed; <name> is the target without "fuzz_";
#                                 tests/<area>/corpus/ itself when it holds files)
#   build-fuzz/tests/<area>/corpus/<name>/  (seeds the build makes, e.g. ELF files)
# Prints one row per target (executions, exec/s, corpus growth, peak RSS, crashes) and
# exits 1 when any target crashed, leaked, hit undefined behaviour, timed out on one
# input (FUZZ_TIMEOUT seconds, default 10) or ran out of memory. A crash's input, log
# and whether it happened in our code or inside a library (elfutils, zlib, zstd: report
# those upstream; they are never hidden) are printed; inputs and logs stay in
# build-fuzz/fuzz-out/<target>/. Reproduce one with: build-fuzz/.../fuzz_x CRASH_FILE
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (TARGET: e.g. fuzz_elf; default all)
set -eu
cd "$(dirname "$0")/.."
src=$PWD
secs=${1:-15}
shift || true
case "$secs" in
'' | *[!0-9]*)
	echo "fuzz.sh: SECONDS must be a whole number, not '$secs'" >&2
	echo "hint: scripts/fuzz.sh 30 fuzz_elf" >&2
	exit 2
	;;
esac
bdir=build-fuzz
out=$bdir/fuzz-out

if ! command -v clang >/dev/null; then
	echo "fuzz.sh: clang is needed for libFuzzer" >&2
	echo "hint: run scripts/setup.sh --test (Debian packages clang, libclang-rt-14-dev)" >&2
	exit 2
fi
cmake -S . -B $bdir -DCMAKE_C_COMPILER=clang -DSCORCH_FUZZ=ON -DSCORCH_WERROR=ON >/dev/null
cmake --build $bdir --target fuzzers -j "$(nproc)" >$bdir/fuzz-build.log 2>&1 || {
	tail -30 $bdir/fuzz-build.log >&2
	echo "fuzz.sh: building the fuzz targets failed (log: $bdir/fuzz-build.log)" >&2
	exit 2
}

mapfile -t all < <(find $bdir/tests -type f -name 'fuzz_*' -perm -u+x | sort)
targets=()
for t in "${all[@]}"; do
	n=$(basename "$t")
	if [ $# -eq 0 ] || [[ " $* " == *" $n "* ]]; then
		targets+=("$t")
	fi
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz target matches '$*'" >&2
	echo "hint: targets are $(for t in "${all[@]}"; do printf '%s ' "$(basename "$t")"; done)" >&2
	exit 2
fi

# Leaks inside third-party libraries only (see the file); ours are never suppressed.
export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"

rm -rf $out
mkdir -p $out
summary=$out/summary.tsv
printf 'target\texecs\texec/s\tnew\tcorpus\trss_mb\tcrashes\tresult\n' >$summary
printf '%-16s %12s %9s %6s %7s %7s %8s  %s\n' target execs exec/s new corpus rss_mb crashes result
failed=0
for t in "${targets[@]}"; do
	n=$(basename "$t")
	area=$(basename "$(dirname "$t")")
	w=$out/$n
	mkdir -p "$w/corpus"
	seeds=0
	for d in "tests/$area/corpus/${n#fuzz_}" "$bdir/tests/$area/corpus/${n#fuzz_}" "tests/$area/corpus"; do
		[ -d "$d" ] || continue
		find "$d" -maxdepth 1 -type f -exec cp {} "$w/corpus/" \;
		seeds=$(find "$w/corpus" -type f | wc -l)
		[ "$d" != "tests/$area/corpus" ] || break
	done
	[ "$seeds" -gt 0 ] || echo "fuzz.sh: $n: no seed corpus in tests/$area/corpus/${n#fuzz_}/, starting empty" >&2
	rc=0
	(cd "$w" && exec "$src/$t" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-10}" \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$src/$w/" \
		corpus) >"$w/log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -1)
	newu=$(sed -n 's/^stat::new_units_added: *//p' "$w/log" | tail -1)
	rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$w/log" | tail -1)
	corpus=$(find "$w/corpus" -type f | wc -l)
	execs=${execs:-0}
	result=ok
	crashes=0
	if [ $rc -ne 0 ]; then
		crashes=1
		failed=1
		if grep -q 'ERROR: LeakSanitizer' "$w/log"; then
			result=leak
		elif grep -q 'runtime error:' "$w/log"; then
			result=ubsan
		elif grep -q 'ALARM: working on the last Unit' "$w/log"; then
			result=timeout
		elif grep -q 'out-of-memory' "$w/log"; then
			result=oom
		elif grep -q 'ERROR: AddressSanitizer' "$w/log"; then
			result=asan
		else
			result="exit-$rc"
		fi
		# whose code: the first frame of the first stack that is not the sanitizer's
		frame=$(grep -m1 -E '^ *#[0-9]+ 0x[0-9a-f]+ in ' <(grep -v -E 'in (__interceptor_|__asan_|__ubsan_|__sanitizer_|__lsan_|malloc|calloc|realloc|free|operator new)|compiler-rt|/libclang_rt' "$w/log") || true)
		case "$frame" in
		*/work/* | *"$src"*) result="$result (ours)" ;;
		*libelf* | *libdw* | *libz.so* | *libzstd*) result="$result (third-party: $(grep -o -E 'lib(elf|dw|z|zstd)[^ )]*' <<<"$frame" | head -1))" ;;
		*) ;;
		esac
	fi
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$w/log" | tail -1)
	rate=${rate:-0}
	printf '%-16s %12s %9s %6s %7s %7s %8s  %s\n' "$n" "$execs" "$rate" "${newu:-0}" "$corpus" \
		"${rss:-?}" "$crashes" "$result"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$execs" "$rate" "${newu:-0}" "$corpus" \
		"${rss:-?}" "$crashes" "$result" >>$summary
	if [ $rc -ne 0 ]; then
		{
			echo "--- $n: $result; log $w/log"
			grep -E 'ERROR:|runtime error:|SUMMARY:|ALARM|out-of-memory|^ *#[0-9]+ ' "$w/log" | head -25
			ls "$w"/crash-* "$w"/leak-* "$w"/timeout-* "$w"/oom-* 2>/dev/null | sed 's/^/input: /'
		} >&2
	fi
done
exit $failed
