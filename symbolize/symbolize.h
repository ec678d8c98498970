/* SPDX-License-Identifier: MIT */
/* symbolize: kernel and user addresses to frame names (kallsyms, ELF symbols, DWARF). */
#ifndef SCORCH_SYMBOLIZE_H
#define SCORCH_SYMBOLIZE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * One lookup path for every address (see DESIGN.md):
 *   kernel: /proc/kallsyms, binary search; module symbols are named "func [module]",
 *           BPF programs "bpf_prog_<tag>_<name> [bpf]".
 *   user:   /proc/PID/maps -> the mapped file, opened through /proc/PID/map_files or
 *           /proc/PID/root (so processes in containers, and binaries deleted or replaced
 *           since, resolve) -> file offset -> ELF virtual address via the PT_LOAD
 *           headers -> DWARF (inline chain, lines) from the file itself or its debug
 *           file, else .symtab, else .dynsym. [vdso] resolves through this process's own
 *           vDSO image. Anonymous executable memory and addresses in no mapping go to
 *           the JIT resolver of the options, if any.
 * Debug files are found as gdb finds them: @debug_root/.build-id/xx/rest.debug, then the
 * .gnu_debuglink name in the binary's directory, its .debug/ and @debug_root/<dir>/
 * (CRC checked); a build-id mismatch is rejected. The DWARF of a file is read once, on
 * the first lookup that needs it, into an index (function and inline ranges, lines);
 * zlib- and zstd-compressed debug sections are read.
 * Non-leaf frames are return addresses: the caller says so and they are looked up at
 * addr - 1, so a call that is the last instruction of a function names that function.
 *
 * Names of frames:
 *   a symbol                      "name" (kernel module: "name [module]"), demangled
 *                                 (C++, Rust, D) without parameter lists by default
 *   with lines on                 "name (file.c:123)" (basename of the source file)
 *   an inlined function           FRAME_INLINE, a plain name: the caller appends "_[i]"
 *   a JIT map entry               FRAME_JIT, the resolver's name: the caller appends "_[j]"
 *   a mapped file without symbol  "[basename]" (FlameGraph's convention, e.g. "[libfoo.so]")
 *   anonymous executable memory   "[jit]", or the resolver's fallback label (below)
 *   a pseudo mapping              its name ("[heap]", "[stack]")
 *   no mapping at all             "[unknown]", or the resolver's fallback label
 * Parsed files are cached by build-id, else by device + inode, and shared between
 * processes. All returned strings are interned: they stay valid until symbolizer__free().
 */

struct symbolizer;
struct strset;

/*
 * JIT resolver for user addresses in anonymous executable memory or in no mapping,
 * consulted before "[jit]" / "[unknown]" is given. Returns 0 with *@name (borrowed: the
 * symbolizer interns it before returning) and *@offset (from the start of the symbol),
 * or -ENOENT. On -ENOENT it may set *@name to a fallback label used instead of
 * "[jit]" / "[unknown]" (perfmap/ gives "[perf-PID.map]" for a process that has a map
 * without an entry for @ip); it leaves *@name NULL otherwise. Other negative returns
 * count as -ENOENT without a label. Called from the symbolizer's thread only.
 */
typedef int (*symbolizer_jit_fn)(void *ctx, pid_t pid, uint64_t ip, const char **name,
				 uint64_t *offset);

struct symbolizer_opts {
	size_t sz; /* sizeof(struct symbolizer_opts) */
	/* File read for kernel symbols; NULL: /proc/kallsyms. Tests use fixtures. */
	const char *kallsyms_path;
	/* Skip kernel symbols entirely (e.g. --user-only); kernel lookups give "[unknown]". */
	bool no_kernel;
	/* Keep mangled names (record --no-demangle). Default: demangle C++, Rust and D. */
	bool no_demangle;
	/* Keep C++/D parameter lists ("ns::f(int)"); default: dropped ("ns::f"). */
	bool keep_params;
	/* Frame names with source lines, "func (file.c:123)" (record --lines). */
	bool lines;
	/* No inline frames: only the function (DWARF still names it). */
	bool no_inline;
	/* Symbol tables only: no DWARF, no debug files. */
	bool no_dwarf;
	/* Root of the debug file directories; NULL: /usr/lib/debug. Tests use fixtures. */
	const char *debug_root;
	/* Optional JIT resolver (see symbolizer_jit_fn) and its context. */
	symbolizer_jit_fn jit_lookup;
	void *jit_ctx;
	/*
	 * Never read /proc (scorch report): processes are only known through
	 * symbolizer__import_gen(), kernel symbols only through symbolizer__set_kallsyms();
	 * lookups in an unknown process give "[unknown]" and count in procs_missing.
	 */
	bool offline;
	/* Imported mappings: look for their files under this directory first (--symfs). */
	const char *symfs;
	/*
	 * Decompressed debug sections kept here by build-id, for the next runs (created
	 * mode 0700 if missing; used only if owned by the effective user and writable by
	 * no one else); NULL or "": no cache. The CLI passes $SCORCH_CACHE_DIR, else
	 * /var/cache/scorch.
	 */
	const char *cache_dir;
};

/*
 * The naming options (--lines, --no-demangle, --params, --no-inline) as a getopt_long
 * table ended by a zero entry, for common.h's cli__options(); each .val is at least
 * SYMBOLIZER_OPT_BASE. symbolizer_opts__set_getopt() sets @o's field for such a value:
 * 0, or -ENOENT when @val is not one of them. The help lines: *_print_options_help().
 */
#define SYMBOLIZER_OPT_BASE 0x4500
extern const struct option symbolizer_name_options[];
int symbolizer_opts__set_getopt(struct symbolizer_opts *o, int val);
void symbolizer__print_options_help(FILE *out);

/* Returns a new symbolizer or NULL with errno set. Kernel symbols load lazily. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
/* Frees everything, including every string returned so far. NULL is accepted. */
void symbolizer__free(struct symbolizer *s);

/*
 * Reads /proc/PID/maps now and opens the files of its executable mappings, so that
 * the process can still be symbolized after it exits. A file new to the symbolizer has
 * only its headers read (build-id, segments): its symbol tables are read at its first
 * lookup, through a descriptor held until then (at most 256 held, else read at once),
 * so a snapshot taken while the profiled programs run costs them little. Calling it
 * again for a PID already known refreshes the mappings (new dlopen'ed libraries)
 * without reading files already cached. Returns 0, -ESRCH if the process is gone,
 * other -errno.
 * Lookups for a PID never snapshotted take a snapshot on first use.
 */
int symbolizer__snapshot(struct symbolizer *s, pid_t pid);

/* Drops what is kept for @pid (its mappings; cached files stay while others use them). */
void symbolizer__forget(struct symbolizer *s, pid_t pid);

/*
 * Processes keyed by (pid, generation). exec replaces the image under the same PID and
 * PIDs are reused, so a caller that can tell images apart (an exec counter or start time
 * from BPF) passes @gen, any u64 it chooses; the pid-only functions above and
 * symbolizer__user() are these with @gen 0.
 *
 * symbolizer__snapshot_gen() stores /proc/PID/maps under (@pid, @gen) and opens the
 * mapped files (as symbolizer__snapshot). Lookups use exactly that entry. A lookup for
 * an unknown (@pid, @gen) snapshots /proc/PID/maps on first use: if the process has
 * exec'd since the samples were taken, that is the new image and names may be wrong --
 * snapshot at exec time to avoid it. symbolizer__forget_gen() drops the entry and its
 * mappings. Memory for exited processes is bounded: parsed files are shared by build-id
 * or device+inode and reference-counted by the mappings that use them; a file no entry
 * uses stays parsed while it is among the 16 most recently released, then its tables
 * are freed (its few-hundred-byte identity stays, and it is parsed again if needed).
 * Cost, measured by tests/symbolize (test_elf "perf:" lines): one snapshot of a process
 * whose files are already cached is about a /proc/PID/maps read plus one stat per
 * executable mapping: of the path the maps line shows when that names the mapped inode
 * and device, else through /proc/PID/map_files (tens of microseconds).
 */
int symbolizer__snapshot_gen(struct symbolizer *s, pid_t pid, uint64_t gen);

/*
 * Stores under (@pid, @gen) a copy of the snapshot of (@from_pid, @from_gen), without
 * reading /proc: for a child that has not exec'd since it was forked (its mappings are
 * its parent's at the fork), and whose maps may already show another image when read
 * (fork, then exec before the read). The caller vouches that the mappings are the same;
 * those mapped by either since differ as they would between two snapshots (see
 * symbolizer__snapshot_gen: a later snapshot of (@pid, @gen) merges with the copy).
 * Returns 0, -ENOENT when (@from_pid, @from_gen) has no snapshot or one that could not
 * be read, -EEXIST when (@pid, @gen) has one already, -ENOMEM. Costs a copy of the
 * mapping table and no system call.
 */
int symbolizer__snapshot_copy(struct symbolizer *s, pid_t pid, uint64_t gen, pid_t from_pid,
			      uint64_t from_gen);

/*
 * A mapping as the kernel describes it in a perf mmap record (or a maps line): @path
 * the file's path as the process sees it (kernel d_path: may end in " (deleted)"),
 * "[vdso]" and such for special mappings, "" for anonymous memory; @dev_major,
 * @dev_minor and @inode the mapped file's; @exec whether it is executable.
 */
struct symbolizer_vma {
	uint64_t start, end, pgoff;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool exec;
	const char *path; /* copied (interned) by the call */
};

/*
 * symbolizer__snapshot_gen() with the mappings @v[0..n) given instead of read from
 * /proc/PID/maps (they must not overlap; any order). Files are found as a snapshot finds them (one
 * stat() of the path for a file parsed already); a file new to the symbolizer is opened through
 * /proc/PID/map_files or inside the process's root while @pid lives, else by its path from scorch's
 * own root (no symlink followed), used only if it is the mapped inode and device. Merges with an
 * earlier snapshot of (@pid, @gen) as a second snapshot does. Returns 0, -EINVAL (a mapping with
 * end <= start), -ENOMEM.
 */
int symbolizer__snapshot_vmas(struct symbolizer *s, pid_t pid, uint64_t gen,
			      const struct symbolizer_vma *v, size_t n);

/*
 * What the snapshot of (@pid, @gen) holds that only a JIT resolver can name: anonymous
 * executable memory (SYMBOLIZER_JIT_ANON: symbolizer__user_gen() asks jit_lookup there,
 * and for addresses outside every mapping) and jitdump files mapped for perf to see
 * (SYMBOLIZER_JIT_DUMP). Returns the flags (0: neither), or -ENOENT when (@pid, @gen)
 * has no snapshot. A caller may skip looking for a process's JIT files while this is 0,
 * if it looks again when told of new executable mappings.
 */
#define SYMBOLIZER_JIT_ANON (1 << 0)
#define SYMBOLIZER_JIT_DUMP (1 << 1)
int symbolizer__jit_hints(struct symbolizer *s, pid_t pid, uint64_t gen);
void symbolizer__forget_gen(struct symbolizer *s, pid_t pid, uint64_t gen);

enum frame_kind {
	FRAME_SYMBOL = 0, /* resolved to a function (symbol table or DWARF) */
	FRAME_MODULE,	  /* inside a known file or mapping, no symbol: "[libfoo.so]" */
	FRAME_UNKNOWN,	  /* no mapping / no kernel symbol: "[unknown]" */
	FRAME_INLINE,	  /* inlined into the frame before it (the caller appends "_[i]") */
	FRAME_JIT,	  /* named by the JIT resolver (the caller appends "_[j]") */
};

struct frame {
	const char *name;   /* display name, interned (never NULL) */
	const char *module; /* file path or kernel module name, interned; NULL if none */
	uint64_t offset;    /* address relative to the symbol start (0 if unresolved/inline) */
	enum frame_kind kind;
	/* source file (path as DWARF gives it), interned; NULL if unknown or without
	 * symbolizer_opts.lines (line tables are then not read: they are most of the cost) */
	const char *file;
	uint32_t line; /* source line (an outer frame: the call site), 0 if unknown */
};

/*
 * Resolves one user address of process @pid. @is_return: @ip is a return address
 * (any frame but the leaf) and is looked up at ip - 1. An address outside every mapping
 * of the snapshot reads /proc/PID/maps once more (once per process: mapped since?) while
 * the process lives. Writes up to @cap frames,
 * outermost first: the function, then the functions inlined into it down to the one
 * holding @ip (FRAME_INLINE); with more than @cap, the function and the innermost
 * cap - 1. Returns how many (>= 1), or -errno on failure (-ENOMEM, -EINVAL for cap 0). A process
 * that is gone and was never snapshotted is not an error: its frames come back FRAME_UNKNOWN and
 * are counted.
 */
int symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return,
		     struct frame *out, size_t cap);

