// SPDX-License-Identifier: MIT
/*
 * tests/perfmap: struct perfmaps on a fixture /proc tree (growth between refreshes,
 * rewrites, replacement, exit, caps, symlinks, foreign owners, FIFOs, jitdump discovery)
 * and on a real child process that writes /tmp/perf-PID.map and maps a jitdump.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../symbolize/check.h"
#include "jitdump-writer.h"
#include "perfmap.h"
#include "common.h"

#define FAKE_PID 4000
#define NSPID	 7

static char dir[256]; /* the fixture /proc */
static int warnings, hints;
static char last_warning[1024];

static void log_sink(enum log_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (strstr(buf, "hint: ") == buf) {
		hints++;
	} else if (level == LOG_WARN) {
		warnings++;
		snprintf(last_warning, sizeof(last_warning), "%s", buf);
	}
	if (getenv("VERBOSE"))
		fputs(buf, stderr);
}

static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	CHECK(system(cmd) == 0);
}

static void put(const char *path, const char *mode, const void *data, size_t len)
{
	FILE *f = fopen(path, mode);

	CHECK(f);
	CHECK(fwrite(data, 1, len, f) == len);
	CHECK(fclose(f) == 0);
}

static void puts_file(const char *path, const char *mode, const char *s)
{
	put(path, mode, s, strlen(s));
}

static char *fpath(const char *rel)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%d/%s", dir, FAKE_PID, rel);
	return buf[k];
}

/* A fresh fake process: status with @uid, an empty root with /tmp, no maps lines. */
static void fake_proc(unsigned uid)
{
	char status[256];

	sh("rm -rf %s/%d && mkdir -p %s/%d/root/tmp", dir, FAKE_PID, dir, FAKE_PID);
	snprintf(status, sizeof(status),
		 "Name:\tfake\nUmask:\t0022\nState:\tR (running)\nTgid:\t%d\nNgid:\t0\n"
		 "Pid:\t%d\nPPid:\t1\nTracerPid:\t0\nUid:\t%u\t%u\t%u\t%u\n"
		 "Gid:\t0\t0\t0\t0\nNSpid:\t%d\t%d\n",
		 FAKE_PID, FAKE_PID, uid, uid, uid, uid, FAKE_PID, NSPID);
	puts_file(fpath("status"), "w", status);
	puts_file(fpath("maps"), "w", "");
}

static struct perfmaps *new_pm(uint64_t max)
{
	struct perfmaps_opts o = {.sz = sizeof(o), .proc_root = dir, .max_file_bytes = max};
	struct perfmaps *pm = perfmaps__new(&o);

	CHECK(pm);
	return pm;
}

static const char *look(struct perfmaps *pm, uint64_t ip, int *ret, uint64_t *off)
{
	const char *name = (const char *)1;
	uint64_t o = 99;

	*ret = perfmaps__lookup(pm, FAKE_PID, ip, &name, &o);
	if (off)
		*off = o;
	return name;
}

static const char *resolve(struct perfmaps *pm, uint64_t ip)
{
	int ret;
	const char *n = look(pm, ip, &ret, NULL);

	return ret ? NULL : n;
}

#define MAP "root/tmp/perf-7.map"

/* Appended bytes are read at each refresh, only once; partial lines wait for their end. */
static void test_growth(void)
{
	struct perfmaps_stats st;
	struct perfmaps *pm;
	struct stat sb;
	uint64_t off;
	int ret;

	fake_proc(getuid());
	puts_file(fpath(MAP), "w", "1000 10 one\n2000 10 two\n");
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK_STR(look(pm, 0x1004, &ret, &off), "one");
	CHECK(ret == 0);
	CHECK_U64(off, 4);
	/* not covered: the perf map's label, -ENOENT */
	CHECK_STR(look(pm, 0x5000, &ret, &off), "[perf-7.map]");
	CHECK(ret == -ENOENT);
	CHECK_U64(off, 0);

	puts_file(fpath(MAP), "a", "3000 10 thr");
	CHECK(!perfmaps__refresh(pm, FAKE_PID));
	puts_file(fpath(MAP), "a", "ee\n2000 10 two-recompiled\n4000 10 fo");
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x3000), "three");
	CHECK_STR(resolve(pm, 0x2000), "two-recompiled");
	/* the unterminated last line is taken at lookup time... */
	CHECK_STR(resolve(pm, 0x4000), "fo");
	/* ...and read whole once it is complete */
	puts_file(fpath(MAP), "a", "ur\n");
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x4000), "four");

	/* every byte read once: cost follows the new bytes */
	CHECK(!stat(fpath(MAP), &sb));
	perfmaps__stats(pm, &st);
	CHECK_U64(st.bytes_read, (uint64_t)sb.st_size);
	CHECK_U64(st.maps_opened, 1);
	CHECK_U64(st.lines_bad, 0);
	CHECK_U64(st.files_rewritten, 0);

	perfmaps__forget(pm, FAKE_PID);
	CHECK(look(pm, 0x1004, &ret, NULL) == NULL);
	CHECK(ret == -ENOENT);
	CHECK(perfmaps__refresh(pm, FAKE_PID) == -ENOENT);
	perfmaps__free(pm);
}

