// SPDX-License-Identifier: MIT
// tests/flamegraph: the HTML profile viewer in headless Chromium, driven over the
// DevTools protocol (cdp.mjs) with real mouse and key input: search, zoom, views,
// table, sandwich, the timeline's brush, a diff, and a profile of hostile names
// (no dialog, no request, no console error). Screenshots are kept in ARTIFACTS.
// usage: node --experimental-websocket html_test.mjs SCORCH ARTIFACTS
// Exit 77 (skip) when chromium is missing, unless CI=true.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { findChromium, launch } from "./cdp.mjs";
import { HOSTILE, checkHostile, checker, pageHelpers, removeDir, requireBrowser, workdir } from "./page_test.mjs";

const [scorch, artifacts] = process.argv.slice(2);
const chromium = findChromium();
requireBrowser(chromium, "chromium");
const { dir, run, folded } = workdir(scorch, artifacts, "fg-html-");

// main = foo (15, of which bar 10) + baz (3); java 9; total 27
const basic = folded("basic.folded", ["main;foo;bar 10", "main;foo 5", "main;baz 3", "java;Thread.run 3",
	"java;Thread.run.lambda;b 2", "java;Thread.run;a 4"]);
run(["flamegraph", basic, "-o", join(dir, "basic.html")]);
// --minwidth 15%: baz (3 of 27) goes, as from the SVG; bar (10) stays
run(["flamegraph", "--minwidth", "15%", basic, "-o", join(dir, "narrow.html")]);
// rec is recursive: its total counts once per stack (4 + 2 + 1), self 2 + 1
const rec = folded("rec.folded", ["main;rec;rec;leaf 4", "main;rec 2", "other;rec 1", "main;leaf 3"]);
run(["flamegraph", rec, "-o", join(dir, "rec.html")]);
// three intervals: 5, 8, 2
const iv = [folded("i1.folded", ["main;a 5"]), folded("i2.folded", ["main;b 7", "main;a 1"]),
	folded("i3.folded", ["main;c 2"])];
run(["flamegraph", "--intervals", ...iv, "-o", join(dir, "timeline.html")]);
// diff: b grew by 10, x shrank by 6, c vanished, d is new
const beforeF = folded("before.folded", ["main;a;x 10", "main;b 5", "main;c 3"]);
const afterF = folded("after.folded", ["main;a;x 4", "main;b 15", "main;d 3"]);
run(["diff", beforeF, afterF, "-o", join(dir, "diff.html")]);
run(["diff", "-n", beforeF, afterF, "-o", join(dir, "diffn.html")]);
run(["diff", "--negate", beforeF, afterF, "-o", join(dir, "diffneg.html")]);
run(["diff", "-n", "--negate", beforeF, afterF, "-o", join(dir, "diffnegn.html")]);
// normalizing: the same shape at twice the samples, and a = 3 b after where a = b before
const halfF = folded("half.folded", ["main;a;x 3", "main;b 2", "main;c 1"]);
run(["flamegraph", folded("twice.folded", ["main;a;x 6", "main;b 4", "main;c 2"]), "-o", join(dir, "twice.html")]);
const evenF = folded("even.folded", ["main;a 10", "main;b 10"]);
run(["flamegraph", folded("skew.folded", ["main;a 30", "main;b 10"]), "-o", join(dir, "skew.html")]);
run(["flamegraph", folded("hostile.folded", HOSTILE), "-o", join(dir, "hostile.html")]);
// a stack 60 frames deep of long names: its breadcrumbs overflow their row
const deepNames = Array.from({ length: 60 }, (_, i) => "a_rather_long_function_name_" + String(i).padStart(2, "0"));
run(["flamegraph", folded("deep.folded", ["main;" + deepNames.join(";") + " 5", "main;other 5"]), "-o", join(dir, "deep.html")]);
// off-CPU colours (--colors io, record's for --mode offcpu): the page and the SVG
const offF = folded("off.folded", ["app;read;ksys_read_[k];schedule_[k] 30", "app;sleep;schedule_[k] 20"]);
run(["flamegraph", "--colors", "io", offF, "-o", join(dir, "off.html")]);
run(["flamegraph", "--colors", "io", offF, "-o", join(dir, "off.svg")]);
// a chain graph (record --mode chain): the blocked stack, then up to 4 wakers above "--"
const chainF = folded("chain.folded", [
	"app;main;read;schedule_[k];--;try_to_wake_up_[k];w1f;w1comm;--;try_to_wake_up_[k];w2f;w2comm;--;try_to_wake_up_[k];w3f;w3comm 40",
	"app;main;read;schedule_[k];--;try_to_wake_up_[k];w1f;w1comm;--;hrtimer_wakeup_[k];[irq] 10",
	"app;main;poll;--;w1g;w1comm;--;w2g;w2comm;--;w3g;w3comm;--;w4f;w4comm 5",
	"app;main;sleep;--;[unknown waker] 3"]);
