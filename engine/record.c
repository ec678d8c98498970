// SPDX-License-Identifier: MIT
/* engine: the recorder: set-up, start and the end of a recording in order; the pieces
 * are in record.h. */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <gelf.h>
#include <libelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common.h"
#include "perfmap.h"
#include "python.h"
#include "record.h"
#include "symbolize.h"
#include "capture-record.h"
#include "copies.h"
#include "event.h"
#include "fold.h"
#include "governor.h"
#include "ktables.h"
#include "launch.h"
#include "output.h"
#include "procs.h"
#include "sampler.h"
#include "sideband.h"
#include "stop.h"
#include "timing.h"
#include "ustacks.h"

#define STOP_SLICE_MS 100

#define STARTUP_NICE (-10)

/* --unwind kernel: rows of unwind tables (12 bytes each, preallocated: 24 MiB; libc
 * takes 28,271, python3.11 64,575) and process images with tables at once (4 KiB each,
 * allocated as used) */
#define KUNWIND_ROWS  (1u << 21)
#define KUNWIND_PROCS 8192
/* the symbolizer's image of a -p process read for its tables before sampling (BPF's
 * gens are start times in ns plus an exec count: never this) */
#define KUNWIND_PRELOAD_GEN (1ULL << 62)

#define PARTIAL_LOSS_PCT 5.0

/* each CPU's ring of fork/exec/mmap records (~1.5 KiB a dynamically linked process; a
 * quarter of it wakes scorch): 512 KiB, less past 16 CPUs (8 MiB in all), >= 64 KiB */
#define SIDEBAND_RING_MAX (512 * 1024)

#define SIDEBAND_RING_MIN (64 * 1024)

#define SIDEBAND_RING_TOTAL (8 * 1024 * 1024)

/* and at most this much per wake-up, waking this often while more is left: the ring
 * buffer is drained between slices however large a map is */
#define JIT_SLICE_BYTES (1u << 20)

static void *ksyms_load(void *arg)
{
	struct record *r = arg;

	r->ksyms_err = symbolizer__load_kernel(r->sym);
	return NULL;
}

/*
 * Reads the kernel's symbols (/proc/kallsyms: ~50 ms, most of it the kernel printing
 * them) on a thread of its own, beside the BPF programs' load, with every signal blocked
 * there (SIGINT and SIGTERM are for the main thread's ppoll()). Nothing may use r->sym
 * until ksyms_wait(). If the thread cannot start, ksyms_wait() reads them itself.
 */
static void ksyms_start(struct record *r)
{
	sigset_t all, old;
	int err;

	if (r->opts.user_only)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->ksyms_thread, NULL, ksyms_load, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		pr_debug("cannot start a thread for kallsyms (read after the load): %s\n",
			 strerror(err));
	r->ksyms_running = !err;
}

/* Waits for ksyms_start()'s thread, if any; r->sym is the caller's again. 0 or -ENOMEM. */
static int ksyms_wait(struct record *r)
{
	if (!r->ksyms_running)
		return symbolizer__load_kernel(r->sym);
	pthread_join(r->ksyms_thread, NULL);
	r->ksyms_running = false;
	return r->ksyms_err;
}

/*
 * A zombie has exited: no thread is left to sample, so it is refused. A kernel thread
 * has no user stack: its kernel stacks are sampled while it runs (most sleep, so 0
 * samples is likely), which a note says; with -U nothing could be recorded.
 */
static int check_target(const struct record_opts *o, pid_t pid)
{
	struct proc_stat st;

	if (proc__read_stat(pid, &st))
		return 0; /* gone or unreadable: the attach reports it */
	if (st.state == 'Z' || st.state == 'X') {
		pr_err("process %d has exited (a zombie): it has no threads to sample\n", pid);
		pr_hint("profile a live process; its parent ('ps -o ppid= -p %d') has not reaped "
			"it\n",
			pid);
		return -ESRCH;
	}
	if (!(st.flags & PROC_PF_KTHREAD))
		return 0;
	if (o->user_only) {
		pr_err("process %d is a kernel thread: it has no user stack for -U/--user-only\n",
		       pid);
		pr_hint("drop -U to sample its kernel stacks\n");
		return -EINVAL;
	}
	pr_warn("process %d is a kernel thread: only its kernel stacks are sampled, while it "
		"runs on a CPU\n",
		pid);
	pr_hint("an idle kernel thread gives no samples; --mode offcpu shows where it waits\n");
	return 0;
}

