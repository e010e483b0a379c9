/*
 * conv_validate.c — every argument of gdn_conv1d_forward checked once, at the API, with a message that
 * names the argument and the problem; on success a gdn_conv_plan with strides explicit. Nothing is
 * written to any output before this has succeeded.
 *
 * Order of the checks: problem, batch (cu_seqlens contents included), views (x, weight, y, state.pool,
 * capture), then the slot arrays. The batch and the slots are checked by gdn_plan_make itself, on a
 * shadow call (one head of size 1, placeholder q/k/v/g/beta views, the convolution's state and capture
 * pools described as [slots,1,1,1] pools with the same data): the conv op thereby has exactly
 * gdn_forward's rules and messages for cu_seqlens, read/write slots, conflicts and capture slots.
 */
#include <stdio.h>
#include <string.h>

#include "core/conv_plan.h"
#include "cuda/cuda_backend.h" /* declares gdn_conv_plan_make_device (needs no CUDA headers) */

#define FAIL(status, ...)                          \
    do {                                           \
        snprintf(err, err_len, __VA_ARGS__);       \
        return (status);                           \
    } while (0)


/* The shadow call of gdn_plan_make: batch as given; with_slots = 0: no pool, no capture (batch and
 * cu_seqlens only); 1: the conv's state pool and slot capture pool as [slots,1,1,1] pools. */
static gdn_status shadow(gdn_plan *sp, const gdn_batch *ba, const gdn_conv_tensors *te, int with_slots,
                         gdn_slot_checker *slots, int device, char *err, size_t err_len)
{
    static const float placeholder = 0.0f; /* never read: the shadow only checks */
    gdn_problem pr;
    gdn_tensors st;
    memset(&pr, 0, sizeof pr);
    memset(&st, 0, sizeof st);
    pr.num_k_heads = pr.num_v_heads = pr.k_dim = pr.v_dim = 1;
    const int64_t s4[4] = {ba->batch_size, ba->seq_len, 1, 1}, s3[3] = {ba->batch_size, ba->seq_len, 1};
    st.q = st.k = st.v = gdn_tensor_contiguous(&placeholder, 4, s4);
    st.g = st.beta = gdn_tensor_contiguous(&placeholder, 3, s3);
    if (with_slots) {
        if (te->state.pool.data) {
            const int64_t sp4[4] = {te->state.pool.shape[0], 1, 1, 1};
            st.state.pool = gdn_tensor_contiguous(te->state.pool.data, 4, sp4);
            st.state.read_slots = te->state.read_slots;
            st.state.write_slots = te->state.write_slots;
        }
        if (te->capture.mode == GDN_CAPTURE_SLOTS) {
            const int64_t sc4[4] = {te->capture.states.shape[0], 1, 1, 1};
            st.capture.mode = GDN_CAPTURE_SLOTS;
            st.capture.states = gdn_tensor_contiguous(te->capture.states.data, 4, sc4);
            st.capture.slots = te->capture.slots;
            st.capture.slots_stride = te->capture.slots_stride;
        }
    }
    return device ? gdn_plan_make_device(sp, &pr, ba, &st, err, err_len)
                  : gdn_plan_make(sp, &pr, ba, &st, slots, err, err_len);
}

/* device = 1: the index arrays are device memory, their contents are left to the backend (as
 * gdn_plan_make_device does for gdn_forward). */
