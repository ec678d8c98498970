// SPDX-License-Identifier: MIT
/* profiler: `scorch top`: a live view of the hottest functions, on a terminal or as text. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "common.h"
#include "cmds.h"
#include "engine.h"
#include "profile.h" /* SCORCH_DEF_USER_DEPTH */
#include "flamegraph.h"
#include "symbolize.h"
#include "top.h"

#define DEFAULT_REFRESH	  1.0
#define DEFAULT_HALF_LIFE 2.0
#define DEFAULT_ROWS	  20
#define MAX_ROWS	  1000
/* messages logged while the screen is up, printed when it is gone */
#define LOG_KEEP 32
#define LOG_LEN	 256
#define COMM_W	 15 /* TASK_COMM_LEN - 1 */

enum {
	OPT_REFRESH = 256,
	OPT_HALF_LIFE,
	OPT_SORT,
};

static const struct option top_options[] = {
	{"refresh", required_argument, NULL, OPT_REFRESH},
	{"half-life", required_argument, NULL, OPT_HALF_LIFE},
	{"sort", required_argument, NULL, OPT_SORT},
	{"rows", required_argument, NULL, 'n'},
	{"batch", no_argument, NULL, 'b'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static const char *const view_names[] = {"self", "total", "stacks"};
static const char *const view_titles[] = {"functions by self share", "functions by total share",
					  "whole stacks"};

static void top_usage(FILE *out)
{
	fprintf(out,
		"usage: scorch top [-p PID | -t TID | -a] [--mode cpu|offcpu|wall] [-F HZ]\n"
		"                  [-d SECONDS] [--refresh SECONDS] [options]\n"
		"\n"
		"A live view of where the CPU goes, from the counts scorch keeps in the kernel:\n"
		"every refresh the counts are taken out of the BPF maps, named as record names\n"
		"them (Python and JIT frames included) and shown as the hottest functions by\n"
		"self share (the samples they are the leaf of) or total share (the samples\n"
		"they are in), each with its thread's name (comm), or as the hottest whole\n"
		"stacks.\n"
		"Shares are exponentially decayed: a count from t seconds ago weighs\n"
		"2^(-t/half-life) (--half-life 0: each refresh's interval alone).\n"
		"\n"
		"On a terminal: a full-screen view; keys: s self, t total, k stacks (Tab\n"
		"cycles), p or space pause (what is counted meanwhile is not shown), q quit.\n"
		"Otherwise (standard output not a terminal, or -b): per refresh a header line\n"
		"\"# key=value ...\", the rows \"SELF<tab>TOTAL<tab>COMM<tab>FUNCTION\" (shares "
		"in\n"
		"percent; stacks: the stack's share twice, then \"root;...;leaf\"), then an empty\n"
		"line.\n"
		"\n"
		"targets (default: the whole system):\n"
		"  -p, --pid PID[,PID...]     processes (all their threads)\n"
		"  -t, --tid TID[,TID...]     threads\n"
		"  -a, --all                  every process on the system\n"
		"\n"
		"options:\n"
		"      --mode MODE            cpu: on-CPU samples (default); offcpu: time\n"
		"                             blocked, by where threads blocked; wall: both,\n"
		"                             in microseconds\n"
		"  -F, --frequency HZ         samples per second per CPU (default %d)\n"
		"  -d, --duration SECONDS     stop after SECONDS; default: until q, Ctrl-C or\n"
		"                             the targets exit\n"
		"      --refresh SECONDS      take the counts and redraw every SECONDS (default\n"
		"                             %g, 0.1 to 3600)\n"
		"      --half-life SECONDS    the decay of the shares (default %g; 0: no decay,\n"
		"                             each refresh shows its interval alone)\n"
		"      --sort VIEW            self, total or stacks (default: self; total\n"
		"                             with --mode offcpu)\n"
		"  -n, --rows N               rows per refresh as text (default %d); on a\n"
		"                             terminal as many as fit, at most N when given\n"
		"  -b, --batch                text even on a terminal\n"
		"      --max-overhead PCT     what scorch may cost the machine, in %% of all\n"
		"                             its CPUs (default %g; 0: no limit): over it the\n"
		"                             rate is lowered, and the header says so\n"
		"  -U, --user-only            user stacks only\n"
		"  -K, --kernel-only          kernel stacks only\n"
		"  -I, --include-idle         count the idle task (system-wide, cpu mode)\n"
		"  -v, --verbose              debug messages, and the summary at the end\n"
		"  -h, --help                 this help\n"
		"names:\n",
		DEFAULT_FREQ, DEFAULT_REFRESH, DEFAULT_HALF_LIFE, DEFAULT_ROWS,
		DEFAULT_MAX_OVERHEAD);
	symbolizer__print_options_help(out);
	fprintf(out,
		"\n"
		"exit status: 0 success (q, Ctrl-C, -d or the targets' exit ended it), 1 error,\n"
		"2 usage error\n"
		"\n"
		"examples:\n"
		"  sudo scorch top                          # the whole system\n"
		"  sudo scorch top -p 1234 -F 499           # a process, finer\n"
		"  sudo scorch top --mode offcpu -p 1234    # where its threads block\n"
		"  sudo scorch top -p 1234 -d 10 | tee top.txt  # a refresh a second, as text\n");
}

/* What top's command line asks beside the recording's options. */
struct top_cli {
	double refresh, half_life;
	enum top_view view;
	bool view_given;
	long rows;
	bool rows_given;
	bool batch;
	struct target_parse target; /* -p, -t, -a, --mode... */
};

/* One of top's own, or -v. 0, -ENOENT (not one of them), -EINVAL (logged). */
static int parse_top_opt(struct top_cli *c, struct record_opts *o, int ch)
{
	size_t i;

	switch (ch) {
	case OPT_REFRESH:
		if (parse__double(optarg, 0.1, 3600, &c->refresh)) {
			pr_err("invalid --refresh '%s'\n", optarg);
			pr_hint("give seconds between 0.1 and 3600, e.g. --refresh 2\n");
			return -EINVAL;
		}
		return 0;
	case OPT_HALF_LIFE:
		if (parse__double(optarg, 0, 3600, &c->half_life)) {
			pr_err("invalid --half-life '%s'\n", optarg);
			pr_hint("give seconds between 0 (no decay) and 3600, e.g. --half-life 5\n");
			return -EINVAL;
		}
		return 0;
	case OPT_SORT:
		for (i = 0; i < ARRAY_SIZE(view_names); i++) {
			if (!strcmp(optarg, view_names[i])) {
				c->view = (enum top_view)i;
				c->view_given = true;
				return 0;
			}
		}
		pr_err("invalid --sort '%s'\n", optarg);
		pr_hint("use --sort self, total or stacks\n");
		return -EINVAL;
	case 'n':
		if (parse__long(optarg, 1, MAX_ROWS, &c->rows)) {
			pr_err("invalid --rows '%s'\n", optarg);
			pr_hint("give a number of rows from 1 to %d, e.g. -n 30\n", MAX_ROWS);
			return -EINVAL;
		}
		c->rows_given = true;
		return 0;
	case 'b':
		c->batch = true;
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	default:
		return -ENOENT;
	}
}

/* The options that exclude each other; the recording's defaults for the rest. */
static int check_opts(struct record_opts *o, struct top_cli *c)
{
	if (target_parse__check(o))
		return -EINVAL;
	if (o->include_idle && (o->mode != MODE_CPU || o->nr_pids || o->nr_tids)) {
		pr_err("-I/--include-idle counts the idle task: system-wide and in cpu mode "
		       "only\n");
		pr_hint("drop -I, or the targets and --mode\n");
		return -EINVAL;
	}
	if (!o->nr_pids && !o->nr_tids)
		o->all = true;
	if (!c->view_given)
		c->view = o->mode == MODE_OFFCPU ? TOP_TOTAL : TOP_SELF;
	o->interval = c->refresh;
	o->unwind_auto = true;
	o->unwind = scorch__resolve_unwind(o);
	return 0;
}

static int top_parse(int argc, char **argv, struct record_opts *o, struct top_cli *c, bool *help)
{
	const struct option *const tables[] = {scorch_target_options, top_options,
					       symbolizer_name_options};
	struct option *long_opts;
	int ch, err = 0;

	long_opts = cli__options(tables, ARRAY_SIZE(tables));
	if (!long_opts)
		return -ENOMEM;
	o->names.sz = sizeof(o->names);
	o->freq = DEFAULT_FREQ;
	o->max_overhead = DEFAULT_MAX_OVERHEAD;
	o->stack_size = DEFAULT_STACK_SIZE;
	o->max_depth = SCORCH_DEF_USER_DEPTH;
	o->max_block_us = UINT64_MAX / 1000;
	o->state_mask = 3;
	o->named = true;
	flamegraph_opts__init(&o->fg);
	c->target.modes = TARGET_MODE_CPU | TARGET_MODE_OFFCPU | TARGET_MODE_WALL;
	c->refresh = DEFAULT_REFRESH;
	c->half_life = DEFAULT_HALF_LIFE;
	c->rows = DEFAULT_ROWS;
	optind = 1;
	opterr = 0;
	while (!err &&
	       (ch = getopt_long(argc, argv, ":p:t:aF:d:n:bUKIvh", long_opts, NULL)) != -1) {
		if (ch == 'h') {
			*help = true;
			break;
		}
		if (ch == '?' || ch == ':') {
			err = cli__bad_option("top", ch, argv);
			break;
		}
		err = target_parse__opt(&c->target, o, ch);
		if (err == -ENOENT)
			err = parse_top_opt(c, o, ch);
		if (err == -ENOENT)
			err = symbolizer_opts__set_getopt(&o->names, ch);
		if (err == -ENOENT)
			err = cli__bad_option("top", '?', argv);
	}
	if (!err && !*help && optind < argc) {
		pr_err("unexpected argument '%s'\n", argv[optind]);
		pr_hint("scorch top follows running processes (-p, -t or -a), it runs no "
			"command\n");
		err = -EINVAL;
	}
	if (!err && !*help)
		err = check_opts(o, c);
	free(long_opts);
	return err == -ENOMEM ? err : err ? -EINVAL : 0;
}

/* ---- the live view's state, shared by the recorder's thread and the screen's ---- */

/* The terminal: raw keys, the alternate screen, its size. */
struct term {
	int in, out; /* standard input (-1: no keys: not a terminal) and output */
	struct termios saved;
	volatile sig_atomic_t raw, screen; /* what to undo; read by the fatal signals' handler */
	unsigned int rows, cols;
};

struct top {
	struct top_cli cli;
	enum record_mode mode;
	long freq;
	double max_overhead;
	char target[96]; /* the text's: "all", "pid:1234,1240", "tid:1235" */
	char what[96];	 /* the screen's: "all CPUs", "pid 1234 (split)" */
	struct recorder *rec;
	struct top_table *table;
	struct top_row *rows; /* MAX_ROWS */
	/* text */
	FILE *out;
	bool out_closed; /* the reader went away (EPIPE): stopped, no error */
	/* the screen: the UI thread draws, the recorder's adds (under lock) */
	bool screen;
	struct term term;
	pthread_t ui;
	bool ui_started;
	int wake_fd, sig_fd;
	pthread_mutex_t lock;
	struct interval_info info;
	uint64_t info_total; /* the interval's folded total: samples or microseconds */
	bool have_info, paused, quit, done;
	enum top_view view;
	char *buf; /* the frame being drawn */
	size_t len, cap;
	/* messages logged while the screen is up: the last LOG_KEEP, shown after it */
	pthread_mutex_t log_lock;
	char logs[LOG_KEEP][LOG_LEN];
	size_t nr_logs; /* ever logged */
	double last_log_at;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- text: one refresh per interval ---- */

static const char *mode_name(enum record_mode m)
{
	return m == MODE_OFFCPU ? "offcpu" : m == MODE_WALL ? "wall" : "cpu";
}

static double per_s(uint64_t n, double seconds)
{
	return seconds > 0 ? n / seconds : 0;
}

static double lost_pct(const struct interval_info *info)
{
	return info->taken ? 100.0 * info->lost / info->taken : 0;
}

/* A refresh as text lines; a reader gone (EPIPE) stops the recording. 0 or -EIO. */
static int print_text(struct top *t, const struct interval_info *info)
{
	FILE *out = t->out;
	size_t i, nr;
	int err;

	err = top_table__rows(t->table, t->cli.view, t->rows, (size_t)t->cli.rows, &nr);
	if (err)
		return err;
	errno = 0;
	fprintf(out,
		"# refresh=%u elapsed=%.2f seconds=%.2f target=%s mode=%s freq=%ld rate=%ld "
		"samples_per_s=%.1f switches_per_s=%.1f lost_pct=%.2f shares=%s half_life=%g "
		"sort=%s\n",
		info->seq, info->elapsed, info->seconds, t->target, mode_name(t->mode), t->freq,
		info->rate, per_s(info->samples, info->seconds),
		per_s(info->switches, info->seconds), lost_pct(info),
		t->cli.half_life > 0 ? "decayed" : "window", t->cli.half_life,
		view_names[t->cli.view]);
	for (i = 0; i < nr; i++)
		fprintf(out, "%.2f\t%.2f\t%s\t%s\n", t->rows[i].self, t->rows[i].total,
			t->rows[i].comm, t->rows[i].name);
	fputc('\n', out);
	if (!fflush(out) && !ferror(out))
		return 0;
	if (errno == EPIPE) {
		t->out_closed = true;
		recorder__stop(t->rec);
		return 0;
	}
	pr_err("cannot write to standard output: %s\n", strerror(errno ? errno : EIO));
	return -EIO;
}

/* ---- the terminal ---- */

#define SCREEN_ENTER "\x1b[?1049h\x1b[?25l\x1b[2J"
#define SCREEN_LEAVE "\x1b[0m\x1b[?25h\x1b[?1049l"

/* write(2) until done: a terminal may take a frame in parts. Async-signal-safe. */
static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Undoes term_enter(); safe to repeat, and async-signal-safe (on_fatal() calls it). */
static void term_leave(struct term *tm)
{
	if (tm->screen) {
		tm->screen = 0;
		write_all(tm->out, SCREEN_LEAVE, sizeof(SCREEN_LEAVE) - 1);
	}
	if (tm->raw) {
		tm->raw = 0;
		tcsetattr(tm->in, TCSAFLUSH, &tm->saved);
	}
}

static void term_size(struct term *tm)
{
	struct winsize ws;

	if (!ioctl(tm->out, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		tm->rows = ws.ws_row;
		tm->cols = ws.ws_col;
	} else {
		tm->rows = 24;
		tm->cols = 80;
	}
}

/*
 * The keys one by one, unechoed (no ICANON, ECHO; no ISIG: Ctrl-C is a key that quits,
 * Ctrl-Z is ignored, as in a stopped scorch the kernel's maps would fill), output as
 * it was (OPOST); then the alternate screen, the cursor hidden. 0 or -errno.
 */
static int term_enter(struct term *tm)
{
	struct termios raw;

	tm->out = STDOUT_FILENO;
	tm->in = isatty(STDIN_FILENO) ? STDIN_FILENO : -1;
	if (tm->in >= 0) {
		if (tcgetattr(tm->in, &tm->saved))
			return -errno;
		raw = tm->saved;
		raw.c_lflag &= ~(ICANON | ECHO | ISIG | IEXTEN);
		raw.c_iflag &= ~(IXON | ICRNL | INLCR | IGNCR);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(tm->in, TCSAFLUSH, &raw))
			return -errno;
		tm->raw = 1;
	}
	term_size(tm);
	tm->screen = 1;
	return write_all(tm->out, SCREEN_ENTER, sizeof(SCREEN_ENTER) - 1);
}

/* The screen to undo on a crash: a signal handler has no context. */
static struct term *fatal_term;

static void on_fatal(int sig)
{
	if (fatal_term)
		term_leave(fatal_term);
	/* SA_RESETHAND: the default action when the handler returns (or at the re-raise) */
	raise(sig);
}

/* The view's messages while the screen is up: log_fn_t has no context either. */
static struct top *log_top;

static void top_log(enum log_level level, const char *fmt, va_list ap)
{
	struct top *t = log_top;
	char *line;

	(void)level;
	pthread_mutex_lock(&t->log_lock);
	line = t->logs[t->nr_logs++ % LOG_KEEP];
	vsnprintf(line, LOG_LEN, fmt, ap);
	t->last_log_at = now_s();
	pthread_mutex_unlock(&t->log_lock);
}

/* ---- the screen ---- */

static int buf_add(struct top *t, const char *s, size_t n)
{
	if (array__grow((void **)&t->buf, &t->cap, t->len + n + 1, 1))
		return -ENOMEM;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	return 0;
}

__attribute__((format(printf, 2, 3))) static int buf_printf(struct top *t, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return buf_add(t, tmp, MIN((size_t)n, sizeof(tmp) - 1));
}

/*
 * The length of the UTF-8 character at @s (@n bytes left) that may be shown: 1-4, or 0
 * when it is malformed or a control character (C0, DEL, C1: a terminal would obey
 * them, and names come from files other users control).
 */
static size_t char_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (*s < 0x80)
		return *s >= 0x20 && *s != 0x7f;
	if (*s >= 0xc2 && *s <= 0xdf)
		len = 2, cp = *s & 0x1f;
	else if (*s >= 0xe0 && *s <= 0xef)
		len = 3, cp = *s & 0x0f;
	else if (*s >= 0xf0 && *s <= 0xf4)
		len = 4, cp = *s & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, past U+10FFFF, C1 controls */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp < 0xa0))
		return 0;
	return len;
}

