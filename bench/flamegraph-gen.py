#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench: deterministic synthetic folded stacks (depth 3..MAXDEPTH, little prefix
sharing) on standard output.

With "perf", the same stacks as perf script text instead (each one sampled twice, the
first frame as the command, frames "mod.func" as "func (/usr/lib/mod.so)"), for scorch
collapse with as many distinct stacks.
With "tree", the stacks of a random call tree of LINES nodes (each node a call from a
random earlier one, at most MAXDEPTH deep, siblings named apart), one stack per node:
LINES distinct stacks sharing their prefixes as a real profile's do.

example: flamegraph-gen.py 100000 40 1 > 100k.folded
"""
import argparse
import random
import sys


def parse_args():
    ap = argparse.ArgumentParser(prog="flamegraph-gen.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lines", metavar="LINES", nargs="?", type=int, default=100000,
                    help="stacks to write (default 100000)")
    ap.add_argument("maxdepth", metavar="MAXDEPTH", nargs="?", type=int, default=40,
                    help="deepest stack (default 40)")
    ap.add_argument("seed", metavar="SEED", nargs="?", type=int, default=1,
                    help="random seed: the same seed, the same output (default 1)")
    ap.add_argument("kind", metavar="KIND", nargs="?", default="folded",
                    choices=["folded", "perf", "tree"],
                    help="folded (default), perf (perf script text) or tree")
    return ap.parse_args()


def main():
    args = parse_args()
    lines, maxdepth, seed = args.lines, args.maxdepth, args.seed
    perf = args.kind == "perf"
    if args.kind == "tree":
        return tree(lines, maxdepth, random.Random(seed))
    n = 0
    rnd = random.Random(seed)
    comms = ["java", "python3", "node", "postgres", "nginx", "redis-server", "kworker/0:1", "sshd"]
    mods = ["net/http", "io/netty", "libc.so.6", "vmlinux", "app/core", "std::rt", "org/apache"]
    vocab = ["%s.%s_%d" % (rnd.choice(mods), rnd.choice(["run", "read", "write", "poll", "do_sys",
                                                         "handle", "alloc", "parse", "lock"]), i)
             for i in range(20000)]
    out = sys.stdout
    buf = []
    for _ in range(lines):
        depth = rnd.randint(3, maxdepth)
        # a shared trunk of 0..3 frames from a small set, then random frames
        trunk = rnd.randint(0, 3)
        frames = [rnd.choice(comms)] + vocab[:trunk] + rnd.choices(vocab, k=depth - 1 - trunk)
        count = rnd.randint(1, 100)
        if perf:
            body = "".join("\t%x %s (/usr/lib/%s.so)\n" % (0x400000 + i * 16, f.split(".")[-1],
                                                          f.split(".")[0].replace("/", "_"))
                           for i, f in enumerate(reversed(frames[1:])))
            for _ in range(2):
                buf.append("%s %d/%d [000] %d.%06d: cpu-clock: \n%s\n" % (
                    frames[0], 100 + n % 50, 100 + n % 50, 1000 + n // 1000, n % 1000000, body))
            n += 1
        else:
            buf.append("%s %d\n" % (";".join(frames), count))
        if len(buf) >= 10000:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))


def tree(lines, maxdepth, rnd):
    vocab = ["%s_%d" % (rnd.choice(["run", "read", "write", "poll", "handle", "alloc", "parse",
                                    "lock", "Thread.run", "std::vector<int>::push_back"]), i)
             for i in range(20000)]
    parent, name, depth, kids = [-1], [-1], [0], [set()]
    out, buf = sys.stdout, []
    while len(parent) <= lines:
        p = rnd.randrange(len(parent))
        if depth[p] >= maxdepth:
            continue
        n = rnd.randrange(len(vocab))
        if n in kids[p]:
            continue
        kids[p].add(n)
        parent.append(p)
        name.append(n)
        depth.append(depth[p] + 1)
        kids.append(set())
    for i in range(1, len(parent)):
        frames, j = [], i
        while j > 0:
            frames.append(vocab[name[j]])
            j = parent[j]
        buf.append("%s %d\n" % (";".join(reversed(frames)), rnd.randint(1, 100)))
        if len(buf) >= 10000:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))


if __name__ == "__main__":
    main()
