// SPDX-License-Identifier: MIT
/* profiler: `scorch flamegraph`, folded stacks to an interactive SVG or HTML page, pprof or
 * speedscope. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "engine.h"
#include "export.h"
#include "flamegraph.h"
#include "cmds.h"

struct fg_cmd_opts {
	const char *output;	 /* NULL: stdout */
	const char *format_name; /* --format; NULL: by the output's name */
	enum output_fmt format;	 /* svg, html, pprof or speedscope */
	bool intervals;		 /* each FILE one interval of the page's timeline */
	struct flamegraph_opts fg;
	int verbose;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch flamegraph [options] [FILE...]\n"
		"                         [-o OUT.svg|OUT.html|OUT.pb.gz|OUT.json]\n"
		"\n"
		"Renders folded stacks (\"frame;frame;... COUNT\" lines) as a self-contained,\n"
		"interactive SVG or HTML page, or converts them to pprof or speedscope. Reads\n"
		"standard input when no FILE or \"-\" is given; several FILEs merge; gzip and\n"
		"zstd files are decompressed on the fly.\n"
		"Options have flamegraph.pl's names and meanings. Two-count lines (\"stack\n"
		"BEFORE AFTER\", from scorch diff or difffolded.pl) draw a differential graph:\n"
		"widths from AFTER (--negate: BEFORE), red where a frame's total grew, blue\n"
		"where it shrank (--self: by self counts).\n"
		"\n"
		"  -o, --output FILE   write to FILE, atomically (default: stdout), in the\n"
		"                      format its name says:\n"
		"                      FILE.svg (or any other name): the SVG,\n"
		"                      FILE.html: a profile viewer page (flame graph,\n"
		"                      icicle, function table, sandwich, search; one file,\n"
		"                      no network access),\n"
		"                      FILE.pb.gz or FILE.pb: pprof (gzipped profile.proto),\n"
		"                      FILE.json: speedscope; for these two each frame a\n"
		"                      function, no addresses or mappings (flame graph\n"
		"                      options ignored);\n"
		"                      no folded stacks: .folded, .txt, .png, .gz ... are\n"
		"                      refused\n"
		"      --format FMT    svg, html, pprof or speedscope, whatever -o's name says\n"
		"      --intervals     each FILE is one interval, in order, of the HTML\n"
		"                      page's timeline (e.g. record --interval's numbered\n"
		"                      folded files)\n"
		"  -v, --verbose       more messages\n"
		"  -h, --help          this help\n");
	flamegraph__print_options_help(out);
	fprintf(out,
		"\n"
		"exit status: 0 success, 1 error (including input with no stack counts:\n"
		"an SVG or page saying so is still written), 2 usage error\n"
		"\n"
		"examples:\n"
		"  scorch flamegraph cpu.folded -o cpu.svg\n"
		"  perf script | stackcollapse-perf.pl | scorch flamegraph > cpu.svg\n"
		"  scorch flamegraph a.folded b.folded -o merged.svg\n"
		"  scorch flamegraph cpu.folded.zst -o cpu.svg\n"
		"  scorch flamegraph cpu.folded -o cpu.pb.gz && go tool pprof -top cpu.pb.gz\n"
		"  scorch flamegraph cpu.folded -o cpu.json     # speedscope\n"
		"  scorch flamegraph cpu.folded -o cpu.html     # open in a browser\n"
		"  scorch flamegraph --intervals cpu-0*.folded -o timeline.html\n"
		"  scorch diff before.folded after.folded | scorch flamegraph > diff.svg\n"
		"  scorch flamegraph --colors java --minwidth 0.5%% --title 'at 30 s' j.folded "
		"-o j.svg\n");
}

/* 0 (*help set when --help was given), -EINVAL after a usage error, -ENOMEM. */
static int parse_args(int argc, char **argv, struct fg_cmd_opts *o, bool *help)
{
	static const struct output_formats writes = {
		.cmd = "flamegraph",
		.can = FMT_BIT(FMT_SVG) | FMT_BIT(FMT_HTML) | FMT_BIT(FMT_PPROF) |
		       FMT_BIT(FMT_SPEEDSCOPE),
		.dflt = FMT_SVG,
	};
	struct option *longopts = NULL;
	int c, err = 0;

	static const struct option own[] = {
		{"output", required_argument, NULL, 'o'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"format", required_argument, NULL, 'f'},
		{"intervals", no_argument, NULL, 'I'},
		{NULL, 0, NULL, 0},
	};
	const struct option *const tables[] = { own, flamegraph_long_options };

	longopts = cli__options(tables, ARRAY_SIZE(tables));
	if (!longopts)
		return -ENOMEM;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'f':
			o->format_name = optarg;
			break;
		case 'I':
			o->intervals = true;
			break;
		case 'h':
			*help = true;
			goto cleanup;
		case ':':
		case '?':
			err = cli__bad_option("flamegraph", c, argv);
			goto cleanup;
		default:
			err = flamegraph_opts__set_getopt(&o->fg, c, optarg);
			if (err == -ENOENT)
				err = cli__bad_option("flamegraph", '?', argv);
			if (err)
				goto cleanup;
		}
	}
	err = output_format__choose(&writes, o->output, o->format_name, &o->format);
	if (!err && o->intervals && o->format != FMT_HTML) {
		pr_err("flamegraph: --intervals makes a timeline, which only the HTML page has\n");
		pr_hint("write -o FILE.html, or merge the files without --intervals\n");
		err = -EINVAL;
	}
