// SPDX-License-Identifier: MIT
/* profiler: host probes: what this kernel and these privileges allow (scorch check, preflight). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "engine.h"
#include "profile.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

#define CAP_SYS_ADMIN_BIT	   21
#define CAP_SYS_PTRACE_BIT	   19
#define CAP_PERFMON_BIT		   38
#define CAP_BPF_BIT		   39
#define CAP_CHECKPOINT_RESTORE_BIT 40

struct probe_def {
	const char *name;
	uint32_t need;
	void (*fn)(struct probe_result *res, const struct probe_def *def);
	int arg;	  /* prog/map type, helper id, sysctl index... */
	const char *what; /* for helpers and tracepoints: the name probed */
	bool bpf;	  /* loads BPF: meaningless without CAP_BPF (libbpf then says "no") */
};

static void set(struct probe_result *res, enum probe_status st, const char *hint, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static void set(struct probe_result *res, enum probe_status st, const char *hint, const char *fmt,
		...)
{
	va_list ap;

	res->status = st;
	va_start(ap, fmt);
	vsnprintf(res->detail, sizeof(res->detail), fmt, ap);
	va_end(ap);
	snprintf(res->hint, sizeof(res->hint), "%s", hint ? hint : "");
}

/* The effective capability set, or 0 with *ok false when it cannot be read. */
static uint64_t cap_eff(bool *ok)
{
	char *buf = NULL, *line;
	uint64_t eff = 0;
	size_t len;

	*ok = false;
	if (file__read_bounded(AT_FDCWD, "/proc/self/status", 1 << 20, &buf, &len))
		return 0;
	line = strstr(buf, "\nCapEff:");
	if (line && sscanf(line + 8, "%" SCNx64, &eff) == 1)
		*ok = true;
	free(buf);
	return eff;
}

static bool has_cap(uint64_t eff, int bit)
{
	return (eff >> bit) & 1;
}

/* Root, or CAP_BPF + CAP_PERFMON (CAP_SYS_ADMIN on kernels before 5.8). */
static bool privileged(void)
{
	bool ok;
	uint64_t eff = cap_eff(&ok);

	if (!ok)
		return geteuid() == 0;
	return (has_cap(eff, CAP_BPF_BIT) && has_cap(eff, CAP_PERFMON_BIT)) ||
	       has_cap(eff, CAP_SYS_ADMIN_BIT);
}

static void probe_caps(struct probe_result *res, const struct probe_def *def)
{
	static const struct {
		int bit;
		const char *name;
	} caps[] = {
		{CAP_SYS_ADMIN_BIT, "CAP_SYS_ADMIN"},
		{CAP_BPF_BIT, "CAP_BPF"},
		{CAP_PERFMON_BIT, "CAP_PERFMON"},
		{CAP_SYS_PTRACE_BIT, "CAP_SYS_PTRACE"},
	};
	char names[128] = "";
	bool ok;
	uint64_t eff = cap_eff(&ok);
	size_t i, n = 0;

	res->value = geteuid();
	if (!ok) {
		if (geteuid() == 0)
			set(res, PROBE_OK, NULL, "euid 0 (CapEff unreadable in /proc/self/status)");
		else
			set(res, PROBE_MISSING, "run it with sudo",
			    "recording needs root (CAP_BPF and CAP_PERFMON): euid %u and "
			    "/proc/self/status unreadable",
			    geteuid());
		return;
	}
	for (i = 0; i < ARRAY_SIZE(caps); i++) {
		if (has_cap(eff, caps[i].bit))
			n += snprintf(names + n, sizeof(names) - n, "%s%s", n ? " " : "",
				      caps[i].name);
	}
	if (!privileged()) {
		set(res, PROBE_MISSING,
		    "run it with sudo, or grant CAP_BPF and CAP_PERFMON (plus CAP_SYS_PTRACE to "
		    "name other users' processes)",
		    "recording needs root (CAP_BPF and CAP_PERFMON): euid %u, effective: %s",
		    geteuid(), n ? names : "none of them");
		return;
	}
	if (!has_cap(eff, CAP_SYS_PTRACE_BIT) || !has_cap(eff, CAP_SYS_ADMIN_BIT)) {
		set(res, PROBE_DEGRADED,
		    "add CAP_SYS_PTRACE and CAP_SYS_ADMIN (or run as root) to symbolize every "
		    "process",
		    "euid %u, effective: %s; without CAP_SYS_PTRACE and CAP_SYS_ADMIN the maps and "
		    "files of other users' processes cannot be read ([unknown] frames)",
		    geteuid(), names);
		return;
	}
	set(res, PROBE_OK, NULL, "euid %u, effective: %s", geteuid(), names);
}

/* Reads a sysctl under /proc/sys as a long. Returns 0 or -errno. */
static int read_sysctl(const char *path, long *out)
{
	char *buf = NULL;
	size_t len;
	int err;

	err = file__read_bounded(AT_FDCWD, path, 4096, &buf, &len);
	if (!err) {
		buf[strcspn(buf, "\n")] = '\0';
		err = parse__long(buf, LONG_MIN, LONG_MAX, out);
	}
	free(buf);
	return err;
}

static bool sysctl_probe(struct probe_result *res, const char *path)
{
	int err = read_sysctl(path, &res->value);

	if (err) {
		res->value = -1;
		set(res, PROBE_MISSING, "the kernel needs perf events (CONFIG_PERF_EVENTS)",
		    "cannot read %s: %s", path, strerror(-err));
		return false;
	}
	return true;
}

static void probe_paranoid(struct probe_result *res, const struct probe_def *def)
{
	if (!sysctl_probe(res, "/proc/sys/kernel/perf_event_paranoid"))
		return;
	if (privileged())
		set(res, PROBE_OK, NULL, "%ld (root and CAP_PERFMON are not bound by it)",
		    res->value);
	else if (res->value > 1)
		set(res, PROBE_MISSING,
		    "scorch needs CAP_PERFMON whatever its value: run it with sudo",
		    "%ld: CPU-wide perf events are refused to unprivileged users", res->value);
	else
		set(res, PROBE_OK, NULL, "%ld", res->value);
}

static void probe_max_rate(struct probe_result *res, const struct probe_def *def)
{
	if (!sysctl_probe(res, "/proc/sys/kernel/perf_event_max_sample_rate"))
		return;
	/* the kernel lowers it by itself when sampling interrupts take too long */
	if (res->value < 99)
		set(res, PROBE_MISSING, "raise it: sysctl kernel.perf_event_max_sample_rate=1000",
		    "%ld Hz: below record's default -F 99", res->value);
	else if (res->value < 999)
		set(res, PROBE_DEGRADED, "raise it: sysctl kernel.perf_event_max_sample_rate=1000",
		    "%ld Hz: -F above it is refused", res->value);
	else
		set(res, PROBE_OK, NULL, "%ld Hz: the highest -F", res->value);
}

static void probe_max_stack(struct probe_result *res, const struct probe_def *def)
{
	if (!sysctl_probe(res, "/proc/sys/kernel/perf_event_max_stack"))
		return;
	if (res->value < SCORCH_MAX_STACK_DEPTH)
		set(res, PROBE_DEGRADED, "raise it: sysctl kernel.perf_event_max_stack=127",
		    "%ld frames: deeper stacks are cut and start with [truncated]", res->value);
	else
		set(res, PROBE_OK, NULL, "%ld frames (scorch walks at most %d)", res->value,
		    SCORCH_MAX_STACK_DEPTH);
}

static void probe_unpriv_bpf(struct probe_result *res, const struct probe_def *def)
{
	if (read_sysctl("/proc/sys/kernel/unprivileged_bpf_disabled", &res->value)) {
		res->value = -1;
		set(res, PROBE_OK, NULL, "absent (not needed: scorch runs BPF with CAP_BPF)");
		return;
	}
	set(res, PROBE_OK, NULL, "%ld: %s (not limiting: scorch runs BPF with CAP_BPF)", res->value,
	    res->value ? "unprivileged BPF disabled" : "unprivileged BPF allowed");
}

static void probe_btf(struct probe_result *res, const struct probe_def *def)
{
	struct stat st;

	if (stat("/sys/kernel/btf/vmlinux", &st) || access("/sys/kernel/btf/vmlinux", R_OK)) {
		set(res, PROBE_MISSING, "scorch needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		    "this kernel has no BTF (/sys/kernel/btf/vmlinux): %s", strerror(errno));
		return;
	}
	res->value = st.st_size;
	set(res, PROBE_OK, NULL, "/sys/kernel/btf/vmlinux (%.1f MiB)", st.st_size / 1048576.0);
}

/* A libbpf_probe_*() answer: 1 yes, 0 no, -errno could not tell. */
static void libbpf_answer(struct probe_result *res, int ret, const char *what, const char *hint)
{
	if (ret == 1)
		set(res, PROBE_OK, NULL, "%s: loadable", what);
	else if (ret == -EPERM || ret == -EACCES)
		set(res, PROBE_SKIPPED, "run 'sudo scorch check' to probe BPF",
		    "%s: not checked: loading BPF needs CAP_BPF", what);
	else if (ret == 0)
		set(res, PROBE_MISSING, hint, "%s: not supported by this kernel", what);
	else
		set(res, PROBE_MISSING, hint, "%s: cannot probe: %s", what, strerror(-ret));
}

static void probe_prog_type(struct probe_result *res, const struct probe_def *def)
{
	const char *hint = NULL;

	if (def->need & PROBE_NEED_UPROBE)
		hint = "--event uprobe, uretprobe and usdt need BPF kprobe programs "
		       "(CONFIG_BPF_EVENTS, CONFIG_UPROBE_EVENTS)";
	else if (def->need)
		hint = "the kernel needs CONFIG_BPF_EVENTS (BPF programs on perf events and raw "
		       "tracepoints)";
	libbpf_answer(res, libbpf_probe_bpf_prog_type(def->arg, NULL), def->what, hint);
	if (res->status == PROBE_OK && !def->need)
		snprintf(res->detail + strlen(res->detail),
			 sizeof(res->detail) - strlen(res->detail), " (not used by scorch)");
}

/*
 * libbpf 1.1 cannot probe tracing programs (they need an attach target): load a
 * tp_btf program for sched_switch, the kind that would read the next task's stack.
 */
static void probe_tracing(struct probe_result *res, const struct probe_def *def)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	struct btf *btf = btf__load_vmlinux_btf();
	int id, fd;

	if (!btf) {
		set(res, PROBE_MISSING, NULL, "%s: not checked without BTF", def->what);
		return;
	}
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	btf__free(btf);
	if (id <= 0) {
		set(res, PROBE_MISSING, NULL, "%s: no btf_trace_sched_switch in the kernel BTF",
		    def->what);
		return;
	}
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "scorch_probe", "GPL", insns, ARRAY_SIZE(insns),
			   &opts);
	if (fd >= 0)
		close(fd);
	libbpf_answer(res,
		      fd >= 0					   ? 1
		      : fd == -EINVAL || fd == -524 /* ENOTSUPP */ ? 0
								   : fd,
		      def->what, NULL);
	if (res->status == PROBE_OK)
		snprintf(res->detail + strlen(res->detail),
			 sizeof(res->detail) - strlen(res->detail), " (not used by scorch)");
}

