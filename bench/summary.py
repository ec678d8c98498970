# SPDX-License-Identifier: MIT
"""bench: the one reader of what the profilers print about a recording -- scorch's
summary and --timing lines, perf record's "Captured and wrote" line, perf report's
--stats and header, bpftrace's maps and histograms. Every bench reads them here: the
python benches import it, the shell benches (and the tests) call it as a command.

A figure that is not where it should be is an error naming the line it looked for,
never a 0: a bench that prints a wrong figure and exits 0 is worse than none. Lines it
does not know are skipped, so scorch may add lines to its summary; a change to the
wording of a line read here must change its pattern here (tests/bench/ fail until it
does).

usage: python3 bench/summary.py TOOL FIGURE FILE [ARG]
  scorch samples|events|intervals|seconds|hz|cpus|stacks|lost-pct|mode FILE
                            the main line (any mode, -v or not)
  scorch counted FILE       -v: samples or events counted ("M counted in K stacks")
  scorch lost FILE          -v: "L T" of "lost: L of T (P%)"
  scorch processes FILE     -v: "SEEN RELEASED HELD GONE"
  scorch wakers FILE        -v (offwake): "TAKEN UNDER_WAKER UNKNOWN LOST"
  scorch records FILE       -v, --unwind dwarf: "RECORDS KIB_EACH"
  scorch timing FILE WHAT   --timing: the milliseconds of "timing: WHAT N ms: ..."
  scorch rate FILE          "LOWEST AVERAGE" Hz sampled (the cost governor's line, else -F)
  perf samples FILE         perf record's stderr: N of "(N samples)"
  perf lost FILE            perf report --stats: "LOST_SAMPLES LOST" (events)
  perf sample-events FILE   perf report --stats: its SAMPLE events
  perf report-samples FILE  perf report's header "# Samples: N" (perf rounds to K, M)
  bpftrace entries FILE MAP the number of entries printed of map MAP (@, @off)
Prints the figure(s) on standard output; exits 1, saying which line was missing, when
the figure cannot be read.
"""
import collections
import re
import sys


class SummaryError(Exception):
    pass


def _num(s):
    return float(s) if "." in s else int(s)


# scorch's summary (profiler/summary.c: captured() and summary__counts()): one main line,
# by mode; -v prints the counts line instead, with the off-CPU line and "lost: L of T"
_SC = r"^scorch: "
_TAIL = r": (?P<stacks>\d+) stacks, (?P<lost_pct>[0-9.]+)% lost$"
SCORCH_MAIN = [
    ("cpu", re.compile(_SC + r"(?P<samples>\d+) samples in (?P<seconds>[0-9.]+) s at "
                       r"(?P<hz>\d+) Hz on (?P<cpus>\d+) CPUs" + _TAIL, re.M)),
    ("wall", re.compile(_SC + r"(?P<samples>\d+) samples and (?P<intervals>\d+) off-CPU "
                        r"intervals \((?P<offcpu_s>[0-9.]+) s\) in (?P<seconds>[0-9.]+) s at "
                        r"(?P<hz>\d+) Hz on (?P<cpus>\d+) CPUs" + _TAIL, re.M)),
    ("offcpu", re.compile(_SC + r"(?P<intervals>\d+) off-CPU intervals \((?P<offcpu_s>[0-9.]+)"
                          r" s\) in (?P<seconds>[0-9.]+) s" + _TAIL, re.M)),
    ("event", re.compile(_SC + r"(?P<events>\d+) events(?: counted)? at (?P<event>.+) in "
                         r"(?P<seconds>[0-9.]+) s" + _TAIL, re.M)),
]
SCORCH_V_SAMPLES = re.compile(_SC + r"(?P<samples>\d+) samples at (?P<hz>\d+) Hz on "
                              r"(?P<cpus>\d+) CPUs in (?P<seconds>[0-9.]+) s: (?P<counted>\d+) "
                              r"counted in (?P<stacks>\d+) stacks$", re.M)
SCORCH_V_EVENTS = re.compile(_SC + r"(?P<events>\d+) events(?: \(one in --period\))? at "
                             r"(?P<event>.+) in (?P<seconds>[0-9.]+) s: (?P<counted>\d+) counted "
                             r"in (?P<stacks>\d+) stacks$", re.M)
SCORCH_V_OFFCPU = re.compile(_SC + r"(?P<switches>\d+) switches off CPU in (?P<seconds>[0-9.]+)"
                             r" s: (?P<intervals>\d+) intervals counted \((?P<offcpu_s>[0-9.]+) s"
                             r" off CPU, (?P<runqueue_s>[0-9.]+) s of it on a runqueue", re.M)
