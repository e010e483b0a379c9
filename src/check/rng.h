/*
 * rng.h — the small deterministic random source of the conformance engine and the tests:
 * xoshiro256** seeded through splitmix64, uniforms in [0,1), Box–Muller normals. Internal.
 */
#ifndef GDN_CHECK_RNG_H
#define GDN_CHECK_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct gdn_rng {
    uint64_t s[4];
    double spare; /* second Box–Muller normal */
    int has_spare;
} gdn_rng;

static inline uint64_t gdn_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline void gdn_rng_seed(gdn_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = gdn_splitmix64(&x);
    r->has_spare = 0;
    r->spare = 0.0;
}

static inline uint64_t gdn_rng_u64(gdn_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t x = s[1] * 5;
    const uint64_t result = ((x << 7) | (x >> 57)) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double gdn_rng_uniform(gdn_rng *r)
{
    return (double)(gdn_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n >= 1 (tiny modulo bias is irrelevant here). */
static inline int64_t gdn_rng_below(gdn_rng *r, int64_t n)
{
    return (int64_t)(gdn_rng_u64(r) % (uint64_t)n);
}

/* Standard normal (Box–Muller). */
static inline double gdn_rng_normal(gdn_rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = gdn_rng_uniform(r), u2 = gdn_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    const double rad = sqrt(-2.0 * log(u1)), ang = 6.283185307179586 * u2;
    r->spare = rad * sin(ang);
    r->has_spare = 1;
    return rad * cos(ang);
}

/* Shuffle n ints in place (Fisher–Yates). */
static inline void gdn_rng_shuffle(gdn_rng *r, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        const int j = (int)gdn_rng_below(r, i + 1);
        const int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

#endif
