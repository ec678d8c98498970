#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/diff: `scorch diff` (two-count output, differential SVG colours, normalize, negate,
# --self, --top, compressed and bad input) and `scorch flamegraph` on two-count files.
# usage: test_diff.py DIFF_CLI FG_CLI [--reference]
#   --reference: compare with difffolded.pl / flamegraph.pl from FLAMEGRAPH_DIR
#             (default /tmp/FlameGraph); exits 77 (skip) when there is none.
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

DIFF, FG = sys.argv[1], sys.argv[2]
REFERENCE = "--reference" in sys.argv
SVG = "{http://www.w3.org/2000/svg}"
failures = []

BEFORE = "main;a;hot 10\nmain;a 5\nmain;b;cold 20\nmain;gone 6\nmain;same 7\n" \
         "main;x;0x7f12ab 2\n"
AFTER = "main;a;hot 30\nmain;a 5\nmain;b;cold 5\nmain;c 4\nmain;same 7\nmain;x;0x7f99cd 2\n"


def run(cmd, args, stdin=b"", expect_rc=0):
    p = subprocess.run([cmd] + args, input=stdin, capture_output=True)
    if expect_rc is not None and p.returncode != expect_rc:
        raise AssertionError("rc %d (want %d) for %s\nstderr: %s" %
                             (p.returncode, expect_rc, args, p.stderr.decode(errors="replace")))
    return p


class Files:
    """A temporary directory holding before/after profiles."""

    def __enter__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.b = self.write("before.folded", BEFORE)
        self.a = self.write("after.folded", AFTER)
        return self

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return path

    def path(self, name):
        return os.path.join(self.dir, name)

    def __exit__(self, *exc):
        self.tmp.cleanup()


class Frame:
    def __init__(self, g):
        self.title = g.find(SVG + "title").text
        self.name = self.title[:self.title.rindex(" (")]
        r = g.find(SVG + "rect")
        self.width = float(r.get("width"))
        self.rgb = tuple(int(v) for v in re.match(r"rgb\((\d+),(\d+),(\d+)\)",
                                                    r.get("fill")).groups())
        self.fw = int(g.get("{urn:scorch:flamegraph}w"))


def frames(svg):
    root = ET.fromstring(svg)
    return {f.name: f for f in (Frame(g) for g in root.find(".//" + SVG + "g[@id='frames']"))}


def red(c):
    return c[0] == 255 and c[1] == c[2] and c[1] < 255


def blue(c):
    return c[2] == 255 and c[0] == c[1] and c[0] < 255


WHITE = (255, 255, 255)

WANT = ("main;a 5 5\nmain;a;hot 10 30\nmain;b;cold 20 5\nmain;c 0 4\nmain;gone 6 0\n"
        "main;same 7 7\nmain;x;0x7f12ab 2 0\nmain;x;0x7f99cd 0 2\n")


def test_two_count_output():
    with Files() as f:
        assert run(DIFF, [f.b, f.a]).stdout.decode() == WANT
        out = f.path("d.folded")
        p = run(DIFF, [f.b, f.a, "-o", out])
        assert not p.stdout
        with open(out) as fp:
            assert fp.read() == WANT
        # stdin as one side; compressed inputs by magic
        assert run(DIFF, ["-", f.a], BEFORE.encode()).stdout.decode() == WANT
        gz = f.write("b.gz", subprocess.run(["gzip", "-c", f.b], capture_output=True).stdout)
        zs = f.write("a.zst", subprocess.run(["zstd", "-q", "-c", f.a],
                                             capture_output=True).stdout)
        assert run(DIFF, [gz, zs]).stdout.decode() == WANT
        # --strip-hex: the two unsymbolized frames match
        s = run(DIFF, ["--strip-hex", f.b, f.a]).stdout.decode()
        assert "main;x;0x... 2 2\n" in s and "0x7f" not in s
        # frames are escaped as the folded contract says; duplicates merge
        p = run(DIFF, [f.write("e1", "m;;x\x01y 1\nm;;x\x01y 2\n"), f.write("e2", "m;[empty];x?y 4\n")])
        assert p.stdout.decode() == "m;[empty];x?y 3 4\n"


