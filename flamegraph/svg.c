// SPDX-License-Identifier: MIT
/* flamegraph: merges the stacks frame by frame and streams a self-contained SVG. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

/* One thread writes the stream while rendering: skip stdio's per-call locking (GNU). */
#define fputs  fputs_unlocked
#define fputc  fputc_unlocked
#define fwrite fwrite_unlocked

#define FRAMEPAD 1
#define ROOT_ID	 UINT32_MAX
#define FG_NS	 "urn:scorch:flamegraph"

/* flamegraph.js, embedded at build time (see CMakeLists.txt) */
extern const char flamegraph_js[];

/* ---- text: UTF-8 repair and XML escaping ---- */

/* See flamegraph-private.h. */
size_t fg__utf8_clean(const char *in, size_t len, char *out, size_t *ncp)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0, cps = 0;

	while (i < len) {
		unsigned c = s[i], need, cp, k;

		cps++;
		if (c < 0x80) {
			out[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
		} else {
			goto bad;
		}
		if (i + need >= len)
			goto bad;
		for (k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				goto bad;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
			goto bad;
		memcpy(out + o, s + i, need + 1);
		o += need + 1;
		i += need + 1;
		continue;
	bad:
		memcpy(out + o, "\xef\xbf\xbd", 3);
		o += 3;
		i++;
	}
	*ncp = cps;
	return o;
}

/* Byte length of the first @n code points of valid UTF-8 @s[0..len). */
static size_t utf8_prefix(const char *s, size_t len, size_t n)
{
	size_t i = 0;

	while (i < len && n) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		n--;
	}
	return i;
}

/* See flamegraph-private.h. */
void fg__put_xml_escaped(FILE *out, const char *s, size_t len)
{
	size_t i, start = 0;

	for (i = 0; i < len; i++) {
		const char *rep;

		switch (s[i]) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			continue;
		}
		fwrite(s + start, 1, i - start, out);
		fputs(rep, out);
		start = i + 1;
	}
	fwrite(s + start, 1, len - start, out);
}

struct textbuf {
	char *buf;
	size_t cap;
};

/* Writes any user string, repaired and escaped. */
static int put_text(FILE *out, struct textbuf *t, const char *s)
{
	size_t len = strlen(s), ncp;

	if (array__grow((void **)&t->buf, &t->cap, 3 * len + 1, 1))
		return -ENOMEM;
	fg__put_xml_escaped(out, t->buf, fg__utf8_clean(s, len, t->buf, &ncp));
	return 0;
}

/* ---- numbers ---- */

/* Formats @v with thousands separators into @buf (>= 32 bytes). */
static const char *fmt_u64(char *buf, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), i, o = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

static const char *fmt_count(char *buf, uint64_t v, double factor)
{
	double d;

	if (factor == 1)
		return fmt_u64(buf, v);
	d = round((double)v * factor);
	if (d >= 18446744073709551615.0) {
		snprintf(buf, 32, "%.3g", d);
		return buf;
	}
	return fmt_u64(buf, (uint64_t)d);
}

/* printf's floating point is most of the time of a large graph: these are exact for our ranges */
static void put_u64(FILE *out, uint64_t v)
{
	char buf[24];
	int i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite(buf + i, 1, sizeof(buf) - (size_t)i, out);
}

/* Writes @v >= 0 rounded to @decimals (1 or 2) places, like "%.1f" up to ties. */
static void put_fixed(FILE *out, double v, int decimals)
{
	uint64_t scale = decimals == 1 ? 10 : 100, n, frac;
	char buf[4];

	if (!(v >= 0) || v >= 1e15) {
		fprintf(out, "%.*f", decimals, v);
		return;
	}
	n = (uint64_t)llround(v * (double)scale);
	put_u64(out, n / scale);
	frac = n % scale;
	buf[0] = '.';
	if (decimals == 1) {
		buf[1] = (char)('0' + frac);
		fwrite(buf, 1, 2, out);
	} else {
		buf[1] = (char)('0' + frac / 10);
		buf[2] = (char)('0' + frac % 10);
		fwrite(buf, 1, 3, out);
	}
}

