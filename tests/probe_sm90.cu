/*
 * probe_sm90.cu — probes for the chunked state pass's next form (docs/DESIGN.md, "Chunked prefill on CUDA", next
 * steps), run by hand on a Hopper GPU before that kernel is written; not tests, not run by ctest.
 *
 * 1. wgmma: one m64n32 product from no-swizzle shared memory, tf32 (m64n32k8, both operands K-major) or
 *    bf16 (m64n32k16, each operand K-major or MN-major, the transpose bits), under one reading of the matrix
 *    descriptor's two byte offsets (which one steps along K, which along M / N), read back through the
 *    accumulator layout the kernel would assume (warp w, lane l: rows 16 w + l / 4 (+ 8), columns 8 i +
 *    2 (l % 4) (+ 1), registers 4 i .. 4 i + 3). The operands are small multiples of 1/4, so the product is exact
 *    and any difference is a layout error.
 * 2. TMA: one 3-D tensor-map box (Dk x 1 head x 64 tokens) of a bf16 [T][Hk][Dk] tensor, as the state pass would
 *    bring a chunk's k rows, at a chunk that runs past T (the rows past it must arrive as zeros), completing on
 *    an mbarrier; compared element by element.
 *
 * 3. rega bf16: one m64n64k16 bf16 product D = A B^T with A from registers (four .b32 per thread, two bf16
 *    each: warp w, lane l, g = l / 4, t = l % 4: a0 = A[16 w + g][2 t .. 2 t + 1], a1 = the same at row + 8,
 *    a2 = at column + 8, a3 = both; the lower column in the low half) and B K-major from no-swizzle shared
 *    memory under reading 0 (the one probe 1 found right).
 * 4. rega tf32: the same at m64n64k8 tf32, A from registers (four .b32, one value each) under two assumed
 *    fragments: a0 = A[g][t], a1 = A[g + 8][t], a2 = A[g][t + 4], a3 = A[g + 8][t + 4] (as mma.m16n8k8), or
 *    a0 = A[g][t], a1 = A[g][t + 4], a2 = A[g + 8][t], a3 = A[g + 8][t + 4]; both are run and reported.
 * 5. sw128 kb: B K-major in the 128-byte swizzle (the TMA SWIZZLE_128B pattern: B [64 n][64 k] bf16, row n
 *    at byte 128 n of a 1024-byte-aligned base, 16-byte chunk c of a row at chunk c ^ (n % 8)), K = 64 as four
 *    m64n64k16 steps (A from registers as in 3), step s at base + 32 s, stride byte offset 1024, leading byte
 *    offset 16 (unused), layout type 1 (bits 62-63, 128B swizzle), base offset 0.
 * 6. sw128 mnb: B MN-major (the transpose bit) in the 128-byte swizzle, N = 128: two boxes of 64 columns 8192
 *    bytes apart, each 64 K-rows of 128 bytes with chunk c of K-row k at c ^ (k % 8); D [64][128] = A [64][64]
 *    B [64][128] as four m64n128k16 steps (A from registers), step s at base + 2048 s, under two readings:
 *    0: leading byte offset 8192 (between the boxes, along N), stride byte offset 1024 (between 8-row K
 *    groups); 1: swapped.
 * 7. ldsm: ldmatrix.x4.trans from a 128-byte-swizzled V [64 tokens][64 columns] bf16 tile, addressed so that
 *    each thread ends up with the transposed tile V^T in the accumulator fragment order (register 2 j + h of
 *    thread (w, g, t) holding V[8 j + 2 t][r] low, V[8 j + 2 t + 1][r] high, r = 16 w + g + 8 h), as the
 *    state pass would feed a register A operand from a TMA-swizzled tile; compared on the host, every value.
 * 8. tma sw128: a 4-D map {Dk 128, Hk, T, 1} with a {64, 1, 64, 1} box and SWIZZLE_128B, two boxes (columns
 *    0 and 64) into a 1024-byte-aligned buffer 8192 bytes apart: element (token t, column c) must sit at byte
 *    (c / 64) 8192 + 128 t + 16 ((c % 64 / 8) ^ (t % 8)) + 2 (c % 8), and tokens past T arrive as zeros.
 *
 * Usage: probe_sm90 wgmma tf32|bf16 k|mn k|mn 0|1, probe_sm90 tma, probe_sm90 rega bf16|tf32, probe_sm90 sw128
 * kb, probe_sm90 sw128 mnb [0|1], probe_sm90 ldsm, or probe_sm90 tma sw128: one probe per run. Prints its
 * result; exits 0 when it passes (the product exact, the box matching; for rega tf32 and sw128 mnb, when one
 * of the variants tried is exact), 1 otherwise, 77 without a compute capability 9.x device.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM 64 /* rows of A (tokens) */
#define PN 32 /* rows of B (state rows) */

/* Byte offset of element (m, k) of an operand with mn rows (M or N) and kk summation columns, element size
   es, no swizzle: core matrices of 128 contiguous bytes. K-major (mn_major 0): a core is 8 rows of 16 bytes
   along K, cores 128 bytes apart along K and (kk es / 16) 128 bytes apart along the rows. MN-major: a core is
   8 K-rows of 16 bytes along MN, cores 128 bytes apart along MN and (mn / 8) 128 bytes apart along K. */
