// SPDX-License-Identifier: MIT
/*
 * unwind: DWARF call frame information (.eh_frame, found through .eh_frame_hdr, and
 * .debug_frame) run over a copy of the stack. The row of unwind rules at an instruction
 * is computed once and kept in a direct-mapped cache keyed by (process image, address):
 * a walk through cached rows reads nothing but the stack copy.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "common.h"
#include "unwind-private.h"

struct unwinder {
	struct unwind_maps_ops ops;
	void *ops_ctx;
	struct row *rows;     /* ROWS_NR, by (pid, gen, pc) */
	struct hashmap files; /* id (hash__u64) -> struct ufile * */
	struct unwind_stats st;
	uint64_t tick;	     /* lookups so far: recency of files */
	uint64_t stack_used; /* of the last walk */
	int err;	     /* -ENOMEM seen in a lookup */
};

/* One unwinder__unwind(): the sample and what the walk found out. */
struct walk {
	struct unwinder *u;
	const struct unwind_sample *smp;
	bool beyond;  /* a stack read past the copy */
	uint64_t top; /* the end of the highest word read */
};

/* The registers of one frame. */
struct frame {
	uint64_t ip, sp, bp;
	bool bp_ok; /* bp known (sampled, or restored by a rule) */
};

/* ---- file cache ---- */

static struct ufile *cache_find(const struct unwinder *u, const void *id)
{
	return (struct ufile *)(uintptr_t)hashmap__find(&u->files, hash__u64((uintptr_t)id), NULL,
							NULL);
}

static int cache_add(struct unwinder *u, struct ufile *f)
{
	return hashmap__insert(&u->files, hash__u64((uintptr_t)f->id), (uintptr_t)f);
}

void ufile__clear(struct ufile *f)
{
	free(f->hdr);
	free(f->cfi);
	free(f->dbg_table);
	f->hdr = f->cfi = NULL;
	f->dbg_table = NULL;
	f->hdr_len = f->eh_len = f->dbg_len = 0;
	f->fde_count = f->dbg_count = f->dbg_bad = 0;
}

uint64_t ufile__bytes(const struct ufile *f)
{
	return f->hdr_len + f->eh_len + f->dbg_len + f->dbg_count * sizeof(*f->dbg_table);
}

/* ---- reading tables ---- */

/* The @len bytes at file offset @off (libelf's), or NULL. */
static const void *file_chunk(Elf *elf, uint64_t off, uint64_t len)
{
	Elf_Data *d;

	if (!len || len > SECTION_MAX)
		return NULL;
	d = elf_getdata_rawchunk(elf, off, len, ELF_T_BYTE);
	return d && d->d_size == len ? d->d_buf : NULL;
}

/* A copy of @len bytes at file offset @off, or NULL. */
static uint8_t *read_chunk(Elf *elf, uint64_t off, uint64_t len)
{
	const void *src = file_chunk(elf, off, len);
	uint8_t *buf = src ? malloc(len) : NULL;

	if (buf)
		memcpy(buf, src, len);
	return buf;
}

/* The extent of .eh_frame starting at @vaddr: its section, else to the end of its PT_LOAD. */
static bool eh_frame_extent(Elf *elf, uint64_t vaddr, uint64_t *off, uint64_t *len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t n, i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_addr == vaddr && sh.sh_type == SHT_PROGBITS &&
		    sh.sh_size) {
			*off = sh.sh_offset;
			*len = sh.sh_size;
			return true;
		}
	}
	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = ph.p_offset + (vaddr - ph.p_vaddr);
			*len = ph.p_vaddr + ph.p_filesz - vaddr;
			return true;
		}
	}
	return false;
}

