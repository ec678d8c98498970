#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/flamegraph: golden and property tests of `scorch flamegraph` (layout, merge,
# palettes, annotations, pruning, reverse, inverted, flamechart, escaping, hostile input)
# and its HTML page (formats by name, --intervals, decoded with tests/export/checks.py).
# usage: test_cli.py FG_CLI [--update]   (FG_CLI: the scorch flamegraph command)
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

CLI = sys.argv[1]
UPDATE = "--update" in sys.argv
HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
SVG = "{http://www.w3.org/2000/svg}"
FG = "{urn:scorch:flamegraph}"
failures = []


def run(args, stdin=b"", expect_rc=0):
    p = subprocess.run([CLI] + args, input=stdin, capture_output=True)
    if expect_rc is not None and p.returncode != expect_rc:
        raise AssertionError("rc %d (want %d) for %s\nstderr: %s" %
                             (p.returncode, expect_rc, args, p.stderr.decode(errors="replace")))
    return p


def render(inp, args=(), expect_rc=0):
    """Renders folded text @inp (str or bytes) and returns (svg bytes, stderr str)."""
    if isinstance(inp, str):
        inp = inp.encode()
    p = run(list(args), inp, expect_rc)
    xmllint(p.stdout)
    return p.stdout, p.stderr.decode(errors="replace")


def xmllint(data):
    with tempfile.NamedTemporaryFile(suffix=".svg") as f:
        f.write(data)
        f.flush()
        p = subprocess.run(["xmllint", "--noout", "--nonet", f.name], capture_output=True)
        if p.returncode:
            raise AssertionError("xmllint: " + p.stderr.decode(errors="replace"))


class Frame:
    def __init__(self, g):
        self.title = g.find(SVG + "title").text
        self.name = self.title[:self.title.rindex(" (")]
        r = g.find(SVG + "rect")
        self.x, self.y = float(r.get("x")), float(r.get("y"))
        self.width, self.height = float(r.get("width")), float(r.get("height"))
        self.fill = r.get("fill")
        self.fx, self.fw = int(g.get(FG + "x")), int(g.get(FG + "w"))
        self.label = g.find(SVG + "text").text or ""

    def rgb(self):
        return tuple(int(v) for v in re.match(r"rgb\((\d+),(\d+),(\d+)\)", self.fill).groups())


def frames(svg):
    root = ET.fromstring(svg)
    g = root.find(".//" + SVG + "g[@id='frames']")
    return [Frame(c) for c in g]


def by_name(fr, name):
    return [f for f in fr if f.name == name]


def one(fr, name):
    m = by_name(fr, name)
    assert len(m) == 1, "%d frames named %r" % (len(m), name)
    return m[0]


def golden(name, svg):
    """Compares @svg, with the (shared, large) script elided, to golden/NAME.svg with diff -u."""
    text = re.sub(rb"<!\[CDATA\[.*?\]\]>", b"<![CDATA[ (script) ]]>", svg, flags=re.S)
    path = os.path.join(GOLDEN, name + ".svg")
    if UPDATE:
        with open(path, "wb") as f:
            f.write(text)
        return
    with tempfile.NamedTemporaryFile(suffix=".svg") as f:
        f.write(text)
        f.flush()
        p = subprocess.run(["diff", "-u", path, f.name], capture_output=True)
        if p.returncode:
            raise AssertionError("golden %s differs:\n%s" % (name, p.stdout.decode(errors="replace")))


SMALL = "main;foo;bar 10\nmain;foo 5\nmain;baz 3\njava;Thread.run 3\n" \
        "java;Thread.run.lambda;b 2\njava;Thread.run;a 4\n"


def close(a, b, eps=0.06):
    return abs(a - b) <= eps


def test_layout():
    svg, _ = render(SMALL)
    golden("layout", svg)
    fr = frames(svg)
    total = 27
    allf = one(fr, "all")
    assert allf.fw == total and allf.fx == 0 and close(allf.width, 1180) and allf.x == 10
    # alphabetical siblings: java (9) left of main (18)
    java, main = one(fr, "java"), one(fr, "main")
    assert java.fx == 0 and java.fw == 9 and main.fx == 9 and main.fw == 18
    assert close(main.width, 1180 * 18 / total) and close(main.x, 10 + 1180 * 9 / total)
    foo, bar = one(fr, "foo"), one(fr, "bar")
    # foo's self time (5) sits left of its child bar (10)
    assert foo.fw == 15 and bar.fx == foo.fx + 5 and bar.fw == 10
    assert "self 5" in foo.title and foo.title.startswith("foo (15 samples, 55.56%")
    # rows: the root at the bottom, one frame height (16) per level, 15 px rects
    assert allf.y > main.y > foo.y > bar.y and close(allf.y - main.y, 16) and allf.height == 15
    assert allf.title == "all (27 samples, 100.00%)"


