/*
 * machine.h — this machine's own limits, measured by `gdn bench` in the same run as the cases it
 * compares with them (DESIGN.md §5: ratios, never absolute times from a noisy shared CPU).
 *
 *  - f32 FMA rate: independent FMA chains in registers on every thread, with the widest ISA this
 *    CPU and OS support (AVX-512, else AVX2+FMA, else scalar multiply-add); best of a few runs.
 *  - memory bandwidth: an in-place axpy y[i] += s*x[i] over two arrays together much larger than
 *    the last-level cache (read 2, write 1 per element, every byte counted once: the same traffic
 *    pattern as a state update), on every thread; best of a few passes.
 *
 * Threads are OpenMP threads when the tool is built with OpenMP (as the library is), else one.
 */
#ifndef GDN_TOOLS_MACHINE_H
#define GDN_TOOLS_MACHINE_H

#include <stddef.h>

#include "gdn/gdn.h"

typedef struct tool_fma_peak {
    double gflops;  /* f32 FLOP/s / 1e9 (an FMA counts 2) */
    gdn_isa isa;    /* ISA of the loop that ran */
    int threads;
    double single_gflops; /* the same loop on one thread (calibration run) */
} tool_fma_peak;

/* Whether the FMA rate on all threads is well below threads x the one-thread rate: other
 * processes are using the cores, and times measured now are unreliable. */
int tool_cpu_contended(const tool_fma_peak *f);

typedef struct tool_mem_bw {
    double gbytes_per_s; /* 1e9 bytes/s */
    size_t array_bytes;  /* both arrays together */
    int threads;
} tool_mem_bw;

/* Measure the FMA rate on `threads` threads (0 = all) with the best ISA (or `isa` when not AUTO,
 * if supported). Takes about 0.3 s. */
tool_fma_peak tool_measure_fma(int threads, gdn_isa isa);

/* Measure memory bandwidth on `threads` threads (0 = all) over arrays of about `bytes` bytes in
 * all (0 = max(512 MiB, 4x the L3 cache), at most 1 GiB). Returns 0 GB/s if the memory cannot be
 * allocated. Takes about 0.5-1 s. */
tool_mem_bw tool_measure_memory(int threads, size_t bytes);

/* Size of the last-level cache in bytes (sysconf), or 32 MiB when unknown. */
size_t tool_l3_bytes(void);

#endif
