// SPDX-License-Identifier: MIT
// scorch flamegraph: zoom, search and details for the generated SVG. No user
// text is ever pasted into this script: it reads the configuration from
// attributes of <g id="frames"> and the frame data from fg:x / fg:w.
"use strict";
var fgs = {
	frames: [], root: null, zoomed: null, term: null, ignorecase: false,
	total: 0, xpad: 10, width: 1180, fontsize: 12, fontwidth: 0.59,
	inverted: false, nametype: "", searchcolor: "rgb(230,0,230)"
};

function fg_el(id) { return document.getElementById(id); }

function fg_num(el, name) { return Number(el.getAttribute(name)); }

function init(evt) {
	var root = fg_el("frames"), gs, i, g, t, rect, text, title;
	if (!root)
		return;
	fgs.total = fg_num(root, "fg:total");
	fgs.xpad = fg_num(root, "fg:xpad");
	fgs.width = fg_num(root, "fg:width");
	fgs.fontsize = fg_num(root, "fg:fontsize");
	fgs.fontwidth = fg_num(root, "fg:fontwidth");
	fgs.inverted = root.getAttribute("fg:inverted") === "1";
	fgs.nametype = root.getAttribute("fg:nametype") || "";
	gs = root.children;
	for (i = 0; i < gs.length; i++) {
		g = gs[i];
		title = g.querySelector("title").textContent;
		rect = g.querySelector("rect");
		text = g.querySelector("text");
		t = {
			g: g, rect: rect, text: text, title: title,
			name: title.substring(0, title.lastIndexOf(" (")),
			x: fg_num(g, "fg:x"), w: fg_num(g, "fg:w"),
			y: Number(rect.getAttribute("y")),
			fill: rect.getAttribute("fill")
		};
		g.fg = t;
		fgs.frames.push(t);
	}
	for (i = 0; i < fgs.frames.length; i++) {
		t = fgs.frames[i];
		if (!fgs.root || fg_rootward(t, fgs.root.y))
			fgs.root = t;
	}
	root.addEventListener("click", function (e) {
		var f = fg_frame_of(e.target);
		if (!f)
			return;
		e.preventDefault();
		if (f === fgs.root)
			fg_unzoom();
		else
			fg_zoom(f);
	});
	root.addEventListener("mouseover", function (e) {
		var f = fg_frame_of(e.target);
		if (f)
			fg_el("details").textContent = fgs.nametype + " " + f.title;
	});
	root.addEventListener("mouseout", function (e) {
		if (fg_frame_of(e.target))
			fg_el("details").textContent = " ";
	});
	fg_el("unzoom").addEventListener("click", function () { fg_unzoom(); });
	fg_el("search").addEventListener("click", function () {
		if (fgs.term !== null)
			fg_reset_search();
		else
			fg_search_prompt();
	});
	fg_el("ignorecase").addEventListener("click", fg_toggle_ignorecase);
	window.addEventListener("keydown", function (e) {
		if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {
			e.preventDefault();
			fg_search_prompt();
		} else if (e.ctrlKey && e.keyCode === 73) {
			e.preventDefault();
			fg_toggle_ignorecase();
		}
	});
	fg_restore();
}

function fg_frame_of(el) {
	while (el && el.id !== "frames") {
		if (el.fg)
			return el.fg;
		el = el.parentNode;
	}
	return null;
}

// Label for a frame @px wide: whole name, name cut to end in "..", or nothing.
function fg_label(name, px) {
	var chars = Math.floor(px / (fgs.fontsize * fgs.fontwidth));
	var cps = Array.from(name);
	if (chars < 3)
		return "";
	if (cps.length <= chars)
		return name;
	return cps.slice(0, chars - 2).join("") + "..";
}

function fg_place(f, x, w) {
	f.rect.setAttribute("x", x.toFixed(1));
	f.rect.setAttribute("width", w.toFixed(1));
	f.text.setAttribute("x", (x + 3).toFixed(2));
	f.text.textContent = fg_label(f.name, w);
}

// Is @a on the root side of row @y (below it in a flame graph, above in an icicle)?
function fg_rootward(a, y) { return fgs.inverted ? a.y < y : a.y > y; }

function fg_zoom(z) {
	var i, f, scale = fgs.width / z.w, end = z.x + z.w;
	fgs.zoomed = z;
	for (i = 0; i < fgs.frames.length; i++) {
		f = fgs.frames[i];
		f.g.classList.remove("parent", "hide");
		if (f === z || (!fg_rootward(f, z.y) && f.y !== z.y && f.x >= z.x && f.x + f.w <= end)) {
			fg_place(f, fgs.xpad + (f.x - z.x) * scale, f.w * scale);
		} else if (fg_rootward(f, z.y) && f.x <= z.x && f.x + f.w >= end) {
			f.g.classList.add("parent");
			fg_place(f, fgs.xpad, fgs.width);
		} else {
			f.g.classList.add("hide");
		}
	}
	fg_el("unzoom").classList.remove("hide");
	fg_set_params();
	fg_search_again();
}

