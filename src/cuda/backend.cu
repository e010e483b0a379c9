/*
 * backend.cu — the host side of the CUDA backend (cuda_backend.h): device selection, the device
 * words of a context, the launch of a validated plan (check kernel when the call has index arrays,
 * then the compute kernel as its programmatic dependent), deferred errors, and the helpers the
 * tests, the tool and the timing program use. The caller's current device is restored after every
 * call (a library must not change it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_backend.h"
#include "cuda/params.cuh"

struct gdn_cuda_context {
    int device;
    cudaStream_t stream;
    int num_sms;
    int pdl;                     /* programmatic dependent launches (compute capability >= 9;
                                    GDN_CUDA_PDL=0 turns them off, for measurements) */
    int rpt;                     /* GDN_CUDA_RPT (tuning): rows per thread, 0 = automatic */
    int fast;                    /* GDN_CUDA_FAST (tests, tuning): -1 automatic, 0 never, 1 whenever it qualifies */
    int fast_lpr;                /* GDN_CUDA_FAST_LPR (tuning): lanes per row of the fast path, 0 = automatic;
                                    2: multi-token calls on fast_pairs_kernel (its grid by the launcher's rule),
                                    3: on its persistent grid, 4: on its grid of tile ranges (D = 128), 5: one
                                    CTA per item (launch_fast_pairs) */
    int fast_j;                  /* GDN_CUDA_FAST_J (tests, tuning): state tiles per CTA of the fast path
                                    (1, 2, 4 or 8), 0 = automatic */
    int fast_cv;                 /* GDN_CUDA_FAST_CV (tests, measurements): 0 = the fast path reads the call's
                                    conventions from the parameters, never a compiled-in form (fast_cv_of); 1
                                    (default) = where the call has one */
    int fast_tail;               /* GDN_CUDA_FAST_TAIL (tests, measurements): the pairs kernel's last heads at half
                                    the tiles per CTA: -1 (default) automatic, 0 none, K the last K (sequence, head)
                                    pairs of every call it takes at 2 or more tiles per CTA (D = 128) */
    int fast_front;              /* GDN_CUDA_FAST_FRONT (tests, measurements): its first heads likewise: -1 (default)
                                    automatic, 0 none, F the first F pairs of every call it takes so */
    int64_t l2_bytes;            /* the device's L2 (cudaDevAttrL2CacheSize) */
    int l2_keep;                 /* GDN_CUDA_L2_KEEP (tests, measurements): the fast path's pre-wait prefetch
                                    evict-last: -1 (default) where the call's state bytes exceed l2_bytes, 0
                                    never, 1 always */
    gdn_cuda_words *words;       /* device */
    gdn_cuda_words *host_words;  /* pinned, for synchronize */
    unsigned long long *stamps;  /* device, zero between calls */
    int64_t stamps_cap;
    int chunk_split;             /* GDN_CUDA_CHUNK_SPLIT (tests, measurements): the two-pass chunked kernels
                                    (chunked_split.cuh) where they apply, their state pass on wgmma
                                    with register-sourced operands (chunked_rs.cuh) where that applies: 3
                                    (default); from shared memory only (chunked_wg.cuh): 2; on mma.sync
                                    only: 1; 0 = chunk_tc_kernel */
    int sm90;                    /* compute capability 9.x: the sm_90a code runs */
    int rs_stages;               /* GDN_CUDA_RS_STAGES (tuning): chunked_rs.cuh's stages, 1 or 2; 0 = the launcher's */
    int rs_cluster;              /* GDN_CUDA_RS_CLUSTER (tuning, tests): 1 = chunked_rs.cuh's one stage in clusters
                                    of two (measured slower: off by default) */
    int wg_rt;                   /* GDN_CUDA_WG_RT (tests, tuning): the wgmma state pass's rows per CTA, 32 or
                                    64; 0 = the launcher chooses by the grid */
    int prep_share;              /* GDN_CUDA_PREP_SHARE (tests): the two passes' prep CTAs per key head (1) or per
                                    value head (0); -1 = the launcher chooses by the grid */
    int64_t ws_max;              /* workspace cap in floats (GDN_CUDA_CHUNK_WS_MB, default 2048 MiB; a fraction
                                    allowed, for tests of the grouping) */
    float *ws;                   /* device workspace of the two-pass chunked kernels, grown outside capture */
    int64_t ws_cap;
    float *ws_old[8];            /* earlier workspaces, kept until destroy (a captured graph may still use one) */
    int ws_nold;
    int prep_overlap;            /* GDN_CUDA_PREP_OVERLAP (tests, measurements): 0 = the two passes in stream
                                    order; 1 (default) = overlapped where it pays (chunked_split.cuh); 2 = also
                                    on calls too short for it to pay (tests); 3 = as 2, the prep's first item
                                    never flagged (tests of the state pass's bounded wait); 4 = as 1, the
                                    state pass launched first and the per-item prep as its dependent
                                    (measurements) */
    int prep_ctas;               /* GDN_CUDA_PREP_CTAS (tuning): the overlapped prep's CTAs; 0 = one on each
                                    SM the state pass leaves */
    unsigned *flags;             /* the overlap's words (chunked_split.cuh, sp_item_flag), zeroed when made,
                                    grown outside capture */
    int64_t flags_cap;
    unsigned *flags_old[8];      /* earlier ones, kept until destroy (a captured graph may still use one) */
    int flags_nold;
};

namespace {
/* Make `device` current for the scope; restore the caller's device after. */
struct device_scope {
    int old = -1;
    explicit device_scope(int device)
    {
        if (cudaGetDevice(&old) != cudaSuccess) {
            (void)cudaGetLastError();
            old = -1;
        }
        if (old != device)
            (void)cudaSetDevice(device);
    }
    ~device_scope()
    {
        int cur = -1;
        if (old >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != old)
            (void)cudaSetDevice(old);
    }
};
} // namespace

