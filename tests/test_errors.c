/*
 * test_errors — every invalid argument gets its documented status, a gdn_last_error message that
 * names the argument, and writes nothing (out, state pool and capture buffers are compared
 * byte for byte with their contents before the call). Also: context creation errors, status and
 * ISA names, version.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdn/gdn.h"
#include "cpu/cpuid.h"
#include "guard.h"

static int failures, checks;

/* ---- a valid call, dense or packed, that each case then breaks in one place -------------------- */
enum { HK = 2, HV = 4, DK = 16, DV = 8, B = 2, T = 3, SLOTS = 5, CSLOTS = 8, TP = 6 };

static float q[B * T * HK * DK], k[B * T * HK * DK], v[B * T * HV * DV], g[B * T * HV], beta[B * T * HV];
static float out[B * T * HV * DV], pool[SLOTS * HV * DV * DK], cpool[CSLOTS * HV * DV * DK];
static float dense_cap[B * T * HV * DV * DK];
static float A_log[HV], dt_bias[HV];
static int32_t read_slots[B], write_slots[B], cap_slots[8];
static int32_t cu32[3];
static int64_t cu64[3];

typedef struct fixture {
    gdn_problem p;
    gdn_batch b;
    gdn_tensors t;
} fixture;

static void fill_inputs(void)
{
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        q[i] = (float)((i * 37 % 17) - 8) / 32.0f;
        k[i] = (float)((i * 53 % 19) - 9) / 32.0f;
    }
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        v[i] = (float)((i * 29 % 13) - 6) / 8.0f;
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        g[i] = -0.1f;
        beta[i] = 0.5f;
    }
    for (int h = 0; h < HV; h++) {
        A_log[h] = 0.5f;
        dt_bias[h] = -2.0f;
    }
}

/* packed: one batch row of TP = 6 tokens, two sequences of 2 and 4 */
static fixture make(int packed)
{
    fixture f;
    memset(&f, 0, sizeof f);
    f.p.num_k_heads = HK;
    f.p.num_v_heads = HV;
    f.p.k_dim = DK;
    f.p.v_dim = DV;
    const int64_t bb = packed ? 1 : B, tt = packed ? TP : T;
    f.b.batch_size = bb;
    f.b.seq_len = tt;
    if (packed) {
        cu32[0] = 0;
        cu32[1] = 2;
        cu32[2] = TP;
        f.b.num_seqs = 2;
        f.b.cu_seqlens = cu32;
        f.b.cu_seqlens_type = GDN_INDEX_I32;
    }
    const int64_t sq[4] = {bb, tt, HK, DK}, sv[4] = {bb, tt, HV, DV}, sg[3] = {bb, tt, HV};
    const int64_t sp[4] = {SLOTS, HV, DV, DK}, sc[4] = {CSLOTS, HV, DV, DK};
    f.t.q = gdn_tensor_contiguous(q, 4, sq);
    f.t.k = gdn_tensor_contiguous(k, 4, sq);
    f.t.v = gdn_tensor_contiguous(v, 4, sv);
    f.t.g = gdn_tensor_contiguous(g, 3, sg);
    f.t.beta = gdn_tensor_contiguous(beta, 3, sg);
    f.t.out = gdn_tensor_contiguous(out, 4, sv);
    f.t.state.pool = gdn_tensor_contiguous(pool, 4, sp);
    read_slots[0] = 0;
    read_slots[1] = 1;
    write_slots[0] = 2;
    write_slots[1] = 3;
    f.t.state.read_slots = read_slots;
    f.t.state.write_slots = write_slots;
    for (int i = 0; i < 8; i++) /* by position: b*T + t (dense) or cu[n] + t; by stride: n*stride + t */
        cap_slots[i] = i + 1 < CSLOTS ? i + 1 : -1;
    f.t.capture.mode = GDN_CAPTURE_SLOTS;
    f.t.capture.states = gdn_tensor_contiguous(cpool, 4, sc);
    f.t.capture.slots = cap_slots;
    return f;
}

/* Capture into the state pool itself, with the slots of the first six token positions (by
 * position: b*T + t dense, cu[n] + t packed; by stride: n*stride + t). */
static void shared_caps(fixture *f, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4, int32_t c5)
{
    f->t.capture.states = f->t.state.pool;
    cap_slots[0] = c0;
    cap_slots[1] = c1;
    cap_slots[2] = c2;
    cap_slots[3] = c3;
    cap_slots[4] = c4;
    cap_slots[5] = c5;
}

