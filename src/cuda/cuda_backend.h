/*
 * cuda_backend.h — the CUDA backend as the C core sees it (C linkage; implemented in the .cu files of src/cuda).
 * No CUDA header is needed to include it: streams and device pointers travel as void *.
 *
 * Contract with api.c (docs/DESIGN.md, "CUDA backend"):
 *   - every tensor pointer and every index array (cu_seqlens, read/write slots, capture slots) is a
 *     device pointer; the host validates everything that needs no contents (gdn_plan_make_device);
 *   - the contents of the index arrays are checked on the device, in stream order, by a one-block
 *     kernel that runs before the compute kernel whenever the call has index arrays; an error there
 *     makes the compute kernel write nothing, and is reported by gdn_cuda_synchronize;
 *   - gdn_cuda_forward only enqueues work on the context's stream (asynchronous; graph-capturable
 *     once the slot-check memory for the largest pool exists).
 */
#ifndef GDN_CUDA_BACKEND_H
#define GDN_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "core/conv_plan.h"
#include "core/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gdn_cuda_context gdn_cuda_context;

/* Create the backend state for device `device` and stream `stream` (NULL = the default stream).
 * BACKEND_UNAVAILABLE when there is no usable CUDA device (message in err). */
gdn_status gdn_cuda_context_create(int device, void *stream, gdn_cuda_context **out, char *err, size_t err_len);

void gdn_cuda_context_destroy(gdn_cuda_context *c);

/* Enqueue a validated plan (device pointers). Returns SUCCESS once the work is enqueued; errors in
 * the contents of index arrays surface in gdn_cuda_synchronize. */
gdn_status gdn_cuda_forward(gdn_cuda_context *c, const gdn_plan *plan, char *err, size_t err_len);

/* The convolution (gdn_conv1d_forward) on a plan made by gdn_conv_plan_make_device: the same
 * index check as gdn_cuda_forward, then the conv kernel (conv1d.cu); enqueued only. */
gdn_status gdn_cuda_conv1d_forward(gdn_cuda_context *c, const gdn_conv_plan *plan, char *err, size_t err_len);

/* Tests: calls launched on the two-pass chunked kernels (chunked_split.cuh) in this process, the groups of
 * sequences they were launched in (more groups than calls: some call's workspace held only part of it), the
 * calls whose state pass ran on wgmma (chunked_wg.cuh or chunked_rs.cuh), those of them on chunked_wg.cuh's
 * with 64 state rows per CTA, and those on chunked_rs.cuh's (register-sourced operands). */
void gdn_cuda_split_stats(long long *calls, long long *groups, long long *wg_calls, long long *wg64_calls,
                          long long *rs_calls);
/* Tests: of those register-sourced calls, the ones whose state pass ran in clusters of two CTAs
 * (GDN_CUDA_RS_CLUSTER=1, one stage, an even number of 64-row tiles). */
long long gdn_cuda_split_cluster_calls(void);
/* Tests: the two-pass calls whose passes overlapped (the prep persistent, the state pass waiting on its
 * items' flags; chunked_split.cuh, sp_item_flag). */
long long gdn_cuda_split_overlap_calls(void);
/* Tests: of those, the ones in the state-first order (GDN_CUDA_PREP_OVERLAP=4: the state pass launched first,
 * the per-item prep as its dependent). */
long long gdn_cuda_split_state_first_calls(void);

/* Tests: the calls launched on fast_pairs_kernel (fast_pairs.cuh) with some of their last heads at half the tiles
 * per CTA (params.cuh, fast_tail: the launcher's drain rule, or GDN_CUDA_FAST_TAIL) in this process. */
long long gdn_cuda_fast_tail_calls(void);
/* Tests: those with some of their first heads so (fast_front: the launcher's rule at T <= 4, or
 * GDN_CUDA_FAST_FRONT). */
long long gdn_cuda_fast_front_calls(void);
/* Tests: calls of the pairs kernel on its persistent grid (items blockIdx.x + k gridDim.x: the launcher's rule at
 * T = 6, or GDN_CUDA_FAST_LPR=3), and on its grid of contiguous tile ranges (the rule from T = 7 at large batch, or
 * GDN_CUDA_FAST_LPR=4). */
long long gdn_cuda_fast_persistent_calls(void);
long long gdn_cuda_fast_range_calls(void);

