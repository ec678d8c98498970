#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/collapse: `scorch collapse` on the FlameGraph perf-script corpus (every file x every
# option set of expected/, byte for byte), edge cases, gzip/zstd input, event filtering, bad
# input and exit codes, and real bpftrace captures against an independent reference parser.
# usage: test_collapse.py COLLAPSE_CLI [--reference]
#   --reference: compare with stackcollapse-perf.pl --all from FLAMEGRAPH_DIR (default
#             /tmp/FlameGraph) on the corpus and the edge cases; exits 77 without one.
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

CLI = sys.argv[1]
REFERENCE = "--reference" in sys.argv
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
EXPECTED = os.path.join(DATA, "expected")
# The whole FlameGraph perf-script corpus (13 captures with stackcollapse-perf.pl's
# output per option) is read where it lives when SCORCH_PERF_SCRIPT_CORPUS names it;
# without it, the excerpt kept in data/ (3 captures x 6 options).
CORPUS = os.environ.get("SCORCH_PERF_SCRIPT_CORPUS")
if not CORPUS or not os.path.isdir(os.path.join(CORPUS, "expected")):
    CORPUS = None
failures = []

# expected/NAME-collapsed-OPT.txt = stackcollapse-perf.pl --OPT; ours annotates by default
OPTS = {
    "pid": ["--pid", "--no-annotate"],
    "tid": ["--tid", "--no-annotate"],
    "addrs": ["--addrs", "--no-annotate"],
    "kernel": ["--kernel"],
    "jit": ["--jit"],
    "all": ["--all"],
}


def run(args, stdin=b"", expect_rc=0):
    p = subprocess.run([CLI] + args, input=stdin, capture_output=True)
    if expect_rc is not None and p.returncode != expect_rc:
        raise AssertionError("rc %d (want %d) for %s\nstderr: %s" %
                             (p.returncode, expect_rc, args, p.stderr.decode(errors="replace")))
    return p


def check(name, cond, detail=""):
    if not cond:
        failures.append(name + (": " + detail if detail else ""))


def first_diff(a, b):
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<none>"
        y = lb[i] if i < len(lb) else "<none>"
        if x != y:
            return "line %d:\n  got  %s\n  want %s" % (i + 1, x[:200], y[:200])
    return "?"


def corpus():
    """Every corpus input x every option set the expected directory provides, exactly."""
    pairs = 0
    data, expected = (CORPUS, os.path.join(CORPUS, "expected")) if CORPUS else (DATA, EXPECTED)
    print("corpus: %s" % (data if CORPUS else data + " (excerpt; the full corpus was not found)"))
    for f in sorted(os.listdir(expected)):
        m = re.match(r"(.*)-collapsed-(\w+)\.txt$", f)
        assert m, f
        name, opt = m.groups()
        if name == "perf-edge-cases":
            continue  # below
        inp = os.path.join(data, name + ".txt")
        want = open(os.path.join(expected, f), "rb").read()
        got = run(OPTS[opt] + [inp]).stdout
        check("corpus %s --%s" % (name, opt), got == want, first_diff(got, want))
        pairs += 1
        if opt == "all":  # annotations on is our default
            got = run([inp]).stdout
            check("corpus %s (default = --all)" % name, got == want, first_diff(got, want))
    check("corpus size", pairs == (13 if CORPUS else 3) * 6, "%d pairs" % pairs)
    # our own edge cases (data/expected/perf-edge-cases-*), always from data/
    for f in sorted(os.listdir(EXPECTED)):
        m = re.match(r"(perf-edge-cases)-collapsed-(\w+)\.txt$", f)
        if not m:
            continue
        name, opt = m.groups()
        want = open(os.path.join(EXPECTED, f), "rb").read()
        got = run(OPTS[opt] + [os.path.join(DATA, name + ".txt")]).stdout
        check("edge cases --%s" % opt, got == want, first_diff(got, want))


def compressed(tmp):
    """gzip and zstd input give the same bytes as plain input; damaged streams are errors."""
    src = os.path.join(DATA, "perf-java-stacks-02.txt")
    want = run([src]).stdout
    raw = open(src, "rb").read()
    gz = os.path.join(tmp, "j.txt.gz")
    with open(gz, "wb") as f:
        f.write(gzip.compress(raw))
    check("gzip input", run([gz]).stdout == want)
    check("gzip stdin", run(["-"], stdin=open(gz, "rb").read()).stdout == want)
    if shutil.which("zstd"):
        zst = os.path.join(tmp, "j.txt.zst")
        subprocess.run(["zstd", "-q", "-f", src, "-o", zst], check=True)
        check("zstd input", run([zst]).stdout == want)
    cut = os.path.join(tmp, "cut.txt.gz")
    with open(cut, "wb") as f:
        f.write(gzip.compress(raw)[:-100])
    p = run([cut, "-o", os.path.join(tmp, "cut.folded")], expect_rc=1)
    check("truncated gzip: error names the file", b"cut.txt.gz" in p.stderr, p.stderr.decode())
    check("truncated gzip: no output file", not os.path.exists(os.path.join(tmp, "cut.folded")))


