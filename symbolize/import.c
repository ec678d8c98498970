// SPDX-License-Identifier: MIT
/* symbolize: captures: process images exported and imported, kernel symbols as a list. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer-private.h"

/* ---- captures: exported and imported process images, kernel symbols as a list ---- */

int symbolizer__mappings_gen(struct symbolizer *s, pid_t pid, uint64_t gen,
			     struct symbolizer_mapping **out, size_t *nr)
{
	struct symbolizer_mapping *v;
	struct proc *p;
	size_t i;
	int err;

	*out = NULL;
	*nr = 0;
	p = sym_proc_find(s, pid, gen);
	if (!p) {
		err = symbolizer__snapshot_gen(s, pid, gen);
		if (err == -ENOMEM)
			return err;
		p = sym_proc_find(s, pid, gen);
	}
	if (!p || !p->nr_maps)
		return 0;
	v = calloc(p->nr_maps, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->nr_maps; i++) {
		const struct proc_map *m = &p->maps[i];

		v[i] = (struct symbolizer_mapping){
			.start = m->start,
			.end = m->end,
			.pgoff = m->pgoff,
			/* a file, "[vdso]", a pseudo mapping's frame name, NULL for "[jit]" */
			.path = m->path			   ? m->path
				: m->kind == PROC_MAP_ANON ? NULL
							   : m->name,
		};
		if (m->kind == PROC_MAP_VDSO)
			v[i].kind = SYMBOLIZER_MAP_VDSO;
		else if (m->file)
			v[i].kind = SYMBOLIZER_MAP_FILE;
		if (m->file && m->file->build_id_len) {
			v[i].build_id = m->file->build_id;
			v[i].build_id_len = m->file->build_id_len;
		}
	}
	*out = v;
	*nr = p->nr_maps;
	return 0;
}

static void hex_id(const uint8_t *id, size_t len, char *buf, size_t size)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < len && 2 * i + 2 < size; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
}

/* Opens @path for reading below @dirfd with @resolve flags; regular files only. */
static int open_resolve(int dirfd, const char *path, uint64_t resolve)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = resolve | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/*
 * The file an imported mapping names: by @path (under symfs, then as is), then by
 * build-id in the debug root, each checked against @id. *@out NULL when none is usable
 * (counted once per path and build-id). Returns 0 or -ENOMEM.
 */
static int import_file(struct symbolizer *s, const char *path, const uint8_t *id, size_t id_len,
		       struct elf_file **out)
{
	struct file_key kbid, kfail;
	struct file_slot *slot;
	struct elf_file *f = NULL;
	char cand[4][PATH_MAX], hex[2 * BUILD_ID_MAX + 1];
	const char *where = NULL;
	int nr = 0, i, fd = -1, symfs_fd = -1, err = 0;
	bool mismatch = false;

