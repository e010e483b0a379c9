/*
 * test_invariants — properties that must hold between calls (DESIGN.md §4), for every ISA this CPU
 * supports and two head shapes (SIMD-sized and scalar-fallback):
 *   prefill(T) equals T decodes chained through the pool; prefill(a) then prefill(b) equals
 *   prefill(a+b); the last captured state equals the final state; the tiled head map equals the
 *   grouped map with value heads renumbered; packed varlen equals separate calls; strided views
 *   equal contiguous ones, zero-stride (broadcast) inputs equal materialised copies; replay rollback
 *   equals never having drafted; empty sequences leave their state untouched (in place) or copy it
 *   (moving); a negative read slot means zeros; capturing the state after a sequence's last token
 *   into its own write slot (capture pool = state pool) stores the final state there, dense and
 *   packed (also against the float64 reference); the fused raw gate equals the log gate fed with the
 *   formula's values; the chunked algorithm equals the token loop at
 *   lengths around the chunk boundaries (dense, split, packed with empty sequences), and with
 *   zero-stride inputs equals itself on materialised copies.
 * Tolerance 1e-5 relative RMS; "bitwise" where the same kernel path guarantees it (same call
 * shape, only views or slot bookkeeping differ). Whether a tolerance check was in fact bitwise is
 * printed for information.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/rng.h"
#include "cpu/chunked.h"

#define TOL 1e-5

static int failures, checks;
static char where[160]; /* current ISA and shape */

