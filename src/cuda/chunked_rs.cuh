/*
 * chunked_rs.cuh — the state pass of the two-pass chunked prefill on wgmma with register-sourced A operands:
 * chunk_split_state_rs_kernel, the second pass of chunk_split_bf16__cuda_wgmma_rs; included by
 * chunked_split.cuh after chunked_wg.cuh (whose mbarrier, tensor-copy and descriptor helpers it uses).
 *
 * Math per chunk, transposed (chunked_split.cuh's notation; S the state tile [64 rows of Dv][Dk], the rows
 * being the products' M dimension, so that every left operand is already in the warpgroup's registers):
 *     X^T = S K^T,  Y^T = S Q^T                   [64][C]  bf16 operands (S rounded to bf16; k, q as given)
 *     R^T = V^T - X^T diag(sk)                    [64][C]  f32, rounded to tf32 (sk = gam ksc)
 *     D^T = R^T (T diag(bt))^T                    [64][C]  tf32 operands (T diag(bt) from the prep)
 *     O^T = Y^T diag(sq) + D^T P^T                [64][C]  bf16 operands (D^T and P rounded to bf16)
 *     S'  = gl S + (D^T diag(cf)) K               [64][Dk] bf16 operands (cf D rounded to bf16)
 * every product with f32 accumulation. S stays f32 in the accumulators across the chunks; its bf16 copy is
 * made in registers (the A fragments of X^T and Y^T), as are R^T's, D^T's and cf D^T's: the accumulator
 * layout of one product is the A fragment layout of the next (bf16: as it stands; tf32: the columns 2t, 2t + 1
 * of a group of 8 are the fragment's t, t + 4, so the prep pass writes T with the summation index permuted the
 * same way, sp_t_base's layout 2; P it writes in bf16, sp_store_p_pair). Only k, q, v, T, P and the scalars
 * come from shared memory.
 *
 * One warpgroup per (value head, 64 state rows, sequence) computes. A chunk's stage: the k and q rows as
 * Dk / 64 boxes of [64 tokens][64 columns] and the v tile as one such box, by tensor copies in the 128-byte
 * swizzle (64 rows of 128 bytes each, 1024-byte aligned: 8 times fewer copy rows than the no-swizzle core
 * layout, and conflict-free for the transposing ldmatrix that reads V^T in fragment order); T, P (the prep's
 * core layouts) and the scalars by bulk copies; all on one mbarrier per stage. NS stages (template):
 *   2 (154 KB at Dk = 128, one CTA per SM; the launcher's choice up to one wave of the SMs): a fifth warp, the
 *     producer (PW), issues every stage's copies as soon as the compute warps release its buffer (an mbarrier
 *     of 128 arrivals per stage, one per compute thread after its last read), two chunks ahead; the compute
 *     warps sync on a named barrier of their own. The copies' issue, one thread's straight-line code,
 *     otherwise delays its warp and with it the chunk's products (B=1 T=4096: this pass 122 -> 102 us with
 *     the producer warp);
 *   1 (86 KB, two CTAs per SM, past one wave): thread 0 issues the next chunk's copies once the chunk is done,
 *     and each CTA waits for them while the other computes (no registers are left for a fifth warp).
 * Y^T is issued after D^T, so that its products do not queue ahead of the chain's (issued right after X^T it
 * measured no faster). bf16 outputs leave by stmatrix.trans into one of two 8 KB tiles in the tensor map's
 * 128-byte swizzle, then by one tensor store per chunk where the outputs' map encodes (H200 B=1 T=4096 120.9 ->
 * 118.1 us, T=32768 810 -> 786, B=64 T=4096 5506 -> 5440 against the 16-byte stores of every thread, which a
 * packed sequence's short last chunk still takes). With the producer warp (po) that warp stores them, two
 * chunks behind the stages it issues: the compute threads stage a chunk's outputs and arrive on an mbarrier
 * (ofull) and go on, the producer releases the tile on another (oempty) once its store has read it (session 30:
 * B=1 T=512 24.96 -> 24.58 us, T=32768 722.5 -> 717.7, B=8 T=4096 668 -> 661, against thread 0's store behind a
 * named barrier of the compute warps, which the one-stage form keeps); other output types through an f32 tile.
 *
 * Assumptions (launch_chunk_split_k): those of chunk_split_ok, bf16 activations, 32 < Dk <= 128 (padded to
 * 64 or 128), T < 2^31, tensor maps that encode, a compute capability 9.x device (the sm_90a code).
 * Accuracy: S, cf D^T, D^T and P rounded to bf16, T to tf32 (nearest, by the prep), R^T to tf32 toward zero
 * (rs_tf32): Qwen layer T = 4096 output relative RMS 3.12e-3 (session 15; slow decay 3.37e-3, fast 2.92e-3;
 * with D^T P^T in tf32 2.61e-3 / 3.12e-3, at 5-12% more time, session 12). TB (precision BF16 asked for,
 * params.chunk_tc 2): T (the prep's layout 3) and R^T in bf16 too, D^T = R^T T^T by 4 bf16 k16 products:
 * 3.57e-3 / 3.88e-3 / 2.91e-3, 1.3-2.1% faster (session 29); TB keeps T unscaled and R^T = V^T diag(bt) - X^T
 * diag(sk) with sk = bt gam ksc, since diag(bt) folded into a bf16 T put a rounding of b on T's diagonal, the
 * dominant term of D, and the T = 4096 error past the 4e-3 bar (slow decay 4.39e-3, session 38).
 * Session 38: diag(bt) folded into the tf32 T (the prep solves for the right-hand side diag(b) I), so that R^T is
 * one FFMA an element without bt's loads: H200 B=1 T=4096 106.7 -> 106.3 us, T=32768 710.9 -> 707.0, B=8 T=4096
 * 680.5 -> 676.4, B=64 T=4096 5486 -> 5432 (three rounds each); errors unchanged (docs/PERF.md).
 * H200, Qwen3.6 layer (docs/PERF.md, sessions 13-15): B=1 T=4096 0.154 ms for both passes in turn (this one
 * 103 us, session 13), 0.132 ms overlapped (P.sp_flags: the producer warp waits for each chunk's prep item, and
 * the pass does not wait for the prep's completion; chunked_split.cuh, sp_item_flag); B=64 T=4096 6.07 ms.
 * The compute warps' instructions per chunk are the cost (one warp per scheduler, about 3 cycles each): the
 * descriptors are made once per chunk (rs_desc) and R^T is not rounded (session 15). A shared-memory load issued
 * while the products stream their operands waits behind them (ncu: 23% of the two-stage loop's stall samples at
 * such loads' first use, session 31), so that kernel loads V^T before X^T and sq before S' are issued. Every
 * wgmma is kept out of flight across branches (loop edges, mbarrier waits): ptxas otherwise serializes all of
 * them (C7518).
 */
