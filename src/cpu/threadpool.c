/*
 * threadpool.c — see threadpool.h. One job at a time (a context is used by one thread at a time).
 *
 * Protocol: run() stores the job, splits items 0..n-1 into one contiguous range per thread (thread
 * t owns [t*n/P, (t+1)*n/P)), resets the count of workers still busy, then bumps `generation`
 * (release) under the mutex and broadcasts. A worker that sees a new generation (acquire) takes
 * the items of its own range in order (an atomic counter per range, each on its own cache line),
 * then helps the others by taking items from the fronts of their ranges, and decrements `busy`;
 * the one that brings it to zero signals `done` under the mutex. The caller (thread 0) takes items
 * too, then waits for busy == 0. Both waits spin for a short while before sleeping.
 *
 * Why ranges: repeated calls of the same shape (decode, layer after layer) give every thread the
 * same items each time, so a thread finds the state of "its" heads in its own core's L2; and a
 * thread walks consecutive items, i.e. consecutive state memory, which streams from DRAM and lets
 * the kernels prefetch the next item. Stealing keeps the load balanced when a core is slow.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu/threadpool.h"

#define SPIN_ITERS 4000

struct gdn_threadpool {
    int num_threads;
    pthread_t *threads;
    int started;
    pthread_mutex_t mutex;
    pthread_cond_t work;
    pthread_cond_t done;
    atomic_uint_fast64_t generation;
    atomic_int busy;
    atomic_int stop;
    struct range *ranges; /* num_threads */
    int64_t n;
    gdn_task_fn fn;
    void *arg;
};

/* The items a thread owns in the current job: next (taken in order) up to end. */
typedef struct range {
    _Alignas(64) atomic_int_fast64_t next;
    int64_t end;
} range;

typedef struct worker_arg {
    gdn_threadpool *pool;
    int id;
} worker_arg;

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void take_items(gdn_threadpool *p, int id)
{
    for (int k = 0; k < p->num_threads; k++) {
        range *r = &p->ranges[(id + k) % p->num_threads];
        for (;;) {
            const int64_t i = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
            if (i >= r->end)
                break;
            p->fn(p->arg, i, id);
        }
    }
}

static void *worker_main(void *varg)
{
    worker_arg *wa = (worker_arg *)varg;
    gdn_threadpool *p = wa->pool;
    const int id = wa->id;
    free(wa);
    uint_fast64_t seen = 0;
    for (;;) {
        /* wait for a new generation: spin, then sleep */
        uint_fast64_t g = atomic_load_explicit(&p->generation, memory_order_acquire);
        for (int s = 0; g == seen && s < SPIN_ITERS && !atomic_load_explicit(&p->stop, memory_order_relaxed); s++) {
            cpu_relax();
            g = atomic_load_explicit(&p->generation, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mutex);
            while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen &&
                   !atomic_load_explicit(&p->stop, memory_order_relaxed))
                pthread_cond_wait(&p->work, &p->mutex);
            pthread_mutex_unlock(&p->mutex);
        }
        if (atomic_load_explicit(&p->stop, memory_order_acquire))
            return NULL;
        seen = g;
        take_items(p, id);
        if (atomic_fetch_sub_explicit(&p->busy, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mutex);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mutex);
        }
    }
}

int gdn_available_cpus(void)
{
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
#endif
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void gdn_threadpool_destroy(gdn_threadpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mutex);
    atomic_store_explicit(&p->stop, 1, memory_order_release);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mutex);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mutex);
    free(p->threads);
    free(p->ranges);
    free(p);
}

int gdn_threadpool_create(int num_threads, gdn_threadpool **out)
{
    *out = NULL;
    gdn_threadpool *p = (gdn_threadpool *)calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->num_threads = num_threads < 1 ? 1 : num_threads;
    pthread_mutex_init(&p->mutex, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->generation, 0);
    atomic_init(&p->busy, 0);
    atomic_init(&p->stop, 0);
    p->ranges = (range *)aligned_alloc(64, (size_t)p->num_threads * sizeof(range));
    if (!p->ranges) {
        gdn_threadpool_destroy(p);
        return -1;
    }
    for (int t = 0; t < p->num_threads; t++) {
        atomic_init(&p->ranges[t].next, 0);
        p->ranges[t].end = 0;
    }
    if (p->num_threads > 1) {
        p->threads = (pthread_t *)calloc((size_t)p->num_threads - 1, sizeof *p->threads);
        if (!p->threads) {
            gdn_threadpool_destroy(p);
            return -1;
        }
        for (int i = 1; i < p->num_threads; i++) {
            worker_arg *wa = (worker_arg *)malloc(sizeof *wa);
            if (!wa) {
                gdn_threadpool_destroy(p);
                return -1;
            }
            wa->pool = p;
            wa->id = i;
            if (pthread_create(&p->threads[i - 1], NULL, worker_main, wa) != 0) {
                free(wa);
                gdn_threadpool_destroy(p);
                return -1;
            }
            p->started++;
        }
    }
    *out = p;
    return 0;
}

void gdn_threadpool_run(gdn_threadpool *p, int64_t n, gdn_task_fn fn, void *arg)
{
    if (n <= 0)
        return;
    if (p->num_threads == 1 || n == 1) {
        for (int64_t i = 0; i < n; i++)
            fn(arg, i, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    for (int t = 0; t < p->num_threads; t++) {
        atomic_store_explicit(&p->ranges[t].next, n * t / p->num_threads, memory_order_relaxed);
        p->ranges[t].end = n * (t + 1) / p->num_threads;
    }
    atomic_store_explicit(&p->busy, p->num_threads - 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mutex);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mutex);

    take_items(p, 0);

    for (int s = 0; s < SPIN_ITERS && atomic_load_explicit(&p->busy, memory_order_acquire) != 0; s++)
        cpu_relax();
    if (atomic_load_explicit(&p->busy, memory_order_acquire) != 0) {
        pthread_mutex_lock(&p->mutex);
        while (atomic_load_explicit(&p->busy, memory_order_acquire) != 0)
            pthread_cond_wait(&p->done, &p->mutex);
        pthread_mutex_unlock(&p->mutex);
    }
}
