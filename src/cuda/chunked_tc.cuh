/*
 * chunked_tc.cuh — chunkwise-parallel prefill on tensor cores (research/ALGORITHM.md sections 1-2):
 * chunk_tf32__cuda_mma, included by recurrent.cu after its helpers.
 *
 * Math per (sequence, value head), chunk of nt <= TC_C tokens, state S [Dv][Dk] entering it; k^, q^ the
 * normalised (q also scaled) rows, k^_t = ksc_t k_t, q^_t = qsc_t q_t; l_t = log d_t (clamped at
 * TC_LOGMIN), c_t = l_0 + .. + l_t, gam_t = exp(c_t), G[i][j] = exp(c_i - c_j) for j <= i (relative
 * exponents only: every exponent is <= 0 for decays <= 1; masked by select above the diagonal):
 *     A[i][j] = b_i G[i][j] (k^_i . k^_j)           (i > j; L = -A strictly lower)
 *     R       = diag(b) (V - diag(gam) K^ S^T)
 *     D       = (I + A)^-1 R                          (the chunk's deltas)
 *     O       = diag(gam) Q^ S^T + (Q^ K^T o G) D     (G with its diagonal)
 *     S'      = gam_{nt-1} S + sum_j G[nt-1][j] D_j k^_j^T
 * Exactly the token loop's recurrence, rounded differently (see chunked.cuh).
 *
 * The solve is blockwise over 16-token blocks b = 0..3: T_bb = (I + A_bb)^-1 by substitution (one
 * thread per column, f32), then D_b = T_bb (R_b + sum_{k<b} L_bk D_k) as tensor-core products.
 *
 * Products: mma.sync m16n8k8 with tf32 operands and f32 accumulation. Every operand is staged in
 * shared memory as f32 already rounded to tf32 (nearest), once, where it is written, so fragment loads
 * convert nothing; products over Dk read the pair of k-indices (t, t + 4) of a fragment from columns
 * (2t, 2t + 1), one 8-byte load (the summation index permuted alike in both operands). The state is kept
 * in f32 in the registers of warps 0-3 (accumulator fragments, across chunks) and copied to shared
 * memory (rounded) for the next chunk's products.
 *
 * Decomposition: one CTA of TC_THREADS = 256 threads (8 warps) per (sequence, value head, tile of
 * TC_R = 32 state rows); grid (Hv * ceil(Dv / TC_R), min(N, 65535)), a CTA taking sequences n, n +
 * 65535, ... It walks its sequence's chunks in order. Per chunk: inputs to shared memory, every load of
 * a thread issued before its first store, the rows' norms by one transposed shuffle reduction as they
 * are stored (the next chunk's rows prefetched into L2); the gates' running sums; then warps 0-3 form
 * K^ K^T and K^ S^T and warps 4-7 Q^ K^T and Q^ S^T (16 tokens each; the query warps take the blocks in
 * reverse, so each scheduler gets one long and one short row of the triangle), each key warp then
 * inverting the diagonal block of the rows it wrote; the blockwise solve (warps 0-3, 8 columns of D
 * each); outputs (warps 4-7) and the state update (warps 0-3).
 * H200, Qwen3.6 layer, B=1 T=4096: 0.86 ms (docs/PERF.md); the per-chunk chain, not the tensor cores,
 * bounds it (docs/DESIGN.md has the measurements and the plan past it).
 *
 * Assumptions: no capture, Dk <= 256 (zero-padded to 32, 64, 128 or 256), any Dv (tiles masked), strides,
 * dtypes, head maps, slots and varlen (the helpers of recurrent.cu). Gate values must give decays in
 * [0, 1] (log gates <= 0; linear gates in [0, 1]), as every model's do.
 */
#ifndef GDN_CUDA_CHUNKED_TC_CUH
#define GDN_CUDA_CHUNKED_TC_CUH

#define TC_C 64          /* tokens per chunk */
#define TC_R 32          /* state rows per CTA */
#define TC_THREADS 256   /* 8 warps */
#define TC_LOGMIN -80.0f /* log decays are clamped here (exp(-80) ~ 2e-35: a decay of 0 in effect) */

__host__ __device__ constexpr int tc_ldk(int dkp)
{
    return dkp + 8; /* k, q and state rows: the 8-byte fragment reads (row g, columns 2t, 2t+1) and the
                       (row t, column g) reads hit 32 banks */
}
#define TC_LDV (TC_R + 8) /* R and D rows: the (row t, column g) fragment reads hit 32 banks */
#define TC_LDA (TC_C + 4) /* L and P rows */
#define TC_LDT 20         /* the diagonal blocks' inverses, [C][TC_LDT] (16 columns: the (row g, column t) reads hit
                             32 banks); also the prep's (chunked_prep.cuh) */
/* Shared memory (floats): at DKP = 256, 230 912 bytes, within the 227 KiB a CTA may take on sm_90. */
__host__ __device__ constexpr int tc_smem_floats(int dkp)
{
    return 2 * TC_C * tc_ldk(dkp) + TC_R * tc_ldk(dkp) + 2 * TC_C * TC_LDV + 2 * TC_C * TC_LDA + TC_C * TC_LDT +
           6 * TC_C;
}

