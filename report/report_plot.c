/* report_plot: the report's figures, drawn with cairo (https://www.cairographics.org/manual/)
 * in user units of points (SVG) or pixels (PNG). Text uses cairo's toy text API
 * (cairo_select_font_face, cairo_show_text): one face, left-to-right ASCII labels, which is
 * all the figures need; pango is not required. */
#include "report/report_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cairo-svg.h>

static const unsigned palette[REPORT_NCOLOURS] = {
    0x0072B2, /* blue */
    0xD55E00, /* vermillion */
    0x009E73, /* bluish green */
    0xE69F00, /* orange */
    0xCC79A7, /* reddish purple */
    0x56B4E9, /* sky blue */
    0xF0E442, /* yellow */
    0x000000, /* black */
};

unsigned report_colour_rgb(enum report_colour c)
{
    return palette[(unsigned)c % REPORT_NCOLOURS];
}

static void rgb(cairo_t *cr, unsigned v, double alpha)
{
    cairo_set_source_rgba(cr, ((v >> 16) & 0xff) / 255.0, ((v >> 8) & 0xff) / 255.0,
                          (v & 0xff) / 255.0, alpha);
}

static void colour(cairo_t *cr, enum report_colour c, double alpha)
{
    rgb(cr, report_colour_rgb(c), alpha);
}

static void font(cairo_t *cr, double size, bool bold)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

static double text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

/* s with its baseline at y, at x aligned by ax (0 left, 0.5 centre, 1 right). */
static void text(cairo_t *cr, double x, double y, double ax, const char *s)
{
    cairo_move_to(cr, x - ax * text_width(cr, s), y);
    cairo_show_text(cr, s);
}

static void background(cairo_t *cr, double w, double h)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
}

void report_plot_us(char *buf, size_t len, double us)
{
    double a = fabs(us);
    if (!isfinite(us))
        snprintf(buf, len, "n/a");
    else if (a > 0 && a < 1)
        snprintf(buf, len, "%.3g ns", us * 1000);
    else if (a < 1000)
        snprintf(buf, len, "%.3g us", us);
    else if (a < 1e6)
        snprintf(buf, len, "%.3g ms", us / 1000);
    else
        snprintf(buf, len, "%.3g s", us / 1e6);
}

/* The plot area inside a figure. */
struct area {
    double x0, y0, x1, y1;
};

/* The title (bold, top left) and a legend of series on its line, right-aligned, or on a
 * line of its own under it when both do not fit; returns the header's bottom (y). */
static double title_legend(cairo_t *cr, double w, const char *title, int n,
                           const char *const *labels, const enum report_colour *cols)
{
    cairo_set_source_rgb(cr, 0, 0, 0);
    font(cr, 14, true);
    text(cr, 12, 20, 0, title ? title : "");
    double tw = text_width(cr, title ? title : "");
    font(cr, 12, false);
    double lw = 0;
    for (int i = 0; i < n; i++)
        lw += text_width(cr, labels[i]) + 20 + 14;
    double y = 20, bottom = 26;
    if (12 + tw + 24 + lw > w - 12) {
        y = 40;
        bottom = 46;
    }
    double x = w - 12;
    for (int i = n - 1; i >= 0; i--) {
        x -= text_width(cr, labels[i]);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text(cr, x, y, 0, labels[i]);
        x -= 20;
        colour(cr, cols[i], 1);
        cairo_rectangle(cr, x, y - 10, 14, 12);
        cairo_fill(cr);
        x -= 14;
    }
    return bottom;
}

static void frame(cairo_t *cr, const struct area *a)
{
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, a->x0, a->y0, a->x1 - a->x0, a->y1 - a->y0);
    cairo_stroke(cr);
}

static void grid_line(cairo_t *cr, double x0, double y0, double x1, double y1)
{
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_set_line_width(cr, 0.8);
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
    cairo_stroke(cr);
}

/* A log-us x axis over decades [d0, d1]: the gridlines and tick labels (1, 2, 5 of each
 * decade when the range is narrow), and the axis label under them. */
static double lx(const struct area *a, double d0, double d1, double us)
{
    return a->x0 + (log10(us) - d0) / (d1 - d0) * (a->x1 - a->x0);
}