/*
 * A fake process's stat, started @ago seconds ago (negative: in the future), or at boot
 * when the machine has been up for less: a start time is never before boot.
 */
static void fake_start(double ago)
{
	struct timespec boot;
	char stat[512];
	double start;

	CHECK(!clock_gettime(CLOCK_BOOTTIME, &boot));
	start = boot.tv_sec + boot.tv_nsec / 1e9 - ago;
	/* a comm with ") " in it: the fields are counted after the last ')' */
	snprintf(stat, sizeof(stat),
		 "%d (a) b) S 1 %d %d 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 %llu 1000 10\n",
		 FAKE_PID, FAKE_PID, FAKE_PID,
		 (unsigned long long)(MAX(start, 0.0) * sysconf(_SC_CLK_TCK)));
	puts_file(fpath("stat"), "w", stat);
}

/*
 * A perf map older than its process (an earlier process's with the same PID) is not
 * read, counted once; rewritten by the process (jcmd Compiler.perfmap), it is.
 */
static void test_stale(void)
{
	struct perfmaps_stats st;
	struct perfmaps *pm;

	fake_proc(getuid());
	puts_file(fpath(MAP), "w", "1000 10 earlier\n");
	fake_start(-60); /* the map written a minute before the process began */
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(resolve(pm, 0x1004) == NULL);
	CHECK(!perfmaps__refresh(pm, FAKE_PID));
	CHECK(resolve(pm, 0x1004) == NULL);
	perfmaps__stats(pm, &st);
	CHECK_U64(st.maps_stale, 1);
	CHECK_U64(st.maps_opened, 0);
	perfmaps__free(pm);

	/* started an hour ago (or at boot), map written now: its own */
	fake_start(3600);
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK_STR(resolve(pm, 0x1004), "earlier");
	perfmaps__stats(pm, &st);
	CHECK_U64(st.maps_stale, 0);
	perfmaps__free(pm);
}

/* The map appears after track; rewritten in place (jcmd Compiler.perfmap); renamed over. */
static void test_rewrites(void)
{
	struct perfmaps_stats st;
	struct perfmaps *pm;
	char tmp[512];

	fake_proc(getuid());
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(!resolve(pm, 0x1000));
	puts_file(fpath(MAP), "w", "0x1000 0x10 first\n0x2000 0x10 second\n");
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x2000), "second");

	/* truncated and rewritten shorter */
	puts_file(fpath(MAP), "w", "0x2000 0x10 new\n");
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x2000), "new");
	CHECK_STR(resolve(pm, 0x1000), "first"); /* older entries stay where not overwritten */

	/* rewritten longer, with different bytes before the old end */
	puts_file(fpath(MAP), "w", "0x2000 0x10 newer\n0x3000 0x10 third\n0x4000 0x10 fourth\n");
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x2000), "newer");
	CHECK_STR(resolve(pm, 0x4000), "fourth");

	/* replaced by rename (a new inode) */
	snprintf(tmp, sizeof(tmp), "%s.tmp", fpath(MAP));
	puts_file(tmp, "w", "0x4000 0x10 renamed\n");
	CHECK(!rename(tmp, fpath(MAP)));
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x4000), "renamed");
	perfmaps__stats(pm, &st);
	CHECK_U64(st.files_rewritten, 3);
	CHECK_U64(st.maps_opened, 1);
	perfmaps__free(pm);
}

/*
 * A perf map that is not there is looked for by sweeps (refresh(0)) 1, 3, 7, 15, 31, 47 ...
 * after track; refresh(PID) and maps_changed() look at once. With scan_on_notice a
 * jitdump mapped after track is found by maps_changed(), never by sweeps; without, by
 * the sweeps' rescans.
 */
