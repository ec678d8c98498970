// SPDX-License-Identifier: MIT
/* tests/common: output files (common/out.c): modes, owners, links, ENOSPC, temporaries. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common.h"

#define OTHER_UID 4242

static char dir[] = "/tmp/scorch-test-out.XXXXXX";
static char path[4096];

static const char *at(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* Writes @text to @name through out__open()/out__close(commit). */
static int put(const char *name, const char *text)
{
	struct out_file o;
	int err = out__open(&o, at(name));

	if (err)
		return err;
	fputs(text, o.fp);
	return out__close(&o, true);
}

static mode_t mode_of(const char *name)
{
	struct stat st;

	CHECK(!lstat(at(name), &st));
	return st.st_mode & 07777;
}

/* Entries of directory @in whose name starts with @prefix ("" and "." included). */
static int count_in(const char *in, const char *prefix)
{
	DIR *d = opendir(in);
	struct dirent *de;
	int n = 0;

	CHECK(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static char *slurp(const char *p)
{
	char *buf = NULL;
	size_t len;

	CHECK(!file__read_bounded(AT_FDCWD, p, 1 << 20, &buf, &len));
	return buf;
}

/* New files: 0666 & ~umask, as any tool; "" is refused. */
static void test_modes(void)
{
	struct out_file o;
	mode_t old = umask(027);

	CHECK(!put("a", "x\n"));
	CHECK_U64(mode_of("a"), 0640);
	umask(0);
	CHECK(!put("b", "x\n"));
	CHECK_U64(mode_of("b"), 0666);
	umask(077);
	CHECK(!put("c", "x\n"));
	CHECK_U64(mode_of("c"), 0600);
	umask(old);
	CHECK(out__open(&o, "") == -EINVAL && !o.fp);
}

/* A replaced file keeps its mode (and, as root, its owner); a directory is refused. */
static void test_replace(void)
{
	struct stat st;
	char *text;

	CHECK(!put("r", "one\n"));
	CHECK(!chmod(at("r"), 0600));
	CHECK(!put("r", "two\n"));
	CHECK_U64(mode_of("r"), 0600);
	text = slurp(at("r"));
	CHECK_STR(text, "two\n");
	free(text);
	CHECK(!mkdir(at("d"), 0755));
	CHECK(put("d", "x\n") == -EISDIR);
	if (geteuid())
		return;
	CHECK(!chown(at("r"), OTHER_UID, OTHER_UID));
	CHECK(!chmod(at("r"), 0604));
	CHECK(!put("r", "three\n"));
	CHECK(!lstat(at("r"), &st));
	CHECK_U64(st.st_uid, OTHER_UID);
	CHECK_U64(st.st_gid, OTHER_UID);
	CHECK_U64(st.st_mode & 07777, 0604);
}

/* Links: ours followed (the file it names replaced, the link kept); another user's refused. */
static void test_links(void)
{
	struct stat st;
	char *text;

	CHECK(!put("target", "t\n"));
	CHECK(!symlink("target", at("mine")));
	CHECK(!put("mine", "through\n"));
	CHECK(!lstat(at("mine"), &st) && S_ISLNK(st.st_mode));
	text = slurp(at("target"));
	CHECK_STR(text, "through\n");
	free(text);
	if (geteuid())
		return;
	CHECK(!symlink("target", at("theirs")));
	CHECK(!lchown(at("theirs"), OTHER_UID, OTHER_UID));
	CHECK(put("theirs", "no\n") == -ELOOP);
	CHECK(!lstat(at("theirs"), &st) && S_ISLNK(st.st_mode));
	text = slurp(at("target"));
	CHECK_STR(text, "through\n");
	free(text);
	CHECK_U64(count_in(dir, "theirs.tmp."), 0);
}

/*
 * Temporaries of a run killed while writing are removed by the next open of the same
 * file; one of a live run, another user's, and a link named like one are left alone.
 */
static void test_stale(void)
{
	struct out_file o;
	int ready[2], status;
	char c;
	pid_t pid, live;

	/* a run killed with its temporary written */
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (out__open(&o, at("s")))
			_exit(1);
		fputs("partial\n", o.fp);
		fflush(o.fp);
		raise(SIGKILL);
		_exit(1);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
	CHECK_U64(count_in(dir, "s.tmp."), 1);
	/* a live run, its temporary open */
	CHECK(!pipe(ready));
	live = fork();
	CHECK(live >= 0);
	if (!live) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check must not leave it behind */
		close(ready[0]);
		if (out__open(&o, at("s")))
			_exit(1);
		CHECK(write(ready[1], "r", 1) == 1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	/* its open removed the killed run's temporary: its own is the one left */
	CHECK_U64(count_in(dir, "s.tmp."), 1);
	if (!geteuid()) {
		/* another user's, named as a dead run's: never ours to remove */
		snprintf(path, sizeof(path), "%s/s.tmp.%d.abcdef", dir, (int)pid);
		CHECK(!close(open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)));
		CHECK(!chown(path, OTHER_UID, OTHER_UID));
	}
	snprintf(path, sizeof(path), "%s/s.tmp.%d.fedcba", dir, (int)pid);
	CHECK(!symlink("target", path));
	CHECK(!put("s", "whole\n"));
	/* the live run's, the link and another user's are left */
	CHECK_U64(count_in(dir, "s.tmp."), geteuid() ? 2 : 3);
	CHECK(mode_of("target") != 0 && !kill(live, 0));
	CHECK(!kill(live, SIGKILL) && waitpid(live, &status, 0) == live);
	CHECK(!put("s", "again\n"));
	CHECK_U64(count_in(dir, "s.tmp."), geteuid() ? 1 : 2);
}

/* A full file system: "No space left on device", once, with the file's name. */
static void test_enospc(void)
{
	char full[4096], err_path[4096], *text, *p;
	struct out_file o;
	int saved, fd, i, err, n;

	if (geteuid()) {
		printf("enospc: skipped (a tmpfs needs root)\n");
		return;
	}
	snprintf(full, sizeof(full), "%s/full", dir);
	CHECK(!mkdir(full, 0755));
	if (mount("tmpfs", full, "tmpfs", 0, "size=16k")) {
		printf("enospc: skipped (cannot mount a tmpfs: %s)\n", strerror(errno));
		return;
	}
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0 && dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	close(fd);

	/* a writer that saw only the stream's error flag (-EIO), then closes uncommitted */
	CHECK(!out__open(&o, at("full/a")));
	for (i = 0; i < 4096; i++)
		fputs("0123456789abcdef0123456789abcdef\n", o.fp);
	fflush(o.fp);
	CHECK(ferror(o.fp));
	err = out__fail(&o, -EIO);
	CHECK(err == -ENOSPC);
	CHECK(out__close(&o, false) == -ENOSPC);
	/* a writer that saw nothing: the commit reports it */
	CHECK(!out__open(&o, at("full/b")));
	for (i = 0; i < 4096; i++)
		fputs("0123456789abcdef0123456789abcdef\n", o.fp);
	CHECK(out__close(&o, true) == -ENOSPC);

	fflush(stderr);
	CHECK(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
	close(saved);
	text = slurp(err_path);
	fputs(text, stderr);
	for (n = 0, p = text; (p = strstr(p, "No space left on device")); p++)
		n++;
	CHECK(n == 2);
	snprintf(path, sizeof(path), "cannot write %s/full/a: No space left on device\n", dir);
	CHECK(strstr(text, path));
	snprintf(path, sizeof(path), "cannot write %s/full/b: No space left on device\n", dir);
	CHECK(strstr(text, path));
	CHECK(!strstr(text, "Input/output error"));
	free(text);
	/* nothing left behind */
	CHECK_U64(count_in(full, ""), 2); /* "." and ".." */
	CHECK(!umount(full));
}

int main(void)
{
	char cmd[4200];

	CHECK(mkdtemp(dir));
	test_modes();
	test_replace();
	test_links();
	test_stale();
	test_enospc();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(!system(cmd));
	printf("ok\n");
	return 0;
}
