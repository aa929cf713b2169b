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

/* Values below 2^HIST_SUB_BITS ns get one bucket each (exact); above, every power of two
 * [2^e, 2^(e+1)) is split into 2^(HIST_SUB_BITS-1) equal buckets, so a bucket's midpoint
 * is within 2^-HIST_SUB_BITS (0.39%) of any value in it. */
#define HIST_SUB_BITS 8
/* The last power of two split into buckets is 2^HIST_MAX_EXP, so the buckets cover
 * [0, 2^(HIST_MAX_EXP+1)) ns = [0, 549.8 s); larger values are counted in overflow. */
#define HIST_MAX_EXP   38
#define HIST_RANGE_END ((uint64_t)1 << (HIST_MAX_EXP + 1))
#define HIST_NBUCKETS                                                                              \
    ((1 << HIST_SUB_BITS) + (HIST_MAX_EXP - HIST_SUB_BITS + 1) * (1 << (HIST_SUB_BITS - 1)))

/* Exactness: count, sum, sum of squares, min and max are exact integers (sum while the total
 * stays below 2^64 ns, 584 years; the 128-bit sum of squares while below 2^128 ns^2). */
struct hist {
    _Atomic uint64_t count;              /* samples, overflow included */
    _Atomic uint64_t sum;                /* ns */
    _Atomic uint64_t sumsq_lo, sumsq_hi; /* ns^2, one 128-bit integer, for the stdev */
    _Atomic uint64_t min, max;           /* exact, ns; min = UINT64_MAX, max = 0 when empty */
    _Atomic uint64_t overflow;           /* samples >= HIST_RANGE_END (in no bucket) */
    _Atomic uint64_t b[HIST_NBUCKETS];
};

/* Summary; all values in ns; count = 0 means empty and then every other field is NaN.
 * min, max are exact; mean is the exact sum / count; stdev is the population standard
 * deviation (divided by count, not count - 1), from the exact sums. Percentiles are bucket
 * midpoints clamped to [min, max]: within 2^-8 of the exact nearest-rank sample below
 * HIST_RANGE_END (exact below 256 ns). Read a snapshot, or a histogram nobody records into;
 * on a live one the results are approximate. */
struct hist_stats {
    uint64_t count;
    double min, mean, stdev, max;
    double p50, p90, p99, p999, p9999;
};

void hist_init(struct hist *h);
/* Record one value. Only one thread may record into a given histogram: ordinary loads and
 * stores of relaxed atomics, no locked instruction, no call (hist.c says why that is safe). */
void hist_record(struct hist *h, uint64_t ns);
/* Copy h (being recorded into by another thread) into out, consistently enough for a
 * live display: count is recomputed from the buckets copied, and min and max are brought
 * inside the lowest and highest non-empty buckets copied. Each bucket and count never go
 * down from one snapshot to the next taken by the same thread. */
void hist_snapshot(const struct hist *h, struct hist *out);
/* dst += src (dst must not be recorded into concurrently; snapshot a live src first). */
void hist_merge(struct hist *dst, const struct hist *src);
/* Nearest-rank percentile, p in [0, 100]: the value at rank ceil(p/100 * count), p read as
 * a decimal of up to 7 places (99.9 means exactly 999/1000). p = 0 or rank 1 gives min,
 * rank count gives max, a rank among the overflow samples gives max. NaN when h is empty
 * or p is outside [0, 100]. */
double hist_percentile(const struct hist *h, double p);
void hist_stats(const struct hist *h, struct hist_stats *s);

/* Bucket geometry, for drawing and serialisation. hist_bucket_of returns -ERANGE for
 * ns >= HIST_RANGE_END; low and high return 0 for b outside [0, HIST_NBUCKETS). */
int hist_bucket_of(uint64_t ns);
uint64_t hist_bucket_low(int b);  /* smallest value in bucket b */
uint64_t hist_bucket_high(int b); /* largest value in bucket b */

/* JSON: {"count":..,"min_ns":..,"max_ns":..,"sum_ns":..,"sumsq_ns2":..,"overflow":..,
 *        "buckets":[[low_ns, count], ...]} listing only non-empty buckets, lows increasing.
 * Integers are JSON numbers below 2^53 and decimal strings from there (so they stay exact);
 * min_ns and max_ns are null when count is 0. It serialises a snapshot of h, so h may be
 * live. Returns NULL when out of memory. */
cJSON *hist_to_json(const struct hist *h);
/* Rebuild from hist_to_json output: 0, or -EINVAL (h left empty) for a wrong type, a
 * negative or fractional integer, a bucket bound that is not a bucket's low end, lows not
 * increasing, a zero bucket count, counts that don't add up to count, or min/max outside
 * the lowest/highest non-empty bucket. */
int hist_from_json(const cJSON *j, struct hist *h);

#endif