static gdn_status conv_plan_make(gdn_conv_plan *p, const gdn_conv_problem *pr, const gdn_batch *ba,
                                 const gdn_conv_tensors *te, gdn_slot_checker *slots, int device, char *err,
                                 size_t err_len)
{
    gdn_status st;
    memset(p, 0, sizeof *p);
    if (!pr)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem: is NULL");
    if (!ba)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch: is NULL");
    if (!te)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "tensors: is NULL");

    /* problem */
    if (pr->channels < 1)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.channels = %d: must be >= 1", pr->channels);
    if (pr->width < 2 || pr->width > GDN_CONV_MAX_WIDTH)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.width = %d: must be 2..%d", pr->width, GDN_CONV_MAX_WIDTH);
    if (pr->activation != GDN_CONV_SILU && pr->activation != GDN_CONV_NONE)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.activation = %d: unknown activation", (int)pr->activation);
    if (pr->dtype != GDN_DTYPE_F32 && pr->dtype != GDN_DTYPE_BF16 && pr->dtype != GDN_DTYPE_F16)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.dtype = %d: unknown dtype", (int)pr->dtype);
    p->C = pr->channels;
    p->W = pr->width;
    p->K = pr->width - 1;
    p->act = pr->activation;
    p->dtype = pr->dtype;

    /* batch: gdn_forward's checks (the token count is bounded first, so that the shadow's placeholder
       views cannot be the ones to overflow) */
    if (ba->batch_size >= 1 && ba->seq_len > 0 && ba->batch_size > (INT64_C(1) << 56) / ba->seq_len / p->C)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch: batch_size %lld x seq_len %lld x %d channels: more than 2^56 "
             "elements", (long long)ba->batch_size, (long long)ba->seq_len, p->C);
    if ((st = shadow(&p->seq, ba, te, 0, slots, device, err, err_len)) != GDN_STATUS_SUCCESS)
        return st;
    const int64_t B = p->seq.B, T = p->seq.T, C = p->C, W = p->W, K = p->K;

    /* tensors */
    {
        const int64_t sx[3] = {B, T, C}, sw[2] = {C, W};
        if ((st = gdn_check_view("x", &te->x, 3, sx, "[B,T,C]", 0, &p->x, err, err_len)))
            return st;
        if ((st = gdn_check_view("weight", &te->weight, 2, sw, "[C,W]", 0, &p->weight, err, err_len)))
            return st;
        p->bias = te->bias;
        if (te->y.data) {
            if ((st = gdn_check_view("y", &te->y, 3, sx, "[B,T,C]", 1, &p->y, err, err_len)))
                return st;
            p->has_y = 1;
        }
    }
    if (te->state.pool.data) {
        const gdn_tensor *t = &te->state.pool;
        if (t->ndim != 3 || t->shape[0] < 1)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "state.pool: expected 3 dims [slots,C,W-1] with at least one slot");
        const int64_t ss[3] = {t->shape[0], C, K};
        if ((st = gdn_check_view("state.pool", t, 3, ss, "[slots,C,W-1]", 1, &p->pool, err, err_len)))
            return st;
    }
    switch (te->capture.mode) {
    case GDN_CAPTURE_NONE:
        break;
    case GDN_CAPTURE_DENSE: {
        const int64_t sc[4] = {B, T, C, K};
        if ((st = gdn_check_view("capture.states", &te->capture.states, 4, sc, "[B,T,C,W-1]", 1, &p->cap, err,
                             err_len)))
            return st;
        break;
    }
    case GDN_CAPTURE_SLOTS: {
        const gdn_tensor *t = &te->capture.states;
        if (!t->data)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.states: data is NULL");
        if (t->ndim != 3 || t->shape[0] < 1)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.states: expected 3 dims [slots,C,W-1] with at least one "
                 "slot");
        const int64_t ss[3] = {t->shape[0], C, K};
        if ((st = gdn_check_view("capture.states", t, 3, ss, "[slots,C,W-1]", 1, &p->cap, err, err_len)))
            return st;
        if (!te->capture.slots)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.slots: is NULL (required by slot capture)");
        break;
    }
    default:
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.mode = %d: unknown capture mode", (int)te->capture.mode);
    }

    /* slot arrays and capture slots: gdn_forward's rules, by its own code */
    if ((st = shadow(&p->seq, ba, te, 1, slots, device, err, err_len)) != GDN_STATUS_SUCCESS)
        return st;
    if (te->capture.mode == GDN_CAPTURE_DENSE)
        p->seq.cap_mode = GDN_CAPTURE_DENSE; /* the shadow left dense capture out: no slots to check */
    return GDN_STATUS_SUCCESS;
}

gdn_status gdn_conv_plan_make(gdn_conv_plan *p, const gdn_conv_problem *pr, const gdn_batch *ba,
                              const gdn_conv_tensors *te, gdn_slot_checker *slots, char *err, size_t err_len)
{
    return conv_plan_make(p, pr, ba, te, slots, 0, err, err_len);
}

gdn_status gdn_conv_plan_make_device(gdn_conv_plan *p, const gdn_conv_problem *pr, const gdn_batch *ba,
                                     const gdn_conv_tensors *te, char *err, size_t err_len)
{
    return conv_plan_make(p, pr, ba, te, NULL, 1, err, err_len);
}
