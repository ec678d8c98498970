// SPDX-License-Identifier: MIT
/* profiler: record -o x.scorch: counts with raw addresses, and what naming them later needs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "capture.h"
#include "common.h"
#include "perfmap.h"
#include "python.h"
#include "engine.h"
#include "capture-record.h"
#include "sampler.h"

#ifndef SCORCH_VERSION
#define SCORCH_VERSION "unknown"
#endif

_Static_assert(CAPTURE_MAX_DEPTH == SCORCH_MAX_STACK_DEPTH &&
		       CAPTURE_MAX_USER == SCORCH_STACK_WORDS,
	       "a capture holds any stack");
_Static_assert(sizeof(((struct capture_count *)0)->comm) == SCORCH_COMM_LEN, "comm size");

/* A set of (a, b) pairs with a value. */
struct pair {
	uint64_t a, b;
	size_t val;
};

struct pairset {
	struct pair *v;
	size_t nr, cap;
	struct hashmap index; /* (a, b) -> index in v[] + 1 */
};

struct pair_key {
	const struct pairset *s;
	uint64_t a, b;
};

static uint64_t pair_hash(uint64_t a, uint64_t b)
{
	uint64_t h =
		a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;

	return h ^ h >> 31;
}

static bool pair_eq(uint64_t val, const void *ctx)
{
	const struct pair_key *k = ctx;
	const struct pair *p = &k->s->v[val - 1];

	return p->a == k->a && p->b == k->b;
}

static const struct pair *pairset__find(const struct pairset *s, uint64_t a, uint64_t b)
{
	uint64_t val = hashmap__find(&s->index, pair_hash(a, b), pair_eq,
				     &(struct pair_key){.s = s, .a = a, .b = b});

	return val ? &s->v[val - 1] : NULL;
}

/* Adds (a, b) -> val. Returns 1 when added, 0 when present, -ENOMEM. */
static int pairset__add(struct pairset *s, uint64_t a, uint64_t b, size_t val)
{
	if (pairset__find(s, a, b))
		return 0;
	if (array__grow((void **)&s->v, &s->cap, s->nr + 1, sizeof(*s->v)))
		return -ENOMEM;
	if (hashmap__insert(&s->index, pair_hash(a, b), s->nr + 1))
		return -ENOMEM;
	s->v[s->nr++] = (struct pair){.a = a, .b = b, .val = val};
	return 1;
}

static void pairset__free(struct pairset *s)
{
	free(s->v);
	hashmap__free(&s->index);
}

struct cap_proc {
	pid_t pid;
	uint32_t uid; /* read while it lives: report checks a map written later against it */
	uint64_t gen;
	char comm[SCORCH_COMM_LEN + 1];
	bool written;
};

/* The owner of /proc/PID (its effective user), CAPTURE_UID_UNKNOWN when it is gone. */
static uint32_t proc_uid(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) ? CAPTURE_UID_UNKNOWN : (uint32_t)st.st_uid;
}

struct capture_rec {
	struct capture_rec_opts o;
	struct out_file out;
	struct capture_writer *w;
	struct symbolizer *sym;
	struct perfmaps *pm;
	struct pairset ksyms, jits, procs;
	struct cap_proc *procv;
	size_t nr_procs, procs_cap;
	struct frame fbuf[1];
	uint64_t counts, images, mappings, nr_ksyms, nr_jits, nr_pycodes;
	uint32_t interval;  /* --interval: the one the counts are taken in now */
	struct pycodes *py; /* named Python code objects, written at the close */
	bool closed;
	int err; /* the first write error: later writes are not attempted */
};

static int put(struct capture_rec *c, const struct capture_record *rec)
{
	if (!c->err)
		c->err = capture_writer__add(c->w, rec);
	return c->err;
}

