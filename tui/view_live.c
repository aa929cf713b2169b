/* view_live: the live run view (F4): the foreground's latency histogram on a log axis with
 * p50/p99/p99.9 markers, a percentile table (per flow, quiet vs loaded side by side), goodput
 * timelines, port-wide counters and TCP numbers per flow, the events log and the progress,
 * as five panes (live_pane.h, one file each); or, while a fault drill runs or after it, the
 * drill's page (live_drill.c); this file owns the frame, the state and the view-wide keys. */
#include "tui/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "tui/live_pane.h"

/* The panes by their LAYOUT_LIVE rectangle; drawn table first: its selection decides whose
 * histogram is drawn. */
static const struct live_pane *const panes[LIVE_NPANES] = {
    [LIVE_HIST] = &live_hist_pane,   [LIVE_PCT] = &live_pct_pane,
    [LIVE_FLOWS] = &live_flows_pane, [LIVE_CTR] = &live_counters_pane,
    [LIVE_EV] = &live_events_pane,
};
static const int draw_order[LIVE_NPANES] = {LIVE_PCT, LIVE_HIST, LIVE_FLOWS, LIVE_CTR, LIVE_EV};

static struct live_state *st(struct app *a)
{
    return a->vstate[VIEW_LIVE];
}

static void live_init(struct app *a)
{
    struct live_state *s = xalloc_zero(1, sizeof(*s));
    s->ylog = true;
    s->ev_follow = true;
    s->hist_want = -1;
    a->vstate[VIEW_LIVE] = s;
}

static void live_fini(struct app *a)
{
    struct live_state *s = a->vstate[VIEW_LIVE];
    if (s) {
        free(s->res_hist);
        free(s->quiet_hist);
    }
    free(a->vstate[VIEW_LIVE]);
    a->vstate[VIEW_LIVE] = NULL;
}

/* Remember the foreground's quiet numbers while the quiet phase runs, whichever view is on
 * screen; forget them when a new run starts. Called after every engine poll and on every
 * draw (cheap, idempotent). */
static void observe(struct app *a)
{
    struct live_state *s = st(a);
    const struct runner_snapshot *snap = a->snap;
    if (a->runner != s->runner || (snap && snap->gen < s->last_gen)) {
        s->runner = a->runner;
        s->quiet.valid = false;
        s->quiet_hist_ok = false;
        s->pct_chosen = false;
        s->hist_want = -1;
        s->ev_follow = true;
        s->last_gen = 0;
        memset(s->list, 0, sizeof(s->list));
    }
    if (!snap)
        return;
    s->last_gen = snap->gen;
    /* While it measures: at teardown the last interval's rates read 0. */
    if (snap->nphases == 2 && snap->phase_index == 0 && snap->fg >= 0 && snap->fg < snap->nflows &&
        (snap->flows[snap->fg].valid & SNAP_V_LAT) &&
        snap->flows[snap->fg].state == FLOW_ST_MEASURE) {
        live_pct_from_snap(&s->quiet.col, &snap->flows[snap->fg], "quiet");
        s->quiet.valid = true;
        if (snap->hist_flow == snap->fg) {
            if (!s->quiet_hist)
                s->quiet_hist = xalloc(sizeof(*s->quiet_hist));
            hist_snapshot(&snap->hist, s->quiet_hist);
            s->quiet_hist_ok = true;
        }
    }
}

/* ---- the view ---- */

static void draw_no_run(struct app *a, struct ui *u, const struct layout *l)
{
    ui_box(u, &l->body, "Live run", false);
    struct rect in = ui_inner(&l->body);
    int y = in.y + 1, x = in.x + 1, w = in.w - 2, ym = in.y + in.h;
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "No test has run in this session.");
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "");
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL,
                 "Press F2 (setup) to pick the endpoints and a traffic mix and start a test; it "
                 "shows here while it runs: latency histogram, percentiles, goodput, counters, "
                 "events.");
    if (a->results_path[0] || a->results) {
        ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "");
        char m[700];
        snprintf(m, sizeof(m), "Saved results%s%s are in F5 (results).",
                 a->results_path[0] ? " from " : "", a->results_path);
        ui_paragraph(u, &y, ym, x, w, ROLE_DIM, m);
    }
    ui_paragraph(u, &y, ym, x, w, ROLE_NORMAL, "");
    ui_paragraph(u, &y, ym, x, w, ROLE_DIM,
                 "From a shell: fabtop run --mix NAME runs the same test without the explorer.");
}

static void live_draw(struct app *a, struct ui *u, const struct layout *l)
{
    observe(a);
    if (a->drill) {
        live_drill_pane.draw(a, st(a), u, &l->body, true);
        return;
    }
    if (!a->snap) {
        draw_no_run(a, u, l);
        return;
    }
    struct live_state *s = st(a);
    for (int i = 0; i < LIVE_NPANES; i++) {
        int p = draw_order[i];
        panes[p]->draw(a, s, u, &l->pane[p], a->focus == p);
    }
}

static void save(struct app *a)
{
    struct ft_err err = {0};
    if (a->runner && !runner_done(a->runner) && !a->results) {
        app_message(a, ROLE_WARN,
                    "The test is still running: w saves its results when it ends (s stops it).");
        return;
    }
    int rc = app_save_results(a, NULL, &err);
    if (rc < 0)
        app_message(a, ROLE_ERROR, "Not saved: %s", err.msg);
    else if (rc > 0)
        app_message(a, ROLE_WARN, "%s", err.msg);
    else
        app_message(a, ROLE_OK, "Results saved to %s", a->results_path);
}

