/*
 * chunk_bf16__avx512bf16.c — the value part of one chunk of the chunkwise (WY/UT, W-free) GDN
 * algorithm with bf16 product operands and f32 accumulation: AVX-512 F/BW + AVX512_BF16
 * (vdpbf16ps). problem.precision = GDN_PRECISION_BF16; its key part gdn_chunk_keys_bf16__avx512bf16
 * (end of this file: kq, kt f32 as the f32 key kernel; K K^T, Q K^T with bf16 operands; kq in bf16
 * pairs for the value kernels). The state update also writes S^T in bf16 pairs (stb, kept by the
 * driver per head) from its f32 accumulators, so the next chunk's X skips re-packing S^T.
 *
 * Math, shapes and memory contract: chunked.h (gdn_chunk_fn). Per chunk of n tokens (c = n
 * rounded up to 16), state tile S^T [dk][dv]:
 *   f32    -A, P, gam, wc     gates (chunk_avx512.h): running products of the decays, masks by select
 *   bf16   X = [K; Q] S^T     [2n][dv]  operands kq and S^T rounded to bf16, f32 accumulation
 *   f32    B = b (v - gam X)  [n][dv]
 *   f32    Delta = B + (-A) Delta       forward substitution (chunk_avx512.h)
 *   bf16   y = diag(gam) Y + P Delta    diag(gam) Y in f32; P and Delta rounded to bf16
 *   bf16   S^T <- gam_{n-1} S^T + (Kt diag(wc)) Delta   Kt diag(wc) and Delta rounded to bf16; the
 *                                       products are added to the f32 state in f32
 * So the state is kept and accumulated in f32; only the operands of the three products are bf16
 * (round to nearest even, vcvtne2ps2bf16). Expected error against the float64 reference: relative
 * RMS 2e-3 .. 5e-3 on the output and the state (research/ALGORITHM.md §2), not growing with T.
 *
 * vdpbf16ps: acc[j] += a[2j] b[2j] + a[2j+1] b[2j+1] (32-bit lane j, two bf16 each), so a product
 * C += A B pairs the inner index p: A (row-major, pairs (A[i][p], A[i][p+1]) already adjacent) is
 * converted row by row and broadcast one 32-bit pair at a time; B is packed as panels of pairs
 * Bp[p/2][j] = (B[p][j], B[p+1][j]) (two rows converted by one vcvtne2ps2bf16, then interleaved by
 * vpermw), a zero row past an odd inner size. Register tiles as in chunk_f32__avx512.c: up to 24
 * zmm accumulators (6 x 64, 8 x 48, 12 x 32, 12 x 16 columns), each vdpbf16ps doing 2 steps of p.
 * A tile that starts from C_in (y, S^T) loads it scaled once (f32), then adds its products in
 * order of p, the same operations for every column: the result of a column does not depend on dv,
 * ld, the tile it falls in, or the thread. vdpbf16ps flushes denormal inputs and results to zero
 * (values below 1e-38, far under the error budget).
 *
 * Assumptions: dv % 16 == 0 and ld % 16 == 0 (the driver sends other sizes to the scalar f32
 * kernel); any 1 <= dk <= 256, 1 <= n <= GDN_CHUNK_MAX; work 64-byte aligned
 * (GDN_CHUNK_BF16_WORK_FLOATS floats); no other alignment needed.
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

/* C[M][N] = (Cin ? scale_i * Cin : 0) + A B, N % 16 == 0, with A [M][P2] and B [P2][N] in words of
 * two bf16 (P2 pairs of the inner index). TRI_P: row block i0 uses only the pairs that hold some
 * p < i0 + mr (A is zero above its diagonal); TRI_N: row block i0 computes only the columns below
 * round16(i0 + mr) (the rest is left unwritten). */
typedef struct mmb {
    int M, N, P2;
    const uint32_t *A;
    int64_t lda;
    const uint32_t *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
    const float *Cin; /* may equal C (in place) */
    int64_t ldi;
    const float *rs;  /* per-row scale of Cin, or NULL: cs */
    float cs;
    tri tr;
    uint32_t *pk;     /* or NULL: also C in bf16 pairs of rows, pk[i/2][j] (rows (i, i+1)) */
    int64_t ldp;
} mmb;

