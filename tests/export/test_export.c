// SPDX-License-Identifier: MIT
/*
 * export: unit tests of the profile builder and the pprof writer. The pprof output is
 * decoded with protoc-c's generated unpack and every reference checked; the speedscope
 * output is written to argv[1]/argv[2] for test_export.py (json module, schema fields,
 * weights).
 *
 *   test_export OUT_DIR
 *   test_export --functions FILE.pb.gz
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "common.h"
#include "export.h"
#include "profile.pb-c.h"

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);            \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static struct profile *new_cpu_profile(void)
{
	struct profile_opts o = {
		.sz = sizeof(o),
		.nr_values = 2,
		.values = {{"samples", "count"}, {"cpu", "nanoseconds"}},
		.period_type = {"cpu", "nanoseconds"},
		.period = 10101010,
		.duration_nanos = 1000000000,
		.has_inline_frames = true,
	};

	return profile__new(&o);
}

/* gunzips @buf[0..len) into a malloc'ed buffer. */
static uint8_t *gunzip(const uint8_t *buf, size_t len, size_t *out_len)
{
	z_stream zs = {0};
	size_t cap = 1 << 16, n = 0;
	uint8_t *out = malloc(cap);
	int ret = Z_OK;

	if (!out || inflateInit2(&zs, 15 + 16) != Z_OK)
		return NULL;
	zs.next_in = (Bytef *)buf;
	zs.avail_in = len;
	while (ret != Z_STREAM_END) {
		if (array__grow((void **)&out, &cap, n + 1, 1))
			break;
		zs.next_out = out + n;
		zs.avail_out = cap - n;
		ret = inflate(&zs, Z_NO_FLUSH);
		n = cap - zs.avail_out;
		if (ret != Z_OK && ret != Z_STREAM_END)
			break;
	}
	inflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*out_len = n;
	return out;
}

static Perftools__Profiles__Profile *write_and_decode(const struct profile *p)
{
	Perftools__Profiles__Profile *pb;
	char *buf = NULL;
	size_t len = 0, raw_len;
	uint8_t *raw;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f);
	CHECK(profile__write_pprof(p, f) == 0);
	fclose(f);
	CHECK(len > 18 && (uint8_t)buf[0] == 0x1f && (uint8_t)buf[1] == 0x8b);
	raw = gunzip((uint8_t *)buf, len, &raw_len);
	CHECK(raw);
	free(buf);
	if (!raw)
		return NULL;
	pb = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	free(raw);
	CHECK(pb);
	return pb;
}

static const char *str(const Perftools__Profiles__Profile *pb, int64_t i)
{
	return i >= 0 && (size_t)i < pb->n_string_table ? pb->string_table[i] : NULL;
}

/* Every id referenced is defined, ids are 1..n in order, strings are in the table. */
static void check_refs(const Perftools__Profiles__Profile *pb)
{
	size_t i, j;

	CHECK(pb->n_string_table >= 1 && !strcmp(pb->string_table[0], ""));
	for (i = 0; i < pb->n_sample_type; i++)
		CHECK(str(pb, pb->sample_type[i]->type) && str(pb, pb->sample_type[i]->unit));
	for (i = 0; i < pb->n_mapping; i++) {
		CHECK(pb->mapping[i]->id == i + 1);
		CHECK(str(pb, pb->mapping[i]->filename) && str(pb, pb->mapping[i]->build_id));
	}
	for (i = 0; i < pb->n_function; i++) {
		CHECK(pb->function[i]->id == i + 1);
		CHECK(str(pb, pb->function[i]->name) && str(pb, pb->function[i]->filename));
		CHECK(str(pb, pb->function[i]->name)[0]);
	}
	for (i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];

		CHECK(l->id == i + 1);
		CHECK(l->mapping_id <= pb->n_mapping);
		CHECK(l->n_line >= 1);
		for (j = 0; j < l->n_line; j++)
			CHECK(l->line[j]->function_id >= 1 &&
			      l->line[j]->function_id <= pb->n_function);
	}
	for (i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];

		CHECK(s->n_value == pb->n_sample_type);
		CHECK(s->n_location_id >= 1);
		for (j = 0; j < s->n_location_id; j++)
			CHECK(s->location_id[j] >= 1 && s->location_id[j] <= pb->n_location);
		for (j = 0; j < s->n_label; j++)
			CHECK(str(pb, s->label[j]->key) && str(pb, s->label[j]->str));
	}
}

