/*
 * test_fuzz_args — a deterministic random-mutation test of gdn_forward's argument checking.
 *
 * Every iteration builds a small VALID call: dense or packed (int32 / int64 cu_seqlens, empty
 * sequences), a state pool with or without read/write slot tables, dense or slot capture (into its
 * own pool or into the state pool, by position or with a slot table stride), contiguous, padded,
 * permuted and broadcast views, every gate (raw with A_log / dt_bias), layout, dtype, algorithm and
 * precision (default, f32, bf16 products).
 * It then applies 0-3 random mutations to the descriptors: any integer field (dims, enums out of
 * range, batch fields), shapes, ranks, strides (negative, huge), data offsets, NULL pointers (ctx
 * and the three structs included), slot indices (past the pool, duplicated, negative), cu_seqlens
 * values and type, slots_stride, capture mode, NaN/Inf scale, the capture pool put in the state
 * pool (with another slot count), and coherent changes of dims, batch and packed split.
 *
 * Only then are the buffers allocated. An independent model of gdn.h's rules (model_run) says
 * whether the mutated call is valid, which argument is at fault, and which memory a valid call
 * touches; every buffer gets that much, between two 4 KiB guard zones of 0xFF bytes (NaN in f32,
 * bf16 and f16; -1 as an index), and input views are NaN between their elements, so that a read
 * outside a view shows in the results. cu_seqlens longer than 2 KiB ends in a 0xFF tail, so that
 * a huge num_seqs is read only as far as the harness owns. Calls whose valid memory would exceed the
 * harness's caps (strides of 2^40 on real extents, slot tables of n * 2^40) are skipped and counted:
 * they are the caller's to get right, not checkable.
 *
 * Invariants, per call:
 *   - the validator (gdn_plan_make, asked first: it writes nothing) agrees with the model: a fault
 *     <=> a non-SUCCESS status of the fault's kind (INVALID_ARGUMENT or UNSUPPORTED; OUT_OF_MEMORY
 *     only for pools of 2^40 slots), and the message starts with the name of an argument at fault
 *     (problem.k_dim, q, cu_seqlens[..], state.write_slots[..], ...). A call the model finds
 *     invalid but the validator accepts is reported and not run;
 *   - gdn_forward returns the validator's status and message; ctx NULL: INVALID_ARGUMENT;
 *   - on failure: a non-empty gdn_last_error naming an argument of the gdn.h structs; every buffer
 *     (out, pool, captures, inputs, index tables and all guard zones) bitwise unchanged;
 *   - on success: an empty gdn_last_error; the float64 reference (gdn_ref_forward, same descriptors,
 *     run before gdn_forward) succeeds too and writes nothing; out, the final states and the
 *     captures match it (relative RMS 1e-5, 2e-3 / 1e-2 for f16 / bf16 out, 1e-2 for out and final
 *     states with problem.precision BF16 (bf16 products), over a reference RMS of
 *     at least 1e-2: the data are O(0.01..1)); every byte outside the elements the call writes,
 *     every input and every guard zone is unchanged.
 * Output views must be nested (gdn.h: by increasing stride, each stride passes the span of the
 * dimensions below); the model rejects the others. Left open by gdn.h, so both answers pass (and
 * are counted): output views sharing memory with each other in other ways, and a capture pool at
 * the state pool's address with another slot count or layout.
 *
 * Also (edge_cases, each in a child process with a time limit): a dense batch of 2^40 or 2^62
 * sequences with seq_len = 0, and a capture pool one slot longer than the state pool it shares,
 * must be answered promptly (accepted or rejected) without a crash.
 *
 * Usage: test_fuzz_args [seed [-v|-q [iterations [only_iteration]]]]
 *   seed: default 20240917. -v: the distinct messages (digits as #) and first examples.
 *   iterations: default 30000 (or GDN_FUZZ_ITERS). only_iteration: replay that one, verbosely.
 *   GDN_FUZZ_EDGE=0: leave out the edge cases. Iterations alternate between a scalar and a
 *   best-ISA context (2 threads each); each iteration's random source depends only on (seed,
 *   iteration), so any failure replays alone.
 */
#define _POSIX_C_SOURCE 200809L /* fork, alarm, clock_gettime */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check/rng.h"
#include "core/dtype.h"
#include "core/plan.h"
#include "gdn/gdn.h"
#include "ref/ref.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#ifdef FUZZ_ASAN
/* A pool of 2^40 slots makes the slot checks ask calloc for 8 TiB: gdn must then answer
 * GDN_STATUS_OUT_OF_MEMORY, which needs ASan's calloc to return NULL rather than abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
void __sanitizer_set_death_callback(void (*callback)(void));
#endif

/* The iteration being run, written out if the process dies in it (a crash in gdn). */
static char g_crash_note[200];
static size_t g_crash_len;

static void crash_note(void)
{
    if (g_crash_len && write(2, g_crash_note, g_crash_len) < 0)
        g_crash_len = 0;
}

