/* report_plot: the report's figures drawn with cairo on any cairo_t (text in cairo's toy text
 * API, "sans-serif" through fontconfig): latency histograms and CDFs on a log axis with the
 * percentile markers, timelines, a sweep's heat map, a drill's timeline rows; and the two
 * surfaces that carry them, SVG text to embed in HTML and PNG bytes. No curses. */
#ifndef REPORT_PLOT_H
#define REPORT_PLOT_H

#include <stdbool.h>

#include <cairo.h>

#include "common/ft_err.h"
#include "common/strbuf.h"
#include "engine/flow/hist.h"

#define REPORT_PLOT_MAX_SERIES 8

/* The palette (Okabe and Ito's colour-blind-safe set): quiet is blue, loaded vermillion. */
enum report_colour {
    REPORT_BLUE,
    REPORT_VERMILLION,
    REPORT_GREEN,
    REPORT_ORANGE,
    REPORT_PURPLE,
    REPORT_SKY,
    REPORT_YELLOW,
    REPORT_BLACK,
    REPORT_NCOLOURS
};
/* 0xRRGGBB of a colour (for the HTML legend and the tests). */
unsigned report_colour_rgb(enum report_colour c);

/* Latency figures: one series per phase (its histogram in ns) with its markers in
 * microseconds (NaN: none drawn). */
struct report_lat_series {
    const char *label;
    const struct hist *h;
    enum report_colour colour;
    double p50_us, p99_us, p999_us;
};
struct report_lat_fig {
    const char *title;
    const char *kind; /* the latency kind, named on the x axis */
    int n;
    struct report_lat_series s[REPORT_PLOT_MAX_SERIES];
};
/* The share of operations per bin (20 bins per decade), log x, log y, markers labelled. */
void report_plot_hist(cairo_t *cr, double w, double h, const void *lat_fig);
/* The cumulative share of operations, log x, y tail-stretched (90%, 99%, 99.9% evenly
 * spaced), markers labelled. */
void report_plot_cdf(cairo_t *cr, double w, double h, const void *lat_fig);

/* Lines over x (a timeline), with shaded spans (phases). */
struct report_line_series {
    const char *label;
    enum report_colour colour;
    int n;
    const double *x, *y;
};
struct report_line_fig {
    const char *title, *xlabel, *ylabel; /* the labels name the units */
    int n;
    struct report_line_series s[REPORT_PLOT_MAX_SERIES];
    int nspans;
    struct {
        double x0, x1;
        const char *label;
    } spans[4];
};
void report_plot_lines(cairo_t *cr, double w, double h, const void *line_fig);

/* An n x n matrix (row: sender, column: receiver), coloured by each cell's ratio to the
 * median (the worse, the darker), the value printed in it. */
struct report_heat_fig {
    const char *title, *unit;
    bool higher_better;
    int n;
    const char *const *labels; /* n */
    const double *v;           /* n * n; NaN: not measured */
    const bool *failed;        /* n * n, or NULL */
    double median;
};
void report_plot_heat(cairo_t *cr, double w, double h, const void *heat_fig);

/* Rows of spans and markers over one time axis (a drill: each repetition's flows). */
struct report_row {
    const char *label;
    int nspans;
    struct {
        double x0, x1;
        enum report_colour colour;
    } spans[3];
    int nmarks;
    struct {
        double x;
        enum report_colour colour;
        char shape; /* 'v' a triangle, '|' a tick, 'o' a dot */
    } marks[6];
};
struct report_rows_fig {
    const char *title, *xlabel;
    int n;
    const struct report_row *rows;
    int nlegend;
    struct {
        const char *label;
        enum report_colour colour;
        char shape; /* as a mark's, or '#' for a span */
    } legend[8];
};
void report_plot_rows(cairo_t *cr, double w, double h, const void *rows_fig);

typedef void (*report_draw_fn)(cairo_t *cr, double w, double h, const void *fig);

/* Draw fig on an SVG surface of w x h points and append the <svg> element to out: cairo's
 * XML prolog left out, its ids prefixed with idp so that several can share one HTML page. */
int report_plot_svg(report_draw_fn fn, const void *fig, double w, double h, const char *idp,
                    struct strbuf *out, struct ft_err *err);
/* The same as PNG bytes (w x h pixels), appended to out. */
int report_plot_png(report_draw_fn fn, const void *fig, int w, int h, struct strbuf *out,
                    struct ft_err *err);

/* A latency in microseconds as the axes write it, scaled to ns, us, ms or s ("250 us"). */
void report_plot_us(char *buf, size_t len, double us);

#endif
