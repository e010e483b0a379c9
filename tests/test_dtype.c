/*
 * test_dtype — the element conversions of core/dtype.h (shared by the library, the reference and
 * the gdn tool) and the CPU row conversions of cpu/convert.h.
 *
 *  - hand-picked cases: ties to even, overflow, subnormals, signed zero, NaN stays NaN;
 *  - f16 -> f32 against a float64 decoding of every one of the 65536 halves, and the round trip
 *    f16 -> f32 -> f16 of all of them (NaNs come back quiet);
 *  - f32 -> f16 and f32 -> bf16 against a float64, correctly rounded reference (round to nearest,
 *    ties to even, overflow to infinity) on every value next to each rounding boundary (each
 *    midpoint between two neighbours and the floats beside it, all exponents, subnormals
 *    included) and on random values of every f32 exponent; NaN payloads;
 *  - the F16C row conversions (x86-64 with AVX2, else SKIP) are bitwise identical to the scalar
 *    ones on all 65536 halves and on about 1.3 million f32 values (random bit patterns, NaN
 *    payloads, boundaries), for every row length 0..17 at every alignment, and write nothing past
 *    the row.
 * Exit 0 when every check passed.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/rng.h"
#include "core/dtype.h"
#if defined(__x86_64__)
#include "cpu/convert.h"
#endif

static int failures, checks;

static void check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
    checks++;
    if (cond)
        return;
    if (++failures <= 30) {
        va_list ap;
        printf("FAIL ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
}

/* ---- float64 references ------------------------------------------------------------------------
 * Written from the formats' definitions, independently of dtype.h: a finite value is rounded to
 * `bits` significant bits at its own binade (or at the subnormal quantum below emin) with
 * nearbyint (round to nearest even in the default mode); a result past the largest binade is
 * infinity. Not for NaN. */

static uint16_t ref_round(float f, int bits, int emin, int emax, int bias)
{
    const uint16_t sign = signbit(f) ? (uint16_t)(1u << 15) : 0;
    const uint16_t inf = (uint16_t)((unsigned)(emax + bias + 1) << (bits - 1));
    const double a = fabs((double)f);
    if (isinf(a))
        return sign | inf;
    if (a < ldexp(1.0, emin)) /* subnormal quantum 2^(emin - bits + 1); m == 2^(bits-1) is the smallest normal */
        return sign | (uint16_t)nearbyint(ldexp(a, bits - 1 - emin));
    int e;
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    int E = e - 1;
    double m = nearbyint(ldexp(a, bits - 1 - E)); /* in [2^(bits-1), 2^bits] */
    if (m == ldexp(1.0, bits)) {
        m = ldexp(1.0, bits - 1);
        E++;
    }
    if (E > emax)
        return sign | inf;
    return sign | (uint16_t)((unsigned)(E + bias) << (bits - 1)) | (uint16_t)(m - ldexp(1.0, bits - 1));
}

static uint16_t ref_f16(float f)
{
    return ref_round(f, 11, -14, 15, 15);
}

static uint16_t ref_bf16(float f)
{
    return ref_round(f, 8, -126, 127, 127);
}

/* The exact value of a half (NaN for NaNs). */
static double ref_f16_value(uint16_t h)
{
    const int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    const double s = (h & 0x8000) ? -1.0 : 1.0;
    if (exp == 0x1f)
        return man ? NAN : s * INFINITY;
    if (exp == 0)
        return s * ldexp(man, -24);
    return s * ldexp(1024 + man, exp - 25);
}

