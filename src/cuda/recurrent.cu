/*
 * recurrent.cu — the CUDA token loop ("recurrent_f32__cuda_k<32|64|128|256>"): decode (T = 1),
 * verify and prefill (T > 1), with optional capture of the state after every token.
 *
 * Math (gdn.h, docs/KERNELS.md §1), per sequence n, value head h (key head hk by the head map),
 * token t, state row r (one row of S = a Dv index; the row runs over Dk), with the raw q, k:
 *     qsc = scale / sqrt(|q|^2 + 1e-6), ksc = 1 / sqrt(|k|^2 + 1e-6)   (l2norm; else scale, 1)
 *     decay, beta from the gate convention (log | linear | neglog | raw)
 *     sk = ksc S[r].k    sq = qsc S[r].q    kq = qsc ksc k.q    (from the OLD row: one pass)
 *     delta = beta (v[r] - decay sk)
 *     y[r]  = decay sq + delta kq                         (= scale (S_new q_normalised))
 *     S[r]  = decay S[r] + (delta ksc) k
 * Arithmetic is f32 throughout; the state is f32; y is rounded to out_dtype at the store.
 *
 * Work decomposition: one WARP per item (sequence n, value head h, tile of RW = 4*RPT rows of Dv);
 * blocks of 4 independent warps, no shared memory and no block barrier. Items are enumerated in
 * 64-bit over a persistent grid (blocks = what is resident at once; no 65535 limit, any N), the
 * item's decomposition by multiply-shift division. Inside a warp, LPR = 8 consecutive lanes share a
 * row: lane l holds the float4s i*LPR + l (i < KV) of the row, so a row's 8 lanes read 128
 * contiguous bytes per instruction; the 4 lane groups take rows grp, grp + 4, ... (RPT per lane).
 * The state tile lives in registers for the whole call: read once before the first token, written
 * once after the last (plus one store per token when capturing); meanwhile each warp prefetches the
 * state tile of its next item into L2 (cp.async.bulk.prefetch), so HBM keeps streaming.
 * Per token, each lane loads its slices of q and k (the same KV float4 positions), its rows' v
 * values, g and beta directly into registers, one token ahead of the arithmetic; the lane's partial
 * |q|^2, |k|^2, k.q and, per row, S[r].k and S[r].q are reduced together over the row's 8 lanes
 * (three xor-shuffle rounds); the update is two FMAs per state element.
 *
 * Template parameters: KV = float4s per lane per row (Dk <= 32*KV; KV in 1, 2, 4, 8), RPT = rows
 * per lane (1 or 2; KV*RPT <= 8), VEC = 16-byte state and capture accesses (vk layout, unit stride
 * along Dk, row/head/slot strides multiples of 4 floats, 16-byte aligned bases, Dk % 4 == 0;
 * otherwise element accesses through any strides, either layout), F32IN = q, k, v are f32 (else
 * 16-bit), STAGED = tokens staged per warp in shared memory (T > 1; dense T = 1 loads straight to
 * registers). q/k slices are read as one 8- or 16-byte vector when their rows are contiguous and
 * aligned (P.qk_vec), else element by element through any strides.
 *
 * chunk_kernel (T > 1 or varlen, chosen without capture when there are >= 8 warps' worth of items
 * per SM; GDN_CUDA_CHUNK=0/1 forces it off/on for tests and measurements): one BLOCK per item of
 * 4 * RW rows of one head; the block stages a chunk of tokens once, computes the head's scalars once
 * (norms, k_i.k_j, k_i.q_t, gates and the coefficient tables of the chunked recurrence), and each row
 * takes its dots with the chunk's starting state at once, so the per-token chain is scalar (see the
 * comment above chunk_kernel). The state is read once and written once per call.
 *
 * Every kernel without index arrays prefetches its first state tile into L2 before it waits for
 * earlier work (griddepcontrol.wait), so with programmatic dependent launches the HBM fetch of one
 * call overlaps the tail of the previous one (L2 is the point of coherence: correct even when the
 * previous kernel writes that tile).
 *
 * fast.cuh: the lean path for dense batches with default slots, no capture, contiguous tensors and
 * Dk = Dv in {32, 64, 128, 256}, T <= 8 (a CTA per tile of 4-32 rows, the dims compile-time, 32-bit
 * index math, no loops over items); the launcher takes it for every call that qualifies
 * (GDN_CUDA_FAST=0 turns it off, for tests and measurements).
 *
 * Index arrays (cu_seqlens, slots) are device memory. When the call has any, check.cu's kernel runs
 * first; this kernel is its programmatic dependent (Hopper): it reads its read slot and state (every
 * index is range-guarded, so a bad entry never leads to an access outside a view), then waits for
 * the check (griddepcontrol.wait) and writes nothing at all if the check found an error. Without
 * index arrays it waits for earlier work before its first load. Assumptions (validated by the host):
 * views in range, 1 <= Dk, Dv <= 256, Hv % Hk == 0.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <type_traits>

#include "cuda/cuda_backend.h"
#include "cuda/params.cuh"

#define NTHREADS 128
#define NWARPS (NTHREADS / 32)
#define LPR 8         /* lanes per state row */
#define RG (32 / LPR) /* row groups per warp */

/* Round to the output type, nearest even (bf16 exactly as core/dtype.h). */
__device__ __forceinline__ void st_elem(void *base, int dtype, int64_t i, float x)
{
    if (dtype == GDN_DTYPE_F32) {
        ((float *)base)[i] = x;
    } else if (dtype == GDN_DTYPE_BF16) {
        unsigned u = __float_as_uint(x);
        unsigned short r;
        if ((u & 0x7fffffffu) > 0x7f800000u)
            r = (unsigned short)((u >> 16) | 0x0040u);
        else
            r = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        ((unsigned short *)base)[i] = r;
    } else {
        ((unsigned short *)base)[i] = __half_as_ushort(__float2half_rn(x));
    }
}

__device__ __forceinline__ int64_t ld_cu(const gdn_cuda_params &P, int64_t i)
{
    return P.cu_i64 ? ((const int64_t *)P.cu)[i] : (int64_t)((const int32_t *)P.cu)[i];
}

/* Sequence n's batch row and tokens [t0, t1) (a bad cu_seqlens entry: no tokens; the check reports it). */
__device__ __forceinline__ void seq_tokens(const gdn_cuda_params &P, int64_t n, int64_t *b, int64_t *t0, int64_t *t1)
{
    if (P.cu) {
        *b = 0;
        *t0 = ld_cu(P, n);
        *t1 = ld_cu(P, n + 1);
        if (!(*t0 >= 0 && *t0 <= *t1 && *t1 <= P.T))
            *t0 = *t1 = 0;
    } else {
        *b = n;
        *t0 = 0;
        *t1 = P.T;
    }
    if (P.num_tokens) { /* the first count tokens (a bad count: none; the check reports it) */
        const int64_t c = P.num_tokens[n];
        *t1 = c >= 0 && c <= *t1 - *t0 ? *t0 + c : *t0;
    }
}

/* Sequence n's read slot, or -1 (no pool, or out of range: not read; the check reports it). */
__device__ __forceinline__ int64_t seq_read_slot(const gdn_cuda_params &P, int64_t n)
{
    if (!P.pool)
        return -1;
    const int64_t rs = P.read_slots ? (int64_t)P.read_slots[n] : n;
    return rs >= P.num_slots ? -1 : rs;
}

/* Sequence n's write slot (the read slot by default), or -1 without a pool. */
__device__ __forceinline__ int64_t seq_write_slot(const gdn_cuda_params &P, int64_t n)
{
    if (!P.pool)
        return -1;
    return P.write_slots ? (int64_t)P.write_slots[n] : (P.read_slots ? (int64_t)P.read_slots[n] : n);
}

__device__ __forceinline__ float softplus_f(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

/* One token's decay from its gate value g, by the gate convention; for the raw (fused) gate also
   beta = sigmoid(b) in place: decay = exp(-exp(A_log[h]) softplus(a + dt_bias[h])). */
__device__ __forceinline__ float gate_decay_of(int gate, const float *A_log, const float *dt_bias, int h, float g,
                                               float *be)
{
    switch (gate) {
    case GDN_GATE_LOG: return expf(g);
    case GDN_GATE_LINEAR: return g;
    case GDN_GATE_NEGLOG: return expf(-g);
    default:
        *be = 1.0f / (1.0f + expf(-*be));
        return expf(-expf(A_log[h]) * softplus_f(g + dt_bias[h]));
    }
}
__device__ __forceinline__ float gate_decay(const gdn_cuda_params &P, int h, float g, float *be)
{
    return gate_decay_of(P.gate, P.A_log, P.dt_bias, h, g, be);
}

/* Keep x computed here, in a register: a volatile asm that "changes" it, ordered with the other volatile asms
   (griddepcontrol.wait). The fast path's kernels read their parameters and make their input pointers before
   they wait for earlier work, so that neither the constant-bank reads nor the address arithmetic sit on the
   call's dependent chain after the wait (H200, bench_cuda: decode B=1 2.54 -> 2.22 us, verify T=4 B=1 4.47 ->
   4.14; docs/PERF.md, session 19). */
__device__ __forceinline__ void pin(int &x)
{
    asm volatile("" : "+r"(x));
}
__device__ __forceinline__ void pin(float &x)
{
    asm volatile("" : "+f"(x));
}
template <class T>
__device__ __forceinline__ void pin(T *&x)
{
    asm volatile("" : "+l"(x));
}
/* The scalars of a call that the token arithmetic reads, read (and pinned) at once: the gate convention and its
   parameter pointers, the gate and output dtypes, the norms' switch and the attention scale. */
struct call_consts {
    int gate, gdt, odt, l2n;
    float scale;
    const float *A_log, *dt_bias;
};
__device__ __forceinline__ call_consts call_consts_of(const gdn_cuda_params &P)
{
    call_consts c = {P.gate, P.gate_dtype, P.out_dtype, P.l2norm, P.scale, P.A_log, P.dt_bias};
    pin(c.gate), pin(c.gdt), pin(c.odt), pin(c.l2n), pin(c.scale), pin(c.A_log), pin(c.dt_bias);
    return c;
}
__device__ __forceinline__ float gate_decay_c(const call_consts &c, int h, float g, float *be)
{
    return gate_decay_of(c.gate, c.A_log, c.dt_bias, h, g, be);
}

__device__ __forceinline__ void grid_dependency_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ float dot4(float4 a, float4 b, float acc)
{
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    return fmaf(a.w, b.w, acc);
}

/* Load / store 4 consecutive k-elements (c .. c+3) of state row r through element strides. */
template <bool VEC>
__device__ __forceinline__ float4 ld_row4(const float *head, int64_t rs, int64_t cs, int r, int c, int dk)
{
    if (VEC)
        return *(const float4 *)(head + (int64_t)r * rs + c);
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
    const float *p = head + (int64_t)r * rs + (int64_t)c * cs;
    x.x = p[0];
    if (c + 1 < dk)
        x.y = p[cs];
    if (c + 2 < dk)
        x.z = p[2 * cs];
    if (c + 3 < dk)
        x.w = p[3 * cs];
    return x;
}

template <bool VEC>
__device__ __forceinline__ void st_row4(float *head, int64_t rs, int64_t cs, int r, int c, int dk, float4 x)
{
    if (VEC) {
        *(float4 *)(head + (int64_t)r * rs + c) = x;
        return;
    }
    float *p = head + (int64_t)r * rs + (int64_t)c * cs;
    p[0] = x.x;
    if (c + 1 < dk)
        p[cs] = x.y;
    if (c + 2 < dk)
        p[2 * cs] = x.z;
    if (c + 3 < dk)
        p[3 * cs] = x.w;
}

/* A state row's update: s = dec s + dk k, element by element (one multiply and one FMA each). */
template <int KV>
__device__ __forceinline__ void row_update(float4 (&s)[KV], const float4 (&kf)[KV], float dk, float dec)
{
#pragma unroll
    for (int i = 0; i < KV; i++) {
        s[i].x = fmaf(dk, kf[i].x, dec * s[i].x);
        s[i].y = fmaf(dk, kf[i].y, dec * s[i].y);
        s[i].z = fmaf(dk, kf[i].z, dec * s[i].z);
        s[i].w = fmaf(dk, kf[i].w, dec * s[i].w);
    }
}

/* sum_i a[i] . b[i] with independent partial sums (short dependency chains) */
template <int KV>
__device__ __forceinline__ float dot_row(const float4 (&a)[KV], const float4 (&b)[KV])
{
    float p[KV];
#pragma unroll
    for (int i = 0; i < KV; i++)
        p[i] = dot4(a[i], b[i], 0.f);
#pragma unroll
    for (int w = 1; w < KV; w *= 2)
#pragma unroll
        for (int i = 0; i + w < KV; i += 2 * w)
            p[i] += p[i + w];
    return p[0];
}

/* Bring `bytes` (a multiple of 16, 16-byte aligned) at p into L2, asynchronously; keep: with an evict-last cache
   policy (the fast path where the call's state outgrows L2: params.cuh, l2_keep). */
__device__ __forceinline__ void prefetch_l2(const void *p, unsigned bytes, bool keep = false)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (keep) {
        uint64_t pol;
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
        asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(p), "r"(bytes), "l"(pol)
                     : "memory");
    } else {
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
    }
