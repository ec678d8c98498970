/* SPDX-License-Identifier: MIT */
/* profiler: internal interfaces between the record orchestration, BPF sampler and launcher. */
#ifndef SCORCH_PROFILER_PRIVATE_H
#define SCORCH_PROFILER_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"
#include "capture.h"
#include "symbolize.h"

/*
 * A stack read back from the kernel (a user stack's parts joined: struct stack_trace) or
 * unwound in scorch, leaf first.
 */
struct stack {
	__u32 nr;
	__u64 ips[SCORCH_STACK_WORDS];
};

struct flamegraph_opts;
struct out_file;
struct perfmaps;
struct perfmaps_stats;

/* ---- sideband.c: the kernel's records of fork, exec and executable mmaps ---- */

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

/* ---- event.c: record --event ---- */

enum event_kind {
	EVENT_NONE = 0,
	EVENT_UPROBE,	  /* uprobe:FILE:SYMBOL[+OFF] */
	EVENT_URETPROBE,  /* uretprobe:FILE:SYMBOL[+OFF] */
	EVENT_USDT,	  /* usdt:FILE:PROVIDER:NAME */
	EVENT_TRACEPOINT, /* tracepoint:CATEGORY:NAME, as a raw tracepoint */
	EVENT_SOFTWARE,	  /* page-faults, context-switches, cpu-migrations */
};

struct event_spec {
	enum event_kind kind;
	const char *spec; /* as given (borrowed from argv) */
	char *copy;	  /* owned: the fields below point into it */
	const char *file; /* uprobe, usdt: FILE as given */
	const char *symbol; /* uprobe: SYMBOL; usdt: PROVIDER */
	const char *name;   /* usdt: NAME; tracepoint: NAME; software: the event's name */
	uint64_t add;	    /* uprobe: +OFF */
	char *path;	    /* owned, after event__resolve(): the file probed */
	uint64_t offset;    /* uprobe: file offset probed */
	uint64_t func_size;
	uint32_t sw_config;   /* software: PERF_COUNT_SW_* */
	unsigned int weight_arg; /* --weight ARGn; 0: count */
	char weight_unit[33];	 /* --weight ARGn:UNIT, what the argument counts ("": bytes) */
	uint64_t period;	 /* --period: every Nth event counted (1: all) */
	bool latency;		 /* --latency: entry to return, by the stacks at entry */
	char subtitle[512];	 /* the SVG's (event__svg_defaults()) */
};

/* Parses --event @arg (borrowed) into @ev (zeroed here). 0, -EINVAL (logged), -ENOMEM. */
int event__parse(const char *arg, struct event_spec *ev);
/*
 * Finds what @ev names: a uprobe's or USDT probe's file (a path, or a file name found
 * among the mappings of @pids, then @cmd's executable, then the library directories)
 * and a uprobe's function (by its name, demangled name, a qualified name's end, or a
 * glob; ambiguity is an error listing the candidates); a tracepoint in the kernel's
 * BTF. Returns 0, or -errno after an error line and a hint.
 */
int event__resolve(struct event_spec *ev, const pid_t *pids, size_t nr_pids, char **cmd);
void event__free(struct event_spec *ev);
/* The SVG's title, subtitle (the event, and --period) and count name, unless the user
 * chose them; the strings live as long as @ev. */
struct flamegraph_opts;
void event__svg_defaults(struct event_spec *ev, struct flamegraph_opts *fg);
/* The unit of @ev's counts: pprof's sample type and unit, the SVG's count name. */
void event__unit(const struct event_spec *ev, const char **type, const char **unit,
		 const char **countname);

/* ---- sampler.c, sampler-drain.c, sampler-interval.c: the BPF programs' lifecycle ---- */

struct sampler;

struct sampler_opts {
	size_t sz;
	bool oncpu;         /* sample on-CPU stacks (perf_event, cpu-clock) */
	bool offcpu;        /* count off-CPU time by stack (raw tracepoint sched_switch) */
	/* count stacks at this event instead (record --event; resolved): neither of the above */
	const struct event_spec *event;
	long freq;          /* oncpu: samples per second per CPU */
	bool user_only;     /* no kernel stacks */
	bool kernel_only;   /* no user stacks */
	bool include_idle;  /* count the idle task */
	bool credit_missed; /* a sample weighs the periods missed before it (wall mode) */
	bool filter_pid;    /* only PIDs added with sampler__add_pid() */
	bool filter_tid;    /* only TIDs added with sampler__add_tid() */
	bool follow_forks;  /* children of filtered PIDs join the filter */
	size_t nr_filter;   /* number of PIDs/TIDs that will be added */
	uint32_t max_stacks; /* entries of the stack and count maps */
	bool age_stacks;     /* stacks go once unused for an interval: sampler__age_stacks() */
	bool cut_intervals;  /* offcpu: sampler__cut_intervals() at --interval boundaries */
	/* --unwind kernel: user stacks walked in BPF with tables (ktables.c) of
	 * @kunwind_rows rows, for up to @kunwind_procs process images at once */
	bool unwind_kernel;
	/* --unwind dwarf (auto, on CPU): CPython processes walked in the kernel all the same,
	 * for their Python frames (ktables.c enters only them) */
	bool python_walk;
	uint32_t kunwind_rows;
	uint32_t kunwind_procs;
	/* offcpu only */
	uint64_t min_block_ns;   /* shorter intervals are dropped */
	uint64_t max_block_ns;   /* longer intervals are dropped */
	uint32_t state_mask;     /* 1: interruptible (S), 2: uninterruptible (D) */
	bool with_runqueue;      /* count time runnable but waiting for a CPU */
	bool user_threads_only;
	bool kernel_threads_only;
	bool offwake;		 /* blocked time by (blocked stacks, waker) pair: sched_waking */
	uint32_t max_threads;    /* threads off CPU at once that can be tracked */
	/* --unwind dwarf: user registers and stack copied to user space per sample */
	bool unwind_dwarf;
	uint32_t stack_size;     /* bytes of stack copied from sp (multiple of 8) */
	uint32_t fp_depth;	 /* user frames of a frame-pointer walk (perf_event_max_stack) */
	uint32_t user_depth;	 /* user frames of a walk with tables (--max-depth) */
	uint32_t ring_bytes;     /* size of the sample ring buffer (power of 2, >= 4096) */
	/* the kernel's mmap records are read from this time on (sideband__since()) by a
	 * process in mount namespace @sideband_mntns: the images they cover announce
	 * themselves without waking user space (0: no side-band) */
	uint64_t sideband_since;
	uint32_t sideband_mntns;
};

