// SPDX-License-Identifier: MIT
/*
 * tests/fuzz: runs a fuzz target's entry point once on every file of its committed corpus,
 * without libFuzzer, so that every ctest run (and every sanitizer build) replays the seeds
 * and the regressions found by fuzzing. Linked with one fuzz_*.c in place of libFuzzer's
 * main (cmake/Sanitize.cmake, scorch_add_fuzzer()).
 *
 * usage: replay_NAME DIR|FILE...   exits 0 after at least one input, 1 when there was none
 *                                  or one could not be read; a crash is the target's
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* inputs larger than this are not seeds: fuzz.sh's -max_len is far below it */
#define REPLAY_MAX_INPUT (64u << 20)

static int replay_file(const char *path, size_t *nr)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = file__read_bounded(AT_FDCWD, path, REPLAY_MAX_INPUT, &buf, &len);
	if (err) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(-err));
		return err;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
	free(buf);
	(*nr)++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of @dir, in name order (a failure is reproduced the same way). */
static int replay_dir(const char *dir, size_t *nr)
{
	struct dirent *de;
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i;
	struct stat st;
	DIR *d;
	int err = 0;

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (array__grow((void **)&names, &cap, n + 1, sizeof(*names))) {
			err = -ENOMEM;
			goto cleanup;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			goto cleanup;
		}
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n && !err; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		err = replay_file(path, nr);
	}
cleanup:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return err;
}

int main(int argc, char **argv)
{
	struct stat st;
	size_t nr = 0;
	int i, err = 0;

	for (i = 1; i < argc && !err; i++) {
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		err = S_ISDIR(st.st_mode) ? replay_dir(argv[i], &nr) : replay_file(argv[i], &nr);
	}
	if (err)
		return 1;
	if (!nr) {
		fprintf(stderr, "replay: no input in %s\n", argc > 1 ? argv[1] : "(no argument)");
		return 1;
	}
	printf("replay: %zu inputs, none crashed\n", nr);
	return 0;
}
