/* report_html: the HTML page of a results document. One file: the style in a <style>
 * element, the figures as inline <svg> elements cairo drew (report_plot.c), no scripts and
 * no reference to anything outside the file, so it can be mailed or attached to a ticket
 * and read offline. Every text taken from the document is escaped. */
#include "report/report_html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/jsonutil.h"
#include "engine/results/results.h"
#include "report/report_plot.h"
#include "text/judge_text.h"
#include "text/run_text.h"
#include "text/text_sweep.h"
#include "text/topo_text.h"
#include "topology/topo_json.h"
#include "topology/topo_model.h"

/* Figure sizes, in SVG points (and PNG pixels). */
#define FIG_W 900
#define FIG_H 460

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:960px;padding:0 1em;color:#111;"
    "line-height:1.4}\n"
    "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\n"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em "
    ".6em;text-align:left;vertical-align:top}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}\n"
    "svg{width:100%;max-width:900px;height:auto;display:block;margin:.6em 0}\n"
    ".bad{color:#b00;font-weight:bold}.muted{color:#666}\n"
    ".sw{display:inline-block;width:.9em;height:.9em;vertical-align:middle;margin-right:.3em}\n";

/* Text into HTML (element content and attribute values alike). */
static void esc(struct strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            strbuf_add(sb, "&amp;");
            break;
        case '<':
            strbuf_add(sb, "&lt;");
            break;
        case '>':
            strbuf_add(sb, "&gt;");
            break;
        case '"':
            strbuf_add(sb, "&quot;");
            break;
        default:
            strbuf_addn(sb, s, 1);
        }
    }
}

static void escf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void escf(struct strbuf *sb, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    esc(sb, buf);
}

static const char *sget(const struct results_str *f, const char *dflt)
{
    const char *s = results_str_get(f);
    return s ? s : dflt;
}

