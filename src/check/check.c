/*
 * check.c — the conformance engine (check.h): builds one case with fresh random inputs, runs
 * gdn_forward and the float64 reference (ref.h) on the same rounded inputs, and compares.
 *
 * Every buffer lives between two guard regions of 256 bytes; padding inside strided views holds a
 * NaN sentinel (so a kernel that reads padding poisons its result, and one that writes it is
 * caught bitwise); outputs and captures are NaN-poisoned before the run; every pool slot that no
 * sequence writes must be bitwise unchanged afterwards. Inputs must be unchanged too.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/rng.h"
#include "core/dtype.h"
#include "ref/ref.h"
#ifdef GDN_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#define GUARD_BYTES 256
#define GUARD_BYTE 0xA5

/* ---------------------------------------------------------------------------------------------
 * Buffers with views
 * ------------------------------------------------------------------------------------------- */

typedef struct cbuf {
    const char *name;
    gdn_dtype dtype;
    size_t esz;
    int ndim;
    int64_t shape[GDN_MAX_DIMS];
    int64_t st[GDN_MAX_DIMS]; /* always explicit here */
    int pass_strides;         /* 0: the view handed to gdn has all-zero strides (contiguous) */
    size_t span;              /* elements in the data region (>= 1) */
    unsigned char *mem;       /* guard | data | guard */
    unsigned char *data;
    unsigned char *init;      /* pristine copy of the data region */
} cbuf;

static uint16_t pad16(gdn_dtype t)
{
    return t == GDN_DTYPE_BF16 ? 0x7FC5u : 0x7E55u; /* NaN in the respective type */
}

static void put_bits(cbuf *b, size_t e, int poison)
{
    if (b->esz == 4) {
        const uint32_t u = poison ? 0x7FC00000u : 0x7FC0BEEFu;
        memcpy(b->data + e * 4, &u, 4);
    } else {
        const uint16_t u = poison ? (b->dtype == GDN_DTYPE_BF16 ? 0x7FC0u : 0x7E00u) : pad16(b->dtype);
        memcpy(b->data + e * 2, &u, 2);
    }
}

static int next_index(int64_t *idx, const int64_t *shape, int ndim)
{
    for (int i = ndim - 1; i >= 0; i--) {
        if (++idx[i] < shape[i])
            return 1;
        idx[i] = 0;
    }
    return 0;
}

static int64_t numel(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

static int64_t offset_of(const cbuf *b, const int64_t *idx)
{
    int64_t o = 0;
    for (int i = 0; i < b->ndim; i++)
        o += idx[i] * b->st[i];
    return o;
}

/* Lay out a buffer. strided: see GDN_CHECK_STRIDED_MAX in check.h; swap: the dimension swapped in
 * memory with the next one when strided == 2 (-1: none). */
static int buf_init(cbuf *b, const char *name, gdn_dtype dtype, int ndim, const int64_t *shape, int strided,
                    int swap, gdn_rng *rng)
{
    int ord[GDN_MAX_DIMS];
    memset(b, 0, sizeof *b);
    b->name = name;
    b->dtype = dtype;
    b->esz = gdn_dtype_size(dtype);
    b->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        b->shape[i] = shape[i];
        ord[i] = i;
    }
    if (strided == 2 && swap >= 0 && swap + 1 < ndim) {
        ord[swap] = swap + 1;
        ord[swap + 1] = swap;
    }
    b->pass_strides = strided != 0;
    int64_t s = strided == 3 ? 2 : 1;
    for (int j = ndim - 1; j >= 0; j--) {
        const int d = ord[j];
        b->st[d] = s;
        const int64_t pad = strided ? 1 + (int64_t)gdn_rng_below(rng, 5) : 0;
        s = s * shape[d] + pad;
    }
    b->span = s > 0 ? (size_t)s : 1;
    const size_t bytes = b->span * b->esz;
    b->mem = (unsigned char *)malloc(bytes + 2 * GUARD_BYTES);
    b->init = (unsigned char *)malloc(bytes);
    if (!b->mem || !b->init)
        return 0;
    b->data = b->mem + GUARD_BYTES;
    memset(b->mem, GUARD_BYTE, GUARD_BYTES);
    memset(b->data + bytes, GUARD_BYTE, GUARD_BYTES);
    for (size_t e = 0; e < b->span; e++)
        put_bits(b, e, 0);
    return 1;
}

static void buf_free(cbuf *b)
{
    free(b->mem);
    free(b->init);
    b->mem = b->init = b->data = NULL;
}

static gdn_tensor buf_tensor(const cbuf *b)
{
    gdn_tensor t;
    memset(&t, 0, sizeof t);
    t.data = b->data;
    t.ndim = b->ndim;
    for (int i = 0; i < b->ndim; i++) {
        t.shape[i] = b->shape[i];
        t.strides[i] = b->pass_strides ? b->st[i] : 0;
    }
    return t;
}

/* Store dense C-order values (rounded to the buffer's dtype) into the view's elements. */
static void buf_store_dense(cbuf *b, const double *vals)
{
    int64_t idx[GDN_MAX_DIMS] = {0};
    const int64_t n = numel(b->shape, b->ndim);
    for (int64_t i = 0; i < n; i++) {
        gdn_store_f32(b->data, b->dtype, offset_of(b, idx), (float)vals[i]);
        next_index(idx, b->shape, b->ndim);
    }
}

static void buf_poison_view(cbuf *b)
{
    int64_t idx[GDN_MAX_DIMS] = {0};
    const int64_t n = numel(b->shape, b->ndim);
    for (int64_t i = 0; i < n; i++) {
        put_bits(b, (size_t)offset_of(b, idx), 1);
        next_index(idx, b->shape, b->ndim);
    }
}

static void buf_snapshot(cbuf *b)
{
    memcpy(b->init, b->data, b->span * b->esz);
}

static void buf_restore(cbuf *b)
{
    memcpy(b->data, b->init, b->span * b->esz);
    memset(b->mem, GUARD_BYTE, GUARD_BYTES);
    memset(b->data + b->span * b->esz, GUARD_BYTE, GUARD_BYTES);
}

static int guards_ok(const cbuf *b)
{
    const unsigned char *after = b->data + b->span * b->esz;
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (b->mem[i] != GUARD_BYTE || after[i] != GUARD_BYTE)
            return 0;
    return 1;
}

/* Decode an element offset into view indices (slow; for messages). Returns 0 for padding. */
static int decode_offset(const cbuf *b, int64_t off, int64_t *idx)
{
    int64_t i2[GDN_MAX_DIMS] = {0};
    const int64_t n = numel(b->shape, b->ndim);
    for (int64_t i = 0; i < n; i++) {
        if (offset_of(b, i2) == off) {
            memcpy(idx, i2, sizeof i2);
            return 1;
        }
        next_index(i2, b->shape, b->ndim);
    }
    return 0;
}