/* Fills @f from @elf: .eh_frame_hdr (PT_GNU_EH_FRAME) and the .eh_frame it indexes. */
static int parse_eh(struct ufile *f, Elf *elf, size_t n)
{
	const uint8_t *p, *end;
	uint64_t eh_ptr, count, off, len;
	GElf_Phdr ph;
	size_t i;
	bool found = false;

	for (i = 0; i < n && !found; i++)
		found = gelf_getphdr(elf, i, &ph) && ph.p_type == PT_GNU_EH_FRAME;
	if (!found)
		return -ENOENT;
	f->hdr_vaddr = ph.p_vaddr;
	f->hdr_len = ph.p_filesz;
	f->hdr = read_chunk(elf, ph.p_offset, ph.p_filesz);
	if (!f->hdr)
		return -EINVAL;
	p = f->hdr;
	end = f->hdr + f->hdr_len;
	/* version, eh_frame_ptr_enc, fde_count_enc, table_enc */
	if (f->hdr_len < 4 || p[0] != 1 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -ENOENT; /* table_search() reads this (the linkers' default) */
	p += 4;
	if (!eh__read_encoded(&p, end, f->hdr[1], f->hdr_vaddr + 4, f->hdr_vaddr, &eh_ptr))
		return -ENOENT;
	if (!eh__read_encoded(&p, end, f->hdr[2], f->hdr_vaddr + (p - f->hdr), f->hdr_vaddr, &count))
		return -ENOENT;
	f->table_off = p - f->hdr;
	if (!count || count > (f->hdr_len - f->table_off) / 8)
		return -ENOENT;
	f->fde_count = count;
	if (!eh_frame_extent(elf, eh_ptr, &off, &len))
		return -ENOENT;
	f->eh_vaddr = eh_ptr;
	len = MIN(len, (uint64_t)SECTION_MAX);
	f->cfi = read_chunk(elf, off, len);
	if (!f->cfi)
		return -EINVAL;
	f->eh_len = len;
	return 0;
}

/* The section of @elf named @name holding bytes in the file (into *@sh), or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		n = gelf_getshdr(scn, sh) ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
		if (n && !strcmp(n, name) && sh->sh_type == SHT_PROGBITS)
			return scn;
	}
	return NULL;
}

/*
 * The bytes of section @scn (header @sh), at most SECTION_MAX, into *@len: read from
 * the file, or inflated by libelf when compressed (-gz) and not larger than that.
 */
static const void *section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, Elf *elf, uint64_t *len)
{
	Elf_Data *d;
	GElf_Chdr ch;

	if (!(sh->sh_flags & SHF_COMPRESSED)) {
		*len = MIN(sh->sh_size, (uint64_t)SECTION_MAX);
		return file_chunk(elf, sh->sh_offset, *len);
	}
	if (!gelf_getchdr(scn, &ch) || !ch.ch_size || ch.ch_size > SECTION_MAX ||
	    elf_compress(scn, 0, 0) != 1)
		return NULL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != ch.ch_size)
		return NULL;
	*len = d->d_size;
	return d->d_buf;
}

/*
 * Adds the .debug_frame of @elf to @f (after its .eh_frame, if any) with its index;
 * keeps it only when some of its FDEs cover code .eh_frame does not. 0, -ENOENT
 * (none), -EINVAL, -ENOMEM.
 */
static int parse_debug(struct ufile *f, Elf *elf, size_t n)
{
	struct code_span code[CODE_SPANS];
	size_t nr_code = 0, i;
	const void *src;
	GElf_Shdr sh;
	GElf_Phdr ph;
	Elf_Scn *scn;
	uint64_t len;
	uint8_t *buf;
	int err;

	scn = find_section(elf, ".debug_frame", &sh);
	if (!scn)
		return -ENOENT;
	for (i = 0; i < n && nr_code < CODE_SPANS; i++) {
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_vaddr + ph.p_memsz > ph.p_vaddr)
			code[nr_code++] = (struct code_span){ph.p_vaddr, ph.p_vaddr + ph.p_memsz};
	}
	if (!nr_code)
		return -EINVAL;
	src = section_bytes(scn, &sh, elf, &len);
	if (!src)
		return -EINVAL;
	buf = realloc(f->cfi, f->eh_len + len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf + f->eh_len, src, len);
	f->cfi = buf;
	f->dbg_len = len;
	f->dbg_addr = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	err = cfi__index_debug(f, code, nr_code);
	if (err || !f->dbg_count) {
		/* nothing .eh_frame lacks: only .eh_frame is kept */
		f->dbg_len = 0;
		if (!f->eh_len) {
			free(f->cfi);
			f->cfi = NULL;
		} else if ((buf = realloc(f->cfi, f->eh_len))) {
			f->cfi = buf;
		}
		return err ? err : -ENOENT;
	}
	return 0;
}