#ifndef GDN_CUDA_CHUNKED_RS_CUH
#define GDN_CUDA_CHUNKED_RS_CUH

#define RS_ROWS 64 /* state rows per CTA (the products' M) */

/* d (+)= A B, m64n64k16, bf16; A from registers (a: the fragment of rows 16 w + g (+ 8), columns 2 t (+ 1)
   (+ 8)), B by descriptor, TB: B MN-major. */
template <int TB>
__device__ __forceinline__ void rs_bf16_n64(float (&d)[32], const unsigned (&a)[4], uint64_t b, int scale_d)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %37, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, "
                 "%38;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d), "n"(TB));
#else
    (void)d, (void)a, (void)b, (void)scale_d;
#endif
}
/* d (+)= A B, m64n128k16, as rs_bf16_n64. */
template <int TB>
__device__ __forceinline__ void rs_bf16_n128(float (&d)[64], const unsigned (&a)[4], uint64_t b, int scale_d)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %69, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
                 "%59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
                   "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
                   "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
                   "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d), "n"(TB));
#else
    (void)d, (void)a, (void)b, (void)scale_d;
#endif
}
/* d (+)= A B, m64n64k8, tf32; A from registers (a: rows 16 w + g, + 8 at column t, then the same at t + 4),
   B (K-major) by descriptor. */
__device__ __forceinline__ void rs_tf32_n64(float (&d)[32], const unsigned (&a)[4], uint64_t b, int scale_d)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %37, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d));
#else
    (void)d, (void)a, (void)b, (void)scale_d;
#endif
}
/* The update's product by Dk: m64n64k16 or m64n128k16, B MN-major. */
template <int DKP>
__device__ __forceinline__ void rs_bf16_nk(float (&d)[DKP / 2], const unsigned (&a)[4], uint64_t b)
{
    if constexpr (DKP == 128)
        rs_bf16_n128<1>(d, a, b, 1);
    else
        rs_bf16_n64<1>(d, a, b, 1);
}
template <int N>
__device__ __forceinline__ void rs_wait()
{
#if WG_ARCH
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}
__device__ __forceinline__ void rs_commit()
{
#if WG_ARCH
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}

/* A matrix descriptor at byte offset off (a multiple of 16) into a stage whose shared-memory address, in 16-byte
   units, is sd: leading and stride byte offsets lbo and sbo (with the 128-byte swizzle, sw: between 1024-byte
   atoms of 8 rows of 128 bytes), layout type 1 (bits 62-63) where sw. The bits of wg_desc plus the layout type
   (shared addresses masked to 18 bits are below 2^18, so sd + off / 16 stays within the 14-bit field), with the
   stage's address converted once per chunk: from a generic pointer per product, the conversion and masks took
   7 instructions per wgmma, about a quarter of the compute warps' instructions (SASS, session 15). */
__device__ __forceinline__ uint64_t rs_desc(unsigned sd, unsigned off, unsigned lbo, unsigned sbo, bool sw)
{
    return (uint64_t)(sd + (off >> 4) + ((lbo >> 4) << 16)) | ((uint64_t)((sbo >> 4) | (sw ? 1u << 30 : 0u)) << 32);
}
/* Which descriptor offset steps between the 64-column atoms of an MN-major operand (tests/probe_sm90.cu
   sw128 mnb): the leading one. */
#define RS_MN_LBO 8192u
#define RS_MN_SBO 1024u

/* A float as tf32 operand bits: as it stands, the tensor cores reading the top 19 bits (rounded toward zero; the
   canonical NaN that arithmetic makes, 0x7fffffff, stays a NaN). cvt.rna.tf32.f32, to nearest, is three
   instructions (an infinity test, an add, a mask): 96 per warp and chunk for R^T, an eighth of the compute
   warps' instructions (SASS, session 15). */
__device__ __forceinline__ unsigned rs_tf32(float x)
{
    return __float_as_uint(x);
}

/* The bytes of T a stage brings: tf32, or bf16 (TB, the prep's layout 3: the first half of T's region, all that the
   prep writes there; copying the whole region read 8 KB a chunk that no call writes, most of it from HBM at long
   T, we read: H200 B=1 T=32768 with precision BF16 700.6 -> 693.0 us, PERF.md, session 42). */
__host__ __device__ constexpr int rs_t_bytes(bool tb)
{
    return TC_C * TC_C * (tb ? 2 : 4);
}
/* The bytes a stage's copies bring: the chunk's inputs k, q, v (bf16), and the prep's block: T (rs_t_bytes), P
   (bf16, sp_store_p_pair), the scalars. */
__host__ __device__ constexpr int rs_input_bytes(int dkp)
{
    return 2 * dkp * TC_C * 2 + TC_C * RS_ROWS * 2;
}
__host__ __device__ constexpr int rs_block_bytes(bool tb)
{
    return rs_t_bytes(tb) + TC_C * TC_C * 2 + (4 * TC_C + 4) * 4;
}
__host__ __device__ constexpr int rs_payload(int dkp, bool tb = false)
{
    return rs_input_bytes(dkp) + rs_block_bytes(tb);
}
__host__ __device__ constexpr int rs_stage_bytes(int dkp)
{
    return (rs_payload(dkp) + 1023) / 1024 * 1024;
}
#define RS_LDO (RS_ROWS + 4) /* the outputs' staging rows (f32): the (column g, row 2 t) writes hit 32 banks */
/* ns stages (1: two CTAs fit an SM; 2), the outputs' staging [C][RS_LDO] f32, the stages' mbarriers; and
   1024 bytes to align the base. */
__host__ __device__ constexpr int split_state_rs_smem_bytes(int dkp, int ns)
{
    return ns * rs_stage_bytes(dkp) + TC_C * RS_LDO * 4 + 32 + 1024;
}
/* The byte offsets of a stage's pieces (rs_stage's pointers; rs_desc's offsets). */
template <int DKP>
struct rs_off {
    static constexpr unsigned K = 0, Q = TC_C * DKP * 2, V = 2 * Q, T = V + TC_C * RS_ROWS * 2, P = T + TC_C * TC_C * 4;
};
/* One stage (shared memory, 1024-byte aligned): k, q as DKP / 64 boxes of [C][64] bf16 each (128-byte
   swizzle), the v tile [C][64] likewise, T (tf32, the prep's permuted core layout), P (bf16 core layout), the
   scalars. */
