/*
 * gdn.h — the one public header of gdn, a library that computes the Gated DeltaNet
 * recurrence (the linear-attention layer of Qwen3-Next, Qwen3.5 and Qwen3.6).
 *
 * What is computed, per sequence, per value head h (key head hk chosen by the head map),
 * per token t, with the state S of shape [Dv][Dk] kept in float32:
 *
 *     decay = exp(g) | g | exp(-g)        (gate convention: log | linear | neglog)
 *     S     = decay * S
 *     delta = beta * (v - S k)            [Dv]
 *     S     = S + delta k^T
 *     y     = scale * (S q)               [Dv]
 *
 * One call (gdn_forward) covers decode (T = 1), prefill (T tokens) and speculative-decoding
 * verify (T draft tokens, optionally capturing the state after every token).
 *
 * Conventions: every function returns a gdn_status (or is documented not to fail); the library
 * never aborts and never prints. gdn_forward allocates nothing, except the first time a call names
 * a state pool with more slots than any earlier call on its context (8 bytes per slot, kept for the
 * slot-conflict checks). On any non-success status no
 * output, state or capture buffer has been written: all arguments are validated before the first
 * write. gdn_last_error() names the argument at fault.
 *
 * Thread safety: a context may be used by one thread at a time; distinct contexts are independent.
 */
#ifndef GDN_GDN_H
#define GDN_GDN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(GDN_SHARED)
#  ifdef GDN_BUILDING
#    define GDN_API __declspec(dllexport)
#  else
#    define GDN_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define GDN_API __attribute__((visibility("default")))
#else
#  define GDN_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------------------------- */

/** Major version: changes when the ABI or a stable number changes incompatibly. */
#define GDN_VERSION_MAJOR 0
/** Minor version: new features, compatible. */
#define GDN_VERSION_MINOR 1
/** Patch version: fixes only. */
#define GDN_VERSION_PATCH 0
/** The version as one integer, MAJOR*10000 + MINOR*100 + PATCH. */
#define GDN_VERSION (GDN_VERSION_MAJOR * 10000 + GDN_VERSION_MINOR * 100 + GDN_VERSION_PATCH)

/** The version of the library linked at run time, encoded as GDN_VERSION. Never fails. */
GDN_API int gdn_version(void);

/** The version of the library linked at run time as "MAJOR.MINOR.PATCH". Never fails; static string. */
GDN_API const char *gdn_version_string(void);

/* ---------------------------------------------------------------------------------------------
 * Status
 * ------------------------------------------------------------------------------------------- */

/** Result of every fallible call. The numbers are stable: they never change once released. */
typedef enum gdn_status {
    GDN_STATUS_SUCCESS = 0,             /**< Done; every output was written. */
    GDN_STATUS_INVALID_ARGUMENT = 1,    /**< An argument is wrong (null, out of range, inconsistent). */
    GDN_STATUS_UNSUPPORTED = 2,         /**< Valid, but this build or backend does not implement it. */
    GDN_STATUS_OUT_OF_MEMORY = 3,       /**< An allocation failed (context creation, or the slot-check
                                             stamps gdn_forward keeps for the largest pool seen). */
    GDN_STATUS_BACKEND_UNAVAILABLE = 4, /**< The requested backend or ISA is absent on this machine. */
    GDN_STATUS_INTERNAL = 5             /**< A bug in gdn: please report it with gdn_last_error(). */
} gdn_status;

/** A short constant description of a status ("invalid argument", ...). Unknown values give
 *  "unknown status". Never fails; never NULL. */
GDN_API const char *gdn_status_string(gdn_status status);

/* ---------------------------------------------------------------------------------------------
 * Enumerations
 * ------------------------------------------------------------------------------------------- */

/** Where the work runs. */
typedef enum gdn_backend {
    GDN_BACKEND_CPU = 0, /**< x86-64 (or portable C) threads. */
    GDN_BACKEND_CUDA = 1 /**< NVIDIA GPU (compute capability >= 8.0; built when nvcc is found). Every
                              pointer a call passes is device memory, the index arrays included;
                              gdn_forward is asynchronous on the context's stream (see
                              gdn_context_synchronize). */
} gdn_backend;

