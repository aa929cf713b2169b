/* cli: the batch front end's shared pieces: subcommand table, common options
 * (--json, -o FILE, --input, --sysfs-root), exit statuses (DESIGN.md conventions). */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/ft_err.h"
#include "topology/topo_load.h"

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

struct cli_cmd {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
};

/* Print "fabtop: MESSAGE" on stderr and return the sysexits status for err. */
int cli_fail(const struct ft_err *err);
/* Print a usage error and return 64. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After getopt_long returned '?' or ':' (with opterr = 0): name the bad option. */
int cli_bad_option(const char *cmd, char **argv, const char *shortopts);
/* Emit a JSON document: on stdout when json, and atomically to out_path when set. */
int cli_emit_json(const cJSON *doc, bool json, const char *out_path);
void cli_print_version(void);
/* The fabtop-hwloc-xml helper: $FABTOP_XML_HELPER, else beside this binary (the build
 * tree), else in the installed libexec directory; NULL when none is there. */
const char *cli_xml_helper(void);
/* topo_load with the XML helper filled in; without a helper an XML is parsed in this
 * process and the model gets a note saying that a malformed file can crash it. */
int cli_topo_load(struct topo_load_opts *lo, struct topo_model **out, struct ft_err *err);

int cli_topo_main(int argc, char **argv);
int cli_serve_main(int argc, char **argv);
int cli_run_main(int argc, char **argv);
int cli_explore_main(int argc, char **argv);
int cli_compare_main(int argc, char **argv);
int cli_report_main(int argc, char **argv);
int cli_counters_main(int argc, char **argv);

#endif
