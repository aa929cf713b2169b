/* view_live: the live run view (F4): the foreground's latency histogram on a log axis with
 * p50/p99/p99.9 markers, a percentile table (per flow, quiet vs loaded side by side), goodput
 * timelines, port-wide counters and TCP numbers per flow, the events log and the progress. */
/* strcasestr is a GNU extension. */
#define _GNU_SOURCE
#include "tui/views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "tui/live_plot.h"

enum { P_HIST = 0, P_PCT, P_TL, P_CTR, P_EV, P_COUNT };

/* One column of the percentile table: a flow in a phase, or the loaded/quiet ratio.
 * Latencies in ns; NaN means n/a. */
struct pcol {
    char head[32];
    enum theme_role role; /* of the header */
    bool ratio;           /* loaded / quiet */
    uint64_t size;        /* bytes; 0 with size_valid: a distribution */
    bool size_valid;
    int point, npoints;
    double count, p50, p90, p99, p999, max, gbps, ops;
    double busbw; /* collectives: GB/s from the mean per-operation time, as nccl-tests */
    int flow;     /* the flow's index in the snapshot; -1 for the ratio column */
    bool quiet;   /* the foreground's quiet column */
};

/* What the foreground's quiet phase looked like when last seen, kept for the loaded phase. */
struct quiet_memory {
    bool valid;
    struct pcol col;
};

/* A line of the counters pane. */
enum cline_kind { CL_HEAD, CL_OBJECT, CL_TCP, CL_CTR, CL_NOTE };
struct cline {
    enum cline_kind kind;
    int ref;          /* flow (CL_TCP) or counter (CL_CTR, CL_OBJECT) index */
    const char *text; /* CL_HEAD, CL_NOTE */
};

struct live_state {
    int sel[P_COUNT], top[P_COUNT];
    int nsel[P_COUNT]; /* selectable items in each pane at the last draw */
    bool ev_follow;    /* the events pane shows the newest lines */
    bool ylog;         /* histogram counts on a log scale */
    bool ctr_tcp;      /* on a small screen: show the TCP lines instead of the counters */
    bool all_counters; /* also those known not to have moved since the test started */
    int ctr_moved;     /* counters shown / in the snapshot at the last draw */
    int ctr_total;
    char sel_term[64]; /* the selected counter's name, for ? */
    /* which run the memory belongs to */
    const struct runner *runner;
    uint64_t last_gen;
    struct quiet_memory quiet;
    /* The histogram follows the flow selected in the percentile table once the user has
     * moved that selection (pct_chosen); hist_want is that flow, -1 the foreground. After
     * the run another flow's comes from the results (res_hist, parsed once per choice). */
    bool pct_chosen;
    int hist_want;
    bool hist_quiet; /* the quiet column is picked: after the run, the quiet phase's */
    struct hist *res_hist;
    int res_hist_flow;
    bool res_hist_quiet;
    const cJSON *res_hist_doc;
    bool res_hist_ok;
};

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
    if (s)
        free(s->res_hist);
    free(a->vstate[VIEW_LIVE]);
    a->vstate[VIEW_LIVE] = NULL;
}

/* ---- what the snapshot and results say ---- */

static void pcol_clear(struct pcol *c, const char *head)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->head, sizeof(c->head), "%s", head);
    c->role = ROLE_BORDER;
    c->count = c->p50 = c->p90 = c->p99 = c->p999 = c->max = c->gbps = c->ops = c->busbw = NAN;
    c->flow = -1;
}

static void pcol_from_snap(struct pcol *c, const struct snap_flow *f, const char *head)
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

