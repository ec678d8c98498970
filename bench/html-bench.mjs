// SPDX-License-Identifier: MIT
// bench: loads one page (the SVG or the HTML viewer) in a fresh headless Chromium and
// prints one JSON line: time from the navigation to the first view drawn (the SVG: its
// load event and init; the page: its data decoded and the graph drawn) and two frames
// after, the time of a regex search, the renderer processes' RSS and the JS heap. KIND
// speedscope: FILE is the URL of speedscope's page with #profileURL= (served over HTTP:
// from file:// it fetches nothing), drawn once its title names the profile; no search.
// usage: node --experimental-websocket bench/html-bench.mjs FILE KIND(svg|html|speedscope|blank) WORKDIR
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findChromium, launch } from "../tests/flamegraph/browser/cdp.mjs";

const [file, kind, workdir] = process.argv.slice(2);
const TIMEOUT = Number(process.env.PAGE_TIMEOUT || 120) * 1000;

// RSS (kB) of the browser's renderer processes (its process group)
function rendererRss(pgid) {
	let kb = 0;
	for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
		try {
			const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
			const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			if (Number(fields[2]) !== pgid)
				continue;
			if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer"))
				continue;
			const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
			kb += m ? Number(m[1]) : 0;
		} catch (e) {
			// gone meanwhile
		}
	}
	return kb;
}

const s = await launch(findChromium(), mkdtempSync(join(workdir, "chromium-")), "1300,800");
const out = { file, kind };
try {
	await s.send("Performance.enable");
	const t0 = Date.now();
	await s.send("Page.navigate", { url: kind === "speedscope" ? file : "file://" + file });
	const ready = kind === "html" ? "document.body && document.body.dataset.ready !== undefined"
		: kind === "speedscope" ? "document.title.endsWith(' - speedscope') && !!document.querySelector('canvas')"
		: "document.readyState === 'complete'";
	await s.until(ready, TIMEOUT);
	await s.js("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
	out.first_view_ms = Date.now() - t0;
	if (kind === "html") {
		out.ready_state = await s.js("document.body.dataset.ready");
		out.ready_at_ms = Math.round(await s.js("scorch.readyAt"));
	}
	const t1 = Date.now();
	if (kind !== "blank" && kind !== "speedscope")
		out.matched = kind === "html" ? await s.js("scorch.search('run_1')")
		: await s.js("(fg_search('run_1'), document.getElementById('matched').textContent)");
	await s.js("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
	out.search_ms = Date.now() - t1;
	const m = Object.fromEntries((await s.send("Performance.getMetrics")).metrics.map((x) => [x.name, x.value]));
	out.js_heap_mb = +(m.JSHeapUsedSize / 1048576).toFixed(1);
	out.dom_nodes = m.Nodes;
	out.renderer_rss_mb = +(rendererRss(s.pid) / 1024).toFixed(1);
	out.errors = s.exceptions.length + s.consoleErrors.length;
} catch (e) {
	out.error = e.message;
} finally {
	await s.close();
}
console.log(JSON.stringify(out));
