// SPDX-License-Identifier: MIT
/* common: the process-wide leveled log sink. */
#include "common.h"

static enum log_level log_level = LOG_INFO;
static log_fn_t log_fn;

void log__set_level(enum log_level level)
{
	log_level = level;
}

bool log__enabled(enum log_level level)
{
	return level <= log_level;
}

void log__set_fn(log_fn_t fn)
{
	log_fn = fn;
}

void log__print(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	if (log_fn)
		log_fn(level, fmt, ap);
	else
		vfprintf(stderr, fmt, ap);
	va_end(ap);
}
