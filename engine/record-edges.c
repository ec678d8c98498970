// SPDX-License-Identifier: MIT
/*
 * profiler: `scorch record --mode offcpu|wall`: threads already off CPU when the
 * recording begins. The BPF program sees an interval from its switch-out; a thread
 * blocked since before the attach has none, and one blocked all along would be missing.
 * Each target thread found sleeping in /proc is given to the BPF program as if it had
 * switched out at the attach (sampler__seed_interval()), with the stacks /proc shows:
 * its kernel stack from /proc/TID/stack (names resolved through /proc/kallsyms), its
 * user stack unwound from the pc and sp of /proc/TID/syscall over a copy of its stack
 * (process_vm_readv()). Its switch-in, or the end of the recording, counts it.
 * A thread that ran while it was read (its /proc/TID/schedstat timeslice count moved)
 * is taken back: what it did then has its own intervals.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"
#include "python.h"
#include "record.h"
#include "symbolize.h"
#include "ktables.h"
#include "sampler.h"
#include "stop.h"
#include "timing.h"

#define EDGE_MAX_THREADS 65536
#define EDGE_MAX_KFRAMES 64	    /* /proc/TID/stack shows at most 64 */
#define EDGE_GEN_PROC	 (1ULL << 63) /* process generations read from /proc, not BPF's */

struct edge_thread {
	pid_t pid, tid;
	uint64_t pcount;	/* timeslices run (/proc/TID/schedstat) when it was read */
	struct offcpu_start st; /* what is seeded */
	/* kernel frames by name until resolved: "func" and its offset */
	const char *knames[EDGE_MAX_KFRAMES];
	uint64_t koffs[EDGE_MAX_KFRAMES];
};

struct edge_ctx {
	struct record *r;
	struct strset *names;
	struct unwinder *unw; /* the recording's, or one of our own */
	bool own_unw;
	uint8_t *stack;	      /* a thread's stack copy */
	uint64_t ips[SCORCH_MAX_STACK_DEPTH];
	uint64_t sps[SCORCH_MAX_STACK_DEPTH];
	struct python_chain py; /* a CPython thread's frames */
	size_t stack_size;
	pid_t snapped;	      /* the last process snapshotted (by us) */
	uint64_t snapped_gen;
	int snap_err;
};

/* The three numbers of /proc/TID/schedstat; the third counts timeslices run. */
static int read_pcount(pid_t tid, uint64_t *pcount)
{
	char path[64], *text = NULL;
	unsigned long long run, wait, n;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", tid);
	err = file__read_bounded(AT_FDCWD, path, 256, &text, &len);
	if (err)
		return err;
	err = sscanf(text, "%llu %llu %llu", &run, &wait, &n) == 3 ? 0 : -EINVAL;
	*pcount = n;
	free(text);
	return err;
}

/* The thread's name, as the BPF program's bpf_get_current_comm() gives it. */
static void read_comm(pid_t tid, char comm[SCORCH_COMM_LEN])
{
	char path[64], *text = NULL;
	size_t len;

	memset(comm, 0, SCORCH_COMM_LEN);
	snprintf(path, sizeof(path), "/proc/%d/comm", tid);
	if (file__read_bounded(AT_FDCWD, path, 256, &text, &len))
		return;
	len = strcspn(text, "\n");
	memcpy(comm, text, MIN(len, (size_t)SCORCH_COMM_LEN - 1));
	free(text);
}

/* "[<0>] hrtimer_nanosleep+0x74/0xf0" lines: names and offsets, innermost first. */
static int read_kernel_stack(struct edge_ctx *c, struct edge_thread *t)
{
	char path[64], *text = NULL, *line, *save = NULL;
	size_t len, n = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/stack", t->tid);
	err = file__read_bounded(AT_FDCWD, path, 64 * 1024, &text, &len);
	if (err)
		return err;
	for (line = strtok_r(text, "\n", &save); line && n < EDGE_MAX_KFRAMES;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name = strchr(line, ']'), *plus;
		uint64_t off = 0;

		if (!name)
			continue;
		name += strspn(name + 1, " ") + 1;
		plus = strchr(name, '+');
		if (plus) {
			*plus = '\0';
			off = strtoull(plus + 1, NULL, 16);
		}
		name[strcspn(name, " /")] = '\0';
		if (!*name)
			continue;
		t->knames[n] = strset__intern(c->names, name);
		if (!t->knames[n]) {
			err = -ENOMEM;
			break;
		}
		t->koffs[n++] = off;
	}
	t->st.kernel.nr = n;
	free(text);
	return err;
}

