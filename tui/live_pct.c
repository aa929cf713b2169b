/* live_pct: the live view's percentile table: per flow (the foreground quiet vs loaded and
 * their ratio side by side), rows by priority when the pane is short, columns scrolling
 * with the selection; the selected column picks the histogram's flow. */
#include "tui/live_pane.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonutil.h"
#include "text/text_units.h"
#include "tui/live_plot.h"

static void pcol_clear(struct live_pcol *c, const char *head)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->head, sizeof(c->head), "%s", head);
    c->role = ROLE_BORDER;
    c->count = c->p50 = c->p90 = c->p99 = c->p999 = c->max = c->gbps = c->ops = c->busbw = NAN;
    c->flow = -1;
}

void live_pct_from_snap(struct live_pcol *c, const struct snap_flow *f, const char *head)
{
    pcol_clear(c, head);
    if (f->status != FLOW_PENDING) {
        c->size = f->size;
        c->size_valid = true;
        c->point = f->point;
        c->npoints = f->npoints;
    }
    if ((f->valid & SNAP_V_LAT) && f->bw_factor > 0 && f->lat.mean > 0)
        c->busbw = (double)f->bw_bytes / f->lat.mean * f->bw_factor; /* B/ns = GB/s */
    if (f->valid & SNAP_V_LAT) {
        c->count = (double)f->lat.count;
        c->p50 = f->lat.p50;
        c->p90 = f->lat.p90;
        c->p99 = f->lat.p99;
        c->p999 = f->lat.p999;
        c->max = f->lat.max;
    }
    if (f->valid & SNAP_V_RATE) {
        c->gbps = f->goodput_gbps;
        c->ops = f->ops_per_s;
    }
}

static double jnum(const cJSON *o, const char *key, double scale)
{
    double v;
    return jsonutil_num(o, key, &v) ? v * scale : NAN;
}

static double tnum(bool present, const struct results_num *f, double scale)
{
    double v;
    return present && results_num_get(f, &v) ? v * scale : NAN;
}

/* A flow's last measured point in a results phase; false when the phase or flow is absent. */
static bool pcol_from_results(struct live_pcol *c, const struct results_run *res, const char *phase,
                              const char *flow, const char *head)
{
    pcol_clear(c, head);
    const struct results_point *last = NULL;
    for (int p = 0; p < res->nphases; p++) {
        const struct results_phase *ph = &res->phases[p];
        const char *pn = results_str_get(&ph->name);
        if (phase && (!pn || strcmp(pn, phase)))
            continue;
        for (int f = 0; f < ph->nflows; f++) {
            const struct results_flow *fl = &ph->flows[f];
            const char *fn = results_str_get(&fl->name);
            if (!fn || strcmp(fn, flow))
                continue;
            for (int i = 0; i < fl->npoints; i++)
                if (results_bool_true(&fl->points[i].measured)) {
                    last = &fl->points[i];
                    c->point = i;
                }
            c->npoints = fl->npoints;
        }
    }
    if (!last)
        return false;
    double size;
    uint64_t b;
    c->size_valid = true;
    /* The reader refused sizes outside 1 B-16 GiB; converted only as a whole number. */
    c->size = results_num_get(&last->size_bytes, &size) && jsonutil_whole_u64(size, &b) ? b : 0;
    bool lat = last->latency_st == RESULTS_SET;
    const struct results_latency *l = &last->latency;
    c->count = tnum(lat, &l->count, 1);
    c->p50 = tnum(lat, &l->p50, 1000);
    c->p90 = tnum(lat, &l->p90, 1000);
    c->p99 = tnum(lat, &l->p99, 1000);
    c->p999 = tnum(lat, &l->p999, 1000);
    c->max = tnum(lat, &l->max, 1000);
    c->gbps = tnum(true, &last->goodput_gbps, 1);
    c->ops = tnum(true, &last->ops_per_s, 1);
    /* The same busbw as the snapshot's: the point's S over the mean per-operation time. */
    const cJSON *nc = cJSON_GetObjectItem(last->figures, "nccl");
    double mean = tnum(lat, &l->mean, 1000), sb = jnum(nc, "bytes", 1),
           fac = jnum(nc, "busbw_factor", 1);
    if (mean > 0 && sb > 0 && fac > 0)
        c->busbw = sb / mean * fac;
    return true;
}

/* ---- the percentile table ---- */

