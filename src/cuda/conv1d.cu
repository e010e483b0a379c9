/*
 * conv1d.cu — the CUDA causal convolution ("conv1d_f32__cuda"), gdn_conv1d_forward on a CUDA context.
 *
 * Math exactly as the CPU (docs/KERNELS.md §7): per sequence, channel c, token t, with K = W - 1,
 *     z = bias[c] + sum_j w[c][j] * xin[t - K + j]      (f32, bias first, then taps 0..W-1, FMA)
 *     y = silu(z) = z / (1 + expf(-z))  or z            (rounded to the dtype at the store)
 * and the conv state = the last K inputs, oldest first (the read slot's state before the first token).
 *
 * Work decomposition: a block is (channel group of CB channels, sequence); its CB * S threads are
 * S token slices of CB consecutive channels (a warp = 32 consecutive channels of one slice, so every
 * load and store of x and y is coalesced along channels). The slice s of a sequence of len tokens is
 * tokens [t0 + s*L, t0 + (s+1)*L), L = ceil(len / S); its thread keeps the window of the K inputs
 * before its current token in registers (at the start: x before the slice, or the read slot's state
 * for inputs before t0, zeros without one) and walks its tokens, eight loads ahead. S = 1 for decode
 * and short calls, up to 32 for long prefills (the host picks it from the average sequence length).
 *
 * Ordering: every thread reads all it needs from before its slice (the window: x of the previous
 * slice, the state) before a block barrier, and writes (y, captures, the final state) only after it;
 * all the threads touching a (sequence, channel) are in one block. So y may be x itself (in place),
 * captures may go to the sequence's own read slot, and the final state (written by the thread of the
 * last slice, from its window) may go to the read slot. Sequences of one call touch disjoint tokens,
 * and the slot rules (checked) keep their slots apart.
 *
 * Replay (no y, no capture): only the thread of the last slice works: its window is the last K inputs.
 * An empty sequence copies its read state (or zeros) to its write slot (nothing when equal).
 *
 * Index arrays: check.cu's kernel runs first when the call has any (as for gdn_forward); this kernel
 * is its programmatic dependent: it reads its window (every index range-guarded), waits for the check
 * and writes nothing when it failed. Without index arrays it waits for earlier work before any load.
 */
#include <cuda_fp16.h>
#include <stdlib.h>

#include "cuda/params.cuh"

#define CONV_MAX_THREADS 1024
#define CONV_UNROLL 8

