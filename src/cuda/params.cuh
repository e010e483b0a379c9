/*
 * params.cuh — what the CUDA kernels receive (by value, as a kernel parameter), the device-side
 * error words, and the launchers each .cu file provides. Internal to src/cuda.
 *
 * All strides count elements; all index math is 64-bit. Views follow core/plan.h: q, k [B,T,Hk,Dk];
 * v, out [B,T,Hv,Dv]; g, beta [B,T,Hv]; pool [slots,Hv,rows,cols]; dense capture [B,T,Hv,rows,cols];
 * slot capture [slots,Hv,rows,cols] (rows = Dv, cols = Dk for the vk layout; swapped for kv).
 */
#ifndef GDN_CUDA_PARAMS_CUH
#define GDN_CUDA_PARAMS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "core/plan.h"

/* Error record kept on the device: the first content error since the last synchronize. */
typedef struct gdn_cuda_error {
    int32_t code;  /* gdn_cuda_err_code; 0 = none */
    int32_t sub;   /* conflicts: 1 = also written, 2 = also read */
    int64_t index; /* element index in the array named by code */
    int64_t value; /* the entry found there */
    int64_t seq;   /* the sequence it belongs to */
    int64_t other; /* conflicts: the other sequence (-1: several); cu: the previous entry; stride: length */
} gdn_cuda_error;

enum gdn_cuda_err_code {
    GDN_CUDA_ERR_NONE = 0,
    GDN_CUDA_ERR_CU_FIRST = 1,      /* cu_seqlens[0] != 0 */
    GDN_CUDA_ERR_CU_DECREASING = 2, /* cu_seqlens[i] < cu_seqlens[i-1] */
    GDN_CUDA_ERR_CU_PAST = 3,       /* cu_seqlens[i] > seq_len */
    GDN_CUDA_ERR_CU_LAST = 4,       /* cu_seqlens[N] != seq_len */
    GDN_CUDA_ERR_STRIDE = 5,        /* capture.slots_stride shorter than a sequence */
    GDN_CUDA_ERR_READ_RANGE = 6,    /* state.read_slots[n] >= slots */
    GDN_CUDA_ERR_WRITE_RANGE = 7,   /* state.write_slots[n] >= slots */
    GDN_CUDA_ERR_CAP_RANGE = 8,     /* capture.slots[i] >= capture slots */
    GDN_CUDA_ERR_WRITE_CONFLICT = 9,
    GDN_CUDA_ERR_CAP_CONFLICT = 10,
    GDN_CUDA_ERR_NUM_TOKENS = 11,   /* batch.num_tokens[n] < 0 or > sequence n's length */
    GDN_CUDA_ERR_PREP_WAIT = 12     /* internal: the overlapped state pass gave up waiting for a prep item
                                       (chunked_split.cuh, sp_flag_wait_warp): index the chunk, seq the value
                                       head, value the flag wanted, other the flag found */
};

#define SP_WAIT_NS 4000000000ull /* the overlapped state pass's bound on a wait for a prep item: 4 s (an item
                                    takes microseconds); past it GDN_CUDA_ERR_PREP_WAIT */

/* Device words of a context: the per-call flag the compute kernel reads, and the sticky record. */
typedef struct gdn_cuda_words {
    int32_t call_error; /* written by every check kernel: nonzero = this call must write nothing */
    int32_t pad;
    gdn_cuda_error first; /* first error since the last synchronize */
} gdn_cuda_words;

/* Division by an invariant divisor d (>= 1) as a multiply-high and a shift, for dividends < 2^31. */
typedef struct gdn_fastdiv {
    unsigned d, m, s;
} gdn_fastdiv;
void gdn_cuda_fastdiv_init(gdn_fastdiv *f, unsigned d);