static void format_index(char *buf, size_t len, const int64_t *idx, int ndim)
{
    size_t u = 0;
    u += (size_t)snprintf(buf + u, len - u, "[");
    for (int i = 0; i < ndim && u < len; i++)
        u += (size_t)snprintf(buf + u, len - u, i ? ",%lld" : "%lld", (long long)idx[i]);
    if (u < len)
        snprintf(buf + u, len - u, "]");
}

/* ---------------------------------------------------------------------------------------------
 * The instance
 * ------------------------------------------------------------------------------------------- */

enum { BUF_Q, BUF_K, BUF_V, BUF_G, BUF_BETA, BUF_OUT, BUF_POOL, BUF_CAP, BUF_COUNT };

struct gdn_check_instance {
    gdn_check_case c;
    gdn_problem problem;
    gdn_batch batch;
    gdn_tensors tensors;
    int64_t B, T, N, NT;     /* T: per sequence (dense) or T_total (packed); NT = B*T positions */
    int64_t *lens, *starts;  /* [N] */
    int64_t max_len;
    cbuf buf[BUF_COUNT];
    int has[BUF_COUNT];
    int cap_shared;          /* capture SLOTS into the state pool */
    int64_t P, Pc;           /* slots of the state pool and of a separate capture pool */
    float *A_log, *dt_bias;
    int32_t *read_slots, *write_slots; /* NULL for default slots */
    int32_t *cap_slots;
    int64_t cap_slots_stride, cap_slots_len;
    void *cu;
    int dirty;               /* a run has written the outputs since they were last restored */
};

static int64_t inst_read_slot(const gdn_check_instance *in, int64_t n)
{
    if (!in->has[BUF_POOL])
        return -1;
    return in->read_slots ? in->read_slots[n] : n;
}

static int64_t inst_write_slot(const gdn_check_instance *in, int64_t n)
{
    if (!in->has[BUF_POOL])
        return -1;
    return in->write_slots ? in->write_slots[n] : inst_read_slot(in, n);
}

/* Slot-table index of token j of sequence n. */
static int64_t inst_cap_index(const gdn_check_instance *in, int64_t n, int64_t j)
{
    return in->cap_slots_stride > 0 ? n * in->cap_slots_stride + j : in->starts[n] + j;
}

static double softplus(double x)
{
    return x > 20.0 ? x : log1p(exp(x));
}

static double inv_softplus(double y)
{
    if (y < 1e-30)
        y = 1e-30;
    return y > 20.0 ? y : log(expm1(y));
}

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

void gdn_check_instance_destroy(gdn_check_instance *in)
{
    if (!in)
        return;
    for (int i = 0; i < BUF_COUNT; i++)
        buf_free(&in->buf[i]);
    free(in->lens);
    free(in->starts);
    free(in->A_log);
    free(in->dt_bias);
    free(in->read_slots);
    free(in->write_slots);
    free(in->cap_slots);
    free(in->cu);
    free(in);
}

#define BUILD_FAIL(...)                        \
    do {                                       \
        if (err && err_len)                    \
            snprintf(err, err_len, __VA_ARGS__); \
        gdn_check_instance_destroy(in);        \
        free(vals);                            \
        return NULL;                           \
    } while (0)

