/*
 * test_cli.c — end-to-end tests of the `gdn` command-line tool (DESIGN.md §3, the CLI contract).
 *
 * Registered by tests/CMakeLists.txt as
 *     add_test(NAME cli COMMAND test_cli $<TARGET_FILE:gdn_tool>)
 * and linked with gdn_internal plus tools/npy.c (include path tools/). argv[1] is the path of the
 * built `gdn` binary. Exit status 0 = every check passed.
 *
 * It writes .npy inputs into a temporary directory, runs `gdn run` (and the other commands) with
 * system(), and checks:
 *  - results against the float64 reference (gdn_ref_forward) on the same (rounded) inputs,
 *    relative RMS <= 1e-5: with and without state.npy, cu_seqlens int32 and int64 (with an empty
 *    sequence), --capture (and the last captured state equals the final state), --gate raw,
 *    --state-layout kv, float16 input files, --dtype bf16 and f16, .npy format versions 2.0/3.0;
 *  - every error path: exit status (1 data, 2 usage), exactly one line on stderr naming the file
 *    or option, and no o.npy (nor temporary file) left in --out.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check/check.h"
#include "check/rng.h"
#include "core/dtype.h"
#include "gdn/gdn.h"
#include "npy.h"
#include "ref/ref.h"

#define TOL 1e-5

static const char *g_gdn;   /* the binary */
static char g_root[512];    /* temporary directory */
static int g_fail, g_checks;
static char g_err[8192];    /* stderr of the last run */
static char g_out[65536];   /* stdout of the last run */

static void fail(const char *test, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *test, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL [%s] ", test);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    g_fail++;
}

static void expect(int cond, const char *test, const char *what)
{
    g_checks++;
    if (!cond)
        fail(test, "%s", what);
}

/* ---- files ---------------------------------------------------------------------------------- */

static void path_of(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void mkdir_p1(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "test_cli: cannot create %s: %s\n", dir, strerror(errno));
        exit(2);
    }
}

static void save(const char *dir, const char *name, const char *descr, int ndim, const int64_t *shape,
                 const void *data)
{
    char path[1024], err[512];
    path_of(path, sizeof path, dir, name);
    if (npy_save(path, descr, ndim, shape, data, err, sizeof err) != NPY_OK) {
        fprintf(stderr, "test_cli: %s: %s\n", path, err);
        exit(2);
    }
}

static void save_f32(const char *dir, const char *name, int ndim, const int64_t *shape, const float *data,
                     int as_f16)
{
    int64_t n = 1, i;
    int d;
    for (d = 0; d < ndim; d++)
        n *= shape[d];
    if (!as_f16) {
        save(dir, name, "<f4", ndim, shape, data);
        return;
    }
    uint16_t *h = malloc((size_t)(n ? n : 1) * 2);
    for (i = 0; i < n; i++)
        h[i] = gdn_f32_to_f16(data[i]);
    save(dir, name, "<f2", ndim, shape, h);
    free(h);
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n) {
        fprintf(stderr, "test_cli: cannot write %s\n", path);
        exit(2);
    }
    fclose(f);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Any file in dir whose name starts with prefix (temporaries are ".o.npy.XXXXXX" etc.). */
static int has_entry_prefix(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            found = 1;
    closedir(d);
    return found;
}

static void read_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0;
    buf[0] = '\0';
    if (!f)
        return;
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Run `gdn <args>`; returns the exit status (-1 if it did not exit normally, e.g. a crash). */
static int run_gdn(const char *args)
{
    char cmd[8192], errp[1024], outp[1024];
    int st;
    path_of(errp, sizeof errp, g_root, "stderr.txt");
    path_of(outp, sizeof outp, g_root, "stdout.txt");
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", g_gdn, args, outp, errp);
    st = system(cmd);
    read_file(errp, g_err, sizeof g_err);
    read_file(outp, g_out, sizeof g_out);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        if (*s == '\n')
            n++;
    return n;
}

/* ---- problems ------------------------------------------------------------------------------- */

typedef struct prob {
    int B, T, Hk, Hv, Dk, Dv;
    int n_seqs;        /* > 0: packed, B = 1 */
    int64_t cu[17];
    int cu64;          /* write cu_seqlens as int64 */
    gdn_gate gate;
    gdn_head_map heads;
    double scale;      /* 0 = default */
    int l2;
    gdn_state_layout layout;
    gdn_dtype dtype;   /* --dtype */
    int f16_files;     /* inputs written as float16 */
    int with_state;
    int capture;
    int npy_version;   /* 0/1 = 1.0; 2 or 3: q.npy written with that header version */
    float *q, *k, *v, *g, *beta, *alog, *dtb, *state;
} prob;

static int64_t nseq(const prob *p)
{
    return p->n_seqs > 0 ? p->n_seqs : p->B;
}

static float rnd_f16(float x, int f16)
{
    return f16 ? gdn_f16_to_f32(gdn_f32_to_f16(x)) : x;
}

