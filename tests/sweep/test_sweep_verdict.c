/* test_sweep_verdict: verdicts on synthetic racks: one degraded rank named and no other, a slow
 * uplink named (and no rank), one bad pair, MAD 0 (the 15% rule alone), a noisy healthy rack
 * with no verdict, failed tests (a dead rank, one failed pair) kept out of the medians, the
 * path's ceiling, the second pass confirming and clearing a suspect, and the medians. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/sweep/sweep_stats.h"
#include "engine/sweep/sweep_verdict.h"

#define MAXN                   32
#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static struct sweep_rank ranks[MAXN];
static char names[MAXN][16];
static struct sweep_figure figs[MAXN * MAXN];
static size_t nfigs;
static uint64_t rng_state;

/* A deterministic uniform draw in [-1, 1). */
static double uni(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

/* noise: the sum of four uniform draws scaled to amp each (bounded by 4 amp). */
static double noisy(double x, double amp)
{
    return x * (1 + amp * (uni() + uni() + uni() + uni()));
}

/* n ranks rk-h0.., one rail "eth0", groups of per_group (0: unknown); every pair at 100 Gb/s,
 * 2 us p50 and 5 us p99, with noise of amplitude amp. */
static void rack(uint32_t n, uint32_t per_group, double amp)
{
    memset(ranks, 0, sizeof(ranks));
    rng_state = 7;
    for (uint32_t r = 0; r < n; r++) {
        snprintf(names[r], sizeof(names[r]), "rk-h%u", r);
        ranks[r].name = names[r];
        ranks[r].rails = 1;
        ranks[r].rail_name[0] = "eth0";
        ranks[r].group = per_group ? (int32_t)(r / per_group) : SWEEP_GROUP_UNKNOWN;
    }
    nfigs = 0;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = a + 1; b < n; b++)
            figs[nfigs++] = (struct sweep_figure){
                .a = a,
                .b = b,
                .valid = SWEEP_FIG_LAT | SWEEP_FIG_BW_AB | SWEEP_FIG_BW_BA,
                .lat_p50_ns = noisy(2000, amp),
                .lat_p99_ns = noisy(5000, amp),
                .bw_ab_gbps = noisy(100, amp),
                .bw_ba_gbps = noisy(100, amp),
            };
}

static int touches(const struct sweep_figure *f, uint32_t r)
{
    return f->a == r || f->b == r;
}

static void scale_bw(int (*pick)(const struct sweep_figure *), double k)
{
    for (size_t i = 0; i < nfigs; i++)
        if (pick(&figs[i])) {
            figs[i].bw_ab_gbps *= k;
            figs[i].bw_ba_gbps *= k;
        }
}

static void judge(uint32_t n, struct sweep_analysis *an)
{
    struct ft_err err = {0};
    assert_int_equal(sweep_judge(ranks, n, figs, nfigs, NULL, an, &err), 0);
    for (size_t k = 0; k < an->n_v; k++)
        printf("  verdict: %s\n", an->v[k].msg);
}

static int has_rank3(const struct sweep_figure *f)
{
    return touches(f, 3);
}

static int has_rank6(const struct sweep_figure *f)
{
    return touches(f, 6);
}

