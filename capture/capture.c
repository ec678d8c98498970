// SPDX-License-Identifier: MIT
/* capture: streaming writer and length-checking reader of the .scorch record format. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "capture.h"
#include "common.h"

#define HDR_FLAG_ZSTD 1u /* the records are one zstd frame (the only layout so far) */

/* Fixed parts of the payloads (variable parts follow): see docs/capture-format.md. */
#define META_FIXED  (4 + 4 + 8 + 8 + 4 + 4)
#define PROC_FIXED  (4 + 4 + 8)
#define MAP_FIXED   (4 + 4 + 8 + 8 + 8 + 8 + 2)
#define COUNT_FIXED (4 + 4 + 8 + 8 + 16 + 4 + 2 + 2)
#define KSYM_FIXED  (8 + 8)
#define JIT_FIXED   (4 + 4 + 8 + 8)
#define STATS_FIXED (8 + 4 + 4 + 8 * 8)
#define END_FIXED   8
_Static_assert(META_FIXED == 32, "meta record layout");
_Static_assert(MAP_FIXED == 42, "mapping record layout");
_Static_assert(COUNT_FIXED == 48, "count record layout");
_Static_assert(STATS_FIXED == 80, "stats record layout");
_Static_assert(sizeof(((struct capture_count *)0)->comm) == 16, "comm is 16 bytes on disk");
_Static_assert(CAPTURE_HEADER_SIZE == sizeof(CAPTURE_MAGIC) - 1 + 2 + 2 + 4, "header layout");

/* ---- little-endian encoding ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

/* Appends @v[0..n); out of memory sets b->oom (checked once, when the record is done). */
static void put_bytes(struct buf *b, const void *v, size_t n)
{
	if (b->oom || n > SIZE_MAX - b->len ||
	    array__grow((void **)&b->p, &b->cap, b->len + n, 1)) {
		b->oom = true;
		return;
	}
	if (n)
		memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put_le(struct buf *b, uint64_t v, int n)
{
	uint8_t tmp[8];

	for (int i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * i));
	put_bytes(b, tmp, n);
}

static void put_u16(struct buf *b, uint16_t v)
{
	put_le(b, v, 2);
}

static void put_u32(struct buf *b, uint32_t v)
{
	put_le(b, v, 4);
}

static void put_u64(struct buf *b, uint64_t v)
{
	put_le(b, v, 8);
}

/* Returns false when @s is longer than a string may be. */
static bool put_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > CAPTURE_MAX_STRING)
		return false;
	put_u16(b, (uint16_t)n);
	put_bytes(b, s, n);
	return true;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ---- writer ---- */

struct capture_writer {
	FILE *fp;
	ZSTD_CCtx *cctx;
	void *out;
	size_t out_size;
	struct buf rec;
	uint64_t records;
	uint64_t file_bytes, raw_bytes;
	int err; /* sticky */
};

struct capture_writer *capture_writer__new(FILE *fp, int level)
{
	struct capture_writer *w = calloc(1, sizeof(*w));
	struct buf hdr = {};
	int err = -ENOMEM;

	if (!w)
		goto cleanup;
	w->fp = fp;
	w->cctx = ZSTD_createCCtx();
	w->out_size = ZSTD_CStreamOutSize();
	w->out = malloc(w->out_size);
	if (!w->cctx || !w->out)
		goto cleanup;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1))) {
		err = -EINVAL;
		goto cleanup;
	}
	put_bytes(&hdr, CAPTURE_MAGIC, 8);
	put_u16(&hdr, CAPTURE_VERSION_MAJOR);
	put_u16(&hdr, CAPTURE_VERSION_MINOR);
	put_u32(&hdr, HDR_FLAG_ZSTD);
	if (hdr.oom)
		goto cleanup;
	if (fwrite(hdr.p, 1, hdr.len, fp) != hdr.len) {
		err = -EIO;
		goto cleanup;
	}
	w->file_bytes = hdr.len;
	err = 0;