gdn_check_instance *gdn_check_instance_create(const gdn_check_case *c, char *err, size_t err_len)
{
    double *vals = NULL;
    gdn_check_instance *in = (gdn_check_instance *)calloc(1, sizeof *in);
    if (!in)
        BUILD_FAIL("out of memory");
    in->c = *c;
    in->problem = c->problem;
    const gdn_problem *p = &in->problem;
    const int Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    if (Hk < 1 || Hv < 1 || Dk < 1 || Dv < 1 || Hv % Hk != 0 || Dk > 4096 || Dv > 4096)
        BUILD_FAIL("bad case: heads %d/%d dims %d/%d", Hk, Hv, Dk, Dv);
    if (c->n_seqs < 0 || c->n_seqs > GDN_CHECK_MAX_SEQS || (c->n_seqs == 0 && (c->B < 1 || c->T < 0)))
        BUILD_FAIL("bad case: batch");
    if (c->strided < 0 || c->strided > GDN_CHECK_STRIDED_MAX)
        BUILD_FAIL("bad case: strided = %d", c->strided);
    gdn_rng rng, prng; /* values; padding extents (separate, so that values do not depend on strides) */
    gdn_rng_seed(&rng, c->seed);
    gdn_rng_seed(&prng, c->seed ^ UINT64_C(0x5bd1e9955bd1e995));

    /* batch */
    const int packed = c->n_seqs > 0;
    in->N = packed ? c->n_seqs : c->B;
    in->lens = (int64_t *)calloc((size_t)in->N, sizeof(int64_t));
    in->starts = (int64_t *)calloc((size_t)in->N, sizeof(int64_t));
    if (!in->lens || !in->starts)
        BUILD_FAIL("out of memory");
    if (packed) {
        int64_t tot = 0;
        for (int64_t n = 0; n < in->N; n++) {
            if (c->seq_lens[n] < 0)
                BUILD_FAIL("bad case: seq_lens[%lld] < 0", (long long)n);
            in->starts[n] = tot;
            in->lens[n] = c->seq_lens[n];
            tot += c->seq_lens[n];
        }
        in->B = 1;
        in->T = tot;
        in->cu = malloc((size_t)(in->N + 1) * (c->cu_i64 ? 8 : 4));
        if (!in->cu)
            BUILD_FAIL("out of memory");
        for (int64_t n = 0; n <= in->N; n++) {
            const int64_t v = n < in->N ? in->starts[n] : tot;
            if (c->cu_i64)
                ((int64_t *)in->cu)[n] = v;
            else
                ((int32_t *)in->cu)[n] = (int32_t)v;
        }
        in->batch.batch_size = 1;
        in->batch.seq_len = tot;
        in->batch.num_seqs = in->N;
        in->batch.cu_seqlens = in->cu;
        in->batch.cu_seqlens_type = c->cu_i64 ? GDN_INDEX_I64 : GDN_INDEX_I32;
    } else {
        in->B = c->B;
        in->T = c->T;
        for (int64_t n = 0; n < in->N; n++) {
            in->lens[n] = c->T;
            in->starts[n] = n * c->T;
        }
        in->batch.batch_size = c->B;
        in->batch.seq_len = c->T;
    }
    in->NT = in->B * in->T;
    for (int64_t n = 0; n < in->N; n++)
        if (in->lens[n] > in->max_len)
            in->max_len = in->lens[n];
    const int64_t B = in->B, T = in->T, NT = in->NT, N = in->N;

    /* per-head gate parameters (always drawn, so that the stream does not depend on the gate) */
    in->A_log = (float *)malloc(sizeof(float) * (size_t)Hv);
    in->dt_bias = (float *)malloc(sizeof(float) * (size_t)Hv);
    if (!in->A_log || !in->dt_bias)
        BUILD_FAIL("out of memory");
    for (int h = 0; h < Hv; h++) {
        in->A_log[h] = (float)(log(16.0) * gdn_rng_uniform(&rng));
        const double dt0 = exp(log(1e-3) + (log(5e-2) - log(1e-3)) * gdn_rng_uniform(&rng));
        in->dt_bias[h] = (float)inv_softplus(dt0);
    }

    /* activations */
    size_t maxn = (size_t)(NT * (Hk * Dk > Hv * Dv ? Hk * Dk : Hv * Dv));
    if (maxn < (size_t)NT * (size_t)Hv)
        maxn = (size_t)NT * (size_t)Hv;
    vals = (double *)malloc(sizeof(double) * (maxn ? maxn : 1));
    if (!vals)
        BUILD_FAIL("out of memory");
    const int st = c->strided;
    {
        const int64_t sq[4] = {B, T, Hk, Dk}, sv[4] = {B, T, Hv, Dv}, sg[3] = {B, T, Hv};
        if (!buf_init(&in->buf[BUF_Q], "q", p->dtype, 4, sq, st, 1, &prng) ||
            !buf_init(&in->buf[BUF_K], "k", p->dtype, 4, sq, st, 1, &prng) ||
            !buf_init(&in->buf[BUF_V], "v", p->dtype, 4, sv, st, 1, &prng) ||
            !buf_init(&in->buf[BUF_G], "g", p->gate_dtype, 3, sg, st, 1, &prng) ||
            !buf_init(&in->buf[BUF_BETA], "beta", p->gate_dtype, 3, sg, st, 1, &prng))
            BUILD_FAIL("out of memory");
        in->has[BUF_Q] = in->has[BUF_K] = in->has[BUF_V] = in->has[BUF_G] = in->has[BUF_BETA] = 1;
        if (!c->no_output) {
            if (!buf_init(&in->buf[BUF_OUT], "out", p->out_dtype, 4, sv, st, 1, &prng))
                BUILD_FAIL("out of memory");
            in->has[BUF_OUT] = 1;
        }
    }
    for (int which = BUF_Q; which <= BUF_K; which++) {
        for (int64_t r = 0; r < NT * Hk; r++) {
            double *x = vals + r * Dk, ss = 0.0;
            for (int i = 0; i < Dk; i++) {
                x[i] = gdn_rng_normal(&rng);
                ss += x[i] * x[i];
            }
            if (!p->qk_l2norm && ss > 0.0)
                for (int i = 0; i < Dk; i++)
                    x[i] /= sqrt(ss);
        }
        buf_store_dense(&in->buf[which], vals);
    }
    for (int64_t i = 0; i < NT * Hv * Dv; i++)
        vals[i] = gdn_rng_normal(&rng);
    buf_store_dense(&in->buf[BUF_V], vals);
    /* g: the log-decay from the regime, then in the problem's convention */
    for (int64_t r = 0; r < NT * Hv; r++) {
        const int h = (int)(r % Hv);
        const double A = exp((double)in->A_log[h]);
        double glog, a;
        switch (c->decay) {
        case GDN_CHECK_DECAY_SLOW:
            glog = -exp(log(1e-5) + (log(1e-3) - log(1e-5)) * gdn_rng_uniform(&rng));
            a = inv_softplus(-glog / A) - (double)in->dt_bias[h];
            break;
        case GDN_CHECK_DECAY_FAST:
            glog = -30.0 * gdn_rng_uniform(&rng);
            a = inv_softplus(-glog / A) - (double)in->dt_bias[h];
            break;
        case GDN_CHECK_DECAY_EDGE: {
            const uint64_t pick = gdn_rng_below(&rng, 4);
            glog = pick == 0 ? 0.0 : pick == 1 ? -1e4 : pick == 2 ? -1e-7 * gdn_rng_uniform(&rng)
                                                                   : -30.0 * gdn_rng_uniform(&rng);
            a = inv_softplus(-glog / A) - (double)in->dt_bias[h]; /* g = 0: softplus(a) = 1e-30 */
            break;
        }
        default:
            a = 0.5 * gdn_rng_normal(&rng);
            glog = -A * softplus(a + (double)in->dt_bias[h]);
            break;
        }
        switch (p->gate) {
        case GDN_GATE_LINEAR: vals[r] = exp(glog); break;
        case GDN_GATE_NEGLOG: vals[r] = -glog; break;
        case GDN_GATE_RAW: vals[r] = a; break;
        default: vals[r] = glog; break;
        }
    }
    buf_store_dense(&in->buf[BUF_G], vals);
    for (int64_t r = 0; r < NT * Hv; r++) {
        const double b = gdn_rng_normal(&rng);
        vals[r] = p->gate == GDN_GATE_RAW ? b : sigmoid(b);
    }
    buf_store_dense(&in->buf[BUF_BETA], vals);
    free(vals);
    vals = NULL;

    /* state pool and slots */
    const int kv = p->state_layout == GDN_STATE_KV;
    const int64_t R = kv ? Dk : Dv, C = kv ? Dv : Dk;
    in->cap_shared = c->capture == GDN_CAPTURE_SLOTS && c->capture_in_pool && c->pool != GDN_CHECK_POOL_NONE;
    int *perm = NULL;
    if (c->pool != GDN_CHECK_POOL_NONE) {
        in->P = 2 * N + 3 + (in->cap_shared ? NT + 2 : 0);
        const int64_t sp[4] = {in->P, Hv, R, C};
        if (!buf_init(&in->buf[BUF_POOL], "state.pool", GDN_DTYPE_F32, 4, sp, st, 0, &prng))
            BUILD_FAIL("out of memory");
        in->has[BUF_POOL] = 1;
        const int64_t n_el = numel(sp, 4);
        vals = (double *)malloc(sizeof(double) * (size_t)(n_el ? n_el : 1));
        if (!vals)
            BUILD_FAIL("out of memory");
        for (int64_t i = 0; i < n_el; i++) /* uniform with standard deviation 0.1 (cheap) */
            vals[i] = 0.17320508075688773 * (2.0 * gdn_rng_uniform(&rng) - 1.0);
        buf_store_dense(&in->buf[BUF_POOL], vals);
        free(vals);
        vals = NULL;
        perm = (int *)malloc(sizeof(int) * (size_t)in->P);
        if (!perm)
            BUILD_FAIL("out of memory");
        for (int i = 0; i < in->P; i++)
            perm[i] = i;
        if (!(c->pool == GDN_CHECK_POOL_INPLACE && c->default_slots))
            gdn_rng_shuffle(&rng, perm, (int)in->P); /* default slots: sequence n uses slot n */
        if (!(c->pool == GDN_CHECK_POOL_INPLACE && c->default_slots)) {
            in->read_slots = (int32_t *)malloc(sizeof(int32_t) * (size_t)N);
            in->write_slots = (int32_t *)malloc(sizeof(int32_t) * (size_t)N);
            if (!in->read_slots || !in->write_slots) {
                free(perm);
                BUILD_FAIL("out of memory");
            }
            for (int64_t n = 0; n < N; n++) {
                in->read_slots[n] = perm[n];
                in->write_slots[n] = c->pool == GDN_CHECK_POOL_MOVE ? perm[N + n] : perm[n];
            }
            if (c->pool == GDN_CHECK_POOL_MOVE) {
                int64_t z = -1, w = -1, i = -1;
                if (N > 1) { /* one sequence starts from zeros */
                    z = gdn_rng_below(&rng, N);
                    in->read_slots[z] = -1;
                }
                if (N > 2) { /* one sequence's final state is dropped */
                    do
                        w = gdn_rng_below(&rng, N);
                    while (w == z);
                    in->write_slots[w] = -1;
                }
                if (N > 3) { /* one sequence in place */
                    do
                        i = gdn_rng_below(&rng, N);
                    while (i == z || i == w);
                    in->write_slots[i] = in->read_slots[i];
                }
                if (N > 4) { /* two sequences read one slot (shared prefix); its own slot stays untouched */
                    int64_t j, m;
                    do
                        j = gdn_rng_below(&rng, N);
                    while (j == z || j == i);
                    do
                        m = gdn_rng_below(&rng, N);
                    while (m == j || m == i);
                    in->read_slots[m] = in->read_slots[j];
                }
            }
        }
    }
    gdn_tensors *t = &in->tensors;
    t->q = buf_tensor(&in->buf[BUF_Q]);
    t->k = buf_tensor(&in->buf[BUF_K]);
    t->v = buf_tensor(&in->buf[BUF_V]);
    t->g = buf_tensor(&in->buf[BUF_G]);
    t->beta = buf_tensor(&in->buf[BUF_BETA]);
    if (p->gate == GDN_GATE_RAW) {
        t->A_log = in->A_log;
        t->dt_bias = in->dt_bias;
    }
    if (in->has[BUF_OUT]) {
        buf_poison_view(&in->buf[BUF_OUT]);
        t->out = buf_tensor(&in->buf[BUF_OUT]);
    }
    if (in->has[BUF_POOL]) {
        t->state.pool = buf_tensor(&in->buf[BUF_POOL]);
        t->state.read_slots = in->read_slots;
        t->state.write_slots = in->write_slots;
    }

    /* capture */
    t->capture.mode = c->capture;
    if (c->capture == GDN_CAPTURE_DENSE) {
        const int64_t sc[5] = {B, T, Hv, R, C};
        if (!buf_init(&in->buf[BUF_CAP], "capture.states", GDN_DTYPE_F32, 5, sc, st, 1, &prng)) {
            free(perm);
            BUILD_FAIL("out of memory");
        }
        in->has[BUF_CAP] = 1;
        buf_poison_view(&in->buf[BUF_CAP]);
        t->capture.states = buf_tensor(&in->buf[BUF_CAP]);
    } else if (c->capture == GDN_CAPTURE_SLOTS) {
        int *avail, n_avail, own_perm = 0;
        if (in->cap_shared) {
            avail = perm + 2 * N; /* slots no sequence reads or writes */
            n_avail = (int)(in->P - 2 * N);
            t->capture.states = t->state.pool;
        } else {
            in->Pc = NT + 3;
            const int64_t sc[4] = {in->Pc, Hv, R, C};
            if (!buf_init(&in->buf[BUF_CAP], "capture.states", GDN_DTYPE_F32, 4, sc, st, 0, &prng)) {
                free(perm);
                BUILD_FAIL("out of memory");
            }
            in->has[BUF_CAP] = 1;
            buf_poison_view(&in->buf[BUF_CAP]);
            t->capture.states = buf_tensor(&in->buf[BUF_CAP]);
            avail = (int *)malloc(sizeof(int) * (size_t)in->Pc);
            if (!avail) {
                free(perm);
                BUILD_FAIL("out of memory");
            }
            own_perm = 1;
            n_avail = (int)in->Pc;
            for (int i = 0; i < n_avail; i++)
                avail[i] = i;
            gdn_rng_shuffle(&rng, avail, n_avail);
        }
        in->cap_slots_stride = c->capture_by_position ? 0 : in->max_len + 1;
        in->cap_slots_len = c->capture_by_position ? (NT > 0 ? NT : 1) : N * in->cap_slots_stride;
        in->cap_slots = (int32_t *)malloc(sizeof(int32_t) * (size_t)in->cap_slots_len);
        if (!in->cap_slots) {
            if (own_perm)
                free(avail);
            free(perm);
            BUILD_FAIL("out of memory");
        }
        for (int64_t i = 0; i < in->cap_slots_len; i++)
            in->cap_slots[i] = INT32_MAX; /* entries past a sequence's end must never be read */
        int k = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < in->lens[n]; j++) {
                const int s = avail[k++ % n_avail];
                in->cap_slots[inst_cap_index(in, n, j)] = gdn_rng_below(&rng, 8) == 0 ? -1 : s;
            }
        /* vLLM style: one sequence also captures a token into its own read slot (not its last
           token when that one goes to the write slot) */
        const int last_in_write = in->cap_shared && c->capture_last_in_write_slot;
        if (in->cap_shared && in->read_slots) {
            for (int64_t n = 0; n < N; n++) {
                const int64_t r = in->read_slots[n], span = in->lens[n] - (last_in_write ? 1 : 0);
                int shared = 0;
                for (int64_t m = 0; m < N; m++)
                    shared |= m != n && in->read_slots[m] == r;
                if (r >= 0 && in->write_slots[n] != r && span > 0 && !shared) {
                    const int64_t j = gdn_rng_below(&rng, span);
                    in->cap_slots[inst_cap_index(in, n, j)] = (int32_t)r;
                    break;
                }
            }
        }
        /* vLLM style: the state after a sequence's last token into its own write slot */
        if (last_in_write)
            for (int64_t n = 0; n < N; n++) {
                const int64_t w = inst_write_slot(in, n);
                if (w >= 0 && in->lens[n] > 0)
                    in->cap_slots[inst_cap_index(in, n, in->lens[n] - 1)] = (int32_t)w;
            }
        if (own_perm)
            free(avail);
        t->capture.slots = in->cap_slots;
        t->capture.slots_stride = in->cap_slots_stride;
    }
    free(perm);
    for (int i = 0; i < BUF_COUNT; i++)
        if (in->has[i])
            buf_snapshot(&in->buf[i]);
    return in;
}