/* Opens, configures and loads the BPF object. Returns 0 or -errno (logged, with hints). */
int sampler__new(const struct sampler_opts *opts, struct sampler **out);
void sampler__free(struct sampler *s);
int sampler__add_pid(struct sampler *s, pid_t pid);
int sampler__add_tid(struct sampler *s, pid_t tid);
/* Opens one cpu-clock perf event per online CPU (oncpu) and the sched_switch raw
 * tracepoint (offcpu), and attaches. Returns 0 or -errno. */
int sampler__attach(struct sampler *s);
/* Number of CPUs sampled (still known after sampler__detach()). */
int sampler__nr_cpus(const struct sampler *s);
/* Stops sampling (detaches everything); maps stay readable. */
void sampler__detach(struct sampler *s);
/*
 * The BPF programs stop by themselves at @ns (CLOCK_MONOTONIC): what they see from
 * then on is not counted, however late sampler__stop() comes. Call once, after attach.
 */
void sampler__end_at(struct sampler *s, uint64_t ns);
/*
 * Ends the recording at once: the BPF programs return on their next event (a store
 * to their mapped data: no system call, safe on any thread but one at a time), and
 * off-CPU intervals still open end now when drained, or at the sampler__end_at() time
 * if that is earlier. Returns that end (CLOCK_MONOTONIC ns); later calls return it too.
 */
uint64_t sampler__stop(struct sampler *s);
/*
 * The cost governor's lever: the cpu-clock events fire every @mult periods of -F's
 * (0 or 1: -F's own), and each sample counts @mult periods. Safe on any one thread
 * while attached. 0, -EOPNOTSUPP (no cpu-clock events), or the ioctl's -errno.
 */
int sampler__set_period_mult(struct sampler *s, uint32_t mult);
/* CPU time spent reading the rings so far (sampler__consume()'s thread's): with
 * --unwind dwarf, mostly unwinding samples. Safe on any thread. */
uint64_t sampler__consume_ns(const struct sampler *s);
/* Has the kernel measure every BPF program's run time (BPF_ENABLE_STATS) until the
 * sampler is freed. 0 or -errno. */
int sampler__enable_run_stats(struct sampler *s);
/* The run time (ns) of the sampler's programs so far, as the kernel counts it: the
 * cpu-clock program's in @clock_ns (its runs in @clock_runs), the others' in
 * @other_ns. 0 unless sampler__enable_run_stats() (or another process) enabled the
 * kernel's measure. */
void sampler__run_time(const struct sampler *s, uint64_t *clock_ns, uint64_t *clock_runs,
		       uint64_t *other_ns);

/*
 * Process notifications and (--unwind dwarf) sample records, both from ring buffers:
 * one fd to poll, and a consumer calling @cb per notification and @sample_cb per
 * sample record (NULL: records are dropped). A sample record given to @sample_cb
 * (type SCORCH_EVENT_SAMPLE or SCORCH_EVENT_OFFCPU_COPY) has been checked: @len >=
 * sizeof(*smp), smp->stack_len == len - sizeof(*smp), smp->kernel_nr <=
 * SCORCH_MAX_STACK_DEPTH; malformed ones are counted in sampler__bad_samples().
 * Off-CPU interval records (SCORCH_EVENT_INTERVAL, exactly a struct scorch_interval)
 * go to @cb: cast the event to it by its type. Records are valid during the call only.
 */
typedef void (*sampler_event_fn)(void *ctx, const struct scorch_event *e);
typedef void (*sampler_sample_fn)(void *ctx, const struct scorch_sample *smp, size_t len);
int sampler__event_fd(const struct sampler *s);
/*
 * Reads the rings until they are empty or, with @budget_ns > 0, until the record that
 * ends past @budget_ns from now: the kernel may fill a ring faster than its records are
 * unwound, and the caller must get back to its deadline and signals. Returns 0 (all
 * read), -EAGAIN (the budget ran out; the next call starts with the next ring, and what
 * the kernel cannot write meanwhile it counts as lost), or -errno.
 */
int sampler__consume(struct sampler *s, sampler_event_fn cb, sampler_sample_fn sample_cb,
		     void *ctx, uint64_t budget_ns);
/*
 * After sampler__detach(): empties the rings, passing notifications and interval ends
 * to the callbacks of the last sampler__consume() but counting sample records instead
 * of passing them (the recording has stopped; unwinding them could take seconds).
 * Returns how many sample records were dropped so.
 */
uint64_t sampler__discard(struct sampler *s);
uint64_t sampler__bad_samples(const struct sampler *s);

/*
 * Calls @cb for every counted (key, value): @offcpu false: a sample count; true:
 * nanoseconds off CPU. Off-CPU intervals still open are closed at the time of the
 * call (threads blocked when the recording ends). @user / @kernel point to the
 * stacks (leaf first) or are NULL when the key has none; valid during the call
 * only. Returns 0, a negative @cb return, or -errno. Values of stacks that could
 * not be read back are added to *lost (samples) or *lost_ns.
 */
typedef int (*sampler_drain_fn)(void *ctx, bool offcpu, const struct count_key *key,
				uint64_t value, const struct stack *user,
				const struct stack *kernel);
int sampler__drain(struct sampler *s, sampler_drain_fn cb, void *ctx, uint64_t *lost,
		   uint64_t *lost_ns);
/*
 * offwake: inside a sampler_drain_fn called for a key with KEY_WAKER (a blocked part,
 * counted in map "wake_counts"), the waker and its stacks (leaf first; NULL when
 * absent), borrowed until the callback returns. 0, or -ENOENT for any other key.
 */
int sampler__waker(struct sampler *s, const struct waker **w, const struct stack **user,
		   const struct stack **kernel);

/*
 * During the recording: takes the counts whose key @select returns true for out
 * of the kernel maps (atomically per key, so nothing counted is lost or counted
 * twice) and passes each to @cb as sampler__drain() does. For processes that
 * exited: their stacks are symbolized and what is kept of them released early.
 * @final: the selected counts no longer change (their processes exited or exec'd):
 * the values read in batches are kept and the keys deleted in one call, instead of
 * one system call per key, and the user stacks only they used are deleted from the
 * stack map (a live process's key stored with one of them in the meantime is counted
 * lost when read back). *nr_reaped is set to the number of keys taken, *nr_forgot to
 * the stacks deleted. Returns 0, @cb's error, -errno.
 */