/* Same for the process image (@pid, @gen): see symbolizer__snapshot_gen(). */
int symbolizer__user_gen(struct symbolizer *s, pid_t pid, uint64_t gen, uint64_t ip, bool is_return,
			 struct frame *out, size_t cap);

/* Same for a kernel address. */
int symbolizer__kernel(struct symbolizer *s, uint64_t ip, bool is_return, struct frame *out,
		       size_t cap);

/*
 * Reads the kernel's symbols now rather than at the first kernel lookup (record calls
 * it once sampling runs, so the end of a recording does not wait for it; kernel symbols
 * appearing later, BPF programs loaded meanwhile, are then not known). Returns 0 (an
 * unreadable kallsyms is a warning, as at a lookup) or -ENOMEM. No-op with no_kernel.
 */
int symbolizer__load_kernel(struct symbolizer *s);

/*
 * Kernel function names to addresses, the other way from symbolizer__kernel(), for
 * stacks the kernel prints by name (/proc/TID/stack). Reads @s's kallsyms file
 * (symbolizer_opts.kallsyms_path, else /proc/kallsyms) afresh with the parser the
 * lookups use, not the loaded table (it keeps one name per address), and sets
 * @addrs[i] to the address of the first text symbol named @names[i] in the file's
 * order (a few static functions share a name), or 0 when none is. @names are bare
 * ("func", no "+off" or module), in any order, repeats allowed; borrowed for the call.
 * Uses nothing of @s but the path. Returns 0, -ENOMEM, or -errno when the file cannot
 * be read (@addrs all 0).
 */