#else
    (void)p;
    (void)bytes;
    (void)keep;
#endif
}

__device__ __forceinline__ void grid_dependency_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}


/* multiply-shift division (the divisor's magic from gdn_cuda_fastdiv_init), for n < 2^31 */
__device__ __forceinline__ unsigned fdiv(unsigned n, gdn_fastdiv d)
{
    return d.d == 1 ? n : __umulhi(n, d.m) >> d.s;
}

/* Item -> (sequence, value head, tile). */
__device__ __forceinline__ void decode_item(const gdn_cuda_params &P, int64_t item, int64_t *n, int *h, int *tile)
{
    if (P.items <= 0x7fffffff) {
        const unsigned it = (unsigned)item, nh = fdiv(it, P.fd_tiles), nn = fdiv(nh, P.fd_hv);
        *tile = (int)(it - nh * (unsigned)P.tiles);
        *h = (int)(nh - nn * (unsigned)P.Hv);
        *n = nn;
    } else {
        const int64_t nh = item / P.tiles;
        *tile = (int)(item - nh * P.tiles);
        *n = nh / P.Hv;
        *h = (int)(nh - *n * P.Hv);
    }
}

/* A raw 16-bit value as f32. */
__device__ __forceinline__ float cvt16(unsigned raw, int dtype)
{
    return dtype == GDN_DTYPE_BF16 ? __uint_as_float(raw << 16) : __half2float(__ushort_as_half((unsigned short)raw));
}

template <bool F32IN>
using raw4_t = typename std::conditional<F32IN, float4, uint2>::type;

/* One token's inputs for one lane, raw (converted only when the token is computed). */
template <int KV, int RPT, bool F32IN>
struct tok_in {
    raw4_t<F32IN> q[KV], k[KV];
    unsigned v[RPT];
    unsigned g, be;
    long long slot;
};

/* 4 consecutive k-elements (c .. c+3) of a q or k row: one vector load when the rows allow it. */
template <bool F32IN>
__device__ __forceinline__ raw4_t<F32IN> ld_in4(const void *base, int64_t off, int64_t cs, int c, int dk, bool vec)
{
    if constexpr (F32IN) {
        const float *p = (const float *)base + off;
        if (vec)
            return *(const float4 *)(p + c);
        float4 f = make_float4(0.f, 0.f, 0.f, 0.f);
        p += (int64_t)c * cs;
        f.x = p[0];
        if (c + 1 < dk)
            f.y = p[cs];
        if (c + 2 < dk)
            f.z = p[2 * cs];
        if (c + 3 < dk)
            f.w = p[3 * cs];
        return f;
    } else {
        const unsigned short *p = (const unsigned short *)base + off;
        if (vec)
            return *(const uint2 *)(p + c);
        unsigned e0 = 0, e1 = 0, e2 = 0, e3 = 0;
        p += (int64_t)c * cs;
        e0 = p[0];
        if (c + 1 < dk)
            e1 = p[cs];
        if (c + 2 < dk)
            e2 = p[2 * cs];
        if (c + 3 < dk)
            e3 = p[3 * cs];
        return make_uint2(e0 | (e1 << 16), e2 | (e3 << 16));
    }
}

template <bool F32IN>
__device__ __forceinline__ float4 cvt_in4(raw4_t<F32IN> x, int dtype)
{
    if constexpr (F32IN) {
        return x;
    } else {
        return make_float4(cvt16(x.x & 0xffffu, dtype), cvt16(x.x >> 16, dtype), cvt16(x.y & 0xffffu, dtype),
                           cvt16(x.y >> 16, dtype));
    }
}

template <bool F32IN>
__device__ __forceinline__ raw4_t<F32IN> zero4()
{
    if constexpr (F32IN)
        return make_float4(0.f, 0.f, 0.f, 0.f);
    else
        return make_uint2(0u, 0u);
}

template <int KV, int RPT, bool F32IN>
__device__ __forceinline__ void load_token(const gdn_cuda_params &P, int64_t b, int64_t t, int64_t n, int64_t t0,
                                           int h, int hk, int r0, int grp, int lr, tok_in<KV, RPT, F32IN> &in)
{
    const int64_t qo = b * P.qs[0] + t * P.qs[1] + hk * P.qs[2], ko = b * P.ks[0] + t * P.ks[1] + hk * P.ks[2];
    const bool vec = P.qk_vec;
#pragma unroll
    for (int i = 0; i < KV; i++) {
        const int c = 4 * (i * LPR + lr);
        in.q[i] = c < P.Dk ? ld_in4<F32IN>(P.q, qo, P.qs[3], c, P.Dk, vec) : zero4<F32IN>();
        in.k[i] = c < P.Dk ? ld_in4<F32IN>(P.k, ko, P.ks[3], c, P.Dk, vec) : zero4<F32IN>();
    }
    const int64_t vo = b * P.vs[0] + t * P.vs[1] + h * P.vs[2];
#pragma unroll
    for (int jj = 0; jj < RPT; jj++) {
        const int r = r0 + grp + RG * jj;
        in.v[jj] = 0;
        if (r < P.Dv)
            in.v[jj] = F32IN ? ((const unsigned *)P.v)[vo + r * P.vs[3]]
                             : (unsigned)((const unsigned short *)P.v)[vo + r * P.vs[3]];
    }
    const int64_t go = b * P.gs[0] + t * P.gs[1] + h * P.gs[2], bo = b * P.bs[0] + t * P.bs[1] + h * P.bs[2];
    if (P.gate_dtype == GDN_DTYPE_F32) {
        in.g = ((const unsigned *)P.g)[go];
        in.be = ((const unsigned *)P.beta)[bo];
    } else {
        in.g = ((const unsigned short *)P.g)[go];
        in.be = ((const unsigned short *)P.beta)[bo];
    }
    in.slot = -1;
    if (P.cap_mode == GDN_CAPTURE_SLOTS)
        in.slot = P.cap_slots[P.cap_slots_stride > 0 ? n * P.cap_slots_stride + (t - t0) : b * P.T + t];
}

#define MAX_CHUNK 8 /* tokens a warp stages at once (T > 1) */
#define STAGE_U 4   /* 4-element q/k loads per lane in flight per staging round */

/* A warp's shared-memory region for CH staged tokens (floats; 16-byte multiple). */
__host__ __device__ constexpr int warp_region_floats(int ch, int dkp, int rw)
{
    return ((2 * ((ch + 1) & ~1)) + ch * (2 * dkp + rw + 2) + 3) & ~3;
}

/* Token tc + i's decay and beta from stage_gates_raw's bits, and the offset of its captured state (dense
   capture, or its capture slot's; -1: none), into dec[i], be[i], co[i], for i < nt. */
__device__ __forceinline__ void stage_gates_store(const gdn_cuda_params &P, int i, int nt, int64_t b, int64_t tc, int h,
                                                  bool dense_cap, unsigned graw, unsigned braw, long long slot,
                                                  float *dec, float *be, long long *co)
{
    if (i < nt) {
        const int64_t t = tc + i;
        const bool g32 = P.gate_dtype == GDN_DTYPE_F32;
        const float g = g32 ? __uint_as_float(graw) : cvt16(graw, P.gate_dtype);
        float bb = g32 ? __uint_as_float(braw) : cvt16(braw, P.gate_dtype);
        const float d = gate_decay(P, h, g, &bb);
        dec[i] = d;
        be[i] = bb;
        long long o = -1;
        if (dense_cap)
            o = b * P.cs[0] + t * P.cs[1] + h * P.cs[2];
        else if (P.cap_mode == GDN_CAPTURE_SLOTS && slot >= 0)
            o = slot * P.cs[0] + h * P.cs[1];
        co[i] = o;
    }
}

/* Token tc + i's raw g and beta bits (f32 or 16-bit) and, with slot capture, its capture slot, for i < nt
   (else 0, 0, -1): the staging loads of stage_warp (i = lane) and stage_block (i = thread). */
__device__ __forceinline__ void stage_gates_raw(const gdn_cuda_params &P, int i, int nt, int64_t b, int64_t tc,
                                                int64_t n, int64_t t0, int h, unsigned *graw, unsigned *braw,
                                                long long *slot)
{
    *graw = *braw = 0;
    *slot = -1;
    if (i < nt) {
        const int64_t t = tc + i;
        const int64_t go = b * P.gs[0] + t * P.gs[1] + h * P.gs[2], bo = b * P.bs[0] + t * P.bs[1] + h * P.bs[2];
        if (P.gate_dtype == GDN_DTYPE_F32) {
            *graw = ((const unsigned *)P.g)[go];
            *braw = ((const unsigned *)P.beta)[bo];
        } else {
            *graw = ((const unsigned short *)P.g)[go];
            *braw = ((const unsigned short *)P.beta)[bo];
        }
        if (P.cap_mode == GDN_CAPTURE_SLOTS)
            *slot = P.cap_slots[P.cap_slots_stride > 0 ? n * P.cap_slots_stride + (t - t0) : b * P.T + t];
    }
}

/* Stage nt tokens (tc ..) of this warp's item: q and k rows (converted to f32, zeros past Dk), the
 * item's v values, decay, beta and the capture offset; every load of a round is issued before any
 * is converted. Each row of q/k is written by the lanes that load it; __syncwarp() before use. */
