// SPDX-License-Identifier: MIT
/* symbolize: /proc/kallsyms text symbols ("name", "name [module]") into a symtab, or
 * names to their addresses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize-private.h"

/* How far an unsized kernel symbol may reach when nothing follows it in its module. */
#define KSYM_TAIL_MAX (64u << 10)
/* How far any kernel symbol may reach: beyond this, an address is "[unknown]". */
#define KSYM_MAX_EXTENT (16u << 20)
#define KSYM_LINE_MAX	1024

static int ksym_rank(char type)
{
	switch (type) {
	case 'T':
		return 0;
	case 'W':
		return 1;
	case 't':
		return 2;
	case 'w':
		return 3;
	default:
		return -1;
	}
}

/*
 * One line [p, end), end writable (a '\n' or the byte after the text). Returns true and
 * fills @raw for a text symbol, its name and module NUL-terminated in place (not
 * interned: see kallsyms__names()); false to skip the line.
 */
static bool parse_line(char *p, char *end, struct sym_raw *raw)
{
	char *name, *name_end, *mod = NULL, *mod_end = NULL;
	uint64_t addr = 0;
	int rank, n = 0, d;

	/* the display name "name [module]" must fit kallsyms__names()'s buffer */
	if (end - p >= KSYM_LINE_MAX)
		return false;
	for (; p < end && *p != ' '; p++, n++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return false;
		if (n >= 16)
			return false;
		addr = addr << 4 | (uint64_t)d;
	}
	if (!n || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return false;
	rank = ksym_rank(p[1]);
	if (rank < 0)
		return false;
	name = p + 3;
	for (name_end = name; name_end < end && *name_end != '\t' && *name_end != ' ';)
		name_end++;
	if (name_end == name || memchr(name, '\0', name_end - name))
		return false;
	if (name_end < end) {
		/* "\t[module]" */
		mod = name_end + 1;
		while (mod < end && (*mod == ' ' || *mod == '\t'))
			mod++;
		mod_end = end;
		if (mod_end - mod < 3 || mod[0] != '[' || mod_end[-1] != ']' ||
		    memchr(mod, '\0', mod_end - mod))
			return false;
		mod++;
		mod_end--;
		*mod_end = '\0';
	}
	*name_end = '\0';
	raw->start = addr;
	raw->end = 0;
	raw->limit = addr > UINT64_MAX - KSYM_MAX_EXTENT ? UINT64_MAX : addr + KSYM_MAX_EXTENT;
	raw->rank = rank;
	raw->name = name;
	raw->module = mod;
	return true;
}

int kallsyms__names(const struct sym *sym, struct strset *strs, const char **name,
		    const char **module)
{
	char buf[KSYM_LINE_MAX + 4];
	int n;

	*module = NULL;
	if (!sym->module) {
		*name = strset__intern(strs, sym->name);
		return *name ? 0 : -ENOMEM;
	}
	n = snprintf(buf, sizeof(buf), "%s [%s]", sym->name, sym->module);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL; /* parse_line() bounds the line: cannot happen */
	*name = strset__intern_len(strs, buf, n);
	*module = strset__intern(strs, sym->module);
	return *name && *module ? 0 : -ENOMEM;
}

int kallsyms__parse(char *text, size_t len, struct symtab *tab, bool *nonzero)
{
	char *p = text, *end = text + len, *eol;
	struct sym_raw *raw = NULL;
	size_t nr = 0, cap = 0, i;
	int err = 0;

	*nonzero = false;
	tab->syms = NULL;
	tab->nr = 0;
	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (array__grow((void **)&raw, &cap, nr + 1, sizeof(*raw))) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (!parse_line(p, eol, &raw[nr]))
			continue;
		if (raw[nr].start)
			*nonzero = true;
		raw[nr].idx = nr;
		nr++;
	}
	if (!*nonzero)
		goto cleanup; /* every address hidden: a table of zeros would name everything */
	err = symtab__build(tab, raw, nr);
	if (err)
		goto cleanup;
	/* the last symbol of a module (or of the core kernel) ends at a bounded distance */
	for (i = 0; i < tab->nr; i++) {
		struct sym *s = &tab->syms[i];

		if (i + 1 < tab->nr && tab->syms[i + 1].module == s->module)
			continue;
		if (s->end - s->start > KSYM_TAIL_MAX)
			s->end = s->start + KSYM_TAIL_MAX;
	}
cleanup:
	free(raw);
	return err;
}

/* One of the caller's names and its index, sorted by name. */
struct name_idx {
	const char *name;
	size_t i;
};

static int cmp_name_idx(const void *a, const void *b)
{
	return strcmp(((const struct name_idx *)a)->name, ((const struct name_idx *)b)->name);
}

int kallsyms__addrs(char *text, size_t len, const char *const *names, size_t n, uint64_t *addrs)
{
	char *p = text, *end = text + len, *eol;
	struct name_idx *by_name = NULL, *hit, key;
	struct sym_raw raw;
	size_t i;

	if (!n)
		return 0;
	by_name = calloc(n, sizeof(*by_name));
	if (!by_name)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		by_name[i] = (struct name_idx){.name = names[i], .i = i};
	qsort(by_name, n, sizeof(*by_name), cmp_name_idx);
	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (!parse_line(p, eol, &raw))
			continue;
		key.name = raw.name;
		hit = bsearch(&key, by_name, n, sizeof(*by_name), cmp_name_idx);
		if (!hit)
			continue;
		while (hit > by_name && !strcmp(hit[-1].name, raw.name))
			hit--;
		for (; hit < by_name + n && !strcmp(hit->name, raw.name); hit++)
			if (!addrs[hit->i])
				addrs[hit->i] = raw.start;
	}
	free(by_name);
	return 0;
}
