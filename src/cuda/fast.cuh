/*
 * fast.cuh — the lean small-batch path of recurrent.cu ("fast_kernel"), included there after its
 * helpers. Chosen by gdn_cuda_launch_recurrent when the call qualifies (fast_ok below):
 *   dense batch (no cu_seqlens), default slots (sequence n reads and writes pool slot n in place) or
 *   read/write slot arrays (vLLM; their contents checked by the check kernel first: the kernel waits for
 *   it and writes nothing after an error; or, for one sequence (P.self_check), by the kernel itself after
 *   its wait, fast_self_check; a negative read slot reads zeros, a negative write slot
 *   writes nothing), no capture or a contiguous 16-byte aligned dense capture
 *   [B, T, Hv, D, D] (its stores streaming, __stcs; with it the
 *   state's own loads and stores stream too), a state pool, vk layout, Dk = Dv = D in
 *   {32, 64, 128, 256}, 1 <= T <= FAST_TMAX, no batch.num_tokens, contiguous q, k, v, g, beta and out
 *   (out may be absent),
 *   state rows contiguous (pool [slots, Hv, D, D] with unit column stride and row stride D), 16-byte
 *   aligned q, k and pool, f32 / bf16 / f16 inputs, any gate convention, head map and ratio.
 * Everything else takes the general kernels. Decode (T = 1) runs fast1_kernel (no staging, below), T > 1
 * fast_kernel.
 *
 * Decomposition: one 128-thread CTA per (sequence n, value head h, J consecutive tiles of ROWS rows):
 * grid (Hv * TILES / J, N), no division (TILES and J are powers of two). J = 1 while the grid is
 * small (latency); at large batch the launch picks J up to 2 (decode) or 4 (multi-token calls) while at
 * least 4 CTAs per SM remain (GDN_CUDA_FAST_J forces 1 .. 8), and the
 * CTA prefetches all its J tiles into L2 at its start, stages q, k and the gates once for all of them,
 * and loads tile j + 1's rows into registers while tile j's tokens run, so the HBM stream does not
 * stop for the arithmetic. FL lanes share a row; lane
 * l of a row holds the float4s i * FL + l (i < KV) of the row, KV = D / (4 FL), so the row's lanes
 * read FL * 16 contiguous bytes per instruction. Before griddepcontrol.wait each warp prefetches its
 * rows into L2 (evict-last where the call's state outgrows L2: params.cuh, l2_keep); after it every
 * thread issues all its state loads (16-byte vectors) at once, then the
 * CTA stages the tokens' inputs once: G = D / 8 lanes per token each load 8 elements of q_t and k_t
 * (16-byte vectors), store them into shared memory (16-bit inputs as loaded, f32 inputs and dense capture as
 * f32) and reduce |q|^2, |k|^2, k.q over the group
 * (xor shuffles); the group's first lane also loads g_t and beta_t and writes the token's
 * coefficients (decay, beta, the norms' scales, k.q scaled); other threads stage the tile's v values.
 * One __syncthreads; then per token each row's lanes take S.k and S.q (one merged log2(FL)-round
 * shuffle reduction), and the row update is
 *     delta = beta v - beta decay ksc (S.k)      y = decay qsc (S.q) + delta (qsc ksc k.q)
 *     S     = decay S + (delta ksc) k
 * with the state in registers across the T tokens (read once, written once). Lane t of a row keeps token t's
 * y and stores it after the tokens; without capture the token loop is compiled for each T (a switch on T: the
 * loop unrolls and every token's shared-memory loads issue at its start). Index math is 32-bit
 * relative to 64-bit per-CTA base pointers. Same arithmetic as token_step (f32), rounded differently
 * only in the order of the products.
 */
#ifndef GDN_CUDA_FAST_CUH
#define GDN_CUDA_FAST_CUH

#define FAST_THREADS 128
#define FAST_TMAX 8    /* tokens per sequence the fast path takes (verify windows) */
#define FAST_JLOG_MAX 3 /* a CTA walks at most 8 state tiles */

__host__ __device__ constexpr int ilog2c(int x)
{
    return x <= 1 ? 0 : 1 + ilog2c(x / 2);
}

/* Two packed 16-bit input elements (IN 1: bf16, 2: f16; the lower half first) as f32: exact. */
template <int IN>
__device__ __forceinline__ float2 widen2(unsigned w)
{
    if constexpr (IN == 1)
        return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
    else
        return make_float2(__half2float(__ushort_as_half((unsigned short)(w & 0xffffu))),
                           __half2float(__ushort_as_half((unsigned short)(w >> 16))));
}
/* Four packed 16-bit input elements (one 8-byte vector) as f32. */
template <int IN>
__device__ __forceinline__ float4 widen4(uint2 u)
{
    const float2 a = widen2<IN>(u.x), b = widen2<IN>(u.y);
    return make_float4(a.x, a.y, b.x, b.y);
}

/* 8 consecutive input elements (16-bit: one 16-byte load, its raw bits also in *raw when asked; f32: two) as
   f32. */
