// SPDX-License-Identifier: MIT
/*
 * unwind: DWARF call frame information (.eh_frame, found through .eh_frame_hdr) run over
 * a copy of the stack. The row of unwind rules at an instruction is computed once and
 * kept in a direct-mapped cache keyed by (process image, address): a walk through
 * cached rows reads nothing but the stack copy.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "common.h"
#include "unwind.h"

#define SECTION_MAX	(64u << 20) /* .eh_frame bytes kept per file */
#define STACK_PLAUSIBLE (8u << 20)  /* reads this far above sp are stack reads */
#define ROWS_NR		4096	    /* cached rows (a power of two) */
#define STATE_DEPTH	8	    /* DW_CFA_remember_state nesting */
#define EXPR_STACK	16	    /* DWARF expression stack */
#define EXPR_STEPS	256	    /* operations run per expression (branches loop) */
#define CFA_OPS_MAX	65536	    /* CFA instructions run per row (GCC's FDEs: tens) */

#define DW_EH_PE_omit	  0xff
#define DW_EH_PE_absptr	  0x00
#define DW_EH_PE_uleb128  0x01
#define DW_EH_PE_udata2	  0x02
#define DW_EH_PE_udata4	  0x03
#define DW_EH_PE_udata8	  0x04
#define DW_EH_PE_sleb128  0x09
#define DW_EH_PE_sdata2	  0x0a
#define DW_EH_PE_sdata4	  0x0b
#define DW_EH_PE_sdata8	  0x0c
#define DW_EH_PE_pcrel	  0x10
#define DW_EH_PE_datarel  0x30
#define DW_EH_PE_indirect 0x80

/* DWARF register numbers of the x86-64 psABI */
#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RIP 16

/* The unwind tables of one file, copied out of it (the file may go away). */
struct ufile {
	const void *id;
	bool loaded;	   /* false: not read, open failed (process gone) or dropped by trim */
	bool no_cfi;	   /* no usable .eh_frame_hdr */
	uint64_t last_use; /* unwinder tick of the last lookup */
	uint8_t *hdr;
	uint64_t hdr_vaddr, hdr_len;
	uint8_t *eh;
	uint64_t eh_vaddr, eh_len;
	uint64_t fde_count, table_off;
};

/* How one register of the caller is found (DWARF's register rules). */
enum rule_kind {
	RULE_SAME = 0,	 /* the callee did not change it (rbp's default) */
	RULE_UNDEF,	 /* not recoverable (ra: the outermost frame) */
	RULE_CFA,	 /* is the CFA (rsp's default) */
	RULE_OFFSET,	 /* saved at CFA + off */
	RULE_VAL_OFFSET, /* is CFA + off */
	RULE_REG,	 /* is register reg (+ off: the CFA's rule) */
	RULE_EXPR,	 /* saved at the address an expression computes from the CFA */
	RULE_VAL_EXPR, /* is what an expression computes (from the CFA; the CFA's: from nothing) */
};

struct rule {
	uint8_t kind;
	uint8_t reg;
	uint16_t len; /* expression bytes */
	int32_t off;  /* offset; the expression's offset in the file's .eh_frame copy */
};

/* The registers a walk follows: the CFA's rule, then rbp, rsp and the return address. */
enum { R_RBP, R_RSP, R_RA, R_NR };

struct row_state {
	struct rule cfa, r[R_NR];
};

/*
 * A cached row: how to find the caller's registers at one instruction of one process
 * image. kind: ROW_CFI (rules), ROW_FP (a file without CFI: the frame pointer).
 */
enum row_kind { ROW_EMPTY = 0, ROW_CFI, ROW_FP };

struct row {
	pid_t pid;
	uint8_t kind;
	bool signal; /* a signal frame (augmentation 'S'): the caller's ip is exact */
	uint64_t gen, pc;
	const struct ufile *file; /* holds the expressions */
	struct row_state st;
};

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

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	return read_leb(p, end, false, out);
}

