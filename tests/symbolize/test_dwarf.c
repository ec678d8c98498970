// SPDX-License-Identifier: MIT
/*
 * tests/symbolize: DWARF read one compile unit at a time, on demand (libc's debug file),
 * and the cache of decompressed debug sections.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "elf-test.h"

/* One lookup's answer, copied out of its index. */
struct dw_answer {
	int n;
	char text[1024];
};

static void dw_answer(struct dwarf_index *idx, uint64_t addr, struct dw_answer *a)
{
	struct dw_frame fr[8];
	size_t len = 0;
	int i;

	a->n = dwarf_index__lookup(idx, addr, fr, ARRAY_SIZE(fr));
	CHECK(a->n >= 0);
	a->text[0] = '\0';
	for (i = 0; i < (a->n ? a->n : 1) && len < sizeof(a->text); i++)
		len += (size_t)snprintf(a->text + len, sizeof(a->text) - len,
					"%s@%" PRIx64 "%s %s:%u;", fr[i].name ? fr[i].name : "-",
					fr[i].entry, fr[i].inlined ? "[i]" : "",
					fr[i].file ? fr[i].file : "-", fr[i].line);
}

/*
 * A compile unit is read on the first lookup inside it (libc's debug file: a lookup
 * reads one of ~2,000), and what a lookup answers does not depend on which units were
 * read before it: the same addresses asked in opposite orders of two indexes, and the
 * frames of a few ones that are known. Needs Debian's libc6-dbg (installed by
 * scripts/setup.sh): required under CI=true.
 */
static void test_dwarf_lazy(void)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct dwarf_index *a = NULL, *b = NULL;
	struct strset *strs = strset__new();
	struct elf_file *f = NULL;
	struct dw_answer *ans, one;
	size_t read, total, i, n = 4000, inlined = 0, named = 0;
	uint64_t *addrs, text = 0, text_size = 0, x = 88172645463325252ull;
	int fd, dfd = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	CHECK(strs);
	fd = open(libc, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		f = elf_file__parse(fd, NULL, 0, strs, libc);
	if (f)
		dfd = debuginfo__open(f, "/usr/lib/debug");
	if (dfd < 0) {
		CHECK(!getenv("CI") || strcmp(getenv("CI"), "true"));
		printf("note: libc6-dbg not installed, lazy DWARF units not tested\n");
		goto cleanup;
	}
	/* .text's addresses (NOBITS in the debug file, its header kept) */
	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_begin(dfd, ELF_C_READ, NULL);
	CHECK(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".text")) {
			text = sh.sh_addr;
			text_size = sh.sh_size;
		}
	elf_end(elf);
	CHECK(text_size > 0x10000);

	CHECK(!dwarf_index__build_lines(dfd, libc, true, NULL, &a));
	CHECK(!dwarf_index__build_lines(dfd, libc, true, NULL, &b));
	dwarf_index__units(a, &read, &total);
	CHECK(read == 0 && total > 500);
	dw_answer(a, text + text_size / 2, &one);
	dwarf_index__units(a, &read, &total);
	CHECK(read >= 1 && read <= 2);

	addrs = calloc(n, sizeof(*addrs));
	ans = calloc(n, sizeof(*ans));
	CHECK(addrs && ans);
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		addrs[i] = text + x % text_size;
	}
	for (i = 0; i < n; i++)
		dw_answer(a, addrs[i], &ans[i]);
	for (i = n; i-- > 0;) {
		dw_answer(b, addrs[i], &one);
		CHECK(one.n == ans[i].n);
		CHECK_STR(one.text, ans[i].text);
		named += one.n > 0;
		inlined += one.n > 1;
	}
	/* DWARF names most of libc's text, inline chains a good part of it */
	CHECK(named > n * 9 / 10 && inlined > n / 10);
	dwarf_index__units(b, &read, &total);
	CHECK(read > 100 && read <= total);
	free(addrs);
	free(ans);
cleanup:
	dwarf_index__free(a);
	dwarf_index__free(b);
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0)
		close(fd);
	elf_file__free(f);
	strset__free(strs);
}

