// SPDX-License-Identifier: MIT
/* profiler: the BPF programs' lifecycle: open, size maps, load, attach, drain. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "profiler-private.h"
#include "oncpu.skel.h"
#include "offcpu.skel.h"
#include "event.skel.h"

/* What both skeletons have in common (stacks.bpf.h), seen the same way. */
/* kernel stacks read back, by id: the same few recur in every process (stack ids name
 * their contents, and the stack map never drops a kernel stack, so an id's kernel stack
 * never changes: forget_stacks() deletes user stacks only) */
#define KSTACK_CACHE_SLOTS 256
#define SAMPLER_MAX_RINGS 4 /* per set: process notifications, sample records */

struct kstack_slot {
	__u64 id; /* 0: empty */
	struct stack_trace st;
};

struct prog_set {
	struct bpf_map *stacks, *counts, *pids, *tids, *procs, *events, *stats, *samples, *bufs,
		*tops;
	struct kstack_slot *kcache; /* KSTACK_CACHE_SLOTS, allocated at the first reap */
	/* sampler_opts.age_stacks: the stack ids of the keys taken in this interval and in
	 * the last one (sampler__age_stacks()); @used_lost: one could not be kept */
	__u64 *used, *used_prev;
	size_t nr_used, cap_used, nr_used_prev, cap_prev;
	bool used_lost;
	struct bpf_program *fork, *exit;
	struct bpf_link *fork_link, *exit_link;
	bool offcpu;
	bool aging; /* sampler_opts.age_stacks */
	/* offwake: map "wake_counts" (NULL in the other modes), and the waker of the key
	 * being passed to a sampler_drain_fn (sampler__waker()) with its stacks */
	struct bpf_map *wake_counts;
	const struct waker *waker;
	struct stack_trace *wuser, *wkernel;
	bool have_wuser, have_wkernel;
};

struct sampler {
	struct oncpu_bpf *on;
	struct offcpu_bpf *off;
	struct event_bpf *ev; /* record --event: instead of both */
	/* --event: the -p/-t targets a user probe is placed in (none: every process that
	 * maps the file, as for a command and its children) */
	pid_t *probe_ids;
	int nr_probe_ids;
	struct prog_set sets[2];
	int nr_sets;
	/* one consumer per ring, taken in turn so that none starves another when the
	 * budget of sampler__consume() runs out; @epfd polls them all */
	struct ring_buffer *rbs[SAMPLER_MAX_RINGS];
	int nr_rbs, next_rb, epfd;
	uint64_t deadline_ns; /* sampler__consume(): stop after the record past it (0: never) */
	bool discard;	      /* sampler__discard(): count sample records, pass none */
	uint64_t discarded;
	uint64_t stop_ns; /* sampler__stop(), on the stop thread: CLOCK_MONOTONIC ns; 0: sampling */
	uint64_t end_at_ns; /* sampler__end_at(): the programs' own deadline; 0: none */
	struct bpf_link **links; /* perf events and sched_switch */
	int *pfds;
	int nr_links;
	int nr_attached; /* CPUs sampled, kept after detach for the summary */
	long freq;
	struct sampler_opts opts;
	sampler_event_fn event_cb;
	sampler_sample_fn sample_cb;
	void *event_ctx;
	uint64_t bad_samples;
};

#define PROG_SET(skel, is_off)                                                                     \
	((struct prog_set){                                                                        \
		.stacks = (skel)->maps.stacks,                                                     \
		.counts = (skel)->maps.counts,                                                     \
		.pids = (skel)->maps.pids,                                                         \
		.tids = (skel)->maps.tids,                                                         \
		.procs = (skel)->maps.procs,                                                       \
		.events = (skel)->maps.events,                                                     \
		.stats = (skel)->maps.stats,                                                       \
		.samples = (skel)->maps.samples,                                                   \
		.bufs = (skel)->maps.sample_bufs,                                                  \
		.tops = (skel)->maps.stack_tops,                                                   \
		.fork = (skel)->progs.follow_fork,                                                 \
		.exit = (skel)->progs.proc_exit,                                                    \
		.offcpu = (is_off),                                                                \
	})

#define SET_COMMON_RODATA(skel, o)                                                                 \
	do {                                                                                       \
		(skel)->rodata->user_only = (o)->user_only;                                        \
		(skel)->rodata->kernel_only = (o)->kernel_only;                                    \
		(skel)->rodata->filter_pid = (o)->filter_pid;                                      \
		(skel)->rodata->filter_tid = (o)->filter_tid;                                      \
		(skel)->rodata->follow_forks = (o)->follow_forks;                                  \
		(skel)->rodata->unwind_dwarf = (o)->unwind_dwarf;                                  \
		(skel)->rodata->stack_size = (o)->stack_size;                                      \
		(skel)->rodata->kunwind_wanted = (o)->unwind_kernel;                               \
		(skel)->rodata->wakeup_bytes = (o)->ring_bytes / 4;                                \
		(skel)->rodata->period_ns = period_ns((o)->freq);                                  \
		(skel)->rodata->sideband_since = (o)->sideband_since;                              \
		(skel)->rodata->sideband_mntns = (o)->sideband_mntns;                              \
	} while (0)

