/*
 * test_conformance — every CPU kernel variant against the float64 reference.
 *
 * Runs the full conformance suite (gdn_check_suite, quick = 0; `test_conformance quick` runs the CI
 * matrix of `gdn check`) and first verifies that the suite covers, for every ISA this CPU
 * supports, every value the project requires: dtypes f32/bf16/f16, both head maps, the four gate
 * conventions, both state layouts, Dk/Dv 64, 128, 256 and 64/128 mixed, T in {1, 2, 15, 16, 17,
 * 63, 64, 65, 1000}, head ratios 1-4, packed batches with empty sequences, pools in place and
 * moving, dense and slotted capture (also into the state pool, with the state after each
 * sequence's last token into its own write slot), strided views, slow, fast and edge decays, bf16 and f16
 * outputs; and the same, with the chunked algorithm forced on (no capture), with T around the chunk
 * boundaries (C-1, C, C+1, 2C+1 for C = GDN_CHUNK_C, and 1000), Dk and Dv not multiples of 16,
 * 1-4 value heads per key head, and extreme decays over long sequences; on AVX-512, the same once
 * more with bf16 products (problem.precision BF16, tolerance 1e-2 on output and state, T around
 * GDN_CHUNK_C_BF16), and a check that the avx512_bf16 kernel is the one that runs where the CPU has
 * it (its table entry, and an error that shows bf16 rounding) and the f32 kernels elsewhere.
 * Prints one line per failing case and a summary; exit 0 only if everything passed.
 *
 * Usage: test_conformance [quick|full] [CASE_INDEX...]   (indices as printed in FAIL lines: rerun
 * only those cases, printing their description and result)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/check.h"
#include "core/context.h"
#include "cpu/chunked.h"
#include "cpu/cpuid.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t longest(const gdn_check_case *c)
{
    int64_t t = c->n_seqs ? 0 : c->T;
    for (int i = 0; i < c->n_seqs; i++)
        if (c->seq_lens[i] > t)
            t = c->seq_lens[i];
    return t;
}

static int has_empty(const gdn_check_case *c)
{
    for (int i = 0; i < c->n_seqs; i++)
        if (c->seq_lens[i] == 0)
            return 1;
    return 0;
}

/* Requirement i holds for case c? Returns -1 past the last requirement; name receives its name. */
static int requirement(int i, const gdn_check_case *c, char *name, size_t len)
{
    static const int64_t TS[] = {1, 2, 15, 16, 17, 63, 64, 65, 1000};
    static const char *dtn[] = {"f32", "bf16", "f16"};
    static const char *gates[] = {"log", "linear", "neglog", "raw"};
    const gdn_problem *p = &c->problem;
    int k = 0;
#define REQ(cond, ...)                            \
    do {                                          \
        if (i == k) {                             \
            snprintf(name, len, __VA_ARGS__);     \
            return (cond) ? 1 : 0;                \
        }                                         \
        k++;                                      \
    } while (0)
    for (int d = 0; d < 3; d++)
        REQ((int)p->dtype == d, "dtype=%s", dtn[d]);
    for (int d = 1; d < 3; d++)
        REQ((int)p->out_dtype == d, "out_dtype=%s", dtn[d]);
    REQ(p->gate_dtype != GDN_DTYPE_F32, "gate_dtype=dtype (16-bit)");
    REQ(p->head_map == GDN_HEADS_GROUPED, "heads=grouped");
    REQ(p->head_map == GDN_HEADS_TILED, "heads=tiled");
    for (int g = 0; g < 4; g++)
        REQ((int)p->gate == g, "gate=%s", gates[g]);
    REQ(p->state_layout == GDN_STATE_VK, "layout=vk");
    REQ(p->state_layout == GDN_STATE_KV, "layout=kv");
    REQ(p->qk_l2norm, "qk_l2norm");
    REQ(p->k_dim == 64 && p->v_dim == 64, "Dk=Dv=64");
    REQ(p->k_dim == 128 && p->v_dim == 128, "Dk=Dv=128");
    REQ(p->k_dim == 256 && p->v_dim == 256, "Dk=Dv=256");
    REQ(p->k_dim == 64 && p->v_dim == 128, "Dk=64 Dv=128");
    REQ(p->k_dim == 128 && p->v_dim == 64, "Dk=128 Dv=64");
    REQ(p->k_dim % 16 != 0, "Dk not a multiple of 16 (scalar fallback)");
    for (int t = 0; t < 9; t++)
        REQ(longest(c) == TS[t], "T=%lld", (long long)TS[t]);
    for (int r = 1; r <= 4; r++)
        REQ(p->num_v_heads == r * p->num_k_heads, "Hv/Hk=%d", r);
    REQ(c->n_seqs > 0 && has_empty(c), "packed with an empty sequence");
    REQ(c->n_seqs == 0 && c->B > 1, "dense B>1");
    REQ(c->pool == GDN_CHECK_POOL_INPLACE, "pool in place");
    REQ(c->pool == GDN_CHECK_POOL_MOVE, "pool moving");
    REQ(c->pool == GDN_CHECK_POOL_NONE, "no pool");
    REQ(c->capture == GDN_CAPTURE_DENSE, "capture dense");
    REQ(c->capture == GDN_CAPTURE_SLOTS, "capture slots");
    REQ(c->capture == GDN_CAPTURE_SLOTS && c->capture_in_pool && c->pool != GDN_CHECK_POOL_NONE,
        "capture slots in the state pool");
    REQ(c->capture == GDN_CAPTURE_SLOTS && c->capture_in_pool && c->capture_last_in_write_slot &&
            c->pool != GDN_CHECK_POOL_NONE,
        "capture slots in the state pool, the last token's into the write slot");
    for (int s = 1; s <= GDN_CHECK_STRIDED_MAX; s++)
        REQ(c->strided == s, "strided=%d", s);
    REQ(c->decay == GDN_CHECK_DECAY_SLOW, "slow decay");
    REQ(c->decay == GDN_CHECK_DECAY_FAST, "fast decay");
    REQ(c->decay == GDN_CHECK_DECAY_EDGE, "edge decays (exactly 1, 0, |g| <= 1e-7)");
    REQ(c->decay == GDN_CHECK_DECAY_EDGE && p->gate == GDN_GATE_LINEAR, "linear gate with decays exactly 0 and 1");
    REQ(c->no_output, "no output (replay)");
    REQ(c->threads != 1, "several threads");
    /* the chunked algorithm (forced on, no capture: capture always runs the token loop) */
    const int ch = p->algo == GDN_ALGO_CHUNKED && c->capture == GDN_CAPTURE_NONE;
    const int64_t CC = GDN_CHUNK_C, CTS[] = {0, CC - 1, CC, CC + 1, 2 * CC + 1, 1000};
    for (int d = 0; d < 3; d++)
        REQ(ch && (int)p->dtype == d, "chunked: dtype=%s", dtn[d]);
    for (int d = 1; d < 3; d++)
        REQ(ch && (int)p->out_dtype == d, "chunked: out_dtype=%s", dtn[d]);
    REQ(ch && p->gate_dtype != GDN_DTYPE_F32, "chunked: gate_dtype=dtype (16-bit)");
    REQ(ch && p->head_map == GDN_HEADS_GROUPED, "chunked: heads=grouped");
    REQ(ch && p->head_map == GDN_HEADS_TILED, "chunked: heads=tiled");
    for (int g = 0; g < 4; g++)
        REQ(ch && (int)p->gate == g, "chunked: gate=%s", gates[g]);
    REQ(ch && p->state_layout == GDN_STATE_VK, "chunked: layout=vk");
    REQ(ch && p->state_layout == GDN_STATE_KV, "chunked: layout=kv");
    REQ(ch && p->qk_l2norm, "chunked: qk_l2norm");
    REQ(ch && !p->qk_l2norm, "chunked: no qk_l2norm");
    REQ(ch && p->k_dim == 64 && p->v_dim == 64, "chunked: Dk=Dv=64");
    REQ(ch && p->k_dim == 128 && p->v_dim == 128, "chunked: Dk=Dv=128");
    REQ(ch && p->k_dim == 256 && p->v_dim == 256, "chunked: Dk=Dv=256");
    REQ(ch && p->k_dim != p->v_dim, "chunked: Dk != Dv");
    REQ(ch && p->k_dim % 16 != 0, "chunked: Dk not a multiple of 16");
    REQ(ch && p->v_dim % 16 != 0, "chunked: Dv not a multiple of 16 (scalar value kernel)");
    for (int t = 0; t < 6; t++)
        REQ(ch && longest(c) == CTS[t], "chunked: T=%lld (chunk %lld)", (long long)CTS[t], (long long)CC);
    for (int r = 1; r <= 4; r++)
        REQ(ch && p->num_v_heads == r * p->num_k_heads, "chunked: Hv/Hk=%d", r);
    REQ(ch && c->n_seqs > 0 && has_empty(c), "chunked: packed with an empty sequence");
    REQ(ch && c->n_seqs == 0 && c->B > 1, "chunked: dense B>1");
    REQ(ch && c->pool == GDN_CHECK_POOL_INPLACE, "chunked: pool in place");
    REQ(ch && c->pool == GDN_CHECK_POOL_MOVE, "chunked: pool moving");
    REQ(ch && c->pool == GDN_CHECK_POOL_NONE, "chunked: no pool");
    for (int s = 1; s <= GDN_CHECK_STRIDED_MAX; s++)
        REQ(ch && c->strided == s, "chunked: strided=%d", s);
    REQ(ch && c->decay == GDN_CHECK_DECAY_SLOW, "chunked: slow decay");
    REQ(ch && c->decay == GDN_CHECK_DECAY_FAST, "chunked: fast decay");
    REQ(ch && c->decay == GDN_CHECK_DECAY_EDGE && longest(c) >= 1000, "chunked: edge decays, T >= 1000");
    REQ(ch && c->decay == GDN_CHECK_DECAY_EDGE && p->gate == GDN_GATE_LINEAR,
        "chunked: linear gate with decays exactly 0 and 1");
    REQ(ch && c->decay != GDN_CHECK_DECAY_MODEL && longest(c) >= 1000, "chunked: extreme decay, T >= 1000");
    REQ(ch && c->no_output, "chunked: no output (replay)");
    REQ(ch && c->threads != 1, "chunked: several threads");
    REQ(p->algo == GDN_ALGO_CHUNKED && c->capture != GDN_CAPTURE_NONE, "chunked asked with capture (token loop)");
#undef REQ
    return -1;
}

