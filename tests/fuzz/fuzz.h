/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz: helpers shared by the libFuzzer targets (tests/<area>/fuzz_*.c, see
 * cmake/Sanitize.cmake and scripts/fuzz.sh): silence the logger and hand an input to code
 * that opens files by path, through a memfd.
 */
#ifndef SCORCH_TEST_FUZZ_H
#define SCORCH_TEST_FUZZ_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Formats every message (so its arguments are checked too) and drops it. */
static void fuzz__quiet(enum log_level level, const char *fmt, va_list ap)
{
	char buf[512];

	(void)level;
	vsnprintf(buf, sizeof(buf), fmt, ap);
}

/*
 * Messages of every level are part of what is fuzzed but not printed: FUZZ_VERBOSE=1 in
 * the environment prints them.
 */
static inline void fuzz__init_log(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	log__set_level(LOG_DEBUG);
	if (!getenv("FUZZ_VERBOSE"))
		log__set_fn(fuzz__quiet);
}

/*
 * Replaces the contents of one memfd (created on first use, named @name) with
 * @data[0..size) and writes "/proc/self/fd/N" to @path. Aborts on failure: the harness
 * cannot run without it.
 */
static inline void fuzz__memfd(const char *name, const void *data, size_t size, char *path,
			       size_t path_sz)
{
	static int fd = -1;
	const uint8_t *p = data;
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0))
		abort();
	while (off < size) {
		n = pwrite(fd, p + off, size - off, (off_t)off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	snprintf(path, path_sz, "/proc/self/fd/%d", fd);
}

#endif /* SCORCH_TEST_FUZZ_H */