static void gen(prob *p, uint64_t seed)
{
    gdn_rng r;
    int64_t nq = (int64_t)p->B * p->T * p->Hk * p->Dk, nv = (int64_t)p->B * p->T * p->Hv * p->Dv;
    int64_t ng = (int64_t)p->B * p->T * p->Hv, ns = nseq(p) * p->Hv * p->Dk * p->Dv, i;
    gdn_rng_seed(&r, seed);
    p->q = malloc((size_t)(nq + 1) * 4);
    p->k = malloc((size_t)(nq + 1) * 4);
    p->v = malloc((size_t)(nv + 1) * 4);
    p->g = malloc((size_t)(ng + 1) * 4);
    p->beta = malloc((size_t)(ng + 1) * 4);
    p->alog = malloc((size_t)p->Hv * 4);
    p->dtb = malloc((size_t)p->Hv * 4);
    p->state = malloc((size_t)(ns + 1) * 4);
    for (i = 0; i < nq; i++) {
        /* |q|, |k| about 1 per row unless the kernel normalises them */
        double sc = p->l2 ? 1.0 : 1.0 / sqrt((double)p->Dk);
        p->q[i] = rnd_f16((float)(gdn_rng_normal(&r) * sc), p->f16_files);
        p->k[i] = rnd_f16((float)(gdn_rng_normal(&r) * sc), p->f16_files);
    }
    for (i = 0; i < nv; i++)
        p->v[i] = rnd_f16((float)gdn_rng_normal(&r), p->f16_files);
    for (i = 0; i < ng; i++) {
        double gv;
        if (p->gate == GDN_GATE_LOG)
            gv = -0.5 * gdn_rng_uniform(&r);
        else if (p->gate == GDN_GATE_LINEAR)
            gv = 0.6 + 0.4 * gdn_rng_uniform(&r);
        else if (p->gate == GDN_GATE_NEGLOG)
            gv = 0.5 * gdn_rng_uniform(&r);
        else
            gv = gdn_rng_normal(&r); /* raw a */
        p->g[i] = rnd_f16((float)gv, p->f16_files);
        p->beta[i] = rnd_f16(p->gate == GDN_GATE_RAW ? (float)gdn_rng_normal(&r) : (float)gdn_rng_uniform(&r),
                             p->f16_files);
    }
    for (i = 0; i < p->Hv; i++) {
        p->alog[i] = (float)log(1.0 + 3.0 * gdn_rng_uniform(&r));
        p->dtb[i] = (float)(gdn_rng_normal(&r) * 0.5 - 1.0);
    }
    for (i = 0; i < ns; i++)
        p->state[i] = p->with_state ? (float)(0.3 * gdn_rng_normal(&r)) : 0.0f;
}

static void free_prob(prob *p)
{
    free(p->q);
    free(p->k);
    free(p->v);
    free(p->g);
    free(p->beta);
    free(p->alog);
    free(p->dtb);
    free(p->state);
}

/* Rewrite the header of an existing version 1.0 .npy file as version 2.0 or 3.0. */
static void rewrite_version(const char *path, int version)
{
    FILE *f = fopen(path, "rb");
    long len;
    unsigned char *buf, *nb;
    size_t hlen;
    if (!f)
        exit(2);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len);
    if (fread(buf, 1, (size_t)len, f) != (size_t)len)
        exit(2);
    fclose(f);
    hlen = (size_t)buf[8] | ((size_t)buf[9] << 8);
    nb = malloc((size_t)len + 2);
    memcpy(nb, buf, 8);
    nb[6] = (unsigned char)version;
    nb[8] = (unsigned char)(hlen & 0xff);
    nb[9] = (unsigned char)(hlen >> 8);
    nb[10] = 0;
    nb[11] = 0;
    memcpy(nb + 12, buf + 10, (size_t)len - 10);
    write_bytes(path, nb, (size_t)len + 2);
    free(buf);
    free(nb);
}

static void write_prob(const prob *p, const char *dir)
{
    int64_t qs[4] = {p->B, p->T, p->Hk, p->Dk}, vs[4] = {p->B, p->T, p->Hv, p->Dv}, gs[3] = {p->B, p->T, p->Hv};
    int64_t hv = p->Hv;
    int64_t ss[4] = {nseq(p), p->Hv, p->layout == GDN_STATE_VK ? p->Dv : p->Dk, p->layout == GDN_STATE_VK ? p->Dk : p->Dv};
    mkdir_p1(dir);
    save_f32(dir, "q.npy", 4, qs, p->q, p->f16_files);
    save_f32(dir, "k.npy", 4, qs, p->k, p->f16_files);
    save_f32(dir, "v.npy", 4, vs, p->v, p->f16_files);
    save_f32(dir, "g.npy", 3, gs, p->g, p->f16_files);
    save_f32(dir, "beta.npy", 3, gs, p->beta, p->f16_files);
    if (p->gate == GDN_GATE_RAW) {
        save_f32(dir, "A_log.npy", 1, &hv, p->alog, 0);
        save_f32(dir, "dt_bias.npy", 1, &hv, p->dtb, 0);
    }
    if (p->with_state)
        save_f32(dir, "state.npy", 4, ss, p->state, 0);
    if (p->n_seqs > 0) {
        int64_t n1 = p->n_seqs + 1;
        if (p->cu64) {
            save(dir, "cu_seqlens.npy", "<i8", 1, &n1, p->cu);
        } else {
            int32_t c32[17];
            int i;
            for (i = 0; i < n1; i++)
                c32[i] = (int32_t)p->cu[i];
            save(dir, "cu_seqlens.npy", "<i4", 1, &n1, c32);
        }
    }
    if (p->npy_version >= 2) {
        char path[1024];
        path_of(path, sizeof path, dir, "q.npy");
        rewrite_version(path, p->npy_version);
    }
}

static void options_of(const prob *p, char *buf, size_t len)
{
    static const char *gates[] = {"log", "linear", "neglog", "raw"};
    static const char *dts[] = {"f32", "bf16", "f16"};
    size_t n = 0;
    buf[0] = '\0';
    n += (size_t)snprintf(buf + n, len - n, " --gate %s --dtype %s", gates[p->gate], dts[p->dtype]);
    if (p->heads == GDN_HEADS_TILED)
        n += (size_t)snprintf(buf + n, len - n, " --heads tiled");
    if (p->scale != 0.0)
        n += (size_t)snprintf(buf + n, len - n, " --scale %.9g", p->scale);
    if (p->l2)
        n += (size_t)snprintf(buf + n, len - n, " --qk-l2norm");
    if (p->layout == GDN_STATE_KV)
        n += (size_t)snprintf(buf + n, len - n, " --state-layout kv");
    if (p->capture)
        n += (size_t)snprintf(buf + n, len - n, " --capture");
}

/* Load an output .npy: must be '<f4' with the given shape. */
static float *load_out(const char *test, const char *dir, const char *name, int ndim, const int64_t *shape)
{
    char path[1024], err[512];
    npy_array a;
    int i, ok;
    path_of(path, sizeof path, dir, name);
    if (npy_load(path, &a, err, sizeof err) != NPY_OK) {
        fail(test, "%s: %s", name, err);
        return NULL;
    }
    ok = strcmp(a.descr, "<f4") == 0 && a.ndim == ndim;
    for (i = 0; ok && i < ndim; i++)
        ok = a.shape[i] == shape[i];
    if (!ok) {
        char s1[128], s2[128];
        npy_format_shape(s1, sizeof s1, ndim, shape);
        npy_format_shape(s2, sizeof s2, a.ndim, a.shape);
        fail(test, "%s: expected <f4 %s, got %s %s", name, s1, a.descr, s2);
        npy_free(&a);
        return NULL;
    }
    return a.data; /* caller frees */
}

