/*
 * chunked_split.cuh — chunkwise prefill on tensor cores in two passes (research/ALGORITHM.md sections 1-2):
 * chunk_split_tf32__cuda_mma, included by recurrent.cu after chunked_tc.cuh (whose helpers it uses).
 *
 * Why: chunk_tc_kernel does every chunk's key-side work (norms, K K^T, Q K^T, the inverses) in the serial
 * chunk-to-chunk chain, and each of a head's row tiles repeats it (docs/DESIGN.md). Here that work runs for
 * all chunks at once in a first pass, and the serial pass reads small per-chunk matrices beside the raw
 * inputs, the next chunk's brought in while the current one computes.
 *
 * Math per (sequence, value head), chunk of nt <= TC_C tokens (notation of chunked_tc.cuh: k, q the raw
 * rows, ksc, qsc their norm scales (qsc with the attention scale), c_t the running sums of the clamped log
 * decays within the chunk, gam_t = exp(c_t), G[i][j] = exp(c_i - c_j)):
 *     A[i][j] = b_i G[i][j] ksc_i ksc_j (k_i . k_j)   (i > j),  T = (I + A)^-1      [C][C]
 *     P[i][j] = G[i][j] qsc_i ksc_j (q_i . k_j)       (j <= i)                      [C][C]
 *     sk = b gam ksc, bt = b, sq = gam qsc, cf_j = G[nt-1][j] ksc_j, gl = gam_{nt-1}  [C] each
 * and then, with the state S [Dv][Dk] entering the chunk,
 *     R  = diag(bt) V - diag(sk) K S^T     D = T R     (the deltas, as chunk_tc's solve)
 *     O  = diag(sq) Q S^T + P D
 *     S' = gl S + (diag(cf) D)^T K
 * Pass 1, chunk_split_prep_kernel (chunked_prep.cuh): one CTA of 8 warps per (chunk, key head, sequence),
 * all at once: the norms, K K^T, Q K^T once for the value heads that share the key head, then per value head
 * the decays, L, P and T; T, P and the scalars go to the context's workspace, SP_WSB floats per chunk and value
 * head, in the layout of the state pass that reads them. At small batch the two passes overlap (sp_item_flag):
 * the prep a persistent grid on the SMs the state pass leaves, flagging each item as it is done.
 * Pass 2, chunk_split_state_kernel: one CTA of 8 warps per (value head, TC_R state rows, sequence),
 * walking the chunks with two stages of shared memory: the next chunk's raw k, q rows, v tile, T, P and
 * scalars come by cp.async while the current one computes. Per chunk: warps 0-3 K S^T and R (16 tokens
 * each), warps 4-7 Q S^T; barrier; D = T R (every warp, 16 x 16); barrier; warps 4-7 the outputs, warps
 * 0-3 the state update (the state in f32 accumulator fragments across chunks, as chunk_tc).
 *
 * Assumptions (chunk_split_ok): as chunk_tc_kernel (no capture), Dk <= 128, plus a dense or packed batch
 * (batch.num_tokens allowed; a packed one in one group, its chunks in workspace slots, sp_varlen_slot), bf16
 * or f16 activations with q, k, v rows of unit stride, 16-byte
 * aligned (Dk, Dv and the outer strides multiples of 8 elements), N <= 65535, and a workspace of
 * Hv ceil(T / C) SP_WSB floats per sequence (the context's, GDN_CUDA_CHUNK_WS_MB; the launcher takes the
 * sequences in groups that fit it; without one, chunk_tc_kernel runs). Gate values must give decays in [0, 1].
 * H200, Qwen3.6 layer, B=1 T=4096: 0.39 ms (chunk_tc_kernel 0.86 ms; docs/PERF.md, session 8).
 */
#ifndef GDN_CUDA_CHUNKED_SPLIT_CUH
#define GDN_CUDA_CHUNKED_SPLIT_CUH

/* Workspace floats per chunk and value head: T, P, sk, bt, sq, cf, gl at SP_GL, then zeros to the end of gl's 32-byte
   sector (written by the prep) and padding to a whole number of 128-byte lines. So every block starts on a line and
   no copy of the state pass reads a sector that the prep wrote only in part (or never): measured on the H200 against
   blocks of 2 C^2 + 4 C + 4 floats, whose gl shared a sector with unwritten padding or with the next block (PERF.md,
   session 42, bench_cuda, means of three rounds): B=1 T=32768 706.2 -> 693.7 us, T=4096 106.5 -> 105.7, B=8 T=4096
   668.7 -> 648.6, B=64 T=4096 5417 -> 5294. */
#define SP_GL (2 * TC_C * TC_C + 4 * TC_C)
#define SP_WSB (SP_GL + 32)
#define SP_LDX (TC_C + 4)   /* the solve's strips, transposed (ldmatrix rows hit 32 banks) */
#define SP_LDV16 (TC_R + 8) /* a stage's v tile rows (16-bit) */
#define SP_LDP (TC_C + 8) /* a stage's P rows: the 8-byte (row g, columns 2t, 2t + 1) reads hit 32 banks */
#define SP_LDD (TC_R + 4) /* D rows: the (rows 2t, 2t + 1, column g) reads hit 32 banks */

/* The first chunk slot of sequence n in a packed batch (cu_seqlens), its tokens starting at t0 = cu[n]:
   floor((t0 + n (C - 1)) / C). Each sequence's ceil(len / C) chunks fit between its slot and the next
   sequence's (floor(a + b) >= floor(a) + floor(b)); all of them below floor((T + N (C - 1)) / C) + 1. */
__host__ __device__ __forceinline__ int64_t sp_varlen_slot(int64_t n, int64_t t0)
{
    return (t0 + n * (TC_C - 1)) / TC_C;
}
/* The workspace block of sequence n's value head h, chunk 0 (chunk c's is SP_WSB c floats on); t0, t1 its
   tokens (seq_tokens). A dense batch: ceil(T / C) chunks per head and sequence, the launcher's group starting
   at sequence P.n0 (chunk_split_seq_floats is one sequence's share). A packed one (one group): from its
   first chunk slot (sp_varlen_slot) on, Hv blocks per slot, ceil((t1 - t0) / C) chunks per head. */
__device__ __forceinline__ float *sp_ws_head(const gdn_cuda_params &P, int64_t n, int h, int64_t t0, int64_t t1)
{
    if (P.cu)
        return P.ws + (sp_varlen_slot(n, t0) * P.Hv + (int64_t)h * ((t1 - t0 + TC_C - 1) / TC_C)) * SP_WSB;
    return P.ws + ((n - P.n0) * P.Hv + h) * ((P.T + TC_C - 1) / TC_C) * SP_WSB;
}

/* A state pass's sequence n: its batch row and tokens (seq_tokens), read and write slots, and the workspace
   blocks of its value head h (sp_ws_head). */
struct sp_seq {
    int64_t b, t0, t1, rs, ws;
    const float *wsn;
};
__device__ __forceinline__ sp_seq sp_seq_of(const gdn_cuda_params &P, int64_t n, int h)
{
    sp_seq s;
    seq_tokens(P, n, &s.b, &s.t0, &s.t1);
    s.rs = seq_read_slot(P, n);
    s.ws = seq_write_slot(P, n);
    s.wsn = sp_ws_head(P, n, h, s.t0, s.t1);
    return s;
}

/* A state pass CTA's tile of rt state rows (blockIdx.x over Hv x ceil(Dv / rt)): value head h, its key head hk,
   state rows r0 .. r0 + rows - 1, and the pool's strides along those rows and along Dk. */
