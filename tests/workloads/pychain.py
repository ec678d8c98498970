# SPDX-License-Identifier: MIT
"""A producer/consumer pipeline of three Python threads over queue.Queue, for chain
graphs (tests/record/chain.sh): "pq-origin" sleeps 1 ms and puts an item into queue A;
"pq-relay" gets it from A and puts it into queue B; "pq-sink" gets it from B. Each
thread names itself (prctl PR_SET_NAME) so that the kernel's comm tells them apart.

usage: python3 pychain.py [SECONDS]   prints "ready PID", runs SECONDS (default 10),
then prints "done ITEMS".
"""
import ctypes
import os
import queue
import sys
import threading
import time

PR_SET_NAME = 15
libc = ctypes.CDLL(None, use_errno=True)


def name(n):
    libc.prctl(PR_SET_NAME, n.encode(), 0, 0, 0)


def origin(a, stop):
    name("pq-origin")
    while not stop.is_set():
        time.sleep(0.001)
        a.put(1)
    a.put(None)


def relay(a, b):
    name("pq-relay")
    while True:
        item = a.get()
        b.put(item)
        if item is None:
            return


def sink(b, count):
    name("pq-sink")
    while b.get() is not None:
        count[0] += 1


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    a, b, stop, count = queue.Queue(), queue.Queue(), threading.Event(), [0]
    threads = [threading.Thread(target=sink, args=(b, count)),
               threading.Thread(target=relay, args=(a, b)),
               threading.Thread(target=origin, args=(a, stop))]
    print("ready", os.getpid(), flush=True)
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    print("done", count[0], flush=True)


if __name__ == "__main__":
    main()