static double rel(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Expect a close to b (relative RMS <= TOL, or bitwise when exact). */
static void expect(const char *what, const float *a, const float *b, size_t n, int exact)
{
    checks++;
    const int same = memcmp(a, b, n * sizeof(float)) == 0;
    const double e = rel(a, b, n);
    if (exact ? !same : !(e <= TOL)) {
        printf("FAIL %s: %s: rel RMS %.3g%s\n", where, what, e, exact ? " (must be bitwise equal)" : "");
        failures++;
    }
}

static void expect_ok(const char *what, gdn_status st, const gdn_context *ctx)
{
    checks++;
    if (st != GDN_STATUS_SUCCESS) {
        printf("FAIL %s: %s: %s: %s\n", where, what, gdn_status_string(st), gdn_last_error(ctx));
        failures++;
    }
}

/* ---- a layer with a token stream --------------------------------------------------------------
 * Inputs of L tokens, f32, contiguous per token: q,k [L][Hk][Dk], v [L][Hv][Dv], g, beta [L][Hv].
 * A call runs tokens [t0, t1) of the stream as one sequence (B = 1), or several ranges packed. */
typedef struct layer {
    gdn_problem p;
    int64_t L;
    float *q, *k, *v, *g, *beta;
    const float *A_log, *dt_bias; /* [Hv], the raw gate only */
    size_t hs; /* floats per slot: Hv * Dv * Dk */
} layer;

static void layer_make(layer *ly, const gdn_problem *p, int64_t L, uint64_t seed)
{
    gdn_rng r;
    gdn_rng_seed(&r, seed);
    ly->p = *p;
    ly->L = L;
    ly->A_log = ly->dt_bias = NULL;
    const int Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    ly->q = (float *)malloc(sizeof(float) * (size_t)(L * Hk * Dk + 1));
    ly->k = (float *)malloc(sizeof(float) * (size_t)(L * Hk * Dk + 1));
    ly->v = (float *)malloc(sizeof(float) * (size_t)(L * Hv * Dv + 1));
    ly->g = (float *)malloc(sizeof(float) * (size_t)(L * Hv + 1));
    ly->beta = (float *)malloc(sizeof(float) * (size_t)(L * Hv + 1));
    ly->hs = (size_t)Hv * Dv * Dk;
    for (int which = 0; which < 2; which++) {
        float *x = which ? ly->k : ly->q;
        for (int64_t row = 0; row < L * Hk; row++) {
            double ss = 0, tmp[256];
            for (int i = 0; i < Dk; i++) {
                tmp[i] = gdn_rng_normal(&r);
                ss += tmp[i] * tmp[i];
            }
            for (int i = 0; i < Dk; i++)
                x[row * Dk + i] = (float)(tmp[i] / sqrt(ss));
        }
    }
    for (int64_t i = 0; i < L * Hv * Dv; i++)
        ly->v[i] = (float)gdn_rng_normal(&r);
    for (int64_t i = 0; i < L * Hv; i++) {
        ly->g[i] = (float)(-0.02 - 0.6 * gdn_rng_uniform(&r)); /* decay in (0.55, 0.98) */
        ly->beta[i] = (float)(1.0 / (1.0 + exp(-gdn_rng_normal(&r))));
    }
}

static void layer_free(layer *ly)
{
    free(ly->q);
    free(ly->k);
    free(ly->v);
    free(ly->g);
    free(ly->beta);
}

/* Scratch memory of one invariant: zeroed, never NULL, all freed at once by scratch_free(). */
enum { MAX_SCRATCH = 64 };
static void *scratch[MAX_SCRATCH];
static int n_scratch;

static void *scratch_alloc(size_t bytes)
{
    void *p = n_scratch < MAX_SCRATCH ? calloc(bytes ? bytes : 1, 1) : NULL;
    if (!p) {
        printf("FAIL %s: out of scratch memory\n", where);
        exit(1);
    }
    scratch[n_scratch++] = p;
    return p;
}

static void scratch_free(void)
{
    while (n_scratch > 0)
        free(scratch[--n_scratch]);
}

static float *fmalloc(size_t n)
{
    return (float *)scratch_alloc(n * sizeof(float));
}

static float *random_states(size_t n, uint64_t seed)
{
    gdn_rng r;
    gdn_rng_seed(&r, seed);
    float *s = fmalloc(n);
    for (size_t i = 0; i < n; i++)
        s[i] = (float)(0.1 * gdn_rng_normal(&r));
    return s;
}

typedef struct call {
    int64_t t0, t1;              /* dense B = 1: tokens [t0, t1) */
    int n_seqs;                  /* > 0: packed, tokens [0, cu[n_seqs]) of the stream */
    const int32_t *cu;
    float *out;                  /* [T][Hv][Dv] or NULL */
    float *pool;                 /* [slots][Hv][...] or NULL */
    int64_t slots;
    const int32_t *rs, *ws;
    gdn_capture_mode cap;
    float *cap_states;           /* dense [T][Hv][..] or a pool of cap_slots_n slots */
    int64_t cap_slots_n;
    const int32_t *cap_slots;
    const int32_t *num_tokens;   /* batch.num_tokens, or NULL */
} call;

static gdn_status run(gdn_context *ctx, const layer *ly, const call *c)
{
    const gdn_problem *p = &ly->p;
    const int64_t Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    const int kv = p->state_layout == GDN_STATE_KV;
    const int64_t t0 = c->n_seqs ? 0 : c->t0, T = c->n_seqs ? c->cu[c->n_seqs] : c->t1 - c->t0;
    gdn_batch b;
    gdn_tensors t;
    memset(&b, 0, sizeof b);
    memset(&t, 0, sizeof t);
    b.batch_size = 1;
    b.seq_len = T;
    if (c->n_seqs) {
        b.num_seqs = c->n_seqs;
        b.cu_seqlens = c->cu;
        b.cu_seqlens_type = GDN_INDEX_I32;
    }
    b.num_tokens = c->num_tokens;
    const int64_t sq[4] = {1, T, Hk, Dk}, sv[4] = {1, T, Hv, Dv}, sg[3] = {1, T, Hv};
    t.q = gdn_tensor_contiguous(ly->q + t0 * Hk * Dk, 4, sq);
    t.k = gdn_tensor_contiguous(ly->k + t0 * Hk * Dk, 4, sq);
    t.v = gdn_tensor_contiguous(ly->v + t0 * Hv * Dv, 4, sv);
    t.g = gdn_tensor_contiguous(ly->g + t0 * Hv, 3, sg);
    t.beta = gdn_tensor_contiguous(ly->beta + t0 * Hv, 3, sg);
    t.A_log = ly->A_log;
    t.dt_bias = ly->dt_bias;
    if (c->out)
        t.out = gdn_tensor_contiguous(c->out, 4, sv);
    const int64_t R = kv ? Dk : Dv, C = kv ? Dv : Dk;
    if (c->pool) {
        const int64_t sp[4] = {c->slots, Hv, R, C};
        t.state.pool = gdn_tensor_contiguous(c->pool, 4, sp);
        t.state.read_slots = c->rs;
        t.state.write_slots = c->ws;
    }
    t.capture.mode = c->cap;
    if (c->cap == GDN_CAPTURE_DENSE) {
        const int64_t sc[5] = {1, T, Hv, R, C};
        t.capture.states = gdn_tensor_contiguous(c->cap_states, 5, sc);
    } else if (c->cap == GDN_CAPTURE_SLOTS) {
        const int64_t sc[4] = {c->cap_slots_n, Hv, R, C};
        t.capture.states = gdn_tensor_contiguous(c->cap_states, 4, sc);
        t.capture.slots = c->cap_slots;
    }
    return gdn_forward(ctx, p, &b, &t);
}

static call dense(int64_t t0, int64_t t1, float *out, float *pool, int64_t slots, const int32_t *rs,
                  const int32_t *ws)
{
    call c;
    memset(&c, 0, sizeof c);
    c.t0 = t0;
    c.t1 = t1;
    c.out = out;
    c.pool = pool;
    c.slots = slots;
    c.rs = rs;
    c.ws = ws;
    return c;
}

/* ---- the invariants ------------------------------------------------------------------------ */

/* prefill(T) == T decodes; prefill(a) then prefill(b) == prefill(a+b); last capture == final. */
static void inv_prefill(gdn_context *ctx, const layer *ly)
{
    const int64_t L = ly->L, ys = (size_t)ly->p.num_v_heads * ly->p.v_dim;
    const size_t hs = ly->hs;
    float *init = random_states(hs, 11);
    float *pa = fmalloc(2 * hs), *pb = fmalloc(hs), *pc = fmalloc(hs);
    float *ya = fmalloc((size_t)(L * ys)), *yb = fmalloc((size_t)(L * ys)), *yc = fmalloc((size_t)(L * ys));
    float *caps = fmalloc((size_t)L * hs);
    const int32_t r0 = 0, w1 = 1;

    /* A: one prefill from slot 0 to slot 1, capturing every state */
    memcpy(pa, init, hs * sizeof(float));
    call c = dense(0, L, ya, pa, 2, &r0, &w1);
    c.cap = GDN_CAPTURE_DENSE;
    c.cap_states = caps;
    expect_ok("prefill(T)", run(ctx, ly, &c), ctx);
    expect("prefill: slot 0 (read, not written) unchanged", pa, init, hs, 1);
    expect("last captured state == final state", caps + (size_t)(L - 1) * hs, pa + hs, hs, 1);

    /* B: T decodes in place */
    memcpy(pb, init, hs * sizeof(float));
    for (int64_t t = 0; t < L; t++) {
        call d = dense(t, t + 1, yb + t * ys, pb, 1, NULL, NULL);
        expect_ok("decode", run(ctx, ly, &d), ctx);
    }
    expect("prefill(T) out == T decodes out", ya, yb, (size_t)(L * ys), 0);
    expect("prefill(T) state == T decodes state", pa + hs, pb, hs, 0);

    /* C: prefill(a) then prefill(b), a crossing no block boundary, b crossing one */
    const int64_t a = L / 3;
    memcpy(pc, init, hs * sizeof(float));
    call c1 = dense(0, a, yc, pc, 1, NULL, NULL), c2 = dense(a, L, yc + a * ys, pc, 1, NULL, NULL);
    expect_ok("prefill(a)", run(ctx, ly, &c1), ctx);
    expect("state after prefill(a) == capture after token a", pc, caps + (size_t)(a - 1) * hs, hs, 0);
    expect_ok("prefill(b)", run(ctx, ly, &c2), ctx);
    expect("prefill(a)+prefill(b) out == prefill(a+b) out", yc, ya, (size_t)(L * ys), 0);
    expect("prefill(a)+prefill(b) state == prefill(a+b) state", pc, pa + hs, hs, 0);

    /* D: capture into slots of a separate pool; the last one equals the final state */
    float *cpool = fmalloc((size_t)(L + 1) * hs), *pd = fmalloc(hs);
    int32_t *cs = (int32_t *)scratch_alloc(sizeof(int32_t) * (size_t)L);
    for (int64_t t = 0; t < L; t++)
        cs[t] = (int32_t)(L - t); /* reversed, slot 0 unused */
    memcpy(pd, init, hs * sizeof(float));
    call e = dense(0, L, NULL, pd, 1, NULL, NULL);
    e.cap = GDN_CAPTURE_SLOTS;
    e.cap_states = cpool;
    e.cap_slots_n = L + 1;
    e.cap_slots = cs;
    expect_ok("prefill with slot capture", run(ctx, ly, &e), ctx);
    expect("slot capture == dense capture", cpool + hs, caps + (size_t)(L - 1) * hs, hs, 1);
    expect("last slot-captured state == final state", cpool + hs, pd, hs, 1);
    expect("no-output run state == run with output", pd, pa + hs, hs, 1);

    /* E: capture into the state pool itself (vLLM style), the state after the last token into the
     * write slot as well: read slot 0, write slot 1, token t < L-1 into slot t + 2 */
    float *pe = fmalloc((size_t)(L + 1) * hs), *ye = fmalloc((size_t)(L * ys));
    int32_t *ce = (int32_t *)scratch_alloc(sizeof(int32_t) * (size_t)L);
    for (int64_t t = 0; t < L; t++)
        ce[t] = t == L - 1 ? 1 : (int32_t)(t + 2);
    memcpy(pe, init, hs * sizeof(float));
    call f = dense(0, L, ye, pe, L + 1, &r0, &w1);
    f.cap = GDN_CAPTURE_SLOTS;
    f.cap_states = pe;
    f.cap_slots_n = L + 1;
    f.cap_slots = ce;
    expect_ok("prefill capturing into the pool, the last token into the write slot", run(ctx, ly, &f), ctx);
    expect("capture into the pool: read slot unchanged", pe, init, hs, 1);
    expect("capture into the pool: captures == dense captures", pe + 2 * hs, caps, (size_t)(L - 1) * hs, 1);
    expect("capture into the pool: write slot == final state", pe + hs, pa + hs, hs, 1);
    expect("capture into the pool: out == out", ye, ya, (size_t)(L * ys), 1);

    scratch_free();
}

/* Tiled head map == grouped map with value heads renumbered. */
static void inv_headmap(gdn_context *ctx, const layer *ly)
{
    const gdn_problem *p = &ly->p;
    const int Hk = p->num_k_heads, Hv = p->num_v_heads, r = Hv / Hk, Dv = p->v_dim;
    const int64_t L = ly->L;
    const size_t hs1 = ly->hs / (size_t)Hv;
    layer gl = *ly; /* grouped copy with permuted value heads */
    gl.p.head_map = GDN_HEADS_GROUPED;
    layer tl = *ly;
    tl.p.head_map = GDN_HEADS_TILED;
    gl.v = fmalloc((size_t)(L * Hv * Dv));
    gl.g = fmalloc((size_t)(L * Hv));
    gl.beta = fmalloc((size_t)(L * Hv));
    float *init = random_states(ly->hs, 12), *ginit = fmalloc(ly->hs);
    /* tiled head h reads key head h % Hk; in grouped order that head is (h % Hk) * r + h / Hk */
    for (int h = 0; h < Hv; h++) {
        const int gh = (h % Hk) * r + h / Hk;
        for (int64_t t = 0; t < L; t++) {
            memcpy(gl.v + (t * Hv + gh) * Dv, ly->v + (t * Hv + h) * Dv, sizeof(float) * (size_t)Dv);
            gl.g[t * Hv + gh] = ly->g[t * Hv + h];
            gl.beta[t * Hv + gh] = ly->beta[t * Hv + h];
        }
        memcpy(ginit + gh * hs1, init + h * hs1, sizeof(float) * hs1);
    }
    float *yt = fmalloc((size_t)(L * Hv * Dv)), *yg = fmalloc((size_t)(L * Hv * Dv)), *yg2 = fmalloc((size_t)(L * Hv * Dv));
    call ct = dense(0, L, yt, init, 1, NULL, NULL), cg = dense(0, L, yg, ginit, 1, NULL, NULL);
    expect_ok("tiled", run(ctx, &tl, &ct), ctx);
    expect_ok("grouped", run(ctx, &gl, &cg), ctx);
    float *st = fmalloc(ly->hs);
    for (int h = 0; h < Hv; h++) {
        const int gh = (h % Hk) * r + h / Hk;
        for (int64_t t = 0; t < L; t++)
            memcpy(yg2 + (t * Hv + h) * Dv, yg + (t * Hv + gh) * Dv, sizeof(float) * (size_t)Dv);
        memcpy(st + h * hs1, ginit + gh * hs1, sizeof(float) * hs1);
    }
    expect("tiled out == grouped out renumbered", yt, yg2, (size_t)(L * Hv * Dv), 1);
    expect("tiled state == grouped state renumbered", init, st, ly->hs, 1);
    scratch_free();
}

/* Packed varlen == separate calls; empty sequences; negative read slot == zeros. */
static void inv_varlen(gdn_context *ctx, const layer *ly)
{
    enum { N = 6 };
    const int64_t lens[N] = {5, 0, 70, 3, 0, 1};
    int32_t cu[N + 1];
    cu[0] = 0;
    for (int n = 0; n < N; n++)
        cu[n + 1] = cu[n] + (int32_t)lens[n];
    const int64_t T = cu[N], ys = (int64_t)ly->p.num_v_heads * ly->p.v_dim;
    const size_t hs = ly->hs;
    if (T > ly->L)
        return;
    /* pool of 14 slots; reads 0..5, writes 6..11, sequence 1 (empty) in place, sequence 4 (empty)
     * moving, sequence 3 from zeros, sequence 5 writes nothing; 12, 13 untouched */
    const int32_t rs[N] = {0, 1, 2, -1, 4, 5}, ws[N] = {6, 1, 8, 9, 10, -1};
    const int64_t S = 14;
    float *init = random_states((size_t)S * hs, 13);
    float *pp = fmalloc((size_t)S * hs), *ps = fmalloc((size_t)S * hs);
    float *yp = fmalloc((size_t)(T * ys)), *ysep = fmalloc((size_t)(T * ys));
    memcpy(pp, init, sizeof(float) * (size_t)S * hs);
    memcpy(ps, init, sizeof(float) * (size_t)S * hs);
    call c;
    memset(&c, 0, sizeof c);
    c.n_seqs = N;
    c.cu = cu;
    c.out = yp;
    c.pool = pp;
    c.slots = S;
    c.rs = rs;
    c.ws = ws;
    expect_ok("packed", run(ctx, ly, &c), ctx);
    for (int n = 0; n < N; n++) {
        call d = dense(cu[n], cu[n + 1], ysep + cu[n] * ys, ps, S, &rs[n], &ws[n]);
        expect_ok("separate", run(ctx, ly, &d), ctx);
    }
    expect("packed out == separate calls out", yp, ysep, (size_t)(T * ys), 1);
    expect("packed pool == separate calls pool", pp, ps, (size_t)S * hs, 1);
    expect("empty sequence in place: slot untouched", pp + 1 * hs, init + 1 * hs, hs, 1);
    expect("empty sequence moving: read slot copied", pp + 10 * hs, init + 4 * hs, hs, 1);
    expect("read-only slot 0 untouched", pp, init, hs, 1);
    expect("unused slots untouched", pp + 12 * hs, init + 12 * hs, 2 * hs, 1);
    expect("write slot -1: slot 5 (its read slot) untouched", pp + 5 * hs, init + 5 * hs, hs, 1);

    /* negative read slot == a zeroed slot */
    float *z = fmalloc(2 * hs), *yz = fmalloc((size_t)(lens[2] * ys)), *yn = fmalloc((size_t)(lens[2] * ys));
    const int32_t neg = -1, one = 1, zero = 0;
    call a = dense(cu[2], cu[3], yn, z, 2, &neg, &one);
    expect_ok("read slot -1", run(ctx, ly, &a), ctx);
    float *z2 = fmalloc(hs);
    call b2 = dense(cu[2], cu[3], yz, z2, 1, &zero, &zero);
    expect_ok("zeroed slot", run(ctx, ly, &b2), ctx);
    expect("read slot -1 out == zero state out", yn, yz, (size_t)(lens[2] * ys), 1);
    expect("read slot -1 state == zero state", z + hs, z2, hs, 1);
    /* no pool at all == zeros too */
    float *y0 = fmalloc((size_t)(lens[2] * ys));
    call n0 = dense(cu[2], cu[3], y0, NULL, 0, NULL, NULL);
    expect_ok("no pool", run(ctx, ly, &n0), ctx);
    expect("no pool out == zero state out", y0, yz, (size_t)(lens[2] * ys), 1);
    /* an empty sequence from a negative read slot writes zeros */
    int32_t cu2[2] = {0, 0};
    float *pz = random_states(2 * hs, 14), *zeros = fmalloc(hs);
    call e;
    memset(&e, 0, sizeof e);
    e.n_seqs = 1;
    e.cu = cu2;
    e.pool = pz;
    e.slots = 2;
    e.rs = &neg;
    e.ws = &one;
    expect_ok("empty from zeros", run(ctx, ly, &e), ctx);
    expect("empty sequence from read slot -1 writes zeros", pz + hs, zeros, hs, 1);

    scratch_free();
}

/* Speculative verify of 4 tokens with capture, accept 2, roll back by replay. */
static void inv_replay(gdn_context *ctx, const layer *ly)
{
    const size_t hs = ly->hs;
    const int64_t ys = (int64_t)ly->p.num_v_heads * ly->p.v_dim, W = 4, n = 2;
    /* pool: slot 0 = pre-verify state A, 1..4 = captures, 5 = replay target */
    const int64_t S = 6;
    float *pool = random_states((size_t)S * hs, 15), *a0 = fmalloc(hs);
    memcpy(a0, pool, hs * sizeof(float));
    float *yv = fmalloc((size_t)(W * ys)), *yo = fmalloc((size_t)(n * ys));
    const int32_t r0 = 0, wneg = -1, w5 = 5;
    const int32_t cs[4] = {1, 2, 3, 4};
    call v = dense(0, W, yv, pool, S, &r0, &wneg);
    v.cap = GDN_CAPTURE_SLOTS;
    v.cap_states = pool; /* capture into the state pool itself */
    v.cap_slots_n = S;
    v.cap_slots = cs;
    expect_ok("verify", run(ctx, ly, &v), ctx);
    expect("verify: pre-verify slot untouched", pool, a0, hs, 1);
    /* accept n = 2: replay the 2 accepted tokens from the pre-verify slot, no output */
    call rp = dense(0, n, NULL, pool, S, &r0, &w5);
    expect_ok("replay", run(ctx, ly, &rp), ctx);
    expect("replay state == captured state after token 2", pool + 5 * hs, pool + 2 * hs, hs, 0);
    /* a run that only ever saw the 2 accepted tokens */
    float *fresh = fmalloc(hs);
    memcpy(fresh, a0, hs * sizeof(float));
    call o = dense(0, n, yo, fresh, 1, NULL, NULL);
    expect_ok("never drafted", run(ctx, ly, &o), ctx);
    expect("replay state == never-drafted state", pool + 5 * hs, fresh, hs, 0);
    expect("verify out[0..2) == never-drafted out", yv, yo, (size_t)(n * ys), 0);
    /* the same replay as one call over the verify's own inputs: batch.num_tokens = the accepted count */
    {
        float *p2 = fmalloc((size_t)S * hs), *yn = fmalloc((size_t)(W * ys));
        memcpy(p2, pool, (size_t)S * hs * sizeof(float));
        for (int64_t i = 0; i < W * ys; i++)
            yn[i] = -7.0f; /* the rows of tokens past the count must stay untouched */
        const int32_t cnt = (int32_t)n, w4 = 4;
        call rn = dense(0, W, yn, p2, S, &r0, &w4);
        rn.num_tokens = &cnt;
        expect_ok("replay with batch.num_tokens", run(ctx, ly, &rn), ctx);
        expect("num_tokens replay state == replay of a shorter call", p2 + 4 * hs, pool + 5 * hs, hs, 1);
        expect("num_tokens replay out == the shorter call's out", yn, yv, (size_t)(n * ys), 1);
        int untouched = 1;
        for (int64_t i = n * ys; i < W * ys; i++)
            untouched &= yn[i] == -7.0f;
        checks++;
        if (!untouched) {
            failures++;
            printf("FAIL %s: num_tokens: outputs past the count were written\n", where);
        }
    }
    /* every accepted count n = 0..W: replay (num_tokens = n) equals the captured state after token n
     * (the pre-verify state for n = 0) */
    for (int32_t na = 0; na <= (int32_t)W; na++) {
        float *p3 = fmalloc((size_t)S * hs);
        memcpy(p3, pool, (size_t)S * hs * sizeof(float));
        const int32_t w5b = 5;
        call rr = dense(0, W, NULL, p3, S, &r0, &w5b);
        rr.num_tokens = &na;
        expect_ok("replay of n accepted tokens", run(ctx, ly, &rr), ctx);
        char what[96];
        snprintf(what, sizeof what, "replay of %d accepted tokens == the state captured after them", (int)na);
        expect(what, p3 + 5 * hs, na ? pool + (size_t)cs[na - 1] * hs : a0, hs, 0);
    }
    /* packed, three sequences (3, 0 and 4 tokens) run for 2, 0 and 4 of them: equal to separate calls */
    {
        const int32_t cu[4] = {0, 3, 3, 7}, cnt[3] = {2, 0, 4}, rs[3] = {0, 1, 2}, ws[3] = {3, 4, 5};
        float *pp = random_states((size_t)6 * hs, 16), *ps = fmalloc((size_t)6 * hs);
        memcpy(ps, pp, (size_t)6 * hs * sizeof(float));
        call pk;
        memset(&pk, 0, sizeof pk);
        pk.n_seqs = 3;
        pk.cu = cu;
        pk.pool = pp;
        pk.slots = 6;
        pk.rs = rs;
        pk.ws = ws;
        pk.num_tokens = cnt;
        expect_ok("packed with batch.num_tokens", run(ctx, ly, &pk), ctx);
        call s0 = dense(0, 2, NULL, ps, 6, &rs[0], &ws[0]), s2 = dense(3, 7, NULL, ps, 6, &rs[2], &ws[2]);
        expect_ok("separate call 0", run(ctx, ly, &s0), ctx);
        expect_ok("separate call 2", run(ctx, ly, &s2), ctx);
        memcpy(ps + 4 * hs, ps + 1 * hs, hs * sizeof(float)); /* count 0: the read state copied */
        expect("packed num_tokens pool == separate calls", pp, ps, (size_t)6 * hs, 1);
    }
    scratch_free();
}

/* Zero strides on inputs (broadcast: one q/k for every token, one gate for every head) equal
 * materialised copies. */
static void inv_zero_strides(gdn_context *ctx, const layer *ly)
{
    const gdn_problem *p = &ly->p;
    const int64_t Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim, T = 9;
    layer m = *ly; /* materialised */
    m.q = fmalloc((size_t)(T * Hk * Dk));
    m.k = fmalloc((size_t)(T * Hk * Dk));
    m.g = fmalloc((size_t)(T * Hv));
    for (int64_t t = 0; t < T; t++) {
        memcpy(m.q + t * Hk * Dk, ly->q, sizeof(float) * (size_t)(Hk * Dk));
        memcpy(m.k + t * Hk * Dk, ly->k, sizeof(float) * (size_t)(Hk * Dk));
        for (int64_t h = 0; h < Hv; h++)
            m.g[t * Hv + h] = ly->g[t * Hv];
    }
    float *ym = fmalloc((size_t)(T * Hv * Dv)), *yz = fmalloc((size_t)(T * Hv * Dv));
    float *sm = random_states(ly->hs, 16), *sz = fmalloc(ly->hs);
    memcpy(sz, sm, ly->hs * sizeof(float));
    call c = dense(0, T, ym, sm, 1, NULL, NULL);
    expect_ok("materialised", run(ctx, &m, &c), ctx);

    gdn_batch b;
    gdn_tensors t;
    memset(&b, 0, sizeof b);
    memset(&t, 0, sizeof t);
    b.batch_size = 1;
    b.seq_len = T;
    const int64_t sq[4] = {1, T, Hk, Dk}, sv[4] = {1, T, Hv, Dv}, sg[3] = {1, T, Hv};
    t.q = gdn_tensor_contiguous(ly->q, 4, sq);
    t.q.strides[0] = Hk * Dk;
    t.q.strides[1] = 0;
    t.q.strides[2] = Dk;
    t.q.strides[3] = 1;
    t.k = t.q;
    t.k.data = ly->k;
    t.v = gdn_tensor_contiguous(ly->v, 4, sv);
    t.g = gdn_tensor_contiguous(ly->g, 3, sg);
    t.g.strides[0] = T * Hv;
    t.g.strides[1] = Hv;
    t.g.strides[2] = 0;
    t.beta = gdn_tensor_contiguous(ly->beta, 3, sg);
    t.out = gdn_tensor_contiguous(yz, 4, sv);
    const int kv = p->state_layout == GDN_STATE_KV;
    const int64_t sp[4] = {1, Hv, kv ? Dk : Dv, kv ? Dv : Dk};
    t.state.pool = gdn_tensor_contiguous(sz, 4, sp);
    expect_ok("zero-stride views", gdn_forward(ctx, p, &b, &t), ctx);
    expect("zero-stride inputs out == materialised out", yz, ym, (size_t)(T * Hv * Dv), 1);
    expect("zero-stride inputs state == materialised state", sz, sm, ly->hs, 1);
    scratch_free();
}

/* The chunked algorithm equals the token loop (to 1e-5) at lengths around the chunk boundaries,
 * from a nonzero state, dense and packed with empty sequences; chunked prefill(a) then prefill(b)
 * equals chunked prefill(a+b). */
static void inv_chunked(gdn_context *ctx, const layer *ly)
{
    const int64_t C = GDN_CHUNK_C, ys = (int64_t)ly->p.num_v_heads * ly->p.v_dim;
    const size_t hs = ly->hs;
    layer rec = *ly, chk = *ly;
    rec.p.algo = GDN_ALGO_RECURRENT;
    chk.p.algo = GDN_ALGO_CHUNKED;
    float *init = random_states(hs, 17);
    float *pr = fmalloc(hs), *pc = fmalloc(hs), *yr = fmalloc((size_t)(ly->L * ys)), *yc = fmalloc((size_t)(ly->L * ys));
    const int64_t Ts[] = {1, C - 1, C, C + 1, 2 * C + 1, ly->L};
    for (int i = 0; i < 6; i++) {
        const int64_t T = Ts[i] < ly->L ? Ts[i] : ly->L;
        char what[96];
        memcpy(pr, init, hs * sizeof(float));
        memcpy(pc, init, hs * sizeof(float));
        call cr = dense(0, T, yr, pr, 1, NULL, NULL), cc = dense(0, T, yc, pc, 1, NULL, NULL);
        expect_ok("recurrent", run(ctx, &rec, &cr), ctx);
        expect_ok("chunked", run(ctx, &chk, &cc), ctx);
        snprintf(what, sizeof what, "chunked out == recurrent out, T=%lld", (long long)T);
        expect(what, yc, yr, (size_t)(T * ys), 0);
        snprintf(what, sizeof what, "chunked state == recurrent state, T=%lld", (long long)T);
        expect(what, pc, pr, hs, 0);
    }
    /* split: a not a multiple of C, b crossing chunk boundaries */
    const int64_t a = C + 3;
    if (ly->L > a) {
        float *ps = fmalloc(hs), *ysp = fmalloc((size_t)(ly->L * ys));
        memcpy(ps, init, hs * sizeof(float));
        call c1 = dense(0, a, ysp, ps, 1, NULL, NULL), c2 = dense(a, ly->L, ysp + a * ys, ps, 1, NULL, NULL);
        expect_ok("chunked prefill(a)", run(ctx, &chk, &c1), ctx);
        expect_ok("chunked prefill(b)", run(ctx, &chk, &c2), ctx);
        expect("chunked prefill(a)+prefill(b) out == chunked prefill(a+b) out", ysp, yc, (size_t)(ly->L * ys), 0);
        expect("chunked prefill(a)+prefill(b) state == chunked prefill(a+b) state", ps, pc, hs, 0);
    }
    /* packed with empty sequences, moving pool, a negative read slot */
    enum { N = 5 };
    const int64_t lens[N] = {C + 1, 0, 2 * C + 1, 3, 0};
    int32_t cu[N + 1];
    cu[0] = 0;
    for (int n = 0; n < N; n++)
        cu[n + 1] = cu[n] + (int32_t)lens[n];
    if (cu[N] <= ly->L) {
        const int32_t rs[N] = {0, 1, -1, 3, 4}, ws[N] = {5, 6, 7, 8, 9};
        const int64_t S = 10;
        float *pool = random_states((size_t)S * hs, 18), *pool2 = fmalloc((size_t)S * hs);
        memcpy(pool2, pool, (size_t)S * hs * sizeof(float));
        call c;
        memset(&c, 0, sizeof c);
        c.n_seqs = N;
        c.cu = cu;
        c.out = yr;
        c.pool = pool;
        c.slots = S;
        c.rs = rs;
        c.ws = ws;
        expect_ok("packed recurrent", run(ctx, &rec, &c), ctx);
        c.out = yc;
        c.pool = pool2;
        expect_ok("packed chunked", run(ctx, &chk, &c), ctx);
        expect("packed chunked out == packed recurrent out", yc, yr, (size_t)(cu[N] * ys), 0);
        expect("packed chunked pool == packed recurrent pool", pool2, pool, (size_t)S * hs, 0);
    }
    scratch_free();
    /* zero-stride (broadcast) inputs, read in place by the chunked kernels */
    inv_zero_strides(ctx, &chk);
}

/* A conformance-engine case of this problem on this ISA (everything else zero: the defaults). */
static gdn_check_case engine_case(const gdn_problem *p, gdn_isa isa, uint64_t seed)
{
    gdn_check_case c;
    memset(&c, 0, sizeof c);
    c.problem = *p;
    c.isa = isa;
    c.seed = seed;
    return c;
}

/* Strided (padded, permuted, interleaved) views == contiguous views, through the engine. */
static void inv_strided(gdn_context *ctx, gdn_isa isa, const gdn_problem *p)
{
    for (int variant = 0; variant < 3; variant++) {
        gdn_check_case c = engine_case(p, isa, 0x5354524944ull + (uint64_t)variant);
        c.decay = GDN_CHECK_DECAY_MODEL;
        if (variant == 0) {
            c.B = 3;
            c.T = 19;
            c.pool = GDN_CHECK_POOL_MOVE;
            c.capture = GDN_CAPTURE_DENSE;
        } else if (variant == 1) {
            gdn_check_set_packed(&c, 4, (const int64_t[]){9, 0, 66, 2});
            c.pool = GDN_CHECK_POOL_INPLACE;
            c.capture = GDN_CAPTURE_SLOTS;
            c.problem.dtype = GDN_DTYPE_BF16;
            c.problem.out_dtype = GDN_DTYPE_F16;
        } else {
            c.B = 2;
            c.T = 4;
            c.pool = GDN_CHECK_POOL_MOVE;
            c.capture = GDN_CAPTURE_SLOTS;
            c.capture_in_pool = 1;
            c.problem.gate = GDN_GATE_RAW;
        }
        float *ref[3] = {NULL, NULL, NULL};
        size_t nref[3] = {0, 0, 0};
        for (int s = 0; s <= GDN_CHECK_STRIDED_MAX; s++) {
            char err[256], what[96];
            c.strided = s;
            gdn_check_instance *in = gdn_check_instance_create(&c, err, sizeof err);
            if (!in) {
                printf("FAIL %s: build: %s\n", where, err);
                failures++;
                break;
            }
            expect_ok("strided run", gdn_check_instance_forward(in, ctx), ctx);
            for (int b = 0; b < 3; b++) {
                const size_t n = gdn_check_instance_read(in, b, NULL);
                float *x = fmalloc(n);
                gdn_check_instance_read(in, b, x);
                if (s == 0) {
                    ref[b] = x;
                    nref[b] = n;
                    continue;
                }
                snprintf(what, sizeof what, "strides=%d variant %d: %s == contiguous", s, variant,
                         b == 0 ? "out" : b == 1 ? "pool" : "capture");
                if (n != nref[b]) {
                    printf("FAIL %s: %s: %zu vs %zu elements\n", where, what, n, nref[b]);
                    failures++;
                } else {
                    expect(what, x, ref[b], n, 1);
                }
            }
            gdn_check_instance_destroy(in);
        }
        scratch_free();
    }
}

/* Capture into the state pool with the state after each sequence's last token into its own write
 * slot too (vLLM style), dense and packed, moving and in-place pools: out, final states and every
 * capture against the float64 reference (the conformance engine). */
static void inv_capture_last_in_write_slot(gdn_isa isa, const gdn_problem *p)
{
    for (int variant = 0; variant < 5; variant++) {
        gdn_check_case c = engine_case(p, isa, 0x6c617374ull + (uint64_t)variant);
        c.capture = GDN_CAPTURE_SLOTS;
        c.capture_in_pool = 1;
        c.capture_last_in_write_slot = 1;
        c.pool = variant & 1 ? GDN_CHECK_POOL_INPLACE : GDN_CHECK_POOL_MOVE;
        switch (variant) {
        case 0: /* dense verify: one sequence from zeros, one drops its final state */
            c.B = 3;
            c.T = 5;
            break;
        case 1: /* dense decode in place, default slots (sequence n in slot n) */
            c.B = 2;
            c.T = 1;
            c.default_slots = 1;
            break;
        case 2: /* packed: an empty sequence, one in place, two reading one slot */
            gdn_check_set_packed(&c, 5, (const int64_t[]){4, 0, 1, 19, 3});
            break;
        case 3: /* packed in place */
            gdn_check_set_packed(&c, 3, (const int64_t[]){2, 7, 0});
            break;
        default: /* packed, slot table by position */
            gdn_check_set_packed(&c, 4, (const int64_t[]){3, 1, 0, 6});
            c.capture_by_position = 1;
            break;
        }
        gdn_check_result r;
        checks++;
        if (!gdn_check_run(&c, &r)) {
            char d[512];
            gdn_check_describe(&c, d, sizeof d);
            printf("FAIL %s: capture of the last token into the write slot: %s: %s\n", where, d, r.message);
            failures++;
        }
    }
}

/* The fused gate (GDN_GATE_RAW: g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b), in the kernel)
 * equals the log gate fed with the formula's values computed here in f32: token loop and chunked. */
static void inv_fused_gate(gdn_context *ctx, const layer *ly)
{
    const gdn_problem *p = &ly->p;
    const int64_t Hv = p->num_v_heads, ys = Hv * (int64_t)p->v_dim;
    float A_log[64], dt_bias[64];
    for (int64_t h = 0; h < Hv && h < 64; h++) {
        A_log[h] = logf(1.0f + 1.5f * (float)h);     /* exp(A_log) in [1, ~10] */
        dt_bias[h] = -4.0f + 0.7f * (float)(h % 5);  /* softplus(a + dt_bias) around 0.02 .. 0.5 */
    }
    for (int pass = 0; pass < 2; pass++) {
        const int64_t T = pass ? 40 : 5; /* 40: chunked under AUTO; 5: the token loop */
        layer raw = *ly, lg = *ly;
        raw.p.gate = GDN_GATE_RAW;
        raw.A_log = A_log;
        raw.dt_bias = dt_bias;
        /* a = ly->g (small negative numbers), b = 4 * ly->beta - 2 */
        float *b = fmalloc((size_t)(T * Hv)), *gl = fmalloc((size_t)(T * Hv)), *bl = fmalloc((size_t)(T * Hv));
        for (int64_t t = 0; t < T; t++)
            for (int64_t h = 0; h < Hv; h++) {
                const int64_t i = t * Hv + h;
                b[i] = 4.0f * ly->beta[i] - 2.0f;
                const float x = ly->g[i] + dt_bias[h];
                const float sp = x > 20.0f ? x : log1pf(expf(x));
                gl[i] = -expf(A_log[h]) * sp;
                bl[i] = 1.0f / (1.0f + expf(-b[i]));
            }
        raw.beta = b;
        lg.g = gl;
        lg.beta = bl;
        float *pr = random_states(ly->hs, 21), *pl = fmalloc(ly->hs), *yr = fmalloc((size_t)(T * ys)),
              *yl = fmalloc((size_t)(T * ys));
        memcpy(pl, pr, ly->hs * sizeof(float));
        call cr = dense(0, T, yr, pr, 1, NULL, NULL), cl = dense(0, T, yl, pl, 1, NULL, NULL);
        expect_ok("fused gate", run(ctx, &raw, &cr), ctx);
        expect_ok("log gate with the formula's values", run(ctx, &lg, &cl), ctx);
        expect(pass ? "fused gate == formula's values (chunked): out" : "fused gate == formula's values: out", yr, yl,
               (size_t)(T * ys), 0);
        expect(pass ? "fused gate == formula's values (chunked): state" : "fused gate == formula's values: state", pr,
               pl, ly->hs, 0);
    }
    scratch_free();
}

int main(void)
{
    static const gdn_isa ISAS[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    for (int ii = 0; ii < 3; ii++) {
        const gdn_isa isa = ISAS[ii];
        if (!gdn_cpu_supports(isa)) {
            printf("SKIP isa=%s (CPU lacks it)\n", gdn_isa_name(isa));
            continue;
        }
        for (int shape = 0; shape < 2; shape++) {
            gdn_problem p;
            memset(&p, 0, sizeof p);
            p.num_k_heads = 2;
            p.num_v_heads = 6;
            p.k_dim = shape ? 40 : 64; /* 40: not a multiple of 16, the scalar fallback */
            p.v_dim = shape ? 24 : 32;
            p.state_layout = shape ? GDN_STATE_KV : GDN_STATE_VK;
            snprintf(where, sizeof where, "isa=%s Hk=%d Hv=%d Dk=%d Dv=%d layout=%s", gdn_isa_name(isa),
                     p.num_k_heads, p.num_v_heads, p.k_dim, p.v_dim, shape ? "kv" : "vk");
            gdn_context *ctx = NULL;
            gdn_context_desc d;
            memset(&d, 0, sizeof d);
            d.isa = isa;
            gdn_status st = gdn_context_create(&d, &ctx);
            if (st != GDN_STATUS_SUCCESS) {
                printf("FAIL %s: gdn_context_create: %s\n", where, gdn_last_error(NULL));
                failures++;
                continue;
            }
            layer ly;
            layer_make(&ly, &p, 131, 0x696e76ull + (uint64_t)(ii * 2 + shape));
            inv_prefill(ctx, &ly);
            inv_headmap(ctx, &ly);
            inv_varlen(ctx, &ly);
            inv_replay(ctx, &ly);
            inv_fused_gate(ctx, &ly);
            inv_zero_strides(ctx, &ly);
            inv_chunked(ctx, &ly);
            inv_strided(ctx, isa, &p);
            inv_capture_last_in_write_slot(isa, &p);
            layer_free(&ly);
            gdn_context_destroy(ctx);
        }
    }
    printf("%s: %d checks, %d failures\n", failures ? "FAIL" : "PASS", checks, failures);
    return failures ? 1 : 0;
}
