/*
 * driver.c — the CPU backend.
 *
 * Work items are (sequence n, value head h, tile of Dv rows); rows of the state evolve
 * independently, so items never share writes and results do not depend on the thread count or
 * the tiling. Dv is split into tiles only when there are too few (sequence, head) pairs to keep
 * every thread busy. Per item, blocks of up to GDN_CPU_BLOCK_TOKENS tokens are prepared in f32
 * (inputs converted from their dtype and strides, q and k L2-normalised when asked, q scaled,
 * k.q, decay and beta computed from the gate convention) and handed to the token-loop kernel.
 *
 * State rows: when the pool is [Dv][Dk] with unit stride along Dk and both slots exist, the kernel
 * reads the read slot and writes the write slot directly; otherwise the rows are gathered into a
 * [rows][Dk] tile (zeros for a negative read slot), advanced there, and scattered to the write
 * slot in the pool's layout. Captures likewise go straight into [Dv][Dk] unit-stride destinations,
 * or token by token through a tile.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "cpu/chunked.h"
#include "cpu/convert.h"
#include "cpu/cpuid.h"
#include "cpu/driver.h"
#include "cpu/prep.h"

#define TB GDN_CPU_BLOCK_TOKENS
#define MAXD GDN_MAX_HEAD_DIM

/* scratch layout per thread, in floats (each region a multiple of 16 floats) */
#define OFF_Q 0
#define OFF_K (OFF_Q + TB * MAXD)
#define OFF_KQ (OFF_K + TB * MAXD)
#define OFF_DECAY (OFF_KQ + TB)
#define OFF_BETA (OFF_DECAY + TB)
#define OFF_V (OFF_BETA + TB)
#define OFF_Y (OFF_V + TB * MAXD)
#define OFF_TILE (OFF_Y + TB * MAXD)
#define OFF_CTILE (OFF_TILE + MAXD * MAXD)
#define OFF_CPTR (OFF_CTILE + MAXD * MAXD)
#define SCRATCH_FLOATS (OFF_CPTR + 2 * TB) /* TB pointers of up to 8 bytes */

size_t gdn_cpu_scratch_floats(void)
{
    const size_t chunked = gdn_cpu_chunked_scratch_floats();
    return chunked > SCRATCH_FLOATS ? chunked : SCRATCH_FLOATS;
}

gdn_status gdn_cpu_select(gdn_context *ctx, gdn_isa requested, char *err, size_t err_len)
{
    gdn_isa want = requested;
    const char *env = NULL;
    if (requested == GDN_ISA_AUTO) {
        env = getenv("GDN_ISA");
        if (env && *env) {
            if (!strcmp(env, "scalar"))
                want = GDN_ISA_SCALAR;
            else if (!strcmp(env, "avx2"))
                want = GDN_ISA_AVX2;
            else if (!strcmp(env, "avx512"))
                want = GDN_ISA_AVX512;
            else if (strcmp(env, "auto") != 0) {
                snprintf(err, err_len, "GDN_ISA=%s: unknown ISA (expected scalar, avx2, avx512 or auto)", env);
                return GDN_STATUS_INVALID_ARGUMENT;
            }
        }
    }
    if (want == GDN_ISA_AUTO)
        want = gdn_cpu_supports(GDN_ISA_AVX512) ? GDN_ISA_AVX512
               : gdn_cpu_supports(GDN_ISA_AVX2) ? GDN_ISA_AVX2
                                                 : GDN_ISA_SCALAR;
    if ((unsigned)want > GDN_ISA_AVX512) {
        snprintf(err, err_len, "desc.isa = %d: unknown ISA", (int)want);
        return GDN_STATUS_INVALID_ARGUMENT;
    }
    if (!gdn_cpu_supports(want)) {
        snprintf(err, err_len, "%s: this CPU (or build) cannot run %s kernels",
                 env && *env ? "GDN_ISA" : "desc.isa", gdn_isa_name(want));
        return GDN_STATUS_BACKEND_UNAVAILABLE;
    }
    ctx->isa = want;
    ctx->recurrent = gdn_recurrent_f32__scalar;
    ctx->recurrent_name = "recurrent_f32__scalar";
    ctx->chunk_keys = gdn_chunk_keys_f32__scalar;
    ctx->chunk = gdn_chunk_f32__scalar;
    ctx->chunk_transpose = gdn_chunk_transpose_f32__scalar;
    ctx->chunk_name = "chunk_f32__scalar";
    ctx->chunk_bf16 = NULL;
    ctx->chunk_bf16_name = NULL;
    ctx->chunk_keys_bf16 = NULL;
    ctx->f16_to_f32 = gdn_f16_to_f32__scalar;
    ctx->f32_to_f16 = gdn_f32_to_f16__scalar;
#ifdef GDN_HAVE_X86
    if (want == GDN_ISA_AVX512) {
        ctx->recurrent = gdn_recurrent_f32__avx512;
        ctx->recurrent_name = "recurrent_f32__avx512";
        ctx->chunk_keys = gdn_chunk_keys_f32__avx512;
        ctx->chunk = gdn_chunk_f32__avx512;
        ctx->chunk_transpose = gdn_chunk_transpose_f32__avx512;
        ctx->chunk_name = "chunk_f32__avx512";
        if (gdn_cpu_features() & GDN_CPU_AVX512BF16) {
            ctx->chunk_bf16 = gdn_chunk_bf16__avx512bf16;
            ctx->chunk_bf16_name = "chunk_bf16__avx512bf16";
            ctx->chunk_keys_bf16 = gdn_chunk_keys_bf16__avx512bf16;
        }
    } else if (want == GDN_ISA_AVX2) {
        ctx->recurrent = gdn_recurrent_f32__avx2;
        ctx->recurrent_name = "recurrent_f32__avx2";
        ctx->chunk_keys = gdn_chunk_keys_f32__avx2;
        ctx->chunk = gdn_chunk_f32__avx2;
        ctx->chunk_transpose = gdn_chunk_transpose_f32__avx2;
        ctx->chunk_name = "chunk_f32__avx2";
    }
    if (want != GDN_ISA_SCALAR) { /* AVX2 and AVX-512 imply F16C */
        ctx->f16_to_f32 = gdn_f16_to_f32__f16c;
        ctx->f32_to_f16 = gdn_f32_to_f16__f16c;
    }
#endif
    return GDN_STATUS_SUCCESS;
}

