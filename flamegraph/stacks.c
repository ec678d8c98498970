// SPDX-License-Identifier: MIT
/* flamegraph: folded-text reader and the compact stack store the SVG writer merges. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

struct flamegraph *flamegraph__new(const struct flamegraph_opts *opts)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));

	if (!fg)
		goto nomem;
	flamegraph_opts__init(&fg->opts);
	if (opts)
		memcpy(&fg->opts, opts, MIN(opts->sz ? opts->sz : sizeof(*opts), sizeof(*opts)));
	fg->opts.sz = sizeof(fg->opts);
	fg->strs = strset__new();
	if (!fg->strs || hashmap__reserve(&fg->name_index, 768))
		goto nomem;
	return fg;
nomem:
	flamegraph__free(fg);
	errno = ENOMEM;
	return NULL;
}

void flamegraph__free(struct flamegraph *fg)
{
	if (!fg)
		return;
	strset__free(fg->strs);
	free(fg->names);
	free(fg->name_len);
	hashmap__free(&fg->name_index);
	free(fg->frames);
	free(fg->stacks);
	free(fg->scratch);
	free(fg->ids);
	free(fg);
}

size_t flamegraph__nr_bad_lines(const struct flamegraph *fg)
{
	return fg ? fg->bad_lines : 0;
}

/*
 * Name hash for the lookup table only (never stored or shown): eight bytes a
 * step, which matters at tens of millions of frames. Stable, unseeded.
 */
static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;

	while (len >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
		s += 8;
		len -= 8;
	}
	if (len) {
		w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	}
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* Returns the id of the (already escaped) name @s[0..len), adding it when new; -ENOMEM. */
static int64_t name_id(struct flamegraph *fg, const char *s, size_t len)
{
	uint64_t h = name_hash(s, len), val;
	size_t probe = 0;
	const char *copy;
	uint32_t id;

	while ((val = hashmap__match(&fg->name_index, h, &probe)))
		if (fg->name_len[val - 1] == len && !memcmp(fg->names[val - 1], s, len))
			return (int64_t)val - 1;
	if (fg->nr_names >= UINT32_MAX - 1 || len > UINT32_MAX)
		return -ENOMEM;
	if (array__grow((void **)&fg->names, &fg->cap_names, fg->nr_names + 1,
			sizeof(*fg->names)) ||
	    array__grow((void **)&fg->name_len, &fg->cap_name_len, fg->nr_names + 1,
			sizeof(*fg->name_len)))
		return -ENOMEM;
	copy = strset__intern_len(fg->strs, s, len);
	if (!copy || hashmap__insert(&fg->name_index, h, fg->nr_names + 1))
		return -ENOMEM;
	id = (uint32_t)fg->nr_names++;
	fg->names[id] = copy;
	fg->name_len[id] = (uint32_t)len;
	return id;
}

static bool name_is(const struct flamegraph *fg, uint32_t id, const char *s, size_t len)
{
	return fg->name_len[id] == len && !memcmp(fg->names[id], s, len);
}

static uint8_t stack_kind(const struct flamegraph *fg, uint32_t leaf)
{
	if (name_is(fg, leaf, FG_FRAME_OFFCPU, sizeof(FG_FRAME_OFFCPU) - 1))
		return FG_KIND_OFFCPU;
	if (name_is(fg, leaf, FG_FRAME_RUNQUEUE, sizeof(FG_FRAME_RUNQUEUE) - 1))
		return FG_KIND_RUNQUEUE;
	return FG_KIND_CPU;
}

/*
 * Stores the stack of fg->ids[0..nr). @other is the differential count not
 * drawn; a stack drawn zero wide is kept when it has one (its "before" time
 * counts in its parents' change).
 */