/* The kernel's cpu-clock period for sample_freq @freq (perf_swevent_init_hrtimer). */
static uint64_t period_ns(long freq)
{
	return freq > 0 ? MAX(1000000000ULL / (uint64_t)freq, 10000ULL) : 0;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void explain_load_error(const char *what, int err)
{
	pr_err("cannot load the %s BPF program: %s\n", what, strerror(-err));
	if (err == -EPERM || err == -EACCES)
		pr_hint("run as root, or grant CAP_BPF and CAP_PERFMON\n");
	else if (err == -ENOENT || err == -ESRCH)
		pr_hint("the kernel needs BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y)\n");
	else
		pr_hint("rerun with -v to see the libbpf and verifier log\n");
}

/*
 * Does sched_switch pass prev_state, its 4th argument since kernel 5.18? Read from the
 * kernel's BTF (as perf's check_sched_switch_args()): a raw tracepoint program that
 * reads an argument the tracepoint lacks does not attach. Without it offcpu reads the
 * task's state instead, which a racing wakeup may have changed.
 */
static bool switch_has_prev_state(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t = NULL;
	bool has;
	int id;

	if (!btf) {
		pr_debug("offcpu: cannot read the kernel BTF: %s\n", strerror(errno));
		return false;
	}
	/* typedef void (*btf_trace_sched_switch)(void *, bool, prev, next, prev_state) */
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	if (id > 0)
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	has = t && btf_is_func_proto(t) && btf_vlen(t) >= 5;
	btf__free(btf);
	if (!has)
		pr_debug("offcpu: sched_switch has no prev_state argument: the task's state is read\n");
	return has;
}

/*
 * Sizes the shared maps of one program set. The stack and count maps are
 * preallocated: an on-demand (BPF_F_NO_PREALLOC) insert from the timer interrupt
 * or the scheduler fails with -ENOMEM whenever the per-CPU allocation cache has
 * not been refilled yet, which loses samples in bursts of new stacks. The cost is
 * memory up front: about 1.1 KiB per stack entry and 0.1 KiB per count (at 65536
 * entries, 79 MiB). So record sizes the maps from frequency x duration x CPUs, within
 * limits (--max-stacks overrides).
 */
static void size_maps(struct prog_set *ps, const struct sampler_opts *o)
{
	uint32_t entries = o->max_stacks ? o->max_stacks : 65536;
	uint32_t nfilter = o->nr_filter ? o->nr_filter : 1;

	bpf_map__set_max_entries(ps->stacks, entries);
	bpf_map__set_max_entries(ps->counts, entries);
	/* a followed command may fork many children */
	bpf_map__set_max_entries(ps->pids, o->follow_forks ? 65536 : nfilter);
	bpf_map__set_max_entries(ps->tids, nfilter);
	bpf_map__set_max_entries(ps->procs, 32768);
	bpf_program__set_autoload(ps->fork, o->follow_forks);
	if (o->unwind_dwarf) {
		bpf_map__set_max_entries(ps->samples, o->ring_bytes);
		bpf_map__set_max_entries(ps->bufs, libbpf_num_possible_cpus());
	}
	/* threads sampled recently (least recently used ones evicted: they probe again) */
	bpf_map__set_max_entries(ps->tops, o->unwind_dwarf ? 8192 : libbpf_num_possible_cpus());
}

/* --unwind kernel's maps: as asked, else one entry (the programs never read them) */
static void size_kunwind(struct bpf_map *rows, struct bpf_map *procs, const struct sampler_opts *o)
{
	bpf_map__set_max_entries(rows, o->unwind_kernel ? o->kunwind_rows : 1);
	bpf_map__set_max_entries(procs, o->unwind_kernel ? o->kunwind_procs : 1);
}

/* record --event: the event object, with the programs the event needs loaded. */
static int event_open(struct sampler *s, const struct sampler_opts *opts)
{
	const struct event_spec *ev = opts->event;
	struct event_bpf *skel;
	int err;

	s->ev = skel = event_bpf__open();
	if (!skel) {
		err = -errno;
		pr_err("cannot open the event BPF object: %s\n", strerror(errno));
		return err;
	}
	SET_COMMON_RODATA(skel, opts);
	skel->rodata->period_ns = 0;
	/* software events are counted every Nth by the kernel (sample_period) */
	skel->rodata->event_period = ev->kind == EVENT_SOFTWARE ? 1 : ev->period;
	skel->rodata->weight_arg = ev->weight_arg;
	skel->rodata->entry_walk = ev->kind == EVENT_UPROBE && !ev->add;
	skel->rodata->self_pid = getpid();
	bpf_program__set_autoload(skel->progs.event_uprobe,
				  !ev->latency && (ev->kind == EVENT_UPROBE ||
						   ev->kind == EVENT_URETPROBE));
	bpf_program__set_autoload(skel->progs.event_usdt, ev->kind == EVENT_USDT);
	bpf_program__set_autoload(skel->progs.event_raw_tp, ev->kind == EVENT_TRACEPOINT);
	bpf_program__set_autoload(skel->progs.event_perf, ev->kind == EVENT_SOFTWARE);
	bpf_program__set_autoload(skel->progs.event_entry, ev->latency);
	bpf_program__set_autoload(skel->progs.event_return, ev->latency);
	bpf_program__set_autoload(skel->progs.event_thread_exit, ev->latency);
	s->sets[s->nr_sets] = PROG_SET(skel, false);
	s->sets[s->nr_sets].aging = opts->age_stacks;
	size_maps(&s->sets[s->nr_sets++], opts);
	bpf_map__set_max_entries(skel->maps.inside, opts->max_threads ? opts->max_threads : 8192);
	err = event_bpf__load(skel);
	if (err)
		explain_load_error("event", err);
	return err;
}

int sampler__new(const struct sampler_opts *opts, struct sampler **out)
{
	struct sampler *s;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->freq = opts->freq;
	s->epfd = -1;
	if (opts->oncpu) {
		s->on = oncpu_bpf__open();
		if (!s->on) {
			err = -errno;
			pr_err("cannot open the on-CPU BPF object: %s\n", strerror(errno));
			goto cleanup;
		}
		SET_COMMON_RODATA(s->on, opts);
		s->on->rodata->include_idle = opts->include_idle;
		s->on->rodata->credit_missed = opts->credit_missed;
		s->on->rodata->unwind_kernel = opts->unwind_kernel;
		size_kunwind(s->on->maps.kunwind_rows, s->on->maps.kunwind_procs, opts);
		s->sets[s->nr_sets] = PROG_SET(s->on, false);
		s->sets[s->nr_sets].aging = opts->age_stacks;
		size_maps(&s->sets[s->nr_sets++], opts);
		err = oncpu_bpf__load(s->on);
		if (err) {
			explain_load_error("on-CPU", err);
			goto cleanup;
		}
	}
	if (opts->event) {
		err = event_open(s, opts);
		if (err)
			goto cleanup;
	}
	if (opts->offcpu) {
		s->off = offcpu_bpf__open();
		if (!s->off) {
			err = -errno;
			pr_err("cannot open the off-CPU BPF object: %s\n", strerror(errno));
			goto cleanup;
		}
		SET_COMMON_RODATA(s->off, opts);
		s->off->rodata->min_block_ns = opts->min_block_ns;
		s->off->rodata->max_block_ns = opts->max_block_ns;
		s->off->rodata->state_mask = opts->state_mask;
		s->off->rodata->with_runqueue = opts->with_runqueue;
		s->off->rodata->user_threads_only = opts->user_threads_only;
		s->off->rodata->kernel_threads_only = opts->kernel_threads_only;
		s->off->rodata->self_pid = getpid();
		s->off->rodata->has_prev_state = switch_has_prev_state();
		s->off->rodata->unwind_kernel = opts->unwind_kernel;
		size_kunwind(s->off->maps.kunwind_rows, s->off->maps.kunwind_procs, opts);
		if (opts->unwind_kernel && s->on) {
			/* one set of tables for both programs (wall mode) */
			err = bpf_map__reuse_fd(s->off->maps.kunwind_rows,
						bpf_map__fd(s->on->maps.kunwind_rows));
			if (!err)
				err = bpf_map__reuse_fd(s->off->maps.kunwind_procs,
							bpf_map__fd(s->on->maps.kunwind_procs));
			if (err) {
				pr_err("cannot share the unwind tables between the BPF objects: %s\n",
				       strerror(-err));
				goto cleanup;
			}
		}
		/* run by sampler__cut_intervals() only: never attached */
		bpf_program__set_autoload(s->off->progs.offcpu_cut, opts->cut_intervals);
		s->off->rodata->offwake = opts->offwake;
		bpf_program__set_autoload(s->off->progs.offwake_waking, opts->offwake);
		if (opts->credit_missed && s->on) {
			/* one "last_tick" map: offcpu marks the switches oncpu's samples see */
			s->off->rodata->mark_switches = true;
			err = bpf_map__reuse_fd(s->off->maps.last_tick,
						bpf_map__fd(s->on->maps.last_tick));
			if (err) {
				pr_err("cannot share map last_tick between the BPF objects: %s\n",
				       strerror(-err));
				goto cleanup;
			}
		}
		s->sets[s->nr_sets] = PROG_SET(s->off, true);
		s->sets[s->nr_sets].aging = opts->age_stacks;
		size_maps(&s->sets[s->nr_sets], opts);
		/* offwake: its blocked parts, as many keys as "counts" may hold */
		bpf_map__set_max_entries(s->off->maps.wake_counts,
					 opts->offwake ? bpf_map__max_entries(s->off->maps.counts)
						       : 1);
		if (opts->offwake)
			s->sets[s->nr_sets].wake_counts = s->off->maps.wake_counts;
		s->nr_sets++;
		/* about 2 KiB per thread off CPU at once, preallocated as above */
		bpf_map__set_max_entries(s->off->maps.start,
					 opts->max_threads ? opts->max_threads : 8192);
		err = offcpu_bpf__load(s->off);
		if (err) {
			explain_load_error("off-CPU", err);
			goto cleanup;
		}
	}
	*out = s;
	return 0;
cleanup:
	sampler__free(s);
	return err;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	sampler__detach(s);
	for (int i = 0; i < s->nr_sets; i++) {
		free(s->sets[i].kcache);
		free(s->sets[i].wuser);
		free(s->sets[i].wkernel);
		free(s->sets[i].used);
		free(s->sets[i].used_prev);
	}
	for (int i = 0; i < s->nr_rbs; i++)
		ring_buffer__free(s->rbs[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	oncpu_bpf__destroy(s->on);
	offcpu_bpf__destroy(s->off);
	event_bpf__destroy(s->ev);
	free(s->probe_ids);
	free(s);
}

static int filter_add(struct sampler *s, bool tid, pid_t id)
{
	__u32 key = id;
	__u8 one = 1;
	pid_t *t;
	int i;

	if (s->ev && !s->opts.follow_forks) {
		t = realloc(s->probe_ids, (s->nr_probe_ids + 1) * sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->probe_ids = t;
		s->probe_ids[s->nr_probe_ids++] = id;
	}
	for (i = 0; i < s->nr_sets; i++) {
		struct bpf_map *m = tid ? s->sets[i].tids : s->sets[i].pids;

		if (bpf_map_update_elem(bpf_map__fd(m), &key, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

int sampler__add_pid(struct sampler *s, pid_t pid)
{
	return filter_add(s, false, pid);
}

int sampler__add_tid(struct sampler *s, pid_t tid)
{
	return filter_add(s, true, tid);
}

/* After each record: a negative return makes libbpf stop there (that record is read). */
static int ring_budget(const struct sampler *s)
{
	return s->deadline_ns && timing__now_ns() >= s->deadline_ns ? -EAGAIN : 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size < sizeof(struct scorch_event) || !s->event_cb)
		return 0;
	s->event_cb(s->event_ctx, data);
	return ring_budget(s);
}

static int handle_sample(void *ctx, void *data, size_t size)
{
	const struct scorch_sample *smp = data;
	struct sampler *s = ctx;

	if (size == sizeof(struct scorch_interval) && smp->type == SCORCH_EVENT_INTERVAL) {
		if (s->event_cb)
			s->event_cb(s->event_ctx, data);
		return ring_budget(s);
	}
	if (size < sizeof(*smp) ||
	    (smp->type != SCORCH_EVENT_SAMPLE && smp->type != SCORCH_EVENT_OFFCPU_COPY) ||
	    smp->kernel_nr > SCORCH_MAX_STACK_DEPTH ||
	    size - sizeof(*smp) != (size_t)smp->kernel_nr * sizeof(__u64) + smp->stack_len) {
		s->bad_samples++;
		return 0;
	}
	if (s->discard) {
		s->discarded++;
		return 0;
	}
	if (s->sample_cb)
		s->sample_cb(s->event_ctx, smp, size);
	return ring_budget(s);
}

uint64_t sampler__bad_samples(const struct sampler *s)
{
	return s->bad_samples;
}

/*
 * Opens the perf event @attr on every online CPU and attaches @prog to each. @what names
 * the event in errors ("a cpu-clock", "the page-faults").
 */
static int attach_per_cpu(struct sampler *s, struct bpf_program *prog,
			  struct perf_event_attr *attr, const char *what)
{
	int nr_cpus = libbpf_num_possible_cpus(), cpu, fd, err;
	bool *online;

	online = calloc(nr_cpus, sizeof(*online));
	if (!online)
		return -ENOMEM;
	err = cpu_list__parse("/sys/devices/system/cpu/online", online, nr_cpus);
	if (err) {
		pr_err("cannot read /sys/devices/system/cpu/online: %s\n", strerror(-err));
		goto cleanup;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		if (!online[cpu])
			continue;
		fd = perf_event_open(attr, -1, cpu);
		if (fd < 0) {
			err = -errno;
			if (err == -ENODEV) /* went offline meanwhile */
				continue;
			pr_err("cannot open %s perf event on CPU %d: %s\n", what, cpu,
			       strerror(-err));
			if (err == -EACCES || err == -EPERM)
				pr_hint("run as root, or grant CAP_PERFMON (see kernel.perf_event_paranoid)\n");
			else if (err == -EINVAL && attr->freq)
				pr_hint("-F %ld may exceed kernel.perf_event_max_sample_rate\n", s->freq);
			else
				pr_hint("the kernel needs perf events (CONFIG_PERF_EVENTS)\n");
			goto cleanup;
		}
		s->links[s->nr_links] = bpf_program__attach_perf_event(prog, fd);
		if (!s->links[s->nr_links]) {
			err = -errno;
			close(fd);
			pr_err("cannot attach the BPF program to CPU %d: %s\n", cpu, strerror(-err));
			goto cleanup;
		}
		s->pfds[s->nr_links++] = fd;
		s->nr_attached++;
	}
	if (!s->nr_attached) {
		pr_err("no online CPU to sample\n");
		err = -ENODEV;
	}
cleanup:
	free(online);
	return err;
}

static int attach_perf_events(struct sampler *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = s->freq,
	};

	return attach_per_cpu(s, s->on->progs.oncpu_sample, &attr, "a cpu-clock");
}

/* The software perf event of --event on every CPU, every Nth event sampled (--period). */
static int attach_software(struct sampler *s)
{
	const struct event_spec *ev = s->opts.event;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = ev->sw_config,
		.size = sizeof(attr),
		.sample_period = ev->period ? ev->period : 1,
	};
	char what[64];

	snprintf(what, sizeof(what), "the %s", ev->name);
	return attach_per_cpu(s, s->ev->progs.event_perf, &attr, what);
}

/* One link of --event: stored, or its failure explained. */
static int event_link(struct sampler *s, struct bpf_link *link, const char *what)
{
	const struct event_spec *ev = s->opts.event;
	int err = -errno;

	if (!link) {
		pr_err("cannot attach to %s (--event %s): %s\n", what, ev->spec, strerror(-err));
		if (err == -ENOENT || err == -EINVAL)
			pr_hint("the kernel needs uprobes (CONFIG_UPROBE_EVENTS); for a "
				"tracepoint, check its name with 'scorch list-events'\n");
		else
			pr_hint("rerun with -v to see libbpf's messages\n");
		return err;
	}
	s->links[s->nr_links] = link;
	s->pfds[s->nr_links++] = -1;
	return 0;
}

/*
 * A uprobe, uretprobe or USDT probe of --event in each -p/-t target, so that the kernel
 * places its breakpoint in their memory only (a probe on libc's malloc would otherwise
 * trap in every process of the system, the BPF filter dropping the others' hits), or
 * in every process that maps the file when there is none.
 */
static int attach_user_probe(struct sampler *s, struct bpf_program *prog, bool retprobe,
			     const char *what)
{
	const struct event_spec *ev = s->opts.event;
	LIBBPF_OPTS(bpf_uprobe_opts, uopts, .retprobe = retprobe);
	int i, n = s->nr_probe_ids ? s->nr_probe_ids : 1, err = 0;
	struct bpf_link *link;
	pid_t pid;

	for (i = 0; i < n && !err; i++) {
		pid = s->nr_probe_ids ? s->probe_ids[i] : -1;
		if (ev->kind == EVENT_USDT)
			link = bpf_program__attach_usdt(prog, pid, ev->path, ev->symbol, ev->name,
							NULL);
		else
			link = bpf_program__attach_uprobe_opts(prog, pid, ev->path, ev->offset,
							       &uopts);
		err = event_link(s, link, what);
	}
	return err;
}

/* --event: the probe, raw tracepoint or software events, after the exit programs. */
static int attach_event(struct sampler *s)
{
	const struct event_spec *ev = s->opts.event;
	struct event_bpf *skel = s->ev;
	int err;

	switch (ev->kind) {
	case EVENT_UPROBE:
	case EVENT_URETPROBE:
		if (ev->latency) {
			/* the exit first, then the return, then the entry: every call entered
			 * is seen to its end */
			err = event_link(s, bpf_program__attach(skel->progs.event_thread_exit),
					 "sched_process_exit");
			if (!err)
				err = attach_user_probe(s, skel->progs.event_return, true,
							"the function's return");
			if (!err)
				err = attach_user_probe(s, skel->progs.event_entry, false,
							"the function's entry");
			return err;
		}
		return attach_user_probe(s, skel->progs.event_uprobe,
					 ev->kind == EVENT_URETPROBE, "the uprobe");
	case EVENT_USDT:
		return attach_user_probe(s, skel->progs.event_usdt, false, "the USDT probe");
	case EVENT_TRACEPOINT:
		return event_link(s, bpf_program__attach_raw_tracepoint(skel->progs.event_raw_tp,
									ev->name),
				  "the raw tracepoint");
	case EVENT_SOFTWARE:
		return attach_software(s);
	default:
		return -EINVAL;
	}
}

static int attach_tracepoint(struct bpf_program *prog, struct bpf_link **link, const char *name)
{
	*link = bpf_program__attach(prog);
	if (!*link) {
		int err = -errno;

		pr_err("cannot attach to the %s raw tracepoint: %s\n", name, strerror(-err));
		pr_hint("the kernel needs BPF raw tracepoints (CONFIG_BPF_EVENTS)\n");
		return err;
	}
	return 0;
}

int sampler__attach(struct sampler *s)
{
	int nr_cpus = libbpf_num_possible_cpus(), err = 0, i;

	if (nr_cpus < 0)
		return nr_cpus;
	/* a perf event per CPU, sched_waking, sched_wakeup and sched_switch; or --event's links: a
	 * perf event per CPU, or the thread exit and two probes per target */
	s->links = calloc(MAX(nr_cpus, 2 * s->nr_probe_ids) + 4, sizeof(*s->links));
	s->pfds = calloc(MAX(nr_cpus, 2 * s->nr_probe_ids) + 4, sizeof(*s->pfds));
	if (!s->links || !s->pfds) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* fork first: a child forked while the rest attaches is followed already */
	for (i = 0; i < s->nr_sets && !err; i++) {
		struct prog_set *ps = &s->sets[i];

		if (bpf_program__autoload(ps->fork))
			err = attach_tracepoint(ps->fork, &ps->fork_link, "sched_process_fork");
		if (!err)
			err = attach_tracepoint(ps->exit, &ps->exit_link, "sched_process_exit");
	}
	/* wakeups first: every interval sched_switch opens has its wakeup seen */
	if (!err && s->off && s->opts.offwake) {
		err = attach_tracepoint(s->off->progs.offwake_waking, &s->links[s->nr_links],
					"sched_waking");
		if (!err)
			s->pfds[s->nr_links++] = -1;
	}
	if (!err && s->off) {
		err = attach_tracepoint(s->off->progs.offcpu_wakeup, &s->links[s->nr_links],
					"sched_wakeup");
		if (!err)
			s->pfds[s->nr_links++] = -1;
	}
	if (!err && s->off) {
		err = attach_tracepoint(s->off->progs.offcpu_switch, &s->links[s->nr_links],
					"sched_switch");
		if (!err)
			s->pfds[s->nr_links++] = -1;
	}
	if (!err && s->on)
		err = attach_perf_events(s);
	if (!err && s->ev)
		err = attach_event(s);
cleanup:
	if (err)
		sampler__detach(s);
	return err;
}

int sampler__nr_cpus(const struct sampler *s)
{
	return s->nr_attached;
}

void sampler__detach(struct sampler *s)
{
	int i;

	for (i = 0; i < s->nr_links; i++) {
		bpf_link__destroy(s->links[i]);
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	}
	free(s->links);
	free(s->pfds);
	s->links = NULL;
	s->pfds = NULL;
	s->nr_links = 0;
	for (i = 0; i < s->nr_sets; i++) {
		bpf_link__destroy(s->sets[i].fork_link);
		bpf_link__destroy(s->sets[i].exit_link);
		s->sets[i].fork_link = s->sets[i].exit_link = NULL;
	}
}

/* One consumer for the ring @fd, its epoll fd added to s->epfd. */
static int add_ring(struct sampler *s, int fd, ring_buffer_sample_fn fn)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ring_buffer *rb;

	if (s->nr_rbs == SAMPLER_MAX_RINGS)
		return -E2BIG;
	rb = ring_buffer__new(fd, fn, s, NULL);
	if (!rb)
		return -errno;
	s->rbs[s->nr_rbs++] = rb;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(rb), &ev))
		return -errno;
	return 0;
}

static int sampler_ring(struct sampler *s)
{
	int i, err = 0;

	if (s->epfd >= 0)
		return 0;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		err = -errno;
		goto cleanup;
	}
	for (i = 0; i < s->nr_sets && !err; i++) {
		err = add_ring(s, bpf_map__fd(s->sets[i].events), handle_event);
		/* after "events": a process's announcement is usually read before its samples */
		if (!err && s->opts.unwind_dwarf)
			err = add_ring(s, bpf_map__fd(s->sets[i].samples), handle_sample);
	}
cleanup:
	if (err)
		pr_err("cannot set up the BPF ring buffer: %s\n", strerror(-err));
	return err;
}

int sampler__event_fd(const struct sampler *s)
{
	if (sampler_ring((struct sampler *)s))
		return -1;
	return s->epfd;
}

/* Reads the rings in turn from s->next_rb until all are empty or the budget is spent. */
static int consume_rings(struct sampler *s)
{
	int i, k, err;

	for (i = 0; i < s->nr_rbs; i++) {
		k = (s->next_rb + i) % s->nr_rbs;
		err = ring_buffer__consume(s->rbs[k]);
		if (err == -EAGAIN) {
			/* the next call starts with the ring after the one that used it up */
			s->next_rb = (k + 1) % s->nr_rbs;
			return -EAGAIN;
		}
		if (err < 0)
			return err;
	}
	return 0;
}

int sampler__consume(struct sampler *s, sampler_event_fn cb, sampler_sample_fn sample_cb,
		     void *ctx, uint64_t budget_ns)
{
	int err = sampler_ring(s);

	if (err)
		return err;
	s->event_cb = cb;
	s->sample_cb = sample_cb;
	s->event_ctx = ctx;
	s->deadline_ns = budget_ns ? timing__now_ns() + budget_ns : 0;
	err = consume_rings(s);
	s->deadline_ns = 0;
	return err;
}

uint64_t sampler__discard(struct sampler *s)
{
	uint64_t before = s->discarded;

	if (sampler_ring(s))
		return 0;
	s->discard = true;
	s->deadline_ns = 0;
	(void)consume_rings(s);
	s->discard = false;
	return s->discarded - before;
}

static int lookup_stack(int fd, __u64 id, struct stack_trace *st)
{
	if (bpf_map_lookup_elem(fd, &id, st))
		return -errno;
	if (st->nr > SCORCH_MAX_STACK_DEPTH)
		return -EINVAL;
	return 0;
}

/* The sum of the @nr_cpus per-CPU slots of one value in @pcpu. */
static __u64 percpu_sum(const __u64 *pcpu, int nr_cpus)
{
	__u64 sum = 0;
	int cpu;

	for (cpu = 0; cpu < nr_cpus; cpu++)
		sum += pcpu[cpu];
	return sum;
}

/*
 * The maps of counts a program set has: "counts" (struct count_key), and in offwake mode
 * "wake_counts" (struct wake_key, the blocked thread's count_key first). Both are read,
 * taken and aged by the same code, by key size.
 */
#define MAX_COUNT_MAPS 2

_Static_assert(sizeof(struct count_key) == 48,
	       "count_key keeps its size in every mode: offwake's waker is in wake_key only");

static int count_maps(const struct prog_set *ps, struct bpf_map **maps, size_t *ksz)
{
	int n = 0;

	maps[n] = ps->counts;
	ksz[n++] = sizeof(struct count_key);
	if (ps->wake_counts) {
		maps[n] = ps->wake_counts;
		ksz[n++] = sizeof(struct wake_key);
	}
	return n;
}

/* Key @i of an array of keys of @ksz bytes, each a count_key first. */
static struct count_key *key_at(void *keys, size_t i, size_t ksz)
{
	return (struct count_key *)((char *)keys + i * ksz);
}

/* The waker of a key of @ksz bytes, or NULL (a count_key, or a key with no waker). */
static const struct waker *key_waker(const struct count_key *key, size_t ksz)
{
	if (ksz != sizeof(struct wake_key) || !(key->flags & KEY_WAKER))
		return NULL;
	return &((const struct wake_key *)key)->waker;
}

/*
 * Reads every (key, value) of the counts map @fd, with keys of @ksz bytes (<= sizeof(struct
 * wake_key)), into arrays grown as needed: in batches (one syscall per batch) where the
 * kernel supports it, else key by key. Entries added meanwhile may or may not be seen.
 * Returns 0 or -errno.
 */
static int read_counts(int fd, size_t ksz, void **keys, __u64 **vals, size_t *nr)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 batch_max = 4096, count;
	size_t cap = 0, n = 0;
	struct wake_key batch_key, next, last;
	char *k = NULL, *kt;
	bool have_last = false;
	__u64 *v = NULL, *vt;
	bool batch = true, done = false;
	int err = 0;

	while (!done) {
		if (cap - n < batch_max) {
			cap = cap ? cap * 2 : 8192;
			kt = realloc(k, cap * ksz);
			if (kt)
				k = kt;
			vt = realloc(v, cap * sizeof(*v));
			if (vt)
				v = vt;
			if (!kt || !vt) {
				err = -ENOMEM;
				goto cleanup;
			}
		}
		if (batch) {
			count = batch_max;
			err = bpf_map_lookup_batch(fd, n ? &batch_key : NULL, &batch_key,
						   k + n * ksz, v + n, &count, &opts);
			if (!err || err == -ENOENT) {
				n += count;
				done = err == -ENOENT;
				err = 0;
				continue;
			}
			if (n || (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP))
				goto cleanup;
			batch = false; /* no batch operations: walk key by key */
			err = 0;
		}
		if (bpf_map_get_next_key(fd, have_last ? &last : NULL, &next)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		memcpy(&last, &next, ksz);
		have_last = true;
		memcpy(k + n * ksz, &next, ksz);
		if (!bpf_map_lookup_elem(fd, k + n * ksz, &v[n]))
			n++;
	}
cleanup:
	if (err) {
		pr_err("cannot read the BPF counts map: %s\n", strerror(-err));
		free(k);
		free(v);
		return err;
	}
	*keys = k;
	*vals = v;
	*nr = n;
	return 0;
}

/* lookup_stack() of a kernel stack, through @ps's cache when it has one. */
static int lookup_kernel_stack(struct prog_set *ps, int fd, __u64 id, struct stack_trace *st)
{
	struct kstack_slot *slot = ps->kcache ? &ps->kcache[id % KSTACK_CACHE_SLOTS] : NULL;
	int err;

	if (slot && slot->id == id) {
		st->nr = slot->st.nr;
		memcpy(st->ips, slot->st.ips, st->nr * sizeof(st->ips[0]));
		return 0;
	}
	err = lookup_stack(fd, id, st);
	if (!err && slot) {
		slot->id = id;
		slot->st.nr = st->nr;
		memcpy(slot->st.ips, st->ips, st->nr * sizeof(st->ips[0]));
	}
	return err;
}

/*
 * offwake: reads the stacks of waker @w (NULL: none) for sampler__waker() and makes it
 * the one passed. 0, -ENOENT when a stack is gone (deleted by a reap or an aging),
 * -ENOMEM.
 */
static int waker_set(struct prog_set *ps, const struct waker *w)
{
	int fd = bpf_map__fd(ps->stacks);

	ps->waker = NULL;
	ps->have_wuser = ps->have_wkernel = false;
	if (!w)
		return 0;
	if (!ps->wuser)
		ps->wuser = malloc(sizeof(*ps->wuser));
	if (!ps->wkernel)
		ps->wkernel = malloc(sizeof(*ps->wkernel));
	if (!ps->wuser || !ps->wkernel)
		return -ENOMEM;
	if ((w->user_stack && lookup_stack(fd, w->user_stack, ps->wuser)) ||
	    (w->kernel_stack && lookup_kernel_stack(ps, fd, w->kernel_stack, ps->wkernel)))
		return -ENOENT;
	ps->have_wuser = w->user_stack != 0;
	ps->have_wkernel = w->kernel_stack != 0;
	ps->waker = w;
	return 0;
}

/*
 * Reads back the stacks of @key (and of its waker @w, or NULL) and calls @cb; unreadable
 * stacks add to *lost.
 */
static int drain_one(struct prog_set *ps, const struct count_key *key, const struct waker *w,
		     __u64 value, sampler_drain_fn cb, void *ctx, uint64_t *lost,
		     struct stack_trace *user, struct stack_trace *kernel)
{
	int stacks_fd = bpf_map__fd(ps->stacks), err;

	err = waker_set(ps, w);
	if (err == -ENOENT || (key->user_stack && lookup_stack(stacks_fd, key->user_stack, user)) ||
	    (key->kernel_stack && lookup_kernel_stack(ps, stacks_fd, key->kernel_stack, kernel))) {
		*lost += value;
		return 0;
	}
	if (err)
		return err;
	err = cb(ctx, ps->offcpu, key, value, key->user_stack ? user : NULL,
		 key->kernel_stack ? kernel : NULL);
	ps->waker = NULL;
	return err;
}

/*
 * Deletes the keys @keys[0..n) whose values were read (sampler__reap() @final): in one
 * call where the kernel can. Returns how many were deleted (0 without batch deletes).
 */
static size_t delete_read(int fd, void *keys, size_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = n;

	if (!n || n > UINT32_MAX)
		return 0;
	if (bpf_map_delete_batch(fd, keys, &count, &opts))
		return count <= n ? count : 0;
	return n;
}

/* Deletes the stacks @ids[0..n) from the stack map @fd; returns how many were deleted. */
static size_t delete_stacks(int fd, const __u64 *ids, size_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 count = n; /* n <= the map's entries */
	size_t i, nr_deleted = 0;

	if (!n || !bpf_map_delete_batch(fd, ids, &count, &opts))
		return n;
	/* one stack missing (unreadable, counted lost, or deleted by a reap) stopped the
	 * batch after @count, or no batch deletes (@count not written): the rest one by one */
	for (i = 0; i < n; i++)
		nr_deleted += !bpf_map_delete_elem(fd, &ids[i]);
	return MIN(n, (count < n ? count : 0) + nr_deleted);
}

/*
 * After a reap: deletes from the stack map @fd the user stacks @gone[0..nr_gone) of the
 * keys taken but those a key left in the map uses (@kept[0..nr_kept): reap__unused()),
 * so that the stacks of exited processes (each one's own under ASLR) do not fill the
 * map. Kernel stacks stay: shared by every process, and cached by id. A live process
 * whose sample stores one of the same stacks between the read and the delete finds it
 * there, and its key's stack is then gone when read back: counted as lost, never named
 * wrong (a stack is stored again when not found). Returns how many were deleted.
 */
static size_t forget_stacks(int fd, const __u64 *kept, size_t nr_kept, __u64 *gone, size_t nr_gone)
{
	return delete_stacks(fd, gone, reap__unused(kept, nr_kept, gone, nr_gone));
}

/* Notes that a key taken in this interval used stack @id (0: none). */
static void used_add(struct prog_set *ps, __u64 id)
{
	__u64 *u;
	size_t cap;

	if (!id || ps->used_lost)
		return;
	if (ps->nr_used == ps->cap_used) {
		cap = ps->cap_used ? 2 * ps->cap_used : 1024;
		u = realloc(ps->used, cap * sizeof(*u));
		if (!u) {
			ps->used_lost = true; /* this interval deletes nothing */
			return;
		}
		ps->used = u;
		ps->cap_used = cap;
	}
	ps->used[ps->nr_used++] = id;
}

/* Does @select pick @key, or (offwake) its waker @w's process image? A key woken by a
 * process that exited no longer changes either: its waker is named before it is released. */
static bool selected(sampler_select_fn select, void *ctx, const struct count_key *key,
		     const struct waker *w)
{
	struct count_key wkey = {};

	if (select(ctx, key))
		return true;
	if (!w || (w->flags & WAKER_KTHREAD))
		return false;
	wkey.pid = w->pid;
	wkey.gen = w->gen;
	return select(ctx, &wkey);
}

/*
 * sampler__reap() @final, over every counts map of a program set: the stacks of the keys
 * left (@kept) and the user stacks of those taken (@gone), for forget_stacks() once all
 * the maps were read (a blocked part in "wake_counts" and its runqueue part in "counts"
 * share their stacks). @failed: one could not be noted, no stack is deleted.
 */
struct reap_ids {
	__u64 *kept, *gone;
	size_t nr_kept, nr_gone, cap_kept, cap_gone;
	bool failed;
};

/* Appends @id (0: none) to @ids[0..*nr), grown as needed; false when out of memory. */
static bool ids_add(__u64 **ids, size_t *nr, size_t *cap, __u64 id)
{
	__u64 *t;

	if (!id)
		return true;
	if (*nr == *cap) {
		t = realloc(*ids, (*cap ? 2 * *cap : 1024) * sizeof(*t));
		if (!t)
			return false;
		*ids = t;
		*cap = *cap ? 2 * *cap : 1024;
	}
	(*ids)[(*nr)++] = id;
	return true;
}

static void reap_ids__keep(struct reap_ids *r, __u64 id)
{
	if (!ids_add(&r->kept, &r->nr_kept, &r->cap_kept, id))
		r->failed = true;
}

static void reap_ids__forget(struct reap_ids *r, __u64 id)
{
	if (!ids_add(&r->gone, &r->nr_gone, &r->cap_gone, id))
		r->failed = true;
}

/*
 * Passes counts of the map @map of @ps (keys of @ksz bytes) to @cb: every one as read
 * (@select NULL: the final drain), or those @select picks, each taken out of the map
 * atomically, so a count added after the read is taken too and none is lost or passed
 * twice; with @final (their counts no longer change) the values read are kept and the
 * keys deleted in one call, and the stacks of the keys left and the user stacks of
 * those taken are noted in @ids for forget_stacks().
 */
static int take_counts(struct prog_set *ps, struct bpf_map *map, size_t ksz,
		       sampler_select_fn select, bool final, sampler_drain_fn cb, void *ctx,
		       uint64_t *lost, struct stack_trace *user, struct stack_trace *kernel,
		       size_t *nr_taken, struct reap_ids *ids)
{
	int fd = bpf_map__fd(map);
	void *keys = NULL;
	struct count_key *key;
	const struct waker *w;
	__u64 *vals = NULL, value;
	size_t i, n = 0, nr_sel = 0, nr_deleted = 0;
	int err;

	if (!ps->kcache)
		ps->kcache = calloc(KSTACK_CACHE_SLOTS, sizeof(*ps->kcache)); /* NULL: no cache */
	err = read_counts(fd, ksz, &keys, &vals, &n);
	if (!err && select && final) {
		/* the selected first, in place (their values with them) */
		for (i = 0; i < n; i++) {
			key = key_at(keys, i, ksz);
			w = key_waker(key, ksz);
			if (!selected(select, ctx, key, w)) {
				reap_ids__keep(ids, key->user_stack);
				reap_ids__keep(ids, key->kernel_stack);
				/* a waker's user stack (its kernel stack stays anyway) */
				if (w)
					reap_ids__keep(ids, w->user_stack);
				continue;
			}
			memmove(key_at(keys, nr_sel, ksz), key, ksz);
			vals[nr_sel++] = vals[i];
		}
		n = nr_sel;
		nr_deleted = delete_read(fd, keys, n);
	}
	for (i = 0; i < n && !err; i++) {
		key = key_at(keys, i, ksz);
		w = key_waker(key, ksz);
		value = vals[i];
		if (select && i >= nr_deleted) {
			if ((!final && !selected(select, ctx, key, w)) ||
			    bpf_map_lookup_and_delete_elem(fd, key, &value))
				continue;
		}
		(*nr_taken)++;
		if (select && final) {
			reap_ids__forget(ids, key->user_stack);
			/* a waker's too: deleted unless a key left uses it, as the key's are */
			if (w)
				reap_ids__forget(ids, w->user_stack);
		}
		if (ps->aging) {
			used_add(ps, key->user_stack);
			used_add(ps, key->kernel_stack);
			if (w) {
				used_add(ps, w->user_stack);
				used_add(ps, w->kernel_stack);
			}
		}
		err = drain_one(ps, key, w, value, cb, ctx, lost, user, kernel);
	}
	free(keys);
	free(vals);
	return err;
}

/* take_counts() over every counts map of every program set, with the buffers it needs;
 * with @select and @final, the user stacks no key left uses are deleted after each set. */
static int take_all(struct sampler *s, sampler_select_fn select, bool final, sampler_drain_fn cb,
		    void *ctx, uint64_t *lost, uint64_t *lost_ns, size_t *nr_taken,
		    size_t *nr_forgot)
{
	struct stack_trace *user = NULL, *kernel = NULL;
	struct reap_ids ids = {};
	struct bpf_map *maps[MAX_COUNT_MAPS];
	size_t ksz[MAX_COUNT_MAPS];
	int err = 0, i, m, nr_maps;

	*nr_taken = 0;
	*nr_forgot = 0;
	user = malloc(sizeof(*user));
	kernel = malloc(sizeof(*kernel));
	if (!user || !kernel) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < s->nr_sets && !err; i++) {
		struct prog_set *ps = &s->sets[i];

		ids.nr_kept = ids.nr_gone = 0;
		ids.failed = false;
		nr_maps = count_maps(ps, maps, ksz);
		for (m = 0; m < nr_maps && !err; m++)
			err = take_counts(ps, maps[m], ksz[m], select, final, cb, ctx,
					  ps->offcpu ? lost_ns : lost, user, kernel, nr_taken,
					  &ids);
		if (!err && select && final && !ids.failed)
			*nr_forgot += forget_stacks(bpf_map__fd(ps->stacks), ids.kept, ids.nr_kept,
						    ids.gone, ids.nr_gone);
	}
cleanup:
	free(ids.kept);
	free(ids.gone);
	free(user);
	free(kernel);
	return err;
}

