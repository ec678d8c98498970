/* SPDX-License-Identifier: MIT */
/* unwind: user stacks from a copy of the registers and the top of the stack (DWARF CFI). */
#ifndef SCORCH_UNWIND_H
#define SCORCH_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"

/*
 * An unwinder turns one sample -- the user registers (ip, sp, bp) and a copy of the
 * stack from sp upwards, taken by the kernel at sample time -- into the return
 * addresses of the call chain, leaf first. It needs no access to the live process:
 * the call frame information (.eh_frame found through .eh_frame_hdr, and .debug_frame
 * for the code .eh_frame has no FDE for) comes from the mapped ELF files, which the
 * caller finds through struct unwind_maps_ops, and the saved registers come from the
 * stack copy. Unwind tables are read once per file and cached for the unwinder's
 * lifetime (keyed by the file identity the ops give).
 *
 * Where a frame has no CFI (JIT code, a file with neither .eh_frame nor .debug_frame)
 * the walk continues with the frame pointer (rbp chain), as a runtime built with frame
 * pointers (Java -XX:+PreserveFramePointer, Node) allows.
 *
 * The implementation (unwind.c, x86-64 only) runs the CFI itself: the row of rules at an
 * instruction (how to find the CFA, the return address, rbp and rsp of the caller) is
 * computed once per (process image, address) and cached, so a walk through known code
 * reads only the stack copy. It follows the registers a sample holds (ip, sp, bp);
 * CFA rules and DWARF expressions over those, signal frames (augmentation 'S') and
 * DW_CFA_remember/restore_state are supported. A rule that needs another register
 * (a CFA kept in r10 across a stack realignment) ends the walk (UNWIND_END_ERROR).
 * Nothing of it shows here, so a later in-kernel unwinder (tables derived from
 * .eh_frame, as the OpenTelemetry eBPF profiler does) can serve the same callers.
 * Not thread-safe: one unwinder per thread.
 */

struct unwinder;

enum unwind_map_kind {
	UNWIND_MAP_OTHER = 0, /* anonymous (JIT) memory, a pseudo mapping, an unreadable file */
	UNWIND_MAP_FILE,      /* an ELF file: its tables are read through ops->open */
	UNWIND_MAP_VDSO,      /* the vDSO: the unwinder reads its own (same kernel) */
};

/* The mapping of an address, as the caller's process model knows it. */
struct unwind_map {
	enum unwind_map_kind kind;
	uint64_t start, end; /* [start, end) holds the address */
	uint64_t bias;	     /* address - ELF virtual address (FILE, VDSO) */
	const void *file;    /* identity of the file (FILE, VDSO): equal for every mapping of
				the same file, stable for the unwinder's lifetime; never read */
	const char *path;    /* for messages; may be NULL */
};

/*
 * How the unwinder sees processes (the record command passes the symbolizer's
 * snapshots, see symbolizer__mapping_gen()). find: fills @out for @addr in process
 * image (@pid, @gen); returns 0 or -ENOENT (no executable mapping), other -errno.
 * open: a read-only descriptor of the FILE mapping holding @addr, owned by the
 * caller, or -errno; called once per file identity (again after a failure, or
 * after unwinder__trim() dropped the file's tables). in_use (optional): does a
 * process the caller still holds map the file @file (an identity from find)?
 * unwinder__trim() keeps the tables of those.
 */
struct unwind_maps_ops {
	int (*find)(void *ctx, pid_t pid, uint64_t gen, uint64_t addr, struct unwind_map *out);
	int (*open)(void *ctx, pid_t pid, uint64_t gen, uint64_t addr);
	bool (*in_use)(void *ctx, const void *file);
	/*
	 * Optional: is @addr in anonymous code inside a CPython perf trampoline (-X perf,
	 * the "py::" entries of its perf map)? Such a stub is `sub $8,%rsp; call *%rcx;
	 * add $8,%rsp; ret` (3.12) or the same with rbp pushed as a frame pointer (3.13+):
	 * both are walked through (CFA = sp + 16) instead of ending the stack there.
	 */
	bool (*trampoline)(void *ctx, pid_t pid, uint64_t gen, uint64_t addr);
};

struct unwind_opts {
	size_t sz; /* sizeof(struct unwind_opts) */
	const struct unwind_maps_ops *maps;
	void *maps_ctx;
};

/* Returns a new unwinder, or NULL with errno set (ENOMEM, EINVAL for bad options). */
struct unwinder *unwinder__new(const struct unwind_opts *opts);
/* Frees the unwinder and every cached table. NULL is accepted. */
void unwinder__free(struct unwinder *u);

/*
 * Bounds the tables held for files no process uses any more (ops->in_use false):
 * the @keep most recently used of them stay loaded (short-lived processes of one
 * program reuse them), older ones drop their tables and keep only their identity
 * (about 100 bytes); a later sample in such a file reads its tables again through
 * ops->open. Files in use are never dropped. Without ops->in_use, does nothing.
 * Call it when processes have been released (the symbolizer's forget).
 */
void unwinder__trim(struct unwinder *u, size_t keep);

/*
 * Drops the cached unwind rules of the image (@pid, @gen); call it when the process is
 * released. (Rows are cached by address within an image: code unmapped and replaced by
 * another file at the same address in a live process keeps the old rules until its
 * row is evicted; as libunwind's cache.)
 */