int ufile__parse(struct ufile *f, Elf *elf)
{
	size_t n;
	int err, err_dbg;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		return -EINVAL;
	err = parse_eh(f, elf, n);
	if (err)
		ufile__clear(f); /* no .eh_frame: .debug_frame alone, if any */
	err_dbg = parse_debug(f, elf, n);
	if (err_dbg == -ENOMEM) {
		ufile__clear(f);
		return err_dbg;
	}
	if (!err || !err_dbg)
		return 0;
	ufile__clear(f);
	return err; /* .eh_frame's: a .debug_frame that cannot be read adds nothing */
}

/* The tables of the file of @m (mapping of @addr in the sample's process). */
static struct ufile *ufile_get(struct walk *w, const struct unwind_map *m, uint64_t addr)
{
	struct unwinder *u = w->u;
	struct ufile *f = cache_find(u, m->file);
	Elf *elf = NULL;
	int fd = -1, err;

	if (f && f->loaded) {
		f->last_use = ++u->tick;
		return f;
	}
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (f)
			f->id = m->file; /* before cache_add(), which keys it by its id */
		if (!f || cache_add(u, f)) {
			free(f);
			u->err = -ENOMEM;
			return NULL;
		}
	}
	f->last_use = ++u->tick;
	f->no_cfi = false;
	if (m->kind == UNWIND_MAP_VDSO) {
		unsigned long base = getauxval(AT_SYSINFO_EHDR);

		if (base)
			elf = elf_memory((char *)base, m->end - m->start);
	} else {
		fd = u->ops.open(u->ops_ctx, w->smp->pid, w->smp->gen, addr);
		if (fd < 0) {
			u->st.files_unreadable++;
			pr_debug("unwind: cannot open %s of pid %d: %s\n",
				 m->path ? m->path : "a mapped file", (int)w->smp->pid,
				 strerror(-fd));
			return NULL;
		}
		elf = elf_begin(fd, ELF_C_READ, NULL);
	}
	f->loaded = true;
	err = elf ? ufile__parse(f, elf) : -EINVAL;
	if (err) {
		ufile__clear(f);
		f->no_cfi = true;
		u->st.files_no_cfi++;
		pr_debug("unwind: no usable .eh_frame_hdr or .debug_frame in %s: %s\n",
			 m->path ? m->path : "a mapped file", strerror(-err));
	} else {
		if (f->dbg_count)
			u->st.files_debug_frame++;
		u->st.files_loaded++;
		u->st.files_held++;
		u->st.files_held_max = MAX(u->st.files_held, u->st.files_held_max);
		u->st.table_bytes += ufile__bytes(f);
		u->st.table_bytes_max = MAX(u->st.table_bytes, u->st.table_bytes_max);
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return f;
}

/* ---- walking ---- */

/* Reads the word at @addr from the stack copy (a read just past it marks the walk). */
static bool stack_read(struct walk *w, uint64_t addr, uint64_t *val)
{
	const struct unwind_sample *smp = w->smp;

	/* no sum may wrap: addresses come from registers and stacks of another process */
	if (addr >= smp->sp && smp->stack_len >= sizeof(*val) &&
	    addr - smp->sp <= smp->stack_len - sizeof(*val)) {
		memcpy(val, (const uint8_t *)smp->stack + (addr - smp->sp), sizeof(*val));
		w->top = MAX(w->top, addr + sizeof(*val));
		return true;
	}
	if (addr >= smp->sp && addr - smp->sp < STACK_PLAUSIBLE)
		w->beyond = true;
	return false;
}

