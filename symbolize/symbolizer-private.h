/* SPDX-License-Identifier: MIT */
/*
 * symbolize: the symbolizer's own structures, shared by its files:
 *   symbolize.c  creation, the process and file tables, files opened and parsed
 *   snapshot.c   process images: their mappings from /proc, the kernel's records, a parent
 *   lookup.c     names: addresses to frames (ELF symbols, DWARF, JIT, kernel)
 *   import.c     captures: process images exported and imported, kernel symbols as a list
 */
#ifndef SCORCH_SYMBOLIZER_PRIVATE_H
#define SCORCH_SYMBOLIZER_PRIVATE_H

#include <sys/stat.h>

#include "symbolize-private.h"

enum file_key_kind {
	KEY_DEVINO = 1, /* st_dev, st_ino, st_size, st_mtime of an opened file */
	KEY_BUILDID,	/* GNU build-id */
	KEY_FAILED,	/* maps dev + inode + path that could not be opened: count once */
};

/* Compared with memcmp: always built from a zeroed struct. */
struct file_key {
	uint32_t kind;
	uint32_t len;
	uint64_t v[4];
	uint8_t id[BUILD_ID_MAX];
};

struct file_slot {
	struct file_key key;
	struct elf_file *file; /* NULL for KEY_FAILED */
};

struct file_index {
	struct file_slot *v; /* in order of arrival */
	size_t nr, cap;
	struct hashmap index; /* key -> index in v[] + 1 */
};

/*
 * What a mapping is, told by this and never by its name: a file named "jit" is shown as
 * "[jit]" too, and the interned strings of both are one pointer.
 */
enum proc_map_kind {
	PROC_MAP_PSEUDO = 0, /* "[heap]", "[stack]", "anon_inode:...": a name, no file */
	PROC_MAP_FILE,	     /* a file (maybe unreadable) */
	PROC_MAP_ANON,	     /* anonymous executable memory, shown as "[jit]" */
	PROC_MAP_VDSO,	     /* the kernel's vDSO */
};

struct proc_map {
	uint64_t start, end, pgoff;
	const char *name;      /* frame name without a symbol: "[libc.so.6]", "[jit]", "[heap]" */
	const char *path;      /* frame module: the file path, "[vdso]"; NULL otherwise */
	struct elf_file *file; /* symbols, or NULL */
	uint64_t inode;	       /* as maps said, to reuse files on refresh */
	enum proc_map_kind kind;
};

struct proc {
	pid_t pid;
	uint64_t gen;	     /* caller-chosen generation: (pid, gen) names one process image */
	uint64_t start_time; /* /proc/PID/stat starttime, 0 unknown: tells PID reuse apart */
	bool miss_refreshed; /* a lookup outside every mapping re-read the maps once */
	struct proc_map *maps;
	size_t nr_maps;
};

/*
 * Descriptors held: files whose symbol tables wait for their first lookup, and files with
 * DWARF of their own until indexed. Beyond this, both are read at once.
 */
#define HELD_FDS_MAX 256
/* Inline frames asked of the index per lookup. */
#define CHAIN_MAX 64

struct symbolizer {
	struct strset *strs;
	const char *kallsyms_path; /* interned */
	const char *debug_root;	   /* interned */
	bool no_kernel, no_demangle, keep_params, lines, no_inline, no_dwarf, offline;
	const char *symfs;	/* interned, or NULL */
	const char *cache_dir;	/* interned, or NULL */
	struct dw_cache *cache; /* opened at the first DWARF index (cache_tried) */
	bool cache_tried;
	symbolizer_jit_fn jit_lookup;
	void *jit_ctx;
	struct hashmap names; /* interned raw name (hash__u64) -> interned display name */
	size_t held_fds;
	const char *elf_path; /* symbolizer__elf: the last path asked, and its file */
	struct elf_file *elf_file;
	bool kernel_tried;
	struct symtab ksyms;
	/* the /proc/kallsyms text @ksyms points into (kallsyms__parse()) until a symbol is
	 * named (sym_ksym_names()), or NULL: @ksyms came from symbolizer__set_kallsyms() */
	char *ktext;
	size_t ktext_len;

	struct hashmap procs; /* (pid, gen) -> struct proc * */
	struct proc *last;    /* lookups come in runs of one process */

	struct file_index files;
	struct elf_file *all_files;
	/* files no process uses, most recent first; beyond UNUSED_KEEP their tables go */
	struct elf_file *unused_head, *unused_tail;
	size_t nr_unused;
	bool vdso_tried;
	struct elf_file *vdso; /* this process's vDSO image: the same kernel serves others */
	uint64_t vdso_size;

	const char *s_unknown, *s_anon, *s_vdso;
	struct symbolizer_stats st;
};

/* ---- symbolize.c ---- */

int file_index__add(struct file_index *idx, const struct file_key *k, struct elf_file *f);
struct file_slot *file_index__slot(const struct file_index *idx, const struct file_key *k);
void sym_key_build_id(struct file_key *k, const uint8_t *id, size_t len);
void sym_key_devino(struct file_key *k, const struct stat *st);
/* Process images by (pid, gen): sym_proc_add() gives a new or the existing one (0 or
 * -ENOMEM). */
struct proc *sym_proc_find(struct symbolizer *s, pid_t pid, uint64_t gen);
int sym_proc_add(struct symbolizer *s, pid_t pid, uint64_t gen, struct proc **out);
void sym_proc_maps_unref(struct symbolizer *s, struct proc_map *maps, size_t nr);
/* Files: referenced by mappings, linked into the list of all, held open until read. */
void sym_file_ref(struct symbolizer *s, struct elf_file *f);
void sym_file_link(struct symbolizer *s, struct elf_file *f);
void sym_file_hold(struct symbolizer *s, struct elf_file *f, int fd);
int sym_file_get(struct symbolizer *s, pid_t pid, const struct map_entry *e,
		 struct elf_file **out);
int sym_file_syms(struct symbolizer *s, struct elf_file *f);
int sym_file_upgrade(struct symbolizer *s, int fd, const char *path, struct elf_file *cached);
int sym_open_mapped(pid_t pid, const struct map_entry *e);
int sym_vdso_load(struct symbolizer *s);

/* ---- snapshot.c ---- */

const char *sym_bracket_name(struct symbolizer *s, const char *path);
const struct proc_map *sym_maps_find(const struct proc_map *maps, size_t nr, uint64_t addr);
int sym_proc_map_cmp(const void *a, const void *b);

/* ---- lookup.c ---- */

struct dwarf_index *sym_file_dwarf(struct symbolizer *s, struct elf_file *f);
int sym_kernel_load(struct symbolizer *s);
int sym_ksym_names(struct symbolizer *s, const struct sym *sym, const char **name,
		   const char **module);

#endif /* SCORCH_SYMBOLIZER_PRIVATE_H */
