/*
 * test_cuda — the CUDA backend against the float64 reference, through the conformance engine.
 *
 * Without a CUDA device it prints "skipped: no CUDA device" and passes (CI builds the CUDA code but
 * has no GPU). With one it runs, on device 0:
 *   1. the conformance suite of the CPU (gdn_check_suite, one ISA's worth: every convention,
 *      dtype, layout, head map and ratio, dims incl. odd sizes, T up to 1000, varlen with empty
 *      sequences, pools in place and moving, negative slots, dense and slot capture (also into the
 *      state pool, vLLM style), strided views, no output), each case with every buffer mirrored on
 *      the device guard regions and padding included, copied back and compared with the float64
 *      reference (tolerances of check.h; untouched slots, padding and inputs bitwise unchanged);
 *   2. a random matrix over the same parameters with T in {1, 2, 4, 15, 64, 65} and head ratios
 *      1-4 (3 included), plus the Qwen3.6 layer shapes (decode, verify with capture);
 *   3. large batches: 70000 sequences (more grid blocks than 65535 and a long index check) and
 *      3000 sequences of the Qwen3.6 shape's ratio with small heads;
 *   4. determinism: the same call twice gives bitwise identical results;
 *   5. errors: host-side validation errors are returned by gdn_forward at once with the CPU's
 *      message; bad contents of the device index arrays (cu_seqlens, slots, capture slots, slot
 *      conflicts, a short slot table) make gdn_forward write nothing, and gdn_context_synchronize
 *      returns INVALID_ARGUMENT with the CPU validator's message; a later valid call runs;
 *   6. context errors: a negative device, a device past the last, the chunked algorithm.
 * Usage: test_cuda [quick|sanitize] (quick: without the suite; sanitize: a short run for
 * compute-sanitizer: parts 4-6, 40 matrix cases, the fixed cases).
 * GDN_TEST_CUDA_ON_CPU=1 runs parts 1-3 on the CPU backend instead (to check the harness without
 * a GPU).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/check.h"
#include "check/rng.h"
#include "cuda/cuda_backend.h"

static int g_failed, g_run;
static gdn_backend g_backend = GDN_BACKEND_CUDA;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define EXPECT(cond, ...)                                \
    do {                                                 \
        g_run++;                                         \
        if (!(cond)) {                                   \
            g_failed++;                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                         \
            printf("\n");                                \
        }                                                \
    } while (0)

static double worst_out, worst_state, worst_cap;

static int run_case(gdn_check_case *c, const char *what, size_t i)
{
    gdn_check_result r;
    c->backend = g_backend;
    c->isa = GDN_ISA_AUTO;
    c->threads = 0;
    gdn_check_run(c, &r);
    g_run++;
    if (!r.pass) {
        char d[600];
        gdn_check_describe(c, d, sizeof d);
        printf("FAIL %s #%zu %s: %s\n", what, i, d, r.message);
        g_failed++;
        return 0;
    }
    if (r.out_err / r.tolerance > worst_out)
        worst_out = r.out_err / r.tolerance;
    if (r.state_err > worst_state)
        worst_state = r.state_err;
    if (r.capture_err > worst_cap)
        worst_cap = r.capture_err;
    return 1;
}

/* --- 1. the conformance suite ---------------------------------------------------------------- */

static void run_suite(void)
{
    const size_t n = gdn_check_suite(NULL, 0, 0);
    gdn_check_case *cases = (gdn_check_case *)calloc(n ? n : 1, sizeof *cases);
    if (!cases)
        return;
    gdn_check_suite(cases, n, 0);
    const double t0 = now();
    size_t ran = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (cases[i].isa != GDN_ISA_SCALAR) /* one ISA's copy of the matrix */
            continue;
        if (cases[i].problem.algo == GDN_ALGO_CHUNKED) /* not on CUDA yet (UNSUPPORTED, tested in part 5) */
            cases[i].problem.algo = GDN_ALGO_RECURRENT;
        ran++;
        failed += !run_case(&cases[i], "suite", i);
    }
    printf("suite: %zu cases, %zu failed, %.1f s\n", ran, failed, now() - t0);
    free(cases);
}

/* --- 2. a random matrix, and the real shapes --------------------------------------------------- */