template <int KV, int RPT, bool F32IN>
__device__ __forceinline__ void stage_warp(const gdn_cuda_params &P, int lane, int nt, int64_t b, int64_t tc,
                                           int64_t n, int64_t t0, int h, int hk, int r0, bool dense_cap,
                                           long long *csm, float *qsm, float *ksm, float *vsm, float *dsm,
                                           float *bsm)
{
    constexpr int DKP = KV * LPR * 4, NCH = DKP / 4, RW = RG * RPT;
    const int Dk = P.Dk;
    /* gates and capture slots (lanes < nt), v values (<= 2 per lane): loads first */
    constexpr int VU = (MAX_CHUNK * RW + 31) / 32; /* v values per lane, at most */
    unsigned graw, braw, vraw[VU];
    long long slot;
    stage_gates_raw(P, lane, nt, b, tc, n, t0, h, &graw, &braw, &slot);
#pragma unroll
    for (int u = 0; u < VU; u++) {
        const int idx = lane + 32 * u, j = idx / RW, r = r0 + (idx - j * RW);
        vraw[u] = 0;
        if (idx < nt * RW && r < P.Dv) {
            const int64_t o = b * P.vs[0] + (tc + j) * P.vs[1] + h * P.vs[2] + r * P.vs[3];
            vraw[u] = F32IN ? ((const unsigned *)P.v)[o] : (unsigned)((const unsigned short *)P.v)[o];
        }
    }
    const int64_t qb = b * P.qs[0] + tc * P.qs[1] + hk * P.qs[2], kb = b * P.ks[0] + tc * P.ks[1] + hk * P.ks[2];
    const int total = nt * 2 * NCH;
    for (int base = 0; base < total; base += 32 * STAGE_U) {
        raw4_t<F32IN> a[STAGE_U];
#pragma unroll
        for (int u = 0; u < STAGE_U; u++) {
            const int idx = base + 32 * u + lane, j = idx / (2 * NCH), rem = idx - j * 2 * NCH;
            const int isk = rem >= NCH, c = 4 * (rem - isk * NCH);
            a[u] = zero4<F32IN>();
            if (idx < total && c < Dk)
                a[u] = isk ? ld_in4<F32IN>(P.k, kb + j * P.ks[1], P.ks[3], c, Dk, P.qk_vec)
                           : ld_in4<F32IN>(P.q, qb + j * P.qs[1], P.qs[3], c, Dk, P.qk_vec);
        }
#pragma unroll
        for (int u = 0; u < STAGE_U; u++) {
            const int idx = base + 32 * u + lane, j = idx / (2 * NCH), rem = idx - j * 2 * NCH;
            const int isk = rem >= NCH, c = 4 * (rem - isk * NCH);
            if (idx < total)
                *(float4 *)((isk ? ksm : qsm) + j * DKP + c) = cvt_in4<F32IN>(a[u], P.dtype);
        }
    }
#pragma unroll
    for (int u = 0; u < VU; u++) {
        const int idx = lane + 32 * u;
        if (idx < nt * RW)
            vsm[idx] = F32IN ? __uint_as_float(vraw[u]) : cvt16(vraw[u], P.dtype);
    }
    stage_gates_store(P, lane, nt, b, tc, h, dense_cap, graw, braw, slot, dsm, bsm, csm);
}

/* One token for one lane: the merged 8-lane reduction of |q|^2, |k|^2, k.q, S[r].k, S[r].q, the
 * update of the lane's RPT row slices, the output and the capture. */
template <int KV, int RPT, bool VEC>
__device__ __forceinline__ void token_step(const gdn_cuda_params &P, float4 (&s)[RPT][KV], const float4 (&kf)[KV],
                                           const float4 (&qf)[KV], const float (&v)[RPT], float dec, float be,
                                           long long co, int64_t b, int64_t t, int h, int r0, int grp, int lr,
                                           int64_t crs, int64_t ccs)
{
    float qq = dot_row<KV>(qf, qf), kk = dot_row<KV>(kf, kf), kq = dot_row<KV>(kf, qf);
    float sk[RPT], sq[RPT];
#pragma unroll
    for (int jj = 0; jj < RPT; jj++) {
        sk[jj] = dot_row<KV>(s[jj], kf);
        sq[jj] = dot_row<KV>(s[jj], qf);
    }
#pragma unroll
    for (int o = LPR / 2; o > 0; o >>= 1) {
        qq += __shfl_xor_sync(0xffffffffu, qq, o);
        kk += __shfl_xor_sync(0xffffffffu, kk, o);
        kq += __shfl_xor_sync(0xffffffffu, kq, o);
#pragma unroll
        for (int jj = 0; jj < RPT; jj++) {
            sk[jj] += __shfl_xor_sync(0xffffffffu, sk[jj], o);
            sq[jj] += __shfl_xor_sync(0xffffffffu, sq[jj], o);
        }
    }
    const float qsc = P.scale * (P.l2norm ? rsqrtf(qq + 1e-6f) : 1.0f);
    const float ksc = P.l2norm ? rsqrtf(kk + 1e-6f) : 1.0f;
    const float kqs = kq * (qsc * ksc);
#pragma unroll
    for (int jj = 0; jj < RPT; jj++) {
        const int r = r0 + grp + RG * jj;
        const float delta = be * (v[jj] - dec * (ksc * sk[jj]));
        const float y = fmaf(dec, qsc * sq[jj], delta * kqs);
        const float dk = delta * ksc;
        row_update<KV>(s[jj], kf, dk, dec);
        if (r < P.Dv) {
            if (P.out && lr == 0)
                st_elem(P.out, P.out_dtype, b * P.os[0] + t * P.os[1] + h * P.os[2] + r * P.os[3], y);
            if (co >= 0) {
                float *dst = P.cap + co;
#pragma unroll
                for (int i = 0; i < KV; i++) {
                    const int c = 4 * (i * LPR + lr);
                    if (c < P.Dk)
                        st_row4<VEC>(dst, crs, ccs, r, c, P.Dk, s[jj][i]);
                }
            }
        }
    }
}

/* Blocks per SM the register budget is set for: 4 (<= 128 registers) where that does not spill. */
template <int KV, bool F32IN>
constexpr int min_blocks()
{
    return KV == 8 ? (F32IN ? 2 : 3) : (KV == 4 && F32IN) ? 3 : 4;
}

/* This warp's (or block's) state rows r0 .. r0 + nrows - 1 of a head into L2, one row per lane
   (VEC views: a row is Dk contiguous floats, 16-byte aligned). */
__device__ __forceinline__ void prefetch_rows(const gdn_cuda_params &P, int64_t slot, int h, int r, int64_t prs)
{
    if (r < P.Dv && slot >= 0 && slot < P.num_slots)
        prefetch_l2(P.pool + slot * P.ps[0] + (int64_t)h * P.ps[1] + (int64_t)r * prs, (unsigned)P.Dk * 4u);
}

template <int KV, int RPT, bool VEC, bool F32IN, bool STAGED>
__global__ void __launch_bounds__(NTHREADS, min_blocks<KV, F32IN>())
    recurrent_kernel(const __grid_constant__ gdn_cuda_params P)
{
    constexpr int RW = RG * RPT; /* rows per item */
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, lr = lane % LPR, grp = lane / LPR;
    const int Dk = P.Dk, Dv = P.Dv;
    /* element strides of a state row (v index) and column (k index) in the pool and the capture */
    const int64_t prs = P.kv_layout ? P.ps[3] : P.ps[2], pcs = P.kv_layout ? P.ps[2] : P.ps[3];
    const bool dense_cap = P.cap_mode == GDN_CAPTURE_DENSE;
    const int64_t crs = dense_cap ? (P.kv_layout ? P.cs[4] : P.cs[3]) : (P.kv_layout ? P.cs[3] : P.cs[2]);
    const int64_t ccs = dense_cap ? (P.kv_layout ? P.cs[3] : P.cs[4]) : (P.kv_layout ? P.cs[2] : P.cs[3]);
    const int64_t stride = (int64_t)gridDim.x * NWARPS;

    if (P.early_trigger)
        grid_dependency_trigger(); /* the next kernel may launch now: it waits for our completion */
    if (!P.checked) {
        /* before waiting for earlier work: this warp's first state tile into L2 (no index arrays
           here, so the slot is the sequence). L2 is the point of coherence: a tile that earlier
           work still writes is only fetched early, and the loads after the wait see the writes. */
        const int64_t item = (int64_t)blockIdx.x * NWARPS + warp;
        if (VEC && P.pool && item < P.items && lane < RW) {
            int64_t n;
            int h, tile;
            decode_item(P, item, &n, &h, &tile);
            prefetch_rows(P, n, h, tile * RW + lane, prs);
        }
        grid_dependency_wait(); /* launched as a programmatic dependent: earlier work must be visible */
    }

    for (int64_t item = (int64_t)blockIdx.x * NWARPS + warp; item < P.items; item += stride) {
        int64_t n;
        int h, tile;
        decode_item(P, item, &n, &h, &tile);
        const int hk = P.grouped ? (int)fdiv((unsigned)h, P.fd_ratio) : h - (int)fdiv((unsigned)h, P.fd_hk) * P.Hk;
        const int r0 = tile * RW;

        int64_t b, t0, t1;
        seq_tokens(P, n, &b, &t0, &t1);
        const int64_t rs = seq_read_slot(P, n);

        /* the state tile, once */
        float4 s[RPT][KV];
        {
            const float *src = rs >= 0 ? P.pool + rs * P.ps[0] + (int64_t)h * P.ps[1] : nullptr;
#pragma unroll
            for (int j = 0; j < RPT; j++) {
                const int r = r0 + grp + RG * j;
#pragma unroll
                for (int i = 0; i < KV; i++) {
                    const int c = 4 * (i * LPR + lr);
                    s[j][i] = (src && r < Dv && c < Dk) ? ld_row4<VEC>(src, prs, pcs, r, c, Dk)
                                                        : make_float4(0.f, 0.f, 0.f, 0.f);
                }
            }
        }
        /* the first token's inputs */
        tok_in<KV, RPT, F32IN> nxt;
        if (!STAGED && t0 < t1)
            load_token<KV, RPT, F32IN>(P, b, t0, n, t0, h, hk, r0, grp, lr, nxt);

        /* persistent: with this item's loads issued, bring the state tile of the warp's next item
           into L2, so that HBM keeps streaming while this item computes and stores (one item
           ahead: two ahead was measured slower, 88.5 against 73.9 us for decode B=64) */
        if (VEC && P.pool && item + stride < P.items) {
            int64_t n2;
            int h2, tile2;
            decode_item(P, item + stride, &n2, &h2, &tile2);
            const int r = tile2 * RW + lane;
            if (lane < RW && r < Dv) {
                const int64_t rs2 = P.read_slots ? (int64_t)P.read_slots[n2] : n2;
                if (rs2 >= 0 && rs2 < P.num_slots)
                    prefetch_l2(P.pool + rs2 * P.ps[0] + (int64_t)h2 * P.ps[1] + (int64_t)r * prs, (unsigned)Dk * 4u);
            }
        }

        if (P.checked) {
            grid_dependency_wait();
            if (__ldcg(&P.words->call_error))
                return; /* the same answer for every warp: this call writes nothing */
        }
        const int64_t ws = seq_write_slot(P, n);

        if constexpr (!STAGED) {
            /* T = 1 (dense): the token's inputs went straight to registers above */
            for (int64_t t = t0; t < t1; t++) {
                const tok_in<KV, RPT, F32IN> in = nxt;
                float4 kf[KV], qf[KV];
#pragma unroll
                for (int i = 0; i < KV; i++) {
                    kf[i] = cvt_in4<F32IN>(in.k[i], P.dtype);
                    qf[i] = cvt_in4<F32IN>(in.q[i], P.dtype);
                }
                const bool g32 = P.gate_dtype == GDN_DTYPE_F32;
                const float g = g32 ? __uint_as_float(in.g) : cvt16(in.g, P.gate_dtype);
                float be = g32 ? __uint_as_float(in.be) : cvt16(in.be, P.gate_dtype), dec;
                dec = gate_decay(P, h, g, &be);
                long long co = -1;
                if (dense_cap)
                    co = b * P.cs[0] + t * P.cs[1] + h * P.cs[2];
                else if (P.cap_mode == GDN_CAPTURE_SLOTS && in.slot >= 0)
                    co = in.slot * P.cs[0] + h * P.cs[1];
                float v[RPT];
#pragma unroll
                for (int jj = 0; jj < RPT; jj++)
                    v[jj] = F32IN ? __uint_as_float(in.v[jj]) : cvt16(in.v[jj], P.dtype);
                token_step<KV, RPT, VEC>(P, s, kf, qf, v, dec, be, co, b, t, h, r0, grp, lr, crs, ccs);
            }
        } else {
            /* T > 1: tokens staged a chunk at a time in the warp's shared-memory region */
            constexpr int DKP = KV * LPR * 4;
            const int CH = P.chunk, CHP = (CH + 1) & ~1;
            extern __shared__ __align__(16) float smem_f[];
            float *wb = smem_f + warp * warp_region_floats(CH, DKP, RW);
            long long *csm = (long long *)wb;
            float *qsm = wb + 2 * CHP, *ksm = qsm + CH * DKP, *vsm = ksm + CH * DKP, *dsm = vsm + CH * RW,
                  *bsm = dsm + CH;
            for (int64_t tc = t0; tc < t1; tc += CH) {
                const int nt = (int)(t1 - tc < CH ? t1 - tc : CH);
                __syncwarp(); /* the previous chunk's readers are done */
                stage_warp<KV, RPT, F32IN>(P, lane, nt, b, tc, n, t0, h, hk, r0, dense_cap, csm, qsm, ksm, vsm, dsm,
                                           bsm);
                __syncwarp();
                for (int j = 0; j < nt; j++) {
                    float4 kf[KV], qf[KV];
#pragma unroll
                    for (int i = 0; i < KV; i++) {
                        kf[i] = *(const float4 *)(ksm + j * DKP + 4 * (i * LPR + lr));
                        qf[i] = *(const float4 *)(qsm + j * DKP + 4 * (i * LPR + lr));
                    }
                    float v[RPT];
#pragma unroll
                    for (int jj = 0; jj < RPT; jj++)
                        v[jj] = vsm[j * RW + grp + RG * jj];
                    token_step<KV, RPT, VEC>(P, s, kf, qf, v, dsm[j], bsm[j], csm[j], b, tc + j, h, r0, grp, lr, crs,
                                             ccs);
                }
            }
        }

        /* the final state, once (an empty sequence copies its read state; nothing when in place) */
        if (ws >= 0 && !(t1 == t0 && ws == rs)) {
            float *dst = P.pool + ws * P.ps[0] + (int64_t)h * P.ps[1];
#pragma unroll
            for (int j = 0; j < RPT; j++) {
                const int r = r0 + grp + RG * j;
                if (r >= Dv)
                    continue;
#pragma unroll
                for (int i = 0; i < KV; i++) {
                    const int c = 4 * (i * LPR + lr);
                    if (c < Dk)
                        st_row4<VEC>(dst, prs, pcs, r, c, Dk, s[j][i]);
                }
            }
        }
    }
}