def test_merge_frame_wise():
    # flamegraph.pl splits Thread.run in two here (whole-line sort puts Thread.run.lambda between)
    svg, _ = render(SMALL)
    fr = frames(svg)
    tr = one(fr, "Thread.run")
    assert tr.fw == 7 and "self 3" in tr.title
    assert one(fr, "a").fx >= tr.fx and one(fr, "a").fx + 4 <= tr.fx + tr.fw
    # order of input lines does not matter, and duplicates merge
    lines = SMALL.strip().split("\n")
    shuffled = "\n".join(reversed(lines)) + "\n" + "main;baz 0\n"
    svg2, _ = render(shuffled)
    assert svg2 == svg
    dup = "\n".join(lines + ["main;foo;bar 1", "main;foo;bar 2"]) + "\n"
    assert one(frames(render(dup)[0]), "bar").fw == 13


def test_deterministic_and_multi_input():
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.folded"), os.path.join(d, "b.folded")
        with open(a, "w") as f:
            f.write("main;foo 3\nmain;bar 1\n")
        with open(b, "w") as f:
            f.write("main;foo 2\nother 4\n")
        out = os.path.join(d, "o.svg")
        run([a, b, "-o", out])
        run([a, b, "-o", out + "2"])
        with open(out, "rb") as f:
            s1 = f.read()
        with open(out + "2", "rb") as f:
            assert f.read() == s1
        fr = frames(s1)
        assert one(fr, "foo").fw == 5 and one(fr, "all").fw == 10
        # stdin with "-" among files
        p = run([a, "-"], b"main;foo 2\nother 4\n")
        assert p.stdout == s1
        assert not [n for n in os.listdir(d) if ".tmp." in n]


def test_palettes_and_annotations():
    inp = ("java;Ljava/lang/Thread.run_[j];Interp_[i];JVM::gc;vfs_read_[k] 5\n"
           "java;org/x/Y.z:::m;-;cpu_idle 2\n"
           "java;com/a/B.c;--;waker_[w] 1\n")
    svg, _ = render(inp, ["--colors", "java"])
    golden("java", svg)
    fr = frames(svg)
    t = one(fr, "Ljava/lang/Thread.run")   # _[j] stripped from the name and label
    assert t.label.startswith("Ljava/lang/Thread.run") and "_[" not in t.title
    r, g, b = t.rgb()
    assert g >= 200 and r <= 110, "JIT frame should be green: %s" % t.fill
    r, g, b = one(fr, "Interp").rgb()
    assert 165 <= g == b and r <= 110, "inlined frame should be aqua"
    r, g, b = one(fr, "JVM::gc").rgb()
    assert r == g and b <= 70, "C++ frame should be yellow"
    r, g, b = one(fr, "vfs_read").rgb()
    assert r >= 190 and b == 0, "kernel frame should be orange"
    r, g, b = one(fr, "java").rgb()
    assert r >= 200 and g == b, "other user frame should be red"
    assert one(fr, "-").fill == "rgb(200,200,200)" and one(fr, "--").fill == "rgb(160,160,160)"
    # same name, same colour, in any graph and position
    svg2, _ = render("x;JVM::gc 1\n", ["--colors", "java"])
    assert one(frames(svg2), "JVM::gc").fill == one(fr, "JVM::gc").fill
    # every palette renders, and the flat ones stay in their hue
    for pal in ["hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "red", "green",
                "blue", "aqua", "yellow", "purple", "orange", "wall"]:
        s, _ = render(SMALL, ["--colors", pal])
        for f in frames(s):
            r, g, b = f.rgb()
            if pal == "red":
                assert r >= 200 and g == b
            if pal == "blue":
                assert b >= 205 and r == g
            if pal == "hot":
                assert r >= 205 and b <= 55
    # chain: frames after "--" are wakers (aqua), the rest blue
    s, _ = render("a;--;w 1\n", ["--colors", "chain"])
    r, g, b = one(frames(s), "w").rgb()
    assert g == b and r <= 110
    r, g, b = one(frames(s), "a").rgb()
    assert r == g and b >= 205
    # js: _[j] with a path is green, without aqua
    s, _ = render("node;/app/x.js:10_[j];LazyCompile_[j] 1\n", ["--colors", "js"])
    assert one(frames(s), "/app/x.js:10").rgb()[1] >= 200
    r, g, b = one(frames(s), "LazyCompile").rgb()
    assert g == b and r <= 110
    # --hash and default both deterministic; --bgcolors
    s1, _ = render(SMALL, ["--hash"])
    assert s1 == render(SMALL, ["--hash"])[0]
    s, _ = render(SMALL, ["--bgcolors", "#123abc"])
    assert b'stop-color="#123abc"' in s
    assert run(["--bgcolors", "url(x)"], SMALL.encode(), 2)
    assert run(["--colors", "bogus"], SMALL.encode(), 2)


# A chain graph (record --mode chain): the blocked stack, "--", its waker (from
# try_to_wake_up down to its comm), "--", the waker's waker... up to 4 wakers; a
# wakeup in an interrupt ends a chain, an unknown waker too.
CHAIN = ("app;main;read;schedule_[k];--;try_to_wake_up_[k];w1f;w1comm;--;try_to_wake_up_[k];"
         "w2f;w2comm;--;try_to_wake_up_[k];w3f;w3comm 40\n"
         "app;main;read;schedule_[k];--;try_to_wake_up_[k];w1f;w1comm;--;hrtimer_wakeup_[k];"
         "[irq] 10\n"
         "app;main;poll;--;w1g;w1comm;--;w2g;w2comm;--;w3g;w3comm;--;w4f;w4comm 5\n"
         "app;main;sleep;--;[unknown waker] 3\n")