__host__ __device__ static inline int probe_off(int m, int k, int mn, int kk, int es, int mn_major)
{
    const int kc = 16 / es;
    if (!mn_major)
        return ((m / 8) * (kk / kc) + k / kc) * 128 + (m % 8) * 16 + (k % kc) * es;
    return ((k / 8) * (mn / 8) + m / 8) * 128 + (k % 8) * 16 + (m % 8) * es;
}
/* The two strides of such an operand: between cores adjacent along K, and along the rows. */
static inline void probe_strides(int mn, int kk, int es, int mn_major, unsigned *along_k, unsigned *along_mn)
{
    if (!mn_major) {
        *along_k = 128u;
        *along_mn = (unsigned)(kk / (16 / es)) * 128u;
    } else {
        *along_k = (unsigned)(mn / 8) * 128u;
        *along_mn = 128u;
    }
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ static inline uint64_t probe_desc(const void *p, unsigned lbo, unsigned sbo)
{
    const uint64_t a = ((uint64_t)__cvta_generic_to_shared(p) & 0x3ffffu) >> 4;
    return a | ((uint64_t)((lbo >> 4) & 0x3fffu) << 16) | ((uint64_t)((sbo >> 4) & 0x3fffu) << 32);
}
#endif

/* One m64n32 product D = A B^T (A [64][kk], B [32][kk] given row-major in f32): BF (bf16 operands, kk 16)
   or tf32 (kk 8); TA, TB: A, B MN-major (bf16 only). Descriptors: lbo_a, sbo_a, lbo_b, sbo_b. */
template <bool BF, bool TA, bool TB>
__global__ void probe_kernel(const float *A, const float *B, float *D, unsigned lbo_a, unsigned sbo_a, unsigned lbo_b,
                             unsigned sbo_b)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int KK = BF ? 16 : 8, ES = BF ? 2 : 4;
    __shared__ __align__(128) unsigned char sa[PM * KK * ES], sb[PN * KK * ES];
    const int tid = threadIdx.x, w = tid / 32, l = tid % 32;
    for (int e = tid; e < PM * KK; e += 128) {
        unsigned char *p = sa + probe_off(e / KK, e % KK, PM, KK, ES, TA);
        if (BF)
            *(__nv_bfloat16 *)p = __float2bfloat16(A[e]);
        else
            *(float *)p = A[e];
    }
    for (int e = tid; e < PN * KK; e += 128) {
        unsigned char *p = sb + probe_off(e / KK, e % KK, PN, KK, ES, TB);
        if (BF)
            *(__nv_bfloat16 *)p = __float2bfloat16(B[e]);
        else
            *(float *)p = B[e];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); /* generic stores, read by the async proxy */
    __syncthreads();
    const uint64_t da = probe_desc(sa, lbo_a, sbo_a), db = probe_desc(sb, lbo_b, sbo_b);
    float d[16];
    for (int i = 0; i < 16; i++)
        d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    if constexpr (BF)
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %18, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, "
                     "%19, %20;\n}"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                       "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
                       "+f"(d[14]), "+f"(d[15])
                     : "l"(da), "l"(db), "r"(0), "n"(TA ? 1 : 0), "n"(TB ? 1 : 0)
                     : "memory");
    else
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %18, 0;\n\t"
                     "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1;\n}"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                       "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
                       "+f"(d[14]), "+f"(d[15])
                     : "l"(da), "l"(db), "r"(0)
                     : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int i = 0; i < PN / 8; i++)
        for (int q = 0; q < 4; q++)
            D[(16 * w + l / 4 + 8 * (q >> 1)) * PN + 8 * i + 2 * (l % 4) + (q & 1)] = d[4 * i + q];
#else
    (void)A, (void)B, (void)D, (void)lbo_a, (void)sbo_a, (void)lbo_b, (void)sbo_b;
    __trap();
#endif
}

/* One wgmma probe: type "tf32" (K-major both) or "bf16" with A, B majors ("k" or "mn") and a reading (0: the
   leading byte offset steps along K, the stride byte offset along the rows; 1: swapped). 0 when exact. */
static int probe_wgmma(const char *type, const char *amaj, const char *bmaj, int reading)
{
    const bool bf = strcmp(type, "bf16") == 0;
    const int ta = strcmp(amaj, "mn") == 0, tb = strcmp(bmaj, "mn") == 0, kk = bf ? 16 : 8, es = bf ? 2 : 4;
    if (!bf && (ta || tb)) {
        printf("wgmma: tf32 operands are K-major only\n");
        return 1;
    }
    static float A[PM * 16], B[PN * 16], D[PM * PN], R[PM * PN];
    srand(1);
    for (int i = 0; i < PM * kk; i++)
        A[i] = (float)(rand() % 9 - 4) / 4.0f;
    for (int i = 0; i < PN * kk; i++)
        B[i] = (float)(rand() % 9 - 4) / 4.0f;
    for (int m = 0; m < PM; m++)
        for (int n = 0; n < PN; n++) {
            float s = 0.f;
            for (int k = 0; k < kk; k++)
                s += A[m * kk + k] * B[n * kk + k];
            R[m * PN + n] = s;
        }
    unsigned ka, ma, kb, mb;
    probe_strides(PM, kk, es, ta, &ka, &ma);
    probe_strides(PN, kk, es, tb, &kb, &mb);
    const unsigned la = reading ? ma : ka, sa_ = reading ? ka : ma, lb = reading ? mb : kb, sb_ = reading ? kb : mb;
    float *dA = NULL, *dB = NULL, *dD = NULL;
    if (cudaMalloc((void **)&dA, sizeof A) != cudaSuccess || cudaMalloc((void **)&dB, sizeof B) != cudaSuccess ||
        cudaMalloc((void **)&dD, sizeof D) != cudaSuccess) {
        printf("cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
    cudaMemset(dD, 0, sizeof D);
    if (!bf)
        probe_kernel<false, false, false><<<1, 128>>>(dA, dB, dD, la, sa_, lb, sb_);
    else if (!ta && !tb)
        probe_kernel<true, false, false><<<1, 128>>>(dA, dB, dD, la, sa_, lb, sb_);
    else if (!ta && tb)
        probe_kernel<true, false, true><<<1, 128>>>(dA, dB, dD, la, sa_, lb, sb_);
    else if (ta && !tb)
        probe_kernel<true, true, false><<<1, 128>>>(dA, dB, dD, la, sa_, lb, sb_);
    else
        probe_kernel<true, true, true><<<1, 128>>>(dA, dB, dD, la, sa_, lb, sb_);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("wgmma %s A %s B %s reading %d: %s\n", type, amaj, bmaj, reading, cudaGetErrorString(e));
        return 1;
    }
    cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost);
    double worst = 0.0;
    for (int i = 0; i < PM * PN; i++)
        worst = fmax(worst, fabs((double)D[i] - (double)R[i]));
    printf("wgmma %s A %s-major B %s-major reading %d (A lbo %u sbo %u, B lbo %u sbo %u): largest error %g%s\n", type,
           amaj, bmaj, reading, la, sa_, lb, sb_, worst, worst == 0.0 ? " (exact)" : "");
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    return worst == 0.0 ? 0 : 1;
}

