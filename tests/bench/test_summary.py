#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/bench: bench/summary.py, the one reader of what scorch, perf and bpftrace print
# that the benches take their figures from. First fixed samples of each form: scorch's
# summary in every mode (cpu, off-CPU, wall, event), with and without -v, with --interval,
# -q and losses, lines it does not know around it; perf record's and perf report's; the
# bpftrace maps and histograms the benches print. Then the summaries this scorch prints:
# `scorch report` of captures written by `test_capture --summary MODE` goes through the
# summary code record uses (profiler/summary.c), so a change of its wording that the
# reader does not follow fails here, without privilege (tests/bench/record.sh does the
# same on a real recording).
# usage: test_summary.py TEST_CAPTURE SCORCH BENCH_DIR
import os
import subprocess
import sys
import tempfile

TEST_CAPTURE, SCORCH, BENCH = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, BENCH)
import summary as S  # noqa: E402


class CheckError(Exception):
    pass


def check(cond, what):
    if not cond:
        raise CheckError(what)


def fails(fn, *args, says=""):
    """@fn(*args) must raise SummaryError whose message holds @says."""
    try:
        got = fn(*args)
    except S.SummaryError as e:
        check(says in str(e), "the error '%s' does not say '%s'" % (e, says))
        return
    raise CheckError("%s read %r where it should have failed" % (fn.__name__, got))