# the chain palette's hue family per level, blocked stack first
CHAIN_FAMILIES = [
    ("blue", lambda r, g, b: r == g and r <= 140 and b >= 205),
    ("aqua", lambda r, g, b: g == b and r <= 110 and g >= 165),
    ("purple", lambda r, g, b: r == b and r >= 190 and g <= 140),
    ("green", lambda r, g, b: r == b and r <= 110 and g >= 200),
    ("yellow", lambda r, g, b: r == g and r >= 175 and b <= 70),
]


def svg_depths_levels(fr):
    """Each SVG frame's (depth, chain level): the "--" frames below it, its ancestors
    found by row and x."""
    ys = sorted({f.y for f in fr}, reverse=True)
    rows = {}
    for f in fr:
        rows.setdefault(ys.index(f.y), []).append(f)
    out = {}
    for d in sorted(rows):
        for f in rows[d]:
            if not d:
                out[id(f)] = (0, 0)
                continue
            p = [q for q in rows[d - 1] if q.fx <= f.fx < q.fx + q.fw]
            assert len(p) == 1, "no parent for %s" % f.name
            out[id(f)] = (d, out[id(p[0])][1] + (p[0].name == "--"))
    return out


def test_chain_palette():
    s, _ = render(CHAIN, ["--colors", "chain"])
    fr = frames(s)
    dl = svg_depths_levels(fr)
    seen = set()
    for f in fr:
        level = dl[id(f)][1]
        if f.name == "--":
            assert f.fill == "rgb(160,160,160)", "-- at level %d: %s" % (level, f.fill)
            continue
        fam = [n for n, ok in CHAIN_FAMILIES if ok(*f.rgb())]
        assert fam == [CHAIN_FAMILIES[level][0]], \
            "%s at level %d: %s in %s" % (f.name, level, f.fill, fam)
        seen.add(level)
    assert seen == {0, 1, 2, 3, 4}, seen
    # a kernel frame takes its level's hue: try_to_wake_up of three wakers, three families
    assert len({f.fill for f in by_name(fr, "try_to_wake_up")}) == 3
    # names vary inside a family, and a name keeps its colour at its level
    assert one(fr, "w2f").fill != one(fr, "w2g").fill
    assert len({f.fill for f in by_name(fr, "w1comm")}) == 1
    assert s == render(CHAIN, ["--colors", "chain"])[0]
    # _[w] without separators still marks a waker (aqua)
    s, _ = render("x;y_[w] 1\n", ["--colors", "chain"])
    r, g, b = one(frames(s), "y").rgb()
    assert g == b and r <= 110
    # wakeup: the blocked stack aqua, every waker above it blue, each -- grey
    s, _ = render(CHAIN, ["--colors", "wakeup"])
    fr = frames(s)
    dl = svg_depths_levels(fr)
    for f in fr:
        r, g, b = f.rgb()
        if f.name == "--":
            assert f.fill == "rgb(160,160,160)"
        elif dl[id(f)][1]:
            assert r == g and b >= 205, "%s: %s" % (f.name, f.fill)
        else:
            assert g == b and r <= 110, "%s: %s" % (f.name, f.fill)
    # a differential chain graph colours by the change alone
    s, _ = render("a;--;w;--;v 1 3\na;--;x 2 2\n", ["--colors", "chain"])
    for f in frames(s):
        assert 255 in f.rgb(), f.fill  # red, blue or white
    assert one(frames(s), "x").fill == "rgb(255,255,255)"


def test_chain_html_agrees():
    """The HTML page's colours (per name, and per name at a chain level) are the SVG's."""
    sys.path.insert(0, os.path.join(HERE, "..", "export"))
    from checks import load_html_colors
    with tempfile.TemporaryDirectory() as d:
        inp, page, svg = (os.path.join(d, n) for n in ("c.folded", "c.html", "c.svg"))
        with open(inp, "w") as f:
            f.write(CHAIN)
        for pal in ("chain", "wakeup"):
            run([inp, "--colors", pal, "-o", page])
            run([inp, "--colors", pal, "-o", svg])
            with open(svg, "rb") as f:
                fr = frames(f.read())
            meta, nodes, _, colors, level_colors = load_html_colors(page)
            assert level_colors, "no colours by chain level"
            # each node's depth, x (counts left of it) and level, as the page computes them
            n = len(nodes)
            parent, stack, total = [-1] * n, [0], [sv for _, _, sv in nodes]
            for i in range(1, n):
                del stack[nodes[i][0]:]
                parent[i] = stack[-1]
                stack.append(i)
            for i in range(n - 1, 0, -1):
                total[parent[i]] += total[i]
            x, used, level = [0] * n, [0] * n, [0] * n
            page_colors = {(0, 0): ("all", meta["root_color"])}
            for i in range(1, n):
                p, nm = parent[i], nodes[i][1]
                x[i] = x[p] + used[p]
                used[p] += total[i]
                level[i] = level[p] + (p > 0 and meta["names"][nodes[p][1]] == "--")
                c = level_colors.get((level[i], nm), colors[nm])
                label = re.sub(r"_\[[kijw]\]$", "", meta["names"][nm])
                page_colors[(nodes[i][0], x[i])] = (label, c)
            assert len(page_colors) == len(fr) == n
            dl = svg_depths_levels(fr)
            for f in fr:
                label, c = page_colors[(dl[id(f)][0], f.fx)]
                assert label == f.name
                assert f.rgb() == (c >> 16, c >> 8 & 255, c & 255), \
                    "%s %s: page %06x, SVG %s" % (pal, f.name, c, f.fill)