def perf_behaviour(tmp):
    # the last sample has no blank line after it: dropped (as the Perl script) and reported
    text = (b"ab 1 1.0: 1 cycles:\n  1 f (m)\n\n"
            b"ab 1 1.0: 1 cycles:\n  1 g (m)\n")
    p = run(["-"], stdin=text)
    check("unterminated sample dropped", p.stdout == b"ab;f 1\n", p.stdout.decode())
    check("unterminated sample reported", b"may be cut" in p.stderr, p.stderr.decode())
    p = run(["-"], stdin=text + b"\n")
    check("terminated sample kept", p.stdout == b"ab;f 1\nab;g 1\n", p.stdout.decode())

    # periods are summed; a zero or missing period counts 1
    text = (b"ab 1 1.0: 250 cycles:\n  1 f (m)\n\n"
            b"ab 1 1.0: 750 cycles:\n  1 f (m)\n\n"
            b"ab 1 1.0: 0 cycles:\n  1 g (m)\n\n")
    check("periods", run(["-"], stdin=text).stdout == b"ab;f 1000\nab;g 1\n")

    # events: the first is kept and the others counted; --event-filter chooses
    cyc = os.path.join(DATA, "perf-cycles-instructions-excerpt.txt")
    p = run([cyc])
    check("other events reported", re.search(rb"\d+ samples of other events \(first: "
                                             rb"cycles\) skipped; kept event instructions",
                                             p.stderr) is not None, p.stderr.decode())
    q = run(["--event-filter", "cycles", cyc])
    check("--event-filter cycles differs", q.stdout and q.stdout != p.stdout)
    check("--event-filter keeps only its event",
          b"kept event cycles" in q.stderr, q.stderr.decode())
    p = run(["--event-filter", "nosuch", cyc], expect_rc=1)
    check("no samples of the filtered event is an error", b"no samples found" in p.stderr)

    # lines not understood are counted and reported, the rest is used
    text = b"ab 1 1.0: 1 cycles:\n  1 f (m)\n  what is this\n  nor this\n\n"
    p = run(["-"], stdin=text)
    check("bad lines skipped", p.stdout == b"ab;f 1\n", p.stdout.decode())
    check("bad lines counted", b"2 lines not understood" in p.stderr and b"line 3" in p.stderr,
          p.stderr.decode())

    # CRLF input is read as LF input
    text = b"ab 1 1.0: 1 cycles:\r\n  1 f (m)\r\n\r\n"
    check("CRLF", run(["-"], stdin=text).stdout == b"ab;f 1\n")

    # -o writes atomically; stdout and -o agree
    out = os.path.join(tmp, "x.folded")
    run([os.path.join(DATA, "perf-dd-stacks-01.txt"), "-o", out])
    check("-o", open(out, "rb").read() ==
          run([os.path.join(DATA, "perf-dd-stacks-01.txt")]).stdout)


def bad_input(tmp):
    run([], stdin=b"", expect_rc=1)
    p = run(["-"], stdin=b"\n\n# only comments\n", expect_rc=1)
    check("empty input: clear error", b"no samples found" in p.stderr and b"hint:" in p.stderr)
    p = run([os.path.join(tmp, "missing.txt")], expect_rc=1)
    check("missing file named", b"missing.txt" in p.stderr, p.stderr.decode())
    for args in (["--nosuch"], ["a", "b"], ["--format", "xml"], ["--kernel", "--no-annotate"],
                 ["--bpftrace-keys", "kstack,kstack"], ["--bpftrace-keys", ""],
                 ["--bpftrace-keys", "a b"], ["--event-filter", ""]):
        run(args, expect_rc=2)
    p = run(["--help"])
    check("--help ends with examples", b"examples:" in p.stdout)
    # binary junk: no crash, reported
    p = run(["-"], stdin=bytes(range(256)) * 64, expect_rc=1)
    check("junk reported", b"not understood" in p.stderr, p.stderr.decode()[:300])


