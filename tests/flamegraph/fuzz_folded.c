// SPDX-License-Identifier: MIT
/*
 * tests/flamegraph: libFuzzer target for the folded reader (plain, gzip and zstd streams
 * through folded_input__open()), the SVG and HTML writers and the diff. The input after its first
 * byte is a file (held in a memfd); the first byte picks what reads it and the options:
 *   bits 0-1  0, 1: flamegraph__read() then the HTML page and the SVG; 2: the diff of
 *             the file with itself read twice (folded_diff), its text, top report,
 *             HTML page and SVG; 3: both
 *   bit 2     reverse (graph) / normalize (diff)
 *   bit 3     inverted (graph) / strip_hex (diff)
 *   bit 4     flamechart
 *   bit 5     hash colours, palette java
 *   bits 6-7  minwidth 0, 0.1, 1 px, 0.5 %
 */
#include <errno.h>

#include "../fuzz/fuzz.h"
#include "flamegraph.h"

static FILE *sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

static void graph(const char *path, uint8_t sel)
{
	static const double minw[] = {0, 0.1, 1, 0.5};
	struct flamegraph_opts o;
	struct flamegraph *fg = NULL;
	FILE *in = NULL;

	flamegraph_opts__init(&o);
	o.reverse = sel & 4;
	o.inverted = sel & 8;
	o.flamechart = sel & 16;
	o.hash = sel & 32;
	if (sel & 32)
		o.colors = FG_PAL_JAVA;
	o.minwidth = minw[sel >> 6];
	o.minwidth_percent = (sel >> 6) == 3;
	fg = flamegraph__new(&o);
	if (!fg || folded_input__open(path, &in))
		goto cleanup;
	if (flamegraph__read(fg, in, "fuzz") || ferror(in))
		goto cleanup;
	flamegraph__write_html(fg, NULL, sink());
	flamegraph__write_svg(fg, sink());
cleanup:
	if (in)
		fclose(in);
	flamegraph__free(fg);
}

static void diff(const char *path, uint8_t sel)
{
	struct folded_diff_opts o = {.sz = sizeof(o), .normalize = sel & 4, .strip_hex = sel & 8};
	struct folded_diff *d = folded_diff__new(&o);
	struct flamegraph *fg = NULL;
	FILE *in = NULL;
	int side;

	if (!d)
		return;
	for (side = FOLDED_BEFORE; side <= FOLDED_AFTER; side++) {
		if (folded_input__open(path, &in))
			goto cleanup;
		if (folded_diff__read(d, side, in, side ? "after" : "before") || ferror(in))
			goto cleanup;
		fclose(in);
		in = NULL;
	}
	if (folded_diff__finish(d))
		goto cleanup;
	folded_diff__write(d, sink());
	folded_diff__write_top(d, 5, sink());
	fg = flamegraph__new(NULL);
	if (fg && !flamegraph__add_diff(fg, d)) {
		flamegraph__write_html(fg, NULL, sink());
		flamegraph__write_svg(fg, sink());
	}
cleanup:
	if (in)
		fclose(in);
	flamegraph__free(fg);
	folded_diff__free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];

	if (!size)
		return 0;
	fuzz__init_log();
	fuzz__memfd("fuzz-folded", data + 1, size - 1, path, sizeof(path));
	if ((data[0] & 3) != 2)
		graph(path, data[0]);
	if (data[0] & 2)
		diff(path, data[0]);
	return 0;
}
