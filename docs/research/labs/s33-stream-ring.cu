// Lab (session 33, issue 4): can a persistent, warp-specialised pipeline stream the state at the copy rate?
// Session 28 (s28-stream-geometry.cu) found the verify kernel's geometry (one 4-warp CTA per head, 4 register-loaded
// tiles of 32 rows, tile 0 prefetched into L2) 3.5-4.5% behind a copy and decode's within 1-3%; verify T=4 B=64
// stays at 74.3 us against issue 4's 70 because of it. Here the state of NH heads of 128 x 128 f32 (in place,
// rotating pools so every call comes from HBM) goes through a ring of STAGES shared-memory stages of one 32-row tile
// (16 KiB) each: one producer lane issues a bulk copy per tile (cp.async.bulk, mbarrier complete_tx); consumer
// groups of 4 warps take the tiles in turn (group i % CG takes the CTA's tile i), each thread two rows x 16 columns
// as the pairs kernel holds them; WORK dependent FMA passes over its 32 values stand in for the tokens (12 ~ verify
// T=4's 388 FFMA a tile and thread); the tile goes back to global by 16-byte stores from registers (ST 0) or by
// writing the stage and one bulk store per warp (ST 1, the stage released once the store has read it). CPS CTAs per
// SM on a persistent grid; CTA c takes tiles c, c + G, ... Timed by CUDA events, median of 25, beside a D2D copy
// and the s28 lab's pairs-like and decode-like register geometries.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a s33-stream-ring.cu -o ring
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define D 128
#define TROWS 32
#define TBYTES (TROWS * D * 4)

__device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mb_init(unsigned long long *b, unsigned n)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void mb_expect(unsigned long long *b, unsigned tx)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(b)), "r"(tx) : "memory");
}
__device__ __forceinline__ void mb_arrive(unsigned long long *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(b)) : "memory");
}
__device__ __forceinline__ void mb_wait(unsigned long long *b, unsigned par)
{
    asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
                 ::"r"(sa(b)), "r"(par) : "memory");
}
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, unsigned long long *b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(sa(dst)), "l"(src), "r"(bytes), "r"(sa(b)) : "memory");
}
__device__ __forceinline__ void bulk_store(void *dst, const void *src, unsigned bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(sa(src)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

template <int WORK>
__device__ __forceinline__ void work(float4 (&s)[2][4], float scale)
{
#pragma unroll
    for (int w = 0; w < WORK; w++)
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float4 &v = s[r][i];
                v.x = fmaf(v.x, scale, 0.f), v.y = fmaf(v.y, scale, 0.f), v.z = fmaf(v.z, scale, 0.f),
                v.w = fmaf(v.w, scale, 0.f);
            }
    if (WORK == 0)
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float4 &v = s[r][i];
                v.x *= scale, v.y *= scale, v.z *= scale, v.w *= scale;
            }
}