/** CPU instruction set of the kernels. AUTO picks the best one the CPU and OS support; the
 *  environment variable GDN_ISA=scalar|avx2|avx512 overrides AUTO (not an explicit choice). */
typedef enum gdn_isa {
    GDN_ISA_AUTO = 0,   /**< Best available (or GDN_ISA from the environment). */
    GDN_ISA_SCALAR = 1, /**< Portable C. Always available. */
    GDN_ISA_AVX2 = 2,   /**< AVX2 + FMA + F16C. */
    GDN_ISA_AVX512 = 3  /**< AVX-512 F/BW/VL/DQ. */
} gdn_isa;

/** Which key head a value head reads (requires num_v_heads % num_k_heads == 0, r = Hv/Hk). */
typedef enum gdn_head_map {
    GDN_HEADS_GROUPED = 0, /**< hk = h / r  (HF transformers, fla, vLLM, MLX-LM). */
    GDN_HEADS_TILED = 1    /**< hk = h % Hk (llama.cpp GGUF, mlx-native). */
} gdn_head_map;

/** How the per-token gate tensor g turns into the multiplicative decay. */
typedef enum gdn_gate {
    GDN_GATE_LOG = 0,    /**< decay = exp(g), g <= 0 (HF, fla, vLLM, ggml). */
    GDN_GATE_LINEAR = 1, /**< decay = g, in [0,1] (MLX-LM, metaltile, FlashInfer prefill). */
    GDN_GATE_NEGLOG = 2, /**< decay = exp(-g), g >= 0 (mlx-native). */
    GDN_GATE_RAW = 3     /**< Fused gate: the g tensor holds a, the beta tensor holds b;
                              g = -exp(A_log[h]) * softplus(a + dt_bias[h]) (softplus threshold 20),
                              decay = exp(g), beta = sigmoid(b). Needs A_log and dt_bias. */
} gdn_gate;

/** Memory order of one head's state. */
typedef enum gdn_state_layout {
    GDN_STATE_VK = 0, /**< [Dv][Dk]: S[v][k] (ggml, MLX, vLLM, FlashInfer, fla state_v_first). */
    GDN_STATE_KV = 1  /**< [Dk][Dv]: S^T (HF transformers, fla default). */
} gdn_state_layout;

/** Element types. */
typedef enum gdn_dtype {
    GDN_DTYPE_F32 = 0,  /**< IEEE binary32. */
    GDN_DTYPE_BF16 = 1, /**< bfloat16 (upper half of a binary32). */
    GDN_DTYPE_F16 = 2   /**< IEEE binary16. */
} gdn_dtype;

/** Element type of index arrays (cu_seqlens). */
typedef enum gdn_index_type {
    GDN_INDEX_I32 = 0, /**< int32_t */
    GDN_INDEX_I64 = 1  /**< int64_t */
} gdn_index_type;

/** Algorithm for multi-token work. Both compute the same function (to rounding). */
typedef enum gdn_algo {
    GDN_ALGO_AUTO = 0,      /**< Chosen by size, per sequence, for calls that capture nothing: on the CPU
                                 chunked from 24 tokens on (32 when Dk > 128); on CUDA the tensor-core
                                 chunked kernels (precision not F32: the F32 chunked kernel is no faster
                                 than the token loop there) from 64 tokens on (16 where
                                 "chunk_split_bf16__cuda_wgmma_rs" runs, 32 when Dk > 128); else the token
                                 loop. */
    GDN_ALGO_RECURRENT = 1, /**< Token loop, state kept on chip. */
    GDN_ALGO_CHUNKED = 2    /**< Chunkwise-parallel (WY/UT). Calls that capture states run the token loop. */
} gdn_algo;

/** Operand precision of the chunked algorithm's matrix products (the state is always kept and
 *  accumulated in f32; the token loop always computes in f32). */
