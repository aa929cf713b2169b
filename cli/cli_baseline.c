/* cli_baseline: a fabric's saved baselines, one results document each under the user's data
 * directory ($XDG_DATA_HOME/fabtop/baselines, else ~/.local/share/fabtop/baselines; root
 * too: never a system path), and the judgement of a run (causes, reference rows). */
#include "cli/cli_baseline.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_opts.h"
#include "common/datadir.h"
#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "engine/judge/judge.h"
#include "engine/results/compare.h"
#include "engine/results/results_json.h"
#include "text/judge_text.h"
#include "topology/topo_json.h"
#include "topology/topo_refs.h"

struct baseline_args {
    bool json;
};

static const struct cli_opt baseline_opts[] = {
    {"json", 0, CLI_ARG_NONE, NULL, "list: print the list as JSON", CLI_V_SET,
     .off = offsetof(struct baseline_args, json)},
};

const struct cli_command cli_baseline_command = {
    .name = "baseline",
    .summary = "keep a result as this fabric's reference; list and remove them",
    .synopsis =
        "Usage: fabtop baseline save NAME [RESULTS.json]\n"
        "       fabtop baseline list [--json]\n"
        "       fabtop baseline rm NAME\n"
        "Keep a saved result as this fabric's baseline for its mix and conditions. Without\n"
        "RESULTS.json, save takes the newest fabtop results file (*.json) in the current\n"
        "directory. `fabtop run` then shows each headline figure as a ratio to the baseline\n"
        "of the same mix (or --baseline NAME), naming conditions that make it unfair.\n"
        "Baselines live in $XDG_DATA_HOME/fabtop/baselines (else\n"
        "~/.local/share/fabtop/baselines).\n",
    .opts = baseline_opts,
    .nopts = sizeof(baseline_opts) / sizeof(baseline_opts[0]),
    .epilogue = "NAME: 1-64 of A-Z a-z 0-9 . _ -, not starting with '.'.\n"
                "Exit status: 0 ok, 64 usage or bad name, 65 not a fabtop results file,\n"
                "66 missing file or baseline, 73 cannot write the baseline.\n",
    .help_col = 22,
    .main = cli_baseline_main,
};

/* ---- the store ---- */

static int store_dir(char *buf, size_t len)
{
    const char *x = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
    int n;
    if (x && x[0] == '/')
        n = snprintf(buf, len, "%s/fabtop/baselines", x);
    else if (h && h[0] == '/')
        n = snprintf(buf, len, "%s/.local/share/fabtop/baselines", h);
    else
        return -ENOENT;
    return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", s[i]))
            return false;
    return true;
}

static int bad_name(const char *s)
{
    fprintf(stderr,
            "fabtop: baseline name '%.80s' is not 1-64 of A-Z a-z 0-9 . _ - (not starting "
            "with '.'): choose another\n",
            s);
    return CLI_USAGE;
}

/* NAME's file in the store: 0, or the exit status after one line (a bad name, no data
 * directory). */
static int path_of(const char *name, char *buf, size_t len)
{
    char dir[1024];
    if (!name_ok(name))
        return bad_name(name);
    if (store_dir(dir, sizeof(dir)) < 0) {
        fprintf(stderr, "fabtop: no data directory: set XDG_DATA_HOME or HOME\n");
        return CLI_NOINPUT;
    }
    snprintf(buf, len, "%s/%s.json", dir, name);
    return 0;
}

static int mkdirs(const char *dir)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0700) < 0 && errno != EEXIST)
                return -errno;
            *s = '/';
        }
    return mkdir(p, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

/* Read a results document (a run); 0 or the exit status after one line. */
static int load_run(const char *path, const char *what, struct results_doc *d)
{
    struct ft_err err = {0};
    cJSON *j = NULL;
    memset(d, 0, sizeof(*d));
    if (jsonutil_load(path, &j, &err) < 0)
        return cli_fail(&err);
    int rc = results_json_read(j, what, d, &err);
    cJSON_Delete(j);
    if (rc < 0 || d->nruns < 1) {
        results_doc_free(d);
        if (rc < 0)
            return cli_fail(&err);
        fprintf(stderr, "fabtop: %s: holds no run\n", what);
        return CLI_DATAERR;
    }
    return 0;
}

/* The newest *.json in dir that reads as a results document. */
static int newest_result(const char *dir, char *buf, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    double best = -1;
    buf[0] = 0;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char p[1024];
        struct stat st;
        if (n < 6 || strcmp(e->d_name + n - 5, ".json"))
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        double t = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
        if (t <= best)
            continue;
        cJSON *j = NULL;
        struct ft_err err = {0};
        if (jsonutil_load(p, &j, &err) == 0) {
            const char *fmt = jsonutil_str(j, "format");
            if (fmt && !strcmp(fmt, RESULTS_FORMAT)) {
                best = t;
                snprintf(buf, len, "%s", p);
            }
        }
        cJSON_Delete(j);
    }
    if (d)
        closedir(d);
    return buf[0] ? 0 : -ENOENT;
}

