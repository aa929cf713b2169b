/* bench_hist: the cost of hist_record in ns per sample (median of RUNS runs of RECORDS
 * records of varying, realistic latencies), alone and with a 10 Hz snapshot reader, and the
 * cost of hist_snapshot and hist_stats on the filled histogram.
 * Usage: bench_hist [RECORDS [RUNS]]   (defaults 10^8 and 11) */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/flow/hist.h"

#define NVALS 65536 /* table of sample values, cycled through (512 KiB, stays in L2) */

static uint64_t vals[NVALS];

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
    return (double)((splitmix(s) >> 11) + 1) * 0x1p-53; /* (0, 1] */
}

/* RDMA/TCP-like latencies: 95% log-normal around 8 us, 4% 50-500 us, 1% 1-20 ms. */
static void fill_values(void)
{
    uint64_t s = 42;
    for (int i = 0; i < NVALS; i++) {
        double u = unif(&s), ns;
        if (u < 0.95) {
            double z = sqrt(-2 * log(unif(&s))) * cos(2 * 3.14159265358979 * unif(&s));
            ns = 8000 * exp(0.6 * z);
        } else if (u < 0.99) {
            ns = 50000 + 450000 * unif(&s);
        } else {
            ns = 1e6 + 19e6 * unif(&s);
        }
        vals[i] = (uint64_t)ns;
    }
}

static void empty_record(struct hist *h, uint64_t ns)
{
    (void)h;
    (void)ns;
}

/* Called through a volatile pointer so that the compiler can't inline or drop either. */
typedef void (*record_fn)(struct hist *, uint64_t);
static record_fn volatile rec_real = hist_record, rec_empty = empty_record;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[n / 2];
}

/* ns per call of fn over n records, median of runs (v has room for runs). */
static double time_records(struct hist *h, record_fn volatile *which, long n, int runs, double *v)
{
    for (int r = 0; r < runs; r++) {
        hist_init(h);
        record_fn fn = *which;
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            fn(h, vals[i & (NVALS - 1)]);
        v[r] = (now_ns() - t0) / (double)n;
    }
    return median(v, runs);
}

struct reader {
    const struct hist *h;
    struct hist *snap;
    atomic_bool stop;
    long snaps;
};

static void *reader_main(void *arg)
{
    struct reader *rd = arg;
    const struct timespec tick = {0, 100000000}; /* 10 Hz, like the engine's publisher */
    while (!atomic_load(&rd->stop)) {
        hist_snapshot(rd->h, rd->snap);
        rd->snaps++;
        nanosleep(&tick, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000000;
    int runs = argc > 2 ? atoi(argv[2]) : 11;
    if (n < 1 || runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: bench_hist [RECORDS [RUNS]]\n");
        return 64;
    }
    struct hist *h = malloc(sizeof(*h)), *snap = malloc(sizeof(*snap));
    double *v = malloc(sizeof(*v) * (size_t)runs);
    if (!h || !snap || !v) {
        fprintf(stderr, "bench_hist: out of memory\n");
        return 71;
    }
    fill_values();

    double base = time_records(h, &rec_empty, n, runs, v);
    double rec = time_records(h, &rec_real, n, runs, v);
    double lo = v[0], hi = v[runs - 1];

    struct reader rd = {.h = h, .snap = snap};
    atomic_init(&rd.stop, false);
    pthread_t t;
    if (pthread_create(&t, NULL, reader_main, &rd) != 0) {
        fprintf(stderr, "bench_hist: cannot start the reader thread\n");
        return 71;
    }
    double rec_rd = time_records(h, &rec_real, n, runs, v);
    atomic_store(&rd.stop, true);
    pthread_join(t, NULL);

    /* h now holds the last run's n samples */
    const int calls = 1000;
    struct hist_stats st;
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (int i = 0; i < calls; i++)
            hist_snapshot(h, snap);
        v[r] = (now_ns() - t0) / calls;
    }
    double snap_ns = median(v, runs);
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (int i = 0; i < calls; i++)
            hist_stats(snap, &st);
        v[r] = (now_ns() - t0) / calls;
    }
    double stats_ns = median(v, runs);

    printf("hist_record:                  %6.2f ns/sample (median of %d runs of %ld records; "
           "fastest %.2f, slowest %.2f)\n",
           rec, runs, n, lo, hi);
    printf("  same loop, empty function:  %6.2f ns/sample (call and loop overhead, in the above)\n",
           base);
    printf("  with a 10 Hz snapshot reader: %4.2f ns/sample (%ld snapshots taken)\n", rec_rd,
           rd.snaps);
    printf("hist_snapshot:                %6.2f us/call (%d buckets; median of %d x %d calls)\n",
           snap_ns / 1e3, HIST_NBUCKETS, runs, calls);
    printf("hist_stats:                   %6.2f us/call (on %llu samples: p50 %.0f ns, p99.99 %.0f "
           "ns)\n",
           stats_ns / 1e3, (unsigned long long)st.count, st.p50, st.p9999);
    free(h);
    free(snap);
    free(v);
    return 0;
}
