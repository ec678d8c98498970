/* SPDX-License-Identifier: MIT */
/* flamegraph: internals of the collapsers (collapse.c, collapse-perf.c, collapse-bpftrace.c). */
#ifndef SCORCH_COLLAPSE_PRIVATE_H
#define SCORCH_COLLAPSE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "flamegraph.h"

#define COLLAPSE_MAX_KEYS 16

enum bt_key {
	BT_KEY_SCALAR = 0,
	BT_KEY_KSTACK,
	BT_KEY_USTACK,
};

/* One frame of the sample being built: its text in the arena, and its group. */
struct cframe {
	size_t off; /* into arena */
	size_t len;
	uint32_t group; /* perf: the input line; bpftrace: the stack (0 kernel, 1 user) */
};

struct cstack {
	size_t off, len; /* into keys_buf */
	uint64_t count;
};

struct collapser {
	struct collapse_opts opts;
	struct folded *folded;
	struct collapse_stats st;

	/* bpftrace key shape, from opts.bpftrace_keys */
	enum bt_key keys[COLLAPSE_MAX_KEYS];
	size_t nr_keys;
	char *keys_text; /* for messages */

	/*
	 * Samples merge here first, keyed by their frames joined with NULs, and
	 * go to the folded set (which escapes and hashes each stack) once per
	 * distinct stack at the end of a read.
	 */
	struct cstack *stacks; /* in order of arrival */
	size_t nr_distinct, cap_stacks;
	struct hashmap stack_index; /* joined frames -> index in stacks[] + 1 */
	char *keys_buf;
	size_t keys_len, keys_cap;
	char *join;
	size_t join_cap;

	/* the read in progress */
	const char *name;
	size_t lineno;
	enum collapse_format fmt;
	size_t first_bad_lineno;
	char first_bad[72];

	/* the sample or record being built */
	char *arena;
	size_t arena_len, arena_cap;
	struct cframe *frames;
	size_t nr_frames, cap_frames;
	uint32_t group;

	/* perf */
	bool in_sample;
	size_t pname_off, pname_len; /* in arena; the arena is reset with each sample */
	/* the modules seen last and what they are (a few modules alternate in a stack) */
	struct cmod {
		char *name;
		size_t len, cap;
		bool kernel, jit;
	} mods[4];
	unsigned int mod_next;
	bool mod_kernel, mod_jit; /* of the current frame line */
	bool pname_java;
	uint64_t period;
	char *event; /* the filter: opts.event_filter or the first event seen */
	bool event_defaulted;
	char *other_event; /* the first event skipped, for the report */

	/* bpftrace */
	bool in_record;
	size_t record_lineno;
	char *map_name;
	char *key; /* the key's text, one \x01 per stack */
	size_t key_len, key_cap;
	size_t nr_stacks;
	bool last_was_frame;
	size_t cur_stack_key; /* the key element of the stack being read */
};

/* Appends @len bytes and a NUL to the arena; returns the offset, or SIZE_MAX (ENOMEM). */
size_t collapse__arena_add(struct collapser *c, const char *s, size_t len);
/* Extends the last string of the arena (its NUL moves). Returns 0 or -ENOMEM. */
int collapse__arena_append(struct collapser *c, const char *s, size_t len);
/* Records arena string @off, @len bytes, as a frame of @group. Returns 0 or -ENOMEM. */
int collapse__push_frame(struct collapser *c, size_t off, size_t len, uint32_t group);
/* The length of the arena's last string, which starts at @off. */
static inline size_t collapse__last_len(const struct collapser *c, size_t off)
{
	return c->arena_len - off - 1;
}
/* Adds @nr frames, given as indexes into c->frames in root-first order, to the folded set. */
int collapse__emit(struct collapser *c, const size_t *order, size_t nr, uint64_t count);
/* Moves the merged samples to the folded set. Returns 0 or -ENOMEM. */
int collapse__flush(struct collapser *c);
/* Forgets the frames of the sample being built. */
void collapse__reset_sample(struct collapser *c);
/* Counts a line that is not understood (the first is kept for the report). */
void collapse__bad_line(struct collapser *c, const char *line, size_t len);

/* Perl's \s, \d and \w (ASCII, as stackcollapse-perf.pl sees bytes), by table. */
enum {
	CC_SPACE = 1,
	CC_DIGIT = 2,
	CC_WORD = 4,
};
extern const unsigned char collapse__ctype[256];

static inline bool collapse__space(unsigned char ch)
{
	return collapse__ctype[ch] & CC_SPACE;
}

static inline bool collapse__digit(unsigned char ch)
{
	return collapse__ctype[ch] & CC_DIGIT;
}

static inline bool collapse__word(unsigned char ch)
{
	return collapse__ctype[ch] & CC_WORD;
}

/* True when @s[0..len) contains "/tmp/perf-" DIGITS ".map" (a perf map: JIT code). */
bool collapse__is_perf_map(const char *s, size_t len);

/* collapse-perf.c */
int collapse_perf__line(struct collapser *c, char *line, size_t len);
int collapse_perf__end(struct collapser *c);

/* collapse-bpftrace.c */
int collapse_bt__parse_keys(struct collapser *c, const char *keys);
int collapse_bt__line(struct collapser *c, char *line, size_t len);
int collapse_bt__end(struct collapser *c);

#endif /* SCORCH_COLLAPSE_PRIVATE_H */
