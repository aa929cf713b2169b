/* layout: pane geometry per view kind and terminal size. */
#include "tui/layout.h"

#include <string.h>

static struct rect R(int y, int x, int h, int w) {
    struct rect r = {y, x, h, w};
    return r;
}

int layout_compute(enum layout_kind kind, int rows, int cols, struct layout *l)
{
    memset(l, 0, sizeof(*l));
    l->rows = rows;
    l->cols = cols;
    if (rows < LAYOUT_MIN_ROWS || cols < LAYOUT_MIN_COLS) {
        l->too_small = true;
        return -1;
    }
    l->header = R(0, 0, 1, cols);
    l->tabs = R(1, 0, 1, cols);
    l->status = R(rows - 1, 0, 1, cols);
    l->body = R(2, 0, rows - 3, cols);
    const struct rect b = l->body;
    switch (kind) {
    case LAYOUT_SINGLE:
        l->npanes = 1;
        l->pane[0] = b;
        break;
    case LAYOUT_TOPO: {
        /* Findings take a quarter of the body (at least 5 rows); the tree gets 55% of the
         * width, at least 44 columns. */
        int fh = b.h / 4 < 5 ? 5 : b.h / 4;
        int th = b.h - fh;
        int tw = cols * 55 / 100 < 44 ? 44 : cols * 55 / 100;
        l->npanes = 3;
        l->pane[0] = R(b.y, 0, th, tw);
        l->pane[1] = R(b.y, tw, th, cols - tw);
        l->pane[2] = R(b.y + th, 0, fh, cols);
        break;
    }
    case LAYOUT_LIVE: {
        /* Top: histogram (left) and percentile table (right); middle: throughput timeline
         * (left) and counters (right); bottom: events. */
        int eh = b.h / 6 < 4 ? 4 : b.h / 6;
        int rest = b.h - eh;
        int top = rest / 2 + rest % 2;
        int mid = rest - top;
        int lw = cols * 55 / 100;
        l->npanes = 5;
        l->pane[0] = R(b.y, 0, top, lw);
        l->pane[1] = R(b.y, lw, top, cols - lw);
        l->pane[2] = R(b.y + top, 0, mid, lw);
        l->pane[3] = R(b.y + top, lw, mid, cols - lw);
        l->pane[4] = R(b.y + top + mid, 0, eh, cols);
        break;
    }
    case LAYOUT_COMPARE: {
        int lh = b.h / 3 < 6 ? 6 : b.h / 3;
        int half = cols / 2;
        l->npanes = 3;
        l->pane[0] = R(b.y, 0, lh, cols);
        l->pane[1] = R(b.y + lh, 0, b.h - lh, half);
        l->pane[2] = R(b.y + lh, half, b.h - lh, cols - half);
        break;
    }
    }
    return 0;
}

bool rect_overlaps(const struct rect *a, const struct rect *b)
{
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

bool rect_inside(const struct rect *a, const struct rect *b)
{
    return a->x >= b->x && a->y >= b->y && a->x + a->w <= b->x + b->w && a->y + a->h <= b->y + b->h;
}