/* ---- merging: one pass over the sorted stacks ---- */

struct open_frame {
	uint32_t name;
	uint32_t level; /* "--" frames below it: 0 blocked, 1 its waker, 2 the waker's... */
	uint64_t start, self;
	uint64_t off, rq;      /* off-CPU and runqueue time beneath (complete when it closes) */
	uint64_t oself, other; /* differential: the count not drawn, self and total */
};

typedef int (*flow_fn)(void *ctx, size_t depth, const struct open_frame *f, uint64_t width);

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Reports path[depth] and hands what it accumulated to its parent. */
static int close_frame(struct open_frame *path, size_t depth, uint64_t x, flow_fn fn, void *ctx)
{
	path[depth - 1].off += path[depth].off;
	path[depth - 1].rq += path[depth].rq;
	path[depth - 1].other = sat_add(path[depth - 1].other, path[depth].other);
	return fn(ctx, depth, &path[depth], x - path[depth].start);
}

/*
 * Walks the stacks in order and reports every merged frame when it closes
 * (children before parents, siblings left to right), the root (depth 0,
 * ROOT_ID) last. A frame is merged with the previous stack's frame at the
 * same depth when the whole prefix up to it is equal, so after a frame-wise
 * sort that is a trie walk; in input order it is flamegraph.pl's flame chart.
 */
static int flow(struct flamegraph *fg, unsigned shift, uint32_t dashdash, bool diff, flow_fn fn,
		void *ctx)
{
	struct open_frame *path = malloc((fg->max_len + 1) * sizeof(*path));
	size_t depth = 0, i, k;
	uint64_t x = 0;
	int err = 0;

	if (!path)
		return -ENOMEM;
	path[0] = (struct open_frame){.name = ROOT_ID};
	for (i = 0; i < fg->nr_stacks; i++) {
		const struct fg_stack *s = &fg->stacks[i];
		const uint32_t *fr = fg->frames + s->off;
		uint64_t c = s->count >> shift, o = diff ? s->other >> shift : 0;

		if (!c && !o)
			continue;
		for (k = 0; k < depth && k < s->len && path[k + 1].name == fr[k]; k++)
			;
		for (; depth > k; depth--) {
			err = close_frame(path, depth, x, fn, ctx);
			if (err)
				goto cleanup;
		}
		for (; depth < s->len; depth++) {
			path[depth + 1] = (struct open_frame){
				.name = fr[depth],
				.level = path[depth].level + (path[depth].name == dashdash),
				.start = x,
			};
		}
		path[depth].self += c;
		path[depth].oself = sat_add(path[depth].oself, o);
		path[depth].other = sat_add(path[depth].other, o);
		if (s->kind == FG_KIND_OFFCPU)
			path[depth].off += c;
		else if (s->kind == FG_KIND_RUNQUEUE)
			path[depth].rq += c;
		x += c;
	}
	for (; depth; depth--) {
		err = close_frame(path, depth, x, fn, ctx);
		if (err)
			goto cleanup;
	}
	err = fn(ctx, 0, &path[0], x);
cleanup:
	free(path);
	return err;
}

/* ---- sorting ---- */

int fg__cmp_names(const void *a, const void *b, void *arg)
{
	const struct flamegraph *fg = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t lx = fg->name_len[x], ly = fg->name_len[y];
	int c = memcmp(fg->names[x], fg->names[y], MIN(lx, ly));

	if (c)
		return c;
	return lx < ly ? -1 : lx > ly;
}