static int do_save(const char *name, const char *file)
{
    char found[1024], path[1100], dir[1024];
    if (!name_ok(name))
        return bad_name(name);
    if (!file) {
        if (newest_result(".", found, sizeof(found)) < 0) {
            fprintf(stderr, "fabtop: no fabtop results file (*.json) in the current directory: "
                            "name one (fabtop baseline save NAME RESULTS.json)\n");
            return CLI_NOINPUT;
        }
        file = found;
    }
    struct results_doc d;
    int rc = load_run(file, file, &d);
    if (rc)
        return rc;
    if ((rc = path_of(name, path, sizeof(path))))
        goto out;
    store_dir(dir, sizeof(dir));
    struct ft_err err = {0};
    cJSON *j = results_json_write(&d);
    int m = mkdirs(dir);
    if (m < 0 || jsonutil_save(path, j, true, &err) < 0) {
        fprintf(stderr, "fabtop: cannot write baseline %s: %s\n", path,
                m < 0 ? strerror(-m) : err.msg);
        rc = CLI_CANTCREAT;
    } else {
        struct compare_brief b;
        compare_run_brief(&d.runs[0], &b);
        printf("baseline %s saved from %s (mix %s, %s) in %s\n", name, file,
               b.mix[0] ? b.mix : "n/a", b.started_at[0] ? b.started_at : "n/a", path);
    }
    cJSON_Delete(j);
out:
    results_doc_free(&d);
    return rc;
}

/* The names in the store, sorted; NULL-terminated, caller frees each and the array. */
static char **store_names(int *n)
{
    char dir[1024];
    *n = 0;
    char **v = calloc(1, sizeof(char *));
    DIR *d = store_dir(dir, sizeof(dir)) == 0 ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json"))
            continue;
        char nm[80];
        snprintf(nm, sizeof(nm), "%.*s", (int)(l - 5), e->d_name);
        if (!name_ok(nm))
            continue;
        v = realloc(v, (size_t)(*n + 2) * sizeof(char *));
        v[(*n)++] = strdup(nm);
        v[*n] = NULL;
    }
    if (d)
        closedir(d);
    for (int i = 1; i < *n; i++)
        for (int k = i; k > 0 && strcmp(v[k - 1], v[k]) > 0; k--) {
            char *t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    return v;
}

static void names_free(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static int do_list(bool json)
{
    int n;
    char **v = store_names(&n);
    cJSON *a = json ? cJSON_CreateArray() : NULL;
    if (!json && n == 0)
        printf("no baselines (fabtop baseline save NAME RESULTS.json keeps one)\n");
    else if (!json)
        printf("%-24s %-24s %-26s %12s %12s\n", "name", "mix", "started (UTC)", "goodput Gb/s",
               "p99 us");
    for (int i = 0; i < n; i++) {
        char path[1100], g[24] = "n/a", p[24] = "n/a";
        path_of(v[i], path, sizeof(path));
        cJSON *j = NULL;
        struct ft_err err = {0};
        struct compare_brief b = {0};
        bool ok = jsonutil_load(path, &j, &err) == 0;
        if (ok)
            compare_brief(j, &b);
        cJSON_Delete(j);
        if (b.have_gbps)
            snprintf(g, sizeof(g), "%.3f", b.gbps);
        if (b.have_p99)
            snprintf(p, sizeof(p), "%.1f", b.p99_us);
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", v[i]);
            cJSON_AddStringToObject(o, "mix", b.mix);
            cJSON_AddStringToObject(o, "started_at", b.started_at);
            cJSON_AddStringToObject(o, "path", path);
            cJSON_AddItemToArray(a, o);
        } else {
            printf("%-24s %-24s %-26s %12s %12s\n", v[i], b.mix[0] ? b.mix : "(unreadable)",
                   b.started_at[0] ? b.started_at : "n/a", g, p);
        }
    }
    if (json) {
        char *t = cJSON_Print(a);
        puts(t);
        cJSON_free(t);
        cJSON_Delete(a);
    }
    names_free(v);
    return CLI_OK;
}

static int do_rm(const char *name)
{
    char path[1100];
    int rc = path_of(name, path, sizeof(path));
    if (rc)
        return rc;
    if (unlink(path) < 0) {
        int e = errno;
        fprintf(stderr, "fabtop: baseline %s: %s (fabtop baseline list shows them)\n", name,
                e == ENOENT ? "no such baseline" : strerror(e));
        return e == ENOENT ? CLI_NOINPUT : e == EACCES || e == EPERM ? CLI_NOPERM : CLI_CANTCREAT;
    }
    printf("baseline %s removed\n", name);
    return CLI_OK;
}

