// SPDX-License-Identifier: MIT
/* flamegraph: opens folded input, plain or gzip/zstd-compressed (by magic), as a stdio stream. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "common.h"
#include "flamegraph.h"

#define IN_BUF (64u << 10)

enum zin_kind {
	ZIN_PLAIN,
	ZIN_GZIP,
	ZIN_ZSTD,
};

struct zin {
	int fd;
	bool own_fd;
	char *name;
	enum zin_kind kind;
	unsigned char *in;
	size_t in_len, in_pos;
	bool eof, failed;
	z_stream z;
	bool z_init, z_member_done;
	ZSTD_DStream *zs;
	size_t zs_hint;	 /* last ZSTD_decompressStream() result: 0 when a frame is complete */
	bool zs_pending; /* the last call filled the output: it may hold more */
};

static const char *kind_name(enum zin_kind k)
{
	return k == ZIN_GZIP ? "gzip" : k == ZIN_ZSTD ? "zstd" : "plain";
}

/* Reads more raw input when all of it was consumed. Returns 0 (check zin->eof) or -errno. */
static int zin_fill(struct zin *zi)
{
	ssize_t n;

	if (zi->in_pos < zi->in_len || zi->eof)
		return 0;
	do {
		n = read(zi->fd, zi->in, IN_BUF);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	zi->in_pos = 0;
	zi->in_len = (size_t)n;
	zi->eof = n == 0;
	return 0;
}

/* A corrupt or truncated stream: logged once with the file name; every later read fails too. */
static ssize_t zin_bad(struct zin *zi, const char *what, const char *detail)
{
	if (!zi->failed) {
		pr_err("flamegraph: %s: %s %s%s%s\n", zi->name, what, kind_name(zi->kind),
		       detail ? ": " : "", detail ? detail : "");
		pr_hint("the file is damaged or was still being written; nothing of it was used\n");
	}
	zi->failed = true;
	errno = EBADMSG;
	return -1;
}

static ssize_t read_gzip(struct zin *zi, char *buf, size_t size)
{
	int ret, err;

	for (;;) {
		if (zi->z_member_done) {
			/* another gzip member may follow (concatenated .gz files) */
			err = zin_fill(zi);
			if (err)
				goto io_err;
			if (zi->eof)
				return 0;
			if (inflateReset(&zi->z) != Z_OK)
				return zin_bad(zi, "cannot restart", zi->z.msg);
			zi->z_member_done = false;
		}
		zi->z.next_in = zi->in + zi->in_pos;
		zi->z.avail_in = (uInt)(zi->in_len - zi->in_pos);
		zi->z.next_out = (Bytef *)buf;
		zi->z.avail_out = (uInt)size;
		ret = inflate(&zi->z, Z_NO_FLUSH);
		zi->in_pos = zi->in_len - zi->z.avail_in;
		if (ret == Z_STREAM_END)
			zi->z_member_done = true;
		else if (ret != Z_OK && ret != Z_BUF_ERROR)
			return zin_bad(zi, "corrupt", zi->z.msg ? zi->z.msg : "inflate failed");
		if (zi->z.avail_out < size)
			return (ssize_t)(size - zi->z.avail_out);
		if (zi->z_member_done)
			continue;
		err = zin_fill(zi);
		if (err)
			goto io_err;
		if (zi->eof)
			return zin_bad(zi, "truncated", NULL);
	}
io_err:
	errno = -err;
	return -1;
}

static ssize_t read_zstd(struct zin *zi, char *buf, size_t size)
{
	ZSTD_outBuffer out = {buf, size, 0};
	ZSTD_inBuffer in;
	size_t r;
	int err;

	for (;;) {
		/* with no input, call again only when the last call may hold output back */
		if (zi->in_pos == zi->in_len && !zi->zs_pending) {
			err = zin_fill(zi);
			if (err) {
				errno = -err;
				return -1;
			}
			if (zi->eof)
				return zi->zs_hint ? zin_bad(zi, "truncated", NULL) : 0;
		}
		in = (ZSTD_inBuffer){zi->in, zi->in_len, zi->in_pos};
		r = ZSTD_decompressStream(zi->zs, &out, &in);
		zi->in_pos = in.pos;
		if (ZSTD_isError(r))
			return zin_bad(zi, "corrupt", ZSTD_getErrorName(r));
		zi->zs_hint = r;
		zi->zs_pending = r && out.pos == out.size;
		if (out.pos)
			return (ssize_t)out.pos;
	}
}

static ssize_t zin_read(void *cookie, char *buf, size_t size)
{
	struct zin *zi = cookie;
	size_t n;
	int err;

	if (zi->failed) {
		errno = EBADMSG;
		return -1;
	}
	if (size > UINT32_MAX)
		size = UINT32_MAX;
	switch (zi->kind) {
	case ZIN_GZIP:
		return read_gzip(zi, buf, size);
	case ZIN_ZSTD:
		return read_zstd(zi, buf, size);
	default:
		err = zin_fill(zi);
		if (err) {
			errno = -err;
			return -1;
		}
		n = MIN(size, zi->in_len - zi->in_pos);
		memcpy(buf, zi->in + zi->in_pos, n);
		zi->in_pos += n;
		return (ssize_t)n;
	}
}

static int zin_close(void *cookie)
{
	struct zin *zi = cookie;

	if (!zi)
		return 0;
	if (zi->z_init)
		inflateEnd(&zi->z);
	ZSTD_freeDStream(zi->zs);
	if (zi->own_fd && zi->fd >= 0)
		close(zi->fd);
	free(zi->in);
	free(zi->name);
	free(zi);
	return 0;
}

/* Reads up to 4 bytes for the magic, keeping them as the first input. */
static int zin_peek(struct zin *zi)
{
	ssize_t n;

	while (zi->in_len < 4) {
		n = read(zi->fd, zi->in + zi->in_len, 4 - zi->in_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		zi->in_len += (size_t)n;
	}
	if (zi->in_len >= 2 && zi->in[0] == 0x1f && zi->in[1] == 0x8b)
		zi->kind = ZIN_GZIP;
	else if (zi->in_len == 4 && zi->in[0] == 0x28 && zi->in[1] == 0xb5 && zi->in[2] == 0x2f &&
		 zi->in[3] == 0xfd)
		zi->kind = ZIN_ZSTD;
	return 0;
}

int folded_input__open(const char *path, FILE **out)
{
	static const cookie_io_functions_t io = {.read = zin_read, .close = zin_close};
	bool is_stdin = !path || !strcmp(path, "-");
	const char *name = is_stdin ? "<stdin>" : path;
	struct zin *zi = NULL;
	FILE *fp;
	int err = 0;

	*out = NULL;
	zi = calloc(1, sizeof(*zi));
	if (!zi)
		goto nomem;
	zi->fd = -1;
	zi->name = strdup(name);
	zi->in = malloc(IN_BUF);
	if (!zi->name || !zi->in)
		goto nomem;
	if (is_stdin) {
		zi->fd = STDIN_FILENO;
	} else {
		zi->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (zi->fd < 0) {
			err = -errno;
			pr_err("flamegraph: cannot open %s: %s\n", path, strerror(-err));
			if (!log__hint_open(path, err, false))
				pr_hint("check the file name; '-' or no file reads standard "
					"input\n");
			goto cleanup;
		}
		zi->own_fd = true;
	}
	err = zin_peek(zi);
	if (err) {
		pr_err("flamegraph: cannot read %s: %s\n", name, strerror(-err));
		goto cleanup;
	}
	if (zi->kind == ZIN_GZIP) {
		/* 15 + 32: any window size, gzip or zlib header detected */
		if (inflateInit2(&zi->z, 15 + 32) != Z_OK)
			goto nomem;
		zi->z_init = true;
	} else if (zi->kind == ZIN_ZSTD) {
		zi->zs = ZSTD_createDStream();
		if (!zi->zs || ZSTD_isError(ZSTD_initDStream(zi->zs)))
			goto nomem;
		zi->zs_hint = 1;
	}
	fp = fopencookie(zi, "r", io);
	if (!fp)
		goto nomem;
	pr_debug("flamegraph: reading %s (%s)\n", name, kind_name(zi->kind));
	*out = fp;
	return 0;
nomem:
	err = -ENOMEM;
	pr_err("flamegraph: out of memory opening %s\n", name);
cleanup:
	zin_close(zi);
	return err;
}
