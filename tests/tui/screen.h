/* screen: the in-process screen harness for the explorer's tests: a curses screen made with
 * newterm on /dev/null at a chosen size, the app drawn into it, every row read back with
 * mvwinnstr into text, and that text compared with tests/tui/expected/NAME.txt. */
#ifndef TUI_TEST_SCREEN_H
#define TUI_TEST_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include <curses.h>

#include "tui/app.h"

struct screen {
    SCREEN *scr;
    FILE *out, *in;
    struct app app;
    bool have_app;
};

/* A screen of terminal type term (NULL: xterm-256color) and rows x cols, then app_init with
 * o and the theme mapped onto it. Returns 0, or -1 with a cmocka failure message printed. */
int screen_open(struct screen *s, const char *term, int rows, int cols, const struct app_opts *o);
void screen_close(struct screen *s);
/* Resize the terminal (as after SIGWINCH) and redraw. */
void screen_resize(struct screen *s, int rows, int cols);
/* Feed keys as the scripted-key syntax of app.c: "j j Tab Enter F1 m /GPU1". A word that
 * starts with '/' types the search text after it, then Enter. */
void screen_keys(struct screen *s, const char *keys);
/* app_draw into the screen. */
void screen_draw(struct screen *s);
/* The whole screen as text: one line per row, trailing blanks cut, line-drawing characters
 * as their Unicode box characters, FABTOP_VERSION in the header as "@VERSION@". */
char *screen_dump(struct screen *s);
/* Compare the dump, the actual directory (below) written $TMP in it, with expected/NAME.txt
 * (UPDATE_EXPECTED=1 rewrites it instead). On a
 * difference the actual screen is written to NAME.actual.txt in the directory set with
 * screen_set_actual_dir (default: the working directory) and the differing lines are
 * printed. Returns true when they match. */
bool screen_matches(struct screen *s, const char *name);
/* The same for a screen's text read back by another harness (rows joined by newlines). */
bool screen_text_matches(const char *text, const char *name);
void screen_set_actual_dir(const char *dir);
/* Row y's text (cut trailing blanks) into buf. */
void screen_row(struct screen *s, int y, char *buf, size_t len);
/* First row whose text contains needle, or -1. */
int screen_find_row(struct screen *s, const char *needle);
/* The curses attributes of the cell at (y, x) (attributes and colour pair, no character). */
attr_t screen_attr(struct screen *s, int y, int x);

#endif
