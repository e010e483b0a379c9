/*
 * chunked.cuh — chunkwise-parallel prefill on CUDA, f32 (the "precise" first version of
 * research/ALGORITHM.md sections 1-2), included by recurrent.cu after its helpers.
 *
 * Math per (sequence, value head), chunk of nt <= CK tokens, state S [Dv][Dk] entering it; k^, q^ the
 * normalised (and for q scaled) rows; d_t the decay, b_t beta; products formed directly, never as
 * ratios of cumulative decays:
 *     g_t     = d_0 .. d_t                     G[i][j] = d_{j+1} .. d_i (i >= j; G[i][i] = 1)
 *     A[i][j] = b_i G[i][j] (k^_i . k^_j)      (i > j)
 *     (I + A) D = diag(b) V - diag(b g) K^ S^T          (D: the chunk's deltas, forward substitution)
 *     O       = diag(g) Q^ S^T + (Q^ K^T o G) D        (G with its diagonal)
 *     S'      = g_{nt-1} S + sum_j G[nt-1][j] D_j k^_j^T
 * Exactly the token loop's recurrence (delta_t = b_t (v_t - d_t S_{t-1} k^_t), S_t = d_t S_{t-1} +
 * delta_t k^_t^T, y_t = S_t q^_t), rounded differently.
 *
 * Decomposition: one CTA of CT = 256 threads per (sequence, value head, tile of R = 32 state rows),
 * grid (Hv * ceil(Dv / R), min(N, 65535)) (a CTA takes sequences n, n + 65535, ...); the CTA walks
 * its sequence's chunks in order with the tile of S in
 * shared memory (rows padded by one float against bank conflicts). Per chunk: the k, q rows (Dk <=
 * DKP, zero-padded) and the tile's v values into shared memory; norms and gates; then four products
 * of CK x CK or CK x R dots over Dk (K^ K^T, Q^ K^T, K^ S^T, Q^ S^T), each thread a 2 x 2 block of
 * outputs; the substitution, one column of D per thread of the first warp; outputs; the state update,
 * each thread 16 elements of the tile. The key-side products are recomputed by every row tile and
 * value head (v1: f32 SIMT, no tensor cores).
 *
 * Assumptions: no capture (calls that capture run the token loop), Dk <= 256, any Dv, strides, dtypes,
 * layouts, slots and varlen (the helpers of recurrent.cu).
 */
#ifndef GDN_CUDA_CHUNKED_CUH
#define GDN_CUDA_CHUNKED_CUH

#define CK 32        /* tokens per chunk */
#define CR 32        /* state rows per CTA */
#define CT 256       /* threads per CTA */
#define CK_DKMAX 256 /* largest Dk the chunked kernels take (this one and chunked_tc.cuh's) */

/* shared-memory layout in floats, for a padded key dimension DKP (row length DKP + 1) */
__host__ __device__ constexpr int ck_ld(int dkp)
{
    return dkp + 1;
}
__host__ __device__ constexpr int ck_smem_floats(int dkp)
{
    return CR * ck_ld(dkp) + 2 * CK * ck_ld(dkp) + CK * (CR + 1) * 4 + CK * (CK + 1) * 3 + 8 * CK;
}

/* out[i][j] = X_i . Y_j (i < CK, j < 32) over n elements, each thread a 2 x 2 block; rows of X and Y
   ld floats apart. */
__device__ __forceinline__ void ck_dots(const float *X, const float *Y, int ld, int n, float *out, int ldo)
{
    const int tid = threadIdx.x, bi = tid >> 4, bj = tid & 15;
    const float *x0 = X + bi * ld, *x1 = X + (bi + 16) * ld, *y0 = Y + bj * ld, *y1 = Y + (bj + 16) * ld;
    float a00 = 0.f, a01 = 0.f, a10 = 0.f, a11 = 0.f;
#pragma unroll 4
    for (int c = 0; c < n; c++) {
        const float u0 = x0[c], u1 = x1[c], w0 = y0[c], w1 = y1[c];
        a00 = fmaf(u0, w0, a00);
        a01 = fmaf(u0, w1, a01);
        a10 = fmaf(u1, w0, a10);
        a11 = fmaf(u1, w1, a11);
    }
    out[bi * ldo + bj] = a00;
    out[bi * ldo + bj + 16] = a01;
    out[(bi + 16) * ldo + bj] = a10;
    out[(bi + 16) * ldo + bj + 16] = a11;
}

