/* SPDX-License-Identifier: MIT */
/* flamegraph: folded stacks (build, read, write), SVG flame graphs and diffs. */
#ifndef SCORCH_FLAMEGRAPH_H
#define SCORCH_FLAMEGRAPH_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The folded format (a contract; see FOLDED FORMAT in docs/man/scorch.1, and DESIGN.md):
 *   one line per distinct stack: "frame;frame;...;frame COUNT\n", root first.
 *   Frames never contain ';' (replaced by ':') or NUL; control bytes (0x01-0x1f
 *   including TAB, '\r' and '\n', and 0x7f) are replaced by '?', so "ma\rin" and
 *   "main" stay two frames.
 *   Bytes >= 0x80 are kept as they are (the SVG writer repairs invalid UTF-8).
 *   A frame that is empty after escaping is written "[empty]".
 *   COUNT is a decimal unsigned 64-bit integer, separated from the stack by one space.
 *   Lines are sorted bytewise (LC_ALL=C sort order) and identical stacks merged, so
 *   the output is deterministic.
 */

/*
 * Frame annotations (flamegraph.pl's): a suffix on a frame's name saying what kind of
 * code it is, which the palettes colour by. "_[k]": a kernel function; "_[j]": code
 * named by a JIT's map (/tmp/perf-PID.map, jitdump); "_[i]": a function inlined into
 * the frame before it (nearer the root). The value of each kind is its letter.
 */
enum fg_annot {
	FG_ANNOT_NONE = 0,
	FG_ANNOT_KERNEL = 'k',
	FG_ANNOT_JIT = 'j',
	FG_ANNOT_INLINE = 'i',
};

/*
 * The suffix every writer of frame names appends for @annot: "_[k]", "_[j]" or "_[i]"
 * (a static string of FG_ANNOT_LEN bytes), or "" for FG_ANNOT_NONE and any other value.
 * Never NULL.
 */
#define FG_ANNOT_LEN 4
const char *fg_annot__suffix(enum fg_annot annot);

struct folded;

/* Returns an empty stack set, or NULL with errno set. */
struct folded *folded__new(void);
void folded__free(struct folded *f);

/*
 * Adds @count to the stack @frames[0..nr) (root first). Each frame is escaped as
 * above before it is stored; an empty frame name is stored as "[empty]".
 * Identical stacks merge (counts saturate at UINT64_MAX rather than wrap).
 * Returns 0, -EINVAL for nr == 0, -ENOMEM.
 */
int folded__add(struct folded *f, const char *const *frames, size_t nr, uint64_t count);

/* Writes every stack, sorted, in the folded format. Returns 0 or -errno (write error). */
int folded__write(const struct folded *f, FILE *out);

/*
 * Caps the distinct stacks held at @max (0, the default: no cap). A new stack beyond
 * it is not stored: its count goes to the two-frame stack "ROOT;" FOLDED_FULL_FRAME
 * under its first frame (one such stack per distinct root may go past the cap) and
 * is counted in folded__over_cap(). Stacks already held keep merging.
 */
#define FOLDED_FULL_FRAME "[stack table full]"
void folded__set_max_stacks(struct folded *f, size_t max);
/* The sum of the counts that went to FOLDED_FULL_FRAME (saturating). */
uint64_t folded__over_cap(const struct folded *f);

/* Number of distinct stacks and the sum of their counts (saturating). */
size_t folded__nr_stacks(const struct folded *f);
uint64_t folded__total(const struct folded *f);

/*
 * Calls @fn for every stack of @f, in the order the stacks were first added (not
 * sorted), with its frames root first (escaped as stored, NUL-terminated; @frames and
 * the names are borrowed for the call) and its count. Nothing is built per stack: a
 * reader of every stack (scorch top's tables) pays no sort and no line. Stops at and
 * returns @fn's first nonzero return; else 0, or -ENOMEM.
 */
