// SPDX-License-Identifier: MIT
// tests/flamegraph: drives headless Chromium over the DevTools protocol (cdp.mjs: no
// npm packages, Node's built-in WebSocket) to check the SVG's zoom, search, details
// line and URL state with real mouse and key input.
// usage: node --experimental-websocket browser_test.mjs FG_CLI
// Exit 77 (skip) when chromium is missing, unless CI=true.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findChromium, launch } from "./cdp.mjs";

const cli = process.argv[2];
const chromium = findChromium();
const onCI = process.env.CI === "true";
if (!chromium) {
	console.error("chromium not found" + (onCI ? " (CI=true: failing)" : ": skipping"));
	process.exit(onCI ? 1 : 77);
}
if (typeof WebSocket === "undefined") {
	console.error("this node has no WebSocket: run with --experimental-websocket (node >= 20.10)");
	process.exit(1);
}

const INPUT = [
	"main;foo;bar 10", "main;foo 5", "main;baz 3", "java;Thread.run 3",
	"java;Thread.run.lambda;b 2", "java;Thread.run;a 4",
].join("\n") + "\n";

const dir = mkdtempSync(join(tmpdir(), "fg-browser-"));
const svgPath = join(dir, "test.svg");
const r = spawnSync(cli, ["-o", svgPath], { input: INPUT });
if (r.status !== 0) {
	console.error("rendering failed: " + r.stderr);
	process.exit(1);
}

// a wall-clock graph: the on/off-CPU split in the titles must not confuse the script
const WALL = [
	"app;main;compute;burn 600", "app;main;wait;read;[off-cpu] 300",
	"app;main;wait;[runqueue] 100", "app;idle;[off-cpu] 50",
].join("\n") + "\n";
const wallPath = join(dir, "wall.svg");
const rw = spawnSync(cli, ["--colors", "wall", "-o", wallPath], { input: WALL });
if (rw.status !== 0) {
	console.error("rendering failed: " + rw.stderr);
	process.exit(1);
}

let failures = 0;
function check(cond, what, got) {
	if (cond) {
		console.log("ok   " + what);
	} else {
		failures++;
		console.log("FAIL " + what + (got === undefined ? "" : ": got " + JSON.stringify(got)));
	}
}

const s = await launch(chromium, dir, "1300,400");
const { send, waitEvent, js, load } = s;
const exceptions = s.exceptions;

// The on-screen centre of the frame called @name (and not hidden).
async function frameCenter(name) {
	return js(`(() => {
		const g = [...document.querySelectorAll("#frames > g")].find((g) =>
			g.querySelector("title").textContent.startsWith(${JSON.stringify(name)} + " (") &&
			!g.classList.contains("hide"));
		const b = g.querySelector("rect").getBoundingClientRect();
		return { x: b.x + Math.min(b.width / 2, 20), y: b.y + b.height / 2 };
	})()`);
}
async function elementCenter(id) {
	return js(`(() => { const b = document.getElementById(${JSON.stringify(id)}).getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; })()`);
}
async function click(p) {
	const base = { x: p.x, y: p.y, button: "left", clickCount: 1 };
	await send("Input.dispatchMouseEvent", { type: "mouseMoved", x: p.x, y: p.y });
	await send("Input.dispatchMouseEvent", { type: "mousePressed", ...base });
	await send("Input.dispatchMouseEvent", { type: "mouseReleased", ...base });
}
function frameState(name) {
	return js(`(() => {
		const g = [...document.querySelectorAll("#frames > g")].find((g) =>
			g.querySelector("title").textContent.startsWith(${JSON.stringify(name)} + " ("));
		const r = g.querySelector("rect");
		return { x: Number(r.getAttribute("x")), width: Number(r.getAttribute("width")),
			cls: g.getAttribute("class") || "", fill: r.getAttribute("fill"),
			label: g.querySelector("text").textContent };
	})()`);
}
const text = (id) => js(`document.getElementById(${JSON.stringify(id)}).textContent`);
const visible = (id) => js(`getComputedStyle(document.getElementById(${JSON.stringify(id)})).display !== "none"`);

// Answers the search prompt (Ctrl-F, F3 or the Search button) with @term.
async function searchWith(trigger, term) {
	const dialog = waitEvent("Page.javascriptDialogOpening");
	const done = trigger();
	const d = await dialog;
	check(d.type === "prompt", "search opens a prompt", d.type);
	await send("Page.handleJavaScriptDialog", { accept: true, promptText: term });
	await done;
}
async function key(code, keyCode, modifiers) {
	const k = { windowsVirtualKeyCode: keyCode, code, key: code.replace(/^Key/, "").toLowerCase(), modifiers };
	await send("Input.dispatchKeyEvent", { type: "rawKeyDown", ...k });
	await send("Input.dispatchKeyEvent", { type: "keyUp", ...k });
}