/* A flow's last measured point in a results phase; false when the phase or flow is absent. */
static bool pcol_from_results(struct pcol *c, const cJSON *res, const char *phase, const char *flow,
                              const char *head)
{
    pcol_clear(c, head);
    const cJSON *ph, *fl, *pt, *last = NULL;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItem(res, "phases"))
    {
        const char *pn = jsonutil_str(ph, "name");
        if (phase && (!pn || strcmp(pn, phase)))
            continue;
        cJSON_ArrayForEach(fl, cJSON_GetObjectItem(ph, "flows"))
        {
            const char *fn = jsonutil_str(fl, "name");
            if (!fn || strcmp(fn, flow))
                continue;
            int i = 0, n = cJSON_GetArraySize(cJSON_GetObjectItem(fl, "points"));
            cJSON_ArrayForEach(pt, cJSON_GetObjectItem(fl, "points"))
            {
                if (cJSON_IsTrue(cJSON_GetObjectItem(pt, "measured"))) {
                    last = pt;
                    c->point = i;
                }
                i++;
            }
            c->npoints = n;
        }
    }
    if (!last)
        return false;
    double size;
    c->size_valid = true;
    c->size = jsonutil_num(last, "size_bytes", &size) ? (uint64_t)size : 0;
    const cJSON *lat = cJSON_GetObjectItem(last, "latency");
    c->count = jnum(lat, "count", 1);
    c->p50 = jnum(lat, "p50", 1000);
    c->p90 = jnum(lat, "p90", 1000);
    c->p99 = jnum(lat, "p99", 1000);
    c->p999 = jnum(lat, "p99.9", 1000);
    c->max = jnum(lat, "max", 1000);
    c->gbps = jnum(last, "goodput_gbps", 1);
    c->ops = jnum(last, "ops_per_s", 1);
    /* The same busbw as the snapshot's: the point's S over the mean per-operation time. */
    const cJSON *nc = cJSON_GetObjectItem(last, "nccl");
    double mean = jnum(lat, "mean", 1000), sb = jnum(nc, "bytes", 1),
           fac = jnum(nc, "busbw_factor", 1);
    if (mean > 0 && sb > 0 && fac > 0)
        c->busbw = sb / mean * fac;
    return true;
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
        s->pct_chosen = false;
        s->hist_want = -1;
        s->ev_follow = true;
        s->last_gen = 0;
        memset(s->sel, 0, sizeof(s->sel));
        memset(s->top, 0, sizeof(s->top));
    }
    if (!snap)
        return;
    s->last_gen = snap->gen;
    /* While it measures: at teardown the last interval's rates read 0. */
    if (snap->nphases == 2 && snap->phase_index == 0 && snap->fg >= 0 && snap->fg < snap->nflows &&
        (snap->flows[snap->fg].valid & SNAP_V_LAT) &&
        snap->flows[snap->fg].state == FLOW_ST_MEASURE) {
        pcol_from_snap(&s->quiet.col, &snap->flows[snap->fg], "quiet");
        s->quiet.valid = true;
    }
}

static const struct mix_flow *spec_of(const struct app *a, int i)
{
    return a->have_run_mix && i >= 0 && i < a->run_mix.nflows ? &a->run_mix.flows[i] : NULL;
}

static enum mix_latency_kind kind_of(const struct app *a, int i)
{
    const struct mix_flow *f = spec_of(a, i);
    return f ? mix_latency_kind_of(f) : MIX_LAT_NONE;
}

static const char *kind_words(enum mix_latency_kind k, bool brief)
{
    switch (k) {
    case MIX_LAT_HALF_RTT:
        return brief ? "half RTT" : "half round trip";
    case MIX_LAT_RTT:
        return "round trip";
    case MIX_LAT_PER_OP:
        return "per operation";
    default:
        return "no latency";
    }
}

static void fmt_gbps(char *buf, size_t len, double g)
{
    if (isnan(g))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, g < 10 ? "%.3f" : g < 100 ? "%.2f" : "%.1f", g);
}

/* Columns of vertical bars (fractions of height rows), one text call per row rather than
 * one per cell: a frame at 132x43 is drawn in well under a millisecond. The glyphs match
 * ui_vbar's (eighth blocks in UTF-8, '#' from half a row otherwise). */
static void vbars(struct ui *u, int y_bottom, int x, int height, const double *frac, int n,
                  enum theme_role role)
{
    static const char *const eighths[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    char row[4 * 512 + 1];
    n = n > 512 ? 512 : n;
    for (int i = 0; i < height; i++) {
        size_t len = 0;
        for (int c = 0; c < n; c++) {
            double f = frac[c] > 1 ? 1 : frac[c] > 0 ? frac[c] : 0;
            int k = (int)(f * height * 8 + 0.5) - i * 8;
            k = k < 0 ? 0 : k > 8 ? 8 : k;
            const char *g = u->utf8 ? eighths[k] : k >= 4 ? "#" : " ";
            size_t gl = strlen(g);
            memcpy(row + len, g, gl);
            len += gl;
        }
        row[len] = '\0';
        ui_text(u, y_bottom - i, x, n, role, row);
    }
}

/* ---- the histogram ---- */

/* The first title that fits the box. */
static void box_title(struct ui *u, const struct rect *r, bool focus, const char *const *variants,
                      int n)
{
    int i = 0;
    while (i < n - 1 && ui_width(variants[i]) > r->w - 6)
        i++;
    ui_box(u, r, variants[i], focus);
}

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
    const cJSON *ph, *fl, *pt, *hj = NULL;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItem(a->results, "phases"))
    {
        const char *pn = jsonutil_str(ph, "name");
        if (quiet && (!pn || strcmp(pn, "quiet")))
            continue;
        cJSON_ArrayForEach(fl, cJSON_GetObjectItem(ph, "flows"))
        {
            const char *fn = jsonutil_str(fl, "name");
            if (!fn || strcmp(fn, name))
                continue;
            cJSON_ArrayForEach(pt, cJSON_GetObjectItem(fl, "points"))
            {
                const cJSON *h = cJSON_GetObjectItem(pt, "histogram");
                if (cJSON_IsTrue(cJSON_GetObjectItem(pt, "measured")) && cJSON_IsObject(h))
                    hj = h;
            }
        }
    }
    if (!s->res_hist)
        s->res_hist = xalloc(sizeof(*s->res_hist));
    s->res_hist_ok = hj && hist_from_json(hj, s->res_hist) == 0;
    return s->res_hist_ok ? s->res_hist : NULL;
}

