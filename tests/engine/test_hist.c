/* test_hist: the latency histogram against exact statistics of the sorted samples (nearest
 * rank) on many distributions, its bucket geometry, merge, JSON round trip and rejection of
 * malformed documents, and one thread recording while another snapshots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/flow/hist.h"

/* The documented bound: a bucket midpoint is within 2^-8 of any value in it (under 1%). */
#define REL_BOUND (1.0 / 256)

static double worst_rel; /* largest percentile error seen, reported at the end */

/* splitmix64, seeded per test so every run sees the same samples */
static uint64_t rng;

static uint64_t rnd_s(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rnd(void)
{
    return rnd_s(&rng);
}

static double unif_s(uint64_t *st) /* [0, 1) */
{
    return (double)(rnd_s(st) >> 11) * 0x1p-53;
}

static double unif(void)
{
    return unif_s(&rng);
}

static double normal_s(uint64_t *st)
{
    double u1 = 1.0 - unif_s(st), u2 = unif_s(st);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static double normal(void)
{
    return normal_s(&rng);
}

static uint64_t to_ns(double x)
{
    return x < 0 ? 0 : (uint64_t)llround(x);
}

static struct hist *new_hist(void)
{
    struct hist *h = malloc(sizeof(*h));
    assert_non_null(h);
    hist_init(h);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Percentiles checked: p as given to hist_percentile and the same p as num/den. */
static const struct {
    double p;
    uint64_t num, den;
} pcts[] = {{0, 0, 1},
            {1, 1, 100},
            {10, 1, 10},
            {12.5, 1, 8},
            {25, 1, 4},
            {50, 1, 2},
            {90, 9, 10},
            {99, 99, 100},
            {99.9, 999, 1000},
            {99.99, 9999, 10000},
            {99.999, 99999, 100000},
            {100, 1, 1}};

/* The exact nearest-rank percentile of the sorted samples: rank ceil(n * num / den). */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, uint64_t num, uint64_t den)
{
    uint64_t rank = (n * num + den - 1) / den;
    return rank == 0 ? sorted[0] : sorted[rank - 1];
}

static void check_pct(double got, uint64_t exact, uint64_t max, const char *what, double p)
{
    if (exact >= HIST_RANGE_END) { /* rank among the overflow samples: reported as max */
        if (got != (double)max)
            fail_msg("%s p%g: %.17g, want max %llu", what, p, got, (unsigned long long)max);
        return;
    }
    double rel = exact ? fabs(got - (double)exact) / (double)exact : fabs(got);
    if (rel > worst_rel)
        worst_rel = rel;
    if (!(rel <= REL_BOUND))
        fail_msg("%s p%g: %.17g, exact %llu, relative error %.3g", what, p, got,
                 (unsigned long long)exact, rel);
}

/* Record the n samples, then compare every statistic with the exact one from a sorted copy.
 * Returns the histogram (caller frees). */
static struct hist *check_exact(const uint64_t *v, size_t n, const char *what)
{
    struct hist *h = new_hist();
    for (size_t i = 0; i < n; i++)
        hist_record(h, v[i]);

    uint64_t *s = malloc(n * sizeof(*s));
    assert_non_null(s);
    memcpy(s, v, n * sizeof(*s));
    qsort(s, n, sizeof(*s), cmp_u64);
    uint64_t sum = 0, ovf = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(sum <= UINT64_MAX - s[i]); /* the test's own data must not wrap */
        sum += s[i];
        ovf += s[i] >= HIST_RANGE_END;
    }

    struct hist_stats st;
    hist_stats(h, &st);
    assert_int_equal(st.count, n);
    assert_int_equal(atomic_load(&h->count), n);
    assert_int_equal(atomic_load(&h->overflow), ovf);
    assert_int_equal(atomic_load(&h->sum), sum);
    if (st.min != (double)s[0] || st.max != (double)s[n - 1])
        fail_msg("%s: min/max %.17g/%.17g, want %llu/%llu", what, st.min, st.max,
                 (unsigned long long)s[0], (unsigned long long)s[n - 1]);
    long double mean = (long double)sum / (long double)n;
    if (fabsl((long double)st.mean - mean) > mean * 0x1p-52L)
        fail_msg("%s: mean %.17g, want %.17Lg", what, st.mean, mean);

    /* two-pass population standard deviation in long double, Kahan-summed */
    long double acc = 0, comp = 0;
    for (size_t i = 0; i < n; i++) {
        long double d = (long double)s[i] - mean, y = d * d - comp, t = acc + y;
        comp = (t - acc) - y;
        acc = t;
    }
    long double sd = sqrtl(acc / (long double)n);
    if (fabsl((long double)st.stdev - sd) > sd * 1e-9L)
        fail_msg("%s: stdev %.17g, two-pass %.17Lg", what, st.stdev, sd);

    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
        check_pct(hist_percentile(h, pcts[i].p), exact_pct(s, n, pcts[i].num, pcts[i].den),
                  s[n - 1], what, pcts[i].p);
    check_pct(st.p50, exact_pct(s, n, 1, 2), s[n - 1], what, 50);
    check_pct(st.p90, exact_pct(s, n, 9, 10), s[n - 1], what, 90);
    check_pct(st.p99, exact_pct(s, n, 99, 100), s[n - 1], what, 99);
    check_pct(st.p999, exact_pct(s, n, 999, 1000), s[n - 1], what, 99.9);
    check_pct(st.p9999, exact_pct(s, n, 9999, 10000), s[n - 1], what, 99.99);
    assert_true(hist_percentile(h, 0) == st.min && hist_percentile(h, 100) == st.max);
    free(s);
    return h;
}

static void run_exact(uint64_t *v, size_t n, const char *what)
{
    free(check_exact(v, n, what));
    free(v);
}

static uint64_t *samples(size_t n)
{
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    return v;
}

#define N_DIST 200000

static void test_uniform(void **state)
{
    (void)state;
    rng = 1;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = 1000 + rnd() % 2000000;
    run_exact(v, N_DIST, "uniform 1 us - 2 ms");
}

static void test_log_uniform(void **state)
{
    (void)state;
    rng = 2;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++) /* 10 ns to 100 s, every decade alike */
        v[i] = to_ns(exp(log(10.0) + unif() * (log(1e11) - log(10.0))));
    run_exact(v, N_DIST, "log-uniform 10 ns - 100 s");
}

