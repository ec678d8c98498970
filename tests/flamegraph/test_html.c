// SPDX-License-Identifier: MIT
/* tests/flamegraph: the HTML page's writer: hostile names inert, the embedded tree decoded back. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>
#include <zlib.h>

#include "common.h"
#include "flamegraph.h"
#include "test.h"

/* Renders @fg to a string (NUL-terminated; *len without it); *err gets the return. */
static char *render(struct flamegraph *fg, const struct flamegraph_html_opts *ho, size_t *len,
		    int *err)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	if (!m)
		return NULL;
	*err = flamegraph__write_html(fg, ho, m);
	fclose(m);
	return buf;
}

static size_t count_ci(const char *s, const char *needle)
{
	size_t n = 0, k = strlen(needle);

	for (; *s; s++)
		n += !strncasecmp(s, needle, k);
	return n;
}

/* True when @s[0..len) is valid UTF-8 with no control byte but '\n' and '\t'. */
static bool clean_utf8(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i], need = c < 0x80		   ? 0
					  : c >= 0xc2 && c <= 0xdf ? 1
					  : c >= 0xe0 && c <= 0xef ? 2
					  : c >= 0xf0 && c <= 0xf4 ? 3
								   : 9;

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || need == 9 ||
		    i + need >= len + !need)
			return false;
		for (unsigned k = 1; k <= need; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		i += need + 1;
	}
	return true;
}

/* The text between @open (its end) and the next "</script>". Borrowed into @page. */
static const char *element(const char *page, const char *open, size_t *len)
{
	const char *p = strstr(page, open), *e;

	if (!p)
		return NULL;
	p += strlen(open);
	e = strstr(p, "</script>");
	if (!e)
		return NULL;
	*len = (size_t)(e - p);
	return p;
}

/* The decoded tree: base64, then gunzip. Returns a malloc'ed buffer or NULL. */
static unsigned char *payload(const char *page, size_t *out_len)
{
	static const char tag[] = "data-encoding=\"gzip+base64\">";
	size_t len = 0, i, n = 0, cap;
	const char *b = element(page, tag, &len);
	unsigned char *bin, *out;
	uint32_t acc = 0;
	int bits = 0;
	z_stream zs = {0};

	if (!b)
		return NULL;
	bin = malloc(len);
	for (i = 0; i < len && b[i] != '='; i++) {
		const char *p = strchr(
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", b[i]);

		if (!p || !b[i]) {
			free(bin);
			return NULL;
		}
		acc = acc << 6 |
		      (uint32_t)(p - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				     "0123456789+/");
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			bin[n++] = (unsigned char)(acc >> bits);
		}
	}
	cap = 1 << 20;
	out = malloc(cap);
	inflateInit2(&zs, 15 + 16);
	zs.next_in = bin;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (inflate(&zs, Z_FINISH) != Z_STREAM_END) {
		free(out);
		out = NULL;
	}
	*out_len = cap - zs.avail_out;
	inflateEnd(&zs);
	free(bin);
	return out;
}

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t next(struct rd *r)
{
	uint64_t v = 0;
	int shift = 0;

	for (;;) {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		v |= (uint64_t)(*r->p & 0x7f) << shift;
		shift += 7;
		if (!(*r->p++ & 0x80))
			return v;
	}
}

