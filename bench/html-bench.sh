#!/bin/bash
# SPDX-License-Identifier: MIT
# bench: the HTML profile viewer against the SVG flame graph on the same profiles, same
# run: file size and render time (scorch flamegraph), and in headless Chromium the time
# from the navigation to the first view drawn, a regex search, the renderer's RSS.
# usage: bench/html-bench.sh [STACKS...]   (default: 10000 100000 1000000)
# The profiles are random call trees (bench/flamegraph-gen.py tree, at most 60 deep):
# STACKS distinct stacks, as many tree nodes. The SVG is drawn twice: by default
# (frames under 0.1 px left out) and with --minwidth 0 (every frame, what the page
# holds), the page twice: by default (every frame) and with --minwidth 0.1 (the
# default SVG's frames); an SVG over SVG_MAX_MB (default 100) is measured on disk only. speedscope
# (the npm package, installed into the work directory from npm's registry, or taken
# from SPEEDSCOPE_DIR, its dist/release folder) loads scorch's speedscope JSON of the
# same profile, served over HTTP on 127.0.0.1 (port SS_PORT, default 8765). Each page
# is loaded once, in a fresh browser (bench/html-bench.mjs); prints a markdown section.
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
load() { # FILE KIND: the JSON line of html-bench.mjs; a page that stops answering (a
	# renderer gone) is given up a minute past PAGE_TIMEOUT, as an error
	timeout -k 5 $((${PAGE_TIMEOUT:-120} + 60)) \
		node --experimental-websocket --no-warnings "$here/html-bench.mjs" "$1" "$2" "$work" ||
		echo '{"error":"no answer"}'
}
field() { # JSON KEY
	node -e 'const o = JSON.parse(process.argv[1]); const v = o[process.argv[2]];
		process.stdout.write(v === undefined ? (o.error ? "error" : "-") : String(v))' "$1" "$2"
}
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# speedscope, served with the profiles it loads
ss=${SPEEDSCOPE_DIR:-}
if [ -z "$ss" ]; then
	need_tool npm npm
	npm install --prefix "$work/ss" speedscope@1.25.0 --no-audit --no-fund >"$work/npm.log" 2>&1 ||
		die "cannot install speedscope from npm: $(tail -n 1 "$work/npm.log")" \
			"set SPEEDSCOPE_DIR to a speedscope dist/release folder"
	ss="$work/ss/node_modules/speedscope/dist/release"
fi
[ -f "$ss/index.html" ] || die "no speedscope index.html in $ss" "set SPEEDSCOPE_DIR to its dist/release folder"
ss_port=${SS_PORT:-8765}
mkdir -p "$work/srv"
cp -r "$ss"/. "$work/srv/"
python3 -m http.server --bind 127.0.0.1 --directory "$work/srv" "$ss_port" >/dev/null 2>&1 &
lg_pid=$!
for _ in $(seq 50); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $ss_port), 0.2)" 2>/dev/null && break
	sleep 0.1
done
ss_url="http://127.0.0.1:$ss_port/index.html#profileURL=http://127.0.0.1:$ss_port/profile.json"

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
	for kind in html html01 svg svg0 speedscope; do
		case $kind in
		speedscope) out="$work/srv/profile.json" r=$(render "$out" "$folded") label="speedscope (scorch's JSON)" k=speedscope ;;
		html) out="$work/$n.html" r=$(render "$out" "$folded") label="HTML page" k=html ;;
		html01) out="$work/$n-01.html" r=$(render "$out" --minwidth 0.1 "$folded") label="HTML page --minwidth 0.1" k=html ;;
		svg) out="$work/$n.svg" r=$(render "$out" "$folded") label="SVG" k=svg ;;
		svg0) out="$work/$n-all.svg" r=$(render "$out" --minwidth 0 "$folded") label="SVG --minwidth 0" k=svg ;;
		esac
		size=$(mb "$out")
		if [ "$k" = svg ] && awk -v s="$size" -v m="$svg_max" 'BEGIN { exit !(s > m) }'; then
			echo "| $n | $label | $size | ${r/ / \/ } | not loaded | | | | |"
			continue
		fi
		if [ "$k" = speedscope ]; then j=$(load "$ss_url" speedscope); else j=$(load "$out" "$k"); fi
		search=$(field "$j" search_ms)
		[ "$k" != speedscope ] || search="n/a"
		echo "| $n | $label | $size | ${r/ / \/ } | $(field "$j" first_view_ms) | $search | $(field "$j" renderer_rss_mb) | $(field "$j" dom_nodes) | $(field "$j" matched) |"
		rm -f "$out"
	done
	rm -f "$folded"
done
echo
echo "First view: navigation to the first view drawn plus two animation frames (the SVG: load event and its script's init; the page: data decoded, graph drawn; speedscope: its title names the profile and its canvas is drawn, over HTTP on this machine). Search: 'run_1' as a regex, to the next frame. The SVG leaves out frames under 0.1 px, so its matched share counts only what it drew; the page's is exact. With --minwidth 0.1 the page leaves out the same frames as the SVG (their counts stay in the frame below as its own)."
