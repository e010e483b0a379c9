/*
 * probe_sm90.cu — probes for the chunked state pass's next form (docs/DESIGN.md, "Chunked prefill on CUDA", next
 * steps), run by hand on a Hopper GPU before that kernel is written; not tests, not run by ctest.
 *
 * 1. wgmma: one m64n32k8 product with tf32 operands from no-swizzle K-major shared memory (the layout the state
 *    pass would give K S^T: A = 64 token rows x 8 of Dk, B = 32 state rows x 8 of Dk), for both readings of the
 *    matrix descriptor's two byte offsets (which one steps along K, which along M / N), read back through the
 *    accumulator layout the kernel would assume (warp w, lane l: rows 16 w + l / 4 (+ 8), columns 8 i +
 *    2 (l % 4) (+ 1), registers 4 i .. 4 i + 3). The operands are small multiples of 1/4, so the product is exact
 *    and any difference is a layout error.
 * 2. TMA: one 3-D tensor-map box (Dk x 1 head x 64 tokens) of a bf16 [T][Hk][Dk] tensor, as the state pass would
 *    bring a chunk's k rows, at a chunk that runs past T (the rows past it must arrive as zeros), completing on
 *    an mbarrier; compared element by element.
 *
 * Usage: probe_sm90 [wgmma0 | wgmma1 | tma] (one probe; default all). Prints each probe's result; exits 0
 * when one wgmma reading is exact and the box matches (or the one probe asked for passes), 1 otherwise, 77
 * without a compute capability 9.x device.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM 64 /* rows of A (tokens) */
#define PN 32 /* rows of B (state rows) */
#define PK 8  /* the summation length of one tf32 wgmma */

/* Element (r, k) of a K-major operand of `rows` rows, no swizzle: 8 x 4 core matrices (128 bytes) laid out
   K-fastest, so core (r / 8, k / 4) starts at ((r / 8) * 2 + k / 4) * 32 floats: 128 bytes apart along K,
   256 bytes apart along the rows. */
__host__ __device__ static inline int probe_at(int r, int k)
{
    return ((r / 8) * 2 + k / 4) * 32 + (r % 8) * 4 + k % 4;
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ static inline uint64_t probe_desc(const void *p, unsigned lbo, unsigned sbo)
{
    const uint64_t a = ((uint64_t)__cvta_generic_to_shared(p) & 0x3ffffu) >> 4;
    return a | ((uint64_t)((lbo >> 4) & 0x3fffu) << 16) | ((uint64_t)((sbo >> 4) & 0x3fffu) << 32);
}
#endif

/* variant 0: leading byte offset 128 (along K), stride byte offset 256 (along the rows); variant 1: swapped. */
__global__ void probe_kernel(const float *A, const float *B, float *D, int variant)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) float sa[PM * PK], sb[PN * PK];
    const int tid = threadIdx.x, w = tid / 32, l = tid % 32;
    for (int e = tid; e < PM * PK; e += 128)
        sa[probe_at(e / PK, e % PK)] = A[e];
    for (int e = tid; e < PN * PK; e += 128)
        sb[probe_at(e / PK, e % PK)] = B[e];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); /* generic stores, read by the async proxy */
    __syncthreads();
    const unsigned lbo = variant == 0 ? 128u : 256u, sbo = variant == 0 ? 256u : 128u;
    const uint64_t da = probe_desc(sa, lbo, sbo), db = probe_desc(sb, lbo, sbo);
    float d[16];
    for (int i = 0; i < 16; i++)
        d[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %18, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
                   "+f"(d[15])
                 : "l"(da), "l"(db), "r"(0)
                 : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int i = 0; i < PN / 8; i++)
        for (int q = 0; q < 4; q++)
            D[(16 * w + l / 4 + 8 * (q >> 1)) * PN + 8 * i + 2 * (l % 4) + (q & 1)] = d[4 * i + q];
#else
    (void)A, (void)B, (void)D, (void)variant;
    __trap();
#endif
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

/* probe_sm90 [wgmma0|wgmma1|tma]: one probe (a fault leaves the process's context unusable, so a reading
   that faults can be skipped), else all three in turn. */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    cudaDeviceProp prop;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess || prop.major != 9) {
        printf("skipped: no compute capability 9.x device\n");
        return 77;
    }
    static float A[PM * PK], B[PN * PK], D[PM * PN], R[PM * PN];
    srand(1);
    for (int i = 0; i < PM * PK; i++)
        A[i] = (float)(rand() % 9 - 4) / 4.0f;
    for (int i = 0; i < PN * PK; i++)
        B[i] = (float)(rand() % 9 - 4) / 4.0f;
    for (int m = 0; m < PM; m++)
        for (int n = 0; n < PN; n++) {
            float s = 0.f;
            for (int k = 0; k < PK; k++)
                s += A[m * PK + k] * B[n * PK + k];
            R[m * PN + n] = s;
        }
    float *dA = NULL, *dB = NULL, *dD = NULL;
    if (cudaMalloc((void **)&dA, sizeof A) != cudaSuccess || cudaMalloc((void **)&dB, sizeof B) != cudaSuccess ||
        cudaMalloc((void **)&dD, sizeof D) != cudaSuccess) {
        printf("cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
    int exact = 0;
    for (int v = 0; v < 2; v++) {
        if (only[0] && !(strncmp(only, "wgmma", 5) == 0 && only[5] - '0' == v))
            continue;
        cudaMemset(dD, 0, sizeof D);
        probe_kernel<<<1, 128>>>(dA, dB, dD, v);
        const cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            printf("variant %d: %s\n", v, cudaGetErrorString(e));
            return 1;
        }
        cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost);
        double worst = 0.0;
        for (int i = 0; i < PM * PN; i++)
            worst = fmax(worst, fabs((double)D[i] - (double)R[i]));
        printf("variant %d (leading byte offset %d, stride byte offset %d): largest error %g%s\n", v,
               v == 0 ? 128 : 256, v == 0 ? 256 : 128, worst, worst == 0.0 ? " (exact)" : "");
        exact += worst == 0.0;
    }
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    if (only[0])
        return strcmp(only, "tma") == 0 ? probe_tma() : exact ? 0 : 1;
    const int tma_bad = probe_tma();
    return exact && !tma_bad ? 0 : 1;
}
