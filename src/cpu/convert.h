/*
 * convert.h — row conversions between the activation dtypes and f32 used by the CPU driver
 * (contiguous rows; exact loads, round-to-nearest-even stores, identical results on every path).
 */
#ifndef GDN_CPU_CONVERT_H
#define GDN_CPU_CONVERT_H

#include <stdint.h>

typedef void (*gdn_f16_to_f32_fn)(const uint16_t *src, int64_t n, float *dst);
typedef void (*gdn_f32_to_f16_fn)(const float *src, int64_t n, uint16_t *dst);

void gdn_f16_to_f32__scalar(const uint16_t *src, int64_t n, float *dst);
void gdn_f32_to_f16__scalar(const float *src, int64_t n, uint16_t *dst);
void gdn_f16_to_f32__f16c(const uint16_t *src, int64_t n, float *dst);
void gdn_f32_to_f16__f16c(const float *src, int64_t n, uint16_t *dst);

#endif