#define TT 100 /* tokens of the probed tensor */
#define TH 3   /* heads */
#define TD 128 /* Dk */
#define TR 64  /* tokens per box (a chunk) */

/* One box of `map` at (0, hk, t0) into shared memory by the tensor copy engine, then out to `out`. */
__global__ void probe_tma_kernel(const __grid_constant__ CUtensorMap map, unsigned short *out, int *status, int hk,
                                 int t0)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) unsigned short box[TR * TD];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar), sbox = (unsigned)__cvta_generic_to_shared(box);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(TR * TD * 2) : "memory");
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
                     "%4}], [%5];" ::"r"(sbox),
                     "l"((uint64_t)&map), "r"(0), "r"(hk), "r"(t0), "r"(sbar)
                     : "memory");
    }
    unsigned done = 0; /* a bounded wait: a wrong byte count must not hang the probe */
    for (long long it = 0; it < 20000000 && !done; it++)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(sbar)
                     : "memory");
    if (!done) {
        if (threadIdx.x == 0)
            *status = 1;
        return;
    }
    for (int e = threadIdx.x; e < TR * TD; e += blockDim.x)
        out[e] = box[e];
#else
    (void)map, (void)out, (void)status, (void)hk, (void)t0;
    __trap();
#endif
}

/* The TMA probe: 0 when the box matches, 1 otherwise. */
static int probe_tma(void)
{
    static unsigned short K[TT * TH * TD], got[TR * TD];
    for (int i = 0; i < TT * TH * TD; i++)
        K[i] = (unsigned short)(1 + i % 65000);
    unsigned short *dK = NULL, *dOut = NULL;
    int *dStatus = NULL, status = 0;
    if (cudaMalloc((void **)&dK, sizeof K) != cudaSuccess || cudaMalloc((void **)&dOut, sizeof got) != cudaSuccess ||
        cudaMalloc((void **)&dStatus, sizeof status) != cudaSuccess) {
        printf("tma: cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(dK, K, sizeof K, cudaMemcpyHostToDevice);
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !encode) {
        printf("tma: cuTensorMapEncodeTiled not found\n");
        return 1;
    }
    CUtensorMap map;
    const cuuint64_t dims[3] = {TD, TH, TT}, strides[2] = {TD * 2, TH * TD * 2};
    const cuuint32_t boxd[3] = {TD, 1, TR}, estr[3] = {1, 1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, dK, dims, strides, boxd, estr,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("tma: cuTensorMapEncodeTiled failed (%d)\n", (int)r);
        return 1;
    }
    const int hk = 1, t0 = 64; /* tokens 64 .. 99 exist, 100 .. 127 do not */
    cudaMemset(dOut, 0xff, sizeof got);
    cudaMemset(dStatus, 0, sizeof status);
    probe_tma_kernel<<<1, 128>>>(map, dOut, dStatus, hk, t0);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("tma: %s\n", cudaGetErrorString(e));
        return 1;
    }
    cudaMemcpy(&status, dStatus, sizeof status, cudaMemcpyDeviceToHost);
    if (status) {
        printf("tma: timed out waiting for the box (the mbarrier expected other than the bytes delivered)\n");
        return 1;
    }
    cudaMemcpy(got, dOut, sizeof got, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < TR; t++)
        for (int c = 0; c < TD; c++) {
            const unsigned short want = t0 + t < TT ? K[((t0 + t) * TH + hk) * TD + c] : 0;
            if (got[t * TD + c] != want && bad++ < 4)
                printf("tma: row %d column %d: %u, expected %u\n", t, c, got[t * TD + c], want);
        }
    printf("tma: box (%d x 1 x %d) at head %d, token %d of %d: %d mismatches%s\n", TD, TR, hk, t0, TT, bad,
           bad ? "" : " (rows past T arrive as zeros)");
    cudaFree(dK);
    cudaFree(dOut);
    cudaFree(dStatus);
    return bad ? 1 : 0;
}

/* ---- Register A operands, 128-byte swizzle, ldmatrix, swizzled TMA (probes 3 .. 8) ---- */

