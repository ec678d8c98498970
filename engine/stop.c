// SPDX-License-Identifier: MIT
/* profiler: when a recording ends: -d, SIGINT or SIGTERM, on a thread of its own. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "engine.h"
#include "governor.h"
#include "sampler.h"
#include "stop.h"
#include "timing.h"

/*
 * Waits for a signal, the deadline, a stop asked (askfd: recorder__stop()) or
 * stopper__finish(), whichever comes first, then stops sampling and says so on the
 * event fd; meanwhile it runs the cost governor's ticks. The main thread may be busy
 * for seconds (naming the stacks of exited processes, unwinding a full ring): the
 * recording still ends on time.
 */
static void *stopper_run(void *arg)
{
	struct stopper *st = arg;
	struct pollfd pfds[3] = {
		{.fd = st->sigfd, .events = POLLIN},
		{.fd = st->quitfd, .events = POLLIN},
		{.fd = st->askfd, .events = POLLIN}, /* -1: ignored by ppoll() */
	};
	struct signalfd_siginfo si;
	uint64_t one = 1, stop_ns, tick;

	tick = st->gov ? governor__tick(st->gov, timing__now_ns()) : 0;
	for (;;) {
		uint64_t now = timing__now_ns(), wake = st->deadline_ns;
		struct timespec ts;

		if (st->deadline_ns && now >= st->deadline_ns)
			break;
		if (tick && now >= tick)
			tick = governor__tick(st->gov, now);
		if (tick && (!wake || tick < wake))
			wake = tick;
		ts.tv_sec = (time_t)((wake - now) / 1000000000ULL);
		ts.tv_nsec = (long)((wake - now) % 1000000000ULL);
		if (ppoll(pfds, 3, wake ? &ts : NULL, NULL) < 0 && errno != EINTR)
			break;
		if (pfds[0].revents & POLLIN) {
			if (read(st->sigfd, &si, sizeof(si)) == sizeof(si)) {
				st->sig = (int)si.ssi_signo;
				break;
			}
		}
		if ((pfds[1].revents | pfds[2].revents) & POLLIN)
			break;
	}
	stop_ns = sampler__stop(st->s);
	if (st->gov)
		governor__end(st->gov, stop_ns);
	st->stopped_at = stop_ns / 1e9;
	atomic_store(&st->stopped, true);
	if (write(st->efd, &one, sizeof(one)) < 0)
		pr_debug("cannot wake the recording loop: %s\n", strerror(errno));
	return NULL;
}

int stopper__start(struct stopper *st, struct sampler *s, struct governor *gov,
		   uint64_t deadline_ns, int ask_fd)
{
	struct sched_param param = { .sched_priority = 1 };
	sigset_t set;
	int err;

	memset(st, 0, sizeof(*st));
	st->s = s;
	st->gov = gov;
	st->deadline_ns = deadline_ns;
	/* the programs end on time even when this thread waits for a CPU */
	if (deadline_ns)
		sampler__end_at(s, deadline_ns);
	st->sigfd = st->efd = st->quitfd = -1;
	st->askfd = ask_fd;
	atomic_init(&st->stopped, false);
	/* blocked in every thread (record blocks them before its first thread starts) */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	st->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	st->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	st->quitfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (st->sigfd < 0 || st->efd < 0 || st->quitfd < 0) {
		err = -errno;
		goto cleanup;
	}
	err = -pthread_create(&st->thread, NULL, stopper_run, st);
	if (err)
		goto cleanup;
	st->running = true;
	/* it sleeps but for a few microseconds at the end; as an ordinary thread it waited
	 * 10 to 90 ms for a CPU at the deadline on two CPUs kept busy and sampled at 100 kHz */
	err = pthread_setschedparam(st->thread, SCHED_FIFO, &param);
	if (err)
		pr_debug("the stop thread runs without SCHED_FIFO: %s\n", strerror(err));
	return 0;
cleanup:
	pr_err("cannot start the recording's stop thread: %s\n", strerror(-err));
	stopper__finish(st);
	return err;
}

int stopper__fd(const struct stopper *st)
{
	return st->efd;
}

bool stopper__stopped(struct stopper *st)
{
	return atomic_load(&st->stopped);
}

void stopper__finish(struct stopper *st)
{
	uint64_t one = 1;

	if (st->running) {
		if (write(st->quitfd, &one, sizeof(one)) < 0)
			pr_debug("cannot wake the stop thread: %s\n", strerror(errno));
		pthread_join(st->thread, NULL);
		st->running = false;
	} else if (st->s && !st->stopped_at) {
		uint64_t stop_ns = sampler__stop(st->s);

		if (st->gov)
			governor__end(st->gov, stop_ns);
		st->stopped_at = stop_ns / 1e9;
	}
	if (st->sigfd >= 0)
		close(st->sigfd);
	if (st->efd >= 0)
		close(st->efd);
	if (st->quitfd >= 0)
		close(st->quitfd);
	st->sigfd = st->efd = st->quitfd = -1;
}