static void test_schedule(void)
{
	static const char dump_rel[] = "root/tmp/jit-7.dump";
	struct perfmaps_opts o = {.sz = sizeof(o), .proc_root = dir};
	struct jd_buf b = {0};
	struct perfmaps_stats st;
	struct perfmaps *pm;
	char line[256];
	int i, sweeps;

	fake_proc(getuid());
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	for (i = 0; i < 31; i++)
		CHECK(!perfmaps__refresh(pm, 0));
	puts_file(fpath(MAP), "w", "0x1000 0x10 late\n");
	for (sweeps = 1; sweeps <= 20; sweeps++) {
		CHECK(!perfmaps__refresh(pm, 0));
		perfmaps__stats(pm, &st);
		if (st.maps_opened)
			break;
	}
	CHECK(sweeps == 16);
	CHECK_STR(resolve(pm, 0x1000), "late");
	perfmaps__free(pm);

	fake_proc(getuid());
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(!perfmaps__refresh(pm, 0));
	puts_file(fpath(MAP), "w", "0x1000 0x10 told\n");
	CHECK(!perfmaps__maps_changed(pm, FAKE_PID));
	CHECK_STR(resolve(pm, 0x1000), "told");
	CHECK(perfmaps__maps_changed(pm, FAKE_PID + 1) == -ENOENT);
	perfmaps__free(pm);

	jd_julia_fixture(&b, NSPID);
	snprintf(line, sizeof(line), "7f3a2c300000-7f3a2c301000 r-xp 00000000 fd:01 97     %s\n",
		 dump_rel + 4);
	for (i = 0; i < 2; i++) {
		o.scan_on_notice = i == 0;
		fake_proc(getuid());
		pm = perfmaps__new(&o);
		CHECK(pm);
		CHECK(!perfmaps__track(pm, FAKE_PID));
		put(fpath(dump_rel), "w", b.data, b.len);
		puts_file(fpath("maps"), "w", line);
		for (sweeps = 0; sweeps < 40; sweeps++) {
			perfmaps__stats(pm, &st);
			if (st.dumps_opened)
				break;
			CHECK(!perfmaps__refresh(pm, 0));
		}
		if (o.scan_on_notice) {
			CHECK(sweeps == 40 && !st.dumps_opened);
			CHECK(!perfmaps__maps_changed(pm, FAKE_PID));
		} else {
			CHECK(sweeps == 2); /* rescans 1 and 2 sweeps after track's scan */
		}
		CHECK_STR(resolve(pm, JULIA_FIB_ADDR), "julia_fib_42");
		perfmaps__free(pm);
	}
	free(b.data);
}

/*
 * perfmaps__track_later(): nothing looked for at tracking (status gone: its NSpid would
 * fail a look), nor when the process exits; the first sweep looks, and so does a notice of
 * new mappings, which also scans for jitdumps.
 */
static void test_track_later(void)
{
	static const char dump_rel[] = "root/tmp/jit-7.dump";
	struct jd_buf b = {0};
	struct perfmaps_opts o = {.sz = sizeof(o), .proc_root = dir, .scan_on_notice = true};
	struct perfmaps_stats st;
	struct perfmaps *pm;
	char line[256];
	int ret;

	/* the first sweep looks (its NSpid from status, read then) */
	fake_proc(getuid());
	puts_file(fpath(MAP), "w", "0x1000 0x10 found-by-sweep\n");
	pm = new_pm(0);
	sh("mv %s %s.away", fpath("status"), fpath("status"));
	CHECK(!perfmaps__track_later(pm, FAKE_PID));
	perfmaps__stats(pm, &st);
	CHECK_U64(st.procs_tracked, 1);
	CHECK_U64(st.maps_opened, 0);
	CHECK(!look(pm, 0x1000, &ret, NULL) && ret == -ENOENT); /* no "[perf-7.map]" label */
	sh("mv %s.away %s", fpath("status"), fpath("status"));
	/* its exit does not look: the process's files are out of reach by then */
	CHECK(!perfmaps__refresh(pm, FAKE_PID));
	/* tracking it again is a no-op */
	CHECK(!perfmaps__track_later(pm, FAKE_PID));
	perfmaps__stats(pm, &st);
	CHECK_U64(st.maps_opened, 0);
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x1000), "found-by-sweep");
	perfmaps__stats(pm, &st);
	CHECK_U64(st.procs_tracked, 1);
	perfmaps__free(pm);

	fake_proc(getuid());
	puts_file(fpath(MAP), "w", "0x1000 0x10 found-by-track\n");
	pm = new_pm(0);
	CHECK(!perfmaps__track_later(pm, FAKE_PID));
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK_STR(resolve(pm, 0x1000), "found-by-track");
	perfmaps__free(pm);

	/* a runtime maps its JIT code and jitdump after the first sample: told, found */
	jd_julia_fixture(&b, NSPID);
	fake_proc(getuid());
	pm = perfmaps__new(&o);
	CHECK(pm);
	CHECK(!perfmaps__track_later(pm, FAKE_PID));
	puts_file(fpath(MAP), "w", "0x1000 0x10 found-when-told\n");
	put(fpath(dump_rel), "w", b.data, b.len);
	snprintf(line, sizeof(line), "7f3a2c300000-7f3a2c301000 r-xp 00000000 fd:01 97     %s\n",
		 dump_rel + 4);
	puts_file(fpath("maps"), "w", line);
	CHECK(!perfmaps__maps_changed(pm, FAKE_PID));
	CHECK_STR(resolve(pm, 0x1000), "found-when-told");
	CHECK_STR(resolve(pm, JULIA_FIB_ADDR), "julia_fib_42");
	perfmaps__free(pm);
	free(b.data);

	/* gone before any look: nothing found, no error */
	fake_proc(getuid());
	pm = new_pm(0);
	CHECK(!perfmaps__track_later(pm, FAKE_PID));
	sh("rm -rf %s/%d", dir, FAKE_PID);
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK(!perfmaps__maps_changed(pm, FAKE_PID));
	CHECK(perfmaps__track_later(pm, 0) == -EINVAL);
	perfmaps__free(pm);
}

