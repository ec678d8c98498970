// SPDX-License-Identifier: MIT
/* flamegraph: perf script text to folded stacks, line for line as stackcollapse-perf.pl. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "collapse-private.h"

/*
 * The Perl script's two line patterns are reproduced by hand, including how
 * its backtracking resolves odd lines, so that every line is classified and
 * split exactly as it would be there:
 *   header: ^(\S.+?)\s+(\d+)[/]*(\d+)*\s+      then  :\s*(\d+)*\s+(\S+):\s*$
 *   frame:  ^\s*(\w+)\s*(.+) \((.*)\)
 */
struct span {
	const char *p;
	size_t len;
};

struct header {
	struct span comm, pid, tid, period, event;
	bool has_event;
};

static bool match_header(const char *s, size_t n, struct header *h)
{
	size_t L;

	if (n < 3 || collapse__space((unsigned char)s[0]))
		return false;
	/* (\S.+?) is lazy: the shortest comm (2 bytes at least) the rest fits */
	for (L = 2; L < n; L++) {
		size_t p = L, d1, d1e, d2, d2e;

		if (!collapse__space((unsigned char)s[p]))
			continue;
		while (p < n && collapse__space((unsigned char)s[p]))
			p++;
		d1 = p;
		while (p < n && collapse__digit((unsigned char)s[p]))
			p++;
		if (p == d1)
			continue;
		d1e = p;
		while (p < n && s[p] == '/')
			p++;
		d2 = p;
		while (p < n && collapse__digit((unsigned char)s[p]))
			p++;
		d2e = p;
		if (p >= n || !collapse__space((unsigned char)s[p]))
			continue;
		h->comm = (struct span){s, L};
		h->pid = (struct span){s + d1, d1e - d1};
		h->tid = (struct span){s + d2, d2e - d2};
		break;
	}
	if (L >= n)
		return false;

	/* the event: the last token, "EVENT:", after ":" [ws] [PERIOD] ws */
	h->has_event = false;
	h->period = (struct span){NULL, 0};
	{
		size_t e = n, te, t, k, de;

		while (e > 0 && collapse__space((unsigned char)s[e - 1]))
			e--;
		if (!e || s[e - 1] != ':')
			return true;
		te = e - 1;
		t = te;
		while (t > 0 && !collapse__space((unsigned char)s[t - 1]))
			t--;
		if (t == te || !t)
			return true;
		k = t;
		while (k > 0 && collapse__space((unsigned char)s[k - 1]))
			k--;
		de = k;
		while (k > 0 && collapse__digit((unsigned char)s[k - 1]))
			k--;
		if (k < de) {
			size_t d = k;

			while (k > 0 && collapse__space((unsigned char)s[k - 1]))
				k--;
			if (!k || s[k - 1] != ':')
				return true;
			h->period = (struct span){s + d, de - d};
		} else if (!k || s[k - 1] != ':') {
			return true;
		}
		h->event = (struct span){s + t, te - t};
		h->has_event = true;
	}
	return true;
}

struct frame_line {
	struct span pc, func, mod;
};

static bool match_frame(const char *s, size_t n, struct frame_line *f)
{
	size_t p = 0, pcs, pce, q, qmax, r, j = 0;
	bool found = false;

	while (p < n && collapse__space((unsigned char)s[p]))
		p++;
	pcs = p;
	while (p < n && collapse__word((unsigned char)s[p]))
		p++;
	pce = p;
	if (pce == pcs)
		return false;
	while (p < n && collapse__space((unsigned char)s[p]))
		p++;
	qmax = p;
	/* the last ')' closes the module; the last " (" before it opens it */
	for (r = n; r > 0 && s[r - 1] != ')'; r--)
		;
	if (!r)
		return false;
	r--;
	if (r < 2)
		return false;
	for (const char *o = memrchr(s, '(', r); o;
	     o = o > s ? memrchr(s, '(', (size_t)(o - s)) : NULL) {
		if (o > s && o[-1] == ' ') {
			j = (size_t)(o - 1 - s);
			found = true;
			break;
		}
	}
	/* (.+) needs a byte: backtrack \s* and then \w+ until it has one */
	if (!found || j < pcs + 2)
		return false;
	q = MIN(qmax, j - 1);
	f->pc = (struct span){s + pcs, MIN(q, pce) - pcs};
	f->func = (struct span){s + q, j - q};
	f->mod = (struct span){s + j + 2, r - (j + 2)};
	return true;
}

