// SPDX-License-Identifier: MIT
/* export: the profile builder; mappings, functions, locations and samples interned by value. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export-private.h"

/* What an index's equality test compares: an entry of @p with @key. */
struct key_ctx {
	const struct profile *p;
	const void *key;
};

/* Ids and offsets are 32-bit: 0 when @more entries fit after @nr, else -ENOMEM. */
static int id_room(size_t nr, size_t more)
{
	return nr > UINT32_MAX - 1 || more > UINT32_MAX - 1 - nr ? -ENOMEM : 0;
}

/* ---- strings ---- */

/* String ids are 0-based in pprof: the index stores index + 1. */
int profile_str_id(struct profile *p, const char *s, size_t len, uint32_t *id)
{
	const char *in;
	uint64_t h, found;
	int err;

	*id = 0;
	if (!s || !len)
		return 0;
	in = strset__intern_len(p->set, s, len);
	if (!in)
		return -ENOMEM;
	h = hash__u64((uintptr_t)in);
	found = hashmap__find(&p->str_idx, h, NULL, NULL);
	if (found) {
		*id = (uint32_t)found - 1;
		return 0;
	}
	err = id_room(p->nr_strs, 1);
	if (!err)
		err = array__grow((void **)&p->strs, &p->cap_strs, p->nr_strs + 1,
				  sizeof(*p->strs));
	if (!err)
		err = hashmap__insert(&p->str_idx, h, p->nr_strs + 1);
	if (err)
		return err;
	p->strs[p->nr_strs] = in;
	*id = p->nr_strs++;
	return 0;
}

static int str_id(struct profile *p, const char *s, uint32_t *id)
{
	return profile_str_id(p, s, s ? strlen(s) : 0, id);
}

/* ---- life cycle ---- */

struct profile *profile__new(const struct profile_opts *opts)
{
	struct profile *p;
	const char *src[2 * PROFILE_MAX_VALUES + 2];
	size_t i;

	if (!opts || opts->sz < sizeof(*opts) || !opts->nr_values ||
	    opts->nr_values > PROFILE_MAX_VALUES || opts->weight_value >= opts->nr_values) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < opts->nr_values; i++) {
		if (!opts->values[i].type || !opts->values[i].unit) {
			errno = EINVAL;
			return NULL;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->opts = *opts;
	p->set = strset__new();
	if (!p->set || array__grow((void **)&p->strs, &p->cap_strs, 1, sizeof(*p->strs)))
		goto fail;
	p->strs[p->nr_strs++] = "";
	/* the option strings are the caller's: keep copies */
	for (i = 0; i < PROFILE_MAX_VALUES; i++) {
		src[2 * i] = i < opts->nr_values ? opts->values[i].type : NULL;
		src[2 * i + 1] = i < opts->nr_values ? opts->values[i].unit : NULL;
	}
	src[2 * PROFILE_MAX_VALUES] = opts->period_type.type;
	src[2 * PROFILE_MAX_VALUES + 1] = opts->period_type.unit;
	for (i = 0; i < ARRAY_SIZE(src); i++) {
		if (src[i] && !(p->value_strs[i] = strdup(src[i])))
			goto fail;
	}
	for (i = 0; i < PROFILE_MAX_VALUES; i++) {
		p->opts.values[i].type = p->value_strs[2 * i];
		p->opts.values[i].unit = p->value_strs[2 * i + 1];
	}
	p->opts.period_type.type = p->value_strs[2 * PROFILE_MAX_VALUES];
	p->opts.period_type.unit = p->value_strs[2 * PROFILE_MAX_VALUES + 1];
	for (i = 0; i < opts->nr_values; i++) {
		if (str_id(p, p->opts.values[i].type, &p->vt_type[i]) ||
		    str_id(p, p->opts.values[i].unit, &p->vt_unit[i]))
			goto fail;
	}
	if (str_id(p, p->opts.period_type.type, &p->period_type) ||
	    str_id(p, p->opts.period_type.unit, &p->period_unit) || str_id(p, "pid", &p->key_pid) ||
	    str_id(p, "comm", &p->key_comm))
		goto fail;
	return p;
fail:
	profile__free(p);
	errno = ENOMEM;
	return NULL;
}

void profile__free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < ARRAY_SIZE(p->value_strs); i++)
		free(p->value_strs[i]);
	strset__free(p->set);
	free(p->strs);
	hashmap__free(&p->str_idx);
	free(p->maps);
	hashmap__free(&p->map_idx);
	free(p->funcs);
	hashmap__free(&p->func_idx);
	free(p->lines);
	free(p->locs);
	hashmap__free(&p->loc_idx);
	free(p->stacks);
	free(p->samples);
	hashmap__free(&p->sample_idx);
	free(p->comments);
	free(p);
}