static void test_degraded_rank(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(8, 0, 0.01);
    scale_bw(has_rank3, 0.27);
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    const struct sweep_verdict *v = &an.v[0];
    assert_int_equal(v->kind, SWEEP_V_RANK);
    assert_int_equal(v->state, SWEEP_SUSPECT);
    assert_int_equal(v->rank, 3);
    assert_int_equal(v->metric, SWEEP_M_BW);
    assert_int_equal(v->n_pairs, 7);
    assert_true(fabs(v->ratio.value - 0.27) < 0.01);
    assert_string_equal(v->ratio.unit, "x");
    assert_string_equal(v->observed.unit, "Gb/s");
    assert_string_equal(v->observed.kind, "bandwidth");
    assert_true(fabs(v->observed.value - 27) < 1.0);
    assert_string_equal(v->msg, "rk-h3 eth0: 0.27x the rack's median bandwidth in all 7 of its "
                                "pairs -> its port, cable or NIC, not the fabric");
    sweep_analysis_free(&an);

    /* Two degraded ranks, on 16: both named, each with its own figures, and no pair. */
    rack(16, 0, 0.01);
    scale_bw(has_rank3, 0.27);
    scale_bw(has_rank6, 0.5);
    judge(16, &an);
    assert_int_equal(an.n_v, 2);
    assert_int_equal(an.v[0].rank, 3);
    assert_int_equal(an.v[1].rank, 6);
    assert_true(fabs(an.v[0].ratio.value - 0.27) < 0.01);
    assert_true(fabs(an.v[1].ratio.value - 0.5) < 0.02);
    assert_int_equal(an.v[1].n_pairs, 15);
    assert_false(an.v[1].unlike);
    sweep_analysis_free(&an);

    /* A 25 Gb/s port among 100 Gb/s ones, running at its rate: an unlike node, not a fault. */
    rack(8, 0, 0.01);
    for (int r = 0; r < 8; r++)
        ranks[r].port_gbps[0] = r == 3 ? 25 : 100;
    scale_bw(has_rank3, 0.24);
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    assert_int_equal(an.v[0].rank, 3);
    assert_true(an.v[0].unlike);
    assert_non_null(strstr(an.v[0].msg, "at its own port's rate (23.9"));
    assert_non_null(
        strstr(an.v[0].msg, "of 25 Gb/s) -> a slower port than the rack's: an unlike node"));
    sweep_analysis_free(&an);
}

static int across_0_1(const struct sweep_figure *f)
{
    int32_t g = ranks[f->a].group, h = ranks[f->b].group;
    return (g == 0 && h == 1) || (g == 1 && h == 0);
}

static void check_uplink_only(const struct sweep_analysis *an, uint32_t pairs)
{
    assert_int_equal(an->n_v, 1);
    const struct sweep_verdict *v = &an->v[0];
    assert_int_equal(v->kind, SWEEP_V_UPLINK);
    assert_int_equal(v->group_a, 0);
    assert_int_equal(v->group_b, 1);
    assert_int_equal(v->rank, SWEEP_NO_RANK);
    assert_int_equal(v->n_pairs, pairs);
    assert_int_equal(v->n_slow, pairs);
    assert_true(fabs(v->ratio.value - 0.5) < 0.02);
    assert_non_null(strstr(v->msg, "groups 0 and 1"));
    assert_non_null(strstr(v->msg, "the uplink or spine between them"));
}

static void test_slow_uplink(void **state)
{
    (void)state;
    struct sweep_analysis an;
    /* Two leaves of four: the across class is all slow, found against the same-group class. */
    rack(8, 4, 0.01);
    scale_bw(across_0_1, 0.5);
    judge(8, &an);
    check_uplink_only(&an, 16);
    sweep_analysis_free(&an);
    /* Three leaves of four, the uplink between 0 and 1 slow: outliers in the across class. */
    rack(12, 4, 0.01);
    scale_bw(across_0_1, 0.5);
    judge(12, &an);
    check_uplink_only(&an, 16);
    sweep_analysis_free(&an);
}

static int pair_2_5(const struct sweep_figure *f)
{
    return f->a == 2 && f->b == 5;
}

static void test_bad_pair(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(8, 0, 0.01);
    scale_bw(pair_2_5, 0.4);
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    assert_int_equal(an.v[0].kind, SWEEP_V_PAIR);
    assert_int_equal(an.v[0].rank, 2);
    assert_int_equal(an.v[0].peer, 5);
    assert_non_null(strstr(an.v[0].msg, "rk-h2 eth0 <-> rk-h5 eth0: bandwidth a->b 40"));
    assert_non_null(strstr(an.v[0].msg, "not either rank alone"));
    sweep_analysis_free(&an);
    /* Latency: one pair's p99 three times the rest, its bandwidth fine. */
    rack(8, 0, 0.01);
    figs[4].lat_p99_ns *= 3;
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    assert_int_equal(an.v[0].metric, SWEEP_M_LAT_P99);
    assert_string_equal(an.v[0].observed.unit, "ns");
    assert_string_equal(an.v[0].observed.kind, "latency p99");
    sweep_analysis_free(&an);
}