typedef int (*folded_stack_fn)(void *ctx, const char *const *frames, size_t nr, uint64_t count);
int folded__for_each_stack(const struct folded *f, folded_stack_fn fn, void *ctx);

/*
 * Opens folded input for reading: @path, or standard input when @path is NULL or
 * "-". gzip (including concatenated members) and zstd streams are recognised by
 * their magic bytes and decompressed on the fly, in 64 KiB steps (never the whole
 * file in memory); anything else is read as it is. A corrupt or truncated stream
 * makes a read fail (ferror() on the stream, errno EBADMSG) after one pr_err line
 * naming the file, so a caller that checks ferror() never uses a partial profile.
 * On success *out is a stream the caller closes with fclose() (standard input's
 * descriptor is left open) and 0 is returned; on failure -errno, logged with the
 * file name, and *out is NULL.
 */
int folded_input__open(const char *path, FILE **out);

/*
 * SVG flame graphs.
 *
 * Options follow flamegraph.pl's names and meanings (docs/man/scorch-flamegraph.1). Strings
 * are borrowed: they must outlive every call that uses the options. Start from
 * flamegraph_opts__init() (the defaults), then set fields or apply long options
 * by name with flamegraph_opts__set().
 */
enum flamegraph_palette {
	FG_PAL_HOT = 0,
	FG_PAL_MEM,
	FG_PAL_IO,
	FG_PAL_WAKEUP,
	FG_PAL_CHAIN,
	FG_PAL_JAVA,
	FG_PAL_JS,
	FG_PAL_PERL,
	FG_PAL_RED,
	FG_PAL_GREEN,
	FG_PAL_BLUE,
	FG_PAL_AQUA,
	FG_PAL_YELLOW,
	FG_PAL_PURPLE,
	FG_PAL_ORANGE,
	/*
	 * Wall-clock profiles (record --mode wall): a stack whose leaf is "[off-cpu]"
	 * is blocked time, "[runqueue]" runnable time waiting for a CPU, any other
	 * stack on-CPU time. Each frame's colour is the time-weighted mix of the
	 * classes beneath it (inclusive): warm (hot) for on-CPU, blue for off-CPU,
	 * aqua for runqueue; so an all-CPU frame is warm, an all-blocked one blue
	 * and a frame with both a blend in proportion. Titles add the shares.
	 */
	FG_PAL_WALL,
};

/* The marker leaf frames of wall-clock stacks (see FG_PAL_WALL). */
#define FG_FRAME_OFFCPU	  "[off-cpu]"
#define FG_FRAME_RUNQUEUE "[runqueue]"

/*
 * The SVG draws stacks FG_MAX_DEPTH frames deep at most (the image grows one row per
 * level: a single 500,000-frame line made a 104 MB SVG). The frames above that level
 * are drawn as one FG_FRAME_DEEPER frame per level-(FG_MAX_DEPTH + 1) frame, with its
 * position and width, and a warning counts them.
 */
#define FG_MAX_DEPTH	8192
#define FG_FRAME_DEEPER "[deeper frames not drawn]"

struct flamegraph_opts {
	size_t sz;			/* sizeof(struct flamegraph_opts) */
	const char *title;		/* NULL: "Flame Graph", "Icicle Graph" or "Flame Chart" */
	const char *subtitle;		/* NULL: none */
	unsigned int width;		/* image width in px (1200) */
	unsigned int height;		/* frame height in px (16) */
	double minwidth;		/* omit frames narrower than this (0.1) ... */
	bool minwidth_percent;		/* ... px, or percent of the total when nonzero */
	bool minwidth_set;		/* given: the HTML page leaves out those frames too */
	const char *fonttype;		/* font-family ("Verdana") */
	double fontsize;		/* 12 */
	double fontwidth;		/* average glyph width / fontsize (0.59) */
	const char *countname;		/* "samples" */
	const char *nametype;		/* "Function:" */
	enum flamegraph_palette colors; /* hot */
	const char *bgcolors;	  /* NULL: per palette; yellow, blue, green, grey or #rrggbb */
	bool hash;		  /* colours from a name hash with independent hue and shade */
	bool cp;		  /* consistent palette: read and update palette_file */
	const char *palette_file; /* for cp ("palette.map" in the working directory) */
	bool reverse;		  /* reverse every stack (leaf becomes root) */
	bool inverted;		  /* icicle graph: root at the top */
	bool flamechart;	  /* keep input order; merge adjacent equal prefixes only */
	bool negate;		  /* differential: widths from "before" (red still means growth) */
	const char *notes;	  /* text for an XML comment */
	uint64_t total;		  /* 100 % denominator when larger than the sum (0: the sum) */
	double factor;		  /* multiplies displayed counts (1) */
	bool self; /* differential: colour by the change of self, not total, counts */
};