/* Requirement i of the bf16-product block (problem.precision BF16, chunked), on AVX-512. */
static int requirement_bf16(int i, const gdn_check_case *c, char *name, size_t len)
{
    static const char *dtn[] = {"f32", "bf16", "f16"};
    static const char *gates[] = {"log", "linear", "neglog", "raw"};
    const gdn_problem *p = &c->problem;
    const int b = p->precision == GDN_PRECISION_BF16 && p->algo == GDN_ALGO_CHUNKED && c->capture == GDN_CAPTURE_NONE;
    const int64_t CB = GDN_CHUNK_C_BF16, BTS[] = {0, CB - 1, CB, CB + 1, 2 * CB + 1, 1000};
    int k = 0;
#define REQ(cond, ...)                            \
    do {                                          \
        if (i == k) {                             \
            snprintf(name, len, __VA_ARGS__);     \
            return (cond) ? 1 : 0;                \
        }                                         \
        k++;                                      \
    } while (0)
    for (int d = 0; d < 3; d++)
        REQ(b && (int)p->dtype == d, "bf16 products: dtype=%s", dtn[d]);
    for (int d = 1; d < 3; d++)
        REQ(b && (int)p->out_dtype == d, "bf16 products: out_dtype=%s", dtn[d]);
    REQ(b && p->head_map == GDN_HEADS_GROUPED, "bf16 products: heads=grouped");
    REQ(b && p->head_map == GDN_HEADS_TILED, "bf16 products: heads=tiled");
    for (int g = 0; g < 4; g++)
        REQ(b && (int)p->gate == g, "bf16 products: gate=%s", gates[g]);
    REQ(b && p->state_layout == GDN_STATE_VK, "bf16 products: layout=vk");
    REQ(b && p->state_layout == GDN_STATE_KV, "bf16 products: layout=kv");
    REQ(b && p->qk_l2norm, "bf16 products: qk_l2norm");
    REQ(b && !p->qk_l2norm, "bf16 products: no qk_l2norm");
    REQ(b && p->k_dim == 64 && p->v_dim == 64, "bf16 products: Dk=Dv=64");
    REQ(b && p->k_dim == 128 && p->v_dim == 128, "bf16 products: Dk=Dv=128");
    REQ(b && p->k_dim != p->v_dim, "bf16 products: Dk != Dv");
    REQ(b && p->k_dim % 16 != 0 && p->k_dim >= GDN_CHUNK_BF16_MIN_DK && p->v_dim % 16 == 0,
        "bf16 products: Dk >= 16 not a multiple of 16 (bf16 kernel, odd inner size)");
    REQ(b && p->k_dim < GDN_CHUNK_BF16_MIN_DK, "bf16 products: Dk < 16 (f32 kernels)");
    REQ(b && p->v_dim % 16 != 0, "bf16 products: Dv not a multiple of 16 (scalar f32 kernel)");
    for (int t = 0; t < 6; t++)
        REQ(b && longest(c) == BTS[t], "bf16 products: T=%lld (chunk %lld)", (long long)BTS[t], (long long)CB);
    for (int r = 1; r <= 4; r++)
        REQ(b && p->num_v_heads == r * p->num_k_heads, "bf16 products: Hv/Hk=%d", r);
    REQ(b && c->n_seqs > 0 && has_empty(c), "bf16 products: packed with an empty sequence");
    REQ(b && c->n_seqs == 0 && c->B > 1, "bf16 products: dense B>1");
    REQ(b && c->pool == GDN_CHECK_POOL_MOVE, "bf16 products: pool moving");
    REQ(b && c->pool == GDN_CHECK_POOL_NONE, "bf16 products: no pool");
    for (int s = 1; s <= GDN_CHECK_STRIDED_MAX; s++)
        REQ(b && c->strided == s, "bf16 products: strided=%d", s);
    REQ(b && c->decay == GDN_CHECK_DECAY_SLOW && longest(c) >= 1000, "bf16 products: slow decay, T >= 1000");
    REQ(b && c->decay == GDN_CHECK_DECAY_FAST && longest(c) >= 1000, "bf16 products: fast decay, T >= 1000");
    REQ(b && c->decay == GDN_CHECK_DECAY_EDGE && longest(c) >= 1000, "bf16 products: edge decays, T >= 1000");
    REQ(b && c->no_output, "bf16 products: no output (replay)");
    REQ(b && c->threads != 1, "bf16 products: several threads");
#undef REQ
    return -1;
}

