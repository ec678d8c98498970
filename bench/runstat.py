#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs a command, samples its resident memory every --period seconds while it runs,
and writes what it cost as JSON: CPU seconds (user, system: wait4 rusage of that one
child), peak RSS (the kernel's maxrss) and the sampled RSS series. Exits with the
command's exit status.

usage: runstat.py [--period SEC] OUT.json -- command [args...]
"""
import json
import os
import subprocess
import sys
import time


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    args = sys.argv[1:]
    period = 0.5
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__, end="")
        return 0
    if args[:1] == ["--period"]:
        period = float(args[1])
        args = args[2:]
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__)
    out, cmd = args[0], args[2:]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    series = []
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        r = rss_kib(proc.pid)
        if r is not None:
            series.append([round(time.monotonic() - t0, 2), r])
        time.sleep(period)
    code = os.waitstatus_to_exitcode(status)
    with open(out, "w") as f:
        json.dump({"exit": code, "wall_s": round(time.monotonic() - t0, 3),
                   "user_s": ru.ru_utime, "sys_s": ru.ru_stime,
                   "maxrss_kib": ru.ru_maxrss, "rss_kib": series}, f)
    sys.exit(code if code >= 0 else 128 - code)


main()