/* The buffers a call may write (outputs, state pool, capture pools). */
#define GUARDED                                                                                                  \
    (const guard_buf[]) { {out, sizeof out}, {pool, sizeof pool}, {cpool, sizeof cpool}, {dense_cap, sizeof dense_cap} }

/* Outputs get a recognisable pattern; returns a snapshot of them. */
static unsigned char *poison(void)
{
    memset(out, 0x5A, sizeof out);
    memset(cpool, 0x6B, sizeof cpool);
    memset(dense_cap, 0x7C, sizeof dense_cap);
    for (size_t i = 0; i < sizeof pool / sizeof pool[0]; i++)
        pool[i] = (float)i * 1e-3f;
    return guard_snapshot(GUARDED, 4);
}

static int unchanged(const unsigned char *c)
{
    return guard_unchanged(c, GUARDED, 4);
}

/* Run f (with NULL substitutions) and check status, message and that nothing was written. */
static void expect(gdn_context *ctx, const char *what, const fixture *f, int null_p, int null_b, int null_t,
                   gdn_status want, const char *name)
{
    unsigned char *before = poison();
    const gdn_status st = gdn_forward(ctx, null_p ? NULL : &f->p, null_b ? NULL : &f->b, null_t ? NULL : &f->t);
    const char *msg = gdn_last_error(ctx);
    checks++;
    if (st != want) {
        printf("FAIL %s: status %d (%s), expected %d (%s); message: \"%s\"\n", what, st, gdn_status_string(st),
               want, gdn_status_string(want), msg);
        failures++;
    } else if (want != GDN_STATUS_SUCCESS && (!msg || !*msg || (name && !strstr(msg, name)))) {
        printf("FAIL %s: message \"%s\" does not name \"%s\"\n", what, msg ? msg : "(null)", name);
        failures++;
    } else if (want != GDN_STATUS_SUCCESS && !unchanged(before)) {
        printf("FAIL %s: a buffer was written although the call failed\n", what);
        failures++;
    } else if (want == GDN_STATUS_SUCCESS && msg && *msg) {
        printf("FAIL %s: success but gdn_last_error = \"%s\"\n", what, msg);
        failures++;
    }
    free(before);
}

/* The message of the last failed call also says text. */
static void expect_mentions(const gdn_context *ctx, const char *what, const char *text)
{
    const char *msg = gdn_last_error(ctx);
    checks++;
    if (!msg || !strstr(msg, text)) {
        printf("FAIL %s: message \"%s\" does not say \"%s\"\n", what, msg ? msg : "(null)", text);
        failures++;
    }
}

#define CASE(packed, what, mutation, want, name)             \
    do {                                                     \
        fixture f = make(packed);                            \
        mutation;                                            \
        expect(ctx, what, &f, 0, 0, 0, want, name);          \
    } while (0)

#define INVALID GDN_STATUS_INVALID_ARGUMENT
#define UNSUPPORTED GDN_STATUS_UNSUPPORTED