static void test_lognormal(void **state)
{
    (void)state;
    rng = 3;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = to_ns(20000.0 * exp(1.2 * normal()));
    run_exact(v, N_DIST, "log-normal");
}

static void test_bimodal(void **state)
{
    (void)state;
    rng = 4;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++) /* fast path 3 us, 1% slow tail 200 us - 20 ms */
        v[i] = unif() < 0.99 ? to_ns(3000 + 200 * normal()) : 200000 + rnd() % 19800000;
    run_exact(v, N_DIST, "bimodal");
}

static void test_exponential(void **state)
{
    (void)state;
    rng = 5;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = to_ns(800 - 10000.0 * log(1.0 - unif()));
    run_exact(v, N_DIST, "exponential tail");
}

static void test_constant(void **state)
{
    (void)state;
    const uint64_t vals[] = {0, 7, 255, 256, 123457, 99999999999ull};
    for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
        uint64_t *v = samples(1000);
        for (size_t i = 0; i < 1000; i++)
            v[i] = vals[k];
        struct hist *h = check_exact(v, 1000, "constant");
        struct hist_stats st;
        hist_stats(h, &st);
        assert_true(st.stdev == 0 && st.p50 == (double)vals[k] && st.p9999 == (double)vals[k]);
        free(h);
        free(v);
    }
    /* a narrow spread far from zero: the sum of squares must not cancel */
    rng = 15;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = 5000000000ull + rnd() % 100;
    run_exact(v, N_DIST, "5 s +- 50 ns");
}

/* Values exactly at the low and the high end of buckets, all over the range: the worst
 * case of the midpoint error. */
