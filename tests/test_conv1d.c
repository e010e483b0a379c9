/*
 * test_conv1d — the causal convolution (gdn_conv1d_forward) on the CPU.
 *
 * 1. Against the float64 reference (src/ref/conv_ref.c), for every ISA this CPU supports: every width
 *    2..8, x/y in f32, bf16 and f16, silu and no activation, with and without bias, dense batches and
 *    packed varlen (int32 and int64 offsets; empty, 1-token, shorter-than-W-1 and multi-block
 *    sequences), no pool / slots in place / moved / negative read and write slots, dense and slotted
 *    capture (into a separate pool, by position or by row stride, and into the state pool itself, also
 *    with the last token's state into the write slot), y NULL (replay), strided x/y/weight views and a
 *    [slot][W-1][C] state layout. y within 1e-6 relative RMS (f32; bf16 4e-3, f16 1e-3); final states
 *    and captures are exact (they are copies of the inputs); everything outside the written views,
 *    slots nobody writes included, is unchanged.
 * 2. Threads 1, 2, 3: every byte of y, pool and capture identical; AVX2 and AVX-512 identical too (same
 *    instruction sequence per lane).
 * 3. Invariants: prefill(T) == T chained decodes (bitwise); rollback after a K = 4 token verify for every
 *    accepted count n = 0..4: the capture n-1 (or the pre-verify state) equals decoding only the n
 *    accepted tokens, continuing from it gives the same next output, and replay (the n tokens again from
 *    the pre-verify slot with y NULL) gives the same state; y in place of x.
 * 4. Errors: each invalid argument gets INVALID_ARGUMENT, a message naming it, and nothing is written.
 * 5. bf16 outputs that are f32 denormals (the AVX-512 kernel's vcvtneps2bf16 would flush them): every ISA
 *    rounds them like core/dtype.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "gdn/gdn.h"
#include "ref/ref.h"
#include "conv_capture.h"
#include "guard.h"

static int failures, checks;

#define CHECK(cond, ...)                      \
    do {                                      \
        checks++;                             \
        if (!(cond)) {                        \
            failures++;                       \
            printf("FAIL ");                  \
            printf(__VA_ARGS__);              \
            printf("\n");                     \
        }                                     \
    } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float urand(float lo, float hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (float)((rng_state >> 40) * (1.0 / 16777216.0));
}

static gdn_context *make_ctx(gdn_isa isa, int threads)
{
    gdn_context_desc d;
    memset(&d, 0, sizeof d);
    d.isa = isa;
    d.num_threads = threads;
    gdn_context *ctx = NULL;
    if (gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS) {
        printf("FAIL cannot create a context (isa %s, %d threads): %s\n", gdn_isa_name(isa), threads,
               gdn_last_error(NULL));
        exit(1);
    }
    return ctx;
}

/* ---- 1. cases against the reference ---------------------------------------------------------- */

enum { POOL_NONE, POOL_INPLACE, POOL_MOVE, POOL_NEGATIVE };

typedef struct ccase {
    int C, W;
    gdn_conv_activation act;
    gdn_dtype dtype;
    int bias;
    int64_t B, T;   /* dense (nseq == 0) */
    int nseq;       /* packed: nseq sequences of lens[] */
    int64_t lens[8];
    int idx64;
    int pool, cap, no_y;
    int strided; /* 1: padded x/y rows, weight stored [W][C]; 2: states stored [slot][W-1][C] */
} ccase;

/* Outputs of one library run, kept for bitwise comparisons. */
typedef struct outs {
    unsigned char *y;
    size_t y_bytes;
    float *pool, *cap;
    size_t pool_n, cap_n;
} outs;

static void outs_free(outs *o)
{
    free(o->y);
    free(o->pool);
    free(o->cap);
    memset(o, 0, sizeof *o);
}

static int outs_equal(const outs *a, const outs *b)
{
    return a->y_bytes == b->y_bytes && a->pool_n == b->pool_n && a->cap_n == b->cap_n &&
           (!a->y_bytes || !memcmp(a->y, b->y, a->y_bytes)) &&
           (!a->pool_n || !memcmp(a->pool, b->pool, a->pool_n * sizeof(float))) &&
           (!a->cap_n || !memcmp(a->cap, b->cap, a->cap_n * sizeof(float)));
}

static void describe(const ccase *c, char *s, size_t n)
{
    static const char *pools[] = {"none", "inplace", "move", "negative"};
    static const char *caps[] = {"none", "dense", "slots", "slots-stride", "in-pool", "in-pool-last"};
    int u = snprintf(s, n, "C=%d W=%d %s %s%s ", c->C, c->W, gdn_dtype_name(c->dtype),
                     c->act == GDN_CONV_SILU ? "silu" : "none", c->bias ? " bias" : "");
    if (c->nseq) {
        u += snprintf(s + u, n - (size_t)u, "packed%s[", c->idx64 ? "64" : "32");
        for (int i = 0; i < c->nseq; i++)
            u += snprintf(s + u, n - (size_t)u, i ? ",%lld" : "%lld", (long long)c->lens[i]);
        u += snprintf(s + u, n - (size_t)u, "]");
    } else {
        u += snprintf(s + u, n - (size_t)u, "B=%lld T=%lld", (long long)c->B, (long long)c->T);
    }
    snprintf(s + u, n - (size_t)u, " pool=%s cap=%s%s strided=%d", pools[c->pool], caps[c->cap],
             c->no_y ? " y=NULL" : "", c->strided);
}

#define SENT 0xA5

