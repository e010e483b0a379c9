/*
 * chunked_prep.cuh — pass 1 of the two-pass chunked prefill (chunked_split.cuh): chunk_split_prep_kernel, the
 * per-chunk matrices T, P and scalars for every chunk at once; included by chunked_split.cuh.
 *
 * Math per (sequence, value head), chunk of nt <= TC_C tokens (chunked_split.cuh's notation: k, q the raw rows,
 * ksc, qsc their norm scales (qsc with the attention scale), c_t the running sums of the clamped log decays,
 * G[i][j] = exp(c_i - c_j)):
 *     L[i][j] = -b_i G[i][j] ksc_i ksc_j (k_i . k_j)  (i > j),  T = (I - L)^-1          [C][C]
 *     P[i][j] =  G[i][j] qsc_i ksc_j (q_i . k_j)      (j <= i)                          [C][C]
 *     sk = b gam ksc, bt = b, sq = gam qsc, cf_j = G[nt-1][j] ksc_j, gl = gam_{nt-1}     [C] each
 * except for layout 2 (the register-sourced state pass in tf32), which gets T diag(b) and sk = gam ksc (session 38).
 * One CTA of 8 warps per (chunk, key head, sequence), or per (chunk slot, key head) in a packed batch:
 *   - the raw k, q rows by cp.async into shared memory (16-bit, as given; in the persistent prep, marked
 *     evict-last in L2 for the state pass's copies of the same rows, and, up to 256 chunks a sequence, the
 *     group's next item's rows prefetched into L2 once these have landed: sp_prefetch_rows_keep; each group's
 *     first item's rows before the kernel's wait for earlier work);
 *   - K K^T (warps 0-3) and Q K^T (warps 4-7), the lower triangle's 16-row tiles, m16n8k16 on the 16-bit values
 *     with operands by ldmatrix (exact products, f32 sums), the rows' sums of squares from the same fragments;
 *     once the norms are known, the products scaled by ksc_i ksc_j or qsc_i ksc_j in their fragments, once for
 *     all the value heads (sp_scale_products);
 *   - then for each of the prep_vpc value heads that read the key head, in turn: warp 7 loads the gates (two
 *     tokens a lane, the next head's in flight while this one is worked) and scans the log decays (natural and
 *     log2 units); L (warps 0-3, tf32, into shared memory) and P (warps 4-7, from the fragments to the
 *     workspace), each element one ex2 of a log2 difference times the scaled product (L: and -b_i), P's mask
 *     by select on its diagonal tile only, the workspace layout a compile-time constant (sp_lp_head); the
 *     scalars (warps 6-7, the query warps of fewest tiles); the 16 x 16 diagonal blocks' inverses (warps 0-3,
 *     in halves of 8: sp_invert_diag); T by the blockwise solve with the identity as right-hand side (a warp
 *     per 8-column strip, the identity made in registers, the strip's first block read off the diagonal
 *     inverse, the strip kept transposed so that every tf32 fragment is one ldmatrix), each block of T stored
 *     to the workspace as it is solved.
 * At small batch (P.sp_flags) the same items run on a persistent grid of two 8-warp groups per CTA, each
 * item's flag set as it is done (chunk_split_prep_persistent_kernel; chunked_split.cuh, sp_item_flag).
 * Two barriers per value head. T and P go to the workspace in the layout of the state pass that reads them
 * (P.split_wg, sp_t_base): T, P f32 (tf32-rounded) for layouts 0 and 1; T f32 permuted and P bf16 for layout 2.
 * Shared memory per item (Dk <= 128): the raw rows (34 KB), with L and the solve's blocks over them once the
 * products are made, the diagonal inverses [C][TC_LDT] and six scalar rows: 40.5 KB (72 KB before session 17,
 * 41.5 before session 32's transposed solve rows).
 * Before (session 12) the CTA staged P and T in shared memory and copied them out with generic index math, and
 * read operands by scalar loads; H200, B=8 T=4096 (ncu): 225M -> 203M instructions, 381 -> 355 us
 * (docs/PERF.md, session 13). Session 17 (L and P from prescaled products, the layout at compile time, the
 * inverses in halves of 8): 202M -> 149M instructions, 347 -> 291 us at the GPU's clocks. Session 32 (the solve's
 * fragments by ldmatrix instead of 6 scalar shared loads an mma): B=1 T=4096 108.5 -> 107.3 us, T=32768 718 ->
 * 710, B=64 T=4096 -0.7 to -1.6% (three rounds), because at B=1 the prep's rate paces the state pass (with the prep on 64 CTAs
 * instead of 68, T=32768 takes 754 us instead of 715).
 *
 * Assumptions: chunk_split_ok's (bf16 or f16 rows of unit stride, 16-byte aligned; Dk <= 128, padded to DKP);
 * TC_THREADS = 256 threads per item (SP_GROUPS items per CTA in the persistent form); gate values giving decays
 * in [0, 1].
 */
#ifndef GDN_CUDA_CHUNKED_PREP_CUH
#define GDN_CUDA_CHUNKED_PREP_CUH

/* Rows [tc, tc + nt) of a q or k head, raw, into shared memory by cp.async (zeros past nt and Dk): thread x
   (tid, of the item's 256) takes the 16-byte piece x % (DKP / 8) of rows x / (DKP / 8) + RS u, one pointer stepped
   along the rows. KEEP (the overlapped prep at small batch): the rows' lines marked evict-last in L2, so that the
   state pass, which reads the same rows a few chunks later by its tensor copies, finds them there. H200, three
   rounds each (docs/PERF.md, session 40): run 5, B=1 T=2048 63.4-63.7 -> 62.8-62.9 us, T=4096 107.1 -> 106.5-106.8,
   T=32768 711-713 -> 708-709; run 6, T=2048 63.5-63.6 -> 62.9-63.0, T=4096 107.2-107.4 -> 106.9-107.0, T=32768
   708.6-710.1 -> 708.4-709.6. Evict-first instead: no gain. */