SCORCH_LOST = re.compile(_SC + r"lost: (\d+) of (\d+) \(([0-9.]+)%\)$", re.M)
SCORCH_PROCESSES = re.compile(_SC + r"processes: (\d+) seen, (\d+) exited and released during "
                              r"the recording \(at most (\d+) held at once\), (\d+) gone before "
                              r"their maps were read", re.M)
SCORCH_WAKERS = re.compile(_SC + r"wakers: (\d+) taken at sched_waking; blocked intervals: (\d+)"
                           r" under their waker, (\d+) under \[unknown waker\] \(no wakeup "
                           r"seen\), (\d+) whose waker stacks were lost;", re.M)
SCORCH_RECORDS = re.compile(_SC + r"unwind dwarf: (\d+) sample records, ([0-9.]+) KiB each",
                            re.M)
SCORCH_RATE = re.compile(_SC + r"rate lowered to (\d+) Hz \(from -F (\d+); (\d+) Hz on average, "
                         r"below -F (\d+)% of the time\)", re.M)
SCORCH_TIMING = re.compile(_SC + r"timing: (?P<what>.+?) (?P<ms>[0-9.]+) ms: (?P<phases>.*)$",
                           re.M)

# what the messages name as the line looked for
MAIN_FORMS = ("'scorch: N samples in S s at F Hz on C CPUs: K stacks, P% lost' (or its "
              "wall, off-CPU, event or -v form)")

# one recording's summary; figures a mode or form does not print are None
Summary = collections.namedtuple(
    "Summary", "mode verbose samples events intervals offcpu_s seconds hz cpus stacks "
    "lost_pct counted event")


def _one(pattern, text, what, where):
    found = pattern.findall(text)
    if len(found) > 1:
        raise SummaryError("%s: %d lines %s, one expected (two recordings' messages in one "
                           "file?)" % (where, len(found), what))
    return pattern.search(text)


def scorch_summary(text, where="scorch's output"):
    """The main summary line of one scorch record or report, in any mode, with or without
    -v, as a Summary; SummaryError when there is none (-q prints none) or more than one."""
    found = []
    for mode, pattern in SCORCH_MAIN:
        m = _one(pattern, text, "of the summary", where)
        if m:
            found.append((mode, m))
    v = _one(SCORCH_V_SAMPLES, text, "of the -v summary", where)
    ve = _one(SCORCH_V_EVENTS, text, "of the -v summary", where)
    vo = _one(SCORCH_V_OFFCPU, text, "of the -v off-CPU summary", where)
    if len(found) > 1 or (found and (v or ve or vo)):
        raise SummaryError("%s: more than one summary line %s" % (where, MAIN_FORMS))
    if found:
        mode, m = found[0]
        g = m.groupdict()
        return Summary(mode, False, *(_num(g[k]) if g.get(k) is not None else None for k in (
            "samples", "events", "intervals", "offcpu_s", "seconds", "hz", "cpus", "stacks",
            "lost_pct")), None, g.get("event"))
    if not (v or ve or vo):
        raise SummaryError("%s: no summary line %s (scorch -q prints none)"
                           % (where, MAIN_FORMS))
    lost = SCORCH_LOST.search(text)
    lost_pct = float(lost.group(3)) if lost else None
    if ve:  # --event -v prints a samples line too, of no samples
        g = ve.groupdict()
        return Summary("event", True, None, int(g["events"]), None, None, float(g["seconds"]),
                       None, None, int(g["stacks"]), lost_pct, int(g["counted"]), g["event"])
    if v:
        g = v.groupdict()
        return Summary("wall" if vo else "cpu", True, int(g["samples"]), None,
                       int(vo.group("intervals")) if vo else None,
                       float(vo.group("offcpu_s")) if vo else None, float(g["seconds"]),
                       int(g["hz"]), int(g["cpus"]), int(g["stacks"]), lost_pct,
                       int(g["counted"]), None)
    return Summary("offcpu", True, None, None, int(vo.group("intervals")),
                   float(vo.group("offcpu_s")), float(vo.group("seconds")), None, None, None,
                   lost_pct, None, None)


def scorch_figure(text, name, where="scorch's output"):
    """One figure of the main summary line (a Summary field); SummaryError when the line
    is missing or does not hold it (an off-CPU recording has no samples)."""
    s = scorch_summary(text, where)
    value = getattr(s, name)
    if value is None:
        raise SummaryError("%s: the %s%s summary line holds no %s"
                           % (where, s.mode, " -v" if s.verbose else "", name))
    return value


def scorch_samples(text, where="scorch's output"):
    """Samples taken, from the summary line of a cpu or wall recording."""
    return scorch_figure(text, "samples", where)


