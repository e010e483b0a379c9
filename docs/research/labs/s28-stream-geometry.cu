// Lab (session 28, issue 4): the state's stream alone, through registers, in the geometries of gdn's decode
// (fast1_kernel) and verify (fast_pairs_kernel) kernels. A "state" of NH heads of 128 x 128 f32 is read and
// written in place, one CTA of 128 threads per item of J tiles; 8 lanes per row slice of 16 floats; RPT rows per
// thread (1: decode's 16-row tiles, 2: the pairs kernel's 32-row tiles); the next tile loaded while this one is
// stored; PF: 0 no L2 prefetch, 1 tile 0 only, 2 all J tiles at the CTA's start. Timed by CUDA events over
// rotating pools (4 x the state), median of 25. 48 KiB of dynamic shared memory per CTA holds each at 4 CTAs per
// SM, as gdn's kernels are (128 registers), unless marked free. capture_kernel: dense capture's traffic (run in
// session 29: docs/PERF.md).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define D 128
__device__ __forceinline__ void pf_l2(const void *p, unsigned bytes)
{
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
}
// A warp's rows of its tiles into L2 (PF 1: tile 0; 2: all J), ROWS_W rows of tiles TR rows apart from t0.
template <int PF, int J>
__device__ __forceinline__ void pf_rows(const float *t0, int lane, int TR, int ROWS_W)
{
    if (PF == 1 && lane == 0)
        pf_l2(t0, ROWS_W * D * 4);
    if (PF == 2 && lane < J)
        pf_l2(t0 + lane * TR * D, ROWS_W * D * 4);
}
template <int RPT, int J, int PF, int NW = 4>
__global__ void __launch_bounds__(NW * 32, 16 / NW) stream_kernel(float *base, float scale)
{
    constexpr int ROWS_W = 4 * RPT, TR = NW * ROWS_W, TILES_H = D / TR, PER = TILES_H / J; // rows per warp, per tile
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lr = lane & 7, grp = lane >> 3;
    const long head = blockIdx.x / PER, tg = blockIdx.x % PER;
    float *t0 = base + head * D * D + (long)tg * J * TR * D + warp * ROWS_W * D; // this warp's rows, tile 0
    pf_rows<PF, J>(t0, lane, TR, ROWS_W);
    float4 sn[RPT][4];
#pragma unroll
    for (int r = 0; r < RPT; r++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            sn[r][i] = ((const float4 *)(t0 + (RPT * grp + r) * D))[i * 8 + lr];
#pragma unroll 1
    for (int j = 0; j < J; j++) {
        float4 s[RPT][4];
#pragma unroll
        for (int r = 0; r < RPT; r++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                s[r][i] = sn[r][i];
        if (j + 1 < J) {
#pragma unroll
            for (int r = 0; r < RPT; r++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    sn[r][i] = ((const float4 *)(t0 + ((j + 1) * TR + RPT * grp + r) * D))[i * 8 + lr];
        }
#pragma unroll
        for (int r = 0; r < RPT; r++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float4 v = s[r][i];
                v.x *= scale, v.y *= scale, v.z *= scale, v.w *= scale;
                ((float4 *)(t0 + (j * TR + RPT * grp + r) * D))[i * 8 + lr] = v;
            }
    }
}
// Dense capture's traffic (verify T=4 with capture: the state read once, 4 states written to cap [heads][4 tokens
// of stride NH heads] and the final one in place): CS 1 streaming stores (__stcs) as gdn's capture, 0 plain.
template <int RPT, int J, int PF, int CS>
__global__ void __launch_bounds__(128, 4) capture_kernel(float *base, float *cap, long nh, float scale)
{
    constexpr int ROWS_W = 4 * RPT, TR = 4 * ROWS_W, TILES_H = D / TR, PER = TILES_H / J;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lr = lane & 7, grp = lane >> 3;
    const long head = blockIdx.x / PER, tg = blockIdx.x % PER;
    const long off = head * D * D + (long)tg * J * TR * D + warp * ROWS_W * D;
    float *t0 = base + off;
    pf_rows<PF, J>(t0, lane, TR, ROWS_W);
#pragma unroll 1
    for (int j = 0; j < J; j++) {
        float4 s[RPT][4];
#pragma unroll
        for (int r = 0; r < RPT; r++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                s[r][i] = ((const float4 *)(t0 + (j * TR + RPT * grp + r) * D))[i * 8 + lr];
#pragma unroll 1
        for (int t = 0; t < 5; t++) {
            float *dst = t < 4 ? cap + (long)t * nh * D * D + off : t0;
#pragma unroll
            for (int r = 0; r < RPT; r++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    float4 v = s[r][i];
                    v.x *= scale, v.y *= scale, v.z *= scale, v.w *= scale;
                    s[r][i] = v;
                    float4 *d = (float4 *)(dst + (j * TR + RPT * grp + r) * D) + i * 8 + lr;
                    if (CS && t < 4)
                        __stcs(d, v);
                    else
                        *d = v;
                }
        }
    }
}
/* The median over 25 calls of launch(rep), after 3 warm-up calls, timed by CUDA events around each (us). */
template <class F>
static float median_us(F launch)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    std::vector<float> ts;
    for (int rep = 0; rep < 25 + 3; rep++) {
        cudaEventRecord(a);
        launch(rep);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        if (rep >= 3)
            ts.push_back(ms * 1000.f);
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}
template <int RPT, int J, int PF, int CS>
static void run_cap(const char *name, float *pool, float *cap, long nh, int npools)
{
    constexpr int TR = 16 * RPT, PER = D / TR / J;
    const long grid = nh * PER;
    cudaFuncSetAttribute(capture_kernel<RPT, J, PF, CS>, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024);
    const float us = median_us([&](int rep) {
        float *p = pool + (long)(rep % npools) * nh * D * D;
        capture_kernel<RPT, J, PF, CS><<<(unsigned)grid, 128, 48 * 1024>>>(p, cap, nh, 1.0f);
    });
    printf("%-28s heads %5ld  CTAs %6ld  median %8.2f us  %.3f TB/s (6 states of traffic)\n", name, nh, grid, us,
           6.0 * nh * D * D * 4 / (us * 1e-6) / 1e12);
}
template <int RPT, int J, int PF, int NW = 4>
static void run(const char *name, float *pool, long nh, int npools, int smem = 48 * 1024)
{
    if (NW == 8 && smem)
        smem = 96 * 1024;
    cudaFuncSetAttribute(stream_kernel<RPT, J, PF, NW>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    constexpr int TR = 4 * NW * RPT, PER = D / TR / J;
    const long grid = nh * PER;
    const float us = median_us([&](int rep) {
        float *p = pool + (long)(rep % npools) * nh * D * D;
        stream_kernel<RPT, J, PF, NW><<<(unsigned)grid, NW * 32, smem>>>(p, 1.0f);
    });
    int occ = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, stream_kernel<RPT, J, PF, NW>, NW * 32, smem);
    printf("%-28s heads %5ld  CTAs %6ld  %d/SM  median %8.2f us  %.3f TB/s\n", name, nh, grid, occ, us,
           2.0 * nh * D * D * 4 / (us * 1e-6) / 1e12);
}
static void copy_rate(float *pool, long nh)
{
    const size_t bytes = (size_t)nh * D * D * 4;
    const float us = median_us([&](int rep) {
        cudaMemcpyAsync(pool + (rep % 2) * 2 * nh * D * D, pool + ((rep % 2) * 2 + 1) * nh * D * D, bytes,
                        cudaMemcpyDeviceToDevice);
    });
    printf("%-28s heads %5ld  median %8.2f us  %.3f TB/s\n", "cudaMemcpy D2D", nh, us, 2.0 * bytes / (us * 1e-6) / 1e12);
}
int main()
{
    const int npools = 4;
    for (long nh : {2048L, 8192L}) { // B = 64, 256 of the Qwen layer (Hv = 32)
        float *pool;
        cudaMalloc(&pool, (size_t)npools * nh * D * D * 4);
        cudaMemset(pool, 0, (size_t)npools * nh * D * D * 4);
        for (int round = 0; round < 2; round++) {
            copy_rate(pool, nh);
            run<2, 4, 1>("pairs-like 2 rows, J4, pf t0", pool, nh, npools);
            run<2, 2, 2>("2 rows, J2, pf all", pool, nh, npools);
            run<2, 2, 2, 8>("8 warps 2 rows J2 pf all", pool, nh, npools);
            run<2, 2, 1, 8>("8 warps 2 rows J2 pf t0", pool, nh, npools);
            run<1, 4, 2, 8>("8 warps 1 row J4 pf all", pool, nh, npools);
            run<1, 2, 2>("decode-like 1 row, J2, pf all", pool, nh, npools);
        }
        cudaFree(pool);
    }
    { // dense capture, B=64: 2048 heads, 4 captured states
        const long nh = 2048;
        float *pool, *cap;
        cudaMalloc(&pool, (size_t)npools * nh * D * D * 4);
        cudaMalloc(&cap, (size_t)4 * nh * D * D * 4);
        cudaMemset(pool, 0, (size_t)npools * nh * D * D * 4);
        for (int round = 0; round < 2; round++) {
            copy_rate(pool, nh);
            run_cap<1, 1, 1, 1>("cap: 1 row, J1, pf t0, cs", pool, cap, nh, npools);
            run_cap<1, 1, 1, 0>("cap: 1 row, J1, pf t0, plain", pool, cap, nh, npools);
            run_cap<1, 2, 2, 1>("cap: 1 row, J2, pf all, cs", pool, cap, nh, npools);
            run_cap<1, 4, 2, 1>("cap: 1 row, J4, pf all, cs", pool, cap, nh, npools);
            run_cap<2, 1, 1, 1>("cap: 2 rows, J1, pf t0, cs", pool, cap, nh, npools);
            run_cap<2, 2, 2, 1>("cap: 2 rows, J2, pf all, cs", pool, cap, nh, npools);
        }
        cudaFree(pool), cudaFree(cap);
    }
    cudaError_t e = cudaGetLastError();
    printf("%s\n", cudaGetErrorString(e));
    return 0;
}