template <int DKP, bool KEEP>
__device__ __forceinline__ void sp_issue_rows(const gdn_cuda_params &P, const void *base, const int64_t *st, int64_t b,
                                              int64_t tc, int nt, int hk, unsigned short *dst, int tid)
{
    constexpr int PR = DKP / 8, RS = TC_THREADS / PR; /* 16-byte pieces per row; rows per sweep */
    const int t0 = tid / PR, c = 8 * (tid % PR);
    const unsigned short *src =
        (const unsigned short *)base + b * st[0] + (tc + t0) * st[1] + (int64_t)hk * st[2] + c;
    const int64_t step = RS * st[1];
    const uint64_t pol = KEEP ? sp_policy_evict_last() : 0;
#pragma unroll
    for (int u = 0; u < TC_C / RS; u++) {
        const int t = t0 + RS * u;
        const bool ok = t < nt && c < P.Dk;
        if (KEEP)
            sp_cp16_keep(dst + t * sp_ld16(DKP) + c, ok ? src : base, ok, pol);
        else
            sp_cp16(dst + t * sp_ld16(DKP) + c, ok ? src : base, ok);
        src += step;
    }
}

/* ldmatrix.x4 (not transposed): four 8 x 8 16-bit matrices, lane L giving the address of row L % 8 of matrix
   L / 8; lane (g, t) receives row g, elements 2t, 2t + 1 of each. */
__device__ __forceinline__ void sp_ldsm4(unsigned r[4], const unsigned short *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
}

/* The workspace's [C][C] blocks, in the layout of the state pass that reads them (P.split_wg): 0, rows
   (row-major); 1, the wgmma state pass's core layout (piece e of 16 bytes = row 8 (e / 128) + e % 8, columns
   4 (e / 8 % 16) ..; wg_k32); 2, for T, that core layout with the columns of each group of 8 permuted as the
   register-sourced pass's tf32 fragments read them (a piece holds columns 0, 2, 4, 6 or 1, 3, 5, 7 of its group;
   chunked_rs.cuh), and for P, bf16 in the no-swizzle K-major core layout (core (i / 8, j / 8) of 8 rows of 16
   bytes, cores row-block-major; chunked_rs.cuh's output product). Each is linear in the fragment coordinates,
   so a thread's stores are one base and constant steps:
   T, the solve's element (16 bk + g + 8 hf, 8 w + 2 t4 + e): float sp_t_base + 1024 bk + 512 hf + sp_t_step e;
   P, the pair (16 mt + g + 8 hf, 8 j + 2 t4 (+ 1)): 32-bit word sp_p_base + sp_p_hf hf + sp_p_j j (layout 2 one
   bf16 pair, else two f32 words). */
__host__ __device__ constexpr int sp_t_base(int layout, int w, int g, int t4)
{
    return layout == 0 ? 64 * g + 8 * w + 2 * t4
           : layout == 1 ? 64 * w + 32 * (t4 >> 1) + 4 * g + 2 * (t4 & 1)
                         : 64 * w + 4 * g + t4;
}
__host__ __device__ constexpr int sp_t_step(int layout)
{
    return layout == 2 ? 32 : 1;
}
__host__ __device__ constexpr int sp_p_base(int layout, int mt, int g, int t4)
{
    return layout == 0 ? 1024 * mt + 64 * g + 2 * t4
           : layout == 1 ? 1024 * mt + 32 * (t4 >> 1) + 4 * g + 2 * (t4 & 1)
                         : 512 * mt + 4 * g + t4;
}
__host__ __device__ constexpr int sp_p_hf(int layout)
{
    return layout == 2 ? 256 : 512;
}
__host__ __device__ constexpr int sp_p_j(int layout)
{
    return layout == 0 ? 8 : layout == 1 ? 64 : 32;
}
/* P's pair x0, x1 at 32-bit word w of the P block (sp_p_base): bf16 for layout 2, else f32 (tf32-rounded). */
__device__ __forceinline__ void sp_store_p_pair(unsigned *w, bool bf16, float x0, float x1)
{
    if (bf16)
        *w = sp_bf2(x0, x1);
    else
        *(float2 *)w = make_float2(tf32r(x0), tf32r(x1));
}

/* Warp 7's part of a value head: the gates of tokens 2 lane, 2 lane + 1 (gv, be as loaded) to log decays and
   betas (zeros past nt), their running sums into lc (and in log2 units into lc2) and exp of those into gam, the
   betas into bet. */
__device__ __forceinline__ void sp_gates_scan(const gdn_cuda_params &P, int h, int nt, const float gv[2],
                                              const float be[2], float *lc, float *lc2, float *bet, float *gam)
{
    const int lane = threadIdx.x & 31;
    float l[2];
#pragma unroll
    for (int e = 0; e < 2; e++) {
        float bb = 0.f;
        l[e] = 0.f;
        if (2 * lane + e < nt) {
            bb = be[e];
            l[e] = gate_logdecay(P, h, gv[e], &bb);
        }
        bet[2 * lane + e] = bb;
    }
    tc_scan_pair(l[0], l[1], lc, gam);
    lc2[2 * lane] = lc[2 * lane] * SP_LOG2E; /* this lane's own stores, read back */
    lc2[2 * lane + 1] = lc[2 * lane + 1] * SP_LOG2E;
}

/* Warp 7's loads of value head h's gate values and betas, tokens 2 lane, 2 lane + 1 of the chunk (zeros past
   nt). */
__device__ __forceinline__ void sp_load_gates2(const gdn_cuda_params &P, int64_t b, int64_t tc, int nt, int h,
                                               float gv[2], float be[2])
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int e = 0; e < 2; e++) {
        gv[e] = be[e] = 0.f;
        if (2 * lane + e < nt) {
            const int64_t tt = tc + 2 * lane + e;
            const int64_t go = b * P.gs[0] + tt * P.gs[1] + h * P.gs[2];
            const int64_t bo = b * P.bs[0] + tt * P.bs[1] + h * P.bs[2];
            if (P.gate_dtype == GDN_DTYPE_F32) {
                gv[e] = __ldg((const float *)P.g + go);
                be[e] = __ldg((const float *)P.beta + bo);
            } else {
                gv[e] = cvt16(__ldg((const unsigned short *)P.g + go), P.gate_dtype);
                be[e] = cvt16(__ldg((const unsigned short *)P.beta + bo), P.gate_dtype);
            }
        }
    }
}