struct sp_tile {
    int h, hk, r0, rows;
    int64_t prs, pcs;
};
__device__ __forceinline__ sp_tile sp_tile_of(const gdn_cuda_params &P, int rt)
{
    sp_tile t;
    const int tiles = (P.Dv + rt - 1) / rt;
    t.h = (int)(blockIdx.x / tiles);
    t.r0 = (int)(blockIdx.x % tiles) * rt;
    t.hk = P.grouped ? t.h / P.ratio : t.h % P.Hk;
    t.rows = P.Dv - t.r0 < rt ? P.Dv - t.r0 : rt;
    t.prs = P.kv_layout ? P.ps[3] : P.ps[2];
    t.pcs = P.kv_layout ? P.ps[2] : P.ps[3];
    return t;
}

#define SP_LOG2E 1.4426950408889634f /* exp(x) = 2^(x log2(e)) */
/* 2^x (ex2.approx, as __expf takes it; 2^-inf = 0). */
__device__ __forceinline__ float sp_ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
/* Two f32 values as one bf16 pair (lo, hi). */
__device__ __forceinline__ unsigned sp_bf2(float lo, float hi)
{
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(const unsigned *)&v;
}
/* Can the outputs go as bf16 pairs, one 32-bit store per two columns (bf16 output, unit column stride, even
   outer strides, a 4-byte aligned base)? The state passes' column pairs start at even columns. */
__device__ __forceinline__ bool sp_out_pairs(const gdn_cuda_params &P)
{
    return P.out && P.out_dtype == GDN_DTYPE_BF16 && P.os[3] == 1 && ((P.os[0] | P.os[1] | P.os[2]) & 1) == 0 &&
           ((uintptr_t)P.out & 3) == 0;
}
/* A warp's share of a chunk's outputs in the state passes: token rows i0 and i0 + 8 of the chunk starting at
   token tc (those below nt), state-tile columns 8 j + 2 t4 and the next for j < NJ (those below rows, a multiple
   of 8), of head h's rows r0 ..; x(j, hf, e) the value at (row i0 + 8 hf, column 8 j + 2 t4 + e). pairs:
   sp_out_pairs. */
template <int NJ, class X>
__device__ __forceinline__ void sp_store_out(const gdn_cuda_params &P, bool pairs, int64_t b, int h, int r0, int rows,
                                             int64_t tc, int nt, int i0, int t4, X x)
{
    if (pairs) {
        unsigned short *ob = (unsigned short *)P.out + b * P.os[0] + (int64_t)h * P.os[2] + r0;
#pragma unroll
        for (int hf = 0; hf < 2; hf++)
            if (i0 + 8 * hf < nt) {
                unsigned short *oi = ob + (tc + i0 + 8 * hf) * P.os[1];
#pragma unroll
                for (int j = 0; j < NJ; j++) {
                    const int r = 8 * j + 2 * t4;
                    if (r < rows)
                        *(unsigned *)(oi + r) = sp_bf2(x(j, hf, 0), x(j, hf, 1));
                }
            }
    } else if (P.out) {
        const int64_t ob = b * P.os[0] + (int64_t)h * P.os[2] + (int64_t)r0 * P.os[3];
#pragma unroll
        for (int hf = 0; hf < 2; hf++)
            if (i0 + 8 * hf < nt) {
                const int64_t oi = ob + (tc + i0 + 8 * hf) * P.os[1];
#pragma unroll
                for (int j = 0; j < NJ; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int r = 8 * j + 2 * t4 + e;
                        if (r < rows)
                            st_elem(P.out, P.out_dtype, oi + r * P.os[3], x(j, hf, e));
                    }
            }
    }
}

/* The two passes overlapped (launch_chunk_split_k: calls whose state pass fits one wave of the SMs). The prep
   runs as a persistent grid whose CTAs take its items (chunk, key head group, sequence) chunk by chunk, and it
   lets the state pass launch once each of its CTAs has started (griddepcontrol.launch_dependents); the state
   pass then waits for each chunk's item by a flag instead of for the prep's completion. The state pass never
   blocks the prep (every prep CTA is resident before it launches, and the prep waits on nothing), so the wait
   ends. Words (P.sp_flags, zeroed when allocated): [0] the generation g of the call, [1] the state CTAs
   finished, [2 + i] item i's flag (sp_item_flag), and the last word of the buffer the state CTAs started in
   the state-first order (P.prep_overlap 4, sp_started). An item done in generation g sets its flag to g + 1
   (release); the last state CTA to finish clears [1] and moves [0] to g + 1 (the flags of earlier calls are
   g at most, so nothing is reset per call, and a graph replays as it was captured). */
/* Item (x chunk or chunk slot, y key head group, z sequence of the group)'s flag: items in the order the
   persistent prep takes them, chunk by chunk. */
__device__ __forceinline__ unsigned *sp_item_flag(const gdn_cuda_params &P, int64_t x, int y, int64_t z)
{
    return P.sp_flags + 2 + (x * (P.cu ? 1 : P.n1 - P.n0) + z) * P.prep_gy + y;
}
__device__ __forceinline__ unsigned sp_ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void sp_st_release(unsigned *p, unsigned v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/* Wait (a whole warp, converged: lane 0 polls, the warp loops on its answer) until flag f reads want; then the
   workspace the item wrote may be read, by tensor or bulk copies too (the proxy fence orders the acquire before
   the warp's later async-proxy reads). A wait past SP_WAIT_NS (by the global timer; it cannot happen unless
   something is broken: every prep CTA runs while this one waits) records GDN_CUDA_ERR_PREP_WAIT in the
   context's words, for gdn_context_synchronize to report, and goes on: the call ends, its results not valid,
   rather than the GPU hanging. h, c: the value head and chunk, for the record. */
__device__ __forceinline__ void sp_flag_wait_warp(const gdn_cuda_params &P, const unsigned *f, unsigned want, int h,
                                                  int64_t c)
{
    const bool l0 = (threadIdx.x & 31) == 0;
    if (!__shfl_sync(0xffffffffu, l0 && sp_ld_acquire(f) == want, 0)) {
        uint64_t t0 = 0;
        if (l0)
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        for (;;) {
            __nanosleep(64);
            unsigned have = 0u;
            bool late = false;
            if (l0) {
                uint64_t t;
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
                have = sp_ld_acquire(f);
                late = have != want && t - t0 > SP_WAIT_NS;
                if (late && atomicCAS(&P.words->first.code, GDN_CUDA_ERR_NONE, GDN_CUDA_ERR_PREP_WAIT) ==
                                GDN_CUDA_ERR_NONE) {
                    P.words->first.sub = 0;
                    P.words->first.index = c;
                    P.words->first.value = want;
                    P.words->first.seq = h;
                    P.words->first.other = have;
                }
            }
            if (__shfl_sync(0xffffffffu, l0 && (have == want || late), 0))
                break;
        }
    }
    asm volatile("fence.proxy.async.global;" ::: "memory");
}
/* The barrier of a prep item's 256 threads: the CTA's (NG = 1), or named barrier 1 + grp of the NG groups of
   8 warps that work items side by side in one CTA (chunked_prep.cuh: grp is the block's y index). */
template <int NG>
__device__ __forceinline__ void sp_group_sync(int grp)
{
    if constexpr (NG == 1)
        __syncthreads();
    else
        asm volatile("bar.sync %0, %1;" ::"r"(1 + grp), "n"(TC_THREADS) : "memory");
}
/* Every thread of a prep item's group (tid of its 256, group grp of NG: chunked_prep.cuh, sp_group_sync)
   after item i's last workspace store: its flag set to g + 1 (a barrier, then one release store; the
   generation is read again here, constant until the state pass ends, which is after this item's flag; the
   group's shared memory is free for its next item after the barrier). */
template <int NG>
__device__ __forceinline__ void sp_flag_publish(const gdn_cuda_params &P, int64_t i, int tid, int grp)
{
    asm volatile("fence.proxy.async.global;" ::: "memory");
    __threadfence();
    sp_group_sync<NG>(grp);
    if (tid == 0)
        sp_st_release(P.sp_flags + 2 + i, sp_ld_acquire(P.sp_flags) + 1u);
}
/* The state-first order's count of state CTAs past their wait for earlier work (the buffer's last word). */
__device__ __forceinline__ unsigned *sp_started(const gdn_cuda_params &P)
{
    return P.sp_flags + P.sp_flag_words - 1;
}
/* One thread of each state CTA once its last chunk is done: the CTA counted; the last of the grid's moves the
   generation on (every CTA read it at its start, and every prep item was flagged before its chunk ran), and in
   the state-first order clears the started count first. */
__device__ __forceinline__ void sp_state_done(const gdn_cuda_params &P, unsigned gen)
{
    __threadfence();
    if (atomicAdd(P.sp_flags + 1, 1u) == gridDim.x * gridDim.y - 1u) {
        atomicExch(P.sp_flags + 1, 0u);
        if (P.prep_overlap == 4) /* every prep CTA has read it: each read it before its item, waited for here */
            atomicExch(sp_started(P), 0u);
        __threadfence();
        sp_st_release(P.sp_flags, gen + 1u);
    }
}

/* One thread of each state CTA in the state-first order, past its wait for earlier work: counted with release
   semantics, so that a prep CTA that reads the whole count (sp_wait_state_started) is ordered after that work. */
__device__ __forceinline__ void sp_state_started(const gdn_cuda_params &P)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(sp_started(P)) : "memory");
}
/* One thread of each prep CTA in the state-first order, before it reads anything: until every state CTA
   (`ctas`) is counted (they all are once this grid has launched: each counts itself before it triggers). */