static bool span_eq(struct span a, const char *s)
{
	size_t n = strlen(s);

	return a.len == n && !memcmp(a.p, s, n);
}

static bool span_has(struct span a, const char *s)
{
	return a.len && memmem(a.p, a.len, s, strlen(s)) != NULL;
}

static int set_string(char **dst, struct span s)
{
	char *n = strndup(s.p, s.len);

	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static int header(struct collapser *c, const struct header *h)
{
	struct span pid = h->pid, tid = h->tid;
	size_t off, i;
	int err;

	if (h->has_event) {
		if (!c->event) {
			/* by default only the first event: mixing cycles and instructions misleads
			 */
			err = set_string(&c->event, h->event);
			if (err)
				return err;
			c->event_defaulted = true;
		} else if (!span_eq(h->event, c->event)) {
			if (!c->other_event && set_string(&c->other_event, h->event))
				return -ENOMEM;
			c->st.filtered++;
			return 0;
		}
	}
	c->period = 0;
	if (h->period.len) {
		char buf[32];

		if (h->period.len >= sizeof(buf) ||
		    (memcpy(buf, h->period.p, h->period.len), buf[h->period.len] = '\0',
		     parse__u64(buf, 10, &c->period)))
			c->period = UINT64_MAX; /* more than 20 digits: folded counts saturate */
	}
	if (!c->period)
		c->period = 1;

	/* "comm PID" alone is the TID (perf's default output); "comm PID/TID" both */
	if (!tid.len || (tid.len == 1 && tid.p[0] == '0')) {
		tid = pid;
		pid = (struct span){"?", 1};
	}
	off = collapse__arena_add(c, h->comm.p, h->comm.len);
	if (off == SIZE_MAX)
		return -ENOMEM;
	if (c->opts.tid || c->opts.pid) {
		if (collapse__arena_append(c, "-", 1) || collapse__arena_append(c, pid.p, pid.len))
			return -ENOMEM;
		if (c->opts.tid && (collapse__arena_append(c, "/", 1) ||
				    collapse__arena_append(c, tid.p, tid.len)))
			return -ENOMEM;
	}
	for (i = off; c->arena[i]; i++)
		if (c->arena[i] == ' ')
			c->arena[i] = '_';
	c->pname_off = off;
	c->pname_len = collapse__last_len(c, off);
	/*
	 * The Java tidy-up applies when the process frame is exactly "java": so
	 * with --pid/--tid it does not, as in the corpus results of FlameGraph
	 * (its current script tests /^java/ since commit e54f142, and its own
	 * test results were not regenerated).
	 */
	c->pname_java = !strcmp(c->arena + off, "java");
	c->in_sample = true;
	return 0;
}

/* Perl's /\.\(.*\)\./: a Go method such as "net/http.(*Client).Do"; @open is the first '('. */
static bool go_method(const char *s, size_t n, const char *open)
{
	size_t i;

	while (open && (open == s || open[-1] != '.'))
		open = memchr(open + 1, '(', n - (size_t)(open + 1 - s));
	if (!open)
		return false;
	open--; /* the '.' */
	for (i = n; i >= 2; i--)
		if (s[i - 2] == ')' && s[i - 1] == '.')
			return (size_t)(s + i - 2 - open) >= 2;
	return false;
}

enum {
	CH_SEMI = 1,
	CH_PAREN = 2,
	CH_QUOTE = 4,
	CH_DASH = 8,
};

/* The bytes the tidy-up and the "->" split look for, found in one pass. */
static unsigned int specials(struct span s)
{
	static const unsigned char tab[256] = {
		[';'] = CH_SEMI,   ['('] = CH_PAREN, ['"'] = CH_QUOTE,
		['\''] = CH_QUOTE, ['-'] = CH_DASH,
	};
	unsigned int m = 0;
	size_t i;

	/* @s is NUL-terminated here: let the vectorised strcspn skip the plain prefix */
	for (i = strcspn(s.p, ";(\"'-"); i < s.len; i++)
		m |= tab[(unsigned char)s.p[i]];
	return m;
}

/* What the Perl script's annotations see in a module name; cached, modules repeat. */
static int classify_module(struct collapser *c, struct span mod)
{
	struct cmod *m;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c->mods); i++) {
		m = &c->mods[i];
		if (m->name && m->len == mod.len && !memcmp(m->name, mod.p, mod.len))
			goto found;
	}
	m = &c->mods[c->mod_next++ % ARRAY_SIZE(c->mods)];
	if (array__grow((void **)&m->name, &m->cap, mod.len + 1, 1))
		return -ENOMEM;
	memcpy(m->name, mod.p, mod.len);
	m->name[mod.len] = '\0';
	m->len = mod.len;
	/* kernel: /(^\[|vmlinux$)/ and not /unknown/; JIT: m:/tmp/perf-\d+\.map: */
	m->kernel =
		mod.len &&
		(mod.p[0] == '[' || (mod.len >= 7 && !memcmp(mod.p + mod.len - 7, "vmlinux", 7))) &&
		!span_has(mod, "unknown");
	m->jit = collapse__is_perf_map(mod.p, mod.len);
