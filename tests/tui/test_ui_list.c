/* test_ui_list: the list widget's arithmetic without a terminal: the selection clamped to the
 * items (empty lists too), the scroll offset that keeps the selection visible for every
 * selection, list length and height, the scroll-only lists clamped to their end, search
 * with and without wrapping, items that cannot be selected stepped over, the search
 * line's editing keys, and a list's order and filter (the keys that step through the orders,
 * a stable sort, the case-blind match, the words the title shows). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tui/ui_list.h"

static void move_clamps(void **state)
{
    (void)state;
    struct ui_list l = {0, 0};
    assert_false(ui_list_move(&l, 5, -1)); /* at the top already */
    assert_int_equal(l.sel, 0);
    assert_true(ui_list_move(&l, 5, 1));
    assert_int_equal(l.sel, 1);
    assert_true(ui_list_move(&l, 5, 10)); /* a page past the end stops at the last */
    assert_int_equal(l.sel, 4);
    assert_false(ui_list_move(&l, 5, UI_NAV_FAR));
    assert_true(ui_list_move(&l, 5, -UI_NAV_FAR));
    assert_int_equal(l.sel, 0);
    /* An empty list keeps the selection at 0 whatever the step. */
    struct ui_list e = {0, 0};
    assert_false(ui_list_move(&e, 0, 1));
    assert_false(ui_list_move(&e, 0, -10));
    assert_int_equal(e.sel, 0);
    /* The items shrank under the selection. */
    struct ui_list s = {7, 3};
    ui_list_clamp(&s, 4);
    assert_int_equal(s.sel, 3);
    ui_list_clamp(&s, 0);
    assert_int_equal(s.sel, 0);
}

/* For every list length, height, selection and previous offset: the selection shows, the
 * offset moved the least it could, and it never went negative. */
static void follow_keeps_selection_visible(void **state)
{
    (void)state;
    for (int n = 1; n <= 30; n++)
        for (int h = 1; h <= 12; h++)
            for (int top0 = 0; top0 < n; top0++)
                for (int sel = 0; sel < n; sel++) {
                    struct ui_list l = {sel, top0};
                    ui_list_follow(&l, h);
                    assert_true(l.top >= 0);
                    assert_true(l.top <= sel && sel < l.top + h);
                    if (sel >= top0 && sel < top0 + h)
                        assert_int_equal(l.top, top0); /* visible already: no scroll */
                    else if (sel < top0)
                        assert_int_equal(l.top, sel); /* up: the selection on the first row */
                    else
                        assert_int_equal(l.top, sel - h + 1); /* down: on the last row */
                }
}

/* Items 1, 2 and 5 of 7 cannot be selected. */
static bool selectable(void *ctx, int i)
{
    (void)ctx;
    return i != 1 && i != 2 && i != 5;
}

static void step_skips(void **state)
{
    (void)state;
    struct ui_list l = {0, 0};
    assert_true(ui_list_step(&l, 7, 1, selectable, NULL));
    assert_int_equal(l.sel, 3); /* over 1 and 2 */
    assert_true(ui_list_step(&l, 7, 1, selectable, NULL));
    assert_int_equal(l.sel, 4);
    assert_true(ui_list_step(&l, 7, 1, selectable, NULL));
    assert_int_equal(l.sel, 6);                             /* over 5 */
    assert_false(ui_list_step(&l, 7, 1, selectable, NULL)); /* the last: stays */
    assert_int_equal(l.sel, 6);
    assert_true(ui_list_step(&l, 7, -1, selectable, NULL));
    assert_int_equal(l.sel, 4);
    l.sel = 3;
    assert_true(ui_list_step(&l, 7, -1, selectable, NULL));
    assert_int_equal(l.sel, 0);
    assert_false(ui_list_step(&l, 7, -1, selectable, NULL));
    struct ui_list e = {0, 0};
    assert_false(ui_list_step(&e, 0, 1, selectable, NULL));
}

static void fit_and_scroll(void **state)
{
    (void)state;
    struct ui_list l = {0, 0};
    ui_list_scroll(&l, -3); /* never above the first row */
    assert_int_equal(l.top, 0);
    ui_list_scroll(&l, UI_NAV_FAR);
    ui_list_fit(&l, 100, 20); /* the last page */
    assert_int_equal(l.top, 80);
    ui_list_fit(&l, 10, 20); /* it all fits */
    assert_int_equal(l.top, 0);
    l.top = 5;
    ui_list_fit(&l, 100, 20); /* inside: unchanged */
    assert_int_equal(l.top, 5);
}

static const char *const words[] = {"alpha", "Beta", "gamma", "delta", "BETAMAX"};

static const char *word(void *ctx, int i, char *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return words[i];
}

static void find(void **state)
{
    (void)state;
    assert_int_equal(ui_list_find(5, 0, false, "beta", word, NULL), 1); /* case ignored */
    assert_int_equal(ui_list_find(5, 2, false, "beta", word, NULL), 4);
    assert_int_equal(ui_list_find(5, 2, false, "alpha", word, NULL), -1); /* not below */
    assert_int_equal(ui_list_find(5, 2, true, "alpha", word, NULL), 0);   /* around the end */
    assert_int_equal(ui_list_find(5, 2, true, "gamma", word, NULL), 2);   /* itself last */
    assert_int_equal(ui_list_find(5, 0, true, "zeta", word, NULL), -1);
    assert_int_equal(ui_list_find(5, 0, true, "", word, NULL), -1);
    assert_int_equal(ui_list_find(0, 0, true, "a", word, NULL), -1);
}