static void log_x_axis(cairo_t *cr, const struct area *a, int d0, int d1, const char *label)
{
    static const double steps[] = {1, 2, 5};
    int nsteps = d1 - d0 <= 3 ? 3 : 1;
    font(cr, 11, false);
    for (int d = d0; d <= d1; d++)
        for (int k = 0; k < nsteps; k++) {
            double us = steps[k] * pow(10, d);
            if (log10(us) > d1 + 1e-9)
                continue;
            double x = lx(a, d0, d1, us);
            grid_line(cr, x, a->y0, x, a->y1);
            char b[32];
            report_plot_us(b, sizeof(b), us);
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
            text(cr, x, a->y1 + 15, 0.5, b);
        }
    font(cr, 12, false);
    text(cr, (a->x0 + a->x1) / 2, a->y1 + 34, 0.5, label);
}

/* Rounded tick spacing for a linear axis over span. */
static double nice_step(double span, int want)
{
    if (!(span > 0))
        return 1;
    double raw = span / want, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

static void fmt_num(char *b, size_t len, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step));
    snprintf(b, len, "%.*f", dec > 6 ? 6 : dec, v);
}

/* The vertical label of the y axis, centred beside the area. */
static void y_label(cairo_t *cr, const struct area *a, const char *label)
{
    cairo_save(cr);
    font(cr, 12, false);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_translate(cr, 16, (a->y0 + a->y1) / 2);
    cairo_rotate(cr, -M_PI / 2);
    text(cr, 0, 0, 0.5, label);
    cairo_restore(cr);
}

/* --- latency: histogram and CDF ---------------------------------------------------------- */

#define BINS_PER_DECADE 20

static uint64_t hcount(const struct hist *h)
{
    return h ? atomic_load_explicit(&h->count, memory_order_relaxed) : 0;
}

/* The decades [d0, d1] that hold every series' min and max. */
static bool lat_range(const struct report_lat_fig *f, int *d0, int *d1)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < f->n; i++) {
        const struct hist *h = f->s[i].h;
        if (!hcount(h))
            continue;
        double mn = (double)atomic_load(&h->min) / 1000, mx = (double)atomic_load(&h->max) / 1000;
        lo = fmin(lo, mn > 0.001 ? mn : 0.001);
        hi = fmax(hi, mx > 0.001 ? mx : 0.001);
    }
    if (!isfinite(lo))
        return false;
    *d0 = (int)floor(log10(lo) + 1e-9);
    *d1 = (int)ceil(log10(hi) - 1e-9);
    if (*d1 <= *d0)
        *d1 = *d0 + 1;
    return true;
}

/* A bucket's midpoint in us (at least 1 ns: a log axis has no 0). */
static double bucket_mid_us(int b)
{
    double mid = ((double)hist_bucket_low(b) + (double)hist_bucket_high(b)) / 2;
    return (mid < 1 ? 1 : mid) / 1000;
}

static void no_data(cairo_t *cr, double w, double h, const char *title)
{
    background(cr, w, h);
    title_legend(cr, w, title, 0, NULL, NULL);
    font(cr, 14, false);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    text(cr, w / 2, h / 2, 0.5, "no latency samples recorded");
}

/* The legend's labels: "quiet (38,584 ops)". */
static double lat_legend(cairo_t *cr, double w, const struct report_lat_fig *f)
{
    char lab[REPORT_PLOT_MAX_SERIES][64];
    const char *labs[REPORT_PLOT_MAX_SERIES];
    enum report_colour cols[REPORT_PLOT_MAX_SERIES];
    for (int i = 0; i < f->n; i++) {
        snprintf(lab[i], sizeof(lab[i]), "%s (%llu ops)", f->s[i].label ? f->s[i].label : "",
                 (unsigned long long)hcount(f->s[i].h));
        labs[i] = lab[i];
        cols[i] = f->s[i].colour;
    }
    return title_legend(cr, w, f->title, f->n, labs, cols);
}

/* Markers per series: p50, p99 and p99.9 for up to two series, p99 alone for more. */
static int lat_marks(const struct report_lat_fig *f)
{
    return f->n > 2 ? 1 : 3;
}