/* The value of DWARF register @reg in frame @fr, if the walk knows it. */
static bool reg_value(const struct frame *fr, uint64_t reg, uint64_t *v)
{
	switch (reg) {
	case DWARF_RSP:
		*v = fr->sp;
		return true;
	case DWARF_RBP:
		*v = fr->bp;
		return fr->bp_ok;
	case DWARF_RIP:
		*v = fr->ip;
		return true;
	default:
		return false; /* not sampled */
	}
}

#define PUSH(x)                                                                                    \
	do {                                                                                       \
		uint64_t v_ = (x);                                                                 \
                                                                                                   \
		if (n == EXPR_STACK)                                                               \
			return false;                                                              \
		st[n++] = v_;                                                                      \
	} while (0)
#define NEED(k)                                                                                    \
	do {                                                                                       \
		if (n < (k))                                                                       \
			return false;                                                              \
	} while (0)

/*
 * Evaluates the DWARF expression of rule @r (in @f's CFI copy) for frame @fr,
 * @push (the CFA) on the stack first when @has_push. Memory is the stack copy.
 * One function on purpose: a stack machine with one case per DWARF expression
 * opcode (DWARF 5 section 2.5), each a few lines over the same bounded stack and
 * operand reader (PUSH/NEED); split, every case would pass both around.
 */
