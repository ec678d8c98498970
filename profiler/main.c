// SPDX-License-Identifier: MIT
/* profiler: the scorch binary's entry point and subcommand table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cmds.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd cmds[] = {
	{ "record", cmd_record, "sample stacks with BPF; write folded, SVG, HTML, pprof or speedscope" },
	{"top", cmd_top, "a live view of the hottest functions and stacks, like perf top"},
	{ "flamegraph", cmd_flamegraph, "folded stacks to an SVG or HTML flame graph, pprof or speedscope" },
	{ "diff", cmd_diff, "compare two profiles: differential flame graph, two-count folded, top changes" },
	{ "symbolize", cmd_symbolize, "print the frames (inline chain, file:line) of addresses" },
	{ "collapse", cmd_collapse, "perf script or bpftrace stack text to folded stacks" },
	{ "report", cmd_report, "name the frames of a capture (record -o x.scorch): folded, SVG, HTML" },
	{ "check", cmd_check, "diagnose the host: what recording needs, what works, hints" },
	{ "list-events", cmd_list_events, "the probes, tracepoints and software events record --event counts" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: scorch [--version] [--help] <command> [<args>]\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-12s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out, "\nRun 'scorch <command> --help' for a command's options.\n"
		     "\nexit status: 0 success, 1 error, 2 usage error, 3 partial result\n"
		     "(output written but more than 5%% of samples lost), 4 the command run by\n"
		     "'scorch record -- command' failed (output written)\n"
		     "\nenvironment: SCORCH_CACHE_DIR, where decompressed debug sections are kept\n"
		     "for the next runs (default " SCORCH_CACHE_DIR_DEFAULT "; empty: no cache)\n"
		     "\nexamples:\n"
		     "  sudo scorch record -p 1234 -d 10 -o cpu.folded\n"
		     "  sudo scorch record -o cpu.folded -- ./myprog args\n"
		     "  sudo scorch record -p 1234 -d 10 -o cpu.svg\n"
		     "  scorch flamegraph cpu.folded -o cpu.svg\n"
		     "  sudo scorch record -p 1234 -d 10 -o cpu.svg -o cpu.pb.gz -o cpu.json\n"
		     "  scorch diff before.folded after.folded -o diff.svg\n"
		     "  perf script | scorch collapse | scorch flamegraph > perf.svg\n"
		     "  scorch symbolize --elf ./myprog --lines 0x401136\n"
		     "  sudo scorch record -p 1234 -d 10 -o cpu.scorch && scorch report cpu.scorch "
		     "-o cpu.svg\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		scorch__print_version();
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	}
	pr_err("unknown command '%s'\n", argv[1]);
	pr_hint("run 'scorch --help' for the list of commands\n");
	return EXIT_USAGE;
}
