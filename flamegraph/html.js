// SPDX-License-Identifier: MIT
// scorch's HTML profile viewer: decodes the embedded call tree and draws it on a
// canvas (flame graph, icicle), a function table and a sandwich of one function,
// with search, zoom and, for recordings in intervals, a timeline brush.
// Names are data: they only ever reach the page as textContent or canvas text.
"use strict";
(function () {
	const $ = (id) => document.getElementById(id);
	const ROW = 17, FONT = "12px ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace";
	const MATCH = "rgb(230,0,230)", TABLE_ROWS = 1000;
	let MIN_PX = 0.4;	// frames narrower are not drawn (meta.min_px: html.c's, one value)

	let meta, names, colors, levelColors = null, nameMatch = null;
	let data;		// the decoded profile: all intervals
	let tree;		// the tree drawn, for the current time range
	let views = {};		// FlameView instances by name
	let state = { view: "flame", range: null, root: null, sort: null, sandwich: null, prevView: "flame", normalize: false };
	let raw = null;		// a differential profile's counts as read: { self, oself, factor }
	let readyAt = 0;	// performance.now() when the first view was drawn
	let pageTotal = 0;	// the page's own profile's total, every interval

	// ---- numbers ----
	function fmtInt(v) {
		v = Math.round(v * meta.factor);
		const s = String(Math.abs(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
		return v < 0 ? "-" + s : s;
	}
	function fmtPct(a, b) {
		return b > 0 ? (100 * a / b).toFixed(2) + "%" : "0.00%";
	}
	function fmtDelta(a, b) {
		const d = a - b;
		const pct = b > 0 ? " (" + (d >= 0 ? "+" : "") + (100 * d / b).toFixed(2) + "%)" : a > 0 ? " (new)" : "";
		return (d > 0 ? "+" : "") + fmtInt(d) + pct;
	}

	// ---- decoding ----
	function b64bytes(s) {
		const bin = atob(s.replace(/\s+/g, ""));
		const out = new Uint8Array(bin.length);
		for (let i = 0; i < bin.length; i++)
			out[i] = bin.charCodeAt(i);
		return out;
	}
	async function gunzip(bytes) {
		if (typeof DecompressionStream === "undefined")
			throw new Error("this browser cannot decompress the profile (it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later)");
		const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
		return new Uint8Array(await new Response(stream).arrayBuffer());
	}
	function reader(buf) {
		let p = 0;
		const next = () => {
			let v = 0, m = 1, b;
			do {
				if (p >= buf.length)
					throw new Error("the embedded profile is truncated");
				b = buf[p++];
				v += (b & 127) * m;
				m *= 128;
			} while (b & 128);
			return v;
		};
		next.done = () => p === buf.length;
		return next;
	}
	// The embedded tree of a page whose string table has @nnames names.
	function decode(buf, nnames_want) {
		const rd = reader(buf), version = rd();
		if (version !== 1 && version !== 2)
			throw new Error("the embedded profile has a newer format: use a newer scorch's page");
		const diff = (rd() & 1) !== 0, n = rd(), nint = rd(), nnames = rd();
		if (nnames !== nnames_want)
			throw new Error("the embedded profile does not match its names");
		const colors = new Uint32Array(nnames);
		for (let i = 0; i < nnames; i++)
			colors[i] = rd();
		// version 2: the colours names take at chain levels >= 1 (html.c's put_level_colors())
		let levelColors = null;
		for (let k = version >= 2 ? rd() : 0, lv = 0, nm = 0; k > 0; k--) {
			const dl = rd();
			lv += dl;
			nm = (dl ? 0 : nm) + rd();
			if (lv < 1 || nm >= nnames)
				throw new Error("the embedded profile is corrupt");
			levelColors = levelColors || new Map();
			if (!levelColors.has(lv))
				levelColors.set(lv, new Map());
			levelColors.get(lv).set(nm, rd());
		}
		const depth = new Int32Array(n), name = new Int32Array(n);
		const self = new Float64Array(n), oself = diff ? new Float64Array(n) : null;
		name[0] = -1;
		for (let i = 1, prev = 0; i < n; i++) {
			depth[i] = prev + 1 - rd();
			name[i] = rd();
			if (depth[i] < 1 || depth[i] > prev + 1 || name[i] >= nnames)
				throw new Error("the embedded profile is corrupt");
			self[i] = rd();
			if (diff)
				oself[i] = rd();
			prev = depth[i];
		}
		const d = { n, depth, name, self, oself, diff, nint, colors, levelColors, level: null, sliceStart: null, sliceNode: null, sliceCount: null, intervalTotal: null };
		if (nint > 1) {
			const start = new Int32Array(nint + 1), nodes = [], counts = [];
			d.intervalTotal = new Float64Array(nint);
			for (let k = 0; k < nint; k++) {
				const m = rd();
				start[k] = nodes.length;
				let node = -1;
				for (let j = 0; j < m; j++) {
					node += rd();
					const c = rd();
					if (node >= n)
						throw new Error("the embedded profile is corrupt");
					nodes.push(node);
					counts.push(c);
					d.intervalTotal[k] += c;
				}
			}
			start[nint] = nodes.length;
			d.sliceStart = start;
			d.sliceNode = Int32Array.from(nodes);
			d.sliceCount = Float64Array.from(counts);
		}
		if (!rd.done())
			throw new Error("the embedded profile has trailing data");
		return d;
	}

	// The chain level of each node of @d: the "--" frames between it and the root (0: a
	// blocked stack, 1: its waker, 2: the waker's waker...), counted as the SVG counts them.
	function chainLevels(d) {
		const sep = names.indexOf("--"), level = new Int32Array(d.n), above = new Int32Array(d.n + 1);
		// above[k]: the level of the children of the open node of depth k
		for (let i = 1; i < d.n; i++) {
			level[i] = above[d.depth[i] - 1];
			above[d.depth[i]] = level[i] + (d.name[i] === sep ? 1 : 0);
		}
		return level;
	}

	// ---- trees: preorder arrays with totals and x offsets ----
	// A tree is { n, depth, name, self, oself, level, total, ototal, x, end, parent, off, rq }
	// (level: chain levels, null when the palette has none).
	function finishTree(t) {
		const n = t.n;
		t.parent = new Int32Array(n);
		t.end = new Int32Array(n);
		t.total = new Float64Array(n);
		t.x = new Float64Array(n);
		t.ototal = t.oself ? new Float64Array(n) : null;
		const stack = new Int32Array(n + 1);
		let sp = 0;
		stack[0] = 0;
		t.parent[0] = -1;
		for (let i = 1; i < n; i++) {
			while (sp >= 0 && t.depth[stack[sp]] >= t.depth[i])
				t.end[stack[sp--]] = i;
			t.parent[i] = stack[sp];
			stack[++sp] = i;
		}
		while (sp >= 0)
			t.end[stack[sp--]] = n;
		for (let i = 0; i < n; i++) {
			t.total[i] = t.self[i];
			if (t.ototal)
				t.ototal[i] = t.oself[i];
		}
		for (let i = n - 1; i > 0; i--) {
			t.total[t.parent[i]] += t.total[i];
			if (t.ototal)
				t.ototal[t.parent[i]] += t.ototal[i];
		}
		const cur = new Float64Array(n);
		for (let i = 1; i < n; i++) {
			const p = t.parent[i];
			t.x[i] = cur[p];
			cur[p] += t.total[i];
			cur[i] = t.x[i];
		}
		if (meta.palette === "wall") {
			const off = names.indexOf("[off-cpu]"), rq = names.indexOf("[runqueue]");
			t.off = new Float64Array(n);
			t.rq = new Float64Array(n);
			for (let i = n - 1; i > 0; i--) {
				if (t.name[i] === off)
					t.off[i] += t.self[i];
				if (t.name[i] === rq)
					t.rq[i] += t.self[i];
				t.off[t.parent[i]] += t.off[i];
				t.rq[t.parent[i]] += t.rq[i];
			}
		}
		t.maxdelta = 0;
		if (t.ototal) {
			for (let i = 1; i < n; i++)
				t.maxdelta = Math.max(t.maxdelta, Math.abs(deltaOf(t, i)));
		}
		return t;
	}
	// The differential change of node @i: after - before, of totals (or selfs with --self).
	function deltaOf(t, i) {
		const drawn = meta.self ? t.self[i] : t.total[i], other = meta.self ? t.oself[i] : t.ototal[i];
		return meta.negate ? other - drawn : drawn - other;
	}
	function beforeAfter(t, i, useSelf) {
		const drawn = useSelf ? t.self[i] : t.total[i], other = useSelf ? t.oself[i] : t.ototal[i];
		return meta.negate ? [drawn, other] : [other, drawn];
	}

	// The main tree for the time range [lo, hi] of intervals (null: everything) and the
	// root frame (a process, in recordings) @root (a node of depth 1; null: all).
	function mainTree(range, root) {
		let self = data.self, oself = data.oself;
		if (range && data.nint > 1) {
			self = new Float64Array(data.n);
			for (let k = range[0]; k <= range[1]; k++) {
				for (let j = data.sliceStart[k]; j < data.sliceStart[k + 1]; j++)
					self[data.sliceNode[j]] += data.sliceCount[j];
			}
		}
		if (root !== null && data.end) {
			const keep = (a) => {
				const out = new Float64Array(data.n);
				out.set(a.subarray(root, data.end[root]), root);
				return out;
			};
			self = keep(self);
			oself = oself && keep(oself);
		}
		const t = finishTree({ n: data.n, depth: data.depth, name: data.name, self, oself, level: data.level });
		data.end = data.end || t.end; // the shape is the same for every range
		return t;
	}

	// A tree from merged nodes: parent links and weights, children put in name order.
	function treeFromMerged(m) {
		return finishTree(treeFromMergedRaw(m));
	}
	function treeFromMergedRaw(m) {
		const n = m.parent.length, kids = new Array(n);
		for (let i = 1; i < n; i++)
			(kids[m.parent[i]] || (kids[m.parent[i]] = [])).push(i);
		const t = { n, depth: new Int32Array(n), name: new Int32Array(n), self: new Float64Array(n), oself: m.oself ? new Float64Array(n) : null,
			level: m.level ? new Int32Array(n) : null };
		const stack = [0], dep = [0];
		let o = 0;
		while (stack.length) {
			const i = stack.pop(), d = dep.pop();
			t.depth[o] = d;
			t.name[o] = m.name[i];
			t.self[o] = m.self[i];
			if (t.oself)
				t.oself[o] = m.oself[i];
			if (t.level)
				t.level[o] = m.level[i];
			o++;
			const k = kids[i];
			if (k) {
				k.sort((a, b) => m.name[b] - m.name[a]);
				for (const c of k) {
					stack.push(c);
					dep.push(d + 1);
				}
			}
		}
		return t;
	}
	// @leveled: the merged nodes keep a chain level, the lowest of the frames merged (lower())
	function merger(rootName, diff, leveled) {
		const m = { parent: [-1], name: [rootName], self: [0], oself: diff ? [0] : null, level: leveled ? [Infinity] : null, index: new Map() };
		m.child = (p, nm) => {
			const key = p * names.length + nm;
			let c = m.index.get(key);
			if (c === undefined) {
				c = m.parent.length;
				m.parent.push(p);
				m.name.push(nm);
				m.self.push(0);
				if (m.oself)
					m.oself.push(0);
				if (m.level)
					m.level.push(Infinity);
				m.index.set(key, c);
			}
			return c;
		};
		m.lower = (c, lv) => {
			if (m.level && lv < m.level[c])
				m.level[c] = lv;
		};
		return m;
	}
	// The outermost frames of function @fn (no caller of the same name) in @t.
	function occurrences(t, fn) {
		const occ = [];
		for (let i = 1; i < t.n;) {
			if (t.name[i] === fn) {
				occ.push(i);
				i = t.end[i];
			} else {
				i++;
			}
		}
		return occ;
	}
	// Sandwich of @fn: callees merged (rooted at fn) and callers merged (fn, its callers, ...).
	function sandwich(t, fn) {
		const occ = occurrences(t, fn), diff = !!t.oself, lv = t.level;
		const ce = merger(fn, diff, !!lv), cr = merger(fn, diff, !!lv);
		const map = new Int32Array(t.n);
		for (const o of occ) {
			map[o] = 0;
			ce.self[0] += t.self[o];
			if (diff)
				ce.oself[0] += t.oself[o];
			ce.lower(0, lv && lv[o]);
			cr.lower(0, lv && lv[o]);
			for (let j = o + 1; j < t.end[o]; j++) {
				const c = ce.child(map[t.parent[j]], t.name[j]);
				map[j] = c;
				ce.self[c] += t.self[j];
				if (diff)
					ce.oself[c] += t.oself[j];
				ce.lower(c, lv && lv[j]);
			}
			let cur = 0;
			for (let a = t.parent[o]; a > 0; a = t.parent[a]) {
				cur = cr.child(cur, t.name[a]);
				cr.lower(cur, lv && lv[a]);
			}
			cr.self[cur] += t.total[o];
			if (diff)
				cr.oself[cur] += t.ototal[o];
		}
		return { callees: treeFromMerged(ce), callers: treeFromMerged(cr), occ: occ.length };
	}

	// ---- names and colours ----
	function label(nm) {
		return nm < 0 ? "all" : names[nm].replace(/_\[[kijw]\]$/, "");
	}
	function rgb(c) {
		return "rgb(" + (c >> 16 & 255) + "," + (c >> 8 & 255) + "," + (c & 255) + ")";
	}
	// The colour of name @nm at chain level @lv: html.c's colour for that level where it
	// differs from the name's own (the wakers of the wakeup and chain palettes).
	function colorAt(nm, lv) {
		const m = lv > 0 && levelColors ? levelColors.get(lv) : undefined, c = m && m.get(nm);
		return c === undefined ? colors[nm] : c;
	}
	function colorOf(t, i) {
		const nm = t.name[i];
		if (nameMatch && nm >= 0 && nameMatch[nm])
			return MATCH;
		if (t.ototal) {
			const d = deltaOf(t, i), r = t.maxdelta > 0 ? Math.min(Math.abs(d) / t.maxdelta, 1) : 0;
			const l = Math.round(225 - 185 * r);
			return d > 0 ? "rgb(255," + l + "," + l + ")" : d < 0 ? "rgb(" + l + "," + l + ",255)" : "rgb(255,255,255)";
		}
		const c = nm < 0 ? meta.root_color : colorAt(nm, t.level ? t.level[i] : 0);
		if (t.off && t.total[i] > 0) {
			const fo = t.off[i] / t.total[i], fr = t.rq[i] / t.total[i], fc = 1 - fo - fr;
			const mix = (sh) => Math.round(fc * (c >> sh & 255) + fo * (sh === 16 ? 80 : sh === 8 ? 110 : 230) + fr * (sh === 16 ? 70 : 200));
			return "rgb(" + mix(16) + "," + mix(8) + "," + mix(0) + ")";
		}
		return rgb(c);
	}

	// ---- the canvas view of a tree ----
	class FlameView {
		constructor(box, inverted, kind) {
			this.box = box;
			this.canvas = box.querySelector("canvas");
			this.sizer = box.lastElementChild;
			this.ctx = this.canvas.getContext("2d");
			this.inverted = inverted;
			this.kind = kind;
			this.t = null;
			this.focus = 0;
			this.hover = -1;
			this.rows = 1;
			box.addEventListener("scroll", () => this.draw());
			this.canvas.addEventListener("mousemove", (e) => this.onMove(e));
			this.canvas.addEventListener("mouseleave", () => this.setHover(-1, null));
			this.canvas.addEventListener("click", (e) => this.onClick(e));
		}
		setTree(t, keepFocus) {
			const old = this.t, f = this.focus;
			this.t = t;
			this.focus = 0;
			if (keepFocus && old && f > 0 && f < t.n && t.total[f] > 0)
				this.focus = f;
			this.layout(true);
		}
		// rows and scroll height; @toRoot scrolls so that the root row is in view
		layout(toRoot) {
			const t = this.t;
			let maxd = 0;
			if (t) {
				const f = this.focus, scale = this.box.clientWidth / Math.max(t.total[f], 1e-300);
				for (let i = f; i < t.end[f];) {
					if (t.total[i] * scale < MIN_PX) {
						i = t.end[i];
						continue;
					}
					if (t.depth[i] > maxd)
						maxd = t.depth[i];
					i++;
				}
			}
			this.rows = maxd + 1;
			this.fit();
			const vh = this.box.clientHeight, h = Math.max(this.rows * ROW + 4, 0);
			this.sizer.style.height = h + "px";
			this.sizer.style.marginTop = -vh + "px";
			if (toRoot)
				this.box.scrollTop = this.inverted ? 0 : Math.max(h - vh, 0);
			this.draw();
		}
		// the height drawn: the rows, or the view when they fit (a flame sits at its bottom)
		height() {
			return Math.max(this.rows * ROW + 4, this.box.clientHeight);
		}
		rowY(d) {
			const h = this.height(), top = this.box.scrollTop;
			return (this.inverted ? 2 + d * ROW : h - 2 - (d + 1) * ROW) - top;
		}
		// the canvas covers the view (the sizer after it gives the scroll height)
		fit() {
			const c = this.canvas, w = this.box.clientWidth, h = this.box.clientHeight;
			const dpr = window.devicePixelRatio || 1;
			if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
				c.width = Math.round(w * dpr);
				c.height = Math.round(h * dpr);
				c.style.width = w + "px";
				c.style.height = h + "px";
			}
		}
		draw() {
			const ctx = this.ctx, w = this.box.clientWidth, h = this.box.clientHeight;
			const dpr = window.devicePixelRatio || 1;
			this.fit();
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.clearRect(0, 0, w, h);
			const t = this.t;
			if (!t || !(t.total[0] > 0))
				return;
			ctx.font = FONT;
			ctx.textBaseline = "middle";
			const cw = ctx.measureText("M").width || 7;
			const f = this.focus, scale = w / t.total[f], x0 = t.x[f];
			const drawBox = (i, x, bw, faded) => {
				const y = this.rowY(t.depth[i]);
				if (y + ROW < 0 || y > h)
					return;
				ctx.globalAlpha = faded ? 0.6 : 1;
				ctx.fillStyle = colorOf(t, i);
				ctx.fillRect(x, y, bw > 2 ? bw - 1 : bw, ROW - 1);
				if (i === this.hover) {
					ctx.strokeStyle = "#000";
					ctx.strokeRect(x + 0.5, y + 0.5, Math.max(bw - 2, 0), ROW - 2);
				}
				const chars = Math.floor((bw - 6) / cw);
				if (chars >= 3) {
					let s = label(t.name[i]);
					if (s.length > chars)
						s = s.slice(0, chars - 2) + "..";
					ctx.fillStyle = "#000";
					ctx.fillText(s, x + 3, y + ROW / 2);
				}
			};
			for (let a = t.parent[f]; a >= 0; a = t.parent[a])
				drawBox(a, 0, w, true);
			for (let i = f; i < t.end[f];) {
				const bw = t.total[i] * scale;
				if (bw < MIN_PX) {
					i = t.end[i];
					continue;
				}
				drawBox(i, (t.x[i] - x0) * scale, bw, false);
				i++;
			}
			ctx.globalAlpha = 1;
		}
		// The node under the point (@px, @py) of the canvas, or -1.
		nodeAt(px, py) {
			const t = this.t;
			if (!t || !(t.total[0] > 0))
				return -1;
			const top = this.box.scrollTop, h = this.height();
			const d = Math.floor(this.inverted ? (py + top - 2) / ROW : (h - 2 - py - top) / ROW);
			const f = this.focus;
			if (d < 0)
				return -1;
			if (d < t.depth[f]) {
				let a = f;
				while (a >= 0 && t.depth[a] > d)
					a = t.parent[a];
				return a;
			}
			const scale = this.box.clientWidth / t.total[f], xv = t.x[f] + px / scale;
			let node = f;
			while (t.depth[node] < d) {
				let found = -1;
				for (let j = node + 1; j < t.end[node]; j = t.end[j]) {
					if (xv >= t.x[j] && xv < t.x[j] + t.total[j]) {
						found = j;
						break;
					}
				}
				if (found < 0)
					return -1;
				node = found;
			}
			return xv >= t.x[node] && xv < t.x[node] + t.total[node] ? node : -1;
		}
		onMove(e) {
			const r = this.canvas.getBoundingClientRect();
			this.setHover(this.nodeAt(e.clientX - r.left, e.clientY - r.top), e);
		}
		setHover(i, e) {
			if (i !== this.hover) {
				this.hover = i;
				this.draw();
			}
			showTip(this, i, e);
		}
		onClick(e) {
			const r = this.canvas.getBoundingClientRect(), i = this.nodeAt(e.clientX - r.left, e.clientY - r.top);
			if (i >= 0)
				this.zoom(i);
		}
		zoom(i) {
			this.focus = i > 0 ? i : 0;
			this.layout(true);
			this.hover = -1;
			if (this.kind === "main") {
				crumbs();
				updateSearch();
				saveUrl();
			}
		}
	}

	// ---- tooltip, details line, breadcrumbs ----
	function describe(t, i) {
		const nm = label(t.name[i]), root = t.total[0];
		const lines = [];
		if (t.ototal) {
			const [bt, at] = beforeAfter(t, i, false), [bs, as] = beforeAfter(t, i, true);
			lines.push("Total: " + fmtInt(bt) + " \u2192 " + fmtInt(at) + " " + meta.countname + ", " + fmtDelta(at, bt));
			lines.push("Self: " + fmtInt(bs) + " \u2192 " + fmtInt(as) + ", " + fmtDelta(as, bs));
		} else {
			lines.push("Total: " + fmtInt(t.total[i]) + " " + meta.countname + " (" + fmtPct(t.total[i], root) + ")");
			lines.push("Self: " + fmtInt(t.self[i]) + " " + meta.countname + " (" + fmtPct(t.self[i], root) + ")");
			if (t.off && t.total[i] > 0)
				lines.push("Off-CPU " + fmtPct(t.off[i], t.total[i]) + ", runqueue " + fmtPct(t.rq[i], t.total[i]));
		}
		return { name: nm, lines, details: "Function: " + nm + " (" + fmtInt(t.total[i]) + " " + meta.countname + ", " + fmtPct(t.total[i], root) + ")" };
	}
	function showTip(view, i, e) {
		const tip = $("tooltip");
		if (i < 0 || !e) {
			tip.hidden = true;
			return;
		}
		const d = describe(view.t, i);
		$("details").textContent = d.details;
		tip.replaceChildren();
		const b = document.createElement("div");
		b.className = "name";
		b.textContent = d.name;
		tip.append(b, d.lines.join("\n"));
		tip.hidden = false;
		const pad = 14, w = tip.offsetWidth, h = tip.offsetHeight;
		tip.style.left = Math.min(e.clientX + pad, window.innerWidth - w - 4) + "px";
		tip.style.top = (e.clientY + pad + h > window.innerHeight ? e.clientY - h - pad : e.clientY + pad) + "px";
	}
	function crumbs() {
		const v = views.main, box = $("crumbs"), path = [];
		for (let a = v.focus; a >= 0; a = tree.parent[a])
			path.unshift(a);
		box.replaceChildren();
		path.forEach((a, k) => {
			if (k) {
				const s = document.createElement("span");
				s.className = "sep";
				s.textContent = " \u203a ";
				box.append(s);
			}
			const b = document.createElement("button");
			b.type = "button";
			b.textContent = label(tree.name[a]);
			b.title = a > 0 ? names[tree.name[a]] : "all";
			if (a === v.focus)
				b.setAttribute("aria-current", "location");
			b.addEventListener("click", () => v.zoom(a));
			box.append(b);
		});
		// a deep path overflows the row: its end, the frame zoomed, stays in view
		box.scrollLeft = box.scrollWidth - box.clientWidth;
		$("reset").disabled = v.focus === 0;
	}

	// ---- search ----
	function setSearch(term) {
		const box = $("search");
		if (box.value !== term)
			box.value = term;
		box.classList.remove("bad");
		nameMatch = null;
		if (term) {
			let re;
			try {
				re = new RegExp(term, $("ignorecase").checked ? "i" : "");
			} catch (err) {
				box.classList.add("bad");
				redrawAll();
				$("matched").textContent = "Invalid regex";
				return;
			}
			nameMatch = new Uint8Array(names.length);
			for (let k = 0; k < names.length; k++)
				nameMatch[k] = re.test(names[k]) ? 1 : 0;
		}
		updateSearch();
		redrawAll();
		saveUrl();
	}
	// The share of the zoomed frame covered by matches, nested matches counted once.
	function updateSearch() {
		const m = $("matched");
		if (!nameMatch || !tree) {
			m.textContent = "";
			m.title = "";
			return;
		}
		const f = views.main.focus;
		let sum = 0;
		for (let i = f; i < tree.end[f];) {
			if (tree.name[i] >= 0 && nameMatch[tree.name[i]]) {
				sum += tree.total[i];
				i = tree.end[i];
			} else {
				i++;
			}
		}
		const base = tree.total[f], pct = base > 0 ? 100 * sum / base : 0;
		m.textContent = "Matched: " + (pct === 100 ? "100" : pct.toFixed(1)) + "%";
		m.title = fmtInt(sum) + " of " + fmtInt(base) + " " + meta.countname;
	}

	// ---- the function table ----
	function functionStats(t) {
		const nn = names.length, self = new Float64Array(nn), total = new Float64Array(nn);
		const oself = t.oself ? new Float64Array(nn) : null, ototal = t.oself ? new Float64Array(nn) : null;
		const onPath = new Int32Array(nn), stack = [];
		for (let i = 1; i < t.n; i++) {
			while (stack.length && t.end[stack[stack.length - 1]] <= i)
				onPath[t.name[stack.pop()]]--;
			const nm = t.name[i];
			self[nm] += t.self[i];
			if (oself)
				oself[nm] += t.oself[i];
			if (!onPath[nm]) {
				total[nm] += t.total[i];
				if (ototal)
					ototal[nm] += t.ototal[i];
			}
			onPath[nm]++;
			stack.push(i);
		}
		return { self, total, oself, ototal };
	}
	function fileOf(name) {
		const m = / \(([^()]*:\d+)\)$/.exec(name);
		return m ? m[1] : "";
	}
	function columns() {
		if (tree.ototal) {
			return [
				{ key: "name", title: "Function", cls: "name" },
				{ key: "sb", title: "Self before" }, { key: "sa", title: "Self after" }, { key: "sd", title: "\u0394 self", delta: true },
				{ key: "tb", title: "Total before" }, { key: "ta", title: "Total after" }, { key: "td", title: "\u0394 total", delta: true },
				{ key: "file", title: "File", cls: "file" },
			];
		}
		return [
			{ key: "name", title: "Function", cls: "name" },
			{ key: "self", title: "Self" }, { key: "selfp", title: "Self %" },
			{ key: "total", title: "Total" }, { key: "totalp", title: "Total %" },
			{ key: "file", title: "File", cls: "file" },
		];
	}
	function renderTable() {
		const st = functionStats(tree), root = tree.total[0], cols = columns();
		const diff = !!tree.ototal;
		if (!state.sort)
			state.sort = diff ? { key: "sd", abs: true } : { key: "self" };
		const rows = [];
		for (let k = 0; k < names.length; k++) {
			if (!st.total[k] && !(diff && st.ototal[k]))
				continue;
			const r = { k, name: label(k), file: fileOf(names[k]) };
			if (diff) {
				const neg = meta.negate;
				r.sb = neg ? st.self[k] : st.oself[k];
				r.sa = neg ? st.oself[k] : st.self[k];
				r.tb = neg ? st.total[k] : st.ototal[k];
				r.ta = neg ? st.ototal[k] : st.total[k];
				r.sd = r.sa - r.sb;
				r.td = r.ta - r.tb;
			} else {
				r.self = r.selfp = st.self[k];
				r.total = r.totalp = st.total[k];
			}
			rows.push(r);
		}
		const key = state.sort.key, abs = state.sort.abs, asc = !!state.sort.asc;
		const val = (r) => abs ? Math.abs(r[key]) : r[key];
		rows.sort((a, b) => {
			let c;
			if (key === "name" || key === "file")
				c = a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0;
			else
				c = val(b) - val(a);
			return (asc ? -c : c) || a.k - b.k;
		});
		const head = $("fn-head");
		head.replaceChildren();
		for (const c of cols) {
			const th = document.createElement("th");
			th.className = c.cls || "";
			th.dataset.key = c.key;
			th.textContent = c.title + (key === c.key ? (asc ? " \u25b2" : " \u25bc") : "");
			th.addEventListener("click", () => {
				state.sort = state.sort.key === c.key ? { key: c.key, abs: state.sort.abs, asc: !state.sort.asc } : { key: c.key, abs: !!c.delta, asc: c.key === "name" || c.key === "file" };
				renderTable();
			});
			head.append(th);
		}
		const body = $("fn-body"), frag = document.createDocumentFragment();
		for (const r of rows.slice(0, TABLE_ROWS)) {
			const tr = document.createElement("tr");
			tr.dataset.fn = String(r.k);
			if (nameMatch && nameMatch[r.k])
				tr.className = "match";
			for (const c of cols) {
				const td = document.createElement("td");
				td.className = c.cls || "";
				const v = r[c.key];
				if (c.key === "name" || c.key === "file")
					td.textContent = v;
				else if (c.key === "selfp" || c.key === "totalp")
					td.textContent = fmtPct(v, root);
				else if (c.delta) {
					td.textContent = fmtDelta(c.key === "sd" ? r.sa : r.ta, c.key === "sd" ? r.sb : r.tb);
					td.className = v > 0 ? "up" : v < 0 ? "down" : "";
				} else
					td.textContent = fmtInt(v);
				if (c.key === "name")
					td.title = names[r.k];
				tr.append(td);
			}
			tr.addEventListener("click", () => openSandwich(r.k));
			frag.append(tr);
		}
		body.replaceChildren(frag);
		$("table-note").textContent = rows.length + " functions" + (rows.length > TABLE_ROWS ? ", the first " + TABLE_ROWS + " shown" : "") +
			". Total counts a recursive function once per stack. Click a row for its sandwich (callers below, callees above)." + normalizeNote() +
			(mergedNote() ? " " + mergedNote() + " (--minwidth 0 keeps every frame)." : "");
	}

	// ---- sandwich ----
	function openSandwich(fn) {
		if (fn < 0 || fn >= names.length)
			return;
		if (state.view !== "sandwich")
			state.prevView = state.view;
		state.sandwich = fn;
		setView("sandwich");
	}
	function renderSandwich() {
		const fn = state.sandwich, s = sandwich(tree, fn);
		$("sw-name").textContent = label(fn);
		$("sw-name").title = names[fn];
		views.callees.setTree(s.callees, false);
		views.callers.setTree(s.callers, false);
		state.sandwichOcc = s.occ;
	}

	// ---- views, URL, timeline ----
	function setView(v) {
		if (!["flame", "icicle", "table", "sandwich"].includes(v))
			v = "flame";
		if (v === "sandwich" && state.sandwich === null)
			v = "table";
		state.view = v;
		$("graph").hidden = !(v === "flame" || v === "icicle");
		$("table-view").hidden = v !== "table";
		$("sandwich-view").hidden = v !== "sandwich";
		for (const b of document.querySelectorAll("#views button"))
			b.classList.toggle("active", b.dataset.view === v);
		$("tooltip").hidden = true;
		if (v === "flame" || v === "icicle") {
			const inv = v === "icicle";
			if (views.main.inverted !== inv) {
				views.main.inverted = inv;
				views.main.layout(true);
			} else {
				views.main.layout(false);
			}
		} else if (v === "table") {
			renderTable();
		} else {
			renderSandwich();
		}
		saveUrl();
	}
	function redrawAll() {
		if (state.view === "table")
			renderTable();
		else if (state.view === "sandwich")
			renderSandwich();
		else
			views.main.draw();
	}
	function saveUrl() {
		if (!state.ready)
			return;
		const p = new URLSearchParams(location.search);
		const set = (k, v) => (v === null || v === "" ? p.delete(k) : p.set(k, v));
		set("s", $("search").value);
		set("view", state.view === "sandwich" ? null : state.view === (meta.inverted ? "icicle" : "flame") ? null : state.view);
		set("fn", state.view === "sandwich" ? names[state.sandwich] : null);
		set("t", state.range ? state.range[0] + "-" + state.range[1] : null);
		set("p", state.root === null ? null : names[data.name[state.root]]);
		set("n", normalized() ? "1" : null);
		set("z", zoomPath());
		const q = p.toString();
		try {
			history.replaceState(null, "", location.pathname + (q ? "?" + q : "") + location.hash);
		} catch (e) {
			// file:// pages in some browsers refuse replaceState; the state is just not kept
		}
	}
	// The zoomed frame as the names from the root to it, ";" between them (frames never
	// hold one: the folded format's rule), or null: the same frame in any time range or
	// root filter, and in this page again (a node index would not say which frame).
	function zoomPath() {
		const f = views.main ? views.main.focus : 0, path = [];
		for (let a = f; a > 0; a = tree.parent[a])
			path.unshift(names[tree.name[a]]);
		return path.length ? path.join(";") : null;
	}
	// The node of @path (zoomPath()'s) in the tree drawn, or 0 when it is not there.
	function nodeOfPath(path) {
		let node = 0;
		for (const nm of path.split(";")) {
			const want = names.indexOf(nm);
			let found = 0;
			for (let j = node + 1; j < tree.end[node] && want >= 0; j = tree.end[j]) {
				if (tree.name[j] === want) {
					found = j;
					break;
				}
			}
			if (!found)
				return 0;
			node = found;
		}
		return tree.total[node] > 0 ? node : 0;
	}
	function setRange(range) {
		if (range && (range[0] <= 0 && range[1] >= data.nint - 1))
			range = null;
		state.range = range;
		refilter();
		drawTimeline();
		const r = $("range");
		if (!range) {
			r.textContent = "all " + data.nint + " intervals";
		} else {
			const iv = meta.interval;
			r.textContent = "intervals " + (range[0] + 1) + "\u2013" + (range[1] + 1) +
				(iv > 0 ? " (" + +(range[0] * iv).toFixed(3) + "\u2013" + +((range[1] + 1) * iv).toFixed(3) + " s)" : "");
		}
		r.title = fmtInt(tree.total[0]) + " " + meta.countname;
	}
	// The process filter: @node a root frame (depth 1), or null for all.
	function setRoot(node) {
		state.root = node !== null && node > 0 && node < data.n && data.depth[node] === 1 ? node : null;
		$("root-filter").value = state.root === null ? "" : String(state.root);
		refilter();
	}
	// Rebuilds the tree drawn for the range and process chosen; every view follows.
	function refilter() {
		tree = mainTree(state.range, state.root);
		views.main.setTree(tree, true);
		crumbs();
		updateSearch();
		if (state.view === "table")
			renderTable();
		else if (state.view === "sandwich")
			renderSandwich();
		saveUrl();
	}
	function initRootFilter() {
		const sel = $("root-filter"), roots = [];
		for (let i = 1; i < tree.n; i = tree.end[i])
			roots.push(i);
		roots.sort((a, b) => tree.total[b] - tree.total[a] || a - b);
		const all = document.createElement("option");
		all.value = "";
		all.textContent = "all (" + roots.length + " root frames)";
		sel.append(all);
		for (const i of roots.slice(0, 1000)) {
			const o = document.createElement("option");
			o.value = String(i);
			o.textContent = label(tree.name[i]) + " (" + fmtPct(tree.total[i], tree.total[0]) + ")";
			sel.append(o);
		}
		sel.addEventListener("change", () => setRoot(sel.value === "" ? null : Number(sel.value)));
	}

	let brush = null;
	function drawTimeline() {
		const c = $("timeline"), ctx = c.getContext("2d"), w = c.clientWidth, h = c.clientHeight;
		const dpr = window.devicePixelRatio || 1;
		c.width = Math.round(w * dpr);
		c.height = Math.round(h * dpr);
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, w, h);
		const n = data.nint, bw = w / n;
		let max = 1e-300;
		for (let k = 0; k < n; k++)
			max = Math.max(max, data.intervalTotal[k]);
		const sel = brush ? [Math.min(brush[0], brush[1]), Math.max(brush[0], brush[1])] : state.range;
		for (let k = 0; k < n; k++) {
			const bh = (h - 2) * data.intervalTotal[k] / max;
			const inside = !sel || (k >= sel[0] && k <= sel[1]);
			ctx.fillStyle = inside ? "rgb(220,110,40)" : "rgb(210,200,190)";
			ctx.fillRect(k * bw, h - bh, Math.max(bw - (bw > 3 ? 1 : 0), 0.5), bh);
		}
		if (sel) {
			ctx.strokeStyle = "#333";
			ctx.strokeRect(sel[0] * bw + 0.5, 0.5, (sel[1] - sel[0] + 1) * bw - 1, h - 1);
		}
	}
	function initTimeline() {
		if (data.nint <= 1)
			return;
		$("timeline-box").hidden = false;
		const c = $("timeline");
		const at = (e) => {
			const r = c.getBoundingClientRect();
			return Math.max(0, Math.min(data.nint - 1, Math.floor((e.clientX - r.left) / r.width * data.nint)));
		};
		c.addEventListener("mousedown", (e) => {
			brush = [at(e), at(e)];
			drawTimeline();
			e.preventDefault();
		});
		window.addEventListener("mousemove", (e) => {
			if (brush) {
				brush[1] = at(e);
				drawTimeline();
			}
		});
		window.addEventListener("mouseup", () => {
			if (!brush)
				return;
			const r = [Math.min(brush[0], brush[1]), Math.max(brush[0], brush[1])];
			brush = null;
			setRange(r);
		});
		c.addEventListener("dblclick", () => setRange(null));
		$("range-all").addEventListener("click", () => setRange(null));
	}

	// ---- normalizing a differential profile ----
	function gcd(a, b) {
		while (b) {
			const r = a % b;
			a = b;
			b = r;
		}
		return a;
	}
	// Keeps the differential counts just read (in data) as those to normalize from, and
	// shows the toggle when BEFORE's and AFTER's totals differ.
	function initNormalize() {
		raw = { self: data.self, oself: data.oself, factor: meta.factor };
		const tb = raw.oself.reduce((a, b) => a + b, 0), ta = raw.self.reduce((a, b) => a + b, 0);
		[raw.before, raw.after] = meta.negate ? [ta, tb] : [tb, ta];
		$("normalize-box").hidden = !(raw.before > 0 && raw.after > 0 && raw.before !== raw.after);
		applyNormalize();
	}
	// As scorch diff -n: BEFORE's counts scaled so that its total equals AFTER's, shown in
	// AFTER's units. Exact while the counts fit in a double's 53 bits: BEFORE times
	// after/g and AFTER times before/g (g their gcd), displayed divided by before/g.
	function normalized() {
		return !!raw && state.normalize && !$("normalize-box").hidden;
	}
	function applyNormalize() {
		$("normalize").checked = state.normalize;
		if (!normalized()) {
			data.self = raw.self;
			data.oself = raw.oself;
			meta.factor = raw.factor;
			return;
		}
		const tb = raw.before, ta = raw.after;
		const exact = Number.isSafeInteger(tb) && Number.isSafeInteger(ta) && Number.isSafeInteger(tb / gcd(tb, ta) * ta);
		const g = exact ? gcd(tb, ta) : 1, kb = exact ? ta / g : ta / tb, ka = exact ? tb / g : 1;
		const scale = (a, k) => (k === 1 ? a : a.map((v) => v * k));
		[data.self, data.oself] = meta.negate ? [scale(raw.self, kb), scale(raw.oself, ka)] : [scale(raw.self, ka), scale(raw.oself, kb)];
		meta.factor = raw.factor / ka;
	}
	function setNormalize(on) {
		state.normalize = on;
		applyNormalize();
		refilter();
	}
	function normalizeNote() {
		if (!normalized())
			return "";
		return " Normalized: before's counts \u00d7 " + +(raw.after / raw.before).toPrecision(6) +
			" so that its total equals after's (" + fmtInt(raw.after * raw.factor / meta.factor) + " " + meta.countname + ").";
	}

	// ---- comparing with another profile (a file picked by the user) ----
	// Another scorch page's tree, or folded text, as { names, n, depth, name, self }.
	async function readOther(file) {
		const text = await file.text();
		// (the tags are spelt in pieces: this script must not hold them whole)
		const tag = "<" + "script type=\"application/", end = "</" + "script>";
		const m = new RegExp(tag + "json\" id=\"scorch-meta\">([\\s\\S]*?)" + end).exec(text);
		if (m) {
			const om = JSON.parse(m[1]);
			const t = new RegExp(tag + "octet-stream\" id=\"scorch-tree\"[^>]*>([\\s\\S]*?)" + end).exec(text);
			if (!t || !Array.isArray(om.names))
				throw new Error("no profile in this page");
			const od = decode(await gunzip(b64bytes(t[1])), om.names.length);
			if (od.diff)
				throw new Error("a differential profile cannot be compared again");
			return { names: om.names, n: od.n, depth: od.depth, name: od.name, self: od.self };
		}
		// folded stacks: "frame;frame;... COUNT" lines
		const idx = new Map(), onames = [], parent = [-1], name = [-1], self = [0], kids = new Map();
		let bad = 0;
		for (const line of text.split("\n")) {
			const l = /^(.*\S)\s+(\d+)\s*$/.exec(line);
			if (!l) {
				bad += line.trim() !== "";
				continue;
			}
			let p = 0;
			for (const f of l[1].split(";")) {
				let nm = idx.get(f);
				if (nm === undefined) {
					nm = onames.length;
					onames.push(f);
					idx.set(f, nm);
				}
				const key = p + "," + nm;
				let c = kids.get(key);
				if (c === undefined) {
					c = parent.length;
					parent.push(p);
					name.push(nm);
					self.push(0);
					kids.set(key, c);
				}
				p = c;
			}
			self[p] += Number(l[2]);
		}
		if (parent.length === 1)
			throw new Error("neither a scorch page nor folded stacks" + (bad ? " (" + bad + " lines not understood)" : ""));
		const t = treeFromMergedRaw({ parent, name, self, oself: null });
		return { names: onames, n: t.n, depth: t.depth, name: t.name, self: t.self };
	}
	// The current profile (AFTER) against @other (BEFORE): a differential tree, as scorch diff.
	function compareWith(other, what) {
		const idx = new Map(names.map((n, i) => [n, i]));
		const map = other.names.map((n) => {
			let i = idx.get(n);
			if (i === undefined) {
				i = names.length;
				names.push(n);
				idx.set(n, i);
			}
			return i;
		});
		const c = new Uint32Array(names.length);
		c.fill(0xcccccc);
		c.set(colors);
		colors = c;
		const m = merger(-1, true);
		const add = (n, depth, nm, w, into) => {
			const stack = [0];
			for (let i = 1; i < n; i++) {
				stack.length = depth[i];
				const k = m.child(stack[depth[i] - 1], nm(i));
				m[into][k] += w[i];
				stack.push(k);
			}
		};
		add(data.n, data.depth, (i) => data.name[i], data.self, "self");
		add(other.n, other.depth, (i) => map[other.name[i]], other.self, "oself");
		const t = treeFromMerged(m);
		data = { n: t.n, depth: t.depth, name: t.name, self: t.self, oself: t.oself, diff: true, nint: 0, colors };
		meta.diff = true;
		meta.negate = false;
		meta.self = false;
		meta.factor = 1;
		initNormalize();
		state.range = null;
		state.root = null;
		state.sort = null;
		state.compared = what;
		$("timeline-box").hidden = true;
		$("subtitle").textContent = "compared with " + what + ": widths from this profile, red grew since " + what + ", blue shrank";
		$("compare").hidden = true;
		tree = mainTree(null, null);
		$("root-filter").replaceChildren();
		initRootFilter();
		views.main.setTree(tree, false);
		crumbs();
		updateSearch();
		if (nameMatch)
			setSearch($("search").value);
		setView(state.view === "sandwich" ? "table" : state.view);
	}
	function initCompare() {
		const input = $("compare-file");
		if (meta.diff) {
			$("compare").hidden = true;
			return;
		}
		$("compare").addEventListener("click", () => input.click());
		input.addEventListener("change", async () => {
			const f = input.files && input.files[0];
			if (!f)
				return;
			try {
				compareWith(await readOther(f), f.name);
			} catch (err) {
				$("status").textContent = "cannot compare with " + f.name + ": " + err.message;
			}
		});
	}

	// ---- keyboard ----
	function onKey(e) {
		// (a checkbox clicked keeps the focus: keys are still shortcuts there)
		const typing = e.target instanceof HTMLInputElement && e.target.type !== "checkbox";
		if (e.key === "Escape") {
			if (typing) {
				e.target.blur();
			} else if (!$("help").hidden) {
				$("help").hidden = true;
			} else if (state.view === "sandwich") {
				setView(state.prevView);
			} else {
				views.main.zoom(0);
			}
			return;
		}
		if (typing || e.ctrlKey || e.metaKey || e.altKey)
			return;
		const v = views.main;
		switch (e.key) {
		case "/":
			$("search").focus();
			$("search").select();
			break;
		case "f": setView("flame"); break;
		case "i": setView("icicle"); break;
		case "t": setView("table"); break;
		case "r": v.zoom(0); break;
		case "c": setSearch(""); break;
		case "u":
		case "Backspace":
			if (v.focus > 0)
				v.zoom(tree.parent[v.focus]);
			break;
		case "s": {
			const i = v.hover >= 0 ? v.hover : v.focus;
			if (i > 0)
				openSandwich(tree.name[i]);
			break;
		}
		case "?": $("help").hidden = !$("help").hidden; break;
		default: return;
		}
		e.preventDefault();
	}

	// What the page left out (html.c's tree_build()): the stacks cut short and their count.
	function mergedNote() {
		const m = meta.merged;
		if (!m || !(m.stacks > 0))
			return "";
		const why = m.minwidth ? "narrower than --minwidth" : "too narrow to draw at any zoom";
		return fmtInt(m.count) + " " + meta.countname + " (" +
			fmtPct(m.count, pageTotal) + ") of " + String(m.stacks).replace(/\B(?=(\d{3})+(?!\d))/g, ",") +
			" stacks are their callers' own: frames " + why + " left out";
	}
	function showMerged() {
		const note = mergedNote(), el = $("merged");
		el.hidden = !note;
		el.textContent = note ? "Merged: " + fmtPct(meta.merged.count, pageTotal) : "";
		el.title = note ? note + " (--minwidth 0 keeps every frame)" : "";
	}

	// ---- start ----
	async function main() {
		meta = JSON.parse($("scorch-meta").textContent);
		names = meta.names;
		if (meta.min_px > 0)
			MIN_PX = meta.min_px;
		$("title").textContent = meta.title;
		$("subtitle").textContent = meta.subtitle || "";
		data = decode(await gunzip(b64bytes($("scorch-tree").textContent)), names.length);
		colors = data.colors;
		levelColors = data.levelColors;
		if (levelColors)
			data.level = chainLevels(data);
		const p = new URLSearchParams(location.search);
		state.normalize = p.get("n") === "1";
		if (data.diff)
			initNormalize();
		$("normalize").addEventListener("change", () => setNormalize($("normalize").checked));
		views.main = new FlameView($("graph"), !!meta.inverted, "main");
		views.callees = new FlameView($("sw-callees"), false, "callees");
		views.callers = new FlameView($("sw-callers"), true, "callers");
		tree = mainTree(null, null);
		pageTotal = tree.total[0];
		showMerged();
		if (!(tree.total[0] > 0))
			$("status").textContent = "No stack counts found";
		views.main.setTree(tree, false);
		crumbs();
		for (const b of document.querySelectorAll("#views button"))
			b.addEventListener("click", () => setView(b.dataset.view));
		$("search").addEventListener("input", () => setSearch($("search").value));
		$("search").addEventListener("keydown", (e) => {
			if (e.key === "Enter")
				setSearch($("search").value);
		});
		$("ignorecase").addEventListener("change", () => setSearch($("search").value));
		$("reset").addEventListener("click", () => views.main.zoom(0));
		$("help-button").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });
		$("sw-close").addEventListener("click", () => setView(state.prevView));
		document.addEventListener("keydown", onKey);
		window.addEventListener("resize", () => {
			for (const k in views)
				views[k].layout(false);
			if (data.nint > 1)
				drawTimeline();
		});
		initTimeline();
		initRootFilter();
		initCompare();

		const t = /^(\d+)-(\d+)$/.exec(p.get("t") || "");
		if (p.get("p") !== null) {
			const want = names.indexOf(p.get("p"));
			for (let i = 1; i < tree.n && want >= 0; i = tree.end[i]) {
				if (tree.name[i] === want)
					state.root = i;
			}
		}
		if (state.root !== null) {
			$("root-filter").value = String(state.root);
			if (data.nint <= 1)
				refilter();
		}
		if (data.nint > 1)
			setRange(t ? [Math.min(+t[1], +t[2]), Math.min(Math.max(+t[1], +t[2]), data.nint - 1)] : null);
		let view = p.get("view") || (meta.inverted ? "icicle" : "flame");
		const fn = p.get("fn");
		if (fn !== null && names.indexOf(fn) >= 0) {
			state.prevView = view;
			state.sandwich = names.indexOf(fn);
			view = "sandwich";
		}
		if (p.get("s"))
			setSearch(p.get("s"));
		if (p.get("z")) {
			const z = nodeOfPath(p.get("z"));
			if (z > 0)
				views.main.zoom(z);
		}
		setView(view);
		state.ready = true;
		saveUrl();
		readyAt = performance.now();
		document.body.dataset.ready = "1";
	}

	// State for scripts and tests: read only.
	window.scorch = {
		get view() { return state.view; },
		get zoomed() { return views.main && views.main.focus > 0 ? label(tree.name[views.main.focus]) : null; },
		get range() { return state.range ? state.range.slice() : null; },
		get compared() { return state.compared || null; },
		get normalized() { return normalized(); },
		get root() { return state.root === null ? null : label(data.name[state.root]); },
		get sandwich() { return state.sandwich === null ? null : names[state.sandwich]; },
		get total() { return tree ? tree.total[0] * meta.factor : 0; },
		get nodes() { return data ? data.n : 0; },
		get intervals() { return data ? data.nint : 0; },
		get readyAt() { return readyAt; },
		// searches as the search box does (for benchmarks): the matched text
		search(term) {
			setSearch(term);
			return $("matched").textContent;
		},
		// the sandwich's callers (below) and callees (above) as "name total" lists
		sandwichRows(which) {
			const t = views[which] && views[which].t;
			if (!t)
				return [];
			const out = [];
			for (let i = 0; i < t.n; i++)
				out.push({ name: label(t.name[i] < 0 ? -1 : t.name[i]), depth: t.depth[i], total: t.total[i] });
			return out;
		},
		// the centre of the first frame called @name in a view, in page pixels
		frameCenter(name, which) {
			const v = views[which || "main"], t = v.t;
			const r = v.canvas.getBoundingClientRect(), w = v.box.clientWidth, f = v.focus;
			const scale = w / t.total[f];
			for (let i = 0; i < t.n; i++) {
				if (label(t.name[i]) !== name || t.total[i] * scale < 1)
					continue;
				let inside = i === f;
				for (let a = t.parent[i]; a >= 0 && !inside; a = t.parent[a])
					inside = a === f;
				if (!inside)
					continue;
				const y = v.rowY(t.depth[i]);
				if (y < 0 || y + ROW > v.box.clientHeight)
					continue;
				return { x: r.left + (t.x[i] - t.x[f]) * scale + Math.min(t.total[i] * scale / 2, 20), y: r.top + y + ROW / 2 };
			}
			return null;
		},
	};
	main().catch((err) => {
		$("status").textContent = "cannot show the profile: " + err.message;
		document.body.dataset.ready = "error";
	});
})();
