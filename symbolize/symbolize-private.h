/* SPDX-License-Identifier: MIT */
/* symbolize: internals shared by the symbolizer's source files and its unit tests. */
#ifndef SCORCH_SYMBOLIZE_PRIVATE_H
#define SCORCH_SYMBOLIZE_PRIVATE_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "common.h"
#include "symbolize.h"

/* Upper bounds on what untrusted inputs may make us hold. */
#define MAPS_MAX_BYTES	   (64u << 20)	/* /proc/PID/maps */
#define KALLSYMS_MAX_BYTES (256u << 20) /* /proc/kallsyms */
#define ELF_MAX_SYMS	   (16u << 20)	/* symbols kept per ELF file */
#define ELF_MAX_LOADS	   64		/* PT_LOAD headers kept per ELF file */
#define BUILD_ID_MAX	   40		/* longer build-ids are ignored for identity */

/*
 * Sorted symbol tables (kernel and ELF share the lookup). [start, end) is the range the
 * symbol covers; name is interned; module is the kernel module (interned) or NULL. A
 * table from kallsyms__parse() holds names within its text instead, not interned.
 */
struct sym {
	uint64_t start, end;
	const char *name;
	const char *module;
};

struct symtab {
	struct sym *syms;
	size_t nr;
};

/*
 * One candidate while a table is built. @end 0: unsized, extends to the next symbol's
 * start but never past @limit. @rank orders aliases at one address (lower wins), then
 * input order (@idx) keeps the choice deterministic.
 */
struct sym_raw {
	uint64_t start, end, limit;
	const char *name;
	const char *module;
	uint32_t rank;
	uint32_t idx;
};

/* The rank of a name no table gave (func@plt): any real symbol at its address wins. */
#define SYM_RANK_SYNTHETIC (1u << 31)

/*
 * The rank (struct sym_raw.rank) of an ELF symbol of @size bytes, type @type (STT_*) and
 * binding @bind (STB_*) named @name (as the table has it, version included) among the
 * aliases at its address: perf's order (choose_best_symbol() in
 * tools/perf/util/symbol.c), so a frame is named as perf names it. See symtab.c. Below
 * SYM_RANK_SYNTHETIC.
 */
uint32_t symtab__elf_rank(uint64_t size, int type, int bind, const char *name);

/*
 * plt.c: a symbol "func@plt" per PLT stub (.plt, .plt.sec, .plt.got) whose GOT slot a
 * relocation names, appended to *@raw (grown as needed; *@nr, *@cap updated); the
 * symbols already in *@raw name IRELATIVE slots by their resolver. x86-64 only, a no-op
 * elsewhere. Returns 0 or -ENOMEM.
 */
int plt__collect(Elf *elf, const GElf_Ehdr *ehdr, struct strset *strs, struct sym_raw **raw,
		 size_t *nr, size_t *cap);

/*
 * Sorts @raw (modified in place), merges aliases and fills @tab (malloc'ed array owned by
 * the caller, freed with symtab__free). Returns 0 or -ENOMEM.
 */
int symtab__build(struct symtab *tab, struct sym_raw *raw, size_t nr);
void symtab__free(struct symtab *tab);
/* The symbol covering @addr, or NULL. No allocation; O(log n). */
const struct sym *symtab__find(const struct symtab *tab, uint64_t addr);

/* ---- /proc/PID/maps ---- */

enum {
	MAP_PERM_R = 1 << 0,
	MAP_PERM_W = 1 << 1,
	MAP_PERM_X = 1 << 2,
	MAP_PERM_SHARED = 1 << 3,
};

/* what the kernel appends to the path of a file deleted since it was mapped */
#define DELETED_SUFFIX " (deleted)"

/* Does @path[0..*@len) end in DELETED_SUFFIX? If so *@len drops it. */
static inline bool path__strip_deleted(const char *path, size_t *len)
{
	size_t n = sizeof(DELETED_SUFFIX) - 1;

	if (*len <= n || memcmp(path + *len - n, DELETED_SUFFIX, n))
		return false;
	*len -= n;
	return true;
}

struct map_entry {
	uint64_t start, end, pgoff;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t perms;	  /* MAP_PERM_* */
	const char *path; /* interned, " (deleted)" stripped; "" for anonymous mappings */
	bool deleted;
};