def output_names(tmp):
    """collapse writes folded alone: an -o name asking for another format is refused."""
    perf = os.path.join(DATA, "perf-dd-stacks-01.txt")
    want = run([perf]).stdout
    hint = b"hint: scorch collapse writes folded (.folded, .collapsed, .txt, or any other " \
           b"name)\n"
    for name in ("p.svg", "p.html", "p.pb.gz", "p.json", "p.scorch", "p.png", "p.folded.gz"):
        out = os.path.join(tmp, name)
        p = run([perf, "-o", out], expect_rc=2)
        err = p.stderr.decode()
        check("-o %s refused, naming the file" % name,
              err.startswith("scorch: collapse: cannot write %s: " % out) and
              p.stderr.endswith(hint) and err.count("\n") == 2, err)
        check("-o %s: nothing written" % name, not os.path.exists(out) and not p.stdout)
    for name in ("p.folded", "p.collapsed", "p.txt", "p", "p.out"):
        out = os.path.join(tmp, name)
        run([perf, "-o", out])
        with open(out, "rb") as f:
            check("-o %s is folded" % name, f.read() == want)


# --- bpftrace: an independent reference parser (regexes, not a state machine) -------------

def bt_reference(text, keys, annotate=True):
    counts = {}
    stack_re = re.compile(r"\n((?:[ \t][^\n]*\n)+)")
    for key, count in re.findall(r"^@\[(.*?)\]: (\d+)$", text, re.S | re.M):
        stacks = []

        def take(m):
            stacks.append(m.group(1).splitlines())
            return "\x01%d" % (len(stacks) - 1)

        elems = stack_re.sub(take, key).split(", ")
        assert len(elems) == len(keys), (elems, keys)
        scal, kst, ust = [], [], []
        for k, e in zip(keys, elems):
            if k in ("kstack", "ustack"):
                frames = [] if e == "" else stacks[int(e[1:])]
                out = []
                for line in frames:
                    sym = line.strip()
                    if line.startswith("\t"):  # perf mode: ADDR SYM [(MODULE)]
                        sym = re.match(r"[0-9a-f]+ (.*?)(?: \(.*\))?$", sym).group(1)
                    sym = re.sub(r"(?<=.)\+(?:0x[0-9a-f]+|[0-9]+)$", "", sym)
                    out.append(sym + ("_[k]" if k == "kstack" and annotate else ""))
                (kst if k == "kstack" else ust).extend(out)
            else:
                scal.append(e)
        frames = scal + ust[::-1] + kst[::-1] or ["[empty]"]
        s = ";".join(frames)
        counts[s] = counts.get(s, 0) + int(count)
    return b"".join(b"%s %d\n" % (k.encode(), v) for k, v in
                    sorted(counts.items(), key=lambda kv: kv[0].encode()))


