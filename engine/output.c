// SPDX-License-Identifier: MIT
/* engine: the output formats every command chooses by name (one rule), and the outputs of
 * a recording (-o, repeatable): numbered files per --interval (one HTML page with a
 * timeline), and the pprof/speedscope profile built next to the folded stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common.h"
#include "export.h"
#include "flamegraph.h"
#include "engine.h"
#include "output.h"
#include "symbolize.h"

/* ---- formats ---- */

static int write_folded(const struct output_data *d, FILE *fp)
{
	return folded__write(d->folded, fp);
}

static int write_svg(const struct output_data *d, FILE *fp)
{
	struct flamegraph *fg = flamegraph__new(d->fg);
	int err;

	if (!fg)
		return -ENOMEM;
	err = flamegraph__add_folded(fg, d->folded);
	if (!err)
		err = flamegraph__write_svg(fg, fp);
	flamegraph__free(fg);
	if (err == -ENODATA) {
		pr_warn("no samples: the SVG says \"No stack counts found\"\n");
		err = 0;
	}
	return err;
}

/*
 * One page of the whole recording: with --interval, @acc (owned by the output)
 * holds every interval so far, each its own slice of the timeline, and the page
 * is written again at each interval. Without, @acc is NULL. d->page: the caller's
 * graph, its intervals set (report), written as it is.
 */
static int write_html(const struct output_data *d, FILE *fp, struct flamegraph **acc,
		      unsigned int seq, double seconds)
{
	struct flamegraph_html_opts ho = {.sz = sizeof(ho), .interval = seconds};
	struct flamegraph *fg = acc ? *acc : NULL;
	int err;

	if (d->page) {
		err = flamegraph__write_html(d->page, &ho, fp);
		if (err == -ENODATA) {
			pr_warn("no samples: the page says \"No stack counts found\"\n");
			err = 0;
		}
		return err;
	}

	if (!fg) {
		fg = flamegraph__new(d->page_fg ? d->page_fg : d->fg);
		if (!fg)
			return -ENOMEM;
		if (acc)
			*acc = fg;
	}
	err = acc ? flamegraph__set_interval(fg, seq - 1) : 0;
	if (err == -ERANGE) {
		pr_err("%s: more than %d intervals: the page's timeline holds no more\n", d->name,
		       FG_HTML_MAX_INTERVALS);
		pr_hint("use a longer --interval\n");
	}
	if (!err)
		err = flamegraph__add_folded(fg, d->folded);
	if (!err)
		err = flamegraph__write_html(fg, &ho, fp);
	if (!acc)
		flamegraph__free(fg);
	if (err == -ENODATA) {
		pr_warn("no samples: the page says \"No stack counts found\"\n");
		err = 0;
	}
	return err;
}

static int write_pprof(const struct output_data *d, FILE *fp)
{
	return profile__write_pprof(d->prof, fp);
}

static int write_speedscope(const struct output_data *d, FILE *fp)
{
	return profile__write_speedscope(d->prof, fp, d->desc);
}

/*
 * The table of formats (engine.h has the rule): a name for --format, the file name
 * endings that choose it (checked in table order, case-insensitive; a longer ending
 * first), what it is written from. A capture has no writer here: the recorder writes it.
 */
static const char *const exts_folded[] = {".folded", ".collapsed", ".txt", NULL};
static const char *const exts_svg[] = {".svg", NULL};
static const char *const exts_html[] = {".html", ".htm", NULL};
static const char *const exts_pprof[] = {".pb.gz", ".pb", NULL};
static const char *const exts_speedscope[] = {".json", NULL};
static const char *const exts_capture[] = {".scorch", NULL};

