// SPDX-License-Identifier: MIT
/* flamegraph: the folded-stack set (escape, merge, sorted deterministic output). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

struct folded_slot {
	uint64_t hash;
	const char *line; /* interned "frame;frame;...", NULL: empty slot */
	size_t len;
	uint64_t count;
};

struct folded {
	struct strset *lines;
	struct folded_slot *slots;
	size_t nr_slots; /* power of two */
	size_t nr;
	uint64_t total;
	char *buf; /* scratch for building a line */
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
	f->lines = strset__new();
	f->nr_slots = 256;
	f->slots = calloc(f->nr_slots, sizeof(*f->slots));
	if (!f->lines || !f->slots)
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
	strset__free(f->lines);
	free(f->slots);
	free(f->buf);
	free(f);
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

static int folded_grow(struct folded *f)
{
	size_t nr = f->nr_slots * 2, i, j;
	struct folded_slot *slots = calloc(nr, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < f->nr_slots; i++) {
		if (!f->slots[i].line)
			continue;
		for (j = f->slots[i].hash & (nr - 1); slots[j].line; j = (j + 1) & (nr - 1))
			;
		slots[j] = f->slots[i];
	}
	free(f->slots);
	f->slots = slots;
	f->nr_slots = nr;
	return 0;
}

int folded__add(struct folded *f, const char *const *frames, size_t nr, uint64_t count)
{
	size_t need = 0, len = 0, i;
	struct folded_slot *s;
	uint64_t h;

	if (!f || !frames || !nr)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!frames[i])
			return -EINVAL;
		/* an escaped frame is never longer than its input, or "[empty]" */
		need += MAX(strlen(frames[i]), sizeof(FOLDED_EMPTY_FRAME)) + 1;
	}
	if (need > f->buf_cap) {
		char *buf = realloc(f->buf, need);

		if (!buf)
			return -ENOMEM;
		f->buf = buf;
		f->buf_cap = need;
	}
	for (i = 0; i < nr; i++) {
		if (i)
			f->buf[len++] = ';';
		len += folded__escape_frame(f->buf + len, frames[i]);
	}

	if ((f->nr + 1) * 4 > f->nr_slots * 3 && folded_grow(f))
		return -ENOMEM;
	h = hash__bytes(f->buf, len, 0);
	for (i = h & (f->nr_slots - 1); f->slots[i].line; i = (i + 1) & (f->nr_slots - 1)) {
		s = &f->slots[i];
		if (s->hash == h && s->len == len && !memcmp(s->line, f->buf, len)) {
			s->count = sat_add(s->count, count);
			f->total = sat_add(f->total, count);
			return 0;
		}
	}
	s = &f->slots[i];
	s->line = strset__intern_len(f->lines, f->buf, len);
	if (!s->line)
		return -ENOMEM;
	s->hash = h;
	s->len = len;
	s->count = count;
	f->nr++;
	f->total = sat_add(f->total, count);
	return 0;
}

/* bytewise order, as LC_ALL=C sort */
static int cmp_slot(const void *a, const void *b)
{
	const struct folded_slot *x = *(const struct folded_slot *const *)a;
	const struct folded_slot *y = *(const struct folded_slot *const *)b;
	int c = memcmp(x->line, y->line, MIN(x->len, y->len));

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

int folded__for_each(const struct folded *f, folded_each_fn fn, void *ctx)
{
	const struct folded_slot **sorted = NULL;
	size_t i, n = 0;
	int err = 0;

	if (!f->nr)
		return 0;
	sorted = malloc(f->nr * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (i = 0; i < f->nr_slots; i++)
		if (f->slots[i].line)
			sorted[n++] = &f->slots[i];
	qsort(sorted, n, sizeof(*sorted), cmp_slot);
	for (i = 0; i < n; i++) {
		err = fn(sorted[i]->line, sorted[i]->len, sorted[i]->count, ctx);
		if (err)
			goto cleanup;
	}
cleanup:
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