found:
	c->mod_kernel = m->kernel;
	c->mod_jit = m->jit;
	return 0;
}

/* One "->"-separated part of a frame line, tidied and annotated, into the arena. */
static int frame_part(struct collapser *c, const struct frame_line *f, struct span part,
		      size_t index, unsigned int ch)
{
	enum fg_annot annot = FG_ANNOT_NONE;
	size_t off, len, i, o;
	const char *sfx;
	char *s;

	if (span_eq(part, "[unknown]")) {
		struct span base = {"unknown", 7};

		if (!span_eq(f->mod, "[unknown]")) {
			const char *slash = memrchr(f->mod.p, '/', f->mod.len);

			base = f->mod;
			if (slash)
				base = (struct span){slash + 1,
						     f->mod.len - (size_t)(slash + 1 - f->mod.p)};
		}
		off = collapse__arena_add(c, "[", 1);
		if (off == SIZE_MAX || collapse__arena_append(c, base.p, base.len))
			return -ENOMEM;
		if (c->opts.addrs && (collapse__arena_append(c, " <", 2) ||
				      collapse__arena_append(c, f->pc.p, f->pc.len)))
			return -ENOMEM;
		if (c->opts.addrs ? collapse__arena_append(c, ">]", 2)
				  : collapse__arena_append(c, "]", 1))
			return -ENOMEM;
	} else {
		off = collapse__arena_add(c, part.p, part.len);
		if (off == SIZE_MAX)
			return -ENOMEM;
	}
	s = c->arena + off;
	len = collapse__last_len(c, off);
	if (s[0] == '[') /* a module's name: its own bytes decide */
		ch = specials((struct span){s, len});

	/* tidy: ';' -> ':', arguments cut (not an "(anonymous namespace)"), quotes dropped */
	if (!(ch & (CH_SEMI | CH_PAREN | CH_QUOTE)))
		goto tidy_done;
	for (char *p = memchr(s, ';', len); p; p = memchr(p, ';', len - (size_t)(p - s)))
		*p = ':';
	{
		static const char anon[] = "anonymous namespace)";
		char *p = memchr(s, '(', len);

		if (p && !go_method(s, len, p)) {
			for (; p; p = memchr(p + 1, '(', len - (size_t)(p + 1 - s))) {
				size_t rest = len - (size_t)(p + 1 - s);

				if (rest < sizeof(anon) - 1 ||
				    memcmp(p + 1, anon, sizeof(anon) - 1)) {
					len = (size_t)(p - s);
					break;
				}
			}
		}
	}
	if (memchr(s, '"', len) || memchr(s, '\'', len)) {
		for (i = o = 0; i < len; i++)
			if (s[i] != '"' && s[i] != '\'')
				s[o++] = s[i];
		len = o;
	}
	s[len] = '\0';
tidy_done:
	if (c->pname_java && memchr(s, '/', len) && s[0] == 'L') {
		memmove(s, s + 1, len);
		len--;
	}
	c->arena_len = off + len + 1;

	if (index > 0)
		annot = FG_ANNOT_INLINE;
	else if (c->opts.annotate_kernel && c->mod_kernel)
		annot = FG_ANNOT_KERNEL;
	else if (c->opts.annotate_jit && c->mod_jit)
		annot = FG_ANNOT_JIT;
	sfx = fg_annot__suffix(annot);
	/* as the Perl script: "_[i]" and "_[j]" once (the name may hold it), "_[k]" always */
	if (annot != FG_ANNOT_KERNEL && memchr(s, '[', len) && strstr(s, sfx))
		sfx = "";
	if (*sfx && collapse__arena_append(c, sfx, FG_ANNOT_LEN))
		return -ENOMEM;
	return collapse__push_frame(c, off, collapse__last_len(c, off), c->group);
}