/* After the process is gone (no /proc/PID), the kept descriptor still reads new lines. */
static void test_exit(void)
{
	struct perfmaps *pm;
	FILE *w;

	fake_proc(getuid());
	puts_file(fpath(MAP), "w", "1000 10 one\n");
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	w = fopen(fpath(MAP), "a");
	CHECK(w);
	sh("rm -rf %s/%d", dir, FAKE_PID);
	fputs("2000 10 written-at-exit\n", w);
	CHECK(!fclose(w));
	CHECK(!perfmaps__refresh(pm, FAKE_PID));
	CHECK_STR(resolve(pm, 0x2000), "written-at-exit");
	CHECK_STR(resolve(pm, 0x1000), "one");
	/* a process that is already gone is not tracked */
	CHECK(perfmaps__track(pm, FAKE_PID + 1) == -ESRCH);
	perfmaps__free(pm);
}

static void test_cap(void)
{
	struct perfmaps_stats st;
	struct perfmaps *pm;
	int before = warnings;

	fake_proc(getuid());
	/* 12 bytes per line: the cap of 30 bytes admits two whole lines */
	puts_file(fpath(MAP), "w", "1000 10 aaa\n2000 10 bbb\n3000 10 ccc\n4000 10 ddd\n");
	pm = new_pm(30);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, 0x2000), "bbb");
	perfmaps__stats(pm, &st);
	CHECK_U64(st.files_capped, 1);
	CHECK_U64(st.bytes_read, 30);
	CHECK(warnings == before + 1);
	CHECK(strstr(last_warning, "larger than 30 bytes"));
	/* the capped partial line "3000 1" must not become an entry */
	perfmaps__forget(pm, FAKE_PID);
	perfmaps__free(pm);
}

/*
 * A map of more entries than the default cap (1,000,000 per process): the entries past
 * it are dropped and counted, the file is named as cut, frames there are counted.
 */
static void test_entry_cap(void)
{
	const uint64_t lines = 1000000 + 5000;
	struct perfmaps_stats st;
	struct perfmaps *pm;
	uint64_t i;
	FILE *w;

	fake_proc(getuid());
	w = fopen(fpath(MAP), "w");
	CHECK(w);
	for (i = 0; i < lines; i++)
		fprintf(w, "%" PRIx64 " 10 f%" PRIu64 "\n", 0x100000 + i * 0x10, i % 1000);
	CHECK(!fclose(w));
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK_STR(resolve(pm, 0x100000 + 999999 * 0x10), "f999");
	CHECK(!resolve(pm, 0x100000 + 1000000 * 0x10));
	CHECK(!resolve(pm, 0x100000 + 1004999 * 0x10));
	perfmaps__stats(pm, &st);
	CHECK_U64(st.lines_parsed, 1000000);
	CHECK_U64(st.files_cut, 1);
	CHECK(st.entries_dropped > 0 && st.entries_dropped <= 5000);
	CHECK_U64(st.lookups_cut, 2);
	CHECK_STR(st.cut_path, "/tmp/perf-7.map");
	CHECK(st.cut_pid == FAKE_PID);
	CHECK(st.cut_bytes > 0 && st.cut_bytes < st.bytes_read + 1);
	/* nothing more is read from a cut file */
	w = fopen(fpath(MAP), "a");
	CHECK(w);
	fprintf(w, "1 10 late\n");
	CHECK(!fclose(w));
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK(!resolve(pm, 0x1));
	perfmaps__free(pm);

	/* a cap of the caller's */
	struct perfmaps_opts o = {.sz = sizeof(o), .proc_root = dir, .max_entries = 3};
	puts_file(fpath(MAP), "w", "1000 10 aaa\n2000 10 bbb\n3000 10 ccc\n4000 10 ddd\n");
	pm = perfmaps__new(&o);
	CHECK(pm);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK_STR(resolve(pm, 0x3000), "ccc");
	CHECK(!resolve(pm, 0x4000));
	perfmaps__stats(pm, &st);
	CHECK_U64(st.lines_parsed, 3);
	CHECK_U64(st.entries_dropped, 1);
	CHECK_U64(st.files_cut, 1);
	perfmaps__free(pm);

	/* the cap is the process's: a perf map that holds it leaves no room for a jitdump */
	{
		static const char dump_rel[] = "root/tmp/jit-7.dump";
		struct jd_buf b = {0};

		fake_proc(getuid());
		jd_julia_fixture(&b, NSPID);
		put(fpath(dump_rel), "w", b.data, b.len);
		puts_file(fpath("maps"), "w",
			  "7f3a2c300000-7f3a2c301000 r-xp 00000000 fd:01 97     /tmp/jit-7.dump\n");
		puts_file(fpath(MAP), "w", "1000 10 aaa\n2000 10 bbb\n3000 10 ccc\n");
		pm = perfmaps__new(&o);
		CHECK(pm);
		CHECK(!perfmaps__track(pm, FAKE_PID));
		CHECK_STR(resolve(pm, 0x3000), "ccc");
		CHECK(!resolve(pm, JULIA_FIB_ADDR));
		perfmaps__stats(pm, &st);
		CHECK_U64(st.dumps_opened, 1);
		CHECK_U64(st.records_parsed, 0);
		CHECK_U64(st.files_cut, 1);
		CHECK_STR(st.cut_path, "/tmp/jit-7.dump");
		perfmaps__free(pm);
		free(b.data);
	}
}

