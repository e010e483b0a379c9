/*
 * suite.c — the conformance matrix of `gdn check` and test_conformance: a covering design, not a
 * cross product (the float64 reference would take far too long).
 *
 * Per supported ISA: M cases whose parameters are drawn by blocks of random permutations (every
 * value of every parameter appears once in each block of as many consecutive cases as it has
 * values, with random pairings across parameters), then clamped to a cost budget (long sequences
 * and 256-wide heads only with few heads), then one extra case for every parameter value the
 * clamps removed, then a few fixed cases (real model shapes, decode with Dv tiling, all-empty
 * packed batches), then the same kind of block for the chunked algorithm forced on (chunked_block),
 * and on AVX-512 once more with bf16 products (problem.precision BF16, its own chunk boundaries).
 */
#include <string.h>

#include "check/check.h"
#include "check/rng.h"
#include "cpu/chunked.h"

typedef struct dims_pair {
    int dk, dv;
} dims_pair;

/* 64/128/256, mixed, SIMD sizes that are not powers of two (48, 96), and sizes the SIMD kernels do
 * not cover (40, 200, 1, 24...) that fall back to scalar. */
static const dims_pair DIMS[] = {{64, 64}, {128, 128}, {256, 256}, {64, 128}, {128, 64}, {48, 80},
                                 {40, 24}, {16, 1},    {1, 16},    {96, 32},  {200, 136}};
static const int64_t TS[] = {0, 1, 2, 15, 16, 17, 63, 64, 65, 1000};
/* The same number of lengths around the chunk boundaries of the chunked algorithm (C = GDN_CHUNK_C
 * tokens per chunk): C-1, C, C+1, 2C, 2C+1, long. */
#define CC GDN_CHUNK_C
static const int64_t CTS[] = {0, 1, 5, CC - 1, CC, CC + 1, 2 * CC, 2 * CC + 1, 3 * CC + 7, 1000};
/* The same for the bf16-product kernel's chunk (problem.precision BF16). */
#define CB GDN_CHUNK_C_BF16
static const int64_t BTS[] = {0, 1, 5, CB - 1, CB, CB + 1, 2 * CB, 2 * CB + 1, 3 * CB + 7, 1000};

enum {
    P_DTYPE, P_OUTD, P_GATED, P_HEADS, P_GATE, P_LAYOUT, P_L2, P_SCALE, P_ALGO, P_DIMS, P_T, P_RATIO, P_HK,
    P_BATCH, P_POOL, P_CAP, P_STRIDED, P_DECAY, P_NOOUT, P_THREADS, P_SLOTBITS, P_COUNT
};

static int nvals(int p)
{
    switch (p) {
    case P_DTYPE: return 3;
    case P_OUTD: return 3;
    case P_GATED: return 2;
    case P_HEADS: return 2;
    case P_GATE: return 4;
    case P_LAYOUT: return 2;
    case P_L2: return 2;
    case P_SCALE: return 2;
    case P_ALGO: return 2;
    case P_DIMS: return (int)(sizeof DIMS / sizeof DIMS[0]);
    case P_T: return (int)(sizeof TS / sizeof TS[0]);
    case P_RATIO: return 4;
    case P_HK: return 3;
    case P_BATCH: return 4;   /* dense B = 1, 2, 3; packed */
    case P_POOL: return 3;
    case P_CAP: return 6;     /* none, dense, slots, slots in the pool (the last token's also into the
                                 write slot), slots by position */
    case P_STRIDED: return GDN_CHECK_STRIDED_MAX + 1;
    case P_DECAY: return 4;
    case P_NOOUT: return 4;   /* 1 of 4 without output */
    case P_THREADS: return 3; /* 0 (all), 1, 3 */
    case P_SLOTBITS: return 4;
    }
    return 1;
}

typedef struct builder {
    gdn_rng rng;
    int perm[P_COUNT][16];
    int pos[P_COUNT];
} builder;

static int draw(builder *b, int p)
{
    if (p < 0 || p >= P_COUNT)
        return 0;
    const int n = nvals(p);
    if (b->pos[p] % n == 0) {
        for (int i = 0; i < n; i++)
            b->perm[p][i] = i;
        gdn_rng_shuffle(&b->rng, b->perm[p], n);
    }
    return b->perm[p][b->pos[p]++ % n];
}

