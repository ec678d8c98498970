# SPDX-License-Identifier: MIT
"""bench: a Python thread pool for bench/runqueue-bench.sh.

TASKS tasks on WORKERS threads (concurrent.futures), each hashing 256 KiB (hashlib lets
go of the GIL for it) and sleeping 1 ms: the threads block on the GIL, the pool's queue
and the sleeps, and wait for a CPU after each wakeup. At the end, the workers idle on
the queue, it prints the run_delay (ns, /proc/TID/schedstat's second field) summed over
its threads, then leaves at once (os._exit: no thread is woken to be joined).

usage: rqpool.py [TASKS [WORKERS]]  ->  "rqpool tasks N workers W run_delay_ns NS"
"""
import argparse
import concurrent.futures
import hashlib
import os
import time

BUF = os.urandom(256 * 1024)


def task(_):
    h = hashlib.sha256(BUF).digest()
    time.sleep(0.001)
    return h


def run_delay_ns():
    total = 0
    d = "/proc/self/task"
    for t in os.listdir(d):
        try:
            with open(os.path.join(d, t, "schedstat")) as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            pass  # a thread gone meanwhile
    return total


def main():
    ap = argparse.ArgumentParser(prog="rqpool.py", description=__doc__.split("\n\n")[1],
                                 epilog=__doc__.split("\n\n")[2].strip())
    ap.add_argument("tasks", metavar="TASKS", nargs="?", type=int, default=2000,
                    help="tasks to run (default 2000)")
    ap.add_argument("workers", metavar="WORKERS", nargs="?", type=int, default=4,
                    help="threads of the pool (default 4)")
    args = ap.parse_args()
    tasks, workers = args.tasks, args.workers
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    for _ in pool.map(task, range(tasks)):
        pass
    print("rqpool tasks %d workers %d run_delay_ns %d" % (tasks, workers, run_delay_ns()),
          flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