static void test_bucket_edges(void **state)
{
    (void)state;
    rng = 6;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i += 2) {
        int b = (int)(rnd() % HIST_NBUCKETS);
        v[i] = hist_bucket_low(b);
        v[i + 1] = hist_bucket_high(b);
    }
    run_exact(v, N_DIST, "bucket edges");
    /* and one sample per edge, so each percentile lands on a lone edge value */
    uint64_t *w = samples(2 * (HIST_NBUCKETS - 256));
    for (int b = 256; b < HIST_NBUCKETS; b++) {
        w[2 * (b - 256)] = hist_bucket_low(b);
        w[2 * (b - 256) + 1] = hist_bucket_high(b);
    }
    run_exact(w, 2 * (HIST_NBUCKETS - 256), "every edge once");
}

static void test_near_10ns(void **state)
{
    (void)state;
    rng = 7;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = 5 + rnd() % 16;
    run_exact(v, N_DIST, "around 10 ns");
}

static void test_near_100s(void **state)
{
    (void)state;
    rng = 8;
    uint64_t *v = samples(N_DIST);
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = 98000000000ull + rnd() % 4000000000ull;
    run_exact(v, N_DIST, "around 100 s");
}

static void test_single_and_two(void **state)
{
    (void)state;
    const uint64_t one[] = {0,
                            1,
                            300,
                            4242,
                            1000000007,
                            99999999999ull,
                            HIST_RANGE_END - 1,
                            HIST_RANGE_END,
                            1000000000000ull};
    for (size_t k = 0; k < sizeof(one) / sizeof(one[0]); k++) {
        uint64_t *v = samples(1);
        v[0] = one[k];
        run_exact(v, 1, "single sample");
    }
    const uint64_t two[][2] = {{100, 5000000}, {5, 5}, {777777, 300}, {0, HIST_RANGE_END + 5}};
    for (size_t k = 0; k < sizeof(two) / sizeof(two[0]); k++) {
        uint64_t *v = samples(2);
        v[0] = two[k][0];
        v[1] = two[k][1];
        struct hist *h = check_exact(v, 2, "two samples");
        uint64_t lo = v[0] < v[1] ? v[0] : v[1], hi = v[0] ^ v[1] ^ lo;
        assert_true(hist_percentile(h, 50) == (double)lo); /* rank 1 */
        assert_true(hist_percentile(h, 50.01) == (double)hi);
        free(h);
        free(v);
    }
}

static void test_large_count(void **state)
{
    (void)state;
    rng = 9;
    const size_t n = 10000000;
    uint64_t *v = samples(n);
    for (size_t i = 0; i < n; i++)
        v[i] = i % 100 ? to_ns(15000.0 * exp(0.8 * normal())) : 1000000 + rnd() % 9000000;
    run_exact(v, n, "10^7 samples");
}

static void test_overflow(void **state)
{
    (void)state;
    rng = 10;
    uint64_t *v = samples(N_DIST);
    /* 2% above the range at one value: percentiles there are exact (max) */
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = unif() < 0.02 ? 1000000000000ull : to_ns(20000.0 * exp(normal()));
    struct hist *h = check_exact(v, N_DIST, "overflow, one value");
    assert_true(atomic_load(&h->overflow) > N_DIST / 100);
    free(h);
    /* varied values above the range: counted, max exact, in-range percentiles unaffected */
    for (size_t i = 0; i < N_DIST; i++)
        v[i] = unif() < 0.005 ? HIST_RANGE_END + rnd() % 100000000000000ull
                              : to_ns(20000.0 * exp(normal()));
    h = check_exact(v, N_DIST, "overflow, varied");
    assert_true(atomic_load(&h->overflow) > 0);
    free(h);
    free(v);
}

