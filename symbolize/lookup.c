// SPDX-License-Identifier: MIT
/* symbolize: addresses to frames: ELF symbols, DWARF inline chains, JIT names, kernel symbols. */
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

/* ---- names ---- */

/* The display name of the interned raw symbol @raw: demangled once, then cached. */
static const char *name_display(struct symbolizer *s, const char *raw)
{
	uint64_t h = hash__u64((uintptr_t)raw);
	const char *val;
	char *dem;

	if (s->no_demangle)
		return raw;
	val = (const char *)(uintptr_t)hashmap__find(&s->names, h, NULL, NULL);
	if (val)
		return val;
	dem = demangle__name(raw, s->keep_params);
	val = dem ? strset__intern(s->strs, dem) : raw;
	free(dem);
	if (!val || hashmap__insert(&s->names, h, (uintptr_t)val))
		return NULL;
	return val;
}

/* Fills the name of @fr from raw symbol @raw (interned) and its file:line. */
static int frame_name(struct symbolizer *s, struct frame *fr, const char *raw, const char *file,
		      uint32_t line)
{
	const char *name = name_display(s, raw), *base;
	char buf[1024];
	int n;

	if (!name)
		return -ENOMEM;
	fr->name = name;
	fr->line = file ? line : 0;
	fr->file = NULL;
	if (file && line) {
		fr->file = strset__intern(s->strs, file);
		if (!fr->file)
			return -ENOMEM;
	}
	if (!s->lines || !fr->file)
		return 0;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	n = snprintf(buf, sizeof(buf), "%s (%s:%u)", name, base, line);
	if (n < 0)
		return -EINVAL;
	fr->name = strset__intern_len(s->strs, buf, MIN((size_t)n, sizeof(buf) - 1));
	return fr->name ? 0 : -ENOMEM;
}

/* ---- DWARF ---- */

/* The DWARF index of @f, built on first use from the file itself or its debug file. */
struct dwarf_index *sym_file_dwarf(struct symbolizer *s, struct elf_file *f)
{
	struct dwarf_index *idx = NULL;
	const char *what = f->path ? f->path : "?";
	int fd = -1, err = -ENOENT;

	if (f->dw_tried)
		return f->dw;
	f->dw_tried = true;
	if (s->no_dwarf) {
		/* no DWARF read, but a stripped file is still named from its debug file's
		 * .symtab, as without --no-dwarf */
		if (!f->full && (fd = debuginfo__open(f, s->debug_root)) >= 0) {
			sym_file_upgrade(s, fd, what, f);
			close(fd);
		}
		return NULL;
	}
	if (!s->cache_tried) {
		/* out of memory: no cache (s->cache stays NULL) */
		s->cache_tried = true;
		dw_cache__open(s->cache_dir, &s->cache);
	}
	if (f->fd >= 0) {
		err = dwarf_index__build_lines(f->fd, what, s->lines, s->cache, &idx);
		close(f->fd);
		f->fd = -1;
		if (s->held_fds)
			s->held_fds--;
	}
	if (err && err != -ENOMEM) {
		fd = debuginfo__open(f, s->debug_root);
		/* a stripped binary: the debug file's .symtab names what DWARF does not
		 * cover (_start, assembly, functions built without -g) */
		if (fd >= 0 && !f->full && sym_file_upgrade(s, fd, what, f) == -ENOMEM)
			err = -ENOMEM;
		else if (fd >= 0)
			err = dwarf_index__build_lines(fd, what, s->lines, s->cache, &idx);
	}
	if (fd >= 0)
		close(fd);
	if (err) {
		if (err == -EINVAL)
			pr_warn("symbolize: %s: debug information unreadable, symbols only\n",
				what);
		return NULL;
	}
	f->dw = idx;
	s->st.dwarf_files++;
	return idx;
}

/*
 * Frames for ELF virtual address @vaddr of @f (@delta: ip - addr, added back to the
 * function offset). Returns how many, 0 when neither DWARF nor symbols know it, -ENOMEM.
 */
