/*
 * test_threads — results are bitwise identical for any thread count.
 *
 * For every ISA this CPU supports and several shapes (among them B = 1 with one or two value
 * heads, where the driver must split Dv across threads; the chunked algorithm forced on one head,
 * whose Dv tiles then differ in width by thread count; and the Qwen3.6 decode shape), one built
 * case is run with 1 thread and then with 2, 3, 7 and "all cores" threads; every byte of out, the
 * state pool and the capture buffer (padding and guards included) must equal the 1-thread run.
 * The 1-thread run itself is checked against the reference once (gdn_check_run).
 * Also: distinct contexts used at the same time from two threads are independent (the header's
 * thread-safety contract): each thread's results equal a run made alone.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"

static gdn_check_case base(int hk, int hv, int dk, int dv, int64_t B, int64_t T)
{
    gdn_check_case c;
    memset(&c, 0, sizeof c);
    c.problem.num_k_heads = hk;
    c.problem.num_v_heads = hv;
    c.problem.k_dim = dk;
    c.problem.v_dim = dv;
    c.B = B;
    c.T = T;
    c.pool = GDN_CHECK_POOL_INPLACE;
    return c;
}

static int n_shapes(void)
{
    return 9;
}

static gdn_check_case shape(int i)
{
    gdn_check_case c;
    switch (i) {
    case 0: /* decode, one head: Dv tiles are the only parallelism */
        c = base(1, 1, 128, 128, 1, 1);
        break;
    case 1: /* prefill across token blocks, two heads, moving pool, slot capture */
        c = base(1, 2, 128, 128, 1, 130);
        c.pool = GDN_CHECK_POOL_MOVE;
        c.capture = GDN_CAPTURE_SLOTS;
        c.problem.state_layout = GDN_STATE_KV;
        break;
    case 2: /* small batch, dense capture, strided */
        c = base(2, 4, 64, 128, 3, 17);
        c.capture = GDN_CAPTURE_DENSE;
        c.strided = 1;
        c.problem.dtype = GDN_DTYPE_BF16;
        c.problem.out_dtype = GDN_DTYPE_BF16;
        break;
    case 3: /* packed with empty sequences, scalar-fallback dims, raw gate */
        c = base(2, 6, 40, 24, 1, 0);
        gdn_check_set_packed(&c, 5, (const int64_t[]){5, 0, 70, 3, 0});
        c.problem.gate = GDN_GATE_RAW;
        c.pool = GDN_CHECK_POOL_MOVE;
        break;
    case 4: /* Qwen3.6 decode shape */
        c = base(16, 32, 128, 128, 2, 1);
        c.problem.dtype = GDN_DTYPE_BF16;
        break;
    case 5: /* 256-wide head, odd Dv, one sequence */
        c = base(1, 1, 256, 200, 1, 9);
        c.decay = GDN_CHECK_DECAY_FAST;
        c.problem.head_map = GDN_HEADS_TILED;
        break;
    case 6: /* verify with capture into the pool, no output (replay-like) */
        c = base(2, 4, 128, 64, 2, 4);
        c.pool = GDN_CHECK_POOL_MOVE;
        c.capture = GDN_CAPTURE_SLOTS;
        c.capture_in_pool = 1;
        c.no_output = 1;
        break;
    case 8: /* the chunked algorithm forced, one head: Dv tiles of 32 or 16 rows by thread count */
        c = base(1, 1, 128, 128, 1, 100);
        c.problem.algo = GDN_ALGO_CHUNKED;
        c.problem.qk_l2norm = 1;
        c.pool = GDN_CHECK_POOL_MOVE;
        break;
    default: /* f16, in-kernel L2 norm, permuted views */
        c = base(3, 9, 48, 80, 2, 33);
        c.problem.dtype = GDN_DTYPE_F16;
        c.problem.qk_l2norm = 1;
        c.strided = 2;
        c.decay = GDN_CHECK_DECAY_SLOW;
        break;
    }
    c.seed = 0x7468726561647300ull + (uint64_t)i;
    return c;
}

/* A context with this ISA and thread count (NULL on failure). */
static gdn_status context(gdn_isa isa, int threads, gdn_context **ctx)
{
    gdn_context_desc d;
    memset(&d, 0, sizeof d);
    d.isa = isa;
    d.num_threads = threads;
    *ctx = NULL;
    return gdn_context_create(&d, ctx);
}

/* Copies of the buffers a run writes (out, state pool, capture; NULL where the case has none). */
static void snapshot(const gdn_check_instance *in, void *copy[3], size_t bytes[3])
{
    for (int b = 0; b < 3; b++) {
        const void *data;
        gdn_check_instance_buffer(in, b, &data, &bytes[b]);
        copy[b] = data ? malloc(bytes[b]) : NULL;
        if (copy[b])
            memcpy(copy[b], data, bytes[b]);
    }
}

/* ---- two contexts used concurrently from two threads ------------------------------------------ */
typedef struct worker {
    gdn_check_case c;
    gdn_check_instance *in;
    void *alone[3];
    size_t bytes[3];
    int ok;
} worker;

static void *work(void *arg)
{
    worker *w = (worker *)arg;
    gdn_context *ctx = NULL;
    w->ok = context(w->c.isa, 1, &ctx) == GDN_STATUS_SUCCESS;
    for (int rep = 0; rep < 20 && w->ok; rep++) {
        w->ok = gdn_check_instance_forward(w->in, ctx) == GDN_STATUS_SUCCESS;
        for (int b = 0; b < 3 && w->ok; b++) {
            const void *data;
            size_t nb;
            gdn_check_instance_buffer(w->in, b, &data, &nb);
            w->ok = nb == w->bytes[b] && (!nb || memcmp(data, w->alone[b], nb) == 0);
        }
        /* an invalid call on this context must not disturb the other one */
        gdn_problem bad;
        memset(&bad, 0, sizeof bad);
        if (w->ok)
            w->ok = gdn_forward(ctx, &bad, NULL, NULL) == GDN_STATUS_INVALID_ARGUMENT && *gdn_last_error(ctx);
    }
    gdn_context_destroy(ctx);
    return NULL;
}