static void forward_errors(gdn_context *ctx)
{
    /* the fixtures themselves are valid */
    CASE(0, "valid dense fixture", (void)0, GDN_STATUS_SUCCESS, NULL);
    CASE(1, "valid packed fixture", (void)0, GDN_STATUS_SUCCESS, NULL);

    /* null pointers */
    {
        fixture f = make(0);
        expect(ctx, "problem NULL", &f, 1, 0, 0, INVALID, "problem");
        expect(ctx, "batch NULL", &f, 0, 1, 0, INVALID, "batch");
        expect(ctx, "tensors NULL", &f, 0, 0, 1, INVALID, "tensors");
        unsigned char *before = poison();
        checks++;
        if (gdn_forward(NULL, &f.p, &f.b, &f.t) != INVALID || !unchanged(before)) {
            printf("FAIL ctx NULL: expected invalid argument and no write\n");
            failures++;
        }
        free(before);
    }
    CASE(0, "q data NULL", f.t.q.data = NULL, INVALID, "q:");
    CASE(0, "k data NULL", f.t.k.data = NULL, INVALID, "k:");
    CASE(0, "v data NULL", f.t.v.data = NULL, INVALID, "v:");
    CASE(0, "g data NULL", f.t.g.data = NULL, INVALID, "g:");
    CASE(0, "beta data NULL", f.t.beta.data = NULL, INVALID, "beta");

    /* problem */
    CASE(0, "num_k_heads 0", f.p.num_k_heads = 0, INVALID, "num_k_heads");
    CASE(0, "num_k_heads -2", f.p.num_k_heads = -2, INVALID, "num_k_heads");
    CASE(0, "num_v_heads 0", f.p.num_v_heads = 0, INVALID, "num_v_heads");
    CASE(0, "num_v_heads -4", f.p.num_v_heads = -4, INVALID, "num_v_heads");
    CASE(0, "Hv % Hk != 0", f.p.num_k_heads = 3, INVALID, "num_v_heads");
    CASE(0, "k_dim 0", f.p.k_dim = 0, INVALID, "k_dim");
    CASE(0, "k_dim -16", f.p.k_dim = -16, INVALID, "k_dim");
    CASE(0, "v_dim 0", f.p.v_dim = 0, INVALID, "v_dim");
    CASE(0, "v_dim -1", f.p.v_dim = -1, INVALID, "v_dim");
    CASE(0, "k_dim 300", f.p.k_dim = 300, UNSUPPORTED, "k_dim");
    CASE(0, "v_dim 257", f.p.v_dim = 257, UNSUPPORTED, "v_dim");
    CASE(0, "dtype 7", f.p.dtype = (gdn_dtype)7, INVALID, "dtype");
    CASE(0, "out_dtype 5", f.p.out_dtype = (gdn_dtype)5, INVALID, "out_dtype");
    CASE(0, "gate_dtype 9", f.p.gate_dtype = (gdn_dtype)9, INVALID, "gate_dtype");
    CASE(0, "gate_dtype bf16 with f32 activations", f.p.gate_dtype = GDN_DTYPE_BF16, INVALID, "gate_dtype");
    CASE(0, "gate_dtype f16 with bf16 activations", (f.p.dtype = GDN_DTYPE_BF16, f.p.gate_dtype = GDN_DTYPE_F16),
         INVALID, "gate_dtype");
    CASE(0, "gate 9", f.p.gate = (gdn_gate)9, INVALID, "gate");
    CASE(0, "gate -1", f.p.gate = (gdn_gate)-1, INVALID, "gate");
    CASE(0, "head_map 2", f.p.head_map = (gdn_head_map)2, INVALID, "head_map");
    CASE(0, "state_layout 2", f.p.state_layout = (gdn_state_layout)2, INVALID, "state_layout");
    CASE(0, "state_dtype bf16", f.p.state_dtype = GDN_DTYPE_BF16, UNSUPPORTED, "state_dtype");
    CASE(0, "state_dtype 8", f.p.state_dtype = (gdn_dtype)8, INVALID, "state_dtype");
    CASE(0, "algo chunked", f.p.algo = GDN_ALGO_CHUNKED, GDN_STATUS_SUCCESS, NULL);
    CASE(0, "algo 7", f.p.algo = (gdn_algo)7, INVALID, "algo");
    CASE(0, "precision bf16", f.p.precision = GDN_PRECISION_BF16, GDN_STATUS_SUCCESS, NULL);
    CASE(0, "precision 3", f.p.precision = (gdn_precision)3, INVALID, "precision");
    CASE(0, "precision -1", f.p.precision = (gdn_precision)-1, INVALID, "precision");
    CASE(0, "scale NaN", f.p.scale = NAN, INVALID, "scale");
    CASE(0, "scale inf", f.p.scale = INFINITY, INVALID, "scale");
    CASE(0, "raw gate without A_log", (f.p.gate = GDN_GATE_RAW, f.t.dt_bias = dt_bias), INVALID, "A_log");
    CASE(0, "raw gate without dt_bias", (f.p.gate = GDN_GATE_RAW, f.t.A_log = A_log), INVALID, "dt_bias");
    CASE(0, "raw gate with both", (f.p.gate = GDN_GATE_RAW, f.t.A_log = A_log, f.t.dt_bias = dt_bias),
         GDN_STATUS_SUCCESS, NULL);

    /* batch */
    CASE(0, "batch_size 0", f.b.batch_size = 0, INVALID, "batch_size");
    CASE(0, "batch_size -1", f.b.batch_size = -1, INVALID, "batch_size");
    CASE(0, "seq_len -1", f.b.seq_len = -1, INVALID, "seq_len");
    {
        static const int32_t nt_neg[2] = {1, -1}, nt_past[2] = {2, 5}, nt_ok[2] = {2, 0};
        CASE(0, "num_tokens negative", f.b.num_tokens = nt_neg, INVALID, "num_tokens[1]");
        CASE(1, "num_tokens past a packed sequence (4 tokens)", f.b.num_tokens = nt_past, INVALID, "num_tokens[1]");
        CASE(1, "num_tokens within the sequences", f.b.num_tokens = nt_ok, GDN_STATUS_SUCCESS, NULL);
    }
    CASE(1, "cu_seqlens[0] != 0", cu32[0] = 1, INVALID, "cu_seqlens");
    CASE(1, "cu_seqlens decreasing", (cu32[1] = 5, cu32[2] = 4, f.b.seq_len = 4), INVALID, "cu_seqlens");
    CASE(1, "cu_seqlens last != T_total", cu32[2] = 5, INVALID, "cu_seqlens");
    CASE(1, "cu_seqlens last > T_total", cu32[2] = 7, INVALID, "cu_seqlens");
    CASE(1, "B != 1 when packed", f.b.batch_size = 2, INVALID, "batch_size");
    CASE(1, "num_seqs 0 when packed", f.b.num_seqs = 0, INVALID, "num_seqs");
    CASE(1, "num_seqs -3 when packed", f.b.num_seqs = -3, INVALID, "num_seqs");
    CASE(1, "cu_seqlens_type 3", f.b.cu_seqlens_type = (gdn_index_type)3, INVALID, "cu_seqlens");
    CASE(1, "int64 cu_seqlens",
         (cu64[0] = 0, cu64[1] = 2, cu64[2] = TP, f.b.cu_seqlens = cu64, f.b.cu_seqlens_type = GDN_INDEX_I64),
         GDN_STATUS_SUCCESS, NULL);
    CASE(1, "int64 cu_seqlens last != T_total",
         (cu64[0] = 0, cu64[1] = 2, cu64[2] = TP + 1, f.b.cu_seqlens = cu64, f.b.cu_seqlens_type = GDN_INDEX_I64),
         INVALID, "cu_seqlens");

    /* tensor ranks and shapes, one tensor at a time */
    CASE(0, "q ndim 3", f.t.q.ndim = 3, INVALID, "q:");
    CASE(0, "q ndim 9", f.t.q.ndim = 9, INVALID, "q:");
    CASE(0, "q shape Dk", f.t.q.shape[3] = DK + 1, INVALID, "q:");
    CASE(0, "q shape Hk", f.t.q.shape[2] = HK * 2, INVALID, "q:");
    CASE(0, "k shape T", f.t.k.shape[1] = T - 1, INVALID, "k:");
    CASE(0, "k ndim 5", f.t.k.ndim = 5, INVALID, "k:");
    CASE(0, "v shape Hv", f.t.v.shape[2] = HK, INVALID, "v:");
    CASE(0, "v shape Dv", f.t.v.shape[3] = DK, INVALID, "v:");
    CASE(0, "v shape B", f.t.v.shape[0] = 1, INVALID, "v:");
    CASE(0, "g ndim 4", f.t.g.ndim = 4, INVALID, "g:");
    CASE(0, "g shape Hv", f.t.g.shape[2] = 1, INVALID, "g:");
    CASE(0, "beta shape T", f.t.beta.shape[1] = T + 1, INVALID, "beta");
    CASE(0, "beta ndim 2", f.t.beta.ndim = 2, INVALID, "beta");
    CASE(0, "out shape Dv", f.t.out.shape[3] = DV * 2, INVALID, "out");
    CASE(0, "out ndim 3", f.t.out.ndim = 3, INVALID, "out");
    CASE(0, "state.pool ndim 3", f.t.state.pool.ndim = 3, INVALID, "pool");
    CASE(0, "state.pool shape Hv", f.t.state.pool.shape[1] = HV + 1, INVALID, "pool");
    CASE(0, "state.pool [Dk][Dv] with layout vk", (f.t.state.pool.shape[2] = DK, f.t.state.pool.shape[3] = DV),
         INVALID, "pool");
    CASE(0, "state.pool no slots", f.t.state.pool.shape[0] = 0, INVALID, "pool");
    CASE(0, "capture.states shape", f.t.capture.states.shape[3] = DK + 1, INVALID, "capture.states");
    CASE(0, "capture.states data NULL", f.t.capture.states.data = NULL, INVALID, "capture.states");
    CASE(0, "capture dense shape wrong",
         (f.t.capture.mode = GDN_CAPTURE_DENSE,
          f.t.capture.states = gdn_tensor_contiguous(dense_cap, 5, (const int64_t[5]){B, T, HV, DV, DK - 1})),
         INVALID, "capture.states");
    CASE(0, "capture dense with a slot pool's rank",
         (f.t.capture.mode = GDN_CAPTURE_DENSE,
          f.t.capture.states = gdn_tensor_contiguous(dense_cap, 4, (const int64_t[4]){B * T, HV, DV, DK})),
         INVALID, "capture.states");
    CASE(0, "capture dense valid",
         (f.t.capture.mode = GDN_CAPTURE_DENSE,
          f.t.capture.states = gdn_tensor_contiguous(dense_cap, 5, (const int64_t[5]){B, T, HV, DV, DK})),
         GDN_STATUS_SUCCESS, NULL);
    CASE(0, "capture.mode 5", f.t.capture.mode = (gdn_capture_mode)5, INVALID, "capture");
    CASE(0, "capture.slots NULL", f.t.capture.slots = NULL, INVALID, "capture.slots");
    CASE(0, "capture.slots_stride negative", f.t.capture.slots_stride = -1, INVALID, "slots_stride");
    CASE(0, "capture.slots_stride shorter than T", f.t.capture.slots_stride = T - 1, INVALID, "slots_stride");

    /* strides */
    CASE(0, "q negative stride",
         (f.t.q.strides[0] = T * HK * DK, f.t.q.strides[1] = -HK * DK, f.t.q.strides[2] = DK, f.t.q.strides[3] = 1),
         INVALID, "q:");
    CASE(0, "q stride overflowing the address range",
         (f.t.q.strides[0] = T * HK * DK, f.t.q.strides[1] = INT64_C(1) << 60, f.t.q.strides[2] = DK,
          f.t.q.strides[3] = 1),
         INVALID, "q:");
    CASE(0, "out strides summing past the address range",
         (f.t.out.strides[0] = INT64_C(1) << 55, f.t.out.strides[1] = INT64_C(1) << 55, f.t.out.strides[2] = DV,
          f.t.out.strides[3] = 1),
         INVALID, "out");
    CASE(0, "v negative stride",
         (f.t.v.strides[0] = T * HV * DV, f.t.v.strides[1] = HV * DV, f.t.v.strides[2] = DV, f.t.v.strides[3] = -1),
         INVALID, "v:");
    CASE(0, "out negative stride",
         (f.t.out.strides[0] = -T * HV * DV, f.t.out.strides[1] = HV * DV, f.t.out.strides[2] = DV,
          f.t.out.strides[3] = 1),
         INVALID, "out");
    CASE(0, "state.pool negative stride",
         (f.t.state.pool.strides[0] = HV * DV * DK, f.t.state.pool.strides[1] = DV * DK,
          f.t.state.pool.strides[2] = -DK, f.t.state.pool.strides[3] = 1),
         INVALID, "pool");
    CASE(0, "out zero stride (overlapping writes)",
         (f.t.out.strides[0] = T * HV * DV, f.t.out.strides[1] = HV * DV, f.t.out.strides[2] = 0,
          f.t.out.strides[3] = 1),
         INVALID, "out");
    CASE(0, "out heads overlapping rows (strides [.., 1, 1])",
         (f.t.out.strides[0] = T * HV * DV, f.t.out.strides[1] = HV * DV, f.t.out.strides[2] = 1,
          f.t.out.strides[3] = 1),
         INVALID, "overlap");
    CASE(0, "state.pool slots overlapping (slot stride < a slot)",
         (f.t.state.pool.strides[0] = DV * DK, f.t.state.pool.strides[1] = DV * DK,
          f.t.state.pool.strides[2] = DK, f.t.state.pool.strides[3] = 1),
         INVALID, "state.pool");

    /* slots */
    CASE(0, "read slot past the pool", read_slots[0] = SLOTS, INVALID, "read_slots");
    CASE(0, "write slot past the pool", write_slots[1] = SLOTS + 2, INVALID, "write_slots");
    CASE(0, "two sequences write one slot", write_slots[1] = write_slots[0], INVALID, "write_slots");
    CASE(0, "a write slot read by another sequence", write_slots[0] = read_slots[1], INVALID, "write_slots");
    CASE(0, "default read slots: slot n (valid)", (f.t.state.read_slots = NULL, f.t.state.write_slots = NULL),
         GDN_STATUS_SUCCESS, NULL);
    CASE(0, "default write slots equal a read slot of another sequence",
         (read_slots[0] = 1, read_slots[1] = 0, f.t.state.write_slots = NULL,
          f.t.state.pool.shape[0] = SLOTS), GDN_STATUS_SUCCESS, NULL); /* each writes its own read slot */
    CASE(0, "default read slots past a 1-slot pool",
         (f.t.state.read_slots = NULL, f.t.state.write_slots = NULL, f.t.state.pool.shape[0] = 1), INVALID,
         "read_slots");
    CASE(0, "capture slot past the capture pool", cap_slots[2] = CSLOTS, INVALID, "capture.slots");
    CASE(0, "two captures into one slot", cap_slots[4] = cap_slots[1], INVALID, "capture.slots");
    CASE(0, "capture into another sequence's read slot (shared pool)", shared_caps(&f, 4, 1, -1, -1, -1, -1),
         INVALID, "capture.slots");
    CASE(0, "capture into another sequence's write slot (shared pool)", shared_caps(&f, 3, -1, -1, 4, -1, -1),
         INVALID, "capture.slots");
    CASE(0, "capture slot past the shared pool", shared_caps(&f, SLOTS, -1, -1, -1, -1, -1), INVALID,
         "capture.slots");
    CASE(0, "capture into the shared pool (valid)", shared_caps(&f, 4, -1, 0, -1, -1, -1), GDN_STATUS_SUCCESS, NULL);

    /* The state after a sequence's last token may go to its own write slot (vLLM style: both
     * writes store the same state); an earlier token's may not (the final state would overwrite it). */
    CASE(0, "last token captured into its own write slot (shared pool, valid)",
         shared_caps(&f, -1, -1, 2, -1, -1, 3), GDN_STATUS_SUCCESS, NULL);
    CASE(0, "captures into a free slot, the own read slot and the own write slot (valid)",
         shared_caps(&f, 4, 0, 2, 1, -1, 3), GDN_STATUS_SUCCESS, NULL);
    CASE(0, "in place, default slots: last token into its own slot (valid)",
         (f.t.state.read_slots = NULL, f.t.state.write_slots = NULL, shared_caps(&f, -1, -1, 0, -1, -1, 1)),
         GDN_STATUS_SUCCESS, NULL);
    CASE(1, "packed: last token of each sequence into its own write slot (valid)",
         shared_caps(&f, -1, 2, -1, -1, -1, 3), GDN_STATUS_SUCCESS, NULL);
    CASE(1, "packed, by stride: last token of each sequence into its own write slot (valid)",
         (f.t.capture.slots_stride = 4, shared_caps(&f, -1, 2, -1, -1, -1, -1), cap_slots[6] = -1, cap_slots[7] = 3),
         GDN_STATUS_SUCCESS, NULL);
    CASE(0, "first token captured into its own write slot (shared pool)", shared_caps(&f, 2, -1, -1, -1, -1, -1),
         INVALID, "capture.slots");
    expect_mentions(ctx, "first token captured into its own write slot", "written twice");
    CASE(0, "middle token captured into its own write slot, the last too (shared pool)",
         shared_caps(&f, -1, -1, -1, -1, 3, 3), INVALID, "capture.slots");
    expect_mentions(ctx, "middle token captured into its own write slot", "written twice");
    CASE(0, "in place, default slots: an earlier token into its own slot",
         (f.t.state.read_slots = NULL, f.t.state.write_slots = NULL, shared_caps(&f, -1, -1, -1, 1, -1, -1)),
         INVALID, "capture.slots");
    expect_mentions(ctx, "in place: an earlier token into its own slot", "written twice");
    CASE(1, "packed: an earlier token into its own write slot", shared_caps(&f, -1, -1, -1, -1, 3, -1), INVALID,
         "capture.slots");
    expect_mentions(ctx, "packed: an earlier token into its own write slot", "written twice");
    CASE(1, "packed, by stride: an earlier token into its own write slot",
         (f.t.capture.slots_stride = 4, shared_caps(&f, -1, -1, -1, -1, -1, 3), cap_slots[6] = -1, cap_slots[7] = -1),
         INVALID, "capture.slots");
    expect_mentions(ctx, "packed, by stride: an earlier token into its own write slot", "written twice");
    CASE(0, "last token captured into another sequence's write slot (shared pool)",
         shared_caps(&f, -1, -1, 3, -1, -1, -1), INVALID, "capture.slots");
    CASE(1, "capture slot past the pool, packed, by stride",
         (f.t.capture.slots_stride = 4, cap_slots[0] = 1, cap_slots[1] = 2, cap_slots[4] = 3, cap_slots[5] = CSLOTS),
         INVALID, "capture.slots");

    /* after a failure, a valid call succeeds and clears the message */
    CASE(0, "failure", f.p.k_dim = 0, INVALID, "k_dim");
    CASE(0, "success after a failure", (void)0, GDN_STATUS_SUCCESS, NULL);
}

