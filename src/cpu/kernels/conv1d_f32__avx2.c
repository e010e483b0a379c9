/*
 * conv1d_f32__avx2.c — the causal convolution kernel (contract in cpu/conv1d.h), 8 channels per
 * vector. Per column of 8 channels the W weight vectors and a window of the last W inputs stay in
 * registers; each token loads one input vector, does W FMAs (bias first, then taps 0..W-1) and the
 * activation. silu(z) = z / (1 + exp(-z)) with the same exp as the AVX-512 kernel (Cephes polynomial, argument
 * clamped to [-87, 88]), so the two kernels agree bit for bit. Compiled with -mavx2 -mfma only here.
 */
#include <immintrin.h>

#include "cpu/conv1d.h"

static inline __m256 exp_ps(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

static inline __m256 silu_ps(__m256 z)
{
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), z));
    return _mm256_div_ps(z, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

static inline __attribute__((always_inline)) void columns(const gdn_conv1d_args *a, const int W)
{
    const int64_t ld = a->ld;
    for (int64_t i = 0; i < ld; i += 8) {
        __m256 w[8], win[8];
        const __m256 bias = _mm256_loadu_ps(a->bias + i);
        for (int j = 0; j < W; j++)
            w[j] = _mm256_loadu_ps(a->w + j * ld + i);
        for (int j = 0; j < W - 1; j++)
            win[j] = _mm256_loadu_ps(a->in + j * ld + i);
        const float *in = a->in + (int64_t)(W - 1) * ld + i;
        float *out = a->out + i;
        for (int t = 0; t < a->n_tokens; t++) {
            win[W - 1] = _mm256_loadu_ps(in + t * ld);
            __m256 z = bias;
            for (int j = 0; j < W; j++)
                z = _mm256_fmadd_ps(w[j], win[j], z);
            _mm256_storeu_ps(out + t * ld, a->silu ? silu_ps(z) : z);
            for (int j = 0; j < W - 1; j++)
                win[j] = win[j + 1];
        }
    }
}

void gdn_conv1d_f32__avx2(const gdn_conv1d_args *a)
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
