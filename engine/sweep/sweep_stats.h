/* sweep_stats: medians and median absolute deviations of many buckets of samples at once
 * (a counting sort into one buffer, then selection in place), for sweep_verdict. */
#ifndef SWEEP_STATS_H
#define SWEEP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/sweep/sweep_verdict.h"

#define SWEEP_STATS_SKIP UINT32_MAX

/* The bucket of sample `slot` of figure f (SWEEP_STATS_SKIP: not counted), and its value. */
typedef uint32_t (*sweep_stats_key)(void *ctx, const struct sweep_figure *f, int slot,
                                    double *value);

/* Median (and with want_mad the MAD; else 0) of every bucket 0..n_buckets-1 over samples
 * 0..slots-1 of each figure. scratch: room for nf x slots values (reused across calls, so that
 * its pages are touched once), or NULL to allocate it here. */
void sweep_stats_buckets(const struct sweep_figure *f, size_t nf, int slots, sweep_stats_key key,
                         void *ctx, size_t n_buckets, int want_mad, double *scratch,
                         struct sweep_class_stat *out);

/* The median of x[0..n) (reordered); 0 when n is 0. */
double sweep_stats_median(double *x, size_t n);

#endif