/* ---- mappings ---- */

static bool map_eq(uint64_t val, const void *ctx)
{
	const struct key_ctx *c = ctx;

	return !memcmp(&c->p->maps[val - 1], c->key, sizeof(struct pmapping));
}

int profile__add_mapping(struct profile *p, const struct profile_mapping *m, uint32_t *id)
{
	static const char hex[] = "0123456789abcdef";
	struct pmapping k = {.start = m->start, .limit = m->limit, .offset = m->offset};
	char bid[2 * 64];
	size_t i, n = MIN(m->build_id_len, sizeof(bid) / 2);
	uint64_t h;
	int err;

	*id = 0;
	if (m->build_id && n) {
		for (i = 0; i < n; i++) {
			bid[2 * i] = hex[m->build_id[i] >> 4];
			bid[2 * i + 1] = hex[m->build_id[i] & 15];
		}
		err = profile_str_id(p, bid, 2 * n, &k.build_id);
		if (err)
			return err;
	}
	err = str_id(p, m->file, &k.file);
	if (err)
		return err;
	h = hash__bytes(&k, sizeof(k), 0x3a9);
	*id = (uint32_t)hashmap__find(&p->map_idx, h, map_eq, &(struct key_ctx){p, &k});
	if (*id)
		return 0;
	err = id_room(p->nr_maps, 1);
	if (!err)
		err = array__grow((void **)&p->maps, &p->cap_maps, p->nr_maps + 1,
				  sizeof(*p->maps));
	if (!err)
		err = hashmap__insert(&p->map_idx, h, p->nr_maps + 1);
	if (err)
		return err;
	p->maps[p->nr_maps] = k;
	*id = ++p->nr_maps;
	return 0;
}

/* ---- functions ---- */

static bool func_eq(uint64_t val, const void *ctx)
{
	const struct key_ctx *c = ctx;

	return !memcmp(&c->p->funcs[val - 1], c->key, sizeof(struct pfunction));
}

static int function_id(struct profile *p, const struct profile_line *l, uint32_t *id)
{
	struct pfunction k;
	uint64_t h;
	int err;

	err = str_id(p, l->function, &k.name);
	if (!err)
		err = str_id(p, l->file, &k.file);
	if (err)
		return err;
	k.system_name = l->verbatim ? 0 : k.name;
	h = hash__bytes(&k, sizeof(k), 0xf17);
	*id = (uint32_t)hashmap__find(&p->func_idx, h, func_eq, &(struct key_ctx){p, &k});
	if (*id)
		return 0;
	err = id_room(p->nr_funcs, 1);
	if (!err)
		err = array__grow((void **)&p->funcs, &p->cap_funcs, p->nr_funcs + 1,
				  sizeof(*p->funcs));
	if (!err)
		err = hashmap__insert(&p->func_idx, h, p->nr_funcs + 1);
	if (err)
		return err;
	p->funcs[p->nr_funcs] = k;
	*id = ++p->nr_funcs;
	return 0;
}

/* ---- locations ---- */

struct loc_key {
	uint32_t mapping;
	uint64_t address;
	const struct pline *lines;
	size_t nr;
};

static bool loc_eq(uint64_t val, const void *ctx)
{
	const struct key_ctx *c = ctx;
	const struct profile *p = c->p;
	const struct plocation *l = &p->locs[val - 1];
	const struct loc_key *k = c->key;
	size_t i;

	if (l->mapping != k->mapping || l->address != k->address || l->nr_lines != k->nr)
		return false;
	for (i = 0; i < k->nr; i++) {
		const struct pline *a = &p->lines[l->first_line + i];

		if (a->function != k->lines[i].function || a->line != k->lines[i].line)
			return false;
	}
	return true;
}

