/*
 * recurrent_f32__avx512.c — token-loop GDN recurrence on f32 state rows, AVX-512 (F + FMA).
 *
 * Math and memory contract: recurrent.h. Per token t and state row r (s = S[r][0..dk), the old row):
 *     sk = s . k[t]   sq = s . q[t]
 *     delta   = beta[t] * (v[t][r] - decay[t] * sk)      (v - decay*sk as one FMA, then * beta)
 *     y[t][r] = decay[t] * sq + delta * kq[t]            (one FMA)
 *     s       = decay[t] * s + delta * k[t]              (one multiply, one FMA)
 *
 * Layout: rows go 16 at a time, ONE ROW PER ZMM LANE. A group's 16 x dk slice of the state is
 * transposed on load (16x16 register transposes) into a stack buffer st[j] = S[r0..r0+16)[j]
 * (dk zmm, at most 16 KiB, stays in L1). Then the dot products are vertical FMAs against k[j], q[j]
 * broadcast from memory: no horizontal reduction, and delta, y and v are plain 16-lane vectors.
 * Per token, one fused pass over j updates st[j] and accumulates s.k and s.q of the NEXT token from
 * the new value, so the only serial latency per token is the short delta chain (~20 cycles against
 * ~2 cycles of FMA work per j). The state is transposed back once at the end of the block (fused
 * with the last token's update), and after every token whose capture[t] != NULL.
 *
 * Dot order (per lane, so per row): four accumulators, a_m = sum over j = m (mod 4), j ascending,
 * each started from +0 and advanced by FMA; then (a_0 + a_2) + (a_1 + a_3).
 *
 * Determinism: every lane runs the same instruction sequence for its row, whatever the other lanes
 * hold. A partial group (rows % 16) leaves the unused lanes zero and never loads or stores them, so
 * a row's result is bitwise independent of `rows`, of the tiling and of the thread.
 *
 * Cost: a partial group costs as much as a full one, so tiles of Dv should be multiples of 16 rows.
 *
 * Assumptions: dk % 16 == 0, 16 <= dk <= 256 (the driver sends other sizes to scalar); no alignment;
 * s_out may equal s_in; a capture may be s_in (a group reads all its rows of s_in before writing).
 */
#include <immintrin.h>
#include <stdint.h>

#include "cpu/recurrent.h"
#include "cpu/kernels/transpose_avx512.h"

#define GDN_AI static inline __attribute__((always_inline))

enum { LANES = 16, NACC = 4, MAX_DK = 256 };

/* Transpose st[j0..j0+16) back to rows and store the first R rows at dst + i*stride + j0. */
GDN_AI void store_tile(const __m512 *st, int j0, int R, float *dst, int64_t stride)
{
    __m512 m[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        m[i] = st[j0 + i];
    transpose16(m);
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        if (i < R)
            _mm512_storeu_ps(dst + i * stride + j0, m[i]);
}

GDN_AI __m512 sum_acc(const __m512 a[NACC])
{
    return _mm512_add_ps(_mm512_add_ps(a[0], a[2]), _mm512_add_ps(a[1], a[3]));
}

/* Rows r0 .. r0+R-1 (1 <= R <= 16) through the whole token block. */
static void group16(const gdn_recurrent_args *a, int r0, int R)
{
    const int dk = a->dk, T = a->n_tokens, rows = a->rows;
    const int64_t ss = a->s_stride;
    const __mmask16 lanes = (__mmask16)((1u << R) - 1);
    __m512 st[MAX_DK];
    __m512 ak[NACC], aq[NACC];

    /* Load + transpose; the dots of token 0 from the old state. */
    const float *src = a->s_in + r0 * ss;
#pragma GCC unroll 4
    for (int m = 0; m < NACC; m++)
        ak[m] = aq[m] = _mm512_setzero_ps();
    for (int j0 = 0; j0 < dk; j0 += 16) {
        __m512 m[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++)
            m[i] = i < R ? _mm512_loadu_ps(src + i * ss + j0) : _mm512_setzero_ps();
        transpose16(m);
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) { /* j = j0 + i, so j % NACC == i % NACC */
            st[j0 + i] = m[i];
            ak[i % NACC] = _mm512_fmadd_ps(m[i], _mm512_set1_ps(a->k[j0 + i]), ak[i % NACC]);
            aq[i % NACC] = _mm512_fmadd_ps(m[i], _mm512_set1_ps(a->q[j0 + i]), aq[i % NACC]);
        }
    }

    for (int t = 0; t < T; t++) {
        const float *k = a->k + (int64_t)t * dk;
        const __m512 decay = _mm512_set1_ps(a->decay[t]);
        const __m512 vv = _mm512_maskz_loadu_ps(lanes, a->v + (int64_t)t * rows + r0);
        const __m512 delta =
            _mm512_mul_ps(_mm512_set1_ps(a->beta[t]), _mm512_fnmadd_ps(decay, sum_acc(ak), vv));
        if (a->y)
            _mm512_mask_storeu_ps(a->y + (int64_t)t * rows + r0, lanes,
                                  _mm512_fmadd_ps(delta, _mm512_set1_ps(a->kq[t]),
                                                  _mm512_mul_ps(decay, sum_acc(aq))));
        float *cap = a->capture ? a->capture[t] : 0;

        if (t + 1 == T) {
            /* Last token: update each tile in registers, transpose, store to s_out (+ capture). */
            float *dst = a->s_out + r0 * ss;
            for (int j0 = 0; j0 < dk; j0 += 16) {
                __m512 m[16];
#pragma GCC unroll 16
                for (int i = 0; i < 16; i++)
                    m[i] = _mm512_fmadd_ps(delta, _mm512_set1_ps(k[j0 + i]),
                                           _mm512_mul_ps(decay, st[j0 + i]));
                transpose16(m);
#pragma GCC unroll 16
                for (int i = 0; i < 16; i++) {
                    if (i < R) {
                        _mm512_storeu_ps(dst + i * ss + j0, m[i]);
                        if (cap)
                            _mm512_storeu_ps(cap + (r0 + i) * a->cap_stride + j0, m[i]);
                    }
                }
            }
            break;
        }

        /* Update st and accumulate the next token's dots from the new values. */
        const float *kn = k + dk, *qn = a->q + (int64_t)(t + 1) * dk;
#pragma GCC unroll 4
        for (int m = 0; m < NACC; m++)
            ak[m] = aq[m] = _mm512_setzero_ps();
        for (int j = 0; j < dk; j += NACC) {
#pragma GCC unroll 4
            for (int m = 0; m < NACC; m++) {
                const __m512 s = _mm512_fmadd_ps(delta, _mm512_set1_ps(k[j + m]),
                                                 _mm512_mul_ps(decay, st[j + m]));
                st[j + m] = s;
                ak[m] = _mm512_fmadd_ps(s, _mm512_set1_ps(kn[j + m]), ak[m]);
                aq[m] = _mm512_fmadd_ps(s, _mm512_set1_ps(qn[j + m]), aq[m]);
            }
        }
        if (cap)
            for (int j0 = 0; j0 < dk; j0 += 16)
                store_tile(st, j0, R, cap + r0 * a->cap_stride, a->cap_stride);
    }
}

void gdn_recurrent_f32__avx512(const gdn_recurrent_args *a)
{
    for (int r0 = 0; r0 < a->rows; r0 += LANES)
        group16(a, r0, a->rows - r0 < LANES ? a->rows - r0 : LANES);
}
