/* ui: the drawing primitives every view uses on top of ncursesw: clipped text in a role's
 * colours, boxes with titles, fills, bars and sparklines (block characters on a UTF-8
 * terminal, ASCII otherwise). Views never call init_pair or attron themselves. */
#ifndef UI_H
#define UI_H

#include <stdbool.h>

#include <curses.h>

#include "tui/layout.h"
#include "tui/theme.h"

struct ui {
    WINDOW *win; /* stdscr */
    int rows, cols;
    int ncolors; /* 0 (monochrome), 8, 16 or 256 */
    bool utf8;   /* draw block characters */
    attr_t attr[ROLE_COUNT];
};

/* Map the theme onto the terminal's colours (init_pair); no_color forces monochrome. */
void ui_setup(struct ui *u, WINDOW *win, const struct theme *t, bool no_color);
/* The selection step a navigation key asks for: Up/k -1, Down/j +1, PgUp/PgDn -/+10,
 * Home/g and End/G -/+UI_NAV_FAR (clamped by the caller); 0 for any other key. */
#define UI_NAV_FAR 100000
int ui_nav_step(int ch);
attr_t ui_attr(const struct ui *u, enum theme_role r);

/* Word-wrap text (ASCII) into at most max lines of width columns; returns the lines it
 * needs. */
int ui_wrap_lines(const char *text, int width, char (*out)[512], int max);
/* A paragraph wrapped to width from row *y on (at most 16 lines, not past ymax), advancing
 * *y; "" leaves a blank row. */
void ui_paragraph(struct ui *u, int *y, int ymax, int x, int w, enum theme_role r,
                  const char *text);
/* Text at (y, x), cut at width columns (width <= 0: to the right edge of the screen). */
void ui_text(struct ui *u, int y, int x, int width, enum theme_role r, const char *s);
void ui_printf(struct ui *u, int y, int x, int width, enum theme_role r, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Text padded with spaces to exactly width columns. */
void ui_text_pad(struct ui *u, int y, int x, int width, enum theme_role r, const char *s);
void ui_fill(struct ui *u, const struct rect *r, enum theme_role role);
/* A frame around r with a title in its top edge; the inside is r shrunk by one. */
void ui_box(struct ui *u, const struct rect *r, const char *title, bool focused);
struct rect ui_inner(const struct rect *r);
/* Horizontal bar of fraction (0..1) of width columns, eighth-block resolution in UTF-8. */
void ui_hbar(struct ui *u, int y, int x, int width, double fraction, enum theme_role r);
/* Vertical bar of fraction of height rows, bottom at y_bottom. */
void ui_vbar(struct ui *u, int y_bottom, int x, int height, double fraction, enum theme_role r);
/* One-line sparkline of n values scaled to max (max <= 0: the largest value). */
void ui_sparkline(struct ui *u, int y, int x, int width, const float *v, int n, double max,
                  enum theme_role r);
/* Display width of a UTF-8 string. */
int ui_width(const char *s);

#endif
