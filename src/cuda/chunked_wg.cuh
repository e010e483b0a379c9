/*
 * chunked_wg.cuh — the state pass of the two-pass chunked prefill on Hopper's warpgroup tensor-core products
 * (wgmma): chunk_split_state_wg_kernel, the second pass of chunk_split_bf16__cuda_wgmma; included by
 * chunked_split.cuh, whose prep pass (T, P and the scalars per chunk in the workspace) it reads.
 *
 * Math per chunk (chunked_split.cuh's notation; S the state tile [RT rows of Dv][Dk], RT = 32 or 64):
 *     X = K S^T, Y = Q S^T                       [C][RT]   bf16 operands (k, q as given; S rounded to bf16)
 *     R = diag(bt) V - diag(sk) X,  D = T R       [C][RT]   tf32 operands (T, R rounded to tf32)
 *     O = diag(sq) Y + P D                        [C][RT]   tf32
 *     S'^T = gl S^T + K^T (diag(cf) D)            [Dk][RT]  bf16 operands (k as given, cf D rounded to bf16)
 * every product with f32 accumulation; the state itself stays f32, in the chain warpgroup's accumulators,
 * across the chunks; the bf16 copy of it is only an operand.
 *
 * One CTA of two warpgroups per (value head, RT state rows, sequence); the launcher takes RT = 64 once 32 would
 * need more than one wave of the SMs (half the CTAs, each chunk's stage shared by twice the rows). Operands are
 * read by the tensor cores straight from shared memory, in the no-swizzle core-matrix layout (8 rows of 16
 * bytes, 128 contiguous bytes per core; tests/probe_sm90.cu checked the descriptor reading on the H200: the
 * leading byte offset steps along K, the stride byte offset along M / N). A chunk's k and q rows arrive as
 * Dk / 8 slices of [C tokens][8 columns] (one 5-D tensor-map box each), which wgmma reads as K (K-major,
 * tokens x Dk) for X and as K^T (MN-major) for the update without a copy; the v tile by a 4-D box, T, P (in
 * core layout, from the prep pass) and the scalars by bulk copies, all on one mbarrier per stage (two
 * stages). Warpgroup 0 walks the state chain alone: X, R, D, cf D, the update and S's bf16 copy, on its own
 * named barrier. Warpgroup 1 computes the outputs a step behind: Y once the chain's copy of S entering the
 * chunk is out, O once D is; its lane 0 issues chunk c + 1's stage once the chain is past chunk c - 1. The
 * two meet on four named barriers (WG_BAR_S, _Y, _D, _O), each a strict alternation of one side's bar.arrive
 * and the other's bar.sync.
 *
 * Assumptions (launch_chunk_split_k): those of chunk_split_ok, bf16 activations, 32 < Dk <= 128 (padded to
 * 64 or 128; gdn_cuda_split_wg_shape_ok), T < 2^31, tensor maps that encode (the driver's
 * cuTensorMapEncodeTiled; else the mma.sync state pass runs), a compute capability 9.x device (the sm_90a
 * code; the context's sm90). Accuracy: bf16 rounding of S in X and Y and of cf D in the update: T = 4096
 * output relative RMS 2.6e-3 (docs/PERF.md, session 9). H200, Qwen3.6 layer (docs/PERF.md, session 10): B=1
 * T=4096 0.22 ms for both passes, B=64 T=4096 9.5 ms.
 */
#ifndef GDN_CUDA_CHUNKED_WG_CUH
#define GDN_CUDA_CHUNKED_WG_CUH

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WG_ARCH 1
#else
#define WG_ARCH 0
#endif

/* One stage: k, q rows (bf16; Dk / 8 slices of [C tokens][8], 1 KB each: the boxes the tensor copies
   bring), v tile [C][rt] (bf16), T, P (tf32, K-major cores, as the prep pass writes them), the scalars;
   rounded up to 128 bytes. rt: the state rows of a CTA (32 or 64). */
