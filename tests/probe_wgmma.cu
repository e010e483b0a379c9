/*
 * probe_wgmma.cu — a probe for the chunked state pass's next form (docs/DESIGN.md, "Chunked prefill on CUDA",
 * next steps): on a Hopper GPU, one wgmma m64n32k8 product with tf32 operands from no-swizzle K-major shared
 * memory (the layout the state pass would give K S^T: A = 64 token rows x 8 of Dk, B = 32 state rows x 8 of Dk),
 * for both readings of the matrix descriptor's two byte offsets (which one steps along K, which along M / N),
 * read back through the accumulator layout the kernel would assume (warp w, lane l: rows 16 w + l / 4 (+ 8),
 * columns 8 i + 2 (l % 4) (+ 1), registers 4 i .. 4 i + 3). The operands are small multiples of 1/4, so the
 * product is exact and any difference is a layout error.
 *
 * Not a test and not run by ctest: run by hand on the H200 (`probe_wgmma`), before the state pass is written.
 * Prints each variant's largest error and exits 0 when one variant is exact, 1 when none is, 77 without a
 * Hopper device.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(void)
{
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
    return exact ? 0 : 1;
}