static void test_mad_zero(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(8, 0, 0);           /* every figure the same: MAD 0 */
    figs[3].bw_ba_gbps = 90; /* 10% off: under the 15% rule */
    judge(8, &an);
    assert_near(an.cls[SWEEP_M_BW][0][0].mad, 0, 0);
    assert_int_equal(an.n_v, 0);
    sweep_analysis_free(&an);
    figs[3].bw_ba_gbps = 84; /* 16% off */
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    assert_int_equal(an.v[0].kind, SWEEP_V_PAIR);
    assert_non_null(strstr(an.v[0].msg, "bandwidth b->a 84 Gb/s"));
    sweep_analysis_free(&an);
}

static void test_noisy_healthy(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(32, 8, 0.035); /* up to 14% off the median: noisy, and healthy */
    judge(32, &an);
    assert_true(an.cls[SWEEP_M_BW][0][0].mad > 2);
    assert_int_equal(an.n_v, 0);
    sweep_analysis_free(&an);
}

static void test_failed(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(8, 0, 0.01);
    for (size_t i = 0; i < nfigs; i++)
        if (touches(&figs[i], 6) || (figs[i].a == 1 && figs[i].b == 2)) {
            figs[i].failed = 1;
            figs[i].valid = 0;
            figs[i].bw_ab_gbps = figs[i].bw_ba_gbps = 0; /* must not count */
            figs[i].fail_reason =
                touches(&figs[i], 6) ? "rk-h6 did not answer within 10 s" : "connection refused";
        }
    judge(8, &an);
    assert_int_equal(an.n_v, 2);
    assert_int_equal(an.v[0].kind, SWEEP_V_RANK_FAILED);
    assert_int_equal(an.v[0].rank, 6);
    assert_string_equal(an.v[0].msg, "rk-h6 eth0: all 7 of its tests failed (rk-h6 did not "
                                     "answer within 10 s) -> the rank itself, or its port, cable "
                                     "or NIC");
    assert_int_equal(an.v[1].kind, SWEEP_V_PAIR_FAILED);
    assert_string_equal(an.v[1].msg, "rk-h1 eth0 <-> rk-h2 eth0: failed (connection refused)");
    assert_int_equal(an.cls[SWEEP_M_BW][0][0].n, 2 * (28 - 8)); /* 7 + 1 failed left out */
    sweep_analysis_free(&an);
}

static void test_ceiling(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(8, 0, 0.01);
    for (int r = 0; r < 8; r++)
        ranks[r].port_gbps[0] = 100;
    judge(8, &an);
    assert_int_equal(an.n_v, 0); /* at its ceiling */
    sweep_analysis_free(&an);
    for (int r = 0; r < 8; r++)
        ranks[r].port_gbps[0] = r == 2 ? 400 : 200; /* the slower port is the ceiling */
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    assert_int_equal(an.v[0].kind, SWEEP_V_CEILING);
    assert_true(fabs(an.v[0].ratio.value - 0.5) < 0.02);
    assert_near(an.v[0].reference.value, 200, 1e-9);
    assert_string_equal(an.v[0].reference.unit, "Gb/s");
    sweep_analysis_free(&an);
}

static struct sweep_figure retest(uint32_t a, uint32_t b, double bw)
{
    return (struct sweep_figure){.a = a,
                                 .b = b,
                                 .valid = SWEEP_FIG_LAT | SWEEP_FIG_BW_AB | SWEEP_FIG_BW_BA,
                                 .lat_p50_ns = 2000,
                                 .lat_p99_ns = 5000,
                                 .bw_ab_gbps = bw,
                                 .bw_ba_gbps = bw};
}

