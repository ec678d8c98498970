// SPDX-License-Identifier: MIT
/*
 * symbolize: decompressed debug sections kept on disk by build-id.
 *
 * Debian's debug files (libc6-dbg, every -dbgsym package) compress their DWARF with
 * zlib: libc's 4 MB inflate to 7 MB at the first lookup of every run, ~40 ms, most of
 * the end of a recording whose samples touch libc. An entry holds the sections a DWARF
 * index reads, decompressed, under the build-id of the file they came from, and after
 * them a blob of the caller's (the index's unit list: dwarf.c); the next run maps them
 * (no copy: page cache pages) and checks their CRC-32s instead (a few ms).
 *
 * We run as root: the directory is used only if it is ours alone (a directory, not a
 * symlink, owned by the effective user, writable by no one else). An entry is opened
 * without following symlinks, must be a regular file of ours, and must match the file
 * being read (build-id, each section's name and both sizes) and its own CRCs: a torn,
 * stale or damaged entry is not used, and is replaced. Entries are written under a
 * temporary name and renamed into place; beyond DW_CACHE_MAX_BYTES in all, the least
 * recently used (an entry's mtime is set when it is used) are removed. Entries are
 * mapped, never truncated in place (a writer renames a new file over, pruning unlinks):
 * a mapping keeps the inode it was made of, whole, whatever happens to the name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize-private.h"

#define DWC_MAGIC	  "SCORCHdw"
#define DWC_VERSION	  2 /* 2: the caller's blob after the sections */
#define DWC_SUFFIX	  ".dw"
#define DWC_TMP_PREFIX	  ".tmp-"
#define DWC_TMP_STALE_SEC 600	 /* a temporary file this old was left by a crash */
#define DWC_MAX_FILES	  100000 /* directory entries looked at when pruning */
#define DWC_NAME_LEN	  (BUILD_ID_MAX * 2 + 1 + 16 + sizeof(DWC_SUFFIX))

struct dw_cache {
	int dirfd;
	const char *dir;    /* for messages (the caller's string) */
	uint64_t max_bytes; /* DW_CACHE_MAX_BYTES; tests shrink it */
};

/*
 * The on-disk header, then nr entries, then each section's bytes at its offset, then
 * extra_len bytes of the caller's (dw_cache__store()'s @extra).
 */
struct dwc_hdr {
	char magic[8];
	uint32_t version;
	uint32_t nr;
	uint64_t total; /* the entry's size in bytes */
	uint32_t id_len;
	uint8_t id[BUILD_ID_MAX];
	uint32_t extra_crc;
	uint64_t extra_len;
};

struct dwc_ent {
	char name[DW_CACHE_NAME_MAX];
	uint64_t csize, usize, off;
	uint32_t crc, pad;
};

int dw_cache__open(const char *dir, struct dw_cache **out)
{
	struct dw_cache *c;
	struct stat st;
	int fd;

	*out = NULL;
	if (!dir || !*dir)
		return 0;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		pr_debug("symbolize: debug cache %s: %s: not used\n", dir, strerror(errno));
		return 0;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		pr_debug("symbolize: debug cache %s: %s: not used\n", dir, strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid()) {
		pr_debug("symbolize: debug cache %s: not owned by this user: not used\n", dir);
		close(fd);
		return 0;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		pr_warn("symbolize: debug cache %s is writable by others: not used\n", dir);
		pr_hint("chmod go-w %s, or set SCORCH_CACHE_DIR to another directory (empty: "
			"no cache)\n",
			dir);
		close(fd);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->dirfd = fd;
	c->dir = dir;
	c->max_bytes = DW_CACHE_MAX_BYTES;
	*out = c;
	return 0;
}

void dw_cache__set_max(struct dw_cache *c, uint64_t bytes)
{
	c->max_bytes = bytes;
}

void dw_cache__free(struct dw_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c);
}

/*
 * "<hex build-id>-<hash of the sections>.dw" in @buf (DWC_NAME_LEN bytes): one file
 * read with and without its line tables (--lines) has two entries. False when @id is
 * empty or too long.
 */
