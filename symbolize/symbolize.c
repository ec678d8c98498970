// SPDX-License-Identifier: MIT
/* symbolize: the symbolizer: creation, its process and file tables, files opened and parsed. */
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

/* ---- file index ---- */

static uint64_t file_key__hash(const struct file_key *k)
{
	return hash__bytes(k, sizeof(*k), 0x5eed);
}

struct file_key_ctx {
	const struct file_index *idx;
	const struct file_key *k;
};

static bool file_key__eq(uint64_t val, const void *ctx)
{
	const struct file_key_ctx *c = ctx;

	return !memcmp(&c->idx->v[val - 1].key, c->k, sizeof(*c->k));
}

/* The entry of @k, or NULL; valid until the next file_index__add(). */
struct file_slot *file_index__slot(const struct file_index *idx, const struct file_key *k)
{
	uint64_t val = hashmap__find(&idx->index, file_key__hash(k), file_key__eq,
				     &(struct file_key_ctx){idx, k});

	return val ? &idx->v[val - 1] : NULL;
}

int file_index__add(struct file_index *idx, const struct file_key *k, struct elf_file *f)
{
	struct file_slot *slot = file_index__slot(idx, k);

	if (!slot) {
		if (array__grow((void **)&idx->v, &idx->cap, idx->nr + 1, sizeof(*idx->v)))
			return -ENOMEM;
		if (hashmap__insert(&idx->index, file_key__hash(k), idx->nr + 1))
			return -ENOMEM;
		slot = &idx->v[idx->nr++];
	}
	*slot = (struct file_slot){.key = *k, .file = f};
	return 0;
}

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000u + st->st_mtim.tv_nsec;
}

void sym_key_devino(struct file_key *k, const struct stat *st)
{
	memset(k, 0, sizeof(*k));
	k->kind = KEY_DEVINO;
	k->v[0] = st->st_dev;
	k->v[1] = st->st_ino;
	k->v[2] = st->st_size;
	k->v[3] = mtime_ns(st);
}

void sym_key_build_id(struct file_key *k, const uint8_t *id, size_t len)
{
	memset(k, 0, sizeof(*k));
	k->kind = KEY_BUILDID;
	k->len = len;
	memcpy(k->id, id, len);
}

/* ---- creation ---- */

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s = NULL;
	const char *kpath = "/proc/kallsyms", *droot = "/usr/lib/debug";
	int err = 0;

	if (opts && opts->sz < sizeof(size_t)) {
		err = -EINVAL;
		goto cleanup;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto cleanup;
	}
	s->strs = strset__new();
	if (!s->strs) {
		err = -ENOMEM;
		goto cleanup;
	}