static void probe_map_type(struct probe_result *res, const struct probe_def *def)
{
	libbpf_answer(res, libbpf_probe_bpf_map_type(def->arg, NULL), def->what,
		      def->need ? "ring buffers need Linux 5.8 or later" : NULL);
	if (res->status == PROBE_OK && !def->need)
		snprintf(res->detail + strlen(res->detail),
			 sizeof(res->detail) - strlen(res->detail),
			 " (not used: stacks are kept in a hash map and compared on a collision)");
}

static void probe_helper(struct probe_result *res, const struct probe_def *def)
{
	libbpf_answer(res, libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, def->arg, NULL),
		      def->what,
		      def->need & PROBE_NEED_DWARF
			      ? "--unwind dwarf needs Linux 5.15 or later; use --unwind fp"
			      : "the kernel is too old for scorch (Linux 5.15 or later)");
}

/* Batch lookups read the counts map in one syscall per 4096 entries; else key by key. */
static void probe_batch(struct probe_result *res, const struct probe_def *def)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 key = 1, batch = 0, count = 8;
	__u64 val = 2, out_val[8];
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "scorch_probe", sizeof(key), sizeof(val), 8, NULL);
	if (fd < 0) {
		libbpf_answer(res, -errno, "hash map batch operations", NULL);
		return;
	}
	err = bpf_map_update_elem(fd, &key, &val, BPF_ANY) ? -errno : 0;
	if (!err) {
		__u32 keys[8];

		err = bpf_map_lookup_batch(fd, NULL, &batch, keys, out_val, &count, &opts);
		if (err == -ENOENT && count == 1 && keys[0] == key && out_val[0] == val)
			err = 0;
		else if (!err || err == -ENOENT)
			err = -EIO; /* answered, but not what was stored */
	}
	close(fd);
	if (!err)
		set(res, PROBE_OK, NULL, "hash map batch lookups work");
	else
		set(res, PROBE_DEGRADED, NULL,
		    "hash map batch lookups: %s: counts are read key by key at the end "
		    "(slower with many stacks)",
		    strerror(-err));
}

