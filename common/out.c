// SPDX-License-Identifier: MIT
/* common: output files written atomically (temporary file + rename). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* The stream of a file written through a temporary: the first write error kept. */
struct out_sink {
	int fd;
	int err; /* errno of the first failed write, 0 */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t len)
{
	struct out_sink *k = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(k->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			if (!k->err)
				k->err = errno;
			return done ? (ssize_t)done : -1;
		}
		done += n;
	}
	return done;
}

static int sink_close(void *cookie)
{
	struct out_sink *k = cookie;

	if (k->fd >= 0 && close(k->fd) && errno != EINTR && !k->err)
		k->err = errno;
	k->fd = -1;
	return 0;
}

/*
 * "@base.tmp.PID.XXXXXX", the name of our temporaries of @base (written by
 * out__open()): returns the PID, or 0 when @name is not one.
 */
static pid_t tmp_name_pid(const char *name, const char *base)
{
	size_t n = strlen(base), i;
	const char *p, *dot;
	char num[16];
	long pid;

	if (strncmp(name, base, n) || strncmp(name + n, ".tmp.", 5))
		return 0;
	p = name + n + 5;
	dot = strchr(p, '.');
	if (!dot || dot == p || dot - p > 10 || strlen(dot + 1) != 6)
		return 0;
	for (i = 0; p + i < dot; i++)
		if (!isdigit((unsigned char)p[i]))
			return 0;
	for (i = 1; i <= 6; i++)
		if (!isxdigit((unsigned char)dot[i]))
			return 0;
	snprintf(num, sizeof(num), "%.*s", (int)(dot - p), p);
	if (parse__long(num, 1, INT_MAX, &pid))
		return 0;
	return (pid_t)pid;
}

/*
 * Removes the temporaries of @dest left by runs that died before out__close() (kill -9):
 * named as ours, regular files owned by us, their writer's PID gone and their lock free
 * (a live writer holds it). Never follows a symlink; another user's file is left alone.
 */
static void out_clean_stale(const char *dest)
{
	const char *slash = strrchr(dest, '/'), *base = slash ? slash + 1 : dest;
	char *dir = slash ? strndup(dest, MAX(slash - dest, 1)) : strdup(".");
	struct dirent *de;
	struct stat st;
	size_t removed = 0;
	DIR *d = NULL;
	pid_t pid;
	int fd;

	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		goto cleanup;
	}
	while ((de = readdir(d))) {
		pid = tmp_name_pid(de->d_name, base);
		if (!pid || !kill(pid, 0) || errno != ESRCH)
			continue;
		fd = openat(dirfd(d), de->d_name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    !flock(fd, LOCK_EX | LOCK_NB) && !unlinkat(dirfd(d), de->d_name, 0))
			removed++;
		close(fd);
	}
	if (removed)
		pr_debug("removed %zu stale temporary file(s) of %s\n", removed, dest);
cleanup:
	if (d)
		closedir(d);
	free(dir);
}

/* A new temporary next to out->path, mode 0666 & ~umask; returns its descriptor. */
static int out_create_tmp(struct out_file *out)
{
	unsigned int r;
	int fd = -1, i;

	for (i = 0; i < 100; i++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (unsigned int)time(NULL) * 2654435761u + (unsigned int)i;
		free(out->tmp_path);
		if (asprintf(&out->tmp_path, "%s.tmp.%d.%06x", out->path, (int)getpid(),
			     r & 0xffffff) < 0) {
			out->tmp_path = NULL;
			return -ENOMEM;
		}
		fd = open(out->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		fd = -errno;
		pr_err("cannot write %s: cannot create %s: %s\n", out->path, out->tmp_path,
		       strerror(-fd));
		if (!log__hint_open(out->path, fd, true))
			pr_hint("check that the directory of '%s' exists and is writable\n",
				out->path);
		free(out->tmp_path);
		out->tmp_path = NULL;
		return fd;
	}
	/* held until closed: tells out_clean_stale() of another run that we live */
	(void)flock(fd, LOCK_EX | LOCK_NB);
	return fd;
}

/* Gives the temporary @fd the mode and owner of the file @st it replaces. */
static int out_keep_mode(const struct out_file *out, int fd, const struct stat *st)
{
	struct stat now;
	int err;

	if (fstat(fd, &now))
		return -errno;
	if ((now.st_uid != st->st_uid || now.st_gid != st->st_gid) &&
	    fchown(fd, st->st_uid, st->st_gid)) {
		err = -errno;
		pr_err("cannot replace %s: cannot keep its owner (uid %u, gid %u): %s\n", out->path,
		       (unsigned int)st->st_uid, (unsigned int)st->st_gid, strerror(-err));
		pr_hint("remove '%s' first, or write to another file\n", out->path);
		return err;
	}
	if (fchmod(fd, st->st_mode & 0777)) {
		err = -errno;
		pr_err("cannot replace %s: cannot keep its mode %04o: %s\n", out->path,
		       (unsigned int)(st->st_mode & 0777), strerror(-err));
		return err;
	}
	return 0;
}

/* An existing device or FIFO (/dev/null, a pipe) @path, written in place. */
static int out_open_direct(struct out_file *out, const char *path)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC), err;

	if (fd < 0 || !(out->fp = fdopen(fd, "w"))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		pr_err("cannot open %s: %s\n", path, strerror(-err));
		return err;
	}
	out->direct = true;
	return 0;
}

