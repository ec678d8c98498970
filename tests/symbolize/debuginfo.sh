#!/bin/bash
# SPDX-License-Identifier: MIT
# Golden tests of DWARF symbolization through `scorch symbolize --elf`: fixtures are
# built here with the exact commands below, and every address is resolved to names
# known by construction (function addresses from nm, source lines from LINE_ markers).
set -eu
. "$(dirname "$0")/../lib.sh"
SRC=$(cd "$(dirname "$0")/fixtures" && pwd)
: "${SCORCH:?SCORCH must point to the scorch binary}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"

sym() { "$SCORCH" symbolize "$@"; }
# the frames of one address (what follows the tab)
frames() { sym "$@" | cut -f2-; }
expect() {
	local want=$1 got
	shift
	got=$(frames "$@") || fail "scorch symbolize $* failed"
	[ "$got" = "$want" ] || fail "symbolize $*: got '$got', want '$want'"
}
addr_of() { nm "$1" | awk -v n="$2" '$3 == n { print "0x" $1; exit }'; }
line_of() { grep -n "$2" "$SRC/$1" | cut -d: -f1; }

# ---- C at -O2 -g: inline chains, lines, DWARF only when the symbol table is gone ----
cc -O2 -g -fno-omit-frame-pointer -o inline "$SRC/inline.c"
outer=$(addr_of inline outer)
hidden=$(addr_of inline hidden_static)
[ -n "$outer" ] && [ -n "$hidden" ] || fail "nm found no outer/hidden_static"
size=$(nm -S inline | awk '$4 == "outer" { print $2 }')
# every address of outer: its chains, outermost first
python3 -c "
import sys
a, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
for i in range(n): print(hex(a + i))" "$outer" "$size" >outer.addrs
sym --elf inline <outer.addrs | cut -f2 | sort -u >outer.chains
grep -qx 'outer;twice_\[i\];sq_\[i\]' outer.chains || fail "no sq inlined in twice in outer: $(cat outer.chains)"
grep -qx 'outer;twice_\[i\]' outer.chains || fail "no twice inlined in outer"
grep -vqE '^outer(;twice_\[i\](;sq_\[i\])?)?$' outer.chains && fail "unexpected chains in outer: $(cat outer.chains)"
expect "hidden_static" --elf inline "$hidden"
# lines: sq's own line for the innermost frame, the call sites for the outer ones
l_sq=$(line_of inline.c LINE_SQ)
l_twice=$(line_of inline.c LINE_TWICE)
l_outer=$(line_of inline.c LINE_OUTER)
sym --elf inline --lines <outer.addrs | cut -f2 | sort -u >outer.lines
grep -qx "outer (inline.c:$l_outer);twice (inline.c:$l_twice)_\[i\];sq (inline.c:$l_sq)_\[i\]" outer.lines ||
	fail "lines: $(cat outer.lines)"
expect "outer" --elf inline --no-inline "$outer"
# stripped of every symbol: names from DWARF alone
strip --strip-all --keep-section='.debug_*' -o inline-nosymtab inline
nm inline-nosymtab 2>&1 | grep -q "no symbols" || fail "inline-nosymtab still has a symbol table"
expect "hidden_static" --elf inline-nosymtab "$hidden"
sym --elf inline-nosymtab <outer.addrs | cut -f2 | sort -u >nosym.chains
cmp -s outer.chains nosym.chains || fail "DWARF-only chains differ: $(cat nosym.chains)"

# ---- compressed debug sections: zlib (SHF_COMPRESSED), zlib-gnu (.zdebug), zstd ----
for c in zlib zlib-gnu zstd; do
	objcopy --compress-debug-sections=$c inline inline-$c
	sym --elf inline-$c --lines <outer.addrs | cut -f2 | sort -u >$c.lines
	cmp -s outer.lines $c.lines || fail "$c-compressed: $(head -3 $c.lines)"
	# without --lines the line table is not decompressed: the same chains
	sym --elf inline-$c <outer.addrs | cut -f2 | sort -u >$c.chains
	cmp -s outer.chains $c.chains || fail "$c-compressed, no --lines: $(head -3 $c.chains)"
	expect "hidden_static" --elf inline-$c "$hidden"
