/* app: explorer state, the event loop, global keys, header/tabs/status drawing, and the
 * glue between views and the engine (start/stop a run, take snapshots, save results; start
 * a drill, take its documents, save it). */
#include "tui/app.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomicfile.h"
#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "engine/results/results_sweep.h"
#include "topology/topo_pipeline.h"
#include "tui/config.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void app_message(struct app *a, enum theme_role r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof(a->msg), fmt, ap);
    va_end(ap);
    a->msg_role = r;
    a->msg_until_ns = now_ns() + 4000000000ull;
    a->dirty = true;
}

enum ui_order_step app_order_key(struct app *a, struct ui_order *o, int ch, const char *what)
{
    enum ui_order_step step = ui_order_key(o, ch);
    if (step == UI_ORDER_SORT)
        app_message(a, ROLE_INFO, "%s in order of %s (> next, < previous).", what,
                    o->names ? o->names[o->sort] : "?");
    return step;
}

void app_switch(struct app *a, enum view_id v)
{
    if (v < 0 || v >= VIEW_COUNT || !app_views[v])
        return;
    if (v != a->view)
        a->prev = a->view;
    a->view = v;
    a->focus = 0;
    if (app_views[v]->enter)
        app_views[v]->enter(a);
    a->dirty = true;
}

static void load_topology(struct app *a)
{
    /* The pipeline `fabtop topo` runs, without counter samples (no wait at start-up). */
    struct topo_pipeline_opts po = {.load = {.input = a->o.input, .sysfs_root = a->o.sysfs_root},
                                    .lint = true};
    struct topo_pipeline tp;
    struct ft_err err = {0};
    if (topo_pipeline_load(&po, &tp, &err) < 0) {
        snprintf(a->topo_error, sizeof(a->topo_error), "%s", err.msg);
        tp.m = topo_model_new();
    }
    topo_pipeline_analyse(&po, &tp);
    a->topo = tp.m;
    a->aff = tp.aff;
    a->findings = tp.findings;
    topo_err_samples_free(&tp.errs);
}

int app_init(struct app *a, const struct app_opts *o, struct ft_err *err)
{
    memset(a, 0, sizeof(*a));
    a->o = *o;
    theme_default(&a->theme);
    struct config cfg;
    config_load(o->config_dir, &cfg);
    const char *theme = o->theme ? o->theme : cfg.theme[0] ? cfg.theme : NULL;
    if (theme) {
        struct ft_err terr = {0};
        if (theme_load(theme, &a->theme, &terr) < 0) {
            /* One clear message, and the default theme. */
            theme_default(&a->theme);
            app_message(a, ROLE_WARN, "using the default theme: %s", terr.msg);
        }
    }
    char cfg_error[sizeof(cfg.error)];
    snprintf(cfg_error, sizeof(cfg_error), "%s", cfg.error);
    config_free(&cfg);
    load_topology(a);
    bool sweep = false;
    if (o->results) {
        /* A sweep's document opens in the sweep view, which reads it; read once here so that
         * a bad one is refused at the start, as a bad run's results are. */
        cJSON *j = NULL;
        struct results_sweep sw;
        if (jsonutil_load(o->results, &j, NULL) == 0 && results_sweep_is(j)) {
            sweep = true;
            int rc = results_sweep_read(j, o->results, &sw, err);
            cJSON_Delete(j);
            if (rc < 0) {
                topo_affinity_free(&a->aff);
                topo_findings_free(&a->findings);
                topo_model_free(a->topo);
                return rc;
            }
            results_sweep_free(&sw);
            snprintf(a->sweep_path, sizeof(a->sweep_path), "%s", o->results);
        } else {
            cJSON_Delete(j);
        }
    }
    if (o->attach) {
        sweep = true;
        a->sweep_follow = true;
        snprintf(a->sweep_path, sizeof(a->sweep_path), "%s", o->attach);
    }
    if (o->results && !sweep) {
        struct results_doc doc;
        int rc = results_doc_load(o->results, &doc, err);
        if (rc == 0) {
            a->results = results_json_write(&doc);
            a->results_run = doc.runs[0]; /* the run moves into the app */
            free(doc.runs);
            a->results_run_ok = true;
            a->results_run_of = a->results;
        }
        if (rc < 0) {
            topo_affinity_free(&a->aff);
            topo_findings_free(&a->findings);
            topo_model_free(a->topo);
            return rc;
        }
        snprintf(a->results_path, sizeof(a->results_path), "%s", o->results);
    }
    for (int v = 0; v < VIEW_COUNT; v++)
        if (app_views[v] && app_views[v]->init)
            app_views[v]->init(a);
    a->view = sweep ? VIEW_SWEEP : o->results && app_views[VIEW_RESULTS] ? VIEW_RESULTS : VIEW_TOPO;
    if (app_views[a->view]->enter)
        app_views[a->view]->enter(a);
    if (cfg_error[0]) {
        /* ~ for the home directory, so that the line and column fit on 80 columns. */
        const char *home = getenv("HOME"), *rest = cfg_error;
        size_t hl = home ? strlen(home) : 0;
        bool tilde = hl > 1 && !strncmp(cfg_error, home, hl) && cfg_error[hl] == '/';
        if (tilde)
            rest += hl;
        app_message(a, ROLE_WARN, "settings ignored, %s%s", tilde ? "~" : "", rest);
    }
    if (a->topo_error[0])
        app_message(a, ROLE_ERROR, "topology: %s", a->topo_error);
    a->dirty = true;
    return 0;
}