static bool entry_name(const uint8_t *id, size_t id_len, const struct dw_cache_sec *secs, size_t n,
		       char *buf)
{
	uint64_t h = 0;
	size_t i;

	if (!id_len || id_len > BUILD_ID_MAX)
		return false;
	for (i = 0; i < n; i++) {
		h = hash__bytes(secs[i].name, strlen(secs[i].name), h);
		h = hash__bytes(&secs[i].csize, sizeof(secs[i].csize), h);
		h = hash__bytes(&secs[i].usize, sizeof(secs[i].usize), h);
	}
	for (i = 0; i < id_len; i++)
		snprintf(buf + i * 2, 3, "%02x", id[i]);
	snprintf(buf + id_len * 2, DWC_NAME_LEN - id_len * 2, "-%016llx" DWC_SUFFIX,
		 (unsigned long long)h);
	return true;
}

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* zlib's crc32() takes at most UINT_MAX bytes a call. */
static uint32_t crc_of(const void *data, uint64_t len)
{
	const unsigned char *p = data;
	uLong crc = crc32(0L, Z_NULL, 0);

	while (len) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		crc = crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return (uint32_t)crc;
}

void dw_cache__unmap(struct dw_cache_map *map)
{
	if (map->base)
		munmap(map->base, map->len);
	map->base = NULL;
	map->len = 0;
}

int dw_cache__load(struct dw_cache *c, const uint8_t *id, size_t id_len, struct dw_cache_sec *secs,
		   size_t n, const char *what, struct dw_cache_map *map, const void **extra,
		   uint64_t *extra_len)
{
	struct dwc_ent ents[DW_CACHE_MAX_SECS];
	const char *why = "no entry";
	struct dwc_hdr h;
	struct stat st;
	char name[DWC_NAME_LEN];
	uint64_t pos;
	size_t i;
	int fd = -1, err = -ENOENT;

	for (i = 0; i < n; i++)
		secs[i].data = NULL;
	*map = (struct dw_cache_map){0};
	*extra = NULL;
	*extra_len = 0;
	if (!c || !n || n > DW_CACHE_MAX_SECS || !entry_name(id, id_len, secs, n, name))
		return -ENOENT;
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		goto cleanup;
	why = "not a regular file of ours";
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		goto cleanup;
	why = "header";
	if (pread_full(fd, &h, sizeof(h), 0) || memcmp(h.magic, DWC_MAGIC, sizeof(h.magic)) ||
	    h.version != DWC_VERSION || h.nr != n || h.id_len != id_len ||
	    memcmp(h.id, id, id_len) || h.total != (uint64_t)st.st_size || h.total > c->max_bytes)
		goto cleanup;
	if (pread_full(fd, ents, n * sizeof(*ents), sizeof(h)))
		goto cleanup;
	/* the sections asked for, in order, back to back after the entries */
	why = "sections differ from the file's";
	pos = sizeof(h) + n * sizeof(*ents);
	for (i = 0; i < n; i++) {
		const struct dwc_ent *e = &ents[i];

		if (e->name[sizeof(e->name) - 1] || strcmp(e->name, secs[i].name) ||
		    e->csize != secs[i].csize || e->usize != secs[i].usize || e->off != pos ||
		    e->usize > h.total - pos)
			goto cleanup;
		pos += e->usize;
	}
	if (h.extra_len != h.total - pos)
		goto cleanup;
	/*
	 * Private and writable, as the malloc'd buffers it replaces were to libelf; read
	 * only, it stays the page cache's pages (no copy). Not MAP_POPULATE: on a private
	 * writable mapping that would copy every page.
	 */
	why = "cannot be mapped";
	map->base = mmap(NULL, h.total, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map->base == MAP_FAILED) {
		map->base = NULL;
		if (errno == ENOMEM)
			err = -ENOMEM;
		goto cleanup;
	}
	map->len = h.total;
	why = "damaged (CRC)";
	for (i = 0; i < n; i++) {
		secs[i].data = (char *)map->base + ents[i].off;
		if (crc_of(secs[i].data, ents[i].usize) != ents[i].crc)
			goto cleanup;
	}
	if (crc_of((char *)map->base + pos, h.extra_len) != h.extra_crc)
		goto cleanup;
	*extra = h.extra_len ? (char *)map->base + pos : NULL;
	*extra_len = h.extra_len;
	/* used now: the last to go when the cache is pruned */
	futimens(fd, NULL);
	pr_debug("symbolize: %s: debug sections from the cache (%s/%s)\n", what, c->dir, name);
	err = 0;
cleanup:
	if (err) {
		if (err == -ENOENT && fd >= 0)
			pr_debug("symbolize: %s: cache entry %s/%s not used: %s\n", what, c->dir,
				 name, why);
		for (i = 0; i < n; i++)
			secs[i].data = NULL;
		dw_cache__unmap(map);
	}
	if (fd >= 0)
		close(fd);
	return err;
}

