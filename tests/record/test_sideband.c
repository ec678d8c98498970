// SPDX-License-Identifier: MIT
/*
 * tests/record: the kernel's fork/exec/mmap records (profiler/sideband.c), read for real
 * (root: perf_event_open of dummy events on every CPU; exits 77 without, a failure under
 * CI=true). Workloads known by construction, all in children of this test:
 *  - this test exec'd again ("forkmap": an image on record), whose fork child maps a
 *    file executable at a fixed address, then another file over the middle of it: the
 *    child's image has its parent's executable mappings (this test's own text), the
 *    first file cut in two around the second (pgoff moved for the right part), and the
 *    image is still there after both exited;
 *  - a fork child of this test (begun before: not on record) that execs /bin/true: not
 *    known before the exec, after it an image with true's text and no mapping of this
 *    test;
 *  - a 4-page ring: 5 mmaps of an image on record (this test exec'd again) fit and
 *    the image is known; 500 (not drained) overflow it: the image is not known
 *    (-ENOENT), and the full ring is counted;
 *  - a process begun before the events were opened is not known.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "common.h"
#include "engine.h"
#include "sideband.h"

#define BASE 0x7e0000000000ULL
#define PAGE 4096ULL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A file of @pages pages at @path. */
static void make_file(const char *path, size_t pages)
{
	static char buf[PAGE];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t i;

	CHECK(fd >= 0);
	for (i = 0; i < pages; i++)
		CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	close(fd);
}

static void map_at(const char *path, uint64_t addr, size_t pages, uint64_t off)
{
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0)
		_exit(2);
	p = mmap((void *)addr, pages * PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
		 off);
	if (p == MAP_FAILED)
		_exit(3);
	close(fd);
}

static pid_t wait_child(pid_t pid)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return pid;
}

static const struct symbolizer_vma *find_path(const struct symbolizer_vma *v, size_t n,
					      const char *suffix)
{
	size_t i, l = strlen(suffix), pl;

	for (i = 0; i < n; i++) {
		pl = strlen(v[i].path);
		if (pl >= l && !strcmp(v[i].path + pl - l, suffix))
			return &v[i];
	}
	return NULL;
}

/* argv: forkmap FA FB: forks a child that maps FA, then FB over its middle; prints its PID */
static int forkmap(const char *fa, const char *fb)
{
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (!pid) {
		map_at(fa, BASE, 8, 0);
		map_at(fb, BASE + 3 * PAGE, 2, 0);
		_exit(0);
	}
	wait_child(pid);
	printf("%d\n", (int)pid);
	return 0;
}

