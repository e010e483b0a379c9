/*
 * conv1d_f32__avx512.c — the causal convolution kernel (contract in cpu/conv1d.h), 16 channels per
 * vector. Per column of 16 channels the W weight vectors and a window of the last W inputs stay in
 * registers; each token loads one input vector, does W FMAs (bias first, then taps 0..W-1) and the
 * activation. silu(z) = z / (1 + exp(-z)) with the same exp as the AVX2 kernel (Cephes polynomial, argument
 * clamped to [-87, 88]), so the two kernels agree bit for bit. Compiled with -mavx512f -mfma only here.
 */
#include <immintrin.h>

#include "core/dtype.h"
#include "cpu/conv1d.h"

/* silu(z) = z / (1 + exp(-z)), exp by the Cephes polynomial with its argument -z clamped to [-87, 88]:
 * bit for bit what the AVX2 kernel computes (x = -z, n = round(x log2 e), r = x - n c1 - n c2, poly, times
 * 2^n), rewritten with the sign folded in (clamp z to [-88, 87], n = round(z * -log2 e), r = -(n c1) - z:
 * every step is sign-symmetric under round-to-nearest-even) and 2^n applied by scalef (one rounding, the
 * same as the multiplication by the exact power of two, n in [-126, 127]). */
static inline __m512 silu_ps(__m512 z)
{
    const __m512 u = _mm512_max_ps(_mm512_min_ps(z, _mm512_set1_ps(87.0f)), _mm512_set1_ps(-88.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(u, _mm512_set1_ps(-1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmsub_ps(n, _mm512_set1_ps(0.693359375f), u);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512 e = _mm512_scalef_ps(y, n);
    return _mm512_div_ps(z, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

static inline __attribute__((always_inline)) void columns(const gdn_conv1d_args *a, const int W)
{
    const int64_t ld = a->ld;
    for (int64_t i = 0; i < ld; i += 16) {
        __m512 w[8], win[8];
        const __m512 bias = _mm512_loadu_ps(a->bias + i);
        for (int j = 0; j < W; j++)
            w[j] = _mm512_loadu_ps(a->w + j * ld + i);
        for (int j = 0; j < W - 1; j++)
            win[j] = _mm512_loadu_ps(a->in + j * ld + i);
        const float *in = a->in + (int64_t)(W - 1) * ld + i;
        float *out = a->out + i;
        for (int t = 0; t < a->n_tokens; t++) {
            win[W - 1] = _mm512_loadu_ps(in + t * ld);
            __m512 z = bias;
            for (int j = 0; j < W; j++)
                z = _mm512_fmadd_ps(w[j], win[j], z);
            _mm512_storeu_ps(out + t * ld, a->silu ? silu_ps(z) : z);
            for (int j = 0; j < W - 1; j++)
                win[j] = win[j + 1];
        }
    }
}

void gdn_conv1d_f32__avx512(const gdn_conv1d_args *a)
{
    switch (a->width) {
    case 2: columns(a, 2); break;
    case 3: columns(a, 3); break;
    case 4: columns(a, 4); break;
    case 5: columns(a, 5); break;
    case 6: columns(a, 6); break;
    case 7: columns(a, 7); break;
    default: columns(a, 8); break;
    }
}

/* Rows of a bf16 vector: round to nearest even, NaN kept quiet (as core/dtype.h). */
static inline __m256i bf16_round(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

static inline __attribute__((always_inline)) __m512 load_x(const char *p, const int bf16, const int masked,
                                                           __mmask16 m)
{
    if (bf16) {
        const __m256i h = masked ? _mm512_castsi512_si256(_mm512_maskz_loadu_epi16((__mmask32)m, p))
                                 : _mm256_loadu_si256((const __m256i *)(const void *)p);
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    return masked ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p);
}

/* The fused kernel's functions may use AVX512_BF16 (vcvtneps2bf16), but only where the caller says the
 * CPU has it (hw); VL and DQ come with every CPU of the AVX-512 ISA (cpu/cpuid.c). */
#define FUSED_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,prfchw")))

/* bf16 rows: vcvtneps2bf16 rounds to nearest even and keeps NaNs quiet as core/dtype.h does, but flushes
 * f32 denormals to zero: a vector with one takes the integer rounding. */
static inline FUSED_TARGET __attribute__((always_inline)) __m256i bf16_round_hw(__m512 v)
{
    if (__builtin_expect(_mm512_fpclass_ps_mask(v, 0x20) != 0, 0))
        return bf16_round(v);
    return (__m256i)_mm512_cvtneps_pbh(v);
}

static inline FUSED_TARGET __attribute__((always_inline)) void store_y(char *p, __m512 v, const int bf16,
                                                                       const int hw, const int masked, __mmask16 m)
{
    if (bf16) {
        const __m256i h = hw ? bf16_round_hw(v) : bf16_round(v);
        if (masked)
            _mm512_mask_storeu_epi16(p, (__mmask32)m, _mm512_castsi256_si512(h));
        else
            _mm256_storeu_si256((__m256i *)(void *)p, h);
    } else if (masked) {
        _mm512_mask_storeu_ps(p, m, v);
    } else {
        _mm512_storeu_ps(p, v);
    }
}

/* NC columns of 16 channels from channel i: the windows in registers (weights and bias read from L1 as
 * memory operands, leaving registers for NC independent chains), tokens in order. */
static inline FUSED_TARGET __attribute__((always_inline)) void
fused_cols(const gdn_conv1d_rows_args *a, int64_t i, const int W, const int NC, const int bf16, const int hw,
           const int silu, const int masked, __mmask16 m)
{
    const int K = W - 1;
    const int64_t ld = a->ld, es = bf16 ? 2 : 4;
    __m512 win[4][8];
    const float *wp = a->w + i, *bp = a->bias + i;
    for (int c = 0; c < NC; c++)
        for (int j = 0; j < K; j++)
            win[c][j] = _mm512_loadu_ps(a->win + j * ld + i + 16 * c);
    const char *xp = (const char *)a->x + i * es;
    char *yp = (char *)a->y + i * es;
    const int64_t xs = a->x_ld * es, ys = a->y_ld * es;
    const int64_t pfx = a->prefetch * xs, pfy = a->prefetch * ys;
    for (int t = 0; t < a->n_tokens; t++) {
        if (pfx) /* the same columns of the next block of tokens: lines of other pages, in L2 by then */
            for (int c = 0; c < NC; c += 64 / (16 * (int)es)) {
                _mm_prefetch(xp + pfx + 16 * es * c, _MM_HINT_T1);
                _mm_prefetch(yp + pfy + 16 * es * c, _MM_HINT_ET1);
            }
        for (int c = 0; c < NC; c++)
            win[c][K] = load_x(xp + 16 * es * c, bf16, masked, m);
        __m512 z[4];
        for (int c = 0; c < NC; c++) {
            z[c] = _mm512_loadu_ps(bp + 16 * c);
            for (int j = 0; j < W; j++)
                z[c] = _mm512_fmadd_ps(_mm512_loadu_ps(wp + j * ld + 16 * c), win[c][j], z[c]);
        }
        for (int c = 0; c < NC; c++)
            store_y(yp + 16 * es * c, silu ? silu_ps(z[c]) : z[c], bf16, hw, masked, m);
        for (int c = 0; c < NC; c++)
            for (int j = 0; j < K; j++)
                win[c][j] = win[c][j + 1];
        xp += xs;
        yp += ys;
    }
    for (int c = 0; c < NC; c++)
        for (int j = 0; j < K; j++)
            _mm512_storeu_ps(a->win + j * ld + i + 16 * c, win[c][j]);
}

static inline FUSED_TARGET __attribute__((always_inline)) void fused(const gdn_conv1d_rows_args *a, const int W,
                                                                     const int bf16, const int hw, const int silu)
{
    const int64_t cb = a->cb;
    int64_t i = 0;
    if (W <= 5)
        for (; i + 64 <= cb; i += 64)
            fused_cols(a, i, W, 4, bf16, hw, silu, 0, 0xffff);
    for (; i + 32 <= cb; i += 32)
        fused_cols(a, i, W, 2, bf16, hw, silu, 0, 0xffff);
    for (; i + 16 <= cb; i += 16)
        fused_cols(a, i, W, 1, bf16, hw, silu, 0, 0xffff);
    if (i < cb)
        fused_cols(a, i, W, 1, bf16, hw, silu, 1, (__mmask16)((1u << (cb - i)) - 1u));
}

#define FUSED_W(W)                                  \
    do {                                            \
        if (a->bf16 && a->bf16_hw) {                \
            if (a->silu)                            \
                fused(a, W, 1, 1, 1);               \
            else                                    \
                fused(a, W, 1, 1, 0);               \
        } else if (a->bf16) {                       \
            if (a->silu)                            \
                fused(a, W, 1, 0, 1);               \
            else                                    \
                fused(a, W, 1, 0, 0);               \
        } else {                                    \
            if (a->silu)                            \
                fused(a, W, 0, 0, 1);               \
            else                                    \
                fused(a, W, 0, 0, 0);               \
        }                                           \
    } while (0)

FUSED_TARGET void gdn_conv1d_rows__avx512(const gdn_conv1d_rows_args *a)
{
    switch (a->width) {
    case 2: FUSED_W(2); break;
    case 3: FUSED_W(3); break;
    case 4: FUSED_W(4); break;
    case 5: FUSED_W(5); break;
    case 6: FUSED_W(6); break;
    case 7: FUSED_W(7); break;
    default: FUSED_W(8); break;
    }
}

/* [cb][n] contiguous (n = 1..8) <-> rows [n][ld], 16 channels at a time with masked lane permutes (exact
 * copies; the index vectors and masks are made with a few vector instructions per call); the channels
 * past the last multiple of 16 by scalar code. */
static inline __attribute__((always_inline)) void state_in(const float *src, int cb, const int K, float *rows,
                                                           int64_t ld)
{
    /* lane c of row j is element p = c*K + j of the 16 channels: lane p & 15 of source vector p >> 4 */
    __m512i idx[8];
    __mmask16 msk[8][8];
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i base = _mm512_mullo_epi32(lane, _mm512_set1_epi32(K));
    for (int j = 0; j < K; j++) {
        const __m512i p = _mm512_add_epi32(base, _mm512_set1_epi32(j));
        idx[j] = _mm512_and_si512(p, _mm512_set1_epi32(15));
        const __m512i o = _mm512_srli_epi32(p, 4);
        for (int v = 0; v < K; v++)
            msk[j][v] = _mm512_cmpeq_epi32_mask(o, _mm512_set1_epi32(v));
    }
    int i = 0;
    for (; i + 16 <= cb; i += 16) {
        __m512 s[8];
        for (int v = 0; v < K; v++)
            s[v] = _mm512_loadu_ps(src + (int64_t)i * K + 16 * v);
        for (int j = 0; j < K; j++) {
            __m512 r = _mm512_setzero_ps();
            for (int v = 0; v < K; v++)
                if (msk[j][v])
                    r = _mm512_mask_permutexvar_ps(r, msk[j][v], idx[j], s[v]);
            _mm512_storeu_ps(rows + j * ld + i, r);
        }
    }
    for (; i < cb; i++)
        for (int j = 0; j < K; j++)
            rows[j * ld + i] = src[(int64_t)i * K + j];
}

static inline __attribute__((always_inline)) void state_out(const float *rows, int64_t ld, int cb, const int K,
                                                            float *dst)
{
    /* output lane q of vector v is element p = 16*v + q: channel p/K of row p%K (p < 128: p/K exactly as
       (p * (65536/K + 1)) >> 16) */
    __m512i idx[8];
    __mmask16 msk[8][8];
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int v = 0; v < K; v++) {
        const __m512i p = _mm512_add_epi32(lane, _mm512_set1_epi32(16 * v));
        const __m512i ch = _mm512_srli_epi32(_mm512_mullo_epi32(p, _mm512_set1_epi32(65536 / K + 1)), 16);
        const __m512i rem = _mm512_sub_epi32(p, _mm512_mullo_epi32(ch, _mm512_set1_epi32(K)));
        idx[v] = ch;
        for (int j = 0; j < K; j++)
            msk[v][j] = _mm512_cmpeq_epi32_mask(rem, _mm512_set1_epi32(j));
    }
    int i = 0;
    for (; i + 16 <= cb; i += 16) {
        __m512 r[8];
        for (int j = 0; j < K; j++)
            r[j] = _mm512_loadu_ps(rows + j * ld + i);
        for (int v = 0; v < K; v++) {
            __m512 o = _mm512_setzero_ps();
            for (int j = 0; j < K; j++)
                if (msk[v][j])
                    o = _mm512_mask_permutexvar_ps(o, msk[v][j], idx[v], r[j]);
            _mm512_storeu_ps(dst + (int64_t)i * K + 16 * v, o);
        }
    }
    for (; i < cb; i++)
        for (int j = 0; j < K; j++)
            dst[(int64_t)i * K + j] = rows[j * ld + i];
}

/* the transposes with the length a constant: unrolled, the masks in registers */
void gdn_conv1d_state_in__avx512(const float *src, int cb, int K, float *rows, int64_t ld)
{
    switch (K) {
    case 1: state_in(src, cb, 1, rows, ld); break;
    case 2: state_in(src, cb, 2, rows, ld); break;
    case 3: state_in(src, cb, 3, rows, ld); break;
    case 4: state_in(src, cb, 4, rows, ld); break;
    case 5: state_in(src, cb, 5, rows, ld); break;
    case 6: state_in(src, cb, 6, rows, ld); break;
    case 7: state_in(src, cb, 7, rows, ld); break;
    default: state_in(src, cb, 8, rows, ld); break;
    }
}

void gdn_conv1d_state_out__avx512(const float *rows, int64_t ld, int cb, int K, float *dst)
{
    switch (K) {
    case 1: state_out(rows, ld, cb, 1, dst); break;
    case 2: state_out(rows, ld, cb, 2, dst); break;
    case 3: state_out(rows, ld, cb, 3, dst); break;
    case 4: state_out(rows, ld, cb, 4, dst); break;
    case 5: state_out(rows, ld, cb, 5, dst); break;
    case 6: state_out(rows, ld, cb, 6, dst); break;
    case 7: state_out(rows, ld, cb, 7, dst); break;
    default: state_out(rows, ld, cb, 8, dst); break;
    }
}

/* bf16 rows <-> f32, as core/dtype.h does it (round to nearest even, NaN kept quiet). */
void gdn_conv1d_bf16_in__avx512(const uint16_t *src, int n, float *dst)
{
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_si512(dst + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(src + i))), 16));
    for (; i < n; i++)
        dst[i] = gdn_bits_to_f32((uint32_t)src[i] << 16);
}

void gdn_conv1d_bf16_out__avx512(const float *src, int n, uint16_t *dst)
{
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), bf16_round(_mm512_loadu_ps(src + i)));
    for (; i < n; i++) {
        uint32_t u = gdn_f32_to_bits(src[i]);
        if ((u & 0x7fffffffu) > 0x7f800000u)
            dst[i] = (uint16_t)((u >> 16) | 0x0040u);
        else
            dst[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
}
