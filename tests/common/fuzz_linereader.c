// SPDX-License-Identifier: MIT
/*
 * tests/common: libFuzzer target for the bounded line reader. The first byte is the cap
 * (1..256 bytes, so over-long lines are common); the rest is the input. Every line read
 * must be what splitting the input at its newlines gives, in order, with the lines over
 * the cap counted instead, and the buffer must stay within the cap plus one chunk.
 */
#include <string.h>

#include "../fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct line_reader lr;
	size_t max, len, off = 0, skipped = 0;
	FILE *in;
	char *line;
	int r;

	fuzz__init_log();
	if (!size)
		return 0;
	max = (size_t)data[0] + 1;
	data++;
	size--;
	in = fmemopen(size ? (void *)data : (void *)"", size ? size : 1, "r");
	if (!in)
		abort();
	if (!size)
		getc(in); /* an empty stream */
	line_reader__init(&lr, in, max);
	while ((r = line_reader__next(&lr, &line, &len)) > 0) {
		/* the reference: the next fragment of the input no longer than the cap */
		for (;;) {
			const uint8_t *nl = memchr(data + off, '\n', size - off);
			size_t n = nl ? (size_t)(nl - (data + off)) : size - off;

			if (off >= size)
				abort(); /* a line the input does not have */
			if (n > max) {
				skipped++;
				off += n + 1;
				continue;
			}
			if (len != n || memcmp(line, data + off, n) || line[len])
				abort();
			off += n + 1;
			break;
		}
		if (lr.cap > max + (64u << 10) + 1)
			abort();
	}
	if (r)
		abort();
	while (off < size) { /* what is left must all be over the cap */
		const uint8_t *nl = memchr(data + off, '\n', size - off);
		size_t n = nl ? (size_t)(nl - (data + off)) : size - off;

		if (n <= max && (nl || n))
			abort();
		skipped += n > max;
		off += n + 1;
	}
	if (skipped != lr.skipped)
		abort();
	line_reader__free(&lr);
	fclose(in);
	return 0;
}