template <int CG, int STAGES, int ST, int WORK>
__global__ void __launch_bounds__(CG * 128 + 32) ring_kernel(float *base, long ntiles, float scale)
{
    extern __shared__ __align__(1024) unsigned char smem[];
    float *stage = (float *)smem;
    unsigned long long *full = (unsigned long long *)(smem + STAGES * TBYTES), *empty = full + STAGES;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long G = gridDim.x, c = blockIdx.x;
    const long mine = c < ntiles ? (ntiles - 1 - c) / G + 1 : 0; // this CTA's tiles
    if (tid == 0) {
        for (int s = 0; s < STAGES; s++)
            mb_init(&full[s], 1), mb_init(&empty[s], 4);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == CG * 4) { // producer
        if (lane == 0)
            for (long i = 0; i < mine; i++) {
                const int s = (int)(i % STAGES);
                if (i >= STAGES)
                    mb_wait(&empty[s], (unsigned)((i / STAGES - 1) & 1));
                mb_expect(&full[s], TBYTES);
                bulk_load(stage + s * TROWS * D, base + (c + i * G) * TROWS * D, TBYTES, &full[s]);
            }
        return;
    }
    const int g = warp / 4, wq = warp % 4, lr = lane & 7, grp = lane >> 3;
    int prev = -1;
    for (long i = g; i < mine; i += CG) {
        const int s = (int)(i % STAGES);
        mb_wait(&full[s], (unsigned)((i / STAGES) & 1));
        float *st = stage + s * TROWS * D + (8 * wq) * D; // this warp's 8 rows
        float4 v[2][4];
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
            for (int k = 0; k < 4; k++)
                v[r][k] = ((const float4 *)(st + (2 * grp + r) * D))[k * 8 + lr];
        work<WORK>(v, scale);
        float *gt = base + (c + i * G) * TROWS * D + (8 * wq) * D;
        if (ST == 0) {
            __syncwarp();
            if (lane == 0)
                mb_arrive(&empty[s]);
#pragma unroll
            for (int r = 0; r < 2; r++)
#pragma unroll
                for (int k = 0; k < 4; k++)
                    ((float4 *)(gt + (2 * grp + r) * D))[k * 8 + lr] = v[r][k];
        } else {
#pragma unroll
            for (int r = 0; r < 2; r++)
#pragma unroll
                for (int k = 0; k < 4; k++)
                    ((float4 *)(st + (2 * grp + r) * D))[k * 8 + lr] = v[r][k];
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncwarp();
            if (lane == 0) {
                bulk_store(gt, st, 8 * D * 4);
                if (prev >= 0) {
                    bulk_wait_read<1>();
                    mb_arrive(&empty[prev]);
                }
            }
            prev = s;
        }
    }
    if (ST == 1 && lane == 0 && prev >= 0) {
        bulk_wait_read<0>();
        mb_arrive(&empty[prev]);
    }
    if (ST == 1 && lane == 0)
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// s28's register geometry (no shared memory ring): RPT rows per thread, J tiles per CTA, PF 1 tile 0 / 2 all into L2.
__device__ __forceinline__ void pf_l2(const void *p, unsigned bytes)
{
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
}
template <int RPT, int J, int PF, int WORK>
__global__ void __launch_bounds__(128, 4) reg_kernel(float *base, float scale)
{
    constexpr int ROWS_W = 4 * RPT, TR = 4 * ROWS_W, PER = D / TR / J;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lr = lane & 7, grp = lane >> 3;
    const long head = blockIdx.x / PER, tg = blockIdx.x % PER;
    float *t0 = base + head * D * D + (long)tg * J * TR * D + warp * ROWS_W * D;
    if (PF == 1 && lane == 0)
        pf_l2(t0, ROWS_W * D * 4);
    if (PF == 2 && lane < J)
        pf_l2(t0 + lane * TR * D, ROWS_W * D * 4);
    float4 sn[2][4];
#pragma unroll
    for (int r = 0; r < RPT; r++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            sn[r][i] = ((const float4 *)(t0 + (RPT * grp + r) * D))[i * 8 + lr];
#pragma unroll 1
    for (int j = 0; j < J; j++) {
        float4 s[2][4];
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                s[r][i] = r < RPT ? sn[r][i] : make_float4(0, 0, 0, 0);
        if (j + 1 < J) {
#pragma unroll
            for (int r = 0; r < RPT; r++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    sn[r][i] = ((const float4 *)(t0 + ((j + 1) * TR + RPT * grp + r) * D))[i * 8 + lr];
        }
        work<WORK>(s, scale);
#pragma unroll
        for (int r = 0; r < RPT; r++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                ((float4 *)(t0 + (j * TR + RPT * grp + r) * D))[i * 8 + lr] = s[r][i];
    }
}

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
static int nsm;
static bool check(float *pool, long nh, const char *name)
{ // every call scales by 1: the pool must still hold its pattern
    std::vector<float> h(4096);
    cudaMemcpy(h.data(), pool + (nh * D * D) / 2, 4096 * 4, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 4096; i++)
        if (h[i] != (float)((nh * D * D / 2 + i) % 1000)) {
            printf("%s: WRONG at %d (%g)\n", name, i, h[i]);
            return false;
        }
    return true;
}
template <int CG, int STAGES, int ST, int WORK>
static void run_ring(const char *name, float *pool, long nh, int npools, int cps)
{
    const int smem = STAGES * TBYTES + 2 * STAGES * 8;
    auto k = ring_kernel<CG, STAGES, ST, WORK>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int occ = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, CG * 128 + 32, smem);
    const long ntiles = nh * D / TROWS;
    const unsigned grid = (unsigned)(cps * nsm);
    const float us = median_us([&](int rep) {
        float *p = pool + (long)(rep % npools) * nh * D * D;
        k<<<grid, CG * 128 + 32, smem>>>(p, ntiles, 1.0f);
    });
    cudaError_t e = cudaGetLastError();
    printf("%-34s heads %5ld  %d/SM (fits %d)  median %8.2f us  %.3f TB/s%s\n", name, nh, cps, occ, us,
           2.0 * nh * D * D * 4 / (us * 1e-6) / 1e12, e ? cudaGetErrorString(e) : "");
    check(pool, nh, name);
}
template <int RPT, int J, int PF, int WORK>
static void run_reg(const char *name, float *pool, long nh, int npools)
{
    auto k = reg_kernel<RPT, J, PF, WORK>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024);
    constexpr int TR = 16 * RPT, PER = D / TR / J;
    const long grid = nh * PER;
    const float us = median_us([&](int rep) {
        float *p = pool + (long)(rep % npools) * nh * D * D;
        k<<<(unsigned)grid, 128, 48 * 1024>>>(p, 1.0f);
    });
    printf("%-34s heads %5ld  CTAs %6ld        median %8.2f us  %.3f TB/s\n", name, nh, grid, us,
           2.0 * nh * D * D * 4 / (us * 1e-6) / 1e12);
    check(pool, nh, name);
}
static void copy_rate(float *pool, long nh)
{
    const size_t bytes = (size_t)nh * D * D * 4;
    const float us = median_us([&](int rep) {
        cudaMemcpyAsync(pool + (rep % 2) * 2 * nh * D * D, pool + ((rep % 2) * 2 + 1) * nh * D * D, bytes,
                        cudaMemcpyDeviceToDevice);
    });
    printf("%-34s heads %5ld                    median %8.2f us  %.3f TB/s\n", "cudaMemcpy D2D", nh, us,
           2.0 * bytes / (us * 1e-6) / 1e12);
}
__global__ void fill(float *p, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        p[i] = (float)((i % ((long)D * D * 2048 * 64)) % 1000);
}
int main()
{
    cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
    const int npools = 4;
    for (long nh : {2048L, 8192L}) { // B = 64, 256 of the Qwen layer (Hv = 32)
        float *pool;
        cudaMalloc(&pool, (size_t)npools * nh * D * D * 4);
        for (int q = 0; q < npools; q++) {
            fill<<<1024, 256>>>(pool + (long)q * nh * D * D, nh * D * D);
        }
        cudaDeviceSynchronize();
        for (int round = 0; round < 2; round++) {
            printf("-- round %d\n", round);
            copy_rate(pool, nh);
            for (int q = 0; q < npools; q++)
                fill<<<1024, 256>>>(pool + (long)q * nh * D * D, nh * D * D);
            run_reg<2, 4, 1, 0>("reg: pairs-like 2 rows J4 pf t0", pool, nh, npools);
            run_reg<2, 4, 1, 12>("reg: pairs-like, work 12", pool, nh, npools);
            run_reg<2, 2, 2, 0>("reg: 2 rows J2 pf all", pool, nh, npools);
            run_reg<1, 2, 2, 0>("reg: decode-like 1 row J2 pf all", pool, nh, npools);
            run_ring<2, 8, 0, 0>("ring: 8 warps, 8 st, st.global", pool, nh, npools, 1);
            run_ring<2, 12, 0, 0>("ring: 8 warps, 12 st, st.global", pool, nh, npools, 1);
            run_ring<4, 12, 0, 0>("ring: 16 warps, 12 st, st.global", pool, nh, npools, 1);
            run_ring<1, 6, 0, 0>("ring: 4 warps, 6 st, 2/SM, st.global", pool, nh, npools, 2);
            run_ring<2, 6, 0, 0>("ring: 8 warps, 6 st, 2/SM, st.global", pool, nh, npools, 2);
            run_ring<2, 8, 1, 0>("ring: 8 warps, 8 st, bulk store", pool, nh, npools, 1);
            run_ring<4, 12, 1, 0>("ring: 16 warps, 12 st, bulk store", pool, nh, npools, 1);
            run_ring<2, 6, 1, 0>("ring: 8 warps, 6 st, 2/SM, bulk store", pool, nh, npools, 2);
            run_ring<4, 12, 0, 12>("ring: 16w 12st st.global, work 12", pool, nh, npools, 1);
            run_ring<2, 6, 0, 12>("ring: 8w 6st 2/SM st.global, work 12", pool, nh, npools, 2);
            run_ring<4, 12, 1, 12>("ring: 16w 12st bulk, work 12", pool, nh, npools, 1);
        }
        cudaFree(pool);
    }
    cudaError_t e = cudaGetLastError();
    printf("%s\n", cudaGetErrorString(e));
    return 0;
}
