// SPDX-License-Identifier: MIT
/* tests/perfmap: the perf-map and jitdump parsers and the later-wins index, on fixtures. */
#include <errno.h>

#include "../symbolize/check.h"
#include "jitdump-writer.h"
#include "perfmap-private.h"

struct ctx {
	struct strset *strs;
	struct pm_index ix;
	struct perfmaps_stats st;
	struct pm_sink sink;
};

static void ctx_init(struct ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->strs = strset__new();
	CHECK(c->strs);
	c->sink = (struct pm_sink){.ix = &c->ix, .strs = c->strs, .st = &c->st};
}

static void ctx_fini(struct ctx *c)
{
	pm_index__free(&c->ix);
	strset__free(c->strs);
}

static size_t text(struct ctx *c, const char *s, size_t len, bool final)
{
	struct pm_text_state ts = {0};
	size_t n;
	int err;

	n = pm_text__parse(&ts, s, len, final, &c->sink, &err);
	CHECK(!err);
	CHECK(!pm_index__build(&c->ix));
	return n;
}

static const char *name_at(struct ctx *c, uint64_t ip)
{
	const struct pm_entry *e = pm_index__find(&c->ix, ip);

	return e ? e->name : NULL;
}

/* Node (--perf-basic-prof), Python 3.12 (-X perf), Julia-style: hex without 0x. */
static void test_formats(void)
{
	static const char s[] = "3c7fd0e0a040 2c LazyCompile:~hot /tmp/hot.js:1:13\n"
				"7f1e2a5f0000 b py::hot:/tmp/hot.py\n"
				"0x00007f0c1d0b5a00 0x0000000000000120 void Main.hot(long)\n"
				"0X7F0C1D0B6000 0X10 Interpreter\n"
				"7f3a2c001000 90 julia_fib_17\n"
				"ABCDEF000 1\tname\twith tab\n";
	struct ctx c;

	ctx_init(&c);
	CHECK_U64(text(&c, s, strlen(s), false), strlen(s));
	CHECK_U64(c.st.lines_parsed, 6);
	CHECK_U64(c.st.lines_bad, 0);
	CHECK_STR(name_at(&c, 0x3c7fd0e0a040), "LazyCompile:~hot /tmp/hot.js:1:13");
	CHECK_STR(name_at(&c, 0x3c7fd0e0a06b), "LazyCompile:~hot /tmp/hot.js:1:13");
	CHECK(!name_at(&c, 0x3c7fd0e0a06c)); /* end is exclusive */
	CHECK(!name_at(&c, 0x3c7fd0e0a03f));
	CHECK_STR(name_at(&c, 0x7f1e2a5f000a), "py::hot:/tmp/hot.py");
	CHECK_STR(name_at(&c, 0x7f0c1d0b5b1f), "void Main.hot(long)");
	CHECK_STR(name_at(&c, 0x7f0c1d0b600f), "Interpreter");
	CHECK_STR(name_at(&c, 0x7f3a2c00108f), "julia_fib_17");
	CHECK_STR(name_at(&c, 0xabcdef000), "name\twith tab");
	ctx_fini(&c);
}

static void test_junk(void)
{
	static const char s[] = "\n"
				"garbage\n"
				"1000\n"
				"1000 \n"
				"1000 10\n"
				"1000 10 \n"	/* empty name */
				"1000 0 zero\n" /* empty range */
				"0x 10 nohex\n"
				"1000 zz bad size\n"
				"1000,10 comma\n"
				"11112222333344445 10 seventeen digits\n"
				"ffffffffffffff00 100 wraps\n"
				"-1000 10 negative\n"
				"2000 10 good\n"
				" 3000 10 leading blank\n"
				"4000  10 two blanks between numbers\n"
				"5000 10  two blanks before the name\n";
	struct ctx c;

	ctx_init(&c);
	text(&c, s, strlen(s), false);
	CHECK_U64(c.st.lines_bad, 14);
	CHECK_U64(c.st.lines_parsed, 3);
	CHECK_STR(name_at(&c, 0x2000), "good");
	CHECK_STR(name_at(&c, 0x4000), "two blanks between numbers");
	CHECK_STR(name_at(&c, 0x5000), " two blanks before the name");
	CHECK(!name_at(&c, 0x1000));
	CHECK(!name_at(&c, 0x3000));
	ctx_fini(&c);
}