/* Make a case from one value index per parameter (T is the longest sequence when packed). */
static void make_case(gdn_check_case *c, const int *v, gdn_isa isa, gdn_rng *rng, const int64_t *ts)
{
    static const gdn_dtype DT[] = {GDN_DTYPE_F32, GDN_DTYPE_BF16, GDN_DTYPE_F16};
    memset(c, 0, sizeof *c);
    gdn_problem *p = &c->problem;
    p->dtype = DT[v[P_DTYPE]];
    p->out_dtype = DT[v[P_OUTD]];
    p->gate_dtype = v[P_GATED] ? p->dtype : GDN_DTYPE_F32;
    p->head_map = v[P_HEADS] ? GDN_HEADS_TILED : GDN_HEADS_GROUPED;
    p->gate = (gdn_gate)v[P_GATE];
    p->state_layout = v[P_LAYOUT] ? GDN_STATE_KV : GDN_STATE_VK;
    p->qk_l2norm = v[P_L2];
    p->scale = v[P_SCALE] ? 0.375f : 0.0f;
    p->algo = v[P_ALGO] ? GDN_ALGO_RECURRENT : GDN_ALGO_AUTO;
    p->k_dim = DIMS[v[P_DIMS]].dk;
    p->v_dim = DIMS[v[P_DIMS]].dv;
    p->num_k_heads = 1 + v[P_HK];
    p->num_v_heads = p->num_k_heads * (1 + v[P_RATIO]);
    const int64_t T = ts[v[P_T]];
    if (v[P_BATCH] < 3) {
        c->B = 1 + v[P_BATCH];
        c->T = T;
    } else {
        /* packed: one sequence of length T, one empty, the others in [0, T] */
        c->n_seqs = 3 + (int)gdn_rng_below(rng, 4);
        for (int i = 0; i < c->n_seqs; i++)
            c->seq_lens[i] = gdn_rng_below(rng, T + 1);
        const int a = (int)gdn_rng_below(rng, c->n_seqs);
        int z = (int)gdn_rng_below(rng, c->n_seqs - 1);
        if (z >= a)
            z++;
        c->seq_lens[a] = T;
        c->seq_lens[z] = 0;
        c->B = 1;
    }
    c->pool = (gdn_check_pool)v[P_POOL];
    switch (v[P_CAP]) {
    case 0: c->capture = GDN_CAPTURE_NONE; break;
    case 1: c->capture = GDN_CAPTURE_DENSE; break;
    case 2: c->capture = GDN_CAPTURE_SLOTS; break;
    case 3: c->capture = GDN_CAPTURE_SLOTS; c->capture_in_pool = 1; break;
    case 4: c->capture = GDN_CAPTURE_SLOTS; c->capture_by_position = 1; break;
    default: c->capture = GDN_CAPTURE_SLOTS; c->capture_in_pool = c->capture_last_in_write_slot = 1; break;
    }
    c->strided = v[P_STRIDED];
    c->decay = (gdn_check_decay)v[P_DECAY];
    c->no_output = v[P_NOOUT] == 3;
    c->threads = v[P_THREADS] == 0 ? 0 : v[P_THREADS] == 1 ? 1 : 3;
    c->default_slots = v[P_SLOTBITS] & 1;
    c->cu_i64 = (v[P_SLOTBITS] >> 1) & 1;
    c->isa = isa;
    c->seed = gdn_rng_u64(rng);
}

static int64_t total_tokens(const gdn_check_case *c)
{
    if (c->n_seqs == 0)
        return c->B * c->T;
    int64_t t = 0;
    for (int i = 0; i < c->n_seqs; i++)
        t += c->seq_lens[i];
    return t;
}

static int64_t longest(const gdn_check_case *c)
{
    if (c->n_seqs == 0)
        return c->T;
    int64_t t = 0;
    for (int i = 0; i < c->n_seqs; i++)
        if (c->seq_lens[i] > t)
            t = c->seq_lens[i];
    return t;
}

static double cost(const gdn_check_case *c)
{
    return 7.0 * c->problem.k_dim * c->problem.v_dim * (double)total_tokens(c) * c->problem.num_v_heads;
}

static void set_heads(gdn_check_case *c, int hk)
{
    const int ratio = c->problem.num_v_heads / c->problem.num_k_heads;
    c->problem.num_k_heads = hk;
    c->problem.num_v_heads = hk * ratio;
}

