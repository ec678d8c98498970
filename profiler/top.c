// SPDX-License-Identifier: MIT
/* profiler: scorch top's tables: functions and stacks by decayed share, bounded. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "top.h"

/* a table holds at most this much of dropped entries' names beyond twice the live ones */
#define COMPACT_SLACK (64 * 1024)

struct top_entry {
	const char *comm, *name; /* interned in the set's strings */
	double self, total;	 /* decayed counts */
	uint64_t stamp;		 /* the last stack that counted it in total */
};

/*
 * One table (functions, or stacks). Entries are aged and pruned in place; their strings
 * stay interned until the set is compacted, when those of dropped entries outweigh
 * the live ones.
 */
struct top_set {
	struct strset *strs;
	size_t interned; /* bytes interned in strs, live or not */
	struct top_entry *v;
	size_t nr, cap;
	struct hashmap index; /* (comm, name) pointers -> index in v[] + 1 */
};

struct top_table {
	struct top_table_opts o;
	struct top_set fns, stacks;
	double weight;
	uint64_t stamp;
	/* an interval's functions by the pointers of its folded set's names (interned
	 * there): a name is hashed once per interval, not once per stack it is in */
	struct top_seen {
		const char *comm, *name;
		size_t fn; /* index in fns.v */
	} * seen_v;
	size_t nr_seen, seen_cap;
	struct hashmap seen; /* the pointers -> index in seen_v + 1 */
	char *line;	     /* a stack's frames joined */
	size_t line_cap;
	size_t *order; /* sort_set()'s */
	size_t order_cap;
	unsigned char *keep; /* prune()'s */
	size_t keep_cap;
	enum top_view sort_view;
	const struct top_set *sort_set;
};

static void set_release(struct top_set *s)
{
	strset__free(s->strs);
	free(s->v);
	hashmap__free(&s->index);
	memset(s, 0, sizeof(*s));
}

static uint64_t key_hash(const char *comm, const char *name)
{
	const char *key[2] = {comm, name};

	return hash__bytes(key, sizeof(key), 0);
}

static const char *intern(struct top_set *s, const char *str)
{
	size_t before = strset__count(s->strs);
	const char *p = strset__intern(s->strs, str);

	if (p && strset__count(s->strs) != before)
		s->interned += strlen(str) + 1;
	return p;
}

/* The entry of (@comm, @name), interned and added at zero when new; NULL: -ENOMEM. */
static struct top_entry *set_get(struct top_set *s, const char *comm, const char *name)
{
	const char *c, *n;
	struct top_entry *e;
	size_t probe = 0;
	uint64_t h, val;

	if (!s->strs && !(s->strs = strset__new()))
		return NULL;
	c = intern(s, comm);
	n = c ? intern(s, name) : NULL;
	if (!n)
		return NULL;
	/* interned: equal strings are equal pointers */
	h = key_hash(c, n);
	while ((val = hashmap__match(&s->index, h, &probe))) {
		e = &s->v[val - 1];
		if (e->comm == c && e->name == n)
			return e;
	}
	if (array__grow((void **)&s->v, &s->cap, s->nr + 1, sizeof(*s->v)) ||
	    hashmap__insert(&s->index, h, s->nr + 1))
		return NULL;
	e = &s->v[s->nr++];
	*e = (struct top_entry){.comm = c, .name = n};
	return e;
}

/* Largest first by the view's share, then by comm and name: a stable screen. */
static int cmp_entries(const struct top_entry *a, const struct top_entry *b, enum top_view v)
{
	double x = v == TOP_SELF ? a->self : a->total, y = v == TOP_SELF ? b->self : b->total;
	int c;

	if (x != y)
		return x > y ? -1 : 1;
	if (v == TOP_SELF && a->total != b->total)
		return a->total > b->total ? -1 : 1;
	c = strcmp(a->comm, b->comm);
	return c ? c : strcmp(a->name, b->name);
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct top_table *t = arg;
	const struct top_set *s = t->sort_set;

	return cmp_entries(&s->v[*(const size_t *)a], &s->v[*(const size_t *)b], t->sort_view);
}

