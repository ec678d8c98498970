// SPDX-License-Identifier: MIT
/*
 * forks: a parent that forks children which keep its image for a while (a worker
 * pool; the instant between fork and exec, made long). The parent burns MS
 * milliseconds of CPU in parent_burn(), then forks N children that each burn MS
 * in child_burn(), then, when PROG is given, exec PROG ARGS...; the parent waits
 * for them. A profile must name child_burn in the children (their mappings are
 * the parent's) and PROG's own functions after the exec, never the other's.
 *
 *   forks N MS [PROG [ARGS...]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define DEFINE_BURN(name)                                                                          \
	__attribute__((noinline)) static unsigned long name(double ms)                             \
	{                                                                                          \
		double end = cpu_ms() + ms;                                                        \
		volatile unsigned long x = 0;                                                      \
                                                                                                   \
		while (cpu_ms() < end) {                                                           \
			for (int i = 0; i < 1000; i++)                                             \
				x += i;                                                            \
		}                                                                                  \
		return x;                                                                          \
	}

DEFINE_BURN(parent_burn)
DEFINE_BURN(child_burn)

int main(int argc, char **argv)
{
	int i, status, failed = 0;
	char *end = NULL;
	double ms = 0;
	long n = 0;
	pid_t pid;

	if (argc > 2) {
		n = strtol(argv[1], &end, 10);
		if (*end)
			n = 0;
		ms = strtod(argv[2], &end);
		if (*end)
			ms = 0;
	}
	if (n < 1 || n > 64 || !(ms > 0 && ms <= 60000)) {
		fprintf(stderr,
			"usage: forks N MS [PROG [ARGS...]] (1 <= N <= 64, 0 < MS <= 60000)\n");
		return 2;
	}
	if (parent_burn(ms) == 1)
		return 1;
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0) {
			perror("forks: fork");
			failed = 1;
			break;
		}
		if (pid == 0) {
			if (child_burn(ms) == 1)
				_exit(1);
			if (argc > 3) {
				execv(argv[3], argv + 3);
				perror("forks: execv");
				_exit(1);
			}
			_exit(0);
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	return failed;
}