typedef bool (*sampler_select_fn)(void *ctx, const struct count_key *key);
int sampler__reap(struct sampler *s, sampler_select_fn select, bool final, sampler_drain_fn cb,
		  void *ctx, uint64_t *lost, uint64_t *lost_ns, size_t *nr_reaped,
		  size_t *nr_forgot);
/*
 * --interval, at the end of each after sampler__reap() took every count: deletes from
 * the stack maps the stacks that keys taken in the last interval used and none taken in
 * this one (with sampler_opts.age_stacks; else nothing), so that a long recording of
 * live processes does not fill them with stacks of the past (all kernel stacks, and
 * the user stacks of processes still running, which reaps keep). A stack stored again
 * gets its id back (content-addressed). A key added after this interval's counts were
 * read, in the moment before the delete, with a stack unused for a whole interval,
 * finds it gone when read back unless a later sample stored it again: counted as lost,
 * never named wrong. *nr_deleted: how many were deleted. Returns 0.
 */
int sampler__age_stacks(struct sampler *s, size_t *nr_deleted);

/*
 * --unwind dwarf, offcpu: is the interval of thread @tid that began at @ts (a copy's
 * value) still open? 0 and *@delta = its length so far, *@runq = the part of it since
 * its wakeup (0 if none was seen: struct scorch_interval), -ERANGE when that length
 * is outside --min-block/--max-block, -ENOENT when it is not open (it ended, or its
 * record was lost), -ENOMEM. For the copies left without an interval at the end.
 */
int sampler__open_interval(struct sampler *s, uint32_t tid, uint64_t ts, uint64_t *delta,
			   uint64_t *runq);
/*
 * --interval, offcpu: counts the part before @at_ns (CLOCK_MONOTONIC) of every interval
 * still open, in the kernel (a copied one's part comes as a struct scorch_interval with
 * INTERVAL_PARTIAL), and starts the rest at @at_ns: take the counts right after. Needs
 * sampler_opts.cut_intervals. 0, -ENOENT without it, -errno.
 */
int sampler__cut_intervals(struct sampler *s, uint64_t at_ns);
/* --unwind kernel: the fds of maps "kunwind_rows" and "kunwind_procs" (-1 without). */
void sampler__kunwind_fds(const struct sampler *s, int *rows_fd, int *procs_fd);

/*
 * --unwind dwarf: the stack of thread @tid (@key: its samples' thread_key) is needed up
 * to @top: later copies end there (struct stack_top). @top 0 forgets it (a walk needed
 * more). Returns 0 or -errno.
 */
int sampler__set_stack_top(struct sampler *s, uint32_t tid, uint64_t key, uint64_t top);
/*
 * Off CPU: an interval of thread @tid that began before the recording (found blocked in
 * /proc), given to the BPF program as if @st's thread had switched out at @st->ts (and
 * @st->first, the same time): its
 * switch-in, or the end, counts it. 0; -EEXIST when the thread switched out since (its
 * own slot stands); -ENOENT without the off-CPU program; -errno.
 * sampler__unseed_interval() takes it back while it is still the one seeded at @ts
 * (0, or -ENOENT: counted or replaced already).
 */
int sampler__seed_interval(struct sampler *s, uint32_t tid, const struct offcpu_start *st);
int sampler__unseed_interval(struct sampler *s, uint32_t tid, uint64_t ts);

/* Sums the per-CPU counters of every program into @stats[SCORCH_NR_STATS]. */
int sampler__stats(struct sampler *s, uint64_t *stats);
/* One of them (@k < SCORCH_NR_STATS), summed the same way: 0 or -ENOMEM. */
int sampler__stat(struct sampler *s, enum scorch_stat k, uint64_t *val);

/* ---- procs.c: the process images (pid, gen) a recording has seen ---- */

enum proc_flags {
	PROC_SNAPPED = 1 << 0,	/* its mappings were read while it lived */
	PROC_MISSING = 1 << 1,	/* it was gone before they could be read */
	PROC_EXITED = 1 << 2,	/* it exited; its counts wait to be reaped */
	PROC_RELEASED = 1 << 3, /* reaped: its counts are symbolized, its mappings dropped */
	PROC_REPLACED = 1 << 4, /* ended by an exec: the PID lives on in a new image */
	PROC_SIDEBAND = 1 << 5, /* its mappings came from the kernel's mmap records */
};

struct proc_entry {
	pid_t pid; /* > 0 */
	uint32_t flags;
	uint64_t gen;
	uint64_t ts; /* PROC_SIDEBAND: a time it ran at (its SCORCH_EVENT_NEW's) */
	uint32_t sb_version; /* PROC_SIDEBAND: of the mappings given (sideband__image()) */
};

/*
 * A hash table of proc_entry by (pid, gen). Entries are never removed: a released
 * process keeps 32 bytes, which stops a late count of it from being symbolized
 * with the mappings of a process that reused its PID.
 */
struct proctab;
struct proctab *proctab__new(void);
void proctab__free(struct proctab *t);
/* The entry of (pid, gen), or NULL. Pointers stay valid until the next __get(). */
struct proc_entry *proctab__find(const struct proctab *t, pid_t pid, uint64_t gen);
/* Finds or inserts (flags 0) the entry; NULL when out of memory or pid <= 0. */
struct proc_entry *proctab__get(struct proctab *t, pid_t pid, uint64_t gen);
size_t proctab__nr(const struct proctab *t);
/* Iteration: pass NULL first, then the previous entry; NULL at the end. */
struct proc_entry *proctab__next(const struct proctab *t, struct proc_entry *prev);

/*
 * Reaps of exited processes during a recording (record__reap_due() in record-reap.c): why one runs.
 * On busy CPUs they are put off until what waits costs too much: REAP_HELD (record.c)
 * exited images, or what reap_mark__exceeded() checks.
 */
enum reap_why {
	REAP_NOT_YET = 0,
	REAP_IDLE,	    /* a period passed, on idle CPUs */
	REAP_FORCED_HELD,   /* REAP_HELD exited images wait */
	REAP_FORCED_KEYS,   /* keys added to 1/REAP_KEYS_DIV of a count map */
	REAP_FORCED_TABLES, /* unwind tables grew by more than REAP_TABLE_BYTES */
	REAP_WHY_MAX,
};