/* Hostile names: the page has exactly its three scripts, and the names come out as text. */
static void test_hostile(void)
{
	static const char input[] = "main;<img src=x onerror=alert(1)> 1\n"
				    "main;</script><script>alert(2)</script> 2\n"
				    "main;</SCRIPT  3\n"
				    "main;<!--<script> 4\n"
				    "main;n\0ul 5\n"
				    "main;bad\xff\xfe 6\n"
				    "main;evil\xe2\x80\xaetxt.exe 7\n"
				    "main;iso\xe2\x81\xa6x\xe2\x80\x8f 8\n"
				    "main;ls\xe2\x80\xa8x 9\n"
				    "main;q\"\\&amp 10\n";
	static const char want_names[] =
		"\"names\":[\"\\u003c!--\\u003cscript\\u003e\","
		"\"\\u003c/SCRIPT\","
		"\"\\u003c/script\\u003e\\u003cscript\\u003ealert(2)\\u003c/script\\u003e\","
		"\"\\u003cimg src=x onerror=alert(1)\\u003e\","
		"\"bad\xef\xbf\xbd\xef\xbf\xbd\","
		"\"evil\\ufffdtxt.exe\","
		"\"iso\\ufffdx\\ufffd\","
		"\"ls\\u2028x\","
		"\"main\","
		"\"n?ul\","
		"\"q\\\"\\\\\\u0026amp\"]";
	struct flamegraph_opts o;
	struct flamegraph *fg;
	FILE *in = fmemopen((void *)input, sizeof(input) - 1, "r");
	size_t len = 0, mlen = 0, plen = 0, i;
	const char *meta;
	unsigned char *pl;
	char *page;
	int err = -1;

	flamegraph_opts__init(&o);
	o.title = "</title><script>alert(3)</script>";
	fg = flamegraph__new(&o);
	CHECK(fg && in && flamegraph__read(fg, in, "hostile") == 0);
	fclose(in);
	page = render(fg, NULL, &len, &err);
	CHECK(err == 0 && page);
	if (!page)
		return;
	CHECK(count_ci(page, "<script") == 3);
	CHECK(count_ci(page, "</script") == 3);
	CHECK(count_ci(page, "<title") == 1 && count_ci(page, "</title") == 1);
	CHECK(count_ci(page, "<img") == 0 && count_ci(page, "<!--") == 0);
	CHECK(strstr(page, "<title>&lt;/title&gt;&lt;script&gt;alert(3)&lt;/script&gt;</title>"));
	CHECK(clean_utf8((const unsigned char *)page, len));
	/* no bidirectional override, isolate or mark, no raw line separator */
	CHECK(!memmem(page, len, "\xe2\x80\xae", 3) && !memmem(page, len, "\xe2\x81\xa6", 3) &&
	      !memmem(page, len, "\xe2\x80\x8f", 3) && !memmem(page, len, "\xe2\x80\xa8", 3));
	/* the page's own script never parses markup */
	CHECK(!strstr(page, "innerHTML") && !strstr(page, "outerHTML") &&
	      !strstr(page, "insertAdjacentHTML") && !strstr(page, "document.write") &&
	      !strstr(page, "eval("));
	/* the Content-Security-Policy forbids every load */
	CHECK(strstr(page, "content=\"default-src 'none'; script-src 'unsafe-inline'"));
	meta = element(page, "id=\"scorch-meta\">", &mlen);
	CHECK(meta && memmem(meta, mlen, want_names, sizeof(want_names) - 1));
	if (meta && !memmem(meta, mlen, want_names, sizeof(want_names) - 1))
		fprintf(stderr, "meta: %.*s\n", (int)mlen, meta);

	/* the tree, decoded: the root, main and its 10 children (in name order) */
	pl = payload(page, &plen);
	CHECK(pl != NULL);
	if (pl) {
		struct rd r = {pl, pl + plen, false};
		uint64_t total = 0;

		CHECK(next(&r) == 2 && next(&r) == 0 && next(&r) == 12 && next(&r) == 0);
		CHECK(next(&r) == 11);
		for (i = 0; i < 11; i++)
			next(&r); /* colours */
		CHECK(next(&r) == 0); /* none by chain level */
		/* main: depth 1, name rank 8, self 0 */
		CHECK(next(&r) == 0 && next(&r) == 8 && next(&r) == 0);
		for (i = 0; i < 10; i++) {
			uint64_t up = next(&r), name = next(&r), self = next(&r);

			CHECK(up == (i ? 1 : 0));
			CHECK(name == (i < 8 ? i : i + 1)); /* ranks skip main's (8) */
			total += self;
		}
		CHECK(total == 55 && !r.bad && r.p == r.end);
	}
	free(pl);
	free(page);
	flamegraph__free(fg);
}

