// SPDX-License-Identifier: MIT
/* perfmap: finding, opening (safely) and incrementally reading each process's JIT files. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfmap-private.h"

#define READ_CHUNK	    (256 * 1024)
#define TAIL_BYTES	    64
#define MAX_DUMPS	    4
#define MAX_RESCAN_INTERVAL 16
#define DEFAULT_MAX_FILE    (256ull << 20)
#define DEFAULT_MAX_ENTRIES 1000000
#define MAX_STATUS_BYTES    (64 * 1024)
#define MAX_MAPS_BYTES	    (64u << 20)

enum pm_kind { PM_MAP, PM_DUMP };

struct pm_file {
	enum pm_kind kind;
	int fd;		  /* -1: not open */
	const char *path; /* as the process sees it, interned: "/tmp/perf-42.map" */
	dev_t dev;
	ino_t ino;
	uint64_t off; /* file offset of buf[0] */
	uint8_t *buf;
	size_t have, cap;
	uint8_t tail[TAIL_BYTES]; /* the bytes just before off, to notice a rewrite */
	size_t tail_len;
	bool capped, warned;
	bool pending; /* bytes left unread when the call's budget ran out */
	struct pm_text_state text;
	struct pm_jd_state jd;
};

struct pm_proc {
	pid_t pid, nspid;
	uid_t uid, euid, fsuid;
	bool ids_known; /* nspid found (proc_ids()) */
	bool ids_read;	/* uid, euid, fsuid (and nspid) read from status */
	struct pm_file map;
	bool map_refused;
	bool map_stale; /* a perf map older than the process seen (and warned of) */
	struct pm_file dumps[MAX_DUMPS];
	size_t nr_dumps;
	const char *seen_dumps[MAX_DUMPS * 2]; /* paths opened or refused, not retried */
	size_t nr_seen;
	unsigned rescan_in, rescan_every;
	unsigned map_retry_in, map_retry_every; /* sweeps until the perf map is looked for */
	struct pm_index ix_map, ix_dump;
	const char *label; /* "[perf-NSPID.map]" once a perf map was opened */
	bool stale;	   /* read since the indexes were built */
	bool cut;	   /* max_entries reached: lookups that find nothing are counted */
};

struct perfmaps {
	char *proc_root;
	dev_t pidns_dev; /* our PID namespace (PROC/self/ns/pid), pidns_ino 0 if unknown */
	ino_t pidns_ino;
	uint64_t max_file;
	uint64_t max_entries; /* per process, perf map and jitdumps together */
	uint64_t slice;	      /* bytes read per refresh call at most (UINT64_MAX: no limit) */
	uint64_t budget;      /* bytes the current call may still read */
	size_t nr_pending;    /* files with bytes left unread */
	bool no_jitdump;
	bool scan_on_notice;
	struct strset *strs;
	struct hashmap procs; /* hash__u64(pid) -> struct pm_proc * */
	struct perfmaps_stats st;
};

static struct pm_proc *proc_find(const struct perfmaps *pm, pid_t pid)
{
	return (struct pm_proc *)(uintptr_t)hashmap__find(&pm->procs, hash__u64((uint32_t)pid),
							  NULL, NULL);
}

static int proc_insert(struct perfmaps *pm, struct pm_proc *p)
{
	return hashmap__insert(&pm->procs, hash__u64((uint32_t)p->pid), (uintptr_t)p);
}

static void proc_remove(struct perfmaps *pm, pid_t pid)
{
	hashmap__remove(&pm->procs, hash__u64((uint32_t)pid), NULL, NULL);
}

static void file_init(struct pm_file *f, enum pm_kind kind)
{
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->fd = -1;
}

static void file_restart(struct pm_file *f)
{
	f->off = 0;
	f->have = 0;
	f->tail_len = 0;
	f->text.skipping = false;
	pm_jd__reset(&f->jd);
}

static void file_set_pending(struct perfmaps *pm, struct pm_file *f, bool pending)
{
	if (f->pending != pending)
		pm->nr_pending += pending ? 1 : -1;
	f->pending = pending;
}

static void file_close(struct perfmaps *pm, struct pm_file *f)
{
	file_set_pending(pm, f, false);
	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	pm_jd__reset(&f->jd);
	file_init(f, f->kind);
}