static void test_second_pass(void **state)
{
    (void)state;
    struct ft_err err = {0};
    struct sweep_analysis an;
    struct sweep_plan p = {0};
    rack(8, 0, 0.01);
    scale_bw(has_rank3, 0.4); /* rank 3 looked slow (say, a neighbour's burst) */
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    assert_int_equal(sweep_recheck_plan(&an, ranks, figs, nfigs, &p, &err), 0);
    assert_int_equal(p.n_tests, 2);
    assert_int_equal(p.n_rounds, 2); /* the suspect is in one test at a time */
    uint32_t h0 = p.tests[0].dst, h1 = p.tests[1].dst;
    assert_int_equal(p.tests[0].src, 3);
    assert_int_equal(p.tests[1].src, 3);
    assert_int_not_equal(h0, h1);
    assert_int_not_equal(h0, 3);
    assert_int_not_equal(h1, 3);
    assert_int_equal(p.tests[0].pattern, SWEEP_RECHECK);

    struct sweep_figure re[2] = {retest(3, h0, 99), retest(h1, 3, 101)};
    assert_int_equal(sweep_recheck_judge(&an, ranks, re, 2), 0);
    assert_int_equal(an.v[0].state, SWEEP_CLEARED);
    sweep_analysis_free(&an);

    judge(8, &an); /* the same suspect, slow again: named */
    re[0].bw_ab_gbps = 41;
    re[1].bw_ba_gbps = 38;
    assert_int_equal(sweep_recheck_judge(&an, ranks, re, 2), 0);
    assert_int_equal(an.v[0].state, SWEEP_NAMED);
    sweep_analysis_free(&an);

    judge(8, &an); /* one slow, one fine: still a suspect */
    re[1] = retest(h1, 3, 100);
    assert_int_equal(sweep_recheck_judge(&an, ranks, re, 2), 1);
    assert_int_equal(an.v[0].state, SWEEP_SUSPECT);
    sweep_analysis_free(&an);
    sweep_plan_free(&p);

    /* Six ranks, rank 0 slow in all its pairs, and the pairs 1-2 and 3-4 slow (a loaded
     * rack's noise): rank 5 alone was clean, so the second reference is a rank with a slow
     * pair (not a suspect rank): rank 0 is re-tested against 5 and one of 1-4, never left a
     * suspect for want of references. */
    rack(6, 0, 0);
    for (size_t i = 0; i < nfigs; i++)
        if (figs[i].a == 0 || i == 5 || i == 12)
            figs[i].bw_ab_gbps = 50;
    judge(6, &an);
    assert_int_equal(an.n_v, 3);
    assert_int_equal(sweep_recheck_plan(&an, ranks, figs, nfigs, &p, &err), 0);
    int with5 = 0, with_dirty = 0, pairs_again = 0;
    for (size_t i = 0; i < p.n_tests; i++) {
        const struct sweep_test *t = &p.tests[i];
        if (t->src == 0) {
            with5 += t->dst == 5;
            with_dirty += t->dst >= 1 && t->dst <= 4;
        } else {
            pairs_again++; /* the suspect pairs 1-2 and 3-4, measured once more */
        }
    }
    assert_int_equal(with5, 1);
    assert_int_equal(with_dirty, 1);
    assert_int_equal(pairs_again, 2);
    sweep_analysis_free(&an);
    sweep_plan_free(&p);
}

/* A degraded rank one of whose pairs happened to land within the class's spread is still
 * named, for the pairs it was slow in. */
