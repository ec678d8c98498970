# SPDX-License-Identifier: MIT
"""A busy Python process for bench/python-bench.sh: SECS seconds of small function calls
30 Python frames deep; prints "ops N" (calls completed) at the end."""
import sys
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


print("ops", deep(30, time.monotonic() + float(sys.argv[1])), flush=True)
