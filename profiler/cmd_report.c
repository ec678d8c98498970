// SPDX-License-Identifier: MIT
/* profiler: `scorch report`: name the frames of a capture (.scorch) and write folded or SVG. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "common.h"
#include "engine.h"
#include "flamegraph.h"
#include "symbolize.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch report FILE.scorch [-o OUTPUT] [options]\n"
		"\n"
		"Names the frames of a capture written by 'scorch record -o FILE.scorch' and\n"
		"writes folded stacks or a flame graph, exactly as record would have. It may\n"
		"run later or on another machine: user frames come from the files the capture's\n"
		"mappings name, found by path (and checked by build-id: a file with another\n"
		"build-id is refused, its frames become [file] or [unknown]), else under --symfs\n"
		"or as debug files by build-id; kernel and JIT frames come from the symbols the\n"
		"capture holds. Nothing is read from /proc.\n"
		"\n"
		"options:\n"
		"  -o, --output FILE          write here ('-' or absent: standard output);\n"
		"                             repeatable; the format by the name: .svg flame\n"
		"                             graph, .html profile viewer (a capture recorded\n"
		"                             with --interval: with its timeline), .pb.gz or\n"
		"                             .pb pprof, .json speedscope, .folded, .txt or any\n"
		"                             other name folded stacks (every interval\n"
		"                             summed); .scorch, .png, .gz ... are refused\n"
		"      --format FMT           folded, svg, html, pprof or speedscope for a\n"
		"                             single -o (or standard output), whatever its name\n"
		"      --symfs DIR            look for the binaries under DIR first "
		"(DIR/usr/bin/x\n"
		"                             for /usr/bin/x); symlinks stay inside DIR\n"
		"      --debug-root DIR       debug files by build-id under DIR/.build-id/\n"
		"                             (default /usr/lib/debug)\n"
		"\n"
		"names (as record):\n");
	symbolizer__print_options_help(out);
	fprintf(out,
		"\n"
		"  -q, --quiet                no summary on standard error, warnings only\n"
		"  -v, --verbose              the full summary and debug messages (where each\n"
		"                             file was found)\n"
		"  -h, --help                 this help\n"
		"\n"
		"With an SVG or HTML output these options of 'scorch flamegraph' apply:\n");
	flamegraph__print_options_help(out);
	fprintf(out,
		"\n"
		"The summary on standard error is record's (samples, losses, truncated stacks,\n"
		"frames not named), plus the files not found or refused for their build-id.\n"
		"\n"
		"exit status: 0 success, 1 error (unreadable, truncated or corrupt capture), 2 "
		"usage\n"
		"error, 3 output written but more than 5%% of samples were lost when recording\n"
		"\n"
		"examples:\n"
		"  sudo scorch record -p 1234 -d 10 -o cpu.scorch\n"
		"  scorch report cpu.scorch -o cpu.folded\n"
		"  scorch report cpu.scorch -o cpu.svg --title 'My app'\n"
		"  scorch report cpu.scorch -o cpu.pb.gz && go tool pprof -top cpu.pb.gz\n"
		"  scorch report cpu.scorch -o cpu.html   # recorded with --interval: a timeline\n"
		"  scorch report cpu.scorch --symfs /srv/sysroot -o cpu.svg   # binaries moved\n");
}

enum {
	OPT_SYMFS = 256,
	OPT_DEBUG_ROOT,
	OPT_FORMAT,
};

/* Each -o in the format its name or --format asks for (engine.h's rule). */
static int add_outputs(struct report_opts *o, const char *const *paths, size_t nr,
		       const char *format)
{
	static const struct output_formats writes = {
		.cmd = "report",
		.can = FMT_BIT(FMT_FOLDED) | FMT_BIT(FMT_SVG) | FMT_BIT(FMT_HTML) |
		       FMT_BIT(FMT_PPROF) | FMT_BIT(FMT_SPEEDSCOPE),
		.dflt = FMT_FOLDED,
	};
	enum output_fmt fmt;
	size_t i;
	int err;

	if (format && nr > 1) {
		pr_err("--format applies to one output; %zu are given\n", nr);
		pr_hint("name each -o FILE with its extension (.svg, .folded, .pb.gz, .json)\n");
		return -EINVAL;
	}
	for (i = 0; i < MAX(nr, 1); i++) {
		err = output_format__choose(&writes, nr ? paths[i] : NULL, format, &fmt);
		if (!err)
			err = outputs__add(o->outs, nr ? paths[i] : NULL, fmt);
		if (err)
			return err;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct report_opts *o, bool *help)
{
	static const struct option own_opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"symfs", required_argument, NULL, OPT_SYMFS},
		{"debug-root", required_argument, NULL, OPT_DEBUG_ROOT},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const struct option *const tables[] = {own_opts, symbolizer_name_options,
					       flamegraph_long_options};
	struct option *long_opts;
	bool fg_opts = false;
	const char *format = NULL;
	const char **paths = NULL; /* -o, borrowed from argv */
	size_t nr_paths = 0;
	int c, err = -EINVAL;

	long_opts = cli__options(tables, ARRAY_SIZE(tables));
	paths = calloc(argc, sizeof(*paths));
	flamegraph_opts__init(&o->fg);
	o->names.sz = sizeof(o->names);
	o->outs = outputs__new();
	if (!long_opts || !paths || !o->outs) {
		err = -ENOMEM;
		goto cleanup;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qvh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			paths[nr_paths++] = optarg;
			break;
		case OPT_FORMAT:
			format = optarg;
			break;
		case OPT_SYMFS:
			o->names.symfs = optarg;
			break;
		case OPT_DEBUG_ROOT:
			o->names.debug_root = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			log__set_level(LOG_DEBUG);
			break;
		case 'h':
			*help = true;
			err = 0;
			goto cleanup;
		case ':':
		case '?':
			cli__bad_option("report", c, argv);
			goto cleanup;
		default:
			if (!symbolizer_opts__set_getopt(&o->names, c))
				break;
			err = flamegraph_opts__set_getopt(&o->fg, c, optarg);
			if (!err) {
				fg_opts = true;
				break;
			}
			if (err == -ENOENT)
				cli__bad_option("report", '?', argv);
			err = -EINVAL;
			goto cleanup;
		}
	}
	if (optind != argc - 1) {
		if (optind == argc)
			pr_err("no capture file given\n");
		else
			pr_err("more than one capture file given\n");
		pr_hint("scorch report FILE.scorch [-o OUTPUT]\n");
		goto cleanup;
	}
	o->input = argv[optind];
	err = add_outputs(o, paths, nr_paths, format);
	if (err)
		goto cleanup;
	err = -EINVAL;
	o->graph = outputs__count(o->outs, "svg") + outputs__count(o->outs, "html") > 0;
	if (fg_opts && !o->graph) {
		pr_err("flame graph options need an SVG or HTML output (-o FILE.svg, FILE.html)\n");
		goto cleanup;
	}
	err = 0;
cleanup:
	free(paths);
	free(long_opts);
	return err;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {};
	bool help = false, partial = false;
	int err;

	err = parse_args(argc, argv, &o, &help);
	if (err || help) {
		if (help)
			usage(stdout);
		outputs__free(o.outs);
		return help ? EXIT_OK : err == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
	}
	o.names.cache_dir = scorch__cache_dir();
	err = report__run(&o, &partial);
	outputs__free(o.outs); /* uncommitted files removed */
	if (err)
		return EXIT_ERROR;
	return partial ? EXIT_PARTIAL : EXIT_OK;
}
