#!/usr/bin/env python3
# docs/research/shorter_chain.py - float64 check (pure Python, no packages) of the chunked state pass's algebra as
# chunked_split.cuh writes it, and of a shorter serial chain for the B = 1 state pass (docs/DESIGN.md, session 14,
# next step (f)): X of chunk c + 1 as gl_c K_{c+1} S_c^T + (K_{c+1} K_c^T) diag(cf_c) D_c, both against a token
# loop of the gated delta rule. Run: python3 docs/research/shorter_chain.py
import math, random
random.seed(3)
Dk, Dv, C, T = 8, 6, 4, 4 * 5 + 3
rn = lambda: random.gauss(0, 1)
k = [[rn() for _ in range(Dk)] for _ in range(T)]; q = [[rn() for _ in range(Dk)] for _ in range(T)]
v = [[rn() for _ in range(Dv)] for _ in range(T)]
logg = [-random.random() * 0.7 for _ in range(T)]; b = [random.random() for _ in range(T)]; scale = Dk ** -0.5
ksc = [1 / math.sqrt(sum(x * x for x in r) + 1e-6) for r in k]
qsc = [scale / math.sqrt(sum(x * x for x in r) + 1e-6) for r in q]
S0 = [[rn() * 0.1 for _ in range(Dk)] for _ in range(Dv)]
def mm(A, B): return [[sum(A[i][l] * B[l][j] for l in range(len(B))) for j in range(len(B[0]))] for i in range(len(A))]
def tr(A): return [list(r) for r in zip(*A)]
def add(A, B, a=1.0, bb=1.0): return [[a * x + bb * y for x, y in zip(ra, rb)] for ra, rb in zip(A, B)]
def rows(M, s): return [[s[i] * x for x in r] for i, r in enumerate(M)]
def unit_lower_solve(A, R):  # (I + A) D = R, A strictly lower
    D = []
    for i in range(len(R)):
        D.append([R[i][j] - sum(A[i][l] * D[l][j] for l in range(i)) for j in range(len(R[0]))])
    return D
# token loop
S = [r[:] for r in S0]; o_ref = []
for t in range(T):
    kh = [ksc[t] * x for x in k[t]]; qh = [qsc[t] * x for x in q[t]]; g = math.exp(logg[t])
    S = [[g * x for x in r] for r in S]
    Sk = [sum(r[j] * kh[j] for j in range(Dk)) for r in S]
    S = [[S[i][j] + b[t] * (v[t][i] - Sk[i]) * kh[j] for j in range(Dk)] for i in range(Dv)]
    o_ref.append([sum(r[j] * qh[j] for j in range(Dk)) for r in S])
S_ref = S
chunks = [(c0, min(C, T - c0)) for c0 in range(0, T, C)]
def chunk_mats(c0, nt):
    kk, qq, vv = k[c0:c0+nt], q[c0:c0+nt], v[c0:c0+nt]
    cs = []; acc = 0.0
    for t in range(c0, c0 + nt): acc += logg[t]; cs.append(acc)
    ks, qs, bb = ksc[c0:c0+nt], qsc[c0:c0+nt], b[c0:c0+nt]
    KK, QK = mm(kk, tr(kk)), mm(qq, tr(kk))
    A = [[bb[i] * math.exp(cs[i] - cs[j]) * ks[i] * ks[j] * KK[i][j] if j < i else 0.0 for j in range(nt)]
         for i in range(nt)]
    P = [[math.exp(cs[i] - cs[j]) * qs[i] * ks[j] * QK[i][j] if j <= i else 0.0 for j in range(nt)] for i in range(nt)]
    gam = [math.exp(x) for x in cs]
    sk = [bb[i] * gam[i] * ks[i] for i in range(nt)]; sq = [gam[i] * qs[i] for i in range(nt)]
    cf = [math.exp(cs[nt - 1] - cs[j]) * ks[j] for j in range(nt)]
    return kk, qq, vv, A, P, sk, bb, sq, cf, gam[nt - 1]
def run(short):
    S = [r[:] for r in S0]; out = []
    X = mm(k[0:chunks[0][1]], tr(S))
    for i, (c0, nt) in enumerate(chunks):
        kk, qq, vv, A, P, sk, bt, sq, cf, gl = chunk_mats(c0, nt)
        if not short:
            X = mm(kk, tr(S))
        R = add(rows(vv, bt), rows(X, sk), 1.0, -1.0)
        D = unit_lower_solve(A, R)
        out += add(rows(mm(qq, tr(S)), sq), mm(P, D))
        U = rows(D, cf)
        if short and i + 1 < len(chunks):
            n0, nn = chunks[i + 1]
            kn = k[n0:n0+nn]
            Z = mm(kn, tr(S))              # off the chain (S at this chunk's start, the next chunk's keys)
            X = add(Z, mm(mm(kn, tr(kk)), U), gl, 1.0)  # the chain: one C-deep product with the cross-Gram
        S = add(S, mm(tr(U), kk), gl, 1.0)  # the state update, off the chain in the short form
    return out, S
def rel(a, r):
    num = sum((x - y) ** 2 for ra, rr in zip(a, r) for x, y in zip(ra, rr)); den = sum(y * y for rr in r for y in rr)
    return math.sqrt(num / den)
for short in (False, True):
    o, S = run(short)
    what = "shorter chain" if short else "chunk form   "
    print("%s vs token loop: out %.2e, state %.2e" % (what, rel(o, o_ref), rel(S, S_ref)))