/* Each series' p50 / p99 / p99.9 as a dashed line over the area with its label in a row of
 * its own in the band above it (so no two labels overlap). */
static void lat_markers(cairo_t *cr, const struct area *a, int d0, int d1,
                        const struct report_lat_fig *f)
{
    static const char *const names[] = {"p50", "p99", "p99.9"};
    static const double dashes[] = {5, 3};
    font(cr, 11, false);
    for (int i = 0; i < f->n; i++) {
        const double v[] = {f->s[i].p50_us, f->s[i].p99_us, f->s[i].p999_us};
        int nm = lat_marks(f);
        for (int k = nm == 1 ? 1 : 0; k < (nm == 1 ? 2 : 3); k++) {
            if (!isfinite(v[k]) || v[k] <= 0 || !hcount(f->s[i].h))
                continue;
            double x = lx(a, d0, d1, v[k]);
            if (x < a->x0 || x > a->x1)
                continue;
            double y = a->y0 - 6 - 13.0 * (nm == 1 ? f->n - 1 - i : (f->n - 1 - i) * 3 + (2 - k));
            colour(cr, f->s[i].colour, 1);
            cairo_set_line_width(cr, 1.2);
            cairo_set_dash(cr, dashes, 2, 0);
            cairo_move_to(cr, x, y + 2);
            cairo_line_to(cr, x, a->y1);
            cairo_stroke(cr);
            cairo_set_dash(cr, NULL, 0, 0);
            char val[32], b[64];
            report_plot_us(val, sizeof(val), v[k]);
            snprintf(b, sizeof(b), "%s %s %s", f->s[i].label ? f->s[i].label : "", names[k], val);
            bool right = x + 4 + text_width(cr, b) > a->x1;
            text(cr, right ? x - 4 : x + 4, y, right ? 1 : 0, b);
        }
    }
}

/* The area under the header and the marker band (a row per marker). */
static struct area lat_area(double w, double h, double top, const struct report_lat_fig *f)
{
    struct area a = {72, top + 8 + 13.0 * lat_marks(f) * f->n + 8, w - 24, h - 48};
    return a;
}

void report_plot_hist(cairo_t *cr, double w, double h, const void *fig)
{
    const struct report_lat_fig *f = fig;
    int d0, d1;
    if (!lat_range(f, &d0, &d1)) {
        no_data(cr, w, h, f->title);
        return;
    }
    int nb = (d1 - d0) * BINS_PER_DECADE;
    double share[REPORT_PLOT_MAX_SERIES][BINS_PER_DECADE * 12] = {{0}};
    if (nb > BINS_PER_DECADE * 12)
        nb = BINS_PER_DECADE * 12;
    double smin = 1, smax = 0;
    for (int i = 0; i < f->n; i++) {
        const struct hist *hh = f->s[i].h;
        uint64_t total = hcount(hh);
        if (!total)
            continue;
        for (int b = 0; b < HIST_NBUCKETS; b++) {
            uint64_t c = atomic_load_explicit(&hh->b[b], memory_order_relaxed);
            if (!c)
                continue;
            int bin = (int)floor((log10(bucket_mid_us(b)) - d0) * BINS_PER_DECADE);
            bin = bin < 0 ? 0 : bin >= nb ? nb - 1 : bin;
            share[i][bin] += (double)c / (double)total;
        }
        for (int b = 0; b < nb; b++)
            if (share[i][b] > 0) {
                smin = fmin(smin, share[i][b]);
                smax = fmax(smax, share[i][b]);
            }
    }
    int e0 = (int)floor(log10(smin) + 1e-9), e1 = (int)ceil(log10(smax) - 1e-9);
    if (e1 <= e0)
        e1 = e0 + 1;
    if (e1 > 0)
        e1 = 0;
    background(cr, w, h);
    double top = lat_legend(cr, w, f);
    struct area a = lat_area(w, h, top, f);
    /* y: the share of the series' operations in a bin, log. */
    font(cr, 11, false);
    for (int e = e0; e <= e1; e++) {
        double y = a.y1 - (double)(e - e0) / (e1 - e0) * (a.y1 - a.y0);
        grid_line(cr, a.x0, y, a.x1, y);
        char b[32];
        double pct = pow(10, e) * 100;
        snprintf(b, sizeof(b), "%.*f%%", pct >= 1 ? 0 : -(e + 2), pct);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, a.x0 - 5, y + 4, 1, b);
    }
    y_label(cr, &a, "share of operations per bin (log)");
    char xl[96];
    snprintf(xl, sizeof(xl), "latency (%s), log scale, %d bins per decade",
             f->kind ? f->kind : "n/a", BINS_PER_DECADE);
    log_x_axis(cr, &a, d0, d1, xl);
    cairo_save(cr);
    cairo_rectangle(cr, a.x0, a.y0, a.x1 - a.x0, a.y1 - a.y0);
    cairo_clip(cr);
    for (int i = 0; i < f->n; i++) {
        if (!hcount(f->s[i].h))
            continue;
        cairo_new_path(cr);
        cairo_move_to(cr, a.x0, a.y1);
        for (int b = 0; b < nb; b++) {
            double xa = a.x0 + (double)b / nb * (a.x1 - a.x0),
                   xb = a.x0 + (double)(b + 1) / nb * (a.x1 - a.x0);
            double y = a.y1;
            if (share[i][b] > 0)
                y = a.y1 - (log10(share[i][b]) - e0) / (e1 - e0) * (a.y1 - a.y0);
            cairo_line_to(cr, xa, y);
            cairo_line_to(cr, xb, y);
        }
        cairo_line_to(cr, a.x1, a.y1);
        cairo_close_path(cr);
        colour(cr, f->s[i].colour, 0.22);
        cairo_fill_preserve(cr);
        colour(cr, f->s[i].colour, 1);
        cairo_set_line_width(cr, 1.6);
        cairo_stroke(cr);
    }
    cairo_restore(cr);
    frame(cr, &a);
    lat_markers(cr, &a, d0, d1, f);
}