def bpftrace(tmp):
    cases = [
        ("bpftrace-kstack-ustack-comm.txt", ["kstack", "ustack", "comm"], []),
        ("bpftrace-ustack.txt", ["ustack"], ["--bpftrace-keys", "ustack"]),
        ("bpftrace-perf-kstack-ustack-comm-pid.txt", ["kstack", "ustack", "comm", "pid"],
         ["--bpftrace-keys", "kstack,ustack,comm,pid"]),
    ]
    for f, keys, args in cases:
        path = os.path.join(DATA, f)
        text = open(path).read()
        want = bt_reference(text, keys)
        got = run(args + [path]).stdout
        check("bpftrace %s" % f, got == want, first_diff(got, want))
        total = sum(int(c) for c in re.findall(r"\]: (\d+)$", text, re.M))
        got_total = sum(int(line.rsplit(b" ", 1)[1]) for line in got.splitlines())
        check("bpftrace %s total" % f, total == got_total and total > 0,
              "%d vs %d" % (got_total, total))
        got = run(args + ["--no-annotate", path]).stdout
        check("bpftrace %s --no-annotate" % f, got == bt_reference(text, keys, False))

    # known by construction: spin's own stack, root first, comm at the root
    got = run([os.path.join(DATA, "bpftrace-kstack-ustack-comm.txt")]).stdout
    check("bpftrace spin stack", re.search(rb"^spin;__libc_start_call_main;main;mid;leaf \d+$",
                                           got, re.M) is not None)
    got = run(["--bpftrace-keys", "kstack,ustack,comm,pid",
               os.path.join(DATA, "bpftrace-perf-kstack-ustack-comm-pid.txt")]).stdout
    check("bpftrace perf mode: user then kernel frames", re.search(
        rb"^dd;\d+;[^ ]*__GI___write;entry_SYSCALL_64_after_hwframe_\[k\];do_syscall_64_\[k\]",
        got, re.M) is not None)

    # a small hand-written map: every rule at once
    text = (b"Attaching 1 probe...\n\n\n"
            b"@[\n    k_leaf+5\n    k_root+10\n, \n    0x7f00\n    u_leaf+3\n    main+53\n"
            b", my comm]: 3\n"
            b"@[, \n    u_leaf+3\n    main+53\n, my comm]: 4\n"
            b"@[\n    k_idle+1\n, , swapper/0]: 5\n"
            b"@[, \n    u_leaf+9\n    main+53\n, my comm]: 2\n")
    want = (b"my comm;main;u_leaf 6\n"
            b"my comm;main;u_leaf;0x7f00;k_root_[k];k_leaf_[k] 3\n"
            b"swapper/0;k_idle_[k] 5\n")
    got = run(["-"], stdin=text).stdout
    check("bpftrace by hand", got == want, got.decode())

    # shapes that are not the named keys are errors, never guesses
    ustack = os.path.join(DATA, "bpftrace-ustack.txt")
    p = run([ustack], expect_rc=1)
    check("bpftrace wrong keys: error with line and hint",
          b"bpftrace-ustack.txt:4:" in p.stderr and b"--bpftrace-keys ustack" in p.stderr,
          p.stderr.decode())
    for bad, what in ((b"@[, \n    f+1\n, a]: 1\n@b[, \n    f+1\n, a]: 1\n", b"second"),
                      (b"@[, \n    f+1\n, a]: \n[0, 1) 5 |@@@|\n", b"not an integer"),
                      (b"@: 5\n", b"has no key"),
                      (b"@[, \n    f+1\n, a]: -5\n", b"not an integer"),
                      (b"@[, , a]: 1.5\n", b"not an integer"),
                      (b"@[, \n    f+1\n@[, , a]: 1\n", b"has no"),
                      (b"@[a, b, c, d]: 5\n", b"does not match"),
                      (b"@[x, \n    f+1\n, a]: 1\n", b"a value where a stack was named"),
                      (b"@[, , \n    f+1\n]: 1\n", b"a stack as element 3")):
        p = run(["--format", "bpftrace", "-"], stdin=bad, expect_rc=1)
        check("bpftrace error: %s" % what.decode(), what in p.stderr, p.stderr.decode())
    p = run(["-"], stdin=b"@[, \n    g+1\n, a]: 2\n@[\n    f+1\n, \n    g+1\n")
    check("bpftrace cut record dropped", p.stdout == b"a;g 2\n", p.stdout.decode())
    check("bpftrace cut record reported", b"may be cut" in p.stderr, p.stderr.decode())


def reference():
    fg = os.environ.get("FLAMEGRAPH_DIR", "/tmp/FlameGraph")
    script = os.path.join(fg, "stackcollapse-perf.pl")
    if not os.path.exists(script) or not shutil.which("perl"):
        print("SKIP: no %s (set FLAMEGRAPH_DIR to a FlameGraph checkout)" % script)
        sys.exit(77)
    src = CORPUS or DATA
    inputs = [os.path.join(src, f) for f in sorted(os.listdir(src))
              if f.startswith("perf-") and f.endswith(".txt") and f != "perf-edge-cases.txt"]
    ex = os.path.join(fg, "example-perf-stacks.txt.gz")
    if os.path.exists(ex):
        inputs.append(ex)
    for inp in inputs:
        raw = open(inp, "rb").read()
        if inp.endswith(".gz"):
            raw = gzip.decompress(raw)
        want = subprocess.run(["perl", script, "--all"], input=raw, capture_output=True).stdout
        got = run([inp]).stdout
        check("reference %s" % os.path.basename(inp), got == want, first_diff(got, want))
    # the edge cases: equal but for the documented deviations
    edge = os.path.join(DATA, "perf-edge-cases.txt")
    want = subprocess.run(["perl", script, "--all", edge], capture_output=True).stdout
    want = want.replace(b";tail;;lead", b";tail;[empty];lead").replace(b"comm;x;j", b"comm:x;j")
    want = b"".join(sorted(want.splitlines(keepends=True)))
    got = run([edge]).stdout
    check("reference edge cases", got == want, first_diff(got, want))


def main():
    if REFERENCE:
        reference()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            corpus()
            compressed(tmp)
            perf_behaviour(tmp)
            bad_input(tmp)
            output_names(tmp)
            bpftrace(tmp)
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