#define OPT(field)                                                                                 \
	(opts && opts->sz >= offsetof(struct symbolizer_opts, field) + sizeof(opts->field)         \
		 ? opts->field                                                                     \
		 : 0)
	if (OPT(kallsyms_path))
		kpath = opts->kallsyms_path;
	if (OPT(debug_root))
		droot = opts->debug_root;
	s->no_kernel = OPT(no_kernel);
	s->no_demangle = OPT(no_demangle);
	s->keep_params = OPT(keep_params);
	s->lines = OPT(lines);
	s->no_inline = OPT(no_inline);
	s->no_dwarf = OPT(no_dwarf);
	s->jit_lookup = OPT(jit_lookup);
	s->jit_ctx = OPT(jit_ctx);
	s->offline = OPT(offline);
	if (OPT(symfs))
		s->symfs = strset__intern(s->strs, opts->symfs);
	if (OPT(cache_dir) && *opts->cache_dir) {
		s->cache_dir = strset__intern(s->strs, opts->cache_dir);
		if (!s->cache_dir) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
#undef OPT
	s->kallsyms_path = strset__intern(s->strs, kpath);
	s->debug_root = strset__intern(s->strs, droot);
	s->s_unknown = strset__intern(s->strs, "[unknown]");
	/* anonymous memory is only kept when executable: JIT code, most likely */
	s->s_anon = strset__intern(s->strs, "[jit]");
	s->s_vdso = strset__intern(s->strs, "[vdso]");
	if (!s->kallsyms_path || !s->debug_root || !s->s_unknown || !s->s_anon || !s->s_vdso) {
		err = -ENOMEM;
		goto cleanup;
	}
cleanup:
	if (err) {
		symbolizer__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/*
 * Files are reference-counted by the mappings that use them. A file no mapping uses
 * stays parsed while it is among the UNUSED_KEEP most recently released (short-lived
 * processes of the same program reuse it); older ones drop their tables and keep only
 * their identity (a few hundred bytes), parsed again if a mapping needs them later.
 */
#define UNUSED_KEEP 16

void sym_file_ref(struct symbolizer *s, struct elf_file *f)
{
	if (!f)
		return;
	if (f->on_unused) {
		if (f->unused_prev)
			f->unused_prev->unused_next = f->unused_next;
		else
			s->unused_head = f->unused_next;
		if (f->unused_next)
			f->unused_next->unused_prev = f->unused_prev;
		else
			s->unused_tail = f->unused_prev;
		f->unused_prev = f->unused_next = NULL;
		f->on_unused = false;
		s->nr_unused--;
	}
	f->refs++;
}

static void file_unref(struct symbolizer *s, struct elf_file *f)
{
	struct elf_file *old;

	if (!f || !f->refs || --f->refs)
		return;
	f->unused_prev = NULL;
	f->unused_next = s->unused_head;
	if (s->unused_head)
		s->unused_head->unused_prev = f;
	else
		s->unused_tail = f;
	s->unused_head = f;
	f->on_unused = true;
	if (++s->nr_unused <= UNUSED_KEEP)
		return;
	old = s->unused_tail;
	s->unused_tail = old->unused_prev;
	s->unused_tail->unused_next = NULL;
	old->unused_prev = NULL;
	old->on_unused = false;
	s->nr_unused--;
	if (old->fd >= 0 && s->held_fds)
		s->held_fds--;
	elf_file__evict(old);
	s->st.files_evicted++;
}

void sym_proc_maps_unref(struct symbolizer *s, struct proc_map *maps, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		file_unref(s, maps[i].file);
}

static void proc__free(struct symbolizer *s, struct proc *p)
{
	if (!p)
		return;
	if (s)
		sym_proc_maps_unref(s, p->maps, p->nr_maps);
	free(p->maps);
	free(p);
}

void symbolizer__free(struct symbolizer *s)
{
	struct elf_file *f, *next;
	struct hashmap_iter it;
	uint64_t val;

	if (!s)
		return;
	for (hashmap__iter_init(&s->procs, &it); hashmap__iter_next(&s->procs, &it, &val);)
		proc__free(NULL, (struct proc *)(uintptr_t)val);
	hashmap__free(&s->procs);
	for (f = s->all_files; f; f = next) {
		next = f->next;
		elf_file__free(f);
	}
	free(s->files.v);
	hashmap__free(&s->files.index);
	hashmap__free(&s->names);
	symtab__free(&s->ksyms);
	free(s->ktext);
	dw_cache__free(s->cache);
	strset__free(s->strs);
	free(s);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->st;
}

/* ---- processes ---- */

static uint64_t proc_hash(pid_t pid, uint64_t gen)
{
	return hash__u64((uint64_t)(uint32_t)pid << 32 ^ gen);
}

struct proc_key {
	pid_t pid;
	uint64_t gen;
};

static bool proc_eq(uint64_t val, const void *ctx)
{
	const struct proc *p = (const struct proc *)(uintptr_t)val;
	const struct proc_key *k = ctx;

	return p->pid == k->pid && p->gen == k->gen;
}

struct proc *sym_proc_find(struct symbolizer *s, pid_t pid, uint64_t gen)
{
	if (s->last && s->last->pid == pid && s->last->gen == gen)
		return s->last;
	return (struct proc *)(uintptr_t)hashmap__find(&s->procs, proc_hash(pid, gen), proc_eq,
						       &(struct proc_key){pid, gen});
}

int sym_proc_add(struct symbolizer *s, pid_t pid, uint64_t gen, struct proc **out)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p || hashmap__insert(&s->procs, proc_hash(pid, gen), (uintptr_t)p)) {
		free(p);
		return -ENOMEM;
	}
	p->pid = pid;
	p->gen = gen;
	*out = p;
	return 0;
}

