# SPDX-License-Identifier: MIT
"""Shared checks of scorch's exports: speedscope JSON against the schema's required
fields, `go tool pprof -top` parsed into rows (run with a private HOME/GOCACHE), and
the HTML page's embedded profile decoded (DESIGN.md, "HTML page")."""
import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile

UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
SCHEMA = "https://www.speedscope.app/file-format-schema.json"


class CheckError(Exception):
    pass


def check(cond, what):
    if not cond:
        raise CheckError(what)


class Varints:
    """Reads base-128 varints (protobuf's, the HTML page's tree) from @buf in order;
    @what names it in the failure of a truncated one."""

    def __init__(self, buf, what):
        self.buf, self.pos, self.what = buf, 0, what

    def next(self):
        v = shift = 0
        while True:
            check(self.pos < len(self.buf), f"{self.what} is truncated")
            b = self.buf[self.pos]
            self.pos += 1
            v |= (b & 127) << shift
            shift += 7
            if not b & 128:
                return v

    def done(self):
        return self.pos >= len(self.buf)


def load_speedscope(path):
    """Parses @path (strict JSON: no NaN, no duplicate-free assumptions) and checks
    every field the schema requires of a file of sampled profiles. Returns the dict."""
    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")  # must be valid UTF-8

    def no_const(c):
        raise CheckError(f"{path}: non-JSON constant {c}")

    doc = json.loads(text, parse_constant=no_const)
    check(isinstance(doc, dict), "top level is an object")
    check(doc.get("$schema") == SCHEMA, "$schema")
    frames = doc.get("shared", {}).get("frames")
    check(isinstance(frames, list), "shared.frames is a list")
    for fr in frames:
        check(isinstance(fr, dict) and isinstance(fr.get("name"), str), f"frame {fr!r} has a name")
        if "file" in fr:
            check(isinstance(fr["file"], str), "frame file is a string")
    profiles = doc.get("profiles")
    check(isinstance(profiles, list), "profiles is a list")
    for p in profiles:
        for k in ("type", "name", "unit", "startValue", "endValue", "samples", "weights"):
            check(k in p, f"profile has {k}")
        check(p["type"] == "sampled", "profile type sampled")
        check(p["unit"] in UNITS, f"unit {p['unit']}")
        check(len(p["samples"]) == len(p["weights"]), "one weight per sample")
        for s in p["samples"]:
            check(isinstance(s, list) and s, "a sample is a non-empty stack")
            for i in s:
                check(isinstance(i, int) and 0 <= i < len(frames), f"frame index {i} in range")
        check(all(isinstance(w, int) and w >= 0 for w in p["weights"]), "weights")
        check(p["startValue"] <= p["endValue"], "startValue <= endValue")
        check(p["endValue"] - p["startValue"] == sum(p["weights"]), "endValue is the total")
    if "activeProfileIndex" in doc and profiles:
        check(0 <= doc["activeProfileIndex"] < len(profiles), "activeProfileIndex in range")
    return doc


def speedscope_shares(doc, profile_filter=None, period_ns=None):
    """{frame name: weight of samples containing it (once per sample)}, total. With
    @period_ns (a cpu profile's, whose weights are nanoseconds: the count times the
    period, rounded), the weights are turned back into sample counts."""
    frames = doc["shared"]["frames"]
    incl, total = {}, 0
    for p in doc["profiles"]:
        if profile_filter and not profile_filter(p):
            continue
        for s, w in zip(p["samples"], p["weights"]):
            if period_ns:
                check(p["unit"] == "nanoseconds", f"unit {p['unit']}, not nanoseconds")
                w = round(w / period_ns)
            total += w
            for name in {frames[i]["name"] for i in s}:
                incl[name] = incl.get(name, 0) + w
    return incl, total


def load_html(path):
    """Decodes the HTML page @path: returns (meta, nodes, intervals) where nodes are
    (depth, name, self) in preorder, the root first, and intervals a list, per
    interval, of {node index: self count} (empty without intervals)."""
    return load_html_colors(path)[:3]


