#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/capture: what a recording was, said by each output of its report as record
# says it (summary__describe()): `test_capture --describe` writes a capture of known
# figures (PID 42 on host "box", 2 s at -F 1000 lowered to 250 Hz on average, 5 %
# lost, from 2025-01-02 03:04:05 UTC); the SVG's and HTML page's subtitle,
# speedscope's name and pprof's comment must be the line below, pprof's time and
# duration the recording's; --subtitle wins; no output names the file it was written to.
# usage: test_report_describe.py TEST_CAPTURE SCORCH CHECKS_DIR
import os
import re
import subprocess
import sys
import tempfile

TEST_CAPTURE, SCORCH = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from checks import CheckError, check, go_pprof, go_tool_pprof, load_html  # noqa: E402

WANT = ("cpu at 1000 Hz (lowered: 250 Hz on average), PID 42 (desc), 2.00 s from "
        "2025-01-02 03:04:05 UTC on box: 500 samples, 5.00% lost")


def svg_subtitle(path):
    with open(path) as f:
        m = re.search(r'<text id="subtitle"[^>]*>([^<]*)<', f.read())
    return m.group(1) if m else None


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cap = os.path.join(tmp, "d.scorch")
        outs = {ext: os.path.join(tmp, "d." + ext) for ext in ("svg", "html", "json", "pb.gz")}
        subprocess.run([TEST_CAPTURE, "--describe", cap], check=True)
        args = [SCORCH, "report", "-q", cap]
        for path in outs.values():
            args += ["-o", path]
        subprocess.run(args, check=True)
        try:
            got = {"SVG subtitle": svg_subtitle(outs["svg"]),
                   "HTML subtitle": load_html(outs["html"])[0]["subtitle"]}
            import json
            with open(outs["json"]) as f:
                got["speedscope name"] = json.load(f)["name"]
            if go_pprof():
                got["pprof comment"] = go_tool_pprof(outs["pb.gz"], ["-comments"]).strip()
                raw = go_tool_pprof(outs["pb.gz"], ["-raw"])
                check("Time: 2025-01-02 03:04:05 +0000 UTC" in raw and "Duration: 2s" in raw,
                      f"pprof's time and duration: {raw[:300]}")
            for what, text in got.items():
                print(f"{what}: {text}")
                check(text == WANT, f"{what} is {text!r}, not {WANT!r}")
            for path in outs.values():
                with open(path, "rb") as f:
                    check(tmp.encode() not in f.read(), f"{path} holds its directory")
            # the user's subtitle wins
            subprocess.run([SCORCH, "report", "-q", cap, "--subtitle", "mine", "-o",
                            outs["svg"]], check=True)
            check(svg_subtitle(outs["svg"]) == "mine", "--subtitle did not win")
        except CheckError as e:
            print(f"FAIL: {e}")
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
