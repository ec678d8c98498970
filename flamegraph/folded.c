// SPDX-License-Identifier: MIT
/* flamegraph: the folded-stack set (escape, merge, sorted deterministic output). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

/*
 * A stack is stored as the ids of its (escaped, interned) frame names, not as its text:
 * a long recording's memory follows its distinct stacks at four bytes a frame, and the
 * lines are built only when written.
 */
struct folded_slot {
	uint64_t hash;
	uint64_t count;
	size_t off;  /* of the first frame id in ids[] */
	uint32_t nr; /* frames; 0: empty slot */
};

struct folded_name_slot {
	const char *str; /* interned in @strs; NULL: empty slot */
	uint32_t id;
};

struct folded {
	struct strset *strs;
	const char **names; /* by id */
	uint32_t *name_len;
	size_t nr_names, cap_names;
	struct folded_name_slot *name_slots; /* interned pointer -> id */
	size_t nr_name_slots;		     /* power of two */
	uint32_t *ids;			     /* every stack's frame ids */
	size_t nr_ids, cap_ids;
	struct folded_slot *slots;
	size_t nr_slots; /* power of two */
	size_t nr;
	size_t max_stacks; /* 0: no cap */
	uint64_t total;
	uint64_t over_cap; /* counts of new stacks beyond max_stacks */
	uint32_t *scratch; /* the ids of the stack being added */
	size_t scratch_cap;
	char *buf; /* scratch for escaping one frame */
	size_t buf_cap;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct folded *folded__new(void)
{
	struct folded *f = calloc(1, sizeof(*f));

	if (!f)
		goto nomem;
	f->strs = strset__new();
	f->nr_slots = 256;
	f->slots = calloc(f->nr_slots, sizeof(*f->slots));
	f->nr_name_slots = 256;
	f->name_slots = calloc(f->nr_name_slots, sizeof(*f->name_slots));
	if (!f->strs || !f->slots || !f->name_slots)
		goto nomem;
	return f;
nomem:
	folded__free(f);
	errno = ENOMEM;
	return NULL;
}

void folded__free(struct folded *f)
{
	if (!f)
		return;
	strset__free(f->strs);
	free(f->names);
	free(f->name_len);
	free(f->name_slots);
	free(f->ids);
	free(f->slots);
	free(f->scratch);
	free(f->buf);
	free(f);
}

void folded__set_max_stacks(struct folded *f, size_t max)
{
	f->max_stacks = max;
}

uint64_t folded__over_cap(const struct folded *f)
{
	return f ? f->over_cap : 0;
}

size_t folded__escape_frame(char *dst, const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t n = 0;

	for (; *p; p++) {
		if (*p == ';')
			dst[n++] = ':';
		else if (*p < 0x20 || *p == 0x7f)
			dst[n++] = '?';
		else
			dst[n++] = (char)*p;
	}
	if (!n) {
		memcpy(dst, FOLDED_EMPTY_FRAME, sizeof(FOLDED_EMPTY_FRAME) - 1);
		n = sizeof(FOLDED_EMPTY_FRAME) - 1;
	}
	return n;
}

static uint64_t ptr_hash(const char *p)
{
	return hash__bytes(&p, sizeof(p), 0);
}

static int names_rehash(struct folded *f)
{
	size_t nr = f->nr_name_slots * 2, i, j;
	struct folded_name_slot *slots = calloc(nr, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < f->nr_names; i++) {
		for (j = ptr_hash(f->names[i]) & (nr - 1); slots[j].str; j = (j + 1) & (nr - 1))
			;
		slots[j] = (struct folded_name_slot){.str = f->names[i], .id = (uint32_t)i};
	}
	free(f->name_slots);
	f->name_slots = slots;
	f->nr_name_slots = nr;
	return 0;
}

/* The id of frame @name escaped, adding it when new; -ENOMEM. */
static int64_t name_id(struct folded *f, const char *name)
{
	size_t need = MAX(strlen(name), sizeof(FOLDED_EMPTY_FRAME)) + 1, len, i, mask;
	const char *str;

	if (array__grow((void **)&f->buf, &f->buf_cap, need, 1))
		return -ENOMEM;
	len = folded__escape_frame(f->buf, name);
	str = strset__intern_len(f->strs, f->buf, len);
	if (!str || len > UINT32_MAX)
		return -ENOMEM;
	mask = f->nr_name_slots - 1;
	for (i = ptr_hash(str) & mask; f->name_slots[i].str; i = (i + 1) & mask)
		if (f->name_slots[i].str == str)
			return f->name_slots[i].id;
	if (f->nr_names >= UINT32_MAX ||
	    array__grow((void **)&f->names, &f->cap_names, f->nr_names + 1, sizeof(*f->names)))
		return -ENOMEM;
	/* name_len shares cap_names: realloc it to the same capacity */
	if (f->cap_names) {
		uint32_t *l = realloc(f->name_len, f->cap_names * sizeof(*l));

		if (!l)
			return -ENOMEM;
		f->name_len = l;
	}
	f->names[f->nr_names] = str;
	f->name_len[f->nr_names] = (uint32_t)len;
	f->name_slots[i] = (struct folded_name_slot){.str = str, .id = (uint32_t)f->nr_names};
	f->nr_names++;
	if (f->nr_names * 4 > f->nr_name_slots * 3 && names_rehash(f))
		return -ENOMEM;
	return f->nr_names - 1;
}

static int folded_grow(struct folded *f)
{
	size_t nr = f->nr_slots * 2, i, j;
	struct folded_slot *slots = calloc(nr, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < f->nr_slots; i++) {
		if (!f->slots[i].nr)
			continue;
		for (j = f->slots[i].hash & (nr - 1); slots[j].nr; j = (j + 1) & (nr - 1))
			;
		slots[j] = f->slots[i];
	}
	free(f->slots);
	f->slots = slots;
	f->nr_slots = nr;
	return 0;
}

/* Adds @count to the stack of ids scratch[0..nr); a new one past the cap is refused (1). */
static int add_ids(struct folded *f, size_t nr, uint64_t count)
{
	struct folded_slot *s;
	uint64_t h;
	size_t i;

	if ((f->nr + 1) * 4 > f->nr_slots * 3 && folded_grow(f))
		return -ENOMEM;
	h = hash__bytes(f->scratch, nr * sizeof(*f->scratch), 0);
	for (i = h & (f->nr_slots - 1); f->slots[i].nr; i = (i + 1) & (f->nr_slots - 1)) {
		s = &f->slots[i];
		if (s->hash == h && s->nr == nr &&
		    !memcmp(f->ids + s->off, f->scratch, nr * sizeof(*f->scratch))) {
			s->count = sat_add(s->count, count);
			f->total = sat_add(f->total, count);
			return 0;
		}
	}
	if (f->max_stacks && f->nr >= f->max_stacks)
		return 1;
	if (array__grow((void **)&f->ids, &f->cap_ids, f->nr_ids + nr, sizeof(*f->ids)))
		return -ENOMEM;
	memcpy(f->ids + f->nr_ids, f->scratch, nr * sizeof(*f->scratch));
	s = &f->slots[i];
	*s = (struct folded_slot){.hash = h, .count = count, .off = f->nr_ids, .nr = (uint32_t)nr};
	f->nr_ids += nr;
	f->nr++;
	f->total = sat_add(f->total, count);
	return 0;
}

int folded__add(struct folded *f, const char *const *frames, size_t nr, uint64_t count)
{
	size_t i, cap;
	int64_t id;
	int err;

	if (!f || !frames || !nr || nr > UINT32_MAX)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (!frames[i])
			return -EINVAL;
	if (array__grow((void **)&f->scratch, &f->scratch_cap, MAX(nr, 2), sizeof(*f->scratch)))
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		id = name_id(f, frames[i]);
		if (id < 0)
			return (int)id;
		f->scratch[i] = (uint32_t)id;
	}
	err = add_ids(f, nr, count);
	if (err <= 0)
		return err;
	/* past the cap: counted under its root and FOLDED_FULL_FRAME, which may exceed the
	 * cap by one stack per root */
	f->over_cap = sat_add(f->over_cap, count);
	id = name_id(f, FOLDED_FULL_FRAME);
	if (id < 0)
		return (int)id;
	f->scratch[1] = (uint32_t)id;
	cap = f->max_stacks;
	f->max_stacks = 0;
	err = add_ids(f, 2, count);
	f->max_stacks = cap;
	return err;
}

