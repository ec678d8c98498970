/* SPDX-License-Identifier: MIT */
/* engine: launch.c: record -- cmd */
#ifndef SCORCH_ENGINE_LAUNCH_H
#define SCORCH_ENGINE_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

struct launch {
	pid_t pid;  /* the child, waiting to exec; 0 if none */
	int go_fd;  /* write end: closing it lets the child exec */
	int err_fd; /* read end: the child's exec errno, or EOF on success */
	int pidfd;  /* pidfd of the child, -1 if unsupported */
};

#define LAUNCH_NICE_KEEP 100
/* Forks a child that waits for launch__go() before it execs @argv at nice value @nice
 * (LAUNCH_NICE_KEEP: scorch's). Returns 0 or -errno. */
int launch__start(struct launch *l, char *const argv[], int nice);
/* Lets the child exec. Returns 0, or -errno if exec failed (logged, with the command name). */
int launch__go(struct launch *l, const char *cmd);
/* Reaps the child: returns its wait status, or -errno. */
int launch__wait(struct launch *l, bool nohang);
/* Kills (SIGKILL) and reaps a child that never ran. */
void launch__abort(struct launch *l);

#endif /* SCORCH_ENGINE_LAUNCH_H */