static gdn_status cuda_fail(gdn_status st, char *err, size_t err_len, const char *what, cudaError_t e)
{
    snprintf(err, err_len, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return st;
}

/* A count requested by the environment variable `name`: -1 (automatic) where it is unset or negative. */
static int env_request(const char *name)
{
    const char *v = getenv(name);
    const int k = v ? atoi(v) : -1;
    return k < -1 ? -1 : k;
}

gdn_status gdn_cuda_context_create(int device, void *stream, gdn_cuda_context **out, char *err, size_t err_len)
{
    *out = NULL;
    if (device < 0) {
        snprintf(err, err_len, "desc.device = %d: must be >= 0", device);
        return GDN_STATUS_INVALID_ARGUMENT;
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        snprintf(err, err_len, "desc.backend: no CUDA device (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports none");
        return GDN_STATUS_BACKEND_UNAVAILABLE;
    }
    if (device >= count) {
        snprintf(err, err_len, "desc.device = %d: this machine has %d CUDA device%s", device, count,
                 count == 1 ? "" : "s");
        return GDN_STATUS_BACKEND_UNAVAILABLE;
    }
    gdn_cuda_context *c = (gdn_cuda_context *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, err_len, "gdn_context_create: cannot allocate the context");
        return GDN_STATUS_OUT_OF_MEMORY;
    }
    device_scope scope(device);
    c->device = device;
    c->stream = (cudaStream_t)stream;
    int major = 0;
    if ((e = cudaDeviceGetAttribute(&c->num_sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) != cudaSuccess) {
        free(c);
        (void)cudaGetLastError();
        return cuda_fail(GDN_STATUS_BACKEND_UNAVAILABLE, err, err_len, "desc.device", e);
    }
    if (major < 8) {
        free(c);
        snprintf(err, err_len, "desc.device = %d: compute capability %d.x; gdn's CUDA kernels need 8.0 or newer",
                 device, major);
        return GDN_STATUS_BACKEND_UNAVAILABLE;
    }
    const char *pdl = getenv("GDN_CUDA_PDL"); /* tuning: 0 = plain stream order */
    c->pdl = major >= 9 && !(pdl && pdl[0] == '0');
    const char *rpt = getenv("GDN_CUDA_RPT");
    c->rpt = rpt ? atoi(rpt) : 0;
    const char *fast = getenv("GDN_CUDA_FAST");
    c->fast = fast && fast[0] == '0' ? 0 : fast && fast[0] == '1' ? 1 : -1;
    const char *fast_lpr = getenv("GDN_CUDA_FAST_LPR");
    c->fast_lpr = fast_lpr ? atoi(fast_lpr) : 0;
    const char *fast_j = getenv("GDN_CUDA_FAST_J");
    c->fast_j = fast_j ? atoi(fast_j) : 0;
    const char *fast_cv = getenv("GDN_CUDA_FAST_CV");
    c->fast_cv = !(fast_cv && fast_cv[0] == '0');
    c->fast_tail = env_request("GDN_CUDA_FAST_TAIL");
    c->fast_front = env_request("GDN_CUDA_FAST_FRONT");
    const char *l2k = getenv("GDN_CUDA_L2_KEEP");
    c->l2_keep = l2k && l2k[0] == '0' ? 0 : l2k && l2k[0] == '1' ? 1 : -1;
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess) { /* a hint only: none */
        (void)cudaGetLastError();
        l2 = 0;
    }
    c->l2_bytes = l2;
    const char *split = getenv("GDN_CUDA_CHUNK_SPLIT");
    c->chunk_split = split && split[0] == '0'   ? 0
                     : split && split[0] == '1' ? 1
                     : split && split[0] == '2' ? 2
                                                : 3;
    const char *wg_rt = getenv("GDN_CUDA_WG_RT"); /* tuning: the wgmma state pass's rows per CTA, 32 or 64 */
    c->wg_rt = wg_rt && atoi(wg_rt) == 32 ? 32 : wg_rt && atoi(wg_rt) == 64 ? 64 : 0;
    const char *rss = getenv("GDN_CUDA_RS_STAGES"); /* tuning: chunked_rs.cuh's stages */
    c->rs_stages = rss && atoi(rss) == 1 ? 1 : rss && atoi(rss) == 2 ? 2 : 0;
    const char *rsc = getenv("GDN_CUDA_RS_CLUSTER");
    c->rs_cluster = rsc && rsc[0] == '1';
    const char *share = getenv("GDN_CUDA_PREP_SHARE"); /* tests: the prep pass per key head (1) or value head (0) */
    c->prep_share = share && share[0] == '0' ? 0 : share && share[0] == '1' ? 1 : -1;
    const char *ovl = getenv("GDN_CUDA_PREP_OVERLAP"); /* tests: 0 = the two passes in stream order */
    c->prep_overlap = ovl && ovl[0] == '0'   ? 0
                      : ovl && ovl[0] == '2' ? 2
                      : ovl && ovl[0] == '3' ? 3
                      : ovl && ovl[0] == '4' ? 4
                                             : 1;
    const char *pctas = getenv("GDN_CUDA_PREP_CTAS"); /* tuning: the overlapped prep's CTAs */
    c->prep_ctas = pctas && atoi(pctas) > 0 && atoi(pctas) < (1 << 20) ? atoi(pctas) : 0;
    c->sm90 = major == 9;
    const char *wsmb = getenv("GDN_CUDA_CHUNK_WS_MB");
    const double mb = wsmb ? atof(wsmb) : 0.0;
    c->ws_max = (int64_t)((mb > 0.0 && mb < 1e6 ? mb : 2048.0) * (1 << 20) / 4);
    if ((e = cudaMalloc((void **)&c->words, sizeof *c->words)) != cudaSuccess ||
        (e = cudaMemset(c->words, 0, sizeof *c->words)) != cudaSuccess ||
        (e = cudaMallocHost((void **)&c->host_words, sizeof *c->host_words)) != cudaSuccess) {
        (void)cudaGetLastError();
        cudaFree(c->words);
        free(c);
        return cuda_fail(GDN_STATUS_OUT_OF_MEMORY, err, err_len, "gdn_context_create: device memory", e);
    }
    *out = c;
    return GDN_STATUS_SUCCESS;
}