/* --- state and capture tiles ------------------------------------------------------------- */

/* Destination of the state after token t for item (n, h): head base and its (row, col) strides. */
static float *capture_head(const gdn_plan *p, int64_t n, int64_t j, int64_t b, int64_t t, int h,
                           const int64_t **st2)
{
    if (p->cap_mode == GDN_CAPTURE_DENSE) {
        *st2 = &p->cap.st[3];
        return (float *)p->cap.data + b * p->cap.st[0] + t * p->cap.st[1] + (int64_t)h * p->cap.st[2];
    }
    const int64_t slot = gdn_plan_cap_slot(p, n, j, b, t);
    *st2 = &p->cap.st[2];
    if (slot < 0)
        return NULL;
    return (float *)p->cap.data + slot * p->cap.st[0] + (int64_t)h * p->cap.st[1];
}

static void gather_tile(gdn_state_layout layout, const float *head, const int64_t *st2, int r0, int rows, int dk,
                        float *tile)
{
    if (layout == GDN_STATE_VK && st2[1] == 1) { /* rows are contiguous: copy them */
        for (int r = 0; r < rows; r++)
            memcpy(tile + (int64_t)r * dk, head + (int64_t)(r0 + r) * st2[0], (size_t)dk * sizeof(float));
        return;
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < dk; c++)
            tile[(int64_t)r * dk + c] = head[gdn_state_offset(layout, st2, r0 + r, c)];
}

static void scatter_tile(gdn_state_layout layout, float *head, const int64_t *st2, int r0, int rows, int dk,
                         const float *tile)
{
    if (layout == GDN_STATE_VK && st2[1] == 1) {
        for (int r = 0; r < rows; r++)
            memcpy(head + (int64_t)(r0 + r) * st2[0], tile + (int64_t)r * dk, (size_t)dk * sizeof(float));
        return;
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < dk; c++)
            head[gdn_state_offset(layout, st2, r0 + r, c)] = tile[(int64_t)r * dk + c];
}

/* --- block preparation ------------------------------------------------------------------- */

typedef struct block {
    float *q, *k, *kq, *decay, *beta, *v;
} block;

static void prepare_block(const gdn_context *ctx, const gdn_plan *p, int64_t b, int64_t tb, int nt, int hk, int h,
                          int r0, int rows, const block *blk)
{
    const int dk = p->Dk;
    for (int j = 0; j < nt; j++) {
        const int64_t t = tb + j;
        float *q = blk->q + (int64_t)j * dk, *k = blk->k + (int64_t)j * dk;
        gdn_cpu_load_qk(ctx, p, b, t, hk, q, k);
        blk->kq[j] = gdn_cpu_dot8(k, q, dk);
        gdn_cpu_token_gate(p, b, t, h, &blk->decay[j], &blk->beta[j]);
        gdn_cpu_load_row(ctx, &p->v, p->dtype, b * p->v.st[0] + t * p->v.st[1] + h * p->v.st[2] + r0 * p->v.st[3],
                         p->v.st[3], rows, blk->v + (int64_t)j * rows);
    }
}

