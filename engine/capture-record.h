/* SPDX-License-Identifier: MIT */
/* engine: capture-record.c: record -o x.scorch (a capture file as one of the outputs) */
#ifndef SCORCH_ENGINE_CAPTURE_RECORD_H
#define SCORCH_ENGINE_CAPTURE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "capture.h"
#include "python.h"
#include "engine.h"
#include "sampler.h"

struct capture_rec;

struct capture_rec_opts {
	size_t sz;
	enum record_mode mode;
	long freq;
	unsigned int max_depth;	 /* frame pointers' and the kernel's (capture_meta) */
	unsigned int user_depth; /* --max-depth */
	bool user_only, kernel_only, unwind_dwarf;
	const struct event_spec *event; /* MODE_EVENT: the event and its options */
	double interval; /* --interval in seconds (0: none): counts carry their interval */
	const char *target; /* what is recorded (capture_meta.target); borrowed for the open */
	int64_t start_ns;   /* CLOCK_REALTIME of the start (capture_meta.start_ns); 0: now */
	/*
	 * Only a capture is written: user frames are not named during the recording, only
	 * what a later report needs is kept (JIT names are asked for JIT addresses only).
	 */
	bool only;
};

/*
 * Opens @path (atomically replaced at close; "-" is standard output) and writes the
 * capture header and meta record. Returns 0 and *@out, or -errno (logged).
 */
int capture_rec__open(const char *path, const struct capture_rec_opts *o, struct capture_rec **out);
/* The symbolizer and JIT maps of the recording (before the first capture_rec__add()). */
void capture_rec__attach(struct capture_rec *c, struct symbolizer *sym, struct perfmaps *pm);
/* The names of the recording's Python code objects, written at the close (NULL: none). */
void capture_rec__set_python(struct capture_rec *c, struct pycodes *py);
/*
 * The symbolizer's jit_lookup hook for a recording that captures (@ctx: the capture_rec):
 * asks perfmaps__lookup() and keeps each distinct (pid, address) answer for the capture.
 */
int capture_rec__jit_lookup(void *ctx, pid_t pid, uint64_t ip, const char **name, uint64_t *offset);
/*
 * Stores one counted key as fold__add() receives it (in the interval of the last
 * capture_rec__next_interval()), and the kernel symbols covering its
 * kernel addresses (and, with opts.only, the JIT names of its user addresses that fall in
 * anonymous memory or no mapping). Returns 0 or -errno.
 */
int capture_rec__add(struct capture_rec *c, bool offcpu, const struct count_key *key,
		     uint64_t value, const struct stack *user, const struct stack *kernel,
		     bool lost_proc);
/*
 * --interval: the counts added from now on belong to the next interval. Returns 0, or
 * -ERANGE at CAPTURE_MAX_INTERVALS intervals (logged): a capture holds no more.
 */
int capture_rec__next_interval(struct capture_rec *c);
/*
 * Before symbolizer__forget_gen(@pid, @gen): writes the mappings of the image if counts
 * used them. Returns 0 or -errno.
 */
int capture_rec__release(struct capture_rec *c, pid_t pid, uint64_t gen);
/*
 * Writes the mappings of every image still held, @st and the end record, and commits the
 * file (@commit false: removes it). Returns 0 or -errno (logged). Then only __free().
 */
int capture_rec__close(struct capture_rec *c, const struct capture_stats *st, bool commit);
/* One summary line: what the capture holds and its size. */
void capture_rec__summary(const struct capture_rec *c);
/* COUNT records written (a stack by its addresses, once per interval it was seen in). */
uint64_t capture_rec__counts(const struct capture_rec *c);
void capture_rec__free(struct capture_rec *c);

#endif /* SCORCH_ENGINE_CAPTURE_RECORD_H */