/* kv -> vk transpose of n heads of [Dk][Dv]. */
static void to_vk(float *dst, const float *src, int64_t heads, int Dk, int Dv)
{
    int64_t h;
    int i, j;
    for (h = 0; h < heads; h++)
        for (i = 0; i < Dk; i++)
            for (j = 0; j < Dv; j++)
                dst[h * Dk * Dv + (int64_t)j * Dk + i] = src[h * Dk * Dv + (int64_t)i * Dv + j];
}

static void *to_half(const float *x, int64_t n, gdn_dtype t)
{
    uint16_t *h = malloc((size_t)(n + 1) * 2);
    int64_t i;
    for (i = 0; i < n; i++)
        gdn_store_f32(h, t, i, x[i]);
    return h;
}

/* The reference on the same inputs the tool saw (after its conversion to --dtype). */
static int reference(const prob *p, gdn_ref_result *rr)
{
    gdn_problem pr;
    gdn_batch b;
    gdn_tensors t;
    char err[512];
    int64_t qs[4] = {p->B, p->T, p->Hk, p->Dk}, vs[4] = {p->B, p->T, p->Hv, p->Dv}, gs[3] = {p->B, p->T, p->Hv};
    int64_t ss[4] = {nseq(p), p->Hv, p->layout == GDN_STATE_VK ? p->Dv : p->Dk, p->layout == GDN_STATE_VK ? p->Dk : p->Dv};
    int64_t nq = qs[0] * qs[1] * qs[2] * qs[3], nv = vs[0] * vs[1] * vs[2] * vs[3];
    void *q = p->q, *k = p->k, *v = p->v;
    gdn_status st;

    memset(&pr, 0, sizeof pr);
    pr.num_k_heads = p->Hk;
    pr.num_v_heads = p->Hv;
    pr.k_dim = p->Dk;
    pr.v_dim = p->Dv;
    pr.head_map = p->heads;
    pr.gate = p->gate;
    pr.scale = (float)p->scale;
    pr.qk_l2norm = p->l2;
    pr.state_layout = p->layout;
    pr.dtype = p->dtype;
    pr.out_dtype = GDN_DTYPE_F32;
    pr.gate_dtype = GDN_DTYPE_F32;
    if (p->dtype != GDN_DTYPE_F32) {
        q = to_half(p->q, nq, p->dtype);
        k = to_half(p->k, nq, p->dtype);
        v = to_half(p->v, nv, p->dtype);
    }
    memset(&b, 0, sizeof b);
    b.batch_size = p->B;
    b.seq_len = p->T;
    b.num_seqs = nseq(p);
    if (p->n_seqs > 0) {
        b.cu_seqlens = p->cu;
        b.cu_seqlens_type = GDN_INDEX_I64;
    }
    memset(&t, 0, sizeof t);
    t.q = gdn_tensor_contiguous(q, 4, qs);
    t.k = gdn_tensor_contiguous(k, 4, qs);
    t.v = gdn_tensor_contiguous(v, 4, vs);
    t.g = gdn_tensor_contiguous(p->g, 3, gs);
    t.beta = gdn_tensor_contiguous(p->beta, 3, gs);
    t.A_log = p->alog;
    t.dt_bias = p->dtb;
    t.state.pool = gdn_tensor_contiguous(p->state, 4, ss);
    st = gdn_ref_forward(&pr, &b, &t, rr, err, sizeof err);
    if (q != p->q) {
        free(q);
        free(k);
        free(v);
    }
    if (st != GDN_STATUS_SUCCESS) {
        fprintf(stderr, "test_cli: reference failed: %s\n", err);
        return -1;
    }
    return 0;
}

/* Write p, run `gdn run`, compare everything with the reference. */
/* Options added to every run of test_runs, and a tag in its directory names (the CUDA pass). */
static const char *g_runs_opts = "";
static const char *g_runs_tag = "";