static void random_case(gdn_check_case *c, gdn_rng *r)
{
    static const int64_t TS[] = {1, 2, 4, 15, 64, 65};
    static const int DK[] = {128, 64, 32, 48, 100, 256, 16, 8};
    static const int DV[] = {128, 64, 32, 80, 24, 256, 16, 3};
    static const gdn_dtype DT[] = {GDN_DTYPE_F32, GDN_DTYPE_BF16, GDN_DTYPE_F16};
    memset(c, 0, sizeof *c);
    gdn_problem *p = &c->problem;
    p->dtype = DT[gdn_rng_below(r, 3)];
    p->out_dtype = gdn_rng_below(r, 2) ? GDN_DTYPE_F32 : DT[gdn_rng_below(r, 3)];
    p->gate_dtype = gdn_rng_below(r, 2) ? p->dtype : GDN_DTYPE_F32;
    p->head_map = gdn_rng_below(r, 2) ? GDN_HEADS_TILED : GDN_HEADS_GROUPED;
    p->gate = (gdn_gate)gdn_rng_below(r, 4);
    p->state_layout = gdn_rng_below(r, 4) == 0 ? GDN_STATE_KV : GDN_STATE_VK;
    p->qk_l2norm = (int)gdn_rng_below(r, 2);
    p->scale = gdn_rng_below(r, 3) == 0 ? 0.375f : 0.0f;
    p->algo = gdn_rng_below(r, 2) ? GDN_ALGO_RECURRENT : GDN_ALGO_AUTO;
    const int d = (int)gdn_rng_below(r, 8), d2 = gdn_rng_below(r, 3) == 0 ? (int)gdn_rng_below(r, 8) : d;
    p->k_dim = DK[d];
    p->v_dim = DV[d2];
    p->num_k_heads = 1 + (int)gdn_rng_below(r, 2);
    p->num_v_heads = p->num_k_heads * (1 + (int)gdn_rng_below(r, 4));
    const int64_t T = TS[gdn_rng_below(r, 6)];
    if (gdn_rng_below(r, 3) == 0) {
        c->n_seqs = 2 + (int)gdn_rng_below(r, 5);
        for (int i = 0; i < c->n_seqs; i++)
            c->seq_lens[i] = gdn_rng_below(r, T + 1);
        c->seq_lens[gdn_rng_below(r, c->n_seqs)] = T;
        c->seq_lens[0] = 0; /* an empty sequence (unless it was also chosen as the long one) */
        c->cu_i64 = (int)gdn_rng_below(r, 2);
        c->B = 1;
    } else {
        c->B = 1 + gdn_rng_below(r, 3);
        c->T = T;
    }
    c->pool = (gdn_check_pool)gdn_rng_below(r, 3);
    switch (gdn_rng_below(r, 7)) {
    case 0: case 1: c->capture = GDN_CAPTURE_NONE; break;
    case 2: c->capture = GDN_CAPTURE_DENSE; break;
    case 3: c->capture = GDN_CAPTURE_SLOTS; break;
    case 4: c->capture = GDN_CAPTURE_SLOTS; c->capture_in_pool = 1; break;
    case 5: c->capture = GDN_CAPTURE_SLOTS; c->capture_by_position = 1; break;
    default: c->capture = GDN_CAPTURE_SLOTS; c->capture_in_pool = c->capture_last_in_write_slot = 1; break;
    }
    c->strided = (int)gdn_rng_below(r, GDN_CHECK_STRIDED_MAX + 1);
    c->decay = (gdn_check_decay)gdn_rng_below(r, 3);
    c->no_output = gdn_rng_below(r, 5) == 0;
    c->default_slots = c->pool == GDN_CHECK_POOL_INPLACE && gdn_rng_below(r, 2);
    /* keep the float64 reference affordable */
    if (p->k_dim * p->v_dim >= 256 * 128 && p->num_v_heads > 2) {
        p->num_k_heads = 1;
        p->num_v_heads = 1 + (int)gdn_rng_below(r, 2);
    }
    c->seed = gdn_rng_u64(r);
}