/* gdn_conv_plan_make for device index arrays: their contents are not read (checked on the device),
 * everything else exactly as gdn_conv_plan_make. Defined in core/conv_validate.c (no CUDA needed). */
gdn_status gdn_conv_plan_make_device(gdn_conv_plan *plan, const gdn_conv_problem *problem, const gdn_batch *batch,
                                     const gdn_conv_tensors *tensors, char *err, size_t err_len);

/* Wait for the stream; report the first error found on the device since the last synchronize
 * (INVALID_ARGUMENT, message naming the array and index) or a CUDA failure (INTERNAL). */
gdn_status gdn_cuda_synchronize(gdn_cuda_context *c, char *err, size_t err_len);

/* AUTO's crossover on CUDA: the tensor-core chunked kernel from min_tokens tokens per sequence (the call's T,
 * or for a packed batch its total over the number of sequences) when the products may run on tensor cores
 * (problem.precision not F32); below, and with F32, the token loop. min_tokens: gdn_cuda_chunk_min_tokens,
 * GDN_CUDA_CHUNK_RS_MIN_TOKENS where chunk_split_bf16__cuda_wgmma_rs runs (H200, session 11: ahead of the
 * token loop at T = 16 from B=1 to B=64, 15.7 against 18.9 us at B=1), GDN_CUDA_CHUNK_WIDE_MIN_TOKENS for
 * 128 < Dk <= 256 (chunk_tf32__cuda_mma at DKP = 256; H200, session 18, Hk=8 Hv=16 Dk=Dv=256 bf16: ahead of the
 * token loop at T = 32 from B=1 to B=64, 28.1 against 51.6 us at B=1, behind at T = 16 from B=8), else
 * GDN_CUDA_CHUNK_MIN_TOKENS (docs/PERF.md). */
#define GDN_CUDA_CHUNK_MIN_TOKENS 64
#define GDN_CUDA_CHUNK_RS_MIN_TOKENS 16
#define GDN_CUDA_CHUNK_WIDE_MIN_TOKENS 32
static inline int gdn_cuda_chunk_chosen(gdn_algo algo, int tc, int64_t tokens_per_seq, int min_tokens)
{
    return algo == GDN_ALGO_CHUNKED || (algo == GDN_ALGO_AUTO && tc && tokens_per_seq >= min_tokens);
}

/* The problem-level conditions of the two-pass chunked kernels (chunked_split.cuh; the call's pointers and
 * strides decide the rest): 16-bit activations, Dk <= 128, Dk and Dv multiples of 8. */
static inline int gdn_cuda_split_shape_ok(int dtype, int64_t k_dim, int64_t v_dim)
{
    return (dtype == GDN_DTYPE_BF16 || dtype == GDN_DTYPE_F16) && k_dim <= 128 && k_dim % 8 == 0 && v_dim % 8 == 0;
}

/* Those of the state passes on wgmma (chunked_wg.cuh, chunked_rs.cuh) besides: bf16 activations, 32 < Dk <= 128. */
static inline int gdn_cuda_split_wg_shape_ok(int dtype, int64_t k_dim, int64_t v_dim)
{
    return gdn_cuda_split_shape_ok(dtype, k_dim, v_dim) && dtype == GDN_DTYPE_BF16 && k_dim > 32 && k_dim <= 128;
}

/* Name of the kernel a problem with this key dimension runs, e.g. "recurrent_f32__cuda_k128"
 * (chunked, when chosen (gdn_cuda_chunk_chosen), nothing is captured and k_dim <= 256:
 * "chunk_tf32__cuda_mma" with tc (problem.precision not F32), else "chunk_f32__cuda"; with tc, on a context
 * that runs the two passes (GDN_CUDA_CHUNK_SPLIT not 0), for 16-bit activations (dtype), k_dim <= 128 and
 * k_dim, v_dim multiples of 8: "chunk_split_tf32__cuda_mma", the kernels a dense or packed call with 16-byte aligned q, k, v rows
 * takes (chunked_split.cuh; other calls of the problem take chunk_tf32__cuda_mma), or, on a compute
 * capability 9.x device with GDN_CUDA_CHUNK_SPLIT not 1, for bf16 activations and 32 < k_dim <= 128,
 * "chunk_split_bf16__cuda_wgmma_rs" (the state pass on wgmma with register-sourced operands, chunked_rs.cuh),
 * or with GDN_CUDA_CHUNK_SPLIT=2 "chunk_split_bf16__cuda_wgmma" (from shared memory, chunked_wg.cuh)). */