#ifndef FUZZ_ASAN
static void on_fatal_signal(int sig)
{
    crash_note();
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

static void install_crash_note(void)
{
#ifdef FUZZ_ASAN
    __sanitizer_set_death_callback(crash_note);
#else
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
#endif
}

/* ---------------------------------------------------------------------------------------------
 * Limits of the harness
 * ------------------------------------------------------------------------------------------- */

#define GUARD 4096                    /* guard zone before and after every buffer */
#define BUF_CAP ((int64_t)8 << 20)    /* most bytes a buffer of a valid call gets (else skipped) */
#define REJECT_CAP ((int64_t)1 << 14) /* most bytes a buffer of a rejected call gets */
#define CU_CAP_BYTES 2048             /* cu_seqlens: a longer read ends at a 0xFF (-1) tail */
#define CU_LIVE_MAX 200
#define IDX_CAP 1024                  /* read/write slot tables: most entries */
#define CS_CAP 16384                  /* capture slot table: most entries */
#define LIVE_CAP 4096
#define MAX_ELEMS_FILL (BUF_CAP / 2) /* an injective view in BUF_CAP bytes has no more elements */
#define MAX_TAGS 64
#define MAX_REPORTS 25
#define GDN_ERR_LEN_TEST 512          /* = GDN_ERR_LEN of the context */

enum { VQ, VK, VV, VG, VBETA, VOUT, VPOOL, VCAP, NVIEW };
enum { PALOG, PDTB, PCU, PRS, PWS, PCS, NPTR };
enum { BQ, BK, BV, BG, BBETA, BOUT, BPOOL, BCPOOL, BDCAP, BALOG, BDTB, BCU, BRS, BWS, BCS, NBUF };
#define BNONE (-1)

static const char *const view_name[NVIEW] = {"q", "k", "v", "g", "beta", "out", "state.pool", "capture.states"};
static const char *const ptr_name[NPTR] = {"A_log", "dt_bias", "batch.cu_seqlens", "state.read_slots",
                                           "state.write_slots", "capture.slots"};
static const int ptr_buf[NPTR] = {BALOG, BDTB, BCU, BRS, BWS, BCS};
static const char *const buf_name[NBUF] = {"q", "k", "v", "g", "beta", "out", "state pool", "capture pool",
                                           "dense capture", "A_log", "dt_bias", "cu_seqlens", "read_slots",
                                           "write_slots", "capture slots"};

/* ---------------------------------------------------------------------------------------------
 * Random source (one per iteration, so that any iteration replays alone)
 * ------------------------------------------------------------------------------------------- */

static gdn_rng R;

static int64_t rnd(int64_t n)
{
    return gdn_rng_below(&R, n);
}

static int chance(int num, int den)
{
    return rnd(den) < num;
}

static double unif(double a, double b)
{
    return a + (b - a) * gdn_rng_uniform(&R);
}

/* ---------------------------------------------------------------------------------------------
 * The call under test
 * ------------------------------------------------------------------------------------------- */

typedef struct fcase {
    gdn_problem p;
    gdn_batch b;
    gdn_tensors t;          /* data pointers are bound to the buffers once they are allocated */
    int vbuf[NVIEW];        /* buffer of each view; BNONE = data NULL */
    int64_t voff[NVIEW];    /* offset of each view's first element in its buffer, in elements */
    int pbuf[NPTR];         /* buffer of each pointer argument; BNONE = NULL */
    int null_ctx, null_problem, null_batch, null_tensors;
    int64_t cu[CU_LIVE_MAX]; /* cu_seqlens as written (then repeated), in type cu_content */
    int ncu;
    gdn_index_type cu_content;
    int32_t rs[LIVE_CAP], ws[LIVE_CAP], cs[LIVE_CAP]; /* slot tables; -1 past what was set */
    int64_t nrs, nws, ncs;                             /* entries set */
    char base[240];
    char mut[3][200];
    int nmut;
} fcase;

static gdn_tensor *vw(fcase *f, int v)
{
    switch (v) {
    case VQ: return &f->t.q;
    case VK: return &f->t.k;
    case VV: return &f->t.v;
    case VG: return &f->t.g;
    case VBETA: return &f->t.beta;
    case VOUT: return &f->t.out;
    case VPOOL: return &f->t.state.pool;
    default: return &f->t.capture.states;
    }
}

static const gdn_tensor *cvw(const fcase *f, int v)
{
    return vw((fcase *)(uintptr_t)f, v);
}

static int is_output_view(int v)
{
    return v == VOUT || v == VPOOL || v == VCAP;
}

static int dtype_ok(int t)
{
    return t >= 0 && t <= 2;
}

static int dsize(int t)
{
    return t == GDN_DTYPE_BF16 || t == GDN_DTYPE_F16 ? 2 : 4;
}

static gdn_dtype view_dtype(const fcase *f, int v)
{
    int t = GDN_DTYPE_F32;
    if (v == VQ || v == VK || v == VV)
        t = (int)f->p.dtype;
    else if (v == VG || v == VBETA)
        t = (int)f->p.gate_dtype;
    else if (v == VOUT)
        t = (int)f->p.out_dtype;
    return dtype_ok(t) ? (gdn_dtype)t : GDN_DTYPE_F32;
}

static int view_es(const fcase *f, int v)
{
    return dsize((int)view_dtype(f, v));
}

static int64_t imax(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t imin(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* saturating arithmetic on non-negative values */
static int64_t sat_mul(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0)
        return 0;
    return a > INT64_MAX / b ? INT64_MAX : a * b;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* two's-complement addition (mutated values may sit at the ends of the range) */
static int64_t wadd(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static void set_shape(gdn_tensor *t, int nd, const int64_t *s)
{
    t->ndim = nd;
    for (int i = 0; i < GDN_MAX_DIMS; i++) {
        t->shape[i] = i < nd ? s[i] : 0;
        t->strides[i] = 0;
    }
}

/* Strides: contiguous (all zero), explicit padded, or explicit in a random dimension order; an
 * input sometimes broadcasts one dimension (stride 0). */
static void gen_strides(gdn_tensor *t, int is_output)
{
    const int nd = t->ndim;
    for (int i = 0; i < GDN_MAX_DIMS; i++)
        t->strides[i] = 0;
    const int style = (int)rnd(3);
    if (style == 0 || nd < 1)
        return;
    int order[GDN_MAX_DIMS]; /* innermost first */
    for (int i = 0; i < nd; i++)
        order[i] = nd - 1 - i;
    if (style == 2)
        gdn_rng_shuffle(&R, order, nd);
    int64_t s = chance(1, 4) ? 2 : 1;
    for (int i = 0; i < nd; i++) {
        const int d = order[i];
        t->strides[d] = s;
        s = sat_add(sat_mul(s, imax(t->shape[d], 1)), chance(1, 2) ? rnd(3) : 0);
    }
    if (!is_output && chance(1, 6))
        t->strides[rnd(nd)] = 0;
}

/* The shape gdn.h expects of view v for the current problem and batch (slot pools keep their own
 * slot count). Returns the rank, 0 for a capture descriptor never set. */
static int expected_shape(const fcase *f, int v, int64_t *s)
{
    const int64_t B = f->b.batch_size, T = f->b.seq_len;
    const int64_t Hk = f->p.num_k_heads, Hv = f->p.num_v_heads, Dk = f->p.k_dim, Dv = f->p.v_dim;
    const int64_t Rw = f->p.state_layout == GDN_STATE_KV ? Dk : Dv, Cl = f->p.state_layout == GDN_STATE_KV ? Dv : Dk;
    switch (v) {
    case VQ:
    case VK: s[0] = B; s[1] = T; s[2] = Hk; s[3] = Dk; return 4;
    case VV:
    case VOUT: s[0] = B; s[1] = T; s[2] = Hv; s[3] = Dv; return 4;
    case VG:
    case VBETA: s[0] = B; s[1] = T; s[2] = Hv; return 3;
    case VPOOL: s[0] = f->t.state.pool.shape[0]; s[1] = Hv; s[2] = Rw; s[3] = Cl; return 4;
    default:
        if (f->t.capture.states.ndim == 5) {
            s[0] = B; s[1] = T; s[2] = Hv; s[3] = Rw; s[4] = Cl;
            return 5;
        }
        if (f->t.capture.states.ndim == 0)
            return 0;
        s[0] = f->t.capture.states.shape[0]; s[1] = Hv; s[2] = Rw; s[3] = Cl;
        return 4;
    }
}

/* After a coherent change of problem or batch: every view takes its expected shape; one whose shape
 * changed gets new strides (contiguous or explicit). */
static void reshape_views(fcase *f)
{
    for (int v = 0; v < NVIEW; v++) {
        int64_t s[GDN_MAX_DIMS];
        const int nd = expected_shape(f, v, s);
        if (nd == 0)
            continue;
        gdn_tensor *t = vw(f, v);
        int changed = t->ndim != nd;
        for (int i = 0; i < nd && !changed; i++)
            changed = t->shape[i] != s[i];
        if (!changed)
            continue;
        set_shape(t, nd, s);
        if (chance(1, 2))
            gen_strides(t, is_output_view(v));
    }
    if (f->vbuf[VCAP] == f->vbuf[VPOOL] && f->vbuf[VCAP] != BNONE) /* a shared pool stays one tensor */
        f->t.capture.states = f->t.state.pool;
}

/* ---------------------------------------------------------------------------------------------
 * The valid base call
 * ------------------------------------------------------------------------------------------- */

static const int dims_tab[][4] = {{2, 4, 16, 16}, {2, 4, 16, 8}, {1, 2, 32, 16}, {1, 1, 8, 4},
                                  {2, 6, 5, 3},   {3, 3, 16, 17}, {1, 4, 24, 8}};

static gdn_dtype pick_dtype(void)
{
    return chance(1, 2) ? GDN_DTYPE_F32 : chance(1, 2) ? GDN_DTYPE_BF16 : GDN_DTYPE_F16;
}

static int64_t seq_count(const fcase *f)
{
    return f->pbuf[PCU] != BNONE ? f->b.num_seqs : f->b.batch_size;
}

static void gen_base(fcase *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < LIVE_CAP; i++)
        f->rs[i] = f->ws[i] = f->cs[i] = -1;
    for (int v = 0; v < NVIEW; v++)
        f->vbuf[v] = BNONE;
    for (int i = 0; i < NPTR; i++)
        f->pbuf[i] = BNONE;

    gdn_problem *p = &f->p;
    const int *dm = dims_tab[rnd((int64_t)(sizeof dims_tab / sizeof dims_tab[0]))];
    p->num_k_heads = dm[0];
    p->num_v_heads = dm[1];
    p->k_dim = dm[2];
    p->v_dim = dm[3];
    p->head_map = (gdn_head_map)rnd(2);
    p->gate = (gdn_gate)rnd(4);
    p->scale = chance(1, 2) ? 0.0f : (float)unif(0.1, 1.0);
    p->qk_l2norm = (int)rnd(2);
    p->state_layout = (gdn_state_layout)rnd(2);
    p->dtype = pick_dtype();
    p->out_dtype = pick_dtype();
    p->gate_dtype = chance(1, 2) ? GDN_DTYPE_F32 : p->dtype;
    p->state_dtype = GDN_DTYPE_F32;
    p->algo = (gdn_algo)rnd(3);
    p->precision = (gdn_precision)rnd(3);
    const int64_t Hk = dm[0], Hv = dm[1], Dk = dm[2], Dv = dm[3];
    const int64_t Rw = p->state_layout == GDN_STATE_VK ? Dv : Dk, Cl = p->state_layout == GDN_STATE_VK ? Dk : Dv;

    /* batch */
    const int packed = chance(1, 2);
    int64_t B, T, N;
    f->cu_content = (gdn_index_type)rnd(2);
    f->b.cu_seqlens_type = f->cu_content;
    if (!packed) {
        B = 1 + rnd(3);
        T = chance(1, 8) ? 0 : 1 + rnd(5);
        N = B;
        f->cu[0] = 0;
        f->cu[1] = T;
        f->ncu = 2;
        f->b.num_seqs = chance(1, 2) ? 0 : N; /* ignored when dense */
    } else {
        B = 1;
        N = 1 + rnd(4);
        const int64_t empty = chance(1, 2) ? rnd(N) : -1;
        f->cu[0] = 0;
        for (int64_t n = 0; n < N; n++)
            f->cu[n + 1] = f->cu[n] + (n == empty ? 0 : rnd(5));
        f->ncu = (int)N + 1;
        T = f->cu[N];
        f->b.num_seqs = N;
        f->pbuf[PCU] = BCU;
    }
    f->b.batch_size = B;
    f->b.seq_len = T;

    /* inputs and output */
    const int64_t sq[4] = {B, T, Hk, Dk}, sv[4] = {B, T, Hv, Dv}, sg[3] = {B, T, Hv};
    set_shape(&f->t.q, 4, sq);
    set_shape(&f->t.k, 4, sq);
    set_shape(&f->t.v, 4, sv);
    set_shape(&f->t.g, 3, sg);
    set_shape(&f->t.beta, 3, sg);
    set_shape(&f->t.out, 4, sv);
    for (int v = VQ; v <= VOUT; v++) {
        gen_strides(vw(f, v), v == VOUT);
        f->vbuf[v] = v; /* BQ..BOUT have the numbers of VQ..VOUT */
        f->voff[v] = chance(1, 4) ? rnd(8) : 0;
    }
    if (chance(1, 8))
        f->vbuf[VOUT] = BNONE; /* replay: no output */
    if (p->gate == GDN_GATE_RAW || chance(1, 2)) {
        f->pbuf[PALOG] = BALOG;
        f->pbuf[PDTB] = BDTB;
    }

    /* state pool, slots */
    const int has_pool = chance(2, 3);
    int mode = (int)rnd(3);
    const int shared = mode == GDN_CAPTURE_SLOTS && has_pool && chance(1, 2);
    const int64_t TT = B * T;
    const int64_t S = 2 * N + 2 + (shared ? TT : 0) + rnd(3);
    const int rs_null = chance(1, 3), ws_null = chance(1, 3);
    int avail[64];
    int na = 0;
    for (int64_t s = rs_null ? N : 0; s < S; s++)
        avail[na++] = (int)s;
    gdn_rng_shuffle(&R, avail, na);
    int32_t r[8], w[8];
    for (int64_t n = 0; n < N; n++)
        r[n] = rs_null ? (int32_t)n : chance(1, 6) ? (int32_t)(-1 - rnd(3)) : avail[--na];
    for (int64_t n = 0; n < N; n++) {
        if (ws_null)
            w[n] = r[n];
        else if (r[n] >= 0 && chance(1, 3))
            w[n] = r[n];
        else if (chance(1, 6))
            w[n] = -1;
        else
            w[n] = avail[--na];
    }
    for (int64_t n = 0; n < N; n++) {
        f->rs[n] = r[n];
        f->ws[n] = w[n];
    }
    f->nrs = f->nws = N;
    f->pbuf[PRS] = rs_null ? BNONE : BRS;
    f->pbuf[PWS] = ws_null ? BNONE : BWS;
    {
        const int64_t sp[4] = {S, Hv, Rw, Cl};
        set_shape(&f->t.state.pool, 4, sp);
        gen_strides(&f->t.state.pool, 1);
        f->voff[VPOOL] = chance(1, 4) ? rnd(8) : 0;
        f->vbuf[VPOOL] = has_pool ? BPOOL : BNONE;
    }

    /* capture: mode NONE sometimes keeps a dense or slot descriptor for mutations to switch on */
    const int desc = mode != GDN_CAPTURE_NONE ? mode : (int)rnd(3);
    int64_t stride = 0, CSn = 0;
    if (desc == GDN_CAPTURE_DENSE) {
        const int64_t sc[5] = {B, T, Hv, Rw, Cl};
        set_shape(&f->t.capture.states, 5, sc);
        gen_strides(&f->t.capture.states, 1);
        f->vbuf[VCAP] = BDCAP;
        f->voff[VCAP] = chance(1, 4) ? rnd(8) : 0;
    } else if (desc == GDN_CAPTURE_SLOTS) {
        int64_t longest = 0;
        for (int64_t n = 0; n < N; n++)
            longest = imax(longest, packed ? f->cu[n + 1] - f->cu[n] : T);
        stride = chance(1, 2) ? 0 : longest + rnd(3);
        int cav[64];
        int nc = 0;
        if (shared) {
            CSn = S;
            memcpy(cav, avail, sizeof(int) * (size_t)na);
            nc = na;
            f->t.capture.states = f->t.state.pool;
            f->vbuf[VCAP] = BPOOL;
            f->voff[VCAP] = f->voff[VPOOL];
        } else {
            CSn = TT + 1 + rnd(3);
            for (int64_t s = 0; s < CSn; s++)
                cav[nc++] = (int)s;
            gdn_rng_shuffle(&R, cav, nc);
            const int64_t sc[4] = {CSn, Hv, Rw, Cl};
            set_shape(&f->t.capture.states, 4, sc);
            gen_strides(&f->t.capture.states, 1);
            f->vbuf[VCAP] = BCPOOL;
            f->voff[VCAP] = chance(1, 4) ? rnd(8) : 0;
        }
        for (int64_t n = 0; n < N; n++) {
            const int64_t b = packed ? 0 : n, t0 = packed ? f->cu[n] : 0, t1 = packed ? f->cu[n + 1] : T;
            for (int64_t j = 0; j < t1 - t0; j++) {
                const int last = j == t1 - t0 - 1;
                int32_t c;
                if (chance(1, 5))
                    c = -1;
                else if (shared && last && w[n] >= 0 && chance(1, 3))
                    c = w[n]; /* the state after the last token into its own write slot */
                else if (shared && j == 0 && r[n] >= 0 && r[n] != w[n] && chance(1, 4))
                    c = r[n]; /* into its own read slot */
                else
                    c = cav[--nc];
                f->cs[stride > 0 ? n * stride + j : b * T + t0 + j] = c;
            }
        }
        f->ncs = stride > 0 ? N * stride : TT;
        f->pbuf[PCS] = BCS;
    }
    f->t.capture.mode = (gdn_capture_mode)mode;
    f->t.capture.slots_stride = stride;

    snprintf(f->base, sizeof f->base,
             "%s B=%lld T=%lld N=%lld cu%s; Hk=%d Hv=%d Dk=%d Dv=%d %s gate=%d l2=%d %s dt=%d/%d/%d; out=%s; "
             "pool=%s S=%lld rs=%s ws=%s; capture=%d%s CS=%lld stride=%lld",
             packed ? "packed" : "dense", (long long)B, (long long)T, (long long)N,
             f->cu_content == GDN_INDEX_I64 ? "64" : "32", dm[0], dm[1], dm[2], dm[3],
             p->head_map ? "tiled" : "grouped", (int)p->gate, p->qk_l2norm, p->state_layout ? "kv" : "vk",
             (int)p->dtype, (int)p->out_dtype, (int)p->gate_dtype, f->vbuf[VOUT] == BNONE ? "none" : "yes",
             has_pool ? "yes" : "no", (long long)S, rs_null ? "NULL" : "set", ws_null ? "NULL" : "set", mode,
             shared ? " shared" : "", (long long)CSn, (long long)stride);
}

/* ---------------------------------------------------------------------------------------------
 * Mutations
 * ------------------------------------------------------------------------------------------- */

static const int wild32[] = {-1, 0, 1, 2, 3, 4, 7, 16, 255, 256, 257, 1000, INT_MAX, INT_MIN};
#define NWILD32 ((int64_t)(sizeof wild32 / sizeof wild32[0]))
static const int64_t wild64[] = {-1,
                                 0,
                                 1,
                                 2,
                                 3,
                                 7,
                                 257,
                                 INT32_MAX,
                                 (int64_t)INT32_MAX + 1,
                                 INT32_MIN,
                                 INT64_C(1) << 40,
                                 INT64_C(1) << 56,
                                 (INT64_C(1) << 56) + 1,
                                 INT64_C(1) << 60,
                                 INT64_C(1) << 62,
                                 INT64_MAX,
                                 INT64_MIN,
                                 -(INT64_C(1) << 40)};
#define NWILD64 ((int64_t)(sizeof wild64 / sizeof wild64[0]))

static const char *const pfield_name[] = {"num_k_heads", "num_v_heads", "k_dim", "v_dim", "head_map",
                                          "gate", "qk_l2norm", "state_layout", "dtype", "out_dtype",
                                          "gate_dtype", "state_dtype", "algo", "precision"};

static int get_pfield(const gdn_problem *p, int i)
{
    switch (i) {
    case 0: return p->num_k_heads;
    case 1: return p->num_v_heads;
    case 2: return p->k_dim;
    case 3: return p->v_dim;
    case 4: return (int)p->head_map;
    case 5: return (int)p->gate;
    case 6: return p->qk_l2norm;
    case 7: return (int)p->state_layout;
    case 8: return (int)p->dtype;
    case 9: return (int)p->out_dtype;
    case 10: return (int)p->gate_dtype;
    case 11: return (int)p->state_dtype;
    case 12: return (int)p->algo;
    default: return (int)p->precision;
    }
}

static void set_pfield(gdn_problem *p, int i, int x)
{
    switch (i) {
    case 0: p->num_k_heads = x; break;
    case 1: p->num_v_heads = x; break;
    case 2: p->k_dim = x; break;
    case 3: p->v_dim = x; break;
    case 4: p->head_map = (gdn_head_map)x; break;
    case 5: p->gate = (gdn_gate)x; break;
    case 6: p->qk_l2norm = x; break;
    case 7: p->state_layout = (gdn_state_layout)x; break;
    case 8: p->dtype = (gdn_dtype)x; break;
    case 9: p->out_dtype = (gdn_dtype)x; break;
    case 10: p->gate_dtype = (gdn_dtype)x; break;
    case 11: p->state_dtype = (gdn_dtype)x; break;
    case 12: p->algo = (gdn_algo)x; break;
    default: p->precision = (gdn_precision)x; break;
    }
}

/* Slot tables set to their defaults (read slot n, write = read) before a mutation edits one. */
static void materialize_slots(fcase *f)
{
    const int64_t N = imin(imax(seq_count(f), 0), LIVE_CAP);
    if (f->pbuf[PRS] == BNONE) {
        for (int64_t n = 0; n < N; n++)
            f->rs[n] = (int32_t)n;
        f->nrs = N;
        f->pbuf[PRS] = BRS;
    }
    if (f->pbuf[PWS] == BNONE) {
        for (int64_t n = 0; n < N; n++)
            f->ws[n] = f->rs[n];
        f->nws = N;
        f->pbuf[PWS] = BWS;
    }
}

static void mutate(fcase *f, char *log, size_t len)
{
    gdn_problem *p = &f->p;
    gdn_batch *b = &f->b;
    snprintf(log, len, "(no effect)");
    const int kind = (int)rnd(31);
    switch (kind) {
    case 0:
    case 1:
    case 2: { /* an integer field of the problem */
        const int i = (int)rnd(14), old = get_pfield(p, i);
        const int x = chance(1, 3) ? (int)((unsigned)old + (chance(1, 2) ? 1u : 0xffffffffu)) : wild32[rnd(NWILD32)];
        set_pfield(p, i, x);
        snprintf(log, len, "problem.%s = %d (was %d)", pfield_name[i], x, old);
        break;
    }
    case 3: { /* scale */
        static const float vals[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -1.5f, 0.05f};
        p->scale = vals[rnd(8)];
        snprintf(log, len, "problem.scale = %g", (double)p->scale);
        break;
    }
    case 4: { /* dims, coherently: every shape follows */
        static const int dk[] = {1, 2, 3, 8, 16, 24, 32, 257}, dv[] = {1, 2, 5, 8, 16, 32, 257};
        const int hk = 1 + (int)rnd(3);
        p->num_k_heads = hk;
        p->num_v_heads = hk * (1 + (int)rnd(3)) + (chance(1, 8) ? 1 : 0);
        if (chance(1, 2))
            p->k_dim = dk[rnd(8)];
        if (chance(1, 2))
            p->v_dim = dv[rnd(7)];
        reshape_views(f);
        snprintf(log, len, "coherent dims Hk=%d Hv=%d Dk=%d Dv=%d", p->num_k_heads, p->num_v_heads, p->k_dim,
                 p->v_dim);
        break;
    }
    case 5:
    case 6: { /* a batch field */
        const int i = (int)rnd(4);
        if (i < 3) {
            int64_t *fld = i == 0 ? &b->batch_size : i == 1 ? &b->seq_len : &b->num_seqs;
            const int64_t old = *fld;
            *fld = chance(1, 3) ? (int64_t)((uint64_t)old + (chance(1, 2) ? 1u : UINT64_MAX)) : wild64[rnd(NWILD64)];
            snprintf(log, len, "batch.%s = %lld (was %lld)", i == 0 ? "batch_size" : i == 1 ? "seq_len" : "num_seqs",
                     (long long)*fld, (long long)old);
        } else {
            static const int vals[] = {-1, 2, 7, 0, 1};
            const int old = (int)b->cu_seqlens_type, x = vals[rnd(5)];
            b->cu_seqlens_type = (gdn_index_type)x;
            const int reenc = (x == 0 || x == 1) && chance(1, 2);
            if (reenc)
                f->cu_content = (gdn_index_type)x;
            snprintf(log, len, "batch.cu_seqlens_type = %d (was %d)%s", x, old, reenc ? ", contents re-encoded" : "");
        }
        break;
    }
    case 7: { /* batch, coherently: dense B and T, or a new packed split */
        if (f->pbuf[PCU] == BNONE) {
            b->batch_size = 1 + rnd(3);
            b->seq_len = rnd(6);
            f->cu[0] = 0;
            f->cu[1] = b->seq_len;
            f->ncu = 2;
            snprintf(log, len, "coherent dense batch B=%lld T=%lld", (long long)b->batch_size, (long long)b->seq_len);
        } else {
            const int64_t N = 1 + rnd(5);
            f->cu[0] = 0;
            for (int64_t n = 0; n < N; n++)
                f->cu[n + 1] = f->cu[n] + (chance(1, 3) ? 0 : rnd(5));
            f->ncu = (int)N + 1;
            b->num_seqs = N;
            b->seq_len = f->cu[N];
            b->batch_size = 1;
            snprintf(log, len, "coherent packed split N=%lld T=%lld", (long long)N, (long long)b->seq_len);
        }
        reshape_views(f);
        break;
    }
    case 8:
    case 9: { /* a cu_seqlens value */
        int i = (int)rnd(f->ncu + 1);
        if (i >= CU_LIVE_MAX)
            i = f->ncu - 1;
        const int64_t old = i < f->ncu ? f->cu[i] : f->cu[f->ncu - 1], T = b->seq_len;
        const int64_t vals[] = {-1, 0, T, wadd(T, 1), wadd(old, -1), wadd(old, 1), INT32_MAX, INT32_MIN,
                                INT64_C(1) << 40, 2};
        if (i == f->ncu)
            f->ncu++;
        f->cu[i] = vals[rnd(10)];
        snprintf(log, len, "cu_seqlens[%d] = %lld (was %lld)", i, (long long)f->cu[i], (long long)old);
        break;
    }
    case 10: /* cu_seqlens on / off */
        f->pbuf[PCU] = f->pbuf[PCU] == BNONE ? BCU : BNONE;
        snprintf(log, len, "batch.cu_seqlens %s", f->pbuf[PCU] == BNONE ? "= NULL" : "set");
        break;
    case 11:
    case 12: { /* a shape entry */
        const int v = (int)rnd(NVIEW), i = (int)rnd(GDN_MAX_DIMS);
        gdn_tensor *t = vw(f, v);
        const int64_t old = t->shape[i];
        int64_t x;
        if ((v == VPOOL || v == VCAP) && i == 0) {
            /* slot counts: small, or 2^40 (8 TiB of slot stamps: calloc fails at once). Not 2^31: a
               16 GiB calloc may succeed, slowly under ASan */
            const int64_t vals[] = {0, -1, 1, wadd(old, -1), wadd(old, 1), wadd(old, 8), INT64_MIN, INT64_C(1) << 40};
            x = vals[rnd(chance(1, 4) ? 8 : 7)];
        } else {
            const int64_t vals[] = {wadd(old, -1), wadd(old, 1), 0, -1, 1, 2, INT64_C(1) << 31, INT64_C(1) << 40,
                                    INT64_MAX, INT64_MIN};
            x = vals[rnd(10)];
        }
        t->shape[i] = x;
        snprintf(log, len, "%s.shape[%d] = %lld (was %lld)", view_name[v], i, (long long)x, (long long)old);
        break;
    }
    case 13: { /* a rank */
        const int v = (int)rnd(NVIEW);
        gdn_tensor *t = vw(f, v);
        const int old = t->ndim;
        const int vals[] = {-1, 0, (int)((unsigned)old - 1u), (int)((unsigned)old + 1u), 5, 6, INT_MAX, INT_MIN};
        t->ndim = vals[rnd(8)];
        snprintf(log, len, "%s.ndim = %d (was %d)", view_name[v], t->ndim, old);
        break;
    }
    case 14:
    case 15:
    case 16: { /* a stride: plausible or wild */
        const int v = (int)rnd(NVIEW);
        gdn_tensor *t = vw(f, v);
        const int nd = t->ndim >= 1 && t->ndim <= GDN_MAX_DIMS ? t->ndim : GDN_MAX_DIMS;
        const int i = (int)rnd(chance(7, 8) ? nd : GDN_MAX_DIMS);
        int all_zero = 1;
        for (int d = 0; d < GDN_MAX_DIMS; d++)
            all_zero &= t->strides[d] == 0;
        if (all_zero && nd <= GDN_MAX_DIMS && chance(1, 2)) { /* explicit contiguous first */
            int64_t s = 1;
            for (int d = nd - 1; d >= 0; d--) {
                t->strides[d] = s;
                s = sat_mul(s, imax(t->shape[d], 1));
            }
        }
        const int64_t old = t->strides[i];
        int64_t x;
        if (chance(1, 2)) {
            const int64_t vals[] = {0, 1, 2, wadd(old, 1), wadd(old, old), wadd(old, 16), 3};
            x = vals[rnd(7)];
        } else {
            const int64_t vals[] = {-1, -2, -(INT64_C(1) << 40), INT64_C(1) << 40, INT64_C(1) << 56,
                                    (INT64_C(1) << 56) + 1, INT64_C(1) << 60, INT64_MAX, INT64_MIN};
            x = vals[rnd(9)];
        }
        t->strides[i] = x;
        snprintf(log, len, "%s.strides[%d] = %lld (was %lld)", view_name[v], i, (long long)x, (long long)old);
        break;
    }
    case 17: { /* strides reset: contiguous, or new explicit ones */
        const int v = (int)rnd(NVIEW);
        gdn_tensor *t = vw(f, v);
        if (t->ndim < 1 || t->ndim > GDN_MAX_DIMS)
            break;
        if (chance(1, 2))
            for (int d = 0; d < GDN_MAX_DIMS; d++)
                t->strides[d] = 0;
        else
            gen_strides(t, is_output_view(v));
        snprintf(log, len, "%s.strides = [%lld,%lld,%lld,%lld,%lld]", view_name[v], (long long)t->strides[0],
                 (long long)t->strides[1], (long long)t->strides[2], (long long)t->strides[3],
                 (long long)t->strides[4]);
        break;
    }
    case 18:
    case 19: { /* a pointer to NULL, or back */
        const int i = (int)rnd(NVIEW + NPTR);
        if (i < NVIEW) {
            const int def = i == VCAP ? (f->t.capture.states.ndim == 5 ? BDCAP : BCPOOL) : i;
            f->vbuf[i] = f->vbuf[i] == BNONE ? def : BNONE;
            snprintf(log, len, "%s.data %s", view_name[i], f->vbuf[i] == BNONE ? "= NULL" : "set");
        } else {
            const int j = i - NVIEW;
            f->pbuf[j] = f->pbuf[j] == BNONE ? ptr_buf[j] : BNONE;
            snprintf(log, len, "%s %s", ptr_name[j], f->pbuf[j] == BNONE ? "= NULL" : "set");
        }
        break;
    }
    case 20: { /* a data offset */
        const int v = (int)rnd(NVIEW);
        f->voff[v] += 1 + rnd(8);
        snprintf(log, len, "%s.data += %lld elements", view_name[v], (long long)f->voff[v]);
        break;
    }
    case 21:
    case 22: { /* a read or write slot */
        materialize_slots(f);
        const int which = (int)rnd(2);
        int32_t *a = which ? f->ws : f->rs;
        const int64_t N = imin(imax(seq_count(f), 1), LIVE_CAP - 1), n = rnd(N + 1), o = rnd(N);
        const int64_t S = f->t.state.pool.shape[0];
        const int64_t vals[] = {-1, -7, 0, 1, wadd(S, -1), S, wadd(S, 1), INT32_MAX, INT32_MIN,
                                f->rs[o], f->ws[o], f->rs[n]};
        const int32_t old = a[n];
        a[n] = (int32_t)vals[rnd(12)];
        if (which)
            f->nws = imax(f->nws, n + 1);
        else
            f->nrs = imax(f->nrs, n + 1);
        snprintf(log, len, "state.%s_slots[%lld] = %d (was %d)", which ? "write" : "read", (long long)n, a[n], old);
        break;
    }
    case 23:
    case 24: { /* a capture slot */
        const int64_t nc = imin(imax(f->ncs, 1), LIVE_CAP - 1), i = rnd(nc + 1), o = rnd(nc);
        const int64_t CSn = f->t.capture.states.shape[0];
        const int64_t vals[] = {-1, 0, wadd(CSn, -1), CSn, wadd(CSn, 3), INT32_MAX, INT32_MIN,
                                f->rs[rnd(4)], f->ws[rnd(4)], f->cs[o]};
        const int32_t old = f->cs[i];
        f->cs[i] = (int32_t)vals[rnd(10)];
        f->ncs = imax(f->ncs, i + 1);
        if (f->pbuf[PCS] == BNONE && chance(1, 2))
            f->pbuf[PCS] = BCS;
        snprintf(log, len, "capture.slots[%lld] = %d (was %d)", (long long)i, f->cs[i], old);
        break;
    }
    case 25: { /* slots_stride */
        int64_t longest = 0;
        for (int i = 0; i + 1 < f->ncu; i++)
            longest = imax(longest, wadd(f->cu[i + 1], -f->cu[i]));
        if (f->pbuf[PCU] == BNONE)
            longest = b->seq_len;
        const int64_t vals[] = {-1, -(INT64_C(1) << 40), INT64_MIN, 0, 1, wadd(longest, -1), longest,
                                wadd(longest, 3), INT64_C(1) << 40};
        const int64_t old = f->t.capture.slots_stride;
        f->t.capture.slots_stride = vals[rnd(9)];
        snprintf(log, len, "capture.slots_stride = %lld (was %lld)", (long long)f->t.capture.slots_stride,
                 (long long)old);
        break;
    }
    case 26: { /* capture mode */
        static const int vals[] = {-1, 0, 1, 2, 3, 7};
        const int old = (int)f->t.capture.mode;
        f->t.capture.mode = (gdn_capture_mode)vals[rnd(6)];
        if (f->t.capture.mode == GDN_CAPTURE_SLOTS && f->pbuf[PCS] == BNONE && chance(1, 2))
            f->pbuf[PCS] = BCS;
        snprintf(log, len, "capture.mode = %d (was %d)", (int)f->t.capture.mode, old);
        break;
    }
    case 27: /* capture into the state pool itself */
        f->t.capture.states = f->t.state.pool;
        f->vbuf[VCAP] = f->vbuf[VPOOL];
        f->voff[VCAP] = f->voff[VPOOL];
        snprintf(log, len, "capture.states = state.pool");
        break;
    case 28: { /* a whole argument NULL (ctx, problem, batch, tensors), or a slot table NULL / set */
        const int i = (int)rnd(6);
        if (i == 0)
            f->null_ctx = 1;
        else if (i == 1)
            f->null_problem = 1;
        else if (i == 2)
            f->null_batch = 1;
        else if (i == 3)
            f->null_tensors = 1;
        else {
            const int j = i == 4 ? PRS : PWS;
            f->pbuf[j] = f->pbuf[j] == BNONE ? ptr_buf[j] : BNONE;
        }
        static const char *const what[] = {"ctx = NULL", "problem = NULL", "batch = NULL", "tensors = NULL",
                                           "state.read_slots toggled", "state.write_slots toggled"};
        snprintf(log, len, "%s", what[i]);
        break;
    }
    case 30: { /* capture into the state pool, with another slot count than the pool's */
        if (f->vbuf[VPOOL] == BNONE)
            break;
        f->t.capture.states = f->t.state.pool;
        f->vbuf[VCAP] = f->vbuf[VPOOL];
        f->voff[VCAP] = f->voff[VPOOL];
        if (f->pbuf[PCS] == BNONE)
            f->pbuf[PCS] = BCS;
        const int which = (int)rnd(2);
        gdn_tensor *t = which ? &f->t.capture.states : &f->t.state.pool;
        const int64_t old = t->shape[0];
        t->shape[0] = wadd(old, chance(1, 2) ? 1 + rnd(2) : -1 - rnd(2));
        snprintf(log, len, "capture.states = state.pool, then %s.shape[0] = %lld (was %lld)",
                 which ? "capture.states" : "state.pool", (long long)t->shape[0], (long long)old);
        break;
    }
    default: { /* qk_l2norm / head map / gate / layout / dtypes / precision: valid values */
        const int i = chance(1, 8) ? 13 : 4 + (int)rnd(7);
        const int old = get_pfield(p, i);
        const int x = i == 6 ? (int)rnd(3) - 1 : i == 5 ? (int)rnd(4) : i >= 8 ? (int)rnd(3) : (int)rnd(2);
        set_pfield(p, i, x);
        if (i == 7)
            reshape_views(f);
        snprintf(log, len, "problem.%s = %d (was %d, valid value)", pfield_name[i], x, old);
        break;
    }
    }
}

/* ---------------------------------------------------------------------------------------------
 * The model: gdn.h's rules, applied to the mutated descriptors
 * ------------------------------------------------------------------------------------------- */

typedef struct model {
    int kinds;                  /* 1: an INVALID_ARGUMENT fault, 2: an UNSUPPORTED fault */
    int ntag;
    const char *tag[MAX_TAGS];  /* the arguments at fault (a message starts with one) */
    int tag_kind[MAX_TAGS];
    int oom_ok;                 /* valid, but the slot checks may run out of memory */
    int lenient;                /* valid, but a rejection naming one of the tags is fine too */
    const char *skip;           /* the call cannot be made inside the harness's memory */
    int64_t B, T, N;
    int64_t cuv[CU_CAP_BYTES / 4 + 2];
    int64_t st[NVIEW][GDN_MAX_DIMS]; /* resolved strides of the valid views */
    int same_pool;
    int overlap;                /* valid, but output elements share memory: 1 out, 2 pool, 4 capture, 8 the
                                   capture pool is the state pool's memory under another layout */
    int64_t pool_lim, cap_lim;  /* highest slot referenced + 1 */
    int64_t need[NBUF];         /* bytes each buffer gets */
    unsigned char cu_img[CU_CAP_BYTES];
    int64_t cu_len;
    int64_t rs_len, ws_len, cs_len; /* entries of the slot tables */
} model;

static void fault(model *m, int kind, const char *tag)
{
    m->kinds |= kind;
    if (m->ntag < MAX_TAGS) {
        m->tag[m->ntag] = tag;
        m->tag_kind[m->ntag++] = kind;
    }
}

/* A valid call that gdn may also reject (INVALID_ARGUMENT naming tag): gdn.h leaves it open. */
static void allow_reject(model *m, const char *tag)
{
    m->lenient = 1;
    if (m->ntag < MAX_TAGS) {
        m->tag[m->ntag] = tag;
        m->tag_kind[m->ntag++] = 1;
    }
}

/* cu_seqlens as the harness will store it: the live values in the content type, the last one
 * repeated to the (N+1)-entry length the declared type needs, or a 0xFF tail when that length is
 * more than CU_CAP_BYTES, so that any longer read meets a -1 (decreasing) and stops. */
static void build_cu(const fcase *f, model *m)
{
    const int64_t des = f->b.cu_seqlens_type == GDN_INDEX_I32 ? 4 : 8, ces = f->cu_content == GDN_INDEX_I64 ? 8 : 4;
    const int64_t N = f->b.num_seqs;
    int64_t len = (int64_t)f->ncu * ces, tail = 0;
    if (N >= 0 && N < CU_CAP_BYTES)
        len = imax(len, (N + 1) * des);
    else
        len = CU_CAP_BYTES, tail = 1;
    if (len > CU_CAP_BYTES)
        len = CU_CAP_BYTES, tail = 1;
    for (int64_t i = 0; (i + 1) * ces <= len; i++) {
        const int64_t x = i < f->ncu ? f->cu[i] : f->cu[f->ncu - 1];
        if (ces == 8)
            memcpy(m->cu_img + i * 8, &x, 8);
        else {
            const int32_t y = (int32_t)x;
            memcpy(m->cu_img + i * 4, &y, 4);
        }
    }
    if (tail)
        memset(m->cu_img + len - 16, 0xFF, 16);
    m->cu_len = len;
}

static int cu_read(const model *m, gdn_index_type type, int64_t i, int64_t *out)
{
    const int64_t es = type == GDN_INDEX_I64 ? 8 : 4;
    if (i < 0 || i >= m->cu_len / es)
        return 0;
    if (es == 8)
        memcpy(out, m->cu_img + i * 8, 8);
    else {
        int32_t y;
        memcpy(&y, m->cu_img + i * 4, 4);
        *out = y;
    }
    return 1;
}

/* Resolved strides of a descriptor: explicit, or C-contiguous when all zero (saturating). 0 if the
 * rank is out of range or a stride negative. */
static int resolve(const gdn_tensor *t, int64_t *st)
{
    const int nd = t->ndim;
    if (nd < 1 || nd > GDN_MAX_DIMS)
        return 0;
    int all_zero = 1;
    for (int i = 0; i < nd; i++)
        all_zero &= t->strides[i] == 0;
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        if (t->strides[i] < 0)
            return 0;
        st[i] = all_zero ? s : t->strides[i];
        s = sat_mul(s, imax(t->shape[i], 1));
    }
    return 1;
}

/* Elements from the first to one past the last element a view spans (dim 0 limited to lim0 slots
 * when lim0 >= 0), saturating; 0 when empty, -1 when the descriptor makes no sense. */
static int64_t span_of(const gdn_tensor *t, const int64_t *st, int64_t lim0)
{
    int64_t last = 0;
    for (int i = 0; i < t->ndim; i++) {
        int64_t ext = t->shape[i];
        if (i == 0 && lim0 >= 0)
            ext = imin(ext, lim0);
        if (ext < 0)
            return -1;
        if (ext == 0)
            return 0;
        last = sat_add(last, sat_mul(ext - 1, st[i]));
    }
    return sat_add(last, 1);
}

/* One view against gdn.h: data, rank, exact shape, strides >= 0 (all zero = contiguous), outputs
 * without zero strides on extents > 1, and the implementation's 2^56-element limit (docs/DESIGN.md). */
static void model_view(model *m, const fcase *f, int v, const char *tag, int nd, const int64_t *shape,
                       int is_output)
{
    const gdn_tensor *t = cvw(f, v);
    if (f->vbuf[v] == BNONE) {
        fault(m, 1, tag);
        return;
    }
    if (t->ndim != nd) {
        fault(m, 1, tag);
        return;
    }
    for (int i = 0; i < nd; i++)
        if (t->shape[i] != shape[i]) {
            fault(m, 1, tag);
            return;
        }
    const int64_t lim = INT64_C(1) << 56;
    int all_zero = 1;
    for (int i = 0; i < nd; i++)
        all_zero &= t->strides[i] == 0;
    int64_t *st = m->st[v];
    if (all_zero) {
        int64_t s = 1;
        for (int i = nd - 1; i >= 0; i--) {
            st[i] = s;
            if (shape[i] > 0 && s > lim / shape[i]) {
                fault(m, 1, tag);
                return;
            }
            s *= shape[i];
        }
    } else {
        for (int i = 0; i < nd; i++) {
            if (t->strides[i] < 0 || (is_output && t->strides[i] == 0 && shape[i] > 1)) {
                fault(m, 1, tag);
                return;
            }
            st[i] = t->strides[i];
        }
        /* outputs must be nested (gdn.h): by increasing stride, each stride passes the span below */
        if (is_output) {
            int order[GDN_MAX_DIMS], k = 0, empty = 0;
            for (int i = 0; i < nd; i++) {
                empty |= shape[i] == 0;
                if (shape[i] > 1)
                    order[k++] = i;
            }
            for (int i = 1; i < k; i++)
                for (int j = i; j > 0 && st[order[j]] < st[order[j - 1]]; j--) {
                    const int x = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = x;
                }
            int64_t below = 0;
            for (int i = 0; i < k && !empty; i++) {
                if (st[order[i]] <= below) {
                    fault(m, 1, tag);
                    return;
                }
                below = sat_add(below, sat_mul(shape[order[i]] - 1, st[order[i]]));
            }
        }
    }
    int64_t last = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 0)
            break;
        if (shape[i] > 1 && st[i] > lim / (shape[i] - 1)) {
            fault(m, 1, tag);
            return;
        }
        last += (shape[i] - 1) * st[i];
        if (last > lim) {
            fault(m, 1, tag);
            return;
        }
    }
}