template <int IN>
__device__ __forceinline__ void ld8(const void *base, size_t off, float (&x)[8], uint4 *raw = nullptr)
{
    if constexpr (IN == 0) {
        const float4 a = *(const float4 *)((const float *)base + off);
        const float4 b = *(const float4 *)((const float *)base + off + 4);
        x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
    } else {
        const uint4 u = *(const uint4 *)((const unsigned short *)base + off);
        const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 f = widen2<IN>(w[i]);
            x[2 * i] = f.x;
            x[2 * i + 1] = f.y;
        }
        if (raw)
            *raw = u;
    }
}

template <int IN>
__device__ __forceinline__ float ld1(const void *base, size_t off)
{
    if constexpr (IN == 0)
        return ((const float *)base)[off];
    else if constexpr (IN == 1)
        return __uint_as_float((unsigned)((const unsigned short *)base)[off] << 16);
    else
        return __half2float(__ushort_as_half(((const unsigned short *)base)[off]));
}

/* Where this CTA reads and writes its tiles (offset `off` floats into head h's state): slot n by
   default, else the slot arrays' entries; NULL for a negative or out-of-range slot (read: zeros; write:
   none; out of range is also reported by the check kernel, which then keeps every write out). */
__device__ __forceinline__ void fast_tiles(const gdn_cuda_params &P, int n, int h, int off, float **rp, float **wp)
{
    const int64_t rs = P.read_slots ? (int64_t)P.read_slots[n] : n;
    const int64_t ws = P.write_slots ? (int64_t)P.write_slots[n] : rs;
    const int64_t base = (int64_t)h * P.ps[1] + off;
    *rp = rs >= 0 && rs < P.num_slots ? P.pool + rs * P.ps[0] + base : NULL;
    *wp = ws >= 0 && ws < P.num_slots ? P.pool + ws * P.ps[0] + base : NULL;
}

/* P.self_check (params.cuh: one sequence, no check kernel in front): called after the wait, so the slot arrays are
   read only once earlier work is complete. Sequence n's slots checked for range as the check kernel does (the read
   slot first); on an error the first CTA records it (words->first, unless an earlier one is unreported) and every
   CTA, having read the same slots, writes nothing: false. Else the tiles as fast_tiles gives them. */
__device__ __forceinline__ bool fast_self_check(const gdn_cuda_params &P, int n, int h, int off, float **rp, float **wp)
{
    const int64_t rs = P.read_slots ? (int64_t)P.read_slots[n] : n;
    const int64_t ws = P.write_slots ? (int64_t)P.write_slots[n] : rs;
    const bool rbad = rs >= P.num_slots, wbad = ws >= P.num_slots;
    if (rbad || wbad) {
        if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && P.words->first.code == GDN_CUDA_ERR_NONE) {
            gdn_cuda_error e;
            e.code = rbad ? GDN_CUDA_ERR_READ_RANGE : GDN_CUDA_ERR_WRITE_RANGE;
            e.sub = 0;
            e.index = n;
            e.value = rbad ? rs : ws;
            e.seq = n;
            e.other = P.num_slots;
            P.words->first = e;
        }
        return false;
    }
    fast_tiles(P, n, h, off, rp, wp);
    return true;
}

/* A row's slices (lane lr of FL holds float4s i * FL + lr), from `base + off` (zeros without a tile) or
   to it (nothing without one); `cs`: with the streaming hint (__ldcs / __stcs: evict first; dense capture,
   H200 B=64 T=4: 217.4 -> 211.5 us; decode and verify without capture 0.5 - 1% slower with it). */
