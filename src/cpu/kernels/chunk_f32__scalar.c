/*
 * chunk_f32__scalar.c — one chunk of the chunkwise (WY/UT, W-free) GDN algorithm, portable C.
 *
 * Math, shapes and memory contract: chunked.h. Per chunk of n tokens (c = n rounded up to 16):
 *   key part: kq = [k_r / sqrt(|k_r|^2 + 1e-6); scale q_r / sqrt(|q_r|^2 + 1e-6)] (l2norm; else
 *     [k_r; scale q_r]); Kt = K^T [dk][c] (zero columns past n);
 *     KK[i][j] = k_i . k_j (j < i), QK[i][j] = q_i . k_j (j <= i)   (entries j > i not formed)
 *   value part, state tile S^T [dk][dv]:
 *     Gamma[i][j] = Gamma[i-1][j] d_i (j < i), 1 (j = i)       running products of the decays
 *     -A[i][j] = (-b_i Gamma_ij) KK_ij (j < i),   P[i][j] = Gamma_ij QK_ij (j <= i)
 *     gam_r = d_0 ... d_r,   wc_r = Gamma[n-1][r]
 *     X = K S^T, Y = Q S^T;   B_r = b_r (v_r - gam_r X_r)
 *     Delta_r = B_r + sum_{j<r} (-A)[r][j] Delta_j           (forward substitution, in dl)
 *     y_r = gam_r Y_r + sum_{j<=r} P[r][j] Delta_j
 *     S^T[k] <- gam_{n-1} S^T[k] + sum_r (k_r[k] wc_r) Delta_r
 * Entries above the diagonal are never formed or read (loops stop at the diagonal), so nothing is
 * masked by multiplication. Any n, dk, dv, ld within chunked.h's limits; no alignment. Every column
 * j of the tile sees the same operations in the same order whatever dv is (determinism across
 * tilings).
 */
#include <math.h>
#include <stdint.h>

#include "cpu/chunked.h"

void gdn_chunk_transpose_f32__scalar(const float *src, int64_t ls, int rows, int cols, float *dst, int64_t ld)
{
    for (int r0 = 0; r0 < rows; r0 += 16)
        for (int c0 = 0; c0 < cols; c0 += 16)
            for (int c = c0; c < c0 + 16 && c < cols; c++)
                for (int r = r0; r < r0 + 16 && r < rows; r++)
                    dst[c * ld + r] = src[r * ls + c];
}

