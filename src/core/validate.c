/*
 * validate.c — every argument of gdn_forward checked once, at the API, with a message that names
 * the argument and the problem; on success a gdn_plan with defaults applied and strides explicit.
 * Nothing is written to any output before this has succeeded.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"

#define FAIL(status, ...)                          \
    do {                                           \
        snprintf(err, err_len, __VA_ARGS__);       \
        return (status);                           \
    } while (0)

/* "[2,16,32,128]" into buf; returns buf (called only when a message is due). */
static const char *format_shape(char *buf, size_t len, int ndim, const int64_t *shape)
{
    size_t used = 0;
    used += (size_t)snprintf(buf + used, len - used, "[");
    for (int i = 0; i < ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}

gdn_status gdn_check_view(const char *name, const gdn_tensor *t, int ndim, const int64_t *shape,
                             const char *dims, int is_output, gdn_view *view, char *err, size_t err_len)
{
    char want[96], got[96];
#define WANT format_shape(want, sizeof want, ndim, shape)
    if (!t->data)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: data is NULL", name);
    if (t->ndim != ndim) {
        if (t->ndim < 0 || t->ndim > GDN_MAX_DIMS)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: expected %d dims %s %s, got ndim = %d", name, ndim, dims, WANT,
                 t->ndim);
        format_shape(got, sizeof got, t->ndim, t->shape);
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: expected %d dims %s %s, got %d dims %s", name, ndim, dims, WANT,
             t->ndim, got);
    }
    for (int i = 0; i < ndim; i++) {
        if (t->shape[i] != shape[i]) {
            format_shape(got, sizeof got, t->ndim, t->shape);
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: expected shape %s %s, got %s", name, WANT, dims, got);
        }
    }
    int all_zero = 1;
    for (int i = 0; i < ndim; i++)
        all_zero &= t->strides[i] == 0;
    if (all_zero) {
        int64_t s = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            view->st[i] = s;
            if (shape[i] > 0 && s > (INT64_C(1) << 56) / shape[i])
                FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: shape %s spans more than 2^56 elements", name, WANT);
            s *= shape[i];
        }
    } else {
        for (int i = 0; i < ndim; i++) {
            if (t->strides[i] < 0)
                FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: strides[%d] = %lld is negative", name, i,
                     (long long)t->strides[i]);
            if (is_output && t->strides[i] == 0 && shape[i] > 1)
                FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: strides[%d] = 0 on a dimension of extent %lld would make "
                     "writes overlap", name, i, (long long)shape[i]);
            view->st[i] = t->strides[i];
        }
    }
    for (int i = ndim; i < GDN_MAX_DIMS; i++)
        view->st[i] = 0;
    /* an output's elements must not overlap: with the dimensions of extent > 1 sorted by stride, each
     * stride must pass the span of the smaller ones (the usual sufficient test; C order passes) */
    if (is_output && !all_zero) {
        int order[GDN_MAX_DIMS], m = 0, empty = 0;
        for (int i = 0; i < ndim; i++) {
            empty |= shape[i] == 0;
            if (shape[i] > 1)
                order[m++] = i;
        }
        for (int a = 1; a < m; a++) /* insertion sort by stride */
            for (int b = a; b > 0 && view->st[order[b]] < view->st[order[b - 1]]; b--) {
                const int tmp = order[b];
                order[b] = order[b - 1];
                order[b - 1] = tmp;
            }
        int64_t span = 0; /* largest offset reached by the dimensions so far (bounded: checked below) */
        for (int a = 0; a < m && !empty; a++) {
            const int d = order[a];
            if (view->st[d] <= span)
                FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: strides[%d] = %lld makes elements overlap (the dimensions "
                     "with smaller strides span %lld elements); outputs must not overlap themselves", name, d,
                     (long long)view->st[d], (long long)span + 1);
            if (view->st[d] > (INT64_C(1) << 56) / (shape[d] - 1))
                break; /* reported by the range check below */
            span += (shape[d] - 1) * view->st[d];
        }
    }
    /* the largest element offset must fit comfortably in int64 (and the address space) */
    int64_t last = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0)
            break;
        if (shape[i] > 1 && view->st[i] > (INT64_C(1) << 56) / (shape[i] - 1))
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: extent %lld times stride %lld of dimension %d overflows the "
                 "addressable range", name, (long long)shape[i], (long long)view->st[i], i);
        last += (shape[i] - 1) * view->st[i];
        if (last > (INT64_C(1) << 56))
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s: shape %s with these strides spans more than 2^56 elements",
                 name, WANT);
    }
    view->data = (char *)t->data;
    return GDN_STATUS_SUCCESS;
}
#undef WANT