static int perf_open(__u32 type, __u64 config)
{
	struct perf_event_attr attr = {
		.type = type,
		.config = config,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = 99,
		.disabled = 1,
	};
	int cpu = sched_getcpu();

	return syscall(__NR_perf_event_open, &attr, -1, cpu < 0 ? 0 : cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

static void probe_cpu_clock(struct probe_result *res, const struct probe_def *def)
{
	int fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);

	if (fd >= 0) {
		close(fd);
		set(res, PROBE_OK, NULL,
		    "software cpu-clock sampling event opens (what scorch samples)");
		return;
	}
	if (errno == EACCES || errno == EPERM)
		set(res, PROBE_MISSING, "run it with sudo, or grant CAP_PERFMON",
		    "cpu-clock event refused: %s", strerror(errno));
	else
		set(res, PROBE_MISSING, "the kernel needs perf events (CONFIG_PERF_EVENTS)",
		    "cpu-clock event: %s", strerror(errno));
}

static void probe_cycles(struct probe_result *res, const struct probe_def *def)
{
	int fd = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);

	if (fd >= 0) {
		close(fd);
		set(res, PROBE_OK, NULL,
		    "hardware cycles event opens (not needed: scorch samples cpu-clock)");
		return;
	}
	if (errno == EACCES || errno == EPERM)
		set(res, PROBE_SKIPPED, NULL, "cycles event: not checked: %s", strerror(errno));
	else
		set(res, PROBE_MISSING, NULL,
		    "no hardware cycles event (%s; a VM without a virtual PMU?): not needed, "
		    "scorch samples the software cpu-clock",
		    strerror(errno));
}