	*out = NULL;
	if (id_len > BUILD_ID_MAX)
		id_len = 0; /* not an identity we can check (see BUILD_ID_MAX) */
	memset(&kfail, 0, sizeof(kfail));
	kfail.kind = KEY_FAILED;
	kfail.v[3] = (uintptr_t)path;
	kfail.len = id_len;
	if (id_len)
		memcpy(kfail.id, id, id_len);
	if (file_index__slot(&s->files, &kfail))
		return 0;
	if (id_len) {
		sym_key_build_id(&kbid, id, id_len);
		slot = file_index__slot(&s->files, &kbid);
		if (slot && slot->file && !slot->file->bad && !slot->file->evicted) {
			*out = slot->file;
			return 0;
		}
	}
	hex_id(id, id_len, hex, sizeof(hex));
	if (s->symfs)
		snprintf(cand[nr++], PATH_MAX, "%s", path);
	snprintf(cand[nr++], PATH_MAX, "%s", path);
	if (id_len >= 2)
		snprintf(cand[nr++], PATH_MAX, "%s/.build-id/%.2s/%s.debug", s->debug_root, hex,
			 hex + 2);
	if (s->symfs) {
		symfs_fd = open(s->symfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (symfs_fd < 0)
			pr_warn("symbolize: cannot open --symfs %s: %s\n", s->symfs,
				strerror(errno));
	}
	for (i = 0; i < nr && !f; i++) {
		uint8_t got[BUILD_ID_MAX];
		size_t got_len = 0;

		if (s->symfs && i == 0)
			fd = symfs_fd < 0 ? -ENOENT
					  : open_resolve(symfs_fd, cand[i], RESOLVE_IN_ROOT);
		else
			fd = open_resolve(AT_FDCWD, cand[i], RESOLVE_NO_SYMLINKS);
		if (fd < 0)
			continue;
		if (elf_file__read_build_id(fd, got, &got_len))
			got_len = 0;
		if (id_len && (got_len != id_len || memcmp(got, id, id_len))) {
			char ghex[2 * BUILD_ID_MAX + 1];

			hex_id(got, got_len, ghex, sizeof(ghex));
			pr_warn("symbolize: %s%s: build-id %s, the capture's is %s: not used\n",
				s->symfs && i == 0 ? s->symfs : "", cand[i],
				got_len ? ghex : "(none)", hex);
			mismatch = true;
			close(fd);
			fd = -1;
			continue;
		}
		f = elf_file__parse(fd, NULL, 0, s->strs, path);
		if (!f && errno == ENOMEM) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (!f) {
			pr_warn("symbolize: %s: not a readable ELF file\n", cand[i]);
			close(fd);
			fd = -1;
			continue;
		}
		where = cand[i];
	}
	if (!f) {
		if (mismatch) {
			s->st.files_mismatched++;
		} else {
			s->st.files_not_found++;
			pr_warn("symbolize: %s%s%s: not found%s\n", path,
				id_len ? " (build-id " : "", id_len ? hex : "", id_len ? ")" : "");
		}
		err = file_index__add(&s->files, &kfail, NULL);
		goto cleanup;
	}
	pr_debug("symbolize: %s from %s%s\n", path, s->symfs && where == cand[0] ? s->symfs : "",
		 where);
	s->st.files_cached++;
	f->path = strset__intern(s->strs, where);
	if (!f->path) {
		elf_file__free(f);
		err = -ENOMEM;
		goto cleanup;
	}
	sym_file_link(s, f);
	if (f->build_id_len) {
		sym_key_build_id(&kbid, f->build_id, f->build_id_len);
		err = file_index__add(&s->files, &kbid, f);
	}
	sym_file_hold(s, f, fd);
	*out = f;
cleanup:
	if (fd >= 0)
		close(fd);
	if (symfs_fd >= 0)
		close(symfs_fd);
	return err;
}

int symbolizer__import_gen(struct symbolizer *s, pid_t pid, uint64_t gen,
			   const struct symbolizer_mapping *maps, size_t n)
{
	struct proc_map *v;
	struct proc *p;
	size_t i, k = 0;
	int err = 0;

	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct symbolizer_mapping *m = &maps[i];
		struct proc_map *pm = &v[k];

		if (m->end <= m->start) {
			err = -EINVAL;
			goto cleanup;
		}
		*pm = (struct proc_map){.start = m->start, .end = m->end, .pgoff = m->pgoff};
		if (!m->path) {
			pm->name = s->s_anon;
			pm->kind = PROC_MAP_ANON;
		} else if (m->kind == SYMBOLIZER_MAP_VDSO || !strcmp(m->path, "[vdso]")) {
			pm->name = pm->path = s->s_vdso;
			pm->kind = PROC_MAP_VDSO;
			if (!s->vdso_tried) {
				err = sym_vdso_load(s);
				if (err)
					goto cleanup;
			}
			/* another kernel's vDSO is another image */
			if (s->vdso && m->build_id_len &&
			    m->build_id_len == s->vdso->build_id_len &&
			    !memcmp(m->build_id, s->vdso->build_id, m->build_id_len))
				pm->file = s->vdso;
		} else if (m->path[0] != '/') {
			pm->name = strset__intern(s->strs, m->path);
		} else {
			pm->path = strset__intern(s->strs, m->path);
			pm->name = pm->path ? sym_bracket_name(s, m->path) : NULL;
			pm->kind = PROC_MAP_FILE;
			if (pm->path && pm->name)
				err = import_file(s, pm->path, m->build_id, m->build_id_len,
						  &pm->file);
			if (err)
				goto cleanup;
		}
		if (!pm->name) {
			err = -ENOMEM;
			goto cleanup;
		}
		k++;
	}
	qsort(v, k, sizeof(*v), sym_proc_map_cmp);
	p = sym_proc_find(s, pid, gen);
	if (!p) {
		err = sym_proc_add(s, pid, gen, &p);
		if (err)
			goto cleanup;
	}
	for (i = 0; i < k; i++)
		sym_file_ref(s, v[i].file);
	sym_proc_maps_unref(s, p->maps, p->nr_maps);
	free(p->maps);
	p->maps = v;
	p->nr_maps = k;
	p->miss_refreshed = true; /* nothing to read again */
	v = NULL;
cleanup:
	free(v);
	return err;
}

int symbolizer__kernel_sym(struct symbolizer *s, uint64_t ip, bool is_return,
			   struct symbolizer_ksym *out)
{
	uint64_t addr = is_return && ip ? ip - 1 : ip;
	const char *name, *module;
	const struct sym *sym;
	int err;

	if (!s->no_kernel && !s->kernel_tried && !s->offline) {
		err = sym_kernel_load(s);
		if (err)
			return err;
	}
	sym = s->no_kernel ? NULL : symtab__find(&s->ksyms, addr);
	if (!sym)
		return -ENOENT;
	err = sym_ksym_names(s, sym, &name, &module);
	if (err)
		return err;
	*out = (struct symbolizer_ksym){
		.start = sym->start, .end = sym->end, .name = name, .module = module};
	return 0;
}

int symbolizer__set_kallsyms(struct symbolizer *s, const struct symbolizer_ksym *syms, size_t n)
{
	struct sym_raw *raw = calloc(n + 1, sizeof(*raw));
	struct symtab tab;
	size_t i, k = 0;
	int err = 0;

	if (!raw)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (syms[i].end <= syms[i].start || !syms[i].name)
			continue;
		raw[k] = (struct sym_raw){
			.start = syms[i].start,
			.end = syms[i].end,
			.limit = syms[i].end,
			.name = strset__intern(s->strs, syms[i].name),
			.module = syms[i].module && syms[i].module[0]
					  ? strset__intern(s->strs, syms[i].module)
					  : NULL,
			.idx = k,
		};
		if (!raw[k].name || (syms[i].module && syms[i].module[0] && !raw[k].module)) {
			err = -ENOMEM;
			goto cleanup;
		}
		k++;
	}
	err = symtab__build(&tab, raw, k);
	if (err)
		goto cleanup;
	symtab__free(&s->ksyms);
	free(s->ktext);
	s->ksyms = tab;
	s->ktext = NULL;
	s->ktext_len = 0;
	s->kernel_tried = true;
cleanup:
	free(raw);
	return err;
}
