# SPDX-License-Identifier: MIT
"""Python workloads whose true profile is known by construction (tests/record/python.sh).

  cpu SECS      hot_a, hot_b and hot_c get 50/30/20 % of the CPU: the same work per call,
                called 5:3:2 in a shuffled round robin
  threads SECS  four threads, each spinning in its own function spin_1 .. spin_4
  off SECS      napper sleeps in time.sleep, waiter blocks in queue.get
  short         a process of about 60 ms, spinning in short_lived

Prints "ready PID" once the measured part runs.
"""
import os
import queue
import random
import sys
import threading
import time


def work(n):
    s = 0
    for i in range(n):
        s += i * i  # the hot line
    return s


def hot_a():
    return work(4000)


def hot_b():
    return work(4000)


def hot_c():
    return work(4000)


def cpu(secs):
    calls = [hot_a] * 5 + [hot_b] * 3 + [hot_c] * 2
    end = time.monotonic() + secs
    while time.monotonic() < end:
        random.shuffle(calls)
        for f in calls:
            f()


def spin(end):
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


def spin_1(end):
    return spin(end)


def spin_2(end):
    return spin(end)


def spin_3(end):
    return spin(end)


def spin_4(end):
    return spin(end)


def napper(end):
    while time.monotonic() < end:
        time.sleep(0.005)


def waiter(q):
    while q.get() is not None:
        pass


def ready():
    print("ready", os.getpid(), flush=True)


def main():
    what = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 0
    if what == "cpu":
        ready()
        cpu(secs)
    elif what == "threads":
        end = time.monotonic() + secs
        ts = [threading.Thread(target=f, args=(end,)) for f in (spin_1, spin_2, spin_3, spin_4)]
        for t in ts:
            t.start()
        ready()
        for t in ts:
            t.join()
    elif what == "off":
        q = queue.Queue()
        end = time.monotonic() + secs
        ts = [threading.Thread(target=napper, args=(end,)), threading.Thread(target=waiter, args=(q,))]
        for t in ts:
            t.start()
        ready()
        time.sleep(secs)
        q.put(None)
        for t in ts:
            t.join()
    elif what == "short":
        end = time.monotonic() + 0.06
        short_lived(end)
    else:
        sys.exit("usage: pyframes.py cpu|threads|off SECS | short")


def short_lived(end):
    return spin(end)


main()
