// SPDX-License-Identifier: MIT
/* export: the pprof writer: profile.proto through libprotobuf-c, gzip-compressed with zlib. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "export-private.h"
#include "profile.pb-c.h"

/*
 * A ProtobufCBuffer that deflates what protobuf-c packs straight into the file, so
 * the encoded profile is never whole in memory (only the message structs are).
 */
struct gz_buffer {
	ProtobufCBuffer base;
	z_stream zs;
	FILE *out;
	unsigned char chunk[64 * 1024];
	int err;
};

static int gz_pump(struct gz_buffer *b, int flush)
{
	int ret;

	do {
		b->zs.next_out = b->chunk;
		b->zs.avail_out = sizeof(b->chunk);
		ret = deflate(&b->zs, flush);
		if (ret == Z_STREAM_ERROR)
			return -EINVAL;
		size_t n = sizeof(b->chunk) - b->zs.avail_out;

		if (n && fwrite(b->chunk, 1, n, b->out) != n)
			return -EIO;
	} while (b->zs.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

static void gz_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct gz_buffer *b = (struct gz_buffer *)buffer;

	while (len && !b->err) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		b->zs.next_in = (Bytef *)data;
		b->zs.avail_in = n;
		b->err = gz_pump(b, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

/* The message structs, in arrays allocated once per kind. */
struct pb {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType vt[PROFILE_MAX_VALUES], period_type;
	Perftools__Profiles__ValueType *vtp[PROFILE_MAX_VALUES];
	Perftools__Profiles__Mapping *maps, **mapp;
	Perftools__Profiles__Function *funcs, **funcp;
	Perftools__Profiles__Line *lines, **linep;
	Perftools__Profiles__Location *locs, **locp;
	Perftools__Profiles__Sample *samples, **samplep;
	Perftools__Profiles__Label *labels, **labelp;
	uint64_t *loc_ids;
	int64_t *values;
	int64_t *comments;
};

static void pb__free(struct pb *b)
{
	free(b->maps);
	free(b->mapp);
	free(b->funcs);
	free(b->funcp);
	free(b->lines);
	free(b->linep);
	free(b->locs);
	free(b->locp);
	free(b->samples);
	free(b->samplep);
	free(b->labels);
	free(b->labelp);
	free(b->loc_ids);
	free(b->values);
	free(b->comments);
}

/* Calloc of @n elements, never NULL for n == 0 (one element then). */
static void *alloc_n(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* Appends the label @key = @num (a number, when not 0) or @str (a string id, when not 0)
 * to sample @ps, at b->labels[*@n]; nothing when both are 0. */
static void add_label(struct pb *b, Perftools__Profiles__Sample *ps, size_t *n, uint32_t key,
		      uint64_t num, uint32_t str)
{
	if (!num && !str)
		return;
	perftools__profiles__label__init(&b->labels[*n]);
	b->labels[*n].key = key;
	b->labels[*n].num = (int64_t)num;
	b->labels[*n].str = str;
	b->labelp[*n] = &b->labels[*n];
	(*n)++;
	ps->n_label++;
}

static int pb__build(struct pb *b, const struct profile *p)
{
	const struct profile_opts *o = &p->opts;
	size_t i, j, nlabels = 0;

	for (i = 0; i < o->nr_values; i++) {
		perftools__profiles__value_type__init(&b->vt[i]);
		b->vt[i].type = p->vt_type[i];
		b->vt[i].unit = p->vt_unit[i];
		b->vtp[i] = &b->vt[i];
	}
	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = p->period_type;
	b->period_type.unit = p->period_unit;
	for (i = 0; i < p->nr_samples; i++) {
		nlabels += !!p->samples[i].pid + !!p->samples[i].comm;
		for (j = 0; j < PROFILE_MAX_WAKERS; j++)
			nlabels += !!p->samples[i].waker_pid[j] + !!p->samples[i].waker_comm[j];
	}

	b->maps = alloc_n(p->nr_maps, sizeof(*b->maps));
	b->mapp = alloc_n(p->nr_maps, sizeof(*b->mapp));
	b->funcs = alloc_n(p->nr_funcs, sizeof(*b->funcs));
	b->funcp = alloc_n(p->nr_funcs, sizeof(*b->funcp));
	b->lines = alloc_n(p->nr_lines, sizeof(*b->lines));
	b->linep = alloc_n(p->nr_lines, sizeof(*b->linep));
	b->locs = alloc_n(p->nr_locs, sizeof(*b->locs));
	b->locp = alloc_n(p->nr_locs, sizeof(*b->locp));
	b->samples = alloc_n(p->nr_samples, sizeof(*b->samples));
	b->samplep = alloc_n(p->nr_samples, sizeof(*b->samplep));
	b->labels = alloc_n(nlabels, sizeof(*b->labels));
	b->labelp = alloc_n(nlabels, sizeof(*b->labelp));
	b->loc_ids = alloc_n(p->nr_stacks, sizeof(*b->loc_ids));
	b->values = alloc_n(p->nr_samples * o->nr_values, sizeof(*b->values));
	b->comments = alloc_n(p->nr_comments, sizeof(*b->comments));
	if (!b->maps || !b->mapp || !b->funcs || !b->funcp || !b->lines || !b->linep || !b->locs ||
	    !b->locp || !b->samples || !b->samplep || !b->labels || !b->labelp || !b->loc_ids ||
	    !b->values || !b->comments)
		return -ENOMEM;

	for (i = 0; i < p->nr_maps; i++) {
		Perftools__Profiles__Mapping *m = &b->maps[i];

		perftools__profiles__mapping__init(m);
		m->id = i + 1;
		m->memory_start = p->maps[i].start;
		m->memory_limit = p->maps[i].limit;
		m->file_offset = p->maps[i].offset;
		m->filename = p->maps[i].file;
		m->build_id = p->maps[i].build_id;
		/* every location was symbolized by us: pprof must not try again */
		m->has_functions = true;
		m->has_filenames = o->has_filenames;
		m->has_line_numbers = o->has_line_numbers;
		m->has_inline_frames = o->has_inline_frames;
		b->mapp[i] = m;
	}
	for (i = 0; i < p->nr_funcs; i++) {
		Perftools__Profiles__Function *f = &b->funcs[i];

		perftools__profiles__function__init(f);
		f->id = i + 1;
		f->name = p->funcs[i].name;
		f->system_name = p->funcs[i].system_name;
		f->filename = p->funcs[i].file;
		b->funcp[i] = f;
	}
	for (i = 0; i < p->nr_locs; i++) {
		const struct plocation *l = &p->locs[i];
		Perftools__Profiles__Location *pl = &b->locs[i];

		perftools__profiles__location__init(pl);
		pl->id = i + 1;
		pl->mapping_id = l->mapping;
		pl->address = l->address;
		pl->n_line = l->nr_lines;
		pl->line = &b->linep[l->first_line];
		/* ours are outermost first, pprof's innermost first */
		for (j = 0; j < l->nr_lines; j++) {
			const struct pline *src = &p->lines[l->first_line + l->nr_lines - 1 - j];
			Perftools__Profiles__Line *dst = &b->lines[l->first_line + j];

			perftools__profiles__line__init(dst);
			dst->function_id = src->function;
			dst->line = src->line;
			b->linep[l->first_line + j] = dst;
		}
		b->locp[i] = pl;
	}
	for (i = 0; i < p->nr_stacks; i++)
		b->loc_ids[i] = p->stacks[i];
	nlabels = 0;
	for (i = 0; i < p->nr_samples; i++) {
		const struct psample *s = &p->samples[i];
		Perftools__Profiles__Sample *ps = &b->samples[i];

		perftools__profiles__sample__init(ps);
		ps->n_location_id = s->nr_locs;
		ps->location_id = &b->loc_ids[s->first_loc];
		ps->n_value = o->nr_values;
		ps->value = &b->values[i * o->nr_values];
		memcpy(ps->value, s->values, o->nr_values * sizeof(*ps->value));
		ps->label = &b->labelp[nlabels];
		add_label(b, ps, &nlabels, p->key_pid, s->pid, 0);
		add_label(b, ps, &nlabels, p->key_comm, 0, s->comm);
		for (j = 0; j < PROFILE_MAX_WAKERS; j++) {
			add_label(b, ps, &nlabels, p->key_waker_pid[j], s->waker_pid[j], 0);
			add_label(b, ps, &nlabels, p->key_waker_comm[j], 0, s->waker_comm[j]);
		}
		b->samplep[i] = ps;
	}

	perftools__profiles__profile__init(&b->prof);
	b->prof.n_sample_type = o->nr_values;
	b->prof.sample_type = b->vtp;
	b->prof.n_sample = p->nr_samples;
	b->prof.sample = b->samplep;
	b->prof.n_mapping = p->nr_maps;
	b->prof.mapping = b->mapp;
	b->prof.n_location = p->nr_locs;
	b->prof.location = b->locp;
	b->prof.n_function = p->nr_funcs;
	b->prof.function = b->funcp;
	b->prof.n_string_table = p->nr_strs;
	b->prof.string_table = (char **)p->strs;
	b->prof.n_comment = p->nr_comments;
	b->prof.comment = b->comments;
	for (i = 0; i < p->nr_comments; i++)
		b->comments[i] = p->comments[i];
	b->prof.time_nanos = o->time_nanos;
	b->prof.duration_nanos = o->duration_nanos;
	if (p->period_type && p->period_unit)
		b->prof.period_type = &b->period_type;
	b->prof.period = o->period;
	return 0;
}

int profile__write_pprof(const struct profile *p, FILE *out)
{
	struct gz_buffer *gz = NULL;
	struct pb b = {0};
	bool zinit = false;
	int err;

	err = pb__build(&b, p);
	if (err)
		goto cleanup;
	gz = calloc(1, sizeof(*gz));
	if (!gz) {
		err = -ENOMEM;
		goto cleanup;
	}
	gz->base.append = gz_append;
	gz->out = out;
	/* windowBits 15 + 16: a gzip wrapper, as pprof writes and reads */
	if (deflateInit2(&gz->zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		err = -ENOMEM;
		goto cleanup;
	}
	zinit = true;
	perftools__profiles__profile__pack_to_buffer(&b.prof, &gz->base);
	err = gz->err;
	if (!err) {
		gz->zs.next_in = NULL;
		gz->zs.avail_in = 0;
		err = gz_pump(gz, Z_FINISH);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
cleanup:
	if (zinit)
		deflateEnd(&gz->zs);
	free(gz);
	pb__free(&b);
	return err;
}