__host__ __device__ constexpr int wg_stage_bytes(int dkp, int rt)
{
    return (2 * dkp * TC_C * 2 + TC_C * rt * 2 + 2 * TC_C * TC_C * 4 + (4 * TC_C + 4) * 4 + 127) / 128 * 128;
}
/* Two stages, the state's bf16 copy [Dk][rt], R and D in tf32 [rt][C], cf D in bf16 [C][rt], two mbarriers. */
__host__ __device__ constexpr int split_state_wg_smem_bytes(int dkp, int rt)
{
    return 2 * wg_stage_bytes(dkp, rt) + dkp * rt * 2 + 2 * rt * TC_C * 4 + TC_C * rt * 2 + 16;
}

/* K-major tf32 [rows][TC_C]: core (row / 8, col / 4), along the columns 128 bytes apart, along the rows 2048. */
__device__ __forceinline__ int wg_k32(int row, int col)
{
    return ((row >> 3) * (TC_C / 4) + (col >> 2)) * 32 + (row & 7) * 4 + (col & 3);
}
/* MN-major 16-bit with RT columns (the MN index) and K rows: core (k / 8, n / 8), along n 128 bytes apart,
   along k 16 RT. */
template <int RT>
__device__ __forceinline__ int wg_mn16(int k, int n)
{
    return ((k >> 3) * (RT / 8) + (n >> 3)) * 64 + (k & 7) * 8 + (n & 7);
}

/* Matrix descriptor, no swizzle: start address, the byte offset between cores adjacent along K (leading)
   and along M / N (stride). */
__device__ __forceinline__ uint64_t wg_desc(const void *p, unsigned along_k, unsigned along_mn)
{
    const uint64_t a = ((uint64_t)__cvta_generic_to_shared(p) & 0x3ffffu) >> 4;
    return a | ((uint64_t)((along_k >> 4) & 0x3fffu) << 16) | ((uint64_t)((along_mn >> 4) & 0x3fffu) << 32);
}
__device__ __forceinline__ void wg_fence()
{
#if WG_ARCH
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void wg_commit_wait()
{
#if WG_ARCH
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#endif
}
/* Keeps the compiler from moving reads or writes of an accumulator across a wgmma's issue or wait. */
template <int N>
__device__ __forceinline__ void wg_fence_acc(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}
/* Generic-proxy writes to shared memory (stores, cp.async) made visible to the tensor cores' reads. */
__device__ __forceinline__ void wg_proxy_fence()
{
#if WG_ARCH
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/* d (+)= A B^T, m64n32k16, bf16 operands; TA, TB: A, B MN-major. scale_d 0: d = A B^T. */
template <int TA, int TB>
__device__ __forceinline__ void wg_bf16_n32(float (&d)[16], uint64_t a, uint64_t b, int scale_d)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %18, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, %19, "
                 "%20;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15])
                 : "l"(a), "l"(b), "r"(scale_d), "n"(TA), "n"(TB));
#else
    (void)d, (void)a, (void)b, (void)scale_d;
#endif
}
/* d (+)= A B^T, m64n32k8, tf32 operands (K-major). */
__device__ __forceinline__ void wg_tf32_n32(float (&d)[16], uint64_t a, uint64_t b, int scale_d)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %18, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15])
                 : "l"(a), "l"(b), "r"(scale_d));
#else
    (void)d, (void)a, (void)b, (void)scale_d;
#endif
}
/* d (+)= A B^T, m64n64k16, bf16 operands; TA, TB as wg_bf16_n32. */
template <int TA, int TB>
__device__ __forceinline__ void wg_bf16_n64(float (&d)[32], uint64_t a, uint64_t b, int scale_d)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %34, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, %35, %36;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(scale_d), "n"(TA), "n"(TB));
#else
    (void)d, (void)a, (void)b, (void)scale_d;
#endif
}
/* d (+)= A B^T, m64n64k8, tf32 operands (K-major). */
__device__ __forceinline__ void wg_tf32_n64(float (&d)[32], uint64_t a, uint64_t b, int scale_d)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %34, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(scale_d));
#else
    (void)d, (void)a, (void)b, (void)scale_d;