int symbolizer__kernel_addrs(struct symbolizer *s, const char *const *names, size_t n,
			     uint64_t *addrs);

/*
 * Resolves @addr, an ELF virtual address of the file at @path (as addr2line does; for
 * `scorch symbolize --elf`). The file is opened as given (symlinks followed: the caller
 * chose it) and stays cached. Same frames and returns as symbolizer__user(); an address
 * in no function gives "[basename]" (FRAME_MODULE); a file that cannot be read or parsed
 * returns -errno (-ENOENT, -EACCES, -EINVAL) after a one-line warning.
 */
int symbolizer__elf(struct symbolizer *s, const char *path, uint64_t addr, bool is_return,
		    struct frame *out, size_t cap);

/*
 * For unwinders (unwind/): the mapping of user address @addr in the snapshot of
 * (@pid, @gen), taken as symbolizer__user_gen() takes it (a process never snapshotted
 * is snapshotted now; an address outside every mapping of a live process reads its maps
 * once more, once per process, as symbolizer__user_gen() does). Fills @out and returns 0, or -ENOENT when no executable mapping
 * holds @addr, -ENOMEM. kind FILE: a parsed ELF file, @file its identity (the same
 * pointer for every mapping of the same file in any process, valid until
 * symbolizer__free(), never dereferenced by callers) and @bias = @addr - the ELF virtual
 * address of @addr. kind VDSO: the kernel's vDSO, the same image as the caller's own
 * (getauxval(AT_SYSINFO_EHDR)), @bias as for FILE. kind OTHER: anonymous memory (JIT),
 * a pseudo mapping, or a file that could not be opened or parsed; @file NULL.
 */
