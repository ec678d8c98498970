// SPDX-License-Identifier: MIT
/* tests/symbolize: the /proc/PID/maps parser on fixture text, truncations and our own maps. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "symbolize-private.h"

static const char fixture[] =
	"55d0c6a00000-55d0c6a02000 r--p 00000000 fd:01 1234                       /usr/bin/cat\n"
	"55d0c6a02000-55d0c6a07000 r-xp 00002000 fd:01 1234                       /usr/bin/cat\n"
	"7f0000000000-7f0000001000 r-xs 00001000 08:1a 99                 /opt/my app/lib x.so\n"
	"7f0000002000-7f0000003000 r-xp 00000000 00:05 77                 /tmp/gone.so (deleted)\n"
	"7f0000004000-7f0000005000 rw-p 00000000 00:00 0 \n"
	"7f0000005000-7f0000006000 rwxp 00000000 00:00 0\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
	"\n"
	"garbage\n"
	"7f00-\n"
	"7f0000006000-7f0000005000 r-xp 00000000 00:00 0\n" /* end < start */
	"7f0000006000-7f0000007000 rwzp 00000000 00:00 0\n" /* bad perms */
	"7f0000006000-7f0000007000 r-xp 0000000g 00:00 0\n" /* bad offset */
	"7f0000006000-7f0000007000 r-xp 00000000 00-00 0\n" /* bad device */
	"7f0000006000-7f0000007000 r-xp 00000000 00:00 99999999999999999999999 /x\n" /* inode */
	"17f0000006000000000-7f0000007000 r-xp 00000000 00:00 0\n"	/* start overflows */
	"7f0000006000-7f0000007000 r-x\n"				/* cut short */
	"7f0000006000-7f0000007000 r-xp 00000000 00:00 0x /y\n"		/* junk after inode */
	"7f000000a000-7f000000b000 r-xp 00000000 fd:01 5 /lib/last.so"; /* no final newline */

static const char only_deleted[] = "1000-2000 r-xp 0 0:0 0  (deleted)\n";

static const char with_nul[] = "1000-2000 r-xp 0 0:0 0 /a\0b\n1000-2000 r-xp 0 0:0 0 /c\n";

static void test_fixture(void)
{
	struct strset *strs = strset__new();
	struct map_entry *e;
	size_t nr, bad;

	CHECK(strs);
	CHECK(!maps__parse(fixture, strlen(fixture), strs, &e, &nr, &bad));
	CHECK_U64(nr, 10);
	CHECK_U64(bad, 10);

	CHECK_U64(e[0].start, 0x55d0c6a00000);
	CHECK_U64(e[0].end, 0x55d0c6a02000);
	CHECK_U64(e[0].perms, MAP_PERM_R);
	CHECK_STR(e[0].path, "/usr/bin/cat");
	CHECK_U64(e[1].pgoff, 0x2000);
	CHECK_U64(e[1].perms, MAP_PERM_R | MAP_PERM_X);
	CHECK_U64(e[1].dev_major, 0xfd);
	CHECK_U64(e[1].dev_minor, 1);
	CHECK_U64(e[1].inode, 1234);
	CHECK(e[0].path == e[1].path); /* interned */
	CHECK(!e[1].deleted);

	CHECK_STR(e[2].path, "/opt/my app/lib x.so");
	CHECK_U64(e[2].perms, MAP_PERM_R | MAP_PERM_X | MAP_PERM_SHARED);
	CHECK_U64(e[2].dev_major, 8);
	CHECK_U64(e[2].dev_minor, 0x1a);

	CHECK_STR(e[3].path, "/tmp/gone.so");
	CHECK(e[3].deleted);

	CHECK_STR(e[4].path, "");
	CHECK_U64(e[4].perms, MAP_PERM_R | MAP_PERM_W);
	CHECK_STR(e[5].path, "");
	CHECK_U64(e[5].perms, MAP_PERM_R | MAP_PERM_W | MAP_PERM_X);
	CHECK_STR(e[6].path, "[stack]");
	CHECK_STR(e[7].path, "[vdso]");
	CHECK_STR(e[8].path, "[vsyscall]");
	CHECK_U64(e[8].start, 0xffffffffff600000);
	CHECK_U64(e[8].perms, MAP_PERM_X);
	CHECK_STR(e[9].path, "/lib/last.so");
	CHECK_U64(e[9].inode, 5);
	free(e);

	/* a path that is only " (deleted)" is not a deleted empty path */
	CHECK(!maps__parse(only_deleted, strlen(only_deleted), strs, &e, &nr, &bad));
	CHECK_U64(nr, 1);
	CHECK_STR(e[0].path, "(deleted)");
	CHECK(!e[0].deleted);
	free(e);

	CHECK(!maps__parse("", 0, strs, &e, &nr, &bad));
	CHECK_U64(nr, 0);
	CHECK(!e);
	strset__free(strs);
}

/* Every prefix of the fixture, in an exactly-sized heap buffer: no overread, no crash. */
static void test_truncations(void)
{
	struct strset *strs = strset__new();
	size_t len = strlen(fixture), i, nr, bad, prev = 0;
	struct map_entry *e;
	char *buf;

	CHECK(strs);
	for (i = 0; i <= len; i++) {
		buf = malloc(i + 1);
		CHECK(buf);
		memcpy(buf, fixture, i);
		CHECK(!maps__parse(buf, i, strs, &e, &nr, &bad));
		CHECK(nr + 1 >= prev); /* only the cut line may change, e.g. turn bad */
		CHECK(nr <= 10);
		prev = nr;
		free(e);
		free(buf);
	}
	/* NUL bytes inside a line make it garbage, not a shorter valid line */
	CHECK(!maps__parse(with_nul, sizeof(with_nul) - 1, strs, &e, &nr, &bad));
	CHECK_U64(nr, 1);
	CHECK_U64(bad, 1);
	CHECK_STR(e[0].path, "/c");
	free(e);
	strset__free(strs);
}

/* Our own maps: the entry holding this function is executable and names our binary. */
static void test_self(void)
{
	struct strset *strs = strset__new();
	uint64_t here = (uintptr_t)test_self;
	size_t len, nr, bad, i, hits = 0;
	struct map_entry *e;
	char exe[4096];
	ssize_t n;
	char *text;

	CHECK(strs);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(!file__read_bounded(AT_FDCWD, "/proc/self/maps", MAPS_MAX_BYTES, &text, &len));
	CHECK(!maps__parse(text, len, strs, &e, &nr, &bad));
	CHECK_U64(bad, 0);
	CHECK(nr > 5);
	for (i = 0; i < nr; i++) {
		if (here < e[i].start || here >= e[i].end)
			continue;
		hits++;
		CHECK(e[i].perms & MAP_PERM_X);
		CHECK_STR(e[i].path, exe);
	}
	CHECK_U64(hits, 1);
	free(e);
	free(text);
	strset__free(strs);
}

int main(void)
{
	test_fixture();
	test_truncations();
	test_self();
	printf("ok\n");
	return 0;
}
