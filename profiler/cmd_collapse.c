// SPDX-License-Identifier: MIT
/* profiler: `scorch collapse`, perf script or bpftrace stack text to folded stacks. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "engine.h"
#include "flamegraph.h"
#include "cmds.h"

struct collapse_cmd_opts {
	const char *output; /* NULL: stdout */
	const char *input;  /* NULL: stdin */
	struct collapse_opts co;
	bool kernel, jit, all, none;
	int verbose;
};

enum {
	OPT_PID = 0x100,
	OPT_TID,
	OPT_KERNEL,
	OPT_JIT,
	OPT_ALL,
	OPT_NO_ANNOTATE,
	OPT_ADDRS,
	OPT_EVENT_FILTER,
	OPT_FORMAT,
	OPT_BPFTRACE_KEYS,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch collapse [options] [FILE|-] [-o OUT.folded]\n"
		"\n"
		"Turns the stack text of other tools into folded stacks (\"frame;...;frame "
		"COUNT\",\n"
		"root first, sorted), for scorch flamegraph and scorch diff. Reads standard input\n"
		"when no FILE or \"-\" is given; gzip and zstd input is decompressed on the fly.\n"
		"\n"
		"'perf script' output is collapsed as stackcollapse-perf.pl does, line for line:\n"
		"the process name is the root frame, \"+0x...\" offsets are stripped, unknown\n"
		"symbols become [module], only the first event seen is kept (see --event-filter),\n"
		"and each sample counts its period when perf printed one, else 1. By default\n"
		"kernel frames end in _[k] and JIT (/tmp/perf-PID.map) frames in _[j], as\n"
		"stackcollapse-perf.pl --all.\n"
		"\n"
		"bpftrace output of a map keyed by stacks is read too, by default that of\n"
		"  bpftrace -e 'profile:hz:99 { @[kstack, ustack, comm] = count(); }'\n"
		"giving \"comm;user frames;kernel frames_[k] COUNT\" (see --bpftrace-keys).\n"
		"\n"
		"  -o, --output FILE        write to FILE, atomically (default: stdout): folded\n"
		"                           stacks whatever the name; names of other formats\n"
		"                           (.svg, .html, .pb.gz, .json, .png, .gz ...) are\n"
		"                           refused\n"
		"      --format F           the input's: auto (default), perf or bpftrace; auto\n"
		"                           reads bpftrace when the first line that is not\n"
		"                           blank or a # comment is \"Attaching ...\" or\n"
		"                           starts with @\n"
		"      --pid                perf: root frame \"comm-PID\" (\"comm-?\" when perf\n"
		"                           printed only the TID)\n"
		"      --tid                perf: root frame \"comm-PID/TID\"\n"
		"      --kernel             annotate kernel frames only (_[k])\n"
		"      --jit                annotate JIT frames only (_[j])\n"
		"      --all                both annotations (the default)\n"
		"      --no-annotate        no annotations (stackcollapse-perf.pl's default)\n"
		"      --addrs              perf: unknown symbols as \"[module <ADDR>]\"\n"
		"      --event-filter EVENT perf: keep samples of EVENT (default: the first seen;\n"
		"                           skipped samples are counted and reported)\n"
		"      --bpftrace-keys LIST the map key's elements in order (default\n"
		"                           kstack,ustack,comm): kstack and ustack are stacks,\n"
		"                           any other name a value that becomes a root frame,\n"
		"                           e.g. ustack for @[ustack] = count(), or kstack,comm\n"
		"  -v, --verbose            more messages\n"
		"  -h, --help               this help\n"
		"\n"
		"Lines that are not understood are skipped, counted and reported on stderr, as\n"
		"is a last perf sample with no blank line after it (it may be cut; it is "
		"dropped).\n"
		"bpftrace maps whose keys do not have the named shape are errors.\n"
		"\n"
		"exit status: 0 success, 1 error (unreadable or corrupt input, no samples,\n"
		"bpftrace output not understood), 2 usage error\n"
		"\n"
		"examples:\n"
		"  perf script | scorch collapse > cpu.folded\n"
		"  scorch collapse perf.txt.gz --pid -o cpu.folded\n"
		"  scorch collapse perf.txt | scorch flamegraph --colors java > cpu.svg\n"
		"  bpftrace -e 'profile:hz:99 { @[kstack, ustack, comm] = count(); }' > bt.txt\n"
		"  scorch collapse bt.txt -o bt.folded\n"
		"  scorch collapse --bpftrace-keys ustack ustacks.txt -o u.folded\n");
}

