/*
 * conv_ref.c — the reference of the causal convolution: a float64 token loop, no tricks.
 *
 * For each sequence n, channel c, token t (window w[0..W-2] = the last W-1 inputs, oldest first,
 * starting from the read slot of the conv state pool, zeros when there is no pool or the slot is
 * negative):
 *     z = bias[c] + sum_{j<W-1} weight[c][j] * w[j] + weight[c][W-1] * x[t][c]
 *     y = silu(z) = z / (1 + exp(-z))   (or z)
 *     w <- (w[1..W-2], x[t][c])
 * Arguments are validated by the library's own code (gdn_conv_plan_make).
 */
#include <math.h>
#include <string.h>

#include "core/conv_plan.h"
#include "core/dtype.h"
#include "ref/ref.h"

gdn_status gdn_ref_conv1d(const gdn_conv_problem *problem, const gdn_batch *batch, const gdn_conv_tensors *tensors,
                          gdn_conv_ref_result *res, char *err, size_t err_len)
{
    gdn_conv_plan p;
    gdn_slot_checker slots = {NULL, 0, 0};
    gdn_status st = gdn_conv_plan_make(&p, problem, batch, tensors, &slots, err, err_len);
    gdn_slot_checker_free(&slots);
    if (st != GDN_STATUS_SUCCESS)
        return st;
    const int C = p.C, W = p.W, K = p.K;
    double win[GDN_CONV_MAX_WIDTH];
    for (int64_t n = 0; n < p.seq.N; n++) {
        int64_t b, t0, t1;
        gdn_plan_seq(&p.seq, n, &b, &t0, &t1);
        const int64_t rs = gdn_plan_read_slot(&p.seq, n);
        for (int c = 0; c < C; c++) {
            for (int j = 0; j < K; j++)
                win[j] = rs >= 0 ? (double)((const float *)p.pool.data)[rs * p.pool.st[0] + c * p.pool.st[1] +
                                                                        j * p.pool.st[2]]
                                 : 0.0;
            for (int64_t t = t0; t < t1; t++) {
                const int64_t tok = b * p.seq.T + t;
                const double xt = (double)gdn_load_f32(p.x.data, p.dtype, b * p.x.st[0] + t * p.x.st[1] + c * p.x.st[2]);
                double z = p.bias ? (double)p.bias[c] : 0.0;
                for (int j = 0; j < K; j++)
                    z += (double)((const float *)p.weight.data)[c * p.weight.st[0] + j * p.weight.st[1]] * win[j];
                z += (double)((const float *)p.weight.data)[c * p.weight.st[0] + K * p.weight.st[1]] * xt;
                if (res->y)
                    res->y[(size_t)tok * C + c] = p.act == GDN_CONV_SILU ? z / (1.0 + exp(-z)) : z;
                for (int j = 0; j + 1 < K; j++)
                    win[j] = win[j + 1];
                win[K - 1] = xt;
                if (res->captures)
                    memcpy(res->captures + ((size_t)tok * C + c) * K, win, sizeof(double) * (size_t)K);
            }
            if (res->final_state)
                memcpy(res->final_state + ((size_t)n * C + c) * K, win, sizeof(double) * (size_t)K);
        }
    }
    (void)W;
    return GDN_STATUS_SUCCESS;
}
