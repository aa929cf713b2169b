/* text_sweep: a sweep's document (struct results_sweep built here by hand) as text: 16 ranks
 * with one degraded rank fit a heat map in 80 columns, its row and column shaded worse; 40
 * ranks get one line per rank; failed pairs show 'X' and unmeasured ones '?'; the summary
 * line of a known input, exactly; the verdict lines; the whole report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/results/results_sweep.h"
#include "text/text_sweep.h"

static void num(struct results_num *f, double v)
{
    f->st = RESULTS_SET;
    f->v = v;
}

static void str(struct results_str *f, const char *s)
{
    f->st = RESULTS_SET;
    f->s = strdup(s);
}

/* n ranks rk-h0.. on rail 0, every pair at bw Gb/s both ways, p50 lat_us and p99 twice that;
 * the pairs of rank slow (-1: none) at slow times the bandwidth and 4 times the latency. */
static void rack(struct results_sweep *s, int n, int slow_rank, double bw, double lat_us,
                 double slow)
{
    memset(s, 0, sizeof(*s));
    str(&s->format, RESULTS_SWEEP_FORMAT);
    num(&s->version, 1);
    str(&s->launcher, "mpirun");
    str(&s->status, "ok");
    s->nranks = n;
    s->ranks = calloc((size_t)n, sizeof(*s->ranks));
    for (int i = 0; i < n; i++) {
        char h[32];
        snprintf(h, sizeof(h), "rk-h%d", i);
        s->ranks[i].rank = i;
        s->ranks[i].host = strdup(h);
        str(&s->ranks[i].status, "ok");
    }
    s->pairs = calloc((size_t)n * (size_t)n / 2 + 1, sizeof(*s->pairs));
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            struct results_sweep_pair *p = &s->pairs[s->npairs++];
            bool bad = a == slow_rank || b == slow_rank;
            p->a = a;
            p->b = b;
            str(&p->latency_kind, "half_round_trip");
            num(&p->bw_ab_gbps, bad ? bw * slow : bw);
            num(&p->bw_ba_gbps, bad ? bw * slow : bw);
            num(&p->lat_p50_us, bad ? 4 * lat_us : lat_us);
            num(&p->lat_p99_us, bad ? 8 * lat_us : 2 * lat_us);
            p->failed.st = RESULTS_SET;
        }
}

static struct results_sweep_pair *pair(struct results_sweep *s, int a, int b)
{
    for (int i = 0; i < s->npairs; i++)
        if (s->pairs[i].a == a && s->pairs[i].b == b)
            return &s->pairs[i];
    fail_msg("no pair %d-%d", a, b);
    return NULL;
}

static struct results_sweep_verdict *add_verdict(struct results_sweep *s)
{
    s->verdicts = realloc(s->verdicts, (size_t)(s->nverdicts + 1) * sizeof(*s->verdicts));
    struct results_sweep_verdict *v = &s->verdicts[s->nverdicts++];
    memset(v, 0, sizeof(*v));
    return v;
}

/* What fn prints, as a malloc'd string. */
static char *capture_heatmap(const struct results_sweep *s, enum text_sweep_metric m, int width)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_sweep_heatmap(f, s, m, 0, NULL, width);
    fclose(f);
    return buf;
}

/* The line of text that starts with prefix (a static copy), or NULL. */
static const char *line_of(const char *text, const char *prefix)
{
    static char line[512];
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!strncmp(l, prefix, strlen(prefix))) {
            size_t n = strcspn(l, "\n");
            snprintf(line, sizeof(line), "%.*s", (int)n, l);
            return line;
        }
    }
    return NULL;
}

static void all_within(const char *text, int width)
{
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        if ((int)n > width)
            fail_msg("line wider than %d: \"%.*s\"", width, (int)n, l);
        l += n + (l[n] == '\n');
    }
}

/* Every line but the last (the summary line a checklist pastes) within width. */
static void all_within_but_last(const char *text, int width)
{
    size_t n = strlen(text);
    assert_true(n > 1 && text[n - 1] == '\n');
    const char *last = text + n - 1;
    while (last > text && last[-1] != '\n')
        last--;
    char *head = strndup(text, (size_t)(last - text));
    all_within(head, width);
    free(head);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *c = text; *c; c++)
        n += *c == '\n';
    return n;
}

