/* layout: where everything goes on the screen, as a pure function of the terminal size and
 * the view (no curses), so it can be tested at many sizes. Every view gets a header line,
 * a tab line, a body split into panes, and a status (key) line. */
#ifndef LAYOUT_H
#define LAYOUT_H

#include <stdbool.h>

#define LAYOUT_MIN_ROWS  24
#define LAYOUT_MIN_COLS  80
#define LAYOUT_MAX_PANES 6

struct rect {
    int y, x, h, w;
};

/* Pane arrangements the views use. */
enum layout_kind {
    LAYOUT_SINGLE = 0, /* one pane: the whole body */
    LAYOUT_TOPO,       /* tree | detail on top, findings below */
    LAYOUT_LIVE,       /* histogram | percentiles, timeline | counters, events */
    LAYOUT_COMPARE,    /* list on top, two columns below */
};

struct layout {
    bool too_small; /* the terminal is smaller than 80x24: show a message only */
    int rows, cols;
    struct rect header, tabs, body, status;
    int npanes;
    struct rect pane[LAYOUT_MAX_PANES];
};

/* Fill l for a terminal of rows x cols. Returns 0, or -1 (and too_small) below the minimum. */
int layout_compute(enum layout_kind kind, int rows, int cols, struct layout *l);
/* Do two rectangles overlap? (tests) */
bool rect_overlaps(const struct rect *a, const struct rect *b);
/* Is a inside b? (tests) */
bool rect_inside(const struct rect *a, const struct rect *b);

#endif
