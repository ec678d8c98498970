// SPDX-License-Identifier: MIT
/* tests/common: the array grower (common/array.c): sizes, contents kept, overflow refused. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "common.h"

int main(void)
{
	uint32_t *v = NULL, *before;
	size_t cap = 0, i;

	/* nothing needed: nothing allocated */
	CHECK(!array__grow((void **)&v, &cap, 0, sizeof(*v)));
	CHECK(!v && !cap);
	/* the first allocation holds 64, then capacities double */
	CHECK(!array__grow((void **)&v, &cap, 1, sizeof(*v)));
	CHECK(v);
	CHECK_U64(cap, 64);
	for (i = 0; i < 64; i++)
		v[i] = (uint32_t)i;
	before = v;
	CHECK(!array__grow((void **)&v, &cap, 64, sizeof(*v)));
	CHECK(v == before);
	CHECK_U64(cap, 64);
	CHECK(!array__grow((void **)&v, &cap, 65, sizeof(*v)));
	CHECK_U64(cap, 128);
	CHECK(!array__grow((void **)&v, &cap, 1000, sizeof(*v)));
	CHECK_U64(cap, 1024);
	for (i = 0; i < 64; i++)
		CHECK_U64(v[i], i);
	/* sizes past size_t: refused, the array left as it was */
	before = v;
	CHECK(array__grow((void **)&v, &cap, SIZE_MAX, sizeof(*v)) == -ENOMEM);
	CHECK(array__grow((void **)&v, &cap, SIZE_MAX / 2 + 2, 1) == -ENOMEM);
	CHECK(array__grow((void **)&v, &cap, SIZE_MAX / 4, sizeof(*v)) == -ENOMEM);
	CHECK(v == before);
	CHECK_U64(cap, 1024);
	for (i = 0; i < 64; i++)
		CHECK_U64(v[i], i);
	free(v);
	printf("ok\n");
	return 0;
}
