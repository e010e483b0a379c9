/*
 * chunked_split.cuh — chunkwise prefill on tensor cores in two passes (research/ALGORITHM.md sections 1-2):
 * chunk_split_tf32__cuda_mma, included by recurrent.cu after chunked_tc.cuh (whose helpers it uses).
 *
 * Why: chunk_tc_kernel does every chunk's key-side work (norms, K K^T, Q K^T, the inverses, the solve) in
 * the serial chunk-to-chunk chain, and each of a head's row tiles repeats it (docs/DESIGN.md). Here that
 * work runs for all chunks at once in a first pass, and the serial pass is three products per chunk.
 *
 * Math per (sequence, value head), chunk of nt <= TC_C tokens (notation of chunked_tc.cuh: k^, q^ the
 * normalised rows, q^ with the scale; c_t the running sums of the clamped log decays within the chunk,
 * gam_t = exp(c_t), G[i][j] = exp(c_i - c_j)); A[i][j] = b_i G[i][j] (k^_i . k^_j) (i > j), T = (I + A)^-1:
 *     W  = T diag(b gam) K^          [C][Dk]      U = T diag(b) V     [C][Dv]
 *     Qg = diag(gam) Q^              [C][Dk]      Kw = diag(G[nt-1][.]) K^ (rows past nt zero)
 *     P  = Q^ K^T o G (j <= i)       [C][C]       gl = gam_{nt-1}
 * and then, with the state S [Dv][Dk] entering the chunk,
 *     D  = U - W S^T                 (the deltas: D = T diag(b) (V - diag(gam) K^ S^T), as chunk_tc's solve)
 *     O  = Qg S^T + P D
 *     S' = gl S + D^T Kw
 * Pass 1, chunk_split_prep_kernel: one CTA of 8 warps per (chunk, value head, sequence), all at once:
 * inputs and norms as chunk_tc (tc_issue_rows / tc_store_rows), K K^T and Q K^T on tensor cores, the
 * diagonal blocks of T by substitution, then the blockwise solve (D_b = T_bb (R_b + L_b. D)) for the
 * DKP + DVP right-hand-side columns [diag(b gam ksc) K | diag(b) V] at once, each warp owning 8-column
 * strips (no barrier between the blocks); W, U, Qg, Kw, P and gl go to the context's workspace (f32,
 * rounded to tf32), WSB floats per chunk.
 * Pass 2, chunk_split_state_kernel: one CTA of 8 warps per (value head, TC_R state rows, sequence),
 * walking the chunks: the chunk's W, Qg, Kw, P and U tile from the workspace into shared memory; warps
 * 0-3 D = U - W S^T (16 rows each), warps 4-7 Qg S^T; barrier; warps 4-7 the outputs O = Qg S^T + P D,
 * warps 0-3 the state update (the state in f32 accumulator fragments across chunks, as chunk_tc).
 *
 * Assumptions (chunk_split_ok): as chunk_tc_kernel (no capture, Dk <= 128), plus a dense batch (no
 * cu_seqlens; batch.num_tokens allowed), Dv <= 128, N <= 65535, and a workspace of N Hv ceil(T / C) WSB
 * floats (the launcher falls back to chunk_tc_kernel without one). Gate values must give decays in [0, 1].
 */
#ifndef GDN_CUDA_CHUNKED_SPLIT_CUH
#define GDN_CUDA_CHUNKED_SPLIT_CUH

/* Floats of one chunk's workspace block: W, Qg, Kw [C][DKP], U [C][DVP], P [C][C], gl (padded to 4). */
__host__ __device__ constexpr int64_t split_wsb(int dkp, int dvp)
{
    return (int64_t)3 * TC_C * dkp + (int64_t)TC_C * dvp + (int64_t)TC_C * TC_C + 4;
}
__host__ __device__ constexpr int split_ldx(int dkp, int dvp)
{
    return dkp + dvp + 8; /* the solve's rows: the (row t, column g) fragment reads hit 32 banks */
}
__host__ __device__ constexpr int split_prep_smem_floats(int dkp, int dvp)
{
    return 2 * TC_C * tc_ldk(dkp) + 3 * TC_C * TC_LDA + TC_C * split_ldx(dkp, dvp) + 6 * TC_C;
}
__host__ __device__ constexpr int split_state_smem_floats(int dkp)
{
    return 3 * TC_C * tc_ldk(dkp) + TC_R * tc_ldk(dkp) + 2 * TC_C * TC_LDV + TC_C * TC_LDA;
}