/* User pc and sp of a thread blocked in (or outside) a syscall: 0, -EAGAIN (running). */
static int read_syscall(pid_t tid, uint64_t *pc, uint64_t *sp)
{
	char path[64], *text = NULL, *tok[10], *save = NULL, *p;
	size_t len, n = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	err = file__read_bounded(AT_FDCWD, path, 512, &text, &len);
	if (err)
		return err;
	for (p = strtok_r(text, " \n", &save); p && n < ARRAY_SIZE(tok); p = strtok_r(NULL, " \n", &save))
		tok[n++] = p;
	/* "nr a1 .. a6 sp pc", "-1 sp pc" outside a syscall, "running" */
	if (n && !strcmp(tok[0], "running"))
		err = -EAGAIN;
	else if (n != 9 && n != 3)
		err = -EINVAL;
	else if (parse__u64(tok[n - 2], 0, sp) || parse__u64(tok[n - 1], 0, pc))
		err = -EINVAL;
	free(text);
	return err;
}

/* The image @t's process runs, snapshotted under a generation of our own. */
static int snapshot(struct edge_ctx *c, struct edge_thread *t, uint64_t *gen)
{
	struct proc_stat ps;
	int err;

	err = proc__read_stat(t->pid, &ps);
	if (err)
		return err;
	*gen = EDGE_GEN_PROC | ps.start_time;
	if (c->snapped == t->pid && c->snapped_gen == *gen)
		return c->snap_err;
	c->snapped = t->pid;
	c->snapped_gen = *gen;
	c->snap_err = symbolizer__snapshot_gen(c->r->sym, t->pid, *gen);
	/* a CPython process: its threads' Python frames are read with their stacks */
	if (!c->snap_err && c->r->kt && ktables__add_python(c->r->kt, c->r->sym, t->pid, *gen))
		return -ENOMEM;
	return c->snap_err;
}

/* The user stack from the pc and sp the thread blocked at. 0 or -errno. */
static int read_user_stack(struct edge_ctx *c, struct edge_thread *t)
{
	struct record *r = c->r;
	struct iovec local, remote;
	struct unwind_sample us;
	enum unwind_end end;
	uint64_t pc, sp, gen;
	ssize_t got;
	int n, err;

	err = read_syscall(t->tid, &pc, &sp);
	if (!err)
		err = snapshot(c, t, &gen);
	if (err)
		return err;
	t->st.key.gen = gen;
	local = (struct iovec){ .iov_base = c->stack, .iov_len = c->stack_size };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)sp, .iov_len = c->stack_size };
	/* the copy stops at the stack's end, as the BPF program's does */
	got = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
	if (got < 0)
		return -errno;
	us = (struct unwind_sample){ .pid = t->pid, .gen = gen, .ip = pc, .sp = sp,
				     .stack = c->stack, .stack_len = (uint32_t)got, .sps = c->sps };
	n = unwinder__unwind(c->unw, &us, c->ips, MIN(r->max_depth, SCORCH_MAX_STACK_DEPTH), &end);
	if (n < 0)
		return n;
	/* a slot holds one part of a stack: the frame-pointer walk's depth */
	t->st.user.flags = end == UNWIND_END_DEPTH ? STACK_DEEP : 0;
	/* its Python frames in place of the eval loop's native ones, as the BPF walk puts them */
	if (r->py && !pycodes__thread_chain(r->py, t->pid, gen, t->tid, &c->py) && c->py.nr) {
		size_t unmatched;

		t->st.user.nr = (uint32_t)python__splice(c->ips, c->sps, (size_t)n, &c->py,
							 (uint64_t *)t->st.user.ips,
							 SCORCH_MAX_STACK_DEPTH,
							 &unmatched);
		return 0;
	}
	for (int i = 0; i < n; i++)
		t->st.user.ips[i] = c->ips[i];
	t->st.user.nr = n;
	return 0;
}

