/*
 * chunk_f32__avx2.c — one chunk of the chunkwise (WY/UT, W-free) GDN algorithm, AVX2 + FMA.
 *
 * Math, shapes and memory contract: chunked.h. The steps are those of chunk_f32__avx512.c, on
 * 8-lane vectors (c = n rounded up to 16):
 *   key part: L2 norm and scale of the rows; Kt = K^T [dk][c] (8x8 transposes, zero columns past n);
 *     KK, QK = K Kt, Q Kt, only the 16-column blocks at or left of the diagonal
 *   value part:
 *     -A, P  from KK, QK and Gamma (running products of the decays, row by row, vector along j):
 *            -A[i][j] = (-b_i Gamma_ij) KK_ij (j < i),  P[i][j] = Gamma_ij QK_ij (j <= i),
 *            every other entry 0 by select (bitwise and with a compare mask); gam_r, wc_r
 *     X      = [K; Q] S^T;   B = b_r (v_r - gam_r X_r);   Delta = B + (-A) Delta (blocks of 4 rows)
 *     y      = diag(gam) Y + P Delta (triangular);   S^T <- gam_{n-1} S^T + (Kt diag(wc)) Delta
 *
 * Products: register tiles of up to 6 rows x 16 columns (12 ymm accumulators, 2 loads of B and 6
 * broadcasts of A per 12 FMA), columns outside, rows inside; a tile starting from C_in loads it
 * scaled once, then adds its products in order of the inner index p, so a column's result does
 * not depend on dv, ld, the tile it falls in, or the thread.
 *
 * Assumptions: value part dv % 16 == 0 and ld % 16 == 0 (the driver sends other sizes to scalar);
 * any 1 <= dk <= 256, 1 <= n <= GDN_CHUNK_MAX; no alignment needed.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "cpu/chunked.h"
#include "cpu/kernels/transpose_avx2.h"

#define GDN_AI static inline __attribute__((always_inline))

enum { MR = 6, NR = 2, FR = 4 };

typedef enum tri { TRI_NONE, TRI_P, TRI_N } tri;

/* C[M][N] = (Cin ? scale_i * Cin : 0) + A[M][P] B[P][N]; N % 16 == 0; TRI_P / TRI_N as in the
 * AVX-512 kernel. */
typedef struct mm {
    int M, N, P;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
    const float *Cin;
    int64_t ldi;
    const float *rs;
    float cs;
    tri tr;
} mm;

GDN_AI void tile(const mm *m, const int mr, int i0, int n0, int P)
{
    __m256 acc[MR][NR];
    const float *a = m->A + i0 * m->lda;
    const float *b = m->B + n0;
    if (m->Cin) {
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            const __m256 s = _mm256_set1_ps(m->rs ? m->rs[i0 + i] : m->cs);
            const float *ci = m->Cin + (i0 + i) * m->ldi + n0;
#pragma GCC unroll 2
            for (int c = 0; c < NR; c++)
                acc[i][c] = _mm256_mul_ps(s, _mm256_loadu_ps(ci + 8 * c));
        }
    } else {
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++)
#pragma GCC unroll 2
            for (int c = 0; c < NR; c++)
                acc[i][c] = _mm256_setzero_ps();
    }
    const int64_t lda = m->lda, ldb = m->ldb;
#pragma GCC unroll 2
    for (int p = 0; p < P; p++) {
        __m256 bv[NR];
#pragma GCC unroll 2
        for (int c = 0; c < NR; c++)
            bv[c] = _mm256_loadu_ps(b + p * ldb + 8 * c);
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            const __m256 av = _mm256_broadcast_ss(a + i * lda + p);
#pragma GCC unroll 2
            for (int c = 0; c < NR; c++)
                acc[i][c] = _mm256_fmadd_ps(av, bv[c], acc[i][c]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        float *ci = m->C + (i0 + i) * m->ldc + n0;
#pragma GCC unroll 2
        for (int c = 0; c < NR; c++)
            _mm256_storeu_ps(ci + 8 * c, acc[i][c]);
    }
}

static void gemm(const mm *m)
{
    for (int n0 = 0; n0 < m->N; n0 += 16) {
        for (int i0 = 0; i0 < m->M; i0 += MR) {
            const int mr = m->M - i0 < MR ? m->M - i0 : MR;
            int P = m->P;
            if (m->tr == TRI_P && P > i0 + mr)
                P = i0 + mr;
            if (m->tr == TRI_N && n0 >= (i0 + mr + 15) / 16 * 16)
                continue;
            switch (mr) {
            case 1: tile(m, 1, i0, n0, P); break;
            case 2: tile(m, 2, i0, n0, P); break;
            case 3: tile(m, 3, i0, n0, P); break;
            case 4: tile(m, 4, i0, n0, P); break;
            case 5: tile(m, 5, i0, n0, P); break;
            default: tile(m, 6, i0, n0, P); break;
            }
        }
    }
}