static void context_errors(void)
{
    gdn_context *ctx = (gdn_context *)&checks; /* must be reset to NULL on failure */
    gdn_context_desc d;
#define CTX(what, setup, want, name)                                                                  \
    do {                                                                                              \
        memset(&d, 0, sizeof d);                                                                      \
        setup;                                                                                        \
        ctx = (gdn_context *)&checks;                                                                 \
        const gdn_status st = gdn_context_create(&d, &ctx);                                           \
        const char *msg = gdn_last_error(NULL);                                                       \
        checks++;                                                                                     \
        if (st != (want) || ctx != NULL || !msg || !*msg || !strstr(msg, (name))) {                     \
            printf("FAIL context %s: status %d (expected %d), ctx %s, message \"%s\"\n", what, st, want, \
                   ctx ? "not NULL" : "NULL", msg ? msg : "(null)");                                  \
            failures++;                                                                               \
        }                                                                                             \
    } while (0)
    CTX("num_threads -1", d.num_threads = -1, INVALID, "num_threads");
    CTX("isa 9", d.isa = (gdn_isa)9, INVALID, "isa");
    CTX("backend 9", d.backend = (gdn_backend)9, INVALID, "backend");
    CTX("CUDA backend", d.backend = GDN_BACKEND_CUDA, GDN_STATUS_BACKEND_UNAVAILABLE, "backend");
    static const gdn_isa ISAS[] = {GDN_ISA_AVX2, GDN_ISA_AVX512};
    for (int i = 0; i < 2; i++) {
        if (gdn_cpu_supports(ISAS[i])) {
            printf("SKIP forced isa=%s unavailable: this CPU has it\n", gdn_isa_name(ISAS[i]));
            continue;
        }
        CTX("forced ISA the CPU lacks", d.isa = ISAS[i], GDN_STATUS_BACKEND_UNAVAILABLE, gdn_isa_name(ISAS[i]));
    }
#undef CTX
    checks++;
    if (gdn_context_create(&d, NULL) != INVALID || !*gdn_last_error(NULL) || !strstr(gdn_last_error(NULL), "out")) {
        printf("FAIL context out NULL: expected invalid argument naming \"out\", message \"%s\"\n",
               gdn_last_error(NULL));
        failures++;
    }
    /* defaults, NULL desc, and destroy(NULL) */
    checks++;
    ctx = NULL;
    if (gdn_context_create(NULL, &ctx) != GDN_STATUS_SUCCESS || !ctx || gdn_context_num_threads(ctx) < 1 ||
        gdn_context_isa(ctx) == GDN_ISA_AUTO || *gdn_last_error(ctx) || *gdn_last_error(NULL)) {
        printf("FAIL default context\n");
        failures++;
    }
    gdn_context_destroy(ctx);
    gdn_context_destroy(NULL);
    for (int i = 1; i <= 3; i++) {
        checks++;
        memset(&d, 0, sizeof d);
        d.isa = (gdn_isa)i;
        d.num_threads = 2;
        ctx = NULL;
        const gdn_status st = gdn_context_create(&d, &ctx);
        if (gdn_cpu_supports(d.isa) &&
            (st != GDN_STATUS_SUCCESS || gdn_context_isa(ctx) != d.isa || gdn_context_num_threads(ctx) != 2 ||
             !gdn_context_kernel_name(ctx, 128) || !strstr(gdn_context_kernel_name(ctx, 128), gdn_isa_name(d.isa)) ||
             !strstr(gdn_context_kernel_name(ctx, 40), "scalar"))) {
            printf("FAIL forced isa=%s: context, ISA, threads or kernel names wrong\n", gdn_isa_name(d.isa));
            failures++;
        }
        if (st == GDN_STATUS_SUCCESS) { /* gdn_context_kernel_for: every choice applied */
            gdn_problem p;
            memset(&p, 0, sizeof p);
            p.num_k_heads = 16;
            p.num_v_heads = 32;
            p.k_dim = 128;
            p.v_dim = 128;
            const char *isa = gdn_isa_name(d.isa), *dec = gdn_context_kernel_for(ctx, &p, 1, 0),
                       *pre = gdn_context_kernel_for(ctx, &p, 4096, 0), *cap = gdn_context_kernel_for(ctx, &p, 4096, 1);
            p.precision = GDN_PRECISION_BF16;
            const char *b16 = gdn_context_kernel_for(ctx, &p, 4096, 0);
            p.algo = GDN_ALGO_RECURRENT;
            const char *rec = gdn_context_kernel_for(ctx, &p, 4096, 0);
            const int want_bf16 = d.isa == GDN_ISA_AVX512 && (gdn_cpu_features() & GDN_CPU_AVX512BF16);
            checks++;
            if (!strstr(dec, "recurrent_f32__") || !strstr(dec, isa) || !strstr(pre, "chunk_f32__") ||
                !strstr(pre, isa) || !strstr(cap, "recurrent_f32__") || !strstr(rec, "recurrent_f32__") ||
                strcmp(b16, want_bf16 ? "chunk_bf16__avx512bf16" : pre) != 0 ||
                strcmp(gdn_context_kernel_for(NULL, &p, 1, 0), "none") != 0 ||
                strcmp(gdn_context_kernel_for(ctx, NULL, 1, 0), "none") != 0) {
                printf("FAIL gdn_context_kernel_for (isa=%s): %s %s %s %s %s\n", isa, dec, pre, cap, b16, rec);
                failures++;
            }
        }
        gdn_context_destroy(ctx);
    }
}