done
readelf -S -W inline-zstd | grep -q 'debug_info.*C' || fail "objcopy did not compress with zstd"

# ---- separate debug files: debuglink (CRC), build-id directory, mismatches ----
mkdir -p bin/.debug root
objcopy --only-keep-debug inline bin/.debug/inline.debug
objcopy --strip-all --add-gnu-debuglink=bin/.debug/inline.debug inline bin/inline
expect "hidden_static" --elf bin/inline --debug-dir "$TMP/root" "$hidden"
sym --elf bin/inline --debug-dir "$TMP/root" <outer.addrs | cut -f2 | sort -u >link.chains
cmp -s outer.chains link.chains || fail "debuglink chains differ"
# a debug file whose CRC does not match is not used
printf x >>bin/.debug/inline.debug
expect "[inline]" --elf bin/inline --debug-dir "$TMP/root" "$hidden"
# by build-id, without any debuglink
bid=$(readelf -n inline | awk '/Build ID/ { print $3 }')
[ -n "$bid" ] || fail "no build-id"
mkdir -p "root/.build-id/${bid:0:2}"
objcopy --only-keep-debug inline "root/.build-id/${bid:0:2}/${bid:2}.debug"
objcopy --strip-all inline stripped
expect "[stripped]" --elf stripped --debug-dir "$TMP/nonexistent" "$hidden"
expect "hidden_static" --elf stripped --debug-dir "$TMP/root" "$hidden"
# the wrong debug file at the build-id path (another build) is rejected with a warning
cc -O2 -g -fno-omit-frame-pointer -DOTHER=1 -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567 \
	-o other "$SRC/inline.c"
objcopy --only-keep-debug other "root/.build-id/${bid:0:2}/${bid:2}.debug"
frames --elf stripped --debug-dir "$TMP/root" "$hidden" >out 2>err
[ "$(cat out)" = "[stripped]" ] || fail "mismatched build-id used: $(cat out)"
grep -q "build-id differs" err || fail "no warning for the build-id mismatch: $(cat err)"

# ---- C++: namespaces, templates, a PIE shared library ----
c++ -O1 -g -fPIC -shared -o libtpl.so "$SRC/templates.cpp"
c++ -O1 -g -o tpl "$SRC/templates.cpp"
for f in tpl libtpl.so; do
	get_long=$(addr_of $f _ZNK3app6detail3BoxIlE3getEi)
	get_int=$(addr_of $f _ZNK3app6detail3BoxIiE3getEi)
	hot=$(addr_of $f _ZN3app3hotEd)
	[ -n "$get_long" ] && [ -n "$get_int" ] && [ -n "$hot" ] || fail "$f: symbols not found"
	expect "app::detail::Box<long>::get" --elf $f "$get_long"
	expect "app::detail::Box<int>::get" --elf $f "$get_int"
	expect "app::hot" --elf $f "$hot"
	expect "app::detail::Box<int>::get(int) const" --elf $f --params "$get_int"
	expect "app::hot(double)" --elf $f --params "$hot"
	expect "_ZN3app3hotEd" --elf $f --no-demangle "$hot"
done
# the return address after the last call of a function names that function
strip --strip-all --keep-section='.debug_*' -o tpl-nosym tpl
expect "app::hot" --elf tpl-nosym "$(addr_of tpl _ZN3app3hotEd)"

# ---- D (gdc) ----
if command -v gdc >/dev/null; then
	gdc -O0 -g -o dfix "$SRC/dfix.d"
	hotd=$(addr_of dfix _D3app4hotDFdZd)
	[ -n "$hotd" ] || fail "no _D3app4hotDFdZd in dfix: $(nm dfix | grep hotD)"
	expect "app.hotD" --elf dfix "$hotd"
	expect "app.hotD(double)" --elf dfix --params "$hotd"
	expect "app.hotD" --elf dfix --no-dwarf "$hotd"
else
	echo "note: gdc not installed, D skipped (apt-get install gdc)"
fi

