// SPDX-License-Identifier: MIT
/* symbolize: debug sections for the DWARF index: compressed ones decompressed (zlib,
 * zstd) or read back from the debug cache, the unused ones dropped before libdw reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "dwarf-private.h"

/* The GNU build-id of @elf from its note sections (debug files keep them). */
static size_t scn_build_id(Elf *elf, uint8_t id[BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t len;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		len = elf__notes_build_id(data, id);
		if (len)
			return len;
	}
	return 0;
}

/* Decompresses @z into @out (z->ch.ch_size bytes); false when the stream is bad. */
static bool zsec_inflate(const struct dw_zsec *z, void *out)
{
	z_stream zs = {0};
	bool ok;

	if (z->ch.ch_type == ELFCOMPRESS_ZSTD) {
		size_t got = ZSTD_decompress(out, z->ch.ch_size, z->src, z->src_len);

		return !ZSTD_isError(got) && got == z->ch.ch_size;
	}
	/* ELFCOMPRESS_ZLIB; both sizes below DW_MAX_INFLATE_SIZE: each fits a uInt */
	if (inflateInit(&zs) != Z_OK)
		return false;
	zs.next_in = (Bytef *)(uintptr_t)z->src;
	zs.avail_in = (uInt)z->src_len;
	zs.next_out = out;
	zs.avail_out = (uInt)z->ch.ch_size;
	ok = inflate(&zs, Z_FINISH) == Z_STREAM_END && zs.total_out == z->ch.ch_size;
	inflateEnd(&zs);
	return ok;
}

/*
 * libdw 0.188 decompresses every zlib section (SHF_COMPRESSED, .zdebug) it knows when
 * the file is opened, and cannot read zstd ones. The SHF_COMPRESSED debug sections left
 * after dw_sections__drop_unused() are decompressed here instead, or read back from @cache, and
 * handed to libdw in place of the compressed data, with SHF_COMPRESSED cleared in our
 * in-memory copy of the header. The buffers go to idx->bufs (freed after elf_end()). A
 * section that cannot be decompressed is left as it is (libdw reports it, or skips it).
 * .zdebug sections (GNU, older toolchains) are left to libdw.
 */
