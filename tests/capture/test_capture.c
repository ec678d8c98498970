// SPDX-License-Identifier: MIT
/* tests/capture: writer/reader round trip and every kind of damaged capture. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include <zstd.h>

#include "capture.h"
#include "../../bpf/profile.h"
#include "../flamegraph/test.h"

#define ARRAY_SIZE_(a) (sizeof(a) / sizeof((a)[0]))
#define META_LEN       40 /* payload of a meta record with empty strings */

static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
				7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};
static const uint64_t uips[] = {0x401136, 0x401200, 0x7f0000001000};
static const uint64_t kips[] = {0xffffffff81000010, 0xffffffff81000123};

/* Writes a small capture with every record type into a malloc'ed buffer. */
static uint8_t *make_capture(size_t *len, int nr_counts)
{
	char *mem = NULL;
	size_t sz = 0;
	FILE *fp = open_memstream(&mem, &sz);
	struct capture_writer *w = capture_writer__new(fp, 0);
	struct capture_record recs[] = {
		{.type = CAPTURE_META,
		 .meta = {.mode = CAPTURE_MODE_EVENT,
			  .freq = 99,
			  .start_ns = 1,
			  .max_depth = 127,
			  .user_depth = 512,
			  .host = "box",
			  .kernel = "6.1.0",
			  .version = "0.1.0",
			  .clock = "monotonic",
			  .event = "uprobe:libc.so.6:malloc",
			  .event_weight = 1,
			  .event_flags = CAPTURE_EVENT_LATENCY,
			  .event_period = 100,
			  .interval_ns = 500000000,
			  .target = "PID 42 (split)"}},
		{.type = CAPTURE_PROC, .proc = {.pid = 42, .gen = 7, .comm = "split"}},
		{.type = CAPTURE_MAPPING,
		 .map = {.pid = 42,
			 .gen = 7,
			 .kind = CAPTURE_MAP_FILE,
			 .start = 0x400000,
			 .end = 0x402000,
			 .pgoff = 0,
			 .build_id = bid,
			 .build_id_len = 20,
			 .path = "/usr/bin/split"}},
		{.type = CAPTURE_MAPPING,
		 .map = {.pid = 42,
			 .gen = 7,
			 .kind = CAPTURE_MAP_ANON,
			 .start = 0x7f0000000000,
			 .end = 0x7f0000010000,
			 .path = ""}},
		{.type = CAPTURE_KSYM,
		 .ksym = {.start = 0xffffffff81000000,
			  .end = 0xffffffff81000200,
			  .name = "do_thing",
			  .module = ""}},
		{.type = CAPTURE_JIT,
		 .jit = {.pid = 42,
			 .flags = CAPTURE_JIT_FOUND,
			 .addr = 0x7f0000000fff,
			 .offset = 0x10,
			 .name = "Interpreted:foo"}},
		{.type = CAPTURE_PYCODE,
		 .pycode = {.pid = 42,
			    .guard = 0xdeadbeef,
			    .gen = 7,
			    .addr = 0x7f1234560000,
			    .firstlineno = 12,
			    .pep657 = 1,
			    .linetable_len = 3,
			    .linetable = (const uint8_t *)"\x80\x01\x02",
			    .qualname = "Sleeper.nap",
			    .file = "/srv/app/sleeper.py"}},
	};
	struct capture_record cnt = {.type = CAPTURE_COUNT,
				     .count = {.pid = 42,
					       .gen = 7,
					       .key_flags = 0,
					       .value = 0,
					       .comm = "split",
					       .cflags = CAPTURE_COUNT_USER | CAPTURE_COUNT_KERNEL,
					       .nr_user = 3,
					       .nr_kernel = 2,
					       .user = uips,
					       .kernel = kips}};
	struct capture_record st = {.type = CAPTURE_STATS,
				    .stats = {.elapsed_ns = 5000000000ull,
					      .nr_cpus = 2,
					      .nr_bpf = 3,
					      .drain_lost = 1,
					      .bpf = {10, 0, 9},
					      .nr_intervals = 4}};

	CHECK(w != NULL);
	for (size_t i = 0; i < ARRAY_SIZE_(recs); i++)
		CHECK(capture_writer__add(w, &recs[i]) == 0);
	for (int i = 0; i < nr_counts; i++) {
		cnt.count.value = 100 + i;
		cnt.count.interval = (uint32_t)(i % 3 ? 3 - i % 3 : 0); /* 0, 2, 1, 0, ... */
		CHECK(capture_writer__add(w, &cnt) == 0);
	}
	CHECK(capture_writer__add(w, &st) == 0);
	CHECK(capture_writer__finish(w) == 0);
	capture_writer__free(w);
	fclose(fp);
	*len = sz;
	return (uint8_t *)mem;
}

/* Reads everything; returns the number of records, or the negative error. */
static int read_all(const uint8_t *data, size_t len, char *msg, size_t msg_len)
{
	struct capture_reader *r = capture_reader__new(data, len);
	struct capture_record rec;
	int n = 0, ret;

	if (!r) {
		snprintf(msg, msg_len, "%s", capture_reader__open_error(errno));
		return -errno;
	}
	while ((ret = capture_reader__next(r, &rec)) == 1)
		n++;
	snprintf(msg, msg_len, "%s", capture_reader__error(r));
	capture_reader__free(r);
	return ret < 0 ? ret : n;
}

