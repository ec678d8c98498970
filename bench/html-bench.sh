#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: the HTML profile viewer against the SVG flame graph on the same profiles, same
# run: file size and render time (scorch flamegraph), and in headless Chromium the time
# from the navigation to the first view drawn, a regex search, the renderer's RSS.
# usage: bench/html-bench.sh [STACKS...]   (default: 10000 100000 1000000)
# The profiles are random call trees (bench/flamegraph-gen.py tree, at most 60 deep):
# STACKS distinct stacks, as many tree nodes. The SVG is drawn twice: by default
# (frames under 0.1 px left out) and with --minwidth 0 (every frame, what the page
# holds); an SVG over SVG_MAX_MB (default 100) is measured on disk only. Each page is
# loaded once, in a fresh browser (bench/html-bench.mjs); prints a markdown section.
set -eu
. "$(dirname "$0")/lib.sh"
need_scorch
need_tool node nodejs
need_tool /usr/bin/time time
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || die "no chromium at $chromium" "apt-get install chromium (scripts/setup.sh --test), or set CHROMIUM"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
for n in "${sizes[@]}"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "invalid STACKS '$n'" "e.g. $0 10000 100000"
done
svg_max=${SVG_MAX_MB:-100}
make_work

render() { # OUT ARGS...: renders, prints "seconds peak-MB"
	local out=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/time" "$scorch" flamegraph "$@" -o "$out" 2>"$work/err" ||
		die "scorch flamegraph $* failed: $(tail -n 1 "$work/err")"
	awk '{ printf "%.2f %.0f", $1, $2 / 1024 }' "$work/time"
}
load() { # FILE KIND: the JSON line of html-bench.mjs
	node --experimental-websocket --no-warnings "$here/html-bench.mjs" "$1" "$2" "$work"
}
field() { # JSON KEY
	node -e 'const o = JSON.parse(process.argv[1]); const v = o[process.argv[2]];
		process.stdout.write(v === undefined ? (o.error ? "error" : "-") : String(v))' "$1" "$2"
}
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }

echo "<!DOCTYPE html><title>blank</title>" >"$work/blank.html"
base=$(load "$work/blank.html" blank)
echo "## HTML viewer against the SVG: random call trees, headless Chromium"
echo
echo "\`bench/html-bench.sh ${sizes[*]}\` on $(nproc) CPUs, $(date -u +%Y-%m-%d); chromium $("$chromium" --version 2>/dev/null | awk '{ print $2 }'); a blank page's renderers: $(field "$base" renderer_rss_mb) MB RSS."
echo
echo "| stacks | output | file MB | render s / MB | first view ms | search ms | renderer RSS MB | DOM nodes | matched |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for n in "${sizes[@]}"; do
	folded="$work/$n.folded"
	python3 "$here/flamegraph-gen.py" "$n" 60 1 tree >"$folded"
	for kind in html svg svg0; do
		case $kind in
		html) out="$work/$n.html" r=$(render "$out" "$folded") label="HTML page" k=html ;;
		svg) out="$work/$n.svg" r=$(render "$out" "$folded") label="SVG" k=svg ;;
		svg0) out="$work/$n-all.svg" r=$(render "$out" --minwidth 0 "$folded") label="SVG --minwidth 0" k=svg ;;
		esac
		size=$(mb "$out")
		if [ "$k" = svg ] && awk -v s="$size" -v m="$svg_max" 'BEGIN { exit !(s > m) }'; then
			echo "| $n | $label | $size | ${r/ / \/ } | not loaded | | | | |"
			continue
		fi
		j=$(load "$out" "$k")
		echo "| $n | $label | $size | ${r/ / \/ } | $(field "$j" first_view_ms) | $(field "$j" search_ms) | $(field "$j" renderer_rss_mb) | $(field "$j" dom_nodes) | $(field "$j" matched) |"
		rm -f "$out"
	done
	rm -f "$folded"
done
echo
echo "First view: navigation to the first view drawn plus two animation frames (the SVG: load event and its script's init; the page: data decoded, graph drawn). Search: 'run_1' as a regex, to the next frame. The SVG leaves out frames under 0.1 px, so its matched share counts only what it drew; the page's is exact."
