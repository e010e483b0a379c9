/*
 * transpose_avx2.h — the 8x8 in-register f32 transpose shared by the AVX2 kernels.
 * Include only from files compiled with -mavx2; defines a static always-inline function.
 */
#ifndef GDN_CPU_KERNELS_TRANSPOSE_AVX2_H
#define GDN_CPU_KERNELS_TRANSPOSE_AVX2_H

#include <immintrin.h>

/* In-register 8x8 transpose: m[i] holds row i on entry, column i on exit. */
static inline __attribute__((always_inline)) void transpose8(__m256 m[8])
{
    __m256 t[8], u[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(m[i], m[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(m[i], m[i + 1]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 8
    for (int i = 0; i < 4; i++) {
        m[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        m[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}

#endif