/* 0 (*help set when --help was given) or -EINVAL after a usage error. */
static int parse_args(int argc, char **argv, struct collapse_cmd_opts *o, bool *help)
{
	static const struct output_formats writes = {
		.cmd = "collapse",
		.can = FMT_BIT(FMT_FOLDED),
		.dflt = FMT_FOLDED,
	};
	enum output_fmt fmt;
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"pid", no_argument, NULL, OPT_PID},
		{"tid", no_argument, NULL, OPT_TID},
		{"kernel", no_argument, NULL, OPT_KERNEL},
		{"jit", no_argument, NULL, OPT_JIT},
		{"all", no_argument, NULL, OPT_ALL},
		{"no-annotate", no_argument, NULL, OPT_NO_ANNOTATE},
		{"addrs", no_argument, NULL, OPT_ADDRS},
		{"event-filter", required_argument, NULL, OPT_EVENT_FILTER},
		{"bpftrace-keys", required_argument, NULL, OPT_BPFTRACE_KEYS},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "auto")) {
				o->co.format = COLLAPSE_AUTO;
			} else if (!strcmp(optarg, "perf")) {
				o->co.format = COLLAPSE_PERF;
			} else if (!strcmp(optarg, "bpftrace")) {
				o->co.format = COLLAPSE_BPFTRACE;
			} else {
				pr_err("collapse: invalid --format '%s'\n", optarg);
				pr_hint("use auto, perf or bpftrace\n");
				return -EINVAL;
			}
			break;
		case OPT_PID:
			o->co.pid = true;
			break;
		case OPT_TID:
			o->co.tid = true;
			break;
		case OPT_KERNEL:
			o->kernel = true;
			break;
		case OPT_JIT:
			o->jit = true;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_NO_ANNOTATE:
			o->none = true;
			break;
		case OPT_ADDRS:
			o->co.addrs = true;
			break;
		case OPT_EVENT_FILTER:
			if (!*optarg) {
				pr_err("collapse: empty --event-filter\n");
				return -EINVAL;
			}
			o->co.event_filter = optarg;
			break;
		case OPT_BPFTRACE_KEYS:
			o->co.bpftrace_keys = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			*help = true;
			return 0;
		default:
			return cli__bad_option("collapse", c == ':' ? ':' : '?', argv);
		}
	}
	if (o->none && (o->kernel || o->jit || o->all)) {
		pr_err("collapse: --no-annotate contradicts --kernel, --jit and --all\n");
		return -EINVAL;
	}
	if (!o->none) {
		bool some = o->kernel || o->jit;

		o->co.annotate_kernel = o->all || o->kernel || !some;
		o->co.annotate_jit = o->all || o->jit || !some;
	}
	if (argc - optind > 1) {
		pr_err("collapse: expected one input file (got %d)\n", argc - optind);
		pr_hint("concatenate files first: cat a.txt b.txt | scorch collapse\n");
		return -EINVAL;
	}
	if (argc - optind == 1 && strcmp(argv[optind], "-"))
		o->input = argv[optind];
	/* folded alone: an -o name that asks for another format is refused */
	return output_format__choose(&writes, o->output, NULL, &fmt);
}

int cmd_collapse(int argc, char **argv)
{
	bool help = false;
	struct collapse_cmd_opts o = {.co = {.sz = sizeof(struct collapse_opts)}};
	const char *name;
	struct collapser *c = NULL;
	struct collapse_stats st;
	struct out_file out = {0};
	bool opened = false;
	FILE *in = NULL;
	int err;

	err = parse_args(argc, argv, &o, &help);
	if (err || help) {
		if (help)
			usage(stdout);
		return help ? EXIT_OK : EXIT_USAGE;
	}
	if (o.verbose)
		log__set_level(LOG_DEBUG);
	name = o.input ? o.input : "<stdin>";

	c = collapser__new(&o.co);
	if (!c) {
		err = -errno;
		if (err == -EINVAL)
			return EXIT_USAGE;
		pr_err("collapse: out of memory\n");
		goto cleanup;
	}
	err = folded_input__open(o.input, &in);
	if (err)
		goto cleanup;
	err = collapser__read(c, in, name);
	if (err)
		goto cleanup;
	collapser__stats(c, &st);
	if (!folded__nr_stacks(collapser__folded(c))) {
		err = -ENODATA;
		pr_err("collapse: %s: no samples found\n", name);
		if (st.filtered)
			pr_hint("every sample was of another event than %s; see --event-filter\n",
				o.co.event_filter ? o.co.event_filter : "the first");
		else
			pr_hint("expected 'perf script' output of 'perf record -g', or bpftrace "
				"output of a map keyed by stacks\n");
		goto cleanup;
	}
	pr_debug("collapse: %s: %llu samples, %zu distinct stacks\n", name,
		 (unsigned long long)st.samples, folded__nr_stacks(collapser__folded(c)));

	err = out__open(&out, o.output);
	if (err)
		goto cleanup;
	opened = true;
	err = folded__write(collapser__folded(c), out.fp);
	if (err)
		err = out__fail(&out, err);
	err = out__close(&out, !err) ?: err;
	opened = false;
cleanup:
	if (opened)
		out__close(&out, false);
	if (in)
		fclose(in);
	collapser__free(c);
	return err ? EXIT_ERROR : EXIT_OK;
}
