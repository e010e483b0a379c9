/*
 * pairs_map.h — which state tiles each CTA of fast_pairs_kernel (fast_pairs.cuh) takes, and the grid its
 * launcher (recurrent.cu, launch_fast_pairs) chooses: plain C arithmetic, compiled into the kernel and the
 * launcher and run on the host by tests/test_cuda_map.c, which checks on machines without a GPU that every grid
 * the launcher can choose covers every (sequence, head) pair's tiles exactly once.
 *
 * Terms: heads = N Hv (sequence, head) pairs, each of `tiles` state tiles (D = 128: 4 tiles of 32 rows; D = 256:
 * 16 of 16); an item is 2^jl consecutive tiles of one head, item it = pair (it / per) * per + tile group, per =
 * tiles >> jl. The grids (the launcher's `form`):
 *   5, one CTA per item: CTA b takes item b. With a drain front and tail (D = 128): the first `front` and the last
 *      `tail` heads run at half the tiles per item (two CTAs a head), the front's CTAs first, the tail's last; the
 *      CTAs b < fc = 2 front per take item b of the half-size numbering, CTAs b < cut = fc + (heads - front - tail)
 *      per item front per + (b - fc), and the rest item 2 (heads - tail) per + (b - cut) of the half-size
 *      numbering. Where the grid would pass 2^31 - 1 CTAs it is clipped and each CTA walks b + k gridDim.
 *   3, persistent: the CTAs resident at once, CTA b taking items b + k G (G = gridDim).
 *   4, ranges (D = 128 at 4 tiles per item): the resident CTAs, CTA b walking the tiles [b tt / G, (b + 1) tt / G)
 *      of the call's tt = heads tiles, each head's tiles within its range one item (1 to `tiles` tiles).
 */
#ifndef GDN_CUDA_PAIRS_MAP_H
#define GDN_CUDA_PAIRS_MAP_H

#include <stdint.h>

#ifdef __CUDACC__
#define PAIRS_HD __host__ __device__ __forceinline__
#else
#define PAIRS_HD static inline
#endif

/* One CTA's walk: items it = first, first + step, ... while it < end (ranges: tile indices, each item's tiles
   following the last), at 2^jl tiles per item, per items a head. */
typedef struct {
    int64_t first, end, step;
    int jl, per;
} pairs_walk;

/* CTA b of a grid of G: its walk. heads, tiles, jlog (the call's items: 2^jlog tiles), front, tail (the drain
   rule's heads at half the tiles; 0 without), range (the range grid), half_ok (compiled in: the kernel maps a front
   and tail, D = 128). */
PAIRS_HD pairs_walk pairs_cta_walk(int64_t b, int64_t G, int64_t heads, int tiles, int jlog, int front, int tail,
                                   int range, int half_ok)
{
    pairs_walk w;
    w.jl = jlog;
    w.per = tiles >> jlog;
    w.first = b;
    w.step = G;
    if (half_ok && !range && (tail > 0 || front > 0)) {
        const int64_t fc = (int64_t)front * 2 * w.per;                      /* the front's CTAs */
        const int64_t cut = fc + (heads - front - tail) * w.per;            /* the CTAs before the tail's */
        if (w.first < fc)
            w.jl -= 1, w.per *= 2;
        else if (w.first < cut)
            w.first = (int64_t)front * w.per + (w.first - fc);
        else
            w.first = 2 * (heads - tail) * w.per + (w.first - cut), w.jl -= 1, w.per *= 2;
        w.step = heads * tiles;
    }
    w.end = heads * w.per;
    if (range) {
        const int64_t tt = heads * tiles;
        w.first = b * tt / G;
        w.end = (b + 1) * tt / G;
    }
    return w;
}

/* Item it of a one-item or persistent walk: its (sequence, head) pair and first tile (2^jl tiles follow). */
PAIRS_HD void pairs_item_at(int64_t it, int per, int jl, int64_t *pair, int *tile0)
{
    const int64_t hp = it / per;
    *tile0 = (int)(it - hp * per) << jl;
    *pair = hp;
}

/* Item u of a range walk ending at `end` (fewer than 2^31 tiles: the launcher): its pair, first tile and tiles,
   up to the head's last tile or the range's end. */