/* Byte offset of element (row, col) of a 128-byte-swizzled tile of 64-column bf16 rows (the TMA SWIZZLE_128B
   pattern from a 1024-byte-aligned base): row at 128 row, its 16-byte chunk col / 8 at chunk (col / 8) ^
   (row % 8). */
__host__ __device__ static inline int probe_sw128(int row, int col)
{
    return 128 * row + 16 * ((col / 8) ^ (row % 8)) + 2 * (col % 8);
}

/* Largest |D - R| over n values. */
static double probe_worst(const float *D, const float *R, int n)
{
    double worst = 0.0;
    for (int i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)D[i] - (double)R[i]));
    return worst;
}

/* n values, small multiples of 1/4 (-1 .. 1), so that every product and sum here is exact in f32. */
static void probe_fill(float *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = (float)(rand() % 9 - 4) / 4.0f;
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* The 32-bit register holding two bf16: lo in the low half. */
__device__ static inline uint32_t probe_bf2(float lo, float hi)
{
    return (uint32_t)__bfloat16_as_ushort(__float2bfloat16(lo)) |
           ((uint32_t)__bfloat16_as_ushort(__float2bfloat16(hi)) << 16);
}

/* The assumed register A fragment of K step s (16 columns) of a bf16 A [64][lda] (given in f32): warp w, lane
   l, g = l / 4, t = l % 4: a0 = A[16 w + g][16 s + 2 t .. + 1], a1 = row + 8, a2 = column + 8, a3 = both. */
__device__ static inline void probe_frag_bf16(const float *A, int lda, int s, uint32_t a[4])
{
    const int l = threadIdx.x % 32, r = 16 * (threadIdx.x / 32) + l / 4, c = 16 * s + 2 * (l % 4);
    a[0] = probe_bf2(A[r * lda + c], A[r * lda + c + 1]);
    a[1] = probe_bf2(A[(r + 8) * lda + c], A[(r + 8) * lda + c + 1]);
    a[2] = probe_bf2(A[r * lda + c + 8], A[r * lda + c + 9]);
    a[3] = probe_bf2(A[(r + 8) * lda + c + 8], A[(r + 8) * lda + c + 9]);
}

/* A 1024-byte-aligned point in a shared buffer allocated 1024 bytes larger than needed (the swizzle patterns
   are functions of the shared address bits 4-9, so the tile must start on a 1024-byte boundary). */
__device__ static inline unsigned char *probe_align1024(unsigned char *p)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return p + ((1024u - (a & 1023u)) & 1023u);
}

/* A descriptor in the 128-byte swizzle: layout type 1 in bits 62-63, base offset (bits 49-51) 0. */
__device__ static inline uint64_t probe_desc_sw128(const void *p, unsigned lbo, unsigned sbo)
{
    return probe_desc(p, lbo, sbo) | ((uint64_t)1 << 62);
}

/* d (+)= A B for m64n64k16 bf16, A from the registers a, B by descriptor db, K-major (transpose bit 0); acc 0:
   d = A B, else d += A B. */
__device__ static inline void probe_mma_n64_bf16(float (&d)[32], const uint32_t a[4], uint64_t db, int acc)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %37, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc)
                 : "memory");
}

/* d (+)= A B for m64n64k8 tf32, A from the registers a (one value each), B K-major by descriptor db (tf32 has
   no transpose bit). */
__device__ static inline void probe_mma_n64_tf32(float (&d)[32], const uint32_t a[4], uint64_t db, int acc)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %37, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "{%32, %33, %34, %35}, %36, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc)
                 : "memory");
}

/* d (+)= A B for m64n128k16 bf16, A from the registers a, B MN-major (transpose bit 1) by descriptor db. */
__device__ static inline void probe_mma_n128_bf16_mn(float (&d)[64], const uint32_t a[4], uint64_t db, int acc)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %69, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                 "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
                   "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
                   "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
                   "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc)
                 : "memory");
}

/* The accumulator d of an m64nN product out to D [64][N] under the assumed layout (warp w, lane l: rows 16 w +
   l / 4 (+ 8), columns 8 i + 2 (l % 4) (+ 1), registers 4 i .. 4 i + 3). */
template <int N> __device__ static inline void probe_store_acc(const float (&d)[N / 2], float *D)
{
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < N / 8; i++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            D[(16 * w + l / 4 + 8 * (q >> 1)) * N + 8 * i + 2 * (l % 4) + (q & 1)] = d[4 * i + q];
}
#endif

/* Probe 3: D [64][64] = A B^T, A [64][16] bf16 from registers, B [64 n][16 k] K-major no-swizzle in shared
   memory (reading 0: leading byte offset along K, stride byte offset along N). */
__global__ void probe_rega_bf16_kernel(const float *A, const float *B, float *D, unsigned lbo, unsigned sbo)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) unsigned char sb[64 * 16 * 2];
    for (int e = threadIdx.x; e < 64 * 16; e += 128)
        *(__nv_bfloat16 *)(sb + probe_off(e / 16, e % 16, 64, 16, 2, 0)) = __float2bfloat16(B[e]);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    uint32_t a[4];
    probe_frag_bf16(A, 16, 0, a);
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    probe_mma_n64_bf16(d, a, probe_desc(sb, lbo, sbo), 0);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    probe_store_acc<64>(d, D);
#else
    (void)A, (void)B, (void)D, (void)lbo, (void)sbo;
    __trap();
#endif
}

