/*
 * conv1d.c — the CPU causal convolution (gdn_conv1d_forward).
 *
 * Work items are (channel block, group of sequences): a block of up to 256 channels (fewer when the
 * call has too little work for every thread) of a contiguous range of sequences. Channels are
 * independent, so items never share writes, and the kernel computes every channel with the same
 * instruction sequence whatever its block: results do not depend on the thread count or the blocking.
 *
 * Per item, the weights of the block are transposed once into rows [W][ld] (ld = the block rounded up to
 * 16 floats, padding zero; AVX-512: lane permutes when the weight is contiguous [C][W]).
 *
 * Fused path (AVX-512, f32 or bf16 x/y of channel stride 1, no capture): per sequence the read slot's
 * conv state is transposed into K window rows [K][ld] (zeros for a negative read slot or no pool); the
 * kernel then reads x rows and writes y rows directly, in blocks of CONV_FUSED_TB tokens (the rows of a
 * block touch few pages; the next block's lines are prefetched), each column of 16 channels keeping its
 * window in registers and leaving the last K inputs in the window rows for the next block; after the
 * last block the window rows are the final state. Replay (no y) only copies the last K inputs.
 *
 * Buffered path (everything else: captures, f16, strided channels, scalar and AVX2): a buffer of rows
 * [K + TB][ld] (K = W-1) holds the K inputs before the current block of up to TB tokens (first the read
 * slot's conv state), then the block's inputs converted to f32. The kernel turns the buffer into TB
 * output rows, which are stored in y's dtype; the conv state after token j is rows j+1 .. j+K of the
 * buffer (written, transposed, to the capture destination); the last K rows move to the front for the
 * next block; after the last block the front K rows are the final state.
 *
 * Both paths compute every lane with the same arithmetic (bitwise equal results), read every input of a
 * lane before its output is stored, and read the state before anything of the sequence is written: y may
 * be x itself, and captures may go to the sequence's own read slot.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "cpu/conv1d.h"
#include "cpu/prep.h"

#define CONV_MAX_BLOCK 256 /* channels per item at most */
#define CONV_MAX_TB 64     /* tokens per buffered block at most */
#define CONV_FUSED_TB 32   /* tokens per block of the fused kernel */

void gdn_conv1d_f32__scalar(const gdn_conv1d_args *a)
{
    const int W = a->width;
    const int64_t ld = a->ld;
    for (int t = 0; t < a->n_tokens; t++) {
        float *out = a->out + (int64_t)t * ld;
        const float *in = a->in + (int64_t)t * ld;
        for (int64_t i = 0; i < ld; i++) {
            float z = a->bias[i];
            for (int j = 0; j < W; j++)
                z += a->w[j * ld + i] * in[j * ld + i];
            out[i] = a->silu ? z / (1.0f + expf(-z)) : z;
        }
    }
}

gdn_conv1d_fn gdn_cpu_conv1d_kernel(const gdn_context *ctx, const char **name)
{
#ifdef GDN_HAVE_X86
    if (ctx->isa == GDN_ISA_AVX512) {
        if (name)
            *name = "conv1d_f32__avx512";
        return gdn_conv1d_f32__avx512;
    }
    if (ctx->isa == GDN_ISA_AVX2) {
        if (name)
            *name = "conv1d_f32__avx2";
        return gdn_conv1d_f32__avx2;
    }
#else
    (void)ctx;
#endif
    if (name)
        *name = "conv1d_f32__scalar";
    return gdn_conv1d_f32__scalar;
}

/* K rows [K][ld] of cb channels <- a conv state [C][K] at element strides (stc, stj), from channel c0. */
static void state_to_rows(int avx512, const float *src, int64_t stc, int64_t stj, int cb, int K, float *rows,
                          int64_t ld)
{
#ifdef GDN_HAVE_X86
    if (avx512 && stj == 1 && stc == K) {
        gdn_conv1d_state_in__avx512(src, cb, K, rows, ld);
        return;
    }
#else
    (void)avx512;
#endif
    if (stj == 1) {
        for (int i = 0; i < cb; i++)
            for (int j = 0; j < K; j++)
                rows[j * ld + i] = src[i * stc + j];
    } else {
        for (int j = 0; j < K; j++)
            for (int i = 0; i < cb; i++)
                rows[j * ld + i] = src[i * stc + j * stj];
    }
}