/* Sequence n: batch row *b, tokens [*t0, *t1) (valid batches only). */
static void model_seq(const fcase *f, const model *m, int64_t n, int64_t *b, int64_t *t0, int64_t *t1)
{
    if (f->pbuf[PCU] != BNONE) {
        *b = 0;
        *t0 = m->cuv[n];
        *t1 = m->cuv[n + 1];
    } else {
        *b = n;
        *t0 = 0;
        *t1 = m->T;
    }
}

static int32_t rs_of(const fcase *f, int64_t n)
{
    if (f->pbuf[PRS] == BNONE)
        return (int32_t)n;
    return n < LIVE_CAP ? f->rs[n] : -1;
}

static int32_t ws_of(const fcase *f, int64_t n)
{
    if (f->pbuf[PWS] == BNONE)
        return rs_of(f, n);
    return n < LIVE_CAP ? f->ws[n] : -1;
}

static int64_t cs_index(const fcase *f, const model *m, int64_t n, int64_t j, int64_t b, int64_t t)
{
    return f->t.capture.slots_stride > 0 ? n * f->t.capture.slots_stride + j : b * m->T + t;
}

static int32_t cs_at(const fcase *f, int64_t idx)
{
    return idx >= 0 && idx < LIVE_CAP ? f->cs[idx] : -1;
}