/*
 * Parses the text of a /proc/PID/maps file (@text[0..len), need not be NUL-terminated).
 * Every well-formed line becomes an entry, in input order; malformed lines are skipped
 * and counted in *@bad. On success *@out is a malloc'ed array owned by the caller (NULL
 * when *@nr is 0) and 0 is returned; -ENOMEM otherwise (nothing returned).
 */
int maps__parse(const char *text, size_t len, struct strset *strs, struct map_entry **out,
		size_t *nr, size_t *bad);

/* ---- ELF files ---- */

struct load_seg {
	uint64_t offset, filesz, vaddr;
};

/* A parsed ELF file, shared by every mapping of it in every process. */
struct elf_file {
	struct elf_file *next; /* list of every file the symbolizer owns */
	/* mappings using it; at 0 it joins the symbolizer's unused list (symbolize.c) */
	size_t refs;
	struct elf_file *unused_prev, *unused_next;
	bool on_unused;
	bool evicted; /* tables dropped while unused: parsed again on next use */
	/* headers read, symbol tables not yet (elf_file__parse_headers): tab is empty, full,
	 * own_dwarf and debuglink unknown until elf_file__load_syms() */
	bool syms_pending;
	struct symtab tab;
	struct load_seg *segs;
	size_t nr_segs;
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;
	bool bad;  /* could not be parsed: every address is "[basename]" */
	bool full; /* symbols from .symtab (else .dynsym, or none) */
	/* debug information, found and indexed on the first lookup that needs it */
	const char *path;      /* interned: where it was first seen (debuglink directory) */
	const char *debuglink; /* interned .gnu_debuglink file name, or NULL */
	uint32_t debuglink_crc;
	bool own_dwarf; /* has .debug_info itself */
	int fd;		/* held open while syms_pending, and (own_dwarf) until indexed; else -1 */
	/* size and mtime (ns) of fd when held for syms_pending: a file rewritten in place
	 * before its first lookup is not read (its mappings ran the old contents) */
	uint64_t held_size, held_mtime;
	bool dw_tried;
	bool dw_incomplete; /* counted in the stats' dwarf_incomplete */
	struct dwarf_index *dw;
};

/*
 * Parses @fd (an ELF file; read with read(2), never mapped) or, if @fd < 0, the in-memory
 * image @image[0..size) (not modified; must stay valid during the call). @what names it
 * in messages. Returns a new file, or NULL with errno set: ENOMEM, or EINVAL for
 * something that is not a usable ELF file. Bogus tables are bounded, never trusted.
 */
struct elf_file *elf_file__parse(int fd, const void *image, size_t size, struct strset *strs,
				 const char *what);
/*
 * As elf_file__parse(@fd) but reads only the program headers and the build-id (what a
 * mapping needs to translate addresses and be recognised): syms_pending is set, and the
 * symbol tables are read by elf_file__load_syms() when first needed.
 */
struct elf_file *elf_file__parse_headers(int fd, struct strset *strs, const char *what);
/*
 * Reads the symbol tables of @f (its .gnu_debuglink, whether it has DWARF of its own)
 * from @fd, the file elf_file__parse_headers() read, and clears syms_pending. Returns 0,
 * -ENOMEM, or -EINVAL when they cannot be read (@f is then left without any).
 */
int elf_file__load_syms(struct elf_file *f, int fd, struct strset *strs, const char *what);
void elf_file__free(struct elf_file *f);
/* Frees the tables of @f (symbols, segments), keeping its identity; sets f->evicted. */
void elf_file__evict(struct elf_file *f);
/* Moves the tables of @src (fresh from elf_file__parse or _parse_headers) into @dst and
 * frees @src. */
void elf_file__take(struct elf_file *dst, struct elf_file *src);
/*
 * Reads only the GNU build-id of @fd (cheap: program headers and notes), so a file seen
 * under another device/inode is recognised before its tables are parsed. Returns 0 and
 * fills @id/@len (@len 0: no build-id), or -EINVAL for something that is not ELF.
 */
int elf_file__read_build_id(int fd, uint8_t id[BUILD_ID_MAX], size_t *len);
/* The GNU build-id among the notes @data (a PT_NOTE segment or an SHT_NOTE section) into
 * @id: its length, 0 when none (or longer than BUILD_ID_MAX). */
