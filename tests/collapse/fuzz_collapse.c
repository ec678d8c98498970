// SPDX-License-Identifier: MIT
/* tests/collapse: libFuzzer target for the perf script and bpftrace readers. */
#include "../fuzz/fuzz.h"
#include "flamegraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {NULL, "ustack", "kstack,comm", "a,ustack,kstack,b"};
	struct collapse_opts o = {.sz = sizeof(o)};
	static FILE *sink;
	struct collapser *c;
	FILE *in;

	if (!size)
		return 0;
	if (!sink)
		sink = fopen("/dev/null", "w");
	fuzz__init_log();
	/* the first byte chooses the options */
	o.format = data[0] % 3;
	o.pid = data[0] & 4;
	o.tid = data[0] & 8;
	o.annotate_kernel = o.annotate_jit = data[0] & 16;
	o.addrs = data[0] & 32;
	o.bpftrace_keys = keys[data[0] >> 6];
	c = collapser__new(&o);
	in = fmemopen((void *)(data + 1), size - 1 ? size - 1 : 1, "r");
	if (c && in && size > 1 && !collapser__read(c, in, "fuzz") && sink)
		folded__write(collapser__folded(c), sink);
	if (in)
		fclose(in);
	collapser__free(c);
	return 0;
}