def test_svg_colours_by_total():
    with Files() as f:
        svg = f.path("d.svg")
        run(DIFF, [f.b, f.a, "-o", svg])
        with open(svg, "rb") as fp:
            data = fp.read()
        fr = frames(data)
        assert b">Differential Flame Graph<" in data and b"change in total count" in data
        # widths from "after": gone (0 after) is not drawn, c (new) is
        assert "gone" not in fr and fr["c"].fw == 4 and fr["all"].fw == 53
        # the grown leaf is red, the shrunk one blue, the unchanged one white
        assert red(fr["hot"].rgb) and blue(fr["cold"].rgb) and fr["same"].rgb == WHITE
        # parents coloured by their total change, though their self count did not change
        assert red(fr["a"].rgb) and blue(fr["b"].rgb)
        # saturation by the size of the change: +20 is the largest (deepest), -15 lighter
        assert fr["hot"].rgb == (255, 40, 40) and fr["a"].rgb == (255, 40, 40)
        assert fr["cold"].rgb == (86, 86, 255)  # 225 - 185 * 15/20
        # main: before 50 (gone's 6 included), after 53
        assert fr["main"].title == "main (53 samples, 100.00%; before 50, after 53, +3, +6.00%)"
        assert fr["hot"].title == ("hot (30 samples, 56.60%, self 30; before 10, after 30, "
                                   "+20, +200.00%)")
        assert fr["c"].title.endswith("; before 0, after 4, +4, new)")
        assert fr["same"].title.endswith("; before 7, after 7, no change)")
        # --self: flamegraph.pl's colouring; parents whose own count held stay white
        fr = frames(run(DIFF, [f.b, f.a, "--self", "-o", "-", "--format", "svg"]).stdout)
        assert red(fr["hot"].rgb) and blue(fr["cold"].rgb)
        assert fr["a"].rgb == WHITE and fr["b"].rgb == WHITE and fr["main"].rgb == WHITE
        assert fr["hot"].title.endswith("; self before 10, after 30, +20, +200.00%)")
        # a two-count file renders the same graph through scorch flamegraph
        d2 = run(DIFF, [f.b, f.a]).stdout
        assert run(FG, ["-"], d2).stdout == data
        p = run(FG, ["-"], d2.replace(b"main;c 0 4\n", b"main;c 4\n"))
        assert b"drawn as a plain graph" in p.stderr
        assert frames(p.stdout)["hot"].rgb[2] < 100  # hot palette, not a diff colour


def test_negate():
    with Files() as f:
        fr = frames(run(DIFF, [f.b, f.a, "--negate", "--format", "svg"]).stdout)
        # widths from "before": vanished code is visible, new code is not; red still means growth
        assert fr["gone"].fw == 6 and blue(fr["gone"].rgb) and "c" not in fr
        assert fr["hot"].fw == 10 and red(fr["hot"].rgb) and blue(fr["cold"].rgb)
        assert fr["all"].fw == 50
        assert fr["gone"].title == ("gone (6 samples, 12.00%, self 6; before 6, after 0, -6, "
                                    "-100.00%)")
        # the same through scorch flamegraph --negate on the two-count file
        d2 = run(DIFF, [f.b, f.a]).stdout
        fr2 = frames(run(FG, ["--negate", "-"], d2).stdout)
        assert fr2["gone"].fw == 6 and fr2["gone"].rgb == fr["gone"].rgb
        # nothing in "after": say so
        empty_after = f.write("z", "main;a 0\n")
        p = run(DIFF, [f.b, f.write("z2", "main;q 0\nmain;r 1\n"), "-o", f.path("n.svg")])
        assert p.returncode == 0
        p = run(DIFF, [f.b, empty_after], expect_rc=1)
        assert b"every count is zero" in p.stderr


def test_normalize():
    with Files() as f:
        b = f.write("b2", "m;x 10\nm;y 10\nm;z 1\n")   # 21
        a = f.write("a2", "m;x 20\nm;y 40\nm;w 2\n")   # 62
        # folded: before scaled by 62/21 and rounded; after unchanged
        out = run(DIFF, ["-n", b, a]).stdout.decode()
        assert out == "m;w 0 2\nm;x 30 20\nm;y 30 40\nm;z 3 0\n", out
        fr = frames(run(DIFF, ["--normalize", b, a, "--format", "svg"]).stdout)
        # exact: totals equal, so the root and m are unchanged (white)
        assert fr["m"].rgb == WHITE and fr["all"].rgb == WHITE
        assert red(fr["y"].rgb) and blue(fr["x"].rgb) and red(fr["w"].rgb)
        # counts shown in "after"'s units: x before 10 * 62/21 = 29.52 -> 30
        assert fr["x"].title == "x (20 samples, 32.26%, self 20; before 30, after 20, -10, " \
                               "-32.26%)", fr["x"].title
        assert fr["m"].title.endswith("; before 62, after 62, no change)")
        # without -n the root grew
        assert red(frames(run(DIFF, [b, a, "--format", "svg"]).stdout)["m"].rgb)


