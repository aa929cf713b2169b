/* roundtrip: reads each results document through the model (results_json_read) and writes
 * it back (results_json_write, printed as fabtop saves it); the bytes must be those of the
 * file. Usage: roundtrip [--parsed] FILE... With --parsed (documents another program
 * re-serialised, such as the fuzz corpus) the bytes compared are those cJSON prints of the
 * parsed file: the model must lose nothing the parse holds. Exit 0 all identical, 1 a
 * difference (the first differing byte shown), 65 a file the reader refused (its one line).
 * A sweep's document (results_sweep_is) goes through the sweep's reader and writer instead. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "engine/results/results_json.h"
#include "engine/results/results_sweep.h"

static int one(const char *path, bool parsed)
{
    char *text;
    size_t len;
    struct ft_err err = {0};
    cJSON *j;
    if (jsonutil_slurp(path, &text, &len, JSONUTIL_MAX_BYTES, &err) < 0 ||
        jsonutil_parse(text, len, path, &j, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 65;
    }
    struct results_doc d;
    struct results_sweep s;
    cJSON *w = NULL;
    if (results_sweep_is(j) ? results_sweep_read(j, path, &s, &err) < 0
                            : results_json_read(j, path, &d, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        cJSON_Delete(j);
        free(text);
        return 65;
    }
    if (results_sweep_is(j)) {
        w = results_sweep_write(&s);
        results_sweep_free(&s);
    } else {
        w = results_json_write(&d);
        results_doc_free(&d);
    }
    /* fabtop saves pretty-printed documents with a newline; the fuzz corpus holds compact
     * ones: compare in the file's own form. */
    bool compact = len > 1 && text[1] == '"';
    char *out = compact ? cJSON_PrintUnformatted(w) : cJSON_Print(w);
    cJSON_Delete(w);
    if (parsed) {
        free(text);
        text = compact ? cJSON_PrintUnformatted(j) : cJSON_Print(j);
        len = strlen(text);
    }
    cJSON_Delete(j);
    size_t n = strlen(out);
    bool nl = len > 0 && text[len - 1] == '\n';
    int rc = 0;
    if (n + nl != len || memcmp(out, text, n) || (nl && text[n] != '\n')) {
        size_t i = 0, line = 1;
        while (i < n && i < len && out[i] == text[i])
            line += out[i++] == '\n';
        fprintf(stderr,
                "%s: differs after the round trip at byte %zu (line %zu): file \"%.60s\", "
                "written \"%.60s\"\n",
                path, i, line, text + i, out + i);
        rc = 1;
    }
    free(out);
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    bool parsed = argc > 1 && !strcmp(argv[1], "--parsed");
    for (int i = 1 + parsed; i < argc; i++) {
        int r = one(argv[i], parsed);
        if (r > rc)
            rc = r;
    }
    return rc;
}
