/* sweep_stats: bucket medians and MADs (sweep_stats.h): a counting sort, branch-free selection. */
#include "engine/sweep/sweep_stats.h"

#include <math.h>
#include <stdlib.h>

#include "common/xalloc.h"

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Moves the values of x[lo..hi) under p (or_equal: not over p, a NaN included, so that a round
 * always ends) to the front, returning where they end: Lomuto's partition without a branch on
 * the values (each step swaps, and moves the boundary on by 0 or 1), as half of the branches
 * would be mispredicted on noisy figures. */
static inline size_t partition(double *x, size_t lo, size_t hi, double p, int or_equal)
{
    size_t s = lo;
    for (size_t i = lo; i < hi; i++) {
        double v = x[i];
        size_t left = (size_t)(or_equal ? !(v > p) : v < p);
        x[i] = x[s];
        x[s] = v;
        s += left;
    }
    return s;
}

/* Quickselect: afterwards x[k] is the k-th smallest of x[0..n), x[0..k) <= x[k]. Each round
 * parts the range into under, equal to and over a median of three; the equal part is split
 * off only when the k-th is not under, so that ties (MAD 0) end the search at once. */
static void select_kth(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (x[mid] < x[lo])
            swap(&x[mid], &x[lo]);
        if (x[hi - 1] < x[lo])
            swap(&x[hi - 1], &x[lo]);
        if (x[hi - 1] < x[mid])
            swap(&x[hi - 1], &x[mid]);
        double pv = x[mid];
        size_t under = partition(x, lo, hi, pv, 0); /* pv itself is not under: under < hi */
        if (k < under) {
            hi = under;
            continue;
        }
        size_t upto = partition(x, under, hi, pv, 1); /* pv is in it: upto > under */
        if (k < upto)
            return;
        lo = upto;
    }
}

#define SAMPLE       4096 /* sample of a large bucket, for the bounds around the k-th */
#define SAMPLE_FROM  65536
#define SAMPLE_SLACK 160 /* ranks either side in the sample: 5 standard deviations */

/* Bounds lo <= hi that the k-th smallest of x[0..n) very likely lies between: the sample's
 * quantiles around k/n (the idea of Floyd and Rivest's SELECT, 1975). */
static void sample_bounds(const double *x, size_t n, size_t k, double *lo, double *hi)
{
    double smp[SAMPLE]; /* 32 KiB */
    size_t stride = n / SAMPLE, pos = (size_t)((double)k / (double)n * SAMPLE);
    for (size_t i = 0; i < SAMPLE; i++)
        smp[i] = x[i * stride];
    size_t a = pos > SAMPLE_SLACK ? pos - SAMPLE_SLACK : 0;
    size_t b = pos + SAMPLE_SLACK < SAMPLE ? pos + SAMPLE_SLACK : SAMPLE - 1;
    select_kth(smp, SAMPLE, a);
    *lo = smp[a];
    select_kth(smp, SAMPLE, b);
    *hi = smp[b];
}

