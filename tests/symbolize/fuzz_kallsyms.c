// SPDX-License-Identifier: MIT
/* tests/symbolize: libFuzzer target for the /proc/kallsyms parser and the symbol lookup. */
#include "../fuzz/fuzz.h"
#include "symbolize-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strset *strs;
	struct symtab tab = {0};
	const struct sym *s;
	bool nonzero;
	size_t i;

	fuzz__init_log();
	strs = strset__new();
	if (!strs)
		return 0;
	if (!kallsyms__parse((const char *)data, size, strs, &tab, &nonzero)) {
		for (i = 0; i < tab.nr; i++)
			if (tab.syms[i].start >= tab.syms[i].end ||
			    (i && tab.syms[i].start < tab.syms[i - 1].start))
				abort(); /* sorted, non-empty */
		for (i = 0; i < 64 && tab.nr; i++) {
			s = symtab__find(&tab, tab.syms[0].start + i * 0x40);
			if (s && !s->name)
				abort();
		}
		symtab__free(&tab);
	}
	strset__free(strs);
	return 0;
}
