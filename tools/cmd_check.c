/*
 * cmd_check.c — `gdn check`: the conformance suite (check.h) on this machine, one line per case:
 *     PASS|FAIL <description> out_err=.. state_err=.. cap_err=..
 * then a summary line. Exit status 0 iff every case passes.
 */
#include "check/check.h"
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "check"

void cmd_check_help(void)
{
    printf("usage: gdn check [--quick] [--isa auto|scalar|avx2|avx512] [--threads N]\n"
           "\n"
           "Runs the conformance suite: every kernel variant the CPU supports, every convention, against\n"
           "the float64 reference on the same rounded inputs (relative RMS tolerance 1e-5 for f32\n"
           "compute, NaN never passes, guard sentinels, untouched slots). One line per case:\n"
           "  PASS|FAIL <description> out_err=.. state_err=.. cap_err=..\n"
           "and a summary. Exit status 0 iff all cases pass.\n"
           "\n"
           "  --quick        the smaller matrix used in CI\n"
           "  --isa X        only the cases of that ISA (cases for any ISA run on it)\n"
           "  --threads N    run every case on N threads (0 = all cores; default: as the suite says)\n");
}

enum { O_QUICK, O_ISA, O_THREADS };
static const tool_opt check_options[] = {{"--quick", 0}, {"--isa", 1}, {"--threads", 1}, {NULL, 0}};

int cmd_check(int argc, char **argv)
{
    int quick = 0, threads = -1, i = 1;
    gdn_isa isa = GDN_ISA_AUTO;
    gdn_check_case *cases;
    size_t n, m, c, run = 0, passed = 0;
    long long v;
    double t0;

    while (i < argc) {
        const char *val;
        int k = tool_next_opt(CMD, argc, argv, &i, check_options, &val);
        if (k == TOOL_OPT_HELP) {
            cmd_check_help();
            return TOOL_EXIT_OK;
        }
        if (k < 0)
            return TOOL_EXIT_USAGE;
        if (k == O_QUICK) {
            quick = 1;
        } else if (k == O_ISA) {
            int e = tool_parse_enum(CMD, "--isa", val, tool_isa_names);
            if (e < 0)
                return TOOL_EXIT_USAGE;
            isa = (gdn_isa)e;
        } else if (k == O_THREADS) {
            if (tool_parse_int(CMD, "--threads", val, 0, 4096, &v) != 0)
                return TOOL_EXIT_USAGE;
            threads = (int)v;
        }
    }
    if (isa != GDN_ISA_AUTO && !gdn_cpu_supports(isa)) {
        tool_error(CMD, "--isa %s: this CPU (or OS) does not support it", tool_isa_names[isa]);
        return TOOL_EXIT_DATA;
    }

    n = gdn_check_suite(NULL, 0, quick);
    cases = calloc(n ? n : 1, sizeof *cases);
    if (!cases) {
        tool_error(CMD, "out of memory");
        return TOOL_EXIT_DATA;
    }
    m = gdn_check_suite(cases, n, quick);
    if (m < n)
        n = m;
    t0 = tool_now();
    for (c = 0; c < n; c++) {
        gdn_check_case cs = cases[c];
        gdn_check_result r;
        char desc[512];
        if (isa != GDN_ISA_AUTO) {
            if (cs.isa != GDN_ISA_AUTO && cs.isa != isa)
                continue;
            cs.isa = isa;
        }
        if (threads >= 0)
            cs.threads = threads;
        memset(&r, 0, sizeof r);
        gdn_check_run(&cs, &r);
        gdn_check_describe(&cs, desc, sizeof desc);
        printf("%s %s out_err=%.2e state_err=%.2e cap_err=%.2e", r.pass ? "PASS" : "FAIL", desc, r.out_err, r.state_err,
               r.capture_err);
        if (!r.pass) {
            char *p;
            for (p = r.message; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            printf(" tol=%.0e status=%s: %s", r.tolerance, gdn_status_string(r.status), r.message);
        }
        printf("\n");
        fflush(stdout);
        run++;
        passed += r.pass ? 1 : 0;
    }
    free(cases);
    printf("check: %zu of %zu cases passed%s (%s%s%s, %.1f s)\n", passed, run, passed == run ? "" : ", FAILURES",
           quick ? "quick suite" : "full suite", isa != GDN_ISA_AUTO ? ", isa=" : "",
           isa != GDN_ISA_AUTO ? gdn_isa_name(isa) : "", tool_now() - t0);
    if (run == 0) {
        tool_error(CMD, "no case to run");
        return TOOL_EXIT_DATA;
    }
    return passed == run ? TOOL_EXIT_OK : TOOL_EXIT_DATA;
}
