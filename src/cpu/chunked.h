/*
 * chunked.h — the chunkwise-parallel (WY/UT) algorithm on the CPU: the contract of the chunk
 * kernels ("chunk_f32__<isa>": a key part per key head and a value part per value head) and the
 * driver of one work item (chunked.c).
 *
 * Math (research/ALGORITHM.md §1, "W-free" form). A chunk holds n <= GDN_CHUNK_MAX tokens
 * r = 0..n-1 with keys k_r and queries q_r (L2-normalised when asked, q times the output scale),
 * values v_r (a tile of dv columns of Dv), decays d_r and betas b_r; S ([Dv][Dk]) is the state
 * before the chunk. With
 *     Gamma[i][j] = d_{j+1} d_{j+2} ... d_i  (i >= j; 1 on the diagonal)   = e^{G_i - G_j}
 *     gam_r       = d_0 d_1 ... d_r          (the decay from the chunk start) = e^{G_r}
 *     A[i][j]     = b_i Gamma[i][j] (k_i . k_j)   for i > j, else 0
 *     P[i][j]     =     Gamma[i][j] (q_i . k_j)   for i >= j, else 0
 * the kernels compute
 *     X     = K S^T,  Y = Q S^T                                  [n][dv] each (one product)
 *     Delta = (I + A)^-1 (diag(b) V - diag(b gam) X)             forward substitution, no inverse
 *     out   = diag(gam) Y + P Delta                              [n][dv]
 *     S'^T  = gam_{n-1} S^T + K^T diag(Gamma[n-1][.]) Delta      [Dk][dv]
 * Row r of Delta is exactly the delta of token r of the recurrence (KERNELS.md §1), so the result
 * is the token loop's to rounding. Gamma and gam are running products of the f32 decays the token
 * loop multiplies by, i.e. the chunk-local e^{G_i - G_j} with relative exponents only: every
 * factor is <= 1 for decays in [0,1], nothing is divided by a decay or multiplied by e^{-G} (no
 * overflow whatever the decay), a zero decay (linear gate 0) is exact where log-space cumsums give
 * -inf - -inf, and the causal masks (j > i, and columns past n) are selects, never products with 0.
 *
 * Key part (once per key head and chunk), gdn_chunk_keys_fn:
 *   k, q  [n] rows of dk f32 at row strides ks, qs (unit stride along dk): the raw keys and queries
 *         (q NULL: no output, only K is formed)
 *   kq    [2n][dk] out: k_r / ||k_r|| then scale * q_r / ||q_r|| (norm: x * rsqrt(sum x^2 + 1e-6),
 *         only when l2norm; otherwise k_r and scale * q_r)
 *   kt    [dk][c] out: K^T, c = n rounded up to 16, columns n..c-1 zero
 *   kk    [n][c] out: k_i . k_j; qk [n][c] out: q_i . k_j (with q); only the 16-column blocks
 *         that hold some j <= i are written
 * Value part (per value head and chunk), gdn_chunk_fn:
 *   kq, kt, kk, qk  the key part's outputs (read only; qk NULL: no output, Q products skipped)
 *   decay, beta [n]
 *   v     [n] rows of dv f32 at row stride ldv (unit stride along dv): the values (read only)
 *   dl    [n][ld] out: Delta
 *   st    [dk][ld] S^T of the tile (st[k][j] = S[j][k]); in: before the chunk, out: after it
 *   y     [n] rows of dv f32 at row stride ldy, out; or NULL (only with qk NULL)
 *   work  GDN_CHUNK_WORK_FLOATS floats, 64-byte aligned, owned by the call
 * v and y may be the caller's tensors themselves (f32 rows), or converted copies.
 * Requirements: 1 <= n <= GDN_CHUNK_MAX, 1 <= dk, dv <= 256, dv <= ld <= GDN_CHUNK_LD_MAX. SIMD
 * value kernels: dv % 16 == 0 and ld % 16 == 0 (the driver sends other sizes to the scalar one);
 * any dk. Buffers do not overlap.
 *
 * bf16 products (problem.precision BF16, gdn_chunk_bf16__avx512bf16, a gdn_chunk_fn): the same
 * contract and math; the three products X/Y, P Delta and Kt diag(wc) Delta take bf16 operands with
 * f32 accumulation, everything else (S itself, gates, forward substitution) is f32. Its key part
 * gdn_chunk_keys_bf16__avx512bf16 (a gdn_chunk_keys_fn) computes kq and kt in f32 as the f32 one
 * does, K K^T and Q K^T with bf16 operands (f32 accumulation), and also writes kq in bf16 pairs
 * (kqb), which the value kernel then takes instead of converting kq itself for every value head.
 * The driver uses them for dv % 16 == 0 and dk >= GDN_CHUNK_BF16_MIN_DK where the context has them.
 *
 * Determinism: every column j of the tile goes through the same operations in the same order
 * whatever dv, ld, the tiling of Dv or the grouping of value heads are, so results do not depend
 * on the thread count (the ISAs agree to rounding, not bitwise).
 */
