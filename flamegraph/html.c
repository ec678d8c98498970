// SPDX-License-Identifier: MIT
/* flamegraph: the self-contained HTML profile viewer (the merged tree, its names, the page). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

#define fputs  fputs_unlocked
#define fputc  fputc_unlocked
#define fwrite fwrite_unlocked

#define HTML_FORMAT_VERSION 1

/* html.css, html-body.html and html.js, embedded at build time (see CMakeLists.txt) */
extern const char fg_html_css[];
extern const char fg_html_body[];
extern const char fg_html_js[];

int flamegraph__set_interval(struct flamegraph *fg, unsigned int interval)
{
	if (!fg)
		return -EINVAL;
	if (interval >= FG_HTML_MAX_INTERVALS)
		return -ERANGE;
	fg->interval = interval;
	if (interval >= fg->nr_intervals)
		fg->nr_intervals = interval + 1;
	return 0;
}

/* ---- the tree ---- */

struct html_node {
	uint32_t name; /* rank of the name (bytewise order) */
	uint32_t depth;
	uint64_t self, oself; /* drawn count, and the differential count not drawn */
};

/* A node's count in one interval (merged after sorting). */
struct html_slice {
	uint32_t interval;
	uint32_t node;
	uint64_t count;
};

struct html_tree {
	const struct flamegraph *fg;
	uint32_t *rank;	   /* name id -> rank */
	uint32_t *by_rank; /* the page's names in rank order: name ids */
	size_t nr_ranks;   /* ... how many (all the graph's, but those tree_prune() left out) */
	size_t *order;	/* stack indices, sorted */
	struct html_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct html_slice *slices;
	size_t nr_slices, cap_slices;
	uint32_t *path; /* node index per depth of the open path (path[0]: the root) */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct html_tree *t = arg;
	const struct fg_stack *x = &t->fg->stacks[*(const size_t *)a];
	const struct fg_stack *y = &t->fg->stacks[*(const size_t *)b];
	const uint32_t *fx = t->fg->frames + x->off, *fy = t->fg->frames + y->off;
	size_t n = MIN(x->len, y->len), i;