void gdn_cuda_context_destroy(gdn_cuda_context *c)
{
    if (!c)
        return;
    device_scope scope(c->device);
    if (c->stream)
        (void)cudaStreamSynchronize(c->stream);
    else
        (void)cudaDeviceSynchronize();
    cudaFree(c->stamps);
    cudaFree(c->ws);
    for (int i = 0; i < c->ws_nold; i++)
        cudaFree(c->ws_old[i]);
    cudaFree(c->flags);
    for (int i = 0; i < c->flags_nold; i++)
        cudaFree(c->flags_old[i]);
    cudaFree(c->words);
    cudaFreeHost(c->host_words);
    (void)cudaGetLastError();
    free(c);
}

void *gdn_cuda_context_stream(const gdn_cuda_context *c)
{
    return c ? (void *)c->stream : NULL;
}

const char *gdn_cuda_kernel_name(int k_dim)
{
    return gdn_cuda_recurrent_name(k_dim);
}

int gdn_cuda_chunk_min_tokens(const gdn_cuda_context *c, int dtype, int64_t k_dim, int64_t v_dim)
{
    if (c && c->chunk_split == 3 && c->sm90 && gdn_cuda_split_wg_shape_ok(dtype, k_dim, v_dim))
        return GDN_CUDA_CHUNK_RS_MIN_TOKENS;
    return k_dim > 128 ? GDN_CUDA_CHUNK_WIDE_MIN_TOKENS : GDN_CUDA_CHUNK_MIN_TOKENS;
}

const char *gdn_cuda_kernel_for(const gdn_cuda_context *c, int chunked, int capture, int k_dim, int v_dim, int dtype,
                                int tc)
{
    const char *k = gdn_cuda_chunked_name(chunked, capture, k_dim, tc);
    if (k && tc && c && c->chunk_split && gdn_cuda_split_shape_ok(dtype, k_dim, v_dim))
        return c->chunk_split >= 2 && c->sm90 && gdn_cuda_split_wg_shape_ok(dtype, k_dim, v_dim)
                   ? (c->chunk_split == 3 ? "chunk_split_bf16__cuda_wgmma_rs" : "chunk_split_bf16__cuda_wgmma")
                   : "chunk_split_tf32__cuda_mma";
    return k ? k : gdn_cuda_recurrent_name(k_dim);
}

static void copy_strides(int64_t *dst, const gdn_view *v, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = v->st[i];
}

/* The two-pass chunked kernels' workspace for the call (p->ws, p->ws_floats; NULL: the launcher takes
 * chunk_tc_kernel): unless GDN_CUDA_CHUNK_SPLIT=0, up to the cap (a call that needs more runs in groups of
 * sequences; one sequence's share must fit), grown here outside graph capture, geometrically (a call
 * captured before the workspace was grown runs in groups of what there is, or the one-pass kernel; a failed
 * allocation too). Earlier buffers stay allocated until the context is destroyed: a graph captured with one
 * may be replayed. */
static void chunk_workspace(gdn_cuda_context *c, gdn_cuda_params *p)
{
    p->ws = NULL;
    p->ws_floats = 0;
    if (!c->chunk_split)
        return;
    /* per: the least a launch needs (one sequence of a dense batch; a packed batch's whole) */
    const int64_t all = gdn_cuda_chunk_workspace_floats(p), per = all > 0 ? (p->cu ? all : all / p->N) : 0;
    if (per <= 0 || per > c->ws_max)
        return;
    const int64_t need = all < c->ws_max ? all : c->ws_max / per * per;
    if (need > c->ws_cap) {
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(c->stream, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone) {
            (void)cudaGetLastError();
            if (c->ws_cap >= per) { /* in groups, in what there is */
                p->ws = c->ws;
                p->ws_floats = c->ws_cap;
            }
            return;
        }
        if (c->ws && c->ws_nold == (int)(sizeof c->ws_old / sizeof c->ws_old[0])) {
            p->ws = c->ws; /* grown too often: in groups, in what there is */
            p->ws_floats = c->ws_cap;
            return;
        }
        int64_t want = 2 * c->ws_cap > need ? 2 * c->ws_cap : need; /* geometric: few buffers kept */
        want = want < c->ws_max ? want : c->ws_max;
        float *w = NULL;
        if (cudaMalloc((void **)&w, (size_t)want * sizeof(float)) != cudaSuccess) {
            (void)cudaGetLastError();
            return;
        }
        if (c->ws) /* kept: a graph captured earlier may still read it */
            c->ws_old[c->ws_nold++] = c->ws;
        c->ws = w;
        c->ws_cap = want;
    }
    p->ws = c->ws;
    p->ws_floats = c->ws_cap;
}

/* The words with which the two passes of a small chunked call overlap (p->sp_flags, p->sp_flag_words; NULL:
 * in stream order): zeroed when allocated, grown outside graph capture (a call captured before they were
 * grown runs its passes in stream order), earlier buffers kept until the context is destroyed. */
static void chunk_flags(gdn_cuda_context *c, gdn_cuda_params *p)
{
    p->sp_flags = NULL;
    p->sp_flag_words = 0;
    p->prep_overlap = c->pdl ? c->prep_overlap : 0;
    p->prep_ctas = c->prep_ctas;
    const int64_t need = p->ws && p->prep_overlap ? gdn_cuda_chunk_flag_words(p, c->num_sms) : 0;
    if (need <= 0)
        return;
    if (need > c->flags_cap) {
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(c->stream, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone ||
            (c->flags && c->flags_nold == (int)(sizeof c->flags_old / sizeof c->flags_old[0]))) {
            (void)cudaGetLastError();
            return;
        }
        const int64_t want = 2 * c->flags_cap > need ? 2 * c->flags_cap : need;
        unsigned *f = NULL;
        /* zeroed before any kernel may read them (a programmatic launch next in the stream may start before
           an asynchronous memset there completes) */
        if (cudaMalloc((void **)&f, (size_t)want * sizeof *f) != cudaSuccess ||
            cudaMemsetAsync(f, 0, (size_t)want * sizeof *f, c->stream) != cudaSuccess ||
            cudaStreamSynchronize(c->stream) != cudaSuccess) {
            (void)cudaGetLastError();
            cudaFree(f);
            return;
        }
        if (c->flags)
            c->flags_old[c->flags_nold++] = c->flags;
        c->flags = f;
        c->flags_cap = want;
    }
    p->sp_flags = c->flags;
    p->sp_flag_words = c->flags_cap;
}