static void proc_free(struct perfmaps *pm, struct pm_proc *p)
{
	size_t i;

	if (!p)
		return;
	file_close(pm, &p->map);
	for (i = 0; i < p->nr_dumps; i++)
		file_close(pm, &p->dumps[i]);
	pm_index__free(&p->ix_map);
	pm_index__free(&p->ix_dump);
	free(p);
}

struct perfmaps *perfmaps__new(const struct perfmaps_opts *opts)
{
	struct perfmaps *pm = NULL;
	int err = -ENOMEM;
	char path[4096];
	struct stat st;

	if (opts && opts->sz < offsetof(struct perfmaps_opts, no_jitdump) + sizeof(bool)) {
		errno = EINVAL;
		return NULL;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		goto cleanup;
	pm->proc_root = strdup(opts && opts->proc_root ? opts->proc_root : "/proc");
	pm->strs = strset__new();
	if (!pm->proc_root || !pm->strs)
		goto cleanup;
	pm->max_file = opts && opts->max_file_bytes ? opts->max_file_bytes : DEFAULT_MAX_FILE;
	snprintf(path, sizeof(path), "%s/self/ns/pid", pm->proc_root);
	if (!stat(path, &st)) {
		pm->pidns_dev = st.st_dev;
		pm->pidns_ino = st.st_ino;
	}
	pm->max_entries = DEFAULT_MAX_ENTRIES;
	pm->slice = UINT64_MAX;
	if (opts && opts->sz >= offsetof(struct perfmaps_opts, slice_bytes) + sizeof(uint64_t)) {
		if (opts->max_entries)
			pm->max_entries = opts->max_entries;
		if (opts->slice_bytes)
			pm->slice = opts->slice_bytes;
	}
	pm->budget = pm->slice;
	pm->no_jitdump = opts && opts->no_jitdump;
	pm->scan_on_notice =
		opts && opts->sz >= offsetof(struct perfmaps_opts, scan_on_notice) + sizeof(bool) &&
		opts->scan_on_notice;
	return pm;
cleanup:
	perfmaps__free(pm);
	errno = -err;
	return NULL;
}

void perfmaps__free(struct perfmaps *pm)
{
	struct hashmap_iter it;
	uint64_t val;

	if (!pm)
		return;
	for (hashmap__iter_init(&pm->procs, &it); hashmap__iter_next(&pm->procs, &it, &val);)
		proc_free(pm, (struct pm_proc *)(uintptr_t)val);
	hashmap__free(&pm->procs);
	strset__free(pm->strs);
	free(pm->proc_root);
	free(pm);
}

/* "Uid:\tR\tE\tS\tF" and the last (innermost) PID of "NSpid:". */
static int read_status(struct perfmaps *pm, struct pm_proc *p)
{
	unsigned long long r, e, s, fs;
	char path[4096], *buf = NULL, *line, *last;
	size_t len;
	long nspid;
	int err;

	snprintf(path, sizeof(path), "%s/%d/status", pm->proc_root, p->pid);
	err = file__read_bounded(AT_FDCWD, path, MAX_STATUS_BYTES, &buf, &len);
	if (err) {
		if (err == -ENOENT)
			err = -ESRCH;
		goto cleanup;
	}
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%llu %llu %llu %llu", &r, &e, &s, &fs) != 4) {
		pr_warn("perfmap: no Uid line in %s\n", path);
		err = -EINVAL;
		goto cleanup;
	}
	p->uid = r;
	p->euid = e;
	p->fsuid = fs;
	p->ids_read = true;
	p->nspid = p->pid;
	line = strstr(buf, "\nNSpid:");
	if (line) {
		line += 7;
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		last = last ? last + 1 : line;
		if (!parse__long(last, 1, INT32_MAX, &nspid))
			p->nspid = (pid_t)nspid;
	}
	err = 0;
cleanup:
	free(buf);
	return err;
}

/*
 * The process's PID as it knows it, for /tmp/perf-PID.map: its PID here when it shares
 * our PID namespace, told by one stat of PROC/PID/ns/pid (most processes: their status is
 * read only if a file is found, for its owner check); else the last NSpid of its status.
 * 0, or -ESRCH when the process is gone.
 */