void app_fini(struct app *a)
{
    if (a->runner) {
        runner_stop(a->runner);
        runner_wait(a->runner);
        runner_free(a->runner);
    }
    app_drill_free(a->drill); /* stopped, its thread joined */
    runner_snapshot_release(a->snap);
    cJSON_Delete(a->results);
    results_run_free(&a->results_run);
    if (a->have_run_mix)
        mix_free(&a->run_mix);
    for (int v = 0; v < VIEW_COUNT; v++)
        if (app_views[v] && app_views[v]->fini)
            app_views[v]->fini(a);
    topo_affinity_free(&a->aff);
    topo_findings_free(&a->findings);
    topo_model_free(a->topo);
}

/* ---- runs ---- */

static void check_results_dir(struct app *a);

int app_start_run(struct app *a, const struct mix *m, const char *peer, struct ft_err *err)
{
    if (a->runner && !runner_done(a->runner))
        return ft_err_set(err, -EBUSY, "a test is running: stop it first (s in the live view)");
    if (a->drill && app_drill_running(a->drill))
        return ft_err_set(err, -EBUSY, "a drill is running: s in the live view stops it (F4 live)");
    if (a->runner) {
        runner_free(a->runner);
        a->runner = NULL;
    }
    if (a->have_run_mix)
        mix_free(&a->run_mix);
    mix_copy(&a->run_mix, m);
    a->have_run_mix = true;
    struct runner_opts ro = {.mix = &a->run_mix,
                             .peer_override = peer,
                             .key_file = a->run_key_file[0] ? a->run_key_file : NULL,
                             .topo = a->topo,
                             .pin = true,
                             .playback = &a->playback};
    int rc = runner_start(&ro, &a->runner, err);
    if (rc < 0)
        return rc;
    /* "Start paused" (Space on the fabric view before a run) was set for this run: a sim
     * run takes it (the runner copied it), and the one after it plays unless asked again. */
    for (int i = 0; i < m->nflows; i++)
        if (!strcmp(m->flows[i].transport, "sim"))
            a->playback.paused = false;
    cJSON_Delete(a->results);
    a->results = NULL;
    app_results_run(a); /* drops the model of the results deleted */
    a->results_path[0] = '\0';
    a->display_paused = false;
    /* The live view shows the run now; the drill before it goes. */
    app_drill_free(a->drill);
    a->drill = NULL;
    app_switch(a, VIEW_LIVE);
    app_message(a, ROLE_INFO, "running %s", m->name);
    check_results_dir(a);
    return 0;
}

int app_start_drill(struct app *a, const struct app_drill_opts *o, struct ft_err *err)
{
    if (a->runner && !runner_done(a->runner))
        return ft_err_set(err, -EBUSY, "a test is running: stop it first (s in the live view)");
    if (a->drill && app_drill_running(a->drill))
        return ft_err_set(err, -EBUSY, "a drill is running: s in the live view stops it (F4 live)");
    /* rank-loss: the victim agent is this same fabtop, as `fabtop serve` */
    struct app_drill_opts oo = *o;
    char self[4096] = "";
    if (!oo.agent_exe && a->o.agent_exe) {
        oo.agent_exe = a->o.agent_exe;
    } else if (!oo.agent_exe) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        self[n > 0 ? n : 0] = '\0';
        oo.agent_exe = self;
    }
    struct app_drill *d;
    int rc = app_drill_start(&oo, &d, err);
    if (rc < 0)
        return rc;
    app_drill_free(a->drill);
    a->drill = d;
    app_switch(a, VIEW_LIVE);
    app_message(a, ROLE_INFO, "drilling %s: %s at %g s for %g s, %d repetition%s", o->mix->name,
                drill_fault_str(o->fault), d->at_s, d->for_s, d->repeat, d->repeat == 1 ? "" : "s");
    return 0;
}

