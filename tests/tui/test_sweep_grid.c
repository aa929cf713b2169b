/* test_sweep_grid: the sweep view's arithmetic (tui/sweep_grid.h) on the 8-rank document of
 * the end-to-end test (data/sweep-8.json: rk-h5 at a quarter of the rack's bandwidth, the
 * pair 1-3 failed, a rank verdict, a failed-pair verdict, an uplink one): cells, medians and
 * shades, rank summaries, the cursor and verdict jumps, what fits, the header and loading. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/xalloc.h"
#include "tui/sweep_grid.h"

static char doc_path[1024];

static void load8(struct results_sweep *s)
{
    struct ft_err err = {0};
    int rc = sweep_grid_load(doc_path, s, &err);
    if (rc < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(s->nranks, 8);
}

static void test_cells_and_shades(void **state)
{
    (void)state;
    struct results_sweep s;
    load8(&s);
    struct sweep_grid g;
    sweep_grid_build(&g, &s, SWEEP_GRID_BW, NULL);
    assert_true(g.have_med);
    assert_true(g.med > 93 && g.med < 95);
    double v;
    assert_int_equal(sweep_grid_cell(&g, 0, 1, &v), SWEEP_GRID_CELL_VAL);
    assert_true(v > 93 && v < 95);
    /* bw_ba fills [b][a]. */
    assert_int_equal(sweep_grid_cell(&g, 1, 0, &v), SWEEP_GRID_CELL_VAL);
    assert_true(v > 93 && v < 95);
    assert_int_equal(sweep_grid_shade(&g, 0, 1), SWEEP_GRID_SH_GOOD);
    assert_int_equal(sweep_grid_shade(&g, 0, 5), SWEEP_GRID_SH_BAD);
    assert_int_equal(sweep_grid_shade(&g, 5, 0), SWEEP_GRID_SH_BAD);
    assert_int_equal(sweep_grid_shade(&g, 1, 3), SWEEP_GRID_SH_FAILED);
    assert_int_equal(sweep_grid_shade(&g, 3, 1), SWEEP_GRID_SH_FAILED);
    assert_int_equal(sweep_grid_shade(&g, 2, 2), SWEEP_GRID_SH_DIAG);
    assert_int_equal(sweep_grid_cell(&g, 8, 0, NULL), SWEEP_GRID_CELL_NONE);
    double q;
    assert_true(sweep_grid_ratio(&g, 5, 0, &q));
    assert_true(q > 0.24 && q < 0.26);
    assert_false(sweep_grid_ratio(&g, 1, 3, &q));
    assert_int_equal(sweep_grid_shade_char(SWEEP_GRID_SH_GOOD), '#');
    assert_int_equal(sweep_grid_shade_char(SWEEP_GRID_SH_BAD), '.');
    assert_int_equal(sweep_grid_shade_char(SWEEP_GRID_SH_FAILED), 'X');
    assert_int_equal(sweep_grid_shade_char(SWEEP_GRID_SH_MISSING), '?');
    assert_int_equal(sweep_grid_shade_char(SWEEP_GRID_SH_DIAG), ' ');
    sweep_grid_free(&g);
    /* Latency: higher is worse, both cells of a pair hold its figure. */
    sweep_grid_build(&g, &s, SWEEP_GRID_LAT_P50, NULL);
    assert_true(g.med > 60 && g.med < 66);
    assert_int_equal(sweep_grid_cell(&g, 5, 2, &v), SWEEP_GRID_CELL_VAL);
    double w;
    assert_int_equal(sweep_grid_cell(&g, 2, 5, &w), SWEEP_GRID_CELL_VAL);
    assert_true(v == w);
    assert_int_equal(sweep_grid_shade(&g, 2, 5), SWEEP_GRID_SH_POOR);
    assert_int_equal(sweep_grid_shade(&g, 2, 4), SWEEP_GRID_SH_GOOD);
    sweep_grid_free(&g);
    results_sweep_free(&s);
}

/* One matrix per transport: the same document's pairs marked NCCL leave TCP's matrix and
 * make the NCCL one, with its own median. */
