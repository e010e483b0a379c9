/*
 * cmd_bench.c — `gdn bench`: times decode, verify and prefill on a real model's layer shape,
 * checks every case against the float64 reference, and reports throughput as fractions of this
 * machine's own limits, measured in the same run (machine.h).
 *
 * Counting (DESIGN.md §5, research/ALGORITHM.md §3):
 *   FLOPs = 7 * Dk * Dv per token per value head (token loop);
 *   bytes = state read + written (f32: 8 * Dk * Dv per head per sequence) + every input read once
 *           (q, k, v in the activation dtype; g, beta f32) + the output written once (+ captures).
 * Times: clock_gettime(CLOCK_MONOTONIC) around each call after a warm-up; the median is reported.
 * Decode and verify cases (T <= 64) rotate over several state pools (>= 256 MiB in all, like
 * successive layers of a model) so that the state comes from memory as it does in a model, not
 * from cache; --warm uses one pool.
 * Correctness: the reference runs on the same inputs (views of the same buffers); for large
 * cases on a prefix (first min(B,2) sequences, first 64 tokens). The library's output is taken
 * in f32 for that run, so the error measures the f32 compute (limit 1e-4).
 */
#define _DEFAULT_SOURCE /* madvise */
#include "check/check.h"
#include "check/rng.h"
#include "cpu/chunked.h"
#include "cuda/cuda_backend.h" /* GDN_CUDA_CHUNK_MIN_TOKENS (no CUDA header needed) */
#include "core/dtype.h"
#include "devmem.h"
#include "machine.h"
#include "ref/ref.h"
#include "tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Buffers are 64-byte aligned, as engines' tensors are (PyTorch, ggml): with malloc's 16-byte
 * alignment every 64-byte vector access of the state would straddle two cache lines. Buffers of
 * 2 MiB and more are 2 MiB aligned and asked to be backed by transparent huge pages (as PyTorch's
 * CPU allocator does for large tensors): a long prefill walks q, k and v one token row at a time,
 * 8 KiB apart per head, and with 4 KiB pages every row would be a TLB miss. */
static void *alloc64(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes >= huge) {
        void *p = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
#ifdef MADV_HUGEPAGE
        if (p)
            madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
        return p;
    }
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

#define CMD "bench"
#define STR2(x) #x
#define STR(x) STR2(x)
#define REL_ERR_LIMIT 1e-4      /* f32 products */
#define REL_ERR_LIMIT_BF16 1e-2 /* problem.precision = bf16 (chunked products with bf16 operands) */
#define CHECK_TOKENS 64      /* reduced check: first 64 tokens ... */
#define CHECK_SEQS 2         /* ... of the first 2 sequences */
#define ROTATE_BYTES ((int64_t)256 << 20)
#define ROTATE_MAX 128
#define GRAPH_CALLS_MIN 8 /* CUDA: calls per timing graph at least (a graph's first launch is not overlapped) */

void cmd_bench_help(void)
{
    size_t n, i;
    const tool_model *m = tool_models(&n);
    printf(
        "usage: gdn bench [options]\n"
        "\n"
        "With no options: the default suite on the layer shape of Qwen3.6-35B-A3B (Hk=16, Hv=32,\n"
        "Dk=Dv=128), bf16 activations, f32 state, the gate in log form and q, k L2-normalised in\n"
        "the kernel (as the Qwen3-Next, 3.5 and 3.6 layers call it), on the best backend: decode\n"
        "B=1 and B=8, verify B=1 T=4 with capture, prefill B=1 T=512 and T=4096. Each case is\n"
        "warmed up, timed over repeated runs (median), and checked against the float64 reference.\n"
        "The machine's f32 FMA rate and memory bandwidth are measured in the same run; the table\n"
        "gives each case's fraction of them. FLOPs = 7*Dk*Dv per token and value head; bytes = f32\n"
        "state read and written + inputs read once + output written once (+ captured states).\n"
        "\n"
        "options:\n"
        "  --json                  one JSON object per case per line on stdout (no table)\n"
        "  --model NAME            layer shape of a model (--model list shows them)\n"
        "  --B N --T N             run one case with this batch and length: decode if T = 1, else\n"
        "                          prefill (verify with --capture)\n"
        "  --Hk N --Hv N --Dk N --Dv N   override the model's head counts and dimensions\n"
        "  --capture               with --B/--T: capture the state after every token (verify)\n"
        "  --dtype f32|bf16|f16    activation type of q, k, v and the output (default bf16)\n"
        "  --threads N             CPU threads, 0 = all cores (default 0)\n"
        "  --isa auto|scalar|avx2|avx512   force the CPU kernels' instruction set\n"
        "  --backend cpu|cuda      (default cpu; cuda: GPU 0, inputs in device memory, CUDA graph replay)\n"
        "  --algo auto|recurrent|chunked   (default auto)\n"
        "  --precision default|f32|bf16  operand precision of the chunked products (default: f32 on\n"
        "                                the CPU, tensor cores on CUDA; bf16: vdpbf16ps where the CPU\n"
        "                                has avx512_bf16, tensor cores on CUDA with every product in\n"
        "                                bf16, the solve's too)\n"
        "  --reps N                timed repetitions per case (default: about 1-2 s per case)\n"
        "  --warm                  decode/verify: reuse one state pool (cache-resident when it fits)\n"
        "  --no-qk-l2norm          q and k as given, not L2-normalised in the kernel\n"
        "  --idle-replays          cuda: time each graph replay from an idle GPU (the host waits for each\n"
        "                          replay before it launches the next, so its launch latency is counted; by\n"
        "                          default replays are queued back to back, each timed between the events\n"
        "                          around it)\n"
        "  --graph-calls N         cuda: calls per timed graph (default: one per state pool, at least " STR(GRAPH_CALLS_MIN) ";\n"
        "                          call i runs on pool i mod pools)\n"
        "  --targets               the CPU speed targets instead of the suite (f32 activations): decode\n"
        "                          B=1 state in cache, decode B=64 vs bandwidth, verify T=4 B=64 vs\n"
        "                          decode, prefill T=4096 chunked vs the FMA peak, bf16 products vs\n"
        "                          f32, 2 threads vs 1; prints each as measured / target\n"
        "  --help                  this text\n"
        "\n"
        "models:");
    for (i = 0; i < n; i++)
        printf(" %s", m[i].name);
    printf("\n\nExit status: 0 if every case ran and passed its check (relative RMS error <= 1e-4 for\n"
           "f32 compute), 1 otherwise, 2 for a usage error. Progress goes to stderr.\n");
}

enum {
    O_JSON, O_MODEL, O_B, O_T, O_HK, O_HV, O_DK, O_DV, O_CAPTURE, O_DTYPE, O_THREADS, O_ISA, O_BACKEND, O_ALGO,
    O_REPS, O_WARM, O_PRECISION, O_TARGETS, O_NO_L2, O_IDLE, O_GRAPH_CALLS
};
static const tool_opt bench_options[] = {
    {"--json", 0}, {"--model", 1}, {"--B", 1}, {"--T", 1}, {"--Hk", 1}, {"--Hv", 1}, {"--Dk", 1}, {"--Dv", 1},
    {"--capture", 0}, {"--dtype", 1}, {"--threads", 1}, {"--isa", 1}, {"--backend", 1}, {"--algo", 1},
    {"--reps", 1}, {"--warm", 0}, {"--precision", 1}, {"--targets", 0}, {"--no-qk-l2norm", 0},
    {"--idle-replays", 0}, {"--graph-calls", 1}, {NULL, 0}};

