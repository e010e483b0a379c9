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
 * Usage: probe_sm90 wgmma tf32|bf16 k|mn k|mn 0|1, or probe_sm90 tma: one probe per run. Prints its result;
 * exits 0 when it passes (the product exact, the box matching), 1 otherwise, 77 without a compute capability
 * 9.x device.
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

/* probe_sm90 wgmma TYPE AMAJ BMAJ READING | probe_sm90 tma: one probe per process (a fault leaves the context
   unusable, so each reading runs on its own). */
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
    printf("usage: probe_sm90 wgmma tf32|bf16 k|mn k|mn 0|1 | probe_sm90 tma\n");
    return 2;
}
