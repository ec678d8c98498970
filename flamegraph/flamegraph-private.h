/* SPDX-License-Identifier: MIT */
/* flamegraph: internals shared by folded.c, the reader and the SVG writer. */
#ifndef SCORCH_FLAMEGRAPH_PRIVATE_H
#define SCORCH_FLAMEGRAPH_PRIVATE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "flamegraph.h"

#define FOLDED_EMPTY_FRAME "[empty]"

/* Off-wake and chain graphs: whether @s[0..len) is "--", the frame between a stack and
 * the stack of its waker. */
static inline bool fg__is_sep(const char *s, size_t len)
{
	return len == 2 && s[0] == '-' && s[1] == '-';
}

/* the SVG's margin left and right of the frames, px (--minwidth in pixels is of the
 * width between) */
#define FG_XPAD 10

/*
 * Escapes @name into @dst as the folded contract says and returns the length
 * written (not NUL-terminated). @dst must hold MAX(strlen(name), 7) bytes.
 */
size_t folded__escape_frame(char *dst, const char *name);

/* Calls @fn for every stack in bytewise order; stops at and returns the first nonzero. */
typedef int (*folded_each_fn)(const char *line, size_t len, uint64_t count, void *ctx);
int folded__for_each(const struct folded *f, folded_each_fn fn, void *ctx);

/*
 * svg.c, shared with html.c. fg__utf8_clean() copies @in[0..len) to @out
 * (capacity 3 * len) replacing invalid UTF-8 and characters XML 1.0 forbids
 * (U+FFFE, U+FFFF) by U+FFFD and control bytes by '?'; returns the bytes written
 * and sets *ncp to the number of code points. fg__put_xml_escaped() writes clean
 * text escaped for XML/HTML character data and attribute values.
 * fg__cmp_names() compares two name ids (uint32_t *) of the graph @arg bytewise.
 */
size_t fg__utf8_clean(const char *in, size_t len, char *out, size_t *ncp);
void fg__put_xml_escaped(FILE *out, const char *s, size_t len);
int fg__cmp_names(const void *a, const void *b, void *arg);

/* opts.c */
int flamegraph__palette_by_name(const char *name, enum flamegraph_palette *out);
bool flamegraph__valid_bgcolors(const char *s);

/*
 * The graph keeps stacks, not a tree: each stack is a run of 32-bit name ids
 * in one array. The writer sorts the stacks frame by frame (names compared
 * bytewise) and merges them in one pass, like a trie walk in preorder; so a
 * function never appears as two siblings, and memory is 4 bytes per input frame.
 */
struct fg_stack {
	uint64_t key; /* the first two frames, for sorting without a cache miss */
	uint64_t count;
	uint64_t off; /* into frames[] */
	uint64_t
		other; /* differential graphs: the count not drawn (before, or after with negate) */
	uint32_t len;
	uint8_t kind;	   /* enum fg_kind of the stack's original leaf */
	uint16_t interval; /* flamegraph__set_interval() when it was added (HTML timeline) */
};

/* What a stack's time is, by its leaf before any --reverse (wall-clock profiles). */
enum fg_kind {
	FG_KIND_CPU = 0,
	FG_KIND_OFFCPU,	  /* leaf FG_FRAME_OFFCPU */
	FG_KIND_RUNQUEUE, /* leaf FG_FRAME_RUNQUEUE */
};

struct flamegraph {
	struct flamegraph_opts opts;
	struct strset *strs;
	const char **names; /* by id, escaped, NUL-terminated */
	uint32_t *name_len;
	size_t nr_names, cap_names, cap_name_len;
	struct hashmap name_index; /* values: id + 1 */
	uint32_t *frames;
	size_t nr_frames, cap_frames;
	struct fg_stack *stacks;
	size_t nr_stacks, cap_stacks;
	size_t max_len;
	unsigned __int128 sum;
	size_t bad_lines, frac_lines, diff_lines, single_lines;
	char *scratch;
	size_t scratch_cap;
	uint32_t *ids;
	size_t cap_ids;
	unsigned int interval, nr_intervals; /* flamegraph__set_interval() */
	bool written;
};

/* stacks.c: parses one folded line (with or without its newline). Returns 0 or -ENOMEM. */
int flamegraph__add_line(struct flamegraph *fg, const char *line, size_t len);

/*
 * Splits a folded line into its stack and one or two trailing counts: the
 * grammar of flamegraph__read(). Returns 0 for a blank line, 1 or 2 (the number
 * of counts; with one, *before is 0), or -EINVAL for a line that does not parse.
 * *stack_len is the stack's length; *frac is set when a count was rounded.
 */
int folded__parse_line(const char *line, size_t len, size_t *stack_len, uint64_t *before,
		       uint64_t *after, bool *frac);

/* True when the graph draws differential colours (two counts on every line). */
bool flamegraph__is_diff(const struct flamegraph *fg);

/* Adds a differential stack from folded text (as flamegraph__add_line). 0 or -ENOMEM. */
int flamegraph__add_diff_text(struct flamegraph *fg, const char *stack, size_t len, uint64_t before,
			      uint64_t after);

/* ---- colors.c: frame colours (flamegraph.pl's palettes), the --cp palette file ---- */

struct rgb {
	unsigned char r, g, b;
};

/* Splits a trailing _[k] _[j] _[i] _[w] annotation off @name (*len shortened); returns
 * its letter, or 0. */
char fg_color__annotation(const char *name, size_t *len);
/*
 * The colour of frame @s[0..len) (annotation @annot split off) in @o's palette, at
 * chain level @level: the number of "--" frames between it and the root
 * (0: the blocked stack, 1: its waker, 2: the waker's waker...). Only FG_PAL_WAKEUP
 * (level >= 1 blue, else aqua) and FG_PAL_CHAIN (a hue family per level) read it;
 * the separators themselves are grey in every palette.
 */
struct rgb fg_color__frame(const struct flamegraph_opts *o, const char *s, size_t len, char annot,
			   unsigned int level);
/* FG_PAL_WALL: the time-weighted mix of warm, blue and aqua by the on-CPU, off-CPU
 * (@off) and runqueue (@rq) parts of @width. */
struct rgb fg_color__wall(const struct flamegraph_opts *o, const char *s, size_t len,
			  uint64_t width, uint64_t off, uint64_t rq);
/* A differential frame: red for growth, blue for shrinkage, by @delta / @maxdelta. */
struct rgb fg_color__diff(double delta, double maxdelta);

/* --cp: names to colours, read from and written back to a palette file. */
struct cp_entry {
	const char *name;
	struct rgb c;
};

struct cpal {
	struct strset *strs;
	struct cp_entry *v; /* in order of arrival */
	size_t nr, cap;
	struct hashmap index; /* interned name (hash__u64) -> index in v[] + 1 */
	bool dirty;
};
/* 0, or -ENOMEM. */
int cpal__put(struct cpal *cp, const char *name, size_t len, struct rgb c);
/* The colour kept for @name, or NULL. */
const struct cp_entry *cpal__get(struct cpal *cp, const char *name, size_t len);
/* Reads @path ("name->rgb(r,g,b)" lines; a missing file is an empty palette). 0/-errno. */
int cpal__load(struct cpal *cp, const char *path);
/* Writes the palette back to @path if it changed, atomically. 0 or -errno. */
int cpal__save(struct cpal *cp, const char *path);
void cpal__free(struct cpal *cp);

#endif /* SCORCH_FLAMEGRAPH_PRIVATE_H */