#ifndef GDN_CPU_CHUNKED_H
#define GDN_CPU_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#include "core/plan.h"

/* Largest chunk the kernels take; the chunk the driver uses; the sequence length from which AUTO
 * runs a sequence chunked (GDN_CHUNK_AUTO_MIN_T for Dk <= 128, _LARGE above). The last three were
 * measured (docs/PERF.md: the token loop and the chunked path cross at 20-24 tokens for Dk = 64
 * and 128 with the state coming from memory, at 32-48 for Dk = 256). */
#define GDN_CHUNK_MAX 64
#ifndef GDN_CHUNK_C
#define GDN_CHUNK_C 32
#endif
#ifndef GDN_CHUNK_AUTO_MIN_T
#define GDN_CHUNK_AUTO_MIN_T 24
#endif
#ifndef GDN_CHUNK_AUTO_MIN_T_LARGE
#define GDN_CHUNK_AUTO_MIN_T_LARGE 32
#endif
/* The sequence length from which AUTO runs the chunked path, for this key dimension. */
static inline int gdn_chunk_auto_min_t(int dk)
{
    return dk <= 128 ? GDN_CHUNK_AUTO_MIN_T : GDN_CHUNK_AUTO_MIN_T_LARGE;
}

/* Whether a sequence of `tokens` tokens runs chunked: never with capture, always when forced, from
 * gdn_chunk_auto_min_t(dk) tokens under AUTO. */
static inline int gdn_chunk_chosen(gdn_algo algo, int capture, int64_t tokens, int dk)
{
    if (capture)
        return 0;
    return algo == GDN_ALGO_CHUNKED || (algo == GDN_ALGO_AUTO && tokens >= gdn_chunk_auto_min_t(dk));
}
#define GDN_CHUNK_LD_MAX (GDN_MAX_HEAD_DIM + 16)

/* Tokens per chunk of the bf16-product value kernel (problem.precision BF16); measured (docs/PERF.md). */
#ifndef GDN_CHUNK_C_BF16
#define GDN_CHUNK_C_BF16 32
#endif
/* Smallest Dk that runs the bf16 kernel: below it the rounding of the few terms of each product
 * no longer averages out (relative RMS error 1e-2 at Dk = 1 .. 2, slow decay), and bf16 gains
 * nothing; those sizes run the f32 kernels. */
#define GDN_CHUNK_BF16_MIN_DK 16

/* Value-part work space: -A and P [C][C], ktw [Dk][C], x [2C][ld], gam and wc [C]. */
#define GDN_CHUNK_F32_WORK_FLOATS                                                                             \
    (2 * GDN_CHUNK_MAX * GDN_CHUNK_MAX + GDN_MAX_HEAD_DIM * GDN_CHUNK_MAX + 2 * GDN_CHUNK_MAX * GDN_CHUNK_LD_MAX + \
     2 * GDN_CHUNK_MAX)
/* bf16 value kernel: -A and P [C][C], x [2C][ld], gam and wc [C] (f32), then in 32-bit words of two
 * bf16: [K; Q] [2C][Dk/2], S^T pairs [Dk/2][ld], P [C][C/2], Kt diag(wc) [Dk][C/2], Delta pairs
 * [C/2][ld]. */
#define GDN_CHUNK_BF16_WORK_FLOATS                                                                            \
    (2 * GDN_CHUNK_MAX * GDN_CHUNK_MAX + 2 * GDN_CHUNK_MAX * GDN_CHUNK_LD_MAX + 2 * GDN_CHUNK_MAX +               \
     GDN_CHUNK_MAX * GDN_MAX_HEAD_DIM + GDN_MAX_HEAD_DIM / 2 * GDN_CHUNK_LD_MAX +                             \
     GDN_CHUNK_MAX * GDN_CHUNK_MAX / 2 + GDN_MAX_HEAD_DIM * GDN_CHUNK_MAX / 2 + GDN_CHUNK_MAX / 2 * GDN_CHUNK_LD_MAX)