/* Keep a case within the budget: long sequences and big heads only with few heads. */
static void clamp(gdn_check_case *c, double budget)
{
    gdn_problem *p = &c->problem;
    const int64_t L = longest(c);
    if (L > 100) {
        set_heads(c, 1);
        if ((int64_t)p->k_dim * p->v_dim > 128 * 128) {
            p->k_dim = 64;
            p->v_dim = 64;
        }
        if (c->n_seqs == 0) {
            c->B = 1;
        } else { /* a long sequence, an empty one and a short one */
            gdn_check_set_packed(c, 3, (const int64_t[]){7, L, 0});
        }
    }
    if (p->k_dim == 256 || p->v_dim == 256) {
        set_heads(c, 1);
        if (p->num_v_heads > 2)
            p->num_v_heads = 2;
    }
    /* captured states: at most 2^21 floats (plus the reference's doubles) */
    if (c->capture != GDN_CAPTURE_NONE &&
        (double)total_tokens(c) * p->num_v_heads * p->k_dim * p->v_dim > 2097152.0) {
        set_heads(c, 1);
        if (c->n_seqs == 0)
            c->B = 1;
        if ((double)total_tokens(c) * p->num_v_heads * p->k_dim * p->v_dim > 2097152.0) {
            c->capture = GDN_CAPTURE_NONE;
            c->capture_in_pool = c->capture_by_position = c->capture_last_in_write_slot = 0;
        }
    }
    if (cost(c) > budget)
        set_heads(c, 1);
    if (cost(c) > budget && c->n_seqs == 0)
        c->B = 1;
    if (cost(c) > budget && longest(c) <= 100) {
        /* still too big: shorter sequences (T is not the point of this case) */
        if (c->n_seqs == 0) {
            while (cost(c) > budget && c->T > 17)
                c->T = c->T > 64 ? 64 : 17;
        } else {
            for (int i = 0; i < c->n_seqs; i++)
                if (c->seq_lens[i] > 17 && cost(c) > budget)
                    c->seq_lens[i] = 17;
        }
    }
}

/* Value index of parameter p in a finished case (for the coverage fix-up); -1: not one of ours. */
static int value_of(const gdn_check_case *c, int p, const int64_t *ts)
{
    const gdn_problem *pr = &c->problem;
    switch (p) {
    case P_DTYPE: return (int)pr->dtype;
    case P_OUTD: return (int)pr->out_dtype;
    case P_HEADS: return (int)pr->head_map;
    case P_GATE: return (int)pr->gate;
    case P_LAYOUT: return (int)pr->state_layout;
    case P_DIMS:
        for (int i = 0; i < nvals(P_DIMS); i++)
            if (DIMS[i].dk == pr->k_dim && DIMS[i].dv == pr->v_dim)
                return i;
        return -1;
    case P_T:
        for (int i = 0; i < nvals(P_T); i++)
            if (ts[i] == longest(c))
                return i;
        return -1;
    case P_RATIO: return pr->num_k_heads > 0 ? pr->num_v_heads / pr->num_k_heads - 1 : -1;
    case P_BATCH: return c->n_seqs > 0 ? 3 : (c->B >= 1 && c->B <= 3 ? (int)c->B - 1 : -1);
    case P_POOL: return (int)c->pool;
    case P_CAP:
        if (c->capture == GDN_CAPTURE_SLOTS)
            return c->capture_in_pool ? (c->capture_last_in_write_slot ? 5 : 3) : c->capture_by_position ? 4 : 2;
        return (int)c->capture;
    case P_STRIDED: return c->strided;
    case P_DECAY: return (int)c->decay;
    default: return -2; /* not tracked */
    }
}

static int tracked(int p)
{
    switch (p) {
    case P_DTYPE: case P_OUTD: case P_HEADS: case P_GATE: case P_LAYOUT: case P_DIMS: case P_T: case P_RATIO:
    case P_BATCH: case P_POOL: case P_CAP: case P_STRIDED: case P_DECAY:
        return 1;
    }
    return 0;
}

static size_t emit(gdn_check_case *cases, size_t max, size_t n, const gdn_check_case *c)
{
    if (n < max)
        cases[n] = *c;
    return n + 1;
}

/* A parameter vector for covering one value the clamps removed: every parameter drawn, then one
 * key head, the first dimensions and the length index t (the caller sets the value it covers). */
