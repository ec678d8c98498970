// SPDX-License-Identifier: MIT
/*
 * tests/record: when a reap put off on busy CPUs is forced by what waits
 * (reap_mark__exceeded(), profiler/procs.c): keys added since the last reap (the
 * kernel's and --unwind dwarf's table) reaching an eighth of a count map, unwind tables
 * grown by more than 64 MiB; neither earlier, and a table an interval's drain emptied
 * below the mark counts as nothing added.
 */
#include "check.h"
#include "profiler-private.h"

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
	printf("reap: PASS\n");
	return 0;
}
