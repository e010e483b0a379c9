/*
 * cpuid.h — what this x86-64 CPU and its OS can run, from CPUID and XGETBV (the OS must save the
 * YMM / ZMM registers, XCR0 bits 1-2 and 5-7). Computed once and cached; thread-safe.
 * On other architectures every feature is absent.
 */
#ifndef GDN_CPU_CPUID_H
#define GDN_CPU_CPUID_H

#define GDN_CPU_AVX2       (1u << 0) /* AVX2 + FMA + F16C, OS saves YMM */
#define GDN_CPU_AVX512     (1u << 1) /* AVX-512 F + BW + VL + DQ, OS saves ZMM (implies AVX2) */
#define GDN_CPU_AVX512BF16 (1u << 2) /* AVX512_BF16 (vcvtne2ps2bf16, vdpbf16ps) */

/* Bitmask of GDN_CPU_* flags. */
unsigned gdn_cpu_features(void);

/* The CPU's brand string (CPUID 0x80000002-4) into buf (>= 49 bytes), "unknown" elsewhere. */
void gdn_cpu_brand(char *buf);

#endif
