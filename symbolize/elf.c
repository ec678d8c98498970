// SPDX-License-Identifier: MIT
/* symbolize: ELF files to PT_LOAD translation, build-id and compact symbol tables. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize-private.h"

#define ELF_MAX_SECTIONS (1u << 20)
/* MiniDebugInfo: the xz-compressed ELF of .gnu_debugdata, decompressed at most this big */
#define MINIDEBUG_MAX	 (64u << 20)
#define MINIDEBUG_MEMMAX (128u << 20) /* the decoder's own memory */

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* What a symbol needs to know about the section it lives in. */
struct sec_info {
	uint64_t addr, end;
	bool exec;
};

void elf_file__free(struct elf_file *f)
{
	if (!f)
		return;
	symtab__free(&f->tab);
	free(f->segs);
	dwarf_index__free(f->dw);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

void elf_file__evict(struct elf_file *f)
{
	symtab__free(&f->tab);
	free(f->segs);
	f->segs = NULL;
	f->nr_segs = 0;
	dwarf_index__free(f->dw);
	f->dw = NULL;
	f->dw_tried = false;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->syms_pending = false;
	f->evicted = true;
}

void elf_file__take(struct elf_file *dst, struct elf_file *src)
{
	elf_file__evict(dst);
	dst->tab = src->tab;
	dst->segs = src->segs;
	dst->nr_segs = src->nr_segs;
	dst->full = src->full;
	dst->own_dwarf = src->own_dwarf;
	dst->syms_pending = src->syms_pending;
	dst->evicted = false;
	free(src);
}

bool elf_file__offset_to_vaddr(const struct elf_file *f, uint64_t file_off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < f->nr_segs; i++) {
		const struct load_seg *s = &f->segs[i];

		if (file_off >= s->offset && file_off - s->offset < s->filesz) {
			*vaddr = file_off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

size_t elf__notes_build_id(Elf_Data *data, uint8_t id[BUILD_ID_MAX])
{
	GElf_Nhdr nhdr;
	size_t off = 0, next, name_off, desc_off;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz > 0 &&
		    nhdr.n_descsz <= BUILD_ID_MAX) {
			memcpy(id, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
			return nhdr.n_descsz;
		}
		off = next;
	}
	return 0;
}

static void read_build_id(Elf *elf, const GElf_Phdr *ph, struct elf_file *f)
{
	Elf_Data *data;

	data = elf_getdata_rawchunk(elf, ph->p_offset, ph->p_filesz,
				    ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
	if (data)
		f->build_id_len = elf__notes_build_id(data, f->build_id);
}

static int load_phdrs(Elf *elf, uint64_t size, struct elf_file *f, const char *what)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n)) {
		pr_debug("symbolize: %s: cannot read program headers: %s\n", what, elf_errmsg(-1));
		return -EINVAL;
	}
	f->segs = calloc(MIN(n, ELF_MAX_LOADS) + 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph)) {
			pr_debug("symbolize: %s: bad program header %zu: %s\n", what, i,
				 elf_errmsg(-1));
			return -EINVAL;
		}
		if (ph.p_type == PT_NOTE && !f->build_id_len)
			read_build_id(elf, &ph, f);
		if (ph.p_type != PT_LOAD || !ph.p_filesz || f->nr_segs >= ELF_MAX_LOADS)
			continue;
		if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
			pr_debug("symbolize: %s: truncated (segment %zu past the end)\n", what, i);
			return -EINVAL;
		}
		f->segs[f->nr_segs++] = (struct load_seg){
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.vaddr = ph.p_vaddr,
		};
	}
	if (!f->nr_segs) {
		pr_debug("symbolize: %s: no loadable segment\n", what);
		return -EINVAL;
	}
	return 0;
}

/*
 * The length of @name without its symbol version: .symtab names a versioned definition
 * "memcpy@@GLIBC_2.14" (the default) or "memcpy@GLIBC_2.2.5", a frame is "memcpy". A
 * name beginning with '@' or ending in it is kept whole.
 */