static void save_drill(struct app *a)
{
    char path[1024];
    struct ft_err err = {0};
    int rc = app_save_drill(a, path, sizeof(path), &err);
    if (rc < 0)
        app_message(a, ROLE_ERROR, "Not saved: %s", err.msg);
    else if (rc > 0)
        app_message(a, ROLE_WARN, "%s", err.msg);
    else
        app_message(a, ROLE_OK, "Drill saved to %s%s", path,
                    app_drill_running(a->drill) ? " (so far: its repetitions done)" : "");
}

/* The keys of the drill's page: it scrolls and saves; a drill runs to its end. */
static int drill_key(struct app *a, struct live_state *s, int ch)
{
    int r = live_drill_pane.key(a, s, ch);
    if (r != REACT_NONE)
        return r;
    switch (ch) {
    case 'w':
        save_drill(a);
        return REACT_REDRAW;
    case 's':
        if (!app_drill_running(a->drill)) {
            app_message(a, ROLE_WARN, "The drill has finished.");
            return REACT_REDRAW;
        }
        app_drill_stop(a->drill);
        app_message(a, ROLE_WARN,
                    "stopping the drill: the repetition running is dropped, the ones done are "
                    "kept");
        return REACT_REDRAW;
    case 'p':
        app_message(a, ROLE_WARN, "%s",
                    app_drill_running(a->drill) ? "A drill cannot be paused: s stops it."
                                                : "The drill has finished.");
        return REACT_REDRAW;
    default:
        return REACT_NONE;
    }
}

static int live_key(struct app *a, int ch)
{
    struct live_state *s = st(a);
    if (a->drill)
        return drill_key(a, s, ch);
    int pane = a->focus;
    if (pane >= 0 && pane < LIVE_NPANES && panes[pane]->key) {
        int r = panes[pane]->key(a, s, ch);
        if (r != REACT_NONE)
            return r;
    }
    switch (ch) {
    case 'p':
        if (!a->runner) {
            app_message(a, ROLE_WARN, "No test to pause: start one in F2 (setup).");
            return REACT_REDRAW;
        }
        a->display_paused = !a->display_paused;
        app_message(a, ROLE_INFO, "%s",
                    a->display_paused ? "Display paused: the test keeps running (p resumes)."
                                      : "Display resumed.");
        return REACT_REDRAW;
    case 's':
        if (a->runner && !runner_done(a->runner))
            app_stop_run(a);
        else
            app_message(a, ROLE_WARN, "No test is running.");
        return REACT_REDRAW;
    case 'w':
        save(a);
        return REACT_REDRAW;
    case 'y':
        s->ylog = !s->ylog;
        return REACT_REDRAW;
    case 'd':
        s->cdf = !s->cdf;
        return REACT_REDRAW;
    case 'c':
        s->ctr_tcp = !s->ctr_tcp;
        s->list[LIVE_CTR] = (struct ui_list){0};
        return REACT_REDRAW;
    case 'z':
        s->all_counters = !s->all_counters;
        s->list[LIVE_CTR] = (struct ui_list){0};
        app_message(a, ROLE_INFO, "%s",
                    s->all_counters ? "Counters: all of them (z: only those that moved)."
                                    : "Counters: only those that moved during the test (z: all).");
        return REACT_REDRAW;
    case KEY_UP:
    case 'k':
        return live_pane_sel_move(s, pane, -1);
    case KEY_DOWN:
    case 'j':
        return live_pane_sel_move(s, pane, 1);
    case KEY_PPAGE:
        return live_pane_sel_move(s, pane, -10);
    case KEY_NPAGE:
        return live_pane_sel_move(s, pane, 10);
    case KEY_HOME:
    case 'g':
        return live_pane_sel_move(s, pane, -1000000);
    case KEY_END:
    case 'G':
        return live_pane_sel_move(s, pane, 1000000);
    default:
        return REACT_NONE;
    }
}

static const char *live_keys(const struct app *a)
{
    if (a->drill)
        return app_drill_running(a->drill) ? "Up/Down scroll  s stop  w save so far  F2 setup"
                                           : "Up/Down scroll  w save  F2 setup  F5 results";
    if (!a->snap)
        return "F2 set up a test  F3 topology  F5 results";
    /* Most used first: at 80 columns the key line drops whole keys from the end. */
    return "p pause  s stop  w save  ? explain  Tab pane  Up/Down select  y lin/log  "
           "d histogram/CDF  c TCP/counters  z all counters";
}

/* A click in a pane: the pane's own (a flow's column, a counter's row), nothing on a
 * drill's page. */
static int live_click(struct app *a, int pane, int row, int col)
{
    struct live_state *s = st(a);
    if (a->drill || pane < 0 || pane >= LIVE_NPANES || !panes[pane]->click)
        return REACT_REDRAW;
    return panes[pane]->click(a, s, row, col);
}

/* The running repetition's seconds go up. */
static int live_tick(struct app *a)
{
    return a->drill && app_drill_running(a->drill) ? REACT_REDRAW : REACT_NONE;
}

const struct view_ops view_live = {
    .name = "Live",
    .fkey = 4,
    .layout = LAYOUT_LIVE,
    .init = live_init,
    .fini = live_fini,
    .draw = live_draw,
    .key = live_key,
    .tick = live_tick,
    .observe = observe,
    .keys = live_keys,
    .click = live_click,
};