template <int KV, int FL>
__device__ __forceinline__ void fast_load_rows(const float *base, int off, int lr, float4 (&s)[KV], bool cs = false)
{
    if (base) {
        const float4 *src = (const float4 *)(base + off);
#pragma unroll
        for (int i = 0; i < KV; i++)
            s[i] = cs ? __ldcs(&src[i * FL + lr]) : src[i * FL + lr];
    } else {
#pragma unroll
        for (int i = 0; i < KV; i++)
            s[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
}
template <int KV, int FL>
__device__ __forceinline__ void fast_store_rows(float *base, int off, int lr, const float4 (&s)[KV], bool cs = false)
{
    if (!base)
        return;
    float4 *dst = (float4 *)(base + off);
#pragma unroll
    for (int i = 0; i < KV; i++) {
        if (cs)
            __stcs(&dst[i * FL + lr], s[i]);
        else
            dst[i * FL + lr] = s[i];
    }
}

/* Element `off` of an input of dtype IN (0 f32, else 16-bit). */
__device__ __forceinline__ const void *fast_in(const void *base, int in, size_t off)
{
    return in == 0 ? (const void *)((const float *)base + off) : (const void *)((const unsigned short *)base + off);
}

/* g_t and beta_t of a sequence's tokens t, head h, from global memory (any gate dtype): g and b point at token
   0's elements, one token every `ts` elements. */
struct fast_gates_global {
    const void *g, *b;
    size_t ts;
    int gdt;
    __device__ fast_gates_global(const gdn_cuda_params &P, size_t tok0, int h, int gate_dtype)
        : ts((size_t)P.Hv), gdt(gate_dtype)
    {
        const size_t go = tok0 * P.Hv + h;
        const int esz = gate_dtype == GDN_DTYPE_F32 ? 4 : 2;
        g = (const char *)P.g + go * esz;
        b = (const char *)P.beta + go * esz;
    }
    __device__ void operator()(int t, float *gv, float *bv) const
    {
        if (gdt == GDN_DTYPE_F32) {
            *gv = ((const float *)g)[t * ts];
            *bv = ((const float *)b)[t * ts];
        } else {
            *gv = cvt16(((const unsigned short *)g)[t * ts], gdt);
            *bv = cvt16(((const unsigned short *)b)[t * ts], gdt);
        }
    }
    __device__ void pin_all(bool dtype = true)
    {
        pin(g), pin(b);
        if (dtype)
            pin(gdt);
    }
};

/* Stage the T tokens' q and k (as f32) into qsm / ksm [T][D] and their coefficients into coef [T][8] =
 * { -(beta decay ksc), decay qsc, k.q qsc ksc, ksc, decay, beta, qsc, 0 } (qsc, ksc: the norms' scales
 * with the attention scale in qsc): G = D / 8 lanes per token each load 8 elements of q_t and k_t
 * (16-byte vectors; token t's row at qb / kb + t * ts elements, global or shared memory), reduce
 * |q|^2, |k|^2, k.q over the group (xor shuffles); the group's first lane also takes g_t and beta_t
 * (gates(t, &g, &beta)). RAW (16-bit inputs): qsm / ksm get the elements as loaded, [T][D] 16-bit values, half
 * the bytes the token loop then reads (fast_tokens widens them). Called by every thread of the CTA
 * (FAST_THREADS); the caller syncs. */
template <int D, int IN, bool RAW = false, class Gates>
__device__ __forceinline__ void fast_stage_qk(const call_consts &C, int T, const void *qb, const void *kb, size_t ts,
                                              int h, float *qsm, float *ksm, float *coef, Gates gates)
{
    static_assert(!RAW || IN != 0, "fast_stage_qk: raw staging is for 16-bit inputs");
    constexpr int G = D / 8;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int base = warp * 32; base < T * G; base += FAST_THREADS) {
        const int u = base + lane, t = u / G, j = u % G;
        const bool ok = u < T * G;
        float qv[8], kv[8];
        uint4 qu = make_uint4(0u, 0u, 0u, 0u), ku = qu; /* RAW: the loaded bits */
        float graw = 0.f, braw = 0.f;
        if (ok) {
            const size_t off = t * ts + 8 * j;
            ld8<IN>(qb, off, qv, RAW ? &qu : nullptr);
            ld8<IN>(kb, off, kv, RAW ? &ku : nullptr);
            if (j == 0)
                gates(t, &graw, &braw);
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++)
                qv[e] = kv[e] = 0.f;
        }
        float qq = 0.f, kk = 0.f, kq = 0.f;
#pragma unroll
        for (int e = 0; e < 8; e++) {
            qq = fmaf(qv[e], qv[e], qq);
            kk = fmaf(kv[e], kv[e], kk);
            kq = fmaf(kv[e], qv[e], kq);
        }
#pragma unroll
        for (int o = G / 2; o > 0; o >>= 1) {
            qq += __shfl_xor_sync(0xffffffffu, qq, o);
            kk += __shfl_xor_sync(0xffffffffu, kk, o);
            kq += __shfl_xor_sync(0xffffffffu, kq, o);
        }
        if (ok) {
            if constexpr (RAW) { /* as loaded: [T][D] 16-bit elements */
                *(uint4 *)((unsigned short *)qsm + t * D + 8 * j) = qu;
                *(uint4 *)((unsigned short *)ksm + t * D + 8 * j) = ku;
            } else {
                float4 *qd = (float4 *)(qsm + t * D + 8 * j), *kd = (float4 *)(ksm + t * D + 8 * j);
                qd[0] = make_float4(qv[0], qv[1], qv[2], qv[3]);
                qd[1] = make_float4(qv[4], qv[5], qv[6], qv[7]);
                kd[0] = make_float4(kv[0], kv[1], kv[2], kv[3]);
                kd[1] = make_float4(kv[4], kv[5], kv[6], kv[7]);
            }
            if (j == 0) {
                const float qsc = C.scale * (C.l2n ? rsqrtf(qq + 1e-6f) : 1.0f);
                const float ksc = C.l2n ? rsqrtf(kk + 1e-6f) : 1.0f;
                float dec, be = braw;
                dec = gate_decay_c(C, h, graw, &be);
                *(float4 *)(coef + 8 * t) = make_float4(-(be * (dec * ksc)), dec * qsc, kq * (qsc * ksc), ksc);
                *(float4 *)(coef + 8 * t + 4) = make_float4(dec, be, qsc, 0.f);
            }
        }
    }
}

/* The conventions fast1_kernel, fast_kernel (multi-token, no capture) and fast_pairs_kernel are compiled for
 * (CV): FAST_CV_ANY reads them from the parameters; the others fix the gate convention (GDN_GATE_LOG: decay =
 * exp(g)), the q, k norms (on) and the output dtype (the input's), with the gates in f32 (FAST_CV_LOG_F32) or in
 * the input dtype (FAST_CV_LOG_IN): HF's, fla's and vLLM's decode and verify. Compiled in, the gate's switch, the
 * norms' select and the output store's dtype switch fold away; read at run time they sat between the wait and
 * the stores (H200, decode B=1: 2.22 -> 1.89 us in a lab that times fast1_kernel alone; PERF.md, session 20). */