static size_t unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at > name && at[1] ? (size_t)(at - name) : strlen(name);
}

/*
 * Appends the function symbols of one symbol table to *@raw. Returns 0, -ENOMEM, or
 * -EINVAL when the table itself cannot be read (bad sizes, bad string table link).
 */
static int collect_syms(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const struct sec_info *secs,
			size_t nr_secs, struct strset *strs, struct sym_raw **raw, size_t *nr,
			size_t *cap, const char *what)
{
	size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), count, i;
	Elf_Data *data;
	GElf_Sym sym;

	if (!entsize || sh->sh_entsize != entsize || sh->sh_link == 0 || sh->sh_link >= nr_secs) {
		pr_debug("symbolize: %s: malformed symbol table header\n", what);
		return -EINVAL;
	}
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf) {
		pr_debug("symbolize: %s: cannot read symbol table: %s\n", what, elf_errmsg(-1));
		return -EINVAL;
	}
	count = data->d_size / entsize;
	for (i = 1; i < count; i++) {
		const struct sec_info *sec;
		const char *name;
		uint64_t end;
		uint32_t rank;
		int type;

		if (!gelf_getsym(data, i, &sym))
			return -EINVAL;
		type = GELF_ST_TYPE(sym.st_info);
		/* code labels too, local ones included, as perf takes them: ld.so's _start
		 * and _dl_start_user are LOCAL NOTYPE of size 0 (they reach the next symbol) */
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && (GELF_ST_BIND(sym.st_info) != STB_LOCAL ||
					     GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT)))
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_shndx >= nr_secs)
			continue;
		sec = &secs[sym.st_shndx];
		/* code only, and inside its section: bogus values never reach the table */
		if (!sec->exec || sym.st_value < sec->addr || sym.st_value >= sec->end)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (*nr >= ELF_MAX_SYMS)
			break;
		if (array__grow((void **)raw, cap, *nr + 1, sizeof(**raw)))
			return -ENOMEM;
		end = 0;
		if (sym.st_size)
			end = sym.st_size > sec->end - sym.st_value ? sec->end
								    : sym.st_value + sym.st_size;
		/* ranked by the name as perf compares it, shown without its version */
		rank = symtab__elf_rank(sym.st_size, type, GELF_ST_BIND(sym.st_info), name);
		name = strset__intern_len(strs, name, unversioned_len(name));
		if (!name)
			return -ENOMEM;
		(*raw)[(*nr)++] = (struct sym_raw){
			.start = sym.st_value,
			.end = end,
			.limit = sec->end,
			.name = name,
			.rank = rank,
			.idx = (uint32_t)*nr,
		};
	}
	return 0;
}