enum symbolizer_map_kind {
	SYMBOLIZER_MAP_OTHER = 0,
	SYMBOLIZER_MAP_FILE,
	SYMBOLIZER_MAP_VDSO,
};

struct symbolizer_mapping {
	enum symbolizer_map_kind kind;
	uint64_t start, end; /* the mapping holding @addr: [start, end) */
	uint64_t bias;
	const void *file;
	const char *path; /* interned file path or pseudo name ("[vdso]"), or NULL */
	uint64_t pgoff;
	const uint8_t *build_id;
	size_t build_id_len;
};
int symbolizer__mapping_gen(struct symbolizer *s, pid_t pid, uint64_t gen, uint64_t addr,
			    struct symbolizer_mapping *out);

/*
 * Opens the file of the FILE mapping holding @addr in (@pid, @gen) for reading, as the
 * snapshot opened it: /proc/PID/map_files, else the path inside the process's root with
 * no symlink followed and the inode checked. Works only while the process lives (or its
 * mapping still resolves). Returns a descriptor the caller closes, or -errno (-ENOENT:
 * no such mapping; -ESRCH/-ENOENT: the process is gone; -EINVAL: not a regular file).
 */
int symbolizer__open_mapping_gen(struct symbolizer *s, pid_t pid, uint64_t gen, uint64_t addr);