/* Runs the case on ctx, checks it against the reference; returns the outputs in *o when o != NULL. */
static void run_case(gdn_context *ctx, const ccase *c, outs *o, const char *tag)
{
    char name[256];
    ccase fixed = *c;
    if (fixed.pool == POOL_NONE && (fixed.cap == CONV_CAP_IN_POOL || fixed.cap == CONV_CAP_IN_POOL_LAST))
        fixed.cap = CONV_CAP_SLOTS; /* no pool to capture into */
    c = &fixed;
    describe(c, name, sizeof name);
    const int C = c->C, W = c->W, K = W - 1, packed = c->nseq > 0;
    const int64_t N = packed ? c->nseq : c->B, Bv = packed ? 1 : c->B;
    int64_t Tv = c->T, maxlen = c->T;
    int64_t cu[9] = {0};
    if (packed) {
        Tv = 0;
        maxlen = 0;
        for (int i = 0; i < c->nseq; i++) {
            Tv += c->lens[i];
            cu[i + 1] = Tv;
            if (c->lens[i] > maxlen)
                maxlen = c->lens[i];
        }
    }
    int32_t cu32[9];
    for (int i = 0; i <= c->nseq; i++)
        cu32[i] = (int32_t)cu[i];
    const int64_t ntok = Bv * Tv;
    const size_t es = gdn_dtype_size(c->dtype);
    const int64_t xp = c->strided == 1 ? C + 5 : C; /* row pitch of x and y */

    /* inputs */
    void *x = malloc((size_t)(ntok * xp + 1) * es);
    for (int64_t i = 0; i < ntok * xp; i++)
        gdn_store_f32(x, c->dtype, i, urand(-1.5f, 1.5f));
    float *w = (float *)malloc(sizeof(float) * (size_t)(C * W));
    for (int64_t i = 0; i < (int64_t)C * W; i++)
        w[i] = urand(-0.6f, 0.6f);
    float *bias = (float *)malloc(sizeof(float) * (size_t)C);
    for (int i = 0; i < C; i++)
        bias[i] = urand(-0.3f, 0.3f);

    gdn_conv_problem pr;
    memset(&pr, 0, sizeof pr);
    pr.channels = C;
    pr.width = W;
    pr.activation = c->act;
    pr.dtype = c->dtype;
    gdn_batch ba;
    memset(&ba, 0, sizeof ba);
    ba.batch_size = Bv;
    ba.seq_len = Tv;
    if (packed) {
        ba.num_seqs = c->nseq;
        ba.cu_seqlens = c->idx64 ? (const void *)cu : (const void *)cu32;
        ba.cu_seqlens_type = c->idx64 ? GDN_INDEX_I64 : GDN_INDEX_I32;
    }
    gdn_conv_tensors te;
    memset(&te, 0, sizeof te);
    const int64_t sx[3] = {Bv, Tv, C}, sw[2] = {C, W};
    te.x = gdn_tensor_contiguous(x, 3, sx);
    te.weight = gdn_tensor_contiguous(w, 2, sw);
    if (c->strided == 1) {
        te.x.strides[0] = Tv * xp;
        te.x.strides[1] = xp;
        te.x.strides[2] = 1;
        te.weight.strides[0] = 1; /* stored [W][C] */
        te.weight.strides[1] = C;
    }
    te.bias = c->bias ? bias : NULL;

    const size_t y_bytes = (size_t)(ntok * xp) * es + 16;
    unsigned char *y = (unsigned char *)malloc(y_bytes);
    memset(y, SENT, y_bytes);
    if (!c->no_y) {
        te.y = te.x;
        te.y.data = y;
    }

    /* state pool: 2N state slots (+ one per token for capture in the pool) + 1 nobody touches */
    const int in_pool = c->cap == CONV_CAP_IN_POOL || c->cap == CONV_CAP_IN_POOL_LAST;
    const int64_t nslots = 2 * N + (in_pool ? ntok : 0) + 1;
    const size_t pool_n = (size_t)(nslots * C * K);
    float *pool = (float *)malloc(sizeof(float) * pool_n), *pool0 = (float *)malloc(sizeof(float) * pool_n);
    for (size_t i = 0; i < pool_n; i++)
        pool0[i] = pool[i] = urand(-1.5f, 1.5f);
    /* element of (slot, channel, j) in the pool */
#define PIDX(s, ch, j) (c->strided == 2 ? ((s) * K + (j)) * C + (ch) : ((s) * C + (ch)) * K + (j))
    int32_t rsl[8], wsl[8];
    if (c->pool != POOL_NONE) {
        const int64_t sp[3] = {nslots, C, K};
        te.state.pool = gdn_tensor_contiguous(pool, 3, sp);
        if (c->strided == 2) {
            te.state.pool.strides[0] = C * K;
            te.state.pool.strides[1] = 1;
            te.state.pool.strides[2] = C;
        }
        for (int64_t n = 0; n < N; n++) {
            rsl[n] = (int32_t)n;
            wsl[n] = (int32_t)(c->pool == POOL_MOVE ? N + n : n);
        }
        if (c->pool == POOL_NEGATIVE) {
            rsl[0] = -1;
            wsl[N - 1] = -1;
        }
        if (c->pool != POOL_INPLACE) { /* in place: NULL arrays, i.e. slot n */
            te.state.read_slots = rsl;
            te.state.write_slots = wsl;
        }
    }

    /* capture */
    float *cap = NULL;
    size_t cap_n = 0;
    int64_t cap_slots = 0;
    int32_t *tab = NULL;
    const int64_t stride = maxlen + 2;
    if (c->cap == CONV_CAP_DENSE) {
        cap_n = (size_t)(ntok * C * K);
        const int64_t sc[4] = {Bv, Tv, C, K};
        te.capture.states = gdn_tensor_contiguous(NULL, 4, sc);
        if (c->strided == 2) { /* [B][T][K][C] */
            te.capture.states.strides[0] = Tv * K * C;
            te.capture.states.strides[1] = K * C;
            te.capture.states.strides[2] = 1;
            te.capture.states.strides[3] = C;
        }
    } else if (c->cap == CONV_CAP_SLOTS || c->cap == CONV_CAP_SLOTS_STRIDE) {
        cap_slots = (c->cap == CONV_CAP_SLOTS ? ntok : N * stride) + 1;
        cap_n = (size_t)(cap_slots * C * K);
    }
    if (cap_n) {
        cap = (float *)malloc(sizeof(float) * cap_n);
        memset(cap, SENT, sizeof(float) * cap_n);
    }
    if (c->cap != CONV_CAP_NONE && c->cap != CONV_CAP_DENSE) {
        const conv_cap_shape cs = {N, c->T, Tv, stride, cap_slots, packed, cu, c->lens, C, K, c->strided == 2};
        size_t tab_n;
        tab = conv_capture_slots(&te, c->cap, &cs, te.state.write_slots, cap, &tab_n);
    } else if (c->cap == CONV_CAP_DENSE) {
        te.capture.mode = GDN_CAPTURE_DENSE;
        te.capture.states.data = cap;
    }

    /* reference (before the call: in-place pools) */
    gdn_conv_ref_result rr;
    rr.y = (double *)calloc((size_t)(ntok * C) + 1, sizeof(double));
    rr.final_state = (double *)calloc((size_t)(N * C * K), sizeof(double));
    rr.captures = (double *)calloc((size_t)(ntok * C * K) + 1, sizeof(double));
    char err[512];
    gdn_status rst = gdn_ref_conv1d(&pr, &ba, &te, &rr, err, sizeof err);
    CHECK(rst == GDN_STATUS_SUCCESS, "%s %s: reference failed: %s", tag, name, err);

    gdn_status st = gdn_conv1d_forward(ctx, &pr, &ba, &te);
    CHECK(st == GDN_STATUS_SUCCESS, "%s %s: status %s: %s", tag, name, gdn_status_string(st), gdn_last_error(ctx));
    if (st == GDN_STATUS_SUCCESS && rst == GDN_STATUS_SUCCESS) {
        /* y */
        double num = 0, den = 0;
        int pad_ok = 1;
        for (int64_t tok = 0; tok < ntok; tok++)
            for (int64_t ch = 0; ch < xp; ch++) {
                if (c->no_y || ch >= C) {
                    for (size_t e = 0; e < es; e++)
                        pad_ok &= y[(size_t)(tok * xp + ch) * es + e] == SENT;
                    continue;
                }
                const double got = gdn_load_f32(y, c->dtype, tok * xp + ch), want = rr.y[tok * C + ch];
                num += (got - want) * (got - want);
                den += want * want;
            }
        for (size_t e = (size_t)(ntok * xp) * es; e < y_bytes; e++)
            pad_ok &= y[e] == SENT;
        const double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        const double tol = c->dtype == GDN_DTYPE_F32 ? 1e-6 : c->dtype == GDN_DTYPE_BF16 ? 4e-3 : 1e-3;
        CHECK(rel <= tol && rel == rel, "%s %s: y relative RMS %.3g > %.1g", tag, name, rel, tol);
        CHECK(pad_ok, "%s %s: y written outside its view (or with y NULL)", tag, name);

        /* expected pool and capture pool: initial contents, then captures, then final writes */
        float *epool = (float *)malloc(sizeof(float) * pool_n);
        memcpy(epool, pool0, sizeof(float) * pool_n);
        float *ecap = cap_n ? (float *)malloc(sizeof(float) * cap_n) : NULL;
        if (ecap)
            memset(ecap, SENT, sizeof(float) * cap_n);
        for (int64_t n = 0; n < N; n++) {
            const int64_t b = packed ? 0 : n, t0 = packed ? cu[n] : 0, len = packed ? c->lens[n] : c->T;
            for (int64_t j = 0; j < len; j++) {
                const int64_t pos = b * Tv + t0 + j;
                const double *src = rr.captures + pos * C * K;
                if (c->cap == CONV_CAP_DENSE) {
                    for (int ch = 0; ch < C; ch++)
                        for (int jj = 0; jj < K; jj++)
                            ecap[c->strided == 2 ? (pos * K + jj) * C + ch : (pos * C + ch) * K + jj] =
                                (float)src[ch * K + jj];
                } else if (c->cap != CONV_CAP_NONE) {
                    const int64_t s = tab[c->cap == CONV_CAP_SLOTS_STRIDE ? n * stride + j : pos];
                    if (s < 0)
                        continue;
                    float *dst = in_pool ? epool : ecap;
                    for (int ch = 0; ch < C; ch++)
                        for (int jj = 0; jj < K; jj++)
                            dst[PIDX(s, ch, jj)] = (float)src[ch * K + jj];
                }
            }
        }
        if (c->pool != POOL_NONE)
            for (int64_t n = 0; n < N; n++) {
                const int64_t ws = te.state.write_slots ? wsl[n] : n;
                if (ws < 0)
                    continue;
                for (int ch = 0; ch < C; ch++)
                    for (int jj = 0; jj < K; jj++)
                        epool[PIDX(ws, ch, jj)] = (float)rr.final_state[(n * C + ch) * K + jj];
            }
        CHECK(!memcmp(epool, pool, sizeof(float) * pool_n), "%s %s: state pool differs from the reference", tag,
              name);
        CHECK(!cap_n || !memcmp(ecap, cap, sizeof(float) * cap_n), "%s %s: captures differ from the reference", tag,
              name);
        free(epool);
        free(ecap);
    }
    if (o) {
        o->y = y;
        o->y_bytes = y_bytes;
        o->pool = pool;
        o->pool_n = pool_n;
        o->cap = cap;
        o->cap_n = cap_n;
    } else {
        free(y);
        free(pool);
        free(cap);
    }
#undef PIDX
    free(x);
    free(w);
    free(bias);
    free(pool0);
    free(tab);
    free(rr.y);
    free(rr.final_state);
    free(rr.captures);
}

