// SPDX-License-Identifier: MIT
/*
 * profiler: --unwind kernel: the unwind tables the BPF programs walk user stacks with.
 * Each file's .eh_frame is compiled once (unwind_ktable__build()) into a range of map
 * "kunwind_rows", shared by every process that maps the file (by build-id, else by
 * path); each process image gets an entry of map "kunwind_procs": its executable
 * mappings with rows, sorted, stamped with its generation. Rows are allocated from the
 * start of the map and kept for the recording (a file's rows are reused by the next
 * process that maps it): the map's size is the budget, and files that do not fit are
 * counted, their frames walked by frame pointers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "common.h"
#include "engine.h"
#include "ktables.h"
#include "timing.h"
#include "python.h"
#include "symbolize.h"
#include "unwind.h"

/* A file's rows: [lo, hi) of the map; hi == lo: none (no CFI, too big, unreadable). */
struct kfile {
	char *key;
	uint32_t lo, hi;
	bool compiled;	 /* rows compiled (or found none) */
	bool py_checked; /* python__file() asked */
	int py_err;	 /* python__file(): 0 when it is a CPython interpreter */
	struct python_file py;
};

struct ktables {
	int rows_fd, procs_fd;
	struct pycodes *py; /* CPython processes' code objects; NULL: no Python frames */
	bool python_only;   /* entries for CPython processes only (the others are copied) */
	pid_t py_warned;    /* the last process told its interpreter could not be walked */
	uint32_t cap, used;
	struct hashmap files;	   /* hash of key -> struct kfile * */
	struct kunwind_proc *proc; /* scratch: the entry being built */
	struct ktables_stats st;
};

int ktables__new(int rows_fd, int procs_fd, uint32_t cap, struct pycodes *py, bool python_only,
		 struct ktables **out)
{
	struct ktables *kt = calloc(1, sizeof(*kt));

	if (!kt || !(kt->proc = malloc(sizeof(*kt->proc)))) {
		free(kt);
		return -ENOMEM;
	}
	kt->rows_fd = rows_fd;
	kt->procs_fd = procs_fd;
	kt->py = py;
	kt->python_only = py && python_only;
	kt->cap = cap;
	kt->st.rows_cap = cap;
	*out = kt;
	return 0;
}

void ktables__free(struct ktables *kt)
{
	struct hashmap_iter it;
	uint64_t val;

	if (!kt)
		return;
	for (hashmap__iter_init(&kt->files, &it); hashmap__iter_next(&kt->files, &it, &val);) {
		struct kfile *f = (struct kfile *)(uintptr_t)val;

		free(f->key);
		free(f);
	}
	hashmap__free(&kt->files);
	free(kt->proc);
	free(kt);
}

static bool kfile_eq(uint64_t val, const void *ctx)
{
	return !strcmp(((const struct kfile *)(uintptr_t)val)->key, ctx);
}

/* A build-id in hex, the key of its file. */
static char *hex_key(const uint8_t *id, size_t len)
{
	char *key = malloc(2 * len + 1);
	size_t i;

	for (i = 0; key && i < len; i++)
		snprintf(key + 2 * i, 3, "%02x", id[i]);
	return key;
}

/* The identity of the file of @m: its build-id in hex, else its path. */
static char *file_key(const struct symbolizer_mapping *m)
{
	if (!m->build_id_len || m->build_id_len > 64)
		return m->path ? strdup(m->path) : NULL;
	return hex_key(m->build_id, m->build_id_len);
}

/* Writes @rows[0..nr) to the map from index @lo. 0 or -errno. */
static int write_rows(struct ktables *kt, uint32_t lo, const struct kunwind_row *rows, size_t nr)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t *keys, i;
	__u32 count = (__u32)nr;
	int err = 0;

	keys = malloc(nr * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		keys[i] = lo + i;
	if (bpf_map_update_batch(kt->rows_fd, keys, rows, &count, &opts)) {
		/* no batch updates: one by one */
		for (i = 0; i < nr && !err; i++)
			if (bpf_map_update_elem(kt->rows_fd, &keys[i], &rows[i], BPF_ANY))
				err = -errno;
	}
	free(keys);
	return err;
}

