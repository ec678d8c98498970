# SPDX-License-Identifier: MIT
"""bench: what the benchmarks of bench.py and benchsched.py share: the profilers
started and stopped, the CPU job and its runs, the machine and tools described."""
import collections
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

from summary import bpftrace_map, from_file, perf_samples


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
            ok = from_file(perf_samples, self.base + ".err") > 0
        else:
            ok = len(from_file(bpftrace_map, self.base + ".out", "@")) > 0
        if not ok:
            raise BenchError("%s recorded nothing of the workload (see %s.*)" % (self.kind,
                                                                               self.base))


def tail(path, n=3):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-n:])
    except OSError:
        return "(no output)"


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



def pinned_note():
    """How the job's threads were placed (CPUJOB_PIN, set by lib.sh's pin_job)."""
    if os.environ.get("CPUJOB_PIN") == "1":
        return (", each thread created on a CPU of its own and kept there (PIN=1; placed by "
                "the scheduler, the two threads now and then start on one CPU and wait 10 to "
                "40 ms for one to be moved: a placement, not a sampling cost, that moves a "
                "run by up to 2 points, and came more often under scorch than under perf)")
    return ", its threads placed by the scheduler (PIN=0)"


NAMES = {
    "scorch-fp": "scorch --unwind fp",
    "scorch-dwarf": "scorch --unwind dwarf",
    "scorch-kernel": "scorch --unwind kernel",
    "perf": "perf record -g",
    "perf-dwarf": "perf record --call-graph dwarf",
    "bpftrace": "bpftrace profile:hz",
}


def split_tool(tool):
    """A --tools entry: (kind, scorch binary or None); kind@PATH runs another scorch
    build, e.g. to compare two commits."""
    kind, _, path = tool.partition("@")
    return kind, path or None


def tool_name(tool):
    """The name printed for a --tools entry."""
    kind, path = split_tool(tool)
    return NAMES.get(kind, kind) + (" (%s)" % path if path else "")


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