typedef struct bench_opts {
    int json;
    const tool_model *model;
    long long B, T, Hk, Hv, Dk, Dv; /* 0 = not given */
    int capture;
    gdn_dtype dtype;
    int threads;
    gdn_isa isa;
    gdn_backend backend;
    gdn_algo algo;
    gdn_precision precision;
    int reps; /* 0 = automatic */
    int warm;
    int targets;
    int no_l2; /* --no-qk-l2norm: q and k as given (problem.qk_l2norm = 0) */
    int idle;  /* --idle-replays: each CUDA graph replay timed from an idle GPU */
    int graph_calls; /* --graph-calls: calls per CUDA timing graph (0 = automatic) */
} bench_opts;

typedef struct bench_case {
    const char *op;
    int64_t B, T;
    int capture;
} bench_case;

typedef struct bench_env {
    gdn_context *ctx;
    gdn_problem p;
    const bench_opts *o;
    const char *model_name;
    const char *algo;
    tool_fma_peak fma;
    tool_mem_bw mem;   /* CUDA: gbytes_per_s = the device-to-device copy rate */
    int cuda;          /* the CUDA backend: tensors in device memory, timed by graph replay */
    void *stream;      /* CUDA: the context's stream */
    char device[160];  /* CUDA: the device's name */
} bench_env;

/* Device copies of a case's inputs (CUDA backend). */
typedef struct dev_inputs {
    void *q, *k, *v, *g, *beta;
} dev_inputs;

typedef struct bench_result {
    int ran;        /* gdn_forward succeeded */
    int ok;         /* and the check passed */
    int reps;
    int pools;
    int graph_calls; /* CUDA: calls per timing graph */
    double median_us, min_us;
    double bytes, flops;
    double rel_err;
    double rel_err_limit; /* of the kernel the check ran (rel_err_limit) */
    char checked[64];
    char error[1024];
} bench_result;

/* The limit of the kernel that runs `tokens` tokens per sequence: bf16 products (precision BF16) and
   tensor-core products (the CUDA chunked kernels' default: names ending in __cuda_mma or __cuda_wgmma) are held
   to REL_ERR_LIMIT_BF16. */
static double rel_err_limit(const gdn_context *ctx, const gdn_problem *p, int64_t tokens, int capture)
{
    if (p->precision == GDN_PRECISION_BF16 || strstr(gdn_context_kernel_for(ctx, p, tokens, capture), "mma"))
        return REL_ERR_LIMIT_BF16;
    return REL_ERR_LIMIT;
}

static float uniform_pm1(gdn_rng *r)
{
    return (float)(2.0 * gdn_rng_uniform(r) - 1.0);
}

/* rows of length d, each scaled to unit L2 norm, stored in t. */
static void fill_unit_rows(gdn_rng *r, void *dst, gdn_dtype t, int64_t rows, int d)
{
    float tmp[4096];
    int64_t i;
    int j;
    for (i = 0; i < rows; i++) {
        double ss = 0.0;
        for (j = 0; j < d; j++) {
            tmp[j] = uniform_pm1(r);
            ss += (double)tmp[j] * tmp[j];
        }
        ss = ss > 0 ? 1.0 / sqrt(ss) : 1.0;
        for (j = 0; j < d; j++)
            gdn_store_f32(dst, t, i * d + j, (float)(tmp[j] * ss));
    }
}

