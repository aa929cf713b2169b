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

double sweep_stats_median(double *x, size_t n)
{
    if (!n)
        return 0;
    select_kth(x, n, n / 2);
    double hi = x[n / 2];
    if (n & 1)
        return hi;
    double lo = x[0];
    for (size_t i = 1; i < n / 2; i++)
        lo = x[i] > lo ? x[i] : lo;
    return (lo + hi) / 2;
}

void sweep_stats_buckets(const struct sweep_figure *f, size_t nf, int slots, sweep_stats_key key,
                         void *ctx, size_t n_buckets, struct sweep_class_stat *out)
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
    double *x = xalloc_zero(at[n_buckets] + 1, sizeof(*x));
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
        for (size_t i = 0; i < n; i++)
            y[i] = fabs(y[i] - med);
        out[b] = (struct sweep_class_stat){med, sweep_stats_median(y, n), n};
    }
    free(fill);
    free(x);
    free(at);
}