	for (i = 0; i < n; i++)
		if (fx[i] != fy[i])
			return t->rank[fx[i]] < t->rank[fy[i]] ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Ranks the names bytewise and orders the stacks frame by frame (input order: flamechart). */
static int tree_sort(struct html_tree *t)
{
	const struct flamegraph *fg = t->fg;
	uint32_t *ids = malloc(MAX(fg->nr_names, 1) * sizeof(*ids));
	size_t i;

	t->rank = malloc(MAX(fg->nr_names, 1) * sizeof(*t->rank));
	t->order = malloc(MAX(fg->nr_stacks, 1) * sizeof(*t->order));
	if (!ids || !t->rank || !t->order) {
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < fg->nr_names; i++)
		ids[i] = (uint32_t)i;
	qsort_r(ids, fg->nr_names, sizeof(*ids), fg__cmp_names, (void *)fg);
	for (i = 0; i < fg->nr_names; i++)
		t->rank[ids[i]] = (uint32_t)i;
	t->by_rank = ids;
	t->nr_ranks = fg->nr_names;
	for (i = 0; i < fg->nr_stacks; i++)
		t->order[i] = i;
	if (!fg->opts.flamechart)
		qsort_r(t->order, fg->nr_stacks, sizeof(*t->order), cmp_order, t);
	return 0;
}

static int add_slice(struct html_tree *t, uint32_t interval, uint32_t node, uint64_t count)
{
	if (array__grow((void **)&t->slices, &t->cap_slices, t->nr_slices + 1, sizeof(*t->slices)))
		return -ENOMEM;
	t->slices[t->nr_slices++] = (struct html_slice){interval, node, count};
	return 0;
}

static int cmp_slices(const void *a, const void *b)
{
	const struct html_slice *x = a, *y = b;

	if (x->interval != y->interval)
		return x->interval < y->interval ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* One slice per (interval, node), in that order. */
static void slices_merge(struct html_tree *t)
{
	size_t i, k;

	if (!t->nr_slices)
		return;
	qsort(t->slices, t->nr_slices, sizeof(*t->slices), cmp_slices);
	for (i = 1, k = 0; i < t->nr_slices; i++) {
		if (!cmp_slices(&t->slices[k], &t->slices[i]))
			t->slices[k].count = sat_add(t->slices[k].count, t->slices[i].count);
		else
			t->slices[++k] = t->slices[i];
	}
	t->nr_slices = k + 1;
}

/*
 * Merges the ordered stacks into nodes in preorder: a stack shares the nodes of
 * the previous one as far as their frames are equal (a trie walk after the sort).
 */
static int tree_build(struct html_tree *t)
{
	const struct flamegraph *fg = t->fg;
	size_t depth = 0, k, o;
	int err;

	t->path = malloc((fg->max_len + 1) * sizeof(*t->path));
	if (!t->path || array__grow((void **)&t->nodes, &t->cap_nodes, 1, sizeof(*t->nodes)))
		return -ENOMEM;
	t->nodes[0] = (struct html_node){.name = UINT32_MAX};
	t->nr_nodes = 1;
	t->path[0] = 0;
	for (o = 0; o < fg->nr_stacks; o++) {
		const struct fg_stack *s = &fg->stacks[t->order[o]];
		const uint32_t *fr = fg->frames + s->off;
		struct html_node *leaf;

		if (!s->count && !s->other)
			continue;
		for (k = 0;
		     k < depth && k < s->len && t->nodes[t->path[k + 1]].name == t->rank[fr[k]];
		     k++)
			;
		for (depth = k; depth < s->len; depth++) {
			if (t->nr_nodes >= UINT32_MAX ||
			    array__grow((void **)&t->nodes, &t->cap_nodes, t->nr_nodes + 1,
					sizeof(*t->nodes)))
				return -ENOMEM;
			t->nodes[t->nr_nodes] = (struct html_node){
				.name = t->rank[fr[depth]],
				.depth = (uint32_t)depth + 1,
			};
			t->path[depth + 1] = (uint32_t)t->nr_nodes++;
		}
		leaf = &t->nodes[t->path[depth]];
		leaf->self = sat_add(leaf->self, s->count);
		leaf->oself = sat_add(leaf->oself, s->other);
		if (fg->nr_intervals > 1 && s->count) {
			err = add_slice(t, s->interval, t->path[depth], s->count);
			if (err)
				return err;
		}
	}
	slices_merge(t);
	return 0;
}

/*
 * --minwidth given: the page leaves out the frames the SVG leaves out (narrower than
 * minwidth at the SVG's width, and what is above them), their counts kept as their
 * nearest frame left's own, and the names only they had. Returns 0 or -ENOMEM.
 */
static int tree_prune(struct html_tree *t)
{
	const struct flamegraph_opts *o = &t->fg->opts;
	uint64_t *total = calloc(t->nr_nodes, sizeof(*total)), timemax;
	uint32_t *parent = malloc(t->nr_nodes * sizeof(*parent));
	uint32_t *to = malloc(t->nr_nodes * sizeof(*to));
	bool *used = calloc(MAX(t->nr_ranks, 1), sizeof(*used));
	size_t i, n = 1, k;
	double min;
	int err = -ENOMEM;

	if (t->nr_nodes >> 31) {
		err = -EOVERFLOW; /* to[]'s top bit marks a node left out */
		goto cleanup;
	}
	if (!total || !parent || !to || !used)
		goto cleanup;
	for (i = 1; i < t->nr_nodes; i++) {
		t->path[t->nodes[i].depth] = (uint32_t)i;
		parent[i] = t->path[t->nodes[i].depth - 1];
	}
	/* children follow their parent in preorder: totals from the end */
	for (i = t->nr_nodes; i-- > 0;) {
		total[i] = sat_add(total[i], t->nodes[i].self);
		if (i)
			total[parent[i]] = sat_add(total[parent[i]], total[i]);
	}
	timemax = MAX(total[0], o->total);
	min = o->minwidth_percent ? o->minwidth / 100 * (double)timemax
				  : o->minwidth * (double)timemax / MAX(o->width - 2.0 * FG_XPAD, 1.0);
	/* kept nodes move down in place; a node left out adds to its parent's place,
	 * already written (to[] of a left-out node: its nearest kept ancestor's, with
	 * the top bit) */
	to[0] = 0;
	for (i = 1; i < t->nr_nodes; i++) {
		uint32_t up = to[parent[i]];

		if (!(up >> 31) && (double)total[i] >= min) {
			to[i] = (uint32_t)n;
			t->nodes[n++] = t->nodes[i];
			continue;
		}
		to[i] = up | 1u << 31;
		up &= ~(1u << 31);
		t->nodes[up].self = sat_add(t->nodes[up].self, t->nodes[i].self);
		t->nodes[up].oself = sat_add(t->nodes[up].oself, t->nodes[i].oself);
	}
	t->nr_nodes = n;
	for (i = 0; i < t->nr_slices; i++)
		t->slices[i].node = to[t->slices[i].node] & ~(1u << 31);
	slices_merge(t);
	/* the names of the nodes left, renumbered in the same order */
	for (i = 1; i < n; i++)
		used[t->nodes[i].name] = true;
	for (i = 0, k = 0; i < t->nr_ranks; i++) {
		to[i] = (uint32_t)k;
		if (used[i])
			t->by_rank[k++] = t->by_rank[i];
	}
	t->nr_ranks = k;
	for (i = 1; i < n; i++)
		t->nodes[i].name = to[t->nodes[i].name];
	err = 0;
cleanup:
	free(total);
	free(parent);
	free(to);
	free(used);
	return err;
}

static void tree_free(struct html_tree *t)
{
	free(t->rank);
	free(t->by_rank);
	free(t->order);
	free(t->nodes);
	free(t->slices);
	free(t->path);
}

/* ---- the payload: LEB128 varints, gzipped, base64 ---- */

struct vbuf {
	unsigned char *p;
	size_t n, cap;
	int err;
};

static void vb_put(struct vbuf *b, uint64_t v)
{
	if (b->err)
		return;
	if (array__grow((void **)&b->p, &b->cap, b->n + 10, 1)) {
		b->err = -ENOMEM;
		return;
	}
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		b->p[b->n++] = c | (v ? 0x80 : 0);
	} while (v);
}

/*
 * The tree's arrays, in the order html.js reads them:
 *   version, flags (1: differential), nodes (the root included), intervals,
 *   names, then per name its colour 0xRRGGBB, then per node after the root:
 *   up (levels closed before it: previous depth + 1 - its depth), name rank,
 *   self [, the differential count not drawn, self], then when intervals > 1
 *   per interval: its slices, then per slice the node index minus the previous
 *   slice's (the first: minus -1) and the node's self count in that interval.
 */
static void put_payload(struct vbuf *b, const struct html_tree *t, bool diff)
{
	const struct flamegraph *fg = t->fg;
	const struct flamegraph_opts *o = &fg->opts;
	size_t i, n, start;
	uint32_t prev = 0;
	int64_t last;

	vb_put(b, HTML_FORMAT_VERSION);
	vb_put(b, diff ? 1 : 0);
	vb_put(b, t->nr_nodes);
	vb_put(b, fg->nr_intervals > 1 ? fg->nr_intervals : 0);
	vb_put(b, t->nr_ranks);
	for (i = 0; i < t->nr_ranks; i++) {
		const char *s = fg->names[t->by_rank[i]];
		size_t len = fg->name_len[t->by_rank[i]];
		char annot = fg_color__annotation(s, &len);
		struct flamegraph_opts hot = *o;
		struct rgb c;

		/* wall-clock frames: the warm part of the mix (html.js blends the rest) */
		if (o->colors == FG_PAL_WALL)
			hot.colors = FG_PAL_HOT;
		c = fg_color__frame(&hot, s, len, annot);
		vb_put(b, (uint64_t)c.r << 16 | (uint64_t)c.g << 8 | c.b);
	}
	for (i = 1; i < t->nr_nodes; i++) {
		const struct html_node *nd = &t->nodes[i];

		vb_put(b, prev + 1 - nd->depth);
		vb_put(b, nd->name);
		vb_put(b, nd->self);
		if (diff)
			vb_put(b, nd->oself);
		prev = nd->depth;
	}
	if (fg->nr_intervals <= 1)
		return;
	for (i = 0, n = 0; n < fg->nr_intervals; n++) {
		for (start = i; i < t->nr_slices && t->slices[i].interval == n; i++)
			;
		vb_put(b, i - start);
		last = -1;
		for (; start < i; start++) {
			vb_put(b, (uint64_t)((int64_t)t->slices[start].node - last));
			vb_put(b, t->slices[start].count);
			last = t->slices[start].node;
		}
	}
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A base64 stream: bytes that do not fill a group of 3 wait in carry[3 - nc..2]. */
struct b64_out {
	FILE *out;
	unsigned char carry[3];
	size_t nc;
};

/* Writes @in[0..n) in base64 after the carried bytes; with @final, pads the rest. */
static void b64_put(struct b64_out *w, const unsigned char *in, size_t n, bool final)
{
	char buf[4 * 1024];
	size_t o = 0, i = 0;

	for (;;) {
		unsigned char q[3];
		size_t k = 0;

		while (w->nc && k < 3)
			q[k++] = w->carry[3 - w->nc--];
		while (k < 3 && i < n)
			q[k++] = in[i++];
		if (k < 3 && !final) {
			memcpy(w->carry + 3 - k, q, k);
			w->nc = k;
			break;
		}
		if (!k)
			break;
		buf[o++] = b64[q[0] >> 2];
		buf[o++] = b64[((q[0] & 3) << 4) | (k > 1 ? q[1] >> 4 : 0)];
		buf[o++] = k > 1 ? b64[((q[1] & 15) << 2) | (k > 2 ? q[2] >> 6 : 0)] : '=';
		buf[o++] = k > 2 ? b64[q[2] & 63] : '=';
		if (o + 4 > sizeof(buf)) {
			fwrite(buf, 1, o, w->out);
			o = 0;
		}
		if (k < 3)
			break;
	}
	fwrite(buf, 1, o, w->out);
}

/* Gzips @b and writes it in base64. 0 or -ENOMEM. */
static int put_gzip_b64(FILE *out, const struct vbuf *b)
{
	unsigned char chunk[64 * 1024];
	struct b64_out w = {.out = out};
	z_stream zs = {0};
	int ret;

	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = b->p;
	zs.avail_in = (uInt)b->n;
	_Static_assert(sizeof(uInt) >= 4, "uInt holds 32 bits");
	do {
		/* payloads over 4 GiB are fed in steps */
		if (!zs.avail_in && (size_t)(zs.next_in - b->p) < b->n)
			zs.avail_in =
				(uInt)MIN(b->n - (size_t)(zs.next_in - b->p), (size_t)UINT32_MAX);
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = deflate(&zs, (size_t)(zs.next_in - b->p) + zs.avail_in == b->n ? Z_FINISH
										     : Z_NO_FLUSH);
		if (ret == Z_STREAM_ERROR) {
			deflateEnd(&zs);
			return -ENOMEM;
		}
		b64_put(&w, chunk, sizeof(chunk) - zs.avail_out, false);
	} while (ret != Z_STREAM_END);
	b64_put(&w, NULL, 0, true);
	deflateEnd(&zs);
	return 0;
}

/* ---- JSON strings that cannot end a script element or turn text around ---- */

/* The bidirectional formatting characters, as UTF-8 (U+061C, U+200E/F, U+202A-E, U+2066-9). */
static size_t bidi_len(const unsigned char *s, size_t left)
{
	if (left >= 2 && s[0] == 0xd8 && s[1] == 0x9c)
		return 2;
	if (left < 3 || s[0] != 0xe2)
		return 0;
	if (s[1] == 0x80 && (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae)))
		return 3;
	if (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)
		return 3;
	return 0;
}

/*
 * Writes @s[0..len) as a JSON string: UTF-8 repaired (U+FFFD), control bytes '?',
 * '<', '>' and '&' as \u escapes (so "</script" cannot appear), U+2028/9 escaped,
 * bidirectional formatting characters replaced by U+FFFD (shown, not obeyed).
 */
static int put_json_string(FILE *out, const char *s, size_t len, char **scratch, size_t *cap)
{
	const unsigned char *c;
	size_t n, ncp, i, start = 0, bl;

	if (array__grow((void **)scratch, cap, 3 * len + 1, 1))
		return -ENOMEM;
	n = fg__utf8_clean(s, len, *scratch, &ncp);
	c = (const unsigned char *)*scratch;
	fputc('"', out);
	for (i = 0; i < n; i++) {
		const char *rep = NULL;

		switch (c[i]) {
		case '"':
			rep = "\\\"";
			break;
		case '\\':
			rep = "\\\\";
			break;
		case '<':
			rep = "\\u003c";
			break;
		case '>':
			rep = "\\u003e";
			break;
		case '&':
			rep = "\\u0026";
			break;
		case 0xe2:
			if (i + 2 < n && c[i + 1] == 0x80 &&
			    (c[i + 2] == 0xa8 || c[i + 2] == 0xa9)) {
				fwrite(c + start, 1, i - start, out);
				fputs(c[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", out);
				i += 2;
				start = i + 1;
				continue;
			}
			/* fall through */
		case 0xd8:
			bl = bidi_len(c + i, n - i);
			if (bl) {
				fwrite(c + start, 1, i - start, out);
				fputs("\\ufffd", out);
				i += bl - 1;
				start = i + 1;
			}
			continue;
		default:
			continue;
		}
		fwrite(c + start, 1, i - start, out);
		fputs(rep, out);
		start = i + 1;
	}
	fwrite(c + start, 1, n - start, out);
	fputc('"', out);
	return 0;
}

static int put_json_field(FILE *out, const char *key, const char *val, char **scratch, size_t *cap)
{
	fprintf(out, ",\"%s\":", key);
	if (!val) {
		fputs("null", out);
		return 0;
	}
	return put_json_string(out, val, strlen(val), scratch, cap);
}

static const char *palette_name(enum flamegraph_palette p)
{
	return p == FG_PAL_WALL ? "wall" : "names";
}

static const char *default_title(const struct flamegraph_opts *o, bool diff)
{
	if (o->title)
		return o->title;
	if (diff)
		return "Differential Flame Graph";
	return o->inverted ? "Icicle Graph" : "Flame Graph";
}

/* The root's colour ("all"), as the SVG draws it; wall-clock: its warm part. */
static unsigned int root_color(const struct flamegraph_opts *o)
{
	struct flamegraph_opts hot = *o;
	struct rgb c;

	if (o->colors == FG_PAL_WALL)
		hot.colors = FG_PAL_HOT;
	c = fg_color__frame(&hot, "all", 3, 0);
	return (unsigned int)c.r << 16 | (unsigned int)c.g << 8 | c.b;
}

/* The meta data: everything but the tree, as one JSON object. */
static int put_meta(FILE *out, const struct html_tree *t, const struct flamegraph_html_opts *ho,
		    bool diff, char **scratch, size_t *cap)
{
	const struct flamegraph *fg = t->fg;
	const struct flamegraph_opts *o = &fg->opts;
	size_t i;
	int err;

	fprintf(out, "{\"version\":%d", HTML_FORMAT_VERSION);
	err = put_json_field(out, "title", default_title(o, diff), scratch, cap) ?:
	      put_json_field(out, "subtitle", o->subtitle, scratch, cap) ?:
	      put_json_field(out, "countname", o->countname, scratch, cap);
	if (err)
		return err;
	fprintf(out,
		",\"factor\":%.17g,\"diff\":%s,\"negate\":%s,\"self\":%s,\"inverted\":%s,"
		"\"palette\":\"%s\",\"root_color\":%u,\"interval\":%.17g,\"names\":[",
		o->factor, diff ? "true" : "false", o->negate ? "true" : "false",
		o->self ? "true" : "false", o->inverted ? "true" : "false", palette_name(o->colors),
		root_color(o), ho->interval);
	for (i = 0; i < t->nr_ranks && !err; i++) {
		if (i)
			fputc(',', out);
		err = put_json_string(out, fg->names[t->by_rank[i]], fg->name_len[t->by_rank[i]],
				      scratch, cap);
	}
	fputs("]}", out);
	return err;
}

int flamegraph__write_html(struct flamegraph *fg, const struct flamegraph_html_opts *opts,
			   FILE *out)
{
	struct flamegraph_html_opts ho = {.sz = sizeof(ho)};
	struct html_tree t = {.fg = fg};
	struct vbuf b = {0};
	char *scratch = NULL;
	size_t cap = 0;
	bool diff;
	int err;

	if (!fg || !out)
		return -EINVAL;
	if (opts)
		memcpy(&ho, opts, MIN(opts->sz, sizeof(ho)));
	diff = flamegraph__is_diff(fg);
	err = tree_sort(&t);
	if (!err)
		err = tree_build(&t);
	if (!err && fg->opts.minwidth_set)
		err = tree_prune(&t);
	if (!err) {
		put_payload(&b, &t, diff);
		err = b.err;
	}
	if (err)
		goto cleanup;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      /* nothing is fetched, whatever the page does */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"scorch\">\n<title>",
	      out);
	{
		const char *title = default_title(&fg->opts, diff);
		size_t len = strlen(title), ncp;

		if (array__grow((void **)&scratch, &cap, 3 * len + 1, 1)) {
			err = -ENOMEM;
			goto cleanup;
		}
		fg__put_xml_escaped(out, scratch, fg__utf8_clean(title, len, scratch, &ncp));
	}
	fputs("</title>\n<style>\n", out);
	fputs(fg_html_css, out);
	fputs("</style>\n</head>\n<body>\n", out);
	fputs(fg_html_body, out);
	fputs("<script type=\"application/json\" id=\"scorch-meta\">", out);
	err = put_meta(out, &t, &ho, diff, &scratch, &cap);
	if (err)
		goto cleanup;
	fputs("</script>\n<script type=\"application/octet-stream\" id=\"scorch-tree\" "
	      "data-encoding=\"gzip+base64\">",
	      out);
	err = put_gzip_b64(out, &b);
	if (err)
		goto cleanup;
	fputs("</script>\n<script>\n", out);
	fputs(fg_html_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
	pr_debug("flamegraph: HTML: %zu stacks, %zu names, %zu nodes, %u intervals, %zu bytes of "
		 "tree before compression\n",
		 fg->nr_stacks, fg->nr_names, t.nr_nodes, fg->nr_intervals, b.n);
	if (!fg->sum)
		err = -ENODATA;
cleanup:
	if ((!err || err == -ENODATA) && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
	if (err == -ENOMEM)
		pr_err("flamegraph: out of memory writing the HTML page\n");
	free(scratch);
	free(b.p);
	tree_free(&t);
	return err;
}