static const struct output_format formats[FMT_NR] = {
	[FMT_FOLDED] = {.name = "folded", .exts = exts_folded, .write = write_folded},
	[FMT_SVG] = {.name = "svg", .exts = exts_svg, .write = write_svg},
	[FMT_HTML] = {.name = "html", .exts = exts_html, .whole = true}, /* write_html() */
	[FMT_PPROF] = {.name = "pprof",
		       .exts = exts_pprof,
		       .needs_profile = true,
		       .write = write_pprof},
	[FMT_SPEEDSCOPE] = {.name = "speedscope",
			    .exts = exts_speedscope,
			    .needs_profile = true,
			    .write = write_speedscope},
	[FMT_CAPTURE] = {.name = "capture", .exts = exts_capture},
};

/* Endings of formats no command writes, after the table's (".pb.gz" is pprof's). */
static const char *const exts_never[] = {".png",  ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif",
					 ".tiff", ".pdf", ".ps",   ".eps", ".gz",   ".zst", ".xz",
					 ".bz2",  ".lz4", ".zip",  ".7z",  NULL};

static bool ends_with(const char *s, const char *ext)
{
	size_t n = strlen(s), e = strlen(ext);

	return n > e && !strcasecmp(s + n - e, ext) && s[n - e - 1] != '/';
}

/*
 * The format @path's ending names (FMT_NR: none) and that ending's length; *@never: the
 * ending of a format no command writes (NULL: none).
 */
static enum output_fmt format_of(const char *path, size_t *ext_len, const char **never)
{
	size_t i, j;

	*ext_len = 0;
	*never = NULL;
	if (!path)
		return FMT_NR;
	for (i = 0; i < FMT_NR; i++) {
		for (j = 0; formats[i].exts[j]; j++) {
			if (ends_with(path, formats[i].exts[j])) {
				*ext_len = strlen(formats[i].exts[j]);
				return (enum output_fmt)i;
			}
		}
	}
	for (j = 0; exts_never[j]; j++) {
		if (ends_with(path, exts_never[j]))
			*never = exts_never[j];
	}
	return FMT_NR;
}

const char *output_format__name(enum output_fmt fmt)
{
	return (unsigned int)fmt < FMT_NR ? formats[fmt].name : "?";
}

/* "hint: scorch diff writes folded (.folded, .collapsed, .txt or any other name), ..." */
static void hint_formats(const struct output_formats *w)
{
	char buf[512];
	size_t at = 0, left, i, j, n = 0, nr = 0;

	for (i = 0; i < FMT_NR; i++)
		nr += !!(w->can & FMT_BIT(i));
	buf[0] = '\0';
	for (i = 0; i < FMT_NR && at < sizeof(buf); i++) {
		const char *sep = ", ";

		if (!(w->can & FMT_BIT(i)))
			continue;
		if (++n == 1)
			sep = "";
		else if (n == nr)
			sep = " or ";
		left = sizeof(buf) - at;
		at += snprintf(buf + at, left, "%s%s (", sep, formats[i].name);
		for (j = 0; formats[i].exts[j] && at < sizeof(buf); j++)
			at += snprintf(buf + at, sizeof(buf) - at, "%s%s", j ? ", " : "",
				       formats[i].exts[j]);
		if (at < sizeof(buf))
			at += snprintf(buf + at, sizeof(buf) - at, "%s)",
				       i == w->dflt ? ", or any other name" : "");
	}
	pr_hint("scorch %s writes %s\n", w->cmd, buf);
}

int output_format__choose(const struct output_formats *w, const char *path, const char *format,
			  enum output_fmt *fmt)
{
	const char *never;
	size_t ext, i;
	enum output_fmt f;

