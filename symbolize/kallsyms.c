// SPDX-License-Identifier: MIT
/* symbolize: /proc/kallsyms text symbols ("name", "name [module]") into a symtab. */
#include <errno.h>
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

/* One line [p, end). Returns 1 and fills @raw for a text symbol, 0 to skip, -ENOMEM. */
static int parse_line(const char *p, const char *end, struct strset *strs, struct sym_raw *raw)
{
	char buf[KSYM_LINE_MAX];
	const char *name, *name_end, *mod = NULL, *mod_end = NULL;
	uint64_t addr = 0;
	int rank, n = 0, d;

	for (; p < end && *p != ' '; p++, n++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return 0;
		if (n >= 16)
			return 0;
		addr = addr << 4 | (uint64_t)d;
	}
	if (!n || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return 0;
	rank = ksym_rank(p[1]);
	if (rank < 0)
		return 0;
	name = p + 3;
	for (name_end = name; name_end < end && *name_end != '\t' && *name_end != ' ';)
		name_end++;
	if (name_end == name)
		return 0;
	if (name_end < end) {
		/* "\t[module]" */
		mod = name_end + 1;
		while (mod < end && (*mod == ' ' || *mod == '\t'))
			mod++;
		mod_end = end;
		if (mod_end - mod < 3 || mod[0] != '[' || mod_end[-1] != ']')
			return 0;
		mod++;
		mod_end--;
	}
	raw->start = addr;
	raw->end = 0;
	raw->limit = addr > UINT64_MAX - KSYM_MAX_EXTENT ? UINT64_MAX : addr + KSYM_MAX_EXTENT;
	raw->rank = rank;
	raw->module = NULL;
	if (!mod) {
		raw->name = strset__intern_len(strs, name, name_end - name);
		return raw->name ? 1 : -ENOMEM;
	}
	n = snprintf(buf, sizeof(buf), "%.*s [%.*s]", (int)(name_end - name), name,
		     (int)(mod_end - mod), mod);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return 0;
	raw->name = strset__intern_len(strs, buf, n);
	raw->module = strset__intern_len(strs, mod, mod_end - mod);
	return raw->name && raw->module ? 1 : -ENOMEM;
}

int kallsyms__parse(const char *text, size_t len, struct strset *strs, struct symtab *tab,
		    bool *nonzero)
{
	const char *p = text, *end = text + len, *eol;
	struct sym_raw *raw = NULL, *tmp;
	size_t nr = 0, cap = 0, i;
	int err = 0, ret;

	*nonzero = false;
	tab->syms = NULL;
	tab->nr = 0;
	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (nr == cap) {
			cap = cap ? cap * 2 : 4096;
			tmp = realloc(raw, cap * sizeof(*raw));
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			raw = tmp;
		}
		ret = parse_line(p, eol, strs, &raw[nr]);
		if (ret < 0) {
			err = ret;
			goto cleanup;
		}
		if (!ret)
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
