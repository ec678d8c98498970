// SPDX-License-Identifier: MIT
/*
 * symbolize: PLT stubs named "func@plt", as objdump and perf name them. No symbol
 * table covers .plt, .plt.sec or .plt.got; each stub is one indirect jump through a
 * GOT slot, and the slot's relocation (R_X86_64_JUMP_SLOT or GLOB_DAT) names the
 * function. The jump is decoded, not counted: entry numbering differs between lazy
 * .plt, IBT's .plt.sec and .plt.got, the jump's target does not. An IRELATIVE slot
 * (an ifunc resolved at load) has no symbol: it is named after the symbol at its
 * resolver's address when there is one. x86-64 only.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize-private.h"

#ifndef R_X86_64_GLOB_DAT
#define R_X86_64_GLOB_DAT  6
#define R_X86_64_JUMP_SLOT 7
#endif
#ifndef R_X86_64_IRELATIVE
#define R_X86_64_IRELATIVE 37
#endif
#define PLT_MAX_RELOCS (1u << 20)

struct plt_slot {
	uint64_t got;	  /* the GOT slot's address (r_offset) */
	const char *name; /* the function, or NULL (IRELATIVE) */
	uint64_t addend;  /* IRELATIVE: the resolver's address */
};

static int slot_cmp(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The GOT slots of every SHT_RELA section linked to a symbol table, sorted. */
static int read_slots(Elf *elf, struct plt_slot **out, size_t *nr_out)
{
	struct plt_slot *v = NULL;
	size_t nr = 0, cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, lsh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *link;
		Elf_Data *data, *syms;
		size_t count, i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		link = elf_getscn(elf, sh.sh_link);
		if (!link || !gelf_getshdr(link, &lsh) ||
		    (lsh.sh_type != SHT_DYNSYM && lsh.sh_type != SHT_SYMTAB))
			continue;
		data = elf_getdata(scn, NULL);
		syms = elf_getdata(link, NULL);
		if (!data || !syms)
			continue;
		count = data->d_size / sh.sh_entsize;
		for (i = 0; i < count && nr < PLT_MAX_RELOCS; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			const char *name = NULL;
			uint32_t type;

			if (!gelf_getrela(data, (int)i, &rela))
				break;
			type = GELF_R_TYPE(rela.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
			    type != R_X86_64_IRELATIVE)
				continue;
			if (type != R_X86_64_IRELATIVE) {
				if (!gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym))
					continue;
				name = elf_strptr(elf, lsh.sh_link, sym.st_name);
				if (!name || !*name)
					continue;
			}
			if (array__grow((void **)&v, &cap, nr + 1, sizeof(*v))) {
				free(v);
				return -ENOMEM;
			}
			v[nr++] = (struct plt_slot){ .got = rela.r_offset, .name = name,
						     .addend = (uint64_t)rela.r_addend };
		}
	}
	if (nr)
		qsort(v, nr, sizeof(*v), slot_cmp);
	*out = v;
	*nr_out = nr;
	return 0;
}

/*
 * The GOT slot stub @p[0..len) at @vaddr jumps through: its `jmp *disp32(%rip)` (ff 25,
 * after endbr64 and a bnd prefix in IBT stubs) in the stub's first bytes. 0: none.
 */
static uint64_t stub_target(const uint8_t *p, size_t len, uint64_t vaddr)
{
	size_t i;
	int32_t disp;

	for (i = 0; i + 6 <= len && i <= 8; i++) {
		if (p[i] != 0xff || p[i + 1] != 0x25)
			continue;
		memcpy(&disp, p + i + 2, 4);
		return vaddr + i + 6 + (int64_t)disp;
	}
	return 0;
}

static int raw_cmp(const void *a, const void *b)
{
	const struct sym_raw *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The name of a symbol collected at @addr (an ifunc's resolver), or NULL: a copy of
 * @raw[0..nr) sorted once (*sorted, built on first use), searched by address.
 */
static const char *raw_name_at(const struct sym_raw *raw, size_t nr, struct sym_raw **sorted,
			       uint64_t addr)
{
	struct sym_raw key = { .start = addr }, *hit;

	if (!*sorted && nr) {
		*sorted = malloc(nr * sizeof(**sorted));
		if (!*sorted)
			return NULL;
		memcpy(*sorted, raw, nr * sizeof(**sorted));
		qsort(*sorted, nr, sizeof(**sorted), raw_cmp);
	}
	hit = *sorted ? bsearch(&key, *sorted, nr, sizeof(key), raw_cmp) : NULL;
	return hit ? hit->name : NULL;
}

int plt__collect(Elf *elf, const GElf_Ehdr *ehdr, struct strset *strs, struct sym_raw **raw,
		 size_t *nr, size_t *cap)
{
	struct plt_slot *slots = NULL, key, *hit;
	struct sym_raw *sorted = NULL;
	size_t nr_slots = 0, shstrndx, nr_syms = *nr;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	if (ehdr->e_machine != EM_X86_64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	err = read_slots(elf, &slots, &nr_slots);
	if (err || !nr_slots)
		goto cleanup;
	while ((scn = elf_nextscn(elf, scn)) && !err) {
		const char *sname;
		Elf_Data *data;
		uint64_t entsize, off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || (strcmp(sname, ".plt") && strcmp(sname, ".plt.sec") &&
			       strcmp(sname, ".plt.got")))
			continue;
		data = elf_getdata(scn, NULL);
		entsize = sh.sh_entsize ? sh.sh_entsize : 16;
		if (!data || !data->d_buf || entsize > 64 || data->d_size > sh.sh_size)
			continue;
		for (off = 0; off + entsize <= data->d_size && !err; off += entsize) {
			const char *name;
			char buf[512];
			int n;

			key.got = stub_target((const uint8_t *)data->d_buf + off, entsize,
					      sh.sh_addr + off);
			hit = key.got ? bsearch(&key, slots, nr_slots, sizeof(*slots), slot_cmp)
				      : NULL;
			if (!hit)
				continue; /* the lazy .plt's first stub, or no relocation */
			name = hit->name ? hit->name
					 : raw_name_at(*raw, nr_syms, &sorted, hit->addend);
			if (!name)
				continue;
			n = snprintf(buf, sizeof(buf), "%s@plt", name);
			if (n < 0 || (size_t)n >= sizeof(buf))
				continue;
			if (array__grow((void **)raw, cap, *nr + 1, sizeof(**raw))) {
				err = -ENOMEM;
				break;
			}
			name = strset__intern_len(strs, buf, (size_t)n);
			if (!name) {
				err = -ENOMEM;
				break;
			}
			(*raw)[*nr] = (struct sym_raw){
				.start = sh.sh_addr + off,
				.end = sh.sh_addr + off + entsize,
				.limit = sh.sh_addr + sh.sh_size,
				.name = name,
				.rank = SYM_RANK_SYNTHETIC,
				.idx = (uint32_t)*nr,
			};
			(*nr)++;
		}
	}
cleanup:
	free(sorted);
	free(slots);
	return err;
}
