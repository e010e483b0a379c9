/*
 * guard.h — "nothing written on error", shared by the error tests (test_errors, test_conv1d): a call's
 * output buffers are filled with recognisable bytes, snapshotted (guard_snapshot), and compared after the
 * call (guard_unchanged). Header-only; test code.
 */
#ifndef GDN_TESTS_GUARD_H
#define GDN_TESTS_GUARD_H

#include <stdlib.h>
#include <string.h>

typedef struct guard_buf {
    const void *p; /* a buffer the call may write */
    size_t n;      /* its bytes */
} guard_buf;

/* A heap copy of the buffers, back to back (NULL when out of memory: then nothing compares equal). */
static inline unsigned char *guard_snapshot(const guard_buf *b, int nb)
{
    size_t total = 0;
    for (int i = 0; i < nb; i++)
        total += b[i].n;
    unsigned char *c = (unsigned char *)malloc(total ? total : 1);
    if (!c)
        return NULL;
    for (size_t i = 0, off = 0; i < (size_t)nb; off += b[i].n, i++)
        memcpy(c + off, b[i].p, b[i].n);
    return c;
}

/* Whether every buffer still holds what the snapshot holds. */
static inline int guard_unchanged(const unsigned char *c, const guard_buf *b, int nb)
{
    if (!c)
        return 0;
    for (size_t i = 0, off = 0; i < (size_t)nb; off += b[i].n, i++)
        if (memcmp(c + off, b[i].p, b[i].n) != 0)
            return 0;
    return 1;
}

#endif
