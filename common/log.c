// SPDX-License-Identifier: MIT
/* common: the process-wide leveled log sink. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static void emit(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_fn)
		log_fn(level, fmt, ap);
	else
		vfprintf(stderr, fmt, ap);
	va_end(ap);
}

void log__print(enum log_level level, const char *fmt, ...)
{
	size_t plen = sizeof(LOG_PREFIX) - 1, clen;
	const char *rest;
	char msg[1024];
	va_list ap;
	int n;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	if (!log_cmd || strncmp(fmt, LOG_PREFIX, plen)) {
		if (log_fn)
			log_fn(level, fmt, ap);
		else
			vfprintf(stderr, fmt, ap);
		va_end(ap);
		return;
	}
	/* "scorch: X" -> "scorch: CMD: X", once: X may name the command already */
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	rest = msg + plen;
	clen = strlen(log_cmd);
	if (!strncmp(rest, log_cmd, clen) && !strncmp(rest + clen, ": ", 2))
		rest += clen + 2;
	/* a message longer than msg is cut: its end still says where it was */
	emit(level, "%s%s: %s%s", LOG_PREFIX, log_cmd, rest,
	     (size_t)n >= sizeof(msg) ? "...\n" : "");
}

bool log__hint_open(const char *path, int err, bool write)
{
	const char *slash = strrchr(path, '/');
	unsigned int uid = (unsigned int)geteuid();
	char dir[4096];

	/* the directory a file is created in: what writing needs (the file is renamed) */
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	switch (err) {
	case -EACCES:
	case -EPERM:
		if (write)
			pr_hint("uid %u may not create files in '%s': see its mode and its "
				"parents' (ls -ld), write elsewhere, or run as a user who can "
				"write there\n",
				uid, dir);
		else
			pr_hint("uid %u may not read '%s': see its mode and its directories' "
				"(ls -ld), or run as a user who can read it\n",
				uid, path);
		return true;
	case -EROFS:
		pr_hint("'%s' is on a read-only file system: write elsewhere\n", dir);
		return true;
	case -ENOENT:
		if (!write)
			return false;
		pr_hint("the directory '%s' does not exist: create it, or write elsewhere\n", dir);
		return true;
	}
	return false;
}
