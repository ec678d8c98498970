// SPDX-License-Identifier: MIT
/*
 * unwind: .eh_frame and .debug_frame read: encoded values, CIEs and FDEs, the index of
 * .debug_frame, CFA programs run into rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "unwind-private.h"

/* ---- encoded values ---- */

/* Reads a LEB128 number (its low 64 bits), sign-extended when @sign. */
static bool read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	*out = v;
	return true;
}

bool eh__read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	return read_leb(p, end, false, out);
}

bool eh__read_sleb(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint64_t v;

	if (!read_leb(p, end, true, &v))
		return false;
	*out = (int64_t)v;
	return true;
}

bool eh__read_fixed(const uint8_t **p, const uint8_t *end, size_t n, uint64_t *out)
{
	uint8_t buf[8] = {0};

	if ((size_t)(end - *p) < n)
		return false;
	memcpy(buf, *p, n); /* little-endian (x86-64) */
	memcpy(out, buf, 8);
	*p += n;
	return true;
}

/* Reads an @n-byte integer (1, 2, 4 or 8), sign-extended when @sign. */
bool eh__read_int(const uint8_t **p, const uint8_t *end, size_t n, bool sign, uint64_t *out)
{
	if (!eh__read_fixed(p, end, n, out))
		return false;
	if (sign && n < 8 && (*out >> (n * 8 - 1)) & 1)
		*out |= ~0ULL << (n * 8);
	return true;
}

/*
 * Reads a DWARF EH pointer of encoding @enc at @p (bounded by @end). @vaddr is the
 * address of *@p in the file (pcrel), @data the datarel base (.eh_frame_hdr).
 * Indirect and text-, function- or aligned-relative values are not read (false).
 */
bool eh__read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t vaddr,
		      uint64_t data, uint64_t *out)
{
	uint64_t v;
	int64_t s;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		/* udata2/4/8 are 2..4, sdata2/4/8 10..12 (0x08 set: signed); absptr is 8 bytes */
		if (!eh__read_int(p, end, (enc & 0x07) ? 1u << ((enc & 0x07) - 1) : 8, enc & 0x08, &v))
			return false;
		break;
	case DW_EH_PE_uleb128:
		if (!eh__read_uleb(p, end, &v))
			return false;
		break;
	case DW_EH_PE_sleb128:
		if (!eh__read_sleb(p, end, &s))
			return false;
		v = (uint64_t)s;
		break;
	default:
		return false;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += vaddr;
		break;
	case DW_EH_PE_datarel:
		v += data;
		break;
	default:
		return false;
	}
	*out = v;
	return true;
}

/* ---- call frame information ---- */

/*
 * The .eh_frame_hdr entry covering @rel (an address relative to the header): the last
 * whose start is <= @rel, or -1. Entries are (start, FDE) pairs of int32 sorted by
 * start (datarel | sdata4, checked at load).
 */
static int64_t table_search(const struct ufile *f, int32_t rel)
{
	const uint8_t *t = f->hdr + f->table_off;
	uint64_t lo = 0, hi = f->fde_count, mid;
	int32_t start;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&start, t + mid * 8, sizeof(start));
		if (rel < start)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (int64_t)hi - 1;
}

/* What a CIE says about the FDEs that use it. */
struct cie {
	uint64_t code_align, ra_reg;
	int64_t data_align;
	uint8_t fde_enc;
	bool aug_data; /* 'z': FDEs have an augmentation length */
	bool signal;   /* 'S' */
	const uint8_t *insns, *end;
};

/*
 * Reads an entry's length at *@p (left after it): its body ends at *@body_end; *@is64:
 * the 64-bit DWARF format (.debug_frame's CIE ids and pointers are 8 bytes then).
 */
static bool entry_body(const uint8_t **p, const uint8_t *end, const uint8_t **body_end, bool *is64)
{
	uint64_t len;

	if (!eh__read_fixed(p, end, 4, &len))
		return false;
	*is64 = len == 0xffffffff;
	if (*is64 && !eh__read_fixed(p, end, 8, &len))
		return false;
	if (!len || len > (uint64_t)(end - *p))
		return false;
	*body_end = *p + len;
	return true;
}

/* The bytes of .debug_frame (@debug) or .eh_frame in @f's copy, and how many. */
static const uint8_t *sec_base(const struct ufile *f, bool debug)
{
	return debug ? f->cfi + f->eh_len : f->cfi;
}

