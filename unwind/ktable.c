// SPDX-License-Identifier: MIT
/*
 * unwind: .eh_frame (and .debug_frame) compiled into rows a BPF program can search
 * (unwind_ktable__build()).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "unwind-private.h"

/* The .plt's CFA expression (GCC, binutils): rsp + 8, + 8 once (rip & 15) >= N. */
static const uint8_t plt_expr_head[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
static const uint8_t plt_expr_tail[] = {0x2a, 0x33, 0x24, 0x22};

struct build {
	const struct ufile *f;
	struct kunwind_row *rows;
	size_t nr, cap, max;
	struct unwind_ktable_stats *st;
	bool too_far;
};

/* The threshold N of a .plt expression at @r (DW_OP_lit10 or lit11), or 0: another one. */
static int plt_threshold(const struct ufile *f, const struct rule *r)
{
	const uint8_t *e = f->cfi + r->off;
	uint8_t lit;

	if (r->len != sizeof(plt_expr_head) + 1 + sizeof(plt_expr_tail) ||
	    (uint64_t)r->off + r->len > f->eh_len + f->dbg_len ||
	    memcmp(e, plt_expr_head, sizeof(plt_expr_head)) ||
	    memcmp(e + sizeof(plt_expr_head) + 1, plt_expr_tail, sizeof(plt_expr_tail)))
		return 0;
	lit = e[sizeof(plt_expr_head)];
	return lit >= 0x30 && lit <= 0x4f ? lit - 0x30 : 0; /* DW_OP_lit0..lit31 */
}

struct kunwind_row ktable__krow(const struct ufile *f, const struct row_state *st, bool signal)
{
	struct kunwind_row k = {.cfa = KROW_INVALID};
	const struct rule *ra = &st->r[R_RA], *rbp = &st->r[R_RBP];
	int n;

	if (signal)
		return k;
	if (ra->kind == RULE_UNDEF) {
		k.cfa = KROW_STOP;
		return k;
	}
	if (ra->kind != RULE_OFFSET || ra->off != -8)
		return k;
	if (st->cfa.kind == RULE_REG && (st->cfa.reg == DWARF_RSP || st->cfa.reg == DWARF_RBP)) {
		k.cfa = st->cfa.reg == DWARF_RSP ? KROW_RSP : KROW_RBP;
		k.cfa_off = st->cfa.off;
	} else if (st->cfa.kind == RULE_VAL_EXPR && (n = plt_threshold(f, &st->cfa))) {
		k.cfa = KROW_PLT;
		k.cfa_off = n;
	} else {
		return k;
	}
	if (rbp->kind == RULE_SAME) {
		k.rbp = KROW_RBP_SAME;
	} else if (rbp->kind == RULE_OFFSET && rbp->off >= INT16_MIN && rbp->off <= INT16_MAX) {
		k.rbp = KROW_RBP_SAVED;
		k.rbp_off = (int16_t)rbp->off;
	} else {
		k.rbp = KROW_RBP_LOST;
	}
	return k;
}

static bool krow_same_rule(const struct kunwind_row *a, const struct kunwind_row *b)
{
	return a->cfa == b->cfa && a->rbp == b->rbp && a->rbp_off == b->rbp_off &&
	       a->cfa_off == b->cfa_off;
}

static int add_row(struct build *b, uint64_t pc, struct kunwind_row k)
{
	struct kunwind_row *last = b->nr ? &b->rows[b->nr - 1] : NULL;

	if (pc > UINT32_MAX) {
		b->too_far = true;
		return -E2BIG;
	}
	k.pc = (uint32_t)pc;
	/* FDEs overlap rarely (a hand-written one inside another): the later start wins */
	while (last && last->pc >= k.pc) {
		b->nr--;
		last = b->nr ? &b->rows[b->nr - 1] : NULL;
	}
	if (last && krow_same_rule(last, &k))
		return 0;
	if (b->nr == b->max)
		return -E2BIG;
	if (array__grow((void **)&b->rows, &b->cap, b->nr + 1, sizeof(*b->rows)))
		return -ENOMEM;
	b->rows[b->nr++] = k;
	return 0;
}

static int on_row(void *ctx, uint64_t pc, const struct row_state *st, bool signal)
{
	struct build *b = ctx;
	struct kunwind_row k;

	if (!st) {
		/* the FDE's end: a gap until the next one begins (dropped if it begins here) */
		b->st->fdes++;
		return add_row(b, pc, (struct kunwind_row){.cfa = KROW_INVALID});
	}
	k = ktable__krow(b->f, st, signal);
	if (k.cfa == KROW_INVALID)
		b->st->invalid++;
	return add_row(b, pc, k);
}

/* The GNU build-id of @elf (from its PT_NOTE segments) into @st. */
static void read_build_id(Elf *elf, struct unwind_ktable_stats *st)
{
	size_t n, i, off, name_off, desc_off;
	GElf_Nhdr nh;
	GElf_Phdr ph;
	Elf_Data *d;

	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n && !st->build_id_len; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz > (1u << 20))
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		for (off = 0; d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off));) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= sizeof(st->build_id)) {
				memcpy(st->build_id, (const char *)d->d_buf + desc_off,
				       nh.n_descsz);
				st->build_id_len = nh.n_descsz;
				break;
			}
		}
	}
}

int unwind_ktable__build(int fd, size_t max_rows, struct kunwind_row **rows, size_t *nr,
			 struct unwind_ktable_stats *st)
{
	struct ufile f = {};
	struct build b = {.f = &f, .max = max_rows, .st = st};
	Elf *elf;
	int err;

	memset(st, 0, sizeof(*st));
	*rows = NULL;
	*nr = 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	read_build_id(elf, st);
	err = ufile__parse(&f, elf);
	if (!err)
		err = cfi__rows(&f, on_row, &b, &st->fdes_bad);
	st->fdes_debug = f.dbg_count;
	st->fdes_bad += f.dbg_bad;
	ufile__clear(&f);
	elf_end(elf);
	if (err) {
		free(b.rows);
		return err;
	}
	st->rows = b.nr;
	*rows = b.rows;
	*nr = b.nr;
	return 0;
}
