/* test_sweep_stats: the bucket statistics against a plain reference (sort, then the middle
 * value or the mean of the middle two; the MAD the same over the sorted absolute deviations),
 * exactly (sweep_stats_buckets, and _within with exact, loose and too little room), on random
 * data: empty buckets and buckets under SWEEP_MIN_CLASS, odd and even sizes, ties, MAD 0, and
 * buckets large enough for the sampled selection (and its rare edge); then the judge's class
 * statistics on random racks (groups, two rails, failed and invalid figures), and an uplink's
 * median when a named rank's figures share its cells and must be left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/sweep/sweep_stats.h"
#include "engine/sweep/sweep_verdict.h"

static uint64_t rng_state;

/* A deterministic uniform draw in [0, 1). */
static double uni(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / (double)(1ULL << 53);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The reference: median and MAD of x[0..n) by sorting (x is sorted, then overwritten). */
static struct sweep_class_stat ref_stat(double *x, size_t n)
{
    struct sweep_class_stat st = {0, 0, n};
    if (!n)
        return st;
    qsort(x, n, sizeof(*x), cmp);
    st.median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
    for (size_t i = 0; i < n; i++)
        x[i] = fabs(x[i] - st.median);
    qsort(x, n, sizeof(*x), cmp);
    st.mad = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
    return st;
}

static void assert_stat(const struct sweep_class_stat *got, const struct sweep_class_stat *want)
{
    assert_int_equal(got->n, want->n);
    if (got->median != want->median || got->mad != want->mad)
        fail_msg("n %zu: median %.17g MAD %.17g, want %.17g and %.17g", want->n, got->median,
                 got->mad, want->median, want->mad);
}

/* Generic buckets: figure a's samples go to bucket a (bw a->b, bw b->a, p50 when flagged). */
static int a_keys(void *ctx, const struct sweep_figure *f, uint32_t *b, double *v)
{
    (void)ctx;
    int n = 0;
    const double x[3] = {f->bw_ab_gbps, f->bw_ba_gbps, f->lat_p50_ns};
    for (int s = 0; s < 3; s++)
        if ((f->valid >> s) & 1) {
            b[n] = f->a;
            v[n++] = x[s];
        }
    return n;
}

#define NB 40

#define NBIG 4 /* the last buckets: over the sampled selection's threshold */

/* Bucket b's size: 0-4 (under SWEEP_MIN_CLASS), odd and even up to a few thousand, and the big
 * ones odd and even. */
static size_t bucket_size(unsigned b)
{
    static const size_t big[NBIG] = {70001, 70000, 65536, 100000};
    if (b < 5)
        return b;
    if (b >= NB - NBIG)
        return big[b - (NB - NBIG)];
    return 5 + (size_t)(uni() * 3000);
}

/* Bucket b's values: noisy, many ties, all equal (MAD 0), or ties around the median; the big
 * ones noisy but the last (few values). */
static double bucket_value(unsigned b)
{
    if (b >= NB - NBIG)
        return b == NB - 1 ? floor(uni() * 3) : 360 * (1 + 0.02 * uni());
    switch (b % 4) {
    case 0:
        return 360 * (1 + 0.02 * uni());
    case 1:
        return floor(uni() * 7);
    case 2:
        return 2000;
    default:
        return uni() < 0.6 ? 5 : uni();
    }
}

static void test_buckets_against_sort(void **state)
{
    (void)state;
    rng_state = 3;
    size_t cap = 0;
    size_t size[NB];
    for (unsigned b = 0; b < NB; b++)
        cap += size[b] = bucket_size(b);
    /* Each figure gives 1-3 samples to its bucket; figures of all buckets interleaved. */
    struct sweep_figure *f = calloc(cap, sizeof(*f));
    double *want[NB];
    size_t nf = 0, left[NB], got_n[NB] = {0};
    assert_non_null(f);
    for (unsigned b = 0; b < NB; b++) {
        left[b] = size[b];
        want[b] = malloc(sizeof(double) * (size[b] + 1));
        assert_non_null(want[b]);
    }
    for (size_t done = 0; done < cap;) {
        unsigned b = (unsigned)(uni() * NB);
        if (!left[b])
            continue;
        struct sweep_figure *x = &f[nf++];
        double v[3] = {-1, -1, -1}; /* not flagged: not a sample */
        x->a = b;
        for (int s = 0; s < 3 && left[b]; s++)
            if (s == 0 || uni() < 0.5) {
                x->valid |= (uint8_t)(1u << s);
                want[b][got_n[b]++] = v[s] = bucket_value(b);
                left[b]--;
                done++;
            }
        x->bw_ab_gbps = v[0];
        x->bw_ba_gbps = v[1];
        x->lat_p50_ns = v[2];
    }
    struct sweep_class_stat got[NB];
    double *scratch = malloc(sizeof(double) * (SWEEP_STATS_MAX_SAMPLES * nf + 2 * NB));
    assert_non_null(scratch);
    /* Passes 0 and 1: with and without a scratch of the caller's; 2-4: in one call of the keys
     * per figure, the room exact, with slack, and too small for one bucket (the sort then). */
    size_t room[NB];
    for (int pass = 0; pass < 5; pass++) {
        for (unsigned b = 0; b < NB; b++)
            room[b] = size[b] + (pass == 3 ? b % 3 : 0) - (pass == 4 && b == NB / 2);
        if (pass < 2)
            sweep_stats_buckets(f, nf, a_keys, NULL, NB, 1, pass ? scratch : NULL, got);
        else
            sweep_stats_buckets_within(f, nf, a_keys, NULL, NB, room, 1, pass == 2 ? NULL : scratch,
                                       got);
        for (unsigned b = 0; b < NB; b++) {
            double *copy = malloc(sizeof(double) * (size[b] + 1));
            assert_non_null(copy);
            memcpy(copy, want[b], sizeof(double) * size[b]);
            struct sweep_class_stat w = ref_stat(copy, size[b]);
            assert_stat(&got[b], &w);
            if (b % 4 == 2 && b < NB - NBIG && size[b]) /* all equal */
                assert_true(got[b].mad == 0);
            free(copy);
        }
    }
    /* The median alone, and the sorted buckets hold every sample of theirs. */
    struct sweep_stats_sorted s;
    sweep_stats_sort(f, nf, a_keys, NULL, NB, NULL, &s);
    for (unsigned b = 0; b < NB; b++) {
        assert_int_equal(s.at[b + 1] - s.at[b], size[b]);
        struct sweep_class_stat w = ref_stat(want[b], size[b]);
        assert_true(sweep_stats_median(s.x + s.at[b], size[b]) == w.median);
        free(want[b]);
    }
    sweep_stats_sorted_free(&s);
    free(scratch);
    free(f);
}

/* A large array whose sampled positions (every n / 4096-th) all hold the value at rank n / 2,
 * its ranks under it smaller values elsewhere, the rest larger: the sample's bounds are both
 * that value, so the k-th is the band's smallest and the (k-1)-th (for an even n) is under the
 * bounds. */
static void test_median_band_edge(void **state)
{
    (void)state;
    rng_state = 9;
    for (size_t n = 70000; n <= 70001; n++) {
        double *x = malloc(sizeof(*x) * n), *y = malloc(sizeof(*y) * n);
        assert_non_null(x);
        assert_non_null(y);
        size_t stride = n / 4096, small = 0;
        for (size_t i = 0; i < n; i++) {
            int sampled = i % stride == 0 && i / stride < 4096;
            x[i] = y[i] = sampled ? 1 : small < n / 2 ? (small++, 0.5 * uni()) : 2 + uni();
        }
        struct sweep_class_stat w = ref_stat(y, n);
        assert_true(sweep_stats_median(x, n) == w.median);
        assert_true(n % 2 ? w.median == 1 : w.median < 1);
        free(x);
        free(y);
    }
}

#define NR    24 /* ranks, in 4 groups of 6 */
#define GROUP 6

static struct sweep_rank ranks[NR];
static char names[NR][16];

static void make_ranks(void)
{
    memset(ranks, 0, sizeof(ranks));
    for (uint32_t r = 0; r < NR; r++) {
        snprintf(names[r], sizeof(names[r]), "rk-h%u", r);
        ranks[r].name = names[r];
        ranks[r].rails = 3;
        ranks[r].rail_name[0] = "eth0";
        ranks[r].rail_name[1] = "eth1";
        ranks[r].group = (int32_t)(r / GROUP);
        ranks[r].port_gbps[0] = ranks[r].port_gbps[1] = 400;
    }
}

/* The samples of metric m of f, by the rules sweep_verdict.h states, into x; returns how many. */
static int ref_samples(const struct sweep_figure *f, enum sweep_metric m, double *x)
{
    const double v[4] = {f->bw_ab_gbps, f->bw_ba_gbps, f->lat_p50_ns, f->lat_p99_ns};
    const uint8_t need[4] = {SWEEP_FIG_BW_AB, SWEEP_FIG_BW_BA, SWEEP_FIG_LAT, SWEEP_FIG_LAT};
    const int from = m == SWEEP_M_BW ? 0 : (int)m + 1, to = m == SWEEP_M_BW ? 2 : (int)m + 2;
    int n = 0;
    for (int s = from; s < to && !f->failed; s++)
        if ((f->valid & need[s]) && isfinite(v[s]) && v[s] >= 0)
            x[n++] = v[s];
    return n;
}

/* Rail 0: every pair, noisy, p50 constant (MAD 0), some figures failed, invalid or NaN; rail 1:
 * four pairs, so that its classes are under SWEEP_MIN_CLASS. */
static size_t random_rack(struct sweep_figure *f, double slow_uplink, uint32_t slow_rank)
{
    size_t nf = 0;
    for (uint32_t a = 0; a < NR; a++)
        for (uint32_t b = a + 1; b < NR; b++) {
            int ga = (int)(a / GROUP), gb = (int)(b / GROUP);
            double k = ((ga == 1 && gb == 2) ? slow_uplink : 1) *
                       (a == slow_rank || b == slow_rank ? 0.3 : 1);
            struct sweep_figure *x = &f[nf++];
            *x = (struct sweep_figure){a,
                                       b,
                                       0,
                                       SWEEP_FIG_LAT | SWEEP_FIG_BW_AB | SWEEP_FIG_BW_BA,
                                       0,
                                       2000,
                                       5000 * (1 + 0.3 * uni()),
                                       100 * k * (1 + 0.02 * uni()),
                                       100 * k * (1 + 0.02 * uni()),
                                       NULL};
            double u = uni();
            if (u < 0.03)
                x->failed = 1;
            else if (u < 0.06)
                x->valid &= (uint8_t)~SWEEP_FIG_BW_BA;
            else if (u < 0.08)
                x->lat_p99_ns = NAN;
            else if (u < 0.1)
                x->valid = SWEEP_FIG_BW_AB;
        }
    static const uint32_t few[4][2] = {{0, 1}, {0, 2}, {0, 7}, {3, 9}};
    for (int i = 0; i < 4; i++)
        f[nf++] = (struct sweep_figure){few[i][0],       few[i][1], 1,   SWEEP_FIG_BW_AB, 0, 0, 0,
                                        90 + 10 * i * i, 0,         NULL};
    return nf;
}

static void test_judge_classes_against_sort(void **state)
{
    (void)state;
    static struct sweep_figure f[NR * NR];
    static double x[NR * NR * 2];
    make_ranks();
    for (int round = 0; round < 4; round++) {
        rng_state = 11 + (uint64_t)round;
        size_t nf = random_rack(f, round % 2 ? 0.5 : 1, round >= 2 ? 8 : SWEEP_NO_RANK);
        struct sweep_analysis an;
        struct ft_err err = {0};
        assert_int_equal(sweep_judge(ranks, NR, f, nf, NULL, &an, &err), 0);
        for (int m = 0; m < SWEEP_M_COUNT; m++)
            for (unsigned rail = 0; rail < SWEEP_MAX_RAILS; rail++)
                for (int cls = 0; cls < 2; cls++) {
                    size_t n = 0;
                    for (size_t i = 0; i < nf; i++)
                        if (f[i].rail == rail &&
                            (ranks[f[i].a].group != ranks[f[i].b].group) == cls)
                            n += (size_t)ref_samples(&f[i], (enum sweep_metric)m, x + n);
                    struct sweep_class_stat w = ref_stat(x, n);
                    assert_stat(&an.cls[m][rail][cls], &w);
                }
        /* Rail 1's classes are under the minimum: none of its figures is judged slow, though
         * they are 90 to 180 Gb/s. */
        assert_true(an.cls[SWEEP_M_BW][1][0].n < SWEEP_MIN_CLASS);
        assert_true(an.cls[SWEEP_M_BW][1][1].n < SWEEP_MIN_CLASS);
        assert_true(an.cls[SWEEP_M_LAT_P50][0][1].mad == 0);
        for (size_t i = nf - 4; i < nf; i++)
            assert_int_equal(an.slow[i], 0);
        sweep_analysis_free(&an);
    }
}

/* Groups 1 and 2's uplink at half speed, rank 8 (group 1) degraded: both named, and the uplink's
 * median is that of the pairs across the two groups without rank 8's, which share its cells. */
static void test_uplink_median_without_named_rank(void **state)
{
    (void)state;
    static struct sweep_figure f[NR * NR];
    static double x[NR * NR * 2];
    make_ranks();
    rng_state = 5;
    size_t nf = random_rack(f, 0.5, 8), n = 0, n_all = 0;
    struct sweep_analysis an;
    struct ft_err err = {0};
    assert_int_equal(sweep_judge(ranks, NR, f, nf, NULL, &an, &err), 0);
    const struct sweep_verdict *up = NULL, *rk = NULL;
    for (size_t k = 0; k < an.n_v; k++) {
        if (an.v[k].kind == SWEEP_V_UPLINK && an.v[k].metric == SWEEP_M_BW)
            up = &an.v[k];
        if (an.v[k].kind == SWEEP_V_RANK && an.v[k].rank == 8)
            rk = &an.v[k];
    }
    assert_non_null(up);
    assert_non_null(rk);
    assert_int_equal(up->group_a, 1);
    assert_int_equal(up->group_b, 2);
    for (size_t i = 0; i < nf; i++) {
        int ga = (int)ranks[f[i].a].group, gb = (int)ranks[f[i].b].group;
        if (f[i].rail != 0 || !((ga == 1 && gb == 2) || (ga == 2 && gb == 1)))
            continue;
        n_all += (size_t)ref_samples(&f[i], SWEEP_M_BW, x + NR * NR + n_all);
        if (f[i].a != 8 && f[i].b != 8)
            n += (size_t)ref_samples(&f[i], SWEEP_M_BW, x + n);
    }
    struct sweep_class_stat w = ref_stat(x, n), with = ref_stat(x + NR * NR, n_all);
    assert_true(w.median != with.median); /* the test tells the two apart */
    assert_true(up->observed.value == w.median);
    sweep_analysis_free(&an);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_against_sort),
        cmocka_unit_test(test_median_band_edge),
        cmocka_unit_test(test_judge_classes_against_sort),
        cmocka_unit_test(test_uplink_median_without_named_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