static int cmp_stacks(const void *a, const void *b, void *arg)
{
	const struct flamegraph *fg = arg;
	const struct fg_stack *x = a, *y = b;
	const uint32_t *fx, *fy;
	size_t n, i;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	fx = fg->frames + x->off;
	fy = fg->frames + y->off;
	n = MIN(x->len, y->len);
	for (i = 2; i < n; i++)
		if (fx[i] != fy[i])
			return fx[i] < fy[i] ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	/* equal stacks: keep the order total and deterministic */
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Renumbers names in bytewise order, so comparing ids compares names, then sorts the stacks. */
static int sort_stacks(struct flamegraph *fg)
{
	uint32_t *order = NULL, *rank = NULL;
	const char **names = NULL;
	uint32_t *lens = NULL;
	size_t i;
	int err = 0;

	order = malloc(MAX(fg->nr_names, 1) * sizeof(*order));
	rank = malloc(MAX(fg->nr_names, 1) * sizeof(*rank));
	names = malloc(MAX(fg->nr_names, 1) * sizeof(*names));
	lens = malloc(MAX(fg->nr_names, 1) * sizeof(*lens));
	if (!order || !rank || !names || !lens) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < fg->nr_names; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, fg->nr_names, sizeof(*order), fg__cmp_names, fg);
	for (i = 0; i < fg->nr_names; i++) {
		rank[order[i]] = (uint32_t)i;
		names[i] = fg->names[order[i]];
		lens[i] = fg->name_len[order[i]];
	}
	for (i = 0; i < fg->nr_frames; i++)
		fg->frames[i] = rank[fg->frames[i]];
	for (i = 0; i < fg->nr_stacks; i++) {
		const uint32_t *fr = fg->frames + fg->stacks[i].off;

		/* ids are < UINT32_MAX, so id + 1 fits; a missing second frame sorts first */
		fg->stacks[i].key =
			(uint64_t)fr[0] << 32 | (fg->stacks[i].len > 1 ? fr[1] + 1ULL : 0);
	}
	memcpy(fg->names, names, fg->nr_names * sizeof(*names));
	memcpy(fg->name_len, lens, fg->nr_names * sizeof(*lens));
	/* the name index is stale now; the graph takes no more stacks */
	qsort_r(fg->stacks, fg->nr_stacks, sizeof(*fg->stacks), cmp_stacks, fg);
cleanup:
	free(order);
	free(rank);
	free(names);
	free(lens);
	return err;
}

/* ---- SVG ---- */

struct render {
	struct flamegraph *fg;
	const struct flamegraph_opts *o;
	FILE *out;
	struct textbuf tb;
	struct cpal cp;
	double timemax;	 /* 100 % */
	double min_time; /* frames narrower (in counts) are omitted */
	double pxper;	 /* px per count */
	double imgh, ypad1, ypad2, ypad3;
	char *countname; /* escaped once */
	size_t countname_len;
	size_t max_depth, nr_frames;
	size_t nr_deeper; /* FG_FRAME_DEEPER frames drawn */
	bool diff;	  /* differential colours and titles */
	double maxdelta;  /* the largest |after - before| of a drawn frame */
};

/* A differential frame's counts: total, or self with --self. */
static void diff_counts(const struct render *r, const struct open_frame *f, uint64_t width,
			uint64_t *before, uint64_t *after)
{
	uint64_t drawn = r->o->self ? f->self : width, other = r->o->self ? f->oself : f->other;

	*before = r->o->negate ? drawn : other;
	*after = r->o->negate ? other : drawn;
}

static double diff_delta(const struct render *r, const struct open_frame *f, uint64_t width)
{
	uint64_t b, a;

	diff_counts(r, f, width, &b, &a);
	return (double)a - (double)b;
}

static int measure_cb(void *ctx, size_t depth, const struct open_frame *f, uint64_t width)
{
	struct render *r = ctx;

	if (!width || (double)width < r->min_time || depth > FG_MAX_DEPTH + 1)
		return 0;
	if (depth > FG_MAX_DEPTH)
		r->nr_deeper++;
	r->nr_frames++;
	if (r->diff && fabs(diff_delta(r, f, width)) > r->maxdelta)
		r->maxdelta = fabs(diff_delta(r, f, width));
	if (depth > r->max_depth)
		r->max_depth = depth;
	return 0;
}

