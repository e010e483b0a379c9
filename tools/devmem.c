/*
 * devmem.c — see devmem.h. The CUDA runtime's C API when the library is built with its CUDA
 * backend; stubs that report "not built in" otherwise.
 */
#include "devmem.h"

#include <stdio.h>
#include <stdlib.h>

static char g_err[256] = "";

const char *tool_dev_error(void)
{
    return g_err;
}

#ifdef GDN_HAVE_CUDA

#include <cuda_runtime_api.h>

static int fail(const char *what, cudaError_t e)
{
    snprintf(g_err, sizeof g_err, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

int tool_dev_alloc(void **out, size_t bytes)
{
    cudaError_t e;
    *out = NULL;
    if ((e = cudaMalloc(out, bytes ? bytes : 1)) != cudaSuccess) {
        *out = NULL;
        return fail("cudaMalloc", e);
    }
    if ((e = cudaMemset(*out, 0, bytes ? bytes : 1)) != cudaSuccess) {
        cudaFree(*out);
        *out = NULL;
        return fail("cudaMemset", e);
    }
    return 0;
}

int tool_dev_upload(void **out, const void *host, size_t bytes)
{
    cudaError_t e;
    if (tool_dev_alloc(out, bytes))
        return -1;
    if (bytes && (e = cudaMemcpy(*out, host, bytes, cudaMemcpyHostToDevice)) != cudaSuccess) {
        cudaFree(*out);
        *out = NULL;
        return fail("cudaMemcpy to the device", e);
    }
    return 0;
}

int tool_dev_download(void *host, const void *dev, size_t bytes)
{
    cudaError_t e;
    if (bytes && (e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
        return fail("cudaMemcpy from the device", e);
    return 0;
}

int tool_dev_copy(void *dst, const void *src, size_t bytes)
{
    cudaError_t e;
    if (bytes && (e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)) != cudaSuccess)
        return fail("cudaMemcpy on the device", e);
    return 0;
}

void tool_dev_free(void *dev)
{
    if (dev)
        cudaFree(dev);
}

int tool_dev_stream_create(void **out)
{
    cudaStream_t s;
    cudaError_t e;
    *out = NULL;
    if ((e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess)
        return fail("cudaStreamCreate", e);
    *out = (void *)s;
    return 0;
}

void tool_dev_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy((cudaStream_t)stream);
}

int tool_dev_time_graph(void *stream, int (*fn)(void *arg, int i), void *arg, int calls, int warm, int reps,
                        double *us)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaEvent_t a = NULL, b = NULL;
    cudaError_t e;
    int rc = -1, bad = 0;
    if ((e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)) != cudaSuccess)
        return fail("cudaStreamBeginCapture", e);
    for (int i = 0; i < calls && !bad; i++)
        bad = fn(arg, i) != 0;
    e = cudaStreamEndCapture(s, &graph);
    if (bad) {
        snprintf(g_err, sizeof g_err, "a call failed while it was captured into a CUDA graph");
        goto done;
    }
    if (e != cudaSuccess) {
        fail("cudaStreamEndCapture", e);
        goto done;
    }
    if ((e = cudaGraphInstantiate(&exec, graph, 0)) != cudaSuccess) {
        fail("cudaGraphInstantiate", e);
        goto done;
    }
    if ((e = cudaEventCreate(&a)) != cudaSuccess || (e = cudaEventCreate(&b)) != cudaSuccess) {
        fail("cudaEventCreate", e);
        goto done;
    }
    for (int r = 0; r < warm; r++)
        if ((e = cudaGraphLaunch(exec, s)) != cudaSuccess) {
            fail("cudaGraphLaunch", e);
            goto done;
        }
    for (int r = 0; r < reps; r++) {
        float ms = 0.0f;
        cudaEventRecord(a, s);
        if ((e = cudaGraphLaunch(exec, s)) != cudaSuccess) {
            fail("cudaGraphLaunch", e);
            goto done;
        }
        cudaEventRecord(b, s);
        if ((e = cudaEventSynchronize(b)) != cudaSuccess || (e = cudaEventElapsedTime(&ms, a, b)) != cudaSuccess) {
            fail("cudaEventElapsedTime", e);
            goto done;
        }
        us[r] = 1000.0 * (double)ms / calls;
    }
    rc = 0;
done:
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    return rc;
}

int tool_dev_name(char *buf, size_t len)
{
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaError_t e;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess)
        return fail("cudaGetDeviceProperties", e);
    snprintf(buf, len, "%s (%d SMs, compute capability %d.%d)", prop.name, prop.multiProcessorCount, prop.major,
             prop.minor);
    return 0;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int tool_dev_copy_rate(void *stream, double *bytes_per_s)
{
    const size_t bytes = (size_t)512 << 20;
    cudaStream_t s = (cudaStream_t)stream;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float ms[20];
    int rc = -1;
    cudaError_t e;
    *bytes_per_s = 0.0;
    if ((e = cudaMalloc(&a, bytes)) != cudaSuccess || (e = cudaMalloc(&b, bytes)) != cudaSuccess) {
        fail("cudaMalloc (copy rate)", e);
        goto done;
    }
    cudaMemsetAsync(a, 0, bytes, s);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int r = -3; r < 20; r++) {
        cudaEventRecord(e0, s);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s);
        cudaEventRecord(e1, s);
        if ((e = cudaEventSynchronize(e1)) != cudaSuccess) {
            fail("cudaMemcpyAsync (copy rate)", e);
            goto done;
        }
        if (r >= 0)
            cudaEventElapsedTime(&ms[r], e0, e1);
    }
    qsort(ms, 20, sizeof ms[0], cmp_float);
    *bytes_per_s = 2.0 * (double)bytes / (0.5 * ((double)ms[9] + ms[10]) * 1e-3);
    rc = 0;
done:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return rc;
}

#else /* no CUDA */

static int none(void)
{
    snprintf(g_err, sizeof g_err, "CUDA is not built in (this gdn was built without a CUDA compiler)");
    return -1;
}

int tool_dev_alloc(void **out, size_t bytes)
{
    (void)bytes;
    *out = NULL;
    return none();
}

int tool_dev_upload(void **out, const void *host, size_t bytes)
{
    (void)host;
    (void)bytes;
    *out = NULL;
    return none();
}

int tool_dev_download(void *host, const void *dev, size_t bytes)
{
    (void)host;
    (void)dev;
    (void)bytes;
    return none();
}

int tool_dev_copy(void *dst, const void *src, size_t bytes)
{
    (void)dst;
    (void)src;
    (void)bytes;
    return none();
}

void tool_dev_free(void *dev)
{
    (void)dev;
}

int tool_dev_stream_create(void **out)
{
    *out = NULL;
    return none();
}

void tool_dev_stream_destroy(void *stream)
{
    (void)stream;
}

int tool_dev_time_graph(void *stream, int (*fn)(void *arg, int i), void *arg, int calls, int warm, int reps,
                        double *us)
{
    (void)stream;
    (void)fn;
    (void)arg;
    (void)calls;
    (void)warm;
    (void)reps;
    (void)us;
    return none();
}

int tool_dev_name(char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    return none();
}

int tool_dev_copy_rate(void *stream, double *bytes_per_s)
{
    (void)stream;
    *bytes_per_s = 0.0;
    return none();
}

#endif
