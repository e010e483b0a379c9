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
 *
 * The accepted counts are drawn before the loop, so every step's verify inputs and every slot table
 * are laid out once beforehand ([steps][B][K] tokens; a real engine has them in place too): the timed
 * loops make the library's calls and nothing else. With --backend cuda every one of those buffers,
 * the pools and the index arrays are device memory, uploaded before the loop; the results are
 * copied back after gdn_context_synchronize (which also reports errors found on the device).
 */
#include "check/rng.h"
#include "devmem.h"
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
           "                [--backend cpu|cuda]\n"
           "\n"
           "A speculative-decoding loop on one GDN layer of a model's shape (default qwen3.6-35b-a3b)\n"
           "with random weights: conv1d (width 4, SiLU) over q|k|v, then the recurrence (raw gate,\n"
           "q/k L2 norm). Each step drafts K tokens per sequence (default B=4, K=4, 32 steps),\n"
           "verifies them, accepts a random prefix (0..K) and rolls back, by capture (states after\n"
           "every token captured into the pools' slots) and by replay (the verify repeated on the\n"
           "accepted tokens with batch.num_tokens, no output). Both are checked against plain\n"
           "token-by-token decoding of the accepted tokens (states and outputs, relative RMS <= 1e-5);\n"
           "prints accepted tokens per second for each method. Exit status 1 if a check fails.\n"
           "\n"
           "  --backend cpu|cuda  (default cpu) cuda: the same loop on GPU 0, every tensor, state pool\n"
           "                      and index array (slots, capture slots, num_tokens) in device memory;\n"
           "                      each method runs once untimed first, then is timed up to a\n"
           "                      gdn_context_synchronize. A call may take a different kernel in\n"
           "                      each method there, so the methods are compared with plain\n"
           "                      decoding within the tolerance above, not bitwise. No CUDA device\n"
           "                      (or no CUDA built in): exit status 1.\n"
           "  --threads N         CPU threads, 0 = all cores (default 0; CPU backend only)\n"
           "  --seed N            the random weights, streams and accepted counts (default 1)\n");
}

enum { O_MODEL, O_B, O_K, O_STEPS, O_THREADS, O_SEED, O_BACKEND };
static const tool_opt spec_options[] = {{"--model", 1}, {"--B", 1},    {"--K", 1},       {"--steps", 1},
                                        {"--threads", 1}, {"--seed", 1}, {"--backend", 1}, {NULL, 0}};

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

/* The layer and its buffers. Those marked (be) live on the context's backend: host memory on the
 * CPU, device memory on CUDA. */
typedef struct spec {
    gdn_context *ctx;
    int cuda;                /* the CUDA backend */
    int B, K, steps, Hk, Hv, Dk, Dv;
    int64_t C, L;            /* channels; stream length per sequence (steps * K) */
    int64_t hs, cs;          /* floats per recurrent state (Hv*Dv*Dk) and conv state (C*(W-1)) */
    float *weight, *bias, *A_log, *dt_bias; /* (be) */
    float *x, *a, *b;        /* (be) every step's verify inputs: [steps][B][K][C], [steps][B][K][Hv] x2 */
    float *y;                /* (be) the convolution's output of one call: [B][K][C] */
    float *out;              /* (be) every step's outputs [steps][B][K][Hv*Dv] (plain decoding: its tokens') */
    int32_t *seq, *none;     /* (be) [B]: 0..B-1 (slot b of a pool) and -1 (store no state) */
    int32_t *accept;         /* [steps][B] accepted counts */
    int64_t *tok;            /* [B][L]: where accepted token i of sequence b is in the step buffers */
    int64_t *total;          /* [B]: accepted tokens per sequence */
    float *stage;            /* CUDA: a host copy of out, for the checks */
} spec;

/* ---- memory on the backend ------------------------------------------------------------------ */

/* n floats of zeros on the backend (on the CPU every page touched: an engine's pools are allocated
 * once and warm), or NULL. */
