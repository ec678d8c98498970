// SPDX-License-Identifier: MIT
// tests/flamegraph: the HTML profile viewer in headless Firefox, driven over WebDriver
// BiDi (bidi.mjs) with real mouse and key input, from a file:// URL as a user opens it:
// the page draws, ?s= and the search box give the matched share computed here from the
// folded input, views, zoom by click, a diff's colours, Compare, and a profile of
// hostile names (no dialog, no request, no console error). Screenshots in ARTIFACTS.
// usage: node --experimental-websocket html_firefox_test.mjs SCORCH ARTIFACTS
// Exit 77 (skip) when firefox is missing, unless CI=true.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { findFirefox, launch } from "./bidi.mjs";
import { HOSTILE, checkHostile, checker, pageHelpers, removeDir, requireBrowser, workdir } from "./page_test.mjs";

const [scorch, artifacts] = process.argv.slice(2);
const firefox = findFirefox();
requireBrowser(firefox, "firefox (install firefox-esr: scripts/setup.sh --test)");
const { dir, run, folded } = workdir(scorch, artifacts, "fg-firefox-");

// The share of the samples under the stack prefix @under (frames) whose stack has a
// frame below that prefix, or the prefix's last, matching @re: the page's "Matched: P%".
function matchedShare(lines, re, under = []) {
	let sum = 0, base = 0;
	for (const l of lines) {
		const m = /^(.*) (\d+)$/.exec(l), frames = m[1].split(";"), n = Number(m[2]);
		if (under.some((f, i) => frames[i] !== f))
			continue;
		base += n;
		if (frames.slice(Math.max(under.length - 1, 0)).some((f) => re.test(f)))
			sum += n;
	}
	const pct = 100 * sum / base;
	return "Matched: " + (pct === 100 ? "100" : pct.toFixed(1)) + "%";
}

const BASIC = ["main;foo;bar 10", "main;foo 5", "main;baz 3", "java;Thread.run 3",
	"java;Thread.run.lambda;b 2", "java;Thread.run;a 4"];
run(["flamegraph", folded("basic.folded", BASIC), "-o", join(dir, "basic.html")]);
// diff: b grew by 10, x shrank by 6, c vanished, d is new
const beforeF = folded("before.folded", ["main;a;x 10", "main;b 5", "main;c 3"]);
const afterF = folded("after.folded", ["main;a;x 4", "main;b 15", "main;d 3"]);
run(["diff", beforeF, afterF, "-o", join(dir, "diff.html")]);
run(["flamegraph", afterF, "-o", join(dir, "after.html")]);
// normalizing: before 20 samples split evenly, after 40 with a = 3 b
const evenF = folded("even.folded", ["main;a 10", "main;b 10"]);
run(["flamegraph", folded("skew.folded", ["main;a 30", "main;b 10"]), "-o", join(dir, "skew.html")]);
run(["flamegraph", folded("hostile.folded", HOSTILE), "-o", join(dir, "hostile.html")]);

const { check, fail, failures } = checker();
const s = await launch(firefox, dir, "1300,800");
const cleanup = () => removeDir(dir);
// firefox is killed and its profile removed however the test ends: a signal, or a
// step that never answers (before ctest's own timeout would leave firefox behind)
const abort = async (why) => {
	fail(why);
	await s.close();
	cleanup();
	process.exit(1);
};
for (const sig of ["SIGINT", "SIGTERM"])
	process.on(sig, () => abort("stopped by " + sig));
setTimeout(() => abort("no answer from firefox in 100 s"), 100000).unref();
const helpers = pageHelpers(s, dir, artifacts, check);
const { text, state, frame, tableRows, center, open, shot, search } = helpers;
// Pixels of the graph's canvas that are not the background, and the distinct colours.
const inked = () => s.js(`(() => { const c = document.getElementById("graph-canvas");
	const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, seen = new Set();
	let n = 0;
	for (let i = 0; i < d.length; i += 4) {
		if (d[i + 3] && (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250)) {
			n++;
			seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
		}
	}
	return { n, colours: seen.size, w: c.width, h: c.height }; })()`);