static void test_round_trip(void)
{
	size_t len;
	uint8_t *data = make_capture(&len, 3);
	struct capture_reader *r = capture_reader__new(data, len);
	struct capture_record rec;
	int n = 0, counts = 0, ret;
	unsigned major, minor;

	CHECK(r != NULL);
	capture_reader__version(r, &major, &minor);
	CHECK(major == CAPTURE_VERSION_MAJOR && minor == CAPTURE_VERSION_MINOR);
	while ((ret = capture_reader__next(r, &rec)) == 1) {
		n++;
		switch (rec.type) {
		case CAPTURE_META:
			CHECK(n == 1);
			CHECK(rec.meta.freq == 99 && rec.meta.max_depth == 127 &&
			      rec.meta.user_depth == 512);
			CHECK_STR(rec.meta.host, "box");
			CHECK_STR(rec.meta.kernel, "6.1.0");
			CHECK_STR(rec.meta.clock, "monotonic");
			CHECK(rec.meta.mode == CAPTURE_MODE_EVENT);
			CHECK_STR(rec.meta.event, "uprobe:libc.so.6:malloc");
			CHECK(rec.meta.event_weight == 1 && rec.meta.event_period == 100 &&
			      rec.meta.event_flags == CAPTURE_EVENT_LATENCY);
			CHECK(rec.meta.interval_ns == 500000000);
			CHECK_STR(rec.meta.target, "PID 42 (split)");
			break;
		case CAPTURE_PROC:
			CHECK(rec.proc.pid == 42 && rec.proc.gen == 7);
			CHECK_STR(rec.proc.comm, "split");
			break;
		case CAPTURE_MAPPING:
			CHECK(rec.map.pid == 42 && rec.map.gen == 7);
			if (rec.map.kind == CAPTURE_MAP_FILE) {
				CHECK(rec.map.start == 0x400000 && rec.map.end == 0x402000);
				CHECK(rec.map.build_id_len == 20 &&
				      !memcmp(rec.map.build_id, bid, 20));
				CHECK_STR(rec.map.path, "/usr/bin/split");
			} else {
				CHECK(rec.map.kind == CAPTURE_MAP_ANON && !rec.map.build_id_len);
				CHECK_STR(rec.map.path, "");
			}
			break;
		case CAPTURE_COUNT:
			CHECK(rec.count.value == 100u + counts);
			CHECK(rec.count.interval == (uint32_t)(counts % 3 ? 3 - counts % 3 : 0));
			CHECK(rec.count.nr_user == 3 && rec.count.nr_kernel == 2);
			CHECK(!memcmp(rec.count.user, uips, sizeof(uips)));
			CHECK(!memcmp(rec.count.kernel, kips, sizeof(kips)));
			CHECK(!strncmp(rec.count.comm, "split", 16));
			counts++;
			break;
		case CAPTURE_KSYM:
			CHECK(rec.ksym.start == 0xffffffff81000000);
			CHECK_STR(rec.ksym.name, "do_thing");
			CHECK_STR(rec.ksym.module, "");
			break;
		case CAPTURE_JIT:
			CHECK(rec.jit.addr == 0x7f0000000fff && rec.jit.offset == 0x10);
			CHECK_STR(rec.jit.name, "Interpreted:foo");
			break;
		case CAPTURE_PYCODE:
			CHECK(rec.pycode.pid == 42 && rec.pycode.gen == 7 &&
			      rec.pycode.guard == 0xdeadbeef && rec.pycode.addr == 0x7f1234560000);
			CHECK(rec.pycode.firstlineno == 12 && rec.pycode.pep657 == 1);
			CHECK(rec.pycode.linetable_len == 3 && rec.pycode.linetable &&
			      !memcmp(rec.pycode.linetable, "\x80\x01\x02", 3));
			CHECK_STR(rec.pycode.qualname, "Sleeper.nap");
			CHECK_STR(rec.pycode.file, "/srv/app/sleeper.py");
			break;
		case CAPTURE_STATS:
			CHECK(rec.stats.nr_cpus == 2 && rec.stats.nr_bpf == 3);
			CHECK(rec.stats.bpf[2] == 9 && rec.stats.drain_lost == 1);
			CHECK(rec.stats.nr_intervals == 4);
			break;
		default:
			CHECK(!"unexpected record type");
		}
	}
	CHECK(ret == 0);
	CHECK(n == 11 && counts == 3);
	/* after the end, still the end */
	capture_reader__free(r);
	free(data);
}

/* The writer refuses what the reader would refuse, and the stream stays usable. */
static void test_writer_caps(void)
{
	char *mem = NULL, big[CAPTURE_MAX_STRING + 2];
	size_t sz = 0;
	FILE *fp = open_memstream(&mem, &sz);
	struct capture_writer *w = capture_writer__new(fp, 0);
	struct capture_record meta = {.type = CAPTURE_META, .meta = {.freq = 1, .max_depth = 127}};
	struct capture_record rec = {.type = CAPTURE_PROC, .proc = {.pid = 1, .comm = big}};
	uint64_t ips[CAPTURE_MAX_USER + 1] = {};
	struct capture_record cnt = {.type = CAPTURE_COUNT,
				     .count = {.cflags = CAPTURE_COUNT_USER,
					       .nr_user = CAPTURE_MAX_USER + 1,
					       .user = ips}};
	char msg[256];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(capture_writer__add(w, &meta) == 0);
	CHECK(capture_writer__add(w, &rec) == -EINVAL);
	CHECK(capture_writer__add(w, &cnt) == -EINVAL);
	cnt.count.nr_user = CAPTURE_MAX_USER; /* a stack as deep as a walk keeps: read back */
	CHECK(capture_writer__add(w, &cnt) == 0);
	cnt.count.interval = CAPTURE_MAX_INTERVALS; /* beyond the timeline */
	CHECK(capture_writer__add(w, &cnt) == -EINVAL);
	cnt.count.interval = 0;
	cnt.count.nr_user = 2;
	cnt.count.cflags = 0; /* addresses without the flag */
	CHECK(capture_writer__add(w, &cnt) == -EINVAL);
	CHECK(capture_writer__finish(w) == 0);
	capture_writer__free(w);
	fclose(fp);
	CHECK(read_all((uint8_t *)mem, sz, msg, sizeof(msg)) == 2);
	free(mem);
}

