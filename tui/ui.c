/* ui: drawing primitives on ncursesw with theme roles. */
#include "tui/ui.h"

#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "common/strbuf.h"
#include "common/xalloc.h"

static attr_t to_curses(unsigned a)
{
    attr_t r = A_NORMAL;
    if (a & THEME_A_BOLD)
        r |= A_BOLD;
    if (a & THEME_A_UNDERLINE)
        r |= A_UNDERLINE;
    if (a & THEME_A_REVERSE)
        r |= A_REVERSE;
    if (a & THEME_A_DIM)
        r |= A_DIM;
    if (a & THEME_A_STANDOUT)
        r |= A_STANDOUT;
    return r;
}

void ui_setup(struct ui *u, WINDOW *win, const struct theme *t, bool no_color)
{
    memset(u, 0, sizeof(*u));
    u->win = win;
    getmaxyx(win, u->rows, u->cols);
    const char *cs = nl_langinfo(CODESET);
    u->utf8 = cs && !strcmp(cs, "UTF-8");
    u->ncolors = 0;
    bool defaults = false;
    /* One pair per role; too few pairs means monochrome. */
    if (!no_color && has_colors() && start_color() == OK && COLOR_PAIRS > ROLE_COUNT) {
        defaults = use_default_colors() == OK;
        /* A direct-colour terminal (COLORS > 256) reads numbers above 7 as RGB, not as
         * palette indexes: only the 8 ANSI colours mean the same there. */
        u->ncolors = COLORS > 256    ? 8
                     : COLORS >= 256 ? 256
                     : COLORS >= 16  ? 16
                     : COLORS >= 8   ? 8
                                     : 0;
    }
    for (int r = 0; r < ROLE_COUNT; r++) {
        const struct theme_style *s = &t->role[r];
        if (!u->ncolors) {
            u->attr[r] = to_curses(s->mono);
            continue;
        }
        short fg, bg;
        theme_resolve(s, u->ncolors, defaults, &fg, &bg);
        init_pair((short)(r + 1), fg, bg);
        u->attr[r] = COLOR_PAIR(r + 1) | to_curses(s->attrs);
    }
}

attr_t ui_attr(const struct ui *u, enum theme_role r)
{
    return u->attr[r];
}

int ui_width(const char *s)
{
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    int w = 0;
    while (*s) {
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, MB_CUR_MAX, &st);
        if (n == (size_t)-1 || n == (size_t)-2) {
            memset(&st, 0, sizeof(st));
            s++;
            w++;
            continue;
        }
        if (n == 0)
            break;
        int cw = wcwidth(wc);
        w += cw > 0 ? cw : 0;
        s += n;
    }
    return w;
}

/* Draw at most width columns of s; returns the columns used. */
static int put_clipped(struct ui *u, int y, int x, int width, const char *s)
{
    if (y < 0 || y >= u->rows || x >= u->cols)
        return 0;
    if (width <= 0 || x + width > u->cols)
        width = u->cols - x;
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    int used = 0;
    wmove(u->win, y, x);
    while (*s && used < width) {
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, MB_CUR_MAX, &st);
        if (n == (size_t)-1 || n == (size_t)-2) {
            memset(&st, 0, sizeof(st));
            wc = L'?';
            n = 1;
        } else if (n == 0) {
            break;
        }
        int cw = wcwidth(wc);
        if (cw < 0) {
            wc = L'?';
            cw = 1;
        }
        if (used + cw > width)
            break;
        /* The last column of the last line cannot be written without scrolling. */
        if (y == u->rows - 1 && x + used + cw >= u->cols) {
            break;
        }
        waddnwstr(u->win, &wc, 1);
        used += cw;
        s += n;
    }
    return used;
}

void ui_text(struct ui *u, int y, int x, int width, enum theme_role r, const char *s)
{
    wattrset(u->win, u->attr[r]);
    put_clipped(u, y, x, width, s);
    wattrset(u->win, A_NORMAL);
}

void ui_printf(struct ui *u, int y, int x, int width, enum theme_role r, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    ui_text(u, y, x, width, r, buf);
}

void ui_text_pad(struct ui *u, int y, int x, int width, enum theme_role r, const char *s)
{
    if (width <= 0 || x + width > u->cols)
        width = u->cols - x;
    wattrset(u->win, u->attr[r]);
    int used = put_clipped(u, y, x, width, s);
    for (int i = used; i < width; i++) {
        if (y == u->rows - 1 && x + i >= u->cols - 1)
            break;
        mvwaddch(u->win, y, x + i, ' ');
    }
    wattrset(u->win, A_NORMAL);
}

void ui_fill(struct ui *u, const struct rect *r, enum theme_role role)
{
    for (int y = r->y; y < r->y + r->h; y++)
        ui_text_pad(u, y, r->x, r->w, role, "");
}

struct rect ui_inner(const struct rect *r)
{
    struct rect in = {r->y + 1, r->x + 1, r->h - 2, r->w - 2};
    if (in.h < 0)
        in.h = 0;
    if (in.w < 0)
        in.w = 0;
    return in;
}