function fg_unzoom() {
	var i, f, scale = fgs.width / fgs.total;
	fgs.zoomed = null;
	for (i = 0; i < fgs.frames.length; i++) {
		f = fgs.frames[i];
		f.g.classList.remove("parent", "hide");
		fg_place(f, fgs.xpad + f.x * scale, f.w * scale);
	}
	fg_el("unzoom").classList.add("hide");
	fg_set_params();
	fg_search_again();
}

function fg_search_prompt() {
	var term = prompt("Enter a search term (regexp allowed, eg: ^ext4_)" +
		(fgs.ignorecase ? ", ignoring case" : "") +
		"\nPress Ctrl-i to toggle case sensitivity", fgs.term === null ? "" : fgs.term);
	if (term === null)
		return;
	if (term === "")
		fg_reset_search();
	else
		fg_search(term);
}

function fg_toggle_ignorecase() {
	fgs.ignorecase = !fgs.ignorecase;
	fg_el("ignorecase").classList.toggle("show", fgs.ignorecase);
	fg_search_again();
}

function fg_search_again() {
	if (fgs.term !== null)
		fg_search(fgs.term);
}

function fg_clear_marks() {
	var i, f;
	for (i = 0; i < fgs.frames.length; i++) {
		f = fgs.frames[i];
		f.rect.setAttribute("fill", f.fill);
	}
}

// Highlights frames whose name matches @term and reports the share of the
// current zoom they cover, counting nested matches once.
function fg_search(term) {
	var re, i, f, spans = [], sum = 0, end = -Infinity, base, pct, m = fg_el("matched");
	try {
		re = new RegExp(term, fgs.ignorecase ? "i" : "");
	} catch (err) {
		fg_clear_marks();
		m.textContent = "Invalid regex: " + term;
		m.classList.remove("hide");
		return;
	}
	fgs.term = term;
	fg_clear_marks();
	for (i = 0; i < fgs.frames.length; i++) {
		f = fgs.frames[i];
		if (f.g.classList.contains("hide") || f.g.classList.contains("parent"))
			continue;
		if (re.test(f.name)) {
			f.rect.setAttribute("fill", fgs.searchcolor);
			spans.push(f);
		}
	}
	spans.sort(function (a, b) { return a.x - b.x || b.w - a.w; });
	for (i = 0; i < spans.length; i++) {
		f = spans[i];
		if (f.x >= end) {
			sum += f.w;
			end = f.x + f.w;
		} else if (f.x + f.w > end) {
			sum += f.x + f.w - end;
			end = f.x + f.w;
		}
	}
	base = fgs.zoomed ? fgs.zoomed.w : fgs.total;
	pct = base > 0 ? 100 * sum / base : 0;
	m.textContent = "Matched: " + (pct === 100 ? "100" : pct.toFixed(1)) + "%";
	m.classList.remove("hide");
	fg_el("search").classList.add("show");
	fg_el("search").textContent = "Reset Search";
	fg_set_params();
}

function fg_reset_search() {
	fgs.term = null;
	fg_clear_marks();
	fg_el("matched").textContent = " ";
	fg_el("search").classList.remove("show");
	fg_el("search").textContent = "Search";
	fg_set_params();
}

// Keeps zoom (?x=fg:x&y=row) and search (?s=) in the URL so a reload restores them.
function fg_set_params() {
	var p;
	try {
		p = new URLSearchParams(window.location.search);
		p.delete("x");
		p.delete("y");
		p.delete("s");
		if (fgs.zoomed) {
			p.set("x", String(fgs.zoomed.x));
			p.set("y", String(fgs.zoomed.y));
		}
		if (fgs.term !== null)
			p.set("s", fgs.term);
		p = p.toString();
		history.replaceState(history.state, "",
			window.location.pathname + (p ? "?" + p : "") + window.location.hash);
	} catch (err) {
		// opaque origins may refuse replaceState; the graph works without it
	}
}

function fg_restore() {
	var p, x, y, i, f;
	try {
		p = new URLSearchParams(window.location.search);
	} catch (err) {
		return;
	}
	if (p.has("x") && p.has("y")) {
		x = Number(p.get("x"));
		y = Number(p.get("y"));
		for (i = 0; i < fgs.frames.length; i++) {
			f = fgs.frames[i];
			if (f.x === x && f.y === y) {
				fg_zoom(f);
				break;
			}
		}
	}
	if (p.get("s"))
		fg_search(p.get("s"));
}
