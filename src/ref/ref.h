/*
 * ref.h — THE reference: a float64 token loop implementing exactly the math in gdn.h, with every
 * convention, and nothing clever. Every other path (each CPU ISA, each CUDA kernel, each algorithm)
 * is tested against it. Internal to the project (tests and the gdn tool link it).
 *
 * It takes the same problem, batch and tensors as gdn_forward (validated by the same code), reads
 * the inputs in their own dtype through their views, and writes float64 results into dense arrays:
 *   out          [B*T (or T_total)][Hv][Dv]      the output of every token (batch order)
 *   final_state  [N][Hv][Dv][Dk]                 the state after each sequence's last token (vk
 *                                                order whatever the problem's state layout)
 *   captures     [B*T (or T_total)][Hv][Dv][Dk]  the state after every token (vk order)
 * Any of the three may be NULL. The initial state is read from tensors->state (read slots, layout,
 * strides) exactly as gdn_forward reads it; tensors->out, the final write and capture buffers are
 * never touched. Returns the same status as gdn_forward's validation would (message in err).
 */
#ifndef GDN_REF_H
#define GDN_REF_H

#include <stddef.h>
#include "gdn/gdn.h"

typedef struct gdn_ref_result {
    double *out;
    double *final_state;
    double *captures;
} gdn_ref_result;

gdn_status gdn_ref_forward(const gdn_problem *problem, const gdn_batch *batch, const gdn_tensors *tensors,
                           gdn_ref_result *result, char *err, size_t err_len);

/* The causal convolution (gdn_conv1d_forward), as a float64 token loop (src/ref/conv_ref.c). Same
 * arguments and validation as the library; results into dense arrays, any of which may be NULL:
 *   y            [B*T (or T_total)][C]          the output of every token (batch order)
 *   final_state  [N][C][W-1]                    the conv state after each sequence's last token (the
 *                                               read state for an empty sequence)
 *   captures     [B*T (or T_total)][C][W-1]     the conv state after every token
 * The initial state is read from tensors->state exactly as the library reads it; y, the pool and the
 * capture buffers are never touched. */
typedef struct gdn_conv_ref_result {
    double *y;
    double *final_state;
    double *captures;
} gdn_conv_ref_result;

gdn_status gdn_ref_conv1d(const gdn_conv_problem *problem, const gdn_batch *batch, const gdn_conv_tensors *tensors,
                          gdn_conv_ref_result *result, char *err, size_t err_len);

#endif