template <int DKP>
struct rs_stage {
    unsigned char *K, *Q, *V;
    float *T, *P, *sc;
    __device__ rs_stage(unsigned char *base)
    {
        using O = rs_off<DKP>;
        K = base + O::K;
        Q = base + O::Q;
        V = base + O::V;
        T = (float *)(base + O::T);
        P = (float *)(base + O::P);
        sc = P + TC_C * TC_C / 2; /* P: bf16 */
    }
};
/* The tensor maps of the k, q and v rows and of the bf16 outputs: boxes of 64 columns x 1 head x C tokens x 1,
   128-byte swizzle. o_ok: the outputs' map encoded (bf16 outputs as rs_out_vec takes them), so whole chunks
   leave the staging tile by one tensor store. */
struct rs_maps {
    CUtensorMap q, k, v, o;
    int o_ok;
};
/* A 4-D box of shared memory (the tensor map's swizzled layout) to global by a tensor store, in this thread's
   bulk group (rs_bulk_commit); the shared reads are done once rs_bulk_wait_read returns. */
__device__ __forceinline__ void rs_tma_store4(const CUtensorMap *map, const void *src, int c0, int c1, int c2, int c3)
{
#if WG_ARCH
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(
                     (uint64_t)map),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"((unsigned)__cvta_generic_to_shared(src))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
/* This thread's tensor stores have read their shared memory (READ) or are complete (global writes done). */
template <bool READ>
__device__ __forceinline__ void rs_bulk_wait()
{
#if WG_ARCH
    if constexpr (READ)
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    else
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}
/* A stage's copies of the chunk's inputs (k, q as DKP / 64 boxes each, the v tile), and of the prep's block (T, P,
   the scalars), completing on bar; the bytes are the caller's to expect. */
template <int DKP>
__device__ __forceinline__ void rs_copy_inputs(const rs_maps &m, const rs_stage<DKP> &s, int64_t b, int64_t tc, int hk,
                                               int h, int r0, uint64_t *bar)
{
#pragma unroll
    for (int x = 0; x < DKP / 64; x++) {
        wg_tma4(s.K + x * 8192, &m.k, 64 * x, hk, (int)tc, (int)b, bar);
        wg_tma4(s.Q + x * 8192, &m.q, 64 * x, hk, (int)tc, (int)b, bar);
    }
    wg_tma4(s.V, &m.v, r0, h, (int)tc, (int)b, bar);
}
template <int DKP, bool TB>
__device__ __forceinline__ void rs_copy_block(const rs_stage<DKP> &s, const float *wsb, uint64_t *bar)
{
    wg_bulk(s.T, wsb, rs_t_bytes(TB), bar);
    wg_bulk(s.P, wsb + TC_C * TC_C, TC_C * TC_C * 2, bar);
    wg_bulk(s.sc, wsb + 2 * TC_C * TC_C, (4 * TC_C + 4) * 4, bar);
}
/* A chunk's stage, issued by one thread: its inputs and the prep's block, all on bar, the whole payload expected
   with the one arrival. Straight-line code with the tensor maps' parameter addresses as constants (a copy per
   lane, choosing its map at run time, made the two-stage kernel spill: B=1 T=4096 17% slower). TB: T in bf16
   (rs_t_bytes). */
template <int DKP, bool TB>
__device__ __forceinline__ void rs_issue_stage(const rs_maps &m, const rs_stage<DKP> &s, const float *wsb, int64_t b,
                                               int64_t tc, int hk, int h, int r0, uint64_t *bar)
{
    wg_mbar_expect(bar, (unsigned)rs_payload(DKP, TB));
    rs_copy_inputs<DKP>(m, s, b, tc, hk, h, r0, bar);
    rs_copy_block<DKP, TB>(s, wsb, bar);
}
/* The same stage in two parts (the overlapped pass's first stages, before their prep items are done): the inputs,
   their bytes expected without an arrival, so that the phase cannot complete before the second part ... */
template <int DKP>
__device__ __forceinline__ void rs_issue_inputs(const rs_maps &m, const rs_stage<DKP> &s, int64_t b, int64_t tc,
                                                int hk, int h, int r0, uint64_t *bar)
{
    wg_mbar_expect_only(bar, (unsigned)rs_input_bytes(DKP));
    rs_copy_inputs<DKP>(m, s, b, tc, hk, h, r0, bar);
}
/* ... and, once the item's flag is seen, the prep's block with the stage's one arrival. */
template <int DKP, bool TB>
__device__ __forceinline__ void rs_issue_block(const rs_stage<DKP> &s, const float *wsb, uint64_t *bar)
{
    wg_mbar_expect(bar, (unsigned)rs_block_bytes(TB));
    rs_copy_block<DKP, TB>(s, wsb, bar);
}
/* The cluster form (CL = 2, one stage; GDN_CUDA_RS_CLUSTER=1, off by default): the two row tiles of a head, a
   cluster of two CTAs, share k, q, T, P and the scalars; each CTA's thread 0 issues its own v tile and half of
   the shared pieces with multicast to both CTAs (rank 0 k and T, rank 1 q, P and the scalars), so they are read
   from L2 once per head. The copies land at the same offsets in both CTAs and signal each CTA's own stage
   barrier, which expects the whole payload; a fill waits until both CTAs released the previous one (an
   mbarrier of two arrivals in each CTA, one from each CTA's thread 0). Measured (H200, B=64 T=4096): 6.71 ms
   against 6.19 without, B=8 856 against 770 us: with one stage the two CTAs move in lockstep, each chunk's
   copies waiting for the slower of the two, which costs more than the L2 reads saved (docs/PERF.md, session
   13). Kept for a form with more stages or a producer warp. */
__device__ __forceinline__ unsigned rs_cluster_rank()
{
    unsigned r = 0;
#if WG_ARCH
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
    return r;
}
/* Every thread of both CTAs: each CTA's earlier shared-memory work (barrier inits, arrivals) before the other's
   later accesses. */
__device__ __forceinline__ void rs_cluster_sync()
{
#if WG_ARCH
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}
/* wg_tma4 and wg_bulk with multicast to the cluster's CTAs in mask (buffers and barriers at dst's and bar's
   offsets in each). */
__device__ __forceinline__ void rs_tma4_mc(void *dst, const CUtensorMap *map, int c0, int c1, int c2, int c3,
                                           uint64_t *bar, unsigned short mask)
{
#if WG_ARCH
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
                 "[%1, {%2, %3, %4, %5}], [%6], %7;" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
                 "r"((unsigned)__cvta_generic_to_shared(bar)), "h"(mask)
                 : "memory");
#endif
}
__device__ __forceinline__ void rs_bulk_mc(void *dst, const void *src, unsigned bytes, uint64_t *bar,
                                           unsigned short mask)
{
#if WG_ARCH
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, "
                 "[%3], %4;" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(bytes), "r"((unsigned)__cvta_generic_to_shared(bar)), "h"(mask)
                 : "memory");
