/* SPDX-License-Identifier: MIT */
/* profiler: the subcommands of the scorch binary. */
#ifndef SCORCH_CMDS_H
#define SCORCH_CMDS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Exit codes of every subcommand (documented in --help and the README).
 */
enum scorch_exit {
	EXIT_OK = 0,      /* success */
	EXIT_ERROR = 1,   /* failure: nothing or nothing trustworthy was written */
	EXIT_USAGE = 2,   /* bad command line */
	EXIT_PARTIAL = 3, /* output written, but more than 5 % of samples were lost */
	EXIT_COMMAND = 4, /* record: output written, but the -- command failed */
};

/* Each takes argv with argv[0] the subcommand name and returns an exit code. */
int cmd_record(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list_events(int argc, char **argv);
int cmd_top(int argc, char **argv);

/*
 * Where the symbolizer keeps decompressed debug sections for the next runs
 * (symbolizer_opts.cache_dir): $SCORCH_CACHE_DIR, else SCORCH_CACHE_DIR_DEFAULT; NULL
 * when the variable is set empty (no cache).
 */
#define SCORCH_CACHE_DIR_DEFAULT "/var/cache/scorch"
const char *scorch__cache_dir(void);

/* The version line and compiled-in features, for --version. */
void scorch__print_version(void);

/* ---- the commands that record: what is sampled, and how ---- */

#define DEFAULT_FREQ 99
/* --max-overhead: a share of the machine no user notices; at -F 99 scorch costs well
 * under 1 %. On a VM whose timer interrupts cost a sampled thread 23 us each, -F 100000
 * is held near 1 kHz per CPU (bench/governor-bench.sh) */
#define DEFAULT_MAX_OVERHEAD 5.0

#define MAX_TARGETS 4096

/*
 * -p/-t's "ID[,ID...]" (@what: "PID" or "TID", for messages) appended to *@ids (*@nr of
 * them, room for *@cap; grown with array__grow()). 0; -EINVAL (an empty or bad field)
 * or -E2BIG (more than MAX_TARGETS), logged; -ENOMEM.
 */
int scorch__parse_ids(const char *arg, const char *what, pid_t **ids, size_t *nr, size_t *cap);

/*
 * What is sampled, the options record and top share: -p, -t, -a, -d, -F, --max-overhead,
 * -U, -K, -I and --mode, as a getopt_long table ended by a zero entry (cli__options());
 * the long-only ones' values from TARGET_OPT_BASE. A command's optstring holds the short
 * ones ("p:t:ad:F:UKI").
 */
#define TARGET_OPT_BASE 0x4400
enum { OPT_MODE = TARGET_OPT_BASE, OPT_MAX_OVERHEAD };
extern const struct option scorch_target_options[];

/* The --mode values a command takes (target_parse.modes). */
enum {
	TARGET_MODE_CPU = 1 << 0,
	TARGET_MODE_OFFCPU = 1 << 1,
	TARGET_MODE_OFFWAKE = 1 << 2, /* offwake and wakeup */
	TARGET_MODE_WALL = 1 << 3,
	TARGET_MODE_CHAIN = 1 << 4,
};

struct target_parse {
	unsigned int modes;	   /* TARGET_MODE_* the command takes */
	bool mode_given;	   /* --mode was given */
	size_t cap_pids, cap_tids; /* room in record_opts.pids and .tids */
};

/*
 * Sets @o's field for getopt_long()'s @c (optarg its value): 0; -ENOENT when @c is not
 * one of these options; -EINVAL (a bad value, logged with a hint); -ENOMEM.
 */
struct record_opts;
int target_parse__opt(struct target_parse *tp, struct record_opts *o, int c);
/* Once all are parsed: the ones that exclude each other (-a beside other targets, -U
 * beside -K). 0, or -EINVAL (logged with a hint). */
int target_parse__check(const struct record_opts *o);

/* The unwinder --unwind auto means for @o's mode and options (-K); any other as given. */
enum unwind_mode scorch__resolve_unwind(const struct record_opts *o);

#endif /* SCORCH_CMDS_H */
