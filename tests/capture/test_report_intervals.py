#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/capture: `scorch report` of a capture recorded with --interval gives the HTML
# page one slice of its timeline per interval, whatever the order of the counts in the
# capture: `test_capture --intervals` writes six 0.5 s intervals holding 10, 20, 30, 0,
# 50 and 0 samples, its counts out of interval order. The folded output is their sum.
# usage: test_report_intervals.py TEST_CAPTURE SCORCH CHECKS_DIR
import os
import subprocess
import sys
import tempfile

TEST_CAPTURE, SCORCH = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from checks import CheckError, check, load_html  # noqa: E402

WANT = [10, 20, 30, 0, 50, 0]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cap = os.path.join(tmp, "iv.scorch")
        page, folded = os.path.join(tmp, "iv.html"), os.path.join(tmp, "iv.folded")
        subprocess.run([TEST_CAPTURE, "--intervals", cap], check=True)
        subprocess.run([SCORCH, "report", "-q", cap, "-o", page, "-o", folded], check=True)
        try:
            meta, nodes, intervals = load_html(page)
            got = [sum(iv.values()) for iv in intervals]
            print(f"the page's intervals: {got}, want {WANT}")
            check(got == WANT, "the page's intervals are not the capture's")
            check(meta["interval"] == 0.5, f"the page's interval is {meta['interval']} s")
            check(sum(s for _, _, s in nodes) == sum(WANT), "the tree is not the intervals' sum")
            with open(folded) as f:
                total = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
            check(total == sum(WANT), f"the folded output holds {total}, not {sum(WANT)}")
            # an SVG of the same capture: the merged whole, drawn as without intervals
            svg = os.path.join(tmp, "iv.svg")
            subprocess.run([SCORCH, "report", "-q", cap, "-o", svg], check=True)
            with open(svg) as f:
                check(f"{sum(WANT)} samples" in f.read(), "the SVG is not the merged whole")
        except CheckError as e:
            print(f"FAIL: {e}")
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