static void draw_around(builder *b, int v[P_COUNT], int t)
{
    for (int q = 0; q < P_COUNT; q++)
        v[q] = draw(b, q);
    v[P_HK] = 0;
    v[P_DIMS] = 0;
    v[P_T] = t;
}

/* A case of the chunked block: v as drawn, algo forced to CHUNKED, no capture, T around the chunk
 * boundaries (ts), the given precision. */
static void make_chunked(gdn_check_case *c, int *v, gdn_isa isa, gdn_rng *rng, double budget, double long_budget,
                         const int64_t *ts, gdn_precision prec)
{
    v[P_CAP] = 0;
    v[P_ALGO] = 0;
    make_case(c, v, isa, rng, ts);
    c->problem.algo = GDN_ALGO_CHUNKED;
    c->problem.precision = prec;
    clamp(c, longest(c) > 100 ? long_budget : budget);
}

/* The chunked algorithm (problem.algo = CHUNKED), per ISA: its own covering block over every
 * parameter but capture (the chunked path never captures), with T around the chunk boundaries
 * (CTS), one more case for every value the clamps removed, then fixed cases: long sequences with
 * extreme decays, several value heads per key head, and a capture request (run by the token loop). */
static size_t chunked_block(gdn_check_case *cases, size_t max, size_t n, gdn_isa isa, int quick, double budget,
                            double long_budget, gdn_precision prec)
{
    const int bf16 = prec == GDN_PRECISION_BF16;
    const int M = bf16 ? (quick ? 20 : 40) : quick ? 30 : 60;
    const int64_t *ts = bf16 ? BTS : CTS;
    const int64_t C = bf16 ? CB : CC;
    builder b;
    memset(&b, 0, sizeof b);
    gdn_rng_seed(&b.rng, UINT64_C(0x63686b) * 1000003u + (uint64_t)isa * 7919u + (uint64_t)(quick != 0) +
                             (uint64_t)bf16 * UINT64_C(0x62663136));
    unsigned char seen[P_COUNT][16];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < M; i++) {
        int v[P_COUNT];
        gdn_check_case c;
        for (int p = 0; p < P_COUNT; p++)
            v[p] = draw(&b, p);
        make_chunked(&c, v, isa, &b.rng, budget, long_budget, ts, prec);
        n = emit(cases, max, n, &c);
        for (int p = 0; p < P_COUNT; p++) {
            const int x = value_of(&c, p, ts);
            if (x >= 0)
                seen[p][x] = 1;
        }
    }
    for (int p = 0; p < P_COUNT; p++) {
        if (!tracked(p) || p == P_CAP)
            continue;
        for (int x = 0; x < nvals(p); x++) {
            if (seen[p][x])
                continue;
            int v[P_COUNT];
            gdn_check_case c;
            draw_around(&b, v, 7); /* 2C + 1 */
            v[p] = x;
            make_chunked(&c, v, isa, &b.rng, budget, long_budget, ts, prec);
            n = emit(cases, max, n, &c);
            seen[p][x] = 1;
        }
    }

    gdn_check_case c;
    memset(&c, 0, sizeof c);
    c.isa = isa;
    c.problem.algo = GDN_ALGO_CHUNKED;
    c.problem.precision = prec;
    c.problem.qk_l2norm = 1;
    c.problem.num_k_heads = c.problem.num_v_heads = 1;
    c.problem.k_dim = c.problem.v_dim = 64;
    c.B = 1;
    c.pool = GDN_CHECK_POOL_INPLACE;
    /* long sequences with extreme decays: |g| up to 30 per token, |g| <= 1e-3, and the edges (decay
       exactly 1, decay 0, |g| <= 1e-7 mixed per token) */
    c.T = quick ? 1000 : 4096;
    for (int d = GDN_CHECK_DECAY_SLOW; d <= GDN_CHECK_DECAY_EDGE; d++) {
        c.decay = (gdn_check_decay)d;
        c.seed = gdn_rng_u64(&b.rng);
        n = emit(cases, max, n, &c);
    }
    /* the real head ratio and dims (value heads grouped per key head), two sequences, tiled map */
    c.decay = GDN_CHECK_DECAY_MODEL;
    c.problem.num_k_heads = 2;
    c.problem.num_v_heads = 4;
    c.problem.k_dim = c.problem.v_dim = 128;
    c.problem.head_map = GDN_HEADS_TILED;
    c.problem.dtype = c.problem.out_dtype = GDN_DTYPE_BF16;
    c.B = 2;
    c.T = 2 * C + 1;
    c.pool = GDN_CHECK_POOL_MOVE;
    c.seed = gdn_rng_u64(&b.rng);
    n = emit(cases, max, n, &c);
    if (bf16) { /* the head ratio 3 of real models, grouped; an odd Dk (a zero bf16 pad) */
        c.problem.num_v_heads = 6;
        c.problem.head_map = GDN_HEADS_GROUPED;
        c.B = 1;
        c.seed = gdn_rng_u64(&b.rng);
        n = emit(cases, max, n, &c);
        c.problem.num_k_heads = 1;
        c.problem.num_v_heads = 3;
        c.problem.k_dim = 33;
        c.problem.v_dim = 48;
        c.decay = GDN_CHECK_DECAY_FAST;
        c.seed = gdn_rng_u64(&b.rng);
        n = emit(cases, max, n, &c);
        c.decay = GDN_CHECK_DECAY_MODEL;
    }
    /* chunked asked for, but states captured: the token loop runs */
    c.problem.num_k_heads = 1;
    c.problem.num_v_heads = 2;
    c.problem.k_dim = c.problem.v_dim = 64;
    c.B = 1;
    c.T = C + 1;
    c.capture = GDN_CAPTURE_DENSE;
    c.seed = gdn_rng_u64(&b.rng);
    n = emit(cases, max, n, &c);
    return n;
}

