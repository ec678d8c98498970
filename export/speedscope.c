// SPDX-License-Identifier: MIT
/* export: the speedscope writer (its file-format-schema.json, "sampled" profiles). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export-private.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* Length of the valid UTF-8 sequence at @s (RFC 3629: no overlongs, no surrogates,
 * at most U+10FFFF), or 0 when the bytes there are not one. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return left >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (left < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (left < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* @s as a JSON string: escaped, invalid UTF-8 bytes replaced by U+FFFD. */
static void json_string(FILE *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t left = strlen(s), n;

	fputc('"', out);
	while (left) {
		unsigned char c = *u;

		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
			n = 1;
		} else if (c == '\n') {
			fputs("\\n", out);
			n = 1;
		} else if (c == '\t') {
			fputs("\\t", out);
			n = 1;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			n = 1;
		} else if ((n = utf8_len(u, left))) {
			fwrite(u, 1, n, out);
		} else {
			fputs("\\ufffd", out);
			n = 1;
		}
		u += n;
		left -= n;
	}
	fputc('"', out);
}

static const char *speedscope_unit(const char *unit)
{
	static const char *const units[] = {"nanoseconds", "microseconds", "milliseconds",
					    "seconds", "bytes"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(unit, units[i]))
			return units[i];
	}
	return "none"; /* counts */
}

struct group_sort {
	const struct profile *p;
	uint32_t idx;
	const uint32_t *fns; /* the stack's functions (index into funcs[]), root first */
	size_t nr_fns;
};

/* Samples by process (pid, comm), then by their frames' names root first, as a folded
 * file and flamegraph.pl order them: speedscope's Time Order view then draws the stacks
 * as a flame graph, each frame merged with its equal neighbours. */
static int cmp_sample(const void *a, const void *b)
{
	const struct group_sort *x = a, *y = b;
	const struct profile *p = x->p;
	const struct psample *s = &p->samples[x->idx], *t = &p->samples[y->idx];
	size_t i;
	int c;

	if (s->pid != t->pid)
		return s->pid < t->pid ? -1 : 1;
	c = strcmp(p->strs[s->comm], p->strs[t->comm]);
	if (c)
		return c;
	for (i = 0; i < x->nr_fns && i < y->nr_fns; i++) {
		c = strcmp(p->strs[p->funcs[x->fns[i]].name], p->strs[p->funcs[y->fns[i]].name]);
		if (c)
			return c;
	}
	if (x->nr_fns != y->nr_fns)
		return x->nr_fns < y->nr_fns ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static bool same_group(const struct profile *p, uint32_t a, uint32_t b)
{
	return p->samples[a].pid == p->samples[b].pid && p->samples[a].comm == p->samples[b].comm;
}

/* The functions of sample @s root first (locations root to leaf, each outermost line
 * first) into @fns; returns how many. */
static size_t stack_functions(const struct profile *p, const struct psample *s, uint32_t *fns)
{
	size_t i, j, n = 0;

	for (i = s->nr_locs; i-- > 0;) {
		const struct plocation *l = &p->locs[p->stacks[s->first_loc + i] - 1];

		for (j = 0; j < l->nr_lines; j++)
			fns[n++] = p->lines[l->first_line + j].function - 1;
	}
	return n;
}

static void write_stack(FILE *out, const struct group_sort *g)
{
	size_t i;

	fputc('[', out);
	for (i = 0; i < g->nr_fns; i++)
		fprintf(out, i ? ",%u" : "%u", g->fns[i]);
	fputc(']', out);
}

/* Sum of the weights of samples @g[0..n) (saturating). */
static int64_t group_total(const struct profile *p, const struct group_sort *g, size_t n)
{
	size_t w = p->opts.weight_value, i;
	int64_t total = 0;

	for (i = 0; i < n; i++) {
		int64_t v = p->samples[g[i].idx].values[w];

		total = v > 0 && total > INT64_MAX - v ? INT64_MAX : total + v;
	}
	return total;
}

static int write_profile(FILE *out, const struct profile *p, const struct group_sort *g, size_t n,
			 const char *unit)
{
	const struct psample *s0 = &p->samples[g[0].idx];
	const char *comm = s0->comm ? p->strs[s0->comm] : "[unknown]";
	char *name = NULL;
	size_t i;
	int r;

	if (s0->pid)
		r = asprintf(&name, "%s (pid %" PRIu32 ")", comm, s0->pid);
	else
		r = asprintf(&name, "%s", s0->comm ? comm : "all");
	if (r < 0)
		return -ENOMEM;
	fputs("{\"type\":\"sampled\",\"name\":", out);
	json_string(out, name);
	free(name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRId64 ",\"samples\":[",
		unit, group_total(p, g, n));
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		write_stack(out, &g[i]);
	}
	fputs("],\"weights\":[", out);
	for (i = 0; i < n; i++)
		fprintf(out, i ? ",%" PRId64 : "%" PRId64,
			p->samples[g[i].idx].values[p->opts.weight_value]);
	fputs("]}", out);
	return 0;
}