int capture_rec__open(const char *path, const struct capture_rec_opts *o, struct capture_rec **out)
{
	struct capture_rec *c = calloc(1, sizeof(*c));
	struct utsname u = {};
	struct timespec ts = {};
	struct capture_record meta = {.type = CAPTURE_META};
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->o = *o;
	err = out__open(&c->out, path);
	if (err) {
		free(c);
		return err;
	}
	c->w = capture_writer__new(c->out.fp, 0);
	if (!c->w) {
		err = -errno;
		pr_err("cannot start the capture %s: %s\n", path, strerror(errno));
		goto cleanup;
	}
	uname(&u);
	clock_gettime(CLOCK_REALTIME, &ts);
	meta.meta = (struct capture_meta){
		.mode = o->mode == MODE_OFFCPU	? CAPTURE_MODE_OFFCPU
			: o->mode == MODE_WALL	? CAPTURE_MODE_WALL
			: o->mode == MODE_EVENT ? CAPTURE_MODE_EVENT
						: CAPTURE_MODE_CPU,
		.flags = (o->user_only ? CAPTURE_META_USER_ONLY : 0) |
			 (o->kernel_only ? CAPTURE_META_KERNEL_ONLY : 0) |
			 (o->unwind_dwarf ? CAPTURE_META_UNWIND_DWARF : 0),
		.freq = o->freq,
		.start_ns = o->start_ns > 0 ? (uint64_t)o->start_ns
					    : (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec,
		.max_depth = o->max_depth,
		.user_depth = o->user_depth,
		.host = u.nodename,
		.kernel = u.release,
		.version = SCORCH_VERSION,
		.clock = "monotonic",
		.interval_ns = (uint64_t)(o->interval * 1e9 + 0.5),
		.target = o->target,
	};
	if (o->mode == MODE_EVENT && o->event) {
		meta.meta.event = o->event->spec;
		meta.meta.event_weight = o->event->weight_arg;
		meta.meta.event_weight_unit = o->event->weight_unit;
		meta.meta.event_flags = o->event->latency ? CAPTURE_EVENT_LATENCY : 0;
		meta.meta.event_period = o->event->period;
	}
	err = put(c, &meta);
	if (err)
		err = out__fail(&c->out, err);
cleanup:
	if (err) {
		out__close(&c->out, false);
		capture_rec__free(c);
		return err;
	}
	*out = c;
	return 0;
}

void capture_rec__attach(struct capture_rec *c, struct symbolizer *sym, struct perfmaps *pm)
{
	if (!c)
		return;
	c->sym = sym;
	c->pm = pm;
}

void capture_rec__set_python(struct capture_rec *c, struct pycodes *py)
{
	if (c)
		c->py = py;
}

/* One named code object as a CAPTURE_PYCODE record. */
static int put_pycode(void *ctx, const struct pycode_info *info)
{
	struct capture_rec *c = ctx;
	struct capture_record rec = {.type = CAPTURE_PYCODE};

	rec.pycode = (struct capture_pycode){
		.pid = (uint32_t)info->pid,
		.guard = info->guard,
		.gen = info->gen,
		.addr = info->addr,
		.firstlineno = info->firstlineno,
		.pep657 = info->pep657,
		.linetable_len = info->linetable_len <= CAPTURE_MAX_LINETABLE ? info->linetable_len
									      : 0,
		.linetable = info->linetable,
		.qualname = info->qualname,
		.file = info->file,
	};
	c->nr_pycodes++;
	return put(c, &rec);
}

void capture_rec__free(struct capture_rec *c)
{
	if (!c)
		return;
	capture_writer__free(c->w);
	pairset__free(&c->ksyms);
	pairset__free(&c->jits);
	pairset__free(&c->procs);
	free(c->procv);
	free(c);
}

int capture_rec__jit_lookup(void *ctx, pid_t pid, uint64_t ip, const char **name, uint64_t *offset)
{
	struct capture_rec *c = ctx;
	int ret = perfmaps__lookup(c->pm, pid, ip, name, offset), added;
	struct capture_record rec = {.type = CAPTURE_JIT};

	if (!*name)
		return ret;
	added = pairset__add(&c->jits, (uint32_t)pid, ip, 0);
	if (added < 0) {
		c->err = c->err ?: added;
	} else if (added) {
		rec.jit = (struct capture_jit){
			.pid = pid,
			.flags = ret ? 0 : CAPTURE_JIT_FOUND,
			.addr = ip,
			.offset = ret ? 0 : *offset,
			.name = *name,
		};
		if (strlen(*name) > CAPTURE_MAX_STRING)
			rec.jit.name = "[jit name too long]";
		if (!put(c, &rec))
			c->nr_jits++;
	}
	return ret;
}

/* (pid, gen) has counts with user frames: its mappings go into the capture. */
static int proc_use(struct capture_rec *c, const struct count_key *key)
{
	struct cap_proc *p;
	int added;

	if (pairset__find(&c->procs, key->pid, key->gen))
		return 0;
	if (array__grow((void **)&c->procv, &c->procs_cap, c->nr_procs + 1, sizeof(*c->procv)))
		return -ENOMEM;
	added = pairset__add(&c->procs, key->pid, key->gen, c->nr_procs);
	if (added < 0)
		return added;
	p = &c->procv[c->nr_procs++];
	*p = (struct cap_proc){.pid = key->pid, .gen = key->gen, .uid = proc_uid(key->pid)};
	memcpy(p->comm, key->comm, SCORCH_COMM_LEN);
	return 0;
}

static int write_proc(struct capture_rec *c, struct cap_proc *p)
{
	struct symbolizer_mapping *maps = NULL;
	struct capture_record rec = {.type = CAPTURE_PROC};
	size_t nr = 0, i;
	int err;

	p->written = true;
	err = symbolizer__mappings_gen(c->sym, p->pid, p->gen, &maps, &nr);
	if (err)
		return err;
	rec.proc = (struct capture_proc){
		.pid = p->pid, .gen = p->gen, .comm = p->comm, .uid = p->uid};
	if (!nr)
		rec.proc.flags = CAPTURE_PROC_MISSING;
	err = put(c, &rec);
	for (i = 0; i < nr && !err; i++) {
		const struct symbolizer_mapping *m = &maps[i];

		rec = (struct capture_record){.type = CAPTURE_MAPPING};
		rec.map = (struct capture_mapping){
			.pid = p->pid,
			.gen = p->gen,
			.start = m->start,
			.end = m->end,
			.pgoff = m->pgoff,
			.build_id = m->build_id,
			.build_id_len = m->build_id_len,
			.path = m->path ? m->path : "",
		};
		if (m->kind == SYMBOLIZER_MAP_VDSO)
			rec.map.kind = CAPTURE_MAP_VDSO;
		else if (!m->path)
			rec.map.kind = CAPTURE_MAP_ANON;
		else if (m->path[0] == '/')
			rec.map.kind = CAPTURE_MAP_FILE;
		else
			rec.map.kind = CAPTURE_MAP_PSEUDO;
		if (strlen(rec.map.path) > CAPTURE_MAX_STRING ||
		    rec.map.build_id_len > CAPTURE_MAX_BUILD_ID) {
			pr_debug("capture: mapping %s of %d skipped (path or build-id too long)\n",
				 rec.map.path, p->pid);
			continue;
		}
		err = put(c, &rec);
		c->mappings++;
	}
	c->images++;
	free(maps);
	return err;
}

int capture_rec__add(struct capture_rec *c, bool offcpu, const struct count_key *key,
		     uint64_t value, const struct stack *user,
		     const struct stack *kernel, bool lost_proc)
{
	struct capture_record rec = {.type = CAPTURE_COUNT};
	struct capture_count *k = &rec.count;
	struct symbolizer_ksym ks;
	int err, i, nr_user, nr_kernel;

	*k = (struct capture_count){
		.pid = key->pid,
		.key_flags = key->flags,
		.gen = key->gen,
		.value = value,
		.cflags = (offcpu ? CAPTURE_COUNT_OFFCPU : 0) |
			  (lost_proc ? CAPTURE_COUNT_NOPROC : 0),
		.interval = c->interval,
	};
	memcpy(k->comm, key->comm, sizeof(k->comm));
	if (user) {
		k->cflags |= CAPTURE_COUNT_USER;
		k->nr_user = MIN(user->nr, CAPTURE_MAX_USER);
		k->user = (const uint64_t *)user->ips;
	}
	if (kernel) {
		k->cflags |= CAPTURE_COUNT_KERNEL;
		k->nr_kernel = MIN(kernel->nr, CAPTURE_MAX_DEPTH);
		k->kernel = (const uint64_t *)kernel->ips;
	}
	err = put(c, &rec);
	if (err)
		return err;
	c->counts++;
	/* @rec is reused below: the union's count is gone */
	nr_user = k->nr_user;
	nr_kernel = k->nr_kernel;
	k = NULL;
	for (i = 0; kernel && i < nr_kernel; i++) {
		err = symbolizer__kernel_sym(c->sym, kernel->ips[i], i > 0, &ks);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		err = pairset__add(&c->ksyms, ks.start, 0, 0);
		if (err <= 0) {
			if (err)
				return err;
			continue;
		}
		rec = (struct capture_record){.type = CAPTURE_KSYM};
		rec.ksym = (struct capture_ksym){
			.start = ks.start, .end = ks.end, .name = ks.name, .module = ks.module};
		err = put(c, &rec);
		if (err)
			return err;
		c->nr_ksyms++;
	}
	if (!user || lost_proc || (key->flags & KEY_USER_MISSED))
		return 0;
	err = proc_use(c, key);
	if (err || !c->o.only)
		return err;
	/*
	 * Nothing names the user frames now: ask the JIT maps (through the symbolizer, so
	 * that a mapping missing from the snapshot is looked for again as it would be) for
	 * the addresses in anonymous memory or in no mapping, while the maps are held.
	 */
	for (i = 0; i < nr_user; i++) {
		uint64_t ip = user->ips[i], addr = i > 0 && ip ? ip - 1 : ip;
		struct symbolizer_mapping m;

		err = symbolizer__mapping_gen(c->sym, key->pid, key->gen, addr, &m);
		if (err == -ENOMEM)
			return err;
		if (err == -ENOENT || (!err && m.kind == SYMBOLIZER_MAP_OTHER && !m.path)) {
			err = symbolizer__user_gen(c->sym, key->pid, key->gen, ip, i > 0, c->fbuf,
						   1);
			if (err == -ENOMEM)
				return err;
		}
	}
	return c->err;
}

int capture_rec__next_interval(struct capture_rec *c)
{
	if (c->interval + 1 >= CAPTURE_MAX_INTERVALS) {
		pr_err("capture: more than %d intervals: a capture holds no more\n",
		       CAPTURE_MAX_INTERVALS);
		pr_hint("use a longer --interval\n");
		return -ERANGE;
	}
	c->interval++;
	return 0;
}

int capture_rec__release(struct capture_rec *c, pid_t pid, uint64_t gen)
{
	const struct pair *p = pairset__find(&c->procs, pid, gen);
	int err;

	/* its Python code objects: written now, and forgotten */
	err = pycodes__release(c->py, pid, gen, put_pycode, c);
	if (err || !p || c->procv[p->val].written)
		return err;
	return write_proc(c, &c->procv[p->val]);
}

int capture_rec__close(struct capture_rec *c, const struct capture_stats *st, bool commit)
{
	struct capture_record rec = {.type = CAPTURE_STATS};
	size_t i;
	int err = 0;

	if (c->closed)
		return 0;
	c->closed = true;
	if (!commit) {
		out__close(&c->out, false);
		return 0;
	}
	for (i = 0; i < c->nr_procs && !err; i++)
		if (!c->procv[i].written)
			err = write_proc(c, &c->procv[i]);
	/* the Python code objects named while the processes lived */
	if (!err)
		err = pycodes__foreach(c->py, put_pycode, c);
	if (!err && st) {
		rec.stats = *st;
		rec.stats.nr_intervals = c->o.interval > 0 ? c->interval + 1 : 0;
		err = put(c, &rec);
	}
	if (!err)
		err = c->err ?: capture_writer__finish(c->w);
	if (err)
		err = out__fail(&c->out, err);
	return out__close(&c->out, !err) ?: err;
}

void capture_rec__summary(const struct capture_rec *c)
{
	uint64_t file, raw;

	capture_writer__sizes(c->w, &file, &raw);
	pr_warn("capture: %" PRIu64 " counts, %" PRIu64 " process images (%" PRIu64
		" mappings), %" PRIu64 " kernel symbols, %" PRIu64 " JIT names; %.1f KiB "
		"(%.1f KiB uncompressed)\n",
		c->counts, c->images, c->mappings, c->nr_ksyms, c->nr_jits, file / 1024.0,
		raw / 1024.0);
}

uint64_t capture_rec__counts(const struct capture_rec *c)
{
	return c->counts;
}
