/*
 * recurrent.h — contract of the CPU token-loop kernels ("recurrent_f32__<isa>").
 *
 * A kernel advances one tile of `rows` consecutive state rows (a slice of Dv) of one value head of
 * one sequence through a block of n_tokens tokens. Rows are independent (row separability), so the
 * driver may tile Dv freely; every row's arithmetic must not depend on the tile it is in, on `rows`,
 * or on the thread, so that results are identical for any tiling and thread count.
 *
 * Per token t and row r, with s the row S[r][0..dk) (one pass over the row, ALGORITHM.md §5):
 *     sk    = s . k[t]                      sq = s . q[t]           (from the OLD row)
 *     delta = beta[t] * (v[t][r] - decay[t] * sk)
 *     y[t][r] = decay[t] * sq + delta * kq[t]
 *     s     = decay[t] * s + delta * k[t]
 *     capture[t] (if non-NULL): row r of it <- s (the state after token t)
 * q is already L2-normalised (when asked) and multiplied by the output scale; kq[t] = k[t] . q[t].
 *
 * Memory: all pointers are f32. q, k: [n_tokens][dk] contiguous. kq, decay, beta: [n_tokens].
 * v, y: [n_tokens][rows] contiguous (y may be NULL: no output). s_in, s_out: rows at a stride of
 * s_stride elements (>= dk), unit stride along dk; s_out may equal s_in (in place) but must not
 * otherwise overlap it. capture: NULL or [n_tokens] pointers, each NULL (skip) or rows at a stride of
 * cap_stride. A capture destination may be s_in itself (the kernel reads row r of s_in before it
 * writes row r anywhere). SIMD kernels need dk % 16 == 0 (the driver sends other sizes to scalar).
 * No alignment is assumed. 1 <= dk <= 256, rows >= 1, n_tokens >= 1.

 */
#ifndef GDN_CPU_RECURRENT_H
#define GDN_CPU_RECURRENT_H

#include <stdint.h>

typedef struct gdn_recurrent_args {
    int n_tokens;
    int dk;
    int rows;
    const float *q;
    const float *k;
    const float *kq;
    const float *decay;
    const float *beta;
    const float *v;
    float *y;
    const float *s_in;
    float *s_out;
    int64_t s_stride;
    float *const *capture;
    int64_t cap_stride;
} gdn_recurrent_args;

typedef void (*gdn_recurrent_fn)(const gdn_recurrent_args *a);

void gdn_recurrent_f32__scalar(const gdn_recurrent_args *a);
void gdn_recurrent_f32__avx2(const gdn_recurrent_args *a);
void gdn_recurrent_f32__avx512(const gdn_recurrent_args *a);

#endif
