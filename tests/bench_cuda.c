/*
 * bench_cuda — times the CUDA backend on the Qwen3.6-35B-A3B layer (Hk=16, Hv=32, Dk=Dv=128; bf16
 * q, k, v and output, f32 g and beta, f32 state [slots, Hv, Dv, Dk]) for docs/PERF.md "CUDA, H200".
 *
 * Each case: `calls` gdn_forward calls, each on its own state pool (rotating over >= 256 MiB of
 * state, so the state comes from HBM as it does across a model's layers; "warm" cases: 64 calls on
 * one pool, L2-resident when it fits), are captured into one CUDA graph; after warm-up replays, every replay is timed with CUDA
 * events; the median and minimum per call are printed. State traffic = the state read once and
 * written once, plus every captured state (f32, Hv*Dk*Dv*4 bytes each), over the median time.
 * Inputs are random (never zeros). Also measured: a device-to-device copy (bytes read + written).
 *
 * Usage: bench_cuda [--quick] [--rpt-sweep] [--fast-sweep] [--j-sweep] [--one B T [--slots [--identity]]] [--slope]
 *                   [--chunked]   (exit 0 when every case ran)
 * --one B T: one case (no capture, default slots); with --slots vLLM's slot arrays (the quick suite's permutation;
 * --identity: sequence n in slot n); with --chunked one chunked prefill (algo CHUNKED, the default kernels, 4 calls on
 * one pool, 20 replays; outputs not checked, so lab builds whose outputs are wrong can be timed).
 * --slope: only the per-token slope: B = 1, 8 and 64, T = 1 .. 8, no capture (the defaults, then decode through the
 * staged kernel, GDN_CUDA_FAST_LPR=216).
 * --chunked: only chunked prefill (algo CHUNKED; B=1 T = 64 .. 32768, B=8 T = 64, 128, 4096, B=64 T=4096; 4 calls
 * on one pool, 10 replays) on chunk_tc_kernel, on the two-pass kernels, on them with the state pass on wgmma and
 * with it register-sourced, the default (GDN_CUDA_CHUNK_SPLIT=0 / 1 / 2 / 3), then the token loop at B=1
 * T = 64 .. 256 and B=8 T = 64, 128 (the crossover).
 * --fast-sweep: the decode and verify cases on the general kernels (GDN_CUDA_FAST=0) and on the fast
 * path forced (GDN_CUDA_FAST=1) with 8, 16 and 32 lanes per state row (GDN_CUDA_FAST_LPR; plus 200:
 * decode through the staged kernel; 2: multi-token calls on fast_pairs_kernel, two rows per thread).
 * --j-sweep: the large-batch decode and verify cases with the fast path's CTAs walking 1, 2, 4 and 8
 * state tiles (GDN_CUDA_FAST_J), at 8 and 16 lanes per row, and 1, 2, 4 tiles on fast_pairs_kernel
 * (one item per CTA).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/rng.h"
#include "core/dtype.h"
#include "cuda/cuda_backend.h"

#define HK 16
#define HV 32
#define D 128
#define ROTATE_BYTES ((double)(256u << 20))

static gdn_rng g_rng;
static int g_slots_identity; /* --identity: slot arrays with sequence n in slot n */

static void *upload_random(size_t n, gdn_dtype t, double lo, double hi)
{
    const size_t es = gdn_dtype_size(t);
    unsigned char *h = (unsigned char *)malloc(n * es);
    if (!h)
        return NULL;
    for (size_t i = 0; i < n; i++)
        gdn_store_f32(h, t, (int64_t)i, (float)(lo + (hi - lo) * gdn_rng_uniform(&g_rng)));
    void *d = gdn_cuda_malloc(n * es);
    if (d && gdn_cuda_memcpy(d, h, n * es)) {
        gdn_cuda_free(d);
        d = NULL;
    }
    free(h);
    return d;
}

typedef struct bcase {
    const char *name;
    int64_t B, T;
    gdn_capture_mode capture;
    int slot_arrays; /* vLLM style: read/write slot arrays (and a slot table when capturing) on the device */
    int warm;        /* one pool (cache-resident when it fits) */
    int chunked;     /* algo CHUNKED, 4 calls on one pool (prefill: the state is not what the time is about) */
} bcase;

