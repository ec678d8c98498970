// SPDX-License-Identifier: MIT
/* engine: a capture (.scorch) replayed: its frames named as when recorded, to the outputs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "perfmap.h"
#include "common.h"
#include "flamegraph.h"
#include "engine.h"
#include "event.h"
#include "fold.h"
#include "output.h"
#include "summary.h"
#include "python.h"
#include "symbolize.h"
#include "sampler.h"

#define CAPTURE_MAX_FILE (4ull << 30) /* compressed bytes read */

struct rep_map {
	uint32_t pid, kind;
	uint64_t gen, start, end, pgoff;
	const char *path; /* interned */
	uint8_t build_id[CAPTURE_MAX_BUILD_ID];
	size_t build_id_len;
	size_t idx; /* input order: a stable sort */
};

struct rep_jit {
	uint32_t pid, flags;
	uint64_t addr, offset;
	const char *name; /* interned */
};

/* A process of the capture: its user, and the perf map it left (read on first need). */
struct rep_proc {
	uint32_t pid, uid;
	struct perfmap_file *map;
	bool tried;
};

struct report {
	struct report_opts opts;
	struct pycodes *py; /* the Python code objects named while recording, or NULL */
	bool partial;	    /* more than 5 % of the samples were lost when recording */
	struct strset *strs;
	struct capture_meta meta;
	struct capture_stats stats;
	bool have_stats;
	struct rep_map *maps;
	size_t nr_maps, maps_cap;
	bool folding; /* the second pass: counts are folded as they are read, nothing else kept */
	struct stack *user, *kernel;
	struct symbolizer_ksym *ksyms;
	size_t nr_ksyms, ksyms_cap;
	struct rep_jit *jits;
	size_t nr_jits, jits_cap;
	/* the processes' users, and the perf maps they wrote after the recording */
	struct rep_proc *procs;
	size_t procs_cap;
	uint64_t late_maps, late_names; /* maps read at report time; JIT frames they named */
	uint64_t nr_procs, skipped;
	struct symbolizer *sym;
	struct fold fold;
	struct event_spec event; /* an event capture's event (record --event) */
	/*
	 * A capture recorded with --interval, to an HTML page: the page's graph, and in
	 * fold.slice the counts of interval @slice_interval not yet in it. Its counts may
	 * come in any order of intervals: a slice goes to the page whenever it changes.
	 */
	struct flamegraph *page;
	uint32_t slice_interval;
	char desc[512]; /* what the recording was (summary__describe()): the graphs hold it */
};