static int proc_ids(struct perfmaps *pm, struct pm_proc *p)
{
	char path[4096];
	struct stat st;
	int err;

	snprintf(path, sizeof(path), "%s/%d/ns/pid", pm->proc_root, p->pid);
	if (pm->pidns_ino && !stat(path, &st) && st.st_dev == pm->pidns_dev &&
	    st.st_ino == pm->pidns_ino) {
		p->nspid = p->pid;
		p->ids_known = true;
		return 0;
	}
	err = read_status(pm, p);
	p->ids_known = !err;
	return err;
}

static void refuse(struct perfmaps *pm, struct pm_proc *p, const char *path, const char *why)
{
	pm->st.files_refused++;
	pr_warn("perfmap: ignoring %s/%d/root%s: %s\n", pm->proc_root, p->pid, path, why);
	pr_hint("JIT symbol files must be regular files owned by the profiled process's user "
		"or root (no symlinks); see docs/jit.md\n");
}

/*
 * Opens @path (absolute, as the process sees it) under PROC/PID/root, following no symlink
 * on the way (openat2 RESOLVE_NO_SYMLINKS, RESOLVE_IN_ROOT), as O_PATH first so a device or
 * FIFO is never opened, then checks it is a regular file owned by the process's uid or root
 * and reopens it for reading. Returns the fd, -ENOENT (absent), -ESRCH (process gone),
 * -EPERM (refused: warned and counted), or another -errno.
 */
static int open_checked(struct perfmaps *pm, struct pm_proc *p, const char *path, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int rootfd = -1, pfd = -1, fd = -1, err;
	const char *shown = path;
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%d/root", pm->proc_root, p->pid);
	rootfd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		err = errno == ENOENT || errno == EACCES ? -ESRCH : -errno;
		goto cleanup;
	}
	while (*path == '/')
		path++;
	pfd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (pfd < 0) {
		err = -errno;
		if (err == -ELOOP) {
			refuse(pm, p, shown, "a symlink on the way");
			err = -EPERM;
		} else if (err == -ENOTDIR) {
			err = -ENOENT;
		}
		goto cleanup;
	}
	if (fstat(pfd, st)) {
		err = -errno;
		goto cleanup;
	}
	err = -EPERM;
	if (S_ISLNK(st->st_mode)) {
		refuse(pm, p, shown, "a symlink");
		goto cleanup;
	}
	if (!S_ISREG(st->st_mode)) {
		refuse(pm, p, shown, "not a regular file");
		goto cleanup;
	}
	if (!p->ids_read && st->st_uid != 0) {
		err = read_status(pm, p);
		if (err)
			goto cleanup;
		err = -EPERM;
	}
	if (st->st_uid != 0 && st->st_uid != p->uid && st->st_uid != p->euid &&
	    st->st_uid != p->fsuid) {
		snprintf(buf, sizeof(buf), "owned by uid %u, not by the process's uid %u or root",
			 (unsigned)st->st_uid, (unsigned)p->euid);
		refuse(pm, p, shown, buf);
		goto cleanup;
	}
	/* reopen the very file the O_PATH descriptor holds */
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pfd);
	fd = open(buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	err = fd;
cleanup:
	if (pfd >= 0)
		close(pfd);
	if (rootfd >= 0)
		close(rootfd);
	return err;
}

static void file_warn(struct perfmaps *pm, struct pm_proc *p, struct pm_file *f, const char *what,
		      int err)
{
	if (f->warned)
		return;
	f->warned = true;
	pr_warn("perfmap: %s %s of process %d: %s\n", what, f->path, p->pid, strerror(-err));
}

static void tail_update(struct pm_file *f, const uint8_t *consumed, size_t n)
{
	size_t keep;

	if (n >= TAIL_BYTES) {
		memcpy(f->tail, consumed + n - TAIL_BYTES, TAIL_BYTES);
		f->tail_len = TAIL_BYTES;
		return;
	}
	keep = MIN(f->tail_len, TAIL_BYTES - n);
	memmove(f->tail, f->tail + f->tail_len - keep, keep);
	memcpy(f->tail + keep, consumed, n);
	f->tail_len = keep + n;
}

