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

#define HTML_FORMAT_VERSION 2 /* 2: colours by chain level */

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
	size_t nr_ranks;   /* ... how many (all the graph's, but those tree_build() left out) */
	size_t *order;	/* stack indices, sorted */
	struct html_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct html_slice *slices;
	size_t nr_slices, cap_slices;
	uint32_t *path; /* node index per depth of the open path (path[0]: the root) */
	uint64_t merged_stacks, merged_count; /* stacks cut by frames left out, their count */
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
 * The frames the page holds. html.js draws a frame only when it is at least
 * HTML_MIN_PX wide in the view, and a click zooms into a frame drawn, so a frame is
 * at its widest when its parent is zoomed: parent's width * total / parent's total.
 * A frame narrower than HTML_MIN_PX there, in a window HTML_MAX_PX wide, is drawn
 * at no zoom: by default (no --minwidth) the page leaves it out, with what is above
 * it, and its count is its parent's own. Differential pages take the wider side.
 * HTML_MAX_PX / HTML_MIN_PX: a frame under 1/10240 of its parent is left out.
 */
#define HTML_MIN_PX	  0.4
#define HTML_MAX_PX	  4096
#define HTML_PARENT_RATIO 10240 /* HTML_MAX_PX / HTML_MIN_PX, exactly */

typedef unsigned __int128 u128;