static uint64_t sec_len(const struct ufile *f, bool debug)
{
	return debug ? f->dbg_len : f->eh_len;
}

/* .debug_frame's CIE id (also what no FDE's CIE pointer may be). */
static uint64_t dbg_cie_id(bool is64)
{
	return is64 ? UINT64_MAX : 0xffffffffULL;
}

/* Skips a pointer of encoding @enc (its size depends on the low four bits only). */
static bool skip_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc)
{
	uint64_t v;

	return enc == DW_EH_PE_omit || eh__read_encoded(p, end, enc & 0x0f, 0, 0, &v);
}

/*
 * The CIE at @off of .debug_frame (@debug) or .eh_frame. .debug_frame's differ: their id
 * is all ones, not 0; version 4 adds the address and segment selector sizes; addresses
 * are absolute (DW_EH_PE_absptr of the address size), whatever the augmentation.
 */
static int cie_parse(const struct ufile *f, bool debug, uint64_t off, struct cie *c)
{
	const uint8_t *base = sec_base(f, debug), *end = base + sec_len(f, debug);
	const uint8_t *p = base + off, *body_end, *aug, *aug_end;
	uint64_t id, len;
	uint8_t version, enc;
	bool is64;

	if (off >= sec_len(f, debug) || !entry_body(&p, end, &body_end, &is64) ||
	    !eh__read_fixed(&p, body_end, debug && is64 ? 8 : 4, &id) ||
	    id != (debug ? dbg_cie_id(is64) : 0) || p >= body_end)
		return -EINVAL;
	version = *p++;
	if (version != 1 && version != 3 && !(debug && version == 4))
		return -EINVAL;
	aug = p;
	while (p < body_end && *p)
		p++;
	if (p++ >= body_end)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->fde_enc = debug && f->dbg_addr == 4 ? DW_EH_PE_udata4 : DW_EH_PE_absptr;
	if (version == 4) {
		/* address_size, segment_selector_size: segmented addresses are not read */
		if (body_end - p < 2 || (p[0] != 4 && p[0] != 8) || p[1])
			return -EINVAL;
		c->fde_enc = p[0] == 4 ? DW_EH_PE_udata4 : DW_EH_PE_absptr;
		p += 2;
	}
	if (!eh__read_uleb(&p, body_end, &c->code_align) || !eh__read_sleb(&p, body_end, &c->data_align))
		return -EINVAL;
	if (version == 1) {
		if (p >= body_end)
			return -EINVAL;
		c->ra_reg = *p++;
	} else if (!eh__read_uleb(&p, body_end, &c->ra_reg)) {
		return -EINVAL;
	}
	if (aug[0] == 'z') {
		if (!eh__read_uleb(&p, body_end, &len) || len > (uint64_t)(body_end - p))
			return -EINVAL;
		aug_end = p + len;
		c->aug_data = true;
		for (const uint8_t *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'R':
				if (p >= aug_end)
					return -EINVAL;
				c->fde_enc = *p++;
				break;
			case 'L':
				if (p++ >= aug_end)
					return -EINVAL;
				break;
			case 'P':
				if (p >= aug_end)
					return -EINVAL;
				enc = *p++;
				if (!skip_encoded(&p, aug_end, enc))
					return -EINVAL;
				break;
			case 'S':
				c->signal = true;
				break;
			case 'B': /* AArch64 pointer authentication key; no data */
				break;
			default:
				return -EINVAL; /* the data of what follows cannot be found */
			}
		}
		p = aug_end;
	} else {
		/* no data to skip: only 'S' (gas's signal frames in .debug_frame) is read */
		for (const uint8_t *a = aug; *a; a++) {
			if (*a != 'S')
				return -EINVAL; /* "eh" and other pre-'z' augmentations */
			c->signal = true;
		}
	}
	/* .debug_frame is not loaded: no address in it is relative to where it lies */
	if (debug && (c->fde_enc & 0x70))
		return -EINVAL;
	c->insns = p;
	c->end = body_end;
	return 0;
}

/*
 * The FDE at @off of .debug_frame (@debug) or .eh_frame: its CIE, first address, length
 * and instructions. Returns 0 or -EINVAL (malformed). Its CIE pointer is an offset from
 * the start of .debug_frame, and one back from where it lies in .eh_frame.
 */