namespace {

__device__ __forceinline__ void conv_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void conv_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

template <int DT>
__device__ __forceinline__ float ld_x(const void *base, int64_t i)
{
    if constexpr (DT == GDN_DTYPE_F32)
        return ((const float *)base)[i];
    else if constexpr (DT == GDN_DTYPE_BF16)
        return __uint_as_float((unsigned)((const unsigned short *)base)[i] << 16);
    else
        return __half2float(__ushort_as_half(((const unsigned short *)base)[i]));
}

/* Round to the dtype, nearest even (bf16 exactly as core/dtype.h). */
template <int DT>
__device__ __forceinline__ void st_y(void *base, int64_t i, float v)
{
    if constexpr (DT == GDN_DTYPE_F32) {
        ((float *)base)[i] = v;
    } else if constexpr (DT == GDN_DTYPE_BF16) {
        const unsigned u = __float_as_uint(v);
        unsigned short r;
        if ((u & 0x7fffffffu) > 0x7f800000u)
            r = (unsigned short)((u >> 16) | 0x0040u);
        else
            r = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        ((unsigned short *)base)[i] = r;
    } else {
        ((unsigned short *)base)[i] = __half_as_ushort(__float2half_rn(v));
    }
}

__device__ __forceinline__ int64_t conv_cu(const gdn_cuda_conv_params &P, int64_t i)
{
    return P.cu_i64 ? ((const int64_t *)P.cu)[i] : (int64_t)((const int32_t *)P.cu)[i];
}

template <int K, int DT>
__global__ void __launch_bounds__(CONV_MAX_THREADS) conv1d_kernel(const __grid_constant__ gdn_cuda_conv_params P)
{
    constexpr int W = K + 1;
    if (P.early_trigger)
        conv_trigger(); /* the next kernel may launch: it waits for our completion before it reads */
    bool waited = !P.checked;
    if (!P.checked)
        conv_wait(); /* no check kernel in front: earlier work must be visible before any load */

    const int S = P.S, CB = P.CB;
    const int s = (int)threadIdx.x / CB, cl = (int)threadIdx.x - s * CB;
    const int64_t c = (int64_t)blockIdx.x * CB + cl;
    const bool active = c < P.C;

    float w[W], bias = 0.0f;
#pragma unroll
    for (int j = 0; j < W; j++)
        w[j] = active ? P.w[c * P.ws[0] + j * P.ws[1]] : 0.0f;
    if (active && P.bias)
        bias = P.bias[c];

    for (int64_t n = blockIdx.y; n < P.N; n += gridDim.y) {
        /* the sequence's tokens (a bad cu_seqlens entry: none; the check reports it) */
        int64_t b, t0, t1;
        if (P.cu) {
            b = 0;
            t0 = conv_cu(P, n);
            t1 = conv_cu(P, n + 1);
            if (!(t0 >= 0 && t0 <= t1 && t1 <= P.T))
                t0 = t1 = 0;
        } else {
            b = n;
            t0 = 0;
            t1 = P.T;
        }
        if (P.num_tokens) { /* the first count tokens (a bad count: none; the check reports it) */
            const int64_t cnt = P.num_tokens[n];
            t1 = cnt >= 0 && cnt <= t1 - t0 ? t0 + cnt : t0;
        }
        /* the read slot (out of range: not read; the check reports it) */
        int64_t rs = -1;
        if (P.pool) {
            rs = P.read_slots ? (int64_t)P.read_slots[n] : n;
            if (rs >= P.num_slots || rs < 0)
                rs = -1;
        }
        const int64_t len = t1 - t0;
        const int64_t L = len == 0 ? 0 : (len + S - 1) / S;
        const int last = len == 0 ? 0 : (int)((len - 1) / L);
        int64_t ts, te;
        if (P.replay) {
            ts = te = t1;
        } else {
            ts = t0 + (int64_t)s * L;
            ts = ts < t1 ? ts : t1;
            te = ts + L < t1 ? ts + L : t1;
        }
        const bool work = active && (s == last || (!P.replay && ts < te));

        /* the window: the K inputs before ts, oldest first */
        float win[K];
#pragma unroll
        for (int i = 0; i < K; i++) {
            const int64_t pos = ts - K + i;
            float v = 0.0f;
            if (work) {
                if (pos >= t0)
                    v = ld_x<DT>(P.x, b * P.xs[0] + pos * P.xs[1] + c * P.xs[2]);
                else if (rs >= 0)
                    v = P.pool[rs * P.ps[0] + c * P.ps[1] + (pos - t0 + K) * P.ps[2]];
            }
            win[i] = v;
        }

        if (!waited) {
            conv_wait();
            waited = true;
        }
        if (P.checked && __ldcg(&P.words->call_error))
            return; /* the same answer for every thread: this call writes nothing */
        if (S > 1)
            __syncthreads(); /* every window read before anything of the sequence is written */
        if (!work)
            continue;

        for (int64_t t = ts; t < te; t += CONV_UNROLL) {
            float xv[CONV_UNROLL];
#pragma unroll
            for (int u = 0; u < CONV_UNROLL; u++)
                xv[u] = t + u < te ? ld_x<DT>(P.x, b * P.xs[0] + (t + u) * P.xs[1] + c * P.xs[2]) : 0.0f;
#pragma unroll
            for (int u = 0; u < CONV_UNROLL; u++) {
                if (t + u >= te)
                    break;
                const int64_t tt = t + u;
                if (P.y) {
                    float z = bias;
#pragma unroll
                    for (int j = 0; j < K; j++)
                        z = fmaf(w[j], win[j], z);
                    z = fmaf(w[K], xv[u], z);
                    if (P.silu)
                        z = z / (1.0f + expf(-z));
                    st_y<DT>(P.y, b * P.ys[0] + tt * P.ys[1] + c * P.ys[2], z);
                }
#pragma unroll
                for (int j = 0; j + 1 < K; j++)
                    win[j] = win[j + 1];
                win[K - 1] = xv[u];
                if (P.cap_mode == GDN_CAPTURE_DENSE) {
                    float *dst = P.cap + b * P.cs[0] + tt * P.cs[1] + c * P.cs[2];
#pragma unroll
                    for (int j = 0; j < K; j++)
                        dst[j * P.cs[3]] = win[j];
                } else if (P.cap_mode == GDN_CAPTURE_SLOTS) {
                    const int64_t idx = P.cap_slots_stride > 0 ? n * P.cap_slots_stride + (tt - t0) : b * P.T + tt;
                    const int64_t slot = P.cap_slots[idx];
                    if (slot >= 0 && slot < P.cap_num_slots) {
                        float *dst = P.cap + slot * P.cs[0] + c * P.cs[1];
#pragma unroll
                        for (int j = 0; j < K; j++)
                            dst[j * P.cs[2]] = win[j];
                    }
                }
            }
        }
        if (s == last && P.pool) {
            const int64_t ws = P.write_slots ? (int64_t)P.write_slots[n] : (P.read_slots ? (int64_t)P.read_slots[n] : n);
            if (ws >= 0 && ws < P.num_slots && !(len == 0 && ws == rs)) {
                float *dst = P.pool + ws * P.ps[0] + c * P.ps[1];
#pragma unroll
                for (int j = 0; j < K; j++)
                    dst[j * P.ps[2]] = win[j];
            }
        }
    }
}

typedef void (*conv_fn)(gdn_cuda_conv_params);

template <int DT>
conv_fn pick_k(int K)
{
    switch (K) {
    case 1: return conv1d_kernel<1, DT>;
    case 2: return conv1d_kernel<2, DT>;
    case 3: return conv1d_kernel<3, DT>;
    case 4: return conv1d_kernel<4, DT>;
    case 5: return conv1d_kernel<5, DT>;
    case 6: return conv1d_kernel<6, DT>;
    default: return conv1d_kernel<7, DT>;
    }
}

} // namespace

