// SPDX-License-Identifier: MIT
/* tests/symbolize: what the ELF tests share (elf-test.h). */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "elf-test.h"

struct frame user(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return)
{
	struct frame fr;

	CHECK(symbolizer__user(s, pid, ip, is_return, &fr, 1) == 1);
	CHECK(fr.name);
	CHECK(fr.kind == FRAME_SYMBOL || fr.kind == FRAME_MODULE || fr.kind == FRAME_UNKNOWN ||
	      fr.kind == FRAME_JIT);
	return fr;
}

bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

void check_sym(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return, const char *name,
	       uint64_t offset, const char *module_suffix, const char *file, int line)
{
	struct frame fr = user(s, pid, ip, is_return);

	if (fr.kind != FRAME_SYMBOL || strcmp(fr.name, name) || fr.offset != offset ||
	    !ends_with(fr.module, module_suffix)) {
		fprintf(stderr,
			"%s:%d: %#" PRIx64 "%s: got %s+%#" PRIx64 " (%s, kind %d), want "
			"%s+%#" PRIx64 " (*%s)\n",
			file, line, ip, is_return ? " (return)" : "", fr.name, fr.offset,
			fr.module ? fr.module : "no module", fr.kind, name, offset, module_suffix);
		exit(1);
	}
}

void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	CHECK(!close(fd));
}

void *read_whole(const char *path, size_t *len)
{
	char *buf;

	CHECK(!file__read_bounded(AT_FDCWD, path, 64u << 20, &buf, len));
	return buf;
}

/* Maps @path executable in this process; returns the address. */
uint64_t map_exec(const char *path, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	CHECK(fd >= 0);
	p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	close(fd);
	return (uintptr_t)p;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}
