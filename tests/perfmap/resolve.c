// SPDX-License-Identifier: MIT
/*
 * tests/perfmap: resolves sampled stacks of a live JIT process through libscorch_perfmap,
 * the way `scorch record` will: track the process while it runs, refresh once a second
 * while samples are being taken, one last refresh after it exits, then look up.
 *
 *   perfmap_resolve PID COMM HOT < samples
 *
 * Each input line is one sample, "COMM IP [IP...]" in hex, leaf first (made from
 * `perf script -F comm,ip` by tests/perfmap/runtime.sh). Prints, for the samples of COMM:
 *   samples N hot H leaf_resolved L frames F resolved R
 * where H counts samples with a frame whose name contains HOT. Exit 0, 1 on error.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "perfmap.h"

int main(int argc, char **argv)
{
	uint64_t samples = 0, hot = 0, leaf = 0, frames = 0, resolved = 0, ip, off;
	struct pollfd pfd = {.fd = 0, .events = POLLIN};
	size_t len = 0, cap = 0;
	char *input = NULL, *line, *next, *tok, *save;
	struct perfmaps_stats st;
	struct perfmaps *pm = NULL;
	const char *name;
	bool is_hot, first;
	long pid;
	ssize_t n;
	int err = 1;

	if (argc != 4 || parse__long(argv[1], 1, INT32_MAX, &pid)) {
		fprintf(stderr, "usage: perfmap_resolve PID COMM HOT < samples\n");
		return 2;
	}
	pm = perfmaps__new(NULL);
	if (!pm || perfmaps__track(pm, (pid_t)pid)) {
		fprintf(stderr, "perfmap_resolve: cannot track process %ld\n", pid);
		goto cleanup;
	}
	/* refresh once a second until the samples arrive (the process runs meanwhile) */
	for (;;) {
		if (poll(&pfd, 1, 1000) == 0) {
			if (perfmaps__refresh(pm, 0))
				goto cleanup;
			continue;
		}
		if (array__grow((void **)&input, &cap, len + 65536 + 1, 1))
			goto cleanup;
		n = read(0, input + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto cleanup;
		if (n == 0)
			break;
		len += n;
	}
	if (!input)
		goto cleanup;
	input[len] = '\0';
	/* the process has exited by now: read what it wrote last through the kept fds */
	if (perfmaps__refresh(pm, (pid_t)pid))
		goto cleanup;
	for (line = input; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		tok = strtok_r(line, " \t", &save);
		if (!tok || strcmp(tok, argv[2]))
			continue;
		samples++;
		is_hot = false;
		first = true;
		while ((tok = strtok_r(NULL, " \t", &save))) {
			if (parse__u64(tok, 16, &ip))
				continue;
			frames++;
			/* callers are return addresses: look them up at ip - 1 */
			if (!perfmaps__lookup(pm, (pid_t)pid, first ? ip : ip - 1, &name, &off)) {
				resolved++;
				leaf += first;
				is_hot |= strstr(name, argv[3]) != NULL;
			}
			first = false;
		}
		hot += is_hot;
	}
	perfmaps__stats(pm, &st);
	printf("samples %llu hot %llu leaf_resolved %llu frames %llu resolved %llu\n",
	       (unsigned long long)samples, (unsigned long long)hot, (unsigned long long)leaf,
	       (unsigned long long)frames, (unsigned long long)resolved);
	printf("perfmap: maps %llu dumps %llu lines %llu bad %llu refused %llu rewritten %llu "
	       "bytes %llu\n",
	       (unsigned long long)st.maps_opened, (unsigned long long)st.dumps_opened,
	       (unsigned long long)st.lines_parsed, (unsigned long long)st.lines_bad,
	       (unsigned long long)st.files_refused, (unsigned long long)st.files_rewritten,
	       (unsigned long long)st.bytes_read);
	err = 0;
cleanup:
	free(input);
	perfmaps__free(pm);
	return err;
}