/* Key warp bk's diagonal block inverse T_bb = (I - L_bb)^-1 (16 x 16, L strictly lower: rows 16 bk .. of Lm, which
   the warp wrote) into block bk of Tm, tf32-rounded, in halves of 8: T11 = (I - L11)^-1 and T22 = (I - L22)^-1 by
   substitution (lane c < 16 the column c % 8 of half c / 8, each row of L read as two float4), then
   T21 = T22 (L21 T11) by all 32 lanes (row lane / 4, columns 2 (lane % 4), + 1; M = L21 T11 staged in T21's place),
   T12 = 0. The chain is two 8-step substitutions side by side and two 8-deep dots, against one 16-step
   substitution (tc_invert_diag). Called by the whole warp. */
__device__ __forceinline__ void sp_invert_diag(const float *Lm, float *Tm, int bk)
{
    const int lane = threadIdx.x & 31, o = 16 * bk, h = (lane >> 3) & 1, c = lane & 7;
    float *Tb = Tm + o * TC_LDT;
    __syncwarp();
    float x[8];
    if (lane < 16) {
        const float *Lh = Lm + (o + 8 * h) * TC_LDA + o + 8 * h; /* L11 or L22 */
#pragma unroll
        for (int i = 0; i < 8; i++) {
            float l[8];
            if (i > 0) {
                const float4 a = *(const float4 *)(Lh + i * TC_LDA);
                l[0] = a.x, l[1] = a.y, l[2] = a.z, l[3] = a.w;
            }
            if (i > 4) {
                const float4 b = *(const float4 *)(Lh + i * TC_LDA + 4);
                l[4] = b.x, l[5] = b.y, l[6] = b.z, l[7] = b.w;
            }
            float s0 = 0.f, s1 = 0.f;
#pragma unroll
            for (int k = 0; k < i; k++) {
                if (k & 1)
                    s1 = fmaf(l[k], x[k], s1);
                else
                    s0 = fmaf(l[k], x[k], s0);
            }
            x[i] = i == c ? 1.f : i > c ? s0 + s1 : 0.f;
        }
#pragma unroll
        for (int i = 0; i < 8; i++) {
            Tb[(8 * h + i) * TC_LDT + 8 * h + c] = x[i]; /* f32 for the product below, rounded after it */
            if (h)
                Tb[i * TC_LDT + 8 + c] = 0.f; /* T12 */
        }
    }
    __syncwarp();
    const int r = lane >> 2, j0 = 2 * (lane & 3);
    float m0 = 0.f, m1 = 0.f; /* M = L21 T11, row r, columns j0, j0 + 1 */
    {
        const float4 a = *(const float4 *)(Lm + (o + 8 + r) * TC_LDA + o);
        const float4 b = *(const float4 *)(Lm + (o + 8 + r) * TC_LDA + o + 4);
        const float l[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
        for (int k = 0; k < 8; k++) {
            const float2 t = *(const float2 *)(Tb + k * TC_LDT + j0);
            m0 = fmaf(l[k], t.x, m0);
            m1 = fmaf(l[k], t.y, m1);
        }
    }
    *(float2 *)(Tb + (8 + r) * TC_LDT + j0) = make_float2(m0, m1);
    __syncwarp();
    float y0 = 0.f, y1 = 0.f; /* T21 = T22 M, row r (T22's row r is zero past column r) */
    {
        const float4 a = *(const float4 *)(Tb + (8 + r) * TC_LDT + 8);
        const float4 b = *(const float4 *)(Tb + (8 + r) * TC_LDT + 12);
        const float t[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
        for (int k = 0; k < 8; k++) {
            const float2 mk = *(const float2 *)(Tb + (8 + k) * TC_LDT + j0);
            y0 = fmaf(t[k], mk.x, y0);
            y1 = fmaf(t[k], mk.y, y1);
        }
    }
    __syncwarp();
    *(float2 *)(Tb + (8 + r) * TC_LDT + j0) = make_float2(tf32r(y0), tf32r(y1));
    if (lane < 16)
#pragma unroll
        for (int i = 0; i < 8; i++)
            Tb[(8 * h + i) * TC_LDT + 8 * h + c] = tf32r(x[i]);
}

/* ldmatrix.x4 of 32-bit values: four 8 x 4 blocks of f32 (lane L giving the 16-byte row L % 8 of block L / 8), lane
   (g, t4) receiving word t4 of row g of each (the bits moved as they are). */
__device__ __forceinline__ void sp_ldsm4f(unsigned r[4], const float *p)
{
    sp_ldsm4(r, (const unsigned short *)p);
}

/* Warp w's 8-column strip n0 = 8 w of T = (I - L)^-1 (L strictly lower [C][TC_LDA], Tm the diagonal blocks'
   inverses [C][TC_LDT], both tf32), blockwise down from the strip's own block b0 = w / 2 (the rows above it are
   zero): block b0 is T_b0b0's columns, read off Tm; each block bk below, D_bk = T_bkbk (L_bk D), the sum over
   the solved blocks (the identity is zero there). X holds the strip transposed ([C][LDX], row n0 + n = column n
   of the strip: the warp's own 8 rows): the solved blocks for the sums and each R_bk for its product with
   T_bkbk, so that every fragment is one ldmatrix (A: a 16 x 8 tile of L or of T_bkbk, rows of TC_LDA or TC_LDT
   floats; B: two k-steps of the strip); every block of the strip goes to the workspace's T block Tw as solved
   (sp_t_base of LAYOUT), zeros above. (Before session 32 each fragment was 4 or 2 scalar loads: 6 shared loads per
   mma.) */
template <int LDX, int LAYOUT>
__device__ __forceinline__ void sp_solve_t(const float *Lm, const float *Tm, float *X, float *Tw, float cb0,
                                           float cb1, int warp, int g, int t4)
{
    constexpr int te = sp_t_step(LAYOUT);
    const int lane = threadIdx.x & 31, n0 = 8 * warp, b0 = warp >> 1;
    /* per-lane ldmatrix rows: A tiles (row lane % 8 + 8 (lane / 8 % 2), columns + 4 (lane / 16)), the strip's two
       k-steps (row n0 + lane % 8, columns + 4 (lane / 8)); the accumulators' stores (row g, column 2 t4 (+ 1) of
       the block: X row n0 + 2 t4 (+ 1), column g) */
    const int ar = (lane & 7) + 8 * ((lane >> 3) & 1), ac = 4 * (lane >> 4);
    const float *La = Lm + ar * TC_LDA + ac, *Ta = Tm + ar * TC_LDT + ac;
    const float *Xb = X + (n0 + (lane & 7)) * LDX + 4 * (lane >> 3);
    const float *Td = Tm + g * TC_LDT + 8 * (warp & 1) + 2 * t4; /* the strip's columns in block b0 */
    float *Xs = X + (n0 + 2 * t4) * LDX + g;
    /* layout 3: T in bf16 in P's layout (sp_p_base: the pair (16 bk + g + 8 hf, 8 w + 2 t4 (+ 1)) at 32-bit word
       512 bk + 256 hf + 32 w + 4 g + t4), for the state pass's bf16 D^T = R^T T^T (GDN_PRECISION_BF16) */
    unsigned *Tb = (unsigned *)Tw + sp_p_base(2, 0, g, t4) + sp_p_j(2) * warp;
    (void)Tb;
    Tw += sp_t_base(LAYOUT, warp, g, t4);
#pragma unroll 1 /* rolled: unrolled, the kernel spills 60 bytes and runs 1% slower at B=8 T=4096 */
    for (int bk = 0; bk < 4; bk++) {
        if (bk < b0) { /* above the strip's block: zeros */
            if constexpr (LAYOUT == 3) {
                Tb[512 * bk] = 0u;
                Tb[512 * bk + 256] = 0u;
            } else {
#pragma unroll
                for (int q = 0; q < 4; q++)
                    Tw[1024 * bk + 512 * (q >> 1) + te * (q & 1)] = 0.f;
            }
            continue;
        }
        float d[4];
        if (bk == b0) { /* T_b0b0's columns */
#pragma unroll
            for (int hf = 0; hf < 2; hf++) {
                const float2 x = *(const float2 *)(Td + (16 * bk + 8 * hf) * TC_LDT);
                d[2 * hf] = LAYOUT == 2 ? x.x * cb0 : x.x; /* layout 2: the strip of T diag(b) (sp_head_solve) */
                d[2 * hf + 1] = LAYOUT == 2 ? x.y * cb1 : x.y;
            }
        } else {
            float r[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 1 /* (unrolled, the 80-register kernels spill 64 bytes) */
            for (int kb = b0; kb < bk; kb++) { /* L_bk D_kb over the solved blocks, two k-steps a block */
                unsigned xb[4], a0[4], a1[4];
                sp_ldsm4f(xb, Xb + 16 * kb);
                sp_ldsm4f(a0, La + 16 * bk * TC_LDA + 16 * kb);
                sp_ldsm4f(a1, La + 16 * bk * TC_LDA + 16 * kb + 8);
                mma_tf32(r, a0, xb);
                mma_tf32(r, a1, xb + 2);
            }
#pragma unroll
            for (int q = 0; q < 4; q++)
                Xs[(q & 1) * LDX + 16 * bk + 8 * (q >> 1)] = tf32r(r[q]);
            __syncwarp();
#pragma unroll
            for (int q = 0; q < 4; q++)
                d[q] = 0.f;
            { /* T_bkbk R_bk */
                unsigned xb[4], a0[4], a1[4];
                sp_ldsm4f(xb, Xb + 16 * bk);
                sp_ldsm4f(a0, Ta + 16 * bk * TC_LDT);
                sp_ldsm4f(a1, Ta + 16 * bk * TC_LDT + 8);
                mma_tf32(d, a0, xb);
                mma_tf32(d, a1, xb + 2);
            }
            __syncwarp();
        }
        if constexpr (LAYOUT == 3) { /* the solve's blocks in tf32 as for the others; T itself in bf16 */
#pragma unroll
            for (int q = 0; q < 4; q++)
                if (bk < 3)
                    Xs[(q & 1) * LDX + 16 * bk + 8 * (q >> 1)] = tf32r(d[q]);
            Tb[512 * bk] = sp_bf2(d[0], d[1]);
            Tb[512 * bk + 256] = sp_bf2(d[2], d[3]);
        } else {
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const float x = tf32r(d[q]);
                if (bk < 3)
                    Xs[(q & 1) * LDX + 16 * bk + 8 * (q >> 1)] = x;
                Tw[1024 * bk + 512 * (q >> 1) + te * (q & 1)] = x;
            }
        }
        __syncwarp();
    }
}

/* The products' value-head-independent scales, once per item: K K^T (warps mt < 4 of upd) by ksc_i ksc_j, Q K^T by
   qsc_i ksc_j (rs: ksc or qsc; the fragment's rows 16 mt + g (+ 8), columns 8 j + 2 t4 (+ 1)). */
__device__ __forceinline__ void sp_scale_products(float (&acc)[8][4], const float *rs, const float *ksc, int mt, int g,
                                                  int t4)
{
    const float r0 = rs[16 * mt + g], r1 = rs[16 * mt + g + 8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (j / 2 <= mt) {
            const float2 kj = *(const float2 *)(ksc + 8 * j + 2 * t4);
            acc[j][0] *= r0 * kj.x;
            acc[j][1] *= r0 * kj.y;
            acc[j][2] *= r1 * kj.x;
            acc[j][3] *= r1 * kj.y;
        }
}

/* One value head's L (UPD: key warps, rows 16 mt ..: -b_i G[i][j] times the scaled K K^T into Lm, tf32; nothing
   right of the diagonal tile, and on and above the diagonal whatever the product gives, since no reader looks
   there: the inverses and the solve read L below the diagonal only) or P (query warps: G[i][j] times the scaled
   Q K^T to the workspace at Pw, sp_p_base of LAYOUT; zeros above the diagonal by select, so a NaN or an
   overflowing ex2 there stays out, and zeros right of the diagonal tile). G[i][j] = 2^(lc2_i - lc2_j), never
   above 1 left of the diagonal tile (the decays are at most 1). */
template <int LAYOUT, bool UPD>
__device__ __forceinline__ void sp_lp_head(const float (&acc)[8][4], const float *lc2, const float *bet, float *Lm,
                                           unsigned *Pw, int mt, int g, int t4)
{
    constexpr int phf = sp_p_hf(LAYOUT), pj = sp_p_j(LAYOUT);
    float ci[2], sb[2];
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        ci[hf] = lc2[16 * mt + g + 8 * hf];
        sb[hf] = UPD ? -bet[16 * mt + g + 8 * hf] : 1.f;
    }
#pragma unroll
    for (int j = 0; j < 8; j++) {
        if (j / 2 > mt) {
            if (!UPD)
#pragma unroll
                for (int hf = 0; hf < 2; hf++)
                    sp_store_p_pair(Pw + phf * hf + pj * j, LAYOUT == 2, 0.f, 0.f);
            continue;
        }
        const float2 lj = *(const float2 *)(lc2 + 8 * j + 2 * t4);
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            float x0 = sp_ex2(ci[hf] - lj.x) * acc[j][2 * hf], x1 = sp_ex2(ci[hf] - lj.y) * acc[j][2 * hf + 1];
            if (UPD) {
                x0 *= sb[hf];
                x1 *= sb[hf];
                *(float2 *)(Lm + (16 * mt + g + 8 * hf) * TC_LDA + 8 * j + 2 * t4) = make_float2(tf32r(x0), tf32r(x1));
            } else {
                if (j / 2 == mt) { /* the diagonal tile: column <= row */
                    const int il = g + 8 * hf, jl = 8 * (j & 1) + 2 * t4;
                    x0 = jl <= il ? x0 : 0.f;
                    x1 = jl + 1 <= il ? x1 : 0.f;
                }
                sp_store_p_pair(Pw + phf * hf + pj * j, LAYOUT == 2, x0, x1);
            }
        }
    }
}

/* The rest of one value head after its first barrier, LAYOUT the workspace's: L into Lm (key warps, upd) and P to
   the workspace's P block (query warps; sp_lp_head), the key warps' diagonal inverses, the group's barrier, then
   T = (I - L)^-1 by the solve (warp w the columns 8 w .. 8 w + 7, to the workspace as solved). */
template <int LAYOUT, int NG>
__device__ __forceinline__ void sp_head_solve(const float (&acc)[8][4], const float *lc2, const float *bet, float *Lm,
                                              float *Tm, float *Xm, float *wsb, bool upd, int mt, int warp, int g,
                                              int t4, int grp)
{
    constexpr int PL = LAYOUT == 3 ? 2 : LAYOUT; /* P's layout (3: layout 2 with T in bf16) */
    unsigned *Pb = (unsigned *)(wsb + TC_C * TC_C);
    if (upd) {
        sp_lp_head<PL, true>(acc, lc2, bet, Lm, Pb, mt, g, t4);
        sp_invert_diag(Lm, Tm, mt);
    } else {
        sp_lp_head<PL, false>(acc, lc2, bet, Lm, Pb + sp_p_base(PL, mt, g, t4), mt, g, t4);
    }
    /* layout 2 (the register-sourced state pass in tf32) gets T diag(b), so that the pass's R^T needs no diag(b): each
       strip solved for the right-hand side diag(b) I instead of I (its columns 8 w + 2 t4 (+ 1) scaled by their betas
       where the strip starts; every later block follows linearly). Read before the barrier, after which warp 7 may
       scan the next value head's betas into bet. Layout 3 (bf16 T) keeps T as it is: b rounded to bf16 on T's
       diagonal, the dominant term of D, raised the T = 4096 error past the 4e-3 bar (slow decay 4.39e-3). */
    const float cb0 = LAYOUT == 2 ? bet[8 * warp + 2 * t4] : 1.f, cb1 = LAYOUT == 2 ? bet[8 * warp + 2 * t4 + 1] : 1.f;
    sp_group_sync<NG>(grp);
    sp_solve_t<SP_LDX, LAYOUT>(Lm, Tm, Xm, wsb, cb0, cb1, warp, g, t4);
}

/* The k, q rows of the persistent prep's item j (sp_prep_item_at's order; nothing past the items, for a packed batch,
   or past the sequence's tokens) into L2, evict-last as sp_issue_rows loads them: one 128-byte line a thread (64 rows
   x 2 lines x k, q = 256 threads), whole lines within a row only (none at Dk < 64). The persistent kernel asks for its
   groups' first items before its wait for earlier work; the item before it in the group's
   turn asks once its own rows have landed (sp_prep_item's next), so that the rows phase of most items can read L2
   rather than HBM (session 40's trace: 1.5 us from HBM, 0.8 from L2). H200 (bench_cuda, three rounds each,
   docs/PERF.md, session 43): B=1 T=2048 62.3 -> 61.7 us, T=4096 105.9 -> 104.2, T=32768 700.7 -> 691.0. Evict-normal
   lines (session 40's form, in the same run) gained 1.2 us at T=4096 and lost 3 at T=32768 (our reading: among the
   evict-last rows they were evicted before their item came, as session 40's trace found); the same prefetch before the
   item's own rows, slower. Asked for where a sequence has at most SP_PREFETCH_CHUNKS chunks: `gdn bench` (session 43,
   runs 6-7, each pair in one command) T=4096 105.2-105.4 -> 103.8-103.9 us, T=8192 188.8-191.6 -> 186.6-188.8, T=16384
   356.8-360.6 -> 354.9-356.6 in every graph shape; at T=32768 it moved by -2.9 to +6.2 us with the graph's shape and
   the machine (bench_cuda: -6 to -10), so that length keeps the plain loads. SP_PREFETCH_AHEAD: how many of the
   group's items ahead (session 40: evict-normal lines two items ahead were slower than one). Both can be set at build
   time (labs). */
/* Item i of the prep's order (per: sp_items_per_chunk): chunk (slot) x, key head group y, sequence z of the group;
   and the key head of group y. */
__device__ __forceinline__ void sp_item_xyz(const gdn_cuda_params &P, int i, int per, int *x, int *y, int *z)
{
    *x = i / per;
    const int yz = i - *x * per;
    *z = yz / P.prep_gy;
    *y = yz - *z * P.prep_gy;
}
__device__ __forceinline__ int sp_item_hk(const gdn_cuda_params &P, int y)
{
    return y / (P.ratio / P.prep_vpc);
}
#ifndef SP_PREFETCH_CHUNKS
#define SP_PREFETCH_CHUNKS 256
#endif
#ifndef SP_PREFETCH_AHEAD
#define SP_PREFETCH_AHEAD 1
#endif
template <int DKP>
__device__ __forceinline__ void sp_prefetch_rows_keep(const gdn_cuda_params &P, int j, int per, int items, int tid)
{
    if (j < 0 || j >= items || P.cu)
        return;
    int x, y, z;
    sp_item_xyz(P, j, per, &x, &y, &z);
    const int hk = sp_item_hk(P, y);
    int64_t b, t0, t1;
    seq_tokens(P, P.n0 + z, &b, &t0, &t1);
    const int64_t tc = t0 + (int64_t)x * TC_C;
    const int r = tid >> 2, s = tid & 3; /* token r; s: k (0, 1) or q (2, 3), columns 64 (s & 1) .. */
    if (tc + r >= t1 || 64 * (s & 1) + 64 > P.Dk)
        return;
    const int64_t *st = s < 2 ? P.ks : P.qs;
    const unsigned short *p = (const unsigned short *)(s < 2 ? P.k : P.q) + b * st[0] + (tc + r) * st[1] +
                              (int64_t)hk * st[2] + 64 * (s & 1);
    asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p));
}
/* Pass 1 (see the header). DKP: Dk padded (32, 64 or 128); F16: f16 activations (else bf16). Grid (chunks,
   Hk ratio / prep_vpc, N), or for a packed batch (chunk slots, the same, 1): a CTA takes a key head's chunk
   and prep_vpc of the value heads that read it (all P.ratio of them where the grid is large enough), so the
   raw rows, their norms and the products K K^T, Q K^T are made once for them. */