/* The CDF's y: the share at or under a latency on a tail-stretched axis, -log10(1 - F), so
 * 90%, 99%, 99.9% and 99.99% are evenly spaced (the axis of HdrHistogram's percentile plots). */
static double cdf_y(const struct area *a, int top, double share)
{
    double t = share >= 1 ? top : -log10(1 - share);
    if (t > top)
        t = top;
    return a->y1 - t / top * (a->y1 - a->y0);
}

void report_plot_cdf(cairo_t *cr, double w, double h, const void *fig)
{
    const struct report_lat_fig *f = fig;
    int d0, d1;
    if (!lat_range(f, &d0, &d1)) {
        no_data(cr, w, h, f->title);
        return;
    }
    /* The top of the y axis: the decade of the largest series (99.99% for 10^4 samples). */
    uint64_t most = 0;
    for (int i = 0; i < f->n; i++)
        if (hcount(f->s[i].h) > most)
            most = hcount(f->s[i].h);
    int top = (int)ceil(log10((double)most));
    top = top < 2 ? 2 : top > 6 ? 6 : top;
    background(cr, w, h);
    double head = lat_legend(cr, w, f);
    struct area a = lat_area(w, h, head, f);
    font(cr, 11, false);
    for (int e = 0; e <= top; e++) {
        double share = 1 - pow(10, -e), y = cdf_y(&a, top, share);
        grid_line(cr, a.x0, y, a.x1, y);
        char b[16];
        snprintf(b, sizeof(b), "%.*f%%", e > 2 ? e - 2 : 0, share * 100);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, a.x0 - 5, y + 4, 1, b);
    }
    y_label(cr, &a, "operations at or under (tail-stretched)");
    char xl[96];
    snprintf(xl, sizeof(xl), "latency (%s), log scale", f->kind ? f->kind : "n/a");
    log_x_axis(cr, &a, d0, d1, xl);
    cairo_save(cr);
    cairo_rectangle(cr, a.x0, a.y0 - 1, a.x1 - a.x0, a.y1 - a.y0 + 2);
    cairo_clip(cr);
    for (int i = 0; i < f->n; i++) {
        const struct hist *hh = f->s[i].h;
        uint64_t total = hcount(hh), cum = 0;
        if (!total)
            continue;
        cairo_new_path(cr);
        double mn = (double)atomic_load(&hh->min) / 1000;
        cairo_move_to(cr, lx(&a, d0, d1, mn > 0.001 ? mn : 0.001), a.y1);
        for (int b = 0; b < HIST_NBUCKETS; b++) {
            uint64_t c = atomic_load_explicit(&hh->b[b], memory_order_relaxed);
            if (!c)
                continue;
            double x = lx(&a, d0, d1, ((double)hist_bucket_high(b) + 1) / 1000);
            /* A step: the share stays until the bucket's end, then rises. */
            cairo_line_to(cr, x, cdf_y(&a, top, (double)cum / total));
            cum += c;
            cairo_line_to(cr, x, cdf_y(&a, top, (double)cum / total));
        }
        colour(cr, f->s[i].colour, 1);
        cairo_set_line_width(cr, 2);
        cairo_stroke(cr);
    }
    cairo_restore(cr);
    frame(cr, &a);
    lat_markers(cr, &a, d0, d1, f);
}