/* The index check (check.cu) in front of a call that has index arrays (cu_seqlens, slot arrays, a
 * capture slot table): the slot stamps grown to the pools of the call, the check kernel launched, and
 * p->checked set so that the compute kernel waits for it and obeys its verdict. The fields read: B, T,
 * N, cu, cu_i64, num_tokens, pool (as a flag), num_slots, read/write slots, cap_mode, cap_num_slots, cap_slots,
 * cap_slots_stride, same_pool, words. */
static gdn_status launch_check(gdn_cuda_context *c, gdn_cuda_params *p, const char *fn, char *err, size_t err_len,
                               int may_self_check)
{
    cudaError_t e;
    const int need_check =
        p->cu || p->num_tokens || p->read_slots || p->write_slots || p->cap_mode == GDN_CAPTURE_SLOTS;
    if (!need_check)
        return GDN_STATUS_SUCCESS;
    if (may_self_check && p->N == 1 && !p->cu && !p->num_tokens && p->cap_mode != GDN_CAPTURE_SLOTS && p->pool) {
        /* one sequence with slot arrays: only their range to check (one sequence cannot conflict with itself);
           the compute kernel checks it (gdn_cuda_params.self_check) */
        p->self_check = 1;
        return GDN_STATUS_SUCCESS;
    }
    const int64_t want = (p->pool ? p->num_slots : 0) +
                         (p->cap_mode == GDN_CAPTURE_SLOTS && !p->same_pool ? p->cap_num_slots : 0);
    if (want > c->stamps_cap) {
        unsigned long long *s = NULL;
        if ((e = cudaMalloc((void **)&s, (size_t)want * sizeof *s)) != cudaSuccess ||
            (e = cudaMemsetAsync(s, 0, (size_t)want * sizeof *s, c->stream)) != cudaSuccess) {
            (void)cudaGetLastError();
            cudaFree(s);
            snprintf(err, err_len, "state.pool: cannot allocate %lld slot stamps on the device for the slot "
                     "checks (%s; the first call with a larger pool cannot be captured into a graph)",
                     (long long)want, cudaGetErrorString(e));
            return GDN_STATUS_OUT_OF_MEMORY;
        }
        if (c->stamps) {
            (void)cudaStreamSynchronize(c->stream); /* the old stamps may still be in use */
            cudaFree(c->stamps);
        }
        c->stamps = s;
        c->stamps_cap = want;
    }
    p->stamps = c->stamps;
    p->checked = 1;
    if ((e = gdn_cuda_launch_check(p, c->stream, c->pdl)) != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "%s: the index check kernel did not launch", fn);
        (void)cudaGetLastError();
        return cuda_fail(GDN_STATUS_INTERNAL, err, err_len, what, e);
    }
    return GDN_STATUS_SUCCESS;
}

gdn_status gdn_cuda_forward(gdn_cuda_context *c, const gdn_plan *pl, char *err, size_t err_len)
{
    device_scope scope(c->device);
    gdn_cuda_params p;
    memset(&p, 0, sizeof p);
    p.Hk = pl->Hk;
    p.Hv = pl->Hv;
    p.Dk = pl->Dk;
    p.Dv = pl->Dv;
    p.ratio = pl->ratio;
    p.grouped = pl->head_map == GDN_HEADS_GROUPED;
    p.gate = (int)pl->gate;
    p.l2norm = pl->l2norm;
    p.kv_layout = pl->layout == GDN_STATE_KV;
    p.dtype = (int)pl->dtype;
    p.out_dtype = (int)pl->out_dtype;
    p.gate_dtype = (int)pl->gate_dtype;
    p.scale = pl->scale;
    p.B = pl->B;
    p.T = pl->T;
    p.N = pl->N;
    p.cu = pl->cu;
    p.cu_i64 = pl->cu_type == GDN_INDEX_I64;
    p.num_tokens = pl->num_tokens;
    p.chunk_tc = pl->precision == GDN_PRECISION_BF16 ? 2 : pl->precision != GDN_PRECISION_F32; /* 2: all bf16 */
    p.algo_chunked = gdn_cuda_chunk_chosen(pl->algo, p.chunk_tc, pl->N > 0 ? (pl->cu ? pl->T / pl->N : pl->T) : 0,
                                           gdn_cuda_chunk_min_tokens(c, pl->dtype, pl->Dk, pl->Dv));
    p.q = pl->q.data;
    p.k = pl->k.data;
    p.v = pl->v.data;
    p.g = pl->g.data;
    p.beta = pl->beta.data;
    copy_strides(p.qs, &pl->q, 4);
    copy_strides(p.ks, &pl->k, 4);
    copy_strides(p.vs, &pl->v, 4);
    copy_strides(p.gs, &pl->g, 3);
    copy_strides(p.bs, &pl->beta, 3);
    p.A_log = pl->A_log;
    p.dt_bias = pl->dt_bias;
    if (pl->has_out) {
        p.out = pl->out.data;
        copy_strides(p.os, &pl->out, 4);
    }
    if (pl->has_pool) {
        p.pool = (float *)pl->pool.data;
        copy_strides(p.ps, &pl->pool, 4);
        p.num_slots = pl->num_slots;
        p.read_slots = pl->read_slots;
        p.write_slots = pl->write_slots;
    }
    p.cap_mode = (int)pl->cap_mode;
    if (pl->cap_mode != GDN_CAPTURE_NONE) {
        p.cap = (float *)pl->cap.data;
        copy_strides(p.cs, &pl->cap, pl->cap_mode == GDN_CAPTURE_DENSE ? 5 : 4);
        p.cap_num_slots = pl->cap_num_slots;
        p.cap_slots = pl->cap_slots;
        p.cap_slots_stride = pl->cap_slots_stride;
        p.same_pool = pl->cap_mode == GDN_CAPTURE_SLOTS && pl->has_pool && pl->cap.data == pl->pool.data;
    }
    p.words = c->words;

    cudaError_t e;
    gdn_status st;
    if (!pl->has_pool && pl->T == 0 && !pl->cu && !pl->num_tokens && pl->cap_mode != GDN_CAPTURE_SLOTS)
        return GDN_STATUS_SUCCESS; /* no tokens, no states, no index arrays: nothing to check, read or write */
    if (pl->N > (INT64_C(1) << 40) / pl->Hv) {
        snprintf(err, err_len, "batch: %lld sequences x %d value heads: more than 2^40 work items are not supported "
                 "by the CUDA backend", (long long)pl->N, pl->Hv);
        return GDN_STATUS_UNSUPPORTED;
    }
    if ((st = launch_check(c, &p, "gdn_forward", err, err_len, 1)) != GDN_STATUS_SUCCESS)
        return st;
    chunk_workspace(c, &p);
    p.split_wg = c->chunk_split >= 2 && c->sm90 ? c->chunk_split - 1 : 0; /* 2: chunked_rs.cuh's form */
    p.wg_rt = c->wg_rt;
    p.rs_stages = c->rs_stages;
    p.rs_cluster = c->rs_cluster;
    p.prep_vpc = c->prep_share; /* the launcher turns it into value heads per CTA */
    chunk_flags(c, &p);
    /* the fast path's pre-wait prefetch evict-last where the call's states outgrow L2: there the first CTAs' rows,
       fetched during the previous call's last CTAs, were evicted before their loads came (H200, gdn bench: decode
       B=64 67.08 -> 66.20 us, 96.2% -> 97.5% of the copy rate; B=256 260.3 -> 256.2; verify T=4 B=64 73.2 -> 72.3;
       but decode B=1 1.92 -> 2.03 and B=8 9.46 -> 9.51 with it always on; docs/PERF.md, session 44) */
    p.l2_keep = c->l2_keep >= 0 ? c->l2_keep
                                : c->l2_bytes > 0 && (double)p.N * p.Hv * p.Dv * p.Dk * 4.0 > (double)c->l2_bytes;
    p.fast_tail = c->fast_tail;
    p.fast_front = c->fast_front;
    if ((e = gdn_cuda_launch_recurrent(&p, c->stream, c->num_sms, c->pdl, c->rpt, c->fast,
                                       c->fast_lpr, c->fast_j, c->fast_cv)) != cudaSuccess) {
        (void)cudaGetLastError();
        return cuda_fail(GDN_STATUS_INTERNAL, err, err_len, "gdn_forward: the kernel did not launch", e);
    }
    return GDN_STATUS_SUCCESS;
}

