// SPDX-License-Identifier: MIT
/* symbolize: per-process mappings, the shared ELF file cache and the lookup path. */
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

#include "symbolize-private.h"

enum file_key_kind {
	KEY_DEVINO = 1, /* st_dev, st_ino, st_size, st_mtime of an opened file */
	KEY_BUILDID,	/* GNU build-id */
	KEY_FAILED,	/* maps dev + inode + path that could not be opened: count once */
};

/* Compared with memcmp: always built from a zeroed struct. */
struct file_key {
	uint32_t kind;
	uint32_t len;
	uint64_t v[4];
	uint8_t id[BUILD_ID_MAX];
};

struct file_slot {
	struct file_key key;
	struct elf_file *file; /* NULL for KEY_FAILED */
};

struct file_index {
	struct file_slot *v; /* in order of arrival */
	size_t nr, cap;
	struct hashmap index; /* key -> index in v[] + 1 */
};

/*
 * What a mapping is, told by this and never by its name: a file named "jit" is shown as
 * "[jit]" too, and the interned strings of both are one pointer.
 */
enum proc_map_kind {
	PROC_MAP_PSEUDO = 0, /* "[heap]", "[stack]", "anon_inode:...": a name, no file */
	PROC_MAP_FILE,	     /* a file (maybe unreadable) */
	PROC_MAP_ANON,	     /* anonymous executable memory, shown as "[jit]" */
	PROC_MAP_VDSO,	     /* the kernel's vDSO */
};

struct proc_map {
	uint64_t start, end, pgoff;
	const char *name;      /* frame name without a symbol: "[libc.so.6]", "[jit]", "[heap]" */
	const char *path;      /* frame module: the file path, "[vdso]"; NULL otherwise */
	struct elf_file *file; /* symbols, or NULL */
	uint64_t inode;	       /* as maps said, to reuse files on refresh */
	enum proc_map_kind kind;
};

struct proc {
	pid_t pid;
	uint64_t gen;	     /* caller-chosen generation: (pid, gen) names one process image */
	uint64_t start_time; /* /proc/PID/stat starttime, 0 unknown: tells PID reuse apart */
	bool miss_refreshed; /* a lookup outside every mapping re-read the maps once */
	struct proc_map *maps;
	size_t nr_maps;
};

/*
 * Descriptors held: files whose symbol tables wait for their first lookup, and files with
 * DWARF of their own until indexed. Beyond this, both are read at once.
 */
#define HELD_FDS_MAX 256
/* Inline frames asked of the index per lookup. */
#define CHAIN_MAX 64

struct symbolizer {
	struct strset *strs;
	const char *kallsyms_path; /* interned */
	const char *debug_root;	   /* interned */
	bool no_kernel, no_demangle, keep_params, lines, no_inline, no_dwarf, offline;
	const char *symfs;	/* interned, or NULL */
	const char *cache_dir;	/* interned, or NULL */
	struct dw_cache *cache; /* opened at the first DWARF index (cache_tried) */
	bool cache_tried;
	symbolizer_jit_fn jit_lookup;
	void *jit_ctx;
	struct hashmap names; /* interned raw name (hash__u64) -> interned display name */
	size_t held_fds;
	const char *elf_path; /* symbolizer__elf: the last path asked, and its file */
	struct elf_file *elf_file;
	bool kernel_tried;
	struct symtab ksyms;
	/* the /proc/kallsyms text @ksyms points into (kallsyms__parse()) until a symbol is
	 * named (ksym_names()), or NULL: @ksyms came from symbolizer__set_kallsyms() */
	char *ktext;
	size_t ktext_len;

	struct hashmap procs; /* (pid, gen) -> struct proc * */
	struct proc *last;    /* lookups come in runs of one process */

	struct file_index files;
	struct elf_file *all_files;
	/* files no process uses, most recent first; beyond UNUSED_KEEP their tables go */
	struct elf_file *unused_head, *unused_tail;
	size_t nr_unused;
	bool vdso_tried;
	struct elf_file *vdso; /* this process's vDSO image: the same kernel serves others */
	uint64_t vdso_size;

