/*
 * npy.c — NumPy .npy reading and writing. See npy.h.
 *
 * Format (numpy/lib/format.py): magic "\x93NUMPY", major and minor version bytes, header length
 * (uint16 little-endian in 1.0, uint32 in 2.0 and 3.0), then a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and ending in
 * '\n', then the raw data. Like numpy, trailing bytes after the data are ignored.
 */
#define _POSIX_C_SOURCE 200809L
#include "npy.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAX_HEADER (1u << 20)

static void set_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (!err || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

/* ---- descr and shape ------------------------------------------------------------------------ */

int npy_parse_descr(const char *descr, char *kind, int *itemsize, int *big_endian)
{
    const char *p = descr;
    char order = '=';
    long n;
    char *end;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=') {
        order = *p;
        p++;
    }
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        return -1;
    *kind = *p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    n = strtol(p, &end, 10);
    if (errno || *end != '\0' || n < 1 || n > 64)
        return -1;
    *itemsize = (int)n;
    *big_endian = (order == '>' && n > 1);
    return 0;
}

void npy_format_shape(char *buf, size_t len, int ndim, const int64_t *shape)
{
    size_t used = 0;
    int i;
    if (len == 0)
        return;
    buf[0] = '\0';
    used += (size_t)snprintf(buf + used, len - used, "[");
    for (i = 0; i < ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

/* ---- header parsing ------------------------------------------------------------------------- */

typedef struct hparser {
    const char *p;
    const char *end;
} hparser;

static void skip_ws(hparser *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static int expect_char(hparser *h, char c)
{
    skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return 0;
    }
    return -1;
}

/* A quoted string ('...' or "...") into out (no escapes: descr and keys never have them). */
static int parse_string(hparser *h, char *out, size_t len)
{
    char q;
    size_t n = 0;
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return -1;
    q = *h->p++;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || n + 1 >= len)
            return -1;
        out[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return -1;
    h->p++;
    out[n] = '\0';
    return 0;
}

static int parse_bool(hparser *h, int *v)
{
    skip_ws(h);
    if (h->end - h->p >= 4 && memcmp(h->p, "True", 4) == 0) {
        h->p += 4;
        *v = 1;
        return 0;
    }
    if (h->end - h->p >= 5 && memcmp(h->p, "False", 5) == 0) {
        h->p += 5;
        *v = 0;
        return 0;
    }
    return -1;
}

static int parse_shape(hparser *h, int *ndim, int64_t *shape)
{
    int n = 0;
    if (expect_char(h, '(') != 0)
        return -1;
    for (;;) {
        int64_t v = 0;
        int digits = 0;
        skip_ws(h);
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            break;
        }
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            int d = *h->p - '0';
            if (v > (INT64_MAX - d) / 10)
                return -1;
            v = v * 10 + d;
            h->p++;
            digits++;
        }
        if (!digits)
            return -1;
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l'))
            h->p++; /* Python 2 long literal */
        if (n >= NPY_MAX_DIMS)
            return -1;
        shape[n++] = v;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            break;
        }
        return -1;
    }
    *ndim = n;
    return 0;
}