cleanup:
	free(hdr.p);
	if (err) {
		capture_writer__free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

void capture_writer__free(struct capture_writer *w)
{
	if (!w)
		return;
	ZSTD_freeCCtx(w->cctx);
	free(w->out);
	free(w->rec.p);
	free(w);
}

void capture_writer__sizes(const struct capture_writer *w, uint64_t *file, uint64_t *raw)
{
	*file = w->file_bytes;
	*raw = w->raw_bytes;
}

static int compress(struct capture_writer *w, const void *src, size_t len, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {src, len, 0};
	size_t left;

	do {
		ZSTD_outBuffer out = {w->out, w->out_size, 0};

		left = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		if (ZSTD_isError(left))
			return -EIO;
		if (out.pos && fwrite(w->out, 1, out.pos, w->fp) != out.pos)
			return -EIO;
		w->file_bytes += out.pos;
	} while (mode == ZSTD_e_end ? left != 0 : in.pos < in.size);
	return 0;
}

/* Encodes the payload of @rec into @b. Returns 0 or -EINVAL (beyond a cap). */
static int encode(struct buf *b, const struct capture_record *rec, uint64_t records)
{
	bool ok = true;
	uint32_t i;

	switch (rec->type) {
	case CAPTURE_META: {
		const struct capture_meta *m = &rec->meta;

		put_u32(b, m->mode);
		put_u32(b, m->flags);
		put_u64(b, m->freq);
		put_u64(b, m->start_ns);
		put_u32(b, m->max_depth);
		put_u32(b, m->user_depth);
		ok = put_str(b, m->host) && put_str(b, m->kernel) && put_str(b, m->version) &&
		     put_str(b, m->clock);
		if (m->mode != CAPTURE_MODE_EVENT && !m->interval_ns && (!m->target || !*m->target))
			break; /* the record as 1.1 wrote it */
		ok = ok && put_str(b, m->event ? m->event : "");
		put_u32(b, m->event_weight);
		put_u32(b, m->event_flags);
		put_u64(b, m->event_period);
		ok = ok && put_str(b, m->event_weight_unit ? m->event_weight_unit : "");
		put_u64(b, m->interval_ns);
		if (m->target && *m->target)
			ok = ok && put_str(b, m->target);
		break;
	}
	case CAPTURE_PROC:
		put_u32(b, rec->proc.pid);
		put_u32(b, rec->proc.flags);
		put_u64(b, rec->proc.gen);
		ok = put_str(b, rec->proc.comm);
		put_u32(b, rec->proc.uid);
		break;
	case CAPTURE_MAPPING: {
		const struct capture_mapping *m = &rec->map;

		if (m->build_id_len > CAPTURE_MAX_BUILD_ID || m->end <= m->start ||
		    m->kind > CAPTURE_MAP_PSEUDO)
			return -EINVAL;
		put_u32(b, m->pid);
		put_u32(b, m->kind);
		put_u64(b, m->gen);
		put_u64(b, m->start);
		put_u64(b, m->end);
		put_u64(b, m->pgoff);
		put_u16(b, (uint16_t)m->build_id_len);
		put_bytes(b, m->build_id, m->build_id_len);
		ok = put_str(b, m->path);
		break;
	}
	case CAPTURE_COUNT: {
		const struct capture_count *c = &rec->count;

		if (c->nr_user > CAPTURE_MAX_USER || c->nr_kernel > CAPTURE_MAX_DEPTH ||
		    c->interval >= CAPTURE_MAX_INTERVALS ||
		    (c->nr_user && !(c->cflags & CAPTURE_COUNT_USER)) ||
		    (c->nr_kernel && !(c->cflags & CAPTURE_COUNT_KERNEL)))
			return -EINVAL;
		put_u32(b, c->pid);
		put_u32(b, c->key_flags);
		put_u64(b, c->gen);
		put_u64(b, c->value);
		put_bytes(b, c->comm, sizeof(c->comm));
		put_u32(b, c->cflags);
		put_u16(b, (uint16_t)c->nr_user);
		put_u16(b, (uint16_t)c->nr_kernel);
		for (i = 0; i < c->nr_user; i++)
			put_u64(b, c->user[i]);
		for (i = 0; i < c->nr_kernel; i++)
			put_u64(b, c->kernel[i]);
		put_u32(b, c->interval);
		break;
	}
	case CAPTURE_KSYM:
		if (rec->ksym.end <= rec->ksym.start)
			return -EINVAL;
		put_u64(b, rec->ksym.start);
		put_u64(b, rec->ksym.end);
		ok = put_str(b, rec->ksym.name) && put_str(b, rec->ksym.module);
		break;
	case CAPTURE_JIT:
		put_u32(b, rec->jit.pid);
		put_u32(b, rec->jit.flags);
		put_u64(b, rec->jit.addr);
		put_u64(b, rec->jit.offset);
		ok = put_str(b, rec->jit.name);
		break;
	case CAPTURE_STATS: {
		const struct capture_stats *s = &rec->stats;

		if (s->nr_bpf > CAPTURE_MAX_STATS || s->nr_intervals > CAPTURE_MAX_INTERVALS)
			return -EINVAL;
		put_u64(b, s->elapsed_ns);
		put_u32(b, s->nr_cpus);
		put_u32(b, s->nr_bpf);
		put_u64(b, s->drain_lost);
		put_u64(b, s->drain_lost_ns);
		put_u64(b, s->procs_seen);
		put_u64(b, s->procs_released);
		put_u64(b, s->procs_held_max);
		put_u64(b, s->procs_missing);
		put_u64(b, s->max_stacks);
		put_u64(b, s->ring_bytes);
		for (i = 0; i < s->nr_bpf; i++)
			put_u64(b, s->bpf[i]);
		put_u32(b, s->nr_intervals);
		break;
	}
	case CAPTURE_END:
		put_u64(b, records);
		break;
	case CAPTURE_PYCODE: {
		const struct capture_pycode *py = &rec->pycode;

		if (py->linetable_len > CAPTURE_MAX_LINETABLE)
			return -EINVAL;
		put_u32(b, py->pid);
		put_u32(b, py->guard);
		put_u64(b, py->gen);
		put_u64(b, py->addr);
		put_u32(b, (uint32_t)py->firstlineno);
		put_u32(b, py->pep657);
		put_u32(b, py->linetable_len);
		put_bytes(b, py->linetable, py->linetable_len);
		ok = put_str(b, py->qualname) && put_str(b, py->file);
		break;
	}
	default:
		return -EINVAL;
	}
	return ok ? 0 : -EINVAL;
}

int capture_writer__add(struct capture_writer *w, const struct capture_record *rec)
{
	struct buf *b = &w->rec;
	int err;

	if (w->err)
		return w->err;
	b->len = 0;
	put_u32(b, 0); /* length, patched below */
	put_u16(b, (uint16_t)rec->type);
	put_u16(b, 0);
	err = encode(b, rec, w->records);
	if (!err && b->oom)
		err = -ENOMEM;
	if (!err && b->len - CAPTURE_RECORD_HEADER > CAPTURE_MAX_RECORD)
		err = -EINVAL;
	if (err)
		return err; /* nothing written: the stream is still good */
	for (int i = 0; i < 4; i++)
		b->p[i] = (uint8_t)((b->len - CAPTURE_RECORD_HEADER) >> (8 * i));
	err = compress(w, b->p, b->len, ZSTD_e_continue);
	if (err)
		return w->err = err;
	w->raw_bytes += b->len;
	if (rec->type != CAPTURE_END)
		w->records++;
	return 0;
}

int capture_writer__finish(struct capture_writer *w)
{
	struct capture_record end = {.type = CAPTURE_END};
	int err = capture_writer__add(w, &end);

	if (!err)
		err = compress(w, NULL, 0, ZSTD_e_end);
	if (!err && (fflush(w->fp) || ferror(w->fp)))
		err = -EIO;
	return err ? (w->err = err) : 0;
}

/* ---- reader ---- */

struct capture_reader {
	const uint8_t *data;
	size_t len;
	unsigned major, minor;
	ZSTD_DCtx *dctx;
	ZSTD_inBuffer in;
	bool frame_done;
	uint8_t *win; /* decompressed bytes [pos, fill) not yet consumed */
	size_t pos, fill, cap;
	uint64_t offset; /* decompressed offset of win[pos] */
	uint64_t index;	 /* records read */
	uint64_t skipped;
	uint64_t interval_ns; /* the meta record's */
	char *strs;	      /* this record's strings, NUL-terminated */
	size_t strs_len, strs_cap;
	uint64_t ips[CAPTURE_MAX_USER + CAPTURE_MAX_DEPTH];
	int err;
	char msg[256];
};

static const char *const type_names[] = {
	[CAPTURE_META] = "meta",	  [CAPTURE_PROC] = "process",
	[CAPTURE_MAPPING] = "mapping",	  [CAPTURE_COUNT] = "count",
	[CAPTURE_KSYM] = "kernel symbol", [CAPTURE_JIT] = "JIT symbol",
	[CAPTURE_STATS] = "stats",	  [CAPTURE_END] = "end",
	[CAPTURE_PYCODE] = "Python code",
};

static const char *type_name(unsigned type)
{
	if (type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type])
		return type_names[type];
	return "unknown";
}