const url = "file://" + svgPath;
try {
	await load(url);

	// hover: details line and tooltip text
	const mainAt = await frameCenter("main");
	await send("Input.dispatchMouseEvent", { type: "mouseMoved", x: mainAt.x, y: mainAt.y });
	check((await text("details")) === "Function: main (18 samples, 66.67%)", "hover fills the details line",
		await text("details"));
	check(!(await visible("unzoom")), "Reset Zoom hidden before zooming");

	// click zooms: main spans the frame area, its subtree rescales, others hide
	await click(mainAt);
	let st = await frameState("main");
	check(st.x === 10 && st.width === 1180, "clicked frame spans the full width", st);
	st = await frameState("foo");
	// main = baz (9..12) + foo (12..27); bar is foo's right part (17..27)
	check(Math.abs(st.width - 1180 * 15 / 18) < 0.1 && Math.abs(st.x - (10 + 1180 * 3 / 18)) < 0.1,
		"child rescaled to the zoom", st);
	st = await frameState("bar");
	check(Math.abs(st.x - (10 + 1180 * 8 / 18)) < 0.1 && Math.abs(st.width - 1180 * 10 / 18) < 0.1,
		"grandchild rescaled with its offset", st);
	check((await frameState("java")).cls.includes("hide"), "sibling subtree hidden");
	st = await frameState("all");
	check(st.cls.includes("parent") && st.width === 1180, "root shown as a parent", st);
	check(await visible("unzoom"), "Reset Zoom shown");
	const search1 = await js("location.search");
	check(/[?&]x=9(&|$)/.test(search1) && /[?&]y=\d+/.test(search1), "zoom kept in the URL", search1);

	// Ctrl-F search inside the zoom: "a" (under java) is hidden, so not counted
	await searchWith(() => key("KeyF", 70, 2), "^(foo|baz|a)$");
	check((await text("matched")) === "Matched: 100%", "matched % is relative to the zoom", await text("matched"));
	check((await frameState("foo")).fill === "rgb(230,0,230)", "matches highlighted");
	check((await text("search")) === "Reset Search", "search button turns into Reset Search");

	// Reset Zoom: search reruns over the whole graph (15 + 3 + 4 of 27)
	await click(await elementCenter("unzoom"));
	st = await frameState("main");
	check(Math.abs(st.width - 1180 * 18 / 27) < 0.1, "Reset Zoom restores widths", st);
	check(!(await visible("unzoom")), "Reset Zoom hidden again");
	check((await text("matched")) === "Matched: 81.5%", "matched % recomputed after unzoom", await text("matched"));

	// nested matches count once: foo (15) contains bar (10) -> 15 / 27
	await click(await elementCenter("search")); // resets
	check((await text("search")) === "Search", "Reset Search clears the search");
	await searchWith(() => await_center("search"), "foo|bar");
	check((await text("matched")) === "Matched: 55.6%", "nested matches not double-counted", await text("matched"));

	// F3, invalid regex: reported, nothing thrown
	await searchWith(() => key("F3", 114, 0), "foo(");
	check((await text("matched")).startsWith("Invalid regex"), "invalid regex reported", await text("matched"));
	check(exceptions.length === 0, "no script exceptions", exceptions.map((e) => e.text));

	// Ctrl-I: ignore case
	await searchWith(() => key("F3", 114, 0), "FOO");
	check((await text("matched")) === "Matched: 0.0%", "search is case-sensitive by default", await text("matched"));
	await key("KeyI", 73, 2);
	check((await text("matched")) === "Matched: 55.6%", "Ctrl-I toggles ignore-case", await text("matched"));

	// reload with zoom and search in the URL
	await load(url + "?" + search1.slice(1).replace(/&?s=[^&]*/, "") + "&s=baz");
	st = await frameState("main");
	check(st.x === 10 && st.width === 1180, "zoom restored from the URL", st);
	check((await text("matched")) === "Matched: 16.7%", "search restored from the URL", await text("matched"));
	check(exceptions.length === 0, "still no script exceptions", exceptions.map((e) => e.text));

	// wall palette: zoom and search by name, the off-CPU marker found by a regex
	await load("file://" + wallPath);
	const waitAt = await frameCenter("wait");
	await click(waitAt);
	st = await frameState("wait");
	check(st.x === 10 && st.width === 1180, "wall: zoom on a mixed frame", st);
	st = await frameState("read");
	check(Math.abs(st.width - 1180 * 300 / 400) < 0.1, "wall: child rescaled", st);
	await click(await elementCenter("unzoom"));
	await searchWith(() => key("F3", 114, 0), "^\\[off-cpu\\]$");
	check((await text("matched")) === "Matched: 33.3%", "wall: search finds the [off-cpu] frames",
		await text("matched"));
	check(exceptions.length === 0, "wall: no script exceptions", exceptions.map((e) => e.text));
} catch (e) {
	failures++;
	console.log("FAIL " + e.stack);
} finally {
	await s.close();
	try {
		rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
	} catch (e) {
		console.log("note: could not remove " + dir + ": " + e.message);
	}
}
process.exit(failures ? 1 : 0);

// helper used inside searchWith's trigger: resolves the centre, then clicks it
async function await_center(id) {
	return click(await elementCenter(id));
}
