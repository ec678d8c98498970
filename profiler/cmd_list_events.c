// SPDX-License-Identifier: MIT
/* profiler: `scorch list-events`: the events record --event can count, of the kernel or a target.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "common.h"
#include "cmds.h"
#include "engine.h"
#include "symbolize.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: scorch list-events [-p PID | FILE] [PATTERN]\n"
		     "\n"
		     "Lists the events 'scorch record --event' can count, one SPEC a line:\n"
		     "without a target the kernel's tracepoints (found in its BTF, as raw\n"
		     "tracepoints: tracepoint:NAME) and the software events; with FILE (an\n"
		     "executable or library) its USDT probes (usdt:FILE:PROVIDER:NAME) and\n"
		     "functions (uprobe:FILE:NAME, by the demangled name when that names one\n"
		     "function, else the symbol); with -p PID the same for every file the\n"
		     "process maps executable. PATTERN, a glob, keeps the lines it matches,\n"
		     "whole or after their kind (e.g. '*malloc*', 'sched*').\n"
		     "\n"
		     "options:\n"
		     "  -p, --pid PID     the files process PID maps\n"
		     "  -h, --help        this help\n"
		     "\n"
		     "exit status: 0 success, 1 error (no such process or file, not ELF), 2 usage\n"
		     "error\n"
		     "\n"
		     "examples:\n"
		     "  scorch list-events 'tracepoint:sched*'\n"
		     "  scorch list-events /usr/bin/python3.11 'usdt:*'\n"
		     "  sudo scorch list-events -p 1234 '*malloc*'\n");
}

/*
 * Prints @spec if it matches @pattern (NULL: all), control bytes as '?'. The pattern
 * matches the whole spec or the name after its kind ('sched*' and 'tracepoint:sched*').
 */
static void emit(const char *spec, const char *pattern)
{
	const char *p, *name = strchr(spec, ':');

	if (pattern && fnmatch(pattern, spec, 0) && (!name || fnmatch(pattern, name + 1, 0)))
		return;
	for (p = spec; *p; p++)
		putchar((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
	putchar('\n');
}

static int list_kernel(const char *pattern)
{
	static const char *const sw[] = {"page-faults", "context-switches", "cpu-migrations",
					 "minor-faults", "major-faults"};
	struct btf *btf = btf__load_vmlinux_btf();
	char spec[512];
	size_t i;
	__u32 id, n;

	if (!btf) {
		int err = -errno;

		pr_err("cannot read the kernel's BTF: %s\n", strerror(-err));
		pr_hint("tracepoints are found in /sys/kernel/btf/vmlinux "
			"(CONFIG_DEBUG_INFO_BTF=y)\n");
		return err;
	}
	n = btf__type_cnt(btf);
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name;

		if (!btf_is_typedef(t))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		if (!name || strncmp(name, "btf_trace_", 10))
			continue;
		snprintf(spec, sizeof(spec), "tracepoint:%s", name + 10);
		emit(spec, pattern);
	}
	btf__free(btf);
	for (i = 0; i < ARRAY_SIZE(sw); i++)
		emit(sw[i], pattern);
	return 0;
}

struct named {
	const char *name; /* what --event is given (interned) */
	uint64_t addr;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int list_file(const char *path, const char *pattern)
{
	struct strset *strs = strset__new();
	struct symbolize_usdt *notes = NULL;
	struct symbolize_func *fns = NULL;
	struct named *v = NULL;
	size_t nr_notes = 0, nr = 0, i, j;
	char *spec = NULL;
	int err;

	if (!strs)
		return -ENOMEM;
	err = symbolize__usdt_notes(path, strs, &notes, &nr_notes);
	if (!err)
		err = symbolize__functions(path, strs, &fns, &nr);
	if (err) {
		pr_err("cannot read %s: %s\n", path,
		       err == -ENOEXEC ? "not an ELF file" : strerror(-err));
		pr_hint("give an executable or a shared library\n");
		goto cleanup;
	}
	spec = malloc(PATH_MAX + 8192);
	v = calloc(nr + 1, sizeof(*v));
	if (!spec || !v) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < nr_notes; i++) {
		snprintf(spec, PATH_MAX + 8192, "usdt:%s:%s:%s", path, notes[i].provider,
			 notes[i].name);
		emit(spec, pattern);
	}
	/* the demangled name without parameters where it names one address */
	for (i = 0; i < nr; i++) {
		v[i].name = fns[i].short_name ? fns[i].short_name : fns[i].name;
		v[i].addr = fns[i].addr;
	}
	qsort(v, nr, sizeof(*v), named_cmp);
	for (i = 0; i < nr; i = j) {
		bool unique = true;

		for (j = i + 1; j < nr && !strcmp(v[j].name, v[i].name); j++)
			unique &= v[j].addr == v[i].addr;
		if (unique) {
			snprintf(spec, PATH_MAX + 8192, "uprobe:%s:%s", path, v[i].name);
			emit(spec, pattern);
			continue;
		}
		/* overloads: by their symbols */
		for (size_t k = 0; k < nr; k++) {
			if (fns[k].short_name && !strcmp(fns[k].short_name, v[i].name)) {
				snprintf(spec, PATH_MAX + 8192, "uprobe:%s:%s", path, fns[k].name);
				emit(spec, pattern);
			}
		}
	}
cleanup:
	free(v);
	free(spec);
	free(notes);
	free(fns);
	strset__free(strs);
	return err;
}

/* Every file @pid maps executable, each once. */
static int list_pid(pid_t pid, const char *pattern)
{
	char path[64], *text = NULL, *line, *save = NULL, **seen = NULL;
	size_t len, nr = 0, cap = 0, i;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = file__read_bounded(AT_FDCWD, path, 64u << 20, &text, &len);
	if (err) {
		pr_err("cannot read the mappings of process %d: %s\n", pid, strerror(-err));
		pr_hint("check the PID with 'ps -p %d'; another user's process needs root\n", pid);
		return err;
	}
	for (line = strtok_r(text, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		char perms[8], *file = strchr(line, '/');

		if (sscanf(line, "%*s %7s", perms) != 1 || perms[2] != 'x' || !file)
			continue;
		for (i = 0; i < nr && strcmp(seen[i], file); i++)
			;
		if (i < nr)
			continue;
		if (array__grow((void **)&seen, &cap, nr + 1, sizeof(*seen))) {
			err = -ENOMEM;
			break;
		}
		seen[nr++] = file;
		err = list_file(file, pattern);
		if (err && err != -ENOMEM)
			err = 0; /* deleted or unreadable: said, and the rest listed */
	}
	free(seen);
	free(text);
	return err;
}

int cmd_list_events(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *file = NULL, *pattern = NULL;
	long pid = 0;
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'p':
			if (parse__long(optarg, 1, INT_MAX, &pid)) {
				pr_err("invalid PID '%s'\n", optarg);
				pr_hint("give a process ID, e.g. -p 1234\n");
				return EXIT_USAGE;
			}
			break;
		default:
			cli__bad_option("list-events", c, argv);
			return EXIT_USAGE;
		}
	}
	if (!pid && optind < argc && strchr(argv[optind], '/'))
		file = argv[optind++];
	if (optind < argc)
		pattern = argv[optind++];
	if (optind < argc) {
		pr_err("too many arguments: '%s'\n", argv[optind]);
		pr_hint("give at most -p PID or FILE, and one PATTERN\n");
		return EXIT_USAGE;
	}
	if (pid)
		err = list_pid(pid, pattern);
	else if (file)
		err = list_file(file, pattern);
	else
		err = list_kernel(pattern);
	return err ? EXIT_ERROR : EXIT_OK;
}
