// SPDX-License-Identifier: MIT
/* symbolize: sorted symbol tables with alias merging and binary-search lookup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize-private.h"

static int sym_raw__cmp(const void *a, const void *b)
{
	const struct sym_raw *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return 0;
}

/*
 * Sorts @raw by insertion when it is nearly sorted: /proc/kallsyms lists its 120,000
 * symbols by address but for aliases of other ranks (~70 out of order), which merge
 * sort compared 2 million times. Gives up (false, @raw a permutation of itself) once
 * the elements moved add up to twice their number.
 */
static bool sort_nearly_sorted(struct sym_raw *raw, size_t nr)
{
	size_t i, j, moved = 0;
	struct sym_raw x;

	for (i = 1; i < nr; i++) {
		if (sym_raw__cmp(&raw[i - 1], &raw[i]) <= 0)
			continue;
		x = raw[i];
		for (j = i; j > 0 && sym_raw__cmp(&raw[j - 1], &x) > 0; j--)
			;
		moved += i - j;
		if (moved > 2 * nr)
			return false;
		memmove(&raw[j + 1], &raw[j], (i - j) * sizeof(*raw));
		raw[j] = x;
	}
	return true;
}

int symtab__build(struct symtab *tab, struct sym_raw *raw, size_t nr)
{
	struct sym *syms;
	size_t i, j, n = 0;

	tab->syms = NULL;
	tab->nr = 0;
	if (!nr)
		return 0;
	if (!sort_nearly_sorted(raw, nr))
		qsort(raw, nr, sizeof(*raw), sym_raw__cmp);
	syms = malloc(nr * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (i = 0; i < nr; i = j) {
		/* raw[i] is the preferred alias at this address; aliases may only widen it */
		uint64_t end = raw[i].end, limit = raw[i].limit;

		for (j = i + 1; j < nr && raw[j].start == raw[i].start; j++) {
			end = MAX(end, raw[j].end);
			limit = MAX(limit, raw[j].limit);
		}
		if (!end) {
			end = limit;
			if (j < nr && raw[j].start < end)
				end = raw[j].start;
		}
		if (end <= raw[i].start)
			continue; /* nothing to cover (zero-size at a section end, bogus size) */
		syms[n++] = (struct sym){
			.start = raw[i].start,
			.end = end,
			.name = raw[i].name,
			.module = raw[i].module,
		};
	}
	tab->syms = syms;
	tab->nr = n;
	return 0;
}

void symtab__free(struct symtab *tab)
{
	free(tab->syms);
	tab->syms = NULL;
	tab->nr = 0;
}

const struct sym *symtab__find(const struct symtab *tab, uint64_t addr)
{
	size_t lo = 0, hi = tab->nr;

	/* first symbol starting above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tab->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr < tab->syms[lo - 1].end)
		return &tab->syms[lo - 1];
	/* a sized symbol may enclose a smaller one that ends before addr */
	if (lo >= 2 && addr < tab->syms[lo - 2].end)
		return &tab->syms[lo - 2];
	return NULL;
}