void symbolizer__forget_gen(struct symbolizer *s, pid_t pid, uint64_t gen)
{
	struct proc *p;

	if (!s)
		return;
	p = (struct proc *)(uintptr_t)hashmap__remove(&s->procs, proc_hash(pid, gen), proc_eq,
						      &(struct proc_key){pid, gen});
	if (!p)
		return;
	if (s->last == p)
		s->last = NULL;
	proc__free(s, p);
}

void symbolizer__forget(struct symbolizer *s, pid_t pid)
{
	symbolizer__forget_gen(s, pid, 0);
}

/* ---- files ---- */

int sym_vdso_load(struct symbolizer *s)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct map_entry *ents = NULL;
	size_t nr = 0, bad, i, len;
	char *text = NULL;
	int err = 0;

	s->vdso_tried = true;
	if (!base)
		return 0;
	err = file__read_bounded(AT_FDCWD, "/proc/self/maps", MAPS_MAX_BYTES, &text, &len);
	if (err) {
		pr_debug("symbolize: cannot read /proc/self/maps: %s\n", strerror(-err));
		err = err == -ENOMEM ? err : 0;
		goto cleanup;
	}
	err = maps__parse(text, len, s->strs, &ents, &nr, &bad);
	if (err)
		goto cleanup;
	for (i = 0; i < nr; i++) {
		if (ents[i].start != base || strcmp(ents[i].path, "[vdso]"))
			continue;
		s->vdso = elf_file__parse(-1, (const void *)base, ents[i].end - ents[i].start,
					  s->strs, "[vdso]");
		if (!s->vdso) {
			err = errno == ENOMEM ? -ENOMEM : 0;
			pr_debug("symbolize: cannot parse this process's vdso\n");
			goto cleanup;
		}
		s->vdso_size = ents[i].end - ents[i].start;
		s->vdso->refs = 1; /* ours: never released */
		s->vdso->next = s->all_files;
		s->all_files = s->vdso;
		break;
	}
cleanup:
	free(text);
	free(ents);
	return err;
}

/* "/proc/PID/map_files/START-END" of mapping @e: the kernel's link to the mapped file */
static void map_files_path(char *buf, size_t size, pid_t pid, const struct map_entry *e)
{
	snprintf(buf, size, "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)e->start,
		 (unsigned long long)e->end);
}

/*
 * stat() of the file mapped at @e in @pid, through map_files (the file itself, not a
 * path): 0 or -errno (no such mapping any more, or map_files not readable:
 * sym_open_mapped() has the fallbacks).
 */
static int stat_mapped(pid_t pid, const struct map_entry *e, struct stat *st)
{
	char buf[64];

	map_files_path(buf, sizeof(buf), pid, e);
	return stat(buf, st) ? -errno : 0;
}

/*
 * stat() of the file mapped at @e through the path the maps line shows, if that path
 * names the very file mapped: the inode and device of the maps line (while mapped, the
 * file's inode number cannot be reused; a process gone since its maps were read leaves
 * the window sym_open_mapped()'s path fallback has too). A path lookup costs a third of a
 * map_files one. A symlink on the way is harmless: this only stats, and only the
 * mapped inode is taken. 0, -ESTALE when the path names another file (replaced, another
 * mount namespace, a device number stat() reports otherwise: btrfs, overlayfs), or -errno.
 */
static int stat_by_path(const struct map_entry *e, struct stat *st)
{
	if (e->deleted || e->path[0] != '/')
		return -ENOENT;
	if (fstatat(AT_FDCWD, e->path, st, AT_NO_AUTOMOUNT))
		return -errno;
	if (st->st_ino != e->inode || major(st->st_dev) != e->dev_major ||
	    minor(st->st_dev) != e->dev_minor)
		return -ESTALE;
	return 0;
}

/*
 * An O_PATH descriptor of the file behind mapping @e of @pid: the map_files magic link
 * (the very file mapped, even deleted or in another mount namespace; its inode checked,
 * as another file may be mapped there by now), else the path
 * resolved inside the process's root without following any symlink; a process gone
 * (its mappings known from the kernel's mmap records) leaves the path resolved from
 * scorch's own root. A path is taken only when it names the mapped inode (not the
 * device: stat() reports another one than the mapping on btrfs and overlayfs).
 * Returns fd or -errno.
 */