static int push_stack(struct flamegraph *fg, size_t nr, uint64_t count, uint64_t other)
{
	size_t i;

	if (!count && !other)
		return 0;
	if (array__grow((void **)&fg->frames, &fg->cap_frames, fg->nr_frames + nr,
			sizeof(*fg->frames)) ||
	    array__grow((void **)&fg->stacks, &fg->cap_stacks, fg->nr_stacks + 1,
			sizeof(*fg->stacks)))
		return -ENOMEM;
	if (fg->opts.reverse) {
		for (i = 0; i < nr; i++)
			fg->frames[fg->nr_frames + i] = fg->ids[nr - 1 - i];
	} else {
		memcpy(fg->frames + fg->nr_frames, fg->ids, nr * sizeof(*fg->ids));
	}
	fg->stacks[fg->nr_stacks++] = (struct fg_stack){
		.count = count,
		.other = other,
		.off = fg->nr_frames,
		.len = (uint32_t)nr,
		.kind = stack_kind(fg, fg->ids[nr - 1]),
		.interval = (uint16_t)fg->interval,
	};
	fg->nr_frames += nr;
	fg->sum += count;
	if (nr > fg->max_len)
		fg->max_len = nr;
	return 0;
}

/* Splits @s[0..len) on ';', escapes and interns each frame into fg->ids. */
static int split_stack(struct flamegraph *fg, const char *s, size_t len, size_t *nr_out)
{
	size_t nr = 0, flen, i;
	const char *end = s + len, *p, *name;
	unsigned int ctl;
	int64_t id;

	if (array__grow((void **)&fg->scratch, &fg->scratch_cap, len + sizeof(FOLDED_EMPTY_FRAME),
			1))
		return -ENOMEM;
	for (;;) {
		p = memchr(s, ';', (size_t)(end - s));
		if (!p)
			p = end;
		flen = (size_t)(p - s);
		/* branch-free test (it vectorizes): escape only frames that need it */
		ctl = 0;
		for (i = 0; i < flen; i++)
			ctl |= ((unsigned char)s[i] < 0x20) | ((unsigned char)s[i] == 0x7f);
		name = s;
		if (ctl) {
			flen = 0;
			for (i = 0; s + i < p; i++) {
				unsigned char c = (unsigned char)s[i];

				fg->scratch[flen++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
			}
			name = fg->scratch;
		}
		if (!flen) {
			name = FOLDED_EMPTY_FRAME;
			flen = sizeof(FOLDED_EMPTY_FRAME) - 1;
		}
		id = name_id(fg, name, flen);
		if (id < 0)
			return -ENOMEM;
		if (nr == fg->cap_ids &&
		    array__grow((void **)&fg->ids, &fg->cap_ids, nr + 1, sizeof(*fg->ids)))
			return -ENOMEM;
		fg->ids[nr++] = (uint32_t)id;
		if (p == end)
			break;
		s = p + 1;
	}
	*nr_out = nr;
	return 0;
}

int flamegraph__add_stack(struct flamegraph *fg, const char *const *frames, size_t nr,
			  uint64_t count)
{
	size_t i, n;
	int64_t id;

	if (!fg || !frames || !nr)
		return -EINVAL;
	if (array__grow((void **)&fg->ids, &fg->cap_ids, nr, sizeof(*fg->ids)))
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (!frames[i])
			return -EINVAL;
		n = strlen(frames[i]);
		if (array__grow((void **)&fg->scratch, &fg->scratch_cap,
				n + sizeof(FOLDED_EMPTY_FRAME), 1))
			return -ENOMEM;
		n = folded__escape_frame(fg->scratch, frames[i]);
		id = name_id(fg, fg->scratch, n);
		if (id < 0)
			return -ENOMEM;
		fg->ids[i] = (uint32_t)id;
	}
	fg->single_lines++;
	return push_stack(fg, nr, count, 0);
}

static int add_line_cb(const char *line, size_t len, uint64_t count, void *ctx)
{
	struct flamegraph *fg = ctx;
	size_t nr;
	int err = split_stack(fg, line, len, &nr);

	fg->single_lines++;
	return err ? err : push_stack(fg, nr, count, 0);
}

