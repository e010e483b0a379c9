/*
 * fast_pairs.cuh — the multi-token fast path for wide heads ("fast_pairs_kernel"): verify windows and
 * short prefills (2 <= T <= FAST_TMAX) without capture, Dk = Dv = D in {128, 256}, on the calls fast.cuh
 * takes (fast_ok) from 2 (sequence, head) pairs per SM on; included by recurrent.cu after fast.cuh.
 *
 * Why a second kernel: fast_kernel gives each thread 8 elements of one state row, so per token it
 * repeats the shared-memory loads of k_t and q_t, a 4-round shuffle reduction and the scalar work for
 * few elements (ncu, B=64 T=4: 70 M warp instructions, 65% of issue slots, L1/shared 74% busy: bound
 * by issue and shared-memory traffic, not HBM). Here each thread holds 16 columns of TWO rows (32
 * elements): the k_t, q_t slices it loads serve both rows (half the shared traffic per element), the
 * reduction has log2(D / 16) rounds, and the decay is applied lazily (below), so the update is one FMA
 * per element (ncu: 34 M instructions in the first form, 42 M in this one with its item bookkeeping, on a
 * persistent grid at J = 2).
 *
 * Decomposition: items (sequence n, value head h, J consecutive tiles of TR rows), item it = (n * Hv + h)
 * * (TILES / J) + tile group; 128-thread CTAs, each walking the items pairs_map.h gives it (pairs_cta_walk, tested
 * on the host by tests/test_cuda_map.c): one item per CTA up to T = 5, the CTAs resident at once walking items b +
 * k G at T = 6, and from T = 7 at large batch (RANGE: D = 128, J = TILES) contiguous ranges of the call's tiles,
 * each head's tiles in a range one item of 1 to TILES tiles, so that every CTA streams until the others end too
 * (the launcher's rule, launch_fast_pairs; H200 verify T=8 B=256 370.3-370.6 us one item per CTA, 362.6-362.8
 * persistent, 356.2-356.4 in ranges; at T=4 ranges are the slowest: docs/PERF.md, session 47). With one item per
 * CTA, the last P.fast_tail (sequence, head) pairs take items of J / 2 tiles, two CTAs a head at the grid's end, so
 * the last wave's CTAs live half as long and the grid drains sooner, and the first P.fast_front pairs likewise at
 * its start, so the first wave's slots turn over at different times (docs/PERF.md sessions 45-46). FL = D / 16
 * lanes share a row pair; lane l of a pair holds the float4s i * FL + l (i < 4) of both rows; a warp holds WR = 64 /
 * FL consecutive rows, the CTA TR = 4 WR rows per tile (D = 128: FL 8, WR 8, TR 32, 4 tiles per head; D = 256: FL 16,
 * WR 4, TR 16, 16 tiles).
 *
 * Memory: each thread loads its two rows' slices straight into registers (16-byte loads): tile 0's at the
 * item's start, before the input staging, and tile j + 1's while tile j's tokens run, so the HBM stream
 * overlaps the arithmetic without a trip through shared memory (H200, verify T=4 B=64 77.7 -> 74.5 us, T=8
 * 128.7 -> 94.3 us against session 22's form, which fetched each warp's 4 KiB tile by a bulk copy into one
 * of two shared-memory buffers and read it back: 128 registers and 4 CTAs per SM here, 96 and 5 there); the
 * rows are updated over the T tokens and stored from registers (16-byte stores). A negative read slot
 * loads nothing (zeros), a negative write slot stores nothing. The item's inputs (q and k rows, the
 * tiles' v values) come by bulk copies, one item ahead, into two input buffers; its gates by plain
 * loads, one item ahead. Before griddepcontrol.wait each warp prefetches its first tile's rows into L2
 * (evict-last where the call's state outgrows L2: params.cuh, l2_keep).
 *
 * Per item: one barrier (the last item is done), fast_stage_qk from the input buffer (q, k as f32, or as
 * loaded for 16-bit inputs and widened in the token loop: H200 verify T=4 B=64 78.7 -> 77.4 us, session 22; the
 * norms, k.q), v as f32, and warp 2's lanes t < T the gate part of the coefficients with the running
 * scale of the lazy decay: the state is A_t = p_t B_t with the product p_t of the decays kept out of B,
 * so per token and row
 *     sk = p_{t-1} ksc (B.k)      sq = p_{t-1} qsc (B.q)
 *     delta = beta (v - decay sk)       y = decay sq + delta (qsc ksc k.q)
 *     B += (delta ksc / p_t) k          (one FMA per element)
 * and the rows are scaled by p_T once before the store. Whenever p_t would leave [2^-30, 2^30] (fast
 * decay, a zero or negative decay, NaN), that token applies p_{t-1} decay_t to B directly (B = m B + e k,
 * as fast_kernel) and p_t restarts at 1: relative gate exponents, no overflow, NaN propagates as in the
 * oracle. A second barrier, then the tiles; each row pair's lane t (t < T) keeps token t's two outputs
 * and stores them after the tokens.
 *
 * Assumptions (fast_ok and the launcher): as fast_kernel, plus T >= 2, no capture, D in {128, 256},
 * v 16-byte aligned.
 */