static int parse_header(const char *text, size_t len, npy_array *a, char *err, size_t err_len)
{
    hparser h;
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    h.p = text;
    h.end = text + len;
    if (len == 0 || text[len - 1] != '\n') {
        set_err(err, err_len, "malformed header: does not end with a newline");
        return -1;
    }
    if (expect_char(&h, '{') != 0) {
        set_err(err, err_len, "malformed header: not a Python dict literal");
        return -1;
    }
    for (;;) {
        char key[32];
        skip_ws(&h);
        if (h.p < h.end && *h.p == '}') {
            h.p++;
            break;
        }
        if (parse_string(&h, key, sizeof key) != 0 || expect_char(&h, ':') != 0) {
            set_err(err, err_len, "malformed header: expected a quoted key and ':'");
            return -1;
        }
        if (strcmp(key, "descr") == 0) {
            if (parse_string(&h, a->descr, sizeof a->descr) != 0) {
                set_err(err, err_len, "unsupported header: 'descr' is not a simple dtype string");
                return -1;
            }
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (parse_bool(&h, &fortran) != 0) {
                set_err(err, err_len, "malformed header: 'fortran_order' is not True or False");
                return -1;
            }
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (parse_shape(&h, &a->ndim, a->shape) != 0) {
                set_err(err, err_len, "malformed header: 'shape' is not a tuple of at most %d non-negative integers",
                        NPY_MAX_DIMS);
                return -1;
            }
            have_shape = 1;
        } else {
            set_err(err, err_len, "malformed header: unexpected key '%s'", key);
            return -1;
        }
        skip_ws(&h);
        if (h.p < h.end && *h.p == ',') {
            h.p++;
            continue;
        }
        if (expect_char(&h, '}') != 0) {
            set_err(err, err_len, "malformed header: expected ',' or '}'");
            return -1;
        }
        break;
    }
    skip_ws(&h);
    if (h.p != h.end) {
        set_err(err, err_len, "malformed header: unexpected text after the dict");
        return -1;
    }
    if (!have_descr || !have_order || !have_shape) {
        set_err(err, err_len, "malformed header: missing '%s'",
                !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
        return -1;
    }
    if (npy_parse_descr(a->descr, &a->kind, &a->itemsize, &a->big_endian) != 0) {
        set_err(err, err_len, "unsupported dtype '%s'", a->descr);
        return -1;
    }
    if (fortran) {
        set_err(err, err_len, "Fortran-order arrays are not supported (save with C order)");
        return -1;
    }
    return 0;
}

/* ---- load ----------------------------------------------------------------------------------- */

int npy_load(const char *path, npy_array *a, char *err, size_t err_len)
{
    unsigned char pre[12];
    FILE *f;
    struct stat st;
    size_t hlen, data_off;
    char *header = NULL;
    int64_t count = 1;
    int i, rc = NPY_EFORMAT;

    memset(a, 0, sizeof *a);
    f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        set_err(err, err_len, "cannot open %s: %s", path, strerror(e));
        return e == ENOENT ? NPY_ENOENT : NPY_EIO;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        set_err(err, err_len, "%s is not a regular file", path);
        fclose(f);
        return NPY_EIO;
    }
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        set_err(err, err_len, "not a .npy file (bad magic string)");
        goto fail;
    }
    if (pre[6] == 1) {
        hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
        data_off = 10;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            set_err(err, err_len, "malformed header: truncated");
            goto fail;
        }
        hlen = (size_t)pre[8] | ((size_t)pre[9] << 8) | ((size_t)pre[10] << 16) | ((size_t)pre[11] << 24);
        data_off = 12;
    } else {
        set_err(err, err_len, "unsupported .npy format version %d.%d", pre[6], pre[7]);
        goto fail;
    }
    if (hlen == 0 || hlen > NPY_MAX_HEADER) {
        set_err(err, err_len, "malformed header: length %zu", hlen);
        goto fail;
    }
    header = malloc(hlen + 1);
    if (!header) {
        set_err(err, err_len, "out of memory");
        rc = NPY_ENOMEM;
        goto fail;
    }
    if (fread(header, 1, hlen, f) != hlen) {
        set_err(err, err_len, "malformed header: truncated");
        goto fail;
    }
    header[hlen] = '\0';
    if (memchr(header, '\0', hlen)) {
        set_err(err, err_len, "malformed header: contains a NUL byte");
        goto fail;
    }
    if (parse_header(header, hlen, a, err, err_len) != 0)
        goto fail;
    for (i = 0; i < a->ndim; i++) {
        if (a->shape[i] != 0 && count > INT64_MAX / a->itemsize / a->shape[i]) {
            set_err(err, err_len, "malformed header: shape is too large");
            goto fail;
        }
        count *= a->shape[i];
    }
    a->count = count;
    {
        int64_t nbytes = count * a->itemsize;
        int64_t avail = (int64_t)st.st_size - (int64_t)(data_off + hlen);
        if (avail < nbytes) {
            char shp[256];
            npy_format_shape(shp, sizeof shp, a->ndim, a->shape);
            set_err(err, err_len, "truncated: header says %s %s (%lld bytes of data), the file holds %lld",
                    a->descr, shp, (long long)nbytes, (long long)(avail < 0 ? 0 : avail));
            goto fail;
        }
        if ((uint64_t)nbytes > (uint64_t)SIZE_MAX - 1) {
            set_err(err, err_len, "too large for this machine");
            rc = NPY_ENOMEM;
            goto fail;
        }
        a->data = malloc(nbytes > 0 ? (size_t)nbytes : 1);
        if (!a->data) {
            set_err(err, err_len, "cannot allocate %lld bytes", (long long)nbytes);
            rc = NPY_ENOMEM;
            goto fail;
        }
        if (nbytes > 0 && fread(a->data, 1, (size_t)nbytes, f) != (size_t)nbytes) {
            set_err(err, err_len, "read error: %s", ferror(f) ? strerror(errno) : "unexpected end of file");
            rc = NPY_EIO;
            goto fail;
        }
    }
    free(header);
    fclose(f);
    return NPY_OK;

