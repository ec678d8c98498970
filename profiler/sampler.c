// SPDX-License-Identifier: MIT
/* profiler: the on-CPU BPF program's lifecycle: open, size, load, attach, drain. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "profiler-private.h"
#include "oncpu.skel.h"

struct sampler {
	struct oncpu_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *pfds;
	int nr_links;
	int nr_attached; /* CPUs sampled, kept after detach for the summary */
	long freq;
	sampler_event_fn event_cb;
	void *event_ctx;
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void explain_load_error(int err)
{
	pr_err("cannot load the BPF program: %s\n", strerror(-err));
	if (err == -EPERM || err == -EACCES)
		pr_hint("run as root, or grant CAP_BPF and CAP_PERFMON\n");
	else if (err == -ENOENT || err == -ESRCH)
		pr_hint("the kernel needs BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y)\n");
	else
		pr_hint("rerun with -v to see the libbpf and verifier log\n");
}

int sampler__new(const struct sampler_opts *opts, struct sampler **out)
{
	struct sampler *s;
	uint32_t entries = opts->max_stacks ? opts->max_stacks : 65536;
	uint32_t nfilter = opts->nr_filter ? opts->nr_filter : 1;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->freq = opts->freq;
	s->skel = oncpu_bpf__open();
	if (!s->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s\n", strerror(errno));
		goto cleanup;
	}
	s->skel->rodata->user_only = opts->user_only;
	s->skel->rodata->kernel_only = opts->kernel_only;
	s->skel->rodata->include_idle = opts->include_idle;
	s->skel->rodata->filter_pid = opts->filter_pid;
	s->skel->rodata->filter_tid = opts->filter_tid;
	s->skel->rodata->follow_forks = opts->follow_forks;

	/*
	 * Preallocated maps: an on-demand (BPF_F_NO_PREALLOC) insert from the timer
	 * interrupt fails with -ENOMEM whenever the per-CPU allocation cache has not
	 * been refilled yet, which loses samples in bursts of new stacks. The cost is
	 * memory up front (about 1.1 KiB per stack entry), so record sizes the maps
	 * from frequency x duration x CPUs, within limits (--max-stacks overrides).
	 */
	bpf_map__set_max_entries(s->skel->maps.stacks, entries);
	bpf_map__set_max_entries(s->skel->maps.counts, entries);
	/* a followed command may fork many children */
	bpf_map__set_max_entries(s->skel->maps.pids, opts->follow_forks ? 65536 : nfilter);
	bpf_map__set_max_entries(s->skel->maps.tids, nfilter);
	bpf_map__set_max_entries(s->skel->maps.procs, 32768);
	bpf_program__set_autoload(s->skel->progs.oncpu_fork, opts->follow_forks);

	err = oncpu_bpf__load(s->skel);
	if (err) {
		explain_load_error(err);
		goto cleanup;
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
	ring_buffer__free(s->rb);
	oncpu_bpf__destroy(s->skel);
	free(s);
}

static int filter_add(int map_fd, pid_t id)
{
	__u32 key = id;
	__u8 one = 1;

	if (bpf_map_update_elem(map_fd, &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

int sampler__add_pid(struct sampler *s, pid_t pid)
{
	return filter_add(bpf_map__fd(s->skel->maps.pids), pid);
}

int sampler__add_tid(struct sampler *s, pid_t tid)
{
	return filter_add(bpf_map__fd(s->skel->maps.tids), tid);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size < sizeof(struct scorch_event) || !s->event_cb)
		return 0;
	s->event_cb(s->event_ctx, data);
	return 0;
}

/* Parses a CPU list such as "0-3,5" into a bool array of @nr entries. */
static int parse_cpu_list(const char *path, bool *online, int nr)
{
	char *buf = NULL, *p, *end;
	size_t len;
	long a, b;
	int err;

	err = file__read_bounded(AT_FDCWD, path, 64 * 1024, &buf, &len);
	if (err)
		return err;
	for (p = buf; *p && *p != '\n';) {
		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno || a < 0)
			goto bad;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || errno || b < a)
				goto bad;
		}
		for (; a <= b && a < nr; a++)
			online[a] = true;
		p = *end == ',' ? end + 1 : end;
		if (end == p && *p && *p != '\n')
			goto bad;
	}
	free(buf);
	return 0;
bad:
	free(buf);
	return -EINVAL;
}

