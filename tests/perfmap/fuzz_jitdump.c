// SPDX-License-Identifier: MIT
/*
 * tests/perfmap: libFuzzer target for the jitdump parser. The first byte says how the input
 * is cut into reads, so records split across reads and records larger than the buffer are
 * exercised the way a growing file feeds them; then the index is built and searched.
 */
#include "../fuzz/fuzz.h"
#include "fuzz_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmaps_stats st = {0};
	struct pm_index ix = {0};
	struct pm_jd_state js = {0};
	struct strset *strs = NULL;
	struct pm_sink sink = {.ix = &ix, .st = &st};
	size_t step, off = 0, end, need;
	uint64_t n;
	int err = 0;

	if (size < 1)
		return 0;
	fuzz__init_log();
	strs = strset__new();
	if (!strs)
		goto cleanup;
	sink.strs = strs;
	step = 1 + data[0] % 64;
	data++;
	size--;
	for (end = MIN(step, size);; end = MIN(end + step, size)) {
		n = pm_jd__parse(&js, data + off, end - off, size - off, &need, &sink, &err);
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
	fuzz__check_index(&ix);
cleanup:
	pm_jd__reset(&js);
	pm_index__free(&ix);
	strset__free(strs);
	return 0;
}
