/*
 * prep.h — helpers shared by the CPU drivers (the token loop in driver.c and the chunked
 * algorithm in chunked.c): rows of a view to and from f32, the gate conventions, the dot product
 * used for the L2 norms, and the address of a state head in the pool. Both drivers prepare their
 * inputs with these same functions, so q, k, v, decay and beta are bitwise the same f32 values
 * whichever algorithm runs.
 */
#ifndef GDN_CPU_PREP_H
#define GDN_CPU_PREP_H

#include <math.h>
#include <stdint.h>

#include "core/context.h"
#include "core/dtype.h"

/* n elements of a view (element offset base, element stride) as f32. */
void gdn_cpu_load_row(const gdn_context *ctx, const gdn_view *v, gdn_dtype t, int64_t base, int64_t stride, int n,
                      float *dst);

/* Store n f32 values as elements of a view (rounding to its dtype). */
void gdn_cpu_store_row(const gdn_context *ctx, const gdn_view *v, gdn_dtype t, int64_t base, int64_t stride, int n,
                       const float *src);

/* sum a[i] b[i] with 8 independent partial sums (for ILP; vectorises without reassociation). */
static inline float gdn_cpu_dot8(const float *a, const float *b, int n)
{
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++)
            acc[j] += a[i + j] * b[i + j];
    for (; i < n; i++)
        acc[i & 7] += a[i] * b[i];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* q and k of token t of batch row b, key head hk, as f32: L2-normalised when the plan asks, q
 * multiplied by the output scale. q NULL: k only. */
static inline void gdn_cpu_load_qk(const gdn_context *ctx, const gdn_plan *p, int64_t b, int64_t t, int hk, float *q,
                                   float *k)
{
    const int dk = p->Dk;
    if (q)
        gdn_cpu_load_row(ctx, &p->q, p->dtype, b * p->q.st[0] + t * p->q.st[1] + hk * p->q.st[2], p->q.st[3], dk, q);
    gdn_cpu_load_row(ctx, &p->k, p->dtype, b * p->k.st[0] + t * p->k.st[1] + hk * p->k.st[2], p->k.st[3], dk, k);
    float qs = p->scale, ks = 1.0f;
    if (p->l2norm) {
        if (q)
            qs *= 1.0f / sqrtf(gdn_cpu_dot8(q, q, dk) + 1e-6f);
        ks = 1.0f / sqrtf(gdn_cpu_dot8(k, k, dk) + 1e-6f);
    }
    if (q)
        for (int i = 0; i < dk; i++) {
            q[i] *= qs;
            k[i] *= ks;
        }
    else
        for (int i = 0; i < dk; i++)
            k[i] *= ks;
}

static inline float gdn_cpu_softplus(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

/* decay and beta of value head h from the stored g and beta (b) of one token, per convention. */
static inline void gdn_cpu_gate(const gdn_plan *p, int h, float g, float b, float *decay, float *beta)
{
    switch (p->gate) {
    case GDN_GATE_LOG: *decay = expf(g); *beta = b; break;
    case GDN_GATE_LINEAR: *decay = g; *beta = b; break;
    case GDN_GATE_NEGLOG: *decay = expf(-g); *beta = b; break;
    case GDN_GATE_RAW:
        *decay = expf(-expf(p->A_log[h]) * gdn_cpu_softplus(g + p->dt_bias[h]));
        *beta = 1.0f / (1.0f + expf(-b));
        break;
    }
}

/* The gate of token t of batch row b, value head h. */
static inline void gdn_cpu_token_gate(const gdn_plan *p, int64_t b, int64_t t, int h, float *decay, float *beta)
{
    const float g = gdn_load_f32(p->g.data, p->gate_dtype, b * p->g.st[0] + t * p->g.st[1] + h * p->g.st[2]);
    const float be =
        gdn_load_f32(p->beta.data, p->gate_dtype, b * p->beta.st[0] + t * p->beta.st[1] + h * p->beta.st[2]);
    gdn_cpu_gate(p, h, g, be, decay, beta);
}

/* Head h of pool slot `slot` (rows and columns then at p->pool.st[2], st[3]). */
static inline float *gdn_cpu_pool_head(const gdn_plan *p, int64_t slot, int h)
{
    return (float *)p->pool.data + slot * p->pool.st[0] + (int64_t)h * p->pool.st[1];
}

#endif