try {
	// the observers see a dialog, a request and a console error when a page makes them
	// (port 65535: nothing listens, and firefox refuses well-known ports such as 9)
	writeFileSync(join(dir, "probe.html"), "<!DOCTYPE html><title>probe</title>");
	await s.load("file://" + join(dir, "probe.html"));
	await s.js(`(console.error("probe error"), new Image().src = "http://127.0.0.1:65535/probe.png",
		setTimeout(() => alert("probe dialog"), 0), true)`);
	for (const end = Date.now() + 10000; Date.now() < end && !(s.dialogs.length && s.consoleErrors.length &&
		s.requests.some((u) => u.includes("probe.png")));)
		await new Promise((r) => setTimeout(r, 20));
	check(s.dialogs.includes("probe dialog") && s.consoleErrors.includes("probe error") &&
		s.requests.some((u) => u.startsWith("http://127.0.0.1:65535/")), "the observers see a page's dialog, console error and request",
		[s.dialogs, s.consoleErrors, s.requests]);
	if (s.dialogs.length)
		await s.send("browsingContext.handleUserPrompt", { context: s.context, accept: true });
	s.dialogs.length = s.consoleErrors.length = s.requests.length = 0;

	await open("basic.html");
	let st = await state();
	check(st.view === "flame" && st.zoomed === null && st.total === 27, "opens as a flame graph of 27 samples", st);
	const ink = await inked();
	check(ink.n > 0.02 * ink.w * ink.h && ink.colours > 5, "the canvas is drawn", ink);
	const mainAt = await frame("main");
	check(mainAt !== null, "main is drawn");
	await s.move(mainAt);
	check((await text("details")) === "Function: main (18 samples, 66.67%)", "hover fills the details line",
		await text("details"));
	await shot("firefox-flame");

	// ?s= on load, then the search box: shares computed from the folded lines
	await open("basic.html", "?s=" + encodeURIComponent("^(foo|baz|a)$"));
	let want = matchedShare(BASIC, /^(foo|baz|a)$/);
	check(want === "Matched: 81.5%" && (await text("matched")) === want, "?s= gives the matched share", [want, await text("matched")]);
	await search("foo|bar");
	want = matchedShare(BASIC, /foo|bar/);
	check((await text("matched")) === want, "the search box gives the matched share (nested once)", [want, await text("matched")]);
	check(/[?&]s=foo%7Cbar/.test(await s.js("location.search")), "search kept in the URL", await s.js("location.search"));
	await search("foo(");
	check((await text("matched")) === "Invalid regex" && s.exceptions.length === 0, "an invalid regex is reported",
		await text("matched"));
	await search("foo|bar");

	// a click zooms; the share follows the zoomed frame
	await s.click(await frame("main"));
	st = await state();
	check(st.zoomed === "main" && st.total === 27, "click zooms", st);
	want = matchedShare(BASIC, /foo|bar/, ["main"]);
	check((await text("matched")) === want, "matched share relative to the zoom", [want, await text("matched")]);
	check((await text("crumbs")) === "all \u203a main", "breadcrumbs show the path", await text("crumbs"));
	await s.click(await frame("foo"));
	check((await state()).zoomed === "foo", "a second zoom", await state());
	await shot("firefox-zoom");
	await s.key("Escape");
	check((await state()).zoomed === null, "Escape resets the zoom", await state());

	// views: by key and by button
	await s.key("i");
	const rootY = (await frame("all")).y, leafY = (await frame("bar")).y;
	check((await state()).view === "icicle" && rootY < leafY, "i switches to the icicle", { rootY, leafY });
	check(/[?&]view=icicle/.test(await s.js("location.search")), "view kept in the URL");
	await shot("firefox-icicle");
	await s.click(await center("#view-table"));
	let rows = await tableRows();
	check((await state()).view === "table" && rows.length === 9, "the Table button shows 9 functions", rows.length);
	check(JSON.stringify(rows[0]) === JSON.stringify(["bar", "10", "37.04%", "10", "37.04%", ""]), "sorted by self", rows[0]);
	await s.click(await center("#fn-head th[data-key=total]"));
	rows = await tableRows();
	check(rows[0][0] === "main" && rows[0][3] === "18", "a click on Total sorts by total", rows[0]);
	await shot("firefox-table");
	await s.click(await s.js(`(() => { const td = [...document.querySelectorAll("#fn-body td.name")].find((t) => t.textContent === "foo");
		const b = td.getBoundingClientRect(); return { x: b.x + 10, y: b.y + b.height / 2 }; })()`));
	const callers = await s.js("scorch.sandwichRows('callers')");
	check((await state()).view === "sandwich" && JSON.stringify(callers) ===
		JSON.stringify([{ name: "foo", depth: 0, total: 15 }, { name: "main", depth: 1, total: 15 }]), "a row opens its sandwich", callers);
	await s.click(await center("#view-flame"));
	check((await state()).view === "flame", "the Flame button", await state());

	// a diff: grown frames red, shrunk ones blue
	await open("diff.html", "?view=table");
	rows = await tableRows();
	check(rows[0][0] === "b" && rows[0][3] === "+10 (+200.00%)" && rows[1][0] === "x" && rows[1][3] === "-6 (-60.00%)",
		"diff table sorted by the change of self", rows.slice(0, 2));
	await s.key("f");
	const px = async (name) => s.js(`(() => { const p = scorch.frameCenter(${JSON.stringify(name)});
		const c = document.getElementById("graph-canvas"), r = c.getBoundingClientRect(), d = devicePixelRatio;
		return [...c.getContext("2d").getImageData(Math.round((p.x - r.left + 10) * d), Math.round((p.y - r.top) * d), 1, 1).data]; })()`);
	const bpx = await px("b"), xpx = await px("x");
	check(bpx[0] === 255 && bpx[2] < 100, "grown frame red", bpx);
	check(xpx[2] === 255 && xpx[0] < 200, "shrunk frame blue", xpx);
	await shot("firefox-diff");

	// Compare reads a folded file picked from disk with the File API
	const compare = async (page, query, other) => {
		await open(page, query);
		const input = await s.send("script.evaluate", { expression: "document.getElementById('compare-file')",
			target: { context: s.context }, awaitPromise: false, resultOwnership: "root" });
		await s.send("input.setFiles", { context: s.context, element: { sharedId: input.result.sharedId }, files: [other] });
		await s.until("scorch.compared !== null || document.getElementById('status').textContent !== ''");
	};
	await compare("after.html", "?view=table", beforeF);
	rows = await tableRows();
	check((await state()).compared === "before.folded" && rows[0][0] === "b" && rows[0][3] === "+10 (+200.00%)",
		"Compare with a folded file", [await text("status"), rows.slice(0, 2)]);
	// normalized (?n=1): before doubled to after's 40, so b shrank; unchecked: b unchanged
	await compare("skew.html", "?view=table&n=1", evenF);
	const change = async (name) => (await tableRows()).find((r) => r[0] === name)[3];
	check(await s.js("scorch.normalized") && (await change("a")) === "+10 (+50.00%)" && (await change("b")) === "-10 (-50.00%)",
		"Compare normalized", [await change("a"), await change("b")]);
	await s.click(await center("#normalize"));
	check(!(await s.js("scorch.normalized")) && (await change("a")) === "+20 (+200.00%)" && (await change("b")) === "0 (+0.00%)",
		"the normalize box unchecked", [await change("a"), await change("b")]);

	// hostile names: nothing runs, nothing is fetched, nothing is logged
	await checkHostile(s, helpers, dir, check, "firefox-hostile");
} catch (e) {
	fail(e.stack);
} finally {
	await s.close();
	cleanup();
}
console.log("screenshots in " + artifacts);
process.exit(failures() ? 1 : 0);
