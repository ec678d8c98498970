/* SPDX-License-Identifier: MIT */
/* engine: ktables.c: --unwind kernel's tables in the BPF maps */
#ifndef SCORCH_ENGINE_KTABLES_H
#define SCORCH_ENGINE_KTABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "python.h"
#include "engine.h"

struct ktables_stats {
	uint64_t images;	    /* process images given their mappings' tables */
	uint64_t files;		    /* files compiled into rows */
	uint64_t files_no_cfi;	    /* files without CFI (.eh_frame, .debug_frame): FP there */
	uint64_t files_debug_frame; /* files compiled with .debug_frame FDEs */
	uint64_t files_too_big;	    /* files whose rows did not fit what was left */
	uint64_t files_unreadable;  /* files that could not be opened or read */
	uint64_t rows, rows_cap;    /* rows written, of the map's entries */
	uint64_t rows_invalid;	    /* rows of rules the walk cannot follow (FP steps there) */
	uint64_t maps_dropped;	    /* mappings past KUNWIND_MAX_MAPS of an image */
	uint64_t procs_full;	    /* images not entered: map "kunwind_procs" full */
	uint64_t py_procs;	    /* images whose Python frames are walked */
	uint64_t py_refused;	    /* CPython images whose memory was not as expected */
	double build_s;		    /* compiling files and writing their rows */
};

struct ktables;
/*
 * Tables in the maps @rows_fd (@cap entries) and @procs_fd; with @py, CPython processes
 * get their Python frames walked too, their code objects named by @py, and with
 * @python_only they alone get entries (--unwind auto on CPU: the others are copied).
 * 0 or -ENOMEM.
 */
int ktables__new(int rows_fd, int procs_fd, uint32_t cap, struct pycodes *py, bool python_only,
		 struct ktables **out);
void ktables__free(struct ktables *kt);
/*
 * Gives the BPF walk the tables of every executable file mapping of the snapshot of
 * (@pid, @gen), compiling files not seen before, for the image @entry_gen of @pid (the
 * BPF programs' gen; 0: whatever image @pid runs, for a process read before sampling).
 * 0, -ENOMEM, -errno of the maps.
 */
int ktables__add_image(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen,
		       uint64_t entry_gen);
/*
 * Compiles the file at @path now (a command about to run, the C library), so that the
 * processes that map it are walked with its rows from their first announcement on.
 * 0, -ENOENT (no build-id: found by it only), -ENOMEM, -errno.
 */
int ktables__preload(struct ktables *kt, const char *path);
/*
 * Whether the snapshot of (@pid, @gen) runs CPython: if so its code objects can be named
 * from now on (a thread read at the start), without an entry for the walk. 0, -ENOMEM.
 */
int ktables__add_python(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen);
/* The image (@pid, @gen) is released: its entry goes (its files' rows stay). */
void ktables__forget(struct ktables *kt, pid_t pid, uint64_t gen);
void ktables__stats(const struct ktables *kt, struct ktables_stats *st);

#endif /* SCORCH_ENGINE_KTABLES_H */