static void draw_hist(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct live_state *s = st(a);
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
    enum mix_latency_kind k = kind_of(a, fg);
    char t[3][160];
    const char *yscale = s->ylog ? "log" : "linear";
    snprintf(t[0], sizeof(t[0]), "Latency %s, %s, us; count on a %s scale", name,
             kind_words(k, false), yscale);
    snprintf(t[1], sizeof(t[1]), "Latency %s, %s, us, %s y", name, kind_words(k, false), yscale);
    snprintf(t[2], sizeof(t[2]), "%s %s us, %s y", name, kind_words(k, true), yscale);
    box_title(u, r, focus, (const char *const[]){t[0], t[1], t[2]}, 3);
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
    live_axis_fit(&ax, mn, mx, in.w);
    uint64_t cols[512];
    if (ax.width > 512)
        live_axis_fit(&ax, mn, mx, 512);
    uint64_t top = live_bin(h, &ax, cols);
    double p[3] = {hist_percentile(h, 50), hist_percentile(h, 99), hist_percentile(h, 99.9)};
    static const enum theme_role mrole[3] = {ROLE_P50, ROLE_P99, ROLE_P999};
    static const char *const mname[3] = {"p50", "p99", "p99.9"};
    int mcol[3];
    for (int i = 0; i < 3; i++)
        mcol[i] = live_axis_col(&ax, p[i]);
    bool loaded = snap->nphases == 2 && !quiet_phase;
    double frac[512];
    for (int c = 0; c < ax.width; c++) {
        frac[c] = live_bar_frac(cols[c], top, s->ylog);
        /* A non-empty column always shows at least one eighth of a row. */
        if (cols[c] && frac[c] * bars_h * 8 < 1)
            frac[c] = 1.0 / (bars_h * 8);
    }
    vbars(u, in.y + bars_h - 1, in.x, bars_h, frac, ax.width, loaded ? ROLE_BAR_LOADED : ROLE_BAR);
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
    /* Legend: each marker with its value in us, then the maximum and the count. */
    int x = in.x, end = in.x + in.w;
    for (int i = 0; i < 3 && x < end; i++) {
        char v[32], seg[64];
        live_fmt_us(v, sizeof(v), p[i]);
        snprintf(seg, sizeof(seg), "%s %s ", mname[i], v);
        if (x + 1 + ui_width(seg) > end)
            break;
        ui_text(u, ay + 2, x, 1, mrole[i], mark);
        ui_text(u, ay + 2, x + 1, end - x - 1, mrole[i], seg);
        x += 1 + ui_width(seg);
    }
    char v[32], cnt[32], seg[96];
    live_fmt_us(v, sizeof(v), mx);
    live_fmt_si(cnt, sizeof(cnt), (double)count);
    snprintf(seg, sizeof(seg), "max %s us, n=%s", v, cnt);
    if (x + ui_width(seg) > end)
        snprintf(seg, sizeof(seg), "max %s us", v);
    if (x + ui_width(seg) > end)
        snprintf(seg, sizeof(seg), "us");
    ui_text(u, ay + 2, x, end - x, ROLE_NORMAL, seg);
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

static double pfield_val(const struct pcol *c, enum pfield f)
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
static void pcell(char *buf, size_t len, const struct pcol *c, enum pfield f, int width)
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
        fmt_gbps(buf, len, c->gbps);
        break;
    case F_BUSBW:
        fmt_gbps(buf, len, c->busbw); /* GB/s, same digits as Gb/s */
        break;
    default:
        live_fmt_us(buf, len, pfield_val(c, f));
    }
}

/* The table's columns: the foreground quiet, loaded and their ratio for a two-phase mix,
 * then every other flow of the current phase. Returns the count. */
static int build_cols(struct app *a, struct pcol *cols, int max)
{
    struct live_state *s = st(a);
    const struct runner_snapshot *snap = a->snap;
    const cJSON *res = a->results;
    int n = 0, fg = snap->fg;
    bool two = snap->nphases == 2 && fg >= 0 && fg < snap->nflows;
    const char *cur = res ? NULL : snap->phase_name; /* results: the last phase */
    if (two && n + 3 <= max) {
        const char *fname = snap->flows[fg].name;
        struct pcol *q = &cols[n++], *l = &cols[n++];
        if (!(res && pcol_from_results(q, res, "quiet", fname, "quiet"))) {
            if (snap->phase_index == 0)
                pcol_from_snap(q, &snap->flows[fg], "quiet");
            else if (s->quiet.valid)
                *q = s->quiet.col;
            else
                pcol_clear(q, "quiet");
        }
        if (!(res && pcol_from_results(l, res, "loaded", fname, "loaded"))) {
            if (snap->phase_index == 1)
                pcol_from_snap(l, &snap->flows[fg], "loaded");
            else
                pcol_clear(l, "loaded");
        }
        q->role = ROLE_BAR;
        l->role = ROLE_BAR_LOADED;
        q->flow = l->flow = fg;
        q->quiet = true;
        struct pcol *r = &cols[n++];
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
        struct pcol *c = &cols[n++];
        const char *ph = res ? (snap->nphases == 2 ? "loaded" : NULL) : cur;
        if (!(res && pcol_from_results(c, res, ph, f->name, f->name)))
            pcol_from_snap(c, f, f->name);
        c->role = f->status == FLOW_FAILED ? ROLE_ERROR : ROLE_BORDER;
        c->flow = i;
        if (kind_of(a, i) == MIX_LAT_NONE)
            c->count = c->p50 = c->p90 = c->p99 = c->p999 = c->max = NAN;
    }
    return n;
}