run(["flamegraph", "--colors", "chain", chainF, "-o", join(dir, "chain.html")]);
run(["flamegraph", "--colors", "chain", chainF, "-o", join(dir, "chain.svg")]);
// annotations: kernel, inlined, JIT frames
run(["flamegraph", folded("annot.folded", ["main;read;ksys_read_[k];vfs_read_[k] 5", "main;work;inl_[i] 2",
	"main;jitfn_[j] 1"]), "-o", join(dir, "annot.html")]);
// 20,000 callers of a millionth of main each beside one of 1,000,000: drawn at no zoom
const wide = ["main;hot 1000000"];
for (let i = 0; i < 20000; i++)
	wide.push("main;tiny_" + i + ";leaf 1");
const wideF = folded("wide.folded", wide);
run(["flamegraph", wideF, "-o", join(dir, "wide.html")]);
run(["flamegraph", "--minwidth", "0", wideF, "-o", join(dir, "wide-all.html")]);

const { check, fail, failures } = checker();
const s = await launch(chromium, dir, "1300,800");
const helpers = pageHelpers(s, dir, artifacts, check);
const { text, state, frame, tableRows, open, shot, search } = helpers;

try {
	await open("basic.html");
	let st = await state();
	check(st.view === "flame" && st.zoomed === null && st.total === 27, "opens as a flame graph of 27 samples", st);
	check(await s.js("document.querySelectorAll('script').length") === 3, "three script elements");
	await open("narrow.html");
	st = await state();
	const kept = await s.js(`["main", "foo", "bar", "baz"].map((n) => scorch.frameCenter(n, "main") !== null)`);
	check(st.total === 27 && JSON.stringify(kept) === "[true,true,true,false]",
		"--minwidth 15%: the narrow frames left out, the total kept", { total: st.total, kept });
	await open("basic.html");

	// hover: tooltip and details line
	const mainAt = await frame("main");
	check(mainAt !== null, "main is drawn");
	await s.move(mainAt);
	check((await text("details")) === "Function: main (18 samples, 66.67%)", "hover fills the details line",
		await text("details"));
	const tip = await s.js(`(() => { const t = document.getElementById("tooltip"); return { shown: !t.hidden, text: t.textContent }; })()`);
	check(tip.shown && tip.text.startsWith("main") && tip.text.includes("Total: 18 samples (66.67%)") &&
		tip.text.includes("Self: 0 samples (0.00%)"), "tooltip gives total and self", tip);
	await shot("html-flame");

	// search: 15 + 3 + 4 of 27, nested matches once
	await search("^(foo|baz|a)$");
	check((await text("matched")) === "Matched: 81.5%", "search shows the matched share", await text("matched"));
	check(/[?&]s=%5E%28foo%7Cbaz%7Ca%29%24/.test(await s.js("location.search")), "search kept in the URL",
		await s.js("location.search"));
	await search("foo|bar");
	check((await text("matched")) === "Matched: 55.6%", "nested matches counted once", await text("matched"));
	await search("foo(");
	check((await text("matched")) === "Invalid regex" && s.exceptions.length === 0, "an invalid regex is reported",
		await text("matched"));
	await search("foo|bar");

	// click zooms: the share is relative to the zoomed frame; breadcrumbs lead back
	await s.click(await frame("main"));
	st = await state();
	check(st.zoomed === "main", "click zooms", st);
	check((await text("matched")) === "Matched: 83.3%", "matched share relative to the zoom", await text("matched"));
	check((await text("crumbs")) === "all \u203a main", "breadcrumbs show the path", await text("crumbs"));
	const fooAt = await frame("foo"), bazAt = await frame("baz");
	check(fooAt && bazAt && fooAt.x > bazAt.x, "zoomed children drawn in name order", [bazAt, fooAt]);
	await s.click(await frame("foo"));
	check((await state()).zoomed === "foo" && (await text("crumbs")) === "all \u203a main \u203a foo",
		"a second zoom extends the breadcrumbs", await text("crumbs"));
	await s.key("u");
	check((await state()).zoomed === "main", "u zooms out one level", await state());
	await shot("html-zoom");
	await s.click(await s.js(`(() => { const b = document.querySelector("#crumbs button").getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; })()`));
	check((await state()).zoomed === null, "the first breadcrumb resets the zoom", await state());

	// the zoom is kept in the URL (the frames from the root), and a reload restores it
	await s.click(await frame("main"));
	await s.click(await frame("foo"));
	check(/[?&]z=main%3Bfoo(&|$)/.test(await s.js("location.search")), "zoom kept in the URL",
		await s.js("location.search"));
	await open("basic.html", await s.js("location.search"));
	check((await state()).zoomed === "foo" && (await text("crumbs")) === "all \u203a main \u203a foo",
		"a reload restores the zoom", [await state(), await text("crumbs")]);
	await s.key("r");
	check(!/[?&]z=/.test(await s.js("location.search")), "a reset zoom leaves the URL", await s.js("location.search"));
	await open("basic.html", "?s=foo%7Cbar&z=main%3Bnope");
	check((await state()).zoomed === null && (await text("matched")) === "Matched: 55.6%",
		"a path not in the page: no zoom", await state());

	// views by key: icicle puts the root at the top
	await s.key("i");
	st = await state();
	const rootY = (await frame("all")).y, leafY = (await frame("bar")).y;
	check(st.view === "icicle" && rootY < leafY, "i switches to the icicle", { st, rootY, leafY });
	check(/[?&]view=icicle/.test(await s.js("location.search")), "view kept in the URL");
	await shot("html-icicle");

	// the table, sorted by self: bar 10, foo 5, a 4, ...
	await s.key("t");
	let rows = await tableRows();
	check((await state()).view === "table" && rows.length === 9, "t shows the table of 9 functions", rows.length);
	check(JSON.stringify(rows[0]) === JSON.stringify(["bar", "10", "37.04%", "10", "37.04%", ""]), "sorted by self", rows[0]);
	check(await s.js(`document.querySelector("#fn-body tr.match td").textContent`) === "bar", "matches highlighted in the table");
	await s.click(await s.js(`(() => { const b = document.querySelector("#fn-head th[data-key=total]").getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; })()`));
	rows = await tableRows();
	check(rows[0][0] === "main" && rows[0][3] === "18", "a click on Total sorts by total", rows[0]);
	await shot("html-table");

	// a row opens the sandwich of foo: caller main below, callee bar above
	await s.click(await s.js(`(() => { const td = [...document.querySelectorAll("#fn-body td.name")].find((t) => t.textContent === "foo");
		const b = td.getBoundingClientRect(); return { x: b.x + 10, y: b.y + b.height / 2 }; })()`));
	st = await state();
	check(st.view === "sandwich" && st.sandwich === "foo", "a row opens its sandwich", st);
	const callers = await s.js("scorch.sandwichRows('callers')"), callees = await s.js("scorch.sandwichRows('callees')");
	check(JSON.stringify(callers) === JSON.stringify([{ name: "foo", depth: 0, total: 15 }, { name: "main", depth: 1, total: 15 }]),
		"sandwich callers", callers);
	check(JSON.stringify(callees) === JSON.stringify([{ name: "foo", depth: 0, total: 15 }, { name: "bar", depth: 1, total: 10 }]),
		"sandwich callees", callees);
	check(/[?&]fn=foo/.test(await s.js("location.search")), "sandwich kept in the URL");
	await shot("html-sandwich");
	await s.key("Escape");
	check((await state()).view === "table", "Escape leaves the sandwich", await state());

	// the root-frame (process) filter restricts every view
	await s.js(`(() => { const sel = document.getElementById("root-filter");
		sel.value = [...sel.options].find((o) => o.textContent.startsWith("java ")).value;
		sel.dispatchEvent(new Event("change")); })()`);
	rows = await tableRows();
	check((await state()).total === 9 && rows.length === 5 && !rows.some((r) => r[0] === "main"),
		"the root filter keeps java's stacks only", rows.map((r) => r[0]));
	check(/[?&]p=java/.test(await s.js("location.search")), "root filter kept in the URL");
	await open("basic.html", "?p=main&view=table");
	check((await state()).total === 18 && (await tableRows()).length === 4, "?p= on load", await state());

	// URL parameters on load
	await open("basic.html", "?s=baz&view=table");
	check((await state()).view === "table" && (await text("matched")) === "Matched: 11.1%", "?s= and ?view= on load",
		[await state(), await text("matched")]);

	// recursion: total once per stack, the sandwich merges both callers
	await open("rec.html", "?view=table");
	rows = await tableRows();
	const recRow = rows.find((r) => r[0] === "rec");
	check(recRow && recRow[1] === "3" && recRow[3] === "7", "recursive function: self 3, total 7", recRow);
	await open("rec.html", "?fn=rec");
	const recCallers = await s.js("scorch.sandwichRows('callers')");
	check(JSON.stringify(recCallers.map((r) => [r.name, r.total])) === JSON.stringify([["rec", 7], ["main", 6], ["other", 1]]),
		"sandwich of a recursive function", recCallers);
	const recCallees = await s.js("scorch.sandwichRows('callees')");
	check(JSON.stringify(recCallees.map((r) => [r.name, r.depth, r.total])) ===
		JSON.stringify([["rec", 0, 7], ["rec", 1, 4], ["leaf", 2, 4]]), "sandwich callees of a recursive function", recCallees);

	// the timeline: brushing the first interval restricts every view
	await open("timeline.html");
	check(await s.js("scorch.intervals") === 3 && !(await s.js("document.getElementById('timeline-box').hidden")),
		"three intervals: the timeline is shown");
	const tl = await s.js(`(() => { const b = document.getElementById("timeline").getBoundingClientRect();
		return { x: b.x, y: b.y + b.height / 2, w: b.width }; })()`);
	await s.drag({ x: tl.x + tl.w / 6, y: tl.y }, { x: tl.x + tl.w / 6 + 2, y: tl.y });
	st = await state();
	check(JSON.stringify(st.range) === "[0,0]" && st.total === 5, "brushing the first interval", st);
	check(/[?&]t=0-0/.test(await s.js("location.search")), "range kept in the URL");
	await s.key("t");
	rows = await tableRows();
	check(rows.length === 2 && rows[0][0] === "a" && rows[0][1] === "5", "the table follows the range", rows);
	await shot("html-timeline");
	await s.drag({ x: tl.x + tl.w / 2, y: tl.y }, { x: tl.x + tl.w - 2, y: tl.y });
	st = await state();
	check(JSON.stringify(st.range) === "[1,2]" && st.total === 10, "brushing the last two intervals", st);
	await open("timeline.html", "?t=1-1&view=flame");
	check((await state()).total === 8, "?t= on load", await state());
	await s.send("Input.dispatchMouseEvent", { type: "mousePressed", x: tl.x + 5, y: tl.y, button: "left", clickCount: 2 });
	await s.send("Input.dispatchMouseEvent", { type: "mouseReleased", x: tl.x + 5, y: tl.y, button: "left", clickCount: 2 });
	check((await state()).range === null && (await state()).total === 15, "a double-click restores every interval", await state());

	// diff: colours and the table sorted by the change of self
	await open("diff.html", "?view=table");
	rows = await tableRows();
	check(rows[0][0] === "b" && rows[0][3] === "+10 (+200.00%)" && rows[1][0] === "x" && rows[1][3] === "-6 (-60.00%)",
		"diff table sorted by the change of self", rows.slice(0, 2));
	check(rows.find((r) => r[0] === "d")[3] === "+3 (new)", "a new function says so", rows);
	await s.key("f");
	const px = async (name) => s.js(`(() => { const p = scorch.frameCenter(${JSON.stringify(name)});
		const c = document.getElementById("graph-canvas"), r = c.getBoundingClientRect(), d = devicePixelRatio;
		return [...c.getContext("2d").getImageData(Math.round((p.x - r.left + 10) * d), Math.round((p.y - r.top) * d), 1, 1).data]; })()`);
	const bpx = await px("b"), xpx = await px("x");
	check(bpx[0] === 255 && bpx[2] < 100, "grown frame red", bpx);
	check(xpx[2] === 255 && xpx[0] < 200, "shrunk frame blue", xpx);
	await shot("html-diff");

	// any page compares with another profile picked from disk: a scorch page, or folded text
	run(["flamegraph", afterF, "-o", join(dir, "after.html")]);
	run(["flamegraph", beforeF, "-o", join(dir, "before.html")]);
	for (const other of [join(dir, "before.html"), beforeF]) {
		await open("after.html", "?view=table");
		const doc = await s.send("DOM.getDocument");
		const input = await s.send("DOM.querySelector", { nodeId: doc.root.nodeId, selector: "#compare-file" });
		await s.send("DOM.setFileInputFiles", { nodeId: input.nodeId, files: [other] });
		await s.until("scorch.compared !== null || document.getElementById('status').textContent !== ''");
		rows = await tableRows();
		check(await s.js("scorch.compared") === other.split("/").pop() && rows[0][0] === "b" &&
			rows[0][3] === "+10 (+200.00%)" && rows.find((r) => r[0] === "c")[3] === "-3 (-100.00%)",
			"compared with " + other.split("/").pop() + ": the diff's table", [await text("status"), rows.slice(0, 3)]);
	}
	await shot("html-compare");

	// normalize (off by default, as scorch diff without -n): BEFORE scaled to AFTER's total
	const compare = async (page, other, query = "?view=table") => {
		await open(page, query);
		const doc = await s.send("DOM.getDocument");
		const input = await s.send("DOM.querySelector", { nodeId: doc.root.nodeId, selector: "#compare-file" });
		await s.send("DOM.setFileInputFiles", { nodeId: input.nodeId, files: [other] });
		await s.until("scorch.compared !== null || document.getElementById('status').textContent !== ''");
	};
	const deltas = async () => Object.fromEntries((await tableRows()).map((r) => [r[0], [r[3], r[6]]]));
	const toggle = async () => s.click(await s.js(`(() => { const b = document.getElementById("normalize").getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; })()`));
	await compare("twice.html", halfF);
	let d = await deltas();
	check(!(await s.js("scorch.normalized")) && !(await s.js("document.getElementById('normalize-box').hidden")) &&
		d.b[0] === "+2 (+100.00%)" && d.main[1] === "+6 (+100.00%)", "twice the samples: +100% everywhere, not normalized", d);
	await toggle();
	d = await deltas();
	check(await s.js("scorch.normalized") && Object.values(d).every((v) => /^0( \(\+0\.00%\))?$/.test(v[0]) && v[1] === "0 (+0.00%)"),
		"normalized: the same shape at twice the samples has no change", d);
	check(/[?&]n=1/.test(await s.js("location.search")), "normalize kept in the URL", await s.js("location.search"));
	check(/before's counts \u00d7 2 so that its total equals after's \(12 samples\)/.test(await text("table-note")),
		"the table states the scale", await text("table-note"));
	await s.key("f");
	check(JSON.stringify(await px("b")) === "[255,255,255,255]" && JSON.stringify(await px("x")) === "[255,255,255,255]",
		"normalized: unchanged frames are white", [await px("b"), await px("x")]);
	await shot("html-normalize");
	await compare("skew.html", evenF, "?view=table&n=1");
	d = await deltas();
	check(await s.js("document.getElementById('normalize').checked") && d.a[0] === "+10 (+50.00%)" && d.b[0] === "-10 (-50.00%)" &&
		d.main[1] === "0 (+0.00%)", "?n=1: before doubled, a grew by 10, b shrank by 10", d);
	await toggle();
	d = await deltas();
	check(!(await s.js("scorch.normalized")) && d.a[0] === "+20 (+200.00%)" && d.b[0] === "0 (+0.00%)" &&
		!/[?&]n=/.test(await s.js("location.search")), "unchecked: the raw change again", d);
	// a scorch diff page normalizes as scorch diff -n does (x: 10 before, scaled by 22/18,
	// against 4 after is -67.27%; -60% raw); a -n page has equal totals
	for (const [page, cliPage] of [["diff.html", "diffn.html"], ["diffneg.html", "diffnegn.html"]]) {
		await open(cliPage, "?view=table");
		const cli = await tableRows();
		check(await s.js("document.getElementById('normalize-box').hidden"), cliPage + ": equal totals, no toggle");
		await open(page, "?view=table&n=1");
		rows = await tableRows();
		check(await s.js("scorch.normalized") && JSON.stringify(rows) === JSON.stringify(cli) && rows[1][0] === "x" && rows[1][3] === "-8 (-67.27%)",
			"?n=1 on " + page + ": the table of scorch diff -n", [rows, cli]);
	}

	// a deep zoom: the zoomed frame's breadcrumb stays in view at the end of its row
	await open("deep.html", "?view=icicle");
	await s.click(await frame(deepNames[25]));
	st = await state();
	const crumb = await s.js(`(() => { const box = document.getElementById("crumbs").getBoundingClientRect();
		const cur = document.querySelector("#crumbs [aria-current]") || [...document.querySelectorAll("#crumbs button")].pop();
		const b = cur.getBoundingClientRect();
		return { text: cur.textContent, left: b.left, right: b.right, boxLeft: box.left, boxRight: box.right,
			overflow: document.getElementById("crumbs").scrollWidth > box.width }; })()`);
	check(st.zoomed === deepNames[25] && crumb.text === deepNames[25] && crumb.overflow &&
		crumb.left >= crumb.boxLeft - 1 && crumb.right <= crumb.boxRight + 1,
		"the zoomed frame's breadcrumb is in view", [st.zoomed, crumb]);
	await shot("html-deep-crumbs");

	// the root ("all") in the palette of the others, as the SVG draws it
	await open("off.html");
	const pixelOf = async (name) => s.js(`(() => { const p = scorch.frameCenter(${JSON.stringify(name)});
		const c = document.getElementById("graph-canvas"), r = c.getBoundingClientRect(), d = devicePixelRatio;
		return [...c.getContext("2d").getImageData(Math.round((p.x - r.left + 10) * d), Math.round((p.y - r.top) * d), 1, 1).data].slice(0, 3); })()`);
	const allPx = await pixelOf("all"), appPx = await pixelOf("app");
	const svgAll = /<rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"[^>]*\/>\s*<text[^>]*>all</.exec(readFileSync(join(dir, "off.svg"), "latin1"));
	check(svgAll && JSON.stringify(allPx) === JSON.stringify(svgAll.slice(1, 4).map(Number)),
		"the off-CPU root has the SVG's colour", [allPx, svgAll && svgAll.slice(1, 4)]);
	check(allPx[2] > allPx[0] && appPx[2] > appPx[0], "the off-CPU root is blue like the others", [allPx, appPx]);
	await shot("html-offcpu");

	// a chain graph: each frame in the SVG's colour, so each waker level in its hue; the
	// SVG's fills by name, shallowest first (the page's frameCenter() finds that one)
	const chainSvg = new Map();
	for (const m of readFileSync(join(dir, "chain.svg"), "latin1").matchAll(
		/<title>(.*?) \([^<]*<\/title><rect [^>]*y="([\d.]+)"[^>]*fill="rgb\((\d+),(\d+),(\d+)\)"/g)) {
		const name = m[1].replace("&lt;", "<").replace("&gt;", ">");
		chainSvg.set(name, (chainSvg.get(name) || []).concat([{ y: Number(m[2]), rgb: m.slice(3, 6).map(Number) }]));
	}
	for (const v of chainSvg.values())
		v.sort((a, b) => b.y - a.y);
	// the top row of a frame's box, above its label (and the hover outline)
	const topPixel = async (name, which = "main") => s.js(`(() => { const p = scorch.frameCenter(${JSON.stringify(name)}, ${JSON.stringify(which)});
		const c = ${JSON.stringify(which)} === "main" ? document.getElementById("graph-canvas") : document.querySelector("#sw-${which} canvas");
		const r = c.getBoundingClientRect(), d = devicePixelRatio;
		return p && [...c.getContext("2d").getImageData(Math.floor((p.x - r.left) * d), Math.floor((p.y - r.top - 7) * d), 1, 1).data].slice(0, 3); })()`);
	await open("chain.html");
	const chainNames = ["all", "app", "read", "schedule", "poll", "try_to_wake_up", "w1f", "w1g", "w1comm", "[unknown waker]",
		"hrtimer_wakeup", "[irq]", "w2f", "w2g", "w3f", "w3g", "w4f", "w4comm", "--"];
	const chainPx = {};
	for (const n of chainNames)
		chainPx[n] = await topPixel(n);
	const chainBad = chainNames.filter((n) => JSON.stringify(chainPx[n]) !== JSON.stringify(chainSvg.get(n)[0].rgb));
	check(chainBad.length === 0, "chain graph: the page's colours are the SVG's",
		chainBad.map((n) => [n, chainPx[n], chainSvg.get(n)[0].rgb]));
	const [w1, w2, w3, w4] = ["w1f", "w2f", "w3f", "w4f"].map((n) => chainPx[n]);
	check(chainPx.read[2] >= 205 && chainPx.read[0] === chainPx.read[1] && w1[1] === w1[2] && w1[0] <= 110 &&
		w2[0] === w2[2] && w2[1] <= 140 && w3[0] === w3[2] && w3[1] >= 200 && w4[0] === w4[1] && w4[2] <= 70,
		"chain graph: blocked blue, wakers aqua, purple, green, yellow", chainPx);
	await shot("html-chain");
	// zoomed into the first waker: the next "--" is grey, the waker's waker purple
	await s.click(await frame("w1f"));
	const ttwu2 = await topPixel("try_to_wake_up"), sep1 = await topPixel("--");
	check(JSON.stringify(ttwu2) === JSON.stringify(chainSvg.get("try_to_wake_up")[1].rgb) &&
		JSON.stringify(sep1) === "[160,160,160]", "chain graph: the second level's frames and separator",
		[ttwu2, chainSvg.get("try_to_wake_up")[1].rgb, sep1]);
	// the sandwich keeps each frame's level: w2f's callers go down through its waker
	await open("chain.html", "?fn=w2f");
	const swPx = [await topPixel("w2f", "callers"), await topPixel("try_to_wake_up", "callers"), await topPixel("w1comm", "callers")];
	const swWant = [chainSvg.get("w2f")[0].rgb, chainSvg.get("try_to_wake_up")[1].rgb, chainSvg.get("w1comm")[0].rgb];
	check(JSON.stringify(swPx) === JSON.stringify(swWant), "chain graph: the sandwich in the SVG's colours", [swPx, swWant]);
	await shot("html-chain-sandwich");

	// the table names frames as the graph does: no _[k], _[i], _[j]
	await open("annot.html", "?view=table");
	rows = await tableRows();
	const tnames = rows.map((r) => r[0]);
	check(["ksys_read", "vfs_read", "inl", "jitfn"].every((n) => tnames.includes(n)) && !tnames.some((n) => /_\[[kijw]\]$/.test(n)),
		"the table strips the annotations", tnames);
	check(await s.js(`([...document.querySelectorAll("#fn-body td.name")].find((t) => t.textContent === "vfs_read") || {}).title`) === "vfs_read_[k]",
		"the full name in the row's tooltip");

	// a frame drawn at no zoom is left out by default, the count said; --minwidth 0 keeps it
	const wideSize = statSync(join(dir, "wide.html")).size, wideAll = statSync(join(dir, "wide-all.html")).size;
	await open("wide.html");
	st = await state();
	const merged = await s.js(`({ hidden: document.getElementById("merged").hidden, text: document.getElementById("merged").textContent,
		title: document.getElementById("merged").title, nodes: scorch.nodes })`);
	check(st.total === 1020000 && merged.nodes === 3 && !merged.hidden && merged.text === "Merged: 1.96%" &&
		/20,000 samples \(1\.96%\) of 20,000 stacks/.test(merged.title) && /--minwidth 0/.test(merged.title),
		"narrow frames merged into main, the count shown", merged);
	check(await frame("hot") !== null && wideSize * 5 < wideAll, "the page is smaller", [wideSize, wideAll]);
	await s.key("t");
	check(/--minwidth 0 keeps every frame/.test(await text("table-note")), "the table says so", await text("table-note"));
	await open("wide-all.html");
	check(await s.js("scorch.nodes") === 40003 && await s.js("document.getElementById('merged').hidden"),
		"--minwidth 0: every frame", await s.js("scorch.nodes"));

	// hostile names: nothing runs, nothing is fetched, nothing is logged
	await checkHostile(s, helpers, dir, check, "html-hostile");
} catch (e) {
	fail(e.stack);
} finally {
	await s.close();
	removeDir(dir);
}
console.log("screenshots in " + artifacts);
process.exit(failures() ? 1 : 0);