def _line(pattern, text, expected, where, verbose=True):
    m = _one(pattern, text, expected, where)
    if not m:
        raise SummaryError("%s: no line %s%s" % (where, expected,
                                                 " (printed with -v)" if verbose else ""))
    return tuple(_num(x) for x in m.groups())


def scorch_lost(text, where="scorch's output"):
    """(lost, taken) of -v's "lost: L of T (P%)"."""
    return _line(SCORCH_LOST, text, "'scorch: lost: L of T (P%)'", where)[:2]


def scorch_processes(text, where="scorch's output"):
    """(seen, released, held at most, gone before read) of -v's processes line."""
    return _line(SCORCH_PROCESSES, text, "'scorch: processes: N seen, N exited and released "
                 "during the recording (at most N held at once), N gone before ...'", where)


def scorch_wakers(text, where="scorch's output"):
    """(taken, under their waker, under [unknown waker], waker stacks lost) of -v's
    wakers line (--mode offwake)."""
    return _line(SCORCH_WAKERS, text, "'scorch: wakers: N taken at sched_waking; blocked "
                 "intervals: ...'", where)


def scorch_records(text, where="scorch's output"):
    """(sample records, KiB each) of -v's --unwind dwarf line."""
    return _line(SCORCH_RECORDS, text, "'scorch: unwind dwarf: N sample records, X KiB "
                 "each ...'", where)


def scorch_rate(text, where="scorch's output"):
    """The rate sampled, per CPU: (lowest, average) from the cost governor's line, or -F
    twice from the main line when the rate was not lowered."""
    m = _one(SCORCH_RATE, text, "'scorch: rate lowered to N Hz (from -F F; A Hz on "
             "average, ...)'", where)
    if m:
        return int(m.group(1)), int(m.group(3))
    hz = scorch_figure(text, "hz", where)
    return hz, hz


def scorch_timing(text, what, where="scorch's output"):
    """--timing's line "timing: @what N ms: phase X ms, ...": (N, {phase: X})."""
    for m in SCORCH_TIMING.finditer(text):
        if m.group("what") == what:
            phases = re.findall(r"([^,]+?) ([0-9.]+) ms(?:, |$)", m.group("phases"))
            return float(m.group("ms")), {k.strip(): float(v) for k, v in phases}
    raise SummaryError("%s: no line 'scorch: timing: %s N ms: ...' (printed with --timing)"
                       % (where, what))


# perf record's last line: "[ perf record: Captured and wrote 0.104 MB p.data (66 samples) ]"
PERF_CAPTURED = re.compile(r"^\[ perf record: Captured and wrote ([0-9.]+) MB (.+) "
                           r"\(~?(\d+) samples\) \]$", re.M)
# perf report --stats: "  SAMPLE events:   66  ( 7.0%)", types with no event left out
PERF_STATS = re.compile(r"^ *([A-Z_0-9]+) events: *(\d+)", re.M)
PERF_HEADER = re.compile(r"^# Samples: (\d+)([KMG]?) +of event", re.M)


def perf_samples(text, where="perf record's output"):
    """Samples perf record wrote, from its "Captured and wrote" line."""
    m = _one(PERF_CAPTURED, text, "'[ perf record: Captured and wrote ...'", where)
    if not m:
        raise SummaryError("%s: no line '[ perf record: Captured and wrote X MB FILE "
                           "(N samples) ]' (perf record -q prints none)" % where)
    return int(m.group(3))


def perf_stats(text, where="perf report --stats"):
    """{event type: count} of perf report --stats' aggregated counts (the first of each
    type); the types it leaves out had none."""
    stats = {}
    for k, v in PERF_STATS.findall(text):
        stats.setdefault(k, int(v))
    if "TOTAL" not in stats:
        raise SummaryError("%s: no line 'TOTAL events: N' of perf report --stats" % where)
    return stats


def perf_lost(text, where="perf report --stats"):
    """(samples lost, LOST events) of perf report --stats."""
    s = perf_stats(text, where)
    return s.get("LOST_SAMPLES", 0), s.get("LOST", 0)


def perf_report_samples(text, where="perf report"):
    """Samples of perf report's header "# Samples: N of event ...", which perf rounds to
    thousands (K) and millions (M) past 10,000."""
    m = PERF_HEADER.search(text)
    if not m:
        raise SummaryError("%s: no line '# Samples: N of event ...'" % where)
    return int(m.group(1)) * {"": 1, "K": 1000, "M": 1000000, "G": 1000000000}[m.group(2)]