/* --- lines over time ------------------------------------------------------------------- */

void report_plot_lines(cairo_t *cr, double w, double h, const void *fig)
{
    const struct report_line_fig *f = fig;
    double x0 = INFINITY, x1 = -INFINITY, ymax = 0;
    for (int i = 0; i < f->n; i++)
        for (int k = 0; k < f->s[i].n; k++) {
            if (!isfinite(f->s[i].x[k]) || !isfinite(f->s[i].y[k]))
                continue;
            x0 = fmin(x0, f->s[i].x[k]);
            x1 = fmax(x1, f->s[i].x[k]);
            ymax = fmax(ymax, f->s[i].y[k]);
        }
    for (int i = 0; i < f->nspans; i++) {
        x0 = fmin(x0, f->spans[i].x0);
        x1 = fmax(x1, f->spans[i].x1);
    }
    const char *labs[REPORT_PLOT_MAX_SERIES];
    enum report_colour cols[REPORT_PLOT_MAX_SERIES];
    for (int i = 0; i < f->n; i++) {
        labs[i] = f->s[i].label ? f->s[i].label : "";
        cols[i] = f->s[i].colour;
    }
    background(cr, w, h);
    double top = title_legend(cr, w, f->title, f->n, labs, cols);
    if (!isfinite(x0)) {
        font(cr, 14, false);
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        text(cr, w / 2, h / 2, 0.5, "no timeline recorded");
        return;
    }
    if (x1 <= x0)
        x1 = x0 + 1;
    double ystep = nice_step(ymax > 0 ? ymax : 1, 5);
    double ytop = ystep * ceil((ymax > 0 ? ymax * 1.05 : 1) / ystep);
    struct area a = {72, top + 14, w - 24, h - 48};
    /* Phases: shaded bands, named at their top. */
    for (int i = 0; i < f->nspans; i++) {
        double sa = a.x0 + (f->spans[i].x0 - x0) / (x1 - x0) * (a.x1 - a.x0),
               sb = a.x0 + (f->spans[i].x1 - x0) / (x1 - x0) * (a.x1 - a.x0);
        cairo_set_source_rgb(cr, i % 2 ? 0.93 : 0.97, i % 2 ? 0.93 : 0.97, i % 2 ? 0.93 : 0.97);
        cairo_rectangle(cr, sa, a.y0, sb - sa, a.y1 - a.y0);
        cairo_fill(cr);
        font(cr, 11, true);
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        if (f->spans[i].label)
            text(cr, sa + 4, a.y0 + 13, 0, f->spans[i].label);
    }
    font(cr, 11, false);
    for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
        double y = a.y1 - v / ytop * (a.y1 - a.y0);
        grid_line(cr, a.x0, y, a.x1, y);
        char b[32];
        fmt_num(b, sizeof(b), v, ystep);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, a.x0 - 5, y + 4, 1, b);
    }
    double xstep = nice_step(x1 - x0, 8);
    for (double v = ceil(x0 / xstep) * xstep; v <= x1 + 1e-9; v += xstep) {
        double x = a.x0 + (v - x0) / (x1 - x0) * (a.x1 - a.x0);
        grid_line(cr, x, a.y0, x, a.y1);
        char b[32];
        fmt_num(b, sizeof(b), v, xstep);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, x, a.y1 + 15, 0.5, b);
    }
    font(cr, 12, false);
    text(cr, (a.x0 + a.x1) / 2, a.y1 + 34, 0.5, f->xlabel ? f->xlabel : "");
    y_label(cr, &a, f->ylabel ? f->ylabel : "");
    for (int i = 0; i < f->n; i++) {
        bool pen = false;
        cairo_new_path(cr);
        for (int k = 0; k < f->s[i].n; k++) {
            double xv = f->s[i].x[k], yv = f->s[i].y[k];
            if (!isfinite(xv) || !isfinite(yv)) {
                pen = false;
                continue;
            }
            double x = a.x0 + (xv - x0) / (x1 - x0) * (a.x1 - a.x0),
                   y = a.y1 - yv / ytop * (a.y1 - a.y0);
            if (pen)
                cairo_line_to(cr, x, y);
            else
                cairo_move_to(cr, x, y);
            pen = true;
            cairo_rectangle(cr, x - 1.5, y - 1.5, 3, 3);
            cairo_move_to(cr, x, y);
        }
        colour(cr, f->s[i].colour, 1);
        cairo_set_line_width(cr, 1.8);
        cairo_stroke(cr);
    }
    frame(cr, &a);
}