/* The host probes of probe.c decide; the refusal is the probe's detail and hint. */
static int preflight(struct record *r)
{
	struct record_opts *o = &r->opts;
	enum probe_id ids[12] = {PROBE_CAPS, PROBE_BTF, PROBE_MAP_RINGBUF};
	uint32_t need = PROBE_NEED_RECORD;
	struct probe_result pr;
	long max_rate;
	size_t i, nr_ids = 3;
	int err;

	if (o->mode == MODE_OFFCPU || o->mode == MODE_WALL) {
		need |= PROBE_NEED_OFFCPU;
		ids[nr_ids++] = PROBE_TP_SWITCH;
		ids[nr_ids++] = PROBE_TP_WAKEUP;
	}
	if (o->offwake) {
		need |= PROBE_NEED_OFFWAKE;
		ids[nr_ids++] = PROBE_TP_WAKING;
	}
	if (o->mode == MODE_EVENT &&
	    (o->event.kind == EVENT_UPROBE || o->event.kind == EVENT_URETPROBE ||
	     o->event.kind == EVENT_USDT)) {
		need |= PROBE_NEED_UPROBE;
		ids[nr_ids++] = PROBE_PROG_KPROBE;
		ids[nr_ids++] = PROBE_UPROBE;
	}
	/* the kernel walk needs bpf_loop (5.17); chosen by default, frame pointers without */
	if (o->python_walk) {
		probe__run(PROBE_HELPER_LOOP, &pr);
		if (pr.status != PROBE_OK) {
			pr_debug("no bpf_loop (%s): no Python frames\n", pr.detail);
			o->python_walk = false;
		}
	}
	if (o->unwind == UNWIND_KERNEL) {
		probe__run(PROBE_HELPER_LOOP, &pr);
		if (pr.status != PROBE_OK && o->unwind_auto) {
			pr_debug("no bpf_loop (%s): stacks walked by frame pointers\n", pr.detail);
			o->unwind = UNWIND_FP;
		} else if (pr.status != PROBE_OK) {
			pr_err("--unwind kernel needs the bpf_loop helper: %s\n", pr.detail);
			pr_hint("use --unwind dwarf or --unwind fp (bpf_loop came with Linux "
				"5.17)\n");
			return -EOPNOTSUPP;
		}
	}
	if (o->unwind == UNWIND_DWARF || o->unwind == UNWIND_KERNEL) {
		need |= PROBE_NEED_DWARF;
		ids[nr_ids++] = PROBE_HELPER_READ_USER;
		ids[nr_ids++] = PROBE_HELPER_PT_REGS;
		ids[nr_ids++] = PROBE_HELPER_TASK_BTF;
	}
	err = probe__require(need, ids, nr_ids, &pr);
	if (err)
		return err;
	for (i = 0; i < o->nr_pids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			pr_err("no such process: %d\n", o->pids[i]);
			pr_hint("check the PID with 'ps -p %d'\n", o->pids[i]);
			return -ESRCH;
		}
		err = check_target(o, o->pids[i]);
		if (err)
			return err;
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (kill(o->tids[i], 0) && errno == ESRCH) {
			pr_err("no such thread: %d\n", o->tids[i]);
			pr_hint("list a process's threads with 'ps -T -p PID'\n");
			return -ESRCH;
		}
	}
	if (o->mode == MODE_EVENT) {
		err = event__resolve(&r->opts.event, o->pids, o->nr_pids, o->cmd);
		if (err)
			return err;
	}
	probe__run(PROBE_MAX_RATE, &pr);
	max_rate = pr.value >= 0 ? pr.value : 100000;
	if ((o->mode == MODE_CPU || o->mode == MODE_WALL) && o->freq > max_rate) {
		pr_err("-F %ld is above kernel.perf_event_max_sample_rate (%ld)\n", o->freq,
		       max_rate);
		pr_hint("lower -F, or raise it: sysctl kernel.perf_event_max_sample_rate=%ld\n",
			o->freq);
		return -EINVAL;
	}
	probe__run(PROBE_MAX_STACK, &pr);
	r->max_depth = MIN(pr.value >= 0 ? pr.value : 127, SCORCH_MAX_STACK_DEPTH);
	return 0;
}

/* libbpf's own messages: its warnings with -v, its load log (hundreds of lines of
 * relocations) with -vv. libbpf's callback takes no context: hence the file's static. */
