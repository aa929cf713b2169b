/* live_hist: the live view's histogram pane: the latency histogram of the foreground (or of
 * the flow picked in the percentile table) on a log axis with p50/p99/p99.9 markers, counts
 * on a log or linear scale (y), or the cumulative distribution (d); in the loaded phase of a
 * quiet-vs-loaded run the quiet phase's distribution over it as dots, on the same axis and
 * as shares of each phase's samples; the transport's conditions on the bottom edge. */
#include "tui/live_pane.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "common/xalloc.h"
#include "text/text_units.h"
#include "tui/live_plot.h"

/* After the run: flow's histogram of its last measured point in the results' last phase,
 * or in the quiet phase (parsed once per choice); NULL when the results have none. */
static const struct hist *results_hist(struct app *a, struct live_state *s, int flow, bool quiet)
{
    if (s->res_hist_flow == flow && s->res_hist_quiet == quiet && s->res_hist_doc == a->results)
        return s->res_hist_ok ? s->res_hist : NULL;
    s->res_hist_flow = flow;
    s->res_hist_quiet = quiet;
    s->res_hist_doc = a->results;
    s->res_hist_ok = false;
    const char *name = a->snap->flows[flow].name;
    const struct results_run *run = app_results_run(a);
    const struct hist *h = NULL;
    for (int p = 0; run && p < run->nphases; p++) {
        const struct results_phase *ph = &run->phases[p];
        const char *pn = results_str_get(&ph->name);
        if (quiet && (!pn || strcmp(pn, "quiet")))
            continue;
        for (int i = 0; i < ph->nflows; i++) {
            const struct results_flow *fl = &ph->flows[i];
            const char *fn = results_str_get(&fl->name);
            if (!fn || strcmp(fn, name))
                continue;
            for (int k = 0; k < fl->npoints; k++)
                if (results_bool_true(&fl->points[k].measured) && fl->points[k].histogram)
                    h = fl->points[k].histogram;
        }
    }
    if (!s->res_hist)
        s->res_hist = xalloc(sizeof(*s->res_hist));
    if (h)
        hist_snapshot(h, s->res_hist);
    s->res_hist_ok = h != NULL;
    return s->res_hist_ok ? s->res_hist : NULL;
}

/* A latency of ns nanoseconds in unit u (microseconds as live_fmt_us writes them). */
static void fmt_lat(char *buf, size_t len, double ns, struct text_lat_unit u)
{
    if (u.us == 1)
        live_fmt_us(buf, len, ns);
    else
        text_lat_in(buf, len, ns / 1000, u);
}