/* GDN_ISA overrides AUTO, not an explicit choice; a bad value is an error that names it. */
static void isa_environment(void)
{
    gdn_context *ctx = NULL;
    gdn_context_desc d;
    memset(&d, 0, sizeof d);
    setenv("GDN_ISA", "bogus", 1);
    checks++;
    const gdn_status st = gdn_context_create(&d, &ctx);
    if (st != INVALID || ctx || !strstr(gdn_last_error(NULL), "GDN_ISA")) {
        printf("FAIL GDN_ISA=bogus: status %d, message \"%s\"\n", st, gdn_last_error(NULL));
        failures++;
    }
    gdn_context_destroy(ctx);
    setenv("GDN_ISA", "scalar", 1);
    ctx = NULL;
    checks++;
    if (gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS || gdn_context_isa(ctx) != GDN_ISA_SCALAR) {
        printf("FAIL GDN_ISA=scalar: AUTO context does not run scalar kernels\n");
        failures++;
    }
    gdn_context_destroy(ctx);
    for (int i = 2; i <= 3; i++) {
        if (!gdn_cpu_supports((gdn_isa)i))
            continue;
        d.isa = (gdn_isa)i;
        ctx = NULL;
        checks++;
        if (gdn_context_create(&d, &ctx) != GDN_STATUS_SUCCESS || gdn_context_isa(ctx) != d.isa) {
            printf("FAIL GDN_ISA=scalar overrode an explicit isa=%s\n", gdn_isa_name(d.isa));
            failures++;
        }
        gdn_context_destroy(ctx);
    }
    unsetenv("GDN_ISA");
}