static void draw_pct(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct live_state *s = st(a);
    const struct runner_snapshot *snap = a->snap;
    struct pcol cols[MIX_MAX_FLOWS + 3];
    int ncols = build_cols(a, cols, MIX_MAX_FLOWS + 3);
    bool two = snap->nphases == 2 && snap->fg >= 0;
    char t[3][160];
    const char *fname = snap->fg >= 0 ? snap->flows[snap->fg].name : "";
    if (two) {
        snprintf(t[0], sizeof(t[0]), "Percentiles, us: %s quiet vs loaded, other flows", fname);
        snprintf(t[1], sizeof(t[1]), "Percentiles, us: %s quiet vs loaded", fname);
        snprintf(t[2], sizeof(t[2]), "us: quiet vs loaded");
    } else {
        snprintf(t[0], sizeof(t[0]), "Percentiles per flow, us (latency), Gb/s, ops/s");
        snprintf(t[1], sizeof(t[1]), "Percentiles per flow, us");
        snprintf(t[2], sizeof(t[2]), "Per flow, us");
    }
    box_title(u, r, focus, (const char *const[]){t[0], t[1], t[2]}, 3);
    struct rect in = ui_inner(r);
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
    s->nsel[P_PCT] = ncols;
    if (s->sel[P_PCT] >= ncols)
        s->sel[P_PCT] = ncols ? ncols - 1 : 0;
    if (s->sel[P_PCT] < s->top[P_PCT])
        s->top[P_PCT] = s->sel[P_PCT];
    if (s->sel[P_PCT] >= s->top[P_PCT] + fit)
        s->top[P_PCT] = s->sel[P_PCT] - fit + 1;
    /* The histogram shows the selected column's flow once the user has chosen one (the
     * ratio column keeps the one before). */
    if (s->pct_chosen && ncols && cols[s->sel[P_PCT]].flow >= 0) {
        s->hist_want = cols[s->sel[P_PCT]].flow;
        s->hist_quiet = cols[s->sel[P_PCT]].quiet;
    }
    if (a->runner && !runner_done(a->runner))
        runner_show_hist(a->runner, s->hist_want);
    int first = s->top[P_PCT];
    ui_text(u, in.y, in.x, labw, ROLE_DIM, "us");
    for (int j = 0; j < fit && first + j < ncols; j++) {
        const struct pcol *c = &cols[first + j];
        char h[40];
        snprintf(h, sizeof(h), "%*.*s", colw - 1, colw - 1, c->head);
        bool sel = focus && first + j == s->sel[P_PCT];
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
            const struct pcol *c = &cols[first + j];
            char v[40], cell[48];
            pcell(v, sizeof(v), c, (enum pfield)f, colw - 1);
            snprintf(cell, sizeof(cell), "%*s", colw - 1, v);
            enum theme_role role = !strcmp(v, "n/a") ? ROLE_DIM
                                   : f == F_P50      ? ROLE_P50
                                   : f == F_P99      ? ROLE_P99
                                   : f == F_P999     ? ROLE_P999
                                                     : ROLE_NORMAL;
            if (c->ratio && strcmp(v, "n/a") && f != F_SIZE && f != F_COUNT) {
                /* Loaded more than 10% worse than quiet: a warning colour. */
                double x = pfield_val(c, (enum pfield)f);
                bool worse = f == F_GBPS || f == F_OPS || f == F_BUSBW ? x < 0.9 : x > 1.1;
                role = worse ? ROLE_WARN : ROLE_OK;
            }
            ui_text(u, in.y + row, in.x + labw + j * colw, colw, role, cell);
        }
        row++;
    }
}

/* ---- the goodput timelines ---- */