static void test_empty_and_bad_p(void **state)
{
    (void)state;
    struct hist *h = new_hist();
    struct hist_stats st;
    hist_stats(h, &st);
    assert_int_equal(st.count, 0);
    assert_true(isnan(st.min) && isnan(st.mean) && isnan(st.stdev) && isnan(st.max));
    assert_true(isnan(st.p50) && isnan(st.p9999));
    assert_true(isnan(hist_percentile(h, 50)));
    hist_record(h, 1000);
    assert_true(hist_percentile(h, 50) == 1000);
    assert_true(isnan(hist_percentile(h, -1)) && isnan(hist_percentile(h, 100.5)));
    assert_true(isnan(hist_percentile(h, NAN)));
    free(h);
}

/* p written as a decimal means that decimal: p99.9 of 1000 samples is rank 999, not 1000. */
static void test_decimal_p(void **state)
{
    (void)state;
    struct hist *h = new_hist();
    for (uint64_t i = 1; i <= 1000; i++)
        hist_record(h, i * 1000);
    assert_true(fabs(hist_percentile(h, 99.9) - 999000) <= 999000 * REL_BOUND);
    assert_true(hist_percentile(h, 99.9) != 1000000);
    for (uint64_t i = 1; i <= 9000; i++)
        hist_record(h, 5);
    /* 10^4 samples: p99.99 is rank 9999 */
    assert_true(fabs(hist_percentile(h, 99.99) - 999000) <= 999000 * REL_BOUND);
    free(h);
}

static void test_geometry(void **state)
{
    (void)state;
    assert_int_equal(hist_bucket_low(0), 0);
    assert_int_equal(hist_bucket_high(HIST_NBUCKETS - 1), HIST_RANGE_END - 1);
    for (int b = 0; b < HIST_NBUCKETS; b++) {
        uint64_t lo = hist_bucket_low(b), hi = hist_bucket_high(b);
        assert_true(lo <= hi);
        if (b > 0)
            assert_int_equal(lo, hist_bucket_high(b - 1) + 1); /* contiguous, increasing */
        assert_int_equal(hist_bucket_of(lo), b);
        assert_int_equal(hist_bucket_of(hi), b);
        assert_int_equal(hist_bucket_of(lo + (hi - lo) / 2), b);
        if (lo < 256)
            assert_int_equal(lo, hi);      /* exact below 256 ns */
        else if ((hi - lo + 1) * 128 > lo) /* half width / low <= 2^-8 */
            fail_msg("bucket %d [%llu, %llu] too wide", b, (unsigned long long)lo,
                     (unsigned long long)hi);
    }
    /* every value below 2^22, and random values of every magnitude up to 2^38 */
    int prev = 0;
    for (uint64_t v = 0; v < (1u << 22); v++) {
        int b = hist_bucket_of(v);
        assert_true(b == prev || b == prev + 1);
        assert_true(hist_bucket_low(b) <= v && v <= hist_bucket_high(b));
        prev = b;
    }
    rng = 11;
    for (int i = 0; i < 2000000; i++) {
        uint64_t v = rnd() >> (rnd() % 64);
        v = v > (1ull << 38) ? v >> (64 - 38) : v;
        int b = hist_bucket_of(v);
        assert_true(b >= 0 && b < HIST_NBUCKETS);
        assert_true(hist_bucket_low(b) <= v && v <= hist_bucket_high(b));
    }
    int b = hist_bucket_of(1ull << 38);
    assert_true(hist_bucket_low(b) <= (1ull << 38) && (1ull << 38) <= hist_bucket_high(b));
    assert_int_equal(hist_bucket_of(HIST_RANGE_END), -ERANGE);
    assert_int_equal(hist_bucket_of(UINT64_MAX), -ERANGE);
    assert_int_equal(hist_bucket_low(-1), 0);
    assert_int_equal(hist_bucket_high(HIST_NBUCKETS), 0);
}

static void test_lock_free(void **state)
{
    (void)state;
    struct hist *h = new_hist();
    assert_true(atomic_is_lock_free(&h->count));
    assert_true(atomic_is_lock_free(&h->b[0]));
    free(h);
}

