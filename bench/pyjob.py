# SPDX-License-Identifier: MIT
"""A busy Python process for bench/python-bench.sh: SECS seconds of small function calls
30 Python frames deep; prints "ops N" (calls completed) at the end.

usage: pyjob.py SECS"""
import argparse
import time


def leaf(x):
    return x * x % 7


def work(n):
    s = 0
    for i in range(n):
        s += leaf(i)
    return s


def deep(d, end):
    if d:
        return deep(d - 1, end)
    ops = 0
    while time.monotonic() < end:
        work(1000)
        ops += 1000
    return ops


ap = argparse.ArgumentParser(prog="pyjob.py", description=__doc__.split("\n\n")[0])
ap.add_argument("secs", metavar="SECS", type=float, help="seconds of work")
print("ops", deep(30, time.monotonic() + ap.parse_args().secs), flush=True)
