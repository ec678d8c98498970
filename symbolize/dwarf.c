// SPDX-License-Identifier: MIT
/* symbolize: DWARF indexed once per file (function and inline ranges, line tables). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf-private.h"

/* Releases the file's DWARF (libdw's state, the sections read and decompressed). */
static void dw_close(struct dwarf_index *idx)
{
	size_t i;

	dwarf_end(idx->dw);
	elf_end(idx->elf);
	for (i = 0; i < idx->nr_bufs; i++)
		free(idx->bufs[i]);
	free(idx->bufs);
	dw_cache__unmap(&idx->map);
	idx->dw = NULL;
	idx->elf = NULL;
	idx->bufs = NULL;
	idx->nr_bufs = 0;
	idx->nr_secs = 0;
}

void dwarf_index__free(struct dwarf_index *idx)
{
	if (!idx)
		return;
	dw_close(idx);
	strset__free(idx->strs);
	free(idx->scopes);
	free(idx->segs);
	free(idx->lines);
	free(idx->files);
	free(idx->units);
	free(idx->spans);
	free(idx);
}

size_t dwarf_index__bytes(const struct dwarf_index *idx)
{
	if (!idx)
		return 0;
	return idx->cap_scopes * sizeof(*idx->scopes) + idx->cap_segs * sizeof(*idx->segs) +
	       idx->cap_lines * sizeof(*idx->lines) + idx->cap_files * sizeof(*idx->files) +
	       idx->cap_units * sizeof(*idx->units) + idx->cap_spans * sizeof(*idx->spans);
}

void dwarf_index__units(const struct dwarf_index *idx, size_t *read, size_t *total)
{
	*read = idx ? idx->units_read : 0;
	*total = idx ? idx->nr_units : 0;
}

bool dwarf_index__incomplete(const struct dwarf_index *idx)
{
	return idx && (idx->bad || idx->truncated);
}

/*
 * libdw hands out strings as pointers into the section data without checking that an
 * inline (DW_FORM_string) value is NUL-terminated before the end of .debug_info, so a
 * corrupt file could make strlen() read past the buffer. A string inside one of the
 * file's sections must end inside it; strings elsewhere are libdw's own (file names it
 * joined with their directory) or from a supplementary file, and are taken as given.
 */
static bool is_str_section(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return (n > 4 && !strcmp(name + n - 4, "_str")) ||
	       (n > 8 && !strcmp(name + n - 8, "_str.dwo"));
}

/*
 * Records the sections for dw_string(), and checks that every string section (.debug_str,
 * .debug_line_str, ...) ends with a NUL: libdw 0.188 reads the file names of DWARF 5
 * line tables from .debug_line_str with strlen() and would run off the end of a cut one.
 * libdw finds its sections by name (.debug_*, .zdebug_*) whatever their type and flags
 * say, so those are the ones recorded, an SHF_ALLOC or non-PROGBITS one included (a
 * corrupt file marked its .debug_str SHF_ALLOC, which went unchecked once). Returns false
 * for such a file, or one with more of them than can be checked (its DWARF is not used).
 */
static bool dw_sections(struct dwarf_index *idx, Elf *elf)
{
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return true; /* no section names: libdw finds no DWARF either */
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug", 6) && strncmp(name, ".zdebug", 7)))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size)
			continue;
		if (is_str_section(name) && ((const char *)d->d_buf)[d->d_size - 1] != '\0')
			return false;
		if (idx->nr_secs == DW_MAX_STR_SECS)
			return false;
		idx->secs[idx->nr_secs++] = (struct dw_sec){d->d_buf, (char *)d->d_buf + d->d_size};
	}
	return true;
}

static const char *dw_string(struct dw_build *b, const char *s)
{
	const struct dw_sec *secs = b->idx->secs;
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < b->idx->nr_secs; i++) {
		if (s < secs[i].lo || s >= secs[i].hi)
			continue;
		if (memchr(s, '\0', (size_t)(secs[i].hi - s)))
			return s;
		b->bad = true;
		return NULL;
	}
	return s;
}