static void draw_timeline(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct live_state *s = st(a);
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
    if (t1 >= t0) {
        snprintf(t[0], sizeof(t[0]), "Goodput per flow, Gb/s, %.1f-%.1f s of the run", t0, t1);
        snprintf(t[1], sizeof(t[1]), "Goodput, Gb/s, %.1f-%.1f s", t0, t1);
    } else {
        snprintf(t[0], sizeof(t[0]), "Goodput per flow, Gb/s: no samples yet");
        snprintf(t[1], sizeof(t[1]), "Goodput, Gb/s");
    }
    box_title(u, r, focus, (const char *const[]){t[0], t[1]}, 2);
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
    s->nsel[P_TL] = snap->nflows;
    if (s->sel[P_TL] >= snap->nflows)
        s->sel[P_TL] = snap->nflows - 1;
    if (s->sel[P_TL] < s->top[P_TL])
        s->top[P_TL] = s->sel[P_TL];
    if (s->sel[P_TL] >= s->top[P_TL] + vis)
        s->top[P_TL] = s->sel[P_TL] - vis + 1;
    float vals[512];
    for (int k = 0; k < vis && s->top[P_TL] + k < snap->nflows; k++) {
        int i = s->top[P_TL] + k;
        const struct snap_flow *f = &snap->flows[i];
        int y = in.y + 1 + k * rows_per;
        bool sel = focus && i == s->sel[P_TL];
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
        double mx = 0;
        for (int j = 0; j < f->ntl; j++)
            mx = f->tl_goodput[j] > mx ? f->tl_goodput[j] : mx;
        char now[24], top[24], nums[64];
        fmt_gbps(now, sizeof(now), f->valid & SNAP_V_RATE ? f->goodput_gbps : NAN);
        fmt_gbps(top, sizeof(top), f->ntl ? mx : NAN);
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
            vbars(u, y + rows_per - 1, chart_x, rows_per, frac, nc, bar);
        }
    }
}

/* ---- counters and TCP numbers ---- */

/* Our own words for the sources (the counters module may not be linked in every build). */
static const char *source_str(enum counters_source src)
{
    static const char *const names[] = {
        [COUNTERS_SRC_IB] = "IB port counters", [COUNTERS_SRC_HW] = "RDMA hw counters",
        [COUNTERS_SRC_NETDEV] = "netdev",       [COUNTERS_SRC_ETHTOOL] = "ethtool",
        [COUNTERS_SRC_QDISC] = "qdisc",         [COUNTERS_SRC_SNMP] = "kernel TCP/IP",
    };
    if (src == COUNTERS_SRC_QP) /* an RDMA counter bound to the test's own QPs
                                   (engine/counters/counters_qp.h) */
        return "this test's queue pairs";
    return (unsigned)src < sizeof(names) / sizeof(names[0]) ? names[src] : "?";
}

static const char *unit_short(const char *unit)
{
    if (!unit)
        return "";
    static const struct {
        const char *unit, *s;
    } m[] = {
        {"bytes", "B"}, {"packets", "pkt"}, {"events", ""}, {"count", ""}, {"segments", "seg"}};
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if (!strcmp(unit, m[i].unit))
            return m[i].s;
    return unit;
}

static void ctr_num(char *buf, size_t len, double v, const char *unit, bool valid)
{
    if (!valid) {
        snprintf(buf, len, "n/a");
        return;
    }
    char n[24];
    live_fmt_si(n, sizeof(n), v);
    const char *us = unit_short(unit);
    snprintf(buf, len, "%s%s%s", n, *us ? " " : "", us);
}

/* By default only counters that moved during the test (or whose state is unknown or odd)
 * are listed: a node has hundreds, nearly all of them still. */
static bool ctr_shown(const struct live_state *s, const struct counters_value *c)
{
    if (c->setting) /* configuration (forwarding, TTL, RTO bounds): only with z */
        return s->all_counters;
    if (s->all_counters || c->saturated || c->reset || c->reset_since_mark ||
        !(c->valid & COUNTERS_V_VALUE))
        return true;
    if (c->kind == COUNTERS_GAUGE)
        return c->value != 0 || ((c->valid & COUNTERS_V_PEAK) && c->peak != 0);
    return !(c->valid & COUNTERS_V_DELTA) || c->delta != 0 ||
           ((c->valid & COUNTERS_V_RATE) && c->rate != 0);
}

/* Flows with TCP_INFO to show (the other transports have none). */
static int tcp_flows(const struct runner_snapshot *snap)
{
    int n = 0;
    for (int i = 0; i < snap->nflows; i++)
        n += !strcmp(snap->flows[i].transport, "tcp");
    return n;
}