static int concurrent_contexts(gdn_isa isa)
{
    worker w[2];
    int failed = 0;
    for (int i = 0; i < 2; i++) {
        char err[256];
        memset(&w[i], 0, sizeof w[i]);
        w[i].c = shape(i == 0 ? 1 : 3);
        w[i].c.isa = isa;
        w[i].in = gdn_check_instance_create(&w[i].c, err, sizeof err);
        gdn_context *ctx = NULL;
        if (!w[i].in || context(isa, 1, &ctx) != GDN_STATUS_SUCCESS ||
            gdn_check_instance_forward(w[i].in, ctx) != GDN_STATUS_SUCCESS) {
            printf("FAIL concurrent contexts isa=%s: setup\n", gdn_isa_name(isa));
            gdn_context_destroy(ctx);
            gdn_check_instance_destroy(w[i].in);
            w[i].in = NULL;
            failed = 1;
            continue;
        }
        gdn_context_destroy(ctx);
        snapshot(w[i].in, w[i].alone, w[i].bytes);
    }
    pthread_t th[2];
    int started[2] = {0, 0};
    for (int i = 0; i < 2 && !failed; i++)
        started[i] = pthread_create(&th[i], NULL, work, &w[i]) == 0;
    for (int i = 0; i < 2; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        if (!failed && (!started[i] || !w[i].ok)) {
            printf("FAIL concurrent contexts isa=%s: thread %d's results differ from a run made alone\n",
                   gdn_isa_name(isa), i);
            failed = 1;
        }
        for (int b = 0; b < 3; b++)
            free(w[i].alone[b]);
        gdn_check_instance_destroy(w[i].in);
    }
    return failed;
}

int main(void)
{
    static const gdn_isa ISAS[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    static const int THREADS[] = {2, 3, 7, 0};
    int failures = 0, runs = 0;
    for (int ii = 0; ii < 3; ii++) {
        const gdn_isa isa = ISAS[ii];
        if (!gdn_cpu_supports(isa)) {
            printf("SKIP isa=%s (CPU lacks it)\n", gdn_isa_name(isa));
            continue;
        }
        for (int s = 0; s < n_shapes(); s++) {
            gdn_check_case c = shape(s);
            char desc[512], err[256];
            c.isa = isa;
            c.threads = 1;
            gdn_check_describe(&c, desc, sizeof desc);

            gdn_check_result r;
            if (!gdn_check_run(&c, &r)) {
                printf("FAIL %s: 1-thread run vs reference: %s\n", desc, r.message);
                failures++;
                continue;
            }
            gdn_check_instance *in = gdn_check_instance_create(&c, err, sizeof err);
            if (!in) {
                printf("FAIL %s: build: %s\n", desc, err);
                failures++;
                continue;
            }
            void *ref[3] = {NULL, NULL, NULL};
            size_t bytes[3] = {0, 0, 0};
            gdn_context *ctx = NULL;
            gdn_status st = context(isa, 1, &ctx);
            if (st == GDN_STATUS_SUCCESS)
                st = gdn_check_instance_forward(in, ctx);
            if (st != GDN_STATUS_SUCCESS) {
                printf("FAIL %s threads=1: %s: %s\n", desc, gdn_status_string(st),
                       ctx ? gdn_last_error(ctx) : gdn_last_error(NULL));
                failures++;
            }
            if (st == GDN_STATUS_SUCCESS)
                snapshot(in, ref, bytes);
            gdn_context_destroy(ctx);
            for (int ti = 0; ti < 4 && st == GDN_STATUS_SUCCESS; ti++) {
                gdn_status st2 = context(isa, THREADS[ti], &ctx);
                if (st2 == GDN_STATUS_SUCCESS)
                    st2 = gdn_check_instance_forward(in, ctx);
                runs++;
                if (st2 != GDN_STATUS_SUCCESS) {
                    printf("FAIL %s threads=%d: %s\n", desc, THREADS[ti], gdn_status_string(st2));
                    failures++;
                } else {
                    static const char *names[3] = {"out", "state pool", "capture"};
                    for (int b = 0; b < 3; b++) {
                        const void *data;
                        size_t nb;
                        gdn_check_instance_buffer(in, b, &data, &nb);
                        if (nb != bytes[b] || (nb && memcmp(data, ref[b], nb) != 0)) {
                            size_t at = 0;
                            while (at < nb && ((const unsigned char *)data)[at] == ((unsigned char *)ref[b])[at])
                                at++;
                            printf("FAIL %s: threads=%d (context has %d) differs from threads=1 in %s at byte %zu\n",
                                   desc, THREADS[ti], gdn_context_num_threads(ctx), names[b], at);
                            failures++;
                        }
                    }
                }
                gdn_context_destroy(ctx);
            }
            for (int b = 0; b < 3; b++)
                free(ref[b]);
            gdn_check_instance_destroy(in);
        }
    }
    for (int ii = 0; ii < 3; ii++)
        if (gdn_cpu_supports(ISAS[ii]))
            failures += concurrent_contexts(ISAS[ii]);
    printf("%s: %d thread-count comparisons, %d failures\n", failures ? "FAIL" : "PASS", runs, failures);
    return failures ? 1 : 0;
}
