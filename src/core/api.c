/*
 * api.c — the public entry points: version, status strings, contexts, gdn_forward.
 * Arguments are validated once here (validate.c), then the backend runs the plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/conv_plan.h"
#include "cpu/conv1d.h"
#include "cpu/cpuid.h"
#include "cpu/driver.h"
#include "cpu/threadpool.h"
#ifdef GDN_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

int gdn_version(void)
{
    return GDN_VERSION;
}

const char *gdn_version_string(void)
{
    return STR(GDN_VERSION_MAJOR) "." STR(GDN_VERSION_MINOR) "." STR(GDN_VERSION_PATCH);
}

const char *gdn_status_string(gdn_status status)
{
    switch (status) {
    case GDN_STATUS_SUCCESS: return "success";
    case GDN_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case GDN_STATUS_UNSUPPORTED: return "unsupported";
    case GDN_STATUS_OUT_OF_MEMORY: return "out of memory";
    case GDN_STATUS_BACKEND_UNAVAILABLE: return "backend unavailable";
    case GDN_STATUS_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *gdn_isa_name(gdn_isa isa)
{
    switch (isa) {
    case GDN_ISA_AUTO: return "auto";
    case GDN_ISA_SCALAR: return "scalar";
    case GDN_ISA_AVX2: return "avx2";
    case GDN_ISA_AVX512: return "avx512";
    }
    return "unknown";
}

int gdn_cpu_supports(gdn_isa isa)
{
    switch (isa) {
    case GDN_ISA_AUTO:
    case GDN_ISA_SCALAR: return 1;
#ifdef GDN_HAVE_X86
    case GDN_ISA_AVX2: return (gdn_cpu_features() & GDN_CPU_AVX2) != 0;
    case GDN_ISA_AVX512: return (gdn_cpu_features() & GDN_CPU_AVX512) != 0;
#endif
    default: return 0;
    }
}

/* Message of the last failed gdn_context_create on this thread. */
static _Thread_local char create_err[GDN_ERR_LEN];

static gdn_status create_fail(gdn_status st, const char *msg)
{
    snprintf(create_err, sizeof create_err, "%s", msg);
    return st;
}

/* --- the CUDA backend (src/cuda): device pointers, work enqueued on desc.stream --------------- */

static gdn_status cuda_context_create(const gdn_context_desc *d, gdn_context **out)
{
#ifdef GDN_HAVE_CUDA
    char err[GDN_ERR_LEN];
    gdn_context *ctx = (gdn_context *)calloc(1, sizeof *ctx);
    if (!ctx)
        return create_fail(GDN_STATUS_OUT_OF_MEMORY, "gdn_context_create: cannot allocate the context");
    gdn_status st = gdn_cuda_context_create(d->device, d->stream, &ctx->cuda, err, sizeof err);
    if (st != GDN_STATUS_SUCCESS) {
        free(ctx);
        return create_fail(st, err);
    }
    ctx->backend = GDN_BACKEND_CUDA;
    ctx->isa = GDN_ISA_AUTO;
    ctx->num_threads = 0;
    *out = ctx;
    return GDN_STATUS_SUCCESS;
#else
    (void)d;
    (void)out;
    return create_fail(GDN_STATUS_BACKEND_UNAVAILABLE, "desc.backend: CUDA is not available in this build of gdn");
#endif
}

#ifdef GDN_HAVE_CUDA
gdn_cuda_context *gdn_context_cuda(gdn_context *ctx)
{
    return ctx ? ctx->cuda : NULL;
}
#endif

