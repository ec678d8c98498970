// SPDX-License-Identifier: MIT
/* symbolize: C++, Rust and D names demangled with libiberty. */
#include <stdlib.h>
#include <string.h>

#include "symbolize-private.h"

/* libiberty's ansidecl.h defines ARRAY_SIZE as common.h does */
#undef ARRAY_SIZE
#include <libiberty/demangle.h>

/* Cuts the trailing balanced "(...)" of a D name: "app.hotD(double)" -> "app.hotD". */
static void drop_params(char *s)
{
	size_t n = strlen(s);
	int depth = 0;

	if (!n || s[n - 1] != ')')
		return;
	while (n--) {
		if (s[n] == ')')
			depth++;
		else if (s[n] == '(' && !--depth)
			break;
	}
	if (n != (size_t)-1 && n > 0)
		s[n] = '\0';
}

char *demangle__name(const char *name, bool params)
{
	int opts = DMGL_ANSI | (params ? DMGL_PARAMS | DMGL_RET_DROP : 0);
	char *out;

	if (name[0] != '_')
		return NULL;
	if (name[1] == 'D' && name[2] >= '0' && name[2] <= '9') {
		out = dlang_demangle(name, DMGL_PARAMS);
		if (out && !params)
			drop_params(out);
		return out;
	}
	/* Rust first: legacy Rust names are valid C++ names ending in "17h<hash>E" */
	if (name[1] == 'R' || (name[1] == 'Z' && name[2] == 'N')) {
		out = rust_demangle(name, opts);
		if (out)
			return out;
	}
	if (name[1] == 'Z' || (name[1] == '_' && name[2] == 'Z'))
		return cplus_demangle(name, opts | DMGL_GNU_V3);
	return NULL;
}