enum pfield { F_SIZE, F_COUNT, F_P50, F_P90, F_P99, F_P999, F_MAX, F_BUSBW, F_GBPS, F_OPS };
static const struct {
    const char *label;
    int prio; /* 1 is kept longest when rows are short */
} prow[] = {
    [F_SIZE] = {"size", 9}, [F_COUNT] = {"count", 6},    [F_P50] = {"p50", 1},
    [F_P90] = {"p90", 7},   [F_P99] = {"p99", 2},        [F_P999] = {"p99.9", 3},
    [F_MAX] = {"max", 4},   [F_BUSBW] = {"bus GB/s", 5}, [F_GBPS] = {"Gb/s", 5},
    [F_OPS] = {"ops/s", 8},
};

static double pfield_val(const struct live_pcol *c, enum pfield f)
{
    switch (f) {
    case F_COUNT:
        return c->count;
    case F_P50:
        return c->p50;
    case F_P90:
        return c->p90;
    case F_P99:
        return c->p99;
    case F_P999:
        return c->p999;
    case F_MAX:
        return c->max;
    case F_BUSBW:
        return c->busbw;
    case F_GBPS:
        return c->gbps;
    case F_OPS:
        return c->ops;
    default:
        return NAN;
    }
}

/* A cell's text for a column colw - 1 wide. */
static void pcell(char *buf, size_t len, const struct live_pcol *c, enum pfield f, int width,
                  struct text_lat_unit u)
{
    if (c->ratio) {
        double v = pfield_val(c, f);
        /* Sizes are equal and counts follow the durations: no ratio worth showing. */
        if (f == F_SIZE || f == F_COUNT)
            snprintf(buf, len, "%s", "");
        else if (isnan(v) || isinf(v))
            snprintf(buf, len, "n/a");
        else
            snprintf(buf, len, "%.2fx", v);
        return;
    }
    switch (f) {
    case F_SIZE:
        if (!c->size_valid)
            snprintf(buf, len, "n/a");
        else if (c->npoints > 1) {
            /* A sweep: "16KiB 2/5", or the size alone where that does not fit. */
            char b[24];
            live_fmt_bytes(b, sizeof(b), c->size);
            snprintf(buf, len, "%s %d/%d", b, c->point + 1, c->npoints);
            if ((int)strlen(buf) > width)
                snprintf(buf, len, "%s", b);
        } else
            live_fmt_bytes(buf, len, c->size);
        break;
    case F_COUNT:
    case F_OPS:
        live_fmt_si(buf, len, pfield_val(c, f));
        break;
    case F_GBPS:
        live_pane_fmt_gbps(buf, len, c->gbps);
        break;
    case F_BUSBW:
        live_pane_fmt_gbps(buf, len, c->busbw); /* GB/s, same digits as Gb/s */
        break;
    default:
        /* Latencies in the table's unit (text_units.h: ms once the p99s pass 10 ms). */
        if (u.us == 1)
            live_fmt_us(buf, len, pfield_val(c, f));
        else
            text_lat_in(buf, len, pfield_val(c, f) / 1000, u);
    }
}

/* The table's columns: the foreground quiet, loaded and their ratio for a two-phase mix,
 * then every other flow of the current phase. Returns the count. */