static void run_matrix(int count)
{
    gdn_rng r;
    gdn_rng_seed(&r, 0xC0DAu);
    const double t0 = now();
    int ran = 0, failed = 0;
    for (int i = 0; i < count; i++) {
        gdn_check_case c;
        random_case(&c, &r);
        ran++;
        failed += !run_case(&c, "matrix", (size_t)i);
    }
    /* the Qwen3.6 layers: decode, verify T = 4 with capture (dense; slots into the pool, vLLM
     * style), ratio 3 (the 27B model), bf16 */
    gdn_check_case c;
    memset(&c, 0, sizeof c);
    c.problem.num_k_heads = 16;
    c.problem.num_v_heads = 32;
    c.problem.k_dim = c.problem.v_dim = 128;
    c.problem.dtype = c.problem.out_dtype = GDN_DTYPE_BF16;
    c.problem.qk_l2norm = 1;
    c.B = 3;
    c.T = 1;
    c.pool = GDN_CHECK_POOL_MOVE;
    c.seed = 1;
    ran++;
    failed += !run_case(&c, "qwen decode", 0);
    c.problem.out_dtype = GDN_DTYPE_F32;
    c.T = 4;
    c.B = 2;
    c.capture = GDN_CAPTURE_DENSE;
    c.seed = 2;
    ran++;
    failed += !run_case(&c, "qwen verify dense", 0);
    c.capture = GDN_CAPTURE_SLOTS;
    c.capture_in_pool = c.capture_last_in_write_slot = 1;
    c.seed = 3;
    ran++;
    failed += !run_case(&c, "qwen verify slots", 0);
    c.problem.num_v_heads = 48;
    c.problem.gate = GDN_GATE_RAW;
    c.capture = GDN_CAPTURE_NONE;
    c.capture_in_pool = c.capture_last_in_write_slot = 0;
    c.T = 1;
    c.B = 2;
    c.seed = 4;
    ran++;
    failed += !run_case(&c, "qwen 27B decode", 0);
    /* the fast path's shapes (src/cuda/fast.cuh: dense, default slots in place, no capture, vk,
     * contiguous, Dk = Dv in {32, 64, 128, 256}, T <= 8): the Qwen3.6 layer at decode B=1 and
     * verify T=4, ratio 3, then every dim, dtype and token count with the other options drawn */
    memset(&c, 0, sizeof c);
    c.problem.num_k_heads = 16;
    c.problem.num_v_heads = 32;
    c.problem.k_dim = c.problem.v_dim = 128;
    c.problem.dtype = c.problem.out_dtype = GDN_DTYPE_BF16;
    c.problem.qk_l2norm = 1;
    c.pool = GDN_CHECK_POOL_INPLACE;
    c.default_slots = 1;
    c.B = 1;
    c.T = 1;
    c.seed = 5;
    ran++;
    failed += !run_case(&c, "fast qwen decode B=1", 0);
    c.T = 4;
    c.B = 2;
    c.seed = 6;
    ran++;
    failed += !run_case(&c, "fast qwen verify T=4", 0);
    c.problem.num_v_heads = 48;
    c.problem.gate = GDN_GATE_RAW;
    c.no_output = 1;
    c.seed = 7;
    ran++;
    failed += !run_case(&c, "fast qwen 27B verify T=4, no output", 0);
    {
        static const int FD[] = {32, 64, 128, 256};
        static const int64_t FT[] = {1, 2, 3, 4, 8};
        static const gdn_dtype FDT[] = {GDN_DTYPE_F32, GDN_DTYPE_BF16, GDN_DTYPE_F16};
        gdn_rng fr;
        gdn_rng_seed(&fr, 0xFA57u);
        for (int i = 0; i < 40; i++) {
            memset(&c, 0, sizeof c);
            gdn_problem *p = &c.problem;
            p->k_dim = p->v_dim = FD[i % 4];
            p->dtype = FDT[(i / 4) % 3];
            p->out_dtype = gdn_rng_below(&fr, 2) ? GDN_DTYPE_F32 : FDT[gdn_rng_below(&fr, 3)];
            p->gate_dtype = gdn_rng_below(&fr, 2) ? p->dtype : GDN_DTYPE_F32;
            p->head_map = gdn_rng_below(&fr, 2) ? GDN_HEADS_TILED : GDN_HEADS_GROUPED;
            p->gate = (gdn_gate)gdn_rng_below(&fr, 4);
            p->qk_l2norm = (int)gdn_rng_below(&fr, 3) != 0;
            p->scale = gdn_rng_below(&fr, 3) == 0 ? 0.375f : 0.0f;
            p->num_k_heads = 1 + (int)gdn_rng_below(&fr, 2);
            p->num_v_heads = p->num_k_heads * (1 + (int)gdn_rng_below(&fr, 4));
            if (p->k_dim == 256 && p->num_v_heads > 2) {
                p->num_k_heads = 1;
                p->num_v_heads = 1 + (int)gdn_rng_below(&fr, 2);
            }
            c.B = 1 + gdn_rng_below(&fr, 3);
            c.T = FT[gdn_rng_below(&fr, 5)];
            c.pool = GDN_CHECK_POOL_INPLACE;
            c.default_slots = 1;
            c.decay = (gdn_check_decay)gdn_rng_below(&fr, 3);
            c.no_output = gdn_rng_below(&fr, 5) == 0;
            c.seed = gdn_rng_u64(&fr);
            ran++;
            failed += !run_case(&c, "fast matrix", (size_t)i);
        }
    }
    printf("matrix: %d cases, %d failed, %.1f s\n", ran, failed, now() - t0);
}

