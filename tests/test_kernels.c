/*
 * test_kernels.c — kernel-level test of the CPU token-loop kernels (cpu/recurrent.h).
 *
 * Every kernel the CPU can run (scalar always; AVX2 and AVX-512 when gdn_cpu_features() says so,
 * "SKIP" otherwise) is compared against a float64 re-implementation of the per-token math, over
 * dk x rows x n_tokens, with and without y, with and without capture (one NULL entry), in place
 * and not, and with padded rows (s_stride > dk). Inputs are realistic: k unit-norm, q unit-norm
 * times 1/sqrt(dk), decay in (0.5, 1) (and exp(-30) in some cases), beta in (0, 1), v ~ N(0, 1),
 * state ~ N(0, 0.1^2). Pass: relative RMS error <= 1e-5 on y, s_out and every capture (NaN fails;
 * the reference magnitude of each value is that of its terms, see rel_rms),
 * padding and guard words after every output untouched, s_in untouched when not in place.
 * Also: every kernel gives bitwise the same results when the rows are split into tiles, and a
 * capture may alias s_in. Exit 0 on pass, 1 with a message per failure (it stops after a few).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "cpu/cpuid.h"
#include "cpu/recurrent.h"

#define TOL 1e-5
#define GUARD 37
#define SENTINEL_BITS 0x7fc0deadu /* a NaN payload no kernel produces */

typedef struct {
    const char *name;
    gdn_recurrent_fn fn;
    int simd; /* needs dk % 16 == 0 */
} kernel;

static int g_failures;
static double g_worst[3]; /* worst relative RMS error per kernel (index in kernels[]) */
static int g_kidx;

#define FAIL(...)                                                                                   \
    do {                                                                                            \
        fprintf(stderr, "FAIL: " __VA_ARGS__);                                                      \
        fputc('\n', stderr);                                                                        \
        g_failures++;                                                                               \
        return 1;                                                                                   \
    } while (0)

/* ---- deterministic random numbers ------------------------------------------------------------ */

static uint64_t g_rng = 0x9e3779b97f4a7c15u;