GDN_AI void tile(const mmb *m, const int mr, const int nr, int i0, int n0, int P2)
{
    __m512 acc[MR][NR];
    const uint32_t *a = m->A + i0 * m->lda;
    const uint32_t *b = m->B + n0;
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
    for (int p = 0; p < P2; p++) {
        __m512bh bv[NR];
#pragma GCC unroll 4
        for (int c = 0; c < nr; c++)
            bv[c] = (__m512bh)_mm512_loadu_si512(b + p * ldb + 16 * c);
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            const __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i * lda + p]);
#pragma GCC unroll 4
            for (int c = 0; c < nr; c++)
                acc[i][c] = _mm512_dpbf16_ps(acc[i][c], av, bv[c]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        float *ci = m->C + (i0 + i) * m->ldc + n0;
#pragma GCC unroll 4
        for (int c = 0; c < nr; c++)
            _mm512_storeu_ps(ci + 16 * c, acc[i][c]);
    }
    if (m->pk) { /* i0 is even (row blocks of 6, 8, 12); an odd last row pairs with zero */
        const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                                             22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
#pragma GCC unroll 6
        for (int i = 0; i < mr; i += 2) {
            uint32_t *pi = m->pk + (i0 + i) / 2 * m->ldp + n0;
#pragma GCC unroll 4
            for (int c = 0; c < nr; c++)
                _mm512_storeu_si512(pi + 16 * c, _mm512_permutexvar_epi16(
                                                     idx, (__m512i)_mm512_cvtne2ps_pbh(
                                                              i + 1 < mr ? acc[i + 1][c] : _mm512_setzero_ps(),
                                                              acc[i][c])));
        }
    }
}

#define TILE_CASE(R, N)                  \
    case (R) * 8 + (N):                  \
        tile(m, (R), (N), i0, n0, P2);   \
        break;
#define TILE_ROWS6(N) TILE_CASE(1, N) TILE_CASE(2, N) TILE_CASE(3, N) TILE_CASE(4, N) TILE_CASE(5, N) TILE_CASE(6, N)
#define TILE_ROWS8(N) TILE_ROWS6(N) TILE_CASE(7, N) TILE_CASE(8, N)
#define TILE_ROWS12(N) TILE_ROWS8(N) TILE_CASE(9, N) TILE_CASE(10, N) TILE_CASE(11, N) TILE_CASE(12, N)

static void run_tile(const mmb *m, int mr, int nr, int i0, int n0, int P2)
{
    switch (mr * 8 + nr) {
        TILE_ROWS12(1) TILE_ROWS12(2) TILE_ROWS8(3) TILE_ROWS6(4)
    default: break;
    }
}

static void gemm(const mmb *m)
{
    for (int n0 = 0; n0 < m->N; n0 += 16 * NR) {
        const int nr = (m->N - n0) / 16 < NR ? (m->N - n0) / 16 : NR;
        const int rb = rows_for(nr);
        for (int i0 = 0; i0 < m->M; i0 += rb) {
            const int mr = m->M - i0 < rb ? m->M - i0 : rb;
            int P2 = m->P2, nrr = nr;
            if (m->tr == TRI_P && P2 > (i0 + mr + 1) / 2)
                P2 = (i0 + mr + 1) / 2;
            if (m->tr == TRI_N) {
                const int ne = (i0 + mr + 15) / 16 * 16;
                if (n0 >= ne)
                    continue;
                if ((ne - n0) / 16 < nrr)
                    nrr = (ne - n0) / 16;
            }
            run_tile(m, mr, nrr, i0, n0, P2);
        }
    }
}

/* dst[0 .. (cols+1)/2) = x[0..cols) rounded to bf16, two per word (a zero after an odd count). */
static void cvt_row(const float *x, int cols, uint32_t *dst)
{
    int i = 0;
    for (; i + 32 <= cols; i += 32)
        _mm512_storeu_si512(dst + i / 2, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16),
                                                                        _mm512_loadu_ps(x + i)));
    if (i < cols) {
        const int r = cols - i, w = (r + 1) / 2;
        const __mmask16 m0 = (__mmask16)(r >= 16 ? 0xffffu : (1u << r) - 1u);
        const __mmask16 m1 = (__mmask16)(r >= 32 ? 0xffffu : r > 16 ? (1u << (r - 16)) - 1u : 0u);
        const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(m1, x + i + 16), _mm512_maskz_loadu_ps(m0, x + i));
        _mm512_mask_storeu_epi32(dst + i / 2, (__mmask16)((1u << w) - 1u), (__m512i)v);
    }
}

/* Pair panel of rows x [rows][cols] (row stride lx, cols % 16 == 0):
 * dst[p][j] = (x[2p][j], x[2p+1][j]) in bf16, p < (rows+1)/2 (zero for row 2p+1 == rows). */
static void pack_pairs(const float *x, int64_t lx, int rows, int cols, uint32_t *dst, int64_t ld)
{
    /* word 2t <- word t (row 2p), word 2t+1 <- word 16 + t (row 2p+1) */
    const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                         21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    for (int r = 0; r < rows; r += 2) {
        const float *x0 = x + r * lx, *x1 = x0 + lx;
        uint32_t *d = dst + (r / 2) * ld;
        if (r + 1 < rows) {
            for (int j = 0; j < cols; j += 16)
                _mm512_storeu_si512(d + j, _mm512_permutexvar_epi16(
                                               idx, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x1 + j),
                                                                                 _mm512_loadu_ps(x0 + j))));
        } else {
            for (int j = 0; j < cols; j += 16)
                _mm512_storeu_si512(d + j, _mm512_permutexvar_epi16(
                                               idx, (__m512i)_mm512_cvtne2ps_pbh(_mm512_setzero_ps(),
                                                                                 _mm512_loadu_ps(x0 + j))));
        }
    }
}