static void model_slots(const fcase *f, model *m)
{
    const int has_pool = f->vbuf[VPOOL] != BNONE;
    const int slots_mode = f->t.capture.mode == GDN_CAPTURE_SLOTS;
    const int64_t S = has_pool ? f->t.state.pool.shape[0] : 0, CSn = slots_mode ? f->t.capture.states.shape[0] : 0;
    const int64_t N = m->N, stride = f->t.capture.slots_stride;
    m->same_pool = slots_mode && has_pool && f->vbuf[VCAP] == f->vbuf[VPOOL] && f->voff[VCAP] == f->voff[VPOOL];
    if (N > (INT64_C(1) << 16)) {
        m->skip = "more sequences than the harness models";
        return;
    }
    if (has_pool && (f->pbuf[PRS] != BNONE || f->pbuf[PWS] != BNONE) && N > IDX_CAP) {
        m->skip = "slot tables longer than the harness's";
        return;
    }
    if (has_pool) {
        m->rs_len = f->pbuf[PRS] != BNONE ? N : 0;
        m->ws_len = f->pbuf[PWS] != BNONE ? N : 0;
    }
    if (slots_mode)
        for (int64_t n = 0; n < N; n++) {
            int64_t b, t0, t1;
            model_seq(f, m, n, &b, &t0, &t1);
            if (t1 == t0)
                continue;
            if (stride > 0 && n > 0 && stride > CS_CAP / n) {
                m->skip = "capture.slots table (n * slots_stride) larger than the harness's";
                return;
            }
            const int64_t last = cs_index(f, m, n, t1 - t0 - 1, b, t1 - 1);
            if (last >= CS_CAP) {
                m->skip = "capture.slots table larger than the harness's";
                return;
            }
            m->cs_len = imax(m->cs_len, last + 1);
        }

    /* ranges */
    int bad = 0;
    for (int64_t n = 0; n < N && has_pool; n++) {
        if (rs_of(f, n) >= S)
            fault(m, 1, "state.read_slots"), bad = 1;
        if (ws_of(f, n) >= S)
            fault(m, 1, "state.write_slots"), bad = 1;
    }
    for (int64_t n = 0; n < N && slots_mode; n++) {
        int64_t b, t0, t1;
        model_seq(f, m, n, &b, &t0, &t1);
        for (int64_t t = t0; t < t1; t++)
            if (cs_at(f, cs_index(f, m, n, t - t0, b, t)) >= CSn)
                fault(m, 1, "capture.slots"), bad = 1;
    }
    if (bad)
        return;
    /* the slot checks allocate a stamp per slot (before the conflict checks) */
    const int64_t big = INT64_C(1) << 24;
    m->oom_ok = (has_pool && S > big) || (slots_mode && CSn > big);

    /* conflicts: written slots distinct and not read by another sequence */
    for (int64_t n = 0; n < N && has_pool; n++) {
        const int32_t w = ws_of(f, n);
        if (w < 0)
            continue;
        for (int64_t o = 0; o < N; o++)
            if (o != n && (rs_of(f, o) == w || ws_of(f, o) == w))
                fault(m, 1, "state.write_slots");
    }
    /* captured slots distinct; in the state pool also distinct from the slots other sequences read
     * or write; allowed: its own read slot, and its own write slot after its last token */
    if (slots_mode) {
        int64_t ncap = 0;
        static int64_t capslot[CS_CAP];
        for (int64_t n = 0; n < N; n++) {
            int64_t b, t0, t1;
            model_seq(f, m, n, &b, &t0, &t1);
            for (int64_t t = t0; t < t1; t++) {
                const int32_t c = cs_at(f, cs_index(f, m, n, t - t0, b, t));
                if (c < 0)
                    continue;
                if (m->same_pool) {
                    const int32_t w = ws_of(f, n);
                    if (c == w && t == t1 - 1)
                        continue;
                    if (c == w)
                        fault(m, 1, "capture.slots");
                    for (int64_t o = 0; o < N; o++)
                        if (o != n && (rs_of(f, o) == c || ws_of(f, o) == c))
                            fault(m, 1, "capture.slots");
                }
                for (int64_t i = 0; i < ncap; i++)
                    if (capslot[i] == c)
                        fault(m, 1, "capture.slots");
                if (ncap < CS_CAP)
                    capslot[ncap++] = c;
            }
        }
    }
    if (m->kinds)
        return;
    /* capture.states is the state pool's memory with another slot count: gdn.h allows "the state pool
       itself"; whether a pool of another length at the same address is that is open, so both an
       acceptance and a rejection naming the pools are fine */
    if (m->same_pool && CSn != S) {
        allow_reject(m, "capture.states");
        allow_reject(m, "state.pool");
        allow_reject(m, "capture.slots");
    }

    /* slots the call touches */
    m->pool_lim = m->cap_lim = 0;
    for (int64_t n = 0; n < N && has_pool; n++) {
        m->pool_lim = imax(m->pool_lim, (int64_t)rs_of(f, n) + 1);
        m->pool_lim = imax(m->pool_lim, (int64_t)ws_of(f, n) + 1);
    }
    for (int64_t n = 0; n < N && slots_mode; n++) {
        int64_t b, t0, t1;
        model_seq(f, m, n, &b, &t0, &t1);
        for (int64_t t = t0; t < t1; t++)
            m->cap_lim = imax(m->cap_lim, (int64_t)cs_at(f, cs_index(f, m, n, t - t0, b, t)) + 1);
    }
    if (m->same_pool)
        m->pool_lim = m->cap_lim = imax(m->pool_lim, m->cap_lim);
}

