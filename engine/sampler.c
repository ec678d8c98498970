// SPDX-License-Identifier: MIT
/* profiler: the BPF programs' lifecycle: open, size maps, load, attach, drain. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "engine.h"
#include "sampler.h"
#include "timing.h"
#include "sampler-private.h"
#include "oncpu.skel.h"
#include "offcpu.skel.h"
#include "event.skel.h"

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
		.exec = (skel)->progs.follow_exec,                                                 \
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
		(skel)->rodata->fp_depth = (o)->fp_depth;                                          \
		(skel)->rodata->max_user_depth = (o)->user_depth;                                  \
		(skel)->rodata->kunwind_wanted = (o)->unwind_kernel || (o)->python_walk;                               \
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
	bpf_program__set_autoload(ps->exec, o->follow_forks);
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
	bool walk = o->unwind_kernel || o->python_walk;

	bpf_map__set_max_entries(rows, walk ? o->kunwind_rows : 1);
	bpf_map__set_max_entries(procs, walk ? o->kunwind_procs : 1);
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
	skel->rodata->unwind_kernel = opts->unwind_kernel || opts->python_walk;
	skel->rodata->kunwind_python_only = opts->python_walk;
	size_kunwind(skel->maps.kunwind_rows, skel->maps.kunwind_procs, opts);
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
		s->on->rodata->unwind_kernel = opts->unwind_kernel || opts->python_walk;
		s->on->rodata->kunwind_python_only = opts->python_walk;
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
		s->off->rodata->chain_depth =
			opts->chain_depth > 1 ? MIN(opts->chain_depth, SCORCH_CHAIN_MAX) : 1;
		_Static_assert(sizeof(s->off->rodata->irq_text) == sizeof(opts->irq_text),
			       "the BPF program's interrupt text ranges");
		memcpy(s->off->rodata->irq_text, opts->irq_text, sizeof(opts->irq_text));
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
		s->sets[s->nr_sets].wake_ksz = WAKE_KEY_SIZE(s->off->rodata->chain_depth);
		err = bpf_map__set_key_size(s->off->maps.wake_counts, s->sets[s->nr_sets].wake_ksz);
		if (err) {
			pr_err("cannot size the off-wake counts map: %s\n", strerror(-err));
			goto cleanup;
		}
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
		for (int l = 0; l < SCORCH_CHAIN_MAX; l++) {
			free(s->sets[i].wakers[l].user);
			free(s->sets[i].wakers[l].kernel);
		}
		free(s->sets[i].used);
		free(s->sets[i].used_prev);
	}
	for (int i = 0; i < s->nr_rbs; i++)
		ring_buffer__free(s->rbs[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->stats_fd > 0)
		close(s->stats_fd);
	oncpu_bpf__destroy(s->on);
	offcpu_bpf__destroy(s->off);
	event_bpf__destroy(s->ev);
	free(s->probe_ids);
	free(s);
}

static int filter_add(struct sampler *s, bool tid, pid_t id, __u8 how)
{
	__u32 key = id;
	int i;

	if (s->ev && !s->opts.follow_forks) {
		if (array__grow((void **)&s->probe_ids, &s->cap_probe_ids,
				(size_t)s->nr_probe_ids + 1, sizeof(*s->probe_ids)))
			return -ENOMEM;
		s->probe_ids[s->nr_probe_ids++] = id;
	}
	for (i = 0; i < s->nr_sets; i++) {
		struct bpf_map *m = tid ? s->sets[i].tids : s->sets[i].pids;

		if (bpf_map_update_elem(bpf_map__fd(m), &key, &how, BPF_ANY))
			return -errno;
	}
	return 0;
}

int sampler__add_pid(struct sampler *s, pid_t pid)
{
	return filter_add(s, false, pid, SCORCH_PID_FOLLOWED);
}

int sampler__add_pid_at_exec(struct sampler *s, pid_t pid)
{
	return filter_add(s, false, pid, SCORCH_PID_AT_EXEC);
}

int sampler__add_tid(struct sampler *s, pid_t tid)
{
	return filter_add(s, true, tid, SCORCH_PID_FOLLOWED);
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
	int err;

	s->clock_first = s->nr_links;
	err = attach_per_cpu(s, s->on->progs.oncpu_sample, &attr, "a cpu-clock");
	s->nr_clock = err ? 0 : s->nr_links - s->clock_first;
	return err;
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
	/* fork and exec first: a child forked while the rest attaches is followed already */
	for (i = 0; i < s->nr_sets && !err; i++) {
		struct prog_set *ps = &s->sets[i];

		if (bpf_program__autoload(ps->fork))
			err = attach_tracepoint(ps->fork, &ps->fork_link, "sched_process_fork");
		if (!err && bpf_program__autoload(ps->exec))
			err = attach_tracepoint(ps->exec, &ps->exec_link, "sched_process_exec");
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
	/*
	 * exits last: a raw tracepoint runs its programs in the order they were attached, and
	 * proc_exit takes a followed child out of the PID filter, which an --event program on
	 * sched_process_exit must still see it in
	 */
	for (i = 0; i < s->nr_sets && !err; i++)
		err = attach_tracepoint(s->sets[i].exit, &s->sets[i].exit_link,
					"sched_process_exit");
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
		bpf_link__destroy(s->sets[i].exec_link);
		s->sets[i].fork_link = s->sets[i].exit_link = s->sets[i].exec_link = NULL;
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
	uint64_t t0;

	if (err)
		return err;
	s->event_cb = cb;
	s->sample_cb = sample_cb;
	s->event_ctx = ctx;
	s->deadline_ns = budget_ns ? timing__now_ns() + budget_ns : 0;
	/* the governor's measure of what samples cost in scorch (--unwind dwarf) */
	t0 = s->opts.unwind_dwarf ? timing__clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
	err = consume_rings(s);
	s->deadline_ns = 0;
	if (s->opts.unwind_dwarf)
		__atomic_add_fetch(&s->consume_ns, timing__clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0,
				   __ATOMIC_RELAXED);
	return err;
}

