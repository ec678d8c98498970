// SPDX-License-Identifier: MIT
/* profiler: `scorch check`: what works on this host for recording, what does not, and why. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "common.h"
#include "cmds.h"
#include "engine.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: scorch check [--json] [-v]\n"
		"\n"
		"Diagnoses the host for 'scorch record': privileges and capabilities,\n"
		"kernel.perf_event_paranoid, perf_event_max_sample_rate, perf_event_max_stack,\n"
		"unprivileged_bpf_disabled, BTF, the BPF program types, map types and helpers\n"
		"scorch uses (each actually loaded), the cpu-clock and hardware cycles events\n"
		"(each opened), the sched_process_exit, sched_process_fork and sched_switch raw\n"
		"tracepoints (a trivial program attached to each), tracefs (not needed), debug\n"
		"info directories and the memlock limit. Prints one line per probe: ok,\n"
		"degraded (works with a limit), missing, or skipped (not checked without\n"
		"privileges), what the probe needs (record: every recording; offcpu: --mode\n"
		"offcpu and wall; dwarf: --unwind dwarf; '-': nothing), and a hint for each\n"
		"problem. 'scorch record' runs the same probes before it starts.\n"
		"\n"
		"options:\n"
		"      --json        one JSON object on standard output instead of the table\n"
		"  -v, --verbose     debug messages, including libbpf's probe logs\n"
		"  -h, --help        this help\n"
		"\n"
		"exit status: 0 recording can work here (some modes may not: see the table),\n"
		"1 it cannot (a probe that every recording needs is missing or could not be\n"
		"checked), 2 usage error\n"
		"\n"
		"examples:\n"
		"  sudo scorch check\n"
		"  scorch check               # as a user: says which privileges are missing\n"
		"  sudo scorch check --json | jq '.probes[] | select(.status != \"ok\")'\n");
}

static const char *need_name(uint32_t need)
{
	if (need & PROBE_NEED_RECORD)
		return "record";
	if (need & PROBE_NEED_OFFCPU)
		return "offcpu";
	if (need & PROBE_NEED_DWARF)
		return "dwarf";
	return "-";
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* A mode works when no probe it needs is missing or unchecked. */
static bool usable(const struct probe_result *res, uint32_t need)
{
	size_t i;

	for (i = 0; i < PROBE_NR; i++) {
		if ((res[i].need & need) &&
		    (res[i].status == PROBE_MISSING || res[i].status == PROBE_SKIPPED))
			return false;
	}
	return true;
}

static void print_json(FILE *out, const struct probe_result *res, bool rec, bool off, bool dwarf)
{
	size_t i;

	fprintf(out,
		"{\"can_record\":%s,\"modes\":{\"cpu\":%s,\"offcpu\":%s,\"wall\":%s,"
		"\"unwind_dwarf\":%s},\"probes\":[",
		rec ? "true" : "false", rec ? "true" : "false", off ? "true" : "false",
		off ? "true" : "false", dwarf ? "true" : "false");
	for (i = 0; i < PROBE_NR; i++) {
		fprintf(out, "%s\n{\"name\":", i ? "," : "");
		json_str(out, res[i].name);
		fprintf(out, ",\"status\":\"%s\",\"needed_by\":\"%s\",\"value\":%ld,\"detail\":",
			probe__status_name(res[i].status), need_name(res[i].need), res[i].value);
		json_str(out, res[i].detail);
		fprintf(out, ",\"hint\":");
		json_str(out, res[i].hint);
		fputc('}', out);
	}
	fprintf(out, "\n]}\n");
}

static void print_table(FILE *out, const struct probe_result *res, bool rec, bool off, bool dwarf)
{
	size_t i, skipped = 0;

	fprintf(out, "%-9s %-34s %-7s %s\n", "STATUS", "PROBE", "NEEDED", "DETAIL");
	for (i = 0; i < PROBE_NR; i++) {
		fprintf(out, "%-9s %-34s %-7s %s\n", probe__status_name(res[i].status), res[i].name,
			need_name(res[i].need), res[i].detail);
		if ((res[i].status == PROBE_MISSING || res[i].status == PROBE_DEGRADED) &&
		    res[i].hint[0])
			fprintf(out, "%-9s hint: %s\n", "", res[i].hint);
	}
	fputc('\n', out);
	for (i = 0; i < PROBE_NR; i++)
		skipped += res[i].status == PROBE_SKIPPED;
	if (skipped)
		fprintf(out,
			"%zu probes skipped: they need CAP_BPF or CAP_PERFMON; run 'sudo scorch "
			"check' to check them\n",
			skipped);
	if (!rec) {
		fprintf(out, "record: cannot work here; missing:");
		for (i = 0; i < PROBE_NR; i++) {
			if ((res[i].need & PROBE_NEED_RECORD) && res[i].status == PROBE_MISSING)
				fprintf(out, " %s;", res[i].name);
		}
		fprintf(out, " see the hints above\n");
		return;
	}
	fprintf(out, "record: works: --mode cpu%s, --unwind fp%s (sampling the cpu-clock event)\n",
		off ? ", offcpu and wall" : " only (no offcpu or wall: see sched_switch above)",
		dwarf ? " and dwarf" : " only (no dwarf: see the helpers above)");
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct probe_result res[PROBE_NR];
	bool json = false, rec, off, dwarf;
	int c;
	size_t i;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'v':
			log__set_level(LOG_DEBUG);
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			cli__bad_option("check", c == ':' ? ':' : '?', argv);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'\n", argv[optind]);
		pr_hint("run 'scorch check --help'\n");
		return EXIT_USAGE;
	}
	/* probes that fail print libbpf warnings: only with -v */
	if (!log__enabled(LOG_DEBUG))
		libbpf_set_print(NULL);
	for (i = 0; i < PROBE_NR; i++)
		probe__run(i, &res[i]);
	rec = usable(res, PROBE_NEED_RECORD);
	off = rec && usable(res, PROBE_NEED_OFFCPU);
	dwarf = rec && usable(res, PROBE_NEED_DWARF);
	if (json)
		print_json(stdout, res, rec, off, dwarf);
	else
		print_table(stdout, res, rec, off, dwarf);
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("cannot write to standard output: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	return rec ? EXIT_OK : EXIT_ERROR;
}