cleanup:
	free(longopts);
	return err;
}

/* Reads one input, plain or compressed; "-" is standard input. Returns 0 or -errno (logged). */
static int read_input(struct flamegraph *fg, const char *path)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	FILE *in = NULL;
	int err;

	err = folded_input__open(path, &in);
	if (err)
		goto cleanup;
	err = flamegraph__read(fg, in, name);
cleanup:
	if (in)
		fclose(in);
	return err;
}

/* folded input -> pprof or speedscope: each frame a function, value samples/count */
static int export_folded(const struct fg_cmd_opts *o, int first, int argc, char **argv)
{
	struct profile_opts popts = {
		.sz = sizeof(popts), .nr_values = 1, .values = {{"samples", "count"}}};
	struct out_file out = {0};
	struct profile *p = profile__new(&popts);
	size_t bad = 0, nbad;
	FILE *in = NULL;
	int err = 0, i;

	if (!p)
		return -ENOMEM;
	for (i = first; i < argc || (i == first && first == argc); i++) {
		const char *path = i < argc ? argv[i] : "-";

		err = folded_input__open(path, &in);
		if (err)
			break;
		err = profile__read_folded(p, in, &nbad);
		fclose(in);
		if (err) {
			pr_err("flamegraph: cannot read %s: %s\n",
			       strcmp(path, "-") ? path : "<stdin>", strerror(-err));
			break;
		}
		bad += nbad;
	}
	if (err)
		goto cleanup;
	if (bad)
		pr_warn("flamegraph: %zu lines skipped (not \"stack COUNT\")\n", bad);
	if (!profile__nr_samples(p)) {
		pr_err("flamegraph: no stack counts found in the input\n");
		pr_hint("the input must be folded stacks, \"frame;frame;... COUNT\" lines\n");
		err = -ENODATA;
		goto cleanup;
	}
	err = out__open(&out, o->output);
	if (err)
		goto cleanup;
	err = o->format == FMT_PPROF ? profile__write_pprof(p, out.fp)
				     : profile__write_speedscope(p, out.fp, NULL);
	if (err)
		err = out__fail(&out, err);
	err = out__close(&out, !err) ?: err;
cleanup:
	profile__free(p);
	return err;
}

int cmd_flamegraph(int argc, char **argv)
{
	bool help = false;
	struct fg_cmd_opts o = {0};
	struct flamegraph *fg = NULL;
	struct out_file out = {0};
	int err, i;

	flamegraph_opts__init(&o.fg);
	err = parse_args(argc, argv, &o, &help);
	if (err || help) {
		if (help)
			usage(stdout);
		return help ? EXIT_OK : err == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
	}
	if (o.verbose)
		log__set_level(LOG_DEBUG);
	if (o.format == FMT_PPROF || o.format == FMT_SPEEDSCOPE) {
		err = export_folded(&o, optind, argc, argv);
		return err ? EXIT_ERROR : EXIT_OK;
	}

	fg = flamegraph__new(&o.fg);
	if (!fg) {
		err = -errno;
		pr_err("flamegraph: %s\n", strerror(errno));
		goto cleanup;
	}
	if (optind == argc) {
		if (isatty(STDIN_FILENO))
			pr_info("flamegraph: reading folded stacks from standard input\n");
		err = read_input(fg, "-");
	}
	for (i = optind; i < argc && !err; i++) {
		if (o.intervals)
			err = flamegraph__set_interval(fg, (unsigned int)(i - optind));
		if (err == -ERANGE)
			pr_err("flamegraph: more than %d intervals\n", FG_HTML_MAX_INTERVALS);
		if (!err)
			err = read_input(fg, argv[i]);
	}
	if (err)
		goto cleanup;

	err = out__open(&out, o.output);
	if (err)
		goto cleanup;
	if (o.format == FMT_HTML) {
		struct flamegraph_html_opts ho = {.sz = sizeof(ho)};

		err = flamegraph__write_html(fg, &ho, out.fp);
	} else {
		err = flamegraph__write_svg(fg, out.fp);
	}
	if (err == -ENODATA) {
		pr_err("flamegraph: no stack counts found in the input\n");
		/* the SVG (or page) saying so is still written, as flamegraph.pl does */
		err = out__close(&out, true) ?: -ENODATA;
		goto cleanup;
	}
	if (err)
		err = out__fail(&out, err);
	err = out__close(&out, !err) ?: err;
cleanup:
	if (err)
		out__close(&out, false);
	flamegraph__free(fg);
	return err ? EXIT_ERROR : EXIT_OK;
}
