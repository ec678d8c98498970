// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: libFuzzer target for the parsers of untrusted input. The first byte
 * picks the parser: /proc/PID/maps text, kallsyms text, or an ELF image.
 */
#include <stdlib.h>

#include "symbolize-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strset *strs = strset__new();
	struct map_entry *ents;
	struct elf_file *f;
	struct symtab tab;
	size_t nr, bad, i;
	uint64_t vaddr;
	bool nonzero;

	if (!strs || !size)
		goto cleanup;
	switch (data[0] % 3) {
	case 0:
		if (!maps__parse((const char *)data + 1, size - 1, strs, &ents, &nr, &bad))
			free(ents);
		break;
	case 1:
		if (!kallsyms__parse((const char *)data + 1, size - 1, strs, &tab, &nonzero)) {
			for (i = 0; i < 64 && tab.nr; i++)
				symtab__find(&tab, tab.syms[0].start + i * 0x40);
			symtab__free(&tab);
		}
		break;
	default:
		f = elf_file__parse(-1, data + 1, size - 1, strs, "fuzz");
		if (!f)
			break;
		for (i = 0; i < size; i += 16)
			if (elf_file__offset_to_vaddr(f, i, &vaddr))
				symtab__find(&f->tab, vaddr);
		elf_file__free(f);
		break;
	}
cleanup:
	strset__free(strs);
	return 0;
}
