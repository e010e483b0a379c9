/*
 * devmem.h — the tool's view of GPU memory and timing (devmem.c): just what `gdn run --backend
 * cuda` and `gdn bench --backend cuda` need to move their host buffers to a device and back, and
 * to time calls by CUDA graph replay. Built on the CUDA runtime when the library has the CUDA
 * backend (GDN_HAVE_CUDA); otherwise every function fails with "CUDA is not built in".
 *
 * All functions return 0 on success and -1 on failure, with a message in tool_dev_error().
 */
#ifndef GDN_TOOLS_DEVMEM_H
#define GDN_TOOLS_DEVMEM_H

#include <stddef.h>

/* The message of the last failure (never NULL). */
const char *tool_dev_error(void);

/* *out = device memory of `bytes` bytes (at least 1), zero-filled. */
int tool_dev_alloc(void **out, size_t bytes);

/* Device memory holding a copy of host[0..bytes). */
int tool_dev_upload(void **out, const void *host, size_t bytes);

/* host[0..bytes) = dev[0..bytes). */
int tool_dev_download(void *host, const void *dev, size_t bytes);

/* dst = src on the device. */
int tool_dev_copy(void *dst, const void *src, size_t bytes);

/* Frees device memory (NULL: nothing). */
void tool_dev_free(void *dev);

/* A new stream (*out, a cudaStream_t) and its destruction. */
int tool_dev_stream_create(void **out);
void tool_dev_stream_destroy(void *stream);

/* Capture calls fn(arg, 0) .. fn(arg, calls - 1) on `stream` into one CUDA graph (fn returns 0 on
 * success), replay it `warm` times, then `reps` times, each timed with CUDA events; us[r] receives
 * the time of replay r divided by `calls` (microseconds per call). idle = 0: the replays are queued back
 * to back and each is timed between the events on either side of it, so the host's launch latency
 * stays behind the queue (device time, as in a model's stream of layers); idle = 1: the stream is
 * synchronized before each timed replay, so each time also holds the host's submission to an idle GPU. */
int tool_dev_time_graph(void *stream, int (*fn)(void *arg, int i), void *arg, int calls, int warm, int reps,
                        int idle, double *us);

/* The name of device 0 and the device-to-device copy rate (bytes read + written per second, median
 * of 20 copies of 512 MiB timed with CUDA events on `stream`, back to back or each from an idle GPU
 * as tool_dev_time_graph's idle). */
int tool_dev_name(char *buf, size_t len);
int tool_dev_copy_rate(void *stream, int idle, double *bytes_per_s);

#endif