/* The file of key @key (taken), new and empty if not known; NULL: -ENOMEM. */
static struct kfile *kfile_get(struct ktables *kt, char *key, bool *is_new)
{
	uint64_t h = hash__bytes(key, strlen(key), 0);
	struct kfile *f = (struct kfile *)(uintptr_t)hashmap__find(&kt->files, h, kfile_eq, key);

	*is_new = !f;
	if (f) {
		free(key);
		return f;
	}
	f = calloc(1, sizeof(*f));
	if (!f || hashmap__insert(&kt->files, h, (uintptr_t)f)) {
		free(f);
		free(key);
		return NULL;
	}
	f->key = key;
	f->lo = f->hi = kt->used;
	return f;
}

/* Compiles the file open on @fd (@path) into rows after the last ones, for @f. */
static void kfile_compile(struct ktables *kt, struct kfile *f, int fd, const char *path,
			  struct unwind_ktable_stats *ks)
{
	double t0 = timing__now();
	struct kunwind_row *rows = NULL;
	size_t nr = 0;
	int err;

	f->compiled = true;

	err = unwind_ktable__build(fd, kt->cap - kt->used, &rows, &nr, ks);
	if (err == -ENOENT) {
		kt->st.files_no_cfi++;
	} else if (err == -E2BIG) {
		kt->st.files_too_big++;
	} else if (err) {
		kt->st.files_unreadable++;
	} else if (nr && !write_rows(kt, kt->used, rows, nr)) {
		f->lo = kt->used;
		f->hi = kt->used + (uint32_t)nr;
		kt->used = f->hi;
		kt->st.files++;
		kt->st.files_debug_frame += ks->fdes_debug > 0;
		kt->st.rows = kt->used;
		kt->st.rows_invalid += ks->invalid;
	} else if (nr) {
		kt->st.files_unreadable++;
	}
	kt->st.build_s += timing__now() - t0;
	free(rows);
}

/* Whether the file open on @fd (@path) is a CPython interpreter, for @f. */
static void kfile_python(struct ktables *kt, struct kfile *f, int fd, const char *path)
{
	f->py_checked = true;
	f->py_err = kt->py ? python__file(fd, path, &f->py) : -ENOENT;
}

/* A CPython whose layout scorch does not know, mapped by @pid: said once per process. */
static void python_unknown(struct ktables *kt, pid_t pid, const struct kfile *f,
			   const struct symbolizer_mapping *m)
{
	if (f->py_err != -EPROTONOSUPPORT || kt->py_warned == pid)
		return;
	kt->py_warned = pid;
	kt->st.py_refused++;
	if (f->py.minor)
		pr_warn("process %d runs CPython 3.%u (%s): its Python frames are not shown\n", pid,
			f->py.minor, m->path ? m->path : "?");
	else
		pr_warn("process %d runs a CPython of unknown version (%s): its Python frames are not "
			"shown\n",
			pid, m->path ? m->path : "?");
	pr_hint("scorch reads the frames of CPython 3.10 to 3.13; its native frames are shown\n");
}

/*
 * The file of FILE mapping @m of (@pid, @gen), asked whether it is CPython, and with
 * @compile its rows compiled, when not done before.
 */