/* --- 3. large batches --------------------------------------------------------------------- */

static void run_large(void)
{
    gdn_check_case c;
    memset(&c, 0, sizeof c);
    c.problem.num_k_heads = 1;
    c.problem.num_v_heads = 2;
    c.problem.k_dim = c.problem.v_dim = 16;
    c.B = 70000; /* 140000 items: more blocks than 65535 */
    c.T = 1;
    c.pool = GDN_CHECK_POOL_MOVE;
    c.seed = 11;
    const double t0 = now();
    int failed = !run_case(&c, "large B=70000", 0);
    memset(&c, 0, sizeof c);
    c.problem.num_k_heads = 2;
    c.problem.num_v_heads = 4;
    c.problem.k_dim = c.problem.v_dim = 32;
    c.problem.dtype = GDN_DTYPE_BF16;
    c.B = 3000;
    c.T = 2;
    c.pool = GDN_CHECK_POOL_MOVE;
    c.capture = GDN_CAPTURE_SLOTS;
    c.capture_in_pool = 1;
    c.seed = 12;
    failed += !run_case(&c, "large B=3000 T=2 capture", 0);
    printf("large: 2 cases, %d failed, %.1f s\n", failed, now() - t0);
}

/* --- 4. determinism ----------------------------------------------------------------------------- */

static void run_determinism(void)
{
    gdn_check_case c;
    memset(&c, 0, sizeof c);
    c.problem.num_k_heads = 2;
    c.problem.num_v_heads = 6;
    c.problem.k_dim = c.problem.v_dim = 128;
    c.problem.dtype = GDN_DTYPE_BF16;
    c.problem.qk_l2norm = 1;
    c.n_seqs = 3;
    c.seq_lens[0] = 5;
    c.seq_lens[1] = 0;
    c.seq_lens[2] = 33;
    c.pool = GDN_CHECK_POOL_MOVE;
    c.capture = GDN_CAPTURE_DENSE;
    c.backend = GDN_BACKEND_CUDA;
    c.seed = 21;
    char err[256];
    gdn_check_instance *in = gdn_check_instance_create(&c, err, sizeof err);
    gdn_context *ctx = NULL;
    gdn_context_desc d;
    memset(&d, 0, sizeof d);
    d.backend = GDN_BACKEND_CUDA;
    if (!in || gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS) {
        EXPECT(0, "determinism: setup failed");
        gdn_check_instance_destroy(in);
        return;
    }
    unsigned char *first[3] = {NULL, NULL, NULL};
    size_t bytes[3] = {0, 0, 0};
    for (int run = 0; run < 2; run++) {
        EXPECT(gdn_check_instance_forward(in, ctx) == GDN_STATUS_SUCCESS, "determinism: run %d: %s", run,
               gdn_last_error(ctx));
        for (int w = 0; w < 3; w++) {
            const void *data;
            gdn_check_instance_buffer(in, w, &data, &bytes[w]);
            if (!data)
                continue;
            if (run == 0) {
                first[w] = (unsigned char *)malloc(bytes[w]);
                if (first[w])
                    memcpy(first[w], data, bytes[w]);
            } else {
                EXPECT(first[w] && memcmp(first[w], data, bytes[w]) == 0, "determinism: buffer %d differs", w);
            }
        }
    }
    for (int w = 0; w < 3; w++)
        free(first[w]);
    gdn_context_destroy(ctx);
    gdn_check_instance_destroy(in);
}

/* --- 5. errors ---------------------------------------------------------------------------------- */

/* A small packed problem held on the host and on the device: N = 4 sequences, Hk = Hv = 1,
 * Dk = Dv = 16, a pool of 8 slots, a capture pool of 16 slots, f32 everything. */
#define EN 4
#define ET 7
#define ED 16
#define ESLOTS 8
#define ECAP 16