/*
 * Where --event uprobe:, uretprobe: and usdt: attach, as libbpf does: perf's uprobe PMU
 * (Linux 4.17), else the legacy uprobe_events file of tracefs.
 */
static void probe_uprobe(struct probe_result *res, const struct probe_def *def)
{
	static const char *const legacy[] = {"/sys/kernel/tracing/uprobe_events",
					     "/sys/kernel/debug/tracing/uprobe_events"};
	char *buf = NULL;
	size_t len, i;
	long type = -1;

	if (!file__read_bounded(AT_FDCWD, "/sys/bus/event_source/devices/uprobe/type", 64, &buf,
				&len)) {
		buf[strcspn(buf, "\n")] = '\0';
		if (parse__long(buf, 0, INT_MAX, &type))
			type = -1;
	}
	free(buf);
	if (type >= 0) {
		res->value = type;
		set(res, PROBE_OK, NULL,
		    "perf's uprobe PMU (type %ld): uprobes, uretprobes and USDT probes attach",
		    type);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(legacy); i++) {
		if (!access(legacy[i], W_OK)) {
			set(res, PROBE_DEGRADED,
			    "nothing to do: --event uprobe and usdt work through it",
			    "no perf uprobe PMU: uprobes attach through %s (tracefs)", legacy[i]);
			return;
		}
	}
	set(res, PROBE_MISSING, "--event uprobe, uretprobe and usdt need CONFIG_UPROBE_EVENTS",
	    "no uprobes: neither perf's uprobe PMU (/sys/bus/event_source/devices/uprobe) nor "
	    "tracefs's uprobe_events");
}

