/*
 * cpuid.c — CPU feature detection (see cpuid.h): CPUID leaves 1, 7.0, 7.1 and XGETBV(0).
 *
 * A feature counts only if the CPU has it and the OS saves the registers it needs (XCR0):
 *   AVX2      = AVX2 (7.0:EBX5) + FMA (1:ECX12) + F16C (1:ECX29) + AVX (1:ECX28) + OSXSAVE (1:ECX27),
 *               XCR0 bits 1-2 (SSE, YMM).
 *   AVX512    = AVX2 as above + AVX512 F (7.0:EBX16), DQ (EBX17), BW (EBX30), VL (EBX31),
 *               XCR0 bits 1-2 and 5-7 (opmask, ZMM0-15 upper halves, ZMM16-31).
 *   AVX512BF16 = AVX512 as above + AVX512_BF16 (7.1:EAX5).
 * The result is computed once; concurrent first calls compute the same value (idempotent), and
 * the cache is a C11 atomic, so racing threads are well defined.
 */
#include "cpu/cpuid.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

static unsigned long long read_xcr0(void)
{
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

static unsigned detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    const unsigned max_leaf = a;
    if (max_leaf < 7)
        return 0;

    __get_cpuid_count(1, 0, &a, &b, &c, &d);
    const int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1,
              f16c = (c >> 29) & 1;
    if (!osxsave || !avx)
        return 0;
    const unsigned long long xcr0 = read_xcr0();
    const int os_ymm = (xcr0 & 0x6) == 0x6;
    const int os_zmm = (xcr0 & 0xe6) == 0xe6;

    __get_cpuid_count(7, 0, &a, &b, &c, &d);
    const unsigned max_sub7 = a;
    const int avx2 = (b >> 5) & 1;
    const int avx512 = ((b >> 16) & 1) && ((b >> 17) & 1) && ((b >> 30) & 1) && ((b >> 31) & 1);
    int bf16 = 0;
    if (max_sub7 >= 1) {
        __get_cpuid_count(7, 1, &a, &b, &c, &d);
        bf16 = (a >> 5) & 1;
    }

    unsigned f = 0;
    if (avx2 && fma && f16c && os_ymm) {
        f |= GDN_CPU_AVX2;
        if (avx512 && os_zmm) {
            f |= GDN_CPU_AVX512;
            if (bf16)
                f |= GDN_CPU_AVX512BF16;
        }
    }
    return f;
}

void gdn_cpu_brand(char *buf)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000004u) {
        strcpy(buf, "unknown");
        return;
    }
    unsigned w[12];
    for (unsigned i = 0; i < 3; i++)
        __get_cpuid(0x80000002u + i, &w[4 * i], &w[4 * i + 1], &w[4 * i + 2], &w[4 * i + 3]);
    memcpy(buf, w, 48);
    buf[48] = '\0';
    /* Trim the leading and trailing spaces some vendors pad with. */
    size_t start = 0, len = strlen(buf);
    while (start < len && buf[start] == ' ')
        start++;
    while (len > start && buf[len - 1] == ' ')
        len--;
    memmove(buf, buf + start, len - start);
    buf[len - start] = '\0';
    if (buf[0] == '\0')
        strcpy(buf, "unknown");
}

#else

static unsigned detect(void)
{
    return 0;
}

void gdn_cpu_brand(char *buf)
{
    strcpy(buf, "unknown");
}

#endif

/* Bit 31 marks "computed"; the features use the low bits. */
#define GDN_CPU_KNOWN_ (1u << 31)
static atomic_uint cached_features;

unsigned gdn_cpu_features(void)
{
    unsigned f = atomic_load_explicit(&cached_features, memory_order_relaxed);
    if (!(f & GDN_CPU_KNOWN_)) {
        f = detect() | GDN_CPU_KNOWN_;
        atomic_store_explicit(&cached_features, f, memory_order_relaxed);
    }
    return f & ~GDN_CPU_KNOWN_;
}
