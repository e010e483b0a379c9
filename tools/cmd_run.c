/*
 * cmd_run.c — `gdn run --in DIR --out DIR [options]`: the recurrence on .npy files (DESIGN.md §3).
 *
 * Order of work: options (usage errors, exit 2) → --out prepared and probed for writing → every
 * input loaded and checked (file, dtype, rank, shape, cu_seqlens) → inputs converted to --dtype
 * → one gdn_forward call with a state pool whose slots are the sequences (in place) and dense
 * capture → outputs written to temporary files in --out, renamed into place only when all are
 * complete. Any failure removes the temporaries (and --out itself when this run created it and
 * it is empty), prints one line on stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include "core/dtype.h"
#include "devmem.h"
#include "npy.h"
#include "tools.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define CMD "run"

void cmd_run_help(void)
{
    printf(
        "usage: gdn run --in DIR --out DIR [options]\n"
        "\n"
        "Applies the Gated DeltaNet recurrence to tensors stored as NumPy .npy files (little-endian,\n"
        "C order; tensors float32 '<f4' or float16 '<f2'; cu_seqlens int32 '<i4' or int64 '<i8').\n"
        "\n"
        "files read from --in:\n"
        "  q.npy, k.npy         [B,T,Hk,Dk]\n"
        "  v.npy                [B,T,Hv,Dv]          Hv must be a multiple of Hk\n"
        "  g.npy, beta.npy      [B,T,Hv]             with --gate raw: the raw a and b\n"
        "  A_log.npy, dt_bias.npy [Hv]               only with --gate raw\n"
        "  state.npy            [B,Hv,Dv,Dk]         optional initial state (zeros if absent);\n"
        "                                            [N,Hv,Dv,Dk] with cu_seqlens; [...,Dk,Dv] with\n"
        "                                            --state-layout kv\n"
        "  cu_seqlens.npy       [N+1]                optional: N packed sequences, offsets from 0,\n"
        "                                            non-decreasing, ending at T; then B must be 1\n"
        "\n"
        "files written to --out (created if absent, one level), all float32:\n"
        "  o.npy                [B,T,Hv,Dv]          the output of every token\n"
        "  state.npy            final state, same layout and shape as the input state\n"
        "                       ([B or N,Hv,Dv,Dk], or [B or N,Hv,Dk,Dv] with --state-layout kv)\n"
        "  states.npy           with --capture: the state after every token, [B,T,Hv,Dv,Dk]\n"
        "                       ([1,T_total,Hv,Dv,Dk] when packed); the last two dims follow the\n"
        "                       state layout: [B,T,Hv,Dk,Dv] with --state-layout kv\n"
        "Outputs are written under temporary names and renamed at the end: after a failure\n"
        "(exit status not 0) no new output file is left in --out. A successful run without\n"
        "--capture removes a states.npy left in --out by an earlier run.\n"
        "\n"
        "options:\n"
        "  --gate log|linear|neglog|raw   meaning of g (default log): decay = exp(g) | g | exp(-g);\n"
        "                                 raw: g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b)\n"
        "  --heads grouped|tiled          key head of value head h: h / (Hv/Hk) or h %% Hk (default grouped)\n"
        "  --scale X                      output scale (default Dk^-1/2); finite, nonzero\n"
        "  --qk-l2norm                    L2-normalise q and k in the kernel\n"
        "  --state-layout vk|kv           state order [Dv][Dk] (default) or [Dk][Dv]\n"
        "  --dtype f32|bf16|f16           type the kernel reads q, k, v in (default f32); inputs are\n"
        "                                 rounded to it on load (nearest even); g and beta stay f32\n"
        "  --capture                      also write states.npy\n"
        "  --backend cpu|cuda             (default cpu; cuda: tensors are copied to GPU 0 and back)\n"
        "  --algo auto|recurrent|chunked  (default auto)\n"
        "  --precision default|f32|bf16  operand precision of the chunked products (default: f32 on\n"
        "                                the CPU, tensor cores on CUDA; bf16: vdpbf16ps where the CPU\n"
        "                                has avx512_bf16, tensor cores on CUDA)\n"
        "  --threads N                    CPU threads, 0 = all cores (default 0)\n"
        "  --isa auto|scalar|avx2|avx512  force the CPU kernels' instruction set (default auto)\n"
        "  --help                         this text\n"
        "\n"
        "Exit status: 0 success; 1 data error (missing or malformed file, wrong dtype, rank or shape,\n"
        "Hv not a multiple of Hk, bad cu_seqlens, library error, --out not writable); 2 usage error\n"
        "(unknown option, bad option value, missing --in or --out). Errors are one line on stderr.\n");
}

/* ---- options -------------------------------------------------------------------------------- */