cudaError_t gdn_cuda_launch_conv1d(const gdn_cuda_conv_params *pin, cudaStream_t stream, int pdl)
{
    gdn_cuda_conv_params p = *pin;
    p.replay = !p.y && p.cap_mode == GDN_CAPTURE_NONE;
    /* slices: about 64+ tokens per thread, at most 32 slices (long prefills: 128 tokens per thread at
       T = 4096); replay needs only the last K inputs */
    const int64_t avg = p.cu ? (p.N > 0 ? (p.T + p.N - 1) / p.N : 0) : p.T;
    static const int max_s = [] { /* GDN_CUDA_CONV_S (measurements): the most slices, 1..32 (default 32) */
        const char *e = getenv("GDN_CUDA_CONV_S");
        const int v = e ? atoi(e) : 32;
        return v >= 1 && v <= 32 ? v : 32;
    }();
    int S = 1;
    while (!p.replay && 2 * S <= max_s && avg > 64 * (int64_t)S)
        S *= 2;
    int CB = 256 / S < 32 ? 32 : 256 / S;
    const int c32 = (p.C + 31) / 32 * 32;
    if (CB > c32)
        CB = c32;
    p.S = S;
    p.CB = CB;
    p.early_trigger = pdl;

    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.blockDim = dim3((unsigned)(CB * S), 1, 1);
    cfg.gridDim = dim3((unsigned)((p.C + CB - 1) / CB), (unsigned)(p.N < 65535 ? p.N : 65535), 1);
    cfg.stream = stream;
    if (pdl) {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    const int K = p.K;
    const conv_fn fn = p.dtype == GDN_DTYPE_F32    ? pick_k<GDN_DTYPE_F32>(K)
                       : p.dtype == GDN_DTYPE_BF16 ? pick_k<GDN_DTYPE_BF16>(K)
                                                   : pick_k<GDN_DTYPE_F16>(K);
    return cudaLaunchKernelEx(&cfg, fn, p);
}
