// SPDX-License-Identifier: MIT
/* tests/symbolize: kernel lookups on a fixture kallsyms file, then on /proc/kallsyms. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "symbolize-private.h"

/* Unsorted on purpose; aliases, data symbols, modules, garbage. */
static const char fixture[] = "ffffffff81000100 T func_b\n"
			      "ffffffff81000000 t local_alias\n"
			      "ffffffff81000000 T _stext\n"
			      "ffffffff81000000 T func_a\n"
			      "ffffffff81000200 t func_c\n"
			      "ffffffff81000300 D some_data\n"
			      "ffffffff81000180 A abs_sym\n"
			      "ffffffff81000280 W weak_func\n"
			      "ffffffffc0001040 T mod_func2\t[mymod]\n"
			      "ffffffffc0001000 t mod_func1\t[mymod]\n"
			      "this is garbage\n"
			      "ffffffffc000100g t bad_hex\n"
			      "ffffffffc0001000 t\n"
			      "ffffffffc0001000 t no_close\t[mymod\n"
			      "ffffffffc0002000 t other_mod\t[othermod]\n"
			      "ffffffffc0003000 t bpf_prog_1234_handler\t[bpf]";

static const char zeros[] = "0000000000000000 T _stext\n"
			    "0000000000000000 T func_a\n"
			    "0000000000000000 t mod_func1\t[mymod]\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK(fputs(text, f) >= 0);
	CHECK(!fclose(f));
}

static struct frame lookup(struct symbolizer *s, uint64_t ip, bool is_return)
{
	struct frame fr;

	CHECK(symbolizer__kernel(s, ip, is_return, &fr, 1) == 1);
	CHECK(fr.name);
	return fr;
}