def test_top():
    with Files() as f:
        p = run(DIFF, [f.b, f.a, "--top", "3"])
        want = (
            "before: @B@, 50 total; after: @A@, 53 total\n"
            "top 3 functions by self change:\n"
            "  SELF BEFORE   SELF AFTER        DELTA    DELTA% TOTAL BEFORE  TOTAL AFTER"
            "        DELTA    DELTA%  FUNCTION\n"
            "           10           30          +20  +200.00%           10           30"
            "          +20  +200.00%  hot\n"
            "           20            5          -15   -75.00%           20            5"
            "          -15   -75.00%  cold\n"
            "            6            0           -6  -100.00%            6            0"
            "           -6  -100.00%  gone\n"
            "\n"
            "top 3 functions by total change:\n"
            "  SELF BEFORE   SELF AFTER        DELTA    DELTA% TOTAL BEFORE  TOTAL AFTER"
            "        DELTA    DELTA%  FUNCTION\n"
            "            5            5            0     0.00%           15           35"
            "          +20  +133.33%  a\n"
            "           10           30          +20  +200.00%           10           30"
            "          +20  +200.00%  hot\n"
            "            0            0            0     0.00%           20            5"
            "          -15   -75.00%  b\n").replace("@B@", f.b).replace("@A@", f.a)
        assert p.stdout.decode() == want, p.stdout.decode()
        # with an output file the report goes to stderr
        svg = f.path("t.svg")
        p = run(DIFF, [f.b, f.a, "--top", "3", "-o", svg])
        assert not p.stdout and want in p.stderr.decode() and os.path.exists(svg)
        # recursion counts once in total; "new" when before was 0
        r1 = f.write("r1", "f;f;f 2\n")
        r2 = f.write("r2", "f;f;f 3\ng 1\n")
        out = run(DIFF, [r1, r2, "--top", "1"]).stdout.decode().splitlines()
        assert out[3].split() == ["2", "3", "+1", "+50.00%", "2", "3", "+1", "+50.00%", "f"]
        out = run(DIFF, [r2, r1, "--top", "5"]).stdout.decode()
        assert "  g\n" in out and "-100.00%" in out
        out = run(DIFF, [r1, r2, "--top", "5"]).stdout.decode()
        assert re.search(r"\+1\s+new\s+0\s+1\s+\+1\s+new\s+g", out), out
        # nothing changed
        out = run(DIFF, [f.b, f.b, "--top", "2"]).stdout.decode()
        assert "(no function's self count changed)" in out


def diff_prefixed(p):
    """Every message of `scorch diff` says "scorch: diff:" (or is a hint)."""
    lines = p.stderr.decode(errors="replace").splitlines()
    assert lines, "no message"
    for line in lines:
        assert line.startswith("scorch: diff: ") or line.startswith("hint: "), line


def test_top_saturated():
    with Files() as f:
        big = f.write("big", "main;a 18446744073709551615\nmain;b 5\n")
        p = run(DIFF, [big, f.a, "--top", "2"])
        err = p.stderr.decode()
        assert "the total of %s saturated" % big in err and "hint:" in err, err
        assert err.count("saturated") == 1
        diff_prefixed(p)
        # not without --top, nor when nothing saturates
        assert b"saturated" not in run(DIFF, [big, f.a]).stderr
        assert b"saturated" not in run(DIFF, [f.b, f.a, "--top", "2"]).stderr


def test_oversized_line():
    """A line over 1 MiB is skipped and reported once with its file; line numbers stay true."""
    with Files() as f:
        long = "main;" + "x" * (2 << 20) + " 9\n"
        b = f.write("long.folded", BEFORE + long + long + "main;a;b 1 2\n")
        p = run(DIFF, [b, f.a], expect_rc=1)
        err = p.stderr.decode()
        assert "%s:9: two counts on a line" % b in err, err
        b = f.write("long2.folded", BEFORE + long)
        p = run(DIFF, [b, f.a])
        assert p.stdout.decode() == WANT
        err = p.stderr.decode()
        assert "diff: %s: 1 line over 1 MiB skipped" % b in err, err
        assert err.count("skipped") == 1, err