static int run(gdn_context *ctx, const bcase *bc, int reps, double copy_bw)
{
    const int64_t B = bc->B, T = bc->T;
    const double state_bytes = (double)B * HV * D * D * 4.0;
    int calls = bc->chunked ? 4 : bc->warm ? 64 : (int)(ROTATE_BYTES / state_bytes + 0.999);
    if (calls < 1)
        calls = 1;
    if (calls > 128)
        calls = 128;
    int ok = 0;
    void *q = upload_random((size_t)(B * T * HK * D), GDN_DTYPE_BF16, -1, 1);
    void *k = upload_random((size_t)(B * T * HK * D), GDN_DTYPE_BF16, -1, 1);
    void *v = upload_random((size_t)(B * T * HV * D), GDN_DTYPE_BF16, -1, 1);
    void *g = upload_random((size_t)(B * T * HV), GDN_DTYPE_F32, -0.5, -0.01);
    void *beta = upload_random((size_t)(B * T * HV), GDN_DTYPE_F32, 0.05, 0.95);
    void *out = gdn_cuda_malloc((size_t)(B * T * HV * D) * 2);
    void *cap = bc->capture == GDN_CAPTURE_DENSE ? gdn_cuda_malloc((size_t)(B * T) * HV * D * D * 4) : NULL;
    int32_t *slots_h = (int32_t *)malloc(sizeof(int32_t) * (size_t)(B * (T + 1)));
    void *slots = NULL, *cap_slots = NULL;
    const int npools = bc->warm || bc->chunked ? 1 : calls;
    void **pools = (void **)calloc((size_t)npools, sizeof *pools);
    gdn_tensors *ts = (gdn_tensors *)calloc((size_t)calls, sizeof *ts);
    if (!q || !k || !v || !g || !beta || !out || !slots_h || !pools || !ts ||
        (bc->capture == GDN_CAPTURE_DENSE && !cap)) {
        printf("%-34s B=%-4lld T=%lld: out of memory\n", bc->name, (long long)B, (long long)T);
        goto done;
    }
    /* pool slots: B sequences; with slot capture, B*T more slots for the captures (vLLM style) */
    const int64_t nslots = B + (bc->capture == GDN_CAPTURE_SLOTS ? B * T : 0);
    for (int i = 0; i < npools; i++)
        if (!(pools[i] = upload_random((size_t)(nslots * HV * D * D), GDN_DTYPE_F32, -0.1, 0.1))) {
            printf("%-34s: out of memory (pools)\n", bc->name);
            goto done;
        }
    if (bc->slot_arrays) {
        for (int64_t n = 0; n < B; n++) /* a permutation: sequence n in slot (n * 7) % B ... */
            slots_h[n] = (int32_t)((n * 7 + 3) % B);
        if (B % 7 == 0 || g_slots_identity)
            for (int64_t n = 0; n < B; n++)
                slots_h[n] = (int32_t)n;
        slots = gdn_cuda_malloc(sizeof(int32_t) * (size_t)B);
        if (!slots || gdn_cuda_memcpy(slots, slots_h, sizeof(int32_t) * (size_t)B))
            goto done;
        if (bc->capture == GDN_CAPTURE_SLOTS) {
            for (int64_t i = 0; i < B * T; i++)
                slots_h[i] = (int32_t)(B + i);
            cap_slots = gdn_cuda_malloc(sizeof(int32_t) * (size_t)(B * T));
            if (!cap_slots || gdn_cuda_memcpy(cap_slots, slots_h, sizeof(int32_t) * (size_t)(B * T)))
                goto done;
        }
    }
    gdn_problem p;
    memset(&p, 0, sizeof p);
    p.num_k_heads = HK;
    p.num_v_heads = HV;
    p.k_dim = p.v_dim = D;
    p.qk_l2norm = 1;
    p.dtype = p.out_dtype = GDN_DTYPE_BF16;
    p.algo = bc->chunked ? GDN_ALGO_CHUNKED : GDN_ALGO_RECURRENT;
    gdn_batch b;
    memset(&b, 0, sizeof b);
    b.batch_size = B;
    b.seq_len = T;
    {
        const int64_t sq[4] = {B, T, HK, D}, sv[4] = {B, T, HV, D}, sg[3] = {B, T, HV};
        const int64_t sp[4] = {nslots, HV, D, D}, sc[5] = {B, T, HV, D, D};
        for (int i = 0; i < calls; i++) {
            gdn_tensors *t = &ts[i];
            t->q = gdn_tensor_contiguous(q, 4, sq);
            t->k = gdn_tensor_contiguous(k, 4, sq);
            t->v = gdn_tensor_contiguous(v, 4, sv);
            t->g = gdn_tensor_contiguous(g, 3, sg);
            t->beta = gdn_tensor_contiguous(beta, 3, sg);
            t->out = gdn_tensor_contiguous(out, 4, sv);
            t->state.pool = gdn_tensor_contiguous(pools[i % npools], 4, sp);
            t->state.read_slots = (const int32_t *)slots;
            t->state.write_slots = (const int32_t *)slots;
            t->capture.mode = bc->capture;
            if (bc->capture == GDN_CAPTURE_DENSE)
                t->capture.states = gdn_tensor_contiguous(cap, 5, sc);
            else if (bc->capture == GDN_CAPTURE_SLOTS) {
                t->capture.states = t->state.pool;
                t->capture.slots = (const int32_t *)cap_slots;
            }
        }
    }
    double med = 0, mn = 0;
    char err[512];
    gdn_status st = gdn_cuda_time_forward(ctx, &p, &b, ts, calls, 20, reps, 1, &med, &mn, err, sizeof err);
    if (st != GDN_STATUS_SUCCESS) {
        printf("%-34s B=%-4lld T=%lld: %s: %s\n", bc->name, (long long)B, (long long)T, gdn_status_string(st), err);
        goto done;
    }
    {
        const int caps = bc->capture != GDN_CAPTURE_NONE ? (int)T : 0;
        const double traffic = state_bytes * (2.0 + caps);
        const double tbs = traffic / (med * 1e-6) / 1e12;
        printf("%-34s B=%-4lld T=%lld calls=%-3d median %9.2f us  min %9.2f us  state traffic %7.1f MiB  %5.2f TB/s"
               "  (%5.1f%% of copy)\n",
               bc->name, (long long)B, (long long)T, calls, med, mn, traffic / (1 << 20), tbs,
               100.0 * tbs * 1e12 / copy_bw);
        ok = 1;
    }
done:
    gdn_cuda_free(q);
    gdn_cuda_free(k);
    gdn_cuda_free(v);
    gdn_cuda_free(g);
    gdn_cuda_free(beta);
    gdn_cuda_free(out);
    gdn_cuda_free(cap);
    gdn_cuda_free(slots);
    gdn_cuda_free(cap_slots);
    for (int i = 0; pools && i < npools; i++)
        gdn_cuda_free(pools[i]);
    free(pools);
    free(ts);
    free(slots_h);
    return ok;
}