uint64_t sampler__consume_ns(const struct sampler *s)
{
	return __atomic_load_n(&s->consume_ns, __ATOMIC_RELAXED);
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
	int i;

	if (stop)
		return stop;
	if (s->on)
		s->on->bss->stopped = true;
	if (s->off)
		s->off->bss->stopped = true;
	if (s->ev)
		s->ev->bss->stopped = true;
	/* and the perf events' interrupts themselves: at 100 kHz on every CPU they cost
	 * the machine more than the programs' early return saves */
	for (i = 0; i < s->nr_links; i++)
		if (s->pfds[i] >= 0 && ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0))
			pr_debug("cannot disable perf event %d at the stop: %s\n", i,
				 strerror(errno));
	/* past the programs' own deadline, they stopped there */
	now = timing__now_ns();
	stop = s->end_at_ns && now > s->end_at_ns ? s->end_at_ns : now;
	__atomic_store_n(&s->stop_ns, stop, __ATOMIC_RELEASE);
	return stop;
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
	} else if (s->ev) {
		rows = s->ev->maps.kunwind_rows;
		procs = s->ev->maps.kunwind_procs;
	}

	bool walk = s->opts.unwind_kernel || s->opts.python_walk;

	*rows_fd = rows && walk ? bpf_map__fd(rows) : -1;
	*procs_fd = procs && walk ? bpf_map__fd(procs) : -1;
}

int sampler__set_period_mult(struct sampler *s, uint32_t mult)
{
	uint64_t period = period_ns(s->freq) * (mult ? mult : 1);
	int i, err = 0;

	if (!s->on || !s->nr_clock)
		return -EOPNOTSUPP;
	/* each CPU's timer takes the new period at its next expiry; the weight follows
	 * at once: a period or so per CPU is counted at the other weight */
	for (i = s->clock_first; i < s->clock_first + s->nr_clock && !err; i++) {
		if (ioctl(s->pfds[i], PERF_EVENT_IOC_PERIOD, &period))
			err = -errno;
	}
	if (err) {
		pr_debug("cannot set the cpu-clock period to %" PRIu64 " ns: %s\n", period,
			 strerror(-err));
		return err;
	}
	s->on->bss->period_mult = mult;
	return 0;
}

/* Adds the run time the kernel measured of @obj's loaded programs: @clock's to
 * @clock_ns (its runs to @clock_runs), the others' to @other_ns. */
static void obj_run_time(struct bpf_object *obj, const struct bpf_program *clock,
			 uint64_t *clock_ns, uint64_t *clock_runs, uint64_t *other_ns)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		if (prog == clock) {
			*clock_ns += info.run_time_ns;
			*clock_runs += info.run_cnt;
		} else {
			*other_ns += info.run_time_ns;
		}
	}
}

int sampler__enable_run_stats(struct sampler *s)
{
	if (s->stats_fd > 0)
		return 0;
	s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (s->stats_fd < 0) {
		int err = -errno;

		s->stats_fd = 0;
		return err;
	}
	return 0;
}

void sampler__run_time(const struct sampler *s, uint64_t *clock_ns, uint64_t *clock_runs,
		       uint64_t *other_ns)
{
	*clock_ns = *clock_runs = *other_ns = 0;
	if (s->on)
		obj_run_time(s->on->obj, s->on->progs.oncpu_sample, clock_ns, clock_runs, other_ns);
	if (s->off)
		obj_run_time(s->off->obj, NULL, clock_ns, clock_runs, other_ns);
	if (s->ev)
		obj_run_time(s->ev->obj, NULL, clock_ns, clock_runs, other_ns);
}