def test_bad_input():
    with Files() as f:
        # every error says "scorch: diff:", the library's and getopt's included
        for args, rc in [([f.b, "/nonexistent/a.folded"], 1), ([f.b, f.dir], 1),
                         ([f.b, f.a, "-o", "/nonexistent/x.svg"], 1), ([f.b, f.a, "--bogus"], 2),
                         ([f.b, f.a, "--top"], 2), ([f.b, f.a, "--width", "0"], 2),
                         ([f.b], 2)]:
            diff_prefixed(run(DIFF, args, expect_rc=rc))
        p = run(DIFF, [f.b, "/nonexistent/a.folded"], expect_rc=1)
        assert b"/nonexistent/a.folded" in p.stderr and not p.stdout
        empty = f.write("empty", "")
        p = run(DIFF, [empty, f.a], expect_rc=1)
        err = p.stderr.decode()
        assert "empty (before): no stacks: an empty profile" in err and "hint:" in err
        junk = f.write("junk", "not a profile\nat all\n")
        p = run(DIFF, [f.b, junk, "-o", f.path("j.svg")], expect_rc=1)
        err = p.stderr.decode()
        assert "ignored 2 lines" in err and "junk (after): no stacks" in err
        assert not os.path.exists(f.path("j.svg"))
        assert not [n for n in os.listdir(f.dir) if ".tmp." in n]
        # a two-count file is not a profile to diff
        d2 = f.write("d2", run(DIFF, [f.b, f.a]).stdout)
        p = run(DIFF, [d2, f.a], expect_rc=1)
        assert (d2 + ":1: two counts").encode() in p.stderr
        # a truncated compressed input is an error, not half a profile
        gz = subprocess.run(["gzip", "-c", f.a], capture_output=True).stdout
        p = run(DIFF, [f.b, f.write("t.gz", gz[:len(gz) - 4])], expect_rc=1)
        assert b"truncated gzip" in p.stderr
        # wall/off-CPU markers on one side only: units may differ (warned)
        w = f.write("w", "main;read;[off-cpu] 100\nmain;a;hot 5\n")
        p = run(DIFF, [f.b, w])
        assert b"units may differ" in p.stderr and b"hint:" in p.stderr
        assert b"units may differ" not in run(DIFF, [w, w]).stderr
        # usage errors
        for args in [[f.b], [f.b, f.a, f.a], ["-", "-"], [f.b, f.a, "--top", "0"],
                     [f.b, f.a, "--top", "x"], [f.b, f.a, "--format", "png"],
                     [f.b, f.a, "--bogus"]]:
            p = run(DIFF, args, expect_rc=2)
            assert p.stderr, args
        p = run(DIFF, ["--help"])
        assert b"examples:" in p.stdout and b"--normalize" in p.stdout


def test_totals_warning():
    """Totals more than 10 % apart without -n: one warning with both totals and a hint
    to normalize; quiet with -n or when they are close. The output is unchanged."""
    with Files() as f:
        b = f.write("b130", "m;a 100\nm;b 30\n")
        a = f.write("a187", "m;a 140\nm;b 47\n")
        for args in ([b, a], [b, a, "-o", f.path("w.svg")], [b, a, "--top", "1"], [a, b]):
            p = run(DIFF, args)
            lines = p.stderr.decode().splitlines()
            assert len(lines) == 2, lines
            assert lines[0].startswith("scorch: diff: the totals differ by 44%: "), lines
            assert ("130 before, 187 after" if args[0] == b else "187 before, 130 after") \
                in lines[0], lines
            assert lines[1].startswith("hint: -n (--normalize) scales BEFORE"), lines
        assert run(DIFF, [b, a]).stdout.decode() == "m;a 100 140\nm;b 30 47\n"
        assert not run(DIFF, ["-n", b, a]).stderr
        assert not run(DIFF, ["--normalize", b, a, "-o", f.path("n.svg")]).stderr
        # 10 % apart is close enough; a little more is not, either way round
        t100, t110, t111 = (f.write("t%d" % n, "m;a %d\n" % n) for n in (100, 110, 111))
        assert not run(DIFF, [t100, t110]).stderr and not run(DIFF, [t110, t100]).stderr
        assert b"differ by 11%: 100 before, 111 after" in run(DIFF, [t100, t111]).stderr
        assert b"differ by 11%: 111 before, 100 after" in run(DIFF, [t111, t100]).stderr
        # the usual fixtures, 50 and 53: quiet
        assert not run(DIFF, [f.b, f.a]).stderr


