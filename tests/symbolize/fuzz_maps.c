// SPDX-License-Identifier: MIT
/* tests/symbolize: libFuzzer target for the /proc/PID/maps parser. */
#include "../fuzz/fuzz.h"
#include "symbolize-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strset *strs;
	struct map_entry *ents = NULL;
	size_t nr = 0, bad = 0, i;

	fuzz__init_log();
	strs = strset__new();
	if (!strs)
		return 0;
	if (!maps__parse((const char *)data, size, strs, &ents, &nr, &bad)) {
		for (i = 0; i < nr; i++)
			if (ents[i].start > ents[i].end || !ents[i].path)
				abort(); /* the parser promises well-formed entries */
		free(ents);
	}
	strset__free(strs);
	return 0;
}
