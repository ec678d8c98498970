// SPDX-License-Identifier: MIT
/* tests/capture: libFuzzer target for the capture reader (every record type decoded). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* what the reader hands out is read into this, so it cannot be optimized away */
static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capture_reader *r = capture_reader__new(data, size);
	struct capture_record rec;

	if (!r)
		return 0;
	while (capture_reader__next(r, &rec) == 1) {
		/* touch what the reader hands out: lengths it vouched for */
		if (rec.type == CAPTURE_COUNT) {
			for (uint32_t i = 0; i < rec.count.nr_user; i++)
				sink += rec.count.user[i];
			for (uint32_t i = 0; i < rec.count.nr_kernel; i++)
				sink += rec.count.kernel[i];
		} else if (rec.type == CAPTURE_MAPPING) {
			sink += strlen(rec.map.path);
			for (size_t i = 0; i < rec.map.build_id_len; i++)
				sink += rec.map.build_id[i];
		} else if (rec.type == CAPTURE_META) {
			sink += strlen(rec.meta.host) + strlen(rec.meta.clock);
		}
	}
	sink += strlen(capture_reader__error(r));
	capture_reader__free(r);
	return 0;
}