/*
 * Reads thread @tid of @pid if it is off CPU as the BPF program would count it. Returns
 * 1 (read into @t), 0 (not blocked, or filtered out), -ENOMEM; other errors count as
 * not readable (-errno).
 */
static int read_thread(struct edge_ctx *c, pid_t pid, pid_t tid, struct edge_thread *t)
{
	const struct record_opts *o = &c->r->opts;
	struct proc_stat ps;
	uint32_t state;
	bool kthread;
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	err = read_pcount(tid, &t->pcount);
	if (!err)
		err = proc__read_stat(tid, &ps);
	if (err)
		return err;
	/* S: interruptible; D and I (idle kernel threads) uninterruptible, as in BPF */
	state = ps.state == 'S' ? 1 : ps.state == 'D' || ps.state == 'I' ? 2 : 0;
	kthread = ps.flags & PROC_PF_KTHREAD;
	if (!(state & o->state_mask) || (o->user_threads_only && kthread) ||
	    (o->kernel_threads_only && !kthread))
		return 0;
	t->st.key.pid = pid;
	read_comm(tid, t->st.key.comm);
	if (!o->user_only) {
		err = read_kernel_stack(c, t);
		if (err == -ENOMEM)
			return err;
		if (err || !t->st.kernel.nr)
			t->st.key.flags |= KEY_KERNEL_MISSED;
	}
	if (!o->kernel_only && !kthread) {
		err = read_user_stack(c, t);
		if (err == -EAGAIN)
			return 0; /* it ran: its own interval follows */
		if (err == -ENOMEM)
			return err;
		if (err || !t->st.user.nr)
			t->st.key.flags |= KEY_USER_MISSED;
	}
	return 1;
}

/*
 * Kernel frame names to addresses, one pass over kallsyms for all threads' names
 * (symbolizer__kernel_addrs()). A frame whose name is not found ends the stack there.
 * 0 or -errno.
 */
static int resolve_kernel(struct edge_ctx *c, struct edge_thread *v, size_t nr)
{
	const char **names = NULL;
	uint64_t *addrs = NULL;
	size_t nr_names = 0, i, j, k;
	int err;

	for (i = 0; i < nr; i++)
		nr_names += v[i].st.kernel.nr;
	if (!nr_names)
		return 0;
	names = calloc(nr_names, sizeof(*names));
	addrs = calloc(nr_names, sizeof(*addrs));
	if (!names || !addrs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = k = 0; i < nr; i++)
		for (j = 0; j < v[i].st.kernel.nr; j++)
			names[k++] = v[i].knames[j];
	err = symbolizer__kernel_addrs(c->r->sym, names, nr_names, addrs);
	if (err)
		goto cleanup;
	for (i = k = 0; i < nr; i++) {
		struct edge_thread *t = &v[i];

		for (j = 0; j < t->st.kernel.nr && addrs[k + j]; j++)
			t->st.kernel.ips[j] = addrs[k + j] + t->koffs[j];
		k += t->st.kernel.nr;
		t->st.kernel.nr = j;
		if (!j)
			t->st.key.flags |= KEY_KERNEL_MISSED;
	}
cleanup:
	free(addrs);
	free(names);
	return err;
}

/* Adds the threads of process @pid (all of them, or @only) to @v. */
static int list_threads(pid_t pid, pid_t only, struct edge_thread **v, size_t *nr, size_t *cap)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	long tid;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0; /* gone */
	while ((de = readdir(dir)) && *nr < EDGE_MAX_THREADS) {
		if (parse__long(de->d_name, 1, INT32_MAX, &tid) || (only && tid != only))
			continue;
		if (array__grow((void **)v, cap, *nr + 1, sizeof(**v))) {
			closedir(dir);
			return -ENOMEM;
		}
		(*v)[(*nr)++] = (struct edge_thread){ .pid = pid, .tid = (pid_t)tid };
	}
	closedir(dir);
	return 0;
}