__device__ __forceinline__ void sp_wait_state_started(const gdn_cuda_params &P, unsigned ctas)
{
    while (sp_ld_acquire(sp_started(P)) < ctas)
        __nanosleep(32);
}
/* One thread of the state-first order's prep (P.prep_overlap 4: the prep launched as the state pass's dependent,
   so the stream's next kernel waits for the prep alone): wait until the state pass has moved the generation on
   from gen (sp_state_done, after every state CTA's last chunk and stores), so that the prep grid ends after it.
   The state pass always gets there: its waits for prep items are bounded (sp_flag_wait_warp). */
__device__ __forceinline__ void sp_wait_state_done(const gdn_cuda_params &P, unsigned gen)
{
    while (sp_ld_acquire(P.sp_flags) == gen)
        __nanosleep(256);
}

#include "chunked_wg.cuh" /* the state pass on wgmma, and the core layout the prep pass writes for it */
#include "chunked_rs.cuh" /* the state pass on wgmma with register-sourced operands (layout 2) */

__host__ __device__ constexpr int sp_ld16(int dkp)
{
    return dkp + 8; /* 16-bit k, q rows: 16-byte aligned; the (row g, pair t) words hit 32 banks */
}
/* Bytes of one stage of the state pass: k, q rows, v tile (16-bit), T, P and the scalars (f32). */
__host__ __device__ constexpr int sp_stage_bytes(int dkp)
{
    return 2 * TC_C * sp_ld16(dkp) * 2 + TC_C * SP_LDV16 * 2 + TC_C * (TC_LDA + SP_LDP) * 4 + (4 * TC_C + 4) * 4;
}
/* The prep pass's first region: the raw k, q rows, then L and the solve's blocks over them. */
__host__ __device__ constexpr int split_prep_rows_bytes(int dkp)
{
    return 2 * TC_C * sp_ld16(dkp) * 2 > TC_C * (TC_LDA + SP_LDX) * 4 ? 2 * TC_C * sp_ld16(dkp) * 2
                                                                     : TC_C * (TC_LDA + SP_LDX) * 4;
}
/* Then the diagonal inverses and six [C] scalar rows (chunked_prep.cuh, sp_prep_item). */
__host__ __device__ constexpr int split_prep_smem_bytes(int dkp)
{
    return split_prep_rows_bytes(dkp) + (TC_C * TC_LDT + 6 * TC_C) * 4;
}
__host__ __device__ constexpr int split_state_smem_bytes(int dkp)
{
    return 2 * sp_stage_bytes(dkp) + (TC_R * tc_ldk(dkp) + TC_C * (TC_LDV + SP_LDD)) * 4;
}