int sampler__reap(struct sampler *s, sampler_select_fn select, bool final, sampler_drain_fn cb,
		  void *ctx, uint64_t *lost, uint64_t *lost_ns, size_t *nr_reaped,
		  size_t *nr_forgot)
{
	return take_all(s, select, final, cb, ctx, lost, lost_ns, nr_reaped, nr_forgot);
}

/* Notes the stacks of every key now in the counts map @fd (keys of @ksz bytes) as used. */
static void note_keys(struct prog_set *ps, int fd, size_t ksz)
{
	struct wake_key key, next;
	const struct waker *w;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		memcpy(&key, &next, ksz);
		prev = &key;
		used_add(ps, key.key.user_stack);
		used_add(ps, key.key.kernel_stack);
		w = key_waker(&key.key, ksz);
		if (w) {
			used_add(ps, w->user_stack);
			used_add(ps, w->kernel_stack);
		}
	}
	if (errno != ENOENT)
		ps->used_lost = true; /* not all read: delete nothing */
}

/*
 * sampler__age_stacks() for one program set: deletes the stacks used in the last interval
 * and not in this one, and keeps this one's for the next.
 */
static size_t age_set(struct prog_set *ps)
{
	struct bpf_map *maps[MAX_COUNT_MAPS];
	size_t i, nr_now, nr_old, nr_deleted = 0, cap, ksz[MAX_COUNT_MAPS];
	int m, nr_maps = count_maps(ps, maps, ksz);
	__u64 *swap;

	/* keys added since the counts were read (while they were symbolized): theirs stay */
	for (m = 0; m < nr_maps; m++)
		note_keys(ps, bpf_map__fd(maps[m]), ksz[m]);
	/* this interval's, each once: the next one's last interval */
	nr_now = reap__sort_unique(ps->used, ps->nr_used);
	if (!ps->used_lost) {
		nr_old = reap__unused(ps->used, nr_now, ps->used_prev, ps->nr_used_prev);
		nr_deleted = delete_stacks(bpf_map__fd(ps->stacks), ps->used_prev, nr_old);
		/* an id may come back with other contents (a collision's probe): not cached */
		for (i = 0; ps->kcache && i < nr_old; i++) {
			struct kstack_slot *slot =
				&ps->kcache[ps->used_prev[i] % KSTACK_CACHE_SLOTS];

			if (slot->id == ps->used_prev[i])
				slot->id = 0;
		}
	}
	swap = ps->used_prev;
	cap = ps->cap_prev;
	ps->used_prev = ps->used;
	ps->cap_prev = ps->cap_used;
	/* stacks this interval used but not all noted: none is deleted at the next */
	ps->nr_used_prev = ps->used_lost ? 0 : nr_now;
	ps->used = swap;
	ps->cap_used = cap;
	ps->nr_used = 0;
	ps->used_lost = false;
	return nr_deleted;
}