static void names(void)
{
    const char *seen[6];
    for (int s = 0; s <= 5; s++) {
        const char *n = gdn_status_string((gdn_status)s);
        seen[s] = NULL;
        checks++;
        if (!n || !*n || !strcmp(n, "unknown status")) {
            printf("FAIL gdn_status_string(%d) = \"%s\"\n", s, n ? n : "(null)");
            failures++;
            continue;
        }
        seen[s] = n;
        for (int j = 0; j < s; j++)
            if (seen[j] && !strcmp(seen[j], n)) {
                printf("FAIL gdn_status_string(%d) == gdn_status_string(%d) = \"%s\"\n", s, j, n);
                failures++;
            }
    }
    checks++;
    if (strcmp(gdn_status_string((gdn_status)99), "unknown status") != 0 ||
        strcmp(gdn_status_string((gdn_status)-1), "unknown status") != 0) {
        printf("FAIL gdn_status_string of unknown values\n");
        failures++;
    }
    checks++;
    if (strcmp(gdn_isa_name(GDN_ISA_AUTO), "auto") || strcmp(gdn_isa_name(GDN_ISA_SCALAR), "scalar") ||
        strcmp(gdn_isa_name(GDN_ISA_AVX2), "avx2") || strcmp(gdn_isa_name(GDN_ISA_AVX512), "avx512") ||
        !gdn_isa_name((gdn_isa)42) || !gdn_cpu_supports(GDN_ISA_SCALAR) || !gdn_cpu_supports(GDN_ISA_AUTO) ||
        gdn_cpu_supports((gdn_isa)42)) {
        printf("FAIL ISA names or gdn_cpu_supports\n");
        failures++;
    }
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d.%d", GDN_VERSION_MAJOR, GDN_VERSION_MINOR, GDN_VERSION_PATCH);
    checks++;
    if (gdn_version() != GDN_VERSION || strcmp(gdn_version_string(), ver) != 0) {
        printf("FAIL version: %d \"%s\", header %d \"%s\"\n", gdn_version(), gdn_version_string(), GDN_VERSION, ver);
        failures++;
    }
}

int main(void)
{
    fill_inputs();
    gdn_context *ctx = NULL;
    if (gdn_context_create(NULL, &ctx) != GDN_STATUS_SUCCESS) {
        printf("FAIL gdn_context_create: %s\n", gdn_last_error(NULL));
        return 1;
    }
    forward_errors(ctx);
    gdn_context_destroy(ctx);
    context_errors();
    isa_environment();
    names();
    printf("%s: %d checks, %d failures\n", failures ? "FAIL" : "PASS", checks, failures);
    return failures ? 1 : 0;
}
