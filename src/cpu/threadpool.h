/*
 * threadpool.h — the CPU backend's threads: a pool of num_threads - 1 pthreads created with the
 * context, plus the calling thread. gdn_threadpool_run gives every thread one contiguous range of the
 * items 0..n-1 (the same range for the same n, call after call: cache affinity), lets threads that
 * finish early take items from the others' ranges, and returns when all are done. Idle workers spin briefly, then sleep on a condition
 * variable, so a busy machine (an engine's own threads, other processes) does not suffer from
 * spinning threads the way OpenMP's default wait policy makes it suffer.
 */
#ifndef GDN_CPU_THREADPOOL_H
#define GDN_CPU_THREADPOOL_H

#include <stdint.h>

typedef struct gdn_threadpool gdn_threadpool;

/* fn(arg, item, thread): thread is 0 for the caller, 1..num_threads-1 for the workers. */
typedef void (*gdn_task_fn)(void *arg, int64_t item, int thread);

/* Returns 0 on success, -1 when memory or threads cannot be had (nothing is left running). */
int gdn_threadpool_create(int num_threads, gdn_threadpool **out);

/* Stops and joins the workers. Accepts NULL. */
void gdn_threadpool_destroy(gdn_threadpool *pool);

/* Runs fn over items 0..n-1 on all threads; returns when every item is done. */
void gdn_threadpool_run(gdn_threadpool *pool, int64_t n, gdn_task_fn fn, void *arg);

/* Processors this process may run on (sched_getaffinity where available), at least 1. */
int gdn_available_cpus(void);

#endif