static int libbpf_verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!log__enabled(LOG_DEBUG) || (level == LIBBPF_DEBUG && libbpf_verbosity < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Entries of the stack and count maps (both preallocated): at most one new stack
 * per sample is assumed, within [4096, 65536] (about 4.5 to 72 MiB of kernel
 * memory); without a duration, 32768.
 */
uint32_t record__map_entries(const struct record *r, int nr_cpus)
{
	const struct record_opts *o = &r->opts;
	double n;

	if (o->max_stacks)
		return o->max_stacks;
	if (!o->duration || o->mode == MODE_EVENT) /* events: no rate known */
		return 32768;
	n = (double)o->freq * o->duration * nr_cpus + 1024;
	return n < 4096 ? 4096 : n > 65536 ? 65536 : (uint32_t)n;
}

static size_t sideband_ring_bytes(void)
{
	long nr = sysconf(_SC_NPROCESSORS_ONLN);
	size_t bytes = SIDEBAND_RING_MAX;

	while (nr > 0 && bytes > SIDEBAND_RING_MIN && bytes * (size_t)nr > SIDEBAND_RING_TOTAL)
		bytes /= 2;
	return bytes;
}

/*
 * Reaps the -- command. It failed (r->cmd_failed, exit status EXIT_COMMAND) when it
 * exited non-zero or was killed by a signal other than SIGINT or SIGTERM; ended by
 * scorch (-d, Ctrl-C) it did not.
 */
static int finish_command(struct record *r)
{
	struct pollfd pfd = {.fd = r->launch.pidfd, .events = POLLIN};
	bool stopped = false;
	int status;

	if (!r->launch.pid)
		return 0;
	status = launch__wait(&r->launch, true);
	if (status == -EAGAIN) {
		/* stopped early (duration or signal): end the command, then reap it */
		stopped = true;
		kill(r->launch.pid, SIGTERM);
		if (pfd.fd < 0 || poll(&pfd, 1, 2000) <= 0)
			kill(r->launch.pid, SIGKILL);
		status = launch__wait(&r->launch, false);
	}
	if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status)) {
		pr_info("scorch: the command exited with status %d\n", WEXITSTATUS(status));
		r->cmd_failed = !stopped;
	} else if (status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM) {
		pr_info("scorch: the command was killed by signal %d\n", WTERMSIG(status));
		/* Ctrl-C reaches the terminal's whole process group: a stop, not a failure */
		r->cmd_failed = !stopped && WTERMSIG(status) != SIGINT;
	}
	return 0;
}

/* Appends @fmt to @buf at *@at, cut to @size (a "..." marks the cut). */
static void __attribute__((format(printf, 4, 5)))
target_add(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at + 4 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, size - 4 - *at, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= size - 4 - *at) {
		memcpy(buf + size - 4, "...", 4);
		*at = size;
		return;
	}
	*at += (size_t)n;
}

/* Process @pid's name (/proc/PID/comm) into @comm, "" when it cannot be read. */
static void read_comm(pid_t pid, char comm[SCORCH_COMM_LEN])
{
	char path[64], *text = NULL;
	size_t len;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (file__read_bounded(AT_FDCWD, path, 256, &text, &len))
		return;
	len = strcspn(text, "\n");
	snprintf(comm, SCORCH_COMM_LEN, "%.*s", (int)MIN(len, (size_t)SCORCH_COMM_LEN - 1), text);
	free(text);
}

/*
 * What is recorded, for the outputs and the capture: "command: make -j8", "PID 42
 * (app)", "PIDs 42 (a), 43 (b)", "TID 7", "all CPUs".
 */
static void describe_target(struct record *r)
{
	const struct record_opts *o = &r->opts;
	char comm[SCORCH_COMM_LEN];
	size_t at = 0, i, size = sizeof(r->target);

	r->target[0] = '\0';
	if (o->cmd) {
		target_add(r->target, size, &at, "command:");
		for (i = 0; o->cmd[i]; i++)
			target_add(r->target, size, &at, " %s", o->cmd[i]);
		return;
	}
	for (i = 0; i < o->nr_pids; i++) {
		read_comm(o->pids[i], comm);
		if (!i)
			target_add(r->target, size, &at, "%s", o->nr_pids > 1 ? "PIDs " : "PID ");
		target_add(r->target, size, &at, "%s%d", i ? ", " : "", (int)o->pids[i]);
		if (comm[0])
			target_add(r->target, size, &at, " (%s)", comm);
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (!i)
			target_add(r->target, size, &at, "%s%s", at ? ", " : "",
				   o->nr_tids > 1 ? "TIDs " : "TID ");
		target_add(r->target, size, &at, "%s%d", i ? ", " : "", (int)o->tids[i]);
	}
	if (!at)
		target_add(r->target, size, &at, "all CPUs");
}

/*
 * Before the BPF programs load: the host's checks, the outputs opened (a bad path
 * fails now, not after the recording), the symbolizer, the tables of processes and,
 * with --unwind dwarf, the unwinder. 0 or -errno.
 */