static void assert_hist_equal(const struct hist *a, const struct hist *b)
{
    assert_int_equal(atomic_load(&a->count), atomic_load(&b->count));
    assert_int_equal(atomic_load(&a->sum), atomic_load(&b->sum));
    assert_int_equal(atomic_load(&a->sumsq_lo), atomic_load(&b->sumsq_lo));
    assert_int_equal(atomic_load(&a->sumsq_hi), atomic_load(&b->sumsq_hi));
    assert_int_equal(atomic_load(&a->min), atomic_load(&b->min));
    assert_int_equal(atomic_load(&a->max), atomic_load(&b->max));
    assert_int_equal(atomic_load(&a->overflow), atomic_load(&b->overflow));
    for (int i = 0; i < HIST_NBUCKETS; i++)
        if (atomic_load(&a->b[i]) != atomic_load(&b->b[i]))
            fail_msg("bucket %d: %llu != %llu", i, (unsigned long long)atomic_load(&a->b[i]),
                     (unsigned long long)atomic_load(&b->b[i]));
}

/* A mix over the whole range, overflow and squares above 2^64 included. */
static uint64_t mixed(uint64_t *st)
{
    switch (rnd_s(st) % 4) {
    case 0:
        return rnd_s(st) % 300;
    case 1:
        return to_ns(20000.0 * exp(1.5 * normal_s(st)));
    case 2:
        return 4000000000ull + rnd_s(st) % 100000000000ull;
    default:
        return rnd_s(st) % 1000 ? rnd_s(st) % 1000000
                                : HIST_RANGE_END + rnd_s(st) % 1000000000000ull;
    }
}

static void test_merge(void **state)
{
    (void)state;
    rng = 12;
    struct hist *a = new_hist(), *b = new_hist(), *all = new_hist(), *e = new_hist();
    for (int i = 0; i < 300000; i++) {
        uint64_t v = mixed(&rng);
        hist_record(rnd() & 1 ? a : b, v);
        hist_record(all, v);
    }
    assert_true(atomic_load(&all->sumsq_hi) > 0 && atomic_load(&all->overflow) > 0);
    hist_merge(a, b);
    assert_hist_equal(a, all);
    hist_merge(a, e); /* merging an empty one changes nothing */
    assert_hist_equal(a, all);
    hist_merge(e, all); /* into an empty one: a copy */
    assert_hist_equal(e, all);
    free(a);
    free(b);
    free(all);
    free(e);
}

/* to_json -> text -> parse -> from_json gives back an equal histogram. */
static void roundtrip(const struct hist *h, const char *must_contain)
{
    cJSON *j = hist_to_json(h);
    assert_non_null(j);
    char *text = cJSON_PrintUnformatted(j);
    assert_non_null(text);
    if (must_contain && !strstr(text, must_contain))
        fail_msg("'%s' not in %.300s", must_contain, text);
    cJSON *back = cJSON_Parse(text);
    assert_non_null(back);
    struct hist *r = new_hist();
    hist_record(r, 42); /* from_json replaces what was there */
    assert_int_equal(hist_from_json(back, r), 0);
    assert_hist_equal(r, h);
    free(r);
    cJSON_Delete(back);
    cJSON_free(text);
    cJSON_Delete(j);
}

static void test_json_roundtrip(void **state)
{
    (void)state;
    rng = 13;
    struct hist *h = new_hist();
    roundtrip(h, "\"min_ns\":null");
    hist_record(h, 3);
    hist_record(h, 300);
    hist_record(h, 300);
    roundtrip(h, "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
                 "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}");
    for (int i = 0; i < 200000; i++)
        hist_record(h, mixed(&rng));
    for (int i = 0; i < 100000; i++)
        hist_record(h, 90000000000ull + rnd() % 20000000000ull);
    /* the sum and the sum of squares are past 2^53: written as decimal strings */
    assert_true(atomic_load(&h->sum) > (1ull << 53));
    roundtrip(h, "\"sum_ns\":\"");
    free(h);
}

static int parse_text(const char *text, struct hist *h)
{
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("test JSON does not parse: %s", text);
    int rc = hist_from_json(j, h);
    cJSON_Delete(j);
    return rc;
}

