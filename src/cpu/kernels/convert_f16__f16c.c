/*
 * convert_f16__f16c.c — contiguous rows of IEEE binary16 <-> f32 with the F16C instructions.
 *
 * f16 -> f32 is exact; f32 -> f16 rounds to nearest even (imm8 = _MM_FROUND_TO_NEAREST_INT),
 * overflow to infinity, NaN stays NaN: the same results as the portable conversions in
 * core/dtype.h, bit for bit. Any n >= 0, no alignment. Compiled with -mavx -mf16c only.
 */
#include <immintrin.h>
#include <stdint.h>

#include "core/dtype.h"
#include "cpu/convert.h"

void gdn_f16_to_f32__f16c(const uint16_t *src, int64_t n, float *dst)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + i))));
    for (; i < n; i++)
        dst[i] = gdn_f16_to_f32(src[i]);
}

void gdn_f32_to_f16__f16c(const float *src, int64_t n, uint16_t *dst)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++)
        dst[i] = gdn_f32_to_f16(src[i]);
}