static int f16_is_nan(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

static int bf16_is_nan(uint16_t b)
{
    return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0;
}

static float fbits(uint32_t u)
{
    return gdn_bits_to_f32(u);
}

/* ---- hand-picked cases (formerly in test_cli) ---------------------------------------------- */

static void test_cases(void)
{
    /* round to nearest, ties to even */
    check(gdn_f32_to_bf16(1.0f + 0x1p-8f) == 0x3F80, "bf16: tie rounds to even (down)");
    check(gdn_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82, "bf16: tie rounds to even (up)");
    check(gdn_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3F81, "bf16: above the tie rounds up");
    check(gdn_f32_to_bf16(-2.0f) == 0xC000, "bf16: -2");
    check(gdn_bf16_to_f32(gdn_f32_to_bf16(NAN)) != gdn_bf16_to_f32(gdn_f32_to_bf16(NAN)), "bf16: NaN stays NaN");
    check(gdn_f32_to_bf16(FLT_MAX) == 0x7F80, "bf16: FLT_MAX rounds to inf");
    check(gdn_f32_to_bf16(fbits(0x7f7f8000u)) == 0x7F80, "bf16: the tie above the largest finite goes to inf");
    check(gdn_f32_to_bf16(fbits(0x7f7f7fffu)) == 0x7F7F, "bf16: just below that tie stays finite");
    check(gdn_f32_to_bf16(-INFINITY) == 0xFF80, "bf16: -inf");
    check(gdn_f32_to_bf16(-0.0f) == 0x8000, "bf16: -0");
    check(gdn_f32_to_bf16(FLT_TRUE_MIN) == 0x0000, "bf16: the smallest f32 subnormal rounds to 0");
    check(gdn_f32_to_f16(1.0f + 0x1p-11f) == 0x3C00, "f16: tie rounds to even (down)");
    check(gdn_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3C02, "f16: tie rounds to even (up)");
    check(gdn_f32_to_f16(65504.0f) == 0x7BFF, "f16: 65504 is the largest finite");
    check(gdn_f32_to_f16(65519.0f) == 0x7BFF, "f16: 65519 -> max");
    check(gdn_f32_to_f16(nextafterf(65520.0f, 0.0f)) == 0x7BFF, "f16: just below 65520 -> max");
    check(gdn_f32_to_f16(65520.0f) == 0x7C00, "f16: 65520 -> inf");
    check(gdn_f32_to_f16(-65520.0f) == 0xFC00, "f16: -65520 -> -inf");
    check(gdn_f32_to_f16(1e10f) == 0x7C00 && gdn_f32_to_f16(FLT_MAX) == 0x7C00, "f16: large -> inf");
    check(gdn_f32_to_f16(INFINITY) == 0x7C00 && gdn_f32_to_f16(-INFINITY) == 0xFC00, "f16: +-inf");
    check(gdn_f32_to_f16(0x1p-24f) == 0x0001, "f16: smallest subnormal");
    check(gdn_f32_to_f16(0x1p-25f) == 0x0000, "f16: half the smallest subnormal ties to 0");
    check(gdn_f32_to_f16(nextafterf(0x1p-25f, 1.0f)) == 0x0001, "f16: just above half the smallest subnormal -> it");
    check(gdn_f32_to_f16(0x1p-26f) == 0x0000 && gdn_f32_to_f16(FLT_TRUE_MIN) == 0x0000, "f16: tiny -> 0");
    check(gdn_f32_to_f16(-FLT_TRUE_MIN) == 0x8000, "f16: tiny negative -> -0");
    check(gdn_f32_to_f16(1.5f * 0x1p-24f) == 0x0002, "f16: subnormal tie to even");
    check(gdn_f32_to_f16(1023.0f * 0x1p-24f) == 0x03FF, "f16: largest subnormal");
    check(gdn_f32_to_f16(0x1p-14f) == 0x0400, "f16: smallest normal");
    check(gdn_f32_to_f16(nextafterf(0x1p-14f, 0.0f)) == 0x0400, "f16: just below the smallest normal rounds up to it");
    check(gdn_f32_to_f16(-0.0f) == 0x8000 && gdn_f32_to_f16(0.0f) == 0x0000, "f16: +-0");
    check(gdn_f16_to_f32(0x0001) == 0x1p-24f && gdn_f16_to_f32(0x7BFF) == 65504.0f && gdn_f16_to_f32(0xC000) == -2.0f,
          "f16 -> f32");
    check(gdn_f32_to_bits(gdn_f16_to_f32(0x8000)) == 0x80000000u, "f16 -> f32: -0");
}

/* ---- exhaustive over the 16-bit formats --------------------------------------------------- */

static void test_all_halves(void)
{
    int bad_value = 0, bad_trip = 0, bad_bf = 0;
    for (uint32_t i = 0; i < 0x10000; i++) {
        const uint16_t h = (uint16_t)i;
        const float f = gdn_f16_to_f32(h);
        const double want = ref_f16_value(h);
        if (f16_is_nan(h)) {
            /* NaN: quiet, same sign, payload kept in the top mantissa bits; back: quiet half */
            const uint32_t u = gdn_f32_to_bits(f);
            if (!isnan(f) || (u >> 31) != (i >> 15) || !(u & 0x400000u) || ((u >> 13) & 0x1ffu) != (i & 0x1ffu) ||
                (u & 0x1fffu) != 0)
                bad_value++;
            if (gdn_f32_to_f16(f) != (h | 0x0200))
                bad_trip++;
        } else {
            if ((double)f != want || !signbit(f) != !signbit(want))
                bad_value++;
            if (gdn_f32_to_f16(f) != h) /* every non-NaN half, infinities and -0 included */
                bad_trip++;
        }
        /* bf16 -> f32 is the upper half of the bits; back again unchanged (NaNs made quiet) */
        const float b = gdn_bf16_to_f32(h);
        if (gdn_f32_to_bits(b) != i << 16 || gdn_f32_to_bf16(b) != (bf16_is_nan(h) ? (h | 0x0040) : h))
            bad_bf++;
    }
    check(bad_value == 0, "f16 -> f32: %d of 65536 values differ from the float64 decoding", bad_value);
    check(bad_trip == 0, "f16 -> f32 -> f16: %d of 65536 do not come back", bad_trip);
    check(bad_bf == 0, "bf16 -> f32 -> bf16: %d of 65536 wrong", bad_bf);
}

/* ---- f32 -> f16 / bf16 against the float64 reference --------------------------------------- */

/* One conversion under test, its reference, and the values it got wrong. */
typedef struct conv {
    const char *name;
    uint16_t (*fn)(float);
    uint16_t (*ref)(float);
    long n, bad;
} conv;

static void cmp(conv *c, float x)
{
    const uint16_t got = c->fn(x), want = c->ref(x);
    c->n++;
    if (got != want && ++c->bad <= 5)
        printf("  %s(%a = 0x%08x): got 0x%04x, want 0x%04x\n", c->name, (double)x, (unsigned)gdn_f32_to_bits(x), got,
               want);
}

/* x, its two f32 neighbours, both signs. */
static void around(conv *c, float x)
{
    const float v[3] = {x, nextafterf(x, 0.0f), nextafterf(x, INFINITY)};
    for (int i = 0; i < 3; i++) {
        cmp(c, v[i]);
        cmp(c, -v[i]);
    }
}

static void test_rounding(void)
{
    conv t16 = {"f32 -> f16", gdn_f32_to_f16, ref_f16, 0, 0}, tb16 = {"f32 -> bf16", gdn_f32_to_bf16, ref_bf16, 0, 0};

    /* every representable value and every midpoint between neighbours (the ties), with the floats
     * beside them: all binades, subnormals, the overflow boundary (65504 | 65520 | 65536) */
    for (uint32_t h = 0; h < 0x7c00; h++) {
        const double lo = ref_f16_value((uint16_t)h), hi = h == 0x7bff ? 65536.0 : ref_f16_value((uint16_t)(h + 1));
        around(&t16, (float)lo);
        around(&t16, (float)(0.5 * (lo + hi))); /* exact: 12 significant bits */
    }
    around(&t16, 65536.0f);
    for (uint32_t b = 0; b < 0x7f80; b++) {
        const double lo = gdn_bf16_to_f32((uint16_t)b);
        const double hi = b == 0x7f7f ? ldexp(1.0, 128) : gdn_bf16_to_f32((uint16_t)(b + 1));
        around(&tb16, (float)lo);
        around(&tb16, (float)(0.5 * (lo + hi))); /* exact: 9 significant bits */
    }
    cmp(&tb16, INFINITY);
    cmp(&tb16, -INFINITY);

    /* random mantissas in every f32 binade (biased exponents 0..254: subnormals to FLT_MAX) */
    gdn_rng r;
    gdn_rng_seed(&r, 0x64747970ull);
    for (uint32_t e = 0; e < 255; e++)
        for (int i = 0; i < 2048; i++) {
            const uint32_t u = (uint32_t)gdn_rng_u64(&r);
            const float x = fbits((u & 0x80000000u) | (e << 23) | (u & 0x7fffffu));
            cmp(&t16, x);
            cmp(&tb16, x);
        }
    const conv *cv[2] = {&t16, &tb16};
    for (int i = 0; i < 2; i++)
        check(cv[i]->bad == 0, "%s: %ld of %ld values differ from the correctly rounded reference", cv[i]->name,
              cv[i]->bad, cv[i]->n);

    /* NaN: any payload, both signs, quiet or signalling, stays NaN (quiet) with its sign */
    long bad = 0, n = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t payload = (uint32_t)gdn_rng_u64(&r) & 0x7fffffu;
        if (i < 23)
            payload = 1u << i; /* each single payload bit, the lowest ones included */
        if (payload == 0)
            continue;
        const uint32_t u = ((uint32_t)(i & 1) << 31) | 0x7f800000u | payload;
        const float x = fbits(u);
        const uint16_t h = gdn_f32_to_f16(x), b = gdn_f32_to_bf16(x);
        n++;
        if (!f16_is_nan(h) || !(h & 0x0200) || (h >> 15) != (u >> 31) || (h & 0x1ff) != ((u >> 13) & 0x1ff))
            bad++;
        if (!bf16_is_nan(b) || !(b & 0x0040) || (b >> 15) != (u >> 31) || (b & 0x3f) != ((u >> 16) & 0x3f))
            bad++;
    }
    check(bad == 0, "f32 NaN -> f16 / bf16: %ld of %ld not a quiet NaN with the sign and top payload bits", bad,
          2 * n);
}

