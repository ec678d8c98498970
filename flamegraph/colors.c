// SPDX-License-Identifier: MIT
/* flamegraph: frame colours as flamegraph.pl picks them, the annotations they read, and the
 * --cp palette file. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "flamegraph-private.h"

static double unit(uint64_t h)
{
	return (double)(h >> 11) / 9007199254740992.0; /* [0, 1) from the top 53 bits */
}

static struct rgb basic_color(enum flamegraph_palette pal, double v1, double v2, double v3)
{
	struct rgb c;

	switch (pal) {
	case FG_PAL_MEM:
		c = (struct rgb){0, (unsigned char)(190 + 50 * v2), (unsigned char)(210 * v1)};
		break;
	case FG_PAL_IO:
		c.r = c.g = (unsigned char)(80 + 60 * v1);
		c.b = (unsigned char)(190 + 55 * v2);
		break;
	case FG_PAL_RED:
		c.r = (unsigned char)(200 + 55 * v1);
		c.g = c.b = (unsigned char)(50 + 80 * v1);
		break;
	case FG_PAL_GREEN:
		c.r = c.b = (unsigned char)(50 + 60 * v1);
		c.g = (unsigned char)(200 + 55 * v1);
		break;
	case FG_PAL_BLUE:
		c.r = c.g = (unsigned char)(80 + 60 * v1);
		c.b = (unsigned char)(205 + 50 * v1);
		break;
	case FG_PAL_YELLOW:
		c.r = c.g = (unsigned char)(175 + 55 * v1);
		c.b = (unsigned char)(50 + 20 * v1);
		break;
	case FG_PAL_PURPLE:
		c.r = c.b = (unsigned char)(190 + 65 * v1);
		c.g = (unsigned char)(80 + 60 * v1);
		break;
	case FG_PAL_AQUA:
		c.r = (unsigned char)(50 + 60 * v1);
		c.g = c.b = (unsigned char)(165 + 55 * v1);
		break;
	case FG_PAL_ORANGE:
		c.r = (unsigned char)(190 + 65 * v1);
		c.g = (unsigned char)(90 + 65 * v1);
		c.b = 0;
		break;
	default: /* hot */
		c.r = (unsigned char)(205 + 50 * v3);
		c.g = (unsigned char)(230 * v1);
		c.b = (unsigned char)(55 * v2);
		break;
	}
	return c;
}