int sampler__age_stacks(struct sampler *s, size_t *nr_deleted)
{
	int i;

	*nr_deleted = 0;
	for (i = 0; i < s->nr_sets; i++)
		if (s->sets[i].aging)
			*nr_deleted += age_set(&s->sets[i]);
	return 0;
}

void sampler__end_at(struct sampler *s, uint64_t ns)
{
	s->end_at_ns = ns;
	if (s->on)
		s->on->bss->stop_at_ns = ns;
	if (s->off)
		s->off->bss->stop_at_ns = ns;
	if (s->ev)
		s->ev->bss->stop_at_ns = ns;
}

uint64_t sampler__stop(struct sampler *s)
{
	uint64_t now, stop = __atomic_load_n(&s->stop_ns, __ATOMIC_ACQUIRE);

	if (stop)
		return stop;
	if (s->on)
		s->on->bss->stopped = true;
	if (s->off)
		s->off->bss->stopped = true;
	if (s->ev)
		s->ev->bss->stopped = true;
	/* past the programs' own deadline, they stopped there */
	now = timing__now_ns();
	stop = s->end_at_ns && now > s->end_at_ns ? s->end_at_ns : now;
	__atomic_store_n(&s->stop_ns, stop, __ATOMIC_RELEASE);
	return stop;
}