static void test_degraded_rank_most_pairs(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(8, 0, 0.01);
    scale_bw(has_rank3, 0.3);
    for (size_t i = 0; i < nfigs; i++)
        if (figs[i].a == 3 && figs[i].b == 7) {
            figs[i].bw_ab_gbps = 97;
            figs[i].bw_ba_gbps = 98;
        }
    judge(8, &an);
    size_t named = 0;
    for (size_t k = 0; k < an.n_v; k++)
        if (an.v[k].kind == SWEEP_V_RANK) {
            named++;
            assert_int_equal(an.v[k].rank, 3);
            assert_non_null(strstr(an.v[k].msg, "in 6 of its 7 pairs"));
        }
    assert_int_equal(named, 1);
    sweep_analysis_free(&an);
    /* Only 5 of 7 slow: not the rank (each pair on its own). */
    rack(8, 0, 0.01);
    scale_bw(has_rank3, 0.3);
    for (size_t i = 0; i < nfigs; i++)
        if (figs[i].a == 3 && figs[i].b >= 6)
            figs[i].bw_ab_gbps = figs[i].bw_ba_gbps = 99;
    judge(8, &an);
    for (size_t k = 0; k < an.n_v; k++)
        assert_int_not_equal(an.v[k].kind, SWEEP_V_RANK);
    sweep_analysis_free(&an);
}

/* Across the spine every pair has more hops: a higher latency across groups than within is
 * the path, not a fault; one group pair slower than the other group pairs is its uplink. */
static void test_uplink_latency(void **state)
{
    (void)state;
    struct sweep_analysis an;
    rack(8, 4, 0.01);
    for (size_t i = 0; i < nfigs; i++)
        if (ranks[figs[i].a].group != ranks[figs[i].b].group)
            figs[i].lat_p50_ns *= 1.3;
    judge(8, &an);
    for (size_t k = 0; k < an.n_v; k++)
        assert_int_not_equal(an.v[k].kind, SWEEP_V_UPLINK);
    sweep_analysis_free(&an);
    /* Three leaves of 4: the pairs between leaves 0 and 2 at 2x the other across pairs. */
    rack(12, 4, 0.01);
    for (size_t i = 0; i < nfigs; i++) {
        int32_t ga = ranks[figs[i].a].group, gb = ranks[figs[i].b].group;
        if (ga != gb)
            figs[i].lat_p50_ns *= 1.3;
        if ((ga == 0 && gb == 2) || (ga == 2 && gb == 0))
            figs[i].lat_p50_ns *= 2;
    }
    judge(12, &an);
    size_t up = 0;
    for (size_t k = 0; k < an.n_v; k++)
        if (an.v[k].kind == SWEEP_V_UPLINK) {
            up++;
            assert_int_equal(an.v[k].metric, SWEEP_M_LAT_P50);
            assert_non_null(strstr(an.v[k].msg, "across-group median latency p50"));
        }
    assert_int_equal(up, 1);
    sweep_analysis_free(&an);
}

/* A slow pair is a suspect until the second pass measures it again: named when the re-test
 * is slow too, cleared when it is fine. */
static void test_pair_second_pass(void **state)
{
    (void)state;
    struct ft_err err = {0};
    struct sweep_analysis an;
    struct sweep_plan p = {0};
    rack(8, 0, 0.01);
    scale_bw(pair_2_5, 0.4);
    judge(8, &an);
    assert_int_equal(an.n_v, 1);
    assert_int_equal(an.v[0].state, SWEEP_SUSPECT);
    assert_int_equal(sweep_recheck_plan(&an, ranks, figs, nfigs, &p, &err), 0);
    assert_int_equal(p.n_tests, 1);
    assert_int_equal(p.tests[0].src, 2);
    assert_int_equal(p.tests[0].dst, 5);
    struct sweep_figure re = retest(2, 5, 100);
    assert_int_equal(sweep_recheck_judge(&an, ranks, &re, 1), 0);
    assert_int_equal(an.v[0].state, SWEEP_CLEARED);
    sweep_analysis_free(&an);
    judge(8, &an);
    re = retest(5, 2, 39);                        /* either direction of the pair */
    struct sweep_figure other = retest(2, 6, 39); /* another pair's re-test says nothing */
    struct sweep_figure both[2] = {other, re};
    assert_int_equal(sweep_recheck_judge(&an, ranks, both, 2), 0);
    assert_int_equal(an.v[0].state, SWEEP_NAMED);
    sweep_analysis_free(&an);
    sweep_plan_free(&p);
}