gdn_status gdn_cuda_conv1d_forward(gdn_cuda_context *c, const gdn_conv_plan *pl, char *err, size_t err_len)
{
    device_scope scope(c->device);
    const gdn_plan *sq = &pl->seq; /* batch, slots and capture slots (the shadow plan) */
    if (!sq->has_pool && sq->T == 0 && !sq->cu && !sq->num_tokens && sq->cap_mode != GDN_CAPTURE_SLOTS)
        return GDN_STATUS_SUCCESS; /* no tokens, no states, no index arrays: nothing to check, read or write */
    if (sq->N > (INT64_C(1) << 40)) {
        snprintf(err, err_len, "batch: %lld sequences: more than 2^40 are not supported by the CUDA backend",
                 (long long)sq->N);
        return GDN_STATUS_UNSUPPORTED;
    }
    /* the index check: gdn_forward's, on the shadow plan's arrays */
    gdn_cuda_params p;
    memset(&p, 0, sizeof p);
    p.B = sq->B;
    p.T = sq->T;
    p.N = sq->N;
    p.cu = sq->cu;
    p.cu_i64 = sq->cu_type == GDN_INDEX_I64;
    p.num_tokens = sq->num_tokens;
    if (sq->has_pool) {
        p.pool = (float *)pl->pool.data;
        p.num_slots = sq->num_slots;
        p.read_slots = sq->read_slots;
        p.write_slots = sq->write_slots;
    }
    p.cap_mode = (int)sq->cap_mode;
    if (sq->cap_mode == GDN_CAPTURE_SLOTS) {
        p.cap = (float *)pl->cap.data;
        p.cap_num_slots = sq->cap_num_slots;
        p.cap_slots = sq->cap_slots;
        p.cap_slots_stride = sq->cap_slots_stride;
        p.same_pool = sq->has_pool && pl->cap.data == pl->pool.data;
    }
    p.words = c->words;
    gdn_status st = launch_check(c, &p, "gdn_conv1d_forward", err, err_len, 0);
    if (st != GDN_STATUS_SUCCESS)
        return st;

    gdn_cuda_conv_params q;
    memset(&q, 0, sizeof q);
    q.C = pl->C;
    q.K = pl->K;
    q.silu = pl->act == GDN_CONV_SILU;
    q.dtype = (int)pl->dtype;
    q.B = sq->B;
    q.T = sq->T;
    q.N = sq->N;
    q.cu = sq->cu;
    q.cu_i64 = p.cu_i64;
    q.num_tokens = sq->num_tokens;
    q.x = pl->x.data;
    copy_strides(q.xs, &pl->x, 3);
    q.w = (const float *)pl->weight.data;
    copy_strides(q.ws, &pl->weight, 2);
    q.bias = pl->bias;
    if (pl->has_y) {
        q.y = pl->y.data;
        copy_strides(q.ys, &pl->y, 3);
    }
    if (sq->has_pool) {
        q.pool = (float *)pl->pool.data;
        copy_strides(q.ps, &pl->pool, 3);
        q.num_slots = sq->num_slots;
        q.read_slots = sq->read_slots;
        q.write_slots = sq->write_slots;
    }
    q.cap_mode = (int)sq->cap_mode;
    if (sq->cap_mode != GDN_CAPTURE_NONE) {
        q.cap = (float *)pl->cap.data;
        copy_strides(q.cs, &pl->cap, sq->cap_mode == GDN_CAPTURE_DENSE ? 4 : 3);
        q.cap_num_slots = sq->cap_num_slots;
        q.cap_slots = sq->cap_slots;
        q.cap_slots_stride = sq->cap_slots_stride;
    }
    q.checked = p.checked;
    q.words = c->words;
    const cudaError_t e = gdn_cuda_launch_conv1d(&q, c->stream, c->pdl);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return cuda_fail(GDN_STATUS_INTERNAL, err, err_len, "gdn_conv1d_forward: the kernel did not launch", e);
    }
    return GDN_STATUS_SUCCESS;
}