void gdn_check_instance_args(const gdn_check_instance *in, const gdn_problem **problem, const gdn_batch **batch,
                             const gdn_tensors **tensors)
{
    if (problem)
        *problem = &in->problem;
    if (batch)
        *batch = &in->batch;
    if (tensors)
        *tensors = &in->tensors;
}

void gdn_check_instance_buffer(const gdn_check_instance *in, int which, const void **data, size_t *bytes)
{
    const int map[3] = {BUF_OUT, BUF_POOL, BUF_CAP};
    *data = NULL;
    *bytes = 0;
    if (which < 0 || which > 2 || !in->has[map[which]])
        return;
    const cbuf *b = &in->buf[map[which]];
    *data = b->mem;
    *bytes = b->span * b->esz + 2 * GUARD_BYTES;
}

size_t gdn_check_instance_read(const gdn_check_instance *in, int which, float *dest)
{
    const gdn_problem *p = &in->problem;
    const int kv = p->state_layout == GDN_STATE_KV;
    const int64_t Hv = p->num_v_heads, Dv = p->v_dim, Dk = p->k_dim;
    size_t n = 0;
    if (which == 0) {
        if (!in->has[BUF_OUT])
            return 0;
        const cbuf *b = &in->buf[BUF_OUT];
        int64_t idx[GDN_MAX_DIMS] = {0};
        n = (size_t)numel(b->shape, b->ndim);
        for (size_t i = 0; dest && i < n; i++) {
            dest[i] = gdn_load_f32(b->data, b->dtype, offset_of(b, idx));
            next_index(idx, b->shape, b->ndim);
        }
        return n;
    }
    const cbuf *b = which == 1 ? &in->buf[BUF_POOL] : which == 2 ? &in->buf[BUF_CAP] : NULL;
    if (!b || (which == 1 && !in->has[BUF_POOL]) || (which == 2 && !in->has[BUF_CAP] && !in->cap_shared))
        return 0;
    if (which == 2 && in->cap_shared)
        b = &in->buf[BUF_POOL];
    const int dense = which == 2 && in->c.capture == GDN_CAPTURE_DENSE;
    const int64_t outer = dense ? in->NT : b->shape[0];
    n = (size_t)(outer * Hv * Dv * Dk);
    if (!dest)
        return n;
    const float *data = (const float *)b->data;
    size_t i = 0;
    for (int64_t o = 0; o < outer; o++) {
        const int64_t base = dense ? (o / (in->T ? in->T : 1)) * b->st[0] + (o % (in->T ? in->T : 1)) * b->st[1]
                                   : o * b->st[0];
        const int64_t *st = dense ? &b->st[2] : &b->st[1];
        for (int64_t h = 0; h < Hv; h++)
            for (int64_t r = 0; r < Dv; r++)
                for (int64_t c = 0; c < Dk; c++)
                    dest[i++] = data[base + h * st[0] + (kv ? c * st[1] + r * st[2] : r * st[1] + c * st[2])];
    }
    return n;
}

