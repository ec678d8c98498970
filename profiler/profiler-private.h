/* SPDX-License-Identifier: MIT */
/* profiler: internal interfaces between the record orchestration, BPF sampler and launcher. */
#ifndef SCORCH_PROFILER_PRIVATE_H
#define SCORCH_PROFILER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include "profile.h"

/* ---- sampler.c: the on-CPU BPF program's lifecycle ---- */

struct sampler;

struct sampler_opts {
	size_t sz;
	bool oncpu;         /* sample on-CPU stacks (perf_event, cpu-clock) */
	bool offcpu;        /* count off-CPU time by stack (raw tracepoint sched_switch) */
	long freq;          /* oncpu: samples per second per CPU */
	bool user_only;     /* no kernel stacks */
	bool kernel_only;   /* no user stacks */
	bool include_idle;  /* count the idle task */
	bool filter_pid;    /* only PIDs added with sampler__add_pid() */
	bool filter_tid;    /* only TIDs added with sampler__add_tid() */
	bool follow_forks;  /* children of filtered PIDs join the filter */
	size_t nr_filter;   /* number of PIDs/TIDs that will be added */
	uint32_t max_stacks; /* entries of the stack and count maps */
	/* offcpu only */
	uint64_t min_block_ns;   /* shorter intervals are dropped */
	uint64_t max_block_ns;   /* longer intervals are dropped */
	uint32_t state_mask;     /* 1: interruptible (S), 2: uninterruptible (D) */
	bool with_runqueue;      /* count time runnable but waiting for a CPU */
	bool user_threads_only;
	bool kernel_threads_only;
	uint32_t max_threads;    /* threads off CPU at once that can be tracked */
	/* --unwind dwarf: user registers and stack copied to user space per sample */
	bool unwind_dwarf;
	uint32_t stack_size;     /* bytes of stack copied from sp (multiple of 8) */
	uint32_t ring_bytes;     /* size of the sample ring buffer (power of 2, >= 4096) */
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
int sampler__consume(struct sampler *s, sampler_event_fn cb, sampler_sample_fn sample_cb,
		     void *ctx);
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
				uint64_t value, const struct stack_trace *user,
				const struct stack_trace *kernel);
int sampler__drain(struct sampler *s, sampler_drain_fn cb, void *ctx, uint64_t *lost,
		   uint64_t *lost_ns);

/*
 * During the recording: takes the counts whose key @select returns true for out
 * of the kernel maps (atomically per key, so nothing counted is lost or counted
 * twice) and passes each to @cb as sampler__drain() does. For processes that
 * exited: their stacks are symbolized and what is kept of them released early.
 * *nr_reaped is set to the number of keys taken. Returns 0, @cb's error, -errno.
 */
typedef bool (*sampler_select_fn)(void *ctx, const struct count_key *key);
int sampler__reap(struct sampler *s, sampler_select_fn select, sampler_drain_fn cb, void *ctx,
		  uint64_t *lost, uint64_t *lost_ns, size_t *nr_reaped);

/*
 * --unwind dwarf, offcpu: is the interval of thread @tid that began at @ts (a copy's
 * value) still open? 0 and *@delta = its length so far, -ERANGE when that length is
 * outside --min-block/--max-block, -ENOENT when it is not open (it ended, or its
 * record was lost), -ENOMEM. For the copies left without an interval at the end.
 */
int sampler__open_interval(struct sampler *s, uint32_t tid, uint64_t ts, uint64_t *delta);

/* Sums the per-CPU counters of every program into @stats[SCORCH_NR_STATS]. */
int sampler__stats(struct sampler *s, uint64_t *stats);

/* ---- procs.c: the process images (pid, gen) a recording has seen ---- */

enum proc_flags {
	PROC_SNAPPED = 1 << 0,  /* its mappings were read while it lived */
	PROC_MISSING = 1 << 1,  /* it was gone before they could be read */
	PROC_EXITED = 1 << 2,   /* it exited; its counts wait to be reaped */
	PROC_RELEASED = 1 << 3, /* reaped: its counts are symbolized, its mappings dropped */
};

struct proc_entry {
	pid_t pid; /* > 0 */
	uint32_t flags;
	uint64_t gen;
};

/*
 * A hash table of proc_entry by (pid, gen). Entries are never removed: a released
 * process keeps 16 bytes, which stops a late count of it from being symbolized
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

/* ---- copies.c: --unwind dwarf off CPU, stacks waiting for their interval ---- */

/*
 * A thread's stacks, copied at switch-out and unwound, until the record with the
 * interval's length (same tid and switch-out time @ts) arrives. The user stack is
 * ips[0..user_nr), the kernel stack ips[user_nr..user_nr + kernel_nr), leaf first.
 */
struct pending_copy {
	struct pending_copy *next;
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
/* Takes out the copy of (@tid, @ts), or NULL (none, or another interval's). Caller frees. */
struct pending_copy *copytab__take(struct copytab *t, uint32_t tid, uint64_t ts);
/* Takes out any copy (NULL when empty). Caller frees. */
struct pending_copy *copytab__pop(struct copytab *t);
size_t copytab__nr(const struct copytab *t);

/* ---- launch.c: record -- cmd ---- */

struct launch {
	pid_t pid;   /* the child, waiting to exec; 0 if none */
	int go_fd;   /* write end: closing it lets the child exec */
	int err_fd;  /* read end: the child's exec errno, or EOF on success */
	int pidfd;   /* pidfd of the child, -1 if unsupported */
};

/* Forks a child that waits for launch__go() before it execs @argv. Returns 0 or -errno. */
int launch__start(struct launch *l, char *const argv[]);
/* Lets the child exec. Returns 0, or -errno if exec failed (logged, with the command name). */
int launch__go(struct launch *l, const char *cmd);
/* Reaps the child: returns its wait status, or -errno. */
int launch__wait(struct launch *l, bool nohang);
/* Kills (SIGKILL) and reaps a child that never ran. */
void launch__abort(struct launch *l);

#endif /* SCORCH_PROFILER_PRIVATE_H */