typedef struct gdn_cuda_params {
    /* problem */
    int Hk, Hv, Dk, Dv, ratio;
    int grouped, gate, l2norm, kv_layout;
    int dtype, out_dtype, gate_dtype;
    float scale;
    /* batch */
    int64_t B, T, N;
    const void *cu; /* NULL: dense */
    int cu_i64;
    const int32_t *num_tokens; /* NULL, or [N] (device): tokens run per sequence (checked by check.cu) */
    /* inputs */
    const void *q, *k, *v, *g, *beta;
    int64_t qs[4], ks[4], vs[4], gs[3], bs[3];
    const float *A_log, *dt_bias;
    /* output */
    void *out; /* NULL: none */
    int64_t os[4];
    /* state pool */
    float *pool; /* NULL: none */
    int64_t ps[4];
    int64_t num_slots;
    const int32_t *read_slots, *write_slots;
    /* capture */
    int cap_mode; /* gdn_capture_mode */
    float *cap;
    int64_t cs[5];
    int64_t cap_num_slots;
    const int32_t *cap_slots;
    int64_t cap_slots_stride;
    int same_pool; /* slot capture into the state pool itself */
    /* launch */
    int64_t items; /* N * Hv * tiles */
    int tiles;     /* Dv tiles per head */
    gdn_fastdiv fd_tiles, fd_hv, fd_ratio, fd_hk;
    int qk_vec;    /* q and k rows read as 8/16-byte vectors (unit inner stride, aligned) */
    int chunk;     /* 0: dense T <= 1 (decode kernel); else tokens staged per warp, up to `chunk` at a time, or the chunk kernel (block items) */
    int checked;   /* a check kernel ran first: wait for it (PDL) and obey words->call_error */
    int self_check; /* one sequence, slot arrays, nothing else to check: no check kernel; the fast kernels read the
                       slots after their wait and check their range themselves (every CTA reaches the same verdict;
                       the first CTA records it); any other kernel launches the check kernel first */
    int early_trigger; /* let the next kernel in the stream launch at once */
    int l2_keep;       /* fast path: its pre-wait L2 prefetch of the state evict-last (prefetch_l2), set where the
                          call's state is larger than L2 (backend.cu) */
    int fast_jlog;     /* fast path: log2 of the state tiles each CTA walks (fast.cuh) */
    int fast_tail;     /* fast_pairs_kernel: its last fast_tail (sequence, head) pairs at half the tiles per CTA (one
                          item per CTA); the backend passes the request (-1 automatic, 0 none, K), the launcher the
                          count (fast_pairs.cuh) */
    int fast_front;    /* and its first fast_front pairs likewise, dispatched first (the same request, then count) */
    int algo_chunked;  /* the chunked algorithm chosen (gdn_cuda_chunk_chosen): the chunked kernel where it applies */
    int chunk_tc;      /* the chunked kernel on tensor cores (problem.precision BF16, the CUDA default;
                          chunked_tc.cuh), else the f32 one (precision F32; chunked.cuh); 2: precision BF16 asked
                          for, which the register-sourced state pass runs with T and R^T in bf16 (layout 3) */
    float *ws;          /* the two-pass chunked kernels' workspace (chunked_split.cuh), or NULL */
    int64_t ws_floats;  /* its size: the launcher takes the sequences in groups that fit */
    int64_t n0, n1;     /* the two-pass kernels: the sequences [n0, n1) of the group launched */
    int split_wg;       /* their state pass on wgmma where it applies (sm_90a code): 1 chunked_wg.cuh's, 2
                           chunked_rs.cuh's; the launcher sets it to the one that runs (0: mma.sync), also the
                           prep's layout of T and P (sp_t_base; with 2, P in bf16: sp_store_p_pair; 3, chunked_rs.cuh's
                           with T in bf16 too, in P's layout: chunk_tc 2) */
    int wg_rt;          /* its state rows per CTA: 32, 64, or 0 (the launcher chooses by the grid) */
    int rs_stages;      /* chunked_rs.cuh's stages: 1 (two CTAs per SM), 2, or 0 (the launcher chooses) */
    int rs_cluster;     /* its one-stage form in clusters of a head's two row tiles where Dv allows (1; else 0) */
    int prep_vpc;       /* their prep pass's value heads per CTA: ratio or 1, set by the launcher from the
                           caller's 1 (per key head: ratio), 0 (per value head: 1) or -1 (by the grid) */
    unsigned *sp_flags; /* the prep and state passes overlapped (chunked_split.cuh, sp_item_flag): the words
                           [generation, finished state CTAs, one flag per prep item]; NULL: in stream order */
    int64_t sp_flag_words; /* their number (the backend's buffer; the launcher overlaps a call it covers) */
    int prep_overlap;      /* the caller's choice: 0 never, 1 where it pays (the default), 2 wherever it applies,
                              3 as 2 with the first item's flag never set (tests of sp_flag_wait_warp's bound),
                              4 as 1 in the other order: the state pass first, the per-item prep as its
                              dependent (chunked_split.cuh, launch_chunk_split_k; a measurement switch) */
    int prep_ctas;         /* the overlapped prep's persistent grid (0: a CTA on each SM the state pass leaves) */
    int64_t prep_gx;       /* the prep's item grid: chunks (a packed batch: chunk slots), */
    int prep_gy;           /*   key heads x value-head groups, and sequences (n1 - n0) */
    gdn_cuda_words *words;
    unsigned long long *stamps; /* slot stamps for the conflict checks: pool slots, then capture-pool slots */
} gdn_cuda_params;