/*
 * Captures (scorch record -o x.scorch, scorch report).
 *
 * symbolizer__mappings_gen() exports the snapshot of (@pid, @gen) (taken now if there is
 * none): every kept mapping, sorted by start, as an array *@out of *@nr entries that the
 * caller frees (free(), not the strings). Per entry: start, end, pgoff; kind FILE (a
 * parsed ELF file: @build_id/@build_id_len its GNU build-id, borrowed until
 * symbolizer__free(), NULL/0 without one), VDSO, or OTHER; @path the file's path (a
 * file that could not be opened keeps its path, kind OTHER), "[vdso]", the frame name of
 * a pseudo mapping ("[heap]", "[anon_inode:x]"), or NULL for anonymous executable memory
 * (JIT). @bias and @file are not set. Returns 0, -ENOMEM.
 *
 * symbolizer__import_gen() makes (@pid, @gen) the process image described by @maps
 * (as exported above; @bias and @file ignored), replacing what was known of it; it never
 * reads /proc. A mapping whose @path starts with '/' is a file, looked for, in order,
 * as @symfs + @path (opts.symfs; symlinks resolved inside @symfs), as @path itself (no
 * symlink followed) and as @debug_root/.build-id/xx/rest.debug. A candidate whose
 * build-id differs from @build_id is refused (one warning per file, counted in
 * files_mismatched) and never used; one without a build-id is refused when @build_id is
 * given. A file found nowhere names its frames "[basename]" (counted in files_not_found,
 * one warning). Files are shared by build-id with every other process. "[vdso]" resolves
 * through this process's vDSO only when the build-ids match. Returns 0, -EINVAL (a
 * mapping with end <= start), -ENOMEM.
 */
int symbolizer__mappings_gen(struct symbolizer *s, pid_t pid, uint64_t gen,
			     struct symbolizer_mapping **out, size_t *nr);
int symbolizer__import_gen(struct symbolizer *s, pid_t pid, uint64_t gen,
			   const struct symbolizer_mapping *maps, size_t n);

/*
 * Kernel symbols as a list instead of /proc/kallsyms: [start, end) named @name ("func" or
 * "func [module]", as frames show it), @module NULL or "" for the core kernel.
 * symbolizer__kernel_sym() gives the symbol symbolizer__kernel() would use for @ip (strings
 * interned: valid until symbolizer__free()); returns 0, -ENOENT (none), -ENOMEM.
 * symbolizer__set_kallsyms() replaces the kernel symbols by @syms[0..n) (copied); ranges
 * may overlap (the innermost wins as for kallsyms). Returns 0 or -ENOMEM.
 */
struct symbolizer_ksym {
	uint64_t start, end;
	const char *name;
	const char *module;
};
int symbolizer__kernel_sym(struct symbolizer *s, uint64_t ip, bool is_return,
			   struct symbolizer_ksym *out);