gdn_status gdn_context_create(const gdn_context_desc *desc, gdn_context **out)
{
    gdn_context_desc d;
    char err[GDN_ERR_LEN];
    create_err[0] = '\0';
    if (!out)
        return create_fail(GDN_STATUS_INVALID_ARGUMENT, "out: is NULL");
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc)
        d = *desc;
    if (d.backend != GDN_BACKEND_CPU && d.backend != GDN_BACKEND_CUDA) {
        snprintf(err, sizeof err, "desc.backend = %d: unknown backend", (int)d.backend);
        return create_fail(GDN_STATUS_INVALID_ARGUMENT, err);
    }
    if (d.num_threads < 0) {
        snprintf(err, sizeof err, "desc.num_threads = %d: must be >= 0 (0 = one per core)", d.num_threads);
        return create_fail(GDN_STATUS_INVALID_ARGUMENT, err);
    }
    if ((unsigned)d.isa > GDN_ISA_AVX512) {
        snprintf(err, sizeof err, "desc.isa = %d: unknown ISA", (int)d.isa);
        return create_fail(GDN_STATUS_INVALID_ARGUMENT, err);
    }
    if (d.backend == GDN_BACKEND_CUDA)
        return cuda_context_create(&d, out);
    gdn_context *ctx = (gdn_context *)calloc(1, sizeof *ctx);
    if (!ctx)
        return create_fail(GDN_STATUS_OUT_OF_MEMORY, "gdn_context_create: cannot allocate the context");
    gdn_status st = gdn_cpu_select(ctx, d.isa, err, sizeof err);
    if (st != GDN_STATUS_SUCCESS) {
        free(ctx);
        return create_fail(st, err);
    }
    ctx->backend = GDN_BACKEND_CPU;
    const int n = d.num_threads > 0 ? d.num_threads : gdn_available_cpus();
    ctx->num_threads = n;
    ctx->scratch_floats = gdn_cpu_scratch_floats();
    ctx->scratch = (float *)malloc((size_t)n * ctx->scratch_floats * sizeof(float));
    if (!ctx->scratch) {
        free(ctx);
        return create_fail(GDN_STATUS_OUT_OF_MEMORY, "gdn_context_create: cannot allocate the scratch memory");
    }
    if (gdn_threadpool_create(n, &ctx->pool) != 0) {
        free(ctx->scratch);
        free(ctx);
        snprintf(err, sizeof err, "desc.num_threads = %d: cannot start %d worker threads", d.num_threads, n - 1);
        return create_fail(GDN_STATUS_OUT_OF_MEMORY, err);
    }
    *out = ctx;
    return GDN_STATUS_SUCCESS;
}

void gdn_context_destroy(gdn_context *ctx)
{
    if (!ctx)
        return;
#ifdef GDN_HAVE_CUDA
    gdn_cuda_context_destroy(ctx->cuda);
#endif
    gdn_threadpool_destroy(ctx->pool);
    gdn_slot_checker_free(&ctx->slots);
    free(ctx->scratch);
    free(ctx);
}

const char *gdn_last_error(const gdn_context *ctx)
{
    return ctx ? ctx->err : create_err;
}

gdn_isa gdn_context_isa(const gdn_context *ctx)
{
    return ctx ? ctx->isa : GDN_ISA_AUTO;
}

int gdn_context_num_threads(const gdn_context *ctx)
{
    return ctx ? ctx->num_threads : 0;
}

const char *gdn_context_kernel_name(const gdn_context *ctx, int k_dim)
{
    if (!ctx)
        return "none";
#ifdef GDN_HAVE_CUDA
    if (ctx->backend == GDN_BACKEND_CUDA)
        return gdn_cuda_kernel_name(k_dim);
#endif
    return k_dim % 16 == 0 ? ctx->recurrent_name : "recurrent_f32__scalar";
}

const char *gdn_context_kernel_for(const gdn_context *ctx, const gdn_problem *problem, int64_t tokens, int capture)
{
    if (!ctx || !problem)
        return "none";
    const int dk = problem->k_dim, dv = problem->v_dim;
#ifdef GDN_HAVE_CUDA
    if (ctx->backend == GDN_BACKEND_CUDA) {
        const int tc = problem->precision != GDN_PRECISION_F32;
        return gdn_cuda_kernel_for(
            ctx->cuda,
            gdn_cuda_chunk_chosen(problem->algo, tc, tokens,
                                  gdn_cuda_chunk_min_tokens(ctx->cuda, problem->dtype, dk, dv)),
            capture, dk, dv, problem->dtype, tc);
    }
#endif
    /* the rule of gdn_cpu_use_chunked (cpu/chunked.c), then its choice of value kernel */
    if (!gdn_chunk_chosen(problem->algo, capture, tokens, dk))
        return dk % 16 == 0 ? ctx->recurrent_name : "recurrent_f32__scalar";
    if (dv % 16 != 0)
        return "chunk_f32__scalar";
    if (problem->precision == GDN_PRECISION_BF16 && ctx->chunk_bf16 && dk >= GDN_CHUNK_BF16_MIN_DK)
        return ctx->chunk_bf16_name;
    return ctx->chunk_name;
}