int flamegraph__add_folded(struct flamegraph *fg, const struct folded *f)
{
	if (!fg || !f)
		return -EINVAL;
	return folded__for_each(f, add_line_cb, fg);
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Parses the count token @s[0..len): digits, optionally "." and digits (rounded
 * half up). Returns 0, 1 when a fraction was rounded, or -EINVAL / -ERANGE.
 */
static int parse_count(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	int frac = 0;

	if (!len || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (i < len && s[i] == '.') {
		size_t j = ++i;

		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (j < i && s[j] >= '5') {
			if (v == UINT64_MAX)
				return -ERANGE;
			v++;
		}
		frac = j < i;
	}
	if (i != len)
		return -EINVAL;
	*out = v;
	return frac;
}

/*
 * Finds a trailing count token (digits and dots after whitespace) of
 * @s[0..*len) and shrinks *len to the text before it and its whitespace.
 * Looks no further back than the token, so a long stack costs nothing here.
 */
static bool last_token(const char *s, size_t *len, const char **tok, size_t *tok_len)
{
	size_t end = *len, start;

	while (end && is_ws(s[end - 1]))
		end--;
	start = end;
	while (start && ((s[start - 1] >= '0' && s[start - 1] <= '9') || s[start - 1] == '.'))
		start--;
	if (!start || start == end || !is_ws(s[start - 1]))
		return false;
	*tok = s + start;
	*tok_len = end - start;
	while (start && is_ws(s[start - 1]))
		start--;
	*len = start;
	return true;
}

int folded__parse_line(const char *line, size_t len, size_t *stack_len, uint64_t *before,
		       uint64_t *after, bool *frac)
{
	const char *tok, *tok2;
	size_t tok_len, tok2_len, l2, i;
	int r, r1;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	for (i = 0; i < len && is_ws(line[i]); i++)
		;
	if (i == len)
		return 0; /* blank */
	*stack_len = len;
	*before = 0;
	if (!last_token(line, stack_len, &tok, &tok_len))
		return -EINVAL;
	r = parse_count(tok, tok_len, after);
	if (r < 0)
		return -EINVAL;
	*frac = r > 0;
	/* "stack before after": differential input */
	l2 = *stack_len;
	if (last_token(line, &l2, &tok2, &tok2_len) &&
	    (r1 = parse_count(tok2, tok2_len, before)) >= 0) {
		if (!l2)
			return -EINVAL;
		*stack_len = l2;
		*frac |= r1 > 0;
		return *stack_len ? 2 : -EINVAL;
	}
	return *stack_len ? 1 : -EINVAL;
}

bool flamegraph__is_diff(const struct flamegraph *fg)
{
	return fg->diff_lines && !fg->single_lines;
}

int flamegraph__add_diff_text(struct flamegraph *fg, const char *stack, size_t len, uint64_t before,
			      uint64_t after)
{
	size_t nr;
	int err = split_stack(fg, stack, len, &nr);

	if (err)
		return err;
	fg->diff_lines++;
	if (fg->opts.negate)
		return push_stack(fg, nr, before, after);
	return push_stack(fg, nr, after, before);
}

int flamegraph__add_line(struct flamegraph *fg, const char *line, size_t len)
{
	size_t stack_len;
	uint64_t before, after;
	bool frac;
	int n = folded__parse_line(line, len, &stack_len, &before, &after, &frac);

	if (!n)
		return 0;
	if (n < 0) {
		fg->bad_lines++;
		return 0;
	}
	if (frac)
		fg->frac_lines++;
	if (n == 2)
		return flamegraph__add_diff_text(fg, line, stack_len, before, after);
	fg->single_lines++;
	n = split_stack(fg, line, stack_len, &stack_len);
	return n ? n : push_stack(fg, stack_len, after, 0);
}

int flamegraph__read(struct flamegraph *fg, FILE *in, const char *name)
{
	size_t bad = fg->bad_lines, frac = fg->frac_lines, n;
	struct line_reader lr;
	char *line;
	int err;

	line_reader__init(&lr, in, LINE_MAX_FOLDED);
	while ((err = line_reader__next(&lr, &line, &n)) > 0) {
		err = flamegraph__add_line(fg, line, n);
		if (err)
			goto cleanup;
	}
	if (err) {
		if (err != -ENOMEM)
			pr_err("flamegraph: cannot read %s: %s\n", name, strerror(-err));
		goto cleanup;
	}
	line_reader__report(&lr, "flamegraph", name);
	if (fg->bad_lines > bad)
		pr_warn("flamegraph: %s: ignored %zu lines with invalid format\n", name,
			fg->bad_lines - bad);
	if (fg->frac_lines > frac)
		pr_warn("flamegraph: %s: %zu lines have fractional counts, rounded to integers\n",
			name, fg->frac_lines - frac);

cleanup:
	if (err == -ENOMEM)
		pr_err("flamegraph: out of memory reading %s\n", name);
	line_reader__free(&lr);
	return err;
}