static float *be_zeros(const spec *sp, size_t n)
{
    void *p = NULL;
    if (sp->cuda)
        return tool_dev_alloc(&p, n * sizeof(float)) ? NULL : (float *)p;
    if ((p = malloc((n ? n : 1) * sizeof(float))))
        touch_zero(p, n);
    return p;
}

/* Moves host (from malloc, `bytes` long; NULL: none) to the backend: itself on the CPU; on CUDA a
 * device copy, host freed. NULL if host is NULL or the copy failed. */
static void *be_take(const spec *sp, void *host, size_t bytes)
{
    void *d = NULL;
    if (!sp->cuda || !host)
        return host;
    if (tool_dev_upload(&d, host, bytes))
        d = NULL;
    free(host);
    return d;
}

static void be_free(const spec *sp, void *p)
{
    if (sp->cuda)
        tool_dev_free(p);
    else
        free(p);
}

/* host[0..bytes) = p[0..bytes) on the backend; 0, or -1 (CUDA: see tool_dev_error). */
static int be_read(const spec *sp, void *host, const void *p, size_t bytes)
{
    if (sp->cuda)
        return tool_dev_download(host, p, bytes);
    memcpy(host, p, bytes);
    return 0;
}

/* Reports a failure of the be_ functions: out of memory on the CPU, the CUDA error on CUDA. */
static void be_error(const spec *sp, const char *what)
{
    if (sp->cuda)
        tool_error(CMD, "--backend cuda: %s: %s", what, tool_dev_error());
    else
        tool_error(CMD, "out of memory for %s", what);
}

/* ---- the layer ------------------------------------------------------------------------------ */

/* One call of the layer: conv then recurrence over [B][T] tokens that lie K tokens apart between
 * sequences (the layout of the step buffers), with the given pools, slots, captures and counts.
 * Every pointer is on the backend. */
typedef struct layer_call {
    int B, T;
    float *x, *a, *b;          /* inputs: [B][K][C], [B][K][Hv] x2 (the first T tokens of each row) */
    float *out;                /* outputs [B][K][Hv][Dv], or NULL: none (replay; y is still needed) */
    float *rpool, *cpool;      /* recurrent pool [S][Hv][Dv][Dk], conv pool [S][C][W-1] */
    int64_t slots;
    const int32_t *rs, *ws;    /* [B] */
    const int32_t *cap;        /* NULL, or the capture slot table [B][K] (into both pools) */
    const int32_t *num_tokens; /* NULL or [B] */
} layer_call;