#endif
}
/* The products by the tile's width RT (32 or 64): bf16 m64nRTk16, tf32 m64nRTk8. */
template <int RT, int TA, int TB>
__device__ __forceinline__ void wg_bf16_nr(float (&d)[RT / 2], uint64_t a, uint64_t b, int scale_d)
{
    if constexpr (RT == 64)
        wg_bf16_n64<TA, TB>(d, a, b, scale_d);
    else
        wg_bf16_n32<TA, TB>(d, a, b, scale_d);
}
template <int RT>
__device__ __forceinline__ void wg_tf32_nr(float (&d)[RT / 2], uint64_t a, uint64_t b, int scale_d)
{
    if constexpr (RT == 64)
        wg_tf32_n64(d, a, b, scale_d);
    else
        wg_tf32_n32(d, a, b, scale_d);
}
/* One stage (shared memory). */
template <int DKP, int RT>
struct wg_stage {
    unsigned short *K, *Q, *V;
    float *T, *P, *sc;
    __device__ wg_stage(unsigned char *base)
    {
        K = (unsigned short *)base;
        Q = K + TC_C * DKP;
        V = Q + TC_C * DKP;
        T = (float *)(V + TC_C * RT);
        P = T + TC_C * TC_C;
        sc = P + TC_C * TC_C;
    }
};

/* mbarrier and tensor-copy helpers (one thread issues a stage; every thread waits on its barrier). */
__device__ __forceinline__ void wg_mbar_init(uint64_t *bar)
{
#if WG_ARCH
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");
#endif
}
__device__ __forceinline__ void wg_mbar_init_fence()
{
#if WG_ARCH
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
__device__ __forceinline__ void wg_mbar_expect(uint64_t *bar, unsigned bytes)
{
#if WG_ARCH
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     (unsigned)__cvta_generic_to_shared(bar)),
                 "r"(bytes)
                 : "memory");
#endif
}
/* wg_mbar_expect without the arrival: bytes for copies issued before the phase's arrival (chunked_rs.cuh,
   rs_issue_inputs), which cannot complete the phase before it. */
__device__ __forceinline__ void wg_mbar_expect_only(uint64_t *bar, unsigned bytes)
{
#if WG_ARCH
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(
                     (unsigned)__cvta_generic_to_shared(bar)),
                 "r"(bytes)
                 : "memory");
#endif
}
/* Waits for the phase of parity `parity` to complete; CLUSTER: acquire at cluster scope (arrivals from another
   CTA of the cluster, chunked_rs.cuh), else the default (acquire, CTA scope). */
template <bool CLUSTER = false>
__device__ __forceinline__ void wg_mbar_wait(uint64_t *bar, unsigned parity)
{
#if WG_ARCH
    const unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    unsigned done = 0;
    do
        if constexpr (CLUSTER)
            asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], "
                         "%2;\n\tselp.u32 %0, 1, 0, p;\n}"
                         : "=r"(done)
                         : "r"(a), "r"(parity)
                         : "memory");
        else
            asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                         "selp.u32 %0, 1, 0, p;\n}"
                         : "=r"(done)
                         : "r"(a), "r"(parity)
                         : "memory");
    while (!done);
#endif
}
/* A 4-D box of a tensor map (coordinates innermost first) into shared memory, completing on bar. */
__device__ __forceinline__ void wg_tma4(void *dst, const CUtensorMap *map, int c0, int c1, int c2, int c3,
                                        uint64_t *bar)
{
#if WG_ARCH
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
                 "%5}], [%6];" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
                 "r"((unsigned)__cvta_generic_to_shared(bar))
                 : "memory");
#endif
}
/* A 5-D box likewise. */
__device__ __forceinline__ void wg_tma5(void *dst, const CUtensorMap *map, int c0, int c1, int c2, int c3, int c4,
                                        uint64_t *bar)
{
#if WG_ARCH
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
                 "%5, %6}], [%7];" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
                 "r"((unsigned)__cvta_generic_to_shared(bar))
                 : "memory");
#endif
}
/* bytes (a multiple of 16, 16-byte aligned both sides) global -> shared, completing on bar. */
__device__ __forceinline__ void wg_bulk(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
#if WG_ARCH
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     (unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(bytes), "r"((unsigned)__cvta_generic_to_shared(bar))
                 : "memory");
#endif
}

/* The tensor maps of a call's q, k rows ([N][T][Hk][Dk] by their strides: one 5-D box of 8 columns x C tokens
   x Dk / 8 slices x 1 head x 1 lands a chunk's rows slice by slice) and v rows (a 4-D box of RT columns x 1 head
   x C tokens x 1); zeros past T, Dk, Dv. */