	const char *s_unknown, *s_anon, *s_vdso;
	struct symbolizer_stats st;
};

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
static struct file_slot *file_index__slot(const struct file_index *idx, const struct file_key *k)
{
	uint64_t val = hashmap__find(&idx->index, file_key__hash(k), file_key__eq,
				     &(struct file_key_ctx){idx, k});

	return val ? &idx->v[val - 1] : NULL;
}

static int file_index__add(struct file_index *idx, const struct file_key *k, struct elf_file *f)
{
	struct file_slot *slot = file_index__slot(idx, k);

	if (!slot) {
		if (idx->nr == idx->cap) {
			size_t cap = idx->cap ? idx->cap * 2 : 64;

			slot = cap <= SIZE_MAX / sizeof(*slot)
				       ? realloc(idx->v, cap * sizeof(*slot))
				       : NULL;
			if (!slot)
				return -ENOMEM;
			idx->v = slot;
			idx->cap = cap;
		}
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

static void key_devino(struct file_key *k, const struct stat *st)
{
	memset(k, 0, sizeof(*k));
	k->kind = KEY_DEVINO;
	k->v[0] = st->st_dev;
	k->v[1] = st->st_ino;
	k->v[2] = st->st_size;
	k->v[3] = mtime_ns(st);
}

static void key_build_id(struct file_key *k, const uint8_t *id, size_t len)
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

static void file_ref(struct symbolizer *s, struct elf_file *f)
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

static void proc_maps_unref(struct symbolizer *s, struct proc_map *maps, size_t nr)
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
		proc_maps_unref(s, p->maps, p->nr_maps);
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

static struct proc *proc_find(struct symbolizer *s, pid_t pid, uint64_t gen)
{
	if (s->last && s->last->pid == pid && s->last->gen == gen)
		return s->last;
	return (struct proc *)(uintptr_t)hashmap__find(&s->procs, proc_hash(pid, gen), proc_eq,
						       &(struct proc_key){pid, gen});
}

static int proc_add(struct symbolizer *s, pid_t pid, uint64_t gen, struct proc **out)
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

static int vdso_load(struct symbolizer *s)
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
 * open_mapped() has the fallbacks).
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
 * the window open_mapped()'s path fallback has too). A path lookup costs a third of a
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
static int open_mapped(pid_t pid, const struct map_entry *e)
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

static void file_link(struct symbolizer *s, struct elf_file *f)
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
	for (i = 0; i < full->nr; i++)
		raw[n++] = (struct sym_raw){ .start = full->syms[i].start, .end = full->syms[i].end,
					     .limit = full->syms[i].end, .name = full->syms[i].name,
					     .module = full->syms[i].module, .idx = (uint32_t)n };
	for (i = 0; i < old->nr; i++)
		if (is_plt(old->syms[i].name))
			raw[n++] = (struct sym_raw){ .start = old->syms[i].start,
						     .end = old->syms[i].end,
						     .limit = old->syms[i].end,
						     .name = old->syms[i].name,
						     .rank = 8,
						     .idx = (uint32_t)n };
	err = symtab__build(out, raw, n);
	free(raw);
	return err;
}

static int file_upgrade(struct symbolizer *s, int fd, const char *path, struct elf_file *cached)
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

static struct dwarf_index *file_dwarf(struct symbolizer *s, struct elf_file *f);

/*
 * A file with DWARF of its own may be deleted or replaced before its first lookup:
 * keep it open until indexed (or index it now when too many are held).
 */
