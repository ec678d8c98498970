/* SPDX-License-Identifier: MIT */
/*
 * symbolize: the DWARF index's structures, shared by dwarf.c (the index: units read,
 * ranges and lines, lookups) and dwarf-sections.c (compressed debug sections
 * decompressed or read back from the debug cache, unused ones dropped).
 */
#ifndef SCORCH_DWARF_PRIVATE_H
#define SCORCH_DWARF_PRIVATE_H

#include <gelf.h>
#include <libelf.h>
#include <elfutils/libdw.h>

#include "symbolize-private.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* Bounds on what one (untrusted) debug file may make us hold. */
#define DW_MAX_SCOPES	     (8u << 20)
#define DW_MAX_SEGS	     (32u << 20)
#define DW_MAX_LINES	     (64u << 20)
#define DW_MAX_DEPTH	     256	  /* DIE nesting followed */
#define DW_MAX_INFLATE_SIZE  (1ull << 32) /* decompressed section */
#define DW_MAX_INFLATE_RATIO 1024	  /* decompressed / compressed bytes */
#define DW_MAX_STR_SECS	     64		  /* .debug sections whose strings are bounds-checked */

/* A function, or one inlined instance of a function inside another. */
struct dw_scope {
	const char *name;      /* linkage name if any (demangled at lookup), else DW_AT_name */
	const char *call_file; /* inlined: the file of the call site in the parent */
	uint64_t entry;	       /* entry address: DW_AT_entry_pc, low_pc, or the first range */
	uint64_t low;	       /* lowest address (a .cold part may lie below the entry) */
	uint32_t call_line;
	uint32_t parent; /* index + 1 of the enclosing scope; 0 for a function */
};

/* Disjoint address ranges, each naming its innermost scope. */
struct dw_seg {
	uint64_t lo, hi;
	uint32_t scope;
};

struct dw_line {
	uint64_t addr;
	uint32_t file; /* index into files[]; UINT32_MAX: end of a sequence */
	uint32_t line;
};

/*
 * A compile unit, read into the index on the first lookup inside it: its segments and
 * line rows are the slices [seg_lo, seg_hi) of segs[] and [line_lo, line_hi) of lines[].
 */
struct dw_unit {
	Dwarf_Off die; /* the unit's DIE in .debug_info */
	size_t seg_lo, seg_hi;
	size_t line_lo, line_hi;
	bool read;
};

/* An address range of a unit's DIE (DW_AT_ranges, or low_pc..high_pc). */
struct dw_span {
	uint64_t lo, hi;
	uint64_t max_hi; /* the highest hi of this span and those sorted before it */
	uint32_t unit;
};

/* A string section's bounds, as libdw reads it: see dw_string() */
struct dw_sec {
	const char *lo, *hi;
};

struct dwarf_index {
	struct strset *strs; /* names and file paths of this index only */
	struct dw_scope *scopes;
	size_t nr_scopes, cap_scopes;
	struct dw_seg *segs; /* sorted within each unit's slice */
	size_t nr_segs, cap_segs;
	struct dw_line *lines; /* sorted within each unit's slice */
	size_t nr_lines, cap_lines;
	const char **files;
	size_t nr_files, cap_files;
	/* units with address ranges, read when first looked up */
	struct dw_unit *units;
	size_t nr_units, cap_units, units_read;
	struct dw_span *spans; /* by lo */
	size_t nr_spans, cap_spans;
	/* units whose DIE gives no range (partial units, odd producers): read at build */
	struct dw_unit rest;
	/* kept open for the units not read yet */
	Elf *elf;
	Dwarf *dw;
	void **bufs; /* sections decompressed here: libdw points into them */
	size_t nr_bufs;
	struct dw_cache_map map; /* or the debug cache's entry of them, mapped */
	struct dw_sec secs[DW_MAX_STR_SECS];
	size_t nr_secs;
	const char *what; /* for messages (interned) */
	bool lines_wanted;
	bool bad;	/* something did not parse: counted, the rest is kept */
	bool truncated; /* a bound was hit: warned once */
};

/* A range while a unit is read: nesting is resolved by sorting and a sweep. */
struct dw_range {
	uint64_t lo, hi;
	uint32_t scope, depth;
};

struct dw_build {
	struct dwarf_index *idx;
	struct dw_range *ranges;
	size_t nr_ranges, cap_ranges;
	size_t line_lo;	    /* the first row of the unit being read */
	Dwarf_Files *files; /* the current CU's file table */
	size_t nr_cu_files;
	bool bad; /* something did not parse: counted, the rest is kept */
};

/* Room for one element more in @arr (@nr used of @cap): 0, -E2BIG at @max, or -ENOMEM. */
#define GROW(arr, nr, cap, max)                                                                    \
	((nr) >= (max) ? -E2BIG : array__grow((void **)&(arr), &(cap), (nr) + 1, sizeof(*(arr))))

/* A compressed debug section the index will read (SHF_COMPRESSED, zlib or zstd). */
struct dw_zsec {
	Elf_Scn *scn;
	Elf_Data *data; /* what libdw will get from elf_getdata(): replaced in place */
	GElf_Shdr sh;
	GElf_Chdr ch;
	const char *src; /* the compressed stream (after the Chdr) */
	size_t src_len;
};

/*
 * Between dw_sections__inflate() and units_list(): the sections just decompressed, to be
 * stored in the debug cache with the unit list once it is made, or the unit list the
 * cache had (struct dw_units_hdr).
 */
struct dw_cached {
	uint8_t id[BUILD_ID_MAX];
	size_t id_len, n;
	struct dw_cache_sec cs[DW_CACHE_MAX_SECS];
	struct dw_cache *cache;
	bool store;	   /* decompressed now, all of them: stored after the listing */
	const void *units; /* from the cache (in idx->map), or NULL */
	uint64_t units_len;
};

/*
 * The unit list kept in a cache entry after the sections: this header, the units' DIE
 * offsets (u64, in units[] order), the address spans (struct dw_units_span, sorted as
 * span_cmp() sorts), and the DIE offsets of the units read at build (idx->rest's).
 */
#define DW_UNITS_MAGIC 0x53554e31u /* "1NUS" */
struct dw_units_hdr {
	uint32_t magic;
	uint32_t nr_units, nr_spans, nr_rest;
};
struct dw_units_span {
	uint64_t lo, hi;
	uint32_t unit, pad;
};

/*
 * libdw 0.188 decompresses every zlib section it knows when the file is opened and
 * cannot read zstd ones: dw_sections__drop_unused() hides the debug sections the index
 * does not read (@lines: the line tables are read), then dw_sections__inflate()
 * decompresses the SHF_COMPRESSED ones left, or reads them back from @cache, and hands
 * them to libdw in place. 0 or -errno.
 */
void dw_sections__drop_unused(Elf *elf, bool lines);
int dw_sections__inflate(struct dwarf_index *idx, struct dw_cache *cache, const char *what,
			 struct dw_cached *dc);

#endif /* SCORCH_DWARF_PRIVATE_H */
