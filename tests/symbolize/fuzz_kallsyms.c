// SPDX-License-Identifier: MIT
/* tests/symbolize: libFuzzer target for the /proc/kallsyms parser and the symbol lookup. */
#include "../fuzz/fuzz.h"
#include "symbolize-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *name, *module;
	struct symtab tab = {0};
	struct strset *strs;
	const struct sym *s;
	char *text;
	bool nonzero;
	size_t i;

	fuzz__init_log();
	strs = strset__new();
	text = malloc(size + 1); /* parsed in place, the last line may end at text[size] */
	if (!strs || !text)
		goto cleanup;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!kallsyms__parse(text, size, &tab, &nonzero)) {
		for (i = 0; i < tab.nr; i++)
			if (tab.syms[i].start >= tab.syms[i].end ||
			    (i && tab.syms[i].start < tab.syms[i - 1].start))
				abort(); /* sorted, non-empty */
		for (i = 0; i < 64 && tab.nr; i++) {
			s = symtab__find(&tab, tab.syms[0].start + i * 0x40);
			if (!s)
				continue;
			/* names within the text, NUL-terminated, displayed as "name [module]" */
			if (!s->name || s->name < text || s->name >= text + size + 1 ||
			    kallsyms__names(s, strs, &name, &module) ||
			    strncmp(name, s->name, strlen(s->name)) || !module != !s->module)
				abort();
		}
		symtab__free(&tab);
	}
cleanup:
	free(text);
	strset__free(strs);
	return 0;
}
