// SPDX-License-Identifier: MIT
/*
 * bench: a fixed amount of multi-threaded CPU work, timed inside (CLOCK_MONOTONIC), for
 * the overhead, time-to-result and footprint benchmarks.
 *
 * usage: cpujob THREADS UNITS     each thread does UNITS units of work (about 1 ms each
 *                                 alone on a CPU); prints on stdout, once all are done:
 *                                 "cpujob: threads N units U wall_s W cpu_s C"
 *        cpujob THREADS -t SECONDS  the threads work until SECONDS of wall time passed
 *                                 (for recordings of a fixed length); same line
 *        cpujob THREADS UNITS -f N  the job N times, in N children forked one after
 *                                 another, which do not exec (a worker pool's
 *                                 processes, for proc-cost.sh); each prints its line
 * Environment: CPUJOB_PIN=1 creates thread i on the i-th CPU the process may use (modulo
 * their number) and keeps it there. Unpinned, the scheduler now and then starts two
 * threads on one CPU (after tasks that just ran on both CPUs, or while another task runs
 * briefly: bench/placement.sh) and moves one away only 10 to 40 ms later: a wait that is
 * not the profiler's sampling but moves a 2-s job by up to 2 points.
 *
 * The line ends with what the scheduler did to the threads, summed over them (read by
 * each thread from /proc/thread-self at its end; 0 where the kernel lacks the file):
 * "wait_s W switches S migrations M": time runnable but waiting on a run queue,
 * involuntary context switches, moves between CPUs. A profiler that wakes often or
 * runs long in the job's CPUs shows up here even when its own CPU time is small.
 * Then "taken_s T detours D alive_s A": the threads read the clock every CHUNK
 * iterations; a chunk that took over twice the fastest one was interrupted (an
 * interrupt, a sampling handler and its BPF program, another task run in its place)
 * and T sums what such chunks took beyond the fastest, D counts them, A sums the
 * threads' lifetimes. T/A is the share of the threads' time taken from them: unlike
 * wall and CPU time it does not move with the speed of a shared machine's CPUs.
 * Last "p25_us Q1 p50_us Q2 p75_us Q3": quartiles of what one interruption took
 * beyond the fastest chunk, over all threads' interrupted chunks (HIST_NS bins, the
 * last holding everything longer). Under a sampling profiler at a high rate most
 * interruptions are its samples: the quartiles are what a sample costs the thread, and
 * unlike T they are not moved by a few long ones (the host preempting the VM).
 *
 * Build with frame pointers so every profiler walks the same stacks:
 *   cc -O2 -fno-omit-frame-pointer -pthread cpujob.c -o cpujob
 * A unit is 3 calls (job_a, job_b, job_c, 50/30/20 % of its iterations) below
 * job_unit; no system calls (the clock is read through the vDSO), no memory traffic:
 * only the CPU time a profiler takes from the threads (interrupts, cache and TLB
 * pollution) slows it down.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIT_ITERS 400000UL /* about 1 ms at 1.3 ns per dependent multiply-add */
#define CHUNK	   1024UL   /* iterations between two clock reads (about 1.3 us) */
#define HIST_NS	   50	    /* width of a bin of the interruption histogram */
#define HIST_BINS  4000	    /* 200 us of bins; the last holds longer ones too */
#define LONG_NS	   50000    /* a long interruption: a task run in the job's place */

static unsigned long units;
static double seconds;
static double start;

struct sched_seen {
	unsigned long long wait_ns, switches, migrations;
	uint64_t taken_ns, detours, alive_ns, long_ns, longs;
};

/* This thread's clock reads between chunks of work: see the header. */
struct detours {
	uint64_t last, fastest, sum, n, long_sum, long_n;
	uint32_t *hist; /* HIST_BINS: interruptions by what they took beyond the fastest */
};

static __thread struct detours dt;

static uint32_t hists[256][HIST_BINS];

static struct sched_seen seen[256];

/* Reads at most one buffer of /proc/thread-self/NAME, NUL-terminated; 0 on failure. */
static int read_self(const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/thread-self/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return 1;
}