/* The characters of @s as shown (each one column; what may not be shown is one '?'). */
static size_t name_cols(const char *s)
{
	size_t n = strlen(s), i = 0, cols = 0, l;

	while (i < n) {
		l = char_len((const unsigned char *)s + i, n - i);
		i += l ? l : 1;
		cols++;
	}
	return cols;
}

/* Up to @max characters of @s[0..n) as shown; *@cols: how many. 0 or -ENOMEM. */
static int put_chars(struct top *t, const char *s, size_t n, size_t max, size_t *cols)
{
	size_t i = 0, l;
	int err = 0;

	for (*cols = 0; !err && i < n && *cols < max; (*cols)++) {
		l = char_len((const unsigned char *)s + i, n - i);
		err = l ? buf_add(t, s + i, l) : buf_add(t, "?", 1);
		i += l ? l : 1;
	}
	return err;
}

/*
 * @s in @cols columns at most: cut at the end, or with @left at the start, where a
 * frame begins if one does in what fits (a stack's leaf is what matters); "..." marks
 * the cut. Padded with spaces to @pad columns.
 */
static int put_name(struct top *t, const char *s, size_t cols, size_t pad, bool left)
{
	size_t n = strlen(s), total = name_cols(s), i = 0, c, l, w;
	const char *semi;
	int err;

	if (total > cols && cols > 3 && left) {
		for (c = 0; c < total - (cols - 3); c++) {
			l = char_len((const unsigned char *)s + i, n - i);
			i += l ? l : 1;
		}
		semi = strchr(s + i, ';');
		if (semi && semi[1])
			i = (size_t)(semi - s);
		err = buf_add(t, "...", 3) ?: put_chars(t, s + i, n - i, cols - 3, &w);
		w += 3;
	} else if (total > cols && cols > 3) {
		err = put_chars(t, s, n, cols - 3, &w) ?: buf_add(t, "...", 3);
		w += 3;
	} else {
		err = put_chars(t, s, n, cols, &w);
	}
	for (; !err && w < pad; w++)
		err = buf_add(t, " ", 1);
	return err;
}