/* What the conv kernel (conv1d.cu) receives. Views as core/conv_plan.h: x, y [B,T,C]; weight [C,W];
 * pool [slots,C,K]; dense capture [B,T,C,K]; slot capture [slots,C,K] (K = W - 1). */
typedef struct gdn_cuda_conv_params {
    int C, K, silu, dtype;
    int64_t B, T, N;
    const void *cu; /* NULL: dense */
    int cu_i64;
    const int32_t *num_tokens; /* NULL, or [N] (device): tokens run per sequence */
    const void *x;
    int64_t xs[3];
    const float *w;
    int64_t ws[2];
    const float *bias; /* NULL: none */
    void *y;           /* NULL: none (replay) */
    int64_t ys[3];
    float *pool; /* NULL: none */
    int64_t ps[3];
    int64_t num_slots;
    const int32_t *read_slots, *write_slots;
    int cap_mode;
    float *cap;
    int64_t cs[4];
    int64_t cap_num_slots;
    const int32_t *cap_slots;
    int64_t cap_slots_stride;
    int S;      /* token slices per sequence (threads per channel in a block) */
    int CB;     /* channels per block */
    int replay; /* no y, no capture: only the final state */
    int checked, early_trigger;
    gdn_cuda_words *words;
} gdn_cuda_conv_params;

/* The conv kernel: picks S and CB, the grid, and launches (GDN_CUDA_CONV_S caps S, for measurements). */
cudaError_t gdn_cuda_launch_conv1d(const gdn_cuda_conv_params *p, cudaStream_t stream, int pdl);

/* Launchers (return the launch's cudaError_t). pdl: launch as a programmatic dependent of the
 * previous work in the stream (Hopper); each kernel waits (griddepcontrol.wait) before it reads
 * anything earlier work may have written. */
cudaError_t gdn_cuda_launch_check(const gdn_cuda_params *p, cudaStream_t stream, int pdl);
/* rpt: rows per thread override (0 = automatic). fast: the lean small-batch path (fast.cuh) for the
 * calls that qualify: -1 or 1: whenever the call qualifies, 0 never; fast_lpr
 * (measurements): lanes per state row for D = 128 (8, 16 or 32; 0 = automatic: the launcher's rule), plus 200 for the
 * staged decode kernel (see pick_fast in recurrent.cu); fast_j: the fast path's tiles per CTA (0 = automatic);
 * fast_cv: 0 = the fast path never takes a compiled-in convention (fast_cv_of in fast.cuh), 1 = where the call has one. */
cudaError_t gdn_cuda_launch_recurrent(const gdn_cuda_params *p, cudaStream_t stream, int num_sms, int pdl,
                                      int rpt, int fast, int fast_lpr, int fast_j, int fast_cv);
/* The kernel name for a key dimension (static string). */
const char *gdn_cuda_recurrent_name(int k_dim);
/* Floats of workspace the two-pass chunked kernels (chunked_split.cuh) would use for the call, 0 where they
 * do not apply (fields read: algo_chunked, cap_mode, chunk_tc, Dk, Dv, cu, N, Hv, T). */
int64_t gdn_cuda_chunk_workspace_floats(const gdn_cuda_params *p);
/* Words the overlapped two passes (chunked_split.cuh) would use for the call on a device of num_sms SMs, 0
 * where they would run in stream order (fields read: those of gdn_cuda_chunk_workspace_floats, Hk, ratio). */
int64_t gdn_cuda_chunk_flag_words(const gdn_cuda_params *p, int num_sms);

/* The chunked kernel's name when a call with these properties takes it (chunked.cuh, chunked_tc.cuh),
 * else NULL. tc: problem.precision is not F32 (tensor cores). */
const char *gdn_cuda_chunked_name(int algo_chunked, int capture, int k_dim, int tc);

#endif