/*
 * slice_bytes: each call reads that much at most and leaves the file pending; lookups use
 * the index built before until the file is read through; perfmaps__continue() reads on.
 */
static void test_slices(void)
{
	struct perfmaps_opts o = {.sz = sizeof(o), .proc_root = dir, .slice_bytes = 20};
	struct perfmaps_stats st;
	struct perfmaps *pm;
	int calls = 0, ret;

	fake_proc(getuid());
	/* 12 bytes per line */
	puts_file(fpath(MAP), "w", "1000 10 aaa\n2000 10 bbb\n3000 10 ccc\n4000 10 ddd\n");
	pm = perfmaps__new(&o);
	CHECK(pm);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	perfmaps__stats(pm, &st);
	CHECK_U64(st.bytes_read, 20);
	CHECK(perfmaps__pending(pm));
	/* not read through: the (empty) index built before serves */
	CHECK(!resolve(pm, 0x1000));
	while ((ret = perfmaps__continue(pm, false)) == 1)
		calls++;
	CHECK(ret == 0);
	CHECK(calls == 1); /* 48 bytes: 20 + 20 + 8 */
	CHECK(!perfmaps__pending(pm));
	CHECK_STR(resolve(pm, 0x1000), "aaa");
	CHECK_STR(resolve(pm, 0x4000), "ddd");
	/* appended lines: a refresh reads a slice, continue(true) the rest at once */
	puts_file(fpath(MAP), "a", "5000 10 eee\n6000 10 fff\n7000 10 ggg\n");
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK(perfmaps__pending(pm));
	CHECK_STR(resolve(pm, 0x4000), "ddd");
	CHECK(!resolve(pm, 0x5000));
	CHECK(perfmaps__continue(pm, true) == 0);
	CHECK_STR(resolve(pm, 0x7000), "ggg");
	perfmaps__stats(pm, &st);
	CHECK_U64(st.bytes_read, 84);
	CHECK_U64(st.lines_parsed, 7);
	/* a pending file dropped with its process */
	puts_file(fpath(MAP), "a", "8000 10 hhh\n9000 10 iii\n");
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK(perfmaps__pending(pm));
	perfmaps__forget(pm, FAKE_PID);
	CHECK(!perfmaps__pending(pm));
	CHECK(perfmaps__continue(pm, false) == 0);
	perfmaps__free(pm);
}

/* Refused files: one warning and one hint each, counted once, no entries, never followed. */
static void expect_refused(const char *what, const char *why, bool reads)
{
	struct perfmaps_stats st;
	struct perfmaps *pm;
	int w = warnings, h = hints, ret;

	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK(look(pm, 0x1000, &ret, NULL) == NULL);
	CHECK(ret == -ENOENT);
	perfmaps__stats(pm, &st);
	if (st.files_refused != 1 || warnings != w + 1 || hints != h + 1 ||
	    !strstr(last_warning, why)) {
		fprintf(stderr, "%s: refused %llu, warnings %d, hints %d, last: %s\n", what,
			(unsigned long long)st.files_refused, warnings - w, hints - h,
			last_warning);
		exit(1);
	}
	CHECK_U64(st.lines_parsed, 0);
	CHECK_U64(st.records_parsed, 0);
	CHECK(reads || st.bytes_read == 0);
	perfmaps__free(pm);
}