typedef struct run_opts {
    const char *in, *out;
    gdn_gate gate;
    gdn_head_map heads;
    double scale;
    int have_scale;
    int qk_l2norm;
    gdn_state_layout layout;
    gdn_dtype dtype;
    int capture;
    gdn_backend backend;
    gdn_algo algo;
    gdn_precision precision;
    int threads;
    gdn_isa isa;
} run_opts;

enum {
    O_IN, O_OUT, O_GATE, O_HEADS, O_SCALE, O_L2, O_LAYOUT, O_DTYPE, O_CAPTURE, O_BACKEND, O_ALGO,
    O_THREADS, O_ISA, O_PRECISION
};

static const tool_opt run_options[] = {
    {"--in", 1}, {"--out", 1}, {"--gate", 1}, {"--heads", 1}, {"--scale", 1}, {"--qk-l2norm", 0},
    {"--state-layout", 1}, {"--dtype", 1}, {"--capture", 0}, {"--backend", 1}, {"--algo", 1},
    {"--threads", 1}, {"--isa", 1}, {"--precision", 1}, {NULL, 0}};

static const char *const gate_names[] = {"log", "linear", "neglog", "raw", NULL};
static const char *const heads_names[] = {"grouped", "tiled", NULL};
static const char *const layout_names[] = {"vk", "kv", NULL};

/* 0: parsed; 1: --help shown; -1: usage error reported. */
static int parse_options(int argc, char **argv, run_opts *o)
{
    int i = 1;
    memset(o, 0, sizeof *o);
    while (i < argc) {
        const char *val;
        long long n;
        int k = tool_next_opt(CMD, argc, argv, &i, run_options, &val), e;
        if (k == TOOL_OPT_HELP) {
            cmd_run_help();
            return 1;
        }
        if (k < 0)
            return -1;
        switch (k) {
        case O_IN:
        case O_OUT:
            if (val[0] == '\0') {
                tool_error(CMD, "%s: empty directory name", run_options[k].name);
                return -1;
            }
            if (k == O_IN)
                o->in = val;
            else
                o->out = val;
            break;
        case O_GATE:
            if ((e = tool_parse_enum(CMD, "--gate", val, gate_names)) < 0)
                return -1;
            o->gate = (gdn_gate)e;
            break;
        case O_HEADS:
            if ((e = tool_parse_enum(CMD, "--heads", val, heads_names)) < 0)
                return -1;
            o->heads = (gdn_head_map)e;
            break;
        case O_SCALE:
            if (tool_parse_double(CMD, "--scale", val, &o->scale) != 0)
                return -1;
            if ((float)o->scale == 0.0f || !isfinite((float)o->scale)) {
                tool_error(CMD, "--scale: invalid value '%s' (expected a finite nonzero float32 number)", val);
                return -1;
            }
            o->have_scale = 1;
            break;
        case O_L2:
            o->qk_l2norm = 1;
            break;
        case O_LAYOUT:
            if ((e = tool_parse_enum(CMD, "--state-layout", val, layout_names)) < 0)
                return -1;
            o->layout = (gdn_state_layout)e;
            break;
        case O_DTYPE:
            if ((e = tool_parse_enum(CMD, "--dtype", val, tool_dtype_names)) < 0)
                return -1;
            o->dtype = (gdn_dtype)e;
            break;
        case O_CAPTURE:
            o->capture = 1;
            break;
        case O_BACKEND:
            if ((e = tool_parse_enum(CMD, "--backend", val, tool_backend_names)) < 0)
                return -1;
            o->backend = (gdn_backend)e;
            break;
        case O_ALGO:
            if ((e = tool_parse_enum(CMD, "--algo", val, tool_algo_names)) < 0)
                return -1;
            o->algo = (gdn_algo)e;
            break;
        case O_PRECISION:
            if ((e = tool_parse_enum(CMD, "--precision", val, tool_precision_names)) < 0)
                return -1;
            o->precision = (gdn_precision)e;
            break;
        case O_THREADS:
            if (tool_parse_int(CMD, "--threads", val, 0, 4096, &n) != 0)
                return -1;
            o->threads = (int)n;
            break;
        case O_ISA:
            if ((e = tool_parse_enum(CMD, "--isa", val, tool_isa_names)) < 0)
                return -1;
            o->isa = (gdn_isa)e;
            break;
        default:
            break;
        }
    }
    if (!o->in) {
        tool_error(CMD, "missing --in DIR (see gdn run --help)");
        return -1;
    }
    if (!o->out) {
        tool_error(CMD, "missing --out DIR (see gdn run --help)");
        return -1;
    }
    return 0;
}