/* --- chunks: T > 1 without capture at larger batch, one block per item ---------------------------
 * A block item is (sequence, value head, tile of BR = 4 * RW rows); its 4 warps hold the tile's
 * rows as in the decode kernel. Tokens come CH at a time. Per chunk (tokens 0 .. nt-1, state s_0
 * at its start, a_t decay, b_t beta, k^_t = ksc_t k_t, q^_t = qsc_t q_t, A_t = a_0 .. a_t,
 * G[t][i] = a_{i+1} .. a_t, G[t][t] = 1), the token recurrence of a row is, exactly:
 *     u_t = s_{t-1}.k^_t = A_{t-1} ksc_t (s_0.k_t) + sum_{i<t} G[t-1][i] (k^_i.k^_t) d_i
 *     d_t = b_t (v_t - a_t u_t)
 *     y_t = A_t qsc_t (s_0.q_t) + sum_{i<=t} G[t][i] (k^_i.q^_t) d_i
 *     s_nt-1 = A_nt-1 s_0 + sum_i G[nt-1][i] ksc_i d_i k_i    (with capture: s_t = a_t s_t-1 + ksc_t d_t k_t)
 * so the block stages the chunk's q, k (f32), v, gates once; computes the head's scalars once
 * (|q_t|^2, k_i.k_j, k_i.q_t as 4-thread dots; then the coefficient tables, one thread per (t, i));
 * each row takes its 2 nt dots s_0.k_t, s_0.q_t at once (independent, one merged 8-lane reduction),
 * runs the scalar recurrence above (no shuffles), and updates its slice once per chunk. */

template <int KV, int RPT>
__host__ __device__ constexpr int chunk_of()
{
    return (RPT == 2 || KV == 8) ? 4 : MAX_CHUNK; /* registers: 2 CH RPT partial dots per lane */
}

__device__ __forceinline__ int tri(int j)
{
    return j * (j + 1) / 2;
}

template <int KV, int BR, int CH, bool F32IN>
__device__ __forceinline__ void stage_block(const gdn_cuda_params &P, int tid, int nt, int64_t b, int64_t tc,
                                            int64_t n, int64_t t0, int h, int hk, int rb, bool dense_cap,
                                            float *qsm, float *ksm, float *vsm, float *as, float *bs, long long *cs)
{
    constexpr int DKP = KV * LPR * 4, NCH = DKP / 4;
    constexpr int U = (2 * CH * NCH + NTHREADS - 1) / NTHREADS, VU = (CH * BR + NTHREADS - 1) / NTHREADS;
    const int Dk = P.Dk;
    unsigned graw, braw, vraw[VU];
    long long slot;
    stage_gates_raw(P, tid, nt, b, tc, n, t0, h, &graw, &braw, &slot);
#pragma unroll
    for (int u = 0; u < VU; u++) {
        const int idx = tid + NTHREADS * u, j = idx / BR, r = rb + (idx - j * BR);
        vraw[u] = 0;
        if (idx < nt * BR && r < P.Dv) {
            const int64_t o = b * P.vs[0] + (tc + j) * P.vs[1] + h * P.vs[2] + r * P.vs[3];
            vraw[u] = F32IN ? ((const unsigned *)P.v)[o] : (unsigned)((const unsigned short *)P.v)[o];
        }
    }
    const int64_t qb = b * P.qs[0] + tc * P.qs[1] + hk * P.qs[2], kb = b * P.ks[0] + tc * P.ks[1] + hk * P.ks[2];
    const int total = nt * 2 * NCH;
    raw4_t<F32IN> a[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int idx = tid + NTHREADS * u, j = idx / (2 * NCH), rem = idx - j * 2 * NCH;
        const int isk = rem >= NCH, c = 4 * (rem - isk * NCH);
        a[u] = zero4<F32IN>();
        if (idx < total && c < Dk)
            a[u] = isk ? ld_in4<F32IN>(P.k, kb + j * P.ks[1], P.ks[3], c, Dk, P.qk_vec)
                       : ld_in4<F32IN>(P.q, qb + j * P.qs[1], P.qs[3], c, Dk, P.qk_vec);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int idx = tid + NTHREADS * u, j = idx / (2 * NCH), rem = idx - j * 2 * NCH;
        const int isk = rem >= NCH, c = 4 * (rem - isk * NCH);
        if (idx < total)
            *(float4 *)((isk ? ksm : qsm) + j * DKP + c) = cvt_in4<F32IN>(a[u], P.dtype);
    }
#pragma unroll
    for (int u = 0; u < VU; u++) {
        const int idx = tid + NTHREADS * u;
        if (idx < nt * BR)
            vsm[idx] = F32IN ? __uint_as_float(vraw[u]) : cvt16(vraw[u], P.dtype);
    }
    stage_gates_store(P, tid, nt, b, tc, h, dense_cap, graw, braw, slot, as, bs, cs);
}

/* The head's raw dot products of the chunk: dots[t] = |q_t|^2, dots[CH + tri(j) + i] = k_i.k_j,
 * dots[CH + TRI + tri(t) + i] = k_i.q_t (i <= j, t < nt); 4 consecutive threads per dot. */
template <int KV, int CH>
__device__ __forceinline__ void head_dots(int nt, int tid, const float *qsm, const float *ksm, float *dots)
{
    constexpr int DKP = KV * LPR * 4, Q4 = DKP / 16, TRI = CH * (CH + 1) / 2;
    const int t1 = tri(nt), nd = nt + 2 * t1;
    for (int base = 0; base < 4 * nd; base += NTHREADS) {
        const int u = base + tid, d = u >> 2, qt = u & 3;
        float acc0 = 0.f, acc1 = 0.f;
        int slot = -1;
        if (d < nd) {
            const float *x, *y;
            if (d < nt) {
                x = y = qsm + d * DKP;
                slot = d;
            } else {
                int e = d - nt, isq = 0;
                if (e >= t1) {
                    e -= t1;
                    isq = 1;
                }
                int j = 0;
                while (tri(j + 1) <= e)
                    j++;
                const int i = e - tri(j);
                x = ksm + i * DKP;
                y = (isq ? qsm : ksm) + j * DKP;
                slot = CH + (isq ? TRI : 0) + tri(j) + i;
            }
#pragma unroll
            for (int m = 0; m < Q4; m += 2) {
                acc0 = dot4(((const float4 *)x)[m * 4 + qt], ((const float4 *)y)[m * 4 + qt], acc0);
                if (m + 1 < Q4)
                    acc1 = dot4(((const float4 *)x)[(m + 1) * 4 + qt], ((const float4 *)y)[(m + 1) * 4 + qt], acc1);
            }
        }
        float acc = acc0 + acc1;
        acc += __shfl_xor_sync(0xffffffffu, acc, 1);
        acc += __shfl_xor_sync(0xffffffffu, acc, 2);
        if (qt == 0 && slot >= 0)
            dots[slot] = acc;
    }
}