size_t elf__notes_build_id(Elf_Data *data, uint8_t id[BUILD_ID_MAX]);
/*
 * Translates a file offset to the ELF virtual address through the PT_LOAD headers.
 * Returns false when no PT_LOAD segment holds @file_off.
 */
bool elf_file__offset_to_vaddr(const struct elf_file *f, uint64_t file_off, uint64_t *vaddr);

/* ---- DWARF ---- */

struct dwarf_index;

/* One frame of an address's inline chain (strings borrowed from the index). */
struct dw_frame {
	const char *name; /* linkage name (mangled) if the DWARF has one, else the plain name */
	const char *file; /* source file of the line below, or NULL */
	uint32_t line;	  /* 0: unknown */
	uint64_t entry;	  /* entry address of the function or inlined instance (dw_scope) */
	uint64_t low;	  /* its lowest address: its .cold part's, if that lies below */
	bool inlined;
};

/*
 * Decompressed debug sections kept on disk by build-id (dwcache.c: what is trusted and
 * why). Best effort: a cache that cannot be used is no cache.
 */
#define DW_CACHE_MAX_BYTES (1ull << 30) /* all entries; least recently used go first */
#define DW_CACHE_MIN_BYTES (256u << 10) /* files decompressing to less are not kept */
#define DW_CACHE_MAX_SECS  32
#define DW_CACHE_NAME_MAX  32 /* a section's name, NUL included */
struct dw_cache;
struct dw_cache_sec {
	const char *name;
	uint64_t csize; /* compressed bytes in the file (the section's sh_size) */
	uint64_t usize; /* decompressed */
	void *data;	/* usize bytes */
};
/*
 * Opens the cache directory @dir, creating it (mode 0700) if its parent exists. *@out is
 * NULL (no cache) when @dir is NULL or empty, cannot be made or opened, is a symlink,
 * is not owned by the effective user, or is writable by others (warned: the others
 * only in -v). Returns 0, or -ENOMEM.
 */
int dw_cache__open(const char *dir, struct dw_cache **out);
void dw_cache__free(struct dw_cache *c);
/* Another bound than DW_CACHE_MAX_BYTES on all entries (tests). */
void dw_cache__set_max(struct dw_cache *c, uint64_t bytes);
/* An entry mapped by dw_cache__load(): private, writable (copy on write). */
struct dw_cache_map {
	void *base;
	size_t len;
};
/*
 * Points each @secs[i].data into the entry of build-id @id, mapped into *@map (the
 * caller unmaps it with dw_cache__unmap() once done with every section), when the entry
 * holds exactly @secs (names, both sizes, in order) with intact CRCs, and marks it used;
 * *@extra and *@extra_len: the blob stored with them (in the mapping; NULL and 0 when
 * none). Returns 0, -ENOENT (no usable entry, nothing mapped: the caller decompresses,
 * and stores), or -ENOMEM. @what names the file in -v messages.
 */
int dw_cache__load(struct dw_cache *c, const uint8_t *id, size_t id_len, struct dw_cache_sec *secs,
		   size_t n, const char *what, struct dw_cache_map *map, const void **extra,
		   uint64_t *extra_len);
/* Unmaps what dw_cache__load() mapped; a zeroed @map is fine. Leaves @map zeroed. */
void dw_cache__unmap(struct dw_cache_map *map);
/*
 * Writes the entry of @id holding @secs and @extra_len bytes of @extra (the caller's,
 * opaque here, CRC-checked like the sections; NULL: none) in a temporary file renamed
 * into place, then removes the least recently used entries beyond DW_CACHE_MAX_BYTES.
 * Returns 0 or -errno (-EFBIG: over a quarter of the cache).
 */
int dw_cache__store(struct dw_cache *c, const uint8_t *id, size_t id_len,
		    const struct dw_cache_sec *secs, size_t n, const void *extra,
		    uint64_t extra_len);