# ---- Rust, legacy and v0 mangling (if rustc is present) ----
if command -v rustc >/dev/null; then
	for m in legacy v0; do
		# legacy is rustc's default; v0 is asked for
		flag=""
		[ $m = v0 ] && flag="-C symbol-mangling-version=v0"
		# shellcheck disable=SC2086
		rustc -g -C opt-level=0 $flag -o rfix-$m "$SRC/rfix.rs" 2>rustc.err ||
			{ echo "note: rustc cannot build $m mangling: $(head -1 rustc.err)"; continue; }
		case $m in
		legacy) nm rfix-$m | grep -q '_ZN4rfix6engine8hot_rust17h' || fail "not legacy-mangled" ;;
		v0) nm rfix-$m | grep -q '_RNvNtCs.*4rfix6engine8hot_rust' || fail "not v0-mangled" ;;
		esac
		hr=$(nm rfix-$m | awk '$3 ~ /hot_rust/ { print "0x" $1; exit }')
		[ -n "$hr" ] || fail "no hot_rust in rfix-$m"
		expect "rfix::engine::hot_rust" --elf rfix-$m --no-dwarf "$hr"
		expect "rfix::engine::hot_rust" --elf rfix-$m "$hr"
	done
else
	echo "note: rustc not installed, Rust skipped"
fi

# ---- real debug files: libc through /usr/lib/debug/.build-id (Debian's libc6-dbg) ----
libc=/usr/lib/x86_64-linux-gnu/libc.so.6
lbid=$(readelf -n $libc 2>/dev/null | awk '/Build ID/ { print $3 }')
ldbg=/usr/lib/debug/.build-id/${lbid:0:2}/${lbid:2}.debug
if [ -n "$lbid" ] && [ -r "$ldbg" ]; then
	# static functions (in no dynamic symbol): named from DWARF, the exported libc
	# being stripped of its .symtab
	nm -D $libc | awk '{ print $1 }' | sort -u >dynaddrs
	nm "$ldbg" | awk '$2 == "t" && $3 ~ /^[a-z][a-z0-9_]*$/ { print $1, $3 }' | sort -u |
		join -v 1 - dynaddrs | awk 'NR % 37 == 0' | head -n 25 >static.txt
	[ "$(wc -l <static.txt)" -ge 10 ] || fail "too few static libc functions: $(wc -l <static.txt)"
	awk '{ print "0x" $1 }' static.txt | sym --elf $libc --no-inline >static.out
	paste static.out static.txt | awk -F'\t' '{ split($3, w, " "); if ($2 != w[2]) { print; bad = 1 } }
		END { exit bad }' || fail "libc static functions misnamed"
	# inline frames: random text addresses, some inside inlined code
	read -r start size < <(readelf -W -S $libc | awk '$2 == ".text" { print $4, $6 }')
	python3 -c "