#ifndef GDN_CUDA_FAST_PAIRS_CUH
#define GDN_CUDA_FAST_PAIRS_CUH

#include "cuda/pairs_map.h"

#define PAIRS_BAR_BYTES 128 /* the 2 input mbarriers, padded to keep the inputs 128-byte aligned */

/* Bytes of one item's raw inputs (q and k rows, the tiles' v values of T tokens; esz-byte elements). */
__host__ __device__ constexpr int pairs_in_bytes(int D, int T, int J, int esz)
{
    return (2 * T * D + T * J * (4096 / D)) * esz;
}

/* The dynamic shared memory of a call (bytes): mbarriers, two items' raw inputs, then
   q, k (f32), coefficients (raw and lazily scaled), v (f32) of the current item, its gates. */
__host__ __device__ constexpr int pairs_smem_bytes(int D, int T, int J, int esz)
{
    return PAIRS_BAR_BYTES + 2 * pairs_in_bytes(D, T, J, esz) + 2 * T * D * 4 + 2 * 8 * T * 4 +
           T * J * (4096 / D) * 4 + 2 * 8 * 4;
}

__device__ __forceinline__ unsigned smem_u32(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* One lane's part of a multi-piece fetch completing on `bar` (armed for all the pieces' bytes by
   pairs_arm): a bulk copy on sm_90, a plain copy by this lane elsewhere (ordered by the caller's
   barrier before any use). */
__device__ __forceinline__ void pairs_piece(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
#else
    (void)bar;
    for (unsigned i = 0; i < bytes / 16; i++)
        ((float4 *)dst)[i] = ((const float4 *)src)[i];
#endif
}

__device__ __forceinline__ void pairs_arm(unsigned long long *bar, unsigned bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
#else
    (void)bar;
    (void)bytes;
#endif
}

/* Wait for the phase of parity `parity` of `bar` to complete. */
__device__ __forceinline__ void pairs_wait(unsigned long long *bar, unsigned parity)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n\t.reg .pred done;\n"
                 "PAIRS_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
                 "@!done bra PAIRS_WAIT;\n}" ::"r"(smem_u32(bar)),
                 "r"(parity)
                 : "memory");
#else
    (void)bar;
    (void)parity;
#endif
}

__device__ __forceinline__ void pairs_bar_init(unsigned long long *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bar)) : "memory");
#else
    (void)bar;
#endif
}

__device__ __forceinline__ void pairs_bar_fence()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/* g_t and beta_t staged in shared memory (as f32). */
struct pairs_gates_smem {
    const float *g, *b;
    __device__ pairs_gates_smem(const float *gg, const float *bb) : g(gg), b(bb) {}
    __device__ void operator()(int t, float *gg, float *bb) const
    {
        *gg = g[t];
        *bb = b[t];
    }
};

/* s = m s + e k (the decay applied now) or s += e k (lazily scaled). */
__device__ __forceinline__ void pairs_update(float4 (&s)[4], const float4 (&kf)[4], float e, float m, bool apply)
{
    if (apply) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            s[i].x = fmaf(e, kf[i].x, m * s[i].x);
            s[i].y = fmaf(e, kf[i].y, m * s[i].y);
            s[i].z = fmaf(e, kf[i].z, m * s[i].z);
            s[i].w = fmaf(e, kf[i].w, m * s[i].w);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            s[i].x = fmaf(e, kf[i].x, s[i].x);
            s[i].y = fmaf(e, kf[i].y, s[i].y);
            s[i].z = fmaf(e, kf[i].z, s[i].z);
            s[i].w = fmaf(e, kf[i].w, s[i].w);
        }
    }
}

