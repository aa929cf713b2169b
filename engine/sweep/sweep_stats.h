/* sweep_stats: medians and median absolute deviations of many buckets of samples at once (a
 * counting sort of every figure's samples into one buffer, then branch-free selection in place),
 * for sweep_verdict. */
#ifndef SWEEP_STATS_H
#define SWEEP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/sweep/sweep_verdict.h"

/* The most samples one figure may give. */
#define SWEEP_STATS_MAX_SAMPLES 4

/* The samples of figure f: bucket[i] and value[i] for i below the count returned (at most
 * SWEEP_STATS_MAX_SAMPLES; 0: none). */
typedef int (*sweep_stats_keys)(void *ctx, const struct sweep_figure *f, uint32_t *bucket,
                                double *value);

/* Samples sorted by bucket: bucket b's are x[at[b]] .. x[at[b + 1] - 1], in figure order. */
struct sweep_stats_sorted {
    double *x;
    size_t *at; /* n_buckets + 1 offsets */
    size_t n_buckets;
    int own_x; /* x was allocated by sweep_stats_sort */
};

/* Sort the samples of f[0..nf) into buckets 0..n_buckets-1 (two calls of keys per figure: a
 * count, then the values). scratch: room for every sample (at most SWEEP_STATS_MAX_SAMPLES per
 * figure; reused across calls, so that its pages are touched once), or NULL to allocate it
 * here. Free out with sweep_stats_sorted_free. */
void sweep_stats_sort(const struct sweep_figure *f, size_t nf, sweep_stats_keys keys, void *ctx,
                      size_t n_buckets, double *scratch, struct sweep_stats_sorted *out);

void sweep_stats_sorted_free(struct sweep_stats_sorted *s);

/* The median of x[0..n) and, with want_mad, the MAD (else 0), n the count; x is reordered (left
 * holding the absolute deviations when want_mad). */
struct sweep_class_stat sweep_stats_of(double *x, size_t n, int want_mad);

/* sweep_stats_sort, then sweep_stats_of each bucket into out[0..n_buckets). */
void sweep_stats_buckets(const struct sweep_figure *f, size_t nf, sweep_stats_keys keys, void *ctx,
                         size_t n_buckets, int want_mad, double *scratch,
                         struct sweep_class_stat *out);

/* As sweep_stats_buckets in one call of keys per figure, where the caller knows that bucket b
 * holds at most room[b] samples (scratch: room for them all, or NULL); should one hold more,
 * the two-call sort is taken instead. */
void sweep_stats_buckets_within(const struct sweep_figure *f, size_t nf, sweep_stats_keys keys,
                                void *ctx, size_t n_buckets, const size_t *room, int want_mad,
                                double *scratch, struct sweep_class_stat *out);

/* The median of x[0..n) (reordered); 0 when n is 0. */
double sweep_stats_median(double *x, size_t n);

#endif
