// SPDX-License-Identifier: MIT
// tests/flamegraph: a small DevTools-protocol client for headless Chromium (Node's
// built-in WebSocket, no npm packages): start the browser, evaluate script, send
// input, collect what a page did (exceptions, console errors, dialogs, requests).
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function findChromium() {
	return process.env.CHROMIUM || ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
}

// Starts chromium with its profile under @dir; resolves to a session on its first page.
export async function launch(chromium, dir, size = "1300,700") {
	const browser = spawn(chromium, [
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-port=0", "--user-data-dir=" + join(dir, "profile"),
		"--window-size=" + size, "about:blank",
	], { stdio: ["ignore", "ignore", "pipe"], detached: true }); // its own group: see close()
	const port = await new Promise((resolve, reject) => {
		let err = "";
		const t = setTimeout(() => reject(new Error("chromium did not start: " + err)), 30000);
		browser.stderr.on("data", (d) => {
			err += d;
			const m = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(err);
			if (m) {
				clearTimeout(t);
				resolve(m[1]);
			}
		});
		browser.on("exit", (code) => reject(new Error("chromium exited " + code + ": " + err)));
	});
	const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
	const page = targets.find((t) => t.type === "page");
	const ws = new WebSocket(page.webSocketDebuggerUrl);
	await new Promise((res, rej) => { ws.onopen = res; ws.onerror = rej; });

	let nextId = 1;
	const pending = new Map(), listeners = [];
	const s = { pid: browser.pid, exceptions: [], consoleErrors: [], dialogs: [], requests: [] };
	ws.onmessage = (ev) => {
		const msg = JSON.parse(ev.data);
		if (msg.id && pending.has(msg.id)) {
			const { resolve, reject } = pending.get(msg.id);
			pending.delete(msg.id);
			if (msg.error)
				reject(new Error(JSON.stringify(msg.error)));
			else
				resolve(msg.result);
			return;
		}
		if (!msg.method)
			return;
		const p = msg.params;
		if (msg.method === "Runtime.exceptionThrown")
			s.exceptions.push(p.exceptionDetails.exception ? p.exceptionDetails.exception.description : p.exceptionDetails.text);
		else if (msg.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "assert"))
			s.consoleErrors.push(p.args.map((a) => a.value ?? a.description).join(" "));
		else if (msg.method === "Log.entryAdded" && p.entry.level === "error")
			s.consoleErrors.push(p.entry.text);
		else if (msg.method === "Page.javascriptDialogOpening")
			s.dialogs.push(p.message);
		else if (msg.method === "Network.requestWillBeSent")
			s.requests.push(p.request.url);
		for (const l of listeners.slice())
			l(msg);
	};
	s.send = (method, params = {}) => {
		const id = nextId++;
		ws.send(JSON.stringify({ id, method, params }));
		return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
	};
	s.waitEvent = (method, ms = 15000) => new Promise((resolve, reject) => {
		const t = setTimeout(() => reject(new Error("timeout waiting for " + method)), ms);
		const l = (msg) => {
			if (msg.method === method) {
				clearTimeout(t);
				listeners.splice(listeners.indexOf(l), 1);
				resolve(msg.params);
			}
		};
		listeners.push(l);
	});
	s.js = async (expr) => {
		const res = await s.send("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true });
		if (res.exceptionDetails)
			throw new Error("evaluate failed: " + JSON.stringify(res.exceptionDetails));
		return res.result.value;
	};
	s.load = async (url) => {
		const loaded = s.waitEvent("Page.loadEventFired");
		await s.send("Page.navigate", { url });
		await loaded;
	};
	// Polls @expr (a boolean expression) until true; throws after @ms.
	s.until = async (expr, ms = 15000) => {
		const end = Date.now() + ms;
		while (Date.now() < end) {
			if (await s.js(expr))
				return;
			await new Promise((r) => setTimeout(r, 20));
		}
		throw new Error("timeout waiting for " + expr);
	};
	s.move = (p) => s.send("Input.dispatchMouseEvent", { type: "mouseMoved", x: p.x, y: p.y });
	s.click = async (p) => {
		const base = { x: p.x, y: p.y, button: "left", clickCount: 1 };
		await s.move(p);
		await s.send("Input.dispatchMouseEvent", { type: "mousePressed", ...base });
		await s.send("Input.dispatchMouseEvent", { type: "mouseReleased", ...base });
	};
	s.drag = async (a, b) => {
		await s.move(a);
		await s.send("Input.dispatchMouseEvent", { type: "mousePressed", x: a.x, y: a.y, button: "left", clickCount: 1 });
		await s.send("Input.dispatchMouseEvent", { type: "mouseMoved", x: b.x, y: b.y, button: "left", buttons: 1 });
		await s.send("Input.dispatchMouseEvent", { type: "mouseReleased", x: b.x, y: b.y, button: "left", clickCount: 1 });
	};
	// A printable key (@key "i", "/", "?") or a named one ("Escape", "Backspace").
	s.key = async (key) => {
		const named = { Escape: 27, Backspace: 8, Enter: 13 };
		const k = { key, windowsVirtualKeyCode: named[key] || key.toUpperCase().charCodeAt(0) };
		if (!named[key])
			k.text = key;
		await s.send("Input.dispatchKeyEvent", { type: named[key] ? "rawKeyDown" : "keyDown", ...k });
		await s.send("Input.dispatchKeyEvent", { type: "keyUp", ...k });
	};
	s.type = (text) => s.send("Input.insertText", { text });
	s.screenshot = async (path) => {
		const r = await s.send("Page.captureScreenshot", { format: "png" });
		writeFileSync(path, Buffer.from(r.data, "base64"));
	};
	s.close = async () => {
		ws.close();
		const exited = new Promise((res) => (browser.exitCode !== null ? res() : browser.on("exit", res)));
		// chromium and its helper processes (its process group), which would otherwise
		// go on writing the profile after it is removed
		try {
			process.kill(-browser.pid, "SIGKILL");
		} catch (e) {
			browser.kill("SIGKILL");
		}
		await exited;
	};
	await s.send("Page.enable");
	await s.send("Runtime.enable");
	await s.send("Log.enable");
	await s.send("Network.enable");
	return s;
}