void unwinder__forget(struct unwinder *u, pid_t pid, uint64_t gen);

/*
 * One sample. @stack holds @stack_len bytes of the stack from @sp upwards. @sps, if
 * not NULL, receives beside each address of the walk its frame's stack pointer (the
 * leaf's @sp, then each caller's CFA): frame i's stack is [sps[i], sps[i + 1]).
 */
struct unwind_sample {
	pid_t pid;
	uint64_t gen;
	uint64_t ip, sp, bp;
	const void *stack;
	size_t stack_len;
	uint64_t *sps;
};

/* Why a walk stopped. */
enum unwind_end {
	UNWIND_END_OUTERMOST = 0, /* the outermost frame (_start, clone): complete */
	UNWIND_END_TRUNCATED,	  /* a saved register lay beyond the stack copy */
	UNWIND_END_NO_INFO,	  /* no CFI and no usable frame pointer */
	UNWIND_END_DEPTH,	  /* @cap frames filled */
	UNWIND_END_ERROR,	  /* bad CFI or registers (the chain so far is kept) */
};

/*
 * Unwinds @smp into @ips (leaf first: @ips[0] = ip, then return addresses), at most
 * @cap entries. Returns how many (>= 1 when ip != 0; 0 when ip is 0) and sets *@end,
 * or -ENOMEM / -EINVAL (cap 0). The chain is as long as the CFI and the copy allow:
 * a walk that stops early still returns the frames found.
 */
int unwinder__unwind(struct unwinder *u, const struct unwind_sample *smp, uint64_t *ips, size_t cap,
		     enum unwind_end *end);

/*
 * After unwinder__unwind(): the address just past the highest stack word the walk read
 * (0: none). A copy of [sp, that) holds all the walk needed; complete walks of one
 * thread's samples share their outermost frames, so it bounds their copies too.
 */
uint64_t unwinder__stack_used(const struct unwinder *u);

/* Counters for the summary. */
struct unwind_stats {
	uint64_t samples;		     /* unwinder__unwind() calls */
	uint64_t frames;		     /* addresses returned */
	uint64_t ends[UNWIND_END_ERROR + 1]; /* walks by enum unwind_end */
	uint64_t files_loaded;		     /* table reads (a file again after it was dropped) */
	uint64_t files_no_cfi;		     /* files without CFI (frame pointers used) */
	uint64_t files_debug_frame;	     /* files read with .debug_frame FDEs (for code
						.eh_frame has none for) */
	uint64_t files_unreadable;	     /* files that could not be opened (process gone) */
	uint64_t files_held;		     /* files whose tables are loaded now */
	uint64_t files_held_max;	     /* ... and at most */
	uint64_t files_evicted;		     /* tables dropped by unwinder__trim() */
	uint64_t table_bytes;		     /* bytes of CFI (and its search tables) held now */
	uint64_t table_bytes_max;	     /* ... and at most */
	uint64_t rows_computed;		     /* rules computed from CFI (a cache miss) */
	uint64_t rows_reused;		     /* rules found in the cache */
};
void unwinder__stats(const struct unwinder *u, struct unwind_stats *st);

/*
 * Tables for an unwinder in the kernel (scorch's BPF programs): the CFI of one ELF
 * file (.eh_frame, and .debug_frame where it has no FDE) compiled into rows sorted by
 * address, each valid from its @pc up to the next row's. Only what a BPF walk over rsp,
 * rbp and the stack can follow is kept: the CFA as rsp or rbp plus an offset, the return
 * address at CFA - 8, rbp unchanged or saved at CFA + offset, and the .plt's expression.
 * Other rules (a CFA in another register, DWARF expressions, signal frames, a return
 * address elsewhere) become INVALID rows, where the walk takes a frame-pointer step, and
 * are counted; so are the gaps between functions. The rows are struct kunwind_row of
 * bpf/profile.h, the layout the BPF walk reads (enum kunwind_cfa, enum kunwind_rbp).
 */

struct unwind_ktable_stats {
	uint64_t fdes;	   /* FDEs compiled */
	uint64_t fdes_bad; /* FDEs that could not be read (skipped) */
	uint64_t fdes_debug; /* of fdes, from .debug_frame (where .eh_frame has none) */
	uint64_t rows;	   /* rows kept (identical neighbours merged) */
	uint64_t invalid;  /* rows of rules the kernel walk cannot follow (gaps aside) */
	uint8_t build_id[64]; /* the file's GNU build-id (build_id_len 0: none) */
	size_t build_id_len;
};

/*
 * Compiles the .eh_frame (found through .eh_frame_hdr) of the ELF file open on @fd, and
 * its .debug_frame for the code .eh_frame has no FDE for, into *@rows (*@nr of them,
 * sorted by pc; the caller frees *@rows). Returns 0, -ENOENT (neither: a file for frame
 * pointers), -E2BIG (addresses past 4 GiB, or more than @max_rows rows), -EINVAL (not
 * ELF), -ENOMEM.
 */
int unwind_ktable__build(int fd, size_t max_rows, struct kunwind_row **rows, size_t *nr,
			 struct unwind_ktable_stats *st);

#endif /* SCORCH_UNWIND_H */