	if (path && !strcmp(path, "-"))
		path = NULL;
	if (format) {
		for (i = 0; i < FMT_NR && strcmp(format, formats[i].name); i++)
			;
		if (i == FMT_NR) {
			pr_err("%s: unknown --format '%s'\n", w->cmd, format);
			hint_formats(w);
			return -EINVAL;
		}
		if (!(w->can & FMT_BIT(i))) {
			pr_err("%s: cannot write --format %s\n", w->cmd, format);
			hint_formats(w);
			return -EINVAL;
		}
		*fmt = (enum output_fmt)i;
		return 0;
	}
	f = format_of(path, &ext, &never);
	if (never) {
		pr_err("%s: cannot write %s: scorch writes no %s files\n", w->cmd, path, never);
		hint_formats(w);
		return -EINVAL;
	}
	if (f == FMT_NR) {
		*fmt = w->dflt;
		return 0;
	}
	if (!(w->can & FMT_BIT(f))) {
		pr_err("%s: cannot write %s: its name asks for %s, which %s does not write\n",
		       w->cmd, path, formats[f].name, w->cmd);
		hint_formats(w);
		return -EINVAL;
	}
	*fmt = f;
	return 0;
}

/* ---- the set of outputs ---- */

struct output {
	const char *path; /* NULL: standard output */
	const struct output_format *fmt;
	struct out_file out;
	char *cur; /* the file open now (numbered with --interval) */
	struct flamegraph *acc; /* html with --interval: every interval so far */
	bool open;
};

struct outputs {
	struct output *v;
	size_t n, cap;
	struct outputs_opts opts;
	unsigned int seq; /* --interval: number of the files open */
	/* the profile for pprof/speedscope, and the stack being added */
	struct profile *prof;
	uint32_t kernel_map;
	uint32_t *locs;
	size_t nr_locs, cap_locs;
	bool stack_bad;
	double start;	  /* CLOCK_MONOTONIC of the profile's start */
	int64_t start_ns; /* CLOCK_REALTIME of it */
	uint64_t skipped; /* frames the profile could not take (logged once) */
};

struct outputs *outputs__new(void)
{
	return calloc(1, sizeof(struct outputs));
}

void outputs__free(struct outputs *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->n; i++) {
		if (o->v[i].open)
			out__close(&o->v[i].out, false);
		free(o->v[i].cur);
		flamegraph__free(o->v[i].acc);
	}
	free(o->v);
	profile__free(o->prof);
	free(o->locs);
	free(o);
}

int outputs__add(struct outputs *o, const char *path, enum output_fmt fmt)
{
	size_t i;

	if ((unsigned int)fmt >= FMT_NR || fmt == FMT_CAPTURE)
		return -EINVAL; /* the caller's mistake: the recorder writes captures */
	if (path && !*path) {
		pr_err("-o '' names no file\n");
		pr_hint("give -o FILE, or -o - for standard output\n");
		return -EINVAL;
	}
	if (path && !strcmp(path, "-"))
		path = NULL;
	for (i = 0; i < o->n; i++) {
		if ((!path && !o->v[i].path) ||
		    (path && o->v[i].path && !strcmp(path, o->v[i].path))) {
			pr_err("-o %s is given twice\n", path ? path : "-");
			return -EINVAL;
		}
	}
	if (array__grow((void **)&o->v, &o->cap, o->n + 1, sizeof(*o->v)))
		return -ENOMEM;
	o->v[o->n++] = (struct output){.path = path, .fmt = &formats[fmt]};
	return 0;
}

size_t outputs__count(const struct outputs *o, const char *format)
{
	size_t i, n = 0;

	for (i = 0; i < o->n; i++)
		n += !format || !strcmp(o->v[i].fmt->name, format);
	return n;
}

bool outputs__to_stdout(const struct outputs *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		if (!o->v[i].path)
			return true;
	}
	return false;
}

/*
 * @path with the interval number before its extension: "cpu.svg" -> "cpu-0001.svg",
 * "cpu.pb.gz" -> "cpu-0001.pb.gz" (the ending that chose the format is the
 * extension; else the last ".xyz" of the file name), "out" -> "out-0001".
 */