static unsigned long long sched_field(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	if (!p)
		return 0;
	p = strchr(p, ':');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void sched_read(struct sched_seen *s)
{
	char buf[4096];
	unsigned long long run;

	if (read_self("schedstat", buf, sizeof(buf)))
		sscanf(buf, "%llu %llu", &run, &s->wait_ns);
	if (read_self("sched", buf, sizeof(buf))) {
		s->switches = sched_field(buf, "nr_involuntary_switches");
		s->migrations = sched_field(buf, "se.nr_migrations");
	}
}

static double now(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline void detour_check(void)
{
	uint64_t t = mono_ns(), d = t - dt.last;

	dt.last = t;
	if (d < dt.fastest) {
		dt.fastest = d;
	} else if (d > 2 * dt.fastest) {
		uint64_t bin = (d - dt.fastest) / HIST_NS;

		dt.sum += d;
		dt.n++;
		if (d - dt.fastest > LONG_NS) {
			dt.long_sum += d - dt.fastest;
			dt.long_n++;
		}
		dt.hist[bin < HIST_BINS ? bin : HIST_BINS - 1]++;
	}
}

#define STEP(x) x = x * 6364136223846793005UL + 1442695040888963407UL

#define SPIN(x, n)                                                                                 \
	do {                                                                                       \
		unsigned long left = (n);                                                          \
		for (; left >= CHUNK; left -= CHUNK) {                                             \
			for (unsigned long i = 0; i < CHUNK; i++)                                  \
				STEP(x);                                                           \
			detour_check();                                                            \
		}                                                                                  \
		for (; left; left--)                                                               \
			STEP(x);                                                                   \
	} while (0)

__attribute__((noinline)) static unsigned long job_a(unsigned long x)
{
	SPIN(x, UNIT_ITERS * 50 / 100);
	return x;
}

__attribute__((noinline)) static unsigned long job_b(unsigned long x)
{
	SPIN(x, UNIT_ITERS * 30 / 100);
	return x;
}

__attribute__((noinline)) static unsigned long job_c(unsigned long x)
{
	SPIN(x, UNIT_ITERS * 20 / 100);
	return x;
}

__attribute__((noinline)) static unsigned long job_unit(unsigned long x)
{
	x = job_a(x);
	x = job_b(x);
	x = job_c(x);
	__asm__ volatile("" : "+r"(x)); /* keep the frame (no tail call) */
	return x;
}

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg;
	struct sched_seen *me = &seen[x - 1];
	uint64_t born;

	dt.hist = hists[me - seen];
	memset(dt.hist, 0, sizeof(hists[0])); /* its pages faulted in before the clock runs */
	born = mono_ns();
	dt.last = born;
	dt.fastest = UINT64_MAX;

	if (seconds > 0) {
		while (now(CLOCK_MONOTONIC) - start < seconds)
			for (int i = 0; i < 10; i++)
				x = job_unit(x);
	} else {
		for (unsigned long u = 0; u < units; u++)
			x = job_unit(x);
	}
	me->alive_ns = mono_ns() - born;
	me->detours = dt.n;
	me->taken_ns = dt.n ? dt.sum - dt.n * dt.fastest : 0;
	me->long_ns = dt.long_sum;
	me->longs = dt.long_n;
	sched_read(me);
	return (void *)x;
}

/* The @q quantile (0..1) of the first @n threads' interruptions, in us (the bin's middle). */
static double hist_quantile(long n, double q)
{
	uint64_t total = 0, acc = 0;

	for (long i = 0; i < n; i++)
		for (int b = 0; b < HIST_BINS; b++)
			total += hists[i][b];
	if (!total)
		return 0;
	for (int b = 0; b < HIST_BINS; b++) {
		for (long i = 0; i < n; i++)
			acc += hists[i][b];
		if (acc >= q * total)
			return (b + 0.5) * HIST_NS / 1e3;
	}
	return HIST_BINS * HIST_NS / 1e3;
}

int main(int argc, char **argv)
{
	pthread_t th[256];
	unsigned long sink = 0;
	struct sched_seen sum = {0};
	cpu_set_t allowed;
	char *end;
	long n, forks = 0;
	int status;
	bool pin;

	if (argc == 5 && !strcmp(argv[3], "-f")) {
		forks = strtol(argv[4], &end, 10);
		if (*end || forks < 1 || forks > 1000000)
			goto usage;
		argc = 3;
	}
	if (argc == 4 && !strcmp(argv[2], "-t")) {
		seconds = strtod(argv[3], &end);
		if (*end || !(seconds > 0 && seconds < 1e6))
			goto usage;
	} else if (argc == 3) {
		units = strtoul(argv[2], &end, 10);
		if (*end || !units)
			goto usage;
	} else {
		goto usage;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 1 || n > 256)
		goto usage;

	for (long i = 0; i < forks; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("cpujob: fork");
			return 1;
		}
		if (pid == 0)
			goto job;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	if (forks)
		return 0;
job:
	pin = getenv("CPUJOB_PIN") && !strcmp(getenv("CPUJOB_PIN"), "1");
	if (pin && sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("cpujob: sched_getaffinity");
		return 1;
	}
	start = now(CLOCK_MONOTONIC);
	double cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < n; i++) {
		pthread_attr_t attr;
		int err;

		pthread_attr_init(&attr);
		if (pin) {
			cpu_set_t one;
			int k = i % CPU_COUNT(&allowed), cpu = -1;

			while (k-- >= 0)
				while (!CPU_ISSET(++cpu, &allowed))
					;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		}
		err = pthread_create(&th[i], &attr, worker, (void *)(i + 1));
		pthread_attr_destroy(&attr);
		if (err) {
			fprintf(stderr, "cpujob: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (long i = 0; i < n; i++) {
		void *r;

		pthread_join(th[i], &r);
		sink += (unsigned long)r;
		sum.wait_ns += seen[i].wait_ns;
		sum.switches += seen[i].switches;
		sum.migrations += seen[i].migrations;
		sum.taken_ns += seen[i].taken_ns;
		sum.detours += seen[i].detours;
		sum.long_ns += seen[i].long_ns;
		sum.longs += seen[i].longs;
		sum.alive_ns += seen[i].alive_ns;
	}
	printf("cpujob: threads %ld units %lu wall_s %.6f cpu_s %.6f sink %lu wait_s %.6f switches "
	       "%llu migrations %llu taken_s %.6f detours %llu alive_s %.6f p25_us %.2f p50_us "
	       "%.2f p75_us %.2f longs %llu long_s %.6f\n",
	       n, units, now(CLOCK_MONOTONIC) - start, now(CLOCK_PROCESS_CPUTIME_ID) - cpu0,
	       sink & 1, sum.wait_ns / 1e9, sum.switches, sum.migrations, sum.taken_ns / 1e9,
	       (unsigned long long)sum.detours, sum.alive_ns / 1e9, hist_quantile(n, 0.25),
	       hist_quantile(n, 0.50), hist_quantile(n, 0.75), (unsigned long long)sum.longs,
	       sum.long_ns / 1e9);
	return 0;
usage:
	fprintf(stderr, "usage: cpujob THREADS UNITS [-f N] | cpujob THREADS -t SECONDS\n");
	return 2;
}
