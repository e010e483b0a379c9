/*
 * check.h — the conformance engine: builds one test case (fresh random inputs with realistic
 * ranges or decay extremes, views, pools, capture), runs gdn_forward and the float64 reference on
 * the same rounded inputs, and compares. Shared by the CTest suites, `gdn check` and `gdn bench`.
 * Internal to the project.
 *
 * Every run poisons outputs (NaN) first and puts guard sentinels after every output buffer; a
 * case passes only when the status is SUCCESS, every compared value is finite, the guards are
 * intact, untouched slots are untouched, and the relative RMS errors of output, final state and
 * captures are within the tolerance (1e-5 for f32 compute with f32 outputs; bf16/f16 outputs add
 * their rounding: 1e-2 for bf16, 2e-3 for f16, on the output only: states are f32, always 1e-5).
 */
#ifndef GDN_CHECK_H
#define GDN_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gdn/gdn.h"

#define GDN_CHECK_MAX_SEQS 16

typedef enum gdn_check_decay {
    GDN_CHECK_DECAY_MODEL = 0, /* g from the model's gate formula with Qwen-like A_log, dt_bias */
    GDN_CHECK_DECAY_SLOW = 1,  /* |g| in [1e-5, 1e-3] per token */
    GDN_CHECK_DECAY_FAST = 2,  /* |g| up to 30 per token */
    GDN_CHECK_DECAY_EDGE = 3   /* per token one of: decay exactly 1 (g = 0), decay 0 (g = -1e4: exp
                                  underflows; exactly 0 in the linear convention), |g| <= 1e-7, |g| up
                                  to 30 */
} gdn_check_decay;

typedef enum gdn_check_pool {
    GDN_CHECK_POOL_NONE = 0,     /* no state pool: start from zeros, no final state */
    GDN_CHECK_POOL_INPLACE = 1,  /* pool with a random nonzero initial state, read slot == write slot */
    GDN_CHECK_POOL_MOVE = 2      /* read and write slots differ (permuted), plus one sequence with
                                    a negative read slot (zeros) where N > 1 */
} gdn_check_pool;

typedef struct gdn_check_case {
    gdn_problem problem;
    int64_t B, T;                              /* dense batch (ignored when n_seqs > 0) */
    int n_seqs;                                /* > 0: packed with these lengths (may be 0) */
    int64_t seq_lens[GDN_CHECK_MAX_SEQS];
    gdn_check_decay decay;
    gdn_check_pool pool;
    gdn_capture_mode capture;
    int strided;                               /* nonzero: padded, non-contiguous views everywhere */
    int no_output;                             /* nonzero: out.data = NULL (replay) */
    gdn_isa isa;                               /* forced ISA (AUTO = best) */
    int threads;                               /* 0 = all */
    uint64_t seed;
    /* Extensions (zero = the default behaviour; added at the end so that {0}-initialised cases
     * and designated initialisers stay valid). */
    int capture_in_pool;     /* SLOTS with a pool: capture into the state pool itself (vLLM style;
                                one sequence then also captures into its own read slot) */
    int capture_by_position; /* SLOTS: slots_stride = 0, the slot table indexed by token position */
    int default_slots;       /* INPLACE: read_slots = write_slots = NULL (slot n) */
    int cu_i64;              /* packed: int64 cu_seqlens (else int32) */
    int capture_last_in_write_slot; /* with capture_in_pool: the state after each sequence's last
                                       token is captured into its own write slot (vLLM style; the
                                       final state goes there too) */
    gdn_backend backend;     /* CUDA: every buffer (guard regions, padding and all) and every index
                                array is copied to the device, the call runs there (device 0), is
                                synchronised, and the buffers are copied back before the same
                                comparison; isa and threads are ignored */
} gdn_check_case;

/* Make c a packed batch of n (<= GDN_CHECK_MAX_SEQS) sequences with these lengths. */
static inline void gdn_check_set_packed(gdn_check_case *c, int n, const int64_t *lens)
{
    c->n_seqs = n;
    for (int i = 0; i < n; i++)
        c->seq_lens[i] = lens[i];
}

/* `strided` values: 0 contiguous (all strides 0), 1 padded rows and tokens, 2 padded and the
 * token/head (slot/head) dimensions swapped in memory (head-major), 3 padded with an innermost
 * stride of 2 (interleaved). */
#define GDN_CHECK_STRIDED_MAX 3

typedef struct gdn_check_result {
    gdn_status status;        /* of gdn_forward */
    char message[256];        /* why it failed, empty when it passed */
    double out_err;           /* relative RMS vs the reference (0 when not applicable) */
    double state_err;
    double capture_err;
    double tolerance;
    int pass;
} gdn_check_result;

/* Run one case; returns result->pass. */
int gdn_check_run(const gdn_check_case *c, gdn_check_result *result);

/* One-line description of a case ("isa=avx512 dtype=bf16 heads=tiled gate=log ... T=17"). */
void gdn_check_describe(const gdn_check_case *c, char *buf, size_t len);

/* The conformance suite of `gdn check` (quick != 0: a smaller matrix for CI). Fills up to max cases
 * and returns how many the suite has (call with max = 0 to count). Only ISAs this CPU supports. */
size_t gdn_check_suite(gdn_check_case *cases, size_t max, int quick);

/* Relative RMS ||a - ref|| / ||ref|| over n values; +inf if any a is not finite (NaN never passes);
 * when ||ref|| == 0 returns ||a|| (absolute). */
double gdn_check_rel_rms(const float *a, const double *ref, size_t n);

/* --- lower level, for tests that run one built case several times (threads, ISAs) ----------- */

/* A built case: inputs generated, views, pools, slot tables and the poisoned outputs. */
typedef struct gdn_check_instance gdn_check_instance;

/* Build the inputs of a case (no library call). NULL on failure (message in err). */
gdn_check_instance *gdn_check_instance_create(const gdn_check_case *c, char *err, size_t err_len);

void gdn_check_instance_destroy(gdn_check_instance *in);

/* Restore the pristine buffers (NaN-poisoned out and capture, the initial pool, guards), then run
 * gdn_forward on ctx. */
gdn_status gdn_check_instance_forward(gdn_check_instance *in, gdn_context *ctx);

/* The problem, batch and tensors of the case (valid until destroy), e.g. for the reference. */
void gdn_check_instance_args(const gdn_check_instance *in, const gdn_problem **problem, const gdn_batch **batch,
                             const gdn_tensors **tensors);

/* The raw bytes of the buffers a run writes (0: out, 1: state pool, 2: capture states), whole
 * allocations including padding, for bitwise comparison of two runs. A missing one is NULL, 0. */
void gdn_check_instance_buffer(const gdn_check_instance *in, int which, const void **data, size_t *bytes);

/* Read a run's results back through the views as dense f32: which 0: out [positions][Hv][Dv];
 * 1: the state pool [slots][Hv][Dv][Dk]; 2: the capture states ([positions] when dense, [slots]
 * when slotted; the state pool when captured into it), states in vk order whatever the layout.
 * Returns the element count (dest NULL: just count; 0 when the case has no such buffer). */
size_t gdn_check_instance_read(const gdn_check_instance *in, int which, float *dest);

#endif
