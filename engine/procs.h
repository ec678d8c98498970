/* SPDX-License-Identifier: MIT */
/* engine: procs.c: the process images (pid, gen) a recording has seen */
#ifndef SCORCH_ENGINE_PROCS_H
#define SCORCH_ENGINE_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

enum proc_flags {
	PROC_SNAPPED = 1 << 0,	/* its mappings were read while it lived */
	PROC_MISSING = 1 << 1,	/* it was gone before they could be read */
	PROC_EXITED = 1 << 2,	/* it exited; its counts wait to be reaped */
	PROC_RELEASED = 1 << 3, /* reaped: its counts are symbolized, its mappings dropped */
	PROC_REPLACED = 1 << 4, /* ended by an exec: the PID lives on in a new image */
	PROC_SIDEBAND = 1 << 5, /* its mappings came from the kernel's mmap records */
};

struct proc_entry {
	pid_t pid; /* > 0 */
	uint32_t flags;
	uint64_t gen;
	uint64_t ts;	     /* PROC_SIDEBAND: a time it ran at (its SCORCH_EVENT_NEW's) */
	uint32_t sb_version; /* PROC_SIDEBAND: of the mappings given (sideband__image()) */
};

/*
 * A hash table of proc_entry by (pid, gen). Entries are never removed: a released
 * process keeps 32 bytes, which stops a late count of it from being symbolized
 * with the mappings of a process that reused its PID.
 */
struct proctab;
struct proctab *proctab__new(void);
void proctab__free(struct proctab *t);
/* The entry of (pid, gen), or NULL. Pointers stay valid until the next __get(). */
struct proc_entry *proctab__find(const struct proctab *t, pid_t pid, uint64_t gen);
/* Finds or inserts (flags 0) the entry; NULL when out of memory or pid <= 0. */
struct proc_entry *proctab__get(struct proctab *t, pid_t pid, uint64_t gen);
size_t proctab__nr(const struct proctab *t);
/* Iteration: pass NULL first, then the previous entry; NULL at the end. */
struct proc_entry *proctab__next(const struct proctab *t, struct proc_entry *prev);

/*
 * Reaps of exited processes during a recording (record__reap_due() in record-reap.c): why one runs.
 * On busy CPUs they are put off until what waits costs too much: REAP_HELD (record.c)
 * exited images, or what reap_mark__exceeded() checks.
 */
enum reap_why {
	REAP_NOT_YET = 0,
	REAP_IDLE,	    /* a period passed, on idle CPUs */
	REAP_FORCED_HELD,   /* REAP_HELD exited images wait */
	REAP_FORCED_KEYS,   /* keys added to 1/REAP_KEYS_DIV of a count map */
	REAP_FORCED_TABLES, /* unwind tables grew by more than REAP_TABLE_BYTES */
	REAP_WHY_MAX,
};

#define REAP_KEYS_DIV	 8	    /* keys of exited processes fill at most ~1/8 of a map */
#define REAP_TABLE_BYTES (64 << 20) /* --unwind dwarf: files of exited processes loaded */

/* What the reaps bound, read after the last one and at each look. */
struct reap_mark {
	uint64_t keys;	      /* STAT_COUNT_KEYS: keys created in the count maps, so far */
	size_t ukeys;	      /* --unwind dwarf: ustacks__nr() (an interval's drain lowers it) */
	uint64_t table_bytes; /* --unwind dwarf: unwind_stats.table_bytes */
};
/*
 * Has what waits grown too much from @was (after the last reap) to @now, with count maps
 * of @map_entries each? REAP_FORCED_KEYS: keys (kernel, and --unwind dwarf's table)
 * added to at least map_entries / REAP_KEYS_DIV; REAP_FORCED_TABLES: unwind tables
 * grew by more than REAP_TABLE_BYTES; else REAP_NOT_YET.
 */
enum reap_why reap_mark__exceeded(const struct reap_mark *was, const struct reap_mark *now,
				  uint32_t map_entries);
/*
 * The stack ids a reap may delete: @gone[0..nr_gone) (the stacks of the keys it took)
 * without those in @kept[0..nr_kept) (the stacks of the keys left), each once, into
 * @gone[0..return). Sorts @gone only: the stacks of exited processes are few beside
 * those of every key left. 0 when out of memory (every stack stays).
 */
size_t reap__unused(const __u64 *kept, size_t nr_kept, __u64 *gone, size_t nr_gone);
/* Sorts @ids[0..n) and keeps each id once, in @ids[0..return). */
size_t reap__sort_unique(__u64 *ids, size_t n);
/*
 * Is a CPU free now for a reap on idle CPUs, by @loadavg (the text of /proc/loadavg, read
 * by the caller, whose "R/T" field counts the tasks runnable this instant, the reader
 * among them) on @nr_cpus online CPUs? The idle share over the last window (record-reap.c's
 * record__idle_update()) is seconds old when a job starts: a reap then (tens of ms: libc's DWARF
 * indexed) would take a CPU from it. 1: fewer than @nr_cpus others runnable; 0: none
 * free; -EINVAL: no such field.
 */
int reap__cpu_free(const char *loadavg, long nr_cpus);

#endif /* SCORCH_ENGINE_PROCS_H */