static void test_security(void)
{
	char secret[512];

	/* a symlink to a file the process's user could not read */
	fake_proc(getuid());
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	puts_file(secret, "w", "1000 10 root-only\n");
	CHECK(!symlink(secret, fpath(MAP)));
	expect_refused("symlinked map", "a symlink", false);

	/* /tmp itself a symlink */
	fake_proc(getuid());
	sh("rmdir %s && mkdir %s/othertmp && ln -s %s/othertmp %s", fpath("root/tmp"), dir, dir,
	   fpath("root/tmp"));
	puts_file(fpath(MAP), "w", "1000 10 via-symlinked-dir\n");
	expect_refused("symlinked /tmp", "a symlink on the way", false);
	sh("rm -rf %s/othertmp", dir);

	/* a FIFO: refused without blocking */
	fake_proc(getuid());
	CHECK(!mkfifo(fpath(MAP), 0600));
	expect_refused("fifo", "not a regular file", false);

	/* a directory */
	fake_proc(getuid());
	CHECK(!mkdir(fpath(MAP), 0700));
	expect_refused("directory", "not a regular file", false);

	/* owned by another user than the process's (as root: chown the file; otherwise
	 * claim the process runs as another uid) */
	if (geteuid() == 0) {
		fake_proc(1000);
		puts_file(fpath(MAP), "w", "1000 10 planted\n");
		CHECK(!chown(fpath(MAP), 12345, 12345));
	} else {
		fake_proc(12345);
		puts_file(fpath(MAP), "w", "1000 10 planted\n");
	}
	expect_refused("foreign owner", "owned by uid", false);
}

/*
 * A process in our PID namespace (its ns/pid the same inode as ours) is known by its PID
 * here, without reading its status: its NSpid line (7) is not used. Its status is read
 * when a file not owned by root is found, for the owner check, which still refuses.
 */
static void test_same_pidns(void)
{
	struct perfmaps *pm;
	char self_ns[512];
	int ret;

	sh("mkdir -p %s/self/ns && touch %s/self/ns/pid", dir, dir);
	snprintf(self_ns, sizeof(self_ns), "%s/self/ns/pid", dir);

	fake_proc(getuid());
	sh("mkdir -p %s", fpath("ns"));
	CHECK(!link(self_ns, fpath("ns/pid")));
	puts_file(fpath("root/tmp/perf-4000.map"), "w", "1000 10 by_pid_here\n");
	puts_file(fpath(MAP), "w", "1000 10 by_nspid\n");
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(resolve(pm, 0x1004) && !strcmp(resolve(pm, 0x1004), "by_pid_here"));
	perfmaps__free(pm);

	/* status unreadable: the map is still found (the owner, root or the user, needs
	 * no status when root owns it; as a user, the status is needed and its absence
	 * fails the open) */
	CHECK(!unlink(fpath("status")));
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	if (geteuid() == 0)
		CHECK(resolve(pm, 0x1004) && !strcmp(resolve(pm, 0x1004), "by_pid_here"));
	else
		CHECK(look(pm, 0x1004, &ret, NULL) == NULL && ret == -ENOENT);
	perfmaps__free(pm);

	/* another namespace (its own ns/pid inode): NSpid from the status, as before */
	fake_proc(getuid());
	sh("mkdir -p %s && touch %s", fpath("ns"), fpath("ns/pid"));
	puts_file(fpath("root/tmp/perf-4000.map"), "w", "1000 10 by_pid_here\n");
	puts_file(fpath(MAP), "w", "1000 10 by_nspid\n");
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(resolve(pm, 0x1004) && !strcmp(resolve(pm, 0x1004), "by_nspid"));
	perfmaps__free(pm);

	/* same namespace, a map owned by the process's user (not root): accepted after a
	 * late status read (as root: chown; otherwise the files are the user's already) */
	fake_proc(geteuid() == 0 ? 1000 : getuid());
	sh("mkdir -p %s", fpath("ns"));
	CHECK(!link(self_ns, fpath("ns/pid")));
	puts_file(fpath("root/tmp/perf-4000.map"), "w", "1000 10 users_own\n");
	if (geteuid() == 0)
		CHECK(!chown(fpath("root/tmp/perf-4000.map"), 1000, 1000));
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(resolve(pm, 0x1004) && !strcmp(resolve(pm, 0x1004), "users_own"));
	perfmaps__free(pm);

	/* same namespace, a map owned by someone else: refused after a late status read */
	fake_proc(geteuid() == 0 ? 1000 : 12345);
	sh("mkdir -p %s", fpath("ns"));
	CHECK(!link(self_ns, fpath("ns/pid")));
	puts_file(fpath("root/tmp/perf-4000.map"), "w", "1000 10 planted\n");
	if (geteuid() == 0)
		CHECK(!chown(fpath("root/tmp/perf-4000.map"), 12345, 12345));
	expect_refused("foreign owner, same namespace", "owned by uid", false);
	sh("rm -rf %s/self", dir);
}

