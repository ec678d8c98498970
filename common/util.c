// SPDX-License-Identifier: MIT
/* common: bounded file reads, validated number parsing, path names. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int proc__read_stat(int pid, struct proc_stat *st)
{
	char path[32], *text = NULL, *p, *tok, *save = NULL;
	int field, err, found = 0;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	err = file__read_bounded(AT_FDCWD, path, 4096, &text, &len);
	if (err)
		return err;
	/* "pid (comm) state ...": comm may hold anything, so count fields after the last ')' */
	p = strrchr(text, ')');
	for (field = 3, tok = p ? strtok_r(p + 1, " \n", &save) : NULL; tok && found < 3;
	     tok = strtok_r(NULL, " \n", &save), field++) {
		if (field == 3) {
			st->state = tok[0];
			found++;
		} else if (field == 9 || field == 22) {
			if (parse__u64(tok, 10, field == 9 ? &st->flags : &st->start_time))
				break;
			found++;
		}
	}
	free(text);
	return found == 3 ? 0 : -EINVAL;
}

int file__read_bounded(int dirfd, const char *path, size_t max, char **buf, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *data = NULL, *tmp;
	struct stat st;
	int fd, err = 0;
	ssize_t n;

	*buf = NULL;
	*len = 0;
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	data = malloc(cap + 1);
	if (!data) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		if (used == cap) {
			if (cap > max) {
				err = -EFBIG;
				goto cleanup;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			tmp = realloc(data, cap + 1);
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			data = tmp;
		}
		n = read(fd, data + used, cap - used);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		used += n;
		if (used > max) {
			err = -EFBIG;
			goto cleanup;
		}
	}
	data[used] = '\0';
	*buf = data;
	*len = used;
	data = NULL;
cleanup:
	free(data);
	close(fd);
	return err;
}

int parse__u64(const char *s, int base, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == s || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse__long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == s || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse__double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == s || *end || isnan(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

bool path__is_jitdump(const char *path, size_t len)
{
	const char *base = memrchr(path, '/', len);
	size_t i, n;

	base = base ? base + 1 : path;
	n = path + len - base;
	if (n < 10 || memcmp(base, "jit-", 4) || memcmp(base + n - 5, ".dump", 5))
		return false;
	for (i = 4; i < n - 5; i++)
		if (base[i] < '0' || base[i] > '9')
			return false;
	return true;
}

int cpu_list__parse(const char *path, bool *online, int nr)
{
	char *buf = NULL, *p, *end;
	size_t len;
	long a, b;
	int err;

	err = file__read_bounded(AT_FDCWD, path, 64 * 1024, &buf, &len);
	if (err)
		return err;
	for (p = buf; *p && *p != '\n';) {
		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno || a < 0)
			goto bad;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || errno || b < a)
				goto bad;
		}
		for (; a <= b && a < nr; a++)
			online[a] = true;
		p = *end == ',' ? end + 1 : end;
		if (end == p && *p && *p != '\n')
			goto bad;
	}
	free(buf);
	return 0;
bad:
	free(buf);
	return -EINVAL;
}