static ccase dense(int C, int W, gdn_dtype dt, int64_t B, int64_t T)
{
    ccase c;
    memset(&c, 0, sizeof c);
    c.C = C;
    c.W = W;
    c.dtype = dt;
    c.B = B;
    c.T = T;
    c.bias = 1;
    c.pool = POOL_INPLACE;
    return c;
}

static ccase packed(int C, int W, gdn_dtype dt, int n, const int64_t *lens)
{
    ccase c = dense(C, W, dt, 1, 0);
    c.nseq = n;
    for (int i = 0; i < n; i++)
        c.lens[i] = lens[i];
    return c;
}

/* Every case of the matrix for one context; with keep, the outputs of case i are stored in keep[i]
 * (the number of cases is returned). */
static int matrix(gdn_context *ctx, const char *tag, outs *keep)
{
    int i = 0;
    static const int64_t lens_a[] = {0, 1, 2, 9, 0, 70}, lens_b[] = {3, 0, 1, 5};
    for (int W = 2; W <= 8; W++)
        for (int d = 0; d < 3; d++) {
            const gdn_dtype dt = (gdn_dtype)d;
            const int v = W * 3 + d; /* varies the other settings over the matrix */
            ccase c = dense(v % 2 ? 40 : 19, W, dt, 2, v % 4 == 0 ? 1 : 7);
            c.act = v % 2 ? GDN_CONV_SILU : GDN_CONV_NONE;
            c.bias = v % 3 != 0;
            c.pool = v % 4;
            c.cap = v % 6;
            c.strided = v % 5 == 0 ? 1 : v % 5 == 1 ? 2 : 0;
            run_case(ctx, &c, keep ? &keep[i] : NULL, tag), i++;

            ccase p = packed(v % 2 ? 33 : 48, W, dt, 6, lens_a);
            p.act = v % 2 ? GDN_CONV_NONE : GDN_CONV_SILU;
            p.bias = v % 2;
            p.idx64 = v % 2;
            p.pool = (v + 1) % 4;
            p.cap = (v + 3) % 6;
            p.strided = v % 3;
            run_case(ctx, &p, keep ? &keep[i] : NULL, tag), i++;

            ccase r = packed(24, W, dt, 4, lens_b); /* replay: no y */
            r.no_y = 1;
            r.pool = v % 2 ? POOL_MOVE : POOL_INPLACE;
            r.cap = (v % 3 == 0) ? CONV_CAP_IN_POOL : CONV_CAP_NONE;
            run_case(ctx, &r, keep ? &keep[i] : NULL, tag), i++;
        }
    /* sizes: several channel blocks with a tail, long prefill, the Qwen3.6-35B-A3B decode shape */
    ccase c = dense(300, 4, GDN_DTYPE_BF16, 2, 130);
    c.act = GDN_CONV_SILU;
    run_case(ctx, &c, keep ? &keep[i] : NULL, tag), i++;
    c = dense(8192, 4, GDN_DTYPE_BF16, 3, 1);
    c.pool = POOL_MOVE;
    run_case(ctx, &c, keep ? &keep[i] : NULL, tag), i++;
    c = dense(8192, 4, GDN_DTYPE_F32, 2, 4);
    c.cap = CONV_CAP_IN_POOL_LAST;
    run_case(ctx, &c, keep ? &keep[i] : NULL, tag), i++;
    c = dense(1, 3, GDN_DTYPE_F32, 5, 3); /* one channel */
    c.pool = POOL_NEGATIVE;
    c.cap = CONV_CAP_SLOTS;
    run_case(ctx, &c, keep ? &keep[i] : NULL, tag), i++;
    return i;
}