/* Probe 4: D [64][64] = A B^T, A [64][8] tf32 from registers under fragment `variant` (0: a0 = [g][t], a1 =
   [g + 8][t], a2 = [g][t + 4], a3 = [g + 8][t + 4]; 1: a0 = [g][t], a1 = [g][t + 4], a2 = [g + 8][t], a3 =
   [g + 8][t + 4]; rows offset by 16 w), B [64 n][8 k] K-major no-swizzle in shared memory. */
__global__ void probe_rega_tf32_kernel(const float *A, const float *B, float *D, unsigned lbo, unsigned sbo,
                                       int variant)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) unsigned char sb[64 * 8 * 4];
    for (int e = threadIdx.x; e < 64 * 8; e += 128)
        *(float *)(sb + probe_off(e / 8, e % 8, 64, 8, 4, 0)) = B[e];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const int l = threadIdx.x % 32, r = 16 * (threadIdx.x / 32) + l / 4, t = l % 4;
    uint32_t a[4];
    a[0] = __float_as_uint(A[r * 8 + t]);
    a[3] = __float_as_uint(A[(r + 8) * 8 + t + 4]);
    if (variant == 0) {
        a[1] = __float_as_uint(A[(r + 8) * 8 + t]);
        a[2] = __float_as_uint(A[r * 8 + t + 4]);
    } else {
        a[1] = __float_as_uint(A[r * 8 + t + 4]);
        a[2] = __float_as_uint(A[(r + 8) * 8 + t]);
    }
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    probe_mma_n64_tf32(d, a, probe_desc(sb, lbo, sbo), 0);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    probe_store_acc<64>(d, D);
#else
    (void)A, (void)B, (void)D, (void)lbo, (void)sbo, (void)variant;
    __trap();
#endif
}

/* Probe 5: D [64][64] = A B^T over K = 64, A [64][64] bf16 from registers, B [64 n][64 k] K-major in the
   128-byte swizzle; four m64n64k16 steps, step s at base + 32 s (its 16 k = 32 bytes into each 128-byte
   row), stride byte offset 1024 (8 rows of 128 bytes), leading byte offset 16. */
__global__ void probe_sw128_kb_kernel(const float *A, const float *B, float *D)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(1024) unsigned char raw[64 * 128 + 1024];
    unsigned char *sb = probe_align1024(raw);
    for (int e = threadIdx.x; e < 64 * 64; e += 128)
        *(__nv_bfloat16 *)(sb + probe_sw128(e / 64, e % 64)) = __float2bfloat16(B[e]);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    uint32_t a[4][4];
#pragma unroll
    for (int s = 0; s < 4; s++)
        probe_frag_bf16(A, 64, s, a[s]);
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int s = 0; s < 4; s++)
        probe_mma_n64_bf16(d, a[s], probe_desc_sw128(sb + 32 * s, 16, 1024), s > 0);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    probe_store_acc<64>(d, D);
#else
    (void)A, (void)B, (void)D;
    __trap();
#endif
}

/* Probe 6: D [64][128] = A B over K = 64, A [64][64] bf16 from registers, B [64 k][128 n] MN-major in the
   128-byte swizzle: box n / 64 at 8192 (n / 64), K-row k of a box at 128 k, chunk (n % 64) / 8 at that ^
   (k % 8); four m64n128k16 steps, step s at base + 2048 s (16 K-rows), offsets lbo, sbo. */
__global__ void probe_sw128_mnb_kernel(const float *A, const float *B, float *D, unsigned lbo, unsigned sbo)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(1024) unsigned char raw[2 * 8192 + 1024];
    unsigned char *sb = probe_align1024(raw);
    for (int e = threadIdx.x; e < 64 * 128; e += 128) {
        const int k = e / 128, n = e % 128;
        *(__nv_bfloat16 *)(sb + 8192 * (n / 64) + probe_sw128(k, n % 64)) = __float2bfloat16(B[e]);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    uint32_t a[4][4];
#pragma unroll
    for (int s = 0; s < 4; s++)
        probe_frag_bf16(A, 64, s, a[s]);
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++)
        d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int s = 0; s < 4; s++)
        probe_mma_n128_bf16_mn(d, a[s], probe_desc_sw128(sb + 2048 * s, lbo, sbo), s > 0);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    probe_store_acc<128>(d, D);
#else
    (void)A, (void)B, (void)D, (void)lbo, (void)sbo;
    __trap();
#endif
}

/* Probe 7: V [64 tokens][64 columns] (raw 16-bit patterns) into shared memory in the 128-byte swizzle, then
   four ldmatrix.x4.trans per warp. Call x, matrix m (0 .. 3) covers j = 2 x + m / 2, h = m % 2: its 8 rows
   are tokens 8 j .. 8 j + 7, its 8 columns r0 .. r0 + 7 with r0 = 16 w + 8 h (16 bytes: logical chunk r0 / 8
   of the token's row, swizzled); lane L gives the address of row L % 8 of matrix L / 8. Transposed, thread
   (g, t) receives matrix m's column g at rows 2 t, 2 t + 1: V[8 j + 2 t][r0 + g] low, V[8 j + 2 t + 1][r0 +
   g] high, kept as register 2 j + h = 4 x + m. Out: out[32 tid + 2 (2 j + h) + half]. */
__global__ void probe_ldsm_kernel(const unsigned short *V, unsigned short *out)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(1024) unsigned char raw[64 * 128 + 1024];
    unsigned char *sv = probe_align1024(raw);
    for (int e = threadIdx.x; e < 64 * 64; e += 128)
        *(unsigned short *)(sv + probe_sw128(e / 64, e % 64)) = V[e];
    __syncthreads();
    const int w = threadIdx.x / 32, l = threadIdx.x % 32, mm = l / 8, rho = l % 8;
    const unsigned base = (unsigned)__cvta_generic_to_shared(sv);
    uint32_t o[16];