enum { FAST_CV_ANY = 0, FAST_CV_LOG_F32 = 1, FAST_CV_LOG_IN = 2 };
template <int CV, int IN>
__device__ __forceinline__ call_consts fast_cv_consts(const gdn_cuda_params &P)
{
    if constexpr (CV == FAST_CV_ANY) {
        return call_consts_of(P);
    } else {
        constexpr int in = IN == 0 ? GDN_DTYPE_F32 : IN == 1 ? GDN_DTYPE_BF16 : GDN_DTYPE_F16;
        float scale = P.scale;
        pin(scale);
        return call_consts{GDN_GATE_LOG, CV == FAST_CV_LOG_F32 ? GDN_DTYPE_F32 : in, in, 1, scale, nullptr, nullptr};
    }
}
/* The convention a call qualifies for (host side): FAST_CV_ANY unless its gate, norms and dtypes are one of the
   compiled-in sets above. fast1_kernel, fast_kernel without capture at T > 1 and fast_pairs_kernel have the
   compiled-in forms. */
static inline int fast_cv_of(const gdn_cuda_params *p)
{
    if (p->gate != GDN_GATE_LOG || !p->l2norm || (p->out && p->out_dtype != p->dtype))
        return FAST_CV_ANY;
    return p->gate_dtype == GDN_DTYPE_F32 ? FAST_CV_LOG_F32 : p->gate_dtype == p->dtype ? FAST_CV_LOG_IN : FAST_CV_ANY;
}

/* Token t's k and q slices of lane lr (float4s i * FL + lr, i < KV) from the staged rows ksm / qsm [T][D]: IN 0
   as f32 (16-byte loads), 1 / 2 as bf16 / f16 (fast_stage_qk's RAW: 8-byte loads widened exactly). fast_tokens and
   fast_pairs_kernel. */
template <int D, int KV, int FL, int IN>
__device__ __forceinline__ void fast_load_kq(const float *ksm, const float *qsm, int t, int lr, float4 (&kf)[KV],
                                             float4 (&qf)[KV])
{
    if constexpr (IN != 0) {
        const uint2 *kr = (const uint2 *)((const unsigned short *)ksm + t * D);
        const uint2 *qr = (const uint2 *)((const unsigned short *)qsm + t * D);
#pragma unroll
        for (int i = 0; i < KV; i++) {
            kf[i] = widen4<IN>(kr[i * FL + lr]);
            qf[i] = widen4<IN>(qr[i * FL + lr]);
        }
    } else {
        const float4 *kr = (const float4 *)(ksm + t * D), *qr = (const float4 *)(qsm + t * D);
#pragma unroll
        for (int i = 0; i < KV; i++) {
            kf[i] = kr[i * FL + lr];
            qf[i] = qr[i * FL + lr];
        }
    }
}

/* One tile row's T tokens (fast_kernel): s is the row's slices (lane lr of FL holds float4s i * FL + lr), the
 * tokens' q, k, coefficients and v values staged (v: token t's at vr[t << vl]); lane t keeps token t's output in
 * yk (FL >= FAST_TMAX >= T), stored by the caller after the tokens, so no store to a generic address sits between
 * the tokens' shared-memory loads. TT: T compiled in (the loop unrolls and every token's loads issue at the
 * start: H200, bench_cuda --one 1 T, T = 3 / 4 / 8: 3.36 / 4.01 / 6.50 us with the run-time loop and a store per
 * token, 2.98 / 3.27 / 5.31 like this; docs/PERF.md, session 21), or 0 (run-time T: dense capture, whose
 * per-token stores go to cap, the row's state after token 0, token t at cap + t cts, cts = Hv D^2; and the
 * occupancy form, whose 64 registers the unrolled tokens would spill). IN: how q and k were staged: 0 as f32
 * (16-byte loads), 1 / 2 as bf16 / f16 (fast_stage_qk's RAW: 8-byte loads widened exactly, half the shared-memory
 * wavefronts, which bound this loop at small batch: H200 verify B=1 T = 2 / 4 / 8 2.63 / 3.27 / 5.39 -> 2.54 /
 * 3.02 / 4.67 us, bench_cuda --one; docs/PERF.md, session 22). */