/* The cell (a, b) of a matrix row: rows start with "%4d rk-hN", cells at 20 + 2 b. */
static char cell(const char *text, int a, int b)
{
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "%4d rk-h%d ", a, a);
    const char *l = line_of(text, prefix);
    if (!l)
        fail_msg("no row %d in:\n%s", a, text);
    assert_true(strlen(l) > (size_t)(20 + 2 * b));
    return l[20 + 2 * b];
}

static void test_16_ranks_fit(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 16, 5, 100, 10, 0.3);
    static const enum text_sweep_metric ms[] = {TEXT_SWEEP_BW, TEXT_SWEEP_LAT_P50,
                                                TEXT_SWEEP_LAT_P99};
    for (int k = 0; k < 3; k++) {
        char *t = capture_heatmap(&s, ms[k], 80);
        all_within(t, 80);
        for (int a = 0; a < 16; a++)
            for (int b = 0; b < 16; b++) {
                char want = a == b ? '\\' : a == 5 || b == 5 ? '.' : '#';
                if (cell(t, a, b) != want)
                    fail_msg("cell %d,%d is '%c', not '%c':\n%s", a, b, cell(t, a, b), want, t);
            }
        /* Two header lines: the tens of 10-15, then the ones under "a \ b". */
        assert_non_null(strstr(t, "\n                                        1 1 1 1 1 1\n"));
        assert_non_null(strstr(t, "   a \\ b            0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5\n"));
        if (ms[k] == TEXT_SWEEP_BW) {
            assert_non_null(strstr(t, "bandwidth a->b (row a to column b), rail 0: "
                                      "median 100.0 Gb/s of 240 figures\n"));
            assert_non_null(strstr(t, "# >=0.9x median"));
        } else {
            assert_non_null(strstr(t, k == 1 ? "latency p50 (half round trip), rail 0: median "
                                               "10 us of 120 pairs\n"
                                             : "latency p99 (half round trip), rail 0: median "
                                               "20 us of 120 pairs\n"));
            assert_non_null(strstr(t, "# <=1.11x median"));
        }
        free(t);
    }
    /* A milder fault: the shades in between (0.8x '+', 0.6x '-'). */
    for (int i = 0; i < s.npairs; i++)
        if (s.pairs[i].a == 5 || s.pairs[i].b == 5) {
            s.pairs[i].bw_ab_gbps.v = 80;
            s.pairs[i].bw_ba_gbps.v = 60;
        }
    char *t = capture_heatmap(&s, TEXT_SWEEP_BW, 80);
    assert_int_equal(cell(t, 0, 5), '+'); /* bw_ab of (0, 5): 0 sends to 5 */
    assert_int_equal(cell(t, 5, 0), '-');
    assert_int_equal(cell(t, 5, 6), '+'); /* (5, 6): 5 sends at bw_ab */
    assert_int_equal(cell(t, 6, 5), '-');
    free(t);
    /* A rack below 1 Gb/s is told in Mb/s. */
    for (int i = 0; i < s.npairs; i++) {
        s.pairs[i].bw_ab_gbps.v = 0.0941;
        s.pairs[i].bw_ba_gbps.v = 0.0941;
    }
    t = capture_heatmap(&s, TEXT_SWEEP_BW, 80);
    assert_non_null(strstr(t, "median 94.1 Mb/s of 240 figures"));
    free(t);
    results_sweep_free(&s);
}