/* Row @row (1-based) from its first column; the rest of it cleared by line_end(). */
static int line_at(struct top *t, unsigned int row)
{
	return buf_printf(t, "\x1b[%u;1H", row);
}

static int line_end(struct top *t)
{
	return buf_add(t, "\x1b[0m\x1b[K", 7);
}

/* A line of ASCII @s, cut at the screen's width. */
static int put_line(struct top *t, unsigned int row, const char *s, bool inverse)
{
	size_t w = t->term.cols ? t->term.cols - 1 : 0;
	int err = line_at(t, row);

	if (!err && inverse)
		err = buf_add(t, "\x1b[7m", 4);
	if (!err)
		err = put_name(t, s, w, inverse ? w : 0, false);
	return err ?: line_end(t);
}

/* The header's two lines: target, mode and rates; the shares and the state. */
static int draw_header(struct top *t)
{
	const struct interval_info *in = &t->info;
	char l1[320], l2[320], rate[128] = "", flow[128];
	size_t n;
	int err;

	if (t->mode != MODE_OFFCPU) {
		long hz = t->have_info && in->rate ? in->rate : t->freq;

		n = (size_t)snprintf(rate, sizeof(rate), " at %ld Hz", hz);
		if (hz < t->freq && n < sizeof(rate))
			snprintf(rate + n, sizeof(rate) - n,
				 " (-F %ld lowered to hold --max-overhead %g%%)", t->freq,
				 t->max_overhead);
	}
	if (!t->have_info)
		snprintf(flow, sizeof(flow), "waiting for the first refresh (%g s)",
			 t->cli.refresh);
	else if (t->mode == MODE_CPU)
		snprintf(flow, sizeof(flow), "%.0f samples/s, %.1f%% lost",
			 per_s(in->samples, in->seconds), lost_pct(in));
	else if (t->mode == MODE_OFFCPU)
		snprintf(flow, sizeof(flow), "%.0f switches/s, %.2f s off CPU/s, %.1f%% lost",
			 per_s(in->switches, in->seconds), per_s(t->info_total, in->seconds) / 1e6,
			 lost_pct(in));
	else
		snprintf(flow, sizeof(flow), "%.0f samples/s, %.0f switches/s, %.1f%% lost",
			 per_s(in->samples, in->seconds), per_s(in->switches, in->seconds),
			 lost_pct(in));
	snprintf(l1, sizeof(l1), "scorch top - %s - %s%s - %s", t->what, mode_name(t->mode), rate,
		 flow);
	n = (size_t)snprintf(l2, sizeof(l2), "shares ");
	if (t->cli.half_life > 0)
		n += (size_t)snprintf(l2 + n, sizeof(l2) - n, "decayed, half-life %g s",
				      t->cli.half_life);
	else
		n += (size_t)snprintf(l2 + n, sizeof(l2) - n, "of the last %g s", t->cli.refresh);
	if (n < sizeof(l2))
		n += (size_t)snprintf(l2 + n, sizeof(l2) - n, " - %s - refresh %g s",
				      view_titles[t->view], t->cli.refresh);
	if (t->have_info && n < sizeof(l2))
		n += (size_t)snprintf(l2 + n, sizeof(l2) - n, " - %.0f s", in->elapsed);
	if (t->have_info && in->nr_cpus && n < sizeof(l2)) /* off CPU: no CPU's event */
		n += (size_t)snprintf(l2 + n, sizeof(l2) - n, ", %d CPUs", in->nr_cpus);
	if (t->paused && n < sizeof(l2))
		snprintf(l2 + n, sizeof(l2) - n, " - PAUSED");
	err = put_line(t, 1, l1, false);
	if (!err)
		err = put_line(t, 2, l2, false);
	return err;
}

