/*
 * check.cu — the contents of the index arrays, checked on the device in stream order before the
 * compute kernel (the CUDA backend takes cu_seqlens and slot arrays as device pointers, so the host
 * cannot read them without a synchronisation).
 *
 * One block of 1024 threads checks, in the order the CPU validator does (core/validate.c), each
 * phase only when the earlier ones passed (with batch.num_tokens, a sequence's "length" below is its
 * count: the tokens it runs; the captures of the others are neither checked nor written):
 *   1. cu_seqlens: cu[0] = 0, non-decreasing, cu[N] = seq_len (never past it);
 *   1b. batch.num_tokens: 0 <= num_tokens[n] <= sequence n's tokens;
 *   2. capture.slots_stride >= every sequence's length (when > 0);
 *   3. read and write slots < pool slots;  4. capture slots < capture-pool slots;
 *   5. slot conflicts, with one 64-bit stamp per slot (R flag | W flag | owner n+1, all-ones owner =
 *      several): all reads are stamped first (barrier), then the final writes, then the captures;
 *      a write into a slot already written, or read by another sequence, is a conflict. A sequence
 *      may write what it reads, capture into its own read slot, and capture its last state into its
 *      own write slot (that capture is not stamped), exactly as on the CPU. The stamps touched are
 *      cleared again at the end, so they are all zero between calls (no generation counter, which
 *      graph replays could not advance). Up to SM_SEQS sequences without capture slots keep their
 *      stamps in a shared-memory table instead (sm_stamp): no L2 atomics and nothing to clear.
 * The first error (smallest phase, then index) becomes words->first unless an earlier one is still
 * unreported; words->call_error tells the compute kernel of this call to write nothing. The block
 * waits for earlier work in the stream (it may be launched as a programmatic dependent), then
 * triggers its own dependent (the compute kernel) at once, so that the state loads overlap the check.
 * Cost: O(N + captured tokens) loads and atomics in one block. The compute kernel waits for it: H200, decode
 * with slot arrays B = 2 / 8 / 64 6.2 / 12.9 / 73.5 us against 2.8 / 9.8 / 67.8 with default slots (session 23,
 * with the shared-memory stamps; 6.9 / 13.3 / 75.0 before).
 */
#include "cuda/params.cuh"

#define CT 1024
#define ST_R (1ull << 62)
#define ST_W (1ull << 61)
#define ST_OWNER ((1ull << 61) - 1)
#define NO_ERROR (~0ull)

enum { PH_CU = 1, PH_COUNT = 2, PH_STRIDE = 3, PH_RANGE = 4, PH_CAP_RANGE = 5, PH_WRITE = 6, PH_CAP = 7 };

__device__ __forceinline__ int64_t cu_at(const gdn_cuda_params &P, int64_t i)
{
    return P.cu_i64 ? ((const int64_t *)P.cu)[i] : (int64_t)((const int32_t *)P.cu)[i];
}

__device__ __forceinline__ int64_t read_slot(const gdn_cuda_params &P, int64_t n)
{
    return P.read_slots ? (int64_t)P.read_slots[n] : n;
}

__device__ __forceinline__ int64_t write_slot(const gdn_cuda_params &P, int64_t n)
{
    return P.write_slots ? (int64_t)P.write_slots[n] : read_slot(P, n);
}

__device__ __forceinline__ void report(unsigned long long *best, int phase, int64_t index, int sub)
{
    const unsigned long long key =
        ((unsigned long long)phase << 56) | ((unsigned long long)index << 4) | (unsigned long long)sub;
    atomicMin(best, key);
}

/* All threads agree whether no error has been found so far. */
__device__ __forceinline__ bool still_ok(const unsigned long long *best)
{
    __syncthreads();
    const bool ok = *(volatile const unsigned long long *)best == NO_ERROR;
    __syncthreads();
    return ok;
}

