#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/capture: `scorch report` folds the counts of a capture as it reads them, so its
# memory does not grow with the number of stacks: 100,000 counts of 120 frames (96 MB
# of addresses if they were all kept) must be reported within a fixed bound.
# usage: test_report_memory.py TEST_CAPTURE SCORCH
import os
import subprocess
import sys
import tempfile

TEST_CAPTURE, SCORCH = sys.argv[1], sys.argv[2]
COUNTS = 100000


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cap = os.path.join(tmp, "big.scorch")
        out = os.path.join(tmp, "big.folded")
        subprocess.run([TEST_CAPTURE, "--big", cap, str(COUNTS)], check=True)
        with open(os.path.join(tmp, "err"), "w+b") as err:
            p = subprocess.Popen([SCORCH, "report", "-q", cap, "-o", out], stderr=err)
            # the peak RSS of this child alone
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            msg = err.read().decode(errors="replace")
        if p.returncode:
            print("FAIL report exited %d: %s" % (p.returncode, msg))
            return 1
        with open(out) as f:
            total = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
        if total != COUNTS:
            print("FAIL the folded counts add up to %d, not %d" % (total, COUNTS))
            return 1
        if ru.ru_maxrss > 48 << 10:
            print("FAIL peak RSS %d KB for %d counts (bound 48 MiB)" % (ru.ru_maxrss, COUNTS))
            return 1
        print("ok   report of %d counts in %d KB" % (COUNTS, ru.ru_maxrss))
    return 0


if __name__ == "__main__":
    sys.exit(main())