/* The rows of the view, from screen row @first to @last. */
static int draw_rows(struct top *t, unsigned int first, unsigned int last)
{
	size_t w = t->term.cols > 1 ? t->term.cols - 1 : 0,
	       max = last >= first ? last - first + 1 : 0;
	size_t i, nr = 0, fixed = t->view == TOP_STACKS ? 8 : 16;
	bool stacks = t->view == TOP_STACKS;
	char num[64];
	int err;

	if (t->cli.rows_given)
		max = MIN(max, (size_t)t->cli.rows);
	err = put_line(t, first - 1,
		       stacks ? "  SHARE  COMM             STACK (root;...;leaf)"
			      : "   SELF   TOTAL  COMM             FUNCTION",
		       true);
	if (!err)
		err = top_table__rows(t->table, t->view, t->rows, MIN(max, MAX_ROWS), &nr);
	for (i = 0; !err && i < nr; i++) {
		const struct top_row *r = &t->rows[i];

		if (stacks)
			snprintf(num, sizeof(num), "%6.1f%%  ", r->total);
		else
			snprintf(num, sizeof(num), "%6.1f%% %6.1f%%  ", r->self, r->total);
		err = line_at(t, first + (unsigned int)i);
		if (!err)
			err = put_name(t, num, w, 0, false);
		if (!err && w > fixed)
			err = put_name(t, r->comm, MIN(COMM_W, w - fixed), COMM_W, false);
		if (!err && w > fixed + COMM_W + 2)
			err = buf_add(t, "  ", 2)
				      ?: put_name(t, r->name, w - fixed - COMM_W - 2, 0, stacks);
		if (!err)
			err = line_end(t);
	}
	/* what is left below the rows */
	for (; !err && first + i <= last; i++)
		err = line_at(t, first + (unsigned int)i) ?: line_end(t);
	return err;
}