static void run_and_compare(const char *test, prob *p, const char *extra_opts)
{
    char in[600], out[600], opts[512], args[4096];
    int64_t N = nseq(p), BT = (int64_t)p->B * p->T;
    int64_t os[4] = {p->B, p->T, p->Hv, p->Dv};
    int64_t ss[4] = {N, p->Hv, p->layout == GDN_STATE_VK ? p->Dv : p->Dk, p->layout == GDN_STATE_VK ? p->Dk : p->Dv};
    int64_t cs[5] = {p->B, p->T, p->Hv, ss[2], ss[3]};
    size_t nout = (size_t)(BT * p->Hv * p->Dv), nstate = (size_t)(N * p->Hv * p->Dv * p->Dk);
    size_t head = (size_t)p->Dk * p->Dv, ncap = (size_t)BT * p->Hv * head;
    float *o = NULL, *s = NULL, *c = NULL, *tmp = NULL;
    gdn_ref_result rr;
    int rc;
    double e;

    if (g_runs_opts[0] && extra_opts && strstr(extra_opts, "--isa"))
        return; /* a CPU kernel choice: not for the CUDA pass */
    snprintf(in, sizeof in, "%s/%s%s-in", g_root, g_runs_tag, test);
    snprintf(out, sizeof out, "%s/%s%s-out", g_root, g_runs_tag, test);
    write_prob(p, in);
    options_of(p, opts, sizeof opts);
    snprintf(args, sizeof args, "run --in '%s' --out '%s'%s %s %s", in, out, opts, extra_opts ? extra_opts : "",
             g_runs_opts);
    rc = run_gdn(args);
    g_checks++;
    if (rc != 0) {
        fail(test, "gdn %s: exit status %d, stderr: %s", args, rc, g_err);
        return;
    }
    expect(g_err[0] == '\0', test, "a successful run printed on stderr");

    memset(&rr, 0, sizeof rr);
    rr.out = malloc(sizeof(double) * (nout + 1));
    rr.final_state = malloc(sizeof(double) * (nstate + 1));
    rr.captures = p->capture ? malloc(sizeof(double) * (ncap + 1)) : NULL;
    if (reference(p, &rr) != 0) {
        fail(test, "reference failed");
        goto done;
    }
    o = load_out(test, out, "o.npy", 4, os);
    s = load_out(test, out, "state.npy", 4, ss);
    if (!o || !s)
        goto done;
    e = gdn_check_rel_rms(o, rr.out, nout);
    g_checks++;
    if (!(e <= TOL))
        fail(test, "o.npy: relative RMS error %.3g vs the reference", e);
    tmp = malloc(sizeof(float) * (ncap > nstate ? ncap : nstate) + 4);
    if (p->layout == GDN_STATE_KV)
        to_vk(tmp, s, N * p->Hv, p->Dk, p->Dv);
    else
        memcpy(tmp, s, nstate * sizeof(float));
    e = gdn_check_rel_rms(tmp, rr.final_state, nstate);
    g_checks++;
    if (!(e <= TOL))
        fail(test, "state.npy: relative RMS error %.3g vs the reference", e);
    if (p->n_seqs > 0) { /* empty sequences keep their state bit for bit */
        int n;
        for (n = 0; n < p->n_seqs; n++)
            if (p->cu[n + 1] == p->cu[n])
                expect(memcmp(s + n * p->Hv * head, p->state + n * p->Hv * head, p->Hv * head * sizeof(float)) == 0,
                       test, "state.npy: an empty sequence's state changed");
    }
    if (p->capture) {
        int64_t n;
        c = load_out(test, out, "states.npy", 5, cs);
        if (!c)
            goto done;
        if (p->layout == GDN_STATE_KV)
            to_vk(tmp, c, BT * p->Hv, p->Dk, p->Dv);
        else
            memcpy(tmp, c, ncap * sizeof(float));
        e = gdn_check_rel_rms(tmp, rr.captures, ncap);
        g_checks++;
        if (!(e <= TOL))
            fail(test, "states.npy: relative RMS error %.3g vs the reference", e);
        for (n = 0; n < N; n++) { /* the last captured state is the final state, bit for bit */
            int64_t last = p->n_seqs > 0 ? p->cu[n + 1] - 1 : n * p->T + p->T - 1;
            int64_t first = p->n_seqs > 0 ? p->cu[n] : n * p->T;
            if (last < first)
                continue;
            expect(memcmp(c + last * p->Hv * head, s + n * p->Hv * head, p->Hv * head * sizeof(float)) == 0, test,
                   "states.npy: last captured state differs from state.npy");
        }
    } else {
        char path[1024];
        path_of(path, sizeof path, out, "states.npy");
        expect(!exists(path), test, "states.npy written without --capture");
    }
    expect(!has_entry_prefix(out, ".o.npy") && !has_entry_prefix(out, ".state") && !has_entry_prefix(out, ".gdn"),
           test, "temporary files left in --out after success");
done:
    free(o);
    free(s);
    free(c);
    free(tmp);
    free(rr.out);
    free(rr.final_state);
    free(rr.captures);
}

static prob base_prob(int B, int T, int Hk, int Hv, int Dk, int Dv)
{
    prob p;
    memset(&p, 0, sizeof p);
    p.B = B;
    p.T = T;
    p.Hk = Hk;
    p.Hv = Hv;
    p.Dk = Dk;
    p.Dv = Dv;
    return p;
}

/* Packed: n sequences with offsets cu[0..n]. */
static void set_cu(prob *p, int n, const int64_t *cu)
{
    p->n_seqs = n;
    memcpy(p->cu, cu, sizeof(int64_t) * (size_t)(n + 1));
}

/* ---- correct runs --------------------------------------------------------------------------- */

static void test_runs(void)
{
    prob p;

    /* dense, no state (zeros), default conventions; --out does not exist yet */
    p = base_prob(2, 5, 2, 4, 16, 8);
    gen(&p, 1);
    run_and_compare("dense", &p, NULL);
    free_prob(&p);

    /* with state.npy; tiled heads, explicit scale, in-kernel L2 norm, linear gate, Hv/Hk = 3 */
    p = base_prob(2, 6, 2, 6, 32, 16);
    p.with_state = 1;
    p.heads = GDN_HEADS_TILED;
    p.scale = 0.3;
    p.l2 = 1;
    p.gate = GDN_GATE_LINEAR;
    gen(&p, 2);
    run_and_compare("state", &p, "--threads 1");
    free_prob(&p);

    /* neglog gate, Dk not a multiple of 16 */
    p = base_prob(1, 4, 1, 2, 20, 12);
    p.with_state = 1;
    p.gate = GDN_GATE_NEGLOG;
    gen(&p, 3);
    run_and_compare("neglog", &p, NULL);
    free_prob(&p);

    /* cu_seqlens int32 with an empty sequence, with state */
    p = base_prob(1, 9, 2, 4, 16, 16);
    set_cu(&p, 4, (const int64_t[]){0, 3, 3, 8, 9});
    p.with_state = 1;
    gen(&p, 4);
    run_and_compare("cu32", &p, NULL);
    /* int64, with capture */
    p.cu64 = 1;
    p.capture = 1;
    run_and_compare("cu64", &p, NULL);
    free_prob(&p);

    /* cu_seqlens without state: zeros, [N,...] final state */
    p = base_prob(1, 7, 1, 2, 16, 8);
    set_cu(&p, 2, (const int64_t[]){0, 0, 7});
    gen(&p, 5);
    run_and_compare("cu_nostate", &p, NULL);
    free_prob(&p);

    /* capture, dense */
    p = base_prob(2, 4, 2, 4, 16, 16);
    p.with_state = 1;
    p.capture = 1;
    gen(&p, 6);
    run_and_compare("capture", &p, NULL);
    /* the same --out without --capture: the earlier states.npy is removed */
    p.capture = 0;
    run_and_compare("capture", &p, NULL);
    free_prob(&p);

    /* fused raw gate */
    p = base_prob(2, 5, 2, 4, 16, 8);
    p.gate = GDN_GATE_RAW;
    p.with_state = 1;
    gen(&p, 7);
    run_and_compare("raw", &p, NULL);
    free_prob(&p);

    /* state layout kv, with capture */
    p = base_prob(2, 3, 1, 2, 16, 8);
    p.layout = GDN_STATE_KV;
    p.with_state = 1;
    p.capture = 1;
    gen(&p, 8);
    run_and_compare("kv", &p, NULL);
    free_prob(&p);

    /* float16 input files */
    p = base_prob(2, 5, 2, 4, 16, 16);
    p.f16_files = 1;
    p.with_state = 1;
    gen(&p, 9);
    run_and_compare("f16files", &p, NULL);
    free_prob(&p);

    /* --dtype bf16 and f16: rounded on load */
    p = base_prob(2, 5, 2, 4, 32, 16);
    p.dtype = GDN_DTYPE_BF16;
    p.with_state = 1;
    gen(&p, 10);
    run_and_compare("bf16", &p, NULL);
    p.dtype = GDN_DTYPE_F16;
    run_and_compare("f16", &p, NULL);
    free_prob(&p);

    /* .npy format versions 2.0 and 3.0 */
    p = base_prob(1, 3, 1, 1, 16, 16);
    p.npy_version = 2;
    gen(&p, 11);
    run_and_compare("npyv2", &p, NULL);
    p.npy_version = 3;
    run_and_compare("npyv3", &p, NULL);
    free_prob(&p);

    /* forced scalar kernels */
    p = base_prob(1, 3, 2, 2, 16, 16);
    p.with_state = 1;
    gen(&p, 12);
    run_and_compare("scalar", &p, "--isa scalar");
    free_prob(&p);

    /* T = 0: empty output, state unchanged */
    p = base_prob(2, 0, 1, 2, 16, 8);
    p.with_state = 1;
    gen(&p, 13);
    run_and_compare("T0", &p, NULL);
    free_prob(&p);
}

