/* sweep_grid: the explorer's sweep view without the terminal (view_sweep.c draws it): a sweep
 * document's pair figures as a ranks x ranks grid per metric, each cell's ratio to the rack's
 * median and its shade, a rank's summary (median, worst peer), the cursor's moves and verdict
 * jumps, which rows and columns fit a pane, the header line and the time left. No curses. */
#ifndef SWEEP_GRID_H
#define SWEEP_GRID_H

#include <stdbool.h>
#include <stddef.h>

#include "common/ft_err.h"
#include "engine/results/results_sweep.h"

enum sweep_grid_metric {
    SWEEP_GRID_BW,      /* bandwidth a to b (Gb/s), lower is worse */
    SWEEP_GRID_LAT_P50, /* latency p50 (us), higher is worse */
    SWEEP_GRID_LAT_P99, /* latency p99 (us), higher is worse */
    SWEEP_GRID_NMETRICS
};

/* A cell's shade: goodness (the figure over the median for bandwidth, the median over the
 * figure for latency) >= 0.9 good, >= 0.75 fair, >= 0.5 poor, below bad. */
enum sweep_grid_class {
    SWEEP_GRID_SH_DIAG,    /* a == b: blank */
    SWEEP_GRID_SH_MISSING, /* not measured (yet): '?' */
    SWEEP_GRID_SH_FAILED,  /* the pair failed: 'X' */
    SWEEP_GRID_SH_GOOD,    /* '#' */
    SWEEP_GRID_SH_FAIR,    /* '+' */
    SWEEP_GRID_SH_POOR,    /* '-' */
    SWEEP_GRID_SH_BAD,     /* '.' */
};

enum sweep_grid_cellst { SWEEP_GRID_CELL_NONE = 0, SWEEP_GRID_CELL_VAL, SWEEP_GRID_CELL_FAILED };

/* One metric's figure of every ordered pair: row a (the sender), column b. Over several rails
 * a cell holds its worst figure; a failure wins over a figure. */
struct sweep_grid {
    int n;
    enum sweep_grid_metric m;
    double *v;
    unsigned char *st; /* enum sweep_grid_cellst */
    bool have_med;
    double med;       /* the median of the measured cells */
    const char *kind; /* the pairs' latency kind ("half_round_trip"), or NULL (in s) */
};

/* Above this many ranks the view shows one line per rank instead of cells. */
#define SWEEP_GRID_SUMMARY_OVER 40

/* The matrix of metric m over transport ("tcp", "verbs", "nccl"; NULL: tcp). */
void sweep_grid_build(struct sweep_grid *g, const struct results_sweep *s, enum sweep_grid_metric m,
                      const char *transport);
void sweep_grid_free(struct sweep_grid *g);
const char *sweep_grid_metric_name(enum sweep_grid_metric m); /* "bandwidth", "latency p50", ... */
/* The metric a verdict's "metric" names (bandwidth when unknown). */
enum sweep_grid_metric sweep_grid_metric_of(const char *name);
/* Cell [a][b]: its state, and the figure in *v when it has one. */
enum sweep_grid_cellst sweep_grid_cell(const struct sweep_grid *g, int a, int b, double *v);
/* The goodness of cell [a][b] (see enum sweep_grid_class): false without a figure or a median. */
bool sweep_grid_ratio(const struct sweep_grid *g, int a, int b, double *q);
enum sweep_grid_class sweep_grid_shade_of(double goodness);
enum sweep_grid_class sweep_grid_shade(const struct sweep_grid *g, int a, int b);
char sweep_grid_shade_char(enum sweep_grid_class sh);

/* A rank's pairs in both directions: how many peers have a figure or failed, how many
 * failed, the median of its figures and its worst peer (the lowest goodness either way). */
struct sweep_grid_rank_sum {
    int npeers, nfailed;
    bool have_median;
    double median;
    int worst; /* -1 when none */
    double worst_q;
};
void sweep_grid_rank(const struct sweep_grid *g, int a, struct sweep_grid_rank_sum *out);

/* Figures with their units: bandwidth in Gb/s, or Mb/s below 1 Gb/s; latency in us. */
void sweep_grid_fmt_value(char *buf, size_t len, enum sweep_grid_metric m, double v);
void sweep_grid_fmt_gbps(char *buf, size_t len, double gbps);
void sweep_grid_fmt_us(char *buf, size_t len, double us);

/* The cursor: row a, column b; column -1 is the row's header (the rank itself). */
struct sweep_grid_cursor {
    int row, col;
};
/* Move by (drow, dcol) within n ranks, clamped: rows 0..n-1, columns -1..n-1. */
void sweep_grid_cursor_move(struct sweep_grid_cursor *c, int n, int drow, int dcol);
/* Back inside n ranks after the document changed. */
void sweep_grid_cursor_clamp(struct sweep_grid_cursor *c, int n);
/* Where verdict i points: rank verdicts at [rank][its worst peer on the verdict's metric],
 * pair verdicts at [rank][peer], a failed rank at its row header. False when it names no
 * rank (an uplink between groups). */
bool sweep_grid_verdict_target(const struct results_sweep *s, int i, struct sweep_grid_cursor *out);

/* What fits a pane of w columns and h rows for n ranks: cells (label_w columns of rank and
 * host, then cell_w per column) or, above SWEEP_GRID_SUMMARY_OVER ranks or when not even one
 * cell fits, one line per rank; row0 and col0 (kept between frames) scroll the least so
 * that the cursor shows. */
struct sweep_grid_layout {
    bool summary;
    int host_w, label_w, cell_w;
    int ncols, nrows; /* shown */
    int row0, col0;   /* the first shown */
};
void sweep_grid_fit(const struct results_sweep *s, int w, int h, const struct sweep_grid_cursor *c,
                    struct sweep_grid_layout *f);

/* Whether the sweep is still running, and the estimate of the time left: duration_s /
 * rounds_done x (rounds_planned - rounds_done); false when it cannot be told. */
bool sweep_grid_running(const struct results_sweep *s);
bool sweep_grid_time_left(const struct results_sweep *s, double *left_s);
/* "8 ranks  pairs  running  round 3 of 7" and "18 s elapsed, about 24 s left". */
void sweep_grid_header(const struct results_sweep *s, char *line1, size_t len1, char *line2,
                       size_t len2);

/* Read a sweep document from path: 0, or -errno with err naming the file and what is wrong
 * (-EBADMSG for a document of another kind). */
int sweep_grid_load(const char *path, struct results_sweep *s, struct ft_err *err);

#endif
