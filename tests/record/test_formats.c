// SPDX-License-Identifier: MIT
/*
 * tests/record: the one rule every command chooses an output's format by
 * (output_format__choose(), engine/output.c): endings, case, standard output, names
 * of no known ending, formats no command writes, --format, and what a command refuses.
 */
#include <errno.h>

#include "check.h"
#include "engine.h"

#define ALL                                                                                        \
	(FMT_BIT(FMT_FOLDED) | FMT_BIT(FMT_SVG) | FMT_BIT(FMT_HTML) | FMT_BIT(FMT_PPROF) |         \
	 FMT_BIT(FMT_SPEEDSCOPE) | FMT_BIT(FMT_CAPTURE))

static const struct output_formats all = {.cmd = "test", .can = ALL, .dflt = FMT_FOLDED};

/* The format @path gets from a command that writes everything; FMT_NR: refused. */
static enum output_fmt fmt_of(const char *path)
{
	enum output_fmt f = FMT_NR;

	return output_format__choose(&all, path, NULL, &f) ? FMT_NR : f;
}

static void test_endings(void)
{
	static const struct {
		const char *path;
		enum output_fmt fmt;
	} cases[] = {
		{"cpu.folded", FMT_FOLDED},
		{"cpu.collapsed", FMT_FOLDED},
		{"cpu.txt", FMT_FOLDED},
		{"cpu", FMT_FOLDED},
		{"cpu.out", FMT_FOLDED},
		{"dir.svg/cpu", FMT_FOLDED},
		{"-", FMT_FOLDED},
		{NULL, FMT_FOLDED},
		{"cpu.svg", FMT_SVG},
		{"CPU.SVG", FMT_SVG},
		{"cpu.html", FMT_HTML},
		{"cpu.htm", FMT_HTML},
		{"cpu.pb.gz", FMT_PPROF},
		{"cpu.PB.GZ", FMT_PPROF},
		{"cpu.pb", FMT_PPROF},
		{"cpu.json", FMT_SPEEDSCOPE},
		{"cpu.scorch", FMT_CAPTURE},
		/* an ending alone is no name: the default, as any other */
		{".svg", FMT_FOLDED},
		{"dir/.json", FMT_FOLDED},
		/* formats no command writes */
		{"cpu.png", FMT_NR},
		{"cpu.JPG", FMT_NR},
		{"cpu.jpeg", FMT_NR},
		{"cpu.pdf", FMT_NR},
		{"cpu.gif", FMT_NR},
		{"cpu.folded.gz", FMT_NR},
		{"cpu.svg.zst", FMT_NR},
		{"cpu.xz", FMT_NR},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (fmt_of(cases[i].path) != cases[i].fmt) {
			fprintf(stderr, "%s: format %d, want %d\n", cases[i].path,
				fmt_of(cases[i].path), cases[i].fmt);
			exit(1);
		}
	}
}

static void test_commands(void)
{
	struct output_formats diff = {
		.cmd = "diff",
		.can = FMT_BIT(FMT_FOLDED) | FMT_BIT(FMT_SVG) | FMT_BIT(FMT_HTML),
		.dflt = FMT_FOLDED,
	};
	struct output_formats fg = {
		.cmd = "flamegraph",
		.can = FMT_BIT(FMT_SVG) | FMT_BIT(FMT_HTML) | FMT_BIT(FMT_PPROF) |
		       FMT_BIT(FMT_SPEEDSCOPE),
		.dflt = FMT_SVG,
	};
	enum output_fmt f = FMT_NR;

	CHECK(!output_format__choose(&diff, "d.svg", NULL, &f) && f == FMT_SVG);
	CHECK(!output_format__choose(&diff, "d", NULL, &f) && f == FMT_FOLDED);
	CHECK(output_format__choose(&diff, "d.pb.gz", NULL, &f) == -EINVAL);
	CHECK(output_format__choose(&diff, "d.json", NULL, &f) == -EINVAL);
	CHECK(output_format__choose(&diff, "d.scorch", NULL, &f) == -EINVAL);
	/* the default of a command that writes no folded stacks */
	CHECK(!output_format__choose(&fg, NULL, NULL, &f) && f == FMT_SVG);
	CHECK(!output_format__choose(&fg, "cpu.out", NULL, &f) && f == FMT_SVG);
	CHECK(output_format__choose(&fg, "cpu.folded", NULL, &f) == -EINVAL);
	CHECK(output_format__choose(&fg, "cpu.txt", NULL, &f) == -EINVAL);
	/* --format wins over the name, and is refused when the command cannot write it */
	CHECK(!output_format__choose(&diff, "d.pb.gz", "svg", &f) && f == FMT_SVG);
	CHECK(!output_format__choose(&fg, NULL, "speedscope", &f) && f == FMT_SPEEDSCOPE);
	CHECK(output_format__choose(&diff, NULL, "pprof", &f) == -EINVAL);
	CHECK(output_format__choose(&fg, "x.svg", "folded", &f) == -EINVAL);
	CHECK(output_format__choose(&fg, NULL, "png", &f) == -EINVAL);
	CHECK_STR(output_format__name(FMT_SPEEDSCOPE), "speedscope");
	CHECK_STR(output_format__name(FMT_CAPTURE), "capture");
}

int main(void)
{
	test_endings();
	test_commands();
	printf("ok\n");
	return 0;
}