/* ---- errors --------------------------------------------------------------------------------- */

/* A valid input directory for the error tests. */
static prob g_ok;
static char g_okdir[600];

static void copy_ok_inputs(const char *dir)
{
    write_prob(&g_ok, dir);
}

/* Run `gdn <args>` and check the status, one stderr line naming `mention`, and no o.npy in out. */
static void expect_error(const char *test, const char *args, int status, const char *mention, const char *out)
{
    int rc = run_gdn(args);
    g_checks++;
    if (getenv("GDN_TEST_CLI_VERBOSE"))
        fprintf(stderr, "[%s] exit %d: %s", test, rc, g_err);
    if (rc != status) {
        fail(test, "gdn %s: exit status %d, expected %d (stderr: %s)", args, rc, status, g_err);
        return;
    }
    if (count_lines(g_err) != 1 || g_err[strlen(g_err) - 1] != '\n')
        fail(test, "expected exactly one line on stderr, got: [%s]", g_err);
    if (mention && !strstr(g_err, mention))
        fail(test, "stderr does not mention '%s': %s", mention, g_err);
    if (out) {
        char path[1024];
        path_of(path, sizeof path, out, "o.npy");
        if (exists(path))
            fail(test, "o.npy left in --out after a failure");
        path_of(path, sizeof path, out, "state.npy");
        if (exists(path))
            fail(test, "state.npy left in --out after a failure");
        if (has_entry_prefix(out, ".o.npy") || has_entry_prefix(out, ".state") || has_entry_prefix(out, ".gdn"))
            fail(test, "temporary files left in --out after a failure");
    }
}

/* An input directory: the valid one with one file replaced (or removed: data NULL, descr NULL). */
static void variant(const char *test, char *dir, size_t len)
{
    snprintf(dir, len, "%s/%s-in", g_root, test);
    copy_ok_inputs(dir);
}

static void run_variant(const char *test, const char *dir, const char *opts, int status, const char *mention)
{
    char out[700], args[4096];
    snprintf(out, sizeof out, "%s/%s-out", g_root, test);
    snprintf(args, sizeof args, "run --in '%s' --out '%s' %s", dir, out, opts ? opts : "");
    expect_error(test, args, status, mention, out);
}

/* The valid inputs with one file replaced: `gdn run` must fail (exit 1) naming that file. */
static void bad_file(const char *test, char *dir, size_t len, const char *file, const char *descr, int ndim,
                     const int64_t *shape, const void *data)
{
    variant(test, dir, len);
    save(dir, file, descr, ndim, shape, data);
    run_variant(test, dir, NULL, 1, file);
}

/* A version 1.0 .npy file with a hand-written header dict (not checked) and raw data. */
static void write_raw_npy(const char *path, const char *dict, const void *data, size_t nbytes)
{
    unsigned char buf[4096];
    const size_t hl = strlen(dict);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)((hl + 1) & 0xff);
    buf[9] = (unsigned char)((hl + 1) >> 8);
    memcpy(buf + 10, dict, hl);
    buf[10 + hl] = '\n';
    if (nbytes)
        memcpy(buf + 11 + hl, data, nbytes);
    write_bytes(path, buf, 11 + hl + nbytes);
}