def test_cp_palette_file():
    with tempfile.TemporaryDirectory() as d:
        pal = os.path.join(d, "palette.map")
        with open(pal, "w") as f:
            f.write("foo->rgb(1,2,3)\nbad line\n")
        s, err = render(SMALL, ["--cp", "--palette-file", pal])
        assert one(frames(s), "foo").fill == "rgb(1,2,3)"
        with open(pal) as f:
            lines = f.read().splitlines()
        assert "foo->rgb(1,2,3)" in lines and any(l.startswith("bar->rgb(") for l in lines)
        assert lines == sorted(lines)
        bar = [l for l in lines if l.startswith("bar->")][0][5:]
        s2, _ = render("zzz;bar 1\n", ["--cp", "--palette-file", pal, "--colors", "blue"])
        assert one(frames(s2), "bar").fill == bar   # consistent even with another palette


def test_minwidth():
    inp = "main;big 10000\nmain;small 1\nmain;small;deeper 1\nmain;mid 100\n"
    fr = frames(render(inp, ["--minwidth", "0"])[0])
    assert len(fr) == 6
    fr = frames(render(inp)[0])          # 0.1 px of 1180 px = 10101*0.1/1180 = 0.86 samples
    assert len(fr) == 6
    fr = frames(render(inp, ["--minwidth", "1"])[0])   # 1 px = 8.6 samples: small goes
    assert not by_name(fr, "small") and not by_name(fr, "deeper") and by_name(fr, "mid")
    svg = render(inp, ["--minwidth", "1.5%"])[0]       # 151.5 samples: mid goes too
    golden("minwidth", svg)
    fr = frames(svg)
    assert sorted(f.name for f in fr) == ["all", "big", "main"]
    # height shrinks to the surviving depth: 3 rows
    h = float(ET.fromstring(svg).get("height"))
    assert h == 3 * 16 + 12 * 3 + 12 * 2 + 10
    run(["--minwidth", "abc"], b"a 1\n", 2)


def test_reverse_inverted_flamechart():
    inp = "main;foo;leaf 3\nmain;bar;leaf 2\nmain;bar 1\n"
    svg = render(inp, ["--reverse"])[0]
    golden("reverse", svg)
    fr = frames(svg)
    leaf = one(fr, "leaf")
    assert leaf.fw == 5 and by_name(fr, "bar")[0].fw in (1, 2)
    assert len(by_name(fr, "main")) == 3
    svg = render(inp, ["--inverted"])[0]
    golden("inverted", svg)
    fr = frames(svg)
    assert one(fr, "all").y < one(fr, "main").y < one(fr, "foo").y
    assert b"<title>" in svg and b">Icicle Graph<" in svg
    assert one(fr, "all").y == 12 * 3
    # inverted + subtitle: frames start below the subtitle
    fr = frames(render(inp, ["--inverted", "--subtitle", "sub"])[0])
    assert one(fr, "all").y == 12 * 3 + 12 * 2
    # flame chart: input order, only adjacent equal prefixes merge
    chart = "t;b 1\nt;a 2\nt;a;x 1\nt;b 4\n"
    svg = render(chart, ["--flamechart"])[0]
    golden("flamechart", svg)
    fr = frames(svg)
    bs = sorted(by_name(fr, "b"), key=lambda f: f.fx)
    assert [(f.fx, f.fw) for f in bs] == [(0, 1), (4, 4)]
    assert one(fr, "a").fx == 1 and one(fr, "a").fw == 3 and one(fr, "t").fw == 8
    assert b">Flame Chart<" in svg