/* One item of pass 1: (chunk or chunk slot bx, key head group by, sequence bz of the group), by 8 warps (tid
   0 .. 255 of group grp of NG, with sp_raw their shared memory); false where the item has no tokens. next,
   per, items: the persistent prep's next item of the group (sp_prefetch_rows_keep; -1: none). */
template <int DKP, bool F16, int NG, bool TB = false>
__device__ __forceinline__ bool sp_prep_item(const gdn_cuda_params &P, unsigned char *sp_raw, int64_t bx, int by,
                                             int64_t bz, int tid, int grp, int next = -1, int per = 0, int items = 0)
{
    constexpr int LD = sp_ld16(DKP);
    constexpr bool L12 = !F16 && DKP >= 64; /* layouts 1 and 2 (the wgmma state passes) are possible */
    unsigned short *Kh = (unsigned short *)sp_raw; /* [C][LD] k rows (raw), until the products are made */
    unsigned short *Qh = Kh + TC_C * LD;           /* [C][LD] q rows (raw), likewise */
    float *Lm = (float *)sp_raw;                   /* then [C][TC_LDA] L (strictly lower), over the rows */
    float *Xm = Lm + TC_C * TC_LDA;                /* and [C][SP_LDX] the solve's blocks after it */
    float *Tm = (float *)(sp_raw + split_prep_rows_bytes(DKP)); /* [C][TC_LDT] the diagonal blocks' inverses */
    float *lc = Tm + TC_C * TC_LDT;                /* [C] the running sums of the log decays */
    float *lc2 = lc + TC_C, *bet = lc2 + TC_C, *ksc = bet + TC_C, *qsc = ksc + TC_C, *gam = qsc + TC_C;

    const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
    const int hk = sp_item_hk(P, by);
    const int v0 = by % (P.ratio / P.prep_vpc) * P.prep_vpc; /* this CTA's first value head of hk's */
    int64_t n = P.n0 + bz, c = bx;
    const bool upd = warp < 4;
    const int mt = upd ? warp : 7 - warp;
    const int layout = P.split_wg;

    if (P.cu) { /* a packed batch: bx is a chunk slot (sp_varlen_slot); its sequence, the last whose first
                   slot is not past it (the slots rise with n; an empty sequence shares the next one's) */
        int64_t lo = 0, hi = P.N - 1;
        while (lo < hi) {
            const int64_t mid = (lo + hi + 1) / 2;
            if (sp_varlen_slot(mid, ld_cu(P, mid)) <= bx)
                lo = mid;
            else
                hi = mid - 1;
        }
        n = lo;
        c = bx - sp_varlen_slot(n, ld_cu(P, n));
    }
    int64_t b, t0, t1;
    seq_tokens(P, n, &b, &t0, &t1);
    const int64_t tc = t0 + c * TC_C;
    if (c < 0 || tc >= t1)
        return false; /* past the sequence's (counted) tokens: the state pass never reads these blocks */
    const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);

    sp_issue_rows<DKP, (NG > 1)>(P, P.k, P.ks, b, tc, nt, hk, Kh, tid); /* NG > 1: the persistent prep */
    sp_issue_rows<DKP, (NG > 1)>(P, P.q, P.qs, b, tc, nt, hk, Qh, tid);
    sp_commit();
    float gv[2], be[2]; /* warp 7: the next value head's gate values and betas, tokens 2 lane, 2 lane + 1 */
    if (warp == 7)
        sp_load_gates2(P, b, tc, nt, P.grouped ? hk * P.ratio + v0 : hk + v0 * P.Hk, gv, be);
    sp_wait<0>();
    sp_prefetch_rows_keep<DKP>(P, next, per, items, tid); /* the persistent prep: its next item's rows into L2 */
    sp_group_sync<NG>(grp);

    /* products: warp (mt, keys) K K^T, warp (mt, queries) Q K^T, rows 16 mt .., the 16-column pairs of tiles
       p <= mt; and the sums of squares of those rows from the A fragments (the 4 lanes of a row hold all its
       columns between them) */
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            acc[j][q] = 0.f;
    float ss0 = 0.f, ss1 = 0.f;
    { /* 16-bit operands as given (their products are exact in f32, as with tf32 operands) */
        const int lr = lane & 7, lm = lane >> 3;
        const unsigned short *xa = (upd ? Kh : Qh) + (16 * mt + lr + 8 * (lm & 1)) * LD + 8 * (lm >> 1);
        const unsigned short *xb = Kh + (lr + 8 * (lm >> 1)) * LD + 8 * (lm & 1);
#pragma unroll 2
        for (int k0 = 0; k0 < DKP; k0 += 16) {
            unsigned a[4];
            sp_ldsm4(a, xa + k0);
#pragma unroll
            for (int q = 0; q < 4; q++) {
                unsigned lo, hi;
                sp_pair<F16>(a[q], &lo, &hi);
                float &ss = q & 1 ? ss1 : ss0;
                ss = fmaf(__uint_as_float(lo), __uint_as_float(lo), ss);
                ss = fmaf(__uint_as_float(hi), __uint_as_float(hi), ss);
            }
#pragma unroll
            for (int p = 0; p < 4; p++)
                if (p <= mt) {
                    unsigned bq[4];
                    sp_ldsm4(bq, xb + 16 * p * LD + k0);
                    sp_mma16<F16>(acc[2 * p], a, bq);
                    sp_mma16<F16>(acc[2 * p + 1], a, bq + 2);
                }
        }
    }