/* Pass 1 (see the header). DKP, DVP: Dk, Dv padded (32, 64 or 128). Grid (chunks, Hv, N). */
template <int DKP, int DVP>
__global__ void __launch_bounds__(TC_THREADS, 1) chunk_split_prep_kernel(const __grid_constant__ gdn_cuda_params P)
{
    extern __shared__ __align__(16) float sp_sm[];
    constexpr int LDK = tc_ldk(DKP), LDA = TC_LDA, LDX = split_ldx(DKP, DVP), NX = DKP + DVP;
    float *Ks = sp_sm;             /* [C][LDK] k rows (raw) */
    float *Qs = Ks + TC_C * LDK;   /* [C][LDK] q rows (raw) */
    float *Lm = Qs + TC_C * LDK;   /* [C][LDA] L = -A (strictly lower) */
    float *Pm = Lm + TC_C * LDA;   /* [C][LDA] P */
    float *Tm = Pm + TC_C * LDA;   /* [C][LDA] the diagonal blocks' inverses */
    float *Xm = Tm + TC_C * LDA;   /* [C][LDX] v (raw, columns DKP..), then the right-hand sides, then W | U */
    float *lc = Xm + TC_C * LDX;   /* [C] log decays, then their running sums */
    float *bet = lc + TC_C, *ksc = bet + TC_C, *qsc = ksc + TC_C, *gam = qsc + TC_C, *cf = gam + TC_C;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
    const int c = (int)blockIdx.x, h = (int)blockIdx.y;
    const int64_t n = blockIdx.z;
    const int Dv = P.Dv;
    const int hk = P.grouped ? h / P.ratio : h % P.Hk;
    const bool upd = warp < 4;
    const int mt = upd ? warp : 7 - warp;

    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error))
        return;
    int64_t b, t0, t1;
    seq_tokens(P, n, &b, &t0, &t1);
    const int64_t tc = t0 + (int64_t)c * TC_C;
    if (tc >= t1)
        return; /* past the sequence's (counted) tokens: the state pass never reads this block */
    const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
    const int64_t nch = (P.T + TC_C - 1) / TC_C;
    float *wsb = P.ws + ((n * P.Hv + h) * nch + c) * split_wsb(DKP, DVP);

    /* inputs: gates, then every load of the k, q rows and the v values before the stores */
    float gv, be;
    tc_load_gates(P, b, tc, nt, h, &gv, &be);
    {
        constexpr int NVV = TC_C * DVP / TC_THREADS;
        unsigned vraw[NVV];
        if (P.qk_vec) {
            uint4 kr[TC_C * DKP / 4 / TC_THREADS], qr[TC_C * DKP / 4 / TC_THREADS];
            tc_issue_rows<DKP>(P, P.k, P.ks, b, tc, nt, hk, kr);
            tc_issue_rows<DKP>(P, P.q, P.qs, b, tc, nt, hk, qr);
            tc_issue_v<DVP>(P, b, tc, nt, h, 0, Dv, vraw);
            tc_store_rows<DKP>(P, kr, Ks, ksc, 1.0f);
            tc_store_rows<DKP>(P, qr, Qs, qsc, P.scale);
        } else {
            tc_load_rows<DKP>(P, P.k, P.ks, b, tc, nt, hk, Ks);
            tc_load_rows<DKP>(P, P.q, P.qs, b, tc, nt, hk, Qs);
            tc_issue_v<DVP>(P, b, tc, nt, h, 0, Dv, vraw);
        }
#pragma unroll
        for (int u = 0; u < NVV; u++) {
            const int e = tid + u * TC_THREADS, t = e / DVP, r = e % DVP;
            Xm[t * LDX + DKP + r] = P.dtype == GDN_DTYPE_F32 ? __uint_as_float(vraw[u]) : cvt16(vraw[u], P.dtype);
        }
    }
    if (tid < TC_C) {
        float l = 0.f;
        if (tid < nt)
            l = gate_logdecay(P, h, gv, &be);
        lc[tid] = l;
        bet[tid] = tid < nt ? be : 0.f;
    }
    __syncthreads();
    /* norms without the vector path (a warp per row); the running sums of the log decays (warp 7) */
    if (!P.qk_vec)
        tc_row_norms<DKP>(P, Ks, Qs, ksc, qsc);
    if (warp == 7)
        tc_scan_decays(lc, gam);
    __syncthreads();
    if (tid < TC_C) /* the update's coefficients G[nt-1][j] ksc_j (0 past nt) */
        cf[tid] = tid < nt ? expf(lc[nt - 1] - lc[tid]) * ksc[tid] : 0.f;
    if (tid == 0)
        wsb[split_wsb(DKP, DVP) - 4] = gam[nt - 1];
    __syncthreads(); /* cf is read by every thread below */

    /* products: warp (mt, keys) K K^T, warp (mt, queries) Q K^T, rows 16 mt .. */
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            acc[j][q] = 0.f;
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
        }
    }
    {
        float ci[2], si[2], bi[2];
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            const int i = 16 * mt + g + 8 * hf;
            ci[hf] = lc[i];
            si[hf] = upd ? ksc[i] : qsc[i];
            bi[hf] = bet[i];
        }
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int hf = q >> 1, i = 16 * mt + g + 8 * hf, jj = 8 * j + 2 * t4 + (q & 1);
                const bool in = j < 2 * (mt + 1) && (upd ? jj < i : jj <= i);
                const float G = in ? expf(ci[hf] - lc[jj]) : 0.f;
                const float x = in ? G * si[hf] * ksc[jj] * acc[j][q] : 0.f;
                if (upd)
                    Lm[i * LDA + jj] = tf32r(-bi[hf] * x);
                else
                    Pm[i * LDA + jj] = tf32r(x);
            }
    }
    /* the right-hand sides [diag(b gam ksc) K | diag(b) V] (every warp, elementwise), and Qg, Kw to the
       workspace */
    for (int e = tid; e < TC_C * NX; e += TC_THREADS) {
        const int i = e / NX, cc = e % NX;
        float x;
        if (cc < DKP)
            x = bet[i] * gam[i] * ksc[i] * Ks[i * LDK + cc];
        else
            x = bet[i] * Xm[i * LDX + cc];
        Xm[i * LDX + cc] = tf32r(x);
    }
    {
        float *qg = wsb + TC_C * DKP, *kw = qg + TC_C * DKP;
        for (int e = tid; e < TC_C * DKP / 4; e += TC_THREADS) {
            const int i = e / (DKP / 4), cc = 4 * (e % (DKP / 4));
            const float4 qv = *(const float4 *)(Qs + i * LDK + cc), kv = *(const float4 *)(Ks + i * LDK + cc);
            const float sq = gam[i] * qsc[i], sk = cf[i];
            *(float4 *)(qg + i * DKP + cc) = make_float4(tf32r(sq * qv.x), tf32r(sq * qv.y), tf32r(sq * qv.z), tf32r(sq * qv.w));
            *(float4 *)(kw + i * DKP + cc) = make_float4(tf32r(sk * kv.x), tf32r(sk * kv.y), tf32r(sk * kv.z), tf32r(sk * kv.w));
        }
    }
    /* the diagonal block's inverse T_bb = (I - L_bb)^-1 of key warp bk = mt */
    if (upd)
        tc_invert_diag(Lm, Tm, mt);
    __syncthreads();
    /* P to the workspace */
    {
        float *pw = wsb + 3 * TC_C * DKP + TC_C * DVP;
        for (int e = tid; e < TC_C * TC_C / 4; e += TC_THREADS) {
            const int i = e / (TC_C / 4), cc = 4 * (e % (TC_C / 4));
            *(float4 *)(pw + i * TC_C + cc) = *(const float4 *)(Pm + i * LDA + cc);
        }
    }
    /* the blockwise solve, in place: warp w takes the 8-column strips w, w + 8, ... of the NX columns;
       block bk: R_b += L_b. D (rows before the block, already solved), then D_b = T_bb R_b */