static int record_open(struct record *r)
{
	struct record_opts *o = &r->opts;
	struct symbolizer_opts yopts = o->names;
	struct utsname u;
	size_t i;
	int err;

	err = preflight(r);
	if (err)
		return err;
	/* the recording's date, the capture's as well: a report describes it the same */
	r->start_ns = (int64_t)timing__clock_ns(CLOCK_REALTIME);
	describe_target(r);
	if (!uname(&u))
		snprintf(r->host, sizeof(r->host), "%s", u.nodename);
	if (o->capture) {
		struct capture_rec_opts copts = {
			.sz = sizeof(copts),
			.mode = o->mode,
			.freq = o->freq,
			.max_depth = r->max_depth,
			.user_depth = (unsigned int)o->max_depth,
			.user_only = o->user_only,
			.kernel_only = o->kernel_only,
			.unwind_dwarf = o->unwind == UNWIND_DWARF,
			.event = o->mode == MODE_EVENT ? &o->event : NULL,
			.interval = o->interval,
			.only = !o->named,
			.target = r->target,
			.start_ns = r->start_ns,
		};

		err = capture_rec__open(o->capture_path, &copts, &r->cap);
		if (err)
			return err;
	}
	if (o->named && !o->on_interval) {
		struct outputs_opts oopts = {
			.sz = sizeof(oopts),
			.kind = o->mode == MODE_CPU	 ? OUTPUTS_CPU
				: o->mode == MODE_OFFCPU ? OUTPUTS_OFFCPU
				: o->mode == MODE_WALL	 ? OUTPUTS_WALL
							 : OUTPUTS_EVENT,
			.freq = o->freq,
			.interval = o->interval > 0,
			.seconds = o->interval,
			.lines = o->names.lines,
			.inline_frames = !o->names.no_inline,
		};
		const char *countname;

		if (o->mode == MODE_EVENT) {
			event__unit(&o->event, &oopts.value_type, &oopts.value_unit, &countname);
			oopts.period = o->event.period;
		}

		err = outputs__open(o->outs, &oopts);
		if (err)
			return err;
	}
	/* the BPF programs tell of new executable mappings (SCORCH_EVENT_MAPS) */
	r->pm = perfmaps__new(&(struct perfmaps_opts){.sz = sizeof(struct perfmaps_opts),
						      .scan_on_notice = true,
						      .slice_bytes = JIT_SLICE_BYTES});
	yopts.sz = sizeof(yopts);
	yopts.no_kernel = o->user_only;
	yopts.jit_lookup = perfmaps__lookup;
	yopts.jit_ctx = r->pm;
	if (r->cap) {
		/* JIT answers are kept for the capture on their way through */
		yopts.jit_lookup = capture_rec__jit_lookup;
		yopts.jit_ctx = r->cap;
	}
	r->sym = symbolizer__new(&yopts);
	capture_rec__attach(r->cap, r->sym, r->pm);
	r->fold = (struct fold){.sym = r->sym,
				.mode = o->mode,
				.freq = o->freq,
				.max_depth = r->max_depth,
				.user_depth = (unsigned int)o->max_depth,
				.fp = o->unwind == UNWIND_FP,
				.kwalk = o->unwind == UNWIND_KERNEL,
				.ns_values = o->mode == MODE_EVENT && o->latency,
				.wakeup = o->wakeup,
				.outs = o->wakeup ? NULL : o->outs};
	err = fold__init(&r->fold);
	r->procs = proctab__new();
	r->pidfds = malloc((o->nr_pids + 1) * sizeof(*r->pidfds));
	r->gone = calloc(o->nr_pids + o->nr_tids + 1, sizeof(*r->gone));
	if (!r->pm || !r->sym || err || !r->procs || !r->pidfds || !r->gone)
		return -ENOMEM;
	for (i = 0; i < o->nr_pids; i++)
		r->pidfds[i] = syscall(SYS_pidfd_open, o->pids[i], 0);
	if (o->unwind == UNWIND_DWARF) {
		struct unwind_opts uopts = {
			.sz = sizeof(uopts), .maps = &record__unwind_ops, .maps_ctx = r};

		r->dw.unw = unwinder__new(&uopts);
		r->dw.ubuf = malloc(sizeof(*r->dw.ubuf));
		r->dw.kbuf = malloc(sizeof(*r->dw.kbuf));
		r->dw.copies = copytab__new();
		r->dw.ustacks = ustacks__new();
		if (!r->dw.unw || !r->dw.ubuf || !r->dw.kbuf || !r->dw.copies || !r->dw.ustacks)
			return -ENOMEM;
		r->dw.ring_bytes = record__ring_size(o, libbpf_num_possible_cpus());
	}
	return 0;
}

/* dl_iterate_phdr(): the C library and the dynamic loader scorch itself runs with. */
static int add_libc_path(struct dl_phdr_info *info, size_t size, void *ctx)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	char(*paths)[PATH_MAX] = ctx;

	(void)size;
	if (base && !strncmp(base, "/libc.so.", 9))
		snprintf(paths[0], PATH_MAX, "%s", info->dlpi_name);
	else if (base && !strncmp(base, "/ld-linux", 9))
		snprintf(paths[1], PATH_MAX, "%s", info->dlpi_name);
	return 0;
}

/* The libraries @path names in DT_NEEDED, where the loader looks by default: compiled
 * too (sqlite3's libsqlite3). 0 or -ENOMEM. */
