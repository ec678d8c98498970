# SPDX-License-Identifier: MIT
# Cyclic garbage at a known ratio (tests/record/events.sh): churn_a() makes three times
# the cycles churn_b() does, so the collector starts (USDT python:gc__start) three times
# as often in it. Prints "truth collections=N" (gc.get_stats(): every collection since
# start-up) and leaves without the collections of interpreter shutdown.
import gc
import os
import sys


class Node:
    def __init__(self):
        self.ref = self


def churn_a(n):
    for _ in range(3 * n):
        Node()


def churn_b(n):
    for _ in range(n):
        Node()


for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 50):
    churn_a(20000)
    churn_b(20000)
print("truth collections=%d" % sum(s["collections"] for s in gc.get_stats()), flush=True)
os._exit(0)
