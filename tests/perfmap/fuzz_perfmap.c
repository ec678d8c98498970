// SPDX-License-Identifier: MIT
/*
 * tests/perfmap: libFuzzer target for the perf-PID.map text parser. The first byte says how
 * the input is cut into reads, so the streaming paths (partial lines, skipped long lines)
 * are exercised the way a growing file feeds them; then the index is built and searched.
 */
#include "../fuzz/fuzz.h"
#include "fuzz_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmaps_stats st = {0};
	struct pm_index ix = {0};
	struct pm_text_state ts = {0};
	struct strset *strs = NULL;
	struct pm_sink sink = {.ix = &ix, .st = &st};
	size_t step, off = 0, end;
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
	/* feed growing prefixes like a file read between refreshes */
	for (end = MIN(step, size);; end = MIN(end + step, size)) {
		n = pm_text__parse(&ts, (const char *)data + off, end - off, false, &sink, &err);
		if (err)
			goto cleanup;
		off += n;
		if (end == size)
			break;
	}
	if (off < size && !ts.skipping)
		pm_text__parse(&ts, (const char *)data + off, size - off, true, &sink, &err);
	fuzz__check_index(&ix);
cleanup:
	pm_index__free(&ix);
	strset__free(strs);
	return 0;
}
