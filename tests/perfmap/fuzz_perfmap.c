// SPDX-License-Identifier: MIT
/*
 * tests/perfmap: libFuzzer target for both parsers of untrusted input. The first byte picks
 * the parser (perf-map text or jitdump) and, with the second, how the input is cut into
 * reads, so the streaming paths (partial lines and records, skipped long lines, records
 * larger than the buffer) are exercised the way a growing file feeds them.
 */
#include <stdlib.h>

#include "perfmap-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmaps_stats st = {0};
	struct pm_index ix = {0};
	struct pm_text_state ts = {0};
	struct pm_jd_state js = {0};
	struct strset *strs = strset__new();
	struct pm_sink sink = {.ix = &ix, .strs = strs, .st = &st};
	size_t step, off = 0, end, need, i;
	uint64_t n;
	int err = 0;

	if (!strs || size < 2)
		goto cleanup;
	step = 1 + data[1] % 64;
	data += 2;
	size -= 2;
	if (data[-2] & 1) {
		/* feed growing prefixes like a file read between refreshes */
		for (end = MIN(step, size);; end = MIN(end + step, size)) {
			n = pm_text__parse(&ts, (const char *)data + off, end - off, false, &sink,
					   &err);
			if (err)
				goto cleanup;
			off += n;
			if (end == size)
				break;
		}
		if (off < size && !ts.skipping)
			pm_text__parse(&ts, (const char *)data + off, size - off, true, &sink,
				       &err);
	} else {
		for (end = MIN(step, size);; end = MIN(end + step, size)) {
			n = pm_jd__parse(&js, data + off, end - off, size - off, &need, &sink,
					 &err);
			if (err)
				goto cleanup;
			off += n;
			if (off >= size || js.broken || js.closed)
				break;
			if (end < off)
				end = off;
			if (end == size && !n)
				break;
		}
	}
	if (pm_index__build(&ix))
		goto cleanup;
	for (i = 0; i < ix.nr && i < 64; i++) {
		const struct pm_entry *e = pm_index__find(&ix, ix.ents[i].start);

		if (!e || ix.ents[i].start < e->start || ix.ents[i].start >= e->end)
			abort(); /* every entry's start is covered by some entry */
		pm_index__find_at(&ix, ix.ents[i].end - 1, ix.ents[i].ts);
	}
cleanup:
	pm_jd__reset(&js);
	pm_index__free(&ix);
	strset__free(strs);
	return 0;
}
