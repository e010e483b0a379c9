/*
 * test_cuda_map — the grids of the CUDA backend's pairs kernel (fast_pairs_kernel: verify windows and short
 * prefills at Dk = Dv = 128 or 256), checked on the host, so on every machine, GPU or none.
 *
 * The kernel and its launcher take their arithmetic from src/cuda/pairs_map.h: the launcher's choice of grid
 * (pairs_plan_grid: one CTA per item with the drain rule's front and tail, the persistent grid, or contiguous tile
 * ranges) and each CTA's walk over its items (pairs_cta_walk, pairs_item_at, pairs_range_item_at). This test runs the
 * same functions over a sweep of calls (head counts around the waves' edges, T = 2..8, tiles per item, SM counts and
 * occupancies, every forced grid and drain request) and checks that
 *   1. every (sequence, head) pair's tiles are covered exactly once, by items inside their head, of no more tiles
 *      than the shared memory the launcher sized (2^jlog; ranges: the head's 4 tiles), through 32-bit range indices;
 *   2. one CTA per item means exactly one item for each CTA (the drain rule's premise), the front's CTAs first and
 *      the tail's last, each on the heads they are named for;
 *   3. the plan keeps its limits (grids of at most 2^31 - 1 CTAs, resident-sized persistent grids, ranges only at
 *      D = 128 with 4 tiles per item and fewer than 2^31 tiles, front and tail only where the kernel maps them);
 *   4. on the H200's shape (132 SMs, 4 CTAs per SM) the rule picks what docs/PERF.md measured (sessions 45-47).
 * The GPU tests (test_cuda) run the kernels themselves against the float64 reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/pairs_map.h"

static int g_fail = 0;
static long long g_checks = 0;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        g_checks++;                                                                                                    \
        if (!(cond)) {                                                                                                 \
            if (g_fail < 20) {                                                                                         \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                            \
                printf(__VA_ARGS__);                                                                                   \
                printf("\n");                                                                                          \
            }                                                                                                          \
            g_fail++;                                                                                                  \
        }                                                                                                              \
    } while (0)

static pairs_plan_in plan_in(int D, int T, int64_t heads, int jlog, int per_sm, int num_sms, int ask, int fast_j,
                             int tail_req, int front_req)
{
    pairs_plan_in in;
    in.D = D;
    in.T = T;
    in.heads = heads;
    in.jlog = jlog;
    in.per_sm = per_sm;
    in.num_sms = num_sms;
    in.ask = ask;
    in.fast_j = fast_j;
    in.tail_req = tail_req;
    in.front_req = front_req;
    return in;
}

#define DESC "D=%d T=%d heads=%lld jlog=%d per_sm=%d sms=%d ask=%d J=%d tail_req=%d front_req=%d"
#define DARGS(in)                                                                                                      \
    (in)->D, (in)->T, (long long)(in)->heads, (in)->jlog, (in)->per_sm, (in)->num_sms, (in)->ask, (in)->fast_j,        \
        (in)->tail_req, (in)->front_req

/* The plan's limits (3 above). */
static void check_limits(const pairs_plan_in *in, pairs_plan pl)
{
    const int tiles = in->D * in->D / 4096;
    const int64_t items = in->heads * (tiles >> in->jlog), slots = (int64_t)in->per_sm * in->num_sms;
    CHECK(pl.form == 3 || pl.form == 4 || pl.form == 5, DESC ": form %d", DARGS(in), pl.form);
    CHECK(pl.grid >= 1 && pl.grid <= 0x7fffffff, DESC ": grid %lld", DARGS(in), (long long)pl.grid);
    CHECK(pl.tail >= 0 && pl.front >= 0 && pl.tail + (int64_t)pl.front <= in->heads, DESC ": tail %d front %d",
          DARGS(in), pl.tail, pl.front);
    if (pl.tail > 0 || pl.front > 0)
        CHECK(pl.form == 5 && in->D == 128 && in->jlog >= 1 && 2 * items <= 0x7fffffff,
              DESC ": a front or tail the kernel does not map (form %d)", DARGS(in), pl.form);
    if (pl.form == 4)
        CHECK(in->D == 128 && in->jlog == 2 && in->heads * tiles <= 0x7fffffff && pl.grid <= slots &&
                  pl.grid <= in->heads * tiles,
              DESC ": ranges where they do not apply (grid %lld)", DARGS(in), (long long)pl.grid);
    if (pl.form == 3)
        CHECK(pl.grid <= slots && pl.grid <= items, DESC ": persistent grid %lld", DARGS(in), (long long)pl.grid);
    if (pl.form == 5)
        CHECK(pl.grid == (items + (int64_t)(pl.tail + pl.front) * (tiles >> in->jlog) > 0x7fffffff
                              ? 0x7fffffff
                              : items + (int64_t)(pl.tail + pl.front) * (tiles >> in->jlog)),
              DESC ": one CTA per item, grid %lld", DARGS(in), (long long)pl.grid);
    if (in->ask == 3 || in->ask == 5)
        CHECK(pl.form == in->ask, DESC ": asked for grid %d, got %d", DARGS(in), in->ask, pl.form);
}