int profile__add_location(struct profile *p, uint32_t mapping, uint64_t address,
			  const struct profile_line *lines, size_t nr, uint32_t *id)
{
	struct pline pl[PROFILE_MAX_LINES];
	struct loc_key k = {.mapping = mapping, .address = address, .lines = pl, .nr = nr};
	uint64_t h;
	size_t i;
	int err;

	*id = 0;
	if (!nr || nr > PROFILE_MAX_LINES || mapping > p->nr_maps)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!lines[i].function || !lines[i].function[0])
			return -EINVAL;
		memset(&pl[i], 0, sizeof(pl[i]));
		err = function_id(p, &lines[i], &pl[i].function);
		if (err)
			return err;
		pl[i].line = lines[i].line;
	}
	h = hash__bytes(&mapping, sizeof(mapping), address);
	h = hash__bytes(pl, nr * sizeof(pl[0]), h);
	*id = (uint32_t)hashmap__find(&p->loc_idx, h, loc_eq, &(struct key_ctx){p, &k});
	if (*id)
		return 0;
	err = id_room(p->nr_locs, 1);
	if (!err)
		err = array__grow((void **)&p->locs, &p->cap_locs, p->nr_locs + 1,
				  sizeof(*p->locs));
	if (!err)
		err = id_room(p->nr_lines, nr);
	if (!err)
		err = array__grow((void **)&p->lines, &p->cap_lines, p->nr_lines + nr,
				  sizeof(*p->lines));
	if (!err)
		err = hashmap__insert(&p->loc_idx, h, p->nr_locs + 1);
	if (err)
		return err;
	memcpy(&p->lines[p->nr_lines], pl, nr * sizeof(pl[0]));
	p->locs[p->nr_locs] = (struct plocation){
		.mapping = mapping,
		.address = address,
		.first_line = p->nr_lines,
		.nr_lines = nr,
	};
	p->nr_lines += nr;
	*id = ++p->nr_locs;
	return 0;
}

int profile__add_name(struct profile *p, const char *name, uint32_t *id)
{
	struct profile_line l = {.function = name};

	return profile__add_location(p, 0, 0, &l, 1, id);
}

/* ---- samples ---- */

struct sample_key {
	const uint32_t *locs; /* root first */
	size_t nr;
	uint32_t pid, comm;
	uint32_t waker_pid[PROFILE_MAX_WAKERS], waker_comm[PROFILE_MAX_WAKERS];
};

static bool sample_eq(uint64_t val, const void *ctx)
{
	const struct key_ctx *c = ctx;
	const struct psample *s = &c->p->samples[val - 1];
	const struct sample_key *k = c->key;
	const uint32_t *st = &c->p->stacks[s->first_loc];
	size_t i;

	if (s->nr_locs != k->nr || s->pid != k->pid || s->comm != k->comm ||
	    memcmp(s->waker_pid, k->waker_pid, sizeof(k->waker_pid)) ||
	    memcmp(s->waker_comm, k->waker_comm, sizeof(k->waker_comm)))
		return false;
	for (i = 0; i < k->nr; i++) {
		if (st[i] != k->locs[k->nr - 1 - i])
			return false;
	}
	return true;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

int profile__add_sample(struct profile *p, const uint32_t *locs, size_t nr, const int64_t *values,
			uint32_t pid, const char *comm)
{
	return profile__add_sample_wakers(p, locs, nr, values, pid, comm, NULL, NULL, 0);
}

/* The label keys of waker level @l ("waker_pid", "waker2_pid"...), interned once: those
 * of off-wake profiles only, other profiles stay as they were. */
static int waker_label_keys(struct profile *p, size_t l)
{
	char name[32];
	int err = 0;

	if (!p->key_waker_pid[l]) {
		snprintf(name, sizeof(name), l ? "waker%zu_pid" : "waker_pid", l + 1);
		err = str_id(p, name, &p->key_waker_pid[l]);
	}
	if (!err && !p->key_waker_comm[l]) {
		snprintf(name, sizeof(name), l ? "waker%zu_comm" : "waker_comm", l + 1);
		err = str_id(p, name, &p->key_waker_comm[l]);
	}
	return err;
}

int profile__add_sample_wakers(struct profile *p, const uint32_t *locs, size_t nr,
			       const int64_t *values, uint32_t pid, const char *comm,
			       const uint32_t *waker_pids, const char *const *waker_comms,
			       size_t nr_wakers)
{
	struct sample_key k = {.locs = locs, .nr = nr, .pid = pid};
	struct psample *s;
	uint64_t h;
	size_t i;
	uint32_t id;
	int err;

	if (!nr || nr > UINT32_MAX || nr_wakers > PROFILE_MAX_WAKERS)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!locs[i] || locs[i] > p->nr_locs)
			return -EINVAL;
	}
	err = str_id(p, comm, &k.comm);
	for (i = 0; i < nr_wakers && !err; i++) {
		k.waker_pid[i] = waker_pids[i];
		err = str_id(p, waker_comms[i], &k.waker_comm[i]);
		if (!err && (k.waker_pid[i] || k.waker_comm[i]))
			err = waker_label_keys(p, i);
	}
	if (err)
		return err;
	h = hash__bytes(locs, nr * sizeof(*locs), ((uint64_t)pid << 32) | k.comm);
	for (i = 0; i < nr_wakers; i++) {
		if (k.waker_pid[i] || k.waker_comm[i])
			h = hash__u64(h ^ (((uint64_t)k.waker_pid[i] << 32) | k.waker_comm[i]) ^ i);
	}
	id = (uint32_t)hashmap__find(&p->sample_idx, h, sample_eq, &(struct key_ctx){p, &k});
	if (!id) {
		err = id_room(p->nr_samples, 1);
		if (!err)
			err = array__grow((void **)&p->samples, &p->cap_samples, p->nr_samples + 1,
					  sizeof(*p->samples));
		if (!err)
			err = id_room(p->nr_stacks, nr);
		if (!err)
			err = array__grow((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + nr,
					  sizeof(*p->stacks));
		if (!err)
			err = hashmap__insert(&p->sample_idx, h, p->nr_samples + 1);
		if (err)
			return err;
		for (i = 0; i < nr; i++)
			p->stacks[p->nr_stacks + i] = locs[nr - 1 - i];
		p->samples[p->nr_samples] = (struct psample){
			.first_loc = p->nr_stacks,
			.nr_locs = nr,
			.pid = pid,
			.comm = k.comm,
		};
		memcpy(p->samples[p->nr_samples].waker_pid, k.waker_pid, sizeof(k.waker_pid));
		memcpy(p->samples[p->nr_samples].waker_comm, k.waker_comm, sizeof(k.waker_comm));
		p->nr_stacks += nr;
		id = ++p->nr_samples;
	}
	s = &p->samples[id - 1];
	for (i = 0; i < p->opts.nr_values; i++)
		s->values[i] = sat_add(s->values[i], values[i]);
	return 0;
}