/*
 * ", 60.0% on-CPU, 40.0% off-CPU = 30.0% blocked + 10.0% runqueue" (no parentheses:
 * the script takes the name as the text before the title's last " (")
 */
static void put_wall_shares(FILE *out, uint64_t width, uint64_t off, uint64_t rq)
{
	double w = (double)width, oncpu = (double)(width - off - rq);

	fputs(", ", out);
	put_fixed(out, 100 * oncpu / w, 1);
	fputs("% on-CPU, ", out);
	put_fixed(out, 100 * (double)(off + rq) / w, 1);
	fputs("% off-CPU", out);
	if (rq) {
		fputs(" = ", out);
		put_fixed(out, 100 * (double)off / w, 1);
		fputs("% blocked + ", out);
		put_fixed(out, 100 * (double)rq / w, 1);
		fputs("% runqueue", out);
	}
}

/* "; before 1,000, after 1,234, +234, +23.40%" (self counts with --self) */
static void put_diff(struct render *r, const struct open_frame *f, uint64_t width)
{
	char b[48], a[48], d[48];
	uint64_t before, after;

	diff_counts(r, f, width, &before, &after);
	fputs(r->o->self ? "; self before " : "; before ", r->out);
	fputs(fmt_count(b, before, r->o->factor), r->out);
	fputs(", after ", r->out);
	fputs(fmt_count(a, after, r->o->factor), r->out);
	fputs(", ", r->out);
	if (after == before) {
		fputs("no change", r->out);
		return;
	}
	fputc(after > before ? '+' : '-', r->out);
	fputs(fmt_count(d, after > before ? after - before : before - after, r->o->factor), r->out);
	fputs(", ", r->out);
	if (!before) {
		fputs("new", r->out);
		return;
	}
	fputc(after > before ? '+' : '-', r->out);
	put_fixed(r->out, 100 * fabs((double)after - (double)before) / (double)before, 2);
	fputc('%', r->out);
}