struct folded_sorted {
	const struct folded *f;
	const struct folded_slot *s;
};

/*
 * Bytewise order of the lines, as LC_ALL=C sort, without building them: frames are
 * compared name by name; where one name is a prefix of the other, the line of the
 * shorter continues with ';' (or ends), which no escaped name contains.
 */
static int cmp_sorted(const void *a, const void *b)
{
	const struct folded_sorted *x = a, *y = b;
	const struct folded *f = x->f;
	const uint32_t *xi = f->ids + x->s->off, *yi = f->ids + y->s->off;
	uint32_t i, n = MIN(x->s->nr, y->s->nr), lx, ly;
	int c;

	for (i = 0; i < n; i++) {
		if (xi[i] == yi[i])
			continue;
		lx = f->name_len[xi[i]];
		ly = f->name_len[yi[i]];
		c = memcmp(f->names[xi[i]], f->names[yi[i]], MIN(lx, ly));
		if (c)
			return c;
		if (lx < ly) /* x goes on with ';' or ends */
			return i + 1 == x->s->nr || ';' < (unsigned char)f->names[yi[i]][lx] ? -1
											     : 1;
		return i + 1 == y->s->nr || ';' < (unsigned char)f->names[xi[i]][ly] ? 1 : -1;
	}
	return x->s->nr < y->s->nr ? -1 : x->s->nr > y->s->nr;
}