/* The last line: the keys, or a message logged in the last 10 s. */
static int draw_status(struct top *t)
{
	char msg[LOG_LEN] = "";
	size_t k;

	pthread_mutex_lock(&t->log_lock);
	if (t->nr_logs && now_s() - t->last_log_at < 10) {
		snprintf(msg, sizeof(msg), "%s", t->logs[(t->nr_logs - 1) % LOG_KEEP]);
		k = strcspn(msg, "\n");
		msg[k] = '\0';
	}
	pthread_mutex_unlock(&t->log_lock);
	return put_line(t, t->term.rows,
			msg[0] ? msg : "s self  t total  k stacks  p pause  q quit", !msg[0]);
}

/* One frame, written at once. Called on the UI thread. */
static void draw(struct top *t)
{
	int err;

	pthread_mutex_lock(&t->lock);
	t->len = 0;
	err = draw_header(t);
	if (!err)
		err = line_at(t, 3) ?: line_end(t);
	if (!err && t->term.rows > 5)
		err = draw_rows(t, 5, t->term.rows - 1);
	if (!err)
		err = draw_status(t);
	pthread_mutex_unlock(&t->lock);
	if (!err)
		write_all(t->term.out, t->buf, t->len);
}

/* A key; returns true when it quits. */
static bool on_key(struct top *t, unsigned char c, bool *redraw)
{
	pthread_mutex_lock(&t->lock);
	switch (c) {
	case 'q':
	case 'Q':
	case 3: /* Ctrl-C (no ISIG) */
		pthread_mutex_unlock(&t->lock);
		return true;
	case 's':
		t->view = TOP_SELF;
		break;
	case 't':
		t->view = TOP_TOTAL;
		break;
	case 'k':
		t->view = TOP_STACKS;
		break;
	case '\t':
		t->view = (t->view + 1) % ARRAY_SIZE(view_names);
		break;
	case 'p':
	case ' ':
		t->paused = !t->paused;
		break;
	default:
		pthread_mutex_unlock(&t->lock);
		return false;
	}
	pthread_mutex_unlock(&t->lock);
	*redraw = true;
	return false;
}