static int preload_needed(struct record *r, const char *path)
{
	static const char *const dirs[] = {"/lib/x86_64-linux-gnu",
					   "/usr/lib/x86_64-linux-gnu",
					   "/lib64",
					   "/usr/lib64",
					   "/lib",
					   "/usr/lib"};
	char lib[PATH_MAX];
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *d;
	Elf *elf;
	size_t i, k;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) && err != -ENOMEM) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag != DT_NULL && i < 4096; i++) {
			const char *name = dyn.d_tag == DT_NEEDED
						   ? elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)
						   : NULL;

			/* the C library and the loader are compiled already */
			if (!name || strchr(name, '/') || !strncmp(name, "libc.so", 7))
				continue;
			for (k = 0; k < ARRAY_SIZE(dirs); k++) {
				snprintf(lib, sizeof(lib), "%s/%s", dirs[k], name);
				if (!access(lib, R_OK)) {
					err = ktables__preload(r->kt, lib);
					break;
				}
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return err == -ENOMEM ? err : 0;
}

/*
 * --unwind kernel: the files nearly every process maps (the C library, the loader), the
 * command's program and the libraries it needs, compiled before sampling: a process
 * mapping them is walked with their rows as soon as it is announced, not after they are
 * compiled. 0, -ENOMEM.
 */
/* Whether the file at @path is a CPython interpreter whose layout scorch knows. */
static bool is_cpython(const char *path)
{
	struct python_file pf;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return false;
	err = python__file(fd, path, &pf);
	close(fd);
	return !err;
}

/*
 * Compiles the tables of libc, ld.so, the command and its libraries before sampling;
 * with @python_only (the kernel walk for CPython processes alone) only when the command
 * is CPython: its first events are then walked as soon as it is announced.
 */
static int preload_tables(struct record *r, bool python_only)
{
	char paths[3][PATH_MAX] = {};
	const char *cmd = r->opts.cmd ? r->opts.cmd[0] : NULL;
	int i, err = 0;

	dl_iterate_phdr(add_libc_path, paths);
	if (cmd && !strchr(cmd, '/')) {
		const char *dirs = getenv("PATH");

		/* as execvp() finds it */
		while (dirs && *dirs && !paths[2][0]) {
			size_t n = strcspn(dirs, ":");

			snprintf(paths[2], sizeof(paths[2]), "%.*s/%s", (int)n, dirs, cmd);
			if (access(paths[2], X_OK))
				paths[2][0] = '\0';
			dirs += n + (dirs[n] == ':');
		}
	} else if (cmd) {
		snprintf(paths[2], sizeof(paths[2]), "%s", cmd);
	}
	if (python_only && (!paths[2][0] || !is_cpython(paths[2])))
		return 0;
	for (i = 0; i < 3 && err != -ENOMEM; i++)
		if (paths[i][0])
			err = ktables__preload(r->kt, paths[i]);
	if (err != -ENOMEM && paths[2][0])
		err = preload_needed(r, paths[2]);
	return err == -ENOMEM ? err : 0;
}

/*
 * chain mode: where the kernel's interrupt entry code lies, [start, end) by pairs: the
 * hard interrupts' entries (x86: from asm_common_interrupt to the end of .irqentry.text;
 * the exceptions before them run on behalf of the task) and .softirqentry.text (softirqs
 * run at an interrupt's exit or at local_bh_enable). A wakeup with one of them on its
 * kernel stack ends its chain. Pairs not found stay 0 (the chain then goes on in the
 * kernel's counts, and is ended when the waker is named). 0 or -ENOMEM.
 */
static int irq_text(struct symbolizer *sym, uint64_t text[SAMPLER_IRQ_TEXT][2])
{
	static const char *const names[] = {"asm_common_interrupt", "__irqentry_text_end",
					    "__softirqentry_text_start", "__softirqentry_text_end"};
	uint64_t a[ARRAY_SIZE(names)];
	int err, i;

	_Static_assert(ARRAY_SIZE(names) == 2 * SAMPLER_IRQ_TEXT, "a pair per range");
	err = symbolizer__kernel_addrs(sym, names, ARRAY_SIZE(names), a);
	if (err == -ENOMEM)
		return err;
	if (err)
		pr_debug("chain: kallsyms unreadable (%s): wakeups in interrupts are ended "
			 "when named\n",
			 strerror(-err));
	for (i = 0; i < SAMPLER_IRQ_TEXT; i++) {
		if (a[2 * i] && a[2 * i + 1] > a[2 * i]) {
			text[i][0] = a[2 * i];
			text[i][1] = a[2 * i + 1];
		}
	}
	return 0;
}