/* ---- output directory and temporary files --------------------------------------------------- */

#define N_OUTPUTS 3

typedef struct out_files {
    const char *dir;
    int created_dir;
    char tmp[N_OUTPUTS][4096];   /* temporary names ("" = none) */
    char final[N_OUTPUTS][4096]; /* names after rename */
    int renamed[N_OUTPUTS];
} out_files;

static int prepare_out_dir(out_files *of)
{
    struct stat st;
    char probe[4096];
    int fd;
    if (stat(of->dir, &st) != 0) {
        if (errno != ENOENT) {
            tool_error(CMD, "--out %s: cannot use it as the output directory: %s", of->dir, strerror(errno));
            return -1;
        }
        if (mkdir(of->dir, 0777) != 0) {
            tool_error(CMD, "--out %s: cannot create the directory: %s", of->dir, strerror(errno));
            return -1;
        }
        of->created_dir = 1;
    } else if (!S_ISDIR(st.st_mode)) {
        tool_error(CMD, "--out %s: exists and is not a directory", of->dir);
        return -1;
    }
    if (snprintf(probe, sizeof probe, "%s/.gdn-probe-XXXXXX", of->dir) >= (int)sizeof probe) {
        tool_error(CMD, "--out %s: path too long", of->dir);
        return -1;
    }
    fd = mkstemp(probe);
    if (fd < 0) {
        tool_error(CMD, "--out %s: not writable: %s", of->dir, strerror(errno));
        if (of->created_dir)
            rmdir(of->dir);
        return -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

/* Remove every temporary and every file this run renamed into place; rmdir --out if created. */
static void discard_outputs(out_files *of)
{
    int i;
    for (i = 0; i < N_OUTPUTS; i++) {
        if (of->renamed[i])
            unlink(of->final[i]);
        else if (of->tmp[i][0])
            unlink(of->tmp[i]);
        of->tmp[i][0] = '\0';
        of->renamed[i] = 0;
    }
    if (of->created_dir)
        rmdir(of->dir);
}

/* Write one output to a temporary file in --out. */
static int write_output(out_files *of, int slot, const char *name, int ndim, const int64_t *shape,
                        const float *data)
{
    char err[512];
    FILE *f;
    int fd, rc;
    snprintf(of->final[slot], sizeof of->final[slot], "%s/%s", of->dir, name);
    if (snprintf(of->tmp[slot], sizeof of->tmp[slot], "%s/.%s.XXXXXX", of->dir, name) >= (int)sizeof of->tmp[slot]) {
        of->tmp[slot][0] = '\0';
        tool_error(CMD, "--out %s: path too long", of->dir);
        return -1;
    }
    fd = mkstemp(of->tmp[slot]);
    if (fd < 0) {
        of->tmp[slot][0] = '\0';
        tool_error(CMD, "%s: cannot create a file in %s: %s", name, of->dir, strerror(errno));
        return -1;
    }
    fchmod(fd, 0644);
    f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        tool_error(CMD, "%s: cannot write in %s: %s", name, of->dir, strerror(errno));
        return -1;
    }
    rc = npy_write_stream(f, "<f4", ndim, shape, data, err, sizeof err);
    if (fclose(f) != 0 && rc == NPY_OK) {
        snprintf(err, sizeof err, "write error: %s", strerror(errno));
        rc = NPY_EIO;
    }
    if (rc != NPY_OK) {
        tool_error(CMD, "%s: %s", name, err);
        return -1;
    }
    return 0;
}

/* Rename all temporaries into place, o.npy last. */
static int commit_outputs(out_files *of)
{
    static const int order[N_OUTPUTS] = {1, 2, 0};
    int j;
    for (j = 0; j < N_OUTPUTS; j++) {
        int i = order[j];
        if (!of->tmp[i][0])
            continue;
        if (rename(of->tmp[i], of->final[i]) != 0) {
            tool_error(CMD, "%s: cannot rename into place: %s", of->final[i], strerror(errno));
            return -1;
        }
        of->renamed[i] = 1;
    }
    return 0;
}

/* ---- inputs --------------------------------------------------------------------------------- */

typedef struct input {
    const char *file; /* "q.npy" */
    npy_array a;
    int present;
} input;

/* Load DIR/file. Missing optional files leave present = 0. */
static int load_input(const char *dir, input *in, const char *file, int required)
{
    char path[4096], err[768];
    int rc;
    in->file = file;
    in->present = 0;
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) {
        tool_error(CMD, "--in %s: path too long", dir);
        return -1;
    }
    rc = npy_load(path, &in->a, err, sizeof err);
    if (rc == NPY_ENOENT && !required)
        return 0;
    if (rc != NPY_OK) {
        if (rc == NPY_ENOENT)
            tool_error(CMD, "%s: missing: %s", file, err);
        else
            tool_error(CMD, "%s: %s", file, err);
        return -1;
    }
    in->present = 1;
    return 0;
}

