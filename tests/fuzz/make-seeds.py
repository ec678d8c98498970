#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the committed seed corpora of the text and jitdump fuzz targets
# (tests/<area>/corpus/<target>/), from small inputs made here or cut from the test data.
# Rerun after changing a target's input layout (the first byte picks options/steps).
# fuzz_elf's seeds are built by tests/symbolize/CMakeLists.txt instead.
import gzip
import os
import struct
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def put(area, target, name, data):
    d = os.path.join(root, "tests", area, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def head(path, limit):
    """The start of a test data file, cut at a blank line before @limit bytes."""
    with open(os.path.join(root, path), "rb") as f:
        data = f.read()
    if len(data) <= limit:
        return data
    cut = data.rfind(b"\n\n", 0, limit)
    return data[: cut + 2 if cut > 0 else limit]


# ---- collapse: option byte + perf script or bpftrace text ----
for opt, name in [(0x00, "perf-dd-stacks-01.txt"), (0x1c, "perf-java-stacks-02.txt"),
                  (0x21, "perf-edge-cases.txt"), (0x01, "perf-cycles-instructions-excerpt.txt"),
                  (0x02, "bpftrace-ustack.txt"), (0x42, "bpftrace-ustack.txt"),
                  (0x03, "bpftrace-kstack-ustack-comm.txt"),
                  (0x30, "bpftrace-perf-kstack-ustack-comm-pid.txt")]:
    put("collapse", "collapse", "%02x-%s" % (opt, name),
        bytes([opt]) + head("tests/collapse/data/" + name, 1500))

# ---- linereader: cap byte (cap - 1) + text with lines under, at and over the cap ----
for cap, name, data in [(16, "mixed", b"a 1\n" + b"x" * 40 + b"\nb 2\n\n" + b"y" * 16 + b"\nc"),
                        (8, "over-at-end", b"a 1\n" + b"z" * 30),
                        (1, "tiny-cap", b"ab\nc\n\n\x00\nde"),
                        (200, "long-lines", (b"l" * 300 + b"\n") * 3 + b"m 1\n")]:
    put("common", "linereader", name, bytes([cap - 1]) + data)

# ---- hashmap: (number of hashes - 1) byte + (operation, key) pairs ----
# operations (low 2 bits): 0 add, 1 remove, 2 find, 3 remove the keys of key's residue mod 4
def ops(*pairs):
    return b"".join(bytes([op, key]) for op, key in pairs)


fill = ops(*[(0, k) for k in range(200)])
put("common", "hashmap", "fill-200-good", bytes([255]) + fill + ops(*[(2, k) for k in range(256)]))
put("common", "hashmap", "fill-drain-3-hashes", bytes([2]) + fill + ops(*[(1, k) for k in range(0, 200, 3)])
    + ops((3, 1), (3, 2)) + ops(*[(2, k) for k in range(200)]))
put("common", "hashmap", "one-hash-churn", bytes([0]) + ops(*[(k % 2, k // 2 % 40) for k in range(300)])
    + ops((3, 0)))

# ---- folded: option byte + folded text, plain, gzip, zstd, differential ----
folded = (b"main;a;b 10\nmain;a;c 5\nmain;d 3\n[unknown];0x7f00 1\n"
          b"java;Lfoo/Bar;.run_[j] 2\nk;sys_read_[k] 4\nx<&>\"';y 1\n")
two = b"main;a;b 10 12\nmain;a;c 5 0\nmain;d 0 3\n"
zst = subprocess.run(["zstd", "-q", "-c"], input=folded, capture_output=True, check=True).stdout
for opt, name, data in [(0x00, "plain", folded), (0x14, "plain-chart", folded),
                        (0x6c, "plain-rev-inv-hash", folded), (0x01, "gzip", gzip.compress(folded, mtime=0)),
                        (0x00, "gzip-2members", gzip.compress(folded, mtime=0) * 2),
                        (0x00, "zstd", zst), (0x02, "diff", folded), (0x06, "diff-norm", folded),
                        (0x03, "two-counts", two), (0x80, "fraction", b"a;b 1.5\na 2\n")]:
    put("flamegraph", "folded", "%02x-%s" % (opt, name), bytes([opt]) + data)

# ---- perfmap: step byte + perf-PID.map text ----
pm = (b"7f0000001000 40 LazyCompile:~main file.js:1\n"
      b"0x7f0000001040 0x20 Builtin:ArgumentsAdaptor\n"
      b"7f0000001100 10 java.lang.String::hashCode()\n"
      b"7f0000001000 8 replaced at the same address\n")
for step, name in [(0, "one-byte-reads"), (9, "short-reads"), (63, "64-byte-reads")]:
    put("perfmap", "perfmap", name, bytes([step]) + pm)
put("perfmap", "perfmap", "long-line", bytes([5]) + b"7f0000002000 10 " + b"x" * 600 + b"\n" + pm)

# ---- jitdump: step byte + a jitdump file (tools/perf/Documentation/jitdump-specification.txt) ----


def jitdump(swap):
    e = ">" if swap else "<"
    out = struct.pack(e + "IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 42, 1000, 0)

    def rec(rid, ts, body):
        return struct.pack(e + "IIQ", rid, 16 + len(body), ts) + body

    for i, (addr, size, fn) in enumerate([(0x7f0000001000, 0x40, b"f1"), (0x7f0000001040, 0x20, b"g")]):
        dbg = struct.pack(e + "QQ", addr, 1) + struct.pack(e + "QII", addr + 0x40, 7, 0) + b"x.js\0"
        out += rec(2, 1001 + i, dbg)
        body = struct.pack(e + "IIQQQQ", 42, 43, addr, addr, size, i + 1) + fn + b"\0" + b"\x90" * size
        out += rec(0, 1001 + i, body)
    out += rec(1, 1005, struct.pack(e + "IIQQQQQ", 42, 43, 0x7f0000001000, 0x7f0000001000,
                                       0x7f0000003000, 0x40, 1))
    out += rec(4, 1006, struct.pack(e + "QQQ", 0, 0, 0))
    out += rec(3, 1007, b"")
    return out


for step, name, swap in [(0, "le-one-byte-reads", False), (15, "le-16-byte-reads", False),
                         (63, "le-64-byte-reads", False), (7, "be-8-byte-reads", True)]:
    put("perfmap", "jitdump", name, bytes([step]) + jitdump(swap))

# ---- /proc/PID/maps ----
maps = (b"55d4c0a00000-55d4c0a02000 r--p 00000000 fd:01 1835023 /usr/bin/cat\n"
        b"55d4c0a02000-55d4c0a07000 r-xp 00002000 fd:01 1835023 /usr/bin/cat\n"
        b"55d4c1e5b000-55d4c1e7c000 rw-p 00000000 00:00 0 [heap]\n"
        b"7f5e2c000000-7f5e2c021000 rwxp 00000000 00:00 0 \n"
        b"7f5e2d828000-7f5e2d97d000 r-xp 00028000 fd:01 1843260 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
        b"7f5e2da00000-7f5e2da01000 r-xs 00000000 00:05 4242 /tmp/a path with spaces (deleted)\n"
        b"7ffd5e9f2000-7ffd5e9f4000 r-xp 00000000 00:00 0 [vdso]\n"
        b"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n")
put("symbolize", "maps", "cat", maps)

# ---- /proc/kallsyms ----
ks = (b"0000000000000000 A fixed_percpu_data\n"
      b"ffffffff81000000 T startup_64\n"
      b"ffffffff81000070 T secondary_startup_64\n"
      b"ffffffff81001000 t do_one_initcall\n"
      b"ffffffff81001000 T do_one_initcall_alias\n"
      b"ffffffff81002000 W weak_fn\n"
      b"ffffffff81003000 D some_data\n"
      b"ffffffffc0002000 t ext4_fill_super\t[ext4]\n"
      b"ffffffffc0003000 t bpf_prog_6deef7357e7b4530_sd_fw_ingress\t[bpf]\n"
      b"ffffffffc0004000 T __init_end\n")
put("symbolize", "kallsyms", "kallsyms", ks)
put("symbolize", "kallsyms", "hidden", ks.replace(b"ffffffff", b"00000000"))
sys.exit(0)