/* Later lines win where they overlap; the rest of an earlier entry stays visible. */
static void test_overlaps(void)
{
	static const char s[] = "1000 100 old\n"
				"1040 40 inner\n" /* 1040..1080 */
				"1060 100 tail\n" /* 1060..1160 */
				"2000 10 a\n"
				"2000 10 b\n" /* same range: b */
				"3000 100 big\n"
				"3000 10 first\n"  /* reused start */
				"3000 100 big2\n"; /* covers everything again */
	struct ctx c;

	ctx_init(&c);
	text(&c, s, strlen(s), false);
	CHECK_STR(name_at(&c, 0x1000), "old");
	CHECK_STR(name_at(&c, 0x103f), "old");
	CHECK_STR(name_at(&c, 0x1040), "inner");
	CHECK_STR(name_at(&c, 0x105f), "inner");
	CHECK_STR(name_at(&c, 0x1060), "tail");
	CHECK_STR(name_at(&c, 0x10ff), "tail");
	CHECK_STR(name_at(&c, 0x115f), "tail");
	CHECK(!name_at(&c, 0x1160));
	CHECK_STR(name_at(&c, 0x2005), "b");
	CHECK_STR(name_at(&c, 0x3005), "big2");
	CHECK_STR(name_at(&c, 0x3050), "big2");
	/* the offset is relative to the winning entry's own start */
	CHECK_U64(pm_index__find(&c.ix, 0x1070)->start, 0x1060);
	ctx_fini(&c);
}

/* Names keep every byte (high bytes, CR) but NUL, which becomes '?'; long lines. */
static void test_bytes_and_long_names(void)
{
	static const char s[] = "1000 10 caf\xc3\xa9 \xff\xfe\r\n"
				"2000 10 a\0b\n";
	size_t long_len = 40000, huge_len = PM_MAX_LINE + 100, i;
	char *buf = malloc(long_len + huge_len + 64), *p;
	struct ctx c;

	ctx_init(&c);
	text(&c, s, sizeof(s) - 1, false);
	CHECK_STR(name_at(&c, 0x1000), "caf\xc3\xa9 \xff\xfe\r");
	CHECK_STR(name_at(&c, 0x2000), "a?b");

	/* a 40,000-byte name is kept whole; a line above PM_MAX_LINE is skipped, counted */
	p = buf;
	p += sprintf(p, "3000 10 ");
	for (i = 0; i < long_len; i++)
		*p++ = 'a' + i % 26;
	*p++ = '\n';
	p += sprintf(p, "4000 10 ");
	for (i = 0; i < huge_len; i++)
		*p++ = 'z';
	*p++ = '\n';
	p += sprintf(p, "5000 10 after\n");
	CHECK_U64(text(&c, buf, p - buf, false), (size_t)(p - buf));
	CHECK_U64(strlen(name_at(&c, 0x3000)), long_len);
	CHECK(!name_at(&c, 0x4000));
	CHECK_STR(name_at(&c, 0x5000), "after");
	CHECK_U64(c.st.lines_bad, 1);
	free(buf);
	ctx_fini(&c);
}