static double median(double *v, int n)
{
    int i, j;
    for (i = 1; i < n; i++) { /* insertion sort: n is small */
        double x = v[i];
        for (j = i - 1; j >= 0 && v[j] > x; j--)
            v[j + 1] = v[j];
        v[j + 1] = x;
    }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static gdn_tensor view(void *data, int ndim, const int64_t *shape, const int64_t *full)
{
    /* shape is a leading sub-box of a C-contiguous array of extents full */
    gdn_tensor t = gdn_tensor_contiguous(data, ndim, shape);
    int64_t s = 1;
    int i;
    for (i = ndim - 1; i >= 0; i--) {
        t.strides[i] = s;
        s *= full[i];
    }
    return t;
}

/* The batch and tensors of the first B sequences and T tokens of a case: the inputs as views of
 * its full [c->B, c->T, ...] arrays; out, the state pool and the captures (when caps is not NULL)
 * contiguous. */
static void case_args(const gdn_problem *p, const bench_case *c, int64_t B, int64_t T, void *q, void *k, void *v,
                      float *g, float *beta, void *out, float *pool, float *caps, gdn_batch *b, gdn_tensors *t)
{
    const int64_t Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    const int64_t qf[4] = {c->B, c->T, Hk, Dk}, vf[4] = {c->B, c->T, Hv, Dv}, gf[3] = {c->B, c->T, Hv};
    const int64_t qs[4] = {B, T, Hk, Dk}, vs[4] = {B, T, Hv, Dv}, gs[3] = {B, T, Hv};
    const int64_t ss[4] = {B, Hv, Dv, Dk}, cs[5] = {B, T, Hv, Dv, Dk};
    memset(b, 0, sizeof *b);
    b->batch_size = B;
    b->seq_len = T;
    b->num_seqs = B;
    memset(t, 0, sizeof *t);
    t->q = view(q, 4, qs, qf);
    t->k = view(k, 4, qs, qf);
    t->v = view(v, 4, vs, vf);
    t->g = view(g, 3, gs, gf);
    t->beta = view(beta, 3, gs, gf);
    t->out = gdn_tensor_contiguous(out, 4, vs);
    t->state.pool = gdn_tensor_contiguous(pool, 4, ss);
    if (caps) {
        t->capture.mode = GDN_CAPTURE_DENSE;
        t->capture.states = gdn_tensor_contiguous(caps, 5, cs);
    }
}

/* Check the library against the reference on (a prefix of) the case: same buffers, views. */
static void check_case(const bench_env *env, const bench_case *c, void *q, void *k, void *v, float *g, float *beta,
                       const float *pool0, const dev_inputs *d, bench_result *res)
{
    void *dpool = NULL, *dout = NULL, *dcaps = NULL;
    const gdn_problem *P = &env->p;
    gdn_problem p = *P;
    gdn_batch b;
    gdn_tensors t;
    gdn_ref_result rr;
    char err[512];
    int64_t Bc = c->B, Tc = c->T, Hv = P->num_v_heads, Dk = P->k_dim, Dv = P->v_dim;
    size_t nstate, nout, ncap;
    float *pool = NULL, *out = NULL, *caps = NULL;
    gdn_status st;
    double e;

    if (c->B * c->T > CHECK_TOKENS) {
        Bc = c->B < CHECK_SEQS ? c->B : CHECK_SEQS;
        Tc = c->T < CHECK_TOKENS ? c->T : CHECK_TOKENS;
        snprintf(res->checked, sizeof res->checked, "B=%lld,T=%lld", (long long)Bc, (long long)Tc);
    } else {
        snprintf(res->checked, sizeof res->checked, "full");
    }
    memset(&rr, 0, sizeof rr);
    nstate = (size_t)(Bc * Hv * Dv * Dk);
    nout = (size_t)(Bc * Tc * Hv * Dv);
    ncap = c->capture ? (size_t)(Bc * Tc) * (size_t)(Hv * Dv * Dk) : 0;
    pool = alloc64(nstate * sizeof(float));
    out = alloc64(nout * sizeof(float));
    rr.out = malloc(nout * sizeof(double));
    rr.final_state = malloc(nstate * sizeof(double));
    if (c->capture) {
        caps = malloc(ncap * sizeof(float));
        rr.captures = malloc(ncap * sizeof(double));
    }
    if (!pool || !out || !rr.out || !rr.final_state || (c->capture && (!caps || !rr.captures))) {
        snprintf(res->error, sizeof res->error, "out of memory for the reference check");
        goto done;
    }
    memcpy(pool, pool0, nstate * sizeof(float));

    p.out_dtype = GDN_DTYPE_F32;
    case_args(&p, c, Bc, Tc, q, k, v, g, beta, out, pool, caps, &b, &t);

    /* The reference first: the library updates the pool in place. */
    st = gdn_ref_forward(&p, &b, &t, &rr, err, sizeof err);
    if (st != GDN_STATUS_SUCCESS) {
        snprintf(res->error, sizeof res->error, "reference: %s: %s", gdn_status_string(st), err);
        goto done;
    }
    if (d) { /* the same call on device copies, results copied back */
        gdn_batch db;
        gdn_tensors dt;
        if (tool_dev_upload(&dpool, pool, nstate * sizeof(float)) || tool_dev_alloc(&dout, nout * sizeof(float)) ||
            (c->capture && tool_dev_alloc(&dcaps, ncap * sizeof(float)))) {
            snprintf(res->error, sizeof res->error, "check run: %s", tool_dev_error());
            goto done;
        }
        case_args(&p, c, Bc, Tc, d->q, d->k, d->v, (float *)d->g, (float *)d->beta, dout, (float *)dpool,
                  (float *)dcaps, &db, &dt);
        st = gdn_forward(env->ctx, &p, &db, &dt);
        if (st == GDN_STATUS_SUCCESS)
            st = gdn_context_synchronize(env->ctx);
    } else {
        st = gdn_forward(env->ctx, &p, &b, &t);
    }
    if (st != GDN_STATUS_SUCCESS) {
        snprintf(res->error, sizeof res->error, "gdn_forward (check run): %s: %s", gdn_status_string(st),
                 gdn_last_error(env->ctx));
        goto done;
    }
    if (d && (tool_dev_download(pool, dpool, nstate * sizeof(float)) ||
              tool_dev_download(out, dout, nout * sizeof(float)) ||
              (c->capture && tool_dev_download(caps, dcaps, ncap * sizeof(float))))) {
        snprintf(res->error, sizeof res->error, "check run: %s", tool_dev_error());
        goto done;
    }
    res->rel_err = gdn_check_rel_rms(out, rr.out, nout);
    e = gdn_check_rel_rms(pool, rr.final_state, nstate);
    if (!(e <= res->rel_err))
        res->rel_err = e;
    if (c->capture) {
        e = gdn_check_rel_rms(caps, rr.captures, ncap);
        if (!(e <= res->rel_err))
            res->rel_err = e;
    }
    res->rel_err_limit = rel_err_limit(env->ctx, P, Tc, c->capture); /* the checked call's kernel */
    res->ok = res->rel_err <= res->rel_err_limit;
    if (!res->ok)
        snprintf(res->error, sizeof res->error, "relative RMS error %.3g above the limit %.0e", res->rel_err,
                 res->rel_err_limit);

done:
    tool_dev_free(dpool);
    tool_dev_free(dout);
    tool_dev_free(dcaps);
    free(pool);
    free(out);
    free(caps);
    free(rr.out);
    free(rr.final_state);
    free(rr.captures);
}

/* Elements of the capture buffer, in double (no overflow), for the size guard. */
static double ncap_guard(const bench_case *c, const gdn_problem *p)
{
    return c->capture ? (double)c->B * (double)c->T * p->num_v_heads * (double)p->v_dim * p->k_dim : 0.0;
}

/* One call of the CUDA timing graph: the case on state pool i. */
typedef struct graph_call {
    gdn_context *ctx;
    const gdn_problem *p;
    const gdn_batch *b;
    gdn_tensors t;
    void **pools;
    int npools;
} graph_call;

static int graph_call_fn(void *arg, int i)
{
    graph_call *g = (graph_call *)arg;
    g->t.state.pool.data = g->pools[i % g->npools];
    return gdn_forward(g->ctx, g->p, g->b, &g->t) != GDN_STATUS_SUCCESS;
}

/* The CUDA backend: inputs copied to the device, checked like the CPU case, then timed as CUDA
 * graph replays (a graph holds one call per state pool, the pools rotating as on the CPU, and at least
 * GRAPH_CALLS_MIN calls, call i on pool i mod pools; --graph-calls N: N calls), 20 replays of warm-up,
 * median per call over the timed replays. */
static void run_case_cuda(const bench_env *env, const bench_case *c, bench_result *res, void *q, void *k, void *v,
                          float *g, float *beta, const float *pool0, int npools)
{
    const gdn_problem *p = &env->p;
    const int64_t B = c->B, T = c->T, Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    const size_t as = gdn_dtype_size(p->dtype), os = gdn_dtype_size(p->out_dtype);
    const size_t nq = (size_t)(B * T * Hk * Dk), nv = (size_t)(B * T * Hv * Dv), ng = (size_t)(B * T * Hv);
    const size_t nstate = (size_t)(B * Hv * Dv * Dk), ncap = c->capture ? (size_t)(B * T) * (size_t)(Hv * Dv * Dk) : 0;
    dev_inputs d = {0};
    void *dout = NULL, *dcaps = NULL, **dpools = NULL;
    double *us = NULL, est = 0.0;
    int reps, i, calls;
    gdn_batch b;
    graph_call gc;

    if (tool_dev_upload(&d.q, q, nq * as) || tool_dev_upload(&d.k, k, nq * as) || tool_dev_upload(&d.v, v, nv * as) ||
        tool_dev_upload(&d.g, g, ng * 4) || tool_dev_upload(&d.beta, beta, ng * 4)) {
        snprintf(res->error, sizeof res->error, "%s", tool_dev_error());
        goto done;
    }
    check_case(env, c, q, k, v, g, beta, pool0, &d, res);
    if (!res->ok)
        goto done;
    dpools = (void **)calloc((size_t)npools, sizeof *dpools);
    if (!dpools || tool_dev_alloc(&dout, nv * os) || (c->capture && tool_dev_alloc(&dcaps, ncap * 4))) {
        snprintf(res->error, sizeof res->error, "%s", dpools ? tool_dev_error() : "out of memory");
        res->ok = 0;
        goto done;
    }
    for (i = 0; i < npools; i++)
        if (tool_dev_upload(&dpools[i], pool0, nstate * 4)) {
            snprintf(res->error, sizeof res->error, "%d state pools: %s", npools, tool_dev_error());
            res->ok = 0;
            goto done;
        }
    memset(&gc, 0, sizeof gc);
    case_args(p, c, B, T, d.q, d.k, d.v, (float *)d.g, (float *)d.beta, dout, (float *)dpools[0], (float *)dcaps, &b,
              &gc.t);
    gc.ctx = env->ctx;
    gc.p = p;
    gc.b = &b;
    gc.pools = dpools;
    gc.npools = npools;
    calls = env->o->graph_calls ? env->o->graph_calls : npools > GRAPH_CALLS_MIN ? npools : GRAPH_CALLS_MIN;
    res->graph_calls = calls;
    /* one call outside capture first (the context grows what it keeps on the device, e.g. the chunked
       kernels' workspace, only outside capture), then one replay to estimate, then about 1 s of replays
       (20 .. 200) */
    if (graph_call_fn(&gc, 0) || gdn_context_synchronize(env->ctx) != GDN_STATUS_SUCCESS) {
        snprintf(res->error, sizeof res->error, "%s", gdn_last_error(env->ctx));
        res->ok = 0;
        goto done;
    }
    if (tool_dev_time_graph(env->stream, graph_call_fn, &gc, calls, 1, 1, 1, &est)) {
        snprintf(res->error, sizeof res->error, "%s%s%s", tool_dev_error(), gdn_last_error(env->ctx)[0] ? ": " : "",
                 gdn_last_error(env->ctx));
        res->ok = 0;
        goto done;
    }
    reps = env->o->reps > 0 ? env->o->reps : (int)(1e6 / (est * calls > 1.0 ? est * calls : 1.0));
    if (env->o->reps <= 0)
        reps = reps < 20 ? 20 : reps > 200 ? 200 : reps;
    us = (double *)malloc((size_t)reps * sizeof *us);
    if (!us || tool_dev_time_graph(env->stream, graph_call_fn, &gc, calls, 20, reps, env->o->idle, us)) {
        snprintf(res->error, sizeof res->error, "%s", us ? tool_dev_error() : "out of memory");
        res->ok = 0;
        goto done;
    }
    if (gdn_context_synchronize(env->ctx) != GDN_STATUS_SUCCESS) {
        snprintf(res->error, sizeof res->error, "%s", gdn_last_error(env->ctx));
        res->ok = 0;
        goto done;
    }
    res->reps = reps;
    res->min_us = 1e300;
    for (i = 0; i < reps; i++)
        if (us[i] < res->min_us)
            res->min_us = us[i];
    for (i = 0; i < reps; i++)
        us[i] *= 1e-6;
    res->median_us = median(us, reps) * 1e6;
    res->ran = 1;
done:
    tool_dev_free(d.q);
    tool_dev_free(d.k);
    tool_dev_free(d.v);
    tool_dev_free(d.g);
    tool_dev_free(d.beta);
    tool_dev_free(dout);
    tool_dev_free(dcaps);
    if (dpools)
        for (i = 0; i < npools; i++)
            tool_dev_free(dpools[i]);
    free(dpools);
    free(us);
}

static void run_case(const bench_env *env, const bench_case *c, bench_result *res)
{
    const gdn_problem *p = &env->p;
    const bench_opts *o = env->o;
    int64_t B = c->B, T = c->T, Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    size_t as = gdn_dtype_size(p->dtype), os = gdn_dtype_size(p->out_dtype);
    int64_t nq, nv, ng, nstate, ncap;
    void *q = NULL, *k = NULL, *v = NULL, *out = NULL;
    float *g = NULL, *beta = NULL, *caps = NULL;
    float **pools = NULL;
    double *times = NULL;
    int npools = 1, i, r, max_reps;
    gdn_batch b;
    gdn_tensors t;
    gdn_rng rng;
    double t0, elapsed, est;

    memset(res, 0, sizeof *res);
    res->rel_err = NAN;
    snprintf(res->checked, sizeof res->checked, "none");
    if ((double)B * T * (Hk * Dk + Hv * Dv) + (double)B * Hv * Dv * Dk + (double)ncap_guard(c, p) > 0x1p40) {
        snprintf(res->error, sizeof res->error, "the case is too large for this machine");
        return;
    }
    nq = B * T * Hk * Dk;
    nv = B * T * Hv * Dv;
    ng = B * T * Hv;
    nstate = B * Hv * Dv * Dk;
    ncap = c->capture ? B * T * Hv * Dv * Dk : 0;
    res->flops = 7.0 * (double)Dk * (double)Dv * (double)Hv * (double)B * (double)T;
    res->bytes = 8.0 * (double)Dk * Dv * Hv * B + (double)(2 * nq + nv) * (double)as + 2.0 * 4.0 * (double)ng +
                 (double)nv * (double)os + 4.0 * (double)ncap;

    if (T <= 64 && !o->warm) {
        int64_t sb = nstate * 4;
        npools = (int)((ROTATE_BYTES + sb - 1) / sb);
        if (npools > ROTATE_MAX)
            npools = ROTATE_MAX;
        if (npools < 1)
            npools = 1;
    }
    res->pools = npools;

    q = alloc64((size_t)nq * as);
    k = alloc64((size_t)nq * as);
    v = alloc64((size_t)nv * as);
    out = alloc64((size_t)nv * os);
    g = alloc64((size_t)ng * sizeof(float));
    beta = alloc64((size_t)ng * sizeof(float));
    pools = calloc((size_t)npools, sizeof *pools);
    if (c->capture)
        caps = alloc64((size_t)ncap * sizeof(float));
    if (!q || !k || !v || !out || !g || !beta || !pools || (c->capture && !caps)) {
        snprintf(res->error, sizeof res->error, "out of memory for the inputs and outputs");
        goto done;
    }
    for (i = 0; i < npools; i++) {
        pools[i] = alloc64((size_t)nstate * sizeof(float));
        if (!pools[i]) {
            snprintf(res->error, sizeof res->error, "out of memory for %d state pools", npools);
            goto done;
        }
    }

    /* Realistic inputs: unit-norm q and k, g from the model's gate formula, beta in (0,1). */
    gdn_rng_seed(&rng, 0x9d2c5680u ^ (uint64_t)(B * 1000003 + T));
    fill_unit_rows(&rng, q, p->dtype, B * T * Hk, (int)Dk);
    fill_unit_rows(&rng, k, p->dtype, B * T * Hk, (int)Dk);
    for (i = 0; i < nv; i++)
        gdn_store_f32(v, p->dtype, i, uniform_pm1(&rng));
    {
        double A[4096], dtb[4096];
        for (r = 0; r < Hv && r < 4096; r++) {
            A[r] = log(1.0 + 15.0 * gdn_rng_uniform(&rng));               /* A_log: log U(1,16) */
            dtb[r] = log(expm1(0.001 + 0.099 * gdn_rng_uniform(&rng))); /* softplus(dt_bias) in [1e-3,0.1] */
        }
        for (i = 0; i < ng; i++) {
            int h = (int)(i % Hv) % 4096;
            double x = gdn_rng_normal(&rng) + dtb[h];
            double sp = x > 20.0 ? x : log1p(exp(x));
            g[i] = (float)(-exp(A[h]) * sp);
            beta[i] = (float)(1.0 / (1.0 + exp(-gdn_rng_normal(&rng))));
        }
    }
    for (i = 0; i < nstate; i++)
        pools[0][i] = 0.1f * uniform_pm1(&rng);

    if (env->cuda) {
        run_case_cuda(env, c, res, q, k, v, g, beta, pools[0], npools);
        goto done;
    }

    /* Correctness first, on a pristine copy of the initial state. */
    check_case(env, c, q, k, v, g, beta, pools[0], NULL, res);
    for (i = 1; i < npools; i++)
        memcpy(pools[i], pools[0], (size_t)nstate * sizeof(float));

    case_args(p, c, B, T, q, k, v, g, beta, out, pools[0], caps, &b, &t);

    /* Warm-up: at least once through the pools, and at least 0.1 s. */
    t0 = tool_now();
    r = 0;
    do {
        gdn_status st;
        t.state.pool.data = pools[r % npools];
        st = gdn_forward(env->ctx, p, &b, &t);
        if (st != GDN_STATUS_SUCCESS) {
            snprintf(res->error, sizeof res->error, "gdn_forward: %s: %s", gdn_status_string(st),
                     gdn_last_error(env->ctx));
            res->ok = 0;
            goto done;
        }
        r++;
        elapsed = tool_now() - t0;
    } while ((r < npools || elapsed < 0.1) && r < 5000);
    est = elapsed / r;
    if (o->reps > 0) {
        max_reps = o->reps;
    } else {
        double budget = T > 64 ? 2.0 : 1.0;
        max_reps = (int)(budget / (est > 1e-7 ? est : 1e-7));
        if (max_reps > 2000)
            max_reps = 2000;
        if (max_reps < (est > 0.2 ? 3 : 5))
            max_reps = est > 0.2 ? 3 : 5;
    }
    times = malloc((size_t)max_reps * sizeof(double));
    if (!times) {
        snprintf(res->error, sizeof res->error, "out of memory");
        goto done;
    }
    for (i = 0; i < max_reps; i++) {
        double a;
        t.state.pool.data = pools[(r + i) % npools];
        a = tool_now();
        gdn_forward(env->ctx, p, &b, &t);
        times[i] = tool_now() - a;
    }
    res->reps = max_reps;
    res->min_us = 1e300;
    for (i = 0; i < max_reps; i++)
        if (times[i] * 1e6 < res->min_us)
            res->min_us = times[i] * 1e6;
    res->median_us = median(times, max_reps) * 1e6;
    res->ran = 1;

done:
    free(q);
    free(k);
    free(v);
    free(out);
    free(g);
    free(beta);
    free(caps);
    if (pools)
        for (i = 0; i < npools; i++)
            free(pools[i]);
    free(pools);
    free(times);
}

/* ---- output --------------------------------------------------------------------------------- */

static void json_num(const char *key, double x)
{
    if (isfinite(x))
        printf(",\"%s\":%.6g", key, x);
    else
        printf(",\"%s\":null", key);
}

/* The algorithm and kernel that run a case (gdn_context_kernel_for: AUTO's crossover, precision, capture). */
static const char *case_kernel(const bench_env *env, const bench_case *c, const char **algo)
{
    const char *k = gdn_context_kernel_for(env->ctx, &env->p, c->T, c->capture);
    *algo = strncmp(k, "chunk", 5) == 0 ? "chunked" : "recurrent";
    return k;
}

static void print_json(const bench_env *env, const bench_case *c, const bench_result *r)
{
    const gdn_problem *p = &env->p;
    double sec = r->median_us * 1e-6;
    const char *algo, *kernel = case_kernel(env, c, &algo);
    printf("{\"op\":\"%s\",\"backend\":\"%s\",\"algo\":\"%s\",\"dtype\":\"%s\",\"out_dtype\":\"%s\","
           "\"state_dtype\":\"f32\",\"qk_l2norm\":%s,\"isa\":\"%s\",\"kernel\":\"%s\",\"model\":\"%s\"",
           c->op, env->cuda ? "cuda" : "cpu", algo, tool_dtype_names[p->dtype], tool_dtype_names[p->out_dtype],
           p->qk_l2norm ? "true" : "false", gdn_isa_name(gdn_context_isa(env->ctx)), kernel, env->model_name);
    printf(",\"B\":%lld,\"T\":%lld,\"Hk\":%d,\"Hv\":%d,\"Dk\":%d,\"Dv\":%d,\"capture\":%s,\"threads\":%d,\"reps\":%d,"
           "\"state_pools\":%d",
           (long long)c->B, (long long)c->T, p->num_k_heads, p->num_v_heads, p->k_dim, p->v_dim,
           c->capture ? "true" : "false", gdn_context_num_threads(env->ctx), r->reps, r->pools);
    if (env->cuda)
        printf(",\"replays\":\"%s\",\"graph_calls\":%d", env->o->idle ? "idle" : "back_to_back", r->graph_calls);
    json_num("median_us", r->ran ? r->median_us : NAN);
    json_num("min_us", r->ran ? r->min_us : NAN);
    json_num("tokens_per_s", r->ran ? (double)(c->B * c->T) / sec : NAN);
    json_num("bytes", r->bytes);
    json_num("flops", r->flops);
    json_num("gbytes_per_s", r->ran ? r->bytes / sec / 1e9 : NAN);
    json_num("gflops", r->ran ? r->flops / sec / 1e9 : NAN);
    json_num("fma_peak_gflops", env->fma.gflops);
    printf(",\"fma_peak_isa\":\"%s\"", gdn_isa_name(env->fma.isa));
    json_num("mem_gbytes_per_s", env->mem.gbytes_per_s);
    printf(",\"cpu_contended\":%s", tool_cpu_contended(&env->fma) ? "true" : "false");
    json_num("pct_fma_peak", r->ran ? 100.0 * r->flops / sec / 1e9 / env->fma.gflops : NAN);
    json_num("pct_mem_bw", r->ran && env->mem.gbytes_per_s > 0 ? 100.0 * r->bytes / sec / 1e9 / env->mem.gbytes_per_s
                                                               : NAN);
    json_num("rel_err", r->rel_err);
    json_num("rel_err_limit", r->rel_err_limit);
    printf(",\"checked\":\"%s\",\"ok\":%s", r->checked, r->ran && r->ok ? "true" : "false");
    if (r->error[0]) {
        const char *s;
        printf(",\"error\":\"");
        for (s = r->error; *s; s++) {
            if (*s == '"' || *s == '\\')
                printf("\\%c", *s);
            else if ((unsigned char)*s < 0x20)
                printf(" ");
            else
                putchar(*s);
        }
        printf("\"");
    }
    printf("}\n");
    fflush(stdout);
}

/* The table's first line, both backends: the layer, the types and the norm convention. */
static void print_layer_line(const bench_env *env)
{
    const gdn_problem *p = &env->p;
    printf("gdn bench %s: %s layer (Hk=%d Hv=%d Dk=%d Dv=%d), q/k/v/out %s, g/beta f32, state f32, %s\n",
           gdn_version_string(), env->model_name, p->num_k_heads, p->num_v_heads, p->k_dim, p->v_dim,
           tool_dtype_names[p->dtype], p->qk_l2norm ? "q and k L2-normalised in the kernel" : "q and k as given");
}

static void print_header(const bench_env *env, int pools_note)
{
    const gdn_problem *p = &env->p;
    print_layer_line(env);
    gdn_problem pc = *p;
    pc.algo = GDN_ALGO_CHUNKED;
    printf("backend cpu, isa %s, kernels %s (token loop) and %s (chunked, precision %s), algo %s%s, %d threads\n",
           gdn_isa_name(gdn_context_isa(env->ctx)), gdn_context_kernel_name(env->ctx, p->k_dim),
           gdn_context_kernel_for(env->ctx, &pc, 4096, 0), tool_precision_names[p->precision], env->algo,
           p->algo == GDN_ALGO_AUTO ? " (chunked for T >= " STR(GDN_CHUNK_AUTO_MIN_T) " at Dk <= 128, >= "
                                      STR(GDN_CHUNK_AUTO_MIN_T_LARGE) " above, without capture)" : "",
           gdn_context_num_threads(env->ctx));
    printf("machine (measured now): f32 FMA peak %.1f GFLOP/s (%s, %d threads); memory %.1f GB/s (in-place axpy over "
           "%zu MiB, %d threads)\n",
           env->fma.gflops, gdn_isa_name(env->fma.isa), env->fma.threads, env->mem.gbytes_per_s,
           env->mem.array_bytes >> 20, env->mem.threads);
    printf("FLOP = 7*Dk*Dv per token and value head; bytes = f32 state read+written + inputs read once + output "
           "written once (+ captures)\n");
    if (tool_cpu_contended(&env->fma))
        printf("WARNING: other processes are using the CPU (FMA rate on %d threads is %.0f%% of %d x one thread's "
               "%.1f GFLOP/s): times are unreliable\n",
               env->fma.threads, 100.0 * env->fma.gflops / (env->fma.threads * env->fma.single_gflops),
               env->fma.threads, env->fma.single_gflops);
    if (pools_note)
        printf("decode/verify rotate over state pools of >= 256 MiB in all (the state comes from memory, as across "
               "a model's layers); --warm reuses one\n");
    printf("rel_err: relative RMS vs the float64 reference (output in f32, final state, captures) on the same inputs;"
           " whole case when B*T <= %d, else first min(B,%d) sequences x first %d tokens; limit %.0e\n",
           CHECK_TOKENS, CHECK_SEQS, CHECK_TOKENS, rel_err_limit(env->ctx, p, CHECK_TOKENS, 0));
    printf("\n%-8s %5s %6s %12s %12s %8s %9s %6s %6s %9s  %s\n", "op", "B", "T", "median_us", "tokens/s", "GB/s",
           "GFLOP/s", "%FMA", "%BW", "rel_err", "check");
    fflush(stdout);
}

static void print_row(const bench_env *env, const bench_case *c, const bench_result *r)
{
    double sec = r->median_us * 1e-6;
    if (!r->ran) {
        printf("%-8s %5lld %6lld %12s %12s %8s %9s %6s %6s %9.2e  FAIL: %s\n", c->op, (long long)c->B,
               (long long)c->T, "-", "-", "-", "-", "-", "-", r->rel_err, r->error);
    } else {
        double gbs = r->bytes / sec / 1e9, gfl = r->flops / sec / 1e9;
        printf("%-8s %5lld %6lld %12.1f %12.0f %8.1f %9.1f %6.1f %6.1f %9.2e  %s%s%s\n", c->op, (long long)c->B,
               (long long)c->T, r->median_us, (double)(c->B * c->T) / sec, gbs, gfl,
               env->fma.gflops > 0 ? 100.0 * gfl / env->fma.gflops : 0.0,
               env->mem.gbytes_per_s > 0 ? 100.0 * gbs / env->mem.gbytes_per_s : 0.0, r->rel_err,
               r->ok ? "ok" : "FAIL", r->ok ? "" : ": ", r->ok ? "" : r->error);
    }
    fflush(stdout);
}

/* ---- --targets ------------------------------------------------------------------------------ */

typedef struct target_run {
    bench_case c;
    int warm, one_thread;
    gdn_algo algo;
    gdn_precision precision;
    bench_result r;
} target_run;

static void target_line(const char *what, const char *measured, const char *target, int met, int ran)
{
    printf("%-44s %-26s %-22s %s\n", what, measured, target, !ran ? "not run" : met ? "met" : "MISSED");
}

/* The CPU targets, each case run once like a suite case (median of repetitions), then
 * each target as a ratio of cases measured in this run. Returns the number of failed cases. */
static int run_targets(const bench_env *env0, const bench_opts *o0)
{
    target_run t[] = {
        {{"decode", 1, 1, 0}, 1, 0, GDN_ALGO_AUTO, GDN_PRECISION_F32, {0}},
        {{"decode", 64, 1, 0}, 0, 0, GDN_ALGO_AUTO, GDN_PRECISION_F32, {0}},
        {{"verify", 64, 4, 0}, 0, 0, GDN_ALGO_AUTO, GDN_PRECISION_F32, {0}},
        {{"prefill", 1, 4096, 0}, 0, 0, GDN_ALGO_CHUNKED, GDN_PRECISION_F32, {0}},
        {{"prefill", 1, 4096, 0}, 0, 0, GDN_ALGO_CHUNKED, GDN_PRECISION_BF16, {0}},
        {{"prefill", 1, 4096, 0}, 0, 1, GDN_ALGO_CHUNKED, GDN_PRECISION_F32, {0}},
        {{"verify", 1, 4, 0}, 1, 0, GDN_ALGO_AUTO, GDN_PRECISION_F32, {0}}, /* for the verify bound */
    };
    const int n = (int)(sizeof t / sizeof t[0]);
    gdn_context *one = tool_context_create(CMD, o0->backend, 1, o0->isa);
    int failed = 0;
    char m[64], g[64];
    if (!one)
        return n;
    print_header(env0, 1);
    printf("(--targets: decode B=1 reuses one state pool (--warm); the rest rotate pools)\n");
    for (int i = 0; i < n; i++) {
        bench_env e = *env0;
        bench_opts oo = *o0;
        oo.warm = t[i].warm;
        e.o = &oo;
        e.p.algo = t[i].algo;
        e.p.precision = t[i].precision;
        if (t[i].one_thread)
            e.ctx = one;
        fprintf(stderr, "bench: target case %d/%d: %s B=%lld T=%lld ...\n", i + 1, n, t[i].c.op,
                (long long)t[i].c.B, (long long)t[i].c.T);
        run_case(&e, &t[i].c, &t[i].r);
        if (!(t[i].r.ran && t[i].r.ok))
            failed++;
        print_row(&e, &t[i].c, &t[i].r);
        if (i == 0 || i >= 3)
            printf("  ^ %s\n", i == 0   ? "state in cache (one pool, --warm)"
                              : i == 3 ? "chunked, f32 products"
                              : i == 4 ? "chunked, bf16 products (--precision bf16)"
                              : i == 5 ? "chunked, f32 products, 1 thread"
                                       : "state in cache (one pool, --warm): verify's arithmetic");
    }
    const bench_result *dw = &t[0].r, *d64 = &t[1].r, *v64 = &t[2].r, *pf = &t[3].r, *pb = &t[4].r, *p1 = &t[5].r,
                       *vw = &t[6].r;
    const double bw = env0->mem.gbytes_per_s, peak = env0->fma.gflops;
    printf("\n%-44s %-26s %-22s %s\n", "target (issue 3; Qwen3.6-35B-A3B layer)", "measured", "target", "status");
    snprintf(m, sizeof m, "%.1f us", dw->median_us);
    target_line("decode B=1, state in cache, per call", m, "<= 25 us", dw->median_us <= 25.0, dw->ran);
    const double pbw = bw > 0 && d64->ran ? 100.0 * d64->bytes / (d64->median_us * 1e-6) / 1e9 / bw : 0.0;
    snprintf(m, sizeof m, "%.1f%% of %.1f GB/s", pbw, bw);
    target_line("decode B=64, of the read-modify-write BW", m, ">= 80%", pbw >= 80.0, d64->ran && bw > 0);
    const double rv = d64->ran && v64->ran ? v64->median_us / d64->median_us : 0.0;
    snprintf(m, sizeof m, "%.2fx (%.0f / %.0f us)", rv, v64->median_us, d64->median_us);
    target_line("verify T=4 B=64 (no capture) / decode B=64", m, "<= 1.3x", rv > 0 && rv <= 1.3, v64->ran && d64->ran);
    const double pp = pf->ran ? 100.0 * pf->flops / (pf->median_us * 1e-6) / 1e9 / peak : 0.0;
    snprintf(m, sizeof m, "%.1f%% of %.0f GFLOP/s", pp, peak);
    snprintf(g, sizeof g, ">= 60%%");
    target_line("prefill B=1 T=4096 chunked f32, of FMA peak", m, g, pp >= 60.0, pf->ran);
    const double sb = pf->ran && pb->ran ? pf->median_us / pb->median_us : 0.0;
    snprintf(m, sizeof m, "%.2fx, err %.1e", sb, pb->rel_err);
    target_line("prefill bf16 products: speed-up over f32", m, ">= 1.5x, err <= 1e-2",
                sb >= 1.5 && pb->rel_err <= 1e-2, pf->ran && pb->ran);
    const double s2 = pf->ran && p1->ran ? p1->median_us / pf->median_us : 0.0;
    snprintf(m, sizeof m, "%.2fx (%d threads vs 1)", s2, gdn_context_num_threads(env0->ctx));
    target_line("prefill T=4096 chunked: threads vs 1", m, ">= 1.8x (2 threads)", s2 >= 1.8, pf->ran && p1->ran);
    if (d64->ran && v64->ran && dw->ran && vw->ran) {
        /* What bounds verify: the arithmetic T=4 adds to T=1 with the state in cache, times the 64
         * sequences, against what verify adds to decode when the state streams from memory. If
         * the two are close, the arithmetic does not overlap the stream on this machine. */
        const double extra_mem = v64->median_us - d64->median_us;
        const double extra_cache = 64.0 * (vw->median_us - dw->median_us);
        printf("\nverify bound: verify B=64 - decode B=64 = %.0f us; (verify - decode) B=1 in cache x 64 = %.0f us\n"
               "  (arithmetic that overlapped the stream: %.0f%%; with full overlap verify would take %.2fx decode)\n",
               extra_mem, extra_cache, extra_cache > 0 ? 100.0 * (1.0 - extra_mem / extra_cache) : 0.0,
               (d64->median_us > 64.0 * vw->median_us ? d64->median_us : 64.0 * vw->median_us) / d64->median_us);
    }
    gdn_context_destroy(one);
    return failed;
}

/* --backend cuda: a context on a stream of its own (CUDA graphs cannot capture the legacy default
 * stream), the device copy rate measured in the same run as the bandwidth limit, then the cases. */
static int bench_cuda(bench_env *env, const bench_opts *o, const bench_case *cases, int ncases)
{
    gdn_context_desc desc;
    int failed = 0;
    double rate = 0.0;
    if (o->targets || o->threads || o->isa != GDN_ISA_AUTO) {
        tool_error(CMD, "--backend cuda: %s is for the CPU backend", o->targets ? "--targets" : o->threads ? "--threads" : "--isa");
        return TOOL_EXIT_USAGE;
    }
    memset(&desc, 0, sizeof desc);
    desc.backend = GDN_BACKEND_CUDA;
    if (gdn_context_create(&desc, &env->ctx) != GDN_STATUS_SUCCESS) { /* no device: the library's message */
        tool_error(CMD, "--backend cuda: %s", gdn_last_error(NULL));
        return TOOL_EXIT_DATA;
    }
    gdn_context_destroy(env->ctx);
    env->ctx = NULL;
    if (tool_dev_stream_create(&env->stream)) {
        tool_error(CMD, "--backend cuda: %s", tool_dev_error());
        return TOOL_EXIT_DATA;
    }
    memset(&desc, 0, sizeof desc);
    desc.backend = GDN_BACKEND_CUDA;
    desc.stream = env->stream;
    if (gdn_context_create(&desc, &env->ctx) != GDN_STATUS_SUCCESS) {
        tool_error(CMD, "--backend cuda: %s", gdn_last_error(NULL));
        tool_dev_stream_destroy(env->stream);
        return TOOL_EXIT_DATA;
    }
    env->cuda = 1;
    tool_dev_name(env->device, sizeof env->device);
    fprintf(stderr, "bench: measuring the device-to-device copy rate...\n");
    if (tool_dev_copy_rate(env->stream, o->idle, &rate))
        fprintf(stderr, "bench: could not measure the copy rate (%s); %%BW not reported\n", tool_dev_error());
    env->mem.gbytes_per_s = rate / 1e9;
    if (!o->json) {
        const gdn_problem *p = &env->p;
        print_layer_line(env);
        gdn_problem pc = *p;
        pc.algo = GDN_ALGO_CHUNKED;
        printf("backend cuda: %s, kernels %s (token loop) and %s (chunked, precision %s), algo %s%s, state pools "
               "updated in place\n",
               env->device, gdn_context_kernel_name(env->ctx, p->k_dim), gdn_context_kernel_for(env->ctx, &pc, 4096, 0),
               tool_precision_names[p->precision], env->algo,
               p->algo == GDN_ALGO_AUTO && p->precision != GDN_PRECISION_F32
                   ? " (chunked from " STR(GDN_CUDA_CHUNK_MIN_TOKENS) " tokens per sequence, " STR(GDN_CUDA_CHUNK_RS_MIN_TOKENS)
                     " on chunk_split_bf16__cuda_wgmma_rs, " STR(GDN_CUDA_CHUNK_WIDE_MIN_TOKENS)
                     " at Dk > 128; never with capture)"
                   : "");
        printf("device (measured now): device-to-device copy %.1f GB/s (read + written)\n", env->mem.gbytes_per_s);
        char held[64];
        if (o->graph_calls)
            snprintf(held, sizeof held, "%d calls (--graph-calls)", o->graph_calls);
        else
            snprintf(held, sizeof held, "one call per state pool and at least " STR(GRAPH_CALLS_MIN));
        printf("times: CUDA graph replay (a graph holds %s, call i on pool i mod pools), 20 replays warm-up, median per "
               "call; %s\n",
               held,
               o->idle ? "each replay (and copy) timed from an idle GPU, the host's launch latency included (--idle-replays)"
                       : "replays (and copies) queued back to back, each timed between the events around it");
        printf("decode/verify rotate over state pools of >= 256 MiB in all (the state comes from HBM); --warm reuses one\n");
        printf("rel_err: relative RMS vs the float64 reference on the host (output in f32, final state, captures);"
               " whole case when B*T <= %d, else first min(B,%d) sequences x first %d tokens; limit %.0e (%.0e for"
               " tensor-core or bf16 products)\n",
               CHECK_TOKENS, CHECK_SEQS, CHECK_TOKENS, REL_ERR_LIMIT, REL_ERR_LIMIT_BF16);
        printf("\n%-8s %5s %6s %12s %12s %8s %9s %6s %6s %9s  %s\n", "op", "B", "T", "median_us", "tokens/s", "GB/s",
               "GFLOP/s", "%FMA", "%BW", "rel_err", "check");
    }
    for (int c = 0; c < ncases; c++) {
        bench_result r;
        fprintf(stderr, "bench: %s B=%lld T=%lld%s ...\n", cases[c].op, (long long)cases[c].B, (long long)cases[c].T,
                cases[c].capture ? " capture" : "");
        run_case(env, &cases[c], &r);
        if (!(r.ran && r.ok))
            failed++;
        if (o->json)
            print_json(env, &cases[c], &r);
        else
            print_row(env, &cases[c], &r);
    }
    if (failed)
        tool_error(CMD, "%d of %d cases failed (see the %s)", failed, ncases, o->json ? "\"error\" fields" : "table");
    else if (!o->json)
        printf("\nall %d cases match the reference within their limits (%.0e; %.0e for tensor-core or bf16 products)\n",
               ncases, REL_ERR_LIMIT, REL_ERR_LIMIT_BF16);
    gdn_context_destroy(env->ctx);
    tool_dev_stream_destroy(env->stream);
    return failed ? TOOL_EXIT_DATA : TOOL_EXIT_OK;
}

/* ---- the command ---------------------------------------------------------------------------- */

static int parse_dim(const char *opt, const char *val, long long lo, long long hi, long long *out)
{
    return tool_parse_int(CMD, opt, val, lo, hi, out);
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o;
    bench_env env;
    bench_case cases[8];
    const tool_model *m;
    int ncases = 0, i = 1, c, failed = 0, single, any_small = 0;
    long long v;

    memset(&o, 0, sizeof o);
    o.dtype = GDN_DTYPE_BF16;
    o.model = tool_model_default();
    while (i < argc) {
        const char *val;
        int k = tool_next_opt(CMD, argc, argv, &i, bench_options, &val), e;
        if (k == TOOL_OPT_HELP) {
            cmd_bench_help();
            return TOOL_EXIT_OK;
        }
        if (k < 0)
            return TOOL_EXIT_USAGE;
        switch (k) {
        case O_JSON:
            o.json = 1;
            break;
        case O_MODEL:
            if (strcmp(val, "list") == 0) {
                size_t n, j;
                const tool_model *ms = tool_models(&n);
                printf("%-18s %-22s %4s %4s %4s %4s %6s\n", "name", "model", "Hk", "Hv", "Dk", "Dv", "layers");
                for (j = 0; j < n; j++)
                    printf("%-18s %-22s %4d %4d %4d %4d %6d%s\n", ms[j].name, ms[j].description, ms[j].num_k_heads,
                           ms[j].num_v_heads, ms[j].k_dim, ms[j].v_dim, ms[j].gdn_layers,
                           &ms[j] == tool_model_default() ? "  (default)" : "");
                return TOOL_EXIT_OK;
            }
            o.model = tool_model_find(val);
            if (!o.model) {
                tool_error(CMD, "--model: unknown model '%s' (see gdn bench --model list)", val);
                return TOOL_EXIT_USAGE;
            }
            break;
        case O_B:
            if (parse_dim("--B", val, 1, 1 << 20, &o.B))
                return TOOL_EXIT_USAGE;
            break;
        case O_T:
            if (parse_dim("--T", val, 1, 1 << 24, &o.T))
                return TOOL_EXIT_USAGE;
            break;
        case O_HK:
            if (parse_dim("--Hk", val, 1, 4096, &o.Hk))
                return TOOL_EXIT_USAGE;
            break;
        case O_HV:
            if (parse_dim("--Hv", val, 1, 4096, &o.Hv))
                return TOOL_EXIT_USAGE;
            break;
        case O_DK:
            if (parse_dim("--Dk", val, 1, 4096, &o.Dk))
                return TOOL_EXIT_USAGE;
            break;
        case O_DV:
            if (parse_dim("--Dv", val, 1, 4096, &o.Dv))
                return TOOL_EXIT_USAGE;
            break;
        case O_CAPTURE:
            o.capture = 1;
            break;
        case O_DTYPE:
            if ((e = tool_parse_enum(CMD, "--dtype", val, tool_dtype_names)) < 0)
                return TOOL_EXIT_USAGE;
            o.dtype = (gdn_dtype)e;
            break;
        case O_THREADS:
            if (tool_parse_int(CMD, "--threads", val, 0, 4096, &v))
                return TOOL_EXIT_USAGE;
            o.threads = (int)v;
            break;
        case O_ISA:
            if ((e = tool_parse_enum(CMD, "--isa", val, tool_isa_names)) < 0)
                return TOOL_EXIT_USAGE;
            o.isa = (gdn_isa)e;
            break;
        case O_BACKEND:
            if ((e = tool_parse_enum(CMD, "--backend", val, tool_backend_names)) < 0)
                return TOOL_EXIT_USAGE;
            o.backend = (gdn_backend)e;
            break;
        case O_ALGO:
            if ((e = tool_parse_enum(CMD, "--algo", val, tool_algo_names)) < 0)
                return TOOL_EXIT_USAGE;
            o.algo = (gdn_algo)e;
            break;
        case O_TARGETS:
            o.targets = 1;
            break;
        case O_PRECISION:
            if ((e = tool_parse_enum(CMD, "--precision", val, tool_precision_names)) < 0)
                return TOOL_EXIT_USAGE;
            o.precision = (gdn_precision)e;
            break;
        case O_REPS:
            if (tool_parse_int(CMD, "--reps", val, 1, 1000000, &v))
                return TOOL_EXIT_USAGE;
            o.reps = (int)v;
            break;
        case O_WARM:
            o.warm = 1;
            break;
        case O_NO_L2:
            o.no_l2 = 1;
            break;
        case O_IDLE:
            o.idle = 1;
            break;
        case O_GRAPH_CALLS:
            if (tool_parse_int(CMD, "--graph-calls", val, 1, 4096, &v))
                return TOOL_EXIT_USAGE;
            o.graph_calls = (int)v;
            break;
        default:
            break;
        }
    }
    m = o.model;
    memset(&env, 0, sizeof env);
    env.o = &o;
    env.model_name = (o.Hk || o.Hv || o.Dk || o.Dv) ? "custom" : m->name;
    env.p.num_k_heads = (int)(o.Hk ? o.Hk : m->num_k_heads);
    env.p.num_v_heads = (int)(o.Hv ? o.Hv : m->num_v_heads);
    env.p.k_dim = (int)(o.Dk ? o.Dk : m->k_dim);
    env.p.v_dim = (int)(o.Dv ? o.Dv : m->v_dim);
    if (env.p.num_v_heads % env.p.num_k_heads != 0) {
        tool_error(CMD, "--Hv: %d value heads is not a multiple of Hk=%d key heads", env.p.num_v_heads,
                   env.p.num_k_heads);
        return TOOL_EXIT_USAGE;
    }
    single = o.B || o.T;
    if (o.capture && !single) {
        tool_error(CMD, "--capture: only with --B/--T (the default suite has its own verify case)");
        return TOOL_EXIT_USAGE;
    }
    if (o.targets) {
        if (single || o.json || o.capture) {
            tool_error(CMD, "--targets: runs its own cases (no --B/--T/--capture/--json)");
            return TOOL_EXIT_USAGE;
        }
        o.dtype = GDN_DTYPE_F32;
    }
    env.p.dtype = o.dtype;
    env.p.out_dtype = o.dtype;
    env.p.gate_dtype = GDN_DTYPE_F32;
    env.p.state_dtype = GDN_DTYPE_F32;
    env.p.gate = GDN_GATE_LOG;
    env.p.qk_l2norm = !o.no_l2; /* as the Qwen3-Next / 3.5 / 3.6 layers call it (HF, fla, vLLM) */
    env.p.algo = o.algo;
    env.p.precision = o.precision;

    if (single) {
        cases[0].B = o.B ? o.B : 1;
        cases[0].T = o.T ? o.T : 1;
        cases[0].capture = o.capture;
        cases[0].op = o.capture ? "verify" : cases[0].T == 1 ? "decode" : "prefill";
        ncases = 1;
    } else {
        static const bench_case suite[] = {
            {"decode", 1, 1, 0}, {"decode", 8, 1, 0}, {"verify", 1, 4, 1}, {"prefill", 1, 512, 0},
            {"prefill", 1, 4096, 0}};
        ncases = (int)(sizeof suite / sizeof suite[0]);
        memcpy(cases, suite, sizeof suite);
    }
    for (c = 0; c < ncases; c++)
        any_small |= cases[c].T <= 64;

    env.algo = tool_algo_names[o.algo];
    if (o.backend == GDN_BACKEND_CUDA)
        return bench_cuda(&env, &o, cases, ncases);
    if (o.idle || o.graph_calls) {
        tool_error(CMD, "%s: times CUDA graph replays, so it needs --backend cuda",
                   o.idle ? "--idle-replays" : "--graph-calls");
        return TOOL_EXIT_USAGE;
    }
    env.ctx = tool_context_create(CMD, o.backend, o.threads, o.isa);
    if (!env.ctx)
        return TOOL_EXIT_DATA;

    fprintf(stderr, "bench: measuring the f32 FMA peak (%d threads)...\n", gdn_context_num_threads(env.ctx));
    env.fma = tool_measure_fma(gdn_context_num_threads(env.ctx), GDN_ISA_AUTO);
    fprintf(stderr, "bench: measuring memory bandwidth...\n");
    env.mem = tool_measure_memory(gdn_context_num_threads(env.ctx), 0);
    if (tool_cpu_contended(&env.fma))
        fprintf(stderr, "bench: warning: other processes are using the CPU (FMA rate on %d threads: %.1f GFLOP/s, "
                        "one thread: %.1f): times are unreliable\n",
                env.fma.threads, env.fma.gflops, env.fma.single_gflops);
    if (env.mem.gbytes_per_s <= 0)
        fprintf(stderr, "bench: could not allocate memory to measure bandwidth; %%BW not reported\n");

    if (o.targets) {
        failed = run_targets(&env, &o);
        gdn_context_destroy(env.ctx);
        if (failed)
            tool_error(CMD, "%d target cases failed their check (see the table)", failed);
        return failed ? TOOL_EXIT_DATA : TOOL_EXIT_OK;
    }
    if (!o.json)
        print_header(&env, any_small && !o.warm);
    for (c = 0; c < ncases; c++) {
        bench_result r;
        fprintf(stderr, "bench: %s B=%lld T=%lld%s ...\n", cases[c].op, (long long)cases[c].B, (long long)cases[c].T,
                cases[c].capture ? " capture" : "");
        run_case(&env, &cases[c], &r);
        if (!(r.ran && r.ok))
            failed++;
        if (o.json)
            print_json(&env, &cases[c], &r);
        else
            print_row(&env, &cases[c], &r);
    }
    if (failed) {
        tool_error(CMD, "%d of %d cases failed (see the %s)", failed, ncases, o.json ? "\"error\" fields" : "table");
    } else if (!o.json) {
        printf("\nall %d cases match the reference within %.0e\n", ncases,
               rel_err_limit(env.ctx, &env.p, CHECK_TOKENS, 0));
    }
    gdn_context_destroy(env.ctx);
    return failed ? TOOL_EXIT_DATA : TOOL_EXIT_OK;
}
