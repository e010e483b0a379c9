/*
 * cmd_spec.c — `gdn spec`: a self-checking speculative-decoding loop on one Gated DeltaNet layer of
 * a real model's shape (random weights), as an engine runs it with MTP or a draft model.
 *
 * The layer: causal conv1d (width 4, SiLU) over the packed q|k|v channels, then the recurrence with
 * the model's gate (raw: g = -exp(A_log) softplus(a + dt_bias), beta = sigmoid(b)) and in-kernel
 * q/k L2 norm; q, k and v are strided views into the convolution's output (no copies).
 * Each of B sequences has a stream of tokens. Every step drafts the next K tokens of each stream,
 * verifies them in one call per op, accepts a random prefix of n in 0..K per sequence, and rolls back
 * to the state after the n accepted tokens, by one of two methods:
 *   capture  the verify captures the conv and recurrent states after every token into the state
 *            pools (slots, vLLM style); the next step reads from the slot of token n-1: no copies;
 *   replay   the verify stores no state; the rollback repeats the verify calls with
 *            batch.num_tokens = n and no outputs, updating the pre-verify slots in place.
 * At the end both methods' states and the outputs of every accepted token are compared with plain
 * token-by-token decoding of the accepted tokens (relative RMS <= 1e-5), and the accepted tokens
 * per second of each method are printed. Exit status 1 if a check fails.
 */
#include "tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "spec"
#define WIDTH 4
#define TOL 1e-5

void cmd_spec_help(void)
{
    printf("usage: gdn spec [--model NAME] [--B N] [--K N] [--steps N] [--threads N] [--seed N]\n"
           "\n"
           "A speculative-decoding loop on one GDN layer of a model's shape (default qwen3.6-35b-a3b)\n"
           "with random weights: conv1d (width 4, SiLU) over q|k|v, then the recurrence (raw gate,\n"
           "q/k L2 norm). Each step drafts K tokens per sequence (default B=4, K=4, 32 steps),\n"
           "verifies them, accepts a random prefix (0..K) and rolls back, by capture (states after\n"
           "every token captured into the pools' slots) and by replay (the verify repeated on the\n"
           "accepted tokens with batch.num_tokens, no output). Both are checked against plain\n"
           "token-by-token decoding of the accepted tokens (states and outputs, relative RMS <= 1e-5);\n"
           "prints accepted tokens per second for each method. Exit status 1 if a check fails.\n");
}

enum { O_MODEL, O_B, O_K, O_STEPS, O_THREADS, O_SEED };
static const tool_opt spec_options[] = {{"--model", 1}, {"--B", 1}, {"--K", 1}, {"--steps", 1},
                                        {"--threads", 1}, {"--seed", 1}, {NULL, 0}};

/* xorshift64*: the same stream of numbers on every machine */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static float rng_uniform(uint64_t *s) /* [0, 1) */
{
    return (float)((rng_next(s) >> 40) * (1.0 / 16777216.0));
}