/* problem.precision BF16 on an ISA below AVX-512: the f32 kernels run (two chunked cases). */
static size_t bf16_fallback_cases(gdn_check_case *cases, size_t max, size_t n, gdn_isa isa)
{
    gdn_check_case c;
    memset(&c, 0, sizeof c);
    c.isa = isa;
    c.problem.algo = GDN_ALGO_CHUNKED;
    c.problem.precision = GDN_PRECISION_BF16;
    c.problem.qk_l2norm = 1;
    c.problem.num_k_heads = 1;
    c.problem.num_v_heads = 3;
    c.problem.k_dim = c.problem.v_dim = 64;
    c.B = 1;
    c.T = 2 * CB + 1;
    c.pool = GDN_CHECK_POOL_INPLACE;
    c.decay = GDN_CHECK_DECAY_FAST;
    c.seed = UINT64_C(0x6266) + (uint64_t)isa;
    n = emit(cases, max, n, &c);
    c.problem.dtype = c.problem.out_dtype = GDN_DTYPE_BF16;
    c.problem.head_map = GDN_HEADS_TILED;
    c.decay = GDN_CHECK_DECAY_MODEL;
    c.seed++;
    return emit(cases, max, n, &c);
}

size_t gdn_check_suite(gdn_check_case *cases, size_t max, int quick)
{
    static const gdn_isa ISAS[] = {GDN_ISA_SCALAR, GDN_ISA_AVX2, GDN_ISA_AVX512};
    const int M = quick ? 60 : 150;
    const double budget = quick ? 2.5e7 : 6e7;
    const double long_budget = quick ? 3e7 : 1.2e8; /* the T = 1000 cases */
    size_t n = 0;

    for (int ii = 0; ii < 3; ii++) {
        const gdn_isa isa = ISAS[ii];
        if (!gdn_cpu_supports(isa))
            continue;
        builder b;
        memset(&b, 0, sizeof b);
        gdn_rng_seed(&b.rng, UINT64_C(0x6764) * 1000003u + (uint64_t)isa * 7919u + (uint64_t)(quick != 0));
        unsigned char seen[P_COUNT][16];
        memset(seen, 0, sizeof seen);

        for (int i = 0; i < M; i++) {
            int v[P_COUNT];
            gdn_check_case c;
            for (int p = 0; p < P_COUNT; p++)
                v[p] = draw(&b, p);
            make_case(&c, v, isa, &b.rng, TS);
            clamp(&c, longest(&c) > 100 ? long_budget : budget);
            n = emit(cases, max, n, &c);
            for (int p = 0; p < P_COUNT; p++) {
                const int x = value_of(&c, p, TS);
                if (x >= 0)
                    seen[p][x] = 1;
            }
        }
        /* every tracked value the clamps removed: one more case around it */
        for (int p = 0; p < P_COUNT; p++) {
            if (!tracked(p))
                continue;
            for (int x = 0; x < nvals(p); x++) {
                if (seen[p][x])
                    continue;
                int v[P_COUNT];
                gdn_check_case c;
                draw_around(&b, v, 5); /* 17 */
                v[P_CAP] = v[P_CAP] == 1 ? 0 : v[P_CAP];
                v[p] = x;
                make_case(&c, v, isa, &b.rng, TS);
                clamp(&c, longest(&c) > 100 ? long_budget : budget);
                n = emit(cases, max, n, &c);
                seen[p][x] = 1;
            }
        }

        /* fixed cases */
        {
            gdn_check_case c;
            memset(&c, 0, sizeof c);
            c.isa = isa;
            /* Qwen3.6-35B-A3B decode, B = 2, moving pool */
            c.problem.num_k_heads = 16;
            c.problem.num_v_heads = 32;
            c.problem.k_dim = c.problem.v_dim = 128;
            c.problem.dtype = c.problem.out_dtype = GDN_DTYPE_BF16;
            c.B = 2;
            c.T = 1;
            c.pool = GDN_CHECK_POOL_MOVE;
            c.seed = gdn_rng_u64(&b.rng);
            n = emit(cases, max, n, &c);
            /* a 4-token verify with vLLM-style capture into the pool (the real head counts in the
             * full suite; the same ratio and dims with fewer heads in the quick one) */
            if (quick) {
                c.problem.num_k_heads = 4;
                c.problem.num_v_heads = 8;
            }
            c.B = 1;
            c.T = 4;
            c.problem.dtype = c.problem.out_dtype = GDN_DTYPE_F32;
            c.capture = GDN_CAPTURE_SLOTS;
            c.capture_in_pool = 1;
            c.seed = gdn_rng_u64(&b.rng);
            n = emit(cases, max, n, &c);
            /* the same, and the state after each sequence's last token also into its own write
             * slot (vLLM style): dense B = 2, then packed with an empty sequence */
            c.B = 2;
            c.capture_last_in_write_slot = 1;
            c.seed = gdn_rng_u64(&b.rng);
            n = emit(cases, max, n, &c);
            c.B = 1;
            gdn_check_set_packed(&c, 4, (const int64_t[]){4, 0, 3, 1});
            c.seed = gdn_rng_u64(&b.rng);
            n = emit(cases, max, n, &c);
            c.n_seqs = 0;
            memset(c.seq_lens, 0, sizeof c.seq_lens);
            c.capture_last_in_write_slot = 0;
            /* B = 1, one value head: the driver must tile Dv across threads */
            memset(&c.problem, 0, sizeof c.problem);
            c.problem.num_k_heads = c.problem.num_v_heads = 1;
            c.problem.k_dim = c.problem.v_dim = 128;
            c.capture = GDN_CAPTURE_NONE;
            c.capture_in_pool = 0;
            c.pool = GDN_CHECK_POOL_INPLACE;
            for (int T = 1; T <= 64; T *= 8) {
                c.T = T;
                c.threads = T == 1 ? 2 : 0;
                c.seed = gdn_rng_u64(&b.rng);
                n = emit(cases, max, n, &c);
            }
            /* dense T = 0 with a moving pool: states are copied */
            c.problem.num_k_heads = 2;
            c.problem.num_v_heads = 4;
            c.B = 3;
            c.T = 0;
            c.pool = GDN_CHECK_POOL_MOVE;
            c.seed = gdn_rng_u64(&b.rng);
            n = emit(cases, max, n, &c);
            /* packed, every sequence empty, capture requested */
            c.n_seqs = 5;
            c.capture = GDN_CAPTURE_SLOTS;
            c.seed = gdn_rng_u64(&b.rng);
            n = emit(cases, max, n, &c);
        }
        n = chunked_block(cases, max, n, isa, quick, budget, long_budget, GDN_PRECISION_DEFAULT);
        /* bf16 products (problem.precision BF16): the avx512_bf16 kernel on AVX-512 (the f32 kernels
         * where the CPU lacks avx512_bf16); the f32 fallback of lower ISAs in a few fixed cases */
        if (isa == GDN_ISA_AVX512)
            n = chunked_block(cases, max, n, isa, quick, budget, long_budget, GDN_PRECISION_BF16);
        else
            n = bf16_fallback_cases(cases, max, n, isa);
    }
    return n;
}