template <int DKP>
__global__ void __launch_bounds__(CT) chunk_prefill_kernel(const __grid_constant__ gdn_cuda_params P)
{
    extern __shared__ __align__(16) float ck_sm[];
    constexpr int LD = ck_ld(DKP), LV = CR + 1, LC = CK + 1;
    float *S = ck_sm;              /* [CR][LD] the state tile */
    float *Ks = S + CR * LD;       /* [CK][LD] k^ rows */
    float *Qs = Ks + CK * LD;      /* [CK][LD] q^ rows */
    float *Vs = Qs + CK * LD;      /* [CK][LV] v, then the right-hand side, then D */
    float *KS = Vs + CK * LV;      /* [CK][LV] k^ . S_r */
    float *QS = KS + CK * LV;      /* [CK][LV] q^ . S_r */
    float *Os = QS + CK * LV;      /* [CK][LV] outputs */
    float *KK = Os + CK * LV;      /* [CK][LC] k^_i . k^_j, then A */
    float *QK = KK + CK * LC;      /* [CK][LC] q^_i . k^_j, then times G */
    float *GG = QK + CK * LC;      /* [CK][LC] G[i][j] */
    float *dec = GG + CK * LC, *bet = dec + CK, *gam = bet + CK, *ksc = gam + CK, *qsc = ksc + CK;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int tiles = (P.Dv + CR - 1) / CR;
    const int h = (int)(blockIdx.x / tiles), r0 = (int)(blockIdx.x % tiles) * CR;
    const int Dk = P.Dk, rows = P.Dv - r0 < CR ? P.Dv - r0 : CR;
    const int hk = P.grouped ? h / P.ratio : h % P.Hk;
    const int64_t prs = P.kv_layout ? P.ps[3] : P.ps[2], pcs = P.kv_layout ? P.ps[2] : P.ps[3];

    grid_dependency_wait();
    if (P.checked && __ldcg(&P.words->call_error))
        return;
    for (int64_t n = blockIdx.y; n < P.N; n += gridDim.y) { /* more sequences than grid rows: loop */
        int64_t b, t0, t1;
        seq_tokens(P, n, &b, &t0, &t1);
        const int64_t rs = seq_read_slot(P, n), ws = seq_write_slot(P, n);

        /* the state tile (zeros without a read state), padded columns zero */
        for (int e = tid; e < CR * DKP; e += CT) {
            const int r = e / DKP, c = e % DKP;
            float x = 0.f;
            if (rs >= 0 && r < rows && c < Dk)
                x = P.pool[rs * P.ps[0] + (int64_t)h * P.ps[1] + (int64_t)(r0 + r) * prs + (int64_t)c * pcs];
            S[r * LD + c] = x;
        }

        for (int64_t tc = t0; tc < t1; tc += CK) {
            const int nt = (int)(t1 - tc < CK ? t1 - tc : CK);
            __syncthreads(); /* the previous chunk is done with every buffer */
            /* inputs: k, q rows (zero past nt and Dk), v values, gates; every load of a thread issued before
               its first store (a loop that stores after each load waits out each load's latency in turn) */
            {
                constexpr int NE = CK * DKP / CT, NV = CK * CR / CT;
                const bool f32 = P.dtype == GDN_DTYPE_F32;
                unsigned kr[NE], qr[NE], vr[NV];
#pragma unroll
                for (int u = 0; u < NE; u++) {
                    const int e = tid + u * CT, t = e / DKP, c = e % DKP;
                    kr[u] = qr[u] = 0u;
                    if (t < nt && c < Dk) {
                        const int64_t tt = tc + t;
                        const int64_t ko = b * P.ks[0] + tt * P.ks[1] + hk * P.ks[2] + c * P.ks[3];
                        const int64_t qo = b * P.qs[0] + tt * P.qs[1] + hk * P.qs[2] + c * P.qs[3];
                        kr[u] = f32 ? __ldg((const unsigned *)P.k + ko) : (unsigned)__ldg((const unsigned short *)P.k + ko);
                        qr[u] = f32 ? __ldg((const unsigned *)P.q + qo) : (unsigned)__ldg((const unsigned short *)P.q + qo);
                    }
                }
#pragma unroll
                for (int u = 0; u < NV; u++) {
                    const int e = tid + u * CT, t = e / CR, r = e % CR;
                    vr[u] = 0u;
                    if (t < nt && r < rows) {
                        const int64_t vo = b * P.vs[0] + (tc + t) * P.vs[1] + h * P.vs[2] + (int64_t)(r0 + r) * P.vs[3];
                        vr[u] = f32 ? __ldg((const unsigned *)P.v + vo) : (unsigned)__ldg((const unsigned short *)P.v + vo);
                    }
                }
#pragma unroll
                for (int u = 0; u < NE; u++) {
                    const int e = tid + u * CT, t = e / DKP, c = e % DKP;
                    Ks[t * LD + c] = f32 ? __uint_as_float(kr[u]) : cvt16(kr[u], P.dtype);
                    Qs[t * LD + c] = f32 ? __uint_as_float(qr[u]) : cvt16(qr[u], P.dtype);
                }
#pragma unroll
                for (int u = 0; u < NV; u++) {
                    const int e = tid + u * CT, t = e / CR, r = e % CR;
                    Vs[t * LV + r] = f32 ? __uint_as_float(vr[u]) : cvt16(vr[u], P.dtype);
                }
            }
            if (tid < CK) {
                float d = 1.f, be = 0.f;
                if (tid < nt) {
                    const int64_t tt = tc + tid;
                    const int64_t go = b * P.gs[0] + tt * P.gs[1] + h * P.gs[2];
                    const int64_t bo = b * P.bs[0] + tt * P.bs[1] + h * P.bs[2];
                    const bool g32 = P.gate_dtype == GDN_DTYPE_F32;
                    const float g =
                        g32 ? ((const float *)P.g)[go] : cvt16(((const unsigned short *)P.g)[go], P.gate_dtype);
                    be = g32 ? ((const float *)P.beta)[bo]
                             : cvt16(((const unsigned short *)P.beta)[bo], P.gate_dtype);
                    d = gate_decay(P, h, g, &be);
                }
                dec[tid] = d;
                bet[tid] = be;
            }
            __syncthreads();
            /* norms (a warp per token) and the cumulative decays */
            for (int t = warp; t < CK; t += CT / 32) {
                float kk = 0.f, qq = 0.f;
                for (int c = lane; c < DKP; c += 32) {
                    kk = fmaf(Ks[t * LD + c], Ks[t * LD + c], kk);
                    qq = fmaf(Qs[t * LD + c], Qs[t * LD + c], qq);
                }
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) {
                    kk += __shfl_xor_sync(0xffffffffu, kk, o);
                    qq += __shfl_xor_sync(0xffffffffu, qq, o);
                }
                if (lane == 0) {
                    ksc[t] = P.l2norm ? rsqrtf(kk + 1e-6f) : 1.0f;
                    qsc[t] = P.scale * (P.l2norm ? rsqrtf(qq + 1e-6f) : 1.0f);
                }
            }
            for (int e = tid; e < CK * CK; e += CT) { /* G[i][j] = d_{j+1} .. d_i */
                const int i = e / CK, j = e % CK;
                float pr = 0.f;
                if (j <= i) {
                    pr = 1.f;
                    for (int l = j + 1; l <= i; l++)
                        pr *= dec[l];
                }
                GG[i * LC + j] = pr;
            }
            if (tid < CK) {
                float pr = 1.f; /* g_t = d_0 .. d_t */
                for (int l = 0; l <= tid; l++)
                    pr *= dec[l];
                gam[tid] = pr;
            }
            __syncthreads();
            for (int e = tid; e < CK * DKP; e += CT) {
                const int t = e / DKP, c = e % DKP;
                Ks[t * LD + c] *= ksc[t];
                Qs[t * LD + c] *= qsc[t];
            }
            __syncthreads();
            /* the four products */
            ck_dots(Ks, Ks, LD, DKP, KK, LC);
            ck_dots(Qs, Ks, LD, DKP, QK, LC);
            ck_dots(Ks, S, LD, DKP, KS, LV);
            ck_dots(Qs, S, LD, DKP, QS, LV);
            __syncthreads();
            /* right-hand side b (v - g K^ S^T), A and Q^ K^T o G */
            for (int e = tid; e < CK * CR; e += CT) {
                const int t = e / CR, r = e % CR;
                Vs[t * LV + r] = bet[t] * (Vs[t * LV + r] - gam[t] * KS[t * LV + r]);
            }
            for (int e = tid; e < CK * CK; e += CT) {
                const int i = e / CK, j = e % CK;
                KK[i * LC + j] = j < i ? bet[i] * GG[i * LC + j] * KK[i * LC + j] : 0.f;
                QK[i * LC + j] *= GG[i * LC + j];
            }
            __syncthreads();
            /* forward substitution: one column of D per thread of warp 0 */
            if (tid < CR) {
                for (int t = 1; t < nt; t++) {
                    float x = Vs[t * LV + tid];
                    for (int j = 0; j < t; j++)
                        x = fmaf(-KK[t * LC + j], Vs[j * LV + tid], x);
                    Vs[t * LV + tid] = x;
                }
            }
            __syncthreads();
            /* outputs: O = diag(g) Q^ S^T + (Q^ K^T o G) D */
            for (int e = tid; e < CK * CR; e += CT) {
                const int t = e / CR, r = e % CR;
                if (t < nt && r < rows && P.out) {
                    float y = gam[t] * QS[t * LV + r];
                    for (int j = 0; j <= t; j++)
                        y = fmaf(QK[t * LC + j], Vs[j * LV + r], y);
                    st_elem(P.out, P.out_dtype,
                            b * P.os[0] + (tc + t) * P.os[1] + h * P.os[2] + (int64_t)(r0 + r) * P.os[3], y);
                }
            }
            /* the state: S' = g_{nt-1} S + sum_j G[nt-1][j] D_j k^_j^T (threads: row r, columns c, c + 8, ...) */
            {
                const float gl = gam[nt - 1];
                const float *wrow = GG + (nt - 1) * LC;
                const int r = tid >> 3;
                for (int c = tid & 7; c < DKP; c += 8) {
                    float x = gl * S[r * LD + c];
                    for (int j = 0; j < nt; j++)
                        x = fmaf(wrow[j] * Vs[j * LV + r], Ks[j * LD + c], x);
                    S[r * LD + c] = x;
                }
            }
        }
        __syncthreads();
        /* the final state (an empty sequence copies its read state) */
        if (ws >= 0 && !(t1 == t0 && ws == rs))
            for (int e = tid; e < CR * DKP; e += CT) {
                const int r = e / DKP, c = e % DKP;
                if (r < rows && c < Dk)
                    P.pool[ws * P.ps[0] + (int64_t)h * P.ps[1] + (int64_t)(r0 + r) * prs + (int64_t)c * pcs] =
                        S[r * LD + c];
            }
        __syncthreads(); /* the tile is read out before the next sequence's is loaded */
    }
}