struct wg_maps {
    CUtensorMap q, k, v;
};

/* A chunk's stage (one thread, WG_PRODUCER): the Dk / 8 slices of the k and q rows and the v tile by tensor copies, T, P and
   the scalars from the workspace by bulk copies, all on bar. */
template <int DKP, int RT>
__device__ __forceinline__ void wg_issue_stage(const wg_maps &m, const wg_stage<DKP, RT> &s, const float *wsb, int64_t b,
                                               int64_t tc, int hk, int h, int r0, int nsl, uint64_t *bar)
{
    wg_mbar_expect(bar, (unsigned)(2 * nsl * TC_C * 16 + TC_C * RT * 2 + 2 * TC_C * TC_C * 4 + (4 * TC_C + 4) * 4));
    wg_tma5(s.K, &m.k, 0, (int)tc, 0, hk, (int)b, bar);
    wg_tma5(s.Q, &m.q, 0, (int)tc, 0, hk, (int)b, bar);
    wg_tma4(s.V, &m.v, r0, h, (int)tc, (int)b, bar);
    wg_bulk(s.T, wsb, TC_C * TC_C * 4, bar);
    wg_bulk(s.P, wsb + TC_C * TC_C, TC_C * TC_C * 4, bar);
    wg_bulk(s.sc, wsb + 2 * TC_C * TC_C, (4 * TC_C + 4) * 4, bar);
}

/* Named barriers of the state pass (0 is __syncthreads): S's bf16 copy written by the chain (warpgroup 0) /
   read by warpgroup 1's Y; D written / read by warpgroup 1's outputs; and each warpgroup's own. bar.arrive
   does not wait: every arrival below is matched by the other side's bar.sync before the arriving side can
   arrive again (the loop's order makes each a strict alternation). */
#define WG_BAR_S 1
#define WG_BAR_Y 2
#define WG_BAR_D 3
#define WG_BAR_O 4
#define WG_BAR_L0 5
#define WG_BAR_L1 6
__device__ __forceinline__ void wg_bar_sync(int id, int count)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void wg_bar_arrive(int id, int count)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

/* The thread that issues the stages: lane 0 of warpgroup 1, off the state chain. */
#define WG_PRODUCER 128


/* Pass 2 on wgmma (see the header). Grid (Hv * ceil(Dv / RT), N); DKP 64 or 128; RT, the state rows of a
   CTA, 32 or 64. */