#pragma unroll
    for (int x = 0; x < 4; x++) {
        const int j = 2 * x + mm / 2, h = mm % 2, token = 8 * j + rho;
        const unsigned addr = base + (unsigned)probe_sw128(token, 8 * (2 * w + h));
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(o[4 * x]), "=r"(o[4 * x + 1]), "=r"(o[4 * x + 2]), "=r"(o[4 * x + 3])
                     : "r"(addr)
                     : "memory");
    }
#pragma unroll
    for (int k = 0; k < 16; k++) {
        out[32 * threadIdx.x + 2 * k] = (unsigned short)(o[k] & 0xffffu);
        out[32 * threadIdx.x + 2 * k + 1] = (unsigned short)(o[k] >> 16);
    }
#else
    (void)V, (void)out;
    __trap();
#endif
}

/* Probe 8: two {64, 1, 64, 1} boxes of the 4-D, 128-byte-swizzled `map` at (0, hk, t0, 0) and (64, hk, t0, 0)
   into a 1024-byte-aligned buffer (the second 8192 bytes on), on one mbarrier, then the 16384 bytes out. */
__global__ void probe_tma_sw128_kernel(const __grid_constant__ CUtensorMap map, unsigned short *out, int *status,
                                       int hk, int t0)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(1024) unsigned char raw[2 * 8192 + 1024];
    __shared__ __align__(8) unsigned long long bar;
    unsigned char *box = probe_align1024(raw);
    const unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar), sbox = (unsigned)__cvta_generic_to_shared(box);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(2 * 8192) : "memory");
        for (int b = 0; b < 2; b++)
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, "
                         "{%2, %3, %4, %5}], [%6];" ::"r"(sbox + 8192u * (unsigned)b),
                         "l"((uint64_t)&map), "r"(64 * b), "r"(hk), "r"(t0), "r"(0), "r"(sbar)
                         : "memory");
    }
    unsigned done = 0; /* bounded, as in probe 2 */
    for (long long it = 0; it < 20000000 && !done; it++)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(sbar)
                     : "memory");
    if (!done) {
        if (threadIdx.x == 0)
            *status = 1;
        return;
    }
    for (int e = threadIdx.x; e < 8192; e += blockDim.x)
        out[e] = ((const unsigned short *)box)[e];
#else
    (void)map, (void)out, (void)status, (void)hk, (void)t0;
    __trap();
#endif
}

/* Device buffers for the probes below: n of them, sizes in bytes; 0 when all were allocated. */
static int probe_alloc(int n, void **p[], const size_t bytes[])
{
    for (int i = 0; i < n; i++)
        if (cudaMalloc(p[i], bytes[i]) != cudaSuccess) {
            printf("cudaMalloc failed\n");
            return 1;
        }
    return 0;
}

/* A kernel's completion: 0 when it ran, else 1 after printing what failed under `what`. */
static int probe_sync(const char *what)
{
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("%s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

/* Probes 3, 4: "bf16" or "tf32". 0 when exact (tf32: when either fragment is). */
static int probe_rega(const char *type)
{
    const bool bf = strcmp(type, "bf16") == 0;
    if (!bf && strcmp(type, "tf32") != 0) {
        printf("rega: type bf16 or tf32\n");
        return 2;
    }
    const int kk = bf ? 16 : 8, es = bf ? 2 : 4;
    static float A[64 * 16], B[64 * 16], D[64 * 64], R[64 * 64];
    srand(3);
    probe_fill(A, 64 * kk);
    probe_fill(B, 64 * kk);
    for (int m = 0; m < 64; m++)
        for (int n = 0; n < 64; n++) {
            float s = 0.f;
            for (int k = 0; k < kk; k++)
                s += A[m * kk + k] * B[n * kk + k];
            R[m * 64 + n] = s;
        }
    unsigned lbo, sbo; /* reading 0 */
    probe_strides(64, kk, es, 0, &lbo, &sbo);
    float *dA = NULL, *dB = NULL, *dD = NULL;
    void **bufs[3] = {(void **)&dA, (void **)&dB, (void **)&dD};
    const size_t sizes[3] = {sizeof A, sizeof B, sizeof D};
    if (probe_alloc(3, bufs, sizes))
        return 1;
    cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
    int rc = 1;
    if (bf) {
        cudaMemset(dD, 0, sizeof D);
        probe_rega_bf16_kernel<<<1, 128>>>(dA, dB, dD, lbo, sbo);
        if (!probe_sync("rega bf16")) {
            cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost);
            const double worst = probe_worst(D, R, 64 * 64);
            printf("rega bf16 m64n64k16, A from registers (a0 [g][2t..], a1 [g+8][2t..], a2 [g][2t+8..], a3 "
                   "[g+8][2t+8..]), B K-major lbo %u sbo %u: largest error %g%s\n",
                   lbo, sbo, worst, worst == 0.0 ? " (exact)" : "");
            rc = worst == 0.0 ? 0 : 1;
        }
    } else {
        static const char *const frag[2] = {"a0 [g][t], a1 [g+8][t], a2 [g][t+4], a3 [g+8][t+4]",
                                            "a0 [g][t], a1 [g][t+4], a2 [g+8][t], a3 [g+8][t+4]"};
        int exact = -1;
        for (int v = 0; v < 2; v++) {
            cudaMemset(dD, 0, sizeof D);
            probe_rega_tf32_kernel<<<1, 128>>>(dA, dB, dD, lbo, sbo, v);
            if (probe_sync("rega tf32"))
                break;
            cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost);
            const double worst = probe_worst(D, R, 64 * 64);
            printf("rega tf32 m64n64k8, A from registers, fragment %d (%s), B K-major lbo %u sbo %u: largest error "
                   "%g%s\n",
                   v, frag[v], lbo, sbo, worst, worst == 0.0 ? " (exact)" : "");
            if (worst == 0.0 && exact < 0)
                exact = v;
        }
        if (exact >= 0)
            printf("rega tf32: fragment %d is exact\n", exact);
        else
            printf("rega tf32: neither fragment is exact\n");
        rc = exact >= 0 ? 0 : 1;
    }
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    return rc;
}