template <int KV, int RPT, bool VEC, bool F32IN>
__global__ void __launch_bounds__(NTHREADS, min_blocks<KV, F32IN>())
    chunk_kernel(const __grid_constant__ gdn_cuda_params P)
{
    constexpr int RW = RG * RPT, BR = NWARPS * RW, DKP = KV * LPR * 4, CH = chunk_of<KV, RPT>();
    constexpr int TRI = CH * (CH + 1) / 2;
    __shared__ __align__(16) float qsm[CH * DKP];
    __shared__ __align__(16) float ksm[CH * DKP];
    __shared__ float vsm[CH * BR], gas[CH], gbs[CH], dots[CH + 2 * TRI];
    __shared__ float cP[CH], cQ[CH], cK[CH], cW[CH], cU[CH * CH], cY[CH * CH], cA[1];
    __shared__ long long gcs[CH];

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, lr = lane % LPR, grp = lane / LPR;
    const int Dk = P.Dk, Dv = P.Dv;
    const int64_t prs = P.kv_layout ? P.ps[3] : P.ps[2], pcs = P.kv_layout ? P.ps[2] : P.ps[3];
    const bool dense_cap = P.cap_mode == GDN_CAPTURE_DENSE, capturing = P.cap_mode != GDN_CAPTURE_NONE;
    const int64_t crs = dense_cap ? (P.kv_layout ? P.cs[4] : P.cs[3]) : (P.kv_layout ? P.cs[3] : P.cs[2]);
    const int64_t ccs = dense_cap ? (P.kv_layout ? P.cs[3] : P.cs[4]) : (P.kv_layout ? P.cs[2] : P.cs[3]);

    if (P.early_trigger)
        grid_dependency_trigger();
    if (!P.checked) {
        /* as in the decode kernel: the first tile into L2 before the wait (no index arrays) */
        if (VEC && P.pool && (int64_t)blockIdx.x < P.items && tid < BR) {
            int64_t n;
            int h, tile;
            decode_item(P, blockIdx.x, &n, &h, &tile);
            prefetch_rows(P, n, h, tile * BR + tid, prs);
        }
        grid_dependency_wait();
    }

    for (int64_t item = blockIdx.x; item < P.items; item += gridDim.x) {
        int64_t n;
        int h, tile;
        decode_item(P, item, &n, &h, &tile);
        const int hk = P.grouped ? (int)fdiv((unsigned)h, P.fd_ratio) : h - (int)fdiv((unsigned)h, P.fd_hk) * P.Hk;
        const int rb = tile * BR, r0 = rb + warp * RW;

        int64_t b, t0, t1;
        seq_tokens(P, n, &b, &t0, &t1);
        const int64_t rs = seq_read_slot(P, n);
        float4 s[RPT][KV];
        {
            const float *src = rs >= 0 ? P.pool + rs * P.ps[0] + (int64_t)h * P.ps[1] : nullptr;
#pragma unroll
            for (int j = 0; j < RPT; j++) {
                const int r = r0 + grp + RG * j;
#pragma unroll
                for (int i = 0; i < KV; i++) {
                    const int c = 4 * (i * LPR + lr);
                    s[j][i] = (src && r < Dv && c < Dk) ? ld_row4<VEC>(src, prs, pcs, r, c, Dk)
                                                        : make_float4(0.f, 0.f, 0.f, 0.f);
                }
            }
        }
        if (VEC && P.pool && item + gridDim.x < P.items && tid < BR) {
            int64_t n2;
            int h2, tile2;
            decode_item(P, item + gridDim.x, &n2, &h2, &tile2);
            prefetch_rows(P, P.read_slots ? (int64_t)P.read_slots[n2] : n2, h2, tile2 * BR + tid, prs);
        }
        if (P.checked) {
            grid_dependency_wait();
            if (__ldcg(&P.words->call_error))
                return; /* the same answer for every thread: this call writes nothing */
        }
        const int64_t ws = seq_write_slot(P, n);

        for (int64_t tc = t0; tc < t1; tc += CH) {
            const int nt = (int)(t1 - tc < CH ? t1 - tc : CH);
            __syncthreads(); /* the previous chunk's readers are done */
            stage_block<KV, BR, CH, F32IN>(P, tid, nt, b, tc, n, t0, h, hk, rb, dense_cap, qsm, ksm, vsm, gas, gbs,
                                           gcs);
            __syncthreads();
            head_dots<KV, CH>(nt, tid, qsm, ksm, dots);
            /* the rows' dots with the chunk's starting state, all at once */
            float pk[CH][RPT], pq[CH][RPT];
#pragma unroll
            for (int t = 0; t < CH; t++) {
#pragma unroll
                for (int jj = 0; jj < RPT; jj++)
                    pk[t][jj] = pq[t][jj] = 0.f;
                if (t < nt) {
                    float4 kf[KV], qf[KV];
#pragma unroll
                    for (int i = 0; i < KV; i++) {
                        kf[i] = *(const float4 *)(ksm + t * DKP + 4 * (i * LPR + lr));
                        qf[i] = *(const float4 *)(qsm + t * DKP + 4 * (i * LPR + lr));
                    }
#pragma unroll
                    for (int jj = 0; jj < RPT; jj++) {
                        pk[t][jj] = dot_row<KV>(s[jj], kf);
                        pq[t][jj] = dot_row<KV>(s[jj], qf);
                    }
                }
            }
#pragma unroll
            for (int o = LPR / 2; o > 0; o >>= 1)
#pragma unroll
                for (int t = 0; t < CH; t++)
                    if (t < nt)
#pragma unroll
                        for (int jj = 0; jj < RPT; jj++) {
                            pk[t][jj] += __shfl_xor_sync(0xffffffffu, pk[t][jj], o);
                            pq[t][jj] += __shfl_xor_sync(0xffffffffu, pq[t][jj], o);
                        }
            __syncthreads(); /* dots[] complete */
            if (tid < CH * CH) {
                const int t = tid / CH, i = tid - t * CH;
                if (t < nt && i <= t) {
                    const bool l2 = P.l2norm;
                    const float ksi = l2 ? rsqrtf(dots[CH + tri(i) + i] + 1e-6f) : 1.0f;
                    const float kst = l2 ? rsqrtf(dots[CH + tri(t) + t] + 1e-6f) : 1.0f;
                    const float qst = P.scale * (l2 ? rsqrtf(dots[t] + 1e-6f) : 1.0f);
                    float g1 = 1.0f; /* G[t-1][i] */
                    for (int j = i + 1; j < t; j++)
                        g1 *= gas[j];
                    const float g0 = i < t ? g1 * gas[t] : 1.0f; /* G[t][i] */
                    cY[t * CH + i] = g0 * (ksi * qst) * dots[CH + TRI + tri(t) + i];
                    if (i < t)
                        cU[t * CH + i] = g1 * (ksi * kst) * dots[CH + tri(t) + i];
                    if (i == t) {
                        float A = 1.0f; /* A_{t-1} */
                        for (int j = 0; j < t; j++)
                            A *= gas[j];
                        cP[t] = A * kst;
                        cQ[t] = (A * gas[t]) * qst;
                        cK[t] = kst;
                    }
                    if (t == nt - 1) {
                        cW[i] = g0 * ksi;
                        if (i == 0)
                            cA[0] = gas[0] * g0;
                    }
                }
            }
            __syncthreads(); /* coefficient tables complete */
            float d[CH][RPT];
#pragma unroll
            for (int jj = 0; jj < RPT; jj++) {
                const int rr = warp * RW + grp + RG * jj, r = rb + rr;
#pragma unroll
                for (int t = 0; t < CH; t++) {
                    d[t][jj] = 0.f;
                    if (t < nt) {
                        float u = cP[t] * pk[t][jj];
#pragma unroll
                        for (int i = 0; i < t; i++)
                            u = fmaf(cU[t * CH + i], d[i][jj], u);
                        d[t][jj] = gbs[t] * (vsm[t * BR + rr] - gas[t] * u);
                        float y = cQ[t] * pq[t][jj];
#pragma unroll
                        for (int i = 0; i <= t; i++)
                            y = fmaf(cY[t * CH + i], d[i][jj], y);
                        if (P.out && lr == (t & (LPR - 1)) && r < Dv)
                            st_elem(P.out, P.out_dtype, b * P.os[0] + (tc + t) * P.os[1] + h * P.os[2] + r * P.os[3],
                                    y);
                    }
                }
            }
            if (capturing) {
#pragma unroll
                for (int t = 0; t < CH; t++) {
                    if (t < nt) {
                        float4 kf[KV];
#pragma unroll
                        for (int i = 0; i < KV; i++)
                            kf[i] = *(const float4 *)(ksm + t * DKP + 4 * (i * LPR + lr));
                        const float a = gas[t];
                        const long long co = gcs[t];
#pragma unroll
                        for (int jj = 0; jj < RPT; jj++) {
                            const float dk = d[t][jj] * cK[t];
#pragma unroll
                            for (int i = 0; i < KV; i++) {
                                s[jj][i].x = fmaf(dk, kf[i].x, a * s[jj][i].x);
                                s[jj][i].y = fmaf(dk, kf[i].y, a * s[jj][i].y);
                                s[jj][i].z = fmaf(dk, kf[i].z, a * s[jj][i].z);
                                s[jj][i].w = fmaf(dk, kf[i].w, a * s[jj][i].w);
                            }
                            const int r = r0 + grp + RG * jj;
                            if (co >= 0 && r < Dv) {
                                float *dst = P.cap + co;
#pragma unroll
                                for (int i = 0; i < KV; i++) {
                                    const int c = 4 * (i * LPR + lr);
                                    if (c < Dk)
                                        st_row4<VEC>(dst, crs, ccs, r, c, Dk, s[jj][i]);
                                }
                            }
                        }
                    }
                }
            } else {
                const float A = cA[0];
#pragma unroll
                for (int jj = 0; jj < RPT; jj++)
#pragma unroll
                    for (int i = 0; i < KV; i++) {
                        s[jj][i].x *= A;
                        s[jj][i].y *= A;
                        s[jj][i].z *= A;
                        s[jj][i].w *= A;
                    }
#pragma unroll
                for (int t = 0; t < CH; t++) {
                    if (t < nt) {
                        float4 kf[KV];
#pragma unroll
                        for (int i = 0; i < KV; i++)
                            kf[i] = *(const float4 *)(ksm + t * DKP + 4 * (i * LPR + lr));
#pragma unroll
                        for (int jj = 0; jj < RPT; jj++) {
                            const float w = cW[t] * d[t][jj];
#pragma unroll
                            for (int i = 0; i < KV; i++) {
                                s[jj][i].x = fmaf(w, kf[i].x, s[jj][i].x);
                                s[jj][i].y = fmaf(w, kf[i].y, s[jj][i].y);
                                s[jj][i].z = fmaf(w, kf[i].z, s[jj][i].z);
                                s[jj][i].w = fmaf(w, kf[i].w, s[jj][i].w);
                            }
                        }
                    }
                }
            }
        }

        /* the final state, once (an empty sequence copies its read state; nothing when in place) */
        if (ws >= 0 && !(t1 == t0 && ws == rs)) {
            float *dst = P.pool + ws * P.ps[0] + (int64_t)h * P.ps[1];
#pragma unroll
            for (int j = 0; j < RPT; j++) {
                const int r = r0 + grp + RG * j;
                if (r >= Dv)
                    continue;
#pragma unroll
                for (int i = 0; i < KV; i++) {
                    const int c = 4 * (i * LPR + lr);
                    if (c < Dk)
                        st_row4<VEC>(dst, prs, pcs, r, c, Dk, s[j][i]);
                }
            }
        }
    }
}

#include "cuda/fast.cuh"
#include "cuda/fast_pairs.cuh"
#include "cuda/chunked.cuh"
#include "cuda/chunked_tc.cuh"
#include "cuda/chunked_split.cuh"

/* --- launcher ------------------------------------------------------------------------------- */

typedef void (*kernel_fn)(gdn_cuda_params);

/* Blocks of a kernel resident per SM (cached per kernel: the occupancy query is not free). */
static int blocks_per_sm(kernel_fn fn, int index, size_t smem)
{
    static std::atomic<int> cache[32 * (MAX_CHUNK + 2)];
    int v = cache[index].load(std::memory_order_relaxed);
    if (v == 0) {
        int o = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o, fn, NTHREADS, smem) != cudaSuccess || o < 1) {
            (void)cudaGetLastError();
            o = 1;
        }
        v = o;
        cache[index].store(v, std::memory_order_relaxed);
    }
    return v;
}

template <int KV, int RPT, bool F32IN, bool STAGED>
static kernel_fn pick_vec(bool vec)
{
    return vec ? recurrent_kernel<KV, RPT, true, F32IN, STAGED> : recurrent_kernel<KV, RPT, false, F32IN, STAGED>;
}

template <int KV, int RPT, bool F32IN>
static kernel_fn pick_chunk_vec(bool vec)
{
    return vec ? chunk_kernel<KV, RPT, true, F32IN> : chunk_kernel<KV, RPT, false, F32IN>;
}

template <bool F32IN>
static kernel_fn pick_chunk(int kv, int rpt, bool vec)
{
    switch (kv) {
    case 1: return rpt == 1 ? pick_chunk_vec<1, 1, F32IN>(vec) : pick_chunk_vec<1, 2, F32IN>(vec);
    case 2: return rpt == 1 ? pick_chunk_vec<2, 1, F32IN>(vec) : pick_chunk_vec<2, 2, F32IN>(vec);
    case 4: return rpt == 1 ? pick_chunk_vec<4, 1, F32IN>(vec) : pick_chunk_vec<4, 2, F32IN>(vec);
    default: return pick_chunk_vec<8, 1, F32IN>(vec);
    }
}