/*
 * Opens the DWARF of the ELF file @fd as a compact index: function and inlined ranges
 * (nesting resolved into disjoint segments) and the line table. A compile unit is read
 * into it on the first lookup of an address inside the unit's ranges (libc's debug file
 * has 4,000 units; a profile touches a few dozen); units whose DIE gives no range are
 * read now. The index keeps the file's DWARF sections (decompressed) in memory until
 * freed; @fd is not read after the return. Compressed sections (zlib, zstd: libdw 0.188
 * cannot read zstd) are decompressed here, or read back from @cache (NULL: none) when
 * it holds them for the file's build-id; else they are written to it. Returns 0 and *@out (free
 * with dwarf_index__free), -ENOENT when @fd has no DWARF, -EINVAL for something that is not ELF or
 * has a string section (.debug_str, .debug_line_str) not ending in NUL (libdw would read past it),
 * -ENOMEM. Other bogus DWARF gives a partial index (strings checked to end inside their section),
 * never a crash.
 */
int dwarf_index__build(int fd, const char *what, struct dwarf_index **out);
/*
 * The same, with the line table (and the call sites' files) only when @lines: an index
 * without them still names functions and inline chains, with file NULL and line 0.
 */
int dwarf_index__build_lines(int fd, const char *what, bool lines, struct dw_cache *cache,
			     struct dwarf_index **out);
void dwarf_index__free(struct dwarf_index *idx);
size_t dwarf_index__bytes(const struct dwarf_index *idx);
/* How many of the units read on demand have been read, of how many. */
void dwarf_index__units(const struct dwarf_index *idx, size_t *read, size_t *total);
/*
 * Whether a part of the DWARF read so far did not parse, or a bound truncated the index:
 * lookups there may lack inlined frames or fall back to symbols. Units are read on
 * demand, so a lookup can turn it true after the build.
 */
bool dwarf_index__incomplete(const struct dwarf_index *idx);
/*
 * The inline chain at @addr (ELF virtual address), outermost (the function) first, at
 * most @cap frames (beyond: the function and the innermost cap - 1). Returns how many;
 * 0 when no function covers @addr (out[0].file/line may still hold a line); -ENOMEM
 * when the unit holding @addr could not be read. Reads that unit on first use; the
 * strings returned live as long as the index.
 */
int dwarf_index__lookup(struct dwarf_index *idx, uint64_t addr, struct dw_frame *out, size_t cap);
/* True when @fd is an ELF file with a (possibly compressed) .debug_info of its own. */
bool dwarf__has_debug_info(int fd);

/*
 * Finds the separate debug file of @f as gdb does and opens it (O_RDONLY, no symlink
 * followed): @root/.build-id/xx/rest.debug, then .gnu_debuglink in the directory of
 * @f->path, its .debug/ and @root/<dir>/ (CRC checked). A candidate whose build-id
 * differs from @f's is rejected. Returns fd, or -ENOENT.
 */
int debuginfo__open(const struct elf_file *f, const char *root);

/*
 * Demangles @name (C++ Itanium, Rust legacy and v0, D). @params: keep parameter lists.
 * Returns a malloc'ed string or NULL (not mangled, or not understood).
 */
char *demangle__name(const char *name, bool params);

/* ---- kernel symbols ---- */

/*
 * Parses kallsyms text into @tab: text symbols only. @text[0..len] (len + 1 bytes: the
 * last line may end at text[len]) is modified: each symbol's name and module are
 * NUL-terminated in place, and @tab points into it (not interned: 122,000 lines interned
 * took half the parse), so @text must outlive @tab. kallsyms__names() gives a symbol's
 * interned names. *@nonzero tells whether any address was non-zero (false: hidden by
 * kptr_restrict). Returns 0 or -ENOMEM. Malformed lines are skipped.
 */
int kallsyms__parse(char *text, size_t len, struct symtab *tab, bool *nonzero);
/*
 * Sets @addrs[i] to the address of the first text symbol of kallsyms text @text[0..len]
 * (modified as by kallsyms__parse()) named @names[i], or leaves it 0 (the caller zeroes
 * it). Returns 0 or -ENOMEM.
 */
int kallsyms__addrs(char *text, size_t len, const char *const *names, size_t n, uint64_t *addrs);
/*
 * The display name of @sym (of a table from kallsyms__parse()), "name" or "name [module]",
 * and its module (or NULL), interned in @strs. Returns 0 or -ENOMEM.
 */
int kallsyms__names(const struct sym *sym, struct strset *strs, const char **name,
		    const char **module);

#endif /* SCORCH_SYMBOLIZE_PRIVATE_H */