def test_escaping_hostile():
    evil = [b'<script>alert(1)</script>', b'a&b"c\'d', b']]><x/>', b'<!-- -- -->', b"x\x1b[31my",
            b"nul\x00byte", b"bad\xff\xfeutf8\xc3", b"surrogate\xed\xa0\x80", b"tab\there",
            "\ufffe".encode(), "ok\u00e9\U0001f600".encode()]
    data = b"".join(b"proc;%s %d\n" % (e, i + 1) for i, e in enumerate(evil))
    data += b"raw;bad\xff\xfe\xc3;\xed\xa0\x80;\xf4\x90\x80\x80;\xc0\xaf 7\n"
    args = ["--title", "<b>T&itle</b> \"q\" \x01", "--subtitle", "]]></text><script>x</script>",
            "--countname", "<i>s</i>", "--nametype", "\"+alert(1)+\"", "--notes",
            "a -- b <c> -", "--fonttype", "x;}</style><script>alert(1)</script>"]
    svg, _ = render(data, args)
    golden("escaping", svg)
    root = ET.fromstring(svg)
    assert len(root.findall(".//" + SVG + "script")) == 1
    assert svg.count(b"<script") == 1 and svg.count(b"alert(1)</script>") == 0
    assert root.find(".//" + SVG + "text[@id='title']").text == '<b>T&itle</b> "q" ?'
    assert root.find(".//" + SVG + "g[@id='frames']").get(FG + "nametype") == '"+alert(1)+"'
    fr = frames(svg)
    names = [f.name for f in fr]
    assert '<script>alert(1)</script>' in names and "x?[31my" in names and "tab?here" in names
    assert "nul?byte" in names
    assert all("\x00" not in n and "\x1b" not in n for n in names)
    assert "bad\ufffd\ufffdutf8\ufffd" in names
    assert "\ufffd" * 3 in names  # U+FFFE is not allowed in XML: each byte replaced
    assert "ok\u00e9\U0001f600" in names
    assert any("<i>s</i>" in f.title for f in fr)
    style = root.find(SVG + "style").text
    assert re.fullmatch(r"[A-Za-z0-9 ,_-]+", style.split("font-family:")[1].split(";")[0])
    comments = re.findall(rb"<!--(.*?)-->", svg, re.S)
    assert any(b"NOTES" in c for c in comments)


def test_cr_in_frame():
    # a CR or LF inside a frame is escaped like other control bytes, never deleted:
    # "ma\rin" must not merge with "main"
    fr = frames(render(b"p;ma\rin 2\np;main 3\r\n")[0])
    assert one(fr, "ma?in").fw == 2 and one(fr, "main").fw == 3


def test_deep_and_huge_counts():
    deep = ";".join("f%d" % i for i in range(5000)) + " 3\n"
    svg, _ = render(deep, ["--minwidth", "0"])
    fr = frames(svg)
    assert len(fr) == 5001 and one(fr, "f4999").fw == 3
    # deeper than FG_MAX_DEPTH (8192): the levels above are one marker frame each,
    # so the SVG stops growing with the depth (a 500,000-frame line made 104 MB)
    sizes = []
    for n in (9000, 60000):
        deep = ";".join("f%d" % i for i in range(n)) + " 3\n"
        svg, err = render(deep, ["--minwidth", "0"])
        sizes.append(len(svg))
        fr = frames(svg)
        assert len(fr) == 8192 + 2 and one(fr, "f8191").fw == 3 and not by_name(fr, "f8192")
        mark = one(fr, "[deeper frames not drawn]")
        assert mark.fw == 3 and mark.y < one(fr, "f8191").y
        assert "deeper than 8192 frames" in err and "hint:" in err
        assert float(ET.fromstring(svg).get("height")) == 8194 * 16 + 12 * 3 + 12 * 2 + 10
    assert sizes[1] < sizes[0] * 1.1, sizes
    # two deep stacks: one marker each, side by side
    two = "".join(";".join(["r"] + ["%s%d" % (t, i) for i in range(8300)]) + " 2\n" for t in "ab")
    fr = frames(render(two, ["--minwidth", "0"])[0])
    assert [m.fw for m in by_name(fr, "[deeper frames not drawn]")] == [2, 2]
    svg, err = render("a;b 18446744073709551615\na;c 18446744073709551614\nd 5\n")
    fr = frames(svg)
    shift = int(re.search(r"divided by 2\^(\d+)", err).group(1))
    b, c, a = 18446744073709551615 >> shift, 18446744073709551614 >> shift, 5 >> shift
    assert one(fr, "all").fw == a + b + c and one(fr, "b").fw == b
    assert one(fr, "b").title.startswith("b (%s samples, 50.00%%" % format(b, ","))
    svg, err = render("a 18446744073709551616\nb 1\n")
    assert "ignored 1 lines" in err and one(frames(svg), "all").fw == 1


def test_input_grammar():
    inp = ("# comment line\n\n   \nmain;f 1.5\nmain;g\t2\r\nmain;h 1 4\nbad\nnum 12x\n"
           "sp ace;x y  3  \n ;a 1\n")
    svg, err = render(inp)
    fr = frames(svg)
    assert "ignored 3 lines" in err and "fractional" in err and "differential" in err
    assert one(fr, "f").fw == 2 and one(fr, "g").fw == 2 and one(fr, "h").fw == 4
    assert one(fr, "x y").fw == 3 and one(fr, "sp ace").fw == 3
    assert one(fr, " ").fw == 1  # leading space is kept, as flamegraph.pl does
    # --total, --factor
    svg, _ = render("a 10\n", ["--total", "40", "--factor", "2.5"])
    a = one(frames(svg), "a")
    assert a.title.startswith("a (25 samples, 25.00%") and close(a.width, 1180 / 4)
    svg, err = render("a 10\n", ["--total", "5"])
    assert "ignoring --total" in err