const char *capture_reader__open_error(int err)
{
	switch (err) {
	case EBADMSG:
		return "not a scorch capture (bad magic or header)";
	case EPROTONOSUPPORT:
		return "capture format version not supported by this scorch";
	case ENOMEM:
		return "out of memory";
	default:
		return "cannot read the capture";
	}
}

struct capture_reader *capture_reader__new(const void *data, size_t len)
{
	const uint8_t *p = data;
	struct capture_reader *r;

	if (len < CAPTURE_HEADER_SIZE || memcmp(p, CAPTURE_MAGIC, 8) ||
	    get_le(p + 12, 4) != HDR_FLAG_ZSTD) {
		errno = EBADMSG;
		return NULL;
	}
	if (get_le(p + 8, 2) != CAPTURE_VERSION_MAJOR) {
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->dctx = ZSTD_createDCtx())) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->data = p;
	r->len = len;
	r->major = CAPTURE_VERSION_MAJOR;
	r->minor = (unsigned)get_le(p + 10, 2);
	r->in = (ZSTD_inBuffer){p + CAPTURE_HEADER_SIZE, len - CAPTURE_HEADER_SIZE, 0};
	return r;
}

void capture_reader__free(struct capture_reader *r)
{
	if (!r)
		return;
	ZSTD_freeDCtx(r->dctx);
	free(r->win);
	free(r->strs);
	free(r);
}