static int file_frames(struct symbolizer *s, struct elf_file *f, uint64_t vaddr, uint64_t delta,
		       const char *module, struct frame *out, size_t cap)
{
	struct dw_frame dwf[CHAIN_MAX];
	const struct sym *sym;
	struct dwarf_index *idx;
	int n = 0, i, err;

	err = sym_file_syms(s, f);
	if (err)
		return err;
	if (f->bad)
		return 0;
	/* first: a stripped file's debug file may bring its full symbol table too */
	idx = sym_file_dwarf(s, f);
	sym = symtab__find(&f->tab, vaddr);

	if (idx) {
		n = dwarf_index__lookup(idx, vaddr, dwf, s->no_inline ? 1 : MIN(cap, CHAIN_MAX));
		if (n < 0)
			return n;
		/* the lookup may have read a unit that did not parse */
		if (!f->dw_incomplete && dwarf_index__incomplete(idx)) {
			f->dw_incomplete = true;
			s->st.dwarf_incomplete++;
			pr_debug("symbolize: %s: parts of the DWARF could not be read: frames "
				 "there may lack inlined calls or fall back to symbols\n",
				 f->path ? f->path : "?");
		}
		for (i = 0; i < n; i++) {
			/* a symbol starting where the function does is its canonical name:
			 * at its entry, or at its lowest address (its part in .text.unlikely,
			 * "foo.cold", when that lies below), as perf names them */
			bool canon = !i && sym &&
				     (sym->start == dwf[0].entry || sym->start == dwf[0].low);
			const char *raw = canon ? sym->name : strset__intern(s->strs, dwf[i].name);

			if (!raw)
				return -ENOMEM;
			out[i] = (struct frame){
				.module = module,
				.kind = dwf[i].inlined ? FRAME_INLINE : FRAME_SYMBOL,
			};
			if (!i)
				out[i].offset =
					(sym ? vaddr - sym->start : vaddr - dwf[i].low) + delta;
			err = frame_name(s, &out[i], raw, dwf[i].file, dwf[i].line);
			if (err)
				return err;
		}
		s->st.inline_frames += n > 1 ? n - 1 : 0;
		if (n)
			return n;
	}
	if (!sym)
		return 0;
	out[0] = (struct frame){
		.module = module,
		.offset = vaddr - sym->start + delta,
		.kind = FRAME_SYMBOL,
	};
	/* symbols without DWARF functions may still have lines (dwf[0] from the lookup) */
	err = frame_name(s, &out[0], sym->name, idx ? dwf[0].file : NULL, idx ? dwf[0].line : 0);
	return err ? err : 1;
}

/* ---- lookups ---- */

static int frame_unknown(struct symbolizer *s, struct frame *out)
{
	*out = (struct frame){.name = s->s_unknown, .kind = FRAME_UNKNOWN};
	return 1;
}

/*
 * Anonymous executable memory (@m) or no mapping (@m NULL): the JIT resolver's name,
 * its fallback label, "[jit]" or "[unknown]".
 */
static int frame_jit(struct symbolizer *s, pid_t pid, uint64_t ip, uint64_t addr,
		     const struct proc_map *m, struct frame *out)
{
	const char *name = NULL;
	uint64_t off = 0;
	int r;

	if (s->jit_lookup) {
		r = s->jit_lookup(s->jit_ctx, pid, addr, &name, &off);
		if (!r && name) {
			name = strset__intern(s->strs, name);
			if (!name)
				return -ENOMEM;
			s->st.jit_frames++;
			*out = (struct frame){
				.name = name, .offset = off + (ip - addr), .kind = FRAME_JIT};
			return 1;
		}
		if (r && name) {
			name = strset__intern(s->strs, name);
			if (!name)
				return -ENOMEM;
		}
	}
	s->st.user_unresolved++;
	s->st.jit_unresolved++;
	if (!m && !name)
		return frame_unknown(s, out);
	*out = (struct frame){
		.name = name ? name : m->name,
		.kind = m ? FRAME_MODULE : FRAME_UNKNOWN,
	};
	return 1;
}

/*
 * The snapshot of (@pid, @gen) (taken now if there is none, *@pp set to it or NULL) and
 * its mapping of @addr. An address outside every mapping of a live process may have been
 * mapped since (dlopen, JIT): the maps are read once more, once per process. *@err is
 * -ENOMEM or 0 (a process that cannot be read is not an error: no mapping).
 */
static const struct proc_map *proc_mapping(struct symbolizer *s, pid_t pid, uint64_t gen,
					   uint64_t addr, struct proc **pp, int *err)
{
	struct proc *p = sym_proc_find(s, pid, gen);
	const struct proc_map *m;

	*pp = NULL;
	*err = 0;
	if (!p) {
		if (symbolizer__snapshot_gen(s, pid, gen) == -ENOMEM)
			goto nomem;
		p = sym_proc_find(s, pid, gen);
		if (!p)
			return NULL;
	}
	*pp = p;
	m = sym_maps_find(p->maps, p->nr_maps, addr);
	if (!m && p->nr_maps && !p->miss_refreshed && !s->offline) {
		p->miss_refreshed = true;
		if (symbolizer__snapshot_gen(s, pid, gen) == -ENOMEM)
			goto nomem;
		m = sym_maps_find(p->maps, p->nr_maps, addr);
	}
	return m;
nomem:
	*err = -ENOMEM;
	return NULL;
}

int symbolizer__user_gen(struct symbolizer *s, pid_t pid, uint64_t gen, uint64_t ip, bool is_return,
			 struct frame *out, size_t cap)
{
	uint64_t addr = is_return && ip ? ip - 1 : ip, vaddr;
	const struct proc_map *m;
	struct proc *p;
	int err, n;