static void conflict_message(char *err, size_t err_len, const char *name, const gdn_cuda_error *x)
{
    const char *what = x->sub == 1 ? "written" : "read";
    if (x->other < 0)
        snprintf(err, err_len, "%s[%lld] = %lld (sequence %lld): slot is also %s by several other sequences", name,
                 (long long)x->index, (long long)x->value, (long long)x->seq, what);
    else if (x->other == x->seq)
        snprintf(err, err_len, "%s[%lld] = %lld (sequence %lld): slot is written twice by this sequence", name,
                 (long long)x->index, (long long)x->value, (long long)x->seq);
    else
        snprintf(err, err_len, "%s[%lld] = %lld (sequence %lld): slot is also %s by sequence %lld", name,
                 (long long)x->index, (long long)x->value, (long long)x->seq, what, (long long)x->other);
}

static void error_message(const gdn_cuda_error *x, char *err, size_t err_len)
{
    char msg[400];
    const long long i = x->index, v = x->value, o = x->other;
    switch (x->code) {
    case GDN_CUDA_ERR_CU_FIRST: snprintf(msg, sizeof msg, "cu_seqlens[0] = %lld: must be 0", v); break;
    case GDN_CUDA_ERR_CU_DECREASING:
        snprintf(msg, sizeof msg, "cu_seqlens[%lld] = %lld: decreasing (cu_seqlens[%lld] = %lld)", i, v, i - 1, o);
        break;
    case GDN_CUDA_ERR_CU_PAST:
        snprintf(msg, sizeof msg, "cu_seqlens[%lld] = %lld: past the %lld tokens of the batch (seq_len)", i, v, o);
        break;
    case GDN_CUDA_ERR_CU_LAST:
        snprintf(msg, sizeof msg, "cu_seqlens[%lld] = %lld: must equal seq_len = %lld (T_total)", i, v, o);
        break;
    case GDN_CUDA_ERR_NUM_TOKENS:
        snprintf(msg, sizeof msg, "batch.num_tokens[%lld] = %lld: must be in [0, %lld] (the tokens of sequence %lld)",
                 i, v, o, i);
        break;
    case GDN_CUDA_ERR_STRIDE:
        snprintf(msg, sizeof msg, "capture.slots_stride = %lld: shorter than sequence %lld (%lld tokens)", v,
                 (long long)x->seq, o);
        break;
    case GDN_CUDA_ERR_READ_RANGE:
        snprintf(msg, sizeof msg, "state.read_slots[%lld] = %lld: past the pool of %lld slots", i, v, o);
        break;
    case GDN_CUDA_ERR_WRITE_RANGE:
        snprintf(msg, sizeof msg, "state.write_slots[%lld] = %lld: past the pool of %lld slots", i, v, o);
        break;
    case GDN_CUDA_ERR_CAP_RANGE:
        snprintf(msg, sizeof msg, "capture.slots[%lld] = %lld: past the capture pool of %lld slots", i, v, o);
        break;
    case GDN_CUDA_ERR_WRITE_CONFLICT: conflict_message(msg, sizeof msg, "state.write_slots", x); break;
    case GDN_CUDA_ERR_CAP_CONFLICT: conflict_message(msg, sizeof msg, "capture.slots", x); break;
    case GDN_CUDA_ERR_PREP_WAIT:
        snprintf(err, err_len, "internal error: the chunked prefill's state pass waited %.0f s for its prep pass "
                 "(value head %lld, chunk %lld: flag %lld, wanted %lld) and went on without it: the outputs and "
                 "final states of that call are not valid",
                 (double)SP_WAIT_NS * 1e-9, (long long)x->seq, i, o, v);
        return;
    default: snprintf(msg, sizeof msg, "unknown device error code %d", (int)x->code); break;
    }
    snprintf(err, err_len, "%s (found on the device; the call that held it wrote nothing)", msg);
}

gdn_status gdn_cuda_synchronize(gdn_cuda_context *c, char *err, size_t err_len)
{
    device_scope scope(c->device);
    cudaError_t e = c->stream ? cudaStreamSynchronize(c->stream) : cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return cuda_fail(GDN_STATUS_INTERNAL, err, err_len, "gdn_context_synchronize", e);
    }
    if ((e = cudaMemcpy(c->host_words, c->words, sizeof *c->words, cudaMemcpyDeviceToHost)) != cudaSuccess) {
        (void)cudaGetLastError();
        return cuda_fail(GDN_STATUS_INTERNAL, err, err_len, "gdn_context_synchronize: reading the error word", e);
    }
    if (c->host_words->first.code == GDN_CUDA_ERR_NONE)
        return GDN_STATUS_SUCCESS;
    const gdn_cuda_error x = c->host_words->first;
    if ((e = cudaMemset(&c->words->first, 0, sizeof c->words->first)) != cudaSuccess) {
        (void)cudaGetLastError();
        return cuda_fail(GDN_STATUS_INTERNAL, err, err_len, "gdn_context_synchronize: clearing the error word", e);
    }
    error_message(&x, err, err_len);
    return x.code == GDN_CUDA_ERR_PREP_WAIT ? GDN_STATUS_INTERNAL : GDN_STATUS_INVALID_ARGUMENT;
}

/* --- helpers ------------------------------------------------------------------------------ */

int gdn_cuda_device_count(char *name, size_t name_len)
{
    int count = 0;
    if (name && name_len)
        name[0] = '\0';
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (count > 0 && name && name_len) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
            snprintf(name, name_len, "%s (compute capability %d.%d, %d SMs, %.0f GiB)", prop.name, prop.major,
                     prop.minor, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1u << 30));
    }
    return count;
}