static int valid_dtype(gdn_dtype t)
{
    return t == GDN_DTYPE_F32 || t == GDN_DTYPE_BF16 || t == GDN_DTYPE_F16;
}

/* --- slot conflicts --------------------------------------------------------------------------
 * A stamp per slot: generation (high 22 bits) | written flag | read flag | owner (40 bits: n + 1,
 * or all ones when several sequences read the slot). One generation per check: no clearing. */
#define OWNER_BITS 40
#define OWNER_MASK ((UINT64_C(1) << OWNER_BITS) - 1)
#define FLAG_READ (UINT64_C(1) << OWNER_BITS)
#define FLAG_WRITE (UINT64_C(1) << (OWNER_BITS + 1))
#define GEN_SHIFT (OWNER_BITS + 2)
#define GEN_MAX ((UINT64_C(1) << (64 - GEN_SHIFT)) - 1)

void gdn_slot_checker_free(gdn_slot_checker *slots)
{
    free(slots->stamp);
    slots->stamp = NULL;
    slots->cap = 0;
    slots->gen = 0;
}

static gdn_status slot_begin(gdn_slot_checker *s, int64_t num_slots, char *err, size_t err_len)
{
    if (num_slots > s->cap) {
        uint64_t *p = (uint64_t *)calloc((size_t)num_slots, sizeof *p);
        if (!p)
            FAIL(GDN_STATUS_OUT_OF_MEMORY, "state.pool: cannot allocate %lld slot stamps for the slot checks",
                 (long long)num_slots);
        free(s->stamp);
        s->stamp = p;
        s->cap = num_slots;
        s->gen = 0;
    }
    if (++s->gen > GEN_MAX) {
        memset(s->stamp, 0, (size_t)s->cap * sizeof *s->stamp);
        s->gen = 1;
    }
    return GDN_STATUS_SUCCESS;
}

static void slot_read(gdn_slot_checker *s, int64_t slot, int64_t n)
{
    uint64_t *st = &s->stamp[slot];
    const uint64_t cur = s->gen << GEN_SHIFT;
    if ((*st >> GEN_SHIFT) != s->gen)
        *st = cur | FLAG_READ | (uint64_t)(n + 1);
    else if ((*st & OWNER_MASK) != (uint64_t)(n + 1))
        *st = (*st & ~OWNER_MASK) | FLAG_READ | OWNER_MASK;
}

/* Returns 0 if the write is allowed, else 1 with *other = the conflicting sequence (-1: several),
 * *what = "written" or "read". */
static int slot_write(gdn_slot_checker *s, int64_t slot, int64_t n, int64_t *other, const char **what)
{
    uint64_t *st = &s->stamp[slot];
    if ((*st >> GEN_SHIFT) != s->gen) {
        *st = (s->gen << GEN_SHIFT) | FLAG_WRITE | (uint64_t)(n + 1);
        return 0;
    }
    const uint64_t owner = *st & OWNER_MASK;
    *other = owner == OWNER_MASK ? -1 : (int64_t)owner - 1;
    if (*st & FLAG_WRITE) {
        *what = "written";
        return 1;
    }
    if (owner != (uint64_t)(n + 1)) {
        *what = "read";
        return 1;
    }
    *st |= FLAG_WRITE;
    return 0;
}

static gdn_status conflict(char *err, size_t err_len, const char *name, int64_t idx, int64_t slot, int64_t n,
                           int64_t other, const char *what)
{
    if (other < 0)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s[%lld] = %lld (sequence %lld): slot is also %s by several other "
             "sequences", name, (long long)idx, (long long)slot, (long long)n, what);
    if (other == n)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s[%lld] = %lld (sequence %lld): slot is written twice by this "
             "sequence", name, (long long)idx, (long long)slot, (long long)n);
    FAIL(GDN_STATUS_INVALID_ARGUMENT, "%s[%lld] = %lld (sequence %lld): slot is also %s by sequence %lld", name,
         (long long)idx, (long long)slot, (long long)n, what, (long long)other);
}

