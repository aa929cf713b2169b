/* test_layout: layout_compute over every size from 80x24 to 300x100 (in steps of 7, plus the
 * edges) and every arrangement: header, tabs, body and status stack without overlap, panes
 * lie inside the body, tile it exactly, are never too small for a framed box, and anything
 * below 80x24 is "too small" with no panes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "tui/layout.h"

static const enum layout_kind kinds[] = {LAYOUT_SINGLE, LAYOUT_TOPO, LAYOUT_LIVE, LAYOUT_COMPARE};
static const char *const kind_names[] = {"single", "topo", "live", "compare"};

/* Sizes from lo to hi in steps of 7, always including hi. */
static int next_size(int v, int hi)
{
    return v == hi ? hi + 1 : v + 7 > hi ? hi : v + 7;
}

static void check_one(enum layout_kind k, int rows, int cols)
{
    struct layout l;
    const char *kn = kind_names[k];
    if (layout_compute(k, rows, cols, &l) != 0)
        fail_msg("%s %dx%d: refused", kn, cols, rows);
    assert_false(l.too_small);
    assert_int_equal(l.rows, rows);
    assert_int_equal(l.cols, cols);
    const struct rect screen = {0, 0, rows, cols};
    const struct rect *bars[] = {&l.header, &l.tabs, &l.body, &l.status};
    for (int i = 0; i < 4; i++) {
        if (!rect_inside(bars[i], &screen) || bars[i]->h < 1 || bars[i]->w != cols)
            fail_msg("%s %dx%d: bar %d is %d,%d %dx%d", kn, cols, rows, i, bars[i]->y, bars[i]->x,
                     bars[i]->w, bars[i]->h);
        for (int j = 0; j < i; j++)
            if (rect_overlaps(bars[i], bars[j]))
                fail_msg("%s %dx%d: bars %d and %d overlap", kn, cols, rows, i, j);
    }
    /* Header, tabs, body and status fill the screen from top to bottom. */
    assert_int_equal(l.header.h + l.tabs.h + l.body.h + l.status.h, rows);
    assert_int_equal(l.status.y, rows - 1);
    if (l.npanes < 1 || l.npanes > LAYOUT_MAX_PANES)
        fail_msg("%s %dx%d: %d panes", kn, cols, rows, l.npanes);
    long area = 0;
    for (int i = 0; i < l.npanes; i++) {
        const struct rect *p = &l.pane[i];
        /* A framed pane needs at least one line and a few columns inside its box. */
        if (p->h < 3 || p->w < 10)
            fail_msg("%s %dx%d: pane %d is only %dx%d", kn, cols, rows, i, p->w, p->h);
        if (!rect_inside(p, &l.body))
            fail_msg("%s %dx%d: pane %d (%d,%d %dx%d) is outside the body", kn, cols, rows, i, p->y,
                     p->x, p->w, p->h);
        for (int j = 0; j < i; j++)
            if (rect_overlaps(p, &l.pane[j]))
                fail_msg("%s %dx%d: panes %d and %d overlap", kn, cols, rows, i, j);
        area += (long)p->h * p->w;
    }
    /* No gaps: the panes cover the whole body. */
    if (area != (long)l.body.h * l.body.w)
        fail_msg("%s %dx%d: panes cover %ld of %ld cells", kn, cols, rows, area,
                 (long)l.body.h * l.body.w);
}

static void test_sizes(void **state)
{
    (void)state;
    int n = 0;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        for (int rows = LAYOUT_MIN_ROWS; rows <= 100; rows = next_size(rows, 100))
            for (int cols = LAYOUT_MIN_COLS; cols <= 300; cols = next_size(cols, 300)) {
                check_one(kinds[k], rows, cols);
                n++;
            }
    /* 4 kinds x 12 heights x 33 widths. */
    assert_int_equal(n, 4 * 12 * 33);
}

static void test_too_small(void **state)
{
    (void)state;
    static const int sizes[][2] = {{23, 80}, {24, 79}, {23, 79}, {20, 60},  {1, 1},
                                   {0, 0},   {24, 0},  {0, 80},  {10, 300}, {100, 40}};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            struct layout l;
            assert_int_equal(layout_compute(kinds[k], sizes[i][0], sizes[i][1], &l), -1);
            assert_true(l.too_small);
            assert_int_equal(l.npanes, 0);
        }
        /* Every size just below the minimum in one direction. */
        for (int cols = 1; cols < LAYOUT_MIN_COLS; cols += 3) {
            struct layout l;
            assert_int_equal(layout_compute(kinds[k], 40, cols, &l), -1);
        }
        for (int rows = 1; rows < LAYOUT_MIN_ROWS; rows++) {
            struct layout l;
            assert_int_equal(layout_compute(kinds[k], rows, 120, &l), -1);
        }
    }
}

/* The topology view at the sizes its screen tests use. */
static void test_topo_known(void **state)
{
    (void)state;
    struct layout l;
    assert_int_equal(layout_compute(LAYOUT_TOPO, 24, 80, &l), 0);
    assert_int_equal(l.npanes, 3);
    /* Tree 44 wide (its minimum), detail the rest, findings 5 rows at the bottom. */
    assert_int_equal(l.pane[0].w, 44);
    assert_int_equal(l.pane[1].x, 44);
    assert_int_equal(l.pane[1].w, 36);
    assert_int_equal(l.pane[2].h, 5);
    assert_int_equal(l.pane[2].y, 18);
    assert_int_equal(layout_compute(LAYOUT_TOPO, 43, 132, &l), 0);
    assert_int_equal(l.pane[0].w, 72);
    assert_int_equal(l.pane[2].h, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_too_small),
        cmocka_unit_test(test_topo_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
