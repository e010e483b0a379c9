/*
 * recurrent_f32__scalar.c — token-loop GDN recurrence on f32 state rows, portable C.
 *
 * Math, shapes and assumptions: see recurrent.h (one pass over each row per token: sk = s.k and
 * sq = s.q from the old row, delta = beta (v - decay sk), y = decay sq + delta (k.q),
 * s = decay s + delta k). Any dk >= 1. Each row keeps its state in the output rows across the
 * token block, so a row is read from s_in once and written to s_out once per token.
 */
#include "cpu/recurrent.h"

void gdn_recurrent_f32__scalar(const gdn_recurrent_args *a)
{
    const int dk = a->dk;
    for (int r = 0; r < a->rows; r++) {
        const float *src = a->s_in + (int64_t)r * a->s_stride;
        float *s = a->s_out + (int64_t)r * a->s_stride;
        for (int t = 0; t < a->n_tokens; t++) {
            const float *q = a->q + (int64_t)t * dk;
            const float *k = a->k + (int64_t)t * dk;
            float sk = 0.0f, sq = 0.0f;
            for (int i = 0; i < dk; i++) {
                sk += src[i] * k[i];
                sq += src[i] * q[i];
            }
            const float decay = a->decay[t];
            const float delta = a->beta[t] * (a->v[(int64_t)t * a->rows + r] - decay * sk);
            if (a->y)
                a->y[(int64_t)t * a->rows + r] = decay * sq + delta * a->kq[t];
            for (int i = 0; i < dk; i++)
                s[i] = decay * src[i] + delta * k[i];
            if (a->capture && a->capture[t]) {
                float *c = a->capture[t] + (int64_t)r * a->cap_stride;
                for (int i = 0; i < dk; i++)
                    c[i] = s[i];
            }
            src = s;
        }
    }
}