void app_stop_run(struct app *a)
{
    if (a->runner && !runner_done(a->runner)) {
        runner_stop(a->runner);
        app_message(a, ROLE_WARN, "stopping: the results keep what was measured");
    }
}

/* $XDG_DATA_HOME/fabtop/SUB (or ~/.local/share/fabtop/SUB). */
static void data_dir(const char *sub, char *buf, size_t len)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, len, "%s/fabtop/%s", xdg, sub);
    else
        snprintf(buf, len, "%s/.local/share/fabtop/%s", home && *home ? home : "/tmp", sub);
}

void app_results_dir(char *buf, size_t len)
{
    data_dir("results", buf, len);
}

static int mkdir_p(const char *dir)
{
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* The results could not go where they should (err says why): a fallback file, so that a
 * measured run is not lost. */
static int save_elsewhere(struct app *a, struct ft_err *err)
{
    char why[sizeof(err->msg)], where[sizeof(a->results_path)];
    snprintf(why, sizeof(why), "%s", err->msg);
    int code = err->code;
    if (jsonutil_save_fallback(a->results, "results", where, sizeof(where)) < 0)
        return code;
    snprintf(a->results_path, sizeof(a->results_path), "%s", where);
    ft_err_clear(err);
    ft_err_set(err, code, "%.200s; saved to %s instead", why, where);
    return 1;
}

/* Can the results of a run be saved where w saves them? A warning now, not after the run. */
static void check_results_dir(struct app *a)
{
    char dir[768], probe[900];
    app_results_dir(dir, sizeof(dir));
    struct ft_err err = {0};
    int rc = mkdir_p(dir);
    if (rc < 0)
        ft_err_set(&err, rc, "%s: %s", dir, strerror(-rc));
    snprintf(probe, sizeof(probe), "%s/fabtop-check.json", dir);
    if (rc < 0 || atomicfile_check(probe, &err) < 0)
        app_message(a, ROLE_WARN,
                    "results cannot be saved in %s (%.160s): w will save them "
                    "elsewhere and say where",
                    dir, err.msg);
}

int app_save_results(struct app *a, const char *path, struct ft_err *err)
{
    if (!a->results)
        return ft_err_set(err, -ENODATA, "no results yet: run a test first (F2)");
    char buf[1024];
    if (!path) {
        char dir[768];
        app_results_dir(dir, sizeof(dir));
        int rc = mkdir_p(dir);
        if (rc < 0) {
            ft_err_set(err, rc, "%s: cannot create the results directory: %s", dir, strerror(-rc));
            return save_elsewhere(a, err);
        }
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        char stamp[32];
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        snprintf(buf, sizeof(buf), "%s/%s-%s.json", dir, stamp,
                 a->have_run_mix ? a->run_mix.name : "run");
        path = buf;
    }
    int rc = results_save(path, a->results, err);
    if (rc == 0) {
        snprintf(a->results_path, sizeof(a->results_path), "%s", path);
        return 0;
    }
    return save_elsewhere(a, err);
}

/* The drill's newest document, and at its end one line of what it found. */
static void poll_drill(struct app *a)
{
    struct app_drill *d = a->drill;
    if (!d || !app_drill_poll(d))
        return;
    a->dirty = true;
    if (!d->done)
        return;
    if (d->rc == -ECANCELED) {
        int kept = d->doc_ok ? d->doc.nreps : 0;
        app_message(a, ROLE_WARN, "drill stopped: %d repetition%s kept: w saves %s (F4)", kept,
                    kept == 1 ? "" : "s", kept == 1 ? "it" : "them");
        return;
    }
    if (d->rc < 0) {
        app_message(a, ROLE_ERROR, "drill failed: %s", d->error);
        return;
    }
    double broke = 0, never = 0, n = 0;
    if (d->doc_ok) {
        results_num_get(&d->doc.drills, &n);
        results_num_get(&d->doc.broke_bound, &broke);
        results_num_get(&d->doc.never_recovered, &never);
    }
    app_message(a, broke || never ? ROLE_ERROR : ROLE_OK,
                "drill finished: %.0f drill%s, %.0f broke a bound, %.0f never recovered: w saves "
                "it (F4)",
                n, n == 1 ? "" : "s", broke, never);
}

void app_drills_dir(char *buf, size_t len)
{
    data_dir("drills", buf, len);
}

void app_drill_mix_path(const char *name, char *buf, size_t len)
{
    char dir[768];
    app_drills_dir(dir, sizeof(dir));
    char file[128];
    snprintf(file, sizeof(file), "%s", name[0] ? name : "mix");
    for (char *p = file; *p; p++)
        if (*p == '/')
            *p = '-'; /* a preset of a folder, "sim/wan" */
    snprintf(buf, len, "%s/%s.mix.json", dir, file);
}

int app_save_drill_mix(const struct mix *m, double for_s, char *path, size_t len,
                       struct ft_err *err)
{
    char dir[768];
    app_drills_dir(dir, sizeof(dir));
    app_drill_mix_path(m->name, path, len);
    int rc = mkdir_p(dir);
    if (rc < 0)
        return ft_err_set(err, rc, "%s: cannot create the drills directory: %s", dir,
                          strerror(-rc));
    return app_drill_save_mix(m, for_s, path, err);
}

int app_save_drill(struct app *a, char *path, size_t len, struct ft_err *err)
{
    const cJSON *doc = a->drill ? a->drill->json : NULL;
    if (!doc)
        return ft_err_set(err, -ENODATA,
                          "no drill document yet: a drill writes one after each "
                          "repetition");
    char dir[768];
    app_drills_dir(dir, sizeof(dir));
    int rc = mkdir_p(dir);
    if (rc < 0) {
        ft_err_set(err, rc, "%s: cannot create the drills directory: %s", dir, strerror(-rc));
    } else {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        char stamp[32];
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        snprintf(path, len, "%s/%s-drill-%s.json", dir, stamp, a->drill->mix.name);
        rc = jsonutil_save(path, doc, true, err);
        if (rc == 0)
            return 0;
    }
    /* Not where it should go: a fallback file, so that what was measured is not lost. */
    char why[sizeof(err->msg)];
    snprintf(why, sizeof(why), "%s", err->msg);
    if (jsonutil_save_fallback(doc, "drill", path, len) < 0)
        return rc;
    ft_err_clear(err);
    ft_err_set(err, rc, "%.200s; saved to %s instead", why, path);
    return 1;
}

/* Take the newest snapshot (unless the display is paused) and the results at the end. */
void app_poll(struct app *a)
{
    poll_drill(a);
    if (!a->runner)
        return;
    char buf[64];
    while (read(runner_wake_fd(a->runner), buf, sizeof(buf)) > 0)
        ;
    if (!a->display_paused) {
        struct runner_snapshot *s = runner_snapshot(a->runner);
        if (!a->snap || s->gen != a->snap->gen) {
            runner_snapshot_release(a->snap);
            a->snap = s;
            a->dirty = true;
        } else {
            runner_snapshot_release(s);
        }
    }
    if (runner_done(a->runner) && !a->results) {
        const cJSON *res = runner_wait(a->runner);
        const struct results_doc *doc = runner_results(a->runner);
        if (res && doc) {
            a->results = cJSON_Duplicate(res, 1);
            results_run_free(&a->results_run);
            struct results_doc copy;
            results_doc_copy(doc, &copy);
            a->results_run_ok = copy.nruns > 0;
            if (copy.nruns) {
                a->results_run = copy.runs[0];
                free(copy.runs);
            }
            a->results_run_of = a->results;
            app_message(a, runner_status(a->runner) ? ROLE_ERROR : ROLE_OK,
                        "test finished%s: w saves the results",
                        runner_status(a->runner) ? " with a failed flow" : "");
        }
        if (!a->display_paused) {
            runner_snapshot_release(a->snap);
            a->snap = runner_snapshot(a->runner);
        }
        a->dirty = true;
    }
    for (int v = 0; v < VIEW_COUNT; v++)
        if (app_views[v] && app_views[v]->observe)
            app_views[v]->observe(a);
}

/* ---- drawing ---- */

static void draw_header(struct app *a, const struct layout *l)
{
    struct ui *u = &a->ui;
    char right[160] = "";
    if (a->drill && app_drill_running(a->drill)) {
        snprintf(right, sizeof(right), "drill %s %s: repetition %d/%d", a->drill->mix.name,
                 drill_fault_str(a->drill->fault), app_drill_current(a->drill), a->drill->repeat);
    } else if (a->snap && a->runner && !runner_done(a->runner)) {
        static const char *const ph[] = {"setup", "warm-up", "measuring", "teardown", "done"};
        /* Tenths for phases under 10 s ("0.3/0.5 s", not "0/0 s"). */
        int d = a->snap->phase_total_s < 10 ? 1 : 0;
        const struct fabric_snap *fab = a->snap->fabric;
        if (a->snap->phase_total_s <= 0 && fab && (fab->valid & FABRIC_SNAP_V_STATE))
            /* A simulated run ends with its operations, not a duration: its clock. */
            snprintf(right, sizeof(right), "%s %s: %s, simulated %.1f us%s",
                     a->have_run_mix ? a->run_mix.name : "", a->snap->phase_name,
                     ph[a->snap->run_phase], (double)fab->sim_now_ps / 1e6,
                     a->display_paused ? " [display paused]" : "");
        else if (a->snap->phase_total_s <= 0)
            snprintf(right, sizeof(right), "%s %s: %s %.1f s%s",
                     a->have_run_mix ? a->run_mix.name : "", a->snap->phase_name,
                     ph[a->snap->run_phase], a->snap->phase_elapsed_s,
                     a->display_paused ? " [display paused]" : "");
        else
            snprintf(right, sizeof(right), "%s %s: %s %.*f/%.*f s%s",
                     a->have_run_mix ? a->run_mix.name : "", a->snap->phase_name,
                     ph[a->snap->run_phase], d, a->snap->phase_elapsed_s, d, a->snap->phase_total_s,
                     a->display_paused ? " [display paused]" : "");
    }
    char left[256];
    snprintf(left, sizeof(left), " fabtop %s  %s%s%s", FABTOP_VERSION,
             a->topo->host.hostname[0] ? a->topo->host.hostname : "?",
             a->topo->snapshot[0] || a->topo->source_path[0] ? "  from " : "",
             a->topo->snapshot[0] ? a->topo->snapshot : a->topo->source_path);
    /* The run's status keeps the right end; the host and source are cut short before it,
     * with two blanks between. */
    int rw = ui_width(right);
    bool status = rw && rw + 2 < l->cols;
    ui_text_pad(u, l->header.y, 0, l->cols, ROLE_HEADER, "");
    ui_text(u, l->header.y, 0, status ? l->cols - rw - 3 : l->cols, ROLE_HEADER, left);
    if (status)
        ui_text(u, l->header.y, l->cols - rw - 1, rw, ROLE_HEADER, right);
}

/* The view whose function key is Fn (and digit n), or -1: one scheme for the tabs' order,
 * their labels, the function keys and the digits (htop's F1 Help first). */
static int view_of_fkey(int n)
{
    for (int v = 0; v < VIEW_COUNT; v++)
        if (app_views[v] && app_views[v]->fkey == n)
            return v;
    return -1;
}

static void draw_tabs(struct app *a, const struct layout *l)
{
    struct ui *u = &a->ui;
    ui_text_pad(u, l->tabs.y, 0, l->cols, ROLE_TAB, "");
    int x = 1;
    a->ntab_hits = 0;
    for (int k = 1; k <= 12; k++) {
        int vi = view_of_fkey(k);
        if (vi < 0)
            continue;
        enum view_id order_i = (enum view_id)vi;
        const struct view_ops *v = app_views[order_i];
        /* The sweep's tab only while a sweep is open (or shown). */
        if (order_i == VIEW_SWEEP && !a->sweep_path[0] && a->view != VIEW_SWEEP)
            continue;
        char t[48];
        snprintf(t, sizeof(t), " F%d %s ", v->fkey, v->name);
        ui_text(u, l->tabs.y, x, l->cols - x, order_i == a->view ? ROLE_TAB_ACTIVE : ROLE_TAB, t);
        if (a->ntab_hits < APP_MAX_HITS && x < l->cols)
            a->tab_hits[a->ntab_hits++] = (struct app_hit){x, x + ui_width(t), order_i};
        x += ui_width(t) + 1;
    }
}

/* The key a key-line entry names by its first word ("F5", "Tab", "p", "/"), or -1 for
 * one that names several ("Up/Down") or none. */
static int key_of_word(const char *w, size_t n)
{
    static const struct {
        const char *name;
        int key;
    } names[] = {
        {"Tab", '\t'}, {"Enter", '\n'}, {"Space", ' '}, {"Esc", 27}, {"Shift-Tab", KEY_BTAB}};
    if (n >= 2 && n <= 3 && w[0] == 'F' && w[1] >= '1' && w[1] <= '9')
        return KEY_F(atoi(w + 1));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && !strncmp(w, names[i].name, n))
            return names[i].key;
    return n == 1 ? (unsigned char)w[0] : -1;
}

