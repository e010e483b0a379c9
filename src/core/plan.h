/*
 * plan.h — a validated call: gdn_plan_make checks every argument of gdn_forward once, at the API,
 * and resolves the problem, batch and views (defaults applied, strides made explicit) so that the
 * backends and the reference never check anything again.
 */
#ifndef GDN_CORE_PLAN_H
#define GDN_CORE_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "gdn/gdn.h"

/* Largest Dk and Dv any backend supports (scratch is sized for it). */
#define GDN_MAX_HEAD_DIM 256

/* A view with explicit element strides. */
typedef struct gdn_view {
    char *data;
    int64_t st[GDN_MAX_DIMS];
} gdn_view;

/* Owner stamps per pool slot, for the slot-conflict checks; grows only when a pool is larger than
 * every earlier one (the only allocation gdn_forward can make). */
typedef struct gdn_slot_checker {
    uint64_t *stamp;
    int64_t cap;
    uint64_t gen;
} gdn_slot_checker;

typedef struct gdn_plan {
    /* problem */
    int Hk, Hv, Dk, Dv, ratio;
    gdn_head_map head_map;
    gdn_gate gate;
    float scale;
    int l2norm;
    gdn_state_layout layout;
    gdn_dtype dtype, out_dtype, gate_dtype;
    gdn_algo algo;
    gdn_precision precision; /* host plans: F32 or BF16, never DEFAULT; device plans keep DEFAULT (CUDA's own) */
    /* batch */
    int64_t B, T, N; /* T is T_total when packed */
    const void *cu;  /* NULL when dense */
    gdn_index_type cu_type;
    const int32_t *num_tokens; /* NULL, or [N]: tokens run per sequence (checked <= its length) */
    /* tensors */
    gdn_view q, k, v, g, beta, out;
    const float *A_log, *dt_bias;
    int has_out;
    int has_pool;
    gdn_view pool; /* dims: slot, head, row, col (row = v, col = k for VK; swapped for KV) */
    int64_t num_slots;
    const int32_t *read_slots, *write_slots;
    gdn_capture_mode cap_mode;
    gdn_view cap; /* DENSE: b, t, head, row, col; SLOTS: slot, head, row, col */
    int64_t cap_num_slots;
    const int32_t *cap_slots;
    int64_t cap_slots_stride;
} gdn_plan;

/* Check a view's data, rank, shape and strides against the expected shape (dims: their names, for
 * messages); resolve its strides into view. Outputs (is_output) may not overlap themselves. Shared by
 * every op's validator. On failure writes a message naming the view into err. */
gdn_status gdn_check_view(const char *name, const gdn_tensor *t, int ndim, const int64_t *shape, const char *dims,
                          int is_output, gdn_view *view, char *err, size_t err_len);

/* Validate and resolve. On failure writes a message naming the argument into err. */
gdn_status gdn_plan_make(gdn_plan *plan, const gdn_problem *problem, const gdn_batch *batch,
                         const gdn_tensors *tensors, gdn_slot_checker *slots, char *err, size_t err_len);

/* The same checks for a backend that reads cu_seqlens, batch.num_tokens and the slot arrays on the
 * device (CUDA): their contents are not read here (ranges, monotonicity, counts and slot conflicts
 * are the backend's to check; gdn_plan_seq and the slot accessors below must not be used on such a
 * plan); everything else is checked exactly as by gdn_plan_make. */
gdn_status gdn_plan_make_device(gdn_plan *plan, const gdn_problem *problem, const gdn_batch *batch,
                                const gdn_tensors *tensors, char *err, size_t err_len);

void gdn_slot_checker_free(gdn_slot_checker *slots);

/* --- accessors ---------------------------------------------------------------------------- */

static inline int64_t gdn_plan_cu(const gdn_plan *p, int64_t i)
{
    return p->cu_type == GDN_INDEX_I64 ? ((const int64_t *)p->cu)[i] : (int64_t)((const int32_t *)p->cu)[i];
}

/* Sequence n lives in batch row *b, tokens [*t0, *t1). */
/* Sequence n: batch row *b and all its tokens [*t0, *t1). */
static inline void gdn_plan_seq_full(const gdn_plan *p, int64_t n, int64_t *b, int64_t *t0, int64_t *t1)
{
    if (p->cu) {
        *b = 0;
        *t0 = gdn_plan_cu(p, n);
        *t1 = gdn_plan_cu(p, n + 1);
    } else {
        *b = n;
        *t0 = 0;
        *t1 = p->T;
    }
}

/* Sequence n: batch row *b and the tokens the call runs, [*t0, *t1) (batch.num_tokens applied). */
static inline void gdn_plan_seq(const gdn_plan *p, int64_t n, int64_t *b, int64_t *t0, int64_t *t1)
{
    gdn_plan_seq_full(p, n, b, t0, t1);
    if (p->num_tokens)
        *t1 = *t0 + p->num_tokens[n];
}

static inline int gdn_plan_key_head(const gdn_plan *p, int h)
{
    return p->head_map == GDN_HEADS_GROUPED ? h / p->ratio : h % p->Hk;
}

static inline int64_t gdn_plan_read_slot(const gdn_plan *p, int64_t n)
{
    if (!p->has_pool)
        return -1;
    return p->read_slots ? p->read_slots[n] : n;
}

static inline int64_t gdn_plan_write_slot(const gdn_plan *p, int64_t n)
{
    if (!p->has_pool)
        return -1;
    return p->write_slots ? p->write_slots[n] : gdn_plan_read_slot(p, n);
}

/* Capture slot of the state after token t (batch position b, t) which is token j of sequence n. */
static inline int64_t gdn_plan_cap_slot(const gdn_plan *p, int64_t n, int64_t j, int64_t b, int64_t t)
{
    if (p->cap_slots_stride > 0)
        return p->cap_slots[n * p->cap_slots_stride + j];
    return p->cap_slots[b * p->T + t];
}

/* Element offset of (row r, col c) of a state stored in the plan's layout, from a head base. */
static inline int64_t gdn_state_offset(gdn_state_layout layout, const int64_t *st2, int64_t v, int64_t k)
{
    return layout == GDN_STATE_VK ? v * st2[0] + k * st2[1] : k * st2[0] + v * st2[1];
}

#endif