static void model_run(const fcase *f, model *m)
{
    memset(m, 0, sizeof *m);
    build_cu(f, m);
    if (f->null_problem)
        fault(m, 1, "problem");
    if (f->null_batch)
        fault(m, 1, "batch");
    if (f->null_tensors)
        fault(m, 1, "tensors");
    if (m->kinds)
        return;

    /* problem */
    const gdn_problem *p = &f->p;
    const int Hk = p->num_k_heads, Hv = p->num_v_heads, Dk = p->k_dim, Dv = p->v_dim;
    int dims_ok = 1;
    if (Hk < 1)
        fault(m, 1, "problem.num_k_heads"), dims_ok = 0;
    if (Hv < 1)
        fault(m, 1, "problem.num_v_heads"), dims_ok = 0;
    else if (Hk >= 1 && Hv % Hk != 0)
        fault(m, 1, "problem.num_v_heads"), dims_ok = 0;
    if (Dk < 1)
        fault(m, 1, "problem.k_dim"), dims_ok = 0;
    if (Dv < 1)
        fault(m, 1, "problem.v_dim"), dims_ok = 0;
    if (Dk > GDN_MAX_HEAD_DIM)
        fault(m, 2, "problem.k_dim");
    if (Dv > GDN_MAX_HEAD_DIM)
        fault(m, 2, "problem.v_dim");
    if ((int)p->head_map != 0 && (int)p->head_map != 1)
        fault(m, 1, "problem.head_map");
    const int gate = (int)p->gate;
    if (gate < 0 || gate > 3)
        fault(m, 1, "problem.gate");
    if (!isfinite(p->scale))
        fault(m, 1, "problem.scale");
    const int layout = (int)p->state_layout, layout_ok = layout == 0 || layout == 1;
    if (!layout_ok)
        fault(m, 1, "problem.state_layout");
    if (!dtype_ok((int)p->dtype))
        fault(m, 1, "problem.dtype");
    if (!dtype_ok((int)p->out_dtype))
        fault(m, 1, "problem.out_dtype");
    if (!dtype_ok((int)p->gate_dtype))
        fault(m, 1, "problem.gate_dtype");
    else if (p->gate_dtype != GDN_DTYPE_F32 && p->gate_dtype != p->dtype)
        fault(m, 1, "problem.gate_dtype");
    if (!dtype_ok((int)p->state_dtype))
        fault(m, 1, "problem.state_dtype");
    else if (p->state_dtype != GDN_DTYPE_F32)
        fault(m, 2, "problem.state_dtype");
    if ((int)p->algo < 0 || (int)p->algo > 2) /* chunked: supported on the CPU backend */
        fault(m, 1, "problem.algo");
    if ((int)p->precision < 0 || (int)p->precision > 2) /* default, f32, bf16 */
        fault(m, 1, "problem.precision");

    /* batch */
    const gdn_batch *ba = &f->b;
    int batch_ok = 1;
    if (ba->batch_size < 1)
        fault(m, 1, "batch.batch_size"), batch_ok = 0;
    if (ba->seq_len < 0)
        fault(m, 1, "batch.seq_len"), batch_ok = 0;
    const int packed = f->pbuf[PCU] != BNONE;
    if (packed) {
        const int type = (int)ba->cu_seqlens_type;
        if (type != 0 && type != 1)
            fault(m, 1, "batch.cu_seqlens_type"), batch_ok = 0;
        if (ba->batch_size != 1)
            fault(m, 1, "batch.batch_size"), batch_ok = 0;
        if (ba->num_seqs < 1)
            fault(m, 1, "batch.num_seqs"), batch_ok = 0;
        if ((type == 0 || type == 1) && ba->num_seqs >= 1) {
            const int64_t N = ba->num_seqs;
            int cu_ok = 1;
            if (!cu_read(m, (gdn_index_type)type, 0, &m->cuv[0]) || m->cuv[0] != 0)
                cu_ok = 0;
            for (int64_t n = 0; n < N && cu_ok; n++) {
                int64_t x;
                if (!cu_read(m, (gdn_index_type)type, n + 1, &x)) {
                    m->skip = "harness: cu_seqlens read past its buffer (no -1 tail met)";
                    return;
                }
                m->cuv[n + 1] = x;
                if (x < m->cuv[n] || x > ba->seq_len)
                    cu_ok = 0;
            }
            if (cu_ok && m->cuv[N] != ba->seq_len)
                cu_ok = 0;
            if (!cu_ok)
                fault(m, 1, "cu_seqlens"), batch_ok = 0;
        }
    }
    if (!dims_ok || !batch_ok)
        return;
    m->B = ba->batch_size;
    m->T = ba->seq_len;
    m->N = packed ? ba->num_seqs : ba->batch_size;

    /* tensors */
    const int64_t B = m->B, T = m->T;
    const int64_t sq[4] = {B, T, Hk, Dk}, sv[4] = {B, T, Hv, Dv}, sg[3] = {B, T, Hv};
    model_view(m, f, VQ, "q", 4, sq, 0);
    model_view(m, f, VK, "k", 4, sq, 0);
    model_view(m, f, VV, "v", 4, sv, 0);
    model_view(m, f, VG, "g", 3, sg, 0);
    model_view(m, f, VBETA, "beta", 3, sg, 0);
    if (f->vbuf[VOUT] != BNONE)
        model_view(m, f, VOUT, "out", 4, sv, 1);
    if (gate == GDN_GATE_RAW) {
        if (f->pbuf[PALOG] == BNONE)
            fault(m, 1, "A_log");
        if (f->pbuf[PDTB] == BNONE)
            fault(m, 1, "dt_bias");
    }
    if (!layout_ok)
        return;
    const int64_t Rw = layout == GDN_STATE_VK ? Dv : Dk, Cl = layout == GDN_STATE_VK ? Dk : Dv;
    if (f->vbuf[VPOOL] != BNONE) {
        const gdn_tensor *t = &f->t.state.pool;
        if (t->ndim != 4 || t->shape[0] < 1)
            fault(m, 1, "state.pool");
        else {
            const int64_t ss[4] = {t->shape[0], Hv, Rw, Cl};
            model_view(m, f, VPOOL, "state.pool", 4, ss, 1);
        }
    }
    const gdn_capture *c = &f->t.capture;
    switch ((int)c->mode) {
    case GDN_CAPTURE_NONE: break;
    case GDN_CAPTURE_DENSE: {
        const int64_t sc[5] = {B, T, Hv, Rw, Cl};
        model_view(m, f, VCAP, "capture.states", 5, sc, 1);
        break;
    }
    case GDN_CAPTURE_SLOTS: {
        const gdn_tensor *t = &c->states;
        if (f->vbuf[VCAP] == BNONE || t->ndim != 4 || t->shape[0] < 1)
            fault(m, 1, "capture.states");
        else {
            const int64_t ss[4] = {t->shape[0], Hv, Rw, Cl};
            model_view(m, f, VCAP, "capture.states", 4, ss, 1);
        }
        if (f->pbuf[PCS] == BNONE)
            fault(m, 1, "capture.slots");
        if (c->slots_stride < 0)
            fault(m, 1, "capture.slots_stride");
        else if (c->slots_stride > 0) {
            int64_t longest = packed ? 0 : m->T; /* packed: N <= 512 (the cu_seqlens buffer) */
            for (int64_t n = 0; packed && n < m->N; n++)
                longest = imax(longest, m->cuv[n + 1] - m->cuv[n]);
            if (longest > c->slots_stride)
                fault(m, 1, "capture.slots_stride");
        }
        break;
    }
    default: fault(m, 1, "capture.mode"); break;
    }
    if (m->kinds)
        return;
    model_slots(f, m);
}

/* Bytes each buffer gets: for a valid call, what it touches (skip when over BUF_CAP); for a rejected
 * one, what its descriptors span, up to REJECT_CAP (gdn touches none of it). */
static void plan_memory(const fcase *f, model *m)
{
    const int valid = m->kinds == 0 && !m->skip;
    for (int i = 0; i < NBUF; i++)
        m->need[i] = 0;
    for (int v = 0; v < NVIEW; v++) {
        const int bi = f->vbuf[v];
        if (bi == BNONE)
            continue;
        const gdn_tensor *t = cvw(f, v);
        const int64_t es = view_es(f, v);
        const int slots_view = v == VPOOL || (v == VCAP && f->t.capture.mode == GDN_CAPTURE_SLOTS);
        const int used = v != VCAP || f->t.capture.mode != GDN_CAPTURE_NONE;
        int64_t bytes;
        if (valid && used) {
            const int64_t span = span_of(t, m->st[v], slots_view ? (v == VPOOL ? m->pool_lim : m->cap_lim) : -1);
            bytes = sat_mul(sat_add(f->voff[v], imax(span, 1)), es);
            if (bytes > BUF_CAP) {
                m->skip = "a valid call larger than the harness's buffers";
                return;
            }
        } else {
            int64_t st[GDN_MAX_DIMS];
            const int64_t span = resolve(t, st) ? span_of(t, st, -1) : 0;
            bytes = imin(sat_mul(sat_add(f->voff[v], imax(span, 1)), es), REJECT_CAP);
            bytes = imax(bytes, (f->voff[v] + 1) * es);
        }
        m->need[bi] = imax(m->need[bi], bytes);
    }
    const int64_t Hv = f->p.num_v_heads >= 1 && f->p.num_v_heads <= 4096 ? f->p.num_v_heads : 16;
    m->need[BALOG] = m->need[BDTB] = Hv * 4;
    m->need[BCU] = m->cu_len;
    m->need[BRS] = 4 * imax(f->nrs, imin(m->rs_len, IDX_CAP));
    m->need[BWS] = 4 * imax(f->nws, imin(m->ws_len, IDX_CAP));
    m->need[BCS] = 4 * imax(f->ncs, imin(m->cs_len, CS_CAP));
    for (int i = 0; i < NBUF; i++)
        m->need[i] = imax(m->need[i], 64);
}

/* ---------------------------------------------------------------------------------------------
 * Buffers
 * ------------------------------------------------------------------------------------------- */

typedef struct hbuf {
    unsigned char *mem; /* GUARD + size + GUARD */
    unsigned char *user;
    int64_t size;
    unsigned char *snap;
} hbuf;

static hbuf H[NBUF];

static void free_buffers(void)
{
    for (int i = 0; i < NBUF; i++) {
        free(H[i].mem);
        free(H[i].snap);
        memset(&H[i], 0, sizeof H[i]);
    }
}

/* Odometer over a view's elements (dim 0 limited to lim0 when >= 0): calls fn with each element's
 * offset. Returns 0 (nothing done) if there would be more than MAX_ELEMS_FILL of them. */
typedef void (*elem_fn)(void *arg, int64_t off, const int64_t *idx);

static int for_each(const gdn_tensor *t, const int64_t *st, int64_t lim0, elem_fn fn, void *arg)
{
    const int nd = t->ndim;
    int64_t ext[GDN_MAX_DIMS], idx[GDN_MAX_DIMS] = {0, 0, 0, 0, 0}, count = 1;
    for (int i = 0; i < nd; i++) {
        ext[i] = i == 0 && lim0 >= 0 ? imin(t->shape[0], lim0) : t->shape[i];
        if (ext[i] <= 0)
            return 1;
        count = sat_mul(count, ext[i]);
    }
    if (count > MAX_ELEMS_FILL)
        return 0;
    for (int64_t e = 0; e < count; e++) {
        int64_t off = 0;
        for (int i = 0; i < nd; i++)
            off = sat_add(off, sat_mul(idx[i], st[i]));
        fn(arg, off, idx);
        for (int i = nd - 1; i >= 0; i--) {
            if (++idx[i] < ext[i])
                break;
            idx[i] = 0;
        }
    }
    return 1;
}

enum { ROLE_QK, ROLE_Q, ROLE_V, ROLE_G, ROLE_BETA, ROLE_STATE, ROLE_PARAM };

typedef struct fill_arg {
    hbuf *h;
    int64_t base;
    gdn_dtype dt;
    int role;
    const fcase *f;
} fill_arg;

static float gen_value(const fcase *f, int role)
{
    const int Dk = f->p.k_dim >= 1 && f->p.k_dim <= 256 ? f->p.k_dim : 16;
    switch (role) {
    case ROLE_QK: return (float)(unif(-1.0, 1.0) * 0.5 / sqrt((double)Dk)); /* beta |k|^2 < 1: stable */
    case ROLE_Q: return (float)unif(-1.0, 1.0);
    case ROLE_V: return (float)unif(-1.0, 1.0);
    case ROLE_G:
        switch ((int)f->p.gate) {
        case GDN_GATE_LINEAR: return (float)unif(0.5, 1.0);
        case GDN_GATE_NEGLOG: return (float)unif(0.0, 0.5);
        case GDN_GATE_RAW: return (float)unif(-2.0, 2.0);
        default: return (float)unif(-0.5, 0.0);
        }
    case ROLE_BETA: return f->p.gate == GDN_GATE_RAW ? (float)unif(-3.0, 3.0) : (float)unif(0.0, 1.0);
    case ROLE_STATE: return (float)unif(-0.5, 0.5);
    default: return (float)unif(-1.0, 1.0);
    }
}

static void fill_one(void *arg, int64_t off, const int64_t *idx)
{
    const fill_arg *a = (const fill_arg *)arg;
    const int64_t e = sat_add(a->base, off), es = dsize((int)a->dt);
    (void)idx;
    if (e >= 0 && e < a->h->size / es)
        gdn_store_f32(a->h->user, a->dt, e, gen_value(a->f, a->role));
}