/* Remember where each key of the key line is (entries are two blanks apart). */
static void key_hits(struct app *a, const char *keys, int cols)
{
    a->nkey_hits = 0;
    for (const char *p = keys; *p && a->nkey_hits < APP_MAX_HITS;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *e = strstr(p, "  ");
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int x0 = (int)(p - keys), x1 = x0 + (int)len;
        int k = key_of_word(p, strcspn(p, " "));
        if (k >= 0 && x0 < cols)
            a->key_hits[a->nkey_hits++] = (struct app_hit){x0, x1, k};
        p += len;
    }
}

static void draw_status(struct app *a, const struct layout *l)
{
    struct ui *u = &a->ui;
    a->nkey_hits = 0;
    if (a->msg[0] && now_ns() < a->msg_until_ns) {
        ui_text_pad(u, l->status.y, 0, l->cols, a->msg_role, a->msg);
        return;
    }
    const struct view_ops *v = app_views[a->view];
    static const char quit[] = "  F10 quit";
    char keys[512];
    snprintf(keys, sizeof(keys), " %s", v->keys ? v->keys(a) : "");
    /* Too wide: drop whole keys from the end (they are separated by two blanks), so that
     * no key is cut in half and the way out stays on screen. */
    int room = l->cols - 1 - ui_width(quit); /* the last column stays blank */
    char *cut;
    while (ui_width(keys) > room && (cut = strrchr(keys, ' ')) != NULL) {
        while (cut > keys && !(cut[0] == ' ' && cut[-1] == ' '))
            cut--;
        if (cut == keys)
            break;
        cut[-1] = '\0';
    }
    strncat(keys, quit, sizeof(keys) - strlen(keys) - 1);
    ui_text_pad(u, l->status.y, 0, l->cols, ROLE_STATUS, keys);
    key_hits(a, keys, l->cols);
}

