/* SPDX-License-Identifier: MIT */
/* flamegraph: folded stacks (build, read, write), SVG flame graphs and diffs. */
#ifndef SCORCH_FLAMEGRAPH_H
#define SCORCH_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The folded format (a contract; see README and DESIGN.md):
 *   one line per distinct stack: "frame;frame;...;frame COUNT\n", root first.
 *   Frames never contain ';' (replaced by ':'), '\n', '\r' (both removed) or NUL;
 *   other control bytes (0x01-0x1f including TAB, and 0x7f) are replaced by '?'.
 *   Bytes >= 0x80 are kept as they are (the SVG writer repairs invalid UTF-8).
 *   A frame that is empty after escaping is written "[empty]".
 *   COUNT is a decimal unsigned 64-bit integer, separated from the stack by one space.
 *   Lines are sorted bytewise (LC_ALL=C sort order) and identical stacks merged, so
 *   the output is deterministic.
 */

struct folded;

/* Returns an empty stack set, or NULL with errno set. */
struct folded *folded__new(void);
void folded__free(struct folded *f);

/*
 * Adds @count to the stack @frames[0..nr) (root first). Each frame is escaped as
 * above before it is stored; an empty frame name is stored as "[empty]".
 * Identical stacks merge (counts saturate at UINT64_MAX rather than wrap).
 * Returns 0, -EINVAL for nr == 0, -ENOMEM.
 */
int folded__add(struct folded *f, const char *const *frames, size_t nr, uint64_t count);

/* Writes every stack, sorted, in the folded format. Returns 0 or -errno (write error). */
int folded__write(const struct folded *f, FILE *out);

/* Number of distinct stacks and the sum of their counts (saturating). */
size_t folded__nr_stacks(const struct folded *f);
uint64_t folded__total(const struct folded *f);

#endif /* SCORCH_FLAMEGRAPH_H */