/* .gnu_debuglink: a NUL-terminated file name, padding to 4, a CRC-32 of the debug file. */
static int read_debuglink(Elf *elf, Elf_Scn *scn, struct elf_file *f, struct strset *strs)
{
	Elf_Data *data = elf_rawdata(scn, NULL);
	const char *p;
	size_t len, crc_off;
	uint32_t crc;

	(void)elf;
	if (!data || !data->d_buf || data->d_size < 6)
		return 0;
	p = data->d_buf;
	len = strnlen(p, data->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (!len || len >= 256 || crc_off + 4 > data->d_size || memchr(p, '/', len))
		return 0;
	memcpy(&crc, p + crc_off, 4);
	if (elf_getident(elf, NULL)[EI_DATA] != ELFDATA2LSB)
		crc = __builtin_bswap32(crc);
	f->debuglink = strset__intern_len(strs, p, len);
	f->debuglink_crc = crc;
	return f->debuglink ? 0 : -ENOMEM;
}

/* Decompresses the xz stream @in[0..len) into a malloc'ed *out. 0, -EINVAL, -E2BIG, -ENOMEM. */
static int xz_decode(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	lzma_stream zs = LZMA_STREAM_INIT;
	size_t cap = MIN(MAX(len * 4, (size_t)65536), (size_t)MINIDEBUG_MAX);
	uint8_t *buf = malloc(cap), *tmp;
	lzma_ret ret;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (lzma_stream_decoder(&zs, MINIDEBUG_MEMMAX, 0) != LZMA_OK) {
		free(buf);
		return -ENOMEM;
	}
	zs.next_in = in;
	zs.avail_in = len;
	zs.next_out = buf;
	zs.avail_out = cap;
	for (;;) {
		ret = lzma_code(&zs, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR) {
			err = ret == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
		if (zs.avail_out) {
			err = -EINVAL; /* truncated stream */
			break;
		}
		if (cap >= MINIDEBUG_MAX) {
			err = -E2BIG;
			break;
		}
		tmp = realloc(buf, MIN(cap * 2, (size_t)MINIDEBUG_MAX));
		if (!tmp) {
			err = -ENOMEM;
			break;
		}
		buf = tmp;
		zs.next_out = buf + cap;
		zs.avail_out = MIN(cap * 2, (size_t)MINIDEBUG_MAX) - cap;
		cap = MIN(cap * 2, (size_t)MINIDEBUG_MAX);
	}
	*out_len = zs.total_out;
	lzma_end(&zs);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

/*
 * MiniDebugInfo (Fedora's and others' binaries): .gnu_debugdata holds an xz-compressed
 * ELF whose .symtab has the functions .dynsym lacks. Its symbols join *@raw, placed by
 * the inner file's section headers. Returns 0 (none, or unreadable: skipped with a
 * debug message), -ENOMEM.
 */
static int load_minidebug(Elf *elf, Elf_Scn *scn, struct strset *strs, struct sym_raw **raw,
			  size_t *nr, size_t *cap, const char *what)
{
	Elf_Data *data = elf_rawdata(scn, NULL);
	struct sec_info *secs = NULL;
	uint8_t *image = NULL;
	size_t len = 0, nr_secs, i;
	Elf *inner = NULL;
	Elf_Scn *s;
	GElf_Shdr sh;
	int err;

	if (!data || !data->d_buf || !data->d_size)
		return 0;
	err = xz_decode(data->d_buf, data->d_size, &image, &len);
	if (err) {
		pr_debug("symbolize: %s: .gnu_debugdata unreadable: %s\n", what, strerror(-err));
		return err == -ENOMEM ? err : 0;
	}
	inner = elf_memory((char *)image, len);
	if (!inner || elf_kind(inner) != ELF_K_ELF || elf_getshdrnum(inner, &nr_secs) ||
	    nr_secs > ELF_MAX_SECTIONS) {
		pr_debug("symbolize: %s: .gnu_debugdata is no ELF file\n", what);
		goto cleanup;
	}
	secs = calloc(nr_secs + 1, sizeof(*secs));
	if (!secs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 1; i < nr_secs; i++) {
		s = elf_getscn(inner, i);
		if (!s || !gelf_getshdr(s, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_addr > UINT64_MAX - sh.sh_size)
			continue;
		secs[i] = (struct sec_info){ .addr = sh.sh_addr,
					     .end = sh.sh_addr + sh.sh_size,
					     .exec = sh.sh_flags & SHF_EXECINSTR };
	}
	for (i = 1; i < nr_secs && !err; i++) {
		s = elf_getscn(inner, i);
		if (s && gelf_getshdr(s, &sh) && sh.sh_type == SHT_SYMTAB)
			err = collect_syms(inner, s, &sh, secs, nr_secs, strs, raw, nr, cap, what);
	}
	/* a malformed table is skipped as the file's own would be; memory is not */
	if (err && err != -ENOMEM)
		err = 0;
cleanup:
	if (inner)
		elf_end(inner);
	free(secs);
	free(image);
	return err;
}

static int load_syms(Elf *elf, const GElf_Ehdr *ehdr, uint64_t size, struct elf_file *f,
		     struct strset *strs, const char *what)
{
	struct sym_raw *raw = NULL;
	struct sec_info *secs = NULL;
	size_t nr_secs, nr = 0, cap = 0, i, pass, shstrndx;
	Elf_Scn *scn, *minidebug = NULL;
	GElf_Shdr sh;
	int err = 0;

	if (elf_getshdrnum(elf, &nr_secs)) {
		pr_debug("symbolize: %s: cannot read section headers: %s\n", what, elf_errmsg(-1));
		err = -EINVAL;
		goto cleanup;
	}
	if (nr_secs && (ehdr->e_shoff > size ||
			(size - ehdr->e_shoff) / MAX(ehdr->e_shentsize, 1) < nr_secs)) {
		pr_debug("symbolize: %s: truncated (section headers past the end)\n", what);
		err = -EINVAL;
		goto cleanup;
	}
	if (nr_secs > ELF_MAX_SECTIONS) {
		pr_debug("symbolize: %s: %zu sections\n", what, nr_secs);
		err = -EINVAL;
		goto cleanup;
	}
	secs = calloc(nr_secs + 1, sizeof(*secs));
	if (!secs) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = 0;
	for (i = 1; i < nr_secs; i++) {
		const char *sname;

		scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh)) {
			pr_debug("symbolize: %s: bad section header %zu: %s\n", what, i,
				 elf_errmsg(-1));
			err = -EINVAL;
			goto cleanup;
		}
		sname = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (sname && sh.sh_type != SHT_NOBITS &&
		    (!strcmp(sname, ".debug_info") || !strcmp(sname, ".zdebug_info")))
			f->own_dwarf = true;
		if (sname && !strcmp(sname, ".gnu_debugdata") && sh.sh_type == SHT_PROGBITS)
			minidebug = scn;
		if (sname && !strcmp(sname, ".gnu_debuglink") && sh.sh_type != SHT_NOBITS) {
			err = read_debuglink(elf, scn, f, strs);
			if (err)
				goto cleanup;
		}
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_addr > UINT64_MAX - sh.sh_size)
			continue;
		secs[i] = (struct sec_info){
			.addr = sh.sh_addr,
			.end = sh.sh_addr + sh.sh_size,
			.exec = sh.sh_flags & SHF_EXECINSTR,
		};
	}
	/* .symtab if it names any function, else .dynsym */
	for (pass = 0; pass < 2 && !nr; pass++) {
		f->full = !pass;
		for (i = 1; i < nr_secs; i++) {
			scn = elf_getscn(elf, i);
			if (!scn || !gelf_getshdr(scn, &sh)) {
				err = -EINVAL;
				goto cleanup;
			}
			if (sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			err = collect_syms(elf, scn, &sh, secs, nr_secs, strs, &raw, &nr, &cap,
					   what);
			if (err)
				goto cleanup;
		}
	}
	/* .dynsym only: MiniDebugInfo has the rest */
	if (!f->full && minidebug) {
		size_t before = nr;

		err = load_minidebug(elf, minidebug, strs, &raw, &nr, &cap, what);
		if (err)
			goto cleanup;
		f->full = nr > before;
	}
	err = plt__collect(elf, ehdr, strs, &raw, &nr, &cap);
	if (!err)
		err = symtab__build(&f->tab, raw, nr);
cleanup:
	free(raw);
	free(secs);
	return err;
}

int elf_file__read_build_id(int fd, uint8_t id[BUILD_ID_MAX], size_t *len)
{
	struct elf_file f = {0};
	Elf *elf = NULL;
	GElf_Phdr ph;
	size_t n, i;
	int err = 0;

	*len = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		err = -EINVAL;
		goto cleanup;
	}
	for (i = 0; i < n && !f.build_id_len; i++) {
		if (!gelf_getphdr(elf, i, &ph)) {
			err = -EINVAL;
			goto cleanup;
		}
		if (ph.p_type == PT_NOTE)
			read_build_id(elf, &ph, &f);
	}
	memcpy(id, f.build_id, f.build_id_len);
	*len = f.build_id_len;
cleanup:
	elf_end(elf);
	return err;
}

/*
 * Opens @fd or, if @fd < 0, a copy of @image[0..size) with libelf. Sets *@elf, *@copy (to
 * free after elf_end), *@ehdr and *@raw_size (what bounds the headers' offsets).
 */
static int elf_open(int fd, const void *image, size_t size, const char *what, Elf **elf,
		    char **copy, GElf_Ehdr *ehdr, size_t *raw_size)
{
	struct stat st;

	*elf = NULL;
	*copy = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_warn("symbolize: libelf: %s\n", elf_errmsg(-1));
		return -EINVAL;
	}
	if (fd >= 0) {
		/*
		 * ELF_C_READ, not ELF_C_READ_MMAP: the file belongs to another user, who can
		 * truncate it while we parse; with mmap that is SIGBUS, with read an error.
		 */
		*elf = elf_begin(fd, ELF_C_READ, NULL);
	} else {
		/* libelf takes a writable image; never hand it memory we do not own */
		*copy = malloc(size ? size : 1);
		if (!*copy)
			return -ENOMEM;
		memcpy(*copy, image, size);
		*elf = elf_memory(*copy, size);
	}
	if (!*elf) {
		pr_debug("symbolize: %s: %s\n", what, elf_errmsg(-1));
		return -EINVAL;
	}
	if (elf_kind(*elf) != ELF_K_ELF || !gelf_getehdr(*elf, ehdr)) {
		pr_debug("symbolize: %s: not an ELF file\n", what);
		return -EINVAL;
	}
	/*
	 * The size bounds the headers' offsets. Not elf_rawfile(): with ELF_C_READ it
	 * reads the whole file into memory (node: 90 MB) where only the headers, symbol
	 * and string tables are needed, which libelf reads section by section.
	 */
	if (fd < 0) {
		*raw_size = size;
		return 0;
	}
	if (fstat(fd, &st) || st.st_size < 0) {
		int err = errno ? -errno : -EINVAL;

		pr_debug("symbolize: %s: %s\n", what, strerror(-err));
		return err;
	}
	*raw_size = (size_t)st.st_size;
	return 0;
}