/* ---- F16C row conversions == scalar ---------------------------------------------------------- */

#if defined(__x86_64__)
enum { TAIL = 16 };

/* f32 inputs: every half as f32, values around every f16 rounding boundary, NaN payloads, random
 * bit patterns (all exponents; NaNs among them). */
static float *f16c_inputs(size_t *count)
{
    const size_t n_rand = 1000000, n_nan = 20000;
    const size_t n = 0x10000 + 6 * 0x7c00 + n_nan + n_rand;
    float *x = (float *)malloc(n * sizeof(float));
    size_t k = 0;
    gdn_rng r;
    if (!x)
        return NULL;
    gdn_rng_seed(&r, 0x66313663ull);
    for (uint32_t h = 0; h < 0x10000; h++)
        x[k++] = gdn_f16_to_f32((uint16_t)h);
    for (uint32_t h = 0; h < 0x7c00; h++) {
        const double lo = ref_f16_value((uint16_t)h), hi = h == 0x7bff ? 65536.0 : ref_f16_value((uint16_t)(h + 1));
        const float mid = (float)(0.5 * (lo + hi));
        x[k++] = mid;
        x[k++] = -mid;
        x[k++] = nextafterf(mid, 0.0f);
        x[k++] = nextafterf(mid, INFINITY);
        x[k++] = -nextafterf(mid, 0.0f);
        x[k++] = nextafterf((float)lo, INFINITY);
    }
    for (size_t i = 0; i < n_nan; i++) {
        const uint32_t u = (uint32_t)gdn_rng_u64(&r);
        const uint32_t payload = (u & 0x7fffffu) ? (u & 0x7fffffu) : 1u;
        x[k++] = fbits((u & 0x80000000u) | 0x7f800000u | payload);
    }
    for (size_t i = 0; i < n_rand; i++)
        x[k++] = fbits((uint32_t)gdn_rng_u64(&r));
    *count = k;
    return x;
}

