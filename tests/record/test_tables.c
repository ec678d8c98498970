// SPDX-License-Identifier: MIT
/*
 * tests/record: the process table (profiler/procs.c) and the off-CPU copies waiting for
 * their interval (profiler/copies.c), through several growths: entries found by their
 * key only, kept across growth with what was written in them, each visited once.
 */
#include <errno.h>

#include "check.h"
#include "engine.h"
#include "copies.h"
#include "procs.h"

#define NR 5000

static void test_proctab(void)
{
	struct proctab *t = proctab__new();
	static unsigned char seen[NR][3];
	struct proc_entry *e;
	size_t n = 0;
	int pid, gen;

	CHECK(t && proctab__nr(t) == 0 && !proctab__next(t, NULL));
	CHECK(!proctab__get(t, 0, 1) && !proctab__get(t, -5, 1) && !proctab__find(t, 0, 0));
	/* three images of each PID: one PID's images are told apart by gen */
	for (pid = 1; pid < NR; pid++) {
		for (gen = 0; gen < 3; gen++) {
			e = proctab__get(t, pid, (uint64_t)gen * 1000);
			CHECK(e && e->pid == pid && e->gen == (uint64_t)gen * 1000 && !e->flags);
			e->flags = (uint32_t)(pid * 3 + gen);
			e->ts = (uint64_t)pid << 8 | (uint64_t)gen;
		}
	}
	CHECK(proctab__nr(t) == (NR - 1) * 3);
	for (pid = 1; pid < NR; pid++) {
		for (gen = 0; gen < 3; gen++) {
			e = proctab__find(t, pid, (uint64_t)gen * 1000);
			CHECK(e && e->flags == (uint32_t)(pid * 3 + gen));
			CHECK(e->ts == ((uint64_t)pid << 8 | (uint64_t)gen));
			/* found again, not added */
			CHECK(proctab__get(t, pid, (uint64_t)gen * 1000) == e);
		}
		CHECK(!proctab__find(t, pid, 1));
		CHECK(!proctab__find(t, pid + NR, 0));
	}
	CHECK(proctab__nr(t) == (NR - 1) * 3);
	for (e = proctab__next(t, NULL); e; e = proctab__next(t, e)) {
		CHECK(e->pid > 0 && e->pid < NR && e->gen % 1000 == 0 && e->gen <= 2000);
		CHECK(!seen[e->pid][e->gen / 1000]++);
		n++;
	}
	CHECK(n == proctab__nr(t));
	proctab__free(t);
	proctab__free(NULL);
}

static void test_copytab(void)
{
	struct copytab *t = copytab__new();
	struct count_key key = {.pid = 7};
	__u64 user[3] = {1, 2, 3}, kernel[SCORCH_MAX_STACK_DEPTH + 1] = {9};
	static unsigned char seen[NR];
	struct pending_copy *c;
	bool replaced = true;
	uint32_t tid;
	size_t n = 0;

	CHECK(t && copytab__nr(t) == 0 && !copytab__pop(t) && !copytab__take(t, 1, 1));
	for (tid = 1; tid < NR; tid++) {
		key.gen = tid;
		CHECK(!copytab__put(t, tid, tid * 10, &key, user, tid % 4, kernel, tid % 2,
				    &replaced));
		CHECK(!replaced);
	}
	CHECK(copytab__nr(t) == NR - 1);
	/* a thread's new switch-out replaces its copy: its interval never came */
	CHECK(!copytab__put(t, 5, 51, &key, user, 3, NULL, 0, &replaced) && replaced);
	CHECK(copytab__nr(t) == NR - 1);
	CHECK(!copytab__take(t, 5, 50)); /* the interval of the copy replaced */
	c = copytab__take(t, 5, 51);
	CHECK(c && c->tid == 5 && c->ts == 51 && c->user_nr == 3 && c->kernel_nr == 0);
	CHECK(c->ips[0] == 1 && c->ips[2] == 3);
	free(c);
	CHECK(!copytab__take(t, 5, 51) && copytab__nr(t) == NR - 2);
	/* too deep: refused, and the copy it replaced is gone */
	CHECK(copytab__put(t, 6, 1, &key, NULL, 0, kernel, SCORCH_MAX_STACK_DEPTH + 1, &replaced) ==
	      -EINVAL);
	CHECK(replaced && !copytab__take(t, 6, 60) && copytab__nr(t) == NR - 3);
	for (tid = 7; tid < NR; tid += 2) {
		CHECK(!copytab__take(t, tid, tid * 10 + 1));
		c = copytab__take(t, tid, tid * 10);
		CHECK(c && c->tid == tid && c->key.gen == tid && c->user_nr == tid % 4);
		CHECK(c->kernel_nr == tid % 2 && (!c->kernel_nr || c->ips[c->user_nr] == 9));
		free(c);
	}
	n = copytab__nr(t);
	while ((c = copytab__pop(t))) {
		CHECK(c->tid < NR && c->ts == c->tid * 10 && !seen[c->tid]++);
		CHECK(c->tid != 5 && c->tid != 6 && (c->tid < 7 || c->tid % 2 == 0));
		free(c);
		n--;
	}
	CHECK(n == 0 && copytab__nr(t) == 0);
	/* copies left at the end are freed with the table */
	CHECK(!copytab__put(t, 3, 1, &key, user, 1, NULL, 0, &replaced) && !replaced);
	copytab__free(t);
	copytab__free(NULL);
}

int main(void)
{
	test_proctab();
	test_copytab();
	printf("tables: all checks passed\n");
	return 0;
}
