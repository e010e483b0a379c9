// Lab (session 34, issue 5): what one warpgroup's wgmma issue costs. Session 33's phase trace of the B=1 state
// pass (docs/PERF.md, session 34) put every wgmma at 19-21 SM cycles of issue, whatever its N (X^T: 8 m64n64k16 in
// 152-156 cycles; S': 4 m64n128k16 in 71-72; O^T: 4 m64n64k16 in 78-79), while the tensor pipe takes 32 cycles for
// an m64n64k16 and 64 for an m64n128k16. If that issue cost is the descriptors' trip into uniform registers (the
// SASS has two R2UR per HGMMA, session 31) or the scale-d predicate made per product (a setp), a form without them
// would let D^T finish well before its wait, which the Y^T issue and gl S now delay (about 200 cycles of the
// chunk's 2400 by the trace). This measures the issue alone, one CTA of 128 threads (one warpgroup), zeros in
// shared memory, clock64 before the first product, after the last is issued, and after the wait:
//   mode 0: gdn's X^T form: A from registers, each descriptor made from the stage's address (alternating between
//           two stages by the loop counter, as c % 2) per product, scale-d from a register (setp per product);
//   mode 1: descriptors from one base made before the loop plus a constant offset each and the stage's offset
//           (it & 1, as mode 0 alternates), scale-d constant;
//   mode 2: mode 0's descriptors, scale-d constant;
//   mode 3: mode 1's descriptors, scale-d from a register;
//   mode 4: both operands by descriptor (the SS form), mode 1's descriptors (A's without the stage's offset);
//   mode 5: 4 m64n128k16 (the update's shape), mode 0's form;
//   mode 6: mode 0 with the body once per stage (each stage's offsets compile-time constants: the only mode whose
//           descriptors are the base plus constants alone).
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o wgmma_issue s34-wgmma-issue.cu
// Run: ./wgmma_issue (one line per mode: issue and total cycles per iteration, medians over 9 launches), then
// cuobjdump -sass wgmma_issue | grep -cE "R2UR|HGMMA" per mode to tie the cycles to the instructions.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

__device__ __forceinline__ uint64_t desc_of(unsigned sd, unsigned off, unsigned lbo, unsigned sbo, bool sw)
{
    return (uint64_t)(sd + (off >> 4) + ((lbo >> 4) << 16)) | ((uint64_t)((sbo >> 4) | (sw ? 1u << 30 : 0u)) << 32);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void fence_acc(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}
#define ACC32(d)                                                                                                      \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),       \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),        \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define REGS32                                                                                                        \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "  \
    "%24, %25, %26, %27, %28, %29, %30, %31}"
// m64n64k16 bf16, A from registers, scale-d from a register (gdn's rs_bf16_n64)
__device__ __forceinline__ void rs_r(float (&d)[32], const unsigned (&a)[4], uint64_t b, int sc)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %37, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " REGS32 ", {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}"
                 : ACC32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(sc));
}
// the same with scale-d a constant (1: accumulate)
__device__ __forceinline__ void rs_i(float (&d)[32], const unsigned (&a)[4], uint64_t b)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 1, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " REGS32 ", {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}"
                 : ACC32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// both operands by descriptor, scale-d constant
__device__ __forceinline__ void ss_i(float (&d)[32], uint64_t a, uint64_t b)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 1, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " REGS32 ", %32, %33, p, 1, 1, 0, 0;\n}"
                 : ACC32(d)
                 : "l"(a), "l"(b));
}
// m64n128k16, A from registers, scale-d from a register (gdn's update)
__device__ __forceinline__ void rs128_r(float (&d)[64], const unsigned (&a)[4], uint64_t b, int sc)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %69, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
                 "%59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}"
                 : ACC32(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),
                   "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]),
                   "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),
                   "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]),
                   "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(sc));
}

constexpr int STAGE = 32768; // bytes per stage (two stages, as the state pass's K boxes)
// the k16 block kk's offset in a stage of 64-column boxes of 8 KB, 32 bytes per k16 within a box (gdn's X^T)
__host__ __device__ constexpr unsigned koff(int kk) { return (unsigned)((kk >> 2) * 8192 + (kk & 3) * 32); }

template <int MODE>
__global__ void __launch_bounds__(128, 1) issue_kernel(long long *out, int iters, unsigned zero)
{
    extern __shared__ __align__(1024) unsigned char sm[];
    for (int i = threadIdx.x; i < 2 * STAGE / 16; i += 128)
        ((uint4 *)sm)[i] = make_uint4(0u, 0u, 0u, 0u);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(sm);
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; i++)
        d[i] = 0.f;
    unsigned a[8][4];