void capture_reader__version(const struct capture_reader *r, unsigned *major, unsigned *minor)
{
	*major = r->major;
	*minor = r->minor;
}

uint64_t capture_reader__skipped(const struct capture_reader *r)
{
	return r->skipped;
}

const char *capture_reader__error(const struct capture_reader *r)
{
	return r->err ? r->msg : "";
}

__attribute__((format(printf, 3, 4))) static int fail(struct capture_reader *r, int err,
						      const char *fmt, ...)
{
	va_list ap;

	if (r->err)
		return r->err;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return r->err = err;
}

/*
 * Makes @n decompressed bytes available at win[pos]. Returns 1, 0 when the stream
 * ended cleanly before them (fewer are available), or -errno (recorded).
 */
static int need(struct capture_reader *r, size_t n)
{
	while (r->fill - r->pos < n) {
		ZSTD_outBuffer out;
		size_t ret;

		if (r->frame_done)
			return 0;
		if (r->pos) {
			memmove(r->win, r->win + r->pos, r->fill - r->pos);
			r->fill -= r->pos;
			r->pos = 0;
		}
		if (array__grow((void **)&r->win, &r->cap, n + ZSTD_DStreamOutSize(), 1))
			return fail(r, -ENOMEM, "out of memory");
		out = (ZSTD_outBuffer){r->win + r->fill, r->cap - r->fill, 0};
		ret = ZSTD_decompressStream(r->dctx, &out, &r->in);
		if (ZSTD_isError(ret))
			return fail(r, -EBADMSG,
				    "corrupt compressed data after %" PRIu64 " records: %s",
				    r->index, ZSTD_getErrorName(ret));
		r->fill += out.pos;
		if (ret == 0) {
			r->frame_done = true;
			if (r->in.pos != r->in.size)
				return fail(r, -EBADMSG,
					    "%zu bytes after the end of the compressed records",
					    r->in.size - r->in.pos);
		} else if (!out.pos && r->in.pos == r->in.size) {
			return fail(r, -EBADMSG,
				    "truncated: the compressed data ends after %zu bytes "
				    "(%" PRIu64 " records read)",
				    r->len, r->index);
		}
	}
	return 1;
}

/* A bounds-checked cursor over one payload. */
struct cur {
	struct capture_reader *r;
	const uint8_t *p, *end;
	unsigned type;
	bool bad;
};