/* Reads @path whole (a user-chosen file: symlinks followed), at most CAPTURE_MAX_FILE. */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t n = 0;
	ssize_t r;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot open %s: %s\n", path, strerror(-err));
		if (!log__hint_open(path, err, false))
			pr_hint("give a capture written by 'scorch record -o FILE.scorch'\n");
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -EINVAL;
		pr_err("%s: not a regular file\n", path);
		pr_hint("give a capture written by 'scorch record -o FILE.scorch'\n");
		goto cleanup;
	}
	if ((uint64_t)st.st_size > CAPTURE_MAX_FILE) {
		err = -EFBIG;
		pr_err("%s: %" PRIu64 " bytes, more than a capture may hold (%llu)\n", path,
		       (uint64_t)st.st_size, CAPTURE_MAX_FILE);
		goto cleanup;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (n < (size_t)st.st_size) {
		r = read(fd, buf + n, st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			pr_err("cannot read %s: %s\n", path, strerror(errno));
			goto cleanup;
		}
		if (!r)
			break; /* shrank meanwhile: the reader will say it is truncated */
		n += r;
	}
	*out = buf;
	*len = n;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

static const char *intern(struct report *r, const char *s, int *err)
{
	const char *p = strset__intern(r->strs, s);

	if (!p)
		*err = -ENOMEM;
	return p;
}

/* The counts of one interval folded so far into the page, under its interval. */
static int flush_slice(struct report *r)
{
	int err;

	if (!folded__nr_stacks(r->fold.slice))
		return 0;
	err = flamegraph__set_interval(r->page, r->slice_interval);
	if (!err)
		err = flamegraph__add_folded(r->page, r->fold.slice);
	folded__free(r->fold.slice);
	r->fold.slice = folded__new();
	if (!r->fold.slice)
		return -ENOMEM;
	folded__set_max_stacks(r->fold.slice, FOLD_MAX_STACKS);
	return err;
}

/* One count folded as it is read: counts are never all held. Returns 0 or -errno. */
static int fold_count(struct report *r, const struct capture_count *c)
{
	struct count_key key = {.pid = c->pid, .flags = c->key_flags, .gen = c->gen};
	int err;

	if (r->page && c->interval != r->slice_interval) {
		err = flush_slice(r);
		if (err)
			return err;
		r->slice_interval = c->interval;
	}

	memcpy(key.comm, c->comm, sizeof(key.comm));
	/* empty arrays may come as NULL: memcpy must not see them */
	r->user->nr = c->nr_user;
	if (c->nr_user)
		memcpy(r->user->ips, c->user, c->nr_user * sizeof(*c->user));
	r->kernel->nr = c->nr_kernel;
	if (c->nr_kernel)
		memcpy(r->kernel->ips, c->kernel, c->nr_kernel * sizeof(*c->kernel));
	return fold__add(&r->fold, c->cflags & CAPTURE_COUNT_OFFCPU, &key, c->value,
			 c->cflags & CAPTURE_COUNT_USER ? r->user : NULL,
			 c->cflags & CAPTURE_COUNT_KERNEL ? r->kernel : NULL,
			 c->cflags & CAPTURE_COUNT_NOPROC);
}

/*
 * One record into the report's tables (first pass: counts are passed over) or, in the
 * second pass, one count folded. Returns 0 or -errno.
 */
static int take(struct report *r, const struct capture_record *rec)
{
	int err = 0;

	if (r->folding)
		return rec->type == CAPTURE_COUNT ? fold_count(r, &rec->count) : 0;
	switch (rec->type) {
	case CAPTURE_META:
		r->meta = rec->meta;
		/* strings are borrowed until the next record */
		r->meta.host = intern(r, rec->meta.host, &err);
		r->meta.kernel = intern(r, rec->meta.kernel, &err);
		r->meta.version = intern(r, rec->meta.version, &err);
		r->meta.clock = intern(r, rec->meta.clock, &err);
		r->meta.event = intern(r, rec->meta.event, &err);
		r->meta.event_weight_unit = intern(r, rec->meta.event_weight_unit, &err);
		r->meta.target = intern(r, rec->meta.target, &err);
		break;
	case CAPTURE_PROC:
		if (array__grow((void **)&r->procs, &r->procs_cap, r->nr_procs + 1,
				sizeof(*r->procs)))
			return -ENOMEM;
		r->procs[r->nr_procs++] =
			(struct rep_proc){.pid = rec->proc.pid, .uid = rec->proc.uid};
		break;
	case CAPTURE_MAPPING: {
		struct rep_map *m;

		if (array__grow((void **)&r->maps, &r->maps_cap, r->nr_maps + 1, sizeof(*r->maps)))
			return -ENOMEM;
		m = &r->maps[r->nr_maps];
		*m = (struct rep_map){
			.pid = rec->map.pid,
			.kind = rec->map.kind,
			.gen = rec->map.gen,
			.start = rec->map.start,
			.end = rec->map.end,
			.pgoff = rec->map.pgoff,
			.path = intern(r, rec->map.path, &err),
			.build_id_len = rec->map.build_id_len,
			.idx = r->nr_maps,
		};
		if (rec->map.build_id_len) /* build_id may be NULL then */
			memcpy(m->build_id, rec->map.build_id, rec->map.build_id_len);
		r->nr_maps++;
		break;
	}
	case CAPTURE_COUNT:
		break;
	case CAPTURE_KSYM:
		if (array__grow((void **)&r->ksyms, &r->ksyms_cap, r->nr_ksyms + 1,
				sizeof(*r->ksyms)))
			return -ENOMEM;
		r->ksyms[r->nr_ksyms++] = (struct symbolizer_ksym){
			.start = rec->ksym.start,
			.end = rec->ksym.end,
			.name = intern(r, rec->ksym.name, &err),
			.module = intern(r, rec->ksym.module, &err),
		};
		break;
	case CAPTURE_JIT:
		if (array__grow((void **)&r->jits, &r->jits_cap, r->nr_jits + 1, sizeof(*r->jits)))
			return -ENOMEM;
		r->jits[r->nr_jits++] = (struct rep_jit){
			.pid = rec->jit.pid,
			.flags = rec->jit.flags,
			.addr = rec->jit.addr,
			.offset = rec->jit.offset,
			.name = intern(r, rec->jit.name, &err),
		};
		break;
	case CAPTURE_STATS:
		r->stats = rec->stats;
		r->have_stats = true;
		break;
	case CAPTURE_PYCODE: {
		struct pycode_info info = {
			.pid = (pid_t)rec->pycode.pid,
			.guard = rec->pycode.guard,
			.gen = rec->pycode.gen,
			.addr = rec->pycode.addr,
			.qualname = rec->pycode.qualname,
			.file = rec->pycode.file,
			.firstlineno = rec->pycode.firstlineno,
			.pep657 = rec->pycode.pep657,
			.linetable_len = rec->pycode.linetable_len,
			.linetable = rec->pycode.linetable,
		};

		if (!r->py && !(r->py = pycodes__new(r->opts.names.lines)))
			return -ENOMEM;
		return pycodes__import(r->py, &info);
	}
	case CAPTURE_END:
		break;
	}
	return err;
}

static int load(struct report *r, const uint8_t *data, size_t len)
{
	const char *name = r->opts.input;
	struct capture_reader *rd = capture_reader__new(data, len);
	struct capture_record rec;
	unsigned major, minor;
	int ret;

	if (!rd) {
		ret = -errno;
		if (ret == -EPROTONOSUPPORT) {
			pr_err("%s: capture format version %u.x; this scorch reads %u.x\n", name,
			       data[8] | data[9] << 8, CAPTURE_VERSION_MAJOR);
			pr_hint("report it with the scorch version that recorded it\n");
		} else {
			pr_err("%s: %s\n", name, capture_reader__open_error(-ret));
			pr_hint("give a file written by 'scorch record -o FILE.scorch'\n");
		}
		return ret;
	}
	while ((ret = capture_reader__next(rd, &rec)) == 1) {
		ret = take(r, &rec);
		if (ret)
			break;
	}
	if (ret < 0 && ret != -ENOMEM) {
		pr_err("%s: %s\n", name, capture_reader__error(rd));
		pr_hint("the capture is damaged or incomplete (was the recording interrupted, or "
			"the copy cut short?)\n");
	}
	capture_reader__version(rd, &major, &minor);
	r->skipped = capture_reader__skipped(rd);
	if (r->skipped && !r->folding)
		pr_warn("%s: %" PRIu64 " records of a newer format (%u.%u) skipped\n", name,
			r->skipped, major, minor);
	capture_reader__free(rd);
	return ret < 0 ? ret : 0;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct rep_jit *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* The symbolizer's JIT hook: the answers record got, by (pid, address). */
static int proc_cmp(const void *a, const void *b)
{
	const struct rep_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * JIT code the recording could not name: the perf map its process wrote since (a JVM
 * with -XX:+DumpPerfMapAtExit writes it as it exits), if it is still in /tmp, owned by
 * the process's user (recorded in the capture) or root, and written after the recording
 * began. 0 and the name, or -ENOENT.
 */
static int late_map_lookup(struct report *r, pid_t pid, uint64_t ip, const char **name,
			   uint64_t *offset)
{
	struct rep_proc key = {.pid = (uint32_t)pid}, *p;
	char path[64];
	int err;

	p = r->nr_procs ? bsearch(&key, r->procs, r->nr_procs, sizeof(*p), proc_cmp) : NULL;
	if (!p || p->uid == CAPTURE_UID_UNKNOWN)
		return -ENOENT;
	if (!p->tried) {
		p->tried = true;
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
		err = perfmap_file__open(path, p->uid, r->meta.start_ns / 1000000000ull, &p->map);
		if (!err)
			r->late_maps++;
		else if (err != -ENOENT)
			pr_debug("report: %s not read: %s\n", path, strerror(-err));
	}
	if (!p->map || perfmap_file__lookup(p->map, ip, name, offset))
		return -ENOENT;
	r->late_names++;
	return 0;
}

static int report_jit(void *ctx, pid_t pid, uint64_t ip, const char **name, uint64_t *offset)
{
	struct report *r = ctx;
	struct rep_jit key = {.pid = pid, .addr = ip};
	const struct rep_jit *j =
		r->nr_jits ? bsearch(&key, r->jits, r->nr_jits, sizeof(*r->jits), jit_cmp) : NULL;

	*name = NULL;
	*offset = 0;
	if ((!j || !(j->flags & CAPTURE_JIT_FOUND)) && !late_map_lookup(r, pid, ip, name, offset))
		return 0;
	if (!j)
		return -ENOENT;
	*name = j->name;
	if (!(j->flags & CAPTURE_JIT_FOUND))
		return -ENOENT; /* a fallback label */
	*offset = j->offset;
	return 0;
}

static int map_cmp(const void *a, const void *b)
{
	const struct rep_map *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return 0;
}

/* Every process image of the capture, imported into the symbolizer. */
static int import_images(struct report *r)
{
	struct symbolizer_mapping *v = NULL;
	size_t i, j, k;
	int err = 0;

	qsort(r->maps, r->nr_maps, sizeof(*r->maps), map_cmp);
	v = calloc(r->nr_maps + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < r->nr_maps && !err; i = j) {
		for (j = i, k = 0; j < r->nr_maps && r->maps[j].pid == r->maps[i].pid &&
				   r->maps[j].gen == r->maps[i].gen;
		     j++, k++) {
			const struct rep_map *m = &r->maps[j];

			v[k] = (struct symbolizer_mapping){
				.kind = m->kind == CAPTURE_MAP_VDSO   ? SYMBOLIZER_MAP_VDSO
					: m->kind == CAPTURE_MAP_FILE ? SYMBOLIZER_MAP_FILE
								      : SYMBOLIZER_MAP_OTHER,
				.start = m->start,
				.end = m->end,
				.pgoff = m->pgoff,
				.path = m->kind == CAPTURE_MAP_ANON ? NULL : m->path,
				.build_id = m->build_id_len ? m->build_id : NULL,
				.build_id_len = m->build_id_len,
			};
		}
		err = symbolizer__import_gen(r->sym, r->maps[i].pid, r->maps[i].gen, v, k);
	}
	free(v);
	return err;
}

/*
 * A capture recorded with --interval and an HTML output: the page is built here, each
 * interval its slice of the timeline, as record builds it. 0 or -ENOMEM.
 */
static int open_page(struct report *r)
{
	if (!r->meta.interval_ns || !outputs__count(r->opts.outs, "html"))
		return 0;
	r->page = flamegraph__new(&r->opts.fg);
	r->fold.slice = folded__new();
	if (!r->page || !r->fold.slice)
		return -ENOMEM;
	folded__set_max_stacks(r->fold.slice, FOLD_MAX_STACKS);
	return 0;
}

/* The last slice into the page, and its timeline as long as the recording's. */
static int close_page(struct report *r)
{
	int err = flush_slice(r);

	if (!err && r->stats.nr_intervals)
		err = flamegraph__set_interval(r->page, r->stats.nr_intervals - 1);
	return err;
}

/* The capture's BPF counters as this scorch numbers them: those it does not know are
 * dropped, missing ones stay 0. */
static void counters(const struct report *r, uint64_t st[SCORCH_NR_STATS])
{
	memset(st, 0, SCORCH_NR_STATS * sizeof(*st));
	memcpy(st, r->stats.bpf, MIN(r->stats.nr_bpf, (uint32_t)SCORCH_NR_STATS) * sizeof(*st));
}

/* What the recording was, as record described it, into r->desc. */
static void describe(struct report *r)
{
	uint64_t st[SCORCH_NR_STATS];
	struct summary sm = {
		.fold = &r->fold,
		.st = r->have_stats ? st : NULL,
		.mode = r->fold.mode,
		.freq = r->fold.freq,
		.elapsed = r->stats.elapsed_ns / 1e9,
		.drain_lost = r->stats.drain_lost,
	};
	struct recording_desc rd = {
		.what = r->fold.mode == MODE_EVENT ? event__describe(&r->event)
						   : summary__mode_name(r->fold.mode),
		.target = r->meta.target,
		.start_ns = (int64_t)r->meta.start_ns,
		.host = r->meta.host,
	};

	counters(r, st);
	summary__describe(&sm, &rd, r->desc, sizeof(r->desc));
}

static double summary(struct report *r)
{
	struct symbolizer_stats ss;
	uint64_t st[SCORCH_NR_STATS] = {};
	struct summary sm = {
		.steal_pct = -1, /* not in captures */
		.fold = &r->fold,
		.st = st,
		.mode = r->fold.mode,
		.freq = r->fold.freq,
		.event = r->event.spec,
		.event_period = r->event.period,
		.nr_cpus = r->stats.nr_cpus,
		.elapsed = r->stats.elapsed_ns / 1e9,
		.quiet = r->opts.quiet,
		.verbose = log__enabled(LOG_DEBUG),
		.drain_lost = r->stats.drain_lost,
		.ring_bytes = r->stats.ring_bytes,
		.max_stacks = r->stats.max_stacks,
		.procs_seen = r->stats.procs_seen,
		.procs_released = r->stats.procs_released,
		.procs_held_max = r->stats.procs_held_max,
		.procs_missing = r->stats.procs_missing,
		.ss = &ss,
	};
	char where[1024];
	double lost_pct;

	counters(r, st);
	symbolizer__stats(r->sym, &ss);
	lost_pct = summary__counts(&sm);
	summary__details(&sm);
	if (r->opts.quiet)
		return lost_pct;
	if (sm.verbose) {
		pr_warn("report: %s recorded on %s (Linux %s, scorch %s); %" PRIu64
			" process images, %zu mappings, %zu kernel symbols, %zu JIT names\n",
			r->opts.input, r->meta.host, r->meta.kernel, r->meta.version, r->nr_procs,
			r->nr_maps, r->nr_ksyms, r->nr_jits);
		pr_warn("report: files: %" PRIu64 " read, %" PRIu64 " not found, %" PRIu64
			" refused (another build-id)\n",
			ss.files_cached, ss.files_not_found, ss.files_mismatched);
		if (r->late_maps)
			pr_warn("report: %" PRIu64 " JIT frames named from %" PRIu64
				" perf maps written after the recording\n",
				r->late_names, r->late_maps);
	} else if (ss.files_not_found || ss.files_mismatched) {
		pr_warn("report: files: %" PRIu64 " not found, %" PRIu64
			" refused (another build-id)\n",
			ss.files_not_found, ss.files_mismatched);
	}
	if (ss.files_not_found || ss.files_mismatched)
		pr_hint("their frames are [file] or [unknown]: give the binaries that ran with "
			"--symfs DIR (a tree like /), or install their debug files\n");
	outputs__describe(r->opts.outs, where, sizeof(where));
	pr_warn("wrote %s\n", where);
	return lost_pct;
}

static int report_run(struct report *r)
{
	struct report_opts *o = &r->opts;
	struct symbolizer_opts yopts = o->names;
	uint8_t *data = NULL;
	size_t len = 0;
	int err;

	r->strs = strset__new();
	if (!r->strs)
		return -ENOMEM;
	err = read_file(o->input, &data, &len);
	if (err)
		goto cleanup;
	/*
	 * Two passes over the compressed capture: the first keeps the tables the names need
	 * (mappings, kernel and JIT symbols), the second folds each count as it is read, so
	 * memory is the capture file and the folded result, not every stack of the capture.
	 */
	err = load(r, data, len);
	if (err)
		goto cleanup;
	if (r->nr_jits) /* qsort must not see NULL */
		qsort(r->jits, r->nr_jits, sizeof(*r->jits), jit_cmp);
	if (r->nr_procs)
		qsort(r->procs, r->nr_procs, sizeof(*r->procs), proc_cmp);
	yopts.jit_lookup = report_jit;
	yopts.jit_ctx = r;
	yopts.offline = true;
	yopts.no_kernel = r->meta.flags & CAPTURE_META_USER_ONLY;
	r->sym = symbolizer__new(&yopts);
	if (!r->sym) {
		err = -errno;
		goto cleanup;
	}
	err = symbolizer__set_kallsyms(r->sym, r->ksyms, r->nr_ksyms);
	if (!err)
		err = import_images(r);
	if (err)
		goto cleanup;
	if (r->meta.mode == CAPTURE_MODE_EVENT) {
		/* its unit and the SVG's subtitle; nothing is resolved or attached */
		err = event__parse(r->meta.event, &r->event);
		if (err)
			goto cleanup;
		r->event.weight_arg = r->meta.event_weight;
		snprintf(r->event.weight_unit, sizeof(r->event.weight_unit), "%s",
			 r->meta.event_weight_unit ? r->meta.event_weight_unit : "");
		r->event.latency = r->meta.event_flags & CAPTURE_EVENT_LATENCY;
		r->event.period = r->meta.event_period ? r->meta.event_period : 1;
	}
	r->fold = (struct fold){
		.sym = r->sym,
		.mode = r->meta.mode == CAPTURE_MODE_OFFCPU  ? MODE_OFFCPU
			: r->meta.mode == CAPTURE_MODE_WALL  ? MODE_WALL
			: r->meta.mode == CAPTURE_MODE_EVENT ? MODE_EVENT
							     : MODE_CPU,
		.ns_values = r->event.latency,
		.freq = (long)r->meta.freq,
		.fp = !(r->meta.flags & CAPTURE_META_UNWIND_DWARF),
		.max_depth = r->meta.max_depth,
		.user_depth = r->meta.user_depth,
		.outs = o->outs,
		.py = r->py,
	};
	{
		struct outputs_opts oopts = {
			.sz = sizeof(oopts),
			.kind = r->fold.mode == MODE_CPU      ? OUTPUTS_CPU
				: r->fold.mode == MODE_OFFCPU ? OUTPUTS_OFFCPU
				: r->fold.mode == MODE_WALL   ? OUTPUTS_WALL
							      : OUTPUTS_EVENT,
			.freq = r->fold.freq,
			.seconds = r->meta.interval_ns / 1e9, /* the page's timeline */
			.lines = o->names.lines,
			.inline_frames = !o->names.no_inline,
		};
		struct output_data d = {.fg = &o->fg};
		const char *countname;

		if (r->fold.mode == MODE_EVENT) {
			event__unit(&r->event, &oopts.value_type, &oopts.value_unit, &countname);
			oopts.period = r->event.period;
		}
		/* the recording's description, once its counters are read (load()) */
		if (o->graph && !o->fg.subtitle)
			o->fg.subtitle = r->desc;
		if (o->graph && r->fold.mode == MODE_EVENT)
			event__svg_defaults(&r->event, &o->fg);
		else if (o->graph)
			fold__svg_defaults(r->fold.mode, &o->fg);

		/* opened first: the profile side of the outputs sees every stack */
		err = outputs__open(o->outs, &oopts);
		if (!err)
			err = fold__init(&r->fold);
		if (!err)
			err = open_page(r);
		r->user = malloc(sizeof(*r->user));
		r->kernel = malloc(sizeof(*r->kernel));
		if (!err && (!r->user || !r->kernel))
			err = -ENOMEM;
		r->folding = true;
		if (!err)
			err = load(r, data, len);
		if (!err && r->page)
			err = close_page(r);
		if (err)
			goto cleanup;
		d.folded = r->fold.folded;
		d.page = r->page;
		/* pprof's time: the recording's, not this report's */
		d.time_ns = (int64_t)MIN(r->meta.start_ns, (uint64_t)INT64_MAX);
		d.duration_ns = (int64_t)MIN(r->stats.elapsed_ns, (uint64_t)INT64_MAX);
		describe(r);
		d.desc = r->desc;
		err = outputs__write(o->outs, &d);
		if (err)
			goto cleanup;
	}
	r->partial = summary(r) > 5.0; /* as record said */
cleanup:
	if (err < 0 && err == -ENOMEM)
		pr_err("out of memory\n");
	free(data);
	return err;
}

int report__run(struct report_opts *o, bool *partial)
{
	struct report *r;
	int err;

	*partial = false;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->opts = *o;
	err = report_run(r);
	*partial = r->partial;
	fold__release(&r->fold);
	folded__free(r->fold.slice);
	flamegraph__free(r->page);
	pycodes__free(r->py);
	symbolizer__free(r->sym);
	event__free(&r->event);
	strset__free(r->strs);
	free(r->maps);
	free(r->user);
	free(r->kernel);
	free(r->ksyms);
	free(r->jits);
	for (size_t i = 0; i < r->nr_procs; i++)
		perfmap_file__free(r->procs[i].map);
	free(r->procs);
	free(r);
	return err;
}