static gdn_status check_slots(const gdn_plan *p, gdn_slot_checker *s, char *err, size_t err_len)
{
    gdn_status st;
    const int same_pool = p->cap_mode == GDN_CAPTURE_SLOTS && p->has_pool && p->cap.data == p->pool.data;
    int64_t other;
    const char *what;

    /* range checks first */
    for (int64_t n = 0; n < p->N && p->has_pool; n++) {
        const int64_t r = gdn_plan_read_slot(p, n), w = gdn_plan_write_slot(p, n);
        if (r >= p->num_slots)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "state.read_slots[%lld] = %lld: past the pool of %lld slots",
                 (long long)n, (long long)r, (long long)p->num_slots);
        if (w >= p->num_slots)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "state.write_slots[%lld] = %lld: past the pool of %lld slots",
                 (long long)n, (long long)w, (long long)p->num_slots);
    }
    if (p->cap_mode == GDN_CAPTURE_SLOTS) {
        for (int64_t n = 0; n < p->N; n++) {
            int64_t b, t0, t1;
            gdn_plan_seq(p, n, &b, &t0, &t1);
            for (int64_t t = t0; t < t1; t++) {
                const int64_t c = gdn_plan_cap_slot(p, n, t - t0, b, t);
                const int64_t idx = p->cap_slots_stride > 0 ? n * p->cap_slots_stride + (t - t0) : b * p->T + t;
                if (c >= p->cap_num_slots)
                    FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.slots[%lld] = %lld: past the capture pool of %lld "
                         "slots", (long long)idx, (long long)c, (long long)p->cap_num_slots);
            }
        }
    }

    if (p->has_pool) {
        /* one stamp array serves both pools when they are one buffer: size it for the larger description */
        const int64_t stamps = same_pool && p->cap_num_slots > p->num_slots ? p->cap_num_slots : p->num_slots;
        if ((st = slot_begin(s, stamps, err, err_len)) != GDN_STATUS_SUCCESS)
            return st;
        for (int64_t n = 0; n < p->N; n++) {
            const int64_t r = gdn_plan_read_slot(p, n);
            if (r >= 0)
                slot_read(s, r, n);
        }
        for (int64_t n = 0; n < p->N; n++) {
            const int64_t w = gdn_plan_write_slot(p, n);
            if (w >= 0 && slot_write(s, w, n, &other, &what))
                return conflict(err, err_len, "state.write_slots", n, w, n, other, what);
        }
    }
    if (p->cap_mode == GDN_CAPTURE_SLOTS) {
        if (!same_pool && (st = slot_begin(s, p->cap_num_slots, err, err_len)) != GDN_STATUS_SUCCESS)
            return st;
        for (int64_t n = 0; n < p->N; n++) {
            int64_t b, t0, t1;
            gdn_plan_seq(p, n, &b, &t0, &t1);
            for (int64_t t = t0; t < t1; t++) {
                const int64_t c = gdn_plan_cap_slot(p, n, t - t0, b, t);
                const int64_t idx = p->cap_slots_stride > 0 ? n * p->cap_slots_stride + (t - t0) : b * p->T + t;
                /* the state after the last token may also go to the sequence's own write slot:
                   both writes store the same values */
                if (same_pool && t == t1 - 1 && c == gdn_plan_write_slot(p, n))
                    continue;
                if (c >= 0 && slot_write(s, c, n, &other, &what))
                    return conflict(err, err_len, "capture.slots", idx, c, n, other, what);
            }
        }
    }
    return GDN_STATUS_SUCCESS;
}

/* Slots with both slot arrays NULL (slot n for sequence n): only the range needs checking, and it
 * needs no array contents (the device-pointer mode of the CUDA backend checks the rest on the GPU). */
static gdn_status check_default_slots(const gdn_plan *p, char *err, size_t err_len)
{
    if (p->has_pool && !p->read_slots && !p->write_slots && p->N > p->num_slots)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "state.read_slots[%lld] = %lld: past the pool of %lld slots",
             (long long)p->num_slots, (long long)p->num_slots, (long long)p->num_slots);
    return GDN_STATUS_SUCCESS;
}

/* contents = 1: read cu_seqlens, batch.num_tokens and the slot arrays (host memory); 0: leave their
   contents alone (device memory). */