/* Interns @s (a string from libdw, checked); NULL for NULL, a bad string, or no memory. */
static const char *intern(struct dw_build *b, const char *s)
{
	s = dw_string(b, s);
	return s ? strset__intern(b->idx->strs, s) : NULL;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

/* Adds a scope for @die and its address ranges. Returns its index + 1, 0 if it has no
 * code, or -errno. */
static int add_scope(struct dw_build *b, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		     bool inlined)
{
	struct dwarf_index *idx = b->idx;
	Dwarf_Addr base, start, end, entry = 0, low = UINT64_MAX;
	struct dw_scope *sc;
	Dwarf_Attribute attr;
	Dwarf_Word w;
	ptrdiff_t off = 0;
	size_t first = b->nr_ranges;
	const char *name;
	int err;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		err = GROW(b->ranges, b->nr_ranges, b->cap_ranges, DW_MAX_SEGS);
		if (err)
			return err;
		b->ranges[b->nr_ranges++] = (struct dw_range){
			.lo = start, .hi = end, .scope = (uint32_t)idx->nr_scopes, .depth = depth};
		/* the first range listed: GCC lists a function's body before the part
		 * it moved to .text.unlikely (foo.cold), which may lie below it */
		if (b->nr_ranges == first + 1)
			entry = start;
		low = MIN(low, start);
	}
	if (b->nr_ranges > first && dwarf_entrypc(die, &start) == 0)
		entry = start;
	if (off < 0)
		b->bad = true;
	if (b->nr_ranges == first)
		return 0;
	err = GROW(idx->scopes, idx->nr_scopes, idx->cap_scopes, DW_MAX_SCOPES);
	if (err) {
		b->nr_ranges = first;
		return err;
	}
	name = dw_string(b, die_name(die));
	sc = &idx->scopes[idx->nr_scopes];
	*sc = (struct dw_scope){.parent = parent, .entry = entry, .low = low};
	sc->name = intern(b, name ? name : "[unknown]");
	if (!sc->name)
		return -ENOMEM;
	if (inlined) {
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &w))
			sc->call_line = w > UINT32_MAX ? 0 : (uint32_t)w;
		if (b->files && !dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &w) &&
		    w < b->nr_cu_files) {
			const char *f = dw_string(b, dwarf_filesrc(b->files, w, NULL, NULL));

			sc->call_file = f ? intern(b, f) : NULL;
			if (f && !sc->call_file)
				return -ENOMEM;
		}
	}
	idx->nr_scopes++;
	return (int)idx->nr_scopes;
}

static int walk(struct dw_build *b, Dwarf_Die *parent_die, uint32_t parent, uint32_t depth)
{
	Dwarf_Die child;
	int r, err = 0;

	if (depth > DW_MAX_DEPTH) {
		b->bad = true;
		return 0;
	}
	r = dwarf_child(parent_die, &child);
	if (r < 0)
		b->bad = true;
	if (r)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			r = add_scope(b, &child, 0, depth, false);
			if (r < 0)
				return r;
			/* nested functions (GNU C) and lambdas are scopes of their own */
			if (r > 0)
				err = walk(b, &child, (uint32_t)r, depth + 1);
			break;
		case DW_TAG_inlined_subroutine:
			r = add_scope(b, &child, parent, depth, true);
			if (r < 0)
				return r;
			err = walk(b, &child, r > 0 ? (uint32_t)r : parent, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			err = walk(b, &child, parent, depth + 1);
			break;
		default:
			break;
		}
		if (err)
			return err;
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	if (r < 0)
		b->bad = true;
	return 0;
}