template <int DKP, int RT>
__global__ void __launch_bounds__(TC_THREADS, 1)
    chunk_split_state_wg_kernel(const __grid_constant__ gdn_cuda_params P, const __grid_constant__ wg_maps M)
{
    static_assert(DKP == 64 || DKP == 128, "chunk_split_state_wg_kernel: Dk padded to 64 or 128");
    static_assert(RT == 32 || RT == 64, "chunk_split_state_wg_kernel: 32 or 64 state rows");
    static_assert(TC_THREADS == 256 && TC_C == 64, "chunk_split_state_wg_kernel: two warpgroups, 64-token chunks");
    constexpr int MB = DKP / 64; /* 64-row blocks of S^T in the update */
    extern __shared__ __align__(128) unsigned char sw_raw[];
    constexpr int SB = wg_stage_bytes(DKP, RT);
    unsigned short *Sb = (unsigned short *)(sw_raw + 2 * SB); /* S, bf16, MN-major [Dk][RT] */
    float *Rt = (float *)(Sb + DKP * RT);                     /* R, tf32, K-major [RT][C] */
    float *Dt = Rt + RT * TC_C;                               /* D, tf32, K-major [RT][C] */
    unsigned short *Dc = (unsigned short *)(Dt + RT * TC_C);  /* cf D, bf16, MN-major [C][RT] */
    uint64_t *full = (uint64_t *)(Dc + TC_C * RT);            /* a stage has landed */

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, wg = warp >> 2, w = warp & 3;
    const int g = lane >> 2, t4 = lane & 3;
    const sp_tile ct = sp_tile_of(P, RT);
    const int h = ct.h, r0 = ct.r0, hk = ct.hk, rows = ct.rows, Dk = P.Dk;
    const int64_t prs = ct.prs, pcs = ct.pcs;
    const int nsl = Dk / 8; /* k, q slices the copies bring; those past Dk stay zero */

    if (tid == 0) {
        wg_mbar_init(&full[0]);
        wg_mbar_init(&full[1]);
        wg_mbar_init_fence();
    }
    for (int e = tid; e < 2 * (DKP / 8 - nsl) * TC_C; e += TC_THREADS) { /* the slices past Dk, both stages */
        const int st = e / ((DKP / 8 - nsl) * TC_C), r = e % ((DKP / 8 - nsl) * TC_C);
        const wg_stage<DKP, RT> s(sw_raw + st * SB);
        *(uint4 *)(s.K + nsl * TC_C * 8 + 8 * r) = make_uint4(0u, 0u, 0u, 0u);
        *(uint4 *)(s.Q + nsl * TC_C * 8 + 8 * r) = make_uint4(0u, 0u, 0u, 0u);
    }
    __syncthreads();
    unsigned phase = 0u; /* bit st: the parity of stage st's next wait */
    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error))
        return;
    for (int64_t n = P.n0 + blockIdx.y; n < P.n1; n += gridDim.y) {
        const auto [b, t0, t1, rs, ws, wsn] = sp_seq_of(P, n, h);
        const int nc = (int)((t1 - t0 + TC_C - 1) / TC_C);

        if (tid == WG_PRODUCER && nc > 0)
            wg_issue_stage<DKP, RT>(M, wg_stage<DKP, RT>(sw_raw), wsn, b, t0, hk, h, r0, nsl, &full[0]);
        if (wg == 0) {
            /* the state chain. S^T [Dk][RT] in accumulators, block m: rows 64 m + 16 w + g (+ 8), columns
               8 i + 2 t4 (+ 1) */
            float sacc[MB][RT / 2];
#pragma unroll
            for (int m = 0; m < MB; m++)
#pragma unroll
                for (int i = 0; i < RT / 8; i++)
#pragma unroll
                    for (int hf = 0; hf < 2; hf++) {
                        const int c = 64 * m + 16 * w + g + 8 * hf, r = 8 * i + 2 * t4;
                        float x[2];
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            x[e] = 0.f;
                            if (rs >= 0 && r + e < rows && c < Dk)
                                x[e] = P.pool[rs * P.ps[0] + (int64_t)h * P.ps[1] + (int64_t)(r0 + r + e) * prs +
                                              (int64_t)c * pcs];
                            sacc[m][4 * i + 2 * hf + e] = x[e];
                        }
                        *(unsigned *)(Sb + wg_mn16<RT>(c, r)) = sp_bf2(x[0], x[1]);
                    }
            if (nc > 0) { /* S's bf16 copy, to this warpgroup's X and warpgroup 1's first Y */
                wg_proxy_fence();
                wg_bar_sync(WG_BAR_L0, 128);
                wg_bar_arrive(WG_BAR_S, 256);
            }
            for (int c = 0; c < nc; c++) {
                const int64_t tc = t0 + (int64_t)c * TC_C;
                const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
                const wg_stage<DKP, RT> s(sw_raw + (c & 1) * SB);
                wg_mbar_wait(&full[c & 1], (phase >> (c & 1)) & 1u);
                phase ^= 1u << (c & 1);
                if (nt < TC_C) { /* a sequence's last, short chunk: k rows and the v tile past its tokens to zero
                                    (they may hold another call's data, not zeros: a count below T) */
                    for (int e = tid; e < (TC_C - nt) * (nsl + RT / 8); e += 128) {
                        const int t = nt + e % (TC_C - nt), u = e / (TC_C - nt);
                        unsigned short *dst = u < nsl ? s.K + u * TC_C * 8 + 8 * t : s.V + t * RT + 8 * (u - nsl);
                        *(uint4 *)dst = make_uint4(0u, 0u, 0u, 0u);
                    }
                    wg_proxy_fence();
                    wg_bar_sync(WG_BAR_L0, 128);
                }
                /* X = K S^T (rows: tokens 16 w + g (+ 8); columns 8 i + 2 t4 (+ 1)) */
                float acc[RT / 2];
                wg_fence_acc(acc);
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < DKP / 16; kk++)
                    wg_bf16_nr<RT, 0, 1>(acc, wg_desc(s.K + 2 * kk * TC_C * 8, TC_C * 16u, 128u),
                                         wg_desc(Sb + kk * 2 * RT * 8, RT * 16u, 128u), kk);
                wg_commit_wait();
                wg_fence_acc(acc);
                /* R = diag(bt) V - diag(sk) X, to Rt (tf32) */
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    const int i = 16 * w + g + 8 * hf;
                    const float sk = s.sc[i], bt = s.sc[TC_C + i];
#pragma unroll
                    for (int j = 0; j < RT / 8; j++) {
                        const int r = 8 * j + 2 * t4;
                        const unsigned vv = *(const unsigned *)(s.V + i * RT + r);
                        Rt[wg_k32(r, i)] = tf32r(bt * __uint_as_float(vv << 16) - sk * acc[4 * j + 2 * hf]);
                        Rt[wg_k32(r + 1, i)] = tf32r(bt * __uint_as_float(vv & 0xffff0000u) - sk * acc[4 * j + 2 * hf + 1]);
                    }
                }
                wg_proxy_fence();
                wg_bar_sync(WG_BAR_L0, 128);
                /* D = T R */
                float d[RT / 2];
                wg_fence_acc(d);
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < TC_C / 8; kk++)
                    wg_tf32_nr<RT>(d, wg_desc(s.T + kk * 2 * 32, 128u, 2048u), wg_desc(Rt + kk * 2 * 32, 128u, 2048u),
                                   kk);
                wg_commit_wait();
                wg_fence_acc(d);
                if (c > 0) /* warpgroup 1 is done with the previous chunk's D */
                    wg_bar_sync(WG_BAR_O, 256);
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    const int i = 16 * w + g + 8 * hf;
                    const float cf = s.sc[3 * TC_C + i];