typedef struct err_fixture {
    float h_in[ET * ED * 3 + ET * 2]; /* q, k, v, g, beta */
    float h_pool[ESLOTS * ED * ED], h_out[ET * ED], h_cap[ECAP * ED * ED];
    int32_t h_cu[EN + 1], h_rs[EN], h_ws[EN], h_cs[ET];
    float *d_in, *d_pool, *d_out, *d_cap;
    int32_t *d_cu, *d_rs, *d_ws, *d_cs;
    gdn_problem p;
    gdn_batch b;
    gdn_tensors t;     /* device pointers */
    gdn_tensors th;    /* the same call on host pointers (for the CPU's message) */
    gdn_batch bh;
} err_fixture;

static void fixture_views(err_fixture *f, gdn_tensors *t, gdn_batch *b, float *in, float *pool, float *out,
                          float *cap, int32_t *cu, int32_t *rs, int32_t *ws, int32_t *cs)
{
    const int64_t sq[4] = {1, ET, 1, ED}, sg[3] = {1, ET, 1}, sp[4] = {ESLOTS, 1, ED, ED}, sc[4] = {ECAP, 1, ED, ED};
    memset(t, 0, sizeof *t);
    memset(b, 0, sizeof *b);
    b->batch_size = 1;
    b->seq_len = ET;
    b->num_seqs = EN;
    b->cu_seqlens = cu;
    b->cu_seqlens_type = GDN_INDEX_I32;
    t->q = gdn_tensor_contiguous(in, 4, sq);
    t->k = gdn_tensor_contiguous(in + ET * ED, 4, sq);
    t->v = gdn_tensor_contiguous(in + 2 * ET * ED, 4, sq);
    t->g = gdn_tensor_contiguous(in + 3 * ET * ED, 3, sg);
    t->beta = gdn_tensor_contiguous(in + 3 * ET * ED + ET, 3, sg);
    t->out = gdn_tensor_contiguous(out, 4, sq);
    t->state.pool = gdn_tensor_contiguous(pool, 4, sp);
    t->state.read_slots = rs;
    t->state.write_slots = ws;
    t->capture.mode = GDN_CAPTURE_SLOTS;
    t->capture.states = gdn_tensor_contiguous(cap, 4, sc);
    t->capture.slots = cs;
    t->capture.slots_stride = 0;
    (void)f;
}

static int fixture_init(err_fixture *f)
{
    gdn_rng r;
    gdn_rng_seed(&r, 77);
    memset(f, 0, sizeof *f);
    for (int i = 0; i < ET * ED * 3; i++)
        f->h_in[i] = (float)(gdn_rng_uniform(&r) * 0.5 - 0.25);
    for (int i = 0; i < ET; i++) {
        f->h_in[3 * ET * ED + i] = -0.1f;     /* g (log) */
        f->h_in[3 * ET * ED + ET + i] = 0.5f; /* beta */
    }
    for (int i = 0; i < ESLOTS * ED * ED; i++)
        f->h_pool[i] = (float)(gdn_rng_uniform(&r) - 0.5);
    f->p.num_k_heads = f->p.num_v_heads = 1;
    f->p.k_dim = f->p.v_dim = ED;
    f->p.qk_l2norm = 1;
    f->d_in = (float *)gdn_cuda_malloc(sizeof f->h_in);
    f->d_pool = (float *)gdn_cuda_malloc(sizeof f->h_pool);
    f->d_out = (float *)gdn_cuda_malloc(sizeof f->h_out);
    f->d_cap = (float *)gdn_cuda_malloc(sizeof f->h_cap);
    f->d_cu = (int32_t *)gdn_cuda_malloc(sizeof f->h_cu);
    f->d_rs = (int32_t *)gdn_cuda_malloc(sizeof f->h_rs);
    f->d_ws = (int32_t *)gdn_cuda_malloc(sizeof f->h_ws);
    f->d_cs = (int32_t *)gdn_cuda_malloc(sizeof f->h_cs);
    if (!f->d_in || !f->d_pool || !f->d_out || !f->d_cap || !f->d_cu || !f->d_rs || !f->d_ws || !f->d_cs)
        return 0;
    fixture_views(f, &f->t, &f->b, f->d_in, f->d_pool, f->d_out, f->d_cap, f->d_cu, f->d_rs, f->d_ws, f->d_cs);
    fixture_views(f, &f->th, &f->bh, f->h_in, f->h_pool, f->h_out, f->h_cap, f->h_cu, f->h_rs, f->h_ws, f->h_cs);
    return gdn_cuda_memcpy(f->d_in, f->h_in, sizeof f->h_in) == 0;
}

