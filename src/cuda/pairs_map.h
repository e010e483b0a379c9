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

/* The rule (D = 128, J automatic): ranges from T = 7 where the heads are at least twice the resident CTAs,
   persistent from T = 6 otherwise, one CTA per item up to T = 5. H200, Qwen3.6 layer, gdn bench, one item per CTA /
   persistent / ranges (docs/PERF.md, session 47): verify T=8 B=64 94.5-95.0 / 92.5-92.6 / 90.3-91.3 us, B=128
   186.5-186.7 / 184.5-184.6 / 179.5-179.6, B=256 370.3-370.6 / 362.6-362.8 / 356.2-356.4, B=32 49.6-49.7 / 47.8-47.9 /
   48.5; T=7 B=64 87.0-87.3 / 84.0-86.9 / 82.7-83.1, B=256 343.0-343.1 / 334.0-334.2 / 327.9-329.8; T=6 B=64 79.4-80.7
   / 78.4-78.5 / 80.0, B=256 315.2-316.3 / 304.5-304.6 / 313.4; T=5 B=64 74.6-75.0 / 75.5-75.6 / 78.3-78.4, B=256
   289.9-290.0 / 295.1 / 308.1; T=4 B=64 71.6 / 74.0 / 76.2, B=256 271.1 / 289.8-290.0 / 298.7-298.8.
   With one CTA per item, the grid's drain: a CTA's rate is set by its own chain, not by how many CTAs share the HBM,
   so as the last wave's CTAs finish at different times the HBM idles (H200 verify T=4 B=64: 16 us CTAs, about 6 us
   lost; a per-CTA timeline, docs/PERF.md session 45). The last K heads therefore run at half the tiles per CTA, two
   CTAs a head, dispatched last, from three waves of CTAs on, for D = 128 and T >= 3, where it was measured (T=2 B=64
   and B=32 T=4, two waves, were slower). K (docs/PERF.md, sessions 45-46; gdn bench, the rule against none):
   - T <= 4: 2/11 of the resident CTAs (96 on the H200), the best or within 0.15 us of it at B=64, 96, 128 and 256
     among K = 16-192: T=4 B=64 72.2 -> 71.5 us, B=256 273.7 -> 271.8, T=3 B=64 70.9 -> 70.5;
   - T > 4: that or 1/32 of the heads, the fewer: T=8 B=64 96.7 -> 95.6 at 64 (97.7 at 96), B=256 372.0 -> 370.3-370.6
     at 96 (374.8-375.0 at 256); T=5 B=64 75.2-75.5 -> 74.7-75.0 at 64 (77.1-77.2 at 96).
   Where the rule runs at T <= 4, the first K heads likewise run at half the tiles per CTA, dispatched first, so that
   the first wave's slots turn over at different times (the waves stayed in step: docs/PERF.md, session 45): gdn
   bench verify T=4 B=64 71.65-71.69 -> 71.60-71.61 us, B=96 105.4 -> 104.7 (at 66 heads; 96 not measured), B=128
   139.2 -> 138.0-138.1, B=256 272.3 -> 270.8, T=3 B=256 269.7-269.8 -> 268.35 at 132 heads; T=8 B=64 was 1.6 slower
   (session 46, runs 8-9). */
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