static void alloc_buffers(const fcase *f, const model *m)
{
    for (int i = 0; i < NBUF; i++) {
        hbuf *h = &H[i];
        h->size = m->need[i];
        h->mem = (unsigned char *)malloc((size_t)h->size + 2 * GUARD);
        h->snap = (unsigned char *)malloc((size_t)h->size + 2 * GUARD);
        if (!h->mem || !h->snap) {
            fprintf(stderr, "test_fuzz_args: out of memory\n");
            exit(2);
        }
        memset(h->mem, 0xFF, (size_t)h->size + 2 * GUARD);
        h->user = h->mem + GUARD;
    }
    memset(H[BOUT].user, 0x5A, (size_t)H[BOUT].size);
    memset(H[BCPOOL].user, 0x6B, (size_t)H[BCPOOL].size);
    memset(H[BDCAP].user, 0x6B, (size_t)H[BDCAP].size);
    /* inputs and pool: NaN between the elements of their views (a call to be rejected reads nothing:
       all NaN) */
    static const int roles[NVIEW] = {ROLE_Q, ROLE_QK, ROLE_V, ROLE_G, ROLE_BETA, -1, ROLE_STATE, -1};
    for (int v = 0; v < NVIEW && m->kinds == 0; v++) {
        const int bi = f->vbuf[v];
        if (roles[v] < 0 || bi == BNONE)
            continue;
        const gdn_tensor *t = cvw(f, v);
        int64_t st[GDN_MAX_DIMS];
        fill_arg a = {&H[bi], f->voff[v], view_dtype(f, v), roles[v], f};
        const int64_t lim0 = v == VPOOL && m->kinds == 0 && !m->skip ? m->pool_lim : -1;
        if (!resolve(t, st) || !for_each(t, st, lim0, fill_one, &a)) {
            const int64_t es = dsize((int)a.dt);
            for (int64_t e = 0; (e + 1) * es <= H[bi].size; e++)
                gdn_store_f32(H[bi].user, a.dt, e, gen_value(f, roles[v]));
        }
    }
    for (int64_t e = 0; (e + 1) * 4 <= H[BALOG].size; e++) {
        ((float *)(void *)H[BALOG].user)[e] = gen_value(f, ROLE_PARAM);
        ((float *)(void *)H[BDTB].user)[e] = gen_value(f, ROLE_PARAM);
    }
    memcpy(H[BCU].user, m->cu_img, (size_t)m->cu_len);
    for (int64_t e = 0; (e + 1) * 4 <= H[BRS].size; e++)
        ((int32_t *)(void *)H[BRS].user)[e] = e < LIVE_CAP ? f->rs[e] : -1;
    for (int64_t e = 0; (e + 1) * 4 <= H[BWS].size; e++)
        ((int32_t *)(void *)H[BWS].user)[e] = e < LIVE_CAP ? f->ws[e] : -1;
    for (int64_t e = 0; (e + 1) * 4 <= H[BCS].size; e++)
        ((int32_t *)(void *)H[BCS].user)[e] = e < LIVE_CAP ? f->cs[e] : -1;
    for (int i = 0; i < NBUF; i++)
        memcpy(H[i].snap, H[i].mem, (size_t)H[i].size + 2 * GUARD);
}

static void bind(fcase *f)
{
    for (int v = 0; v < NVIEW; v++)
        vw(f, v)->data = f->vbuf[v] == BNONE ? NULL : H[f->vbuf[v]].user + f->voff[v] * view_es(f, v);
    f->t.A_log = f->pbuf[PALOG] == BNONE ? NULL : (const float *)(const void *)H[BALOG].user;
    f->t.dt_bias = f->pbuf[PDTB] == BNONE ? NULL : (const float *)(const void *)H[BDTB].user;
    f->b.cu_seqlens = f->pbuf[PCU] == BNONE ? NULL : (const void *)H[BCU].user;
    f->t.state.read_slots = f->pbuf[PRS] == BNONE ? NULL : (const int32_t *)(const void *)H[BRS].user;
    f->t.state.write_slots = f->pbuf[PWS] == BNONE ? NULL : (const int32_t *)(const void *)H[BWS].user;
    f->t.capture.slots = f->pbuf[PCS] == BNONE ? NULL : (const int32_t *)(const void *)H[BCS].user;
}

/* ---------------------------------------------------------------------------------------------
 * Reports and counts
 * ------------------------------------------------------------------------------------------- */

static uint64_t g_seed;
static long long g_iter;
static const fcase *g_case;
static int g_failures, g_reported_header;
static char g_status_line[700];

