/* text_units: the unit a latency reads best in, and its cells' digits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "text/text_units.h"

static void test_unit_choice(void **state)
{
    (void)state;
    assert_string_equal(text_lat_unit_for(8.84).abbr, "us");
    assert_string_equal(text_lat_unit_for(9999.9).abbr, "us");
    assert_string_equal(text_lat_unit_for(10000).abbr, "ms");
    assert_string_equal(text_lat_unit_for(271581).abbr, "ms");
    assert_string_equal(text_lat_unit_for(271581).word, "milliseconds");
    assert_string_equal(text_lat_unit_for(9.99e6).abbr, "ms");
    assert_string_equal(text_lat_unit_for(1e7).abbr, "s");
    assert_string_equal(text_lat_unit_for(NAN).abbr, "us");
    assert_string_equal(text_lat_unit_for(-1).abbr, "us");
}

static void test_cells(void **state)
{
    (void)state;
    char b[32];
    struct text_lat_unit ms = text_lat_unit_for(2e5), us = text_lat_unit_for(1);
    text_lat_in(b, sizeof(b), 271581, ms);
    assert_string_equal(b, "271.58");
    text_lat_in(b, sizeof(b), 2715810, ms);
    assert_string_equal(b, "2715.8");
    text_lat_in(b, sizeof(b), 270, ms);
    assert_string_equal(b, "0.27");
    text_lat_in(b, sizeof(b), 7.4712, us);
    assert_string_equal(b, "7.47");
    text_lat_in(b, sizeof(b), NAN, ms);
    assert_string_equal(b, "n/a");
    text_lat_auto(b, sizeof(b), 8.84);
    assert_string_equal(b, "8.84 us");
    text_lat_auto(b, sizeof(b), 384.0);
    assert_string_equal(b, "384.00 us");
    text_lat_auto(b, sizeof(b), 271581);
    assert_string_equal(b, "271.58 ms");
    text_lat_auto(b, sizeof(b), 12e6);
    assert_string_equal(b, "12.00 s");
    /* Sizes: whole KiB and MiB by name, the rest in bytes. */
    text_size(b, sizeof(b), 4096);
    assert_string_equal(b, "4KiB");
    text_size(b, sizeof(b), 1048576);
    assert_string_equal(b, "1MiB");
    text_size(b, sizeof(b), 3 * 1048576 + 1024);
    assert_string_equal(b, "3073KiB");
    text_size(b, sizeof(b), 1500);
    assert_string_equal(b, "1500B");
    text_size(b, sizeof(b), 0);
    assert_string_equal(b, "0B");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unit_choice),
        cmocka_unit_test(test_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