/* A capture made of a header and the raw record bytes @raw[0..n), compressed here. */
static uint8_t *pack(const void *raw, size_t n, unsigned major, unsigned minor, size_t *len)
{
	size_t bound = ZSTD_compressBound(n);
	uint8_t *out = malloc(CAPTURE_HEADER_SIZE + bound);
	size_t z;

	memcpy(out, CAPTURE_MAGIC, 8);
	out[8] = major;
	out[9] = 0;
	out[10] = minor;
	out[11] = 0;
	out[12] = 1;
	out[13] = out[14] = out[15] = 0;
	z = ZSTD_compress(out + CAPTURE_HEADER_SIZE, bound, raw, n, 3);
	CHECK(!ZSTD_isError(z));
	*len = CAPTURE_HEADER_SIZE + z;
	return out;
}

/* The decompressed records of a capture (malloc'ed). */
static uint8_t *unpack(const uint8_t *data, size_t len, size_t *n)
{
	unsigned long long sz;
	uint8_t *out;

	sz = ZSTD_getFrameContentSize(data + CAPTURE_HEADER_SIZE, len - CAPTURE_HEADER_SIZE);
	if (sz == ZSTD_CONTENTSIZE_UNKNOWN || sz == ZSTD_CONTENTSIZE_ERROR)
		sz = 1 << 20;
	out = malloc(sz);
	*n = ZSTD_decompress(out, sz, data + CAPTURE_HEADER_SIZE, len - CAPTURE_HEADER_SIZE);
	CHECK(!ZSTD_isError(*n));
	return out;
}

static void expect_error(const uint8_t *data, size_t len, const char *what, const char *want)
{
	char msg[256];
	int ret = read_all(data, len, msg, sizeof(msg));

	if (ret >= 0 || !msg[0] || strchr(msg, '\n') || (want && !strstr(msg, want))) {
		fprintf(stderr, "%s: got %d '%s', want an error with '%s'\n", what, ret, msg,
			want ? want : "");
		test_failures++;
	}
}

/* Cut the records at every record boundary (recompressed: a valid zstd frame). */
static void test_truncated_records(void)
{
	size_t len, n, off = 0, plen;
	uint8_t *data = make_capture(&len, 4), *raw = unpack(data, len, &n), *p;
	int boundaries = 0;

	while (off < n) {
		uint32_t rl = raw[off] | raw[off + 1] << 8 | raw[off + 2] << 16 |
			      (uint32_t)raw[off + 3] << 24;
		char what[64];

		snprintf(what, sizeof(what), "cut at record boundary %zu", off);
		p = pack(raw, off, 1, 0, &plen);
		expect_error(p, plen, what, off ? "truncated" : "truncated");
		free(p);
		/* and in the middle of the record */
		p = pack(raw, off + 5, 1, 0, &plen);
		expect_error(p, plen, "cut in a record header", "truncated");
		free(p);
		off += CAPTURE_RECORD_HEADER + rl;
		boundaries++;
	}
	CHECK(off == n && boundaries == 13);
	free(raw);
	free(data);
}

static void test_truncated_file(void)
{
	size_t len;
	uint8_t *data = make_capture(&len, 200);
	char what[64];

	for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : 37) {
		snprintf(what, sizeof(what), "file cut at %zu of %zu", cut, len);
		expect_error(data, cut, what, NULL);
	}
	free(data);
}

/*
 * Every flipped bit is an error, or left the decoded records byte for byte the same
 * (zstd's checksum covers the content, not every bit of its encoding: a flipped
 * window-size bit or an unused padding bit changes nothing).
 */
static void test_flipped(void)
{
	size_t len, n0, n1;
	uint8_t *data = make_capture(&len, 20), *raw0 = unpack(data, len, &n0), *raw1;
	char msg[256];
	int ret, errors = 0, same = 0;

	for (size_t i = 0; i < len; i++) {
		if (i == 10 || i == 11)
			continue; /* the minor version: any value is legal */
		for (int bit = 0; bit < 8; bit += 3) {
			data[i] ^= 1 << bit;
			ret = read_all(data, len, msg, sizeof(msg));
			if (ret < 0) {
				errors++;
				CHECK(msg[0] && !strchr(msg, '\n'));
			} else {
				size_t z = ZSTD_decompress(raw1 = malloc(n0 + 1), n0 + 1,
							   data + CAPTURE_HEADER_SIZE,
							   len - CAPTURE_HEADER_SIZE);

				n1 = ZSTD_isError(z) ? 0 : z;
				if (i < CAPTURE_HEADER_SIZE || n1 != n0 || memcmp(raw0, raw1, n0)) {
					fprintf(stderr,
						"bit %d of byte %zu flipped: read as valid "
						"but the records differ\n",
						bit, i);
					test_failures++;
				}
				same++;
				free(raw1);
			}
			data[i] ^= 1 << bit;
		}
	}
	printf("flipped bits: %d rejected, %d harmless (same records)\n", errors, same);
	CHECK(errors > 10 * same);
	free(raw0);
	free(data);
}

static void test_header(void)
{
	size_t len;
	uint8_t *data = make_capture(&len, 1);
	char msg[256];

	data[0] = 'X';
	CHECK(read_all(data, len, msg, sizeof(msg)) == -EBADMSG);
	data[0] = 'S';
	data[8] = 2; /* a future major version */
	CHECK(read_all(data, len, msg, sizeof(msg)) == -EPROTONOSUPPORT);
	data[8] = 1;
	CHECK(read_all(data, 5, msg, sizeof(msg)) == -EBADMSG);
	CHECK(read_all(data, len, msg, sizeof(msg)) == 9);
	free(data);
}

/* Hand-built record streams. */
struct raw {
	uint8_t b[4096];
	size_t n;
};

static void raw_le(struct raw *r, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		r->b[r->n++] = (uint8_t)(v >> (8 * i));
}

static void raw_meta(struct raw *r)
{
	raw_le(r, META_LEN, 4);
	raw_le(r, CAPTURE_META, 2);
	raw_le(r, 0, 2);
	raw_le(r, 0, 4);  /* mode */
	raw_le(r, 0, 4);  /* flags */
	raw_le(r, 99, 8); /* freq */
	raw_le(r, 0, 8);
	raw_le(r, 127, 4);
	raw_le(r, 0, 4);
	for (int i = 0; i < 4; i++)
		raw_le(r, 0, 2); /* empty strings */
}

