/*
 * fast_pairs.cuh — the multi-token fast path for wide heads ("fast_pairs_kernel"): verify windows and
 * short prefills (2 <= T <= FAST_TMAX) without capture, Dk = Dv = D in {128, 256}, on the same calls
 * as fast.cuh's fast_kernel (fast_ok), included by recurrent.cu after fast.cuh.
 *
 * Why a second kernel: fast_kernel gives each thread 8 elements of one state row, so per token it
 * repeats the shared-memory loads of k_t and q_t, a 4-round shuffle reduction and the scalar work for
 * few elements (ncu, B=64 T=4: 70 M warp instructions, 65% issue, L1/shared 74% busy: bound by issue
 * and shared-memory traffic, not HBM). Here each thread holds 16 columns of TWO rows (32 elements):
 * the k_t, q_t slices it loads serve both rows (half the shared traffic per element), the reduction
 * has log2(D / 16) rounds, and the decay is applied lazily (below), so the update is one FMA per
 * element.
 *
 * Decomposition: one 128-thread CTA per (sequence n, value head h, J consecutive tiles of TR rows),
 * grid (Hv * TILES / J, N) as fast_kernel. FL = D / 16 lanes share a row pair; lane l of a pair holds
 * the float4s i * FL + l (i < 4) of both rows; a warp holds WR = 64 / FL consecutive rows (a pair per
 * FL lanes), the CTA TR = 4 WR rows per tile (D = 128: FL 8, WR 8, TR 32, 4 tiles per head; D = 256:
 * FL 16, WR 4, TR 16, 16 tiles).
 *
 * State traffic: each warp's WR rows of a tile are contiguous (WR * D * 4 = 4 KiB); the warp fetches
 * them with one bulk copy (cp.async.bulk, completing on the warp's mbarrier) into one of its NB
 * shared-memory buffers, NB tiles ahead, so the HBM stream never waits for the arithmetic and holds no
 * registers; before griddepcontrol.wait each warp prefetches its rows of the tiles past the first NB
 * into L2 (not the first ones: measured, the bulk prefetches ahead of them delay their copies).
 * Rows go from the buffer to registers, are updated over the T tokens, and are stored from registers
 * (16-byte stores, a row pair's FL lanes writing 2 * 256 contiguous bytes).
 *
 * Tokens: staged once per CTA (fast_stage_qk: q, k as f32, the norms, k.q and the gates), then threads
 * t < T turn each token's coefficients into the lazily scaled form: the state is A_t = p_t B_t with
 * the running product p_t of the decays kept out of B, so per token and row
 *     sk = p_{t-1} ksc (B.k)      sq = p_{t-1} qsc (B.q)
 *     delta = beta (v - decay sk)       y = decay sq + delta (qsc ksc k.q)
 *     B += (delta ksc / p_t) k          (one FMA per element)
 * and the rows are scaled by p_T once before the store. Whenever p_t would leave [2^-30, 2^30]
 * (fast decay, a zero or negative decay, NaN), that token applies its decay p_{t-1} decay_t to B
 * directly (B = m B + e k, as fast_kernel) and p_t restarts at 1: relative gate exponents, no
 * overflow, NaN propagates as in the oracle. Each row pair's lane t (t < T) keeps token t's two outputs
 * and stores them after the tokens.
 *
 * Assumptions (fast_ok and the launcher): as fast_kernel, plus T >= 2, no capture, D in {128, 256}.
 */
#ifndef GDN_CUDA_FAST_PAIRS_CUH
#define GDN_CUDA_FAST_PAIRS_CUH

#define PAIRS_NB 2 /* shared-memory state buffers per warp */
#define PAIRS_BUF_BYTES (4 * PAIRS_NB * 4096) /* 4 warps * NB buffers * WR * D * 4 bytes (WR * D = 1024) */

/* The dynamic shared memory of a call (bytes): buffers, mbarriers, q, k, coefficients (raw and
   lazily scaled), v of the CTA's J * TR rows per token. */
__host__ __device__ constexpr int pairs_smem_bytes(int D, int T, int J)
{
    return PAIRS_BUF_BYTES + 4 * PAIRS_NB * 8 + 2 * T * D * 4 + 2 * 8 * T * 4 + T * J * (4096 / D) * 4;
}

