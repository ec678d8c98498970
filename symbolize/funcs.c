// SPDX-License-Identifier: MIT
/* symbolize: the functions an ELF file defines and its USDT notes, for probes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize-private.h"

#define FUNCS_MAX_SECTIONS 65536

/* The file offset of ELF virtual address @addr, through the PT_LOAD headers. */
int symbolize__vaddr_offset(Elf *elf, uint64_t addr, size_t len, bool exec_only, uint64_t *off)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
		    (exec_only && !(ph.p_flags & PF_X)))
			continue;
		if (addr >= ph.p_vaddr && addr - ph.p_vaddr + len <= ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int funcs_add(struct symbolize_func **v, size_t *nr, size_t *cap,
		     const struct symbolize_func *fn)
{
	if (array__grow((void **)v, cap, *nr + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*nr)++] = *fn;
	return 0;
}

/* The function symbols of one symbol table. */
static int table_funcs(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct strset *strs,
		       struct symbolize_func **v, size_t *nr, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;
	GElf_Sym sym;
	int err;

	if (!data || !sh->sh_entsize)
		return -EINVAL;
	count = MIN(sh->sh_size / sh->sh_entsize, (size_t)ELF_MAX_SYMS);
	for (i = 1; i < count; i++) {
		struct symbolize_func fn = {};
		const char *name;
		char *dm;

		if (!gelf_getsym(data, i, &sym))
			return -EINVAL;
		if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name ||
		    symbolize__vaddr_offset(elf, sym.st_value, 1, true, &fn.offset))
			continue;
		fn.addr = sym.st_value;
		fn.size = sym.st_size;
		fn.name = strset__intern(strs, name);
		dm = demangle__name(name, true);
		if (dm)
			fn.demangled = strset__intern(strs, dm);
		free(dm);
		if (!fn.name || (dm && !fn.demangled))
			return -ENOMEM;
		dm = fn.demangled ? demangle__name(name, false) : NULL;
		fn.short_name = dm ? strset__intern(strs, dm) : fn.demangled;
		free(dm);
		if (fn.demangled && !fn.short_name)
			return -ENOMEM;
		err = funcs_add(v, nr, cap, &fn);
		if (err)
			return err;
	}
	return 0;
}

/* Opens @path with libelf; *@fd and *@elf for the caller to close. */
static int open_elf(const char *path, int *fd, Elf **elf)
{
	*elf = NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF)
		return -ENOEXEC;
	return 0;
}

static int func_cmp(const void *a, const void *b)
{
	const struct symbolize_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* interned: one pointer per name */
	return x->name < y->name ? -1 : x->name > y->name;
}

int symbolize__functions(const char *path, struct strset *strs, struct symbolize_func **out,
			 size_t *nr)
{
	struct symbolize_func *v = NULL;
	size_t n = 0, cap = 0, nr_secs, i, uniq;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf *elf = NULL;
	int fd, err;

	*out = NULL;
	*nr = 0;
	err = open_elf(path, &fd, &elf);
	if (!err && (elf_getshdrnum(elf, &nr_secs) || nr_secs > FUNCS_MAX_SECTIONS))
		err = -EINVAL;
	for (i = 1; !err && i < nr_secs; i++) {
		scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh)) {
			err = -EINVAL;
			break;
		}
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			err = table_funcs(elf, scn, &sh, strs, &v, &n, &cap);
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (err) {
		free(v);
		return err;
	}
	/* by address; .symtab and .dynsym name the same functions: each (address, name) once */
	if (n)
		qsort(v, n, sizeof(*v), func_cmp);
	for (i = 0, uniq = 0; i < n; i++)
		if (!uniq || func_cmp(&v[uniq - 1], &v[i]))
			v[uniq++] = v[i];
	*out = v;
	*nr = uniq;
	return 0;
}

/* One stapsdt note: "provider\0name\0args\0" after three addresses. */
static int usdt_note(const char *desc, size_t len, struct strset *strs, struct symbolize_usdt *u)
{
	const char *p, *end = desc + len;
	size_t l;

	if (len < 3 * 8 + 2)
		return -EINVAL;
	memcpy(&u->pc, desc, 8);
	memcpy(&u->semaphore, desc + 16, 8);
	p = desc + 24;
	l = strnlen(p, end - p);
	if (p + l >= end)
		return -EINVAL;
	u->provider = strset__intern(strs, p);
	p += l + 1;
	l = strnlen(p, end - p);
	if (p + l >= end)
		return -EINVAL;
	u->name = strset__intern(strs, p);
	p += l + 1;
	u->args = p < end ? strset__intern_len(strs, p, strnlen(p, end - p)) : NULL;
	return u->provider && u->name ? 0 : -ENOMEM;
}

int symbolize__usdt_notes(const char *path, struct strset *strs, struct symbolize_usdt **out,
			  size_t *nr)
{
	struct symbolize_usdt *v = NULL;
	size_t n = 0, cap = 0, nr_secs, i, off, name_off, desc_off;
	Elf_Data *data;
	Elf_Scn *scn;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	Elf *elf = NULL;
	int fd, err;

	*out = NULL;
	*nr = 0;
	err = open_elf(path, &fd, &elf);
	if (!err && (elf_getshdrnum(elf, &nr_secs) || nr_secs > FUNCS_MAX_SECTIONS))
		err = -EINVAL;
	for (i = 1; !err && i < nr_secs; i++) {
		scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh)) {
			err = -EINVAL;
			break;
		}
		if (sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		for (off = 0; data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off));) {
			struct symbolize_usdt u = {};

			if (nh.n_type != 3 || nh.n_namesz != 8 ||
			    memcmp((char *)data->d_buf + name_off, "stapsdt", 8))
				continue;
			if (usdt_note((char *)data->d_buf + desc_off, nh.n_descsz, strs, &u))
				continue;
			if (array__grow((void **)&v, &cap, n + 1, sizeof(*v))) {
				err = -ENOMEM;
				break;
			}
			v[n++] = u;
		}
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*nr = n;
	return 0;
}