static void fixture_free(err_fixture *f)
{
    gdn_cuda_free(f->d_in);
    gdn_cuda_free(f->d_pool);
    gdn_cuda_free(f->d_out);
    gdn_cuda_free(f->d_cap);
    gdn_cuda_free(f->d_cu);
    gdn_cuda_free(f->d_rs);
    gdn_cuda_free(f->d_ws);
    gdn_cuda_free(f->d_cs);
}

/* A valid set of index arrays: lengths 2, 0, 3, 2; slots moving; captures into distinct slots. */
static void fixture_valid(err_fixture *f)
{
    const int32_t cu[EN + 1] = {0, 2, 2, 5, 7}, rs[EN] = {0, 1, 2, -1}, ws[EN] = {4, 5, 2, 7};
    const int32_t cs[ET] = {3, 4, 5, -1, 6, 7, 8};
    memcpy(f->h_cu, cu, sizeof cu);
    memcpy(f->h_rs, rs, sizeof rs);
    memcpy(f->h_ws, ws, sizeof ws);
    memcpy(f->h_cs, cs, sizeof cs);
    f->t.capture.slots_stride = f->th.capture.slots_stride = 0;
}

/* Upload the index arrays and fill the outputs with sentinels. */
static int fixture_upload(err_fixture *f)
{
    for (int i = 0; i < ET * ED; i++)
        f->h_out[i] = 12345.0f;
    for (int i = 0; i < ECAP * ED * ED; i++)
        f->h_cap[i] = -777.0f;
    return gdn_cuda_memcpy(f->d_pool, f->h_pool, sizeof f->h_pool) == 0 &&
           gdn_cuda_memcpy(f->d_out, f->h_out, sizeof f->h_out) == 0 &&
           gdn_cuda_memcpy(f->d_cap, f->h_cap, sizeof f->h_cap) == 0 &&
           gdn_cuda_memcpy(f->d_cu, f->h_cu, sizeof f->h_cu) == 0 &&
           gdn_cuda_memcpy(f->d_rs, f->h_rs, sizeof f->h_rs) == 0 &&
           gdn_cuda_memcpy(f->d_ws, f->h_ws, sizeof f->h_ws) == 0 &&
           gdn_cuda_memcpy(f->d_cs, f->h_cs, sizeof f->h_cs) == 0;
}

/* Nothing written: out, pool and capture equal what was uploaded. */
static int fixture_untouched(err_fixture *f)
{
    static float pool[ESLOTS * ED * ED], out[ET * ED], cap[ECAP * ED * ED];
    if (gdn_cuda_memcpy(pool, f->d_pool, sizeof pool) || gdn_cuda_memcpy(out, f->d_out, sizeof out) ||
        gdn_cuda_memcpy(cap, f->d_cap, sizeof cap))
        return 0;
    return memcmp(pool, f->h_pool, sizeof pool) == 0 && memcmp(out, f->h_out, sizeof out) == 0 &&
           memcmp(cap, f->h_cap, sizeof cap) == 0;
}

typedef struct bad_case {
    const char *name;
    void (*mutate)(err_fixture *f);
    const char *expect; /* substring of the message; NULL: the CPU's message exactly */
} bad_case;

static void m_cu_first(err_fixture *f) { f->h_cu[0] = 1; }
static void m_cu_decreasing(err_fixture *f) { f->h_cu[2] = 1; }
static void m_cu_past(err_fixture *f) { f->h_cu[3] = 9; }
static void m_cu_last(err_fixture *f) { f->h_cu[EN] = 6; }
static void m_read_range(err_fixture *f) { f->h_rs[1] = ESLOTS; }
static void m_write_range(err_fixture *f) { f->h_ws[2] = 100; }
static void m_cap_range(err_fixture *f) { f->h_cs[4] = ECAP; }
static void m_write_twice(err_fixture *f) { f->h_ws[3] = 4; }
static void m_write_read(err_fixture *f) { f->h_ws[1] = 0; }
static void m_cap_twice(err_fixture *f) { f->h_cs[1] = 3; }
static void m_stride(err_fixture *f)
{
    f->t.capture.slots_stride = f->th.capture.slots_stride = 2; /* sequence 2 has 3 tokens */
}