template <bool F32IN, bool STAGED>
static kernel_fn pick_in(int kv, int rpt, bool vec)
{
    switch (kv) {
    case 1: return rpt == 1 ? pick_vec<1, 1, F32IN, STAGED>(vec) : pick_vec<1, 2, F32IN, STAGED>(vec);
    case 2: return rpt == 1 ? pick_vec<2, 1, F32IN, STAGED>(vec) : pick_vec<2, 2, F32IN, STAGED>(vec);
    case 4: return rpt == 1 ? pick_vec<4, 1, F32IN, STAGED>(vec) : pick_vec<4, 2, F32IN, STAGED>(vec);
    default: return pick_vec<8, 1, F32IN, STAGED>(vec);
    }
}

static int key_vectors(int dk)
{
    return dk <= 32 ? 1 : dk <= 64 ? 2 : dk <= 128 ? 4 : 8;
}

template <int D, int FL, bool MULTI, bool CAP, bool OCC, int CV, int TT = 0>
static kernel_fn pick_fast_dt(int dtype)
{
    return dtype == GDN_DTYPE_F32    ? fast_kernel<D, FL, MULTI, 0, CAP, OCC, CV, TT>
           : dtype == GDN_DTYPE_BF16 ? fast_kernel<D, FL, MULTI, 1, CAP, OCC, CV, TT>
                                     : fast_kernel<D, FL, MULTI, 2, CAP, OCC, CV, TT>;
}
/* fast_kernel with T compiled in (fast_kernel's TT), T in 3 (8 lanes) or 4 .. FAST_TMAX */
template <int D, int FL, int CV>
static kernel_fn pick_fast_tt(int dtype, int T)
{
    switch (T) {
    case 3:
        if constexpr (FL == 8)
            return pick_fast_dt<D, FL, true, false, false, CV, 3>(dtype);
        else
            return pick_fast_dt<D, FL, true, false, false, CV>(dtype); /* (not asked: the switch over T) */
    case 4: return pick_fast_dt<D, FL, true, false, false, CV, 4>(dtype);
    case 5: return pick_fast_dt<D, FL, true, false, false, CV, 5>(dtype);
    case 6: return pick_fast_dt<D, FL, true, false, false, CV, 6>(dtype);
    case 7: return pick_fast_dt<D, FL, true, false, false, CV, 7>(dtype);
    default: return pick_fast_dt<D, FL, true, false, false, CV, FAST_TMAX>(dtype);
    }
}
template <int D, int FL, bool MULTI, bool CAP, bool OCC>
static kernel_fn pick_fast_cv(int dtype, int cv, int T, bool tt)
{
    if constexpr (MULTI && !CAP) { /* the compiled-in conventions: verify without capture */
        if constexpr (D == 128 && FL <= 16 && !OCC) /* and T compiled in (fast_kernel's TT) where asked */
            if (cv != FAST_CV_ANY && tt && T >= (FL == 8 ? 3 : 4))
                return cv == FAST_CV_LOG_F32 ? pick_fast_tt<D, FL, FAST_CV_LOG_F32>(dtype, T)
                                             : pick_fast_tt<D, FL, FAST_CV_LOG_IN>(dtype, T);
        return cv == FAST_CV_LOG_F32  ? pick_fast_dt<D, FL, MULTI, CAP, OCC, FAST_CV_LOG_F32>(dtype)
               : cv == FAST_CV_LOG_IN ? pick_fast_dt<D, FL, MULTI, CAP, OCC, FAST_CV_LOG_IN>(dtype)
                                      : pick_fast_dt<D, FL, MULTI, CAP, OCC, FAST_CV_ANY>(dtype);
    }
    return pick_fast_dt<D, FL, MULTI, CAP, OCC, FAST_CV_ANY>(dtype);
}
template <int D, int FL, bool MULTI, bool CAP>
static kernel_fn pick_fast_in(int dtype, bool occ, int cv, int T, bool tt)
{
    if constexpr (MULTI && !CAP && D <= 8 * FL) /* the occupancy form (fast_kernel's OCC) */
        if (occ)
            return pick_fast_cv<D, FL, MULTI, CAP, true>(dtype, cv, T, false);
    return pick_fast_cv<D, FL, MULTI, CAP, false>(dtype, cv, T, tt);
}

template <int D, int FL, bool JT, int CV>
static kernel_fn pick_fast1_cv(int dtype)
{
    return dtype == GDN_DTYPE_F32    ? fast1_kernel<D, FL, 0, JT, CV>
           : dtype == GDN_DTYPE_BF16 ? fast1_kernel<D, FL, 1, JT, CV>
                                     : fast1_kernel<D, FL, 2, JT, CV>;
}
template <int D, int FL, bool JT>
static kernel_fn pick_fast1(int dtype, int cv)
{
    return cv == FAST_CV_LOG_F32  ? pick_fast1_cv<D, FL, JT, FAST_CV_LOG_F32>(dtype)
           : cv == FAST_CV_LOG_IN ? pick_fast1_cv<D, FL, JT, FAST_CV_LOG_IN>(dtype)
                                  : pick_fast1_cv<D, FL, JT, FAST_CV_ANY>(dtype);
}

template <int D, int FL>
static kernel_fn pick_fast_t(bool multi, bool self, int dtype, bool tiles, bool cap, bool occ, int cv, int T)
{
    if (!multi && self)
        return tiles ? pick_fast1<D, FL, true>(dtype, cv) : pick_fast1<D, FL, false>(dtype, cv);
    if (multi && cap)
        return pick_fast_in<D, FL, true, true>(dtype, occ, cv, T, false);
    /* T compiled in for one tile per CTA from T = 3 at 8 lanes and T = 4 at 16 (H200, bench_cuda --one B T, B = 1 /
       2: T=4 3.02 / 4.28 -> 2.97 / 4.15 us, T=5 3.72 / 4.70 -> 3.61 / 4.60, T=7 4.31 / 5.34 -> 4.20 / 5.33; at
       several tiles per CTA, B = 4 and 8, as often slower as faster; slower at T = 2 (8 lanes: 80 registers let 6
       CTAs onto an SM, B=4 5.88 -> 6.82) and T = 3 on 16 lanes (B=1 2.82 -> 2.85); docs/PERF.md, session 23) */
    return multi ? pick_fast_in<D, FL, true, false>(dtype, occ, cv, T, !tiles)
                 : pick_fast_in<D, FL, false, false>(dtype, occ, cv, T, false);
}

/* The fast path's lanes per row for D (a power of two, 32 .. 256) and the wish `lpr` (GDN_CUDA_FAST_LPR: lanes
 * per row for D = 128, 8, 16 or 32, 0 automatic; plus 100: decode through fast1_kernel, plus 200: decode through
 * the staged fast_kernel): 8 up to D = 64, 16 beyond, or the wish at D = 128. */
static int fast_lanes(int D, int lpr)
{
    const int want = lpr % 100;
    return D <= 64 ? 8 : D == 128 && (want == 8 || want == 32) ? want : 16;
}

/* The fast kernel for D, at fast_lanes(D, lpr) lanes per row. tiles: several tiles per CTA (decode: fast1_kernel's
 * JT; multi-token calls: fast_kernel's T compiled in only without); occ: fast_kernel's occupancy form where it
 * has one; cv: the call's compiled-in convention (fast_cv_of, or FAST_CV_ANY; kernels without the compiled-in
 * forms ignore it); T: the tokens per sequence. */
static kernel_fn pick_fast(int D, int lpr, bool multi, int dtype, bool tiles, bool cap, bool occ, int cv, int T)
{
    const int fl = fast_lanes(D, lpr);
    const bool self = lpr / 100 != 2; /* decode without staging unless asked */
    switch (D) {
    case 32: return pick_fast_t<32, 8>(multi, self, dtype, tiles, cap, occ, cv, T);
    case 64: return pick_fast_t<64, 8>(multi, self, dtype, tiles, cap, occ, cv, T);
    case 128:
        return fl == 8    ? pick_fast_t<128, 8>(multi, self, dtype, tiles, cap, occ, cv, T)
               : fl == 32 ? pick_fast_t<128, 32>(multi, self, dtype, tiles, cap, occ, cv, T)
                          : pick_fast_t<128, 16>(multi, self, dtype, tiles, cap, occ, cv, T);
    default: return pick_fast_t<256, 16>(multi, self, dtype, tiles, cap, occ, cv, T);
    }
}

/* log2 of the state tiles per CTA GDN_CUDA_FAST_J = fast_j > 0 asks for: the largest power of two up to
   fast_j, `tiles` and 2^FAST_JLOG_MAX. */
static int fast_jlog_asked(int fast_j, int tiles)
{
    int jlog = 0;
    while ((2 << jlog) <= fast_j && (2 << jlog) <= tiles && jlog < FAST_JLOG_MAX)
        jlog++;
    return jlog;
}

/* fast_pairs_kernel (fast_pairs.cuh) for a multi-token call without capture, D = 128 or 256. J (state
 * tiles per item): 4 (a head has 4 or 16; fewer where 4 would leave fewer than 4 CTAs per SM), or
 * GDN_CUDA_FAST_J (fast_j). Grids (`ask`: GDN_CUDA_FAST_LPR % 100 = 3, 4 or 5 forces one, else the rule): one CTA
 * per item with the drain rule's front and tail (5), persistent (3), contiguous tile ranges (4); the choice and what
 * measured it in pairs_map.h (pairs_plan_grid), each CTA's walk there too (pairs_cta_walk). */
template <int D, int CV, bool R>
static void (*pick_pairs_cv(int dtype))(gdn_cuda_params)
{
    return dtype == GDN_DTYPE_F32    ? fast_pairs_kernel<D, 0, CV, R>
           : dtype == GDN_DTYPE_BF16 ? fast_pairs_kernel<D, 1, CV, R>
                                     : fast_pairs_kernel<D, 2, CV, R>;
}
template <int D, bool R = false>
static void (*pick_pairs(int dtype, int cv))(gdn_cuda_params)
{
    return cv == FAST_CV_LOG_F32  ? pick_pairs_cv<D, FAST_CV_LOG_F32, R>(dtype)
           : cv == FAST_CV_LOG_IN ? pick_pairs_cv<D, FAST_CV_LOG_IN, R>(dtype)
                                  : pick_pairs_cv<D, FAST_CV_ANY, R>(dtype);
}
static std::atomic<long long> g_fast_tail_calls{0}, g_fast_front_calls{0}, /* gdn_cuda_fast_tail_calls, _front_, */
    g_fast_persistent_calls{0}, g_fast_range_calls{0};                      /* _persistent_, _range_ */