static int build_cols(struct app *a, struct live_state *s, struct live_pcol *cols, int max)
{
    const struct runner_snapshot *snap = a->snap;
    const struct results_run *res = app_results_run(a);
    int n = 0, fg = snap->fg;
    bool two = snap->nphases == 2 && fg >= 0 && fg < snap->nflows;
    const char *cur = res ? NULL : snap->phase_name; /* results: the last phase */
    if (two && n + 3 <= max) {
        const char *fname = snap->flows[fg].name;
        struct live_pcol *q = &cols[n++], *l = &cols[n++];
        if (!(res && pcol_from_results(q, res, "quiet", fname, "quiet"))) {
            if (snap->phase_index == 0)
                live_pct_from_snap(q, &snap->flows[fg], "quiet");
            else if (s->quiet.valid)
                *q = s->quiet.col;
            else
                pcol_clear(q, "quiet");
        }
        if (!(res && pcol_from_results(l, res, "loaded", fname, "loaded"))) {
            if (snap->phase_index == 1)
                live_pct_from_snap(l, &snap->flows[fg], "loaded");
            else
                pcol_clear(l, "loaded");
        }
        q->role = ROLE_BAR;
        l->role = ROLE_BAR_LOADED;
        q->flow = l->flow = fg;
        q->quiet = true;
        struct live_pcol *r = &cols[n++];
        pcol_clear(r, "l/q");
        r->ratio = true;
        r->count = l->count / q->count;
        r->p50 = l->p50 / q->p50;
        r->p90 = l->p90 / q->p90;
        r->p99 = l->p99 / q->p99;
        r->p999 = l->p999 / q->p999;
        r->max = l->max / q->max;
        r->gbps = l->gbps / q->gbps;
        r->ops = l->ops / q->ops;
        r->busbw = l->busbw / q->busbw;
    }
    for (int i = 0; i < snap->nflows && n < max; i++) {
        if (two && i == fg)
            continue;
        const struct snap_flow *f = &snap->flows[i];
        struct live_pcol *c = &cols[n++];
        const char *ph = res ? (snap->nphases == 2 ? "loaded" : NULL) : cur;
        if (!(res && pcol_from_results(c, res, ph, f->name, f->name)))
            live_pct_from_snap(c, f, f->name);
        c->role = f->status == FLOW_FAILED ? ROLE_ERROR : ROLE_BORDER;
        c->flow = i;
        /* A simulated flow's rates in simulated time (wall-clock ones would measure the
         * playback), from the fabric's final or current state. */
        const struct fabric_snap_flow *ff = fabric_snap_flow(snap->fabric, f->name);
        if (ff) {
            c->gbps = fabric_snap_gbps(snap->fabric, ff);
            uint64_t end =
                ff->st.done && ff->st.last_done ? ff->st.last_done : snap->fabric->sim_now_ps;
            c->ops = end > ff->st.first_post
                         ? (double)ff->st.ops / ((double)(end - ff->st.first_post) / 1e12)
                         : NAN;
        }
        if (live_pane_kind_of(a, i) == MIX_LAT_NONE)
            c->count = c->p50 = c->p90 = c->p99 = c->p999 = c->max = NAN;
    }
    return n;
}