static void run_errors(void)
{
    static const bad_case BAD[] = {
        {"cu[0] != 0", m_cu_first, NULL},
        {"cu decreasing", m_cu_decreasing, NULL},
        {"cu past T", m_cu_past, NULL},
        {"cu[N] != T", m_cu_last, NULL},
        {"read slot past the pool", m_read_range, NULL},
        {"write slot past the pool", m_write_range, NULL},
        {"capture slot past the capture pool", m_cap_range, NULL},
        {"two sequences write one slot", m_write_twice, "is also written by sequence"},
        {"a write into a slot another sequence reads", m_write_read, "is also read by sequence"},
        {"one sequence captures twice into a slot", m_cap_twice, "written twice by this sequence"},
        {"slot table shorter than a sequence", m_stride, NULL},
    };
    err_fixture *f = (err_fixture *)calloc(1, sizeof *f);
    gdn_context *ctx = NULL, *cpu = NULL;
    gdn_context_desc d;
    memset(&d, 0, sizeof d);
    d.backend = GDN_BACKEND_CUDA;
    if (!f || !fixture_init(f) || gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS ||
        gdn_context_create(NULL, &cpu) != GDN_STATUS_SUCCESS) {
        EXPECT(0, "errors: setup failed (%s)", gdn_last_error(NULL));
        goto done;
    }
    /* the valid call works and writes */
    fixture_valid(f);
    EXPECT(fixture_upload(f), "upload");
    EXPECT(gdn_forward(ctx, &f->p, &f->b, &f->t) == GDN_STATUS_SUCCESS, "valid call: %s", gdn_last_error(ctx));
    EXPECT(gdn_context_synchronize(ctx) == GDN_STATUS_SUCCESS, "valid call: synchronize: %s", gdn_last_error(ctx));
    EXPECT(!fixture_untouched(f), "valid call: nothing was written");

    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        fixture_valid(f);
        BAD[i].mutate(f);
        EXPECT(fixture_upload(f), "upload");
        /* what the CPU says about the same arrays (host copies) */
        char cpu_msg[600];
        gdn_status cs = gdn_forward(cpu, &f->p, &f->bh, &f->th);
        snprintf(cpu_msg, sizeof cpu_msg, "%s", gdn_last_error(cpu));
        EXPECT(cs == GDN_STATUS_INVALID_ARGUMENT, "%s: the CPU accepts it (fixture bug)", BAD[i].name);
        gdn_status st = gdn_forward(ctx, &f->p, &f->b, &f->t);
        EXPECT(st == GDN_STATUS_SUCCESS, "%s: gdn_forward returned %s (%s); the contents are checked on the device",
               BAD[i].name, gdn_status_string(st), gdn_last_error(ctx));
        st = gdn_context_synchronize(ctx);
        const char *msg = gdn_last_error(ctx);
        EXPECT(st == GDN_STATUS_INVALID_ARGUMENT, "%s: synchronize returned %s", BAD[i].name, gdn_status_string(st));
        if (BAD[i].expect)
            EXPECT(strstr(msg, BAD[i].expect) != NULL, "%s: message \"%s\" lacks \"%s\"", BAD[i].name, msg,
                   BAD[i].expect);
        else
            EXPECT(strncmp(msg, cpu_msg, strlen(cpu_msg)) == 0, "%s: message \"%s\", the CPU says \"%s\"",
                   BAD[i].name, msg, cpu_msg);
        EXPECT(fixture_untouched(f), "%s: the call wrote something", BAD[i].name);
        EXPECT(gdn_context_synchronize(ctx) == GDN_STATUS_SUCCESS, "%s: the error was not cleared", BAD[i].name);
    }

    /* an error, then a valid call before synchronize: the error is reported, the valid call ran */
    fixture_valid(f);
    m_read_range(f);
    EXPECT(fixture_upload(f), "upload");
    EXPECT(gdn_forward(ctx, &f->p, &f->b, &f->t) == GDN_STATUS_SUCCESS, "bad call");
    {
        int32_t rs_ok[EN] = {0, 1, 2, -1};
        /* synchronous, on the legacy default stream the context runs on: after the bad call */
        EXPECT(gdn_cuda_memcpy(f->d_rs, rs_ok, sizeof rs_ok) == 0, "upload");
    }
    EXPECT(gdn_forward(ctx, &f->p, &f->b, &f->t) == GDN_STATUS_SUCCESS, "good call");
    EXPECT(gdn_context_synchronize(ctx) == GDN_STATUS_INVALID_ARGUMENT, "sticky error not reported");
    EXPECT(!fixture_untouched(f), "the valid call after an error wrote nothing");
    EXPECT(gdn_context_synchronize(ctx) == GDN_STATUS_SUCCESS, "error not cleared");

    /* host-side errors: returned at once, with the CPU's message */
    {
        gdn_tensors t = f->t, th = f->th;
        t.q.shape[3] = th.q.shape[3] = ED - 1;
        gdn_status a = gdn_forward(cpu, &f->p, &f->bh, &th);
        char cpu_msg[600];
        snprintf(cpu_msg, sizeof cpu_msg, "%s", gdn_last_error(cpu));
        gdn_status b = gdn_forward(ctx, &f->p, &f->b, &t);
        EXPECT(a == GDN_STATUS_INVALID_ARGUMENT && b == a && strcmp(cpu_msg, gdn_last_error(ctx)) == 0,
               "host validation: %s vs CPU %s", gdn_last_error(ctx), cpu_msg);
        gdn_problem p = f->p;
        p.algo = GDN_ALGO_CHUNKED;
        EXPECT(gdn_forward(ctx, &p, &f->b, &f->t) == GDN_STATUS_UNSUPPORTED, "chunked on CUDA: %s",
               gdn_last_error(ctx));
    }
