/* sweep_stats: bucket medians and MADs (sweep_stats.h). */
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

/* Quickselect (Hoare's FIND): afterwards x[k] is the k-th smallest, x[0..k) <= x[k]. */
static void select_kth(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2; /* median of three as pivot */
        if (x[mid] < x[lo])
            swap(&x[mid], &x[lo]);
        if (x[hi] < x[lo])
            swap(&x[hi], &x[lo]);
        if (x[hi] < x[mid])
            swap(&x[hi], &x[mid]);
        double pv = x[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < pv)
                i++;
            while (x[j] > pv)
                j--;
            if (i <= j) {
                swap(&x[i], &x[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
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

/* x[k] the k-th smallest, x[0..k) <= x[k]; returns from <= k such that the largest of x[0..k)
 * is in x[from..k) when from < k. Large arrays: one three-way partition around the sample's
 * bounds, then selection in the middle part alone (falling back to the whole array when the
 * k-th is outside it). */
static size_t select_fast(double *x, size_t n, size_t k)
{
    if (n < SAMPLE_FROM) {
        select_kth(x, n, k);
        return 0;
    }
    double lo, hi;
    sample_bounds(x, n, k, &lo, &hi);
    size_t lt = 0, i = 0, gt = n;
    while (i < gt) {
        if (x[i] < lo)
            swap(&x[lt++], &x[i++]);
        else if (x[i] > hi)
            swap(&x[i], &x[--gt]);
        else
            i++;
    }
    if (k < lt || k >= gt) {
        select_kth(x, n, k);
        return 0;
    }
    select_kth(x + lt, gt - lt, k - lt);
    return lt < k ? lt : 0;
}

double sweep_stats_median(double *x, size_t n)
{
    if (!n)
        return 0;
    size_t from = select_fast(x, n, n / 2);
    double hi = x[n / 2];
    if (n & 1)
        return hi;
    double lo = x[from];
    for (size_t i = from + 1; i < n / 2; i++)
        lo = x[i] > lo ? x[i] : lo;
    return (lo + hi) / 2;
}

void sweep_stats_buckets(const struct sweep_figure *f, size_t nf, int slots, sweep_stats_key key,
                         void *ctx, size_t n_buckets, int want_mad, double *scratch,
                         struct sweep_class_stat *out)
{
    size_t *at = xalloc_zero(n_buckets + 1, sizeof(*at));
    double v;
    for (size_t i = 0; i < nf; i++) /* pass 1: counts */
        for (int s = 0; s < slots; s++) {
            uint32_t b = key(ctx, &f[i], s, &v);
            if (b != SWEEP_STATS_SKIP)
                at[b + 1]++;
        }
    for (size_t b = 0; b < n_buckets; b++)
        at[b + 1] += at[b];
    double *x = scratch ? scratch : xalloc(sizeof(*x) * (at[n_buckets] + 1));
    size_t *fill = xalloc_zero(n_buckets + 1, sizeof(*fill));
    for (size_t i = 0; i < nf; i++) /* pass 2: values in bucket order */
        for (int s = 0; s < slots; s++) {
            uint32_t b = key(ctx, &f[i], s, &v);
            if (b != SWEEP_STATS_SKIP)
                x[at[b] + fill[b]++] = v;
        }
    for (size_t b = 0; b < n_buckets; b++) {
        double *y = x + at[b];
        size_t n = at[b + 1] - at[b];
        double med = sweep_stats_median(y, n);
        out[b] = (struct sweep_class_stat){med, 0, n};
        if (!want_mad)
            continue;
        for (size_t i = 0; i < n; i++)
            y[i] = fabs(y[i] - med);
        out[b].mad = sweep_stats_median(y, n);
    }
    free(fill);
    if (!scratch)
        free(x);
    free(at);
}