/* --- a sweep's heat map ---------------------------------------------------------------- */

/* Viridis (perceptually uniform, readable with colour-vision deficiencies), t in [0, 1]. */
static void viridis(double t, double *r, double *g, double *b)
{
    static const unsigned stops[] = {0x440154, 0x3b528b, 0x21918c, 0x5ec962, 0xfde725};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double p = t * 4;
    int i = (int)floor(p);
    if (i >= 4)
        i = 3;
    double u = p - i;
    unsigned a = stops[i], c = stops[i + 1];
    *r = (((a >> 16) & 0xff) * (1 - u) + ((c >> 16) & 0xff) * u) / 255;
    *g = (((a >> 8) & 0xff) * (1 - u) + ((c >> 8) & 0xff) * u) / 255;
    *b = ((a & 0xff) * (1 - u) + (c & 0xff) * u) / 255;
}

/* A ratio to the median (1: at it or better) on the scale: 0.25x or worse is t = 0. */
static double heat_t(double ratio)
{
    return (ratio - 0.25) / 0.75;
}

void report_plot_heat(cairo_t *cr, double w, double h, const void *fig)
{
    const struct report_heat_fig *f = fig;
    background(cr, w, h);
    title_legend(cr, w, f->title, 0, NULL, NULL);
    int n = f->n;
    if (n <= 0)
        return;
    font(cr, 11, false);
    double lw = 0;
    for (int i = 0; i < n; i++)
        lw = fmax(lw, text_width(cr, f->labels[i]));
    double left = 16 + lw + 8, top = 72, bottom = h - 56;
    double cell = fmin((w - left - 16) / n, (bottom - top) / n);
    if (cell < 4)
        cell = 4;
    font(cr, 12, false);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text(cr, left + cell * n / 2, top - 24, 0.5, "receiver (column)");
    font(cr, 11, false);
    for (int i = 0; i < n; i++) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, left - 6, top + cell * i + cell / 2 + 4, 1, f->labels[i]);
        char b[16];
        snprintf(b, sizeof(b), "%d", i);
        text(cr, left + cell * i + cell / 2, top - 6, 0.5, b);
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            double x = left + c * cell, y = top + r * cell, v = f->v[r * n + c];
            const char *mark = NULL;
            char b[32];
            double cr_ = 0.93, cg = 0.93, cb = 0.93, lum = 1;
            if (r == c) {
                cr_ = cg = cb = 1;
                mark = "-";
            } else if (f->failed && f->failed[r * n + c]) {
                cr_ = cg = cb = 0.45;
                lum = 0.45;
                mark = "failed";
            } else if (!isfinite(v)) {
                mark = "?";
            } else {
                double ratio =
                    f->median > 0 ? (f->higher_better ? v / f->median : f->median / v) : 1;
                viridis(heat_t(ratio), &cr_, &cg, &cb);
                lum = 0.299 * cr_ + 0.587 * cg + 0.114 * cb;
                snprintf(b, sizeof(b), v >= 100 ? "%.0f" : "%.1f", v);
                mark = b;
            }
            cairo_set_source_rgb(cr, cr_, cg, cb);
            cairo_rectangle(cr, x + 1, y + 1, cell - 2, cell - 2);
            cairo_fill(cr);
            if (mark && cell >= 24) {
                double fs = fmin(12, cell / 4);
                font(cr, fs, false);
                if (lum < 0.5)
                    cairo_set_source_rgb(cr, 1, 1, 1);
                else
                    cairo_set_source_rgb(cr, 0, 0, 0);
                text(cr, x + cell / 2, y + cell / 2 + fs / 3, 0.5, mark);
            }
        }
    /* The scale: the ratio to the median from 0.25x (or worse) to 1x. */
    double sx = left, sy = top + cell * n + 14, sw = fmin(260, cell * n);
    for (int k = 0; k < 100; k++) {
        double rr, gg, bb;
        viridis(k / 99.0, &rr, &gg, &bb);
        cairo_set_source_rgb(cr, rr, gg, bb);
        cairo_rectangle(cr, sx + sw * k / 100, sy, sw / 100 + 0.5, 10);
        cairo_fill(cr);
    }
    font(cr, 11, false);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    char b[96];
    snprintf(b, sizeof(b), "median %.3g %s; %s", f->median, f->unit ? f->unit : "",
             f->higher_better ? "cell / median" : "median / cell");
    text(cr, sx, sy + 24, 0, "0.25x or worse");
    text(cr, sx + sw, sy + 24, 1, "1x or better");
    text(cr, sx + sw + 12, sy + 9, 0, b);
}

