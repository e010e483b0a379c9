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

static inline __m512 exp_ps(__m512 x)
{
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(y, _mm512_castsi512_ps(e));
}

static inline __m512 silu_ps(__m512 z)
{
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), z));
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

/* Conv state [cb][K] contiguous (K = 1..7) <-> rows [K][ld], 16 channels at a time with masked lane
 * permutes (exact copies); the channels past the last multiple of 16 by scalar code. */
void gdn_conv1d_state_in__avx512(const float *src, int cb, int K, float *rows, int64_t ld)
{
    /* lane c of row j is element c*K + j of the 16 channels: in source vector (c*K+j)/16 */
    __m512i idx[7][7];
    __mmask16 msk[7][7];
    for (int j = 0; j < K; j++)
        for (int o = 0; o < K; o++) {
            int id[16];
            __mmask16 m = 0;
            for (int c = 0; c < 16; c++) {
                const int p = c * K + j;
                id[c] = p & 15;
                if (p >> 4 == o)
                    m |= (__mmask16)(1u << c);
            }
            idx[j][o] = _mm512_loadu_si512(id);
            msk[j][o] = m;
        }
    int i = 0;
    for (; i + 16 <= cb; i += 16) {
        __m512 s[7];
        for (int o = 0; o < K; o++)
            s[o] = _mm512_loadu_ps(src + (int64_t)i * K + 16 * o);
        for (int j = 0; j < K; j++) {
            __m512 r = _mm512_setzero_ps();
            for (int o = 0; o < K; o++)
                if (msk[j][o])
                    r = _mm512_mask_permutexvar_ps(r, msk[j][o], idx[j][o], s[o]);
            _mm512_storeu_ps(rows + j * ld + i, r);
        }
    }
    for (; i < cb; i++)
        for (int j = 0; j < K; j++)
            rows[j * ld + i] = src[(int64_t)i * K + j];
}

void gdn_conv1d_state_out__avx512(const float *rows, int64_t ld, int cb, int K, float *dst)
{
    /* output lane q of vector o is element p = 16*o + q: channel p/K of row p%K */
    __m512i idx[7];
    __mmask16 msk[7][7];
    for (int o = 0; o < K; o++) {
        int id[16];
        for (int j = 0; j < K; j++)
            msk[o][j] = 0;
        for (int q = 0; q < 16; q++) {
            const int p = 16 * o + q;
            id[q] = p / K;
            msk[o][p % K] |= (__mmask16)(1u << q);
        }
        idx[o] = _mm512_loadu_si512(id);
    }
    int i = 0;
    for (; i + 16 <= cb; i += 16) {
        __m512 r[7];
        for (int j = 0; j < K; j++)
            r[j] = _mm512_loadu_ps(rows + j * ld + i);
        for (int o = 0; o < K; o++) {
            __m512 v = _mm512_setzero_ps();
            for (int j = 0; j < K; j++)
                if (msk[o][j])
                    v = _mm512_mask_permutexvar_ps(v, msk[o][j], idx[o], r[j]);
            _mm512_storeu_ps(dst + (int64_t)i * K + 16 * o, v);
        }
    }
    for (; i < cb; i++)
        for (int j = 0; j < K; j++)
            dst[(int64_t)i * K + j] = rows[j * ld + i];
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
    for (; i + 16 <= n; i += 16) {
        const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(src + i));
        const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                      _mm512_set1_epi32(0x7f800000));
        const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
        __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
        r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm512_cvtepi32_epi16(r));
    }
    for (; i < n; i++) {
        uint32_t u = gdn_f32_to_bits(src[i]);
        if ((u & 0x7fffffffu) > 0x7f800000u)
            dst[i] = (uint16_t)((u >> 16) | 0x0040u);
        else
            dst[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
}