static void raw_end(struct raw *r, uint64_t records)
{
	raw_le(r, 8, 4);
	raw_le(r, CAPTURE_END, 2);
	raw_le(r, 0, 2);
	raw_le(r, records, 8);
}

/* A count record's header and fixed fields claiming @len payload bytes and @nr_user addresses. */
static void raw_count(struct raw *r, uint32_t len, uint16_t nr_user)
{
	raw_le(r, len, 4);
	raw_le(r, CAPTURE_COUNT, 2);
	raw_le(r, 0, 2);
	raw_le(r, 1, 4); /* pid */
	raw_le(r, 0, 4);
	raw_le(r, 0, 8); /* gen */
	raw_le(r, 1, 8); /* value */
	raw_le(r, 0, 8); /* comm */
	raw_le(r, 0, 8);
	raw_le(r, CAPTURE_COUNT_USER, 4);
	raw_le(r, nr_user, 2);
	raw_le(r, 0, 2);
}

static void check_raw(struct raw *r, unsigned minor, const char *what, const char *want)
{
	size_t len;
	uint8_t *p = pack(r->b, r->n, 1, minor, &len);

	expect_error(p, len, what, want);
	free(p);
}

static void test_absurd(void)
{
	struct raw r = {};
	size_t len;
	uint8_t *p;
	char msg[256];

	/* a valid minimal capture first: meta and end */
	raw_meta(&r);
	raw_end(&r, 1);
	p = pack(r.b, r.n, 1, 0, &len);
	CHECK(read_all(p, len, msg, sizeof(msg)) == 1);
	free(p);

	/* a record claiming 4 GiB */
	r.n = 0;
	raw_meta(&r);
	raw_le(&r, 0xffffffff, 4);
	raw_le(&r, CAPTURE_COUNT, 2);
	raw_le(&r, 0, 2);
	check_raw(&r, 0, "4 GiB record", "claims 4294967295 bytes");

	/* a record claiming more than remains */
	r.n = 0;
	raw_meta(&r);
	raw_le(&r, 4000, 4);
	raw_le(&r, CAPTURE_PROC, 2);
	raw_le(&r, 0, 2);
	raw_le(&r, 1, 8);
	check_raw(&r, 0, "record longer than the data", "remain");

	/* a count with 2000 user addresses */
	r.n = 0;
	raw_meta(&r);
	raw_count(&r, 48, 2000);
	raw_end(&r, 2);
	check_raw(&r, 0, "2000 addresses", "at most 1080 and 127");

	/* a count with 5 addresses and room for none */
	r.b[8 + META_LEN + 8 + 44] = 5;
	r.b[8 + META_LEN + 8 + 45] = 0;
	check_raw(&r, 0, "addresses beyond the record", "remain");

	/* a string longer than its record */
	r.n = 0;
	raw_meta(&r);
	raw_le(&r, 18, 4);
	raw_le(&r, CAPTURE_PROC, 2);
	raw_le(&r, 0, 2);
	raw_le(&r, 1, 4);
	raw_le(&r, 0, 4);
	raw_le(&r, 0, 8);
	raw_le(&r, 0xfff0, 2);
	raw_end(&r, 2);
	check_raw(&r, 0, "string beyond the record", "too short");

	/* an unknown type: an error at our minor version, skipped from a newer one */
	r.n = 0;
	raw_meta(&r);
	raw_le(&r, 3, 4);
	raw_le(&r, 99, 2);
	raw_le(&r, 0, 2);
	raw_le(&r, 0xabcdef, 3);
	raw_end(&r, 2);
	check_raw(&r, 0, "unknown type", "unknown type 99");
	p = pack(r.b, r.n, 1, CAPTURE_VERSION_MINOR + 1, &len);
	CHECK(read_all(p, len, msg, sizeof(msg)) == 1);
	free(p);

	/* the first record is not meta */
	r.n = 0;
	raw_end(&r, 0);
	check_raw(&r, 0, "no meta", "not meta");

	/* records after the end */
	r.n = 0;
	raw_meta(&r);
	raw_end(&r, 1);
	raw_end(&r, 1);
	check_raw(&r, 0, "after the end", "after the end record");

	/* an end record that disagrees with the records seen */
	r.n = 0;
	raw_meta(&r);
	raw_end(&r, 5);
	check_raw(&r, 0, "end count", "missing");

	/* two zstd frames: bytes after the compressed stream */
	r.n = 0;
	raw_meta(&r);
	raw_end(&r, 1);
	p = pack(r.b, r.n, 1, 0, &len);
	{
		uint8_t *q = malloc(len * 2);

		memcpy(q, p, len);
		memcpy(q + len, p + CAPTURE_HEADER_SIZE, len - CAPTURE_HEADER_SIZE);
		expect_error(q, len * 2 - CAPTURE_HEADER_SIZE, "two frames", "after the end");
		free(q);
	}
	free(p);
}

/* The first count of a capture, and its meta record (strings not kept). */
static int first_count(const uint8_t *data, size_t len, struct capture_meta *meta,
		       struct capture_count *count)
{
	struct capture_reader *r = capture_reader__new(data, len);
	struct capture_record rec;
	int ret, found = 0;

	CHECK(r != NULL);
	while ((ret = capture_reader__next(r, &rec)) == 1) {
		if (rec.type == CAPTURE_META)
			*meta = rec.meta;
		if (rec.type == CAPTURE_COUNT && !found++)
			*count = rec.count;
	}
	capture_reader__free(r);
	return ret < 0 ? ret : found;
}