typedef enum gdn_precision {
    GDN_PRECISION_DEFAULT = 0, /**< The backend's default: GDN_PRECISION_F32 on the CPU; on CUDA the
                                    tensor-core products of GDN_PRECISION_BF16, except that
                                    "chunk_split_bf16__cuda_wgmma_rs" keeps the solve's product over the
                                    chunk in tf32 (see GDN_PRECISION_BF16). */
    GDN_PRECISION_F32 = 1,     /**< f32 operands and accumulation: within ~1e-6 relative RMS of the float64
                                    reference on realistic inputs. */
    GDN_PRECISION_BF16 = 2     /**< bf16 operands (rounded to nearest even), f32 accumulation, for the chunk
                                    products; everything else f32. Faster, relative RMS error <= 1e-2.
                                    CPU: uses avx512_bf16 (vdpbf16ps) where the CPU has it; elsewhere the
                                    products run in f32 (gdn_context_kernel_for tells which). CUDA: tensor
                                    cores. On a compute capability 9.x device, calls of bf16 activations
                                    with 32 < Dk <= 128 ("chunk_split_bf16__cuda_wgmma_rs"; AUTO's choice
                                    from 16 tokens per sequence) take bf16 operands for every product (the
                                    state rounded to bf16 for those over Dk): ~3.6e-3 relative RMS of the
                                    output at T = 4096 (3.9e-3 with slow decay), ~3e-3 of the final state,
                                    1-2% faster than GDN_PRECISION_DEFAULT, which keeps the solve's product
                                    in tf32 (~3.1e-3 output, 3.4e-3 slow decay, ~2e-3 state); other calls
                                    ("chunk_split_tf32__cuda_mma", "chunk_tf32__cuda_mma"; AUTO's choice
                                    from 64 tokens, 32 when Dk > 128) take tf32 operands throughout
                                    (10-bit mantissa; ~1.7e-3 output, ~4e-4 state). */
} gdn_precision;

/** Whether, and where, the state after every token is written. */
typedef enum gdn_capture_mode {
    GDN_CAPTURE_NONE = 0,  /**< No capture. */
    GDN_CAPTURE_DENSE = 1, /**< states[b][t][h] = state after token t (dense [B,T,...] or packed [1,T_total,...]). */
    GDN_CAPTURE_SLOTS = 2  /**< pool[slot(n,t)][h] = state after token t of sequence n. */
} gdn_capture_mode;

/* ---------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------- */

/** An opaque handle: backend, threads, kernel table, scratch memory and the last error message. */
typedef struct gdn_context gdn_context;

/** How to create a context. Zero-initialise it ({0}) for the defaults: CPU, all cores, best ISA. */
typedef struct gdn_context_desc {
    gdn_backend backend; /**< GDN_BACKEND_CPU (default). */
    int num_threads;     /**< CPU threads; 0 = one per available core. Must be >= 0. */
    gdn_isa isa;         /**< CPU kernels; GDN_ISA_AUTO (default) or a forced ISA. */
    int device;          /**< CUDA device ordinal (CUDA backend only); must be >= 0. */
    void *stream;        /**< cudaStream_t to run on (CUDA backend only); NULL = the default stream.
                              Capture gdn_forward calls into CUDA graphs on this stream. */
} gdn_context_desc;

/**
 * Create a context.
 * @param desc  NULL for the defaults, else the settings above.
 * @param out   receives the context; set to NULL on failure.
 * @return GDN_STATUS_INVALID_ARGUMENT (out NULL, num_threads < 0, unknown enum),
 *         GDN_STATUS_BACKEND_UNAVAILABLE (CUDA not built in or no device; forced ISA the CPU lacks),
 *         GDN_STATUS_OUT_OF_MEMORY. The message of a failed creation is read with gdn_last_error(NULL)
 *         on the same thread.
 */
GDN_API gdn_status gdn_context_create(const gdn_context_desc *desc, gdn_context **out);

/** Destroy a context and free its memory (CUDA: after waiting for its stream). Accepts NULL. Never fails. */
GDN_API void gdn_context_destroy(gdn_context *ctx);