static int fde_read(const struct ufile *f, bool debug, uint64_t off, struct cie *c, uint64_t *start,
		    uint64_t *range, const uint8_t **insns, const uint8_t **insns_end)
{
	const uint8_t *base = sec_base(f, debug), *p, *end = base + sec_len(f, debug), *body_end;
	uint64_t id_off, cie_ptr, cie_off, pc_begin, pc_range, len;
	bool is64;
	int err;

	if (off >= sec_len(f, debug))
		return -EINVAL;
	p = base + off;
	if (!entry_body(&p, end, &body_end, &is64))
		return -EINVAL;
	id_off = (uint64_t)(p - base);
	if (debug) {
		if (!eh__read_fixed(&p, body_end, is64 ? 8 : 4, &cie_ptr) ||
		    cie_ptr == dbg_cie_id(is64) || cie_ptr >= f->dbg_len)
			return -EINVAL;
		cie_off = cie_ptr;
	} else {
		if (!eh__read_fixed(&p, body_end, 4, &cie_ptr) || !cie_ptr || cie_ptr > id_off)
			return -EINVAL;
		cie_off = id_off - cie_ptr;
	}
	err = cie_parse(f, debug, cie_off, c);
	if (err)
		return err;
	if (!eh__read_encoded(&p, body_end, c->fde_enc, f->eh_vaddr + (uint64_t)(p - f->cfi),
			      f->hdr_vaddr, &pc_begin) ||
	    !eh__read_encoded(&p, body_end, c->fde_enc & 0x0f, 0, 0, &pc_range))
		return -EINVAL;
	if (c->aug_data) {
		if (!eh__read_uleb(&p, body_end, &len) || len > (uint64_t)(body_end - p))
			return -EINVAL;
		p += len;
	}
	*start = pc_begin;
	*range = pc_range;
	*insns = p;
	*insns_end = body_end;
	return 0;
}

/* The first address of .eh_frame_hdr entry @i (its table is sorted by it). */
static uint64_t eh_start(const struct ufile *f, uint64_t i)
{
	int32_t rel;

	memcpy(&rel, f->hdr + f->table_off + i * 8, sizeof(rel));
	return f->hdr_vaddr + (uint64_t)(int64_t)rel;
}

/* The FDE of .eh_frame_hdr entry @i, as fde_read(). */
static int fde_at(const struct ufile *f, uint64_t i, struct cie *c, uint64_t *start,
		  uint64_t *range, const uint8_t **insns, const uint8_t **insns_end)
{
	int32_t fde_rel;

	memcpy(&fde_rel, f->hdr + f->table_off + i * 8 + 4, sizeof(fde_rel));
	return fde_read(f, false, f->hdr_vaddr + (uint64_t)(int64_t)fde_rel - f->eh_vaddr, c, start,
			range, insns, insns_end);
}

/* The .eh_frame_hdr entry of the last FDE starting at or before @addr, or -1. */
static int64_t eh_index(const struct ufile *f, uint64_t addr)
{
	int64_t rel = (int64_t)(addr - f->hdr_vaddr);

	if (!f->fde_count)
		return -1;
	/* farther than the table's int32 reach: before its first entry, or after its last */
	if (rel < INT32_MIN)
		rel = INT32_MIN;
	else if (rel > INT32_MAX)
		rel = INT32_MAX;
	return table_search(f, (int32_t)rel);
}

/* The .eh_frame FDE covering file address @pc, as fde_find(). */
static int eh_find(const struct ufile *f, uint64_t pc, struct cie *c, uint64_t *start,
		   const uint8_t **insns, const uint8_t **insns_end)
{
	uint64_t range;
	int64_t i;
	int err;

	if (pc - f->hdr_vaddr + 0x80000000ULL > 0xffffffffULL)
		return -ENOENT; /* farther than the table's int32 reach */
	i = eh_index(f, pc);
	if (i < 0)
		return -ENOENT;
	err = fde_at(f, (uint64_t)i, c, start, &range, insns, insns_end);
	if (err)
		return err;
	if (pc < *start || pc - *start >= range)
		return -ENOENT;
	return 0;
}

