/* live_plot: the live view's arithmetic, kept apart from curses so it can be tested without a
 * terminal: a logarithmic latency axis in decades (ticks and labels in ns/us/ms/s), binning a
 * histogram's buckets into screen columns, bar heights on a linear or log count scale,
 * resampling a timeline to a width, and numbers formatted with their units. */
#ifndef LIVE_PLOT_H
#define LIVE_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/flow/hist.h"

/* A latency axis: width columns covering [10^lo_exp, 10^(lo_exp+ndec)) ns, each column the
 * same ratio wide (10^(ndec/width)). */
struct live_axis {
    int width;  /* columns, >= 1 */
    int lo_exp; /* the left edge is 10^lo_exp ns */
    int ndec;   /* decades shown, >= 1 */
};

/* Whole decades covering [min_ns, max_ns]: at least 2 (a tail needs room), at most one per
 * 4 columns (labels must fit); when capped, the top decades are kept. min_ns <= 0 or NaN
 * is read as 1 ns. */
void live_axis_fit(struct live_axis *ax, double min_ns, double max_ns, int width);
/* The column a latency falls in, clamped to [0, width). */
int live_axis_col(const struct live_axis *ax, double ns);
/* The smallest latency of column c (ns). */
double live_axis_col_low(const struct live_axis *ax, int c);

/* "100ns", "1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s"... for 10^e ns. */
void live_decade_label(int e, char *buf, size_t len);

struct live_tick {
    int col;       /* the column of the decade's value 10^e ns */
    int label_x;   /* where its label starts (columns from the axis's left), -1: no label */
    char label[8]; /* "10us" */
};
/* Ticks at every decade boundary of the axis (ndec + 1 of them, at most max); labels start
 * at their tick (the last ends at the right edge) and are dropped where they would touch
 * the previous one. Returns the number of ticks. */
int live_axis_ticks(const struct live_axis *ax, struct live_tick *t, int max);

/* Add each non-empty bucket of h to the column holding the bucket's midpoint; overflow
 * samples (beyond the histogram's range) go to the last column. cols has ax->width entries
 * and is overwritten. Returns the largest column count. */
uint64_t live_bin(const struct hist *h, const struct live_axis *ax, uint64_t *cols);
/* Bar height as a fraction of the full height for a column count: linear (c / max) or
 * logarithmic (log(1 + c) / log(1 + max)); 0 for c = 0, 1 for c = max. */
double live_bar_frac(uint64_t c, uint64_t max, bool log_scale);

/* Average n values (oldest first) into at most width columns, per values each (the last
 * column may average fewer); *per gets the group size. Returns the columns written. */
int live_resample(const float *v, int n, int width, float *out, int *per);

/* A latency given in ns, written in us with 3-4 significant digits ("0.250", "26.3",
 * "1364"); "n/a" for NaN or negative. */
void live_fmt_us(char *buf, size_t len, double ns);
/* A number with an SI prefix and up to 3 significant digits ("950", "12.3k", "4.56M"). */
void live_fmt_si(char *buf, size_t len, double v);
/* Bytes as the mixes write them: "64B", "4KiB", "1MiB", "1.5KiB"; 0: "mixed". */
void live_fmt_bytes(char *buf, size_t len, uint64_t b);
/* A queue's bytes in at most 7 columns, binary units: "512B", "9.5KiB", "64KiB", "1.25MiB",
 * "31.9MiB". */
void live_fmt_queue(char *buf, size_t len, uint64_t b);

#endif