static struct kfile *file_get(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen,
			      const struct symbolizer_mapping *m, bool compile)
{
	struct unwind_ktable_stats ks;
	struct kfile *f;
	char *key = file_key(m);
	bool is_new;
	int fd;

	if (!key)
		return NULL;
	f = kfile_get(kt, key, &is_new);
	if (!f || (f->py_checked && (f->compiled || !compile)))
		return f;
	fd = symbolizer__open_mapping_gen(sym, pid, gen, m->start);
	if (fd < 0) {
		f->py_checked = true;
		f->py_err = -ENOENT;
		if (compile && !f->compiled) {
			f->compiled = true;
			kt->st.files_unreadable++;
		}
		return f;
	}
	if (!f->py_checked)
		kfile_python(kt, f, fd, m->path);
	if (compile && !f->compiled)
		kfile_compile(kt, f, fd, m->path, &ks);
	close(fd);
	return f;
}

/*
 * The file of mapping @map of (@pid, @gen), its details in *@m, as file_get() gives it;
 * NULL with *@skip set for a mapping that is not a file's (or no longer known).
 */
static struct kfile *map_file(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen,
			      const struct symbolizer_mapping *map, struct symbolizer_mapping *m,
			      bool compile, bool *skip)
{
	*skip = map->kind != SYMBOLIZER_MAP_FILE ||
		symbolizer__mapping_gen(sym, pid, gen, map->start, m);
	return *skip ? NULL : file_get(kt, sym, pid, gen, m, compile);
}

int ktables__preload(struct ktables *kt, const char *path)
{
	struct unwind_ktable_stats ks;
	struct kunwind_row *rows = NULL;
	struct kfile *f;
	size_t nr = 0;
	bool is_new;
	char *key;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the build-id first: the key the file is found by when a process maps it */
	err = unwind_ktable__build(fd, 0, &rows, &nr, &ks);
	free(rows);
	if ((err && err != -E2BIG) || !ks.build_id_len) {
		close(fd);
		return err ? err : -ENOENT;
	}
	key = hex_key(ks.build_id, ks.build_id_len);
	f = key ? kfile_get(kt, key, &is_new) : NULL;
	if (f && !f->py_checked)
		kfile_python(kt, f, fd, path);
	if (f && !f->compiled)
		kfile_compile(kt, f, fd, path, &ks);
	close(fd);
	return f ? 0 : -ENOMEM;
}

/* The part of a frame its fields lie in (8 bytes each, the flag 1), read at once. */
static void python_span(const struct python_layout *l, struct kunwind_python *py)
{
	uint16_t offs[] = {l->fr_code, l->fr_prev, l->fr_instr, l->fr_flag};
	unsigned int lo = UINT16_MAX, hi = 0, i;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		if (offs[i] == PY_NONE)
			continue;
		lo = MIN(lo, offs[i]);
		hi = MAX(hi, offs[i] + (i == 3 ? 1u : 8u));
	}
	lo &= ~7u;
	py->fr_base = (__u8)lo;
	py->fr_span = (__u8)(hi - lo);
}

/*
 * The Python part of @p, for the interpreter file @f mapped at @m in @pid: the layout
 * of its version, once the running process shows it has it. A process whose memory
 * does not match is told once (its stacks stay native); one not initialized yet is
 * walked (the walk finds no thread state until it is).
 */
static void python_entry(struct ktables *kt, pid_t pid, const struct kfile *f,
			 const struct symbolizer_mapping *m, struct kunwind_proc *p)
{
	const struct python_layout *l = python__layout(f->py.minor);
	uint32_t specific = python__glibc_specific();
	uint64_t runtime = f->py.runtime + m->bias;
	int err;

	if (!l || (p && p->py.tss_key))
		return;
	err = python__check(pid, l, runtime, specific);
	if (err && err != -EAGAIN) {
		if (err == -EPROTO && kt->py_warned != pid) {
			kt->py_warned = pid;
			pr_warn("process %d: CPython 3.%u's memory is not laid out as expected: "
				"its Python frames are not shown\n",
				pid, f->py.minor);
			pr_hint("a CPython 3.10-3.13 built for x86-64 with glibc and a GIL is "
				"expected; its native frames are shown\n");
		}
		kt->st.py_refused++;
		return;
	}
	if (pycodes__add_process(kt->py, pid, l, runtime,
				 f->py.code_type ? f->py.code_type + m->bias : 0) ||
	    !p)
		return;
	p->py = (struct kunwind_python){
		.tss_key = runtime + l->rt_tss_key,
		.specific = (__u16)specific,
		.ts_cframe = l->ts_cframe,
		.ts_frame = l->ts_frame,
		.cf_frame = l->cf_frame,
		.cf_prev = l->cf_prev,
		.fr_code = l->fr_code,
		.fr_prev = l->fr_prev,
		.fr_instr = l->fr_instr,
		.fr_flag = l->fr_flag,
		.co_code = l->co_code,
		.co_guard = l->co_guard,
		.run = (__u8)l->run,
	};
	python_span(l, &p->py);
	kt->st.py_procs++;
}

