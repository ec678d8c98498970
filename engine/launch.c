// SPDX-License-Identifier: MIT
/* profiler: record -- cmd: start a command held before exec until sampling is attached. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "engine.h"
#include "launch.h"

int launch__start(struct launch *l, char *const argv[], int nice)
{
	int go[2] = { -1, -1 }, st[2] = { -1, -1 }, err;
	sigset_t empty;
	char c;

	l->pid = 0;
	l->go_fd = l->err_fd = l->pidfd = -1;
	if (pipe2(go, O_CLOEXEC) || pipe2(st, O_CLOEXEC)) {
		err = -errno;
		goto cleanup;
	}
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		l->pid = 0;
		goto cleanup;
	}
	if (l->pid == 0) {
		/* child: the signal mask and dispositions are the user's, not ours */
		sigemptyset(&empty);
		sigprocmask(SIG_SETMASK, &empty, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* and the nice value scorch was started with, not its start-up's */
		if (nice != LAUNCH_NICE_KEEP && setpriority(PRIO_PROCESS, 0, nice))
			_exit(127);
		close(go[1]);
		close(st[0]);
		/* EOF on the go pipe: the parent is attached (or gone) */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		if (getppid() == 1)
			_exit(127);
		execvp(argv[0], argv);
		err = errno;
		if (write(st[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	l->go_fd = go[1];
	l->err_fd = st[0];
	l->pidfd = syscall(SYS_pidfd_open, l->pid, 0);
	return 0;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	return err;
}

int launch__go(struct launch *l, const char *cmd)
{
	int child_errno = 0;
	ssize_t n;

	close(l->go_fd);
	l->go_fd = -1;
	do {
		n = read(l->err_fd, &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(child_errno)) {
		pr_err("cannot run '%s': %s\n", cmd, strerror(child_errno));
		if (child_errno == ENOENT)
			pr_hint("check the command name and PATH\n");
		launch__wait(l, false);
		return -child_errno;
	}
	return 0;
}

int launch__wait(struct launch *l, bool nohang)
{
	int status;
	pid_t r;

	if (!l->pid)
		return -ECHILD;
	do {
		r = waitpid(l->pid, &status, nohang ? WNOHANG : 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -EAGAIN;
	l->pid = 0;
	if (l->pidfd >= 0)
		close(l->pidfd);
	l->pidfd = -1;
	return status;
}

void launch__abort(struct launch *l)
{
	/* kill before closing the go pipe: its EOF would let the child exec */
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		launch__wait(l, false);
	}
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
}
