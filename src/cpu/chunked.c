/*
 * chunked.c — the chunked (WY/UT) algorithm's driver on the CPU (kernel contract: chunked.h).
 *
 * Work items are those of the token loop (driver.c): (sequence, value head, tile of Dv state
 * rows). The value heads that share a key head are run together, in groups of up to G heads
 * (G = Hv/Hk, limited so that the group's states fit the scratch): the item of a group's first
 * head runs the group, the others return at once. Per chunk of up to GDN_CHUNK_C tokens:
 *   - the key kernel normalises the key head's q and k rows and forms K^T, K K^T and Q K^T, once
 *     for the group;
 *   - per value head: decay and beta from the gate convention (prep.h, the token loop's own
 *     functions), then the value kernel advances the head's S^T over the chunk's v rows (a tile
 *     of Dv columns) and writes its output rows.
 * Chunks run in order; the last chunk of a sequence is simply shorter (the kernels take any n),
 * so there is no padding and no masking of a tail. f32 rows with unit inner stride are read (k, q,
 * v) and written (out) in place by the kernels; other dtypes and strides go through f32 copies.
 * Prefetch (measured on the Zen 5 VM, T = 4096, Hk = 16, Hv = 32): rows that are converted are
 * prefetched one chunk ahead while the current chunk's rows are converted (bf16: 0.96-1.06 ->
 * 0.80-0.84 us per token and head on one thread), because the conversion loops otherwise wait
 * for every row (consecutive tokens' rows lie Hk or Hv rows apart, each on its own page). Rows
 * the kernels read in place gained nothing measurable from prefetch instructions (issued here,
 * or spread between the kernel's product tiles), and touching loads spread the same way lost
 * 30% (a load that misses stalls retirement), so those are not prefetched; neither are output
 * rows (no measurable gain).
 *
 * States: each head's tile is gathered once into S^T [Dk][ld] (zeros for a negative read slot or
 * no pool), kept in scratch through all chunks, and scattered once to the write slot in the pool's
 * layout (not at all for a negative write slot). An empty sequence copies its read state to its
 * write slot. Capture (the state after every token) is not done here: gdn_cpu_use_chunked() sends
 * calls with a capture to the token loop, whatever problem.algo says.
 *
 * Precision: with problem.precision BF16 the value part is the context's chunk_bf16 kernel (bf16
 * products, f32 state) where it exists (AVX-512 with avx512_bf16) and dv % 16 == 0, dk >=
 * GDN_CHUNK_BF16_MIN_DK, in chunks of GDN_CHUNK_C_BF16 tokens, with the key kernel chunk_keys_bf16
 * (its kq in bf16 pairs, C_KQB, go to every value head) and each head's S^T in bf16 pairs (C_STB,
 * written by the kernel's state update for the next chunk); otherwise the f32 kernels run.
 *
 * Measured choices (2-core Zen 5, docs/PERF.md): GDN_CHUNK_C tokens per chunk (GDN_CHUNK_C_BF16 with
 * bf16 products), and the sequence length from which AUTO prefers this path (GDN_CHUNK_AUTO_MIN_T).
 */
#include <stdint.h>
#include <string.h>

#include "core/context.h"
#include "cpu/chunked.h"
#include "cpu/prep.h"

#define MAXD GDN_MAX_HEAD_DIM
#define LDM GDN_CHUNK_LD_MAX
#define CM GDN_CHUNK_MAX

/* Floats for the states of a group: one 256 x 256 head (ld 272), or four 128 x 128 heads. */
#define GROUP_STATE_FLOATS (4 * 128 * 144)

/* Most value heads run together (more gain nothing: the key part is then already negligible). */
#define MAX_GROUP 8