PAIRS_HD void pairs_range_item_at(int64_t u, int64_t end, int tiles, unsigned *pair, int *tile0, int *nt)
{
    const unsigned uu = (unsigned)u, left = (unsigned)end - uu;
    *pair = uu / (unsigned)tiles;
    *tile0 = (int)(uu % (unsigned)tiles);
    *nt = (int)((unsigned)(tiles - *tile0) < left ? (unsigned)(tiles - *tile0) : left);
}

/* The launcher's grid for a call (all that is not a CUDA query): what it was asked and what it measured. */
typedef struct {
    int D, T;         /* head dim (128 or 256), tokens */
    int64_t heads;    /* N Hv */
    int jlog;         /* log2 tiles per item, chosen */
    int per_sm;       /* CTAs resident per SM at that jlog (the occupancy query) */
    int num_sms;      /* the device's SMs */
    int ask;          /* GDN_CUDA_FAST_LPR % 100: 3, 4 or 5 force a grid; anything else, the rule */
    int fast_j;       /* GDN_CUDA_FAST_J (> 0: the tiles per item were asked for) */
    int tail_req;     /* the backend's request: -1 automatic, 0 none, K forced */
    int front_req;    /* likewise */
} pairs_plan_in;

typedef struct {
    int form;     /* 3 persistent, 4 ranges, 5 one CTA per item */
    int64_t grid; /* CTAs (at most 2^31 - 1) */
    int tail, front;
} pairs_plan;

/* The rule (measured on the H200: recurrent.cu, launch_fast_pairs, and docs/PERF.md sessions 45-47): ranges from
   T = 7 where the heads are at least twice the resident CTAs, persistent from T = 6 otherwise, one CTA per item up
   to T = 5 (D = 128, J automatic); with one CTA per item (D = 128, at least 2 tiles per item) from three waves of
   items on at T >= 3 a tail of 2/11 of the resident CTAs (at T > 4 at most 1/32 of the heads), and at T <= 4 a front
   as large. */
PAIRS_HD pairs_plan pairs_plan_grid(const pairs_plan_in *in)
{
    pairs_plan o;
    const int tiles = in->D * in->D / 4096;
    const int64_t items = in->heads * (tiles >> in->jlog), heads = in->heads;
    const int64_t slots = (int64_t)in->per_sm * in->num_sms;
    const int ask = in->ask;
    const int rule = !(ask == 3 || ask == 4 || ask == 5) && in->D == 128 && in->fast_j <= 0 && in->T >= 6;
    int64_t grid = items, tail = 0, front = 0;
    int form = ask == 3 || ask == 4 ? ask : rule ? 3 : 5;
    if (form != 5) {
        if (rule && in->T >= 7 && heads >= 2 * slots)
            form = 4;
        if (form == 4 && !(in->D == 128 && in->jlog == 2 && heads * tiles <= 0x7fffffff))
            form = 3;
        if (form == 4) /* the CTAs resident at once, each a contiguous range of the tiles */
            grid = heads * tiles < slots ? heads * tiles : slots;
        else /* persistent: the CTAs resident at once */
            grid = items < slots ? items : slots;
    }
    const int halves = in->D == 128 && form == 5 && in->jlog >= 1 && 2 * items <= 0x7fffffff; /* the kernel maps */
    if (halves && in->tail_req != 0) {
        if (in->tail_req > 0) {
            tail = in->tail_req < heads ? in->tail_req : heads;
        } else if (in->T >= 3 && items >= 3 * slots) {
            tail = 2 * slots / 11;
            tail = in->T <= 4 || heads / 32 > tail ? tail : heads / 32;
            tail = tail < 1 ? 1 : tail < heads ? tail : heads;
        }
    }
    if (halves) { /* automatic: the tail's K where the rule (a requested tail of -1) gave one, at T <= 4 */
        front = in->front_req > 0 ? in->front_req : in->front_req < 0 && in->tail_req < 0 && in->T <= 4 ? tail : 0;
        front = front < heads - tail ? front : heads - tail;
    }
    grid += (tail + front) * (tiles >> in->jlog);
    o.form = form;
    o.grid = grid > 0x7fffffff ? 0x7fffffff : grid;
    o.tail = (int)tail;
    o.front = (int)front;
    return o;
}

#endif