done:
    gdn_context_destroy(ctx);
    gdn_context_destroy(cpu);
    if (f)
        fixture_free(f);
    free(f);
}

/* --- 6. contexts ------------------------------------------------------------------------------- */

static void run_contexts(void)
{
    gdn_context_desc d;
    gdn_context *ctx = NULL;
    memset(&d, 0, sizeof d);
    d.backend = GDN_BACKEND_CUDA;
    d.device = -1;
    EXPECT(gdn_context_create(&d, &ctx) == GDN_STATUS_INVALID_ARGUMENT && !ctx, "device -1");
    d.device = 1000;
    EXPECT(gdn_context_create(&d, &ctx) == GDN_STATUS_BACKEND_UNAVAILABLE && !ctx &&
               strstr(gdn_last_error(NULL), "desc.device"),
           "device 1000: %s", gdn_last_error(NULL));
    d.device = 0;
    EXPECT(gdn_context_create(&d, &ctx) == GDN_STATUS_SUCCESS, "device 0: %s", gdn_last_error(NULL));
    EXPECT(strcmp(gdn_context_kernel_name(ctx, 128), "recurrent_f32__cuda_k128") == 0, "kernel name %s",
           gdn_context_kernel_name(ctx, 128));
    EXPECT(gdn_context_num_threads(ctx) == 0 && gdn_context_isa(ctx) == GDN_ISA_AUTO, "threads / isa");
    EXPECT(gdn_context_synchronize(ctx) == GDN_STATUS_SUCCESS, "synchronize with nothing to do");
    gdn_context_destroy(ctx);
    EXPECT(gdn_context_synchronize(NULL) == GDN_STATUS_INVALID_ARGUMENT, "synchronize(NULL)");
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    const int sanitize = argc > 1 && strcmp(argv[1], "sanitize") == 0;
    const char *on_cpu = getenv("GDN_TEST_CUDA_ON_CPU");
    char name[256];
    const int devices = gdn_cuda_device_count(name, sizeof name);
    if (on_cpu && *on_cpu == '1') {
        g_backend = GDN_BACKEND_CPU;
        printf("GDN_TEST_CUDA_ON_CPU=1: parts 1-3 on the CPU backend (harness check)\n");
    } else if (devices == 0) {
        /* the CUDA backend must say so cleanly */
        gdn_context_desc d;
        gdn_context *ctx = NULL;
        memset(&d, 0, sizeof d);
        d.backend = GDN_BACKEND_CUDA;
        if (gdn_context_create(&d, &ctx) != GDN_STATUS_BACKEND_UNAVAILABLE || ctx) {
            printf("FAIL: no CUDA device, yet gdn_context_create did not return BACKEND_UNAVAILABLE\n");
            return 1;
        }
        printf("skipped: no CUDA device (%s)\n", gdn_last_error(NULL));
        return 0;
    } else {
        printf("device 0: %s\n", name);
    }
    const double t0 = now();
    if (g_backend == GDN_BACKEND_CUDA) {
        run_contexts();
        run_errors();
        run_determinism();
        printf("contexts, errors, determinism: %d checks, %d failed\n", g_run, g_failed);
    }
    run_matrix(sanitize ? 40 : 240);
    if (!sanitize)
        run_large();
    if (!quick && !sanitize)
        run_suite();
    printf("worst passing errors: out %.2g of its tolerance, state %.2g, capture %.2g\n", worst_out, worst_state,
           worst_cap);
    printf("%s: %d checks, %d failed, %.1f s\n", g_failed ? "FAIL" : "PASS", g_run, g_failed, now() - t0);
    return g_failed ? 1 : 0;
}