/* scratch layout per thread, in floats (each region a multiple of 16 floats) */
#define C_ST 0                               /* S^T of each head of the group, [Dk][ld] each */
#define C_KQ (C_ST + GROUP_STATE_FLOATS)     /* k rows then q rows [2C][Dk] */
#define C_KT (C_KQ + 2 * CM * MAXD)          /* K^T [Dk][C] */
#define C_KK (C_KT + MAXD * CM)              /* K K^T [C][C] */
#define C_QK (C_KK + CM * CM)                /* Q K^T [C][C] */
#define C_V (C_QK + CM * CM)                 /* v converted to f32 [C][ld] (when not read in place) */
#define C_DL (C_V + CM * LDM)                /* Delta [C][ld] */
#define C_Y (C_DL + CM * LDM)                /* out in f32 [C][ld] (when not written in place) */
#define C_DECAY (C_Y + CM * LDM)             /* [C] */
#define C_BETA (C_DECAY + CM)                /* [C] */
#define C_STB (C_BETA + CM)                  /* bf16 value kernel: S^T of each head in bf16 pairs */
#define C_KQB (C_STB + GROUP_STATE_FLOATS / 2 + MAX_GROUP * LDM) /* bf16 key kernel: kq in bf16 pairs [2C][Dk/2] */
#define C_KW (C_KQB + CM * MAXD)             /* bf16 key kernel: work */
#define C_WORK (C_KW + (GDN_CHUNK_KEYS_BF16_WORK_WORDS + 15) / 16 * 16) /* value-kernel work */
#define C_FLOATS (C_WORK + GDN_CHUNK_WORK_FLOATS)

size_t gdn_cpu_chunked_scratch_floats(void)
{
    return C_FLOATS + 16; /* + 64-byte alignment */
}

int gdn_cpu_use_chunked(const gdn_plan *p, int64_t n)
{
    int64_t b, t0, t1;
    gdn_plan_seq(p, n, &b, &t0, &t1);
    return gdn_chunk_chosen(p->algo, p->cap_mode != GDN_CAPTURE_NONE, t1 - t0, p->Dk);
}

/* Element strides of a head's state along v (rows of S) and k, whatever the layout. */
static void state_strides(const gdn_plan *p, int64_t *sv, int64_t *sk)
{
    *sv = p->layout == GDN_STATE_VK ? p->pool.st[2] : p->pool.st[3];
    *sk = p->layout == GDN_STATE_VK ? p->pool.st[3] : p->pool.st[2];
}

/* st[k][j] = S[v0 + j][k] of a pool head, or zeros (head NULL). */
static void gather_st(const gdn_context *ctx, const gdn_plan *p, const float *head, int v0, int vn, int dk,
                      float *st, int64_t ld)
{
    if (!head) {
        for (int k = 0; k < dk; k++)
            memset(st + k * ld, 0, (size_t)vn * sizeof(float));
        return;
    }
    int64_t sv, sk;
    state_strides(p, &sv, &sk);
    head += v0 * sv;
    if (sk == 1) { /* rows of S: transpose */
        ctx->chunk_transpose(head, sv, vn, dk, st, ld);
    } else if (sv == 1) { /* rows of S^T: copy */
        for (int k = 0; k < dk; k++)
            memcpy(st + k * ld, head + k * sk, (size_t)vn * sizeof(float));
    } else {
        for (int j0 = 0; j0 < vn; j0 += 16)
            for (int k0 = 0; k0 < dk; k0 += 16)
                for (int j = j0; j < j0 + 16 && j < vn; j++)
                    for (int k = k0; k < k0 + 16 && k < dk; k++)
                        st[k * ld + j] = head[j * sv + k * sk];
    }
}

static void scatter_st(const gdn_context *ctx, const gdn_plan *p, float *head, int v0, int vn, int dk,
                       const float *st, int64_t ld)
{
    int64_t sv, sk;
    state_strides(p, &sv, &sk);
    head += v0 * sv;
    if (sk == 1) {
        ctx->chunk_transpose(st, ld, dk, vn, head, sv);
    } else if (sv == 1) {
        for (int k = 0; k < dk; k++)
            memcpy(head + k * sk, st + k * ld, (size_t)vn * sizeof(float));
    } else {
        for (int j0 = 0; j0 < vn; j0 += 16)
            for (int k0 = 0; k0 < dk; k0 += 16)
                for (int j = j0; j < j0 + 16 && j < vn; j++)
                    for (int k = k0; k < k0 + 16 && k < dk; k++)
                        head[j * sv + k * sk] = st[k * ld + j];
    }
}

/* Prefetch (into L2) the row of `bytes` contiguous bytes at element offset `off` of a view. */
#if defined(__GNUC__)
#define PREFETCH_ROW(view, es, off, bytes)                                   \
    do {                                                                     \
        const char *row_ = (view).data + (off) * (es);                       \
        for (int64_t o_ = 0; o_ < (bytes); o_ += 64)                         \
            __builtin_prefetch(row_ + o_, 0, 2);                             \
    } while (0)