static int emit_cb(void *ctx, size_t depth, const struct open_frame *f, uint64_t width)
{
	struct render *r = ctx;
	const struct flamegraph_opts *o = r->o;
	const char *name;
	size_t len, clen, ncp, chars, keep;
	double x1, x2, y1, y2, pct;
	char annot = 0, cnt[48], self[48];
	struct rgb c;

	if (!width || (double)width < r->min_time || depth > FG_MAX_DEPTH + 1)
		return 0;
	if (f->name == ROOT_ID) {
		name = "all";
		len = 3;
	} else if (depth > FG_MAX_DEPTH) {
		name = FG_FRAME_DEEPER;
		len = sizeof(FG_FRAME_DEEPER) - 1;
	} else {
		name = r->fg->names[f->name];
		len = r->fg->name_len[f->name];
		annot = fg_color__annotation(name, &len);
	}
	if (r->diff) {
		c = fg_color__diff(diff_delta(r, f, width), r->maxdelta);
	} else if (o->colors == FG_PAL_WALL) {
		c = fg_color__wall(o, name, len, width, f->off, f->rq);
	} else if (o->cp && f->name != ROOT_ID && depth <= FG_MAX_DEPTH) {
		size_t full = r->fg->name_len[f->name];
		const struct cp_entry *e = cpal__get(&r->cp, name, full);

		if (e) {
			c = e->c;
		} else {
			c = fg_color__frame(o, name, len, annot, f->level);
			if (cpal__put(&r->cp, name, full, c))
				return -ENOMEM;
			r->cp.dirty = true;
		}
	} else if (f->name == ROOT_ID) {
		c = fg_color__frame(o, "all", 3, 0, 0);
	} else {
		c = fg_color__frame(o, name, len, annot, f->level);
	}

	x1 = FG_XPAD + (double)f->start * r->pxper;
	x2 = FG_XPAD + (double)(f->start + width) * r->pxper;
	if (o->inverted) {
		y1 = r->ypad1 + r->ypad3 + (double)depth * o->height;
		y2 = y1 + o->height - FRAMEPAD;
	} else {
		y1 = r->imgh - r->ypad2 - (double)(depth + 1) * o->height + FRAMEPAD;
		y2 = r->imgh - r->ypad2 - (double)depth * o->height;
	}
	pct = r->timemax > 0 ? 100.0 * (double)width / r->timemax : 0;

	if (array__grow((void **)&r->tb.buf, &r->tb.cap, 3 * len + 8, 1))
		return -ENOMEM;
	clen = fg__utf8_clean(name, len, r->tb.buf, &ncp);

	fputs("<g fg:x=\"", r->out);
	put_u64(r->out, f->start);
	fputs("\" fg:w=\"", r->out);
	put_u64(r->out, width);
	fputs("\"><title>", r->out);
	fg__put_xml_escaped(r->out, r->tb.buf, clen);
	fputs(" (", r->out);
	fputs(fmt_count(cnt, width, o->factor), r->out);
	fputc(' ', r->out);
	fputs(r->countname, r->out);
	fputs(", ", r->out);
	put_fixed(r->out, pct, 2);
	fputc('%', r->out);
	if (f->self && depth <= FG_MAX_DEPTH) {
		fputs(", self ", r->out);
		fputs(fmt_count(self, f->self, o->factor), r->out);
	}
	if (r->diff)
		put_diff(r, f, width);
	else if (o->colors == FG_PAL_WALL && width)
		put_wall_shares(r->out, width, f->off, f->rq);
	fputs(")</title><rect x=\"", r->out);
	put_fixed(r->out, x1, 1);
	fputs("\" y=\"", r->out);
	put_fixed(r->out, y1, 1);
	fputs("\" width=\"", r->out);
	put_fixed(r->out, x2 - x1, 1);
	fputs("\" height=\"", r->out);
	put_fixed(r->out, y2 - y1, 1);
	fputs("\" fill=\"rgb(", r->out);
	put_u64(r->out, c.r);
	fputc(',', r->out);
	put_u64(r->out, c.g);
	fputc(',', r->out);
	put_u64(r->out, c.b);
	fputs(")\" rx=\"2\" ry=\"2\"/><text x=\"", r->out);
	put_fixed(r->out, x1 + 3, 2);
	fputs("\" y=\"", r->out);
	put_fixed(r->out, 3 + (y1 + y2) / 2, 2);
	fputs("\">", r->out);
	chars = (size_t)((x2 - x1) / (o->fontsize * o->fontwidth));
	if (chars >= 3) {
		if (ncp <= chars) {
			fg__put_xml_escaped(r->out, r->tb.buf, clen);
		} else {
			keep = utf8_prefix(r->tb.buf, clen, chars - 2);
			fg__put_xml_escaped(r->out, r->tb.buf, keep);
			fputs("..", r->out);
		}
	}
	fputs("</text></g>\n", r->out);
	return ferror(r->out) ? -EIO : 0;
}

static const char *bg_stops(const struct flamegraph_opts *o, const char **to)
{
	const char *bg = o->bgcolors;

	if (!bg) {
		switch (o->colors) {
		case FG_PAL_HOT:
		case FG_PAL_JAVA:
		case FG_PAL_JS:
		case FG_PAL_PERL:
			bg = "yellow";
			break;
		case FG_PAL_IO:
		case FG_PAL_WAKEUP:
		case FG_PAL_CHAIN:
			bg = "blue";
			break;
		case FG_PAL_MEM:
			bg = "green";
			break;
		default:
			bg = "grey";
		}
	}
	if (!strcmp(bg, "yellow"))
		return *to = "#eeeeb0", "#eeeeee";
	if (!strcmp(bg, "blue"))
		return *to = "#e0e0ff", "#eeeeee";
	if (!strcmp(bg, "green"))
		return *to = "#e0ffe0", "#eef2ee";
	if (!strcmp(bg, "grey"))
		return *to = "#e8e8e8", "#f8f8f8";
	return *to = bg, bg; /* validated #rrggbb: flat */
}