/* Intervals: each stack's count lands in its interval's slice; writing twice is the same. */
static void test_intervals(void)
{
	const char *a[] = {"main", "a"}, *b[] = {"main", "b"};
	struct flamegraph_html_opts ho = {.sz = sizeof(ho), .interval = 2.5};
	struct flamegraph *fg = flamegraph__new(NULL);
	size_t len = 0, len2 = 0, plen = 0;
	unsigned char *pl;
	char *page, *page2;
	int err = -1, err2 = -1;

	CHECK(fg);
	CHECK(flamegraph__add_stack(fg, a, 2, 5) == 0);
	CHECK(flamegraph__set_interval(fg, 2) == 0);
	CHECK(flamegraph__add_stack(fg, b, 2, 7) == 0);
	CHECK(flamegraph__add_stack(fg, a, 2, 1) == 0);
	CHECK(flamegraph__set_interval(fg, FG_HTML_MAX_INTERVALS) == -ERANGE);
	page = render(fg, &ho, &len, &err);
	page2 = render(fg, &ho, &len2, &err2);
	CHECK(err == 0 && err2 == 0 && page && page2 && len == len2 && !memcmp(page, page2, len));
	/* a page names no file: not where it was written, which it cannot know */
	CHECK(page && strstr(page, "\"interval\":2.5,") && !strstr(page, "\"file\":\""));
	pl = page ? payload(page, &plen) : NULL;
	CHECK(pl != NULL);
	if (pl) {
		struct rd r = {pl, pl + plen, false};

		/* version, flags, nodes (root, main, a, b), intervals, names (a, b, main) */
		CHECK(next(&r) == 2 && next(&r) == 0 && next(&r) == 4 && next(&r) == 3 &&
		      next(&r) == 3);
		next(&r), next(&r), next(&r);
		CHECK(next(&r) == 0);
		CHECK(next(&r) == 0 && next(&r) == 2 && next(&r) == 0); /* main */
		CHECK(next(&r) == 0 && next(&r) == 0 && next(&r) == 6); /* a: 5 + 1 */
		CHECK(next(&r) == 1 && next(&r) == 1 && next(&r) == 7); /* b */
		/* interval 0: a (node 2) 5; interval 1: empty; interval 2: a 1, b (node 3) 7 */
		CHECK(next(&r) == 1 && next(&r) == 3 && next(&r) == 5);
		CHECK(next(&r) == 0);
		CHECK(next(&r) == 2 && next(&r) == 3 && next(&r) == 1 && next(&r) == 1 &&
		      next(&r) == 7);
		CHECK(!r.bad && r.p == r.end);
	}
	free(pl);
	/* the graph is left usable: more stacks, another page */
	CHECK(flamegraph__add_stack(fg, b, 2, 1) == 0);
	free(page2);
	page2 = render(fg, &ho, &len2, &err2);
	CHECK(err2 == 0 && page2 && (len2 != len || memcmp(page, page2, len)));
	free(page);
	free(page2);
	flamegraph__free(fg);
}

/* Differential input: flag 1 and the count not drawn (before) beside each self. */
static void test_diff_and_empty(void)
{
	static const char input[] = "main;a 3 5\nmain;b 4 0\n";
	FILE *in = fmemopen((void *)input, sizeof(input) - 1, "r");
	struct flamegraph *fg = flamegraph__new(NULL);
	size_t len = 0, plen = 0;
	unsigned char *pl;
	char *page;
	int err = -1;

	CHECK(fg && in && flamegraph__read(fg, in, "diff") == 0);
	fclose(in);
	page = render(fg, NULL, &len, &err);
	CHECK(err == 0 && page && strstr(page, "\"diff\":true"));
	pl = page ? payload(page, &plen) : NULL;
	if (pl) {
		struct rd r = {pl, pl + plen, false};

		CHECK(next(&r) == 2 && next(&r) == 1 && next(&r) == 4 && next(&r) == 0 &&
		      next(&r) == 3);
		next(&r), next(&r), next(&r);
		CHECK(next(&r) == 0);
		CHECK(next(&r) == 0 && next(&r) == 2 && next(&r) == 0 && next(&r) == 0);
		CHECK(next(&r) == 0 && next(&r) == 0 && next(&r) == 5 && next(&r) == 3);
		CHECK(next(&r) == 1 && next(&r) == 1 && next(&r) == 0 && next(&r) == 4);
		CHECK(!r.bad && r.p == r.end);
	}
	CHECK(pl != NULL);
	free(pl);
	free(page);
	flamegraph__free(fg);

	fg = flamegraph__new(NULL);
	page = render(fg, NULL, &len, &err);
	CHECK(err == -ENODATA && page && strstr(page, "id=\"scorch-tree\""));
	free(page);
	flamegraph__free(fg);
}

/*
 * --minwidth given: the frames under it leave the page as they leave the SVG, their
 * counts kept as their parent's own (in the timeline too), their names gone. 100
 * samples: main;a 90 in interval 0, main;b;c 9 and main;b;z 1 in interval 1; at 5 %
 * z goes, b keeps its 1.
 */
