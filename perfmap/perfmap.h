/* SPDX-License-Identifier: MIT */
/* perfmap: names for JIT code from the files runtimes write (perf-PID.map, jit-PID.dump). */
#ifndef SCORCH_PERFMAP_H
#define SCORCH_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Two sources, both written by the profiled process (see docs/jit.md):
 *
 *   perf map  /tmp/perf-NSPID.map, text lines "START SIZE name" (hex, "0x" optional),
 *             found as the process sees it: /proc/PID/root/tmp/perf-NSPID.map, NSPID
 *             being PID for a process in our PID namespace (one stat of
 *             /proc/PID/ns/pid tells), else the innermost PID of "NSpid:" in
 *             /proc/PID/status (containers).
 *   jitdump   jit-NSPID.dump (perf's binary format: JIT_CODE_LOAD / MOVE / DEBUG_INFO /
 *             CLOSE records), found through the process's own mapping of it in
 *             /proc/PID/maps (runtimes mmap it for perf), opened under /proc/PID/root.
 *
 * Lifecycle, as `scorch record` drives it:
 *   perfmaps__track(pid)     when a process is first seen, while it is alive: finds its
 *                            NSpid, opens whatever files exist and keeps the file
 *                            descriptors, so the files stay readable after it exits;
 *                            perfmaps__track_later(pid) instead when its mappings hold
 *                            nothing a JIT file could name (most processes);
 *   perfmaps__maps_changed(pid)  when told the process mapped executable memory (BPF
 *                            sees mm->exec_vm change): looks for a perf map and a jitdump
 *                            again at once;
 *   perfmaps__refresh(0)     about once a second (a sweep): reads only the bytes appended
 *                            since the last read (cost follows the new bytes, not the file
 *                            size); notices a file truncated, rewritten or replaced and
 *                            reads it again from the start; looks for a perf map not found
 *                            yet 1, 2, 4, 8 and then every 16 sweeps after the last look
 *                            (most processes never write one);
 *   perfmaps__refresh(pid)   when a tracked process exits (reads through the open fds);
 *                            a process tracked for later and not looked at yet is skipped
 *   perfmaps__continue()     with slice_bytes, between the caller's other work while
 *                            perfmaps__pending(): reads on where a call's budget ended;
 *   perfmaps__lookup()       at symbolization time, after the last refresh;
 *   perfmaps__forget(pid)    after its last stacks are symbolized.
 *
 * Entries: a later perf-map line wins over an earlier one where they overlap (recompiled
 * code, reused addresses); so does a later jitdump record (file order). jitdump entries are
 * consulted before perf-map entries. Without sample times the newest entry wins; with a
 * sample time perfmaps__lookup_at() takes the newest load that precedes it.
 *
 * Security: scorch runs as root and these files belong to the profiled user. Every path
 * component below /proc/PID/root is opened without following symlinks; a file must be a
 * regular file owned by root or by the process's real or effective uid, else it is
 * ignored with one warning and counted (perf's rule). At most max_file_bytes of a file are
 * read, at most max_entries entries of a process are kept, and with slice_bytes a call
 * reads that much at most: a user's file cannot take the caller's time or memory without
 * bound. The contents are only parsed, and names are returned as bytes (embedded NUL
 * bytes become '?'; escaping is the caller's business).
 *
 * Not thread-safe: one thread drives a struct perfmaps.
 */

struct perfmaps;

struct perfmaps_opts {
	size_t sz; /* sizeof(struct perfmaps_opts) */
	/*
	 * Directory laid out like /proc (PID/status, PID/maps, PID/root/); NULL: "/proc".
	 * Tests point it at a fixture tree.
	 */
	const char *proc_root;
	/* File offset up to which a perf map or jitdump is read; 0: 256 MiB. */
	uint64_t max_file_bytes;
	/* Skip jitdump discovery (no /proc/PID/maps reads). */
	bool no_jitdump;
	/*
	 * The caller calls perfmaps__maps_changed() when a tracked process maps new
	 * executable memory (runtimes map their jitdump executable, for perf to see):
	 * /proc/PID/maps is then scanned for jitdumps at perfmaps__track() and on those
	 * calls only, not again and again by perfmaps__refresh() (at 1, 2, 4, 8 and every
	 * 16 s otherwise).
	 */
	bool scan_on_notice;
	/*
	 * Entries kept per process, its perf map and jitdumps together; 0: 1,000,000
	 * (about 100 MB with their names at most). Past it the file being read is cut:
	 * nothing more of it is read, the entries past the cap are counted
	 * (entries_dropped) and the first file cut is named in the stats.
	 */
	uint64_t max_entries;
	/*
	 * Bytes read at most per perfmaps__track(), __refresh(), __maps_changed() or
	 * __continue(false) call, over all files; 0: no limit. A file with more to read is
	 * left pending (perfmaps__pending()) and read on by the next calls: a caller that
	 * also drains a ring buffer calls perfmaps__continue() between drains, so that a
	 * map of hundreds of MB never holds it for long. A process's index is rebuilt once
	 * its files are read through; until then lookups use the index built before.
	 */
	uint64_t slice_bytes;
};

/* Returns a new, empty set or NULL with errno set (EINVAL: bad opts, ENOMEM). */
struct perfmaps *perfmaps__new(const struct perfmaps_opts *opts);
/* Closes every file and frees every entry and name. NULL is accepted. */
void perfmaps__free(struct perfmaps *pm);

/*
 * Starts following process @pid: finds its NSpid (see above), opens its perf map if it
 * exists and scans /proc/PID/maps for a jitdump, then reads both. Its uids (for the owner
 * check) are read from /proc/PID/status when a file not owned by root is found. Tracking
 * a PID already tracked refreshes it (one tracked for later is looked at now). Returns 0
 * (also when the process has no JIT files yet: later refreshes look again), -ESRCH if
 * the process is gone (nothing is tracked then), -ENOMEM, or another -errno from /proc.
 */
int perfmaps__track(struct perfmaps *pm, pid_t pid);

/*
 * Starts following process @pid without looking for its files now: for a caller that has
 * just read its mappings and found nothing a JIT file could name (no anonymous executable
 * memory, no jitdump mapped: symbolizer__jit_hints() 0), as most processes. Its perf map
 * is looked for from the next sweep on, and by perfmaps__maps_changed(), which also scans
 * for jitdumps (with scan_on_notice; else the next refresh does); its NSpid is found at
 * the first look. Saves a short-lived process the look (an ns stat, an open under
 * /proc/PID/root, a maps read). A PID already tracked is left as it is. Returns 0, -EINVAL
 * or -ENOMEM.
 */
int perfmaps__track_later(struct perfmaps *pm, pid_t pid);

/*
 * Reads what was appended to the files of @pid (0: of every tracked process) and opens
 * files that appeared since, while the process is alive (with @pid 0, as scheduled
 * above). A process that has exited is read through the descriptors kept open. Read
 * errors are warned once per file and counted, not returned. Returns 0, -ENOENT if @pid
 * is not tracked, -ENOMEM.
 */
int perfmaps__refresh(struct perfmaps *pm, pid_t pid);

/*
 * Process @pid has new executable mappings (a runtime starting up?): looks for its perf
 * map if none is open yet (and restarts the sweeps' schedule for it), scans
 * /proc/PID/maps for a jitdump, and reads what it finds. Returns 0 (also when the
 * process is gone: nothing found), -ENOENT if @pid is not tracked, -ENOMEM.
 */
int perfmaps__maps_changed(struct perfmaps *pm, pid_t pid);

/* True if a file has bytes left unread by a call's slice_bytes budget. */
bool perfmaps__pending(const struct perfmaps *pm);

/*
 * Reads on the files left pending: slice_bytes at most, or all of them to their end (or
 * their caps) if @all. No sweep (no new file is looked for). Returns 1 if bytes are still
 * pending, 0 if none, -ENOMEM.
 */
int perfmaps__continue(struct perfmaps *pm, bool all);

/* Closes the files of @pid and drops its entries. Unknown PIDs are ignored. */
void perfmaps__forget(struct perfmaps *pm, pid_t pid);

/*
 * The symbolizer's jit_lookup hook (@pm is the struct perfmaps). Finds the JIT entry of
 * process @pid that covers @ip (start <= ip < start + size). Returns 0 with *name (borrowed:
 * valid until perfmaps__forget(@pid) or perfmaps__free()) and *offset = ip - entry start.
 * Returns -ENOENT when no entry covers @ip; *name is then "[perf-NSPID.map]" if the process
 * has a perf map (FlameGraph's label for such frames), else NULL and *offset 0.
 * Lookups after new refreshes rebuild the process's index once (sorted, non-overlapping
 * ranges; binary search).
 */
int perfmaps__lookup(void *pm, pid_t pid, uint64_t ip, const char **name, uint64_t *offset);

/*
 * Same, for a sample taken at @ts_ns (CLOCK_MONOTONIC nanoseconds, the clock runtimes
 * stamp jitdump records with): the newest jitdump entry loaded at or before @ts_ns wins;
 * perf-map lines carry no time and count as loaded before every sample. Linear in the
 * number of entries of the process: for occasional use, not per frame of a big profile.
 */
int perfmaps__lookup_at(struct perfmaps *pm, pid_t pid, uint64_t ip, uint64_t ts_ns,
			const char **name, uint64_t *offset);

/* Counters for the end-of-run summary. Every skipped line, record or file is counted. */
struct perfmaps_stats {
	uint64_t procs_tracked;	    /* processes tracked (ever) */
	uint64_t maps_opened;	    /* perf maps opened */
	uint64_t dumps_opened;	    /* jitdump files opened */
	uint64_t files_refused;	    /* symlink, not a regular file, foreign owner, bad header */
	uint64_t maps_stale;	    /* perf maps older than their process (an earlier one's) */
	uint64_t files_capped;	    /* files that reached max_file_bytes */
	uint64_t files_cut;	    /* files cut by max_entries: the rest not read */
	uint64_t entries_dropped;   /* entries past max_entries (in the chunks read) */
	uint64_t lookups_cut;	    /* lookups unnamed in a process whose file was cut */
	const char *cut_path;	    /* the first file cut (as the process sees it), or NULL */
	pid_t cut_pid;		    /* its process */
	uint64_t cut_bytes;	    /* the bytes of it read (the entries kept) */
	uint64_t files_rewritten;   /* truncated, rewritten or replaced: read again from 0 */
	uint64_t read_errors;	    /* read(2) failures */
	uint64_t lines_parsed;	    /* perf-map entries added */
	uint64_t lines_bad;	    /* perf-map lines skipped (malformed, too long) */
	uint64_t records_parsed;    /* jitdump LOAD and MOVE records added */
	uint64_t records_bad;	    /* jitdump records skipped (malformed, unknown MOVE) */
	uint64_t records_other;	    /* jitdump DEBUG_INFO, UNWINDING_INFO, CLOSE, unknown ids */
	uint64_t records_truncated; /* incomplete record at the end of a file at lookup time */
	uint64_t bytes_read;	    /* bytes read from perf maps and jitdumps */
	uint64_t lookups;	    /* perfmaps__lookup() calls */
	uint64_t lookups_resolved;  /* of those, returning 0 */
};
void perfmaps__stats(const struct perfmaps *pm, struct perfmaps_stats *st);

/*
 * One perf map read whole from @path, for a process that is gone (scorch report): opened
 * without following a symlink; refused (-EPERM) unless a regular file owned by root or
 * @uid, (-ESTALE) when last written before @since_s (CLOCK_REALTIME seconds: a map of an
 * older process with the same PID); at most 256 MiB and 1,000,000 entries read.
 * Returns 0 or -errno. perfmap_file__lookup(): 0 and the entry's name (valid until
 * perfmap_file__free()) and @ip's offset in it, or -ENOENT.
 */
struct perfmap_file;
int perfmap_file__open(const char *path, uid_t uid, uint64_t since_s, struct perfmap_file **out);
int perfmap_file__lookup(const struct perfmap_file *pf, uint64_t ip, const char **name,
			 uint64_t *offset);
void perfmap_file__free(struct perfmap_file *pf);

#endif /* SCORCH_PERFMAP_H */