static void test_40_ranks_per_rank(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 40, 7, 100, 10, 0.3);
    pair(&s, 2, 9)->failed.v = true;
    char *t = capture_heatmap(&s, TEXT_SWEEP_BW, 80);
    all_within(t, 80);
    assert_null(strstr(t, "a \\ b"));
    assert_non_null(strstr(t, "40 ranks do not fit a matrix in 80 columns"));
    assert_int_equal(count_lines(t), 2 + 2 + 40);
    assert_string_equal(line_of(t, "   7 rk-h7 "), "   7 rk-h7           39 pairs, median 0.30x, "
                                                   "worst 0 rk-h0 0.30x (30.0 Gb/s)");
    assert_string_equal(line_of(t, "   3 rk-h3 "), "   3 rk-h3           39 pairs, median 1.00x, "
                                                   "worst 7 rk-h7 0.30x (30.0 Gb/s)");
    assert_string_equal(line_of(t, "   9 rk-h9 "), "   9 rk-h9           39 pairs, 1 failed, "
                                                   "median 1.00x, worst 7 rk-h7 0.30x");
    free(t);
    /* At 120 columns the 40 ranks fit a matrix. */
    t = capture_heatmap(&s, TEXT_SWEEP_LAT_P50, 120);
    assert_non_null(strstr(t, "a \\ b"));
    assert_int_equal(cell(t, 7, 30), '.');
    assert_int_equal(cell(t, 30, 7), '.');
    assert_int_equal(cell(t, 2, 9), 'X');
    assert_int_equal(cell(t, 30, 31), '#');
    free(t);
    results_sweep_free(&s);
}

static void test_failed_and_missing(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 4, -1, 100, 10, 1);
    pair(&s, 1, 3)->failed.v = true;
    pair(&s, 0, 2)->bw_ab_gbps.st = RESULTS_NULL;
    pair(&s, 0, 2)->lat_p50_us.st = RESULTS_ABSENT;
    char *t = capture_heatmap(&s, TEXT_SWEEP_BW, 80);
    assert_int_equal(cell(t, 1, 3), 'X');
    assert_int_equal(cell(t, 3, 1), 'X');
    assert_int_equal(cell(t, 0, 2), '?');
    assert_int_equal(cell(t, 2, 0), '#');
    assert_int_equal(cell(t, 2, 2), '\\');
    assert_non_null(strstr(t, "median 100.0 Gb/s of 9 figures"));
    free(t);
    t = capture_heatmap(&s, TEXT_SWEEP_LAT_P50, 80);
    assert_int_equal(cell(t, 0, 2), '?');
    assert_int_equal(cell(t, 2, 0), '?');
    assert_int_equal(cell(t, 3, 1), 'X');
    assert_non_null(strstr(t, "median 10 us of 4 pairs"));
    free(t);
    /* Nothing measured: the matrix of failures and unknowns, no median. */
    for (int i = 0; i < s.npairs; i++)
        s.pairs[i].failed.v = true;
    t = capture_heatmap(&s, TEXT_SWEEP_BW, 80);
    assert_non_null(strstr(t, "bandwidth a->b, rail 0: no pair measured (4 ranks)\n"));
    assert_int_equal(cell(t, 0, 1), 'X');
    free(t);
    results_sweep_free(&s);
    struct results_sweep none = {0};
    t = capture_heatmap(&none, TEXT_SWEEP_BW, 80);
    assert_string_equal(t, "bandwidth a->b, rail 0: no ranks\n");
    free(t);
}

/* Two rails: each heat map holds its own rail's pairs; every rail (-1) shows a cell's worst;
 * the report draws both rails of both metrics. */
