// SPDX-License-Identifier: MIT
/* tests/record: scorch top's tables (profiler/top.c): shares, recursion, decay, bounds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "flamegraph.h"
#include "top.h"
#include "test.h"

#define ADD(f, count, ...)                                                                         \
	({                                                                                         \
		const char *fr_[] = {__VA_ARGS__};                                                 \
		folded__add(f, fr_, sizeof(fr_) / sizeof(fr_[0]), count);                          \
	})

#define NEAR(x, want) (fabs((x) - (want)) < 1e-6)

static struct top_table *table(double half_life, size_t max_fns, size_t max_stacks)
{
	struct top_table_opts o = {.sz = sizeof(o),
				   .half_life = half_life,
				   .max_functions = max_fns,
				   .max_stacks = max_stacks};

	return top_table__new(&o);
}

/* Self is the leaf's, total once per stack however deep the recursion; a comm alone weighs. */
static void test_shares(void)
{
	struct top_table *t = table(0, 0, 0);
	struct folded *f = folded__new();
	struct top_row r[8];
	size_t nr;

	CHECK(t && f);
	CHECK(ADD(f, 5, "p", "main", "a") == 0);
	CHECK(ADD(f, 3, "p", "main", "b") == 0);
	CHECK(ADD(f, 1, "p", "main", "a", "a") == 0);
	CHECK(ADD(f, 1, "q") == 0);
	CHECK(top_table__add(t, f, 1.0) == 0);
	CHECK(NEAR(top_table__weight(t), 10));
	CHECK(top_table__rows(t, TOP_SELF, r, 8, &nr) == 0);
	CHECK(nr == 2); /* main is never a leaf */
	CHECK(nr == 2 && !strcmp(r[0].name, "a") && NEAR(r[0].self, 60) && NEAR(r[0].total, 60));
	CHECK(nr == 2 && !strcmp(r[1].name, "b") && NEAR(r[1].self, 30) && !strcmp(r[1].comm, "p"));
	CHECK(top_table__rows(t, TOP_TOTAL, r, 8, &nr) == 0);
	CHECK(nr == 3 && !strcmp(r[0].name, "main") && NEAR(r[0].total, 90) && NEAR(r[0].self, 0));
	CHECK(nr == 3 && !strcmp(r[1].name, "a") && !strcmp(r[2].name, "b"));
	CHECK(top_table__rows(t, TOP_STACKS, r, 2, &nr) == 0);
	CHECK(nr == 2 && !strcmp(r[0].name, "main;a") && NEAR(r[0].self, 50) &&
	      NEAR(r[0].total, 50));
	CHECK(nr == 2 && !strcmp(r[1].name, "main;b"));
	CHECK(top_table__size(t, TOP_STACKS) == 3 && top_table__size(t, TOP_SELF) == 3);
	folded__free(f);
	top_table__free(t);
}

/* One name in two comms is two functions; equal shares are ordered by comm, then name. */
static void test_comms(void)
{
	struct top_table *t = table(0, 0, 0);
	struct folded *f = folded__new();
	struct top_row r[4];
	size_t nr;

	CHECK(ADD(f, 2, "web", "work") == 0);
	CHECK(ADD(f, 2, "db", "work") == 0);
	CHECK(ADD(f, 2, "db", "idle") == 0);
	CHECK(top_table__add(t, f, 1.0) == 0);
	CHECK(top_table__rows(t, TOP_SELF, r, 4, &nr) == 0);
	CHECK(nr == 3);
	CHECK(nr == 3 && !strcmp(r[0].comm, "db") && !strcmp(r[0].name, "idle"));
	CHECK(nr == 3 && !strcmp(r[1].comm, "db") && !strcmp(r[1].name, "work"));
	CHECK(nr == 3 && !strcmp(r[2].comm, "web") && !strcmp(r[2].name, "work"));
	folded__free(f);
	top_table__free(t);
}

/* A count from one half-life ago weighs half; with no half-life the last interval alone. */
static void test_decay(void)
{
	struct top_table *t = table(1.0, 0, 0), *w = table(0, 0, 0);
	struct folded *a = folded__new(), *b = folded__new();
	struct top_row r[4];
	size_t nr;

	CHECK(ADD(a, 100, "p", "x") == 0);
	CHECK(ADD(b, 100, "p", "y") == 0);
	CHECK(top_table__add(t, a, 1.0) == 0 && top_table__add(t, b, 1.0) == 0);
	CHECK(NEAR(top_table__weight(t), 150));
	CHECK(top_table__rows(t, TOP_SELF, r, 4, &nr) == 0);
	CHECK(nr == 2 && !strcmp(r[0].name, "y") && NEAR(r[0].self, 100.0 * 100 / 150));
	CHECK(nr == 2 && !strcmp(r[1].name, "x") && NEAR(r[1].self, 100.0 * 50 / 150));
	/* two half-lives more of nothing: the shares stay, the weight falls */
	folded__free(b);
	b = folded__new();
	CHECK(top_table__add(t, b, 2.0) == 0);
	CHECK(NEAR(top_table__weight(t), 150 / 4.0));
	CHECK(top_table__rows(t, TOP_SELF, r, 4, &nr) == 0 && nr == 2 &&
	      NEAR(r[1].self, 100.0 * 50 / 150));

	CHECK(top_table__add(w, a, 1.0) == 0);
	CHECK(ADD(b, 100, "p", "y") == 0);
	CHECK(top_table__add(w, b, 1.0) == 0);
	CHECK(top_table__rows(w, TOP_SELF, r, 4, &nr) == 0);
	CHECK(nr == 1 && !strcmp(r[0].name, "y") && NEAR(r[0].self, 100));
	CHECK(top_table__size(w, TOP_SELF) == 1 && top_table__size(w, TOP_STACKS) == 1);
	folded__free(a);
	folded__free(b);
	top_table__free(t);
	top_table__free(w);
}