/* 16 bytes global -> shared, asynchronously (zeros when !valid: nothing is read, src may be any address). */
__device__ __forceinline__ void sp_cp16(void *dst, const void *src, bool valid)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
/* cp.async of 16 bytes (zero-filled where !valid) with an L2 evict-last policy (pol: sp_policy_evict_last). */
__device__ __forceinline__ void sp_cp16_keep(void *dst, const void *src, bool valid, uint64_t pol)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;" ::"r"(d), "l"(src),
                 "r"(valid ? 16 : 0), "l"(pol)
                 : "memory");
}
__device__ __forceinline__ uint64_t sp_policy_evict_last()
{
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
__device__ __forceinline__ void sp_commit()
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void sp_wait()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/* Two 16-bit values (one 32-bit word: lo, hi) as tf32 operand bits (exact: bf16 and f16 fit tf32). */
template <bool F16>
__device__ __forceinline__ void sp_pair(unsigned w, unsigned *lo, unsigned *hi)
{
    if constexpr (F16) {
        const float2 f = __half22float2(*(const __half2 *)&w);
        *lo = __float_as_uint(f.x);
        *hi = __float_as_uint(f.y);
    } else {
        *lo = w << 16;
        *hi = w & 0xffff0000u;
    }
}
/* c += a b, m16n8k16, 16-bit operands (bf16, or f16 with F16), f32 accumulation: a holds (row g, columns
   2t, 2t + 1), (row g + 8, the same), (row g, columns 2t + 8, 2t + 9), (row g + 8, the same); b (rows 2t, 2t + 1,
   column g), (rows 2t + 8, 2t + 9, column g); c as mma_tf32's. */
template <bool F16>
__device__ __forceinline__ void sp_mma16(float c[4], const unsigned a[4], const unsigned b[2])
{
    if constexpr (F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* frag_a2 (chunked_tc.cuh: the pair (t, t + 4) of a product over Dk from columns (2t, 2t + 1)) of a 16-bit
   row-major matrix (ld elements per row). */
template <bool F16>
__device__ __forceinline__ void sp_frag_a2(unsigned a[4], const unsigned short *M, int ld, int r0, int k0, int g, int t)
{
    sp_pair<F16>(*(const unsigned *)(M + (r0 + g) * ld + k0 + 2 * t), &a[0], &a[2]);
    sp_pair<F16>(*(const unsigned *)(M + (r0 + g + 8) * ld + k0 + 2 * t), &a[1], &a[3]);
}

/* chunked_rs.cuh's state CTAs for n sequences of the call (a CTA per value head and RS_ROWS state rows). */
__host__ __device__ __forceinline__ int64_t rs_state_ctas(const gdn_cuda_params *p, int64_t n)
{
    return p->Hv * ((p->Dv + RS_ROWS - 1) / RS_ROWS) * n;
}

#include "chunked_prep.cuh" /* pass 1: chunk_split_prep_kernel */

/* One stage of the state pass (shared memory): chunk tc's raw k, q rows and v tile, T, P and the scalars. */
template <int DKP>
struct sp_stage {
    unsigned short *K, *Q, *V;
    float *T, *P, *sc;
    __device__ sp_stage(unsigned char *base)
    {
        K = (unsigned short *)base;
        Q = K + TC_C * sp_ld16(DKP);
        V = Q + TC_C * sp_ld16(DKP);
        T = (float *)(V + TC_C * SP_LDV16);
        P = T + TC_C * TC_LDA;
        sc = P + TC_C * SP_LDP;
    }
};
/* A thread's share of a stage's copies, the parts fixed for a sequence (sp_feed_init) and per chunk
   (sp_issue_stage): k, q rows tk + u RS at columns ck; v row tv at tile columns rv; T, P and the scalars
   from the chunk's workspace block. */
template <int DKP>
struct sp_feed {
    static constexpr int PR = DKP / 8, RS = TC_THREADS / PR; /* 16-byte pieces per row; rows per pass */
    const unsigned short *k, *q, *v;                        /* at the sequence's row, head and the columns */
    int64_t k1, q1, v1;                                     /* token strides */
    int tk, ck, tv, rv;
    bool kok, vok;                                          /* columns within Dk, Dv */
};
template <int DKP>
__device__ __forceinline__ sp_feed<DKP> sp_feed_init(const gdn_cuda_params &P, int64_t b, int h, int hk, int r0)
{
    sp_feed<DKP> f;
    const int tid = threadIdx.x;
    f.tk = tid / sp_feed<DKP>::PR;
    f.ck = 8 * (tid % sp_feed<DKP>::PR);
    f.tv = tid / (TC_R / 8);
    f.rv = 8 * (tid % (TC_R / 8));
    f.kok = f.ck < P.Dk;
    f.vok = r0 + f.rv < P.Dv;
    f.k = (const unsigned short *)P.k + b * P.ks[0] + (int64_t)hk * P.ks[2] + f.ck;
    f.q = (const unsigned short *)P.q + b * P.qs[0] + (int64_t)hk * P.qs[2] + f.ck;
    f.v = (const unsigned short *)P.v + b * P.vs[0] + (int64_t)h * P.vs[2] + r0 + f.rv;
    f.k1 = P.ks[1];
    f.q1 = P.qs[1];
    f.v1 = P.vs[1];
    return f;
}
template <int DKP>
__device__ __forceinline__ void sp_issue_stage(const sp_feed<DKP> &f, const sp_stage<DKP> &s, const float *wsb,
                                               int64_t tc, int nt)
{
    constexpr int LD = sp_ld16(DKP);
    static_assert(TC_C * TC_R / 8 == TC_THREADS, "sp_issue_stage: one v piece per thread");
    const unsigned short *kp = f.k + (tc + f.tk) * f.k1, *qp = f.q + (tc + f.tk) * f.q1;
#pragma unroll
    for (int u = 0; u < TC_C / sp_feed<DKP>::RS; u++) {
        const int t = f.tk + u * sp_feed<DKP>::RS;
        const bool ok = f.kok && t < nt;
        sp_cp16(s.K + t * LD + f.ck, ok ? kp + (int64_t)u * sp_feed<DKP>::RS * f.k1 : f.k, ok);
        sp_cp16(s.Q + t * LD + f.ck, ok ? qp + (int64_t)u * sp_feed<DKP>::RS * f.q1 : f.q, ok);
    }
    {
        const bool ok = f.vok && f.tv < nt;
        sp_cp16(s.V + f.tv * SP_LDV16 + f.rv, ok ? f.v + (tc + f.tv) * f.v1 : f.v, ok);
    }
    const int i = threadIdx.x / (TC_C / 4), cc = 4 * (threadIdx.x % (TC_C / 4));
#pragma unroll
    for (int u = 0; u < 4; u++) { /* T, P: 16 rows per pass */
        sp_cp16(s.T + (i + 16 * u) * TC_LDA + cc, wsb + (i + 16 * u) * TC_C + cc, true);
        sp_cp16(s.P + (i + 16 * u) * SP_LDP + cc, wsb + TC_C * TC_C + (i + 16 * u) * TC_C + cc, true);
    }
    if (threadIdx.x < TC_C + 1) /* the scalars and gl */
        sp_cp16(s.sc + 4 * threadIdx.x, wsb + 2 * TC_C * TC_C + 4 * threadIdx.x, true);
}

/* ldmatrix, transposed, of NB = 2 or 4 8 x 8 blocks of 16-bit values (lane L gives row L % 8 of block L / 8):
   register m holds block m's (rows 2t, 2t + 1; column g), the pair (t, t + 4) of a B fragment over the rows. */
template <int NB>
__device__ __forceinline__ void sp_ldm_t(unsigned r[NB], const unsigned short *row)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    if constexpr (NB == 4)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
}

/* Pass 2 (see the header). Grid (Hv * ceil(Dv / TC_R), N). */
template <int DKP, bool F16>
__global__ void __launch_bounds__(TC_THREADS, 1) chunk_split_state_kernel(const __grid_constant__ gdn_cuda_params P)
{
    extern __shared__ __align__(16) unsigned char ss_raw[];
    constexpr int LDK = tc_ldk(DKP), LDV = TC_LDV, LDD = SP_LDD, LD = sp_ld16(DKP);
    constexpr int NTW = DKP / 16;
    float *Ss = (float *)(ss_raw + 2 * sp_stage_bytes(DKP)); /* [R][LDK] the state tile */
    float *Rm = Ss + TC_R * LDK;                             /* [C][LDV] R */
    float *Dm = Rm + TC_C * LDV;                             /* [C][LDD] D */

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
    const sp_tile ct = sp_tile_of(P, TC_R);
    const int h = ct.h, r0 = ct.r0, hk = ct.hk, Dk = P.Dk;
    const bool out_pairs = sp_out_pairs(P);
    const bool upd = warp < 4;
    const int mt = upd ? warp : warp - 4;
    const int sm0 = 16 * (warp & 1), sn0 = 8 * NTW * ((warp >> 1) & 1);
    const tc_tile tile = {h, r0, ct.rows, Dk, sm0, sn0, g, t4, ct.prs, ct.pcs};

    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error))
        return;
    for (int64_t n = P.n0 + blockIdx.y; n < P.n1; n += gridDim.y) {
        const auto [b, t0, t1, rs, ws, wsn] = sp_seq_of(P, n, h);
        const sp_feed<DKP> feed = sp_feed_init<DKP>(P, b, h, hk, r0);

        float sacc[NTW][4];
        if (upd)
            tc_state_load<DKP>(P, tile, rs, sacc, Ss);
        if (t0 < t1)
            sp_issue_stage<DKP>(feed, sp_stage<DKP>(ss_raw), wsn, t0, (int)(t1 - t0 < TC_C ? t1 - t0 : TC_C));
        sp_commit();
        int c = 0;
        for (int64_t tc = t0; tc < t1; tc += TC_C, c++) {
            const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
            const sp_stage<DKP> s(ss_raw + (c & 1) * sp_stage_bytes(DKP));
            __syncthreads(); /* the previous chunk is done with every buffer; the state tile is written */
            if (tc + TC_C < t1) { /* the next chunk's stage, while this one computes */
                const int64_t tn = tc + TC_C;
                sp_issue_stage<DKP>(feed, sp_stage<DKP>(ss_raw + ((c + 1) & 1) * sp_stage_bytes(DKP)),
                                    wsn + (int64_t)(c + 1) * SP_WSB, tn, (int)(t1 - tn < TC_C ? t1 - tn : TC_C));
                sp_commit();
                sp_wait<1>();
            } else {
                sp_wait<0>();
            }
            __syncthreads();
            /* warps 0-3: K S^T (rows 16 mt); warps 4-7: Q S^T */
            float accs[TC_R / 8][4];
#pragma unroll
            for (int j = 0; j < TC_R / 8; j++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    accs[j][q] = 0.f;
            {
                const unsigned short *X = upd ? s.K : s.Q;
#pragma unroll 4
                for (int k0 = 0; k0 < DKP; k0 += 8) {
                    unsigned a[4], bb[2];
                    sp_frag_a2<F16>(a, X, LD, 16 * mt, k0, g, t4);
#pragma unroll
                    for (int j = 0; j < TC_R / 8; j++) {
                        frag_bt2(bb, Ss, LDK, k0, 8 * j, g, t4);
                        mma_tf32(accs[j], a, bb);
                    }
                }
            }
            if (upd) /* R = diag(bt) V - diag(sk) K S^T */
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    const int i = 16 * mt + g + 8 * hf;
                    const float sk = s.sc[i], bt = s.sc[TC_C + i];
#pragma unroll
                    for (int j = 0; j < TC_R / 8; j++) {
                        const int r = 8 * j + 2 * t4;
                        unsigned lo, hi;
                        sp_pair<F16>(*(const unsigned *)(s.V + i * SP_LDV16 + r), &lo, &hi);
                        *(float2 *)(Rm + i * LDV + r) =
                            make_float2(tf32r(bt * __uint_as_float(lo) - sk * accs[j][2 * hf]),
                                        tf32r(bt * __uint_as_float(hi) - sk * accs[j][2 * hf + 1]));
                    }
                }
            __syncthreads();
            { /* D = T R: warp w rows 16 (w & 3), columns 16 (w >> 2) (T lower triangular) */
                const int m0 = 16 * (warp & 3), n0 = 16 * (warp >> 2);
                float d[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
                for (int k0 = 0; k0 < m0 + 16; k0 += 8) {
                    unsigned a[4], bb[2];
                    frag_a(a, s.T, TC_LDA, m0, k0, g, t4);
#pragma unroll
                    for (int j = 0; j < 2; j++) {
                        frag_b(bb, Rm, LDV, k0, n0 + 8 * j, g, t4);
                        mma_tf32(d[j], a, bb);
                    }
                }
#pragma unroll
                for (int j = 0; j < 2; j++)
#pragma unroll
                    for (int hf = 0; hf < 2; hf++)
                        *(float2 *)(Dm + (m0 + g + 8 * hf) * LDD + n0 + 8 * j + 2 * t4) =
                            make_float2(tf32r(d[j][2 * hf]), tf32r(d[j][2 * hf + 1]));
            }
            __syncthreads();
            /* products over the chunk's tokens below take the pair (t, t + 4) of the summation index from
               tokens (2t, 2t + 1) in both operands */
            if (!upd) { /* outputs: O = diag(sq) Q S^T + P D, rows 16 mt .. */
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const float sq = s.sc[2 * TC_C + 16 * mt + g + 8 * (q >> 1)];
#pragma unroll
                    for (int j = 0; j < TC_R / 8; j++)
                        accs[j][q] *= sq;
                }
                for (int k0 = 0; k0 < 16 * (mt + 1); k0 += 8) {
                    unsigned a[4], bb[2];
                    frag_a2(a, s.P, SP_LDP, 16 * mt, k0, g, t4);
#pragma unroll
                    for (int j = 0; j < TC_R / 8; j++) {
                        bb[0] = __float_as_uint(Dm[(k0 + 2 * t4) * LDD + 8 * j + g]);
                        bb[1] = __float_as_uint(Dm[(k0 + 2 * t4 + 1) * LDD + 8 * j + g]);
                        mma_tf32(accs[j], a, bb);
                    }
                }
                sp_store_out<TC_R / 8>(P, out_pairs, b, h, r0, ct.rows, tc, nt, 16 * mt + g, t4,
                                       [&](int j, int hf, int e) { return accs[j][2 * hf + e]; });
            } else { /* the state: S' = gl S + (diag(cf) D)^T K, this warp's fragment */
                const float *cf = s.sc + 3 * TC_C;
                const float gl = s.sc[4 * TC_C];
#pragma unroll
                for (int j = 0; j < NTW; j++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        sacc[j][q] *= gl;
#pragma unroll 2
                for (int k0 = 0; k0 < TC_C; k0 += 8) {
                    unsigned a[4];
                    const float c0 = cf[k0 + 2 * t4], c1 = cf[k0 + 2 * t4 + 1];
                    a[0] = tf32_of(Dm[(k0 + 2 * t4) * LDD + sm0 + g] * c0);
                    a[1] = tf32_of(Dm[(k0 + 2 * t4) * LDD + sm0 + g + 8] * c0);
                    a[2] = tf32_of(Dm[(k0 + 2 * t4 + 1) * LDD + sm0 + g] * c1);
                    a[3] = tf32_of(Dm[(k0 + 2 * t4 + 1) * LDD + sm0 + g + 8] * c1);
                    constexpr int NB = NTW < 4 ? NTW : 4;
#pragma unroll
                    for (int j4 = 0; j4 < NTW; j4 += NB) {
                        unsigned kb[NB];
                        sp_ldm_t<NB>(kb, s.K + (k0 + (lane & 7)) * LD + sn0 + 8 * (j4 + ((lane >> 3) & (NB - 1))));
#pragma unroll
                        for (int m = 0; m < NB; m++) {
                            unsigned bb[2];
                            sp_pair<F16>(kb[m], &bb[0], &bb[1]);
                            mma_tf32(sacc[j4 + m], a, bb);
                        }
                    }
                }
#pragma unroll
                for (int j = 0; j < NTW; j++)
#pragma unroll
                    for (int hf = 0; hf < 2; hf++)
                        *(float2 *)(Ss + (sm0 + g + 8 * hf) * LDK + sn0 + 8 * j + 2 * t4) =
                            make_float2(tf32r(sacc[j][2 * hf]), tf32r(sacc[j][2 * hf + 1]));
            }
        }
        if (upd && ws >= 0 && !(t1 == t0 && ws == rs))
            tc_state_store<DKP>(P, tile, ws, sacc);
        __syncthreads();
    }
}

/* 16 bytes per piece of q, k, v rows: 16-bit activations, unit inner strides, 16-byte aligned rows. */
static bool split_rows_ok(const void *base, const int64_t *st)
{
    return ((uintptr_t)base & 15) == 0 && st[3] == 1 && st[0] % 8 == 0 && st[1] % 8 == 0 && st[2] % 8 == 0;
}

static std::atomic<long long> g_split_calls{0}, g_split_groups{0}, g_split_wg_calls{0},
    g_split_wg64_calls{0}, g_split_rs_calls{0}, g_split_cluster_calls{0},
    g_split_overlap_calls{0}, g_split_first_calls{0}; /* gdn_cuda_split_stats, gdn_cuda_split_cluster_calls,
                                                         gdn_cuda_split_overlap_calls, gdn_cuda_split_state_first_calls */

/* Does the call take the two-pass kernels (chunk_tc's calls, a dense or packed batch of 16-bit activations
   with 16-byte rows, N <= 65535)? */
static bool chunk_split_ok(const gdn_cuda_params *p)
{
    return p->chunk_tc && gdn_cuda_split_shape_ok(p->dtype, p->Dk, p->Dv) && split_rows_ok(p->q, p->qs) &&
           split_rows_ok(p->k, p->ks) &&
           split_rows_ok(p->v, p->vs) && p->N <= 65535 && p->N >= 1 && p->Hv <= 65535 &&
           (p->T + TC_C - 1) / TC_C <= 0x7fffffff;
}

/* Floats of workspace one sequence of the call takes (its chunks' blocks for every value head). */
static int64_t chunk_split_seq_floats(const gdn_cuda_params *p)
{
    return p->Hv * ((p->T + TC_C - 1) / TC_C) * SP_WSB;
}

/* Floats of workspace the two-pass kernels need for the call (0: they do not apply): a packed batch's chunk
   slots (sp_varlen_slot) for every value head, in one group; a dense batch's sequences, in groups of what
   the context gives (one sequence at least: chunk_split_min_floats). */
static int64_t chunk_split_ws_floats(const gdn_cuda_params *p)
{
    if (!chunk_split_ok(p))
        return 0;
    return p->cu ? (sp_varlen_slot(p->N, p->T) + 1) * p->Hv * SP_WSB : p->N * chunk_split_seq_floats(p);
}
static int64_t chunk_split_min_floats(const gdn_cuda_params *p)
{
    return p->cu ? chunk_split_ws_floats(p) : chunk_split_seq_floats(p);
}

/* The prep's item grid along x: chunks, or a packed batch's chunk slots (sp_varlen_slot). */
static int64_t chunk_split_prep_x(const gdn_cuda_params *p)
{
    return p->cu ? sp_varlen_slot(p->N, p->T) + 1 : (p->T + TC_C - 1) / TC_C;
}
/* Words for the overlapped passes (sp_item_flag; 0: the call runs them in stream order): calls on
   chunked_rs.cuh's state pass whose grid fits one wave of the SMs (its two-stage form, one CTA per SM, leaving
   room on each SM for a prep CTA beside it), with tokens; the items counted per value head (an upper bound). */
static int64_t chunk_split_flag_words(const gdn_cuda_params *p, int num_sms)
{
    if (!chunk_split_ok(p) || p->split_wg != 2 || p->T <= 0 ||
        rs_state_ctas(p, p->N) > (int64_t)num_sms)
        return 0;
    return 3 + chunk_split_prep_x(p) * p->Hv * (p->cu ? 1 : p->N);
}

/* cuTensorMapEncodeTiled from the driver, looked up once (NULL: none; the mma state pass runs). */
static PFN_cuTensorMapEncodeTiled_v12000 wg_encoder(void)
{
    static const PFN_cuTensorMapEncodeTiled_v12000 fn = []() {
        void *f = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) !=
                cudaSuccess ||
            q != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            f = NULL;
        }
        return (PFN_cuTensorMapEncodeTiled_v12000)f;
    }();
    return fn;
}