#pragma unroll
    for (int o = 1; o < 4; o <<= 1) {
        ss0 += __shfl_xor_sync(0xffffffffu, ss0, o);
        ss1 += __shfl_xor_sync(0xffffffffu, ss1, o);
    }
    if (t4 == 0) {
        const float m = upd ? 1.0f : P.scale;
        float *sc = upd ? ksc : qsc;
        sc[16 * mt + g] = (P.l2norm ? rsqrtf(ss0 + 1e-6f) : 1.0f) * m;
        sc[16 * mt + g + 8] = (P.l2norm ? rsqrtf(ss1 + 1e-6f) : 1.0f) * m;
    }

#pragma unroll 1
    for (int v = v0; v < v0 + P.prep_vpc; v++) {
        const int h = P.grouped ? hk * P.ratio + v : hk + v * P.Hk;
        float *wsb = sp_ws_head(P, n, h, t0, t1) + (int64_t)c * SP_WSB;
        if (warp == 7) { /* lc, lc2, bet, gam (the previous head's readers are past the second barrier) */
            sp_gates_scan(P, h, nt, gv, be, lc, lc2, bet, gam);
            if (v + 1 < v0 + P.prep_vpc) /* the next value head's gates, in flight while this one is worked */
                sp_load_gates2(P, b, tc, nt, P.grouped ? h + 1 : h + P.Hk, gv, be);
        }
        sp_group_sync<NG>(grp); /* the decays, the norms; every warp done with the raw rows (or the last head's L, T) */
        if (v == v0) /* the norms' scales into the products, once for the value heads */
            sp_scale_products(acc, upd ? ksc : qsc, ksc, mt, g, t4);
        if (warp >= 6) { /* the scalars sk, bt, sq, cf: warps 6 and 7, the query warps of the fewest tiles */
            const int t = tid - 6 * 32;
            float *sc = wsb + 2 * TC_C * TC_C;
            /* layout 2 solved by sp_head_solve<2> (L12, not TB): b is in T there */
            sc[t] = (L12 && !TB && layout == 2 ? 1.f : bet[t]) * gam[t] * ksc[t];
            sc[TC_C + t] = bet[t];
            sc[2 * TC_C + t] = gam[t] * qsc[t];
            sc[3 * TC_C + t] = t < nt ? expf(lc[nt - 1] - lc[t]) * ksc[t] : 0.f;
            if (t < 8) /* gl, and zeros for the rest of its 32-byte sector (SP_WSB) */
                wsb[SP_GL + t] = t == 0 ? gam[nt - 1] : 0.f;
        }
        if (!L12 || layout == 0)
            sp_head_solve<0, NG>(acc, lc2, bet, Lm, Tm, Xm, wsb, upd, mt, warp, g, t4, grp);
        else if (layout == 1)
            sp_head_solve<1, NG>(acc, lc2, bet, Lm, Tm, Xm, wsb, upd, mt, warp, g, t4, grp);
        else /* layout 2, or 3 in the kernels compiled for it (TB: their own instances, so that the others' code
                and registers stay as they are) */
            sp_head_solve<TB && L12 ? 3 : 2, NG>(acc, lc2, bet, Lm, Tm, Xm, wsb, upd, mt, warp, g, t4, grp);
    }
    return true;
}

