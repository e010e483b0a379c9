#!/usr/bin/env python3
# docs/research/sequence_split.py - float64 check (pure Python, no packages) of a sequence split for the gated delta
# rule (docs/DESIGN.md, session 15, next step (b)). Token loop, S [Dv][Dk] (rows of Dv), per token
#     S_t = S_{t-1} A_t + b_t v_t k_t^T,   A_t = g_t (I - b_t k_t k_t^T)   (k, q normalized and scaled),
#     o_t = S_t q_t.
# Split at token m: the first part runs from the given start state S0 to S_m. The second part needs no S_m to
# start: it runs (a) the same recurrence from a zero state, giving S~_t and o~_t = S~_t q_t, and (b) the same
# recurrence with v = 0 from the identity (a state of Dk rows, M_t = A_{m+1} .. A_t), giving u_t = M_t q_t. Then
#     o_t = o~_t + S_m u_t,    S_T = S_m M_T + S~_T,
# one product per token of the second part (o) and one of the final state, both parallel once S_m is known.
# (b) is the chunked state pass itself with Dv' = Dk rows, v = 0 and S0 = I: the same T, P and scalars as (a),
# so the prep is shared; its rows are as many again as (a)'s at Dk = Dv. Run: python3 docs/research/sequence_split.py
import math, random
random.seed(5)
Dk, Dv, T, m = 8, 6, 37, 17
rn = lambda: random.gauss(0, 1)
k = [[rn() for _ in range(Dk)] for _ in range(T)]; q = [[rn() for _ in range(Dk)] for _ in range(T)]
v = [[rn() for _ in range(Dv)] for _ in range(T)]
logg = [-random.random() * 0.7 for _ in range(T)]; b = [random.random() for _ in range(T)]
nrm = lambda r, s: [s * x / math.sqrt(sum(y * y for y in r) + 1e-6) for x in r]
kh = [nrm(r, 1.0) for r in k]; qh = [nrm(r, Dk ** -0.5) for r in q]
S0 = [[rn() * 0.1 for _ in range(Dk)] for _ in range(Dv)]


def run(S, t0, t1, vv):
    """The token loop over tokens t0 .. t1 - 1 from state S (rows of any count), values vv (None: zero)."""
    S = [r[:] for r in S]
    out = []
    for t in range(t0, t1):
        g = math.exp(logg[t])
        S = [[g * x for x in r] for r in S]
        Sk = [sum(r[j] * kh[t][j] for j in range(Dk)) for r in S]
        S = [[S[i][j] + b[t] * ((vv[t][i] if vv else 0.0) - Sk[i]) * kh[t][j] for j in range(Dk)]
             for i in range(len(S))]
        out.append([sum(r[j] * qh[t][j] for j in range(Dk)) for r in S])
    return S, out


S_ref, o_ref = run(S0, 0, T, v)
S_m, o1 = run(S0, 0, m, v)                                       # the first part
St, ot = run([[0.0] * Dk for _ in range(Dv)], m, T, v)           # (a): from zero
I = [[1.0 if i == j else 0.0 for j in range(Dk)] for i in range(Dk)]
M, u = run(I, m, T, None)                                        # (b): transitions, v = 0, from the identity
o2 = [[ot[t][i] + sum(S_m[i][j] * u[t][j] for j in range(Dk)) for i in range(Dv)] for t in range(T - m)]
S_T = [[St[i][j] + sum(S_m[i][l] * M[l][j] for l in range(Dk)) for j in range(Dk)] for i in range(Dv)]


def rel(a, r):
    num = sum((x - y) ** 2 for ra, rr in zip(a, r) for x, y in zip(ra, rr))
    den = sum(y * y for rr in r for y in rr)
    return math.sqrt(num / den)


eo, es = rel(o1 + o2, o_ref), rel(S_T, S_ref)
print("sequence split at token %d of %d: outputs rel %.1e, final state rel %.1e" % (m, T, eo, es))
assert eo < 1e-12 and es < 1e-12