static char *numbered(const char *path, unsigned int seq)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t ext = 0, n = strlen(path);
	const char *never;
	char *res;

	base = base ? base + 1 : path;
	format_of(path, &ext, &never);
	if (!ext) {
		dot = strrchr(base, '.');
		ext = dot && dot > base ? strlen(dot) : 0;
	}
	if (asprintf(&res, "%.*s-%04u%s", (int)(n - ext), path, seq, path + n - ext) < 0)
		return NULL;
	return res;
}

static int open_one(struct outputs *o, struct output *out)
{
	int err;

	free(out->cur);
	out->cur = NULL;
	if (out->path) {
		out->cur = o->opts.interval && !out->fmt->whole ? numbered(out->path, o->seq)
								: strdup(out->path);
		if (!out->cur)
			return -ENOMEM;
	}
	err = out__open(&out->out, out->cur);
	out->open = !err;
	return err;
}

static int new_profile(struct outputs *o)
{
	static const struct profile_value_type kinds[][2] = {
		[OUTPUTS_CPU] = {{"samples", "count"}, {"cpu", "nanoseconds"}},
		[OUTPUTS_OFFCPU] = {{"off-cpu", "microseconds"}},
		[OUTPUTS_WALL] = {{"wall", "microseconds"}},
		[OUTPUTS_EVENT] = {{"events", "count"}},
	};
	struct profile_opts popts = {
		.sz = sizeof(popts),
		.nr_values = o->opts.kind == OUTPUTS_CPU ? 2 : 1,
		.has_filenames = o->opts.lines,
		.has_line_numbers = o->opts.lines,
		.has_inline_frames = o->opts.inline_frames,
	};
	struct timespec ts;

	memcpy(popts.values, kinds[o->opts.kind], sizeof(popts.values));
	if (o->opts.kind == OUTPUTS_EVENT && o->opts.value_type) {
		popts.values[0].type = o->opts.value_type;
		popts.values[0].unit = o->opts.value_unit;
	}
	popts.period_type = popts.values[popts.nr_values - 1];
	/* speedscope weighs by the time a unit names (cpu: nanoseconds, at the known period;
	 * offcpu, wall, --latency: microseconds; --weight: bytes), else by the count */
	popts.weight_value = popts.nr_values - 1;
	popts.period = o->opts.kind == OUTPUTS_CPU ? (int64_t)(1e9 / o->opts.freq + 0.5) : 1;
	if (o->opts.kind == OUTPUTS_EVENT && o->opts.period > 1)
		popts.period = (int64_t)o->opts.period; /* every Nth event counted */
	profile__free(o->prof);
	o->prof = profile__new(&popts);
	if (!o->prof)
		return -errno;
	o->kernel_map = 0; /* added with the first kernel frame: pprof names the profile
			    * after its first mapping, better a user binary */
	clock_gettime(CLOCK_REALTIME, &ts);
	o->start_ns = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	o->start = ts.tv_sec + ts.tv_nsec / 1e9;
	return 0;
}

int outputs__open(struct outputs *o, const struct outputs_opts *opts)
{
	size_t i;
	int err = 0;

	o->opts = *opts;
	if (!o->n && (err = outputs__add(o, NULL, FMT_FOLDED)))
		return err;
	o->seq = 1;
	for (i = 0; i < o->n && !err; i++)
		err = open_one(o, &o->v[i]);
	if (!err && outputs__count(o, "pprof") + outputs__count(o, "speedscope"))
		err = new_profile(o);
	return err;
}