static int frame(struct collapser *c, struct frame_line *f)
{
	struct span fn = f->func, parts[64];
	size_t nr = 0, i, start;
	unsigned int ch;
	int err;

	/* "+0x1f" offsets (Linux 4.8+) go */
	{
		size_t e = fn.len, h = e;

		while (h > 0 && ((fn.p[h - 1] >= '0' && fn.p[h - 1] <= '9') ||
				 (fn.p[h - 1] >= 'a' && fn.p[h - 1] <= 'f')))
			h--;
		if (h < e && h >= 3 && !memcmp(fn.p + h - 3, "+0x", 3))
			fn.len = h - 3;
	}
	if (fn.len && fn.p[0] == '(')
		return 0; /* a process name, not a frame */

	/* split /->/: empty fields kept, except trailing ones */
	start = 0;
	/* the byte after the name is the " (" of the module, or a '+' of the offset: ours */
	((char *)fn.p)[fn.len] = '\0';
	ch = specials(fn);
	for (const char *a = ch & CH_DASH ? memchr(fn.p, '-', fn.len) : NULL; a;
	     a = memchr(a, '-', fn.len - (size_t)(a - fn.p))) {
		i = (size_t)(a - fn.p);
		if (i + 1 < fn.len && a[1] == '>' && nr + 1 < ARRAY_SIZE(parts)) {
			parts[nr++] = (struct span){fn.p + start, i - start};
			start = i + 2;
			a += 2;
		} else {
			a++;
		}
		if (a >= fn.p + fn.len)
			break;
	}
	parts[nr++] = (struct span){fn.p + start, fn.len - start};
	while (nr && !parts[nr - 1].len)
		nr--;

	err = classify_module(c, f->mod);
	if (err)
		return err;
	c->group++;
	for (i = 0; i < nr; i++) {
		err = frame_part(c, f, parts[i], i, ch);
		if (err)
			return err;
	}
	return 0;
}

/* A blank line ends the sample: process frame, then the lines' frames, last line first. */
static int end_sample(struct collapser *c)
{
	size_t *order = NULL, n = 0, i, j;
	int err = -ENOMEM;

	order = malloc((c->nr_frames + 1) * sizeof(*order));
	if (!order)
		goto cleanup;
	err = collapse__push_frame(c, c->pname_off, c->pname_len, 0);
	if (err)
		goto cleanup;
	order[n++] = c->nr_frames - 1;
	for (i = c->nr_frames - 1; i > 0;) {
		uint32_t g = c->frames[i - 1].group;

		for (j = i; j > 0 && c->frames[j - 1].group == g; j--)
			;
		for (size_t k = j; k < i; k++)
			order[n++] = k;
		i = j;
	}
	err = collapse__emit(c, order, n, c->period);
cleanup:
	free(order);
	collapse__reset_sample(c);
	c->in_sample = false;
	return err;
}

int collapse_perf__line(struct collapser *c, char *line, size_t len)
{
	struct header h;
	struct frame_line f;

	if (len && line[0] == '#')
		return 0;
	if (!len)
		return c->in_sample ? end_sample(c) : 0;
	if (match_header(line, len, &h))
		return header(c, &h);
	if (match_frame(line, len, &f))
		return c->in_sample ? frame(c, &f) : 0;
	collapse__bad_line(c, line, len);
	return 0;
}

int collapse_perf__end(struct collapser *c)
{
	if (c->in_sample)
		c->st.truncated++;
	collapse__reset_sample(c);
	c->in_sample = false;
	return 0;
}
