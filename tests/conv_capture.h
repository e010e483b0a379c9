/*
 * conv_capture.h — the slot capture of a conv1d test call, shared by test_conv1d and test_cuda: the capture
 * slot table (by position, or per sequence with a stride; every token's slot distinct, every third one
 * skipped with -1, and with CONV_CAP_IN_POOL_LAST each sequence's last token captured into its own write slot)
 * and the capture tensor (the state pool itself, or a separate [slots, C, K] buffer, optionally stored
 * [slot][K][C]). Header-only; test code.
 */
#ifndef GDN_TESTS_CONV_CAPTURE_H
#define GDN_TESTS_CONV_CAPTURE_H

#include <stdint.h>
#include <stdlib.h>

#include "gdn/gdn.h"

/* The capture modes of the conv tests (their own enums use the same values). */
enum { CONV_CAP_NONE, CONV_CAP_DENSE, CONV_CAP_SLOTS, CONV_CAP_SLOTS_STRIDE, CONV_CAP_IN_POOL, CONV_CAP_IN_POOL_LAST };

/* The call's shape as the capture sees it: N sequences (packed: cu[] offsets and lens[]; dense: B = N rows of
   T tokens), Tv tokens per batch row, `stride` table entries per sequence (CONV_CAP_SLOTS_STRIDE), cap_slots
   slots in a separate capture buffer. */
typedef struct conv_cap_shape {
    int64_t N, T, Tv, stride, cap_slots;
    int packed;
    const int64_t *cu, *lens;
    int C, K;
    int kc; /* the states stored [slot][K][C] */
} conv_cap_shape;

/* Slot capture (mode SLOTS, SLOTS_STRIDE, IN_POOL or IN_POOL_LAST) into te->capture: the table (returned,
   malloc'd, *tab_n entries; entries no token uses are -7) and the states tensor (the pool with IN_POOL*, else
   `cap`). wsl: the write slots the call uses (NULL: slot n). */
static inline int32_t *conv_capture_slots(gdn_conv_tensors *te, int mode, const conv_cap_shape *s, const int32_t *wsl,
                                          float *cap, size_t *tab_n)
{
    const int64_t N = s->N;
    *tab_n = (size_t)(mode == CONV_CAP_SLOTS_STRIDE ? N * s->stride : (s->packed ? 1 : N) * s->Tv) + 1;
    int32_t *tab = (int32_t *)malloc(sizeof(int32_t) * *tab_n);
    if (!tab)
        return NULL;
    for (size_t i = 0; i < *tab_n; i++)
        tab[i] = -7; /* never used: by position, every entry of a token is set below */
    for (int64_t n = 0; n < N; n++) {
        const int64_t b = s->packed ? 0 : n, t0 = s->packed ? s->cu[n] : 0, len = s->packed ? s->lens[n] : s->T;
        for (int64_t j = 0; j < len; j++) {
            const int64_t pos = b * s->Tv + t0 + j, idx = mode == CONV_CAP_SLOTS_STRIDE ? n * s->stride + j : pos;
            int32_t v = mode == CONV_CAP_SLOTS          ? (int32_t)(pos + 1)
                        : mode == CONV_CAP_SLOTS_STRIDE ? (int32_t)(s->cap_slots - 1 - idx) /* reversed */
                                                        : (int32_t)(2 * N + pos);
            if ((pos + j) % 3 == 2)
                v = -1; /* skipped */
            if (mode == CONV_CAP_IN_POOL_LAST && j == len - 1) {
                const int32_t ws = wsl ? wsl[n] : (int32_t)n;
                if (ws >= 0)
                    v = ws;
            }
            tab[idx] = v;
        }
    }
    te->capture.mode = GDN_CAPTURE_SLOTS;
    te->capture.slots = tab;
    te->capture.slots_stride = mode == CONV_CAP_SLOTS_STRIDE ? s->stride : 0;
    if (mode == CONV_CAP_IN_POOL || mode == CONV_CAP_IN_POOL_LAST) {
        te->capture.states = te->state.pool;
    } else {
        const int64_t sc[3] = {s->cap_slots, s->C, s->K};
        te->capture.states = gdn_tensor_contiguous(cap, 3, sc);
        if (s->kc) {
            te->capture.states.strides[0] = (int64_t)s->C * s->K;
            te->capture.states.strides[1] = 1;
            te->capture.states.strides[2] = s->C;
        }
    }
    return tab;
}

#endif
