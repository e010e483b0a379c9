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

/* Times `reps` runs of launch(arg, s) into ms[0 .. reps), after `warm` untimed ones. Back to back (idle 0):
   each run is queued behind the one before with an event between them, so the GPU is still busy with the last
   warm-up run when the first timed run's opening event is recorded, and run r is timed from the event before
   it to the event after it: device time only, the host's launch latency hidden behind the queue, as a model's
   stream of layers (and triton.testing.do_bench) sees it; one synchronization at the end. Idle (1), the form
   before session 37: an event, the run, an event, and the host waits for the second before the next run, so
   each time also holds the gap in which the host submits the run to an idle GPU. */
static int time_runs(cudaStream_t s, cudaError_t (*launch)(void *arg, cudaStream_t s), void *arg, int warm,
                     int reps, int idle, float *ms)
{
    const int nev = idle ? 2 : reps + 1;
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)nev, sizeof *ev);
    cudaError_t e = cudaSuccess;
    const char *what = "cudaEventCreate";
    int r, rc = -1;
    if (!ev) {
        snprintf(g_err, sizeof g_err, "out of memory for %d CUDA events", nev);
        return -1;
    }
    for (r = 0; r < nev; r++)
        if ((e = cudaEventCreate(&ev[r])) != cudaSuccess)
            goto done;
    what = "launch";
    for (r = 0; r < warm; r++)
        if ((e = launch(arg, s)) != cudaSuccess)
            goto done;
    if (idle) {
        for (r = 0; r < reps; r++) {
            what = "cudaEventRecord";
            if ((e = cudaEventRecord(ev[0], s)) != cudaSuccess)
                goto done;
            what = "launch";
            if ((e = launch(arg, s)) != cudaSuccess)
                goto done;
            what = "cudaEventRecord";
            if ((e = cudaEventRecord(ev[1], s)) != cudaSuccess)
                goto done;
            what = "cudaEventSynchronize";
            if ((e = cudaEventSynchronize(ev[1])) != cudaSuccess)
                goto done;
            what = "cudaEventElapsedTime";
            if ((e = cudaEventElapsedTime(&ms[r], ev[0], ev[1])) != cudaSuccess)
                goto done;
        }
        rc = 0;
        goto done;
    }
    /* back to back: run r opens at ev[r] (run r - 1's closing event) and closes at ev[r + 1] */
    what = "cudaEventRecord";
    if ((e = cudaEventRecord(ev[0], s)) != cudaSuccess)
        goto done;
    for (r = 0; r < reps; r++) {
        what = "launch";
        if ((e = launch(arg, s)) != cudaSuccess)
            goto done;
        what = "cudaEventRecord";
        if ((e = cudaEventRecord(ev[r + 1], s)) != cudaSuccess)
            goto done;
    }
    what = "cudaStreamSynchronize";
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess)
        goto done;
    what = "cudaEventElapsedTime";
    for (r = 0; r < reps; r++)
        if ((e = cudaEventElapsedTime(&ms[r], ev[r], ev[r + 1])) != cudaSuccess)
            goto done;
    rc = 0;
done:
    if (rc)
        fail(what, e);
    for (r = 0; r < nev; r++)
        if (ev[r])
            cudaEventDestroy(ev[r]);
    free(ev);
    return rc;
}

static cudaError_t launch_graph(void *arg, cudaStream_t s)
{
    return cudaGraphLaunch((cudaGraphExec_t)arg, s);
}

int tool_dev_time_graph(void *stream, int (*fn)(void *arg, int i), void *arg, int calls, int warm, int reps,
                        int idle, double *us)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t e;
    float *ms = NULL;
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
    if (!(ms = (float *)malloc((size_t)reps * sizeof *ms))) {
        snprintf(g_err, sizeof g_err, "out of memory for %d timings", reps);
        goto done;
    }
    if (time_runs(s, launch_graph, (void *)exec, warm, reps, idle, ms))
        goto done;
    for (int r = 0; r < reps; r++)
        us[r] = 1000.0 * (double)ms[r] / calls;
    rc = 0;
done:
    free(ms);
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

typedef struct copy_job {
    void *dst;
    const void *src;
    size_t bytes;
} copy_job;

static cudaError_t launch_copy(void *arg, cudaStream_t s)
{
    const copy_job *c = (const copy_job *)arg;
    return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, s);
}

int tool_dev_copy_rate(void *stream, int idle, double *bytes_per_s)
{
    const size_t bytes = (size_t)512 << 20;
    cudaStream_t s = (cudaStream_t)stream;
    void *a = NULL, *b = NULL;
    float ms[20];
    int rc = -1;
    cudaError_t e;
    copy_job job;
    *bytes_per_s = 0.0;
    if ((e = cudaMalloc(&a, bytes)) != cudaSuccess || (e = cudaMalloc(&b, bytes)) != cudaSuccess) {
        fail("cudaMalloc (copy rate)", e);
        goto done;
    }
    if ((e = cudaMemsetAsync(a, 0, bytes, s)) != cudaSuccess) {
        fail("cudaMemsetAsync (copy rate)", e);
        goto done;
    }
    job.dst = b;
    job.src = a;
    job.bytes = bytes;
    if (time_runs(s, launch_copy, &job, 3, 20, idle, ms))
        goto done;
    qsort(ms, 20, sizeof ms[0], cmp_float);
    *bytes_per_s = 2.0 * (double)bytes / (0.5 * ((double)ms[9] + ms[10]) * 1e-3);
    rc = 0;
done:
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
                        int idle, double *us)
{
    (void)stream;
    (void)idle;
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

int tool_dev_copy_rate(void *stream, int idle, double *bytes_per_s)
{
    (void)stream;
    (void)idle;
    *bytes_per_s = 0.0;
    return none();
}

#endif