int ktables__add_image(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen,
		       uint64_t entry_gen)
{
	struct symbolizer_mapping *maps = NULL, m;
	struct kunwind_proc *p = kt->proc;
	__u32 key = (__u32)pid;
	size_t n = 0, i;
	int err;

	err = symbolizer__mappings_gen(sym, pid, gen, &maps, &n);
	if (err)
		return err;
	/* only CPython processes: the others' stacks are copied to scorch */
	for (i = 0; kt->python_only && i < n; i++) {
		bool skip;
		struct kfile *f = map_file(kt, sym, pid, gen, &maps[i], &m, false, &skip);

		if (skip)
			continue;
		if (!f) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (!f->py_err)
			break;
		python_unknown(kt, pid, f, &m);
	}
	if (kt->python_only && i == n)
		goto cleanup;
	memset(p, 0, sizeof(*p));
	p->gen = entry_gen;
	/* sorted by start already */
	for (i = 0; i < n; i++) {
		bool skip;
		struct kfile *f = map_file(kt, sym, pid, gen, &maps[i], &m, true, &skip);

		if (skip)
			continue;
		if (!f) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (!f->py_err && kt->py)
			python_entry(kt, pid, f, &m, p);
		else if (kt->py)
			python_unknown(kt, pid, f, &m);
		if (f->hi == f->lo)
			continue;
		if (p->nr == KUNWIND_MAX_MAPS) {
			kt->st.maps_dropped++;
			continue;
		}
		p->maps[p->nr++] = (struct kunwind_map){
			.start = m.start, .end = m.end, .bias = m.bias, .lo = f->lo, .hi = f->hi};
	}
	if (bpf_map_update_elem(kt->procs_fd, &key, p, BPF_ANY)) {
		err = -errno;
		kt->st.procs_full++;
		err = err == -E2BIG || err == -ENOMEM ? 0 : err;
		goto cleanup;
	}
	kt->st.images++;
cleanup:
	free(maps);
	return err;
}

int ktables__add_python(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen)
{
	struct symbolizer_mapping *maps = NULL, m;
	size_t n = 0, i;
	int err;

	if (!kt->py)
		return 0;
	err = symbolizer__mappings_gen(sym, pid, gen, &maps, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		bool skip;
		struct kfile *f = map_file(kt, sym, pid, gen, &maps[i], &m, false, &skip);

		if (skip)
			continue;
		if (!f) {
			err = -ENOMEM;
			break;
		}
		if (!f->py_err) {
			python_entry(kt, pid, f, &m, NULL);
			break;
		}
		python_unknown(kt, pid, f, &m);
	}
	free(maps);
	return err;
}

void ktables__forget(struct ktables *kt, pid_t pid, uint64_t gen)
{
	__u32 key = (__u32)pid;

	/* only that image's: the PID may run a newer one already */
	if (!bpf_map_lookup_elem(kt->procs_fd, &key, kt->proc) && kt->proc->gen == gen)
		bpf_map_delete_elem(kt->procs_fd, &key);
}

void ktables__stats(const struct ktables *kt, struct ktables_stats *st)
{
	*st = kt->st;
}