/* Fills @opts with the defaults above (sz included). */
void flamegraph_opts__init(struct flamegraph_opts *opts);

/*
 * Applies one long option, named without its leading "--" (e.g. "minwidth",
 * "colors", "hash"; "color" is accepted for "colors", as flamegraph.pl does).
 * @value is NULL for flags and borrowed otherwise. Returns 0, -ENOENT when
 * @name is not a flame-graph option, -EINVAL for a bad value (logged).
 */
int flamegraph_opts__set(struct flamegraph_opts *opts, const char *name, const char *value);

/*
 * A getopt_long table of every flame-graph option, terminated by a zero entry,
 * for commands that accept them next to their own (record -o x.svg). Each
 * entry's .val is FLAMEGRAPH_OPT_BASE + index and .flag is NULL; on such a value
 * call flamegraph_opts__set(opts, flamegraph_long_options[val - FLAMEGRAPH_OPT_BASE].name,
 * optarg), or simply flamegraph_opts__set_getopt(opts, val, optarg).
 */
#define FLAMEGRAPH_OPT_BASE 0x4600
extern const struct option flamegraph_long_options[];
/* Returns -ENOENT when @val is not one of ours, else as flamegraph_opts__set(). */
int flamegraph_opts__set_getopt(struct flamegraph_opts *opts, int val, const char *optarg);
/* Prints the option help lines (two-space indented) for a command's --help. */
void flamegraph__print_options_help(FILE *out);

/*
 * A flame graph under construction: stacks are added from folded text, from a
 * struct folded or one by one, then rendered. Memory is about 4 bytes per frame
 * of input plus the distinct names; nothing is kept per output frame.
 */
struct flamegraph;

/* Returns a new graph using a copy of @opts (NULL: defaults), or NULL with errno set. */
struct flamegraph *flamegraph__new(const struct flamegraph_opts *opts);
void flamegraph__free(struct flamegraph *fg);

/*
 * Reads folded text from @in (@name is used in messages, e.g. the file name or
 * "<stdin>"). Line grammar: STACK WS COUNT, where COUNT is the last
 * whitespace-separated field, a decimal integer, or a decimal fraction rounded
 * to the nearest integer (warned once). A line with two trailing counts,
 * "stack BEFORE AFTER" (difffolded.pl's format), is differential: when every
 * line of the graph has two counts it is drawn as a differential flame graph
 * (widths from AFTER, or BEFORE with opts.negate; each frame coloured by the
 * change of its total count, or self count with opts.self: red grew, blue
 * shrank, white unchanged; titles give both counts, the delta and delta %).
 * A graph mixing one- and two-count lines is drawn plain from the last count
 * (warned). Blank lines are ignored; lines over LINE_MAX_FOLDED (1 MiB) are
 * skipped without being held in memory, counted and reported once with pr_warn;
 * other lines that do not parse are skipped, counted and reported with pr_warn.
 * Frames are escaped as in the folded contract. Returns 0 or -errno (read
 * error or out of memory); bad lines are not errors.
 */
