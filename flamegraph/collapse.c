// SPDX-License-Identifier: MIT
/* flamegraph: collapsers turn perf script or bpftrace stack text into folded stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "collapse-private.h"

#define DEFAULT_BT_KEYS "kstack,ustack,comm"

#define D (CC_DIGIT | CC_WORD)
#define W CC_WORD
const unsigned char collapse__ctype[256] = {
	[' '] = CC_SPACE,  ['\t'] = CC_SPACE, ['\n'] = CC_SPACE, ['\r'] = CC_SPACE,
	['\f'] = CC_SPACE, ['\v'] = CC_SPACE, ['0'] = D,	 ['1'] = D,
	['2'] = D,	   ['3'] = D,	      ['4'] = D,	 ['5'] = D,
	['6'] = D,	   ['7'] = D,	      ['8'] = D,	 ['9'] = D,
	['_'] = W,	   ['a'] = W,	      ['b'] = W,	 ['c'] = W,
	['d'] = W,	   ['e'] = W,	      ['f'] = W,	 ['g'] = W,
	['h'] = W,	   ['i'] = W,	      ['j'] = W,	 ['k'] = W,
	['l'] = W,	   ['m'] = W,	      ['n'] = W,	 ['o'] = W,
	['p'] = W,	   ['q'] = W,	      ['r'] = W,	 ['s'] = W,
	['t'] = W,	   ['u'] = W,	      ['v'] = W,	 ['w'] = W,
	['x'] = W,	   ['y'] = W,	      ['z'] = W,	 ['A'] = W,
	['B'] = W,	   ['C'] = W,	      ['D'] = W,	 ['E'] = W,
	['F'] = W,	   ['G'] = W,	      ['H'] = W,	 ['I'] = W,
	['J'] = W,	   ['K'] = W,	      ['L'] = W,	 ['M'] = W,
	['N'] = W,	   ['O'] = W,	      ['P'] = W,	 ['Q'] = W,
	['R'] = W,	   ['S'] = W,	      ['T'] = W,	 ['U'] = W,
	['V'] = W,	   ['W'] = W,	      ['X'] = W,	 ['Y'] = W,
	['Z'] = W,
};
#undef D
#undef W

struct collapser *collapser__new(const struct collapse_opts *opts)
{
	struct collapser *c = calloc(1, sizeof(*c));
	int err = -ENOMEM;

	if (!c)
		goto fail;
	if (opts) {
		/* copy what the caller's (possibly older, smaller) struct has */
		memcpy(&c->opts, opts, MIN(opts->sz ? opts->sz : sizeof(*opts), sizeof(c->opts)));
	}
	c->opts.sz = sizeof(c->opts);
	c->folded = folded__new();
	if (!c->folded)
		goto fail;
	if (c->opts.event_filter) {
		c->event = strdup(c->opts.event_filter);
		if (!c->event)
			goto fail;
	}
	err = collapse_bt__parse_keys(c, c->opts.bpftrace_keys ? c->opts.bpftrace_keys
							       : DEFAULT_BT_KEYS);
	if (err)
		goto fail;
	return c;
fail:
	collapser__free(c);
	errno = -err;
	return NULL;
}

void collapser__free(struct collapser *c)
{
	if (!c)
		return;
	folded__free(c->folded);
	free(c->keys_text);
	free(c->arena);
	free(c->frames);
	free(c->event);
	free(c->other_event);
	free(c->map_name);
	for (size_t i = 0; i < ARRAY_SIZE(c->mods); i++)
		free(c->mods[i].name);
	free(c->key);
	free(c->stacks);
	hashmap__free(&c->stack_index);
	free(c->keys_buf);
	free(c->join);
	free(c);
}

const struct folded *collapser__folded(const struct collapser *c)
{
	return c ? c->folded : NULL;
}

void collapser__stats(const struct collapser *c, struct collapse_stats *st)
{
	*st = c->st;
}

size_t collapse__arena_add(struct collapser *c, const char *s, size_t len)
{
	size_t off = c->arena_len;

	if (len >= SIZE_MAX - off ||
	    array__grow((void **)&c->arena, &c->arena_cap, off + len + 1, 1))
		return SIZE_MAX;
	memcpy(c->arena + off, s, len);
	c->arena[off + len] = '\0';
	c->arena_len += len + 1;
	return off;
}

