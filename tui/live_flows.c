/* live_flows: the live view's goodput timelines, one row (or up to four) per flow, each on
 * its own scale, with the current and highest goodput; why a flow has none (failed,
 * pending, connecting). A simulated flow's goodput is in simulated time (its wall-clock
 * rate says only how fast the playback runs): its average so far and its progress. */
#include "tui/live_pane.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/live_plot.h"

static void draw_flows(struct app *a, struct live_state *s, struct ui *u, const struct rect *r,
                       bool focus)
{
    const struct runner_snapshot *snap = a->snap;
    double t0 = INFINITY, t1 = -INFINITY;
    for (int i = 0; i < snap->nflows; i++) {
        const struct snap_flow *f = &snap->flows[i];
        if (f->ntl > 0) {
            t0 = fmin(t0, f->tl_t[0]);
            t1 = fmax(t1, f->tl_t[f->ntl - 1]);
        }
    }
    char t[2][128];
    const struct fabric_snap *fab = snap->fabric;
    bool sim = fab && (fab->valid & FABRIC_SNAP_V_FLOWS) && fab->nflows > 0;
    if (sim) {
        snprintf(t[0], sizeof(t[0]), "Goodput per flow, Gb/s in simulated time, %.1f us",
                 (double)fab->sim_now_ps / 1e6);
        snprintf(t[1], sizeof(t[1]), "Goodput, sim Gb/s");
    } else if (t1 >= t0) {
        snprintf(t[0], sizeof(t[0]), "Goodput per flow, Gb/s, %.1f-%.1f s of the run", t0, t1);
        snprintf(t[1], sizeof(t[1]), "Goodput, Gb/s, %.1f-%.1f s", t0, t1);
    } else {
        snprintf(t[0], sizeof(t[0]), "Goodput per flow, Gb/s: no samples yet");
        snprintf(t[1], sizeof(t[1]), "Goodput, Gb/s");
    }
    live_pane_box(u, r, focus, (const char *const[]){t[0], t[1]}, 2);
    struct rect in = ui_inner(r);
    if (in.h < 2 || in.w < 20 || snap->nflows == 0)
        return;
    int namew = 4;
    for (int i = 0; i < snap->nflows; i++) {
        int w = (int)strlen(snap->flows[i].name);
        namew = w > namew ? w : namew;
    }
    namew = namew > 12 ? 12 : namew;
    const int numw = 7; /* "now" and "max" columns */
    int chart_x = in.x + namew + 1, chart_w = in.w - namew - 1 - 2 * numw;
    if (chart_w < 4)
        return;
    char head[256];
    snprintf(head, sizeof(head), "%-*.*s %-*.*s%*s%*s", namew, namew, "flow", chart_w, chart_w - 1,
             "each on its own scale", numw, "now", numw, "max");
    ui_text(u, in.y, in.x, in.w, ROLE_DIM, head);
    int rows_per = (in.h - 1) / snap->nflows;
    rows_per = rows_per < 1 ? 1 : rows_per > 4 ? 4 : rows_per;
    int vis = (in.h - 1) / rows_per;
    s->nsel[LIVE_FLOWS] = snap->nflows;
    ui_list_clamp(&s->list[LIVE_FLOWS], snap->nflows);
    ui_list_follow(&s->list[LIVE_FLOWS], vis);
    float vals[512];
    for (int k = 0; k < vis && s->list[LIVE_FLOWS].top + k < snap->nflows; k++) {
        int i = s->list[LIVE_FLOWS].top + k;
        const struct snap_flow *f = &snap->flows[i];
        int y = in.y + 1 + k * rows_per;
        bool sel = focus && i == s->list[LIVE_FLOWS].sel;
        ui_text_pad(u, y, in.x, namew, sel ? ROLE_SELECTED : ROLE_NORMAL, f->name);
        enum theme_role bar = f->role == MIX_ROLE_BACKGROUND ? ROLE_BAR_LOADED : ROLE_BAR;
        const char *why = NULL;
        enum theme_role why_role = ROLE_DIM;
        char ebuf[400];
        if (f->status == FLOW_FAILED) {
            snprintf(ebuf, sizeof(ebuf), "FAILED: %s", f->error);
            why = ebuf;
            why_role = ROLE_ERROR;
        } else if (f->status == FLOW_PENDING) {
            why = snap->nphases == 2 && snap->phase_index == 0 && f->role == MIX_ROLE_BACKGROUND
                      ? "runs in the loaded phase"
                      : "waiting to start";
        } else if (f->ntl == 0) {
            why = f->state == FLOW_ST_SETUP ? "connecting (setup)..." : "no samples yet";
        }
        const struct fabric_snap_flow *ff = sim ? fabric_snap_flow(fab, f->name) : NULL;
        if (ff && !why) {
            /* Average since its first post, in simulated time, and the share of its
             * operations done (a background flow runs until the foreground is done). */
            char avg[24], line[160];
            live_pane_fmt_gbps(avg, sizeof(avg), fabric_snap_gbps(fab, ff));
            double done = live_pane_sim_flow_done(f, ff);
            if (done >= 0)
                snprintf(line, sizeof(line), "%3.0f%%, %llu/%llu ops", done * 100,
                         (unsigned long long)ff->st.ops, (unsigned long long)ff->target);
            else
                snprintf(line, sizeof(line), "%llu ops, background",
                         (unsigned long long)ff->st.ops);
            char right[64];
            snprintf(right, sizeof(right), "%*s%*s", numw, avg, numw, "");
            ui_text(u, y, chart_x + chart_w, 2 * numw, ROLE_NORMAL, right);
            int lw = ui_width(line) + 1, bw = chart_w - lw;
            if (done >= 0 && bw >= 4)
                ui_hbar(u, y, chart_x, bw - 1, done, bar);
            ui_text(u, y, chart_x + (bw >= 4 ? bw : 0), chart_w, ROLE_DIM, line);
            continue;
        }
        double mx = 0;
        for (int j = 0; j < f->ntl; j++)
            mx = f->tl_goodput[j] > mx ? f->tl_goodput[j] : mx;
        char now[24], top[24], nums[64];
        live_pane_fmt_gbps(now, sizeof(now), f->valid & SNAP_V_RATE ? f->goodput_gbps : NAN);
        live_pane_fmt_gbps(top, sizeof(top), f->ntl ? mx : NAN);
        snprintf(nums, sizeof(nums), "%*s%*s", numw, now, numw, top);
        ui_text(u, y, chart_x + chart_w, 2 * numw, ROLE_NORMAL, nums);
        if (why) {
            ui_text(u, y, chart_x, chart_w, why_role, why);
            continue;
        }
        int per;
        int nc = live_resample(f->tl_goodput, f->ntl, chart_w > 512 ? 512 : chart_w, vals, &per);
        double vmax = 0;
        for (int j = 0; j < nc; j++)
            vmax = vals[j] > vmax ? vals[j] : vmax;
        if (rows_per == 1) {
            ui_sparkline(u, y, chart_x, chart_w, vals, nc, vmax, bar);
        } else {
            double frac[512];
            for (int j = 0; j < nc; j++)
                frac[j] = vmax > 0 ? vals[j] / vmax : 0;
            live_pane_vbars(u, y + rows_per - 1, chart_x, rows_per, frac, nc, bar);
        }
    }
}

const struct live_pane live_flows_pane = {.draw = draw_flows};