static bool read_sleb(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint64_t v;

	if (!read_leb(p, end, true, &v))
		return false;
	*out = (int64_t)v;
	return true;
}

static bool read_fixed(const uint8_t **p, const uint8_t *end, size_t n, uint64_t *out)
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
static bool read_int(const uint8_t **p, const uint8_t *end, size_t n, bool sign, uint64_t *out)
{
	if (!read_fixed(p, end, n, out))
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
static bool read_encoded_at(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t vaddr,
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
		if (!read_int(p, end, (enc & 0x07) ? 1u << ((enc & 0x07) - 1) : 8, enc & 0x08, &v))
			return false;
		break;
	case DW_EH_PE_uleb128:
		if (!read_uleb(p, end, &v))
			return false;
		break;
	case DW_EH_PE_sleb128:
		if (!read_sleb(p, end, &s))
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

static void ufile_clear(struct ufile *f)
{
	free(f->hdr);
	free(f->eh);
	f->hdr = f->eh = NULL;
	f->hdr_len = f->eh_len = 0;
}

/* ---- reading tables ---- */

/* A copy of @len bytes at file offset @off, or NULL. */
static uint8_t *read_chunk(Elf *elf, uint64_t off, uint64_t len)
{
	Elf_Data *d;
	uint8_t *buf;

	if (!len || len > SECTION_MAX)
		return NULL;
	d = elf_getdata_rawchunk(elf, off, len, ELF_T_BYTE);
	if (!d || d->d_size != len)
		return NULL;
	buf = malloc(len);
	if (buf)
		memcpy(buf, d->d_buf, len);
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
static int ufile_parse(struct ufile *f, Elf *elf)
{
	const uint8_t *p, *end;
	uint64_t eh_ptr, count, off, len;
	GElf_Phdr ph;
	size_t n, i;
	bool found = false;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		return -EINVAL;
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
	if (!read_encoded_at(&p, end, f->hdr[1], f->hdr_vaddr + 4, f->hdr_vaddr, &eh_ptr))
		return -ENOENT;
	if (!read_encoded_at(&p, end, f->hdr[2], f->hdr_vaddr + (p - f->hdr), f->hdr_vaddr, &count))
		return -ENOENT;
	f->table_off = p - f->hdr;
	if (!count || count > (f->hdr_len - f->table_off) / 8)
		return -ENOENT;
	f->fde_count = count;
	if (!eh_frame_extent(elf, eh_ptr, &off, &len))
		return -ENOENT;
	f->eh_vaddr = eh_ptr;
	f->eh_len = MIN(len, (uint64_t)SECTION_MAX);
	f->eh = read_chunk(elf, off, f->eh_len);
	return f->eh ? 0 : -EINVAL;
}

/* Does @elf have a section named @name? */
static bool has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (n && !strcmp(n, name) && sh.sh_type != SHT_NOBITS)
			return true;
	}
	return false;
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
	err = elf ? ufile_parse(f, elf) : -EINVAL;
	if (err) {
		ufile_clear(f);
		f->no_cfi = true;
		u->st.files_no_cfi++;
		if (elf && has_section(elf, ".debug_frame"))
			u->st.files_debug_frame++;
		pr_debug("unwind: no usable .eh_frame_hdr in %s: %s\n",
			 m->path ? m->path : "a mapped file", strerror(-err));
	} else {
		u->st.files_loaded++;
		u->st.files_held++;
		u->st.files_held_max = MAX(u->st.files_held, u->st.files_held_max);
		u->st.table_bytes += f->hdr_len + f->eh_len;
		u->st.table_bytes_max = MAX(u->st.table_bytes, u->st.table_bytes_max);
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return f;
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

/* Reads an entry's length at *@p (left after it): its body ends at *@body_end. */
static bool entry_body(const uint8_t **p, const uint8_t *end, const uint8_t **body_end)
{
	uint64_t len;

	if (!read_fixed(p, end, 4, &len))
		return false;
	if (len == 0xffffffff && !read_fixed(p, end, 8, &len))
		return false;
	if (!len || len > (uint64_t)(end - *p))
		return false;
	*body_end = *p + len;
	return true;
}

/* Skips a pointer of encoding @enc (its size depends on the low four bits only). */
static bool skip_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc)
{
	uint64_t v;

	return enc == DW_EH_PE_omit || read_encoded_at(p, end, enc & 0x0f, 0, 0, &v);
}

static int cie_parse(const struct ufile *f, uint64_t off, struct cie *c)
{
	const uint8_t *p = f->eh + off, *end = f->eh + f->eh_len, *body_end, *aug, *aug_end;
	uint64_t id, len;
	uint8_t version, enc;

	if (off >= f->eh_len || !entry_body(&p, end, &body_end) ||
	    !read_fixed(&p, body_end, 4, &id) || id || p >= body_end)
		return -EINVAL;
	version = *p++;
	if (version != 1 && version != 3)
		return -EINVAL;
	aug = p;
	while (p < body_end && *p)
		p++;
	if (p++ >= body_end)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->fde_enc = DW_EH_PE_absptr;
	if (!read_uleb(&p, body_end, &c->code_align) || !read_sleb(&p, body_end, &c->data_align))
		return -EINVAL;
	if (version == 1) {
		if (p >= body_end)
			return -EINVAL;
		c->ra_reg = *p++;
	} else if (!read_uleb(&p, body_end, &c->ra_reg)) {
		return -EINVAL;
	}
	if (aug[0] == 'z') {
		if (!read_uleb(&p, body_end, &len) || len > (uint64_t)(body_end - p))
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
	} else if (aug[0]) {
		return -EINVAL; /* "eh" and other pre-'z' augmentations */
	}
	c->insns = p;
	c->end = body_end;
	return 0;
}

/*
 * The FDE covering file address @pc: its CIE, first address and instructions. Returns 0,
 * -ENOENT (none covers @pc) or -EINVAL (malformed).
 */
static int fde_find(const struct ufile *f, uint64_t pc, struct cie *c, uint64_t *start,
		    const uint8_t **insns, const uint8_t **insns_end)
{
	const uint8_t *p, *end = f->eh + f->eh_len, *body_end, *id_at;
	uint64_t off, cie_ptr, pc_begin, pc_range, len;
	int32_t fde_rel;
	int64_t i;
	int err;

	if (pc - f->hdr_vaddr + 0x80000000ULL > 0xffffffffULL)
		return -ENOENT; /* farther than the table's int32 reach */
	i = table_search(f, (int32_t)(pc - f->hdr_vaddr));
	if (i < 0)
		return -ENOENT;
	memcpy(&fde_rel, f->hdr + f->table_off + (uint64_t)i * 8 + 4, sizeof(fde_rel));
	off = f->hdr_vaddr + (uint64_t)(int64_t)fde_rel - f->eh_vaddr;
	if (off >= f->eh_len)
		return -EINVAL;
	p = f->eh + off;
	if (!entry_body(&p, end, &body_end))
		return -EINVAL;
	id_at = p;
	if (!read_fixed(&p, body_end, 4, &cie_ptr) || !cie_ptr ||
	    cie_ptr > (uint64_t)(id_at - f->eh))
		return -EINVAL;
	err = cie_parse(f, (uint64_t)(id_at - f->eh) - cie_ptr, c);
	if (err)
		return err;
	if (!read_encoded_at(&p, body_end, c->fde_enc, f->eh_vaddr + (uint64_t)(p - f->eh),
			     f->hdr_vaddr, &pc_begin) ||
	    !read_encoded_at(&p, body_end, c->fde_enc & 0x0f, 0, 0, &pc_range))
		return -EINVAL;
	if (pc < pc_begin || pc - pc_begin >= pc_range)
		return -ENOENT;
	if (c->aug_data) {
		if (!read_uleb(&p, body_end, &len) || len > (uint64_t)(body_end - p))
			return -EINVAL;
		p += len;
	}
	*start = pc_begin;
	*insns = p;
	*insns_end = body_end;
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

	if (!read_uleb(p, end, &len) || len > (uint64_t)(end - *p) || len > UINT16_MAX)
		return false;
	*out = (struct rule){.kind = kind, .len = (uint16_t)len, .off = (int32_t)(*p - run->f->eh)};
	*p += len;
	return true;
}

/*
 * Runs the CFA instructions [@p, @end) from location @loc into @st, up to the first
 * advance past @pc. Returns 0, or -EINVAL (malformed or not supported).
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
			if (!read_uleb(&p, end, &u) || !uscaled(c, u, &s))
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
			if (!read_encoded_at(&p, end, c->fde_enc,
					     run->f->eh_vaddr + (uint64_t)(p - run->f->eh),
					     run->f->hdr_vaddr, &u))
				return -EINVAL;
			if (u > pc)
				return 0;
			loc = u;
			continue;
		case 0x02: /* DW_CFA_advance_loc1 */
		case 0x03: /* DW_CFA_advance_loc2 */
		case 0x04: /* DW_CFA_advance_loc4 */
			if (!read_fixed(&p, end, op == 0x02 ? 1 : op == 0x03 ? 2 : 4, &delta))
				return -EINVAL;
			goto advance;
		case 0x05: /* DW_CFA_offset_extended */
			if (!read_uleb(&p, end, &reg) || !read_uleb(&p, end, &u) ||
			    !uscaled(c, u, &s))
				return -EINVAL;
			set_offset(run, st, reg, RULE_OFFSET, s);
			continue;
		case 0x06: /* DW_CFA_restore_extended */
			if (!read_uleb(&p, end, &reg))
				return -EINVAL;
			r = rule_of(run, st, reg);
			if (r)
				*r = *rule_of(run, &run->init, reg);
			continue;
		case 0x07: /* DW_CFA_undefined */
		case 0x08: /* DW_CFA_same_value */
			if (!read_uleb(&p, end, &reg))
				return -EINVAL;
			r = rule_of(run, st, reg);
			if (r)
				*r = (struct rule){.kind = op == 0x07 ? RULE_UNDEF : RULE_SAME};
			continue;
		case 0x09: /* DW_CFA_register */
			if (!read_uleb(&p, end, &reg) || !read_uleb(&p, end, &reg2) || reg2 > 255)
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
			if (!read_uleb(&p, end, &reg) || reg > 255)
				return -EINVAL;
			if (op == 0x0c ? !read_uleb(&p, end, &u) || u > INT32_MAX
				       : !read_sleb(&p, end, &s) || !scaled(c, s, &s))
				return -EINVAL;
			if (op == 0x0c)
				s = (int64_t)u;
			st->cfa = (struct rule){
				.kind = RULE_REG, .reg = (uint8_t)reg, .off = (int32_t)s};
			continue;
		case 0x0d: /* DW_CFA_def_cfa_register */
			if (!read_uleb(&p, end, &reg) || reg > 255 || st->cfa.kind != RULE_REG)
				return -EINVAL;
			st->cfa.reg = (uint8_t)reg;
			continue;
		case 0x0e: /* DW_CFA_def_cfa_offset */
		case 0x13: /* DW_CFA_def_cfa_offset_sf */
			if (op == 0x0e ? !read_uleb(&p, end, &u) || u > INT32_MAX
				       : !read_sleb(&p, end, &s) || !scaled(c, s, &s))
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
			if (!read_uleb(&p, end, &reg) ||
			    !read_expr(run, &p, end, op == 0x10 ? RULE_EXPR : RULE_VAL_EXPR, &tmp))
				return -EINVAL;
			r = rule_of(run, st, reg);
			if (r)
				*r = tmp;
			continue;
		case 0x11: /* DW_CFA_offset_extended_sf */
		case 0x15: /* DW_CFA_val_offset_sf */
			if (!read_uleb(&p, end, &reg) || !read_sleb(&p, end, &s) ||
			    !scaled(c, s, &s))
				return -EINVAL;
			set_offset(run, st, reg, op == 0x11 ? RULE_OFFSET : RULE_VAL_OFFSET, s);
			continue;
		case 0x14: /* DW_CFA_val_offset */
			if (!read_uleb(&p, end, &reg) || !read_uleb(&p, end, &u) ||
			    !uscaled(c, u, &s))
				return -EINVAL;
			set_offset(run, st, reg, RULE_VAL_OFFSET, s);
			continue;
		case 0x2e: /* DW_CFA_GNU_args_size */
			if (!read_uleb(&p, end, &u))
				return -EINVAL;
			continue;
		case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
			if (!read_uleb(&p, end, &reg) || !read_uleb(&p, end, &u) || u > INT32_MAX ||
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
		loc += u;
	}
	return 0;
}

/* The rules at file address @pc of @f into @row. Returns 0, -ENOENT (no FDE), -EINVAL. */
static int row_compute(const struct ufile *f, uint64_t pc, struct row *row)
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
 * Evaluates the DWARF expression of rule @r (in @f's .eh_frame copy) for frame @fr,
 * @push (the CFA) on the stack first when @has_push. Memory is the stack copy.
 */
static bool expr_eval(struct walk *w, const struct ufile *f, const struct rule *r,
		      const struct frame *fr, bool has_push, uint64_t push, uint64_t *out)
{
	const uint8_t *start, *p, *end;
	uint64_t st[EXPR_STACK], a, b, u;
	unsigned int n = 0, steps = 0;
	int64_t s;
	uint8_t op;

	if (!f->eh || (uint64_t)r->off + r->len > f->eh_len)
		return false;
	start = p = f->eh + r->off;
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
			if (!read_sleb(&p, end, &s) || !reg_value(fr, op - 0x70u, &u))
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
			if (!read_int(&p, end, 1u << ((op - 0x08) / 2), op & 1, &u))
				return false;
			PUSH(u);
			break;
		case 0x10: /* DW_OP_constu */
			if (!read_uleb(&p, end, &u))
				return false;
			PUSH(u);
			break;
		case 0x11: /* DW_OP_consts */
			if (!read_sleb(&p, end, &s))
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
			if (!read_fixed(&p, end, 1, &u) || u >= n)
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
			if (!read_fixed(&p, end, 1, &u) || !u || u > 8 ||
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
			if (!read_uleb(&p, end, &u))
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
			if (!read_fixed(&p, end, 2, &u))
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
	    (row->kind == ROW_FP || row->file->loaded)) {
		u->st.rows_reused++;
		return row;
	}
	*err = -ENOENT;
	if (u->ops.find(u->ops_ctx, smp->pid, smp->gen, pc, &m) || m.kind == UNWIND_MAP_OTHER ||
	    !m.file)
		return NULL; /* anonymous (JIT) code, or a mapping not known (yet): not cached */
	f = ufile_get(w, &m, pc);
	if (!f)
		return NULL;
	if (f->no_cfi) {
		tmp.kind = ROW_FP;
	} else {
		*err = row_compute(f, pc - m.bias, &tmp);
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

		if (f->loaded && f->hdr && !u->ops.in_use(u->ops_ctx, f->id))
			unused[n++] = f;
	}
	if (n > keep) {
		qsort(unused, n, sizeof(*unused), by_recency);
		for (i = keep; i < n; i++) {
			/* its cached rows are computed again when the file is read again */
			u->st.table_bytes -= unused[i]->hdr_len + unused[i]->eh_len;
			ufile_clear(unused[i]);
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
		ufile_clear((struct ufile *)(uintptr_t)val);
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
	ips[n++] = fr.ip;
	for (;;) {
		sp = fr.sp;
		row = row_get(&w, exact ? fr.ip : fr.ip - 1, &r);
		if (u->err)
			break;
		exact = row && row->kind == ROW_CFI && row->signal;
		if (row && row->kind == ROW_CFI)
			r = step_cfi(&w, row, &fr);
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