int collapse__arena_append(struct collapser *c, const char *s, size_t len)
{
	/* drop the NUL, append, terminate again */
	c->arena_len--;
	return collapse__arena_add(c, s, len) == SIZE_MAX ? -ENOMEM : 0;
}

int collapse__push_frame(struct collapser *c, size_t off, size_t len, uint32_t group)
{
	if (array__grow((void **)&c->frames, &c->cap_frames, c->nr_frames + 1, sizeof(*c->frames)))
		return -ENOMEM;
	c->frames[c->nr_frames].off = off;
	c->frames[c->nr_frames].len = len;
	c->frames[c->nr_frames].group = group;
	c->nr_frames++;
	return 0;
}

/* 8 bytes at a time: the per-sample hash is the hot loop of a large import */
static uint64_t key_hash(const char *s, size_t n)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

int collapse__emit(struct collapser *c, const size_t *order, size_t nr, uint64_t count)
{
	size_t len = 0, i, flen, probe = 0;
	struct cstack *e;
	uint64_t h, val;

	for (i = 0; i < nr; i++)
		len += c->frames[order[i]].len + 1;
	if (array__grow((void **)&c->join, &c->join_cap, len, 1))
		return -ENOMEM;
	len = 0;
	for (i = 0; i < nr; i++) {
		const char *f = c->arena + c->frames[order[i]].off;

		flen = c->frames[order[i]].len + 1; /* with its NUL: the separator */
		memcpy(c->join + len, f, flen);
		len += flen;
	}
	c->st.samples++;
	h = key_hash(c->join, len);
	while ((val = hashmap__match(&c->stack_index, h, &probe))) {
		e = &c->stacks[val - 1];
		if (e->len == len && !memcmp(c->keys_buf + e->off, c->join, len)) {
			e->count = e->count > UINT64_MAX - count ? UINT64_MAX : e->count + count;
			return 0;
		}
	}
	if (len > SIZE_MAX - c->keys_len ||
	    array__grow((void **)&c->keys_buf, &c->keys_cap, c->keys_len + len, 1) ||
	    array__grow((void **)&c->stacks, &c->cap_stacks, c->nr_distinct + 1,
			sizeof(*c->stacks)))
		return -ENOMEM;
	if (hashmap__insert(&c->stack_index, h, c->nr_distinct + 1))
		return -ENOMEM;
	memcpy(c->keys_buf + c->keys_len, c->join, len);
	c->stacks[c->nr_distinct++] =
		(struct cstack){.off = c->keys_len, .len = len, .count = count};
	c->keys_len += len;
	return 0;
}

int collapse__flush(struct collapser *c)
{
	const char **ptrs = NULL;
	size_t cap = 0, i;
	int err = 0;

	for (i = 0; i < c->nr_distinct; i++) {
		const struct cstack *e = &c->stacks[i];
		const char *p, *end;
		size_t nr = 0;

		for (p = c->keys_buf + e->off, end = p + e->len; p < end; p += strlen(p) + 1) {
			if (array__grow((void **)&ptrs, &cap, nr + 1, sizeof(*ptrs))) {
				err = -ENOMEM;
				goto cleanup;
			}
			ptrs[nr++] = p;
		}
		err = folded__add(c->folded, ptrs, nr, e->count);
		if (err)
			goto cleanup;
	}
	hashmap__clear(&c->stack_index);
	c->nr_distinct = 0;
	c->keys_len = 0;
cleanup:
	free(ptrs);
	return err;
}

void collapse__reset_sample(struct collapser *c)
{
	c->arena_len = 0;
	c->nr_frames = 0;
	c->group = 0;
}

void collapse__bad_line(struct collapser *c, const char *line, size_t len)
{
	size_t i, n = MIN(len, sizeof(c->first_bad) - 1);

	c->st.bad_lines++;
	if (!c->first_bad_lineno) {
		for (i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)line[i];

			c->first_bad[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
		}
		c->first_bad[n] = '\0';
		c->first_bad_lineno = c->lineno;
	}
}

bool collapse__is_perf_map(const char *s, size_t len)
{
	static const char pre[] = "/tmp/perf-";
	const char *p = s, *end = s + len;

	while ((size_t)(end - p) >= sizeof(pre) - 1) {
		const char *q = memmem(p, (size_t)(end - p), pre, sizeof(pre) - 1);
		const char *d;

		if (!q)
			return false;
		d = q + sizeof(pre) - 1;
		while (d < end && collapse__digit((unsigned char)*d))
			d++;
		if (d > q + sizeof(pre) - 1 && end - d >= 4 && !memcmp(d, ".map", 4))
			return true;
		p = q + 1;
	}
	return false;
}