template <int D, int KV, int FL, int TT, bool CAP, int IN>
__device__ __forceinline__ void fast_tokens(int T, float4 (&s)[KV], float &yk, const float *qsm, const float *ksm,
                                            const float *coef, const float *vr, int vl, int lr, float *cap,
                                            size_t cts)
{
    static_assert(FL >= FAST_TMAX, "fast_tokens: a lane per token's output");
#pragma unroll
    for (int t = 0; t < (TT ? TT : T); t++) {
        const float4 c0 = *(const float4 *)(coef + 8 * t), c1 = *(const float4 *)(coef + 8 * t + 4);
        float4 kf[KV], qf[KV];
        fast_load_kq<D, KV, FL, IN>(ksm, qsm, t, lr, kf, qf);
        const float bv = c1.y * vr[t << vl];
        float sk = dot_row<KV>(s, kf), sq = dot_row<KV>(s, qf);
#pragma unroll
        for (int o = FL / 2; o > 0; o >>= 1) {
            sk += __shfl_xor_sync(0xffffffffu, sk, o);
            sq += __shfl_xor_sync(0xffffffffu, sq, o);
        }
        const float delta = fmaf(c0.x, sk, bv);
        const float y = fmaf(c0.y, sq, delta * c0.z);
        row_update<KV>(s, kf, delta * c0.w, c1.x);
        yk = lr == t ? y : yk;
        if constexpr (CAP) { /* dense capture [B, T, Hv, D, D]: the state after token t */
            float4 *cd = (float4 *)(cap + (size_t)t * cts);
#pragma unroll
            for (int i = 0; i < KV; i++)
                __stcs(&cd[i * FL + lr], s[i]);
        }
    }
}

/* D, FL: see above. MULTI: T in 1 .. FAST_TMAX (else T = 1). IN: 0 f32, 1 bf16, 2 f16 inputs. CAP: dense
 * capture (MULTI only; compiled apart: the capture stores cost registers). OCC: the occupancy form, which the
 * launcher takes for multi-token calls without capture at D <= 8 FL past 4 CTAs per SM (and at T = 2 at D = 128 on
 * 16 lanes: B=1 2.61 us against 2.68 for the per-T form; session 21): at most 64 registers, 8
 * CTAs per SM, its output pointer made after the staging (H200, B=8 T=4 at 16 lanes and J = 4, 1024 CTAs: 15.5 us
 * against 18.8 at 72 registers, 7 CTAs per SM); the other form makes it before the wait and pins it (72
 * registers; verify B=1 T=4: 4.12 us against 4.37 at 64; docs/PERF.md, session 19; with the token loop compiled
 * for each T it takes up to 128, measured faster than capping it at 96, 80 or 72: session 21). CV: the call's
 * convention (fast_cv_of; compiled in for MULTI without CAP only). TT: T compiled in (3 .. FAST_TMAX as the
 * launcher takes it, pick_fast_t; 0: read
 * from the parameters, the token loop a switch over T), for the compiled-in conventions at D = 128 on 8 or 16
 * lanes outside the occupancy form (the Qwen3.x verify windows): the staging loops and the tile loop's shared
 * arrays sized for T, one token loop in the code. */
