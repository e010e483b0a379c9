/*
 * convert.c — portable row conversions f16 <-> f32 (see convert.h); the F16C versions are in
 * kernels/convert_f16__f16c.c.
 */
#include "core/dtype.h"
#include "cpu/convert.h"

void gdn_f16_to_f32__scalar(const uint16_t *src, int64_t n, float *dst)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = gdn_f16_to_f32(src[i]);
}

void gdn_f32_to_f16__scalar(const float *src, int64_t n, uint16_t *dst)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = gdn_f32_to_f16(src[i]);
}