#pragma unroll
                    for (int j = 0; j < RT / 8; j++) {
                        const int r = 8 * j + 2 * t4;
                        const float d0 = d[4 * j + 2 * hf], d1 = d[4 * j + 2 * hf + 1];
                        Dt[wg_k32(r, i)] = tf32r(d0);
                        Dt[wg_k32(r + 1, i)] = tf32r(d1);
                        *(unsigned *)(Dc + wg_mn16<RT>(i, r)) = sp_bf2(cf * d0, cf * d1);
                    }
                }
                wg_proxy_fence();
                wg_bar_arrive(WG_BAR_D, 256); /* D to warpgroup 1's outputs */
                wg_bar_sync(WG_BAR_L0, 128);  /* cf D, whole, to the update */
                /* S'^T = gl S^T + K^T (diag(cf) D) */
                const float gl = s.sc[4 * TC_C];
#pragma unroll
                for (int m = 0; m < MB; m++)
#pragma unroll
                    for (int q = 0; q < RT / 2; q++)
                        sacc[m][q] *= gl;
#pragma unroll
                for (int m = 0; m < MB; m++)
                    wg_fence_acc(sacc[m]);
                wg_fence();
#pragma unroll
                for (int m = 0; m < MB; m++)
#pragma unroll
                    for (int kk = 0; kk < TC_C / 16; kk++)
                        wg_bf16_nr<RT, 1, 1>(sacc[m], wg_desc(s.K + 8 * m * TC_C * 8 + 2 * kk * 64, 128u, TC_C * 16u),
                                             wg_desc(Dc + kk * 2 * RT * 8, RT * 16u, 128u), 1);
                wg_commit_wait();
#pragma unroll
                for (int m = 0; m < MB; m++)
                    wg_fence_acc(sacc[m]);
                if (c + 1 < nc) { /* the bf16 copy, once warpgroup 1's Y has read the last one */
                    wg_bar_sync(WG_BAR_Y, 256);
#pragma unroll
                    for (int m = 0; m < MB; m++)
#pragma unroll
                        for (int i = 0; i < RT / 8; i++)
#pragma unroll
                            for (int hf = 0; hf < 2; hf++)
                                *(unsigned *)(Sb + wg_mn16<RT>(64 * m + 16 * w + g + 8 * hf, 8 * i + 2 * t4)) =
                                    sp_bf2(sacc[m][4 * i + 2 * hf], sacc[m][4 * i + 2 * hf + 1]);
                    wg_proxy_fence();
                    wg_bar_arrive(WG_BAR_S, 256);
                    wg_bar_sync(WG_BAR_L0, 128);
                }
            }
            if (ws >= 0 && !(t1 == t0 && ws == rs))