static bool expr_eval(struct walk *w, const struct ufile *f, const struct rule *r,
		      const struct frame *fr, bool has_push, uint64_t push, uint64_t *out)
{
	const uint8_t *start, *p, *end;
	uint64_t st[EXPR_STACK], a, b, u;
	unsigned int n = 0, steps = 0;
	int64_t s;
	uint8_t op;

	if (!f->cfi || (uint64_t)r->off + r->len > f->eh_len + f->dbg_len)
		return false;
	start = p = f->cfi + r->off;
	end = start + r->len;
	if (has_push)
		PUSH(push);
	while (p < end) {
		if (++steps > EXPR_STEPS)
			return false;
		op = *p++;
		if (op >= 0x30 && op <= 0x4f) { /* DW_OP_lit0..31 */
			PUSH(op - 0x30u);
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) { /* DW_OP_breg0..31 */
			if (!eh__read_sleb(&p, end, &s) || !reg_value(fr, op - 0x70u, &u))
				return false;
			PUSH(u + (uint64_t)s);
			continue;
		}
		switch (op) {
		case 0x08: /* DW_OP_const1u */
		case 0x09: /* DW_OP_const1s */
		case 0x0a: /* DW_OP_const2u */
		case 0x0b: /* DW_OP_const2s */
		case 0x0c: /* DW_OP_const4u */
		case 0x0d: /* DW_OP_const4s */
		case 0x0e: /* DW_OP_const8u */
		case 0x0f: /* DW_OP_const8s */
			if (!eh__read_int(&p, end, 1u << ((op - 0x08) / 2), op & 1, &u))
				return false;
			PUSH(u);
			break;
		case 0x10: /* DW_OP_constu */
			if (!eh__read_uleb(&p, end, &u))
				return false;
			PUSH(u);
			break;
		case 0x11: /* DW_OP_consts */
			if (!eh__read_sleb(&p, end, &s))
				return false;
			PUSH((uint64_t)s);
			break;
		case 0x12: /* DW_OP_dup */
			NEED(1);
			PUSH(st[n - 1]);
			break;
		case 0x13: /* DW_OP_drop */
			NEED(1);
			n--;
			break;
		case 0x14: /* DW_OP_over */
			NEED(2);
			PUSH(st[n - 2]);
			break;
		case 0x15: /* DW_OP_pick */
			if (!eh__read_fixed(&p, end, 1, &u) || u >= n)
				return false;
			PUSH(st[n - 1 - u]);
			break;
		case 0x16: /* DW_OP_swap */
			NEED(2);
			a = st[n - 1];
			st[n - 1] = st[n - 2];
			st[n - 2] = a;
			break;
		case 0x17: /* DW_OP_rot: top to third, second to top, third to second */
			NEED(3);
			a = st[n - 1];
			st[n - 1] = st[n - 2];
			st[n - 2] = st[n - 3];
			st[n - 3] = a;
			break;
		case 0x06: /* DW_OP_deref */
			NEED(1);
			if (!stack_read(w, st[n - 1], &st[n - 1]))
				return false;
			break;
		case 0x94: /* DW_OP_deref_size */
			NEED(1);
			if (!eh__read_fixed(&p, end, 1, &u) || !u || u > 8 ||
			    !stack_read(w, st[n - 1], &st[n - 1]))
				return false;
			if (u < 8)
				st[n - 1] &= (1ULL << (u * 8)) - 1;
			break;
		case 0x19: /* DW_OP_abs */
			NEED(1);
			if ((int64_t)st[n - 1] < 0)
				st[n - 1] = -st[n - 1];
			break;
		case 0x1f: /* DW_OP_neg */
			NEED(1);
			st[n - 1] = -st[n - 1];
			break;
		case 0x20: /* DW_OP_not */
			NEED(1);
			st[n - 1] = ~st[n - 1];
			break;
		case 0x23: /* DW_OP_plus_uconst */
			NEED(1);
			if (!eh__read_uleb(&p, end, &u))
				return false;
			st[n - 1] += u;
			break;
		case 0x1a: /* DW_OP_and */
		case 0x1b: /* DW_OP_div */
		case 0x1c: /* DW_OP_minus */
		case 0x1d: /* DW_OP_mod */
		case 0x1e: /* DW_OP_mul */
		case 0x21: /* DW_OP_or */
		case 0x22: /* DW_OP_plus */
		case 0x24: /* DW_OP_shl */
		case 0x25: /* DW_OP_shr */
		case 0x26: /* DW_OP_shra */
		case 0x27: /* DW_OP_xor */
		case 0x29: /* DW_OP_eq */
		case 0x2a: /* DW_OP_ge */
		case 0x2b: /* DW_OP_gt */
		case 0x2c: /* DW_OP_le */
		case 0x2d: /* DW_OP_lt */
		case 0x2e: /* DW_OP_ne */
			NEED(2);
			b = st[--n];
			a = st[n - 1];
			switch (op) {
			case 0x1a:
				a &= b;
				break;
			case 0x1b:
				if (!b || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
					return false;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case 0x1c:
				a -= b;
				break;
			case 0x1d:
				if (!b)
					return false;
				a %= b;
				break;
			case 0x1e:
				a *= b;
				break;
			case 0x21:
				a |= b;
				break;
			case 0x22:
				a += b;
				break;
			case 0x24:
				a = b < 64 ? a << b : 0;
				break;
			case 0x25:
				a = b < 64 ? a >> b : 0;
				break;
			case 0x26:
				a = (uint64_t)((int64_t)a >> (b < 64 ? b : 63));
				break;
			case 0x27:
				a ^= b;
				break;
			case 0x29:
				a = a == b;
				break;
			case 0x2a:
				a = (int64_t)a >= (int64_t)b;
				break;
			case 0x2b:
				a = (int64_t)a > (int64_t)b;
				break;
			case 0x2c:
				a = (int64_t)a <= (int64_t)b;
				break;
			case 0x2d:
				a = (int64_t)a < (int64_t)b;
				break;
			default:
				a = a != b;
				break;
			}
			st[n - 1] = a;
			break;
		case 0x2f: /* DW_OP_skip */
		case 0x28: /* DW_OP_bra */
			if (!eh__read_fixed(&p, end, 2, &u))
				return false;
			s = (int16_t)(uint16_t)u;
			if (op == 0x28) {
				NEED(1);
				if (!st[--n])
					break;
			}
			if (s < start - p || s > end - p)
				return false;
			p += s;
			break;
		case 0x96: /* DW_OP_nop */
			break;
		default:
			return false; /* DW_OP_reg*, piece, call, TLS, ...: not in unwind rules */
		}
	}
	if (!n)
		return false;
	*out = st[n - 1];
	return true;
}

#undef PUSH
#undef NEED

/* The CFA of frame @fr by @row. */
static bool cfa_value(struct walk *w, const struct row *row, const struct frame *fr, uint64_t *cfa)
{
	const struct rule *r = &row->st.cfa;
	uint64_t v;

	switch (r->kind) {
	case RULE_REG:
		if (!reg_value(fr, r->reg, &v))
			return false;
		*cfa = v + (uint64_t)(int64_t)r->off;
		return true;
	case RULE_VAL_EXPR:
		return expr_eval(w, row->file, r, fr, false, 0, cfa);
	default:
		return false;
	}
}

/*
 * The caller's value of the register of rule @r (whose own value in @fr is @self, if
 * @self_ok): 1 found, 0 undefined, -1 not found (a read failed).
 */
static int rule_value(struct walk *w, const struct row *row, const struct rule *r,
		      const struct frame *fr, uint64_t cfa, uint64_t self, bool self_ok,
		      uint64_t *out)
{
	uint64_t v;

	switch (r->kind) {
	case RULE_SAME:
		*out = self;
		return self_ok ? 1 : 0;
	case RULE_UNDEF:
		return 0;
	case RULE_CFA:
		*out = cfa;
		return 1;
	case RULE_OFFSET:
		return stack_read(w, cfa + (uint64_t)(int64_t)r->off, out) ? 1 : -1;
	case RULE_VAL_OFFSET:
		*out = cfa + (uint64_t)(int64_t)r->off;
		return 1;
	case RULE_REG:
		return reg_value(fr, r->reg, out) ? 1 : -1;
	case RULE_EXPR:
		if (!expr_eval(w, row->file, r, fr, true, cfa, &v))
			return -1;
		return stack_read(w, v, out) ? 1 : -1;
	case RULE_VAL_EXPR:
		return expr_eval(w, row->file, r, fr, true, cfa, out) ? 1 : -1;
	default:
		return -1;
	}
}

/* One frame up by the rules of @row. Returns 1, 0 (the outermost frame) or -EINVAL. */
static int step_cfi(struct walk *w, const struct row *row, struct frame *fr)
{
	struct frame up = {0};
	uint64_t cfa;
	int r;

	if (!cfa_value(w, row, fr, &cfa))
		return -EINVAL;
	r = rule_value(w, row, &row->st.r[R_RA], fr, cfa, fr->ip, true, &up.ip);
	if (r <= 0)
		return r ? -EINVAL : 0;
	if (rule_value(w, row, &row->st.r[R_RSP], fr, cfa, fr->sp, true, &up.sp) <= 0)
		return -EINVAL;
	/* a saved rbp that cannot be read leaves it unknown: later frames may not need it */
	up.bp_ok = rule_value(w, row, &row->st.r[R_RBP], fr, cfa, fr->bp, fr->bp_ok, &up.bp) > 0;
	*fr = up;
	return 1;
}

/*
 * One frame up by the frame pointer, where there is no CFI: [bp] is the caller's bp,
 * [bp + 8] the return address. bp 0 ends the chain (the psABI's outermost frame: _start
 * clears it). Returns 1, 0 (outermost) or -ENOENT.
 */
/*
 * A CPython perf trampoline, stopped at its call's return address: 8 bytes below the
 * return address, which 3.13+ fill with the caller's rbp (then rbp points there) and
 * 3.12 leaves unused (rbp untouched).
 */
static int step_tramp(struct walk *w, struct frame *fr)
{
	uint64_t sp = fr->sp, ra, bp = fr->bp;
	bool bp_ok = fr->bp_ok;

	if (sp > UINT64_MAX - 16 || !stack_read(w, sp + 8, &ra))
		return -ENOENT;
	if (bp_ok && bp == sp)
		bp_ok = stack_read(w, sp, &bp);
	*fr = (struct frame){ .ip = ra, .sp = sp + 16, .bp = bp, .bp_ok = bp_ok };
	return 1;
}

static int step_fp(struct walk *w, struct frame *fr)
{
	uint64_t bp = fr->bp, saved, ra;

	if (fr->bp_ok && !bp)
		return 0;
	if (!fr->bp_ok || bp < fr->sp || bp > UINT64_MAX - 16 || !stack_read(w, bp, &saved) ||
	    !stack_read(w, bp + 8, &ra))
		return -ENOENT;
	*fr = (struct frame){.ip = ra, .sp = bp + 16, .bp = saved, .bp_ok = true};
	return 1;
}

/* ---- cached rows ---- */

static size_t row_slot(pid_t pid, uint64_t gen, uint64_t pc)
{
	uint64_t h = (pc ^ ((uint64_t)(uint32_t)pid << 32) ^ gen) * 0x9e3779b97f4a7c15ULL;

	return h >> (64 - 12); /* ROWS_NR == 1 << 12 */
}

/*
 * The row at @pc of the sample's image: cached, or computed (and cached). NULL with
 * *@err -ENOENT when no file's CFI covers @pc (the frame pointer is tried), other
 * -errno when the CFI cannot be used.
 */
static const struct row *row_get(struct walk *w, uint64_t pc, int *err)
{
	struct unwinder *u = w->u;
	const struct unwind_sample *smp = w->smp;
	struct row *row = &u->rows[row_slot(smp->pid, smp->gen, pc)], tmp = {0};
	struct unwind_map m;
	struct ufile *f;

	if (row->kind && row->pc == pc && row->pid == smp->pid && row->gen == smp->gen &&
	    (row->kind == ROW_FP || row->kind == ROW_TRAMP || row->file->loaded)) {
		u->st.rows_reused++;
		return row;
	}
	*err = -ENOENT;
	if (u->ops.find(u->ops_ctx, smp->pid, smp->gen, pc, &m))
		return NULL; /* a mapping not known (yet): not cached */
	if (m.kind == UNWIND_MAP_OTHER && u->ops.trampoline &&
	    u->ops.trampoline(u->ops_ctx, smp->pid, smp->gen, pc)) {
		*row = (struct row){ .kind = ROW_TRAMP, .pid = smp->pid, .gen = smp->gen, .pc = pc };
		return row;
	}
	if (m.kind == UNWIND_MAP_OTHER || !m.file)
		return NULL; /* anonymous (JIT) code: the frame pointer */
	f = ufile_get(w, &m, pc);
	if (!f)
		return NULL;
	if (f->no_cfi) {
		tmp.kind = ROW_FP;
	} else {
		*err = cfi__row(f, pc - m.bias, &tmp);
		if (*err == -ENOENT)
			tmp.kind = ROW_FP; /* code of the file without an FDE (a PLT, assembly) */
		else if (*err)
			return NULL;
		else
			tmp.kind = ROW_CFI;
		u->st.rows_computed++;
	}
	tmp.pid = smp->pid;
	tmp.gen = smp->gen;
	tmp.pc = pc;
	*row = tmp;
	return row;
}

/* ---- public ---- */

struct unwinder *unwinder__new(const struct unwind_opts *opts)
{
	struct unwinder *u;

	if (!opts || opts->sz < sizeof(*opts) || !opts->maps || !opts->maps->find ||
	    !opts->maps->open) {
		errno = EINVAL;
		return NULL;
	}
	elf_version(EV_CURRENT);
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->rows = calloc(ROWS_NR, sizeof(*u->rows));
	if (!u->rows) {
		free(u);
		return NULL;
	}
	u->ops = *opts->maps;
	u->ops_ctx = opts->maps_ctx;
	return u;
}

static int by_recency(const void *a, const void *b)
{
	const struct ufile *x = *(const struct ufile *const *)a,
			   *y = *(const struct ufile *const *)b;

	return x->last_use < y->last_use ? 1 : x->last_use > y->last_use ? -1 : 0;
}

void unwinder__trim(struct unwinder *u, size_t keep)
{
	struct hashmap_iter it;
	struct ufile **unused;
	size_t i, n = 0;
	uint64_t val;

	if (!u || !u->ops.in_use || u->st.files_held <= keep)
		return;
	unused = malloc(u->st.files_held * sizeof(*unused));
	if (!unused)
		return; /* keeping tables is always correct */
	for (hashmap__iter_init(&u->files, &it);
	     n < u->st.files_held && hashmap__iter_next(&u->files, &it, &val);) {
		struct ufile *f = (struct ufile *)(uintptr_t)val;

		if (f->loaded && f->cfi && !u->ops.in_use(u->ops_ctx, f->id))
			unused[n++] = f;
	}
	if (n > keep) {
		qsort(unused, n, sizeof(*unused), by_recency);
		for (i = keep; i < n; i++) {
			/* its cached rows are computed again when the file is read again */
			u->st.table_bytes -= ufile__bytes(unused[i]);
			ufile__clear(unused[i]);
			unused[i]->loaded = false;
			u->st.files_held--;
			u->st.files_evicted++;
		}
	}
	free(unused);
}

void unwinder__free(struct unwinder *u)
{
	struct hashmap_iter it;
	uint64_t val;

	if (!u)
		return;
	for (hashmap__iter_init(&u->files, &it); hashmap__iter_next(&u->files, &it, &val);) {
		ufile__clear((struct ufile *)(uintptr_t)val);
		free((struct ufile *)(uintptr_t)val);
	}
	hashmap__free(&u->files);
	free(u->rows);
	free(u);
}

void unwinder__forget(struct unwinder *u, pid_t pid, uint64_t gen)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < ROWS_NR; i++)
		if (u->rows[i].kind && u->rows[i].pid == pid && u->rows[i].gen == gen)
			u->rows[i].kind = ROW_EMPTY;
}