static float inv_norm(const float *x, int dk)
{
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < dk; i++)
        acc[i & 7] += x[i] * x[i];
    return 1.0f / sqrtf(((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + 1e-6f);
}

void gdn_chunk_keys_f32__scalar(const gdn_chunk_keys_args *a)
{
    const int n = a->n, dk = a->dk, c = (n + 15) / 16 * 16;
    float *K = a->kq, *Q = a->kq + (int64_t)n * dk;
    for (int r = 0; r < n; r++) {
        const float *kr = a->k + r * a->ks;
        const float s = a->l2norm ? inv_norm(kr, dk) : 1.0f;
        for (int i = 0; i < dk; i++)
            K[(int64_t)r * dk + i] = s * kr[i];
        if (a->q) {
            const float *qr = a->q + r * a->qs;
            const float sq = a->l2norm ? a->scale * inv_norm(qr, dk) : a->scale;
            for (int i = 0; i < dk; i++)
                Q[(int64_t)r * dk + i] = sq * qr[i];
        }
    }
    for (int p = 0; p < dk; p++)
        for (int r = 0; r < c; r++)
            a->kt[p * c + r] = r < n ? K[(int64_t)r * dk + p] : 0.0f;
    for (int i = 0; i < n; i++) {
        const float *ki = K + (int64_t)i * dk, *qi = Q + (int64_t)i * dk;
        for (int j = 0; j <= i; j++) {
            const float *kj = K + (int64_t)j * dk;
            if (j < i) {
                float s = 0.0f;
                for (int p = 0; p < dk; p++)
                    s += ki[p] * kj[p];
                a->kk[i * c + j] = s;
            }
            if (a->q) {
                float s = 0.0f;
                for (int p = 0; p < dk; p++)
                    s += qi[p] * kj[p];
                a->qk[i * c + j] = s;
            }
        }
    }
}

void gdn_chunk_f32__scalar(const gdn_chunk_args *a)
{
    const int n = a->n, dk = a->dk, dv = a->dv, c = (n + 15) / 16 * 16;
    const int64_t ld = a->ld;
    float *na = a->work;                            /* [n][n]  -A */
    float *pm = na + GDN_CHUNK_MAX * GDN_CHUNK_MAX; /* [n][n]  P */
    float *gm = pm + GDN_CHUNK_MAX * GDN_CHUNK_MAX; /* [n][n]  Gamma (in the ktw region) */
    float *x = na + 2 * GDN_CHUNK_MAX * GDN_CHUNK_MAX + GDN_MAX_HEAD_DIM * GDN_CHUNK_MAX; /* [2n][dv] */
    float *gam = x + 2 * GDN_CHUNK_MAX * GDN_CHUNK_LD_MAX;
    float *wc = gam + GDN_CHUNK_MAX;
    const float *K = a->kq;
    const int out = a->qk != NULL;

    /* Gamma, gam, wc */
    float g = 1.0f;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++)
            gm[i * n + j] = gm[(i - 1) * n + j] * a->decay[i];
        gm[i * n + i] = 1.0f;
        g *= a->decay[i];
        gam[i] = g;
    }
    for (int r = 0; r < n; r++)
        wc[r] = gm[(n - 1) * n + r];
    /* -A and P */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++)
            na[i * n + j] = (-a->beta[i] * gm[i * n + j]) * a->kk[i * c + j];
        if (out)
            for (int j = 0; j <= i; j++)
                pm[i * n + j] = gm[i * n + j] * a->qk[i * c + j];
    }
    /* X = K S^T, Y = Q S^T */
    const int rows = out ? 2 * n : n;
    for (int r = 0; r < rows; r++) {
        float *xr = x + (int64_t)r * dv;
        const float *kr = a->kq + (int64_t)r * dk;
        for (int j = 0; j < dv; j++)
            xr[j] = 0.0f;
        for (int p = 0; p < dk; p++) {
            const float kp = kr[p];
            const float *sp = a->st + p * ld;
            for (int j = 0; j < dv; j++)
                xr[j] += kp * sp[j];
        }
    }
    /* B, then Delta by forward substitution (in dl) */
    for (int r = 0; r < n; r++) {
        float *dr = a->dl + r * ld;
        const float *vr = a->v + r * a->ldv, *xr = x + (int64_t)r * dv;
        for (int j = 0; j < dv; j++)
            dr[j] = a->beta[r] * (vr[j] - gam[r] * xr[j]);
        for (int i = 0; i < r; i++) {
            const float cf = na[r * n + i];
            const float *di = a->dl + i * ld;
            for (int j = 0; j < dv; j++)
                dr[j] += cf * di[j];
        }
    }
    /* y = diag(gam) Y + P Delta */
    if (out) {
        for (int r = 0; r < n; r++) {
            float *yr = a->y + r * a->ldy;
            const float *xr = x + (int64_t)(n + r) * dv;
            for (int j = 0; j < dv; j++)
                yr[j] = gam[r] * xr[j];
            for (int i = 0; i <= r; i++) {
                const float cf = pm[r * n + i];
                const float *di = a->dl + i * ld;
                for (int j = 0; j < dv; j++)
                    yr[j] += cf * di[j];
            }
        }
    }
    /* S^T <- gam_{n-1} S^T + K^T diag(wc) Delta */
    const float gl = gam[n - 1];
    for (int p = 0; p < dk; p++) {
        float *sp = a->st + p * ld;
        for (int j = 0; j < dv; j++)
            sp[j] *= gl;
        for (int r = 0; r < n; r++) {
            const float cf = K[(int64_t)r * dk + p] * wc[r];
            const float *dr = a->dl + r * ld;
            for (int j = 0; j < dv; j++)
                sp[j] += cf * dr[j];
        }
    }
}