import random, sys
s, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
r = random.Random(2)
for _ in range(2000): print(hex(s + r.randrange(n)))" "$start" "$size" | sym --elf $libc --lines >libc.out
	inl=$(grep -c '_\[i\]' libc.out || true)
	[ "$inl" -gt 100 ] || fail "only $inl of 2000 libc addresses in inlined code"
	grep -q '\.c:[0-9]*)' libc.out || fail "no libc source lines"
	grep -qv '^0x[0-9a-f]*	\[libc.so.6\]$' libc.out || fail "libc unresolved"
	# the decompressed sections kept by build-id: written by the first run, read back by
	# the next, the same frames as without a cache (zlib-compressed in libc6-dbg)
	cut -f1 libc.out >libc.addrs
	SCORCH_CACHE_DIR= sym --elf $libc --lines <libc.addrs >nocache.out
	cmp -s libc.out nocache.out || fail "libc frames differ without the cache"
	for run in written "from the cache" "from the cache"; do
		SCORCH_CACHE_DIR=$TMP/cache sym -v --elf $libc --lines <libc.addrs >cache.out 2>err
		grep -q "$run" err || fail "debug cache: not $run: $(grep -i cache err)"
		# the unit list comes back with the sections (the listing skipped)
		[ "$run" = written ] || grep -q "listed in the debug cache" err ||
			fail "debug cache: no unit list: $(grep -i 'units' err)"
		cmp -s libc.out cache.out || fail "libc frames differ through the cache ($run)"
	done
	[ "$(stat -c %a "$TMP/cache")" = 700 ] || fail "cache directory mode $(stat -c %a "$TMP/cache")"
	# a unit list that does not hold together (a span of no unit) under a valid CRC:
	# listed from the DWARF again, the same frames
	python3 - "$TMP"/cache/*.dw <<'PY' || fail "cannot rewrite the cache entry's unit list"
import struct, sys, zlib
path = sys.argv[1]
img = bytearray(open(path, "rb").read())
fmt = "<8sIIQI40sIQ"  # struct dwc_hdr
magic, ver, nr, total, id_len, bid, crc, extra_len = struct.unpack_from(fmt, img)
assert ver == 2 and extra_len > 16 and total == len(img), (ver, extra_len, total)
off = total - extra_len
units_magic, nr_units, nr_spans, nr_rest = struct.unpack_from("<IIII", img, off)
assert nr_spans > 0
struct.pack_into("<I", img, off + 16 + 8 * nr_units + 16, nr_units)  # first span's unit
struct.pack_into("<I", img, struct.calcsize("<8sIIQI40s"), zlib.crc32(img[off:]))
open(path, "wb").write(img)
PY
	SCORCH_CACHE_DIR=$TMP/cache sym -v --elf $libc --lines <libc.addrs >cache.out 2>err
	grep -q "does not hold together: listed again" err ||
		fail "debug cache: a bad unit list was used: $(grep -i 'unit' err)"
	cmp -s libc.out cache.out || fail "libc frames differ after a bad cached unit list"
	# without --lines another entry (no line tables), the same functions and chains
	SCORCH_CACHE_DIR=$TMP/cache sym -v --elf $libc <libc.addrs >cache.out 2>err
	grep -q written err || fail "debug cache: no entry without the line tables"
	SCORCH_CACHE_DIR= sym --elf $libc <libc.addrs >nocache.out
	cmp -s nocache.out cache.out || fail "libc frames without lines differ through the cache"
	[ "$(ls "$TMP/cache" | wc -l)" = 2 ] || fail "cache entries: $(ls "$TMP/cache")"
	# a damaged entry is not used and is written again; the frames stay right
	for f in "$TMP"/cache/*.dw; do
		printf 'garbage' | dd of="$f" bs=1 seek=4096 conv=notrunc status=none
	done
	SCORCH_CACHE_DIR=$TMP/cache sym -v --elf $libc --lines <libc.addrs >cache.out 2>err
	grep -q "not used: damaged" err && grep -q written err ||
		fail "debug cache: a damaged entry: $(grep -i cache err)"
	cmp -s libc.out cache.out || fail "libc frames differ after a damaged cache entry"
	# a directory others may write is not used (warned, with a hint)
	chmod 777 "$TMP/cache"
	SCORCH_CACHE_DIR=$TMP/cache sym --elf $libc --lines <libc.addrs >cache.out 2>err
	grep -q "writable by others: not used" err && grep -q "hint:" err ||
		fail "debug cache writable by others: $(cat err)"
	cmp -s libc.out cache.out || fail "libc frames differ beside an unusable cache"
	chmod 700 "$TMP/cache"
else
	if [ "${CI:-}" = true ]; then fail "libc6-dbg is not installed (scripts/setup.sh installs it)"; fi
	echo "note: libc6-dbg not installed, real debug files skipped"
fi

# ---- corrupt files: a warning and [file] frames or symbols, never a crash ----
python3 - inline <<'PY'
import random, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
open("truncated", "wb").write(data[:3000])
# section headers with bogus offsets and sizes
shoff, = struct.unpack_from("<Q", data, 0x28)
shnum, = struct.unpack_from("<H", data, 0x3c)
bad = bytearray(data)
for i in range(1, shnum):
    struct.pack_into("<QQ", bad, shoff + i * 64 + 0x18, 1 << 40, 1 << 41)
open("badsections", "wb").write(bad)
# garbage in the DWARF only: symbols still name functions
r = random.Random(3)
for name in ("baddwarf",):
    d = bytearray(data)
    # overwrite the middle of the file (DWARF lives after the code in a -g build)
    for i in range(len(d) // 2, len(d) - 4096):
        if r.random() < 0.05:
            d[i] = r.randrange(256)
    open(name, "wb").write(d)
PY
for f in truncated badsections; do
	set +e
	sym --elf $f "$hidden" >out 2>err
	rc=$?
	set -e
	[ $rc -eq 1 ] || [ $rc -eq 0 ] || fail "$f: exit $rc (crash?): $(cat err)"
	if [ $rc -eq 1 ]; then
		grep -q "not a readable ELF file" err || fail "$f: no clear error: $(cat err)"
	fi
done
set +e
sym --elf baddwarf <outer.addrs >out 2>err
rc=$?
set -e
[ $rc -eq 0 ] || fail "baddwarf: exit $rc: $(tail -2 err)"
[ "$(wc -l <out)" = "$(wc -l <outer.addrs)" ] || fail "baddwarf: missing lines"
# one DIE inside a unit made unparsable (an abbreviation code no table defines): the
# unit is read at the first lookup inside it, the symbol table names the function and
# the damage is reported, not silent; the intact file reports none
sym --elf inline "$hidden" >/dev/null 2>err
grep -q "partly unreadable" err && fail "intact file reported as partly unreadable: $(cat err)"
info=$(readelf -SW inline | awk '{ for (i = 1; i < NF; i++) if ($i == ".debug_info") print $(i + 3) }')
child=$(readelf --debug-dump=info inline |
	sed -nE 's/^ <1><([0-9a-f]+)>: Abbrev Number: [0-9]+ .*/\1/p' | head -1)