/* Now, or when sampling stopped (bpf_ktime_get_ns() is CLOCK_MONOTONIC). */
static uint64_t end_ns(const struct sampler *s)
{
	uint64_t stop = __atomic_load_n(&s->stop_ns, __ATOMIC_ACQUIRE);

	return stop ? stop : timing__now_ns();
}

/*
 * The parts of the interval @st still open at @now_ns: its length and, when it was woken
 * (struct offcpu_start), the part of it since the wakeup.
 */
static void open_parts(const struct offcpu_start *st, uint64_t now_ns, uint64_t *delta,
		       uint64_t *runq)
{
	*delta = now_ns - st->ts;
	*runq = st->wake >= st->ts && st->wake < now_ns ? now_ns - st->wake : 0;
}

/* The whole interval of @st up to @now_ns, from its switch-out (--interval cuts aside):
 * what --min-block and --max-block judge. */
static uint64_t open_whole(const struct offcpu_start *st, uint64_t now_ns)
{
	return now_ns - (st->first && st->first <= st->ts ? st->first : st->ts);
}

void sampler__kunwind_fds(const struct sampler *s, int *rows_fd, int *procs_fd)
{
	struct bpf_map *rows = NULL, *procs = NULL;

	if (s->on) {
		rows = s->on->maps.kunwind_rows;
		procs = s->on->maps.kunwind_procs;
	} else if (s->off) {
		rows = s->off->maps.kunwind_rows;
		procs = s->off->maps.kunwind_procs;
	}

	*rows_fd = rows && s->opts.unwind_kernel ? bpf_map__fd(rows) : -1;
	*procs_fd = procs && s->opts.unwind_kernel ? bpf_map__fd(procs) : -1;
}