/* t->order[0..s->nr) sorted for view @v. 0 or -ENOMEM. */
static int sort_set(struct top_table *t, const struct top_set *s, enum top_view v)
{
	size_t i;

	if (array__grow((void **)&t->order, &t->order_cap, s->nr, sizeof(*t->order)))
		return -ENOMEM;
	for (i = 0; i < s->nr; i++)
		t->order[i] = i;
	t->sort_view = v;
	t->sort_set = s;
	if (s->nr)
		qsort_r(t->order, s->nr, sizeof(*t->order), cmp_order, t);
	return 0;
}

/*
 * Marks in t->keep what stays of @s over its caps: the @max / 2 largest by self and by
 * total (functions, with @max_bytes 0; a large self is always a large total, not the
 * reverse), or the largest within @max entries and @max_bytes of names (stacks). 0 or
 * -ENOMEM.
 */
static int mark_caps(struct top_table *t, const struct top_set *s, size_t max, size_t max_bytes)
{
	bool fns = !max_bytes;
	size_t i, bytes = 0, len;
	unsigned char *keep = t->keep;
	int err;

	err = sort_set(t, s, TOP_TOTAL);
	for (i = 0; !err && i < s->nr && i < (fns ? max / 2 : max); i++) {
		len = fns ? 0 : strlen(s->v[t->order[i]].name) + 1;
		if (bytes + len > max_bytes && !fns)
			break;
		bytes += len;
		keep[t->order[i]] |= 2;
	}
	if (!err && fns)
		err = sort_set(t, s, TOP_SELF);
	for (i = 0; !err && fns && i < s->nr && i < max / 2; i++)
		keep[t->order[i]] |= 2;
	/* kept: above the share and within the caps */
	for (i = 0; !err && i < s->nr; i++)
		keep[i] = keep[i] == 3;
	return err;
}

/* Rebuilds @s from what it holds: the strings of dropped entries freed. 0 or -ENOMEM. */
static int compact(struct top_set *s)
{
	struct top_set n = {};
	struct top_entry *e;
	size_t i;

	for (i = 0; i < s->nr; i++) {
		e = set_get(&n, s->v[i].comm, s->v[i].name);
		if (!e) {
			set_release(&n);
			return -ENOMEM;
		}
		e->self = s->v[i].self;
		e->total = s->v[i].total;
	}
	set_release(s);
	*s = n;
	return 0;
}

/*
 * Drops the entries of @s below @min or past the caps (see mark_caps()); compacts the
 * set once dropped strings outweigh the live ones. 0 or -ENOMEM.
 */
static int prune(struct top_table *t, struct top_set *s, double min, size_t max, size_t max_bytes)
{
	size_t i, n = 0, live = 0;
	int err = 0;

	if (array__grow((void **)&t->keep, &t->keep_cap, s->nr, 1))
		return -ENOMEM;
	for (i = 0; i < s->nr; i++) {
		t->keep[i] = s->v[i].total > 0 && s->v[i].total >= min;
		n += t->keep[i];
		live += t->keep[i] && max_bytes ? strlen(s->v[i].name) + 1 : 0;
	}
	/* bit 0: above the share; mark_caps() adds bit 1, within the caps */
	if (n > max || live > max_bytes)
		err = mark_caps(t, s, max, max_bytes);
	if (err)
		return err;
	for (i = 0, n = 0, live = 0; i < s->nr; i++) {
		if (!t->keep[i])
			continue;
		s->v[n++] = s->v[i];
		live += strlen(s->v[i].name) + strlen(s->v[i].comm) + 2;
	}
	if (n == s->nr)
		return 0;
	s->nr = n;
	if (s->interned > 2 * live + COMPACT_SLACK)
		return compact(s);
	hashmap__clear(&s->index);
	for (i = 0; i < n && !err; i++)
		err = hashmap__insert(&s->index, key_hash(s->v[i].comm, s->v[i].name), i + 1);
	return err;
}