static void test_rails(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 4, -1, 100, 10, 1);
    int n = s.npairs;
    s.pairs = realloc(s.pairs, 2 * (size_t)n * sizeof(*s.pairs));
    for (int i = 0; i < n; i++) {
        struct results_sweep_pair *p = &s.pairs[n + i];
        *p = s.pairs[i];
        p->rail = 1;
        p->latency_kind.s = strdup(s.pairs[i].latency_kind.s);
        if (p->a == 0 && p->b == 1)
            p->bw_ab_gbps.v = 10; /* rank 0 sends slowly to 1 on rail 1 */
    }
    s.npairs = 2 * n;
    char *t = capture_heatmap(&s, TEXT_SWEEP_BW, 80);
    assert_int_equal(cell(t, 0, 1), '#');
    free(t);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_sweep_heatmap(f, &s, TEXT_SWEEP_BW, 1, NULL, 80);
    fclose(f);
    assert_non_null(strstr(buf, "bandwidth a->b (row a to column b), rail 1: median 100.0 Gb/s of "
                                "12 figures\n"));
    assert_int_equal(cell(buf, 0, 1), '.');
    assert_int_equal(cell(buf, 1, 0), '#');
    free(buf);
    f = open_memstream(&buf, &len);
    text_sweep_heatmap(f, &s, TEXT_SWEEP_BW, -1, NULL, 80);
    fclose(f);
    assert_non_null(strstr(buf, "every rail (a cell's worst)"));
    assert_int_equal(cell(buf, 0, 1), '.');
    free(buf);
    f = open_memstream(&buf, &len);
    text_sweep_report(f, &s, 80);
    fclose(f);
    const char *b0 = strstr(buf, "bandwidth a->b (row a to column b), rail 0:"),
               *b1 = strstr(buf, "bandwidth a->b (row a to column b), rail 1:"),
               *l0 = strstr(buf, "latency p50 (half round trip), rail 0:"),
               *l1 = strstr(buf, "latency p50 (half round trip), rail 1:");
    assert_true(b0 && b1 && l0 && l1);
    assert_true(b0 < b1 && b1 < l0 && l0 < l1);
    free(buf);
    char line[512];
    text_sweep_summary(&s, line, sizeof(line));
    assert_string_equal(line, "fabtop sweep 4 ranks: 12/12 pairs measured, bandwidth median "
                              "100.0 Gb/s, latency p50 median 10 us; nothing named; status ok");
    results_sweep_free(&s);
}

static void test_summary_line(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 8, 3, 0.0941, 61, 0.27);
    for (int i = 0; i < s.npairs; i++)
        s.pairs[i].lat_p50_us.v = 61;
    struct results_sweep_verdict *v = add_verdict(&s);
    v->kind = strdup("rank");
    v->metric = strdup("bandwidth");
    v->state = strdup("named");
    num(&v->rank, 3);
    v->message = strdup("rk-h3 eth0 0.27x the rack's median bandwidth (25.4 Mb/s against 94.1 "
                        "Mb/s, 7 of 7 pairs slow)");
    char line[512];
    text_sweep_summary(&s, line, sizeof(line));
    assert_string_equal(line, "fabtop sweep 8 ranks: 28/28 pairs measured, bandwidth median "
                              "94.1 Mb/s, latency p50 median 61 us; 1 named: rk-h3 eth0 0.27x "
                              "the rack's median bandwidth; status ok");
    /* A short buffer is cut, never overrun. */
    char small[12];
    memset(small, 'z', sizeof(small));
    text_sweep_summary(&s, small, 10);
    assert_string_equal(small, "fabtop sw");
    assert_int_equal(small[10], 'z');
    results_sweep_free(&s);

    rack(&s, 4, -1, 100, 10, 1);
    pair(&s, 1, 3)->failed.v = true;
    results_str_set(&s.ranks[3].status, "failed");
    results_str_set(&s.status, "failed");
    v = add_verdict(&s);
    v->state = strdup("suspect");
    text_sweep_summary(&s, line, sizeof(line));
    assert_string_equal(line, "fabtop sweep 4 ranks: 5/6 pairs measured, 1 failed, 1 rank failed, "
                              "bandwidth median 100.0 Gb/s, latency p50 median 10 us; 1 suspect; "
                              "status failed");
    results_sweep_free(&s);

    struct results_sweep none = {0};
    text_sweep_summary(&none, line, sizeof(line));
    assert_string_equal(line, "fabtop sweep 0 ranks: 0/0 pairs measured, bandwidth n/a, latency "
                              "p50 n/a; nothing named; status n/a");
}

/* A second matrix over verbs beside TCP's: each map shows only its own transport's pairs
 * (the degraded rank is slow over verbs only), the report draws both, and the summary counts
 * TCP's pairs and names the verbs matrix after them. */
