/* live_events: the live view's events pane: the run's events (failures in the error colour,
 * phases in the info colour), following the newest unless the user scrolls back, and the
 * progress with its bar on the box's top edge. */
/* strcasestr is a GNU extension. */
#define _GNU_SOURCE
#include "tui/live_pane.h"

#include <stdio.h>
#include <string.h>

static enum theme_role event_role(const char *e)
{
    static const char *const bad[] = {"fail", "error",   "timeout",     "timed out", "gone",
                                      "lost", "refused", "unreachable", "closed",    "down"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (strcasestr(e, bad[i]))
            return ROLE_ERROR;
    if (strcasestr(e, "stop"))
        return ROLE_WARN;
    if (strstr(e, "phase "))
        return ROLE_INFO;
    return ROLE_NORMAL;
}

/* "quiet 1/2: measuring 2.1 of 4.5 s, 2.4 s left" and the fraction done. */
static double progress_text(const struct app *a, char *buf, size_t len)
{
    const struct runner_snapshot *snap = a->snap;
    char ph[48] = "";
    if (snap->nphases == 2)
        snprintf(ph, sizeof(ph), "%s %d/2: ", snap->phase_name, snap->phase_index + 1);
    double el = snap->phase_elapsed_s, tot = snap->phase_total_s;
    double frac = tot > 0 ? el / tot : 0;
    frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    const struct results_run *run = app_results_run(a);
    bool interrupted = run && results_bool_true(&run->interrupted);
    if (snap->done || snap->run_phase == RUN_PH_DONE) {
        snprintf(buf, len, "%s after %.1f s%s", interrupted ? "stopped" : "done", snap->t_s,
                 a->results ? "" : ", collecting results");
        return 1;
    }
    switch (snap->run_phase) {
    case RUN_PH_SETUP:
        snprintf(buf, len, "%sconnecting (setup), %.1f s", ph, el);
        break;
    case RUN_PH_WARMUP:
        snprintf(buf, len, "%swarm-up, %.1f of %.1f s", ph, el, tot);
        break;
    case RUN_PH_MEASURE:
        if (tot <= 0) {
            /* No duration: the run ends when its operations are done (a simulated fabric,
             * an iteration count); the share done where the fabric says it. */
            double done = live_pane_sim_done(snap);
            if (done >= 0 && (snap->fabric->valid & FABRIC_SNAP_V_STATE)) {
                snprintf(buf, len, "%smeasuring, sim time %.1f us, %.0f%% done", ph,
                         (double)snap->fabric->sim_now_ps / 1e6, done * 100);
                return done;
            }
            snprintf(buf, len, "%smeasuring, %.1f s (until its operations are done)", ph, el);
            return 0;
        }
        snprintf(buf, len, "%smeasuring, %.1f of %.1f s, %.1f s left", ph, el, tot,
                 tot > el ? tot - el : 0);
        break;
    default:
        snprintf(buf, len, "%stearing down, %.1f s", ph, el);
        break;
    }
    return frac;
}

static void draw_events(struct app *a, struct live_state *s, struct ui *u, const struct rect *r,
                        bool focus)
{
    const struct runner_snapshot *snap = a->snap;
    ui_box(u, r, "Events", focus);
    /* The progress sits on the box's top edge, on the right. */
    char prog[160];
    double frac = progress_text(a, prog, sizeof(prog));
    if (a->display_paused)
        snprintf(prog + strlen(prog), sizeof(prog) - strlen(prog), " [display paused]");
    int barw = r->w >= 100 ? 20 : 10;
    int pw = ui_width(prog) + 2;
    if (pw + barw + 14 > r->w)
        barw = 0;
    if (pw + barw + 12 <= r->w) {
        int x = r->x + r->w - 2 - barw - (barw ? 1 : 0) - pw;
        char t[176];
        snprintf(t, sizeof(t), " %s ", prog);
        ui_text(u, r->y, x, pw, snap->done ? ROLE_OK : ROLE_BORDER, t);
        if (barw)
            ui_hbar(u, r->y, r->x + r->w - 2 - barw, barw, frac, ROLE_BAR);
    }
    struct rect in = ui_inner(r);
    if (in.h < 1)
        return;
    /* The classes in one line at the bottom when the percentile table had no room. */
    char cls[320];
    if (!s->class_drawn && in.h >= 2 && live_class_brief(a, cls, sizeof(cls))) {
        in.h--;
        ui_text_pad(u, in.y + in.h, in.x, in.w, ROLE_INFO, cls);
    }
    int n = snap->nevents;
    s->nsel[LIVE_EV] = n;
    if (s->ev_follow || s->list[LIVE_EV].sel >= n)
        s->list[LIVE_EV].sel = n ? n - 1 : 0;
    /* The newest at the bottom while following; scrolled back, the view stays put while the
     * selection is in it. */
    struct ui_list *sc = &s->list[LIVE_EV];
    int kept = sc->top;
    sc->top = sc->sel - in.h + 1;
    if (!s->ev_follow && kept <= sc->sel && sc->sel < kept + in.h)
        sc->top = kept;
    ui_list_fit(sc, n, in.h);
    int top = sc->top;
    if (!n)
        ui_text(u, in.y, in.x, in.w, ROLE_DIM, "(no events yet)");
    for (int i = 0; i < in.h && top + i < n; i++) {
        const char *e = snap->events[top + i];
        bool sel = focus && !s->ev_follow && top + i == s->list[LIVE_EV].sel;
        ui_text_pad(u, in.y + i, in.x, in.w, sel ? ROLE_SELECTED : event_role(e), e);
    }
}

const struct live_pane live_events_pane = {.draw = draw_events};