static void rows_to_state(int avx512, const float *rows, int64_t ld, int cb, int K, float *dst, int64_t stc,
                          int64_t stj)
{
#ifdef GDN_HAVE_X86
    if (avx512 && stj == 1 && stc == K) {
        gdn_conv1d_state_out__avx512(rows, ld, cb, K, dst);
        return;
    }
#else
    (void)avx512;
#endif
    if (stj == 1) {
        for (int i = 0; i < cb; i++)
            for (int j = 0; j < K; j++)
                dst[i * stc + j] = rows[j * ld + i];
    } else {
        for (int j = 0; j < K; j++)
            for (int i = 0; i < cb; i++)
                dst[i * stc + j * stj] = rows[j * ld + i];
    }
}

typedef struct conv_job {
    const gdn_context *ctx;
    const gdn_conv_plan *p;
    gdn_conv1d_fn kernel;
    int block;       /* channels per block */
    int64_t cblocks; /* channel blocks */
    int64_t group;   /* sequences per group */
    int tb;          /* tokens per buffered block */
    int avx512;      /* the AVX-512 state transposes and bf16 rows */
    int fused;       /* the fused AVX-512 kernel (f32/bf16 rows of channel stride 1) for sequences without capture */
    int ftb;         /* tokens per block of the fused kernel */
    int bf16_hw;     /* the CPU has AVX512_BF16 (the context has the bf16 chunk kernel exactly then) */
} conv_job;

static void load_x(const conv_job *jb, int64_t base, int n, float *dst)
{
    const gdn_conv_plan *p = jb->p;
#ifdef GDN_HAVE_X86
    if (jb->avx512 && p->dtype == GDN_DTYPE_BF16 && p->x.st[2] == 1) {
        gdn_conv1d_bf16_in__avx512((const uint16_t *)p->x.data + base, n, dst);
        return;
    }
#endif
    gdn_cpu_load_row(jb->ctx, &p->x, p->dtype, base, p->x.st[2], n, dst);
}

static void store_y(const conv_job *jb, int64_t base, int n, const float *src)
{
    const gdn_conv_plan *p = jb->p;
#ifdef GDN_HAVE_X86
    if (jb->avx512 && p->dtype == GDN_DTYPE_BF16 && p->y.st[2] == 1) {
        gdn_conv1d_bf16_out__avx512(src, n, (uint16_t *)p->y.data + base);
        return;
    }
#endif
    gdn_cpu_store_row(jb->ctx, &p->y, p->dtype, base, p->y.st[2], n, src);
}

/* The read slot's state of sequence n (zeros without one) into rows [K][ld]; padding lanes zero. */
static void read_state(const conv_job *jb, int64_t rs, int c0, int cb, int64_t ld, float *rows)
{
    const gdn_conv_plan *p = jb->p;
    const int K = p->K;
    if (rs >= 0) {
        state_to_rows(jb->avx512, (const float *)p->pool.data + rs * p->pool.st[0] + c0 * p->pool.st[1], p->pool.st[1],
                      p->pool.st[2], cb, K, rows, ld);
        if (cb < ld)
            for (int j = 0; j < K; j++)
                memset(rows + j * ld + cb, 0, sizeof(float) * (size_t)(ld - cb));
    } else {
        memset(rows, 0, sizeof(float) * (size_t)(K * ld));
    }
}

/* A sequence without capture on the fused kernel: the state into K window rows, the tokens in blocks of
 * ftb straight from x to y (the window carried in the rows), the rows to the write slot. Replay (no y):
 * only the last K inputs are copied into the window. */