void gdn_chunk_bf16__avx512bf16(const gdn_chunk_args *a)
{
    const int n = a->n, dk = a->dk, dv = a->dv, c = (n + 15) / 16 * 16;
    const int dk2 = (dk + 1) / 2, c2 = c / 2, n2 = (n + 1) / 2;
    const int64_t ld = a->ld;
    float *na = a->work;                                            /* [n][c]  -A (f32) */
    float *pm = na + GDN_CHUNK_MAX * GDN_CHUNK_MAX;                 /* [n][c]  P (f32) */
    float *x = pm + GDN_CHUNK_MAX * GDN_CHUNK_MAX;                  /* [2n][ld] X, Y (f32) */
    float *gam = x + 2 * GDN_CHUNK_MAX * GDN_CHUNK_LD_MAX;          /* [n] */
    float *wc = gam + GDN_CHUNK_MAX;                                /* [c] */
    uint32_t *kqw = (uint32_t *)(void *)(wc + GDN_CHUNK_MAX);      /* [2n][dk2] */
    uint32_t *stw = kqw + GDN_CHUNK_MAX * GDN_MAX_HEAD_DIM;         /* [dk2][ld] */
    uint32_t *pmb = stw + GDN_MAX_HEAD_DIM / 2 * GDN_CHUNK_LD_MAX;  /* [n][c2] */
    uint32_t *ktwb = pmb + GDN_CHUNK_MAX * GDN_CHUNK_MAX / 2;       /* [dk][c2] */
    uint32_t *dlb = ktwb + GDN_MAX_HEAD_DIM * GDN_CHUNK_MAX / 2;    /* [n2][ld] */
    const int out = a->qk != NULL;
    const int rows = out ? 2 * n : n;

    gates(n, c, a->decay, a->beta, a->kk, a->qk, na, pm, gam, wc);
    /* Kt diag(wc) in bf16: 16 columns at a time (c % 16 == 0) */
    for (int k = 0; k < dk; k++)
        for (int b = 0; b < c; b += 16)
            _mm256_storeu_si256((__m256i *)(void *)(ktwb + k * c2 + b / 2),
                                (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_loadu_ps(a->kt + k * c + b),
                                                                          _mm512_loadu_ps(wc + b))));
    const uint32_t *kqb = a->kqb;
    if (!kqb) {
        for (int r = 0; r < rows; r++)
            cvt_row(a->kq + (int64_t)r * dk, dk, kqw + (int64_t)r * dk2);
        kqb = kqw;
    }
    /* S^T in bf16 pairs: the caller's copy (written by the previous chunk's update) or packed here */
    uint32_t *stb = a->stb ? a->stb : stw;
    if (!a->stb || !a->stb_valid)
        pack_pairs(a->st, ld, dk, dv, stb, ld);

    /* X = K S^T, Y = Q S^T */
    mmb mx = {rows, dv, dk2, kqb, dk2, stb, ld, x, ld, NULL, 0, NULL, 0.0f, TRI_NONE, NULL, 0};
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
    pack_pairs(a->dl, ld, n, dv, dlb, ld);
    if (out) {
        for (int r = 0; r < n; r++)
            cvt_row(pm + r * c, c, pmb + r * c2);
        mmb my = {n, dv, n2, pmb, c2, dlb, ld, a->y, a->ldy, x + n * ld, ld, gam, 0.0f, TRI_P, NULL, 0};
        gemm(&my);
    }
    mmb ms = {dk, dv, n2, ktwb, c2, dlb, ld, a->st, ld, a->st, ld, NULL, gam[n - 1], TRI_NONE, a->stb, ld};
    gemm(&ms);
}

/* The key part with bf16 products: kq and kt in f32 (keys_prep, as the f32 kernel), kqb = kq in
 * bf16 pairs, then K K^T and Q K^T from kqb and K^T in bf16 pairs (f32 accumulation), only the
 * 16-column blocks at or left of the diagonal. */
void gdn_chunk_keys_bf16__avx512bf16(const gdn_chunk_keys_args *a)
{
    const int n = a->n, dk = a->dk, c = (n + 15) / 16 * 16, dk2 = (dk + 1) / 2;
    const int rows = a->q ? 2 * n : n;
    uint32_t *ktb = a->work; /* [dk2][c] */
    keys_prep(a);
    for (int r = 0; r < rows; r++)
        cvt_row(a->kq + (int64_t)r * dk, dk, a->kqb + (int64_t)r * dk2);
    pack_pairs(a->kt, c, dk, c, ktb, c);
    mmb m = {n, c, dk2, a->kqb, dk2, ktb, c, a->kk, c, NULL, 0, NULL, 0.0f, TRI_N, NULL, 0};
    gemm(&m);
    if (a->q) {
        m.A = a->kqb + (int64_t)n * dk2;
        m.C = a->qk;
        gemm(&m);
    }
}
