/* ui_list: selection, scrolling and search shared by the explorer's lists. */
/* strcasestr is a GNU extension. */
#define _GNU_SOURCE
#include "tui/ui_list.h"

#include <stdio.h>
#include <string.h>

void ui_list_clamp(struct ui_list *l, int n)
{
    if (l->sel >= n)
        l->sel = n - 1;
    if (l->sel < 0)
        l->sel = 0;
}

bool ui_list_move(struct ui_list *l, int n, int d)
{
    int was = l->sel;
    l->sel += d;
    ui_list_clamp(l, n);
    return l->sel != was;
}

bool ui_list_step(struct ui_list *l, int n, int d, ui_list_ok_fn ok, void *ctx)
{
    int dir = d < 0 ? -1 : 1;
    for (int i = l->sel + dir; i >= 0 && i < n; i += dir)
        if (ok(ctx, i)) {
            l->sel = i;
            return true;
        }
    return false;
}

void ui_list_follow(struct ui_list *l, int h)
{
    if (l->sel < l->top)
        l->top = l->sel;
    if (l->sel >= l->top + h)
        l->top = l->sel - h + 1;
    if (l->top < 0)
        l->top = 0;
}

void ui_list_fit(struct ui_list *l, int n, int h)
{
    if (l->top > n - h)
        l->top = n - h;
    if (l->top < 0)
        l->top = 0;
}

void ui_list_scroll(struct ui_list *l, int d)
{
    l->top += d;
    if (l->top < 0)
        l->top = 0;
}

void ui_list_draw(struct ui *u, const struct rect *in, const struct ui_list *l, int n,
                  bool show_sel, ui_list_row_fn row, void *ctx)
{
    for (int k = 0; k < in->h && l->top + k < n; k++) {
        int i = l->top + k;
        row(ctx, u, in->y + k, in->x, in->w, i, show_sel && i == l->sel);
    }
}

int ui_list_find(int n, int from, bool wrap, const char *needle, ui_list_text_fn text, void *ctx)
{
    if (!needle || !needle[0] || n <= 0)
        return -1;
    from = from < 0 ? 0 : from;
    int count = wrap ? n : n - from;
    for (int k = 0; k < count; k++) {
        int i = (from + k) % n;
        char buf[512];
        const char *t = text(ctx, i, buf, sizeof(buf));
        if (t && strcasestr(t, needle))
            return i;
    }
    return -1;
}

void ui_search_start(struct ui_search *s)
{
    s->active = true;
    s->text[0] = '\0';
}

enum ui_search_step ui_search_key(struct ui_search *s, int ch)
{
    size_t n = strlen(s->text);
    if (ch == '\n' || ch == KEY_ENTER) {
        s->active = false;
        return UI_SEARCH_ENTER;
    }
    if (ch == 27) {
        s->active = false;
        return UI_SEARCH_ESC;
    }
    if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n) {
        s->text[n - 1] = '\0';
    } else if (ch >= 32 && ch < 127 && n + 1 < sizeof(s->text)) {
        s->text[n] = (char)ch;
        s->text[n + 1] = '\0';
    }
    return UI_SEARCH_TYPING;
}

void ui_search_draw(struct ui *u, int y, const struct ui_search *s)
{
    if (!s->active)
        return;
    char q[96];
    snprintf(q, sizeof(q), "/%s", s->text);
    ui_text_pad(u, y, 0, 40, ROLE_INPUT, q);
}

enum ui_order_step ui_order_key(struct ui_order *o, int ch)
{
    if (o->filter.active) {
        ui_search_key(&o->filter, ch);
        return UI_ORDER_FILTER;
    }
    switch (ch) {
    case '>':
    case '<':
    case KEY_F(6): /* F6 sorts, as in htop */
        if (o->nsorts > 1)
            o->sort = (o->sort + (ch == '<' ? o->nsorts - 1 : 1)) % o->nsorts;
        return UI_ORDER_SORT;
    case '\\':
    case '/':
        ui_search_start(&o->filter);
        return UI_ORDER_FILTER;
    default:
        return UI_ORDER_NONE;
    }
}

void ui_order_sort(const struct ui_order *o, int *idx, int n, ui_order_before_fn before, void *ctx)
{
    /* An insertion sort: stable, and the lists are tens or hundreds of items. */
    for (int k = 1; o->sort != 0 && k < n; k++) {
        int x = idx[k], j = k;
        while (j > 0 && before(ctx, x, idx[j - 1])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
}

bool ui_holds(const char *text, const char *needle)
{
    return !needle || !needle[0] || (text && strcasestr(text, needle));
}

void ui_order_text(const struct ui_order *o, char *buf, size_t len)
{
    int n = 0;
    buf[0] = '\0';
    if (o->sort > 0 && o->sort < o->nsorts && o->names)
        n = snprintf(buf, len, " by %s", o->names[o->sort]);
    if (o->filter.text[0] && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " '%s'", o->filter.text);
}

void ui_order_draw(struct ui *u, int y, int cols, const struct ui_order *o, const char *hint)
{
    if (!o->filter.active)
        return;
    ui_search_draw(u, y, &o->filter);
    char h[160];
    snprintf(h, sizeof(h), "  (filter: %s; Enter or Esc closes)", hint);
    ui_text(u, y, 2 + ui_width(o->filter.text), cols, ROLE_DIM, h);
}
