#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""export unit tests: runs test_export (builder + pprof decoded with protoc-c), then
checks its speedscope files with the json module and its pprof file with `go tool
pprof`, and `scorch flamegraph IN.folded -o x.pb.gz|x.json` on known folded input.

   test_export.py TEST_EXPORT FG_CLI
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import CheckError, check, go_pprof, load_speedscope, pprof_top, speedscope_shares  # noqa: E402


def unit(test_export, d):
    r = subprocess.run([test_export, d], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    check(r.returncode == 0, "test_export failed")

    doc = load_speedscope(os.path.join(d, "unit.json"))
    check(doc["name"] == 'unit "test"', "file name escaped and read back")
    names = [f["name"] for f in doc["shared"]["frames"]]
    check(set(names) == {"main", "outer", "inner", "[truncated]"}, f"frames {names}")
    files = {f["name"]: f.get("file") for f in doc["shared"]["frames"]}
    check(files["inner"] == "app.c" and "file" not in doc["shared"]["frames"][names.index("[truncated]")],
          f"frame files {files}")
    profs = {p["name"]: p for p in doc["profiles"]}
    check(set(profs) == {"app (pid 42)", "app (pid 43)"}, f"one profile per process: {list(profs)}")
    p42 = profs["app (pid 42)"]
    check(sum(p42["weights"]) == 8 and p42["unit"] == "none", "pid 42 weights: 5 + 3 samples")
    check(sum(profs["app (pid 43)"]["weights"]) == 2, "pid 43 weights")
    stacks = sorted([names[i] for i in s] for s in p42["samples"])
    check(stacks == [["[truncated]", "main"], ["main", "outer", "inner"]],
          f"stacks root first, inline chain outermost first: {stacks}")
    check(doc["profiles"][doc["activeProfileIndex"]]["name"] == "app (pid 42)",
          "the heaviest process is shown first")

    doc = load_speedscope(os.path.join(d, "hostile.json"))
    names = [f["name"] for f in doc["shared"]["frames"]]
    check('q"uote' in names and "back\\slash" in names, "quotes and backslashes round-trip")
    check("ctl\x01\x1f\x7f" in names and "tab\tnl\ncr\r" in names, "control bytes round-trip")
    check("bad\ufffd\ufffd utf8" in names and "trunc\ufffd\ufffd" in names,
          "invalid UTF-8 replaced byte by byte")
    check("ok \u20ac euro" in names, "valid UTF-8 kept")
    check("surrogate \ufffd\ufffd\ufffd" in names and "over\ufffd\ufffd" in names,
          "surrogates and overlong forms replaced")
    check(any(len(n) == 100000 for n in names), "a 100,000-byte name kept whole")
    check(doc["profiles"][1]["name"] == 'co"mm\ufffd (pid 1)' or
          doc["profiles"][0]["name"] == 'co"mm\ufffd (pid 1)', "profile names escaped")
    check(doc["profiles"][0]["unit"] == "microseconds", "unit from the value type")

    if go_pprof():
        rows, out = pprof_top(os.path.join(d, "unit.pb.gz"))
        top = {name: (flat, cum) for flat, cum, name in rows}
        # cpu/nanoseconds (the last sample type, pprof's default): inner 50+20 (inlined
        # into outer), main 30 below the [truncated] marker
        check(top.get("inner (inline)") == (70.0, 70.0) and top.get("outer") == (0.0, 70.0),
              f"inline chain: {out}")
        check(top.get("main") == (30.0, 100.0) and top.get("[truncated]") == (0.0, 30.0),
              f"main and the marker: {out}")
        rows, out = pprof_top(os.path.join(d, "unit.pb.gz"), ["-sample_index=samples"])
        check(rows[0][2] == "inner (inline)" and abs(rows[0][0] - 70.0) < 0.01, f"samples index: {out}")
        print("go tool pprof reads the unit profile")
    elif os.environ.get("CI") == "true":
        raise CheckError("go (golang-go) is missing under CI: run scripts/setup.sh")
    else:
        print("SKIP part: go tool pprof (golang-go not installed)")


# not sorted: burn_c's stack sorts first
FOLDED = "app;main;work;burn_a 50\napp;main;work;burn_b 30\napp;main;burn_c 20\nnot a line\n"


def from_folded(fg_cli, d):
    src = os.path.join(d, "in.folded")
    with open(src, "w") as f:
        f.write(FOLDED)
    js = os.path.join(d, "out.json")
    r = subprocess.run([fg_cli, src, "-o", js], capture_output=True, text=True)
    check(r.returncode == 0, f"flamegraph -o x.json: {r.stderr}")
    doc = load_speedscope(js)
    incl, total = speedscope_shares(doc)
    check(total == 100 and incl["burn_a"] == 50 and incl["work"] == 80 and incl["app"] == 100,
          f"speedscope weights from folded: {incl} / {total}")
    # counts of no known period: unit none; the samples in the folded order, whatever the
    # input's, so that speedscope's Time Order view draws them as a flame graph
    check(doc["profiles"][0]["unit"] == "none", "folded counts: unit none")
    frames = doc["shared"]["frames"]
    stacks = [";".join(frames[i]["name"] for i in s) for s in doc["profiles"][0]["samples"]]
    check(stacks == ["app;main;burn_c", "app;main;work;burn_a", "app;main;work;burn_b"],
          f"speedscope samples not in the folded order: {stacks}")
    pb = os.path.join(d, "out.pb.gz")
    r = subprocess.run([fg_cli, src, "-o", pb], capture_output=True, text=True)
    check(r.returncode == 0, f"flamegraph -o x.pb.gz: {r.stderr}")
    with open(pb, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "pprof output is gzipped")
    if go_pprof():
        rows, out = pprof_top(pb)
        check(rows[0][2] == "burn_a" and abs(rows[0][0] - 50.0) < 0.01, f"pprof top: {out}")
    # a format chosen explicitly, to standard output
    r = subprocess.run([fg_cli, "--format", "speedscope", src], capture_output=True)
    check(r.returncode == 0 and r.stdout.startswith(b'{"$schema"'), "--format speedscope to stdout")
    r = subprocess.run([fg_cli, "--format", "nope", src], capture_output=True, text=True)
    check(r.returncode == 2 and "hint:" in r.stderr, f"bad --format is a usage error: {r.stderr}")
    # empty input: an error, nothing written
    empty = os.path.join(d, "empty.folded")
    open(empty, "w").close()
    r = subprocess.run([fg_cli, empty, "-o", os.path.join(d, "e.json")], capture_output=True,
                       text=True)
    check(r.returncode == 1 and not os.path.exists(os.path.join(d, "e.json")),
          f"no stack counts: exit 1, no file: {r.stderr}")


def main():
    test_export, fg_cli = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        try:
            unit(test_export, d)
            from_folded(fg_cli, d)
        except CheckError as e:
            print(f"FAIL: {e}")
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