static uint64_t next_u64(void)
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1), never 0 or 1. */
static double uniform(void)
{
    return ((double)(next_u64() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(void)
{
    return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

/* ---- buffers with sentinels ------------------------------------------------------------------ */

static float sentinel(void)
{
    return gdn_bits_to_f32(SENTINEL_BITS);
}

static int is_sentinel(float f)
{
    return gdn_f32_to_bits(f) == SENTINEL_BITS;
}

static float *alloc_sentinel(size_t n)
{
    float *p = malloc(n * sizeof(float));
    if (!p) {
        fprintf(stderr, "FAIL: out of memory\n");
        exit(1);
    }
    const float s = sentinel();
    for (size_t i = 0; i < n; i++)
        p[i] = s;
    return p;
}

/* Reusable buffers for the float64 reference (not seen by the kernels, so they need no redzones):
 * slot -> buffer grown on demand, freed at exit. Keeps the test fast under AddressSanitizer. */
enum { POOL_SLOTS = 16 };
static void *g_pool[POOL_SLOTS];
static size_t g_pool_size[POOL_SLOTS];

static double *pool_doubles(int slot, size_t n)
{
    if (g_pool_size[slot] < n) {
        free(g_pool[slot]);
        g_pool[slot] = malloc(n * sizeof(double));
        g_pool_size[slot] = n;
        if (!g_pool[slot]) {
            fprintf(stderr, "FAIL: out of memory\n");
            exit(1);
        }
    }
    return g_pool[slot];
}

static void pool_free(void)
{
    for (int i = 0; i < POOL_SLOTS; i++)
        free(g_pool[i]);
}

/* Rows [rows][stride] of which [0, dk) is payload: payload and trailing guard checks. */
static int check_padding(const char *what, const float *buf, int rows, int dk, int64_t stride)
{
    for (int r = 0; r < rows; r++)
        for (int64_t j = dk; j < stride; j++)
            if (!is_sentinel(buf[r * stride + j])) {
                fprintf(stderr, "FAIL: %s: padding of row %d at %lld overwritten\n", what, r, (long long)j);
                return 1;
            }
    for (int i = 0; i < GUARD; i++)
        if (!is_sentinel(buf[rows * stride + i])) {
            fprintf(stderr, "FAIL: %s: guard word %d after the buffer overwritten\n", what, i);
            return 1;
        }
    return 0;
}

/* Relative RMS error of got against ref, with scale[i] >= |ref[i]| as the reference magnitude: the sum of
 * the magnitudes of the terms that make the value in its token step (|decay s| + |delta k| with |delta|
 * taken as beta (|v| + decay sum |s k|); for y, decay sum |s q| + |delta kq|), so that a value that is
 * small by cancellation does not count as a large relative error; this matters only when few values
 * are compared (rows = 1, T = 1) and is never stricter than the plain relative RMS. */
static double rel_rms(const float *got, int64_t gstride, const double *ref, const double *scale, int rows, int dk)
{
    double se = 0.0, sr = 0.0;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < dk; j++) {
            const double g = got[r * gstride + j], e = ref[(int64_t)r * dk + j], m = scale[(int64_t)r * dk + j];
            se += (g - e) * (g - e);
            sr += m * m;
        }
    return sqrt(se / (sr > 1e-300 ? sr : 1e-300)); /* NaN propagates */
}

/* ---- the problem and its float64 reference ---------------------------------------------------- */

typedef struct {
    int dk, rows, T;
    float *q, *k, *kq, *decay, *beta, *v, *s0; /* s0: [rows][dk] */
    double *sref, *yref, *capref;              /* capref: [T][rows][dk] (only with F_CAP) */
    double *sscale, *yscale, *capscale;        /* magnitude of the terms of each value (one step) */
} problem;

enum { F_Y = 1, F_CAP = 2, F_INPLACE = 4, F_STRIDE = 8, F_TINY = 16 };

/* slot: 0 or 1, which set of reference buffers to use (two problems may be alive at once). */
static void make_problem(problem *p, int slot, int dk, int rows, int T, unsigned flags)
{
    p->dk = dk;
    p->rows = rows;
    p->T = T;
    p->q = malloc(sizeof(float) * (size_t)T * dk);
    p->k = malloc(sizeof(float) * (size_t)T * dk);
    p->kq = malloc(sizeof(float) * T);
    p->decay = malloc(sizeof(float) * T);
    p->beta = malloc(sizeof(float) * T);
    p->v = malloc(sizeof(float) * (size_t)T * rows);
    p->s0 = malloc(sizeof(float) * (size_t)rows * dk);
    p->sref = pool_doubles(7 * slot + 0, (size_t)rows * dk);
    p->yref = pool_doubles(7 * slot + 1, (size_t)T * rows);
    const size_t ncap = (flags & F_CAP) ? (size_t)T * rows * dk : (size_t)rows * dk; /* else: scratch */
    p->capref = pool_doubles(7 * slot + 2, ncap);
    p->sscale = pool_doubles(7 * slot + 3, (size_t)rows * dk);
    p->yscale = pool_doubles(7 * slot + 4, (size_t)T * rows);
    p->capscale = pool_doubles(7 * slot + 5, ncap);
    double *tmp = pool_doubles(7 * slot + 6, (size_t)2 * dk);
    if (!p->q || !p->k || !p->kq || !p->decay || !p->beta || !p->v || !p->s0 || !p->sref ||
        !p->yref || !p->capref || !p->sscale || !p->yscale || !p->capscale || !tmp) {
        fprintf(stderr, "FAIL: out of memory\n");
        exit(1);
    }
    for (int t = 0; t < T; t++) {
        double nk = 0.0, nq = 0.0;
        for (int j = 0; j < dk; j++) {
            tmp[j] = normal();
            tmp[dk + j] = normal();
            nk += tmp[j] * tmp[j];
            nq += tmp[dk + j] * tmp[dk + j];
        }
        nk = 1.0 / sqrt(nk);
        nq = 1.0 / sqrt(nq) / sqrt((double)dk);
        double kq = 0.0;
        for (int j = 0; j < dk; j++) {
            p->k[(int64_t)t * dk + j] = (float)(tmp[j] * nk);
            p->q[(int64_t)t * dk + j] = (float)(tmp[dk + j] * nq);
            kq += (double)p->k[(int64_t)t * dk + j] * p->q[(int64_t)t * dk + j];
        }
        p->kq[t] = (float)kq;
        p->decay[t] = (flags & F_TINY) && t % 3 == 1 ? expf(-30.0f) : (float)(0.5 + 0.5 * uniform());
        p->beta[t] = (float)uniform();
        for (int r = 0; r < rows; r++)
            p->v[(int64_t)t * rows + r] = (float)normal();
    }
    for (int64_t i = 0; i < (int64_t)rows * dk; i++)
        p->s0[i] = (float)(0.1 * normal());

    /* float64 reference: the per-token math of recurrent.h, row by row. */
    for (int r = 0; r < rows; r++) {
        double *s = p->sref + (int64_t)r * dk;
        for (int j = 0; j < dk; j++)
            s[j] = p->s0[(int64_t)r * dk + j];
        for (int t = 0; t < T; t++) {
            const float *k = p->k + (int64_t)t * dk, *q = p->q + (int64_t)t * dk;
            double sk = 0.0, sq = 0.0, skm = 0.0, sqm = 0.0;
            for (int j = 0; j < dk; j++) {
                sk += s[j] * (double)k[j];
                sq += s[j] * (double)q[j];
                skm += fabs(s[j] * (double)k[j]);
                sqm += fabs(s[j] * (double)q[j]);
            }
            const double decay = p->decay[t], beta = p->beta[t], v = p->v[(int64_t)t * rows + r];
            const double delta = beta * (v - decay * sk);
            const double deltam = beta * (fabs(v) + decay * skm); /* magnitude of delta's terms */
            p->yref[(int64_t)t * rows + r] = decay * sq + delta * (double)p->kq[t];
            p->yscale[(int64_t)t * rows + r] = decay * sqm + deltam * fabs((double)p->kq[t]);
            const int64_t ci = (flags & F_CAP) ? ((int64_t)t * rows + r) * dk : (int64_t)r * dk;
            double *c = p->capref + ci, *cs = p->capscale + ci;
            double *ssc = p->sscale + (int64_t)r * dk;
            for (int j = 0; j < dk; j++) {
                ssc[j] = cs[j] = fabs(decay * s[j]) + deltam * fabs((double)k[j]);
                s[j] = decay * s[j] + delta * (double)k[j];
                c[j] = s[j];
            }
        }
    }
}

static void free_problem(problem *p)
{
    free(p->q);
    free(p->k);
    free(p->kq);
    free(p->decay);
    free(p->beta);
    free(p->v);
    free(p->s0);
}

static void note(double e)
{
    if (e > g_worst[g_kidx])
        g_worst[g_kidx] = e;
}

/* ---- one kernel on one problem ---------------------------------------------------------------- */

static int run_one(const kernel *kn, const problem *p, unsigned flags)
{
    const int dk = p->dk, rows = p->rows, T = p->T;
    const int64_t ss = (flags & F_STRIDE) ? dk + 5 : dk;
    const int64_t cs = (flags & F_STRIDE) ? dk + 3 : dk;
    const int null_t = T >= 2 ? T / 2 : -1; /* the capture entry left NULL */
    char what[160];
    snprintf(what, sizeof what, "%s dk=%d rows=%d T=%d y=%d cap=%d inplace=%d stride=%d tiny=%d",
             kn->name, dk, rows, T, !!(flags & F_Y), !!(flags & F_CAP), !!(flags & F_INPLACE),
             !!(flags & F_STRIDE), !!(flags & F_TINY));

    float *s_in = alloc_sentinel((size_t)rows * ss + GUARD);
    for (int r = 0; r < rows; r++)
        memcpy(s_in + r * ss, p->s0 + (int64_t)r * dk, sizeof(float) * dk);
    float *s_out = (flags & F_INPLACE) ? s_in : alloc_sentinel((size_t)rows * ss + GUARD);
    float *y = (flags & F_Y) ? alloc_sentinel((size_t)T * rows + GUARD) : NULL;
    float **cap = NULL;
    if (flags & F_CAP) {
        cap = calloc((size_t)T, sizeof *cap);
        for (int t = 0; t < T; t++)
            cap[t] = t == null_t ? NULL : alloc_sentinel((size_t)rows * cs + GUARD);
    }

    const gdn_recurrent_args a = {T, dk, rows, p->q, p->k, p->kq, p->decay, p->beta, p->v, y,
                                  s_in, s_out, ss, (float *const *)cap, cs};
    kn->fn(&a);

    int bad = 0;
    double e = rel_rms(s_out, ss, p->sref, p->sscale, rows, dk);
    note(e);
    if (!(e <= TOL)) {
        fprintf(stderr, "FAIL: %s: s_out relative RMS %.3g\n", what, e);
        bad = 1;
    }
    if (!bad && check_padding("s_out", s_out, rows, dk, ss)) {
        fprintf(stderr, "  in %s\n", what);
        bad = 1;
    }
    if (!bad && !(flags & F_INPLACE)) {
        for (int r = 0; r < rows && !bad; r++)
            if (memcmp(s_in + r * ss, p->s0 + (int64_t)r * dk, sizeof(float) * dk) != 0) {
                fprintf(stderr, "FAIL: %s: s_in row %d modified\n", what, r);
                bad = 1;
            }
        if (!bad && check_padding("s_in", s_in, rows, dk, ss)) {
            fprintf(stderr, "  in %s\n", what);
            bad = 1;
        }
    }
    if (!bad && y) {
        e = rel_rms(y, rows, p->yref, p->yscale, T, rows);
        note(e);
        if (!(e <= TOL)) {
            fprintf(stderr, "FAIL: %s: y relative RMS %.3g\n", what, e);
            bad = 1;
        }
        for (int i = 0; i < GUARD && !bad; i++)
            if (!is_sentinel(y[(int64_t)T * rows + i])) {
                fprintf(stderr, "FAIL: %s: guard word %d after y overwritten\n", what, i);
                bad = 1;
            }
    }
    for (int t = 0; cap && t < T && !bad; t++) {
        if (!cap[t])
            continue;
        e = rel_rms(cap[t], cs, p->capref + (int64_t)t * rows * dk, p->capscale + (int64_t)t * rows * dk, rows, dk);
        note(e);
        if (!(e <= TOL)) {
            fprintf(stderr, "FAIL: %s: capture[%d] relative RMS %.3g\n", what, t, e);
            bad = 1;
        } else if (check_padding("capture", cap[t], rows, dk, cs)) {
            fprintf(stderr, "  in %s, capture[%d]\n", what, t);
            bad = 1;
        }
    }

    if (cap) {
        for (int t = 0; t < T; t++)
            free(cap[t]);
        free(cap);
    }
    free(y);
    if (s_out != s_in)
        free(s_out);
    free(s_in);
    if (bad)
        g_failures++;
    return bad;
}

/* ---- determinism under tiling ------------------------------------------------------------------ */

/* Run rows [r0, r0+n) of p as one call, writing into the full-size outputs at row offset r0. */
static void run_tile(const kernel *kn, const problem *p, int r0, int n, float *s, int64_t ss, float *y,
                     float **cap, int64_t cs)
{
    const int T = p->T, rows = p->rows;
    float *vt = malloc(sizeof(float) * (size_t)T * n);
    float *yt = malloc(sizeof(float) * (size_t)T * n);
    float **ct = malloc(sizeof(float *) * (size_t)T);
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < n; i++)
            vt[(int64_t)t * n + i] = p->v[(int64_t)t * rows + r0 + i];
        ct[t] = cap[t] ? cap[t] + r0 * cs : NULL;
    }
    const gdn_recurrent_args a = {T, p->dk, n, p->q, p->k, p->kq, p->decay, p->beta, vt, yt,
                                  s + r0 * ss, s + r0 * ss, ss, (float *const *)ct, cs};
    kn->fn(&a);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < n; i++)
            y[(int64_t)t * rows + r0 + i] = yt[(int64_t)t * n + i];
    free(vt);
    free(yt);
    free(ct);
}