#pragma unroll 1
    for (int n0 = 8 * warp; n0 < NX; n0 += 64) {
#pragma unroll 1
        for (int bk = 0; bk < 4; bk++) {
            float r[4];
#pragma unroll
            for (int q = 0; q < 4; q++)
                r[q] = Xm[(16 * bk + g + 8 * (q >> 1)) * LDX + n0 + 2 * t4 + (q & 1)];
            for (int k0 = 0; k0 < 16 * bk; k0 += 8) {
                unsigned a[4], bb[2];
                frag_a(a, Lm, LDA, 16 * bk, k0, g, t4);
                frag_b(bb, Xm, LDX, k0, n0, g, t4);
                mma_tf32(r, a, bb);
            }
            __syncwarp();
#pragma unroll
            for (int q = 0; q < 4; q++)
                Xm[(16 * bk + g + 8 * (q >> 1)) * LDX + n0 + 2 * t4 + (q & 1)] = tf32r(r[q]);
            __syncwarp();
            float d[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
            for (int k0 = 0; k0 < 16; k0 += 8) {
                unsigned a[4], bb[2];
                frag_a(a, Tm, LDA, 16 * bk, 16 * bk + k0, g, t4);
                frag_b(bb, Xm, LDX, 16 * bk + k0, n0, g, t4);
                mma_tf32(d, a, bb);
            }
            __syncwarp();
#pragma unroll
            for (int q = 0; q < 4; q++)
                Xm[(16 * bk + g + 8 * (q >> 1)) * LDX + n0 + 2 * t4 + (q & 1)] = tf32r(d[q]);
            __syncwarp();
        }
    }
    __syncthreads();
    /* W and U to the workspace */
    {
        float *uw = wsb + 3 * TC_C * DKP;
        for (int e = tid; e < TC_C * NX / 4; e += TC_THREADS) {
            const int i = e / (NX / 4), cc = 4 * (e % (NX / 4));
            const float4 x = *(const float4 *)(Xm + i * LDX + cc);
            if (cc < DKP)
                *(float4 *)(wsb + i * DKP + cc) = x;
            else
                *(float4 *)(uw + i * DVP + cc - DKP) = x;
        }
    }
}