/* With problem.precision BF16, the bf16 kernel must be the one that runs where the CPU has
 * avx512_bf16 (and only there): the context's table names it, and the result shows bf16 rounding
 * (relative RMS well above the f32 path's 1e-6) where it runs, f32 accuracy where it does not.
 * Returns the number of failures. */
static int check_bf16_dispatch(void)
{
    const int have = gdn_cpu_supports(GDN_ISA_AVX512) && (gdn_cpu_features() & GDN_CPU_AVX512BF16);
    static const gdn_isa ISAS[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    int bad = 0;
    if (!have)
        printf("SKIP bf16 products: this CPU lacks avx512_bf16 (only the f32 fallback is tested)\n");
    for (int ii = 0; ii < 3; ii++) {
        const gdn_isa isa = ISAS[ii];
        if (!gdn_cpu_supports(isa))
            continue;
        const int runs = have && isa == GDN_ISA_AVX512;
        gdn_context_desc d;
        memset(&d, 0, sizeof d);
        d.isa = isa;
        d.num_threads = 1;
        gdn_context *ctx = NULL;
        if (gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS) {
            printf("FAIL bf16 dispatch isa=%s: gdn_context_create\n", gdn_isa_name(isa));
            bad++;
            continue;
        }
        const char *name = ctx->chunk_bf16_name;
        if (runs != (ctx->chunk_bf16 != NULL) || (runs && (!name || strcmp(name, "chunk_bf16__avx512bf16") != 0))) {
            printf("FAIL bf16 dispatch isa=%s: kernel table has %s, expected %s\n", gdn_isa_name(isa),
                   name ? name : "none", runs ? "chunk_bf16__avx512bf16" : "none");
            bad++;
        }
        gdn_context_destroy(ctx);
        /* the same case with f32 and bf16 products */
        gdn_check_case c;
        memset(&c, 0, sizeof c);
        c.isa = isa;
        c.threads = 1;
        c.problem.algo = GDN_ALGO_CHUNKED;
        c.problem.qk_l2norm = 1;
        c.problem.num_k_heads = 1;
        c.problem.num_v_heads = 2;
        c.problem.k_dim = c.problem.v_dim = 128;
        c.B = 1;
        c.T = 2 * GDN_CHUNK_C_BF16 + 3;
        c.pool = GDN_CHECK_POOL_INPLACE;
        c.seed = 0x627066;
        gdn_check_result r32, r16;
        c.problem.precision = GDN_PRECISION_F32;
        gdn_check_run(&c, &r32);
        c.problem.precision = GDN_PRECISION_BF16;
        gdn_check_run(&c, &r16);
        const int ok = r32.pass && r16.pass && r32.out_err < 1e-5 &&
                       (runs ? r16.out_err > 1e-4 && r16.state_err > 1e-4 : r16.out_err < 1e-5 && r16.state_err < 1e-5);
        printf("%s bf16 dispatch isa=%s: %s; out error f32 products %.2g, bf16 products %.2g (state %.2g)\n",
               ok ? "PASS" : "FAIL", gdn_isa_name(isa), runs ? "bf16 kernel" : "f32 fallback", r32.out_err,
               r16.out_err, r16.state_err);
        bad += !ok;
    }
    return bad;
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    const int only = argc > 2; /* rerun the listed cases */
    static const gdn_isa ISAS[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    for (int i = 0; i < 3; i++)
        if (!gdn_cpu_supports(ISAS[i]))
            printf("SKIP isa=%s (CPU lacks it)\n", gdn_isa_name(ISAS[i]));

    const size_t n = gdn_check_suite(NULL, 0, quick);
    gdn_check_case *cases = (gdn_check_case *)calloc(n ? n : 1, sizeof *cases);
    if (!cases) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    if (gdn_check_suite(cases, n, quick) != n) {
        fprintf(stderr, "FAIL gdn_check_suite: count changed between calls\n");
        return 1;
    }

    if (only) {
        int bad = 0;
        for (int a = 2; a < argc; a++) {
            const size_t i = (size_t)strtoull(argv[a], NULL, 10);
            char d[512];
            gdn_check_result r;
            if (i >= n) {
                printf("no case #%zu (the suite has %zu)\n", i, n);
                bad = 1;
                continue;
            }
            gdn_check_describe(&cases[i], d, sizeof d);
            gdn_check_run(&cases[i], &r);
            printf("%s #%zu %s: out %.3g state %.3g capture %.3g (tolerance %.0e)%s%s\n", r.pass ? "PASS" : "FAIL", i,
                   d, r.out_err, r.state_err, r.capture_err, r.tolerance, r.pass ? "" : ": ", r.message);
            bad |= !r.pass;
        }
        free(cases);
        return bad;
    }

    /* coverage of the requirements, per supported ISA */
    int missing = 0;
    char name[96];
    for (int ii = 0; ii < 3; ii++) {
        if (!gdn_cpu_supports(ISAS[ii]))
            continue;
        for (int r = 0; ISAS[ii] == GDN_ISA_AVX512 && requirement_bf16(r, &cases[0], name, sizeof name) >= 0; r++) {
            int found = 0;
            for (size_t i = 0; i < n && !found; i++)
                found = cases[i].isa == ISAS[ii] && requirement_bf16(r, &cases[i], name, sizeof name) == 1;
            if (!found) {
                printf("COVERAGE MISSING isa=%s: %s\n", gdn_isa_name(ISAS[ii]), name);
                missing++;
            }
        }
        for (int r = 0; requirement(r, &cases[0], name, sizeof name) >= 0; r++) {
            int found = 0;
            for (size_t i = 0; i < n && !found; i++)
                found = cases[i].isa == ISAS[ii] && requirement(r, &cases[i], name, sizeof name) == 1;
            if (!found) {
                printf("COVERAGE MISSING isa=%s: %s\n", gdn_isa_name(ISAS[ii]), name);
                missing++;
            }
        }
    }

    const double t0 = now();
    size_t failed = (size_t)check_bf16_dispatch(), per_isa[4] = {0}, fail_isa[4] = {0}, n_bf16 = 0;
    double worst_out = 0, worst_state = 0, worst_cap = 0, t_isa[4] = {0}, t_bf16 = 0, worst_bf16 = 0;
    for (size_t i = 0; i < n; i++) {
        gdn_check_result r;
        const double ts = now();
        gdn_check_run(&cases[i], &r);
        const int isa = (int)cases[i].isa & 3;
        t_isa[isa] += now() - ts;
        per_isa[isa]++;
        if (cases[i].problem.precision == GDN_PRECISION_BF16) {
            n_bf16++;
            t_bf16 += now() - ts;
            if (r.pass && r.out_err > worst_bf16)
                worst_bf16 = r.out_err;
            if (r.pass && r.state_err > worst_bf16)
                worst_bf16 = r.state_err;
        }
        if (!r.pass) {
            char d[512];
            gdn_check_describe(&cases[i], d, sizeof d);
            printf("FAIL #%zu %s: %s\n", i, d, r.message);
            failed++;
            fail_isa[isa]++;
        } else {
            if (r.out_err / r.tolerance > worst_out)
                worst_out = r.out_err / r.tolerance;
            if (r.state_err > worst_state)
                worst_state = r.state_err;
            if (r.capture_err > worst_cap)
                worst_cap = r.capture_err;
        }
    }
    for (int i = 0; i < 4; i++)
        if (per_isa[i])
            printf("isa=%-7s %4zu cases, %zu failed, %.2f s\n", gdn_isa_name((gdn_isa)i), per_isa[i], fail_isa[i],
                   t_isa[i]);
    printf("precision=bf16: %zu cases (in the counts above), %.2f s, worst relative RMS error %.3g (tolerance 1e-2)\n",
           n_bf16, t_bf16, worst_bf16);
    printf("%s: %zu cases, %zu failed, %d coverage gaps, %.2f s; worst passing errors: out %.2g of its "
           "tolerance, state %.2g, capture %.2g\n",
           failed || missing ? "FAIL" : "PASS", n, failed, missing, now() - t0, worst_out, worst_state, worst_cap);
    free(cases);
    return failed || missing ? 1 : 0;
}
