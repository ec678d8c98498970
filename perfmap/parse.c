// SPDX-License-Identifier: MIT
/* perfmap: parsers of perf-map text and jitdump records (untrusted input, never trusted). */
#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap-private.h"

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads "[0x]HEX" at *p; at least one digit, no overflow. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d, n = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (s < end && (d = hexval(*s)) >= 0) {
		if (v >> 60)
			return false;
		v = v << 4 | (uint64_t)d;
		s++;
		n++;
	}
	if (!n)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *intern_name(struct strset *strs, const char *name, size_t len)
{
	const char *nul = memchr(name, '\0', len);
	const char *ret;
	char *copy;
	size_t i;

	if (!nul)
		return strset__intern_len(strs, name, len);
	copy = malloc(len);
	if (!copy)
		return NULL;
	for (i = 0; i < len; i++)
		copy[i] = name[i] ? name[i] : '?';
	ret = strset__intern_len(strs, copy, len);
	free(copy);
	return ret;
}

int pm_text__line(const char *line, size_t len, struct pm_sink *sink)
{
	const char *p = line, *end = line + len, *name;
	uint64_t start, size;

	if (!parse_hex(&p, end, &start) || p == end || !is_blank(*p))
		goto bad;
	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, &size) || p == end || !is_blank(*p))
		goto bad;
	p++; /* exactly one separator: the name keeps any further bytes (perf's rule) */
	if (p == end || !size || start + size < start)
		goto bad;
	name = intern_name(sink->strs, p, end - p);
	if (!name || pm_index__add(sink->ix, start, start + size, 0, name))
		return -ENOMEM;
	sink->st->lines_parsed++;
	return 0;
bad:
	sink->st->lines_bad++;
	return 0;
}

size_t pm_text__parse(struct pm_text_state *ts, const char *buf, size_t len, bool final,
		      struct pm_sink *sink, int *err)
{
	size_t pos = 0, n;
	const char *nl;

	*err = 0;
	while (pos < len) {
		nl = memchr(buf + pos, '\n', len - pos);
		if (ts->skipping) {
			if (!nl)
				return len;
			ts->skipping = false;
			pos = nl - buf + 1;
			continue;
		}
		n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		if (n > PM_MAX_LINE) {
			sink->st->lines_bad++;
			if (!nl) {
				ts->skipping = true;
				return len;
			}
			pos += n + 1;
			continue;
		}
		if (!nl && !final)
			break;
		*err = pm_text__line(buf + pos, n, sink);
		if (*err)
			break;
		pos += n + (nl ? 1 : 0);
	}
	return pos;
}

static uint32_t rd32(const struct pm_jd_state *js, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return js->swap ? bswap_32(v) : v;
}

static uint64_t rd64(const struct pm_jd_state *js, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return js->swap ? bswap_64(v) : v;
}

void pm_jd__reset(struct pm_jd_state *js)
{
	hashmap__free(&js->codes);
	memset(js, 0, sizeof(*js));
}

/* The name of @index is now @name (interned). 0 or -ENOMEM. */
static int code_put(struct pm_jd_state *js, uint64_t index, const char *name)
{
	uint64_t h = hash__u64(index);

	hashmap__remove(&js->codes, h, NULL, NULL);
	return hashmap__insert(&js->codes, h, (uintptr_t)name);
}

static const char *code_get(const struct pm_jd_state *js, uint64_t index)
{
	return (const char *)(uintptr_t)hashmap__find(&js->codes, hash__u64(index), NULL, NULL);
}

/* LOAD: the fixed part and a NUL-terminated name must lie inside the record (and in r[0..n)). */
static int jd_load(struct pm_jd_state *js, const uint8_t *r, size_t n, uint32_t total, uint64_t ts,
		   struct pm_sink *sink)
{
	const uint8_t *nm = r + JITDUMP_REC_HDR_SIZE + JITDUMP_LOAD_FIXED, *nul;
	uint64_t addr, size, index;
	const char *name;
	size_t lim;

	if (total < JITDUMP_REC_HDR_SIZE + JITDUMP_LOAD_FIXED + 1 ||
	    n < JITDUMP_REC_HDR_SIZE + JITDUMP_LOAD_FIXED + 1)
		goto bad;
	lim = MIN(n, (size_t)total) - (JITDUMP_REC_HDR_SIZE + JITDUMP_LOAD_FIXED);
	nul = memchr(nm, '\0', lim);
	if (!nul || nul == nm)
		goto bad;
	/* vma (offset 8) is 0 in LLVM's files; perf uses code_addr, and so do we */
	addr = rd64(js, r + JITDUMP_REC_HDR_SIZE + 16);
	size = rd64(js, r + JITDUMP_REC_HDR_SIZE + 24);
	index = rd64(js, r + JITDUMP_REC_HDR_SIZE + 32);
	if (!size || addr + size < addr)
		goto bad;
	name = strset__intern_len(sink->strs, (const char *)nm, nul - nm);
	if (!name || pm_index__add(sink->ix, addr, addr + size, ts, name) ||
	    code_put(js, index, name))
		return -ENOMEM;
	sink->st->records_parsed++;
	return 0;
bad:
	sink->st->records_bad++;
	return 0;
}