/* True if the file no longer holds what was read: truncated, or rewritten in place. */
static bool file_rewritten(struct pm_file *f, uint64_t size)
{
	uint8_t now[TAIL_BYTES];
	ssize_t n;

	if (size < f->off + f->have)
		return true;
	if (!f->tail_len)
		return false;
	n = pread(f->fd, now, f->tail_len, f->off - f->tail_len);
	return n != (ssize_t)f->tail_len || memcmp(now, f->tail, f->tail_len);
}

/*
 * The process reached max_entries with @f: nothing more of it is read. The first file cut
 * is named in the stats for the end-of-run summary.
 */
static void file_cut(struct perfmaps *pm, struct pm_proc *p, struct pm_file *f)
{
	f->capped = true;
	p->cut = true;
	pm->st.files_cut++;
	if (!pm->st.cut_path) {
		pm->st.cut_path = f->path;
		pm->st.cut_pid = p->pid;
		pm->st.cut_bytes = f->off;
	}
	pr_debug("perfmap: %s of process %d: %llu entries reached after %llu bytes: the rest "
		 "is not read\n",
		 f->path, p->pid, (unsigned long long)pm->max_entries, (unsigned long long)f->off);
}

/*
 * Reads and parses what was appended since the last call; cost follows the new bytes.
 * At most pm->budget bytes (then f->pending) and max_entries entries per process.
 */
static int file_read(struct perfmaps *pm, struct pm_proc *p, struct pm_file *f)
{
	struct pm_index *ix = f->kind == PM_MAP ? &p->ix_map : &p->ix_dump;
	struct pm_index *other = f->kind == PM_MAP ? &p->ix_dump : &p->ix_map;
	struct pm_sink sink = {.ix = ix, .strs = pm->strs, .st = &pm->st};
	size_t need = 0, want, cap;
	uint64_t consumed, avail, dropped;
	struct stat st;
	uint8_t *nb;
	ssize_t n;
	int err = 0;

	file_set_pending(pm, f, false);
	if (f->fd < 0 || f->jd.broken || f->jd.closed || (f->capped && ix->dropped))
		return 0;
	if (other->nr >= pm->max_entries) {
		if (!f->capped)
			file_cut(pm, p, f); /* the process's other files hold the cap */
		return 0;
	}
	if (fstat(f->fd, &st)) {
		pm->st.read_errors++;
		file_warn(pm, p, f, "cannot stat", -errno);
		return 0;
	}
	if (file_rewritten(f, st.st_size)) {
		pm->st.files_rewritten++;
		pr_debug("perfmap: %s of process %d was rewritten: reading it again\n", f->path,
			 p->pid);
		file_restart(f);
	}
	for (;;) {
		if (f->off + f->have >= pm->max_file) {
			if ((uint64_t)st.st_size > pm->max_file && !f->capped) {
				f->capped = true;
				pm->st.files_capped++;
				pr_warn("perfmap: %s of process %d is larger than %llu bytes: "
					"the rest is not read\n",
					f->path, p->pid, (unsigned long long)pm->max_file);
			}
			break;
		}
		if (!pm->budget) {
			file_set_pending(pm, f, (uint64_t)st.st_size > f->off + f->have);
			break;
		}
		want = need > f->have ? need - f->have : READ_CHUNK;
		want = MIN((uint64_t)want, pm->max_file - (f->off + f->have));
		if (!need)
			want = MIN((uint64_t)want, pm->budget);
		if (f->have + want > f->cap) {
			cap = f->have + want;
			nb = realloc(f->buf, cap);
			if (!nb)
				return -ENOMEM;
			f->buf = nb;
			f->cap = cap;
		}
		n = pread(f->fd, f->buf + f->have, want, f->off + f->have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pm->st.read_errors++;
			file_warn(pm, p, f, "cannot read", -errno);
			break;
		}
		if (n == 0)
			break;
		f->have += n;
		pm->st.bytes_read += n;
		pm->budget -= MIN((uint64_t)n, pm->budget);
		p->stale = true;
		ix->max = pm->max_entries - other->nr;
		dropped = ix->dropped;
		if (f->kind == PM_MAP) {
			consumed = pm_text__parse(&f->text, (const char *)f->buf, f->have, false,
						  &sink, &err);
			tail_update(f, f->buf, consumed);
			need = 0;
		} else {
			avail = MAX((uint64_t)st.st_size, f->off + f->have) - f->off;
			consumed = pm_jd__parse(&f->jd, f->buf, f->have, avail, &need, &sink, &err);
			f->tail_len = 0; /* jitdumps are append-only: truncation is checked */
			if (f->jd.broken && !f->warned) {
				f->warned = true;
				pm->st.files_refused++;
				pr_warn("perfmap: %s of process %d is not a jitdump file or is "
					"corrupt: not read further\n",
					f->path, p->pid);
				pr_hint("jitdump files start with the magic \"JiTD\"; see "
					"linux "
					"tools/perf/Documentation/jitdump-specification.txt\n");
			}
		}
		if (consumed >= f->have) {
			f->off += consumed;
			f->have = 0;
		} else {
			memmove(f->buf, f->buf + consumed, f->have - consumed);
			f->have -= consumed;
			f->off += consumed;
		}
		if (ix->dropped > dropped) {
			/* counted as parsed by the parsers: entries that were not kept */
			if (f->kind == PM_MAP)
				pm->st.lines_parsed -= ix->dropped - dropped;
			else
				pm->st.records_parsed -= ix->dropped - dropped;
			pm->st.entries_dropped += ix->dropped - dropped;
			if (!f->capped)
				file_cut(pm, p, f);
		}
		if (err)
			return err;
		if (f->jd.broken || f->jd.closed || f->capped)
			break;
		if (f->kind == PM_DUMP && !consumed && need <= f->have)
			break; /* a record still being written */
	}
	return 0;
}

