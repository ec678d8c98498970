#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/capture: what `scorch report` writes to speedscope and pprof from captures of
# every mode with known figures (`test_capture --summary MODE`: 4.00 s at 999 Hz; cpu
# 5,000 and 2,990 samples, offcpu 1.0 and 0.5 s, wall both, event 600 and 40 calls):
# speedscope weighs by a unit it draws (cpu: nanoseconds at the sampling period;
# offcpu and wall: microseconds; a count: none), its samples in the folded order (so
# its Time Order view is a flame graph); pprof's duration is the recording's 4 s, not
# how long the report took.
# usage: test_report_exports.py TEST_CAPTURE SCORCH CHECKS_DIR
import os
import subprocess
import sys
import tempfile

TEST_CAPTURE, SCORCH = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from checks import CheckError, check, load_speedscope, pprof_scalars  # noqa: E402

PERIOD = 1e9 / 999
# mode: (unit, {leaf frame: weight})
WANT = {
    "cpu": ("nanoseconds", {"do_thing": round(5000 * PERIOD), "do_other": round(2990 * PERIOD)}),
    "offcpu": ("microseconds", {"do_thing": 1000000, "do_other": 500000}),
    # wall: on CPU, each sample 1e6 / 999 us, then the time off CPU
    "wall": ("microseconds", {"do_thing": round(5000 * 1e6 / 999) + 1000000,
                              "do_other": round(2990 * 1e6 / 999) + 500000}),
    "event": ("none", {"do_thing": 600, "do_other": 40}),
}


def leaf_weights(doc):
    frames, got = doc["shared"]["frames"], {}
    for p in doc["profiles"]:
        for s, w in zip(p["samples"], p["weights"]):
            name = frames[s[-1]]["name"]
            if name in ("[off-cpu]", "[runqueue]"):
                name = frames[s[-2]]["name"]
            got[name] = got.get(name, 0) + w
    return got


def main():
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for mode, (unit, weights) in WANT.items():
                cap = os.path.join(tmp, mode + ".scorch")
                js, pb = os.path.join(tmp, mode + ".json"), os.path.join(tmp, mode + ".pb.gz")
                subprocess.run([TEST_CAPTURE, "--summary", mode, cap], check=True)
                subprocess.run([SCORCH, "report", "-q", cap, "-o", js, "-o", pb], check=True)
                doc = load_speedscope(js)
                units = {p["unit"] for p in doc["profiles"]}
                check(units == {unit}, f"{mode}: speedscope unit {units}, want {unit}")
                got = leaf_weights(doc)
                print(f"{mode}: {unit}, {got}")
                check(got == weights, f"{mode}: weights {got}, want {weights}")
                # samples sorted by their frames' names, root first
                frames = doc["shared"]["frames"]
                for p in doc["profiles"]:
                    names = [[frames[i]["name"] for i in s] for s in p["samples"]]
                    check(names == sorted(names), f"{mode}: samples not in order: {names}")
                pp = pprof_scalars(pb)
                check(pp.get(10) == 4000000000,
                      f"{mode}: pprof duration_nanos {pp.get(10)}, want the capture's 4 s")
        except CheckError as e:
            print(f"FAIL: {e}")
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