/* The pane's lines: the TCP section and/or the counters section. */
static int build_clines(struct app *a, int h, struct cline *out, int max, bool *both)
{
    struct live_state *s = st(a);
    const struct runner_snapshot *snap = a->snap;
    int nctr = 0;
    for (int i = 0; i < snap->ncounters; i++)
        nctr += ctr_shown(s, &snap->counters[i]);
    s->ctr_moved = nctr;
    s->ctr_total = snap->ncounters;
    int ntcp = tcp_flows(snap);
    bool tcp = ntcp > 0, ctr = true;
    *both = !tcp || snap->ncounters == 0 || h >= 1 + ntcp + 1 + 5;
    if (!*both) {
        tcp = s->ctr_tcp;
        ctr = !s->ctr_tcp;
    }
    int n = 0;
    if (tcp && n < max) {
        out[n++] = (struct cline){CL_HEAD, -1, "TCP per flow"};
        for (int i = 0; i < snap->nflows && n < max; i++)
            if (!strcmp(snap->flows[i].transport, "tcp"))
                out[n++] = (struct cline){CL_TCP, i, NULL};
    }
    if (ctr && n < max) {
        if (snap->ncounters == 0) {
            out[n++] = (struct cline){CL_NOTE, -1, "counters: n/a (none sampled)"};
            return n;
        }
        out[n++] = (struct cline){CL_HEAD, -1, "port-wide"};
        if (nctr == 0 && n < max)
            out[n++] = (struct cline){CL_NOTE, -1, "(none moved during the test; z: all)"};
        const char *obj = NULL;
        for (int i = 0; i < snap->ncounters && n < max; i++) {
            const struct counters_value *c = &snap->counters[i];
            if (!ctr_shown(s, c))
                continue;
            if ((!obj || strcmp(obj, c->object)) && n < max) {
                out[n++] = (struct cline){CL_OBJECT, i, NULL};
                obj = c->object;
            }
            if (n < max)
                out[n++] = (struct cline){CL_CTR, i, NULL};
        }
    }
    return n;
}