__device__ __forceinline__ unsigned smem_u32(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* Warp-collective (every lane calls): fetch `bytes` (a multiple of 16) from global `src` into shared
   `dst`. sm_90: lane 0 arms the mbarrier and issues one bulk copy that completes on it (wait with
   pairs_wait); older targets: the warp copies and syncs (pairs_wait returns at once). */
__device__ __forceinline__ void pairs_fetch(float *dst, const float *src, unsigned bytes, unsigned long long *bar,
                                            int lane)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (lane == 0) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); /* the warp's reads of dst come first */
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         smem_u32(dst)),
                     "l"(src), "r"(bytes), "r"(smem_u32(bar))
                     : "memory");
    }
#else
    (void)bar;
    for (unsigned i = (unsigned)lane; i < bytes / 16; i += 32)
        ((float4 *)dst)[i] = ((const float4 *)src)[i];
    __syncwarp();
#endif
}

/* Wait for the fetch into a buffer whose use count has parity `parity`. */
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
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
    (void)bar;
#endif
}

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

template <int D, int IN>
__global__ void __launch_bounds__(FAST_THREADS, 4) fast_pairs_kernel(const __grid_constant__ gdn_cuda_params P)
{
    constexpr int FL = D / 16, WR = 64 / FL, TR = 4 * WR, TILES = D / TR, WB = WR * D; /* WB: floats per buffer */
    static_assert((D == 128 || D == 256) && WB == 1024, "fast_pairs_kernel: D is 128 or 256");
    extern __shared__ __align__(128) unsigned char pairs_smem[];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lr = lane % FL, grp = lane / FL;
    const int T = (int)P.T, Hv = P.Hv;
    const int jl = P.fast_jlog, J = 1 << jl, cl = ilog2c(TILES) - jl; /* 2^cl CTAs per head */
    const int tile0 = (int)(blockIdx.x & ((1u << cl) - 1)) << jl, h = (int)(blockIdx.x >> cl), n = (int)blockIdx.y;
    float *buf = (float *)pairs_smem + warp * (PAIRS_NB * WB);
    unsigned long long *bar = (unsigned long long *)(pairs_smem + PAIRS_BUF_BYTES) + warp * PAIRS_NB;
    float *qsm = (float *)(pairs_smem + PAIRS_BUF_BYTES + 4 * PAIRS_NB * 8), *ksm = qsm + T * D;
    float *raw = ksm + T * D, *cf = raw + 8 * T, *vsm = cf + 8 * T;
    float *tp, *wp; /* the CTA's J tiles read and written (NULL: zeros / none) */
    fast_tiles(P, n, h, tile0 * (TR * D), &tp, &wp);

    if (P.early_trigger)
        grid_dependency_trigger();
    if (lane == 0 && tp && J > PAIRS_NB) /* the tiles past the first bulk copies into L2 (this warp's rows) */
        for (int j = PAIRS_NB; j < J; j++)
            prefetch_l2(tp + (j * TR + warp * WR) * D, WB * 4);
    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error)) /* the check found an error: write nothing */
        return;

    /* this warp's rows of tile j start at row j * TR + warp * WR of the CTA's range */
    if (lane == 0)
        for (int b = 0; b < PAIRS_NB; b++)
            pairs_bar_init(&bar[b]);
    __syncwarp();
    if (tp)
        for (int b = 0; b < PAIRS_NB && b < J; b++)
            pairs_fetch(buf + b * WB, tp + (b * TR + warp * WR) * D, WB * 4, &bar[b], lane);

    const int hk = P.grouped ? (int)fdiv((unsigned)h, P.fd_ratio) : h - (int)fdiv((unsigned)h, P.fd_hk) * P.Hk;
    const size_t tok0 = (size_t)n * (unsigned)T;
    /* the J tiles' v values, [T][J * TR]: 8 per thread (16-byte loads), loaded before q and k are staged
       and stored after, so that every input load is in flight at once (the last threads: the first ones
       stage q and k; T * J * TR / 8 <= 8 * 128 / 8 = FAST_THREADS) */
    const int vl = ilog2c(TR) + jl, vi = (FAST_THREADS - 1 - tid) * 8;
    float vv[8];
    if (vi < T << vl) {
        const int t = vi >> vl, r = vi - (t << vl);
        ld8<IN>(P.v, ((tok0 + t) * Hv + h) * D + tile0 * TR + r, vv);
    }
    fast_stage_qk<D, IN>(P, T, tok0, hk, h, qsm, ksm, raw);
    if (vi < T << vl) {
        *(float4 *)(vsm + vi) = make_float4(vv[0], vv[1], vv[2], vv[3]);
        *(float4 *)(vsm + vi + 4) = make_float4(vv[4], vv[5], vv[6], vv[7]);
    }
    __syncthreads();
    if (tid < T) { /* token tid's lazily scaled coefficients: the running scale p of the state's rows */
        float p = 1.0f;
        for (int t = 0;; t++) {
            const float4 r0 = *(const float4 *)(raw + 8 * t), r1 = *(const float4 *)(raw + 8 * t + 4);
            const float pd = p * r1.x;                      /* p_{t-1} decay_t */
            const bool apply = !(pd >= 0x1p-30f && pd <= 0x1p30f); /* out of range, zero, negative, NaN */
            const float pn = apply ? 1.0f : pd;
            if (t == tid) {
                *(float4 *)(cf + 8 * t) = make_float4(r0.x * p, r0.y * p, r0.z, r0.w / pn);
                *(float4 *)(cf + 8 * t + 4) = make_float4(apply ? pd : 1.0f, r1.y, apply ? 1.0f : 0.0f, 0.f);
            }
            p = pn;
            if (t == T - 1) {
                if (t == tid)
                    cf[8 * t + 7] = p; /* the rows' final scale */
                break;
            }
        }
    }
    __syncthreads();

    const float pfin = cf[8 * (T - 1) + 7];
    const int r0 = warp * WR + 2 * grp; /* this thread's first row within a tile (the second: r0 + 1) */
    for (int j = 0; j < J; j++) {
        float4 s0[4], s1[4];
        if (tp) {
            const int b = j & (PAIRS_NB - 1);
            pairs_wait(&bar[b], (unsigned)(j / PAIRS_NB) & 1u);
            const float4 *src = (const float4 *)(buf + b * WB) + 2 * grp * (D / 4);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                s0[i] = src[i * FL + lr];
                s1[i] = src[D / 4 + i * FL + lr];
            }
            __syncwarp();
            if (j + PAIRS_NB < J)
                pairs_fetch(buf + b * WB, tp + ((j + PAIRS_NB) * TR + warp * WR) * D, WB * 4, &bar[b], lane);
        } else {
#pragma unroll
            for (int i = 0; i < 4; i++)
                s0[i] = s1[i] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
        float y0m = 0.f, y1m = 0.f; /* token lr's outputs of the two rows */
        const int vr = j * TR + r0;
        for (int t = 0; t < T; t++) {
            const float4 c0 = *(const float4 *)(cf + 8 * t), c1 = *(const float4 *)(cf + 8 * t + 4);
            const float4 *kr = (const float4 *)(ksm + t * D), *qr = (const float4 *)(qsm + t * D);
            float4 kf[4], qf[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                kf[i] = kr[i * FL + lr];
                qf[i] = qr[i * FL + lr];
            }
            const float2 v2 = *(const float2 *)(vsm + (t << vl) + vr);
            float sk0 = dot_row<4>(s0, kf), sq0 = dot_row<4>(s0, qf);
            float sk1 = dot_row<4>(s1, kf), sq1 = dot_row<4>(s1, qf);
#pragma unroll
            for (int o = FL / 2; o > 0; o >>= 1) {
                sk0 += __shfl_xor_sync(0xffffffffu, sk0, o);
                sq0 += __shfl_xor_sync(0xffffffffu, sq0, o);
                sk1 += __shfl_xor_sync(0xffffffffu, sk1, o);
                sq1 += __shfl_xor_sync(0xffffffffu, sq1, o);
            }
            const float d0 = fmaf(c0.x, sk0, c1.y * v2.x), d1 = fmaf(c0.x, sk1, c1.y * v2.y);
            const float y0 = fmaf(c0.y, sq0, d0 * c0.z), y1 = fmaf(c0.y, sq1, d1 * c0.z);
            if (lr == t) {
                y0m = y0;
                y1m = y1;
            }
            const bool apply = c1.z != 0.0f;
            pairs_update(s0, kf, d0 * c0.w, c1.x, apply);
            pairs_update(s1, kf, d1 * c0.w, c1.x, apply);
        }
        if (pfin != 1.0f) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                s0[i].x *= pfin, s0[i].y *= pfin, s0[i].z *= pfin, s0[i].w *= pfin;
                s1[i].x *= pfin, s1[i].y *= pfin, s1[i].z *= pfin, s1[i].w *= pfin;
            }
        }
        if (wp) {
            float4 *dst = (float4 *)(wp + (size_t)(j * TR + r0) * D);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                dst[i * FL + lr] = s0[i];
                dst[D / 4 + i * FL + lr] = s1[i];
            }
        }
        if (P.out && lr < T) {
            const size_t o = ((tok0 + lr) * Hv + h) * D + tile0 * TR + vr;
            st_elem(P.out, P.out_dtype, (int64_t)o, y0m);
            st_elem(P.out, P.out_dtype, (int64_t)o + 1, y1m);
        }
    }
}

#endif