#ifdef GDN_HAVE_CUDA
/* CUDA: everything but the contents of the index arrays is checked here; those are checked on the
 * device, and an error there surfaces in gdn_context_synchronize. */
static gdn_status cuda_forward(gdn_context *ctx, const gdn_problem *problem, const gdn_batch *batch,
                               const gdn_tensors *tensors)
{
    gdn_plan plan;
    gdn_status st = gdn_plan_make_device(&plan, problem, batch, tensors, ctx->err, sizeof ctx->err);
    if (st != GDN_STATUS_SUCCESS)
        return st;
    return gdn_cuda_forward(ctx->cuda, &plan, ctx->err, sizeof ctx->err);
}
#endif

gdn_status gdn_context_synchronize(gdn_context *ctx)
{
    if (!ctx)
        return GDN_STATUS_INVALID_ARGUMENT;
    ctx->err[0] = '\0';
#ifdef GDN_HAVE_CUDA
    if (ctx->backend == GDN_BACKEND_CUDA)
        return gdn_cuda_synchronize(ctx->cuda, ctx->err, sizeof ctx->err);
#endif
    return GDN_STATUS_SUCCESS;
}

gdn_status gdn_forward(gdn_context *ctx, const gdn_problem *problem, const gdn_batch *batch,
                       const gdn_tensors *tensors)
{
    gdn_plan plan;
    if (!ctx)
        return GDN_STATUS_INVALID_ARGUMENT;
    ctx->err[0] = '\0';
#ifdef GDN_HAVE_CUDA
    if (ctx->backend == GDN_BACKEND_CUDA)
        return cuda_forward(ctx, problem, batch, tensors);
#endif
    gdn_status st = gdn_plan_make(&plan, problem, batch, tensors, &ctx->slots, ctx->err, sizeof ctx->err);
    if (st != GDN_STATUS_SUCCESS)
        return st;
    gdn_cpu_forward(ctx, &plan);
    return GDN_STATUS_SUCCESS;
}

gdn_status gdn_conv1d_forward(gdn_context *ctx, const gdn_conv_problem *problem, const gdn_batch *batch,
                              const gdn_conv_tensors *tensors)
{
    gdn_conv_plan plan;
    if (!ctx)
        return GDN_STATUS_INVALID_ARGUMENT;
    ctx->err[0] = '\0';
    if (ctx->backend != GDN_BACKEND_CPU) {
#ifdef GDN_HAVE_CUDA
        /* CUDA: as gdn_forward, everything but the index arrays' contents checked here, those on the device */
        gdn_status cst = gdn_conv_plan_make_device(&plan, problem, batch, tensors, ctx->err, sizeof ctx->err);
        if (cst != GDN_STATUS_SUCCESS)
            return cst;
        return gdn_cuda_conv1d_forward(ctx->cuda, &plan, ctx->err, sizeof ctx->err);
#else
        snprintf(ctx->err, sizeof ctx->err, "the convolution is not available on the CUDA backend in this version");
        return GDN_STATUS_UNSUPPORTED;
#endif
    }
    gdn_status st = gdn_conv_plan_make(&plan, problem, batch, tensors, &ctx->slots, ctx->err, sizeof ctx->err);
    if (st != GDN_STATUS_SUCCESS)
        return st;
    gdn_cpu_conv1d_forward(ctx, &plan);
    return GDN_STATUS_SUCCESS;
}