#else
#define PREFETCH_ROW(view, es, off, bytes) ((void)0)
#endif

static int64_t q_off(const gdn_plan *p, int64_t b, int64_t t, int hk)
{
    return b * p->q.st[0] + t * p->q.st[1] + hk * p->q.st[2];
}
static int64_t k_off(const gdn_plan *p, int64_t b, int64_t t, int hk)
{
    return b * p->k.st[0] + t * p->k.st[1] + hk * p->k.st[2];
}
static int64_t v_off(const gdn_plan *p, int64_t b, int64_t t, int h, int v0)
{
    return b * p->v.st[0] + t * p->v.st[1] + h * p->v.st[2] + v0 * p->v.st[3];
}
static int64_t o_off(const gdn_plan *p, int64_t b, int64_t t, int h, int v0)
{
    return b * p->out.st[0] + t * p->out.st[1] + h * p->out.st[2] + v0 * p->out.st[3];
}

void gdn_cpu_chunked_item(const gdn_context *ctx, const gdn_plan *p, float *scratch, int64_t n, int h, int v0,
                          int vn)
{
    const int dk = p->Dk, hk = gdn_plan_key_head(p, h), ratio = p->ratio;
    const int simd = p->Dv % 16 == 0 && vn % 16 == 0;
    /* row stride of the dv-wide buffers: with SIMD a multiple of 16 that is not one of 64 (the
     * rows of S^T then do not all fall into the same L1 sets) */
    const int64_t ld = simd && vn % 64 == 0 ? vn + 16 : vn;
    int G = (int)(GROUP_STATE_FLOATS / ((int64_t)dk * ld));
    if (G > ratio)
        G = ratio;
    if (G > MAX_GROUP)
        G = MAX_GROUP;
    /* index of h among the value heads of its key head, and the group's heads */
    const int ih = p->head_map == GDN_HEADS_GROUPED ? h % ratio : h / p->Hk;
    if (ih % G != 0)
        return; /* run by the item of the group's first head */
    const int ng = ratio - ih < G ? ratio - ih : G;
#define HEAD(m) (p->head_map == GDN_HEADS_GROUPED ? hk * ratio + ih + (m) : hk + (ih + (m)) * p->Hk)

    int64_t b, t0, t1;
    gdn_plan_seq(p, n, &b, &t0, &t1);
    const int64_t rs = gdn_plan_read_slot(p, n), ws = gdn_plan_write_slot(p, n);
    if (t1 == t0 && (ws < 0 || ws == rs))
        return; /* nothing to compute and nothing to copy */

    float *scr = (float *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    /* bf16 products where asked and the CPU has them (else the f32 kernels), each with its chunk */
    const int bf16 = p->precision == GDN_PRECISION_BF16 && ctx->chunk_bf16 && simd && dk >= GDN_CHUNK_BF16_MIN_DK;
    const int bf16_keys = bf16 && ctx->chunk_keys_bf16;
    const gdn_chunk_keys_fn keys = bf16_keys ? ctx->chunk_keys_bf16 : ctx->chunk_keys;
    uint32_t *kqb = bf16_keys ? (uint32_t *)(void *)(scr + C_KQB) : NULL;
    const gdn_chunk_fn value = bf16 ? ctx->chunk_bf16 : simd ? ctx->chunk : gdn_chunk_f32__scalar;
    const int C = bf16 ? GDN_CHUNK_C_BF16 : GDN_CHUNK_C;
    float *kq = scr + C_KQ, *kt = scr + C_KT, *kk = scr + C_KK, *qk = scr + C_QK;
    float *vb = scr + C_V, *dl = scr + C_DL, *yb = scr + C_Y, *decay = scr + C_DECAY, *beta = scr + C_BETA;
    const int out = p->has_out;
    /* f32 rows with unit inner stride are read (and out written) in place; others are converted */
    const int f32 = p->dtype == GDN_DTYPE_F32;
    const int qk_direct = f32 && p->k.st[3] == 1 && p->q.st[3] == 1;
    const int v_direct = f32 && p->v.st[3] == 1;
    const int o_direct = out && p->out_dtype == GDN_DTYPE_F32 && p->out.st[3] == 1;

    for (int m = 0; m < ng; m++)
        gather_st(ctx, p, rs >= 0 ? gdn_cpu_pool_head(p, rs, HEAD(m)) : NULL, v0, vn, dk, scr + C_ST + m * dk * ld, ld);

    /* rows that are converted (not read in place) are prefetched a chunk ahead */
    const int64_t es = (int64_t)gdn_dtype_size(p->dtype);
    const int64_t qk_pf = !qk_direct && p->q.st[3] == 1 && p->k.st[3] == 1 ? (int64_t)dk * es : 0;
    const int64_t v_pf = !v_direct && p->v.st[3] == 1 ? (int64_t)vn * es : 0;

    for (int64_t tb = t0; tb < t1; tb += C) {
        const int nt = (int)(t1 - tb < C ? t1 - tb : C);
        const int64_t tn = tb + nt; /* the next chunk's first token */
        const int nn = (int)(t1 - tn < C ? t1 - tn : C);
        /* key part */
        gdn_chunk_keys_args ka = {nt, dk, p->l2norm, p->scale, kq, dk, out ? kq + (int64_t)nt * dk : NULL, dk,
                                  kq, kt, kk, qk, kqb, (uint32_t *)(void *)(scr + C_KW)};
        if (qk_direct) {
            ka.k = (const float *)(const void *)p->k.data + k_off(p, b, tb, hk);
            ka.ks = p->k.st[1];
            if (out) {
                ka.q = (const float *)(const void *)p->q.data + q_off(p, b, tb, hk);
                ka.qs = p->q.st[1];
            }
        }
        for (int j = 0; j < nt; j++) {
            const int64_t t = tb + j;
            if (!qk_direct) {
                gdn_cpu_load_row(ctx, &p->k, p->dtype, k_off(p, b, t, hk), p->k.st[3], dk, kq + (int64_t)j * dk);
                if (out)
                    gdn_cpu_load_row(ctx, &p->q, p->dtype, q_off(p, b, t, hk), p->q.st[3], dk,
                                     kq + (int64_t)(nt + j) * dk);
                if (j < nn) {
                    PREFETCH_ROW(p->k, es, k_off(p, b, tn + j, hk), qk_pf);
                    if (out)
                        PREFETCH_ROW(p->q, es, q_off(p, b, tn + j, hk), qk_pf);
                }
            }
        }
        keys(&ka);
        /* value part, head by head */
        for (int m = 0; m < ng; m++) {
            const int hv = HEAD(m);
            gdn_chunk_args a = {nt, dk, vn, ld, kq, kt, kk, out ? qk : NULL, decay, beta, vb, ld, dl,
                                scr + C_ST + m * dk * ld, out ? yb : NULL, ld, scr + C_WORK, kqb,
                                bf16 ? (uint32_t *)(void *)(scr + C_STB) + m * ((dk + 1) / 2) * ld : NULL,
                                tb > t0};
            if (v_direct) {
                a.v = (const float *)(const void *)p->v.data + v_off(p, b, tb, hv, v0);
                a.ldv = p->v.st[1];
            }
            if (o_direct) {
                a.y = (float *)(void *)p->out.data + o_off(p, b, tb, hv, v0);
                a.ldy = p->out.st[1];
            }
            for (int j = 0; j < nt; j++) {
                const int64_t t = tb + j;
                gdn_cpu_token_gate(p, b, t, hv, &decay[j], &beta[j]);
                if (!v_direct) {
                    gdn_cpu_load_row(ctx, &p->v, p->dtype, v_off(p, b, t, hv, v0), p->v.st[3], vn, vb + j * ld);
                    if (j < nn)
                        PREFETCH_ROW(p->v, es, v_off(p, b, tn + j, hv, v0), v_pf);
                }
            }
            value(&a);
            if (out && !o_direct)
                for (int j = 0; j < nt; j++)
                    gdn_cpu_store_row(ctx, &p->out, p->out_dtype, o_off(p, b, tb + j, hv, v0), p->out.st[3], vn,
                                      yb + j * ld);
        }
    }

    if (ws >= 0)
        for (int m = 0; m < ng; m++)
            scatter_st(ctx, p, gdn_cpu_pool_head(p, ws, HEAD(m)), v0, vn, dk, scr + C_ST + m * dk * ld, ld);
#undef HEAD
}