#define MAX_CASES 80

static void reference_and_threads(void)
{
    const gdn_isa isas[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    outs *simd = NULL; /* AVX2 results, compared with AVX-512 */
    int nsimd = 0;
    for (int k = 0; k < 3; k++) {
        if (!gdn_cpu_supports(isas[k])) {
            printf("skip %s: not supported by this CPU\n", gdn_isa_name(isas[k]));
            continue;
        }
        outs base[MAX_CASES], other[MAX_CASES];
        rng_state = 0x9E3779B97F4A7C15ull; /* the same inputs for every ISA */
        memset(base, 0, sizeof base);
        memset(other, 0, sizeof other);
        gdn_context *ctx = make_ctx(isas[k], 1);
        char tag[64];
        snprintf(tag, sizeof tag, "[%s 1 thread]", gdn_isa_name(isas[k]));
        const uint64_t seed = rng_state;
        const int n = matrix(ctx, tag, base);
        gdn_context_destroy(ctx);
        for (int threads = 2; threads <= 3; threads++) {
            ctx = make_ctx(isas[k], threads);
            snprintf(tag, sizeof tag, "[%s %d threads]", gdn_isa_name(isas[k]), threads);
            rng_state = seed; /* the same inputs */
            matrix(ctx, tag, other);
            for (int i = 0; i < n; i++) {
                CHECK(outs_equal(&base[i], &other[i]), "%s case %d: outputs differ from 1 thread", tag, i);
                outs_free(&other[i]);
            }
            gdn_context_destroy(ctx);
        }
        if (isas[k] == GDN_ISA_AVX2) {
            simd = (outs *)calloc(MAX_CASES, sizeof(outs));
            memcpy(simd, base, sizeof base);
            nsimd = n;
        } else {
            if (isas[k] == GDN_ISA_AVX512 && simd)
                for (int i = 0; i < n && i < nsimd; i++)
                    CHECK(outs_equal(&base[i], &simd[i]), "case %d: AVX-512 differs from AVX2", i);
            for (int i = 0; i < n; i++)
                outs_free(&base[i]);
        }
    }
    if (simd) {
        for (int i = 0; i < nsimd; i++)
            outs_free(&simd[i]);
        free(simd);
    }
}

/* ---- 3. invariants ------------------------------------------------------------------------------ */

/* A small driver for the invariants: f32 x [B=1,T,C], pool [slots][C][K] contiguous. */
typedef struct inv {
    gdn_context *ctx;
    gdn_conv_problem pr;
    int C, K;
    float *w, *bias, *pool;
    int64_t slots;
} inv;

/* Runs tokens x[0..T) of one sequence from slot rs to slot ws; y (T*C) may be NULL; capture: 0 none,
 * 1 dense into cap [T][C][K], 2 slots cap_slot0 + t of the pool. */
static gdn_status inv_run(inv *v, const float *x, int64_t T, int32_t rs, int32_t ws, float *y, int capture,
                          float *cap, int32_t cap_slot0)
{
    gdn_batch ba;
    memset(&ba, 0, sizeof ba);
    ba.batch_size = 1;
    ba.seq_len = T;
    gdn_conv_tensors te;
    memset(&te, 0, sizeof te);
    const int64_t sx[3] = {1, T, v->C}, sw[2] = {v->C, v->K + 1}, sp[3] = {v->slots, v->C, v->K},
                  sc[4] = {1, T, v->C, v->K};
    te.x = gdn_tensor_contiguous(x, 3, sx);
    te.weight = gdn_tensor_contiguous(v->w, 2, sw);
    te.bias = v->bias;
    if (y)
        te.y = gdn_tensor_contiguous(y, 3, sx);
    te.state.pool = gdn_tensor_contiguous(v->pool, 3, sp);
    te.state.read_slots = &rs;
    te.state.write_slots = &ws;
    int32_t tab[16];
    if (capture == 1) {
        te.capture.mode = GDN_CAPTURE_DENSE;
        te.capture.states = gdn_tensor_contiguous(cap, 4, sc);
    } else if (capture == 2) {
        for (int t = 0; t < T && t < 16; t++)
            tab[t] = cap_slot0 + t;
        te.capture.mode = GDN_CAPTURE_SLOTS;
        te.capture.states = te.state.pool;
        te.capture.slots = tab;
    }
    return gdn_conv1d_forward(v->ctx, &v->pr, &ba, &te);
}

static float *slot_ptr(inv *v, int64_t s)
{
    return v->pool + s * v->C * v->K;
}

static void invariants(gdn_isa isa)
{
    enum { C = 100, W = 4, K = 3, T = 9, NS = 16 };
    inv v;
    memset(&v, 0, sizeof v);
    v.ctx = make_ctx(isa, 2);
    v.pr.channels = C;
    v.pr.width = W;
    v.C = C;
    v.K = K;
    v.slots = NS;
    float w[C * W], bias[C], x[T * C], pool[NS * C * K], y_pre[T * C], y_dec[T * C], cap[T * C * K];
    for (int i = 0; i < C * W; i++)
        w[i] = urand(-0.6f, 0.6f);
    for (int i = 0; i < C; i++)
        bias[i] = urand(-0.3f, 0.3f);
    for (int i = 0; i < T * C; i++)
        x[i] = urand(-1.5f, 1.5f);
    for (int i = 0; i < NS * C * K; i++)
        pool[i] = urand(-1.5f, 1.5f);
    v.w = w;
    v.bias = bias;
    v.pool = pool;
    const char *tag = gdn_isa_name(isa);
    const size_t SB = sizeof(float) * C * K;

    /* prefill(T) == T chained decodes: slot 0 -> slot 1 by prefill; slot 0 copied to 2, decoded in place */
    CHECK(inv_run(&v, x, T, 0, 1, y_pre, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s prefill: %s", tag,
          gdn_last_error(v.ctx));
    memcpy(slot_ptr(&v, 2), slot_ptr(&v, 0), SB);
    for (int t = 0; t < T; t++)
        CHECK(inv_run(&v, x + t * C, 1, 2, 2, y_dec + t * C, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s decode: %s", tag,
              gdn_last_error(v.ctx));
    CHECK(!memcmp(y_pre, y_dec, sizeof y_pre), "%s: prefill y != chained decodes", tag);
    CHECK(!memcmp(slot_ptr(&v, 1), slot_ptr(&v, 2), SB), "%s: prefill state != chained decodes", tag);

    /* rollback: pre-verify state in slot 3; verify the 4 drafts x[0..4) without writing the final state
       (write slot -1), capturing into slots 4..7 (and densely); for every n accepted: */
    enum { KD = 4 };
    float xn[C], y_a[C], y_b[C];
    for (int i = 0; i < C; i++)
        xn[i] = urand(-1.5f, 1.5f);
    memcpy(slot_ptr(&v, 3), slot_ptr(&v, 0), SB);
    CHECK(inv_run(&v, x, KD, 3, -1, y_pre, 2, NULL, 4) == GDN_STATUS_SUCCESS, "%s verify: %s", tag,
          gdn_last_error(v.ctx));
    CHECK(inv_run(&v, x, KD, 3, -1, NULL, 1, cap, 0) == GDN_STATUS_SUCCESS, "%s verify (dense): %s", tag,
          gdn_last_error(v.ctx));
    for (int n = 0; n <= KD; n++) {
        /* decoding only the n accepted tokens: slot 3 -> slot 8 */
        CHECK(inv_run(&v, x, n, 3, 8, NULL, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s accepted %d: %s", tag, n,
              gdn_last_error(v.ctx));
        const int32_t from = n == 0 ? 3 : 4 + n - 1;
        CHECK(!memcmp(slot_ptr(&v, from), slot_ptr(&v, 8), SB), "%s rollback n=%d: capture != decoding n tokens",
              tag, n);
        CHECK(n == 0 || !memcmp(cap + (n - 1) * C * K, slot_ptr(&v, 8), SB),
              "%s rollback n=%d: dense capture != decoding n tokens", tag, n);
        /* continuing from either gives the same next output */
        memcpy(slot_ptr(&v, 9), slot_ptr(&v, from), SB);
        CHECK(inv_run(&v, xn, 1, 9, 9, y_a, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s continue: %s", tag,
              gdn_last_error(v.ctx));
        CHECK(inv_run(&v, xn, 1, 8, 10, y_b, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s continue: %s", tag,
              gdn_last_error(v.ctx));
        CHECK(!memcmp(y_a, y_b, sizeof y_a) && !memcmp(slot_ptr(&v, 9), slot_ptr(&v, 10), SB),
              "%s rollback n=%d: continuing from the capture differs", tag, n);
        /* replay: the n tokens from the pre-verify slot with y NULL, into slot 11 */
        memset(slot_ptr(&v, 11), 0, SB);
        CHECK(inv_run(&v, x, n, 3, 11, NULL, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s replay: %s", tag,
              gdn_last_error(v.ctx));
        CHECK(!memcmp(slot_ptr(&v, 11), slot_ptr(&v, 8), SB), "%s replay n=%d: state differs", tag, n);
    }
    /* the pre-verify slot survived the verify */
    CHECK(!memcmp(slot_ptr(&v, 3), slot_ptr(&v, 0), SB), "%s: verify wrote the pre-verify slot", tag);

    /* y in place of x: the same as out of place */
    float xy[T * C];
    memcpy(xy, x, sizeof xy);
    memcpy(slot_ptr(&v, 12), slot_ptr(&v, 0), SB);
    memcpy(slot_ptr(&v, 13), slot_ptr(&v, 0), SB);
    CHECK(inv_run(&v, x, T, 12, 12, y_pre, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s out of place", tag);
    CHECK(inv_run(&v, xy, T, 13, 13, xy, 0, NULL, 0) == GDN_STATUS_SUCCESS, "%s in place", tag);
    CHECK(!memcmp(xy, y_pre, sizeof xy) && !memcmp(slot_ptr(&v, 12), slot_ptr(&v, 13), SB),
          "%s: y in place of x differs", tag);
    gdn_context_destroy(v.ctx);
}

/* ---- 4. errors ---------------------------------------------------------------------------------- */

enum { EC = 16, EW = 4, EK = 3, EB = 2, ET = 3, ESL = 5, ECS = 8, ETP = 6 };
static float ex[EB * ET * EC], ew[EC * EW], ebias[EC], ey[EB * ET * EC], epool[ESL * EC * EK], ecpool[ECS * EC * EK],
    edcap[EB * ET * EC * EK];
static int32_t e_read[EB], e_write[EB], e_cap[8], e_cu32[3];
static int64_t e_cu64[3];

typedef struct fixture {
    gdn_conv_problem p;
    gdn_batch b;
    gdn_conv_tensors t;
} fixture;

/* A valid call (dense [2,3] or packed 2+4 tokens) with slot capture, that each case breaks once. */
static fixture make(int is_packed)
{
    fixture f;
    memset(&f, 0, sizeof f);
    f.p.channels = EC;
    f.p.width = EW;
    const int64_t bb = is_packed ? 1 : EB, tt = is_packed ? ETP : ET;
    f.b.batch_size = bb;
    f.b.seq_len = tt;
    if (is_packed) {
        e_cu32[0] = 0;
        e_cu32[1] = 2;
        e_cu32[2] = ETP;
        f.b.num_seqs = 2;
        f.b.cu_seqlens = e_cu32;
        f.b.cu_seqlens_type = GDN_INDEX_I32;
    }
    const int64_t sx[3] = {bb, tt, EC}, sw[2] = {EC, EW}, sp[3] = {ESL, EC, EK}, sc[3] = {ECS, EC, EK};
    f.t.x = gdn_tensor_contiguous(ex, 3, sx);
    f.t.weight = gdn_tensor_contiguous(ew, 2, sw);
    f.t.bias = ebias;
    f.t.y = gdn_tensor_contiguous(ey, 3, sx);
    f.t.state.pool = gdn_tensor_contiguous(epool, 3, sp);
    e_read[0] = 0;
    e_read[1] = 1;
    e_write[0] = 2;
    e_write[1] = 3;
    f.t.state.read_slots = e_read;
    f.t.state.write_slots = e_write;
    for (int i = 0; i < 8; i++)
        e_cap[i] = i + 1 < ECS ? i + 1 : -1;
    f.t.capture.mode = GDN_CAPTURE_SLOTS;
    f.t.capture.states = gdn_tensor_contiguous(ecpool, 3, sc);
    f.t.capture.slots = e_cap;
    return f;
}

/* The buffers a call may write (outputs, state pool, capture pools). */
#define GUARDED                                                                                                  \
    (const guard_buf[]) { {ey, sizeof ey}, {epool, sizeof epool}, {ecpool, sizeof ecpool}, {edcap, sizeof edcap} }

/* Outputs get a recognisable pattern; returns a snapshot of them. */
static unsigned char *poison(void)
{
    memset(ey, 0x5A, sizeof ey);
    memset(ecpool, 0x6B, sizeof ecpool);
    memset(edcap, 0x7C, sizeof edcap);
    for (size_t i = 0; i < sizeof epool / sizeof epool[0]; i++)
        epool[i] = (float)i * 1e-3f;
    return guard_snapshot(GUARDED, 4);
}

static int unchanged(const unsigned char *c)
{
    return guard_unchanged(c, GUARDED, 4);
}

static void expect(gdn_context *ctx, const char *what, const fixture *f, int null_p, int null_b, int null_t,
                   gdn_status want, const char *name)
{
    unsigned char *before = poison();
    const gdn_status st =
        gdn_conv1d_forward(ctx, null_p ? NULL : &f->p, null_b ? NULL : &f->b, null_t ? NULL : &f->t);
    const char *msg = gdn_last_error(ctx);
    checks++;
    if (st != want) {
        printf("FAIL %s: status %d (%s), expected %d (%s); message: \"%s\"\n", what, st, gdn_status_string(st), want,
               gdn_status_string(want), msg);
        failures++;
    } else if (want != GDN_STATUS_SUCCESS && (!msg || !*msg || (name && !strstr(msg, name)))) {
        printf("FAIL %s: message \"%s\" does not name \"%s\"\n", what, msg ? msg : "(null)", name);
        failures++;
    } else if (want != GDN_STATUS_SUCCESS && !unchanged(before)) {
        printf("FAIL %s: a buffer was written although the call failed\n", what);
        failures++;
    } else if (want == GDN_STATUS_SUCCESS && (unchanged(before) || (msg && *msg))) {
        printf("FAIL %s: success, but nothing written or a message \"%s\"\n", what, msg ? msg : "");
        failures++;
    }
    free(before);
}

#define CASE(is_packed, what, mutation, want, name)  \
    do {                                             \
        fixture f = make(is_packed);                 \
        mutation;                                    \
        expect(ctx, what, &f, 0, 0, 0, want, name);  \
    } while (0)
#define INVALID GDN_STATUS_INVALID_ARGUMENT

static void errors(void)
{
    gdn_context *ctx = make_ctx(GDN_ISA_AUTO, 2);
    CASE(0, "valid dense fixture", (void)0, GDN_STATUS_SUCCESS, NULL);
    CASE(1, "valid packed fixture", (void)0, GDN_STATUS_SUCCESS, NULL);
    {
        fixture f = make(0);
        expect(ctx, "problem NULL", &f, 1, 0, 0, INVALID, "problem");
        expect(ctx, "batch NULL", &f, 0, 1, 0, INVALID, "batch");
        expect(ctx, "tensors NULL", &f, 0, 0, 1, INVALID, "tensors");
        unsigned char *before = poison();
        CHECK(gdn_conv1d_forward(NULL, &f.p, &f.b, &f.t) == INVALID && unchanged(before), "ctx NULL");
        free(before);
    }
    /* problem */
    CASE(0, "width 1", f.p.width = 1, INVALID, "problem.width = 1");
    CASE(0, "width 9", f.p.width = 9, INVALID, "problem.width = 9");
    CASE(0, "channels 0", f.p.channels = 0, INVALID, "problem.channels = 0");
    CASE(0, "channels -3", f.p.channels = -3, INVALID, "problem.channels");
    CASE(0, "activation 5", f.p.activation = (gdn_conv_activation)5, INVALID, "problem.activation");
    CASE(0, "dtype 7", f.p.dtype = (gdn_dtype)7, INVALID, "problem.dtype");
    CASE(0, "channels mismatch (x, weight)", f.p.channels = 8, INVALID, "x:");
    CASE(0, "width mismatch (weight)", f.p.width = 3, INVALID, "weight:");
    /* batch */
    CASE(0, "batch_size 0", f.b.batch_size = 0, INVALID, "batch.batch_size");
    CASE(0, "seq_len -1", f.b.seq_len = -1, INVALID, "batch.seq_len");
    CASE(1, "packed batch_size 2", f.b.batch_size = 2, INVALID, "batch.batch_size");
    CASE(1, "num_seqs 0", f.b.num_seqs = 0, INVALID, "batch.num_seqs");
    CASE(1, "cu type 9", f.b.cu_seqlens_type = (gdn_index_type)9, INVALID, "batch.cu_seqlens_type");
    CASE(1, "cu[0] = 1", e_cu32[0] = 1, INVALID, "cu_seqlens[0]");
    CASE(1, "cu decreasing", (e_cu32[1] = 7, e_cu32[2] = 6), INVALID, "cu_seqlens[1]");
    CASE(1, "cu end != T", e_cu32[2] = 5, INVALID, "cu_seqlens[2]");
    CASE(1, "cu64 end != T", (e_cu64[0] = 0, e_cu64[1] = 2, e_cu64[2] = 4, f.b.cu_seqlens = e_cu64,
                              f.b.cu_seqlens_type = GDN_INDEX_I64), INVALID, "cu_seqlens[2]");
    CASE(0, "huge batch", (f.b.batch_size = INT64_C(1) << 40, f.b.seq_len = INT64_C(1) << 20), INVALID, "batch");
    /* views */
    CASE(0, "x NULL", f.t.x.data = NULL, INVALID, "x: data is NULL");
    CASE(0, "x shape", f.t.x.shape[2] = 15, INVALID, "x: expected shape [2,3,16] [B,T,C], got [2,3,15]");
    CASE(0, "x T", f.t.x.shape[1] = 4, INVALID, "x: expected shape");
    CASE(0, "x ndim", f.t.x.ndim = 4, INVALID, "x: expected 3 dims");
    CASE(0, "x ndim 9", f.t.x.ndim = 9, INVALID, "x: expected 3 dims");
    CASE(0, "x negative stride", (f.t.x.strides[0] = 48, f.t.x.strides[1] = -16, f.t.x.strides[2] = 1), INVALID,
         "x: strides[1]");
    CASE(1, "packed x shape", f.t.x.shape[0] = 2, INVALID, "x: expected shape [1,6,16]");
    CASE(0, "weight NULL", f.t.weight.data = NULL, INVALID, "weight: data is NULL");
    CASE(0, "weight shape", f.t.weight.shape[1] = 3, INVALID, "weight: expected shape [16,4] [C,W]");
    CASE(0, "weight ndim", f.t.weight.ndim = 3, INVALID, "weight: expected 2 dims");
    CASE(0, "y shape", f.t.y.shape[0] = 1, INVALID, "y: expected shape");
    CASE(0, "y zero stride", (f.t.y.strides[0] = 48, f.t.y.strides[1] = 0, f.t.y.strides[2] = 1), INVALID,
         "y: strides[1] = 0");
    CASE(0, "pool ndim", f.t.state.pool.ndim = 4, INVALID, "state.pool");
    CASE(0, "pool 0 slots", f.t.state.pool.shape[0] = 0, INVALID, "state.pool");
    CASE(0, "pool C", f.t.state.pool.shape[1] = 8, INVALID, "state.pool: expected shape [5,16,3] [slots,C,W-1]");
    CASE(0, "pool W-1", f.t.state.pool.shape[2] = 4, INVALID, "state.pool: expected shape");
    CASE(0, "pool zero stride", (f.t.state.pool.strides[0] = 48, f.t.state.pool.strides[1] = 0,
                                 f.t.state.pool.strides[2] = 1), INVALID, "state.pool: strides[1]");
    /* slots */
    CASE(0, "read slot past the pool", e_read[1] = 5, INVALID, "state.read_slots[1] = 5");
    CASE(0, "write slot past the pool", e_write[0] = 7, INVALID, "state.write_slots[0] = 7");
    CASE(0, "default slots past the pool", (f.t.state.read_slots = NULL, f.t.state.write_slots = NULL,
                                            f.t.state.pool.shape[0] = 1), INVALID, "state.read_slots[1]");
    CASE(0, "conflicting write slots", (e_write[0] = 2, e_write[1] = 2), INVALID, "state.write_slots[1] = 2");
    CASE(0, "write slot read by another", (e_write[0] = 1), INVALID, "state.write_slots[0] = 1");
    CASE(0, "negative slots are fine", (e_read[0] = -1, e_write[1] = -4), GDN_STATUS_SUCCESS, NULL);
    /* capture */
    CASE(0, "capture mode 7", f.t.capture.mode = (gdn_capture_mode)7, INVALID, "capture.mode = 7");
    CASE(0, "capture states NULL", f.t.capture.states.data = NULL, INVALID, "capture.states: data is NULL");
    CASE(0, "capture slots NULL", f.t.capture.slots = NULL, INVALID, "capture.slots");
    CASE(0, "capture pool shape", f.t.capture.states.shape[2] = 4, INVALID, "capture.states: expected shape");
    CASE(0, "capture pool ndim", f.t.capture.states.ndim = 4, INVALID, "capture.states");
    CASE(0, "capture slot past", e_cap[2] = 8, INVALID, "capture.slots[2] = 8");
    CASE(0, "capture slot twice", e_cap[3] = 1, INVALID, "capture.slots[3] = 1");
    CASE(0, "capture slots_stride short", f.t.capture.slots_stride = 2, INVALID, "capture.slots_stride = 2");
    CASE(0, "capture slots_stride negative", f.t.capture.slots_stride = -1, INVALID, "capture.slots_stride = -1");
    CASE(0, "capture into a read slot of another sequence",
         (f.t.capture.states = f.t.state.pool, e_cap[0] = 1, e_cap[1] = 4, e_cap[2] = -1, e_cap[3] = -1,
          e_cap[4] = -1, e_cap[5] = -1), INVALID, "capture.slots[0] = 1");
    CASE(0, "capture into the own read slot is fine",
         (f.t.capture.states = f.t.state.pool, e_cap[0] = 0, e_cap[1] = 4, e_cap[2] = -1, e_cap[3] = -1,
          e_cap[4] = -1, e_cap[5] = -1), GDN_STATUS_SUCCESS, NULL);
    CASE(0, "capture the last token into the own write slot is fine",
         (f.t.capture.states = f.t.state.pool, e_cap[0] = -1, e_cap[1] = 4, e_cap[2] = 2, e_cap[3] = -1,
          e_cap[4] = -1, e_cap[5] = 3), GDN_STATUS_SUCCESS, NULL);
    CASE(0, "capture into another's write slot",
         (f.t.capture.states = f.t.state.pool, e_cap[0] = 3, e_cap[1] = -1, e_cap[2] = -1, e_cap[3] = -1,
          e_cap[4] = -1, e_cap[5] = -1), INVALID, "capture.slots[0] = 3");
    {
        const int64_t sd[4] = {EB, ET, EC, EK};
        CASE(0, "dense capture is fine", (f.t.capture.mode = GDN_CAPTURE_DENSE,
                                          f.t.capture.states = gdn_tensor_contiguous(edcap, 4, sd)),
             GDN_STATUS_SUCCESS, NULL);
        CASE(0, "dense capture shape", (f.t.capture.mode = GDN_CAPTURE_DENSE,
                                        f.t.capture.states = gdn_tensor_contiguous(edcap, 4, sd),
                                        f.t.capture.states.shape[3] = 4),
             INVALID, "capture.states: expected shape [2,3,16,3] [B,T,C,W-1]");
        CASE(0, "dense capture as a pool", (f.t.capture.mode = GDN_CAPTURE_DENSE), INVALID,
             "capture.states: expected 4 dims");
    }
    /* a success clears the message */
    CASE(0, "width 9 again", f.p.width = 9, INVALID, "problem.width");
    CASE(0, "valid again", (void)0, GDN_STATUS_SUCCESS, NULL);
    gdn_context_destroy(ctx);
}

/* ---- 5. denormal bf16 outputs ------------------------------------------------------------------ */

static void denormal_outputs(void)
{
    enum { DC = 40, DW = 4 };
    static uint16_t x[DC], y[DC];
    static float w[DC * DW], bias[DC];
    memset(x, 0, sizeof x);
    memset(w, 0, sizeof w);
    for (int c = 0; c < DC; c++) /* z = bias: denormals (and a few normal and zero lanes) */
        bias[c] = c % 7 == 3 ? 0.25f * (float)c : c % 11 == 5 ? 0.0f : (c % 2 ? -1.0f : 1.0f) * 1.3e-39f * (float)(c + 1);
    const gdn_isa isas[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    for (int act = 0; act < 2; act++)
        for (int k = 0; k < 3; k++) {
            if (!gdn_cpu_supports(isas[k]))
                continue;
            gdn_context *ctx = make_ctx(isas[k], 1);
            gdn_conv_problem pr;
            memset(&pr, 0, sizeof pr);
            pr.channels = DC;
            pr.width = DW;
            pr.activation = act ? GDN_CONV_NONE : GDN_CONV_SILU;
            pr.dtype = GDN_DTYPE_BF16;
            gdn_batch ba;
            memset(&ba, 0, sizeof ba);
            ba.batch_size = 1;
            ba.seq_len = 1;
            gdn_conv_tensors te;
            memset(&te, 0, sizeof te);
            const int64_t sx[3] = {1, 1, DC}, sw[2] = {DC, DW};
            te.x = gdn_tensor_contiguous(x, 3, sx);
            te.weight = gdn_tensor_contiguous(w, 2, sw);
            te.bias = bias;
            te.y = gdn_tensor_contiguous(y, 3, sx);
            memset(y, 0xA5, sizeof y);
            CHECK(gdn_conv1d_forward(ctx, &pr, &ba, &te) == GDN_STATUS_SUCCESS, "denormals [%s]: %s",
                  gdn_isa_name(isas[k]), gdn_last_error(ctx));
            int ok = 1;
            for (int c = 0; c < DC; c++) {
                const float z = bias[c], want = act ? z : z / (1.0f + expf(-z));
                ok &= y[c] == gdn_f32_to_bf16(want);
            }
            CHECK(ok, "denormals [%s %s]: bf16 outputs differ from core/dtype.h rounding", gdn_isa_name(isas[k]),
                  act ? "none" : "silu");
            gdn_context_destroy(ctx);
        }
}

int main(void)
{
    reference_and_threads();
    const gdn_isa isas[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    for (int k = 0; k < 3; k++)
        if (gdn_cpu_supports(isas[k]))
            invariants(isas[k]);
    errors();
    denormal_outputs();
    printf("%s: %d checks, %d failures\n", failures ? "FAILED" : "passed", checks, failures);
    return failures ? 1 : 0;
}
