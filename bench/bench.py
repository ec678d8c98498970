# SPDX-License-Identifier: MIT
"""bench: the scorch benchmark suite against perf and bpftrace, measured in one run.

Called by bench/overhead.sh, time-to-result.sh, footprint.sh and accuracy.sh (which
check the tools first); not meant to be run directly. Every figure is measured in this
run; durations on CLOCK_MONOTONIC (time.monotonic), CPU times from wait4() rusage.
Each benchmark prints progress lines, then a markdown table ready for docs/BENCHMARKS.md.
Exit status: 0 when the benchmark ran (goals are judged by reading the figures), 1
when it could not run (a tool failed or recorded nothing).
"""
import argparse
import collections
import math
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time

BPFTRACE_PROG = 'BEGIN { printf("ready\\n"); } profile:hz:%d { @[kstack, ustack] = count(); }'


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Reader(threading.Thread):
    """Copies a pipe to a file and signals when a line contains @marker."""

    def __init__(self, pipe, path, marker):
        super().__init__(daemon=True)
        self.pipe, self.path, self.marker = pipe, path, marker
        self.ready = threading.Event()
        self.ready_at = None

    def run(self):
        with open(self.path, "wb") as out:
            for line in self.pipe:
                out.write(line)
                if self.marker and not self.ready.is_set() and self.marker in line:
                    self.ready_at = time.monotonic()
                    self.ready.set()
        self.ready.set()  # EOF: the waiter checks ready_at


def perf_start(argv, base, timeout=60):
    """Starts perf @argv, which must hold "-D -1 --control fifo:@base.ctl,@base.ack", with
    its output in @base.out and @base.err; returns once its events are enabled."""
    out, err = base + ".out", base + ".err"
    for f in (".ctl", ".ack"):
        if os.path.exists(base + f):
            os.unlink(base + f)
        os.mkfifo(base + f)
    proc = subprocess.Popen(argv, stdout=open(out, "wb"), stderr=open(err, "wb"),
                            stdin=subprocess.DEVNULL)
    # perf starts with its events disabled (-D -1): enabling them through the control
    # fifo and reading its ack is the moment sampling begins
    ctl = os.open(base + ".ctl", os.O_WRONLY)
    ack = os.open(base + ".ack", os.O_RDONLY)
    os.write(ctl, b"enable\n")
    got = b""
    deadline = time.monotonic() + timeout
    while b"ack" not in got and time.monotonic() < deadline:
        chunk = os.read(ack, 64)
        if not chunk:
            break
        got += chunk
    os.close(ctl)
    os.close(ack)
    if b"ack" not in got:
        proc.kill()
        proc.wait()
        raise BenchError("perf did not start: " + tail(err))
    return proc


class Profiler:
    """One system-wide recording by one tool: started, ready (sampling), stopped.

    kinds: scorch-fp, scorch-dwarf, scorch-kernel, perf (perf record -a -g), bpftrace
    (profile:hz:N { @[kstack, ustack] = count(); }).
    """

    def __init__(self, kind, hz, work, tag, scorch, extra=(), duration=None, output=None,
                 env=None):
        self.tool = kind
        self.env = env
        kind, path = split_tool(kind)
        scorch = path or scorch
        self.kind, self.hz, self.work, self.scorch = kind, hz, work, scorch
        self.base = os.path.join(work, tag)
        self.duration = duration
        self.output = output or self.base + (".data" if kind.startswith("perf") else ".folded")
        self.extra = list(extra)
        self.proc = None
        self.ready_at = None

    def argv(self):
        if self.kind.startswith("scorch"):
            a = [self.scorch, "record", "-a", "-F", str(self.hz), "-o", self.output]
            # always explicit: the default (--unwind auto) is dwarf in cpu mode
            a += ["--unwind", {"scorch-dwarf": "dwarf", "scorch-kernel": "kernel"}.get(self.kind, "fp")]
            if self.duration:
                a += ["-d", str(self.duration)]
            return a + self.extra
        if self.kind.startswith("perf"):
            graph = ["--call-graph", "dwarf"] if self.kind == "perf-dwarf" else ["-g"]
            return ["perf", "record", "-a"] + graph + ["-F", str(self.hz), "-o", self.output,
                    "-D", "-1", "--control", "fifo:%s.ctl,%s.ack" % (self.base, self.base)] + self.extra
        if self.kind == "bpftrace":
            return ["bpftrace", "-e", BPFTRACE_PROG % self.hz] + self.extra
        raise BenchError("unknown profiler " + self.kind)

    def start(self, timeout=60):
        out, err = self.base + ".out", self.base + ".err"
        self.started_at = time.monotonic()
        if self.kind.startswith("perf"):
            self.proc = perf_start(self.argv(), self.base, timeout)
            self.ready_at = time.monotonic()
            return
        scorch = self.kind.startswith("scorch")
        self.proc = subprocess.Popen(
            self.argv(), stdin=subprocess.DEVNULL, env=self.env,
            stdout=open(out, "wb") if scorch else subprocess.PIPE,
            stderr=subprocess.PIPE if scorch else open(err, "wb"))
        pipe, path, marker = ((self.proc.stderr, err, b"scorch: sampling") if scorch
                              else (self.proc.stdout, out, b"ready"))
        self.reader = Reader(pipe, path, marker)
        self.reader.start()
        self.reader.ready.wait(timeout)
        if self.reader.ready_at is None:
            self.kill()
            raise BenchError("%s did not start: %s" % (self.kind, tail(err)))
        self.ready_at = self.reader.ready_at

    def run_ns(self):
        """Nanoseconds on CPU of all the profiler's threads so far (schedstat: exact,
        where /proc/PID/stat counts clock ticks)."""
        total = 0
        d = "/proc/%d/task" % self.proc.pid
        for t in os.listdir(d):
            try:
                with open(os.path.join(d, t, "schedstat")) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # a thread that ended meanwhile
        return total

    def cpu_now(self):
        """user+sys seconds of the profiler so far (from /proc/PID/stat)."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, sig=signal.SIGINT, timeout=300):
        """Stops the recording (unless it has a duration) and reaps the profiler.
        Returns dict: stop_at, exit_at, cpu (user+sys s), maxrss_kb."""
        stop_at = time.monotonic()
        if not self.duration:
            self.proc.send_signal(sig)
        pid, status, ru = os.wait4(self.proc.pid, 0)
        exit_at = time.monotonic()
        self.proc.returncode = status
        if getattr(self, "reader", None):
            self.reader.join(timeout)
        code = os.waitstatus_to_exitcode(status)
        # scorch 3: output written, samples lost (reported); perf re-raises SIGINT
        if code not in (0, 3) and not (self.kind.startswith("perf") and code == -signal.SIGINT):
            raise BenchError("%s exited with %d: %s" % (self.kind, code,
                                                        tail(self.base + ".err")))
        return {"stop_at": stop_at, "exit_at": exit_at, "cpu": ru.ru_utime + ru.ru_stime,
                "maxrss_kb": ru.ru_maxrss}

    def bpf_usage(self, prog_type=None):
        """Sets bpf_ns, bpf_cnt (run time and runs of the profiler's BPF programs, with
        kernel.bpf_stats_enabled=1; only those of @prog_type when given) and memlock
        (bytes of its maps)."""
        progs, maps = bpf_objects(self.proc.pid)
        if prog_type is not None:
            progs = {k: v for k, v in progs.items() if v.get("prog_type") == prog_type}
        if not progs:
            raise BenchError("no BPF program open in %s (PID %d)" % (self.kind, self.proc.pid))
        self.bpf_ns = sum(x.get("run_time_ns", 0) for x in progs.values())
        self.bpf_cnt = sum(x.get("run_cnt", 0) for x in progs.values())
        self.memlock = sum(x.get("memlock", 0) for x in maps.values())

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def check(self, needle):
        """The recording must name @needle (the workload's function) somewhere."""
        if self.kind.startswith("scorch"):
            with open(self.output, errors="replace") as f:
                ok = needle in f.read()
        elif self.kind.startswith("perf"):
            ok = perf_samples(self.base + ".err") > 0
        else:
            with open(self.base + ".out", errors="replace") as f:
                ok = "]: " in f.read()
        if not ok:
            raise BenchError("%s recorded nothing of the workload (see %s.*)" % (self.kind,
                                                                               self.base))


def tail(path, n=3):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-n:])
    except OSError:
        return "(no output)"


def perf_samples(err_path):
    m = re.search(r"\((\d+) samples\)", open(err_path, errors="replace").read())
    return int(m.group(1)) if m else 0


def scorch_samples(err_path):
    m = re.search(r"scorch: (\d+) samples at", open(err_path, errors="replace").read())
    return int(m.group(1)) if m else 0


JOB_RE = re.compile(r"cpujob: threads (\d+) units (\d+) wall_s ([0-9.]+) cpu_s ([0-9.]+)"
                    r"(?: sink \d+ wait_s ([0-9.]+) switches (\d+) migrations (\d+)"
                    r" taken_s ([0-9.]+) detours (\d+) alive_s ([0-9.]+))?"
                    r"(?: p25_us ([0-9.]+) p50_us ([0-9.]+) p75_us ([0-9.]+))?"
                    r"(?: longs (\d+) long_s ([0-9.]+))?")
# one run of cpujob: wall and CPU seconds; the threads' run-queue wait (s), involuntary
# context switches and CPU migrations (0 if the kernel has no schedstat); the time taken
# from them by interruptions (s), how many, and their lifetimes (s); all summed over them;
# the quartiles of what one interruption took (us, over all threads' interruptions); the
# long interruptions (over 50 us: a task run in the threads' place), how many and their
# time beyond the fastest stretch (s)
Job = collections.namedtuple("Job", "wall cpu wait switches migrations taken detours alive "
                             "p25 p50 p75 longs long_s")