static void test_transport_filter(void **state)
{
    (void)state;
    struct results_sweep s;
    load8(&s);
    for (int i = 0; i < s.npairs; i++)
        if (s.pairs[i].a == 0 || s.pairs[i].b == 0) {
            results_str_set(&s.pairs[i].transport, "nccl");
            s.pairs[i].bw_ab_gbps.v = s.pairs[i].bw_ba_gbps.v = 400;
        }
    struct sweep_grid g;
    sweep_grid_build(&g, &s, SWEEP_GRID_BW, "tcp");
    assert_int_equal(sweep_grid_cell(&g, 0, 1, NULL), SWEEP_GRID_CELL_NONE);
    assert_int_equal(sweep_grid_cell(&g, 1, 2, NULL), SWEEP_GRID_CELL_VAL);
    assert_true(g.med > 93 && g.med < 95);
    sweep_grid_free(&g);
    sweep_grid_build(&g, &s, SWEEP_GRID_BW, "nccl");
    double v;
    assert_int_equal(sweep_grid_cell(&g, 0, 1, &v), SWEEP_GRID_CELL_VAL);
    assert_true(v == 400);
    assert_int_equal(sweep_grid_cell(&g, 1, 2, NULL), SWEEP_GRID_CELL_NONE);
    assert_true(g.have_med && g.med == 400);
    sweep_grid_free(&g);
    results_sweep_free(&s);
}

static void test_thresholds(void **state)
{
    (void)state;
    assert_int_equal(sweep_grid_shade_of(1.2), SWEEP_GRID_SH_GOOD);
    assert_int_equal(sweep_grid_shade_of(0.9), SWEEP_GRID_SH_GOOD);
    assert_int_equal(sweep_grid_shade_of(0.89), SWEEP_GRID_SH_FAIR);
    assert_int_equal(sweep_grid_shade_of(0.75), SWEEP_GRID_SH_FAIR);
    assert_int_equal(sweep_grid_shade_of(0.6), SWEEP_GRID_SH_POOR);
    assert_int_equal(sweep_grid_shade_of(0.5), SWEEP_GRID_SH_POOR);
    assert_int_equal(sweep_grid_shade_of(0.49), SWEEP_GRID_SH_BAD);
    assert_int_equal(sweep_grid_shade_of(0), SWEEP_GRID_SH_BAD);
    assert_int_equal(sweep_grid_metric_of("latency p99"), SWEEP_GRID_LAT_P99);
    assert_int_equal(sweep_grid_metric_of("latency p50"), SWEEP_GRID_LAT_P50);
    assert_int_equal(sweep_grid_metric_of(NULL), SWEEP_GRID_BW);
    assert_string_equal(sweep_grid_metric_name(SWEEP_GRID_LAT_P99), "latency p99");
}

static void test_units(void **state)
{
    (void)state;
    char b[32];
    sweep_grid_fmt_gbps(b, sizeof(b), 94.12);
    assert_string_equal(b, "94.1 Gb/s");
    sweep_grid_fmt_gbps(b, sizeof(b), 0.5);
    assert_string_equal(b, "500.0 Mb/s");
    sweep_grid_fmt_us(b, sizeof(b), 61);
    assert_string_equal(b, "61.0 us");
    sweep_grid_fmt_us(b, sizeof(b), 410.2);
    assert_string_equal(b, "410 us");
    sweep_grid_fmt_value(b, sizeof(b), SWEEP_GRID_BW, 23.5);
    assert_string_equal(b, "23.5 Gb/s");
}