/* The process of thread @tid (its "Tgid:" in /proc/TID/status), or -errno. */
static pid_t read_tgid(pid_t tid)
{
	char path[64], *text = NULL, *p;
	long tgid = -ENOENT;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	err = file__read_bounded(AT_FDCWD, path, 64 * 1024, &text, &len);
	if (err)
		return err;
	p = strstr(text, "\nTgid:");
	if (p)
		tgid = strtol(p + 6, NULL, 10);
	free(text);
	return tgid > 0 ? (pid_t)tgid : -ENOENT;
}

/* The target threads: of -p's processes, -t's threads, or every process with -a. */
static int list_targets(struct record *r, struct edge_thread **v, size_t *nr)
{
	const struct record_opts *o = &r->opts;
	size_t cap = 0, i;
	struct dirent *de;
	DIR *dir;
	long pid;
	int err = 0;

	for (i = 0; i < o->nr_pids && !err; i++)
		err = list_threads(o->pids[i], 0, v, nr, &cap);
	for (i = 0; i < o->nr_tids && !err; i++) {
		pid_t tgid = read_tgid(o->tids[i]);

		if (tgid > 0)
			err = list_threads(tgid, o->tids[i], v, nr, &cap);
	}
	if (err || !o->all)
		return err;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while (!err && (de = readdir(dir))) {
		if (parse__long(de->d_name, 1, INT32_MAX, &pid) || pid == getpid())
			continue;
		err = list_threads((pid_t)pid, 0, v, nr, &cap);
	}
	closedir(dir);
	return err;
}

int record__edges_start(struct record *r, struct stopper *stop, double until)
{
	struct edge_ctx c = { .r = r, .snapped = -1 };
	struct edge_thread *v = NULL;
	size_t nr = 0, kept = 0, i;
	uint64_t pcount;
	int err;

	/* a command starts inside the recording; -a reads every thread of the system
	 * (about 0.8 ms each here: a snapshot and an unwind), within @until as all do */
	if (r->opts.mode == MODE_CPU || r->opts.mode == MODE_EVENT || r->opts.cmd)
		return 0;
	c.names = strset__new();
	c.stack_size = r->opts.stack_size;
	c.stack = malloc(c.stack_size);
	c.unw = r->dw.unw;
	if (!c.unw && !r->opts.kernel_only) {
		struct unwind_opts uopts = {
			.sz = sizeof(uopts), .maps = &record__unwind_ops, .maps_ctx = r};

		c.unw = unwinder__new(&uopts);
		c.own_unw = true;
	}
	err = !c.names || !c.stack || (!c.unw && !r->opts.kernel_only) ? -ENOMEM : 0;
	if (!err)
		err = list_targets(r, &v, &nr);
	/* read each thread; keep the blocked ones at the front */
	for (i = 0; i < nr && !err; i++) {
		struct edge_thread t;
		pid_t pid = v[i].pid, tid = v[i].tid;

		if ((stop && stopper__stopped(stop)) || timing__now() > until) {
			r->edges.late += nr - i;
			break;
		}
		r->edges.threads++;
		err = read_thread(&c, pid, tid, &t);
		if (err == -ENOMEM)
			break;
		if (err < 0)
			r->edges.unreadable++;
		if (err == 1)
			v[kept++] = t;
		err = 0;
	}
	if (!err)
		err = resolve_kernel(&c, v, kept);
	for (i = 0; i < kept && !err; i++) {
		struct edge_thread *t = &v[i];

		t->st.ts = r->attach_ns;
		t->st.first = r->attach_ns;
		err = sampler__seed_interval(r->sampler, t->tid, &t->st);
		if (err == -EEXIST) {
			/* it ran and blocked again since: its own interval stands */
			r->edges.ran++;
			err = 0;
			continue;
		}
		if (err)
			break;
		/* it ran while it was read: take the guess back */
		if (read_pcount(t->tid, &pcount) || pcount != t->pcount) {
			if (!sampler__unseed_interval(r->sampler, t->tid, t->st.ts)) {
				r->edges.ran++;
				continue;
			}
		}
		r->edges.seeded++;
	}
	if (err == -ENOMEM)
		pr_err("out of memory reading the threads blocked at the start\n");
	else if (err)
		pr_debug("threads blocked at the start: %s\n", strerror(-err));
	if (c.own_unw)
		unwinder__free(c.unw);
	free(c.stack);
	strset__free(c.names);
	free(v);
	return err == -ENOMEM ? err : 0;
}
