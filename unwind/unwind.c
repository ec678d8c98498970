// SPDX-License-Identifier: MIT
/* unwind: libunwind remote unwinding over a stack copy and cached .eh_frame tables. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <libunwind.h>

#include "common.h"
#include "unwind.h"

/* Exported by libunwind (not in its headers): binary search of an .eh_frame_hdr table. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

#define SECTION_MAX	(64u << 20) /* .eh_frame bytes kept per file */
#define STACK_PLAUSIBLE (8u << 20)  /* reads this far above sp are stack reads */

#define DW_EH_PE_omit	 0xff
#define DW_EH_PE_absptr	 0x00
#define DW_EH_PE_udata4	 0x03
#define DW_EH_PE_sdata4	 0x0b
#define DW_EH_PE_udata8	 0x04
#define DW_EH_PE_sdata8	 0x0c
#define DW_EH_PE_pcrel	 0x10
#define DW_EH_PE_datarel 0x30

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

/*
 * One libunwind address space per process image, with libunwind's cache of unwind
 * rules on: it is keyed by ip alone, which within one image names one instruction.
 * A cache hit skips the table search and the CFI parse (and their allocations, each
 * of which masks signals with two system calls in libunwind 1.6).
 */
#define SPACES_MAX 64

struct space {
	pid_t pid;
	uint64_t gen;
	unw_addr_space_t as; /* NULL: slot free */
	uint64_t last_use;
};

struct unwinder {
	struct unwind_maps_ops ops;
	void *ops_ctx;
	struct space spaces[SPACES_MAX];
	struct ufile **slots; /* open addressing by id */
	size_t nr_slots, count;
	struct unwind_stats st;
	uint64_t tick; /* lookups so far: recency of files */
	int err;       /* -ENOMEM seen inside a callback */
};

/* What the accessors see during one unwinder__unwind(). */
struct walk {
	struct unwinder *u;
	const struct unwind_sample *smp;
	const struct ufile *file; /* the file of the last find_proc_info */
	uint64_t bias;
	bool beyond; /* a stack read past the copy */
};

/* ---- file cache ---- */

static size_t slot_of(const struct unwinder *u, const void *id)
{
	uint64_t h = (uintptr_t)id * 0x9e3779b97f4a7c15ULL;

	return (h >> 17) & (u->nr_slots - 1);
}

static struct ufile *cache_find(const struct unwinder *u, const void *id)
{
	size_t i;

	if (!u->nr_slots)
		return NULL;
	for (i = slot_of(u, id); u->slots[i]; i = (i + 1) & (u->nr_slots - 1))
		if (u->slots[i]->id == id)
			return u->slots[i];
	return NULL;
}

static int cache_add(struct unwinder *u, struct ufile *f)
{
	size_t i;

	if ((u->count + 1) * 2 > u->nr_slots) {
		size_t n = u->nr_slots ? u->nr_slots * 2 : 64, j;
		struct ufile **old = u->slots, **s = calloc(n, sizeof(*s));

		if (!s)
			return -ENOMEM;
		u->slots = s;
		j = u->nr_slots;
		u->nr_slots = n;
		while (j--) {
			if (!old[j])
				continue;
			for (i = slot_of(u, old[j]->id); s[i]; i = (i + 1) & (n - 1))
				;
			s[i] = old[j];
		}
		free(old);
	}
	for (i = slot_of(u, f->id); u->slots[i]; i = (i + 1) & (u->nr_slots - 1))
		;
	u->slots[i] = f;
	u->count++;
	return 0;
}

static void ufile_clear(struct ufile *f)
{
	free(f->hdr);
	free(f->eh);
	f->hdr = f->eh = NULL;
	f->hdr_len = f->eh_len = 0;
}

/* ---- reading tables ---- */

