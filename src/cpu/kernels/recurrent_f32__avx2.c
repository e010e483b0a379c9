/*
 * recurrent_f32__avx2.c — token-loop GDN recurrence on f32 state rows, AVX2 + FMA.
 *
 * Math and memory contract: recurrent.h. Per token t and state row r (s = S[r][0..dk), the old row):
 *     sk = s . k[t]   sq = s . q[t]
 *     delta   = beta[t] * (v[t][r] - decay[t] * sk)      (v - decay*sk as one FMA, then * beta)
 *     y[t][r] = decay[t] * sq + delta * kq[t]            (one FMA)
 *     s       = decay[t] * s + delta * k[t]              (one multiply, one FMA)
 *
 * Layout: rows go 8 at a time, ONE ROW PER YMM LANE. A group's 8 x dk slice of the state is
 * transposed on load (8x8 register transposes) into a stack buffer st[j] = S[r0..r0+8)[j]
 * (dk ymm, at most 8 KiB, stays in L1). The dot products are then vertical FMAs against k[j], q[j]
 * broadcast from memory: no horizontal reduction, and delta, y and v are plain 8-lane vectors.
 * Per token, one fused pass over j updates st[j] and accumulates s.k and s.q of the NEXT token from
 * the new value, so the only serial latency per token is the short delta chain. The state is
 * transposed back once at the end of the block (fused with the last token's update), and after
 * every token whose capture[t] != NULL.
 *
 * Dot order (per lane, so per row): four accumulators, a_m = sum over j = m (mod 4), j ascending,
 * each started from +0 and advanced by FMA; then (a_0 + a_2) + (a_1 + a_3).
 *
 * Determinism: every lane runs the same instruction sequence for its row, whatever the other lanes
 * hold. A partial group (rows % 8) leaves the unused lanes zero and never loads or stores them, so
 * a row's result is bitwise independent of `rows`, of the tiling and of the thread.
 *
 * Cost: a partial group costs as much as a full one, so tiles of Dv should be multiples of 8 rows.
 *
 * Assumptions: dk % 16 == 0, 16 <= dk <= 256 (the driver sends other sizes to scalar); no alignment;
 * s_out may equal s_in; a capture may be s_in (a group reads all its rows of s_in before writing).
 */
#include <immintrin.h>
#include <stdint.h>

#include "cpu/recurrent.h"
#include "cpu/kernels/transpose_avx2.h"

#define GDN_AI static inline __attribute__((always_inline))

enum { LANES = 8, NACC = 4, MAX_DK = 256 };

/* Transpose st[j0..j0+8) back to rows and store the first R rows at dst + i*stride + j0. */
GDN_AI void store_tile(const __m256 *st, int j0, int R, float *dst, int64_t stride)
{
    __m256 m[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        m[i] = st[j0 + i];
    transpose8(m);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        if (i < R)
            _mm256_storeu_ps(dst + i * stride + j0, m[i]);
}

GDN_AI __m256 sum_acc(const __m256 a[NACC])
{
    return _mm256_add_ps(_mm256_add_ps(a[0], a[2]), _mm256_add_ps(a[1], a[3]));
}

/* Rows r0 .. r0+R-1 (1 <= R <= 8) through the whole token block. */
static void group8(const gdn_recurrent_args *a, int r0, int R)
{
    const int dk = a->dk, T = a->n_tokens, rows = a->rows;
    const int64_t ss = a->s_stride;
    const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(R), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 st[MAX_DK];
    __m256 ak[NACC], aq[NACC];

    /* Load + transpose; the dots of token 0 from the old state. */
    const float *src = a->s_in + r0 * ss;
#pragma GCC unroll 4
    for (int m = 0; m < NACC; m++)
        ak[m] = aq[m] = _mm256_setzero_ps();
    for (int j0 = 0; j0 < dk; j0 += 8) {
        __m256 m[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++)
            m[i] = i < R ? _mm256_loadu_ps(src + i * ss + j0) : _mm256_setzero_ps();
        transpose8(m);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) { /* j = j0 + i, so j % NACC == i % NACC */
            st[j0 + i] = m[i];
            ak[i % NACC] = _mm256_fmadd_ps(m[i], _mm256_broadcast_ss(a->k + j0 + i), ak[i % NACC]);
            aq[i % NACC] = _mm256_fmadd_ps(m[i], _mm256_broadcast_ss(a->q + j0 + i), aq[i % NACC]);
        }
    }

    for (int t = 0; t < T; t++) {
        const float *k = a->k + (int64_t)t * dk;
        const __m256 decay = _mm256_broadcast_ss(a->decay + t);
        const __m256 vv = _mm256_maskload_ps(a->v + (int64_t)t * rows + r0, lanes);
        const __m256 delta =
            _mm256_mul_ps(_mm256_broadcast_ss(a->beta + t), _mm256_fnmadd_ps(decay, sum_acc(ak), vv));
        if (a->y)
            _mm256_maskstore_ps(a->y + (int64_t)t * rows + r0, lanes,
                                _mm256_fmadd_ps(delta, _mm256_broadcast_ss(a->kq + t),
                                                _mm256_mul_ps(decay, sum_acc(aq))));
        float *cap = a->capture ? a->capture[t] : 0;

        if (t + 1 == T) {
            /* Last token: update each tile in registers, transpose, store to s_out (+ capture). */
            float *dst = a->s_out + r0 * ss;
            for (int j0 = 0; j0 < dk; j0 += 8) {
                __m256 m[8];
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++)
                    m[i] = _mm256_fmadd_ps(delta, _mm256_broadcast_ss(k + j0 + i),
                                           _mm256_mul_ps(decay, st[j0 + i]));
                transpose8(m);
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++) {
                    if (i < R) {
                        _mm256_storeu_ps(dst + i * ss + j0, m[i]);
                        if (cap)
                            _mm256_storeu_ps(cap + (r0 + i) * a->cap_stride + j0, m[i]);
                    }
                }
            }
            break;
        }

        /* Update st and accumulate the next token's dots from the new values. */
        const float *kn = k + dk, *qn = a->q + (int64_t)(t + 1) * dk;
#pragma GCC unroll 4
        for (int m = 0; m < NACC; m++)
            ak[m] = aq[m] = _mm256_setzero_ps();
        for (int j = 0; j < dk; j += NACC) {
#pragma GCC unroll 4
            for (int m = 0; m < NACC; m++) {
                const __m256 s = _mm256_fmadd_ps(delta, _mm256_broadcast_ss(k + j + m),
                                                 _mm256_mul_ps(decay, st[j + m]));
                st[j + m] = s;
                ak[m] = _mm256_fmadd_ps(s, _mm256_broadcast_ss(kn + j + m), ak[m]);
                aq[m] = _mm256_fmadd_ps(s, _mm256_broadcast_ss(qn + j + m), aq[m]);
            }
        }
        if (cap)
            for (int j0 = 0; j0 < dk; j0 += 8)
                store_tile(st, j0, R, cap + r0 * a->cap_stride, a->cap_stride);
    }
}

void gdn_recurrent_f32__avx2(const gdn_recurrent_args *a)
{
    for (int r0 = 0; r0 < a->rows; r0 += LANES)
        group8(a, r0, a->rows - r0 < LANES ? a->rows - r0 : LANES);
}