int flamegraph__read(struct flamegraph *fg, FILE *in, const char *name);
/* Adds every stack of @f. Returns 0 or -ENOMEM. */
int flamegraph__add_folded(struct flamegraph *fg, const struct folded *f);
/* Adds one stack (root first, escaped as folded__add does). Returns 0, -EINVAL, -ENOMEM. */
int flamegraph__add_stack(struct flamegraph *fg, const char *const *frames, size_t nr,
			  uint64_t count);
/* Lines skipped as unparsable so far. */
size_t flamegraph__nr_bad_lines(const struct flamegraph *fg);

/*
 * Renders the SVG to @out. Deterministic: equal input and options give equal
 * bytes. Returns 0; -ENODATA when there are no samples (an SVG saying "No stack
 * counts found" is still written); -errno on a write error or out of memory.
 * May be called once per graph (it sorts the stacks in place).
 */
int flamegraph__write_svg(struct flamegraph *fg, FILE *out);

/*
 * Convenience for record: renders @f with @opts (NULL: defaults) to @path,
 * written atomically (temporary file, then rename); "-" or NULL is stdout.
 * Returns as flamegraph__write_svg(); errors are logged with the file name.
 */
int flamegraph__write_svg_path(const struct folded *f, const struct flamegraph_opts *opts,
			       const char *path);

/*
 * HTML profile viewer: one self-contained page (no network access; CSS and
 * script embedded) that draws the graph on a canvas as a flame graph or icicle,
 * with zoom, search, a function table, a sandwich view of one function and,
 * when the stacks came in intervals, a timeline whose brush restricts every
 * view. The data (see "HTML FORMAT" in DESIGN.md) is the merged call tree in
 * preorder: names in a JSON string table (sorted bytewise, escaped so that no
 * data can end the script element or change the page's text direction), the
 * tree's arrays as LEB128 varints, gzipped and base64-encoded, decompressed by
 * the browser's DecompressionStream.
 */
#define FG_HTML_MAX_INTERVALS 65536

/*
 * Stacks added from now on belong to interval @interval (0-based; the first is
 * 0, the default). Returns 0, or -ERANGE at FG_HTML_MAX_INTERVALS or more.
 */
int flamegraph__set_interval(struct flamegraph *fg, unsigned int interval);

struct flamegraph_html_opts {
	size_t sz;	 /* sizeof(struct flamegraph_html_opts) */
	double interval; /* seconds per interval for the timeline's axis (0: unknown) */
};

/*
 * Writes the HTML page of @fg to @out, with @opts (NULL: defaults); the graph's
 * flame-graph options that apply are title, subtitle, countname, colors (frame
 * colours are computed as the SVG's), hash, inverted (the page opens as an
 * icicle), reverse, flamechart, negate, factor and self; minwidth only when
 * given (minwidth_set): the page then leaves out the frames the SVG leaves out,
 * their counts kept as the nearest frame left's own, else it holds every frame
 * (it draws what fits). Differential graphs (see flamegraph__read())
 * are coloured as the SVG's and their table sorted by change. Unlike
 * flamegraph__write_svg(), the graph is left as it was: more stacks may be added
 * and the page written again. Returns 0; -ENODATA when there are no samples (a
 * page saying so is still written); -errno on a write error or out of memory.
 */
int flamegraph__write_html(struct flamegraph *fg, const struct flamegraph_html_opts *opts,
			   FILE *out);

/*
 * Differential profiles (scorch diff): two one-count profiles joined stack by
 * stack into "stack BEFORE AFTER" lines, difffolded.pl's format.
 */
struct folded_diff;

struct folded_diff_opts {
	size_t sz;	/* sizeof(struct folded_diff_opts) */
	bool normalize; /* scale "before" to "after"'s total (difffolded.pl -n) */
	bool strip_hex; /* "0x" + hex digits -> "0x..." in frames (difffolded.pl -s) */
};

enum folded_side {
	FOLDED_BEFORE = 0,
	FOLDED_AFTER = 1,
};

/* Returns an empty diff using a copy of @opts (NULL: all off), or NULL with errno set. */
struct folded_diff *folded_diff__new(const struct folded_diff_opts *opts);
void folded_diff__free(struct folded_diff *d);

