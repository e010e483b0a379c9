/*
 * tools.h — what the parts of the `gdn` command-line tool share: the subcommands, error
 * reporting, option parsing, and the layer shapes of real models (models.c).
 *
 * Exit statuses (DESIGN.md §3): 0 success, 1 data error (files, shapes, library errors, failed
 * checks), 2 usage error (unknown option, bad option value, missing required option). Every error
 * is exactly one line on stderr: "gdn <command>: <file or option>: <what is wrong>".
 */
#ifndef GDN_TOOLS_TOOLS_H
#define GDN_TOOLS_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#include "gdn/gdn.h"

#define TOOL_EXIT_OK 0
#define TOOL_EXIT_DATA 1
#define TOOL_EXIT_USAGE 2

/* Subcommands: argv[0] is the subcommand's name ("run"), argv[1..] its arguments. */
int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_spec(int argc, char **argv);

/* Help texts (stdout). */
void cmd_run_help(void);
void cmd_info_help(void);
void cmd_check_help(void);
void cmd_bench_help(void);
void cmd_spec_help(void);

/* One line on stderr, "gdn <cmd>: <message>"; newlines in the message become spaces. */
void tool_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A context with these settings, or NULL after reporting why on the option at fault:
 * "--backend cuda: ...", "--isa avx512: ..." or "cannot create a context: ...". */
gdn_context *tool_context_create(const char *cmd, gdn_backend backend, int threads, gdn_isa isa);

/* ---- option parsing ------------------------------------------------------------------------- */

typedef struct tool_opt {
    const char *name;  /* "--gate" */
    int has_value;     /* takes a value ("--gate log" or "--gate=log") */
} tool_opt;

#define TOOL_OPT_HELP (-3)  /* --help or -h */
#define TOOL_OPT_ERROR (-1) /* usage error, already reported */

/* Parse argv[*i] against opts (terminated by a NULL name) and advance *i. Returns the option's
 * index (with *value set for options that take one), TOOL_OPT_HELP, or TOOL_OPT_ERROR after
 * reporting an unknown option, a missing value, a value given to a flag or a positional argument. */
int tool_next_opt(const char *cmd, int argc, char **argv, int *i, const tool_opt *opts, const char **value);

/* Strict conversions of option values; 0 on success, -1 (after reporting "<opt>: ...") else. */
int tool_parse_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi, long long *out);
int tool_parse_double(const char *cmd, const char *opt, const char *s, double *out);
/* Index of s in names (NULL-terminated), or -1 after reporting the valid values. */
int tool_parse_enum(const char *cmd, const char *opt, const char *s, const char *const *names);

/* Names of the enums, indexed by value. */
extern const char *const tool_isa_names[];     /* auto scalar avx2 avx512 */
extern const char *const tool_dtype_names[];   /* f32 bf16 f16 */
extern const char *const tool_backend_names[]; /* cpu cuda */
extern const char *const tool_algo_names[];
extern const char *const tool_precision_names[]; /* default f32 bf16 */

/* Seconds from CLOCK_MONOTONIC. */
double tool_now(void);

/* ---- real model shapes (models.c, from research/PEERS.md) --------------------------------- */

typedef struct tool_model {
    const char *name;        /* "qwen3.6-35b-a3b" */
    const char *description; /* "Qwen3.5/3.6-35B-A3B" */
    int num_k_heads, num_v_heads, k_dim, v_dim;
    int gdn_layers;          /* GDN layers of the model (for per-token totals) */
} tool_model;

/* The table (n entries). */
const tool_model *tool_models(size_t *n);
/* By name (case-insensitive), NULL if unknown. */
const tool_model *tool_model_find(const char *name);
/* The default bench shape: Qwen3.6-35B-A3B (Hk 16, Hv 32, D 128). */
const tool_model *tool_model_default(void);

#endif
