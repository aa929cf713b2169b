/* live_plot: log latency axis, histogram binning, bar scales, timeline resampling and
 * number formatting for the live view; pure functions, no curses. */
#include "tui/live_plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void live_axis_fit(struct live_axis *ax, double min_ns, double max_ns, int width)
{
    if (width < 1)
        width = 1;
    if (!(min_ns >= 1))
        min_ns = 1;
    if (!(max_ns >= min_ns))
        max_ns = min_ns;
    int lo = (int)floor(log10(min_ns));
    /* The top edge is exclusive: a maximum of exactly 10^k needs the decade above it. */
    int hi = (int)floor(log10(max_ns)) + 1;
    if (hi - lo < 2)
        hi = lo + 2;
    int maxdec = width / 4 < 1 ? 1 : width / 4;
    if (hi - lo > maxdec)
        lo = hi - maxdec;
    ax->width = width;
    ax->lo_exp = lo;
    ax->ndec = hi - lo;
}

int live_axis_col(const struct live_axis *ax, double ns)
{
    if (!(ns > 0))
        return 0;
    double pos = (log10(ns) - ax->lo_exp) / ax->ndec * ax->width;
    /* Absorb rounding at exact decade boundaries (log10(1000) may come out as 2.9999...). */
    int c = (int)floor(pos + 1e-9);
    return c < 0 ? 0 : c >= ax->width ? ax->width - 1 : c;
}

double live_axis_col_low(const struct live_axis *ax, int c)
{
    return pow(10.0, ax->lo_exp + (double)c * ax->ndec / ax->width);
}

void live_decade_label(int e, char *buf, size_t len)
{
    static const char *const unit[] = {"ns", "us", "ms", "s"};
    if (e < 0) {
        snprintf(buf, len, "1e%dns", e);
        return;
    }
    int u = e / 3 > 3 ? 3 : e / 3;
    int p = e - 3 * u;
    long m = 1;
    for (int i = 0; i < p; i++)
        m *= 10;
    snprintf(buf, len, "%ld%s", m, unit[u]);
}

int live_axis_ticks(const struct live_axis *ax, struct live_tick *t, int max)
{
    int n = 0, prev_end = -2;
    for (int k = 0; k <= ax->ndec && n < max; k++) {
        struct live_tick *tk = &t[n++];
        int col = (int)floor((double)k * ax->width / ax->ndec + 1e-9);
        tk->col = col >= ax->width ? ax->width - 1 : col;
        live_decade_label(ax->lo_exp + k, tk->label, sizeof(tk->label));
        int len = (int)strlen(tk->label);
        int x = k == ax->ndec ? ax->width - len : tk->col;
        if (x < 0 || x <= prev_end + 1 || x + len > ax->width) {
            tk->label_x = -1;
            continue;
        }
        tk->label_x = x;
        prev_end = x + len - 1;
    }
    return n;
}

uint64_t live_bin(const struct hist *h, const struct live_axis *ax, uint64_t *cols)
{
    memset(cols, 0, (size_t)ax->width * sizeof(*cols));
    for (int b = 0; b < HIST_NBUCKETS; b++) {
        uint64_t c = atomic_load_explicit(&h->b[b], memory_order_relaxed);
        if (!c)
            continue;
        double mid = ((double)hist_bucket_low(b) + (double)hist_bucket_high(b)) / 2;
        cols[live_axis_col(ax, mid)] += c;
    }
    cols[ax->width - 1] += atomic_load_explicit(&h->overflow, memory_order_relaxed);
    uint64_t top = 0;
    for (int c = 0; c < ax->width; c++)
        if (cols[c] > top)
            top = cols[c];
    return top;
}

double live_bar_frac(uint64_t c, uint64_t max, bool log_scale)
{
    if (!c || !max)
        return 0;
    if (c >= max)
        return 1;
    if (log_scale)
        return log1p((double)c) / log1p((double)max);
    return (double)c / (double)max;
}

int live_resample(const float *v, int n, int width, float *out, int *per)
{
    if (n <= 0 || width <= 0) {
        *per = 1;
        return 0;
    }
    int g = (n + width - 1) / width;
    int cols = 0;
    for (int i = 0; i < n; i += g) {
        double sum = 0;
        int k = 0;
        for (; k < g && i + k < n; k++)
            sum += v[i + k];
        out[cols++] = (float)(sum / k);
    }
    *per = g;
    return cols;
}

void live_fmt_us(char *buf, size_t len, double ns)
{
    if (!(ns >= 0)) {
        snprintf(buf, len, "n/a");
        return;
    }
    double us = ns / 1000;
    const char *fmt = us < 1 ? "%.3f" : us < 10 ? "%.2f" : us < 1000 ? "%.1f" : "%.0f";
    snprintf(buf, len, fmt, us);
}

void live_fmt_si(char *buf, size_t len, double v)
{
    if (isnan(v)) {
        snprintf(buf, len, "n/a");
        return;
    }
    static const char pfx[] = " kMGTPE";
    double a = fabs(v);
    int p = 0;
    while (a >= 999.5 && p < 6) {
        a /= 1000;
        v /= 1000;
        p++;
    }
    const char *fmt = p == 0 && v == floor(v) ? "%.0f%s"
                      : a < 9.995             ? "%.2f%s"
                      : a < 99.95             ? "%.1f%s"
                                              : "%.0f%s";
    char s[2] = {p ? pfx[p] : '\0', '\0'};
    snprintf(buf, len, fmt, v, s);
}

void live_fmt_bytes(char *buf, size_t len, uint64_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    if (!b) {
        snprintf(buf, len, "mixed");
        return;
    }
    int u = 0;
    double v = (double)b;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, v == floor(v) ? "%.0f%s" : "%.1f%s", v, unit[u]);
}

/* Bytes with binary units, at most 7 columns up to 99.9 GiB (a switch's buffer is tens of
 * MiB): "512B", "9.5KiB", "64KiB", "1.25MiB", "31.9MiB", "512MiB", "1.0GiB". */
void live_fmt_queue(char *buf, size_t len, uint64_t b)
{
    double k = b / 1024.0, m = b / 1048576.0;
    if (b < 1024)
        snprintf(buf, len, "%lluB", (unsigned long long)b);
    else if (k < 9.95)
        snprintf(buf, len, "%.1fKiB", k);
    else if (k < 1023.5)
        snprintf(buf, len, "%.0fKiB", k);
    else if (m < 9.995)
        snprintf(buf, len, "%.2fMiB", m);
    else if (m < 99.95)
        snprintf(buf, len, "%.1fMiB", m);
    else if (m < 1023.5)
        snprintf(buf, len, "%.0fMiB", m);
    else
        snprintf(buf, len, "%.1fGiB", m / 1024);
}