/* Writes @s keeping only characters that cannot change the meaning of a CSS font-family. */
static void put_font(FILE *out, const char *s)
{
	bool any = false;

	for (; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(" ,_-", *s)) {
			fputc(*s, out);
			any = true;
		}
	}
	if (!any)
		fputs("sans-serif", out);
}

/* An XML comment may not contain "--" nor end in "-". */
static int put_comment_text(FILE *out, struct textbuf *t, const char *s)
{
	size_t len = strlen(s), ncp, n, i;

	if (array__grow((void **)&t->buf, &t->cap, 3 * len + 1, 1))
		return -ENOMEM;
	n = fg__utf8_clean(s, len, t->buf, &ncp);
	for (i = 0; i < n; i++) {
		fputc(t->buf[i], out);
		if (t->buf[i] == '-' && (i + 1 == n || t->buf[i + 1] == '-'))
			fputc(' ', out);
	}
	return 0;
}

static int write_head(struct render *r, double width, double height, const char *title)
{
	const struct flamegraph_opts *o = r->o;
	const char *from, *to;
	int err = 0;

	from = bg_stops(o, &to);
	fprintf(r->out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" onload=\"init(evt)\" "
		"viewBox=\"0 0 %.0f %.0f\" xmlns=\"http://www.w3.org/2000/svg\" "
		"xmlns:xlink=\"http://www.w3.org/1999/xlink\" xmlns:fg=\"" FG_NS "\">\n"
		"<!-- Flame graph rendered by scorch flamegraph. -->\n",
		width, height, width, height);
	if (o->notes) {
		fputs("<!-- NOTES: ", r->out);
		err = put_comment_text(r->out, &r->tb, o->notes);
		fputs(" -->\n", r->out);
	}
	fprintf(r->out,
		"<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n"
		"<style type=\"text/css\">\n"
		"text { font-family:",
		from, to);
	put_font(r->out, o->fonttype);
	fprintf(r->out,
		"; font-size:%gpx; fill:rgb(0,0,0); }\n"
		"#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
		"#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
		"#subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
		"#title { text-anchor:middle; font-size:%gpx; }\n"
		"#unzoom { cursor:pointer; }\n"
		"#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
		".hide { display:none; }\n"
		".parent { opacity:0.5; }\n"
		"</style>\n",
		o->fontsize, o->fontsize + 5);
	fprintf(r->out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		flamegraph_js);
	fprintf(r->out,
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#background)\"/>\n"
		"<text id=\"title\" x=\"%.2f\" y=\"%.2f\">",
		width, height, width / 2, o->fontsize * 2);
	err = err ?: put_text(r->out, &r->tb, title);
	fputs("</text>\n", r->out);
	if (o->subtitle) {
		fprintf(r->out, "<text id=\"subtitle\" x=\"%.2f\" y=\"%.2f\">", width / 2,
			o->fontsize * 4);
		err = err ?: put_text(r->out, &r->tb, o->subtitle);
		fputs("</text>\n", r->out);
	}
	return err;
}

static int write_empty(struct render *r, const char *title)
{
	const struct flamegraph_opts *o = r->o;
	double h = o->fontsize * 8;
	int err = write_head(r, o->width, h, title);

	fprintf(r->out,
		"<text id=\"error\" x=\"%.2f\" y=\"%.2f\" style=\"text-anchor:middle\">"
		"ERROR: No stack counts found</text>\n</svg>\n",
		o->width / 2.0, h / 2 + o->fontsize);
	return err;
}

static const char *default_title(const struct flamegraph_opts *o, bool diff)
{
	if (o->title)
		return o->title;
	if (o->flamechart)
		return "Flame Chart";
	if (diff)
		return o->inverted ? "Differential Icicle Graph" : "Differential Flame Graph";
	if (o->colors == FG_PAL_WALL && !o->inverted)
		return "Wall-Clock Flame Graph";
	return o->inverted ? "Icicle Graph" : "Flame Graph";
}