static void run_sequence_fused(const conv_job *jb, int64_t n, int c0, int cb, int64_t ld, const float *wt,
                               const float *bias, float *win)
{
#ifdef GDN_HAVE_X86
    const gdn_conv_plan *p = jb->p;
    const gdn_plan *s = &p->seq;
    const int K = p->K;
    int64_t b, t0, t1;
    gdn_plan_seq(s, n, &b, &t0, &t1);
    const int64_t rs = gdn_plan_read_slot(s, n), ws = gdn_plan_write_slot(s, n);
    if (t1 == t0 && rs == ws)
        return;
    if (p->has_y) {
        read_state(jb, rs, c0, cb, ld, win);
        const size_t es = gdn_dtype_size(p->dtype);
        for (int64_t tb = t0; tb < t1; tb += jb->ftb) {
            const int nt = (int)(t1 - tb < jb->ftb ? t1 - tb : jb->ftb);
            const gdn_conv1d_rows_args a = {nt,
                                            p->W,
                                            p->act == GDN_CONV_SILU,
                                            p->dtype == GDN_DTYPE_BF16,
                                            jb->bf16_hw,
                                            t1 - tb >= 2 * (int64_t)jb->ftb ? jb->ftb : 0,
                                            cb,
                                            (const char *)p->x.data + (b * p->x.st[0] + tb * p->x.st[1] + c0) * (int64_t)es,
                                            p->x.st[1],
                                            (char *)p->y.data + (b * p->y.st[0] + tb * p->y.st[1] + c0) * (int64_t)es,
                                            p->y.st[1],
                                            win,
                                            ld,
                                            wt,
                                            bias};
            gdn_conv1d_rows__avx512(&a);
        }
    } else {
        /* replay: the window is the last K inputs (the state's last ones in front for short sequences) */
        const int64_t len = t1 - t0;
        if (len < K) {
            read_state(jb, rs, c0, cb, ld, win);
            memmove(win, win + len * ld, sizeof(float) * (size_t)((K - len) * ld));
        }
        const int64_t first = len < K ? t0 : t1 - K;
        for (int64_t t = first; t < t1; t++)
            load_x(jb, b * p->x.st[0] + t * p->x.st[1] + c0, cb, win + (K - (t1 - t)) * ld);
    }
    if (ws >= 0)
        rows_to_state(jb->avx512, win, ld, cb, K, (float *)p->pool.data + ws * p->pool.st[0] + c0 * p->pool.st[1],
                      p->pool.st[1], p->pool.st[2]);
#else
    (void)jb, (void)n, (void)c0, (void)cb, (void)ld, (void)wt, (void)bias, (void)win;
#endif
}

static void run_sequence(const conv_job *jb, int64_t n, int c0, int cb, int64_t ld, const float *wt, const float *bias,
                         float *buf, float *out)
{
    const gdn_conv_plan *p = jb->p;
    const gdn_plan *s = &p->seq;
    const int K = p->K, TB = jb->tb;
    int64_t b, t0, t1;
    gdn_plan_seq(s, n, &b, &t0, &t1);
    const int64_t rs = gdn_plan_read_slot(s, n), ws = gdn_plan_write_slot(s, n);
    if (t1 == t0 && rs == ws)
        return; /* nothing to do: no tokens, state stays */

    read_state(jb, rs, c0, cb, ld, buf);

    /* no output and no capture (replay): only the last K inputs matter */
    const int64_t first = !p->has_y && s->cap_mode == GDN_CAPTURE_NONE && t1 - t0 > K ? t1 - K : t0;
    for (int64_t tb = first; tb < t1; tb += TB) {
        const int nt = (int)(t1 - tb < TB ? t1 - tb : TB);
        for (int j = 0; j < nt; j++)
            load_x(jb, b * p->x.st[0] + (tb + j) * p->x.st[1] + c0 * p->x.st[2], cb, buf + (K + j) * ld);
        if (p->has_y) {
            const gdn_conv1d_args a = {nt, p->W, ld, p->act == GDN_CONV_SILU, buf, wt, bias, out};
            jb->kernel(&a);
            for (int j = 0; j < nt; j++)
                store_y(jb, b * p->y.st[0] + (tb + j) * p->y.st[1] + c0 * p->y.st[2], cb, out + j * ld);
        }
        if (s->cap_mode == GDN_CAPTURE_DENSE) {
            for (int j = 0; j < nt; j++)
                rows_to_state(jb->avx512, buf + (j + 1) * ld, ld, cb, K,
                              (float *)p->cap.data + b * p->cap.st[0] + (tb + j) * p->cap.st[1] + c0 * p->cap.st[2],
                              p->cap.st[2], p->cap.st[3]);
        } else if (s->cap_mode == GDN_CAPTURE_SLOTS) {
            for (int j = 0; j < nt; j++) {
                const int64_t slot = gdn_plan_cap_slot(s, n, tb + j - t0, b, tb + j);
                if (slot >= 0)
                    rows_to_state(jb->avx512, buf + (j + 1) * ld, ld, cb, K,
                                  (float *)p->cap.data + slot * p->cap.st[0] + c0 * p->cap.st[1], p->cap.st[1],
                                  p->cap.st[2]);
            }
        }
        memmove(buf, buf + nt * ld, sizeof(float) * (size_t)(K * ld));
    }
    if (ws >= 0)
        rows_to_state(jb->avx512, buf, ld, cb, K, (float *)p->pool.data + ws * p->pool.st[0] + c0 * p->pool.st[1], p->pool.st[1],
                      p->pool.st[2]);
}