/* A Julia-style jitdump found through the process's mapping of it, plus its perf map. */
static void test_jitdump(void)
{
	static const char dump_rel[] =
		"root/home/u/.debug/jit/llvm-IR-jit-20240101-a1b2c3/jit-7.dump";
	const char *dump_path = dump_rel + 4; /* as the process sees it */
	struct jd_buf b = {0};
	struct perfmaps_stats st;
	struct perfmaps *pm;
	char line[1024];
	size_t half;
	int ret;

	fake_proc(getuid());
	sh("mkdir -p %s", fpath("root/home/u/.debug/jit/llvm-IR-jit-20240101-a1b2c3"));
	jd_julia_fixture(&b, NSPID);
	half = 40 + 60; /* the header and part of the first record */
	put(fpath(dump_rel), "w", b.data, half);
	snprintf(line, sizeof(line),
		 "55d0c6a00000-55d0c6a02000 r--p 00000000 fd:01 1234   /usr/bin/julia\n"
		 "7f3a2c100000-7f3a2c101000 r-xp 00000000 fd:01 99     /old/jit-1.dump (deleted)\n"
		 "7f3a2c200000-7f3a2c201000 r-xp 00000000 fd:01 98     /tmp/notjit-7.dump\n"
		 "7f3a2c300000-7f3a2c301000 r-xp 00000000 fd:01 97     %s\n",
		 dump_path);
	puts_file(fpath("maps"), "w", line);
	pm = new_pm(0);
	CHECK(!perfmaps__track(pm, FAKE_PID));
	CHECK(look(pm, JULIA_FIB_ADDR, &ret, NULL) == NULL); /* no perf map: no label */
	CHECK(ret == -ENOENT);
	put(fpath(dump_rel), "a", b.data + half, b.len - half);
	CHECK(!perfmaps__refresh(pm, 0));
	CHECK_STR(resolve(pm, JULIA_FIB_ADDR), "julia_fib_42");
	CHECK_STR(resolve(pm, JULIA_FIB_ADDR + 0x50), "julia_fib_17");
	CHECK_STR(resolve(pm, JULIA_JFPTR_ADDR), "jfptr_fib_18");
	/* lookup_at: before the recompile the first specialization */
	{
		const char *n;
		uint64_t off;

		CHECK(!perfmaps__lookup_at(pm, FAKE_PID, JULIA_FIB_ADDR + 8, 1500, &n, &off));
		CHECK_STR(n, "julia_fib_17");
		CHECK_U64(off, 8);
	}
	/* jitdump entries come first; perf-map lines fill the rest */
	puts_file(fpath(MAP), "w", "7f3a2c001000 90 julia_fib_17\n7f3a2c002000 10 julia_g_3\n");
	CHECK(!perfmaps__refresh(pm, FAKE_PID)); /* a sweep would look for it later */
	CHECK_STR(resolve(pm, JULIA_FIB_ADDR), "julia_fib_42");
	CHECK_STR(resolve(pm, 0x7f3a2c002004), "julia_g_3");
	CHECK_STR(look(pm, 0x7f3a2c003000, &ret, NULL), "[perf-7.map]");
	perfmaps__stats(pm, &st);
	CHECK_U64(st.dumps_opened, 1);
	CHECK_U64(st.records_parsed, 3);
	CHECK_U64(st.records_truncated, 1); /* the first lookup saw half a record */
	CHECK_U64(st.bytes_read,
		  b.len + strlen("7f3a2c001000 90 julia_fib_17\n7f3a2c002000 10 julia_g_3\n"));
	perfmaps__free(pm);

	/* a symlinked jitdump is refused like a symlinked map */
	CHECK(!unlink(fpath(dump_rel)));
	CHECK(!unlink(fpath(MAP)));
	CHECK(!symlink("/etc/passwd", fpath(dump_rel)));
	expect_refused("symlinked jitdump", "a symlink", false);

	/* a file named like a jitdump that is not one: refused once, counted */
	CHECK(!unlink(fpath(dump_rel)));
	puts_file(fpath(dump_rel), "w", "this is not a jitdump file at all, not even close\n");
	expect_refused("not a jitdump", "not a jitdump", true);
	free(b.data);
}