/* --- rows of spans and marks (a drill) ----------------------------------------------- */

static void mark(cairo_t *cr, double x, double y, char shape)
{
    if (shape == 'v') {
        cairo_move_to(cr, x - 5, y - 7);
        cairo_line_to(cr, x + 5, y - 7);
        cairo_line_to(cr, x, y + 1);
        cairo_close_path(cr);
        cairo_fill(cr);
    } else if (shape == '|') {
        cairo_set_line_width(cr, 2.5);
        cairo_move_to(cr, x, y - 9);
        cairo_line_to(cr, x, y + 9);
        cairo_stroke(cr);
    } else if (shape == '#') {
        cairo_rectangle(cr, x - 7, y - 5, 14, 10);
        cairo_fill(cr);
    } else {
        cairo_arc(cr, x, y, 4.5, 0, 2 * M_PI);
        cairo_fill(cr);
    }
}

void report_plot_rows(cairo_t *cr, double w, double h, const void *fig)
{
    const struct report_rows_fig *f = fig;
    background(cr, w, h);
    title_legend(cr, w, f->title, 0, NULL, NULL);
    double x0 = 0, x1 = -INFINITY;
    for (int i = 0; i < f->n; i++) {
        for (int k = 0; k < f->rows[i].nspans; k++)
            x1 = fmax(x1, f->rows[i].spans[k].x1);
        for (int k = 0; k < f->rows[i].nmarks; k++)
            x1 = fmax(x1, f->rows[i].marks[k].x);
    }
    if (!(x1 > x0))
        x1 = 1;
    x1 *= 1.03;
    font(cr, 11, false);
    double lw = 0;
    for (int i = 0; i < f->n; i++)
        lw = fmax(lw, text_width(cr, f->rows[i].label));
    struct area a = {16 + lw + 10, 34, w - 16, h - 70};
    double lane = f->n ? (a.y1 - a.y0) / f->n : 1;
    double step = nice_step(x1 - x0, 8);
    for (double v = 0; v <= x1 + 1e-9; v += step) {
        double x = a.x0 + (v - x0) / (x1 - x0) * (a.x1 - a.x0);
        grid_line(cr, x, a.y0, x, a.y1);
        char b[32];
        fmt_num(b, sizeof(b), v, step);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, x, a.y1 + 15, 0.5, b);
    }
    font(cr, 12, false);
    text(cr, (a.x0 + a.x1) / 2, a.y1 + 32, 0.5, f->xlabel ? f->xlabel : "");
    for (int i = 0; i < f->n; i++) {
        const struct report_row *r = &f->rows[i];
        double yc = a.y0 + lane * i + lane / 2;
        if (i % 2) {
            cairo_set_source_rgb(cr, 0.97, 0.97, 0.97);
            cairo_rectangle(cr, a.x0, a.y0 + lane * i, a.x1 - a.x0, lane);
            cairo_fill(cr);
        }
        font(cr, 11, false);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, a.x0 - 6, yc + 4, 1, r->label);
        for (int k = 0; k < r->nspans; k++) {
            double sa = a.x0 + (r->spans[k].x0 - x0) / (x1 - x0) * (a.x1 - a.x0),
                   sb = a.x0 + (r->spans[k].x1 - x0) / (x1 - x0) * (a.x1 - a.x0);
            colour(cr, r->spans[k].colour, 0.35);
            double bh = fmin(lane * 0.6, 36);
            cairo_rectangle(cr, sa, yc - bh / 2, sb - sa > 1 ? sb - sa : 1, bh);
            cairo_fill(cr);
        }
        for (int k = 0; k < r->nmarks; k++) {
            double x = a.x0 + (r->marks[k].x - x0) / (x1 - x0) * (a.x1 - a.x0);
            colour(cr, r->marks[k].colour, 1);
            mark(cr, x, yc, r->marks[k].shape);
        }
    }
    frame(cr, &a);
    double lx_ = a.x0, ly = h - 14;
    font(cr, 11, false);
    for (int i = 0; i < f->nlegend; i++) {
        colour(cr, f->legend[i].colour, f->legend[i].shape == '#' ? 0.35 : 1);
        mark(cr, lx_ + 7, ly - 4, f->legend[i].shape);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text(cr, lx_ + 18, ly, 0, f->legend[i].label);
        lx_ += 18 + text_width(cr, f->legend[i].label) + 18;
    }
}