/* The per-item kernel's CTAs per SM (registers: 65536 / (256 SP_PER_SM) a thread), and the persistent form's
   groups per CTA; a build may set both (-DSP_PER_SM=4 -DSP_GROUPS=4 fits the shared memory, but at 64 registers
   the item spills 148 bytes and every H200 case ran slower: B=64 T=4096 5.80 against 5.69 ms, docs/PERF.md,
   session 17). */
#ifndef SP_PER_SM
#define SP_PER_SM 3
#endif
/* Pass 1 (see the header): a CTA per item. */
template <int DKP, bool F16, bool TB = false>
__global__ void __launch_bounds__(TC_THREADS, SP_PER_SM) chunk_split_prep_kernel(const __grid_constant__ gdn_cuda_params P)
{
    extern __shared__ __align__(16) unsigned char sp_raw[];
    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error))
        return;
    sp_prep_item<DKP, F16, 1, TB>(P, sp_raw, blockIdx.x, (int)blockIdx.y, blockIdx.z, threadIdx.x, 0);
}

/* The overlapped prep's items in flag order (sp_item_flag): per chunk (x), the key-head groups (y) of each sequence
   (z) of the group, in 32-bit arithmetic (the overlap is taken only where the items fit the flag words). */
__device__ __forceinline__ int sp_items_per_chunk(const gdn_cuda_params &P)
{
    return P.prep_gy * (int)(P.cu ? 1 : P.n1 - P.n0);
}
/* Item i of that order (per: sp_items_per_chunk) worked by a group of NG (sp_prep_item's return). */
template <int DKP, bool F16, int NG, bool TB = false>
__device__ __forceinline__ bool sp_prep_item_at(const gdn_cuda_params &P, unsigned char *raw, int i, int per, int tid,
                                                int grp, int next = -1, int items = 0)
{
    int x, y, z;
    sp_item_xyz(P, i, per, &x, &y, &z);
    return sp_prep_item<DKP, F16, NG, TB>(P, raw, x, y, z, tid, grp, next, per, items);
}

