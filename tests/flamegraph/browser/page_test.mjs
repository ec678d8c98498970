// SPDX-License-Identifier: MIT
// tests/flamegraph: what the HTML page's browser tests share, whatever drives the browser
// (html_test.mjs: Chromium over CDP, cdp.mjs; html_firefox_test.mjs: Firefox over WebDriver
// BiDi, bidi.mjs): the fixtures, the tally of checks, the page's helpers over a session
// (both clients offer load, until, js, click, move, key, type, screenshot and record
// dialogs, requests, console errors and exceptions), and the hostile-names check.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Exits 77 (skip) when @browser was not found, 1 under CI=true; 1 without WebSocket.
export function requireBrowser(browser, what) {
	const onCI = process.env.CI === "true";

	if (!browser) {
		console.error(what + " not found" + (onCI ? " (CI=true: failing)" : ": skipping"));
		process.exit(onCI ? 1 : 77);
	}
	if (typeof WebSocket === "undefined") {
		console.error("this node has no WebSocket: run with --experimental-websocket (node >= 20.10)");
		process.exit(1);
	}
}

// A work directory (prefix @prefix) and the artifacts', with scorch @scorch run there.
export function workdir(scorch, artifacts, prefix) {
	mkdirSync(artifacts, { recursive: true });
	const dir = mkdtempSync(join(tmpdir(), prefix));
	return {
		dir,
		run(args, input) {
			const r = spawnSync(scorch, args, { input });
			if (r.status !== 0)
				throw new Error("scorch " + args.join(" ") + " failed: " + r.stderr);
		},
		// writes folded @lines (latin1: bytes as given) to @name; returns its path
		folded(name, lines) {
			const p = join(dir, name);
			writeFileSync(p, Buffer.from(lines.join("\n") + "\n", "latin1"));
			return p;
		},
	};
}

// Removes the work directory @dir (a browser may still hold files in it for a moment).
export function removeDir(dir) {
	try {
		rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
	} catch (e) {
		console.log("note: could not remove " + dir + ": " + e.message);
	}
}

// Names a profiled program may choose.
export const HOSTILE = [
	"main;<img src=x onerror=alert(1)> 5", "main;</script><script>alert(2)</script> 4",
	"main;<svg onload=alert(3)>;javascript:alert(4) 3", "main;\" onmouseover=\"alert(5) 2",
	"main;bad\xff\xfe\u00e2\u0080\u00ae;n\x00ul 2", "main;{{constructor.constructor('alert(6)')()}} 1",
	"__proto__;toString;hasOwnProperty 2",
];

// The tally: check() prints each result; failures() counts the failed.
export function checker() {
	let failed = 0;
	return {
		check(cond, what, got) {
			if (cond) {
				console.log("ok   " + what);
			} else {
				failed++;
				console.log("FAIL " + what + (got === undefined ? "" : ": got " + JSON.stringify(got)));
			}
		},
		fail(what) {
			failed++;
			console.log("FAIL " + what);
		},
		failures: () => failed,
	};
}

// The page's helpers over session @s, pages in @dir, screenshots in @artifacts.
export function pageHelpers(s, dir, artifacts, check) {
	const text = (id) => s.js(`document.getElementById(${JSON.stringify(id)}).textContent`);
	const center = (sel) => s.js(`(() => { const b = document.querySelector(${JSON.stringify(sel)}).getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; })()`);
	return {
		text,
		center,
		state: () => s.js("({ view: scorch.view, zoomed: scorch.zoomed, range: scorch.range, sandwich: scorch.sandwich, total: scorch.total, compared: scorch.compared })"),
		frame: (name, which) => s.js(`scorch.frameCenter(${JSON.stringify(name)}, ${JSON.stringify(which || "main")})`),
		tableRows: () => s.js(`[...document.querySelectorAll("#fn-body tr")].map((tr) =>
			[...tr.children].map((td) => td.textContent))`),
		async open(name, query = "") {
			await s.load("file://" + join(dir, name) + query);
			await s.until("document.body.dataset.ready !== undefined");
			check(await s.js("document.body.dataset.ready") === "1", name + query + ": the page is ready",
				await text("status"));
		},
		async shot(name) {
			await s.screenshot(join(artifacts, name + ".png"));
		},
		async search(term) {
			await s.click(await center("#search"));
			await s.js(`document.getElementById("search").select()`);
			await s.type(term);
			await s.key("Escape"); // leaves the box, so that keys are shortcuts again
		},
	};
}

// hostile.html (HOSTILE's page, in @dir): nothing runs, nothing is fetched, nothing is
// logged, whatever is clicked, zoomed or searched; the screenshot @shotName is kept.
export async function checkHostile(s, page, dir, check, shotName) {
	const before = { dialogs: s.dialogs.length, requests: s.requests.length };
	await page.open("hostile.html");
	for (const n of ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>", "javascript:alert(4)"]) {
		const p = await page.frame(n);
		check(p !== null, "hostile name drawn: " + n);
		if (p) {
			await s.move(p);
			await s.click(p);
			check((await page.state()).zoomed === n, "zoom into a hostile name", await page.state());
			await s.key("r");
		}
	}
	await page.search(".");
	await s.key("t");
	await s.click(await s.js(`(() => { const b = document.querySelector("#fn-body td.name").getBoundingClientRect();
		return { x: b.x + 10, y: b.y + b.height / 2 }; })()`));
	check((await page.state()).view === "sandwich", "sandwich of a hostile name");
	await s.key("Escape");
	const dom = await s.js(`({ img: document.querySelectorAll("img, svg, iframe, object, embed").length,
		scripts: document.querySelectorAll("script").length,
		names: [...document.querySelectorAll("#fn-body td.name")].map((t) => t.textContent) })`);
	check(dom.img === 0 && dom.scripts === 3, "no element made from a name", dom);
	check(dom.names.includes("<img src=x onerror=alert(1)>") && dom.names.includes("</script><script>alert(2)</script>"),
		"names shown as text", dom.names);
	check(dom.names.includes("bad\ufffd\ufffd\ufffd") && dom.names.includes("n?ul"),
		"bad UTF-8, the bidi override and NUL shown inert", dom.names.filter((n) => /bad|ul$/.test(n)));
	await page.shot(shotName);
	const pageUrl = "file://" + join(dir, "hostile.html");
	const extra = s.requests.slice(before.requests).filter((u) => !u.startsWith(pageUrl));
	check(s.dialogs.length === before.dialogs, "no dialog", s.dialogs);
	check(extra.length === 0, "no network request", extra);
	check(s.consoleErrors.length === 0 && s.exceptions.length === 0, "no console error or exception",
		[s.consoleErrors, s.exceptions]);
}
