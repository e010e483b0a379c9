#!/usr/bin/env python3
"""Items of the pairs kernel's CTAs from s47-pairs-range-timeline.patch's two files (GDN_LAB_TL_FILE: per CTA start,
after the wait, end, SM; GDN_LAB_TL2_FILE: per CTA its items, then for its first 5 items the start (after the first
barrier), staged (after the second) and the tiles' stores issued, with the item's tiles in the low 3 bits), in us:
medians of the phases, and per 1 us of the call the CTAs in their tiles and the state traffic if each item's tiles
streamed evenly between its staging and its end (32 KiB a tile: its rows read and written); since session 48 also
the medians by the item's place in its CTA and by the CTAs' start order.
    s47-timeline3.py TL_FILE TL2_FILE"""
import struct
import sys


def load(fn, width):
    raw = open(fn, "rb").read()
    w = struct.unpack("<%dQ" % (len(raw) // 8), raw)
    return [w[width * i:width * i + width] for i in range(len(w) // width)]


def med(x):
    x = sorted(x)
    return x[len(x) // 2] if x else float("nan")


a = load(sys.argv[1], 4)
b = load(sys.argv[2], 16)
n = a[0][3] >> 32
base = min(a[i][0] for i in range(n))
us = lambda t: (t - base) / 1e3
ctas, hist = [], {}
for i in range(n):
    t0, t1, te = us(a[i][0]), us(a[i][1]), us(a[i][2])
    k = b[i][0]
    hist[k] = hist.get(k, 0) + 1
    items = []
    for j in range(min(k, 5)):
        s, g, e = b[i][1 + 3 * j], b[i][2 + 3 * j], b[i][3 + 3 * j]
        items.append((us(s), us(g), us(e & ~7), e & 7))
    ctas.append((t0, t1, te, items))
end = max(c[2] for c in ctas)
print("CTAs %d, items per CTA %s, call %.2f us (first start to last end)" % (n, dict(sorted(hist.items())), end))
pro = [c[1] - c[0] for c in ctas]
first = [c[3][0][0] - c[1] for c in ctas if c[3]]
setup = [it[1] - it[0] for c in ctas for it in c[3]]
tile = [(it[2] - it[1]) / it[3] for c in ctas for it in c[3] if it[3]]
gap = [c[3][j + 1][0] - c[3][j][2] for c in ctas for j in range(len(c[3]) - 1)]
tail = [c[2] - c[3][-1][2] for c in ctas if c[3]]
print("medians: start to the wait's end %.2f, to the first item's barrier %.2f, item start to staged %.2f, per tile "
      "%.2f, between items %.2f, last item to the CTA's end %.2f" % (med(pro), med(first), med(setup), med(tile),
                                                                    med(gap), med(tail)))
# by the item's place in its CTA (session 48): is a CTA's second item dearer than its first, or than a new CTA's?
print("by the item's place in its CTA: items, medians of the gap before it (the first: from the wait's end), start to "
      "staged, per tile, the item (start to stores issued), mean tiles")
for j in range(5):
    rows = [c for c in ctas if len(c[3]) > j]
    if not rows:
        break
    gapj = [c[3][j][0] - (c[3][j - 1][2] if j else c[1]) for c in rows]
    setj = [c[3][j][1] - c[3][j][0] for c in rows]
    tilj = [(c[3][j][2] - c[3][j][1]) / c[3][j][3] for c in rows if c[3][j][3]]
    itj = [c[3][j][2] - c[3][j][0] for c in rows]
    print("  item %d: %5d, gap %.2f, setup %.2f, per tile %.2f, item %.2f, tiles %.2f" %
          (j, len(rows), med(gapj), med(setj), med(tilj), med(itj), sum(c[3][j][3] for c in rows) / len(rows)))
# by start order (one item per CTA: the waves): the first G CTAs, the middle, the last 100
order = sorted(range(len(ctas)), key=lambda i: ctas[i][0])
G = min(len(ctas), max(1, sum(1 for c in ctas if c[0] <= ctas[order[0]][0] + 1.0)))
groups = [("first %d (started within 1 us)" % G, order[:G]), ("middle", order[G:max(G, len(order) - 100)]),
          ("last 100", order[max(G, len(order) - 100):])]
for name, ix in groups:
    if not ix:
        continue
    cs = [ctas[i] for i in ix if ctas[i][3]]
    print("  %s: %d CTAs, life %.2f, wait's end to item 0 %.2f, item 0 setup %.2f, per tile %.2f" %
          (name, len(ix), med([ctas[i][2] - ctas[i][0] for i in ix]), med([c[3][0][0] - c[1] for c in cs]),
           med([c[3][0][1] - c[3][0][0] for c in cs]),
           med([(c[3][0][2] - c[3][0][1]) / c[3][0][3] for c in cs if c[3][0][3]])))
ends = sorted(c[2] for c in ctas)
print("CTA ends: first %.2f, 10%% %.2f, 50%% %.2f, 90%% %.2f, last %.2f" % (ends[0], ends[len(ends) // 10],
                                                                         ends[len(ends) // 2], ends[9 * len(ends) // 10],
                                                                         ends[-1]))
bins = int(end) + 1
busy, byts, setting = [0.0] * bins, [0.0] * bins, [0.0] * bins
for c in ctas:
    for (s, g, e, nt) in c[3]:
        for x in range(bins):
            lo, hi = max(x, g), min(x + 1, e)
            if hi > lo:
                busy[x] += hi - lo
                byts[x] += 32768 * nt * (hi - lo) / (e - g)
            lo, hi = max(x, s), min(x + 1, g)
            if hi > lo:
                setting[x] += hi - lo
print("us: CTAs in tiles / in setup (item start to staged), state TB/s if even")
for x in range(bins):
    print("%4d %6.1f %6.1f %6.2f" % (x, busy[x], setting[x], byts[x] / 1e6))
