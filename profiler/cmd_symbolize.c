// SPDX-License-Identifier: MIT
/* profiler: `scorch symbolize`, what the symbolizer makes of addresses of a process or file. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "common.h"
#include "engine.h"
#include "symbolize.h"

/* an address a line on standard input: 4 KiB is far past any */
#define SYMBOLIZE_MAX_LINE 4096

#define SYM_FRAMES_MAX 64

struct symbolize_opts {
	long pid;
	const char *elf;
	bool is_return;
	bool kernel;
	struct symbolizer_opts sym;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch symbolize (-p PID | --elf FILE | --kernel) [options] [ADDR...]\n"
		"\n"
		"Prints what the symbolizer makes of each address: one line per address,\n"
		"ADDR, a tab, then its frames outermost first joined by ';' (functions inlined\n"
		"into the one before end in _[i], JIT frames in _[j]). Without ADDR arguments,\n"
		"addresses are read from standard input, one per line (hex, 0x optional).\n"
		"\n"
		"  -p, --pid PID        addresses of a running process (as sampled)\n"
		"  -e, --elf FILE       ELF virtual addresses of FILE (as addr2line takes them)\n"
		"  -k, --kernel         kernel addresses (/proc/kallsyms)\n"
		"  -r, --return         addresses are return addresses (looked up at ADDR-1)\n"
		"      --no-dwarf       symbol tables only\n"
		"      --debug-root DIR debug files by build-id under DIR/.build-id/ (default\n"
		"                       /usr/lib/debug; --debug-dir is the same)\n"
		"  -v, --verbose        debug messages\n"
		"  -h, --help           this text\n"
		"\n"
		"names (as record; -l is --lines):\n");
	symbolizer__print_options_help(out);
	fprintf(out,
		"\n"
		"exit status: 0 success, 1 error (unreadable file, bad address), 2 usage error\n"
		"\n"
		"examples:\n"
		"  scorch symbolize --elf ./myprog --lines 0x401136\n"
		"  scorch symbolize -p 1234 7f1c2a3b4c5d\n"
		"  awk '{print $1}' addrs.txt | scorch symbolize --elf "
		"/usr/lib/x86_64-linux-gnu/libc.so.6\n");
}

/* 0 (*help set when --help was given) or -EINVAL after a usage error. */
static int parse_args(int argc, char **argv, struct symbolize_opts *o, bool *help)
{
	enum { OPT_NO_DWARF = 256, OPT_DEBUG_ROOT };
	static const struct option own[] = {
		{"pid", required_argument, NULL, 'p'},
		{"elf", required_argument, NULL, 'e'},
		{"kernel", no_argument, NULL, 'k'},
		{"return", no_argument, NULL, 'r'},
		{"no-dwarf", no_argument, NULL, OPT_NO_DWARF},
		{"debug-root", required_argument, NULL, OPT_DEBUG_ROOT},
		{"debug-dir", required_argument, NULL, OPT_DEBUG_ROOT},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const struct option *const tables[] = { own, symbolizer_name_options };
	struct option *longopts = cli__options(tables, ARRAY_SIZE(tables));
	int c, modes = 0, err = -EINVAL;

	if (!longopts)
		return -ENOMEM;
	o->sym.sz = sizeof(o->sym);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:e:krlvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse__long(optarg, 1, INT32_MAX, &o->pid)) {
				pr_err("symbolize: invalid PID '%s'\n", optarg);
				pr_hint("give a positive process ID, e.g. -p 1234\n");
				goto cleanup;
			}
			modes++;
			break;
		case 'e':
			o->elf = optarg;
			modes++;
			break;
		case 'k':
			o->kernel = true;
			modes++;
			break;
		case 'r':
			o->is_return = true;
			break;
		case 'l':
			o->sym.lines = true;
			break;
		case OPT_NO_DWARF:
			o->sym.no_dwarf = true;
			break;
		case OPT_DEBUG_ROOT:
			o->sym.debug_root = optarg;
			break;
		case 'v':
			log__set_level(LOG_DEBUG);
			break;
		case 'h':
			*help = true;
			err = 0;
			goto cleanup;
		default:
			if (!symbolizer_opts__set_getopt(&o->sym, c))
				break;
			cli__bad_option("symbolize", c == ':' ? ':' : '?', argv);
			goto cleanup;
		}
	}
	if (modes != 1) {
		pr_err("symbolize: give exactly one of -p PID, --elf FILE, --kernel\n");
		pr_hint("run 'scorch symbolize --help' for the options\n");
		goto cleanup;
	}
	err = 0;
