/*
 * machine.c — measured FMA rate and memory bandwidth of this machine (see machine.h).
 *
 * ISA-specific loops are functions compiled for their ISA with __attribute__((target(...))) and
 * chosen at run time with gdn_cpu_supports(); the tool itself is built without -m flags.
 */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) */
#include "machine.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define MACHINE_X86 1
#include <immintrin.h>
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int resolve_threads(int threads)
{
    if (threads > 0)
        return threads;
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Sink for results, so that the loops are not optimised away. */
static volatile float fma_sink;
static volatile double mem_sink;

/* ---- FMA loops ------------------------------------------------------------------------------ */
/* Each loop runs `iters` iterations of CHAINS independent multiply-adds on vectors of LANES
 * floats and returns a value depending on all of them. FLOPs = 2 * CHAINS * LANES * iters. */

#ifdef MACHINE_X86
#define AVX512_CHAINS 24
__attribute__((target("avx512f"))) static float fma_avx512(long iters, float seed)
{
    const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a[AVX512_CHAINS];
    int j;
    for (j = 0; j < AVX512_CHAINS; j++)
        a[j] = _mm512_set1_ps(seed + (float)j);
    for (long i = 0; i < iters; i++) {
        /* fully unrolled: the chains live in registers */
        a[0] = _mm512_fmadd_ps(a[0], m, c);
        a[1] = _mm512_fmadd_ps(a[1], m, c);
        a[2] = _mm512_fmadd_ps(a[2], m, c);
        a[3] = _mm512_fmadd_ps(a[3], m, c);
        a[4] = _mm512_fmadd_ps(a[4], m, c);
        a[5] = _mm512_fmadd_ps(a[5], m, c);
        a[6] = _mm512_fmadd_ps(a[6], m, c);
        a[7] = _mm512_fmadd_ps(a[7], m, c);
        a[8] = _mm512_fmadd_ps(a[8], m, c);
        a[9] = _mm512_fmadd_ps(a[9], m, c);
        a[10] = _mm512_fmadd_ps(a[10], m, c);
        a[11] = _mm512_fmadd_ps(a[11], m, c);
        a[12] = _mm512_fmadd_ps(a[12], m, c);
        a[13] = _mm512_fmadd_ps(a[13], m, c);
        a[14] = _mm512_fmadd_ps(a[14], m, c);
        a[15] = _mm512_fmadd_ps(a[15], m, c);
        a[16] = _mm512_fmadd_ps(a[16], m, c);
        a[17] = _mm512_fmadd_ps(a[17], m, c);
        a[18] = _mm512_fmadd_ps(a[18], m, c);
        a[19] = _mm512_fmadd_ps(a[19], m, c);
        a[20] = _mm512_fmadd_ps(a[20], m, c);
        a[21] = _mm512_fmadd_ps(a[21], m, c);
        a[22] = _mm512_fmadd_ps(a[22], m, c);
        a[23] = _mm512_fmadd_ps(a[23], m, c);
    }
    for (j = 1; j < AVX512_CHAINS; j++)
        a[0] = _mm512_add_ps(a[0], a[j]);
    return _mm512_reduce_add_ps(a[0]);
}

#define AVX2_CHAINS 12
__attribute__((target("avx2,fma"))) static float fma_avx2(long iters, float seed)
{
    const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a[AVX2_CHAINS];
    float out[8];
    int j;
    for (j = 0; j < AVX2_CHAINS; j++)
        a[j] = _mm256_set1_ps(seed + (float)j);
    for (long i = 0; i < iters; i++) {
        a[0] = _mm256_fmadd_ps(a[0], m, c);
        a[1] = _mm256_fmadd_ps(a[1], m, c);
        a[2] = _mm256_fmadd_ps(a[2], m, c);
        a[3] = _mm256_fmadd_ps(a[3], m, c);
        a[4] = _mm256_fmadd_ps(a[4], m, c);
        a[5] = _mm256_fmadd_ps(a[5], m, c);
        a[6] = _mm256_fmadd_ps(a[6], m, c);
        a[7] = _mm256_fmadd_ps(a[7], m, c);
        a[8] = _mm256_fmadd_ps(a[8], m, c);
        a[9] = _mm256_fmadd_ps(a[9], m, c);
        a[10] = _mm256_fmadd_ps(a[10], m, c);
        a[11] = _mm256_fmadd_ps(a[11], m, c);
    }
    for (j = 1; j < AVX2_CHAINS; j++)
        a[0] = _mm256_add_ps(a[0], a[j]);
    _mm256_storeu_ps(out, a[0]);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

#define SCALAR_CHAINS 8
static float fma_scalar(long iters, float seed)
{
    /* Portable multiply-add (two FLOPs; a fused instruction where the compiler contracts it). */
    const float m = 0.9999999f, c = 1e-7f;
    float a[SCALAR_CHAINS];
    float s = 0.0f;
    int j;
    for (j = 0; j < SCALAR_CHAINS; j++)
        a[j] = seed + (float)j;
    for (long i = 0; i < iters; i++)
        for (j = 0; j < SCALAR_CHAINS; j++)
            a[j] = a[j] * m + c;
    for (j = 0; j < SCALAR_CHAINS; j++)
        s += a[j];
    return s;
}

static float fma_run(gdn_isa isa, long iters, float seed)
{
#ifdef MACHINE_X86
    if (isa == GDN_ISA_AVX512)
        return fma_avx512(iters, seed);
    if (isa == GDN_ISA_AVX2)
        return fma_avx2(iters, seed);
#endif
    return fma_scalar(iters, seed);
}

static double fma_flops_per_iter(gdn_isa isa)
{
#ifdef MACHINE_X86
    if (isa == GDN_ISA_AVX512)
        return 2.0 * 16 * AVX512_CHAINS;
    if (isa == GDN_ISA_AVX2)
        return 2.0 * 8 * AVX2_CHAINS;
#endif
    return 2.0 * SCALAR_CHAINS;
}

tool_fma_peak tool_measure_fma(int threads, gdn_isa isa)
{
    tool_fma_peak r;
    long iters = 1 << 16;
    double t, best = 0.0;
    int rep;

    if (isa == GDN_ISA_AUTO || !gdn_cpu_supports(isa)) {
        isa = gdn_cpu_supports(GDN_ISA_AVX512) ? GDN_ISA_AVX512
              : gdn_cpu_supports(GDN_ISA_AVX2) ? GDN_ISA_AVX2
                                               : GDN_ISA_SCALAR;
    }
#ifndef MACHINE_X86
    isa = GDN_ISA_SCALAR;
#endif
    r.isa = isa;
    r.threads = resolve_threads(threads);

    /* Calibrate on one thread: about 0.1 s per measured run. */
    for (;;) {
        t = now_s();
        fma_sink = fma_run(isa, iters, 1.0f);
        t = now_s() - t;
        if (t > 0.01 || iters > (1L << 40))
            break;
        iters *= 4;
    }
    iters = (long)((double)iters * 0.1 / (t > 0 ? t : 1e-3));
    if (iters < 1)
        iters = 1;
    /* One thread, the calibrated length, best of 3: the per-core rate. */
    r.single_gflops = 0.0;
    for (rep = 0; rep < 3; rep++) {
        double g1;
        t = now_s();
        fma_sink = fma_run(isa, iters, 1.0f);
        t = now_s() - t;
        g1 = fma_flops_per_iter(isa) * (double)iters / (t > 0 ? t : 1e-9) / 1e9;
        if (g1 > r.single_gflops)
            r.single_gflops = g1;
    }

    for (rep = 0; rep < 3; rep++) {
        double t0 = now_s(), dt, rate;
#ifdef _OPENMP
#pragma omp parallel num_threads(r.threads)
#endif
        {
            int id = 0;
#ifdef _OPENMP
            id = omp_get_thread_num();
#endif
            float v = fma_run(isa, iters, 1.0f + (float)id);
            if (v == 12345.0f) /* never true; keeps the result live */
                fma_sink = v;
        }
        dt = now_s() - t0;
        rate = fma_flops_per_iter(isa) * (double)iters * r.threads / dt;
        if (rate > best)
            best = rate;
    }
    r.gflops = best / 1e9;
    return r;
}

int tool_cpu_contended(const tool_fma_peak *f)
{
    return f->threads > 1 && f->gflops < 0.75 * f->threads * f->single_gflops;
}

/* ---- memory bandwidth ----------------------------------------------------------------------- */

#ifdef MACHINE_X86
__attribute__((target("avx512f"))) static void axpy_avx512(float *y, const float *x, size_t n, float s)
{
    const __m512 vs = _mm512_set1_ps(s);
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(vs, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    for (; i < n; i++)
        y[i] += s * x[i];
}

__attribute__((target("avx2,fma"))) static void axpy_avx2(float *y, const float *x, size_t n, float s)
{
    const __m256 vs = _mm256_set1_ps(s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(vs, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++)
        y[i] += s * x[i];
}
#endif

static void axpy_scalar(float *y, const float *x, size_t n, float s)
{
    size_t i;
    for (i = 0; i < n; i++)
        y[i] += s * x[i];
}

typedef void (*axpy_fn)(float *, const float *, size_t, float);

size_t tool_l3_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (v <= 0)
        return (size_t)32 << 20;
    return (size_t)v;
}

tool_mem_bw tool_measure_memory(int threads, size_t bytes)
{
    tool_mem_bw r;
    axpy_fn fn = axpy_scalar;
    float *x, *y;
    size_t n;
    double best = 0.0;
    int nt, pass;

    memset(&r, 0, sizeof r);
    nt = resolve_threads(threads);
    r.threads = nt;
    if (bytes == 0) {
        size_t l3 = tool_l3_bytes();
        bytes = (size_t)512 << 20;
        if (l3 <= ((size_t)1 << 30) / 4 && 4 * l3 > bytes)
            bytes = 4 * l3;
        if (bytes > ((size_t)1 << 30))
            bytes = (size_t)1 << 30;
    }
#ifdef MACHINE_X86
    if (gdn_cpu_supports(GDN_ISA_AVX512))
        fn = axpy_avx512;
    else if (gdn_cpu_supports(GDN_ISA_AVX2))
        fn = axpy_avx2;
#endif
    n = bytes / 2 / sizeof(float);
    n = (n + 1023) / 1024 * 1024;
    x = aligned_alloc(64, n * sizeof(float));
    y = aligned_alloc(64, n * sizeof(float));
    if (!x || !y) {
        free(x);
        free(y);
        return r;
    }
    r.array_bytes = 2 * n * sizeof(float);

    /* First touch on the threads that use each part, then a few timed passes. */
    for (pass = -1; pass < 6; pass++) {
        double t0 = now_s(), dt;
        float s = (pass & 1) ? 1e-3f : -1e-3f;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
        {
            int id = 0, cnt = 1;
            size_t lo, hi, i;
#ifdef _OPENMP
            id = omp_get_thread_num();
            cnt = omp_get_num_threads();
#endif
            lo = n * (size_t)id / (size_t)cnt / 16 * 16;
            hi = id == cnt - 1 ? n : n * (size_t)(id + 1) / (size_t)cnt / 16 * 16;
            if (pass < 0) {
                for (i = lo; i < hi; i++) {
                    x[i] = (float)(i & 1023) * 1e-3f;
                    y[i] = 1.0f;
                }
            } else {
                fn(y + lo, x + lo, hi - lo, s);
            }
        }
        dt = now_s() - t0;
        if (pass >= 0) {
            double rate = 3.0 * (double)n * sizeof(float) / dt;
            if (rate > best)
                best = rate;
        }
    }
    mem_sink = (double)y[n / 2];
    free(x);
    free(y);
    r.gbytes_per_s = best / 1e9;
    return r;
}