/* elf_file__parse() with @syms, elf_file__parse_headers() without. */
static struct elf_file *parse(int fd, const void *image, size_t size, struct strset *strs,
			      const char *what, bool syms)
{
	struct elf_file *f = NULL;
	char *copy = NULL;
	Elf *elf = NULL;
	size_t raw_size = 0;
	GElf_Ehdr ehdr;
	int err;

	err = elf_open(fd, image, size, what, &elf, &copy, &ehdr, &raw_size);
	if (err)
		goto cleanup;
	f = calloc(1, sizeof(*f));
	if (!f) {
		err = -ENOMEM;
		goto cleanup;
	}
	f->fd = -1;
	err = load_phdrs(elf, raw_size, f, what);
	if (err)
		goto cleanup;
	if (syms)
		err = load_syms(elf, &ehdr, raw_size, f, strs, what);
	else
		f->syms_pending = true;
cleanup:
	elf_end(elf);
	free(copy);
	if (err) {
		elf_file__free(f);
		errno = -err;
		return NULL;
	}
	return f;
}

struct elf_file *elf_file__parse(int fd, const void *image, size_t size, struct strset *strs,
				 const char *what)
{
	return parse(fd, image, size, strs, what, true);
}

struct elf_file *elf_file__parse_headers(int fd, struct strset *strs, const char *what)
{
	return parse(fd, NULL, 0, strs, what, false);
}

int elf_file__load_syms(struct elf_file *f, int fd, struct strset *strs, const char *what)
{
	char *copy = NULL;
	Elf *elf = NULL;
	size_t raw_size = 0;
	GElf_Ehdr ehdr;
	int err;

	f->syms_pending = false;
	err = elf_open(fd, NULL, 0, what, &elf, &copy, &ehdr, &raw_size);
	if (!err)
		err = load_syms(elf, &ehdr, raw_size, f, strs, what);
	elf_end(elf);
	free(copy);
	if (err) {
		/* nothing half-read stays: no symbols, no debug link, no DWARF of its own */
		symtab__free(&f->tab);
		f->full = false;
		f->own_dwarf = false;
		f->debuglink = NULL;
	}
	return err;
}