int sampler__cut_intervals(struct sampler *s, uint64_t at_ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u64 args[1] = { at_ns };
	int err;

	if (!s->off || !bpf_program__autoload(s->off->progs.offcpu_cut))
		return -ENOENT;
	opts.ctx_in = args;
	opts.ctx_size_in = sizeof(args);
	err = bpf_prog_test_run_opts(bpf_program__fd(s->off->progs.offcpu_cut), &opts);
	return err ? -errno : 0;
}

/* The program set of the off-CPU program, or NULL. */
static struct prog_set *off_set(struct sampler *s)
{
	int i;

	for (i = 0; i < s->nr_sets; i++)
		if (s->sets[i].offcpu)
			return &s->sets[i];
	return NULL;
}

/*
 * offwake: the blocked part @value of the open interval @st at @now_ns to @cb, under its
 * waker as the BPF program's switch-in would (wake_count_add()): the sched_waking since
 * its last switch-in, else KEY_NO_WAKER (not woken yet, or its waker's stacks gone).
 */
static int open_waker(struct sampler *s, const struct offcpu_start *st, uint64_t now_ns,
		      uint64_t value, sampler_drain_fn cb, void *ctx)
{
	struct prog_set *ps = off_set(s);
	struct wake_key wk = {.key = st->key};
	bool woken = st->waking && st->waking > st->last_in && st->waking <= now_ns;
	int err;

	if (!ps)
		return -ENOENT;
	if (woken && (st->waker.kernel_stack || (st->waker.flags & KEY_KERNEL_MISSED))) {
		wk.key.flags |= KEY_WAKER;
		wk.waker = st->waker;
	} else {
		wk.key.flags |= KEY_NO_WAKER;
	}
	err = waker_set(ps, key_waker(&wk.key, sizeof(wk)));
	if (err == -ENOENT) {
		/* its stacks are gone */
		wk.key.flags = (wk.key.flags & ~KEY_WAKER) | KEY_NO_WAKER;
		err = 0;
	}
	if (err)
		return err;
	err = cb(ctx, true, &wk.key, value, st->user.nr ? &st->user : NULL,
		 st->kernel.nr ? &st->kernel : NULL);
	ps->waker = NULL;
	return err;
}