__device__ __forceinline__ unsigned tf32_of(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
/* x rounded to tf32 (nearest), as f32: every matrix operand is rounded once where it is written to shared
   memory, so the fragment loads below pass the bits on without a conversion per use. */
__device__ __forceinline__ float tf32r(float x)
{
    return __uint_as_float(tf32_of(x));
}

/* c += a b for one m16n8k8 tile: a rows (g, g+8) x columns (t, t+4); b rows (t, t+4) x column g;
   c rows (g, g+8) x columns (2t, 2t+1), with g = lane / 4, t = lane % 4. */
__device__ __forceinline__ void mma_tf32(float c[4], const unsigned a[4], const unsigned b[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* A fragment of rows r0.., columns k0.. of a row-major matrix of tf32-rounded f32 (ld floats per row). */
__device__ __forceinline__ void frag_a(unsigned a[4], const float *M, int ld, int r0, int k0, int g, int t)
{
    a[0] = __float_as_uint(M[(r0 + g) * ld + k0 + t]);
    a[1] = __float_as_uint(M[(r0 + g + 8) * ld + k0 + t]);
    a[2] = __float_as_uint(M[(r0 + g) * ld + k0 + t + 4]);
    a[3] = __float_as_uint(M[(r0 + g + 8) * ld + k0 + t + 4]);
}

/* Products over Dk (X Y^T of row-major X, Y): within each step of 8, the fragments' k = t and k = t + 4
   are taken from columns 2t and 2t + 1 (the same permutation of the summation index in both
   operands), so each pair is one 8-byte load. */
__device__ __forceinline__ void frag_a2(unsigned a[4], const float *M, int ld, int r0, int k0, int g, int t)
{
    const float2 x = *(const float2 *)(M + (r0 + g) * ld + k0 + 2 * t);
    const float2 y = *(const float2 *)(M + (r0 + g + 8) * ld + k0 + 2 * t);
    a[0] = __float_as_uint(x.x);
    a[1] = __float_as_uint(y.x);
    a[2] = __float_as_uint(x.y);
    a[3] = __float_as_uint(y.y);
}
__device__ __forceinline__ void frag_bt2(unsigned b[2], const float *M, int ld, int k0, int n0, int g, int t)
{
    const float2 x = *(const float2 *)(M + (n0 + g) * ld + k0 + 2 * t);
    b[0] = __float_as_uint(x.x);
    b[1] = __float_as_uint(x.y);
}

/* B fragment (k0.. x n0..) of a row-major matrix (B[k][n] = M[k][n]). */
__device__ __forceinline__ void frag_b(unsigned b[2], const float *M, int ld, int k0, int n0, int g, int t)
{
    b[0] = __float_as_uint(M[(k0 + t) * ld + n0 + g]);
    b[1] = __float_as_uint(M[(k0 + t + 4) * ld + n0 + g]);
}

/* One token's log decay from its gate value g, by the gate convention (beta = sigmoid(b) in place for
   the raw gate), clamped at TC_LOGMIN; a NaN stays NaN (fmaxf would turn it into the clamp), so it
   reaches the outputs as in the oracle. */
__device__ __forceinline__ float gate_logdecay(const gdn_cuda_params &P, int h, float g, float *be)
{
    float l;
    switch (P.gate) {
    case GDN_GATE_LOG: l = g; break;
    case GDN_GATE_LINEAR: l = logf(g); break;
    case GDN_GATE_NEGLOG: l = -g; break;
    default:
        *be = 1.0f / (1.0f + expf(-*be));
        l = -expf(P.A_log[h]) * softplus_f(g + P.dt_bias[h]);
    }
    return l < TC_LOGMIN ? TC_LOGMIN : l;
}

/* Rows [tc, tc + nt) of a q or k head into shared memory as f32 (zeros past nt and Dk), element by
   element through any strides, a quarter of the tile per pass with every load of a pass issued before
   its stores (a loop that stores after each load waits out each load's latency in turn: ~35 us per
   chunk measured). */
template <int DKP>
__device__ __forceinline__ void tc_load_rows(const gdn_cuda_params &P, const void *base, const int64_t *st, int64_t b,
                                             int64_t tc, int nt, int hk, float *dst)
{
    constexpr int LDK = tc_ldk(DKP), NS = TC_C * DKP / TC_THREADS / 4;
    const bool f32 = P.dtype == GDN_DTYPE_F32;
#pragma unroll 1
    for (int pass = 0; pass < 4; pass++) {
        unsigned raw[NS];
#pragma unroll
        for (int u = 0; u < NS; u++) {
            const int e = threadIdx.x + (pass * NS + u) * TC_THREADS, t = e / DKP, c = e % DKP;
            raw[u] = 0u;
            if (t < nt && c < P.Dk) {
                const int64_t o = b * st[0] + (tc + t) * st[1] + (int64_t)hk * st[2] + (int64_t)c * st[3];
                raw[u] = f32 ? __ldg((const unsigned *)base + o) : (unsigned)__ldg((const unsigned short *)base + o);
            }
        }
#pragma unroll
        for (int u = 0; u < NS; u++) {
            const int e = threadIdx.x + (pass * NS + u) * TC_THREADS, t = e / DKP, c = e % DKP;
            dst[t * LDK + c] = tf32r(f32 ? __uint_as_float(raw[u]) : cvt16(raw[u], P.dtype));
        }
    }
}

/* The vector path of the rows: every load first (tc_issue_rows), then the stores with each row's norm
   (tc_store_rows: the RL threads of a row reduce its sum of squares by shuffles; sc[t] = mul times
   1 / |row| with the L2 norm, else mul). A row's DKP / 4 four-element pieces go to RL = min(DKP / 4, 32)
   lanes of one warp, RP = DKP / 4 / RL pieces each (two at DKP = 256): piece u of a thread is row
   (tid + (u / RP) TC_THREADS) / RL, columns 4 ((tid + (u / RP) TC_THREADS) % RL + RL (u % RP)) .. + 3. */
__host__ __device__ constexpr int tc_row_lanes(int dkp)
{
    return dkp / 4 < 32 ? dkp / 4 : 32;
}
template <int DKP>
__device__ __forceinline__ void tc_piece(int u, int *t, int *c)
{
    constexpr int RL = tc_row_lanes(DKP), RP = DKP / 4 / RL;
    const int e = threadIdx.x + (u / RP) * TC_THREADS;
    *t = e / RL;
    *c = 4 * (e % RL + RL * (u % RP));
}
template <int DKP>
__device__ __forceinline__ void tc_issue_rows(const gdn_cuda_params &P, const void *base, const int64_t *st, int64_t b,
                                              int64_t tc, int nt, int hk, uint4 (&raw)[TC_C * DKP / 4 / TC_THREADS])
{
    constexpr int NV = TC_C * DKP / 4 / TC_THREADS;
#pragma unroll
    for (int u = 0; u < NV; u++) {
        int t, c;
        tc_piece<DKP>(u, &t, &c);
        raw[u] = make_uint4(0u, 0u, 0u, 0u);
        if (t < nt && c < P.Dk) {
            const int64_t o = b * st[0] + (tc + t) * st[1] + (int64_t)hk * st[2] + c;
            if (P.dtype == GDN_DTYPE_F32) {
                raw[u] = __ldg((const uint4 *)((const float *)base + o));
            } else {
                const uint2 r = __ldg((const uint2 *)((const unsigned short *)base + o));
                raw[u].x = r.x;
                raw[u].y = r.y;
            }
        }
    }
}

template <int DKP>
__device__ __forceinline__ void tc_store_rows(const gdn_cuda_params &P, const uint4 (&raw)[TC_C * DKP / 4 / TC_THREADS],
                                              float *dst, float *sc, float mul)
{
    constexpr int NV = TC_C * DKP / 4 / TC_THREADS, LDK = tc_ldk(DKP), RL = tc_row_lanes(DKP); /* lanes per row */
    constexpr int RP = DKP / 4 / RL, NR = NV / RP; /* pieces per row and lane; rows per lane */
    static_assert(RL == 4 * NR, "tc_store_rows: the reduction below assumes RL = 4 NR");
    float ss[NR];
#pragma unroll
    for (int u = 0; u < NV; u++) {
        int t, c;
        tc_piece<DKP>(u, &t, &c);
        float4 x;
        if (P.dtype == GDN_DTYPE_F32) {
            x = make_float4(__uint_as_float(raw[u].x), __uint_as_float(raw[u].y), __uint_as_float(raw[u].z),
                            __uint_as_float(raw[u].w));
        } else {
            x.x = cvt16(raw[u].x & 0xffffu, P.dtype);
            x.y = cvt16(raw[u].x >> 16, P.dtype);
            x.z = cvt16(raw[u].y & 0xffffu, P.dtype);
            x.w = cvt16(raw[u].y >> 16, P.dtype);
        }
        *(float4 *)(dst + t * LDK + c) = make_float4(tf32r(x.x), tf32r(x.y), tf32r(x.z), tf32r(x.w));
        const float s2 = x.x * x.x + x.y * x.y + x.z * x.z + x.w * x.w;
        ss[u / RP] = u % RP ? ss[u / RP] + s2 : s2;
    }
    /* the NR rows' sums over their RL lanes at once: halving rounds (each lane passes on half of its
       values and keeps the half its partner passes, so after log2(NR) rounds it holds one row's partial,
       that of row index u), then two plain rounds: NR + 1 shuffles, not NR log2(RL) */
    const int lane = threadIdx.x & 31;
    int u = 0;
#pragma unroll
    for (int w = NR, o = RL / 2; w > 1; w >>= 1, o >>= 1) {
        const bool hi = (lane & o) != 0;
#pragma unroll
        for (int k = 0; k < w / 2; k++) {
            const float send = hi ? ss[k] : ss[k + w / 2], keep = hi ? ss[k + w / 2] : ss[k];
            ss[k] = keep + __shfl_xor_sync(0xffffffffu, send, o);
        }
        if (hi)
            u += w / 2;
    }
    float tot = ss[0];
    tot += __shfl_xor_sync(0xffffffffu, tot, 2);
    tot += __shfl_xor_sync(0xffffffffu, tot, 1);
    if ((lane & 3) == 0)
        sc[(threadIdx.x + u * TC_THREADS) / RL] = (P.l2norm ? rsqrtf(tot + 1e-6f) : 1.0f) * mul;
}

/* The chunk's v values of the TC_R rows of Dv from r0 (a state tile), raw (zeros past nt and the `rows` that
   exist). */
__device__ __forceinline__ void tc_issue_v(const gdn_cuda_params &P, int64_t b, int64_t tc, int nt, int h, int r0,
                                           int rows, unsigned (&raw)[TC_C * TC_R / TC_THREADS])
{
#pragma unroll
    for (int u = 0; u < TC_C * TC_R / TC_THREADS; u++) {
        const int e = threadIdx.x + u * TC_THREADS, t = e / TC_R, r = e % TC_R;
        raw[u] = 0u;
        if (t < nt && r < rows) {
            const int64_t vo = b * P.vs[0] + (tc + t) * P.vs[1] + (int64_t)h * P.vs[2] + (int64_t)(r0 + r) * P.vs[3];
            raw[u] = P.dtype == GDN_DTYPE_F32 ? __ldg((const unsigned *)P.v + vo)
                                              : (unsigned)__ldg((const unsigned short *)P.v + vo);
        }
    }
}

/* g_t and beta_t (raw) of token tc + threadIdx.x of sequence row b, head h, for threads below nt (others: 0). */
__device__ __forceinline__ void tc_load_gates(const gdn_cuda_params &P, int64_t b, int64_t tc, int nt, int h, float *gv,
                                              float *be)
{
    *gv = *be = 0.f;
    if ((int)threadIdx.x < nt) {
        const int64_t tt = tc + threadIdx.x;
        const int64_t go = b * P.gs[0] + tt * P.gs[1] + h * P.gs[2];
        const int64_t bo = b * P.bs[0] + tt * P.bs[1] + h * P.bs[2];
        if (P.gate_dtype == GDN_DTYPE_F32) {
            *gv = __ldg((const float *)P.g + go);
            *be = __ldg((const float *)P.beta + bo);
        } else {
            *gv = cvt16(__ldg((const unsigned short *)P.g + go), P.gate_dtype);
            *be = cvt16(__ldg((const unsigned short *)P.beta + bo), P.gate_dtype);
        }
    }
}

/* The rows' norm scales without the vector path (ksc; qsc with the attention scale): a warp per row, every
   warp of the CTA calls it. */
template <int DKP>
__device__ __forceinline__ void tc_row_norms(const gdn_cuda_params &P, const float *Ks, const float *Qs, float *ksc,
                                             float *qsc)
{
    constexpr int LDK = tc_ldk(DKP);
    const int lane = threadIdx.x & 31;
    for (int e = threadIdx.x >> 5; e < 2 * TC_C; e += TC_THREADS / 32) {
        const float *row = e < TC_C ? Ks + e * LDK : Qs + (e - TC_C) * LDK;
        float ss = 0.f;
#pragma unroll
        for (int c = lane; c < DKP; c += 32)
            ss = fmaf(row[c], row[c], ss);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            ss += __shfl_xor_sync(0xffffffffu, ss, o);
        if (lane == 0) {
            const float sc = P.l2norm ? rsqrtf(ss + 1e-6f) : 1.0f;
            if (e < TC_C)
                ksc[e] = sc;
            else
                qsc[e - TC_C] = sc * P.scale;
        }
    }
}

/* One warp: the inclusive scan of the chunk's 64 log decays, a0, a1 those of tokens 2 lane, 2 lane + 1, into
   their running sums lc, and gam = exp of them. */
__device__ __forceinline__ void tc_scan_pair(float a0, float a1, float *lc, float *gam)
{
    const int lane = threadIdx.x & 31;
    a1 += a0;
    float s = a1;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float y = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o)
            s += y;
    }
    const float ex = s - a1; /* the sum before this lane's pair */
    __syncwarp();
    lc[2 * lane] = ex + a0;
    lc[2 * lane + 1] = s;
    gam[2 * lane] = expf(ex + a0);
    gam[2 * lane + 1] = expf(s);
}
/* tc_scan_pair of the log decays in lc, in place. */
__device__ __forceinline__ void tc_scan_decays(float *lc, float *gam)
{
    const int lane = threadIdx.x & 31;
    tc_scan_pair(lc[2 * lane], lc[2 * lane + 1], lc, gam);
}

/* Key warp bk's diagonal block inverse T_bb = (I - L_bb)^-1 (rows 16 bk .., which the warp wrote): a column c per
   lane below 16 (x_i = 0 above the diagonal, so the sums need no mask; every load is independent of the
   results). Called by the whole warp. */
__device__ __forceinline__ void tc_invert_diag(const float *Lm, float *Tm, int bk)
{
    const int lane = threadIdx.x & 31;
    __syncwarp();
    if (lane < 16) {
        const int c = lane, o = 16 * bk;
        float x[16];
#pragma unroll
        for (int i = 0; i < 16; i++) {
            float s0 = 0.f, s1 = 0.f;
#pragma unroll
            for (int k = 0; k < i; k++) {
                const float l = Lm[(o + i) * TC_LDA + o + k];
                if (k & 1)
                    s1 = fmaf(l, x[k], s1);
                else
                    s0 = fmaf(l, x[k], s0);
            }
            x[i] = i == c ? 1.f : i > c ? s0 + s1 : 0.f;
        }
#pragma unroll
        for (int i = 0; i < 16; i++)
            Tm[(o + i) * TC_LDT + c] = tf32r(x[i]);
    }
}

/* One warp's 8-column strip n0 .. n0 + 7 of the blockwise solve (I - L) D = R over the 16-token blocks bk = b0 .. 3
   (rows of R above block b0 must be zero; so are those of D): R_b += L_b. D over the solved rows from block b0,
   rounded into R, then D_b = T_bb R_b into D (T: the diagonal blocks' inverses). INPLACE: D is R (the warp
   syncs before each overwrite); UNROLL: the block loop's unroll count. */
template <bool INPLACE, int UNROLL>
__device__ __forceinline__ void tc_solve_strip(const float *Lm, const float *Tm, float *R, int ldr, float *D, int ldd,
                                               int n0, int b0, int g, int t4)
{
#pragma unroll UNROLL
    for (int bk = b0; bk < 4; bk++) {
        float r[4];
#pragma unroll
        for (int q = 0; q < 4; q++)
            r[q] = R[(16 * bk + g + 8 * (q >> 1)) * ldr + n0 + 2 * t4 + (q & 1)];
        for (int k0 = 16 * b0; k0 < 16 * bk; k0 += 8) { /* + L_bk D_k */
            unsigned a[4], bb[2];
            frag_a(a, Lm, TC_LDA, 16 * bk, k0, g, t4);
            frag_b(bb, D, ldd, k0, n0, g, t4);
            mma_tf32(r, a, bb);
        }
        if constexpr (INPLACE)
            __syncwarp();
#pragma unroll
        for (int q = 0; q < 4; q++)
            R[(16 * bk + g + 8 * (q >> 1)) * ldr + n0 + 2 * t4 + (q & 1)] = tf32r(r[q]);
        __syncwarp();
        float d[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int k0 = 0; k0 < 16; k0 += 8) { /* D_b = T_bb (R_b + ...) */
            unsigned a[4], bb[2];
            frag_a(a, Tm, TC_LDT, 16 * bk, k0, g, t4);
            frag_b(bb, R, ldr, 16 * bk + k0, n0, g, t4);
            mma_tf32(d, a, bb);
        }
        if constexpr (INPLACE)
            __syncwarp();
#pragma unroll
        for (int q = 0; q < 4; q++)
            D[(16 * bk + g + 8 * (q >> 1)) * ldd + n0 + 2 * t4 + (q & 1)] = tf32r(d[q]);
        __syncwarp();
    }
}

/* The state tile of an update warp (warps 0-3): its accumulator fragment, rows sm0 + g (+ 8) of the tile, columns
   sn0 + 8 j + 2 t4 (+ 1), j < NTW = DKP / 16. tc_state_load: from slot rs (zeros without one, past Dv or Dk), also
   into Ss rounded to tf32; tc_state_store: to slot ws. */
struct tc_tile {
    int h, r0, rows, Dk, sm0, sn0, g, t4;
    int64_t prs, pcs;
};
/* A warp's pairs of a state tile in the pool, slot `slot`, head h: rows r0 + rb (+ 8) (those below rows),
   columns cb + 8 j (+ 1), j < NJ (those below Dk); x(j, hf) points at the pair of row rb + 8 hf. ST: written;
   else read, zeros where slot < 0 or outside the tile. Per row a pointer, and two floats per access where the
   pool allows (unit column stride, even strides and Dk, an 8-byte aligned base): this code runs once per
   sequence, from a cold instruction cache, so it must stay short (docs/PERF.md, session 11). The tensor-core
   chunked kernels' state load and store (tc_state_load, tc_state_store, chunked_rs.cuh). */
template <int NJ, bool ST, class X>
__device__ __forceinline__ void tc_pool_io(const gdn_cuda_params &P, int64_t slot, int h, int r0, int rb, int rows,
                                           int cb, int64_t prs, int64_t pcs, X x)
{
    const bool vec = pcs == 1 && ((prs | P.ps[0] | P.ps[1] | P.Dk) & 1) == 0 && ((uintptr_t)P.pool & 7) == 0;
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        const int r = rb + 8 * hf;
        const bool in = (ST || slot >= 0) && r < rows;
        float *row = P.pool + (in ? slot * P.ps[0] + (int64_t)h * P.ps[1] + (int64_t)(r0 + r) * prs : 0);
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            const int c = cb + 8 * j;
            float *v = x(j, hf);
            if (vec) {
                if (ST && in && c < P.Dk)
                    *(float2 *)(row + c) = make_float2(v[0], v[1]);
                if (!ST) {
                    const float2 y = in && c < P.Dk ? *(const float2 *)(row + c) : make_float2(0.f, 0.f);
                    v[0] = y.x;
                    v[1] = y.y;
                }
            } else if (ST) {
                if (in && c < P.Dk)
                    row[c * pcs] = v[0];
                if (in && c + 1 < P.Dk)
                    row[(c + 1) * pcs] = v[1];
            } else {
                v[0] = in && c < P.Dk ? row[c * pcs] : 0.f;
                v[1] = in && c + 1 < P.Dk ? row[(c + 1) * pcs] : 0.f;
            }
        }
    }
}
template <int DKP>
__device__ __forceinline__ void tc_state_load(const gdn_cuda_params &P, const tc_tile &k, int64_t rs,
                                              float (&sacc)[DKP / 16][4], float *Ss)
{
    tc_pool_io<DKP / 16, false>(P, rs, k.h, k.r0, k.sm0 + k.g, k.rows, k.sn0 + 2 * k.t4, k.prs, k.pcs,
                                [&](int j, int hf) { return &sacc[j][2 * hf]; });
#pragma unroll
    for (int hf = 0; hf < 2; hf++)
#pragma unroll
        for (int j = 0; j < DKP / 16; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                Ss[(k.sm0 + k.g + 8 * hf) * tc_ldk(DKP) + k.sn0 + 8 * j + 2 * k.t4 + e] = tf32r(sacc[j][2 * hf + e]);
}
template <int DKP>
__device__ __forceinline__ void tc_state_store(const gdn_cuda_params &P, const tc_tile &k, int64_t ws,
                                               float (&sacc)[DKP / 16][4])
{
    tc_pool_io<DKP / 16, true>(P, ws, k.h, k.r0, k.sm0 + k.g, k.rows, k.sn0 + 2 * k.t4, k.prs, k.pcs,
                               [&](int j, int hf) { return &sacc[j][2 * hf]; });
}

/* The state update of an update warp: S' = gl S + (D o cf)^T K, K [C][LDK] in shared memory, then the warp's
   fragment into Ss rounded to tf32. */
template <int DKP>
__device__ __forceinline__ void tc_state_update(const tc_tile &k, float (&sacc)[DKP / 16][4], float gl, const float *Dm,
                                                const float *cf, const float *K, float *Ss)
{
    constexpr int NTW = DKP / 16, LDK = tc_ldk(DKP);
    const int g = k.g, t4 = k.t4, sm0 = k.sm0, sn0 = k.sn0;
#pragma unroll
    for (int j = 0; j < NTW; j++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            sacc[j][q] *= gl;
#pragma unroll 2
    for (int k0 = 0; k0 < TC_C; k0 += 8) {
        unsigned a[4], bb[2];
        const float c0 = cf[k0 + t4], c1 = cf[k0 + t4 + 4];
        a[0] = tf32_of(Dm[(k0 + t4) * TC_LDV + sm0 + g] * c0);
        a[1] = tf32_of(Dm[(k0 + t4) * TC_LDV + sm0 + g + 8] * c0);
        a[2] = tf32_of(Dm[(k0 + t4 + 4) * TC_LDV + sm0 + g] * c1);
        a[3] = tf32_of(Dm[(k0 + t4 + 4) * TC_LDV + sm0 + g + 8] * c1);
#pragma unroll
        for (int j = 0; j < NTW; j++) {
            frag_b(bb, K, LDK, k0, sn0 + 8 * j, g, t4);
            mma_tf32(sacc[j], a, bb);
        }
    }
#pragma unroll
    for (int j = 0; j < NTW; j++)
#pragma unroll
        for (int hf = 0; hf < 2; hf++)
            *(float2 *)(Ss + (sm0 + g + 8 * hf) * LDK + sn0 + 8 * j + 2 * t4) =
                make_float2(tf32r(sacc[j][2 * hf]), tf32r(sacc[j][2 * hf + 1]));
}

/* The outputs of a query warp: O = acc + P D for rows 16 mt .. of the chunk (acc: the first term, per fragment),
   stored for the rows below nt and the tile's rows. */
__device__ __forceinline__ void tc_outputs(const gdn_cuda_params &P, const tc_tile &k, float (&accs)[TC_R / 8][4],
                                           const float *Pm, const float *Dm, int mt, int nt, int64_t b, int64_t tc)
{
    const int g = k.g, t4 = k.t4;
    for (int k0 = 0; k0 < 16 * (mt + 1); k0 += 8) {
        unsigned a[4], bb[2];
        frag_a(a, Pm, TC_LDA, 16 * mt, k0, g, t4);
#pragma unroll
        for (int j = 0; j < TC_R / 8; j++) {
            frag_b(bb, Dm, TC_LDV, k0, 8 * j, g, t4);
            mma_tf32(accs[j], a, bb);
        }
    }
    if (P.out)
#pragma unroll
        for (int j = 0; j < TC_R / 8; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int i = 16 * mt + g + 8 * (q >> 1), r = 8 * j + 2 * t4 + (q & 1);
                if (i < nt && r < k.rows)
                    st_elem(P.out, P.out_dtype,
                            b * P.os[0] + (tc + i) * P.os[1] + k.h * P.os[2] + (int64_t)(k.r0 + r) * P.os[3],
                            accs[j][q]);
            }
}

#ifdef GDN_TC_PROF /* measurements only: cycles per phase of CTA (0, 0), printed at its end */
#define TC_MARK(k)                                                                                            \
    do {                                                                                                      \
        const long long now_ = clock64();                                                                     \
        prof_[(k)] += now_ - last_;                                                                           \
        last_ = now_;                                                                                         \
    } while (0)
#else
#define TC_MARK(k) ((void)0)
#endif

template <int DKP>
__global__ void __launch_bounds__(TC_THREADS, 1) chunk_tc_kernel(const __grid_constant__ gdn_cuda_params P)
{
    extern __shared__ __align__(16) float tc_sm[];
    constexpr int LDK = tc_ldk(DKP), LDV = TC_LDV, LDA = TC_LDA;
    constexpr int NTW = DKP / 16; /* state n-tiles (8 columns) per update warp */
    float *Ks = tc_sm;             /* [C][LDK] k rows (raw) */
    float *Qs = Ks + TC_C * LDK;   /* [C][LDK] q rows (raw) */
    float *Ss = Qs + TC_C * LDK;   /* [R][LDK] the state tile */
    float *Rm = Ss + TC_R * LDK;   /* [C][LDV] v, then R, then the solve's right-hand sides */
    float *Dm = Rm + TC_C * LDV;   /* [C][LDV] D */
    float *Lm = Dm + TC_C * LDV;   /* [C][LDA] L = -A (strictly lower) */
    float *Pm = Lm + TC_C * LDA;   /* [C][LDA] Q^ K^T o G (lower) */
    float *Tm = Pm + TC_C * LDA;   /* [C][TC_LDT] the diagonal blocks' inverses (block b in rows 16 b ..) */
    float *lc = Tm + TC_C * TC_LDT; /* [C] log decays, then their running sums c_t */
    float *bet = lc + TC_C, *ksc = bet + TC_C, *qsc = ksc + TC_C, *gam = qsc + TC_C, *cf = gam + TC_C;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
    const int tiles = (P.Dv + TC_R - 1) / TC_R;
    const int h = (int)(blockIdx.x / tiles), r0 = (int)(blockIdx.x % tiles) * TC_R;
    const int Dk = P.Dk, rows = P.Dv - r0 < TC_R ? P.Dv - r0 : TC_R;
    const int hk = P.grouped ? h / P.ratio : h % P.Hk;
    const int64_t prs = P.kv_layout ? P.ps[3] : P.ps[2], pcs = P.kv_layout ? P.ps[2] : P.ps[3];
    const bool upd = warp < 4; /* warps 0-3: keys, solve, state; 4-7: queries, outputs */
    /* the 16-token block of the products: the query warps in reverse, so that each scheduler (warps w and
       w + 4) gets one long and one short row of the triangular K K^T and Q K^T */
    const int mt = upd ? warp : 7 - warp;
    /* the state fragment of an update warp: rows 16 * (warp & 1) .., columns 8 * (NTW * (warp >> 1) + j) .. */
    const int sm0 = 16 * (warp & 1), sn0 = 8 * NTW * ((warp >> 1) & 1);
    const tc_tile tile = {h, r0, rows, Dk, sm0, sn0, g, t4, prs, pcs};

    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error))
        return;
#ifdef GDN_TC_PROF
    long long prof_[6] = {0}, last_ = clock64();
#endif
    for (int64_t n = blockIdx.y; n < P.N; n += gridDim.y) {
        int64_t b, t0, t1;
        seq_tokens(P, n, &b, &t0, &t1);
        const int64_t rs = seq_read_slot(P, n), ws = seq_write_slot(P, n);

        float sacc[NTW][4];
        if (upd) /* the state fragment (zeros without a read state, past Dv or Dk) */
            tc_state_load<DKP>(P, tile, rs, sacc, Ss);

        for (int64_t tc = t0; tc < t1; tc += TC_C) {
            const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
            __syncthreads(); /* the previous chunk is done with every buffer; the state tile is written */
            TC_MARK(0);
            /* inputs: the gates' loads first, then every load of the k, q rows and the tile's v values
               before the first store; the rows' norms as they are stored (vector path) */
            float gv, be;
            tc_load_gates(P, b, tc, nt, h, &gv, &be);
            {
                constexpr int NVV = TC_C * TC_R / TC_THREADS;
                unsigned vraw[NVV];
                if (P.qk_vec) {
                    uint4 kr[TC_C * DKP / 4 / TC_THREADS], qr[TC_C * DKP / 4 / TC_THREADS];
                    tc_issue_rows<DKP>(P, P.k, P.ks, b, tc, nt, hk, kr);
                    tc_issue_rows<DKP>(P, P.q, P.qs, b, tc, nt, hk, qr);
                    tc_issue_v(P, b, tc, nt, h, r0, rows, vraw);
                    tc_store_rows<DKP>(P, kr, Ks, ksc, 1.0f);
                    tc_store_rows<DKP>(P, qr, Qs, qsc, P.scale);
                } else {
                    tc_load_rows<DKP>(P, P.k, P.ks, b, tc, nt, hk, Ks);
                    tc_load_rows<DKP>(P, P.q, P.qs, b, tc, nt, hk, Qs);
                    tc_issue_v(P, b, tc, nt, h, r0, rows, vraw);
                }
#pragma unroll
                for (int u = 0; u < NVV; u++) {
                    const int e = tid + u * TC_THREADS, t = e / TC_R, r = e % TC_R;
                    Rm[t * LDV + r] = P.dtype == GDN_DTYPE_F32 ? __uint_as_float(vraw[u]) : cvt16(vraw[u], P.dtype);
                }
            }
            if (tid < TC_C) {
                float l = 0.f;
                if (tid < nt)
                    l = gate_logdecay(P, h, gv, &be);
                lc[tid] = l;
                TC_MARK(5);
                bet[tid] = tid < nt ? be : 0.f;
            } else if (tid < 2 * TC_C) { /* the next chunk's rows and gates into L2 */
                const int64_t tt = tc + TC_C + (tid - TC_C);
                if (tt < t1) {
                    const int esz = P.dtype == GDN_DTYPE_F32 ? 4 : 2, gsz = P.gate_dtype == GDN_DTYPE_F32 ? 4 : 2;
                    const char *kr = (const char *)P.k + (b * P.ks[0] + tt * P.ks[1] + (int64_t)hk * P.ks[2]) * esz;
                    const char *qr = (const char *)P.q + (b * P.qs[0] + tt * P.qs[1] + (int64_t)hk * P.qs[2]) * esz;
                    const char *vr = (const char *)P.v + (b * P.vs[0] + tt * P.vs[1] + (int64_t)h * P.vs[2] +
                                                          (int64_t)r0 * P.vs[3]) * esz;
                    const char *gr = (const char *)P.g + (b * P.gs[0] + tt * P.gs[1] + (int64_t)h * P.gs[2]) * gsz;
                    const char *br = (const char *)P.beta + (b * P.bs[0] + tt * P.bs[1] + (int64_t)h * P.bs[2]) * gsz;
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(kr));
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(qr));
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(vr));
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(gr));
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(br));
                    if (P.ks[3] == 1)
                        for (int off = 128; off < Dk * esz; off += 128) {
                            asm volatile("prefetch.global.L2 [%0];" ::"l"(kr + off));
                            asm volatile("prefetch.global.L2 [%0];" ::"l"(qr + off));
                        }
                }
            }
            __syncthreads();
            TC_MARK(1);
            /* norms without the vector path (a warp per row); the running sums of the log decays (warp 7) */
            if (!P.qk_vec)
                tc_row_norms<DKP>(P, Ks, Qs, ksc, qsc);
            if (warp == 7)
                tc_scan_decays(lc, gam);
            __syncthreads();
            TC_MARK(2);
            if (tid < TC_C) /* the update's coefficients G[nt-1][j] ksc_j (0 past nt) */
                cf[tid] = tid < nt ? expf(lc[nt - 1] - lc[tid]) * ksc[tid] : 0.f;

            /* products: warp (mt, keys) K K^T and K S^T; warp (mt, queries) Q K^T and Q S^T, rows 16 mt .. */
            float acc[8][4], accs[TC_R / 8][4];