void *gdn_cuda_malloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

void gdn_cuda_free(void *p)
{
    if (p)
        cudaFree(p);
}

int gdn_cuda_memcpy(void *dst, const void *src, size_t bytes)
{
    if (cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
    }
    return 0;
}

int gdn_cuda_memset(void *dst, int byte, size_t bytes)
{
    if (cudaMemset(dst, byte, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
    }
    return 0;
}

void *gdn_cuda_stream_create(void)
{
    cudaStream_t s = NULL;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return (void *)s;
}

void gdn_cuda_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One timed call: call i of a set (gdn_forward or gdn_conv1d_forward on its i-th tensors). */
typedef gdn_status (*time_call_fn)(struct gdn_context *ctx, const void *arg, int i);

static gdn_status time_calls(struct gdn_context *ctx, time_call_fn call, const void *arg, int n_calls, int warmup,
                             int reps, int graph, double *median_us, double *min_us, char *err, size_t err_len)
{
    gdn_cuda_context *c = gdn_context_cuda(ctx);
    if (!c || n_calls < 1 || reps < 1 || warmup < 0) {
        snprintf(err, err_len, "gdn_cuda_time: not a CUDA context, or bad counts");
        return GDN_STATUS_INVALID_ARGUMENT;
    }
    device_scope scope(c->device);
    cudaStream_t s = c->stream;
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaEvent_t *ev = (cudaEvent_t *)calloc(2 * (size_t)reps, sizeof *ev);
    double *t = (double *)calloc((size_t)reps, sizeof *t);
    gdn_status st = GDN_STATUS_SUCCESS;
    cudaError_t e = cudaSuccess;
    if (!ev || !t) {
        free(ev);
        free(t);
        snprintf(err, err_len, "gdn_cuda_time: out of memory");
        return GDN_STATUS_OUT_OF_MEMORY;
    }
    for (int i = 0; i < 2 * reps && e == cudaSuccess; i++)
        e = cudaEventCreate(&ev[i]);
    /* one untimed round outside capture: allocates the slot stamps, loads the module */
    for (int i = 0; i < n_calls && st == GDN_STATUS_SUCCESS; i++)
        st = call(ctx, arg, i);
    if (st != GDN_STATUS_SUCCESS) {
        snprintf(err, err_len, "%s", gdn_last_error(ctx));
        goto done;
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (graph && e == cudaSuccess) {
        if (!s) {
            snprintf(err, err_len, "gdn_cuda_time: graph timing needs a context with its own stream");
            st = GDN_STATUS_INVALID_ARGUMENT;
            goto done;
        }
        e = cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
        for (int i = 0; i < n_calls && e == cudaSuccess && st == GDN_STATUS_SUCCESS; i++)
            st = call(ctx, arg, i);
        if (e == cudaSuccess) {
            const cudaError_t e2 = cudaStreamEndCapture(s, &g);
            if (st != GDN_STATUS_SUCCESS) {
                snprintf(err, err_len, "during capture: %s", gdn_last_error(ctx));
                goto done;
            }
            e = e2;
        }
        if (e == cudaSuccess)
            e = cudaGraphInstantiate(&x, g, 0);
    }
    for (int w = 0; w < warmup && e == cudaSuccess; w++) {
        if (graph)
            e = cudaGraphLaunch(x, s);
        else
            for (int i = 0; i < n_calls && st == GDN_STATUS_SUCCESS; i++)
                st = call(ctx, arg, i);
    }
    for (int r = 0; r < reps && e == cudaSuccess && st == GDN_STATUS_SUCCESS; r++) {
        e = cudaEventRecord(ev[2 * r], s);
        if (graph && e == cudaSuccess)
            e = cudaGraphLaunch(x, s);
        else
            for (int i = 0; i < n_calls && st == GDN_STATUS_SUCCESS; i++)
                st = call(ctx, arg, i);
        if (e == cudaSuccess)
            e = cudaEventRecord(ev[2 * r + 1], s);
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    for (int r = 0; r < reps && e == cudaSuccess; r++) {
        float ms = 0.f;
        e = cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]);
        t[r] = 1000.0 * ms / n_calls;
    }
    if (e == cudaSuccess && st == GDN_STATUS_SUCCESS) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        *median_us = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        *min_us = t[0];
        st = gdn_context_synchronize(ctx);
        if (st != GDN_STATUS_SUCCESS)
            snprintf(err, err_len, "%s", gdn_last_error(ctx));
    } else if (st != GDN_STATUS_SUCCESS) {
        snprintf(err, err_len, "%s", gdn_last_error(ctx));
    }
done:
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        st = cuda_fail(GDN_STATUS_INTERNAL, err, err_len, "gdn_cuda_time", e);
    }
    if (x)
        cudaGraphExecDestroy(x);
    if (g)
        cudaGraphDestroy(g);
    for (int i = 0; i < 2 * reps; i++)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    free(ev);
    free(t);
    return st;
}

typedef struct forward_call {
    const gdn_problem *problem;
    const gdn_batch *batch;
    const gdn_tensors *tensors;
} forward_call;

static gdn_status call_forward(struct gdn_context *ctx, const void *arg, int i)
{
    const forward_call *f = (const forward_call *)arg;
    return gdn_forward(ctx, f->problem, f->batch, &f->tensors[i]);
}

gdn_status gdn_cuda_time_forward(struct gdn_context *ctx, const gdn_problem *problem, const gdn_batch *batch,
                                 const gdn_tensors *tensors, int n_calls, int warmup, int reps, int graph,
                                 double *median_us, double *min_us, char *err, size_t err_len)
{
    const forward_call f = {problem, batch, tensors};
    return time_calls(ctx, call_forward, &f, n_calls, warmup, reps, graph, median_us, min_us, err, err_len);
}

typedef struct conv_call {
    const gdn_conv_problem *problem;
    const gdn_batch *batch;
    const gdn_conv_tensors *tensors;
} conv_call;