template <int D, int FL, bool MULTI, int IN, bool CAP, bool OCC, int CV, int TT = 0>
__global__ void __launch_bounds__(FAST_THREADS, OCC ? 8 : 4) fast_kernel(const __grid_constant__ gdn_cuda_params P)
{
    constexpr int KV = D / (4 * FL), RPW = 32 / FL, ROWS = (FAST_THREADS / 32) * RPW, TILES = D / ROWS;
    constexpr int G = D / 8, TM = !MULTI ? 1 : TT ? TT : FAST_TMAX;
    static_assert(TT == 0 || (MULTI && !CAP && !OCC && TT >= 2 && TT <= FAST_TMAX), "fast_kernel: TT");
    /* q and k staged as loaded (16-bit inputs, no capture: H200 verify B=1 T=4 3.25 -> 3.00 us; session 22) */
    constexpr bool RAW = IN != 0 && !CAP;
    constexpr int KI = RAW ? IN : 0; /* how fast_tokens reads them */
    static_assert(KV >= 1 && TILES >= 1 && G <= 32, "fast_kernel: bad D / FL");
    __shared__ __align__(16) float qsm[TM * D];
    __shared__ __align__(16) float ksm[TM * D];
    __shared__ __align__(16) float coef[TM * 8];
    __shared__ float vsm[TM * ROWS << FAST_JLOG_MAX];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lr = lane % FL;
    /* this CTA walks the J = 2^jl consecutive tiles tile0 .. tile0 + J - 1 of head h */
    const int jl = P.fast_jlog, J = 1 << jl, cl = ilog2c(TILES) - jl; /* 2^cl CTAs per head */
    const int tile0 = (int)(blockIdx.x & ((1u << cl) - 1)) << jl, h = (int)(blockIdx.x >> cl), n = (int)blockIdx.y;
    const int T = TT ? TT : MULTI ? (int)P.T : 1, Hv = P.Hv;
    const int rr = warp * RPW + lane / FL; /* this thread's row within a tile */
    float *tp = NULL, *wp = NULL; /* the tiles read and written (self_check: found after the wait) */
    if (!P.self_check)
        fast_tiles(P, n, h, tile0 * (ROWS * D), &tp, &wp);

    /* every parameter the call reads, into registers before the wait (pin): the inputs at this CTA's elements,
       the output at this row's, the scalars, the check's word */
    const int hk = P.grouped ? (int)fdiv((unsigned)h, P.fd_ratio) : h - (int)fdiv((unsigned)h, P.fd_hk) * P.Hk;
    const size_t tok0 = (size_t)n * (unsigned)T; /* the sequence's first token row */
    const size_t qts = (size_t)P.Hk * D;         /* a token's step in q and k */
    const void *qb = fast_in(P.q, IN, (tok0 * P.Hk + hk) * D), *kb = fast_in(P.k, IN, (tok0 * P.Hk + hk) * D);
    /* the J tiles' v values of token 0 (token t adds t Hv D) */
    const void *vb = fast_in(P.v, IN, (tok0 * Hv + h) * D + tile0 * ROWS);
    const call_consts C = fast_cv_consts<CV, IN>(P);
    const int32_t *err = P.checked ? &P.words->call_error : NULL;
    fast_gates_global gates(P, tok0, h, C.gdt);
    pin(qb), pin(kb), pin(vb), pin(err);
    gates.pin_all(CV == FAST_CV_ANY);
    /* this row's output element of token 0 in tile 0; token t adds t * Hv * D (fits: see fast_ok), tile j adds
       j * ROWS; and for dense capture this row's state after token 0 in tile 0 (token t adds t Hv D^2, tile j
       j ROWS D): pinned in the small-batch form (OCC: read after the wait, the registers cost occupancy) */
    const size_t oo = (tok0 * Hv + h) * D + tile0 * ROWS + rr;
    char *ob = NULL;
    float *capb = NULL;
    auto out_ptrs = [&] {
        ob = P.out ? (char *)P.out + oo * (C.odt == GDN_DTYPE_F32 ? 4 : 2) : NULL;
        capb = CAP ? P.cap + (tok0 * Hv + h) * (size_t)(D * D) + (size_t)(tile0 * ROWS + rr) * D : NULL;
    };
    if constexpr (!OCC) {
        out_ptrs();
        pin(ob), pin(capb);
    }

    if (P.early_trigger)
        grid_dependency_trigger();
    if (lane == 0 && tp) /* a quarter of the CTA's J * ROWS contiguous rows into L2 per warp, while earlier work finishes */
        prefetch_l2(tp + warp * (J * RPW * D), (unsigned)(J * RPW * D * 4), P.l2_keep);
    grid_dependency_wait();
    /* the check found an error: write nothing (here before the state loads: loaded beside them, as fast1_kernel
       does, the verdict cost default-slot verify B=8 T=4 12.59 -> 12.84 us; docs/PERF.md, session 23) */
    if (err && __ldcg(err))
        return;
    if (P.self_check && !fast_self_check(P, n, h, tile0 * (ROWS * D), &tp, &wp)) /* a slot out of range */
        return;

    /* the state rows, all loads at once */
    float4 s[KV];
    fast_load_rows<KV, FL>(tp, rr * D, lr, s, CAP);

    /* the J tiles' v values (the last threads: the first ones stage q and k) */
    const int vl = ilog2c(ROWS) + jl; /* 2^vl = J * ROWS rows per token */
    for (int i = FAST_THREADS - 1 - tid; i < T << vl; i += FAST_THREADS) {
        const int t = i >> vl, q = i - (t << vl);
        vsm[i] = ld1<IN>(vb, (size_t)t * Hv * D + q);
    }
    fast_stage_qk<D, IN, RAW>(C, T, qb, kb, qts, h, qsm, ksm, coef, gates);
    __syncthreads();
    if constexpr (OCC)
        out_ptrs();

    for (int j = 0;; j++) {
        float4 sn[KV]; /* the next tile's rows, loaded while this tile's tokens run */
        if (j + 1 < J) {
            fast_load_rows<KV, FL>(tp, ((j + 1) * ROWS + rr) * D, lr, sn, CAP);
        }
        /* the tile's T tokens, T compiled in where the capture stores do not keep the loads in place */
        float yk = 0.f;
        const float *vr = vsm + j * ROWS + rr;
        float *cj = CAP ? capb + (size_t)(j * ROWS) * D : NULL;
        const size_t cts = (size_t)Hv * (D * D);
        if constexpr (CAP || OCC) {
            fast_tokens<D, KV, FL, 0, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts);
        } else if constexpr (!MULTI) {
            fast_tokens<D, KV, FL, 1, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts);
        } else if constexpr (TT != 0) {
            fast_tokens<D, KV, FL, TT, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts);
        } else {
            switch (T) {
            case 1: fast_tokens<D, KV, FL, 1, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            case 2: fast_tokens<D, KV, FL, 2, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            case 3: fast_tokens<D, KV, FL, 3, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            case 4: fast_tokens<D, KV, FL, 4, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            case 5: fast_tokens<D, KV, FL, 5, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            case 6: fast_tokens<D, KV, FL, 6, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            case 7: fast_tokens<D, KV, FL, 7, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            default: fast_tokens<D, KV, FL, FAST_TMAX, CAP, KI>(T, s, yk, qsm, ksm, coef, vr, vl, lr, cj, cts); break;
            }
        }
        if (ob && lr < T) /* lane t of the row holds token t's output */
            st_elem(ob, C.odt, (int64_t)(unsigned)(lr * Hv * D + j * ROWS), yk);
        fast_store_rows<KV, FL>(wp, (j * ROWS + rr) * D, lr, s, CAP);
        if (j + 1 == J)
            break;