/* The .debug_frame FDE covering file address @pc (its index's binary search), as fde_find(). */
static int dbg_find(const struct ufile *f, uint64_t pc, struct cie *c, uint64_t *start,
		    const uint8_t **insns, const uint8_t **insns_end)
{
	uint64_t lo = 0, hi = f->dbg_count, mid, range;
	const struct dbg_fde *e;
	int err;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < f->dbg_table[mid].start)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!hi || pc >= f->dbg_table[hi - 1].end)
		return -ENOENT;
	e = &f->dbg_table[hi - 1];
	err = fde_read(f, true, e->off, c, start, &range, insns, insns_end);
	if (err)
		return err;
	if (pc < *start || pc - *start >= range)
		return -ENOENT;
	return 0;
}

/*
 * The FDE covering file address @pc: its CIE, first address and instructions, from
 * .eh_frame, else from .debug_frame. Returns 0, -ENOENT (none covers @pc) or -EINVAL
 * (malformed).
 */
static int fde_find(const struct ufile *f, uint64_t pc, struct cie *c, uint64_t *start,
		    const uint8_t **insns, const uint8_t **insns_end)
{
	int err = f->fde_count ? eh_find(f, pc, c, start, insns, insns_end) : -ENOENT;

	/* a malformed .eh_frame FDE before @pc: .debug_frame may still cover it */
	if (err && f->dbg_count && !dbg_find(f, pc, c, start, insns, insns_end))
		return 0;
	return err;
}

/* Does an .eh_frame FDE (one that can be read) cover any of [@lo, @hi)? */
static bool eh_overlaps(const struct ufile *f, uint64_t lo, uint64_t hi)
{
	int64_t idx[2] = {eh_index(f, hi - 1), eh_index(f, lo)};
	const uint8_t *insns, *end;
	uint64_t start, range;
	struct cie c;

	/* .eh_frame's FDEs are disjoint: the last starting before @hi, or the one over @lo */
	for (int k = 0; k < 2; k++) {
		if (idx[k] < 0 || (k && idx[1] == idx[0]) ||
		    fde_at(f, (uint64_t)idx[k], &c, &start, &range, &insns, &end))
			continue;
		if (start < hi && start + range > lo && start + range > start)
			return true;
	}
	return false;
}

static int by_start(const void *a, const void *b)
{
	const struct dbg_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end ? 1 : 0;
}

static bool in_code(const struct code_span *code, size_t nr_code, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < nr_code; i++)
		if (lo >= code[i].lo && hi <= code[i].hi)
			return true;
	return false;
}

int cfi__index_debug(struct ufile *f, const struct code_span *code, size_t nr_code)
{
	const uint8_t *base = sec_base(f, true), *end = base + f->dbg_len, *p, *body_end, *insns,
		      *insns_end;
	struct dbg_fde *t = NULL;
	uint64_t off = 0, id, start, range;
	size_t n = 0, cap = 0, i, kept = 0;
	struct cie c;
	bool is64;

	f->dbg_table = NULL;
	f->dbg_count = f->dbg_bad = 0;
	while (off < f->dbg_len) {
		p = base + off;
		if (!entry_body(&p, end, &body_end, &is64)) {
			f->dbg_bad++; /* the rest cannot be told apart */
			break;
		}
		id = 0;
		if (!eh__read_fixed(&p, body_end, is64 ? 8 : 4, &id) || id != dbg_cie_id(is64)) {
			/* an FDE: one that can be read, over code only .debug_frame covers */
			if (fde_read(f, true, off, &c, &start, &range, &insns, &insns_end) ||
			    !range || start + range < start || !start ||
			    !in_code(code, nr_code, start, start + range)) {
				/* start 0: linkers' mark of an FDE of code they dropped */
				f->dbg_bad++;
			} else if (n == DBG_FDES_MAX) {
				f->dbg_bad++;
			} else if (!eh_overlaps(f, start, start + range)) {
				if (array__grow((void **)&t, &cap, n + 1, sizeof(*t))) {
					free(t);
					return -ENOMEM;
				}
				t[n++] = (struct dbg_fde){
					.start = start, .end = start + range, .off = off};
			}
		}
		off = (uint64_t)(body_end - base);
	}
	if (n)
		qsort(t, n, sizeof(*t), by_start);
	/* overlapping FDEs are not code's: keep the first of them (the lowest, shortest) */
	for (i = 0; i < n; i++) {
		if (kept && t[i].start < t[kept - 1].end) {
			f->dbg_bad++;
			continue;
		}
		t[kept++] = t[i];
	}
	if (!kept) {
		free(t);
		t = NULL;
	}
	f->dbg_table = t;
	f->dbg_count = kept;
	return 0;
}