	if (!cap)
		return -EINVAL;
	s->st.user_frames++;
	m = proc_mapping(s, pid, gen, addr, &p, &err);
	if (err)
		return err;
	if (p)
		s->last = p;
	if (!m || m->kind == PROC_MAP_ANON)
		return frame_jit(s, pid, ip, addr, m, out);
	if (m->file && elf_file__offset_to_vaddr(m->file, addr - m->start + m->pgoff, &vaddr)) {
		n = file_frames(s, m->file, vaddr, ip - addr, m->path, out, cap);
		if (n)
			return n;
	}
	s->st.user_unresolved++;
	*out = (struct frame){.name = m->name, .module = m->path, .kind = FRAME_MODULE};
	return 1;
}

int symbolizer__mapping_gen(struct symbolizer *s, pid_t pid, uint64_t gen, uint64_t addr,
			    struct symbolizer_mapping *out)
{
	const struct proc_map *m;
	struct proc *p;
	uint64_t vaddr;
	int err;

	*out = (struct symbolizer_mapping){.kind = SYMBOLIZER_MAP_OTHER};
	m = proc_mapping(s, pid, gen, addr, &p, &err);
	if (!m)
		return err ? err : -ENOENT;
	out->start = m->start;
	out->end = m->end;
	out->path = m->path;
	out->pgoff = m->pgoff;
	if (m->file && m->file->build_id_len) {
		out->build_id = m->file->build_id;
		out->build_id_len = m->file->build_id_len;
	}
	if (!m->file || !elf_file__offset_to_vaddr(m->file, addr - m->start + m->pgoff, &vaddr))
		return 0;
	out->kind = m->file == s->vdso ? SYMBOLIZER_MAP_VDSO : SYMBOLIZER_MAP_FILE;
	out->file = m->file;
	out->bias = addr - vaddr;
	return 0;
}

bool symbolizer__file_in_use(const struct symbolizer *s, const void *file)
{
	const struct elf_file *f = file;

	return f && (f == s->vdso || f->refs > 0);
}

int symbolizer__open_mapping_gen(struct symbolizer *s, pid_t pid, uint64_t gen, uint64_t addr)
{
	const struct proc_map *m;
	struct proc *p;
	struct map_entry e;
	struct stat st;
	char buf[64];
	int pathfd, fd, err;

	m = proc_mapping(s, pid, gen, addr, &p, &err);
	if (!m)
		return err ? err : -ENOENT;
	if (!m->file || m->file == s->vdso || !m->path || m->path[0] != '/')
		return -ENOENT;
	e = (struct map_entry){
		.start = m->start, .end = m->end, .inode = m->inode, .path = m->path};
	pathfd = sym_open_mapped(pid, &e);
	if (pathfd < 0)
		return pathfd;
	if (fstat(pathfd, &st) || !S_ISREG(st.st_mode)) {
		close(pathfd);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pathfd);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	err = -errno;
	close(pathfd);
	return fd >= 0 ? fd : err;
}

/* The file at @path for symbolizer__elf(), parsed once and kept. */
static int elf_get(struct symbolizer *s, const char *path, struct elf_file **out)
{
	struct file_key kdev;
	struct file_slot *slot;
	struct elf_file *f = NULL;
	struct stat st;
	char *abs;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		pr_warn("symbolize: cannot open %s: %s\n", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -EINVAL;
		pr_warn("symbolize: %s: not a regular file\n", path);
		goto cleanup;
	}
	sym_key_devino(&kdev, &st);
	slot = file_index__slot(&s->files, &kdev);
	if (slot && slot->file && !slot->file->bad && !slot->file->evicted) {
		f = slot->file;
		goto found;
	}
	f = elf_file__parse(fd, NULL, 0, s->strs, path);
	if (!f) {
		err = errno == ENOMEM ? -ENOMEM : -EINVAL;
		if (err == -EINVAL) {
			pr_warn("symbolize: %s: not a readable ELF file\n", path);
			s->st.files_unreadable++;
		}
		goto cleanup;
	}
	s->st.files_cached++;
	/* absolute, for the debuglink directories */
	abs = realpath(path, NULL);
	f->path = strset__intern(s->strs, abs ? abs : path);
	free(abs);
	if (!f->path) {
		elf_file__free(f);
		err = -ENOMEM;
		goto cleanup;
	}
	sym_file_link(s, f);
	err = file_index__add(&s->files, &kdev, f);
	if (err)
		goto cleanup;
	sym_file_hold(s, f, fd);
found:
	sym_file_ref(s, f); /* kept for the symbolizer's life */
	*out = f;
cleanup:
	close(fd);
	return err;
}