static void violation(const char *fmt, ...)
{
    g_failures++;
    if (g_failures > MAX_REPORTS)
        return;
    if (!g_reported_header) {
        g_reported_header = 1;
        printf("FAIL seed %llu iteration %lld (replay: test_fuzz_args %llu -v 0 %lld)\n  base: %s\n",
               (unsigned long long)g_seed, g_iter, (unsigned long long)g_seed, g_iter, g_case->base);
        for (int i = 0; i < g_case->nmut; i++)
            printf("  mutation %d: %s\n", i + 1, g_case->mut[i]);
        if (g_case->nmut == 0)
            printf("  (no mutation)\n");
        printf("  %s\n", g_status_line);
    }
    va_list ap;
    va_start(ap, fmt);
    printf("  -> ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static long long n_status[8], n_calls, n_success, n_compared, n_skipped, n_unmutated, n_precheck_only;
static long long n_oom, n_overlap, n_overlap_accepted, n_lenient;
static char first_overlap[700];

#define MAX_SKIP_KINDS 16
static const char *skip_why[MAX_SKIP_KINDS];
static long long skip_count[MAX_SKIP_KINDS], skip_first[MAX_SKIP_KINDS];

static void count_skip(const char *why)
{
    n_skipped++;
    for (int i = 0; i < MAX_SKIP_KINDS; i++) {
        if (skip_why[i] == why || !skip_why[i]) {
            if (!skip_why[i])
                skip_first[i] = g_iter;
            skip_why[i] = why;
            skip_count[i]++;
            return;
        }
    }
}

#define MAX_MSGS 2048
static char *msgs[MAX_MSGS];
static long long msg_count[MAX_MSGS];
static int n_msgs;

static void record_message(const char *msg)
{
    char norm[600];
    size_t j = 0;
    for (size_t i = 0; msg[i] && j + 2 < sizeof norm; i++) {
        const int digit = (msg[i] >= '0' && msg[i] <= '9') || (msg[i] == '-' && msg[i + 1] >= '0' && msg[i + 1] <= '9');
        if (digit) {
            if (j == 0 || norm[j - 1] != '#')
                norm[j++] = '#';
        } else
            norm[j++] = msg[i];
    }
    norm[j] = '\0';
    for (int i = 0; i < n_msgs; i++)
        if (!strcmp(msgs[i], norm)) {
            msg_count[i]++;
            return;
        }
    if (n_msgs < MAX_MSGS) {
        msgs[n_msgs] = (char *)malloc(strlen(norm) + 1);
        if (msgs[n_msgs]) {
            strcpy(msgs[n_msgs], norm);
            msg_count[n_msgs++] = 1;
        }
    }
}

/* The message starts with name, followed by ':', ' ', '[' (or nothing). */
static int starts_with_arg(const char *msg, const char *name)
{
    const size_t n = strlen(name);
    return !strncmp(msg, name, n) && (msg[n] == ':' || msg[n] == ' ' || msg[n] == '[' || msg[n] == '\0');
}

/* Names an argument of the gdn.h structs (the brief's list, as message prefixes). */
static int names_an_argument(const char *msg)
{
    static const char *const names[] = {"problem", "batch", "tensors", "cu_seqlens", "q", "k", "v", "g", "beta",
                                        "out", "A_log", "dt_bias"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (starts_with_arg(msg, names[i]))
            return 1;
    return !strncmp(msg, "problem.", 8) || !strncmp(msg, "batch.", 6) || !strncmp(msg, "state.", 6) ||
           !strncmp(msg, "capture.", 8);
}

/* Whether the elements of a view (dim 0 limited to lim0 when >= 0) lie at distinct addresses. gdn.h
 * forbids zero strides on output extents > 1 but says nothing of other overlapping strides (e.g.
 * strides [.., 1, 1] on [.., Hv, Dv]); the validator accepts them, and then what lands where depends
 * on the order of the writes, so such calls are counted and their values not compared. */
typedef struct inj_arg {
    unsigned char *bits;
    int64_t nbits;
    int dup;
} inj_arg;

static void inj_one(void *arg, int64_t off, const int64_t *idx)
{
    inj_arg *a = (inj_arg *)arg;
    (void)idx;
    if (off < 0 || off >= a->nbits)
        return;
    if (a->bits[off >> 3] & (1u << (off & 7)))
        a->dup = 1;
    a->bits[off >> 3] |= (unsigned char)(1u << (off & 7));
}

static int injective(const gdn_tensor *t, const int64_t *st, int64_t lim0)
{
    const int64_t span = span_of(t, st, lim0);
    if (span <= 0)
        return 1;
    /* sufficient: in the order of increasing strides, each stride passes the span of the dims below */
    {
        int order[GDN_MAX_DIMS], nd = t->ndim;
        for (int i = 0; i < nd; i++)
            order[i] = i;
        for (int i = 1; i < nd; i++)
            for (int j = i; j > 0 && st[order[j]] < st[order[j - 1]]; j--) {
                const int x = order[j];
                order[j] = order[j - 1];
                order[j - 1] = x;
            }
        int64_t below = 0;
        int nested = 1;
        for (int i = 0; i < nd && nested; i++) {
            const int d = order[i];
            const int64_t ext = d == 0 && lim0 >= 0 ? imin(t->shape[0], lim0) : t->shape[d];
            if (ext > 1 && st[d] <= below)
                nested = 0;
            below = sat_add(below, sat_mul(ext - 1, st[d]));
        }
        if (nested)
            return 1;
    }
    inj_arg a = {(unsigned char *)calloc((size_t)(span / 8 + 1), 1), span, 0};
    if (!a.bits) {
        fprintf(stderr, "test_fuzz_args: out of memory\n");
        exit(2);
    }
    const int walked = for_each(t, st, lim0, inj_one, &a); /* not: more elements than bytes */
    free(a.bits);
    return walked && !a.dup;
}

static void model_overlap(const fcase *f, model *m)
{
    m->overlap = 0;
    if (f->vbuf[VOUT] != BNONE && !injective(&f->t.out, m->st[VOUT], -1))
        m->overlap |= 1, allow_reject(m, "out");
    if (f->vbuf[VPOOL] != BNONE && !injective(&f->t.state.pool, m->st[VPOOL], m->pool_lim))
        m->overlap |= 2, allow_reject(m, "state.pool");
    if (f->t.capture.mode == GDN_CAPTURE_DENSE && !injective(&f->t.capture.states, m->st[VCAP], -1))
        m->overlap |= 4, allow_reject(m, "capture.states");
    if (f->t.capture.mode == GDN_CAPTURE_SLOTS && !injective(&f->t.capture.states, m->st[VCAP], m->cap_lim))
        m->overlap |= 4, allow_reject(m, "capture.states");
    /* the capture pool in the state pool's memory, but not as the same tensor (another offset or other
       strides): slot n of one is not slot n of the other, which the slot checks cannot know */
    if (f->t.capture.mode == GDN_CAPTURE_SLOTS && f->vbuf[VPOOL] != BNONE && f->vbuf[VCAP] == f->vbuf[VPOOL]) {
        int same = f->voff[VCAP] == f->voff[VPOOL];
        for (int i = 1; i < 4; i++)
            same &= m->st[VCAP][i] == m->st[VPOOL][i];
        same &= m->st[VCAP][0] == m->st[VPOOL][0];
        if (!same) {
            m->overlap |= 8;
            allow_reject(m, "capture.states");
            allow_reject(m, "state.pool");
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Success: what a valid call writes, against the float64 reference
 * ------------------------------------------------------------------------------------------- */

typedef struct outchk {
    unsigned char *mk; /* per element: written by the call */
    double *want;      /* the reference value there */
    int64_t n;         /* elements */
    int es;
    gdn_dtype dt;
    int ambiguous;     /* two elements of the call's outputs share memory: no exact expectation */
} outchk;

static const int out_bufs[4] = {BOUT, BPOOL, BCPOOL, BDCAP};

typedef struct mark_arg {
    outchk *o;
    int64_t base;
    const double *src; /* reference, NULL = no values */
    int kind;          /* 0 out, 1 state, 2 dense capture */
    int64_t n, b, T, Hv, Dv, Dk, tok;
    int kv;
} mark_arg;

static void mark_elem(outchk *o, int64_t e, double x)
{
    if (e < 0 || e >= o->n) {
        violation("harness: an element a valid call writes lies outside its buffer (%lld of %lld)", (long long)e,
                  (long long)o->n);
        return;
    }
    if (o->mk[e])
        o->ambiguous = 1;
    o->mk[e] = 1;
    o->want[e] = x;
}

static void mark_one(void *arg, int64_t off, const int64_t *idx)
{
    const mark_arg *a = (const mark_arg *)arg;
    double x = 0.0;
    if (a->kind == 0) { /* out [b,t,h,d] */
        if (a->src)
            x = a->src[((idx[0] * a->T + idx[1]) * a->Hv + idx[2]) * a->Dv + idx[3]];
    } else if (a->kind == 1) { /* a state head [h, r, c]: idx of a pool restricted to one slot */
        const int64_t vi = a->kv ? idx[3] : idx[2], ki = a->kv ? idx[2] : idx[3];
        if (a->src)
            x = a->src[((a->tok * a->Hv + idx[1]) * a->Dv + vi) * a->Dk + ki];
    } else { /* dense capture [b,t,h,r,c] */
        const int64_t vi = a->kv ? idx[4] : idx[3], ki = a->kv ? idx[3] : idx[4];
        if (a->src)
            x = a->src[(((idx[0] * a->T + idx[1]) * a->Hv + idx[2]) * a->Dv + vi) * a->Dk + ki];
    }
    mark_elem(a->o, a->base + off, x);
}

/* One slot (dim 0 fixed) of a pool view: mark the Hv states with reference row tok of src. */
static void mark_slot(outchk *o, const gdn_tensor *t, const int64_t *st, int64_t voff, int64_t slot, const double *src,
                      int64_t tok, const model *m, const fcase *f)
{
    gdn_tensor one = *t;
    one.shape[0] = 1;
    mark_arg a = {o, voff + slot * st[0], src, 1, 0, 0, m->T, f->p.num_v_heads, f->p.v_dim, f->p.k_dim, tok,
                  f->p.state_layout == GDN_STATE_KV};
    if (!for_each(&one, st, -1, mark_one, &a))
        violation("harness: a state has too many elements to mark");
}

static outchk *chk_for(outchk *chk, int bi)
{
    for (int i = 0; i < 4; i++)
        if (out_bufs[i] == bi)
            return &chk[i];
    return NULL;
}

static double out_tolerance(gdn_dtype t)
{
    return t == GDN_DTYPE_BF16 ? 1e-2 : t == GDN_DTYPE_F16 ? 2e-3 : 1e-5;
}

/* After a successful call: guards and inputs intact, nothing outside the written elements changed,
 * the written elements equal to the reference (when it ran). */
static void check_success(const fcase *f, const model *m, const gdn_ref_result *ref)
{
    outchk chk[4];
    memset(chk, 0, sizeof chk);
    for (int i = 0; i < 4; i++) {
        const int bi = out_bufs[i];
        chk[i].es = bi == BOUT ? view_es(f, VOUT) : 4;
        chk[i].dt = bi == BOUT ? view_dtype(f, VOUT) : GDN_DTYPE_F32;
        chk[i].n = H[bi].size / chk[i].es;
        chk[i].mk = (unsigned char *)calloc((size_t)chk[i].n + 1, 1);
        chk[i].want = (double *)calloc((size_t)chk[i].n + 1, sizeof(double));
        if (!chk[i].mk || !chk[i].want) {
            fprintf(stderr, "test_fuzz_args: out of memory\n");
            exit(2);
        }
    }
    const int64_t N = m->N, T = m->T;
    const int kv = f->p.state_layout == GDN_STATE_KV;
    /* out */
    if (f->vbuf[VOUT] != BNONE) {
        outchk *o = chk_for(chk, f->vbuf[VOUT]);
        mark_arg a = {o, f->voff[VOUT], ref ? ref->out : NULL, 0, 0, 0, T, f->p.num_v_heads, f->p.v_dim, f->p.k_dim,
                      0, kv};
        if (!o || view_es(f, VOUT) != o->es)
            violation("harness: out is not in the out buffer");
        else if (!for_each(&f->t.out, m->st[VOUT], -1, mark_one, &a))
            violation("harness: out has too many elements to mark");
    }
    /* final states */
    if (f->vbuf[VPOOL] != BNONE) {
        outchk *o = chk_for(chk, f->vbuf[VPOOL]);
        for (int64_t n = 0; n < N && o; n++) {
            const int32_t w = ws_of(f, n);
            if (w >= 0)
                mark_slot(o, &f->t.state.pool, m->st[VPOOL], f->voff[VPOOL], w, ref ? ref->final_state : NULL, n, m, f);
        }
    }
    /* captures */
    const int mode = (int)f->t.capture.mode;
    if (mode == GDN_CAPTURE_DENSE) {
        outchk *o = chk_for(chk, f->vbuf[VCAP]);
        mark_arg a = {o, f->voff[VCAP], ref ? ref->captures : NULL, 2, 0, 0, T, f->p.num_v_heads, f->p.v_dim,
                      f->p.k_dim, 0, kv};
        if (!o)
            violation("harness: the dense capture is not an output buffer");
        else if (!for_each(&f->t.capture.states, m->st[VCAP], -1, mark_one, &a))
            violation("harness: the dense capture has too many elements to mark");
    } else if (mode == GDN_CAPTURE_SLOTS) {
        outchk *o = chk_for(chk, f->vbuf[VCAP]);
        if (!o)
            violation("harness: the capture pool is not an output buffer");
        else if (m->same_pool) {
            /* one tensor seen through two descriptors: both must map slots identically */
            for (int i = 0; i < 4; i++)
                if (m->st[VCAP][i] != m->st[VPOOL][i])
                    o->ambiguous = 1;
        } else if (f->vbuf[VCAP] == f->vbuf[VPOOL])
            o->ambiguous = 1; /* overlapping pools at different offsets */
        for (int64_t n = 0; n < N && o; n++) {
            int64_t b, t0, t1;
            model_seq(f, m, n, &b, &t0, &t1);
            for (int64_t t = t0; t < t1; t++) {
                const int32_t c = cs_at(f, cs_index(f, m, n, t - t0, b, t));
                if (c < 0 || (m->same_pool && t == t1 - 1 && c == ws_of(f, n)))
                    continue;
                mark_slot(o, &f->t.capture.states, m->st[VCAP], f->voff[VCAP], c, ref ? ref->captures : NULL,
                          b * T + t, m, f);
            }
        }
    }

    /* inputs, tables and every guard: bitwise */
    for (int i = 0; i < NBUF; i++) {
        const hbuf *h = &H[i];
        if (memcmp(h->mem, h->snap, GUARD) || memcmp(h->user + h->size, h->snap + GUARD + h->size, GUARD))
            violation("success, but the guard zone of the %s buffer was written", buf_name[i]);
        if (i == BOUT || i == BPOOL || i == BCPOOL || i == BDCAP)
            continue;
        if (memcmp(h->user, h->snap + GUARD, (size_t)h->size))
            violation("success, but the input buffer %s was written", buf_name[i]);
    }
    /* outputs */
    for (int i = 0; i < 4; i++) {
        outchk *o = &chk[i];
        const hbuf *h = &H[out_bufs[i]];
        if (o->ambiguous)
            continue;
        double num = 0.0, den = 0.0;
        int64_t nmarked = 0, changed = -1, nonfinite = -1;
        for (int64_t e = 0; e < o->n; e++) {
            if (!o->mk[e]) {
                if (changed < 0 && memcmp(h->user + e * o->es, h->snap + GUARD + e * o->es, (size_t)o->es))
                    changed = e;
                continue;
            }
            nmarked++;
            const double x = gdn_load_f32(h->user, o->dt, e);
            if (!isfinite(x) && nonfinite < 0)
                nonfinite = e;
            const double d = x - o->want[e];
            num += d * d;
            den += o->want[e] * o->want[e];
        }
        for (int64_t e = o->n * o->es; e < h->size; e++) /* a tail shorter than one element */
            if (changed < 0 && h->user[e] != h->snap[GUARD + e])
                changed = e / o->es;
        if (changed >= 0)
            violation("success, but %s element %lld, which the call does not write, changed", buf_name[out_bufs[i]],
                      (long long)changed);
        if (nonfinite >= 0)
            violation("success, but %s element %lld is not finite", buf_name[out_bufs[i]], (long long)nonfinite);
        if (ref && nmarked > 0 && nonfinite < 0) {
            /* relative RMS; the denominator is at least 1e-2 (the data's scale): a tiny result (k.q
               cancelling in a one-token sequence) makes no harsher test of rounding */
            const double rel = sqrt(num / (double)nmarked) / fmax(sqrt(den / (double)nmarked), 1e-2);
            /* bf16 products (problem.precision BF16): 1e-2 on out and the final states; captures run
               the token loop (f32) */
            const int bf16p = f->p.precision == GDN_PRECISION_BF16;
            double tol = out_bufs[i] == BOUT ? out_tolerance(o->dt) : 1e-5;
            if (bf16p && (out_bufs[i] == BOUT || out_bufs[i] == BPOOL) && tol < 1e-2)
                tol = 1e-2;
            if (!(rel <= tol))
                violation("success, but %s differs from the float64 reference: rel RMS %.3g > %.0e (%lld elements, "
                          "reference RMS %.3g, error RMS %.3g)", buf_name[out_bufs[i]], rel, tol, (long long)nmarked,
                          sqrt(den / (double)nmarked), sqrt(num / (double)nmarked));
        }
    }
    for (int i = 0; i < 4; i++) {
        free(chk[i].mk);
        free(chk[i].want);
    }
}

/* ---------------------------------------------------------------------------------------------
 * One iteration
 * ------------------------------------------------------------------------------------------- */

static fcase g_fc;
static model g_m;

static void unchanged_all(const char *when)
{
    for (int i = 0; i < NBUF; i++) {
        const hbuf *h = &H[i];
        if (memcmp(h->mem, h->snap, (size_t)h->size + 2 * GUARD)) {
            size_t at = 0;
            while (h->mem[at] == h->snap[at])
                at++;
            const long long rel = (long long)at - GUARD;
            violation("%s, but the %s buffer was written (first changed byte %lld%s)", when, buf_name[i], rel,
                      rel < 0 || rel >= h->size ? ", in a guard zone" : "");
        }
    }
}

static int tag_matches(const model *m, const char *msg, int kind)
{
    for (int i = 0; i < m->ntag; i++)
        if ((m->tag_kind[i] & kind) && starts_with_arg(msg, m->tag[i]))
            return 1;
    return 0;
}

static void run_iteration(gdn_context *ctx, uint64_t seed, long long iter, int print_case)
{
    fcase *f = &g_fc;
    model *m = &g_m;
    gdn_rng_seed(&R, seed ^ (UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(iter + 1)));
    gen_base(f);
    f->nmut = chance(1, 16) ? 0 : 1 + (int)rnd(3);
    for (int i = 0; i < f->nmut; i++)
        mutate(f, f->mut[i], sizeof f->mut[i]);
    if (f->nmut == 0)
        n_unmutated++;
    g_iter = iter;
    g_case = f;
    g_crash_len = (size_t)snprintf(g_crash_note, sizeof g_crash_note,
                                   "test_fuzz_args: died in seed %llu iteration %lld (replay: test_fuzz_args %llu -v 0 "
                                   "%lld)\n", (unsigned long long)seed, iter, (unsigned long long)seed, iter);
    g_reported_header = 0;
    snprintf(g_status_line, sizeof g_status_line, "(not run)");
    if (print_case) {
        printf("iteration %lld\n  base: %s\n", iter, f->base);
        for (int i = 0; i < f->nmut; i++)
            printf("  mutation %d: %s\n", i + 1, f->mut[i]);
        fflush(stdout);
    }

    model_run(f, m);
    if (!m->skip)
        plan_memory(f, m);
    if (m->skip) {
        count_skip(m->skip);
        if (print_case)
            printf("  skipped: %s\n", m->skip);
        return;
    }
    if (m->kinds == 0) {
        model_overlap(f, m);
        if (m->overlap) {
            /* such a call is asked of the validator only (below): gdn's writes through overlapping
               views are undefined (memcpy of overlapping ranges, results depending on the order) */
            n_overlap++;
            if (!first_overlap[0])
                snprintf(first_overlap, sizeof first_overlap, "iteration %lld: %s%s%s%s: %.180s%s%.180s%s%.180s",
                         iter, m->overlap & 1 ? "out " : "", m->overlap & 2 ? "state.pool " : "",
                         m->overlap & 4 ? "capture.states " : "", m->overlap & 8 ? "capture.states~state.pool " : "",
                         f->nmut ? f->mut[0] : "", f->nmut > 1 ? "; " : "", f->nmut > 1 ? f->mut[1] : "",
                         f->nmut > 2 ? "; " : "", f->nmut > 2 ? f->mut[2] : "");
        }
    }
    alloc_buffers(f, m);
    bind(f);
    const gdn_problem *pp = f->null_problem ? NULL : &f->p;
    const gdn_batch *pb = f->null_batch ? NULL : &f->b;
    const gdn_tensors *pt = f->null_tensors ? NULL : &f->t;
    const int model_ok = m->kinds == 0;

    /* 1. the validator alone (writes nothing) */
    gdn_plan plan;
    gdn_slot_checker checker = {NULL, 0, 0};
    char pre_msg[GDN_ERR_LEN_TEST];
    pre_msg[0] = '\0';
    const gdn_status pre = gdn_plan_make(&plan, pp, pb, pt, &checker, pre_msg, sizeof pre_msg);
    gdn_slot_checker_free(&checker);
    snprintf(g_status_line, sizeof g_status_line, "model: %s (%d tags, first \"%s\"); validator: %d (%s) \"%s\"",
             model_ok ? "valid" : m->kinds == 1 ? "invalid" : m->kinds == 2 ? "unsupported" : "invalid+unsupported",
             m->ntag, m->ntag ? m->tag[0] : "", (int)pre, gdn_status_string(pre), pre_msg);
    if (print_case)
        printf("  %s\n", g_status_line);
    if (pre == GDN_STATUS_SUCCESS && !model_ok) {
        violation("the validator accepts a call the model rejects (argument \"%s\"): not run", m->tag[0]);
        free_buffers();
        return;
    }
    if (pre != GDN_STATUS_SUCCESS) {
        const int kind = pre == GDN_STATUS_INVALID_ARGUMENT ? 1 : pre == GDN_STATUS_UNSUPPORTED ? 2 : 0;
        if (model_ok && m->lenient && kind == 1 && tag_matches(m, pre_msg, 1))
            n_lenient++;
        else if (model_ok && !(pre == GDN_STATUS_OUT_OF_MEMORY && m->oom_ok))
            violation("the validator rejects a call the model finds valid");
        else if (!model_ok && pre == GDN_STATUS_OUT_OF_MEMORY && m->oom_ok)
            ; /* the stamps are allocated before the conflicts are checked */
        else if (!model_ok && !(kind & m->kinds))
            violation("status %s, but the model's faults are of another kind", gdn_status_string(pre));
        else if (!model_ok && !tag_matches(m, pre_msg, kind))
            violation("the message does not name an argument at fault (the model's: \"%s\"%s%s%s)", m->tag[0],
                      m->ntag > 1 ? ", \"" : "", m->ntag > 1 ? m->tag[1] : "", m->ntag > 1 ? "\"" : "");
    }

    if (m->overlap) { /* undefined to run (see model_overlap): the validator's answer is all there is */
        if (pre == GDN_STATUS_SUCCESS)
            n_overlap_accepted++;
        free_buffers();
        return;
    }

    /* 2. the reference, before gdn_forward writes the pool (it reads the initial states) */
    gdn_ref_result ref = {NULL, NULL, NULL};
    int ref_ran = 0;
    if (pre == GDN_STATUS_SUCCESS && !f->null_ctx) {
        const int64_t TT = m->B * m->T, Hv = f->p.num_v_heads, Dv = f->p.v_dim, Dk = f->p.k_dim;
        const int has_cap = f->t.capture.mode != GDN_CAPTURE_NONE, has_pool = f->vbuf[VPOOL] != BNONE;
        const int64_t cost = TT * Hv * Dv * (1 + (has_cap ? Dk : 0)) + (has_pool ? m->N * Hv * Dv * Dk : 0);
        if (cost <= (INT64_C(1) << 19)) {
            ref.out = (double *)malloc(sizeof(double) * (size_t)imax(TT * Hv * Dv, 1));
            ref.final_state = (double *)malloc(sizeof(double) * (size_t)imax(m->N * Hv * Dv * Dk, 1));
            ref.captures = has_cap ? (double *)malloc(sizeof(double) * (size_t)imax(TT * Hv * Dv * Dk, 1)) : NULL;
            char rerr[GDN_ERR_LEN_TEST];
            const gdn_status rs = gdn_ref_forward(pp, pb, pt, &ref, rerr, sizeof rerr);
            if (rs == GDN_STATUS_SUCCESS)
                ref_ran = 1;
            else if (!(rs == GDN_STATUS_OUT_OF_MEMORY && m->oom_ok))
                violation("the validator accepts, but gdn_ref_forward returns %d (%s) \"%s\"", (int)rs,
                          gdn_status_string(rs), rerr);
            unchanged_all("after gdn_ref_forward (which writes no buffer)");
        }
    }

    /* 3. gdn_forward */
    const gdn_status st = gdn_forward(f->null_ctx ? NULL : ctx, pp, pb, pt);
    n_calls++;
    n_status[(unsigned)st < 8 ? st : 7]++;
    const char *msg = f->null_ctx ? "" : gdn_last_error(ctx);
    if (print_case)
        printf("  gdn_forward: %d (%s) \"%s\"\n", (int)st, gdn_status_string(st), msg);
    if (f->null_ctx) {
        if (st != GDN_STATUS_INVALID_ARGUMENT)
            violation("ctx NULL: status %d (%s), expected invalid argument", (int)st, gdn_status_string(st));
        unchanged_all("ctx NULL");
    } else if (st != GDN_STATUS_SUCCESS) {
        if (st != pre && !(st == GDN_STATUS_OUT_OF_MEMORY || pre == GDN_STATUS_OUT_OF_MEMORY))
            violation("gdn_forward returns %d (%s), the validator alone %d", (int)st, gdn_status_string(st), (int)pre);
        else if (st == pre && strcmp(msg, pre_msg))
            violation("gdn_forward says \"%s\", the validator alone \"%s\"", msg, pre_msg);
        if (!msg[0])
            violation("failure (%s) with an empty gdn_last_error", gdn_status_string(st));
        else if (!names_an_argument(msg))
            violation("the message \"%s\" names no argument of the gdn.h structs", msg);
        if (st == GDN_STATUS_OUT_OF_MEMORY) {
            n_oom++;
            if (!m->oom_ok)
                violation("out of memory on a small call");
        }
        record_message(msg);
        unchanged_all("failure");
    } else {
        n_success++;
        if (pre != GDN_STATUS_SUCCESS && pre != GDN_STATUS_OUT_OF_MEMORY)
            violation("gdn_forward succeeds where the validator alone returned %d", (int)pre);
        if (msg[0])
            violation("success, but gdn_last_error = \"%s\"", msg);
        if (ref_ran && !m->overlap)
            n_compared++;
        check_success(f, m, ref_ran ? &ref : NULL);
    }
    if (pre == GDN_STATUS_SUCCESS && f->null_ctx)
        n_precheck_only++;
    free(ref.out);
    free(ref.final_state);
    free(ref.captures);
    free_buffers();
}

/* ---------------------------------------------------------------------------------------------
 * Edge cases: a huge dense batch of empty sequences, in a child process with a time limit
 * ------------------------------------------------------------------------------------------- */

static int edge_child(int64_t B, int capture_slots)
{
    gdn_context *ctx = NULL;
    gdn_context_desc d = {GDN_BACKEND_CPU, 2, GDN_ISA_AUTO, 0, NULL};
    if (gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS)
        return 3;
    static float buf[4096];
    static int32_t cs[16];
    gdn_problem p;
    memset(&p, 0, sizeof p);
    p.num_k_heads = 2;
    p.num_v_heads = 4;
    p.k_dim = 16;
    p.v_dim = 16;
    gdn_batch b;
    memset(&b, 0, sizeof b);
    b.batch_size = B;
    b.seq_len = 0;
    gdn_tensors t;
    memset(&t, 0, sizeof t);
    const int64_t sq[4] = {B, 0, 2, 16}, sv[4] = {B, 0, 4, 16}, sg[3] = {B, 0, 4}, sc[4] = {1, 4, 16, 16};
    t.q = gdn_tensor_contiguous(buf, 4, sq);
    t.k = gdn_tensor_contiguous(buf, 4, sq);
    t.v = gdn_tensor_contiguous(buf, 4, sv);
    t.g = gdn_tensor_contiguous(buf, 3, sg);
    t.beta = gdn_tensor_contiguous(buf, 3, sg);
    t.out = gdn_tensor_contiguous(buf, 4, sv);
    if (capture_slots) {
        t.capture.mode = GDN_CAPTURE_SLOTS;
        t.capture.states = gdn_tensor_contiguous(buf, 4, sc);
        t.capture.slots = cs;
    }
    const gdn_status st = gdn_forward(ctx, &p, &b, &t);
    printf("    B = %lld: status %d (%s) \"%s\"\n", (long long)B, (int)st, gdn_status_string(st), gdn_last_error(ctx));
    fflush(stdout);
    gdn_context_destroy(ctx);
    return 0;
}

/* Capture into the state pool itself, described with one slot more than the pool (same address):
 * capture slot S is in range for the capture pool. gdn may accept or reject; it must not crash. */
static int edge_child_shared(void)
{
    gdn_context *ctx = NULL;
    gdn_context_desc d = {GDN_BACKEND_CPU, 1, GDN_ISA_AUTO, 0, NULL};
    if (gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS)
        return 3;
    static float q[16], k[16], v[16], g[1], beta[1], out[16], pool[3 * 16 * 16];
    static const int32_t rs[1] = {-1}, ws[1] = {-1}, cs[1] = {2};
    gdn_problem p;
    memset(&p, 0, sizeof p);
    p.num_k_heads = p.num_v_heads = 1;
    p.k_dim = p.v_dim = 16;
    gdn_batch b;
    memset(&b, 0, sizeof b);
    b.batch_size = 1;
    b.seq_len = 1;
    gdn_tensors t;
    memset(&t, 0, sizeof t);
    const int64_t sq[4] = {1, 1, 1, 16}, sg[3] = {1, 1, 1}, sp[4] = {2, 1, 16, 16}, sc[4] = {3, 1, 16, 16};
    t.q = gdn_tensor_contiguous(q, 4, sq);
    t.k = gdn_tensor_contiguous(k, 4, sq);
    t.v = gdn_tensor_contiguous(v, 4, sq);
    t.g = gdn_tensor_contiguous(g, 3, sg);
    t.beta = gdn_tensor_contiguous(beta, 3, sg);
    t.out = gdn_tensor_contiguous(out, 4, sq);
    t.state.pool = gdn_tensor_contiguous(pool, 4, sp);
    t.state.read_slots = rs;
    t.state.write_slots = ws;
    t.capture.mode = GDN_CAPTURE_SLOTS;
    t.capture.states = gdn_tensor_contiguous(pool, 4, sc);
    t.capture.slots = cs;
    for (int rep = 0; rep < 4; rep++) {
        const gdn_status st = gdn_forward(ctx, &p, &b, &t);
        if (rep == 0)
            printf("    status %d (%s) \"%s\"\n", (int)st, gdn_status_string(st), gdn_last_error(ctx));
    }
    fflush(stdout);
    gdn_context_destroy(ctx);
    void *probe[8]; /* the heap must still be sound */
    for (int i = 0; i < 8; i++)
        probe[i] = malloc(16);
    for (int i = 0; i < 8; i++)
        free(probe[i]);
    return 0;
}

static void edge_case(const char *what, int64_t B, int capture_slots, unsigned limit_s)
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        printf("edge case %s: fork failed, not run\n", what);
        return;
    }
    if (pid == 0) {
        alarm(limit_s);
        _exit(B < 0 ? edge_child_shared() : edge_child(B, capture_slots));
    }
    int ws = 0;
    if (waitpid(pid, &ws, 0) != pid) {
        printf("edge case %s: waitpid failed\n", what);
        return;
    }
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        printf("edge case %s: answered\n", what);
        return;
    }
    g_failures++;
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
        printf("FAIL edge case %s: gdn_forward did not return within %u s (hang)\n", what, limit_s);
    else if (WIFSIGNALED(ws))
        printf("FAIL edge case %s: the process died of signal %d (%s)\n", what, WTERMSIG(ws),
               WTERMSIG(ws) == SIGFPE    ? "SIGFPE"
               : WTERMSIG(ws) == SIGSEGV ? "SIGSEGV"
               : WTERMSIG(ws) == SIGABRT ? "SIGABRT"
                                         : "?");
    else
        printf("FAIL edge case %s: the process exited with %d (a sanitizer's report above?)\n", what,
               WEXITSTATUS(ws));
}

static void edge_cases(void)
{
    /* gdn.h: B >= 1, T >= 0, no upper bound; views of T = 0 span nothing. Such a call must be answered
       (accepted or rejected) promptly and must not crash. */
    edge_case("dense B = 2^62, T = 0, Hv = 4 (N*Hv wraps to 0 in int64)", INT64_C(1) << 62, 0, 5);
    edge_case("dense B = 2^40, T = 0, no pool, no capture", INT64_C(1) << 40, 0, 5);
    edge_case("dense B = 2^62, T = 0, slot capture (validator loop over N)", INT64_C(1) << 62, 1, 5);
    /* the slot checks' stamps are sized for the state pool; a capture slot past it, in range for a
       capture pool at the same address, must not write past them */
    edge_case("capture.states = the state pool's memory with 3 slots, the pool 2; capture slot 2", -1, 0, 5);
}

/* ---------------------------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : UINT64_C(20240917);
    const int verbose = argc > 2 && !strcmp(argv[2], "-v");
    long long iters = 30000;
    const char *env = getenv("GDN_FUZZ_ITERS");
    if (env && *env)
        iters = atoll(env);
    if (argc > 3)
        iters = atoll(argv[3]);
    const long long only = argc > 4 ? atoll(argv[4]) : -1;
    g_seed = seed;
    setvbuf(stdout, NULL, _IOLBF, 0); /* every line out before a crash in gdn can lose it */
    const double t0 = now_s();

    const char *edge = getenv("GDN_FUZZ_EDGE"); /* "0": skip the edge cases (while debugging) */
    if (only < 0 && !(edge && !strcmp(edge, "0")))
        edge_cases();

    /* two contexts: the scalar kernels and the best ones, two threads each */
    gdn_context *ctx[2] = {NULL, NULL};
    const gdn_isa isas[2] = {GDN_ISA_SCALAR, GDN_ISA_AUTO};
    for (int i = 0; i < 2; i++) {
        gdn_context_desc d = {GDN_BACKEND_CPU, 2, isas[i], 0, NULL};
        if (gdn_context_create(&d, &ctx[i]) != GDN_STATUS_SUCCESS) {
            printf("FAIL: cannot create a context: %s\n", gdn_last_error(NULL));
            return 1;
        }
    }

    install_crash_note();
    if (only >= 0) {
        run_iteration(ctx[only & 1], seed, only, 1);
    } else {
        for (long long it = 0; it < iters; it++)
            run_iteration(ctx[it & 1], seed, it, 0);
    }
    g_crash_len = 0;
    const char *best_isa = gdn_isa_name(gdn_context_isa(ctx[1]));
    for (int i = 0; i < 2; i++)
        gdn_context_destroy(ctx[i]);

    const double secs = now_s() - t0;
    printf("test_fuzz_args: seed %llu, %lld iterations (contexts: scalar and %s kernels, 2 threads), %.2f s\n",
           (unsigned long long)seed, only >= 0 ? 1LL : iters, best_isa, secs);
    printf("  gdn_forward calls %lld: success %lld (%lld compared with the float64 reference), unmutated bases %lld\n",
           n_calls, n_success, n_compared, n_unmutated);
    printf("  calls whose output elements share memory %lld: the validator accepts %lld (not run: undefined)\n",
           n_overlap, n_overlap_accepted);
    if (n_overlap && verbose)
        printf("    first: %s\n", first_overlap);
    for (int s = 1; s < 8; s++)
        if (n_status[s])
            printf("  rejected %-22s %lld\n", gdn_status_string((gdn_status)s), n_status[s]);
    printf("  out of memory (pools of 2^40 slots) %lld; ctx NULL calls the validator accepted %lld\n", n_oom,
           n_precheck_only);
    printf("  rejections the model leaves open (pools sharing memory in other shapes, overlapping outputs) %lld\n",
           n_lenient);
    printf("  skipped (not callable inside the harness's memory) %lld\n", n_skipped);
    for (int i = 0; i < MAX_SKIP_KINDS && skip_why[i]; i++)
        printf("    %6lld  %s (first: iteration %lld)\n", skip_count[i], skip_why[i], skip_first[i]);
    printf("  distinct messages (digits as #): %d\n", n_msgs);
    if (verbose)
        for (int i = 0; i < n_msgs; i++)
            printf("    %6lld  %s\n", msg_count[i], msgs[i]);
    for (int i = 0; i < n_msgs; i++)
        free(msgs[i]);
    if (g_failures) {
        printf("test_fuzz_args: %d invariant violation(s)%s\n", g_failures,
               g_failures > MAX_REPORTS ? " (the first ones reported)" : "");
        return 1;
    }
    printf("test_fuzz_args: all invariants hold\n");
    return 0;
}