static const char *intern_fmt(struct perfmaps *pm, const char *fmt, int v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), fmt, v);
	return strset__intern(pm->strs, buf);
}

/*
 * Whether the file of @st was last written more than a second before process @p started:
 * the perf map of an earlier process with the same PID, which would name its JIT code
 * wrong. The start is PROC/PID/stat's starttime (CLOCK_BOOTTIME ticks); unreadable
 * (the process gone, a /proc without it): not stale.
 */
static bool map_older(const struct perfmaps *pm, const struct pm_proc *p, const struct stat *st)
{
	struct timespec real, boot;
	unsigned long long ticks;
	char path[4096], *buf = NULL, *q;
	long hz = sysconf(_SC_CLK_TCK);
	bool older = false;
	size_t len;

	snprintf(path, sizeof(path), "%s/%d/stat", pm->proc_root, p->pid);
	if (hz <= 0 || file__read_bounded(AT_FDCWD, path, MAX_STATUS_BYTES, &buf, &len))
		return false;
	/* the fields after the comm, which may hold anything: state (3) .. starttime (22) */
	q = strrchr(buf, ')');
	if (q && sscanf(q + 1,
			" %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
			"%llu",
			&ticks) == 1 &&
	    !clock_gettime(CLOCK_REALTIME, &real) && !clock_gettime(CLOCK_BOOTTIME, &boot)) {
		/* the file's mtime on the boot clock */
		double mtime = (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9 -
			       ((double)real.tv_sec + real.tv_nsec / 1e9) +
			       ((double)boot.tv_sec + boot.tv_nsec / 1e9);

		older = mtime < (double)ticks / (double)hz - 1.0;
	}
	free(buf);
	return older;
}

static int proc_open_map(struct perfmaps *pm, struct pm_proc *p)
{
	struct stat st;
	int fd, err;

	/* tracked by perfmaps__track_later(): its NSpid is found at the first look */
	if (!p->ids_known) {
		err = proc_ids(pm, p);
		if (err)
			return err == -ENOMEM ? err : 0; /* gone: no file to find */
	}
	if (!p->map.path) {
		p->map.path = intern_fmt(pm, "/tmp/perf-%d.map", p->nspid);
		if (!p->map.path)
			return -ENOMEM;
	}
	fd = open_checked(pm, p, p->map.path, &st);
	if (fd == -EPERM)
		p->map_refused = true;
	if (fd < 0)
		return 0;
	/* left by an earlier process with the PID: looked at again later (rewritten, it is
	 * the process's own) */
	if (map_older(pm, p, &st)) {
		close(fd);
		if (!p->map_stale) {
			p->map_stale = true;
			pm->st.maps_stale++;
			pr_warn("perfmap: ignoring %s/%d/root%s: last written before process %d "
				"started (an earlier process's)\n",
				pm->proc_root, p->pid, p->map.path, p->pid);
			pr_hint("remove the stale map; the runtime writes its own (docs/jit.md)\n");
		}
		return 0;
	}
	p->map.fd = fd;
	p->map.dev = st.st_dev;
	p->map.ino = st.st_ino;
	pm->st.maps_opened++;
	if (!p->label) {
		p->label = intern_fmt(pm, "[perf-%d.map]", p->nspid);
		if (!p->label)
			return -ENOMEM;
	}
	pr_debug("perfmap: reading %s of process %d\n", p->map.path, p->pid);
	return 0;
}

/* A perf map deleted or renamed over (atomic rewrite): finish the old one, take the new one. */
static int proc_check_replaced(struct perfmaps *pm, struct pm_proc *p)
{
	struct pm_file old;
	struct stat st;
	int err;

	if (fstat(p->map.fd, &st) || st.st_nlink > 0)
		return 0;
	err = file_read(pm, p, &p->map);
	if (err)
		return err;
	old = p->map;
	file_init(&p->map, PM_MAP);
	p->map.path = old.path;
	err = proc_open_map(pm, p);
	if (p->map.fd < 0) {
		file_close(pm, &p->map);
		p->map = old; /* no new file (yet): keep reading the old one */
		return err;
	}
	pm->st.files_rewritten++;
	pm->st.maps_opened--; /* the same map, reopened */
	file_close(pm, &old);
	return err;
}

static bool seen_dump(const struct pm_proc *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->nr_seen; i++)
		if (p->seen_dumps[i] == path)
			return true;
	return false;
}