#define REAP_KEYS_DIV	 8	    /* keys of exited processes fill at most ~1/8 of a map */
#define REAP_TABLE_BYTES (64 << 20) /* --unwind dwarf: files of exited processes loaded */

/* What the reaps bound, read after the last one and at each look. */
struct reap_mark {
	uint64_t keys;	      /* STAT_COUNT_KEYS: keys created in the count maps, so far */
	size_t ukeys;	      /* --unwind dwarf: ustacks__nr() (an interval's drain lowers it) */
	uint64_t table_bytes; /* --unwind dwarf: unwind_stats.table_bytes */
};
/*
 * Has what waits grown too much from @was (after the last reap) to @now, with count maps
 * of @map_entries each? REAP_FORCED_KEYS: keys (kernel, and --unwind dwarf's table)
 * added to at least map_entries / REAP_KEYS_DIV; REAP_FORCED_TABLES: unwind tables
 * grew by more than REAP_TABLE_BYTES; else REAP_NOT_YET.
 */
enum reap_why reap_mark__exceeded(const struct reap_mark *was, const struct reap_mark *now,
				  uint32_t map_entries);
/*
 * The stack ids a reap may delete: @gone[0..nr_gone) (the stacks of the keys it took)
 * without those in @kept[0..nr_kept) (the stacks of the keys left), each once, into
 * @gone[0..return). Sorts @gone only: the stacks of exited processes are few beside
 * those of every key left. 0 when out of memory (every stack stays).
 */
size_t reap__unused(const __u64 *kept, size_t nr_kept, __u64 *gone, size_t nr_gone);
/* Sorts @ids[0..n) and keeps each id once, in @ids[0..return). */
size_t reap__sort_unique(__u64 *ids, size_t n);
/*
 * Is a CPU free now for a reap on idle CPUs, by @loadavg (the text of /proc/loadavg, read
 * by the caller, whose "R/T" field counts the tasks runnable this instant, the reader
 * among them) on @nr_cpus online CPUs? The idle share over the last window (record-reap.c's
 * record__idle_update()) is seconds old when a job starts: a reap then (tens of ms: libc's DWARF
 * indexed) would take a CPU from it. 1: fewer than @nr_cpus others runnable; 0: none
 * free; -EINVAL: no such field.
 */
int reap__cpu_free(const char *loadavg, long nr_cpus);

/* ---- copies.c: --unwind dwarf off CPU, stacks waiting for their interval ---- */

/*
 * A thread's stacks, copied at switch-out and unwound, until the record with the
 * interval's length (same tid and switch-out time @ts) arrives. The user stack is
 * ips[0..user_nr), the kernel stack ips[user_nr..user_nr + kernel_nr), leaf first.
 */
struct pending_copy {
	uint32_t tid;
	uint32_t user_nr, kernel_nr;
	uint64_t ts;
	struct count_key key;
	__u64 ips[];
};

/* At most one pending copy per thread (a thread is off CPU once at a time). */
struct copytab;
struct copytab *copytab__new(void);
void copytab__free(struct copytab *t);
/*
 * Stores a copy of the stacks for (@tid, @ts). A copy of @tid still waiting is
 * replaced and *@replaced set: its interval never came (lost). Returns 0, -EINVAL
 * (more than SCORCH_MAX_STACK_DEPTH frames), -ENOMEM.
 */
int copytab__put(struct copytab *t, uint32_t tid, uint64_t ts, const struct count_key *key,
		 const __u64 *user, uint32_t user_nr, const __u64 *kernel, uint32_t kernel_nr,
		 bool *replaced);
/* The copy of (@tid, @ts), left in the table, or NULL (none, or another interval's). */
struct pending_copy *copytab__find(struct copytab *t, uint32_t tid, uint64_t ts);
/* Takes out the copy of (@tid, @ts), or NULL (none, or another interval's). Caller frees. */
struct pending_copy *copytab__take(struct copytab *t, uint32_t tid, uint64_t ts);
/* Takes out any copy (NULL when empty). Caller frees. */
struct pending_copy *copytab__pop(struct copytab *t);
size_t copytab__nr(const struct copytab *t);

/* ---- ustacks.c: --unwind dwarf stacks counted in user space ---- */

struct ustacks;
struct ustacks *ustacks__new(void);
void ustacks__free(struct ustacks *t);
/*
 * Adds @value to the count of (@offcpu, @key, @user, @kernel); a NULL stack differs from
 * an empty one. Returns 0, -EINVAL (more than SCORCH_MAX_STACK_DEPTH frames), -ENOMEM.
 */
int ustacks__add(struct ustacks *t, bool offcpu, const struct count_key *key, uint64_t value,
		 const struct stack *user, const struct stack *kernel);
/*
 * Passes the counts @select picks (all with NULL) to @cb, as sampler__drain() does, and
 * removes them; @ubuf and @kbuf hold the stacks during each call. Stops at the first
 * error of @cb (the counts passed so far are removed) and returns it.
 */
int ustacks__take(struct ustacks *t, sampler_select_fn select, sampler_drain_fn cb, void *ctx,
		  struct stack *ubuf, struct stack *kbuf);
size_t ustacks__nr(const struct ustacks *t);
/*
 * Distinct stacks held before record names them all (ustacks__full()), those of live
 * processes too: raw stacks of long-lived threads (a distinct pair of user and kernel
 * addresses each, up to 2 KiB) would otherwise grow until the end. About 30 MiB.
 */
#define USTACKS_MAX_HELD (64 * 1024)
bool ustacks__full(const struct ustacks *t);

/* ---- ktables.c: --unwind kernel's tables in the BPF maps ---- */

struct ktables_stats {
	uint64_t images;	   /* process images given their mappings' tables */
	uint64_t files;		   /* files compiled into rows */
	uint64_t files_no_cfi;	   /* files without CFI (.eh_frame, .debug_frame): FP there */
	uint64_t files_debug_frame; /* files compiled with .debug_frame FDEs */
	uint64_t files_too_big;	   /* files whose rows did not fit what was left */
	uint64_t files_unreadable; /* files that could not be opened or read */
	uint64_t rows, rows_cap;   /* rows written, of the map's entries */
	uint64_t rows_invalid;	   /* rows of rules the walk cannot follow (FP steps there) */
	uint64_t maps_dropped;	   /* mappings past KUNWIND_MAX_MAPS of an image */
	uint64_t procs_full;	   /* images not entered: map "kunwind_procs" full */
	uint64_t py_procs;	   /* images whose Python frames are walked */
	uint64_t py_refused;	   /* CPython images whose memory was not as expected */
	double build_s;		   /* compiling files and writing their rows */
};

