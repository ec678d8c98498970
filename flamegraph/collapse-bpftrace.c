// SPDX-License-Identifier: MIT
/* flamegraph: bpftrace map output of stacks (@[kstack, ustack, comm] = count()) to folded stacks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "collapse-private.h"

#define STACK_MARK '\x01' /* stands for a stack in the key's text */

int collapse_bt__parse_keys(struct collapser *c, const char *keys)
{
	const char *p = keys;
	bool kstack = false, ustack = false;

	c->nr_keys = 0;
	c->keys_text = strdup(keys);
	if (!c->keys_text)
		return -ENOMEM;
	for (;;) {
		size_t n = strcspn(p, ",");

		while (n && *p == ' ')
			p++, n--;
		while (n && p[n - 1] == ' ')
			n--;
		if (!n || c->nr_keys == COLLAPSE_MAX_KEYS)
			goto bad;
		for (size_t i = 0; i < n; i++)
			if (!collapse__word((unsigned char)p[i]))
				goto bad;
		if (n == 6 && !memcmp(p, "kstack", 6)) {
			if (kstack)
				goto bad;
			kstack = true;
			c->keys[c->nr_keys++] = BT_KEY_KSTACK;
		} else if (n == 6 && !memcmp(p, "ustack", 6)) {
			if (ustack)
				goto bad;
			ustack = true;
			c->keys[c->nr_keys++] = BT_KEY_USTACK;
		} else {
			c->keys[c->nr_keys++] = BT_KEY_SCALAR;
		}
		p += strcspn(p, ",");
		if (!*p)
			break;
		p++;
	}
	return 0;
bad:
	pr_err("collapse: invalid bpftrace key list '%s'\n", keys);
	pr_hint("name the map's key elements in order, separated by commas, at most %d, with "
		"kstack and ustack at most once each: e.g. kstack,ustack,comm or ustack\n",
		COLLAPSE_MAX_KEYS);
	return -EINVAL;
}

static int key_add(struct collapser *c, const char *s, size_t len)
{
	if (len >= SIZE_MAX - c->key_len ||
	    array__grow((void **)&c->key, &c->key_cap, c->key_len + len + 1, 1))
		return -ENOMEM;
	memcpy(c->key + c->key_len, s, len);
	c->key_len += len;
	c->key[c->key_len] = '\0';
	return 0;
}

static void describe_key(const struct collapser *c, char *buf, size_t size, char **elems, size_t nr)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nr && o + 1 < size; i++) {
		const char *what = elems[i][0] == STACK_MARK ? "a stack"
				   : elems[i][0]	     ? "a value"
							     : "empty";

		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", what);
	}
	(void)c;
}

static int shape_error(struct collapser *c, char **elems, size_t nr, const char *why)
{
	char shape[256];

	describe_key(c, shape, sizeof(shape), elems, nr);
	pr_err("collapse: %s:%zu: bpftrace map key (%s) does not match the keys %s: %s\n", c->name,
	       c->record_lineno, shape, c->keys_text, why);
	pr_hint("name the map's key elements in order with --bpftrace-keys, e.g. "
		"--bpftrace-keys ustack for @[ustack] = count()\n");
	return -EINVAL;
}

/* One frame line of a stack: "SYM+OFF", "0xADDR" or, in perf mode, "ADDR SYM+OFF (MODULE)". */
static int frame(struct collapser *c, const char *s, size_t n)
{
	const char *mod = NULL;
	size_t mod_len = 0, off, e, h;
	bool kernel = c->nr_stacks && c->keys[c->cur_stack_key] == BT_KEY_KSTACK;
	enum fg_annot annot = FG_ANNOT_NONE;

	bool perf_mode = n && s[0] == '\t'; /* bpftrace's own mode indents with spaces */

	while (n && collapse__space((unsigned char)*s))
		s++, n--;
	while (n && collapse__space((unsigned char)s[n - 1]))
		n--;
	/* perf mode: a hex address, a space, the symbol, " (module)" for user frames */
	h = 0;
	while (h < n && ((s[h] >= '0' && s[h] <= '9') || (s[h] >= 'a' && s[h] <= 'f')))
		h++;
	if (perf_mode && h && h + 1 < n && s[h] == ' ') {
		if (s[n - 1] == ')') {
			for (size_t j = n - 1; j-- > h + 2;) {
				if (s[j] == '(' && s[j - 1] == ' ') {
					mod = s + j + 1;
					mod_len = n - 1 - (j + 1);
					n = j - 1;
					break;
				}
			}
		}
		s += h + 1;
		n -= h + 1;
	}
	/* "+OFFSET": decimal in bpftrace's mode, 0x hex in perf's */
	e = n;
	while (e && ((s[e - 1] >= '0' && s[e - 1] <= '9') || (s[e - 1] >= 'a' && s[e - 1] <= 'f')))
		e--;
	if (e >= 3 && e < n && !memcmp(s + e - 3, "+0x", 3)) {
		n = e - 3;
	} else {
		e = n;
		while (e && collapse__digit((unsigned char)s[e - 1]))
			e--;
		if (e >= 2 && e < n && s[e - 1] == '+')
			n = e - 1;
	}
	off = collapse__arena_add(c, s, n);
	if (off == SIZE_MAX)
		return -ENOMEM;
	if (kernel && c->opts.annotate_kernel)
		annot = FG_ANNOT_KERNEL;
	else if (!kernel && c->opts.annotate_jit && mod && collapse__is_perf_map(mod, mod_len))
		annot = FG_ANNOT_JIT;
	if (annot && collapse__arena_append(c, fg_annot__suffix(annot), FG_ANNOT_LEN))
		return -ENOMEM;
	return collapse__push_frame(c, off, collapse__last_len(c, off), (uint32_t)c->nr_stacks - 1);
}