int cli_baseline_main(int argc, char **argv)
{
    struct baseline_args o = {0};
    int first, prc = cli_parse_args(&cli_baseline_command, argc, argv, &o, &first);
    if (prc >= 0)
        return prc;
    int n = argc - first;
    const char *verb = n > 0 ? argv[first] : NULL;
    if (!verb)
        return cli_usage_error("baseline", "needs save, list or rm");
    if (!strcmp(verb, "save")) {
        if (n < 2 || n > 3)
            return cli_usage_error("baseline", "save needs NAME and at most one RESULTS.json");
        return do_save(argv[first + 1], n == 3 ? argv[first + 2] : NULL);
    }
    if (!strcmp(verb, "list")) {
        if (n != 1)
            return cli_usage_error("baseline", "list takes no operands");
        return do_list(o.json);
    }
    if (!strcmp(verb, "rm")) {
        if (n != 2)
            return cli_usage_error("baseline", "rm needs one NAME");
        return do_rm(argv[first + 1]);
    }
    return cli_usage_error("baseline", "unknown action '%.40s': use save, list or rm", verb);
}

/* ---- a run against a baseline ---- */

int cli_baseline_check(const char *name)
{
    char path[1100];
    int rc = path_of(name, path, sizeof(path));
    if (rc)
        return rc;
    if (access(path, F_OK) < 0) {
        fprintf(stderr, "fabtop: no baseline %s (fabtop baseline list shows them)\n", name);
        return CLI_NOINPUT;
    }
    struct results_doc d;
    rc = load_run(path, path, &d);
    if (!rc)
        results_doc_free(&d);
    return rc;
}

/* The baseline whose mix name is the run's, first by name. */
static bool baseline_of_mix(const char *mix, char *name, size_t len)
{
    int n;
    char **v = store_names(&n);
    bool found = false;
    for (int i = 0; i < n && !found && mix[0]; i++) {
        char path[1100];
        path_of(v[i], path, sizeof(path));
        cJSON *j = NULL;
        struct ft_err err = {0};
        struct compare_brief b = {0};
        if (jsonutil_load(path, &j, &err) == 0)
            compare_brief(j, &b);
        cJSON_Delete(j);
        if (!strcmp(b.mix, mix)) {
            snprintf(name, len, "%s", v[i]);
            found = true;
        }
    }
    names_free(v);
    return found;
}

void cli_baseline_show(struct strbuf *sb, const struct results_run *run, const char *name)
{
    char auto_name[80], path[1100];
    if (!name) {
        struct compare_brief b;
        compare_run_brief(run, &b);
        if (!baseline_of_mix(b.mix, auto_name, sizeof(auto_name)))
            return;
        name = auto_name;
    }
    struct results_doc d;
    if (path_of(name, path, sizeof(path)) || load_run(path, path, &d))
        return;
    struct compare_result cr;
    compare_runs(&d.runs[0], run, &cr);
    judge_text_baseline(sb, name, &cr);
    compare_free(&cr);
    results_doc_free(&d);
}

/* ---- the judgement ---- */

static void load_refs(struct topo_refs *refs)
{
    char dirs[DATADIR_MAX][DATADIR_LEN], path[600];
    memset(refs, 0, sizeof(*refs));
    int n = datadir_search("refs", FABTOP_REFS_SOURCE_DIR, dirs);
    for (int i = 0; i < n; i++) {
        struct ft_err err = {0};
        snprintf(path, sizeof(path), "%s/reference.json", dirs[i]);
        if (access(path, R_OK) == 0 && topo_refs_load(path, refs, &err) == 0)
            return;
    }
}

void cli_judge_fill(struct results_run *run, const struct topo_model *topo)
{
    struct topo_model *own = NULL;
    struct ft_err err = {0};
    if (!topo && run->topology_st == RESULTS_SET) {
        own = topo_model_new();
        if (topo_json_to_model(run->topology, own, "the run's topology", &err) < 0) {
            topo_model_free(own);
            own = NULL;
        }
    }
    const struct topo_model *t = topo ? topo : own;
    struct judge_causes c = {0};
    judge_run(run, t, &c);
    if (c.flows_seen > 0)
        judge_to_results(&c, &run->causes);
    judge_causes_free(&c);
    struct topo_refs refs;
    load_refs(&refs);
    struct results_ref_matches m = {0};
    judge_refs(run, t, &refs, &m);
    if (m.n > 0) {
        results_ref_matches_clear(&run->references);
        run->references = m;
    } else {
        results_ref_matches_clear(&m);
    }
    topo_refs_free(&refs);
    topo_model_free(own);
}