#endif
}
/* One arrival, release at cluster scope, on the mbarrier at bar's offset in the cluster's CTA `rank`. */
__device__ __forceinline__ void rs_mbar_arrive_cl(uint64_t *bar, unsigned rank)
{
#if WG_ARCH
    asm volatile("{\n\t.reg .b32 ra;\n\tmapa.shared::cluster.u32 ra, %0, %1;\n\t"
                 "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}" ::"r"(
                     (unsigned)__cvta_generic_to_shared(bar)),
                 "r"(rank)
                 : "memory");
#endif
}
/* rs_issue_stage's cluster form: this CTA's v tile, and its rank's half of the shared pieces to both CTAs. */
template <int DKP, bool TB>
__device__ __forceinline__ void rs_issue_stage_cl(const rs_maps &m, const rs_stage<DKP> &s, const float *wsb,
                                                  int64_t b, int64_t tc, int hk, int h, int r0, uint64_t *bar,
                                                  unsigned rank)
{
    wg_mbar_expect(bar, (unsigned)rs_payload(DKP, TB));
    wg_tma4(s.V, &m.v, r0, h, (int)tc, (int)b, bar);
    if (rank == 0) {
#pragma unroll
        for (int x = 0; x < DKP / 64; x++)
            rs_tma4_mc(s.K + x * 8192, &m.k, 64 * x, hk, (int)tc, (int)b, bar, 3);
        rs_bulk_mc(s.T, wsb, rs_t_bytes(TB), bar, 3);
    } else {
#pragma unroll
        for (int x = 0; x < DKP / 64; x++)
            rs_tma4_mc(s.Q + x * 8192, &m.q, 64 * x, hk, (int)tc, (int)b, bar, 3);
        rs_bulk_mc(s.P, wsb + TC_C * TC_C, TC_C * TC_C * 2, bar, 3);
        rs_bulk_mc(s.sc, wsb + 2 * TC_C * TC_C, (4 * TC_C + 4) * 4, bar, 3);
    }
}
/* An mbarrier of `count` arrivals; one arrival (release: the arriving thread's reads of the stage are done). */
__device__ __forceinline__ void rs_mbar_init(uint64_t *bar, unsigned count)
{
#if WG_ARCH
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(bar)), "r"(count)
                 : "memory");
#endif
}
__device__ __forceinline__ void rs_mbar_arrive(uint64_t *bar)
{
#if WG_ARCH
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"((unsigned)__cvta_generic_to_shared(bar))
                 : "memory");
#endif
}
/* The compute warpgroup's barrier: with a producer warp (PW) the named barrier 1 of its 128 threads, else the CTA's. */
template <int PW>
__device__ __forceinline__ void rs_sync()
{
    if constexpr (PW)
        asm volatile("bar.sync 1, 128;" ::: "memory");
    else
        __syncthreads();
}
/* ldmatrix.x4.trans: four 8 x 8 16-bit matrices, each lane's row address given; lane (g, t) receives (rows
   2t, 2t + 1, column g) of each. */
__device__ __forceinline__ void rs_ldsm_t4(unsigned (&r)[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
}

/* stmatrix.x4.trans: four 8 x 8 16-bit matrices, each lane's row address given; lane (g, t) holds (rows 2t,
   2t + 1, column g) of each (the inverse of rs_ldsm_t4). */
__device__ __forceinline__ void rs_stsm_t4(void *p, const unsigned (&r)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                     (unsigned)__cvta_generic_to_shared(p)),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}
/* Can the outputs go as 16-byte pieces of 8 bf16 state rows (bf16 output, unit column stride, outer strides
   multiples of 8, a 16-byte aligned base; Dv is a multiple of 8)? */
__host__ __device__ __forceinline__ bool rs_out_vec(const gdn_cuda_params &P)
{
    return P.out && P.out_dtype == GDN_DTYPE_BF16 && P.os[3] == 1 && ((P.os[0] | P.os[1] | P.os[2]) & 7) == 0 &&
           ((uintptr_t)P.out & 15) == 0;
}

/* A staged bf16 output tile (chunk tokens x 64 state rows, rows of 128 bytes with the 16-byte pieces swizzled
   by the row) to the outputs by 16-byte pieces, tokens below nt and state rows below rows: pieces first, first +
   STEP, ... (a token's row per 8 pieces) of the chunk at token tc of batch row b, head h, state row r0. */
template <int STEP>
__device__ __forceinline__ void rs_out_pieces(const gdn_cuda_params &P, const unsigned char *ot, int64_t b, int64_t tc,
                                              int h, int r0, int nt, int rows, int first)
{
    unsigned short *op = (unsigned short *)P.out + b * P.os[0] + tc * P.os[1] + (int64_t)h * P.os[2] + r0;
#pragma unroll
    for (int u = 0; u < TC_C * RS_ROWS / 8 / STEP; u++) {
        const int e = first + STEP * u, t = e >> 3, ch = e & 7;
        const uint4 o = *(const uint4 *)(ot + t * 128 + 16 * (ch ^ (t & 7)));
        if (t < nt && 8 * ch < rows)
            *(uint4 *)(op + t * P.os[1] + 8 * ch) = o;
    }
}