/* The same problem as one call of all rows, then split by `tiles` (sizes summing to rows):
 * y, state and captures must agree bitwise. */
static int check_tiling(const kernel *kn, const problem *p, const int *tiles, int ntiles)
{
    const int dk = p->dk, rows = p->rows, T = p->T;
    const int64_t ss = dk + 1, cs = dk + 2;
    float *s[2], *y[2], **cap[2];
    for (int w = 0; w < 2; w++) {
        s[w] = alloc_sentinel((size_t)rows * ss + GUARD);
        for (int r = 0; r < rows; r++)
            memcpy(s[w] + r * ss, p->s0 + (int64_t)r * dk, sizeof(float) * dk);
        y[w] = alloc_sentinel((size_t)T * rows + GUARD);
        cap[w] = malloc(sizeof(float *) * (size_t)T);
        for (int t = 0; t < T; t++)
            cap[w][t] = t == T / 2 && T > 1 ? NULL : alloc_sentinel((size_t)rows * cs + GUARD);
    }
    run_tile(kn, p, 0, rows, s[0], ss, y[0], cap[0], cs);
    for (int i = 0, r0 = 0; i < ntiles; r0 += tiles[i], i++)
        run_tile(kn, p, r0, tiles[i], s[1], ss, y[1], cap[1], cs);

    int bad = 0;
    if (memcmp(s[0], s[1], sizeof(float) * ((size_t)rows * ss + GUARD)) != 0 ||
        memcmp(y[0], y[1], sizeof(float) * ((size_t)T * rows + GUARD)) != 0)
        bad = 1;
    for (int t = 0; t < T && !bad; t++)
        if (cap[0][t] && memcmp(cap[0][t], cap[1][t], sizeof(float) * ((size_t)rows * cs + GUARD)) != 0)
            bad = 1;
    if (bad) {
        fprintf(stderr, "FAIL: %s dk=%d rows=%d T=%d: results differ when the rows are split into %d tiles (",
                kn->name, dk, rows, T, ntiles);
        for (int i = 0; i < ntiles; i++)
            fprintf(stderr, "%s%d", i ? "+" : "", tiles[i]);
        fprintf(stderr, ")\n");
        g_failures++;
    }
    for (int w = 0; w < 2; w++) {
        for (int t = 0; t < T; t++)
            free(cap[w][t]);
        free(cap[w]);
        free(y[w]);
        free(s[w]);
    }
    return bad;
}

