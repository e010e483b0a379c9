/*
 * prep.c — rows of a view to and from f32 for the CPU drivers (see prep.h).
 */
#include <string.h>

#include "cpu/prep.h"

void gdn_cpu_load_row(const gdn_context *ctx, const gdn_view *v, gdn_dtype t, int64_t base, int64_t stride, int n,
                      float *dst)
{
    if (stride == 1) {
        switch (t) {
        case GDN_DTYPE_F32:
            memcpy(dst, (const float *)v->data + base, (size_t)n * sizeof(float));
            return;
        case GDN_DTYPE_BF16: {
            const uint16_t *src = (const uint16_t *)v->data + base;
            for (int i = 0; i < n; i++)
                dst[i] = gdn_bf16_to_f32(src[i]);
            return;
        }
        case GDN_DTYPE_F16:
            ctx->f16_to_f32((const uint16_t *)v->data + base, n, dst);
            return;
        }
    }
    for (int i = 0; i < n; i++)
        dst[i] = gdn_load_f32(v->data, t, base + (int64_t)i * stride);
}

void gdn_cpu_store_row(const gdn_context *ctx, const gdn_view *v, gdn_dtype t, int64_t base, int64_t stride, int n,
                       const float *src)
{
    if (stride == 1) {
        switch (t) {
        case GDN_DTYPE_F32:
            memcpy((float *)v->data + base, src, (size_t)n * sizeof(float));
            return;
        case GDN_DTYPE_BF16: {
            uint16_t *dst = (uint16_t *)v->data + base;
            for (int i = 0; i < n; i++)
                dst[i] = gdn_f32_to_bf16(src[i]);
            return;
        }
        case GDN_DTYPE_F16:
            ctx->f32_to_f16(src, n, (uint16_t *)v->data + base);
            return;
        }
    }
    for (int i = 0; i < n; i++)
        gdn_store_f32(v->data, t, base + (int64_t)i * stride, src[i]);
}
