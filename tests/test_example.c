/* One decode step of a Qwen3.6 GDN layer (Hk=16, Hv=32, D=128) for 2 sequences, state in place. */
#include <stdio.h>
#include <stdlib.h>
#include <gdn/gdn.h>

enum { B = 2, HK = 16, HV = 32, D = 128, SLOTS = 8 };

int main(void)
{
    gdn_context *ctx;
    if (gdn_context_create(NULL, &ctx) != GDN_STATUS_SUCCESS) { /* CPU, all cores, best ISA */
        fprintf(stderr, "gdn: %s\n", gdn_last_error(NULL));
        return 1;
    }
    /* Inputs of one token per sequence (normally from the model; here constants), f32. */
    float *q = calloc(B * HK * D, sizeof(float)), *k = calloc(B * HK * D, sizeof(float));
    float *v = calloc(B * HV * D, sizeof(float)), *out = calloc(B * HV * D, sizeof(float));
    float *g = calloc(B * HV, sizeof(float)), *beta = calloc(B * HV, sizeof(float));
    float *pool = calloc((size_t)SLOTS * HV * D * D, sizeof(float)); /* [slot][Hv][Dv][Dk] */
    for (int i = 0; i < B * HK * D; i++) q[i] = k[i] = 0.0883883f;  /* unit-norm rows: 1/sqrt(128) */
    for (int i = 0; i < B * HV * D; i++) v[i] = 1.0f;
    for (int i = 0; i < B * HV; i++) { g[i] = -0.1f; beta[i] = 0.5f; } /* log-decay, beta in (0,1) */

    gdn_problem p = {0};                       /* defaults: grouped heads, log gate, f32, [Dv][Dk] */
    p.num_k_heads = HK; p.num_v_heads = HV; p.k_dim = D; p.v_dim = D;
    gdn_batch batch = {0};
    batch.batch_size = B; batch.seq_len = 1;   /* decode: T = 1 */

    const int32_t slots[B] = {5, 2};           /* each sequence's state slot, updated in place */
    const int64_t qs[4] = {B, 1, HK, D}, vs[4] = {B, 1, HV, D}, gs[3] = {B, 1, HV};
    const int64_t ps[4] = {SLOTS, HV, D, D};
    gdn_tensors t = {0};
    t.q = gdn_tensor_contiguous(q, 4, qs);
    t.k = gdn_tensor_contiguous(k, 4, qs);
    t.v = gdn_tensor_contiguous(v, 4, vs);
    t.g = gdn_tensor_contiguous(g, 3, gs);
    t.beta = gdn_tensor_contiguous(beta, 3, gs);
    t.out = gdn_tensor_contiguous(out, 4, vs);
    t.state.pool = gdn_tensor_contiguous(pool, 4, ps);
    t.state.read_slots = slots;                /* write_slots NULL: write back to the read slot */

    gdn_status st = gdn_forward(ctx, &p, &batch, &t);
    const float expected = 0.5f / 11.3137085f; /* from a zero state: scale * beta * v * (k.q) */
    if (st != GDN_STATUS_SUCCESS)
        fprintf(stderr, "gdn_forward: %s: %s\n", gdn_status_string(st), gdn_last_error(ctx));
    else
        printf("out[0] = %.6f (expected %.6f)\n", out[0], expected);
    const int ok = st == GDN_STATUS_SUCCESS && out[0] > expected - 1e-5f && out[0] < expected + 1e-5f;

    free(q); free(k); free(v); free(out); free(g); free(beta); free(pool);
    gdn_context_destroy(ctx);
    return ok ? 0 : 1;
}