static gdn_status call_conv(struct gdn_context *ctx, const void *arg, int i)
{
    const conv_call *f = (const conv_call *)arg;
    return gdn_conv1d_forward(ctx, f->problem, f->batch, &f->tensors[i]);
}

gdn_status gdn_cuda_time_conv1d(struct gdn_context *ctx, const gdn_conv_problem *problem, const gdn_batch *batch,
                                const gdn_conv_tensors *tensors, int n_calls, int warmup, int reps, int graph,
                                double *median_us, double *min_us, char *err, size_t err_len)
{
    const conv_call f = {problem, batch, tensors};
    return time_calls(ctx, call_conv, &f, n_calls, warmup, reps, graph, median_us, min_us, err, err_len);
}

double gdn_cuda_copy_bandwidth(size_t bytes, int reps)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double best = 0.0;
    double *t = (double *)calloc((size_t)(reps > 0 ? reps : 1), sizeof *t);
    /* copies back to back per timing, so buffers of less than 1 GiB are not timed with one launch's latency */
    const size_t fit = bytes ? ((size_t)1 << 30) / bytes : 1;
    const int per = fit < 1 ? 1 : fit > 16 ? 16 : (int)fit;
    if (!t || cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
        cudaMemset(a, 1, bytes) != cudaSuccess || cudaEventCreate(&e0) != cudaSuccess ||
        cudaEventCreate(&e1) != cudaSuccess)
        goto done;
    (void)cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    for (int r = 0; r < reps; r++) {
        float ms = 0.f;
        cudaEventRecord(e0, 0);
        for (int c = 0; c < per; c++)
            cudaMemcpyAsync(c & 1 ? a : b, c & 1 ? b : a, bytes, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        t[r] = ms;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    best = 2.0 * (double)bytes * per / (t[reps / 2] * 1e-3);
done:
    (void)cudaGetLastError();
    cudaFree(a);
    cudaFree(b);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    free(t);
    return best;
}

/* The launch floor's kernels (measurements): mode 0 nothing; 1 each thread loads 32 bytes of `buf` after
   griddepcontrol.wait and stores them back (the memory round trip of a decode call at B=1, 512 CTAs);
   2 the same with the CTA's 4 KiB prefetched into L2 before the wait; 3 as 2 with a chain of four
   dependent shuffle rounds between load and store (a decode row's reduction). */
__global__ void floor_kernel(int pdl, int mode, float4 *buf)
{
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 2;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (pdl)
        asm volatile("griddepcontrol.launch_dependents;");
    if (mode >= 2 && threadIdx.x == 0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(buf + i), "r"(4096u) : "memory");
    if (pdl)
        asm volatile("griddepcontrol.wait;" ::: "memory");
#else
    (void)pdl;
#endif
    if (mode >= 1) {
        float4 a = buf[i], b = buf[i + 1];
        if (mode == 3) {
            float x = a.x + b.y;
#pragma unroll
            for (int o = 8; o > 0; o >>= 1)
                x += __shfl_xor_sync(0xffffffffu, x, o);
            a.x += x * 1e-30f;
        }
        buf[i] = a;
        buf[i + 1] = b;
    }
}

/* Mode 4 of the launch floor: as mode 2 through bulk copies (one 4 KiB cp.async.bulk into shared memory on
   an mbarrier, each thread's 32 bytes through registers, one bulk store back); sm_90 only. */
__global__ void floor_bulk_kernel(int pdl, float4 *buf)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ __align__(128) float4 sb[256];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar), ssb = (unsigned)__cvta_generic_to_shared(sb);
    float4 *src = buf + (size_t)blockIdx.x * 256;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (pdl)
        asm volatile("griddepcontrol.launch_dependents;");
    if (threadIdx.x == 0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(4096u) : "memory");
    if (pdl)
        asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(4096u) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         ssb),
                     "l"(src), "r"(4096u), "r"(sbar)
                     : "memory");
    }
    asm volatile("{\n\t.reg .pred done;\n"
                 "FLOOR_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t"
                 "@!done bra FLOOR_WAIT;\n}" ::"r"(sbar)
                 : "memory");
    float4 a = sb[2 * threadIdx.x], b = sb[2 * threadIdx.x + 1];
    a.x += 1e-30f;
    sb[2 * threadIdx.x] = a;
    sb[2 * threadIdx.x + 1] = b;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(src), "r"(ssb), "r"(4096u)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
#else
    (void)pdl;
    (void)buf;
#endif
}

double gdn_cuda_launch_floor_us(int n_calls, int reps, int pdl, int mode)
{
    cudaStream_t s = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double res = 0.0;
    double *t = (double *)calloc((size_t)(reps > 0 ? reps : 1), sizeof *t);
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    float4 *buf = NULL;
    cfg.gridDim = dim3(mode ? 512 : 256, 1, 1);
    cfg.blockDim = dim3(128, 1, 1);
    if (pdl) {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    if (!t || reps < 1 || cudaMalloc((void **)&buf, (size_t)512 * 128 * 32) != cudaSuccess ||
        cudaMemset(buf, 0, (size_t)512 * 128 * 32) != cudaSuccess ||
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)
        goto done;
    cfg.stream = s;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess)
        goto done;
    for (int i = 0; i < n_calls; i++) {
        if (mode == 4)
            (void)cudaLaunchKernelEx(&cfg, floor_bulk_kernel, pdl, buf);
        else
            (void)cudaLaunchKernelEx(&cfg, floor_kernel, pdl, mode, buf);
    }
    if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&x, g, 0) != cudaSuccess)
        goto done;
    for (int w = 0; w < 10; w++)
        (void)cudaGraphLaunch(x, s);
    for (int r = 0; r < reps; r++) {
        float ms = 0.f;
        cudaEventRecord(e0, s);
        cudaGraphLaunch(x, s);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        t[r] = 1000.0 * ms / n_calls;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    res = t[reps / 2];
done:
    (void)cudaGetLastError();
    if (x)
        cudaGraphExecDestroy(x);
    if (g)
        cudaGraphDestroy(g);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (s)
        cudaStreamDestroy(s);
    if (buf)
        cudaFree(buf);
    free(t);
    return res;
}