static void draw_hist(struct app *a, struct live_state *s, struct ui *u, const struct rect *r,
                      bool focus)
{
    const struct runner_snapshot *snap = a->snap;
    /* The snapshot's histogram is hist_flow's; after the run a flow chosen since comes
     * from the results. */
    int fg = snap->hist_flow;
    const struct hist *h = &snap->hist;
    bool quiet_phase = snap->nphases == 2 && snap->phase_index == 0;
    bool two = snap->nphases == 2 && s->hist_want == snap->fg;
    if (s->hist_want >= 0 && s->hist_want < snap->nflows && snap->done && a->results &&
        (s->hist_want != fg || (two && s->hist_quiet))) {
        const struct hist *rh = results_hist(a, s, s->hist_want, two && s->hist_quiet);
        if (rh) {
            h = rh;
            fg = s->hist_want;
            quiet_phase = two && s->hist_quiet;
        }
    }
    const char *fname = fg >= 0 && fg < snap->nflows ? snap->flows[fg].name : "n/a";
    /* In a quiet-vs-loaded run the phase goes with the name. */
    char name[48];
    snprintf(name, sizeof(name), "%s%s", fname,
             snap->nphases == 2 && fg == snap->fg ? (quiet_phase ? " quiet" : " loaded") : "");
    enum mix_latency_kind k = live_pane_kind_of(a, fg);
    /* The quiet phase over the loaded one (the foreground's, kept while the quiet phase ran). */
    const struct hist *q = NULL;
    if (snap->nphases == 2 && fg == snap->fg && !quiet_phase && s->quiet_hist_ok &&
        atomic_load_explicit(&s->quiet_hist->count, memory_order_relaxed))
        q = s->quiet_hist;
    char t[4][160];
    const char *yscale = s->ylog ? "log" : "linear";
    /* The dots' own number in the title: the quiet phase's p99, in us like the axis. */
    char dots[64] = "";
    if (q)
        snprintf(dots, sizeof(dots), ", quiet %s p99 %.1f", u->utf8 ? "\u2022" : "*",
                 hist_percentile(q, 99) / 1000);
    /* The first that fits: all of it, then without the words, then without the dots'
     * number, then the short form. */
    if (s->cdf) {
        snprintf(t[0], sizeof(t[0]), "CDF %s, %s, us; share of samples at or below%s", name,
                 live_pane_kind_words(k, false), dots);
        snprintf(t[1], sizeof(t[1]), "CDF %s, %s, us%s", name, live_pane_kind_words(k, false),
                 dots);
        snprintf(t[2], sizeof(t[2]), "CDF %s, %s, us", name, live_pane_kind_words(k, false));
        snprintf(t[3], sizeof(t[3]), "CDF %s %s us", name, live_pane_kind_words(k, true));
    } else {
        snprintf(t[0], sizeof(t[0]), "Latency %s, %s, us; %s on a %s scale%s", name,
                 live_pane_kind_words(k, false), q ? "share of samples" : "count", yscale, dots);
        snprintf(t[1], sizeof(t[1]), "Latency %s, %s, us, %s y%s", name,
                 live_pane_kind_words(k, false), yscale, dots);
        snprintf(t[2], sizeof(t[2]), "Latency %s, %s, us, %s y", name,
                 live_pane_kind_words(k, false), yscale);
        snprintf(t[3], sizeof(t[3]), "%s %s us, %s y", name, live_pane_kind_words(k, true), yscale);
    }
    live_pane_box(u, r, focus, (const char *const[]){t[0], t[1], t[2], t[3]}, 4);
    /* What the transport chose (device, GID, MTU, DSCP and its priority...) on the bottom
     * edge: the conditions every number above depends on. */
    if (fg >= 0 && fg < snap->nflows && snap->flows[fg].brief[0] && r->w > 12 && r->h > 2) {
        char b[208];
        snprintf(b, sizeof(b), " %s ", snap->flows[fg].brief);
        ui_text(u, r->y + r->h - 1, r->x + 2, r->w - 4, ROLE_BORDER, b);
    }
    struct rect in = ui_inner(r);
    if (in.h < 1 || in.w < 8)
        return;
    uint64_t count = atomic_load_explicit(&h->count, memory_order_relaxed);
    if (fg < 0 || k == MIX_LAT_NONE) {
        char m[128];
        snprintf(m, sizeof(m), "The flow %s measures no latency (a stream): see its goodput.",
                 name);
        ui_text(u, in.y, in.x, in.w, ROLE_DIM, m);
        return;
    }
    if (!count) {
        const struct snap_flow *f = &snap->flows[fg];
        ui_text(u, in.y, in.x, in.w, f->status == FLOW_FAILED ? ROLE_ERROR : ROLE_DIM,
                f->status == FLOW_FAILED     ? "No samples: the flow failed (see the events)."
                : f->state == FLOW_ST_SETUP  ? "No samples yet: connecting (setup)..."
                : f->state == FLOW_ST_WARMUP ? "No samples yet: warm-up (not recorded)..."
                : f->status == FLOW_PENDING  ? "No samples yet: waiting to start..."
                : snap->done                 ? "No samples were recorded."
                                             : "No samples yet...");
        return;
    }
    bool legend = in.h >= 5;
    int bars_h = in.h - 2 - (legend ? 1 : 0);
    if (bars_h < 1) {
        bars_h = 1;
        legend = false;
    }
    struct live_axis ax;
    double mn = (double)atomic_load_explicit(&h->min, memory_order_relaxed);
    double mx = (double)atomic_load_explicit(&h->max, memory_order_relaxed);
    double axmn = mn, axmx = mx; /* one axis for both phases */
    if (q) {
        double qmn = (double)atomic_load_explicit(&q->min, memory_order_relaxed);
        double qmx = (double)atomic_load_explicit(&q->max, memory_order_relaxed);
        axmn = qmn < axmn ? qmn : axmn;
        axmx = qmx > axmx ? qmx : axmx;
    }
    live_axis_fit(&ax, axmn, axmx, in.w);
    uint64_t cols[512], qcols[512];
    if (ax.width > 512)
        live_axis_fit(&ax, axmn, axmx, 512);
    uint64_t top = live_bin(h, &ax, cols);
    uint64_t qcount = q ? atomic_load_explicit(&q->count, memory_order_relaxed) : 0;
    if (q) {
        /* The quiet counts on the loaded phase's scale: equal shares draw equal heights. */
        live_bin(q, &ax, qcols);
        for (int c = 0; c < ax.width; c++) {
            qcols[c] = (uint64_t)((double)qcols[c] * (double)count / (double)qcount + 0.5);
            top = qcols[c] > top ? qcols[c] : top;
        }
    }
    double p[3] = {hist_percentile(h, 50), hist_percentile(h, 99), hist_percentile(h, 99.9)};
    static const enum theme_role mrole[3] = {ROLE_P50, ROLE_P99, ROLE_P999};
    static const char *const mname[3] = {"p50", "p99", "p99.9"};
    int mcol[3];
    for (int i = 0; i < 3; i++)
        mcol[i] = live_axis_col(&ax, p[i]);
    bool loaded = snap->nphases == 2 && !quiet_phase;
    double frac[512], qfrac[512];
    uint64_t cum = 0, qcum = 0;
    for (int c = 0; c < ax.width; c++) {
        cum += cols[c];
        qcum += q ? qcols[c] : 0;
        if (s->cdf) {
            /* The share of samples at or below the column's values. */
            frac[c] = (double)cum / (double)count;
            qfrac[c] = q ? (double)qcum / (double)count : 0;
            continue;
        }
        frac[c] = live_bar_frac(cols[c], top, s->ylog);
        qfrac[c] = q ? live_bar_frac(qcols[c], top, s->ylog) : 0;
        /* A non-empty column always shows at least one eighth of a row. */
        if (cols[c] && frac[c] * bars_h * 8 < 1)
            frac[c] = 1.0 / (bars_h * 8);
    }
    live_pane_vbars(u, in.y + bars_h - 1, in.x, bars_h, frac, ax.width,
                    loaded ? ROLE_BAR_LOADED : ROLE_BAR);
    /* The quiet phase as a dot at its height in each column that has any. */
    for (int c = 0; q && c < ax.width; c++) {
        if (qfrac[c] <= 0 || (!s->cdf && !qcols[c]))
            continue;
        int kq = (int)ceil(qfrac[c] * bars_h) - 1;
        kq = kq < 0 ? 0 : kq >= bars_h ? bars_h - 1 : kq;
        ui_text(u, in.y + bars_h - 1 - kq, in.x + c, 1, ROLE_BAR, u->utf8 ? "•" : "*");
    }
    /* The columns holding the percentiles again, in the markers' colours. */
    for (int i = 0; i < 3; i++)
        ui_vbar(u, in.y + bars_h - 1, in.x + mcol[i], bars_h, frac[mcol[i]], mrole[i]);
    /* The axis line with decade ticks, the markers on it, the labels below. */
    int ay = in.y + bars_h;
    char line[2048];
    size_t n = 0;
    struct live_tick ticks[32];
    int nt = live_axis_ticks(&ax, ticks, 32);
    for (int c = 0; c < ax.width && n + 4 < sizeof(line); c++) {
        bool tick = false;
        for (int i = 0; i < nt; i++)
            tick |= ticks[i].col == c;
        const char *g = u->utf8 ? (tick ? "┬" : "─") : (tick ? "+" : "-");
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%s", g);
    }
    ui_text(u, ay, in.x, ax.width, ROLE_DIM, line);
    const char *mark = u->utf8 ? "▲" : "^";
    for (int i = 0; i < 3; i++)
        ui_text(u, ay, in.x + mcol[i], 1, mrole[i], mark);
    for (int i = 0; i < nt; i++)
        if (ticks[i].label_x >= 0)
            ui_text(u, ay + 1, in.x + ticks[i].label_x, ax.width - ticks[i].label_x, ROLE_DIM,
                    ticks[i].label);
    if (!legend)
        return;
    /* Legend: each marker with its value, then the maximum and the count, in the unit the
     * p99.9 reads best in (text_units.h). */
    struct text_lat_unit unit = text_lat_unit_for(p[2] / 1000);
    int x = in.x, end = in.x + in.w;
    for (int i = 0; i < 3 && x < end; i++) {
        char v[32], seg[64];
        fmt_lat(v, sizeof(v), p[i], unit);
        snprintf(seg, sizeof(seg), "%s %s ", mname[i], v);
        if (x + 1 + ui_width(seg) > end)
            break;
        ui_text(u, ay + 2, x, 1, mrole[i], mark);
        ui_text(u, ay + 2, x + 1, end - x - 1, mrole[i], seg);
        x += 1 + ui_width(seg);
    }
    char v[32], cnt[32], seg[96];
    fmt_lat(v, sizeof(v), mx, unit);
    live_fmt_si(cnt, sizeof(cnt), (double)count);
    snprintf(seg, sizeof(seg), "max %s %s, n=%s", v, unit.abbr, cnt);
    if (x + ui_width(seg) > end)
        snprintf(seg, sizeof(seg), "max %s %s", v, unit.abbr);
    if (x + ui_width(seg) > end)
        snprintf(seg, sizeof(seg), "%s", unit.abbr);
    ui_text(u, ay + 2, x, end - x, ROLE_NORMAL, seg);
}

const struct live_pane live_hist_pane = {.draw = draw_hist};