static double rel_rms(const float *a, const float *b, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* Zero n floats through a volatile pointer: the stores happen (a compiler may turn malloc + memset 0
 * into calloc, whose pages would then fault inside the timed loop). */
static void touch_zero(float *p, size_t n)
{
    volatile float *v = p;
    for (size_t i = 0; i < n; i++)
        v[i] = 0.0f;
}

/* The layer and its buffers. */
typedef struct spec {
    gdn_context *ctx;
    int B, K, steps, Hk, Hv, Dk, Dv;
    int64_t C, L;            /* channels; stream length per sequence (steps * K) */
    float *weight, *bias, *A_log, *dt_bias;
    float *xs, *as, *bs;     /* streams: [B][L][C], [B][L][Hv] x2 */
    int *accept;             /* [steps][B] */
    float *x, *a, *b;        /* one verify's inputs: [B][K][C], [B][K][Hv] x2 */
    float *y, *out;          /* [B][K][C], [B][K][Hv][Dv] */
    int64_t hs, cs;          /* floats per recurrent state (Hv*Dv*Dk) and conv state (C*(W-1)) */
} spec;

/* One call of the layer: conv then recurrence over [B][T] tokens in sp->x/a/b, with the given
 * slots, captures and counts. */
typedef struct layer_call {
    int T;
    float *rpool, *cpool;      /* recurrent pool [S][Hv][Dv][Dk], conv pool [S][C][W-1] */
    int64_t slots;
    const int32_t *rs, *ws;    /* [B] */
    const int32_t *cap;        /* NULL, or the capture slot table [B][K] (into both pools) */
    const int32_t *num_tokens; /* NULL or [B] */
    int outputs;               /* write y and out (else: replay, no outputs... y still needed) */
} layer_call;

static gdn_status run_layer(spec *sp, const layer_call *lc)
{
    const int64_t B = sp->B, T = lc->T, C = sp->C, Hk = sp->Hk, Hv = sp->Hv, Dk = sp->Dk, Dv = sp->Dv;
    gdn_batch bt;
    gdn_status st;
    memset(&bt, 0, sizeof bt);
    bt.batch_size = B;
    bt.seq_len = T;
    bt.num_tokens = lc->num_tokens;

    /* the convolution: x [B,T,C] -> y [B,T,C] (the recurrence needs y even when replaying) */
    gdn_conv_problem cp;
    gdn_conv_tensors ct;
    memset(&cp, 0, sizeof cp);
    memset(&ct, 0, sizeof ct);
    cp.channels = (int)C;
    cp.width = WIDTH;
    cp.activation = GDN_CONV_SILU;
    cp.dtype = GDN_DTYPE_F32;
    {
        const int64_t sx[3] = {B, T, C}, sw[2] = {C, WIDTH}, sc[3] = {lc->slots, C, WIDTH - 1};
        ct.x = gdn_tensor_contiguous(sp->x, 3, sx);
        ct.y = gdn_tensor_contiguous(sp->y, 3, sx);
        ct.x.strides[0] = sp->K * C; /* the buffers hold K tokens per sequence */
        ct.x.strides[1] = C;
        ct.x.strides[2] = 1;
        ct.y.strides[0] = sp->K * C;
        ct.y.strides[1] = C;
        ct.y.strides[2] = 1;
        ct.weight = gdn_tensor_contiguous(sp->weight, 2, sw);
        ct.bias = sp->bias;
        ct.state.pool = gdn_tensor_contiguous(lc->cpool, 3, sc);
        ct.state.read_slots = lc->rs;
        ct.state.write_slots = lc->ws;
        if (lc->cap) {
            ct.capture.mode = GDN_CAPTURE_SLOTS;
            ct.capture.states = ct.state.pool;
            ct.capture.slots = lc->cap;
            ct.capture.slots_stride = sp->K;
        }
    }
    if ((st = gdn_conv1d_forward(sp->ctx, &cp, &bt, &ct)) != GDN_STATUS_SUCCESS)
        return st;

    /* the recurrence on views of y: q = y[..., 0:Hk*Dk], k = y[..., Hk*Dk:2*Hk*Dk], v = the rest */
    gdn_problem p;
    gdn_tensors t;
    memset(&p, 0, sizeof p);
    memset(&t, 0, sizeof t);
    p.num_k_heads = (int)Hk;
    p.num_v_heads = (int)Hv;
    p.k_dim = (int)Dk;
    p.v_dim = (int)Dv;
    p.gate = GDN_GATE_RAW;
    p.qk_l2norm = 1;
    {
        const int64_t sq[4] = {B, T, Hk, Dk}, sv[4] = {B, T, Hv, Dv}, sg[3] = {B, T, Hv};
        const int64_t sr[4] = {lc->slots, Hv, Dv, Dk};
        t.q = gdn_tensor_contiguous(sp->y, 4, sq);
        t.k = gdn_tensor_contiguous(sp->y + Hk * Dk, 4, sq);
        t.v = gdn_tensor_contiguous(sp->y + 2 * Hk * Dk, 4, sv);
        const int64_t stq[4] = {sp->K * C, C, Dk, 1}, stv[4] = {sp->K * C, C, Dv, 1};
        memcpy(t.q.strides, stq, sizeof stq);
        memcpy(t.k.strides, stq, sizeof stq);
        memcpy(t.v.strides, stv, sizeof stv);
        t.g = gdn_tensor_contiguous(sp->a, 3, sg);
        t.beta = gdn_tensor_contiguous(sp->b, 3, sg);
        const int64_t stg[3] = {sp->K * Hv, Hv, 1};
        memcpy(t.g.strides, stg, sizeof stg);
        memcpy(t.beta.strides, stg, sizeof stg);
        t.A_log = sp->A_log;
        t.dt_bias = sp->dt_bias;
        if (lc->outputs) {
            t.out = gdn_tensor_contiguous(sp->out, 4, sv);
            const int64_t sto[4] = {sp->K * Hv * Dv, Hv * Dv, Dv, 1};
            memcpy(t.out.strides, sto, sizeof sto);
        }
        t.state.pool = gdn_tensor_contiguous(lc->rpool, 4, sr);
        t.state.read_slots = lc->rs;
        t.state.write_slots = lc->ws;
        if (lc->cap) {
            t.capture.mode = GDN_CAPTURE_SLOTS;
            t.capture.states = t.state.pool;
            t.capture.slots = lc->cap;
            t.capture.slots_stride = sp->K;
        }
    }
    return gdn_forward(sp->ctx, &p, &bt, &t);
}

/* The verify inputs of one step: the K stream tokens of each sequence from its position pos[b]. */
static void load_step(spec *sp, const int64_t *pos, int T)
{
    const int64_t C = sp->C, Hv = sp->Hv;
    for (int b = 0; b < sp->B; b++)
        for (int t = 0; t < T; t++) {
            const int64_t i = pos[b] + t < sp->L ? pos[b] + t : sp->L - 1;
            memcpy(sp->x + ((int64_t)b * sp->K + t) * C, sp->xs + ((int64_t)b * sp->L + i) * C, (size_t)C * 4);
            memcpy(sp->a + ((int64_t)b * sp->K + t) * Hv, sp->as + ((int64_t)b * sp->L + i) * Hv, (size_t)Hv * 4);
            memcpy(sp->b + ((int64_t)b * sp->K + t) * Hv, sp->bs + ((int64_t)b * sp->L + i) * Hv, (size_t)Hv * 4);
        }
}

typedef struct method_result {
    double seconds;
    int64_t accepted;
    float *rstate, *cstate; /* final states [B][hs], [B][cs] */
    float *outs;            /* [B][L][Hv*Dv]: the output of every accepted token */
} method_result;

/* Run the loop with rollback by capture (replay = 0) or by replay (replay = 1). */
static int run_method(spec *sp, int replay, method_result *res)
{
    const int B = sp->B, K = sp->K;
    /* capture: two banks of K capture slots per sequence, used in turn, so that the slot a sequence
       continues from is never the target of the next verify's captures (a step may accept nothing) */
    const int64_t S = replay ? B : (int64_t)B + 2 * (int64_t)B * K, hs = sp->hs, cs = sp->cs,
                  ho = (int64_t)sp->Hv * sp->Dv;
    float *rpool = malloc((size_t)(S * hs) * sizeof(float)), *cpool = malloc((size_t)(S * cs) * sizeof(float));
    int32_t *rs = malloc(sizeof(int32_t) * (size_t)B), *ws = malloc(sizeof(int32_t) * (size_t)B);
    int32_t *wneg = malloc(sizeof(int32_t) * (size_t)B), *cap = malloc(sizeof(int32_t) * (size_t)B * (size_t)K);
    int32_t *cnt = malloc(sizeof(int32_t) * (size_t)B);
    int64_t *pos = calloc((size_t)B, sizeof(int64_t));
    int rc = -1;
    if (!rpool || !cpool || !rs || !ws || !wneg || !cap || !cnt || !pos) {
        tool_error(CMD, "out of memory for the state pools");
        goto done;
    }
    /* zeros, and every page touched before timing (an engine's pools are allocated once and warm) */
    touch_zero(rpool, (size_t)(S * hs));
    touch_zero(cpool, (size_t)(S * cs));
    for (int b = 0; b < B; b++) {
        rs[b] = b;
        ws[b] = b;
        wneg[b] = -1;
    }
    const double t0 = tool_now();
    for (int s = 0; s < sp->steps; s++) {
        gdn_status st;
        load_step(sp, pos, K);
        for (int b = 0; b < B; b++) { /* the bank the read slot is not in */
            const int bank = rs[b] >= B && (rs[b] - B) / K % 2 == 0 ? 1 : 0;
            for (int t = 0; t < K; t++)
                cap[b * K + t] = B + (2 * b + bank) * K + t;
        }
        /* verify: K draft tokens per sequence, outputs, no final state stored */
        layer_call v = {K, rpool, cpool, S, rs, wneg, replay ? NULL : cap, NULL, 1};
        if ((st = run_layer(sp, &v)) != GDN_STATUS_SUCCESS) {
            tool_error(CMD, "verify (step %d): %s: %s", s, gdn_status_string(st), gdn_last_error(sp->ctx));
            goto done;
        }
        for (int b = 0; b < B; b++) { /* keep the outputs of the accepted tokens */
            const int n = sp->accept[s * B + b];
            for (int t = 0; t < n; t++)
                memcpy(res->outs + ((int64_t)b * sp->L + pos[b] + t) * ho, sp->out + ((int64_t)b * K + t) * ho,
                       (size_t)ho * 4);
            cnt[b] = n;
        }
        if (replay) { /* the same calls on the accepted tokens, no outputs, into the pre-verify slots */
            layer_call r = {K, rpool, cpool, S, rs, ws, NULL, cnt, 0};
            if ((st = run_layer(sp, &r)) != GDN_STATUS_SUCCESS) {
                tool_error(CMD, "replay (step %d): %s: %s", s, gdn_status_string(st), gdn_last_error(sp->ctx));
                goto done;
            }
        } else { /* continue from the slot captured after the last accepted token */
            for (int b = 0; b < B; b++)
                if (cnt[b] > 0)
                    rs[b] = cap[b * K + cnt[b] - 1];
        }
        for (int b = 0; b < B; b++) {
            pos[b] += cnt[b];
            res->accepted += cnt[b];
        }
    }
    res->seconds = tool_now() - t0;
    for (int b = 0; b < B; b++) {
        memcpy(res->rstate + b * hs, rpool + (int64_t)rs[b] * hs, (size_t)hs * 4);
        memcpy(res->cstate + b * cs, cpool + (int64_t)rs[b] * cs, (size_t)cs * 4);
    }
    rc = 0;
done:
    free(rpool);
    free(cpool);
    free(rs);
    free(ws);
    free(wneg);
    free(cap);
    free(cnt);
    free(pos);
    return rc;
}

/* Plain decoding: the accepted tokens of each sequence one at a time (B = 1 calls). */
static int run_plain(spec *sp, method_result *res, const int64_t *total)
{
    const int64_t hs = sp->hs, cs = sp->cs, ho = (int64_t)sp->Hv * sp->Dv;
    const int B = sp->B;
    int rc = -1;
    spec one = *sp;
    one.B = 1;
    float *rpool = calloc((size_t)hs, sizeof(float)), *cpool = calloc((size_t)cs, sizeof(float));
    if (!rpool || !cpool) {
        tool_error(CMD, "out of memory");
        goto done;
    }
    const double t0 = tool_now();
    for (int b = 0; b < B; b++) {
        memset(rpool, 0, (size_t)hs * 4);
        memset(cpool, 0, (size_t)cs * 4);
        for (int64_t i = 0; i < total[b]; i++) {
            const int64_t p1 = b * sp->L + i;
            memcpy(one.x, sp->xs + p1 * sp->C, (size_t)sp->C * 4);
            memcpy(one.a, sp->as + p1 * sp->Hv, (size_t)sp->Hv * 4);
            memcpy(one.b, sp->bs + p1 * sp->Hv, (size_t)sp->Hv * 4);
            layer_call d = {1, rpool, cpool, 1, NULL, NULL, NULL, NULL, 1};
            gdn_status st = run_layer(&one, &d);
            if (st != GDN_STATUS_SUCCESS) {
                tool_error(CMD, "plain decode: %s: %s", gdn_status_string(st), gdn_last_error(sp->ctx));
                goto done;
            }
            memcpy(res->outs + p1 * ho, one.out, (size_t)ho * 4);
            res->accepted++;
        }
        memcpy(res->rstate + b * hs, rpool, (size_t)hs * 4);
        memcpy(res->cstate + b * cs, cpool, (size_t)cs * 4);
    }
    res->seconds = tool_now() - t0;
    rc = 0;
done:
    free(rpool);
    free(cpool);
    return rc;
}

static int alloc_result(const spec *sp, method_result *r)
{
    memset(r, 0, sizeof *r);
    r->rstate = calloc((size_t)(sp->B * sp->hs), sizeof(float));
    r->cstate = calloc((size_t)(sp->B * sp->cs), sizeof(float));
    const size_t no = (size_t)(sp->B * sp->L) * (size_t)(sp->Hv * sp->Dv);
    r->outs = malloc(no * sizeof(float));
    if (r->outs)
        touch_zero(r->outs, no); /* zeros (unaccepted positions), pages touched */
    return r->rstate && r->cstate && r->outs ? 0 : -1;
}

static void free_result(method_result *r)
{
    free(r->rstate);
    free(r->cstate);
    free(r->outs);
}

/* The outputs of the accepted tokens only (the rest of outs is zero in every result). */
static int check(const char *what, const spec *sp, const method_result *m, const method_result *ref)
{
    const size_t no = (size_t)(sp->B * sp->L) * (size_t)(sp->Hv * sp->Dv);
    const double er = rel_rms(m->rstate, ref->rstate, (size_t)(sp->B * sp->hs));
    const double ec = rel_rms(m->cstate, ref->cstate, (size_t)(sp->B * sp->cs));
    const double eo = rel_rms(m->outs, ref->outs, no);
    const int ok = er <= TOL && ec <= TOL && eo <= TOL && m->accepted == ref->accepted;
    printf("%-8s  %8lld accepted tokens  %9.1f ms  %10.0f tokens/s   vs plain decoding: recurrent state %.1e, "
           "conv state %.1e, outputs %.1e  %s\n",
           what, (long long)m->accepted, m->seconds * 1e3, m->seconds > 0 ? (double)m->accepted / m->seconds : 0.0,
           er, ec, eo, ok ? "ok" : "FAIL");
    return ok;
}

int cmd_spec(int argc, char **argv)
{
    const tool_model *m = tool_model_default();
    long long B = 4, K = 4, steps = 32, threads = 0, seed = 1;
    int i = 1, idx, rc = TOOL_EXIT_DATA;
    const char *val;
    while (i < argc) {
        idx = tool_next_opt(CMD, argc, argv, &i, spec_options, &val);
        if (idx == TOOL_OPT_HELP) {
            cmd_spec_help();
            return TOOL_EXIT_OK;
        }
        if (idx < 0)
            return TOOL_EXIT_USAGE;
        switch (idx) {
        case O_MODEL:
            if (!(m = tool_model_find(val))) {
                tool_error(CMD, "--model: unknown model '%s' (gdn bench --model list)", val);
                return TOOL_EXIT_USAGE;
            }
            break;
        case O_B:
            if (tool_parse_int(CMD, "--B", val, 1, 256, &B))
                return TOOL_EXIT_USAGE;
            break;
        case O_K:
            if (tool_parse_int(CMD, "--K", val, 1, 16, &K))
                return TOOL_EXIT_USAGE;
            break;
        case O_STEPS:
            if (tool_parse_int(CMD, "--steps", val, 1, 100000, &steps))
                return TOOL_EXIT_USAGE;
            break;
        case O_THREADS:
            if (tool_parse_int(CMD, "--threads", val, 0, 4096, &threads))
                return TOOL_EXIT_USAGE;
            break;
        case O_SEED:
            if (tool_parse_int(CMD, "--seed", val, 0, INT64_MAX, &seed))
                return TOOL_EXIT_USAGE;
            break;
        default:
            break;
        }
    }

    spec sp;
    memset(&sp, 0, sizeof sp);
    sp.B = (int)B;
    sp.K = (int)K;
    sp.steps = (int)steps;
    sp.Hk = m->num_k_heads;
    sp.Hv = m->num_v_heads;
    sp.Dk = m->k_dim;
    sp.Dv = m->v_dim;
    sp.C = 2 * (int64_t)sp.Hk * sp.Dk + (int64_t)sp.Hv * sp.Dv;
    sp.L = (int64_t)sp.steps * sp.K;
    sp.hs = (int64_t)sp.Hv * sp.Dv * sp.Dk;
    sp.cs = sp.C * (WIDTH - 1);
    if ((double)sp.B * sp.L * sp.C > 1.5e9 || (double)sp.B * (1 + sp.K) * sp.hs > 1.5e9) {
        tool_error(CMD, "--B, --K, --steps: the streams or state pools would take more than 6 GB");
        return TOOL_EXIT_USAGE;
    }
    if (!(sp.ctx = tool_context_create(CMD, GDN_BACKEND_CPU, (int)threads, GDN_ISA_AUTO)))
        return TOOL_EXIT_DATA;

    method_result mc, mr, mp;
    memset(&mc, 0, sizeof mc);
    memset(&mr, 0, sizeof mr);
    memset(&mp, 0, sizeof mp);
    int64_t *total = calloc((size_t)sp.B, sizeof(int64_t));
    const int64_t C = sp.C, Hv = sp.Hv, BL = (int64_t)sp.B * sp.L;
    sp.weight = malloc((size_t)(C * WIDTH) * 4);
    sp.bias = malloc((size_t)C * 4);
    sp.A_log = malloc((size_t)Hv * 4);
    sp.dt_bias = malloc((size_t)Hv * 4);
    sp.xs = malloc((size_t)(BL * C) * 4);
    sp.as = malloc((size_t)(BL * Hv) * 4);
    sp.bs = malloc((size_t)(BL * Hv) * 4);
    sp.accept = malloc(sizeof(int) * (size_t)sp.steps * (size_t)sp.B);
    sp.x = malloc((size_t)((int64_t)sp.B * sp.K * C) * 4);
    sp.y = malloc((size_t)((int64_t)sp.B * sp.K * C) * 4);
    sp.a = malloc((size_t)((int64_t)sp.B * sp.K * Hv) * 4);
    sp.b = malloc((size_t)((int64_t)sp.B * sp.K * Hv) * 4);
    sp.out = malloc((size_t)((int64_t)sp.B * sp.K * Hv * sp.Dv) * 4);
    if (!total || !sp.weight || !sp.bias || !sp.A_log || !sp.dt_bias || !sp.xs || !sp.as || !sp.bs || !sp.accept ||
        !sp.x || !sp.y || !sp.a || !sp.b || !sp.out || alloc_result(&sp, &mc) || alloc_result(&sp, &mr) ||
        alloc_result(&sp, &mp)) {
        tool_error(CMD, "out of memory for the streams");
        goto done;
    }
    /* random weights and streams (the model's ranges: A_log = log U(1,16), softplus(dt_bias) in
       [0.001, 0.1], gate inputs and projections O(1)) */
    {
        uint64_t s = 0x9E3779B97F4A7C15ULL ^ (uint64_t)seed;
        for (int64_t j = 0; j < C * WIDTH; j++)
            sp.weight[j] = (rng_uniform(&s) - 0.5f);
        for (int64_t j = 0; j < C; j++)
            sp.bias[j] = 0.1f * (rng_uniform(&s) - 0.5f);
        for (int64_t h = 0; h < Hv; h++) {
            sp.A_log[h] = logf(1.0f + 15.0f * rng_uniform(&s));
            sp.dt_bias[h] = logf(expm1f(0.001f + 0.099f * rng_uniform(&s)));
        }
        for (int64_t j = 0; j < BL * C; j++)
            sp.xs[j] = 2.0f * (rng_uniform(&s) - 0.5f);
        for (int64_t j = 0; j < BL * Hv; j++) {
            sp.as[j] = 2.0f * (rng_uniform(&s) - 0.5f);
            sp.bs[j] = 2.0f * (rng_uniform(&s) - 0.5f);
        }
        for (int64_t j = 0; j < (int64_t)sp.steps * sp.B; j++) {
            sp.accept[j] = (int)(rng_next(&s) % (uint64_t)(sp.K + 1));
            total[j % sp.B] += sp.accept[j];
        }
    }
    printf("gdn spec: %s layer (Hk=%d Hv=%d Dk=%d Dv=%d; conv1d width %d over C=%lld channels, SiLU; raw gate; "
           "q/k L2 norm), f32, %d threads\n",
           m->name, sp.Hk, sp.Hv, sp.Dk, sp.Dv, WIDTH, (long long)C, gdn_context_num_threads(sp.ctx));
    printf("B=%d sequences, K=%d draft tokens per step, %d steps, a random number of accepted tokens (0..K) per "
           "sequence and step\n\n",
           sp.B, sp.K, sp.steps);
    if (run_method(&sp, 0, &mc) || run_method(&sp, 1, &mr) || run_plain(&sp, &mp, total))
        goto done;
    {
        const int ok1 = check("capture", &sp, &mc, &mp), ok2 = check("replay", &sp, &mr, &mp);
        printf("%-8s  %8lld accepted tokens  %9.1f ms  %10.0f tokens/s   (the reference: one token per call, one "
               "sequence at a time)\n", "plain", (long long)mp.accepted, mp.seconds * 1e3,
               mp.seconds > 0 ? (double)mp.accepted / mp.seconds : 0.0);
        rc = ok1 && ok2 ? TOOL_EXIT_OK : TOOL_EXIT_DATA;
        if (rc != TOOL_EXIT_OK)
            tool_error(CMD, "a rollback method does not match plain decoding (see above)");
    }
done:
    gdn_context_destroy(sp.ctx);
    free(total);
    free(sp.weight);
    free(sp.bias);
    free(sp.A_log);
    free(sp.dt_bias);
    free(sp.xs);
    free(sp.as);
    free(sp.bs);
    free(sp.accept);
    free(sp.x);
    free(sp.y);
    free(sp.a);
    free(sp.b);
    free(sp.out);
    free_result(&mc);
    free_result(&mr);
    free_result(&mp);
    return rc;
}