/* Finds jitdumps through the process's own mappings of them (runtimes mmap them for perf). */
static int proc_scan_dumps(struct perfmaps *pm, struct pm_proc *p)
{
	char path[4096], *buf = NULL, *line, *next, *s;
	const char *name;
	struct pm_file *f;
	struct stat st;
	size_t len;
	int i, fd, err;

	snprintf(path, sizeof(path), "%s/%d/maps", pm->proc_root, p->pid);
	err = file__read_bounded(AT_FDCWD, path, MAX_MAPS_BYTES, &buf, &len);
	if (err) {
		err = err == -ENOMEM ? err : 0; /* gone, or not readable: nothing to find */
		goto cleanup;
	}
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strstr(line, ".dump"))
			continue;
		/* the path is the sixth field and may hold spaces */
		s = line;
		for (i = 0; i < 5 && s; i++) {
			s = strpbrk(s, " \t");
			if (s)
				s += strspn(s, " \t");
		}
		if (!s || *s != '/' || !path__is_jitdump(s, strlen(s)))
			continue; /* includes "... (deleted)": no path to open it by */
		name = strset__intern(pm->strs, s);
		if (!name) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (seen_dump(p, name) || p->nr_seen == ARRAY_SIZE(p->seen_dumps))
			continue;
		if (p->nr_dumps == MAX_DUMPS) {
			pr_debug("perfmap: process %d maps more than %d jitdumps; ignoring %s\n",
				 p->pid, MAX_DUMPS, name);
			continue;
		}
		fd = open_checked(pm, p, name, &st);
		if (fd == -ENOENT || fd == -ESRCH)
			continue; /* retried on a later scan */
		p->seen_dumps[p->nr_seen++] = name;
		if (fd < 0)
			continue;
		f = &p->dumps[p->nr_dumps++];
		file_init(f, PM_DUMP);
		f->fd = fd;
		f->path = name;
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		pm->st.dumps_opened++;
		pr_debug("perfmap: reading %s of process %d\n", name, p->pid);
	}
	err = 0;
cleanup:
	free(buf);
	return err;
}

/*
 * Looks for the perf map of @p, absent so far. In a @sweep (perfmaps__refresh(0)) only
 * when due: after 1, 2, 4, 8 and then every 16 sweeps since the last look, as most
 * processes never write one and a look costs three system calls.
 */
static int proc_look_for_map(struct perfmaps *pm, struct pm_proc *p, bool sweep)
{
	int err;

	if (sweep && p->map_retry_in && --p->map_retry_in)
		return 0;
	err = proc_open_map(pm, p);
	if (p->map.fd < 0) {
		p->map_retry_every = MIN(MAX(p->map_retry_every * 2, 1u), MAX_RESCAN_INTERVAL);
		p->map_retry_in = p->map_retry_every;
	}
	return err;
}

