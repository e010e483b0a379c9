/*
 * cmd_info.c — `gdn info`: version, CPU brand and features, the ISA and the kernel chosen for
 * each op, threads, CUDA devices.
 */
#include "cpu/cpuid.h"
#include "cpu/chunked.h"
#include "tools.h"

#include <stdio.h>
#include <string.h>

#define CMD "info"

void cmd_info_help(void)
{
    printf("usage: gdn info [--isa auto|scalar|avx2|avx512] [--threads N]\n"
           "\n"
           "Prints the library version, the CPU and the features gdn uses, the instruction set the\n"
           "kernels run with (the best one, GDN_ISA from the environment, or --isa), the kernel each\n"
           "op runs for Dk = 128 and for a Dk that is not a multiple of 16, the thread count, and the\n"
           "CUDA devices (the CUDA backend is not built in this version).\n");
}

enum { O_ISA, O_THREADS };
static const tool_opt info_options[] = {{"--isa", 1}, {"--threads", 1}, {NULL, 0}};

int cmd_info(int argc, char **argv)
{
    gdn_context_desc cd;
    gdn_context *ctx = NULL;
    char brand[64];
    unsigned feat;
    int i = 1, isa;
    long long n;

    memset(&cd, 0, sizeof cd);
    while (i < argc) {
        const char *val;
        int k = tool_next_opt(CMD, argc, argv, &i, info_options, &val);
        if (k == TOOL_OPT_HELP) {
            cmd_info_help();
            return TOOL_EXIT_OK;
        }
        if (k < 0)
            return TOOL_EXIT_USAGE;
        if (k == O_ISA) {
            int e = tool_parse_enum(CMD, "--isa", val, tool_isa_names);
            if (e < 0)
                return TOOL_EXIT_USAGE;
            cd.isa = (gdn_isa)e;
        } else if (k == O_THREADS) {
            if (tool_parse_int(CMD, "--threads", val, 0, 4096, &n) != 0)
                return TOOL_EXIT_USAGE;
            cd.num_threads = (int)n;
        }
    }

    memset(brand, 0, sizeof brand);
    gdn_cpu_brand(brand);
    feat = gdn_cpu_features();
    printf("gdn %s\n", gdn_version_string());
    printf("CPU: %s\n", brand);
    printf("CPU features:%s%s%s%s\n", feat & GDN_CPU_AVX2 ? " avx2+fma+f16c" : "",
           feat & GDN_CPU_AVX512 ? " avx512f/bw/vl/dq" : "", feat & GDN_CPU_AVX512BF16 ? " avx512_bf16" : "",
           feat ? "" : " (none of avx2, avx512: scalar kernels only)");
    printf("ISAs supported:");
    for (isa = GDN_ISA_SCALAR; isa <= GDN_ISA_AVX512; isa++)
        if (gdn_cpu_supports((gdn_isa)isa))
            printf(" %s", gdn_isa_name((gdn_isa)isa));
    printf("\n");

    ctx = tool_context_create(CMD, GDN_BACKEND_CPU, cd.num_threads, cd.isa);
    if (!ctx)
        return TOOL_EXIT_DATA;
    printf("ISA chosen: %s%s\n", gdn_isa_name(gdn_context_isa(ctx)),
           cd.isa != GDN_ISA_AUTO ? " (--isa)" : "");
    printf("threads: %d\n", gdn_context_num_threads(ctx));
    printf("kernels (Dk = 128):\n");
    printf("  decode   (T = 1)            %s\n", gdn_context_kernel_name(ctx, 128));
    printf("  verify   (T draft tokens)   %s\n", gdn_context_kernel_name(ctx, 128));
    printf("  prefill  (T tokens)         %s\n", gdn_context_kernel_name(ctx, 128));
    printf("kernels (Dk not a multiple of 16, e.g. 100):\n");
    printf("  decode, verify, prefill     %s\n", gdn_context_kernel_name(ctx, 100));
    printf("algorithms: recurrent (token loop, the kernels above); chunked (WY/UT, chunks of %d tokens, "
           "chunk_f32__%s; v_dim not a multiple of 16: chunk_f32__scalar)\n", GDN_CHUNK_C,
           gdn_isa_name(gdn_context_isa(ctx)));
    printf("  auto: chunked for sequences of >= %d tokens (Dk <= 128; >= %d above) when no states are captured, "
           "else the token loop\n", GDN_CHUNK_AUTO_MIN_T, GDN_CHUNK_AUTO_MIN_T_LARGE);
    gdn_context_destroy(ctx);

    cd.backend = GDN_BACKEND_CUDA;
    if (gdn_context_create(&cd, &ctx) == GDN_STATUS_SUCCESS) {
        printf("CUDA: available\n");
        gdn_context_destroy(ctx);
    } else if (strstr(gdn_last_error(NULL), "build")) {
        printf("CUDA: not built\n");
    } else {
        printf("CUDA: unavailable (%s)\n", gdn_last_error(NULL));
    }
    return TOOL_EXIT_OK;
}
