#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Python frame in pprof and speedscope: its function is the bare name in its source
file ("<module>" of /srv/app/app.py), not the folded "<module> (app.py)" of no file,
which `go tool pprof`'s demangler cut to "" (a blank row, a blank bar). `test_capture
--python` writes a capture of CPython stacks, `scorch report` names them unprivileged.

   test_python_pprof.py TEST_CAPTURE SCORCH TEST_EXPORT
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import CheckError, check, go_pprof, go_tool_pprof, load_speedscope, pprof_top  # noqa: E402

APP, JSON = "/srv/app/app.py", "/usr/lib/python3.11/json/__init__.py"
WANT = {"<module>": APP, "handle": APP, "dumps": JSON}


def run(test_capture, scorch, test_export, d):
    cap, pb, js, folded = (os.path.join(d, n) for n in ("py.scorch", "py.pb.gz", "py.json",
                                                           "py.folded"))
    subprocess.run([test_capture, "--python", cap], check=True)
    subprocess.run([scorch, "report", "-q", cap, "-o", pb, "-o", js, "-o", folded], check=True)

    # the folded format is a contract: its frames keep the file
    with open(folded) as f:
        text = f.read()
    check(";<module> (app.py);handle (app.py);dumps (json/__init__.py);" in text,
          f"folded Python frames changed: {text!r}")

    r = subprocess.run([test_export, "--functions", pb], capture_output=True, text=True,
                       check=True)
    funcs = {}
    for line in r.stdout.splitlines():
        name, system_name, filename = line.split("\t")
        funcs[name] = (system_name, filename)
    print(f"pprof functions: {funcs}")
    for name, file in WANT.items():
        check(name in funcs, f"no pprof function {name!r}: {funcs}")
        check(funcs[name][1] == file, f"{name}: filename {funcs[name][1]!r}, want {file!r}")
        # no system_name: pprof takes the name as demangled already and keeps it
        check(funcs[name][0] == "", f"{name}: system_name {funcs[name][0]!r}")
    check(not any("(" in n for n in funcs), f"a file left in a function's name: {funcs}")

    doc = load_speedscope(js)
    frames = {f["name"]: f.get("file") for f in doc["shared"]["frames"]}
    for name, file in WANT.items():
        check(frames.get(name) == file, f"speedscope frame {name}: {frames}")

    if not go_pprof():
        if os.environ.get("CI") == "true":
            raise CheckError("go (golang-go) is missing under CI: run scripts/setup.sh")
        print("SKIP part: go tool pprof (golang-go not installed)")
        return
    # as a user runs it: pprof symbolizes and demangles (-symbolize=none would skip that)
    rows, out = pprof_top(pb, ["-cum"], symbolize="")
    names = {name: cum for _, cum, name in rows}
    print(out)
    check("<unknown>" not in names and "" not in names, f"a blank function: {out}")
    check(names.get("<module>") == 100.0 and names.get("handle") == 60.0 and
          names.get("dumps") == 60.0, f"pprof -top -cum: {out}")
    raw = go_tool_pprof(pb, ["-raw"])
    check(f"<module> {APP}:" in raw and f"dumps {JSON}:" in raw, f"pprof -raw: {raw}")
    lst = go_tool_pprof(pb, ["-list", "^<module>$"])
    check(f"ROUTINE ======================== <module> in {APP}" in lst, f"pprof -list: {lst}")
    print("go tool pprof names every Python function, in its file")


def main():
    with tempfile.TemporaryDirectory() as d:
        try:
            run(*sys.argv[1:4], d)
        except CheckError as e:
            print(f"FAIL: {e}")
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