static int proc_refresh(struct perfmaps *pm, struct pm_proc *p, bool sweep)
{
	size_t i;
	int err = 0;

	/* a process tracked for later and never looked at is looked at by sweeps (and
	 * perfmaps__maps_changed()), not on its exit: its files are out of reach by then */
	if (p->map.fd < 0 && !p->map_refused && (sweep || p->ids_known))
		err = proc_look_for_map(pm, p, sweep);
	else if (p->map.fd >= 0)
		err = proc_check_replaced(pm, p);
	if (!err)
		err = file_read(pm, p, &p->map);
	if (!err && !pm->no_jitdump && p->rescan_in && !--p->rescan_in) {
		err = proc_scan_dumps(pm, p);
		/* runtimes create their jitdump at startup: look again less and less often,
		 * or only when told of new mappings */
		p->rescan_every = MIN(p->rescan_every * 2, MAX_RESCAN_INTERVAL);
		p->rescan_in = pm->scan_on_notice ? 0 : p->rescan_every;
	}
	for (i = 0; !err && i < p->nr_dumps; i++)
		err = file_read(pm, p, &p->dumps[i]);
	return err;
}

/* Adds process @pid, not tracked yet; its NSpid is found now unless @later. */
static int proc_new(struct perfmaps *pm, pid_t pid, bool later, struct pm_proc **out)
{
	struct pm_proc *p;
	int err;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	file_init(&p->map, PM_MAP);
	if (!later) {
		err = proc_ids(pm, p);
		if (err)
			goto cleanup;
	}
	err = proc_insert(pm, p);
	if (err)
		goto cleanup;
	pm->st.procs_tracked++;
	*out = p;
	return 0;
cleanup:
	proc_free(pm, p);
	return err;
}

int perfmaps__track(struct perfmaps *pm, pid_t pid)
{
	struct pm_proc *p;
	int err;

	if (pid <= 0)
		return -EINVAL;
	pm->budget = pm->slice;
	p = proc_find(pm, pid);
	if (!p) {
		err = proc_new(pm, pid, false, &p);
		if (err)
			return err;
		p->rescan_in = 1; /* scan now */
		p->rescan_every = 1;
	} else if (!p->ids_known) {
		err = proc_ids(pm, p); /* tracked for later: look now */
		if (err)
			return err;
	}
	return proc_refresh(pm, p, false);
}

int perfmaps__track_later(struct perfmaps *pm, pid_t pid)
{
	struct pm_proc *p;
	int err;

	if (pid <= 0)
		return -EINVAL;
	if (proc_find(pm, pid))
		return 0;
	err = proc_new(pm, pid, true, &p);
	if (err)
		return err;
	/* the first sweep looks for its perf map; jitdumps: the first refresh, or when told */
	p->map_retry_in = 1;
	p->rescan_in = pm->scan_on_notice ? 0 : 1;
	p->rescan_every = 1;
	return 0;
}

int perfmaps__refresh(struct perfmaps *pm, pid_t pid)
{
	struct hashmap_iter it;
	struct pm_proc *p;
	uint64_t val;
	int err;

	pm->budget = pm->slice;
	if (pid) {
		p = proc_find(pm, pid);
		return p ? proc_refresh(pm, p, false) : -ENOENT;
	}
	for (hashmap__iter_init(&pm->procs, &it); hashmap__iter_next(&pm->procs, &it, &val);) {
		err = proc_refresh(pm, (struct pm_proc *)(uintptr_t)val, true);
		if (err)
			return err;
	}
	return 0;
}

int perfmaps__maps_changed(struct perfmaps *pm, pid_t pid)
{
	struct pm_proc *p = proc_find(pm, pid);
	size_t i, first;
	int err;

	if (!p)
		return -ENOENT;
	pm->budget = pm->slice;
	/* a runtime starting up: its perf map may be next */
	p->map_retry_every = 0;
	if (p->map.fd < 0 && !p->map_refused) {
		err = proc_look_for_map(pm, p, false);
		if (!err)
			err = file_read(pm, p, &p->map);
		if (err)
			return err;
	}
	if (pm->no_jitdump)
		return 0;
	first = p->nr_dumps;
	err = proc_scan_dumps(pm, p);
	for (i = first; !err && i < p->nr_dumps; i++)
		err = file_read(pm, p, &p->dumps[i]);
	return err;
}