int sampler__attach(struct sampler *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = s->freq,
	};
	int nr_cpus = libbpf_num_possible_cpus(), cpu, fd, err;
	bool *online = NULL;

	if (nr_cpus < 0)
		return nr_cpus;
	online = calloc(nr_cpus, sizeof(*online));
	if (!online)
		return -ENOMEM;
	err = parse_cpu_list("/sys/devices/system/cpu/online", online, nr_cpus);
	if (err) {
		free(online);
		pr_err("cannot read /sys/devices/system/cpu/online: %s\n", strerror(-err));
		return err;
	}
	s->links = calloc(nr_cpus, sizeof(*s->links));
	s->pfds = calloc(nr_cpus, sizeof(*s->pfds));
	if (!s->links || !s->pfds) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		if (!online[cpu])
			continue;
		fd = perf_event_open(&attr, -1, cpu);
		if (fd < 0) {
			err = -errno;
			if (err == -ENODEV) /* went offline meanwhile */
				continue;
			pr_err("cannot open a cpu-clock perf event on CPU %d: %s\n", cpu,
			       strerror(-err));
			if (err == -EACCES || err == -EPERM)
				pr_hint("run as root, or grant CAP_PERFMON (see kernel.perf_event_paranoid)\n");
			else if (err == -EINVAL)
				pr_hint("-F %ld may exceed kernel.perf_event_max_sample_rate\n", s->freq);
			else
				pr_hint("the kernel needs perf events (CONFIG_PERF_EVENTS)\n");
			goto cleanup;
		}
		s->links[s->nr_links] = bpf_program__attach_perf_event(s->skel->progs.oncpu_sample, fd);
		if (!s->links[s->nr_links]) {
			err = -errno;
			close(fd);
			pr_err("cannot attach the BPF program to CPU %d: %s\n", cpu, strerror(-err));
			goto cleanup;
		}
		s->pfds[s->nr_links++] = fd;
	}
	s->nr_attached = s->nr_links;
	if (!s->nr_links) {
		pr_err("no online CPU to sample\n");
		err = -ENODEV;
		goto cleanup;
	}
	if (s->skel->links.oncpu_fork == NULL &&
	    bpf_program__autoload(s->skel->progs.oncpu_fork)) {
		s->skel->links.oncpu_fork = bpf_program__attach(s->skel->progs.oncpu_fork);
		if (!s->skel->links.oncpu_fork) {
			err = -errno;
			pr_err("cannot attach to the sched_process_fork raw tracepoint: %s\n",
			       strerror(-err));
			goto cleanup;
		}
	}
	s->skel->links.oncpu_exec = bpf_program__attach(s->skel->progs.oncpu_exec);
	if (!s->skel->links.oncpu_exec) {
		err = -errno;
		pr_err("cannot attach to the sched_process_exec raw tracepoint: %s\n",
		       strerror(-err));
		goto cleanup;
	}
	err = 0;
cleanup:
	free(online);
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
		close(s->pfds[i]);
	}
	free(s->links);
	free(s->pfds);
	s->links = NULL;
	s->pfds = NULL;
	s->nr_links = 0;
	if (s->skel) {
		bpf_link__destroy(s->skel->links.oncpu_fork);
		s->skel->links.oncpu_fork = NULL;
		bpf_link__destroy(s->skel->links.oncpu_exec);
		s->skel->links.oncpu_exec = NULL;
	}
}

static int sampler_ring(struct sampler *s)
{
	if (s->rb)
		return 0;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), handle_event, s, NULL);
	if (!s->rb) {
		pr_err("cannot set up the BPF ring buffer: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

int sampler__event_fd(const struct sampler *s)
{
	if (sampler_ring((struct sampler *)s))
		return -1;
	return ring_buffer__epoll_fd(s->rb);
}

int sampler__consume(struct sampler *s, sampler_event_fn cb, void *ctx)
{
	int err = sampler_ring(s);

	if (err)
		return err;
	s->event_cb = cb;
	s->event_ctx = ctx;
	err = ring_buffer__consume(s->rb);
	return err < 0 ? err : 0;
}

static int lookup_stack(int fd, __u64 id, struct stack_trace *st)
{
	if (bpf_map_lookup_elem(fd, &id, st))
		return -errno;
	if (st->nr > SCORCH_MAX_STACK_DEPTH)
		return -EINVAL;
	return 0;
}

int sampler__drain(struct sampler *s, sampler_drain_fn cb, void *ctx, uint64_t *lost)
{
	int counts_fd = bpf_map__fd(s->skel->maps.counts);
	int stacks_fd = bpf_map__fd(s->skel->maps.stacks);
	struct count_key key, next, *prev = NULL;
	struct stack_trace *user = NULL, *kernel = NULL;
	__u64 count;
	int err = 0;

	user = malloc(sizeof(*user));
	kernel = malloc(sizeof(*kernel));
	if (!user || !kernel) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (!bpf_map_get_next_key(counts_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(counts_fd, &key, &count))
			continue; /* deleted meanwhile: nothing deletes, so never */
		if ((key.user_stack && lookup_stack(stacks_fd, key.user_stack, user)) ||
		    (key.kernel_stack && lookup_stack(stacks_fd, key.kernel_stack, kernel))) {
			*lost += count;
			continue;
		}
		err = cb(ctx, &key, count, key.user_stack ? user : NULL,
			 key.kernel_stack ? kernel : NULL);
		if (err)
			goto cleanup;
	}
	if (errno != ENOENT) {
		err = -errno;
		pr_err("cannot iterate the BPF counts map: %s\n", strerror(errno));
	}
cleanup:
	free(user);
	free(kernel);
	return err;
}

int sampler__stats(struct sampler *s, uint64_t *stats)
{
	int nr_cpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.stats);
	__u64 *vals;
	__u32 i;
	int c;

	memset(stats, 0, sizeof(*stats) * SCORCH_NR_STATS);
	vals = calloc(nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < SCORCH_NR_STATS; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (c = 0; c < nr_cpus; c++)
			stats[i] += vals[c];
	}
	free(vals);
	return 0;
}