fail:
    free(header);
    free(a->data);
    memset(a, 0, sizeof *a);
    fclose(f);
    return rc;
}

void npy_free(npy_array *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- save ----------------------------------------------------------------------------------- */

int npy_write_stream(FILE *file, const char *descr, int ndim, const int64_t *shape, const void *data,
                     char *err, size_t err_len)
{
    char dict[1024];
    char hdr[1100];
    char kind;
    int itemsize, big, i;
    size_t n = 0, total;
    int64_t count = 1;

    if (npy_parse_descr(descr, &kind, &itemsize, &big) != 0 || ndim < 0 || ndim > NPY_MAX_DIMS) {
        set_err(err, err_len, "internal error: bad descr or rank");
        return NPY_EFORMAT;
    }
    n += (size_t)snprintf(dict + n, sizeof dict - n, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (i = 0; i < ndim; i++) {
        n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
        count *= shape[i];
        if (n >= sizeof dict - 16)
            break;
    }
    n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", ndim == 1 ? "," : "");
    /* Pad with spaces so that magic + length + header is a multiple of 64, ending in '\n'. */
    total = 10 + n + 1;
    total = (total + 63) / 64 * 64;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char)((total - 10) & 0xff);
    hdr[9] = (char)(((total - 10) >> 8) & 0xff);
    memcpy(hdr + 10, dict, n);
    memset(hdr + 10 + n, ' ', total - 10 - n - 1);
    hdr[total - 1] = '\n';
    if (fwrite(hdr, 1, total, file) != total)
        goto io_fail;
    if (count > 0 && fwrite(data, (size_t)itemsize, (size_t)count, file) != (size_t)count)
        goto io_fail;
    if (fflush(file) != 0)
        goto io_fail;
    return NPY_OK;

io_fail:
    set_err(err, err_len, "write error: %s", strerror(errno));
    return NPY_EIO;
}

int npy_save(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data,
             char *err, size_t err_len)
{
    int rc;
    FILE *f = fopen(path, "wb");
    if (!f) {
        set_err(err, err_len, "cannot create %s: %s", path, strerror(errno));
        return NPY_EIO;
    }
    rc = npy_write_stream(f, descr, ndim, shape, data, err, err_len);
    if (fclose(f) != 0 && rc == NPY_OK) {
        set_err(err, err_len, "write error: %s", strerror(errno));
        rc = NPY_EIO;
    }
    if (rc != NPY_OK)
        remove(path);
    return rc;
}