#ifdef GDN_HAVE_CUDA
/* The CUDA backend: mirror every buffer (whole allocations: guards and padding too) and every index
 * array on the device, run and synchronise there, copy every buffer back (so that the guards, the
 * padding, untouched slots and unchanged inputs are checked exactly as on the CPU), free. */
static void *to_device(const void *src, size_t bytes, int *fail)
{
    if (!src || *fail)
        return NULL;
    void *d = gdn_cuda_malloc(bytes);
    if (!d || gdn_cuda_memcpy(d, src, bytes)) {
        gdn_cuda_free(d);
        *fail = 1;
        return NULL;
    }
    return d;
}

static gdn_status cuda_forward(gdn_check_instance *in, gdn_context *ctx)
{
    void *dmem[BUF_COUNT] = {NULL};
    void *dcu = NULL, *drs = NULL, *dws = NULL, *dcs = NULL, *dalog = NULL, *ddt = NULL;
    gdn_tensors t = in->tensors;
    gdn_batch batch = in->batch;
    const int64_t Hv = in->problem.num_v_heads;
    int fail = 0;
    gdn_status st = GDN_STATUS_INTERNAL;
    for (int i = 0; i < BUF_COUNT; i++)
        if (in->has[i])
            dmem[i] = to_device(in->buf[i].mem, in->buf[i].span * in->buf[i].esz + 2 * GUARD_BYTES, &fail);
#define DEV(i, p) ((void *)((unsigned char *)dmem[i] + ((const unsigned char *)(p) - in->buf[i].mem)))
    if (!fail) {
        t.q.data = DEV(BUF_Q, t.q.data);
        t.k.data = DEV(BUF_K, t.k.data);
        t.v.data = DEV(BUF_V, t.v.data);
        t.g.data = DEV(BUF_G, t.g.data);
        t.beta.data = DEV(BUF_BETA, t.beta.data);
        if (in->has[BUF_OUT])
            t.out.data = DEV(BUF_OUT, t.out.data);
        if (in->has[BUF_POOL])
            t.state.pool.data = DEV(BUF_POOL, t.state.pool.data);
        if (in->cap_shared)
            t.capture.states.data = t.state.pool.data;
        else if (in->has[BUF_CAP])
            t.capture.states.data = DEV(BUF_CAP, t.capture.states.data);
    }
#undef DEV
    if (t.A_log) {
        t.A_log = dalog = to_device(in->A_log, sizeof(float) * (size_t)Hv, &fail);
        t.dt_bias = ddt = to_device(in->dt_bias, sizeof(float) * (size_t)Hv, &fail);
    }
    if (in->cu)
        batch.cu_seqlens = dcu = to_device(in->cu, (size_t)(in->N + 1) * (in->c.cu_i64 ? 8 : 4), &fail);
    if (t.state.read_slots)
        t.state.read_slots = drs = to_device(in->read_slots, sizeof(int32_t) * (size_t)in->N, &fail);
    if (t.state.write_slots)
        t.state.write_slots = dws = to_device(in->write_slots, sizeof(int32_t) * (size_t)in->N, &fail);
    if (t.capture.slots)
        t.capture.slots = dcs = to_device(in->cap_slots, sizeof(int32_t) * (size_t)in->cap_slots_len, &fail);
    if (!fail) {
        st = gdn_forward(ctx, &in->problem, &batch, &t);
        if (st == GDN_STATUS_SUCCESS)
            st = gdn_context_synchronize(ctx);
        for (int i = 0; i < BUF_COUNT; i++)
            if (in->has[i] && gdn_cuda_memcpy(in->buf[i].mem, dmem[i],
                                              in->buf[i].span * in->buf[i].esz + 2 * GUARD_BYTES))
                st = GDN_STATUS_INTERNAL;
    }
    for (int i = 0; i < BUF_COUNT; i++)
        gdn_cuda_free(dmem[i]);
    gdn_cuda_free(dcu);
    gdn_cuda_free(drs);
    gdn_cuda_free(dws);
    gdn_cuda_free(dcs);
    gdn_cuda_free(dalog);
    gdn_cuda_free(ddt);
    return st;
}
#endif

