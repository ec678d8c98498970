// SPDX-License-Identifier: MIT
/* symbolize: the /proc/PID/maps parser (input is untrusted; malformed lines are skipped). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize-private.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses a number in @base (16 or 10) at *@p, stopping before @end; at least one digit. */
static bool parse_num(const char **p, const char *end, int base, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	if (s >= end)
		return false;
	for (; s < end; s++) {
		d = base == 16 ? hexval(*s) : (*s >= '0' && *s <= '9' ? *s - '0' : -1);
		if (d < 0)
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * base + d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

/* One line, [p, end) without its newline. Returns false if malformed. */
static bool parse_line(const char *p, const char *end, struct map_entry *e, const char **path,
		       size_t *path_len)
{
	uint64_t major, minor;

	memset(e, 0, sizeof(*e));
	if (!parse_num(&p, end, 16, &e->start) || !expect(&p, end, '-') ||
	    !parse_num(&p, end, 16, &e->end) || !expect(&p, end, ' '))
		return false;
	if (e->end < e->start)
		return false;
	if (end - p < 5)
		return false;
	if (p[0] == 'r')
		e->perms |= MAP_PERM_R;
	else if (p[0] != '-')
		return false;
	if (p[1] == 'w')
		e->perms |= MAP_PERM_W;
	else if (p[1] != '-')
		return false;
	if (p[2] == 'x')
		e->perms |= MAP_PERM_X;
	else if (p[2] != '-')
		return false;
	if (p[3] == 's')
		e->perms |= MAP_PERM_SHARED;
	else if (p[3] != 'p')
		return false;
	p += 4;
	if (!expect(&p, end, ' ') || !parse_num(&p, end, 16, &e->pgoff) || !expect(&p, end, ' ') ||
	    !parse_num(&p, end, 16, &major) || !expect(&p, end, ':') ||
	    !parse_num(&p, end, 16, &minor) || !expect(&p, end, ' ') ||
	    !parse_num(&p, end, 10, &e->inode))
		return false;
	if (major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	e->dev_major = major;
	e->dev_minor = minor;
	/* the path, if any, follows padding; it may itself contain spaces */
	if (p < end && *p != ' ')
		return false;
	while (p < end && *p == ' ')
		p++;
	*path = p;
	*path_len = end - p;
	e->deleted = path__strip_deleted(p, path_len);
	return true;
}

int maps__parse(const char *text, size_t len, struct strset *strs, struct map_entry **out,
		size_t *nr, size_t *bad)
{
	const char *p = text, *end = text + len, *eol, *path;
	struct map_entry *v = NULL, e;
	size_t n = 0, cap = 0, path_len;
	int err = 0;

	*out = NULL;
	*nr = 0;
	*bad = 0;
	for (; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (eol == p)
			continue;
		/* a NUL cannot appear in real maps: treat the line as garbage */
		if (memchr(p, '\0', eol - p) || !parse_line(p, eol, &e, &path, &path_len)) {
			(*bad)++;
			continue;
		}
		e.path = strset__intern_len(strs, path, path_len);
		if (!e.path) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (array__grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			err = -ENOMEM;
			goto cleanup;
		}
		v[n++] = e;
	}
	*out = v;
	*nr = n;
	v = NULL;
cleanup:
	free(v);
	return err;
}