/*
 * Adds the folded text of @in to one side; may be called more than once per
 * side (the inputs merge). The grammar is flamegraph__read()'s, frames are
 * escaped as the folded contract says, then hex-stripped if asked. A line with
 * two counts (an already differential file) is an error (-EINVAL); lines over
 * LINE_MAX_FOLDED (1 MiB, never held in memory) and other unparsable lines are
 * skipped, counted and warned. Returns 0 or -errno, logged
 * with @name (kept for later messages and the top report's header).
 */
int folded_diff__read(struct folded_diff *d, enum folded_side side, FILE *in, const char *name);

/*
 * Ends the reading: -ENODATA (logged, with a hint) when a side has no stack or
 * only zero counts. Warns when one side has [off-cpu]/[runqueue] stacks (a
 * wall-clock or off-CPU profile, microseconds) and the other none: folded files
 * carry no unit, so that is the only unit mismatch that can be seen. Applies
 * normalize: both columns are multiplied by integers so that their totals are
 * equal and every ratio exact (the outputs below convert back to "after"'s
 * units). Returns 0, -ENODATA or -EINVAL (called twice).
 */
int folded_diff__finish(struct folded_diff *d);

/* Raw totals (before normalization) and the number of distinct stacks (union). */
uint64_t folded_diff__total(const struct folded_diff *d, enum folded_side side);
size_t folded_diff__nr_stacks(const struct folded_diff *d);

/*
 * Writes "stack BEFORE AFTER" for every stack of either side (0 where it is
 * missing), sorted bytewise by stack. With normalize, BEFORE is rounded to the
 * nearest integer. After folded_diff__finish(). Returns 0 or -errno.
 */
int folded_diff__write(const struct folded_diff *d, FILE *out);

/*
 * Adds every stack of @d to @fg as differential stacks (exact normalized
 * counts; the graph's displayed counts are converted to "after"'s units).
 * After folded_diff__finish(). Returns 0, -EINVAL or -ENOMEM.
 */
int flamegraph__add_diff(struct flamegraph *fg, const struct folded_diff *d);

/*
 * Writes the plain-text regression report: a header naming both inputs and
 * their totals, then the @n functions whose self count changed most and the
 * @n whose total (inclusive; a recursive function counts once per stack) count
 * changed most, by absolute change (ties by name), each row giving self and
 * total before, after, delta and delta % ("new" when it was 0). Functions
 * are frame names; unchanged ones are not listed. Returns 0 or -errno.
 */
int folded_diff__write_top(const struct folded_diff *d, size_t n, FILE *out);

/*
 * ---------------------------------------------------------------------------
 * Collapse: other tools' stack text to folded stacks (scorch collapse).
 * ---------------------------------------------------------------------------
 *
 * Two inputs are understood:
 *
 * perf script text. Parsed as stackcollapse-perf.pl parses it (its header and
 * frame patterns, "+0x..." offsets stripped, "[unknown]" frames named after
 * their module, names tidied: ';' -> ':', "(args)" cut unless the name looks
 * like a Go method, quotes dropped, the leading 'L' of Java classes dropped
 * when the process is "java"), so that its output equals the Perl script's
 * line for line; options mirror its --pid, --tid, --kernel, --jit, --addrs and
 * --event-filter. Only samples of one event are kept: the filter's, or the
 * first event seen. A sample ends at a blank line; a last sample with no blank
 * line after it may be cut and is dropped (as the Perl script does), counted
 * in nr_truncated. A "->" in a frame (perf's inline chains) makes several
 * frames, the later ones annotated "_[i]". Deviations from the Perl script:
 * frames are escaped as the folded contract says (control bytes -> '?', empty
 * frames "[empty]", ';' in a process name -> ':'), a trailing CR is removed
 * from each line, and "perf script" without callchains is not supported (as
 * in the Perl script, such samples have no blank line between them).
 *
 * bpftrace map output, e.g. of @[kstack, ustack, comm] = count():
 *     @[
 *         do_syscall_64+56
 *         entry_SYSCALL_64_after_hwframe+99
 *     ,
 *         0x7f2a5c0e1a3d
 *         main+53
 *     , bash]: 5
 * The map's key elements are named by opts.bpftrace_keys, a comma-separated
 * list (default "kstack,ustack,comm"): "kstack" and "ustack" (each at most
 * once) are stacks, leaf first, in bpftrace's default or perf mode
 * ("ADDR SYM+OFF (MODULE)"); any other name (comm, pid, tid, cpu, ...) is a
 * scalar printed on the line. Each record gives one folded stack, root first:
 * the scalars in key order, then the user stack, then the kernel stack, each
 * reversed to root-first order; "+OFFSET" (decimal, or 0x hex in perf mode) is
 * stripped, hex frames are kept as printed, kernel frames get "_[k]" when
 * annotate_kernel is set. So @[ustack] = count() with keys "ustack" gives
 * "main;mid;leaf N", and the default keys give "comm;main;...;syscall_leaf_[k] N".
 * A record whose key does not have the declared shape, a second map, a map
 * without a key or a value that is not an integer is an error (-EINVAL, logged
 * with the line number and a hint), not a guess.
 */
