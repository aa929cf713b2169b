/* cli_common: error printing, JSON output and version for the subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomicfile.h"
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

int cli_check_output(const char *path)
{
    struct ft_err err = {0};
    if (atomicfile_check(path, &err) < 0) {
        fprintf(stderr, "fabtop: %s\n", err.msg);
        return CLI_CANTCREAT;
    }
    return CLI_OK;
}

/* Save doc to a new file named after kind and the time in dir; its path in out. */
static int save_fallback(const cJSON *doc, const char *dir, const char *kind, char *out, size_t len)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(out, len, "%s/fabtop-%s-%s-%ld.json", dir, kind, stamp, (long)getpid());
    struct stat st;
    if (lstat(out, &st) == 0)
        return -EEXIST; /* never replace anything */
    struct ft_err err = {0};
    return jsonutil_save(out, doc, true, &err);
}

int cli_save_fallback(const cJSON *doc, const char *kind, char *out, size_t len)
{
    char cwd[1024];
    const char *tmpdir = getenv("TMPDIR");
    const char *dirs[] = {getcwd(cwd, sizeof(cwd)), tmpdir && *tmpdir ? tmpdir : "/tmp"};
    int rc = -ENOENT;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (dirs[i] && (rc = save_fallback(doc, dirs[i], kind, out, len)) == 0)
            return 0;
    return rc;
}

int cli_save_json(const cJSON *doc, const char *path, const char *kind)
{
    struct ft_err err = {0};
    if (jsonutil_save(path, doc, true, &err) == 0)
        return CLI_OK;
    fprintf(stderr, "fabtop: %s\n", err.msg);
    char fallback[1200];
    if (cli_save_fallback(doc, kind, fallback, sizeof(fallback)) == 0)
        fprintf(stderr, "fabtop: the %s document is saved in %s instead\n", kind, fallback);
    else
        fprintf(stderr,
                "fabtop: the %s document could not be saved anywhere else either (the current "
                "directory, $TMPDIR or /tmp)\n",
                kind);
    return CLI_CANTCREAT;
}

int cli_emit_json(const cJSON *doc, bool json, const char *out_path, const char *kind)
{
    if (json) {
        char *text = cJSON_Print(doc);
        if (!text)
            return CLI_SOFTWARE;
        fputs(text, stdout);
        fputc('\n', stdout);
        cJSON_free(text);
    }
    return out_path ? cli_save_json(doc, out_path, kind) : CLI_OK;
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