/* The meta record's target of @data[0..len) is @want. */
static void check_target(const uint8_t *data, size_t len, const char *want)
{
	struct capture_reader *r = capture_reader__new(data, len);
	struct capture_record rec;
	int ret, metas = 0;

	CHECK(r != NULL);
	while (r && (ret = capture_reader__next(r, &rec)) == 1) {
		if (rec.type != CAPTURE_META)
			continue;
		metas++;
		CHECK_STR(rec.meta.target, want);
		CHECK(rec.meta.interval_ns == 0 && rec.meta.mode == CAPTURE_MODE_CPU);
	}
	CHECK(r && ret == 0 && metas == 1);
	capture_reader__free(r);
}

/*
 * The target (since 1.5): after the interval, the event fields and the interval then
 * written empty; a meta without it (older writers, or no target) reads as "".
 */
static void test_target(void)
{
	struct capture_record m = {
		.type = CAPTURE_META,
		.meta = {.mode = CAPTURE_MODE_CPU, .freq = 99, .max_depth = 127}};
	struct raw r = {};
	char *mem = NULL;
	size_t sz = 0, len;
	FILE *fp;
	struct capture_writer *w;
	uint8_t *p;

	for (int i = 0; i < 2; i++) {
		m.meta.target = i ? "command: make -j8" : NULL;
		mem = NULL, sz = 0;
		fp = open_memstream(&mem, &sz);
		w = capture_writer__new(fp, 0);
		CHECK(capture_writer__add(w, &m) == 0);
		CHECK(capture_writer__finish(w) == 0);
		capture_writer__free(w);
		fclose(fp);
		check_target((uint8_t *)mem, sz, i ? "command: make -j8" : "");
		free(mem);
	}
	/* byte by byte as docs/capture-format.md says */
	raw_le(&r, META_LEN + 2 + 4 + 4 + 8 + 2 + 8 + 2 + 8, 4);
	raw_le(&r, CAPTURE_META, 2);
	raw_le(&r, 0, 2);
	raw_le(&r, CAPTURE_MODE_CPU, 4);
	raw_le(&r, 0, 4);
	raw_le(&r, 99, 8);
	raw_le(&r, 0, 8);
	raw_le(&r, 127, 4);
	raw_le(&r, 0, 4);
	for (int i = 0; i < 5; i++)
		raw_le(&r, 0, 2); /* host, kernel, version, clock, event: empty */
	raw_le(&r, 0, 4);	  /* --weight */
	raw_le(&r, 0, 4);	  /* event flags */
	raw_le(&r, 0, 8);	  /* --period */
	raw_le(&r, 0, 2);	  /* --weight's unit */
	raw_le(&r, 0, 8);	  /* interval_ns: none */
	raw_le(&r, 8, 2);	  /* target */
	memcpy(&r.b[r.n], "all CPUs", 8);
	r.n += 8;
	raw_end(&r, 1);
	p = pack(r.b, r.n, 1, 5, &len);
	check_target(p, len, "all CPUs");
	free(p);
}

/*
 * --interval (since 1.4): meta's interval_ns after the event fields, count's interval
 * after its addresses; records without them (older writers) read as 0.
 */
static void test_intervals(void)
{
	struct capture_meta meta;
	struct capture_count count;
	struct raw r = {};
	size_t len, at;
	uint8_t *p;

	/* the layouts older writers wrote: a 1.1 meta, a count ending at its addresses */
	raw_meta(&r);
	raw_count(&r, 48, 0);
	raw_end(&r, 2);
	p = pack(r.b, r.n, 1, 3, &len);
	memset(&meta, 0xff, sizeof(meta));
	memset(&count, 0xff, sizeof(count));
	CHECK(first_count(p, len, &meta, &count) == 1);
	CHECK(meta.interval_ns == 0 && count.interval == 0 && count.value == 1);
	free(p);

	/* a cpu capture with intervals, byte by byte as docs/capture-format.md says */
	r.n = 0;
	raw_le(&r, META_LEN + 2 + 4 + 4 + 8 + 2 + 8, 4);
	raw_le(&r, CAPTURE_META, 2);
	raw_le(&r, 0, 2);
	raw_le(&r, CAPTURE_MODE_CPU, 4);
	raw_le(&r, 0, 4);
	raw_le(&r, 99, 8);
	raw_le(&r, 0, 8);
	raw_le(&r, 127, 4);
	raw_le(&r, 0, 4);
	for (int i = 0; i < 5; i++)
		raw_le(&r, 0, 2); /* host, kernel, version, clock, event: empty */
	raw_le(&r, 0, 4);	  /* --weight */
	raw_le(&r, 0, 4);	  /* event flags */
	raw_le(&r, 0, 8);	  /* --period */
	raw_le(&r, 0, 2);	  /* --weight's unit */
	raw_le(&r, 250000000, 8); /* interval_ns */
	raw_count(&r, 52, 0);
	at = r.n;
	raw_le(&r, 7, 4); /* interval */
	raw_end(&r, 2);
	p = pack(r.b, r.n, 1, 4, &len);
	CHECK(first_count(p, len, &meta, &count) == 1);
	CHECK(meta.mode == CAPTURE_MODE_CPU && meta.interval_ns == 250000000);
	CHECK(count.interval == 7 && count.value == 1);
	free(p);

	/* an interval beyond the cap: an error, nothing allocated from it */
	r.b[at] = 0, r.b[at + 1] = 0, r.b[at + 2] = 1; /* 65536 */
	check_raw(&r, 4, "interval 65536", "interval 65536 (at most 65536 intervals)");
	r.b[at] = 0xff, r.b[at + 1] = 0xff, r.b[at + 2] = 0xff, r.b[at + 3] = 0xff;
	check_raw(&r, 4, "interval 2^32-1", "at most 65536 intervals");

	/* stats: the number of intervals, bounded */
	r.n = at;
	raw_le(&r, 7, 4);
	raw_le(&r, 80 + 4, 4);
	raw_le(&r, CAPTURE_STATS, 2);
	raw_le(&r, 0, 2);
	for (int i = 0; i < 80; i++)
		raw_le(&r, 0, 1); /* elapsed, CPUs, no counters, ... */
	raw_le(&r, 70000, 4);
	raw_end(&r, 3);
	check_raw(&r, 4, "70000 intervals", "70000 intervals (at most 65536");

	/* an interval in a capture that has none */
	r.n = 0;
	raw_meta(&r);
	raw_count(&r, 52, 0);
	raw_le(&r, 2, 4);
	raw_end(&r, 2);
	check_raw(&r, 4, "interval without intervals", "interval 2 in a capture without intervals");

	/* the writer: a cpu capture with intervals reads back the same */
	{
		char *mem = NULL;
		size_t sz = 0;
		FILE *fp = open_memstream(&mem, &sz);
		struct capture_writer *w = capture_writer__new(fp, 0);
		struct capture_record m = {.type = CAPTURE_META,
					   .meta = {.mode = CAPTURE_MODE_OFFCPU,
						    .freq = 1,
						    .max_depth = 127,
						    .interval_ns = 10000000}};
		struct capture_record c = {.type = CAPTURE_COUNT,
					   .count = {.pid = 9, .value = 5, .interval = 65535}};

		CHECK(capture_writer__add(w, &m) == 0);
		CHECK(capture_writer__add(w, &c) == 0);
		CHECK(capture_writer__finish(w) == 0);
		capture_writer__free(w);
		fclose(fp);
		CHECK(first_count((uint8_t *)mem, sz, &meta, &count) == 1);
		CHECK(meta.mode == CAPTURE_MODE_OFFCPU && meta.interval_ns == 10000000);
		CHECK(count.pid == 9 && count.value == 5 && count.interval == 65535);
		free(mem);
	}
}