static int add_lines(struct dw_build *b, Dwarf_Die *cu)
{
	struct dwarf_index *idx = b->idx;
	const char *last_src = NULL;
	uint32_t last_file = 0;
	Dwarf_Lines *lines;
	size_t n, i;
	int err;

	if (dwarf_getsrclines(cu, &lines, &n))
		return 0; /* a CU without a line table */
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end = false;
		const char *src;
		int line = 0;

		if (!l || dwarf_lineaddr(l, &addr) || dwarf_lineno(l, &line) ||
		    dwarf_lineendsequence(l, &end)) {
			b->bad = true;
			continue;
		}
		err = GROW(idx->lines, idx->nr_lines, idx->cap_lines, DW_MAX_LINES);
		if (err)
			return err;
		if (end) {
			idx->lines[idx->nr_lines++] =
				(struct dw_line){.addr = addr, .file = UINT32_MAX, .line = 0};
			continue;
		}
		/* rows of a sequence ascend; at one address the last row is the one in force */
		if (idx->nr_lines > b->line_lo && idx->lines[idx->nr_lines - 1].addr == addr &&
		    idx->lines[idx->nr_lines - 1].file != UINT32_MAX)
			idx->nr_lines--;
		src = dw_string(b, dwarf_linesrc(l, NULL, NULL));
		if (!src)
			src = "??";
		if (src != last_src) {
			/* rows of one file come in runs: one interning per run */
			const char *in = intern(b, src);

			if (!in)
				return -ENOMEM;
			if (!idx->nr_files || idx->files[idx->nr_files - 1] != in) {
				err = GROW(idx->files, idx->nr_files, idx->cap_files, DW_MAX_LINES);
				if (err)
					return err;
				idx->files[idx->nr_files++] = in;
			}
			last_file = (uint32_t)idx->nr_files - 1;
			last_src = src;
		}
		idx->lines[idx->nr_lines++] = (struct dw_line){
			.addr = addr, .file = last_file, .line = line < 0 ? 0 : (uint32_t)line};
	}
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct dw_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return x->scope < y->scope ? -1 : x->scope > y->scope;
}

/* Line rows by address; at one address an end of sequence sorts first (the next
 * sequence starts there). */
