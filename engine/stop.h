/* SPDX-License-Identifier: MIT */
/* engine: stop.c: when the recording ends */
#ifndef SCORCH_ENGINE_STOP_H
#define SCORCH_ENGINE_STOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include <pthread.h>
#include <stdatomic.h>

#include "engine.h"
#include "governor.h"

/*
 * A thread that ends the recording (sampler__stop()) at the deadline or at SIGINT or
 * SIGTERM, whatever the main thread is doing; the main thread polls stopper__fd() and
 * finishes its loop when it is readable. SIGINT and SIGTERM must be blocked in every
 * thread before stopper__start(): the thread takes them through a signalfd.
 */
struct stopper {
	struct sampler *s;
	struct governor *gov; /* ticked on the thread; NULL: none */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */
	double stopped_at;    /* when sampling stopped; read after stopper__finish() */
	int sig;	      /* the signal that ended it; 0: another cause */
	int sigfd, efd, quitfd;
	int askfd; /* the caller's (recorder__stop()): readable, it stops; -1: none */
	pthread_t thread;
	bool running;
	atomic_bool stopped;
};
/* Starts the thread; sampling ends at @deadline_ns (CLOCK_MONOTONIC; 0: none), in the
 * kernel too (sampler__end_at()), or when @ask_fd (-1: none; the caller's, left open)
 * is readable. @gov (or NULL), started, is ticked there until the stop, and ended at it.
 * Returns 0, or -errno (logged). */
int stopper__start(struct stopper *st, struct sampler *s, struct governor *gov,
		   uint64_t deadline_ns, int ask_fd);
/* Readable once sampling has stopped. */
int stopper__fd(const struct stopper *st);
bool stopper__stopped(struct stopper *st);
/* Stops sampling if not done yet, ends the thread, closes the fds. Safe to repeat. */
void stopper__finish(struct stopper *st);

#endif /* SCORCH_ENGINE_STOP_H */
