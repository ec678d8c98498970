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
		"(each opened), perf's uprobe PMU, the sched_process_exit, sched_process_fork,\n"
		"sched_switch, sched_wakeup and sched_waking raw tracepoints (a trivial program\n"
		"attached to each), tracefs (not needed), debug info directories and the memlock\n"
		"limit. Prints one line per probe: ok, degraded (works with a limit), missing,\n"
		"or skipped (not checked without privileges), what needs it (record: every\n"
		"recording; offcpu: --mode offcpu and wall; offwake: --mode offwake and\n"
		"wakeup; dwarf: --unwind dwarf and kernel; uprobe: --event uprobe, uretprobe\n"
		"and usdt; '-': nothing), and a hint for each problem; then what works: the\n"
		"--mode values, the --unwind values and the --event kinds. 'scorch record'\n"
		"runs the same probes before it starts.\n"
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
	if (need & PROBE_NEED_OFFWAKE)
		return "offwake";
	if (need & PROBE_NEED_DWARF)
		return "dwarf";
	if (need & PROBE_NEED_UPROBE)
		return "uprobe";
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

/* What record can do here, from the probes. */
struct works {
	bool rec;    /* any recording: --mode cpu, --unwind fp, --event tracepoint and software */
	bool off;    /* --mode offcpu and wall */
	bool wake;   /* --mode offwake and wakeup */
	bool dwarf;  /* --unwind dwarf */
	bool kernel; /* --unwind kernel (else the default falls back to fp) */
	bool uprobe; /* --event uprobe, uretprobe, usdt */
};

static struct works works_of(const struct probe_result *res)
{
	struct works w = {.rec = usable(res, PROBE_NEED_RECORD)};

	w.off = w.rec && usable(res, PROBE_NEED_OFFCPU);
	w.wake = w.off && usable(res, PROBE_NEED_OFFWAKE);
	w.dwarf = w.rec && usable(res, PROBE_NEED_DWARF);
	w.kernel = w.dwarf && res[PROBE_HELPER_LOOP].status == PROBE_OK;
	w.uprobe = w.rec && usable(res, PROBE_NEED_UPROBE);
	return w;
}

static const char *json_bool(bool b)
{
	return b ? "true" : "false";
}

static void print_json(FILE *out, const struct probe_result *res, const struct works *w)
{
	size_t i;

	fprintf(out,
		"{\"can_record\":%s,\"modes\":{\"cpu\":%s,\"offcpu\":%s,\"wall\":%s,"
		"\"offwake\":%s,\"wakeup\":%s,\"unwind_fp\":%s,\"unwind_dwarf\":%s,"
		"\"unwind_kernel\":%s,\"event_tracepoint\":%s,\"event_software\":%s,"
		"\"event_uprobe\":%s,\"event_usdt\":%s},\"probes\":[",
		json_bool(w->rec), json_bool(w->rec), json_bool(w->off), json_bool(w->off),
		json_bool(w->wake), json_bool(w->wake), json_bool(w->rec), json_bool(w->dwarf),
		json_bool(w->kernel), json_bool(w->rec), json_bool(w->rec), json_bool(w->uprobe),
		json_bool(w->uprobe));
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

static void print_table(FILE *out, const struct probe_result *res, const struct works *w)
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
	if (!w->rec) {
		fprintf(out, "record: cannot work here; missing:");
		for (i = 0; i < PROBE_NR; i++) {
			if ((res[i].need & PROBE_NEED_RECORD) && res[i].status == PROBE_MISSING)
				fprintf(out, " %s;", res[i].name);
		}
		fprintf(out, " see the hints above\n");
		return;
	}
	/* every mode, unwinder and event kind, each line what works and why not the rest */
	fprintf(out, "record: works: --mode cpu%s (sampling the cpu-clock event)\n",
		!w->off	   ? " only (no offcpu, wall, offwake or wakeup: see tp sched_switch and "
			     "tp sched_wakeup above)"
		: !w->wake ? ", offcpu and wall (no offwake or wakeup: see tp sched_waking above)"
			   : ", offcpu, wall, offwake and wakeup");
	fprintf(out, "record: works: --unwind %s\n",
		w->kernel  ? "kernel, dwarf and fp"
		: w->dwarf ? "dwarf and fp (no kernel, the default: see helper loop above; it "
			     "falls back to fp)"
			   : "fp only (no kernel or dwarf: see the helpers above)");
	fprintf(out, "record: works: --event tracepoint, page-faults, context-switches%s\n",
		w->uprobe ? ", cpu-migrations, uprobe, uretprobe and usdt"
			  : " and cpu-migrations (no uprobe, uretprobe or usdt: see prog kprobe "
			    "and event uprobe above)");
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
	struct works w;
	bool json = false;
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
	w = works_of(res);
	if (json)
		print_json(stdout, res, &w);
	else
		print_table(stdout, res, &w);
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("cannot write to standard output: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	return w.rec ? EXIT_OK : EXIT_ERROR;
}