/* Attaches a program that returns 0 to a raw tracepoint, and detaches it. */
static void probe_raw_tp(struct probe_result *res, const struct probe_def *def)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int prog, link, err = 0;

	prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "scorch_probe", "GPL", insns,
			     ARRAY_SIZE(insns), NULL);
	if (prog < 0) {
		libbpf_answer(res, prog == -EPERM || prog == -EACCES ? prog : -EINVAL, def->what,
			      NULL);
		if (res->status == PROBE_MISSING)
			set(res, PROBE_MISSING,
			    "the kernel needs BPF raw tracepoints (CONFIG_BPF_EVENTS)",
			    "%s: cannot load a raw tracepoint program: %s", def->what,
			    strerror(-prog));
		return;
	}
	link = bpf_raw_tracepoint_open(def->what, prog);
	if (link < 0)
		err = link;
	else
		close(link);
	close(prog);
	if (!err)
		set(res, PROBE_OK, NULL, "raw tracepoint %s: a program attaches", def->what);
	else
		set(res, PROBE_MISSING,
		    def->need & PROBE_NEED_OFFCPU ? "--mode offcpu and wall need it; --mode cpu "
						    "works without"
		    : def->need & PROBE_NEED_OFFWAKE
			    ? "--mode offwake and wakeup need it; --mode offcpu works without"
			    : "the kernel needs BPF raw tracepoints (CONFIG_BPF_EVENTS)",
		    "raw tracepoint %s: cannot attach: %s", def->what, strerror(-err));
}

static void probe_tracefs(struct probe_result *res, const struct probe_def *def)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	struct statfs sf;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (!statfs(dirs[i], &sf) && (unsigned long)sf.f_type == TRACEFS_MAGIC) {
			set(res, PROBE_OK, NULL,
			    "mounted at %s (not needed: scorch uses raw tracepoints)", dirs[i]);
			return;
		}
	}
	set(res, PROBE_MISSING, NULL, "not mounted (not needed: scorch uses raw tracepoints)");
}

static void probe_debuginfo(struct probe_result *res, const struct probe_def *def)
{
	const char *dir = "/usr/lib/debug/.build-id";
	DIR *d = opendir(dir);
	struct dirent *de;
	long n = 0;

	if (!d) {
		set(res, PROBE_DEGRADED,
		    "install the -dbgsym packages of what you profile (Debian: the debian-debug "
		    "archive)",
		    "no %s: stripped binaries are named from .dynsym only (no static functions, no "
		    "--lines)",
		    dir);
		return;
	}
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	res->value = n;
	set(res, PROBE_OK, NULL, "%s: %ld build-id directories (debug files found by build-id)",
	    dir, n);
}