static const uint8_t *take(struct cur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

static uint64_t get_n(struct cur *c, int n)
{
	const uint8_t *p = take(c, n);

	return p ? get_le(p, n) : 0;
}

static const char *get_str(struct cur *c)
{
	struct capture_reader *r = c->r;
	size_t n = get_n(c, 2);
	const uint8_t *p = take(c, n);
	char *s;

	if (!p || n > CAPTURE_MAX_STRING || memchr(p, '\0', n)) {
		c->bad = true;
		return "";
	}
	/* r->strs was sized for the whole payload plus one NUL per possible string */
	s = r->strs + r->strs_len;
	memcpy(s, p, n);
	s[n] = '\0';
	r->strs_len += n + 1;
	return s;
}

/*
 * One record's payload into @rec, by type. One function on purpose: a case per record
 * type of docs/capture-format.md, each its fields in file order and their bounds, the
 * mirror of encode(); split, the format would be read in as many places.
 */
static int decode(struct capture_reader *r, struct cur *c, struct capture_record *rec)
{
	uint32_t i, nu, nk;

	switch (c->type) {
	case CAPTURE_META: {
		struct capture_meta *m = &rec->meta;

		m->mode = get_n(c, 4);
		m->flags = get_n(c, 4);
		m->freq = get_n(c, 8);
		m->start_ns = get_n(c, 8);
		m->max_depth = get_n(c, 4);
		m->user_depth = get_n(c, 4);
		m->host = get_str(c);
		m->kernel = get_str(c);
		m->version = get_str(c);
		m->clock = get_str(c);
		/* 1.1 and older end here */
		m->event = c->p < c->end ? get_str(c) : "";
		m->event_weight = c->p < c->end ? (uint32_t)get_n(c, 4) : 0;
		m->event_flags = c->p < c->end ? (uint32_t)get_n(c, 4) : 0;
		m->event_period = c->p < c->end ? get_n(c, 8) : 0;
		m->event_weight_unit = c->p < c->end ? get_str(c) : "";
		m->interval_ns = c->p < c->end ? get_n(c, 8) : 0; /* since 1.4 */
		m->target = c->p < c->end ? get_str(c) : "";	  /* since 1.5 */
		r->interval_ns = m->interval_ns;
		if (!c->bad && m->mode == CAPTURE_MODE_EVENT && (!m->event || !*m->event))
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (meta): an event capture without its event",
				    r->index);
		if (!c->bad && (m->mode > CAPTURE_MODE_EVENT || !m->max_depth ||
				m->max_depth > CAPTURE_MAX_DEPTH ||
				m->user_depth > CAPTURE_MAX_USER || !m->freq))
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (meta): mode %u, depth %u, user "
				    "depth %u or frequency %" PRIu64 " out of range",
				    r->index, m->mode, m->max_depth, m->user_depth, m->freq);
		break;
	}
	case CAPTURE_PROC:
		rec->proc.pid = get_n(c, 4);
		rec->proc.flags = get_n(c, 4);
		rec->proc.gen = get_n(c, 8);
		rec->proc.comm = get_str(c);
		/* 1.0 wrote no uid */
		rec->proc.uid = c->p < c->end ? (uint32_t)get_n(c, 4) : CAPTURE_UID_UNKNOWN;
		break;
	case CAPTURE_MAPPING: {
		struct capture_mapping *m = &rec->map;

		m->pid = get_n(c, 4);
		m->kind = get_n(c, 4);
		m->gen = get_n(c, 8);
		m->start = get_n(c, 8);
		m->end = get_n(c, 8);
		m->pgoff = get_n(c, 8);
		m->build_id_len = get_n(c, 2);
		if (m->build_id_len > CAPTURE_MAX_BUILD_ID)
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (mapping): build-id of %zu bytes "
				    "(at most %d)",
				    r->index, m->build_id_len, CAPTURE_MAX_BUILD_ID);
		m->build_id = m->build_id_len ? take(c, m->build_id_len) : NULL;
		m->path = get_str(c);
		if (!c->bad && (m->end <= m->start || m->kind > CAPTURE_MAP_PSEUDO))
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (mapping): empty range or "
				    "unknown kind %u",
				    r->index, m->kind);
		break;
	}
	case CAPTURE_COUNT: {
		struct capture_count *k = &rec->count;
		const uint8_t *comm;

		k->pid = get_n(c, 4);
		k->key_flags = get_n(c, 4);
		k->gen = get_n(c, 8);
		k->value = get_n(c, 8);
		comm = take(c, sizeof(k->comm));
		if (comm)
			memcpy(k->comm, comm, sizeof(k->comm));
		k->cflags = get_n(c, 4);
		nu = get_n(c, 2);
		nk = get_n(c, 2);
		if (c->bad)
			break;
		if (nu > CAPTURE_MAX_USER || nk > CAPTURE_MAX_DEPTH)
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (count): %u user and %u kernel "
				    "addresses (at most %d and %d)",
				    r->index, nu, nk, CAPTURE_MAX_USER, CAPTURE_MAX_DEPTH);
		if ((size_t)(c->end - c->p) < 8 * (size_t)(nu + nk))
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (count): %u addresses need %u "
				    "bytes, %zu remain",
				    r->index, nu + nk, 8 * (nu + nk), (size_t)(c->end - c->p));
		if ((nu && !(k->cflags & CAPTURE_COUNT_USER)) ||
		    (nk && !(k->cflags & CAPTURE_COUNT_KERNEL)))
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (count): addresses of a stack "
				    "its flags say is absent",
				    r->index);
		for (i = 0; i < nu + nk; i++)
			r->ips[i] = get_n(c, 8);
		k->nr_user = nu;
		k->nr_kernel = nk;
		k->user = r->ips;
		k->kernel = r->ips + nu;
		k->interval = c->p < c->end ? (uint32_t)get_n(c, 4) : 0; /* since 1.4 */
		if (!c->bad && k->interval >= CAPTURE_MAX_INTERVALS)
			return fail(r, -EBADMSG,
				    "record %" PRIu64
				    " (count): interval %u (at most %u intervals)",
				    r->index, k->interval, CAPTURE_MAX_INTERVALS);
		if (!c->bad && k->interval && !r->interval_ns)
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (count): interval %u in a capture without "
				    "intervals",
				    r->index, k->interval);
		break;
	}
	case CAPTURE_KSYM:
		rec->ksym.start = get_n(c, 8);
		rec->ksym.end = get_n(c, 8);
		rec->ksym.name = get_str(c);
		rec->ksym.module = get_str(c);
		if (!c->bad && rec->ksym.end <= rec->ksym.start)
			return fail(r, -EBADMSG, "record %" PRIu64 " (kernel symbol): empty range",
				    r->index);
		break;
	case CAPTURE_JIT:
		rec->jit.pid = get_n(c, 4);
		rec->jit.flags = get_n(c, 4);
		rec->jit.addr = get_n(c, 8);
		rec->jit.offset = get_n(c, 8);
		rec->jit.name = get_str(c);
		break;
	case CAPTURE_STATS: {
		struct capture_stats *s = &rec->stats;

		s->elapsed_ns = get_n(c, 8);
		s->nr_cpus = get_n(c, 4);
		s->nr_bpf = get_n(c, 4);
		s->drain_lost = get_n(c, 8);
		s->drain_lost_ns = get_n(c, 8);
		s->procs_seen = get_n(c, 8);
		s->procs_released = get_n(c, 8);
		s->procs_held_max = get_n(c, 8);
		s->procs_missing = get_n(c, 8);
		s->max_stacks = get_n(c, 8);
		s->ring_bytes = get_n(c, 8);
		if (c->bad)
			break;
		if (s->nr_bpf > CAPTURE_MAX_STATS ||
		    (size_t)(c->end - c->p) < 8 * (size_t)s->nr_bpf)
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (stats): %u counters do not fit", r->index,
				    s->nr_bpf);
		for (i = 0; i < s->nr_bpf; i++)
			s->bpf[i] = get_n(c, 8);
		s->nr_intervals = c->p < c->end ? (uint32_t)get_n(c, 4) : 0; /* since 1.4 */
		if (!c->bad && (s->nr_intervals > CAPTURE_MAX_INTERVALS ||
				(s->nr_intervals && !r->interval_ns)))
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (stats): %u intervals (at most %u, none "
				    "without meta's interval)",
				    r->index, s->nr_intervals, CAPTURE_MAX_INTERVALS);
		break;
	}
	case CAPTURE_PYCODE: {
		struct capture_pycode *py = &rec->pycode;

		py->pid = get_n(c, 4);
		py->guard = get_n(c, 4);
		py->gen = get_n(c, 8);
		py->addr = get_n(c, 8);
		py->firstlineno = (int32_t)get_n(c, 4);
		py->pep657 = get_n(c, 4);
		py->linetable_len = get_n(c, 4);
		if (py->linetable_len > CAPTURE_MAX_LINETABLE)
			return fail(r, -EBADMSG,
				    "record %" PRIu64
				    " (Python code): a %u-byte line table (at most %u)",
				    r->index, py->linetable_len, CAPTURE_MAX_LINETABLE);
		py->linetable = py->linetable_len ? take(c, py->linetable_len) : NULL;
		py->qualname = get_str(c);
		py->file = get_str(c);
		break;
	}
	case CAPTURE_END:
		if (get_n(c, 8) != r->index && !c->bad)
			return fail(r, -EBADMSG,
				    "end record counts other records than the %" PRIu64
				    " read: records are missing",
				    r->index);
		break;
	}
	if (c->bad)
		return fail(r, -EBADMSG,
			    "record %" PRIu64 " (%s) at byte %" PRIu64
			    ": its %zu-byte payload is too short for its fields",
			    r->index, type_name(c->type), r->offset, (size_t)(c->end - (c->p)));
	return 0;
}