/* The largest of x[0..n), n > 0. */
static double max_of(const double *x, size_t n)
{
    double m = x[0];
    for (size_t i = 1; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

/* The k-th smallest of x[0..n) (0 < k < n), and in *below (unless NULL) the (k-1)-th. Large arrays:
 * one branch-free pass that counts the values under the sample's bounds and copies those between
 * them to a small buffer (a quarter of x at most), then selection in that buffer alone
 * (falling back to selection in x, reordering it, when the k-th is outside the bounds). The
 * (k-1)-th is the largest of the buffer's first kk, or when the k-th is the buffer's smallest,
 * the largest of the values under the bounds (a second pass, rare). */
static double select_pair(double *x, size_t n, size_t k, double *below)
{
    if (n >= SAMPLE_FROM) {
        double lo, hi;
        sample_bounds(x, n, k, &lo, &hi);
        size_t cap = n / 4, lt = 0, m = 0, i = 0;
        double *mid = xalloc(sizeof(*mid) * cap);
        for (; i < n && m < cap; i++) {
            double v = x[i]; /* no branch on v: half of them would be mispredicted */
            lt += (size_t)(v < lo);
            mid[m] = v;
            m += (size_t)((v >= lo) & (v <= hi));
        }
        if (i == n && k > lt && k < lt + m) { /* k - 1 and k both in the buffer */
            size_t kk = k - lt;
            select_kth(mid, m, kk);
            double kth = mid[kk];
            if (below)
                *below = max_of(mid, kk);
            free(mid);
            return kth;
        }
        if (i == n && k == lt && m > 0) { /* the k-th the buffer's smallest, k - 1 under it */
            select_kth(mid, m, 0);
            double kth = mid[0], under = -INFINITY;
            for (size_t q = 0; below && q < n; q++)
                under = x[q] < lo && x[q] > under ? x[q] : under;
            if (below)
                *below = under;
            free(mid);
            return kth;
        }
        free(mid);
    }
    select_kth(x, n, k);
    if (below)
        *below = max_of(x, k);
    return x[k];
}

double sweep_stats_median(double *x, size_t n)
{
    if (n < 2)
        return n ? x[0] : 0;
    double below = 0, kth = select_pair(x, n, n / 2, n & 1 ? NULL : &below);
    return n & 1 ? kth : (below + kth) / 2;
}

void sweep_stats_sort(const struct sweep_figure *f, size_t nf, sweep_stats_keys keys, void *ctx,
                      size_t n_buckets, double *scratch, struct sweep_stats_sorted *out)
{
    uint32_t b[SWEEP_STATS_MAX_SAMPLES];
    double v[SWEEP_STATS_MAX_SAMPLES];
    size_t *at = xalloc_zero(n_buckets + 2, sizeof(*at));
    for (size_t i = 0; i < nf; i++) { /* pass 1: counts, at[b + 2] */
        int n = keys(ctx, &f[i], b, v);
        for (int k = 0; k < n; k++)
            at[b[k] + 2]++;
    }
    for (size_t k = 2; k < n_buckets + 2; k++)
        at[k] += at[k - 1];
    /* at[b + 1] is now bucket b's start: pass 2 fills it and moves it on to bucket b's end, which
     * is bucket b + 1's start. */
    double *x = scratch ? scratch : xalloc(sizeof(*x) * (at[n_buckets + 1] + 1));
    for (size_t i = 0; i < nf; i++) {
        int n = keys(ctx, &f[i], b, v);
        for (int k = 0; k < n; k++)
            x[at[b[k] + 1]++] = v[k];
    }
    *out = (struct sweep_stats_sorted){x, at, n_buckets, !scratch};
}

void sweep_stats_sorted_free(struct sweep_stats_sorted *s)
{
    if (s->own_x)
        free(s->x);
    free(s->at);
    *s = (struct sweep_stats_sorted){0};
}

struct sweep_class_stat sweep_stats_of(double *x, size_t n, int want_mad)
{
    double med = sweep_stats_median(x, n);
    struct sweep_class_stat st = {med, 0, n};
    if (!want_mad)
        return st;
    for (size_t i = 0; i < n; i++)
        x[i] = fabs(x[i] - med);
    st.mad = sweep_stats_median(x, n);
    return st;
}

void sweep_stats_buckets(const struct sweep_figure *f, size_t nf, sweep_stats_keys keys, void *ctx,
                         size_t n_buckets, int want_mad, double *scratch,
                         struct sweep_class_stat *out)
{
    struct sweep_stats_sorted s;
    sweep_stats_sort(f, nf, keys, ctx, n_buckets, scratch, &s);
    for (size_t b = 0; b < n_buckets; b++)
        out[b] = sweep_stats_of(s.x + s.at[b], s.at[b + 1] - s.at[b], want_mad);
    sweep_stats_sorted_free(&s);
}

void sweep_stats_buckets_within(const struct sweep_figure *f, size_t nf, sweep_stats_keys keys,
                                void *ctx, size_t n_buckets, const size_t *room, int want_mad,
                                double *scratch, struct sweep_class_stat *out)
{
    uint32_t b[SWEEP_STATS_MAX_SAMPLES];
    double v[SWEEP_STATS_MAX_SAMPLES];
    /* Bucket k's room is x[at[k]] .. x[at[k + 1] - 1], its samples so far end at end[k]. */
    size_t *at = xalloc_zero(n_buckets + 1, sizeof(*at)),
           *end = xalloc(sizeof(*end) * (n_buckets + 1));
    for (size_t k = 0; k < n_buckets; k++) {
        end[k] = at[k];
        at[k + 1] = at[k] + room[k];
    }
    double *x = scratch ? scratch : xalloc(sizeof(*x) * (at[n_buckets] + 1));
    int over = 0;
    for (size_t i = 0; i < nf && !over; i++) {
        int n = keys(ctx, &f[i], b, v);
        for (int k = 0; k < n; k++) {
            if (end[b[k]] == at[b[k] + 1]) {
                over = 1;
                break;
            }
            x[end[b[k]]++] = v[k];
        }
    }
    for (size_t k = 0; k < n_buckets && !over; k++)
        out[k] = sweep_stats_of(x + at[k], end[k] - at[k], want_mad);
    if (!scratch)
        free(x);
    free(end);
    free(at);
    if (over)
        sweep_stats_buckets(f, nf, keys, ctx, n_buckets, want_mad, scratch, out);
}
