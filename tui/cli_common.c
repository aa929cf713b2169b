/* cli_common: error printing, JSON output and version for the subcommands. */
#include "tui/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonutil.h"
#include "topology/topo_xmlchild.h"

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

const char *cli_xml_helper(void)
{
    static char path[4096];
    const char *env = getenv("FABTOP_XML_HELPER");
    if (env && env[0])
        return env;
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n > 0) {
        path[n] = '\0';
        char *slash = strrchr(path, '/');
        if (slash && (size_t)(slash - path) + sizeof("/" TOPO_XMLCHILD_NAME) <= sizeof(path)) {
            strcpy(slash + 1, TOPO_XMLCHILD_NAME);
            if (access(path, X_OK) == 0)
                return path;
        }
    }
    snprintf(path, sizeof(path), "%s/%s", FABTOP_LIBEXEC_DIR, TOPO_XMLCHILD_NAME);
    if (access(path, X_OK) == 0)
        return path;
    return NULL;
}

int cli_topo_load(struct topo_load_opts *lo, struct topo_model **out, struct ft_err *err)
{
    lo->xml_helper = cli_xml_helper();
    int rc = topo_load(lo, out, err);
    if (rc == 0 && !lo->xml_helper && (*out)->source == TOPO_SRC_XML)
        topo_model_note(*out, "the XML was parsed inside fabtop: the " TOPO_XMLCHILD_NAME
                              " helper is not beside the fabtop binary nor in " FABTOP_LIBEXEC_DIR
                              ", so a malformed file could crash fabtop");
    return rc;
}