static void test_json_malformed(void **state)
{
    (void)state;
    /* a valid document, then the same with one thing wrong */
    static const char *const bad[] = {
        "[1,2]",
        "null",
        "\"hist\"",
        "{}",
        "{\"count\":\"three\",\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":-3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3.5,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":true,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":9007199254740993,"
        "\"sumsq_ns2\":180009,\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":\"18a009\","
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":\"\","
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":"
        "\"340282366920938463463374607431768211456\",\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":\"-603\",\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":{\"3\":1,\"300\":2}}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1,0],[300,2]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[3,1,300,2]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2],[4000,0]]}",
        "{\"count\":3,\"min_ns\":3,\"max_ns\":301,\"sum_ns\":604,\"sumsq_ns2\":180610,"
        "\"overflow\":0,\"buckets\":[[3,1],[301,2]]}", /* 301 is not a bucket's low end */
        "{\"count\":3,\"min_ns\":3,\"max_ns\":549755813888,\"sum_ns\":603,\"sumsq_ns2\":1,"
        "\"overflow\":0,\"buckets\":[[3,1],[549755813888,2]]}", /* low above the range */
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[300,2],[3,1]]}", /* not increasing */
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[3,1],[300,1]]}", /* repeated */
        "{\"count\":4,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}", /* counts don't add up */
        "{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":1,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":18446744073709551615,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,"
        "\"sumsq_ns2\":180009,\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":\"18446744073709551616\",\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,"
        "\"sumsq_ns2\":180009,\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":2,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}", /* min outside its bucket */
        "{\"count\":3,\"min_ns\":3,\"max_ns\":310,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}", /* max outside its bucket */
        "{\"count\":3,\"min_ns\":300,\"max_ns\":3,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":3,\"min_ns\":null,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":0,\"buckets\":[[3,1],[300,2]]}",
        "{\"count\":4,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,\"sumsq_ns2\":180009,"
        "\"overflow\":1,\"buckets\":[[3,1],[300,2]]}", /* overflow but max in range */
        "{\"count\":0,\"min_ns\":0,\"max_ns\":0,\"sum_ns\":0,\"sumsq_ns2\":0,"
        "\"overflow\":0,\"buckets\":[]}", /* empty: min and max must be null */
        "{\"count\":0,\"min_ns\":null,\"max_ns\":null,\"sum_ns\":5,\"sumsq_ns2\":0,"
        "\"overflow\":0,\"buckets\":[]}",
    };
    struct hist *h = new_hist();
    assert_int_equal(parse_text("{\"count\":3,\"min_ns\":3,\"max_ns\":300,\"sum_ns\":603,"
                                "\"sumsq_ns2\":180009,\"overflow\":0,"
                                "\"buckets\":[[3,1],[300,2]]}",
                                h),
                     0);
    assert_true(hist_percentile(h, 50) == 300 && atomic_load(&h->b[3]) == 1);
    /* integers may be decimal strings; ones at the limits are accepted */
    assert_int_equal(parse_text("{\"count\":\"3\",\"min_ns\":3,\"max_ns\":\"301\",\"sum_ns\":604,"
                                "\"sumsq_ns2\":\"340282366920938463463374607431768211455\","
                                "\"overflow\":0,\"buckets\":[[3,1],[300,\"2\"]]}",
                                h),
                     0);
    assert_int_equal(atomic_load(&h->sumsq_hi), UINT64_MAX);
    assert_int_equal(atomic_load(&h->sumsq_lo), UINT64_MAX);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hist_record(h, 5);
        int rc = parse_text(bad[i], h);
        if (rc != -EINVAL)
            fail_msg("accepted (%d): %s", rc, bad[i]);
        assert_int_equal(atomic_load(&h->count), 0); /* left empty */
        assert_int_equal(atomic_load(&h->b[5]), 0);
    }
    free(h);
}

/* One writer records samples while the main thread snapshots in a loop: a realistic mix
 * (CONC_N samples), or a ramp of new minimums and maximums in ever lower and higher
 * buckets, so that snapshots often catch min or max ahead of the buckets. */
