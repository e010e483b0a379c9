/*
 * npy.h — reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0). The float16 /
 * bfloat16 conversions are the library's own (core/dtype.h).
 *
 * Only simple dtypes are understood: a descr string such as '<f4', '<f2', '<i4', '<i8', '|u1'.
 * Structured dtypes and Fortran order are rejected as malformed/unsupported. Byte order is
 * reported, never converted: callers decide which dtypes they accept.
 *
 * Error messages (err) say what is wrong without the file name, so that callers can prefix it:
 * "malformed header: 'shape' is not a tuple of integers".
 */
#ifndef GDN_TOOLS_NPY_H
#define GDN_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NPY_MAX_DIMS 32

/* Return codes of npy_load / npy_save. */
#define NPY_OK 0
#define NPY_ENOENT 1   /* the file does not exist */
#define NPY_EIO 2      /* open, read or write failed (message has strerror) */
#define NPY_EFORMAT 3  /* not a valid .npy file (bad magic, header, truncated data) */
#define NPY_ENOMEM 4   /* allocation failed */

typedef struct npy_array {
    char descr[32];     /* the dtype string as in the header, e.g. "<f4" */
    char kind;          /* 'f', 'i', 'u', 'b', 'c', ... */
    int itemsize;       /* bytes per element */
    int big_endian;     /* 1 when descr starts with '>' and itemsize > 1 */
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    int64_t count;      /* number of elements (product of shape) */
    void *data;         /* count * itemsize bytes (malloc'd; never NULL after a successful load) */
} npy_array;

/* Read a whole .npy file. On failure a is zeroed, err receives a message, and a code is returned. */
int npy_load(const char *path, npy_array *a, char *err, size_t err_len);

/* Free the data of a (accepts a zeroed array) and zero it. */
void npy_free(npy_array *a);

/* Write a C-order, version 1.0 .npy file with the given descr ('<f4', '<i8', ...) and shape.
 * data holds prod(shape) elements of the descr's itemsize (may be NULL when that is 0). */
int npy_save(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data,
             char *err, size_t err_len);

/* Same, to an open stream (callers that manage their own temporary files). Does not close it. */
int npy_write_stream(FILE *file, const char *descr, int ndim, const int64_t *shape, const void *data,
                     char *err, size_t err_len);

/* Parse a simple descr ('<f4'): kind, itemsize, big-endian flag. Returns 0 on success. */
int npy_parse_descr(const char *descr, char *kind, int *itemsize, int *big_endian);

/* "[2,16,32,128]" (or "[]" for a scalar). */
void npy_format_shape(char *buf, size_t len, int ndim, const int64_t *shape);

#endif
