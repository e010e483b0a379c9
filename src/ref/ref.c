/*
 * ref.c — THE reference: the Gated DeltaNet recurrence as a float64 token loop, no tricks.
 *
 * For each sequence n, value head h (key head hk by the head map), token t:
 *     q, k   <- inputs (L2-normalised x / sqrt(sum x^2 + 1e-6) when asked), in double
 *     decay  <- exp(g) | g | exp(-g) | exp(-exp(A_log[h]) softplus(a + dt_bias[h]))   (raw: beta = sigmoid(b))
 *     S      <- decay S
 *     delta  <- beta (v - S k)
 *     S      <- S + delta k^T
 *     y      <- scale S q
 * S is [Dv][Dk] in double, read from the pool through its layout and strides (zeros when there is
 * no pool or the read slot is negative). Arguments are validated by the library's own code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/plan.h"
#include "ref/ref.h"

static double load(const gdn_view *v, gdn_dtype t, int64_t i)
{
    return (double)gdn_load_f32(v->data, t, i);
}

static double softplus(double x)
{
    return x > 20.0 ? x : log1p(exp(x));
}

static void l2norm(double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i];
    const double inv = 1.0 / sqrt(s + 1e-6);
    for (int i = 0; i < n; i++)
        x[i] *= inv;
}

gdn_status gdn_ref_forward(const gdn_problem *problem, const gdn_batch *batch, const gdn_tensors *tensors,
                           gdn_ref_result *res, char *err, size_t err_len)
{
    gdn_plan p;
    gdn_slot_checker slots = {NULL, 0, 0};
    gdn_status st = gdn_plan_make(&p, problem, batch, tensors, &slots, err, err_len);
    gdn_slot_checker_free(&slots);
    if (st != GDN_STATUS_SUCCESS)
        return st;

    const int Dk = p.Dk, Dv = p.Dv;
    double *S = (double *)malloc(sizeof(double) * (size_t)Dk * (size_t)Dv);
    double *q = (double *)malloc(sizeof(double) * (size_t)Dk);
    double *k = (double *)malloc(sizeof(double) * (size_t)Dk);
    if (!S || !q || !k) {
        free(S);
        free(q);
        free(k);
        snprintf(err, err_len, "reference: out of memory");
        return GDN_STATUS_OUT_OF_MEMORY;
    }

    for (int64_t n = 0; n < p.N; n++) {
        int64_t b, t0, t1;
        gdn_plan_seq(&p, n, &b, &t0, &t1);
        const int64_t rs = gdn_plan_read_slot(&p, n);
        for (int h = 0; h < p.Hv; h++) {
            const int hk = gdn_plan_key_head(&p, h);
            /* initial state */
            for (int v = 0; v < Dv; v++)
                for (int c = 0; c < Dk; c++) {
                    double x = 0.0;
                    if (rs >= 0) {
                        const float *head = (const float *)p.pool.data + rs * p.pool.st[0] + h * p.pool.st[1];
                        x = head[gdn_state_offset(p.layout, &p.pool.st[2], v, c)];
                    }
                    S[(size_t)v * Dk + c] = x;
                }
            for (int64_t t = t0; t < t1; t++) {
                for (int c = 0; c < Dk; c++) {
                    q[c] = load(&p.q, p.dtype, b * p.q.st[0] + t * p.q.st[1] + hk * p.q.st[2] + c * p.q.st[3]);
                    k[c] = load(&p.k, p.dtype, b * p.k.st[0] + t * p.k.st[1] + hk * p.k.st[2] + c * p.k.st[3]);
                }
                if (p.l2norm) {
                    l2norm(q, Dk);
                    l2norm(k, Dk);
                }
                const double g = load(&p.g, p.gate_dtype, b * p.g.st[0] + t * p.g.st[1] + h * p.g.st[2]);
                double beta = load(&p.beta, p.gate_dtype, b * p.beta.st[0] + t * p.beta.st[1] + h * p.beta.st[2]);
                double decay = 0.0;
                switch (p.gate) {
                case GDN_GATE_LOG: decay = exp(g); break;
                case GDN_GATE_LINEAR: decay = g; break;
                case GDN_GATE_NEGLOG: decay = exp(-g); break;
                case GDN_GATE_RAW:
                    decay = exp(-exp((double)p.A_log[h]) * softplus(g + (double)p.dt_bias[h]));
                    beta = 1.0 / (1.0 + exp(-beta));
                    break;
                }
                const int64_t tok = b * p.T + t; /* position in the batch */
                for (int v = 0; v < Dv; v++) {
                    double *row = S + (size_t)v * Dk;
                    double sk = 0.0;
                    for (int c = 0; c < Dk; c++) {
                        row[c] *= decay;
                        sk += row[c] * k[c];
                    }
                    const double vv =
                        load(&p.v, p.dtype, b * p.v.st[0] + t * p.v.st[1] + h * p.v.st[2] + v * p.v.st[3]);
                    const double delta = beta * (vv - sk);
                    double y = 0.0;
                    for (int c = 0; c < Dk; c++) {
                        row[c] += delta * k[c];
                        y += row[c] * q[c];
                    }
                    if (res->out)
                        res->out[((size_t)tok * p.Hv + h) * Dv + v] = (double)p.scale * y;
                }
                if (res->captures)
                    memcpy(res->captures + ((size_t)tok * p.Hv + h) * Dv * Dk, S, sizeof(double) * Dk * Dv);
            }
            if (res->final_state)
                memcpy(res->final_state + ((size_t)n * p.Hv + h) * Dv * Dk, S, sizeof(double) * Dk * Dv);
        }
    }
    free(S);
    free(q);
    free(k);
    return GDN_STATUS_SUCCESS;
}
