/* hist: a log-linear (HDR-style) latency histogram in nanoseconds with fixed memory,
 * at most 1% relative error from 10 ns to 100 s, mergeable, and percentiles by the
 * nearest-rank rule over all samples (nothing dropped). One thread records into a
 * histogram without locks or system calls while others may read it. */
#ifndef HIST_H
#define HIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Values below 2^HIST_SUB_BITS ns get one bucket each; above, every power of two is split
 * into 2^(HIST_SUB_BITS-1) equal buckets, so a bucket's midpoint is within
 * 2^-HIST_SUB_BITS (0.39%) of any value in it. */
#define HIST_SUB_BITS 8
#define HIST_MAX_EXP 38 /* values up to 2^38 ns (275 s); larger ones land in the last bucket */
#define HIST_NBUCKETS ((1 << HIST_SUB_BITS) + (HIST_MAX_EXP - HIST_SUB_BITS + 1) * (1 << (HIST_SUB_BITS - 1)))

struct hist {
    _Atomic uint64_t count;
    _Atomic uint64_t sum;     /* ns */
    _Atomic double sumsq;     /* ns^2, for the standard deviation */
    _Atomic uint64_t min, max; /* exact, ns; min = UINT64_MAX when empty */
    _Atomic uint64_t overflow; /* samples above the last bucket (still counted in max) */
    _Atomic uint64_t b[HIST_NBUCKETS];
};

/* Summary; all values in ns. Percentiles are bucket midpoints clamped to [min, max]. */
struct hist_stats {
    uint64_t count;
    double min, mean, stdev, max;
    double p50, p90, p99, p999, p9999;
};

void hist_init(struct hist *h);
/* Record one value. Only one thread may record into a given histogram. */
void hist_record(struct hist *h, uint64_t ns);
/* Copy h (being recorded into by another thread) into out, consistently enough for a
 * live display: count is recomputed from the buckets copied. */
void hist_snapshot(const struct hist *h, struct hist *out);
/* dst += src (dst must not be recorded into concurrently). */
void hist_merge(struct hist *dst, const struct hist *src);
/* Nearest-rank percentile, p in [0, 100]: the value at rank ceil(p/100 * count). */
double hist_percentile(const struct hist *h, double p);
void hist_stats(const struct hist *h, struct hist_stats *s);

/* Bucket geometry, for drawing and serialisation. */
int hist_bucket_of(uint64_t ns);
uint64_t hist_bucket_low(int b);  /* smallest value in bucket b */
uint64_t hist_bucket_high(int b); /* largest value in bucket b */

/* JSON: {"count":..,"min_ns":..,"max_ns":..,"sum_ns":..,"sumsq_ns2":..,"overflow":..,
 *        "buckets":[[low_ns, count], ...]} listing only non-empty buckets. */
cJSON *hist_to_json(const struct hist *h);
/* Rebuild from hist_to_json output; -EINVAL when a bucket bound is not a bucket's low end. */
int hist_from_json(const cJSON *j, struct hist *h);

#endif