/* bf16 key kernel work: K^T in bf16 pairs [Dk/2][C]. */
#define GDN_CHUNK_KEYS_BF16_WORK_WORDS (GDN_MAX_HEAD_DIM / 2 * GDN_CHUNK_MAX)
#define GDN_CHUNK_WORK_FLOATS                                                                                 \
    (GDN_CHUNK_F32_WORK_FLOATS > GDN_CHUNK_BF16_WORK_FLOATS ? GDN_CHUNK_F32_WORK_FLOATS : GDN_CHUNK_BF16_WORK_FLOATS)

typedef struct gdn_chunk_keys_args {
    int n;
    int dk;
    int l2norm;
    float scale;
    const float *k;
    int64_t ks;
    const float *q;
    int64_t qs;
    float *kq;
    float *kt;
    float *kk;
    float *qk;
    uint32_t *kqb;    /* bf16 key kernel only: out [2n][(dk+1)/2] kq rows in bf16 pairs */
    uint32_t *work;   /* bf16 key kernel only: GDN_CHUNK_KEYS_BF16_WORK_WORDS words, 64-byte aligned */
} gdn_chunk_keys_args;

typedef struct gdn_chunk_args {
    int n;
    int dk;
    int dv;
    int64_t ld;
    const float *kq;
    const float *kt;
    const float *kk;
    const float *qk;
    const float *decay;
    const float *beta;
    const float *v;
    int64_t ldv;
    float *dl;
    float *st;
    float *y;
    int64_t ldy;
    float *work;
    const uint32_t *kqb; /* bf16 value kernel: kq in bf16 pairs from the bf16 key kernel, or NULL */
    uint32_t *stb;       /* bf16 value kernel: S^T in bf16 pairs [(dk+1)/2][ld], kept by the caller
                            from chunk to chunk (out: the pairs of S^T after the chunk), or NULL */
    int stb_valid;       /* stb holds the pairs of S^T as it is on entry (else they are packed) */
} gdn_chunk_args;

typedef void (*gdn_chunk_keys_fn)(const gdn_chunk_keys_args *a);
typedef void (*gdn_chunk_fn)(const gdn_chunk_args *a);
/* dst[c][r] = src[r][c] for r < rows, c < cols (1..256 each); row strides ls, ld; unit inner
 * strides; no overlap. Moves a state tile between the pool ([Dv][Dk] rows) and S^T. */
typedef void (*gdn_chunk_transpose_fn)(const float *src, int64_t ls, int rows, int cols, float *dst, int64_t ld);

void gdn_chunk_keys_f32__scalar(const gdn_chunk_keys_args *a);
void gdn_chunk_keys_f32__avx2(const gdn_chunk_keys_args *a);
void gdn_chunk_keys_f32__avx512(const gdn_chunk_keys_args *a);
void gdn_chunk_f32__scalar(const gdn_chunk_args *a);
void gdn_chunk_f32__avx2(const gdn_chunk_args *a);
void gdn_chunk_f32__avx512(const gdn_chunk_args *a);
/* bf16 products (vdpbf16ps), f32 accumulation and everything else f32: AVX-512 F/BW + AVX512_BF16 */
void gdn_chunk_bf16__avx512bf16(const gdn_chunk_args *a);
void gdn_chunk_keys_bf16__avx512bf16(const gdn_chunk_keys_args *a);
void gdn_chunk_transpose_f32__scalar(const float *src, int64_t ls, int rows, int cols, float *dst, int64_t ld);
void gdn_chunk_transpose_f32__avx2(const float *src, int64_t ls, int rows, int cols, float *dst, int64_t ld);
void gdn_chunk_transpose_f32__avx512(const float *src, int64_t ls, int rows, int cols, float *dst, int64_t ld);

/* --- the driver (chunked.c) ------------------------------------------------------------------ */

struct gdn_context;

/* Floats of per-thread scratch the chunked driver needs (64-byte alignment included). */
size_t gdn_cpu_chunked_scratch_floats(void);

/* Whether sequence n of the plan runs chunked: problem.algo CHUNKED, or AUTO and the sequence has
 * at least GDN_CHUNK_AUTO_MIN_T tokens; never when states are captured (the token loop does that). */
int gdn_cpu_use_chunked(const gdn_plan *p, int64_t n);

/* Work item (sequence n, value head h, state rows [v0, v0 + vn)) of the token loop's enumeration
 * (driver.c), run chunked: the item of the first value head of each group of value heads that
 * share a key head (at most as many as fit the scratch) runs the whole group, so the key part of
 * every chunk is computed once for the group; the items of the other heads of a group do nothing.
 * Reads the read slots, writes the write slots and out. */
void gdn_cpu_chunked_item(const struct gdn_context *ctx, const gdn_plan *p, float *scratch, int64_t n, int h,
                          int v0, int vn);

#endif