gdn_status gdn_check_instance_forward(gdn_check_instance *in, gdn_context *ctx)
{
    if (in->dirty)
        for (int i = BUF_OUT; i < BUF_COUNT; i++)
            if (in->has[i])
                buf_restore(&in->buf[i]);
    in->dirty = 1;
#ifdef GDN_HAVE_CUDA
    if (in->c.backend == GDN_BACKEND_CUDA)
        return cuda_forward(in, ctx);
#endif
    return gdn_forward(ctx, &in->problem, &in->batch, &in->tensors);
}

/* ---------------------------------------------------------------------------------------------
 * Comparison
 * ------------------------------------------------------------------------------------------- */

double gdn_check_rel_rms(const float *a, const double *ref, size_t n)
{
    double num = 0.0, den = 0.0, aa = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]))
            return INFINITY;
        const double d = (double)a[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
        aa += (double)a[i] * a[i];
    }
    if (den == 0.0)
        return sqrt(aa);
    return sqrt(num / den);
}

/* A streaming gdn_check_rel_rms that remembers where its worst element is. */
typedef struct acc {
    double num, den, aa;
    int nonfinite;
    double worst;          /* largest |got - want| (+inf for a non-finite value) */
    float wgot;
    double wwant;
    int wkind;             /* 0 out, 1 final state of sequence widx, 2 capture of position widx */
    int64_t widx;
    int wh, wr, wc;
} acc;

static void acc_add(acc *a, float got, double want, int kind, int64_t idx, int h, int r, int c)
{
    double d;
    if (!isfinite(got)) {
        if (a->nonfinite)
            return;
        a->nonfinite = 1;
        d = INFINITY;
    } else {
        d = (double)got - want;
        a->num += d * d;
        a->den += want * want;
        a->aa += (double)got * got;
        d = fabs(d);
        if (!(d > a->worst) || a->nonfinite)
            return;
    }
    a->worst = d;
    a->wgot = got;
    a->wwant = want;
    a->wkind = kind;
    a->widx = idx;
    a->wh = h;
    a->wr = r;
    a->wc = c;
}

static double acc_rel(const acc *a)
{
    if (a->nonfinite)
        return INFINITY;
    return a->den == 0.0 ? sqrt(a->aa) : sqrt(a->num / a->den);
}

/* One bit per element of a buffer's data region: set = written by the run (compared by value). */
typedef struct bits {
    uint64_t *w;
    size_t n;
} bits;

static int bits_make(bits *m, size_t n)
{
    m->n = n;
    m->w = (uint64_t *)calloc((n + 63) / 64, sizeof(uint64_t));
    return m->w != NULL;
}

static void bits_set(bits *m, int64_t e)
{
    m->w[e >> 6] |= UINT64_C(1) << (e & 63);
}

/* First element not marked whose bytes differ from the snapshot; -1 if none. */
static int64_t first_changed(const cbuf *b, const bits *m)
{
    const size_t es = b->esz;
    if (!m) {
        if (memcmp(b->data, b->init, b->span * es) == 0)
            return -1;
        for (size_t e = 0; e < b->span; e++)
            if (memcmp(b->data + e * es, b->init + e * es, es) != 0)
                return (int64_t)e;
        return -1;
    }
    for (size_t w0 = 0; w0 < b->span; w0 += 64) {
        const uint64_t w = m->w[w0 >> 6];
        const size_t len = b->span - w0 < 64 ? b->span - w0 : 64;
        if (w == ~UINT64_C(0))
            continue;
        if (w == 0 && memcmp(b->data + w0 * es, b->init + w0 * es, len * es) == 0)
            continue;
        for (size_t e = w0; e < w0 + len; e++)
            if (!((w >> (e & 63)) & 1) && memcmp(b->data + e * es, b->init + e * es, es) != 0)
                return (int64_t)e;
    }
    return -1;
}

typedef struct checker {
    gdn_check_instance *in;
    gdn_check_result *res;
    gdn_ref_result ref;
    int failed;
} checker;

static void failf(checker *ck, const char *fmt, ...)
{
    if (ck->failed)
        return;
    ck->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ck->res->message, sizeof ck->res->message, fmt, ap);
    va_end(ap);
}

/* Compare one pool slot (all heads) in the problem's layout with a reference state in vk order. */
static void compare_state(const checker *ck, acc *a, const cbuf *b, int64_t base, const int64_t *st2,
                          const double *want, int kind, int64_t idx, bits *m)
{
    const gdn_problem *p = &ck->in->problem;
    const int kv = p->state_layout == GDN_STATE_KV;
    const int Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    for (int h = 0; h < Hv; h++)
        for (int r = 0; r < Dv; r++)
            for (int c = 0; c < Dk; c++) {
                const int64_t off = base + h * st2[0] + (kv ? c * st2[1] + r * st2[2] : r * st2[1] + c * st2[2]);
                bits_set(m, off);
                acc_add(a, ((const float *)b->data)[off], want[((size_t)h * Dv + r) * Dk + c], kind, idx, h, r, c);
            }
}

/* Untouched parts of a buffer (not marked) must be bitwise as before. */
static void check_untouched(checker *ck, const cbuf *b, const bits *m, const char *what)
{
    const int64_t e = first_changed(b, m);
    if (e < 0)
        return;
    int64_t idx[GDN_MAX_DIMS];
    char where[96];
    if (decode_offset(b, e, idx)) {
        format_index(where, sizeof where, idx, b->ndim);
        failf(ck, "%s: element %s %s was modified", b->name, where, what);
    } else {
        failf(ck, "%s: padding at element offset %lld was modified", b->name, (long long)e);
    }
}

/* A pool's slots: each is written by nobody (must be unchanged), by a final state, or by a capture
 * (when both, the final state is the later write). */