static void test_fixture(const char *dir)
{
	struct symbolizer_opts opts = {.sz = sizeof(opts)};
	struct symbolizer_stats st;
	char path[4096], zpath[4096];
	struct symbolizer *s;
	struct frame fr;

	snprintf(path, sizeof(path), "%s/kallsyms.fixture", dir);
	snprintf(zpath, sizeof(zpath), "%s/kallsyms.zeros", dir);
	write_file(path, fixture);
	write_file(zpath, zeros);
	opts.kallsyms_path = path;
	s = symbolizer__new(&opts);
	CHECK(s);

	/* aliases: global before local, then input order */
	fr = lookup(s, 0xffffffff81000000, false);
	CHECK_STR(fr.name, "_stext");
	CHECK(fr.kind == FRAME_SYMBOL);
	CHECK(!fr.module);
	CHECK_U64(fr.offset, 0);
	fr = lookup(s, 0xffffffff81000150, false);
	CHECK_STR(fr.name, "func_b");
	CHECK_U64(fr.offset, 0x50);
	/* a return address at a symbol start belongs to the previous one */
	fr = lookup(s, 0xffffffff81000100, true);
	CHECK_STR(fr.name, "_stext");
	CHECK_U64(fr.offset, 0x100);
	fr = lookup(s, 0xffffffff81000100, false);
	CHECK_STR(fr.name, "func_b");
	/* data and absolute symbols are not code: func_b reaches func_c */
	fr = lookup(s, 0xffffffff81000190, false);
	CHECK_STR(fr.name, "func_b");
	fr = lookup(s, 0xffffffff81000210, false);
	CHECK_STR(fr.name, "func_c");
	fr = lookup(s, 0xffffffff81000280, false);
	CHECK_STR(fr.name, "weak_func");
	/* the last core symbol ends within a bounded distance, not at the first module */
	fr = lookup(s, 0xffffffff81000280 + 0x20000, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	CHECK_STR(fr.name, "[unknown]");
	/* below everything */
	fr = lookup(s, 0xffffffff80000000, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	fr = lookup(s, 0, false);
	CHECK(fr.kind == FRAME_UNKNOWN);

	fr = lookup(s, 0xffffffffc0001000, false);
	CHECK_STR(fr.name, "mod_func1 [mymod]");
	CHECK_STR(fr.module, "mymod");
	{
		/* named once, then kept: the same interned strings again */
		struct frame again = lookup(s, 0xffffffffc0001008, false);

		CHECK(again.name == fr.name && again.module == fr.module);
		CHECK_U64(again.offset, 8);
	}
	fr = lookup(s, 0xffffffffc0001050, false);
	CHECK_STR(fr.name, "mod_func2 [mymod]");
	CHECK_U64(fr.offset, 0x10);
	/* the next module starts a new extent */
	fr = lookup(s, 0xffffffffc0002008, false);
	CHECK_STR(fr.name, "other_mod [othermod]");
	fr = lookup(s, 0xffffffffc0003010, true);
	CHECK_STR(fr.name, "bpf_prog_1234_handler [bpf]");
	CHECK_STR(fr.module, "bpf");
	/* past the end of the last symbol */
	fr = lookup(s, 0xffffffffc0003000 + 0x100000, false);
	CHECK(fr.kind == FRAME_UNKNOWN);
	/* interned: equal names, equal pointers */
	CHECK(lookup(s, 0xffffffff81000101, false).name ==
	      lookup(s, 0xffffffff81000102, false).name);

	symbolizer__stats(s, &st);
	CHECK_U64(st.kernel_frames, 18);
	CHECK_U64(st.kernel_unresolved, 4);
	CHECK(symbolizer__kernel(s, 0xffffffff81000000, false, &fr, 0) == -EINVAL);
	{
		/* names back to addresses: aliases the table merged, modules by their bare
		 * name, repeats, data symbols (not text) and unknown names 0 */
		static const char *const names[] = {
			"mod_func1", "local_alias", "func_c", "some_data",
			"nosuch",    "func_c",	    "_stext",
		};
		uint64_t addrs[ARRAY_SIZE(names)];

		CHECK(!symbolizer__kernel_addrs(s, names, ARRAY_SIZE(names), addrs));
		CHECK_U64(addrs[0], 0xffffffffc0001000);
		CHECK_U64(addrs[1], 0xffffffff81000000);
		CHECK_U64(addrs[2], 0xffffffff81000200);
		CHECK_U64(addrs[3], 0);
		CHECK_U64(addrs[4], 0);
		CHECK_U64(addrs[5], 0xffffffff81000200);
		CHECK_U64(addrs[6], 0xffffffff81000000);
		CHECK(!symbolizer__kernel_addrs(s, names, 0, addrs));
	}
	symbolizer__free(s);

	/* kptr_restrict: all zero, every frame unknown (and a warning) */
	opts.kallsyms_path = zpath;
	s = symbolizer__new(&opts);
	CHECK(s);
	CHECK(lookup(s, 0, false).kind == FRAME_UNKNOWN);
	CHECK(lookup(s, 0xffffffff81000000, false).kind == FRAME_UNKNOWN);
	symbolizer__free(s);

	/* unreadable file: unknown, not an error */
	opts.kallsyms_path = "/nonexistent/kallsyms";
	s = symbolizer__new(&opts);
	CHECK(s);
	CHECK(lookup(s, 0xffffffff81000000, false).kind == FRAME_UNKNOWN);
	{
		/* but names cannot be resolved: an error, every address 0 */
		const char *name = "func_a";
		uint64_t addr = 1;

		CHECK(symbolizer__kernel_addrs(s, &name, 1, &addr) == -ENOENT);
		CHECK_U64(addr, 0);
	}
	symbolizer__free(s);

	/* no_kernel never reads the file */
	opts.kallsyms_path = path;
	opts.no_kernel = true;
	s = symbolizer__new(&opts);
	CHECK(s);
	CHECK(lookup(s, 0xffffffff81000000, false).kind == FRAME_UNKNOWN);
	symbolizer__free(s);
}

/* Every prefix of the fixture parses without reading or writing past it. */
static void test_truncations(void)
{
	size_t len = strlen(fixture), i;
	struct symtab tab;
	bool nonzero;
	char *buf;

	for (i = 0; i <= len; i++) {
		buf = malloc(i + 1);
		CHECK(buf);
		memcpy(buf, fixture, i);
		buf[i] = '\0';
		CHECK(!kallsyms__parse(buf, i, &tab, &nonzero));
		CHECK(tab.nr <= 10);
		symtab__free(&tab);
		free(buf);
	}
}

/*
 * symtab__build() sorts by insertion when the input is nearly in order and falls back to
 * qsort when it is not: any order of the same symbols gives the same table.
 */
#define ORDER_N 4096

static void build_order(const struct sym_raw *in, const size_t *perm, struct symtab *tab)
{
	struct sym_raw *raw = calloc(ORDER_N, sizeof(*raw));
	size_t i;

	CHECK(raw);
	for (i = 0; i < ORDER_N; i++) {
		raw[i] = in[perm[i]];
		raw[i].idx = i;
	}
	CHECK(!symtab__build(tab, raw, ORDER_N));
	free(raw);
}

static void test_orders(void)
{
	static const char *const ranks[] = {"T", "W", "t", "w"};
	static char names[ORDER_N][16];
	static struct sym_raw in[ORDER_N];
	static size_t perm[ORDER_N];
	struct symtab ref, tab;
	size_t i, j, k, t;
	unsigned int seed = 1;

	/* every 4th address has an alias of another rank: one (start, rank) per symbol */
	for (i = 0; i < ORDER_N; i++) {
		snprintf(names[i], sizeof(names[i]), "%s%zu", ranks[i % 4 ? 0 : 2], i);
		in[i] = (struct sym_raw){
			.start = 0x1000 + (i - (i % 4 == 1)) * 0x10,
			.limit = UINT64_MAX,
			.name = names[i],
			.rank = i % 4 == 1 ? 2 : 0,
		};
		perm[i] = i;
	}
	build_order(in, perm, &ref);
	CHECK(ref.nr == ORDER_N - ORDER_N / 4);
	for (i = 1; i < ref.nr; i++)
		CHECK(ref.syms[i - 1].end == ref.syms[i].start);
	for (k = 0; k < 4; k++) {
		for (i = 0; i < ORDER_N; i++)
			perm[i] = i;
		if (k == 0) {
			/* a few neighbours swapped: kallsyms' aliases of other ranks */
			for (i = 2; i + 1 < ORDER_N; i += 97) {
				t = perm[i];
				perm[i] = perm[i + 1];
				perm[i + 1] = t;
			}
		} else if (k == 1) {
			/* one symbol far from its place */
			t = perm[ORDER_N - 1];
			memmove(&perm[1], &perm[0], (ORDER_N - 1) * sizeof(perm[0]));
			perm[0] = t;
		} else if (k == 2) {
			/* reversed: past the insertion budget, qsort */
			for (i = 0; i < ORDER_N; i++)
				perm[i] = ORDER_N - 1 - i;
		} else {
			for (i = ORDER_N - 1; i > 0; i--) {
				j = rand_r(&seed) % (i + 1);
				t = perm[i];
				perm[i] = perm[j];
				perm[j] = t;
			}
		}
		build_order(in, perm, &tab);
		CHECK(tab.nr == ref.nr);
		for (i = 0; i < ref.nr; i++)
			CHECK(tab.syms[i].start == ref.syms[i].start &&
			      tab.syms[i].end == ref.syms[i].end &&
			      tab.syms[i].name == ref.syms[i].name);
		symtab__free(&tab);
	}
	symtab__free(&ref);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A well-known text symbol of the running kernel resolves to its name (or an alias). */
static int test_real(void)
{
	static const char *const wanted[] = {"schedule", "do_sys_openat2", "vfs_read"};
	struct symbolizer *s = symbolizer__new(NULL);
	char *text, *line, *save = NULL;
	uint64_t addr = 0, a;
	const char *name = NULL;
	struct frame fr;
	size_t len, i, sum = 0;
	char type, sym[256];
	double t0, t1;
	bool found;

	CHECK(s);
	CHECK(!file__read_bounded(AT_FDCWD, "/proc/kallsyms", KALLSYMS_MAX_BYTES, &text, &len));
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]) && !addr; i++) {
		char *copy = strdup(text);

		CHECK(copy);
		for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, sym) == 3 &&
			    (type == 'T' || type == 't') && !strcmp(sym, wanted[i]) &&
			    !strchr(line, '[')) {
				addr = a;
				name = wanted[i];
				break;
			}
		}
		free(copy);
	}
	if (!addr) {
		printf("SKIP: no readable kernel addresses in /proc/kallsyms\n");
		free(text);
		symbolizer__free(s);
		return 77;
	}
	t0 = now();
	fr = lookup(s, addr + 1, false);
	t1 = now();
	printf("perf: first kernel lookup (loads /proc/kallsyms): %.1f ms\n", (t1 - t0) * 1e3);
	CHECK(fr.kind == FRAME_SYMBOL);
	CHECK_U64(fr.offset, 1);
	t0 = now();
	for (i = 0; i < 1000000; i++)
		sum += lookup(s, addr + (i * 2654435761u) % (16u << 20), i & 1).kind;
	t1 = now();
	printf("perf: 1000000 kernel lookups: %.3f s (%.0f ns each)\n", t1 - t0, (t1 - t0) * 1e3);
	(void)sum;
	CHECK(!fr.module);
	/* an alias at the same address may win: it must be a text symbol at that address */
	found = !strcmp(fr.name, name);
	for (line = strtok_r(text, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, sym) == 3 && a == addr &&
		    !strcmp(sym, fr.name))
			found = true;
	printf("kernel %#" PRIx64 " %s -> %s+%#" PRIx64 "\n", addr + 1, name, fr.name, fr.offset);
	CHECK(found);
	/* the frame of a return address right after the symbol start is still the symbol */
	fr = lookup(s, addr + 1, true);
	CHECK(fr.kind == FRAME_SYMBOL);
	free(text);
	symbolizer__free(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "real"))
		return test_real();
	CHECK(argc >= 3 && !strcmp(argv[1], "fixture"));
	test_fixture(argv[2]);
	test_truncations();
	test_orders();
	printf("ok\n");
	return 0;
}