static void draw_pct(struct app *a, struct live_state *s, struct ui *u, const struct rect *r,
                     bool focus)
{
    const struct runner_snapshot *snap = a->snap;
    struct live_pcol cols[MIX_MAX_FLOWS + 3];
    int ncols = build_cols(a, s, cols, MIX_MAX_FLOWS + 3);
    bool two = snap->nphases == 2 && snap->fg >= 0;
    /* One unit for the table's latencies: the one its largest p99 reads best in. */
    double top = 0;
    for (int j = 0; j < ncols; j++)
        if (!cols[j].ratio && cols[j].p99 > top)
            top = cols[j].p99;
    struct text_lat_unit unit = text_lat_unit_for(top / 1000);
    const char *us = unit.abbr;
    char t[3][160];
    const char *fname = snap->fg >= 0 ? snap->flows[snap->fg].name : "";
    if (two) {
        snprintf(t[0], sizeof(t[0]), "Percentiles, %s: %s quiet vs loaded, other flows", us, fname);
        snprintf(t[1], sizeof(t[1]), "Percentiles, %s: %s quiet vs loaded", us, fname);
        snprintf(t[2], sizeof(t[2]), "%s: quiet vs loaded", us);
    } else {
        snprintf(t[0], sizeof(t[0]), "Percentiles per flow, %s (latency), Gb/s, ops/s%s", us,
                 snap->fabric ? ", simulated time" : "");
        snprintf(t[1], sizeof(t[1]), "Percentiles per flow, %s", us);
        snprintf(t[2], sizeof(t[2]), "Per flow, %s", us);
    }
    live_pane_box(u, r, focus, (const char *const[]){t[0], t[1], t[2]}, 3);
    struct rect in = ui_inner(r);
    s->class_drawn = false;
    if (in.h < 2 || in.w < 14)
        return;
    /* Rows by priority when the pane is short. */
    int avail = in.h - 1;
    /* The bus bandwidth row only where a column has one (collectives); its label carries
     * its unit (GB/s, unlike the Gb/s row), so the labels get wider. */
    bool busbw = false;
    for (int j = 0; j < ncols; j++)
        busbw |= !cols[j].ratio && !isnan(cols[j].busbw);
    const int labw = busbw ? 9 : 6;
    /* Columns at least 8 wide ("1041.5" and a space), at most 14; more flows scroll. */
    int colw = 8;
    int fit = (in.w - labw) / colw;
    if (fit < 1) {
        colw = in.w - labw;
        fit = 1;
    }
    if (fit > ncols)
        fit = ncols;
    if (fit > 0 && (in.w - labw) / fit > colw)
        colw = (in.w - labw) / fit > 14 ? 14 : (in.w - labw) / fit;
    s->nsel[LIVE_PCT] = ncols;
    ui_list_clamp(&s->list[LIVE_PCT], ncols);
    ui_list_follow(&s->list[LIVE_PCT], fit);
    /* The histogram shows the selected column's flow once the user has chosen one (the
     * ratio column keeps the one before). */
    if (s->pct_chosen && ncols && cols[s->list[LIVE_PCT].sel].flow >= 0) {
        s->hist_want = cols[s->list[LIVE_PCT].sel].flow;
        s->hist_quiet = cols[s->list[LIVE_PCT].sel].quiet;
    }
    if (a->runner && !runner_done(a->runner))
        runner_show_hist(a->runner, s->hist_want);
    int first = s->list[LIVE_PCT].top;
    s->pct_labw = labw;
    s->pct_colw = colw;
    s->pct_first = first;
    s->pct_fit = fit;
    ui_text(u, in.y, in.x, labw, ROLE_DIM, us);
    for (int j = 0; j < fit && first + j < ncols; j++) {
        const struct live_pcol *c = &cols[first + j];
        char h[40];
        snprintf(h, sizeof(h), "%*.*s", colw - 1, colw - 1, c->head);
        bool sel = focus && first + j == s->list[LIVE_PCT].sel;
        ui_text(u, in.y, in.x + labw + j * colw, colw, sel ? ROLE_SELECTED : c->role, h);
    }
    if (first + fit < ncols)
        ui_text(u, in.y, in.x + in.w - 1, 1, ROLE_DIM, ">");
    int row = 1;
    for (int f = 0; f < (int)(sizeof(prow) / sizeof(prow[0])) && row <= avail; f++) {
        if (prow[f].prio > avail || (f == F_BUSBW && !busbw))
            continue;
        ui_text(u, in.y + row, in.x, labw, ROLE_NORMAL, prow[f].label);
        for (int j = 0; j < fit && first + j < ncols; j++) {
            const struct live_pcol *c = &cols[first + j];
            char v[40], cell[48];
            pcell(v, sizeof(v), c, (enum pfield)f, colw - 1, unit);
            snprintf(cell, sizeof(cell), "%*s", colw - 1, v);
            enum theme_role role = !strcmp(v, "n/a") ? ROLE_DIM
                                   : f == F_P50      ? ROLE_P50
                                   : f == F_P99      ? ROLE_P99
                                   : f == F_P999     ? ROLE_P999
                                                     : ROLE_NORMAL;
            if (c->ratio && strcmp(v, "n/a") && f != F_SIZE && f != F_COUNT) {
                /* Loaded against quiet, by direction: latency up is worse, goodput down;
                 * 2x or more worse stands out from 10 % (compare_change_of). */
                bool lower = !(f == F_GBPS || f == F_OPS || f == F_BUSBW);
                role =
                    theme_role_of_change(compare_change_of(lower, pfield_val(c, (enum pfield)f)));
            }
            ui_text(u, in.y + row, in.x + labw + j * colw, colw, role, cell);
        }
        row++;
    }
    /* The flow classes in the rows left over (a mix with classes). */
    s->class_drawn =
        row + 1 <= avail && live_class_draw(a, u, in.y + row + 1, in.x, in.w, avail - row) > 0;
}

/* Moving the selection (arrows, j/k, Home/End) picks the histogram's flow; Left/Right move
 * it too, since the columns run across. */
static int key_pct(struct app *a, struct live_state *s, int ch)
{
    (void)a;
    if (ch == KEY_UP || ch == KEY_DOWN || ch == KEY_LEFT || ch == KEY_RIGHT || ch == 'j' ||
        ch == 'k' || ch == KEY_HOME || ch == KEY_END)
        s->pct_chosen = true;
    if (ch == KEY_LEFT)
        return live_pane_sel_move(s, LIVE_PCT, -1);
    if (ch == KEY_RIGHT)
        return live_pane_sel_move(s, LIVE_PCT, 1);
    return REACT_NONE;
}

/* A click on a flow's column picks it (the histogram shows that flow), as Left/Right would. */
static int click_pct(struct app *a, struct live_state *s, int row, int col)
{
    (void)a;
    (void)row;
    if (col < s->pct_labw || s->pct_colw <= 0)
        return REACT_REDRAW;
    int j = (col - s->pct_labw) / s->pct_colw;
    if (j >= s->pct_fit || s->pct_first + j >= s->nsel[LIVE_PCT])
        return REACT_REDRAW;
    s->list[LIVE_PCT].sel = s->pct_first + j;
    s->pct_chosen = true;
    return REACT_REDRAW;
}

const struct live_pane live_pct_pane = {.draw = draw_pct, .key = key_pct, .click = click_pct};