/* Pass 1 overlapped in the state-first order (P.prep_overlap 4; chunked_split.cuh, launch_chunk_split_k): a CTA
   per item in the persistent form's order (chunk by chunk, as sp_item_flag), launched as the state pass's
   programmatic dependent on the SMs it leaves, each item's flag set once its blocks are written. No
   griddepcontrol.wait: it would wait for the state pass itself; the state pass triggers only once each of its
   CTAs is past its own wait, and each CTA here first acquires the state CTAs' count, which each released
   after its wait (sp_wait_state_started), so its reads are ordered after earlier work. CTA 0 ends after the state pass
   (sp_wait_state_done), so that the stream's next kernel, which waits for this grid, also waits for the
   state pass. */
template <int DKP, bool F16, bool TB = false>
__global__ void __launch_bounds__(TC_THREADS, SP_PER_SM) chunk_split_prep_flat_kernel(const __grid_constant__ gdn_cuda_params P)
{
    extern __shared__ __align__(16) unsigned char sp_raw[];
    if (threadIdx.x == 0) /* after the state CTAs' waits for earlier work (all counted before this grid launched) */
        sp_wait_state_started(P, (unsigned)rs_state_ctas(&P, P.n1 - P.n0));
    __syncthreads();
    if (P.checked && __ldcg(&P.words->call_error)) /* the state pass stopped at the same word */
        return;
    const unsigned gen = blockIdx.x == 0 && threadIdx.x == 0 ? sp_ld_acquire(P.sp_flags) : 0u;
    const int i = (int)blockIdx.x;
    if (sp_prep_item_at<DKP, F16, 1, TB>(P, sp_raw, i, sp_items_per_chunk(P), (int)threadIdx.x, 0))
        sp_flag_publish<1>(P, i, (int)threadIdx.x, 0);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        sp_wait_state_done(P, gen);
}