/* Byte-at-a-time feeding (a file growing between reads) gives the same entries. */
static void test_streaming(void)
{
	static const char s[] = "1000 10 one\n2000 20 two\n3000 30 three";
	struct pm_text_state ts = {0};
	size_t off = 0, end, n;
	struct ctx c;
	int err;

	ctx_init(&c);
	for (end = 1; end <= sizeof(s) - 1; end++) {
		n = pm_text__parse(&ts, s + off, end - off, false, &c.sink, &err);
		CHECK(!err);
		off += n;
	}
	CHECK_U64(off, strlen("1000 10 one\n2000 20 two\n"));
	CHECK_U64(c.st.lines_parsed, 2);
	/* at the end, the unterminated last line counts */
	n = pm_text__parse(&ts, s + off, sizeof(s) - 1 - off, true, &c.sink, &err);
	CHECK_U64(n, strlen("3000 30 three"));
	CHECK(!pm_index__build(&c.ix));
	CHECK_STR(name_at(&c, 0x302f), "three");

	/* a too-long line split over reads is skipped up to its newline */
	memset(&ts, 0, sizeof(ts));
	{
		char *big = malloc(PM_MAX_LINE + 10);

		memset(big, 'x', PM_MAX_LINE + 10);
		CHECK_U64(pm_text__parse(&ts, big, PM_MAX_LINE + 10, false, &c.sink, &err),
			  PM_MAX_LINE + 10);
		CHECK(ts.skipping);
		CHECK_U64(pm_text__parse(&ts, "xx\n6000 1 ok\n", 13, false, &c.sink, &err), 13);
		CHECK(!ts.skipping);
		free(big);
	}
	CHECK(!pm_index__build(&c.ix));
	CHECK_STR(name_at(&c, 0x6000), "ok");
	ctx_fini(&c);
}

static uint64_t jd_all(struct ctx *c, struct pm_jd_state *js, const uint8_t *d, size_t len,
		       size_t *need)
{
	uint64_t n;
	int err;

	n = pm_jd__parse(js, d, len, len, need, &c->sink, &err);
	CHECK(!err);
	CHECK(!pm_index__build(&c->ix));
	return n;
}

static void test_jitdump_julia(bool swap)
{
	struct jd_buf b = {.swap = swap};
	struct pm_jd_state js = {0};
	const struct pm_entry *e;
	struct ctx c;
	size_t need;

	ctx_init(&c);
	jd_julia_fixture(&b, 4242);
	CHECK_U64(jd_all(&c, &js, b.data, b.len, &need), b.len);
	CHECK_U64(need, 0);
	CHECK(js.swap == swap);
	CHECK_U64(c.st.records_parsed, 3);
	CHECK_U64(c.st.records_other, 2); /* two DEBUG_INFO */
	CHECK_U64(c.st.records_bad, 0);
	CHECK_STR(name_at(&c, JULIA_FIB_ADDR), "julia_fib_42");
	CHECK_STR(name_at(&c, JULIA_FIB_ADDR + 0x3f), "julia_fib_42");
	CHECK_STR(name_at(&c, JULIA_FIB_ADDR + 0x40), "julia_fib_17");
	CHECK_STR(name_at(&c, JULIA_FIB_ADDR + JULIA_FIB_SIZE - 1), "julia_fib_17");
	CHECK_STR(name_at(&c, JULIA_JFPTR_ADDR + 4), "jfptr_fib_18");
	CHECK(!name_at(&c, JULIA_JFPTR_ADDR + JULIA_JFPTR_SIZE));
	/* sample times: before the recompile, the first load wins */
	e = pm_index__find_at(&c.ix, JULIA_FIB_ADDR + 8, 1500);
	CHECK(e);
	CHECK_STR(e->name, "julia_fib_17");
	e = pm_index__find_at(&c.ix, JULIA_FIB_ADDR + 8, 2001);
	CHECK_STR(e->name, "julia_fib_42");
	CHECK(!pm_index__find_at(&c.ix, JULIA_FIB_ADDR + 8, 1000));
	pm_jd__reset(&js);
	free(b.data);
	ctx_fini(&c);
}