def test_output_names():
    """An -o name of a format diff cannot write is refused (exit 2, nothing written)."""
    with Files() as f:
        hint = b"hint: scorch diff writes folded (.folded, .collapsed, .txt, or any other " \
               b"name), svg (.svg) or html (.html, .htm)\n"
        for name in ["d.pb.gz", "d.pb", "d.json", "d.scorch", "d.png", "d.JPG", "d.pdf",
                     "d.folded.gz", "d.svg.zst"]:
            out = f.path(name)
            p = run(DIFF, [f.b, f.a, "-o", out], expect_rc=2)
            err = p.stderr.decode()
            assert err.startswith("scorch: diff: cannot write %s: " % out), err
            assert p.stderr.endswith(hint) and err.count("\n") == 2, err
            assert not p.stdout and not os.path.exists(out)
        assert not [n for n in os.listdir(f.dir) if ".tmp." in n]
        for fmt in ["pprof", "speedscope", "capture", "png"]:
            p = run(DIFF, [f.b, f.a, "--format", fmt], expect_rc=2)
            assert p.stderr.endswith(hint) and b"--format" in p.stderr, p.stderr
            assert not p.stdout
        # folded: its endings, no ending, any other name, standard output
        for name in ["d.folded", "d.txt", "d.collapsed", "d", "d.out", "-"]:
            out = f.path(name) if name != "-" else "-"
            p = run(DIFF, [f.b, f.a, "-o", out])
            got = p.stdout if name == "-" else open(out, "rb").read()
            assert got.decode() == WANT, (name, got)
        run(DIFF, [f.b, f.a, "-o", f.path("d.SVG")])
        assert open(f.path("d.SVG"), "rb").read().startswith(b"<?xml")
        run(DIFF, [f.b, f.a, "-o", f.path("d.htm")])
        assert open(f.path("d.htm"), "rb").read().startswith(b"<!DOCTYPE html>")
        # --format names the format whatever the name
        run(DIFF, [f.b, f.a, "--format", "folded", "-o", f.path("x.svg")])
        assert open(f.path("x.svg")).read() == WANT


def reference_dir():
    d = os.environ.get("FLAMEGRAPH_DIR", "/tmp/FlameGraph")
    if os.path.exists(os.path.join(d, "difffolded.pl")):
        return d
    return None


def test_reference():
    d = reference_dir()
    with Files() as f:
        for flags in [[], ["-s"]]:
            ours = run(DIFF, flags + [f.b, f.a]).stdout.decode().splitlines()
            theirs = run("perl", [os.path.join(d, "difffolded.pl")] + flags + [f.b, f.a])
            assert sorted(ours) == ours, "ours is sorted"
            assert ours == sorted(theirs.stdout.decode().splitlines()), (flags, ours)
        # flamegraph.pl reads our two-count output as a differential graph
        two = f.write("two", run(DIFF, [f.b, f.a]).stdout)
        p = run("perl", [os.path.join(d, "flamegraph.pl"), two])
        svg = p.stdout.decode()
        m = re.search(r"<title>hot \(30 samples, [\d.]+%; \+([\d.]+)%\)</title>\s*"
                      r"<rect [^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)\"", svg)
        assert m, "flamegraph.pl drew hot with a delta"
        assert int(m.group(2)) == 255 and int(m.group(3)) < 255, "red in flamegraph.pl too"
        m = re.search(r"<title>cold \(5 samples, [\d.]+%; -[\d.]+%\)</title>\s*"
                      r"<rect [^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)\"", svg)
        assert m and int(m.group(3)) == 255, "cold blue in flamegraph.pl"


def main():
    if REFERENCE:
        if not reference_dir():
            print("skip: no FlameGraph checkout (set FLAMEGRAPH_DIR)")
            return 77
        tests = [("test_reference", test_reference)]
    else:
        tests = [(n, f) for n, f in sorted(globals().items())
                 if n.startswith("test_") and n != "test_reference"]
    for name, fn in tests:
        try:
            fn()
            print("ok   " + name)
        except Exception:  # noqa: BLE001 -- report every failure, then exit 1
            import traceback
            failures.append(name)
            print("FAIL " + name)
            traceback.print_exc()
    if failures:
        print("%d failed: %s" % (len(failures), " ".join(failures)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
