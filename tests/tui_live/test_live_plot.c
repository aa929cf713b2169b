/* test_live_plot: the live view's pure helpers: the log latency axis (decades, columns,
 * ticks and labels that never overlap), histogram binning into columns (overflow in the
 * last one), linear and log bar heights, timeline resampling, number formatting. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tui/live_plot.h"

static void axis_fit(void **state)
{
    (void)state;
    struct live_axis ax;
    /* 8-30 us: 1 us to 100 us, two decades. */
    live_axis_fit(&ax, 8000, 30000, 40);
    assert_int_equal(ax.lo_exp, 3);
    assert_int_equal(ax.ndec, 2);
    assert_int_equal(ax.width, 40);
    /* A ping-pong from 6.58 us to 1.36 ms: 1 us to 10 ms. */
    live_axis_fit(&ax, 6580, 1364470, 42);
    assert_int_equal(ax.lo_exp, 3);
    assert_int_equal(ax.ndec, 4);
    /* A maximum of exactly 10^5 ns needs the decade above it. */
    live_axis_fit(&ax, 2000, 100000, 40);
    assert_int_equal(ax.lo_exp + ax.ndec, 6);
    /* Narrow: at most one decade per 4 columns, the top kept. */
    live_axis_fit(&ax, 10, 1e9, 8);
    assert_int_equal(ax.ndec, 2);
    assert_int_equal(ax.lo_exp, 8);
    /* Empty or nonsense input: 1 ns and two decades. */
    live_axis_fit(&ax, NAN, NAN, 20);
    assert_int_equal(ax.lo_exp, 0);
    assert_int_equal(ax.ndec, 2);
    live_axis_fit(&ax, 0, 0, 0);
    assert_int_equal(ax.width, 1);
}

static void axis_columns(void **state)
{
    (void)state;
    struct live_axis ax = {.width = 40, .lo_exp = 3, .ndec = 2};
    assert_int_equal(live_axis_col(&ax, 1000), 0);
    assert_int_equal(live_axis_col(&ax, 10000), 20);
    assert_int_equal(live_axis_col(&ax, 99999), 39);
    assert_int_equal(live_axis_col(&ax, 1e6), 39);
    assert_int_equal(live_axis_col(&ax, 500), 0);
    assert_int_equal(live_axis_col(&ax, 0), 0);
    assert_int_equal(live_axis_col(&ax, NAN), 0);
    assert_int_equal(live_axis_col(&ax, 3000), 9);
    /* Columns are equal ratios: the low edge of each maps back to itself. */
    for (int c = 0; c < 40; c++)
        assert_int_equal(live_axis_col(&ax, live_axis_col_low(&ax, c) * 1.0001), c);
    assert_true(fabs(live_axis_col_low(&ax, 20) - 10000) < 1e-6);
}

static void decade_labels(void **state)
{
    (void)state;
    char b[16];
    static const struct {
        int e;
        const char *s;
    } want[] = {{0, "1ns"}, {2, "100ns"}, {3, "1us"}, {4, "10us"}, {5, "100us"},
                {6, "1ms"}, {8, "100ms"}, {9, "1s"},  {10, "10s"}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        live_decade_label(want[i].e, b, sizeof(b));
        assert_string_equal(b, want[i].s);
    }
}

static void ticks(void **state)
{
    (void)state;
    struct live_axis ax = {.width = 40, .lo_exp = 3, .ndec = 2};
    struct live_tick t[8];
    assert_int_equal(live_axis_ticks(&ax, t, 8), 3);
    assert_int_equal(t[0].col, 0);
    assert_int_equal(t[1].col, 20);
    assert_int_equal(t[2].col, 39);
    assert_string_equal(t[0].label, "1us");
    assert_int_equal(t[0].label_x, 0);
    assert_string_equal(t[1].label, "10us");
    assert_int_equal(t[1].label_x, 20);
    assert_string_equal(t[2].label, "100us");
    assert_int_equal(t[2].label_x, 35); /* ends at the right edge */
    /* Crowded: a label that would touch the previous one is dropped, its tick kept. */
    struct live_axis nar = {.width = 10, .lo_exp = 3, .ndec = 2};
    assert_int_equal(live_axis_ticks(&nar, t, 8), 3);
    assert_int_equal(t[0].label_x, 0);
    assert_int_equal(t[1].label_x, 5);
    assert_int_equal(t[2].label_x, -1);
    assert_int_equal(t[2].col, 9);
    /* Every kept label lies inside the axis and apart from its neighbours. */
    for (int w = 8; w <= 200; w++)
        for (int nd = 1; nd <= w / 4 && nd <= 8; nd++) {
            struct live_axis a = {.width = w, .lo_exp = 1, .ndec = nd};
            struct live_tick tk[16];
            int n = live_axis_ticks(&a, tk, 16);
            assert_int_equal(n, nd + 1);
            int prev_end = -2;
            for (int i = 0; i < n; i++) {
                assert_true(tk[i].col >= 0 && tk[i].col < w);
                if (tk[i].label_x < 0)
                    continue;
                assert_true(tk[i].label_x > prev_end + 1);
                prev_end = tk[i].label_x + (int)strlen(tk[i].label) - 1;
                assert_true(prev_end < w);
            }
        }
    /* max limits the count. */
    assert_int_equal(live_axis_ticks(&ax, t, 2), 2);
}