/* capture[0] aliases s_in (not in place): the kernel reads a row of s_in before writing it. */
static int check_capture_aliases_s_in(const kernel *kn, const problem *p)
{
    const int dk = p->dk, rows = p->rows, T = p->T;
    const int64_t ss = dk + 4;
    float *s_in = alloc_sentinel((size_t)rows * ss + GUARD), *s_out = alloc_sentinel((size_t)rows * ss + GUARD);
    for (int r = 0; r < rows; r++)
        memcpy(s_in + r * ss, p->s0 + (int64_t)r * dk, sizeof(float) * dk);
    float **cap = calloc((size_t)T, sizeof *cap);
    cap[0] = s_in;
    const gdn_recurrent_args a = {T, dk, rows, p->q, p->k, p->kq, p->decay, p->beta, p->v, NULL,
                                  s_in, s_out, ss, (float *const *)cap, ss};
    kn->fn(&a);
    const double e0 = rel_rms(s_in, ss, p->capref, p->capscale, rows, dk),
                 e1 = rel_rms(s_out, ss, p->sref, p->sscale, rows, dk);
    free(cap);
    free(s_in);
    free(s_out);
    if (!(e0 <= TOL) || !(e1 <= TOL))
        FAIL("%s dk=%d rows=%d T=%d: capture[0] == s_in: capture error %.3g, s_out error %.3g", kn->name,
             dk, rows, T, e0, e1);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------------- */

int main(void)
{
    const unsigned feat = gdn_cpu_features();
    kernel kernels[3];
    int nk = 0;
    kernels[nk++] = (kernel){"scalar", gdn_recurrent_f32__scalar, 0};
#if defined(__x86_64__)
    if (feat & GDN_CPU_AVX2)
        kernels[nk++] = (kernel){"avx2", gdn_recurrent_f32__avx2, 1};
    else
        printf("SKIP avx2: not supported by this CPU/OS\n");
    if (feat & GDN_CPU_AVX512)
        kernels[nk++] = (kernel){"avx512", gdn_recurrent_f32__avx512, 1};
    else
        printf("SKIP avx512: not supported by this CPU/OS\n");
#else
    (void)feat;
    printf("SKIP avx2, avx512: not an x86-64 build\n");
#endif

    static const int dks[] = {16, 32, 64, 128, 144, 256, 1, 7, 100};
    static const int rowss[] = {1, 3, 4, 5, 16, 128};
    static const int Ts[] = {1, 2, 7, 64};
    const int ndk = sizeof dks / sizeof dks[0], nrows = sizeof rowss / sizeof rowss[0],
              nT = sizeof Ts / sizeof Ts[0];
    int ncases = 0, nruns = 0;

    /* Accuracy, sentinels: every (dk, rows, T) with several flag sets: 8 for small problems, two
     * complementary ones for medium, one for the largest; the sets rotate with (dk, rows, T) so that
     * every combination of the 5 flags is covered many times over the sweep. */
    for (int di = 0; di < ndk; di++)
        for (int ri = 0; ri < nrows; ri++)
            for (int ti = 0; ti < nT; ti++) {
                const int dk = dks[di], rows = rowss[ri], T = Ts[ti];
                const long size = (long)dk * rows * T;
                const unsigned base = (unsigned)(di * 7 + ri * 3 + ti) % 32u;
                const int nflags = size <= 4096 ? 8 : size <= (1L << 19) ? 2 : 1;
                for (int fi = 0; fi < nflags; fi++) {
                    const unsigned flags = nflags == 8 ? (base + 4u * (unsigned)fi + (unsigned)fi / 4u) % 32u
                                                       : fi ? 31u - base : base;
                    problem p;
                    make_problem(&p, 0, dk, rows, T, flags);
                    ncases++;
                    for (int i = 0; i < nk; i++) {
                        if (kernels[i].simd && dk % 16 != 0)
                            continue;
                        nruns++;
                        g_kidx = i;
                        run_one(&kernels[i], &p, flags);
                        if (g_failures > 10)
                            goto done;
                    }
                    free_problem(&p);
                }
            }

    /* Determinism under tiling, and a capture aliasing s_in. */
    {
        static const int tdks[] = {16, 128, 144, 256};
        static const int tiles37[][6] = {{3, 3, 17, 14}, {16, 16, 5}, {1, 2, 4, 8, 22}, {36, 1}};
        static const int ntiles37[] = {4, 3, 5, 2};
        static const int tiles6[] = {3, 3};
        for (int di = 0; di < 4; di++)
            for (int ti = 0; ti < 3; ti++) {
                const int T = ti == 0 ? 1 : ti == 1 ? 3 : 9;
                problem p37, p6;
                make_problem(&p37, 0, tdks[di], 37, T, F_TINY | F_CAP);
                make_problem(&p6, 1, tdks[di], 6, T, 0);
                for (int i = 0; i < nk; i++) {
                    for (int s = 0; s < 4; s++)
                        check_tiling(&kernels[i], &p37, tiles37[s], ntiles37[s]);
                    check_tiling(&kernels[i], &p6, tiles6, 2);
                    check_capture_aliases_s_in(&kernels[i], &p37);
                    nruns += 6;
                }
                free_problem(&p37);
                free_problem(&p6);
                if (g_failures)
                    goto done;
            }
    }

done:
    pool_free();
    if (g_failures) {
        fprintf(stderr, "test_kernels: %d failure(s)\n", g_failures);
        return 1;
    }
    printf("test_kernels: OK (%d problems, %d kernel runs; kernels:", ncases, nruns);
    for (int i = 0; i < nk; i++)
        printf(" %s", kernels[i].name);
    printf("; worst relative RMS error:");
    for (int i = 0; i < nk; i++)
        printf(" %s %.2g", kernels[i].name, g_worst[i]);
    printf(")\n");
    return 0;
}