int sym_open_mapped(pid_t pid, const struct map_entry *e)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS,
	};
	char buf[64];
	struct stat st;
	int fd, rootfd = -1, err;
	bool gone = false;

	map_files_path(buf, sizeof(buf), pid, e);
	fd = open(buf, O_PATH | O_CLOEXEC);
	/* the same range may hold another file by now: an exec since, a PID reused */
	if (fd >= 0 && (fstat(fd, &st) || st.st_ino != e->inode)) {
		close(fd);
		fd = -1;
		errno = ESTALE;
	}
	if (fd >= 0)
		return fd;
	err = -errno;
	if (e->deleted || e->path[0] != '/')
		return err;
	snprintf(buf, sizeof(buf), "/proc/%d/root", (int)pid);
	rootfd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		if (errno != ENOENT && errno != ESRCH)
			return err;
		gone = true;
		how.resolve = RESOLVE_NO_SYMLINKS;
	}
	fd = syscall(SYS_openat2, gone ? AT_FDCWD : rootfd, e->path, &how, sizeof(how));
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* a path names whatever is there now: it must still be the file that was mapped */
	if (fstat(fd, &st) || st.st_ino != e->inode) {
		close(fd);
		fd = -1;
		err = -ESTALE;
	}
cleanup:
	if (rootfd >= 0)
		close(rootfd);
	return fd >= 0 ? fd : err;
}

void sym_file_link(struct symbolizer *s, struct elf_file *f)
{
	f->next = s->all_files;
	s->all_files = f;
}

/*
 * @cached has the build-id of @fd but only .dynsym (a stripped copy was seen first) or no
 * readable symbol tables (bad). If @fd has the full .symtab, or any when @cached is bad,
 * its table replaces the cached one in place (same build-id, same layout), so every
 * mapping already pointing at @cached benefits. Returns -ENOMEM or 0 (the cached table
 * stays when @fd is no better).
 */
static bool is_plt(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, "@plt");
}

/*
 * @full's symbols and the PLT stubs of @old (plt.c's "func@plt": a debug file has no
 * .plt contents to decode) into *@out. 1 when @old has none (@full serves as it is),
 * 0, -ENOMEM.
 */
static int tab_with_plt(struct symtab *out, const struct symtab *full, const struct symtab *old)
{
	struct sym_raw *raw;
	size_t i, n = 0;
	int err;

	for (i = 0; i < old->nr; i++)
		n += is_plt(old->syms[i].name);
	if (!n)
		return 1;
	raw = malloc((full->nr + n) * sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < full->nr; i++, n++)
		raw[n] = (struct sym_raw){ .start = full->syms[i].start, .end = full->syms[i].end,
					   .limit = full->syms[i].end, .name = full->syms[i].name,
					   .module = full->syms[i].module, .idx = (uint32_t)n };
	for (i = 0; i < old->nr; i++) {
		if (!is_plt(old->syms[i].name))
			continue;
		raw[n] = (struct sym_raw){.start = old->syms[i].start,
					  .end = old->syms[i].end,
					  .limit = old->syms[i].end,
					  .name = old->syms[i].name,
					  .rank = SYM_RANK_SYNTHETIC,
					  .idx = (uint32_t)n};
		n++;
	}
	err = symtab__build(out, raw, n);
	free(raw);
	return err;
}

int sym_file_upgrade(struct symbolizer *s, int fd, const char *path, struct elf_file *cached)
{
	struct elf_file *f = elf_file__parse(fd, NULL, 0, s->strs, path);
	struct symtab tmp;

	if (!f && errno == ENOMEM)
		return -ENOMEM;
	if (!f) {
		/* unusable as the copy it shares a build-id with: its frames are "[basename]" */
		if (cached->bad)
			s->st.files_unreadable++;
		return 0;
	}
	s->st.files_cached++;
	/* a copy whose tables could not be read (cached->bad) takes any readable ones */
	if (f->full || cached->bad) {
		int err = tab_with_plt(&tmp, &f->tab, &cached->tab);

		if (err < 0) {
			elf_file__free(f);
			return err;
		}
		if (err) {
			tmp = cached->tab;
			cached->tab = f->tab;
			f->tab = tmp;
		} else {
			symtab__free(&cached->tab);
			cached->tab = tmp;
		}
		cached->full = f->full;
		cached->bad = false;
		pr_debug("symbolize: %s: full symbol table for a stripped file\n", path);
	}
	elf_file__free(f);
	return 0;
}