/* Loads the BPF programs with the targets' filter and attaches them. 0 or -errno. */
static int record_load(struct record *r)
{
	struct record_opts *o = &r->opts;
	struct sampler_opts sopts = {
		.sz = sizeof(sopts),
		.oncpu = o->mode == MODE_CPU || o->mode == MODE_WALL,
		.offcpu = o->mode == MODE_OFFCPU || o->mode == MODE_WALL,
		.event = o->mode == MODE_EVENT ? &o->event : NULL,
		.freq = o->freq,
		.min_block_ns = o->min_block_us * 1000,
		.max_block_ns = o->max_block_us * 1000,
		.state_mask = o->state_mask,
		.with_runqueue = true,
		.offwake = o->offwake,
		.chain_depth = o->chain ? o->chain_depth : 1,
		.user_threads_only = o->user_threads_only,
		.kernel_threads_only = o->kernel_threads_only,
		.user_only = o->user_only,
		.kernel_only = o->kernel_only,
		.include_idle = o->include_idle,
		.credit_missed = o->mode == MODE_WALL,
		.filter_pid = o->nr_pids || o->cmd,
		.filter_tid = o->nr_tids > 0,
		.follow_forks = o->cmd != NULL,
		.nr_filter = MAX(o->nr_pids, o->nr_tids) + 1,
		.unwind_dwarf = o->unwind == UNWIND_DWARF,
		.stack_size = o->stack_size,
		.fp_depth = r->max_depth,
		.user_depth = o->max_depth,
		.ring_bytes = r->dw.ring_bytes,
		.age_stacks = o->interval > 0,
		/* --max-block judges whole intervals: cut, a part would be counted before
		 * the whole is known to be kept */
		.cut_intervals = o->interval > 0 && o->max_block_us == UINT64_MAX / 1000,
		.unwind_kernel = o->unwind == UNWIND_KERNEL,
		.python_walk = o->python_walk,
		.kunwind_rows = KUNWIND_ROWS,
		.kunwind_procs = KUNWIND_PROCS,
	};
	struct stat nst;
	size_t i;
	int err;

	r->cut_intervals = sopts.offcpu && sopts.cut_intervals;
	/* before the BPF programs: a process begun from now on needs no /proc read */
	err = sideband__open(sideband_ring_bytes(), &r->sb);
	if (err == -ENOMEM)
		return err;
	if (err)
		pr_debug("cannot open the mmap side-band events (maps read from /proc): %s\n",
			 strerror(-err));
	if (r->sb && !stat("/proc/self/ns/mnt", &nst)) {
		sopts.sideband_since = sideband__since(r->sb);
		sopts.sideband_mntns = nst.st_ino;
	}
	sopts.max_stacks = r->reap.map_entries = record__map_entries(r, libbpf_num_possible_cpus());
	if (o->chain) {
		err = irq_text(r->sym, sopts.irq_text);
		if (err == -ENOMEM)
			return err;
	}
	err = sampler__new(&sopts, &r->sampler);
	if (err)
		return err;
	if (sopts.unwind_kernel || sopts.python_walk) {
		int rows_fd, procs_fd;

		sampler__kunwind_fds(r->sampler, &rows_fd, &procs_fd);
		if (!o->no_python) {
			r->py = pycodes__new(o->names.lines);
			if (!r->py)
				return -ENOMEM;
			r->fold.py = r->py;
			capture_rec__set_python(r->cap, r->py);
		}
		err = ktables__new(rows_fd, procs_fd, KUNWIND_ROWS, r->py, sopts.python_walk,
				   &r->kt);
		if (!err)
			err = preload_tables(r, sopts.python_walk);
		if (err)
			return err;
		/* -p: their tables before the first sample, for whatever image runs (the
		 * image's own entry replaces it when it is announced) */
		for (i = 0; i < o->nr_pids; i++) {
			if (symbolizer__snapshot_gen(r->sym, o->pids[i], KUNWIND_PRELOAD_GEN))
				continue;
			err = ktables__add_image(r->kt, r->sym, o->pids[i], KUNWIND_PRELOAD_GEN, 0);
			symbolizer__forget_gen(r->sym, o->pids[i], KUNWIND_PRELOAD_GEN);
			if (err == -ENOMEM)
				return err;
		}
		err = 0;
	}
	timing__mark(&r->startup, "load");
	for (i = 0; i < o->nr_pids && !err; i++)
		err = sampler__add_pid(r->sampler, o->pids[i]);
	for (i = 0; i < o->nr_tids && !err; i++)
		err = sampler__add_tid(r->sampler, o->tids[i]);
	if (!err && o->cmd) {
		err = launch__start(&r->launch, o->cmd, r->boosted ? 0 : LAUNCH_NICE_KEEP);
		if (err)
			pr_err("cannot start '%s': %s\n", o->cmd[0], strerror(-err));
		else
			err = sampler__add_pid_at_exec(r->sampler, r->launch.pid);
	}
	if (err) {
		if (err != -ENOMEM && !o->cmd)
			pr_err("cannot set the target filter: %s\n", strerror(-err));
		return err;
	}
	err = sampler__attach(r->sampler);
	if (err)
		return err;
	r->attach_ns = timing__now_ns();
	r->window_ns = r->attach_ns;
	cpu_ticks__read(&r->cpu_at[0]);
	timing__mark(&r->startup, "attach");
	return 0;
}

