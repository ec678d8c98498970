/* SPDX-License-Identifier: MIT */
/* tests/perfmap: what the fuzz targets check of the index their parser filled. */
#ifndef SCORCH_TEST_FUZZ_INDEX_H
#define SCORCH_TEST_FUZZ_INDEX_H

#include <stdlib.h>

#include "perfmap-private.h"

static inline void fuzz__check_index(struct pm_index *ix)
{
	size_t i;

	if (pm_index__build(ix))
		return;
	for (i = 0; i < ix->nr && i < 64; i++) {
		const struct pm_entry *e = pm_index__find(ix, ix->ents[i].start);

		if (!e || ix->ents[i].start < e->start || ix->ents[i].start >= e->end)
			abort(); /* every entry's start is covered by some entry */
		pm_index__find_at(ix, ix->ents[i].end - 1, ix->ents[i].ts);
	}
}

#endif /* SCORCH_TEST_FUZZ_INDEX_H */