/* Every prefix of a valid file parses without error and never past complete records. */
static void test_jitdump_truncated(void)
{
	struct jd_buf b = {0};
	size_t cut, need, rec_end[16], nr = 0, i;
	uint32_t rec_len;
	uint64_t n;

	jd_julia_fixture(&b, 7);
	jd_close(&b, 3000);
	/* record boundaries */
	for (i = 40; i < b.len; i += rec_len) {
		memcpy(&rec_len, b.data + i + 4, sizeof(rec_len));
		rec_end[nr++] = i;
	}
	rec_end[nr++] = b.len;
	for (cut = 0; cut <= b.len; cut++) {
		struct pm_jd_state js = {0};
		uint64_t expect = 0;
		struct ctx c;

		ctx_init(&c);
		n = jd_all(&c, &js, b.data, cut, &need);
		for (i = 0; i < nr; i++)
			if (rec_end[i] <= cut)
				expect = rec_end[i];
		if (cut < 40)
			expect = 0;
		CHECK_U64(n, expect);
		CHECK_U64(c.st.records_bad, 0);
		CHECK(!js.broken);
		/* resuming from there with the whole file completes it */
		{
			int err;
			size_t rest_need;

			n += pm_jd__parse(&js, b.data + n, b.len - n, b.len - n, &rest_need,
					  &c.sink, &err);
			CHECK(!err);
		}
		CHECK_U64(n, b.len);
		CHECK_U64(c.st.records_parsed, 3);
		pm_jd__reset(&js);
		ctx_fini(&c);
	}
	free(b.data);
}

static void test_jitdump_moves_and_bad(void)
{
	struct jd_buf b = {0};
	struct pm_jd_state js = {0};
	struct ctx c;
	size_t need, mark;

	ctx_init(&c);
	jd_header(&b, 9, 1);
	jd_load(&b, 10, 9, 9, 0x10000, 0x100, 77, "v8_fn");
	jd_move(&b, 20, 0x10000, 0x20000, 0x100, 77);
	jd_move(&b, 21, 0x30000, 0x40000, 0x100, 999); /* unknown code_index */
	/* a LOAD whose name is not NUL-terminated inside the record */
	mark = b.len;
	jd_load(&b, 30, 9, 9, 0x50000, 0, 78, "x");
	b.len -= 2; /* drop "x\0" */
	b.data[mark + 4] = 16 + 40;
	/* unknown record id 99 and UNWINDING_INFO are skipped */
	jd_u32(&b, 99);
	jd_u32(&b, 24);
	jd_u64(&b, 40);
	jd_u64(&b, 0);
	jd_u32(&b, 4);
	jd_u32(&b, 16 + 24);
	jd_u64(&b, 41);
	jd_u64(&b, 0);
	jd_u64(&b, 0);
	jd_u64(&b, 0);
	/* DEBUG_INFO claiming more entries than it holds */
	jd_u32(&b, 2);
	jd_u32(&b, 32);
	jd_u64(&b, 42);
	jd_u64(&b, 0x10000);
	jd_u64(&b, 5);
	jd_load(&b, 50, 9, 9, 0x60000, 0x10, 79, "last");
	jd_close(&b, 60);
	jd_load(&b, 70, 9, 9, 0x70000, 0x10, 80, "after_close");
	CHECK_U64(jd_all(&c, &js, b.data, b.len, &need), b.len - (16 + 40 + 12 + 0x10));
	CHECK(js.closed);
	CHECK_STR(name_at(&c, 0x10010), "v8_fn");
	CHECK_STR(name_at(&c, 0x20010), "v8_fn");
	CHECK_STR(name_at(&c, 0x60000), "last");
	CHECK(!name_at(&c, 0x40000));
	CHECK(!name_at(&c, 0x70000));
	CHECK_U64(c.st.records_parsed, 3);
	CHECK_U64(c.st.records_bad, 3);
	CHECK_U64(c.st.records_other, 3); /* id 99, UNWINDING_INFO, CLOSE */
	pm_jd__reset(&js);
	free(b.data);

	/* bad magic; record size below 16: the file is given up, counted */
	memset(&b, 0, sizeof(b));
	jd_header(&b, 9, 1);
	b.data[0] = 'X';
	CHECK_U64(jd_all(&c, &js, b.data, b.len, &need), 0);
	CHECK(js.broken);
	pm_jd__reset(&js);
	b.len = 0;
	jd_header(&b, 9, 1);
	jd_u32(&b, 0);
	jd_u32(&b, 8);
	jd_u64(&b, 0);
	CHECK_U64(jd_all(&c, &js, b.data, b.len, &need), 40);
	CHECK(js.broken);
	pm_jd__reset(&js);
	free(b.data);
	ctx_fini(&c);
}