WALL = ("app;main;compute;burn 600\napp;main;wait;read;[off-cpu] 300\n"
        "app;main;wait;[runqueue] 100\napp;idle;[off-cpu] 50\n")


def test_wall_palette():
    svg, _ = render(WALL, ["--colors", "wall", "--countname", "us"])
    assert b">Wall-Clock Flame Graph<" in svg
    fr = frames(svg)

    def ref(pal, name):
        """@name's colour in a one-frame graph drawn with palette @pal."""
        return one(frames(render(name + " 1\n", ["--colors", pal])[0]), name).rgb()

    # pure classes: on-CPU frames warm (the hot colour), blocked blue, runqueue aqua
    assert one(fr, "burn").rgb() == ref("hot", "burn") and one(fr, "compute").rgb() == ref(
        "hot", "compute")
    r, g, b = one(fr, "read").rgb()
    assert (r, g, b) == ref("io", "read") and r == g and b >= 190
    offs = by_name(fr, "[off-cpu]")
    assert len(offs) == 2 and all(f.rgb() == ref("io", "[off-cpu]") for f in offs)
    r, g, b = one(fr, "[runqueue]").rgb()
    assert (r, g, b) == ref("aqua", "[runqueue]") and g == b and r <= 110
    assert one(fr, "[runqueue]").rgb() != offs[0].rgb()
    # mixed frames: the time-weighted mix of the three (inclusive shares)
    for name, cpu, off, rq in [("main", 0.6, 0.3, 0.1), ("wait", 0, 0.75, 0.25),
                               ("app", 600 / 1050, 350 / 1050, 100 / 1050)]:
        w, o, a = ref("hot", name), ref("io", name), ref("aqua", name)
        want = [cpu * w[i] + off * o[i] + rq * a[i] for i in range(3)]
        got = one(fr, name).rgb()
        assert all(abs(got[i] - want[i]) <= 0.5 + 1e-9 for i in range(3)), (name, got, want)
    # a mostly-CPU frame stays warm, a mostly-blocked one blue
    r, g, b = one(fr, "main").rgb()
    assert r > b
    r, g, b = one(fr, "wait").rgb()
    assert b > r
    # titles carry the split; the name the script parses stays the name
    assert one(fr, "main").title == ("main (1,000 us, 95.24%, 60.0% on-CPU, 40.0% off-CPU = "
                                     "30.0% blocked + 10.0% runqueue)")
    assert one(fr, "burn").title.endswith("self 600, 100.0% on-CPU, 0.0% off-CPU)")
    assert one(fr, "idle").title.endswith(", 0.0% on-CPU, 100.0% off-CPU)")
    # --reverse: the marker becomes the root, the class still comes from the original leaf
    fr = frames(render(WALL, ["--colors", "wall", "--reverse"])[0])
    assert one(fr, "[runqueue]").rgb() == ref("aqua", "[runqueue]")
    assert one(fr, "burn").rgb() == ref("hot", "burn")
    assert all(f.rgb() == ref("io", "read") for f in by_name(fr, "read"))
    # a marker that is not a leaf does not make a stack off-CPU; --cp is ignored (warned)
    svg, err = render("a;[off-cpu];x 4\n", ["--colors", "wall", "--cp", "--palette-file",
                                              "/nonexistent/p.map"])
    assert one(frames(svg), "a").rgb() == ref("hot", "a") and "--cp is ignored" in err
    # an explicit title wins
    assert b">T<" in render(WALL, ["--colors", "wall", "--title", "T"])[0]


def compress(tool, data):
    """@data compressed by the gzip or zstd command-line tool."""
    p = subprocess.run([tool, "-c"] if tool == "gzip" else [tool, "-q", "-c"], input=data,
                       capture_output=True, check=True)
    return p.stdout