# bpftrace prints each map at exit: "@name[key]: N", a key over several lines (stacks)
# ending in "]: N", a scalar "@name: N", a histogram "@name:" then "[lo, hi)  N |@@|"
def bpftrace_map(text, name="@", where="bpftrace's output"):
    """The entries of map @name printed by bpftrace: [(key, value)], key the text between
    the brackets; SummaryError when it printed none."""
    entries, key = [], None
    head = re.compile(r"^%s\[(.*)$" % re.escape(name))
    for line in text.splitlines():
        if key is None:
            m = head.match(line)
            if not m:
                continue
            key = m.group(1)
        else:
            key += "\n" + line
        m = re.match(r"(?s)^(.*)\]: (-?\d+)$", key)
        if m:
            entries.append((m.group(1), int(m.group(2))))
            key = None
    if not entries:
        raise SummaryError("%s: no entry '%s[...]: N' of map %s" % (where, name, name))
    return entries


def bpftrace_hist(text, name, where="bpftrace's output"):
    """The histogram @name (hist or lhist) as [(lower bound, width, count)], the last bin
    open (width 0)."""
    unit = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    lines = text.splitlines()
    try:
        at = lines.index("%s: " % name) if "%s: " % name in lines else lines.index(name + ":")
    except ValueError:
        raise SummaryError("%s: no histogram '%s:'" % (where, name)) from None
    bins = []
    for line in lines[at + 1:]:
        m = re.match(r"^\[(-?\d+)([KMG]?), (?:(-?\d+)([KMG]?)|\.\.\.)\)\s+(\d+)", line)
        if not m:
            if line.strip():
                break
            continue
        lo = int(m.group(1)) * unit[m.group(2)]
        hi = int(m.group(3)) * unit[m.group(4)] if m.group(3) is not None else lo
        bins.append((lo, hi - lo, int(m.group(5))))
    return bins


def bpftrace_scalar(text, name, where="bpftrace's output"):
    """The value bpftrace printed of scalar map @name ("@name: N")."""
    m = re.search(r"^%s: (-?\d+)$" % re.escape(name), text, re.M)
    if not m:
        raise SummaryError("%s: no line '%s: N' (bpftrace prints a map only once it was "
                           "written)" % (where, name))
    return int(m.group(1))


def from_file(reader, path, *args):
    """@reader (one of the above) of the text of file @path, its errors naming the file."""
    with open(path, errors="replace") as f:
        return reader(f.read(), *args, where=path)


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print("usage: " + __doc__.split("usage: ", 1)[1], end="")
        return 0
    if len(argv) < 3:
        print(__doc__.split("usage: ", 1)[1], file=sys.stderr, end="")
        return 2
    tool, figure, path = argv[:3]
    arg = argv[3] if len(argv) > 3 else None
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError as e:
        print("summary: cannot read %s: %s" % (path, e.strerror), file=sys.stderr)
        return 1
    fields = {"samples", "events", "intervals", "seconds", "hz", "cpus", "stacks", "mode"}
    try:
        if tool == "scorch" and figure in fields:
            out = [scorch_figure(text, figure, path)]
        elif tool == "scorch" and figure == "lost-pct":
            out = [scorch_figure(text, "lost_pct", path)]
        elif tool == "scorch" and figure == "counted":
            out = [scorch_figure(text, "counted", path)]
        elif tool == "scorch" and figure == "rate":
            out = scorch_rate(text, path)
        elif tool == "scorch" and figure == "timing" and arg:
            out = ["%.1f" % scorch_timing(text, arg, path)[0]]
        elif tool == "scorch" and figure in ("lost", "processes", "wakers", "records"):
            out = {"lost": scorch_lost, "processes": scorch_processes, "wakers": scorch_wakers,
                   "records": scorch_records}[figure](text, path)
        elif tool == "perf" and figure == "samples":
            out = [perf_samples(text, path)]
        elif tool == "perf" and figure == "lost":
            out = perf_lost(text, path)
        elif tool == "perf" and figure == "sample-events":
            s = perf_stats(text, path)
            if "SAMPLE" not in s:
                raise SummaryError("%s: no line 'SAMPLE events: N'" % path)
            out = [s["SAMPLE"]]
        elif tool == "perf" and figure == "report-samples":
            out = [perf_report_samples(text, path)]
        elif tool == "bpftrace" and figure == "entries" and arg:
            out = [len(bpftrace_map(text, arg, path))]
        else:
            print("summary: unknown figure '%s %s'" % (tool, figure), file=sys.stderr)
            return 2
    except SummaryError as e:
        print("summary: %s" % e, file=sys.stderr)
        return 1
    print(" ".join(str(x) for x in out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
