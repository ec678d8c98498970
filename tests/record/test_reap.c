// SPDX-License-Identifier: MIT
/*
 * tests/record: when a reap put off on busy CPUs is forced by what waits
 * (reap_mark__exceeded(), profiler/procs.c): keys added since the last reap (the
 * kernel's and --unwind dwarf's table) reaching an eighth of a count map, unwind tables
 * grown by more than 64 MiB; neither earlier, and a table an interval's drain emptied
 * below the mark counts as nothing added. And which stacks a reap deletes
 * (reap__unused()): those of the keys it took that no key left uses, each once. And
 * when a reap on idle CPUs waits for one free now (reap__cpu_free()).
 */
#include <errno.h>

#include "check.h"
#include "engine.h"
#include "procs.h"

static void test_unused(void)
{
	/* stacks of the keys left (user and kernel ids mixed, unsorted, repeated) */
	const __u64 kept[] = {50, 9, 7, 50, 1000};
	__u64 gone[] = {9, 3, 3, 11, 50, 2, 11, 7};
	__u64 one[] = {42};
	size_t n;

	n = reap__unused(kept, 5, gone, 8);
	CHECK(n == 3);
	CHECK(gone[0] == 2 && gone[1] == 3 && gone[2] == 11);
	/* nothing left in the map: every stack taken goes */
	n = reap__unused(NULL, 0, one, 1);
	CHECK(n == 1 && one[0] == 42);
	/* nothing taken, with or without an array (an interval's first aging) */
	CHECK(reap__unused(kept, 5, gone, 0) == 0);
	CHECK(reap__unused(kept, 5, NULL, 0) == 0);
	CHECK(reap__unused(NULL, 0, NULL, 0) == 0);
	/* all in use */
	one[0] = 1000;
	CHECK(reap__unused(kept, 5, one, 1) == 0);
}

/* A reap on idle CPUs waits while every CPU has a task runnable besides scorch. */
static void test_cpu_free(void)
{
	/* the reader itself is one of the runnable */
	CHECK(reap__cpu_free("0.00 0.01 0.05 1/120 4605\n", 2) == 1);
	CHECK(reap__cpu_free("0.91 0.40 0.20 2/120 4605\n", 2) == 1);
	/* a job's two threads on two CPUs: none free */
	CHECK(reap__cpu_free("1.91 0.80 0.30 3/121 4700\n", 2) == 0);
	CHECK(reap__cpu_free("9.00 9.00 9.00 40/900 1\n", 2) == 0);
	CHECK(reap__cpu_free("9.00 9.00 9.00 40/900 1\n", 64) == 1);
	CHECK(reap__cpu_free("9.00 9.00 9.00 65/900 1\n", 64) == 0);
	/* no CPU count known: one */
	CHECK(reap__cpu_free("0.00 0.00 0.00 1/10 1\n", -1) == 1);
	CHECK(reap__cpu_free("0.00 0.00 0.00 2/10 1\n", 0) == 0);
	/* not /proc/loadavg's layout */
	CHECK(reap__cpu_free("", 2) == -EINVAL);
	CHECK(reap__cpu_free("0.00 0.00 0.00\n", 2) == -EINVAL);
	CHECK(reap__cpu_free("0.00 0.00 0.00 x/10 1\n", 2) == -EINVAL);
	CHECK(reap__cpu_free("0.00 0.00 0.00 0/10 1\n", 2) == -EINVAL);
	CHECK(reap__cpu_free("0.00 0.00 0.00 11/10 1\n", 2) == -EINVAL);
}

int main(void)
{
	const struct reap_mark was = {.keys = 1000, .ukeys = 100, .table_bytes = 5 << 20};
	struct reap_mark now = was;

	CHECK(REAP_KEYS_DIV == 8 && REAP_TABLE_BYTES == 64 << 20);
	/* nothing added */
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_NOT_YET);
	/* kernel keys: 4096 / 8 = 512 */
	now.keys = was.keys + 511;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_NOT_YET);
	now.keys = was.keys + 512;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_FORCED_KEYS);
	/* the smallest maps (--max-stacks 64): every 8 keys */
	now.keys = was.keys + 7;
	CHECK(reap_mark__exceeded(&was, &now, 64) == REAP_NOT_YET);
	now.keys = was.keys + 8;
	CHECK(reap_mark__exceeded(&was, &now, 64) == REAP_FORCED_KEYS);
	/* --unwind dwarf's table adds to the kernel's */
	now.keys = was.keys + 300;
	now.ukeys = was.ukeys + 211;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_NOT_YET);
	now.ukeys = was.ukeys + 212;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_FORCED_KEYS);
	/* an interval's drain took the table below the mark: nothing added there, not a
	 * wrapped difference */
	now.keys = was.keys + 10;
	now.ukeys = 0;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_NOT_YET);
	now.ukeys = was.ukeys + 600;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_FORCED_KEYS);
	/* unwind tables: more than 64 MiB grown; dropped ones (trim) are no growth */
	now = was;
	now.table_bytes = was.table_bytes + REAP_TABLE_BYTES;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_NOT_YET);
	now.table_bytes++;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_FORCED_TABLES);
	now.table_bytes = 0;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_NOT_YET);
	/* both: the keys are named */
	now.table_bytes = was.table_bytes + REAP_TABLE_BYTES + 1;
	now.keys = was.keys + 512;
	CHECK(reap_mark__exceeded(&was, &now, 4096) == REAP_FORCED_KEYS);
	test_unused();
	test_cpu_free();
	printf("reap: PASS\n");
	return 0;
}
