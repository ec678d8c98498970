// SPDX-License-Identifier: MIT
/* flamegraph: two profiles joined stack by stack (scorch diff): two-count output, SVG, top report.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

struct diff_stack {
	const char *stack; /* interned, escaped */
	size_t len;
	uint64_t count[2];
};

struct folded_diff {
	struct folded_diff_opts opts;
	struct strset *strs;
	struct diff_stack *stacks; /* in order of arrival */
	size_t nr, cap_stacks;
	struct hashmap stack_index; /* stack -> index in stacks[] + 1 */
	uint64_t total[2];
	size_t lines[2];
	bool markers[2]; /* a stack ends in [off-cpu] or [runqueue] (a wall/off-CPU profile) */
	char *name[2];
	uint64_t scale[2]; /* -n: counts are multiplied by these (exact); else 1 */
	bool finished;
	char *buf;
	size_t buf_cap;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct folded_diff *folded_diff__new(const struct folded_diff_opts *opts)
{
	struct folded_diff *d = calloc(1, sizeof(*d));

	if (!d)
		goto nomem;
	if (opts)
		memcpy(&d->opts, opts, MIN(opts->sz ? opts->sz : sizeof(*opts), sizeof(*opts)));
	d->opts.sz = sizeof(d->opts);
	d->scale[0] = d->scale[1] = 1;
	d->strs = strset__new();
	if (!d->strs)
		goto nomem;
	return d;
nomem:
	folded_diff__free(d);
	errno = ENOMEM;
	return NULL;
}

void folded_diff__free(struct folded_diff *d)
{
	if (!d)
		return;
	strset__free(d->strs);
	free(d->stacks);
	hashmap__free(&d->stack_index);
	free(d->name[0]);
	free(d->name[1]);
	free(d->buf);
	free(d);
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * Writes @s[0..len) into d->buf with each frame escaped as the folded contract
 * says and, with strip_hex, every "0x" followed by hex digits replaced by "0x..."
 * (difffolded.pl -s). Returns the new length or -ENOMEM.
 */
static ssize_t normalize_stack(struct folded_diff *d, const char *s, size_t len)
{
	size_t need = 4 * len + sizeof(FOLDED_EMPTY_FRAME) * (len + 1), o = 0, start = 0, i;

	if (array__grow((void **)&d->buf, &d->buf_cap, need, 1))
		return -ENOMEM;
	for (i = 0; i <= len; i++) {
		unsigned char c = i < len ? (unsigned char)s[i] : ';';

		if (c == ';') {
			if (o == start) {
				memcpy(d->buf + o, FOLDED_EMPTY_FRAME,
				       sizeof(FOLDED_EMPTY_FRAME) - 1);
				o += sizeof(FOLDED_EMPTY_FRAME) - 1;
			}
			if (i < len)
				d->buf[o++] = ';';
			start = o;
		} else if (c < 0x20 || c == 0x7f) {
			d->buf[o++] = '?';
		} else if (d->opts.strip_hex && c == '0' && i + 2 < len && s[i + 1] == 'x' &&
			   is_hex(s[i + 2])) {
			memcpy(d->buf + o, "0x...", 5);
			o += 5;
			for (i += 2; i + 1 < len && is_hex(s[i + 1]); i++)
				;
		} else {
			d->buf[o++] = (char)c;
		}
	}
	return (ssize_t)o;
}

static int add(struct folded_diff *d, int side, const char *s, size_t len, uint64_t count)
{
	uint64_t h = hash__bytes(s, len, 0), val;
	struct diff_stack *st;
	size_t probe = 0;

	while ((val = hashmap__match(&d->stack_index, h, &probe))) {
		st = &d->stacks[val - 1];
		if (st->len == len && !memcmp(st->stack, s, len))
			goto found;
	}
	if (array__grow((void **)&d->stacks, &d->cap_stacks, d->nr + 1, sizeof(*d->stacks)))
		return -ENOMEM;
	st = &d->stacks[d->nr];
	*st = (struct diff_stack){.stack = strset__intern_len(d->strs, s, len), .len = len};
	if (!st->stack || hashmap__insert(&d->stack_index, h, d->nr + 1))
		return -ENOMEM;
	d->nr++;
found:
	st->count[side] = sat_add(st->count[side], count);
	d->total[side] = sat_add(d->total[side], count);
	return 0;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n) && (len == n || s[len - n - 1] == ';');
}

int folded_diff__read(struct folded_diff *d, enum folded_side side, FILE *in, const char *name)
{
	size_t lineno = 0, nr = 0, bad = 0, frac = 0, stack_len, n;
	struct line_reader lr;
	uint64_t before, after;
	char *line;
	ssize_t len;
	bool f;
	int err, r;

	if (!d || !in || (side != FOLDED_BEFORE && side != FOLDED_AFTER) || d->finished)
		return -EINVAL;
	free(d->name[side]);
	d->name[side] = strdup(name);
	if (!d->name[side])
		return -ENOMEM;
	line_reader__init(&lr, in, LINE_MAX_FOLDED);
	while ((err = line_reader__next(&lr, &line, &n)) > 0) {
		lineno = lr.skipped + ++nr;
		r = folded__parse_line(line, n, &stack_len, &before, &after, &f);
		if (!r)
			continue;
		if (r < 0) {
			bad++;
			continue;
		}
		if (r == 2) {
			pr_err("flamegraph: %s:%zu: two counts on a line (a differential "
			       "profile)\n",
			       name, lineno);
			pr_hint("scorch diff compares two ordinary profiles; render a two-count "
				"file "
				"with 'scorch flamegraph'\n");
			err = -EINVAL;
			goto cleanup;
		}
		frac += f;
		len = normalize_stack(d, line, stack_len);
		if (len < 0) {
			err = (int)len;
			goto cleanup;
		}
		if (ends_with(d->buf, (size_t)len, FG_FRAME_OFFCPU) ||
		    ends_with(d->buf, (size_t)len, FG_FRAME_RUNQUEUE))
			d->markers[side] = true;
		err = add(d, side, d->buf, (size_t)len, after);
		if (err)
			goto cleanup;
		d->lines[side]++;
	}
	if (err) {
		if (err != -ENOMEM)
			pr_err("flamegraph: cannot read %s: %s\n", name, strerror(-err));
		goto cleanup;
	}
	line_reader__report(&lr, "diff", name);
	if (bad)
		pr_warn("flamegraph: %s: ignored %zu lines with invalid format\n", name, bad);
	if (frac)
		pr_warn("flamegraph: %s: %zu lines have fractional counts, rounded to integers\n",
			name, frac);
cleanup:
	if (err == -ENOMEM)
		pr_err("flamegraph: out of memory reading %s\n", name);
	line_reader__free(&lr);
	return err;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int folded_diff__finish(struct folded_diff *d)
{
	static const char *const side_name[] = {"before", "after"};
	unsigned __int128 t;
	uint64_t g;
	size_t i;
	int s;

	if (!d || d->finished)
		return -EINVAL;
	for (s = 0; s < 2; s++) {
		const char *n = d->name[s] ? d->name[s] : side_name[s];

		if (!d->lines[s]) {
			pr_err("flamegraph: %s (%s): no stacks: an empty profile\n", n,
			       side_name[s]);
			pr_hint("both inputs must hold folded stacks ('frame;frame;... COUNT' "
				"lines)\n");
			return -ENODATA;
		}
		if (!d->total[s]) {
			pr_err("flamegraph: %s (%s): every count is zero\n", n, side_name[s]);
			return -ENODATA;
		}
	}
	if (d->markers[0] != d->markers[1]) {
		pr_warn("flamegraph: %s has [off-cpu]/[runqueue] stacks and %s has none: units "
			"may differ\n",
			d->name[d->markers[0] ? 0 : 1], d->name[d->markers[0] ? 1 : 0]);
		pr_hint("wall-clock and off-CPU profiles count microseconds, CPU profiles "
			"samples: compare profiles of the same mode\n");
	}
	d->finished = true;
	if (!d->opts.normalize || d->total[0] == d->total[1])
		return 0;
	/* exact: before * (T1 / g) and after * (T0 / g) have equal totals T0 * T1 / g */
	g = gcd(d->total[0], d->total[1]);
	t = (unsigned __int128)d->total[0] * (d->total[1] / g);
	if (t <= UINT64_MAX && d->total[0] != UINT64_MAX && d->total[1] != UINT64_MAX) {
		d->scale[0] = d->total[1] / g;
		d->scale[1] = d->total[0] / g;
		return 0;
	}
	/* too large to scale exactly: round "before" to "after"'s total */
	pr_warn("flamegraph: totals too large to normalize exactly: before counts rounded\n");
	for (i = 0; i < d->nr; i++) {
		t = (unsigned __int128)d->stacks[i].count[0] * d->total[1];
		d->stacks[i].count[0] = (uint64_t)((t + d->total[0] / 2) / d->total[0]);
	}
	d->total[0] = d->total[1];
	return 0;
}

uint64_t folded_diff__total(const struct folded_diff *d, enum folded_side side)
{
	return d && (side == FOLDED_BEFORE || side == FOLDED_AFTER) ? d->total[side] : 0;
}

size_t folded_diff__nr_stacks(const struct folded_diff *d)
{
	return d ? d->nr : 0;
}

/* A count as "after" units: exact scaled count / after's scale, rounded. */
static uint64_t in_after_units(const struct folded_diff *d, unsigned __int128 scaled)
{
	return (uint64_t)((scaled + d->scale[1] / 2) / d->scale[1]);
}

static int cmp_stack(const void *a, const void *b)
{
	const struct diff_stack *x = *(const struct diff_stack *const *)a;
	const struct diff_stack *y = *(const struct diff_stack *const *)b;
	int c = memcmp(x->stack, y->stack, MIN(x->len, y->len));

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* The stacks in bytewise order (malloc'ed, caller frees), or NULL for -ENOMEM. */
static const struct diff_stack **sorted_stacks(const struct folded_diff *d)
{
	const struct diff_stack **v = malloc(MAX(d->nr, 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < d->nr; i++)
		v[i] = &d->stacks[i];
	qsort(v, d->nr, sizeof(*v), cmp_stack);
	return v;
}

int folded_diff__write(const struct folded_diff *d, FILE *out)
{
	const struct diff_stack **v = NULL;
	size_t i;
	int err = 0;

	if (!d || !out || !d->finished)
		return -EINVAL;
	v = sorted_stacks(d);
	if (!v)
		return -ENOMEM;
	errno = 0;
	for (i = 0; i < d->nr; i++) {
		uint64_t b = in_after_units(d, (unsigned __int128)v[i]->count[0] * d->scale[0]);

		if (fwrite(v[i]->stack, 1, v[i]->len, out) != v[i]->len ||
		    fprintf(out, " %" PRIu64 " %" PRIu64 "\n", b, v[i]->count[1]) < 0)
			break;
	}
	if (fflush(out) || ferror(out))
		err = errno ? -errno : -EIO;
	free(v);
	return err;
}

int flamegraph__add_diff(struct flamegraph *fg, const struct folded_diff *d)
{
	const struct diff_stack **v = NULL;
	size_t i;
	int err = 0;

	if (!fg || !d || !d->finished)
		return -EINVAL;
	v = sorted_stacks(d);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < d->nr && !err; i++)
		err = flamegraph__add_diff_text(fg, v[i]->stack, v[i]->len,
						v[i]->count[0] * d->scale[0],
						v[i]->count[1] * d->scale[1]);
	/* counts are in exact scaled units: display them in "after"'s */
	fg->opts.factor /= (double)d->scale[1];
	free(v);
	return err;
}

/* ---- the top report ---- */

struct fn_stat {
	const char *name;
	size_t len;
	size_t stamp; /* last stack counted in total (recursion counts once) */
	unsigned __int128 self[2], total[2];
};

struct fn_table {
	struct fn_stat *v;
	size_t nr, cap;
	struct hashmap index; /* name -> index in v[] + 1 */
};

static struct fn_stat *fn_get(struct fn_table *t, const char *s, size_t len)
{
	uint64_t h = hash__bytes(s, len, 1), val;
	size_t probe = 0;

	while ((val = hashmap__match(&t->index, h, &probe))) {
		struct fn_stat *f = &t->v[val - 1];

		if (f->len == len && !memcmp(f->name, s, len))
			return f;
	}
	if (array__grow((void **)&t->v, &t->cap, t->nr + 1, sizeof(*t->v)) ||
	    hashmap__insert(&t->index, h, t->nr + 1))
		return NULL;
	t->v[t->nr] = (struct fn_stat){.name = s, .len = len, .stamp = SIZE_MAX};
	return &t->v[t->nr++];
}

static int fn_collect(const struct folded_diff *d, struct fn_table *t)
{
	size_t i;
	int s;

	for (i = 0; i < d->nr; i++) {
		const struct diff_stack *sl = &d->stacks[i];
		const char *p, *end, *semi;
		struct fn_stat *f = NULL;
		unsigned __int128 c[2];

		for (s = 0; s < 2; s++)
			c[s] = (unsigned __int128)sl->count[s] * d->scale[s];
		for (p = sl->stack, end = p + sl->len;; p = semi + 1) {
			semi = memchr(p, ';', (size_t)(end - p));
			if (!semi)
				semi = end;
			f = fn_get(t, p, (size_t)(semi - p));
			if (!f)
				return -ENOMEM;
			if (f->stamp != i) {
				f->stamp = i;
				for (s = 0; s < 2; s++)
					f->total[s] += c[s];
			}
			if (semi == end)
				break;
		}
		for (s = 0; s < 2; s++)
			f->self[s] += c[s]; /* the leaf */
	}
	return 0;
}

static unsigned __int128 absdiff(const unsigned __int128 *v)
{
	return v[1] > v[0] ? v[1] - v[0] : v[0] - v[1];
}

static int cmp_by(const struct fn_stat *x, const struct fn_stat *y, bool self)
{
	unsigned __int128 a = absdiff(self ? x->self : x->total);
	unsigned __int128 b = absdiff(self ? y->self : y->total);
	int c;

	if (a != b)
		return a > b ? -1 : 1;
	c = memcmp(x->name, y->name, MIN(x->len, y->len));
	return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

static int cmp_self(const void *a, const void *b)
{
	return cmp_by(a, b, true);
}

static int cmp_total(const void *a, const void *b)
{
	return cmp_by(a, b, false);
}

/* "  before  after  +delta  +pct%" of one pair, in "after" units */
static void put_pair(FILE *out, const struct folded_diff *d, const unsigned __int128 *v)
{
	uint64_t b = in_after_units(d, v[0]), a = in_after_units(d, v[1]);
	char delta[32], pct[32];

	if (v[0] == v[1])
		snprintf(delta, sizeof(delta), "0");
	else
		snprintf(delta, sizeof(delta), "%c%" PRIu64, v[1] > v[0] ? '+' : '-',
			 in_after_units(d, absdiff(v)));
	if (v[0] == v[1])
		snprintf(pct, sizeof(pct), "0.00%%");
	else if (!v[0])
		snprintf(pct, sizeof(pct), "new");
	else
		snprintf(pct, sizeof(pct), "%+.2f%%",
			 100.0 * ((double)v[1] - (double)v[0]) / (double)v[0]);
	fprintf(out, " %12" PRIu64 " %12" PRIu64 " %12s %9s", b, a, delta, pct);
}

static void put_table(FILE *out, const struct folded_diff *d, const struct fn_stat *v, size_t nr,
		      size_t n, bool self)
{
	size_t i, shown = 0;

	fprintf(out, "top %zu functions by %s change:\n", n, self ? "self" : "total");
	fprintf(out, " %12s %12s %12s %9s %12s %12s %12s %9s  %s\n", "SELF BEFORE", "SELF AFTER",
		"DELTA", "DELTA%", "TOTAL BEFORE", "TOTAL AFTER", "DELTA", "DELTA%", "FUNCTION");
	for (i = 0; i < nr && shown < n; i++) {
		if (!absdiff(self ? v[i].self : v[i].total))
			break; /* sorted: the rest did not change */
		put_pair(out, d, v[i].self);
		put_pair(out, d, v[i].total);
		fprintf(out, "  %.*s\n", (int)v[i].len, v[i].name);
		shown++;
	}
	if (!shown)
		fprintf(out, " (no function's %s count changed)\n", self ? "self" : "total");
}

int folded_diff__write_top(const struct folded_diff *d, size_t n, FILE *out)
{
	struct fn_table t = {0};
	int err;

	if (!d || !out || !d->finished)
		return -EINVAL;
	err = fn_collect(d, &t);
	if (err)
		goto cleanup;
	errno = 0;
	fprintf(out, "before: %s, %" PRIu64 " total; after: %s, %" PRIu64 " total%s\n",
		d->name[0] ? d->name[0] : "before", d->total[0], d->name[1] ? d->name[1] : "after",
		d->total[1],
		d->scale[0] != d->scale[1] ? "; before normalized to after's total" : "");
	qsort(t.v, t.nr, sizeof(*t.v), cmp_self);
	put_table(out, d, t.v, t.nr, n, true);
	fputc('\n', out);
	qsort(t.v, t.nr, sizeof(*t.v), cmp_total);
	put_table(out, d, t.v, t.nr, n, false);
	if (fflush(out) || ferror(out))
		err = errno ? -errno : -EIO;
cleanup:
	if (err == -ENOMEM)
		pr_err("flamegraph: out of memory building the top report\n");
	free(t.v);
	hashmap__free(&t.index);
	return err;
}