void profile__set_time(struct profile *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->opts.time_nanos = time_nanos;
	p->opts.duration_nanos = duration_nanos;
}

int profile__set_comments(struct profile *p, const char *const *lines, size_t n)
{
	uint32_t *ids = n ? calloc(n, sizeof(*ids)) : NULL;
	size_t i, nr = 0;

	free(p->comments);
	p->comments = NULL;
	p->nr_comments = 0;
	if (n && !ids)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (str_id(p, lines[i], &ids[nr])) {
			free(ids);
			return -ENOMEM;
		}
		nr += ids[nr] != 0;
	}
	p->comments = ids;
	p->nr_comments = nr;
	return 0;
}

size_t profile__nr_samples(const struct profile *p)
{
	return p->nr_samples;
}

int64_t profile__total(const struct profile *p, size_t v)
{
	int64_t t = 0;
	size_t i;

	if (v >= p->opts.nr_values)
		return 0;
	for (i = 0; i < p->nr_samples; i++)
		t = sat_add(t, p->samples[i].values[v]);
	return t;
}

/* ---- folded input ---- */

int profile__read_folded(struct profile *p, FILE *in, size_t *bad)
{
	char *line, *end, *sp, *f, *semi;
	uint32_t *locs = NULL;
	size_t nr, lcap = 0, len;
	int64_t values[PROFILE_MAX_VALUES] = {0};
	struct line_reader lr;
	uint64_t count;
	int err;

	*bad = 0;
	line_reader__init(&lr, in, LINE_MAX_FOLDED);
	while ((err = line_reader__next(&lr, &line, &len)) > 0) {
		while (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (!len)
			continue;
		sp = strrchr(line, ' ');
		if (!sp || sp == line || parse__u64(sp + 1, 10, &count) || count > INT64_MAX) {
			(*bad)++;
			continue;
		}
		for (end = sp; end > line && (end[-1] == ' ' || end[-1] == '\t'); end--)
			;
		*end = '\0';
		/* "stack BEFORE AFTER" (two counts, a diff) is not a profile */
		sp = strrchr(line, ' ');
		if (end == line || (sp && !parse__u64(sp + 1, 10, &(uint64_t){0}))) {
			(*bad)++;
			continue;
		}
		nr = 0;
		for (f = line; f; f = semi ? semi + 1 : NULL) {
			semi = strchr(f, ';');
			if (semi)
				*semi = '\0';
			if (array__grow((void **)&locs, &lcap, nr + 1, sizeof(*locs))) {
				err = -ENOMEM;
				goto cleanup;
			}
			err = profile__add_name(p, f[0] ? f : "[empty]", &locs[nr++]);
			if (err)
				goto cleanup;
		}
		values[0] = (int64_t)count;
		if (count)
			err = profile__add_sample(p, locs, nr, values, 0, NULL);
		if (err)
			goto cleanup;
	}
	*bad += lr.skipped;
cleanup:
	line_reader__free(&lr);
	free(locs);
	return err;
}