int symbolizer__set_kallsyms(struct symbolizer *s, const struct symbolizer_ksym *syms, size_t n);

/*
 * Is the file identity @file (from symbolizer__mapping_gen()) mapped by a process
 * image the symbolizer still holds (not forgotten)? The vDSO always is. For caches
 * keyed by file identity that follow the symbolizer's lifetimes (unwind tables).
 */
bool symbolizer__file_in_use(const struct symbolizer *s, const void *file);

/* What was resolved and what was not, for the end-of-run summary. */
struct symbolizer_stats {
	uint64_t user_frames;	    /* user lookups */
	uint64_t user_unresolved;   /* of those, FRAME_MODULE or FRAME_UNKNOWN */
	uint64_t jit_unresolved;    /* of those, in anonymous memory: JIT code no map names */
	uint64_t kernel_frames;	    /* kernel lookups */
	uint64_t kernel_unresolved; /* of those, FRAME_UNKNOWN */
	uint64_t procs_missing;	    /* PIDs whose maps could not be read (exited) */
	uint64_t procs_copied;	    /* snapshots copied from a parent's (snapshot_copy) */
	uint64_t files_unreadable;  /* mapped files that could not be opened or parsed */
	uint64_t files_cached;	    /* distinct ELF files read (their headers) */
	uint64_t files_symbols;	    /* of those, symbol tables read at first lookup */
	uint64_t files_evicted;	    /* unused files whose tables were freed (see _gen above) */
	uint64_t dwarf_files;	    /* files whose DWARF was indexed (own or debug file) */
	uint64_t dwarf_incomplete;  /* of those, partly unreadable or truncated (see -v) */
	uint64_t inline_frames;	    /* FRAME_INLINE frames returned */
	uint64_t jit_frames;	    /* FRAME_JIT frames returned */
	uint64_t files_not_found;   /* imported files found nowhere (symbolizer__import_gen) */
	uint64_t files_mismatched;  /* imported files refused: another build-id */
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

/*
 * Probes (record --event, list-events).
 *
 * symbolize__functions(): every function symbol (STT_FUNC, STT_GNU_IFUNC; defined, in an
 * executable segment) of the ELF file @path, opened as given, from .symtab and .dynsym
 * (a name at an address once). @name is the symbol as written, @demangled its C++, Rust
 * or D demangling with parameters and @short_name without them, as frames are named
 * (both NULL when not mangled), all interned in @strs;
 * @offset is the file offset of @addr, where a uprobe is placed. *@out is malloc'ed
 * (the caller frees it). Returns 0, -ENOENT/-EACCES (open), -ENOEXEC (not ELF),
 * -EINVAL (unreadable tables), -ENOMEM.
 *
 * symbolize__usdt_notes(): the SystemTap SDT notes (.note.stapsdt) of @path, as
 * symbolize__functions() reads, with strings interned in @strs. Same returns.
 */
struct symbolize_func {
	const char *name;
	const char *demangled, *short_name;
	uint64_t addr, size, offset;
};
int symbolize__functions(const char *path, struct strset *strs, struct symbolize_func **out,
			 size_t *nr);

struct symbolize_usdt {
	const char *provider, *name;
	const char *args; /* the note's argument string ("8@%rdi -4@%esi"), or NULL */
	uint64_t pc, semaphore;
};
int symbolize__usdt_notes(const char *path, struct strset *strs, struct symbolize_usdt **out,
			  size_t *nr);

/*
 * The file offset of ELF virtual address @addr of @elf (libelf's Elf, open for reading)
 * whose @len bytes lie in the file bytes of one PT_LOAD segment (@exec_only: an
 * executable one), through the program headers. Sets *@off and returns 0, or -ENOENT
 * (no such segment), -EINVAL (unreadable program headers). For probes (above) and for
 * reading a variable's initial bytes from the file (python/: Py_Version).
 */
struct Elf;
int symbolize__vaddr_offset(struct Elf *elf, uint64_t addr, size_t len, bool exec_only,
			    uint64_t *off);

#endif /* SCORCH_SYMBOLIZE_H */