static gdn_context *make_ctx(void *stream)
{
    gdn_context_desc d;
    gdn_context *ctx = NULL;
    memset(&d, 0, sizeof d);
    d.backend = GDN_BACKEND_CUDA;
    d.stream = stream;
    if (gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS) {
        printf("gdn_context_create: %s\n", gdn_last_error(NULL));
        return NULL;
    }
    return ctx;
}

/* Every case of cs[0 .. n) on a context made now (so the environment's tuning settings apply): how many
   did not run, or -1 without a context. */
static int run_all(void *stream, const bcase *cs, size_t n, int reps, double copy_bw)
{
    gdn_context *ctx = make_ctx(stream);
    if (!ctx)
        return -1;
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !run(ctx, &cs[i], reps, copy_bw);
    gdn_context_destroy(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    int quick = 0, sweep = 0, fast_sweep = 0, j_sweep = 0, slope = 0, chunked = 0, one_slots = 0;
    long long oneB = 0, oneT = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* a row as soon as it is measured (a run cut short shows where it was) */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--one") && i + 2 < argc) { /* one case, 20 replays (ncu: -c 1) */
            oneB = atoll(argv[i + 1]);
            oneT = atoll(argv[i + 2]);
            i += 2;
        }
        else if (!strcmp(argv[i], "--slots")) /* --one with vLLM's slot arrays (a permutation of the pool) */
            one_slots = 1;
        else if (!strcmp(argv[i], "--identity")) /* the slot arrays sequence n -> slot n */
            g_slots_identity = 1;
        else if (!strcmp(argv[i], "--slope"))
            slope = 1;
        else if (!strcmp(argv[i], "--chunked"))
            chunked = 1;
        else if (!strcmp(argv[i], "--rpt-sweep"))
            sweep = 1;
        else if (!strcmp(argv[i], "--j-sweep"))
            j_sweep = 1;
        else if (!strcmp(argv[i], "--fast-sweep"))
            fast_sweep = 1;
    }
    char name[256];
    if (gdn_cuda_device_count(name, sizeof name) == 0) {
        printf("skipped: no CUDA device\n");
        return 0;
    }
    gdn_rng_seed(&g_rng, 2026);
    const double copy_bw = gdn_cuda_copy_bandwidth((size_t)1 << 30, 20);
    printf("device 0: %s\n", name);
    printf("device-to-device copy of 1 GiB: %.2f TB/s (read + written, median of 20); of 128 MiB (a B=64 state): "
           "%.2f TB/s, of 512 MiB (B=256): %.2f TB/s (8 and 2 copies back to back per timing)\n",
           copy_bw / 1e12, gdn_cuda_copy_bandwidth((size_t)128 << 20, 20) / 1e12,
           gdn_cuda_copy_bandwidth((size_t)512 << 20, 20) / 1e12);
    printf("launch floor: graph of 128 empty kernels (256 blocks, waiting as gdn's do): %.2f us per call with "
           "programmatic dependent launches, %.2f us without\n",
           gdn_cuda_launch_floor_us(128, 50, 1, 0), gdn_cuda_launch_floor_us(128, 50, 0, 0));
    printf("memory round trip of a decode call at B=1 (512 blocks load and store 32 bytes per thread of one 2 MiB "
           "buffer after the wait): %.2f us per call; prefetched into L2 before the wait %.2f us; with a "
           "4-round shuffle chain %.2f us; prefetched, through one bulk copy each way per CTA %.2f us\n",
           gdn_cuda_launch_floor_us(128, 50, 1, 1), gdn_cuda_launch_floor_us(128, 50, 1, 2),
           gdn_cuda_launch_floor_us(128, 50, 1, 3), gdn_cuda_launch_floor_us(128, 50, 1, 4));
    printf("layer: Hk=%d Hv=%d Dk=Dv=%d, bf16 q/k/v/out, f32 g/beta, f32 state; CUDA graph of `pools` calls, "
           "median per call\n", HK, HV, D);
    void *stream = gdn_cuda_stream_create();
    gdn_context *ctx = make_ctx(stream);
    if (!stream || !ctx)
        return 1;
    const int reps = quick ? 30 : 200;
    if (oneB > 0 && oneT > 0) {
        const bcase one = {chunked ? "one, chunked" : "one", oneB, oneT, GDN_CAPTURE_NONE, one_slots, 0, chunked};
        const int ok = run(ctx, &one, 20, copy_bw);
        gdn_context_destroy(ctx);
        gdn_cuda_stream_destroy(stream);
        return ok ? 0 : 1;
    }
    if (chunked) { /* the chunked prefill: one-pass kernel, the two passes (chunked_split.cuh), the two passes
                      with the state pass on wgmma (chunked_wg.cuh), with it register-sourced (chunked_rs.cuh) */
        gdn_context_destroy(ctx);
        static const bcase CH[] = {{"prefill, chunked", 1, 64, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 1, 128, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 1, 256, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 1, 512, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 1, 4096, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 1, 16384, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 1, 32768, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 8, 4096, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 64, 4096, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 8, 64, GDN_CAPTURE_NONE, 0, 0, 1},
                                   {"prefill, chunked", 8, 128, GDN_CAPTURE_NONE, 0, 0, 1}};
        /* the token loop at the short lengths, for the crossover */
        static const bcase TL[] = {{"prefill, token loop", 1, 64, GDN_CAPTURE_NONE, 0, 1, 0},
                                   {"prefill, token loop", 1, 128, GDN_CAPTURE_NONE, 0, 1, 0},
                                   {"prefill, token loop", 1, 256, GDN_CAPTURE_NONE, 0, 1, 0},
                                   {"prefill, token loop", 8, 64, GDN_CAPTURE_NONE, 0, 1, 0},
                                   {"prefill, token loop", 8, 128, GDN_CAPTURE_NONE, 0, 1, 0}};
        int bad = 0;
        for (int split = 0; split < 4; split++) {
            const char *sv[4] = {"0", "1", "2", "3"};
            setenv("GDN_CUDA_CHUNK_SPLIT", sv[split], 1);
            printf("-- GDN_CUDA_CHUNK_SPLIT=%d\n", split);
            bad += run_all(stream, CH, sizeof CH / sizeof CH[0], 10, copy_bw);
        }
        bad += run_all(stream, TL, sizeof TL / sizeof TL[0], 10, copy_bw);
        gdn_cuda_stream_destroy(stream);
        return bad ? 1 : 0;
    }
    if (slope) { /* the per-token slope of multi-token calls */
        int bad = 0;
        static const int64_t SB[3] = {1, 8, 64};
        for (int b = 0; b < 3; b++)
            for (int t = 1; t <= 8; t++) {
                const bcase c = {"slope", SB[b], t, GDN_CAPTURE_NONE, 0, 0, 0};
                bad += !run(ctx, &c, reps, copy_bw);
            }
        gdn_context_destroy(ctx);
        setenv("GDN_CUDA_FAST_LPR", "216", 1);
        printf("-- GDN_CUDA_FAST_LPR=216 (decode through the staged kernel)\n");
        static const bcase ST[] = {{"slope", 1, 1, GDN_CAPTURE_NONE, 0, 0, 0}, {"slope", 64, 1, GDN_CAPTURE_NONE, 0, 0, 0}};
        bad += run_all(stream, ST, 2, reps, copy_bw);
        unsetenv("GDN_CUDA_FAST_LPR");
        gdn_cuda_stream_destroy(stream);
        return bad ? 1 : 0;
    }
    static const bcase CASES[] = {
        {"decode", 1, 1, GDN_CAPTURE_NONE, 0, 0, 0},
        {"decode (warm: one pool)", 1, 1, GDN_CAPTURE_NONE, 0, 1, 0},
        {"decode (warm: one pool)", 8, 1, GDN_CAPTURE_NONE, 0, 1, 0},
        {"decode", 8, 1, GDN_CAPTURE_NONE, 0, 0, 0},
        {"decode", 64, 1, GDN_CAPTURE_NONE, 0, 0, 0},
        {"decode", 256, 1, GDN_CAPTURE_NONE, 0, 0, 0},
        {"decode, slot arrays (vLLM)", 1, 1, GDN_CAPTURE_NONE, 1, 0, 0},
        {"decode, slot arrays (vLLM)", 64, 1, GDN_CAPTURE_NONE, 1, 0, 0},
        {"decode, slot arrays (vLLM)", 256, 1, GDN_CAPTURE_NONE, 1, 0, 0},
        {"verify, no capture", 1, 4, GDN_CAPTURE_NONE, 0, 0, 0},
        {"verify, no capture", 8, 4, GDN_CAPTURE_NONE, 0, 0, 0},
        {"verify, no capture", 64, 4, GDN_CAPTURE_NONE, 0, 0, 0},
        {"verify, no capture", 256, 4, GDN_CAPTURE_NONE, 0, 0, 0},
        {"verify, dense capture", 1, 4, GDN_CAPTURE_DENSE, 0, 0, 0},
        {"verify, dense capture", 64, 4, GDN_CAPTURE_DENSE, 0, 0, 0},
        {"verify, slot capture (vLLM)", 1, 4, GDN_CAPTURE_SLOTS, 1, 0, 0},
        {"verify, slot capture (vLLM)", 64, 4, GDN_CAPTURE_SLOTS, 1, 0, 0},
        {"prefill", 1, 64, GDN_CAPTURE_NONE, 0, 0, 0},
        {"prefill", 1, 512, GDN_CAPTURE_NONE, 0, 0, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        bad += !run(ctx, &CASES[i], reps, copy_bw);
    gdn_context_destroy(ctx);
    if (sweep) {
        /* rows per lane (GDN_CUDA_RPT, read at context creation): items of 4 or 8 (the default at
           large batch) state rows per warp */
        static const bcase SW[] = {
            {"decode", 1, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 8, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 64, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 256, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 1, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 64, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, dense capture", 64, 4, GDN_CAPTURE_DENSE, 0, 0, 0},
        };
        for (int rpt = 1; rpt <= 2; rpt++) {
            char env[8];
            snprintf(env, sizeof env, "%d", rpt);
            setenv("GDN_CUDA_RPT", env, 1);
            printf("-- GDN_CUDA_RPT=%d\n", rpt);
            {
                const int nb = run_all(stream, SW, sizeof SW / sizeof SW[0], reps, copy_bw);
                if (nb < 0)
                    return 1;
                bad += nb;
            }
        }
        unsetenv("GDN_CUDA_RPT");
        /* without programmatic dependent launches (plain stream order between kernels) */
        static const bcase NP[] = {
            {"decode", 1, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 64, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode, slot arrays (vLLM)", 1, 1, GDN_CAPTURE_NONE, 1, 0, 0},
            {"verify, no capture", 1, 4, GDN_CAPTURE_NONE, 0, 0, 0},
        };
        setenv("GDN_CUDA_PDL", "0", 1);
        printf("-- GDN_CUDA_PDL=0\n");
        {
            const int nb = run_all(stream, NP, sizeof NP / sizeof NP[0], reps, copy_bw);
            if (nb < 0)
                return 1;
            bad += nb;
        }
        unsetenv("GDN_CUDA_PDL");
    }
    if (fast_sweep) {
        static const bcase FS[] = {
            {"decode", 1, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 8, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 64, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 256, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 1, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 8, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 64, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 256, 4, GDN_CAPTURE_NONE, 0, 0, 0},
        };
        /* lanes per row 8, 16, 32; plus 200: decode through the staged kernel (fast_kernel) rather
           than fast1_kernel (multi-token calls always take fast_kernel) */
        static const char *MODES[][2] = {{"0", "0"},  {"1", "208"}, {"1", "216"}, {"1", "8"},
                                         {"1", "16"}, {"1", "32"},  {"1", "2"}};
        for (size_t m = 0; m < sizeof MODES / sizeof MODES[0]; m++) {
            setenv("GDN_CUDA_FAST", MODES[m][0], 1);
            setenv("GDN_CUDA_FAST_LPR", MODES[m][1], 1);
            printf("-- GDN_CUDA_FAST=%s GDN_CUDA_FAST_LPR=%s\n", MODES[m][0], MODES[m][1]);
            {
                const int nb = run_all(stream, FS, sizeof FS / sizeof FS[0], quick ? 30 : 100, copy_bw);
                if (nb < 0)
                    return 1;
                bad += nb;
            }
        }
        unsetenv("GDN_CUDA_FAST");
        unsetenv("GDN_CUDA_FAST_LPR");
    }
    if (j_sweep) {
        static const bcase JS[] = {
            {"decode", 8, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 64, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"decode", 256, 1, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 8, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 16, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 32, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 64, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, no capture", 256, 4, GDN_CAPTURE_NONE, 0, 0, 0},
            {"verify, dense capture", 64, 4, GDN_CAPTURE_DENSE, 0, 0, 0},
        };
        static const char *MODES[][2] = {{"1", "8"},  {"2", "8"},  {"4", "8"},  {"8", "8"}, {"1", "16"}, {"2", "16"},
                                         {"4", "16"}, {"8", "16"}, {"1", "2"},  {"2", "2"}, {"4", "2"}};
        setenv("GDN_CUDA_FAST", "1", 1);
        for (size_t m = 0; m < sizeof MODES / sizeof MODES[0]; m++) {
            setenv("GDN_CUDA_FAST_J", MODES[m][0], 1);
            setenv("GDN_CUDA_FAST_LPR", MODES[m][1], 1);
            printf("-- GDN_CUDA_FAST_J=%s GDN_CUDA_FAST_LPR=%s\n", MODES[m][0], MODES[m][1]);
            {
                const int nb = run_all(stream, JS, sizeof JS / sizeof JS[0], quick ? 30 : 100, copy_bw);
                if (nb < 0)
                    return 1;
                bad += nb;
            }
        }
        unsetenv("GDN_CUDA_FAST");
        unsetenv("GDN_CUDA_FAST_J");
        unsetenv("GDN_CUDA_FAST_LPR");
    }
    gdn_cuda_stream_destroy(stream);
    printf("%s\n", bad ? "FAIL: some cases did not run" : "done");
    return bad ? 1 : 0;
}