static unsigned char *g_cnt;
static size_t g_cnt_len;

/* Walk every CTA of a grid of G (1 and 2 above); G is the plan's grid unless `clip_to` > 0 stands in for a grid
   clipped at 2^31 - 1 CTAs (then each CTA walks b + k G). */
static void check_cover(const pairs_plan_in *in, pairs_plan pl, int64_t clip_to)
{
    const int tiles = in->D * in->D / 4096, range = pl.form == 4, half_ok = in->D == 128;
    const int64_t heads = in->heads, tt = heads * tiles, G = clip_to > 0 ? clip_to : pl.grid;
    if ((size_t)tt > g_cnt_len) {
        free(g_cnt);
        g_cnt_len = (size_t)tt;
        g_cnt = (unsigned char *)malloc(g_cnt_len);
        if (!g_cnt) {
            printf("FAIL: out of memory\n");
            exit(1);
        }
    }
    memset(g_cnt, 0, (size_t)tt);
    const int64_t fc = (int64_t)pl.front * 2 * (tiles >> in->jlog);
    const int64_t cut = fc + (heads - pl.front - pl.tail) * (tiles >> in->jlog);
    int bad = 0;
    for (int64_t b = 0; b < G && !bad; b++) {
        const pairs_walk w = pairs_cta_walk(b, G, heads, tiles, in->jlog, pl.front, pl.tail, range, half_ok);
        int64_t walked = 0;
        if (!range && (w.jl < 0 || w.jl > in->jlog || w.per != tiles >> w.jl)) {
            CHECK(0, DESC ": CTA %lld at jl %d per %d", DARGS(in), (long long)b, w.jl, w.per);
            bad = 1;
            break;
        }
        for (int64_t it = w.first; it < w.end && !bad;) {
            int64_t pair;
            int t0, nt;
            if (range) {
                unsigned hp;
                CHECK(w.end <= 0x7fffffff, DESC ": a range past 2^31 tiles", DARGS(in));
                pairs_range_item_at(it, w.end, tiles, &hp, &t0, &nt);
                pair = hp;
                it += nt;
            } else {
                pairs_item_at(it, w.per, w.jl, &pair, &t0);
                nt = 1 << w.jl;
                it += w.step;
            }
            walked++;
            if (!(pair >= 0 && pair < heads && t0 >= 0 && nt >= 1 && t0 + nt <= tiles && nt <= (1 << in->jlog))) {
                CHECK(0, DESC ": CTA %lld item: pair %lld tiles %d..%d", DARGS(in), (long long)b, (long long)pair, t0,
                      t0 + nt - 1);
                bad = 1;
                break;
            }
            /* the front's CTAs on the first heads, the tail's on the last (2 above) */
            if (pl.form == 5 && clip_to <= 0 && (pl.front > 0 || pl.tail > 0)) {
                const int where = b < fc ? 0 : b < cut ? 1 : 2, half = w.jl == in->jlog - 1;
                const int ok = where == 0   ? half && pair < pl.front
                               : where == 1 ? !half && pair >= pl.front && pair < heads - pl.tail
                                            : half && pair >= heads - pl.tail;
                if (!ok) {
                    CHECK(0, DESC ": CTA %lld (%s) took pair %lld at jl %d", DARGS(in), (long long)b,
                          where == 0 ? "front" : where == 1 ? "middle" : "tail", (long long)pair, w.jl);
                    bad = 1;
                    break;
                }
            }
            for (int j = 0; j < nt; j++)
                if (g_cnt[pair * tiles + t0 + j] < 255)
                    g_cnt[pair * tiles + t0 + j]++;
        }
        if (pl.form == 5 && clip_to <= 0 && walked != 1) {
            CHECK(0, DESC ": CTA %lld of a one-item grid walked %lld items", DARGS(in), (long long)b,
                  (long long)walked);
            bad = 1;
        }
    }
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < tt; i++)
        if (g_cnt[i] != 1) {
            wrong++;
            if (first < 0)
                first = i;
        }
    CHECK(!bad && wrong == 0,
          DESC ": form %d grid %lld tail %d front %d: %lld tiles not covered once (first: pair %lld tile %lld, %d times)",
          DARGS(in), pl.form, (long long)G, pl.tail, pl.front, (long long)wrong,
          (long long)(first < 0 ? -1 : first / tiles), (long long)(first < 0 ? -1 : first % tiles),
          first < 0 ? 1 : g_cnt[first]);
}

