/*
 * recurrent_f32__avx512.c — token-loop GDN recurrence on f32 state rows, AVX-512 (F + FMA).
 *
 * Math and memory contract: recurrent.h. Per token t and state row r (s = S[r][0..dk), the old row):
 *     sk = s . k[t]   sq = s . q[t]
 *     delta   = beta[t] * (v[t][r] - decay[t] * sk)      (v - decay*sk as one FMA, then * beta)
 *     y[t][r] = decay[t] * sq + delta * kq[t]            (one FMA)
 *     s       = decay[t] * s + delta * k[t]              (one multiply, one FMA)
 *
 * Layout: ROW-WISE. A row of the state is dk/16 zmm, read and written in address order (a pure
 * stream over the tile: no transposes, nothing but the state's own cache lines). Rows go 16 at a
 * time (a group): for each row, the dot products leave one zmm of 16 partial sums per vector
 * (lane l = sum over c of s[16c + l] * x[16c + l], c ascending, one FMA chain); the 16 rows' vectors
 * are reduced together by a 4-level tree of shuffles and adds (reduce16) into ONE vector whose lane
 * r is row r's dot. delta, y and v are then plain 16-lane vectors, and the update broadcasts lane r
 * of delta to row r (one vpermps). Per token, one fused pass over each row updates it, stores it
 * (to s_out, and to capture[t] when asked) and accumulates the NEXT token's dots from the new value;
 * rows of a group live in s_out (L1) between tokens. No software prefetch: the rows are walked in
 * address order, which the hardware prefetchers stream best (prefetch instructions, tried at
 * several distances and hints, made decode from DRAM 10-20% slower here). A 16-row group costs, per token and 16 elements
 * of a row, one load, one store, one multiply and three FMAs, plus ~90 shuffle/add ops per group for
 * the two reductions: the same arithmetic as the transposed form, without its 2 x dk/16 16x16
 * transposes per group (which dominated decode).
 *
 * Dot order (per row): lane-wise FMA chain over the dk/16 vectors, then the reduce16 tree (lanes
 * (0..3 within each 128-bit lane) paired as unpacklo/hi, then pd pairs, then 128-bit lanes).
 *
 * Determinism: every row runs the same instruction sequence whatever the other rows hold; a partial
 * group (rows % 16) reduces zero vectors in the unused lanes and never loads or stores their rows,
 * so a row's result is bitwise independent of `rows`, of the tiling, of the thread and of how many
 * tokens a call holds.
 *
 * Assumptions: dk % 16 == 0, 16 <= dk <= 256 (the driver sends other sizes to scalar); no alignment;
 * s_out may equal s_in; a capture may be s_in (row r of s_in is read, at token 0, before row r is
 * written anywhere; later tokens read s_out).
 */
#include <immintrin.h>
#include <stdint.h>

#include "cpu/recurrent.h"

#define GDN_AI static inline __attribute__((always_inline))

enum { LANES = 16 };