static void test_minwidth(void)
{
	const char *a[] = {"main", "a"}, *c[] = {"main", "b", "c"}, *z[] = {"main", "b", "z"};
	struct flamegraph_opts o;
	struct flamegraph *fg;
	size_t len = 0, plen = 0;
	unsigned char *pl;
	char *page;
	int err = -1;

	flamegraph_opts__init(&o);
	CHECK(flamegraph_opts__set(&o, "minwidth", "5%") == 0 && o.minwidth_set);
	fg = flamegraph__new(&o);
	CHECK(fg);
	CHECK(flamegraph__add_stack(fg, a, 2, 90) == 0);
	CHECK(flamegraph__set_interval(fg, 1) == 0);
	CHECK(flamegraph__add_stack(fg, c, 3, 9) == 0);
	CHECK(flamegraph__add_stack(fg, z, 3, 1) == 0);
	page = render(fg, NULL, &len, &err);
	CHECK(err == 0 && page && strstr(page, "\"names\":[\"a\",\"b\",\"c\",\"main\"]}"));
	pl = page ? payload(page, &plen) : NULL;
	CHECK(pl != NULL);
	if (pl) {
		struct rd r = {pl, pl + plen, false};

		/* version, flags, nodes (root, main, a, b, c), intervals, names */
		CHECK(next(&r) == 2 && next(&r) == 0 && next(&r) == 5 && next(&r) == 2 &&
		      next(&r) == 4);
		next(&r), next(&r), next(&r), next(&r);
		CHECK(next(&r) == 0);
		CHECK(next(&r) == 0 && next(&r) == 3 && next(&r) == 0); /* main */
		CHECK(next(&r) == 0 && next(&r) == 0 && next(&r) == 90); /* a */
		CHECK(next(&r) == 1 && next(&r) == 1 && next(&r) == 1); /* b: z's 1 */
		CHECK(next(&r) == 0 && next(&r) == 2 && next(&r) == 9); /* c */
		/* interval 0: a (node 2) 90; interval 1: b (node 3) 1, c (node 4) 9 */
		CHECK(next(&r) == 1 && next(&r) == 3 && next(&r) == 90);
		CHECK(next(&r) == 2 && next(&r) == 4 && next(&r) == 1 && next(&r) == 1 &&
		      next(&r) == 9);
		CHECK(!r.bad && r.p == r.end);
	}
	free(pl);
	free(page);
	flamegraph__free(fg);
}

/*
 * No --minwidth: a frame under 0.4/4096 (1/10240) of its parent is drawn at no zoom and
 * left out, with what is above it, its count its parent's own; one at the bound stays.
 * main: 1,024,000 = hot 1,023,880 + edge 100 (100 * 10240 = main's: kept) + 20 tiny
 * frames of 1 with a leaf above each (left out, in main's own). With intervals, the
 * merged counts keep theirs, as main's.
 */
static void test_default_bound(void)
{
	const char *hot[] = {"main", "hot"}, *edge[] = {"main", "edge"};
	char names[20][16];
	const char *tiny[3] = {"main", NULL, "leaf"};
	struct flamegraph *fg = flamegraph__new(NULL);
	size_t len = 0, plen = 0, i;
	unsigned char *pl;
	char *page;
	int err = -1;

	CHECK(fg);
	CHECK(flamegraph__add_stack(fg, hot, 2, 1023880) == 0);
	CHECK(flamegraph__add_stack(fg, edge, 2, 100) == 0);
	CHECK(flamegraph__set_interval(fg, 1) == 0);
	for (i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "tiny_%02zu", i);
		tiny[1] = names[i];
		CHECK(flamegraph__add_stack(fg, tiny, 3, 1) == 0);
	}
	page = render(fg, NULL, &len, &err);
	CHECK(err == 0 && page && strstr(page, "\"names\":[\"edge\",\"hot\",\"main\"]}"));
	CHECK(page && strstr(page, "\"merged\":{\"stacks\":20,\"count\":20,\"minwidth\":false}"));
	CHECK(page && strstr(page, "\"min_px\":0.4,"));
	pl = page ? payload(page, &plen) : NULL;
	CHECK(pl != NULL);
	if (pl) {
		struct rd r = {pl, pl + plen, false};

		/* version, flags, nodes (root, main, edge, hot), intervals, names */
		CHECK(next(&r) == 2 && next(&r) == 0 && next(&r) == 4 && next(&r) == 2 &&
		      next(&r) == 3);
		next(&r), next(&r), next(&r);
		CHECK(next(&r) == 0);
		CHECK(next(&r) == 0 && next(&r) == 2 && next(&r) == 20);      /* main: the tiny */
		CHECK(next(&r) == 0 && next(&r) == 0 && next(&r) == 100);     /* edge */
		CHECK(next(&r) == 1 && next(&r) == 1 && next(&r) == 1023880); /* hot */
		/* interval 0: edge (node 2) 100, hot (3); interval 1: main (node 1) 20 */
		CHECK(next(&r) == 2 && next(&r) == 3 && next(&r) == 100 && next(&r) == 1 &&
		      next(&r) == 1023880);
		CHECK(next(&r) == 1 && next(&r) == 2 && next(&r) == 20);
		CHECK(!r.bad && r.p == r.end);
	}
	free(pl);
	free(page);
	flamegraph__free(fg);
}