int dw_sections__inflate(struct dwarf_index *idx, struct dw_cache *cache, const char *what,
			 struct dw_cached *dc)
{
	struct dw_cache_sec *cs = dc->cs;
	struct dw_zsec z[DW_CACHE_MAX_SECS];
	uint8_t *id = dc->id;
	size_t n = 0, id_len = 0, shstrndx, i;
	uint64_t total = 0;
	bool cached = false, all = true;
	Elf *elf = idx->elf;
	Elf_Scn *scn = NULL;
	void **tmp;
	int err = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)) && n < DW_CACHE_MAX_SECS) {
		struct dw_zsec *s = &z[n];
		const char *name;
		size_t hdr;

		if (!gelf_getshdr(scn, &s->sh) || !(s->sh.sh_flags & SHF_COMPRESSED) ||
		    s->sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, s->sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7) || strlen(name) >= DW_CACHE_NAME_MAX ||
		    !gelf_getchdr(scn, &s->ch) ||
		    (s->ch.ch_type != ELFCOMPRESS_ZSTD && s->ch.ch_type != ELFCOMPRESS_ZLIB))
			continue;
		s->data = elf_getdata(scn, NULL);
		hdr = gelf_fsize(elf, ELF_T_CHDR, 1, EV_CURRENT);
		if (!s->data || !s->data->d_buf || s->data->d_size < hdr)
			continue;
		s->src = (const char *)s->data->d_buf + hdr;
		s->src_len = s->data->d_size - hdr;
		/*
		 * The buffer is allocated before decompressing: a size beyond
		 * DW_MAX_INFLATE_SIZE or DW_MAX_INFLATE_RATIO times the compressed bytes (debug
		 * sections compress 3-20x), or a zstd frame declaring another, is a corrupt
		 * header asking for gigabytes.
		 */
		if (s->ch.ch_size >= DW_MAX_INFLATE_SIZE || s->src_len >= DW_MAX_INFLATE_SIZE ||
		    s->ch.ch_size / DW_MAX_INFLATE_RATIO > s->src_len) {
			pr_debug("symbolize: %s: %s: compressed section of implausible size %llu\n",
				 what, name, (unsigned long long)s->ch.ch_size);
			continue;
		}
		if (s->ch.ch_type == ELFCOMPRESS_ZSTD) {
			unsigned long long fsize = ZSTD_getFrameContentSize(s->src, s->src_len);

			if (fsize != ZSTD_CONTENTSIZE_UNKNOWN && fsize != s->ch.ch_size) {
				pr_debug("symbolize: %s: %s: zstd frame of another size\n", what,
					 name);
				continue;
			}
		}
		s->scn = scn;
		cs[n] = (struct dw_cache_sec){
			.name = name, .csize = s->sh.sh_size, .usize = s->ch.ch_size};
		total += s->ch.ch_size;
		n++;
	}
	if (!n)
		return 0;
	tmp = realloc(idx->bufs, (idx->nr_bufs + n) * sizeof(*idx->bufs));
	if (!tmp)
		return -ENOMEM;
	idx->bufs = tmp;
	if (cache && total >= DW_CACHE_MIN_BYTES)
		id_len = scn_build_id(elf, id);
	if (id_len) {
		err = dw_cache__load(cache, id, id_len, cs, n, what, &idx->map, &dc->units,
				     &dc->units_len);
		if (err == -ENOMEM)
			return err;
		cached = !err;
		err = 0;
	}
	for (i = 0; i < n; i++) {
		if (!cached) {
			cs[i].data = malloc(cs[i].usize ? cs[i].usize : 1);
			if (!cs[i].data) {
				err = -ENOMEM;
				break;
			}
			if (!zsec_inflate(&z[i], cs[i].data)) {
				pr_debug("symbolize: %s: %s: cannot decompress\n", what,
					 cs[i].name);
				free(cs[i].data);
				cs[i].data = NULL;
				all = false;
				continue;
			}
		}
		if (!cached)
			idx->bufs[idx->nr_bufs++] = cs[i].data;
		z[i].data->d_buf = cs[i].data;
		z[i].data->d_size = cs[i].usize;
		z[i].data->d_type = ELF_T_BYTE;
		z[i].data->d_align = z[i].ch.ch_addralign ? z[i].ch.ch_addralign : 1;
		z[i].sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		z[i].sh.sh_size = cs[i].usize;
		if (!gelf_update_shdr(z[i].scn, &z[i].sh))
			pr_debug("symbolize: %s: %s\n", what, elf_errmsg(-1));
	}
	/* what the next run may read back: all of it, or nothing (stored by units_list()) */
	dc->cache = cache;
	dc->id_len = id_len;
	dc->n = n;
	dc->store = !err && !cached && id_len && all;
	return err;
}

/* Debug sections the index never reads; the line table's only when lines are not wanted. */
static bool unused_section(const char *name, bool lines)
{
	static const char *const never[] = {
		".debug_loc",  ".debug_loclists",  ".debug_macro",  ".debug_macinfo",
		".zdebug_loc", ".zdebug_loclists", ".zdebug_macro", ".zdebug_macinfo",
	};
	static const char *const line_secs[] = {
		".debug_line",
		".debug_line_str",
		".zdebug_line",
		".zdebug_line_str",
	};

	for (size_t i = 0; i < ARRAY_SIZE(never); i++)
		if (!strcmp(name, never[i]))
			return true;
	for (size_t i = 0; !lines && i < ARRAY_SIZE(line_secs); i++)
		if (!strcmp(name, line_secs[i]))
			return true;
	return false;
}

/*
 * libdw 0.188 decompresses every compressed debug section when the file is opened,
 * needed or not: those the index never reads (location lists, macros, and the line
 * table without --lines; a third of libc's debug file) are emptied first in our
 * in-memory copy, so they are neither decompressed nor kept.
 */
void dw_sections__drop_unused(Elf *elf, bool lines)
{
	static char empty[1];
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !unused_section(name, lines))
			continue;
		if (!(sh.sh_flags & SHF_COMPRESSED) && strncmp(name, ".zdebug", 7))
			continue; /* read only if used: costs nothing */
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		data->d_buf = empty;
		data->d_size = 0;
		data->d_type = ELF_T_BYTE;
		sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		sh.sh_size = 0;
		gelf_update_shdr(scn, &sh);
	}
}