static int line_cmp(const void *a, const void *b)
{
	const struct dw_line *x = a, *y = b;
	bool ex = x->file == UINT32_MAX, ey = y->file == UINT32_MAX;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (ex != ey)
		return ex ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int emit(struct dwarf_index *idx, uint64_t lo, uint64_t hi, uint32_t scope)
{
	int err;

	if (lo >= hi)
		return 0;
	if (idx->nr_segs && idx->segs[idx->nr_segs - 1].hi == lo &&
	    idx->segs[idx->nr_segs - 1].scope == scope) {
		idx->segs[idx->nr_segs - 1].hi = hi;
		return 0;
	}
	err = GROW(idx->segs, idx->nr_segs, idx->cap_segs, DW_MAX_SEGS);
	if (err)
		return err;
	idx->segs[idx->nr_segs++] = (struct dw_seg){.lo = lo, .hi = hi, .scope = scope};
	return 0;
}

/*
 * Ranges nest (a function holds its inlined calls), so after sorting by start, outer
 * first, a sweep with a stack yields disjoint segments naming the innermost scope.
 * Ranges that overlap without nesting (bogus DWARF) are clipped, never trusted.
 */
static int build_segs(struct dw_build *b)
{
	struct dwarf_index *idx = b->idx;
	struct dw_range *stack = NULL;
	size_t sp = 0, i;
	uint64_t pos = 0;
	int err = 0;

	if (b->nr_ranges)
		qsort(b->ranges, b->nr_ranges, sizeof(*b->ranges), range_cmp);
	stack = malloc((b->nr_ranges + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (i = 0; i < b->nr_ranges && !err; i++) {
		const struct dw_range *r = &b->ranges[i];

		while (sp && stack[sp - 1].hi <= r->lo && !err) {
			err = emit(idx, MAX(pos, stack[sp - 1].lo), stack[sp - 1].hi,
				   stack[sp - 1].scope);
			pos = MAX(pos, stack[sp - 1].hi);
			sp--;
		}
		if (err)
			break;
		if (sp)
			err = emit(idx, MAX(pos, stack[sp - 1].lo), r->lo, stack[sp - 1].scope);
		pos = MAX(pos, r->lo);
		stack[sp++] = *r;
	}
	while (sp && !err) {
		err = emit(idx, MAX(pos, stack[sp - 1].lo), stack[sp - 1].hi, stack[sp - 1].scope);
		pos = MAX(pos, stack[sp - 1].hi);
		sp--;
	}
	free(stack);
	return err;
}

bool dwarf__has_debug_info(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	bool found = false;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto cleanup;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		found = name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"));
	}
cleanup:
	elf_end(elf);
	return found;
}

int dwarf_index__build(int fd, const char *what, struct dwarf_index **out)
{
	return dwarf_index__build_lines(fd, what, true, NULL, out);
}

/* Notes that a bound was hit: what was read so far is kept. */
static void truncated(struct dwarf_index *idx)
{
	if (!idx->truncated)
		pr_warn("symbolize: %s: DWARF too large, index truncated\n", idx->what);
	idx->truncated = true;
}

/*
 * Reads the units whose DIEs are at @dies (@n of them) into the index: their functions
 * and inlined calls (nesting resolved over all of them together) and their line rows,
 * which become @u's slices of segs[] and lines[]. @u counts as read whatever happens.
 * Returns 0 (a bound hit truncates the unit) or -ENOMEM.
 */
static int units_read(struct dwarf_index *idx, const Dwarf_Off *dies, size_t n, struct dw_unit *u)
{
	struct dw_build b = {.idx = idx, .line_lo = idx->nr_lines};
	size_t i;
	int err = 0;

	u->read = true;
	u->seg_lo = idx->nr_segs;
	u->line_lo = idx->nr_lines;
	for (i = 0; i < n && !err; i++) {
		Dwarf_Die cu;

		if (!dwarf_offdie(idx->dw, dies[i], &cu)) {
			b.bad = true;
			continue;
		}
		b.files = NULL;
		b.nr_cu_files = 0;
		/* libdw decodes the whole line program for either: most of a unit's time,
		 * so only when lines are asked for */
		if (idx->lines_wanted) {
			if (dwarf_getsrcfiles(&cu, &b.files, &b.nr_cu_files))
				b.files = NULL;
			err = add_lines(&b, &cu);
		}
		if (!err)
			err = walk(&b, &cu, 0, 0);
	}
	if (err == -E2BIG) {
		truncated(idx);
		err = 0;
	}
	if (!err)
		err = build_segs(&b);
	if (err == -E2BIG) {
		truncated(idx);
		err = 0;
	}
	u->seg_hi = idx->nr_segs;
	u->line_hi = idx->nr_lines;
	if (u->line_hi > u->line_lo)
		qsort(idx->lines + u->line_lo, u->line_hi - u->line_lo, sizeof(*idx->lines),
		      line_cmp);
	if (b.bad)
		idx->bad = true;
	free(b.ranges);
	return err;
}

/* Adds the address ranges of unit @cu (the next of units[]) to spans[]; none is fine. */
static int unit_spans(struct dwarf_index *idx, Dwarf_Die *cu)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int err;

	while ((off = dwarf_ranges(cu, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		err = GROW(idx->spans, idx->nr_spans, idx->cap_spans, DW_MAX_SEGS);
		if (err)
			return err;
		idx->spans[idx->nr_spans++] =
			(struct dw_span){.lo = start, .hi = end, .unit = (uint32_t)idx->nr_units};
	}
	if (off < 0)
		idx->bad = true;
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct dw_span *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->unit < y->unit ? -1 : x->unit > y->unit;
}

/*
 * Lists the units and their address ranges (one DIE each, spans[] sorted) into @idx,
 * and the units that give no range into *@rest (*@nr_rest of them, malloc'd).
 */
static int units_walk(struct dwarf_index *idx, Dwarf_Off **rest, size_t *nr_rest)
{
	Dwarf_Off off = 0, next;
	size_t cap_rest = 0, hsize;
	uint8_t utype;
	int err = 0;

	while (dwarf_next_unit(idx->dw, off, &next, &hsize, NULL, NULL, NULL, &utype, NULL, NULL) ==
	       0) {
		size_t before = idx->nr_spans;
		Dwarf_Off die = off + hsize;
		Dwarf_Die cu;

		off = next;
		if (utype != DW_UT_compile && utype != DW_UT_partial && utype != DW_UT_skeleton)
			continue;
		if (!dwarf_offdie(idx->dw, die, &cu)) {
			idx->bad = true;
			continue;
		}
		err = unit_spans(idx, &cu);
		if (!err && idx->nr_spans > before)
			err = GROW(idx->units, idx->nr_units, idx->cap_units, DW_MAX_SEGS);
		else if (!err)
			err = GROW(*rest, *nr_rest, cap_rest, DW_MAX_SEGS);
		if (err == -E2BIG) {
			idx->nr_spans = before;
			truncated(idx);
			err = 0;
			break;
		}
		if (err)
			return err;
		if (idx->nr_spans > before)
			idx->units[idx->nr_units++] = (struct dw_unit){.die = die};
		else
			(*rest)[(*nr_rest)++] = die;
	}
	if (idx->nr_spans)
		qsort(idx->spans, idx->nr_spans, sizeof(*idx->spans), span_cmp);
	return 0;
}

/* The unit list as struct dw_units_hdr lays it out: malloc'd, *@len bytes; NULL: ENOMEM. */
static void *units_encode(const struct dwarf_index *idx, const Dwarf_Off *rest, size_t nr_rest,
			  uint64_t *len)
{
	struct dw_units_hdr h = {
		.magic = DW_UNITS_MAGIC,
		.nr_units = (uint32_t)idx->nr_units,
		.nr_spans = (uint32_t)idx->nr_spans,
		.nr_rest = (uint32_t)nr_rest,
	};
	char *buf, *p;
	size_t i;

	*len = sizeof(h) + (idx->nr_units + nr_rest) * sizeof(uint64_t) +
	       idx->nr_spans * sizeof(struct dw_units_span);
	buf = malloc(*len);
	if (!buf)
		return NULL;
	p = buf;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (i = 0; i < idx->nr_units; i++, p += sizeof(uint64_t))
		memcpy(p, &(uint64_t){idx->units[i].die}, sizeof(uint64_t));
	for (i = 0; i < idx->nr_spans; i++, p += sizeof(struct dw_units_span))
		memcpy(p,
		       &(struct dw_units_span){.lo = idx->spans[i].lo,
					       .hi = idx->spans[i].hi,
					       .unit = idx->spans[i].unit},
		       sizeof(struct dw_units_span));
	for (i = 0; i < nr_rest; i++, p += sizeof(uint64_t))
		memcpy(p, &(uint64_t){rest[i]}, sizeof(uint64_t));
	return buf;
}

/*
 * The unit list units_encode() made, from a cache entry (bytes at any alignment), into
 * @idx and *@rest (malloc'd). -EINVAL when it does not hold together (counts against its
 * length, a span of no unit, spans out of order): nothing kept, the units are listed
 * from the DWARF instead. Returns 0, -EINVAL or -ENOMEM.
 */
static int units_decode(struct dwarf_index *idx, const void *blob, uint64_t len, Dwarf_Off **rest,
			size_t *nr_rest)
{
	const char *p = blob;
	struct dw_units_hdr h;
	struct dw_units_span sp;
	uint64_t die;
	size_t i;

	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	if (h.magic != DW_UNITS_MAGIC || h.nr_units > DW_MAX_SEGS || h.nr_spans > DW_MAX_SEGS ||
	    h.nr_rest > DW_MAX_SEGS ||
	    len != sizeof(h) + ((uint64_t)h.nr_units + h.nr_rest) * sizeof(uint64_t) +
			    (uint64_t)h.nr_spans * sizeof(sp))
		return -EINVAL;
	idx->units = malloc(MAX(h.nr_units, 1u) * sizeof(*idx->units));
	idx->spans = malloc(MAX(h.nr_spans, 1u) * sizeof(*idx->spans));
	*rest = malloc(MAX(h.nr_rest, 1u) * sizeof(**rest));
	if (!idx->units || !idx->spans || !*rest)
		return -ENOMEM;
	idx->cap_units = MAX(h.nr_units, 1u);
	idx->cap_spans = MAX(h.nr_spans, 1u);
	for (i = 0; i < h.nr_units; i++, p += sizeof(die)) {
		memcpy(&die, p, sizeof(die));
		idx->units[i] = (struct dw_unit){.die = die};
	}
	for (i = 0; i < h.nr_spans; i++, p += sizeof(sp)) {
		memcpy(&sp, p, sizeof(sp));
		idx->spans[i] = (struct dw_span){.lo = sp.lo, .hi = sp.hi, .unit = sp.unit};
		if (sp.unit >= h.nr_units || sp.hi <= sp.lo ||
		    (i && span_cmp(&idx->spans[i - 1], &idx->spans[i]) > 0))
			return -EINVAL;
	}
	for (i = 0; i < h.nr_rest; i++, p += sizeof(die)) {
		memcpy(&die, p, sizeof(die));
		(*rest)[i] = die;
	}
	idx->nr_units = h.nr_units;
	idx->nr_spans = h.nr_spans;
	*nr_rest = h.nr_rest;
	return 0;
}

/*
 * Lists the units and their address ranges (one DIE each), from @dc's cache entry when
 * it has the list, and reads the units that give no range (partial units, producers
 * that omit them) now: those may hold any address. The others are read on the first
 * lookup inside them. Sections decompressed now go to the cache here, with the list
 * when it was made whole (a list made with parts unreadable would hide them next time).
 */
static int units_list(struct dwarf_index *idx, const struct dw_cached *dc)
{
	Dwarf_Off *rest = NULL;
	size_t nr_rest = 0, i;
	uint64_t max_hi = 0, len = 0;
	bool cached = false;
	void *blob = NULL;
	int err = 0;

	if (dc->units) {
		err = units_decode(idx, dc->units, dc->units_len, &rest, &nr_rest);
		if (err == -ENOMEM)
			goto cleanup;
		cached = !err;
		if (err) {
			pr_debug("symbolize: %s: the unit list in the debug cache does not hold "
				 "together: listed again\n",
				 idx->what);
			idx->nr_units = idx->nr_spans = nr_rest = 0;
		}
		err = 0;
	}
	if (!cached) {
		err = units_walk(idx, &rest, &nr_rest);
		if (err)
			goto cleanup;
	}
	if (dc->store) {
		if (!idx->bad && !idx->truncated)
			blob = units_encode(idx, rest, nr_rest, &len);
		dw_cache__store(dc->cache, dc->id, dc->id_len, dc->cs, dc->n, blob, blob ? len : 0);
		free(blob);
	}
	for (i = 0; i < idx->nr_spans; i++) {
		max_hi = MAX(max_hi, idx->spans[i].hi);
		idx->spans[i].max_hi = max_hi;
	}
	err = units_read(idx, rest, nr_rest, &idx->rest);
	pr_debug("symbolize: %s: %zu units read when first looked up (%zu address ranges%s); %zu "
		 "read now: %zu scopes, %zu ranges, %zu line rows\n",
		 idx->what, idx->nr_units, idx->nr_spans,
		 cached ? ", listed in the debug cache" : "", nr_rest, idx->nr_scopes, idx->nr_segs,
		 idx->nr_lines);
	if (!err && !idx->nr_units)
		dw_close(idx);
cleanup:
	free(rest);
	return err;
}

int dwarf_index__build_lines(int fd, const char *what, bool lines, struct dw_cache *cache,
			     struct dwarf_index **out)
{
	struct dwarf_index *idx = NULL;
	struct dw_cached dc = {0};
	int err = 0;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	idx = calloc(1, sizeof(*idx));
	if (!idx || !(idx->strs = strset__new()) ||
	    !(idx->what = strset__intern(idx->strs, what))) {
		err = -ENOMEM;
		goto cleanup;
	}
	idx->lines_wanted = lines;
	idx->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!idx->elf || elf_kind(idx->elf) != ELF_K_ELF) {
		err = -EINVAL;
		goto cleanup;
	}
	dw_sections__drop_unused(idx->elf, lines);
	err = dw_sections__inflate(idx, cache, what, &dc);
	if (err)
		goto cleanup;
	idx->dw = dwarf_begin_elf(idx->elf, DWARF_C_READ, NULL);
	if (!idx->dw) {
		pr_debug("symbolize: %s: %s\n", what, dwarf_errmsg(-1));
		err = -ENOENT;
		goto cleanup;
	}
	if (!dw_sections(idx, idx->elf)) {
		pr_debug("symbolize: %s: a DWARF string section is not NUL-terminated\n", what);
		err = -EINVAL;
		goto cleanup;
	}
	/* libdw read every section it uses when it opened the file: @fd is not read again */
	elf_cntl(idx->elf, ELF_C_FDDONE);
	err = units_list(idx, &dc);
	if (err)
		goto cleanup;
	if (idx->bad)
		pr_debug("symbolize: %s: parts of the DWARF could not be read\n", what);
	*out = idx;
	idx = NULL;
cleanup:
	dwarf_index__free(idx);
	return err;
}

/* The segment holding @addr in @u's slice, or NULL. */
static const struct dw_seg *seg_find(const struct dwarf_index *idx, const struct dw_unit *u,
				     uint64_t addr)
{
	size_t lo = u->seg_lo, hi = u->seg_hi;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->segs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > u->seg_lo && addr < idx->segs[lo - 1].hi)
		return &idx->segs[lo - 1];
	return NULL;
}

static bool line_find(const struct dwarf_index *idx, const struct dw_unit *u, uint64_t addr,
		      const char **file, uint32_t *line)
{
	size_t lo = u->line_lo, hi = u->line_hi;
	const struct dw_line *l;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->lines[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == u->line_lo)
		return false;
	l = &idx->lines[lo - 1];
	if (l->file == UINT32_MAX || !l->line)
		return false;
	*file = idx->files[l->file];
	*line = l->line;
	return true;
}

/* Bounds on the units asked about one address when their ranges overlap (bogus DWARF). */
#define DW_MAX_UNITS_TRIED   16
#define DW_MAX_SPANS_SCANNED 4096

/*
 * The segment of @addr and its unit: the units whose ranges hold @addr are read (once)
 * and asked in turn, then those read at build. With no segment, *@u is where a line
 * may still be found (the first unit holding @addr). Returns 0 or -ENOMEM.
 */
static int unit_find(struct dwarf_index *idx, uint64_t addr, const struct dw_unit **u,
		     const struct dw_seg **seg)
{
	size_t lo = 0, hi = idx->nr_spans, tried = 0, scanned = 0;
	int err;

	*u = NULL;
	*seg = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->spans[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* spans[0..lo) start at or below @addr; max_hi ends the walk back through them */
	while (lo-- > 0 && idx->spans[lo].max_hi > addr) {
		const struct dw_span *sp = &idx->spans[lo];
		struct dw_unit *unit = &idx->units[sp->unit];

		if (++scanned > DW_MAX_SPANS_SCANNED || tried == DW_MAX_UNITS_TRIED) {
			idx->bad = true;
			break;
		}
		if (sp->hi <= addr)
			continue;
		tried++;
		if (!unit->read) {
			idx->units_read++;
			err = units_read(idx, &unit->die, 1, unit);
			if (err)
				return err;
			/* all read: what they need was copied out, the sections can go */
			if (idx->units_read == idx->nr_units)
				dw_close(idx);
		}
		if (!*u)
			*u = unit;
		*seg = seg_find(idx, unit, addr);
		if (*seg) {
			*u = unit;
			return 0;
		}
	}
	*seg = seg_find(idx, &idx->rest, addr);
	if (*seg || !*u)
		*u = &idx->rest;
	return 0;
}

int dwarf_index__lookup(struct dwarf_index *idx, uint64_t addr, struct dw_frame *out, size_t cap)
{
	const struct dw_unit *u = NULL;
	const struct dw_seg *seg = NULL;
	uint32_t chain[DW_MAX_DEPTH + 1], sc;
	size_t n = 0, i, keep;
	int err;

	if (!cap)
		return 0;
	if (idx) {
		err = unit_find(idx, addr, &u, &seg);
		if (err)
			return err;
	}
	if (!seg) {
		/* no function, maybe a line: the caller may still use it */
		out[0] = (struct dw_frame){0};
		if (u)
			line_find(idx, u, addr, &out[0].file, &out[0].line);
		return 0;
	}
	/* innermost first, then reversed into the caller's outermost-first order */
	for (sc = seg->scope + 1; sc && n < ARRAY_SIZE(chain); sc = idx->scopes[sc - 1].parent)
		chain[n++] = sc - 1;
	/* too many for @cap: the function and the innermost cap - 1 inlined frames */
	keep = MIN(n, cap);
	for (i = 0; i < keep; i++) {
		size_t k = i == 0 ? n - 1 : keep - 1 - i;
		const struct dw_scope *s = &idx->scopes[chain[k]];

		out[i] = (struct dw_frame){
			.name = s->name,
			.entry = s->entry,
			.low = s->low,
			.inlined = i > 0,
		};
		/* an outer frame's line is the call site of the frame inside it */
		if (k > 0) {
			const struct dw_scope *inner = &idx->scopes[chain[k - 1]];

			out[i].file = inner->call_file;
			out[i].line = inner->call_line;
		} else {
			line_find(idx, u, addr, &out[i].file, &out[i].line);
		}
	}
	return (int)keep;
}
