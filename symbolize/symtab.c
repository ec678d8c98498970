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

/*
 * Among symbols at one address perf keeps one, by choose_best_symbol()
 * (tools/perf/util/symbol.c), each rule deciding only when the one before ties:
 *   1. a symbol with a size over one without,
 *   2. a function (STT_FUNC, STT_GNU_IFUNC) over a label (STT_NOTYPE),
 *   3. a symbol that is not weak over a weak one,
 *   4. a global one over one that is not (local, GNU unique),
 *   5. fewer leading underscores ("memcpy" over "__memcpy"),
 *   6. the longer name ("__memmove_avx512_unaligned_erms" over "__memcpy_...");
 * then the first in the table (perf keeps the first of a tie). The names are compared
 * as the table has them, versions included ("api@@V2" is longer than "api_v2"), as perf
 * compares them; elf.c then drops the version ("@GLIBC_2.2.5", "@@GLIBC_2.34") from the
 * name kept, which perf shows. Packed into one number, most significant rule first:
 * rules 1-4 a bit each, 5 eight bits, 6 sixteen.
 */
uint32_t symtab__elf_rank(uint64_t size, int type, int bind, const char *name)
{
	size_t under = strspn(name, "_"), len = strlen(name);

	return (uint32_t)!size << 30 | (uint32_t)(type == STT_NOTYPE) << 29 |
	       (uint32_t)(bind == STB_WEAK) << 28 | (uint32_t)(bind != STB_GLOBAL) << 27 |
	       (uint32_t)MIN(under, 255u) << 16 | (uint32_t)(0xffff - MIN(len, 0xffffu));
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
