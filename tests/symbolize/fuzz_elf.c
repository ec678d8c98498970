// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: libFuzzer target for the ELF/DWARF front of the symbolizer, on corrupted
 * ELF files. The input is an ELF image (seeds: small real binaries built by
 * tests/symbolize/CMakeLists.txt with -g, compressed debug sections, .gnu_debuglink, with
 * and without a build-id). It goes through both ways the symbolizer reads files:
 *   - elf_file__parse() on the image in memory (as for the vDSO), then the PT_LOAD
 *     translation and the symbol table;
 *   - a memfd opened by path with symbolizer__elf(), which parses it again through libelf
 *     on the descriptor and indexes its DWARF (functions, inline chains, lines, zlib and
 *     zstd sections), looked up at the symbols found above and at fixed addresses.
 * The memfd also goes through the probe side: symbolize__functions() and
 * symbolize__usdt_notes() (record --event, list-events).
 * Separate debug files are looked for in an empty directory (and, for a debuglink, in "/"
 * where the memfd appears to live: the regular files there never match the CRC).
 */
#include <stdlib.h>
#include <unistd.h>

#include "../fuzz/fuzz.h"
#include "symbolize-private.h"

#define NR_ADDRS 24

static char debug_dir[] = "/tmp/scorch-fuzz-elf-XXXXXX";

static void debug_root_remove(void)
{
	rmdir(debug_dir);
}

static const char *debug_root(void)
{
	static bool made;

	if (!made) {
		if (!mkdtemp(debug_dir))
			abort();
		atexit(debug_root_remove); /* libFuzzer ends with exit() */
		made = true;
	}
	return debug_dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbolizer_opts o = {.sz = sizeof(o), .no_kernel = true, .lines = true};
	uint64_t addrs[NR_ADDRS], vaddr;
	struct symbolizer *s = NULL;
	struct strset *strs = NULL;
	struct elf_file *f = NULL;
	struct frame fr[8];
	size_t nr = 0, i;
	char path[64];
	int n;

	fuzz__init_log();
	strs = strset__new();
	if (!strs)
		goto cleanup;
	f = elf_file__parse(-1, data, size, strs, "fuzz");
	if (f) {
		for (i = 0; i < size; i += 64)
			if (elf_file__offset_to_vaddr(f, i, &vaddr))
				symtab__find(&f->tab, vaddr);
		/* inside the first symbols, where DWARF has something to say */
		for (i = 0; i < f->tab.nr && nr < NR_ADDRS - 4; i++) {
			addrs[nr++] = f->tab.syms[i].start;
			addrs[nr++] = f->tab.syms[i].start +
				      (f->tab.syms[i].end - f->tab.syms[i].start) / 2;
		}
	}
	/* and where the seeds keep code (PIE, non-PIE), for DWARF without symbols */
	addrs[nr++] = 0x210;
	addrs[nr++] = 0x230;
	addrs[nr++] = 0x400160;
	addrs[nr++] = 0x400180;

	fuzz__memfd("fuzz-elf", data, size, path, sizeof(path));
	if (strs) {
		struct symbolize_func *fns = NULL;
		struct symbolize_usdt *notes = NULL;
		size_t nr_fns = 0, nr_notes = 0;

		if (!symbolize__functions(path, strs, &fns, &nr_fns))
			for (i = 0; i < nr_fns; i++)
				if (!fns[i].name || (fns[i].demangled && !fns[i].short_name))
					abort(); /* the contract: every function named */
		if (!symbolize__usdt_notes(path, strs, &notes, &nr_notes))
			for (i = 0; i < nr_notes; i++)
				if (!notes[i].provider || !notes[i].name)
					abort();
		free(fns);
		free(notes);
	}
	o.debug_root = debug_root();
	s = symbolizer__new(&o);
	if (!s)
		goto cleanup;
	for (i = 0; i < nr; i++) {
		n = symbolizer__elf(s, path, addrs[i], i & 1, fr, 8);
		if (n < 0)
			break; /* not an ELF file: every lookup says the same */
		if (n == 0 || n > 8 || !fr[0].name || !fr[n - 1].name)
			abort(); /* the contract: 1..cap frames, every one named */
	}
cleanup:
	symbolizer__free(s);
	elf_file__free(f);
	strset__free(strs);
	return 0;
}