static int find_dashdash(const struct flamegraph *fg, uint32_t *out)
{
	size_t i;

	*out = ROOT_ID - 1;
	for (i = 0; i < fg->nr_names; i++) {
		if (fg__is_sep(fg->names[i], fg->name_len[i])) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	return 0;
}

static const char *diff_subtitle(const struct flamegraph_opts *o)
{
	if (o->negate)
		return o->self ? "widths: before; colour: change in self count (red grew, blue "
				 "shrank)"
			       : "widths: before; colour: change in total count (red grew, blue "
				 "shrank)";
	return o->self ? "widths: after; colour: change in self count (red grew, blue shrank)"
		       : "widths: after; colour: change in total count (red grew, blue shrank)";
}

int flamegraph__write_svg(struct flamegraph *fg, FILE *out)
{
	struct render r = {.fg = fg, .out = out};
	const struct flamegraph_opts *o;
	unsigned __int128 sum;
	uint32_t dashdash;
	unsigned shift = 0;
	double area;
	int err = 0;

	if (!fg || !out)
		return -EINVAL;
	o = r.o = &fg->opts;
	r.diff = flamegraph__is_diff(fg);
	if (fg->diff_lines && fg->single_lines) {
		pr_warn("flamegraph: %zu lines have two counts (differential input) and %zu one; "
			"drawn as a plain graph from the last count of each line\n",
			fg->diff_lines, fg->single_lines);
		pr_hint("a differential graph needs two counts (before after) on every line\n");
	}
	if (r.diff && !o->subtitle)
		fg->opts.subtitle = diff_subtitle(o);
	sum = fg->sum;
	area = (double)o->width - 2 * FG_XPAD;
	if (fg->written)
		return -EALREADY;
	fg->written = true;
	if (o->cp && (o->colors == FG_PAL_WALL || r.diff)) {
		pr_warn("flamegraph: --cp is ignored for %s graphs (colours come from the %s)\n",
			r.diff ? "differential" : "wall-clock",
			r.diff ? "change" : "on/off-CPU split");
	} else if (o->cp) {
		err = cpal__load(&r.cp, o->palette_file);
		if (err)
			goto cleanup;
	}
	if (!sum) {
		err = write_empty(&r, default_title(o, r.diff));
		if (!err)
			err = -ENODATA;
		goto cleanup;
	}
	while (sum > UINT64_MAX) {
		shift++;
		sum = fg->sum >> shift;
	}
	if (shift) {
		/* recount what survives the scaling exactly */
		size_t i;

		sum = 0;
		for (i = 0; i < fg->nr_stacks; i++)
			sum += fg->stacks[i].count >> shift;
		while (sum > UINT64_MAX) {
			shift++;
			sum = 0;
			for (i = 0; i < fg->nr_stacks; i++)
				sum += fg->stacks[i].count >> shift;
		}
		pr_warn("flamegraph: the counts add up to more than 2^64; all counts were divided "
			"by 2^%u\n",
			shift);
	}
	if (!o->flamechart) {
		err = sort_stacks(fg);
		if (err)
			goto cleanup;
	}
	find_dashdash(fg, &dashdash);

	r.timemax = (double)(uint64_t)sum;
	if (o->total) {
		if ((double)o->total >= r.timemax)
			r.timemax = (double)o->total;
		else
			pr_warn("flamegraph: ignoring --total %" PRIu64
				": smaller than the sum of counts\n",
				o->total);
	}
	r.pxper = area / r.timemax;
	r.min_time = o->minwidth_percent ? o->minwidth / 100 * r.timemax : o->minwidth / r.pxper;
	r.ypad1 = o->fontsize * 3;
	r.ypad2 = o->fontsize * 2 + 10;
	r.ypad3 = o->subtitle ? o->fontsize * 2 : 0;

	err = flow(fg, shift, dashdash, r.diff, measure_cb, &r);
	if (err)
		goto cleanup;
	if (r.nr_deeper) {
		pr_warn("flamegraph: stacks deeper than %d frames: what is above drawn as %zu "
			"'" FG_FRAME_DEEPER "' frames\n",
			FG_MAX_DEPTH, r.nr_deeper);
		pr_hint("cut or fold the deep stacks (e.g. repeated recursive frames) to see their "
			"tops\n");
	}
	r.imgh = (double)(r.max_depth + 1) * o->height + r.ypad1 + r.ypad2 + r.ypad3;
	err = write_head(&r, o->width, r.imgh, default_title(o, r.diff));
	if (err)
		goto cleanup;
	fprintf(out,
		"<text id=\"details\" x=\"%d\" y=\"%.2f\"> </text>\n"
		"<text id=\"unzoom\" x=\"%d\" y=\"%.2f\" class=\"hide\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%.2f\" y=\"%.2f\">Search</text>\n"
		"<text id=\"ignorecase\" x=\"%.2f\" y=\"%.2f\">ic</text>\n"
		"<text id=\"matched\" x=\"%.2f\" y=\"%.2f\"> </text>\n",
		FG_XPAD, r.imgh - r.ypad2 / 2, FG_XPAD, o->fontsize * 2, o->width - FG_XPAD - 100.0,
		o->fontsize * 2, o->width - FG_XPAD - 16.0, o->fontsize * 2, o->width - FG_XPAD - 100.0,
		r.imgh - r.ypad2 / 2);
	fprintf(out,
		"<g id=\"frames\" fg:total=\"%.0f\" fg:xpad=\"%d\" fg:width=\"%.0f\" "
		"fg:fontsize=\"%g\" fg:fontwidth=\"%g\" fg:inverted=\"%d\" fg:nametype=\"",
		r.timemax, FG_XPAD, area, o->fontsize, o->fontwidth, o->inverted ? 1 : 0);
	err = put_text(out, &r.tb, o->nametype);
	if (err)
		goto cleanup;
	fputs("\">\n", out);
	{
		FILE *m = open_memstream(&r.countname, &r.countname_len);

		if (!m) {
			err = -ENOMEM;
			goto cleanup;
		}
		err = put_text(m, &r.tb, o->countname);
		if (fclose(m) && !err)
			err = -ENOMEM;
		if (err)
			goto cleanup;
	}
	err = flow(fg, shift, dashdash, r.diff, emit_cb, &r);
	if (err)
		goto cleanup;
	fputs("</g>\n</svg>\n", out);
	pr_debug("flamegraph: %zu stacks, %zu names, %zu frames drawn\n", fg->nr_stacks,
		 fg->nr_names, r.nr_frames);
	if (o->cp)
		err = cpal__save(&r.cp, o->palette_file);
cleanup:
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
	if (err == -ENOMEM)
		pr_err("flamegraph: out of memory rendering the SVG\n");
	free(r.tb.buf);
	free(r.countname);
	cpal__free(&r.cp);
	return err;
}

int flamegraph__write_svg_path(const struct folded *f, const struct flamegraph_opts *opts,
			       const char *path)
{
	struct flamegraph *fg = NULL;
	struct out_file of = {0};
	int err;

	fg = flamegraph__new(opts);
	if (!fg) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = flamegraph__add_folded(fg, f);
	if (err)
		goto cleanup;
	err = out__open(&of, path);
	if (err)
		goto cleanup;
	err = flamegraph__write_svg(fg, of.fp);
	if (err && err != -ENODATA)
		err = out__fail(&of, err);
	/* the "No stack counts found" SVG is still a valid result to keep */
	{
		int cerr = out__close(&of, !err || err == -ENODATA);

		err = err ?: cerr;
	}
cleanup:
	flamegraph__free(fg);
	return err;
}
