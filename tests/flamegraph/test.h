/* SPDX-License-Identifier: MIT */
/* tests/flamegraph: a minimal check harness for the unit tests. */
#ifndef SCORCH_TEST_H
#define SCORCH_TEST_H

#include <stdio.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			test_failures++;                                                           \
		}                                                                                  \
	} while (0)

#define CHECK_STR(got, want)                                                                       \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		if (!g_ || strcmp(g_, w_)) {                                                       \
			fprintf(stderr, "%s:%d: got\n---\n%s\n---\nwant\n---\n%s\n---\n",          \
				__FILE__, __LINE__, g_ ? g_ : "(null)", w_);                       \
			test_failures++;                                                           \
		}                                                                                  \
	} while (0)

#define TEST_DONE() (test_failures ? (fprintf(stderr, "%d failures\n", test_failures), 1) : 0)

#endif /* SCORCH_TEST_H */
