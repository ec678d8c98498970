// SPDX-License-Identifier: MIT
// tests/flamegraph: a small WebDriver BiDi client for headless Firefox (Node's built-in
// WebSocket, no npm packages): start the browser on a fresh profile, evaluate script,
// send input, collect what a page did (errors, console errors, dialogs, requests).
// The same session interface as cdp.mjs, so a test reads alike in both browsers.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function findFirefox() {
	return process.env.FIREFOX || ["/usr/bin/firefox-esr", "/usr/bin/firefox"].find(existsSync);
}

// Preferences of the fresh profile: no first-run pages, updates, telemetry or remote
// settings, so that the browser itself fetches nothing while a test watches.
const PREFS = {
	"app.normandy.enabled": false,
	"app.update.disabledForTesting": true,
	"browser.aboutwelcome.enabled": false,
	"browser.newtabpage.enabled": false,
	"browser.region.network.url": "",
	"browser.safebrowsing.downloads.enabled": false,
	"browser.safebrowsing.malware.enabled": false,
	"browser.safebrowsing.phishing.enabled": false,
	"browser.shell.checkDefaultBrowser": false,
	"browser.startup.homepage_override.mstone": "ignore",
	"browser.startup.page": 0,
	"browser.topsites.contile.enabled": false,
	"datareporting.healthreport.uploadEnabled": false,
	"datareporting.policy.dataSubmissionEnabled": false,
	"extensions.getAddons.cache.enabled": false,
	"extensions.update.enabled": false,
	"messaging-system.rsexperimentloader.enabled": false,
	"network.captive-portal-service.enabled": false,
	"network.connectivity-service.enabled": false,
	"network.dns.disablePrefetch": true,
	"network.http.speculative-parallel-limit": 0,
	"network.prefetch-next": false,
	"services.settings.server": "data:,",
	"toolkit.telemetry.reportingpolicy.firstRun": false,
	"toolkit.startup.max_resumed_crashes": -1,
};

// WebDriver key values of the named keys (the WebDriver spec's table).
const KEYS = { Escape: "\uE00C", Backspace: "\uE003", Enter: "\uE007" };

// Starts firefox with a new profile under @dir; resolves to a session on its first tab.
export async function launch(firefox, dir, size = "1300,700") {
	const profile = join(dir, "firefox-profile");
	mkdirSync(profile, { recursive: true });
	writeFileSync(join(profile, "user.js"),
		Object.entries(PREFS).map(([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});\n`).join(""));
	const [width, height] = size.split(",").map(Number);
	const browser = spawn(firefox, [
		"--headless", "--no-remote", "--profile", profile, "--remote-debugging-port", "0",
		"--width", String(width), "--height", String(height), "about:blank",
	], { stdio: ["ignore", "ignore", "pipe"], detached: true, env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: "1" } });
	// firefox and its content processes share its process group: see kill()
	const kill = () => {
		try {
			process.kill(-browser.pid, "SIGKILL");
		} catch (e) {
			// already gone
		}
	};
	process.on("exit", kill);
	const port = await new Promise((resolve, reject) => {
		let err = "";
		const t = setTimeout(() => reject(new Error("firefox did not start: " + err)), 60000);
		browser.stderr.on("data", (d) => {
			err += d;
			const m = /WebDriver BiDi listening on ws:\/\/[^:]+:(\d+)/.exec(err);
			if (m) {
				clearTimeout(t);
				resolve(m[1]);
			}
		});
		browser.on("exit", (code) => reject(new Error("firefox exited " + code + ": " + err)));
	}).catch((e) => {
		kill();
		throw e;
	});
	const ws = new WebSocket(`ws://127.0.0.1:${port}/session`);
	await new Promise((res, rej) => { ws.onopen = res; ws.onerror = rej; });

	let nextId = 1;
	const pending = new Map(), listeners = [];
	const s = { pid: browser.pid, exceptions: [], consoleErrors: [], dialogs: [], requests: [] };
	ws.onmessage = (ev) => {
		const msg = JSON.parse(ev.data);
		if (msg.id && pending.has(msg.id)) {
			const { resolve, reject } = pending.get(msg.id);
			pending.delete(msg.id);
			if (msg.type === "error")
				reject(new Error(msg.error + ": " + msg.message));
			else
				resolve(msg.result);
			return;
		}
		if (msg.type !== "event")
			return;
		const p = msg.params;
		if (msg.method === "log.entryAdded" && p.type === "javascript")
			s.exceptions.push(p.text);
		else if (msg.method === "log.entryAdded" && p.level === "error")
			s.consoleErrors.push(p.text);
		else if (msg.method === "browsingContext.userPromptOpened")
			s.dialogs.push(p.message);
		else if (msg.method === "network.beforeRequestSent")
			s.requests.push(p.request.url);
		for (const l of listeners.slice())
			l(msg);
	};
	s.send = (method, params = {}) => {
		const id = nextId++;
		ws.send(JSON.stringify({ id, method, params }));
		return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
	};
	// The value of the expression @expr (awaited if a promise), through JSON.
	s.js = async (expr) => {
		const res = await s.send("script.evaluate", {
			expression: `(async () => JSON.stringify(await (${expr})))()`,
			target: { context: s.context }, awaitPromise: true, resultOwnership: "none",
		});
		if (res.type === "exception")
			throw new Error("evaluate failed: " + res.exceptionDetails.text + " in " + expr);
		return res.result.type === "string" ? JSON.parse(res.result.value) : undefined;
	};
	s.load = (url) => s.send("browsingContext.navigate", { context: s.context, url, wait: "complete" });
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
	const mouse = (actions) => s.send("input.performActions", {
		context: s.context,
		actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions }],
	});
	const at = (p) => ({ type: "pointerMove", x: Math.round(p.x), y: Math.round(p.y), duration: 0 });
	s.move = (p) => mouse([at(p)]);
	s.click = (p) => mouse([at(p), { type: "pointerDown", button: 0 }, { type: "pointerUp", button: 0 }]);
	s.drag = (a, b) => mouse([at(a), { type: "pointerDown", button: 0 }, at(b), { type: "pointerUp", button: 0 }]);
	const keys = (values) => s.send("input.performActions", {
		context: s.context,
		actions: [{ type: "key", id: "keyboard", actions: values.flatMap((value) =>
			[{ type: "keyDown", value }, { type: "keyUp", value }]) }],
	});
	// A printable key (@key "i", "/", "?") or a named one ("Escape", "Backspace").
	s.key = (key) => keys([KEYS[key] || key]);
	s.type = (text) => keys([...text]);
	s.screenshot = async (path) => {
		const r = await s.send("browsingContext.captureScreenshot", { context: s.context });
		writeFileSync(path, Buffer.from(r.data, "base64"));
	};
	s.close = async () => {
		ws.close();
		const exited = new Promise((res) => (browser.exitCode !== null ? res() : browser.on("exit", res)));
		kill();
		await exited;
		process.off("exit", kill);
	};
	try {
		await s.send("session.new", { capabilities: { alwaysMatch: { unhandledPromptBehavior: { default: "ignore" } } } });
		const tree = await s.send("browsingContext.getTree", { maxDepth: 0 });
		s.context = tree.contexts[0].context;
		await s.send("browsingContext.setViewport", { context: s.context, viewport: { width, height } });
		// the page's own requests, dialogs and messages only (not the browser's)
		await s.send("session.subscribe", {
			events: ["log.entryAdded", "browsingContext.userPromptOpened", "network.beforeRequestSent"],
			contexts: [s.context],
		});
	} catch (e) {
		await s.close();
		throw e;
	}
	return s;
}
