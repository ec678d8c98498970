// SPDX-License-Identifier: MIT
/* tests/common: the bounded line reader (lines kept, lines over the cap skipped and counted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int failed;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
			failed = 1;                                                                \
		}                                                                                  \
	} while (0)

struct got {
	size_t nr, skipped, max_cap;
	char *lines[16];
	size_t lens[16];
};

static void read_all(const char *data, size_t size, size_t max, struct got *g)
{
	struct line_reader lr;
	FILE *in = fmemopen((void *)data, size, "r");
	size_t len;
	char *line;
	int r;

	memset(g, 0, sizeof(*g));
	CHECK(in);
	if (!in)
		return;
	line_reader__init(&lr, in, max);
	while ((r = line_reader__next(&lr, &line, &len)) > 0) {
		CHECK(line[len] == '\0');
		if (g->nr < 16) {
			g->lines[g->nr] = malloc(len + 1);
			memcpy(g->lines[g->nr], line, len + 1);
			g->lens[g->nr] = len;
		}
		g->nr++;
		g->max_cap = MAX(g->max_cap, lr.cap);
	}
	CHECK(r == 0);
	g->max_cap = MAX(g->max_cap, lr.cap);
	g->skipped = lr.skipped;
	line_reader__free(&lr);
	fclose(in);
}

static void got__free(struct got *g)
{
	for (size_t i = 0; i < MIN(g->nr, (size_t)16); i++)
		free(g->lines[i]);
}

static char *repeat(char c, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	char *s = malloc(n + t + 1);

	memset(s, c, n);
	memcpy(s + n, tail, t + 1);
	return s;
}

int main(void)
{
	const size_t big = 8u << 20, max = 1u << 20;
	struct got g;
	char *s, *data;
	size_t n;

	/* plain lines, a blank one, and a last line without its newline */
	read_all("a 1\n\nb 2\nc", 11, max, &g);
	CHECK(g.nr == 4 && g.skipped == 0);
	CHECK(g.nr == 4 && !strcmp(g.lines[0], "a 1") && g.lens[1] == 0 &&
	      !strcmp(g.lines[2], "b 2") && !strcmp(g.lines[3], "c"));
	got__free(&g);

	/* a NUL inside a line is part of it */
	read_all("x\0y\nz\n", 6, max, &g);
	CHECK(g.nr == 2 && g.lens[0] == 3 && !memcmp(g.lines[0], "x\0y", 3));
	got__free(&g);

	/* exactly the cap is kept; one byte more is skipped; both across chunk boundaries */
	s = repeat('k', max, "\n");
	data = malloc(2 * max + 64);
	n = 0;
	memcpy(data + n, s, max + 1);
	n += max + 1;
	memcpy(data + n, "m 1\n", 4);
	n += 4;
	free(s);
	s = repeat('s', max + 1, "\nn 2\n");
	memcpy(data + n, s, max + 6);
	n += max + 6;
	free(s);
	read_all(data, n, max, &g);
	CHECK(g.nr == 3 && g.skipped == 1);
	CHECK(g.nr == 3 && g.lens[0] == max && !strcmp(g.lines[1], "m 1") &&
	      !strcmp(g.lines[2], "n 2"));
	got__free(&g);
	free(data);

	/* a line eight times the cap is not held: the buffer stays near the cap */
	s = repeat('h', big, "\nafter 3\n");
	read_all(s, strlen(s), max, &g);
	CHECK(g.nr == 1 && g.skipped == 1 && g.nr && !strcmp(g.lines[0], "after 3"));
	CHECK(g.max_cap <= max + (128u << 10));
	got__free(&g);
	free(s);

	/* an over-long last line without a newline is skipped and counted too */
	s = repeat('e', big, "");
	memcpy(s, "q 1\n", 4);
	read_all(s, big, max, &g);
	CHECK(g.nr == 1 && g.skipped == 1);
	got__free(&g);
	free(s);

	/* a small cap (as for perf maps) */
	read_all("0 1 f\n0123456789 1 g\n2 1 h\n", 27, 8, &g);
	CHECK(g.nr == 2 && g.skipped == 1);
	got__free(&g);

	if (!failed)
		printf("ok   line_reader\n");
	return failed;
}