/* --- surfaces -------------------------------------------------------------------------- */

static cairo_status_t to_strbuf(void *closure, const unsigned char *data, unsigned int len)
{
    strbuf_addn(closure, (const char *)data, len);
    return CAIRO_STATUS_SUCCESS;
}

static int cairo_failed(cairo_status_t st, const char *what, struct ft_err *err)
{
    return ft_err_set(err, st == CAIRO_STATUS_NO_MEMORY ? -ENOMEM : -EIO, "cairo (%s): %s", what,
                      cairo_status_to_string(st));
}

/* Append s to out with every id prefixed: id="X", href="#X", url(#X). */
static void prefix_ids(const char *s, const char *idp, struct strbuf *out)
{
    static const char *const pats[] = {"id=\"", "href=\"#", "url(#"};
    while (*s) {
        int hit = -1;
        for (int k = 0; k < 3 && hit < 0; k++)
            if (!strncmp(s, pats[k], strlen(pats[k])))
                hit = k;
        if (hit < 0) {
            strbuf_addn(out, s, 1);
            s++;
            continue;
        }
        strbuf_add(out, pats[hit]);
        strbuf_add(out, idp);
        s += strlen(pats[hit]);
    }
}

int report_plot_svg(report_draw_fn fn, const void *fig, double w, double h, const char *idp,
                    struct strbuf *out, struct ft_err *err)
{
    struct strbuf svg;
    strbuf_init(&svg);
    cairo_surface_t *s = cairo_svg_surface_create_for_stream(to_strbuf, &svg, w, h);
    /* Points as the user unit: the SVG's viewBox is w x h. */
    cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
    cairo_t *cr = cairo_create(s);
    fn(cr, w, h, fig);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS) {
        strbuf_free(&svg);
        return cairo_failed(st, "SVG", err);
    }
    const char *start = strstr(svg.s, "<svg");
    if (!start) {
        strbuf_free(&svg);
        return ft_err_set(err, -EIO, "cairo wrote no <svg> element");
    }
    prefix_ids(start, idp, out);
    strbuf_free(&svg);
    return 0;
}

int report_plot_png(report_draw_fn fn, const void *fig, int w, int h, struct strbuf *out,
                    struct ft_err *err)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    cairo_t *cr = cairo_create(s);
    fn(cr, w, h, fig);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_write_to_png_stream(s, to_strbuf, out);
    cairo_surface_destroy(s);
    return st == CAIRO_STATUS_SUCCESS ? 0 : cairo_failed(st, "PNG", err);
}
