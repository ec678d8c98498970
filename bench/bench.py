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
import resource
import signal
import subprocess
import sys
import time

from benchlib import (BenchError, Churn, Profiler, Reader, header, log, med, pinned_note,
                      quiesce, rotated, run_job, start_job_for, tail, taken_pct, tool_name)
from benchsched import exit_cost, placement, runqueue
from summary import (SummaryError, bpftrace_hist, from_file, perf_samples, scorch_processes,
                     scorch_samples, scorch_timing)


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
        return from_file(bpftrace_hist, self.base + ".meter.out", "@ns")

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
            if not os.path.getsize(svg):
                raise BenchError("scorch wrote no SVG: " + tail(p.base + ".err"))
            ms, phases = from_file(scorch_timing, p.base + ".err", "end of recording to output")
            n = from_file(scorch_samples, p.base + ".err")
            rows.append(("scorch record -d %g -o x.svg (%s)" % (a.seconds, state), n,
                         1e3 * (st["exit_at"] - end), "scorch --timing: %.1f ms (%s)"
                         % (ms, ", ".join("%s %.1f ms" % kv for kv in phases.items()))))
            log("time-to-result: scorch (%s) %.1f ms, %d samples" % (state, rows[-1][2], n))

        # perf: record until SIGINT, then perf script | stackcollapse-perf.pl | flamegraph.pl
        p = Profiler("perf", a.hz, a.work, "ttr-perf", a.scorch)
        p.start()
        time.sleep(max(0.0, p.ready_at + a.seconds - time.monotonic()))  # the recording's length
        st = p.stop()
        n = from_file(perf_samples, p.base + ".err")
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
                phases[tool].append(from_file(scorch_timing, p.base + ".err", "start-up")[1])
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
            # scorch -v: its summary's processes line (seen, gone before read)
            p = Profiler(tool, a.hz, a.work, "pc-%d-%d" % (a.tools.index(tool), rnd), a.scorch,
                         extra=["-v"] if tool.startswith("scorch") else ())
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
                seen, _, _, gone = from_file(scorch_processes, p.base + ".err")
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
    except (BenchError, SummaryError, subprocess.CalledProcessError, OSError) as e:
        log("%s: %s" % (a.bench, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
