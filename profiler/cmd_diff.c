// SPDX-License-Identifier: MIT
/* profiler: `scorch diff`, what changed between two profiles (two-count folded, SVG, HTML,
 * top report). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "engine.h"
#include "flamegraph.h"
#include "cmds.h"

struct diff_cmd_opts {
	const char *output; /* NULL: stdout */
	const char *before, *after;
	const char *format_name; /* --format; NULL: by the output's name */
	enum output_fmt format;
	struct folded_diff_opts diff;
	struct flamegraph_opts fg;
	uint64_t top; /* 0: no report */
	bool has_top;
	int verbose;
};

enum {
	OPT_TOP = 0x100,
	OPT_FORMAT,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch diff [options] BEFORE AFTER [-o OUT.svg|OUT.html|OUT.folded]\n"
		"                   [--top N]\n"
		"\n"
		"Compares two folded profiles (plain, gzip or zstd) stack by stack.\n"
		"  -o FILE.svg   a differential flame graph: widths from AFTER, each frame red\n"
		"                where its total count grew, blue where it shrank, white where\n"
		"                unchanged, deeper for larger changes; titles give both counts,\n"
		"                the delta and the delta %%\n"
		"  -o FILE.html  the same colours in the profile viewer page, whose function\n"
		"                table gives self and total before, after and their change,\n"
		"                sorted by the change of self\n"
		"  -o FILE       (.folded, .txt or any other name, or none) two-count folded\n"
		"                lines \"stack BEFORE AFTER\", 0 where a stack is missing,\n"
		"                sorted (difffolded.pl's format: flamegraph.pl and 'scorch\n"
		"                flamegraph' render it)\n"
		"  No other format: -o FILE.pb.gz, .json, .scorch, .png, .gz ... are refused.\n"
		"\n"
		"  -o, --output FILE   write to FILE, atomically (default: stdout)\n"
		"      --format F      svg, html or folded, whatever the output's name\n"
		"  -n, --normalize     scale BEFORE to AFTER's total (exact in the SVG and the\n"
		"                      report; rounded to integers in folded output)\n"
		"  -s, --strip-hex     replace hex addresses (0x...) so unsymbolized frames of\n"
		"                      two runs match\n"
		"      --top N         a text report of the N functions whose self and total\n"
		"                      counts changed most; on stdout, or on stderr when -o is\n"
		"                      given (without -o, nothing else is written)\n"
		"  -v, --verbose       more messages\n"
		"  -h, --help          this help\n"
		"\n"
		"flame graph options (for SVG and HTML output; --negate draws widths from\n"
		"BEFORE so vanished code is visible, --self colours by self-count change as\n"
		"flamegraph.pl does):\n");
	flamegraph__print_options_help(out);
	fprintf(out,
		"\n"
		"Folded files carry no unit: compare profiles of the same kind (a warning is\n"
		"given when one has [off-cpu]/[runqueue] stacks and the other none). Without\n"
		"-n, totals more than 10%% apart (the larger over the smaller) are warned of:\n"
		"most frames then look grown or shrunk for the recordings' lengths alone.\n"
		"\n"
		"exit status: 0 success, 1 error (missing, unreadable or empty input), 2 usage "
		"error\n"
		"\n"
		"examples:\n"
		"  scorch diff before.folded after.folded -o diff.svg\n"
		"  scorch diff before.folded after.folded -o diff.folded\n"
		"  scorch diff before.folded after.folded -o diff.html\n"
		"  scorch flamegraph diff.folded -o diff.svg\n"
		"  scorch diff -n before.folded.zst after.folded.gz --top 20\n"
		"  scorch diff --negate before.folded after.folded -o vanished.svg\n");
}