bool perfmaps__pending(const struct perfmaps *pm)
{
	return pm->nr_pending;
}

int perfmaps__continue(struct perfmaps *pm, bool all)
{
	struct hashmap_iter it;
	struct pm_proc *p;
	uint64_t val;
	size_t j;
	int err;

	pm->budget = all ? UINT64_MAX : pm->slice;
	for (hashmap__iter_init(&pm->procs, &it);
	     pm->nr_pending && pm->budget && hashmap__iter_next(&pm->procs, &it, &val);) {
		p = (struct pm_proc *)(uintptr_t)val;
		if (p->map.pending) {
			err = file_read(pm, p, &p->map);
			if (err)
				return err;
		}
		for (j = 0; j < p->nr_dumps; j++) {
			if (!p->dumps[j].pending)
				continue;
			err = file_read(pm, p, &p->dumps[j]);
			if (err)
				return err;
		}
	}
	return pm->nr_pending ? 1 : 0;
}

void perfmaps__forget(struct perfmaps *pm, pid_t pid)
{
	struct pm_proc *p = pm ? proc_find(pm, pid) : NULL;

	if (!p)
		return;
	proc_remove(pm, pid);
	proc_free(pm, p);
}

/*
 * Before the first lookup after reads: an unterminated last perf-map line is taken as it
 * is (the writer is done, or its last line is lost anyway), without consuming it, so a
 * later refresh still reads it whole; an incomplete jitdump record is counted.
 */
static int proc_finish(struct perfmaps *pm, struct pm_proc *p)
{
	struct pm_sink sink = {.ix = &p->ix_map, .strs = pm->strs, .st = &pm->st};
	struct pm_text_state ts = p->map.text;
	size_t i;
	int err = 0;

	if (!p->stale)
		return 0;
	/* a file read in slices: the index built before serves until it is read through
	 * (built once, not after every slice) */
	if (p->map.pending)
		return 0;
	for (i = 0; i < p->nr_dumps; i++)
		if (p->dumps[i].pending)
			return 0;
	if (p->map.have && !ts.skipping && !p->map.capped)
		pm_text__parse(&ts, (const char *)p->map.buf, p->map.have, true, &sink, &err);
	for (i = 0; i < p->nr_dumps; i++)
		if (p->dumps[i].have && !p->dumps[i].jd.broken)
			pm->st.records_truncated++;
	if (!err)
		err = pm_index__build(&p->ix_map);
	if (!err)
		err = pm_index__build(&p->ix_dump);
	if (!err)
		p->stale = false;
	return err;
}

static int lookup(struct perfmaps *pm, pid_t pid, uint64_t ip, bool at, uint64_t ts,
		  const char **name, uint64_t *offset)
{
	const struct pm_entry *e;
	struct pm_proc *p;
	int err;

	*name = NULL;
	*offset = 0;
	pm->st.lookups++;
	p = proc_find(pm, pid);
	if (!p)
		return -ENOENT;
	err = proc_finish(pm, p);
	if (err)
		return err;
	if (at)
		e = pm_index__find_at(&p->ix_dump, ip, ts);
	else
		e = pm_index__find(&p->ix_dump, ip);
	if (!e)
		e = pm_index__find(&p->ix_map, ip);
	if (!e) {
		if (p->cut)
			pm->st.lookups_cut++;
		*name = p->label;
		return -ENOENT;
	}
	*name = e->name;
	*offset = ip - e->start;
	pm->st.lookups_resolved++;
	return 0;
}

int perfmaps__lookup(void *pm, pid_t pid, uint64_t ip, const char **name, uint64_t *offset)
{
	return lookup(pm, pid, ip, false, 0, name, offset);
}

int perfmaps__lookup_at(struct perfmaps *pm, pid_t pid, uint64_t ip, uint64_t ts_ns,
			const char **name, uint64_t *offset)
{
	return lookup(pm, pid, ip, true, ts_ns, name, offset);
}

void perfmaps__stats(const struct perfmaps *pm, struct perfmaps_stats *st)
{
	*st = pm->st;
}