void gdn_chunk_transpose_f32__avx2(const float *src, int64_t ls, int rows, int cols, float *dst, int64_t ld)
{
    for (int r0 = 0; r0 < rows; r0 += 8) {
        const int rn = rows - r0 < 8 ? rows - r0 : 8;
        for (int c0 = 0; c0 < cols; c0 += 8) {
            const int cn = cols - c0 < 8 ? cols - c0 : 8;
            if (rn < 8 || cn < 8) { /* an edge block */
                for (int c = c0; c < c0 + cn; c++)
                    for (int r = r0; r < r0 + rn; r++)
                        dst[c * ld + r] = src[r * ls + c];
                continue;
            }
            __m256 m[8];
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                m[i] = _mm256_loadu_ps(src + (r0 + i) * ls + c0);
            transpose8(m);
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                _mm256_storeu_ps(dst + (c0 + i) * ld + r0, m[i]);
        }
    }
}

/* kt[k][r] = k_r[k] for r < n, 0 for n <= r < c. */
static void transpose_k(const float *kq, int n, int dk, int c, float *kt)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int r0 = 0; r0 < c; r0 += 8) {
        for (int k0 = 0; k0 < dk; k0 += 8) {
            const int kn = dk - k0 < 8 ? dk - k0 : 8;
            const __m256i km = _mm256_cmpgt_epi32(_mm256_set1_epi32(kn), iota);
            __m256 m[8];
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                m[i] = r0 + i < n ? _mm256_maskload_ps(kq + (int64_t)(r0 + i) * dk + k0, km) : _mm256_setzero_ps();
            transpose8(m);
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                if (i < kn)
                    _mm256_storeu_ps(kt + (int64_t)(k0 + i) * c + r0, m[i]);
        }
    }
}

/* Gamma row by row: -A from KK into na, P from QK into pm (qk NULL: none); gam, wc. Blocks right
 * of the diagonal are written as zeros without reading KK or QK there (never computed). */
static void gates(int n, int c, const float *decay, const float *beta, const float *kk, const float *qk, float *na,
                  float *pm, float *gam, float *wc)
{
    const int nc = c / 8;
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 prev[GDN_CHUNK_MAX / 8];
    for (int b = 0; b < nc; b++)
        prev[b] = _mm256_setzero_ps();
    float g = 1.0f;
    for (int i = 0; i < n; i++) {
        const __m256 d = _mm256_set1_ps(decay[i]), nb = _mm256_set1_ps(-beta[i]);
        const __m256i ii = _mm256_set1_epi32(i);
        g *= decay[i];
        gam[i] = g;
        for (int b = 0; b < nc; b++) {
            const __m256i j = _mm256_add_epi32(iota, _mm256_set1_epi32(8 * b));
            const __m256 lt = _mm256_castsi256_ps(_mm256_cmpgt_epi32(ii, j));
            const __m256 eq = _mm256_castsi256_ps(_mm256_cmpeq_epi32(ii, j));
            const __m256 le = _mm256_or_ps(lt, eq);
            const __m256 gr = _mm256_or_ps(_mm256_and_ps(lt, _mm256_mul_ps(prev[b], d)), _mm256_and_ps(eq, one));
            prev[b] = gr;
            const int64_t o = (int64_t)i * c + 8 * b;
            if (8 * b > i) {
                _mm256_storeu_ps(na + o, _mm256_setzero_ps());
                if (qk)
                    _mm256_storeu_ps(pm + o, _mm256_setzero_ps());
                continue;
            }
            _mm256_storeu_ps(na + o, _mm256_and_ps(lt, _mm256_mul_ps(_mm256_mul_ps(nb, gr), _mm256_loadu_ps(kk + o))));
            if (qk)
                _mm256_storeu_ps(pm + o, _mm256_and_ps(le, _mm256_mul_ps(gr, _mm256_loadu_ps(qk + o))));
        }
    }
    for (int b = 0; b < nc; b++)
        _mm256_storeu_ps(wc + 8 * b, prev[b]);
}