/* Probe 5: 0 when exact. */
static int probe_sw128_kb(void)
{
    static float A[64 * 64], B[64 * 64], D[64 * 64], R[64 * 64];
    srand(5);
    probe_fill(A, 64 * 64);
    probe_fill(B, 64 * 64);
    for (int m = 0; m < 64; m++)
        for (int n = 0; n < 64; n++) {
            float s = 0.f;
            for (int k = 0; k < 64; k++)
                s += A[m * 64 + k] * B[n * 64 + k];
            R[m * 64 + n] = s;
        }
    float *dA = NULL, *dB = NULL, *dD = NULL;
    void **bufs[3] = {(void **)&dA, (void **)&dB, (void **)&dD};
    const size_t sizes[3] = {sizeof A, sizeof B, sizeof D};
    if (probe_alloc(3, bufs, sizes))
        return 1;
    cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
    cudaMemset(dD, 0, sizeof D);
    probe_sw128_kb_kernel<<<1, 128>>>(dA, dB, dD);
    int rc = 1;
    if (!probe_sync("sw128 kb")) {
        cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost);
        const double worst = probe_worst(D, R, 64 * 64);
        printf("sw128 kb: 4 x m64n64k16, A from registers, B K-major 128B swizzle (start +32 s, lbo 16, sbo 1024, "
               "layout 1): largest error %g%s\n",
               worst, worst == 0.0 ? " (exact)" : "");
        rc = worst == 0.0 ? 0 : 1;
    }
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    return rc;
}

/* Probe 6: reading 0, 1, or -1 for both. 0 when one tried is exact. */
static int probe_sw128_mnb(int only)
{
    static float A[64 * 64], B[64 * 128], D[64 * 128], R[64 * 128];
    srand(6);
    probe_fill(A, 64 * 64);
    probe_fill(B, 64 * 128);
    for (int m = 0; m < 64; m++)
        for (int n = 0; n < 128; n++) {
            float s = 0.f;
            for (int k = 0; k < 64; k++)
                s += A[m * 64 + k] * B[k * 128 + n];
            R[m * 128 + n] = s;
        }
    float *dA = NULL, *dB = NULL, *dD = NULL;
    void **bufs[3] = {(void **)&dA, (void **)&dB, (void **)&dD};
    const size_t sizes[3] = {sizeof A, sizeof B, sizeof D};
    if (probe_alloc(3, bufs, sizes))
        return 1;
    cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
    static const unsigned lbos[2] = {8192, 1024}, sbos[2] = {1024, 8192};
    int exact = -1;
    for (int r = 0; r < 2; r++) {
        if (only >= 0 && r != only)
            continue;
        cudaMemset(dD, 0, sizeof D);
        probe_sw128_mnb_kernel<<<1, 128>>>(dA, dB, dD, lbos[r], sbos[r]);
        if (probe_sync("sw128 mnb"))
            break;
        cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost);
        const double worst = probe_worst(D, R, 64 * 128);
        printf("sw128 mnb: 4 x m64n128k16, A from registers, B MN-major 128B swizzle (start +2048 s), reading %d "
               "(lbo %u sbo %u): largest error %g%s\n",
               r, lbos[r], sbos[r], worst, worst == 0.0 ? " (exact)" : "");
        if (worst == 0.0 && exact < 0)
            exact = r;
    }
    if (exact >= 0)
        printf("sw128 mnb: reading %d (lbo %u, sbo %u) is exact\n", exact, lbos[exact], sbos[exact]);
    else
        printf("sw128 mnb: no reading tried is exact\n");
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    return exact >= 0 ? 0 : 1;
}

/* Probe 7: 0 when every value each thread received is the expected one. */
static int probe_ldsm(void)
{
    static unsigned short V[64 * 64], got[128 * 32];
    for (int i = 0; i < 64 * 64; i++)
        V[i] = (unsigned short)(1 + i); /* distinct bit patterns: ldmatrix only moves them */
    unsigned short *dV = NULL, *dOut = NULL;
    void **bufs[2] = {(void **)&dV, (void **)&dOut};
    const size_t sizes[2] = {sizeof V, sizeof got};
    if (probe_alloc(2, bufs, sizes))
        return 1;
    cudaMemcpy(dV, V, sizeof V, cudaMemcpyHostToDevice);
    cudaMemset(dOut, 0xff, sizeof got);
    probe_ldsm_kernel<<<1, 128>>>(dV, dOut);
    int bad = -1;
    if (!probe_sync("ldsm")) {
        cudaMemcpy(got, dOut, sizeof got, cudaMemcpyDeviceToHost);
        bad = 0;
        for (int tid = 0; tid < 128; tid++) {
            const int w = tid / 32, g = tid % 32 / 4, t = tid % 4;
            for (int k = 0; k < 16; k++)
                for (int e = 0; e < 2; e++) {
                    const int j = k / 2, r = 16 * w + g + 8 * (k % 2), i = 8 * j + 2 * t + e;
                    const unsigned short want = V[i * 64 + r], have = got[32 * tid + 2 * k + e];
                    if (have != want && bad++ < 4)
                        printf("ldsm: thread %d register %d half %d: V[%d][%d] + 1 = %u expected, got %u\n", tid, k,
                               e, i, r, want, have);
                }
        }
        printf("ldsm: ldmatrix.x4.trans from a 128B-swizzled V [64][64], V^T in accumulator fragment order: %d "
               "mismatches of 4096%s\n",
               bad, bad ? "" : " (exact)");
    }
    cudaFree(dV);
    cudaFree(dOut);
    return bad == 0 ? 0 : 1;
}

