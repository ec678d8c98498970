# SPDX-License-Identifier: MIT
"""Prints, for every code object of a few standard modules, what CPython itself says of
its lines, for tests/python/test_python.c to compare scorch's line-table decoder with:

  code FIRSTLINENO PEP657 LINETABLE_HEX
  LASTI LINE ...        (LINE 0: no line)

3.11+: co_positions(), one entry per code unit; 3.10: co_lines(), byte ranges.
"""
import sys
import types

import json.decoder
import json.encoder
import threading
import queue
import collections


def codes(obj, seen):
    for c in obj.co_consts:
        if isinstance(c, types.CodeType) and id(c) not in seen:
            seen.add(id(c))
            yield c
            yield from codes(c, seen)


def module_codes(mod):
    seen = set()
    for v in vars(mod).values():
        fns = []
        if isinstance(v, types.FunctionType):
            fns.append(v)
        elif isinstance(v, type):
            fns += [f for f in vars(v).values() if isinstance(f, types.FunctionType)]
        for f in fns:
            c = f.__code__
            if id(c) in seen:
                continue
            seen.add(id(c))
            yield c
            yield from codes(c, seen)


pep657 = sys.version_info >= (3, 11)
for mod in (json.decoder, json.encoder, threading, queue, collections):
    for c in module_codes(mod):
        print("code", c.co_firstlineno, int(pep657), c.co_linetable.hex())
        pairs = []
        if pep657:
            for i, pos in enumerate(c.co_positions()):
                pairs.append((i, pos[0] or 0))
        else:
            for start, end, line in c.co_lines():
                for off in range(start, end, 2):
                    pairs.append((off // 2, line or 0))
        print(" ".join("%d %d" % p for p in pairs))