def test_compressed_input():
    # big enough to span many 64 KiB input and output buffers
    plain = "".join("main;f%d;g%d %d\n" % (i % 97, i, i % 13 + 1) for i in range(60000)).encode()
    want = run([], plain).stdout
    with tempfile.TemporaryDirectory() as d:
        for tool in ["gzip", "zstd"]:
            z = compress(tool, plain)
            path = os.path.join(d, "p." + tool)   # detected by magic, not by name
            with open(path, "wb") as f:
                f.write(z)
            assert run([path]).stdout == want, tool
            assert run(["-"], z).stdout == want, tool + " stdin"
            # concatenated members / frames are one stream
            two = compress(tool, plain[:100000]) + compress(tool, plain[100000:])
            assert run(["-"], two).stdout == want, tool + " concatenated"
            # truncated anywhere, or corrupted: an error naming the file, no SVG at all
            out = os.path.join(d, "o.svg")
            for cut in [len(z) // 3, len(z) - 1]:
                with open(path, "wb") as f:
                    f.write(z[:cut])
                p = run([path, "-o", out], b"", 1)
                err = p.stderr.decode()
                assert ("%s: truncated %s" % (path, tool)) in err and "hint:" in err, err
                assert not os.path.exists(out)
            bad = bytearray(z)
            bad[len(bad) // 2] ^= 0x55
            with open(path, "wb") as f:
                f.write(bytes(bad))
            p = run([path, "-o", out], b"", 1)
            assert ("%s: corrupt %s" % (path, tool)) in p.stderr.decode(), p.stderr
            assert not os.path.exists(out)
            # trailing garbage after the stream is not silently ignored
            p = run(["-"], z + b"garbage!", 1)
            assert ("<stdin>: corrupt %s" % tool) in p.stderr.decode(), p.stderr
        # a file starting with other bytes is plain text, even a short one
        assert one(frames(run(["-"], b"x 1\n").stdout), "x").fw == 1


def test_oversized_line():
    """A line over 1 MiB is skipped, counted and reported once; it is never held in memory."""
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as o, \
            tempfile.TemporaryFile() as e:
        # written in pieces: the forked child's RSS before exec counts too
        inp.write(b"a;b 1\n")
        for _ in range(48):
            inp.write(b"x" * (1 << 20))
        inp.write(b" 5\na;c 2\n")
        for _ in range(48):
            inp.write(b"y" * (1 << 20))
        inp.seek(0)
        # the peak RSS of the command alone, far below the 48 MiB a kept line would need:
        # measured by time(1), whose own small process forks it (a child forked from this
        # test would count this test's RSS from before its exec)
        with tempfile.NamedTemporaryFile() as t:
            p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", t.name, CLI],
                                 stdin=inp, stdout=o, stderr=e)
            rc = p.wait()
            rss_kb = int(t.read().split()[-1])
        o.seek(0)
        e.seek(0)
        out, err = o.read(), e.read()
    err = err.decode(errors="replace")
    assert rc == 0, err
    assert "<stdin>: 2 lines over 1 MiB skipped" in err, err
    assert err.count("skipped") == 1, err
    names = sorted(f.name for f in frames(out))
    assert names == ["a", "all", "b", "c"], names
    assert rss_kb < 40 << 10, "peak RSS %d KB" % rss_kb


def test_empty_and_errors():
    p = run([], b"", 1)
    xmllint(p.stdout)
    assert b"No stack counts found" in p.stdout and b"no stack counts" in p.stderr
    p = run([], b"garbage\n", 1)
    assert b"ignored 1 lines" in p.stderr
    p = run(["/nonexistent/x.folded"], b"", 1)
    assert b"/nonexistent/x.folded" in p.stderr and not p.stdout
    p = run(["/"], b"", 1)
    assert b"cannot read /" in p.stderr
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "e.svg")
        run(["-o", out], b"", 1)
        with open(out, "rb") as f:
            assert b"No stack counts found" in f.read()
        # a failed read leaves no output file behind
        run(["/nonexistent", "-o", out + "2"], b"", 1)
        assert not os.path.exists(out + "2")
        assert not [n for n in os.listdir(d) if ".tmp." in n]
    p = run(["-o", "/nonexistent/dir/x.svg"], b"a 1\n", 1)
    assert b"/nonexistent/dir/x.svg" in p.stderr
    run(["--nosuchoption"], b"", 2)
    run(["--width", "0"], b"", 2)
    p = run(["--help"], b"", 0)
    assert b"EXAMPLES" in p.stdout.upper() and b"--minwidth" in p.stdout


def test_html_output():
    sys.path.insert(0, os.path.join(HERE, "..", "export"))
    from checks import load_html
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.folded"), os.path.join(d, "b.folded")
        with open(a, "w") as f:
            f.write("main;x 3\nmain;y 1\n")
        with open(b, "w") as f:
            f.write("main;y 5\n")
        # by the name, .html or .htm, or by --format
        for args in (["-o", os.path.join(d, "p.html")], ["-o", os.path.join(d, "p.htm")],
                     ["--format", "html", "-o", os.path.join(d, "p.out")]):
            run([a] + args)
            meta, nodes, intervals = load_html(args[-1])
            assert meta["names"] == ["main", "x", "y"] and not intervals, meta
            assert nodes == [(0, -1, 0), (1, 0, 0), (2, 1, 3), (2, 2, 1)], nodes
            # a page names not the file it was written to (nor its directory): it may
            # be copied or shared anywhere
            with open(args[-1], "rb") as f:
                page = f.read()
            for where in (args[-1], os.path.basename(args[-1]), d):
                assert where.encode() not in page, f"the page holds its path {where}"
        # --intervals: one interval per file, in order
        out = os.path.join(d, "t.html")
        run(["--intervals", a, b, "-o", out])
        meta, nodes, intervals = load_html(out)
        assert nodes == [(0, -1, 0), (1, 0, 0), (2, 1, 3), (2, 2, 6)], nodes
        assert intervals == [{2: 3, 3: 1}, {3: 5}], intervals
        p = run(["--intervals", a, b, "-o", os.path.join(d, "t.svg")], b"", 2)
        assert b"only the HTML page" in p.stderr
        # no stack counts: the page says so, exit 1
        p = run(["-o", out], b"", 1)
        assert b"no stack counts" in p.stderr and load_html(out)[1] == [(0, -1, 0)]
        # the SVG of the same input is unchanged by the page's existence
        assert run([a]).stdout.startswith(b"<?xml")