/* The keys read; an escape sequence (arrows, function keys) is skipped whole. */
static bool read_keys(struct top *t, bool *redraw)
{
	unsigned char keys[64];
	ssize_t n = read(t->term.in, keys, sizeof(keys)), i;

	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		return true; /* the terminal is gone */
	for (i = 0; i < n && keys[i] != 0x1b; i++)
		if (on_key(t, keys[i], redraw))
			return true;
	return false;
}

/*
 * The UI thread: draws at each refresh, on a key and on SIGWINCH; q, Ctrl-C, SIGHUP,
 * SIGQUIT or the terminal's end ask the recording to stop and leave the screen at once
 * (the recorder's thread ends it meanwhile).
 */
static void *ui_run(void *arg)
{
	struct top *t = arg;
	struct pollfd pfds[3] = {
		{.fd = t->wake_fd, .events = POLLIN},
		{.fd = t->sig_fd, .events = POLLIN},
		{.fd = t->term.in, .events = POLLIN},
	};
	struct signalfd_siginfo si;
	bool quit = false, redraw, done;
	uint64_t v;

	draw(t);
	while (!quit) {
		redraw = false;
		if (poll(pfds, t->term.in >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
			break;
		if ((pfds[0].revents & POLLIN) && read(t->wake_fd, &v, sizeof(v)) > 0) {
			pthread_mutex_lock(&t->lock);
			done = t->done;
			redraw = !t->paused;
			pthread_mutex_unlock(&t->lock);
			if (done)
				break;
		}
		while ((pfds[1].revents & POLLIN) &&
		       read(t->sig_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGWINCH) {
				term_size(&t->term);
				redraw = true;
			} else {
				quit = true;
			}
		}
		if (t->term.in >= 0 && (pfds[2].revents & (POLLIN | POLLHUP | POLLERR)))
			quit |= read_keys(t, &redraw);
		if (!quit && redraw)
			draw(t);
	}
	pthread_mutex_lock(&t->lock);
	t->quit = true;
	pthread_mutex_unlock(&t->lock);
	recorder__stop(t->rec);
	term_leave(&t->term);
	return NULL;
}

static void wake_ui(struct top *t)
{
	uint64_t one = 1;

	if (write(t->wake_fd, &one, sizeof(one)) < 0)
		pr_debug("top: cannot wake the screen: %s\n", strerror(errno));
}

/* record_interval_fn: an interval's counts to the table, then shown. */
static int on_interval(void *ctx, const struct folded *f, const struct interval_info *info)
{
	struct top *t = ctx;
	int err = 0;

	if (!t->screen) {
		/* a last interval cut short by Ctrl-C says little: not a refresh of its own */
		if (t->out_closed || (info->last && info->seconds < t->cli.refresh / 10))
			return 0;
		err = top_table__add(t->table, f, info->seconds);
		return err ?: print_text(t, info);
	}
	pthread_mutex_lock(&t->lock);
	if (!t->paused && !t->quit) {
		err = top_table__add(t->table, f, info->seconds);
		t->info = *info;
		t->info_total = folded__total(f);
		t->have_info = true;
	}
	pthread_mutex_unlock(&t->lock);
	wake_ui(t);
	return err;
}

/*
 * The screen: SIGINT and SIGTERM for the recorder's stop thread (record blocks them),
 * SIGWINCH, SIGHUP and SIGQUIT for the UI thread, blocked in every thread from here on;
 * crashes leave the screen first. 0 or -errno (logged).
 */
static int screen_start(struct top *t)
{
	struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = (int)SA_RESETHAND};
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	sigset_t block, ui;
	size_t i;
	int err;

	sigemptyset(&ui);
	sigaddset(&ui, SIGWINCH);
	sigaddset(&ui, SIGHUP);
	sigaddset(&ui, SIGQUIT);
	block = ui;
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->sig_fd = signalfd(-1, &ui, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->wake_fd < 0 || t->sig_fd < 0) {
		err = -errno;
		pr_err("cannot set up the screen: %s\n", strerror(-err));
		return err;
	}
	err = term_enter(&t->term);
	if (err) {
		term_leave(&t->term);
		pr_err("cannot set up the terminal: %s\n", strerror(-err));
		pr_hint("scorch top -b writes text instead\n");
		return err;
	}
	fatal_term = &t->term;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(fatal); i++)
		sigaction(fatal[i], &sa, NULL);
	log_top = t;
	log__set_fn(top_log);
	err = -pthread_create(&t->ui, NULL, ui_run, t);
	if (err) {
		log__set_fn(NULL);
		term_leave(&t->term);
		pr_err("cannot start the screen's thread: %s\n", strerror(-err));
		return err;
	}
	t->ui_started = true;
	return 0;
}