/* The CFA program of one FDE being run up to an address. */
struct cfa_run {
	const struct ufile *f;
	const struct cie *c;
	struct row_state init; /* after the CIE's instructions (DW_CFA_restore) */
	struct row_state saved[STATE_DEPTH];
	unsigned int depth;
	unsigned int ops; /* instructions run so far (CIE and FDE) */
	/* cfi__rows(): called with each row before the location moves past it */
	cfi_row_fn emit;
	void *emit_ctx;
	bool signal; /* the FDE's CIE has augmentation 'S' */
};

/* The rule slot of DWARF register @reg, or NULL for registers not followed. */
static struct rule *rule_of(const struct cfa_run *run, struct row_state *st, uint64_t reg)
{
	if (reg == run->c->ra_reg)
		return &st->r[R_RA];
	if (reg == DWARF_RBP)
		return &st->r[R_RBP];
	if (reg == DWARF_RSP)
		return &st->r[R_RSP];
	return NULL;
}

/* @v times the data alignment, if that fits an int32 offset (uscaled: @u unsigned). */
static bool scaled(const struct cie *c, int64_t v, int64_t *out)
{
	return !__builtin_mul_overflow(v, c->data_align, out) && *out >= INT32_MIN &&
	       *out <= INT32_MAX;
}

static bool uscaled(const struct cie *c, uint64_t u, int64_t *out)
{
	return u <= INT32_MAX && scaled(c, (int64_t)u, out);
}

/* Rule @kind with offset @off for register @reg (ignored when not followed). */
static void set_offset(const struct cfa_run *run, struct row_state *st, uint64_t reg, uint8_t kind,
		       int64_t off)
{
	struct rule *r = rule_of(run, st, reg);

	if (r)
		*r = (struct rule){.kind = kind, .off = (int32_t)off};
}

/* A rule of @kind for the expression block (length, bytes) at *@p. */
static bool read_expr(const struct cfa_run *run, const uint8_t **p, const uint8_t *end,
		      uint8_t kind, struct rule *out)
{
	uint64_t len;

	if (!eh__read_uleb(p, end, &len) || len > (uint64_t)(end - *p) || len > UINT16_MAX)
		return false;
	*out = (struct rule){
		.kind = kind, .len = (uint16_t)len, .off = (int32_t)(*p - run->f->cfi)};
	*p += len;
	return true;
}

/*
 * Runs the CFA instructions [@p, @end) from location @loc into @st, up to the first
 * advance past @pc. Returns 0, or -EINVAL (malformed or not supported).
 * One function on purpose: it is the interpreter of the DWARF call frame instruction
 * set, one case per opcode (DWARF 5 section 6.4.2), each a few lines, sharing the
 * row state and the bounds checks of the loop; split, the opcodes of one table would
 * be read in several places.
 */