def test_output_names():
    """-o chooses svg, html, pprof or speedscope; a name asking for anything else is
    refused (exit 2, nothing written), not drawn as an SVG under that name."""
    hint = b"hint: scorch flamegraph writes svg (.svg, or any other name), html (.html, " \
           b".htm), pprof (.pb.gz, .pb) or speedscope (.json)\n"
    with tempfile.TemporaryDirectory() as d:
        a = os.path.join(d, "a.folded")
        with open(a, "w") as f:
            f.write("main;x 3\nmain;y 1\n")
        for name in ("o.png", "o.PNG", "o.jpg", "o.pdf", "o.folded", "o.txt", "o.collapsed",
                     "o.scorch", "o.svg.gz", "o.folded.zst"):
            out = os.path.join(d, name)
            p = run([a, "-o", out], b"", 2)
            err = p.stderr.decode()
            assert err.startswith("scorch: flamegraph: cannot write %s: " % out), err
            assert p.stderr.endswith(hint) and err.count("\n") == 2, err
            assert not os.path.exists(out) and not p.stdout
        assert not [n for n in os.listdir(d) if ".tmp." in n]
        for fmt in ("folded", "capture", "png"):
            p = run([a, "--format", fmt], b"", 2)
            assert b"--format" in p.stderr and p.stderr.endswith(hint), p.stderr
        # what it writes: by the ending, else an SVG
        for name, magic in (("o.svg", b"<?xml"), ("o", b"<?xml"), ("o.out", b"<?xml"),
                            ("o.html", b"<!DOCTYPE html>"), ("o.json", b'{"$schema"'),
                            ("o.pb.gz", b"\x1f\x8b")):
            out = os.path.join(d, name)
            run([a, "-o", out])
            with open(out, "rb") as f:
                assert f.read().startswith(magic), name


def test_permission_hints():
    """Permission denied gets a hint about permissions, not "check the file name". As
    root the command runs as uid 65534 (root reads and writes anything)."""
    root = os.geteuid() == 0
    as_user = (lambda: (os.setgroups([]), os.setgid(65534), os.setuid(65534))) if root else None
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        a, secret, ro = (os.path.join(d, n) for n in ("a.folded", "secret.folded", "ro"))
        for path in (a, secret):
            with open(path, "w") as f:
                f.write("main;x 3\n")
        os.chmod(a, 0o644)
        os.chmod(secret, 0o600 if root else 0)
        os.mkdir(ro, 0o755 if root else 0o555)
        uid = 65534 if root else os.geteuid()

        def fails(args):
            p = subprocess.run([CLI] + args, capture_output=True, preexec_fn=as_user)
            assert p.returncode == 1, (args, p.returncode, p.stderr)
            return p.stderr.decode()

        err = fails([secret, "-o", os.path.join(d, "o.svg")])
        assert "cannot open %s: Permission denied" % secret in err, err
        assert "hint: uid %d may not read '%s'" % (uid, secret) in err, err
        assert "check the file name" not in err, err
        err = fails([a, "-o", os.path.join(ro, "o.svg")])
        assert "cannot write %s: " % os.path.join(ro, "o.svg") in err, err
        assert "hint: uid %d may not create files in '%s'" % (uid, ro) in err, err
        # a name that is wrong keeps its hint; a directory that is missing gets its own
        err = fails([os.path.join(d, "missing.folded")])
        assert "hint: check the file name" in err, err
        err = fails([a, "-o", os.path.join(d, "no", "o.svg")])
        assert "hint: the directory '%s' does not exist" % os.path.join(d, "no") in err, err
        os.chmod(ro, 0o755)


def test_help_names_every_format():
    """--help and the manual page say every format -o writes, not the SVG alone."""
    out = run(["--help"]).stdout.decode()
    usage = out.split("\n\n")[0]
    for name in ("OUT.svg", "OUT.html", "OUT.pb.gz", "OUT.json"):
        assert name in usage, usage
    assert "write the SVG to FILE" not in out
    opt = out[out.index("  -o, --output FILE"):out.index("      --format")]
    for fmt in ("SVG", "FILE.html", "pprof", "speedscope"):
        assert fmt in opt, opt
    with open(os.path.join(HERE, "..", "..", "docs", "man", "scorch-flamegraph.1")) as f:
        page = f.read()
    synopsis = page[page.index(".SH SYNOPSIS"):page.index(".SH DESCRIPTION")]
    assert "OUT.pb.gz" in synopsis and "OUT.json" in synopsis, synopsis
    assert "Write the SVG to FILE" not in page


def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")]
    if UPDATE:
        os.makedirs(GOLDEN, exist_ok=True)
    for name, fn in tests:
        try:
            fn()
            print("ok   " + name)
        except Exception as e:  # noqa: BLE001 -- report every failure, then exit 1
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