cleanup:
	free(longopts);
	return err;
}

/* Resolves and prints one address. Returns 0, or -errno after a message. */
static int one(struct symbolizer *s, const struct symbolize_opts *o, const char *text)
{
	struct frame fr[SYM_FRAMES_MAX];
	uint64_t addr;
	int n, i;

	if (!strncmp(text, "0x", 2) || !strncmp(text, "0X", 2))
		text += 2;
	if (parse__u64(text, 16, &addr)) {
		pr_err("symbolize: invalid address '%s'\n", text);
		pr_hint("addresses are hexadecimal, e.g. 0x401136\n");
		return -EINVAL;
	}
	if (o->elf)
		n = symbolizer__elf(s, o->elf, addr, o->is_return, fr, SYM_FRAMES_MAX);
	else if (o->kernel)
		n = symbolizer__kernel(s, addr, o->is_return, fr, SYM_FRAMES_MAX);
	else
		n = symbolizer__user(s, (pid_t)o->pid, addr, o->is_return, fr, SYM_FRAMES_MAX);
	if (n < 0) {
		if (n == -ENOMEM)
			pr_err("symbolize: out of memory\n");
		else if (o->elf)
			pr_hint("give an ELF file that exists and is readable\n");
		return n;
	}
	printf("%#" PRIx64 "\t", addr);
	for (i = 0; i < n; i++)
		printf("%s%s%s", i ? ";" : "", fr[i].name, fold__frame_suffix(fr[i].kind));
	putchar('\n');
	return 0;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_opts o = {.sym = {.sz = sizeof(o.sym)}};
	bool help = false;
	struct symbolizer *s = NULL;
	struct symbolizer_stats st;
	char *line = NULL;
	int err, i;

	err = parse_args(argc, argv, &o, &help);
	if (err || help) {
		if (help)
			usage(stdout);
		return help ? EXIT_OK : err == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
	}
	o.sym.no_kernel = !o.kernel;
	o.sym.cache_dir = scorch__cache_dir();
	s = symbolizer__new(&o.sym);
	if (!s) {
		pr_err("symbolize: cannot create the symbolizer: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	if (o.pid) {
		err = symbolizer__snapshot(s, (pid_t)o.pid);
		if (err) {
			pr_err("symbolize: cannot read the mappings of PID %ld: %s\n", o.pid,
			       strerror(-err));
			pr_hint("is the process running, and are you root?\n");
			goto cleanup;
		}
	}
	for (i = optind; i < argc && !err; i++)
		err = one(s, &o, argv[i]);
	if (optind == argc) {
		struct line_reader lr;
		size_t n;
		int got;

		/* one address a line: a longer line is no address, skipped and counted */
		line_reader__init_interactive(&lr, stdin, SYMBOLIZE_MAX_LINE);
		while (!err && (got = line_reader__next(&lr, &line, &n)) > 0) {
			while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
				line[--n] = '\0';
			if (n)
				err = one(s, &o, line);
		}
		if (!err && got < 0) {
			pr_err("symbolize: cannot read standard input: %s\n", strerror(-got));
			err = got;
		}
		line_reader__report(&lr, "symbolize", "<stdin>");
		line_reader__free(&lr);
	}
	if (fflush(stdout) && !err) {
		pr_err("symbolize: cannot write the output: %s\n", strerror(errno));
		err = -EIO;
	}
	symbolizer__stats(s, &st);
	if (st.dwarf_incomplete)
		pr_warn("symbolize: DWARF partly unreadable or over the index's bounds in %" PRIu64
			" of %" PRIu64 " files: frames there may lack inlined calls or fall"
			" back to symbols\n",
			st.dwarf_incomplete, st.dwarf_files);
cleanup:
	symbolizer__free(s);
	return err ? EXIT_ERROR : EXIT_OK;
}