void app_draw(struct app *a)
{
    struct ui *u = &a->ui;
    getmaxyx(u->win, u->rows, u->cols);
    werase(u->win);
    const struct view_ops *v = app_views[a->view];
    struct layout l;
    if (layout_compute(v->layout, u->rows, u->cols, &l) < 0) {
        char m[128];
        snprintf(m, sizeof(m), "Terminal too small: %dx%d.", u->cols, u->rows);
        ui_text(u, u->rows / 2 - 1, 1, u->cols - 2, ROLE_WARN, m);
        snprintf(m, sizeof(m), "fabtop needs at least %dx%d; enlarge the window (q quits).",
                 LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
        ui_text(u, u->rows / 2, 1, u->cols - 2, ROLE_NORMAL, m);
        wnoutrefresh(u->win);
        return;
    }
    draw_header(a, &l);
    draw_tabs(a, &l);
    if (a->focus >= l.npanes)
        a->focus = 0;
    v->draw(a, u, &l);
    draw_status(a, &l);
    wnoutrefresh(u->win);
}

/* ---- keys ---- */

/* t: the next theme, drawn at once and remembered in the config file. */
static void cycle_theme(struct app *a)
{
    struct ft_err terr = {0}, cerr = {0};
    int rc = theme_next(&a->theme, &terr);
    ui_setup(&a->ui, a->ui.win, &a->theme, a->o.no_color);
    struct config cfg;
    config_load(a->o.config_dir, &cfg);
    snprintf(cfg.theme, sizeof(cfg.theme), "%s", a->theme.name);
    /* A malformed config file stays as it is, for its owner to fix. */
    bool saved = !cfg.error[0] && config_save(a->o.config_dir, &cfg, &cerr) == 0;
    if (rc < 0)
        app_message(a, ROLE_WARN, "%s; skipped it: theme %s", terr.msg, a->theme.name);
    else if (!saved)
        app_message(a, ROLE_WARN, "theme %s (not remembered: %s)", a->theme.name,
                    cfg.error[0] ? cfg.error : cerr.msg);
    else
        app_message(a, ROLE_INFO, "theme %s (t: next)", a->theme.name);
    config_free(&cfg);
}

static int global_key(struct app *a, int ch)
{
    for (int v = 0; v < VIEW_COUNT; v++)
        if (app_views[v] && app_views[v]->fkey && ch == KEY_F(app_views[v]->fkey)) {
            app_switch(a, (enum view_id)v);
            return REACT_REDRAW;
        }
    switch (ch) {
    case KEY_F(10):
    case 'q':
        return REACT_QUIT;
    case '?':
        app_switch(a, VIEW_HELP);
        return REACT_REDRAW;
    case 't':
        cycle_theme(a);
        return REACT_REDRAW;
    case '\t': {
        struct layout l;
        layout_compute(app_views[a->view]->layout, a->ui.rows, a->ui.cols, &l);
        a->focus = l.npanes ? (a->focus + 1) % l.npanes : 0;
        return REACT_REDRAW;
    }
    case KEY_BTAB: {
        struct layout l;
        layout_compute(app_views[a->view]->layout, a->ui.rows, a->ui.cols, &l);
        a->focus = l.npanes ? (a->focus + l.npanes - 1) % l.npanes : 0;
        return REACT_REDRAW;
    }
    case KEY_RESIZE:
        return REACT_REDRAW;
    default:
        /* Digit n is Fn (for terminals whose function keys do not arrive). */
        if (ch >= '1' && ch <= '9' && view_of_fkey(ch - '0') >= 0) {
            app_switch(a, (enum view_id)view_of_fkey(ch - '0'));
            return REACT_REDRAW;
        }
        return REACT_NONE;
    }
}

void app_mouse(struct app *a, int y, int x, unsigned long bstate)
{
    struct layout l;
    if (layout_compute(app_views[a->view]->layout, a->ui.rows, a->ui.cols, &l) < 0)
        return;
    bool wheel_up = bstate & BUTTON4_PRESSED, wheel_down = bstate & BUTTON5_PRESSED;
    bool click = bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED);
    if (click && y == l.tabs.y) {
        for (int i = 0; i < a->ntab_hits; i++)
            if (x >= a->tab_hits[i].x0 && x < a->tab_hits[i].x1) {
                app_switch(a, (enum view_id)a->tab_hits[i].what);
                a->dirty = true;
            }
        return;
    }
    if (click && y == l.status.y) {
        for (int i = 0; i < a->nkey_hits; i++)
            if (x >= a->key_hits[i].x0 && x < a->key_hits[i].x1) {
                app_key(a, a->key_hits[i].what);
                return;
            }
        return;
    }
    for (int p = 0; p < l.npanes; p++) {
        const struct rect *r = &l.pane[p];
        if (y < r->y || y >= r->y + r->h || x < r->x || x >= r->x + r->w)
            continue;
        a->focus = p;
        a->dirty = true;
        /* The wheel: three rows at a time, as the arrows would move them. */
        for (int k = 0; (wheel_up || wheel_down) && k < 3; k++)
            app_key(a, wheel_up ? KEY_UP : KEY_DOWN);
        const struct view_ops *v = app_views[a->view];
        if (click && v->click && y > r->y && y < r->y + r->h - 1 && x > r->x &&
            x < r->x + r->w - 1) {
            int react = v->click(a, p, y - r->y - 1, x - r->x - 1);
            if (react & REACT_QUIT)
                a->quit = true;
        }
        return;
    }
}