static const char *func_name(const Perftools__Profiles__Profile *pb, uint64_t loc, size_t line)
{
	const Perftools__Profiles__Location *l = pb->location[loc - 1];

	return str(pb, pb->function[l->line[line]->function_id - 1]->name);
}

static void test_interning_and_pprof(const char *json_path, const char *pb_path)
{
	static const uint8_t bid[] = {0xde, 0xad, 0xbe, 0xef, 0x01};
	struct profile *p = new_cpu_profile();
	struct profile_mapping exe = {.start = 0x400000,
				      .limit = 0x401000,
				      .offset = 0x1000,
				      .file = "/usr/bin/app",
				      .build_id = bid,
				      .build_id_len = sizeof(bid)};
	struct profile_mapping exe2 = exe;
	/* main calls outer, into which inner is inlined at the sampled address */
	struct profile_line chain[] = {{"outer", "app.c", 12}, {"inner", "app.c", 5}};
	struct profile_line main_line = {"main", "app.c", 30};
	uint32_t m1, m2, l_main, l_chain, l_chain2, l_mark, stack[3];
	int64_t v1[2] = {3, 30}, v2[2] = {2, 20};
	Perftools__Profiles__Profile *pb;
	FILE *f;
	size_t i;

	CHECK(p);
	CHECK(!profile__add_mapping(p, &exe, &m1));
	exe2.file = strdup("/usr/bin/app"); /* equal by value, another pointer */
	CHECK(!profile__add_mapping(p, &exe2, &m2));
	free((char *)exe2.file);
	CHECK(m1 == 1 && m2 == m1);
	CHECK(!profile__add_location(p, m1, 0x400123, &main_line, 1, &l_main));
	CHECK(!profile__add_location(p, m1, 0x400456, chain, 2, &l_chain));
	CHECK(!profile__add_location(p, m1, 0x400456, chain, 2, &l_chain2));
	CHECK(l_chain == l_chain2 && l_chain != l_main);
	CHECK(!profile__add_name(p, "[truncated]", &l_mark));
	/* bad references are refused, not written */
	CHECK(profile__add_location(p, 7, 0, &main_line, 1, &l_chain2) == -EINVAL);
	CHECK(profile__add_location(p, m1, 0, chain, 0, &l_chain2) == -EINVAL);
	stack[0] = l_main;
	stack[1] = l_chain;
	CHECK(!profile__add_sample(p, stack, 2, v1, 42, "app"));
	CHECK(!profile__add_sample(p, stack, 2, v2, 42, "app")); /* merges */
	CHECK(!profile__add_sample(p, stack, 2, v2, 43, "app")); /* another process */
	stack[0] = l_mark;
	stack[1] = l_main;
	CHECK(!profile__add_sample(p, stack, 2, v1, 42, "app"));
	stack[2] = 99;
	CHECK(profile__add_sample(p, stack, 3, v1, 42, "app") == -EINVAL);
	CHECK(profile__nr_samples(p) == 3);
	CHECK(profile__total(p, 0) == 10 && profile__total(p, 1) == 100);

	pb = write_and_decode(p);
	if (pb) {
		check_refs(pb);
		CHECK(pb->n_sample == 3 && pb->n_mapping == 1 && pb->n_location == 3);
		CHECK(pb->n_sample_type == 2 && !strcmp(str(pb, pb->sample_type[1]->type), "cpu") &&
		      !strcmp(str(pb, pb->sample_type[1]->unit), "nanoseconds"));
		CHECK(pb->period == 10101010 && pb->period_type &&
		      !strcmp(str(pb, pb->period_type->type), "cpu"));
		CHECK(!strcmp(str(pb, pb->mapping[0]->build_id), "deadbeef01"));
		CHECK(!strcmp(str(pb, pb->mapping[0]->filename), "/usr/bin/app"));
		CHECK(pb->mapping[0]->memory_start == 0x400000 &&
		      pb->mapping[0]->file_offset == 0x1000);
		/* leaf first; the inline chain innermost first */
		CHECK(pb->sample[0]->value[0] == 5 && pb->sample[0]->value[1] == 50);
		CHECK(pb->sample[0]->location_id[0] == l_chain);
		CHECK(!strcmp(func_name(pb, l_chain, 0), "inner"));
		CHECK(!strcmp(func_name(pb, l_chain, 1), "outer"));
		CHECK(pb->location[l_chain - 1]->line[1]->line == 12);
		CHECK(pb->location[l_chain - 1]->address == 0x400456);
		CHECK(!strcmp(func_name(pb, pb->sample[2]->location_id[1], 0), "[truncated]"));
		CHECK(pb->location[l_mark - 1]->mapping_id == 0);
		for (i = 0; i < pb->sample[1]->n_label; i++) {
			if (!strcmp(str(pb, pb->sample[1]->label[i]->key), "pid"))
				CHECK(pb->sample[1]->label[i]->num == 43);
			else
				CHECK(!strcmp(str(pb, pb->sample[1]->label[i]->str), "app"));
		}
		CHECK(pb->sample[1]->n_label == 2);
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	f = fopen(json_path, "w");
	CHECK(f);
	if (f) {
		CHECK(!profile__write_speedscope(p, f, "unit \"test\""));
		fclose(f);
	}
	f = fopen(pb_path, "w"); /* for go tool pprof in test_export.py */
	CHECK(f);
	if (f) {
		CHECK(!profile__write_pprof(p, f));
		fclose(f);
	}
	profile__free(p);
}

/*
 * A Python frame's function is its bare name in its source file, written with no
 * system_name: pprof's demangler takes a name equal to its system_name for a symbol and
 * cuts "<...>" and "(...)" out of what looks like demangled C++ ("<module>" became "").
 * A symbol keeps its name as system_name too.
 */
static void test_verbatim(void)
{
	struct profile *p = new_cpu_profile();
	struct profile_line py = {
		.function = "<module>", .file = "/srv/app/app.py", .verbatim = true};
	struct profile_line sym = {.function = "std::vector<int>::size", .file = "v.h"};
	struct profile_line same = {.function = "<module>", .file = "/srv/app/app.py"};
	uint32_t l_py, l_sym, l_same, stack[2];
	int64_t v[2] = {1, 10};
	Perftools__Profiles__Profile *pb;
	const Perftools__Profiles__Function *f;

	CHECK(p);
	CHECK(!profile__add_location(p, 0, 0x8000000000001000, &py, 1, &l_py));
	CHECK(!profile__add_location(p, 0, 0x401000, &sym, 1, &l_sym));
	/* the same name as a symbol is another function */
	CHECK(!profile__add_location(p, 0, 0x8000000000001000, &same, 1, &l_same));
	CHECK(l_same != l_py);
	stack[0] = l_py;
	stack[1] = l_sym;
	CHECK(!profile__add_sample(p, stack, 2, v, 1, "python3"));
	/* comments: set, replaced, empty ones skipped */
	CHECK(!profile__set_comments(p, (const char *[]){"first"}, 1));
	CHECK(!profile__set_comments(p, (const char *[]){"cpu at 99 Hz", NULL, "", "on box"}, 4));
	pb = write_and_decode(p);
	if (pb) {
		check_refs(pb);
		CHECK(pb->n_function == 3);
		f = pb->function[pb->location[l_py - 1]->line[0]->function_id - 1];
		CHECK(!strcmp(str(pb, f->name), "<module>"));
		CHECK(!strcmp(str(pb, f->system_name), ""));
		CHECK(!strcmp(str(pb, f->filename), "/srv/app/app.py"));
		f = pb->function[pb->location[l_sym - 1]->line[0]->function_id - 1];
		CHECK(!strcmp(str(pb, f->name), "std::vector<int>::size"));
		CHECK(!strcmp(str(pb, f->system_name), "std::vector<int>::size"));
		CHECK(!strcmp(str(pb, f->filename), "v.h"));
		CHECK(pb->n_comment == 2 && !strcmp(str(pb, pb->comment[0]), "cpu at 99 Hz") &&
		      !strcmp(str(pb, pb->comment[1]), "on box"));
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	profile__free(p);
}

/*
 * `test_export --functions FILE.pb.gz`: the functions of a pprof file, one a line,
 * "name<TAB>system_name<TAB>filename", for tests of what scorch writes.
 */
static int print_functions(const char *path)
{
	Perftools__Profiles__Profile *pb = NULL;
	uint8_t *buf = NULL, *raw = NULL;
	size_t len = 0, cap = 0, raw_len = 0, n, i;
	FILE *f = fopen(path, "rb");
	int err = 1;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (array__grow((void **)&buf, &cap, len + 65536, 1))
			goto cleanup;
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	raw = gunzip(buf, len, &raw_len);
	pb = raw ? perftools__profiles__profile__unpack(NULL, raw_len, raw) : NULL;
	if (!pb) {
		fprintf(stderr, "%s: not a gzipped profile.proto\n", path);
		goto cleanup;
	}
	for (i = 0; i < pb->n_function; i++)
		printf("%s\t%s\t%s\n", str(pb, pb->function[i]->name),
		       str(pb, pb->function[i]->system_name), str(pb, pb->function[i]->filename));
	err = 0;
cleanup:
	if (pb)
		perftools__profiles__profile__free_unpacked(pb, NULL);
	free(raw);
	free(buf);
	fclose(f);
	return err;
}

/* Hostile names: quotes, backslashes, control bytes, invalid UTF-8, a long name. */
static void test_hostile(const char *json_path)
{
	static const char *const names[] = {
		"q\"uote",
		"back\\slash",
		"ctl\x01\x1f\x7f",
		"tab\tnl\ncr\r",
		"bad\xff\xfe utf8",
		"trunc\xe2\x82",
		"ok \xe2\x82\xac euro",
		"surrogate \xed\xa0\x80",
		"over\xc0\xaf",
		"</script><svg>",
	};
	struct profile_opts o = {
		.sz = sizeof(o), .nr_values = 1, .values = {{"off-cpu", "microseconds"}}};
	struct profile *p = profile__new(&o);
	uint32_t locs[ARRAY_SIZE(names)];
	int64_t v = 7;
	char *big = malloc(100001);
	Perftools__Profiles__Profile *pb;
	FILE *f;
	size_t i;

	CHECK(p && big);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		CHECK(!profile__add_name(p, names[i], &locs[i]));
	CHECK(!profile__add_sample(p, locs, ARRAY_SIZE(names), &v, 1, "co\"mm\xff"));
	memset(big, 'x', 100000);
	big[100000] = '\0';
	CHECK(!profile__add_name(p, big, &locs[0]));
	CHECK(!profile__add_sample(p, locs, 1, &v, 0, NULL));
	CHECK(profile__add_name(p, "", &locs[0]) == -EINVAL);
	free(big);
	pb = write_and_decode(p);
	if (pb) {
		check_refs(pb);
		CHECK(pb->n_sample == 2);
		/* pprof strings are bytes: kept as given */
		CHECK(!strcmp(func_name(pb, pb->sample[0]->location_id[0], 0), "</script><svg>"));
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	f = fopen(json_path, "w");
	CHECK(f);
	if (f) {
		CHECK(!profile__write_speedscope(p, f, NULL));
		fclose(f);
	}
	profile__free(p);
}

static void test_folded_input(void)
{
	static const char text[] = "a;b;c 5\na;b 3\nbad line\n\na;;d 2\nx 0\n";
	struct profile_opts o = {.sz = sizeof(o), .nr_values = 1, .values = {{"samples", "count"}}};
	struct profile *p = profile__new(&o);
	FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
	size_t bad = 0;

	CHECK(p && in);
	CHECK(!profile__read_folded(p, in, &bad));
	CHECK(bad == 1);
	CHECK(profile__nr_samples(p) == 3);
	CHECK(profile__total(p, 0) == 10);
	fclose(in);
	profile__free(p);
}

static void test_bad_opts(void)
{
	struct profile_opts o = {.sz = sizeof(o), .nr_values = 0};

	CHECK(!profile__new(&o) && errno == EINVAL);
	o.nr_values = 3;
	CHECK(!profile__new(&o));
	o.nr_values = 1;
	CHECK(!profile__new(&o)); /* no type */
}

int main(int argc, char **argv)
{
	char a[4096], b[4096], c[4096];

	if (argc == 3 && !strcmp(argv[1], "--functions"))
		return print_functions(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: test_export OUT_DIR | --functions FILE.pb.gz\n");
		return 2;
	}
	snprintf(a, sizeof(a), "%s/unit.json", argv[1]);
	snprintf(b, sizeof(b), "%s/hostile.json", argv[1]);
	snprintf(c, sizeof(c), "%s/unit.pb.gz", argv[1]);
	test_interning_and_pprof(a, c);
	test_hostile(b);
	test_verbatim();
	test_folded_input();
	test_bad_opts();
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