/* Pass 2, register-sourced (see the header). Grid (Hv * ceil(Dv / 64), N); one warpgroup; DKP 64 or 128. */
template <int DKP, int NS, int PW, int CL, bool TB = false>
__global__ void __launch_bounds__(PW ? 160 : 128, 3 - NS)
    chunk_split_state_rs_kernel(const __grid_constant__ gdn_cuda_params P, const __grid_constant__ rs_maps M)
{
    static_assert(CL == 1 || (CL == 2 && NS == 1 && !PW), "chunk_split_state_rs_kernel: clusters with one stage");
    static_assert(DKP == 64 || DKP == 128, "chunk_split_state_rs_kernel: Dk padded to 64 or 128");
    static_assert(TC_C == 64, "chunk_split_state_rs_kernel: 64-token chunks");
    static_assert(NS == 1 || NS == 2, "chunk_split_state_rs_kernel: one or two stages");
    constexpr int SB = rs_stage_bytes(DKP), NK = DKP / 16;
    extern __shared__ __align__(1024) unsigned char rs_raw[];
    /* 1024-byte aligned (the swizzle's atoms), by an offset from the shared array: the compiler keeps its
       accesses shared-memory ones */
    unsigned char *base = rs_raw + ((1024u - ((unsigned)__cvta_generic_to_shared(rs_raw) & 1023u)) & 1023u);
    /* its shared-memory address (masked as wg_desc masks: in a cluster the CTA's window sets higher bits) */
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(base) & 0x3ffffu;
    using O = rs_off<DKP>;
    float *Os = (float *)(base + NS * SB);         /* the outputs, [C][RS_LDO] */
    uint64_t *full = (uint64_t *)(Os + TC_C * RS_LDO); /* a stage has landed */
    uint64_t *empty = full + 2;                        /* PW: the compute threads are done with a stage; CL: both
                                                          CTAs are */
    /* PW with bf16 outputs (po): the producer warp stores each chunk's outputs. ofull[b]: the compute threads have
       staged output buffer b (128 arrivals); oempty[b]: the producer is done reading it (1). In the f32 staging
       rows past the two 8 KB bf16 buffers, which that path does not use. */
    uint64_t *ofull = (uint64_t *)((unsigned char *)Os + 2 * TC_C * RS_ROWS * 2), *oempty = ofull + 2;

    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, t4 = lane & 3;
    const sp_tile ct = sp_tile_of(P, RS_ROWS);
    const int h = ct.h, r0 = ct.r0, hk = ct.hk, rows = ct.rows;
    const int64_t prs = ct.prs, pcs = ct.pcs;
    const bool vec_out = rs_out_vec(P); /* the outputs by 16-byte bf16 pieces */
    const bool tma_out = vec_out && M.o_ok; /* and whole chunks by one tensor store (thread 0, or po's lane 0) */
    const bool po = PW && vec_out;          /* the producer warp stores them (tensor store or pieces) */

    if (tid == 0) {
        wg_mbar_init(&full[0]);
        wg_mbar_init(&full[1]);
        if (PW) {
            rs_mbar_init(&empty[0], 128);
            rs_mbar_init(&empty[1], 128);
            if (po) {
                rs_mbar_init(&ofull[0], 128);
                rs_mbar_init(&ofull[1], 128);
                rs_mbar_init(&oempty[0], 1);
                rs_mbar_init(&oempty[1], 1);
            }
        }
        if (CL == 2)
            rs_mbar_init(&empty[0], 2); /* thread 0 of each CTA */
        wg_mbar_init_fence();
    }
    if constexpr (CL == 2)
        rs_cluster_sync(); /* the other CTA's barriers are initialized before the first copy signals them */
    else
        __syncthreads();
    const unsigned rank = CL == 2 ? rs_cluster_rank() : 0u;
    int fills = 0; /* CL, thread 0: the stage's fills issued */
    /* thread 0's issue of chunk c's stage (CL: once both CTAs released the previous fill) */
    auto issue = [&](const rs_stage<DKP> &st, const float *wsc, int64_t b, int64_t tc, uint64_t *bar) {
        if constexpr (CL == 2) {
            if (fills)
                wg_mbar_wait<true>(&empty[0], (fills - 1) & 1);
            fills++;
            rs_issue_stage_cl<DKP, TB>(M, st, wsc, b, tc, hk, h, r0, bar, rank);
        } else {
            rs_issue_stage<DKP, TB>(M, st, wsc, b, tc, hk, h, r0, bar);
        }
    };
    /* after a chunk's barrier (every read of stage sb done), by thread 0: CL, the release of both CTAs' buffers;
       without a producer warp, chunk c + NS's copies into it */
    auto next_stage = [&](const rs_stage<DKP> &st, const float *wsn, int64_t b, int64_t tc, int c, int nc, int sb) {
        if (CL == 2 && tid == 0) {
            rs_mbar_arrive_cl(&empty[0], 0);
            rs_mbar_arrive_cl(&empty[0], 1);
        }
        if (!PW && tid == 0 && c + NS < nc)
            issue(st, wsn + (int64_t)(c + NS) * SP_WSB, b, tc + NS * TC_C, &full[sb]);
    };
    unsigned phase = 0u; /* bit st: the parity of stage st's next wait */
    /* overlapped with the prep (P.sp_flags, PW only): launched once every prep CTA is past its own wait for
       earlier work, so that work is complete; the prep's items are waited for one by one (sp_flag_wait_warp) */
    const bool ovl = PW && P.sp_flags;
    if (!ovl || P.prep_overlap == 4) /* 4: launched first, on earlier work; the prep is its dependent and */
        grid_dependency_wait();
    if (ovl && P.prep_overlap == 4) { /* launches once every state CTA is past this wait, and counted */
        if (tid == 0)
            sp_state_started(P);
        grid_dependency_trigger();
    } else if (ovl) {
        /* overlapped in the default order (one wave; the persistent prep on the SMs this grid leaves): the stream's
           next kernel may launch now. It lands on the prep's SMs as the prep ends, some microseconds before this
           grid does, and every kernel of this library waits for this grid's completion (griddepcontrol.wait)
           before any access but an L2 prefetch; the next call's persistent prep prefetches its first rows there
           (chunked_prep.cuh). H200 (gdn bench, graphs of calls back to back, two rounds, docs/PERF.md session 44):
           B=1 T=2048 61.5 -> 61.1 us, T=4096 103.6-104.0 -> 102.7-102.8, T=16384 354.9-356.7 -> 351.9-354.0,
           T=32768 690.9-691.3 -> 688.5-689.8; one call a graph, no change (T=4096 105.6-105.7 -> 105.7-105.9);
           the trigger without the prefetch, no gain (T=2048 +0.6). */
        grid_dependency_trigger();
    }
    if (P.checked && __ldcg(&P.words->call_error)) { /* in the state-first order the count cleared as at the end */
        if (ovl && P.prep_overlap == 4 && tid == 0)
            sp_state_done(P, sp_ld_acquire(P.sp_flags));
        return;
    }
    const unsigned gen = ovl && (tid == 0 || tid == 128) ? sp_ld_acquire(P.sp_flags) : 0u;
    if (PW && w == 4) { /* the producer warp: every stage's copies, once the compute warps are done with its buffer */
        int f0 = 0, f1 = 0; /* the fills of stage 0, 1 so far */
        /* po: the outputs of the CTA's chunks in order, two behind the stages (the stage of chunk k + 2 is issued
           once chunk k's products are done, just before its outputs are staged). oq: chunks issued so far, od:
           outputs stored; the two pending chunks' (batch row, first token, tensor store) */
        int oq = 0, od = 0;
        int64_t ob0 = 0, ot0 = 0, ob1 = 0, ot1 = 0;
        int on0 = 0, on1 = 0; /* tokens in the chunk, or -1: by one tensor store */
        /* chunk od's outputs (buffer od & 1, use od >> 1): by one tensor store (nt < 0) or by 16-byte pieces of
           its nt tokens; then the buffer is released */
        auto out_one = [&](int64_t ob, int64_t otc, int nt) {
            const int bf = od & 1;
            unsigned char *ot = (unsigned char *)Os + bf * TC_C * RS_ROWS * 2;
            wg_mbar_wait(&ofull[bf], (od >> 1) & 1);
            if (nt < 0) {
                if (lane == 0) {
                    rs_tma_store4(&M.o, ot, r0, h, (int)otc, (int)ob);
                    rs_bulk_wait<true>();
                }
            } else {
                rs_out_pieces<32>(P, ot, ob, otc, h, r0, nt, rows, lane);
            }
            __syncwarp();
            if (lane == 0)
                rs_mbar_arrive(&oempty[bf]);
            od++;
        };
        /* the prep item of this value head's chunks (chunked_prep.cuh: key head hk, its group of prep_vpc) */
        const int py = hk * (P.ratio / P.prep_vpc) + (P.grouped ? h % P.ratio : h / P.Hk) / P.prep_vpc;
        for (int64_t n = P.n0 + blockIdx.y; n < P.n1; n += gridDim.y) {
            const auto [b, t0, t1, rs, ws, wsn] = sp_seq_of(P, n, h);
            (void)rs, (void)ws;
            const int nc = (int)((t1 - t0 + TC_C - 1) / TC_C);
            const int64_t px = P.cu ? sp_varlen_slot(n, t0) : 0, pz = P.cu ? 0 : n - P.n0;
            /* overlapped, the first stages' inputs (k, q, v, which the prep does not make) are issued at once, and
               their prep blocks once the items' flags are seen, so that the first chunks' v tiles come from HBM
               while the prep's first items run (H200, bench_cuda, means of three rounds: B=1 T=512 24.18 -> 23.98
               us, T=4096 105.68 -> 105.33, T=32768 699.9 -> 698.7; docs/PERF.md, session 42). A CTA's first fills
               (one sequence per CTA: grid y = n1 - n0). */
            const bool early = ovl && f0 == 0 && f1 == 0;
            if (early && lane == 0)
                for (int c = 0; c < NS && c < nc; c++)
                    rs_issue_inputs<DKP>(M, rs_stage<DKP>(base + c * SB), b, t0 + (int64_t)c * TC_C, hk, h, r0,
                                         &full[c]);
            __syncwarp();
            for (int c = 0; c < nc; c++) {
                const int sb = c % NS;
                const int f = sb ? f1 : f0;
                /* the chunk's prep item, the whole warp waiting (converged), before the stage's release: the
                   flag's round trip to L2 then runs while the compute warps still work on the stage (waited
                   after it, B=1 T=32768 took 851 us against 829; docs/PERF.md, session 17) */
                if (ovl)
                    sp_flag_wait_warp(P, sp_item_flag(P, px + c, py, pz), gen + 1u, h, c);
                if (f) /* the compute warps' release of its previous fill */
                    wg_mbar_wait(&empty[sb], (f - 1) & 1);
                f0 += !sb;
                f1 += sb;
                if (lane == 0 && early && c < NS)
                    rs_issue_block<DKP, TB>(rs_stage<DKP>(base + sb * SB), wsn + (int64_t)c * SP_WSB, &full[sb]);
                else if (lane == 0)
                    rs_issue_stage<DKP, TB>(M, rs_stage<DKP>(base + sb * SB), wsn + (int64_t)c * SP_WSB, b,
                                            t0 + (int64_t)c * TC_C, hk, h, r0, &full[sb]);
                __syncwarp();
                if (po) {
                    const int64_t tc = t0 + (int64_t)c * TC_C;
                    const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
                    if (oq >= 2) /* chunk oq - 2's outputs, staged just after this stage's release */
                        out_one(ob0, ot0, on0);
                    ob0 = ob1, ot0 = ot1, on0 = on1;
                    ob1 = b, ot1 = tc, on1 = tma_out && (nt == TC_C || t1 == P.T) ? -1 : nt;
                    oq++;
                }
            }
        }
        if (po) { /* the last two chunks' outputs */
            if (oq >= 2)
                out_one(ob0, ot0, on0);
            if (oq >= 1)
                out_one(ob1, ot1, on1);
            if (lane == 0) /* the outputs written before the CTA's shared memory goes */
                rs_bulk_wait<false>();
        }
        return;
    }
    int oc = 0; /* po: the CTA's chunks so far (output buffer oc & 1, use oc >> 1) */
    for (int64_t n = P.n0 + blockIdx.y; n < P.n1; n += gridDim.y) {
        const auto [b, t0, t1, rs, ws, wsn] = sp_seq_of(P, n, h);
        const int nc = (int)((t1 - t0 + TC_C - 1) / TC_C);
        if (!PW && tid == 0)
            for (int c = 0; c < NS && c < nc; c++)
                issue(rs_stage<DKP>(base + c * SB), wsn + (int64_t)c * SP_WSB, b, t0 + (int64_t)c * TC_C, &full[c]);
        /* S [64][Dk]: rows 16 w + g (+ 8), columns 8 j + 2 t4 (+ 1) at s[4 j + 2 hf + e] */
        float s[DKP / 2];
        tc_pool_io<DKP / 8, false>(P, rs, h, r0, 16 * w + g, rows, 2 * t4, prs, pcs,
                                   [&](int j, int hf) { return &s[4 * j + 2 * hf]; });
        for (int c = 0; c < nc; c++) {
            const int64_t tc = t0 + (int64_t)c * TC_C;
            const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
            const int sb = c % NS; /* the stage's buffer */
            const rs_stage<DKP> st(base + sb * SB);
            const unsigned sd = (sbase + sb * SB) >> 4; /* the stage's address for the descriptors (rs_desc) */
            wg_mbar_wait(&full[sb], (phase >> sb) & 1u);
            phase ^= 1u << sb;
            if (nt < TC_C) { /* a sequence's last, short chunk: k and v rows past its tokens to zero (they may
                                hold another call's data: a count below T); whole 128-byte rows, the swizzle
                                moves pieces within a row only */
                for (int e = tid; e < (TC_C - nt) * 8 * (DKP / 64 + 1); e += 128) {
                    const int t = nt + e / 8 % (TC_C - nt), u = e / 8 / (TC_C - nt), p = e % 8;
                    unsigned char *dst = (u < DKP / 64 ? st.K + u * 8192 : st.V) + t * 128 + 16 * p;
                    *(uint4 *)dst = make_uint4(0u, 0u, 0u, 0u);
                }
                wg_proxy_fence();
                rs_sync<PW>();
            }
            /* V^T in fragment order: matrix (j, hf) = tokens 8 j .., state rows 16 w + 8 hf ..; lane L addresses
               row L % 8 of matrix L / 8 of each x4 (two j, two hf). PW: before X^T is issued, so that the ldmatrix
               does not wait behind X^T's reads of shared memory (with the early sq below: H200 B=1 T=4096 110.1 ->
               108.6 us, T=32768 723 -> 715; issued among X^T's products, its first use took 6% of the chunk's
               stall samples; docs/PERF.md, session 31); the one-stage kernel keeps it after (not measured early) */
            unsigned vt[8][2];
            auto load_vt = [&]() {
#pragma unroll
                for (int jj = 0; jj < 4; jj++) {
                    unsigned r4[4];
                    const int m = lane >> 3, t = 8 * (2 * jj + (m >> 1)) + (lane & 7), ch = 2 * w + (m & 1);
                    rs_ldsm_t4(r4, st.V + t * 128 + 16 * (ch ^ (t & 7)));
                    vt[2 * jj][0] = r4[0];
                    vt[2 * jj][1] = r4[1];
                    vt[2 * jj + 1][0] = r4[2];
                    vt[2 * jj + 1][1] = r4[3];
                }
            };
            if constexpr (PW)
                load_vt();
            /* S's bf16 copy as A fragments: k16 block kk holds columns 16 kk .. 16 kk + 15 */
            unsigned sa[NK][4];
#pragma unroll
            for (int kk = 0; kk < NK; kk++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    sa[kk][q] = sp_bf2(s[8 * kk + 2 * q], s[8 * kk + 2 * q + 1]);
            /* X^T = S K^T (B: the k boxes, K-major; 32 bytes per k16 within a box) */
            float x[32], y[32];
            wg_fence_acc(x);
            wg_fence();
#pragma unroll
            for (int kk = 0; kk < NK; kk++)
                rs_bf16_n64<0>(x, sa[kk], rs_desc(sd, O::K + (kk >> 2) * 8192 + (kk & 3) * 32, 16u, 1024u, true), kk);
            rs_commit();
            if constexpr (!PW) /* meanwhile V^T */
                load_vt();
            rs_wait<0>(); /* X^T */
            wg_fence_acc(x);
            /* R^T = V^T - X^T diag(sk), tf32 (diag(bt) is in the prep's T), as the A fragments of D^T = R^T T^T:
               k8 block j's positions t4, t4 + 4 hold columns 8 j + 2 t4, 8 j + 2 t4 + 1 (T, P permuted alike) */
            /* TB (GDN_PRECISION_BF16): R^T in bf16 instead, the A fragments of D^T = R^T T^T by k16 block */
            unsigned ra[TB ? 4 : 8][4];
            /* one stage (PRE): the update's cf now, while no product reads shared memory, and the outputs' sq
               once D^T is done; loaded where they are used, they waited behind Y^T's and the update's operand
               reads (H200, B=64 T=4096 5.57 -> 5.46-5.47 ms). The two-stage kernel loads cf where it is used: at
               its 250 registers early loads spill (both loaded here: B=1 T=4096 122 -> 129 us; docs/PERF.md, session
               24); sq it loads just before S' is issued (session 31). */
            constexpr bool PRE = !PW && CL == 1;
            float2 cfv[8], sqv[8];
            auto load_sq = [&]() {
#pragma unroll
                for (int j = 0; j < 8; j++)
                    sqv[j] = *(const float2 *)(st.sc + 2 * TC_C + 8 * j + 2 * t4);
            };
            if constexpr (PRE) {
#pragma unroll
                for (int j = 0; j < 8; j++)
                    cfv[j] = *(const float2 *)(st.sc + 3 * TC_C + 8 * j + 2 * t4);
            }
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const float2 sk = *(const float2 *)(st.sc + 8 * j + 2 * t4);
                /* bt: TB only (the tf32 form has diag(bt) in T) */
                const float2 bt = TB ? *(const float2 *)(st.sc + TC_C + 8 * j + 2 * t4) : make_float2(1.f, 1.f);
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    const unsigned v = vt[j][hf];
                    if constexpr (TB) { /* (row 16 w + g + 8 hf, columns 8 j + 2 t4 (+ 1)): k16 block j / 2,
                                           fragment 2 (j & 1) + hf */
                        ra[j >> 1][2 * (j & 1) + hf] =
                            sp_bf2(bt.x * __uint_as_float(v << 16) - sk.x * x[4 * j + 2 * hf],
                                   bt.y * __uint_as_float(v & 0xffff0000u) - sk.y * x[4 * j + 2 * hf + 1]);
                    } else { /* T diag(b) from the prep, sk = gam ksc: one FFMA an element */
                        ra[j][hf] = rs_tf32(fmaf(-sk.x, x[4 * j + 2 * hf], __uint_as_float(v << 16)));
                        ra[j][2 + hf] = rs_tf32(fmaf(-sk.y, x[4 * j + 2 * hf + 1], __uint_as_float(v & 0xffff0000u)));
                    }
                }
            }
            /* D^T = R^T T^T on the chain, then Y^T = S Q^T (off it: its products queue behind D's) */
            float d[32];
            wg_fence_acc(d);
            wg_fence_acc(y);
            wg_fence();
            if constexpr (TB) {
#pragma unroll
                for (int kk = 0; kk < 4; kk++) /* T bf16 in P's layout (the prep's layout 3) */
                    rs_bf16_n64<0>(d, ra[kk], rs_desc(sd, O::T + kk * 256, 128u, 1024u, false), kk);
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++)
                    rs_tf32_n64(d, ra[j], rs_desc(sd, O::T + j * 256, 128u, 2048u, false), j);
            }
            rs_commit();
#pragma unroll
            for (int kk = 0; kk < NK; kk++)
                rs_bf16_n64<0>(y, sa[kk], rs_desc(sd, O::Q + (kk >> 2) * 8192 + (kk & 3) * 32, 16u, 1024u, true), kk);
            rs_commit();
            { /* gl S for the update, off the chain while D^T runs (placed while X^T runs, it made ptxas serialize
                 every wgmma: C7518) */
                const float gl = st.sc[4 * TC_C];
#pragma unroll
                for (int q = 0; q < DKP / 2; q++)
                    s[q] *= gl;
                wg_fence_acc(s);
            }
            rs_wait<1>(); /* D^T */
            wg_fence_acc(d);
            if constexpr (PRE)
                load_sq();
            /* cf D^T (bf16, the update's A fragments: k16 block kk = tokens 16 kk ..), for the update;
               then D^T (tf32, the outputs' A fragments, as R^T's) and Y^T diag(sq) while it runs */
            unsigned da[4][4], dt[8][4];
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const float2 c0 = PRE ? cfv[2 * kk] : *(const float2 *)(st.sc + 3 * TC_C + 16 * kk + 2 * t4);
                const float2 c1 = PRE ? cfv[2 * kk + 1] : *(const float2 *)(st.sc + 3 * TC_C + 16 * kk + 8 + 2 * t4);
                da[kk][0] = sp_bf2(c0.x * d[8 * kk], c0.y * d[8 * kk + 1]);
                da[kk][1] = sp_bf2(c0.x * d[8 * kk + 2], c0.y * d[8 * kk + 3]);
                da[kk][2] = sp_bf2(c1.x * d[8 * kk + 4], c1.y * d[8 * kk + 5]);
                da[kk][3] = sp_bf2(c1.x * d[8 * kk + 6], c1.y * d[8 * kk + 7]);
            }
            if constexpr (PW) /* the outputs' sq before S' reads K (loaded after Y^T's wait, it waited behind those
                                 reads: 9% of the chunk's stall samples; with sk, bt and cf early too, 56 bytes spilled
                                 and no gain) */
                load_sq();
            wg_fence();
            /* S' = gl S + (cf D^T) K (B: the k boxes MN-major, 16 tokens = 2048 bytes per k16) */
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
                rs_bf16_nk<DKP>(s, da[kk], rs_desc(sd, O::K + kk * 2048, RS_MN_LBO, RS_MN_SBO, true));
            rs_commit();
            /* D^T in bf16 (the outputs' A fragments, as cf D^T's without cf) */
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    dt[kk][q] = sp_bf2(d[8 * kk + 2 * q], d[8 * kk + 2 * q + 1]);
            rs_wait<1>(); /* Y^T (committed before the update) */
            wg_fence_acc(y);
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const float2 sq = PRE || PW ? sqv[j] : *(const float2 *)(st.sc + 2 * TC_C + 8 * j + 2 * t4);
                y[4 * j] *= sq.x;
                y[4 * j + 1] *= sq.y;
                y[4 * j + 2] *= sq.x;
                y[4 * j + 3] *= sq.y;
            }
            wg_fence_acc(y);
            wg_fence();
            /* O^T = Y^T diag(sq) + D^T P^T */