static void test_rank_summary(void **state)
{
    (void)state;
    struct results_sweep s;
    load8(&s);
    struct sweep_grid g;
    sweep_grid_build(&g, &s, SWEEP_GRID_BW, NULL);
    struct sweep_grid_rank_sum r;
    sweep_grid_rank(&g, 5, &r);
    assert_int_equal(r.npeers, 7);
    assert_int_equal(r.nfailed, 0);
    assert_true(r.have_median);
    assert_true(r.median > 23 && r.median < 24);
    assert_true(r.worst >= 0 && r.worst != 5);
    assert_true(r.worst_q < 0.3);
    sweep_grid_rank(&g, 1, &r);
    assert_int_equal(r.npeers, 7);
    assert_int_equal(r.nfailed, 1);
    /* Rank 1's worst peer is the degraded rank 5. */
    assert_int_equal(r.worst, 5);
    sweep_grid_rank(&g, 9, &r);
    assert_int_equal(r.worst, -1);
    assert_int_equal(r.npeers, 0);
    sweep_grid_free(&g);
    results_sweep_free(&s);
}

static void test_cursor_and_jumps(void **state)
{
    (void)state;
    struct sweep_grid_cursor c = {0, -1};
    sweep_grid_cursor_move(&c, 8, 0, -1);
    assert_int_equal(c.col, -1);
    sweep_grid_cursor_move(&c, 8, 0, 2);
    assert_int_equal(c.col, 1);
    sweep_grid_cursor_move(&c, 8, 100000, 100000);
    assert_int_equal(c.row, 7);
    assert_int_equal(c.col, 7);
    sweep_grid_cursor_move(&c, 8, -100000, -100000);
    assert_int_equal(c.row, 0);
    assert_int_equal(c.col, -1);
    c.row = 7;
    c.col = 7;
    sweep_grid_cursor_clamp(&c, 4);
    assert_int_equal(c.row, 3);
    assert_int_equal(c.col, 3);
    sweep_grid_cursor_clamp(&c, 0);
    assert_int_equal(c.row, 0);
    assert_int_equal(c.col, -1);

    struct results_sweep s;
    load8(&s);
    struct sweep_grid g;
    sweep_grid_build(&g, &s, SWEEP_GRID_BW, NULL);
    struct sweep_grid_rank_sum r;
    sweep_grid_rank(&g, 5, &r);
    /* The rank verdict: its row, its worst peer's column. */
    assert_true(sweep_grid_verdict_target(&s, 0, &c));
    assert_int_equal(c.row, 5);
    assert_int_equal(c.col, r.worst);
    /* The failed pair: [rank][peer]. */
    assert_true(sweep_grid_verdict_target(&s, 1, &c));
    assert_int_equal(c.row, 1);
    assert_int_equal(c.col, 3);
    /* The uplink verdict names no rank. */
    assert_false(sweep_grid_verdict_target(&s, 2, &c));
    assert_false(sweep_grid_verdict_target(&s, 3, &c));
    sweep_grid_free(&g);
    results_sweep_free(&s);
}

static void test_fit(void **state)
{
    (void)state;
    struct results_sweep s;
    load8(&s);
    struct sweep_grid_cursor c = {0, -1};
    struct sweep_grid_layout f = {0};
    /* 80x24: the matrix pane's 42 columns hold all 8. */
    sweep_grid_fit(&s, 42, 10, &c, &f);
    assert_false(f.summary);
    assert_int_equal(f.host_w, 5);
    assert_int_equal(f.label_w, 10);
    assert_int_equal(f.cell_w, 3);
    assert_int_equal(f.ncols, 8);
    assert_int_equal(f.nrows, 8);
    assert_int_equal(f.row0, 0);
    assert_int_equal(f.col0, 0);
    /* Narrow and short: it scrolls the least to keep the cursor in sight. */
    c.row = 6;
    c.col = 6;
    sweep_grid_fit(&s, 20, 4, &c, &f);
    assert_int_equal(f.ncols, 3);
    assert_int_equal(f.nrows, 4);
    assert_int_equal(f.col0, 4);
    assert_int_equal(f.row0, 3);
    c.row = 4;
    c.col = 5;
    sweep_grid_fit(&s, 20, 4, &c, &f);
    assert_int_equal(f.col0, 4);
    assert_int_equal(f.row0, 3);
    c.row = 0;
    c.col = -1;
    sweep_grid_fit(&s, 20, 4, &c, &f);
    assert_int_equal(f.row0, 0);
    assert_int_equal(f.col0, 4); /* the row header: columns stay */
    /* Not one cell fits: one line per rank. */
    sweep_grid_fit(&s, 11, 4, &c, &f);
    assert_true(f.summary);
    results_sweep_free(&s);

    /* Above SWEEP_GRID_SUMMARY_OVER ranks, one line per rank however wide. */
    struct results_sweep big;
    memset(&big, 0, sizeof(big));
    big.nranks = SWEEP_GRID_SUMMARY_OVER + 1;
    big.ranks = xalloc_zero((size_t)big.nranks, sizeof(*big.ranks));
    for (int i = 0; i < big.nranks; i++)
        big.ranks[i].rank = i;
    struct sweep_grid_layout fb = {0};
    c.row = 30;
    sweep_grid_fit(&big, 400, 20, &c, &fb);
    assert_true(fb.summary);
    assert_int_equal(fb.nrows, 20);
    assert_int_equal(fb.row0, 11);
    big.nranks = SWEEP_GRID_SUMMARY_OVER;
    fb = (struct sweep_grid_layout){0};
    sweep_grid_fit(&big, 400, 20, &c, &fb);
    assert_false(fb.summary);
    assert_int_equal(fb.ncols, SWEEP_GRID_SUMMARY_OVER);
    free(big.ranks);
}