void app_key(struct app *a, int ch)
{
    if (ch == KEY_MOUSE) {
        MEVENT ev;
        if (getmouse(&ev) == OK)
            app_mouse(a, ev.y, ev.x, (unsigned long)ev.bstate);
        return;
    }
    int r = app_views[a->view]->key ? app_views[a->view]->key(a, ch) : REACT_NONE;
    if (r == REACT_NONE)
        r = global_key(a, ch);
    /* Quitting stops a drill and drops the repetition running: ask first. */
    if ((r & REACT_QUIT) && a->drill && app_drill_running(a->drill) &&
        !(a->quit_asked_ns && now_ns() < a->quit_asked_ns + 4000000000ull)) {
        a->quit_asked_ns = now_ns();
        app_message(a, ROLE_WARN,
                    "a drill is running (repetition %d of %d): q again stops it (the repetition "
                    "running is dropped) and quits",
                    app_drill_current(a->drill), a->drill->repeat);
        r = REACT_REDRAW;
    }
    if (r & REACT_QUIT)
        a->quit = true;
    if (r & (REACT_REDRAW | REACT_QUIT))
        a->dirty = true;
}

/* Scripted keys for tests: "F2 Down Down Enter q" (names or single characters). */
static int script_key(const char **p)
{
    static const struct {
        const char *name;
        int key;
    } names[] = {{"Up", KEY_UP},      {"Down", KEY_DOWN},
                 {"Left", KEY_LEFT},  {"Right", KEY_RIGHT},
                 {"Enter", '\n'},     {"Tab", '\t'},
                 {"BTab", KEY_BTAB},  {"Esc", 27},
                 {"Space", ' '},      {"PgUp", KEY_PPAGE},
                 {"PgDn", KEY_NPAGE}, {"Home", KEY_HOME},
                 {"End", KEY_END},    {"Backspace", KEY_BACKSPACE}};
    while (**p == ' ')
        (*p)++;
    if (!**p)
        return -1;
    const char *s = *p;
    size_t n = strcspn(s, " ");
    *p = s + n;
    if ((s[0] == 'F') && n >= 2 && n <= 3 && s[1] >= '0' && s[1] <= '9')
        return KEY_F(atoi(s + 1));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && !strncmp(s, names[i].name, n))
            return names[i].key;
    return (unsigned char)s[0];
}