static int jd_move(struct pm_jd_state *js, const uint8_t *r, uint32_t total, uint64_t ts,
		   struct pm_sink *sink)
{
	uint64_t addr, size, index;
	const char *name;

	if (total < JITDUMP_REC_HDR_SIZE + JITDUMP_MOVE_FIXED)
		goto bad;
	addr = rd64(js, r + JITDUMP_REC_HDR_SIZE + 24); /* new_code_addr */
	size = rd64(js, r + JITDUMP_REC_HDR_SIZE + 32);
	index = rd64(js, r + JITDUMP_REC_HDR_SIZE + 40);
	name = code_get(js, index);
	if (!name || !size || addr + size < addr)
		goto bad;
	if (pm_index__add(sink->ix, addr, addr + size, ts, name))
		return -ENOMEM;
	sink->st->records_parsed++;
	return 0;
bad:
	sink->st->records_bad++;
	return 0;
}

/* DEBUG_INFO is validated (every entry and its file name inside the record), not used. */
static void jd_debug(struct pm_jd_state *js, const uint8_t *r, uint32_t total, struct pm_sink *sink)
{
	const uint8_t *p = r + JITDUMP_REC_HDR_SIZE + JITDUMP_DEBUG_FIXED, *end = r + total;
	uint64_t nr, i;

	if (total < JITDUMP_REC_HDR_SIZE + JITDUMP_DEBUG_FIXED)
		goto bad;
	nr = rd64(js, r + JITDUMP_REC_HDR_SIZE + 8);
	for (i = 0; i < nr; i++) {
		if ((size_t)(end - p) < JITDUMP_DEBUG_ENTRY + 1)
			goto bad;
		p += JITDUMP_DEBUG_ENTRY;
		p = memchr(p, '\0', end - p);
		if (!p)
			goto bad;
		p++;
	}
	sink->st->records_other++;
	return;
bad:
	sink->st->records_bad++;
}

static uint64_t jd_header(struct pm_jd_state *js, const uint8_t *buf, size_t len, uint64_t avail,
			  size_t *need)
{
	uint32_t magic, total;

	if (len < JITDUMP_HEADER_SIZE) {
		*need = avail >= JITDUMP_HEADER_SIZE ? JITDUMP_HEADER_SIZE : 0;
		return 0;
	}
	memcpy(&magic, buf, sizeof(magic));
	if (magic == JITDUMP_MAGIC_SWAPPED)
		js->swap = true;
	else if (magic != JITDUMP_MAGIC)
		goto broken;
	total = rd32(js, buf + 8);
	if (rd32(js, buf + 4) < 1 || total < JITDUMP_HEADER_SIZE || total > PM_JD_MAX_INBUF)
		goto broken;
	if (avail < total) {
		*need = 0;
		return 0;
	}
	js->arch_ts = rd64(js, buf + 32) & JITDUMP_FLAGS_ARCH_TS;
	js->have_header = true;
	return total;
broken:
	js->broken = true;
	return 0;
}

uint64_t pm_jd__parse(struct pm_jd_state *js, const uint8_t *buf, size_t len, uint64_t avail,
		      size_t *need, struct pm_sink *sink, int *err)
{
	uint64_t pos = 0, ts;
	uint32_t id, total;
	const uint8_t *r;
	size_t have;

	*err = 0;
	*need = 0;
	if (js->broken || js->closed)
		return 0;
	if (!js->have_header) {
		pos = jd_header(js, buf, len, avail, need);
		if (!js->have_header)
			return 0;
	}
	while (pos < len) {
		r = buf + pos;
		have = len - pos;
		if (have < JITDUMP_REC_HDR_SIZE) {
			if (avail - pos >= JITDUMP_REC_HDR_SIZE)
				*need = JITDUMP_REC_HDR_SIZE;
			break;
		}
		id = rd32(js, r);
		total = rd32(js, r + 4);
		ts = js->arch_ts ? 0 : rd64(js, r + 8);
		if (total < JITDUMP_REC_HDR_SIZE) {
			/* no way to find the next record */
			js->broken = true;
			sink->st->records_bad++;
			break;
		}
		if (avail - pos < total)
			break; /* still being written */
		if (have < total && have < PM_JD_MAX_INBUF) {
			*need = MIN((size_t)total, (size_t)PM_JD_MAX_INBUF);
			break;
		}
		switch (id) {
		case JIT_CODE_LOAD:
			*err = jd_load(js, r, have, total, ts, sink);
			break;
		case JIT_CODE_MOVE:
			*err = jd_move(js, r, total, ts, sink);
			break;
		case JIT_CODE_DEBUG_INFO:
			if (have >= total)
				jd_debug(js, r, total, sink);
			else
				sink->st->records_other++; /* too big to check: skipped */
			break;
		case JIT_CODE_CLOSE:
			js->closed = true;
			sink->st->records_other++;
			break;
		default: /* UNWINDING_INFO and ids from later versions */
			sink->st->records_other++;
			break;
		}
		if (*err)
			break;
		pos += total;
		if (js->closed)
			break;
	}
	return pos;
}