class Churn(threading.Thread):
    """Starts @rate short processes a second (cpujob 1 5: ~5 ms of CPU, libc's frames on
    its stack) until stopped: what a busy machine does beside the profiled job."""

    def __init__(self, cpujob, rate):
        super().__init__(daemon=True)
        self.cpujob, self.rate = cpujob, rate
        self.halt = threading.Event()
        self.started = 0

    def run(self):
        period = 1.0 / self.rate
        nxt = time.monotonic()
        while not self.halt.is_set():
            subprocess.run([self.cpujob, "1", "5"], stdout=subprocess.DEVNULL)
            self.started += 1
            nxt += period
            self.halt.wait(max(0.0, nxt - time.monotonic()))


def run_job(cpujob, threads, units, churn=0):
    ch = None
    if churn:
        ch = Churn(cpujob, churn)
        ch.start()
    try:
        out = subprocess.run([cpujob, str(threads), str(units)], capture_output=True,
                             text=True)
    finally:
        if ch:
            ch.halt.set()
            ch.join()
    m = JOB_RE.search(out.stdout)
    if out.returncode or not m:
        raise BenchError("cpujob failed: " + out.stderr.strip())
    if m.group(5) is None or m.group(11) is None:
        raise BenchError("cpujob printed no scheduler figures or quartiles: rebuild it from "
                         "bench/cpujob.c")
    return Job(float(m.group(3)), float(m.group(4)), float(m.group(5)), int(m.group(6)),
               int(m.group(7)), float(m.group(8)), int(m.group(9)), float(m.group(10)),
               float(m.group(11)), float(m.group(12)), float(m.group(13)),
               int(m.group(14) or 0), float(m.group(15) or 0))


def taken_pct(job):
    """The share of the job's threads' lifetimes taken from them by interruptions."""
    return 100 * job.taken / job.alive if job.alive else float("nan")


def start_job_for(cpujob, threads, seconds):
    return subprocess.Popen([cpujob, str(threads), "-t", "%.3f" % seconds],
                            stdout=subprocess.DEVNULL)


def kthreads_run_ns():
    """Nanoseconds on CPU of the kernel's own threads so far (kthreadd's children:
    kworkers, RCU, ksoftirqd), from their schedstat."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != 2:
                continue
            with open("/proc/%s/schedstat" % pid) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # gone meanwhile
    return total


def quiesce(window=0.1, busy_ns=2e6, timeout=5.0):
    """Waits until the kernel's threads ran less than @busy_ns in a @window: the work a
    profiler leaves behind when it exits (its BPF maps and perf buffers freed in
    kworkers: 9 to 40 ms measured) done before the next run, which it would otherwise
    slow down. Returns the seconds waited (@timeout when never quiet)."""
    t0 = time.monotonic()
    last = kthreads_run_ns()
    while time.monotonic() - t0 < timeout:
        time.sleep(window)
        now = kthreads_run_ns()
        if now - last < busy_ns:
            break
        last = now
    return time.monotonic() - t0


def rotated(tools, rnd):
    """The tools in round @rnd's order: rotated by one each round, so that no tool always
    runs first or after the same neighbour."""
    k = rnd % len(tools)
    return tools[k:] + tools[:k]


def med(v):
    return statistics.median(v) if v else float("nan")


def machine_line():
    cpus = os.cpu_count()
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = open("/proc/loadavg").read().split()[:3]
    return "%d CPUs (%s), kernel %s, load average before the run %s" % (
        cpus, model, os.uname().release, " ".join(load))


def tool_versions():
    v = []
    for cmd in (["perf", "--version"], ["bpftrace", "--version"]):
        try:
            v.append(subprocess.run(cmd, capture_output=True, text=True).stdout.strip())
        except OSError:
            pass
    return ", ".join(v)


def header(title, args):
    print("\n### %s\n" % title)
    print("- command: `%s`" % " ".join(args))
    print("- machine: %s" % machine_line())
    print("- tools: %s" % tool_versions())
    print("- date: %s (the VM's clock may be off)" % time.strftime("%Y-%m-%d %H:%M %Z"))
    print()


# ---------------------------------------------------------------- overhead

def overhead_runs(a, res, bases):
    os.sync()  # nothing written before the run is written back during it
    for hz in a.rates:
        for rnd in range(a.rounds):
            # rotate the order each round so no tool always runs after the same one
            order = rotated(a.tools, rnd)
            for tool in order:
                # each profiled run is paired with a run of the job alone just before it
                base = run_job(a.cpujob, a.threads, a.units, a.churn)
                bases.append(base.wall)
                p = Profiler(tool, hz, a.work, "ov-%d-%d-%d" % (a.tools.index(tool), hz, rnd),
                             a.scorch)
                p.start()
                try:
                    # --settle: the job starts that long after sampling began, past what
                    # a profiler does in its first moments (scorch: the processes sampled
                    # first, their maps and files read)
                    if a.settle:
                        time.sleep(a.settle)
                    ns0 = p.run_ns()
                    job = run_job(a.cpujob, a.threads, a.units, a.churn)
                    during = (p.run_ns() - ns0) / 1e9
                except BenchError:
                    p.kill()
                    raise
                st = p.stop()
                p.check("job_a")
                # the output written (perf --call-graph dwarf: ~100 MB at 4999 Hz) is
                # written back to disk ~30 s later by the kernel's flusher threads, in
                # some later tool's run: write it back now, between runs
                t0 = time.monotonic()
                os.sync()
                synced = time.monotonic() - t0
                quiet = quiesce()
                res.setdefault((hz, tool), []).append(Run(job, base, st["cpu"], during))
                log("overhead: %d Hz round %d %-13s wall %.3f s (base %.3f), CPU %.3f s (base "
                    "%.3f), taken %.2f %% (base %.2f %%); profiler CPU %.3f s (%.3f s during "
                    "the job); threads waited %.1f ms (base %.1f), %d involuntary switches "
                    "(base %d), %d migrations (base %d); an interruption took %.2f us "
                    "(quartiles %.2f..%.2f; base %.2f); output synced in %.2f s, the "
                    "kernel's threads quiet after %.2f s"
                    % (hz, rnd + 1, tool, job.wall, base.wall, job.cpu, base.cpu,
                       taken_pct(job), taken_pct(base), st["cpu"], during, 1e3 * job.wait,
                       1e3 * base.wait, job.switches, base.switches, job.migrations,
                       base.migrations, job.p50, job.p25, job.p75, base.p50, synced, quiet))


# one profiled run: the job under the profiler, its paired run alone, the profiler's CPU
# seconds over the whole run and during the job
Run = collections.namedtuple("Run", "job base cpu during")


def pinned_note():
    """How the job's threads were placed (CPUJOB_PIN, set by lib.sh's pin_job)."""
    if os.environ.get("CPUJOB_PIN") == "1":
        return (", each thread created on a CPU of its own and kept there (PIN=1; placed by "
                "the scheduler, the two threads now and then start on one CPU and wait 10 to "
                "40 ms for one to be moved: a placement, not a sampling cost, that moves a "
                "run by up to 2 points, and came more often under scorch than under perf)")
    return ", its threads placed by the scheduler (PIN=0)"


def by_profiler(r):
    """Points of the job threads' time the profiler took: profiled minus alone."""
    return taken_pct(r.job) - taken_pct(r.base)


def slowdown(r, field):
    return 100 * (getattr(r.job, field) / getattr(r.base, field) - 1)


