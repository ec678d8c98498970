// SPDX-License-Identifier: MIT
/* flamegraph: options with flamegraph.pl's names, defaults and validation. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

static const char *const palette_names[] = {
	[FG_PAL_HOT] = "hot",	    [FG_PAL_MEM] = "mem",	[FG_PAL_IO] = "io",
	[FG_PAL_WAKEUP] = "wakeup", [FG_PAL_CHAIN] = "chain",	[FG_PAL_JAVA] = "java",
	[FG_PAL_JS] = "js",	    [FG_PAL_PERL] = "perl",	[FG_PAL_RED] = "red",
	[FG_PAL_GREEN] = "green",   [FG_PAL_BLUE] = "blue",	[FG_PAL_AQUA] = "aqua",
	[FG_PAL_YELLOW] = "yellow", [FG_PAL_PURPLE] = "purple", [FG_PAL_ORANGE] = "orange",
	[FG_PAL_WALL] = "wall",
};

#define OPT(i, n, arg)                                                                             \
	{                                                                                          \
		n, arg, NULL, FLAMEGRAPH_OPT_BASE + (i)                                            \
	}

/* .val is FLAMEGRAPH_OPT_BASE + the index in this table. */
const struct option flamegraph_long_options[] = {
	OPT(0, "title", required_argument),
	OPT(1, "subtitle", required_argument),
	OPT(2, "width", required_argument),
	OPT(3, "height", required_argument),
	OPT(4, "minwidth", required_argument),
	OPT(5, "fonttype", required_argument),
	OPT(6, "fontsize", required_argument),
	OPT(7, "fontwidth", required_argument),
	OPT(8, "countname", required_argument),
	OPT(9, "nametype", required_argument),
	OPT(10, "colors", required_argument),
	OPT(11, "color", required_argument),
	OPT(12, "bgcolors", required_argument),
	OPT(13, "hash", no_argument),
	OPT(14, "cp", no_argument),
	OPT(15, "palette-file", required_argument),
	OPT(16, "reverse", no_argument),
	OPT(17, "inverted", no_argument),
	OPT(18, "flamechart", no_argument),
	OPT(19, "negate", no_argument),
	OPT(20, "notes", required_argument),
	OPT(21, "total", required_argument),
	OPT(22, "factor", required_argument),
	OPT(23, "self", no_argument),
	{NULL, 0, NULL, 0},
};

void flamegraph__print_options_help(FILE *out)
{
	fprintf(out,
		"  --title TEXT        title (default \"Flame Graph\", \"Icicle Graph\" or \"Flame "
		"Chart\")\n"
		"  --subtitle TEXT     second heading line\n"
		"  --width PX          image width (default 1200)\n"
		"  --height PX         frame height (default 16)\n"
		"  --minwidth PX|N%%    omit frames narrower than PX pixels or N%% of the total\n"
		"                      (default 0.1 px; 0 keeps every frame); an HTML page\n"
		"                      leaves out by default only the frames it draws at no\n"
		"                      zoom (under 1/10240 of their parent), --minwidth 0\n"
		"                      keeps every frame\n"
		"  --fonttype FONT     font family (default Verdana)\n"
		"  --fontsize SIZE     font size (default 12)\n"
		"  --fontwidth RATIO   average glyph width / font size (default 0.59)\n"
		"  --countname NAME    unit of the counts (default samples)\n"
		"  --nametype TEXT     prefix of the details line (default \"Function:\")\n"
		"  --colors PALETTE    hot (default), mem, io, wakeup, chain, java, js, perl, "
		"red,\n"
		"                      green, blue, aqua, yellow, purple, orange, wall (on-CPU\n"
		"                      warm, [off-cpu] blue, [runqueue] aqua, mixed frames\n"
		"                      blended); chain: chain graphs, blocked stacks blue, their\n"
		"                      wakers aqua, the waker's waker purple, the next green,\n"
		"                      then yellow, each \"--\" grey\n"
		"  --bgcolors COLOR    background: yellow, blue, green, grey or #rrggbb\n"
		"  --hash              colours from a name hash (hue and shade vary "
		"independently)\n"
		"  --cp                consistent palette: reuse and update palette.map\n"
		"  --palette-file FILE the file --cp uses (default palette.map)\n"
		"  --reverse           reverse stacks (leaf frames at the bottom)\n"
		"  --inverted          icicle graph (root at the top)\n"
		"  --flamechart        keep input order (x is time order for per-sample input)\n"
		"  --negate            differential graphs: widths from \"before\" (code that\n"
		"                      vanished stays visible); red still means growth\n"
		"  --self              differential graphs: colour by the change of self counts\n"
		"                      (flamegraph.pl's colouring), not of total counts\n"
		"  --notes TEXT        text stored in an XML comment\n"
		"  --total N           100%% denominator, when larger than the sum of counts\n"
		"  --factor F          multiply displayed counts by F (default 1)\n");
}

void flamegraph_opts__init(struct flamegraph_opts *opts)
{
	*opts = (struct flamegraph_opts){
		.sz = sizeof(*opts),
		.width = 1200,
		.height = 16,
		.minwidth = 0.1,
		.fonttype = "Verdana",
		.fontsize = 12,
		.fontwidth = 0.59,
		.countname = "samples",
		.nametype = "Function:",
		.colors = FG_PAL_HOT,
		.palette_file = "palette.map",
		.factor = 1,
	};
}

