// SPDX-License-Identifier: MIT
/* perfmap: the per-process entry list and its later-wins, binary-searched segment index. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap-private.h"

int pm_index__add(struct pm_index *ix, uint64_t start, uint64_t end, uint64_t ts, const char *name)
{
	if (ix->max && ix->nr >= ix->max) {
		ix->dropped++;
		return 0;
	}
	if (ix->nr == ix->cap && ix->cap >= UINT32_MAX / 2)
		return -ENOMEM; /* segments index entries with 32 bits */
	if (array__grow((void **)&ix->ents, &ix->cap, ix->nr + 1, sizeof(*ix->ents)))
		return -ENOMEM;
	ix->ents[ix->nr++] = (struct pm_entry){.start = start, .end = end, .ts = ts, .name = name};
	ix->dirty = true;
	return 0;
}

void pm_index__free(struct pm_index *ix)
{
	free(ix->ents);
	free(ix->segs);
	memset(ix, 0, sizeof(*ix));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort keys for entries by start; ties keep any order (the heap decides by recency). */
struct by_start {
	uint64_t start;
	uint32_t ent;
};

static int cmp_start(const void *a, const void *b)
{
	const struct by_start *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ent < y->ent ? -1 : x->ent > y->ent;
}

/* Max-heap of entry numbers: the newest entry covering the sweep position is on top. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++, p;

	while (i && h[p = (i - 1) / 2] < v) {
		h[i] = h[p];
		i = p;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--(*n)];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/*
 * Sweep over every boundary (starts and ends) in address order, keeping the entries that
 * started so far in a max-heap by recency; entries that ended are dropped lazily when they
 * reach the top. Between two boundaries the top of the heap wins.
 */
int pm_index__build(struct pm_index *ix)
{
	struct by_start *order = NULL;
	uint64_t *bounds = NULL, p, next;
	size_t nb = 0, nbu = 0, i, k = 0, nh = 0, ns = 0;
	struct pm_seg *segs = NULL;
	uint32_t *heap = NULL;
	int err = -ENOMEM;

	if (!ix->dirty)
		return 0;
	free(ix->segs);
	ix->segs = NULL;
	ix->nr_segs = 0;
	if (!ix->nr)
		goto done;
	/* entries in address order without overlap (a map written as code is laid out, the
	 * common case) are their own segments: O(n), no sort */
	for (i = 1; i < ix->nr && ix->ents[i].start >= ix->ents[i - 1].end; i++)
		;
	if (i == ix->nr) {
		segs = malloc(ix->nr * sizeof(*segs));
		if (!segs)
			goto cleanup;
		for (i = 0; i < ix->nr; i++)
			segs[i] = (struct pm_seg){ix->ents[i].start, ix->ents[i].end, (uint32_t)i};
		ns = ix->nr;
		goto install;
	}
	order = malloc(ix->nr * sizeof(*order));
	bounds = malloc(2 * ix->nr * sizeof(*bounds));
	heap = malloc(ix->nr * sizeof(*heap));
	/* each entry opens at most one new segment and ends at most one more */
	segs = malloc(2 * ix->nr * sizeof(*segs));
	if (!order || !bounds || !heap || !segs)
		goto cleanup;
	for (i = 0; i < ix->nr; i++) {
		order[i] = (struct by_start){ix->ents[i].start, (uint32_t)i};
		bounds[nb++] = ix->ents[i].start;
		bounds[nb++] = ix->ents[i].end;
	}
	qsort(order, ix->nr, sizeof(*order), cmp_start);
	qsort(bounds, nb, sizeof(*bounds), cmp_u64);
	for (i = 0; i < nb; i++)
		if (!nbu || bounds[nbu - 1] != bounds[i])
			bounds[nbu++] = bounds[i];
	for (i = 0; i + 1 < nbu; i++) {
		p = bounds[i];
		next = bounds[i + 1];
		while (k < ix->nr && order[k].start <= p)
			heap_push(heap, &nh, order[k++].ent);
		while (nh && ix->ents[heap[0]].end <= p)
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		if (ns && segs[ns - 1].ent == heap[0] && segs[ns - 1].end == p)
			segs[ns - 1].end = next;
		else
			segs[ns++] = (struct pm_seg){.start = p, .end = next, .ent = heap[0]};
	}
install:
	ix->segs = segs;
	ix->nr_segs = ns;
	segs = NULL;
done:
	ix->dirty = false;
	err = 0;
cleanup:
	free(order);
	free(bounds);
	free(heap);
	free(segs);
	return err;
}

const struct pm_entry *pm_index__find(const struct pm_index *ix, uint64_t ip)
{
	size_t lo = 0, hi = ix->nr_segs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ip < ix->segs[mid].start)
			hi = mid;
		else if (ip >= ix->segs[mid].end)
			lo = mid + 1;
		else
			return &ix->ents[ix->segs[mid].ent];
	}
	return NULL;
}

const struct pm_entry *pm_index__find_at(const struct pm_index *ix, uint64_t ip, uint64_t ts)
{
	size_t i;

	for (i = ix->nr; i--;) {
		const struct pm_entry *e = &ix->ents[i];

		if (ip >= e->start && ip < e->end && e->ts <= ts)
			return e;
	}
	return NULL;
}