struct ktables;
/*
 * Tables in the maps @rows_fd (@cap entries) and @procs_fd; with @py, CPython processes
 * get their Python frames walked too, their code objects named by @py, and with
 * @python_only they alone get entries (--unwind auto on CPU: the others are copied).
 * 0 or -ENOMEM.
 */
int ktables__new(int rows_fd, int procs_fd, uint32_t cap, struct pycodes *py, bool python_only,
		 struct ktables **out);
void ktables__free(struct ktables *kt);
/*
 * Gives the BPF walk the tables of every executable file mapping of the snapshot of
 * (@pid, @gen), compiling files not seen before, for the image @entry_gen of @pid (the
 * BPF programs' gen; 0: whatever image @pid runs, for a process read before sampling).
 * 0, -ENOMEM, -errno of the maps.
 */
int ktables__add_image(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen,
		       uint64_t entry_gen);
/*
 * Compiles the file at @path now (a command about to run, the C library), so that the
 * processes that map it are walked with its rows from their first announcement on.
 * 0, -ENOENT (no build-id: found by it only), -ENOMEM, -errno.
 */
int ktables__preload(struct ktables *kt, const char *path);
/*
 * Whether the snapshot of (@pid, @gen) runs CPython: if so its code objects can be named
 * from now on (a thread read at the start), without an entry for the walk. 0, -ENOMEM.
 */
int ktables__add_python(struct ktables *kt, struct symbolizer *sym, pid_t pid, uint64_t gen);
/* The image (@pid, @gen) is released: its entry goes (its files' rows stay). */
void ktables__forget(struct ktables *kt, pid_t pid, uint64_t gen);
void ktables__stats(const struct ktables *kt, struct ktables_stats *st);

/* ---- governor.c: what a recording costs the machine, within a budget ---- */

/* /proc/stat's "cpu" line, USER_HZ ticks of all CPUs (cpu_ticks__read(), in
 * record-reap.c) */
struct cpu_ticks {
	uint64_t idle; /* idle + iowait */
	uint64_t steal;
	uint64_t total;
};

/* Reads the ticks so far; false when /proc/stat is unreadable. */
bool cpu_ticks__read(struct cpu_ticks *t);

struct governor_opts {
	double budget_pct; /* --max-overhead: % of all the CPUs' time; 0: not governed */
	long freq;	   /* -F */
	int nr_cpus;	   /* the machine's online CPUs */
	bool lever;	   /* cpu-clock events to slow down (cpu and wall modes) */
	bool per_sample_cpu; /* scorch reads samples' records (--unwind dwarf): the CPU
			      * time it spends reading the rings is spent per sample */
};
struct governor {
	struct sampler *s; /* NULL: not started */
	struct cpu_ticks ticks; /* /proc/stat at the last tick (total 0: unreadable) */
	long clk_tck;
	double budget;
	long freq;
	int nr_cpus;
	bool lever, measured, per_sample_cpu;
	uint32_t mult, mult_max, mult_peak; /* -F's period times mult: the rate is freq/mult */
	unsigned int calm;		    /* ticks in a row under half the budget */
	unsigned int over;		    /* ticks in a row over it */
	uint64_t start_ns, last_ns, since_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t clock0, other0, cpu0;		      /* at the start: BPF ns, own CPU ns */
	uint64_t last_clock, last_other, last_cpu, last_consume, last_runs;
	uint64_t clock_end, other_end, cpu_end;
	double last_cost, peak_cost; /* shares of the CPUs, per tick */
	double last_per_sample;	     /* of last_cost: the samples' */
	double last_ns_per_run;	     /* BPF run time per sample in the last tick */
	double rate_time;	     /* integral of dt / mult: the average rate's */
	double rate_cap;	     /* Hz: the kernel throttled above it (0: not seen) */
	double sample_ns;	     /* a sample's cost to the thread it hits (0: not measured) */
	unsigned int probe_ticks;    /* ticks since it was measured */
	uint64_t lowered_ns, changes, throttled;
};
struct governor_stats {
	double budget_pct;    /* 0: not governed */
	int nr_cpus;	      /* the budget's: the machine's online CPUs */
	bool measured;	      /* BPF run time measured by the kernel */
	double bpf_s, cpu_s;  /* BPF run time, scorch's CPU time, from attach to stop */
	double cost_pct;      /* both, as a share of all the CPUs over that time */
	double peak_pct;      /* the most in one tick */
	long min_rate;	      /* the lowest effective rate the costs measured led to (Hz) */
	long end_rate;	      /* the rate at the end */
	double avg_rate;      /* the effective rate averaged over time */
	double lowered_s, lowered_pct; /* time below -F */
	uint64_t changes;
	uint64_t throttled; /* ticks the kernel delivered fewer samples than asked */
};
/* Starts measuring at @now (the attach); no change to the rate yet. */
void governor__start(struct governor *g, struct sampler *s, const struct governor_opts *o,
		     uint64_t now);
/* Measures the last tick and moves the rate if needed; returns when the next tick is
 * due (CLOCK_MONOTONIC ns), 0 when not started. Called on one thread. */
uint64_t governor__tick(struct governor *g, uint64_t now);
/* The end of sampling: the totals are taken. Safe to repeat. */
void governor__end(struct governor *g, uint64_t now);
void governor__stats(const struct governor *g, struct governor_stats *st);

/* ---- stop.c: when the recording ends ---- */

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
	int sig;	   /* the signal that ended it; 0: another cause */
	int sigfd, efd, quitfd;
	pthread_t thread;
	bool running;
	atomic_bool stopped;
};
/* Starts the thread; sampling ends at @deadline_ns (CLOCK_MONOTONIC; 0: none), in the
 * kernel too (sampler__end_at()). @gov (or NULL), started, is ticked there until the
 * stop, and ended at it. Returns 0, or -errno (logged). */
int stopper__start(struct stopper *st, struct sampler *s, struct governor *gov,
		   uint64_t deadline_ns);
/* Readable once sampling has stopped. */
int stopper__fd(const struct stopper *st);
bool stopper__stopped(struct stopper *st);
/* Stops sampling if not done yet, ends the thread, closes the fds. Safe to repeat. */
void stopper__finish(struct stopper *st);

