/* ui_list: the one list widget the explorer's views share (the way htop's Panel and tmux's
 * mode-tree serve all their screens): a selection and a scroll offset over n items drawn a
 * row each, the navigation steps of ui_nav_step (Up/Down, PgUp/PgDn, Home/End), lists
 * without a selection (text, tables) that only scroll, and incremental search (/ then
 * Enter; n the next match). The arithmetic (move, clamp, follow, fit, find) needs no
 * terminal and is unit-tested on its own (tests/tui/test_ui_list.c). */
#ifndef UI_LIST_H
#define UI_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/ui.h"

/* sel: the selected item, 0 <= sel < n (0 when empty); top: the first item shown. */
struct ui_list {
    int sel, top;
};

/* Move the selection by d items (a ui_nav_step step; UI_NAV_FAR reaches either end) within
 * n items, clamped to [0, n - 1], 0 when the list is empty. True when it moved. */
bool ui_list_move(struct ui_list *l, int n, int d);
/* Items some of which cannot be selected (a form's fields that do not apply here): move
 * the selection one item in d's direction (its sign) to the nearest item ok accepts; it
 * stays where it is when there is none that way. True when it moved. */
typedef bool (*ui_list_ok_fn)(void *ctx, int i);
bool ui_list_step(struct ui_list *l, int n, int d, ui_list_ok_fn ok, void *ctx);
/* The selection back inside [0, n - 1] (0 when empty), after the items changed. */
void ui_list_clamp(struct ui_list *l, int n);
/* Scroll the least so that the selection shows in h rows: top <= sel < top + h, top >= 0. */
void ui_list_follow(struct ui_list *l, int h);
/* A list that only scrolls (no selection): top clamped to [0, n - h], 0 when it all fits. */
void ui_list_fit(struct ui_list *l, int n, int h);
/* Scroll by d rows (unclamped below the end: ui_list_fit clamps when it is drawn), never
 * above the first row. */
void ui_list_scroll(struct ui_list *l, int d);

/* Draws item i's row at y, x, w wide; sel: it is the selection and the list shows it. */
typedef void (*ui_list_row_fn)(void *ctx, struct ui *u, int y, int x, int w, int i, bool sel);
/* The rows top .. top + in->h - 1 that exist (of n) into in, one row each; the selection
 * is marked only when show_sel (a pane without the focus may hide it). */
void ui_list_draw(struct ui *u, const struct rect *in, const struct ui_list *l, int n,
                  bool show_sel, ui_list_row_fn row, void *ctx);

/* Item i's text for the search (buf may hold it; len its size). */
typedef const char *(*ui_list_text_fn)(void *ctx, int i, char *buf, size_t len);
/* The first item from `from` on (then from 0 up to from - 1 when wrap) whose text holds
 * needle, ignoring case; -1 when none does or needle is empty. */
int ui_list_find(int n, int from, bool wrap, const char *needle, ui_list_text_fn text, void *ctx);

/* The search line: active while typed; text what was typed (kept after Enter, for n). */
struct ui_search {
    bool active;
    char text[64];
};
enum ui_search_step {
    UI_SEARCH_TYPING, /* a character added or removed (or ignored) */
    UI_SEARCH_ENTER,  /* Enter: search for text now */
    UI_SEARCH_ESC,    /* Esc: the line closed; text as typed (a view may clear it) */
};
/* Start typing a new search (/). */
void ui_search_start(struct ui_search *s);
/* A key while s->active: printable ASCII appends, Backspace removes, Enter and Esc close. */
enum ui_search_step ui_search_key(struct ui_search *s, int ch);
/* "/text" on row y (the row above the key line) while typed. */
void ui_search_draw(struct ui *u, int y, const struct ui_search *s);

/* A list's order and filter, keyed as htop's: > (or F6) the next order, < the previous;
 * \ or / opens the filter line, which applies as typed (Enter or Esc closes it; an empty
 * filter keeps every item). names[0] is the list's own order; the view says which items
 * pass the filter (ui_holds on their text) and which of two comes first (ui_order_sort). */
struct ui_order {
    int sort, nsorts;
    const char *const *names;
    struct ui_search filter;
};
enum ui_order_step {
    UI_ORDER_NONE,   /* no key of the order's */
    UI_ORDER_SORT,   /* the order changed */
    UI_ORDER_FILTER, /* the filter line opened, changed or closed */
};
/* While the filter line is open every key is the line's. */
enum ui_order_step ui_order_key(struct ui_order *o, int ch);
/* Does item i come before item j in the order o->sort? */
typedef bool (*ui_order_before_fn)(void *ctx, int i, int j);
/* idx (n item numbers, in the list's own order) into o->sort's order: a stable sort (ties
 * keep their places), nothing moves in order 0. */
void ui_order_sort(const struct ui_order *o, int *idx, int n, ui_order_before_fn before, void *ctx);
/* Does text hold needle, in any case? An empty needle is in every text. */
bool ui_holds(const char *text, const char *needle);
/* " by NAME" when not in the list's own order, then " 'FILTER'" when filtered, into buf. */
void ui_order_text(const struct ui_order *o, char *buf, size_t len);
/* The filter line on row y while it is typed, hint (what the filter matches) after it. */
void ui_order_draw(struct ui *u, int y, int cols, const struct ui_order *o, const char *hint);

#endif
