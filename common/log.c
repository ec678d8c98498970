// SPDX-License-Identifier: MIT
/* common: the process-wide leveled log sink. */
#include <stdio.h>
#include <string.h>

#include "common.h"

#define LOG_PREFIX "scorch: "

static enum log_level log_level = LOG_INFO;
static log_fn_t log_fn;
static const char *log_cmd;

void log__set_command(const char *cmd)
{
	log_cmd = cmd;
}

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
	size_t plen = sizeof(LOG_PREFIX) - 1, clen;
	char buf[512];
	va_list ap;

	if (level > log_level)
		return;
	/* "scorch: X" -> "scorch: CMD: X"; a format too long for buf is printed as it is */
	if (log_cmd && !strncmp(fmt, LOG_PREFIX, plen)) {
		const char *rest = fmt + plen;

		clen = strlen(log_cmd);
		if (!strncmp(rest, log_cmd, clen) && !strncmp(rest + clen, ": ", 2))
			rest += clen + 2;
		if ((size_t)snprintf(buf, sizeof(buf), "%s%s: %s", LOG_PREFIX, log_cmd, rest) <
		    sizeof(buf))
			fmt = buf;
	}
	va_start(ap, fmt);
	if (log_fn)
		log_fn(level, fmt, ap);
	else
		vfprintf(stderr, fmt, ap);
	va_end(ap);
}