static uint64_t clamp64(u128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* Whether a frame of @w (drawn, other) under a parent of @pw is kept: --minwidth's
 * bound @min when given (the SVG's: on the drawn count), else drawn at some zoom. */
static bool frame_kept(const struct html_tree *t, const u128 w[2], const u128 pw[2], double min)
{
	u128 a = MAX(w[0], w[1]), b = MAX(pw[0], pw[1]);

	if (t->fg->opts.minwidth_set)
		return (double)w[0] >= min;
	return a * HTML_PARENT_RATIO >= b;
}

/*
 * Merges the ordered stacks into the nodes kept, in preorder: a stack shares the nodes
 * of the previous one as far as their frames are equal (a trie walk after the sort). A
 * node's total is known when it is made, from prefix sums over the ordered stacks and
 * the end of its run (the first later stack sharing fewer frames: lcp[] and nxt[], the
 * next stack sharing fewer than a given one); a node left out is not made, nor
 * anything above it: its run is skipped, its count added to its parent's own. Memory
 * and time go with the nodes kept, not with the frames of the input.
 */
static int tree_build(struct html_tree *t)
{
	const struct flamegraph *fg = t->fg;
	const struct flamegraph_opts *o = &fg->opts;
	size_t N = 0, i, j, k, d = 0, shared, m, p, e;
	uint32_t *lcp = NULL, *nxt = NULL, *chain = NULL;
	u128 *sum = NULL, *osum = NULL, (*ptot)[2] = NULL, w[2] = {0, 0};
	bool diff = flamegraph__is_diff(fg);
	double min = 0;
	int err = -ENOMEM;

	/* the stacks drawn or compared, in order; sum[i], osum[i]: the counts of the first i
	 * drawn, and not drawn (differential graphs only) */
	for (i = 0; i < fg->nr_stacks; i++) {
		const struct fg_stack *s = &fg->stacks[t->order[i]];

		if (s->count || s->other)
			t->order[N++] = t->order[i];
	}
	t->path = malloc((fg->max_len + 1) * sizeof(*t->path));
	ptot = malloc((fg->max_len + 1) * sizeof(*ptot));
	chain = malloc((fg->max_len + 2) * sizeof(*chain));
	lcp = malloc(MAX(N, 1) * sizeof(*lcp));
	nxt = malloc(MAX(N, 1) * sizeof(*nxt));
	sum = malloc((N + 1) * sizeof(*sum));
	osum = diff ? malloc((N + 1) * sizeof(*osum)) : NULL;
	if (!t->path || !ptot || !chain || !lcp || !nxt || !sum || (diff && !osum) ||
	    array__grow((void **)&t->nodes, &t->cap_nodes, 1, sizeof(*t->nodes)))
		goto cleanup;
	if (N > UINT32_MAX - 1) {
		err = -EOVERFLOW;
		goto cleanup;
	}
	sum[0] = 0;
	if (osum)
		osum[0] = 0;
	for (i = 0; i < N; i++) {
		const struct fg_stack *s = &fg->stacks[t->order[i]];
		const uint32_t *fr = fg->frames + s->off;

		sum[i + 1] = sum[i] + s->count;
		if (osum)
			osum[i + 1] = osum[i] + s->other;
		lcp[i] = 0;
		if (i) {
			const struct fg_stack *q = &fg->stacks[t->order[i - 1]];
			const uint32_t *fq = fg->frames + q->off;
			size_t n = MIN(s->len, q->len);

			while (lcp[i] < n && fr[lcp[i]] == fq[lcp[i]])
				lcp[i]++;
		}
	}
	/* nxt[i]: the first stack after i sharing fewer frames with its predecessor */
	for (i = N; i-- > 0;) {
		for (j = i + 1; j < N && lcp[j] >= lcp[i]; j = nxt[j])
			;
		nxt[i] = (uint32_t)j;
	}
	if (o->minwidth_set)
		min = o->minwidth_percent
			      ? o->minwidth / 100 * (double)MAX(clamp64(sum[N]), o->total)
			      : o->minwidth * (double)MAX(clamp64(sum[N]), o->total) /
					MAX(o->width - 2.0 * FG_XPAD, 1.0);

	t->nodes[0] = (struct html_node){.name = UINT32_MAX};
	t->nr_nodes = 1;
	t->path[0] = 0;
	ptot[0][0] = sum[N];
	ptot[0][1] = osum ? osum[N] : 0;
	for (i = 0; i < N;) {
		const struct fg_stack *s = &fg->stacks[t->order[i]];
		const uint32_t *fr = fg->frames + s->off;
		struct html_node *leaf;

		shared = MIN(lcp[i], d);
		/* the stacks after i sharing fewer frames, each fewer than the one before:
		 * the run of the node of depth k + 1 ends at the first sharing <= k */
		for (m = 0, j = i + 1; j < N && lcp[j] > shared; j = nxt[j])
			chain[m++] = (uint32_t)j;
		p = m;
		for (k = shared; k < s->len; k++) {
			while (p > 0 && lcp[chain[p - 1]] <= k)
				p--;
			e = p < m ? chain[p] : j;
			w[0] = sum[e] - sum[i];
			w[1] = osum ? osum[e] - osum[i] : 0;
			if (!frame_kept(t, w, ptot[k], min))
				break;
			if (t->nr_nodes >= UINT32_MAX ||
			    array__grow((void **)&t->nodes, &t->cap_nodes, t->nr_nodes + 1,
					sizeof(*t->nodes)))
				goto cleanup;
			t->nodes[t->nr_nodes] = (struct html_node){
				.name = t->rank[fr[k]],
				.depth = (uint32_t)k + 1,
			};
			t->path[k + 1] = (uint32_t)t->nr_nodes++;
			ptot[k + 1][0] = w[0];
			ptot[k + 1][1] = w[1];
		}
		if (k < s->len) {
			/* left out at depth k + 1: the run of stacks [i, e) is its parent's own */
			leaf = &t->nodes[t->path[k]];
			leaf->self = clamp64((u128)leaf->self + w[0]);
			leaf->oself = clamp64((u128)leaf->oself + w[1]);
			t->merged_stacks += e - i;
			t->merged_count = clamp64((u128)t->merged_count + w[0]);
			for (; fg->nr_intervals > 1 && i < e; i++) {
				s = &fg->stacks[t->order[i]];
				if (s->count && add_slice(t, s->interval, t->path[k], s->count))
					goto cleanup;
			}
			i = e;
			d = k;
			continue;
		}
		leaf = &t->nodes[t->path[s->len]];
		leaf->self = sat_add(leaf->self, s->count);
		leaf->oself = sat_add(leaf->oself, s->other);
		if (fg->nr_intervals > 1 && s->count &&
		    add_slice(t, s->interval, t->path[s->len], s->count))
			goto cleanup;
		d = s->len;
		i++;
	}
	slices_merge(t);
	err = 0;
cleanup:
	free(lcp);
	free(nxt);
	free(chain);
	free(sum);
	free(osum);
	free(ptot);
	return err;
}

/* After frames were left out: the names only they had go too, the rest renumbered in
 * the same order. Returns 0 or -ENOMEM. */
static int tree_names(struct html_tree *t)
{
	uint32_t *to = malloc(MAX(t->nr_ranks, 1) * sizeof(*to));
	bool *used = calloc(MAX(t->nr_ranks, 1), sizeof(*used));
	size_t i, k;

	if (!to || !used) {
		free(to);
		free(used);
		return -ENOMEM;
	}
	for (i = 1; i < t->nr_nodes; i++)
		used[t->nodes[i].name] = true;
	for (i = 0, k = 0; i < t->nr_ranks; i++) {
		to[i] = (uint32_t)k;
		if (used[i])
			t->by_rank[k++] = t->by_rank[i];
	}
	t->nr_ranks = k;
	for (i = 1; i < t->nr_nodes; i++)
		t->nodes[i].name = to[t->nodes[i].name];
	free(to);
	free(used);
	return 0;
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

/* The colour of the name of rank @rank at chain level @level, 0xRRGGBB, as the SVG's. */
static uint32_t name_color(const struct html_tree *t, uint32_t rank, unsigned int level)
{
	const struct flamegraph *fg = t->fg;
	const char *s = fg->names[t->by_rank[rank]];
	size_t len = fg->name_len[t->by_rank[rank]];
	char annot = fg_color__annotation(s, &len);
	struct flamegraph_opts hot = fg->opts;
	struct rgb c;

	/* wall-clock frames: the warm part of the mix (html.js blends the rest) */
	if (hot.colors == FG_PAL_WALL)
		hot.colors = FG_PAL_HOT;
	c = fg_color__frame(&hot, s, len, annot, level);
	return (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The names whose colour at a chain level >= 1 (the "--" frames below the node, counted
 * as svg.c's flow() counts them) differs from their level-0 colour: the wakeup and
 * chain palettes' wakers. Puts the number of such (level, rank) pairs of the tree's
 * nodes, then per pair in order: its level minus the previous pair's, its rank (minus
 * the previous pair's when the level is the same) and its colour. Differential pages
 * colour by the change alone: none.
 */
static void put_level_colors(struct vbuf *b, const struct html_tree *t, bool diff)
{
	uint32_t sep = UINT32_MAX, *level = NULL, *rgb = NULL, lv, c, prev_lv = 0, prev_rank = 0;
	uint64_t *keys = NULL;
	size_t i, n = 0, k = 0;

	for (i = 0; i < t->nr_ranks && !diff && sep == UINT32_MAX; i++) {
		if (fg__is_sep(t->fg->names[t->by_rank[i]], t->fg->name_len[t->by_rank[i]]))
			sep = (uint32_t)i;
	}
	if (sep == UINT32_MAX) {
		vb_put(b, 0);
		return;
	}
	/* level[d]: the chain level of the children of the open node of depth d */
	level = malloc((t->fg->max_len + 2) * sizeof(*level));
	keys = malloc(MAX(t->nr_nodes, 1) * sizeof(*keys));
	rgb = malloc(MAX(t->nr_nodes, 1) * sizeof(*rgb));
	if (!level || !keys || !rgb) {
		b->err = -ENOMEM;
		goto cleanup;
	}
	level[0] = 0;
	for (i = 1; i < t->nr_nodes; i++) {
		const struct html_node *nd = &t->nodes[i];

		lv = level[nd->depth - 1];
		level[nd->depth] = lv + (nd->name == sep);
		if (lv)
			keys[n++] = (uint64_t)lv << 32 | nd->name;
	}
	qsort(keys, n, sizeof(*keys), cmp_u64);
	for (i = 0; i < n; i++) {
		if (i && keys[i] == keys[i - 1])
			continue;
		c = name_color(t, (uint32_t)keys[i], (uint32_t)(keys[i] >> 32));
		if (c != name_color(t, (uint32_t)keys[i], 0)) {
			rgb[k] = c;
			keys[k++] = keys[i];
		}
	}
	vb_put(b, k);
	for (i = 0; i < k; i++) {
		uint32_t rank = (uint32_t)keys[i];

		lv = (uint32_t)(keys[i] >> 32);
		vb_put(b, lv - prev_lv);
		vb_put(b, lv == prev_lv ? rank - prev_rank : rank);
		vb_put(b, rgb[i]);
		prev_lv = lv;
		prev_rank = rank;
	}
cleanup:
	free(level);
	free(keys);
	free(rgb);
}

/*
 * The tree's arrays, in the order html.js reads them:
 *   version, flags (1: differential), nodes (the root included), intervals,
 *   names, then per name its colour 0xRRGGBB, then the colours of names at
 *   chain levels (put_level_colors()), then per node after the root:
 *   up (levels closed before it: previous depth + 1 - its depth), name rank,
 *   self [, the differential count not drawn, self], then when intervals > 1
 *   per interval: its slices, then per slice the node index minus the previous
 *   slice's (the first: minus -1) and the node's self count in that interval.
 */
static void put_payload(struct vbuf *b, const struct html_tree *t, bool diff)
{
	const struct flamegraph *fg = t->fg;
	size_t i, n, start;
	uint32_t prev = 0;
	int64_t last;

	vb_put(b, HTML_FORMAT_VERSION);
	vb_put(b, diff ? 1 : 0);
	vb_put(b, t->nr_nodes);
	vb_put(b, fg->nr_intervals > 1 ? fg->nr_intervals : 0);
	vb_put(b, t->nr_ranks);
	for (i = 0; i < t->nr_ranks; i++)
		vb_put(b, name_color(t, (uint32_t)i, 0));
	put_level_colors(b, t, diff);
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
	c = fg_color__frame(&hot, "all", 3, 0, 0);
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
		"\"palette\":\"%s\",\"root_color\":%u,\"interval\":%.17g,\"min_px\":%g,"
		"\"merged\":{\"stacks\":%" PRIu64 ",\"count\":%" PRIu64 ",\"minwidth\":%s},"
		"\"names\":[",
		o->factor, diff ? "true" : "false", o->negate ? "true" : "false",
		o->self ? "true" : "false", o->inverted ? "true" : "false", palette_name(o->colors),
		root_color(o), ho->interval, HTML_MIN_PX, t->merged_stacks, t->merged_count,
		o->minwidth_set ? "true" : "false");
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
	if (!err && (fg->opts.minwidth_set || t.merged_stacks))
		err = tree_names(&t);
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
