/*
 * chunk_f32__avx512.c — one chunk of the chunkwise (WY/UT, W-free) GDN algorithm, AVX-512 F.
 *
 * Math, shapes and memory contract: chunked.h. Per chunk of n tokens (c = n rounded up to 16):
 *   key part (per key head):
 *     kq <- [k_r rsqrt(|k_r|^2 + 1e-6); scale q_r rsqrt(|q_r|^2 + 1e-6)]  (norms when l2norm)
 *     Kt     = K^T [dk][c] (zero columns past n)                                 16x16 transposes
 *     KK, QK = K Kt, Q Kt  [n][c]   only the 16-column blocks at or left of the diagonal
 *   value part (per value head, state tile S^T [dk][dv]):
 *     -A, P  from KK, QK and Gamma (running products of the decays, row by row, vector along j):
 *            -A[i][j] = (-b_i Gamma_ij) KK_ij  (j < i),  P[i][j] = Gamma_ij QK_ij  (j <= i),
 *            every other entry 0 by select (masked ops); gam_r = d_0..d_r; wc_r = Gamma[n-1][r]
 *     X      = [K; Q] S^T                   [2n][dv]   (one product: S^T is streamed once)
 *     B      = b_r (v_r - gam_r X_r)        [n][dv]    (fnmadd, then multiply)
 *     Delta  = B + (-A) Delta               forward substitution, rows in blocks of 4
 *     y      = diag(gam) Y + P Delta        triangular: a row block reads P columns up to its last row
 *     S^T   <- gam_{n-1} S^T + (Kt diag(wc)) Delta
 *
 * Products (all C (+)= A B with A broadcast one element at a time and B, C vectors along the
 * columns): register tiles of up to 24 zmm accumulators: 6 rows x 64 columns (4 loads of B and 6
 * broadcasts of A per 24 FMA), 8 x 48, 12 x 32 or 12 x 16 for the narrow products; columns in
 * blocks of 64 outside (the B panel stays in L1), row blocks inside. A tile that starts from C_in
 * (y, S^T) loads it scaled once, then adds its products in order of the inner index p: the same
 * operations for every column, so the result of a column does not depend on dv, ld, the tile it
 * falls in, or the thread.
 *
 * gates, forward_subst and the key part's norms and transpose (keys_prep) are in chunk_avx512.h
 * (shared with the bf16-product kernels).
 *
 * Assumptions: value part dv % 16 == 0 and ld % 16 == 0 (the driver sends other sizes to scalar);
 * any 1 <= dk <= 256, 1 <= n <= GDN_CHUNK_MAX; no alignment needed (work is 64-byte aligned).
 */
#include <immintrin.h>
#include <stdint.h>

#include "cpu/chunked.h"
#include "cpu/kernels/chunk_avx512.h"

enum { MR = 12, NR = GDN_CK_NR };

/* rows of a tile for nr column vectors: at most 24 accumulators */
static inline int rows_for(int nr)
{
    return nr >= 4 ? 6 : nr == 3 ? 8 : 12;
}

typedef enum tri { TRI_NONE, TRI_P, TRI_N } tri;

/* C[M][N] = (Cin ? scale_i * Cin : 0) + A[M][P] B[P][N]; N % 16 == 0. TRI_P: row block i0 uses
 * only p < i0 + mr (A is zero above its diagonal); TRI_N: row block i0 computes only the columns
 * below round16(i0 + mr) (the rest is left unwritten). */
typedef struct mm {
    int M, N, P;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
    const float *Cin; /* may equal C (in place) */
    int64_t ldi;
    const float *rs;  /* per-row scale of Cin, or NULL: cs */
    float cs;
    tri tr;
} mm;

GDN_AI void tile(const mm *m, const int mr, const int nr, int i0, int n0, int P)
{
    __m512 acc[MR][NR];
    const float *a = m->A + i0 * m->lda;
    const float *b = m->B + n0;
    if (m->Cin) {
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            const __m512 s = _mm512_set1_ps(m->rs ? m->rs[i0 + i] : m->cs);
            const float *ci = m->Cin + (i0 + i) * m->ldi + n0;
#pragma GCC unroll 4
            for (int c = 0; c < nr; c++)
                acc[i][c] = _mm512_mul_ps(s, _mm512_loadu_ps(ci + 16 * c));
        }
    } else {
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
            for (int c = 0; c < nr; c++)
                acc[i][c] = _mm512_setzero_ps();
    }
    const int64_t lda = m->lda, ldb = m->ldb;
#pragma GCC unroll 2
    for (int p = 0; p < P; p++) {
        __m512 bv[NR];
#pragma GCC unroll 4
        for (int c = 0; c < nr; c++)
            bv[c] = _mm512_loadu_ps(b + p * ldb + 16 * c);
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            const __m512 av = _mm512_set1_ps(a[i * lda + p]);
#pragma GCC unroll 4
            for (int c = 0; c < nr; c++)
                acc[i][c] = _mm512_fmadd_ps(av, bv[c], acc[i][c]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        float *ci = m->C + (i0 + i) * m->ldc + n0;
#pragma GCC unroll 4
        for (int c = 0; c < nr; c++)
            _mm512_storeu_ps(ci + 16 * c, acc[i][c]);
    }
}

