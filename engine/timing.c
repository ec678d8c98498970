// SPDX-License-Identifier: MIT
/* profiler: `record --timing`: how long each phase after the recording takes (monotonic clock). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "engine.h"
#include "timing.h"

uint64_t timing__clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t timing__now_ns(void)
{
	return timing__clock_ns(CLOCK_MONOTONIC);
}

double timing__now(void)
{
	return timing__now_ns() / 1e9;
}

void timing__start(struct timing *t, bool on)
{
	t->on = on;
	t->nr = 0;
	t->start = timing__now();
}

void timing__mark(struct timing *t, const char *phase)
{
	if (!t->on || t->nr >= TIMING_MAX_PHASES)
		return;
	t->phase[t->nr] = phase;
	t->end[t->nr++] = timing__now();
}

void timing__report(const struct timing *t, const char *what)
{
	char buf[512];
	size_t len = 0;
	double prev = t->start;

	if (!t->on || !t->nr)
		return;
	for (int i = 0; i < t->nr && len < sizeof(buf); i++) {
		int n = snprintf(buf + len, sizeof(buf) - len, "%s%s %.1f ms", i ? ", " : "",
				 t->phase[i], (t->end[i] - prev) * 1e3);

		if (n < 0)
			return;
		len += (size_t)n;
		prev = t->end[i];
	}
	pr_info("scorch: timing: %s %.1f ms: %s\n", what, (t->end[t->nr - 1] - t->start) * 1e3,
		buf);
}