template <int D, int IN, int CV, bool RANGE = false>
__global__ void __launch_bounds__(FAST_THREADS, 4) fast_pairs_kernel(const __grid_constant__ gdn_cuda_params P)
{
    const call_consts C = fast_cv_consts<CV, IN>(P); /* the call's conventions (CV: compiled in, fast.cuh) */
    constexpr int FL = D / 16, WR = 64 / FL, TR = 4 * WR, TILES = D / TR, WB = WR * D; /* WB: a warp's tile floats */
    constexpr int ESZ = IN == 0 ? 4 : 2;
    static_assert((D == 128 || D == 256) && WB == 1024, "fast_pairs_kernel: D is 128 or 256");
    extern __shared__ __align__(128) unsigned char pairs_smem[];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lr = lane % FL, grp = lane / FL;
    const int T = (int)P.T, Hv = P.Hv;
    /* this CTA's items (pairs_map.h, pairs_cta_walk); a front and tail are mapped at D = 128 only (at D = 256 the
       mapping cost spills, and nothing was measured there) */
    static_assert(!RANGE || D == 128, "fast_pairs_kernel: the range grid is compiled for D = 128");
    const pairs_walk W = pairs_cta_walk(blockIdx.x, gridDim.x, (int64_t)P.N * Hv, TILES, P.fast_jlog, P.fast_front,
                                        P.fast_tail, RANGE, D == 128);
    const int jl = W.jl, per = W.per;
    const int64_t it0 = W.first, step = W.step, items = W.end;
    const int J = RANGE ? TILES : 1 << jl, JTR = J * TR;
    const int inb = pairs_in_bytes(D, T, J, ESZ);
    /* item it (a tile index in range mode): its sequence, head, first tile and tiles */
    auto item_of = [&](int64_t it, int *n, int *h, int *t0, int *nt) {
        if (RANGE) {
            unsigned hp;
            pairs_range_item_at(it, items, TILES, &hp, t0, nt);
            *n = (int)(hp / (unsigned)Hv);
            *h = (int)(hp - (unsigned)*n * (unsigned)Hv);
        } else {
            int64_t hp;
            pairs_item_at(it, per, jl, &hp, t0);
            *n = (int)(hp / Hv);
            *h = (int)(hp - (int64_t)*n * Hv);
            *nt = J;
        }
    };
    unsigned long long *ibar = (unsigned long long *)pairs_smem;
    unsigned char *in0 = pairs_smem + PAIRS_BAR_BYTES;
    float *qsm = (float *)(in0 + 2 * inb), *ksm = qsm + T * D;
    float *raw = ksm + T * D, *gc = raw + 8 * T, *vsm = gc + 8 * T, *gsm = vsm + T * JTR, *bsm = gsm + 8;

    /* The state rows of item (n, h, tile0) this warp reads and writes (tile 0; tile j adds j * TR * D floats):
       NULL for a negative slot. */
    auto item_rows = [&](int n, int h, int tile0, float **rp, float **wp) {
        fast_tiles(P, n, h, tile0 * (TR * D) + warp * WR * D, rp, wp);
    };
    /* warp 0: item it's q, k rows and the tiles' v values into `dst`, completing on `bar` */
    auto fetch_inputs = [&](int64_t it, unsigned char *dst, unsigned long long *bar) {
        int n, h, t0, nt;
        item_of(it, &n, &h, &t0, &nt);
        const int hk = P.grouped ? (int)fdiv((unsigned)h, P.fd_ratio) : h - (int)fdiv((unsigned)h, P.fd_hk) * P.Hk;
        const size_t tok0 = (size_t)n * (unsigned)T;
        if (lane == 0)
            pairs_arm(bar, (unsigned)(inb - T * (J - nt) * TR * ESZ));
        __syncwarp();
        const int t = lane % T, w = lane / T; /* lane: piece w (q, k, v) of token t */
        if (w == 0)
            pairs_piece(dst + t * D * ESZ, (const unsigned char *)P.q + ((tok0 + t) * P.Hk + hk) * D * ESZ, D * ESZ, bar);
        else if (w == 1)
            pairs_piece(dst + (T + t) * D * ESZ, (const unsigned char *)P.k + ((tok0 + t) * P.Hk + hk) * D * ESZ,
                        D * ESZ, bar);
        else if (w == 2)
            pairs_piece(dst + 2 * T * D * ESZ + t * JTR * ESZ,
                        (const unsigned char *)P.v + (((tok0 + t) * Hv + h) * D + t0 * TR) * ESZ, nt * TR * ESZ, bar);
    };
    /* thread t < T: item it's g_t and beta_t (f32) */
    auto load_gates = [&](int64_t it, float *g, float *b) {
        int n, h, t0, nt;
        item_of(it, &n, &h, &t0, &nt);
        fast_gates_global(P, (size_t)n * (unsigned)T, h, C.gdt)(tid, g, b);
    };

    /* the read and write rows of the current item (none past the items) */
    float *rd0 = NULL, *wr0 = NULL;
    if (it0 < items) {
        int n, h, t0, nt;
        item_of(it0, &n, &h, &t0, &nt);
        item_rows(n, h, t0, &rd0, &wr0);
    }
    if (P.early_trigger)
        grid_dependency_trigger();
    if (lane == 0 && rd0) /* this warp's rows of its first tile into L2 while earlier work finishes */
        prefetch_l2(rd0, WB * 4, P.l2_keep);
    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error)) /* the check found an error: write nothing */
        return;

    if (tid < 2)
        pairs_bar_init(&ibar[tid]);
    pairs_bar_fence();
    __syncthreads();
    if (warp == 0)
        fetch_inputs(it0, in0, &ibar[0]);
    if (tid < T)
        load_gates(it0, &gsm[tid], &bsm[tid]);

    float gn = 0.f, bn = 0.f; /* threads t < T: the next item's gates */
    int64_t it = it0;
    for (int k = 0;; k++) {
        if (it >= items)
            break;
        int n, h, tile0, nt = J;
        if (RANGE) /* the next item follows this one's tiles */
            item_of(it, &n, &h, &tile0, &nt);
        __syncthreads(); /* the last item is done with q, k, v, the coefficients and the other input buffer;
                            this item's gates are in gsm / bsm */
        const int64_t itn = it + (RANGE ? nt : step);
        if (itn < items) { /* the next item's inputs, while this one runs */
            if (warp == 0)
                fetch_inputs(itn, in0 + ((k + 1) & 1) * inb, &ibar[(k + 1) & 1]);
            if (tid < T)
                load_gates(itn, &gn, &bn);
        }
        if (!RANGE)
            item_of(it, &n, &h, &tile0, &nt);
        item_rows(n, h, tile0, &rd0, &wr0);
        float4 sn0[4], sn1[4]; /* the next tile's two rows (zeros for a negative read slot): tile 0's loaded
                                  now, before the item's staging, tile j + 1's while tile j's tokens run */
        fast_load_rows<4, FL>(rd0, 2 * grp * D, lr, sn0);
        fast_load_rows<4, FL>(rd0, (2 * grp + 1) * D, lr, sn1);
        /* this thread's first output element of token 0 in tile 0; token t adds t * Hv * D, tile j j * TR */
        const size_t ob = ((size_t)n * (unsigned)T * Hv + h) * D + tile0 * TR + warp * WR + 2 * grp;
        if (warp == 2 && lane < T) {
            /* the gate part of token t = lane's coefficients, lazily scaled: the state's rows carry the
               running scale p (p_b before the token, p_n after); gc[t] = { -beta decay p_b, decay p_b,
               1 / p_n, beta }, { m, apply, p_T, 0 } */
            float be = bsm[lane];
            const float dec = gate_decay(P, h, gsm[lane], &be);
            float p = 1.0f, pb = 1.0f, pn = 1.0f, m = 1.0f, ap = 0.0f;
            for (int t = 0; t < T; t++) {
                const float dt = __shfl_sync((1u << T) - 1u, dec, t);
                const float pd = p * dt;                              /* p_{t-1} decay_t */
                const bool apply = !(pd >= 0x1p-30f && pd <= 0x1p30f); /* out of range, zero, negative, NaN */
                const float q = apply ? 1.0f : pd;
                if (t == lane) {
                    pb = p;
                    pn = q;
                    m = apply ? pd : 1.0f;
                    ap = apply ? 1.0f : 0.0f;
                }
                p = q;
            }
            *(float4 *)(gc + 8 * lane) = make_float4(-(be * dec) * pb, dec * pb, 1.0f / pn, be);
            *(float4 *)(gc + 8 * lane + 4) = make_float4(m, ap, p, 0.f);
        }
        const unsigned char *in = in0 + (k & 1) * inb;
        pairs_wait(&ibar[k & 1], (unsigned)(k >> 1) & 1u);
        fast_stage_qk<D, IN, IN != 0>(C, T, in, in + T * D * ESZ, (size_t)D, h, qsm, ksm, raw,
                             pairs_gates_smem(gsm, bsm));
        const int vi = (FAST_THREADS - 1 - tid) * 8; /* the last threads: the first ones stage q and k */
        if (vi < T * JTR) {
            float vv[8];
            ld8<IN>(in + 2 * T * D * ESZ, (size_t)vi, vv);
            *(float4 *)(vsm + vi) = make_float4(vv[0], vv[1], vv[2], vv[3]);
            *(float4 *)(vsm + vi + 4) = make_float4(vv[4], vv[5], vv[6], vv[7]);
        }
        __syncthreads();

        const float pfin = gc[8 * (T - 1) + 6];
        const int r0 = warp * WR + 2 * grp; /* this thread's first row within a tile (the second: r0 + 1) */
        for (int j = 0; j < nt; j++) {
            float4 s0[4], s1[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                s0[i] = sn0[i];
                s1[i] = sn1[i];
            }
            if (j + 1 < nt) {
                fast_load_rows<4, FL>(rd0, ((j + 1) * TR + 2 * grp) * D, lr, sn0);
                fast_load_rows<4, FL>(rd0, ((j + 1) * TR + 2 * grp + 1) * D, lr, sn1);
            }
            float y0m = 0.f, y1m = 0.f; /* token lr's outputs of the two rows */
            const int vr = j * TR + r0;
            for (int t = 0; t < T; t++) {
                const float4 a = *(const float4 *)(raw + 8 * t), a1 = *(const float4 *)(raw + 8 * t + 4);
                const float4 c0 = *(const float4 *)(gc + 8 * t), c1 = *(const float4 *)(gc + 8 * t + 4);
                const float csk = c0.x * a.w, csq = c0.y * a1.z, cdk = c0.z * a.w; /* ksc = a.w, qsc = a1.z */
                float4 kf[4], qf[4]; /* staged as loaded for 16-bit inputs (fast_stage_qk RAW) */
                fast_load_kq<D, 4, FL, IN>(ksm, qsm, t, lr, kf, qf);
                const float2 v2 = *(const float2 *)(vsm + t * JTR + vr);
                float sk0 = dot_row<4>(s0, kf), sq0 = dot_row<4>(s0, qf);
                float sk1 = dot_row<4>(s1, kf), sq1 = dot_row<4>(s1, qf);
#pragma unroll
                for (int o = FL / 2; o > 0; o >>= 1) {
                    sk0 += __shfl_xor_sync(0xffffffffu, sk0, o);
                    sq0 += __shfl_xor_sync(0xffffffffu, sq0, o);
                    sk1 += __shfl_xor_sync(0xffffffffu, sk1, o);
                    sq1 += __shfl_xor_sync(0xffffffffu, sq1, o);
                }
                const float d0 = fmaf(csk, sk0, c0.w * v2.x), d1 = fmaf(csk, sk1, c0.w * v2.y);
                const float y0 = fmaf(csq, sq0, d0 * a.z), y1 = fmaf(csq, sq1, d1 * a.z);
                if (lr == t) {
                    y0m = y0;
                    y1m = y1;
                }
                const bool apply = c1.y != 0.0f;
                pairs_update(s0, kf, d0 * cdk, c1.x, apply);
                pairs_update(s1, kf, d1 * cdk, c1.x, apply);
            }
            if (pfin != 1.0f) {
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    s0[i].x *= pfin, s0[i].y *= pfin, s0[i].z *= pfin, s0[i].w *= pfin;
                    s1[i].x *= pfin, s1[i].y *= pfin, s1[i].z *= pfin, s1[i].w *= pfin;
                }
            }
            if (wr0) {
                float4 *dst = (float4 *)(wr0 + (size_t)(j * TR + 2 * grp) * D);
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    dst[i * FL + lr] = s0[i];
                    dst[D / 4 + i * FL + lr] = s1[i];
                }
            }
            if (P.out && lr < T) {
                const size_t o = ob + (size_t)lr * Hv * D + j * TR;
                st_elem(P.out, C.odt, (int64_t)o, y0m);
                st_elem(P.out, C.odt, (int64_t)o + 1, y1m);
            }
        }
        if (tid < T && itn < items) { /* the next item's gates (read after the next barrier) */
            gsm[tid] = gn;
            bsm[tid] = bn;
        }
        it = itn;
    }
}

#endif