/* The rule on the H200's shape (4 above): 132 SMs, 4 CTAs per SM at 4 tiles per item for D = 128, T <= 8. */
static void check_h200_rule(void)
{
    struct {
        int T, B, ask, fast_j;
        int form, tail, front;
        long long grid;
    } cases[] = {
        /* one item per CTA up to T = 5; from three waves of items (1584) a tail of 2/11 of 528 = 96, at T <= 4 a
           front as large (session 46); at T = 5 the tail is at most 1/32 of the heads */
        {4, 64, 0, 0, 5, 96, 96, 2048 + 192},
        {4, 256, 0, 0, 5, 96, 96, 8192 + 192},
        {4, 128, 0, 0, 5, 96, 96, 4096 + 192},
        {3, 64, 0, 0, 5, 96, 96, 2048 + 192},
        {5, 64, 0, 0, 5, 64, 0, 2048 + 64},
        {5, 256, 0, 0, 5, 96, 0, 8192 + 96},
        {4, 32, 0, 0, 5, 0, 0, 1024}, /* two waves: no tail */
        {2, 64, 0, 0, 5, 0, 0, 2048}, /* T = 2: none */
        {4, 1, 0, 0, 5, 0, 0, 32},
        /* persistent at T = 6, and from T = 7 where the heads are fewer than twice the resident CTAs */
        {6, 64, 0, 0, 3, 0, 0, 528},
        {6, 256, 0, 0, 3, 0, 0, 528},
        {7, 32, 0, 0, 3, 0, 0, 528},
        {8, 16, 0, 0, 3, 0, 0, 512},
        /* ranges from T = 7 at 2048 heads and more (session 47) */
        {7, 64, 0, 0, 4, 0, 0, 528},
        {8, 64, 0, 0, 4, 0, 0, 528},
        {8, 256, 0, 0, 4, 0, 0, 528},
        /* asked for: GDN_CUDA_FAST_LPR = 3, 4, 5, and tiles per item asked for (no rule's grid) */
        {8, 64, 5, 0, 5, 64, 0, 2048 + 64},
        {4, 64, 3, 0, 3, 0, 0, 528},
        {4, 64, 4, 0, 4, 0, 0, 528},
        {8, 64, 0, 4, 5, 64, 0, 2048 + 64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const pairs_plan_in in = plan_in(128, cases[i].T, 32LL * cases[i].B, 2, 4, 132, cases[i].ask, cases[i].fast_j,
                                         -1, -1);
        const pairs_plan pl = pairs_plan_grid(&in);
        CHECK(pl.form == cases[i].form && pl.tail == cases[i].tail && pl.front == cases[i].front &&
                  pl.grid == cases[i].grid,
              "H200 rule, T=%d B=%d ask=%d J=%d: form %d tail %d front %d grid %lld, expected %d %d %d %lld",
              cases[i].T, cases[i].B, cases[i].ask, cases[i].fast_j, pl.form, pl.tail, pl.front, (long long)pl.grid,
              cases[i].form, cases[i].tail, cases[i].front, cases[i].grid);
        check_limits(&in, pl);
        check_cover(&in, pl, 0);
    }
    /* requests: none (0), forced sizes, and both past the heads */
    {
        pairs_plan_in in = plan_in(128, 4, 2048, 2, 4, 132, 0, 0, 0, 0);
        pairs_plan pl = pairs_plan_grid(&in);
        CHECK(pl.form == 5 && pl.tail == 0 && pl.front == 0 && pl.grid == 2048, "no drain rule asked: %d %d %d",
              pl.form, pl.tail, pl.front);
        in = plan_in(128, 4, 2048, 2, 4, 132, 0, 0, 3, 5);
        pl = pairs_plan_grid(&in);
        CHECK(pl.tail == 3 && pl.front == 5 && pl.grid == 2048 + 8, "forced tail 3 front 5: %d %d", pl.tail,
              pl.front);
        in = plan_in(128, 4, 100, 2, 4, 132, 0, 0, 1000, 1000);
        pl = pairs_plan_grid(&in);
        CHECK(pl.tail == 100 && pl.front == 0, "forced past the heads: tail %d front %d", pl.tail, pl.front);
        check_cover(&in, pl, 0);
        in = plan_in(128, 4, 2048, 2, 4, 132, 0, 0, 0, -1); /* front automatic only follows an automatic tail */
        pl = pairs_plan_grid(&in);
        CHECK(pl.tail == 0 && pl.front == 0, "automatic front without a tail: %d %d", pl.tail, pl.front);
    }
    /* the limits past 2^31 (not walked: too many CTAs): a range grid would need 32-bit tile indices, so the
       persistent grid takes it; a one-item grid past 2^31 - 1 CTAs is clipped (its CTAs then walk b + k G) and
       maps no front or tail */
    {
        pairs_plan_in in = plan_in(128, 8, 600000000LL, 2, 4, 132, 0, 0, -1, -1);
        pairs_plan pl = pairs_plan_grid(&in);
        CHECK(pl.form == 3 && pl.grid == 528, "2.4e9 tiles at T=8: form %d grid %lld", pl.form, (long long)pl.grid);
        check_limits(&in, pl);
        in = plan_in(256, 4, 600000000LL, 0, 4, 132, 0, 0, -1, -1);
        pl = pairs_plan_grid(&in);
        CHECK(pl.form == 5 && pl.grid == 0x7fffffff && pl.tail == 0 && pl.front == 0,
              "9.6e9 items: form %d grid %lld tail %d", pl.form, (long long)pl.grid, pl.tail);
        check_limits(&in, pl);
        in = plan_in(128, 4, 600000000LL, 1, 4, 132, 0, 0, -1, -1);
        pl = pairs_plan_grid(&in);
        CHECK(pl.form == 5 && pl.tail == 0 && pl.front == 0, "1.2e9 items at J=2: tail %d front %d", pl.tail,
              pl.front);
        check_limits(&in, pl);
    }
}

int main(void)
{
    check_h200_rule();
    /* the sweep (1-3 above) */
    static const int64_t heads[] = {1, 2, 3, 5, 7, 31, 32, 33, 95, 96, 97, 130, 191, 192, 193, 263, 264, 265, 527,
                                    528, 529, 700, 1055, 1056, 1057, 1583, 1584, 1585, 2048, 2111, 3001};
    static const struct {
        int per_sm, sms;
    } machines[] = {{4, 132}, {1, 1}, {3, 7}, {2, 170}, {4, 16}};
    static const int asks[] = {0, 3, 4, 5};
    static const struct {
        int tail, front;
    } reqs[] = {{-1, -1}, {0, 0}, {1, 0}, {0, 1}, {5, 3}, {100000, 100000}, {-1, 0}, {0, -1}, {-1, 7}};
    static const int Ts[] = {2, 3, 4, 5, 6, 7, 8};
    long long plans = 0;
    for (int D = 128; D <= 256; D += 128) {
        const int tiles = D * D / 4096;
        for (int jlog = 0; (1 << jlog) <= tiles && jlog <= 3; jlog++)
            for (size_t ih = 0; ih < sizeof heads / sizeof heads[0]; ih++)
                for (size_t im = 0; im < sizeof machines / sizeof machines[0]; im++)
                    for (size_t it = 0; it < sizeof Ts / sizeof Ts[0]; it++)
                        for (size_t ia = 0; ia < sizeof asks / sizeof asks[0]; ia++)
                            for (int asked_j = 0; asked_j < 2; asked_j++)
                                for (size_t ir = 0; ir < sizeof reqs / sizeof reqs[0]; ir++) {
                                    /* D = 256: T and the machine change nothing the rule reads but the tail's
                                       waves; keep its sweep to one T */
                                    if (D == 256 && Ts[it] != 4)
                                        continue;
                                    const pairs_plan_in in =
                                        plan_in(D, Ts[it], heads[ih], jlog, machines[im].per_sm, machines[im].sms,
                                                asks[ia], asked_j ? 1 << jlog : 0, reqs[ir].tail, reqs[ir].front);
                                    const pairs_plan pl = pairs_plan_grid(&in);
                                    check_limits(&in, pl);
                                    check_cover(&in, pl, 0);
                                    plans++;
                                    /* a one-item grid clipped: each CTA walks b + k G (stand-in grids smaller
                                       than the items) */
                                    if (pl.form == 5 && pl.tail == 0 && pl.front == 0 && ir == 1 && im == 0) {
                                        const int64_t items = heads[ih] * (tiles >> jlog);
                                        check_cover(&in, pl, items > 2 ? items / 3 : 1);
                                        check_cover(&in, pl, items > 1 ? items - 1 : 1);
                                    }
                                }
    }
    free(g_cnt);
    if (g_fail) {
        printf("test_cuda_map: FAIL, %d of %lld checks (%lld plans)\n", g_fail, g_checks, plans);
        return 1;
    }
    printf("test_cuda_map: PASS, %lld checks (%lld plans walked CTA by CTA)\n", g_checks, plans);
    return 0;
}