/* BPF memory is charged to the memory cgroup since Linux 5.11; before, to RLIMIT_MEMLOCK. */
static void probe_memlock(struct probe_result *res, const struct probe_def *def)
{
	struct rlimit rl;
	/* libbpf's own test: bpf_ktime_get_coarse_ns came in the same release as memcg accounting
	 */
	int memcg = privileged() ? libbpf_probe_bpf_helper(BPF_PROG_TYPE_SOCKET_FILTER,
							   BPF_FUNC_ktime_get_coarse_ns, NULL)
				 : -EPERM;
	char lim[32];

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		set(res, PROBE_DEGRADED, NULL, "cannot read RLIMIT_MEMLOCK: %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		snprintf(lim, sizeof(lim), "%.0f KiB", rl.rlim_cur / 1024.0);
	res->value = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)MIN(rl.rlim_cur, LONG_MAX);
	if (memcg == 1)
		set(res, PROBE_OK, NULL,
		    "RLIMIT_MEMLOCK %s (not limiting: BPF memory is charged to the memory cgroup)",
		    lim);
	else if (memcg < 0)
		set(res, PROBE_SKIPPED, NULL,
		    "RLIMIT_MEMLOCK %s (whether BPF memory is charged to it is not checked without "
		    "CAP_BPF)",
		    lim);
	else if (rl.rlim_cur == RLIM_INFINITY || privileged())
		set(res, PROBE_OK, NULL,
		    "RLIMIT_MEMLOCK %s (raised to unlimited at load when needed)", lim);
	else
		set(res, PROBE_DEGRADED, "run it with sudo, or raise 'ulimit -l'",
		    "RLIMIT_MEMLOCK %s limits BPF maps on this kernel", lim);
}

static const struct probe_def defs[PROBE_NR] = {
	[PROBE_CAPS] = {"privileges", PROBE_NEED_RECORD, probe_caps},
	[PROBE_PARANOID] = {"kernel.perf_event_paranoid", 0, probe_paranoid},
	[PROBE_MAX_RATE] = {"kernel.perf_event_max_sample_rate", PROBE_NEED_RECORD, probe_max_rate},
	[PROBE_MAX_STACK] = {"kernel.perf_event_max_stack", PROBE_NEED_RECORD, probe_max_stack},
	[PROBE_UNPRIV_BPF] = {"kernel.unprivileged_bpf_disabled", 0, probe_unpriv_bpf},
	[PROBE_BTF] = {"BTF", PROBE_NEED_RECORD, probe_btf},
	[PROBE_PROG_PERF_EVENT] = {"prog perf_event", PROBE_NEED_RECORD, probe_prog_type,
				   BPF_PROG_TYPE_PERF_EVENT, "perf_event programs", .bpf = true},
	[PROBE_PROG_RAW_TP] = {"prog raw_tracepoint", PROBE_NEED_RECORD, probe_prog_type,
			       BPF_PROG_TYPE_RAW_TRACEPOINT, "raw_tracepoint programs",
			       .bpf = true},
	[PROBE_PROG_TRACEPOINT] = {"prog tracepoint", 0, probe_prog_type, BPF_PROG_TYPE_TRACEPOINT,
				   "tracepoint programs", .bpf = true},
	[PROBE_PROG_KPROBE] = {"prog kprobe", PROBE_NEED_UPROBE, probe_prog_type,
			       BPF_PROG_TYPE_KPROBE, "kprobe programs (uprobes, USDT)",
			       .bpf = true},
	[PROBE_PROG_TRACING] = {"prog tracing", 0, probe_tracing, BPF_PROG_TYPE_TRACING,
				"tracing (tp_btf) programs", .bpf = true},
	[PROBE_MAP_RINGBUF] = {"map ringbuf", PROBE_NEED_RECORD, probe_map_type,
			       BPF_MAP_TYPE_RINGBUF, "ring buffers", .bpf = true},
	[PROBE_MAP_STACK_TRACE] = {"map stack_trace", 0, probe_map_type, BPF_MAP_TYPE_STACK_TRACE,
				   "stack trace maps", .bpf = true},
	[PROBE_MAP_BATCH] = {"map batch ops", PROBE_NEED_RECORD, probe_batch, .bpf = true},
	[PROBE_HELPER_GET_STACK] = {"helper get_stack", PROBE_NEED_RECORD, probe_helper,
				    BPF_FUNC_get_stack, "bpf_get_stack", .bpf = true},
	[PROBE_HELPER_RINGBUF] = {"helper ringbuf_output", PROBE_NEED_RECORD, probe_helper,
				  BPF_FUNC_ringbuf_output, "bpf_ringbuf_output", .bpf = true},
	[PROBE_HELPER_READ_USER] = {"helper probe_read_user", PROBE_NEED_DWARF, probe_helper,
				    BPF_FUNC_probe_read_user, "bpf_probe_read_user", .bpf = true},
	[PROBE_HELPER_PT_REGS] = {"helper task_pt_regs", PROBE_NEED_DWARF, probe_helper,
				  BPF_FUNC_task_pt_regs, "bpf_task_pt_regs", .bpf = true},
	[PROBE_HELPER_TASK_BTF] = {"helper get_current_task_btf", PROBE_NEED_DWARF, probe_helper,
				   BPF_FUNC_get_current_task_btf, "bpf_get_current_task_btf",
				   .bpf = true},
	[PROBE_HELPER_LOOP] = {"helper loop", 0, probe_helper, BPF_FUNC_loop, "bpf_loop",
			       .bpf = true},
	[PROBE_CPU_CLOCK] = {"event cpu-clock", PROBE_NEED_RECORD, probe_cpu_clock},
	[PROBE_CYCLES] = {"event cycles", 0, probe_cycles},
	[PROBE_UPROBE] = {"event uprobe", PROBE_NEED_UPROBE, probe_uprobe},
	[PROBE_TP_EXIT] = {"tp sched_process_exit", PROBE_NEED_RECORD, probe_raw_tp, 0,
			   "sched_process_exit", .bpf = true},
	[PROBE_TP_FORK] = {"tp sched_process_fork", PROBE_NEED_RECORD, probe_raw_tp, 0,
			   "sched_process_fork", .bpf = true},
	[PROBE_TP_SWITCH] = {"tp sched_switch", PROBE_NEED_OFFCPU, probe_raw_tp, 0, "sched_switch",
			     .bpf = true},
	[PROBE_TP_WAKEUP] = {"tp sched_wakeup", PROBE_NEED_OFFCPU, probe_raw_tp, 0, "sched_wakeup",
			     .bpf = true},
	[PROBE_TP_WAKING] = {"tp sched_waking", PROBE_NEED_OFFWAKE, probe_raw_tp, 0, "sched_waking",
			     .bpf = true},
	[PROBE_TRACEFS] = {"tracefs", 0, probe_tracefs},
	[PROBE_DEBUGINFO] = {"debuginfo", 0, probe_debuginfo},
	[PROBE_MEMLOCK] = {"memlock", 0, probe_memlock},
};

