// SPDX-License-Identifier: MIT
/*
 * perfmap: one perf map read whole from a path, for a process that is gone (scorch
 * report names a capture's JIT frames with the map a runtime wrote at its exit). The
 * same rules as for a live process's: no symlink followed, a regular file owned by root
 * or by the process's user, at most 256 MiB and 1,000,000 entries read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap-private.h"

#define FILE_MAX_BYTES	 (256ull << 20)
#define FILE_MAX_ENTRIES 1000000
#define FILE_CHUNK	 (1u << 20)

struct perfmap_file {
	struct strset *strs;
	struct pm_index ix;
	struct perfmaps_stats st;
};

void perfmap_file__free(struct perfmap_file *pf)
{
	if (!pf)
		return;
	pm_index__free(&pf->ix);
	strset__free(pf->strs);
	free(pf);
}

int perfmap_file__open(const char *path, uid_t uid, uint64_t since_s, struct perfmap_file **out)
{
	struct pm_text_state ts = {};
	struct perfmap_file *pf;
	struct pm_sink sink;
	uint64_t total = 0;
	struct stat st;
	char *buf = NULL;
	size_t have = 0, used;
	ssize_t n;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	/* written by the process's user (or root), after the recording began */
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != uid)) {
		err = -EPERM;
		goto cleanup;
	}
	if ((uint64_t)st.st_mtim.tv_sec < since_s) {
		err = -ESTALE;
		goto cleanup;
	}
	pf = calloc(1, sizeof(*pf));
	buf = malloc(FILE_CHUNK);
	if (!pf || !buf) {
		free(pf);
		err = -ENOMEM;
		goto cleanup;
	}
	pf->strs = strset__new();
	pf->ix.max = FILE_MAX_ENTRIES;
	if (!pf->strs) {
		perfmap_file__free(pf);
		err = -ENOMEM;
		goto cleanup;
	}
	sink = (struct pm_sink){ .ix = &pf->ix, .strs = pf->strs, .st = &pf->st };
	while (total < FILE_MAX_BYTES) {
		n = read(fd, buf + have, MIN((uint64_t)(FILE_CHUNK - have), FILE_MAX_BYTES - total));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		total += (uint64_t)n;
		have += (size_t)n;
		used = pm_text__parse(&ts, buf, have, n == 0, &sink, &err);
		if (err)
			break;
		memmove(buf, buf + used, have - used);
		have -= used;
		if (!n)
			break;
	}
	if (!err)
		err = pm_index__build(&pf->ix);
	if (err)
		perfmap_file__free(pf);
	else
		*out = pf;
cleanup:
	free(buf);
	close(fd);
	return err;
}

int perfmap_file__lookup(const struct perfmap_file *pf, uint64_t ip, const char **name,
			 uint64_t *offset)
{
	const struct pm_entry *e = pm_index__find(&pf->ix, ip);

	if (!e)
		return -ENOENT;
	*name = e->name;
	*offset = ip - e->start;
	return 0;
}