/**
 * Wait until the work of every earlier gdn_forward on ctx is done, and report the first error found
 * on the device since the last synchronize. CPU contexts: returns SUCCESS at once (their calls are
 * synchronous). CUDA contexts: waits for the context's stream, then returns
 *   GDN_STATUS_INVALID_ARGUMENT when an index array held a bad entry (cu_seqlens not starting at 0,
 *     decreasing, or not ending at seq_len; a slot past its pool; a slot conflict; a capture slot
 *     table shorter than a sequence). The message names the array and index as gdn_forward does on
 *     the CPU. The call that held it wrote nothing (no output, state or capture); other calls ran.
 *   GDN_STATUS_INTERNAL when CUDA failed (message: the CUDA error).
 * ctx NULL: GDN_STATUS_INVALID_ARGUMENT.
 */
GDN_API gdn_status gdn_context_synchronize(gdn_context *ctx);

/** The message of the last failed call on ctx, naming the argument and the problem
 *  ("v: expected shape [2,16,32,128] [B,T,Hv,Dv], got [2,16,32,64]"), or "" after a success.
 *  With ctx NULL: the message of this thread's last failed gdn_context_create.
 *  Valid until the next call on ctx. Never NULL. */
GDN_API const char *gdn_last_error(const gdn_context *ctx);

/** The ISA of the kernels ctx runs (never GDN_ISA_AUTO); the CUDA backend returns GDN_ISA_AUTO. */
GDN_API gdn_isa gdn_context_isa(const gdn_context *ctx);

/** The number of CPU threads ctx runs on (0 for a CUDA context). */
GDN_API int gdn_context_num_threads(const gdn_context *ctx);

/** The name of the kernel ctx uses for a problem with this key dimension, e.g.
 *  "recurrent_f32__avx512" (sizes the SIMD kernels do not cover run on the scalar kernel). */
GDN_API const char *gdn_context_kernel_name(const gdn_context *ctx, int k_dim);

/** Short lower-case name of an ISA ("scalar", "avx2", "avx512", "auto"). Never NULL. */
GDN_API const char *gdn_isa_name(gdn_isa isa);

/** Whether this CPU and OS can run an ISA (CPUID + XGETBV). GDN_ISA_SCALAR and AUTO: always 1. */
GDN_API int gdn_cpu_supports(gdn_isa isa);

/* ---------------------------------------------------------------------------------------------
 * Problem, batch and tensors
 * ------------------------------------------------------------------------------------------- */

/** The layer: head counts, dimensions and conventions. Zero-initialise, then set the four sizes:
 *  the zero values of every other field are the defaults (grouped, log gate, scale Dk^-1/2,
 *  no in-kernel L2 norm, [Dv][Dk] state, f32 everything, automatic algorithm, the backend's
 *  default precision). */
typedef struct gdn_problem {
    int num_k_heads; /**< Hk >= 1: heads of q and k. */
    int num_v_heads; /**< Hv >= 1, a multiple of Hk: heads of v, g, beta, out and state. */
    int k_dim;       /**< Dk >= 1 (<= 256). */
    int v_dim;       /**< Dv >= 1 (<= 256). */
    gdn_head_map head_map;     /**< Key head of each value head. */
    gdn_gate gate;             /**< Meaning of g (and beta, for GDN_GATE_RAW). */
    float scale;               /**< Output scale; 0 means 1/sqrt(Dk). Must be finite. */
    int qk_l2norm;             /**< Nonzero: q and k are L2-normalised in the kernel,
                                    x * rsqrt(sum(x^2) + 1e-6), per token and key head. */
    gdn_state_layout state_layout; /**< Order of a head's state (pool and capture). */
    gdn_dtype dtype;           /**< Type of q, k, v. */
    gdn_dtype out_dtype;       /**< Type of out. */
    gdn_dtype gate_dtype;      /**< Type of g and beta: GDN_DTYPE_F32 or the same as dtype. */
    gdn_dtype state_dtype;     /**< Type of stored states: GDN_DTYPE_F32 (the only one so far). */
    gdn_algo algo;             /**< Algorithm for multi-token calls. */
    gdn_precision precision;   /**< Operand precision of the chunked algorithm's products. */
} gdn_problem;

