/*
 * driver.h — the CPU backend: runs a validated plan over work items (sequence, value head, Dv
 * tile) on the context's threads, preparing each block of tokens (dtype conversion, L2 norm, scale,
 * gates) in f32 and calling the token-loop kernel chosen for the context's ISA.
 */
#ifndef GDN_CPU_DRIVER_H
#define GDN_CPU_DRIVER_H

#include <stddef.h>
#include "core/context.h"

/* Tokens per prepared block. */
#define GDN_CPU_BLOCK_TOKENS 64

/* Floats of scratch each thread needs. */
size_t gdn_cpu_scratch_floats(void);

/* Pick the ISA (AUTO: GDN_ISA from the environment, else the best the CPU has) and set the
 * context's kernels for it (isa, recurrent, recurrent_name, f16 conversions). */
gdn_status gdn_cpu_select(gdn_context *ctx, gdn_isa requested, char *err, size_t err_len);

/* Run a plan. Never fails once the plan is valid. */
void gdn_cpu_forward(gdn_context *ctx, const gdn_plan *plan);

#endif