def load_html_colors(path):
    """load_html() and the colours: (meta, nodes, intervals, colors, level_colors), colors
    0xRRGGBB per name, level_colors {(chain level, name): 0xRRGGBB} for the names whose
    colour above "--" frames differs from their own."""
    with open(path, "rb") as f:
        page = f.read().decode("utf-8")
    m = re.search(r'<script type="application/json" id="scorch-meta">(.*?)</script>', page, re.S)
    t = re.search(r'id="scorch-tree" data-encoding="gzip\+base64">(.*?)</script>', page, re.S)
    check(m and t, f"{path}: no embedded profile")
    meta = json.loads(m.group(1))
    rd = Varints(gzip.decompress(base64.b64decode(t.group(1))), f"{path}: the tree")
    nxt = rd.next

    check(nxt() == 2, f"{path}: tree format version")
    diff, n, nint, nnames = nxt() & 1, nxt(), nxt(), nxt()
    check(nnames == len(meta["names"]), f"{path}: names and tree disagree")
    colors = [nxt() for _ in range(nnames)]
    level_colors, level, name = {}, 0, 0
    for _ in range(nxt()):
        dl = nxt()
        level += dl
        name = (0 if dl else name) + nxt()
        check(level >= 1 and name < nnames, f"{path}: bad colour by chain level")
        level_colors[(level, name)] = nxt()
    nodes, prev = [(0, -1, 0)], 0
    for _ in range(n - 1):
        depth = prev + 1 - nxt()
        name, self = nxt(), nxt()
        if diff:
            nxt()
        nodes.append((depth, name, self))
        prev = depth
    intervals = []
    for _ in range(nint):
        node, slices = -1, {}
        for _ in range(nxt()):
            node += nxt()
            slices[node] = nxt()
        intervals.append(slices)
    check(rd.done(), f"{path}: trailing data after the tree")
    return meta, nodes, intervals, colors, level_colors


def pprof_scalars(path):
    """The top-level varint fields of the pprof file @path (gzipped profile.proto) by
    field number: 9 time_nanos, 10 duration_nanos, 12 period (the rest are messages
    and repeated fields, skipped). Needs no protobuf library."""
    with open(path, "rb") as f:
        rd = Varints(gzip.decompress(f.read()), f"{path}: a varint")
    varint, out = rd.next, {}

    while not rd.done():
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            out[field] = varint()
        elif wire == 2:
            n = varint()
            rd.pos += n
        elif wire == 1:
            rd.pos += 8
        elif wire == 5:
            rd.pos += 4
        else:
            raise CheckError(f"{path}: wire type {wire}")
    check(rd.pos == len(rd.buf), f"{path}: a field runs past the end")
    return out


def go_pprof():
    """The `go` command, or None."""
    return shutil.which("go")


ROW = re.compile(r"^\s*(\S+)\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+([\d.]+)%\s+(.+?)\s*$")


def go_tool_pprof(path, args):
    """The standard output of `go tool pprof ARGS PATH` (a private HOME/GOCACHE)."""
    home = tempfile.mkdtemp(prefix="scorch-gohome-")
    env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"),
               GOPATH=os.path.join(home, "go"), PPROF_TMPDIR=home)
    try:
        r = subprocess.run([go_pprof(), "tool", "pprof", *args, path],
                           capture_output=True, text=True, env=env, timeout=120)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if r.returncode != 0:
        raise CheckError(f"go tool pprof failed on {path}: {r.stderr.strip()}")
    return r.stdout


def pprof_top(path, extra=(), symbolize="none"):
    """Rows (flat%, cum%, name) of `go tool pprof -top` on @path, in its order; with
    symbolize="" pprof runs as a user runs it (its demangler included)."""
    sym = [f"-symbolize={symbolize}"] if symbolize else []
    out = go_tool_pprof(path, ["-top", *sym, "-nodefraction=0", *extra])
    rows, header = [], False
    for line in out.splitlines():
        if re.match(r"^\s*flat\s+flat%", line):
            header = True
            continue
        m = ROW.match(line) if header else None
        if m:
            rows.append((float(m.group(2)), float(m.group(5)), m.group(6)))
    check(rows, f"go tool pprof -top printed no rows: {out!r}")
    return rows, out
