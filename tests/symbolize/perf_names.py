#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The name perf gives each address that several function symbols of an ELF file share,
computed apart from scorch: the symbols as `readelf -sW` lists them (those scorch
collects: functions, and labels but hidden local ones, in executable sections), and
perf's pairwise
choose_best_symbol() (tools/perf/util/symbol.c) over them in table order, shown without
a symbol version. Prints "0xADDR NAME" lines, by address.

   perf_names.py FILE [.symtab|.dynsym]
"""
import re
import subprocess
import sys


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], capture_output=True, text=True,
                          check=True).stdout


def symbols(path, table):
    exe = set()
    for line in readelf("-S", path).splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S*)", line)
        if m and "X" in m.group(2) and "A" in m.group(2):
            exe.add(m.group(1))
    which, rows = None, []
    for line in readelf("-s", path).splitlines():
        m = re.match(r"Symbol table '(\S+)'", line)
        if m:
            which = m.group(1)
            continue
        f = line.split()
        if which != table or len(f) < 8 or not re.fullmatch(r"\d+:", f[0]):
            continue
        _, value, size, typ, bind, vis, ndx, name = f[:8]
        if ndx not in exe:
            continue
        if typ not in ("FUNC", "IFUNC") and not (typ == "NOTYPE" and
                                                 (bind != "LOCAL" or vis == "DEFAULT")):
            continue
        if table == ".dynsym":
            name = unversioned(name)  # readelf's: the table's names have none
        rows.append((int(value, 16), int(size, 0), typ, bind, name))
    return rows


def unversioned(name):
    at = name.find("@")
    return name[:at] if 0 < at < len(name) - 1 else name


def underscores(name):
    return len(name) - len(name.lstrip("_"))


def a_wins(a, b):
    """perf's choose_best_symbol(a, b) == SYMBOL_A; a is the earlier in the table."""
    if (a[1] > 0) != (b[1] > 0):
        return a[1] > 0
    if (a[2] == "NOTYPE") != (b[2] == "NOTYPE"):
        return b[2] == "NOTYPE"
    if (a[3] == "WEAK") != (b[3] == "WEAK"):
        return b[3] == "WEAK"
    if (a[3] == "GLOBAL") != (b[3] == "GLOBAL"):
        return a[3] == "GLOBAL"
    if underscores(a[4]) != underscores(b[4]):
        return underscores(a[4]) < underscores(b[4])
    if len(a[4]) != len(b[4]):
        return len(a[4]) > len(b[4])
    return True


def main():
    path, table = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ".symtab"
    best, count = {}, {}
    for s in symbols(path, table):
        count[s[0]] = count.get(s[0], 0) + 1
        if s[0] not in best or not a_wins(best[s[0]], s):
            best[s[0]] = s
    for addr in sorted(best):
        if count[addr] > 1:
            print(f"{addr:#x} {unversioned(best[addr][4])}")


if __name__ == "__main__":
    main()
