/* SPDX-License-Identifier: MIT */
/* engine: sideband.c: the kernel's records of fork, exec and executable mmaps */
#ifndef SCORCH_ENGINE_SIDEBAND_H
#define SCORCH_ENGINE_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "engine.h"

/*
 * One dummy perf event per online CPU records every fork, exec and executable mmap
 * of the system (as perf record's side-band, without the samples): a process image
 * begun after sideband__open() is known from them alone, so it needs no read of
 * /proc/PID/maps, names its mappings even after it exits or execs again, and maps
 * added later (ld.so loading libc after the first sample) come without another read.
 * Times are CLOCK_MONOTONIC ns, as bpf_ktime_get_ns().
 */
struct sideband;
struct sideband_stats {
	uint64_t records;	 /* read */
	uint64_t lost;		 /* lost by the kernel (its rings full) */
	uint64_t lost_records;	 /* PERF_RECORD_LOST: each marks the images then running */
	uint64_t rings_full;	 /* drains that found a ring too full to be sure: the same */
	uint64_t bad;		 /* malformed records skipped */
	uint64_t execs, forks;	 /* images begun */
	uint64_t mmaps;		 /* executable mappings recorded in a known image */
	uint64_t mmaps_unknown;	 /* of processes begun before the events were opened */
	uint64_t lookups;	 /* sideband__image() answers ... */
	uint64_t lookups_missed; /* ... and not (begun before, or records lost) */
};

/*
 * Opens the events, @ring_bytes of ring each (a power of 2, >= a page); user space is
 * woken (the fds poll readable) when a quarter of one waits. Returns 0, -errno of
 * perf_event_open or mmap (the caller goes on without: /proc is read instead).
 */
int sideband__open(size_t ring_bytes, struct sideband **out);
/* When the events were enabled (CLOCK_MONOTONIC ns): a process forked later and exec'd
 * since is on record whole (but for records lost). */
uint64_t sideband__since(const struct sideband *sb);
void sideband__free(struct sideband *sb);
/* The fds to poll (0 for a NULL @sb). */
int sideband__nr_fds(const struct sideband *sb);
int sideband__fd(const struct sideband *sb, int i);
/* Reads and applies every record written so far (NULL @sb: nothing). 0 or -ENOMEM. */
int sideband__drain(struct sideband *sb);
/*
 * The executable mappings of the image @pid was running at @ts, as recorded up to the
 * last drain: *@v[0..*@n) (sorted, not overlapping; paths as the kernel wrote them:
 * "" anonymous), valid until the next sideband__drain(), and *@version (NULL: not
 * wanted), which changes with every mapping added (never 0). Returns 0, or -ENOENT when
 * that image is not known completely (begun before the events were opened, or records
 * lost while it ran): read /proc instead.
 */
int sideband__image(struct sideband *sb, pid_t pid, uint64_t ts, const struct symbolizer_vma **v,
		    size_t *n, uint32_t *version);
void sideband__stats(const struct sideband *sb, struct sideband_stats *st);

#endif /* SCORCH_ENGINE_SIDEBAND_H */