static void test_transports(void **state)
{
    (void)state;
    struct results_sweep s, v;
    rack(&s, 4, -1, 100, 10, 1);
    rack(&v, 4, 2, 100, 5, 0.25);
    s.pairs = realloc(s.pairs, (size_t)(s.npairs + v.npairs) * sizeof(*s.pairs));
    for (int i = 0; i < v.npairs; i++) {
        s.pairs[s.npairs] = v.pairs[i];
        str(&s.pairs[s.npairs++].transport, "verbs");
    }
    v.npairs = 0;
    results_sweep_free(&v);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_sweep_heatmap(f, &s, TEXT_SWEEP_BW, 0, "tcp", 80);
    fclose(f);
    assert_non_null(line_of(buf, "bandwidth a->b (row a to column b), rail 0: median 100.0 Gb/s"));
    assert_int_equal(cell(buf, 2, 0), '#');
    free(buf);
    f = open_memstream(&buf, &len);
    text_sweep_heatmap(f, &s, TEXT_SWEEP_BW, 0, "verbs", 80);
    fclose(f);
    assert_non_null(line_of(buf, "verbs bandwidth a->b (row a to column b), rail 0:"));
    assert_int_equal(cell(buf, 2, 0), '.'); /* 0.25x */
    assert_int_equal(cell(buf, 1, 0), '#');
    free(buf);
    f = open_memstream(&buf, &len);
    text_sweep_report(f, &s, 80);
    fclose(f);
    assert_non_null(line_of(buf, "verbs latency p50"));
    assert_null(line_of(buf, "nccl "));
    free(buf);
    char line[512];
    text_sweep_summary(&s, line, sizeof(line));
    assert_string_equal(line, "fabtop sweep 4 ranks: 6/6 pairs measured, bandwidth median 100.0 "
                              "Gb/s, latency p50 median 10 us; verbs 6 pairs, bandwidth median "
                              "62.5 Gb/s; nothing named; status ok"); /* 3 of 6 at 0.25x */
    results_sweep_free(&s);
}

/* The shares section: per round the streams, the median share and the lowest three, in
 * order, with their goodput. */
static void test_shares(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 6, -1, 100, 10, 1);
    const double v[5] = {0.9, 0.4, 1.1, 0.7, 1.0};
    s.shares = calloc(5, sizeof(*s.shares));
    s.nshares = 5;
    for (int i = 0; i < 5; i++) {
        s.shares[i].pattern = strdup("incast");
        s.shares[i].round = 2;
        s.shares[i].src = i + 1;
        s.shares[i].dst = 0;
        num(&s.shares[i].gbps, 0.1 * v[i]);
        num(&s.shares[i].fair_gbps, 0.1);
        num(&s.shares[i].share, v[i]);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_sweep_report(f, &s, 80);
    fclose(f);
    const char *l = line_of(buf, "  incast round 3:");
    assert_non_null(l);
    assert_string_equal(l, "  incast round 3: 5 streams, median 0.90x; lowest rk-h2->rk-h0 0.40x "
                           "(40.0 Mb/s), rk-h4->rk-h0 0.70x (70.0 Mb/s), rk-h1->rk-h0 0.90x "
                           "(90.0 Mb/s)");
    free(buf);
    results_sweep_free(&s);
}

static char *capture_verdicts(const struct results_sweep *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_sweep_verdicts(f, s);
    fclose(f);
    return buf;
}

static void test_verdict_lines(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 4, 3, 100, 10, 0.27);
    char *t = capture_verdicts(&s);
    assert_string_equal(t, "no verdicts: every pair within the rack's distribution\n");
    free(t);
    struct results_sweep_verdict *v = add_verdict(&s);
    v->kind = strdup("rank");
    v->metric = strdup("bandwidth");
    v->state = strdup("named");
    num(&v->rank, 3);
    num(&v->rail, 0);
    v->message = strdup("rk-h3 eth0 0.27x the rack's median bandwidth");
    v = add_verdict(&s);
    v->kind = strdup("uplink");
    v->metric = strdup("bandwidth");
    v->state = strdup("suspect");
    str(&v->group_a, "leaf0");
    str(&v->group_b, "leaf1");
    num(&v->observed.value, 40.5);
    str(&v->observed.unit, "Gb/s");
    num(&v->reference.value, 94);
    str(&v->reference.unit, "Gb/s");
    num(&v->ratio.value, 0.43);
    str(&v->ratio.unit, "x");
    v = add_verdict(&s);
    v->kind = strdup("pair_failed");
    v->metric = strdup("latency p50");
    v->state = strdup("cleared");
    num(&v->rank, 1);
    num(&v->peer, 2);
    v->message = strdup("rk-h1 -> rk-h2 passed the second pass");
    t = capture_verdicts(&s);
    assert_string_equal(
        t, "NAMED   rk-h3 [rank bandwidth, rail 0]: rk-h3 eth0 0.27x the rack's median bandwidth\n"
           "SUSPECT leaf0 <-> leaf1 [uplink bandwidth]: observed 40.5 Gb/s against 94 Gb/s "
           "(0.43x)\n"
           "CLEARED rk-h1 -> rk-h2 [pair_failed latency p50]: rk-h1 -> rk-h2 passed the second "
           "pass\n");
    free(t);
    results_sweep_free(&s);
}