#define TILE_CASE(R, N)                  \
    case (R) * 8 + (N):                  \
        tile(m, (R), (N), i0, n0, P);    \
        break;
#define TILE_ROWS6(N) TILE_CASE(1, N) TILE_CASE(2, N) TILE_CASE(3, N) TILE_CASE(4, N) TILE_CASE(5, N) TILE_CASE(6, N)
#define TILE_ROWS8(N) TILE_ROWS6(N) TILE_CASE(7, N) TILE_CASE(8, N)
#define TILE_ROWS12(N) TILE_ROWS8(N) TILE_CASE(9, N) TILE_CASE(10, N) TILE_CASE(11, N) TILE_CASE(12, N)

static void run_tile(const mm *m, int mr, int nr, int i0, int n0, int P)
{
    switch (mr * 8 + nr) {
        TILE_ROWS12(1) TILE_ROWS12(2) TILE_ROWS8(3) TILE_ROWS6(4)
    default: break;
    }
}

static void gemm(const mm *m)
{
    for (int n0 = 0; n0 < m->N; n0 += 16 * NR) {
        const int nr = (m->N - n0) / 16 < NR ? (m->N - n0) / 16 : NR;
        const int rb = rows_for(nr);
        for (int i0 = 0; i0 < m->M; i0 += rb) {
            const int mr = m->M - i0 < rb ? m->M - i0 : rb;
            int P = m->P, nrr = nr;
            if (m->tr == TRI_P && P > i0 + mr)
                P = i0 + mr;
            if (m->tr == TRI_N) {
                const int ne = (i0 + mr + 15) / 16 * 16;
                if (n0 >= ne)
                    continue;
                if ((ne - n0) / 16 < nrr)
                    nrr = (ne - n0) / 16;
            }
            run_tile(m, mr, nrr, i0, n0, P);
        }
    }
}

void gdn_chunk_transpose_f32__avx512(const float *src, int64_t ls, int rows, int cols, float *dst, int64_t ld)
{
    for (int r0 = 0; r0 < rows; r0 += 16) {
        const int rn = rows - r0 < 16 ? rows - r0 : 16;
        for (int c0 = 0; c0 < cols; c0 += 16) {
            const int cn = cols - c0 < 16 ? cols - c0 : 16;
            const __mmask16 cm = (__mmask16)((1u << cn) - 1u), rm = (__mmask16)((1u << rn) - 1u);
            __m512 m[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                m[i] = i < rn ? _mm512_maskz_loadu_ps(cm, src + (r0 + i) * ls + c0) : _mm512_setzero_ps();
            transpose16(m);
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                if (i < cn)
                    _mm512_mask_storeu_ps(dst + (c0 + i) * ld + r0, rm, m[i]);
        }
    }
}

void gdn_chunk_keys_f32__avx512(const gdn_chunk_keys_args *a)
{
    const int n = a->n, dk = a->dk, c = (n + 15) / 16 * 16;
    float *K = a->kq, *Q = a->kq + (int64_t)n * dk;
    keys_prep(a);
    mm m = {n, c, dk, K, dk, a->kt, c, a->kk, c, NULL, 0, NULL, 0.0f, TRI_N};
    gemm(&m);
    if (a->q) {
        m.A = Q;
        m.C = a->qk;
        gemm(&m);
    }
}

void gdn_chunk_f32__avx512(const gdn_chunk_args *a)
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
        for (int b = 0; b < c; b += 16)
            _mm512_storeu_ps(ktw + k * c + b,
                             _mm512_mul_ps(_mm512_loadu_ps(a->kt + k * c + b), _mm512_loadu_ps(wc + b)));

    /* X = K S^T, Y = Q S^T */
    mm mx = {out ? 2 * n : n, dv, dk, a->kq, dk, a->st, ld, x, ld, NULL, 0, NULL, 0.0f, TRI_NONE};
    gemm(&mx);
    /* B = b (v - gam X) */
    for (int r = 0; r < n; r++) {
        const __m512 gr = _mm512_set1_ps(gam[r]), br = _mm512_set1_ps(a->beta[r]);
        const float *vr = a->v + r * a->ldv, *xr = x + r * ld;
        float *dr = a->dl + r * ld;
        for (int j = 0; j < dv; j += 16)
            _mm512_storeu_ps(dr + j, _mm512_mul_ps(br, _mm512_fnmadd_ps(gr, _mm512_loadu_ps(xr + j),
                                                                         _mm512_loadu_ps(vr + j))));
    }
    forward_subst(n, dv, na, c, a->dl, ld);
    if (out) {
        mm my = {n, dv, n, pm, c, a->dl, ld, a->y, a->ldy, x + n * ld, ld, gam, 0.0f, TRI_P};
        gemm(&my);
    }
    mm ms = {dk, dv, n, ktw, c, a->dl, ld, a->st, ld, a->st, ld, NULL, gam[n - 1], TRI_NONE};
    gemm(&ms);
}
