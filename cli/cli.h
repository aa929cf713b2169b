/* cli: the batch front end's shared pieces: exit statuses (README.md, "Exit statuses"), usage
 * errors, JSON output (--json, -o FILE) and the commands' entry points. The options of
 * every command are tables (cli_opts.h). */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"

/* Exit statuses shared by every subcommand. */
enum {
    CLI_OK = 0,
    CLI_THRESHOLDS = 1, /* thresholds violated / lint warnings */
    CLI_FAILED = 2,     /* failed flows / lint errors */
    CLI_USAGE = 64,     /* EX_USAGE */
    CLI_DATAERR = 65,   /* EX_DATAERR */
    CLI_NOINPUT = 66,   /* EX_NOINPUT */
    CLI_UNAVAILABLE = 69,
    CLI_SOFTWARE = 70,
    CLI_CANTCREAT = 73,
    CLI_NOPERM = 77,
};

/* Print "fabtop: MESSAGE" on stderr and return the sysexits status for err. */
int cli_fail(const struct ft_err *err);
/* Print a usage error and return 64. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Before long work whose document goes to -o PATH: can PATH be written (common/atomicfile.h:
 * a regular file or nothing, in an existing directory)? 0, or one line on stderr and 73. It
 * creates and truncates nothing. */
int cli_check_output(const char *path);
/* Save doc atomically to path. If that fails: one line saying why, then the document is saved
 * to a new fallback file (jsonutil_save_fallback in common/jsonutil.h), and a second line
 * names it; returns 73 (also when saved there).
 * 0 when saved to path. kind: "results", "topo", "counters", "compare". */
int cli_save_json(const cJSON *doc, const char *path, const char *kind);
/* Emit a JSON document: on stdout when json, and to out_path (cli_save_json) when set. */
int cli_emit_json(const cJSON *doc, bool json, const char *out_path, const char *kind);
void cli_print_version(void);
/* --textfile DIR (node_exporter's textfile collector): DIR exists, is a directory this user
 * may write, and DIR/file could be written (cli_check_output). 0, or one line on stderr and
 * 73. */
int cli_check_textfile_dir(const char *dir, const char *file);
/* Write text as DIR/file atomically (common/atomicfile.h). 0 or -errno with err. */
int cli_write_textfile(const char *dir, const char *file, const char *text, struct ft_err *err);

struct mix;
/* `fabtop run`'s mix from its command line as the run builds it (--mix, the setup form's
 * knobs --endpoint, --transport, --concurrency, --senders, --neighbours, then --size,
 * --duration, --nccl): 0, or the exit status after one line saying why. For tests. */
int cli_run_mix(int argc, char **argv, struct mix *m);

/* Each command's entry point (its table: cli_opts.h). */
int cli_topo_main(int argc, char **argv);
int cli_serve_main(int argc, char **argv);
int cli_run_main(int argc, char **argv);
int cli_explore_main(int argc, char **argv);
int cli_compare_main(int argc, char **argv);
int cli_report_main(int argc, char **argv);
int cli_counters_main(int argc, char **argv);

#endif