void ui_box(struct ui *u, const struct rect *r, const char *title, bool focused)
{
    if (r->h < 2 || r->w < 2)
        return;
    attr_t a = u->attr[focused ? ROLE_BORDER_FOCUS : ROLE_BORDER];
    wattrset(u->win, a);
    mvwhline(u->win, r->y, r->x + 1, ACS_HLINE, r->w - 2);
    mvwhline(u->win, r->y + r->h - 1, r->x + 1, ACS_HLINE, r->w - 2);
    mvwvline(u->win, r->y + 1, r->x, ACS_VLINE, r->h - 2);
    mvwvline(u->win, r->y + 1, r->x + r->w - 1, ACS_VLINE, r->h - 2);
    mvwaddch(u->win, r->y, r->x, ACS_ULCORNER);
    mvwaddch(u->win, r->y, r->x + r->w - 1, ACS_URCORNER);
    mvwaddch(u->win, r->y + r->h - 1, r->x, ACS_LLCORNER);
    if (!(r->y + r->h - 1 == u->rows - 1 && r->x + r->w - 1 == u->cols - 1))
        mvwaddch(u->win, r->y + r->h - 1, r->x + r->w - 1, ACS_LRCORNER);
    wattrset(u->win, A_NORMAL);
    if (title && *title && r->w > 6) {
        char t[256];
        snprintf(t, sizeof(t), " %s ", title);
        ui_text(u, r->y, r->x + 2, r->w - 4, focused ? ROLE_BORDER_FOCUS : ROLE_BORDER, t);
    }
}

static const char *const eighths_h[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"};
static const char *const eighths_v[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

void ui_hbar(struct ui *u, int y, int x, int width, double fraction, enum theme_role r)
{
    if (width <= 0)
        return;
    if (!(fraction > 0))
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    int units = (int)(fraction * width * 8 + 0.5);
    char buf[4096];
    size_t n = 0;
    buf[0] = '\0';
    for (int c = 0; c < width && n + 4 < sizeof(buf); c++) {
        int k = units - c * 8;
        k = k < 0 ? 0 : k > 8 ? 8 : k;
        const char *g = u->utf8 ? (k ? eighths_h[k] : " ") : (k >= 4 ? "#" : " ");
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", g);
    }
    ui_text(u, y, x, width, r, buf);
}

void ui_vbar(struct ui *u, int y_bottom, int x, int height, double fraction, enum theme_role r)
{
    if (!(fraction > 0))
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    int units = (int)(fraction * height * 8 + 0.5);
    for (int i = 0; i < height; i++) {
        int k = units - i * 8;
        k = k < 0 ? 0 : k > 8 ? 8 : k;
        const char *g = u->utf8 ? eighths_v[k] : (k >= 4 ? "#" : " ");
        ui_text(u, y_bottom - i, x, 1, r, g);
    }
}

void ui_sparkline(struct ui *u, int y, int x, int width, const float *v, int n, double max,
                  enum theme_role r)
{
    if (width <= 0)
        return;
    if (max <= 0)
        for (int i = 0; i < n; i++)
            if (v[i] > max)
                max = v[i];
    int first = n > width ? n - width : 0;
    char buf[4096];
    size_t len = 0;
    for (int i = first; i < n && len + 4 < sizeof(buf); i++) {
        int k = max > 0 ? (int)(v[i] / max * 8 + 0.5) : 0;
        k = k < 0 ? 0 : k > 8 ? 8 : k;
        const char *g = u->utf8 ? eighths_v[k] : (k == 0 ? "_" : k < 4 ? "." : k < 7 ? "o" : "O");
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s", g);
    }
    ui_text(u, y, x, width, r, buf);
}

int ui_nav_step(int ch)
{
    switch (ch) {
    case KEY_UP:
    case 'k':
        return -1;
    case KEY_DOWN:
    case 'j':
        return 1;
    case KEY_PPAGE:
        return -10;
    case KEY_NPAGE:
        return 10;
    case KEY_HOME:
    case 'g':
        return -UI_NAV_FAR;
    case KEY_END:
    case 'G':
        return UI_NAV_FAR;
    default:
        return 0;
    }
}

/* Word-wrap text into at most max lines of width columns; returns the lines it needs. */
int ui_wrap_lines(const char *text, int width, char (*out)[512], int max)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        int len = (int)strlen(p);
        int take = len;
        if (len > width) {
            take = width;
            while (take > 0 && p[take] != ' ')
                take--;
            if (take == 0)
                take = width;
        }
        if (n < max)
            snprintf(out[n], sizeof(out[n]), "%.*s", take, p);
        n++;
        p += take;
    }
    return n;
}

/* Paragraphs wrapped to the width from row *y on; "" leaves a blank row. */
void ui_paragraph(struct ui *u, int *y, int ymax, int x, int w, enum theme_role r, const char *text)
{
    char(*lines)[512] = xalloc_zero(16, sizeof(*lines));
    int n = ui_wrap_lines(text, w, lines, 16);
    for (int i = 0; i < n && i < 16 && *y < ymax; i++)
        ui_text(u, (*y)++, x, w, r, lines[i]);
    if (!text[0] && *y < ymax)
        (*y)++;
    free(lines);
}
