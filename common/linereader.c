// SPDX-License-Identifier: MIT
/* common: a line reader with a cap on the length of one line, shared by every text reader. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define LR_CHUNK (64u << 10)

void line_reader__init(struct line_reader *lr, FILE *in, size_t max)
{
	*lr = (struct line_reader){.in = in, .max = max};
}

void line_reader__free(struct line_reader *lr)
{
	free(lr->buf);
	lr->buf = NULL;
	lr->cap = lr->have = lr->pos = 0;
}

/* Makes room for at least LR_CHUNK / 2 more bytes; the buffer never exceeds max + LR_CHUNK. */
static int grow(struct line_reader *lr)
{
	size_t ncap;
	char *b;

	if (lr->buf && lr->cap - 1 - lr->have >= LR_CHUNK / 2)
		return 0;
	ncap = MIN(lr->have + LR_CHUNK, lr->max + LR_CHUNK) + 1;
	if (ncap <= lr->cap)
		return 0;
	b = realloc(lr->buf, ncap);
	if (!b)
		return -ENOMEM;
	lr->buf = b;
	lr->cap = ncap;
	return 0;
}

void line_reader__init_interactive(struct line_reader *lr, FILE *in, size_t max)
{
	line_reader__init(lr, in, max);
	lr->by_line = true;
}

/* Interactive input: up to the end of one line, so that each line is answered as it comes
 * (fread() would wait for a whole chunk). */
static size_t read_to_newline(struct line_reader *lr, size_t room)
{
	size_t n = 0;
	int c;

	while (n < room && (c = getc(lr->in)) != EOF) {
		lr->buf[lr->have + n++] = (char)c;
		if (c == '\n')
			break;
	}
	return n;
}

int line_reader__next(struct line_reader *lr, char **line, size_t *len)
{
	size_t n;
	char *p, *nl;
	int err;

	for (;;) {
		/* no buffer before the first read: NULL + 0 is undefined behaviour */
		p = lr->buf ? lr->buf + lr->pos : NULL;
		nl = lr->have > lr->pos ? memchr(p, '\n', lr->have - lr->pos) : NULL;
		if (nl) {
			lr->pos = (size_t)(nl + 1 - lr->buf);
			if (lr->skipping || (size_t)(nl - p) > lr->max) {
				lr->skipping = false;
				lr->skipped++;
				continue;
			}
			*nl = '\0';
			*line = p;
			*len = (size_t)(nl - p);
			return 1;
		}
		/* only part of a line is buffered: keep it, or drop it when it is too long */
		lr->have -= lr->pos;
		if (lr->skipping || lr->have > lr->max) {
			lr->skipping = true;
			lr->have = 0;
		} else if (lr->pos) {
			memmove(lr->buf, p, lr->have);
		}
		lr->pos = 0;
		if (lr->eof) {
			if (lr->skipping) {
				lr->skipping = false;
				lr->skipped++;
			}
			if (!lr->have)
				return 0;
			lr->buf[lr->have] = '\0';
			*line = lr->buf;
			*len = lr->have;
			lr->pos = lr->have;
			return 1;
		}
		err = grow(lr);
		if (err)
			return err;
		errno = 0;
		n = lr->by_line ? read_to_newline(lr, lr->cap - 1 - lr->have)
				: fread(lr->buf + lr->have, 1, lr->cap - 1 - lr->have, lr->in);
		if (!n) {
			if (ferror(lr->in))
				return errno ? -errno : -EIO;
			lr->eof = true;
		}
		lr->have += n;
	}
}

static void print_size(char *out, size_t n, size_t v)
{
	if (v && !(v % (1u << 20)))
		snprintf(out, n, "%zu MiB", v >> 20);
	else if (v && !(v % (1u << 10)))
		snprintf(out, n, "%zu KiB", v >> 10);
	else
		snprintf(out, n, "%zu bytes", v);
}

void line_reader__report(const struct line_reader *lr, const char *what, const char *name)
{
	char size[32];

	if (!lr->skipped)
		return;
	print_size(size, sizeof(size), lr->max);
	pr_warn("%s: %s: %zu line%s over %s skipped\n", what, name, lr->skipped,
		lr->skipped == 1 ? "" : "s", size);
	pr_hint("no valid input has lines that long: is %s the file you meant?\n", name);
}