/** The tokens of one call: dense [B,T], or N packed variable-length sequences. */
typedef struct gdn_batch {
    int64_t batch_size;      /**< B >= 1; must be 1 when packed. */
    int64_t seq_len;         /**< T >= 0 tokens per sequence (dense) or T_total (packed). */
    int64_t num_seqs;        /**< N >= 1 when packed (cu_seqlens set); ignored when dense (N = B). */
    const void *cu_seqlens;  /**< NULL (dense) or N+1 offsets: cu[0] = 0, non-decreasing,
                                  cu[N] = T_total. Sequence n is tokens [cu[n], cu[n+1]). */
    gdn_index_type cu_seqlens_type; /**< Element type of cu_seqlens. */
    const int32_t *num_tokens; /**< NULL, or N counts: sequence n runs only its first num_tokens[n]
                                    tokens (0 <= count <= its length); the outputs and captures of
                                    its other tokens are not written, and a count of 0 acts as an
                                    empty sequence (the read state is copied to the write slot).
                                    Rollback by replay in one call: repeat the verify call with the
                                    accepted counts here, the pre-verify read slots, and
                                    out.data = NULL. Host memory on the CPU backend; device memory
                                    on CUDA (like cu_seqlens: checked on the device, a bad count
                                    reported by gdn_context_synchronize). */
} gdn_batch;

/** Most dimensions a view has. */
#define GDN_MAX_DIMS 5

/** A strided view of a tensor. Shapes are checked exactly against the problem and batch. Strides
 *  count elements (not bytes), must be >= 0, and may be all zero to mean C-contiguous. The library
 *  never writes through the views of inputs. The views it writes (out, state.pool, capture.states)
 *  must not overlap themselves: ordered by increasing stride, the stride of each dimension of extent
 *  > 1 must exceed the largest offset the dimensions before it reach (C order, permuted orders and
 *  padded rows all qualify); others are rejected. Inputs may overlap (zero strides broadcast). */
typedef struct gdn_tensor {
    void *data;                      /**< First element (host memory for the CPU backend, device
                                          memory for CUDA). */
    int ndim;                        /**< Number of dimensions. */
    int64_t shape[GDN_MAX_DIMS];     /**< Extent of each dimension. */
    int64_t strides[GDN_MAX_DIMS];   /**< Element stride of each dimension; all 0 = contiguous. */
} gdn_tensor;

/** A C-contiguous view of data with the given shape (ndim <= GDN_MAX_DIMS, else an empty view). */
static inline gdn_tensor gdn_tensor_contiguous(const void *data, int ndim, const int64_t *shape)
{
    gdn_tensor t;
    int i;
    t.data = (void *)(uintptr_t)data;
    t.ndim = (ndim >= 0 && ndim <= GDN_MAX_DIMS) ? ndim : 0;
    for (i = 0; i < GDN_MAX_DIMS; i++) {
        t.shape[i] = i < t.ndim ? shape[i] : 0;
        t.strides[i] = 0;
    }
    return t;
}

/** Recurrent states in a pool of slots; sequence n starts from slot read_slots[n] and its final
 *  state goes to slot write_slots[n]. Equal slots update in place. */
typedef struct gdn_state {
    gdn_tensor pool;            /**< f32 [num_slots, Hv, Dv, Dk] ([..., Dk, Dv] for GDN_STATE_KV);
                                     data NULL = no state: every sequence starts from zeros and no
                                     final state is written. */
    const int32_t *read_slots;  /**< [N]: the slot each sequence starts from; NULL = slot n;
                                     a negative entry = start from zeros. */
    const int32_t *write_slots; /**< [N]: the slot that receives each final state; NULL = the read
                                     slot; a negative entry = do not write it. Written slots must be
                                     distinct and must not be read by another sequence. */
} gdn_state;