/* The pairs kernel's largest call's shared memory allowed for fn (`which` of 36 forms), once. */
static cudaError_t pairs_raise(void (*fn)(gdn_cuda_params), int which, int D, int esz)
{
    static std::atomic<int> raised[36];
    if (raised[which].load(std::memory_order_relaxed))
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute((const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         pairs_smem_bytes(D, FAST_TMAX, 1 << FAST_JLOG_MAX, esz));
    if (e == cudaSuccess)
        raised[which].store(1, std::memory_order_relaxed);
    return e;
}

static cudaError_t launch_fast_pairs(gdn_cuda_params p, cudaLaunchConfig_t cfg, int num_sms, int fast_j, int ask,
                                     int cv)
{
    typedef void (*pairs_fn)(gdn_cuda_params);
    const int D = (int)p.Dk, tiles = D * D / 4096; /* TR = 4096 / D rows per tile */
    const int esz = p.dtype == GDN_DTYPE_F32 ? 4 : 2;
    pairs_fn fn = D == 128 ? pick_pairs<128>(p.dtype, cv) : pick_pairs<256>(p.dtype, cv);
    const int which = ((D == 256) * 3 + (p.dtype == GDN_DTYPE_BF16 ? 1 : p.dtype == GDN_DTYPE_F16 ? 2 : 0)) * 3 + cv;
    cudaError_t e0 = pairs_raise(fn, which, D, esz);
    if (e0 != cudaSuccess)
        return e0;
    /* CTAs resident per SM for a call's shared memory at 2^jl tiles per item (cached per kernel, T, J) */
    static std::atomic<int> occ[18 * (FAST_TMAX + 1) * (FAST_JLOG_MAX + 1)];
    auto resident = [&](int jl, int *per_sm) -> cudaError_t {
        std::atomic<int> &o = occ[(which * (FAST_TMAX + 1) + (int)p.T) * (FAST_JLOG_MAX + 1) + jl];
        *per_sm = o.load(std::memory_order_relaxed);
        if (*per_sm)
            return cudaSuccess;
        cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            per_sm, fn, FAST_THREADS, (size_t)pairs_smem_bytes(D, (int)p.T, 1 << jl, esz));
        if (e != cudaSuccess)
            return e;
        *per_sm = *per_sm > 0 ? *per_sm : 1;
        o.store(*per_sm, std::memory_order_relaxed);
        return cudaSuccess;
    };
    /* 4 tiles per item, fewer where the item's shared memory would leave fewer than 4 CTAs per SM (the
       registers' bound) and fewer tiles give more. With the state rows in registers (session 25) every
       D = 128 call up to T = 8 fits 4 CTAs at 4 tiles (H200 verify B=64 T=8 at J = 1 / 2 / 4: 149.1 / 108.5 /
       94.3 us; T=4 108.4 / 77.7 / 74.5); with session 22's shared-memory buffers T = 8 took 2 tiles. */
    int jlog = 2, per_sm = 0;
    if (fast_j > 0) {
        jlog = fast_jlog_asked(fast_j, tiles);
    } else {
        cudaError_t e = resident(jlog, &per_sm);
        for (int jl = 1; e == cudaSuccess && per_sm < 4 && jl >= 0; jl--) { /* fewer tiles only for more CTAs */
            int fewer = 0;
            e = resident(jl, &fewer);
            if (fewer > per_sm)
                jlog = jl, per_sm = fewer;
        }
        if (e != cudaSuccess)
            return e;
    }
    p.fast_jlog = jlog;
    const int smem = pairs_smem_bytes(D, (int)p.T, 1 << jlog, esz);
    if (!per_sm) {
        cudaError_t e = resident(jlog, &per_sm);
        if (e != cudaSuccess)
            return e;
    }
    /* the grid: asked for, or the rule (pairs_map.h, pairs_plan_grid, with what measured it; tested on the host by
       tests/test_cuda_map.c); p.fast_tail, p.fast_front: the backend's requests (-1 automatic, 0 none, K forced),
       then the counts */
    pairs_plan_in pin;
    pin.D = D;
    pin.T = (int)p.T;
    pin.heads = p.N * p.Hv;
    pin.jlog = jlog;
    pin.per_sm = per_sm;
    pin.num_sms = num_sms;
    pin.ask = ask;
    pin.fast_j = fast_j;
    pin.tail_req = p.fast_tail;
    pin.front_req = p.fast_front;
    const pairs_plan plan = pairs_plan_grid(&pin);
    const int form = plan.form;
    if (form == 4) { /* ranges: fast_pairs_kernel<128, ..., RANGE> */
        fn = pick_pairs<128, true>(p.dtype, cv);
        cudaError_t e = pairs_raise(fn, 18 + which, D, esz);
        if (e != cudaSuccess)
            return e;
    }
    p.fast_tail = plan.tail;
    p.fast_front = plan.front;
    cfg.blockDim = dim3(FAST_THREADS, 1, 1);
    cfg.gridDim = dim3((unsigned)plan.grid, 1, 1);
    cfg.dynamicSmemBytes = (size_t)smem;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, fn, p);
    if (e == cudaSuccess && plan.tail > 0)
        g_fast_tail_calls++;
    if (e == cudaSuccess && plan.front > 0)
        g_fast_front_calls++;
    if (e == cudaSuccess && form == 3)
        g_fast_persistent_calls++;
    if (e == cudaSuccess && form == 4)
        g_fast_range_calls++;
    return e;
}

long long gdn_cuda_fast_tail_calls(void)
{
    return g_fast_tail_calls.load();
}

long long gdn_cuda_fast_front_calls(void)
{
    return g_fast_front_calls.load();
}

long long gdn_cuda_fast_persistent_calls(void)
{
    return g_fast_persistent_calls.load();
}

long long gdn_cuda_fast_range_calls(void)
{
    return g_fast_range_calls.load();
}

int64_t gdn_cuda_chunk_workspace_floats(const gdn_cuda_params *p)
{
    return chunk_prefill_ok(p) ? chunk_split_ws_floats(p) : 0;
}

int64_t gdn_cuda_chunk_flag_words(const gdn_cuda_params *p, int num_sms)
{
    return chunk_prefill_ok(p) ? chunk_split_flag_words(p, num_sms) : 0;
}

void gdn_cuda_split_stats(long long *calls, long long *groups, long long *wg_calls, long long *wg64_calls,
                          long long *rs_calls)
{
    *rs_calls = g_split_rs_calls.load();
    *calls = g_split_calls.load();
    *groups = g_split_groups.load();
    *wg_calls = g_split_wg_calls.load();
    *wg64_calls = g_split_wg64_calls.load();
}

long long gdn_cuda_split_cluster_calls(void)
{
    return g_split_cluster_calls.load();
}

long long gdn_cuda_split_overlap_calls(void)
{
    return g_split_overlap_calls.load();
}

long long gdn_cuda_split_state_first_calls(void)
{
    return g_split_first_calls.load();
}

const char *gdn_cuda_recurrent_name(int k_dim)
{
    switch (key_vectors(k_dim)) {
    case 1: return "recurrent_f32__cuda_k32";
    case 2: return "recurrent_f32__cuda_k64";
    case 4: return "recurrent_f32__cuda_k128";
    default: return "recurrent_f32__cuda_k256";
    }
}