#pragma unroll
            for (int j = 0; j < 8; j++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    acc[j][q] = 0.f;
#pragma unroll
            for (int j = 0; j < TC_R / 8; j++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    accs[j][q] = 0.f;
            {
                const float *X = upd ? Ks : Qs;
#pragma unroll 2
                for (int k0 = 0; k0 < DKP; k0 += 8) {
                    unsigned a[4], bb[2];
                    frag_a2(a, X, LDK, 16 * mt, k0, g, t4);
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        if (j < 2 * (mt + 1)) {
                            frag_bt2(bb, Ks, LDK, k0, 8 * j, g, t4);
                            mma_tf32(acc[j], a, bb);
                        }
#pragma unroll
                    for (int j = 0; j < TC_R / 8; j++) {
                        frag_bt2(bb, Ss, LDK, k0, 8 * j, g, t4);
                        mma_tf32(accs[j], a, bb);
                    }
                }
            }
            /* epilogues: L, R (keys) or P and the outputs' first term (queries) */
            {
                float ci[2], si[2], bi[2], gi[2];
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    const int i = 16 * mt + g + 8 * hf;
                    ci[hf] = lc[i];
                    si[hf] = upd ? ksc[i] : qsc[i];
                    bi[hf] = bet[i];
                    gi[hf] = gam[i];
                }
#pragma unroll
                for (int j = 0; j < 8; j++)
                    if (j < 2 * (mt + 1))
#pragma unroll
                        for (int q = 0; q < 4; q++) {
                            const int hf = q >> 1, i = 16 * mt + g + 8 * hf, jj = 8 * j + 2 * t4 + (q & 1);
                            const bool in = upd ? jj < i : jj <= i;
                            const float G = in ? expf(ci[hf] - lc[jj]) : 0.f;
                            const float x = G * si[hf] * ksc[jj] * acc[j][q];
                            if (upd)
                                Lm[i * LDA + jj] = tf32r(-bi[hf] * x);
                            else
                                Pm[i * LDA + jj] = tf32r(x);
                        }
#pragma unroll
                for (int j = 0; j < TC_R / 8; j++)
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        const int hf = q >> 1, i = 16 * mt + g + 8 * hf, r = 8 * j + 2 * t4 + (q & 1);
                        if (upd)
                            Rm[i * LDV + r] = bi[hf] * (Rm[i * LDV + r] - gi[hf] * si[hf] * accs[j][q]);
                        else
                            accs[j][q] *= gi[hf] * si[hf]; /* diag(gam) Q^ S^T, kept for the outputs */
                    }
            }
            /* the diagonal block's inverse T_bb = (I - L_bb)^-1 of key warp bk = mt, which wrote L's rows of
               the block: a column c per lane (x_i = 0 above the diagonal, so the sums need no mask; every
               load is independent of the results), while the query warps run their products */
            if (upd)
                tc_invert_diag(Lm, Tm, mt);
            __syncthreads();
            TC_MARK(3);
            /* the blockwise solve: warp w < 4 takes the 8 columns 8 w .. of D */
            if (upd)
                tc_solve_strip<false, 4>(Lm, Tm, Rm, LDV, Dm, LDV, 8 * warp, 0, g, t4);
            __syncthreads();
            TC_MARK(4);
            if (!upd) /* outputs: O = diag(gam) Q^ S^T + P D, rows 16 mt .. */
                tc_outputs(P, tile, accs, Pm, Dm, mt, nt, b, tc);
            else /* the state: S' = gam_{nt-1} S + (D o cf)^T K, this warp's fragment */
                tc_state_update<DKP>(tile, sacc, gam[nt - 1], Dm, cf, Ks, Ss);
        }
        /* the final state (an empty sequence copies its read state) */
        if (upd && ws >= 0 && !(t1 == t0 && ws == rs))
            tc_state_store<DKP>(P, tile, ws, sacc);
        __syncthreads(); /* the tile is read out before the next sequence's is loaded */
    }
#ifdef GDN_TC_PROF
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)
        printf("tc prof (cycles, CTA 0 thread 0): update+wait %lld load %lld norms %lld products+inverses %lld "
               "solve %lld | in load: to the gates %lld\n", prof_[0], prof_[1], prof_[2], prof_[3], prof_[4], prof_[5]);
#endif
}

static cudaError_t launch_chunk_tc(gdn_cuda_params p, cudaLaunchConfig_t cfg)
{
    const int dkp = chunk_dkp(p.Dk);
    const chunk_kernel_fn fn = dkp == 32    ? chunk_tc_kernel<32>
                               : dkp == 64  ? chunk_tc_kernel<64>
                               : dkp == 128 ? chunk_tc_kernel<128>
                                            : chunk_tc_kernel<256>;
    return launch_chunk(p, cfg, fn, (size_t)tc_smem_floats(dkp) * sizeof(float), TC_THREADS, TC_R);
}

#endif