/* 0 (*help set when --help was given), -EINVAL after a usage error, -ENOMEM. */
static int parse_args(int argc, char **argv, struct diff_cmd_opts *o, bool *help)
{
	static const struct output_formats writes = {
		.cmd = "diff",
		.can = FMT_BIT(FMT_FOLDED) | FMT_BIT(FMT_SVG) | FMT_BIT(FMT_HTML),
		.dflt = FMT_FOLDED,
	};
	static const struct option own[] = {
		{"output", required_argument, NULL, 'o'},
		{"normalize", no_argument, NULL, 'n'},
		{"strip-hex", no_argument, NULL, 's'},
		{"top", required_argument, NULL, OPT_TOP},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const struct option *const tables[] = { own, flamegraph_long_options };
	struct option *longopts = NULL;
	int c, err = 0;

	longopts = cli__options(tables, ARRAY_SIZE(tables));
	if (!longopts)
		return -ENOMEM;

	optind = 1;
	opterr = 0; /* getopt's own messages would say "diff:", not "scorch: diff:" */
	while ((c = getopt_long(argc, argv, ":o:nsvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case 'n':
			o->diff.normalize = true;
			break;
		case 's':
			o->diff.strip_hex = true;
			break;
		case OPT_TOP:
			if (parse__u64(optarg, 10, &o->top) || !o->top) {
				pr_err("diff: invalid --top '%s': expected a positive integer\n",
				       optarg);
				pr_hint("give how many stacks to keep, e.g. --top 50\n");
				err = -EINVAL;
				goto cleanup;
			}
			o->has_top = true;
			break;
		case OPT_FORMAT:
			o->format_name = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			*help = true;
			goto cleanup;
		case ':':
		case '?':
			err = cli__bad_option("diff", c, argv);
			goto cleanup;
		default:
			err = flamegraph_opts__set_getopt(&o->fg, c, optarg);
			if (err == -ENOENT)
				err = cli__bad_option("diff", '?', argv);
			if (err)
				goto cleanup;
		}
	}
	if (argc - optind != 2) {
		pr_err("diff: expected two profiles, BEFORE and AFTER (got %d)\n", argc - optind);
		pr_hint("scorch diff before.folded after.folded -o diff.svg\n");
		err = -EINVAL;
		goto cleanup;
	}
	o->before = argv[optind];
	o->after = argv[optind + 1];
	if (!strcmp(o->before, "-") && !strcmp(o->after, "-")) {
		pr_err("diff: BEFORE and AFTER cannot both be standard input\n");
		err = -EINVAL;
		goto cleanup;
	}
	err = output_format__choose(&writes, o->output, o->format_name, &o->format);
cleanup:
	free(longopts);
	return err;
}

static int read_side(struct folded_diff *d, enum folded_side side, const char *path)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	FILE *in = NULL;
	int err;

	err = folded_input__open(path, &in);
	if (err)
		goto cleanup;
	err = folded_diff__read(d, side, in, name);
cleanup:
	if (in)
		fclose(in);
	return err;
}

static int write_graph(const struct diff_cmd_opts *o, const struct folded_diff *d, FILE *out)
{
	struct flamegraph *fg = flamegraph__new(&o->fg);
	int err;

	if (!fg) {
		pr_err("diff: out of memory\n");
		return -ENOMEM;
	}
	err = flamegraph__add_diff(fg, d);
	if (!err && o->format == FMT_HTML)
		err = flamegraph__write_html(
			fg,
			&(struct flamegraph_html_opts){.sz = sizeof(struct flamegraph_html_opts)},
			out);
	else if (!err)
		err = flamegraph__write_svg(fg, out);
	if (err == -ENODATA)
		pr_err("diff: nothing to draw: every stack of %s is zero%s\n",
		       o->fg.negate ? o->before : o->after,
		       o->fg.negate ? "" : " (try --negate to draw BEFORE's widths)");
	flamegraph__free(fg);
	return err;
}

/* The --top report's totals and shares are not exact once a profile's total saturated. */
static void warn_saturated(const struct diff_cmd_opts *o, const struct folded_diff *d)
{
	bool before = folded_diff__total(d, FOLDED_BEFORE) == UINT64_MAX;
	bool after = folded_diff__total(d, FOLDED_AFTER) == UINT64_MAX;
	const char *which = before ? o->before : o->after;

	if (!before && !after)
		return;
	if (before && after)
		which = "both profiles";
	pr_warn("diff: the total of %s saturated at %" PRIu64
		": the --top totals and percentages are not exact\n",
		which, UINT64_MAX);
	pr_hint("divide the counts so that each profile's sum fits in 64 bits\n");
}

/*
 * Totals more than 10 % apart (the larger over the smaller) and no -n: recordings of
 * different lengths, whose every frame then looks grown (or shrunk) for that alone.
 */
static void warn_totals(const struct diff_cmd_opts *o, const struct folded_diff *d)
{
	uint64_t before = folded_diff__total(d, FOLDED_BEFORE);
	uint64_t after = folded_diff__total(d, FOLDED_AFTER);
	uint64_t lo = MIN(before, after), hi = MAX(before, after);

	if (o->diff.normalize || !lo || (double)hi <= 1.1 * (double)lo)
		return;
	pr_warn("diff: the totals differ by %.0f%%: %" PRIu64 " before, %" PRIu64
		" after (recordings of different lengths?)\n",
		100.0 * (double)(hi - lo) / (double)lo, before, after);
	pr_hint("-n (--normalize) scales BEFORE to AFTER's total, so colours and deltas show "
		"changes of share\n");
}

static int diff_main(int argc, char **argv)
{
	struct diff_cmd_opts o = {.diff = {.sz = sizeof(struct folded_diff_opts)}};
	struct folded_diff *d = NULL;
	struct out_file out = {0};
	bool opened = false, help = false;
	int err;

	flamegraph_opts__init(&o.fg);
	err = parse_args(argc, argv, &o, &help);
	if (err || help) {
		if (help)
			usage(stdout);
		return help ? EXIT_OK : err == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
	}
	if (o.verbose)
		log__set_level(LOG_DEBUG);

	d = folded_diff__new(&o.diff);
	if (!d) {
		err = -ENOMEM;
		pr_err("diff: out of memory\n");
		goto cleanup;
	}
	err = read_side(d, FOLDED_BEFORE, o.before);
	if (!err)
		err = read_side(d, FOLDED_AFTER, o.after);
	if (!err)
		err = folded_diff__finish(d);
	if (err)
		goto cleanup;
	pr_debug("diff: %zu stacks; totals %llu before, %llu after\n", folded_diff__nr_stacks(d),
		 (unsigned long long)folded_diff__total(d, FOLDED_BEFORE),
		 (unsigned long long)folded_diff__total(d, FOLDED_AFTER));

	warn_totals(&o, d);
	if (o.has_top)
		warn_saturated(&o, d);
	if (o.has_top && !o.output) {
		err = folded_diff__write_top(d, (size_t)MIN(o.top, SIZE_MAX), stdout);
		if (err)
			pr_err("diff: cannot write the report: %s\n", strerror(-err));
		goto cleanup;
	}
	err = out__open(&out, o.output);
	if (err)
		goto cleanup;
	opened = true;
	if (o.format == FMT_SVG || o.format == FMT_HTML)
		err = write_graph(&o, d, out.fp);
	else
		err = folded_diff__write(d, out.fp);
	if (err && err != -ENODATA)
		err = out__fail(&out, err);
	if (!err && o.has_top) {
		err = folded_diff__write_top(d, (size_t)MIN(o.top, SIZE_MAX), stderr);
		if (err)
			pr_err("diff: cannot write the report: %s\n", strerror(-err));
	}
	err = out__close(&out, !err) ?: err;
	opened = false;
cleanup:
	if (opened)
		out__close(&out, false);
	folded_diff__free(d);
	return err ? EXIT_ERROR : EXIT_OK;
}

int cmd_diff(int argc, char **argv)
{
	int rc;

	log__set_command("diff");
	rc = diff_main(argc, argv);
	log__set_command(NULL);
	return rc;
}