#pragma unroll
            for (int kk = 0; kk < 4; kk++) /* P bf16, the no-swizzle K-major core layout, 256 bytes per k16 */
                rs_bf16_n64<0>(y, dt[kk], rs_desc(sd, O::P + kk * 256, 128u, 1024u, false), 1);
            rs_commit();
            rs_wait<0>();
            wg_fence_acc(s);
            wg_fence_acc(y);
            if (PW) /* the stage's buffer is free for the producer: each thread's reads of it are done */
                rs_mbar_arrive(&empty[sb]);
            /* O^T to the staging rows [token][state row]; then the stage's buffers are free: chunk c + NS's
               copies go into them while the outputs are stored */
            if (vec_out) { /* bf16, by the transposing stmatrix into one of two 8 KB buffers (rows of 128 bytes, the
                            16-byte pieces swizzled by the row: conflict-free both ways, and the tensor map's
                            128-byte swizzle), one barrier per chunk (po: an mbarrier arrival instead) */
                unsigned char *ot = (unsigned char *)Os + ((po ? oc : c) & 1) * TC_C * RS_ROWS * 2;
                if (po && oc >= 2) /* the producer is done with the buffer's last chunk */
                    wg_mbar_wait(&oempty[oc & 1], ((oc >> 1) - 1) & 1);
#pragma unroll
                for (int jj = 0; jj < 4; jj++) {
                    const int m = lane >> 3, t = 8 * (2 * jj + (m >> 1)) + (lane & 7), ch = 2 * w + (m & 1);
                    const unsigned r4[4] = {sp_bf2(y[8 * jj], y[8 * jj + 1]), sp_bf2(y[8 * jj + 2], y[8 * jj + 3]),
                                            sp_bf2(y[8 * jj + 4], y[8 * jj + 5]), sp_bf2(y[8 * jj + 6], y[8 * jj + 7])};
                    rs_stsm_t4(ot + t * 128 + 16 * (ch ^ (t & 7)), r4);
                }
                if (po) { /* to the producer warp, which stores them */
                    wg_proxy_fence(); /* this thread's writes, before the tensor store reads them */
                    rs_mbar_arrive(&ofull[oc & 1]);
                    oc++;
                    continue;
                }
                if (tma_out) {
                    wg_proxy_fence(); /* the tile's writes, before the tensor store reads it */
                    if (tid == 0)     /* the last chunk's store has read its buffer, which chunk c + 1 fills */
                        rs_bulk_wait<true>();
                }
                rs_sync<PW>();
                next_stage(st, wsn, b, tc, c, nc, sb);
                /* one tensor store where the tile ends at the chunk or at the tensor's last token (the map
                   drops tokens past it, and rows past Dv); else (a packed sequence's short last chunk) by
                   pieces */
                if (tma_out && (nt == TC_C || t1 == P.T)) {
                    if (tid == 0)
                        rs_tma_store4(&M.o, ot, r0, h, (int)tc, (int)b);
                    continue;
                }
                rs_out_pieces<128>(P, ot, b, tc, h, r0, nt, rows, tid);
                continue;
            }