int out__open(struct out_file *out, const char *path)
{
	cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
	struct stat st;
	bool replace = false;
	int fd = -1, err;

	memset(out, 0, sizeof(*out));
	if (!path || !strcmp(path, "-")) {
		out->fp = stdout;
		return 0;
	}
	if (!*path) {
		pr_err("the output file name is empty\n");
		pr_hint("give -o FILE, or -o - for standard output\n");
		return -EINVAL;
	}
	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		/* followed only when root or we own it, as fs.protected_symlinks does */
		if (st.st_uid && st.st_uid != geteuid()) {
			pr_err("cannot write %s: it is a symbolic link owned by uid %u\n", path,
			       (unsigned int)st.st_uid);
			pr_hint("a link another user owns is never followed: remove it, or "
				"write to another file\n");
			return -ELOOP;
		}
		/* /dev/stdout names a pipe or a terminal: no path to resolve */
		if (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return out_open_direct(out, path);
		out->path = realpath(path, NULL);
		if (!out->path) {
			err = -errno;
			pr_err("cannot write %s: cannot resolve the symbolic link: %s\n", path,
			       strerror(-err));
			return err;
		}
	} else {
		out->path = strdup(path);
		if (!out->path)
			return -ENOMEM;
	}
	if (!lstat(out->path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			pr_err("cannot write %s: it is a directory\n", path);
			err = -EISDIR;
			goto cleanup;
		}
		if (!S_ISREG(st.st_mode)) {
			err = out_open_direct(out, out->path);
			free(out->path);
			out->path = NULL;
			return err;
		}
		replace = true;
	} else if (errno != ENOENT) {
		err = -errno;
		pr_err("cannot write %s: %s\n", path, strerror(-err));
		log__hint_open(path, err, true);
		goto cleanup;
	}
	out_clean_stale(out->path);
	fd = out_create_tmp(out);
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	if (replace) {
		err = out_keep_mode(out, fd, &st);
		if (err)
			goto cleanup;
	}
	out->sink = calloc(1, sizeof(*out->sink));
	if (!out->sink) {
		err = -ENOMEM;
		goto cleanup;
	}
	out->sink->fd = fd;
	out->fp = fopencookie(out->sink, "w", io);
	if (!out->fp) {
		err = -errno;
		goto cleanup;
	}
	return 0;
cleanup:
	if (fd >= 0) {
		close(fd);
		unlink(out->tmp_path);
	}
	free(out->sink);
	free(out->path);
	free(out->tmp_path);
	memset(out, 0, sizeof(*out));
	return err;
}

int out__fail(struct out_file *out, int err)
{
	if (out->sink && out->sink->err)
		err = -out->sink->err;
	if (!err || out->reported)
		return err;
	pr_err("cannot write %s: %s\n", out->path ? out->path : "standard output", strerror(-err));
	out->reported = true;
	return err;
}

int out__close(struct out_file *out, bool commit)
{
	int err = 0;

	if (!out->fp)
		return 0;
	if (!out->path) {
		if (fflush(out->fp) || ferror(out->fp)) {
			err = -(errno ? errno : EIO);
			pr_err("cannot write to %s: %s\n", out->direct ? "the output" : "standard output",
			       strerror(-err));
		}
		if (out->direct && fclose(out->fp) && !err)
			err = -errno;
		memset(out, 0, sizeof(*out));
		return err;
	}
	if (fflush(out->fp) || ferror(out->fp))
		err = -(errno ? errno : EIO);
	if (commit && !err && fsync(out->sink->fd))
		err = -errno;
	fclose(out->fp);
	/* a write error is reported even when not committing: the caller may not know it */
	if (out->sink->err || (commit && err))
		err = out__fail(out, err);
	else if (!commit)
		err = 0;
	if (commit && !err && rename(out->tmp_path, out->path)) {
		err = -errno;
		pr_err("cannot rename %s to %s: %s\n", out->tmp_path, out->path, strerror(-err));
	}
	if (!commit || err)
		unlink(out->tmp_path);
	free(out->sink);
	free(out->path);
	free(out->tmp_path);
	memset(out, 0, sizeof(*out));
	return err;
}