/* Rows r0 .. r0+rb-1 of Delta (in place over B in dl), columns n0 .. n0 + 16. */
GDN_AI void fsub_tile(const int rb, int r0, int n0, const float *na, int c, float *v, int64_t ld)
{
    __m256 acc[FR][NR];
#pragma GCC unroll 4
    for (int i = 0; i < rb; i++)
#pragma GCC unroll 2
        for (int q = 0; q < NR; q++)
            acc[i][q] = _mm256_loadu_ps(v + (r0 + i) * ld + n0 + 8 * q);
#pragma GCC unroll 2
    for (int j = 0; j < r0; j++) {
        __m256 bv[NR];
#pragma GCC unroll 2
        for (int q = 0; q < NR; q++)
            bv[q] = _mm256_loadu_ps(v + j * ld + n0 + 8 * q);
#pragma GCC unroll 4
        for (int i = 0; i < rb; i++) {
            const __m256 av = _mm256_broadcast_ss(na + (r0 + i) * c + j);
#pragma GCC unroll 2
            for (int q = 0; q < NR; q++)
                acc[i][q] = _mm256_fmadd_ps(av, bv[q], acc[i][q]);
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < rb; i++)
#pragma GCC unroll 4
        for (int i2 = i + 1; i2 < rb; i2++) {
            const __m256 av = _mm256_broadcast_ss(na + (r0 + i2) * c + r0 + i);
#pragma GCC unroll 2
            for (int q = 0; q < NR; q++)
                acc[i2][q] = _mm256_fmadd_ps(av, acc[i][q], acc[i2][q]);
        }
#pragma GCC unroll 4
    for (int i = 0; i < rb; i++)
#pragma GCC unroll 2
        for (int q = 0; q < NR; q++)
            _mm256_storeu_ps(v + (r0 + i) * ld + n0 + 8 * q, acc[i][q]);
}

static void forward_subst(int n, int dv, const float *na, int c, float *v, int64_t ld)
{
    for (int n0 = 0; n0 < dv; n0 += 16) {
        for (int r0 = 0; r0 < n; r0 += FR) {
            switch (n - r0 < FR ? n - r0 : FR) {
            case 1: fsub_tile(1, r0, n0, na, c, v, ld); break;
            case 2: fsub_tile(2, r0, n0, na, c, v, ld); break;
            case 3: fsub_tile(3, r0, n0, na, c, v, ld); break;
            default: fsub_tile(4, r0, n0, na, c, v, ld); break;
            }
        }
    }
}

/* dst[0..dk) = s * x[0..dk) */
static void scale_row(const float *x, int dk, float s, float *dst)
{
    const __m256 sv = _mm256_set1_ps(s);
    int i = 0;
    for (; i + 8 <= dk; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_mul_ps(sv, _mm256_loadu_ps(x + i)));
    for (; i < dk; i++)
        dst[i] = s * x[i];
}

/* 1 / sqrt(sum x^2 + 1e-6) */
static float inv_norm(const float *x, int dk)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= dk; i += 16) {
        const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
        a0 = _mm256_fmadd_ps(x0, x0, a0);
        a1 = _mm256_fmadd_ps(x1, x1, a1);
    }
    float t[8], s = 0.0f;
    _mm256_storeu_ps(t, _mm256_add_ps(a0, a1));
    for (; i < dk; i++)
        s += x[i] * x[i];
    return 1.0f / sqrtf(((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7])) + s + 1e-6f);
}

void gdn_chunk_keys_f32__avx2(const gdn_chunk_keys_args *a)
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
    mm m = {n, c, dk, K, dk, a->kt, c, a->kk, c, NULL, 0, NULL, 0.0f, TRI_N};
    gemm(&m);
    if (a->q) {
        m.A = Q;
        m.C = a->qk;
        gemm(&m);
    }
}

void gdn_chunk_f32__avx2(const gdn_chunk_args *a)
{
    const int n = a->n, dk = a->dk, dv = a->dv, c = (n + 15) / 16 * 16;
    const int64_t ld = a->ld;
    float *na = a->work;                                   /* [n][c]  -A */
    float *pm = na + GDN_CHUNK_MAX * GDN_CHUNK_MAX;        /* [n][c]  P  */
    float *ktw = pm + GDN_CHUNK_MAX * GDN_CHUNK_MAX;       /* [dk][c] */
    float *x = ktw + GDN_MAX_HEAD_DIM * GDN_CHUNK_MAX;     /* [2n][ld] */
    float *gam = x + 2 * GDN_CHUNK_MAX * GDN_CHUNK_LD_MAX; /* [n] */
    float *wc = gam + GDN_CHUNK_MAX;                       /* [c] */
    const int out = a->qk != NULL;

    gates(n, c, a->decay, a->beta, a->kk, a->qk, na, pm, gam, wc);
    for (int k = 0; k < dk; k++)
        for (int b = 0; b < c; b += 8)
            _mm256_storeu_ps(ktw + k * c + b,
                             _mm256_mul_ps(_mm256_loadu_ps(a->kt + k * c + b), _mm256_loadu_ps(wc + b)));

    mm mx = {out ? 2 * n : n, dv, dk, a->kq, dk, a->st, ld, x, ld, NULL, 0, NULL, 0.0f, TRI_NONE};
    gemm(&mx);
    for (int r = 0; r < n; r++) {
        const __m256 gr = _mm256_set1_ps(gam[r]), br = _mm256_set1_ps(a->beta[r]);
        const float *vr = a->v + r * a->ldv, *xr = x + r * ld;
        float *dr = a->dl + r * ld;
        for (int j = 0; j < dv; j += 8)
            _mm256_storeu_ps(dr + j, _mm256_mul_ps(br, _mm256_fnmadd_ps(gr, _mm256_loadu_ps(xr + j),
                                                                         _mm256_loadu_ps(vr + j))));
    }
    forward_subst(n, dv, na, c, a->dl, ld);
    if (out) {
        mm my = {n, dv, n, pm, c, a->dl, ld, a->y, a->ldy, x + n * ld, ld, gam, 0.0f, TRI_P};
        gemm(&my);
    }
    mm ms = {dk, dv, n, ktw, c, a->dl, ld, a->st, ld, a->st, ld, NULL, gam[n - 1], TRI_NONE};
    gemm(&ms);
}