static void draw_ctr(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct live_state *s = st(a);
    const struct runner_snapshot *snap = a->snap;
    struct rect in = ui_inner(r);
    int maxl = snap->ncounters * 2 + snap->nflows + 8;
    struct cline *lines = xalloc_zero((size_t)maxl, sizeof(*lines));
    bool both;
    int n = build_clines(a, in.h, lines, maxl, &both);
    char t[3][128];
    if (!tcp_flows(snap)) {
        snprintf(t[0], sizeof(t[0]), "Counters, port-wide (? explains)");
        snprintf(t[1], sizeof(t[1]), "Counters, port-wide");
    } else if (both && snap->ncounters)
        snprintf(t[0], sizeof(t[0]), "TCP per flow; counters, port-wide (? explains)");
    else if (both)
        snprintf(t[0], sizeof(t[0]), "TCP per flow (? explains)");
    else if (s->ctr_tcp)
        snprintf(t[0], sizeof(t[0]), "TCP per flow (c: port-wide counters)");
    else
        snprintf(t[0], sizeof(t[0]), "Counters, port-wide (c: TCP, ? explains)");
    if (tcp_flows(snap))
        snprintf(t[1], sizeof(t[1]), "%s",
                 both         ? "TCP; counters, port-wide"
                 : s->ctr_tcp ? "TCP per flow (c)"
                              : "Counters, port-wide (c)");
    box_title(u, r, focus, (const char *const[]){t[0], t[1]}, 2);
    if (in.h < 1 || in.w < 20) {
        free(lines);
        return;
    }
    /* Selection runs over TCP and counter lines only. */
    int nsel = 0, sel_line = -1;
    for (int i = 0; i < n; i++)
        if (lines[i].kind == CL_TCP || lines[i].kind == CL_CTR) {
            if (nsel == s->sel[P_CTR])
                sel_line = i;
            nsel++;
        }
    s->nsel[P_CTR] = nsel;
    if (nsel && s->sel[P_CTR] >= nsel) {
        s->sel[P_CTR] = nsel - 1;
        for (int i = n - 1; i >= 0; i--)
            if (lines[i].kind == CL_TCP || lines[i].kind == CL_CTR) {
                sel_line = i;
                break;
            }
    }
    s->sel_term[0] = '\0';
    if (sel_line >= 0) {
        if (lines[sel_line].kind == CL_CTR)
            snprintf(s->sel_term, sizeof(s->sel_term), "%s",
                     snap->counters[lines[sel_line].ref].name);
        else
            snprintf(s->sel_term, sizeof(s->sel_term), "retrans");
    }
    int top = s->top[P_CTR];
    if (sel_line >= 0 && sel_line < top)
        top =
            sel_line > 0 && lines[sel_line - 1].kind != CL_TCP && lines[sel_line - 1].kind != CL_CTR
                ? sel_line - 1
                : sel_line;
    if (sel_line >= top + in.h)
        top = sel_line - in.h + 1;
    if (top > n - in.h)
        top = n - in.h > 0 ? n - in.h : 0;
    if (sel_line >= 0 && sel_line < top)
        top = sel_line;
    s->top[P_CTR] = top;
    bool wide = in.w >= 56;
    const int numw = wide ? 12 : 10, tcpw = wide ? 10 : 8;
    for (int row = 0; row < in.h && top + row < n; row++) {
        const struct cline *l = &lines[top + row];
        int y = in.y + row;
        bool sel = focus && top + row == sel_line;
        char buf[256];
        switch (l->kind) {
        case CL_HEAD:
            if (!strcmp(l->text, "TCP per flow")) {
                int nw = in.w - 3 * tcpw;
                snprintf(buf, sizeof(buf), "%-*.*s%*s%*s%*s", nw, nw, "flow", tcpw, "retrans", tcpw,
                         "RTT us", tcpw, "cwnd");
            } else {
                int nw = in.w - (wide ? 3 : 2) * numw;
                char what[96];
                if (s->all_counters)
                    snprintf(what, sizeof(what), "all %d counters%s", s->ctr_total,
                             wide ? " (z: moved)" : "");
                else
                    snprintf(what, sizeof(what), "%d/%d moved%s", s->ctr_moved, s->ctr_total,
                             wide ? " (z: all)" : "");
                if (wide)
                    snprintf(buf, sizeof(buf), "%-*.*s%*s%*s%*s", nw, nw, what, numw, "total", numw,
                             "per s", numw, "in test");
                else
                    snprintf(buf, sizeof(buf), "%-*.*s%*s%*s", nw, nw, what, numw, "per s", numw,
                             "in test");
            }
            ui_text(u, y, in.x, in.w, ROLE_DIM, buf);
            break;
        case CL_NOTE:
            ui_text(u, y, in.x, in.w, ROLE_DIM, l->text);
            break;
        case CL_OBJECT: {
            const struct counters_value *c = &snap->counters[l->ref];
            snprintf(buf, sizeof(buf), "%s (%s)", c->object, source_str(c->source));
            ui_text(u, y, in.x, in.w, ROLE_INFO, buf);
            break;
        }
        case CL_TCP: {
            const struct snap_flow *f = &snap->flows[l->ref];
            char rt[24] = "n/a", rtt[24] = "n/a", cw[24] = "n/a";
            bool ok = f->wire.valid;
            if (ok) {
                snprintf(rt, sizeof(rt), "%llu", (unsigned long long)f->wire.retrans);
                snprintf(rtt, sizeof(rtt), "%.1f", f->wire.rtt_us);
                /* Whole KiB: fits the column; the window is hundreds of KiB or more. */
                double kib = f->wire.cwnd_bytes / 1024.0;
                if (kib < 10000)
                    snprintf(cw, sizeof(cw), "%.0fKiB", kib);
                else
                    snprintf(cw, sizeof(cw), "%.0fMiB", kib / 1024);
            }
            int nw = in.w - 3 * tcpw;
            snprintf(buf, sizeof(buf), " %-*.*s%*s%*s%*s", nw - 1, nw - 1, f->name, tcpw, rt, tcpw,
                     rtt, tcpw, cw);
            enum theme_role role = sel                   ? ROLE_SELECTED
                                   : !ok                 ? ROLE_DIM
                                   : f->wire.retrans > 0 ? ROLE_WARN
                                                         : ROLE_NORMAL;
            ui_text_pad(u, y, in.x, in.w, role, buf);
            break;
        }
        case CL_CTR: {
            const struct counters_value *c = &snap->counters[l->ref];
            char val[32], rate[32], delta[32];
            bool gauge = c->kind == COUNTERS_GAUGE;
            ctr_num(val, sizeof(val), c->value, c->unit, c->valid & COUNTERS_V_VALUE);
            /* A gauge is a level: its value where a rate would be, its peak in the test. */
            if (gauge)
                snprintf(rate, sizeof(rate), "%s", val);
            else
                ctr_num(rate, sizeof(rate), c->rate, c->unit, c->valid & COUNTERS_V_RATE);
            if (c->saturated) {
                snprintf(delta, sizeof(delta), "saturated");
            } else if (gauge) {
                char pk[32];
                ctr_num(pk, sizeof(pk), c->peak, c->unit, c->valid & COUNTERS_V_PEAK);
                snprintf(delta, sizeof(delta), "max %s", pk);
                if ((int)strlen(delta) > numw - 1)
                    snprintf(delta, sizeof(delta), "%s", pk);
            } else {
                ctr_num(delta, sizeof(delta), c->delta, c->unit, c->valid & COUNTERS_V_DELTA);
            }
            int nw = in.w - (wide ? 3 : 2) * numw;
            char name[80];
            snprintf(name, sizeof(name), " %s%s", c->name,
                     c->reset || c->reset_since_mark ? " (reset)" : "");
            if (wide)
                snprintf(buf, sizeof(buf), "%-*.*s%*s%*s%*s", nw, nw, name, numw, val, numw, rate,
                         numw, delta);
            else
                snprintf(buf, sizeof(buf), "%-*.*s%*s%*s", nw, nw, name, numw, rate, numw, delta);
            bool bad = c->error_like && (c->valid & COUNTERS_V_DELTA) && c->delta > 0;
            enum theme_role role = sel                                               ? ROLE_SELECTED
                                   : bad                                             ? ROLE_ERROR
                                   : c->saturated || c->reset || c->reset_since_mark ? ROLE_WARN
                                   : !(c->valid & COUNTERS_V_VALUE)                  ? ROLE_DIM
                                                                                     : ROLE_NORMAL;
            ui_text_pad(u, y, in.x, in.w, role, buf);
            break;
        }
        }
    }
    free(lines);
}