/* A record larger than the parse buffer: name read from its head, code skipped unread. */
static void test_jitdump_big_record(void)
{
	struct jd_buf b = {0};
	struct pm_jd_state js = {0};
	size_t need, head;
	struct ctx c;
	uint64_t n;
	int err;

	ctx_init(&c);
	jd_header(&b, 9, 1);
	jd_load(&b, 10, 9, 9, 0x100000, 3 * PM_JD_MAX_INBUF, 1, "huge");
	jd_load(&b, 11, 9, 9, 0x900000, 0x10, 2, "small");
	head = 40 + PM_JD_MAX_INBUF;
	/* only the first MiB of the record in the buffer, the whole file available */
	n = pm_jd__parse(&js, b.data, 40 + 100, b.len, &need, &c.sink, &err);
	CHECK_U64(n, 40);
	CHECK_U64(need, PM_JD_MAX_INBUF);
	n += pm_jd__parse(&js, b.data + 40, PM_JD_MAX_INBUF, b.len - 40, &need, &c.sink, &err);
	CHECK(n > head);
	n += pm_jd__parse(&js, b.data + n, b.len - n, b.len - n, &need, &c.sink, &err);
	CHECK_U64(n, b.len);
	CHECK(!pm_index__build(&c.ix));
	CHECK_STR(name_at(&c, 0x100000 + 2 * PM_JD_MAX_INBUF), "huge");
	CHECK_STR(name_at(&c, 0x900000), "small");
	pm_jd__reset(&js);
	free(b.data);
	ctx_fini(&c);
}

/* Every address below @lim finds what a brute-force later-wins search finds. */
static void check_reference(const struct pm_index *ix, uint64_t lim)
{
	uint64_t ip;
	size_t i;

	for (ip = 0; ip < lim; ip++) {
		const struct pm_entry *want = NULL, *got = pm_index__find(ix, ip);

		for (i = ix->nr; i--;)
			if (ip >= ix->ents[i].start && ip < ix->ents[i].end) {
				want = &ix->ents[i];
				break;
			}
		CHECK(want == got);
	}
}

/* The sweep against a brute-force later-wins reference on random overlapping entries. */
static void test_index_random(void)
{
	static const char *names[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
	struct pm_index ix = {0};
	uint64_t seed = 42;
	size_t k;

	for (k = 0; k < 2000; k++) {
		uint64_t s, len;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		s = (seed >> 33) % 4096;
		len = 1 + (seed >> 20) % 300;
		CHECK(!pm_index__add(&ix, s, s + len, 0, names[k % 8]));
	}
	CHECK(!pm_index__build(&ix));
	check_reference(&ix, 4500);
	pm_index__free(&ix);
}

/*
 * Entries in address order without overlap (gaps, adjacent ends, empty tail) take the
 * linear path; the same checks against the reference, then one overlap sends the
 * rebuilt index down the sweep.
 */
static void test_index_sorted(void)
{
	static const char *names[] = {"s0", "s1", "s2", "s3"};
	struct pm_index ix = {0};
	uint64_t seed = 7, s = 10, end = 0;
	size_t k, round;

	for (k = 0; k < 500; k++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		s += (seed >> 33) % 3; /* 0: adjacent to the previous one */
		end = s + 1 + (seed >> 20) % 20;
		CHECK(!pm_index__add(&ix, s, end, 0, names[k % 4]));
		s = end;
	}
	for (round = 0; round < 2; round++) {
		CHECK(!pm_index__build(&ix));
		check_reference(&ix, end + 50);
		if (!round) {
			CHECK(ix.nr_segs == ix.nr);
			CHECK(!pm_index__add(&ix, 12, end - 5, 0, "over")); /* covers most */
		}
	}
	pm_index__free(&ix);
}

int main(void)
{
	test_formats();
	test_junk();
	test_overlaps();
	test_bytes_and_long_names();
	test_streaming();
	test_jitdump_julia(false);
	test_jitdump_julia(true);
	test_jitdump_truncated();
	test_jitdump_moves_and_bad();
	test_jitdump_big_record();
	test_index_random();
	test_index_sorted();
	printf("perfmap parsers: ok\n");
	return 0;
}