static void check_pool(checker *ck, const cbuf *b, int64_t nslots, int has_final, int has_cap, acc *states,
                       acc *caps)
{
    gdn_check_instance *in = ck->in;
    const gdn_problem *p = &in->problem;
    const size_t hs = (size_t)p->num_v_heads * p->v_dim * p->k_dim;
    int *kind = (int *)calloc((size_t)nslots, sizeof(int));
    int64_t *idx = (int64_t *)calloc((size_t)nslots, sizeof(int64_t));
    bits m = {NULL, 0};
    if (!kind || !idx || !bits_make(&m, b->span)) {
        failf(ck, "check: out of memory");
        goto done;
    }
    if (has_cap)
        for (int64_t n = 0; n < in->N; n++)
            for (int64_t j = 0; j < in->lens[n]; j++) {
                const int64_t s = in->cap_slots[inst_cap_index(in, n, j)];
                if (s >= 0) {
                    kind[s] = 2;
                    idx[s] = in->starts[n] + j;
                }
            }
    if (has_final)
        for (int64_t n = 0; n < in->N; n++) {
            const int64_t w = inst_write_slot(in, n);
            if (w >= 0) {
                kind[w] = 1;
                idx[w] = n;
            }
        }
    for (int64_t s = 0; s < nslots; s++) {
        if (kind[s] == 1)
            compare_state(ck, states, b, s * b->st[0], &b->st[1], ck->ref.final_state + (size_t)idx[s] * hs, 1,
                          idx[s], &m);
        else if (kind[s] == 2)
            compare_state(ck, caps, b, s * b->st[0], &b->st[1], ck->ref.captures + (size_t)idx[s] * hs, 2, idx[s],
                          &m);
    }
    check_untouched(ck, b, &m, "(in a slot no sequence writes, or padding)");
done:
    free(kind);
    free(idx);
    free(m.w);
}

static double out_tolerance(gdn_dtype t)
{
    return t == GDN_DTYPE_BF16 ? 1e-2 : t == GDN_DTYPE_F16 ? 2e-3 : 1e-5;
}

#define STATE_TOL 1e-5
/* output and final state with problem.precision BF16 (bf16 product operands, f32 accumulation) */
#define BF16_PRODUCTS_TOL 1e-2

static void verdict(checker *ck, const acc *a, const char *what, double tol, double *err_out)
{
    *err_out = acc_rel(a);
    if (*err_out <= tol)
        return;
    char where[200];
    if (a->wkind == 0)
        snprintf(where, sizeof where, "position %lld head %d v %d: got %.6g want %.6g", (long long)a->widx, a->wh,
                 a->wr, (double)a->wgot, a->wwant);
    else
        snprintf(where, sizeof where, "%s %lld head %d [v=%d][k=%d]: got %.6g want %.6g",
                 a->wkind == 1 ? "final state of sequence" : "capture of position", (long long)a->widx, a->wh,
                 a->wr, a->wc, (double)a->wgot, a->wwant);
    if (!isfinite(*err_out))
        failf(ck, "%s: non-finite value (%s)", what, where);
    else
        failf(ck, "%s: rel RMS %.3g > %.0e (worst at %s)", what, *err_out, tol, where);
}

static size_t nz(size_t x)
{
    return x ? x : 1;
}

int gdn_check_run(const gdn_check_case *c, gdn_check_result *res)
{
    checker ck;
    gdn_context *ctx = NULL;
    acc states, caps, outs;
    memset(&states, 0, sizeof states);
    memset(&caps, 0, sizeof caps);
    memset(&outs, 0, sizeof outs);
    memset(res, 0, sizeof *res);
    memset(&ck, 0, sizeof ck);
    ck.res = res;
    res->status = GDN_STATUS_INTERNAL;
    res->tolerance = out_tolerance(c->problem.out_dtype);
    /* bf16 products (problem.precision BF16; the chunked path runs them, the token loop does not:
     * captures stay at STATE_TOL) */
    int bf16_products = c->problem.precision == GDN_PRECISION_BF16;
    if (bf16_products && res->tolerance < BF16_PRODUCTS_TOL)
        res->tolerance = BF16_PRODUCTS_TOL;

    char err[256];
    gdn_check_instance *in = gdn_check_instance_create(c, err, sizeof err);
    if (!in) {
        failf(&ck, "build: %s", err);
        goto done;
    }
    ck.in = in;
    const gdn_problem *p = &in->problem;
    const size_t NT = (size_t)in->NT, Hv = (size_t)p->num_v_heads, Dv = (size_t)p->v_dim,
                 Dk = (size_t)p->k_dim, hs = Hv * Dv * Dk;

    /* the reference, first (it reads the pristine pool) */
    if (in->has[BUF_OUT])
        ck.ref.out = (double *)malloc(sizeof(double) * nz(NT * Hv * Dv));
    if (in->has[BUF_POOL])
        ck.ref.final_state = (double *)malloc(sizeof(double) * nz((size_t)in->N * hs));
    if (c->capture != GDN_CAPTURE_NONE)
        ck.ref.captures = (double *)malloc(sizeof(double) * nz(NT * hs));
    if ((in->has[BUF_OUT] && !ck.ref.out) || (in->has[BUF_POOL] && !ck.ref.final_state) ||
        (c->capture != GDN_CAPTURE_NONE && !ck.ref.captures)) {
        failf(&ck, "check: out of memory");
        goto done;
    }
    gdn_status rs = gdn_ref_forward(&in->problem, &in->batch, &in->tensors, &ck.ref, err, sizeof err);
    if (rs != GDN_STATUS_SUCCESS) {
        failf(&ck, "reference: %s: %s", gdn_status_string(rs), err);
        goto done;
    }
    for (int i = 0; i < BUF_COUNT; i++)
        if (in->has[i] && (first_changed(&in->buf[i], NULL) >= 0 || !guards_ok(&in->buf[i]))) {
            failf(&ck, "reference: modified %s", in->buf[i].name);
            goto done;
        }

    /* the library */
    gdn_context_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.backend = c->backend;
    desc.isa = c->backend == GDN_BACKEND_CUDA ? GDN_ISA_AUTO : c->isa;
    desc.num_threads = c->threads;
    gdn_status cs = gdn_context_create(&desc, &ctx);
    if (cs != GDN_STATUS_SUCCESS) {
        failf(&ck, "gdn_context_create: %s: %s", gdn_status_string(cs), gdn_last_error(NULL));
        goto done;
    }
    /* tensor-core products (the CUDA backend's chunked kernels unless precision is F32: names ending in
       __cuda_mma or __cuda_wgmma) are held to the bf16-product tolerance, as problem.precision BF16 is */
    if (strstr(gdn_context_kernel_for(ctx, p, in->N > 0 ? in->NT / in->N : 0, c->capture != GDN_CAPTURE_NONE),
               "mma")) {
        bf16_products = 1;
        if (res->tolerance < BF16_PRODUCTS_TOL)
            res->tolerance = BF16_PRODUCTS_TOL;
    }
    res->status = gdn_check_instance_forward(in, ctx);
    if (res->status != GDN_STATUS_SUCCESS) {
        failf(&ck, "gdn_forward: %s: %s", gdn_status_string(res->status), gdn_last_error(ctx));
        goto done;
    }

    /* guards and inputs */
    for (int i = 0; i < BUF_COUNT; i++)
        if (in->has[i] && !guards_ok(&in->buf[i])) {
            failf(&ck, "%s: guard region overwritten", in->buf[i].name);
            goto done;
        }
    for (int i = BUF_Q; i <= BUF_BETA; i++)
        check_untouched(&ck, &in->buf[i], NULL, "(an input)");
    if (ck.failed)
        goto done;

    /* output */
    if (in->has[BUF_OUT]) {
        const cbuf *b = &in->buf[BUF_OUT];
        bits m;
        if (!bits_make(&m, b->span)) {
            failf(&ck, "check: out of memory");
            goto done;
        }
        int64_t idx[GDN_MAX_DIMS] = {0};
        const size_t n = NT * Hv * Dv;
        for (size_t i = 0; i < n; i++) {
            const int64_t off = offset_of(b, idx);
            bits_set(&m, off);
            acc_add(&outs, gdn_load_f32(b->data, b->dtype, off), ck.ref.out[i], 0, (int64_t)(i / (Hv * Dv)),
                    (int)(i / Dv % Hv), (int)(i % Dv), 0);
            next_index(idx, b->shape, b->ndim);
        }
        check_untouched(&ck, b, &m, "(padding)");
        free(m.w);
        verdict(&ck, &outs, "out", res->tolerance, &res->out_err);
    }

    /* state pool (final states; captures too when shared) and capture */
    if (in->has[BUF_POOL])
        check_pool(&ck, &in->buf[BUF_POOL], in->P, 1, in->cap_shared, &states, &caps);
    if (c->capture == GDN_CAPTURE_SLOTS && !in->cap_shared)
        check_pool(&ck, &in->buf[BUF_CAP], in->Pc, 0, 1, &states, &caps);
    if (c->capture == GDN_CAPTURE_DENSE) {
        const cbuf *b = &in->buf[BUF_CAP];
        bits m;
        if (!bits_make(&m, b->span)) {
            failf(&ck, "check: out of memory");
            goto done;
        }
        for (size_t pos = 0; pos < NT; pos++) {
            const int64_t bb = (int64_t)pos / in->T, tt = (int64_t)pos % in->T;
            compare_state(&ck, &caps, b, bb * b->st[0] + tt * b->st[1], &b->st[2], ck.ref.captures + pos * hs, 2,
                          (int64_t)pos, &m);
        }
        check_untouched(&ck, b, &m, "(padding)");
        free(m.w);
    }
    verdict(&ck, &states, "final state", bf16_products ? BF16_PRODUCTS_TOL : STATE_TOL, &res->state_err);
    verdict(&ck, &caps, "capture", STATE_TOL, &res->capture_err);

done:
    res->pass = !ck.failed;
    if (res->pass)
        res->message[0] = '\0';
    free(ck.ref.out);
    free(ck.ref.final_state);
    free(ck.ref.captures);
    gdn_context_destroy(ctx);
    gdn_check_instance_destroy(in);
    return res->pass;
}