enum collapse_format {
	COLLAPSE_AUTO = 0, /* bpftrace if the first line is "Attaching ..." or starts with '@' */
	COLLAPSE_PERF,
	COLLAPSE_BPFTRACE,
};

struct collapse_opts {
	size_t sz; /* sizeof(struct collapse_opts) */
	enum collapse_format format;
	bool pid;		  /* perf: process frame "comm-PID" (stackcollapse-perf.pl --pid) */
	bool tid;		  /* perf: "comm-PID/TID" (--tid; wins over pid) */
	bool annotate_kernel;	  /* "_[k]" on kernel frames (--kernel) */
	bool annotate_jit;	  /* "_[j]" on /tmp/perf-PID.map frames (--jit) */
	bool addrs;		  /* perf: "[module <ADDR>]" for unknown symbols (--addrs) */
	const char *event_filter; /* perf: keep this event only; NULL: the first seen */
	const char *bpftrace_keys; /* NULL: "kstack,ustack,comm" */
};

/* What a collapser saw, over every read so far. */
struct collapse_stats {
	uint64_t samples;	     /* samples (perf) or records (bpftrace) kept */
	uint64_t filtered;	     /* perf samples of other events, skipped */
	uint64_t truncated;	     /* an entry cut at the end of the input, dropped */
	uint64_t bad_lines;	     /* lines not understood, skipped */
	enum collapse_format format; /* of the last read (AUTO before any) */
};

struct collapser;

/*
 * Returns a collapser using a copy of @opts (NULL: no annotations, perf or
 * bpftrace by content); strings in @opts are borrowed for its lifetime. NULL
 * with errno set: EINVAL (bad bpftrace_keys, logged), ENOMEM.
 */
struct collapser *collapser__new(const struct collapse_opts *opts);
void collapser__free(struct collapser *c);

/*
 * Reads one input to its end (@name is used in messages) and adds its stacks
 * to the collapser's folded set. Lines not understood, and lines over
 * LINE_MAX_FOLDED (1 MiB, never held in memory), are skipped and counted;
 * at the end of the read they, skipped events and a dropped last sample are
 * reported once each with pr_warn (and a hint where there is a remedy).
 * Returns 0; -EINVAL for bpftrace input that is not understood (logged); -EIO
 * or -errno on a read error (including a corrupt compressed stream); -ENOMEM.
 */
int collapser__read(struct collapser *c, FILE *in, const char *name);

/* The stacks collected so far; borrowed until collapser__free(). */
const struct folded *collapser__folded(const struct collapser *c);
void collapser__stats(const struct collapser *c, struct collapse_stats *st);

#endif /* SCORCH_FLAMEGRAPH_H */