static enum collapse_format detect(const char *line, size_t len)
{
	if (line[0] == '@' || (len >= 10 && !memcmp(line, "Attaching ", 10)))
		return COLLAPSE_BPFTRACE;
	return COLLAPSE_PERF;
}

static void report(struct collapser *c, const struct collapse_stats *before)
{
	uint64_t bad = c->st.bad_lines - before->bad_lines;
	uint64_t filtered = c->st.filtered - before->filtered;
	uint64_t truncated = c->st.truncated - before->truncated;

	if (bad) {
		pr_warn("collapse: %s: %" PRIu64
			" line%s not understood, skipped (first, line %zu: "
			"'%s')\n",
			c->name, bad, bad == 1 ? "" : "s", c->first_bad_lineno, c->first_bad);
		if (c->fmt == COLLAPSE_PERF)
			pr_hint("expected 'perf script' output: a header line per sample, then one "
				"'ADDR SYMBOL (MODULE)' line per frame, then a blank line\n");
	}
	if (filtered) {
		pr_warn("collapse: %s: %" PRIu64 " sample%s of other events (first: %s) skipped; "
			"kept event %s%s\n",
			c->name, filtered, filtered == 1 ? "" : "s",
			c->other_event ? c->other_event : "?", c->event ? c->event : "?",
			c->event_defaulted ? ", the first seen" : "");
		if (c->event_defaulted)
			pr_hint("choose the event with --event-filter=EVENT\n");
	}
	if (truncated)
		pr_warn("collapse: %s: the input ends inside a %s (no blank line or closing line "
			"after it): it may be cut and was dropped\n",
			c->name, c->fmt == COLLAPSE_BPFTRACE ? "map entry" : "sample");
}

static int one_line(struct collapser *c, char *line, size_t len)
{
	c->lineno++;
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (c->fmt == COLLAPSE_AUTO) {
		if (!len || line[0] == '#')
			return 0;
		c->fmt = detect(line, len);
		pr_debug("collapse: %s: reading %s output\n", c->name,
			 c->fmt == COLLAPSE_PERF ? "perf script" : "bpftrace");
	}
	return c->fmt == COLLAPSE_PERF ? collapse_perf__line(c, line, len)
				       : collapse_bt__line(c, line, len);
}

int collapser__read(struct collapser *c, FILE *in, const char *name)
{
	struct collapse_stats before = c->st;
	struct line_reader lr;
	size_t len, nr = 0;
	char *line;
	int err;

	c->name = name;
	c->lineno = 0;
	c->first_bad_lineno = 0;
	c->fmt = c->opts.format;
	c->in_sample = false;
	c->in_record = false;
	collapse__reset_sample(c);

	line_reader__init(&lr, in, LINE_MAX_FOLDED);
	while ((err = line_reader__next(&lr, &line, &len)) > 0) {
		/* a NUL would end a frame early: it becomes '?', as the folded contract escapes it
		 */
		for (char *z = memchr(line, '\0', len); z;
		     z = memchr(z, '\0', len - (size_t)(z - line)))
			*z = '?';
		c->lineno = lr.skipped + nr++; /* one_line() counts this one */
		err = one_line(c, line, len);
		if (err)
			goto cleanup;
	}
	if (err) {
		if (err != -EBADMSG &&
		    err != -ENOMEM) /* a corrupt stream was reported by the reader */
			pr_err("collapse: cannot read %s: %s\n", name, strerror(-err));
		goto cleanup;
	}
	line_reader__report(&lr, "collapse", name);
	if (c->fmt == COLLAPSE_PERF)
		err = collapse_perf__end(c);
	else if (c->fmt == COLLAPSE_BPFTRACE)
		err = collapse_bt__end(c);
	if (!err)
		err = collapse__flush(c);
	if (err)
		goto cleanup;
	c->st.format = c->fmt;
	report(c, &before);
cleanup:
	if (err == -ENOMEM)
		pr_err("collapse: %s: out of memory\n", name);
	line_reader__free(&lr);
	return err;
}