/* ---- launch.c: record -- cmd ---- */

struct launch {
	pid_t pid;   /* the child, waiting to exec; 0 if none */
	int go_fd;   /* write end: closing it lets the child exec */
	int err_fd;  /* read end: the child's exec errno, or EOF on success */
	int pidfd;   /* pidfd of the child, -1 if unsupported */
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

/* ---- fold.c: counted stacks to named folded stacks (record and report share it) ---- */

enum record_mode {
	MODE_CPU = 0, /* on-CPU samples, counted in samples */
	MODE_OFFCPU,  /* off-CPU time, in microseconds */
	MODE_WALL,    /* both, in microseconds of wall time */
	MODE_EVENT,   /* stacks at an event (record --event): calls, a weight or latency */
};

#define FOLD_MAX_INLINE 32
/* offwake frames: between the blocked and the waker stacks, and for their wakers */
#define FOLD_WAKER_SEP	   "--"
#define FOLD_WAKER_UNKNOWN "[unknown waker]"
#define FOLD_WAKER_IRQ	   "[irq]"
#define FOLD_WAKER_SOFTIRQ "[softirq]"
/* distinct named stacks held in memory (folded__set_max_stacks()): at 32 frames about
 * 250 bytes each, 64 MiB at most; beyond, counted under ROOT;[stack table full] */
#define FOLD_MAX_STACKS (256 * 1024)

struct outputs;

struct fold {
	/* set by the caller before fold__add() */
	struct symbolizer *sym;
	enum record_mode mode;
	long freq;		/* MODE_WALL: a CPU sample weighs 1e6 / freq us */
	unsigned int max_depth; /* kernel stacks this deep are marked [truncated] */
	/* the walks with tables keep this many user frames (--max-depth); 0: a capture
	 * before 1.4, whose user stacks max_depth deep are cut too (no KEY_USER_DEEP) */
	unsigned int user_depth;
	bool fp;		/* user stacks walked by frame pointers in the kernel */
	bool kwalk;		/* ... or by the kernel walk's tables, frame pointers where none */
	bool ns_values;		/* on-CPU set values are nanoseconds, named in microseconds */
	struct pycodes *py;	/* names of Python frames (PY_WORD words); NULL: none */
	bool wakeup;		/* --mode wakeup: offwake lines turned into the wakers' alone */
	/* offwake, set before each fold__add() of a key with KEY_WAKER: the waker, its
	 * stacks (leaf first, NULL when absent) and whether its process was lost */
	const struct waker *waker;
	const struct stack *waker_user, *waker_kernel;
	bool waker_lost_proc;
	/* owned: fold__init() / fold__release() */
	struct folded *folded;
	struct strset *names; /* comms and names with their _[k], _[i] or _[j] suffix */
	const char **frames;
	size_t frames_cap;
	struct frame fbuf[FOLD_MAX_INLINE];
	/* optional (set by the caller): the outputs that want each stack's addresses and
	 * frames (pprof, speedscope); NULL: folded stacks only */
	struct outputs *outs;
	/* optional (set and owned by the caller): a second table every folded stack also
	 * goes to (report: the counts of one interval, for the HTML page's timeline) */
	struct folded *slice;
	/* counted by fold__add() for the summary */
	uint64_t offcpu_ns; /* off-CPU time counted */
	uint64_t runqueue_ns; /* of which runnable, waiting for a CPU ([runqueue]) */
	uint64_t truncated_user, truncated_kernel;
	uint64_t truncated_copy; /* samples whose unwinding ran past the stack copy */
	uint64_t noproc_samples, noproc_us; /* of processes whose user frames are [unknown] */
	/* offwake: blocked us under a waker, under [unknown waker], woken in an interrupt */
	uint64_t waker_us, nowaker_us, irq_waker_us;
	uint64_t last_count; /* the count of the stack being folded */
	bool waker_is_task;  /* its waker is a task (not an interrupt, not none) */
	/*
	 * User stacks whose walk reached an address outside every executable mapping (a
	 * frame pointer register used for data: the caller's code has none), cut there
	 * under [unknown]; counts (samples or us) of all user stacks and of those cut, by
	 * mode (on, off CPU), and the file holding the last frame of the most cut ones.
	 */
	uint64_t user_counts[2], cut_counts[2];
	/* by mode: user stacks whose outermost frame is JIT code (its runtime keeps no frame
	 * pointer there), the comm with the most; user stacks cut at max_depth */
	uint64_t jit_end[2], deep[2];
	const char *jit_comm;
	uint64_t jit_comm_count;
	/* by mode: stacks whose leaf is JIT code no perf map or jitdump names ("[jit]"),
	 * and the process with the most of them */
	uint64_t jit_unnamed[2];
	const char *unnamed_comm;
	uint32_t unnamed_pid;
	uint64_t unnamed_count;
	struct fold_cut {
		const char *path; /* interned in the symbolizer */
		uint64_t count;
	} cut_files[8];
};

int fold__init(struct fold *f);
void fold__release(struct fold *f);
/* The suffix a user frame of @kind gets in folded stacks: fg_annot__suffix()'s "_[i]" for
 * FRAME_INLINE, "_[j]" for FRAME_JIT, else "". Static, never NULL. */
const char *fold__frame_suffix(enum frame_kind kind);
/*
 * Names one counted (key, value) and adds it to the folded set: "comm;user root..leaf;
 * kernel root..leaf_[k]" (see DESIGN.md), off-CPU values converted to microseconds.
 * @lost_proc: the process could not be read, its user frames are "[unknown]". Returns 0
 * or -errno. sampler_drain_fn's stacks: @user/@kernel leaf first, NULL when absent.
 */
int fold__add(struct fold *f, bool offcpu, const struct count_key *key, uint64_t value,
	      const struct stack *user, const struct stack *kernel, bool lost_proc);
/* What fold__add() counts of time off CPU, without naming (a capture alone's summary). */
void fold__tally(struct fold *f, bool offcpu, const struct count_key *key, uint64_t value);
/* Titles, units and palette of an SVG by mode, unless the user chose them. */
void fold__svg_defaults(enum record_mode mode, struct flamegraph_opts *fg);

/* ---- summary.c: the end-of-run summary (record and report) ---- */

struct summary {
	const struct fold *fold;
	const uint64_t *st; /* SCORCH_NR_STATS BPF counters */
	enum record_mode mode;
	long freq;
	const char *event;     /* MODE_EVENT: --event as given */
	uint64_t event_period; /* MODE_EVENT: --period */
	int nr_cpus;
	double elapsed;
	bool quiet;   /* -q: warnings only */
	bool verbose; /* -v: every counter that is not zero, no first line */
	uint64_t drain_lost;
	uint64_t ring_bytes;
	uint64_t ring_left; /* of st[STAT_LOST_RINGBUF]: left in the rings at the stop */
	uint64_t max_stacks;
	uint64_t procs_seen, procs_released, procs_held_max, procs_missing;
	uint64_t procs_copied;		   /* snapshots copied from the parent's (0: not known) */
	uint64_t procs_sideband;	   /* mappings from the kernel's mmap records */
	uint64_t procs_read;		   /* mappings read from /proc/PID/maps */
	uint64_t reaps, reaps_deferred;	   /* exited processes reaped; periods put off */
	uint64_t reaps_held, reaps_keys;   /* reaps forced on busy CPUs: images, count keys, */
	uint64_t reaps_tables;		   /* ... unwind tables */
	uint64_t reaps_left;		   /* exited images not reaped at the end */
	const struct sideband_stats *sbs;  /* NULL: no side-band events */
	const struct symbolizer_stats *ss; /* NULL: frames were not named (capture only) */
	const struct perfmaps_stats *js;   /* NULL: no JIT maps line */
	size_t stacks_written; /* --interval: stacks of the intervals already written */
	double steal_pct;      /* CPU time the hypervisor gave to others, % (< 0: unknown) */
	long max_rate_end;     /* kernel.perf_event_max_sample_rate at the end (0: unknown) */
	const struct governor_stats *gov; /* NULL: not governed (report) */
};
/*
 * The end of a run, like perf's: one line of what was captured (samples, stacks, lost
 * %), then warnings that need the user's action, each with its hint; with -v the detail
 * lines instead of the first line, counters that are all zero left out; with -q the
 * warnings only. The caller prints where the outputs went.
 * summary__counts(): samples and losses; returns the share lost, in percent.
 * summary__details(): frames, files, processes, JIT maps.
 */
double summary__counts(const struct summary *sm);
void summary__details(const struct summary *sm);

/* ---- capture-record.c: record -o x.scorch (a capture file as one of the outputs) ---- */

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
int capture_rec__jit_lookup(void *ctx, pid_t pid, uint64_t ip, const char **name,
			    uint64_t *offset);
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
/* ---- probe.c: what the host allows (scorch check; record's preflight) ---- */

enum probe_status {
	PROBE_OK = 0,   /* works */
	PROBE_DEGRADED, /* works with a limit the detail names */
	PROBE_MISSING,  /* absent or refused */
	PROBE_SKIPPED,  /* not checked: it needs a privilege scorch does not have */
};

/* What depends on a probe (probe_result.need bits); 0: informational only. */
#define PROBE_NEED_RECORD (1u << 0) /* every recording */
#define PROBE_NEED_OFFCPU (1u << 1) /* --mode offcpu and --mode wall */
#define PROBE_NEED_DWARF  (1u << 2) /* --unwind dwarf */

enum probe_id {
	PROBE_CAPS,            /* euid, CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN, CAP_SYS_PTRACE */
	PROBE_PARANOID,        /* kernel.perf_event_paranoid (value) */
	PROBE_MAX_RATE,        /* kernel.perf_event_max_sample_rate (value, Hz) */
	PROBE_MAX_STACK,       /* kernel.perf_event_max_stack (value, frames) */
	PROBE_UNPRIV_BPF,      /* kernel.unprivileged_bpf_disabled (value) */
	PROBE_BTF,             /* /sys/kernel/btf/vmlinux (value: bytes) */
	PROBE_PROG_PERF_EVENT, /* BPF program types, loaded by libbpf_probe_bpf_prog_type() */
	PROBE_PROG_RAW_TP,
	PROBE_PROG_TRACEPOINT,
	PROBE_PROG_KPROBE,
	PROBE_PROG_TRACING,
	PROBE_MAP_RINGBUF,     /* BPF map types, created by libbpf_probe_bpf_map_type() */
	PROBE_MAP_STACK_TRACE,
	PROBE_MAP_BATCH,       /* hash map batch lookup on a real map */
	PROBE_HELPER_GET_STACK, /* helpers, in a perf_event program (libbpf_probe_bpf_helper) */
	PROBE_HELPER_RINGBUF,
	PROBE_HELPER_READ_USER,
	PROBE_HELPER_PT_REGS,
	PROBE_HELPER_TASK_BTF,
	PROBE_HELPER_LOOP,     /* --unwind kernel (the default off CPU falls back to fp) */
	PROBE_CPU_CLOCK,       /* perf_event_open of a sampling event on this CPU, closed */
	PROBE_CYCLES,
	PROBE_TP_EXIT,         /* a trivial program attached to the raw tracepoint and detached */
	PROBE_TP_FORK,
	PROBE_TP_SWITCH,
	PROBE_TP_WAKEUP,
	PROBE_TRACEFS,         /* mounted or not (scorch does not need it) */
	PROBE_DEBUGINFO,       /* /usr/lib/debug/.build-id (value: entries) */
	PROBE_MEMLOCK,         /* RLIMIT_MEMLOCK (value: bytes, -1 unlimited) vs memcg accounting */
	PROBE_NR,
};

struct probe_result {
	enum probe_id id;
	const char *name; /* stable short name, e.g. "kernel.perf_event_max_stack" (static) */
	enum probe_status status;
	uint32_t need;    /* PROBE_NEED_* bits */
	long value;       /* sysctls and sizes (see enum probe_id); -1 otherwise */
	char detail[320]; /* one line: what was found (for a missing required probe: the error) */
	char hint[192];   /* what to do about it; empty when nothing */
};

/* Runs one probe (side effects: a BPF object or perf event opened and closed).
 * Never logs. Returns 0, or -EINVAL for an unknown @id. */
int probe__run(enum probe_id id, struct probe_result *res);
/*
 * Runs @ids in order; at the first whose need intersects @need and whose status is
 * PROBE_MISSING, logs its detail as the error and its hint, and returns -EPERM
 * (privileges), -ENOENT (BTF) or -EOPNOTSUPP; @res then holds that probe. Returns 0
 * when none is missing (@res holds the last probe run).
 */
int probe__require(uint32_t need, const enum probe_id *ids, size_t nr, struct probe_result *res);
/* "ok", "degraded", "missing", "skipped" (static). */
const char *probe__status_name(enum probe_status st);
/* ---- timing.c: record --timing, phases measured on the monotonic clock ---- */

#define TIMING_MAX_PHASES 8

struct timing {
	bool on; /* false: every call but timing__now() does nothing */
	int nr;
	double start;
	const char *phase[TIMING_MAX_PHASES]; /* static strings */
	double end[TIMING_MAX_PHASES];
};

/* Seconds on CLOCK_MONOTONIC. */
/* CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns()): in seconds, in nanoseconds. */
double timing__now(void);
uint64_t timing__now_ns(void);
/* Clock @clock in ns (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID...); 0 on error. */
uint64_t timing__clock_ns(clockid_t clock);
/* Starts a sequence of phases now. */
void timing__start(struct timing *t, bool on);
/* The phase @phase (a static string) ended now; it began where the previous one ended. */
void timing__mark(struct timing *t, const char *phase);
/* Prints "scorch: timing: WHAT TOTAL ms: phase N ms, ..." on stderr (when on). */
void timing__report(const struct timing *t, const char *what);
/* ---- output.c: the outputs of a recording ---- */

struct folded;
struct flamegraph_opts;
struct profile;
struct symbolizer;
struct frame;

/* What a writer gets: the folded stacks, the pprof/speedscope profile (NULL when no
 * output needs it), the SVG options, and the name of the file being written. */
struct output_data {
	const struct folded *folded;
	const struct profile *prof;
	const struct flamegraph_opts *fg;
	const char *name;
	/* NULL, or the HTML page's graph, built by the caller with its intervals (report of
	 * a capture recorded with --interval): written as it is, @folded not added */
	struct flamegraph *page;
};

/* One output format: its --format name, the file name endings that choose it, and its
 * writer (returns 0 or -errno; the caller logs). Formats live in a table in output.c;
 * a new format is one entry there. */
struct output_format {
	const char *name;
	const char *const *exts;
	bool needs_profile; /* written from the profile, which is then built */
	bool whole;	    /* html: one file for every interval, not numbered (write NULL) */
	int (*write)(const struct output_data *d, FILE *fp);
};

enum outputs_kind {
	OUTPUTS_CPU = 0, /* samples/count + cpu/nanoseconds (period 1e9 / freq) */
	OUTPUTS_OFFCPU,	 /* off-cpu/microseconds */
	OUTPUTS_WALL,	 /* wall/microseconds */
	OUTPUTS_EVENT,	 /* record --event: value_type/value_unit, period */
};

struct outputs_opts {
	size_t sz;
	enum outputs_kind kind;
	long freq;	    /* samples per second (cpu) */
	bool interval;	    /* files numbered per interval: cpu-0001.svg, ... */
	double seconds;	    /* --interval's length (the HTML page's timeline) */
	bool lines;	    /* frame names carry " (file:line)" (record --lines) */
	bool inline_frames; /* inline chains are symbolized */
	/* OUTPUTS_EVENT: the sample type ("calls", "count") and --period's N */
	const char *value_type, *value_unit;
	uint64_t period;
};

/*
 * The outputs of a recording, one per -o (none: standard output, folded). Formats by
 * file name (.svg, .html/.htm, .pb.gz/.pb, .json; anything else folded) or --format for
 * a single output. With --interval every format but HTML is written to numbered files,
 * one per interval; an HTML page is one file holding every interval so far (a timeline),
 * written again at each interval. Every file is opened by outputs__open() before sampling starts
 * (errors early) and written atomically by outputs__write().
 */
struct outputs;
struct outputs *outputs__new(void);
void outputs__free(struct outputs *o); /* uncommitted files are removed; NULL accepted */
/* Adds -o @path ("-": standard output). -EINVAL (logged) for a path given twice. */
int outputs__add(struct outputs *o, const char *path);
/* --format @name for the single output (or standard output). -EINVAL logged. */
int outputs__set_format(struct outputs *o, const char *name);
const char *outputs__format_names(void);
/* Outputs of @format ("svg", ...), or all with NULL. */
size_t outputs__count(const struct outputs *o, const char *format);
bool outputs__to_stdout(const struct outputs *o);
/* Opens every output (with opts.interval: the files of interval 1). Returns 0 or -errno. */
int outputs__open(struct outputs *o, const struct outputs_opts *opts);
/* Writes and closes every open output from @d (its prof and name are set here).
 * Returns 0 or the first -errno (each failure logged with its file). */
int outputs__write(struct outputs *o, struct output_data *d);
/* --interval: opens the next interval's files and starts an empty profile. */
int outputs__next(struct outputs *o);
unsigned int outputs__seq(const struct outputs *o);
/* Where the outputs went, for the summary: "cpu.folded, cpu-0001.svg ... cpu-0012.svg,
 * folded to standard output" into @buf (cut to @size bytes). */
void outputs__describe(const struct outputs *o, char *buf, size_t size);

/*
 * The profile's side of add_stack(): a stack is begun, gets its locations root first
 * (markers such as "[truncated]" by name, user and kernel addresses with their
 * symbolized frames, outermost first), and ends with its process and count. No-ops
 * when no output needs the profile. Return 0 or -ENOMEM.
 */
bool outputs__want_stacks(const struct outputs *o);
void outputs__stack_begin(struct outputs *o);
int outputs__stack_marker(struct outputs *o, const char *name);
int outputs__stack_user(struct outputs *o, struct symbolizer *sym, pid_t pid, uint64_t gen,
			uint64_t ip, const struct frame *fr, int k);
int outputs__stack_kernel(struct outputs *o, uint64_t ip, const struct frame *fr, int k);
int outputs__stack_end(struct outputs *o, uint32_t pid, const char *comm, uint64_t count);
/* outputs__stack_end() of an off-wake stack: pprof labels waker_pid (0: none) and
 * waker_comm (NULL: none) too. */
int outputs__stack_end_waker(struct outputs *o, uint32_t pid, const char *comm, uint32_t waker_pid,
			     const char *waker_comm, uint64_t count);
/* Stacks left out of the profile (a frame it could not hold). */
uint64_t outputs__skipped(const struct outputs *o);

#endif /* SCORCH_PROFILER_PRIVATE_H */