/* Reads a DWARF EH pointer of encoding @enc at @p (bounded by @end); pcrel against @pc. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t pc,
			 uint64_t *out)
{
	uint64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		if (end - *p < 4)
			return false;
		{
			uint32_t x;

			memcpy(&x, *p, 4);
			v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)x : x;
		}
		*p += 4;
		break;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		if (end - *p < 8)
			return false;
		memcpy(&v, *p, 8);
		*p += 8;
		break;
	default:
		return false;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += pc;
		break;
	default:
		return false;
	}
	*out = v;
	return true;
}

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
		return -ENOENT; /* libunwind's remote tables need this (the linkers' default) */
	p += 4;
	if (!read_encoded(&p, end, f->hdr[1], f->hdr_vaddr + 4, &eh_ptr))
		return -ENOENT;
	if (!read_encoded(&p, end, f->hdr[2], f->hdr_vaddr + (p - f->hdr), &count))
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
			f->id = m->file; /* before cache_add(), which places it by its id */
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

/* ---- libunwind accessors ---- */

/*
 * The .eh_frame_hdr entry covering @rel (an address relative to the header, as libunwind
 * truncates it): the last whose start is <= @rel, or -1. Entries are (start, FDE) pairs of
 * int32 sorted by start (datarel | sdata4, checked at load).
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

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct walk *w = arg;
	struct unwind_map m;
	const struct ufile *f;
	unw_dyn_info_t di;
	int64_t first;

	w->file = NULL;
	if (w->u->ops.find(w->u->ops_ctx, w->smp->pid, w->smp->gen, ip, &m) ||
	    m.kind == UNWIND_MAP_OTHER || !m.file)
		return -UNW_ENOINFO;
	f = ufile_get(w, &m, ip);
	if (!f || f->no_cfi)
		return -UNW_ENOINFO;
	w->file = f;
	w->bias = m.bias;
	/* the table is searched here, in our copy: libunwind would read each probe
	 * through access_mem(); it gets the entry found and the next one (which bounds
	 * the function, as when it searches the whole table) */
	first = table_search(f, (int32_t)(ip - (m.bias + f->hdr_vaddr)));
	if (first < 0)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m.start;
	di.end_ip = m.end;
	di.u.rti.segbase = m.bias + f->hdr_vaddr;
	di.u.rti.table_data = m.bias + f->hdr_vaddr + f->table_off + (uint64_t)first * 8;
	di.u.rti.table_len = ((uint64_t)first + 1 < f->fde_count ? 2 : 1) * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* tables from dwarf_search_unwind_table are freed by libunwind itself */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;
}