static void binning(void **state)
{
    (void)state;
    static struct hist h;
    hist_init(&h);
    for (int i = 0; i < 10; i++)
        hist_record(&h, 3000); /* column 9 */
    for (int i = 0; i < 4; i++)
        hist_record(&h, 60000);          /* column 35 */
    hist_record(&h, 200);                /* below the axis: column 0 */
    hist_record(&h, HIST_RANGE_END + 5); /* overflow: the last column */
    struct live_axis ax = {.width = 40, .lo_exp = 3, .ndec = 2};
    uint64_t cols[40];
    uint64_t top = live_bin(&h, &ax, cols);
    assert_int_equal(top, 10);
    assert_int_equal(cols[9], 10);
    assert_int_equal(cols[35], 4);
    assert_int_equal(cols[0], 1);
    assert_int_equal(cols[39], 1);
    uint64_t sum = 0;
    for (int c = 0; c < 40; c++)
        sum += cols[c];
    assert_int_equal(sum, 16);
    /* An empty histogram: all zero. */
    hist_init(&h);
    assert_int_equal(live_bin(&h, &ax, cols), 0);
    for (int c = 0; c < 40; c++)
        assert_int_equal(cols[c], 0);
}

static void bar_heights(void **state)
{
    (void)state;
    assert_true(live_bar_frac(0, 100, true) == 0);
    assert_true(live_bar_frac(0, 100, false) == 0);
    assert_true(live_bar_frac(100, 100, true) == 1);
    assert_true(live_bar_frac(100, 100, false) == 1);
    assert_true(fabs(live_bar_frac(50, 100, false) - 0.5) < 1e-12);
    assert_true(fabs(live_bar_frac(9, 99, true) - 0.5) < 1e-12);
    assert_true(live_bar_frac(5, 0, true) == 0);
    /* Log makes a single tail sample visible where linear does not. */
    assert_true(live_bar_frac(1, 100000, true) > 0.05);
    assert_true(live_bar_frac(1, 100000, false) < 0.0001);
}

static void resample(void **state)
{
    (void)state;
    float v[10], out[10];
    for (int i = 0; i < 10; i++)
        v[i] = (float)i;
    int per;
    assert_int_equal(live_resample(v, 10, 4, out, &per), 4);
    assert_int_equal(per, 3);
    assert_true(out[0] == 1.0f && out[1] == 4.0f && out[2] == 7.0f && out[3] == 9.0f);
    assert_int_equal(live_resample(v, 3, 5, out, &per), 3);
    assert_int_equal(per, 1);
    assert_true(out[2] == 2.0f);
    assert_int_equal(live_resample(v, 0, 5, out, &per), 0);
    assert_int_equal(live_resample(v, 10, 10, out, &per), 10);
}

static void formats(void **state)
{
    (void)state;
    char b[32];
    live_fmt_us(b, sizeof(b), 26303.5);
    assert_string_equal(b, "26.3");
    live_fmt_us(b, sizeof(b), 250);
    assert_string_equal(b, "0.250");
    live_fmt_us(b, sizeof(b), 5000);
    assert_string_equal(b, "5.00");
    live_fmt_us(b, sizeof(b), 1364470);
    assert_string_equal(b, "1364");
    live_fmt_us(b, sizeof(b), NAN);
    assert_string_equal(b, "n/a");
    live_fmt_si(b, sizeof(b), 950);
    assert_string_equal(b, "950");
    live_fmt_si(b, sizeof(b), 12345);
    assert_string_equal(b, "12.3k");
    live_fmt_si(b, sizeof(b), 4.56e6);
    assert_string_equal(b, "4.56M");
    live_fmt_si(b, sizeof(b), 999.6);
    assert_string_equal(b, "1.00k");
    live_fmt_si(b, sizeof(b), 0);
    assert_string_equal(b, "0");
    live_fmt_si(b, sizeof(b), NAN);
    assert_string_equal(b, "n/a");
    live_fmt_bytes(b, sizeof(b), 64);
    assert_string_equal(b, "64B");
    live_fmt_bytes(b, sizeof(b), 4096);
    assert_string_equal(b, "4KiB");
    live_fmt_bytes(b, sizeof(b), 1536);
    assert_string_equal(b, "1.5KiB");
    live_fmt_bytes(b, sizeof(b), 1048576);
    assert_string_equal(b, "1MiB");
    live_fmt_bytes(b, sizeof(b), 0);
    assert_string_equal(b, "mixed");
    /* Queue depths: binary units in at most 7 columns. */
    static const struct {
        uint64_t b;
        const char *want;
    } q[] = {{0, "0B"},
             {1023, "1023B"},
             {1024, "1.0KiB"},
             {9728, "9.5KiB"},
             {10188, "9.9KiB"},
             {10189, "10KiB"},
             {65536, "64KiB"},
             {1047552, "1023KiB"},
             {1048064, "1.00MiB"},
             {1310720, "1.25MiB"},
             {33449574, "31.9MiB"},
             {104752988, "99.9MiB"},
             {536870912, "512MiB"},
             {1073741824, "1.0GiB"}};
    for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        live_fmt_queue(b, sizeof(b), q[i].b);
        assert_string_equal(b, q[i].want);
        assert_true(strlen(b) <= 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axis_fit), cmocka_unit_test(axis_columns), cmocka_unit_test(decade_labels),
        cmocka_unit_test(ticks),    cmocka_unit_test(binning),      cmocka_unit_test(bar_heights),
        cmocka_unit_test(resample), cmocka_unit_test(formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