/* Pass 2 (see the header). Grid (Hv * ceil(Dv / TC_R), min(N, 65535)), a CTA taking sequences n, n + 65535, ... */
template <int DKP, int DVP>
__global__ void __launch_bounds__(TC_THREADS, 1) chunk_split_state_kernel(const __grid_constant__ gdn_cuda_params P)
{
    extern __shared__ __align__(16) float ss_sm[];
    constexpr int LDK = tc_ldk(DKP), LDV = TC_LDV, LDA = TC_LDA;
    constexpr int NTW = DKP / 16;
    float *Wm = ss_sm;           /* [C][LDK] W */
    float *Qm = Wm + TC_C * LDK; /* [C][LDK] Qg */
    float *Km = Qm + TC_C * LDK; /* [C][LDK] Kw */
    float *Ss = Km + TC_C * LDK; /* [R][LDK] the state tile */
    float *Um = Ss + TC_R * LDK; /* [C][LDV] the U tile */
    float *Dm = Um + TC_C * LDV; /* [C][LDV] D */
    float *Pm = Dm + TC_C * LDV; /* [C][LDA] P */

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
    const int tiles = (P.Dv + TC_R - 1) / TC_R;
    const int h = (int)(blockIdx.x / tiles), r0 = (int)(blockIdx.x % tiles) * TC_R;
    const int Dk = P.Dk, rows = P.Dv - r0 < TC_R ? P.Dv - r0 : TC_R;
    const int64_t prs = P.kv_layout ? P.ps[3] : P.ps[2], pcs = P.kv_layout ? P.ps[2] : P.ps[3];
    const bool upd = warp < 4;
    const int mt = upd ? warp : warp - 4;
    const int sm0 = 16 * (warp & 1), sn0 = 8 * NTW * ((warp >> 1) & 1);
    const tc_tile tile = {h, r0, rows, Dk, sm0, sn0, g, t4, prs, pcs};
    const int64_t nch = (P.T + TC_C - 1) / TC_C;

    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error))
        return;
    for (int64_t n = blockIdx.y; n < P.N; n += gridDim.y) {
        int64_t b, t0, t1;
        seq_tokens(P, n, &b, &t0, &t1);
        const int64_t rs = seq_read_slot(P, n), ws = seq_write_slot(P, n);

        float sacc[NTW][4];
        if (upd)
            tc_state_load<DKP>(P, tile, rs, sacc, Ss);
        int c = 0;
        for (int64_t tc = t0; tc < t1; tc += TC_C, c++) {
            const int nt = (int)(t1 - tc < TC_C ? t1 - tc : TC_C);
            const float *wsb = P.ws + ((n * P.Hv + h) * nch + c) * split_wsb(DKP, DVP);
            __syncthreads(); /* the previous chunk is done with every buffer; the state tile is written */
            {
                constexpr int NW = 3 * TC_C * DKP / 4 / TC_THREADS; /* W, Qg, Kw: float4s per thread */
                float4 x[NW];
#pragma unroll
                for (int u = 0; u < NW; u++)
                    x[u] = __ldcg((const float4 *)wsb + tid + u * TC_THREADS);
#pragma unroll
                for (int u = 0; u < NW; u++) {
                    const int e = tid + u * TC_THREADS, m = e / (TC_C * DKP / 4), i = (e / (DKP / 4)) % TC_C,
                              cc = 4 * (e % (DKP / 4));
                    *(float4 *)(Wm + m * TC_C * LDK + i * LDK + cc) = x[u];
                }
                const float *uw = wsb + 3 * TC_C * DKP, *pw = uw + TC_C * DVP;
                constexpr int NU = TC_C * TC_R / 4 / TC_THREADS, NP = TC_C * TC_C / 4 / TC_THREADS;
                float4 y[NU], z[NP];
#pragma unroll
                for (int u = 0; u < NU; u++) {
                    const int e = tid + u * TC_THREADS, i = e / (TC_R / 4), cc = 4 * (e % (TC_R / 4));
                    y[u] = r0 + cc < DVP ? __ldcg((const float4 *)(uw + i * DVP + r0 + cc)) : make_float4(0.f, 0.f, 0.f, 0.f);
                }
#pragma unroll
                for (int u = 0; u < NP; u++)
                    z[u] = __ldcg((const float4 *)pw + tid + u * TC_THREADS);
#pragma unroll
                for (int u = 0; u < NU; u++) {
                    const int e = tid + u * TC_THREADS, i = e / (TC_R / 4), cc = 4 * (e % (TC_R / 4));
                    *(float4 *)(Um + i * LDV + cc) = y[u];
                }
#pragma unroll
                for (int u = 0; u < NP; u++) {
                    const int e = tid + u * TC_THREADS, i = e / (TC_C / 4), cc = 4 * (e % (TC_C / 4));
                    *(float4 *)(Pm + i * LDA + cc) = z[u];
                }
            }
            __syncthreads();
            /* warps 0-3: W S^T (rows 16 mt); warps 4-7: Qg S^T */
            float accs[TC_R / 8][4];
#pragma unroll
            for (int j = 0; j < TC_R / 8; j++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    accs[j][q] = 0.f;
            {
                const float *X = upd ? Wm : Qm;
#pragma unroll 4
                for (int k0 = 0; k0 < DKP; k0 += 8) {
                    unsigned a[4], bb[2];
                    frag_a2(a, X, LDK, 16 * mt, k0, g, t4);
#pragma unroll
                    for (int j = 0; j < TC_R / 8; j++) {
                        frag_bt2(bb, Ss, LDK, k0, 8 * j, g, t4);
                        mma_tf32(accs[j], a, bb);
                    }
                }
            }
            if (upd) /* D = U - W S^T */
#pragma unroll
                for (int j = 0; j < TC_R / 8; j++)
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        const int i = 16 * mt + g + 8 * (q >> 1), r = 8 * j + 2 * t4 + (q & 1);
                        Dm[i * LDV + r] = tf32r(Um[i * LDV + r] - accs[j][q]);
                    }
            __syncthreads();
            if (!upd) /* outputs: O = Qg S^T + P D, rows 16 mt .. */
                tc_outputs(P, tile, accs, Pm, Dm, mt, nt, b, tc);
            else /* the state: S' = gl S + D^T Kw, this warp's fragment (the update warps' W S^T of this chunk
                    read Ss before the barrier above, so the tile may be overwritten) */
                tc_state_update<DKP, false>(tile, sacc, wsb[split_wsb(DKP, DVP) - 4], Dm, NULL, Km, Ss);
        }
        if (upd && ws >= 0 && !(t1 == t0 && ws == rs))
            tc_state_store<DKP>(P, tile, ws, sacc);
        __syncthreads();
    }
}