/*
 * A real process: writes /tmp/perf-PID.map and a jitdump in a private directory that it
 * mmaps (PROT_READ|PROT_EXEC, as LLVM does); appends a line and exits; the line written
 * just before exit is still read.
 */
static void test_real_process(void)
{
	int to_child[2], to_parent[2], status, ret;
	char map[64], jdir[] = "/tmp/scorch-jit-XXXXXX", jpath[128];
	struct jd_buf b = {0};
	struct perfmaps *pm;
	pid_t child;
	char c;

	CHECK(mkdtemp(jdir));
	CHECK(!pipe(to_child) && !pipe(to_parent));
	child = fork();
	CHECK(child >= 0);
	if (!child) {
		void *marker;
		int fd;

		snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
		puts_file(map, "w", "7f0000001000 100 LazyCompile:~hot /x.js:1:1\n");
		snprintf(jpath, sizeof(jpath), "%s/jit-%d.dump", jdir, getpid());
		jd_header(&b, getpid(), 1);
		jd_load(&b, 2, getpid(), getpid(), 0x7f0000900000, 0x40, 1, "julia_real_1");
		put(jpath, "w", b.data, b.len);
		fd = open(jpath, O_RDONLY);
		marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (fd < 0 || marker == MAP_FAILED)
			_exit(2);
		if (write(to_parent[1], "r", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(3);
		puts_file(map, "a", "7f0000002000 100 LazyCompile:*late /x.js:9:1\n");
		_exit(0);
	}
	CHECK(read(to_parent[0], &c, 1) == 1);
	pm = perfmaps__new(NULL);
	CHECK(pm);
	CHECK(!perfmaps__track(pm, child));
	{
		const char *n;
		uint64_t off;

		CHECK(!perfmaps__lookup(pm, child, 0x7f0000001010, &n, &off));
		CHECK_STR(n, "LazyCompile:~hot /x.js:1:1");
		CHECK_U64(off, 0x10);
		CHECK(!perfmaps__lookup(pm, child, 0x7f0000900004, &n, &off));
		CHECK_STR(n, "julia_real_1");
		CHECK(write(to_child[1], "g", 1) == 1);
		CHECK(waitpid(child, &status, 0) == child);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		CHECK(!perfmaps__refresh(pm, child));
		CHECK(!perfmaps__lookup(pm, child, 0x7f0000002000, &n, &off));
		CHECK_STR(n, "LazyCompile:*late /x.js:9:1");
		ret = perfmaps__lookup(pm, child, 0x7f0000003000, &n, &off);
		CHECK(ret == -ENOENT);
		snprintf(map, sizeof(map), "[perf-%d.map]", child);
		CHECK_STR(n, map);
	}
	perfmaps__free(pm);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", child);
	unlink(map);
	sh("rm -rf %s", jdir);
	free(b.data);
}

/* Many processes: the PID table survives growth and deletions in any order. */
static void test_many(void)
{
	struct perfmaps_stats st;
	struct perfmaps *pm = new_pm(0);
	char path[512];
	int i;

	for (i = 1; i <= 300; i++) {
		snprintf(path, sizeof(path), "%s/%d", dir, 10000 + i);
		CHECK(!mkdir(path, 0700));
		snprintf(path, sizeof(path), "%s/%d/status", dir, 10000 + i);
		puts_file(path, "w", "Name:\tx\nUid:\t0\t0\t0\t0\n");
		CHECK(!perfmaps__track(pm, 10000 + i));
	}
	for (i = 1; i <= 300; i += 3)
		perfmaps__forget(pm, 10000 + i);
	for (i = 300; i >= 1; i--)
		CHECK(perfmaps__refresh(pm, 10000 + i) == (i % 3 == 1 ? -ENOENT : 0));
	for (i = 2; i <= 300; i += 3)
		perfmaps__forget(pm, 10000 + i);
	for (i = 1; i <= 300; i++)
		CHECK(perfmaps__refresh(pm, 10000 + i) == (i % 3 == 0 ? 0 : -ENOENT));
	CHECK(!perfmaps__refresh(pm, 0));
	perfmaps__stats(pm, &st);
	CHECK_U64(st.procs_tracked, 300);
	perfmaps__free(pm);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/scorch-perfmap-XXXXXX");
	CHECK(mkdtemp(dir));
	log__set_fn(log_sink);
	test_growth();
	test_stale();
	test_rewrites();
	test_schedule();
	test_exit();
	test_track_later();
	test_cap();
	test_entry_cap();
	test_slices();
	test_security();
	test_same_pidns();
	test_jitdump();
	test_real_process();
	test_many();
	sh("rm -rf %s", dir);
	printf("perfmaps: ok\n");
	return 0;
}