/* `test_capture --seed DIR`: writes the fuzz seed corpus. */
static int write_seeds(const char *dir)
{
	int counts[] = {0, 1, 5};
	char path[4096];

	for (size_t i = 0; i < ARRAY_SIZE_(counts); i++) {
		size_t len;
		uint8_t *data = make_capture(&len, counts[i]);
		FILE *fp;

		snprintf(path, sizeof(path), "%s/seed%zu.scorch", dir, i);
		fp = fopen(path, "wb");
		if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp)) {
			perror(path);
			return 1;
		}
		free(data);
	}
	/* oversized records: one byte over the record limit, 4 GiB, a 1000-address count */
	for (size_t i = 0; i < 3; i++) {
		static const uint32_t claim[] = {CAPTURE_MAX_RECORD + 1, 0xffffffff, 48};
		struct raw r = {};
		size_t len;
		uint8_t *data;
		FILE *fp;

		raw_meta(&r);
		raw_count(&r, claim[i], 1000);
		raw_end(&r, 2);
		data = pack(r.b, r.n, 1, 0, &len);
		snprintf(path, sizeof(path), "%s/oversized%zu.scorch", dir, i);
		fp = fopen(path, "wb");
		if (!data || !fp || fwrite(data, 1, len, fp) != len || fclose(fp)) {
			perror(path);
			return 1;
		}
		free(data);
	}
	return 0;
}

/*
 * `test_capture --big FILE N`: a capture of N counts of 120 user frames each (64
 * distinct stacks, so it compresses to little), for the memory test of scorch report.
 */
/*
 * The beginning of a capture file written to @path: @meta, then process 42 named
 * @comm with one anonymous mapping at 0x7f0000000000 (1 MiB) for its counts. Returns
 * the writer (*@fp its file), or NULL with *@fp to close (or NULL).
 */
static struct capture_writer *begin_file(const char *path, const struct capture_meta *meta,
					 const char *comm, FILE **fp)
{
	struct capture_record r = {.type = CAPTURE_META, .meta = *meta};
	struct capture_writer *w;

	*fp = fopen(path, "wb");
	w = *fp ? capture_writer__new(*fp, 0) : NULL;
	if (!w || capture_writer__add(w, &r))
		goto fail;
	r = (struct capture_record){.type = CAPTURE_PROC, .proc = {.pid = 42, .comm = comm}};
	if (capture_writer__add(w, &r))
		goto fail;
	r = (struct capture_record){.type = CAPTURE_MAPPING,
				    .map = {.pid = 42,
					    .kind = CAPTURE_MAP_ANON,
					    .start = 0x7f0000000000,
					    .end = 0x7f0000100000,
					    .path = ""}};
	if (!capture_writer__add(w, &r))
		return w;
fail:
	capture_writer__free(w);
	return NULL;
}