static void file_hold(struct symbolizer *s, struct elf_file *f, int fd)
{
	bool now = s->held_fds >= HELD_FDS_MAX;

	if (!f->own_dwarf || s->no_dwarf || f->dw_tried || f->fd >= 0)
		return;
	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->fd < 0)
		return;
	s->held_fds++;
	if (now)
		file_dwarf(s, f); /* closes it */
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
	file_hold(s, f, fd);
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
static int file_syms(struct symbolizer *s, struct elf_file *f)
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
static int file_get(struct symbolizer *s, pid_t pid, const struct map_entry *e,
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
		key_devino(&kdev, &st);
		slot = file_index__slot(&s->files, &kdev);
		if (slot && !slot->file->evicted) {
			*out = slot->file->bad ? NULL : slot->file;
			return 0;
		}
	}
	pathfd = open_mapped(pid, e);
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
	key_devino(&kdev, &st);
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
		key_build_id(&kbid, f->build_id, f->build_id_len);
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
		err = file_syms(s, cached);
		if (!err && !cached->full)
			err = file_upgrade(s, fd, e->path, cached);
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
	file_link(s, f);
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

/* ---- snapshots ---- */

static const struct proc_map *maps_find(const struct proc_map *maps, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < maps[lo - 1].end)
		return &maps[lo - 1];
	return NULL;
}

static int proc_map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static const char *bracket_name(struct symbolizer *s, const char *path)
{
	const char *base = strrchr(path, '/');
	char buf[512];
	int n;

	base = base ? base + 1 : path;
	n = snprintf(buf, sizeof(buf), "[%s]", base);
	if (n < 0)
		return NULL;
	return strset__intern_len(s->strs, buf, MIN((size_t)n, sizeof(buf) - 1));
}

/* Fills @m from @e; NULL name: not kept (nothing a sample can hit). */
static int proc_map_init(struct symbolizer *s, pid_t pid, const struct map_entry *e,
			 const struct proc *old, struct proc_map *m)
{
	const struct proc_map *prev;
	int err = 0;

	*m = (struct proc_map){
		.start = e->start,
		.end = e->end,
		.pgoff = e->pgoff,
		.inode = e->inode,
	};
	if (e->path[0] == '[') {
		m->name = e->path;
		if (!strcmp(e->path, "[vdso]")) {
			m->kind = PROC_MAP_VDSO;
			if (!s->vdso_tried)
				err = vdso_load(s);
			/* a compat (32-bit) process has another vDSO: name it "[vdso]" only */
			if (e->end - e->start == s->vdso_size)
				m->file = s->vdso;
			m->path = s->s_vdso;
		}
		return err;
	}
	if (!(e->perms & MAP_PERM_X))
		return 0;
	if (!e->path[0]) {
		m->name = s->s_anon;
		m->kind = PROC_MAP_ANON;
		return 0;
	}
	m->name = bracket_name(s, e->path);
	if (!m->name)
		return -ENOMEM;
	if (e->path[0] != '/')
		return 0; /* "anon_inode:...", "/memfd:" starts with '/' and is a file */
	m->path = e->path;
	m->kind = PROC_MAP_FILE;
	/* a runtime's jitdump, mapped for perf to see: no code in it, not read (perfmap's) */
	if (path__is_jitdump(e->path, strlen(e->path)))
		return 0;
	prev = old ? maps_find(old->maps, old->nr_maps, e->start) : NULL;
	if (prev && prev->file && prev->start == e->start && prev->end == e->end &&
	    prev->pgoff == e->pgoff && prev->path == e->path && prev->inode == e->inode) {
		m->file = prev->file;
		return 0;
	}
	return file_get(s, pid, e, &m->file);
}

/* The start time of @pid (clock ticks after boot), or 0 if it cannot be read. */
static uint64_t proc_start_time(pid_t pid)
{
	struct proc_stat st;

	return proc__read_stat((int)pid, &st) ? 0 : st.start_time;
}

/*
 * Adds to the new mappings @maps (sorted, *@n of them) those of @old
 * that no new mapping overlaps: a library unmapped since the last snapshot still names
 * the samples taken while it was there. Returns 0 or -ENOMEM.
 */
