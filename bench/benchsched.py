# SPDX-License-Identifier: MIT
"""bench: the scheduler benchmarks of bench.py: where the job's threads are placed,
the runqueue split beside perf sched, what a profiler leaves after it exits."""
import os
import re
import signal
import subprocess
import sys
import time

from benchlib import (BenchError, Profiler, Reader, header, kthreads_run_ns, log, med,
                      perf_start, pinned_note, quiesce, rotated, run_job, tail, taken_pct,
                      tool_name)
from summary import bpftrace_scalar, from_file, scorch_figure


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
    """(blocked, runqueue) seconds of RQ_BPFTRACE's sums."""
    return tuple(from_file(bpftrace_scalar, out, name) / 1e9 for name in ("@blocked", "@runq"))


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
    return {
        "elapsed": elapsed,
        "intervals": from_file(scorch_figure, base + ".scorch.err", "intervals"),
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