/* The key's text is complete ("...]: COUNT"): check its shape and add the stack. */
static int end_record(struct collapser *c)
{
	char *elems[COLLAPSE_MAX_KEYS + 1], *p, *end, *colon;
	size_t nr = 0, nr_order = 0, i, stack_idx = 0, stacks_of[COLLAPSE_MAX_KEYS];
	size_t *order = NULL, kstack = SIZE_MAX, ustack = SIZE_MAX, first_scalar;
	uint64_t count;
	int err = 0;

	colon = c->key + c->key_len;
	while (colon > c->key && collapse__digit((unsigned char)colon[-1]))
		colon--;
	if (colon < c->key + 3 || memcmp(colon - 3, "]: ", 3) || parse__u64(colon, 10, &count)) {
		pr_err("collapse: %s:%zu: bpftrace map value is not an integer count\n", c->name,
		       c->lineno);
		pr_hint("collapse reads maps of counts: @[kstack, ustack, comm] = count()\n");
		return -EINVAL;
	}
	colon[-3] = '\0';
	end = colon - 3;
	/* split at ", " (values with ", " in them are caught by the shape check) */
	for (p = c->key;;) {
		char *sep = strstr(p, ", ");

		if (nr == ARRAY_SIZE(elems))
			return shape_error(c, elems, nr, "too many elements");
		elems[nr++] = p;
		if (!sep || sep >= end)
			break;
		*sep = '\0';
		p = sep + 2;
	}
	if (nr != c->nr_keys)
		return shape_error(c, elems, nr, "not as many elements");
	for (i = 0; i < nr; i++) {
		bool is_stack = elems[i][0] == STACK_MARK;

		if (is_stack && elems[i][1])
			return shape_error(c, elems, nr, "a stack with text next to it");
		if (is_stack && c->keys[i] == BT_KEY_SCALAR)
			return shape_error(c, elems, nr, "a stack where a value was named");
		if (!is_stack && elems[i][0] && c->keys[i] != BT_KEY_SCALAR)
			return shape_error(c, elems, nr, "a value where a stack was named");
		stacks_of[i] = SIZE_MAX;
		if (is_stack)
			stacks_of[i] = stack_idx++;
		if (c->keys[i] == BT_KEY_KSTACK)
			kstack = stacks_of[i];
		else if (c->keys[i] == BT_KEY_USTACK)
			ustack = stacks_of[i];
	}

	order = malloc((c->nr_frames + nr + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	/* scalars first (root), then the user stack, then the kernel stack, each root first */
	first_scalar = c->nr_frames;
	for (i = 0; i < nr; i++) {
		size_t off;

		if (c->keys[i] != BT_KEY_SCALAR)
			continue;
		off = collapse__arena_add(c, elems[i], strlen(elems[i]));
		if (off == SIZE_MAX ||
		    collapse__push_frame(c, off, collapse__last_len(c, off), UINT32_MAX)) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	for (i = first_scalar; i < c->nr_frames; i++)
		order[nr_order++] = i;
	for (int pass = 0; pass < 2; pass++) {
		size_t s = pass ? kstack : ustack;

		if (s == SIZE_MAX)
			continue;
		for (i = first_scalar; i-- > 0;)
			if (c->frames[i].group == s)
				order[nr_order++] = i;
	}
	if (!nr_order) {
		/* nothing at all (e.g. @[kstack] of a sample in user space): one "[empty]" frame */
		size_t off = collapse__arena_add(c, "", 0);

		if (off == SIZE_MAX ||
		    collapse__push_frame(c, off, collapse__last_len(c, off), UINT32_MAX)) {
			err = -ENOMEM;
			goto cleanup;
		}
		order[nr_order++] = c->nr_frames - 1;
	}
	err = collapse__emit(c, order, nr_order, count);
cleanup:
	free(order);
	collapse__reset_sample(c);
	c->in_record = false;
	c->key_len = 0;
	c->nr_stacks = 0;
	return err;
}

static bool key_complete(const char *s, size_t n)
{
	size_t e = n;

	while (e && collapse__digit((unsigned char)s[e - 1]))
		e--;
	return e < n && e >= 3 && !memcmp(s + e - 3, "]: ", 3);
}

/* Text of the key (not a frame): appended, with \x01 bytes in it made '?'. */
static int key_text(struct collapser *c, char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == STACK_MARK)
			s[i] = '?';
	if (key_add(c, s, n))
		return -ENOMEM;
	c->last_was_frame = false;
	if (key_complete(s, n))
		return end_record(c);
	while (n && s[n - 1] == ' ')
		n--;
	/* "]: -5", "]: 1.5" (sum(), avg()) or "]:" and a histogram on the next lines */
	if ((n >= 2 && !memcmp(s + n - 2, "]:", 2)) || memmem(s, n, "]: ", 3)) {
		/* "@[key]:" then a histogram or another value on its own lines */
		pr_err("collapse: %s:%zu: bpftrace map value is not an integer count\n", c->name,
		       c->lineno);
		pr_hint("collapse reads maps of counts: @[kstack, ustack, comm] = count()\n");
		return -EINVAL;
	}
	return 0;
}

int collapse_bt__line(struct collapser *c, char *line, size_t len)
{
	if (!c->in_record) {
		char *open;
		size_t name_len;

		if (!len || (len >= 10 && !memcmp(line, "Attaching ", 10)))
			return 0;
		if (line[0] != '@') {
			collapse__bad_line(c, line, len);
			return 0;
		}
		name_len = strcspn(line, "[:");
		open = line + name_len;
		if (*open != '[') {
			pr_err("collapse: %s:%zu: bpftrace map %.*s has no key: no stacks to "
			       "read\n",
			       c->name, c->lineno, (int)MIN(name_len, (size_t)64), line);
			pr_hint("collapse reads maps keyed by stacks: @[kstack, ustack, comm] = "
				"count()\n");
			return -EINVAL;
		}
		if (!c->map_name) {
			c->map_name = strndup(line, name_len);
			if (!c->map_name)
				return -ENOMEM;
		} else if (strlen(c->map_name) != name_len || memcmp(c->map_name, line, name_len)) {
			pr_err("collapse: %s:%zu: a second bpftrace map, %.*s, after %s\n", c->name,
			       c->lineno, (int)MIN(name_len, (size_t)64), line, c->map_name);
			pr_hint("print one map per file: their counts would mix\n");
			return -EINVAL;
		}
		c->in_record = true;
		c->record_lineno = c->lineno;
		c->key_len = 0;
		c->nr_stacks = 0;
		c->last_was_frame = false;
		collapse__reset_sample(c);
		return key_text(c, open + 1, len - name_len - 1);
	}
	if (len && line[0] == '@') {
		pr_err("collapse: %s:%zu: bpftrace map entry of line %zu has no \"]: COUNT\" end\n",
		       c->name, c->lineno, c->record_lineno);
		pr_hint("collapse reads maps of counts: @[kstack, ustack, comm] = count()\n");
		return -EINVAL;
	}
	if (len && (line[0] == ' ' || line[0] == '\t')) {
		if (!c->last_was_frame) {
			char mark = STACK_MARK;
			size_t elem = 0;

			/* which key element this stack is: count the separators so far */
			for (size_t i = 0; i + 1 < c->key_len; i++)
				if (c->key[i] == ',' && c->key[i + 1] == ' ')
					elem++;
			if (elem >= c->nr_keys || c->nr_stacks == COLLAPSE_MAX_KEYS) {
				pr_err("collapse: %s:%zu: bpftrace map key has more elements than "
				       "the "
				       "keys %s\n",
				       c->name, c->lineno, c->keys_text);
				pr_hint("name the map's key elements in order with "
					"--bpftrace-keys\n");
				return -EINVAL;
			}
			if (c->keys[elem] == BT_KEY_SCALAR) {
				pr_err("collapse: %s:%zu: bpftrace map key has a stack as element "
				       "%zu, "
				       "named a value in the keys %s\n",
				       c->name, c->lineno, elem + 1, c->keys_text);
				pr_hint("name the map's key elements in order with "
					"--bpftrace-keys, "
					"e.g. --bpftrace-keys ustack for @[ustack] = count()\n");
				return -EINVAL;
			}
			c->cur_stack_key = elem;
			if (key_add(c, &mark, 1))
				return -ENOMEM;
			c->nr_stacks++;
			c->last_was_frame = true;
		}
		return frame(c, line, len);
	}
	return key_text(c, line, len);
}

int collapse_bt__end(struct collapser *c)
{
	if (c->in_record)
		c->st.truncated++;
	c->in_record = false;
	collapse__reset_sample(c);
	return 0;
}
