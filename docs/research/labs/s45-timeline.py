#!/usr/bin/env python3
"""Reads the per-CTA timeline s45-fast-timeline.patch writes (GDN_LAB_TL_FILE) and prints what the last call's
CTAs did: span, lifetimes, CTAs resident over time, the state bytes moved per interval (each CTA's bytes spread
evenly over its life after its wait), and how unevenly the SMs finish. Plain Python (no numpy).
    s45-timeline.py FILE BYTES_PER_CTA [BIN_US]"""
import struct
import sys


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


raw = open(sys.argv[1], "rb").read()
w = struct.unpack("<%dQ" % (len(raw) // 8), raw)
ctas = w[3] >> 32
bpc = float(sys.argv[2])
binus = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
base = min(w[4 * i] for i in range(ctas))
t0 = [(w[4 * i] - base) / 1e3 for i in range(ctas)]
t1 = [(w[4 * i + 1] - base) / 1e3 for i in range(ctas)]
te = [(w[4 * i + 2] - base) / 1e3 for i in range(ctas)]
sm = [w[4 * i + 3] & 0xffffffff for i in range(ctas)]
life = [e - s for s, e in zip(t1, te)]
wait = [s - a for a, s in zip(t0, t1)]
end = max(te)
print("CTAs %d, SMs %d; first wait end %.2f, last end %.2f us; span after the first wait %.2f us" %
      (ctas, len(set(sm)), min(t1), end, end - min(t1)))
print("lifetime after the wait (us): p10 %.2f median %.2f p90 %.2f max %.2f; wait (t1 - t0) median %.2f max %.2f" %
      (pct(life, 10), pct(life, 50), pct(life, 90), max(life), pct(wait, 50), max(wait)))
st = sorted(t0)
print("start of the k-th CTA (us), k = 0, 528, 1056, 1584, 2112, ..., last:",
      " ".join("%.2f" % st[k] for k in range(0, ctas, 528)), "%.2f" % st[-1])
nb = int(end / binus) + 1
moved = [0.0] * nb
res = [0.0] * nb
for s, e in zip(t1, te):
    L = max(e - s, 1e-9)
    for b in range(int(s / binus), min(nb, int(e / binus) + 1)):
        lo, hi = max(s, b * binus), min(e, (b + 1) * binus)
        if hi > lo:
            moved[b] += (hi - lo) / L * bpc
            res[b] += (hi - lo) / binus
print("bin %.1f us: start, CTAs resident (mean), state traffic TB/s" % binus)
for b in range(nb):
    print("  %7.1f %7.1f %6.2f" % (b * binus, res[b], moved[b] / (binus * 1e-6) / 1e12))
smend = {}
for s_, e in zip(sm, te):
    smend[s_] = max(smend.get(s_, 0), e)
v = sorted(smend.values())
print("SM finish (us): first %.2f p10 %.2f median %.2f p90 %.2f last %.2f" %
      (v[0], pct(v, 10), pct(v, 50), pct(v, 90), v[-1]))
cnt = {}
for s_ in sm:
    cnt[s_] = cnt.get(s_, 0) + 1
print("CTAs per SM: min %d max %d" % (min(cnt.values()), max(cnt.values())))
print("mean state traffic over the span after the first wait: %.2f TB/s" % (ctas * bpc / ((end - min(t1)) * 1e-6) / 1e12))