/* Threads still off CPU: their interval ends now, or at the stop. */
static int drain_open_intervals(struct sampler *s, sampler_drain_fn cb, void *ctx)
{
	int fd = bpf_map__fd(s->off->maps.start);
	struct offcpu_start *st;
	struct count_key key;
	__u32 tid, next, *prev = NULL;
	uint64_t now_ns, delta, runq, whole;
	int err = 0;

	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	now_ns = end_ns(s);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		tid = next;
		prev = &tid;
		/* copied slots: their stacks are in user space (sampler__open_interval) */
		if (bpf_map_lookup_elem(fd, &tid, st) || !st->ts || st->ts > now_ns ||
		    (st->key.flags & KEY_OFFCPU_COPY))
			continue;
		open_parts(st, now_ns, &delta, &runq);
		whole = open_whole(st, now_ns);
		if (whole < s->opts.min_block_ns || whole > s->opts.max_block_ns ||
		    st->user.nr > SCORCH_MAX_STACK_DEPTH || st->kernel.nr > SCORCH_MAX_STACK_DEPTH)
			continue;
		key = st->key;
		if (delta > runq && s->opts.offwake && !(key.flags & KEY_RUNQUEUE))
			err = open_waker(s, st, now_ns, delta - runq, cb, ctx);
		else if (delta > runq)
			err = cb(ctx, true, &key, delta - runq, st->user.nr ? &st->user : NULL,
				 st->kernel.nr ? &st->kernel : NULL);
		/* woken, not switched in yet */
		key.flags |= KEY_RUNQUEUE;
		if (!err && runq && s->opts.with_runqueue)
			err = cb(ctx, true, &key, runq, st->user.nr ? &st->user : NULL,
				 st->kernel.nr ? &st->kernel : NULL);
		if (err)
			break;
	}
	free(st);
	return err;
}