/*
 * After the loop: the rings' last records, the JIT maps as they are at the end, every
 * count drained and named, the outputs written and the summary. 0 or -errno; r->partial
 * when more than PARTIAL_LOSS_PCT of the samples were lost.
 */
static int record_finish(struct record *r)
{
	uint64_t st[SCORCH_NR_STATS];
	int err = 0;

	/* what the rings still hold (the last notifications, samples written before the
	 * detach), then the JIT maps as they are at the end */
	if (sampler__consume(r->sampler, record__on_event, record__on_sample, r,
			     STOP_SLICE_MS * 1000000ULL) == -EAGAIN)
		r->ring_left = sampler__discard(r->sampler);
	err = r->err;
	if (!err) {
		perfmaps__refresh(r->pm, 0);
		if (perfmaps__continue(r->pm, true) == -ENOMEM)
			err = -ENOMEM;
	}
	timing__mark(&r->finish, "last reads");
	if (err)
		return err;
	err = sampler__drain(r->sampler, record__add_stack, r, &r->drain_lost, &r->drain_lost_ns);
	if (!err && r->dw.copies)
		err = record__close_copies(r);
	if (!err && r->dw.ustacks)
		err = ustacks__take(r->dw.ustacks, NULL, record__add_stack, r, r->dw.ubuf,
				    r->dw.kbuf);
	if (err) {
		pr_err("cannot read the recorded stacks: %s\n", strerror(-err));
		return err;
	}
	timing__mark(&r->finish, "drain and symbolize");
	sampler__stats(r->sampler, st);
	/* dropped from the full rings at the stop: lost as the kernel's drops are */
	st[STAT_LOST_RINGBUF] += r->ring_left;
	err = record__write_output(r, st);
	r->partial = record__summary(r, st) > PARTIAL_LOSS_PCT;
	if (err)
		return err;
	timing__report(&r->startup, "start-up");
	timing__report(&r->finish, "end of recording to output");
	return 0;
}

/*
 * Start-up (loading the programs, compiling the first unwind tables, kallsyms) and the
 * end (naming, writing) are what the user waits for, and sampling has not begun or is
 * over: on a busy machine they run at STARTUP_NICE, so that they take 0.5 s, not 2
 * (bench/governor-bench.sh CHURN=1). Sampling itself runs at the nice value scorch was
 * started with, its cost bounded by the governor. Only from nice 0: a user who chose
 * another keeps it. Threads started meanwhile (kallsyms) inherit it.
 */
static void boost(struct record *r, bool on)
{
	if (on && !r->boosted) {
		errno = 0;
		if (getpriority(PRIO_PROCESS, 0) != 0 || errno)
			return;
		r->boosted = !setpriority(PRIO_PROCESS, 0, STARTUP_NICE);
		if (!r->boosted)
			pr_debug("start-up and end at nice 0: %s\n", strerror(errno));
	} else if (!on && r->boosted) {
		if (setpriority(PRIO_PROCESS, 0, 0))
			pr_debug("cannot return to nice 0: %s\n", strerror(errno));
		r->boosted = false;
	}
}

static int record_run(struct record *r)
{
	struct record_opts *o = &r->opts;
	uint64_t st[SCORCH_NR_STATS];
	sigset_t block;
	int err;

	boost(r, true);
	timing__start(&r->startup, o->timing);
	err = record_open(r);
	if (err)
		return err;
	/* blocked in every thread from here on: the stop thread takes them (stop.c) */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	ksyms_start(r);
	err = record_load(r);
	/* -d counts from the attach: the stop thread ends sampling on time even while
	 * kallsyms and the threads blocked at the start are still being read; it governs
	 * the cost from the attach on too */
	if (!err) {
		struct governor_opts gopts = {
			.budget_pct = o->max_overhead,
			.freq = o->freq,
			.nr_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN),
			.lever = o->mode == MODE_CPU || o->mode == MODE_WALL,
			.per_sample_cpu = o->unwind == UNWIND_DWARF,
		};

		/* off CPU and at events nothing is governed: measured for -v alone (the
		 * kernel's measure adds two clock reads to every program run) */
		if (gopts.lever || o->verbose)
			governor__start(&r->gov, r->sampler, &gopts, r->attach_ns);
		err = stopper__start(&r->stop, r->sampler, r->gov.s ? &r->gov : NULL,
				     o->duration ? r->attach_ns + (uint64_t)(o->duration * 1e9) : 0,
				     r->ask_fd);
	}
	r->stop_started = !err;
	/* kallsyms, read beside the load: what is left of it */
	if (!err)
		err = ksyms_wait(r);
	if (err)
		goto cleanup;
	timing__mark(&r->startup, "kallsyms");
	/* before "sampling" is said: what wakes after it is the recording's own; a quarter
	 * of -d at most, and a second (signals wait until the loop): what is not read by
	 * then is not counted from the start */
	err = record__edges_start(r, &r->stop,
				  timing__now() + MIN(1.0, o->duration ? o->duration / 4 : 1.0));
	if (err)
		goto cleanup;
	if (o->mode != MODE_CPU && !o->cmd)
		timing__mark(&r->startup, "threads blocked");
	boost(r, false);
	if (o->cmd) {
		err = launch__go(&r->launch, o->cmd[0]);
		if (err)
			goto cleanup;
	}
	if (!o->quiet && o->mode == MODE_EVENT)
		pr_info("scorch: counting stacks at %s in %s%s\n", o->event.spec,
			o->cmd	 ? o->cmd[0]
			: o->all ? "every process"
				 : "the targets",
			o->duration ? "" : "; Ctrl-C to stop");
	else if (!o->quiet)
		pr_info("scorch: sampling %s%s%s\n",
			o->cmd	 ? o->cmd[0]
			: o->all ? "all CPUs"
				 : "the targets",
			o->mode == MODE_CPU	 ? ""
			: o->mode == MODE_OFFCPU ? " off CPU"
						 : " wall-clock",
			o->duration ? "" : "; Ctrl-C to stop");

	err = record__loop(r);
	boost(r, true);
	sampler__detach(r->sampler);
	cpu_ticks__read(&r->cpu_at[1]);
	finish_command(r);
	timing__mark(&r->finish, "stop");
	if (!err) {
		err = record_finish(r);
	} else if (r->write_failed) {
		/* what was recorded until the output failed: its summary still counts */
		sampler__stats(r->sampler, st);
		record__summary(r, st);
	}