static void run_item(void *arg, int64_t item, int thread)
{
    const conv_job *jb = (const conv_job *)arg;
    const gdn_conv_plan *p = jb->p;
    const int64_t cbk = item % jb->cblocks, g = item / jb->cblocks;
    const int c0 = (int)(cbk * jb->block);
    const int cb = p->C - c0 < jb->block ? p->C - c0 : jb->block;
    const int64_t ld = (cb + 15) / 16 * 16;
    const int W = p->W, K = p->K;
    float *scr = jb->ctx->scratch + (size_t)thread * jb->ctx->scratch_floats;
    float *wt = scr, *bias = wt + W * ld, *buf = bias + ld, *out = buf + (K + jb->tb) * ld;

    /* weights [C][W] (strided) -> rows [W][ld]; bias -> one row; padding lanes zero */
    const float *wsrc = (const float *)p->weight.data + (int64_t)c0 * p->weight.st[0];
    state_to_rows(jb->avx512, wsrc, p->weight.st[0], p->weight.st[1], cb, W, wt, ld);
    if (p->bias)
        memcpy(bias, p->bias + c0, sizeof(float) * (size_t)cb);
    else
        memset(bias, 0, sizeof(float) * (size_t)cb);
    if (cb < ld)
        for (int j = 0; j <= W; j++)
            memset(wt + j * ld + cb, 0, sizeof(float) * (size_t)(ld - cb));

    const int64_t n0 = g * jb->group, n1 = n0 + jb->group < p->seq.N ? n0 + jb->group : p->seq.N;
    int cleared = 0;
    for (int64_t n = n0; n < n1; n++) {
        if (jb->fused && p->seq.cap_mode == GDN_CAPTURE_NONE) {
            run_sequence_fused(jb, n, c0, cb, ld, wt, bias, buf);
            continue;
        }
        if (!cleared) { /* the buffered kernel computes every lane of its rows: padding defined */
            memset(buf, 0, sizeof(float) * (size_t)((K + 2 * jb->tb) * ld));
            cleared = 1;
        }
        run_sequence(jb, n, c0, cb, ld, wt, bias, buf, out);
    }
}

void gdn_cpu_conv1d_forward(gdn_context *ctx, const gdn_conv_plan *p)
{
    const int64_t N = p->seq.N, C = p->C, target = 4 * (int64_t)ctx->num_threads;
    int block = CONV_MAX_BLOCK;
    while (block > 32 && (C + block - 1) / block * N < target)
        block /= 2;
    if (block > (C + 15) / 16 * 16)
        block = (int)((C + 15) / 16 * 16);
    const int64_t cblocks = (C + block - 1) / block;
    int64_t ngroups = (target + cblocks - 1) / cblocks;
    if (ngroups > N)
        ngroups = N;
    const int64_t group = (N + ngroups - 1) / ngroups;
    ngroups = (N + group - 1) / group;

    /* tokens per buffered block: what the per-thread scratch holds (it holds CONV_MAX_TB at ld = 256) */
    const int64_t ld = (block + 15) / 16 * 16;
    int64_t tb = ((int64_t)(ctx->scratch_floats / (size_t)ld) - (p->W + 1 + p->K)) / 2;
    if (tb > CONV_MAX_TB)
        tb = CONV_MAX_TB;
    if (tb < 1)
        tb = 1;

    const int avx512 = ctx->isa == GDN_ISA_AVX512;
    const int fused = avx512 && (p->dtype == GDN_DTYPE_F32 || p->dtype == GDN_DTYPE_BF16) && p->x.st[2] == 1 &&
                      (!p->has_y || p->y.st[2] == 1);
    conv_job jb = {ctx, p, gdn_cpu_conv1d_kernel(ctx, NULL), block, cblocks, group, (int)tb, avx512, fused, CONV_FUSED_TB,
                   avx512 && ctx->chunk_bf16 != NULL};
    gdn_threadpool_run(ctx->pool, cblocks * ngroups, run_item, &jb);
}