struct dwarf_index *sym_file_dwarf(struct symbolizer *s, struct elf_file *f);

/*
 * A file with DWARF of its own may be deleted or replaced before its first lookup:
 * keep it open until indexed (or index it now when too many are held).
 */
void sym_file_hold(struct symbolizer *s, struct elf_file *f, int fd)
{
	bool now = s->held_fds >= HELD_FDS_MAX;

	if (!f->own_dwarf || s->no_dwarf || f->dw_tried || f->fd >= 0)
		return;
	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->fd < 0)
		return;
	s->held_fds++;
	if (now)
		sym_file_dwarf(s, f); /* closes it */
}

/*
 * Reads the symbol tables of @f from @fd now. Tables that cannot be read make @f bad
 * (its frames are "[basename]"), counted once. Returns 0 or -ENOMEM.
 */
static int file_load(struct symbolizer *s, struct elf_file *f, int fd)
{
	struct timespec t0, t1;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = elf_file__load_syms(f, fd, s->strs, f->path ? f->path : "?");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pr_debug("symbolize: %s: %zu symbols read in %.2f ms\n", f->path ? f->path : "?", f->tab.nr,
		 (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (err == -ENOMEM)
		return err;
	if (err) {
		pr_debug("symbolize: cannot read the symbol tables of %s\n",
			 f->path ? f->path : "?");
		f->bad = true;
		s->st.files_unreadable++;
		return 0;
	}
	s->st.files_symbols++;
	sym_file_hold(s, f, fd);
	return 0;
}

/*
 * @f has its headers from @fd: its symbol tables are read at its first lookup, through a
 * descriptor held until then, so that a recording does not parse the files of the
 * processes it sees start while they run. Past HELD_FDS_MAX held descriptors they are
 * read now. Returns 0 or -ENOMEM.
 */
static int file_defer(struct symbolizer *s, struct elf_file *f, int fd)
{
	struct stat st;

	if (s->held_fds < HELD_FDS_MAX && !fstat(fd, &st)) {
		f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (f->fd >= 0) {
			s->held_fds++;
			f->held_size = st.st_size;
			f->held_mtime = mtime_ns(&st);
			return 0;
		}
	}
	return file_load(s, f, fd);
}

/* Before a lookup in @f: its symbol tables, read now if deferred. Returns 0 or -ENOMEM. */
int sym_file_syms(struct symbolizer *s, struct elf_file *f)
{
	int fd = f->fd, err = 0;
	struct stat st;

	if (!f->syms_pending)
		return 0;
	f->syms_pending = false;
	f->fd = -1;
	if (fd >= 0 && s->held_fds)
		s->held_fds--;
	if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_size != f->held_size ||
	    mtime_ns(&st) != f->held_mtime) {
		/* what the process mapped is not there to read any more */
		pr_debug("symbolize: %s changed since it was mapped: its symbols are not read\n",
			 f->path ? f->path : "?");
		f->bad = true;
		s->st.files_unreadable++;
	} else {
		err = file_load(s, f, fd);
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/*
 * @f had its tables dropped while unused: reads the headers of @fd (the same file by
 * identity) into it again, the symbol tables when first needed. @f stays evicted if @fd
 * cannot be parsed. Returns 0 or -ENOMEM.
 */
static int file_reload(struct symbolizer *s, int fd, const char *path, struct elf_file *f)
{
	struct elf_file *g = elf_file__parse_headers(fd, s->strs, path);

	if (!g)
		return errno == ENOMEM ? -ENOMEM : 0;
	elf_file__take(f, g);
	pr_debug("symbolize: %s parsed again\n", path);
	return file_defer(s, f, fd);
}

/*
 * The file behind mapping @e of @pid, from the cache or read now (its headers: the symbol
 * tables wait for the first lookup, see file_defer). *@out NULL: the file cannot be used
 * (counted once in files_unreadable). Returns 0 or -ENOMEM.
 */
int sym_file_get(struct symbolizer *s, pid_t pid, const struct map_entry *e,
		    struct elf_file **out)
{
	struct file_key kdev, kbid, kfail;
	struct elf_file *f = NULL, *cached;
	struct file_slot *slot;
	int pathfd = -1, fd = -1, err = 0;
	char buf[64];
	struct stat st;

	*out = NULL;
	memset(&kfail, 0, sizeof(kfail));
	kfail.kind = KEY_FAILED;
	kfail.v[0] = e->dev_major;
	kfail.v[1] = e->dev_minor;
	kfail.v[2] = e->inode;
	kfail.v[3] = (uintptr_t)e->path; /* interned: equal paths, equal pointers */
	if (file_index__slot(&s->files, &kfail))
		return 0;
	/* a file parsed already (libc in every process): one stat, by its path when that
	 * names the mapped file, else through the mapping */
	if ((!stat_by_path(e, &st) || !stat_mapped(pid, e, &st)) && S_ISREG(st.st_mode)) {
		sym_key_devino(&kdev, &st);
		slot = file_index__slot(&s->files, &kdev);
		if (slot && !slot->file->evicted) {
			*out = slot->file->bad ? NULL : slot->file;
			return 0;
		}
	}
	pathfd = sym_open_mapped(pid, e);
	if (pathfd < 0) {
		err = pathfd;
		goto cleanup;
	}
	if (fstat(pathfd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	sym_key_devino(&kdev, &st);
	slot = file_index__slot(&s->files, &kdev);
	if (slot && !slot->file->evicted) {
		*out = slot->file->bad ? NULL : slot->file;
		goto cleanup;
	}
	/* reopen for reading only now that it is known to be a regular file */
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pathfd);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (slot) {
		err = file_reload(s, fd, e->path, slot->file);
		if (!err && !slot->file->evicted)
			*out = slot->file;
		goto cleanup;
	}
	f = elf_file__parse_headers(fd, s->strs, e->path);
	if (!f && errno == ENOMEM) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (f && f->build_id_len) {
		sym_key_build_id(&kbid, f->build_id, f->build_id_len);
		slot = file_index__slot(&s->files, &kbid);
	}
	/* the same file seen under another device/inode (a container's copy) */
	if (f && slot) {
		elf_file__free(f);
		f = NULL;
		cached = slot->file;
		if (cached->evicted) {
			err = file_reload(s, fd, e->path, cached);
			if (!err && !cached->evicted) {
				err = file_index__add(&s->files, &kdev, cached);
				*out = cached;
			}
			goto cleanup;
		}
		/* a stripped copy seen first: this one may have the full .symtab */
		err = sym_file_syms(s, cached);
		if (!err && !cached->full)
			err = sym_file_upgrade(s, fd, e->path, cached);
		if (!err)
			err = file_index__add(&s->files, &kdev, cached);
		*out = cached;
		goto cleanup;
	}
	if (!f) {
		/* cached as bad, under its identity, so that it is counted and tried once */
		pr_debug("symbolize: cannot parse %s of pid %d\n", e->path, (int)pid);
		f = calloc(1, sizeof(*f));
		if (!f) {
			err = -ENOMEM;
			goto cleanup;
		}
		f->bad = true;
		f->fd = -1;
		s->st.files_unreadable++;
	} else {
		s->st.files_cached++;
		f->path = e->path;
	}
	sym_file_link(s, f);
	err = file_index__add(&s->files, &kdev, f);
	if (!err && !f->bad && f->build_id_len)
		err = file_index__add(&s->files, &kbid, f);
	if (!err && !f->bad)
		err = file_defer(s, f, fd);
	if (!f->bad)
		*out = f;
cleanup:
	if (err && err != -ENOMEM) {
		pr_debug("symbolize: cannot open %s of pid %d: %s\n", e->path, (int)pid,
			 strerror(-err));
		/* ENOENT, ESRCH: most likely the process exited since its maps were read */
		if (err == -ENOENT || err == -ESRCH) {
			err = 0;
		} else {
			s->st.files_unreadable++;
			err = file_index__add(&s->files, &kfail, NULL);
		}
	}
	if (fd >= 0)
		close(fd);
	if (pathfd >= 0)
		close(pathfd);
	return err;
}
