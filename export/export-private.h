/* SPDX-License-Identifier: MIT */
/* export: the profile's tables, shared by the builder and the writers. */
#ifndef SCORCH_EXPORT_PRIVATE_H
#define SCORCH_EXPORT_PRIVATE_H

#include "common.h"
#include "export.h"

struct pmapping {
	uint64_t start, limit, offset;
	uint32_t file;	   /* string index */
	uint32_t build_id; /* string index (hex) */
};

struct pfunction {
	uint32_t name, system_name, file; /* string indexes; system_name 0: verbatim */
};

struct pline {
	uint32_t function; /* id */
	int64_t line;
};

struct plocation {
	uint32_t mapping; /* id, 0: none */
	uint64_t address;
	uint32_t first_line, nr_lines; /* into lines[], OUTERMOST first */
};

struct psample {
	uint32_t first_loc, nr_locs; /* into locs[], LEAF first */
	uint32_t pid;
	uint32_t comm; /* string index, 0: none */
	/* off-wake: by level (the waker, its own waker...), the waker's process (0: none)
	 * and the string index of its name (0: none) */
	uint32_t waker_pid[PROFILE_MAX_WAKERS];
	uint32_t waker_comm[PROFILE_MAX_WAKERS];
	int64_t values[PROFILE_MAX_VALUES];
};

struct profile {
	struct profile_opts opts;
	char *value_strs[2 * PROFILE_MAX_VALUES + 2]; /* copies of the option strings */
	struct strset *set; /* interned bytes: equal strings, equal pointers */
	const char **strs;  /* string table; [0] = "" */
	size_t nr_strs, cap_strs;
	struct hashmap str_idx; /* interned pointer -> index + 1 */
	struct pmapping *maps;
	size_t nr_maps, cap_maps;
	struct hashmap map_idx; /* -> id (1-based) */
	struct pfunction *funcs;
	size_t nr_funcs, cap_funcs;
	struct hashmap func_idx; /* -> id (1-based) */
	struct pline *lines;
	size_t nr_lines, cap_lines;
	struct plocation *locs;
	size_t nr_locs, cap_locs;
	struct hashmap loc_idx; /* -> id (1-based) */
	uint32_t *stacks;	/* sample stacks, leaf first */
	size_t nr_stacks, cap_stacks;
	struct psample *samples;
	size_t nr_samples, cap_samples;
	struct hashmap sample_idx; /* -> id (1-based) */
	/* string ids the pprof writer needs, interned by profile__new() */
	uint32_t vt_type[PROFILE_MAX_VALUES], vt_unit[PROFILE_MAX_VALUES];
	uint32_t period_type, period_unit, key_pid, key_comm;
	/* by level: "waker_pid", "waker2_pid"..., interned at the first sample with one */
	uint32_t key_waker_pid[PROFILE_MAX_WAKERS], key_waker_comm[PROFILE_MAX_WAKERS];
	uint32_t *comments; /* string ids of pprof's comments */
	size_t nr_comments;
};

/* Sets *@id to the string index of @s[0..len) (added on first use); 0 for NULL or "".
 * Returns 0 or -ENOMEM. */
int profile_str_id(struct profile *p, const char *s, size_t len, uint32_t *id);

#endif /* SCORCH_EXPORT_PRIVATE_H */
