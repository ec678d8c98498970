// SPDX-License-Identifier: MIT
/* common: output files written atomically (temporary file + rename). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int out__open(struct out_file *out, const char *path)
{
	struct stat st;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (!path || !strcmp(path, "-")) {
		out->fp = stdout;
		return 0;
	}
	/* a device or FIFO (/dev/null, a pipe) is written in place, never replaced */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			pr_err("cannot write %s: it is a directory\n", path);
			return -EISDIR;
		}
		out->fp = fopen(path, "we");
		if (!out->fp) {
			err = -errno;
			pr_err("cannot open %s: %s\n", path, strerror(errno));
			return err;
		}
		out->direct = true;
		return 0;
	}
	out->path = strdup(path);
	if (!out->path || asprintf(&out->tmp_path, "%s.tmp.XXXXXX", path) < 0) {
		out->tmp_path = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	fd = mkstemp(out->tmp_path);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot create %s: %s\n", out->tmp_path, strerror(errno));
		pr_hint("check that the directory of '%s' exists and is writable\n", path);
		goto cleanup;
	}
	(void)fchmod(fd, 0644);
	out->fp = fdopen(fd, "w");
	if (!out->fp) {
		err = -errno;
		close(fd);
		unlink(out->tmp_path);
		goto cleanup;
	}
	return 0;
cleanup:
	free(out->path);
	free(out->tmp_path);
	memset(out, 0, sizeof(*out));
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
	if (commit && (fflush(out->fp) || ferror(out->fp) || fsync(fileno(out->fp)))) {
		err = -(errno ? errno : EIO);
		pr_err("cannot write %s: %s\n", out->tmp_path, strerror(-err));
	}
	if (fclose(out->fp) && !err && commit) {
		err = -errno;
		pr_err("cannot write %s: %s\n", out->tmp_path, strerror(-err));
	}
	if (commit && !err && rename(out->tmp_path, out->path)) {
		err = -errno;
		pr_err("cannot rename %s to %s: %s\n", out->tmp_path, out->path, strerror(-err));
	}
	if (!commit || err)
		unlink(out->tmp_path);
	free(out->path);
	free(out->tmp_path);
	memset(out, 0, sizeof(*out));
	return err;
}
