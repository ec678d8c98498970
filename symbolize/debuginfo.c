// SPDX-License-Identifier: MIT
/* symbolize: separate debug files, found by build-id or .gnu_debuglink as gdb does. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize-private.h"

#define DEBUGFILE_MAX_BYTES (4ull << 30)

/* Opens @path read-only without following any symlink on the way; regular files only. */
static int open_nofollow(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd;

	fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > DEBUGFILE_MAX_BYTES) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* A candidate is the debug file of @f only if its build-id (when both have one) matches. */
static bool build_id_matches(const struct elf_file *f, int fd, const char *path)
{
	uint8_t id[BUILD_ID_MAX];
	size_t len = 0;

	if (elf_file__read_build_id(fd, id, &len))
		return false;
	if (!f->build_id_len || !len)
		return true;
	if (len != f->build_id_len || memcmp(id, f->build_id, len)) {
		pr_warn("symbolize: %s: build-id differs from %s, not used\n", path,
			f->path ? f->path : "the binary");
		return false;
	}
	return true;
}

static bool crc_matches(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return n == 0 && (uint32_t)crc == want;
}

static int try_path(const struct elf_file *f, const char *path, bool check_crc)
{
	int fd = open_nofollow(path);

	if (fd < 0)
		return fd;
	if (check_crc && !crc_matches(fd, f->debuglink_crc)) {
		pr_debug("symbolize: %s: CRC does not match the debuglink of %s\n", path,
			 f->path ? f->path : "?");
		close(fd);
		return -ENOENT;
	}
	if (!build_id_matches(f, fd, path)) {
		close(fd);
		return -ENOENT;
	}
	pr_debug("symbolize: debug file of %s: %s\n", f->path ? f->path : "?", path);
	return fd;
}

int debuginfo__open(const struct elf_file *f, const char *root)
{
	char path[PATH_MAX], dir[PATH_MAX], hex[2 * BUILD_ID_MAX + 1];
	const char *slash;
	size_t i;
	int fd;

	if (f->build_id_len >= 2) {
		for (i = 0; i < f->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", f->build_id[i]);
		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2) <
		    (int)sizeof(path)) {
			fd = try_path(f, path, false);
			if (fd >= 0)
				return fd;
		}
	}
	if (!f->debuglink || !f->path || f->path[0] != '/')
		return -ENOENT;
	slash = strrchr(f->path, '/');
	if ((size_t)(slash - f->path) >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, f->path, slash - f->path);
	dir[slash - f->path] = '\0';
	/* the same directory, its .debug/, then the global root mirroring the directory */
	if (snprintf(path, sizeof(path), "%s/%s", dir, f->debuglink) < (int)sizeof(path) &&
	    strcmp(path, f->path)) {
		fd = try_path(f, path, true);
		if (fd >= 0)
			return fd;
	}
	if (snprintf(path, sizeof(path), "%s/.debug/%s", dir, f->debuglink) < (int)sizeof(path)) {
		fd = try_path(f, path, true);
		if (fd >= 0)
			return fd;
	}
	if (snprintf(path, sizeof(path), "%s%s/%s", root, dir, f->debuglink) < (int)sizeof(path)) {
		fd = try_path(f, path, true);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}