static gdn_status plan_make(gdn_plan *p, const gdn_problem *pr, const gdn_batch *ba, const gdn_tensors *te,
                            gdn_slot_checker *slots, int contents, char *err, size_t err_len)
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
    if (pr->num_k_heads < 1)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.num_k_heads = %d: must be >= 1", pr->num_k_heads);
    if (pr->num_v_heads < 1)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.num_v_heads = %d: must be >= 1", pr->num_v_heads);
    if (pr->num_v_heads % pr->num_k_heads != 0)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.num_v_heads = %d: must be a multiple of num_k_heads = %d",
             pr->num_v_heads, pr->num_k_heads);
    if (pr->k_dim < 1)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.k_dim = %d: must be >= 1", pr->k_dim);
    if (pr->v_dim < 1)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.v_dim = %d: must be >= 1", pr->v_dim);
    if (pr->head_map != GDN_HEADS_GROUPED && pr->head_map != GDN_HEADS_TILED)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.head_map = %d: unknown head map", (int)pr->head_map);
    if ((unsigned)pr->gate > GDN_GATE_RAW)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.gate = %d: unknown gate convention", (int)pr->gate);
    if (!isfinite(pr->scale))
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.scale: must be finite (0 = 1/sqrt(k_dim))");
    if (pr->state_layout != GDN_STATE_VK && pr->state_layout != GDN_STATE_KV)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.state_layout = %d: unknown layout", (int)pr->state_layout);
    if (!valid_dtype(pr->dtype))
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.dtype = %d: unknown dtype", (int)pr->dtype);
    if (!valid_dtype(pr->out_dtype))
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.out_dtype = %d: unknown dtype", (int)pr->out_dtype);
    if (!valid_dtype(pr->gate_dtype))
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.gate_dtype = %d: unknown dtype", (int)pr->gate_dtype);
    if (pr->gate_dtype != GDN_DTYPE_F32 && pr->gate_dtype != pr->dtype)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.gate_dtype: must be f32 or the activation dtype");
    if (!valid_dtype(pr->state_dtype))
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.state_dtype = %d: unknown dtype", (int)pr->state_dtype);
    if (pr->state_dtype != GDN_DTYPE_F32)
        FAIL(GDN_STATUS_UNSUPPORTED, "problem.state_dtype: only f32 state storage is supported in this version");
    if ((unsigned)pr->algo > GDN_ALGO_CHUNKED)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.algo = %d: unknown algorithm", (int)pr->algo);
    if ((unsigned)pr->precision > GDN_PRECISION_BF16)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "problem.precision = %d: unknown precision", (int)pr->precision);
    if (pr->k_dim > GDN_MAX_HEAD_DIM)
        FAIL(GDN_STATUS_UNSUPPORTED, "problem.k_dim = %d: larger than %d is not supported", pr->k_dim,
             GDN_MAX_HEAD_DIM);
    if (pr->v_dim > GDN_MAX_HEAD_DIM)
        FAIL(GDN_STATUS_UNSUPPORTED, "problem.v_dim = %d: larger than %d is not supported", pr->v_dim,
             GDN_MAX_HEAD_DIM);
    p->Hk = pr->num_k_heads;
    p->Hv = pr->num_v_heads;
    p->Dk = pr->k_dim;
    p->Dv = pr->v_dim;
    p->ratio = p->Hv / p->Hk;
    p->head_map = pr->head_map;
    p->gate = pr->gate;
    p->scale = pr->scale != 0.0f ? pr->scale : (float)(1.0 / sqrt((double)pr->k_dim));
    p->l2norm = pr->qk_l2norm != 0;
    p->layout = pr->state_layout;
    p->dtype = pr->dtype;
    p->out_dtype = pr->out_dtype;
    p->gate_dtype = pr->gate_dtype;
    p->algo = pr->algo;
    p->precision = pr->precision == GDN_PRECISION_DEFAULT ? GDN_PRECISION_F32 : pr->precision;

    /* batch */
    if (ba->batch_size < 1)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch.batch_size = %lld: must be >= 1", (long long)ba->batch_size);
    if (ba->seq_len < 0)
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch.seq_len = %lld: must be >= 0", (long long)ba->seq_len);
    p->B = ba->batch_size;
    p->T = ba->seq_len;
    if (ba->cu_seqlens) {
        if (ba->cu_seqlens_type != GDN_INDEX_I32 && ba->cu_seqlens_type != GDN_INDEX_I64)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch.cu_seqlens_type = %d: unknown index type",
                 (int)ba->cu_seqlens_type);
        if (ba->batch_size != 1)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch.batch_size = %lld: must be 1 with cu_seqlens (packed)",
                 (long long)ba->batch_size);
        if (ba->num_seqs < 1)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch.num_seqs = %lld: must be >= 1 with cu_seqlens",
                 (long long)ba->num_seqs);
        p->cu = ba->cu_seqlens;
        p->cu_type = ba->cu_seqlens_type;
        p->N = ba->num_seqs;
        if (contents && gdn_plan_cu(p, 0) != 0)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "cu_seqlens[0] = %lld: must be 0", (long long)gdn_plan_cu(p, 0));
        for (int64_t n = 0; contents && n < p->N; n++) {
            const int64_t a = gdn_plan_cu(p, n), b = gdn_plan_cu(p, n + 1);
            if (b < a)
                FAIL(GDN_STATUS_INVALID_ARGUMENT, "cu_seqlens[%lld] = %lld: decreasing (cu_seqlens[%lld] = %lld)",
                     (long long)(n + 1), (long long)b, (long long)n, (long long)a);
            if (b > p->T)
                FAIL(GDN_STATUS_INVALID_ARGUMENT, "cu_seqlens[%lld] = %lld: past the %lld tokens of the batch "
                     "(seq_len)", (long long)(n + 1), (long long)b, (long long)p->T);
        }
        if (contents && gdn_plan_cu(p, p->N) != p->T)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "cu_seqlens[%lld] = %lld: must equal seq_len = %lld (T_total)",
                 (long long)p->N, (long long)gdn_plan_cu(p, p->N), (long long)p->T);
    } else {
        p->N = p->B;
    }
    if (ba->num_tokens) {
        for (int64_t n = 0; contents && n < p->N; n++) { /* device counts: checked on the device */
            int64_t b, t0, t1;
            gdn_plan_seq_full(p, n, &b, &t0, &t1);
            if (ba->num_tokens[n] < 0 || ba->num_tokens[n] > t1 - t0)
                FAIL(GDN_STATUS_INVALID_ARGUMENT, "batch.num_tokens[%lld] = %d: must be in [0, %lld] (the tokens of "
                     "sequence %lld)", (long long)n, (int)ba->num_tokens[n], (long long)(t1 - t0), (long long)n);
        }
        p->num_tokens = ba->num_tokens;
    }

    /* tensors */
    const int64_t B = p->B, T = p->T, Hk = p->Hk, Hv = p->Hv, Dk = p->Dk, Dv = p->Dv;
    {
        const int64_t sq[4] = {B, T, Hk, Dk}, sv[4] = {B, T, Hv, Dv}, sg[3] = {B, T, Hv};
        if ((st = gdn_check_view("q", &te->q, 4, sq, "[B,T,Hk,Dk]", 0, &p->q, err, err_len)))
            return st;
        if ((st = gdn_check_view("k", &te->k, 4, sq, "[B,T,Hk,Dk]", 0, &p->k, err, err_len)))
            return st;
        if ((st = gdn_check_view("v", &te->v, 4, sv, "[B,T,Hv,Dv]", 0, &p->v, err, err_len)))
            return st;
        if ((st = gdn_check_view("g", &te->g, 3, sg, "[B,T,Hv]", 0, &p->g, err, err_len)))
            return st;
        if ((st = gdn_check_view("beta", &te->beta, 3, sg, "[B,T,Hv]", 0, &p->beta, err, err_len)))
            return st;
        if (te->out.data) {
            if ((st = gdn_check_view("out", &te->out, 4, sv, "[B,T,Hv,Dv]", 1, &p->out, err, err_len)))
                return st;
            p->has_out = 1;
        }
    }
    if (p->gate == GDN_GATE_RAW) {
        if (!te->A_log)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "A_log: is NULL (required by the raw gate)");
        if (!te->dt_bias)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "dt_bias: is NULL (required by the raw gate)");
        p->A_log = te->A_log;
        p->dt_bias = te->dt_bias;
    }
    const int64_t r_dim = p->layout == GDN_STATE_VK ? Dv : Dk, c_dim = p->layout == GDN_STATE_VK ? Dk : Dv;
    const char *sdims = p->layout == GDN_STATE_VK ? "[slots,Hv,Dv,Dk]" : "[slots,Hv,Dk,Dv]";
    if (te->state.pool.data) {
        const gdn_tensor *t = &te->state.pool;
        if (t->ndim != 4 || t->shape[0] < 1)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "state.pool: expected 4 dims %s with at least one slot", sdims);
        const int64_t ss[4] = {t->shape[0], Hv, r_dim, c_dim};
        if ((st = gdn_check_view("state.pool", t, 4, ss, sdims, 1, &p->pool, err, err_len)))
            return st;
        p->has_pool = 1;
        p->num_slots = t->shape[0];
        p->read_slots = te->state.read_slots;
        p->write_slots = te->state.write_slots;
    }
    p->cap_mode = te->capture.mode;
    switch (te->capture.mode) {
    case GDN_CAPTURE_NONE:
        break;
    case GDN_CAPTURE_DENSE: {
        const int64_t sc[5] = {B, T, Hv, r_dim, c_dim};
        if ((st = gdn_check_view("capture.states", &te->capture.states, 5, sc,
                             p->layout == GDN_STATE_VK ? "[B,T,Hv,Dv,Dk]" : "[B,T,Hv,Dk,Dv]", 1, &p->cap, err,
                             err_len)))
            return st;
        break;
    }
    case GDN_CAPTURE_SLOTS: {
        const gdn_tensor *t = &te->capture.states;
        if (!t->data)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.states: data is NULL");
        if (t->ndim != 4 || t->shape[0] < 1)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.states: expected 4 dims %s with at least one slot", sdims);
        const int64_t ss[4] = {t->shape[0], Hv, r_dim, c_dim};
        if ((st = gdn_check_view("capture.states", t, 4, ss, sdims, 1, &p->cap, err, err_len)))
            return st;
        if (!te->capture.slots)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.slots: is NULL (required by slot capture)");
        if (te->capture.slots_stride > (INT64_C(1) << 40))
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.slots_stride = %lld: larger than 2^40",
                 (long long)te->capture.slots_stride);
        if (te->capture.slots_stride < 0)
            FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.slots_stride = %lld: must be >= 0",
                 (long long)te->capture.slots_stride);
        p->cap_num_slots = t->shape[0];
        p->cap_slots = te->capture.slots;
        p->cap_slots_stride = te->capture.slots_stride;
        if (contents && p->cap_slots_stride > 0) {
            for (int64_t n = 0; n < p->N; n++) {
                int64_t b, t0, t1;
                gdn_plan_seq(p, n, &b, &t0, &t1);
                if (t1 - t0 > p->cap_slots_stride)
                    FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.slots_stride = %lld: shorter than sequence %lld "
                         "(%lld tokens)", (long long)p->cap_slots_stride, (long long)n, (long long)(t1 - t0));
            }
        }
        break;
    }
    default:
        FAIL(GDN_STATUS_INVALID_ARGUMENT, "capture.mode = %d: unknown capture mode", (int)te->capture.mode);
    }
    /* checked after the views, so that a wrong shape is reported as such first */
    if (p->N > (INT64_C(1) << 32) / p->Hv)
        FAIL(GDN_STATUS_UNSUPPORTED, "batch: %lld sequences x %d value heads: more than 2^32 (sequence, head) pairs "
             "in one call are not supported", (long long)p->N, p->Hv);
    return contents ? check_slots(p, slots, err, err_len) : check_default_slots(p, err, err_len);
}

gdn_status gdn_plan_make(gdn_plan *p, const gdn_problem *pr, const gdn_batch *ba, const gdn_tensors *te,
                         gdn_slot_checker *slots, char *err, size_t err_len)
{
    return plan_make(p, pr, ba, te, slots, 1, err, err_len);
}

gdn_status gdn_plan_make_device(gdn_plan *p, const gdn_problem *pr, const gdn_batch *ba, const gdn_tensors *te,
                                char *err, size_t err_len)
{
    const gdn_status st = plan_make(p, pr, ba, te, NULL, 0, err, err_len);
    /* a device plan keeps the problem's precision: DEFAULT is the CUDA backend's own (the chunked products on
       tensor cores, the solve's in tf32), BF16 takes that one in bf16 too (gdn_cuda_forward's chunk_tc) */
    if (st == GDN_STATUS_SUCCESS)
        p->precision = pr->precision;
    return st;
}