int outputs__write(struct outputs *o, struct output_data *d)
{
	struct timespec ts;
	int err = 0, e;
	size_t i;

	d->prof = o->prof;
	if (o->prof && (d->time_ns || d->duration_ns)) {
		profile__set_time(o->prof, d->time_ns, d->duration_ns);
	} else if (o->prof) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		profile__set_time(o->prof, o->start_ns,
				  (int64_t)((ts.tv_sec + ts.tv_nsec / 1e9 - o->start) * 1e9));
	}
	if (o->prof && profile__set_comments(o->prof, &d->desc, d->desc ? 1 : 0))
		return -ENOMEM;
	for (i = 0; i < o->n; i++) {
		struct output *out = &o->v[i];

		if (!out->open)
			continue;
		d->name = out->cur;
		if (out->fmt->whole)
			e = write_html(d, out->out.fp, o->opts.interval ? &out->acc : NULL, o->seq,
				       o->opts.seconds);
		else
			e = out->fmt->write(d, out->out.fp);
		if (e)
			e = out__fail(&out->out, e);
		e = out__close(&out->out, !e) ?: e;
		out->open = false;
		err = err ?: e;
	}
	return err;
}

int outputs__next(struct outputs *o)
{
	size_t i;
	int err = 0;

	o->seq++;
	for (i = 0; i < o->n && !err; i++)
		err = open_one(o, &o->v[i]);
	if (!err && o->prof)
		err = new_profile(o);
	return err;
}

unsigned int outputs__seq(const struct outputs *o)
{
	return o->seq;
}