/** Optional capture of the state after every token (speculative-decoding verify). */
typedef struct gdn_capture {
    gdn_capture_mode mode;  /**< NONE (default), DENSE or SLOTS. */
    gdn_tensor states;      /**< f32. DENSE: [B, T, Hv, Dv, Dk] (packed: [1, T_total, ...]);
                                 SLOTS: a pool [num_slots, Hv, Dv, Dk]; [..., Dk, Dv] for
                                 GDN_STATE_KV. May be the state pool itself. */
    const int32_t *slots;   /**< SLOTS: slot of the state after token t of sequence n; negative = skip.
                                 Indexed slots[n * slots_stride + t] when slots_stride > 0, else by
                                 the token's position in the batch (b*T + t dense, cu[n] + t packed).
                                 Captured slots must be distinct and distinct from every read or
                                 written state slot of another sequence (when the pools are the same);
                                 a sequence may capture into its own read slot, and the state after
                                 its last token into its own write slot (vLLM style). */
    int64_t slots_stride;   /**< Row length of the slot table (>= the longest sequence), or 0. */
} gdn_capture;

/** The kernel that runs a sequence of `tokens` tokens of this problem on ctx, all of the problem's
 *  choices applied (algorithm, AUTO's crossover, precision, dimensions) and whether the call captures
 *  states: e.g. "recurrent_f32__avx512", "chunk_f32__avx512", "chunk_bf16__avx512bf16". "none" for a
 *  NULL ctx or problem. Never NULL. */
GDN_API const char *gdn_context_kernel_for(const gdn_context *ctx, const gdn_problem *problem, int64_t tokens,
                                           int capture);

/** The tensors of one call. Dense shapes are listed; packed batches use B = 1, T = T_total. */
typedef struct gdn_tensors {
    gdn_tensor q;       /**< [B, T, Hk, Dk], problem.dtype. */
    gdn_tensor k;       /**< [B, T, Hk, Dk], problem.dtype. */
    gdn_tensor v;       /**< [B, T, Hv, Dv], problem.dtype. */
    gdn_tensor g;       /**< [B, T, Hv], problem.gate_dtype (the raw `a` for GDN_GATE_RAW). */
    gdn_tensor beta;    /**< [B, T, Hv], problem.gate_dtype (the raw `b` for GDN_GATE_RAW). */
    const float *A_log;   /**< [Hv] f32, GDN_GATE_RAW only (else ignored). */
    const float *dt_bias; /**< [Hv] f32, GDN_GATE_RAW only (else ignored). */
    gdn_tensor out;     /**< [B, T, Hv, Dv], problem.out_dtype; data NULL = no output (replay). */
    gdn_state state;    /**< Initial and final states. */
    gdn_capture capture; /**< Per-token states. */
} gdn_tensors;

/**
 * Run the recurrence over a batch: decode (T = 1), prefill, or verify with capture.
 * Sequences with no tokens copy their read state to their write slot (nothing when equal).
 * Rollback by replay: keep the pre-verify state slot, and after accepting n draft tokens call
 * again from that slot on the n accepted tokens with out.data = NULL.
 * @return GDN_STATUS_INVALID_ARGUMENT for any bad argument (message names it; with ctx NULL there
 *         is no context to hold a message),
 *         GDN_STATUS_UNSUPPORTED for valid requests this version lacks (Dk or Dv > 256,
 *         bf16 state storage). Nothing is written unless SUCCESS.
 *
 * CUDA backend: every pointer is device memory, cu_seqlens, the slot arrays and batch.num_tokens
 * included (engines keep them on the GPU and replay captured graphs). The call validates everything
 * but the contents of those index arrays on the host, enqueues the work on the context's stream and returns SUCCESS
 * without waiting; the inputs must stay valid and the outputs untouched until the stream reaches
 * the work. The contents of the index arrays are checked on the device before anything is written:
 * a bad entry makes that call write nothing, and gdn_context_synchronize reports it. A call whose
 * pool is larger than every earlier one on the context allocates 8 bytes per slot of device memory
 * for the slot checks (like the CPU); make such a call once before capturing a graph. Chunked prefill
 * on CUDA (dense batches of bf16 / f16 activations with 16-byte aligned rows) uses a workspace the
 * context allocates and keeps: 33 KB per 64 tokens and value head of a call, at most 2 GiB
 * (environment GDN_CUDA_CHUNK_WS_MB, read at context creation; a larger call runs in groups of
 * sequences). A call captured into a graph before the context has a large enough workspace runs a
 * slower chunked kernel: make the largest call once before capturing, here too. Small batches (H200:
 * one sequence of the Qwen3.6 layer from 2048 tokens) also use 4 bytes per 64 tokens and value head
 * of flags, with which the chunked kernels overlap; the call that first needs more of them waits for
 * the stream once, and one captured before they exist runs the kernels in turn.
 */