struct dwc_file {
	char name[DWC_NAME_LEN];
	uint64_t bytes;
	struct timespec used;
};

static int used_cmp(const void *a, const void *b)
{
	const struct dwc_file *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* Removes the least recently used entries beyond c->max_bytes, and stale temporary
 * files. Best effort. */
static void prune(struct dw_cache *c)
{
	struct dwc_file *files = NULL;
	size_t nr = 0, cap = 0, seen = 0, i;
	uint64_t total = 0;
	struct dirent *de;
	int fd;
	DIR *d;

	fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) && seen++ < DWC_MAX_FILES) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (!strncmp(de->d_name, DWC_TMP_PREFIX, strlen(DWC_TMP_PREFIX))) {
			if (time(NULL) - st.st_mtime > DWC_TMP_STALE_SEC)
				unlinkat(c->dirfd, de->d_name, 0);
			continue;
		}
		if (len <= strlen(DWC_SUFFIX) || len >= sizeof(files->name) ||
		    strcmp(de->d_name + len - strlen(DWC_SUFFIX), DWC_SUFFIX))
			continue;
		if (array__grow((void **)&files, &cap, nr + 1, sizeof(*files)))
			goto cleanup;
		memcpy(files[nr].name, de->d_name, len + 1);
		files[nr].bytes = (uint64_t)st.st_size;
		files[nr].used = st.st_mtim;
		total += files[nr].bytes;
		nr++;
	}
	if (total <= c->max_bytes)
		goto cleanup;
	qsort(files, nr, sizeof(*files), used_cmp);
	for (i = 0; i < nr && total > c->max_bytes; i++) {
		if (!unlinkat(c->dirfd, files[i].name, 0)) {
			total -= files[i].bytes;
			pr_debug("symbolize: debug cache %s: %s removed (least recently used)\n",
				 c->dir, files[i].name);
		}
	}
cleanup:
	free(files);
	closedir(d);
}

int dw_cache__store(struct dw_cache *c, const uint8_t *id, size_t id_len,
		    const struct dw_cache_sec *secs, size_t n, const void *extra,
		    uint64_t extra_len)
{
	struct dwc_ent ents[DW_CACHE_MAX_SECS];
	char name[DWC_NAME_LEN];
	char tmp[sizeof(name) + 32];
	struct dwc_hdr h;
	uint64_t pos;
	size_t i;
	int fd, err = 0;

	if (!c || !n || n > DW_CACHE_MAX_SECS || !entry_name(id, id_len, secs, n, name))
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	memset(ents, 0, sizeof(ents));
	memcpy(h.magic, DWC_MAGIC, sizeof(h.magic));
	h.version = DWC_VERSION;
	h.nr = (uint32_t)n;
	h.id_len = (uint32_t)id_len;
	memcpy(h.id, id, id_len);
	pos = sizeof(h) + n * sizeof(*ents);
	for (i = 0; i < n; i++) {
		size_t len = strlen(secs[i].name);

		if (len >= sizeof(ents[i].name))
			return -ENAMETOOLONG;
		memcpy(ents[i].name, secs[i].name, len + 1);
		ents[i].csize = secs[i].csize;
		ents[i].usize = secs[i].usize;
		ents[i].off = pos;
		ents[i].crc = crc_of(secs[i].data, secs[i].usize);
		pos += secs[i].usize;
	}
	h.extra_len = extra ? extra_len : 0;
	h.extra_crc = crc_of(extra, h.extra_len);
	/* one file may not take more than a quarter of the cache */
	if (pos > c->max_bytes / 4 || h.extra_len > c->max_bytes / 4 - pos)
		return -EFBIG;
	h.total = pos + h.extra_len;
	snprintf(tmp, sizeof(tmp), DWC_TMP_PREFIX "%d-%s", (int)getpid(), name);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_full(fd, &h, sizeof(h));
	if (!err)
		err = write_full(fd, ents, n * sizeof(*ents));
	for (i = 0; i < n && !err; i++)
		err = write_full(fd, secs[i].data, secs[i].usize);
	if (!err)
		err = write_full(fd, extra, h.extra_len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(c->dirfd, tmp, c->dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(c->dirfd, tmp, 0);
		pr_debug("symbolize: debug cache %s: cannot write %s: %s\n", c->dir, name,
			 strerror(-err));
		return err;
	}
	pr_debug("symbolize: debug cache %s: %s written (%llu bytes)\n", c->dir, name,
		 (unsigned long long)h.total);
	prune(c);
	return 0;
}