int capture_reader__next(struct capture_reader *r, struct capture_record *rec)
{
	uint32_t len, type;
	struct cur c;
	int ret;

	if (r->err)
		return r->err;
	for (;;) {
		ret = need(r, CAPTURE_RECORD_HEADER);
		if (ret < 0)
			return ret;
		if (!ret)
			return fail(r, -EBADMSG,
				    "truncated: %s after %" PRIu64 " records (no end "
				    "record)",
				    r->fill == r->pos ? "the records stop"
						      : "a record header is cut",
				    r->index);
		len = get_le(r->win + r->pos, 4);
		type = get_le(r->win + r->pos + 4, 2);
		if (len > CAPTURE_MAX_RECORD)
			return fail(r, -EBADMSG,
				    "record %" PRIu64 " (%s) at byte %" PRIu64
				    " claims %u bytes (at most %u)",
				    r->index, type_name(type), r->offset, len, CAPTURE_MAX_RECORD);
		if (r->index == 0 && type != CAPTURE_META)
			return fail(r, -EBADMSG, "the first record is %s (type %u), not meta",
				    type_name(type), type);
		ret = need(r, CAPTURE_RECORD_HEADER + (size_t)len);
		if (ret < 0)
			return ret;
		if (!ret)
			return fail(r, -EBADMSG,
				    "truncated: record %" PRIu64 " (%s) at byte %" PRIu64
				    " claims %u bytes, %zu remain",
				    r->index, type_name(type), r->offset, len,
				    r->fill - r->pos - CAPTURE_RECORD_HEADER);
		if (type < CAPTURE_META || type > CAPTURE_TYPE_MAX) {
			if (r->minor <= CAPTURE_VERSION_MINOR)
				return fail(r, -EBADMSG,
					    "record %" PRIu64 " at byte %" PRIu64
					    ": unknown type %u in a version %u.%u capture",
					    r->index, r->offset, type, r->major, r->minor);
			/* a newer minor version's record: skipped by its length */
			r->skipped++;
			r->index++;
			r->pos += CAPTURE_RECORD_HEADER + len;
			r->offset += CAPTURE_RECORD_HEADER + len;
			continue;
		}
		break;
	}
	if (array__grow((void **)&r->strs, &r->strs_cap, (size_t)len + 16, 1))
		return fail(r, -ENOMEM, "out of memory");
	r->strs_len = 0;
	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	c = (struct cur){.r = r,
			 .p = r->win + r->pos + CAPTURE_RECORD_HEADER,
			 .end = r->win + r->pos + CAPTURE_RECORD_HEADER + len,
			 .type = type};
	ret = decode(r, &c, rec);
	if (ret)
		return ret;
	r->pos += CAPTURE_RECORD_HEADER + len;
	r->offset += CAPTURE_RECORD_HEADER + len;
	if (type != CAPTURE_END) {
		r->index++;
		return 1;
	}
	/* nothing may follow the end record */
	ret = need(r, 1);
	if (ret < 0)
		return ret;
	if (ret)
		return fail(r, -EBADMSG, "%zu bytes of records after the end record",
			    r->fill - r->pos);
	return 0;
}