#pragma unroll
    for (int kk = 0; kk < 8; kk++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            a[kk][q] = zero * (unsigned)(kk + q + threadIdx.x); // zeros the compiler cannot see
    const uint64_t d0 = desc_of(sbase >> 4, 0u, 16u, 1024u, true);
    long long ti = 0, tw = 0;
#pragma unroll 1
    for (int it = 0; it < iters; it++) {
        const unsigned sd = (sbase + (unsigned)(it & 1) * STAGE) >> 4;
        fence_acc(d);
        wg_fence();
        const long long t0 = clock64();
        if constexpr (MODE == 0) {
#pragma unroll
            for (int kk = 0; kk < 8; kk++)
                rs_r(*(float(*)[32])d, a[kk], desc_of(sd, koff(kk), 16u, 1024u, true), kk | it);
        } else if constexpr (MODE == 1) {
#pragma unroll
            for (int kk = 0; kk < 8; kk++)
                rs_i(*(float(*)[32])d, a[kk], d0 + (koff(kk) >> 4) + (uint64_t)((it & 1) * (STAGE >> 4)));
        } else if constexpr (MODE == 2) {
#pragma unroll
            for (int kk = 0; kk < 8; kk++)
                rs_i(*(float(*)[32])d, a[kk], desc_of(sd, koff(kk), 16u, 1024u, true));
        } else if constexpr (MODE == 3) {
#pragma unroll
            for (int kk = 0; kk < 8; kk++)
                rs_r(*(float(*)[32])d, a[kk], d0 + (koff(kk) >> 4) + (uint64_t)((it & 1) * (STAGE >> 4)), kk | it);
        } else if constexpr (MODE == 4) {
#pragma unroll
            for (int kk = 0; kk < 8; kk++)
                ss_i(*(float(*)[32])d, d0 + (koff(kk) >> 4), d0 + (koff(kk) >> 4) + (uint64_t)((it & 1) * (STAGE >> 4)));
        } else if constexpr (MODE == 5) {
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
                rs128_r(d, a[kk], desc_of(sd, (unsigned)kk * 2048u, 8192u, 1024u, true), kk | it);
        } else { /* 6 */
            if (it & 1) {
#pragma unroll
                for (int kk = 0; kk < 8; kk++)
                    rs_r(*(float(*)[32])d, a[kk], desc_of((sbase + STAGE) >> 4, koff(kk), 16u, 1024u, true), kk | it);
            } else {
#pragma unroll
                for (int kk = 0; kk < 8; kk++)
                    rs_r(*(float(*)[32])d, a[kk], desc_of(sbase >> 4, koff(kk), 16u, 1024u, true), kk | it);
            }
        }
        const long long t1 = clock64();
        wg_commit();
        wg_wait0();
        fence_acc(d);
        const long long t2 = clock64();
        ti += t1 - t0;
        tw += t2 - t0;
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 64; i++)
        s += d[i];
    if (threadIdx.x == 0) {
        out[0] = ti;
        out[1] = tw;
        if (s == 12345.f)
            out[2] = 1;
    }
}

template <int MODE>
static void run(const char *what, long long *dev, int iters)
{
    const int smem = 2 * STAGE + 1024;
    cudaFuncSetAttribute(issue_kernel<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    double is[9], ws[9];
    for (int r = 0; r < 9; r++) {
        issue_kernel<MODE><<<1, 128, smem>>>(dev, iters, 0u);
        long long h[2] = {0, 0};
        cudaMemcpy(h, dev, sizeof h, cudaMemcpyDeviceToHost);
        is[r] = (double)h[0] / iters;
        ws[r] = (double)h[1] / iters;
    }
    std::sort(is, is + 9);
    std::sort(ws, ws + 9);
    const int n = MODE == 5 ? 4 : 8;
    printf("mode %d %-58s issue %7.1f cycles (%5.1f per product), issue to done %7.1f\n", MODE, what, is[4],
           is[4] / n, ws[4]);
}

int main()
{
    long long *dev = nullptr;
    if (cudaMalloc(&dev, 4 * sizeof(long long)) != cudaSuccess) {
        printf("skipped: no CUDA device\n");
        return 0;
    }
    const int iters = 2000;
    run<0>("RS n64 x8, descriptors per product, scale-d register", dev, iters);
    run<1>("RS n64 x8, base descriptor + constants, scale-d constant", dev, iters);
    run<2>("RS n64 x8, descriptors per product, scale-d constant", dev, iters);
    run<3>("RS n64 x8, base descriptor + constants, scale-d register", dev, iters);
    run<4>("SS n64 x8, base descriptors + constants", dev, iters);
    run<5>("RS n128 x4, descriptors per product, scale-d register", dev, iters);
    run<6>("RS n64 x8, mode 0 unrolled by the two stages", dev, iters);
    const cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", e == cudaSuccess ? "ok" : cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