static int maps_merge(struct proc_map **maps, size_t *n, const struct proc_map *old, size_t nr_old)
{
	struct proc_map *v = *maps, *tmp;
	size_t i, nr = *n, lo, hi, mid;

	tmp = realloc(v, (nr + nr_old + 1) * sizeof(*v));
	if (!tmp)
		return -ENOMEM;
	v = tmp;
	*maps = v;
	for (i = 0; i < nr_old; i++) {
		/* the last new mapping starting below old[i].end is the only one to check */
		for (lo = 0, hi = *n; lo < hi;) {
			mid = lo + (hi - lo) / 2;
			if (v[mid].start < old[i].end)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && v[lo - 1].end > old[i].start)
			continue;
		v[nr++] = old[i];
	}
	if (nr != *n)
		qsort(v, nr, sizeof(*v), proc_map_cmp);
	*n = nr;
	return 0;
}

/*
 * Makes @ents[0..nr) the mappings of (@pid, @gen), merged with what an earlier snapshot
 * of it saw (see symbolizer__snapshot_gen). Returns 0 or -ENOMEM.
 */
static int snapshot_install(struct symbolizer *s, pid_t pid, uint64_t gen,
			    const struct map_entry *ents, size_t nr)
{
	struct proc_map *maps;
	struct proc *p;
	size_t i, n = 0;
	uint64_t start_time;
	bool sorted = true;
	int err;

	maps = calloc(nr + 1, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	p = proc_find(s, pid, gen);
	for (i = 0; i < nr; i++) {
		err = proc_map_init(s, pid, &ents[i], p, &maps[n]);
		if (err)
			goto cleanup;
		if (!maps[n].name || maps[n].start == maps[n].end)
			continue;
		if (n && maps[n].start < maps[n - 1].start)
			sorted = false;
		n++;
	}
	if (!sorted)
		qsort(maps, n, sizeof(*maps), proc_map_cmp);
	/* (@pid, @gen) names one image: only a pid-only entry needs the start time to tell
	 * a reused PID from the process it snapshotted before */
	start_time = gen ? 0 : proc_start_time(pid);
	if (p && (gen || (p->start_time && p->start_time == start_time))) {
		err = maps_merge(&maps, &n, p->maps, p->nr_maps);
		if (err)
			goto cleanup;
	}
	if (!p) {
		err = proc_add(s, pid, gen, &p);
		if (err)
			goto cleanup;
	}
	/* new references first: files both snapshots use never look unused */
	for (i = 0; i < n; i++)
		file_ref(s, maps[i].file);
	proc_maps_unref(s, p->maps, p->nr_maps);
	p->start_time = start_time;
	free(p->maps);
	p->maps = maps;
	p->nr_maps = n;
	maps = NULL;
cleanup:
	free(maps);
	return err;
}

int symbolizer__snapshot_gen(struct symbolizer *s, pid_t pid, uint64_t gen)
{
	struct map_entry *ents = NULL;
	struct proc *p;
	size_t nr = 0, bad = 0, len;
	char *text = NULL, path[32];
	int err;

	if (s->offline) {
		/* only imported images exist: an unknown one is missing, not read from here */
		if (proc_find(s, pid, gen))
			return 0;
		s->st.procs_missing++;
		return proc_add(s, pid, gen, &p) ?: -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = file__read_bounded(AT_FDCWD, path, MAPS_MAX_BYTES, &text, &len);
	if (err) {
		if (err == -ENOMEM)
			goto cleanup;
		pr_debug("symbolize: cannot read %s: %s\n", path, strerror(-err));
		if (err == -ENOENT)
			err = -ESRCH;
		/* keep what an earlier snapshot saw: the process may have just exited */
		if (proc_find(s, pid, gen))
			goto cleanup;
		s->st.procs_missing++;
		if (proc_add(s, pid, gen, &p))
			err = -ENOMEM;
		goto cleanup;
	}
	err = maps__parse(text, len, s->strs, &ents, &nr, &bad);
	if (err)
		goto cleanup;
	if (bad)
		pr_debug("symbolize: %s: %zu malformed lines skipped\n", path, bad);
	err = snapshot_install(s, pid, gen, ents, nr);
cleanup:
	free(ents);
	free(text);
	return err;
}

int symbolizer__snapshot_vmas(struct symbolizer *s, pid_t pid, uint64_t gen,
			      const struct symbolizer_vma *v, size_t n)
{
	struct map_entry *ents;
	size_t i, len;
	int err;

	ents = calloc(n + 1, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct map_entry *e = &ents[i];

		if (v[i].end <= v[i].start) {
			err = -EINVAL;
			goto cleanup;
		}
		*e = (struct map_entry){
			.start = v[i].start,
			.end = v[i].end,
			.pgoff = v[i].pgoff,
			.inode = v[i].inode,
			.dev_major = v[i].dev_major,
			.dev_minor = v[i].dev_minor,
			.perms = MAP_PERM_R | (v[i].exec ? MAP_PERM_X : 0),
		};
		len = strlen(v[i].path);
		e->deleted = path__strip_deleted(v[i].path, &len);
		e->path = strset__intern_len(s->strs, v[i].path, len);
		if (!e->path) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	err = snapshot_install(s, pid, gen, ents, n);
cleanup:
	free(ents);
	return err;
}

int symbolizer__snapshot_copy(struct symbolizer *s, pid_t pid, uint64_t gen, pid_t from_pid,
			      uint64_t from_gen)
{
	const struct proc *from = proc_find(s, from_pid, from_gen);
	struct proc_map *maps;
	struct proc *p;
	size_t i;
	int err;

	/* a snapshot that could not be read has no mappings: nothing to copy */
	if (!from || !from->nr_maps || (from_pid == pid && from_gen == gen))
		return -ENOENT;
	if (proc_find(s, pid, gen))
		return -EEXIST;
	maps = malloc(from->nr_maps * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	memcpy(maps, from->maps, from->nr_maps * sizeof(*maps));
	err = proc_add(s, pid, gen, &p);
	if (err) {
		free(maps);
		return err;
	}
	for (i = 0; i < from->nr_maps; i++)
		file_ref(s, maps[i].file);
	p->maps = maps;
	p->nr_maps = from->nr_maps;
	s->st.procs_copied++;
	return 0;
}

int symbolizer__jit_hints(struct symbolizer *s, pid_t pid, uint64_t gen)
{
	const struct proc *p = proc_find(s, pid, gen);
	int flags = 0;
	size_t i;

	if (!p)
		return -ENOENT;
	for (i = 0; i < p->nr_maps; i++) {
		const struct proc_map *m = &p->maps[i];

		if (m->kind == PROC_MAP_ANON)
			flags |= SYMBOLIZER_JIT_ANON;
		else if (m->path && !m->file && path__is_jitdump(m->path, strlen(m->path)))
			flags |= SYMBOLIZER_JIT_DUMP;
	}
	return flags;
}

int symbolizer__snapshot(struct symbolizer *s, pid_t pid)
{
	return symbolizer__snapshot_gen(s, pid, 0);
}

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
static struct dwarf_index *file_dwarf(struct symbolizer *s, struct elf_file *f)
{
	struct dwarf_index *idx = NULL;
	const char *what = f->path ? f->path : "?";
	int fd = -1, err = -ENOENT;

	if (f->dw_tried || s->no_dwarf)
		return f->dw;
	f->dw_tried = true;
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
		if (fd >= 0 && !f->full && file_upgrade(s, fd, what, f) == -ENOMEM)
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

	err = file_syms(s, f);
	if (err)
		return err;
	if (f->bad)
		return 0;
	/* first: a stripped file's debug file may bring its full symbol table too */
	idx = file_dwarf(s, f);
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
			/* a symbol starting where the function does is its canonical name */
			const char *raw = !i && sym && sym->start == dwf[0].entry
						  ? sym->name
						  : strset__intern(s->strs, dwf[i].name);

			if (!raw)
				return -ENOMEM;
			out[i] = (struct frame){
				.module = module,
				.kind = dwf[i].inlined ? FRAME_INLINE : FRAME_SYMBOL,
			};
			if (!i)
				out[i].offset =
					(sym ? vaddr - sym->start : vaddr - dwf[i].entry) + delta;
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
	struct proc *p = proc_find(s, pid, gen);
	const struct proc_map *m;

	*pp = NULL;
	*err = 0;
	if (!p) {
		if (symbolizer__snapshot_gen(s, pid, gen) == -ENOMEM)
			goto nomem;
		p = proc_find(s, pid, gen);
		if (!p)
			return NULL;
	}
	*pp = p;
	m = maps_find(p->maps, p->nr_maps, addr);
	if (!m && p->nr_maps && !p->miss_refreshed && !s->offline) {
		p->miss_refreshed = true;
		if (symbolizer__snapshot_gen(s, pid, gen) == -ENOMEM)
			goto nomem;
		m = maps_find(p->maps, p->nr_maps, addr);
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
	pathfd = open_mapped(pid, &e);
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
	key_devino(&kdev, &st);
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
	file_link(s, f);
	err = file_index__add(&s->files, &kdev, f);
	if (err)
		goto cleanup;
	file_hold(s, f, fd);
found:
	file_ref(s, f); /* kept for the symbolizer's life */
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
	*out = (struct frame){.name = bracket_name(s, path), .module = ipath, .kind = FRAME_MODULE};
	return out->name ? 1 : -ENOMEM;
}

int symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t ip, bool is_return,
		     struct frame *out, size_t cap)
{
	return symbolizer__user_gen(s, pid, 0, ip, is_return, out, cap);
}

static int kernel_load(struct symbolizer *s)
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

int symbolizer__load_kernel(struct symbolizer *s)
{
	if (s->no_kernel || s->kernel_tried)
		return 0;
	return kernel_load(s);
}

/*
 * The interned display name and module of kernel symbol @sym (of s->ksyms): interned the
 * first time, then kept in the table in place of the names within the text. Returns 0
 * or -ENOMEM.
 */
static int ksym_names(struct symbolizer *s, const struct sym *sym, const char **name,
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
		err = kernel_load(s);
		if (err)
			return err;
	}
	sym = s->no_kernel ? NULL : symtab__find(&s->ksyms, addr);
	if (!sym) {
		s->st.kernel_unresolved++;
		return frame_unknown(s, out);
	}
	err = ksym_names(s, sym, &name, &module);
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
	p = proc_find(s, pid, gen);
	if (!p) {
		err = symbolizer__snapshot_gen(s, pid, gen);
		if (err == -ENOMEM)
			return err;
		p = proc_find(s, pid, gen);
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
	memcpy(kfail.id, id, id_len);
	if (file_index__slot(&s->files, &kfail))
		return 0;
	if (id_len) {
		key_build_id(&kbid, id, id_len);
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
	file_link(s, f);
	if (f->build_id_len) {
		key_build_id(&kbid, f->build_id, f->build_id_len);
		err = file_index__add(&s->files, &kbid, f);
	}
	file_hold(s, f, fd);
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
				err = vdso_load(s);
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
			pm->name = pm->path ? bracket_name(s, m->path) : NULL;
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
	qsort(v, k, sizeof(*v), proc_map_cmp);
	p = proc_find(s, pid, gen);
	if (!p) {
		err = proc_add(s, pid, gen, &p);
		if (err)
			goto cleanup;
	}
	for (i = 0; i < k; i++)
		file_ref(s, v[i].file);
	proc_maps_unref(s, p->maps, p->nr_maps);
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
		err = kernel_load(s);
		if (err)
			return err;
	}
	sym = s->no_kernel ? NULL : symtab__find(&s->ksyms, addr);
	if (!sym)
		return -ENOENT;
	err = ksym_names(s, sym, &name, &module);
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