static int is_float_tensor(const npy_array *a)
{
    return (a->kind == 'f' && !a->big_endian && (a->itemsize == 4 || a->itemsize == 2) && a->descr[0] != '>');
}

static int check_float(const input *in)
{
    if (is_float_tensor(&in->a))
        return 0;
    tool_error(CMD, "%s: unsupported dtype '%s' (expected float32 '<f4' or float16 '<f2')", in->file, in->a.descr);
    return -1;
}

static void shape_str(char *buf, size_t len, const npy_array *a)
{
    npy_format_shape(buf, len, a->ndim, a->shape);
}

/* The shape of in must equal want[0..ndim); what explains where the expected dims come from. */
static int check_shape(const input *in, int ndim, const int64_t *want, const char *what)
{
    char ws[256], gs[256];
    int i, ok = in->a.ndim == ndim;
    for (i = 0; ok && i < ndim; i++)
        ok = in->a.shape[i] == want[i];
    if (ok)
        return 0;
    npy_format_shape(ws, sizeof ws, ndim, want);
    shape_str(gs, sizeof gs, &in->a);
    if (in->a.ndim != ndim)
        tool_error(CMD, "%s: expected %d dimensions %s (%s), got %d: %s", in->file, ndim, ws, what, in->a.ndim, gs);
    else
        tool_error(CMD, "%s: expected shape %s (%s), got %s", in->file, ws, what, gs);
    return -1;
}

/* Convert a float32/float16 array to dtype (a new buffer), rounding as the library does. */
static void *convert(const npy_array *a, gdn_dtype dtype)
{
    const gdn_dtype from = a->itemsize == 4 ? GDN_DTYPE_F32 : GDN_DTYPE_F16;
    const int64_t n = a->count;
    int64_t i;
    void *out = malloc(n > 0 ? (size_t)n * gdn_dtype_size(dtype) : 1);
    if (!out)
        return NULL;
    if (dtype == from)
        memcpy(out, a->data, (size_t)n * gdn_dtype_size(dtype));
    else
        for (i = 0; i < n; i++)
            gdn_store_f32(out, dtype, i, gdn_load_f32(a->data, from, i));
    return out;
}

static int64_t cu_at(const npy_array *a, int64_t i)
{
    return a->itemsize == 4 ? (int64_t)((const int32_t *)a->data)[i] : ((const int64_t *)a->data)[i];
}

/* Nothing may be written through a NULL view even when it is empty: a 1-byte dummy. */
static void *alloc_bytes(int64_t n)
{
    return malloc(n > 0 ? (size_t)n : 1);
}

/* ---- the command ---------------------------------------------------------------------------- */

enum { I_Q, I_K, I_V, I_G, I_BETA, I_ALOG, I_DTB, I_STATE, I_CU, N_INPUTS };

static void report_forward_error(gdn_context *ctx, const run_opts *o, gdn_status s)
{
    if (o->algo == GDN_ALGO_CHUNKED && s == GDN_STATUS_UNSUPPORTED)
        tool_error(CMD, "--algo chunked: %s", gdn_last_error(ctx));
    else
        tool_error(CMD, "gdn_forward failed (%s): %s", gdn_status_string(s), gdn_last_error(ctx));
}

/* --backend cuda: copy every tensor of t (host memory, contiguous, as built by cmd_run) to the
 * device, run there, wait (gdn_context_synchronize reports errors found on the device), and copy
 * the state, output and captures back into t's host buffers. 0 on success; else reported. */