int unwinder__unwind(struct unwinder *u, const struct unwind_sample *smp, uint64_t *ips, size_t cap,
		     enum unwind_end *end)
{
	struct walk w = {.u = u, .smp = smp};
	struct frame fr = {.ip = smp->ip, .sp = smp->sp, .bp = smp->bp, .bp_ok = true};
	const struct row *row;
	bool exact = true; /* the leaf's ip, and one restored by a signal frame, are not
			      return addresses: the instruction is ip itself, not ip - 1 */
	uint64_t sp;
	size_t n = 0;
	int r;

	if (!cap)
		return -EINVAL;
	u->st.samples++;
	*end = UNWIND_END_ERROR;
	if (!smp->ip)
		goto out;
	if (smp->sps)
		smp->sps[n] = fr.sp;
	ips[n++] = fr.ip;
	for (;;) {
		sp = fr.sp;
		row = row_get(&w, exact ? fr.ip : fr.ip - 1, &r);
		if (u->err)
			break;
		exact = row && row->kind == ROW_CFI && row->signal;
		if (row && row->kind == ROW_CFI)
			r = step_cfi(&w, row, &fr);
		else if (row && row->kind == ROW_TRAMP)
			r = step_tramp(&w, &fr);
		else if (row || r == -ENOENT)
			r = step_fp(&w, &fr);
		if (!r || (r > 0 && !fr.ip)) {
			*end = UNWIND_END_OUTERMOST;
			break;
		}
		if (r < 0) {
			*end = w.beyond	      ? UNWIND_END_TRUNCATED
			       : r == -ENOENT ? UNWIND_END_NO_INFO
					      : UNWIND_END_ERROR;
			break;
		}
		/* the stack unwinds upward (a signal frame may restore any sp) */
		if (!exact && fr.sp <= sp) {
			*end = UNWIND_END_ERROR;
			break;
		}
		if (n == cap) {
			*end = UNWIND_END_DEPTH;
			break;
		}
		if (smp->sps)
			smp->sps[n] = fr.sp;
		ips[n++] = fr.ip;
	}
out:
	u->stack_used = w.top;
	if (u->err) {
		u->err = 0;
		return -ENOMEM;
	}
	u->st.frames += n;
	u->st.ends[*end]++;
	return (int)n;
}

uint64_t unwinder__stack_used(const struct unwinder *u)
{
	return u->stack_used;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->st;
}