cleanup:
	if (r->stop_started)
		stopper__finish(&r->stop); /* done already after the loop: a no-op then */
	if (r->launch.pid)
		launch__abort(&r->launch);
	return err;
}

int recorder__new(struct record_opts *o, struct recorder **out)
{
	struct record *r;

	*out = NULL;
	if (o->on_interval && (o->interval <= 0 || o->mode == MODE_EVENT || o->offwake))
		return -EINVAL; /* a caller's mistake: see struct record_opts */
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ask_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->ask_fd < 0) {
		int err = -errno;

		free(r);
		return err;
	}
	r->opts = *o;
	memset(o, 0, sizeof(*o));
	r->launch.go_fd = r->launch.err_fd = r->launch.pidfd = -1;
	r->sink = record__add_stack;
	if (r->opts.verbose)
		log__set_level(LOG_DEBUG);
	libbpf_verbosity = r->opts.verbose;
	libbpf_set_print(libbpf_print);
	*out = (struct recorder *)r;
	return 0;
}

int recorder__run(struct recorder *rec)
{
	struct record *r = (struct record *)rec;
	int err;

	err = record_run(r);
	if (r->ksyms_running)
		ksyms_wait(r); /* record_run() failed during the load: r->sym is freed later */
	return err;
}

bool recorder__command_failed(const struct recorder *rec)
{
	return ((const struct record *)rec)->cmd_failed;
}

bool recorder__partial(const struct recorder *rec)
{
	return ((const struct record *)rec)->partial;
}

void recorder__stop(struct recorder *rec)
{
	struct record *r = (struct record *)rec;
	int saved = errno; /* a signal handler's caller keeps its errno */
	uint64_t one = 1;
	ssize_t n;

	/* the stop thread polls it from its start: a request before then waits for it.
	 * An eventfd's write fails only at a count of 2^64 - 1; nothing is logged here (a
	 * signal handler may call this) */
	n = write(r->ask_fd, &one, sizeof(one));
	(void)n;
	errno = saved;
}

void recorder__free(struct recorder *rec)
{
	struct record *r = (struct record *)rec;

	if (!r)
		return;
	if (r->ksyms_running)
		ksyms_wait(r);
	if (r->pidfds) {
		for (size_t i = 0; i < r->opts.nr_pids; i++)
			if (r->pidfds[i] >= 0)
				close(r->pidfds[i]);
	}
	if (r->cap)
		capture_rec__close(r->cap, NULL, false); /* no-op once written */
	capture_rec__free(r->cap);
	ktables__free(r->kt);
	sampler__free(r->sampler);
	sideband__free(r->sb);
	unwinder__free(r->dw.unw);
	copytab__free(r->dw.copies);
	ustacks__free(r->dw.ustacks);
	free(r->dw.ubuf);
	free(r->dw.kbuf);
	symbolizer__free(r->sym);
	perfmaps__free(r->pm);
	fold__release(&r->fold);
	pycodes__free(r->py);
	proctab__free(r->procs);
	free(r->pidfds);
	free(r->gone);
	if (r->ask_fd >= 0)
		close(r->ask_fd);
	record_opts__free(&r->opts); /* uncommitted files removed */
	free(r);
}

void record_opts__free(struct record_opts *o)
{
	event__free(&o->event);
	free(o->pids);
	free(o->tids);
	outputs__free(o->outs); /* uncommitted files removed */
	o->pids = o->tids = NULL;
	o->outs = NULL;
}