static void test_report(void **state)
{
    (void)state;
    struct results_sweep s;
    rack(&s, 16, 5, 100, 10, 0.3);
    str(&s.ranks[9].unlike, "eth0 at 25 Gb/s (the others 100 Gb/s)");
    results_str_set(&s.ranks[12].status, "failed");
    str(&s.ranks[12].error, "no answer on 10.9.0.13:41234 after 5 s");
    pair(&s, 12, 13)->failed.v = true;
    pair(&s, 2, 3)->failed.v = true;
    s.npatterns = 1;
    s.patterns = calloc(1, sizeof(char *));
    s.patterns[0] = strdup("pairs");
    num(&s.rounds_planned, 15);
    num(&s.rounds_done, 15);
    num(&s.duration_s, 42.5);
    num(&s.test_duration_s, 2);
    str(&s.started_at, "2026-12-01T22:10:02.600Z");
    struct results_sweep_verdict *v = add_verdict(&s);
    v->kind = strdup("rank");
    v->metric = strdup("bandwidth");
    v->state = strdup("named");
    num(&v->rank, 5);
    v->message = strdup("rk-h5 eth0 0.30x the rack's median bandwidth");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_sweep_report(f, &s, 80);
    fclose(f);
    all_within_but_last(buf, 80);
    static const char *const want[] = {
        "fabtop sweep: 16 ranks by mpirun, patterns pairs, status ok, rounds 15/15 done\n",
        "started 2026-12-01T22:10:02.600Z, took 42.5 s; each test 2.0 s\n",
        "\nunlike ranks (their pairs are flagged, not judged against the rest):\n"
        "     9 rk-h9: eth0 at 25 Gb/s (the others 100 Gb/s)\n",
        "\nbandwidth a->b (row a to column b), rail 0: median 100.0 Gb/s",
        "\nlatency p50 (half round trip), rail 0: median 10 us",
        "\nfailed ranks:\n    12 rk-h12: no answer on 10.9.0.13:41234 after 5 s\n",
        "failed pairs:\n  rk-h2 -> rk-h3, rail 0: no error recorded\n  (1 pair with a failed "
        "rank)\n",
        "\nverdicts:\nNAMED   rk-h5 [rank bandwidth]: rk-h5 eth0 0.30x the rack's median "
        "bandwidth\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(buf, want[i]))
            fail_msg("the report lacks \"%s\":\n%s", want[i], buf);
    assert_null(strstr(buf, "latency p99"));
    /* The heat maps come in order and the summary line is last. */
    assert_true(strstr(buf, "bandwidth a->b") < strstr(buf, "latency p50"));
    char line[512], last[600];
    text_sweep_summary(&s, line, sizeof(line));
    snprintf(last, sizeof(last), "\n\n%s\n", line);
    assert_true(strlen(buf) > strlen(last));
    assert_string_equal(buf + strlen(buf) - strlen(last), last);
    free(buf);
    results_sweep_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_16_ranks_fit),
        cmocka_unit_test(test_40_ranks_per_rank),
        cmocka_unit_test(test_failed_and_missing),
        cmocka_unit_test(test_rails),
        cmocka_unit_test(test_summary_line),
        cmocka_unit_test(test_transports),
        cmocka_unit_test(test_verdict_lines),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