#pragma unroll
        for (int i = 0; i < KV; i++)
            s[i] = sn[i];
    }
}

/* 4 consecutive input elements as f32 (16-bit: one 8-byte load; f32: one 16-byte load). */
template <int IN>
__device__ __forceinline__ float4 ld4(const void *base, size_t off)
{
    if constexpr (IN == 0) {
        return *(const float4 *)((const float *)base + off);
    } else {
        const uint2 u = *(const uint2 *)((const unsigned short *)base + off);
        if constexpr (IN == 1)
            return make_float4(__uint_as_float(u.x << 16), __uint_as_float(u.x & 0xffff0000u),
                               __uint_as_float(u.y << 16), __uint_as_float(u.y & 0xffff0000u));
        else
            return make_float4(__half2float(__ushort_as_half((unsigned short)(u.x & 0xffffu))),
                               __half2float(__ushort_as_half((unsigned short)(u.x >> 16))),
                               __half2float(__ushort_as_half((unsigned short)(u.y & 0xffffu))),
                               __half2float(__ushort_as_half((unsigned short)(u.y >> 16))));
    }
}

/* Decode (T = 1) without staging: every row's lanes load their slices of q and k, the row's v, g and
 * beta themselves (no shared memory, no barrier) and reduce |q|^2, |k|^2, k.q, S.k and S.q together
 * in one log2(FL)-round shuffle reduction; same decomposition and update as fast_kernel. A CTA that
 * walks J > 1 tiles keeps q, k and the gate in registers and loads the next tile's rows (and v)
 * while this tile's are updated. JT: compiled for J > 1 (false: J = 1, straight-line code with no
 * registers for a next tile, for small batches where latency rules). CV: the call's convention,
 * FAST_CV_ANY (read from the parameters) or one compiled in (fast_cv_consts). */
template <int D, int FL, int IN, bool JT, int CV>
__global__ void __launch_bounds__(FAST_THREADS, 4) fast1_kernel(const __grid_constant__ gdn_cuda_params P)
{
    constexpr int KV = D / (4 * FL), RPW = 32 / FL, ROWS = (FAST_THREADS / 32) * RPW, TILES = D / ROWS;
    static_assert(KV >= 1 && TILES >= 1, "fast1_kernel: bad D / FL");
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lr = lane % FL;
    const int jl = JT ? P.fast_jlog : 0, J = 1 << jl, cl = ilog2c(TILES) - jl;
    const int tile0 = (int)(blockIdx.x & ((1u << cl) - 1)) << jl, h = (int)(blockIdx.x >> cl), n = (int)blockIdx.y;
    const int rr = warp * RPW + lane / FL;
    float *tp = NULL, *wp = NULL; /* the tiles read and written (self_check: found after the wait) */
    if (!P.self_check)
        fast_tiles(P, n, h, tile0 * (ROWS * D), &tp, &wp);

    /* every parameter this call reads, into registers before the wait (pin): q, k, v, g, beta and out at this
       CTA's elements, the scalars, the check's word */
    const int hk = P.grouped ? (int)fdiv((unsigned)h, P.fd_ratio) : h - (int)fdiv((unsigned)h, P.fd_hk) * P.Hk;
    const size_t qo = ((size_t)n * P.Hk + hk) * D;
    const size_t ro = ((size_t)n * P.Hv + h) * D + tile0 * ROWS + rr; /* this row's v and y element in tile 0;
                                                                          tile j adds j * ROWS */
    const call_consts C = fast_cv_consts<CV, IN>(P);
    const void *qb = fast_in(P.q, IN, qo), *kb = fast_in(P.k, IN, qo), *vb = fast_in(P.v, IN, ro);
    char *ob = P.out ? (char *)P.out + ro * (C.odt == GDN_DTYPE_F32 ? 4 : 2) : NULL;
    const int32_t *err = P.checked ? &P.words->call_error : NULL;
    fast_gates_global gates(P, (size_t)n, h, C.gdt); /* T = 1: sequence n's token row is n */
    pin(qb), pin(kb), pin(vb), pin(ob), pin(err);
    gates.pin_all(CV == FAST_CV_ANY); /* a compiled-in gate dtype stays a constant */

    if (P.early_trigger)
        grid_dependency_trigger();
    if (lane == 0 && tp)
        prefetch_l2(tp + warp * (J * RPW * D), (unsigned)(J * RPW * D * 4), P.l2_keep);
    grid_dependency_wait();
    /* the check kernel's verdict, loaded beside the state rows and obeyed once they are issued (rows of slots in
       range only, fast_tiles: safe to read whatever the verdict; H200 decode with slot arrays: docs/PERF.md, session
       23) */
    const int32_t bad = err ? __ldcg(err) : 0;
    if (P.self_check && !fast_self_check(P, n, h, tile0 * (ROWS * D), &tp, &wp)) /* a slot out of range */
        return;

    float4 s[KV], qf[KV], kf[KV];
    fast_load_rows<KV, FL>(tp, rr * D, lr, s);
    if (bad) /* the check found an error: write nothing */
        return;
#pragma unroll
    for (int i = 0; i < KV; i++) {
        qf[i] = ld4<IN>(qb, 4 * (i * FL + lr));
        kf[i] = ld4<IN>(kb, 4 * (i * FL + lr));
    }
    float v = ld1<IN>(vb, 0);
    float graw, be;
    gates(0, &graw, &be);
    float dec = 0.f, qsc = 0.f, ksc = 0.f, kqs = 0.f;
    for (int j = 0;; j++) {
        float4 sn[KV];
        float vn = 0.f;
        if (j + 1 < J) {
            fast_load_rows<KV, FL>(tp, ((j + 1) * ROWS + rr) * D, lr, sn);
            vn = ld1<IN>(vb, (j + 1) * ROWS);
        }
        float sk = dot_row<KV>(s, kf), sq = dot_row<KV>(s, qf);
        if (j == 0) { /* the norms, k.q and the gate once, their reduction merged with tile 0's dots */
            float qq = dot_row<KV>(qf, qf), kk = dot_row<KV>(kf, kf), kq = dot_row<KV>(kf, qf);
#pragma unroll
            for (int o = FL / 2; o > 0; o >>= 1) {
                qq += __shfl_xor_sync(0xffffffffu, qq, o);
                kk += __shfl_xor_sync(0xffffffffu, kk, o);
                kq += __shfl_xor_sync(0xffffffffu, kq, o);
                sk += __shfl_xor_sync(0xffffffffu, sk, o);
                sq += __shfl_xor_sync(0xffffffffu, sq, o);
            }
            dec = gate_decay_c(C, h, graw, &be);
            qsc = C.scale * (C.l2n ? rsqrtf(qq + 1e-6f) : 1.0f);
            ksc = C.l2n ? rsqrtf(kk + 1e-6f) : 1.0f;
            kqs = kq * (qsc * ksc);
        } else {
#pragma unroll
            for (int o = FL / 2; o > 0; o >>= 1) {
                sk += __shfl_xor_sync(0xffffffffu, sk, o);
                sq += __shfl_xor_sync(0xffffffffu, sq, o);
            }
        }
        const float delta = be * (v - dec * (ksc * sk));
        const float y = fmaf(dec, qsc * sq, delta * kqs);
        const float dk = delta * ksc;
        row_update<KV>(s, kf, dk, dec);
        if (ob && lr == 0)
            st_elem(ob, C.odt, (int64_t)(j * ROWS), y);
        fast_store_rows<KV, FL>(wp, (j * ROWS + rr) * D, lr, s);
        if (j + 1 == J)
            break;
#pragma unroll
        for (int i = 0; i < KV; i++)
            s[i] = sn[i];
        v = vn;
    }
}