int app_run(struct app *a)
{
    struct ui *u = &a->ui;
    ui_setup(u, stdscr, &a->theme, a->o.no_color);
    const char *script = a->o.keys;
    uint64_t next_tick = now_ns();
    int frames = 0;
    uint64_t last_draw = 0;
    while (!a->quit) {
        uint64_t t = now_ns();
        if (t >= next_tick) {
            next_tick = t + 100000000ull;
            app_poll(a);
            const struct view_ops *v = app_views[a->view];
            if (v->tick && (v->tick(a) & REACT_REDRAW))
                a->dirty = true;
            if (a->msg[0] && t >= a->msg_until_ns) {
                a->msg[0] = '\0';
                a->dirty = true;
            }
        }
        /* At most 10 frames a second, whatever the engine publishes. */
        if (a->dirty && t - last_draw >= 100000000ull) {
            app_draw(a);
            doupdate();
            a->dirty = false;
            last_draw = t;
            if (a->o.iterations > 0 && ++frames >= a->o.iterations)
                break;
        }
        if (script) {
            int ch = script_key(&script);
            if (ch < 0)
                script = NULL;
            else
                app_key(a, ch);
            continue;
        }
        struct pollfd p[2] = {{0, POLLIN, 0},
                              {a->runner ? runner_wake_fd(a->runner) : -1, POLLIN, 0}};
        int wait_ms = (int)((next_tick > t ? next_tick - t : 0) / 1000000) + 1;
        if (a->dirty) {
            int until_draw = (int)((last_draw + 100000000ull - t) / 1000000) + 1;
            if (until_draw < wait_ms)
                wait_ms = until_draw;
        }
        if (a->o.iterations > 0)
            a->dirty = true;
        int rc = poll(p, a->runner ? 2 : 1, wait_ms);
        if (rc < 0 && errno != EINTR)
            break;
        if (p[1].revents & POLLIN)
            app_poll(a);
        /* Drain the keyboard (and KEY_RESIZE after SIGWINCH). */
        int ch;
        while ((ch = getch()) != ERR)
            app_key(a, ch);
    }
    if (a->drill && app_drill_running(a->drill)) {
        /* Said on screen while the drill's last repetition ends (the thread is joined here,
         * before the terminal is restored). */
        app_message(a, ROLE_WARN, "quitting: stopping the drill (repetition %d of %d)",
                    app_drill_current(a->drill), a->drill->repeat);
        app_draw(a);
        doupdate();
        app_drill_free(a->drill);
        a->drill = NULL;
    }
    return 0;
}

const struct results_run *app_results_run(const struct app *ca)
{
    /* A cache of what a->results holds: reading it is no change to the app (drawing code
     * that takes a const app calls this too). */
    struct app *a = (struct app *)ca;
    if (a->results_run_of != a->results || (!a->results && a->results_run_ok)) {
        results_run_free(&a->results_run);
        a->results_run_ok =
            a->results && results_json_read_run(a->results, "results", &a->results_run, NULL) == 0;
        a->results_run_of = a->results;
    }
    return a->results_run_ok ? &a->results_run : NULL;
}
