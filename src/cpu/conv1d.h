/*
 * conv1d.h — the CPU causal convolution (gdn_conv1d_forward) and the contract of its kernels
 * ("conv1d_f32__<isa>").
 *
 * A kernel computes n_tokens output rows of one block of channels from f32 rows laid out at a row
 * stride of ld floats (ld a multiple of 16; lanes past the block's channels are padding, computed and
 * ignored):
 *     out[t][i] = act(bias[i] + sum_{j=0..width-1} w[j][i] * in[t + j][i])     t < n_tokens, i < ld
 * summed in the order bias, j = 0, 1, ..., width-1 (FMA on the SIMD kernels), act = silu (z / (1 + exp(-z)))
 * or none. in has width-1+n_tokens rows (the width-1 inputs before the first token, then one row per
 * token), w has width rows, bias is one row (zeros for none), out n_tokens rows. Every lane's arithmetic
 * is the same instruction sequence whatever the block, its width or the thread: results do not depend on
 * the channel blocking or the thread count.
 */
#ifndef GDN_CPU_CONV1D_H
#define GDN_CPU_CONV1D_H

#include <stdint.h>

#include "core/context.h"
#include "core/conv_plan.h"

typedef struct gdn_conv1d_args {
    int n_tokens; /* >= 1 */
    int width;    /* 2..8 */
    int64_t ld;   /* row stride of in, w, bias and out, a multiple of 16 */
    int silu;
    const float *in;
    const float *w;
    const float *bias;
    float *out;
} gdn_conv1d_args;

typedef void (*gdn_conv1d_fn)(const gdn_conv1d_args *a);

void gdn_conv1d_f32__scalar(const gdn_conv1d_args *a);
void gdn_conv1d_f32__avx2(const gdn_conv1d_args *a);
void gdn_conv1d_f32__avx512(const gdn_conv1d_args *a);

/* The fused AVX-512 kernel: cb channels (any count; the last column masked) of n_tokens tokens read
 * straight from x rows (f32 or bf16, channel stride 1) and written straight to y rows (NULL: not
 * called), the same arithmetic per lane as the kernels above. win holds K = width-1 rows [K][ld]: on
 * entry the K inputs before the first token, on return the last K inputs (the carry to the next block
 * of tokens, or the conv state). w is [width][ld], bias one row. Each lane's inputs are read before its
 * output is written (y may be x). */
typedef struct gdn_conv1d_rows_args {
    int n_tokens;
    int width;
    int silu;
    int bf16;
    int bf16_hw; /* the CPU has AVX512_BF16: vcvtneps2bf16 (same results) */
    int prefetch; /* > 0: prefetch the rows this many tokens ahead (the next block of tokens) */
    int cb;
    const void *x; /* at the first token's first channel */
    int64_t x_ld;  /* elements between tokens */
    void *y;
    int64_t y_ld;
    float *win;
    int64_t ld;
    const float *w;
    const float *bias;
} gdn_conv1d_rows_args;

void gdn_conv1d_rows__avx512(const gdn_conv1d_rows_args *a);

/* AVX-512 helpers: [cb][K] contiguous (K <= 8: conv states, and weights with K = W) <-> rows [K][ld]; bf16 rows <-> f32 (as
 * core/dtype.h converts). Exact, the same values as the portable loops. */
void gdn_conv1d_state_in__avx512(const float *src, int cb, int K, float *rows, int64_t ld);
void gdn_conv1d_state_out__avx512(const float *rows, int64_t ld, int cb, int K, float *dst);
void gdn_conv1d_bf16_in__avx512(const uint16_t *src, int n, float *dst);
void gdn_conv1d_bf16_out__avx512(const float *src, int n, uint16_t *dst);

/* The kernel of the context's ISA and its name. */
gdn_conv1d_fn gdn_cpu_conv1d_kernel(const gdn_context *ctx, const char **name);

/* Run a validated plan on the context's threads. Never fails. */
void gdn_cpu_conv1d_forward(gdn_context *ctx, const gdn_conv_plan *plan);

#endif