/* argv: mapn N FA: maps a page of FA executable N times over 8 pages, then exits */
static int mapn(int n, const char *fa)
{
	int i;

	for (i = 0; i < n; i++)
		map_at(fa, BASE + (i % 8) * PAGE, 1, (i % 8) * PAGE);
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/scorch-sbXXXXXX", fa[64], fb[64], self[4096];
	const struct symbolizer_vma *v, *a, *b;
	struct sideband_stats st;
	struct sideband *sb = NULL;
	uint64_t t_mid;
	uint32_t version, version2;
	size_t n, i, nr_a;
	ssize_t sl;
	pid_t pid;
	long num;
	int err, pfd[2];

	if (argc == 4 && !strcmp(argv[1], "forkmap"))
		return forkmap(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "mapn"))
		return parse__long(argv[2], 0, 100000, &num) ? 1 : mapn((int)num, argv[3]);
	err = sideband__open(64 * 1024, &sb);
	if (err == -EACCES || err == -EPERM || err == -ENOSYS || err == -ENOENT) {
		fprintf(stderr, "SKIP: cannot open perf events: %s\n", strerror(-err));
		return getenv("CI") && !strcmp(getenv("CI"), "true") ? 1 : 77;
	}
	CHECK(err == 0 && sb);
	CHECK(mkdtemp(dir));
	snprintf(fa, sizeof(fa), "%s/a.bin", dir);
	snprintf(fb, sizeof(fb), "%s/b.bin", dir);
	make_file(fa, 8);
	make_file(fb, 2);
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(sl > 0);
	self[sl] = '\0';

	/* 1. exec'd again, forks: a file mapped, another over its middle, exit */
	CHECK(pipe(pfd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execl(self, self, "forkmap", fa, fb, (char *)NULL);
		_exit(6);
	}
	close(pfd[1]);
	wait_child(pid);
	{
		char line[32] = "";

		CHECK(read(pfd[0], line, sizeof(line) - 1) > 0);
		line[strcspn(line, "\n")] = '\0';
		CHECK(!parse__long(line, 1, INT32_MAX, &num));
		pid = (pid_t)num;
	}
	close(pfd[0]);
	CHECK(sideband__drain(sb) == 0);
	CHECK(sideband__image(sb, pid, now_ns(), &v, &n, &version) == 0);
	CHECK(version != 0);
	CHECK(sideband__drain(sb) == 0);
	CHECK(sideband__image(sb, pid, now_ns(), &v, &n, &version2) == 0);
	CHECK(version2 == version); /* nothing mapped since */
	for (i = 1; i < n; i++)
		CHECK(v[i - 1].end <= v[i].start); /* sorted, not overlapping */
	CHECK(find_path(v, n, self) != NULL);	   /* the parent's text, by the fork */
	for (i = 0, nr_a = 0; i < n; i++) {
		if (strcmp(v[i].path, fa))
			continue;
		nr_a++;
		CHECK(v[i].exec && v[i].inode != 0);
		if (v[i].start == BASE) {
			CHECK(v[i].end == BASE + 3 * PAGE && v[i].pgoff == 0);
		} else {
			CHECK(v[i].start == BASE + 5 * PAGE && v[i].end == BASE + 8 * PAGE);
			CHECK(v[i].pgoff == 5 * PAGE);
		}
	}
	CHECK(nr_a == 2);
	b = find_path(v, n, "/b.bin");
	CHECK(b && b->start == BASE + 3 * PAGE && b->end == BASE + 5 * PAGE && b->pgoff == 0);

	/* 2. fork (of an image not on record), then exec /bin/true: known from the exec */
	CHECK(pipe(pfd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		char c;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(4);
		execl("/bin/true", "true", (char *)NULL);
		_exit(5);
	}
	close(pfd[0]);
	/* the fork record is written before the child runs: drained, it is there */
	CHECK(sideband__drain(sb) == 0);
	t_mid = now_ns();
	CHECK(write(pfd[1], "x", 1) == 1);
	close(pfd[1]);
	wait_child(pid);
	CHECK(sideband__drain(sb) == 0);
	CHECK(sideband__image(sb, pid, t_mid, &v, &n, NULL) == -ENOENT);
	CHECK(sideband__image(sb, pid, now_ns(), &v, &n, NULL) == 0);
	a = find_path(v, n, "/true");
	CHECK(a && a->exec && a->inode != 0);
	CHECK(find_path(v, n, self) == NULL);
	CHECK(find_path(v, n, "[vdso]") != NULL);
	sideband__stats(sb, &st);
	CHECK(st.execs >= 2 && st.forks >= 3 && st.lost == 0);

	/* 3. a process begun before the events were opened: not known */
	CHECK(sideband__image(sb, getpid(), now_ns(), &v, &n, NULL) == -ENOENT);
	CHECK(sideband__image(sb, 1, now_ns(), &v, &n, NULL) == -ENOENT);
	sideband__free(sb);

	/* 4. a ring of 4 pages: 5 mmaps of an image on record fit, 500 overflow it (not
	 *    drained meanwhile): that image is not known, and the full ring is counted */
	for (i = 0; i < 2; i++) {
		const char *count = i ? "500" : "5";

		CHECK(sideband__open(4 * PAGE, &sb) == 0);
		pid = fork();
		CHECK(pid >= 0);
		if (!pid) {
			execl(self, self, "mapn", count, fa, (char *)NULL);
			_exit(6);
		}
		wait_child(pid);
		CHECK(sideband__drain(sb) == 0);
		sideband__stats(sb, &st);
		err = sideband__image(sb, pid, now_ns(), &v, &n, NULL);
		if (!i) {
			CHECK(err == 0 && st.rings_full == 0);
			CHECK(find_path(v, n, fa) != NULL);
		} else {
			CHECK(err == -ENOENT);
			/* the LOST record waits for the kernel's next record on that CPU */
			CHECK(st.rings_full > 0);
		}
		sideband__free(sb);
	}

	unlink(fa);
	unlink(fb);
	rmdir(dir);
	printf("PASS\n");
	return 0;
}