/* Pass 1 overlapped with the state pass (P.sp_flags; chunked_split.cuh, sp_item_flag): a persistent grid of
   CTAs of SP_GROUPS groups of 8 warps (the block's y index), each group taking items in turn (sp_item_flag's
   order, chunk by chunk) with its own shared memory and barrier, and setting each item's flag once its
   workspace blocks are written. One such CTA fills an SM's registers, so a grid of fewer CTAs than SMs leaves
   whole SMs to the state pass (whose CTA does not fit beside a prep CTA: its five warps of 256 registers).
   Two groups, at 128 registers and no spills, against three at 80 (152 / 224 bytes spilled): H200 B=1 T=4096
   118.2 / 118.1 -> 109.8 / 109.8 us, T=32768 786 / 784 -> 723 / 724, T=2048 69.3 -> 64.3; the first chunk's
   items done about 13 us after the prep starts instead of 18 (a trace of the flags, docs/PERF.md session 27).
   The per-item kernel at two CTAs per SM instead (-DSP_PER_SM=2: 117 registers) lost at large batch: B=8
   T=4096 725 against 674-678 us, B=64 5839-5864 against 5440-5451. */
#ifndef SP_GROUPS
#define SP_GROUPS 2
#endif
template <int DKP, bool F16, bool TB = false>
__global__ void __launch_bounds__(SP_GROUPS * TC_THREADS, 1)
    chunk_split_prep_persistent_kernel(const __grid_constant__ gdn_cuda_params P)
{
    /* sp_prep_item marks the rows evict-last for NG > 1, the groups of this kernel (sp_issue_rows) */
    static_assert(SP_GROUPS > 1, "chunk_split_prep_persistent_kernel: two or more groups per CTA");
    extern __shared__ __align__(16) unsigned char sp_raw[];
    /* the group and its thread: the block's y and x indices; the group's first item */
    const int grp = (int)threadIdx.y, tid = (int)threadIdx.x, i0 = (int)blockIdx.x * SP_GROUPS + grp;
    /* 32-bit item arithmetic: the overlap is taken only where the items fit the flag words (chunk_split_flag_words) */
    const int per = sp_items_per_chunk(P), items = (int)P.prep_gx * per;
    /* before the wait for earlier work: each group's first item's k, q rows into L2 (evict-last, as they are
       loaded), where finding them reads no device memory (no cu_seqlens, no counts). L2 is the point of coherence,
       so a line prefetched before an earlier kernel writes it takes that write. Where the earlier kernel lets this
       grid launch before it ends (the previous call's overlapped state pass, chunked_rs.cuh), the rows arrive
       during its last chunks, and the first round's items find them in L2 (docs/PERF.md, session 44). */
    if (!P.cu && !P.num_tokens)
        sp_prefetch_rows_keep<DKP>(P, i0, per, items, tid);
    grid_dependency_wait();
    grid_dependency_trigger(); /* every CTA past its wait: the state pass may launch (earlier work is complete) */
    if (P.checked && __ldcg(&P.words->call_error))
        return;
    unsigned char *raw = sp_raw + grp * split_prep_smem_bytes(DKP);
#pragma unroll 1
    for (int i = i0; i < items; i += (int)gridDim.x * SP_GROUPS) {
        /* the group's next item (SP_PREFETCH_AHEAD), whose rows this one brings into L2 (sp_prefetch_rows_keep), up
           to SP_PREFETCH_CHUNKS chunks a sequence */
        const int nx = P.prep_gx <= SP_PREFETCH_CHUNKS ? i + SP_PREFETCH_AHEAD * (int)gridDim.x * SP_GROUPS : -1;
        if (sp_prep_item_at<DKP, F16, SP_GROUPS, TB>(P, raw, i, per, tid, grp, nx, items)) {
            if (!(P.prep_overlap == 3 && i == 0)) /* 3: tests of the state pass's bounded wait */
                sp_flag_publish<SP_GROUPS>(P, i, tid, grp);
            else
                sp_group_sync<SP_GROUPS>(grp); /* the group's shared memory free for its next item */
        }
    }
}

#endif