def same(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


# ---------------------------------------------------------------- scorch, fixed samples

CPU = """\
scorch: sampling all CPUs at 999 Hz (--unwind dwarf); Ctrl-C to stop
scorch: -F lowered to 499 Hz: the sampling cost more than its budget
scorch: 9980 samples in 5.00 s at 999 Hz on 2 CPUs: 1234 stacks, 0.00% lost
scorch: timing: end of recording to output 74.9 ms: stop 0.2 ms, drain and symbolize 73.4 ms, render and write 1.2 ms
scorch: wrote x.svg
"""
CPU_LOST = """\
scorch: 10000 samples in 5.01 s at 999 Hz on 2 CPUs: 3 stacks, 2.50% lost
scorch: lost: 250 stack map full, 0 count map full, 0 stack hash collisions, 0 unreadable at the end, 0 off-CPU intervals untracked (start map full)
hint: raise --max-stacks (now 32768) or lower -F
scorch: wrote x.folded
"""
CPU_V = """\
debug: symbolize: 3 files read, 3 symbol tables, 0 DWARF indexes; 0 dropped when unused
scorch: 59843 samples at 999 Hz on 2 CPUs in 30.00 s: 59840 counted in 812 stacks
scorch: lost: 3 of 59843 (0.01%)
scorch: lost: 0 stack map full, 0 count map full, 0 stack hash collisions, 3 unreadable at the end, 0 off-CPU intervals untracked (start map full)
scorch: processes: 8939 seen, 8250 exited and released during the recording (at most 1058 held at once), 29 gone before their maps were read; maps of 8900 from the kernel's mmap records, 10 copied from the parent (forked children), 29 read from /proc; 12 notices of new executable mappings
scorch: unwind dwarf: 59843 sample records, 3.2 KiB each on average (12 near the stack top copied short), 0 malformed
scorch: unwind dwarf: 59843 walks: 59000 complete, 800 cut at the --stack-size copy ([truncated]), 0 at 512 frames, 43 without CFI or frame pointer, 0 errors; 0 of released processes
scorch: timing: start-up 58.1 ms: load 56.1 ms, attach 0.3 ms, kallsyms 0.0 ms
scorch: wrote x.folded
"""
OFFCPU = """\
scorch: 4218 off-CPU intervals (12.345 s) in 3.00 s: 57 stacks, 0.00% lost
scorch: wrote off.folded
"""
OFFCPU_V = """\
scorch: 4300 switches off CPU in 3.00 s: 4218 intervals counted (12.345 s off CPU, 0.120 s of it on a runqueue: after a preemption, or after the wakeup of 4000 blocked ones), 0 shorter than --min-block, 0 longer than --max-block
scorch: 7 waits still open at an --interval boundary counted up to it, the rest in the next interval
scorch: wakers: 62010 taken at sched_waking; blocked intervals: 62010 under their waker, 0 under [unknown waker] (no wakeup seen), 0 whose waker stacks were lost; 1.500 s blocked under a waker (0.010 s of it woken in an interrupt), 0.000 s under [unknown waker]
scorch: lost: 9 of 65436 (0.01%)
scorch: lost: 9 off-CPU intervals without a switch-in (the thread switched out again before sched_switch showed it switching in)
"""
WALL = ("scorch: 1998 samples and 35 off-CPU intervals (2.996 s) in 1.00 s at 999 Hz on 2 "
        "CPUs: 40 stacks, 0.00% lost\n")
WALL_V = """\
scorch: 1998 samples at 999 Hz on 2 CPUs in 1.00 s: 1998 counted in 30 stacks
scorch: 40 switches off CPU in 1.00 s: 35 intervals counted (2.996 s off CPU, 0.001 s of it on a runqueue: after a preemption, or after the wakeup of 30 blocked ones), 0 shorter than --min-block, 0 longer than --max-block
scorch: lost: 0 of 2038 (0.00%)
"""
EVENT = ("scorch: 100000 events counted at uprobe:/usr/lib/libc.so.6:malloc in 2.50 s: 12 "
         "stacks, 0.00% lost\n")
EVENT_V = """\
scorch: 1000 events (one in --period) at usdt:/tmp/hits:bench:tick in 1.20 s: 10 counted in 2 stacks
scorch: 1000 samples at 0 Hz on 2 CPUs in 1.20 s: 10 counted in 2 stacks
"""
QUIET = "scorch: throttled: kernel.perf_event_max_sample_rate fell to 25000 during the recording\n"


def scorch_fixed():
    s = S.scorch_summary(CPU)
    same((s.mode, s.verbose, s.samples, s.seconds, s.hz, s.cpus, s.stacks, s.lost_pct),
         ("cpu", False, 9980, 5.0, 999, 2, 1234, 0.0), "cpu")
    same(S.scorch_samples(CPU), 9980, "cpu samples")
    fails(S.scorch_figure, CPU, "intervals", says="holds no intervals")
    ms, phases = S.scorch_timing(CPU, "end of recording to output")
    same((ms, phases), (74.9, {"stop": 0.2, "drain and symbolize": 73.4,
                               "render and write": 1.2}), "--timing")
    fails(S.scorch_timing, CPU, "start-up", says="'scorch: timing: start-up N ms")
    same(S.scorch_summary(CPU_LOST).lost_pct, 2.5, "cpu, 2.5 % lost")
    fails(S.scorch_lost, CPU_LOST, says="(printed with -v)")

    s = S.scorch_summary(CPU_V)
    same((s.mode, s.verbose, s.samples, s.counted, s.stacks, s.seconds, s.lost_pct),
         ("cpu", True, 59843, 59840, 812, 30.0, 0.01), "cpu -v")
    same(S.scorch_lost(CPU_V), (3, 59843), "cpu -v lost")
    same(S.scorch_processes(CPU_V), (8939, 8250, 1058, 29), "cpu -v processes")
    same(S.scorch_records(CPU_V), (59843, 3.2), "cpu -v unwind dwarf records")
    same(S.scorch_timing(CPU_V, "start-up")[1],
         {"load": 56.1, "attach": 0.3, "kallsyms": 0.0}, "start-up phases")
    fails(S.scorch_processes, CPU, says="'scorch: processes: N seen")
    fails(S.scorch_wakers, CPU_V, says="'scorch: wakers: N taken")

    s = S.scorch_summary(OFFCPU)
    same((s.mode, s.intervals, s.offcpu_s, s.seconds, s.stacks, s.lost_pct),
         ("offcpu", 4218, 12.345, 3.0, 57, 0.0), "offcpu")
    fails(S.scorch_samples, OFFCPU, says="the offcpu summary line holds no samples")
    s = S.scorch_summary(OFFCPU_V)
    same((s.mode, s.verbose, s.intervals, s.offcpu_s, s.seconds, s.lost_pct),
         ("offcpu", True, 4218, 12.345, 3.0, 0.01), "offcpu -v (--interval)")
    same(S.scorch_wakers(OFFCPU_V), (62010, 62010, 0, 0), "offwake -v wakers")
    same(S.scorch_lost(OFFCPU_V), (9, 65436), "offcpu -v lost")

    s = S.scorch_summary(WALL)
    same((s.mode, s.samples, s.intervals, s.offcpu_s, s.seconds, s.hz, s.cpus, s.stacks),
         ("wall", 1998, 35, 2.996, 1.0, 999, 2, 40), "wall")
    s = S.scorch_summary(WALL_V)
    same((s.mode, s.samples, s.intervals, s.offcpu_s, s.counted, s.lost_pct),
         ("wall", 1998, 35, 2.996, 1998, 0.0), "wall -v")

    s = S.scorch_summary(EVENT)
    same((s.mode, s.events, s.event, s.seconds, s.stacks, s.samples),
         ("event", 100000, "uprobe:/usr/lib/libc.so.6:malloc", 2.5, 12, None), "event")
    fails(S.scorch_samples, EVENT, says="holds no samples")
    s = S.scorch_summary(EVENT_V)
    same((s.mode, s.events, s.event, s.counted, s.stacks, s.lost_pct),
         ("event", 1000, "usdt:/tmp/hits:bench:tick", 10, 2, None), "event -v")

    # the cost governor's line: the lowest and average rate; without it, -F
    governed = CPU_LOST.replace("scorch: wrote", "scorch: rate lowered to 12500 Hz (from -F "
                                "100000; 23712 Hz on average, below -F 98% of the time) to "
                                "keep scorch within 5% of the CPUs: each sample counts the "
                                "periods it stands for\nhint: --max-overhead PCT allows more"
                                " (0: no limit)\nscorch: wrote")
    same(S.scorch_rate(governed), (12500, 23712), "rate lowered")
    same(S.scorch_rate(CPU), (999, 999), "rate not lowered")
    same(S.scorch_samples(governed), 10000, "samples beside the governor's line")

    # -q prints no summary; a changed wording is no summary; two are one too many
    fails(S.scorch_summary, "", says="no summary line 'scorch: N samples in S s at F Hz")
    fails(S.scorch_samples, QUIET, says="scorch -q prints none")
    fails(S.scorch_samples, CPU.replace("samples in", "samples over"), says="no summary")
    fails(S.scorch_samples, CPU.replace("% lost", "% dropped"), says="no summary")
    fails(S.scorch_samples, CPU + CPU, says="2 lines of the summary")
    fails(S.scorch_samples, CPU + CPU_V, says="more than one summary line")


# ---------------------------------------------------------------- perf and bpftrace

PERF = """\
[ perf record: Woken up 1 times to write data ]
[ perf record: Captured and wrote 0.104 MB /tmp/x/ttr-perf.data (59879 samples) ]
"""
PERF_STATS = """\

Aggregated stats:
           TOTAL events:        938
            MMAP events:          1  ( 0.1%)
          SAMPLE events:         66  ( 7.0%)
            LOST events:          2  ( 0.2%)
    LOST_SAMPLES events:         40  ( 4.3%)
cpu-clock:ppp stats:
          SAMPLE events:         66
"""
PERF_REPORT = "# Total Lost Samples: 0\n#\n# Samples: 12K of event 'cpu-clock:ppp'\n"
BPFTRACE = """\
Attaching 3 probes...
ready


@[
    pvm_irq_enable+25
    do_syscall_64+69
,
    __libc_read+76
    start_thread+773
]: 1
@[,
    job_a+76
    start_thread+773
]: 6
@off[pingpong, 12]: 300
@blocked: 1500000000
@runq: 2000
"""
HIST = """\
Attaching 3 probes...
ready


@ns:
[0, 25)                3 |@@@                                                 |
[25, 50)              50 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[50, 75)               0 |                                                    |
[25000, ...)           1 |@                                                   |

"""


def others_fixed():
    same(S.perf_samples(PERF), 59879, "perf record's samples")
    fails(S.perf_samples, "", says="(perf record -q prints none)")
    fails(S.perf_samples, PERF.replace(" (59879 samples)", ""), says="Captured and wrote")
    same(S.perf_lost(PERF_STATS), (40, 2), "perf --stats lost")
    same(S.perf_lost(PERF_STATS.replace("LOST", "MMAP2")), (0, 0), "perf --stats, none lost")
    same(S.perf_stats(PERF_STATS)["SAMPLE"], 66, "perf --stats samples")
    fails(S.perf_stats, "", says="'TOTAL events: N'")
    same(S.perf_report_samples(PERF_REPORT), 12000, "perf report's header")
    same(S.perf_report_samples("# Samples: 66  of event 'cpu-clock'"), 66, "perf report, 66")
    fails(S.perf_report_samples, "", says="'# Samples: N")

    same([v for _, v in S.bpftrace_map(BPFTRACE, "@")], [1, 6], "bpftrace @[kstack, ustack]")
    same(S.bpftrace_map(BPFTRACE, "@off"), [("pingpong, 12", 300)], "bpftrace @off")
    fails(S.bpftrace_map, "Attaching 3 probes...\nready\n", "@", says="no entry '@[...]: N'")
    same(S.bpftrace_scalar(BPFTRACE, "@blocked"), 1500000000, "bpftrace @blocked")
    fails(S.bpftrace_scalar, BPFTRACE, "@out", says="no line '@out: N'")
    same(S.bpftrace_hist(HIST, "@ns"), [(0, 25, 3), (25, 25, 50), (50, 25, 0), (25000, 0, 1)],
         "bpftrace lhist")
    same(S.bpftrace_hist("@ns: \n[1K, 2K)  4 |@@|\n", "@ns"), [(1024, 1024, 4)],
         "bpftrace hist")
    fails(S.bpftrace_hist, BPFTRACE, "@ns", says="no histogram '@ns:'")


def cli(tmp):
    """The shell benches' way in: the figure on standard output, or exit 1 naming the
    line."""
    path = os.path.join(tmp, "cpu.err")
    with open(path, "w") as f:
        f.write(CPU_V)
    run = [sys.executable, os.path.join(BENCH, "summary.py")]
    r = subprocess.run(run + ["scorch", "samples", path], capture_output=True, text=True)
    same((r.returncode, r.stdout), (0, "59843\n"), "summary.py scorch samples")
    r = subprocess.run(run + ["scorch", "processes", path], capture_output=True, text=True)
    same(r.stdout, "8939 8250 1058 29\n", "summary.py scorch processes")
    with open(path, "w") as f:
        f.write(QUIET)
    r = subprocess.run(run + ["scorch", "samples", path], capture_output=True, text=True)
    check(r.returncode == 1 and not r.stdout and "no summary line 'scorch: N samples in"
          in r.stderr, "summary.py read a figure from no summary: %r" % (r,))


# ---------------------------------------------------------------- what this scorch prints

def report(tmp, mode, *opts):
    cap = os.path.join(tmp, mode + ".scorch")
    if not os.path.exists(cap):
        subprocess.run([TEST_CAPTURE, "--summary", mode, cap], check=True)
    r = subprocess.run([SCORCH, "report", *opts, cap, "-o", os.path.join(tmp, mode + ".folded")],
                       capture_output=True, text=True)
    check(r.returncode == 0, "scorch report %s failed: %s" % (mode, r.stderr))
    return r.stderr


def scorch_real(tmp):
    # test_capture --summary: 4.00 s on 2 CPUs at 999 Hz; 7,990 samples (640 events) in 2
    # stacks (wall: 4), 120 intervals, 1.500 s off CPU
    want = {
        "cpu": dict(samples=7990, seconds=4.0, hz=999, cpus=2, stacks=2, lost_pct=0.0),
        "offcpu": dict(intervals=120, offcpu_s=1.5, seconds=4.0, stacks=2, lost_pct=0.0),
        "wall": dict(samples=7990, intervals=120, offcpu_s=1.5, seconds=4.0, hz=999, cpus=2,
                     stacks=4, lost_pct=0.0),
        "event": dict(events=640, event="uprobe:/bin/true:main", seconds=4.0, stacks=2,
                      lost_pct=0.0),
    }
    want_v = {
        "cpu": dict(samples=7990, counted=7990, seconds=4.0, hz=999, cpus=2, stacks=2,
                    lost_pct=0.0),
        "offcpu": dict(intervals=120, offcpu_s=1.5, seconds=4.0, lost_pct=0.0),
        "wall": dict(samples=7990, counted=7990, intervals=120, offcpu_s=1.5, stacks=4),
        "event": dict(events=640, counted=640, stacks=2),
    }
    for mode in want:
        for opts, w in (((), want[mode]), (("-v",), want_v[mode])):
            err = report(tmp, mode, *opts)
            where = "scorch report %s%s" % (" ".join(opts) + " " if opts else "", mode)
            try:
                s = S.scorch_summary(err, where)
            except S.SummaryError as e:
                raise CheckError("%s; it printed:\n%s" % (e, err))
            print("%s: %s" % (where, s))
            same(s.mode, mode, where + ": mode")
            same(s.verbose, bool(opts), where + ": -v")
            for k, v in w.items():
                same(getattr(s, k), v, "%s: %s" % (where, k))
            if opts and mode != "event":
                taken = 7990 * (mode != "offcpu") + 120 * (mode != "cpu")
                same(S.scorch_lost(err, where), (0, taken), where + ": lost")
        fails(S.scorch_summary, report(tmp, mode, "-q"), says="no summary line")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        try:
            scorch_fixed()
            others_fixed()
            cli(tmp)
            scorch_real(tmp)
        except CheckError as e:
            print("FAIL: %s" % e)
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