const char *gdn_cuda_kernel_name(int k_dim);

/* AUTO's crossover (gdn_cuda_chunk_chosen) for a problem on context c: GDN_CUDA_CHUNK_RS_MIN_TOKENS where its
 * dense calls take chunk_split_bf16__cuda_wgmma_rs (bf16 activations, 32 < k_dim <= 128, dimensions multiples
 * of 8, a compute capability 9.x device, GDN_CUDA_CHUNK_SPLIT unset or 3), GDN_CUDA_CHUNK_WIDE_MIN_TOKENS for
 * k_dim > 128, else GDN_CUDA_CHUNK_MIN_TOKENS. */
int gdn_cuda_chunk_min_tokens(const gdn_cuda_context *c, int dtype, int64_t k_dim, int64_t v_dim);
const char *gdn_cuda_kernel_for(const gdn_cuda_context *c, int chunked, int capture, int k_dim, int v_dim, int dtype,
                                int tc);

/* --- helpers for the tests, the tool and the timing program (no CUDA headers needed) -------- */

/* Number of CUDA devices (0 when there is no driver or device); name of device 0 into buf. */
int gdn_cuda_device_count(char *name, size_t name_len);

void *gdn_cuda_malloc(size_t bytes);                             /* device memory; NULL on failure */
void gdn_cuda_free(void *p);
int gdn_cuda_memcpy(void *dst, const void *src, size_t bytes);   /* any direction, synchronous; 0 = ok */
int gdn_cuda_memset(void *dst, int byte, size_t bytes);          /* synchronous; 0 = ok */
void *gdn_cuda_stream_create(void);                              /* a non-blocking stream; NULL on failure */
void gdn_cuda_stream_destroy(void *stream);

/* The CUDA state of a context (NULL for a CPU context); defined in core/api.c. */
gdn_cuda_context *gdn_context_cuda(struct gdn_context *ctx);

/* The stream of the CUDA state (as void *). */
void *gdn_cuda_context_stream(const gdn_cuda_context *c);

/* Time gdn_forward: `n_calls` argument sets tensors[0..n_calls) (e.g. the same call on different
 * state pools, so that the state comes from HBM) are captured into one CUDA graph; after `warmup` replays, `reps`
 * replays are timed with CUDA events; *median_us and *min_us receive the median and minimum time
 * per call (replay time / n_calls). Returns SUCCESS, or the status of the first failing call
 * (message in err). With graph = 0, plain launches are timed instead (events around n_calls). */
gdn_status gdn_cuda_time_forward(struct gdn_context *ctx, const gdn_problem *problem, const gdn_batch *batch,
                                 const gdn_tensors *tensors, int n_calls, int warmup, int reps, int graph,
                                 double *median_us, double *min_us, char *err, size_t err_len);

/* The same for gdn_conv1d_forward. */
gdn_status gdn_cuda_time_conv1d(struct gdn_context *ctx, const gdn_conv_problem *problem, const gdn_batch *batch,
                                const gdn_conv_tensors *tensors, int n_calls, int warmup, int reps, int graph,
                                double *median_us, double *min_us, char *err, size_t err_len);

/* Device-to-device copy rate (bytes read + written per second) over `bytes`, median of reps; buffers under 1 GiB
 * are copied min(16, 1 GiB / bytes) times back to back per timing (ping-pong between two buffers). */
double gdn_cuda_copy_bandwidth(size_t bytes, int reps);

/* The launch floor: microseconds per call of a CUDA graph of n_calls kernels, each waiting for the
 * previous one as gdn's kernels do (programmatic dependent launches when pdl), median of reps replays;
 * mode 0: empty kernels of 256 blocks of 128 threads; 1..3: 512 blocks whose threads load 32 bytes of
 * one 2 MiB buffer after the wait and store them back (a decode call's memory round trip at B=1), 2 and
 * 3 with each block's 4 KiB prefetched into L2 before the wait, 3 with four dependent shuffle rounds
 * between load and store, 4 prefetched and through one 4 KiB bulk copy each way per block. 0 on failure. */
double gdn_cuda_launch_floor_us(int n_calls, int reps, int pdl, int mode);

#ifdef __cplusplus
}
#endif

#endif
