/*
 * conv_plan.h — a validated call of gdn_conv1d_forward: gdn_conv_plan_make checks every argument once,
 * at the API, and resolves the views (strides made explicit) so that the CPU backend and the
 * reference never check anything again.
 *
 * The batch, the slot arrays and the capture slot table follow exactly the rules of gdn_forward, and
 * are checked by the very same code: the plan carries a "shadow" gdn_plan, made by gdn_plan_make for
 * a one-head problem whose state pool and capture pool are the convolution's (same data, same number
 * of slots). The accessors of plan.h (gdn_plan_seq, gdn_plan_read_slot, gdn_plan_write_slot,
 * gdn_plan_cap_slot) are then used on plan->seq.
 */
#ifndef GDN_CORE_CONV_PLAN_H
#define GDN_CORE_CONV_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "core/plan.h"

/* Largest kernel width (taps). */
#define GDN_CONV_MAX_WIDTH 8

typedef struct gdn_conv_plan {
    /* problem */
    int C, W, K; /* channels, taps, state length K = W - 1 */
    gdn_conv_activation act;
    gdn_dtype dtype;
    /* the batch, slots and capture slots (B, T, N, cu, has_pool, read/write slots, cap_mode, cap_slots,
       cap_slots_stride): use the plan.h accessors on it; its views are placeholders */
    gdn_plan seq;
    /* tensors */
    gdn_view x;      /* b, t, c */
    gdn_view weight; /* c, j */
    const float *bias;
    int has_y;
    gdn_view y;    /* b, t, c */
    gdn_view pool; /* slot, c, j */
    gdn_view cap;  /* DENSE: b, t, c, j; SLOTS: slot, c, j */
} gdn_conv_plan;

/* Validate and resolve. On failure writes a message naming the argument into err. */
gdn_status gdn_conv_plan_make(gdn_conv_plan *plan, const gdn_conv_problem *problem, const gdn_batch *batch,
                              const gdn_conv_tensors *tensors, gdn_slot_checker *slots, char *err, size_t err_len);

#endif