int symbolizer__elf(struct symbolizer *s, const char *path, uint64_t addr, bool is_return,
		    struct frame *out, size_t cap)
{
	uint64_t a = is_return && addr ? addr - 1 : addr;
	const char *ipath;
	int err, n;

	if (!cap)
		return -EINVAL;
	ipath = strset__intern(s->strs, path);
	if (!ipath)
		return -ENOMEM;
	if (ipath != s->elf_path) {
		err = elf_get(s, path, &s->elf_file);
		if (err)
			return err;
		s->elf_path = ipath;
	}
	s->st.user_frames++;
	n = file_frames(s, s->elf_file, a, addr - a, ipath, out, cap);
	if (n)
		return n;
	s->st.user_unresolved++;
	*out = (struct frame){.name = sym_bracket_name(s, path), .module = ipath, .kind = FRAME_MODULE};
	return out->name ? 1 : -ENOMEM;
}

int symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return,
		     struct frame *out, size_t cap)
{
	return symbolizer__user_gen(s, pid, 0, ip, is_return, out, cap);
}

int sym_kernel_load(struct symbolizer *s)
{
	char *text = NULL;
	bool nonzero;
	size_t len;
	int err;

	err = file__read_bounded(AT_FDCWD, s->kallsyms_path, KALLSYMS_MAX_BYTES, &text, &len);
	if (err) {
		if (err == -ENOMEM)
			goto cleanup;
		pr_warn("symbolize: cannot read %s: %s\n", s->kallsyms_path, strerror(-err));
		pr_hint("kernel frames will show as [unknown]\n");
		err = 0;
		goto cleanup;
	}
	err = kallsyms__parse(text, len, &s->ksyms, &nonzero);
	if (err)
		goto cleanup;
	if (s->ksyms.nr) {
		s->ktext = text; /* the table's names */
		s->ktext_len = len + 1;
		text = NULL;
	}
	if (!nonzero) {
		pr_warn("symbolize: %s lists no kernel addresses (kernel.kptr_restrict)\n",
			s->kallsyms_path);
		pr_hint("run as root with 'sysctl kernel.kptr_restrict=1' (or 0) to name "
			"kernel frames\n");
	} else {
		pr_debug("symbolize: %zu kernel symbols from %s\n", s->ksyms.nr, s->kallsyms_path);
	}
cleanup:
	free(text);
	s->kernel_tried = err != -ENOMEM;
	return err;
}

int symbolizer__kernel_addrs(struct symbolizer *s, const char *const *names, size_t n,
			     uint64_t *addrs)
{
	char *text = NULL;
	size_t len;
	int err;

	memset(addrs, 0, n * sizeof(*addrs));
	if (!n)
		return 0;
	err = file__read_bounded(AT_FDCWD, s->kallsyms_path, KALLSYMS_MAX_BYTES, &text, &len);
	if (!err)
		err = kallsyms__addrs(text, len, names, n, addrs);
	free(text);
	return err;
}

int symbolizer__load_kernel(struct symbolizer *s)
{
	if (s->no_kernel || s->kernel_tried)
		return 0;
	return sym_kernel_load(s);
}

/*
 * The interned display name and module of kernel symbol @sym (of s->ksyms): interned the
 * first time, then kept in the table in place of the names within the text. Returns 0
 * or -ENOMEM.
 */
int sym_ksym_names(struct symbolizer *s, const struct sym *sym, const char **name,
		      const char **module)
{
	uintptr_t p = (uintptr_t)sym->name, text = (uintptr_t)s->ktext;
	struct sym *w;
	int err;

	if (s->ktext && p >= text && p - text < s->ktext_len) {
		w = &s->ksyms.syms[sym - s->ksyms.syms];
		err = kallsyms__names(sym, s->strs, name, module);
		if (err)
			return err;
		w->name = *name;
		w->module = *module;
		return 0;
	}
	*name = sym->name;
	*module = sym->module;
	return 0;
}

int symbolizer__kernel(struct symbolizer *s, uint64_t ip, bool is_return, struct frame *out,
		       size_t cap)
{
	uint64_t addr = is_return && ip ? ip - 1 : ip;
	const char *name, *module;
	const struct sym *sym;
	int err;

	if (!cap)
		return -EINVAL;
	s->st.kernel_frames++;
	if (!s->no_kernel && !s->kernel_tried && !s->offline) {
		err = sym_kernel_load(s);
		if (err)
			return err;
	}
	sym = s->no_kernel ? NULL : symtab__find(&s->ksyms, addr);
	if (!sym) {
		s->st.kernel_unresolved++;
		return frame_unknown(s, out);
	}
	err = sym_ksym_names(s, sym, &name, &module);
	if (err)
		return err;
	*out = (struct frame){
		.name = name,
		.module = module,
		.offset = ip - sym->start,
		.kind = FRAME_SYMBOL,
	};
	return 1;
}
