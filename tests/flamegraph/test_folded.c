// SPDX-License-Identifier: MIT
/* tests/flamegraph: unit tests of the folded writer (escaping, merging, order, saturation). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "flamegraph.h"
#include "test.h"

/* Renders @f with folded__write into a malloc'ed string. */
static char *write_str(const struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	if (folded__write(f, out)) {
		fclose(out);
		free(buf);
		return NULL;
	}
	fclose(out);
	return buf;
}

#define ADD(f, count, ...)                                                                         \
	({                                                                                         \
		const char *fr_[] = {__VA_ARGS__};                                                 \
		folded__add(f, fr_, sizeof(fr_) / sizeof(fr_[0]), count);                          \
	})

static void test_escaping(void)
{
	struct folded *f = folded__new();
	char *s;

	CHECK(f);
	CHECK(ADD(f, 1, "java", "Lslowy/App;::isPrime") == 0);
	CHECK(ADD(f, 2, "a\nb\r", "tab\there", "esc\x1b[0m", "del\x7f") == 0);
	CHECK(ADD(f, 3, "", "x") == 0);
	CHECK(ADD(f, 4, "\n\r", "utf8 \xc3\xa9 \xff") == 0);
	s = write_str(f);
	CHECK_STR(s, "??;utf8 \xc3\xa9 \xff 4\n"
		     "[empty];x 3\n"
		     "a?b?;tab?here;esc?[0m;del? 2\n"
		     "java;Lslowy/App:::isPrime 1\n");
	free(s);
	folded__free(f);

	/* a CR or LF inside a name is escaped, not deleted: these are two stacks */
	f = folded__new();
	CHECK(f);
	CHECK(ADD(f, 1, "ma\rin") == 0);
	CHECK(ADD(f, 2, "main") == 0);
	CHECK(ADD(f, 4, "ma\nin") == 0);
	CHECK(folded__nr_stacks(f) == 2);
	s = write_str(f);
	CHECK_STR(s, "ma?in 5\n"
		     "main 2\n");
	free(s);
	folded__free(f);
}

static void test_merge_and_sort(void)
{
	struct folded *f = folded__new();
	char *s;

	/* bytewise: ' ' (0x20) < '.' < ';' (0x3b) < 'B' < 'a' */
	CHECK(ADD(f, 5, "main", "b") == 0);
	CHECK(ADD(f, 1, "main", "a") == 0);
	CHECK(ADD(f, 2, "main", "b") == 0);
	CHECK(ADD(f, 1, "main.x") == 0);
	CHECK(ADD(f, 1, "main x") == 0);
	CHECK(ADD(f, 1, "main") == 0);
	CHECK(ADD(f, 1, "mainB") == 0);
	CHECK(ADD(f, 1, "main;a") == 0); /* escapes to "main:a", a different stack */
	CHECK(folded__nr_stacks(f) == 7);
	CHECK(folded__total(f) == 13);
	s = write_str(f);
	CHECK_STR(s, "main 1\n"
		     "main x 1\n"
		     "main.x 1\n"
		     "main:a 1\n"
		     "main;a 1\n"
		     "main;b 7\n"
		     "mainB 1\n");
	free(s);
	folded__free(f);
}

static void test_saturation(void)
{
	struct folded *f = folded__new();
	char *s;

	CHECK(ADD(f, UINT64_MAX - 1, "a") == 0);
	CHECK(ADD(f, 5, "a") == 0);
	CHECK(ADD(f, 7, "b") == 0);
	CHECK(folded__total(f) == UINT64_MAX);
	s = write_str(f);
	CHECK_STR(s, "a 18446744073709551615\nb 7\n");
	free(s);
	folded__free(f);
}

static void test_errors(void)
{
	struct folded *f = folded__new();
	const char *none[1] = {NULL};
	char *s;

	CHECK(folded__add(f, none, 0, 1) == -EINVAL);
	CHECK(folded__add(f, none, 1, 1) == -EINVAL);
	CHECK(folded__add(NULL, none, 1, 1) == -EINVAL);
	CHECK(folded__nr_stacks(f) == 0 && folded__total(f) == 0);
	s = write_str(f);
	CHECK_STR(s, "");
	free(s);
	folded__free(f);
	folded__free(NULL);
	CHECK(folded__nr_stacks(NULL) == 0);
}