static void search_keys(void **state)
{
    (void)state;
    struct ui_search s;
    ui_search_start(&s);
    assert_true(s.active);
    assert_string_equal(s.text, "");
    assert_int_equal(ui_search_key(&s, 'm'), UI_SEARCH_TYPING);
    assert_int_equal(ui_search_key(&s, 'x'), UI_SEARCH_TYPING);
    assert_int_equal(ui_search_key(&s, KEY_BACKSPACE), UI_SEARCH_TYPING);
    assert_int_equal(ui_search_key(&s, 'l'), UI_SEARCH_TYPING);
    assert_int_equal(ui_search_key(&s, KEY_LEFT), UI_SEARCH_TYPING); /* ignored */
    assert_string_equal(s.text, "ml");
    assert_int_equal(ui_search_key(&s, '\n'), UI_SEARCH_ENTER);
    assert_false(s.active);
    assert_string_equal(s.text, "ml"); /* kept for n */
    ui_search_start(&s);
    ui_search_key(&s, 'q');
    assert_int_equal(ui_search_key(&s, 27), UI_SEARCH_ESC);
    assert_false(s.active);
    assert_string_equal(s.text, "q");
    /* Backspace on an empty line, and a line that is full. */
    ui_search_start(&s);
    ui_search_key(&s, 127);
    assert_string_equal(s.text, "");
    for (int i = 0; i < 100; i++)
        ui_search_key(&s, 'a');
    assert_int_equal((int)strlen(s.text), (int)sizeof(s.text) - 1);
}

/* Items ordered by a key, larger first: values[i]. */
static const int values[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
static bool larger_first(void *ctx, int i, int j)
{
    const int *v = ctx;
    return v[i] > v[j];
}

static void order_keys_and_sort(void **state)
{
    (void)state;
    static const char *const names[] = {"place", "value", "name"};
    struct ui_order o = {.nsorts = 3, .names = names};
    char t[64];
    ui_order_text(&o, t, sizeof(t));
    assert_string_equal(t, ""); /* the list's own order, unfiltered */
    /* Nothing moves in the list's own order. */
    int idx[10];
    for (int i = 0; i < 10; i++)
        idx[i] = i;
    ui_order_sort(&o, idx, 10, larger_first, (void *)values);
    for (int i = 0; i < 10; i++)
        assert_int_equal(idx[i], i);
    /* > steps on, < back, both wrap round; F6 is >. */
    assert_int_equal(ui_order_key(&o, '>'), UI_ORDER_SORT);
    assert_int_equal(o.sort, 1);
    assert_int_equal(ui_order_key(&o, KEY_F(6)), UI_ORDER_SORT);
    assert_int_equal(o.sort, 2);
    assert_int_equal(ui_order_key(&o, '>'), UI_ORDER_SORT);
    assert_int_equal(o.sort, 0);
    assert_int_equal(ui_order_key(&o, '<'), UI_ORDER_SORT);
    assert_int_equal(o.sort, 2);
    assert_int_equal(ui_order_key(&o, '<'), UI_ORDER_SORT);
    assert_int_equal(o.sort, 1);
    assert_int_equal(ui_order_key(&o, 'j'), UI_ORDER_NONE);
    /* Larger first, and equal values keep their places (stable): 9 6 5(4) 5(8) 4 3(0) 3(9)
     * 2 1(1) 1(3). */
    ui_order_sort(&o, idx, 10, larger_first, (void *)values);
    const int want[] = {5, 7, 4, 8, 2, 0, 9, 6, 1, 3};
    for (int i = 0; i < 10; i++)
        assert_int_equal(idx[i], want[i]);
    /* The filter line takes every key while open, > too; Enter closes it and keeps the text. */
    assert_int_equal(ui_order_key(&o, '\\'), UI_ORDER_FILTER);
    assert_true(o.filter.active);
    assert_int_equal(ui_order_key(&o, 'm'), UI_ORDER_FILTER);
    assert_int_equal(ui_order_key(&o, '>'), UI_ORDER_FILTER);
    assert_int_equal(ui_order_key(&o, KEY_BACKSPACE), UI_ORDER_FILTER);
    assert_int_equal(ui_order_key(&o, 'L'), UI_ORDER_FILTER);
    assert_int_equal(o.sort, 1);
    assert_int_equal(ui_order_key(&o, '\n'), UI_ORDER_FILTER);
    assert_false(o.filter.active);
    assert_string_equal(o.filter.text, "mL");
    ui_order_text(&o, t, sizeof(t));
    assert_string_equal(t, " by value 'mL'");
    /* A case-blind match; an empty filter keeps everything. */
    assert_true(ui_holds("mlx5_0", "ML"));
    assert_true(ui_holds("sw0/mlx", "mL"));
    assert_false(ui_holds("h15", "ml"));
    assert_true(ui_holds("h15", ""));
    assert_false(ui_holds(NULL, "x"));
    /* / opens it too. */
    assert_int_equal(ui_order_key(&o, '/'), UI_ORDER_FILTER);
    assert_true(o.filter.active);
    assert_string_equal(o.filter.text, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(move_clamps),
        cmocka_unit_test(step_skips),
        cmocka_unit_test(follow_keeps_selection_visible),
        cmocka_unit_test(fit_and_scroll),
        cmocka_unit_test(find),
        cmocka_unit_test(search_keys),
        cmocka_unit_test(order_keys_and_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