static int cfa_run(struct cfa_run *run, struct row_state *st, const uint8_t *p, const uint8_t *end,
		   uint64_t loc, uint64_t pc)
{
	const struct cie *c = run->c;
	struct rule tmp, *r;
	uint64_t reg, reg2, u, delta;
	int64_t s;
	uint8_t op;

	while (p < end) {
		/* a crafted file could hold megabytes of instructions for one function */
		if (++run->ops > CFA_OPS_MAX)
			return -EINVAL;
		op = *p++;
		switch (op & 0xc0) {
		case 0x40: /* DW_CFA_advance_loc */
			delta = op & 0x3f;
			goto advance;
		case 0x80: /* DW_CFA_offset */
			if (!eh__read_uleb(&p, end, &u) || !uscaled(c, u, &s))
				return -EINVAL;
			set_offset(run, st, op & 0x3f, RULE_OFFSET, s);
			continue;
		case 0xc0: /* DW_CFA_restore */
			r = rule_of(run, st, op & 0x3f);
			if (r)
				*r = *rule_of(run, &run->init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00: /* DW_CFA_nop */
			continue;
		case 0x01: /* DW_CFA_set_loc */
			if (!eh__read_encoded(&p, end, c->fde_enc,
					      run->f->eh_vaddr + (uint64_t)(p - run->f->cfi),
					      run->f->hdr_vaddr, &u))
				return -EINVAL;
			if (run->emit && u > loc) {
				int err = run->emit(run->emit_ctx, loc, st, run->signal);

				if (err)
					return err;
			}
			if (u > pc)
				return 0;
			loc = u;
			continue;
		case 0x02: /* DW_CFA_advance_loc1 */
		case 0x03: /* DW_CFA_advance_loc2 */
		case 0x04: /* DW_CFA_advance_loc4 */
			if (!eh__read_fixed(&p, end, op == 0x02 ? 1 : op == 0x03 ? 2 : 4, &delta))
				return -EINVAL;
			goto advance;
		case 0x05: /* DW_CFA_offset_extended */
			if (!eh__read_uleb(&p, end, &reg) || !eh__read_uleb(&p, end, &u) ||
			    !uscaled(c, u, &s))
				return -EINVAL;
			set_offset(run, st, reg, RULE_OFFSET, s);
			continue;
		case 0x06: /* DW_CFA_restore_extended */
			if (!eh__read_uleb(&p, end, &reg))
				return -EINVAL;
			r = rule_of(run, st, reg);
			if (r)
				*r = *rule_of(run, &run->init, reg);
			continue;
		case 0x07: /* DW_CFA_undefined */
		case 0x08: /* DW_CFA_same_value */
			if (!eh__read_uleb(&p, end, &reg))
				return -EINVAL;
			r = rule_of(run, st, reg);
			if (r)
				*r = (struct rule){.kind = op == 0x07 ? RULE_UNDEF : RULE_SAME};
			continue;
		case 0x09: /* DW_CFA_register */
			if (!eh__read_uleb(&p, end, &reg) || !eh__read_uleb(&p, end, &reg2) || reg2 > 255)
				return -EINVAL;
			r = rule_of(run, st, reg);
			if (r)
				*r = (struct rule){.kind = RULE_REG, .reg = (uint8_t)reg2};
			continue;
		case 0x0a: /* DW_CFA_remember_state (the CFA's rule too, as GCC's unwinder) */
			if (run->depth == STATE_DEPTH)
				return -EINVAL;
			run->saved[run->depth++] = *st;
			continue;
		case 0x0b: /* DW_CFA_restore_state */
			if (!run->depth)
				return -EINVAL;
			*st = run->saved[--run->depth];
			continue;
		case 0x0c: /* DW_CFA_def_cfa */
		case 0x12: /* DW_CFA_def_cfa_sf */
			if (!eh__read_uleb(&p, end, &reg) || reg > 255)
				return -EINVAL;
			if (op == 0x0c ? !eh__read_uleb(&p, end, &u) || u > INT32_MAX
				       : !eh__read_sleb(&p, end, &s) || !scaled(c, s, &s))
				return -EINVAL;
			if (op == 0x0c)
				s = (int64_t)u;
			st->cfa = (struct rule){
				.kind = RULE_REG, .reg = (uint8_t)reg, .off = (int32_t)s};
			continue;
		case 0x0d: /* DW_CFA_def_cfa_register */
			if (!eh__read_uleb(&p, end, &reg) || reg > 255 || st->cfa.kind != RULE_REG)
				return -EINVAL;
			st->cfa.reg = (uint8_t)reg;
			continue;
		case 0x0e: /* DW_CFA_def_cfa_offset */
		case 0x13: /* DW_CFA_def_cfa_offset_sf */
			if (op == 0x0e ? !eh__read_uleb(&p, end, &u) || u > INT32_MAX
				       : !eh__read_sleb(&p, end, &s) || !scaled(c, s, &s))
				return -EINVAL;
			if (op == 0x0e)
				s = (int64_t)u;
			if (st->cfa.kind != RULE_REG)
				return -EINVAL;
			st->cfa.off = (int32_t)s;
			continue;
		case 0x0f: /* DW_CFA_def_cfa_expression */
			if (!read_expr(run, &p, end, RULE_VAL_EXPR, &st->cfa))
				return -EINVAL;
			continue;
		case 0x10: /* DW_CFA_expression */
		case 0x16: /* DW_CFA_val_expression */
			if (!eh__read_uleb(&p, end, &reg) ||
			    !read_expr(run, &p, end, op == 0x10 ? RULE_EXPR : RULE_VAL_EXPR, &tmp))
				return -EINVAL;
			r = rule_of(run, st, reg);
			if (r)
				*r = tmp;
			continue;
		case 0x11: /* DW_CFA_offset_extended_sf */
		case 0x15: /* DW_CFA_val_offset_sf */
			if (!eh__read_uleb(&p, end, &reg) || !eh__read_sleb(&p, end, &s) ||
			    !scaled(c, s, &s))
				return -EINVAL;
			set_offset(run, st, reg, op == 0x11 ? RULE_OFFSET : RULE_VAL_OFFSET, s);
			continue;
		case 0x14: /* DW_CFA_val_offset */
			if (!eh__read_uleb(&p, end, &reg) || !eh__read_uleb(&p, end, &u) ||
			    !uscaled(c, u, &s))
				return -EINVAL;
			set_offset(run, st, reg, RULE_VAL_OFFSET, s);
			continue;
		case 0x2e: /* DW_CFA_GNU_args_size */
			if (!eh__read_uleb(&p, end, &u))
				return -EINVAL;
			continue;
		case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
			if (!eh__read_uleb(&p, end, &reg) || !eh__read_uleb(&p, end, &u) || u > INT32_MAX ||
			    !scaled(c, -(int64_t)u, &s))
				return -EINVAL;
			set_offset(run, st, reg, RULE_OFFSET, s);
			continue;
		default:
			return -EINVAL;
		}
	advance:
		if (__builtin_mul_overflow(delta, c->code_align, &u) || u > pc - loc)
			return 0; /* the next row starts past pc */
		if (run->emit && u) {
			int err = run->emit(run->emit_ctx, loc, st, run->signal);

			if (err)
				return err;
		}
		loc += u;
	}
	/* cfi__rows(): the last row runs to the FDE's end */
	return run->emit ? run->emit(run->emit_ctx, loc, st, run->signal) : 0;
}

/* The rules at file address @pc of @f into @row. Returns 0, -ENOENT (no FDE), -EINVAL. */
int cfi__row(const struct ufile *f, uint64_t pc, struct row *row)
{
	struct cie c;
	struct cfa_run run = {.f = f, .c = &c};
	struct row_state st = {
		.cfa = {.kind = RULE_UNDEF},
		.r = {[R_RBP] = {.kind = RULE_SAME},
		      [R_RSP] = {.kind = RULE_CFA},
		      [R_RA] = {.kind = RULE_UNDEF}},
	};
	const uint8_t *insns, *end;
	uint64_t start;
	int err;

	err = fde_find(f, pc, &c, &start, &insns, &end);
	if (err)
		return err;
	err = cfa_run(&run, &st, c.insns, c.end, start, UINT64_MAX);
	if (err)
		return err;
	run.init = st;
	run.depth = 0;
	err = cfa_run(&run, &st, insns, end, start, pc);
	if (err)
		return err;
	row->st = st;
	row->signal = c.signal;
	row->file = f;
	return 0;
}

int cfi__rows(const struct ufile *f, cfi_row_fn fn, void *ctx, uint64_t *nr_bad)
{
	const uint8_t *insns, *end;
	uint64_t i = 0, j = 0, start, range;
	struct cie c;
	bool debug;
	int err;

	*nr_bad = 0;
	/* the two sorted tables merged: .debug_frame's FDEs lie where .eh_frame has none */
	while (i < f->fde_count || j < f->dbg_count) {
		struct cfa_run run = {.f = f, .c = &c};
		struct row_state st = {
			.cfa = {.kind = RULE_UNDEF},
			.r = {[R_RBP] = {.kind = RULE_SAME},
			      [R_RSP] = {.kind = RULE_CFA},
			      [R_RA] = {.kind = RULE_UNDEF}},
		};

		debug = i == f->fde_count ||
			(j < f->dbg_count && f->dbg_table[j].start < eh_start(f, i));
		if (debug)
			err = fde_read(f, true, f->dbg_table[j++].off, &c, &start, &range, &insns,
				       &end);
		else
			err = fde_at(f, i++, &c, &start, &range, &insns, &end);
		if (err || !range) {
			(*nr_bad)++;
			continue;
		}
		err = cfa_run(&run, &st, c.insns, c.end, start, UINT64_MAX);
		if (err) {
			(*nr_bad)++;
			continue;
		}
		run.init = st;
		run.depth = 0;
		run.emit = fn;
		run.emit_ctx = ctx;
		run.signal = c.signal;
		err = cfa_run(&run, &st, insns, end, start, UINT64_MAX);
		if (err == -ENOMEM || err == -E2BIG)
			return err;
		/* a bad program ends the FDE where it went wrong */
		if (err)
			(*nr_bad)++;
		err = fn(ctx, start + range, NULL, false);
		if (err)
			return err;
	}
	return 0;
}
