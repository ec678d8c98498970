/* SPDX-License-Identifier: MIT */
/* profiler: top.c: scorch top's tables of the hottest functions and stacks, decayed */
#ifndef SCORCH_TOP_H
#define SCORCH_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flamegraph.h"

/*
 * What scorch top shows of the intervals' folded stacks ("comm;root;...;leaf COUNT"):
 * each function of each comm with its self share (the stacks it is the leaf of) and its
 * total share (the stacks it is in, once per stack however often it recurses), and the
 * whole stacks with theirs. Shares are of everything counted, [stack table full] and
 * stacks of a comm alone included.
 *
 * Exponentially decayed: at each interval what is held is multiplied by
 * 2^(-seconds / half_life), then the interval's counts are added; a count from t
 * seconds ago weighs 2^(-t / half_life). A half-life of 0 shows each interval alone
 * (a window). Bounded: at every interval the entries below TOP_MIN_SHARE of the
 * weight are dropped, then all but the max_functions or max_stacks largest, and the
 * stacks past TOP_MAX_STACK_BYTES of text; a table is built again from what it holds
 * once its dropped names outweigh the live ones. Memory follows the caps and one
 * interval's distinct stacks, never the length of the run. Not thread-safe.
 */
#define TOP_MAX_FUNCTIONS   8192
#define TOP_MAX_STACKS	    512
#define TOP_MAX_STACK_BYTES (4u << 20) /* of the stacks' text: 512 frames make 4 KiB */
#define TOP_MIN_SHARE	    1e-5       /* of the weight: entries below it are dropped */

enum top_view {
	TOP_SELF = 0, /* functions by self share */
	TOP_TOTAL,    /* functions by total share */
	TOP_STACKS,   /* whole stacks */
};

struct top_table_opts {
	size_t sz;	      /* sizeof(struct top_table_opts) */
	double half_life;     /* seconds; 0: each interval alone */
	size_t max_functions; /* entries kept (0: TOP_MAX_FUNCTIONS) */
	size_t max_stacks;    /* entries kept (0: TOP_MAX_STACKS) */
};

struct top_row {
	const char *comm; /* the stack's first frame; borrowed until top_table__add() */
	const char *name; /* the function, or TOP_STACKS the frames after the comm, root
			   * first, joined by ';' */
	double self;	  /* shares of the weight, in percent (TOP_STACKS: the stack's) */
	double total;
};

/* Returns an empty table with a copy of @o, or NULL with errno set (EINVAL, ENOMEM). */
struct top_table *top_table__new(const struct top_table_opts *o);
void top_table__free(struct top_table *t); /* NULL accepted */

/*
 * Ages what is held by @seconds (the interval's length), adds every stack of @f (one
 * interval's counts), then drops what fell below the share or past the caps. Returns 0
 * or -ENOMEM (the table may then hold a part of @f).
 */
int top_table__add(struct top_table *t, const struct folded *f, double seconds);

/*
 * The @max rows of view @v, largest first (ties by comm, then name), in @rows; *@nr
 * is how many (TOP_SELF: of the functions that were a leaf). Returns 0 or -ENOMEM.
 */
int top_table__rows(struct top_table *t, enum top_view v, struct top_row *rows, size_t max,
		    size_t *nr);

/* The decayed sum of every count added (the shares' denominator); 0: nothing yet. */
double top_table__weight(const struct top_table *t);
/* Entries held by the view's table (TOP_SELF and TOP_TOTAL share one). */
size_t top_table__size(const struct top_table *t, enum top_view v);
/* Bytes of names held, those of dropped entries not compacted away yet included. */
size_t top_table__bytes(const struct top_table *t);

#endif /* SCORCH_TOP_H */