int profile__write_speedscope(const struct profile *p, FILE *out, const char *name)
{
	const char *unit = speedscope_unit(p->opts.values[p->opts.weight_value].unit);
	struct group_sort *g = NULL;
	uint32_t *ffile = NULL; /* per function: file shown (source, else mapping) */
	uint32_t *fns = NULL;	/* every sample's functions, root first */
	size_t *starts = NULL;	/* group boundaries in g, then nr_samples */
	size_t i, j, nr_groups = 0, active = 0, nr_fns = 0;
	int64_t best = -1, t;
	int err = 0;

	for (i = 0; i < p->nr_samples; i++) {
		for (j = 0; j < p->samples[i].nr_locs; j++)
			nr_fns += p->locs[p->stacks[p->samples[i].first_loc + j] - 1].nr_lines;
	}
	g = calloc(p->nr_samples + 1, sizeof(*g));
	starts = calloc(p->nr_samples + 1, sizeof(*starts));
	ffile = calloc(p->nr_funcs + 1, sizeof(*ffile));
	fns = calloc(nr_fns + 1, sizeof(*fns));
	if (!g || !starts || !ffile || !fns) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < p->nr_funcs; i++)
		ffile[i] = p->funcs[i].file;
	for (i = 0; i < p->nr_locs; i++) {
		const struct plocation *l = &p->locs[i];

		for (j = 0; l->mapping && j < l->nr_lines; j++) {
			uint32_t f = p->lines[l->first_line + j].function - 1;

			if (!ffile[f])
				ffile[f] = p->maps[l->mapping - 1].file;
		}
	}
	for (i = 0, nr_fns = 0; i < p->nr_samples; i++) {
		g[i] = (struct group_sort){.p = p, .idx = i, .fns = fns + nr_fns};
		g[i].nr_fns = stack_functions(p, &p->samples[i], fns + nr_fns);
		nr_fns += g[i].nr_fns;
	}
	qsort(g, p->nr_samples, sizeof(*g), cmp_sample);
	for (i = 0; i < p->nr_samples; i++) {
		if (!i || !same_group(p, g[i - 1].idx, g[i].idx))
			starts[nr_groups++] = i;
	}
	starts[nr_groups] = p->nr_samples;
	/* speedscope opens the heaviest process first */
	for (i = 0; i < nr_groups; i++) {
		t = group_total(p, &g[starts[i]], starts[i + 1] - starts[i]);
		if (t > best) {
			best = t;
			active = i;
		}
	}

	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",", out);
	if (name) {
		fputs("\"name\":", out);
		json_string(out, name);
		fputc(',', out);
	}
	fprintf(out, "\"exporter\":\"scorch\",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[",
		active);
	for (i = 0; i < p->nr_funcs; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_string(out, p->strs[p->funcs[i].name]);
		if (ffile[i]) {
			fputs(",\"file\":", out);
			json_string(out, p->strs[ffile[i]]);
		}
		fputc('}', out);
	}
	fputs("]},\"profiles\":[", out);
	for (i = 0; i < nr_groups && !err; i++) {
		fputs(i ? ",\n" : "\n", out);
		err = write_profile(out, p, &g[starts[i]], starts[i + 1] - starts[i], unit);
	}
	fputs("]}\n", out);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
cleanup:
	free(g);
	free(starts);
	free(ffile);
	free(fns);
	return err;
}
