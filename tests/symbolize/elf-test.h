/* SPDX-License-Identifier: MIT */
/* tests/symbolize: what the ELF tests share: checked lookups, files written, read and mapped. */
#ifndef SCORCH_TEST_ELF_TEST_H
#define SCORCH_TEST_ELF_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize-private.h"

/* The one frame symbolizer__user() gives for @ip of @pid, checked to be well-formed. */
struct frame user(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return);

/* True if @s (NULL: false) ends with @suffix. */
bool ends_with(const char *s, const char *suffix);

/* Exits, saying where (@file:@line), unless @ip of @pid is @name+@offset in a module whose
 * path ends with @module_suffix. */
void check_sym(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return, const char *name,
	       uint64_t offset, const char *module_suffix, const char *file, int line);

#define CHECK_SYM(s, pid, ip, ret, name, off, mod)                                                 \
	check_sym(s, pid, ip, ret, name, off, mod, __FILE__, __LINE__)

/* Writes @data[0..len) to @path, created or truncated. */
void write_file(const char *path, const void *data, size_t len);

/* The contents of @path (malloc'ed, at most 64 MiB); their length in *@len. */
void *read_whole(const char *path, size_t *len);

/* Maps @path executable in this process; returns the address. */
uint64_t map_exec(const char *path, size_t len);

/* The next number of a fixed xorshift sequence: the same in every run of a test. */
uint64_t rng(void);

#endif /* SCORCH_TEST_ELF_TEST_H */