#define CONC_N     10000000
#define RAMP_N     8000000
#define RAMP_EVERY 2048
#define RAMP_MID   2100
#define CONC_SEED  14

struct conc {
    struct hist *h;
    bool ramp;
    int n;
    atomic_bool started, done;
};

static uint64_t conc_value(const struct conc *c, uint64_t *seed, int i)
{
    if (!c->ramp)
        return mixed(seed);
    /* every RAMP_EVERY samples a new max one bucket up or a new min one bucket down */
    int j = i / RAMP_EVERY, b = RAMP_MID + (j % 2 ? (j + 1) / 2 : -(j / 2));
    if (i % RAMP_EVERY || b < 0 || b >= HIST_NBUCKETS)
        return hist_bucket_low(RAMP_MID);
    return hist_bucket_low(b);
}

static void *writer(void *arg)
{
    struct conc *c = arg;
    uint64_t seed = CONC_SEED; /* the same sequence as the reference */
    while (!atomic_load(&c->started))
        ;
    for (int i = 0; i < c->n; i++)
        hist_record(c->h, conc_value(c, &seed, i));
    atomic_store(&c->done, true);
    return NULL;
}

/* A snapshot is consistent: count is the buckets' sum, min and max lie in the lowest and
 * highest non-empty buckets, the statistics are ordered, and it makes a valid document. */
static void check_consistent(const struct hist *snap, struct hist *scratch, bool json)
{
    uint64_t n = atomic_load(&snap->count), sum = atomic_load(&snap->overflow);
    int first = -1, last = -1;
    for (int i = 0; i < HIST_NBUCKETS; i++) {
        uint64_t v = atomic_load(&snap->b[i]);
        sum += v;
        if (v) {
            first = first < 0 ? i : first;
            last = i;
        }
    }
    assert_int_equal(sum, n);
    if (n == 0)
        return;
    uint64_t mn = atomic_load(&snap->min), mx = atomic_load(&snap->max);
    if (first >= 0)
        assert_true(hist_bucket_low(first) <= mn && mn <= hist_bucket_high(first));
    if (atomic_load(&snap->overflow))
        assert_true(mx >= HIST_RANGE_END);
    else
        assert_true(hist_bucket_low(last) <= mx && mx <= hist_bucket_high(last));
    struct hist_stats st;
    hist_stats(snap, &st);
    assert_true(st.min <= st.p50 && st.p50 <= st.p9999 && st.p9999 <= st.max);
    assert_true(st.min <= st.mean && st.mean <= st.max && st.stdev >= 0);
    if (json) {
        cJSON *j = hist_to_json(snap);
        assert_non_null(j);
        assert_int_equal(hist_from_json(j, scratch), 0);
        cJSON_Delete(j);
    }
}

static void run_concurrent(bool ramp, int n)
{
    struct hist *ref = new_hist(), *snap = new_hist(), *prev = new_hist(), *rt = new_hist();
    struct conc c = {.h = new_hist(), .ramp = ramp, .n = n};
    uint64_t seed = CONC_SEED;
    for (int i = 0; i < n; i++)
        hist_record(ref, conc_value(&c, &seed, i));
    uint64_t min_floor = hist_bucket_low(hist_bucket_of(atomic_load(&ref->min)));
    uint64_t max_ceil = atomic_load(&ref->max);

    atomic_init(&c.started, false);
    atomic_init(&c.done, false);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, &c), 0);
    long snaps = 0, midway = 0;
    atomic_store(&c.started, true);
    while (!atomic_load(&c.done)) {
        hist_snapshot(c.h, snap);
        uint64_t cnt = atomic_load(&snap->count);
        assert_true(cnt >= atomic_load(&prev->count)); /* count never goes down */
        for (int i = 0; i < HIST_NBUCKETS; i++) {
            uint64_t v = atomic_load(&snap->b[i]);
            if (v < atomic_load(&prev->b[i]) || v > atomic_load(&ref->b[i]))
                fail_msg("snapshot %ld bucket %d: %llu (before %llu, final %llu)", snaps, i,
                         (unsigned long long)v, (unsigned long long)atomic_load(&prev->b[i]),
                         (unsigned long long)atomic_load(&ref->b[i]));
        }
        check_consistent(snap, rt, snaps % (ramp ? 4 : 64) == 0);
        if (cnt) {
            midway += cnt < (uint64_t)n;
            assert_true(atomic_load(&snap->min) >= min_floor);
            assert_true(atomic_load(&snap->max) <= max_ceil);
        }
        struct hist *x = prev;
        prev = snap;
        snap = x;
        snaps++;
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    print_message("%s: %ld snapshots, %ld taken mid-run\n", ramp ? "ramp" : "mix", snaps, midway);
    assert_true(midway > 0);     /* the reader really overlapped the writer */
    assert_hist_equal(c.h, ref); /* the final result is exact */
    hist_snapshot(c.h, snap);
    assert_hist_equal(snap, ref);
    free(c.h);
    free(ref);
    free(snap);
    free(prev);
    free(rt);
}