void outputs__describe(const struct outputs *o, char *buf, size_t size)
{
	size_t i, at = 0;
	int n;

	buf[0] = '\0';
	for (i = 0; i < o->n && at < size; i++) {
		const struct output *out = &o->v[i];
		const char *sep = i ? ", " : "";
		char *first = NULL;

		if (!out->path)
			n = snprintf(buf + at, size - at, "%s%s%s to standard output", sep,
				     out->fmt->name, strcmp(out->fmt->name, "folded") ? "" : " stacks");
		else if (o->opts.interval && o->seq > 1 && !out->fmt->whole &&
			 (first = numbered(out->path, 1)))
			n = snprintf(buf + at, size - at, "%s%s ... %s", sep, first,
				     out->cur ? out->cur : out->path);
		else
			n = snprintf(buf + at, size - at, "%s%s", sep,
				     out->cur ? out->cur : out->path);
		free(first);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

/* ---- the profile's stacks ---- */

bool outputs__want_stacks(const struct outputs *o)
{
	return o->prof != NULL;
}

void outputs__stack_begin(struct outputs *o)
{
	o->nr_locs = 0;
	o->stack_bad = false;
}

static int push_loc(struct outputs *o, int err, uint32_t id)
{
	if (err) {
		/* -EINVAL: a frame the model cannot hold; the stack is dropped, counted */
		o->stack_bad = true;
		return err == -ENOMEM ? err : 0;
	}
	if (array__grow((void **)&o->locs, &o->cap_locs, o->nr_locs + 1, sizeof(*o->locs)))
		return -ENOMEM;
	o->locs[o->nr_locs++] = id;
	return 0;
}

int outputs__stack_marker(struct outputs *o, const char *name)
{
	uint32_t id = 0;
	int err;

	if (!o->prof)
		return 0;
	err = profile__add_name(o->prof, name, &id);
	return push_loc(o, err, id);
}

/* The function's name without the " (file.c:123)" that --lines appends for folded. */
static const char *bare_name(const struct outputs *o, const struct frame *f, char *buf, size_t size)
{
	const char *base;
	size_t n = strlen(f->name), s;
	int k;

	if (!o->opts.lines || !f->file || !f->line)
		return f->name;
	base = strrchr(f->file, '/');
	base = base ? base + 1 : f->file;
	k = snprintf(buf, size, " (%s:%u)", base, f->line);
	if (k < 0 || (size_t)k >= size)
		return f->name;
	s = k;
	if (n <= s || strcmp(f->name + n - s, buf))
		return f->name;
	if (n - s >= size)
		return f->name;
	memcpy(buf, f->name, n - s);
	buf[n - s] = '\0';
	return buf;
}

static int add_frames(struct outputs *o, uint32_t mapping, uint64_t ip, const struct frame *fr,
		      int k)
{
	struct profile_line lines[PROFILE_MAX_LINES];
	char names[8][512];
	uint32_t id = 0;
	int i, n = k < PROFILE_MAX_LINES ? k : PROFILE_MAX_LINES;
	int err;

	for (i = 0; i < n; i++) {
		lines[i] = (struct profile_line){
			.function = i < 8 ? bare_name(o, &fr[i], names[i], sizeof(names[i]))
					  : fr[i].name,
			.file = fr[i].file,
			.line = fr[i].line,
		};
	}
	err = profile__add_location(o->prof, mapping, ip, lines, n, &id);
	return push_loc(o, err, id);
}

int outputs__stack_user(struct outputs *o, struct symbolizer *sym, pid_t pid, uint64_t gen,
			uint64_t ip, const struct frame *fr, int k)
{
	struct symbolizer_mapping m;
	struct profile_mapping pm;
	uint32_t map = 0;
	int err;

	if (!o->prof)
		return 0;
	if (!symbolizer__mapping_gen(sym, pid, gen, ip, &m) && (m.path || m.build_id_len)) {
		pm = (struct profile_mapping){
			.start = m.start,
			.limit = m.end,
			.offset = m.pgoff,
			.file = m.path,
			.build_id = m.build_id,
			.build_id_len = m.build_id_len,
		};
		err = profile__add_mapping(o->prof, &pm, &map);
		if (err)
			return err;
	}
	return add_frames(o, map, ip, fr, k);
}

/* The kernel half of x86-64's address space, named as perf names it. */
#define KERNEL_START 0xffff800000000000ULL

int outputs__stack_kernel(struct outputs *o, uint64_t ip, const struct frame *fr, int k)
{
	struct profile_mapping km = {
		.start = KERNEL_START, .limit = UINT64_MAX, .file = "[kernel.kallsyms]"};
	int err;

	if (!o->prof)
		return 0;
	if (!o->kernel_map && ip >= KERNEL_START) {
		err = profile__add_mapping(o->prof, &km, &o->kernel_map);
		if (err)
			return err;
	}
	return add_frames(o, ip >= KERNEL_START ? o->kernel_map : 0, ip, fr, k);
}

int outputs__stack_python(struct outputs *o, uint64_t word, const char *qualname, const char *file,
			  uint32_t line)
{
	struct profile_line l = {
		.function = qualname, .file = file, .line = line, .verbatim = true};
	uint32_t id = 0;
	int err;

	if (!o->prof)
		return 0;
	err = profile__add_location(o->prof, 0, word, &l, 1, &id);
	return push_loc(o, err, id);
}

int outputs__stack_end(struct outputs *o, uint32_t pid, const char *comm, uint64_t count)
{
	return outputs__stack_end_wakers(o, pid, comm, NULL, NULL, 0, count);
}

int outputs__stack_end_wakers(struct outputs *o, uint32_t pid, const char *comm,
			      const uint32_t *waker_pids, const char *const *waker_comms, size_t nr,
			      uint64_t count)
{
	int64_t v[PROFILE_MAX_VALUES];
	int64_t c = count > INT64_MAX ? INT64_MAX : (int64_t)count;
	int err;

	if (!o->prof)
		return 0;
	if (o->stack_bad || !o->nr_locs) {
		if (!o->skipped++)
			pr_warn("pprof/speedscope: a stack with a frame that cannot be exported "
				"was left out (counted in the summary)\n");
		return 0;
	}
	v[0] = c;
	/* cpu: samples, and their CPU time at the sampling period */
	v[1] = c > INT64_MAX / 1000000000 ? INT64_MAX : (int64_t)(c * (1e9 / o->opts.freq) + 0.5);
	err = profile__add_sample_wakers(o->prof, o->locs, o->nr_locs, v, pid, comm, waker_pids,
					 waker_comms, nr);
	return err == -EINVAL ? 0 : err;
}

uint64_t outputs__skipped(const struct outputs *o)
{
	return o->skipped;
}
