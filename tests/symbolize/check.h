/* SPDX-License-Identifier: MIT */
/* tests/symbolize: the assertion macros every symbolizer test uses. */
#ifndef SCORCH_TEST_CHECK_H
#define SCORCH_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                                \
			fprintf(stderr, "%s:%d: check failed: %s == %s (\"%s\" vs \"%s\")\n",      \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",                    \
				b_ ? b_ : "(null)");                                               \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_U64(a, b)                                                                            \
	do {                                                                                       \
		unsigned long long a_ = (a), b_ = (b);                                             \
		if (a_ != b_) {                                                                    \
			fprintf(stderr, "%s:%d: check failed: %s == %s (%#llx vs %#llx)\n",        \
				__FILE__, __LINE__, #a, #b, a_, b_);                               \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#endif /* SCORCH_TEST_CHECK_H */