/* Touch the next block's input rows (q, k, v) while this block is prepared: independent loads,
 * one per cache line, that the core overlaps. In long prefills the rows of consecutive tokens are
 * far apart in DRAM and neither the hardware prefetchers nor prefetch instructions (measured: no
 * gain) bring them in early; these loads took T = 4096 prefill from ~148 to ~170 GFLOP/s here. */
static void touch_block(const gdn_plan *p, int64_t b, int64_t tb, int nt, int hk, int h, int r0, int rows)
{
    const size_t es = gdn_dtype_size(p->dtype);
    const int64_t qk_bytes = (int64_t)p->Dk * (int64_t)es, v_bytes = (int64_t)rows * (int64_t)es;
    const int qk_contig = p->q.st[3] == 1 && p->k.st[3] == 1, v_contig = p->v.st[3] == 1;
    int acc = 0;
    for (int j = 0; j < nt; j++) {
        const int64_t t = tb + j;
        const char *q = p->q.data + (size_t)(b * p->q.st[0] + t * p->q.st[1] + hk * p->q.st[2]) * es;
        const char *k = p->k.data + (size_t)(b * p->k.st[0] + t * p->k.st[1] + hk * p->k.st[2]) * es;
        const char *v = p->v.data + (size_t)(b * p->v.st[0] + t * p->v.st[1] + h * p->v.st[2] + r0 * p->v.st[3]) * es;
        for (int64_t o = 0; qk_contig && o < qk_bytes; o += 64)
            acc += q[o] + k[o];
        for (int64_t o = 0; v_contig && o < v_bytes; o += 64)
            acc += v[o];
    }
    volatile int sink = acc; /* keeps the loads; a local, so threads share nothing */
    (void)sink;
}

/* --- one work item ----------------------------------------------------------------------- */