static int add_stack(void *ctx, const char *const *frames, size_t nr, uint64_t count)
{
	struct top_table *t = ctx;
	struct top_entry *e;
	size_t i, len = 0, probe;
	uint64_t h, val;

	if (nr < 2)
		return 0; /* a comm alone: in the weight, no function */
	t->stamp++;
	for (i = 1; i < nr; i++) {
		const struct top_seen *sn;

		h = key_hash(frames[0], frames[i]);
		probe = 0;
		e = NULL;
		while (!e && (val = hashmap__match(&t->seen, h, &probe))) {
			sn = &t->seen_v[val - 1];
			if (sn->comm == frames[0] && sn->name == frames[i])
				e = &t->fns.v[sn->fn];
		}
		if (!e) {
			e = set_get(&t->fns, frames[0], frames[i]);
			if (!e ||
			    array__grow((void **)&t->seen_v, &t->seen_cap, t->nr_seen + 1,
					sizeof(*t->seen_v)) ||
			    hashmap__insert(&t->seen, h, t->nr_seen + 1))
				return -ENOMEM;
			t->seen_v[t->nr_seen++] = (struct top_seen){
				.comm = frames[0], .name = frames[i], .fn = (size_t)(e - t->fns.v)};
		}
		if (e->stamp != t->stamp)
			e->total += count; /* recursion: once per stack */
		e->stamp = t->stamp;
		if (i == nr - 1)
			e->self += count;
		len += strlen(frames[i]) + 1;
	}
	if (array__grow((void **)&t->line, &t->line_cap, len, 1))
		return -ENOMEM;
	for (i = 1, len = 0; i < nr; i++) {
		size_t n = strlen(frames[i]);

		if (i > 1)
			t->line[len++] = ';';
		memcpy(t->line + len, frames[i], n);
		len += n;
	}
	t->line[len] = '\0';
	e = set_get(&t->stacks, frames[0], t->line);
	if (!e)
		return -ENOMEM;
	e->self += count;
	e->total += count;
	return 0;
}

static void age(struct top_set *s, double decay)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		s->v[i].self *= decay;
		s->v[i].total *= decay;
	}
}

int top_table__add(struct top_table *t, const struct folded *f, double seconds)
{
	double decay = t->o.half_life > 0 ? exp2(-MAX(seconds, 0) / t->o.half_life) : 0;
	double min;
	int err;

	age(&t->fns, decay);
	age(&t->stacks, decay);
	t->weight = t->weight * decay + (double)folded__total(f);
	min = t->weight * TOP_MIN_SHARE;
	hashmap__clear(&t->seen);
	t->nr_seen = 0;
	err = folded__for_each_stack(f, add_stack, t);
	if (!err)
		err = prune(t, &t->fns, min, t->o.max_functions, 0);
	if (!err)
		err = prune(t, &t->stacks, min, t->o.max_stacks, TOP_MAX_STACK_BYTES);
	return err;
}

int top_table__rows(struct top_table *t, enum top_view v, struct top_row *rows, size_t max,
		    size_t *nr)
{
	const struct top_set *s = v == TOP_STACKS ? &t->stacks : &t->fns;
	const struct top_entry *e;
	size_t i;
	int err;

	*nr = 0;
	err = sort_set(t, s, v);
	if (err)
		return err;
	for (i = 0; i < s->nr && i < max; i++) {
		e = &s->v[t->order[i]];
		if (v == TOP_SELF && e->self <= 0)
			break; /* the rest are callers only: the total view's */
		rows[i] = (struct top_row){
			.comm = e->comm,
			.name = e->name,
			.self = t->weight > 0 ? 100.0 * e->self / t->weight : 0,
			.total = t->weight > 0 ? 100.0 * e->total / t->weight : 0,
		};
	}
	*nr = i;
	return 0;
}

double top_table__weight(const struct top_table *t)
{
	return t->weight;
}

size_t top_table__size(const struct top_table *t, enum top_view v)
{
	return v == TOP_STACKS ? t->stacks.nr : t->fns.nr;
}

size_t top_table__bytes(const struct top_table *t)
{
	return t->fns.interned + t->stacks.interned;
}

struct top_table *top_table__new(const struct top_table_opts *o)
{
	struct top_table *t;

	if (!o || o->sz < sizeof(*o) || o->half_life < 0) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->o = *o;
	if (!t->o.max_functions)
		t->o.max_functions = TOP_MAX_FUNCTIONS;
	if (!t->o.max_stacks)
		t->o.max_stacks = TOP_MAX_STACKS;
	return t;
}

void top_table__free(struct top_table *t)
{
	if (!t)
		return;
	set_release(&t->fns);
	set_release(&t->stacks);
	hashmap__free(&t->seen);
	free(t->seen_v);
	free(t->line);
	free(t->order);
	free(t->keep);
	free(t);
}