GDN_API gdn_status gdn_forward(gdn_context *ctx, const gdn_problem *problem, const gdn_batch *batch,
                               const gdn_tensors *tensors);

/* ---------------------------------------------------------------------------------------------
 * The short causal convolution in front of the recurrence (Qwen3-Next, Qwen3.5, Qwen3.6)
 * ------------------------------------------------------------------------------------------- */

/** Activation applied to the convolution's output. */
typedef enum gdn_conv_activation {
    GDN_CONV_SILU = 0, /**< y = z * sigmoid(z) (default; the models' choice). */
    GDN_CONV_NONE = 1  /**< y = z. */
} gdn_conv_activation;

/** A depthwise causal convolution over C channels (for Qwen: q|k|v packed, C = 2*Hk*Dk + Hv*Dv)
 *  with a kernel of W taps. Zero-initialise, then set channels and width. */
typedef struct gdn_conv_problem {
    int channels;                   /**< C >= 1. */
    int width;                      /**< W, 2 <= W <= 8 (Qwen: 4). */
    gdn_conv_activation activation; /**< After the bias. */
    gdn_dtype dtype;                /**< Type of x and y (f32, bf16, f16). Weights, bias and states: f32. */
} gdn_conv_problem;

/** The tensors of one convolution call. Dense shapes are listed; packed batches use B = 1,
 *  T = T_total. The conv state of a sequence is, per channel, its last W-1 inputs, oldest first
 *  (zeros before the first token). */
typedef struct gdn_conv_tensors {
    gdn_tensor x;        /**< [B, T, C] inputs, problem.dtype. */
    gdn_tensor weight;   /**< [C, W] f32: z[t][c] = bias[c] + sum_j weight[c][j] * x[t - (W-1) + j][c],
                              inputs before the sequence's first token taken from its conv state. */
    const float *bias;   /**< [C] f32, or NULL for none. */
    gdn_tensor y;        /**< [B, T, C], problem.dtype; data NULL = no output (replay). May be x itself
                              (same data and strides): in place. */
    gdn_state state;     /**< Conv state pool [slots, C, W-1] f32 (vLLM's conv_state layout), with read
                              and write slots exactly as for the recurrence (negative read slot: zeros;
                              negative write slot: not stored; no pool: zeros, nothing stored). */
    gdn_capture capture; /**< The conv state after every token: DENSE [B, T, C, W-1] (packed:
                              [1, T_total, C, W-1]), or SLOTS into a pool [slots, C, W-1]. Rolling
                              back to n accepted tokens = continuing from capture n-1. */
} gdn_conv_tensors;

/**
 * Run the causal convolution (+ activation) over a batch: decode (T = 1), prefill (varlen), or
 * verify with per-token capture of the conv state, with the same batch, slot and capture rules as
 * gdn_forward. Rollback by replay works the same way: keep the pre-verify slot and re-run the n
 * accepted tokens with y.data = NULL.
 * @return GDN_STATUS_INVALID_ARGUMENT for any bad argument (message names it),
 *         GDN_STATUS_UNSUPPORTED for valid requests this version lacks. Nothing is written unless
 *         SUCCESS.
 *
 * CUDA backend: as gdn_forward: every pointer is device memory (index arrays included), the call
 * is asynchronous on the context's stream, and the contents of the index arrays are checked on
 * the device; a bad entry makes the call write nothing, and gdn_context_synchronize reports it.
 */
GDN_API gdn_status gdn_conv1d_forward(gdn_context *ctx, const gdn_conv_problem *problem, const gdn_batch *batch,
                                      const gdn_conv_tensors *tensors);

#ifdef __cplusplus
}
#endif

#endif /* GDN_GDN_H */