nabbrev=$(readelf --debug-dump=abbrev inline | grep -cE '^ +[0-9]+ +DW_TAG_')
[ -n "$info" ] && [ -n "$child" ] && [ "$nabbrev" -lt 120 ] ||
	fail "cannot find a DIE to damage (.debug_info at '$info', first child '$child', $nabbrev abbreviations)"
python3 - inline "$info" "$child" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
at = int(sys.argv[2], 16) + int(sys.argv[3], 16)
assert d[at] < 0x80, "abbreviation code of more than one byte"
d[at] = 0x7f
open("baddie", "wb").write(d)
PY
expect "hidden_static" --elf baddie "$hidden"
sym --elf baddie "$hidden" >/dev/null 2>err
grep -q "DWARF partly unreadable or over the index's bounds in 1 of 1 files" err ||
	fail "a unit that does not parse went unreported: $(cat err)"

# ---- kernel: BPF programs are named from kallsyms (when one is loaded and visible) ----
if [ "$(id -u)" = 0 ] && bline=$(grep -m1 ' bpf_prog_[0-9a-f]*_.*\[bpf\]' /proc/kallsyms); then
	baddr=$(echo "$bline" | awk '{ print $1 }')
	bname=$(echo "$bline" | awk '{ print $3 " " $4 }')
	expect "$bname" --kernel "0x$baddr"
fi

# ---- errors: one line and a hint, exit 1 / 2 ----
set +e
sym --elf /nonexistent 0x10 >/dev/null 2>err; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "cannot open /nonexistent" err || fail "missing file: $rc $(cat err)"
set +e
sym --elf inline zz >/dev/null 2>err; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "invalid address" err && grep -q "hint:" err || fail "bad address: $rc"
set +e
sym 0x10 >/dev/null 2>err; rc=$?
set -e
[ $rc -eq 2 ] || fail "no mode: exit $rc"

# ---- addresses on standard input: a line of 64 MiB is skipped, never held ----
{ head -c $((64 << 20)) /dev/zero | tr '\0' 'a'; printf '\nzz\n'; } >long.addrs
/usr/bin/time -f %M -o rss "$SCORCH" symbolize --elf inline <long.addrs >/dev/null 2>err && rc=0 || rc=$?
[ $rc -eq 1 ] && grep -q "invalid address 'zz'" err || fail "line after a long one: $rc $(head -c 300 err)"
grep -q "<stdin>: 1 line over 4 KiB skipped" err || fail "long line not reported: $(head -c 300 err)"
[ "$(tail -n 1 rss)" -lt 32768 ] || fail "a 64 MiB line took $(tail -n 1 rss) KB"
echo ok