/* Token i of the batch: sequence n, token j of it, and its slot-table index. */
__device__ __forceinline__ void token_of(const gdn_cuda_params &P, int64_t i, int64_t *n, int64_t *j, int64_t *idx)
{
    if (P.cu) {
        int64_t lo = 0, hi = P.N - 1; /* last n with cu[n] <= i */
        while (lo < hi) {
            const int64_t mid = (lo + hi + 1) / 2;
            if (cu_at(P, mid) <= i)
                lo = mid;
            else
                hi = mid - 1;
        }
        *n = lo;
        *j = i - cu_at(P, lo);
    } else {
        *n = i / P.T;
        *j = i % P.T;
    }
    *idx = P.cap_slots_stride > 0 ? *n * P.cap_slots_stride + *j : i;
}

__device__ __forceinline__ int64_t seq_len(const gdn_cuda_params &P, int64_t n)
{
    return P.cu ? cu_at(P, n + 1) - cu_at(P, n) : P.T;
}

/* The tokens sequence n runs: its length, or its batch.num_tokens count (checked by then). */
__device__ __forceinline__ int64_t run_len(const gdn_cuda_params &P, int64_t n)
{
    return P.num_tokens ? (int64_t)P.num_tokens[n] : seq_len(P, n);
}

__device__ void stamp_read(unsigned long long *st, int64_t n)
{
    unsigned long long old = atomicAdd(st, 0ull);
    for (;;) {
        const unsigned long long own = old & ST_OWNER;
        const unsigned long long want = own == 0 ? (ST_R | (unsigned long long)(n + 1))
                                        : own == (unsigned long long)(n + 1) ? (old | ST_R)
                                                                             : (old | ST_R | ST_OWNER);
        if (want == old)
            return;
        const unsigned long long prev = atomicCAS(st, old, want);
        if (prev == old)
            return;
        old = prev;
    }
}

/* 0: allowed (stamped); 1: already written; 2: read by another sequence. */
__device__ int stamp_write(unsigned long long *st, int64_t n)
{
    unsigned long long old = atomicCAS(st, 0ull, ST_W | (unsigned long long)(n + 1));
    if (old == 0)
        return 0;
    for (;;) {
        const unsigned long long own = old & ST_OWNER;
        if (old & ST_W)
            return 1;
        if (own != (unsigned long long)(n + 1))
            return 2;
        const unsigned long long prev = atomicCAS(st, old, old | ST_W);
        if (prev == old)
            return 0;
        old = prev;
    }
}

/* The stamps of a call with few sequences and no capture slots: a table in shared memory (open addressing,
   linear probing, keyed by slot; SM_SLOTS entries for at most SM_SEQS sequences' read and write slots, so at
   most half full), instead of the context's stamps in global memory: no L2 atomics, nothing to clear (H200,
   decode with slot arrays: docs/PERF.md, session 23). */
#define SM_SLOTS 2048
#define SM_SEQS 512
#define SM_EMPTY (~0ull)

/* The stamp of `slot` in the table, entered (empty stamp) if absent. */
__device__ __forceinline__ unsigned long long *sm_stamp(unsigned long long *keys, unsigned long long *st, int64_t slot)
{
    unsigned h = (unsigned)(((unsigned long long)slot * 0x9E3779B97F4A7C15ull) >> 53) & (SM_SLOTS - 1);
    for (;;) {
        const unsigned long long k = atomicCAS(&keys[h], SM_EMPTY, (unsigned long long)slot);
        if (k == SM_EMPTY || k == (unsigned long long)slot)
            return &st[h];
        h = (h + 1) & (SM_SLOTS - 1);
    }
}

