/*
 * gdn.c — the `gdn` command-line tool: subcommand dispatch, help, and the helpers the
 * subcommands share (error lines, option parsing, context creation). The command line is a
 * contract (DESIGN.md §3): exit 0 on success, 1 on a data error, 2 on a usage error, and every
 * error is exactly one line on stderr naming the file or option at fault.
 */
#define _POSIX_C_SOURCE 200809L
#include "tools.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const tool_isa_names[] = {"auto", "scalar", "avx2", "avx512", NULL};
const char *const tool_dtype_names[] = {"f32", "bf16", "f16", NULL};
const char *const tool_backend_names[] = {"cpu", "cuda", NULL};
const char *const tool_algo_names[] = {"auto", "recurrent", "chunked", NULL};
const char *const tool_precision_names[] = {"default", "f32", "bf16", NULL};

void tool_error(const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    char *p;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fflush(stdout);
    if (cmd && *cmd)
        fprintf(stderr, "gdn %s: %s\n", cmd, msg);
    else
        fprintf(stderr, "gdn: %s\n", msg);
    fflush(stderr);
}

gdn_context *tool_context_create(const char *cmd, gdn_backend backend, int threads, gdn_isa isa)
{
    gdn_context_desc cd;
    gdn_context *ctx = NULL;
    memset(&cd, 0, sizeof cd);
    cd.backend = backend;
    cd.num_threads = threads;
    cd.isa = isa;
    if (gdn_context_create(&cd, &ctx) == GDN_STATUS_SUCCESS)
        return ctx;
    if (backend == GDN_BACKEND_CUDA)
        tool_error(cmd, "--backend cuda: %s", gdn_last_error(NULL));
    else if (isa != GDN_ISA_AUTO)
        tool_error(cmd, "--isa %s: %s", tool_isa_names[isa], gdn_last_error(NULL));
    else
        tool_error(cmd, "cannot create a context: %s", gdn_last_error(NULL));
    return NULL;
}

int tool_next_opt(const char *cmd, int argc, char **argv, int *i, const tool_opt *opts, const char **value)
{
    const char *arg = argv[*i];
    const char *eq;
    size_t len;
    int k;

    *value = NULL;
    (*i)++;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        return TOOL_OPT_HELP;
    if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0') {
        tool_error(cmd, "unknown option '%s' (see gdn %s --help)", arg, cmd);
        return TOOL_OPT_ERROR;
    }
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        tool_error(cmd, "unexpected argument '%s' (see gdn %s --help)", arg, cmd);
        return TOOL_OPT_ERROR;
    }
    eq = strchr(arg, '=');
    len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (k = 0; opts[k].name; k++) {
        if (strlen(opts[k].name) != len || strncmp(opts[k].name, arg, len) != 0)
            continue;
        if (!opts[k].has_value) {
            if (eq) {
                tool_error(cmd, "%s: takes no value (got '%s')", opts[k].name, eq + 1);
                return TOOL_OPT_ERROR;
            }
            return k;
        }
        if (eq) {
            *value = eq + 1;
        } else if (*i < argc) {
            *value = argv[(*i)++];
        } else {
            tool_error(cmd, "%s: missing value", opts[k].name);
            return TOOL_OPT_ERROR;
        }
        return k;
    }
    tool_error(cmd, "unknown option '%.*s' (see gdn %s --help)", (int)len, arg, cmd);
    return TOOL_OPT_ERROR;
}

int tool_parse_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
        tool_error(cmd, "%s: invalid value '%s' (expected an integer from %lld to %lld)", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int tool_parse_double(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(v)) {
        tool_error(cmd, "%s: invalid value '%s' (expected a finite number)", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int tool_parse_enum(const char *cmd, const char *opt, const char *s, const char *const *names)
{
    char valid[256];
    size_t n = 0;
    int k;
    for (k = 0; names[k]; k++)
        if (strcmp(s, names[k]) == 0)
            return k;
    valid[0] = '\0';
    for (k = 0; names[k] && n < sizeof valid; k++)
        n += (size_t)snprintf(valid + n, sizeof valid - n, "%s%s", k ? (names[k + 1] ? ", " : " or ") : "",
                              names[k]);
    tool_error(cmd, "%s: invalid value '%s' (expected %s)", opt, s, valid);
    return -1;
}

double tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- dispatch ------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "gdn %s — the Gated DeltaNet recurrence on CPUs (and NVIDIA GPUs)\n"
            "\n"
            "usage: gdn <command> [options]\n"
            "\n"
            "commands:\n"
            "  run     apply the recurrence to .npy tensors:  gdn run --in DIR --out DIR [options]\n"
            "  bench   time decode, verify and prefill on a real model's layer shape and compare\n"
            "          with this machine's measured FMA rate and memory bandwidth\n"
            "  check   run the conformance suite (every kernel against the float64 reference)\n"
            "  spec    a self-checking speculative-decoding loop (conv1d + recurrence, rollback by\n"
            "          capture and by replay) on a model's layer, with tokens per second\n"
            "  info    version, CPU features, the kernel chosen for each op, CUDA devices\n"
            "  help    this text, or `gdn help <command>` for a command's options\n"
            "\n"
            "  gdn --version   print the version\n"
            "\n"
            "Exit status: 0 success, 1 data error (bad file, shape, failed check), 2 usage error.\n",
            gdn_version_string());
}

static int command_help(const char *name)
{
    if (strcmp(name, "run") == 0)
        cmd_run_help();
    else if (strcmp(name, "bench") == 0)
        cmd_bench_help();
    else if (strcmp(name, "check") == 0)
        cmd_check_help();
    else if (strcmp(name, "info") == 0)
        cmd_info_help();
    else if (strcmp(name, "spec") == 0)
        cmd_spec_help();
    else if (strcmp(name, "help") == 0)
        usage(stdout);
    else {
        tool_error("help", "unknown command '%s' (commands: run, bench, check, info, spec)", name);
        return TOOL_EXIT_USAGE;
    }
    return TOOL_EXIT_OK;
}

int main(int argc, char **argv)
{
    const char *cmd;
    if (argc < 2) {
        tool_error(NULL, "missing command (run, bench, check, info or spec; see gdn --help)");
        return TOOL_EXIT_USAGE;
    }
    cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return TOOL_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc > 3) {
            tool_error("help", "too many arguments (usage: gdn help [command])");
            return TOOL_EXIT_USAGE;
        }
        if (argc == 3)
            return command_help(argv[2]);
        usage(stdout);
        return TOOL_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        if (argc > 2) {
            tool_error(NULL, "%s takes no arguments", cmd);
            return TOOL_EXIT_USAGE;
        }
        printf("gdn %s\n", gdn_version_string());
        return TOOL_EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "spec") == 0)
        return cmd_spec(argc - 1, argv + 1);
    if (cmd[0] == '-')
        tool_error(NULL, "unknown option '%s' (see gdn --help)", cmd);
    else
        tool_error(NULL, "unknown command '%s' (commands: run, bench, check, info, spec; see gdn --help)", cmd);
    return TOOL_EXIT_USAGE;
}