static bool aligned(const void *p, unsigned a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

/* 16-byte state accesses possible for the state views (head/row strides, unit columns)? */
static bool vec_ok(const gdn_cuda_params *p)
{
    if (p->kv_layout || p->Dk % 4 != 0)
        return false;
    if (p->pool && !(aligned(p->pool, 16) && p->ps[3] == 1 && p->ps[0] % 4 == 0 && p->ps[1] % 4 == 0 &&
                     p->ps[2] % 4 == 0))
        return false;
    if (p->cap_mode == GDN_CAPTURE_DENSE &&
        !(aligned(p->cap, 16) && p->cs[4] == 1 && p->cs[0] % 4 == 0 && p->cs[1] % 4 == 0 && p->cs[2] % 4 == 0 &&
          p->cs[3] % 4 == 0))
        return false;
    if (p->cap_mode == GDN_CAPTURE_SLOTS &&
        !(aligned(p->cap, 16) && p->cs[3] == 1 && p->cs[0] % 4 == 0 && p->cs[1] % 4 == 0 && p->cs[2] % 4 == 0))
        return false;
    return true;
}

/* q and k slices as one vector load (4 elements: 16 bytes f32, 8 bytes 16-bit)? */
static bool qk_vec_ok(const gdn_cuda_params *p)
{
    const int64_t esz = p->dtype == GDN_DTYPE_F32 ? 4 : 2, vb = 4 * esz;
    if (p->Dk % 4 != 0)
        return false;
    for (int w = 0; w < 2; w++) {
        const void *base = w ? p->k : p->q;
        const int64_t *st = w ? p->ks : p->qs;
        if (!aligned(base, (unsigned)vb) || st[3] != 1 || (st[0] * esz) % vb || (st[1] * esz) % vb ||
            (st[2] * esz) % vb)
            return false;
    }
    return true;
}

void gdn_cuda_fastdiv_init(gdn_fastdiv *f, unsigned d)
{
    f->d = d;
    f->m = 0;
    f->s = 0;
    if (d <= 1)
        return;
    unsigned l = 0;
    while ((1ull << l) < d)
        l++;
    const unsigned p = 31 + l; /* as CUTLASS's FastDivmod: exact for dividends < 2^31 */
    f->m = (unsigned)(((1ull << p) + d - 1) / d);
    f->s = p - 32;
}

/* Does a call the fast path takes (fast_ok) go to fast_pairs_kernel (multi-token, no capture, wide heads, from 2
   (sequence, head) pairs per SM, or forced by GDN_CUDA_FAST_LPR = 2 / 3)? Below 2 per SM fast_kernel is faster;
   from 2 on the pairs kernel with its rows loaded into registers (session 25) is, at T = 2 and 4, and at T = 8
   from B = 11 (B = 9, 10 within 2% behind) (H200 D = 128, verify B = 8 / 9 /
   12 / 14 against fast_kernel: T = 2 11.97 / 12.45 / 15.90 / 18.08 us against 11.71 / 13.89 / 16.15 / 18.64, T = 4
   14.25 / 14.99 / 16.67 / 18.62 against 12.58 / 16.11 / 19.01 / 21.92, T = 8 21.99 / 23.93 / 23.98 / 24.49
   against 16.68 / 23.49 / 27.87 / 32.33; docs/PERF.md, session 25; until then D = 128 took it from 3.5 per SM). */
static bool fast_pairs_call(const gdn_cuda_params *p, int num_sms, int fast_lpr)
{
    return p->T > 1 && p->cap_mode == GDN_CAPTURE_NONE && (p->Dk == 128 || p->Dk == 256) && !((uintptr_t)p->v & 15u) &&
           (fast_lpr % 100 == 2 || fast_lpr % 100 == 3 || fast_lpr % 100 == 4 || fast_lpr % 100 == 5 ||
            (fast_lpr % 100 == 0 && p->N * p->Hv >= 2 * (int64_t)num_sms));
}

cudaError_t gdn_cuda_launch_recurrent(const gdn_cuda_params *pin, cudaStream_t stream, int num_sms, int pdl,
                                      int rpt_override, int fast, int fast_lpr, int fast_j, int fast_cv)
{
    gdn_cuda_params p = *pin;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.blockDim = dim3(NTHREADS, 1, 1);
    cfg.stream = stream;
    if (pdl) {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    /* let the next kernel launch early: it launches only once every block of this grid has
       started (each triggers at its start), and waits for this grid's completion before it reads */
    p.early_trigger = pdl;
    /* the route, decided once: a chunked kernel, else the lean path (fast_pairs_kernel, or fast1_kernel /
       fast_kernel), else the general kernels */
    const bool chunk_algo = chunk_prefill_ok(&p);
    const bool fast_path = !chunk_algo && fast != 0 && fast_ok(&p);
    const bool pairs = fast_path && fast_pairs_call(&p, num_sms, fast_lpr);
    /* a single-sequence call the backend left to the compute kernel's own slot check (params.cuh, self_check):
       fast1_kernel and fast_kernel check it; every other kernel gets the check kernel in front, as before */
    if (p.self_check && !(fast_path && !pairs)) {
        p.self_check = 0;
        p.checked = 1;
        const cudaError_t e = gdn_cuda_launch_check(&p, stream, pdl);
        if (e != cudaSuccess)
            return e;
    }

    /* the chunked algorithm chosen (CHUNKED, or AUTO past its crossover): a chunked kernel (chunked.cuh,
       chunked_tc.cuh) where it applies, else the token loop */
    if (chunk_algo) {
        p.qk_vec = qk_vec_ok(&p);
        if (p.ws && chunk_split_ok(&p) && p.ws_floats >= chunk_split_min_floats(&p))
            /* the two passes where the context gave a workspace (for one sequence at least; a packed batch's
               whole) */
            return launch_chunk_split(p, cfg, num_sms);
        return p.chunk_tc ? launch_chunk_tc(p, cfg) : launch_chunk_prefill(p, cfg);
    }

    /* the lean path (fast.cuh) for every call that qualifies (dense, default slots or slot arrays, no
       capture or dense capture, T <= 8):
       measured faster than the general kernels on the H200 from B=1 to B=256, decode and verify T=4 */
    if (fast_path) {
        gdn_cuda_fastdiv_init(&p.fd_ratio, (unsigned)p.ratio);
        gdn_cuda_fastdiv_init(&p.fd_hk, (unsigned)p.Hk);
        const int cv = fast_cv ? fast_cv_of(&p) : FAST_CV_ANY; /* a compiled-in convention (fast.cuh) */
        /* multi-token calls without capture on wide heads from 2 (sequence, head) pairs per SM: two rows
           per thread (fast_pairs.cuh; GDN_CUDA_FAST_LPR=2 forces it, 3 forces it on a persistent grid, 8,
           16 or 32 asks for fast_kernel; H200 verify T=4 B=8: fast_kernel 15.35 us, fast_pairs in its first
           form 15.8) */
        if (pairs)
            return launch_fast_pairs(p, cfg, num_sms, fast_j, fast_lpr % 100, cv);
        /* lanes per row: decode 16 (twice the CTAs) up to 2 (sequence, head) pairs per SM, 8 beyond (H200:
           decode B=1 2.50 against 3.00 us, B=256 same); multi-token calls 16 up to one (sequence, head, token)
           per SM, 8 beyond at D = 128 without capture (with the compiled-in conventions, H200 T = 2 / 4 / 8,
           16 lanes against 8: B=1 2.57 / 4.01 / 6.87 against 3.03 / 4.20 / 6.51 us, B=2 4.11 / 5.28 / 8.17
           against 4.18 / 5.20 / 7.33, B=4 at the tiles per CTA below 6.45 / 8.32 / 13.56 against 6.22 / 8.04 /
           12.04; PERF.md, session 20) */
        const bool multi8 =
            p.T > 1 && p.cap_mode == GDN_CAPTURE_NONE && p.Dk == 128 && p.N * p.Hv * p.T > (int64_t)num_sms;
        /* and 16 again from 2 (sequence, head) pairs per SM, where the calls fast_pairs_call leaves (unaligned v)
           come */
        const bool band16 = p.N * p.Hv >= 2 * (int64_t)num_sms;
        int lpr = fast_lpr;
        if (lpr % 100 == 0)
            lpr += p.T > 1 ? (multi8 && !band16 ? 8 : 16) : p.N * p.Hv <= 2 * (int64_t)num_sms ? 16 : 8;
        const int tiles = p.Dk * fast_lanes(p.Dk, lpr) / FAST_THREADS; /* rows per CTA: FAST_THREADS / lanes */
        /* tiles per CTA (J): the most, up to 2 for decode and 4 for multi-token calls, that leave
           at least 4 CTAs per SM (2.75 for multi-token calls at 8 lanes, below); each CTA prefetches its J tiles into L2 at its start and loads tile
           j + 1 while tile j's tokens run (H200, J = 1 / 2 / 4 / 8: decode at 8 lanes B=64 79.2 / 69.0 / 70.8 /
           78.4 us, B=256 305 / 264 / 265 / 291; verify T=4 at 16 lanes B=64 147 / 119 / 106 / 113, B=8 18.1 /
           15.8 / 15.2 / 23.4) */
        int jlog = 0;
        if (fast_j > 0) {
            jlog = fast_jlog_asked(fast_j, tiles);
        } else {
            /* dense capture: up to 2 (B=64 T=4 at 16 lanes per row, J = 1 / 2 / 4 / 8: 232.1 / 214.9 /
               225.2 / 242.5 us; session 4 measured 212 / 216 / 227 / 244 and took 1) */
            /* decode at 16 lanes per row (D = 128, up to 2 (sequence, head) pairs per SM): one tile per CTA, whose
               kernel's fewer registers let more CTAs onto an SM (H200, session 38, `gdn bench`, J = 1 against 2: B=4
               5.17 against 5.73 us, B=8 9.43 against 9.71; at 8 lanes, from B=16, J = 2 stays: B=16 18.33 against
               18.36, B=32 35.15 against 34.70, B=64 68.3 against 66.9) */
            const bool decode16 = p.T == 1 && p.Dk == 128 && fast_lanes(p.Dk, lpr) == 16;
            const int most = p.T > 1 && p.cap_mode != GDN_CAPTURE_DENSE ? 2 : decode16 ? 0 : 1;
            /* multi-token calls at 8 lanes: down to 2.75 CTAs per SM (H200, verify T = 2 / 4 / 8 at 8 lanes, J = 1
               / 2 / 4: B=3 6.31 / 5.72 / 7.69, 8.04 / 7.39 / 11.49, 11.64 / 11.76 / 19.50 us; B=8 13.73 / 11.61 /
               11.23, 17.35 / 14.96 / 13.83, 24.42 / 22.57 / 22.19); else 4 */
            const int64_t floor_ctas =
                multi8 && fast_lanes(p.Dk, lpr) == 8 ? 11 * (int64_t)num_sms / 4 : 4 * (int64_t)num_sms;
            while ((2 << jlog) <= tiles && jlog < most && p.N * p.Hv * (tiles >> (jlog + 1)) >= floor_ctas)
                jlog++;
        }
        p.fast_jlog = jlog;
        /* decode: the kernel compiled for several tiles per CTA where J > 1; multi-token calls: fast_kernel's
           occupancy form past 4 CTAs per SM (B=1 T=4, 3.9 per SM: 4.12 us at 72 registers against 4.37 at 64;
           B=8 T=4 at J = 4, 7.8 per SM: 15.5 against 18.8) */
        const int64_t ctas = p.N * p.Hv * (tiles >> jlog);
        /* and at T = 2 on D = 128 at 16 lanes, where the per-T token loop's 128 registers gain nothing (H200, B=1
           T=2: 2.61 us against 2.68; session 21) */
        const bool occ = ctas > 4 * (int64_t)num_sms || (p.T == 2 && p.Dk == 128 && fast_lanes(p.Dk, lpr) == 16);
        const kernel_fn fn = pick_fast(p.Dk, lpr, p.T > 1, p.dtype, jlog > 0, p.cap_mode == GDN_CAPTURE_DENSE,
                                       occ, cv, (int)p.T);
        cfg.blockDim = dim3(FAST_THREADS, 1, 1);
        cfg.gridDim = dim3((unsigned)(p.Hv * (tiles >> jlog)), (unsigned)p.N, 1);
        cfg.dynamicSmemBytes = 0;
        return cudaLaunchKernelEx(&cfg, fn, p);
    }

    const int kv = key_vectors(p.Dk);
    const int max_rpt = kv == 8 ? 1 : 2;
    int rpt = max_rpt;
    /* no more rows per item than Dv needs; fewer rows per item while there are few warps */
    if (rpt > 1 && RG * (rpt / 2) >= p.Dv)
        rpt = 1;
    if (rpt > 1 && p.N * p.Hv * ((p.Dv + RG * rpt - 1) / (RG * rpt)) < 8 * (int64_t)num_sms)
        rpt = 1;
    if (rpt_override > 0) /* GDN_CUDA_RPT (measurements): 1 or 2 (4 was measured slower) */
        rpt = rpt_override >= 2 && max_rpt >= 2 ? 2 : 1;
    const int rw = RG * rpt;
    /* three kernels: dense T <= 1, the decode path (a warp per item of rw rows, inputs straight to
       registers); T > 1 or varlen without capture at larger batch (>= 8 warps' worth of items per
       SM), the chunk kernel (a block per item of NWARPS * rw rows, the head's scalars once per
       block, the tokens' dots at once); otherwise tokens staged per warp (the shorter chains of
       the per-warp path were measured faster at small batch and with capture) */
    const bool multi = p.cu || p.T > 1;
    const int64_t warp_items = p.N * p.Hv * ((p.Dv + rw - 1) / rw);
    static const int force = [] { /* GDN_CUDA_CHUNK (tests, measurements): 0 = never, 1 = always */
        const char *e = getenv("GDN_CUDA_CHUNK");
        return e && e[0] == '1' ? 1 : e && e[0] == '0' ? 0 : -1;
    }();
    bool chunked = multi && p.cap_mode == GDN_CAPTURE_NONE && warp_items >= 8 * (int64_t)num_sms;
    if (force >= 0 && multi)
        chunked = force == 1;
    const int item_rows = chunked ? NWARPS * rw : rw;
    p.tiles = (p.Dv + item_rows - 1) / item_rows;
    p.items = p.N * p.Hv * p.tiles;
    gdn_cuda_fastdiv_init(&p.fd_tiles, (unsigned)p.tiles);
    gdn_cuda_fastdiv_init(&p.fd_hv, (unsigned)p.Hv);
    gdn_cuda_fastdiv_init(&p.fd_ratio, (unsigned)p.ratio);
    gdn_cuda_fastdiv_init(&p.fd_hk, (unsigned)p.Hk);
    p.qk_vec = qk_vec_ok(&p);
    /* per-warp staging, up to MAX_CHUNK tokens a time */
    const int max_chunk = kv == 8 ? MAX_CHUNK / 2 : MAX_CHUNK; /* <= 48 KiB of shared memory per block */
    p.chunk = !multi ? 0 : chunked ? 1 : (int)(p.T < max_chunk ? (p.T < 1 ? 1 : p.T) : max_chunk);
    const size_t smem =
        (!multi || chunked) ? 0 : (size_t)NWARPS * warp_region_floats(p.chunk, kv * LPR * 4, rw) * sizeof(float);
    const bool vec = vec_ok(&p), f32in = p.dtype == GDN_DTYPE_F32;
    const kernel_fn fn = chunked ? (f32in ? pick_chunk<true>(kv, rpt, vec) : pick_chunk<false>(kv, rpt, vec))
                         : f32in ? (multi ? pick_in<true, true>(kv, rpt, vec) : pick_in<true, false>(kv, rpt, vec))
                                 : (multi ? pick_in<false, true>(kv, rpt, vec) : pick_in<false, false>(kv, rpt, vec));
    const int index = ((kv == 1 ? 0 : kv == 2 ? 1 : kv == 4 ? 2 : 3) * 2 + (rpt - 1)) * 4 + (vec ? 2 : 0) + f32in;
    /* persistent: at most the blocks that are resident at once; each warp (block) loops over its items */
    const int64_t blocks = chunked ? p.items : (p.items + NWARPS - 1) / NWARPS;
    const int64_t resident =
        (int64_t)num_sms * blocks_per_sm(fn, index * (MAX_CHUNK + 2) + (chunked ? MAX_CHUNK + 1 : p.chunk), smem);
    cfg.gridDim = dim3((unsigned)(blocks < resident ? blocks : resident), 1, 1);
    cfg.dynamicSmemBytes = smem;
    return cudaLaunchKernelEx(&cfg, fn, p);
}