__global__ void __launch_bounds__(CT) check_kernel(const __grid_constant__ gdn_cuda_params P)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* earlier work in the stream first (this kernel may be a programmatic dependent), then let the
       compute kernel launch: it reads states before it waits for this kernel */
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    __shared__ unsigned long long best;
    const int tid = threadIdx.x;
    const int64_t N = P.N;
    const int64_t NT = P.cu ? P.T : P.B * P.T; /* tokens in the batch */
    const bool cap_slots = P.cap_mode == GDN_CAPTURE_SLOTS;
    unsigned long long *pool_st = P.stamps;
    unsigned long long *cap_st = P.same_pool ? P.stamps : P.stamps + (P.pool ? P.num_slots : 0);
    /* few sequences, no capture slots: the stamps in shared memory (sm_stamp) */
    __shared__ unsigned long long sm_keys[SM_SLOTS], sm_st[SM_SLOTS];
    const bool sm = !cap_slots && N <= SM_SEQS;
    if (sm)
        for (int i = tid; i < SM_SLOTS; i += CT) {
            sm_keys[i] = SM_EMPTY;
            sm_st[i] = 0;
        }
    /* the stamp of pool slot s */
    auto pool_stamp = [&](int64_t s) { return sm ? sm_stamp(sm_keys, sm_st, s) : &pool_st[s]; };
    if (tid == 0)
        best = NO_ERROR;
    __syncthreads();

    /* 1. cu_seqlens */
    if (P.cu) {
        for (int64_t i = tid; i <= N; i += CT) {
            const int64_t v = cu_at(P, i);
            if (i == 0) {
                if (v != 0)
                    report(&best, PH_CU, 0, 0);
            } else {
                const int64_t a = cu_at(P, i - 1);
                if (v < a)
                    report(&best, PH_CU, i, 1);
                else if (v > P.T)
                    report(&best, PH_CU, i, 2);
            }
            if (i == N && v != P.T)
                report(&best, PH_CU, N, 3);
        }
    }
    bool ok = still_ok(&best);
    /* 1b. the counts of batch.num_tokens */
    if (ok && P.num_tokens)
        for (int64_t n = tid; n < N; n += CT) {
            const int64_t c = P.num_tokens[n];
            if (c < 0 || c > seq_len(P, n))
                report(&best, PH_COUNT, n, 0);
        }
    ok = ok && still_ok(&best);
    /* 2. the slot table's row length */
    if (ok && cap_slots && P.cap_slots_stride > 0)
        for (int64_t n = tid; n < N; n += CT)
            if (run_len(P, n) > P.cap_slots_stride)
                report(&best, PH_STRIDE, n, 0);
    ok = ok && still_ok(&best);
    /* 3, 4. ranges */
    if (ok) {
        if (P.pool)
            for (int64_t n = tid; n < N; n += CT) {
                if (read_slot(P, n) >= P.num_slots)
                    report(&best, PH_RANGE, n, 0);
                if (write_slot(P, n) >= P.num_slots)
                    report(&best, PH_RANGE, n, 1);
            }
        if (cap_slots)
            for (int64_t i = tid; i < NT; i += CT) {
                int64_t n, j, idx;
                token_of(P, i, &n, &j, &idx);
                if (j < run_len(P, n) && (int64_t)P.cap_slots[idx] >= P.cap_num_slots)
                    report(&best, PH_CAP_RANGE, idx, 0);
            }
    }
    ok = ok && still_ok(&best);
    /* 5. conflicts (a single sequence that captures nothing cannot conflict) */
    const bool stamps = ok && (N > 1 || cap_slots);
    if (stamps) {
        if (P.pool)
            for (int64_t n = tid; n < N; n += CT) {
                const int64_t r = read_slot(P, n);
                if (r >= 0)
                    stamp_read(pool_stamp(r), n);
            }
        __syncthreads();
        if (P.pool)
            for (int64_t n = tid; n < N; n += CT) {
                const int64_t w = write_slot(P, n);
                int c;
                if (w >= 0 && (c = stamp_write(pool_stamp(w), n)) != 0)
                    report(&best, PH_WRITE, n, c);
            }
        __syncthreads();
        if (cap_slots)
            for (int64_t i = tid; i < NT; i += CT) {
                int64_t n, j, idx;
                token_of(P, i, &n, &j, &idx);
                if (j >= run_len(P, n))
                    continue;
                const int64_t c = P.cap_slots[idx];
                if (c < 0)
                    continue;
                if (P.same_pool && j == run_len(P, n) - 1 && c == write_slot(P, n))
                    continue; /* the last state into its own write slot: the same values */
                const int k = stamp_write(&cap_st[c], n);
                if (k)
                    report(&best, PH_CAP, idx, k);
            }
        __syncthreads();
    }

    /* the details of the first error (before the stamps are cleared) */
    if (tid == 0 && best != NO_ERROR) {
        const int phase = (int)(best >> 56);
        const int64_t index = (int64_t)((best >> 4) & ((1ull << 52) - 1));
        const int sub = (int)(best & 15);
        gdn_cuda_error e;
        e.code = GDN_CUDA_ERR_NONE;
        e.sub = 0;
        e.index = index;
        e.value = 0;
        e.seq = -1;
        e.other = 0;
        switch (phase) {
        case PH_CU:
            e.code = sub == 0 ? GDN_CUDA_ERR_CU_FIRST : sub == 1 ? GDN_CUDA_ERR_CU_DECREASING
                     : sub == 2                    ? GDN_CUDA_ERR_CU_PAST
                                                   : GDN_CUDA_ERR_CU_LAST;
            e.value = cu_at(P, index);
            e.other = sub == 1 ? cu_at(P, index - 1) : P.T;
            break;
        case PH_COUNT:
            e.code = GDN_CUDA_ERR_NUM_TOKENS;
            e.value = P.num_tokens[index];
            e.seq = index;
            e.other = seq_len(P, index);
            break;
        case PH_STRIDE:
            e.code = GDN_CUDA_ERR_STRIDE;
            e.value = P.cap_slots_stride;
            e.seq = index;
            e.other = run_len(P, index);
            break;
        case PH_RANGE:
            e.code = sub == 0 ? GDN_CUDA_ERR_READ_RANGE : GDN_CUDA_ERR_WRITE_RANGE;
            e.value = sub == 0 ? read_slot(P, index) : write_slot(P, index);
            e.seq = index;
            e.other = P.num_slots;
            break;
        case PH_CAP_RANGE:
            e.code = GDN_CUDA_ERR_CAP_RANGE;
            e.value = P.cap_slots[index];
            e.other = P.cap_num_slots;
            break;
        case PH_WRITE: {
            e.code = GDN_CUDA_ERR_WRITE_CONFLICT;
            e.sub = sub;
            e.seq = index;
            e.value = write_slot(P, index);
            const unsigned long long own = *pool_stamp(e.value) & ST_OWNER;
            e.other = own == ST_OWNER ? -1 : (int64_t)own - 1;
            break;
        }
        default: {
            e.code = GDN_CUDA_ERR_CAP_CONFLICT;
            e.sub = sub;
            e.value = P.cap_slots[index];
            /* the sequence of table entry `index` */
            if (P.cap_slots_stride > 0) {
                e.seq = index / P.cap_slots_stride;
            } else {
                int64_t n, j, idx;
                token_of(P, index, &n, &j, &idx);
                e.seq = n;
            }
            const unsigned long long own = cap_st[e.value] & ST_OWNER;
            e.other = own == ST_OWNER ? -1 : (int64_t)own - 1;
            break;
        }
        }
        P.words->call_error = 1;
        if (P.words->first.code == GDN_CUDA_ERR_NONE)
            P.words->first = e;
    } else if (tid == 0) {
        P.words->call_error = 0;
    }
    __syncthreads();

    /* clear the stamps this call set (in global memory) */
    if (stamps && !sm) {
        if (P.pool)
            for (int64_t n = tid; n < N; n += CT) {
                const int64_t r = read_slot(P, n), w = write_slot(P, n);
                if (r >= 0)
                    pool_st[r] = 0;
                if (w >= 0)
                    pool_st[w] = 0;
            }
        if (cap_slots)
            for (int64_t i = tid; i < NT; i += CT) {
                int64_t n, j, idx;
                token_of(P, i, &n, &j, &idx);
                const int64_t c = j < run_len(P, n) ? (int64_t)P.cap_slots[idx] : -1;
                if (c >= 0)
                    cap_st[c] = 0;
            }
    }
}

cudaError_t gdn_cuda_launch_check(const gdn_cuda_params *p, cudaStream_t stream, int pdl)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(1, 1, 1);
    cfg.blockDim = dim3(CT, 1, 1);
    cfg.stream = stream;
    if (pdl) {
        attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&cfg, check_kernel, *p);
}