int folded__for_each(const struct folded *f, folded_each_fn fn, void *ctx)
{
	struct folded_sorted *sorted = NULL;
	char *line = NULL;
	size_t i, j, n = 0, len, cap = 0;
	const struct folded_slot *s;
	const uint32_t *ids;
	int err = 0;

	if (!f->nr)
		return 0;
	sorted = malloc(f->nr * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (i = 0; i < f->nr_slots; i++)
		if (f->slots[i].nr)
			sorted[n++] = (struct folded_sorted){.f = f, .s = &f->slots[i]};
	qsort(sorted, n, sizeof(*sorted), cmp_sorted);
	for (i = 0; i < n; i++) {
		s = sorted[i].s;
		ids = f->ids + s->off;
		for (j = 0, len = 0; j < s->nr; j++)
			len += f->name_len[ids[j]] + 1;
		if (array__grow((void **)&line, &cap, len, 1)) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (j = 0, len = 0; j < s->nr; j++) {
			if (j)
				line[len++] = ';';
			memcpy(line + len, f->names[ids[j]], f->name_len[ids[j]]);
			len += f->name_len[ids[j]];
		}
		err = fn(line, len, s->count, ctx);
		if (err)
			goto cleanup;
	}
cleanup:
	free(line);
	free(sorted);
	return err;
}

static int write_line(const char *line, size_t len, uint64_t count, void *ctx)
{
	FILE *out = ctx;

	if (fwrite(line, 1, len, out) != len || fprintf(out, " %" PRIu64 "\n", count) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int folded__write(const struct folded *f, FILE *out)
{
	int err;

	if (!f || !out)
		return -EINVAL;
	errno = 0;
	err = folded__for_each(f, write_line, out);
	if (err)
		return err;
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

size_t folded__nr_stacks(const struct folded *f)
{
	return f ? f->nr : 0;
}

uint64_t folded__total(const struct folded *f)
{
	return f ? f->total : 0;
}
