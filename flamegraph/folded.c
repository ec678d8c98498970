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
struct folded_stack {
	uint64_t count;
	size_t off;  /* of the first frame id in ids[] */
	uint32_t nr; /* frames */
};

struct folded {
	struct strset *strs;
	const char **names; /* by id, escaped */
	uint32_t *name_len;
	size_t nr_names, cap_names, cap_name_len;
	struct hashmap name_index; /* escaped name -> id + 1 */
	uint32_t *ids;		   /* every stack's frame ids */
	size_t nr_ids, cap_ids;
	struct folded_stack *stacks;
	size_t nr, cap_stacks;
	struct hashmap stack_index; /* frame ids -> index in stacks[] + 1 */
	size_t max_stacks;	    /* 0: no cap */
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
	if (!f->strs)
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
	hashmap__free(&f->name_index);
	free(f->ids);
	free(f->stacks);
	hashmap__free(&f->stack_index);
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

/* The id of frame @name escaped, adding it when new; -ENOMEM. */
static int64_t name_id(struct folded *f, const char *name)
{
	size_t need = MAX(strlen(name), sizeof(FOLDED_EMPTY_FRAME)) + 1, len, probe = 0;
	uint64_t h, val;
	const char *str;

	if (array__grow((void **)&f->buf, &f->buf_cap, need, 1))
		return -ENOMEM;
	len = folded__escape_frame(f->buf, name);
	h = hash__bytes(f->buf, len, 0);
	while ((val = hashmap__match(&f->name_index, h, &probe)))
		if (f->name_len[val - 1] == len && !memcmp(f->names[val - 1], f->buf, len))
			return (int64_t)val - 1;
	if (len > UINT32_MAX || f->nr_names >= UINT32_MAX ||
	    array__grow((void **)&f->names, &f->cap_names, f->nr_names + 1, sizeof(*f->names)) ||
	    array__grow((void **)&f->name_len, &f->cap_name_len, f->nr_names + 1,
			sizeof(*f->name_len)))
		return -ENOMEM;
	str = strset__intern_len(f->strs, f->buf, len);
	if (!str || hashmap__insert(&f->name_index, h, f->nr_names + 1))
		return -ENOMEM;
	f->names[f->nr_names] = str;
	f->name_len[f->nr_names] = (uint32_t)len;
	return f->nr_names++;
}

/* Adds @count to the stack of ids scratch[0..nr); a new one past the cap is refused (1). */
static int add_ids(struct folded *f, size_t nr, uint64_t count)
{
	uint64_t h = hash__bytes(f->scratch, nr * sizeof(*f->scratch), 0), val;
	struct folded_stack *s;
	size_t probe = 0;

	while ((val = hashmap__match(&f->stack_index, h, &probe))) {
		s = &f->stacks[val - 1];
		if (s->nr == nr && !memcmp(f->ids + s->off, f->scratch, nr * sizeof(*f->scratch))) {
			s->count = sat_add(s->count, count);
			f->total = sat_add(f->total, count);
			return 0;
		}
	}
	if (f->max_stacks && f->nr >= f->max_stacks)
		return 1;
	if (array__grow((void **)&f->ids, &f->cap_ids, f->nr_ids + nr, sizeof(*f->ids)) ||
	    array__grow((void **)&f->stacks, &f->cap_stacks, f->nr + 1, sizeof(*f->stacks)) ||
	    hashmap__insert(&f->stack_index, h, f->nr + 1))
		return -ENOMEM;
	memcpy(f->ids + f->nr_ids, f->scratch, nr * sizeof(*f->scratch));
	f->stacks[f->nr++] =
		(struct folded_stack){.count = count, .off = f->nr_ids, .nr = (uint32_t)nr};
	f->nr_ids += nr;
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
	const struct folded_stack *s;
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
	const struct folded_stack *s;
	const uint32_t *ids;
	int err = 0;

	if (!f->nr)
		return 0;
	sorted = malloc(f->nr * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (n = 0; n < f->nr; n++)
		sorted[n] = (struct folded_sorted){.f = f, .s = &f->stacks[n]};
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

int folded__for_each_stack(const struct folded *f, folded_stack_fn fn, void *ctx)
{
	const char **frames = NULL;
	size_t i, j, cap = 0;
	const struct folded_stack *s;
	int err = 0;

	for (i = 0; i < f->nr && !err; i++) {
		s = &f->stacks[i];
		if (array__grow((void **)&frames, &cap, s->nr, sizeof(*frames))) {
			err = -ENOMEM;
			break;
		}
		for (j = 0; j < s->nr; j++)
			frames[j] = f->names[f->ids[s->off + j]];
		err = fn(ctx, frames, s->nr, s->count);
	}
	free(frames);
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