int flamegraph__palette_by_name(const char *name, enum flamegraph_palette *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(palette_names); i++) {
		if (!strcmp(name, palette_names[i])) {
			*out = (enum flamegraph_palette)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool flamegraph__valid_bgcolors(const char *s)
{
	size_t i;

	if (!strcmp(s, "yellow") || !strcmp(s, "blue") || !strcmp(s, "green") || !strcmp(s, "grey"))
		return true;
	if (s[0] != '#' || strlen(s) != 7)
		return false;
	for (i = 1; i < 7; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return true;
}

static int set_double(const char *name, const char *value, double min, double max, double *out)
{
	int err = parse__double(value, min, max, out);

	if (err)
		pr_err("flamegraph: invalid --%s '%s': expected a number from %g to %g\n", name,
		       value, min, max);
	return err;
}

static int set_uint(const char *name, const char *value, long min, long max, unsigned int *out)
{
	long v;
	int err = parse__long(value, min, max, &v);

	if (err) {
		pr_err("flamegraph: invalid --%s '%s': expected an integer from %ld to %ld\n", name,
		       value, min, max);
		return err;
	}
	*out = (unsigned int)v;
	return 0;
}

int flamegraph_opts__set(struct flamegraph_opts *o, const char *name, const char *value)
{
	const struct option *opt = NULL;
	size_t i, len;
	int err;

	for (i = 0; flamegraph_long_options[i].name; i++) {
		if (!strcmp(name, flamegraph_long_options[i].name)) {
			opt = &flamegraph_long_options[i];
			break;
		}
	}
	if (!opt)
		return -ENOENT;
	if (opt->has_arg == required_argument && !value) {
		pr_err("flamegraph: option --%s needs a value\n", name);
		return -EINVAL;
	}

	if (!strcmp(name, "title")) {
		o->title = value;
	} else if (!strcmp(name, "subtitle")) {
		o->subtitle = value;
	} else if (!strcmp(name, "width")) {
		return set_uint(name, value, 40, 1000000, &o->width);
	} else if (!strcmp(name, "height")) {
		return set_uint(name, value, 1, 10000, &o->height);
	} else if (!strcmp(name, "minwidth")) {
		char buf[64];

		len = strlen(value);
		o->minwidth_percent = len && value[len - 1] == '%';
		o->minwidth_set = true;
		if (len >= sizeof(buf)) {
			pr_err("flamegraph: invalid --minwidth '%s'\n", value);
			return -EINVAL;
		}
		memcpy(buf, value, len + 1);
		if (o->minwidth_percent)
			buf[len - 1] = '\0';
		return set_double(name, buf, 0, o->minwidth_percent ? 100 : 1e9, &o->minwidth);
	} else if (!strcmp(name, "fonttype")) {
		o->fonttype = value;
	} else if (!strcmp(name, "fontsize")) {
		return set_double(name, value, 1, 1000, &o->fontsize);
	} else if (!strcmp(name, "fontwidth")) {
		return set_double(name, value, 0.01, 10, &o->fontwidth);
	} else if (!strcmp(name, "countname")) {
		o->countname = value;
	} else if (!strcmp(name, "nametype")) {
		o->nametype = value;
	} else if (!strcmp(name, "colors") || !strcmp(name, "color")) {
		err = flamegraph__palette_by_name(value, &o->colors);
		if (err) {
			pr_err("flamegraph: unknown palette '%s'\n", value);
			pr_hint("palettes: hot mem io wakeup chain java js perl red green blue "
				"aqua yellow purple orange wall\n");
		}
		return err;
	} else if (!strcmp(name, "bgcolors")) {
		if (!flamegraph__valid_bgcolors(value)) {
			pr_err("flamegraph: invalid --bgcolors '%s'\n", value);
			pr_hint("use yellow, blue, green, grey or #rrggbb\n");
			return -EINVAL;
		}
		o->bgcolors = value;
	} else if (!strcmp(name, "hash")) {
		o->hash = true;
	} else if (!strcmp(name, "cp")) {
		o->cp = true;
	} else if (!strcmp(name, "palette-file")) {
		o->palette_file = value;
	} else if (!strcmp(name, "reverse")) {
		o->reverse = true;
	} else if (!strcmp(name, "inverted")) {
		o->inverted = true;
	} else if (!strcmp(name, "flamechart")) {
		o->flamechart = true;
	} else if (!strcmp(name, "negate")) {
		o->negate = true;
	} else if (!strcmp(name, "self")) {
		o->self = true;
	} else if (!strcmp(name, "notes")) {
		o->notes = value;
	} else if (!strcmp(name, "total")) {
		err = parse__u64(value, 10, &o->total);
		if (err)
			pr_err("flamegraph: invalid --total '%s': expected an unsigned integer\n",
			       value);
		return err;
	} else if (!strcmp(name, "factor")) {
		err = set_double(name, value, 0, 1e15, &o->factor);
		if (!err && !(o->factor > 0)) {
			pr_err("flamegraph: invalid --factor '%s': must be positive\n", value);
			err = -EINVAL;
		}
		return err;
	}
	return 0;
}

int flamegraph_opts__set_getopt(struct flamegraph_opts *opts, int val, const char *optarg)
{
	size_t nr = ARRAY_SIZE(flamegraph_long_options) - 1;

	if (val < FLAMEGRAPH_OPT_BASE || (size_t)(val - FLAMEGRAPH_OPT_BASE) >= nr)
		return -ENOENT;
	return flamegraph_opts__set(opts, flamegraph_long_options[val - FLAMEGRAPH_OPT_BASE].name,
				    optarg);
}