def overhead(a):
    res = {}  # (hz, tool) -> [Run]
    bases = []
    header("Overhead: %d-thread fixed job, system-wide recording" % a.threads, a.argv)
    overhead_runs(a, res, bases)
    print("The job: %d threads x %d units of fixed CPU work (bench/cpujob.c), timed inside%s; "
          "each profiler records the whole system while it runs, and each profiled run is "
          "paired with a run of the job alone just before it; after each profiler stops, "
          "what it wrote is written back to disk (sync) before the next run, which its "
          "write-back would otherwise slow down, and the next run waits until the kernel's "
          "threads are quiet (what the profiler's exit left to kworkers, its BPF maps and "
          "buffers freed, would land in the next tool's run alone). Medians of %d rounds "
          "(min..max).\n\n"
          "Taken: the share of the job threads' time taken from them, profiled minus alone, "
          "in points. Each thread reads the clock every 1024 iterations of its loop "
          "(~1.3 us); a stretch that took over twice the fastest was interrupted (the "
          "sampling interrupt with the profiler's BPF program or callchain walk, the "
          "profiler's process run in its place, anything else the machine does), and what "
          "it took beyond the fastest is summed. Unlike wall and CPU time this does not move "
          "with the speed of a shared machine's CPUs (a few %% from run to run here), so it "
          "resolves costs of a fraction of a percent; it misses only what slows the work "
          "without stopping it (cache pollution: the job touches no memory). "
          "Slowdown (wall, job CPU): the job's time over its paired run alone. Profiler "
          "CPU: user+sys of the profiler over the whole run (start-up and output included; "
          "perf: perf record only); during the job: the part of it while the job ran "
          "(schedstat of its threads). No BPF statistics are enabled "
          "(kernel.bpf_stats_enabled costs every program run two clock reads): "
          "bench/bpf-cost.sh measures the BPF programs' time.%s%s\n"
          % (a.threads, a.units, pinned_note(), a.rounds,
             (" Churn: %g short processes a second (`cpujob 1 5`, ~5 ms of CPU each) start "
              "beside the job in every run, profiled or not, as on a busy machine." % a.churn)
             if a.churn else "",
             (" Settle: the job starts %g s after the profiler began sampling (its first "
              "moments' work is not in the job's time)." % a.settle) if a.settle else ""))
    print("Job alone: median %.3f s wall (%.3f..%.3f) over %d runs.\n"
          % (med(bases), min(bases), max(bases), len(bases)))
    print("| Hz | profiler | taken | min..max | slowdown (wall) | min..max | slowdown (job "
          "CPU) | min..max | profiler CPU s | during the job |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for hz in a.rates:
        for tool in a.tools:
            v = res[(hz, tool)]
            t = [by_profiler(r) for r in v]
            w = [slowdown(r, "wall") for r in v]
            c = [slowdown(r, "cpu") for r in v]
            print("| %d | %s | %+.2f %% | %+.2f..%+.2f | %+.2f %% | %+.1f..%+.1f | %+.2f %% | "
                  "%+.1f..%+.1f | %.3f | %.3f |"
                  % (hz, tool_name(tool), med(t), min(t), max(t), med(w), min(w), max(w),
                     med(c), min(c), max(c), med([r.cpu for r in v]),
                     med([r.during for r in v])))
    print("\nWhat the job's threads saw, profiled against alone: interruptions a second of "
          "a thread more than alone (about the rate in Hz: every sample that lands on a "
          "thread is seen) and what each cost; the threads' time taken alone (the machine's "
          "own interrupts); extra time runnable but waiting for a CPU "
          "(/proc/thread-self/schedstat, summed over the threads) and CPU migrations; "
          "the median interruption (what one stretch took beyond the fastest, the median "
          "over all the threads' interrupted stretches) profiled and alone. Where the "
          "samples are most of the interruptions (4999 Hz: ~5 to 1 over the machine's "
          "own, ~1,000 a second of a thread here) the median is what a sample costs the "
          "thread it lands on: the interrupt, which every tool pays, and the tool's work "
          "in it; a few long interruptions (the host preempting the VM, the profiler's "
          "process run in the job's place) do not move it as they move taken. At 999 Hz "
          "and below the samples are half or less of the interruptions and the median "
          "falls between the two kinds: read it there as noise.\n")
    print("| Hz | profiler | extra interruptions /s | us each | taken alone | extra run-queue "
          "wait, ms | min..max | migrations (alone) | median interruption, us | min..max "
          "| alone |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for hz in a.rates:
        for tool in a.tools:
            v = res[(hz, tool)]
            rate = [r.job.detours / r.job.alive - r.base.detours / r.base.alive for r in v]
            each = [1e6 * (r.job.taken - r.base.taken) / (r.job.detours - r.base.detours)
                    for r in v if r.job.detours > r.base.detours]
            wait = [1e3 * (r.job.wait - r.base.wait) for r in v]
            p50 = [r.job.p50 for r in v]
            print("| %d | %s | %+.0f | %s | %.2f %% | %+.1f | %+.1f..%+.1f | %g (%g) | %.2f | "
                  "%.2f..%.2f | %.2f |"
                  % (hz, tool_name(tool), med(rate), "%.1f" % med(each) if each else "n/a",
                     med([taken_pct(r.base) for r in v]), med(wait), min(wait), max(wait),
                     med([r.job.migrations for r in v]), med([r.base.migrations for r in v]),
                     med(p50), min(p50), max(p50), med([r.base.p50 for r in v])))
    if "perf" not in a.tools or len(a.tools) < 2:
        return

    def ref_of(tool):  # each scorch mode against perf's walk of the same kind, if run
        return ("perf-dwarf" if tool.startswith("scorch-dwarf") and "perf-dwarf" in a.tools
                else "perf")
    # the same round's runs are minutes apart at most: their difference is less blurred
    # by the machine's drift than the medians are
    print("\nAgainst perf round by round: the tool's figure minus perf record's in the same "
          "round (perf record -g; for --unwind dwarf, perf record --call-graph dwarf when it "
          "ran), in points (negative: below perf), and the median interruption minus "
          "perf's in us; median (min..max) of %d rounds, and the rounds where the tool was "
          "below perf.\n" % a.rounds)
    print("| Hz | profiler | against | taken, minus perf's | min..max | rounds below perf | "
          "wall, minus perf's | min..max | rounds below perf (wall) | median interruption, "
          "minus perf's, us | min..max | rounds below perf |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for hz in a.rates:
        for tool in a.tools:
            if tool.startswith("perf"):
                continue
            ref = res[(hz, ref_of(tool))]
            v = res[(hz, tool)]
            t = [by_profiler(x) - by_profiler(y) for x, y in zip(v, ref)]
            w = [slowdown(x, "wall") - slowdown(y, "wall") for x, y in zip(v, ref)]
            i = [x.job.p50 - y.job.p50 for x, y in zip(v, ref)]
            print("| %d | %s | %s | %+.2f | %+.2f..%+.2f | %d of %d | %+.2f | %+.1f..%+.1f | "
                  "%d of %d | %+.2f | %+.2f..%+.2f | %d of %d |"
                  % (hz, tool_name(tool), tool_name(ref_of(tool)), med(t), min(t), max(t),
                     sum(1 for x in t if x < 0), len(t), med(w), min(w), max(w),
                     sum(1 for x in w if x < 0), len(w), med(i), min(i), max(i),
                     sum(1 for x in i if x < 0), len(i)))


NAMES = {
    "scorch-fp": "scorch --unwind fp",
    "scorch-dwarf": "scorch --unwind dwarf",
    "scorch-kernel": "scorch --unwind kernel",
    "perf": "perf record -g",
    "perf-dwarf": "perf record --call-graph dwarf",
    "bpftrace": "bpftrace profile:hz",
}


# ---------------------------------------------------------------- BPF cost per sample

BPF_PROG_TYPE_PERF_EVENT = 7


def bpf_cost(a):
    """Run time of each profiler's perf_event program per sample, the tools one at a time
    on the same job, rounds interleaved: what each sample costs the interrupted task."""
    header("BPF cost per sample: %d-thread job at %d Hz, system-wide" % (a.threads, a.hz),
           a.argv)
    res = {}  # tool -> list of (ns per run, runs)
    with BpfStats():
        for rnd in range(a.rounds):
            order = rotated(a.tools, rnd)
            for tool in order:
                p = Profiler(tool, a.hz, a.work, "bc-%d-%d" % (a.tools.index(tool), rnd),
                             a.scorch)
                p.start()
                try:
                    p.bpf_usage(BPF_PROG_TYPE_PERF_EVENT)
                    ns0, cnt0 = p.bpf_ns, p.bpf_cnt
                    run_job(a.cpujob, a.threads, a.units)
                    p.bpf_usage(BPF_PROG_TYPE_PERF_EVENT)
                except BenchError:
                    p.kill()
                    raise
                p.stop()
                p.check("job_a")
                runs = p.bpf_cnt - cnt0
                if runs <= 0:
                    raise BenchError("%s: its program did not run during the job" % tool)
                ns = (p.bpf_ns - ns0) / runs
                res.setdefault(tool, []).append((ns, runs))
                log("bpf-cost: round %d %s: %.0f ns per run over %d runs"
                    % (rnd + 1, tool, ns, runs))
    print("The job: `cpujob %d %d` (%d threads of fixed CPU work with frame pointers, "
          "the same stacks on every CPU), run once per profiler per round while that "
          "profiler records the whole system at %d Hz; the profilers run one at a time, in "
          "an order rotated each round. ns per sample: run_time_ns / run_cnt of the "
          "profiler's perf_event programs during the job (kernel.bpf_stats_enabled=1, "
          "/proc/PID/fdinfo), median of %d rounds (min..max). That time is spent in the "
          "sampling interrupt, on top of what every sampler pays (the timer interrupt, "
          "perf's overflow handling); perf record's equivalent (the callchain walk and "
          "the copy into its ring buffer) has no such counter.\n"
          % (a.threads, a.units, a.threads, a.hz, a.rounds))
    print("| profiler | ns per sample | min..max | samples per job | vs %s |"
          % tool_name(a.tools[-1]))
    print("| --- | ---: | ---: | ---: | ---: |")
    ref = med([x[0] for x in res[a.tools[-1]]])
    for tool in a.tools:
        v = res[tool]
        ns = [x[0] for x in v]
        print("| %s | %.0f | %.0f..%.0f | %.0f | %.2fx |"
              % (tool_name(tool), med(ns), min(ns), max(ns), med([x[1] for x in v]), med(ns) / ref))


# ---------------------------------------------------------------- handler time per sample

# The meter: a separate bpftrace that times each expiry of a sampling event's hrtimer
# (perf_swevent_hrtimer: the cpu-clock event every tool here samples on) that lands on
# the job (comm), from the timer tracepoint before the callback to the one after it.
# Between them: the event's overflow handling, which is the tool's work (its BPF
# program, or perf's callchain walk and copy into its ring buffer) plus what is common
# to all (the event's read and the timer's re-arm). 25-ns bins up to 25 us.
METER_PROG = r"""
BEGIN { printf("ready\n"); }
tracepoint:timer:hrtimer_expire_entry
/args->function == kaddr("perf_swevent_hrtimer") && comm == "%s"/
{ @t[cpu] = args->hrtimer; @s[cpu] = nsecs; }
tracepoint:timer:hrtimer_expire_exit /@s[cpu] && @t[cpu] == args->hrtimer/
{ @ns = lhist(nsecs - @s[cpu], 0, 25000, 25); @s[cpu] = 0; }
"""


class Meter:
    """The handler-time meter (METER_PROG) around one profiled run."""

    def __init__(self, work, tag, comm):
        self.base = os.path.join(work, tag)
        self.comm = comm

    def start(self, timeout=60):
        self.proc = subprocess.Popen(["bpftrace", "-e", METER_PROG % self.comm],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=open(self.base + ".meter.err", "wb"))
        self.reader = Reader(self.proc.stdout, self.base + ".meter.out", b"ready")
        self.reader.start()
        self.reader.ready.wait(timeout)
        if self.reader.ready_at is None:
            self.kill()
            raise BenchError("the meter (bpftrace on timer:hrtimer_expire_*) did not start: "
                             + tail(self.base + ".meter.err"))

    def stop(self):
        """Returns the histogram: [(lower bound ns, width ns, count)], the last bin open."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            # seen once (bpftrace 0.17): a meter that never exits would time every later
            # run beside its own
            self.kill()
            raise BenchError("the meter (bpftrace) did not exit within 60 s of SIGINT; "
                             "killed (see %s.meter.err)" % self.base)
        self.reader.join(60)
        bins = []
        for line in open(self.base + ".meter.out", "rb"):
            m = re.match(rb"^\[(\d+), (\d+)\)\s+(\d+)", line)
            if m:
                lo, hi = int(m.group(1)), int(m.group(2))
                bins.append((lo, hi - lo, int(m.group(3))))
                continue
            m = re.match(rb"^\[(\d+), \.\.\.\)\s+(\d+)", line)
            if m:
                bins.append((int(m.group(1)), 0, int(m.group(2))))
        return bins

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def hist_quantile(bins, q):
    """The @q quantile of a histogram, interpolated inside its bin (nan if empty)."""
    total = sum(c for _, _, c in bins)
    if not total:
        return float("nan")
    want, acc = q * total, 0
    for lo, width, c in bins:
        if c and acc + c >= want:
            return lo + width * (want - acc) / c
        acc += c
    return float(bins[-1][0])


def handler_cost(a):
    """Time in the sampling event's handler per sample that lands on the job, every tool
    measured by the same meter, the tools one at a time, rounds interleaved."""
    header("Handler time per sample: %d-thread job at %d Hz, system-wide" % (a.threads, a.hz),
           a.argv)
    comm = os.path.basename(a.cpujob)[:15]
    res = {}  # tool -> [(p25, p50, p75, n)]
    for rnd in range(a.rounds):
        order = rotated(a.tools, rnd)
        for tool in order:
            tag = "hc-%d-%d" % (a.tools.index(tool), rnd)
            meter = Meter(a.work, tag, comm)
            p = Profiler(tool, a.hz, a.work, tag, a.scorch)
            meter.start()
            try:
                p.start()
                try:
                    run_job(a.cpujob, a.threads, a.units)
                except BenchError:
                    p.kill()
                    raise
                p.stop()
            finally:
                bins = meter.stop()
            p.check("job_a")
            n = sum(c for _, _, c in bins)
            if n < 100:
                raise BenchError("the meter saw %d samples on the job under %s (see %s.meter.*)"
                                 % (n, tool, os.path.join(a.work, tag)))
            q = [hist_quantile(bins, x) for x in (0.25, 0.5, 0.75)]
            res.setdefault(tool, []).append((*q, n))
            log("handler: round %d %s: median %.0f ns (quartiles %.0f, %.0f) over %d samples"
                % (rnd + 1, tool, q[1], q[0], q[2], n))
    print("The job: `cpujob %d %d` (%d threads of fixed CPU work with frame pointers, "
          "the same stacks on every CPU), run once per profiler per round while that "
          "profiler records the whole system at %d Hz; the profilers run one at a time, in "
          "an order rotated each round. Each run is timed by a meter, a separate bpftrace "
          "on the timer tracepoints (hrtimer_expire_entry and _exit) around each expiry of "
          "the cpu-clock event's timer (perf_swevent_hrtimer) that lands on the job: the "
          "event's overflow handling, which is the tool's work (its BPF program; perf's "
          "callchain walk and copy into its ring buffer) and what every tool pays alike (the "
          "event's read, the timer's forwarding, the meter's tracepoints). Unlike "
          "bench/bpf-cost.sh this times perf too, and unlike the median interruption of "
          "bench/overhead.sh it leaves out the interrupt's delivery (a VM exit here, "
          "15-18 us, the same for every tool), which blurs sub-microsecond differences. "
          "Not in it: work the tool defers out of the interrupt (ring buffer wake-ups, its "
          "own process: see overhead.sh's profiler CPU during the job). ns per sample: "
          "median of %d rounds (min..max) of each run's median (25-ns bins, interpolated), "
          "and the quartiles' medians.\n"
          % (a.threads, a.units, a.threads, a.hz, a.rounds))
    ref_tool = a.tools[-1]
    print("| profiler | ns per sample (median) | min..max | p25 | p75 | samples timed per job "
          "| vs %s |" % tool_name(ref_tool))
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    ref = med([x[1] for x in res[ref_tool]])
    for tool in a.tools:
        v = res[tool]
        p50 = [x[1] for x in v]
        print("| %s | %.0f | %.0f..%.0f | %.0f | %.0f | %.0f | %.2fx |"
              % (tool_name(tool), med(p50), min(p50), max(p50), med([x[0] for x in v]),
                 med([x[2] for x in v]), med([x[3] for x in v]), med(p50) / ref))
    if "perf" not in a.tools or len(a.tools) < 2:
        return
    print("\nAgainst perf round by round: the run's median minus perf record's in the same "
          "round (perf record -g; for --unwind dwarf, perf record --call-graph dwarf when it "
          "ran), in ns; median (min..max) of %d rounds, and the rounds where the tool was "
          "below perf.\n" % a.rounds)
    print("| profiler | against | ns, minus perf's | min..max | rounds below perf |")
    print("| --- | --- | ---: | ---: | ---: |")
    for tool in a.tools:
        if tool.startswith("perf"):
            continue
        against = ("perf-dwarf" if tool.startswith("scorch-dwarf") and "perf-dwarf" in a.tools
                   else "perf")
        d = [x[1] - y[1] for x, y in zip(res[tool], res[against])]
        print("| %s | %s | %+.0f | %+.0f..%+.0f | %d of %d |"
              % (tool_name(tool), tool_name(against), med(d), min(d), max(d),
                 sum(1 for x in d if x < 0), len(d)))


def split_tool(tool):
    """A --tools entry: (kind, scorch binary or None); kind@PATH runs another scorch
    build, e.g. to compare two commits."""
    kind, _, path = tool.partition("@")
    return kind, path or None


def tool_name(tool):
    """The name printed for a --tools entry."""
    kind, path = split_tool(tool)
    return NAMES.get(kind, kind) + (" (%s)" % path if path else "")


# ---------------------------------------------------------------- time to result

def time_to_result(a):
    header("Time to result: %g s system-wide recording at %d Hz to an SVG on disk"
           % (a.seconds, a.hz), a.argv)
    rows = []
    # scorch: one command records for -d seconds and writes the SVG
    # busy through the three recordings (scorch twice, perf) and their ends
    job = start_job_for(a.cpujob, a.threads, 3 * a.seconds + 30)
    churn = None
    if a.churn:
        churn = Churn(a.cpujob, a.churn)
        churn.start()
    try:
        # twice: the first run on a machine decompresses the debug files it needs (libc's,
        # zlib in libc6-dbg) and keeps them in the debug cache; the next reads them back
        cache = os.path.join(a.work, "debug-cache")
        for i, state in enumerate(("empty debug cache: a first run", "debug cache warm")):
            svg = os.path.join(a.work, "scorch.svg")
            p = Profiler("scorch-fp", a.hz, a.work, "ttr-scorch%d" % i, a.scorch,
                         duration=a.seconds, output=svg, extra=["--timing"],
                         env=dict(os.environ, SCORCH_CACHE_DIR=cache))
            p.start()
            st = p.stop()
            end = p.ready_at + a.seconds  # the -d deadline, measured from sampling start
            err = open(p.base + ".err").read()
            m = re.search(r"end of recording to output ([0-9.]+) ms: (.*)", err)
            if not m or not os.path.getsize(svg):
                raise BenchError("scorch wrote no SVG or no timing: " + tail(p.base + ".err"))
            n = scorch_samples(p.base + ".err")
            rows.append(("scorch record -d %g -o x.svg (%s)" % (a.seconds, state), n,
                         1e3 * (st["exit_at"] - end), "scorch --timing: %s ms (%s)"
                         % (m.group(1), m.group(2))))
            log("time-to-result: scorch (%s) %.1f ms, %d samples" % (state, rows[-1][2], n))

        # perf: record until SIGINT, then perf script | stackcollapse-perf.pl | flamegraph.pl
        p = Profiler("perf", a.hz, a.work, "ttr-perf", a.scorch)
        p.start()
        time.sleep(max(0.0, p.ready_at + a.seconds - time.monotonic()))  # the recording's length
        st = p.stop()
        n = perf_samples(p.base + ".err")
        fin = 1e3 * (st["exit_at"] - st["stop_at"])
        fg = a.flamegraph_dir
        psvg = os.path.join(a.work, "perf.svg")
        t0 = time.monotonic()
        subprocess.run("perf script -i '%s' 2>/dev/null | perl '%s/stackcollapse-perf.pl' | "
                       "perl '%s/flamegraph.pl' > '%s'" % (p.output, fg, fg, psvg),
                       shell=True, check=True)
        pipe = 1e3 * (time.monotonic() - t0)
        if not os.path.getsize(psvg) or "job_a" not in open(psvg, errors="replace").read():
            raise BenchError("the perf pipeline wrote no flame graph of the job")
        rows.append(("perf record; perf script \\| stackcollapse-perf.pl \\| flamegraph.pl", n,
                     fin + pipe, "perf record's exit %.0f ms + pipeline %.0f ms" % (fin, pipe)))
        # stage by stage, for the reading (not part of perf's figure)
        stages = []
        for name, cmd in (
                ("perf script", "perf script -i '%s' > '%s/p.txt' 2>/dev/null" % (p.output, a.work)),
                ("stackcollapse-perf.pl", "perl '%s/stackcollapse-perf.pl' '%s/p.txt' > '%s/p.folded'"
                 % (fg, a.work, a.work)),
                ("flamegraph.pl", "perl '%s/flamegraph.pl' '%s/p.folded' > '%s/p2.svg'"
                 % (fg, a.work, a.work)),
                ("scorch collapse", "'%s' collapse '%s/p.txt' -o '%s/s.folded'"
                 % (a.scorch, a.work, a.work)),
                ("scorch flamegraph", "'%s' flamegraph '%s/s.folded' > '%s/s.svg'"
                 % (a.scorch, a.work, a.work))):
            t0 = time.monotonic()
            subprocess.run(cmd, shell=True, check=True)
            stages.append("%s %.0f ms" % (name, 1e3 * (time.monotonic() - t0)))
        log("time-to-result: perf %.1f ms, %d samples" % (rows[-1][2], n))
    finally:
        if churn:
            churn.halt.set()
            churn.join()
        job.kill()
        job.wait()
    print("Workload: cpujob, %d threads busy through the recordings (plus whatever else "
          "runs on the machine)%s. Time to result: from the end of the recording (scorch: "
          "its -d deadline, %g s after sampling started; perf: the SIGINT) to the SVG on "
          "disk (scorch also fsyncs it before the rename).\n"
          % (a.threads, ", and %g short processes a second (`cpujob 1 5`) beside it, through "
             "both recordings and both ends: %d started" % (a.churn, churn.started)
             if churn else "", a.seconds))
    print("| pipeline | samples | time to result | breakdown |")
    print("| --- | ---: | ---: | --- |")
    for r in rows:
        print("| %s | %d | %.0f ms | %s |" % r)
    print("\nperf's pipeline stage by stage on the same perf.data (files between stages): "
          + ", ".join(stages) + ".")


# ---------------------------------------------------------------- start-up

def startup(a):
    header("Start-up: from the profiler's exec to sampling, system-wide at %d Hz" % a.hz,
           a.argv)
    ready, phases = {t: [] for t in a.tools}, {t: [] for t in a.tools}
    os.sync()
    for r in range(a.rounds):
        order = rotated(a.tools, r)
        for tool in order:
            scorch = tool.startswith("scorch")
            p = Profiler(tool, a.hz, a.work, "startup-%d-%s" % (r, tool.replace("/", "_")),
                         a.scorch, extra=["--timing"] if scorch else ())
            p.start()  # kills it if it does not start
            ready[tool].append(1e3 * (p.ready_at - p.started_at))
            p.stop()
            if scorch:
                err = open(p.base + ".err").read()
                m = re.search(r"timing: start-up [0-9.]+ ms: (.*)", err)
                if not m:
                    raise BenchError("%s printed no --timing: %s" % (tool, tail(p.base + ".err")))
                phases[tool].append({k.strip(): float(v) for k, v in
                                     re.findall(r"([a-z ]+) ([0-9.]+) ms", m.group(1))})
            log("startup: round %d %s %.1f ms" % (r + 1, tool, ready[tool][-1]))
    print("Each profiler starts a system-wide recording (scorch record -a, perf record -a "
          "with its events enabled through its control fifo, bpftrace profile:hz), one at a "
          "time, in an order rotated each round, and is stopped once it samples. Start-up: "
          "from the moment the harness starts it to the moment it says it samples (scorch's "
          "\"sampling\" line, perf's ack of the enable, bpftrace's BEGIN); median of %d "
          "rounds (min..max). For scorch, its own --timing phases (medians).\n" % a.rounds)
    print("| profiler | start-up | min..max | --timing phases |")
    print("| --- | ---: | ---: | --- |")
    for tool in a.tools:
        v = ready[tool]
        ph = ""
        if phases[tool]:
            keys = list(phases[tool][0])
            ph = ", ".join("%s %.1f ms" % (k, med([x.get(k, float("nan")) for x in phases[tool]]))
                           for k in keys)
        print("| %s | %.0f ms | %.0f..%.0f | %s |" % (tool_name(tool), med(v), min(v), max(v), ph))


# ---------------------------------------------------------------- footprint

def bpf_objects(pid):
    """The BPF programs and maps a process holds open, from /proc/PID/fdinfo (which
    bpftool reads too; Debian's bpftool cannot list owners): ({prog_id: fields},
    {map_id: fields}), each object once however many fds refer to it."""
    progs, maps = {}, {}
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            text = open(os.path.join(d, fd)).read()
        except OSError:
            continue  # closed meanwhile
        f = {}
        for line in text.splitlines():
            k, _, v = line.partition(":")
            v = v.strip()
            f[k] = int(v) if v.isdigit() else v
        if "prog_id" in f and "prog_type" in f:
            progs[f["prog_id"]] = f
        elif "map_id" in f and "map_type" in f:
            maps[f["map_id"]] = f
    return progs, maps


class BpfStats:
    """kernel.bpf_stats_enabled=1 inside the with block, the old value restored after."""
    path = "/proc/sys/kernel/bpf_stats_enabled"

    def __enter__(self):
        self.old = open(self.path).read().strip()
        with open(self.path, "w") as f:
            f.write("1")

    def __exit__(self, *exc):
        with open(self.path, "w") as f:
            f.write(self.old)

def footprint(a):
    header("Footprint: %g s system-wide recordings" % a.seconds, a.argv)
    rows = []
    with BpfStats():
        for hz in a.rates:
            job = start_job_for(a.cpujob, a.threads, a.seconds + 60)
            profs = []
            try:
                for i, kind in enumerate(a.tools):
                    # by index: kind@PATH holds a path
                    p = Profiler(kind, hz, a.work, "fp-%d-%d" % (i, hz), a.scorch)
                    p.start()
                    profs.append(p)
                t0 = time.monotonic()
                time.sleep(a.seconds)  # the recording's length
                for p in profs:
                    p.during = p.cpu_now()
                    if p.kind.startswith("scorch"):
                        p.bpf_usage()
                length = time.monotonic() - t0
                for p in profs:
                    st = p.stop()
                    p.check("job_a")
                    rows.append((hz, p, st, length))
                    log("footprint: %d Hz %s CPU %.2f s, peak RSS %d KiB"
                        % (hz, p.kind, st["cpu"], st["maxrss_kb"]))
            finally:
                for p in profs:
                    p.kill()
                job.kill()
                job.wait()
    print("Each profiler records the whole system (-a) for the same %g s while cpujob keeps "
          "%d threads busy; the profilers run at the same time (each sees the others as "
          "load). CPU: user+sys of the profiler process during the recording and in total "
          "(including start-up and the end: symbolizing, writing). BPF: run time of "
          "scorch's programs (kernel.bpf_stats_enabled=1, run_time_ns in /proc/PID/fdinfo), "
          "which the kernel spends in the sampled tasks' interrupts; perf's in-kernel "
          "sampling cost has no such counter. Maps: memlock of its maps in fdinfo. Peak "
          "RSS: ru_maxrss.\n" % (a.seconds, a.threads))
    print("| Hz | profiler | CPU during | CPU total | % of one CPU | BPF programs | "
          "peak RSS | kernel maps |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for hz, p, st, length in rows:
        bpf = ("%.3f s (%d runs, %.1f us each)" % (p.bpf_ns / 1e9, p.bpf_cnt,
                                                   p.bpf_ns / 1e3 / max(1, p.bpf_cnt))
               if hasattr(p, "bpf_ns") else "n/a")
        maps = "%.1f MiB" % (p.memlock / 2**20) if hasattr(p, "memlock") else "n/a"
        cpu_pct = 100 * (st["cpu"] + getattr(p, "bpf_ns", 0) / 1e9) / length
        print("| %d | %s | %.2f s | %.2f s | %.2f %% | %s | %.1f MiB | %s |"
              % (hz, tool_name(p.tool), p.during, st["cpu"], cpu_pct, bpf,
                 st["maxrss_kb"] / 1024, maps))
    print("\n% of one CPU: (CPU total + BPF) / recording length.")


# ---------------------------------------------------------------- cost per new process

def run_procs(cpujob, n, units, spawn="exec"):
    """Runs @n processes `cpujob 1 @units` one after another, from a /bin/sh loop: the
    forks of this Python (a large libpython whose line tables a profiler would read the
    first time one of them is sampled) would add a one-time cost to some runs only.
    @spawn "fork": @n children forked one after another by one cpujob, which do not exec
    (`cpujob 1 @units -f @n`). Returns the CPU time the processes took, ns (their own
    and the kernel's work in them: wait4's rusage of the waited-for descendants)."""
    t0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if spawn == "fork":
        cmd = [cpujob, "1", str(units), "-f", str(n)]
    else:
        cmd = ["/bin/sh", "-c",
               'i=0; while [ $i -lt %d ]; do "$0" 1 %d >/dev/null || exit 1; i=$((i+1)); '
               'done' % (n, units), cpujob]
    if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode:
        raise BenchError("cpujob 1 %d failed" % units)
    t1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1e9 * (t1.ru_utime + t1.ru_stime - t0.ru_utime - t0.ru_stime)


def settle(p, quiet_ns=1e6, timeout=15):
    """Waits until the profiler is done with the processes that exited (scorch symbolizes
    them within a second or two once the CPUs are idle): until its CPU time grows by less
    than @quiet_ns in half a second, after 5 s at least. Returns its run time (ns)."""
    time.sleep(5)
    last = p.run_ns()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = p.run_ns()
        if now - last < quiet_ns:
            return now
        last = now
    raise BenchError("%s kept running for %d s after the processes ended" % (p.kind, timeout))


def proc_cost(a):
    """What each new process costs a system-wide recording: the profiler's own CPU per
    process started (reading its mappings, symbolizing and releasing it when it exits),
    the tools one at a time, rounds interleaved."""
    header("Cost per new process: %d short processes under a system-wide recording at "
           "%d Hz" % (a.procs, a.hz), a.argv)
    warm = 20
    res = {}  # tool -> [(profiler us per process, seen, gone, the processes' extra us)]
    for rnd in range(a.rounds):
        order = rotated(a.tools, rnd)
        # the processes' own CPU time without a profiler, in this round
        alone = run_procs(a.cpujob, a.procs, a.units, a.spawn)
        for tool in order:
            p = Profiler(tool, a.hz, a.work, "pc-%d-%d" % (a.tools.index(tool), rnd), a.scorch)
            p.start()
            try:
                # what is done once per recording (libc's symbols and line tables)
                run_procs(a.cpujob, warm, a.units, a.spawn)
                r0 = settle(p)
                own = run_procs(a.cpujob, a.procs, a.units, a.spawn)
                r1 = settle(p)
            except BenchError:
                p.kill()
                raise
            p.stop()
            p.check("job_a")
            seen = gone = float("nan")
            if p.kind.startswith("scorch"):
                m = re.search(r"processes: (\d+) seen.*?(\d+) gone before", open(
                    p.base + ".err", errors="replace").read())
                if m:
                    seen, gone = int(m.group(1)), int(m.group(2))
            us = (r1 - r0) / 1e3 / a.procs
            extra = (own - alone) / 1e3 / a.procs
            res.setdefault(tool, []).append((us, seen, gone, extra))
            log("proc-cost: round %d %s: %.0f us of its CPU per process; the processes "
                "took %+.0f us each more than alone" % (rnd + 1, tool, us, extra))
    how = ("forked one after another by one `cpujob 1 %d -f %d` (children that do not "
           "exec: a worker pool's processes)" % (a.units, a.procs) if a.spawn == "fork"
           else "started one after another by a /bin/sh loop")
    print("Each round: %d processes `cpujob 1 %d` (about %d ms of CPU each, libc's frames on "
          "their stacks) %s under each profiler in turn (order rotated each "
          "round), which records the whole system at %d Hz and has "
          "seen %d such processes before (what it does once, such as reading libc's "
          "symbol and line tables, is left out). Profiler CPU per process: the profiler's threads' run time "
          "(schedstat) from before the first process to when it is done with the last "
          "(scorch symbolizes exited processes within a second or two once the CPUs are "
          "idle: 5 s, then until its CPU time grows by less than 1 ms in half a second), "
          "over "
          "the processes. That is the work a recording does per process in its own process "
          "(scorch: reading the kernel's fork, exec and mmap records of it, or "
          "/proc/PID/maps for an image begun before the recording or not on record, "
          "symbolizing its stacks and releasing it when it exits; perf record: "
          "copying the kernel's records of it out of its ring buffers, which it does only "
          "when one is half full; what it defers to its end, such as reading the samples "
          "for build-ids, is not counted). What the kernel does in the process itself for "
          "perf record and scorch (a record of each exec, executable mmap and exit into a "
          "CPU's ring buffer; scorch's BPF programs at its fork, exec and exit) and for "
          "every tool in its samples is in the last columns: what the %d processes took "
          "(wait4's rusage of them) profiled minus alone, each round's run of them alone "
          "just before its profiled runs, per process. "
          "Medians of %d rounds (min..max).\n"
          % (a.procs, a.units, a.units, how, a.hz, warm, a.procs, a.rounds))
    print("| profiler | profiler CPU per process, us | min..max | processes seen (gone "
          "before read) | the processes' CPU per process, profiled minus alone, us | min..max |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for tool in a.tools:
        v = res[tool]
        us = [x[0] for x in v]
        seen = ("n/a" if math.isnan(v[0][1])  # not scorch
                else "%d (%d)" % (med([x[1] for x in v]), med([x[2] for x in v])))
        extra = [x[3] for x in v]
        print("| %s | %.0f | %.0f..%.0f | %s | %+.0f | %+.0f..%+.0f |"
              % (tool_name(tool), med(us), min(us), max(us), seen, med(extra), min(extra),
                 max(extra)))


# ---------------------------------------------------------------- accuracy

def shares(folded_lines):
    """Samples of burn_a/b/c in folded lines -> (a, b, c)."""
    n = {"burn_a": 0, "burn_b": 0, "burn_c": 0}
    for line in folded_lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack.startswith("split"):
            continue
        for name in n:
            if (";" + name) in stack:
                n[name] += int(count)
                break
    return n["burn_a"], n["burn_b"], n["burn_c"]


def accuracy(a):
    header("Sample accuracy: tests/workloads/split (50/30/20 by construction)", a.argv)
    rows = []
    for hz in a.rates:
        for tool in ("scorch", "perf"):
            base = os.path.join(a.work, "acc-%s-%d" % (tool, hz))
            cmd = [a.split, "--seconds", str(a.seconds), "--threads", str(a.threads)]
            if tool == "scorch":
                argv = [a.scorch, "record", "-q", "-F", str(hz), "-o", base + ".folded", "--"]
            else:
                argv = ["perf", "record", "-q", "-g", "-F", str(hz), "-o", base + ".data", "--"]
            r = subprocess.run(argv + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
            if r.returncode not in (0, 3):
                raise BenchError("%s record failed: %s" % (tool, r.stderr.strip()[-300:]))
            if tool == "perf":
                script = subprocess.run("perf script -F comm,tid,time,event,ip,sym,dso -i '%s' 2>/dev/null | perl '%s/stackcollapse-perf.pl'"
                                        % (base + ".data", a.flamegraph_dir), shell=True,
                                        capture_output=True, text=True, check=True)
                lines = script.stdout.splitlines()
            else:
                lines = open(base + ".folded").read().splitlines()
            s = shares(lines)
            total = sum(s)
            if total < 20:
                raise BenchError("%s recorded %d samples of the workload" % (tool, total))
            pct = [100 * x / total for x in s]
            err = max(abs(p - t) for p, t in zip(pct, (50, 30, 20)))
            # binomial standard error of the largest share (50 %), for scale
            se = 100 * (0.25 / total) ** 0.5
            rows.append((hz, tool, total, pct, err, se))
            log("accuracy: %d Hz %-6s %d samples: %.1f/%.1f/%.1f" % (hz, tool, total, *pct))
    print("split --threads %d --seconds %g under `scorch record -F HZ -- split` and `perf "
          "record -g -F HZ -- split` (perf script without the period field | stackcollapse-perf.pl: one count per sample); shares of "
          "burn_a/b/c among the workload's samples in them; error: the largest difference "
          "from 50/30/20 in points; 1 s.e.: the binomial standard error of a 50 %% share "
          "with that many samples (differences within ~2 s.e. are chance).\n"
          % (a.threads, a.seconds))
    print("| Hz | profiler | samples | burn_a | burn_b | burn_c | error | 1 s.e. |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for hz, tool, total, pct, err, se in rows:
        print("| %d | %s | %d | %.1f %% | %.1f %% | %.1f %% | %.1f pt | %.1f pt |"
              % (hz, tool, total, *pct, err, se))


# ---------------------------------------------------------------- placement

BURN = ("import sys, time\nt = time.monotonic()\nwhile time.monotonic() - t < %g: pass\n"
        "sys.stdout.write('x'); sys.stdout.flush(); time.sleep(60)")


def sleepers(seconds):
    """Tasks that each burn a CPU for one of @seconds, then sleep (their utilization stays
    with the CPU they ran on, decaying): started at once, returned when all have burned."""
    ps = [subprocess.Popen([sys.executable, "-c", BURN % s], stdout=subprocess.PIPE)
          for s in seconds]
    for p in ps:
        p.stdout.read(1)
    return ps


def placement(a):
    """How often the scheduler starts the job's threads on one CPU, unpinned: the job at
    once (or a delay) after each profiler says it samples, and without a profiler after
    tasks that burned one or both CPUs and sleep."""
    header("Placement: the job's threads started on one CPU, unpinned (%d Hz)" % a.hz, a.argv)
    os.environ["CPUJOB_PIN"] = "0"
    cases = [(t, d) for t in a.tools for d in a.delays]
    cases += [("none", None), ("one sleeper", (0.06,)), ("two sleepers", (0.06, 0.03))]
    res = {c: [] for c in cases}
    for r in range(a.rounds):
        for case in rotated(cases, r):
            quiesce()
            tool, arg = case
            p, ps = None, []
            if tool in ("none", "one sleeper", "two sleepers"):
                ps = sleepers(arg or ())
            else:
                p = Profiler(tool, a.hz, a.work, "place-%d" % r, a.scorch)
                p.start()
                time.sleep(arg)
            ns0, k0 = p.run_ns() if p else 0, kthreads_run_ns()
            try:
                job = run_job(a.cpujob, a.threads, a.units)
            except BenchError:
                if p:
                    p.kill()
                raise
            finally:
                for q in ps:
                    q.kill()
                    q.wait()
            during = (p.run_ns() - ns0) / 1e6 if p else 0
            kern = (kthreads_run_ns() - k0) / 1e6
            if p:
                p.stop()
            res[case].append((job.migrations, job.wait * 1e3, during, kern))
            log("placement: round %d %-13s %-9s %d migrations, waited %.1f ms; profiler %.2f "
                "ms, kernel threads %.2f ms" % (r + 1, tool, "" if arg is None else
                                                 "%g s" % arg if p else
                                                 "+".join("%d ms" % (1e3 * x) for x in arg),
                                                 job.migrations, job.wait * 1e3, during, kern))
    print("The job (`cpujob %d %d`, ~0.15 s), its threads placed by the scheduler (PIN=0), "
          "run at once when each profiler says it samples or after a delay, in a system-wide "
          "recording at %d Hz; without a profiler, alone, and at once after one or two tasks "
          "that burned a CPU (60 ms; 60 and 30 ms beside each other) and now sleep. A run "
          "with a migration is one where both threads started on one CPU and one was moved "
          "away later (the job's two threads do not move otherwise); the wait is their time "
          "runnable on a run queue (schedstat). Profiler: its CPU from the moment it said it "
          "samples to the job's end; kernel threads: kthreadd's children's CPU during the "
          "job. Medians of %d rounds, cases in an order rotated each round.\n"
          % (a.threads, a.units, a.hz, a.rounds))
    print("| case | delay, s | runs with a migration | wait, ms (median) | max | profiler, ms "
          "| kernel threads, ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in cases:
        tool, arg = case
        rows = res[case]
        name = {"none": "no profiler",
                "one sleeper": "no profiler, after a task that burned a CPU and sleeps",
                "two sleepers": "no profiler, after two that burned both CPUs and sleep",
                }.get(tool) or tool_name(tool)
        print("| %s | %s | %d of %d | %.1f | %.1f | %s | %.2f |"
              % (name, "%g" % arg if tool in a.tools else "",
                 sum(1 for m in rows if m[0]), len(rows), med([m[1] for m in rows]),
                 max(m[1] for m in rows),
                 "%.2f" % med([m[2] for m in rows]) if tool in a.tools else "",
                 med([m[3] for m in rows])))
    print()


# ---------------------------------------------------------------- runqueue split

# blocked from switch-out to sched_wakeup, then runqueue to switch-in; runnable switch-outs
# (tracefs's prev_state 0, or TASK_REPORT_MAX when preempted) are runqueue from the start
RQ_BPFTRACE = r"""
BEGIN { printf("ready\n"); }
tracepoint:sched:sched_switch /pid == $1/ {
	if (args->prev_state == 0 || args->prev_state >= 256) { @since[tid] = nsecs; }
	else { @out[tid] = nsecs; }
}
tracepoint:sched:sched_wakeup /@out[args->pid]/ {
	@blocked = sum(nsecs - @out[args->pid]); delete(@out[args->pid]);
	@since[args->pid] = nsecs;
}
tracepoint:sched:sched_switch /@since[args->next_pid]/ {
	@runq = sum(nsecs - @since[args->next_pid]); delete(@since[args->next_pid]);
}
END { clear(@out); clear(@since); }
"""


def schedstat_ns(pid):
    """(on-CPU, run_delay) ns, schedstat's first two fields, summed over @pid's threads."""
    exec_ns = delay = 0
    d = "/proc/%d/task" % pid
    for t in os.listdir(d):
        try:
            with open(os.path.join(d, t, "schedstat")) as f:
                v = f.read().split()
            exec_ns += int(v[0])
            delay += int(v[1])
        except (OSError, IndexError, ValueError):
            pass
    return exec_ns, delay


def gated(argv, cpu, out, err):
    """Forks a child pinned to @cpu that waits for a byte on a pipe, then execs @argv
    (the same PID, known to the tools before it runs). Returns (pid, the pipe's end)
    once the child sleeps on the pipe: a tool started then sees no interval of the
    child begin before the byte."""
    r, w = os.pipe()
    rr, rw = os.pipe()
    fo, fe = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), \
        os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            os.close(rr)
            os.sched_setaffinity(0, {cpu})
            os.write(rw, b"r")
            os.read(r, 1)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.dup2(fo, 1)
            os.dup2(fe, 2)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    for fd in (r, rw, fo, fe):
        os.close(fd)
    if os.read(rr, 1) != b"r":
        raise BenchError("the gated child of %s died" % argv[0])
    os.close(rr)
    # after its byte the child has nothing left to do but block on the pipe
    deadline = time.monotonic() + 10
    while open("/proc/%d/stat" % pid).read().rpartition(")")[2].split()[0] != "S":
        if time.monotonic() > deadline:
            raise BenchError("the gated child of %s does not sleep" % argv[0])
        time.sleep(0.001)
    return pid, w


def scorch_split(folded):
    """(blocked, runqueue) seconds in a folded file of one process (microseconds)."""
    b = q = 0
    for line in open(folded, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if stack.endswith(";[runqueue]"):
            q += int(n)
        else:
            b += int(n)
    return b / 1e6, q / 1e6


TIMEHIST_ROW = re.compile(r"^\s*[0-9.]+\s+\[\d+\]\s+.*\[(\d+)(?:/(\d+))?\]\s+"
                          r"([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")


def timehist_split(data, pid):
    """(blocked, runqueue) seconds of process @pid by perf sched timehist: its wait time
    (switch-out to switch-in) less its sch delay (waking to switch-in), and the delay."""
    r = subprocess.run(["perf", "sched", "timehist", "-i", data, "-p", str(pid)],
                       capture_output=True, text=True)
    if r.returncode:
        raise BenchError("perf sched timehist failed: " + r.stderr.strip()[-300:])
    wait = delay = 0.0
    for line in r.stdout.splitlines():
        m = TIMEHIST_ROW.match(line)
        if m:
            wait += float(m.group(3))
            delay += float(m.group(4))
    return (wait - delay) / 1e3, delay / 1e3


def bpftrace_split(out):
    v = {}
    for line in open(out, errors="replace"):
        m = re.match(r"^@(blocked|runq): (\d+)", line)
        if m:
            v[m.group(1)] = int(m.group(2)) / 1e9
    return v.get("blocked", 0.0), v.get("runq", 0.0)


def rq_run(a, name, argv, cpu, rnd):
    """One run of @argv gated on @cpu beside two busy loops there, all tools at once."""
    base = os.path.join(a.work, "rq-%s-%d" % (name, rnd))
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"],
                             preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
            for _ in range(2)]
    pid, gate = gated(argv, cpu, base + ".wl.out", base + ".wl.err")
    wl_pid, procs = pid, []
    try:
        sc = subprocess.Popen([a.scorch, "record", "--mode", "offcpu", "-p", str(pid), "-o",
                               base + ".folded"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(sc)
        sc_reader = Reader(sc.stderr, base + ".scorch.err", b"scorch: sampling")
        sc_reader.start()
        pf = perf_start(["perf", "sched", "record", "-D", "-1", "--control",
                         "fifo:%s.ctl,%s.ack" % (base, base), "-o", base + ".data"], base)
        procs.append(pf)
        bt = subprocess.Popen(["bpftrace", "-e", RQ_BPFTRACE, str(pid)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=open(base + ".bt.err", "wb"))
        procs.append(bt)
        bt_reader = Reader(bt.stdout, base + ".bt.out", b"ready")
        bt_reader.start()
        for rd, what, err in ((sc_reader, "scorch", base + ".scorch.err"),
                              (bt_reader, "bpftrace", base + ".bt.err")):
            rd.ready.wait(60)
            if rd.ready_at is None:
                raise BenchError("%s did not start: %s" % (what, tail(err)))
        start = schedstat_ns(pid)  # it waits on the gate: nothing is added meanwhile
        t0 = time.monotonic()
        os.write(gate, b"g")
        os.close(gate)
        gate = None
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        elapsed = time.monotonic() - t0
        end = schedstat_ns(pid)  # the zombie keeps its leader's figures until reaped
        _, status = os.waitpid(pid, 0)
        pid = None
        if status:
            raise BenchError("%s failed: %s" % (name, tail(base + ".wl.err")))
        m = re.search(r"run_delay_ns (\d+)", open(base + ".wl.out").read())
        if m:  # a multithreaded workload's own sum over its threads before they exit
            end = (None, int(m.group(1)))
        if sc.wait(60):
            raise BenchError("scorch record failed: " + tail(base + ".scorch.err"))
        for p in (pf, bt):
            p.send_signal(signal.SIGINT)
            p.wait(60)
        sc_reader.join()
        bt_reader.join()
    finally:
        if gate is not None:
            os.close(gate)
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        for p in procs + busy:
            if p.poll() is None:
                p.kill()
                p.wait()
    m = re.search(r"scorch: (\d+) off-CPU intervals", open(base + ".scorch.err").read())
    return {
        "elapsed": elapsed,
        "intervals": int(m.group(1)) if m else 0,
        "scorch": scorch_split(base + ".folded"),
        "perf": timehist_split(base + ".data", wl_pid),
        "bpftrace": bpftrace_split(base + ".bt.out"),
        "schedstat": (end[1] - start[1]) / 1e9,
        # a single thread's time off CPU: its life less its time on CPU
        "off": elapsed - (end[0] - start[0]) / 1e9 if end[0] is not None else None,
    }


def fs_type(path):
    """The type of the filesystem @path is on (/proc/mounts' longest matching mount)."""
    best, kind = "", "?"
    path = os.path.realpath(path)
    for line in open("/proc/mounts"):
        f = line.split()
        mnt = f[1].replace("\\040", " ")
        if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, kind = mnt, f[2]
    return kind


def runqueue(a):
    header("Blocked and runqueue time: dd oflag=sync and a Python thread pool beside two "
           "busy loops on one CPU", a.argv)
    cpu = max(os.sched_getaffinity(0))
    pool = [sys.executable, a.pool, str(a.tasks), str(a.workers)]
    ddfile = os.path.join(a.work, "dd.out")
    dd = ["dd", "if=/dev/zero", "of=" + ddfile, "bs=4k", "count=%d" % a.count, "oflag=sync"]
    rows = []
    for r in range(a.rounds):
        for name, argv in (("dd", dd), ("pool", pool)):
            res = rq_run(a, name, argv, cpu, r)
            rows.append((name, res))
            log("runqueue: round %d %s: %.2f s; scorch %.3f/%.3f, perf %.3f/%.3f, bpftrace "
                "%.3f/%.3f blocked/runqueue s, schedstat run_delay %.3f s"
                % (r + 1, name, res["elapsed"], *res["scorch"], *res["perf"],
                   *res["bpftrace"], res["schedstat"]))
            if os.path.exists(ddfile):
                os.unlink(ddfile)
    print("Each run: the workload pinned to CPU %d beside two shell busy loops pinned there, "
          "started once every tool records it (a fork waiting on a pipe, then exec), all "
          "tools on the same run: `scorch record --mode offcpu -p PID` (frame pointers; "
          "blocked: its stacks without [runqueue], runqueue: those with it); `perf sched "
          "record` (system-wide, events enabled through its control fifo) then `perf sched "
          "timehist -p PID` (runqueue: its sch delay column summed, from sched_waking or "
          "a preemption to the switch-in; blocked: its wait time column, switch-out to "
          "switch-in, less the delay; it leaves out each thread's first interval); a "
          "bpftrace program on tracepoint:sched:sched_switch and sched_wakeup (switch-out "
          "to wakeup, wakeup or runnable switch-out to switch-in); the growth of "
          "/proc/PID/task/*/schedstat's run_delay from the gate to the end (dd: its "
          "zombie's; the pool: its own sum over its threads before it exits, which also "
          "has each new thread's wait for its first run), and for dd its time off CPU: "
          "from the gate to its exit, less the growth of schedstat's time on CPU. dd: "
          "`dd if=/dev/zero of=FILE bs=4k count=%d oflag=sync` (FILE on %s, %s); pool: "
          "bench/rqpool.py, %d tasks of "
          "a 256 KiB sha256 and a 1 ms sleep on %d threads. Seconds. The tracers stamp "
          "each end of an interval at a tracepoint, microseconds after the scheduler's "
          "own clock (which schedstat reads) stamped it: on intervals of ~100 us (dd's) "
          "scorch and bpftrace alike read a few %% above schedstat; perf's delay starts "
          "at sched_waking, earlier than sched_wakeup.\n"
          % (cpu, a.count, fs_type(a.work), os.path.dirname(a.work), a.tasks, a.workers))
    print("| workload | run | source | blocked | runqueue | off CPU | runqueue / schedstat |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for i, (name, res) in enumerate(rows):
        rnd = i // 2 + 1
        ss = res["schedstat"]
        for src, label in (("scorch", "scorch record"), ("perf", "perf sched timehist"),
                           ("bpftrace", "bpftrace")):
            b, q = res[src]
            print("| %s | %d | %s | %.3f | %.3f | %.3f | %.3f |"
                  % (name, rnd, label, b, q, b + q, q / ss if ss else float("nan")))
        print("| %s | %d | schedstat | | %.3f | %s | 1 |"
              % (name, rnd, ss, "%.3f" % res["off"] if res["off"] is not None else ""))
    print()
    for i, (name, res) in enumerate(rows):
        n = res["intervals"]
        if n:
            print("%s, run %d: %.2f s from the gate to its exit, %d intervals counted by "
                  "scorch; its runqueue time is %+.1f us per interval beside schedstat's, "
                  "bpftrace's %+.1f us" % (name, i // 2 + 1, res["elapsed"], n,
                                           1e6 * (res["scorch"][1] - res["schedstat"]) / n,
                                           1e6 * (res["bpftrace"][1] - res["schedstat"]) / n))


# ---------------------------------------------------------------- after the exit

def exit_cost(a):
    header("After the %s: what a profiler leaves the machine when it %s (%d Hz, "
           "system-wide)" % (a.at, "stops" if a.at == "exit" else "starts", a.hz), a.argv)
    res = {t: [] for t in a.tools}
    os.sync()
    for r in range(a.rounds):
        for tool in rotated(a.tools, r):
            p = Profiler(tool, a.hz, a.work, "exit-%d-%d" % (a.tools.index(tool), r), a.scorch)
            p.start()
            if a.at == "exit":
                time.sleep(a.seconds)
                p.stop()
                os.sync()
            try:
                k0 = kthreads_run_ns()
                after = run_job(a.cpujob, a.threads, a.units)
                k1 = kthreads_run_ns()
                time.sleep(2.0)
                k2 = kthreads_run_ns()
                later = run_job(a.cpujob, a.threads, a.units)
                k3 = kthreads_run_ns()
            except BenchError:
                if a.at == "start":
                    p.kill()
                raise
            if a.at == "start":
                p.stop()
                os.sync()
            if not (after.alive and later.alive):
                raise BenchError("cpujob printed no lifetimes: rebuild it from bench/cpujob.c")
            row = (taken_pct(after) - taken_pct(later),
                   100 * (after.long_s / after.alive - later.long_s / later.alive),
                   ((k1 - k0) - (k3 - k2)) / 1e6)
            res[tool].append(row)
            log("exitcost: round %d %-13s right after the %s minus 2 s later: taken %+.2f "
                "points, in long interruptions %+.2f; the kernel's threads %+.1f ms"
                % ((r + 1, tool, a.at) + row))
        quiesce()
    if a.at == "start":
        intro = ("Each profiler records the whole system, one at a time, in an order rotated "
                 "each round; the job (`cpujob %d %d`%s) runs at once when it says it samples, "
                 "then again 2 s later in the same recording. What the first run lost beyond "
                 "the second is what the profiler's start left to the machine, and its first "
                 "moments (scorch: the processes it samples first, their maps and files "
                 "read). " % (a.threads, a.units, pinned_note()))
    else:
        intro = ("Each profiler records the whole system for %g s (nothing else running), one "
                 "at a time, in an order rotated each round; once it has exited and what it "
                 "wrote is written back (sync), the job (`cpujob %d %d`%s) runs at once, then "
                 "again 2 s later. What the first run lost beyond the second is what the "
                 "profiler's exit left to the machine: in the kernel, its BPF maps, programs "
                 "and perf buffers freed by kworkers (what bench/overhead.sh now waits out "
                 "between runs). " % (a.seconds, a.threads, a.units, pinned_note()))
    print(intro + "Taken: as in bench/overhead.sh, points of the job threads' time; long "
          "interruptions: those over 50 us (a task run in a thread's place); the kernel's "
          "threads: the CPU time of kthreadd's children (kworkers, RCU, ksoftirqd) during "
          "each run, first minus second. Medians of %d rounds (min..max).\n" % a.rounds)
    print("| profiler | taken, right after the %s minus 2 s later | min..max | in long "
          "interruptions | the kernel's threads, ms | min..max |" % a.at)
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for t in a.tools:
        v = res[t]
        col = [[x[i] for x in v] for i in range(3)]
        print("| %s | %+.2f | %+.2f..%+.2f | %+.2f | %+.1f | %+.1f..%+.1f |"
              % (tool_name(t), med(col[0]), min(col[0]), max(col[0]), med(col[1]),
                 med(col[2]), min(col[2]), max(col[2])))


def main():
    ap = argparse.ArgumentParser(prog="bench.py")
    ap.add_argument("bench", choices=["overhead", "ttr", "footprint", "accuracy", "bpfcost",
                                      "handler", "proccost", "startup", "exitcost",
                                      "placement", "runqueue"])
    ap.add_argument("--scorch", required=True)
    ap.add_argument("--cpujob")
    ap.add_argument("--split")
    ap.add_argument("--work", required=True)
    ap.add_argument("--flamegraph-dir")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--units", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--churn", type=float, default=0,
                    help="short processes started a second during each job run")
    ap.add_argument("--settle", type=float, default=0,
                    help="seconds between a profiler's start of sampling and the job")
    ap.add_argument("--at", choices=["exit", "start"], default="exit")
    ap.add_argument("--delays", type=float, nargs="+", default=[0, 0.05, 0.3, 1],
                    help="seconds from a profiler's start of sampling to the job (placement)")
    ap.add_argument("--procs", type=int, default=200)
    ap.add_argument("--spawn", choices=["exec", "fork"], default="exec")
    ap.add_argument("--rates", type=int, nargs="+", default=[99, 999, 4999])
    ap.add_argument("--hz", type=int, default=999)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--tools", nargs="+", default=["scorch-fp", "scorch-dwarf", "perf",
                                                   "bpftrace"])
    ap.add_argument("--count", type=int, default=20000, help="runqueue: dd's blocks")
    ap.add_argument("--tasks", type=int, default=2000, help="runqueue: the pool's tasks")
    ap.add_argument("--workers", type=int, default=4, help="runqueue: the pool's threads")
    ap.add_argument("--pool", help="runqueue: bench/rqpool.py")
    ap.add_argument("--argv", nargs="+", default=[], help="the command line to print")
    a = ap.parse_args()
    a.scorch = os.path.abspath(a.scorch)
    try:
        {"overhead": overhead, "ttr": time_to_result, "footprint": footprint,
         "accuracy": accuracy, "bpfcost": bpf_cost, "handler": handler_cost,
         "proccost": proc_cost, "startup": startup, "exitcost": exit_cost,
         "placement": placement, "runqueue": runqueue}[a.bench](a)
    except (BenchError, subprocess.CalledProcessError, OSError) as e:
        log("%s: %s" % (a.bench, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