static void test_header(void **state)
{
    (void)state;
    struct results_sweep s;
    load8(&s);
    char l1[160], l2[160];
    sweep_grid_header(&s, l1, sizeof(l1), l2, sizeof(l2));
    assert_string_equal(l1, "8 ranks  pairs  failed  round 7 of 7");
    assert_string_equal(l2, "42 s elapsed");
    double left;
    assert_false(sweep_grid_running(&s));
    assert_false(sweep_grid_time_left(&s, &left));
    /* Three rounds of seven done in 18 s: 24 s left. */
    s.rounds_done.v = 3;
    s.duration_s.v = 18;
    s.ended_at.st = RESULTS_NULL;
    free(s.status.s);
    s.status.s = xalloc_strdup("running");
    assert_true(sweep_grid_running(&s));
    assert_true(sweep_grid_time_left(&s, &left));
    assert_true(left > 23.99 && left < 24.01);
    sweep_grid_header(&s, l1, sizeof(l1), l2, sizeof(l2));
    assert_string_equal(l1, "8 ranks  pairs  running  round 3 of 7");
    assert_string_equal(l2, "18 s elapsed, about 24 s left");
    /* No status written yet: running while rounds are left and it has not ended. */
    free(s.status.s);
    s.status.s = NULL;
    s.status.st = RESULTS_ABSENT;
    s.duration_s.v = 150;
    assert_true(sweep_grid_running(&s));
    sweep_grid_header(&s, l1, sizeof(l1), l2, sizeof(l2));
    assert_string_equal(l2, "2 min 30 s elapsed, about 3 min 20 s left");
    s.rounds_done.v = 0;
    assert_false(sweep_grid_time_left(&s, &left));
    results_sweep_free(&s);
}

static void test_load_errors(void **state)
{
    (void)state;
    struct results_sweep s;
    struct ft_err err = {0};
    assert_true(sweep_grid_load("/nonexistent/sweep.json", &s, &err) < 0);
    assert_non_null(strstr(err.msg, "/nonexistent/sweep.json"));
    char path[] = "/tmp/test_sweep_grid.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char doc[] = "{\"format\": \"fabtop-results\", \"version\": 1}\n";
    assert_int_equal(write(fd, doc, sizeof(doc) - 1), (ssize_t)(sizeof(doc) - 1));
    close(fd);
    ft_err_clear(&err);
    assert_int_equal(sweep_grid_load(path, &s, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "not a fabtop sweep document"));
    unlink(path);
}

int main(void)
{
    const char *src = getenv("FABTOP_SRC");
    snprintf(doc_path, sizeof(doc_path), "%s/tests/tui/data/sweep-8.json", src ? src : ".");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cells_and_shades),
        cmocka_unit_test(test_transport_filter),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_rank_summary),
        cmocka_unit_test(test_cursor_and_jumps),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_load_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
