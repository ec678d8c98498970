// SPDX-License-Identifier: MIT
/* common: command-line option tables joined, and one message for a bad option. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct option *cli__options(const struct option *const tables[], size_t nr)
{
	size_t total = 0, n, i, at = 0;
	struct option *t;

	for (i = 0; i < nr; i++)
		for (n = 0; tables[i][n].name; n++)
			total++;
	t = calloc(total + 1, sizeof(*t));
	if (!t)
		return NULL;
	for (i = 0; i < nr; i++)
		for (n = 0; tables[i][n].name; n++)
			t[at++] = tables[i][n];
	return t;
}

int cli__bad_option(const char *cmd, int c, char *const argv[])
{
	/* getopt_long() leaves optind past the word that held the option */
	const char *word = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':') {
		if (optopt && optopt < 256 && word[0] == '-' && word[1] != '-')
			pr_err("%s: option '-%c' needs a value\n", cmd, optopt);
		else
			pr_err("%s: option '%s' needs a value\n", cmd, word);
	} else if (optopt && optopt < 256) {
		pr_err("%s: unknown option '-%c'\n", cmd, optopt);
	} else {
		pr_err("%s: unknown option '%s'\n", cmd, word);
	}
	pr_hint("run 'scorch %s --help' for the options\n", cmd);
	return -EINVAL;
}
