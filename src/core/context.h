/*
 * context.h — what a gdn_context holds: backend, threads, the CPU kernel table, scratch memory
 * sized once at creation for the largest head dims, the slot checker, and the last error message.
 */
#ifndef GDN_CORE_CONTEXT_H
#define GDN_CORE_CONTEXT_H

#include <stddef.h>
#include "core/plan.h"
#include "cpu/chunked.h"
#include "cpu/convert.h"
#include "cpu/recurrent.h"
#include "cpu/threadpool.h"

#define GDN_ERR_LEN 512

struct gdn_context {
    gdn_backend backend;
    int num_threads;
    gdn_isa isa;                /* resolved, never AUTO */
    gdn_recurrent_fn recurrent; /* kernel for dk % 16 == 0 */
    const char *recurrent_name;
    gdn_chunk_keys_fn chunk_keys; /* chunked algorithm: key part (any k_dim) */
    gdn_chunk_fn chunk;         /* chunked algorithm: value part for v_dim % 16 == 0 */
    gdn_chunk_transpose_fn chunk_transpose; /* state tiles between the pool and S^T */
    const char *chunk_name;
    gdn_chunk_fn chunk_bf16;    /* value part with bf16 products (problem.precision BF16), v_dim % 16 == 0;
                                   NULL where the CPU lacks avx512_bf16 or the ISA is below AVX-512:
                                   then BF16 runs chunk (f32) */
    const char *chunk_bf16_name;
    gdn_chunk_keys_fn chunk_keys_bf16; /* key part for chunk_bf16 (K K^T, Q K^T in bf16), or NULL */
    gdn_f16_to_f32_fn f16_to_f32; /* row conversions of the ISA (F16C from AVX2 up) */
    gdn_f32_to_f16_fn f32_to_f16;
    gdn_threadpool *pool;       /* num_threads - 1 workers */
    float *scratch;             /* num_threads * scratch_floats */
    size_t scratch_floats;
    gdn_slot_checker slots;
    struct gdn_cuda_context *cuda; /* CUDA backend state (src/cuda); NULL for the CPU */
    char err[GDN_ERR_LEN];
};

#endif