static bool has(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

static bool java_package(const char *s, size_t len)
{
	static const char *const pkgs[] = {"java/", "javax/", "jdk/", "net/",
					   "org/",  "com/",   "io/",  "sun/"};
	size_t i, n;

	if (len && s[0] == 'L') {
		s++;
		len--;
	}
	for (i = 0; i < ARRAY_SIZE(pkgs); i++) {
		n = strlen(pkgs[i]);
		if (len >= n && !memcmp(s, pkgs[i], n))
			return true;
	}
	return false;
}

/*
 * FG_PAL_CHAIN: a hue family per level of the chain, so that each waker stands apart
 * from the thread it woke: blocked blue and waker aqua (Gregg's chain graphs), then
 * the waker's waker purple, the next green and yellow; deeper levels (not written by
 * record) take purple, green and yellow again.
 */
static enum flamegraph_palette chain_palette(unsigned int level)
{
	static const enum flamegraph_palette pal[] = {FG_PAL_BLUE, FG_PAL_AQUA, FG_PAL_PURPLE,
						      FG_PAL_GREEN, FG_PAL_YELLOW};

	return level < ARRAY_SIZE(pal) ? pal[level] : pal[2 + (level - 2) % 3];
}

/*
 * The semantic palettes pick a basic palette per name; @annot is the
 * annotation letter (k, j, i, w) or 0, @s[0..len) the name without it,
 * @level the frame's chain level ("--" frames below it).
 */
static enum flamegraph_palette pick_palette(enum flamegraph_palette pal, const char *s, size_t len,
					    char annot, unsigned int level)
{
	const char *slash;

	switch (pal) {
	case FG_PAL_JAVA:
		if (annot == 'j')
			return FG_PAL_GREEN;
		if (annot == 'i')
			return FG_PAL_AQUA;
		if (java_package(s, len) || has(s, len, ":::"))
			return FG_PAL_GREEN;
		if (has(s, len, "::"))
			return FG_PAL_YELLOW;
		if (annot == 'k')
			return FG_PAL_ORANGE;
		return FG_PAL_RED;
	case FG_PAL_JS:
		if (annot == 'j')
			return memchr(s, '/', len) ? FG_PAL_GREEN : FG_PAL_AQUA;
		if (has(s, len, "::"))
			return FG_PAL_YELLOW;
		slash = memchr(s, '/', len);
		if (slash && has(slash, len - (size_t)(slash - s), ".js"))
			return FG_PAL_GREEN;
		if (memchr(s, ':', len))
			return FG_PAL_AQUA;
		if (len == 1 && s[0] == ' ')
			return FG_PAL_GREEN;
		if (annot == 'k')
			return FG_PAL_ORANGE;
		return FG_PAL_RED;
	case FG_PAL_PERL:
		if (has(s, len, "::"))
			return FG_PAL_YELLOW;
		if (has(s, len, "Perl") || has(s, len, ".pl"))
			return FG_PAL_GREEN;
		if (annot == 'k')
			return FG_PAL_ORANGE;
		return FG_PAL_RED;
	case FG_PAL_WAKEUP:
		return level ? FG_PAL_BLUE : FG_PAL_AQUA;
	case FG_PAL_CHAIN:
		/* _[w] marks a waker in chains written without separators */
		return chain_palette(!level && annot == 'w' ? 1 : level);
	default:
		return pal;
	}
}

const char *fg_annot__suffix(enum fg_annot annot)
{
	switch (annot) {
	case FG_ANNOT_KERNEL:
		return "_[k]";
	case FG_ANNOT_JIT:
		return "_[j]";
	case FG_ANNOT_INLINE:
		return "_[i]";
	default:
		return "";
	}
}

/* Splits a trailing _[k] _[j] _[i] _[w] annotation off @name; returns its letter or 0. */
char fg_color__annotation(const char *name, size_t *len)
{
	size_t n = *len;

	if (n >= 4 && name[n - 4] == '_' && name[n - 3] == '[' && name[n - 1] == ']' &&
	    strchr("kjiw", name[n - 2]) && name[n - 2]) {
		*len = n - 4;
		return name[n - 2];
	}
	return 0;
}

static struct rgb pal_color(const struct flamegraph_opts *o, enum flamegraph_palette pal,
			    const char *s, size_t len)
{
	uint64_t h1 = hash__bytes(s, len, 0x5c07c4), h2;
	double v1 = unit(h1), v2;

	if (o->hash) {
		/* hue and shade from independent hashes, like flamegraph.pl's --hash */
		h2 = hash__bytes(s, len, 0x9e3779b97f4a7c15ULL);
		v2 = unit(h2);
		return basic_color(pal, v1, v2, v2);
	}
	/* one value per name: the same function has the same colour in every graph */
	return basic_color(pal, v1, v1, v1);
}

struct rgb fg_color__frame(const struct flamegraph_opts *o, const char *s, size_t len, char annot,
			   unsigned int level)
{
	if (len == 1 && s[0] == '-' && !annot)
		return (struct rgb){200, 200, 200};
	if (fg__is_sep(s, len) && !annot)
		return (struct rgb){160, 160, 160};
	return pal_color(o, pick_palette(o->colors, s, len, annot, level), s, len);
}

static unsigned char mix3(double a, unsigned char x, double b, unsigned char y, double c,
			  unsigned char z)
{
	long v = lround(a * x + b * y + c * z);

	return (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/*
 * FG_PAL_WALL: the time-weighted mix of the name's warm (hot), blue (io) and
 * aqua colours by the on-CPU, off-CPU and runqueue time beneath the frame. A
 * mix, not a majority vote, so a half-blocked frame looks half blocked.
 */
struct rgb fg_color__wall(const struct flamegraph_opts *o, const char *s, size_t len,
			     uint64_t width, uint64_t off, uint64_t rq)
{
	struct rgb w = pal_color(o, FG_PAL_HOT, s, len), b = pal_color(o, FG_PAL_IO, s, len);
	struct rgb a = pal_color(o, FG_PAL_AQUA, s, len);
	double fo = width ? (double)off / (double)width : 0;
	double fr = width ? (double)rq / (double)width : 0;
	double fc = 1 - fo - fr;

	if (!off && !rq)
		return w;
	return (struct rgb){mix3(fc, w.r, fo, b.r, fr, a.r), mix3(fc, w.g, fo, b.g, fr, a.g),
			    mix3(fc, w.b, fo, b.b, fr, a.b)};
}

/* ---- consistent palette (--cp): "name->rgb(r,g,b)" lines ---- */


static struct cp_entry *cp_find(const struct cpal *cp, const char *interned)
{
	uint64_t val = hashmap__find(&cp->index, hash__u64((uintptr_t)interned), NULL, NULL);

	return val ? &cp->v[val - 1] : NULL;
}

int cpal__put(struct cpal *cp, const char *name, size_t len, struct rgb c)
{
	const char *in = strset__intern_len(cp->strs, name, len);
	struct cp_entry *e;

	if (!in)
		return -ENOMEM;
	e = cp_find(cp, in);
	if (!e) {
		if (array__grow((void **)&cp->v, &cp->cap, cp->nr + 1, sizeof(*cp->v)) ||
		    hashmap__insert(&cp->index, hash__u64((uintptr_t)in), cp->nr + 1))
			return -ENOMEM;
		e = &cp->v[cp->nr++];
	}
	*e = (struct cp_entry){in, c};
	return 0;
}

const struct cp_entry *cpal__get(struct cpal *cp, const char *name, size_t len)
{
	const char *in;

	if (!cp->nr)
		return NULL;
	in = strset__intern_len(cp->strs, name, len);
	return in ? cp_find(cp, in) : NULL;
}

int cpal__load(struct cpal *cp, const char *path)
{
	char *buf = NULL, *line, *next, *arrow;
	size_t len, bad = 0;
	unsigned r, g, b;
	int err, n;

	cp->strs = strset__new();
	if (!cp->strs)
		return -ENOMEM;
	err = file__read_bounded(AT_FDCWD, path, 256u << 20, &buf, &len);
	if (err == -ENOENT)
		return 0;
	if (err) {
		pr_err("flamegraph: cannot read palette %s: %s\n", path, strerror(-err));
		return err;
	}
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		arrow = NULL;
		for (char *p = strstr(line, "->"); p; p = strstr(p + 1, "->"))
			arrow = p;
		if (!arrow || sscanf(arrow, "->rgb(%u,%u,%u)%n", &r, &g, &b, &n) != 3 || arrow[n] ||
		    r > 255 || g > 255 || b > 255) {
			if (*line)
				bad++;
			continue;
		}
		err = cpal__put(cp, line, (size_t)(arrow - line),
			     (struct rgb){(unsigned char)r, (unsigned char)g, (unsigned char)b});
		if (err)
			goto cleanup;
	}
	if (bad)
		pr_warn("flamegraph: %s: ignored %zu lines with invalid format\n", path, bad);
cleanup:
	free(buf);
	return err;
}

static int cmp_cp(const void *a, const void *b)
{
	return strcmp(((const struct cp_entry *)a)->name, ((const struct cp_entry *)b)->name);
}

int cpal__save(struct cpal *cp, const char *path)
{
	struct cp_entry *all = NULL;
	struct out_file of;
	size_t i, n = cp->nr;
	int err;

	if (!cp->dirty)
		return 0;
	all = malloc(MAX(n, 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	memcpy(all, cp->v, n * sizeof(*all));
	qsort(all, n, sizeof(*all), cmp_cp);
	err = out__open(&of, path);
	if (err)
		goto cleanup;
	for (i = 0; i < n; i++)
		fprintf(of.fp, "%s->rgb(%u,%u,%u)\n", all[i].name, all[i].c.r, all[i].c.g,
			all[i].c.b);
	err = out__close(&of, true);
cleanup:
	free(all);
	return err;
}

void cpal__free(struct cpal *cp)
{
	strset__free(cp->strs);
	free(cp->v);
	hashmap__free(&cp->index);
}

/*
 * Red for growth, blue for shrinkage, white for no change; the further from
 * white, the larger the change relative to the largest one drawn. Any change
 * keeps at least a visible tint (225), so "changed a little" never reads as
 * "unchanged".
 */
struct rgb fg_color__diff(double delta, double maxdelta)
{
	double t = maxdelta > 0 ? fabs(delta) / maxdelta : 0;
	long v = lround(225 - 185 * MIN(t, 1.0));
	unsigned char l = (unsigned char)v;

	if (delta > 0)
		return (struct rgb){255, l, l};
	if (delta < 0)
		return (struct rgb){l, l, 255};
	return (struct rgb){255, 255, 255};
}