static gdn_status run_layer(spec *sp, const layer_call *lc)
{
    const int64_t B = lc->B, T = lc->T, C = sp->C, Hk = sp->Hk, Hv = sp->Hv, Dk = sp->Dk, Dv = sp->Dv;
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
        ct.x = gdn_tensor_contiguous(lc->x, 3, sx);
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
        t.g = gdn_tensor_contiguous(lc->a, 3, sg);
        t.beta = gdn_tensor_contiguous(lc->b, 3, sg);
        const int64_t stg[3] = {sp->K * Hv, Hv, 1};
        memcpy(t.g.strides, stg, sizeof stg);
        memcpy(t.beta.strides, stg, sizeof stg);
        t.A_log = sp->A_log;
        t.dt_bias = sp->dt_bias;
        if (lc->out) {
            t.out = gdn_tensor_contiguous(lc->out, 4, sv);
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

/* ---- the methods ---------------------------------------------------------------------------- */

typedef struct method_result {
    double seconds;
    int64_t accepted;
    float *rstate, *cstate; /* final states [B][hs], [B][cs] */
    float *outs;            /* [B][L][Hv*Dv]: the output of every accepted token */
} method_result;

/* The read slot table rtab [steps+1][B] of a method (row s: the slots step s's verify reads; row
 * steps: where each sequence ends) and, for capture, its capture slot table ctab [steps][B][K].
 * Replay reads and writes slot b throughout. Capture: two banks of K capture slots per sequence
 * after the B slots, used in turn, so that the slot a sequence continues from is never the target
 * of the next verify's captures (a step may accept nothing). */
static void plan_slots(const spec *sp, int32_t *rtab, int32_t *ctab)
{
    const int B = sp->B, K = sp->K;
    for (int b = 0; b < B; b++)
        rtab[b] = b;
    for (int s = 0; s < sp->steps; s++)
        for (int b = 0; b < B; b++) {
            const int32_t r = rtab[s * B + b];
            const int n = sp->accept[s * B + b];
            if (!ctab) {
                rtab[(s + 1) * B + b] = r;
                continue;
            }
            int32_t *cap = ctab + ((int64_t)s * B + b) * K;
            const int bank = r >= B && (r - B) / K % 2 == 0 ? 1 : 0; /* the bank the read slot is not in */
            for (int t = 0; t < K; t++)
                cap[t] = B + (2 * b + bank) * K + t;
            rtab[(s + 1) * B + b] = n > 0 ? cap[n - 1] : r; /* continue from the last accepted token */
        }
}

/* Wait for the method's calls (CUDA: and report errors the device found in them). */
static int finish(spec *sp, const char *what)
{
    const gdn_status st = gdn_context_synchronize(sp->ctx);
    if (st == GDN_STATUS_SUCCESS)
        return 0;
    tool_error(CMD, "%s: %s: %s", what, gdn_status_string(st), gdn_last_error(sp->ctx));
    return -1;
}

/* res's final states (slot slots[b] of the pools, or slot b when slots is NULL; host slots), its
 * outputs of the accepted tokens (from sp->out, where every method writes them) and their count. */
static int collect(spec *sp, const float *rpool, const float *cpool, const int32_t *slots, method_result *res)
{
    const int64_t hs = sp->hs, cs = sp->cs, ho = (int64_t)sp->Hv * sp->Dv;
    const float *o = sp->out;
    for (int b = 0; b < sp->B; b++) {
        const int64_t r = slots ? slots[b] : b;
        if (be_read(sp, res->rstate + b * hs, rpool + r * hs, (size_t)hs * 4) ||
            be_read(sp, res->cstate + b * cs, cpool + r * cs, (size_t)cs * 4))
            goto fail;
    }
    if (sp->cuda) {
        if (be_read(sp, sp->stage, sp->out, (size_t)((int64_t)sp->B * sp->L * ho) * 4))
            goto fail;
        o = sp->stage;
    }
    res->accepted = 0;
    for (int b = 0; b < sp->B; b++) {
        for (int64_t i = 0; i < sp->total[b]; i++) {
            const int64_t p = (int64_t)b * sp->L + i;
            memcpy(res->outs + p * ho, o + sp->tok[p] * ho, (size_t)ho * 4);
        }
        res->accepted += sp->total[b];
    }
    return 0;
fail:
    be_error(sp, "copying the results back");
    return -1;
}

/* A method's slot tables on the backend: rtab and ctab (plan_slots) and, for replay, the accepted
 * counts cnt ([steps][B]); the final read slots in last (host, [B]). 0, or -1 after reporting (then
 * nothing is allocated). */
static int method_tables(spec *sp, int replay, int32_t **rtab, int32_t **ctab, int32_t **cnt, int32_t *last)
{
    const size_t B = (size_t)sp->B, nr = ((size_t)sp->steps + 1) * B * 4, nc = (size_t)sp->steps * B * (size_t)sp->K * 4,
                 nn = (size_t)sp->steps * B * 4;
    int32_t *r = malloc(nr), *c = replay ? NULL : malloc(nc), *n = replay ? malloc(nn) : NULL;
    if (!r || (!replay && !c) || (replay && !n)) {
        free(r);
        free(c);
        free(n);
        tool_error(CMD, "out of memory for the slot tables");
        return -1;
    }
    plan_slots(sp, r, c);
    memcpy(last, r + sp->steps * B, B * 4);
    if (n)
        memcpy(n, sp->accept, nn);
    *rtab = be_take(sp, r, nr); /* each frees its host table on CUDA */
    *ctab = be_take(sp, c, nc);
    *cnt = be_take(sp, n, nn);
    if (*rtab && (replay || *ctab) && (!replay || *cnt))
        return 0;
    be_free(sp, *rtab);
    be_free(sp, *ctab);
    be_free(sp, *cnt);
    *rtab = *ctab = *cnt = NULL;
    be_error(sp, "the slot tables");
    return -1;
}

/* Run the loop with rollback by capture (replay = 0) or by replay (replay = 1). */
static int run_method(spec *sp, int replay, method_result *res)
{
    const int B = sp->B, K = sp->K;
    const int64_t S = replay ? B : (int64_t)B + 2 * (int64_t)B * K, C = sp->C, Hv = sp->Hv,
                  ho = (int64_t)sp->Hv * sp->Dv;
    float *rpool = be_zeros(sp, (size_t)(S * sp->hs)), *cpool = be_zeros(sp, (size_t)(S * sp->cs));
    int32_t *rtab = NULL, *ctab = NULL, *cnt = NULL; /* (be) see method_tables */
    int32_t *last = malloc((size_t)B * 4);           /* the final read slots */
    double t0;
    int rc = -1;
    if (!rpool || !cpool) {
        be_error(sp, "the state pools");
        goto done;
    }
    if (!last) {
        tool_error(CMD, "out of memory for the slot tables");
        goto done;
    }
    if (method_tables(sp, replay, &rtab, &ctab, &cnt, last))
        goto done;
    t0 = tool_now();
    for (int s = 0; s < sp->steps; s++) {
        const int64_t tk = (int64_t)s * B * K; /* the step's first token in the step buffers */
        gdn_status st;
        /* verify: K draft tokens per sequence, outputs, no final state stored */
        layer_call v = {B, K, sp->x + tk * C, sp->a + tk * Hv, sp->b + tk * Hv, sp->out + tk * ho,
                        rpool, cpool, S, rtab + s * B, sp->none, replay ? NULL : ctab + tk, NULL};
        if ((st = run_layer(sp, &v)) != GDN_STATUS_SUCCESS) {
            tool_error(CMD, "verify (step %d): %s: %s", s, gdn_status_string(st), gdn_last_error(sp->ctx));
            goto done;
        }
        if (replay) { /* the same calls on the accepted tokens, no outputs, into the pre-verify slots */
            layer_call r = {B, K, v.x, v.a, v.b, NULL, rpool, cpool, S, v.rs, v.rs, NULL, cnt + s * B};
            if ((st = run_layer(sp, &r)) != GDN_STATUS_SUCCESS) {
                tool_error(CMD, "replay (step %d): %s: %s", s, gdn_status_string(st), gdn_last_error(sp->ctx));
                goto done;
            }
        } /* capture: the next step reads the slot captured after the last accepted token (rtab) */
    }
    if (finish(sp, replay ? "replay" : "capture"))
        goto done;
    res->seconds = tool_now() - t0;
    if (collect(sp, rpool, cpool, last, res))
        goto done;
    rc = 0;
done:
    be_free(sp, rpool);
    be_free(sp, cpool);
    be_free(sp, rtab);
    be_free(sp, ctab);
    be_free(sp, cnt);
    free(last);
    return rc;
}

/* Plain decoding: the accepted tokens of each sequence one at a time (B = 1 calls), sequence b in
 * slot b of the pools, reading its tokens where the verifies did and writing its outputs there. */
static int run_plain(spec *sp, method_result *res)
{
    const int64_t B = sp->B, ho = (int64_t)sp->Hv * sp->Dv;
    int rc = -1;
    float *rpool = be_zeros(sp, (size_t)(B * sp->hs)), *cpool = be_zeros(sp, (size_t)(B * sp->cs));
    double t0;
    if (!rpool || !cpool) {
        be_error(sp, "the state pools");
        goto done;
    }
    t0 = tool_now();
    for (int b = 0; b < B; b++)
        for (int64_t i = 0; i < sp->total[b]; i++) {
            const int64_t j = sp->tok[b * sp->L + i];
            layer_call d = {1, 1, sp->x + j * sp->C, sp->a + j * sp->Hv, sp->b + j * sp->Hv, sp->out + j * ho,
                            rpool, cpool, B, sp->seq + b, sp->seq + b, NULL, NULL};
            gdn_status st = run_layer(sp, &d);
            if (st != GDN_STATUS_SUCCESS) {
                tool_error(CMD, "plain decode: %s: %s", gdn_status_string(st), gdn_last_error(sp->ctx));
                goto done;
            }
        }
    if (finish(sp, "plain decode"))
        goto done;
    res->seconds = tool_now() - t0;
    if (collect(sp, rpool, cpool, NULL, res))
        goto done;
    rc = 0;
done:
    be_free(sp, rpool);
    be_free(sp, cpool);
    return rc;
}

/* ---- results and checks --------------------------------------------------------------------- */

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

/* The outputs of the accepted tokens only (the rest of outs is zero in every result). *worst
 * becomes the largest error seen so far. */
static int check(const char *what, const spec *sp, const method_result *m, const method_result *ref, double *worst)
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
    *worst = fmax(*worst, fmax(er, fmax(ec, eo)));
    return ok;
}

/* ---- setup ---------------------------------------------------------------------------------- */

/* xd, ad, bd = the inputs of every step's verify, [steps][B][K] tokens: each sequence's stream xs, as,
 * bs ([B][L] tokens) from the tokens it has accepted so far (past the stream's end, its last token);
 * sp->tok = where each accepted token is; sp->total. */
static void build_steps(spec *sp, const float *xs, const float *as, const float *bs, float *xd, float *ad,
                        float *bd)
{
    const int64_t C = sp->C, Hv = sp->Hv, L = sp->L;
    for (int b = 0; b < sp->B; b++) {
        int64_t pos = 0;
        for (int s = 0; s < sp->steps; s++) {
            const int64_t tk = ((int64_t)s * sp->B + b) * sp->K;
            for (int t = 0; t < sp->K; t++) {
                const int64_t i = (int64_t)b * L + (pos + t < L ? pos + t : L - 1);
                memcpy(xd + (tk + t) * C, xs + i * C, (size_t)C * 4);
                memcpy(ad + (tk + t) * Hv, as + i * Hv, (size_t)Hv * 4);
                memcpy(bd + (tk + t) * Hv, bs + i * Hv, (size_t)Hv * 4);
            }
            for (int t = 0; t < sp->accept[s * sp->B + b]; t++)
                sp->tok[(int64_t)b * L + pos + t] = tk + t;
            pos += sp->accept[s * sp->B + b];
        }
        sp->total[b] = pos;
    }
}

/* Random weights and streams ([B][L] tokens) and the accepted counts (sp->accept), in the model's
 * ranges: A_log = log U(1,16), softplus(dt_bias) in [0.001, 0.1], gate inputs and projections O(1). */
static void draw(spec *sp, uint64_t seed, float *weight, float *bias, float *A_log, float *dt_bias, float *xs,
                 float *as, float *bs)
{
    const int64_t C = sp->C, Hv = sp->Hv, BL = (int64_t)sp->B * sp->L;
    gdn_rng r; /* the conformance engine's generator: the same streams on every machine */
    gdn_rng_seed(&r, seed);
    for (int64_t j = 0; j < C * WIDTH; j++)
        weight[j] = (float)(gdn_rng_uniform(&r) - 0.5);
    for (int64_t j = 0; j < C; j++)
        bias[j] = (float)(0.1 * (gdn_rng_uniform(&r) - 0.5));
    for (int64_t h = 0; h < Hv; h++) {
        A_log[h] = (float)log(1.0 + 15.0 * gdn_rng_uniform(&r));
        dt_bias[h] = (float)log(expm1(0.001 + 0.099 * gdn_rng_uniform(&r)));
    }
    for (int64_t j = 0; j < BL * C; j++)
        xs[j] = (float)(2.0 * gdn_rng_uniform(&r) - 1.0);
    for (int64_t j = 0; j < BL * Hv; j++) {
        as[j] = (float)(2.0 * gdn_rng_uniform(&r) - 1.0);
        bs[j] = (float)(2.0 * gdn_rng_uniform(&r) - 1.0);
    }
    for (int64_t j = 0; j < (int64_t)sp->steps * sp->B; j++)
        sp->accept[j] = (int32_t)gdn_rng_below(&r, sp->K + 1);
}

/* The random data (draw) and the step buffers built from it on the host, then every (be) buffer
 * moved to the backend. 0, or -1 after reporting. */
static int spec_setup(spec *sp, uint64_t seed)
{
    const int64_t C = sp->C, Hv = sp->Hv, BL = (int64_t)sp->B * sp->L;
    enum { W, BIAS, ALOG, DTB, X, A, BB, SEQ, NONE, XS, AS, BS, N };
    const size_t bytes[N] = {(size_t)(C * WIDTH) * 4, (size_t)C * 4,         (size_t)Hv * 4,
                             (size_t)Hv * 4,          (size_t)(BL * C) * 4,  (size_t)(BL * Hv) * 4,
                             (size_t)(BL * Hv) * 4,   (size_t)sp->B * 4,     (size_t)sp->B * 4,
                             (size_t)(BL * C) * 4,    (size_t)(BL * Hv) * 4, (size_t)(BL * Hv) * 4};
    void *h[N]; /* host buffers; W..NONE are moved to the backend, the streams XS..BS freed */
    int rc = -1, oom = 0;
    for (int i = 0; i < N; i++)
        oom |= !(h[i] = malloc(bytes[i]));
    sp->accept = malloc((size_t)sp->steps * (size_t)sp->B * 4);
    sp->tok = malloc((size_t)BL * sizeof(int64_t));
    sp->total = calloc((size_t)sp->B, sizeof(int64_t));
    if (sp->cuda)
        sp->stage = malloc((size_t)(BL * Hv * sp->Dv) * 4);
    if (oom || !sp->accept || !sp->tok || !sp->total || (sp->cuda && !sp->stage)) {
        tool_error(CMD, "out of memory for the streams");
        goto done;
    }
    draw(sp, seed, h[W], h[BIAS], h[ALOG], h[DTB], h[XS], h[AS], h[BS]);
    build_steps(sp, h[XS], h[AS], h[BS], h[X], h[A], h[BB]);
    for (int b = 0; b < sp->B; b++) {
        ((int32_t *)h[SEQ])[b] = b;
        ((int32_t *)h[NONE])[b] = -1;
    }

    /* to the backend (be_take frees the host buffer either way) */
    sp->weight = be_take(sp, h[W], bytes[W]);
    sp->bias = be_take(sp, h[BIAS], bytes[BIAS]);
    sp->A_log = be_take(sp, h[ALOG], bytes[ALOG]);
    sp->dt_bias = be_take(sp, h[DTB], bytes[DTB]);
    sp->x = be_take(sp, h[X], bytes[X]);
    sp->a = be_take(sp, h[A], bytes[A]);
    sp->b = be_take(sp, h[BB], bytes[BB]);
    sp->seq = be_take(sp, h[SEQ], bytes[SEQ]);
    sp->none = be_take(sp, h[NONE], bytes[NONE]);
    for (int i = W; i <= NONE; i++)
        h[i] = NULL;
    sp->y = be_zeros(sp, (size_t)((int64_t)sp->B * sp->K * C));
    sp->out = be_zeros(sp, (size_t)(BL * Hv * sp->Dv));
    if (!sp->weight || !sp->bias || !sp->A_log || !sp->dt_bias || !sp->x || !sp->a || !sp->b || !sp->seq ||
        !sp->none || !sp->y || !sp->out) {
        be_error(sp, "the weights, inputs and outputs");
        goto done;
    }
    rc = 0;
done:
    for (int i = 0; i < N; i++)
        free(h[i]);
    return rc;
}

static void spec_free(spec *sp)
{
    float *be[] = {sp->weight, sp->bias, sp->A_log, sp->dt_bias, sp->x, sp->a, sp->b, sp->y, sp->out};
    for (size_t i = 0; i < sizeof be / sizeof be[0]; i++)
        be_free(sp, be[i]);
    be_free(sp, sp->seq);
    be_free(sp, sp->none);
    free(sp->accept);
    free(sp->tok);
    free(sp->total);
    free(sp->stage);
}

/* The three runs; on CUDA each is run once untimed first (module loading, the context's first
 * allocations), then again for the results and times. */
static int run_all(spec *sp, method_result *mc, method_result *mr, method_result *mp)
{
    for (int pass = sp->cuda ? 0 : 1; pass < 2; pass++)
        if (run_method(sp, 0, mc) || run_method(sp, 1, mr) || run_plain(sp, mp))
            return -1;
    return 0;
}

int cmd_spec(int argc, char **argv)
{
    const tool_model *m = tool_model_default();
    long long B = 4, K = 4, steps = 32, threads = 0, seed = 1;
    gdn_backend backend = GDN_BACKEND_CPU;
    int i = 1, idx, e, rc = TOOL_EXIT_DATA;
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
        case O_BACKEND:
            if ((e = tool_parse_enum(CMD, "--backend", val, tool_backend_names)) < 0)
                return TOOL_EXIT_USAGE;
            backend = (gdn_backend)e;
            break;
        default:
            break;
        }
    }
    if (backend == GDN_BACKEND_CUDA && threads) {
        tool_error(CMD, "--backend cuda: --threads is for the CPU backend");
        return TOOL_EXIT_USAGE;
    }

    spec sp;
    memset(&sp, 0, sizeof sp);
    sp.cuda = backend == GDN_BACKEND_CUDA;
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
    if (!(sp.ctx = tool_context_create(CMD, backend, (int)threads, GDN_ISA_AUTO)))
        return TOOL_EXIT_DATA; /* --backend cuda without a device: "--backend cuda: ..." */

    method_result mc, mr, mp;
    if (alloc_result(&sp, &mc) | alloc_result(&sp, &mr) | alloc_result(&sp, &mp)) { /* all three: freed below */
        tool_error(CMD, "out of memory for the results");
        goto done;
    }
    if (spec_setup(&sp, (uint64_t)seed))
        goto done;
    printf("gdn spec: %s layer (Hk=%d Hv=%d Dk=%d Dv=%d; conv1d width %d over C=%lld channels, SiLU; raw gate; "
           "q/k L2 norm), f32, ",
           m->name, sp.Hk, sp.Hv, sp.Dk, sp.Dv, WIDTH, (long long)sp.C);
    if (sp.cuda) {
        char dev[160] = "GPU 0";
        (void)tool_dev_name(dev, sizeof dev);
        printf("CUDA on %s (every buffer and index array in device memory; each method run once untimed first)\n",
               dev);
    } else {
        printf("%d threads\n", gdn_context_num_threads(sp.ctx));
    }
    printf("B=%d sequences, K=%d draft tokens per step, %d steps, a random number of accepted tokens (0..K) per "
           "sequence and step\n\n",
           sp.B, sp.K, sp.steps);
    if (run_all(&sp, &mc, &mr, &mp))
        goto done;
    {
        double worst = 0.0;
        const int ok1 = check("capture", &sp, &mc, &mp, &worst), ok2 = check("replay", &sp, &mr, &mp, &worst);
        printf("%-8s  %8lld accepted tokens  %9.1f ms  %10.0f tokens/s   (the reference: one token per call, one "
               "sequence at a time)\n", "plain", (long long)mp.accepted, mp.seconds * 1e3,
               mp.seconds > 0 ? (double)mp.accepted / mp.seconds : 0.0);
        printf("\nworst relative RMS error vs plain decoding: %.1e (limit %.0e)\n", worst, TOL);
        rc = ok1 && ok2 ? TOOL_EXIT_OK : TOOL_EXIT_DATA;
        if (rc != TOOL_EXIT_OK)
            tool_error(CMD, "a rollback method does not match plain decoding (see above)");
    }
done:
    gdn_context_destroy(sp.ctx); /* CUDA: waits for its stream, so the buffers are no longer in use */
    spec_free(&sp);
    free_result(&mc);
    free_result(&mr);
    free_result(&mp);
    return rc;
}