/* Noisy p99s of other pairs do not take those ranks away as references for a bandwidth
 * suspect: only a slow figure of the suspect's own metric does. */
static void test_recheck_references(void **state)
{
    (void)state;
    struct ft_err err = {0};
    struct sweep_analysis an;
    struct sweep_plan p = {0};
    rack(8, 0, 0.01);
    scale_bw(has_rank3, 0.3);
    /* Pairs 0-1, 2-4, 5-6 and 6-7: a p99 three times the rest (every rank but 3 touched). */
    for (size_t i = 0; i < nfigs; i++)
        if ((figs[i].a == 0 && figs[i].b == 1) || (figs[i].a == 2 && figs[i].b == 4) ||
            (figs[i].a == 5 && figs[i].b == 6) || (figs[i].a == 6 && figs[i].b == 7))
            figs[i].lat_p99_ns *= 3;
    judge(8, &an);
    assert_int_equal(sweep_recheck_plan(&an, ranks, figs, nfigs, &p, &err), 0);
    size_t rank3 = 0;
    for (size_t i = 0; i < p.n_tests; i++)
        rank3 += p.tests[i].src == 3 || p.tests[i].dst == 3;
    assert_int_equal(rank3, 2);
    sweep_analysis_free(&an);
    sweep_plan_free(&p);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct ft_err err = {0};
    struct sweep_analysis an;
    rack(4, 0, 0);
    figs[2].b = 9;
    assert_int_equal(sweep_judge(ranks, 4, figs, nfigs, NULL, &an, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "do not belong to this job"));
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_median(void **state)
{
    (void)state;
    double x[301], y[301];
    rng_state = 1;
    for (size_t n = 1; n <= 301; n++) {
        for (size_t i = 0; i < n; i++)
            x[i] = y[i] = floor(uni() * 20); /* many ties */
        qsort(y, n, sizeof(*y), cmp);
        double want = n % 2 ? y[n / 2] : (y[n / 2 - 1] + y[n / 2]) / 2;
        assert_near(sweep_stats_median(x, n), want, 0);
    }
    assert_near(sweep_stats_median(x, 0), 0, 0);
    /* Large arrays take the sampled path: random, sorted, reversed, all ties, few values. */
    size_t big = 200001;
    double *u = malloc(big * sizeof(*u)), *w = malloc(big * sizeof(*w));
    assert_non_null(u);
    assert_non_null(w);
    for (int kind = 0; kind < 5; kind++)
        for (size_t n = big - 1; n <= big; n++) {
            for (size_t i = 0; i < n; i++) {
                double r = uni();
                u[i] = kind == 0   ? r
                       : kind == 1 ? (double)i
                       : kind == 2 ? (double)(n - i)
                       : kind == 3 ? 7
                                   : floor(r * 3);
                w[i] = u[i];
            }
            qsort(w, n, sizeof(*w), cmp);
            double want = n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
            assert_near(sweep_stats_median(u, n), want, 0);
        }
    free(u);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_degraded_rank),
        cmocka_unit_test(test_slow_uplink),
        cmocka_unit_test(test_bad_pair),
        cmocka_unit_test(test_mad_zero),
        cmocka_unit_test(test_noisy_healthy),
        cmocka_unit_test(test_failed),
        cmocka_unit_test(test_ceiling),
        cmocka_unit_test(test_second_pass),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_pair_second_pass),
        cmocka_unit_test(test_recheck_references),
        cmocka_unit_test(test_degraded_rank_most_pairs),
        cmocka_unit_test(test_uplink_latency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