/* The entry of build-id @id in @cdir (the first file named after it): true if found. */
static bool cache_entry(const char *cdir, const uint8_t *id, size_t id_len, char *path, size_t size)
{
	char hex[2 * BUILD_ID_MAX + 1];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(cdir);
	size_t i;

	CHECK(d);
	for (i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	while (!found && (de = readdir(d)))
		if (!strncmp(de->d_name, hex, 2 * id_len)) {
			snprintf(path, size, "%s/%s", cdir, de->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

static void rm_dir(const char *cdir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(cdir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", cdir, de->d_name);
			CHECK(!unlink(path));
		}
	closedir(d);
	CHECK(!rmdir(cdir));
}

/* The blob stored with the sections (a DWARF index's unit list, opaque to the cache). */
static char cache_extra[333];

/* Loads @secs' sizes and names under @id into @got; returns dw_cache__load's result and
 * unmaps what it read after comparing it with @secs, and the blob with cache_extra's
 * first @extra_len bytes. */
static int cache_load(struct dw_cache *c, const uint8_t *id, const struct dw_cache_sec *secs,
		      size_t extra_len)
{
	struct dw_cache_sec got[2];
	struct dw_cache_map map;
	const void *extra;
	uint64_t got_len;
	int err, i;

	for (i = 0; i < 2; i++)
		got[i] = (struct dw_cache_sec){
			.name = secs[i].name, .csize = secs[i].csize, .usize = secs[i].usize};
	err = dw_cache__load(c, id, 20, got, 2, "test", &map, &extra, &got_len);
	for (i = 0; i < 2; i++) {
		if (!err)
			CHECK(!memcmp(got[i].data, secs[i].data, secs[i].usize));
		else
			CHECK(!got[i].data);
	}
	if (!err) {
		CHECK_U64(got_len, extra_len);
		CHECK(extra_len ? extra && !memcmp(extra, cache_extra, extra_len) : !extra);
	} else {
		CHECK(!extra && !got_len);
	}
	CHECK(!err == !!map.base);
	dw_cache__unmap(&map);
	CHECK(!map.base && !map.len);
	return err;
}

/*
 * The cache of decompressed debug sections: an entry is read back only when it matches
 * the file asked about (build-id, section names and sizes) and is intact, in a directory
 * and a file of ours alone that are not symlinks; the least recently used go first.
 */
static void test_dwcache(void)
{
	char cdir[] = "/tmp/scorch-dwcache-XXXXXX", path[PATH_MAX], other[PATH_MAX + 8];
	static char info[3000], abbrev[200];
	struct dw_cache_sec secs[2] = {
		{.name = ".debug_info", .csize = 1000, .usize = sizeof(info), .data = info},
		{.name = ".debug_abbrev", .csize = 90, .usize = sizeof(abbrev), .data = abbrev},
	};
	uint8_t id[5][20];
	struct timespec ts[2];
	struct dw_cache *c = NULL, *c2 = NULL;
	struct stat st;
	size_t i, j;
	char *img;
	size_t len;

	for (i = 0; i < sizeof(info); i++)
		info[i] = (char)rng();
	for (i = 0; i < sizeof(abbrev); i++)
		abbrev[i] = (char)rng();
	for (i = 0; i < sizeof(cache_extra); i++)
		cache_extra[i] = (char)rng();
	for (i = 0; i < 5; i++)
		for (j = 0; j < 20; j++)
			id[i][j] = (uint8_t)(i * 31 + j);
	CHECK(mkdtemp(cdir));
	CHECK(!dw_cache__open(cdir, &c) && c);

	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!dw_cache__store(c, id[0], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra)));
	CHECK(cache_entry(cdir, id[0], 20, path, sizeof(path)));
	CHECK(!stat(path, &st) && (st.st_mode & 0777) == 0600);
	/* another build-id; another compressed size (another build of the file): no entry */
	CHECK(cache_load(c, id[1], secs, sizeof(cache_extra)) == -ENOENT);
	secs[1].csize++;
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	secs[1].csize--;

	/* one byte of a section changed, or of the blob after them: the CRC refuses it; a
	 * store mends it */
	img = read_whole(path, &len);
	img[len - sizeof(cache_extra) - 1] ^= 1;
	write_file(path, img, len);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	img[len - sizeof(cache_extra) - 1] ^= 1;
	img[len - 1] ^= 1;
	write_file(path, img, len);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	/* torn: shorter than its header says */
	write_file(path, img, len - 100);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	/* the build-id in the header is not the name's */
	img[len - 1] ^= 1;
	img[8 + 4 + 4 + 8 + 4] ^= 0xff;
	write_file(path, img, len);
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!dw_cache__store(c, id[0], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra)));
	/* writable by others */
	CHECK(!chmod(path, 0622));
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!chmod(path, 0600));
	/* a symlink in its place, to an intact copy: not followed */
	snprintf(other, sizeof(other), "%s.copy", cdir);
	img[8 + 4 + 4 + 8 + 4] ^= 0xff;
	write_file(other, img, len);
	CHECK(!unlink(path));
	CHECK(!symlink(other, path));
	CHECK(cache_load(c, id[0], secs, sizeof(cache_extra)) == -ENOENT);
	CHECK(!unlink(path));
	CHECK(!rename(other, path));
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra)));
	free(img);

	/* five entries where four and a half fit: the least recently used goes */
	dw_cache__set_max(c, len * 9 / 2);
	for (i = 1; i < 4; i++)
		CHECK(!dw_cache__store(c, id[i], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	for (i = 0; i < 4; i++) {
		CHECK(cache_entry(cdir, id[i], 20, path, sizeof(path)));
		ts[0] = ts[1] = (struct timespec){.tv_sec = time(NULL) - 100 + (time_t)i};
		CHECK(!utimensat(AT_FDCWD, path, ts, 0));
	}
	CHECK(!cache_load(c, id[0], secs, sizeof(cache_extra))); /* used now: the newest */
	CHECK(!dw_cache__store(c, id[4], 20, secs, 2, cache_extra, sizeof(cache_extra)));
	CHECK(!cache_entry(cdir, id[1], 20, path, sizeof(path)));
	for (i = 0; i < 5; i++)
		CHECK(i == 1 || cache_entry(cdir, id[i], 20, path, sizeof(path)));
	/* an entry without a blob gives none back */
	CHECK(!dw_cache__store(c, id[1], 20, secs, 2, NULL, 0));
	CHECK(!cache_load(c, id[1], secs, 0));
	/* an entry over a quarter of the cache is not written */
	dw_cache__set_max(c, len * 3);
	CHECK(dw_cache__store(c, id[1], 20, secs, 2, NULL, 0) == -EFBIG);
	dw_cache__free(c);

	/* the directory: writable by others, or a symlink, is no cache */
	CHECK(!chmod(cdir, 0733));
	CHECK(!dw_cache__open(cdir, &c2) && !c2);
	CHECK(!chmod(cdir, 0700));
	snprintf(other, sizeof(other), "%s.link", cdir);
	CHECK(!symlink(cdir, other));
	CHECK(!dw_cache__open(other, &c2) && !c2);
	CHECK(!unlink(other));
	/* made when missing (its parent existing), mode 0700; none asked: none */
	snprintf(other, sizeof(other), "%s/sub", cdir);
	CHECK(!dw_cache__open(other, &c2) && c2);
	CHECK(!stat(other, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	dw_cache__free(c2);
	CHECK(!rmdir(other));
	CHECK(!dw_cache__open(NULL, &c2) && !c2);
	CHECK(!dw_cache__open("", &c2) && !c2);
	rm_dir(cdir);
}

int main(void)
{
	if (getenv("SCORCH_TEST_DEBUG"))
		log__set_level(LOG_DEBUG);
	test_dwarf_lazy();
	test_dwcache();
	printf("ok\n");
	return 0;
}
