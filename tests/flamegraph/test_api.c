// SPDX-License-Identifier: MIT
/* tests/flamegraph: the library API record uses (options by name and getopt, render to a path). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"
#include "flamegraph.h"
#include "test.h"

static void test_opts(void)
{
	struct flamegraph_opts o;
	size_t i;

	flamegraph_opts__init(&o);
	CHECK(o.sz == sizeof(o) && o.width == 1200 && o.height == 16 && o.minwidth == 0.1);
	CHECK(flamegraph_opts__set(&o, "minwidth", "2.5%") == 0 && o.minwidth_percent &&
	      o.minwidth == 2.5);
	CHECK(flamegraph_opts__set(&o, "minwidth", "3") == 0 && !o.minwidth_percent);
	CHECK(flamegraph_opts__set(&o, "color", "java") == 0 && o.colors == FG_PAL_JAVA);
	CHECK(flamegraph_opts__set(&o, "colors", "nope") == -EINVAL);
	CHECK(flamegraph_opts__set(&o, "width", "12x") == -EINVAL);
	CHECK(flamegraph_opts__set(&o, "hash", NULL) == 0 && o.hash);
	CHECK(flamegraph_opts__set(&o, "title", NULL) == -EINVAL);
	CHECK(flamegraph_opts__set(&o, "pid", "1") == -ENOENT);
	CHECK(flamegraph_opts__set(&o, "total", "-1") == -EINVAL);
	for (i = 0; flamegraph_long_options[i].name; i++) {
		CHECK(flamegraph_long_options[i].val == FLAMEGRAPH_OPT_BASE + (int)i);
		CHECK(!flamegraph_long_options[i].flag);
	}
	CHECK(flamegraph_opts__set_getopt(&o, FLAMEGRAPH_OPT_BASE + (int)i, "x") == -ENOENT);
	CHECK(flamegraph_opts__set_getopt(&o, 'o', "x") == -ENOENT);
	CHECK(flamegraph_opts__set_getopt(&o, FLAMEGRAPH_OPT_BASE, "T") == 0 &&
	      !strcmp(o.title, "T"));
}

static void test_write_path(void)
{
	const char *st[] = {"main", "f<o>o"};
	struct folded *f = folded__new();
	struct flamegraph_opts o;
	char dir[] = "/tmp/fgapiXXXXXX", path[64], *buf = NULL;
	size_t len;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	flamegraph_opts__init(&o);
	o.title = "record";
	CHECK(flamegraph__write_svg_path(f, &o, path) == -ENODATA);
	CHECK(file__read_bounded(AT_FDCWD, path, 1 << 20, &buf, &len) == 0);
	CHECK(buf && strstr(buf, "No stack counts found"));
	free(buf);
	CHECK(folded__add(f, st, 2, 5) == 0);
	CHECK(flamegraph__write_svg_path(f, &o, path) == 0);
	CHECK(file__read_bounded(AT_FDCWD, path, 1 << 20, &buf, &len) == 0);
	CHECK(buf && strstr(buf, "<title>f&lt;o&gt;o (5 samples, 100.00%, self 5)</title>"));
	CHECK(buf && strstr(buf, ">record</text>"));
	free(buf);
	unlink(path);
	rmdir(dir);
	folded__free(f);
}

/* Reads @text into one side of @d through a memory stream. */
static int diff_read(struct folded_diff *d, enum folded_side side, const char *text)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int err = folded_diff__read(d, side, in, side == FOLDED_BEFORE ? "b" : "a");

	fclose(in);
	return err;
}

static void test_diff(void)
{
	struct folded_diff_opts o = {.sz = sizeof(o), .normalize = true};
	struct folded_diff *d = folded_diff__new(&o);
	struct flamegraph *fg = flamegraph__new(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	CHECK(d && fg);
	CHECK(folded_diff__write(d, stdout) == -EINVAL); /* not finished */
	CHECK(flamegraph__add_diff(fg, d) == -EINVAL);
	CHECK(folded_diff__finish(d) == -ENODATA); /* both sides empty */
	folded_diff__free(d);
	d = folded_diff__new(&o);
	CHECK(diff_read(d, FOLDED_BEFORE, "m;x 1\nm;y 2\n") == 0);
	CHECK(diff_read(d, FOLDED_AFTER, "m;x 2 3\n") == -EINVAL); /* two counts */
	CHECK(diff_read(d, FOLDED_AFTER, "m;x 4\nm;z 2\n") == 0);
	CHECK(folded_diff__finish(d) == 0 && folded_diff__finish(d) == -EINVAL);
	CHECK(folded_diff__total(d, FOLDED_BEFORE) == 3 &&
	      folded_diff__total(d, FOLDED_AFTER) == 6);
	CHECK(folded_diff__nr_stacks(d) == 3);
	out = open_memstream(&buf, &len);
	CHECK(folded_diff__write(d, out) == 0);
	fclose(out);
	CHECK_STR(buf, "m;x 2 4\nm;y 4 0\nm;z 0 2\n");
	free(buf);
	CHECK(flamegraph__add_diff(fg, d) == 0);
	out = open_memstream(&buf, &len);
	CHECK(flamegraph__write_svg(fg, out) == 0);
	fclose(out);
	/* exact normalization: m is unchanged, shown in "after" units */
	CHECK(buf && strstr(buf, "<title>m (6 samples, 100.00%; before 6, after 6, no change)"));
	free(buf);
	flamegraph__free(fg);
	folded_diff__free(d);
}

int main(void)
{
	log__set_level(LOG_ERROR);
	test_opts();
	test_write_path();
	test_diff();
	return TEST_DONE();
}