/* Lane r of the result = the sum of the 16 lanes of v[r]. */
GDN_AI __m512 reduce16(const __m512 v[16])
{
    __m512 w[8], x[4], y[2];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) /* per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3] */
        w[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                             _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) { /* per 128-bit lane: the lane's sums of 4 consecutive v */
        const __m512d a = _mm512_castps_pd(w[2 * i]), b = _mm512_castps_pd(w[2 * i + 1]);
        x[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                             _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
    }
#pragma GCC unroll 2
    for (int i = 0; i < 2; i++) /* 128-bit lanes: [x0 L0+L1, x0 L2+L3, x1 L0+L1, x1 L2+L3] */
        y[i] = _mm512_add_ps(_mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_add_ps(_mm512_shuffle_f32x4(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Rows r0 .. r0+R-1 (1 <= R <= 16) through the whole token block; NV = dk / 16, a constant. */
GDN_AI void group16(const gdn_recurrent_args *a, int r0, int R, const int NV)
{
    const int nv = NV, dk = a->dk, T = a->n_tokens, rows = a->rows;
    const int64_t ss = a->s_stride;
    const __mmask16 lanes = (__mmask16)((1u << R) - 1);
    __m512 vk[LANES], vq[LANES];
    const float *src = a->s_in + r0 * ss;
    float *dst = a->s_out + r0 * ss;

    /* The dots of token 0, from the old state. */
    __m512 k0[NV], q0[NV];
#pragma GCC unroll 16
    for (int c = 0; c < nv; c++) {
        k0[c] = _mm512_loadu_ps(a->k + 16 * c);
        q0[c] = _mm512_loadu_ps(a->q + 16 * c);
    }
    for (int r = 0; r < LANES; r++) {
        __m512 ak = _mm512_setzero_ps(), aq = _mm512_setzero_ps();
        if (r < R) {
            const float *s = src + r * ss;
#pragma GCC unroll 16
            for (int c = 0; c < nv; c++) {
                const __m512 x = _mm512_loadu_ps(s + 16 * c);
                ak = _mm512_fmadd_ps(x, k0[c], ak);
                aq = _mm512_fmadd_ps(x, q0[c], aq);
            }
        }
        vk[r] = ak;
        vq[r] = aq;
    }
    __m512 sk = reduce16(vk), sq = reduce16(vq);

    for (int t = 0; t < T; t++) {
        const float *k = a->k + (int64_t)t * dk;
        const __m512 decay = _mm512_set1_ps(a->decay[t]);
        const __m512 vv = _mm512_maskz_loadu_ps(lanes, a->v + (int64_t)t * rows + r0);
        const __m512 delta = _mm512_mul_ps(_mm512_set1_ps(a->beta[t]), _mm512_fnmadd_ps(decay, sk, vv));
        if (a->y)
            _mm512_mask_storeu_ps(a->y + (int64_t)t * rows + r0, lanes,
                                  _mm512_fmadd_ps(delta, _mm512_set1_ps(a->kq[t]), _mm512_mul_ps(decay, sq)));
        float *cap = a->capture ? a->capture[t] : 0;
        const float *in = t == 0 ? src : dst;
        const int last = t + 1 == T;
        const float *kn = k + dk, *qn = a->q + (int64_t)(t + 1) * dk;

        if (last) {
            __m512 kv[NV];
#pragma GCC unroll 16
            for (int c = 0; c < nv; c++)
                kv[c] = _mm512_loadu_ps(k + 16 * c);
            for (int r = 0; r < R; r++) {
                const __m512 d = _mm512_permutexvar_ps(_mm512_set1_epi32(r), delta);
                const float *s = in + r * ss;
                float *o = dst + r * ss;
#pragma GCC unroll 16
                for (int c = 0; c < nv; c++) {
                    const __m512 x = _mm512_fmadd_ps(d, kv[c], _mm512_mul_ps(decay, _mm512_loadu_ps(s + 16 * c)));
                    _mm512_storeu_ps(o + 16 * c, x);
                    if (cap)
                        _mm512_storeu_ps(cap + (r0 + r) * a->cap_stride + 16 * c, x);
                }
            }
            break;
        }

        __m512 kv[NV], knv[NV], qnv[NV]; /* this token's k, the next token's k and q: registers */
#pragma GCC unroll 16
        for (int c = 0; c < nv; c++) {
            kv[c] = _mm512_loadu_ps(k + 16 * c);
            knv[c] = _mm512_loadu_ps(kn + 16 * c);
            qnv[c] = _mm512_loadu_ps(qn + 16 * c);
        }
        for (int r = 0; r < R; r++) {
            const __m512 d = _mm512_permutexvar_ps(_mm512_set1_epi32(r), delta);
            const float *s = in + r * ss;
            float *o = dst + r * ss;
            __m512 ak = _mm512_setzero_ps(), aq = _mm512_setzero_ps();
#pragma GCC unroll 16
            for (int c = 0; c < nv; c++) {
                const __m512 x = _mm512_fmadd_ps(d, kv[c], _mm512_mul_ps(decay, _mm512_loadu_ps(s + 16 * c)));
                _mm512_storeu_ps(o + 16 * c, x);
                ak = _mm512_fmadd_ps(x, knv[c], ak);
                aq = _mm512_fmadd_ps(x, qnv[c], aq);
            }
            if (cap)
#pragma GCC unroll 16
                for (int c = 0; c < nv; c++)
                    _mm512_storeu_ps(cap + (r0 + r) * a->cap_stride + 16 * c, _mm512_loadu_ps(o + 16 * c));
            vk[r] = ak;
            vq[r] = aq;
        }
        sk = reduce16(vk);
        sq = reduce16(vq);
    }
}

#define GROUP(NV)                                                  \
    static void group16_##NV(const gdn_recurrent_args *a, int r0, int R) \
    {                                                              \
        group16(a, r0, R, NV);                                     \
    }
GROUP(1) GROUP(2) GROUP(3) GROUP(4) GROUP(5) GROUP(6) GROUP(7) GROUP(8)
GROUP(9) GROUP(10) GROUP(11) GROUP(12) GROUP(13) GROUP(14) GROUP(15) GROUP(16)

typedef void (*group_fn)(const gdn_recurrent_args *, int, int);
static const group_fn groups[16] = {group16_1, group16_2,  group16_3,  group16_4,  group16_5,  group16_6,
                                    group16_7, group16_8,  group16_9,  group16_10, group16_11, group16_12,
                                    group16_13, group16_14, group16_15, group16_16};

void gdn_recurrent_f32__avx512(const gdn_recurrent_args *a)
{
    const group_fn g = groups[a->dk / 16 - 1];
    for (int r0 = 0; r0 < a->rows; r0 += LANES)
        g(a, r0, a->rows - r0 < LANES ? a->rows - r0 : LANES);
}