#pragma unroll
                for (int m = 0; m < MB; m++)
#pragma unroll
                    for (int i = 0; i < RT / 8; i++)
#pragma unroll
                        for (int q = 0; q < 4; q++) {
                            const int cc = 64 * m + 16 * w + g + 8 * (q >> 1), r = 8 * i + 2 * t4 + (q & 1);
                            if (r < rows && cc < Dk)
                                P.pool[ws * P.ps[0] + (int64_t)h * P.ps[1] + (int64_t)(r0 + r) * prs +
                                       (int64_t)cc * pcs] = sacc[m][4 * i + q];
                        }
        } else {
            /* the outputs, a step behind the chain: Y = Q S^T once the chain's bf16 copy of S is out, then
               O = diag(sq) Y + P D once D is */
            const bool pairs = sp_out_pairs(P);
            for (int c = 0; c < nc; c++) {
                const int64_t tc = t0 + (int64_t)c * TC_C;
                const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
                const wg_stage<DKP, RT> s(sw_raw + (c & 1) * SB);
                wg_bar_sync(WG_BAR_S, 256); /* S's copy entering chunk c; warpgroup 0 done with chunk c - 1 */
                if (tid == WG_PRODUCER && c + 1 < nc) /* the next chunk's stage, into chunk c - 1's buffers */
                    wg_issue_stage<DKP, RT>(M, wg_stage<DKP, RT>(sw_raw + ((c + 1) & 1) * SB),
                                            wsn + (int64_t)(c + 1) * SP_WSB, b, tc + TC_C, hk, h, r0, nsl,
                                            &full[(c + 1) & 1]);
                wg_mbar_wait(&full[c & 1], (phase >> (c & 1)) & 1u);
                phase ^= 1u << (c & 1);
                if (nt < TC_C) { /* q rows past the tokens to zero, as warpgroup 0's */
                    for (int e = tid - 128; e < (TC_C - nt) * nsl; e += 128) {
                        const int t = nt + e % (TC_C - nt), u = e / (TC_C - nt);
                        *(uint4 *)(s.Q + u * TC_C * 8 + 8 * t) = make_uint4(0u, 0u, 0u, 0u);
                    }
                    wg_proxy_fence();
                    wg_bar_sync(WG_BAR_L1, 128);
                }
                float acc[RT / 2];
                wg_fence_acc(acc);
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < DKP / 16; kk++)
                    wg_bf16_nr<RT, 0, 1>(acc, wg_desc(s.Q + 2 * kk * TC_C * 8, TC_C * 16u, 128u),
                                         wg_desc(Sb + kk * 2 * RT * 8, RT * 16u, 128u), kk);
                wg_commit_wait();
                wg_fence_acc(acc);
                if (c + 1 < nc) /* done with the copy: the chain may write the next */
                    wg_bar_arrive(WG_BAR_Y, 256);
#pragma unroll
                for (int q = 0; q < RT / 2; q++)
                    acc[q] *= s.sc[2 * TC_C + 16 * w + g + 8 * ((q >> 1) & 1)];
                wg_bar_sync(WG_BAR_D, 256); /* D of chunk c */
                wg_fence_acc(acc);
                wg_fence();
#pragma unroll
                for (int kk = 0; kk < TC_C / 8; kk++)
                    wg_tf32_nr<RT>(acc, wg_desc(s.P + kk * 2 * 32, 128u, 2048u),
                                   wg_desc(Dt + kk * 2 * 32, 128u, 2048u), 1);
                wg_commit_wait();
                wg_fence_acc(acc);
                if (c + 1 < nc) /* done with D: the chain may write the next */
                    wg_bar_arrive(WG_BAR_O, 256);
                sp_store_out<RT / 8>(P, pairs, b, h, r0, rows, tc, nt, 16 * w + g, t4,
                                     [&](int j, int hf, int e) { return acc[4 * j + 2 * hf + e]; });
            }
        }
        __syncthreads(); /* the sequence is done with every buffer before the next one's loads */
    }
}

#endif