static void run_item(const gdn_context *ctx, const gdn_plan *p, float *scr, int64_t n, int h, int r0, int rows)
{
    const int dk = p->Dk;
    int64_t b, t0, t1;
    gdn_plan_seq(p, n, &b, &t0, &t1);
    const int64_t rs = gdn_plan_read_slot(p, n), ws = gdn_plan_write_slot(p, n);
    const gdn_recurrent_fn kernel = dk % 16 == 0 ? ctx->recurrent : gdn_recurrent_f32__scalar;
    float *tile = scr + OFF_TILE, *ctile = scr + OFF_CTILE;
    float **cptr = (float **)(void *)(scr + OFF_CPTR);

    const int direct = p->has_pool && rs >= 0 && ws >= 0 && p->layout == GDN_STATE_VK && p->pool.st[3] == 1;
    const float *s_in;
    float *s_out;
    int64_t s_stride;
    if (direct) {
        s_in = gdn_cpu_pool_head(p, rs, h) + r0 * p->pool.st[2];
        s_out = gdn_cpu_pool_head(p, ws, h) + r0 * p->pool.st[2];
        s_stride = p->pool.st[2];
    } else {
        if (rs >= 0)
            gather_tile(p->layout, gdn_cpu_pool_head(p, rs, h), &p->pool.st[2], r0, rows, dk, tile);
        else
            memset(tile, 0, (size_t)rows * (size_t)dk * sizeof(float));
        s_in = s_out = tile;
        s_stride = dk;
    }

    const int cap_direct = p->cap_mode != GDN_CAPTURE_NONE && p->layout == GDN_STATE_VK &&
                           (p->cap_mode == GDN_CAPTURE_DENSE ? p->cap.st[4] : p->cap.st[3]) == 1;
    const int hk = gdn_plan_key_head(p, h);
    const block blk = {scr + OFF_Q, scr + OFF_K, scr + OFF_KQ, scr + OFF_DECAY, scr + OFF_BETA, scr + OFF_V};
    float *y = scr + OFF_Y;

    for (int64_t tb = t0; tb < t1; tb += TB) {
        const int nt = (int)(t1 - tb < TB ? t1 - tb : TB);
        prepare_block(ctx, p, b, tb, nt, hk, h, r0, rows, &blk);
        if (tb + nt < t1)
            touch_block(p, b, tb + nt, (int)(t1 - tb - nt < TB ? t1 - tb - nt : TB), hk, h, r0, rows);
        gdn_recurrent_args a = {nt, dk, rows, blk.q, blk.k, blk.kq, blk.decay, blk.beta, blk.v,
                                p->has_out ? y : NULL, s_in, s_out, s_stride, NULL, 0};
        if (p->cap_mode == GDN_CAPTURE_NONE) {
            kernel(&a);
        } else if (cap_direct) {
            int64_t cstride = 0;
            for (int j = 0; j < nt; j++) {
                const int64_t *st2;
                float *head = capture_head(p, n, tb + j - t0, b, tb + j, h, &st2);
                cptr[j] = head ? head + r0 * st2[0] : NULL;
                cstride = st2[0];
            }
            a.capture = cptr;
            a.cap_stride = cstride;
            kernel(&a);
        } else {
            /* capture through a [rows][Dk] tile, one token per call */
            for (int j = 0; j < nt; j++) {
                gdn_recurrent_args a1 = a;
                a1.n_tokens = 1;
                a1.q = blk.q + (int64_t)j * dk;
                a1.k = blk.k + (int64_t)j * dk;
                a1.kq = blk.kq + j;
                a1.decay = blk.decay + j;
                a1.beta = blk.beta + j;
                a1.v = blk.v + (int64_t)j * rows;
                a1.y = a.y ? a.y + (int64_t)j * rows : NULL;
                a1.s_in = j == 0 ? s_in : s_out;
                cptr[0] = ctile;
                a1.capture = cptr;
                a1.cap_stride = dk;
                kernel(&a1);
                const int64_t *st2;
                float *head = capture_head(p, n, tb + j - t0, b, tb + j, h, &st2);
                if (head)
                    scatter_tile(p->layout, head, st2, r0, rows, dk, ctile);
            }
        }
        s_in = s_out;
        if (p->has_out) {
            for (int j = 0; j < nt; j++) {
                const int64_t base = b * p->out.st[0] + (tb + j) * p->out.st[1] + h * p->out.st[2] + r0 * p->out.st[3];
                gdn_cpu_store_row(ctx, &p->out, p->out_dtype, base, p->out.st[3], rows, y + (int64_t)j * rows);
            }
        }
    }

    if (direct) {
        if (t1 == t0 && rs != ws)
            for (int r = 0; r < rows; r++)
                memcpy(s_out + r * s_stride, s_in + r * s_stride, (size_t)dk * sizeof(float));
    } else if (ws >= 0) {
        scatter_tile(p->layout, gdn_cpu_pool_head(p, ws, h), &p->pool.st[2], r0, rows, dk, tile);
    }
}

typedef struct job {
    const gdn_context *ctx;
    const gdn_plan *plan;
    int ntiles, tile_rows;
} job;

static void run_job_item(void *arg, int64_t i, int thread)
{
    const job *jb = (const job *)arg;
    const gdn_plan *p = jb->plan;
    const int64_t n = i / (p->Hv * (int64_t)jb->ntiles);
    const int h = (int)((i / jb->ntiles) % p->Hv);
    const int r0 = (int)(i % jb->ntiles) * jb->tile_rows;
    const int rows = p->Dv - r0 < jb->tile_rows ? p->Dv - r0 : jb->tile_rows;
    if (rows <= 0)
        return;
    float *scr = jb->ctx->scratch + (size_t)thread * jb->ctx->scratch_floats;
    if (gdn_cpu_use_chunked(p, n)) {
        gdn_cpu_chunked_item(jb->ctx, p, scr, n, h, r0, rows);
        return;
    }
    run_item(jb->ctx, p, scr, n, h, r0, rows);
}

void gdn_cpu_forward(gdn_context *ctx, const gdn_plan *p)
{
    const int64_t pairs = p->N * p->Hv;
    const int nthreads = ctx->num_threads;
    int ntiles = 1;
    if (pairs < 4 * (int64_t)nthreads) {
        const int64_t want = (4 * (int64_t)nthreads + pairs - 1) / pairs;
        const int most = p->Dv >= 16 ? p->Dv / 16 : 1;
        ntiles = (int)(want < most ? want : most);
    }
    /* tiles are whole multiples of 16 rows: the SIMD kernels put one row per lane, 16 at a time */
    int tile_rows = (p->Dv + ntiles - 1) / ntiles;
    if (ntiles > 1)
        tile_rows = (tile_rows + 15) / 16 * 16;
    job jb = {ctx, p, ntiles, tile_rows};
    gdn_threadpool_run(ctx->pool, pairs * ntiles, run_job_item, &jb);
}
