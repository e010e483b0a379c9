/*
 * chunk_avx512.h — pieces of the AVX-512 chunk value kernels that are the same whatever the
 * precision of the products (chunk_f32__avx512.c, chunk_bf16__avx512bf16.c), all f32:
 *   gates          Gamma row by row (running products of the decays), -A from KK and P from QK by
 *                  select, gam and wc (chunked.h)
 *   forward_subst  Delta = B + (-A) Delta, rows in blocks of FR = 4, columns in blocks of 64
 *   keys_prep      the key part's rows: kq (norms, scale) and Kt (16x16 transposes)
 * Include only from files compiled with -mavx512f; defines static functions (the including file's
 * own copies, so each kernel keeps its own code and results).
 */
#ifndef GDN_CPU_KERNELS_CHUNK_AVX512_H
#define GDN_CPU_KERNELS_CHUNK_AVX512_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "cpu/chunked.h"
#include "cpu/kernels/transpose_avx512.h"

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

/* kt[k][r] = k_r[k] for r < n, 0 for n <= r < c. */
static void transpose_k(const float *kq, int n, int dk, int c, float *kt)
{
    for (int r0 = 0; r0 < c; r0 += 16) {
        for (int k0 = 0; k0 < dk; k0 += 16) {
            const int kn = dk - k0 < 16 ? dk - k0 : 16;
            const __mmask16 km = (__mmask16)((1u << kn) - 1u);
            __m512 m[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                m[i] = r0 + i < n ? _mm512_maskz_loadu_ps(km, kq + (int64_t)(r0 + i) * dk + k0) : _mm512_setzero_ps();
            transpose16(m);
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                if (i < kn)
                    _mm512_storeu_ps(kt + (int64_t)(k0 + i) * c + r0, m[i]);
        }
    }
}

/* dst[0..dk) = s * x[0..dk) */
static void scale_row(const float *x, int dk, float s, float *dst)
{
    const __m512 sv = _mm512_set1_ps(s);
    int i = 0;
    for (; i + 16 <= dk; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_mul_ps(sv, _mm512_loadu_ps(x + i)));
    if (i < dk) {
        const __mmask16 m = (__mmask16)((1u << (dk - i)) - 1u);
        _mm512_mask_storeu_ps(dst + i, m, _mm512_mul_ps(sv, _mm512_maskz_loadu_ps(m, x + i)));
    }
}

/* 1 / sqrt(sum x^2 + 1e-6) */
static float inv_norm(const float *x, int dk)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= dk; i += 32) {
        const __m512 x0 = _mm512_loadu_ps(x + i), x1 = _mm512_loadu_ps(x + i + 16);
        a0 = _mm512_fmadd_ps(x0, x0, a0);
        a1 = _mm512_fmadd_ps(x1, x1, a1);
    }
    for (; i < dk; i += 16) {
        const __mmask16 m = dk - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (dk - i)) - 1u);
        const __m512 x0 = _mm512_maskz_loadu_ps(m, x + i);
        a0 = _mm512_fmadd_ps(x0, x0, a0);
    }
    return 1.0f / sqrtf(_mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) + 1e-6f);
}

/* The key part's rows (chunked.h): kq = [K; Q] normalised and scaled, kt = K^T [dk][c]. */
static void keys_prep(const gdn_chunk_keys_args *a)
{
    const int n = a->n, dk = a->dk, c = (n + 15) / 16 * 16;
    float *K = a->kq, *Q = a->kq + (int64_t)n * dk;
    for (int r = 0; r < n; r++) {
        const float *kr = a->k + r * a->ks;
        scale_row(kr, dk, a->l2norm ? inv_norm(kr, dk) : 1.0f, K + (int64_t)r * dk);
        if (a->q) {
            const float *qr = a->q + r * a->qs;
            scale_row(qr, dk, a->l2norm ? a->scale * inv_norm(qr, dk) : a->scale, Q + (int64_t)r * dk);
        }
    }
    transpose_k(K, n, dk, c, a->kt);
}

#endif