/* The states a snapshot can catch mid-record, made by hand: buckets ahead of min and max,
 * min and max ahead of the buckets, sum ahead of an empty bucket array. */
static void test_snapshot_repair(void **state)
{
    (void)state;
    struct hist *h = new_hist(), *s = new_hist(), *scratch = new_hist();
    int b = hist_bucket_of(5000);
    atomic_store(&h->b[b], 3); /* min and max still say empty */
    hist_snapshot(h, s);
    assert_int_equal(atomic_load(&s->count), 3);
    check_consistent(s, scratch, true);
    atomic_store(&h->min, 10); /* a new min and max whose buckets are not there yet */
    atomic_store(&h->max, 1000000);
    hist_snapshot(h, s);
    assert_int_equal(atomic_load(&s->min), hist_bucket_low(b));
    assert_int_equal(atomic_load(&s->max), hist_bucket_high(b));
    check_consistent(s, scratch, true);
    atomic_store(&h->overflow, 1); /* an overflow sample whose max is not there yet */
    hist_snapshot(h, s);
    assert_int_equal(atomic_load(&s->max), HIST_RANGE_END);
    check_consistent(s, scratch, true);
    hist_init(h); /* sum and min of a first sample whose bucket is not there yet */
    atomic_store(&h->sum, 77);
    atomic_store(&h->min, 77);
    hist_snapshot(h, s);
    assert_int_equal(atomic_load(&s->count), 0);
    assert_int_equal(atomic_load(&s->sum), 0);
    assert_int_equal(atomic_load(&s->min), UINT64_MAX);
    check_consistent(s, scratch, true);
    free(h);
    free(s);
    free(scratch);
}

static void test_concurrent(void **state)
{
    (void)state;
    run_concurrent(false, CONC_N);
}

static void test_concurrent_ramp(void **state)
{
    (void)state;
    run_concurrent(true, RAMP_N);
}

static int report(void **state)
{
    (void)state;
    print_message("largest percentile error seen: %.4f%% (bound %.4f%%)\n", worst_rel * 100,
                  REL_BOUND * 100);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry),        cmocka_unit_test(test_lock_free),
        cmocka_unit_test(test_empty_and_bad_p), cmocka_unit_test(test_decimal_p),
        cmocka_unit_test(test_uniform),         cmocka_unit_test(test_log_uniform),
        cmocka_unit_test(test_lognormal),       cmocka_unit_test(test_bimodal),
        cmocka_unit_test(test_exponential),     cmocka_unit_test(test_constant),
        cmocka_unit_test(test_bucket_edges),    cmocka_unit_test(test_near_10ns),
        cmocka_unit_test(test_near_100s),       cmocka_unit_test(test_single_and_two),
        cmocka_unit_test(test_large_count),     cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_merge),           cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_json_malformed),  cmocka_unit_test(test_snapshot_repair),
        cmocka_unit_test(test_concurrent),      cmocka_unit_test(test_concurrent_ramp),
    };
    return cmocka_run_group_tests(tests, NULL, report);
}
