/* cli_common: error printing, JSON output and version for the subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomicfile.h"
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

int cli_check_output(const char *path)
{
    struct ft_err err = {0};
    if (atomicfile_check(path, &err) < 0) {
        fprintf(stderr, "fabtop: %s\n", err.msg);
        return CLI_CANTCREAT;
    }
    return CLI_OK;
}

int cli_save_json(const cJSON *doc, const char *path, const char *kind)
{
    struct ft_err err = {0};
    if (jsonutil_save(path, doc, true, &err) == 0)
        return CLI_OK;
    fprintf(stderr, "fabtop: %s\n", err.msg);
    char fallback[1200];
    if (jsonutil_save_fallback(doc, kind, fallback, sizeof(fallback)) == 0)
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

int cli_check_textfile_dir(const char *dir, const char *file)
{
    struct stat st;
    if (stat(dir, &st) < 0) {
        fprintf(stderr,
                "fabtop: --textfile %s: %s (create it, or give the directory of node_exporter's "
                "--collector.textfile.directory)\n",
                dir, errno == ENOENT ? "no such directory" : strerror(errno));
        return CLI_CANTCREAT;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr,
                "fabtop: --textfile %s: not a directory (give the directory the file "
                "goes in)\n",
                dir);
        return CLI_CANTCREAT;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        fprintf(stderr,
                "fabtop: --textfile %s: no permission to write there (run as a user who may, "
                "or choose another directory)\n",
                dir);
        return CLI_CANTCREAT;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return cli_check_output(path);
}

int cli_write_textfile(const char *dir, const char *file, const char *text, struct ft_err *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    /* atomicfile writes "DIR/.fabtop.prom.tmp.PID.N" and renames it into place: the
     * temporary name does not end in .prom, so the textfile collector never reads it. */
    return atomicfile_write(path, text, strlen(text), err);
}