static void test_errors(void)
{
    char dir[600], path[1024], args[4096], out[700];
    float zeros[4096];
    memset(zeros, 0, sizeof zeros);

    g_ok = base_prob(2, 3, 2, 4, 16, 8);
    g_ok.with_state = 1;
    gen(&g_ok, 42);
    snprintf(g_okdir, sizeof g_okdir, "%s/ok-in", g_root);
    write_prob(&g_ok, g_okdir);

    /* missing file */
    variant("missing", dir, sizeof dir);
    path_of(path, sizeof path, dir, "k.npy");
    remove(path);
    run_variant("missing", dir, NULL, 1, "k.npy");

    /* malformed .npy: bad magic, bad header dict, truncated data, Fortran order */
    variant("badmagic", dir, sizeof dir);
    path_of(path, sizeof path, dir, "v.npy");
    write_bytes(path, "this is not a numpy file at all, really", 39);
    run_variant("badmagic", dir, NULL, 1, "v.npy");

    variant("badheader", dir, sizeof dir);
    path_of(path, sizeof path, dir, "q.npy");
    write_raw_npy(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 2 16), }", NULL, 0);
    run_variant("badheader", dir, NULL, 1, "q.npy");

    variant("truncated", dir, sizeof dir);
    path_of(path, sizeof path, dir, "g.npy");
    save(dir, "g.npy", "<f4", 3, (int64_t[]){2, 3, 4}, zeros);
    {
        FILE *f = fopen(path, "r+b");
        if (f) {
            fseek(f, 0, SEEK_END);
            long len = ftell(f);
            fclose(f);
            if (truncate(path, len - 8) != 0)
                fail("truncated", "cannot truncate %s", path);
        }
    }
    run_variant("truncated", dir, NULL, 1, "g.npy");

    variant("fortran", dir, sizeof dir);
    path_of(path, sizeof path, dir, "beta.npy");
    write_raw_npy(path, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", zeros, 24 * 4);
    run_variant("fortran", dir, NULL, 1, "beta.npy");

    /* wrong rank */
    bad_file("rank", dir, sizeof dir, "q.npy", "<f4", 3, (int64_t[]){2, 3, 32}, zeros);

    /* wrong shape: v with Dv different is fine alone, so change B; k different from q; g; state */
    bad_file("shape_v", dir, sizeof dir, "v.npy", "<f4", 4, (int64_t[]){1, 3, 4, 8}, zeros);
    bad_file("shape_k", dir, sizeof dir, "k.npy", "<f4", 4, (int64_t[]){2, 3, 2, 8}, zeros);
    bad_file("shape_g", dir, sizeof dir, "g.npy", "<f4", 3, (int64_t[]){2, 3, 2}, zeros);
    /* vk wants [2,4,8,16] */
    bad_file("shape_state", dir, sizeof dir, "state.npy", "<f4", 4, (int64_t[]){2, 4, 16, 8}, zeros);
    /* the same file is right for --state-layout kv ([N,Hv,Dk,Dv]) */
    snprintf(out, sizeof out, "%s/shape_state_kv-out", g_root);
    snprintf(args, sizeof args, "run --in '%s' --out '%s' --state-layout kv", dir, out);
    expect(run_gdn(args) == 0, "shape_state_kv", "a [N,Hv,Dk,Dv] state is valid with --state-layout kv");

    /* wrong dtypes */
    {
        double dz[2 * 3 * 2 * 16];
        memset(dz, 0, sizeof dz);
        bad_file("dtype_f8", dir, sizeof dir, "q.npy", "<f8", 4, (int64_t[]){2, 3, 2, 16}, dz);
    }
    if (!strstr(g_err, "<f8"))
        fail("dtype_f8", "stderr does not name the dtype: %s", g_err);
    bad_file("dtype_i4", dir, sizeof dir, "q.npy", "<i4", 4, (int64_t[]){2, 3, 2, 16}, zeros);
    bad_file("dtype_be", dir, sizeof dir, "v.npy", ">f4", 4, (int64_t[]){2, 3, 4, 8}, zeros);
    bad_file("dtype_cu", dir, sizeof dir, "cu_seqlens.npy", "<f4", 1, (int64_t[]){2}, (const float[2]){0, 3});

    /* usage errors: exit 2 */
    run_variant("unknown_opt", g_okdir, "--bogus", 2, "--bogus");
    run_variant("bad_gate", g_okdir, "--gate sideways", 2, "--gate");
    run_variant("bad_dtype", g_okdir, "--dtype f64", 2, "--dtype");
    run_variant("bad_threads", g_okdir, "--threads -1", 2, "--threads");
    run_variant("bad_threads2", g_okdir, "--threads two", 2, "--threads");
    run_variant("bad_scale", g_okdir, "--scale abc", 2, "--scale");
    run_variant("bad_layout", g_okdir, "--state-layout vv", 2, "--state-layout");
    run_variant("bad_heads", g_okdir, "--heads=grouped2", 2, "--heads");
    run_variant("bad_isa", g_okdir, "--isa sse", 2, "--isa");
    run_variant("bad_backend", g_okdir, "--backend tpu", 2, "--backend");
    run_variant("bad_algo", g_okdir, "--algo fast", 2, "--algo");
    run_variant("bad_precision", g_okdir, "--precision fp8", 2, "--precision");
    run_variant("flag_value", g_okdir, "--capture=yes", 2, "--capture");
    run_variant("missing_value", g_okdir, "--gate", 2, "--gate");
    run_variant("positional", g_okdir, "extra", 2, "extra");
    snprintf(out, sizeof out, "%s/noin-out", g_root);
    snprintf(args, sizeof args, "run --out '%s'", out);
    expect_error("missing_in", args, 2, "--in", out);
    snprintf(args, sizeof args, "run --in '%s'", g_okdir);
    expect_error("missing_out", args, 2, "--out", NULL);

    /* --in does not exist */
    snprintf(out, sizeof out, "%s/noindir-out", g_root);
    snprintf(args, sizeof args, "run --in '%s/does-not-exist' --out '%s'", g_root, out);
    expect_error("in_missing", args, 1, "--in", out);

    /* --out not writable: under a regular file (works as root too), and a regular file itself */
    path_of(path, sizeof path, g_root, "plainfile");
    write_bytes(path, "x", 1);
    snprintf(args, sizeof args, "run --in '%s' --out '%s/sub'", g_okdir, path);
    expect_error("out_under_file", args, 1, "--out", NULL);
    snprintf(args, sizeof args, "run --in '%s' --out '%s'", g_okdir, path);
    expect_error("out_is_file", args, 1, "--out", NULL);

    /* Hv not a multiple of Hk */
    {
        prob p = base_prob(1, 2, 2, 3, 16, 8);
        gen(&p, 43);
        snprintf(dir, sizeof dir, "%s/hvhk-in", g_root);
        write_prob(&p, dir);
        run_variant("hvhk", dir, NULL, 1, "v.npy");
        free_prob(&p);
    }

    /* cu_seqlens: not starting at 0, decreasing, past T, not ending at T, with B != 1 */
    {
        prob p = base_prob(1, 9, 2, 4, 16, 8);
        int64_t n1 = 3;
        int32_t bad0[3] = {1, 3, 9}, dec[4] = {0, 5, 3, 9}, past[3] = {0, 3, 12}, short_[3] = {0, 3, 8};
        gen(&p, 44);
        snprintf(dir, sizeof dir, "%s/cu-in", g_root);
        write_prob(&p, dir);
        save(dir, "cu_seqlens.npy", "<i4", 1, &n1, bad0);
        run_variant("cu_start", dir, NULL, 1, "cu_seqlens.npy");
        n1 = 4;
        save(dir, "cu_seqlens.npy", "<i4", 1, &n1, dec);
        run_variant("cu_decreasing", dir, NULL, 1, "cu_seqlens.npy");
        n1 = 3;
        save(dir, "cu_seqlens.npy", "<i4", 1, &n1, past);
        run_variant("cu_past_T", dir, NULL, 1, "cu_seqlens.npy");
        save(dir, "cu_seqlens.npy", "<i4", 1, &n1, short_);
        run_variant("cu_end", dir, NULL, 1, "cu_seqlens.npy");
        n1 = 1;
        save(dir, "cu_seqlens.npy", "<i4", 1, &n1, bad0 + 1);
        run_variant("cu_one_entry", dir, NULL, 1, "cu_seqlens.npy");
        free_prob(&p);

        variant("cu_B2", dir, sizeof dir); /* the ok problem has B = 2 */
        {
            int64_t c64[2] = {0, 3};
            n1 = 2;
            save(dir, "cu_seqlens.npy", "<i8", 1, &n1, c64);
        }
        run_variant("cu_B2", dir, NULL, 1, "cu_seqlens.npy");
    }

    /* --gate raw without A_log.npy */
    run_variant("raw_no_alog", g_okdir, "--gate raw", 1, "A_log.npy");

    /* --backend cuda: with no CUDA device (or no CUDA built in), a clean error naming the option;
     * with one, every run of test_runs again on the GPU, against the reference */
    {
        int rc;
        snprintf(out, sizeof out, "%s/cuda-probe-out", g_root);
        snprintf(args, sizeof args, "run --in '%s' --out '%s' --backend cuda", g_okdir, out);
        rc = run_gdn(args);
        g_checks++;
        if (rc == 1) {
            expect(count_lines(g_err) == 1 && strstr(g_err, "--backend"), "cuda", "one stderr line naming --backend");
            path_of(path, sizeof path, out, "o.npy");
            expect(!exists(path), "cuda", "o.npy left after a failure");
        } else if (rc == 0) {
            printf("gdn run --backend cuda: a CUDA device is present, running every run test on it\n");
            g_runs_opts = "--backend cuda";
            g_runs_tag = "cuda-";
            test_runs();
            g_runs_opts = "";
            g_runs_tag = "";
        } else {
            fail("cuda", "exit status %d: %s", rc, g_err);
        }
    }

    /* the chunked algorithm: either it works (a later version) or it fails cleanly */
    {
        int rc;
        snprintf(out, sizeof out, "%s/chunked-out", g_root);
        snprintf(args, sizeof args, "run --in '%s' --out '%s' --algo chunked", g_okdir, out);
        rc = run_gdn(args);
        g_checks++;
        if (rc == 1) {
            expect(count_lines(g_err) == 1 && strstr(g_err, "--algo"), "chunked", "one stderr line naming --algo");
            path_of(path, sizeof path, out, "o.npy");
            expect(!exists(path), "chunked", "o.npy left after a failure");
        } else if (rc != 0) {
            fail("chunked", "exit status %d: %s", rc, g_err);
        }
    }
}

