/*
 * chunk_avx512.h — pieces of the AVX-512 chunk value kernels that are the same whatever the
 * precision of the products (chunk_f32__avx512.c, chunk_bf16__avx512bf16.c), all f32:
 *   gates          Gamma row by row (running products of the decays), -A from KK and P from QK by
 *                  select, gam and wc (chunked.h)
 *   forward_subst  Delta = B + (-A) Delta, rows in blocks of FR = 4, columns in blocks of 64
 * Include only from files compiled with -mavx512f; defines static functions (the including file's
 * own copies, so each kernel keeps its own code and results).
 */
#ifndef GDN_CPU_KERNELS_CHUNK_AVX512_H
#define GDN_CPU_KERNELS_CHUNK_AVX512_H

#include <immintrin.h>
#include <stdint.h>

#include "cpu/chunked.h"

#define GDN_AI static inline __attribute__((always_inline))

enum { GDN_CK_NR = 4, GDN_CK_FR = 4 };

/* Gamma row by row: -A from KK into na, P from QK into pm (qk NULL: none); gam, wc. Blocks right
 * of the diagonal are written as zeros without reading KK or QK there (never computed). */
static void gates(int n, int c, const float *decay, const float *beta, const float *kk, const float *qk, float *na,
                  float *pm, float *gam, float *wc)
{
    const int nc = c / 16;
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 prev[GDN_CHUNK_MAX / 16];
    for (int b = 0; b < nc; b++)
        prev[b] = _mm512_setzero_ps();
    float g = 1.0f;
    for (int i = 0; i < n; i++) {
        const __m512 d = _mm512_set1_ps(decay[i]), nb = _mm512_set1_ps(-beta[i]);
        const __m512i ii = _mm512_set1_epi32(i);
        g *= decay[i];
        gam[i] = g;
        for (int b = 0; b < nc; b++) {
            const __m512i j = _mm512_add_epi32(iota, _mm512_set1_epi32(16 * b));
            const __mmask16 lt = _mm512_cmplt_epi32_mask(j, ii), le = _mm512_cmple_epi32_mask(j, ii);
            const __m512 gr = _mm512_mask_mul_ps(_mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(j, ii), one), lt,
                                                 prev[b], d);
            prev[b] = gr;
            const int64_t o = (int64_t)i * c + 16 * b;
            if (16 * b > i) {
                _mm512_storeu_ps(na + o, _mm512_setzero_ps());
                if (qk)
                    _mm512_storeu_ps(pm + o, _mm512_setzero_ps());
                continue;
            }
            _mm512_storeu_ps(na + o, _mm512_maskz_mul_ps(lt, _mm512_mul_ps(nb, gr), _mm512_loadu_ps(kk + o)));
            if (qk)
                _mm512_storeu_ps(pm + o, _mm512_maskz_mul_ps(le, gr, _mm512_loadu_ps(qk + o)));
        }
    }
    for (int b = 0; b < nc; b++)
        _mm512_storeu_ps(wc + 16 * b, prev[b]);
}

/* Rows r0 .. r0+rb-1 of Delta (in place over B in dl), columns n0 .. n0 + 16 nr. */
GDN_AI void fsub_tile(const int rb, const int nr, int r0, int n0, const float *na, int c, float *v, int64_t ld)
{
    __m512 acc[GDN_CK_FR][GDN_CK_NR];
#pragma GCC unroll 4
    for (int i = 0; i < rb; i++)
#pragma GCC unroll 4
        for (int q = 0; q < nr; q++)
            acc[i][q] = _mm512_loadu_ps(v + (r0 + i) * ld + n0 + 16 * q);
#pragma GCC unroll 2
    for (int j = 0; j < r0; j++) {
        __m512 bv[GDN_CK_NR];
#pragma GCC unroll 4
        for (int q = 0; q < nr; q++)
            bv[q] = _mm512_loadu_ps(v + j * ld + n0 + 16 * q);
#pragma GCC unroll 4
        for (int i = 0; i < rb; i++) {
            const __m512 av = _mm512_set1_ps(na[(r0 + i) * c + j]);
#pragma GCC unroll 4
            for (int q = 0; q < nr; q++)
                acc[i][q] = _mm512_fmadd_ps(av, bv[q], acc[i][q]);
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < rb; i++)
#pragma GCC unroll 4
        for (int i2 = i + 1; i2 < rb; i2++) {
            const __m512 av = _mm512_set1_ps(na[(r0 + i2) * c + r0 + i]);
#pragma GCC unroll 4
            for (int q = 0; q < nr; q++)
                acc[i2][q] = _mm512_fmadd_ps(av, acc[i][q], acc[i2][q]);
        }
#pragma GCC unroll 4
    for (int i = 0; i < rb; i++)
#pragma GCC unroll 4
        for (int q = 0; q < nr; q++)
            _mm512_storeu_ps(v + (r0 + i) * ld + n0 + 16 * q, acc[i][q]);
}

#define FSUB_CASE(R, N)                                 \
    case (R) * 8 + (N):                                 \
        fsub_tile((R), (N), r0, n0, na, c, v, ld);      \
        break;
#define FSUB_ROW(R) FSUB_CASE(R, 1) FSUB_CASE(R, 2) FSUB_CASE(R, 3) FSUB_CASE(R, 4)

static void forward_subst(int n, int dv, const float *na, int c, float *v, int64_t ld)
{
    for (int n0 = 0; n0 < dv; n0 += 16 * GDN_CK_NR) {
        const int nr = (dv - n0) / 16 < GDN_CK_NR ? (dv - n0) / 16 : GDN_CK_NR;
        for (int r0 = 0; r0 < n; r0 += GDN_CK_FR) {
            const int rb = n - r0 < GDN_CK_FR ? n - r0 : GDN_CK_FR;
            switch (rb * 8 + nr) {
                FSUB_ROW(1) FSUB_ROW(2) FSUB_ROW(3) FSUB_ROW(4)
            default: break;
            }
        }
    }
}

#endif
