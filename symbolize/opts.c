// SPDX-License-Identifier: MIT
/* symbolize: the options that choose how frames are named, shared by every subcommand
 * that names frames (record, report, symbolize). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>

#include "symbolize.h"

enum {
	NAME_LINES = SYMBOLIZER_OPT_BASE,
	NAME_NO_DEMANGLE,
	NAME_PARAMS,
	NAME_NO_INLINE,
};

const struct option symbolizer_name_options[] = {
	{ "lines", no_argument, NULL, NAME_LINES },
	{ "no-demangle", no_argument, NULL, NAME_NO_DEMANGLE },
	{ "params", no_argument, NULL, NAME_PARAMS },
	{ "no-inline", no_argument, NULL, NAME_NO_INLINE },
	{ NULL, 0, NULL, 0 },
};

int symbolizer_opts__set_getopt(struct symbolizer_opts *o, int val)
{
	switch (val) {
	case NAME_LINES:
		o->lines = true;
		return 0;
	case NAME_NO_DEMANGLE:
		o->no_demangle = true;
		return 0;
	case NAME_PARAMS:
		o->keep_params = true;
		return 0;
	case NAME_NO_INLINE:
		o->no_inline = true;
		return 0;
	default:
		return -ENOENT;
	}
}

void symbolizer__print_options_help(FILE *out)
{
	fprintf(out,
		"      --lines                name frames 'func (file.c:123)' (DWARF line tables)\n"
		"      --no-demangle          keep C++/Rust/D symbols mangled\n"
		"      --params               keep C++/D parameter lists (dropped by default)\n"
		"      --no-inline            no DWARF inline frames (shown by default, suffixed "
		"_[i])\n");
}