int probe__run(enum probe_id id, struct probe_result *res)
{
	if ((unsigned int)id >= PROBE_NR)
		return -EINVAL;
	*res = (struct probe_result){
		.id = id,
		.name = defs[id].name,
		.need = defs[id].need,
		.value = -1,
	};
	if (defs[id].bpf && !privileged()) {
		set(res, PROBE_SKIPPED, "run 'sudo scorch check' to probe BPF",
		    "not checked: loading BPF needs CAP_BPF");
		return 0;
	}
	defs[id].fn(res, &defs[id]);
	return 0;
}

int probe__require(uint32_t need, const enum probe_id *ids, size_t nr, struct probe_result *res)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		probe__run(ids[i], res);
		if (!(res->need & need) || res->status != PROBE_MISSING)
			continue;
		pr_err("%s\n", res->detail);
		if (res->hint[0])
			pr_hint("%s\n", res->hint);
		switch (ids[i]) {
		case PROBE_CAPS:
			return -EPERM;
		case PROBE_BTF:
			return -ENOENT;
		default:
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

const char *probe__status_name(enum probe_status st)
{
	switch (st) {
	case PROBE_OK:
		return "ok";
	case PROBE_DEGRADED:
		return "degraded";
	case PROBE_MISSING:
		return "missing";
	case PROBE_SKIPPED:
		return "skipped";
	}
	return "?";
}
