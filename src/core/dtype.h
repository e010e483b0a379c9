/*
 * dtype.h — element types: sizes and exact conversions between f32 and bf16 / f16.
 * Loads are exact (every bf16 and f16 value is a float). Stores round to nearest, ties to even;
 * NaN stays NaN, overflow goes to infinity. Shared by the library, the reference and the tools.
 */
#ifndef GDN_CORE_DTYPE_H
#define GDN_CORE_DTYPE_H

#include <stdint.h>
#include <string.h>
#include "gdn/gdn.h"

static inline size_t gdn_dtype_size(gdn_dtype t)
{
    return t == GDN_DTYPE_F32 ? 4 : 2;
}

static inline const char *gdn_dtype_name(gdn_dtype t)
{
    switch (t) {
    case GDN_DTYPE_F32: return "f32";
    case GDN_DTYPE_BF16: return "bf16";
    case GDN_DTYPE_F16: return "f16";
    }
    return "unknown";
}

static inline float gdn_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t gdn_f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float gdn_bf16_to_f32(uint16_t h)
{
    return gdn_bits_to_f32((uint32_t)h << 16);
}

static inline uint16_t gdn_f32_to_bf16(float f)
{
    uint32_t u = gdn_f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet and NaN */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float gdn_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1fu) /* inf, or NaN made quiet (as F16C does) */
        return gdn_bits_to_f32(sign | 0x7f800000u | (man ? 0x400000u : 0u) | (man << 13));
    if (exp != 0)
        return gdn_bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0)
        return gdn_bits_to_f32(sign);
    /* subnormal: value = man * 2^-24 */
    const float v = (float)man * 5.9604644775390625e-8f;
    return sign ? -v : v;
}

static inline uint16_t gdn_f32_to_f16(float f)
{
    uint32_t u = gdn_f32_to_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    u &= 0x7fffffffu;
    if (u > 0x7f800000u) /* NaN: quiet, payload truncated (as F16C does) */
        return (uint16_t)(sign | 0x7e00u | ((u >> 13) & 0x3ffu));
    if (u >= 0x477ff000u)                 /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (u < 0x38800000u) { /* below the smallest normal 2^-14: subnormal or zero */
        /* value / 2^-24, rounded to nearest even: add and subtract 0.5 (magic number) */
        const double x = (double)gdn_bits_to_f32(u) * 16777216.0; /* exact, < 1024 */
        double fl = (double)(int64_t)x;
        double rem = x - fl;
        int64_t m = (int64_t)fl;
        if (rem > 0.5 || (rem == 0.5 && (m & 1)))
            m++;
        return (uint16_t)(sign | (uint16_t)m);
    }
    /* normal: rebias exponent and round the 13 dropped bits to nearest even */
    u += 0xc8000fffu + ((u >> 13) & 1u); /* -(112 << 23) + rounding */
    return (uint16_t)(sign | (uint16_t)(u >> 13));
}

/* Load element i (already an element offset) of a buffer of type t as f32. */
static inline float gdn_load_f32(const void *base, gdn_dtype t, int64_t i)
{
    switch (t) {
    case GDN_DTYPE_F32: return ((const float *)base)[i];
    case GDN_DTYPE_BF16: return gdn_bf16_to_f32(((const uint16_t *)base)[i]);
    case GDN_DTYPE_F16: return gdn_f16_to_f32(((const uint16_t *)base)[i]);
    }
    return 0.0f;
}

/* Store f32 x as element i of a buffer of type t (rounding to nearest even). */
static inline void gdn_store_f32(void *base, gdn_dtype t, int64_t i, float x)
{
    switch (t) {
    case GDN_DTYPE_F32: ((float *)base)[i] = x; break;
    case GDN_DTYPE_BF16: ((uint16_t *)base)[i] = gdn_f32_to_bf16(x); break;
    case GDN_DTYPE_F16: ((uint16_t *)base)[i] = gdn_f32_to_f16(x); break;
    }
}

#endif
