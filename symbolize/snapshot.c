// SPDX-License-Identifier: MIT
/* symbolize: process images: their mappings from /proc, the kernel's records or a parent. */
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

/* ---- snapshots ---- */

const struct proc_map *sym_maps_find(const struct proc_map *maps, size_t nr, uint64_t addr)
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

int sym_proc_map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

const char *sym_bracket_name(struct symbolizer *s, const char *path)
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
				err = sym_vdso_load(s);
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
	m->name = sym_bracket_name(s, e->path);
	if (!m->name)
		return -ENOMEM;
	if (e->path[0] != '/')
		return 0; /* "anon_inode:...", "/memfd:" starts with '/' and is a file */
	m->path = e->path;
	m->kind = PROC_MAP_FILE;
	/* a runtime's jitdump, mapped for perf to see: no code in it, not read (perfmap's) */
	if (path__is_jitdump(e->path, strlen(e->path)))
		return 0;
	prev = old ? sym_maps_find(old->maps, old->nr_maps, e->start) : NULL;
	if (prev && prev->file && prev->start == e->start && prev->end == e->end &&
	    prev->pgoff == e->pgoff && prev->path == e->path && prev->inode == e->inode) {
		m->file = prev->file;
		return 0;
	}
	return sym_file_get(s, pid, e, &m->file);
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
		qsort(v, nr, sizeof(*v), sym_proc_map_cmp);
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
	p = sym_proc_find(s, pid, gen);
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
		qsort(maps, n, sizeof(*maps), sym_proc_map_cmp);
	/* (@pid, @gen) names one image: only a pid-only entry needs the start time to tell
	 * a reused PID from the process it snapshotted before */
	start_time = gen ? 0 : proc_start_time(pid);
	if (p && (gen || (p->start_time && p->start_time == start_time))) {
		err = maps_merge(&maps, &n, p->maps, p->nr_maps);
		if (err)
			goto cleanup;
	}
	if (!p) {
		err = sym_proc_add(s, pid, gen, &p);
		if (err)
			goto cleanup;
	}
	/* new references first: files both snapshots use never look unused */
	for (i = 0; i < n; i++)
		sym_file_ref(s, maps[i].file);
	sym_proc_maps_unref(s, p->maps, p->nr_maps);
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
		if (sym_proc_find(s, pid, gen))
			return 0;
		s->st.procs_missing++;
		return sym_proc_add(s, pid, gen, &p) ?: -ESRCH;
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
		if (sym_proc_find(s, pid, gen))
			goto cleanup;
		s->st.procs_missing++;
		if (sym_proc_add(s, pid, gen, &p))
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
	const struct proc *from = sym_proc_find(s, from_pid, from_gen);
	struct proc_map *maps;
	struct proc *p;
	size_t i;
	int err;

	/* a snapshot that could not be read has no mappings: nothing to copy */
	if (!from || !from->nr_maps || (from_pid == pid && from_gen == gen))
		return -ENOENT;
	if (sym_proc_find(s, pid, gen))
		return -EEXIST;
	maps = malloc(from->nr_maps * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	memcpy(maps, from->maps, from->nr_maps * sizeof(*maps));
	err = sym_proc_add(s, pid, gen, &p);
	if (err) {
		free(maps);
		return err;
	}
	for (i = 0; i < from->nr_maps; i++)
		sym_file_ref(s, maps[i].file);
	p->maps = maps;
	p->nr_maps = from->nr_maps;
	s->st.procs_copied++;
	return 0;
}

int symbolizer__jit_hints(struct symbolizer *s, pid_t pid, uint64_t gen)
{
	const struct proc *p = sym_proc_find(s, pid, gen);
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