#pragma unroll
            for (int j = 0; j < 8; j++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    Os[(8 * j + 2 * t4 + (q & 1)) * RS_LDO + 16 * w + g + 8 * (q >> 1)] = y[4 * j + q];
            rs_sync<PW>();
            next_stage(st, wsn, b, tc, c, nc, sb);
            if (P.out) {
                for (int e = tid; e < nt * (RS_ROWS / 4); e += 128) {
                    const int t = e / (RS_ROWS / 4), r = 4 * (e % (RS_ROWS / 4));
                    const float4 o = *(const float4 *)(Os + t * RS_LDO + r);
                    if (r >= rows)
                        continue;
                    const int64_t oi = b * P.os[0] + (tc + t) * P.os[1] + (int64_t)h * P.os[2];
                    const float ov[4] = {o.x, o.y, o.z, o.w};
                    for (int u = 0; u < 4 && r + u < rows; u++)
                        st_elem(P.out, P.out_dtype, oi + (int64_t)(r0 + r + u) * P.os[3], ov[u]);
                }
            }
            rs_sync<PW>(); /* the staging rows are read before the next chunk writes them */
        }
        if (ws >= 0 && !(t1 == t0 && ws == rs))
            tc_pool_io<DKP / 8, true>(P, ws, h, r0, 16 * w + g, rows, 2 * t4, prs, pcs,
                                      [&](int j, int hf) { return &s[4 * j + 2 * hf]; });
        if (tma_out && !po && tid == 0) /* the next sequence's chunk 0 fills buffer 0 again */
            rs_bulk_wait<true>();
        rs_sync<PW>(); /* the sequence is done with every buffer before the next one's copies */
    }
    if (tma_out && !po && tid == 0) /* the outputs written before the CTA's shared memory goes */
        rs_bulk_wait<false>();
    if (ovl && tid == 0) /* past its last chunk: every copy issued, every flag read */
        sp_state_done(P, gen);
    if constexpr (CL == 2)
        rs_cluster_sync(); /* no arrival from the other CTA is still on its way here */
}

#endif