/* The screen left (if the UI thread has not yet), then what was logged meanwhile. */
static void screen_stop(struct top *t)
{
	size_t i, first;

	if (t->ui_started) {
		pthread_mutex_lock(&t->lock);
		t->done = true;
		pthread_mutex_unlock(&t->lock);
		wake_ui(t);
		pthread_join(t->ui, NULL);
		t->ui_started = false;
	}
	term_leave(&t->term);
	fatal_term = NULL;
	log__set_fn(NULL);
	log_top = NULL;
	first = t->nr_logs > LOG_KEEP ? t->nr_logs - LOG_KEEP : 0;
	if (first)
		fprintf(stderr, "scorch: top: %zu earlier messages not kept\n", first);
	for (i = first; i < t->nr_logs; i++)
		fputs(t->logs[i % LOG_KEEP], stderr);
}

/* The target as the text header and the screen name it. */
static void describe_target(struct top *t, const struct record_opts *o)
{
	const pid_t *ids = o->nr_pids ? o->pids : o->tids;
	size_t nr = o->nr_pids ? o->nr_pids : o->nr_tids, i, n, m;
	char path[64], *comm = NULL;
	size_t len;

	if (o->all) {
		snprintf(t->target, sizeof(t->target), "all");
		snprintf(t->what, sizeof(t->what), "all CPUs");
		return;
	}
	n = (size_t)snprintf(t->target, sizeof(t->target), "%s:", o->nr_pids ? "pid" : "tid");
	m = (size_t)snprintf(t->what, sizeof(t->what), "%s ", o->nr_pids ? "pid" : "tid");
	for (i = 0; i < nr && n < sizeof(t->target) && m < sizeof(t->what); i++) {
		n += (size_t)snprintf(t->target + n, sizeof(t->target) - n, "%s%d", i ? "," : "",
				      ids[i]);
		m += (size_t)snprintf(t->what + m, sizeof(t->what) - m, "%s%d", i ? "," : "",
				      ids[i]);
	}
	if (nr != 1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", ids[0]);
	if (file__read_bounded(AT_FDCWD, path, 64, &comm, &len))
		return;
	comm[strcspn(comm, "\n")] = '\0';
	if (m < sizeof(t->what))
		snprintf(t->what + m, sizeof(t->what) - m, " (%s)", comm);
	free(comm);
}

int cmd_top(int argc, char **argv)
{
	struct record_opts o = {};
	struct top_table_opts topts = {.sz = sizeof(topts)};
	struct top t = {.wake_fd = -1, .sig_fd = -1, .term = {.in = -1, .out = STDOUT_FILENO}};
	bool help = false;
	int err;

	pthread_mutex_init(&t.lock, NULL);
	pthread_mutex_init(&t.log_lock, NULL);
	log__set_command("top");
	err = top_parse(argc, argv, &o, &t.cli, &help);
	if (err || help) {
		if (help)
			top_usage(stdout);
		record_opts__free(&o);
		log__set_command(NULL);
		return help ? EXIT_OK : err == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
	}
	o.names.cache_dir = scorch__cache_dir();
	o.quiet = !o.verbose;
	o.on_interval = on_interval;
	o.on_interval_ctx = &t;
	t.mode = o.mode;
	t.freq = o.freq;
	t.max_overhead = o.max_overhead;
	t.view = t.cli.view;
	t.out = stdout;
	t.screen = !t.cli.batch && isatty(STDOUT_FILENO);
	describe_target(&t, &o);
	topts.half_life = t.cli.half_life;
	t.table = top_table__new(&topts);
	t.rows = calloc(MAX_ROWS, sizeof(*t.rows));
	err = t.table && t.rows ? recorder__new(&o, &t.rec) : -ENOMEM;
	if (!err && t.screen)
		err = screen_start(&t);
	else if (!err)
		signal(SIGPIPE, SIG_IGN); /* a reader gone is EPIPE: a stop, not a death */
	if (!err)
		err = recorder__run(t.rec);
	if (t.screen)
		screen_stop(&t);
	if (err == -ENOMEM)
		pr_err("out of memory\n");
	recorder__free(t.rec);
	record_opts__free(&o);
	top_table__free(t.table);
	free(t.rows);
	free(t.buf);
	if (t.wake_fd >= 0)
		close(t.wake_fd);
	if (t.sig_fd >= 0)
		close(t.sig_fd);
	pthread_mutex_destroy(&t.lock);
	pthread_mutex_destroy(&t.log_lock);
	log__set_command(NULL);
	return err ? EXIT_ERROR : EXIT_OK;
}