/* The end of begin_file()'s capture: 0, or 1 with a message when anything failed. */
static int end_file(struct capture_writer *w, FILE *fp, const char *path, int err)
{
	err = err || !w || capture_writer__finish(w);
	capture_writer__free(w);
	if ((fp && fclose(fp)) || err) {
		fprintf(stderr, "test_capture: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

static int write_big(const char *path, long n)
{
	const struct capture_meta meta = {.mode = CAPTURE_MODE_CPU,
					  .freq = 99,
					  .max_depth = 127,
					  .host = "box",
					  .kernel = "6.1.0",
					  .version = "0.1.0",
					  .clock = "monotonic"};
	struct capture_record r;
	uint64_t ips[120];
	FILE *fp;
	struct capture_writer *w = begin_file(path, &meta, "big", &fp);
	int err = !w;

	for (long i = 0; i < n && !err; i++) {
		for (size_t j = 0; j < ARRAY_SIZE_(ips); j++)
			ips[j] = 0x7f0000000000 + ((uint64_t)(i % 64) << 12) + j * 16;
		r = (struct capture_record){.type = CAPTURE_COUNT,
					    .count = {.pid = 42,
						      .value = 1,
						      .comm = "big",
						      .cflags = CAPTURE_COUNT_USER,
						      .nr_user = ARRAY_SIZE_(ips),
						      .user = ips}};
		err = capture_writer__add(w, &r);
	}
	return end_file(w, fp, path, err);
}

/*
 * `test_capture --intervals FILE`: a capture of 0.5 s intervals, six of them, whose
 * counts come out of interval order (4, 1, 0, 2, 4, 1, ...): interval k holds
 * 10 * (k + 1) samples, in stacks shared between intervals, except interval 3 and the
 * last, which hold none.
 */
static int write_intervals(const char *path)
{
	static const uint32_t order[] = {4, 1, 0, 2, 4, 1, 2, 4, 0, 1};
	uint32_t left[6] = {10, 20, 30, 0, 50, 0};
	const struct capture_meta meta = {.mode = CAPTURE_MODE_CPU,
					  .freq = 99,
					  .max_depth = 127,
					  .clock = "monotonic",
					  .interval_ns = 500000000};
	struct capture_record r;
	uint64_t ips[3];
	FILE *fp;
	struct capture_writer *w = begin_file(path, &meta, "iv", &fp);
	int err = !w;

	for (size_t i = 0; !err && (left[0] || left[1] || left[2] || left[4]); i++) {
		uint32_t k = order[i % ARRAY_SIZE_(order)];
		uint32_t v = left[k] < 3 ? left[k] : 3;

		if (!v)
			continue;
		left[k] -= v;
		for (size_t j = 0; j < ARRAY_SIZE_(ips); j++)
			ips[j] = 0x7f0000000000 + ((uint64_t)(i % 4) << 12) + j * 16;
		r = (struct capture_record){.type = CAPTURE_COUNT,
					    .count = {.pid = 42,
						      .value = v,
						      .comm = "iv",
						      .cflags = CAPTURE_COUNT_USER,
						      .nr_user = ARRAY_SIZE_(ips),
						      .user = ips,
						      .interval = k}};
		err = capture_writer__add(w, &r);
	}
	r = (struct capture_record){
		.type = CAPTURE_STATS,
		.stats = {.elapsed_ns = 2900000000ull, .nr_cpus = 1, .nr_intervals = 6}};
	err = err || capture_writer__add(w, &r);
	return end_file(w, fp, path, err);
}

/*
 * `test_capture --summary MODE FILE`: a capture of MODE (cpu, offcpu, wall, event)
 * whose report prints that mode's summary with known figures, for the reader of
 * summaries in bench/summary.py (tests/bench/test_summary.py): 4.00 s on 2 CPUs at
 * 999 Hz; cpu and wall 7,990 samples (5,000 and 2,990); offcpu and wall 120 intervals,
 * 1.500 s off CPU; event 640 events at uprobe:/bin/true:main; in 2 stacks on each side
 * (wall 4). Kernel stacks only (do_thing, do_other): nothing to warn of.
 */
static int write_summary(const char *mode, const char *path)
{
	static const char *const modes[] = {
		[CAPTURE_MODE_CPU] = "cpu",
		[CAPTURE_MODE_OFFCPU] = "offcpu",
		[CAPTURE_MODE_WALL] = "wall",
		[CAPTURE_MODE_EVENT] = "event",
	};
	struct capture_meta meta = {.freq = 999,
				    .max_depth = 127,
				    .clock = "monotonic",
				    .event = "uprobe:/bin/true:main"};
	struct capture_record r = {.type = CAPTURE_KSYM,
				   .ksym = {.start = 0xffffffff81000000,
					    .end = 0xffffffff81000200,
					    .name = "do_thing",
					    .module = ""}};
	/* on CPU (samples or events), then off CPU (ns) */
	uint64_t on[2] = {5000, 2990}, off[2] = {1000000000, 500000000};
	uint64_t kips[2] = {0xffffffff81000010, 0xffffffff81000210};
	struct capture_writer *w;
	FILE *fp;
	int err;
	size_t m;

	for (m = 0; m < ARRAY_SIZE_(modes); m++)
		if (!strcmp(mode, modes[m]))
			break;
	if (m == ARRAY_SIZE_(modes)) {
		fprintf(stderr, "test_capture: unknown mode '%s' (cpu, offcpu, wall, event)\n",
			mode);
		return 2;
	}
	meta.mode = m;
	if (m == CAPTURE_MODE_EVENT)
		on[0] = 600, on[1] = 40;
	w = begin_file(path, &meta, "sum", &fp);
	err = !w || capture_writer__add(w, &r);
	r.ksym.start += 0x200, r.ksym.end += 0x200, r.ksym.name = "do_other";
	err = err || capture_writer__add(w, &r);
	for (int i = 0; i < 4 && !err; i++) {
		bool offcpu = i >= 2;

		if (offcpu ? m == CAPTURE_MODE_CPU || m == CAPTURE_MODE_EVENT
			   : m == CAPTURE_MODE_OFFCPU)
			continue;
		r = (struct capture_record){.type = CAPTURE_COUNT,
					    .count = {.pid = 42,
						      .value = offcpu ? off[i - 2] : on[i],
						      .comm = "sum",
						      .cflags = CAPTURE_COUNT_KERNEL |
								(offcpu ? CAPTURE_COUNT_OFFCPU : 0),
						      .nr_kernel = 1,
						      .kernel = &kips[i % 2]}};
		err = capture_writer__add(w, &r);
	}
	r = (struct capture_record){.type = CAPTURE_STATS,
				    .stats = {.elapsed_ns = 4000000000ull,
					      .nr_cpus = 2,
					      .nr_bpf = STAT_OFF_COUNTED + 1}};
	if (m != CAPTURE_MODE_OFFCPU)
		r.stats.bpf[STAT_SAMPLES] = r.stats.bpf[STAT_COUNTED] = on[0] + on[1];
	if (m == CAPTURE_MODE_OFFCPU || m == CAPTURE_MODE_WALL)
		r.stats.bpf[STAT_SWITCHES] = r.stats.bpf[STAT_OFF_COUNTED] = 120;
	err = err || capture_writer__add(w, &r);
	return end_file(w, fp, path, err);
}

/*
 * `test_capture --python FILE`: a CPython process's stacks without running one: process
 * 42 "python3", a native root and leaf in /nonexistent/python3 (named "[python3]") and
 * three Python frames
 * between them (bpf/profile.h's two words each), their code objects named by the
 * capture: <module> and handle in /srv/app/app.py, dumps in json/__init__.py. 60
 * samples in handle;dumps, 40 in <module> alone; a 1 s recording at 99 Hz.
 */
static int write_python(const char *path)
{
	static const struct {
		const char *qualname, *file;
		uint64_t addr;
	} codes[] = {
		{"<module>", "/srv/app/app.py", 0x7f1000001000},
		{"handle", "/srv/app/app.py", 0x7f1000002000},
		{"dumps", "/usr/lib/python3.11/json/__init__.py", 0x7f1000003000},
	};
	const struct capture_meta meta = {
		.mode = CAPTURE_MODE_CPU, .freq = 99, .max_depth = 127, .clock = "monotonic"};
#define PYW(i) (PY_WORD | codes[i].addr)
#define PYP(i) (PY_WORD | PY_WORD_POS | (uint64_t)4 << 32 | (uint32_t)(i + 1))
	/* leaf first; a frame's position word is on its root side */
	const uint64_t deep[] = {
		0x7f2000000100,		/* the native leaf */
		PYW(2),		PYP(2), /* dumps */
		PYW(1),		PYP(1), /* handle */
		PYW(0),		PYP(0), /* <module> */
		0x7f2000000200,		/* the native root */
	};
	const uint64_t shallow[] = {0x7f2000000100, PYW(0), PYP(0), 0x7f2000000200};
#undef PYW
#undef PYP
	struct capture_record r;
	FILE *fp;
	struct capture_writer *w = begin_file(path, &meta, "python3", &fp);
	int err = !w;

	r = (struct capture_record){.type = CAPTURE_MAPPING,
				    .map = {.pid = 42,
					    .kind = CAPTURE_MAP_FILE,
					    .start = 0x7f2000000000,
					    .end = 0x7f2000100000,
					    .path = "/nonexistent/python3"}};
	err = err || capture_writer__add(w, &r);
	for (size_t i = 0; i < ARRAY_SIZE_(codes) && !err; i++) {
		r = (struct capture_record){.type = CAPTURE_PYCODE,
					    .pycode = {.pid = 42,
						       .guard = (uint32_t)(i + 1),
						       .addr = codes[i].addr,
						       .firstlineno = 1,
						       .qualname = codes[i].qualname,
						       .file = codes[i].file}};
		err = capture_writer__add(w, &r);
	}
	for (int i = 0; i < 2 && !err; i++) {
		r = (struct capture_record){
			.type = CAPTURE_COUNT,
			.count = {.pid = 42,
				  .value = i ? 40 : 60,
				  .comm = "python3",
				  .cflags = CAPTURE_COUNT_USER,
				  .nr_user = i ? ARRAY_SIZE_(shallow) : ARRAY_SIZE_(deep),
				  .user = i ? shallow : deep}};
		err = capture_writer__add(w, &r);
	}
	r = (struct capture_record){
		.type = CAPTURE_STATS,
		.stats = {.elapsed_ns = 1000000000ull, .nr_cpus = 1, .nr_bpf = STAT_COUNTED + 1}};
	r.stats.bpf[STAT_SAMPLES] = r.stats.bpf[STAT_COUNTED] = 100;
	err = err || capture_writer__add(w, &r);
	return end_file(w, fp, path, err);
}

/*
 * `test_capture --describe FILE`: a cpu capture whose description is known: PID 42
 * (desc) on host "box", from 2025-01-02 03:04:05 UTC, 2 s at -F 1000 whose 500 samples
 * stand for 2000 periods (the governor lowered the rate to 250 Hz on average), 25 of
 * 500 lost (stack map full): "cpu at 1000 Hz (lowered: 250 Hz on average), PID 42
 * (desc), 2.00 s from 2025-01-02 03:04:05 UTC on box: 500 samples, 5.00% lost".
 */
static int write_describe(const char *path)
{
	const struct capture_meta meta = {.mode = CAPTURE_MODE_CPU,
					  .freq = 1000,
					  .max_depth = 127,
					  .start_ns = 1735787045000000000ull,
					  .host = "box",
					  .clock = "monotonic",
					  .target = "PID 42 (desc)"};
	uint64_t kip = 0xffffffff81000010;
	struct capture_record r = {.type = CAPTURE_KSYM,
				   .ksym = {.start = 0xffffffff81000000,
					    .end = 0xffffffff81000200,
					    .name = "do_thing",
					    .module = ""}};
	FILE *fp;
	struct capture_writer *w = begin_file(path, &meta, "desc", &fp);
	int err = !w || capture_writer__add(w, &r);

	r = (struct capture_record){.type = CAPTURE_COUNT,
				    .count = {.pid = 42,
					      .value = 500,
					      .comm = "desc",
					      .cflags = CAPTURE_COUNT_KERNEL,
					      .nr_kernel = 1,
					      .kernel = &kip}};
	err = err || capture_writer__add(w, &r);
	r = (struct capture_record){
		.type = CAPTURE_STATS,
		.stats = {.elapsed_ns = 2000000000ull, .nr_cpus = 1, .nr_bpf = STAT_PERIODS + 1}};
	r.stats.bpf[STAT_SAMPLES] = r.stats.bpf[STAT_COUNTED] = 500;
	r.stats.bpf[STAT_LOST_STACKS] = 25;
	r.stats.bpf[STAT_PERIODS] = 2000;
	err = err || capture_writer__add(w, &r);
	return end_file(w, fp, path, err);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--summary"))
		return write_summary(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "--intervals"))
		return write_intervals(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--describe"))
		return write_describe(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--python"))
		return write_python(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--seed"))
		return write_seeds(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "--big"))
		return write_big(argv[2], strtol(argv[3], NULL, 10));
	test_round_trip();
	test_writer_caps();
	test_header();
	test_truncated_records();
	test_truncated_file();
	test_flipped();
	test_absurd();
	test_intervals();
	test_target();
	return TEST_DONE();
}
