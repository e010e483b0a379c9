/*
 * transpose_avx512.h — the 16x16 in-register f32 transpose shared by the AVX-512 kernels.
 * Include only from files compiled with -mavx512f; defines a static always-inline function.
 */
#ifndef GDN_CPU_KERNELS_TRANSPOSE_AVX512_H
#define GDN_CPU_KERNELS_TRANSPOSE_AVX512_H

#include <immintrin.h>

/* In-register 16x16 transpose: m[i] holds row i on entry, column i on exit. */
static inline __attribute__((always_inline)) void transpose16(__m512 m[16])
{
    __m512 t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(m[i], m[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(m[i], m[i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i += 4) {
        m[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        m[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        m[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        m[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(m[i], m[i + 4], _MM_SHUFFLE(2, 0, 2, 0));
        t[i + 4] = _mm512_shuffle_f32x4(m[i], m[i + 4], _MM_SHUFFLE(3, 1, 3, 1));
        t[i + 8] = _mm512_shuffle_f32x4(m[i + 8], m[i + 12], _MM_SHUFFLE(2, 0, 2, 0));
        t[i + 12] = _mm512_shuffle_f32x4(m[i + 8], m[i + 12], _MM_SHUFFLE(3, 1, 3, 1));
    }
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        m[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], _MM_SHUFFLE(2, 0, 2, 0));
        m[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], _MM_SHUFFLE(3, 1, 3, 1));
    }
}

#endif