/* --latency: calls still open at the end count until then, under their entry's stacks. */
static int drain_open_calls(struct sampler *s, sampler_drain_fn cb, void *ctx)
{
	int fd = bpf_map__fd(s->ev->maps.inside), sfd = bpf_map__fd(s->ev->maps.stacks);
	struct stack_trace *user = NULL, *kernel = NULL;
	struct latency_slot slot;
	__u32 tid, next, *prev = NULL;
	uint64_t now_ns = end_ns(s);
	int err = 0;

	user = malloc(sizeof(*user));
	kernel = malloc(sizeof(*kernel));
	if (!user || !kernel) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		tid = next;
		prev = &tid;
		/* copies (--unwind dwarf): their stacks are in user space (sampler__open_interval) */
		if (bpf_map_lookup_elem(fd, &tid, &slot) || !slot.ts || slot.ts > now_ns ||
		    (slot.key.flags & KEY_OFFCPU_COPY))
			continue;
		if ((slot.key.user_stack && lookup_stack(sfd, slot.key.user_stack, user)) ||
		    (slot.key.kernel_stack && lookup_stack(sfd, slot.key.kernel_stack, kernel)))
			continue;
		err = cb(ctx, false, &slot.key, now_ns - slot.ts,
			 slot.key.user_stack ? user : NULL, slot.key.kernel_stack ? kernel : NULL);
	}
cleanup:
	free(user);
	free(kernel);
	return err;
}

int sampler__waker(struct sampler *s, const struct waker **w, const struct stack_trace **user,
		   const struct stack_trace **kernel)
{
	struct prog_set *ps = off_set(s);

	*w = NULL;
	*user = *kernel = NULL;
	if (!ps || !ps->waker)
		return -ENOENT;
	*w = ps->waker;
	*user = ps->have_wuser ? ps->wuser : NULL;
	*kernel = ps->have_wkernel ? ps->wkernel : NULL;
	return 0;
}

int sampler__set_stack_top(struct sampler *s, uint32_t tid, uint64_t key, uint64_t top)
{
	struct stack_top v = {.key = key, .top = top};
	int i, err = 0;

	for (i = 0; i < s->nr_sets; i++) {
		int fd = bpf_map__fd(s->sets[i].tops);

		if (top && bpf_map_update_elem(fd, &tid, &v, BPF_ANY))
			err = -errno;
		else if (!top && bpf_map_delete_elem(fd, &tid) && errno != ENOENT)
			err = -errno;
	}
	return err;
}

int sampler__seed_interval(struct sampler *s, uint32_t tid, const struct offcpu_start *st)
{
	if (!s->off)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(s->off->maps.start), &tid, st, BPF_NOEXIST))
		return errno == EEXIST ? -EEXIST : -errno;
	return 0;
}

int sampler__unseed_interval(struct sampler *s, uint32_t tid, uint64_t ts)
{
	struct offcpu_start *st;
	int fd, err = -ENOENT;

	if (!s->off)
		return -ENOENT;
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	fd = bpf_map__fd(s->off->maps.start);
	/* only the slot seeded: a switch-out since then owns it */
	if (!bpf_map_lookup_elem(fd, &tid, st) && st->ts && st->first == ts &&
	    !bpf_map_delete_elem(fd, &tid))
		err = 0;
	free(st);
	return err;
}

int sampler__open_interval(struct sampler *s, uint32_t tid, uint64_t ts, uint64_t *delta,
			   uint64_t *runq)
{
	struct offcpu_start *st;
	struct latency_slot slot;
	uint64_t now_ns;
	int err = 0;

	if (s->ev) {
		/* --latency --unwind dwarf: a call still open */
		now_ns = end_ns(s);
		if (bpf_map_lookup_elem(bpf_map__fd(s->ev->maps.inside), &tid, &slot) ||
		    slot.ts != ts || !(slot.key.flags & KEY_OFFCPU_COPY) || ts > now_ns)
			return -ENOENT;
		*delta = now_ns - ts;
		*runq = 0;
		return 0;
	}
	if (!s->off)
		return -ENOENT;
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	now_ns = end_ns(s);
	/* the copy is the switch-out's (@first); --interval cuts moved @ts since */
	if (bpf_map_lookup_elem(bpf_map__fd(s->off->maps.start), &tid, st) || !st->ts ||
	    st->first != ts || !(st->key.flags & KEY_OFFCPU_COPY) || st->ts > now_ns) {
		err = -ENOENT;
		goto cleanup;
	}
	open_parts(st, now_ns, delta, runq);
	if (open_whole(st, now_ns) < s->opts.min_block_ns ||
	    open_whole(st, now_ns) > s->opts.max_block_ns) {
		err = -ERANGE;
		goto cleanup;
	}
	if (!s->opts.with_runqueue) {
		*delta -= *runq; /* the blocked part only */
		*runq = 0;
	}
cleanup:
	free(st);
	return err;
}

int sampler__drain(struct sampler *s, sampler_drain_fn cb, void *ctx, uint64_t *lost,
		   uint64_t *lost_ns)
{
	size_t nr, nr_forgot;
	int err = take_all(s, NULL, false, cb, ctx, lost, lost_ns, &nr, &nr_forgot);

	if (!err && s->off)
		err = drain_open_intervals(s, cb, ctx);
	if (!err && s->ev && s->opts.event->latency)
		err = drain_open_calls(s, cb, ctx);
	return err;
}

/* Counter @k of every program set, each summed over the CPUs, added to *@val. */
static void stat_sum(struct sampler *s, __u32 k, __u64 *vals, int nr_cpus, uint64_t *val)
{
	int i;

	for (i = 0; i < s->nr_sets; i++) {
		if (!bpf_map_lookup_elem(bpf_map__fd(s->sets[i].stats), &k, vals))
			*val += percpu_sum(vals, nr_cpus);
	}
}

int sampler__stats(struct sampler *s, uint64_t *stats)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u64 *vals;
	__u32 k;

	if (nr_cpus < 0)
		return nr_cpus;
	memset(stats, 0, sizeof(*stats) * SCORCH_NR_STATS);
	vals = calloc(nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (k = 0; k < SCORCH_NR_STATS; k++)
		stat_sum(s, k, vals, nr_cpus, &stats[k]);
	free(vals);
	return 0;
}

int sampler__stat(struct sampler *s, enum scorch_stat k, uint64_t *val)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u64 *vals;

	*val = 0;
	if (nr_cpus < 0)
		return nr_cpus;
	vals = calloc(nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	stat_sum(s, k, vals, nr_cpus, val);
	free(vals);
	return 0;
}