static void test_many(void)
{
	struct folded *f = folded__new();
	char name[32], *s, *p;
	int i, lines = 0;

	/* forces several table growths; every stack added twice */
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "f%05d", (i * 7919) % 10000);
		CHECK(ADD(f, 1, "root", name) == 0);
	}
	CHECK(folded__nr_stacks(f) == 10000);
	CHECK(folded__total(f) == 20000);
	s = write_str(f);
	CHECK(s && !strncmp(s, "root;f00000 2\nroot;f00001 2\n", 28));
	for (p = s; p && *p; p++)
		lines += *p == '\n';
	CHECK(lines == 10000);
	free(s);
	folded__free(f);
}

/* Lines in bytewise order where a frame name is a prefix of another ("a" and "a!", "a;z"). */
static void test_prefix_order(void)
{
	struct folded *f = folded__new();
	char *s;

	CHECK(ADD(f, 1, "r", "a!") == 0);
	CHECK(ADD(f, 1, "r", "a", "z") == 0);
	CHECK(ADD(f, 1, "r", "a") == 0);
	CHECK(ADD(f, 1, "r", "a~") == 0);
	CHECK(ADD(f, 1, "r", "ab") == 0);
	CHECK(ADD(f, 1, "r") == 0);
	CHECK(ADD(f, 1, "r!") == 0);
	s = write_str(f);
	CHECK_STR(s, "r 1\nr! 1\nr;a 1\nr;a! 1\nr;a;z 1\nr;ab 1\nr;a~ 1\n");
	free(s);
	folded__free(f);
}

/* Past the cap, new stacks go to ROOT;[stack table full], counted; known ones merge. */
static void test_cap(void)
{
	struct folded *f = folded__new();
	char *s;

	folded__set_max_stacks(f, 2);
	CHECK(ADD(f, 1, "p", "a") == 0);
	CHECK(ADD(f, 1, "p", "b") == 0);
	CHECK(ADD(f, 5, "p", "c") == 0);
	CHECK(ADD(f, 2, "q", "d", "e") == 0);
	CHECK(ADD(f, 3, "p", "a") == 0);
	CHECK(ADD(f, 1, "q") == 0);
	CHECK(folded__over_cap(f) == 8);
	CHECK(folded__total(f) == 13);
	CHECK(folded__nr_stacks(f) == 4);
	s = write_str(f);
	CHECK_STR(s, "p;[stack table full] 5\np;a 4\np;b 1\nq;[stack table full] 3\n");
	free(s);
	folded__free(f);
}

/* folded__for_each_stack(): every stack once, in order of arrival, frames escaped. */
struct each {
	char buf[256];
	size_t len;
};

static int each_stack(void *ctx, const char *const *frames, size_t nr, uint64_t count)
{
	struct each *e = ctx;
	size_t i;

	for (i = 0; i < nr; i++)
		e->len += snprintf(e->buf + e->len, sizeof(e->buf) - e->len, "%s%s", i ? ";" : "",
				   frames[i]);
	e->len += snprintf(e->buf + e->len, sizeof(e->buf) - e->len, " %llu|",
			   (unsigned long long)count);
	return count == 99 ? -EINTR : 0;
}

static void test_each_stack(void)
{
	struct folded *f = folded__new();
	struct each e = {};

	CHECK(folded__for_each_stack(f, each_stack, &e) == 0 && e.len == 0);
	CHECK(ADD(f, 2, "p", "z", "a\tb") == 0);
	CHECK(ADD(f, 1, "p", "a") == 0);
	CHECK(ADD(f, 3, "p", "z", "a\tb") == 0);
	CHECK(folded__for_each_stack(f, each_stack, &e) == 0);
	CHECK_STR(e.buf, "p;z;a?b 5|p;a 1|");
	CHECK(ADD(f, 99, "q") == 0);
	CHECK(ADD(f, 1, "r") == 0);
	e.len = 0;
	CHECK(folded__for_each_stack(f, each_stack, &e) == -EINTR);
	CHECK_STR(e.buf, "p;z;a?b 5|p;a 1|q 99|");
	folded__free(f);
}

int main(void)
{
	test_each_stack();
	test_prefix_order();
	test_cap();
	test_escaping();
	test_merge_and_sort();
	test_saturation();
	test_errors();
	test_many();
	return TEST_DONE();
}
