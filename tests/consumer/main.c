/* Links an installed gdn and runs one decode step of a tiny layer: exit 0 on success. */
#include <stdio.h>
#include <gdn/gdn.h>

int main(void)
{
    float q[4] = {1, 0, 0, 0}, k[4] = {0, 1, 0, 0}, v[4] = {1, 2, 3, 4}, g[1] = {0}, beta[1] = {1};
    float out[4], state[16] = {0};
    const int64_t sq[4] = {1, 1, 1, 4}, sg[3] = {1, 1, 1}, ss[4] = {1, 1, 4, 4};
    gdn_problem p = {0};
    p.num_k_heads = p.num_v_heads = 1;
    p.k_dim = p.v_dim = 4;
    gdn_batch b = {0};
    b.batch_size = b.seq_len = 1;
    gdn_tensors t = {0};
    t.q = gdn_tensor_contiguous(q, 4, sq);
    t.k = gdn_tensor_contiguous(k, 4, sq);
    t.v = gdn_tensor_contiguous(v, 4, sq);
    t.g = gdn_tensor_contiguous(g, 3, sg);
    t.beta = gdn_tensor_contiguous(beta, 3, sg);
    t.out = gdn_tensor_contiguous(out, 4, sq);
    t.state.pool = gdn_tensor_contiguous(state, 4, ss);
    gdn_context *ctx = NULL;
    if (gdn_context_create(NULL, &ctx) != GDN_STATUS_SUCCESS || gdn_forward(ctx, &p, &b, &t) != GDN_STATUS_SUCCESS) {
        fprintf(stderr, "consumer: %s\n", gdn_last_error(ctx));
        return 1;
    }
    gdn_context_destroy(ctx);
    /* S = v k^T, so S[1][1] = v[1] = 2 and y = S q / 2 = 0 (q is orthogonal to k) */
    if (state[1 * 4 + 1] != 2.0f || out[0] != 0.0f) {
        fprintf(stderr, "consumer: wrong result\n");
        return 1;
    }
    printf("consumer: gdn %s ok\n", gdn_version_string());
    return 0;
}