static int run_on_device(gdn_context *ctx, const run_opts *o, const gdn_problem *p, const gdn_batch *b,
                         const gdn_tensors *t, int64_t N)
{
    enum { Q, K, V, G, BETA, ALOG, DTB, POOL, OUT, CAPS, CU, NBUF };
    const gdn_tensor *ten[NBUF] = {&t->q, &t->k, &t->v, &t->g, &t->beta, NULL, NULL, &t->state.pool, &t->out,
                                   &t->capture.states, NULL};
    const size_t es[NBUF] = {gdn_dtype_size(p->dtype), gdn_dtype_size(p->dtype), gdn_dtype_size(p->dtype), 4, 4,
                             4, 4, 4, 4, 4, b->cu_seqlens_type == GDN_INDEX_I64 ? 8 : 4};
    const void *host[NBUF] = {t->q.data, t->k.data, t->v.data, t->g.data, t->beta.data, t->A_log, t->dt_bias,
                              t->state.pool.data, t->out.data, t->capture.states.data, b->cu_seqlens};
    size_t bytes[NBUF];
    void *dev[NBUF] = {0};
    gdn_tensors dt = *t;
    gdn_batch db = *b;
    gdn_status s;
    int rc = -1;
    for (int i = 0; i < NBUF; i++) {
        size_t n = 1;
        if (ten[i])
            for (int d = 0; d < ten[i]->ndim; d++)
                n *= (size_t)ten[i]->shape[d];
        else
            n = i == CU ? (size_t)(N + 1) : (size_t)p->num_v_heads;
        bytes[i] = n * es[i];
        if (!host[i])
            continue;
        if (i == OUT || i == CAPS ? tool_dev_alloc(&dev[i], bytes[i]) : tool_dev_upload(&dev[i], host[i], bytes[i])) {
            tool_error(CMD, "--backend cuda: %s", tool_dev_error());
            goto done;
        }
    }
    dt.q.data = dev[Q];
    dt.k.data = dev[K];
    dt.v.data = dev[V];
    dt.g.data = dev[G];
    dt.beta.data = dev[BETA];
    dt.A_log = (const float *)dev[ALOG];
    dt.dt_bias = (const float *)dev[DTB];
    dt.state.pool.data = dev[POOL];
    dt.out.data = dev[OUT];
    dt.capture.states.data = dev[CAPS];
    db.cu_seqlens = dev[CU];
    s = gdn_forward(ctx, p, &db, &dt);
    if (s == GDN_STATUS_SUCCESS)
        s = gdn_context_synchronize(ctx);
    if (s != GDN_STATUS_SUCCESS) {
        report_forward_error(ctx, o, s);
        goto done;
    }
    if (tool_dev_download((void *)host[POOL], dev[POOL], bytes[POOL]) ||
        tool_dev_download((void *)host[OUT], dev[OUT], bytes[OUT]) ||
        (host[CAPS] && tool_dev_download((void *)host[CAPS], dev[CAPS], bytes[CAPS]))) {
        tool_error(CMD, "--backend cuda: %s", tool_dev_error());
        goto done;
    }
    rc = 0;
done:
    for (int i = 0; i < NBUF; i++)
        tool_dev_free(dev[i]);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    out_files of;
    input in[N_INPUTS];
    struct stat st;
    gdn_context *ctx = NULL;
    gdn_problem p;
    gdn_batch b;
    gdn_tensors t;
    void *qd = NULL, *kd = NULL, *vd = NULL;
    float *gd = NULL, *betad = NULL, *alog = NULL, *dtb = NULL, *pool = NULL, *outd = NULL, *caps = NULL;
    int64_t B, T, Hk, Dk, Hv, Dv, N, packed = 0;
    int64_t sshape[4], cshape[5], oshape[4];
    int rc = TOOL_EXIT_DATA, i, r;
    char w[256];

    r = parse_options(argc, argv, &o);
    if (r != 0)
        return r > 0 ? TOOL_EXIT_OK : TOOL_EXIT_USAGE;

    memset(&of, 0, sizeof of);
    memset(in, 0, sizeof in);
    of.dir = o.out;

    if (stat(o.in, &st) != 0) {
        tool_error(CMD, "--in %s: %s", o.in, strerror(errno));
        return TOOL_EXIT_DATA;
    }
    if (!S_ISDIR(st.st_mode)) {
        tool_error(CMD, "--in %s: not a directory", o.in);
        return TOOL_EXIT_DATA;
    }
    if (prepare_out_dir(&of) != 0)
        return TOOL_EXIT_DATA;

    /* Load and check every input. */
    if (load_input(o.in, &in[I_Q], "q.npy", 1) || check_float(&in[I_Q]))
        goto done;
    if (in[I_Q].a.ndim != 4) {
        shape_str(w, sizeof w, &in[I_Q].a);
        tool_error(CMD, "q.npy: expected 4 dimensions [B,T,Hk,Dk], got %d: %s", in[I_Q].a.ndim, w);
        goto done;
    }
    B = in[I_Q].a.shape[0];
    T = in[I_Q].a.shape[1];
    Hk = in[I_Q].a.shape[2];
    Dk = in[I_Q].a.shape[3];
    if (B < 1 || Hk < 1 || Dk < 1) {
        shape_str(w, sizeof w, &in[I_Q].a);
        tool_error(CMD, "q.npy: B, Hk and Dk must be at least 1, got shape %s [B,T,Hk,Dk]", w);
        goto done;
    }
    if (Dk > 256) {
        tool_error(CMD, "q.npy: Dk=%lld is larger than 256, the most this version supports", (long long)Dk);
        goto done;
    }
    if (Hk > INT32_MAX || B > INT32_MAX || T > INT32_MAX) {
        shape_str(w, sizeof w, &in[I_Q].a);
        tool_error(CMD, "q.npy: shape %s is too large", w);
        goto done;
    }
    if (load_input(o.in, &in[I_K], "k.npy", 1) || check_float(&in[I_K]) ||
        check_shape(&in[I_K], 4, in[I_Q].a.shape, "B,T,Hk,Dk: the shape of q.npy"))
        goto done;
    if (load_input(o.in, &in[I_V], "v.npy", 1) || check_float(&in[I_V]))
        goto done;
    if (in[I_V].a.ndim != 4 || in[I_V].a.shape[0] != B || in[I_V].a.shape[1] != T || in[I_V].a.shape[2] < 1 ||
        in[I_V].a.shape[3] < 1) {
        char gs[256];
        shape_str(gs, sizeof gs, &in[I_V].a);
        tool_error(CMD, "v.npy: expected shape [%lld,%lld,Hv,Dv] (B,T from q.npy; Hv, Dv >= 1), got %s", (long long)B,
                   (long long)T, gs);
        goto done;
    }
    Hv = in[I_V].a.shape[2];
    Dv = in[I_V].a.shape[3];
    if (Dv > 256) {
        tool_error(CMD, "v.npy: Dv=%lld is larger than 256, the most this version supports", (long long)Dv);
        goto done;
    }
    if (Hv > INT32_MAX || Hv % Hk != 0) {
        tool_error(CMD, "v.npy: Hv=%lld value heads is not a multiple of Hk=%lld key heads (q.npy)", (long long)Hv,
                   (long long)Hk);
        goto done;
    }
    {
        int64_t gs[3] = {B, T, Hv};
        const char *why = o.gate == GDN_GATE_RAW ? "B,T,Hv from q.npy and v.npy; the raw a" : "B,T,Hv from q.npy and v.npy";
        if (load_input(o.in, &in[I_G], "g.npy", 1) || check_float(&in[I_G]) || check_shape(&in[I_G], 3, gs, why))
            goto done;
        why = o.gate == GDN_GATE_RAW ? "B,T,Hv from q.npy and v.npy; the raw b" : "B,T,Hv from q.npy and v.npy";
        if (load_input(o.in, &in[I_BETA], "beta.npy", 1) || check_float(&in[I_BETA]) ||
            check_shape(&in[I_BETA], 3, gs, why))
            goto done;
    }
    if (o.gate == GDN_GATE_RAW) {
        if (load_input(o.in, &in[I_ALOG], "A_log.npy", 1) || check_float(&in[I_ALOG]) ||
            check_shape(&in[I_ALOG], 1, &Hv, "Hv from v.npy, needed by --gate raw"))
            goto done;
        if (load_input(o.in, &in[I_DTB], "dt_bias.npy", 1) || check_float(&in[I_DTB]) ||
            check_shape(&in[I_DTB], 1, &Hv, "Hv from v.npy, needed by --gate raw"))
            goto done;
    }

    /* cu_seqlens: packed sequences. */
    N = B;
    if (load_input(o.in, &in[I_CU], "cu_seqlens.npy", 0))
        goto done;
    if (in[I_CU].present) {
        const npy_array *cu = &in[I_CU].a;
        int64_t n1;
        if (!(cu->kind == 'i' && (cu->itemsize == 4 || cu->itemsize == 8) && !cu->big_endian && cu->descr[0] != '>')) {
            tool_error(CMD, "cu_seqlens.npy: unsupported dtype '%s' (expected int32 '<i4' or int64 '<i8')", cu->descr);
            goto done;
        }
        if (cu->ndim != 1 || cu->shape[0] < 2) {
            shape_str(w, sizeof w, cu);
            tool_error(CMD, "cu_seqlens.npy: expected shape [N+1] with N >= 1 sequences, got %s", w);
            goto done;
        }
        if (B != 1) {
            tool_error(CMD, "cu_seqlens.npy: packed sequences need B=1, but q.npy has B=%lld", (long long)B);
            goto done;
        }
        n1 = cu->shape[0];
        if (n1 - 1 > INT32_MAX) {
            tool_error(CMD, "cu_seqlens.npy: too many sequences");
            goto done;
        }
        if (cu_at(cu, 0) != 0) {
            tool_error(CMD, "cu_seqlens.npy: must start at 0, got cu_seqlens[0]=%lld", (long long)cu_at(cu, 0));
            goto done;
        }
        for (i = 1; i < n1; i++) {
            int64_t prev = cu_at(cu, i - 1), cur = cu_at(cu, i);
            if (cur < prev) {
                tool_error(CMD, "cu_seqlens.npy: offsets must be non-decreasing, got cu_seqlens[%d]=%lld < cu_seqlens[%d]=%lld",
                           i, (long long)cur, i - 1, (long long)prev);
                goto done;
            }
            if (cur > T) {
                tool_error(CMD, "cu_seqlens.npy: cu_seqlens[%d]=%lld is past T=%lld (tokens in q.npy)", i, (long long)cur,
                           (long long)T);
                goto done;
            }
        }
        if (cu_at(cu, n1 - 1) != T) {
            tool_error(CMD, "cu_seqlens.npy: must end at T=%lld (tokens in q.npy), got cu_seqlens[%lld]=%lld",
                       (long long)T, (long long)(n1 - 1), (long long)cu_at(cu, n1 - 1));
            goto done;
        }
        N = n1 - 1;
        packed = 1;
    }

    /* state: [N,Hv,Dv,Dk] (vk) or [N,Hv,Dk,Dv] (kv). */
    sshape[0] = N;
    sshape[1] = Hv;
    sshape[2] = o.layout == GDN_STATE_VK ? Dv : Dk;
    sshape[3] = o.layout == GDN_STATE_VK ? Dk : Dv;
    if (load_input(o.in, &in[I_STATE], "state.npy", 0))
        goto done;
    if (in[I_STATE].present) {
        char why[160];
        snprintf(why, sizeof why, "%s, with %s", o.layout == GDN_STATE_VK ? "N,Hv,Dv,Dk" : "N,Hv,Dk,Dv (--state-layout kv)",
                 packed ? "N sequences from cu_seqlens.npy" : "N = B from q.npy");
        if (check_float(&in[I_STATE]) || check_shape(&in[I_STATE], 4, sshape, why))
            goto done;
    }

    /* Sizes of what is allocated below: refuse absurd ones before multiplying in int64. */
    if ((double)N * (double)Hv * (double)Dk * (double)Dv > 0x1p56 ||
        (double)B * (double)T * (double)Hv * (double)Dv * (o.capture ? (double)Dk : 1.0) > 0x1p56) {
        tool_error(CMD, "%s: the %s would be too large", o.capture ? "--capture" : "state.npy",
                   o.capture ? "captured states" : "state");
        goto done;
    }

    /* Convert. */
    {
        int64_t nstate = N * Hv * Dk * Dv;
        int64_t ncap = B * T * Hv * Dk * Dv;
        qd = convert(&in[I_Q].a, o.dtype);
        kd = convert(&in[I_K].a, o.dtype);
        vd = convert(&in[I_V].a, o.dtype);
        gd = convert(&in[I_G].a, GDN_DTYPE_F32);
        betad = convert(&in[I_BETA].a, GDN_DTYPE_F32);
        if (o.gate == GDN_GATE_RAW) {
            alog = convert(&in[I_ALOG].a, GDN_DTYPE_F32);
            dtb = convert(&in[I_DTB].a, GDN_DTYPE_F32);
        }
        if (in[I_STATE].present)
            pool = convert(&in[I_STATE].a, GDN_DTYPE_F32);
        else
            pool = calloc(nstate > 0 ? (size_t)nstate : 1, sizeof(float));
        outd = alloc_bytes(B * T * Hv * Dv * 4);
        if (!qd || !kd || !vd || !gd || !betad || !pool || !outd || (o.gate == GDN_GATE_RAW && (!alog || !dtb))) {
            tool_error(CMD, "out of memory for the inputs, state and output (%lld tokens)", (long long)(B * T));
            goto done;
        }
        if (o.capture) {
            caps = alloc_bytes(ncap * 4);
            if (!caps) {
                tool_error(CMD, "--capture: cannot allocate %.1f MiB for states.npy", (double)ncap * 4 / 1048576.0);
                goto done;
            }
        }
        /* The inputs as loaded are no longer needed. */
        for (i = 0; i < N_INPUTS; i++)
            if (i != I_CU)
                npy_free(&in[i].a);
    }

    ctx = tool_context_create(CMD, o.backend, o.threads, o.isa);
    if (!ctx)
        goto done;

    /* Problem, batch, tensors. */
    memset(&p, 0, sizeof p);
    p.num_k_heads = (int)Hk;
    p.num_v_heads = (int)Hv;
    p.k_dim = (int)Dk;
    p.v_dim = (int)Dv;
    p.head_map = o.heads;
    p.gate = o.gate;
    p.scale = o.have_scale ? (float)o.scale : 0.0f;
    p.qk_l2norm = o.qk_l2norm;
    p.state_layout = o.layout;
    p.dtype = o.dtype;
    p.out_dtype = GDN_DTYPE_F32;
    p.gate_dtype = GDN_DTYPE_F32;
    p.state_dtype = GDN_DTYPE_F32;
    p.algo = o.algo;
    p.precision = o.precision;

    memset(&b, 0, sizeof b);
    b.batch_size = B;
    b.seq_len = T;
    if (packed) {
        b.num_seqs = N;
        b.cu_seqlens = in[I_CU].a.data;
        b.cu_seqlens_type = in[I_CU].a.itemsize == 4 ? GDN_INDEX_I32 : GDN_INDEX_I64;
    } else {
        b.num_seqs = B;
    }

    memset(&t, 0, sizeof t);
    {
        int64_t qs[4] = {B, T, Hk, Dk}, vs[4] = {B, T, Hv, Dv}, gs[3] = {B, T, Hv};
        t.q = gdn_tensor_contiguous(qd, 4, qs);
        t.k = gdn_tensor_contiguous(kd, 4, qs);
        t.v = gdn_tensor_contiguous(vd, 4, vs);
        t.g = gdn_tensor_contiguous(gd, 3, gs);
        t.beta = gdn_tensor_contiguous(betad, 3, gs);
        t.out = gdn_tensor_contiguous(outd, 4, vs);
        memcpy(oshape, vs, sizeof oshape);
    }
    t.A_log = alog;
    t.dt_bias = dtb;
    t.state.pool = gdn_tensor_contiguous(pool, 4, sshape);
    t.state.read_slots = NULL;  /* slot n */
    t.state.write_slots = NULL; /* = read slot: in place */
    cshape[0] = B;
    cshape[1] = T;
    cshape[2] = Hv;
    cshape[3] = sshape[2];
    cshape[4] = sshape[3];
    if (o.capture) {
        t.capture.mode = GDN_CAPTURE_DENSE;
        t.capture.states = gdn_tensor_contiguous(caps, 5, cshape);
    }

    if (o.backend == GDN_BACKEND_CUDA) {
        if (run_on_device(ctx, &o, &p, &b, &t, N))
            goto done;
    } else {
        gdn_status s = gdn_forward(ctx, &p, &b, &t);
        if (s != GDN_STATUS_SUCCESS) {
            report_forward_error(ctx, &o, s);
            goto done;
        }
    }

    /* Outputs: temporaries first, then renamed into place. */
    if (write_output(&of, 1, "state.npy", 4, sshape, pool))
        goto done;
    if (o.capture && write_output(&of, 2, "states.npy", 5, cshape, caps))
        goto done;
    if (write_output(&of, 0, "o.npy", 4, oshape, outd))
        goto done;
    if (commit_outputs(&of))
        goto done;
    if (!o.capture) { /* a states.npy of an earlier run would not describe this one */
        char stale[4096];
        snprintf(stale, sizeof stale, "%s/states.npy", of.dir);
        unlink(stale);
    }
    rc = TOOL_EXIT_OK;

done:
    if (rc != TOOL_EXIT_OK)
        discard_outputs(&of);
    gdn_context_destroy(ctx);
    for (i = 0; i < N_INPUTS; i++)
        npy_free(&in[i].a);
    free(qd);
    free(kd);
    free(vd);
    free(gd);
    free(betad);
    free(alog);
    free(dtb);
    free(pool);
    free(outd);
    free(caps);
    return rc;
}