/* Does the call take the two-pass kernels (chunk_tc's calls, a dense batch, Dv <= 128, N <= 65535)? */
static bool chunk_split_ok(const gdn_cuda_params *p)
{
    return p->chunk_tc && !p->cu && p->Dv <= 128 && p->N <= 65535 && p->N >= 1 && p->Hv <= 65535 &&
           (p->T + TC_C - 1) / TC_C <= 0x7fffffff;
}

/* Floats of workspace the two-pass kernels need for the call (0: they do not apply). */
static int64_t chunk_split_ws_floats(const gdn_cuda_params *p)
{
    if (!chunk_split_ok(p))
        return 0;
    return p->N * p->Hv * ((p->T + TC_C - 1) / TC_C) * split_wsb(chunk_dkp((int)p->Dk), chunk_dkp((int)p->Dv));
}

template <int DKP>
static cudaError_t launch_chunk_split_k(gdn_cuda_params p, cudaLaunchConfig_t cfg)
{
    const int dvp = chunk_dkp((int)p.Dv);
    typedef void (*fn_t)(gdn_cuda_params);
    const fn_t prep = dvp == 32 ? chunk_split_prep_kernel<DKP, 32>
                      : dvp == 64 ? chunk_split_prep_kernel<DKP, 64> : chunk_split_prep_kernel<DKP, 128>;
    const fn_t state = dvp == 32 ? chunk_split_state_kernel<DKP, 32>
                       : dvp == 64 ? chunk_split_state_kernel<DKP, 64> : chunk_split_state_kernel<DKP, 128>;
    const size_t sp = (size_t)split_prep_smem_floats(DKP, dvp) * sizeof(float);
    const size_t ss = (size_t)split_state_smem_floats(DKP) * sizeof(float);
    cudaError_t e = cudaFuncSetAttribute((const void *)prep, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sp);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute((const void *)state, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)ss);
    if (e != cudaSuccess)
        return e;
    p.early_trigger = 0;
    cfg.blockDim = dim3(TC_THREADS, 1, 1);
    cfg.gridDim = dim3((unsigned)((p.T + TC_C - 1) / TC_C), (unsigned)p.Hv, (unsigned)p.N);
    cfg.dynamicSmemBytes = sp;
    if (p.T > 0 && (e = cudaLaunchKernelEx(&cfg, prep, p)) != cudaSuccess)
        return e;
    cfg.gridDim = dim3((unsigned)(p.Hv * ((p.Dv + TC_R - 1) / TC_R)), (unsigned)p.N, 1);
    cfg.dynamicSmemBytes = ss;
    return cudaLaunchKernelEx(&cfg, state, p);
}

static cudaError_t launch_chunk_split(gdn_cuda_params p, cudaLaunchConfig_t cfg)
{
    const int dkp = chunk_dkp((int)p.Dk);
    return dkp == 32 ? launch_chunk_split_k<32>(p, cfg)
                     : dkp == 64 ? launch_chunk_split_k<64>(p, cfg) : launch_chunk_split_k<128>(p, cfg);
}

#endif