/* Does the call qualify for the fast path (see the header comment)? */
static bool fast_ok(const gdn_cuda_params *p)
{
    const int64_t D = p->Dk, T = p->T;
    if (p->cu || p->num_tokens || p->cap_mode == GDN_CAPTURE_SLOTS || !p->pool || p->kv_layout)
        return false;
    if (p->Dk != p->Dv || !(D == 32 || D == 64 || D == 128 || D == 256) || T < 1 || T > FAST_TMAX)
        return false;
    if (p->N != p->B || p->N < 1 || p->N > 65535 || (!p->read_slots && !p->write_slots && p->num_slots < p->N))
        return false;
    if (p->dtype != GDN_DTYPE_F32 && p->dtype != GDN_DTYPE_BF16 && p->dtype != GDN_DTYPE_F16)
        return false;
    const int64_t Hk = p->Hk, Hv = p->Hv;
    const int64_t sq[4] = {T * Hk * D, Hk * D, D, 1}, sv[4] = {T * Hv * D, Hv * D, D, 1}, sg[3] = {T * Hv, Hv, 1};
    for (int i = 0; i < 4; i++)
        if (p->qs[i] != sq[i] || p->ks[i] != sq[i] || p->vs[i] != sv[i] || (p->out && p->os[i] != sv[i]))
            return false;
    for (int i = 0; i < 3; i++)
        if (p->gs[i] != sg[i] || p->bs[i] != sg[i])
            return false;
    if (p->ps[3] != 1 || p->ps[2] != D || p->ps[1] % 4 != 0 || p->ps[0] % 4 != 0 || p->ps[0] < 0 || p->ps[1] < 0)
        return false;
    if (((uintptr_t)p->q | (uintptr_t)p->k | (uintptr_t)p->pool) & 15u)
        return false;
    if (p->cap_mode == GDN_CAPTURE_DENSE) { /* contiguous [B, T, Hv, D, D], 16-byte aligned */
        const int64_t sc[5] = {T * Hv * D * D, Hv * D * D, D * D, D, 1};
        for (int i = 0; i < 5; i++)
            if (p->cs[i] != sc[i])
                return false;
        if (((uintptr_t)p->cap & 15u) || T < 2)
            return false;
    }
    /* 32-bit token-row arithmetic inside size_t products: keep every input's element count < 2^40 */
    if (p->N * T * Hv * D >= (INT64_C(1) << 40) || Hv * D * FAST_TMAX >= (INT64_C(1) << 31))
        return false;
    return true;
}

#endif