static void head(struct strbuf *sb, const char *title)
{
    strbuf_add(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<title>");
    esc(sb, title);
    strbuf_printf(sb, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    esc(sb, title);
    strbuf_add(sb, "</h1>\n");
}

static void tail(struct strbuf *sb)
{
    strbuf_printf(sb,
                  "<p class=\"muted\">Written by fabtop %s (fabtop report --html). "
                  "Gb/s = 10<sup>9</sup> bit/s; KiB, MiB = 2<sup>10</sup>, 2<sup>20</sup> bytes; "
                  "percentiles by nearest rank.</p>\n</body>\n</html>\n",
                  FABTOP_VERSION);
}

/* A row of a two-column table: a header cell and a value. */
static void kv(struct strbuf *sb, const char *k, const char *v)
{
    strbuf_add(sb, "<tr><th>");
    esc(sb, k);
    strbuf_add(sb, "</th><td>");
    esc(sb, v ? v : "n/a");
    strbuf_add(sb, "</td></tr>\n");
}

static void pre(struct strbuf *sb, const char *text)
{
    strbuf_add(sb, "<pre>");
    esc(sb, text);
    strbuf_add(sb, "</pre>\n");
}

static int figure(struct strbuf *sb, report_draw_fn fn, const void *fig, int *nfig,
                  const char *caption, struct ft_err *err)
{
    char idp[16];
    snprintf(idp, sizeof(idp), "f%d-", ++*nfig);
    strbuf_add(sb, "<figure>\n");
    if (report_plot_svg(fn, fig, FIG_W, FIG_H, idp, sb, err) < 0)
        return err->code;
    strbuf_add(sb, "\n<figcaption>");
    esc(sb, caption);
    strbuf_add(sb, "</figcaption>\n</figure>\n");
    return 0;
}

/* --- a run ----------------------------------------------------------------------------- */

static const struct results_summary_phase *sum_phase(const struct results_summary *s,
                                                     const char *name)
{
    for (int i = 0; s->st == RESULTS_SET && i < s->nphases; i++)
        if (s->phases[i].phase && !strcasecmp(s->phases[i].phase, name))
            return &s->phases[i];
    return NULL;
}

/* The foreground flow's name: the summary's, else the first flow whose role is foreground. */
static const char *foreground(const struct results_run *r)
{
    const char *fg = results_str_get(&r->summary.foreground);
    for (int p = 0; !fg && p < r->nphases; p++)
        for (int i = 0; !fg && i < r->phases[p].nflows; i++) {
            const char *role = results_str_get(&r->phases[p].flows[i].role);
            if (role && !strcmp(role, "foreground"))
                fg = results_str_get(&r->phases[p].flows[i].name);
        }
    return fg;
}

/* The point of the phase's flow named fg that the summary reads (its last measured size
 * point), with a histogram; NULL when none. */
static const struct results_point *fg_point(const struct results_phase *ph, const char *fg,
                                            const struct results_flow **flow)
{
    for (int i = 0; fg && i < ph->nflows; i++) {
        const struct results_flow *fl = &ph->flows[i];
        const char *n = results_str_get(&fl->name);
        if (!n || strcmp(n, fg))
            continue;
        for (int p = fl->npoints - 1; p >= 0; p--)
            if (results_bool_true(&fl->points[p].measured) && fl->points[p].histogram) {
                *flow = fl;
                return &fl->points[p];
            }
    }
    return NULL;
}

static double numv(const struct results_num *f)
{
    double v;
    return results_num_get(f, &v) ? v : NAN;
}

/* One latency series per phase of the foreground flow; quiet blue, loaded vermillion (or,
 * with one phase and several sizes, one per size point). */
static void size_text(double b, char *buf, size_t len)
{
    if (!isfinite(b))
        snprintf(buf, len, "n/a");
    else if (b >= 1048576 && fmod(b, 1048576) == 0)
        snprintf(buf, len, "%.0f MiB", b / 1048576);
    else if (b >= 1024 && fmod(b, 1024) == 0)
        snprintf(buf, len, "%.0f KiB", b / 1024);
    else
        snprintf(buf, len, "%.0f B", b);
}

/* The figure's title and its series' labels when they are size points. */
struct lat_text {
    char title[160];
    char sizes[REPORT_PLOT_MAX_SERIES][24];
};

static void lat_fig(const struct results_run *r, struct report_lat_fig *f, struct lat_text *lt)
{
    char *title = lt->title;
    size_t tlen = sizeof(lt->title);
    memset(f, 0, sizeof(*f));
    const char *fg = foreground(r);
    snprintf(title, tlen, "%s: latency, quiet vs loaded", fg ? fg : "foreground");
    f->title = title;
    for (int p = 0; p < r->nphases && f->n < REPORT_PLOT_MAX_SERIES; p++) {
        const struct results_flow *fl = NULL;
        const struct results_point *pt = fg_point(&r->phases[p], fg, &fl);
        if (!pt)
            continue;
        struct report_lat_series *s = &f->s[f->n];
        s->label = sget(&r->phases[p].name, "phase");
        s->h = pt->histogram;
        s->colour = !strcasecmp(s->label, "quiet")    ? REPORT_BLUE
                    : !strcasecmp(s->label, "loaded") ? REPORT_VERMILLION
                                                      : (enum report_colour)(REPORT_GREEN + f->n);
        /* The markers are the summary's figures (the table's), else the point's own. */
        const struct results_summary_phase *sp = sum_phase(&r->summary, s->label);
        s->p50_us = sp ? numv(&sp->p50) : numv(&pt->latency.p50);
        s->p99_us = sp ? numv(&sp->p99) : numv(&pt->latency.p99);
        s->p999_us = sp ? numv(&sp->p999) : numv(&pt->latency.p999);
        if (!f->kind)
            f->kind = results_str_get(&fl->latency_kind);
        f->n++;
    }
    /* One phase and a sweep of sizes (tp-decode): a series per size point instead. */
    const struct results_flow *only = NULL;
    int nph = 0, only_p = -1;
    for (int p = 0; p < r->nphases; p++) {
        const struct results_flow *fl = NULL;
        if (fg_point(&r->phases[p], fg, &fl)) {
            nph++;
            only = fl;
            only_p = p;
        }
    }
    int npts = 0;
    for (int k = 0; only && k < only->npoints; k++)
        npts += results_bool_true(&only->points[k].measured) && only->points[k].histogram;
    if (nph == 1 && npts > 1) {
        snprintf(title, tlen, "%s: latency per message size (%s)", fg,
                 sget(&r->phases[only_p].name, "phase"));
        f->n = 0;
        for (int k = 0; k < only->npoints && f->n < REPORT_PLOT_MAX_SERIES; k++) {
            const struct results_point *pt = &only->points[k];
            if (!results_bool_true(&pt->measured) || !pt->histogram)
                continue;
            struct report_lat_series *sr = &f->s[f->n];
            size_text(numv(&pt->size_bytes), lt->sizes[f->n], sizeof(lt->sizes[f->n]));
            sr->label = lt->sizes[f->n];
            sr->h = pt->histogram;
            sr->colour = (enum report_colour)f->n;
            sr->p50_us = numv(&pt->latency.p50);
            sr->p99_us = numv(&pt->latency.p99);
            sr->p999_us = numv(&pt->latency.p999);
            f->n++;
        }
    }
    if (f->kind && !strcmp(f->kind, "half_round_trip"))
        f->kind = "half round trip";
    else if (f->kind && !strcmp(f->kind, "round_trip"))
        f->kind = "round trip";
    else if (f->kind && !strcmp(f->kind, "per_operation"))
        f->kind = "per operation";
}

/* Timelines: one series per flow over every phase (a gap between phases). */
struct tl_fig {
    struct report_line_fig f;
    double *buf;
};

static void tl_free(struct tl_fig *t)
{
    free(t->buf);
}

enum tl_what { TL_GOODPUT, TL_OPS };

static void tl_build(const struct results_run *r, enum tl_what what, struct tl_fig *t)
{
    memset(t, 0, sizeof(*t));
    int total = 0;
    for (int p = 0; p < r->nphases; p++)
        for (int i = 0; i < r->phases[p].nflows; i++)
            total += r->phases[p].flows[i].timeline.t_s.n + 1;
    t->buf = calloc((size_t)(total > 0 ? total : 1) * 2 * REPORT_PLOT_MAX_SERIES, sizeof(double));
    if (!t->buf)
        return;
    t->f.title = what == TL_GOODPUT ? "goodput per flow over the run" : "operations per second";
    t->f.xlabel = "seconds since the run started";
    t->f.ylabel = what == TL_GOODPUT ? "goodput, Gb/s of payload" : "operations per second";
    int used = 0;
    double start = 0;
    for (int p = 0; p < r->nphases; p++) {
        const struct results_phase *ph = &r->phases[p];
        double tmax = start;
        for (int i = 0; i < ph->nflows; i++) {
            const struct results_flow *fl = &ph->flows[i];
            const struct results_timeline *tl = &fl->timeline;
            const struct results_series *ys =
                what == TL_GOODPUT ? &tl->goodput_gbps : &tl->ops_per_s;
            if (fl->timeline_st != RESULTS_SET || tl->t_s.st != RESULTS_SET ||
                ys->st != RESULTS_SET)
                continue;
            const char *name = sget(&fl->name, "flow");
            int k;
            for (k = 0; k < t->f.n; k++)
                if (!strcmp(t->f.s[k].label, name))
                    break;
            if (k == t->f.n) {
                if (t->f.n == REPORT_PLOT_MAX_SERIES)
                    continue;
                static const enum report_colour cols[] = {
                    REPORT_GREEN, REPORT_ORANGE, REPORT_PURPLE,     REPORT_SKY,
                    REPORT_BLACK, REPORT_BLUE,   REPORT_VERMILLION, REPORT_YELLOW};
                t->f.s[k].label = name;
                t->f.s[k].colour = cols[k];
                t->f.s[k].x = t->buf + (size_t)k * total * 2;
                t->f.s[k].y = t->f.s[k].x + total;
                t->f.n++;
            }
            struct report_line_series *s = &t->f.s[k];
            double *x = (double *)s->x, *y = (double *)s->y;
            if (s->n) { /* a gap from the last phase */
                x[s->n] = NAN;
                y[s->n++] = NAN;
            }
            int n = tl->t_s.n < ys->n ? tl->t_s.n : ys->n;
            for (int j = 0; j < n; j++) {
                x[s->n] = tl->t_s.v[j];
                y[s->n++] = ys->v[j];
                tmax = fmax(tmax, tl->t_s.v[j]);
            }
            used = 1;
        }
        double d = numv(&ph->duration_s);
        double end = isfinite(d) ? start + d : tmax;
        if (t->f.nspans < 4) {
            t->f.spans[t->f.nspans].x0 = start;
            t->f.spans[t->f.nspans].x1 = end;
            t->f.spans[t->f.nspans++].label = sget(&ph->name, "phase");
        }
        start = end;
    }
    if (!used)
        t->f.nspans = 0;
}

/* One paragraph: what ran, when, where, and how it ended. */
static void headline(struct strbuf *sb, const struct results_run *r)
{
    strbuf_add(sb, "<p id=\"headline\">");
    escf(sb, "Mix %s: %s", jsonutil_str_or(r->mix, "name", "n/a"),
         jsonutil_str_or(r->mix, "description", ""));
    strbuf_add(sb, "<br>");
    double d = numv(&r->duration_s);
    escf(sb, "Started %s on %s", sget(&r->started_at, "n/a"), sget(&r->host_local, "n/a"));
    if (isfinite(d))
        escf(sb, ", %.1f s", d);
    if (r->npeers && r->peers[0])
        escf(sb, ", peer %s", r->peers[0]);
    int failed = 0;
    for (int p = 0; p < r->nphases; p++)
        for (int i = 0; i < r->phases[p].nflows; i++) {
            const char *st = results_str_get(&r->phases[p].flows[i].status);
            failed += st && strcmp(st, "ok");
        }
    strbuf_add(sb, ". ");
    if (results_bool_true(&r->interrupted))
        strbuf_add(sb, "<span class=\"bad\">INTERRUPTED: partial results.</span> ");
    if (failed)
        strbuf_printf(sb, "<span class=\"bad\">%d flow(s) not ok.</span>", failed);
    else
        strbuf_add(sb, "Every flow ok.");
    strbuf_add(sb, "</p>\n");
}

static void conditions(struct strbuf *sb, const struct results_run *r, const char *what)
{
    char b[256];
    strbuf_add(sb, "<h2 id=\"conditions\">Test conditions</h2>\n<table>\n");
    kv(sb, "results file", what);
    snprintf(b, sizeof(b), "%s: %s", jsonutil_str_or(r->mix, "name", "n/a"),
             jsonutil_str_or(r->mix, "description", ""));
    kv(sb, "mix", b);
    kv(sb, "started", sget(&r->started_at, "n/a"));
    kv(sb, "ended", sget(&r->ended_at, "n/a"));
    double d = numv(&r->duration_s);
    if (isfinite(d))
        snprintf(b, sizeof(b), "%.1f s%s", d,
                 results_bool_true(&r->interrupted) ? ", INTERRUPTED: partial results" : "");
    else
        snprintf(b, sizeof(b), "n/a");
    kv(sb, "duration", b);
    kv(sb, "host", sget(&r->host_local, "n/a"));
    struct strbuf peers;
    strbuf_init(&peers);
    for (int i = 0; i < r->npeers; i++)
        strbuf_printf(&peers, "%s%s", i ? ", " : "", r->peers[i] ? r->peers[i] : "n/a");
    kv(sb, "peers", r->npeers ? peers.s : "none");
    strbuf_free(&peers);
    for (int i = 0; i < r->versions.n; i++) {
        snprintf(b, sizeof(b), "version: %s", r->versions.v[i].key);
        kv(sb, b, sget(&r->versions.v[i].val, "n/a"));
    }
    const struct results_run_cond *c = &r->conditions;
    if (c->sim_st == RESULTS_SET) {
        kv(sb, "simulated fabric", sget(&c->sim_note, "n/a"));
        kv(sb, "simulated topology", sget(&c->sim_topology, "n/a"));
    }
    for (int i = 0; i < c->sysctls.n; i++) {
        snprintf(b, sizeof(b), "sysctl %s", c->sysctls.v[i].key);
        kv(sb, b, sget(&c->sysctls.v[i].val, "n/a"));
    }
    for (int i = 0; i < c->nmtu; i++) {
        char v[32];
        snprintf(b, sizeof(b), "MTU of %s", c->mtu[i].netdev ? c->mtu[i].netdev : "n/a");
        snprintf(v, sizeof(v), "%.0f bytes", c->mtu[i].mtu);
        kv(sb, b, v);
    }
    strbuf_add(sb, "</table>\n");
    /* The flows per phase, with what each transport chose. */
    strbuf_add(sb, "<table>\n<tr><th>phase</th><th>flow</th><th>role</th><th>transport</th>"
                   "<th>operation</th><th>direction</th><th>peer</th><th>conditions</th>"
                   "<th>status</th></tr>\n");
    for (int p = 0; p < r->nphases; p++)
        for (int i = 0; i < r->phases[p].nflows; i++) {
            const struct results_flow *fl = &r->phases[p].flows[i];
            const char *cells[] = {sget(&r->phases[p].name, "n/a"),
                                   sget(&fl->name, "n/a"),
                                   sget(&fl->role, "n/a"),
                                   sget(&fl->transport, "n/a"),
                                   sget(&fl->op, "n/a"),
                                   sget(&fl->direction, "n/a"),
                                   sget(&fl->peer, "")};
            strbuf_add(sb, "<tr>");
            for (size_t k = 0; k < sizeof(cells) / sizeof(cells[0]); k++) {
                strbuf_add(sb, "<td>");
                esc(sb, cells[k]);
                strbuf_add(sb, "</td>");
            }
            char brief[200];
            results_flow_cond_brief(&fl->cond, brief, sizeof(brief));
            strbuf_add(sb, "<td>");
            esc(sb, brief);
            const char *st = sget(&fl->status, "n/a");
            strbuf_printf(sb, "</td><td%s>", strcmp(st, "ok") ? " class=\"bad\"" : "");
            esc(sb, st);
            const char *e = results_str_get(&fl->error);
            if (e) {
                strbuf_add(sb, ": ");
                esc(sb, e);
            }
            strbuf_add(sb, "</td></tr>\n");
        }
    strbuf_add(sb, "</table>\n");
}

static void topology(struct strbuf *sb, const struct results_run *r, const char *what)
{
    if (r->topology_st != RESULTS_SET || !r->topology)
        return;
    struct topo_model *m = topo_model_new();
    struct ft_err e = {0};
    strbuf_add(sb, "<h2 id=\"topology\">Topology</h2>\n");
    if (topo_json_to_model(r->topology, m, what, &e) < 0) {
        strbuf_add(sb, "<p class=\"bad\">");
        esc(sb, e.msg);
        strbuf_add(sb, "</p>\n");
        topo_model_free(m);
        return;
    }
    struct strbuf t;
    strbuf_init(&t);
    topo_text_header(&t, m);
    topo_text_tree(&t, m);
    pre(sb, t.s);
    strbuf_free(&t);
    topo_model_free(m);
}

/* The quiet-vs-loaded table: the figures `fabtop report` prints, formatted by run_text. */
static void qvl_table(struct strbuf *sb, const struct results_run *r)
{
    const struct results_summary_phase *q = sum_phase(&r->summary, "quiet"),
                                       *l = sum_phase(&r->summary, "loaded");
    if (!q || !l)
        return;
    strbuf_add(sb, "<h2 id=\"quiet-vs-loaded\">Quiet vs loaded</h2>\n<p>");
    escf(sb, "%s, last size point, latency in microseconds (us).",
         sget(&r->summary.foreground, "n/a"));
    strbuf_add(sb, "</p>\n<table id=\"qvl\">\n<tr><th></th><th class=\"n\">quiet (us)</th>"
                   "<th class=\"n\">loaded (us)</th></tr>\n");
    static const char *const keys[] = {"p50", "p99", "p99.9", "max"};
    const struct results_num *qv[] = {&q->p50, &q->p99, &q->p999, &q->max},
                             *lv[] = {&l->p50, &l->p99, &l->p999, &l->max};
    for (int k = 0; k < 4; k++) {
        char a[32], b[32];
        run_text_lat(a, sizeof(a), qv[k]);
        run_text_lat(b, sizeof(b), lv[k]);
        strbuf_printf(sb, "<tr><th>%s</th><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n",
                      keys[k], a, b);
    }
    double gq = numv(&q->goodput_gbps), gl = numv(&l->goodput_gbps);
    if (isfinite(gq) || isfinite(gl)) {
        strbuf_add(sb, "<tr><th>goodput (Gb/s)</th>");
        const double g[] = {gq, gl};
        for (int k = 0; k < 2; k++) {
            if (isfinite(g[k]))
                strbuf_printf(sb, "<td class=\"n\">%.3f</td>", g[k]);
            else
                strbuf_add(sb, "<td class=\"n\">n/a</td>");
        }
        strbuf_add(sb, "</tr>\n");
    }
    strbuf_add(sb, "</table>\n");
    double ratio;
    if (results_num_get(&r->summary.p99_loaded_over_quiet, &ratio))
        strbuf_printf(sb, "<p id=\"ratio\">p99 loaded / quiet = %.2f</p>\n", ratio);
}

/* The phases' port-wide counters: every counter that moved in some phase, deltas side by
 * side; error-like ones that moved are marked. */
static void counters(struct strbuf *sb, const struct results_run *r)
{
    const cJSON *first = NULL;
    int nph = 0;
    const cJSON *arrs[8] = {0};
    for (int p = 0; p < r->nphases && nph < 8; p++) {
        const cJSON *a = cJSON_GetObjectItem(r->phases[p].counters, "counters");
        arrs[nph++] = cJSON_IsArray(a) ? a : NULL;
        if (!first && cJSON_IsArray(a))
            first = r->phases[p].counters;
    }
    if (!first)
        return;
    strbuf_add(sb, "<h2 id=\"counters\">Counters per phase</h2>\n<p>");
    const char *scope = jsonutil_str_or(first, "scope", "");
    esc(sb, scope);
    if (*scope && scope[strlen(scope) - 1] != '.')
        strbuf_add(sb, ".");
    strbuf_add(sb, " Counters that did not move in any phase are left out; n/a: not recorded "
                   "in that phase.</p>\n"
                   "<table id=\"counter-table\">\n<tr><th>source</th><th>object</th>"
                   "<th>counter</th><th>unit</th>");
    for (int p = 0; p < nph; p++) {
        strbuf_add(sb, "<th class=\"n\">");
        esc(sb, sget(&r->phases[p].name, "phase"));
        strbuf_add(sb, "</th>");
    }
    strbuf_add(sb, "</tr>\n");
    /* Rows in the order of the first phase that has each counter. */
    int shown = 0;
    for (int p0 = 0; p0 < nph; p0++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, arrs[p0])
        {
            const char *src = jsonutil_str(c, "source"), *obj = jsonutil_str(c, "object"),
                       *name = jsonutil_str(c, "name");
            if (!src || !obj || !name)
                continue;
            double deltas[8];
            bool have[8] = {0}, moved = false, seen_before = false;
            for (int p = 0; p < nph; p++) {
                const cJSON *d;
                cJSON_ArrayForEach(d, arrs[p])
                {
                    const char *s2 = jsonutil_str(d, "source"), *o2 = jsonutil_str(d, "object"),
                               *n2 = jsonutil_str(d, "name");
                    if (s2 && o2 && n2 && !strcmp(s2, src) && !strcmp(o2, obj) &&
                        !strcmp(n2, name)) {
                        have[p] = jsonutil_num(d, "delta", &deltas[p]);
                        moved |= have[p] && deltas[p] != 0;
                        if (p < p0)
                            seen_before = true;
                        break;
                    }
                }
            }
            if (!moved || seen_before)
                continue;
            bool errlike = cJSON_IsTrue(cJSON_GetObjectItem(c, "error_like"));
            strbuf_add(sb, "<tr><td>");
            esc(sb, src);
            strbuf_add(sb, "</td><td>");
            esc(sb, obj);
            strbuf_add(sb, errlike ? "</td><td class=\"bad\">" : "</td><td>");
            esc(sb, name);
            strbuf_add(sb, "</td><td>");
            esc(sb, jsonutil_str_or(c, "unit", ""));
            strbuf_add(sb, "</td>");
            for (int p = 0; p < nph; p++)
                if (have[p])
                    strbuf_printf(sb, "<td class=\"n\">%.0f</td>", deltas[p]);
                else
                    strbuf_add(sb, "<td class=\"n\">n/a</td>");
            strbuf_add(sb, "</tr>\n");
            shown++;
        }
    }
    strbuf_add(sb, "</table>\n");
    if (!shown)
        strbuf_add(sb, "<p>No counter moved.</p>\n");
}

static int run_figures(struct strbuf *sb, const struct results_run *r, int *nfig,
                       struct ft_err *err)
{
    struct report_lat_fig lf;
    struct lat_text lt;
    lat_fig(r, &lf, &lt);
    strbuf_add(sb, "<h2 id=\"latency\">Latency</h2>\n");
    if (lf.n) {
        strbuf_add(sb, "<p>");
        for (int i = 0; i < lf.n; i++) {
            strbuf_printf(sb, "<span class=\"sw\" style=\"background:#%06X\"></span>",
                          report_colour_rgb(lf.s[i].colour));
            esc(sb, lf.s[i].label);
            strbuf_add(sb, i + 1 < lf.n ? " &nbsp; " : "");
        }
        strbuf_add(sb, "</p>\n");
    }
    if (figure(sb, report_plot_hist, &lf, nfig,
               "The foreground's latency histogram per phase (share of its operations per bin; "
               "both axes log), with p50, p99 and p99.9 marked.",
               err) < 0 ||
        figure(sb, report_plot_cdf, &lf, nfig,
               "The same operations cumulatively: the share at or under each latency, on an axis "
               "that spreads the tail (90%, 99%, 99.9%, ... evenly spaced).",
               err) < 0)
        return err->code;
    strbuf_add(sb, "<h2 id=\"timelines\">Timelines</h2>\n");
    enum tl_what whats[] = {TL_GOODPUT, TL_OPS};
    for (int k = 0; k < 2; k++) {
        struct tl_fig t;
        tl_build(r, whats[k], &t);
        int rc = figure(sb, report_plot_lines, &t.f, nfig,
                        k == 0 ? "Goodput (payload) of each flow per sampling interval, the "
                                 "phases shaded."
                               : "Operations per second of each flow per sampling interval.",
                        err);
        tl_free(&t);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int report_html_run(struct strbuf *sb, const struct results_run *r, const char *what,
                    struct ft_err *err)
{
    char title[200];
    snprintf(title, sizeof(title), "fabtop report: mix %s", jsonutil_str_or(r->mix, "name", "n/a"));
    head(sb, title);
    bool qvl = sum_phase(&r->summary, "quiet") && sum_phase(&r->summary, "loaded");
    strbuf_add(sb, qvl ? "<p>Contents: <a href=\"#quiet-vs-loaded\">quiet vs loaded</a>, "
                       : "<p>Contents: ");
    strbuf_add(sb, "<a href=\"#latency\">latency</a>, <a href=\"#timelines\">timelines</a>, "
                   "<a href=\"#conditions\">conditions</a>, "
                   "<a href=\"#summary\">summary</a>, <a href=\"#counters\">counters</a>, "
                   "<a href=\"#judgement\">judgement</a>, <a href=\"#topology\">topology</a>."
                   "</p>\n");
    headline(sb, r);
    qvl_table(sb, r);
    int nfig = 0;
    if (run_figures(sb, r, &nfig, err) < 0)
        return err->code;
    conditions(sb, r, what);
    struct strbuf t;
    strbuf_init(&t);
    run_text_summary(&t, r);
    strbuf_add(sb, "<h2 id=\"summary\">Summary (as fabtop report prints it)</h2>\n");
    pre(sb, t.s);
    strbuf_reset(&t);
    counters(sb, r);
    judge_text_summary(&t, r);
    strbuf_add(sb, "<h2 id=\"judgement\">Judgement</h2>\n");
    if (t.len)
        pre(sb, t.s);
    else
        strbuf_add(sb, "<p>The run recorded no references or likely causes.</p>\n");
    strbuf_free(&t);
    if (r->nevents) {
        strbuf_add(sb, "<h2 id=\"events\">Events</h2>\n");
        struct strbuf ev;
        strbuf_init(&ev);
        for (int i = 0; i < r->nevents; i++)
            strbuf_printf(&ev, "%s\n", r->events[i] ? r->events[i] : "");
        pre(sb, ev.s);
        strbuf_free(&ev);
    }
    topology(sb, r, what);
    tail(sb);
    return 0;
}

static int emit(struct strbuf *out, enum report_format fmt, report_draw_fn fn, const void *fig,
                struct ft_err *err)
{
    if (fmt == REPORT_PNG)
        return report_plot_png(fn, fig, FIG_W, FIG_H, out, err);
    strbuf_add(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    int rc = report_plot_svg(fn, fig, FIG_W, FIG_H, "", out, err);
    strbuf_add(out, "\n");
    return rc;
}

int report_figure_run(struct strbuf *out, enum report_format fmt, const struct results_run *r,
                      struct ft_err *err)
{
    struct report_lat_fig lf;
    struct lat_text lt;
    lat_fig(r, &lf, &lt);
    return emit(out, fmt, report_plot_hist, &lf, err);
}

/* --- a sweep --------------------------------------------------------------------------- */

struct heat {
    struct report_heat_fig f;
    char title[160];
    const char **labels;
    char *lbuf;
    double *v;
    bool *failed;
};

static void heat_free(struct heat *h)
{
    free(h->labels);
    free(h->lbuf);
    free(h->v);
    free(h->failed);
}

/* The matrix of one metric (0 bandwidth, 1 latency p50) on one rail and transport; false
 * when no pair has it. */
static bool heat_build(const struct results_sweep *s, int metric, int rail, const char *tr,
                       struct heat *h)
{
    memset(h, 0, sizeof(*h));
    int n = s->nranks;
    if (n <= 0)
        return false;
    h->labels = calloc((size_t)n, sizeof(*h->labels));
    h->lbuf = calloc((size_t)n, 48);
    h->v = malloc(sizeof(double) * (size_t)n * n);
    h->failed = calloc((size_t)n * n, sizeof(bool));
    double *vals = malloc(sizeof(double) * (size_t)n * n * 2 + 1);
    if (!h->labels || !h->lbuf || !h->v || !h->failed || !vals) {
        free(vals);
        return false;
    }
    for (int i = 0; i < n; i++) {
        snprintf(h->lbuf + 48 * i, 48, "%d %s", s->ranks[i].rank,
                 s->ranks[i].host ? s->ranks[i].host : "?");
        h->labels[i] = h->lbuf + 48 * i;
    }
    for (int i = 0; i < n * n; i++)
        h->v[i] = NAN;
    int nv = 0;
    const char *kind = NULL;
    for (int i = 0; i < s->npairs; i++) {
        const struct results_sweep_pair *p = &s->pairs[i];
        if (p->rail != rail || strcmp(results_sweep_transport(&p->transport), tr) || p->a < 0 ||
            p->b < 0 || p->a >= n || p->b >= n)
            continue;
        if (results_bool_true(&p->failed)) {
            h->failed[p->a * n + p->b] = h->failed[p->b * n + p->a] = true;
            continue;
        }
        double x = metric == 0 ? numv(&p->bw_ab_gbps) : numv(&p->lat_p50_us),
               y = metric == 0 ? numv(&p->bw_ba_gbps) : numv(&p->lat_p50_us);
        if (isfinite(x)) {
            h->v[p->a * n + p->b] = x;
            vals[nv++] = x;
        }
        if (isfinite(y)) {
            h->v[p->b * n + p->a] = y;
            if (metric == 0)
                vals[nv++] = y;
        }
        if (!kind)
            kind = results_str_get(&p->latency_kind);
    }
    double med = 0;
    bool any = results_sweep_median(vals, nv, &med);
    free(vals);
    if (!any)
        return false;
    if (metric == 0)
        snprintf(h->title, sizeof(h->title), "bandwidth a to b (row to column), rail %d, %s, Gb/s",
                 rail, tr);
    else
        snprintf(h->title, sizeof(h->title), "latency p50 (%s), rail %d, %s, us",
                 kind ? kind : "n/a", rail, tr);
    h->f = (struct report_heat_fig){.title = h->title,
                                    .unit = metric == 0 ? "Gb/s" : "us",
                                    .higher_better = metric == 0,
                                    .n = n,
                                    .labels = h->labels,
                                    .v = h->v,
                                    .failed = h->failed,
                                    .median = med};
    return true;
}

/* Every (rail, transport) the pairs hold, in order of appearance (at most max). */
static int sweep_matrices(const struct results_sweep *s, int *rails, const char **trs, int max)
{
    int n = 0;
    for (int i = 0; i < s->npairs; i++) {
        const char *tr = results_sweep_transport(&s->pairs[i].transport);
        int k;
        for (k = 0; k < n; k++)
            if (rails[k] == s->pairs[i].rail && !strcmp(trs[k], tr))
                break;
        if (k == n && n < max) {
            rails[n] = s->pairs[i].rail;
            trs[n++] = tr;
        }
    }
    return n;
}

/* What a FILE * writer of text_sweep prints, as a string (caller frees). */
static char *sweep_text(const struct results_sweep *s, int which)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    if (which == 0)
        text_sweep_verdicts(f, s);
    else
        text_sweep_report(f, s, 100);
    fclose(f);
    return buf;
}

int report_html_sweep(struct strbuf *sb, const struct results_sweep *s, const char *what,
                      struct ft_err *err)
{
    char b[256];
    snprintf(b, sizeof(b), "fabtop report: sweep of %d ranks", s->nranks);
    head(sb, b);
    strbuf_add(sb, "<h2 id=\"conditions\">Sweep</h2>\n<table>\n");
    kv(sb, "results file", what);
    kv(sb, "fabtop", sget(&s->fabtop_version, "n/a"));
    kv(sb, "launcher", sget(&s->launcher, "n/a"));
    kv(sb, "started", sget(&s->started_at, "n/a"));
    double d = numv(&s->duration_s);
    if (isfinite(d))
        snprintf(b, sizeof(b), "%.1f s", d);
    else
        snprintf(b, sizeof(b), "n/a");
    kv(sb, "duration", b);
    struct strbuf pat;
    strbuf_init(&pat);
    for (int i = 0; i < s->npatterns; i++)
        strbuf_printf(&pat, "%s%s", i ? ", " : "", s->patterns[i] ? s->patterns[i] : "?");
    kv(sb, "patterns", pat.s);
    strbuf_free(&pat);
    snprintf(b, sizeof(b), "%.0f/%.0f done", numv(&s->rounds_done), numv(&s->rounds_planned));
    kv(sb, "rounds", b);
    kv(sb, "status", sget(&s->status, "n/a"));
    strbuf_add(sb, "</table>\n<table>\n<tr><th>rank</th><th>host</th><th>group</th>"
                   "<th>rail</th><th>status</th><th>unlike the others</th></tr>\n");
    for (int i = 0; i < s->nranks; i++) {
        const struct results_sweep_rank *rk = &s->ranks[i];
        double rail = numv(&rk->rail);
        char rs[16];
        if (isfinite(rail))
            snprintf(rs, sizeof(rs), "%.0f", rail);
        else
            snprintf(rs, sizeof(rs), "n/a");
        strbuf_printf(sb, "<tr><td class=\"n\">%d</td><td>", rk->rank);
        esc(sb, rk->host ? rk->host : "n/a");
        strbuf_add(sb, "</td><td>");
        esc(sb, sget(&rk->group, ""));
        strbuf_printf(sb, "</td><td class=\"n\">%s</td><td>", rs);
        esc(sb, sget(&rk->status, "n/a"));
        strbuf_add(sb, "</td><td>");
        esc(sb, sget(&rk->unlike, ""));
        strbuf_add(sb, "</td></tr>\n");
    }
    strbuf_add(sb, "</table>\n<h2 id=\"heatmaps\">Heat maps</h2>\n<p>Each cell's colour is its "
                   "figure's ratio to the rack's median (viridis: dark is worse); the "
                   "figure is printed in the cell; grey cells failed, '?' were not "
                   "measured.</p>\n");
    int rails[16], nfig = 0;
    const char *trs[16];
    int nm = sweep_matrices(s, rails, trs, 16);
    for (int m = 0; m < nm; m++)
        for (int metric = 0; metric < 2; metric++) {
            struct heat h;
            if (heat_build(s, metric, rails[m], trs[m], &h)) {
                int rc = figure(sb, report_plot_heat, &h.f, &nfig, h.title, err);
                heat_free(&h);
                if (rc < 0)
                    return rc;
            } else {
                heat_free(&h);
            }
        }
    strbuf_add(sb, "<h2 id=\"verdicts\">Verdicts</h2>\n<table id=\"verdicts-table\">\n"
                   "<tr><th>state</th><th>kind</th><th>metric</th><th>message</th></tr>\n");
    for (int i = 0; i < s->nverdicts; i++) {
        const struct results_sweep_verdict *v = &s->verdicts[i];
        bool named = v->state && !strcmp(v->state, "named");
        strbuf_printf(sb, "<tr><td%s>", named ? " class=\"bad\"" : "");
        esc(sb, v->state ? v->state : "n/a");
        strbuf_add(sb, "</td><td>");
        esc(sb, v->kind ? v->kind : "n/a");
        strbuf_add(sb, "</td><td>");
        esc(sb, v->metric ? v->metric : "");
        strbuf_add(sb, "</td><td>");
        esc(sb, v->message ? v->message : "");
        strbuf_add(sb, "</td></tr>\n");
    }
    strbuf_add(sb, "</table>\n");
    char line[1024];
    text_sweep_summary(s, line, sizeof(line));
    strbuf_add(sb, "<p id=\"summary-line\">");
    esc(sb, line);
    strbuf_add(sb, "</p>\n<h2 id=\"text\">The report as text</h2>\n");
    char *text = sweep_text(s, 1);
    pre(sb, text ? text : "");
    free(text);
    tail(sb);
    return 0;
}

int report_figure_sweep(struct strbuf *out, enum report_format fmt, const struct results_sweep *s,
                        struct ft_err *err)
{
    int rails[16];
    const char *trs[16];
    int nm = sweep_matrices(s, rails, trs, 16);
    for (int m = 0; m < nm; m++) {
        struct heat h;
        if (heat_build(s, 0, rails[m], trs[m], &h)) {
            int rc = emit(out, fmt, report_plot_heat, &h.f, err);
            heat_free(&h);
            return rc;
        }
        heat_free(&h);
    }
    struct report_heat_fig none = {.title = "no bandwidth pairs in this sweep"};
    return emit(out, fmt, report_plot_heat, &none, err);
}

/* --- a drill --------------------------------------------------------------------------- */

struct drill_fig {
    struct report_rows_fig f;
    struct report_row *rows;
    char *lbuf;
};

static void drill_build(const struct results_drill_doc *d, struct drill_fig *df)
{
    memset(df, 0, sizeof(*df));
    int n = 0;
    for (int r = 0; r < d->nreps; r++)
        n += d->reps[r].nflows;
    df->rows = calloc((size_t)(n ? n : 1), sizeof(*df->rows));
    df->lbuf = calloc((size_t)(n ? n : 1), 64);
    df->f.title = "the drill, each repetition's flows (seconds since the repetition started)";
    df->f.xlabel = "seconds since the repetition started";
    df->f.rows = df->rows;
    df->f.nlegend = 5;
    df->f.legend[0].label = "fault (--for)";
    df->f.legend[0].colour = REPORT_VERMILLION;
    df->f.legend[0].shape = '#';
    df->f.legend[1].label = "injected";
    df->f.legend[1].colour = REPORT_BLACK;
    df->f.legend[1].shape = 'v';
    df->f.legend[2].label = "detected";
    df->f.legend[2].colour = REPORT_ORANGE;
    df->f.legend[2].shape = '|';
    df->f.legend[3].label = "detection bound";
    df->f.legend[3].colour = REPORT_PURPLE;
    df->f.legend[3].shape = '|';
    df->f.legend[4].label = "recovered";
    df->f.legend[4].colour = REPORT_GREEN;
    df->f.legend[4].shape = 'o';
    if (!df->rows || !df->lbuf)
        return;
    double for_s = numv(&d->for_s);
    for (int r = 0; r < d->nreps; r++) {
        const struct results_drill_rep *rep = &d->reps[r];
        double inj = numv(&rep->injected_at_s);
        for (int i = 0; i < rep->nflows; i++) {
            const struct results_drill_flow *fl = &rep->flows[i];
            struct report_row *row = &df->rows[df->f.n];
            char *lab = df->lbuf + 64 * df->f.n++;
            double idx = numv(&rep->index);
            snprintf(lab, 64, "rep %.0f %s", isfinite(idx) ? idx : r, sget(&fl->name, "flow"));
            row->label = lab;
            if (isfinite(inj) && isfinite(for_s) && for_s > 0) {
                row->spans[0].x0 = inj;
                row->spans[0].x1 = inj + for_s;
                row->spans[0].colour = REPORT_VERMILLION;
                row->nspans = 1;
            }
            struct {
                double x;
                enum report_colour c;
                char shape;
            } m[] = {
                {inj, REPORT_BLACK, 'v'},
                {numv(&fl->detected_at_s), REPORT_ORANGE, '|'},
                {inj + numv(&fl->detect_bound_s), REPORT_PURPLE, '|'},
                {numv(&fl->recovered_at_s), REPORT_GREEN, 'o'},
            };
            for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++)
                if (isfinite(m[k].x)) {
                    row->marks[row->nmarks].x = m[k].x;
                    row->marks[row->nmarks].colour = m[k].c;
                    row->marks[row->nmarks++].shape = m[k].shape;
                }
        }
    }
}

static void drill_free(struct drill_fig *df)
{
    free(df->rows);
    free(df->lbuf);
}

static void numcell(struct strbuf *sb, const struct results_num *f, const char *fmt)
{
    double v = numv(f);
    if (isfinite(v)) {
        strbuf_add(sb, "<td class=\"n\">");
        char b[48];
        snprintf(b, sizeof(b), fmt, v);
        strbuf_add(sb, b);
        strbuf_add(sb, "</td>");
    } else {
        strbuf_add(sb, "<td class=\"n\">n/a</td>");
    }
}

static void boolcell(struct strbuf *sb, const struct results_bool *b)
{
    if (b->st != RESULTS_SET)
        strbuf_add(sb, "<td>n/a</td>");
    else
        strbuf_add(sb, b->v ? "<td>yes</td>" : "<td class=\"bad\">NO</td>");
}

int report_html_drill(struct strbuf *sb, const struct results_drill_doc *d, const char *what,
                      struct ft_err *err)
{
    char b[256];
    snprintf(b, sizeof(b), "fabtop report: drill %s of mix %s", sget(&d->kind, "n/a"),
             sget(&d->mix, "n/a"));
    head(sb, b);
    strbuf_add(sb, "<h2 id=\"conditions\">Drill</h2>\n<table>\n");
    kv(sb, "results file", what);
    kv(sb, "fabtop", sget(&d->fabtop, "n/a"));
    kv(sb, "mix", sget(&d->mix, "n/a"));
    kv(sb, "peer", sget(&d->peer, "n/a"));
    kv(sb, "transport", sget(&d->transport, "n/a"));
    kv(sb, "fault", sget(&d->kind, "n/a"));
    double at = numv(&d->at_s), fr = numv(&d->for_s), rp = numv(&d->repeat);
    snprintf(b, sizeof(b), "at %.3g s, for %.3g s, %.0f repetition(s)", at, fr, rp);
    kv(sb, "when", b);
    kv(sb, "complete", results_bool_true(&d->complete) ? "yes" : "no");
    strbuf_add(sb, "</table>\n<h2 id=\"timeline\">Timeline</h2>\n");
    struct drill_fig df;
    drill_build(d, &df);
    int nfig = 0;
    int rc = figure(sb, report_plot_rows, &df.f, &nfig,
                    "Each repetition's flows: the fault's window, when it was injected, "
                    "detected and recovered, and the detection bound.",
                    err);
    drill_free(&df);
    if (rc < 0)
        return rc;
    strbuf_add(sb, "<table id=\"drill-table\">\n<tr><th>rep</th><th>flow</th>"
                   "<th class=\"n\">detect (s)</th><th class=\"n\">bound (s)</th><th>in bound</th>"
                   "<th class=\"n\">recover (s)</th><th class=\"n\">deadline (s)</th>"
                   "<th>in time</th><th>detection</th><th class=\"n\">issued</th>"
                   "<th class=\"n\">completed</th><th class=\"n\">failed</th>"
                   "<th class=\"n\">abandoned</th><th class=\"n\">hanging</th></tr>\n");
    for (int r = 0; r < d->nreps; r++)
        for (int i = 0; i < d->reps[r].nflows; i++) {
            const struct results_drill_flow *fl = &d->reps[r].flows[i];
            strbuf_add(sb, "<tr>");
            numcell(sb, &d->reps[r].index, "%.0f");
            strbuf_add(sb, "<td>");
            esc(sb, sget(&fl->name, "n/a"));
            strbuf_add(sb, "</td>");
            numcell(sb, &fl->detect_s, "%.6f");
            numcell(sb, &fl->detect_bound_s, "%.3f");
            boolcell(sb, &fl->detect_ok);
            numcell(sb, &fl->recover_s, "%.6f");
            numcell(sb, &fl->recover_deadline_s, "%.3f");
            boolcell(sb, &fl->recover_ok);
            strbuf_add(sb, "<td>");
            esc(sb, sget(&fl->detection, ""));
            strbuf_add(sb, "</td>");
            numcell(sb, &fl->issued, "%.0f");
            numcell(sb, &fl->completed, "%.0f");
            numcell(sb, &fl->failed, "%.0f");
            numcell(sb, &fl->abandoned, "%.0f");
            numcell(sb, &fl->hanging, "%.0f");
            strbuf_add(sb, "</tr>\n");
        }
    strbuf_add(sb, "</table>\n");
    if (d->summary_st == RESULTS_SET) {
        strbuf_add(sb, "<h2 id=\"drill-summary\">Over the repetitions</h2>\n<table>\n"
                       "<tr><th></th><th class=\"n\">min (s)</th><th class=\"n\">p50 (s)</th>"
                       "<th class=\"n\">max (s)</th><th class=\"n\">n</th></tr>\n");
        const struct results_drill_stat *st[] = {&d->detect, &d->recover};
        const char *names[] = {"detection", "recovery"};
        for (int k = 0; k < 2; k++) {
            strbuf_printf(sb, "<tr><th>%s</th>", names[k]);
            numcell(sb, &st[k]->min_s, "%.6f");
            numcell(sb, &st[k]->p50_s, "%.6f");
            numcell(sb, &st[k]->max_s, "%.6f");
            numcell(sb, &st[k]->n, "%.0f");
            strbuf_add(sb, "</tr>\n");
        }
        strbuf_add(sb, "</table>\n<table>\n");
        snprintf(b, sizeof(b), "%.0f", numv(&d->broke_bound));
        kv(sb, "broke the bound", b);
        snprintf(b, sizeof(b), "%.0f", numv(&d->never_recovered));
        kv(sb, "never recovered", b);
        snprintf(b, sizeof(b), "%.0f", numv(&d->agent_disagrees));
        kv(sb, "agent disagrees", b);
        strbuf_add(sb, "</table>\n");
    }
    tail(sb);
    return 0;
}

int report_figure_drill(struct strbuf *out, enum report_format fmt,
                        const struct results_drill_doc *d, struct ft_err *err)
{
    struct drill_fig df;
    drill_build(d, &df);
    int rc = emit(out, fmt, report_plot_rows, &df.f, err);
    drill_free(&df);
    return rc;
}