/* ---------------------------------------------------------------------------------------------
 * Description
 * ------------------------------------------------------------------------------------------- */

static const char *gate_name(gdn_gate g)
{
    switch (g) {
    case GDN_GATE_LOG: return "log";
    case GDN_GATE_LINEAR: return "linear";
    case GDN_GATE_NEGLOG: return "neglog";
    case GDN_GATE_RAW: return "raw";
    }
    return "?";
}

void gdn_check_describe(const gdn_check_case *c, char *buf, size_t len)
{
    static const char *decay[] = {"model", "slow", "fast", "edge"};
    static const char *pool[] = {"none", "inplace", "move"};
    static const char *capture[] = {"none", "dense", "slots"};
    static const char *strided[] = {"contig", "padded", "permuted", "inner2"};
    const gdn_problem *p = &c->problem;
    char batch[160], cap[48], scale[24];
    size_t u = 0;
    if (c->n_seqs > 0) {
        u += (size_t)snprintf(batch, sizeof batch, "packed%s[", c->cu_i64 ? "64" : "");
        for (int i = 0; i < c->n_seqs && u < sizeof batch; i++)
            u += (size_t)snprintf(batch + u, sizeof batch - u, i ? ",%lld" : "%lld", (long long)c->seq_lens[i]);
        if (u < sizeof batch)
            snprintf(batch + u, sizeof batch - u, "]");
    } else {
        snprintf(batch, sizeof batch, "B=%lld T=%lld", (long long)c->B, (long long)c->T);
    }
    snprintf(cap, sizeof cap, "%s%s%s%s", (unsigned)c->capture <= 2 ? capture[c->capture] : "?",
             c->capture == GDN_CAPTURE_SLOTS && c->capture_in_pool ? "+inpool" : "",
             c->capture == GDN_CAPTURE_SLOTS && c->capture_in_pool && c->capture_last_in_write_slot ? "+lastinwrite"
                                                                                                    : "",
             c->capture == GDN_CAPTURE_SLOTS && c->capture_by_position ? "+bypos" : "");
    if (p->scale == 0.0f)
        snprintf(scale, sizeof scale, "default");
    else
        snprintf(scale, sizeof scale, "%g", (double)p->scale);
    snprintf(buf, len,
             "isa=%s thr=%d dtype=%s out=%s gate_dtype=%s heads=%s gate=%s layout=%s l2norm=%d scale=%s algo=%s "
             "Hk=%d Hv=%d Dk=%d Dv=%d %s decay=%s pool=%s%s capture=%s strides=%s%s%s seed=0x%llx",
             c->backend == GDN_BACKEND_CUDA ? "cuda" : gdn_isa_name(c->isa), c->threads, gdn_dtype_name(p->dtype), gdn_dtype_name(p->out_dtype),
             gdn_dtype_name(p->gate_dtype), p->head_map == GDN_HEADS_TILED ? "tiled" : "grouped", gate_name(p->gate),
             p->state_layout == GDN_STATE_KV ? "kv" : "vk", p->qk_l2norm != 0, scale,
             p->algo == GDN_ALGO_AUTO        ? "auto"
             : p->algo == GDN_ALGO_RECURRENT ? "recurrent"
             : p->algo == GDN_ALGO_CHUNKED   ? "chunked"
                                             : "?",
             p->num_k_heads,
             p->num_v_heads, p->k_dim, p->v_dim, batch, (unsigned)c->decay <= 3 ? decay[c->decay] : "?",
             (unsigned)c->pool <= 2 ? pool[c->pool] : "?",
             c->pool == GDN_CHECK_POOL_INPLACE && c->default_slots ? "(default slots)" : "", cap,
             (unsigned)c->strided <= 3 ? strided[c->strided] : "?", c->no_output ? " no-output" : "",
             c->problem.precision == GDN_PRECISION_BF16  ? " precision=bf16"
             : c->problem.precision == GDN_PRECISION_F32 ? " precision=f32"
                                                         : "",
             (unsigned long long)c->seed);
}