static void test_f16c(void)
{
    if (!gdn_cpu_supports(GDN_ISA_AVX2)) {
        printf("SKIP F16C row conversions (CPU lacks AVX2/F16C)\n");
        return;
    }
    size_t n = 0;
    float *x = f16c_inputs(&n);
    uint16_t *all = (uint16_t *)malloc(0x10000 * sizeof(uint16_t));
    uint16_t *ha = (uint16_t *)malloc((n + TAIL) * sizeof(uint16_t)), *hb = (uint16_t *)malloc((n + TAIL) * sizeof(uint16_t));
    float *fa = (float *)malloc((0x10000 + TAIL) * sizeof(float)), *fb = (float *)malloc((0x10000 + TAIL) * sizeof(float));
    if (!x || !all || !ha || !hb || !fa || !fb) {
        check(0, "F16C: out of memory");
        goto done;
    }

    /* whole arrays */
    for (uint32_t i = 0; i < 0x10000; i++)
        all[i] = (uint16_t)i;
    gdn_f16_to_f32__scalar(all, 0x10000, fa);
    gdn_f16_to_f32__f16c(all, 0x10000, fb);
    check(memcmp(fa, fb, 0x10000 * sizeof(float)) == 0, "F16C f16 -> f32 differs from scalar on the 65536 halves");
    gdn_f32_to_f16__scalar(x, (int64_t)n, ha);
    gdn_f32_to_f16__f16c(x, (int64_t)n, hb);
    {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++)
            if (ha[i] != hb[i] && bad++ == 0)
                first = i;
        check(bad == 0, "F16C f32 -> f16 differs from scalar on %zu of %zu values (first: 0x%08x -> 0x%04x vs 0x%04x)",
              bad, n, bad ? (unsigned)gdn_f32_to_bits(x[first]) : 0u, bad ? ha[first] : 0, bad ? hb[first] : 0);
    }

    /* every row length 0..17 (the 8-wide loop and every tail) at every alignment, all over the
     * inputs; nothing written past the row */
    {
        long bad_h = 0, bad_f = 0, bad_tail = 0;
        for (int len = 0; len <= 17; len++)
            for (size_t s = (size_t)len % 8; s + (size_t)len <= n; s += 4099 + (size_t)len) {
                memset(ha, 0xA5, (size_t)(len + TAIL) * sizeof(uint16_t));
                memset(hb, 0xA5, (size_t)(len + TAIL) * sizeof(uint16_t));
                gdn_f32_to_f16__scalar(x + s, len, ha);
                gdn_f32_to_f16__f16c(x + s, len, hb);
                bad_h += memcmp(ha, hb, (size_t)len * sizeof(uint16_t)) != 0;
                bad_tail += memcmp(ha + len, hb + len, TAIL * sizeof(uint16_t)) != 0 || hb[len] != 0xA5A5;
                const uint16_t *src = all + (s & 0xffff);
                if ((s & 0xffff) + (size_t)len > 0x10000)
                    continue;
                memset(fa, 0x5A, (size_t)(len + TAIL) * sizeof(float));
                memset(fb, 0x5A, (size_t)(len + TAIL) * sizeof(float));
                gdn_f16_to_f32__scalar(src, len, fa);
                gdn_f16_to_f32__f16c(src, len, fb);
                bad_f += memcmp(fa, fb, (size_t)len * sizeof(float)) != 0;
                bad_tail += memcmp(fa + len, fb + len, TAIL * sizeof(float)) != 0 ||
                            gdn_f32_to_bits(fb[len]) != 0x5A5A5A5Au;
            }
        check(bad_h == 0, "F16C f32 -> f16 rows of length 0..17: %ld differ from scalar", bad_h);
        check(bad_f == 0, "F16C f16 -> f32 rows of length 0..17: %ld differ from scalar", bad_f);
        check(bad_tail == 0, "F16C rows: %ld wrote past the end of the row", bad_tail);
    }
done:
    free(x);
    free(all);
    free(ha);
    free(hb);
    free(fa);
    free(fb);
}
#endif

int main(void)
{
    test_cases();
    test_all_halves();
    test_rounding();
#if defined(__x86_64__)
    test_f16c();
#else
    printf("SKIP F16C row conversions (not x86-64)\n");
#endif
    printf("%s: %d checks, %d failures\n", failures ? "FAIL" : "PASS", checks, failures);
    return failures ? 1 : 0;
}
