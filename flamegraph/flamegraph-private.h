/* SPDX-License-Identifier: MIT */
/* flamegraph: internals shared by folded.c, the reader and the SVG writer. */
#ifndef SCORCH_FLAMEGRAPH_PRIVATE_H
#define SCORCH_FLAMEGRAPH_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "flamegraph.h"

#define FOLDED_EMPTY_FRAME "[empty]"

/*
 * Escapes @name into @dst as the folded contract says and returns the length
 * written (not NUL-terminated). @dst must hold MAX(strlen(name), 7) bytes.
 */
size_t folded__escape_frame(char *dst, const char *name);

/* Calls @fn for every stack in bytewise order; stops at and returns the first nonzero. */
typedef int (*folded_each_fn)(const char *line, size_t len, uint64_t count, void *ctx);
int folded__for_each(const struct folded *f, folded_each_fn fn, void *ctx);

#endif /* SCORCH_FLAMEGRAPH_PRIVATE_H */