/* Copies the part of the word at @addr that [base, base + len) holds; false if none. */
static bool read_word(const uint8_t *buf, uint64_t base, uint64_t len, uint64_t addr,
		      unw_word_t *val)
{
	uint64_t lo, hi;

	/* no sum may wrap: addresses come from registers and stacks of another process */
	if (!buf || addr > UINT64_MAX - sizeof(*val) || addr + sizeof(*val) <= base ||
	    addr - base >= len)
		return false;
	lo = MAX(addr, base);
	hi = MIN(addr + sizeof(*val), base + len);
	*val = 0;
	memcpy((uint8_t *)val + (lo - addr), buf + (lo - base), hi - lo);
	return true;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	struct walk *w = arg;
	const struct unwind_sample *smp = w->smp;
	const struct ufile *f = w->file;

	if (write)
		return -UNW_EINVAL;
	if (addr >= smp->sp && smp->stack_len >= sizeof(*val) &&
	    addr - smp->sp <= smp->stack_len - sizeof(*val)) {
		memcpy(val, (const uint8_t *)smp->stack + (addr - smp->sp), sizeof(*val));
		return 0;
	}
	if (f && (read_word(f->hdr, w->bias + f->hdr_vaddr, f->hdr_len, addr, val) ||
		  read_word(f->eh, w->bias + f->eh_vaddr, f->eh_len, addr, val)))
		return 0;
	if (addr >= smp->sp && addr - smp->sp < STACK_PLAUSIBLE)
		w->beyond = true;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	const struct walk *w = arg;

	if (write)
		return -UNW_EINVAL;
	switch (reg) {
	case UNW_X86_64_RIP:
		*val = w->smp->ip;
		return 0;
	case UNW_X86_64_RSP:
		*val = w->smp->sp;
		return 0;
	case UNW_X86_64_RBP:
		*val = w->smp->bp;
		return 0;
	default:
		return -UNW_EBADREG; /* not sampled */
	}
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	return -UNW_EINVAL; /* names come from the symbolizer */
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

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
	struct ufile **unused;
	size_t i, n = 0;

	if (!u || !u->ops.in_use || u->st.files_held <= keep)
		return;
	unused = malloc(u->st.files_held * sizeof(*unused));
	if (!unused)
		return; /* keeping tables is always correct */
	for (i = 0; i < u->nr_slots && n < u->st.files_held; i++) {
		struct ufile *f = u->slots[i];

		if (f && f->loaded && f->hdr && !u->ops.in_use(u->ops_ctx, f->id))
			unused[n++] = f;
	}
	if (n > keep) {
		qsort(unused, n, sizeof(*unused), by_recency);
		for (i = keep; i < n; i++) {
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
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nr_slots; i++) {
		if (u->slots[i]) {
			ufile_clear(u->slots[i]);
			free(u->slots[i]);
		}
	}
	free(u->slots);
	for (i = 0; i < SPACES_MAX; i++)
		if (u->spaces[i].as)
			unw_destroy_addr_space(u->spaces[i].as);
	free(u);
}

/* The address space of image (@pid, @gen): found, made, or made in place of the least
 * recently used one. NULL when libunwind cannot make one. */
static unw_addr_space_t space_get(struct unwinder *u, pid_t pid, uint64_t gen)
{
	struct space *sp, *free_slot = NULL, *lru = NULL, *victim;
	size_t i;

	for (i = 0; i < SPACES_MAX; i++) {
		sp = &u->spaces[i];
		if (!sp->as) {
			free_slot = free_slot ? free_slot : sp;
		} else if (sp->pid == pid && sp->gen == gen) {
			sp->last_use = ++u->tick;
			return sp->as;
		} else if (!lru || sp->last_use < lru->last_use) {
			lru = sp;
		}
	}
	victim = free_slot ? free_slot : lru;
	if (victim->as) {
		unw_destroy_addr_space(victim->as);
		u->st.spaces_evicted++;
	}
	victim->as = unw_create_addr_space(&accessors, 0);
	if (!victim->as)
		return NULL;
	unw_set_caching_policy(victim->as, UNW_CACHE_GLOBAL);
	victim->pid = pid;
	victim->gen = gen;
	victim->last_use = ++u->tick;
	u->st.spaces_made++;
	return victim->as;
}

void unwinder__forget(struct unwinder *u, pid_t pid, uint64_t gen)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < SPACES_MAX; i++) {
		struct space *sp = &u->spaces[i];

		if (sp->as && sp->pid == pid && sp->gen == gen) {
			unw_destroy_addr_space(sp->as);
			sp->as = NULL;
		}
	}
}

int unwinder__unwind(struct unwinder *u, const struct unwind_sample *smp, uint64_t *ips, size_t cap,
		     enum unwind_end *end)
{
	unw_addr_space_t as;
	struct walk w = {.u = u, .smp = smp};
	unw_cursor_t c;
	unw_word_t ip;
	size_t n = 0;
	int r;

	if (!cap)
		return -EINVAL;
	u->st.samples++;
	*end = UNWIND_END_ERROR;
	if (!smp->ip)
		goto out;
	as = space_get(u, smp->pid, smp->gen);
	if (!as) {
		u->err = -ENOMEM;
		goto out;
	}
	if (unw_init_remote(&c, as, &w) < 0) {
		ips[n++] = smp->ip;
		goto out;
	}
	for (;;) {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip) {
			*end = n ? UNWIND_END_OUTERMOST : UNWIND_END_ERROR;
			break;
		}
		if (n == cap) {
			*end = UNWIND_END_DEPTH;
			break;
		}
		ips[n++] = ip;
		r = unw_step(&c);
		if (r > 0)
			continue;
		if (!r)
			*end = UNWIND_END_OUTERMOST;
		else if (w.beyond)
			*end = UNWIND_END_TRUNCATED;
		else if (r == -UNW_ENOINFO || r == -UNW_EBADFRAME || r == -UNW_ESTOPUNWIND)
			*end = UNWIND_END_NO_INFO;
		else
			*end = UNWIND_END_ERROR;
		break;
	}
out:
	if (u->err) {
		u->err = 0;
		return -ENOMEM;
	}
	u->st.frames += n;
	u->st.ends[*end]++;
	return (int)n;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->st;
}