/* ---- other commands ------------------------------------------------------------------------- */

static void test_commands(void)
{
    expect(run_gdn("--help") == 0 && strstr(g_out, "run") && strstr(g_out, "bench"), "help", "gdn --help");
    expect(run_gdn("help") == 0 && g_out[0], "help", "gdn help");
    expect(run_gdn("run --help") == 0 && strstr(g_out, "states.npy") && strstr(g_out, "Dk,Dv"), "help_run",
           "gdn run --help documents states.npy and the kv layout");
    expect(run_gdn("help bench") == 0 && strstr(g_out, "--json"), "help_bench", "gdn help bench");
    expect(run_gdn("--version") == 0 && strstr(g_out, gdn_version_string()), "version", "gdn --version");
    expect(run_gdn("info") == 0 && strstr(g_out, "recurrent") && strstr(g_out, "CUDA"), "info", "gdn info");
    expect_error("no_command", "", 2, "command", NULL);
    expect_error("bad_command", "frobnicate", 2, "frobnicate", NULL);
    expect_error("bench_bad_model", "bench --model nosuch", 2, "--model", NULL);
    expect_error("bench_bad_opt", "bench --frob", 2, "--frob", NULL);
    expect_error("check_bad_opt", "check --isa x87", 2, "--isa", NULL);
    expect(run_gdn("bench --model list") == 0 && strstr(g_out, "qwen3.6-35b-a3b") && strstr(g_out, "qwen3.6-27b"),
           "bench_models", "gdn bench --model list");
    /* a small bench case with the JSON output */
    expect(run_gdn("bench --json --B 1 --T 3 --Hk 1 --Hv 2 --Dk 16 --Dv 16 --reps 3") == 0 &&
               strstr(g_out, "\"op\":\"prefill\"") && strstr(g_out, "\"rel_err\":") &&
               strstr(g_out, "\"fma_peak_gflops\":") && strstr(g_out, "\"qk_l2norm\":true") &&
               strstr(g_out, "\"ok\":true"),
           "bench_json", "gdn bench --json single case (q, k L2-normalised in the kernel by default)");
    if (!strstr(g_out, "\"ok\":true"))
        fprintf(stderr, "bench stdout: %s\nstderr: %s\n", g_out, g_err);
    /* --no-qk-l2norm: the convention without the norms, checked against the reference the same way */
    expect(run_gdn("bench --json --no-qk-l2norm --B 1 --T 3 --Hk 1 --Hv 2 --Dk 16 --Dv 16 --reps 3") == 0 &&
               strstr(g_out, "\"qk_l2norm\":false") && strstr(g_out, "\"ok\":true"),
           "bench_no_l2", "gdn bench --no-qk-l2norm");
    expect(run_gdn("bench --B 1 --T 1 --Hk 1 --Hv 2 --Dk 16 --Dv 16 --reps 3") == 0 &&
               strstr(g_out, "q and k L2-normalised in the kernel") && strstr(g_out, " ok"),
           "bench_table_l2", "gdn bench's table names the norm convention");
    expect_error("bench_targets_json", "bench --targets --json", 2, "--targets", NULL);
    /* gdn spec: a short self-checking loop (both rollback methods agree with plain decoding) */
    expect(run_gdn("spec --B 2 --K 3 --steps 3 --threads 2") == 0 && strstr(g_out, "capture") &&
               strstr(g_out, "replay") && !strstr(g_out, "FAIL"),
           "spec", "gdn spec --B 2 --K 3 --steps 3");
    if (strstr(g_out, "FAIL") || !strstr(g_out, "replay"))
        fprintf(stderr, "spec stdout: %s\nstderr: %s\n", g_out, g_err);
    expect_error("spec_bad_K", "spec --K 0", 2, "--K", NULL);
    expect_error("spec_bad_model", "spec --model nosuch", 2, "--model", NULL);
    expect(run_gdn("help spec") == 0 && strstr(g_out, "replay"), "help_spec", "gdn help spec");
    expect_error("spec_bad_backend", "spec --backend foo", 2, "--backend", NULL);
    expect_error("spec_cuda_threads", "spec --backend cuda --threads 2", 2, "--threads", NULL);
    /* gdn spec --backend cuda: with no CUDA device (or no CUDA built in), a clean error naming the
     * option and the device; with one, the same self-checking loop on the GPU */
    {
        int rc = run_gdn("spec --backend cuda --B 2 --K 3 --steps 3");
        g_checks++;
        if (rc == 1) {
            expect(count_lines(g_err) == 1 && strstr(g_err, "--backend") &&
                       (strstr(g_err, "CUDA") || strstr(g_err, "device")),
                   "spec_cuda", "one stderr line naming --backend and CUDA or the device");
        } else if (rc == 0) {
            printf("gdn spec --backend cuda: a CUDA device is present, ran the loop on it\n");
            expect(strstr(g_out, "capture") && strstr(g_out, "replay") && !strstr(g_out, "FAIL"), "spec_cuda",
                   "gdn spec --backend cuda --B 2 --K 3 --steps 3");
        } else {
            fail("spec_cuda", "exit status %d: %s", rc, g_err);
        }
        if (rc != 1 && (strstr(g_out, "FAIL") || !strstr(g_out, "replay")))
            fprintf(stderr, "spec --backend cuda stdout: %s\nstderr: %s\n", g_out, g_err);
    }
    expect_error("bench_cuda_threads", "bench --backend cuda --threads 2", 2, "--threads", NULL);
    expect_error("bench_cpu_idle", "bench --idle-replays --B 1 --T 1", 2, "--idle-replays", NULL);
    expect_error("bench_cpu_graph_calls", "bench --graph-calls 4 --B 1 --T 1", 2, "--graph-calls", NULL);
    expect_error("bench_graph_calls_zero", "bench --backend cuda --graph-calls 0 --B 1 --T 1", 2, "--graph-calls", NULL);
    /* --backend cuda: a clean error without a device; with one, a small checked case per op */
    {
        const char *a = "bench --backend cuda --json --B 2 --T 1 --Hk 1 --Hv 2 --Dk 16 --Dv 16 --reps 3";
        int rc = run_gdn(a);
        g_checks++;
        if (rc == 1) {
            expect(count_lines(g_err) == 1 && strstr(g_err, "--backend cuda"), "bench_cuda",
                   "one stderr line naming --backend cuda");
        } else {
            expect(rc == 0 && strstr(g_out, "\"backend\":\"cuda\"") && strstr(g_out, "\"ok\":true") &&
                       strstr(g_out, "\"replays\":\"back_to_back\""),
                   "bench_cuda", "gdn bench --backend cuda decode (replays back to back by default)");
            expect(run_gdn("bench --backend cuda --json --idle-replays --graph-calls 3 --B 2 --T 1 --Hk 1 --Hv 2 --Dk 16 "
                           "--Dv 16 --reps 3") == 0 &&
                       strstr(g_out, "\"replays\":\"idle\",\"graph_calls\":3") && strstr(g_out, "\"ok\":true"),
                   "bench_cuda", "gdn bench --backend cuda --idle-replays --graph-calls 3");
            expect(run_gdn("bench --backend cuda --json --B 1 --T 80 --Hk 1 --Hv 2 --Dk 16 --Dv 16 --reps 3") == 0 &&
                       strstr(g_out, "\"graph_calls\":8") && strstr(g_out, "\"ok\":true"),
                   "bench_cuda", "gdn bench --backend cuda prefill: 8 calls per graph on its one pool");
            expect(run_gdn("bench --backend cuda --json --B 2 --T 5 --capture --Hk 1 --Hv 3 --Dk 32 --Dv 16 --reps 3") ==
                           0 && strstr(g_out, "\"ok\":true"),
                   "bench_cuda", "gdn bench --backend cuda verify with capture");
        }
    }
}

int main(int argc, char **argv)
{
    char cmd[1100];
    if (argc != 2) {
        fprintf(stderr, "usage: test_cli PATH_TO_GDN\n");
        return 2;
    }
    g_gdn = argv[1];
    if (access(g_gdn, X_OK) != 0) {
        fprintf(stderr, "test_cli: %s is not an executable\n", g_gdn);
        return 2;
    }
    {
        const char *tmp = getenv("TMPDIR");
        snprintf(g_root, sizeof g_root, "%s/gdn_test_cli_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    }
    if (!mkdtemp(g_root)) {
        fprintf(stderr, "test_cli: mkdtemp: %s\n", strerror(errno));
        return 2;
    }

    test_runs();
    test_errors();
    test_commands();
    free_prob(&g_ok);

    if (g_fail == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
        if (system(cmd) != 0)
            fprintf(stderr, "test_cli: could not remove %s\n", g_root);
    } else {
        fprintf(stderr, "test_cli: files kept in %s\n", g_root);
    }
    printf("test_cli: %d checks, %d failures\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
