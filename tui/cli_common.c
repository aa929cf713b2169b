/* cli_common: error printing, JSON output and version for the subcommands. */
#include "tui/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"

int cli_fail(const struct ft_err *err)
{
    fprintf(stderr, "fabtop: %s\n", err->msg[0] ? err->msg : strerror(-err->code));
    return ft_err_exit_status(err->code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fabtop %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'fabtop %s --help'.\n", cmd);
    return CLI_USAGE;
}

int cli_bad_option(const char *cmd, char **argv, const char *shortopts)
{
    const char *opt = argv[optind - 1];
    if (optopt && (!opt || strncmp(opt, "--", 2))) {
        const char *k = strchr(shortopts, optopt);
        return cli_usage_error(cmd, "option -%c %s", optopt,
                               k && k[1] == ':' ? "needs an argument" : "is unknown");
    }
    return cli_usage_error(cmd, "unknown option or missing argument: '%s'", opt ? opt : "?");
}

int cli_emit_json(const cJSON *doc, bool json, const char *out_path)
{
    if (json) {
        char *text = cJSON_Print(doc);
        if (!text)
            return CLI_SOFTWARE;
        fputs(text, stdout);
        fputc('\n', stdout);
        cJSON_free(text);
    }
    if (out_path) {
        struct ft_err err = {0};
        if (jsonutil_save(out_path, doc, true, &err) < 0) {
            fprintf(stderr, "fabtop: %s\n", err.msg);
            return CLI_CANTCREAT;
        }
    }
    return CLI_OK;
}

void cli_print_version(void)
{
    printf("fabtop %s\n", FABTOP_VERSION);
}