/* The stride (elements) of a tensor map's outermost dimension, the sequences: the view's, or, for a packed
   batch (the launcher passes N = 1: every sequence is batch row 0), one that spans the rows (the map must
   have one; it is never stepped). */
static int64_t wg_outer(const int64_t *st, int64_t T, int64_t N)
{
    return N == 1 && st[0] <= 0 ? st[1] * T : st[0];
}

/* The tensor map of v rows [N][T][Hv][Dv] (16-bit, element strides st), boxes of rt x 1 x TC_C x 1. */
static bool wg_map_v(CUtensorMap *m, const void *base, const int64_t *st, int64_t Dv, int64_t heads, int64_t T,
                     int64_t N, int rt)
{
    const PFN_cuTensorMapEncodeTiled_v12000 enc = wg_encoder();
    if (!enc || wg_outer(st, T, N) <= 0 || st[1] <= 0 || st[2] <= 0)
        return false;
    const cuuint64_t dims[4] = {(cuuint64_t)Dv, (cuuint64_t)heads, (cuuint64_t)T, (cuuint64_t)N};
    const cuuint64_t strides[3] = {(cuuint64_t)st[2] * 2, (cuuint64_t)st[1] * 2, (cuuint64_t)wg_outer(st, T, N) * 2};
    const cuuint32_t box[4] = {(cuuint32_t)rt, 1, TC_C, 1}, es[4] = {1, 1, 1, 1};
    return enc(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, (void *)base, dims, strides, box, es,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* The tensor map of q or k rows [N][T][Hk][Dk] (16-bit, element strides st) as slices of 8 columns, tokens
   next (dims 8, T, Dk / 8, heads, N; the slice's stride, 16 bytes, below the tokens'), boxes of 8 x TC_C x
   Dk / 8 x 1 x 1: a chunk's rows land slice after slice, the state pass's core layout. */
static bool wg_map_kq(CUtensorMap *m, const void *base, const int64_t *st, int64_t Dk, int64_t heads, int64_t T,
                    int64_t N)
{
    const PFN_cuTensorMapEncodeTiled_v12000 enc = wg_encoder();
    if (!enc || wg_outer(st, T, N) <= 0 || st[1] <= 0 || st[2] <= 0 || Dk % 8 || Dk > 256)
        return false;
    const cuuint64_t dims[5] = {8, (cuuint64_t)T, (cuuint64_t)(Dk / 8), (cuuint64_t)heads, (cuuint64_t)N};
    const cuuint64_t strides[4] = {(cuuint64_t)st[1] * 2, 16, (cuuint64_t)st[2] * 2, (cuuint64_t)wg_outer(st, T, N) * 2};
    const cuuint32_t box[5] = {8, TC_C, (cuuint32_t)(Dk / 8), 1, 1}, es[5] = {1, 1, 1, 1, 1};
    return enc(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 5, (void *)base, dims, strides, box, es,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* The tensor map of 16-bit rows [N][T][heads][D] (element strides st) in boxes of 64 columns x 1 head x TC_C
   tokens x 1, 128-byte swizzled (chunked_rs.cuh); zeros past D and T. */
static bool rs_map(CUtensorMap *m, const void *base, const int64_t *st, int64_t D, int64_t heads, int64_t T, int64_t N)
{
    const PFN_cuTensorMapEncodeTiled_v12000 enc = wg_encoder();
    if (!enc || wg_outer(st, T, N) <= 0 || st[1] <= 0 || st[2] <= 0 || ((uintptr_t)base & 15))
        return false;
    const cuuint64_t dims[4] = {(cuuint64_t)D, (cuuint64_t)heads, (cuuint64_t)T, (cuuint64_t)N};
    const cuuint64_t strides[3] = {(cuuint64_t)st[2] * 2, (cuuint64_t)st[1] * 2, (cuuint64_t)wg_outer(st, T, N) * 2};
    const cuuint32_t box[4] = {64, 1, TC_C, 1}, es[4] = {1, 1, 1, 1};
    return enc(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, (void *)base, dims, strides, box, es,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* The wgmma state pass's rows per CTA for a group of n sequences: 64 (half the CTAs, each chunk about 1.4 times
   as long: B=1 T=4096 282.5 against 222.7 us for the call; docs/PERF.md, session 10) once 32 would take more
   than one wave of the SMs, else 32. */
static int wg_rows_per_cta(const gdn_cuda_params &p, int64_t n, int num_sms)
{
    if (p.wg_rt)
        return p.wg_rt;
    return p.Hv * ((p.Dv + 31) / 32) * n > num_sms ? 64 : 32;
}

template <int DKP, bool F16>
static cudaError_t launch_chunk_split_k(gdn_cuda_params p, cudaLaunchConfig_t cfg, int num_sms)
{
    typedef void (*fn_t)(gdn_cuda_params);
    typedef void (*wg_fn_t)(gdn_cuda_params, wg_maps);
    typedef void (*rs_fn_t)(gdn_cuda_params, rs_maps);
    /* the state pass on wgmma (chunked_wg.cuh, gdn_cuda_split_wg_shape_ok) where its tensor maps encode; the
       context asks for it on compute capability 9.x only, where the build's sm_90a code runs (CMakeLists.txt
       always builds it: the compute_80 PTX alone would leave the kernel's body empty) */
    wg_maps maps;
    rs_maps rmaps;
    /* sequences per launch pair: a packed batch in one (its workspace is the call's, chunk_split_min_floats),
       a dense one in groups of what the workspace holds; the maps' batch dimension (a packed batch's
       sequences are all row 0) */
    int64_t group = p.cu ? p.N : p.ws_floats / chunk_split_seq_floats(&p);
    const int64_t nm = p.cu ? 1 : p.N;
    const bool rs = p.split_wg == 2 && !F16 && DKP >= 64 && p.T <= 0x7fffffff &&
                    rs_map(&rmaps.q, p.q, p.qs, p.Dk, p.Hk, p.T, nm) &&
                    rs_map(&rmaps.k, p.k, p.ks, p.Dk, p.Hk, p.T, nm) &&
                    rs_map(&rmaps.v, p.v, p.vs, p.Dv, p.Hv, p.T, nm);
    /* the outputs' map where the state pass stores them by 16-byte bf16 pieces (rs_out_vec) */
    rmaps.o_ok = rs && rs_out_vec(p) && rs_map(&rmaps.o, p.out, p.os, p.Dv, p.Hv, p.T, nm);
    if (rs && !p.cu && !p.rs_stages && group < p.N) {
        /* a batch in several groups: groups whose one-stage state grids fill whole waves of the SMs' CTA slots
           (two per SM), where that keeps one wave at least (H200, B=64 T=4096 at the default cap: 29 sequences
           per group took 8 + 8 + 2 waves of the state pass, 28 take 7 + 7 + 2) */
        const int64_t per = rs_state_ctas(&p, 1), slots = 2 * (int64_t)num_sms;
        const int64_t fit = group * per / slots * slots / per;
        if (fit >= 1)
            group = fit;
    }
    const int rt = rs ? RS_ROWS : wg_rows_per_cta(p, p.N < group ? p.N : group, num_sms);
    const bool wg = !rs && p.split_wg && !F16 && DKP >= 64 && p.T <= 0x7fffffff &&
                    wg_map_kq(&maps.q, p.q, p.qs, p.Dk, p.Hk, p.T, nm) &&
                    wg_map_kq(&maps.k, p.k, p.ks, p.Dk, p.Hk, p.T, nm) &&
                    wg_map_v(&maps.v, p.v, p.vs, p.Dv, p.Hv, p.T, nm, rt);
    /* GDN_PRECISION_BF16 (p.chunk_tc 2) on the register-sourced pass: T and R^T in bf16 too (layout 3) */
    const bool tb = rs && p.chunk_tc == 2;
    p.split_wg = rs ? (tb ? 3 : 2) : wg; /* also the prep pass's layout of T and P (sp_t_base) */
    const int tile = rs || wg ? rt : TC_R;
    /* the prep pass: a CTA per key head and chunk once that grid covers the SMs (the value heads that share
       the key head share its products), else per value head and chunk (each CTA half as long); docs/PERF.md,
       session 10 */
    const int64_t chunks = p.cu ? sp_varlen_slot(p.N, p.T) + 1 /* a packed batch's chunk slots */
                                : (p.T + TC_C - 1) / TC_C * (p.N < group ? p.N : group);
    const bool share = p.prep_vpc >= 0 ? p.prep_vpc == 1 : chunks * p.Hk >= (int64_t)num_sms;
    p.prep_vpc = share ? p.ratio : 1;
    const fn_t state = chunk_split_state_kernel<DKP, F16>;
    constexpr int DW = DKP >= 64 ? DKP : 64;
    const wg_fn_t state_wg = rt == 64 ? chunk_split_state_wg_kernel<DW, 64> : chunk_split_state_wg_kernel<DW, 32>;
    /* chunked_rs.cuh's stages: one (two CTAs per SM, each waiting for its next chunk's copies while the other
       computes) once its grid takes more than one wave of the SMs, else two (B=64 T=4096: 7.29 against 7.83
       ms; B=1 T=4096: 268 against 219 us; docs/PERF.md, session 11) */
    const int ns = p.rs_stages ? p.rs_stages
                               : rs_state_ctas(&p, p.N < group ? p.N : group) > num_sms ? 1 : 2;
    /* with two stages a producer warp issues the copies (B=1 T=4096: the state pass 122 -> 102 us; two CTAs per
       SM leave no registers for it) */
    const int pw = rs && ns == 2;
    /* with one stage and GDN_CUDA_RS_CLUSTER=1, the two row tiles of a head in a cluster that reads k, q, T, P
       once (chunked_rs.cuh); off by default: B=64 T=4096 6.71 against 6.19 ms, docs/PERF.md session 13 */
    const int cl = rs && ns == 1 && p.rs_cluster && (p.Dv + RS_ROWS - 1) / RS_ROWS % 2 == 0;
    const rs_fn_t state_rs = ns == 2 ? (tb ? chunk_split_state_rs_kernel<DW, 2, 1, 1, true>
                                          : chunk_split_state_rs_kernel<DW, 2, 1, 1>)
                             : cl ? (tb ? chunk_split_state_rs_kernel<DW, 1, 0, 2, true>
                                        : chunk_split_state_rs_kernel<DW, 1, 0, 2>)
                                  : (tb ? chunk_split_state_rs_kernel<DW, 1, 0, 1, true>
                                        : chunk_split_state_rs_kernel<DW, 1, 0, 1>);
    /* the two passes overlapped (sp_item_flag) where the state pass has its producer warp (one wave, one CTA
       per SM), in one group, with programmatic launches, and leaves a quarter of the SMs at least: the prep a
       persistent grid of SP_GROUPS items per CTA, one CTA on each SM the state pass leaves (or
       GDN_CUDA_PREP_CTAS); where the prep takes two rounds of its items at least (p.prep_overlap 2: always).
       H200, Qwen3.6 layer, B=1: T=4096 154 -> 139 us, T=32768 1118 -> 966 us; T=512 (one round) 29.7 -> 37
       us; docs/PERF.md, session 14. With two groups per CTA (session 27): 68 CTAs on the 68 free SMs against 64,
       T=4096 110.5 / 110.3 against 112.7 / 112.9 us, T=32768 740 / 739 against 763 / 762 (with three groups 64
       had been faster, session 26); the two-rounds rule: T=1024 (256 items) 39.3 us in turn against 40.2
       overlapped, T=2048 73.7 against 64.2, T=3072 100.1 against 86.8. Session 39: and where the per-item prep in
       turn takes more than one wave (SP_PER_SM CTAs on each SM; 396 items on the H200): within one wave all its
       items run at once and the state pass then runs alone, at about 1.33 us a chunk against 1.38 beside the prep.
       H200, B=1, in turn against overlapped: T=1280 45.2 against 45.7 us, T=1536 50.9 against 51.7; T=1600 (400
       items, two waves in turn) 58.8 against 53.5 (docs/PERF.md, session 39) */
    p.prep_gx = chunk_split_prep_x(&p);
    p.prep_gy = p.Hk * (p.ratio / p.prep_vpc);
    const int64_t items = p.prep_gx * p.prep_gy * (p.cu ? 1 : p.N);
    const int64_t free_sms = num_sms - rs_state_ctas(&p, p.N); /* the SMs the state pass leaves */
    const int64_t pctas = p.prep_ctas > 0 ? p.prep_ctas : free_sms;
    /* (p.sp_flags: the backend's words, given only with p.prep_overlap and tokens, chunk_split_flag_words) */
    const bool ovl = pw && p.sp_flags && cfg.numAttrs > 0 && group >= p.N && 3 + items <= p.sp_flag_words &&
                     pctas >= num_sms / 4 &&
                     (p.prep_overlap == 2 || p.prep_overlap == 3 ||
                      (items >= 2 * SP_GROUPS * pctas && items > (int64_t)SP_PER_SM * num_sms));
    if (!ovl)
        p.sp_flags = NULL;
    fn_t prep = ovl ? chunk_split_prep_persistent_kernel<DKP, F16> : chunk_split_prep_kernel<DKP, F16>;
    fn_t flat = chunk_split_prep_flat_kernel<DKP, F16>;
    if constexpr (!F16 && DKP >= 64) /* GDN_PRECISION_BF16's prep kernels: T stored in bf16 (layout 3) */
        if (tb) {
            prep = ovl ? chunk_split_prep_persistent_kernel<DKP, F16, true> : chunk_split_prep_kernel<DKP, F16, true>;
            flat = chunk_split_prep_flat_kernel<DKP, F16, true>;
        }
    const size_t sp = (size_t)split_prep_smem_bytes(DKP) * (ovl ? SP_GROUPS : 1);
    const size_t ss = (size_t)(rs   ? split_state_rs_smem_bytes(DW, ns)
                               : wg ? split_state_wg_smem_bytes(DKP, rt)
                                    : split_state_smem_bytes(DKP));
    const void *state_fn = rs ? (const void *)state_rs : wg ? (const void *)state_wg : (const void *)state;
    cudaError_t e = cudaFuncSetAttribute((const void *)prep, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sp);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(state_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)ss);
    if (e != cudaSuccess)
        return e;
    p.early_trigger = 0;
    /* GDN_CUDA_PREP_OVERLAP=4 (a measurement switch, dense calls without batch.num_tokens, where every item is waited
       for): the state pass first, and the per-item prep (chunk_split_prep_flat_kernel) as its programmatic dependent on
       the SMs the state pass leaves, its shared memory padded so that none fits beside a state CTA (76 KB with the
       two-stage state pass's 150 KB), which leaves room for two on each free SM, not three (3 x 77 KB > 228 KB; session
       33's trace: about 124 items in flight). The persistent prep did about 0.18 items per us and SM beside the state
       pass (session 13) against the per-item kernel's 0.22 alone (session 26; docs/PERF.md). Run in session 27 (three
       groups in the default order then): T=4096 113.9 against 117.0-117.5 us, T=32768 776 against 787-794; but it needs
       the dependent to run beside the state pass, which CUDA does not promise: under compute-sanitizer memcheck
       `test_cuda rs` did not end in 150 s (the state pass's waits run out one by one), so it cannot be a default. The
       default order's two-group prep is faster (109.8 us at T=4096, 723 at T=32768). */
    const bool sfirst = ovl && p.prep_overlap == 4 && !p.cu && !p.num_tokens;
    if (p.prep_overlap == 4 && !sfirst) /* the kernels' default order (the state pass waits on nothing) */
        p.prep_overlap = 1;
    size_t spf = 0;
    if (sfirst) {
        int dev = 0, per_sm = 0;
        if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
            (e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)) != cudaSuccess)
            return e;
        const int64_t beside = (int64_t)per_sm - (int64_t)ss - 2048 + 128; /* 1 KB reserved per CTA */
        spf = (size_t)split_prep_smem_bytes(DKP);
        if ((int64_t)spf < beside)
            spf = (size_t)beside;
        if ((e = cudaFuncSetAttribute((const void *)flat, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)spf)) !=
            cudaSuccess)
            return e;
    }
    /* the sequences in groups whose blocks fit the workspace (each pair of launches waits for the previous
       pair: griddepcontrol.wait before any write) */
    g_split_calls++;
    g_split_wg_calls += wg || rs;
    g_split_wg64_calls += wg && rt == 64;
    g_split_rs_calls += rs;
    g_split_cluster_calls += cl;
    g_split_overlap_calls += ovl;
    g_split_first_calls += sfirst;
    for (p.n0 = 0; p.n0 < p.N; p.n0 += group) {
        p.n1 = p.N - p.n0 < group ? p.N : p.n0 + group;
        g_split_groups++;
        /* the prep: a CTA per (chunk, key head or value head, sequence), or for a packed batch per (chunk
           slot, head): the slots its sequences' chunks take, sp_varlen_slot */
        const int64_t pg = (items + SP_GROUPS - 1) / SP_GROUPS;
        cudaLaunchConfig_t pcfg = cfg; /* the prep's launch */
        pcfg.gridDim = sfirst ? dim3((unsigned)items, 1, 1)
                       : ovl  ? dim3((unsigned)(pg < pctas ? pg : pctas), 1, 1)
                              : dim3((unsigned)p.prep_gx, (unsigned)p.prep_gy, (unsigned)(p.cu ? 1 : p.n1 - p.n0));
        pcfg.dynamicSmemBytes = sfirst ? spf : sp;
        pcfg.blockDim = dim3(TC_THREADS, ovl && !sfirst ? SP_GROUPS : 1, 1); /* the persistent form: y the group */
        if (!sfirst && p.T > 0 && (e = cudaLaunchKernelEx(&pcfg, prep, p)) != cudaSuccess)
            return e;
        cfg.gridDim = dim3((unsigned)(p.Hv * ((p.Dv + tile - 1) / tile)), (unsigned)(p.n1 - p.n0), 1);
        cfg.dynamicSmemBytes = ss;
        cfg.blockDim = dim3(rs ? (pw ? 160 : 128) : TC_THREADS, 1, 1);
        cudaLaunchConfig_t ccfg = cfg; /* cl: the caller's attributes and a cluster of two along x */
        cudaLaunchAttribute cattr[4];
        if (cl) {
            int na = 0;
            for (unsigned a = 0; a < cfg.numAttrs && a < 3; a++)
                cattr[na++] = cfg.attrs[a];
            cattr[na].id = cudaLaunchAttributeClusterDimension;
            cattr[na].val.clusterDim.x = 2;
            cattr[na].val.clusterDim.y = 1;
            cattr[na].val.clusterDim.z = 1;
            ccfg.attrs = cattr;
            ccfg.numAttrs = (unsigned)na + 1;
        }
        e = rs   ? cudaLaunchKernelEx(&ccfg, state_rs, p, rmaps)
            : wg ? cudaLaunchKernelEx(&cfg, state_wg, p, maps)
                 : cudaLaunchKernelEx(&cfg, state, p);
        if (e != cudaSuccess)
            return e;
        if (sfirst && (e = cudaLaunchKernelEx(&pcfg, flat, p)) != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

template <bool F16>
static cudaError_t launch_chunk_split_t(gdn_cuda_params p, cudaLaunchConfig_t cfg, int num_sms)
{
    const int dkp = chunk_dkp((int)p.Dk);
    return dkp == 32   ? launch_chunk_split_k<32, F16>(p, cfg, num_sms)
           : dkp == 64 ? launch_chunk_split_k<64, F16>(p, cfg, num_sms)
                       : launch_chunk_split_k<128, F16>(p, cfg, num_sms);
}

static cudaError_t launch_chunk_split(gdn_cuda_params p, cudaLaunchConfig_t cfg, int num_sms)
{
    return p.dtype == GDN_DTYPE_F16 ? launch_chunk_split_t<true>(p, cfg, num_sms)
                                    : launch_chunk_split_t<false>(p, cfg, num_sms);
}

#endif