/* Probe 8: 0 when both swizzled boxes match. */
static int probe_tma_sw128(void)
{
    static unsigned short K[TT * TH * TD], got[2 * 64 * 64];
    for (int i = 0; i < TT * TH * TD; i++)
        K[i] = (unsigned short)(1 + i % 65000);
    unsigned short *dK = NULL, *dOut = NULL;
    int *dStatus = NULL, status = 0;
    void **bufs[3] = {(void **)&dK, (void **)&dOut, (void **)&dStatus};
    const size_t sizes[3] = {sizeof K, sizeof got, sizeof status};
    if (probe_alloc(3, bufs, sizes))
        return 1;
    cudaMemcpy(dK, K, sizeof K, cudaMemcpyHostToDevice);
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !encode) {
        printf("tma sw128: cuTensorMapEncodeTiled not found\n");
        return 1;
    }
    CUtensorMap map;
    const cuuint64_t dims[4] = {TD, TH, TT, 1}, strides[3] = {TD * 2, TH * TD * 2, (cuuint64_t)TT * TH * TD * 2};
    const cuuint32_t boxd[4] = {64, 1, 64, 1}, estr[4] = {1, 1, 1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, dK, dims, strides, boxd, estr,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("tma sw128: cuTensorMapEncodeTiled failed (%d)\n", (int)r);
        return 1;
    }
    const int hk = 1, t0 = 64; /* tokens 64 .. 99 exist, 100 .. 127 do not */
    cudaMemset(dOut, 0xff, sizeof got);
    cudaMemset(dStatus, 0, sizeof status);
    probe_tma_sw128_kernel<<<1, 128>>>(map, dOut, dStatus, hk, t0);
    if (probe_sync("tma sw128"))
        return 1;
    cudaMemcpy(&status, dStatus, sizeof status, cudaMemcpyDeviceToHost);
    if (status) {
        printf("tma sw128: timed out waiting for the boxes (the mbarrier expected other than the bytes delivered)\n");
        return 1;
    }
    cudaMemcpy(got, dOut, sizeof got, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < 64; t++)
        for (int c = 0; c < TD; c++) {
            const int at = ((c / 64) * 8192 + probe_sw128(t, c % 64)) / 2;
            const unsigned short want = t0 + t < TT ? K[((t0 + t) * TH + hk) * TD + c] : 0;
            if (got[at] != want && bad++ < 4)
                printf("tma sw128: token %d column %d (byte %d): %u, expected %u\n", t, c, 2 * at, got[at], want);
        }
    printf("tma sw128: two {64, 1, 64, 1} boxes (SWIZZLE_128B) at head %d, token %d of %d: %d mismatches%s\n", hk, t0,
           TT, bad, bad ? "" : " (the 128B swizzle as assumed; rows past T arrive as zeros)");
    cudaFree(dK);
    cudaFree(dOut);
    cudaFree(dStatus);
    return bad ? 1 : 0;
}

/* probe_sm90 wgmma TYPE AMAJ BMAJ READING | tma | rega bf16|tf32 | sw128 kb | sw128 mnb [READING] | ldsm | tma
   sw128: one probe per process (a fault leaves the context unusable, so each reading runs on its own; rega tf32
   and sw128 mnb try their variants in one process, as a wrong one there reads only inside the buffer). */
int main(int argc, char **argv)
{
    cudaDeviceProp prop;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess || prop.major != 9) {
        printf("skipped: no compute capability 9.x device\n");
        return 77;
    }
    if (argc == 2 && strcmp(argv[1], "tma") == 0)
        return probe_tma();
    if (argc == 6 && strcmp(argv[1], "wgmma") == 0)
        return probe_wgmma(argv[2], argv[3], argv[4], atoi(argv[5]));
    if (argc == 3 && strcmp(argv[1], "rega") == 0)
        return probe_rega(argv[2]);
    if (argc == 3 && strcmp(argv[1], "sw128") == 0 && strcmp(argv[2], "kb") == 0)
        return probe_sw128_kb();
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "sw128") == 0 && strcmp(argv[2], "mnb") == 0)
        return probe_sw128_mnb(argc == 4 ? atoi(argv[3]) != 0 : -1);
    if (argc == 2 && strcmp(argv[1], "ldsm") == 0)
        return probe_ldsm();
    if (argc == 3 && strcmp(argv[1], "tma") == 0 && strcmp(argv[2], "sw128") == 0)
        return probe_tma_sw128();
    printf("usage: probe_sm90 wgmma tf32|bf16 k|mn k|mn 0|1 | probe_sm90 tma | probe_sm90 rega bf16|tf32 | "
           "probe_sm90 sw128 kb | probe_sm90 sw128 mnb [0|1] | probe_sm90 ldsm | probe_sm90 tma sw128\n");
    return 2;
}