/* 0xRRGGBB in the basic palettes' families (colors.c) */
static bool blue(uint64_t c)
{
	return (c >> 16 & 255) == (c >> 8 & 255) && (c & 255) >= 205;
}

static bool aqua(uint64_t c)
{
	return (c >> 8 & 255) == (c & 255) && (c >> 16 & 255) <= 110 && (c & 255) >= 165;
}

static bool purple(uint64_t c)
{
	return (c >> 16 & 255) == (c & 255) && (c & 255) >= 190 && (c >> 8 & 255) <= 140;
}

/*
 * Chain levels: a name above "--" has its level's colour where it differs from its
 * own, once per (level, name) after the names' colours: wakeup paints the waker blue
 * (the blocked aqua), chain the levels blue, aqua, purple; "--" stays grey at every
 * level, so it has no entry.
 */
static void test_level_colors(void)
{
	static const char input[] = "a;--;w;--;w 1\n";
	static const char *const pals[] = {"wakeup", "chain"};
	size_t p, i, len = 0, plen = 0;
	unsigned char *pl;
	char *page;
	int err = -1;

	for (p = 0; p < ARRAY_SIZE(pals); p++) {
		FILE *in = fmemopen((void *)input, sizeof(input) - 1, "r");
		struct flamegraph_opts o;
		struct flamegraph *fg;

		flamegraph_opts__init(&o);
		CHECK(flamegraph_opts__set(&o, "colors", pals[p]) == 0);
		fg = flamegraph__new(&o);
		CHECK(fg && in && flamegraph__read(fg, in, "chain") == 0);
		fclose(in);
		page = render(fg, NULL, &len, &err);
		CHECK(err == 0 && page && strstr(page, "\"names\":[\"--\",\"a\",\"w\"]}"));
		pl = page ? payload(page, &plen) : NULL;
		CHECK(pl != NULL);
		if (pl) {
			struct rd r = {pl, pl + plen, false};
			uint64_t w0, w1, w2;

			/* version, flags, nodes (root, a, --, w, --, w), intervals, names */
			CHECK(next(&r) == 2 && next(&r) == 0 && next(&r) == 6 && next(&r) == 0 &&
			      next(&r) == 3);
			CHECK(next(&r) == 0xa0a0a0);
			next(&r);
			w0 = next(&r);
			/* w (rank 2) at level 1, then at level 2 */
			CHECK(next(&r) == 2);
			CHECK(next(&r) == 1 && next(&r) == 2);
			w1 = next(&r);
			CHECK(next(&r) == 1 && next(&r) == 2);
			w2 = next(&r);
			if (!strcmp(pals[p], "wakeup"))
				CHECK(aqua(w0) && blue(w1) && w2 == w1);
			else
				CHECK(blue(w0) && aqua(w1) && purple(w2));
			for (i = 0; i < 5 * 3; i++)
				next(&r);
			CHECK(!r.bad && r.p == r.end);
		}
		free(pl);
		free(page);
		flamegraph__free(fg);
	}
}

int main(void)
{
	test_level_colors();
	test_hostile();
	test_default_bound();
	test_intervals();
	test_diff_and_empty();
	test_minwidth();
	return TEST_DONE();
}