/* ---- events and progress ---- */

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
    bool interrupted = a->results && cJSON_IsTrue(cJSON_GetObjectItem(a->results, "interrupted"));
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
        snprintf(buf, len, "%smeasuring, %.1f of %.1f s, %.1f s left", ph, el, tot,
                 tot > el ? tot - el : 0);
        break;
    default:
        snprintf(buf, len, "%stearing down, %.1f s", ph, el);
        break;
    }
    return frac;
}

static void draw_events(struct app *a, struct ui *u, const struct rect *r, bool focus)
{
    struct live_state *s = st(a);
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
    int n = snap->nevents;
    s->nsel[P_EV] = n;
    if (s->ev_follow || s->sel[P_EV] >= n)
        s->sel[P_EV] = n ? n - 1 : 0;
    int top = s->sel[P_EV] - in.h + 1;
    if (!s->ev_follow && s->top[P_EV] <= s->sel[P_EV] && s->sel[P_EV] < s->top[P_EV] + in.h)
        top = s->top[P_EV];
    if (top > n - in.h)
        top = n - in.h;
    if (top < 0)
        top = 0;
    s->top[P_EV] = top;
    if (!n)
        ui_text(u, in.y, in.x, in.w, ROLE_DIM, "(no events yet)");
    for (int i = 0; i < in.h && top + i < n; i++) {
        const char *e = snap->events[top + i];
        bool sel = focus && !s->ev_follow && top + i == s->sel[P_EV];
        ui_text_pad(u, in.y + i, in.x, in.w, sel ? ROLE_SELECTED : event_role(e), e);
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
    if (!a->snap) {
        draw_no_run(a, u, l);
        return;
    }
    /* The table first: its selection decides whose histogram is drawn. */
    draw_pct(a, u, &l->pane[P_PCT], a->focus == P_PCT);
    draw_hist(a, u, &l->pane[P_HIST], a->focus == P_HIST);
    draw_timeline(a, u, &l->pane[P_TL], a->focus == P_TL);
    draw_ctr(a, u, &l->pane[P_CTR], a->focus == P_CTR);
    draw_events(a, u, &l->pane[P_EV], a->focus == P_EV);
}

static int sel_move(struct live_state *s, int pane, int d)
{
    int n = s->nsel[pane];
    int v = s->sel[pane] + d;
    v = v >= n ? n - 1 : v;
    v = v < 0 ? 0 : v;
    if (pane == P_EV)
        s->ev_follow = v >= n - 1;
    int changed = v != s->sel[pane];
    s->sel[pane] = v;
    return changed || pane == P_EV ? REACT_REDRAW : REACT_HANDLED;
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

static int live_key(struct app *a, int ch)
{
    struct live_state *s = st(a);
    int pane = a->focus;
    if (pane == P_PCT && (ch == KEY_UP || ch == KEY_DOWN || ch == KEY_LEFT || ch == KEY_RIGHT ||
                          ch == 'j' || ch == 'k' || ch == KEY_HOME || ch == KEY_END))
        s->pct_chosen = true;
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
    case 'c':
        s->ctr_tcp = !s->ctr_tcp;
        s->sel[P_CTR] = s->top[P_CTR] = 0;
        return REACT_REDRAW;
    case 'z':
        s->all_counters = !s->all_counters;
        s->sel[P_CTR] = s->top[P_CTR] = 0;
        app_message(a, ROLE_INFO, "%s",
                    s->all_counters ? "Counters: all of them (z: only those that moved)."
                                    : "Counters: only those that moved during the test (z: all).");
        return REACT_REDRAW;
    case '?':
        if (pane == P_CTR && a->snap && s->sel_term[0]) {
            help_show_term(a, s->sel_term);
            return REACT_REDRAW;
        }
        return REACT_NONE;
    case KEY_UP:
    case 'k':
        return sel_move(s, pane, -1);
    case KEY_DOWN:
    case 'j':
        return sel_move(s, pane, 1);
    case KEY_LEFT:
        return pane == P_PCT ? sel_move(s, pane, -1) : REACT_NONE;
    case KEY_RIGHT:
        return pane == P_PCT ? sel_move(s, pane, 1) : REACT_NONE;
    case KEY_PPAGE:
        return sel_move(s, pane, -10);
    case KEY_NPAGE:
        return sel_move(s, pane, 10);
    case KEY_HOME:
    case 'g':
        return sel_move(s, pane, -1000000);
    case KEY_END:
    case 'G':
        return sel_move(s, pane, 1000000);
    default:
        return REACT_NONE;
    }
}

static const char *live_keys(const struct app *a)
{
    if (!a->snap)
        return "F2 set up a test  F3 topology  F5 results";
    /* Most used first: at 80 columns the key line drops whole keys from the end. */
    return "p pause  s stop  w save  ? explain  Tab pane  Up/Down select  y lin/log  "
           "c TCP/counters  z all counters";
}

const struct view_ops view_live = {
    .name = "Live",
    .fkey = 4,
    .layout = LAYOUT_LIVE,
    .init = live_init,
    .fini = live_fini,
    .draw = live_draw,
    .key = live_key,
    .observe = observe,
    .keys = live_keys,
};
