#!/usr/bin/env python3
"""Phases of the pairs kernel's CTAs from s45-fast-timeline2.patch's two files (GDN_LAB_TL_FILE, GDN_LAB_TL2_FILE):
medians over all CTAs, the first 528 to start, the middle and the last 100, in us.
    s45-timeline2.py TL_FILE TL2_FILE"""
import struct
import sys


def load(fn, width):
    raw = open(fn, "rb").read()
    w = struct.unpack("<%dQ" % (len(raw) // 8), raw)
    return [w[width * i:width * i + width] for i in range(len(w) // width)]


a = load(sys.argv[1], 4)
b = load(sys.argv[2], 16)
n = a[0][3] >> 32
rows = []
for i in range(n):
    t0, t1, te = a[i][0], a[i][1], a[i][2]
    s = b[i]
    st = [x / 1e3 for x in (t0, t1, *s[:10], te)]
    rows.append(st)
base = min(r[0] for r in rows)
rows = [[x - base for x in r] for r in rows]
rows.sort(key=lambda r: r[0])
names = ["prologue to the wait's end", "to the gates (1st barrier)", "staging (to the 2nd barrier)",
         "tile 0 rows arrive", "tile 0 tokens + stores", "tile 1 rows arrive", "tile 1 tokens + stores",
         "tile 2 rows arrive", "tile 2 tokens + stores", "tile 3 rows arrive", "tile 3 tokens + stores", "to the end"]


def med(v):
    v = sorted(v)
    return v[len(v) // 2]


groups = [("all", rows), ("first 528", rows[:528]), ("middle 528", rows[n // 2 - 264:n // 2 + 264]),
          ("last 100", rows[-100:])]
print("%-30s" % "phase (us, median)" + "".join("%12s" % g for g, _ in groups))
for k, name in enumerate(names):
    print("%-30s" % name + "".join("%12.2f" % med([r[k + 1] - r[k] for r in rs]) for _, rs in groups))
print("%-30s" % "life (start to end)" + "".join("%12.2f" % med([r[-1] - r[0] for r in rs]) for _, rs in groups))