/* Does the call take a chunked kernel (either: both take Dk <= CK_DKMAX)? The chunked algorithm chosen, no
   capture, Dk <= CK_DKMAX. */
static bool chunk_applies(int algo_chunked, int capture, int k_dim)
{
    return algo_chunked && !capture && k_dim <= CK_DKMAX;
}

static bool chunk_prefill_ok(const gdn_cuda_params *p)
{
    return chunk_applies(p->algo_chunked, p->cap_mode != GDN_CAPTURE_NONE, p->Dk);
}

const char *gdn_cuda_chunked_name(int algo_chunked, int capture, int k_dim, int tc)
{
    if (!chunk_applies(algo_chunked, capture, k_dim))
        return NULL;
    return tc ? "chunk_tf32__cuda_mma" : "chunk_f32__cuda";
}

/* The padded key dimension a chunked kernel is compiled for. */
static int chunk_dkp(int dk)
{
    return dk <= 32 ? 32 : dk <= 64 ? 64 : dk <= 128 ? 128 : 256;
}

typedef void (*chunk_kernel_fn)(gdn_cuda_params);

/* Launch a chunked kernel: `smem` bytes of dynamic shared memory, CTAs of `threads`, one per (value head,
   tile of `rows` state rows) and sequence (grid rows up to 65535; a CTA loops over the rest). */
static cudaError_t launch_chunk(gdn_cuda_params p, cudaLaunchConfig_t cfg, chunk_kernel_fn fn, size_t smem,
                                int threads, int rows)
{
    cudaError_t e = cudaFuncSetAttribute((const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.gridDim = dim3((unsigned)(p.Hv * ((p.Dv + rows - 1) / rows)), (unsigned)(p.N < 65535 ? p.N : 65535), 1);
    cfg.dynamicSmemBytes = smem;
    p.early_trigger = 0;
    return cudaLaunchKernelEx(&cfg, fn, p);
}

static cudaError_t launch_chunk_prefill(gdn_cuda_params p, cudaLaunchConfig_t cfg)
{
    const int dkp = chunk_dkp(p.Dk);
    const chunk_kernel_fn fn = dkp == 32    ? chunk_prefill_kernel<32>
                               : dkp == 64  ? chunk_prefill_kernel<64>
                               : dkp == 128 ? chunk_prefill_kernel<128>
                                            : chunk_prefill_kernel<256>;
    return launch_chunk(p, cfg, fn, (size_t)ck_smem_floats(dkp) * sizeof(float), CT, CR);
}

#endif