/* What stops being counted goes once below TOP_MIN_SHARE of the weight. */
static void test_forget(void)
{
	struct top_table *t = table(1.0, 0, 0);
	struct folded *a = folded__new(), *b = folded__new();
	int i;

	CHECK(ADD(a, 1, "p", "once") == 0);
	CHECK(ADD(b, 1000, "p", "always") == 0);
	CHECK(top_table__add(t, a, 1.0) == 0);
	CHECK(top_table__size(t, TOP_SELF) == 1);
	for (i = 0; i < 5; i++)
		CHECK(top_table__add(t, b, 1.0) == 0);
	CHECK(top_table__size(t, TOP_SELF) == 2 && top_table__size(t, TOP_STACKS) == 2);
	/* the sixth halving puts it below 1e-5 of a weight near 2000 */
	for (i = 0; i < 6; i++)
		CHECK(top_table__add(t, b, 1.0) == 0);
	CHECK(top_table__size(t, TOP_SELF) == 1 && top_table__size(t, TOP_STACKS) == 1);
	folded__free(a);
	folded__free(b);
	top_table__free(t);
}

/*
 * Bounded: every interval brings distinct functions and stacks, and the tables keep the
 * caps, the largest by self and by total among them.
 */
static void test_caps(void)
{
	struct top_table *t = table(60, 8, 4);
	struct top_row r[8];
	char leaf[32], caller[32];
	size_t nr;
	int i, k;

	for (i = 0; i < 200; i++) {
		struct folded *f = folded__new();

		for (k = 0; k < 50; k++) {
			snprintf(leaf, sizeof(leaf), "leaf%d.%d", i, k);
			snprintf(caller, sizeof(caller), "caller%d", k % 5);
			CHECK(ADD(f, 1, "p", caller, leaf) == 0);
		}
		if (i == 199)
			CHECK(ADD(f, 1000, "p", "hot") == 0);
		CHECK(top_table__add(t, f, 0.1) == 0);
		CHECK(top_table__size(t, TOP_SELF) <= 8 && top_table__size(t, TOP_STACKS) <= 4);
		folded__free(f);
	}
	CHECK(top_table__rows(t, TOP_SELF, r, 8, &nr) == 0);
	CHECK(nr >= 1 && !strcmp(r[0].name, "hot"));
	/* the callers' totals (10 an interval each) are the largest; hot kept by its self */
	CHECK(top_table__rows(t, TOP_TOTAL, r, 8, &nr) == 0);
	for (i = 0; i < 4 && i < (int)nr; i++)
		CHECK(!strncmp(r[i].name, "caller", 6));
	CHECK(nr >= 5 && !strcmp(r[4].name, "hot"));
	CHECK(top_table__rows(t, TOP_STACKS, r, 8, &nr) == 0);
	CHECK(nr == 4 && !strcmp(r[0].name, "hot"));
	top_table__free(t);
}

/* Names of entries dropped are let go: the bytes held follow the live entries. */
static void test_compaction(void)
{
	struct top_table *t = table(0.05, 64, 16);
	char leaf[300];
	size_t max = 0;
	int i, k;

	for (i = 0; i < 300; i++) {
		struct folded *f = folded__new();

		for (k = 0; k < 40; k++) {
			snprintf(leaf, sizeof(leaf), "%0250d", i * 40 + k);
			CHECK(ADD(f, 1, "p", leaf) == 0);
		}
		CHECK(top_table__add(t, f, 0.1) == 0);
		max = MAX(max, top_table__bytes(t));
		folded__free(f);
	}
	/* 6 MB of names went through; held, in each table: the live ones twice, the slack
	 * (64 KiB) and an interval's */
	CHECK(max > 0 && max < 2 * (64 + 16) * 260 + 2 * 64 * 1024 + 2 * 40 * 260);
	top_table__free(t);
}

static void test_errors(void)
{
	struct top_table_opts o = {.sz = sizeof(o), .half_life = -1};

	errno = 0;
	CHECK(!top_table__new(&o) && errno == EINVAL);
	CHECK(!top_table__new(NULL));
	top_table__free(NULL);
}

int main(void)
{
	test_shares();
	test_comms();
	test_decay();
	test_forget();
	test_caps();
	test_compaction();
	test_errors();
	return TEST_DONE();
}
