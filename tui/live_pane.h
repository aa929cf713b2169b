/* live_pane: the live run view (F4) as five panes over one state: the histogram
 * (live_hist.c), the percentile table (live_pct.c), the goodput timelines per flow
 * (live_flows.c), the counters and TCP numbers (live_counters.c) and the events with the
 * progress (live_events.c); a fault drill's page (live_drill.c) takes the whole body in their
 * place. view_live.c owns the frame, the view-wide keys and the state;
 * each pane draws into its rectangle from that state and may answer keys while it has the
 * focus. Private to the live view's files. */
#ifndef LIVE_PANE_H
#define LIVE_PANE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/flow/flow_state.h"
#include "engine/flow/hist.h"
#include "engine/flow/mix.h"
#include "tui/app.h"
#include "tui/ui_list.h"

/* The panes, in the order of the LAYOUT_LIVE rectangles (layout.h). */
enum live_pane_id {
    LIVE_HIST = 0, /* latency histogram */
    LIVE_PCT,      /* percentile table */
    LIVE_FLOWS,    /* goodput timelines */
    LIVE_CTR,      /* counters and TCP per flow */
    LIVE_EV,       /* events and progress */
    LIVE_NPANES
};

/* One column of the percentile table: a flow in a phase, or the loaded/quiet ratio.
 * Latencies in ns; NaN means n/a. */
struct live_pcol {
    char head[32];
    enum theme_role role; /* of the header */
    bool ratio;           /* loaded / quiet */
    uint64_t size;        /* bytes; 0 with size_valid: a distribution */
    bool size_valid;
    int point, npoints;
    double count, p50, p90, p99, p999, max, gbps, ops;
    double busbw; /* collectives: GB/s from the mean per-operation time, as nccl-tests */
    int flow;     /* the flow's index in the snapshot; -1 for the ratio column */
    bool quiet;   /* the foreground's quiet column */
};

/* The view's state: what every pane draws from. */
/* Rows of the counters pane a click can select (taller panes: the rows below are not). */
#define LIVE_MAX_CLICK_ROWS 128

struct live_state {
    struct ui_list list[LIVE_NPANES]; /* each pane's selection and scroll */
    int nsel[LIVE_NPANES];            /* selectable items in each pane at the last draw */
    bool ev_follow;                   /* the events pane shows the newest lines */
    bool ylog;                        /* histogram counts on a log scale */
    bool cdf;                         /* d: the cumulative distribution instead */
    /* The foreground's quiet-phase histogram, kept from the quiet phase for the loaded one's
     * pane (drawn over it on the same axis). */
    struct hist *quiet_hist;
    bool quiet_hist_ok;
    bool ctr_tcp;      /* on a small screen: show the TCP lines instead of the counters */
    bool all_counters; /* also those known not to have moved since the test started */
    int ctr_moved;     /* counters shown / in the snapshot at the last draw */
    int ctr_total;
    char sel_term[128]; /* the selected counter's glossary label, for ? */
    /* which run the memory belongs to */
    const struct runner *runner;
    uint64_t last_gen;
    /* What the foreground's quiet phase looked like when last seen, kept for the loaded
     * phase. */
    struct {
        bool valid;
        struct live_pcol col;
    } quiet;
    /* The histogram follows the flow selected in the percentile table once the user has
     * moved that selection (pct_chosen); hist_want is that flow, -1 the foreground. After
     * the run another flow's comes from the results (res_hist, parsed once per choice). */
    bool pct_chosen;
    int hist_want;
    bool hist_quiet; /* the quiet column is picked: after the run, the quiet phase's */
    struct hist *res_hist;
    int res_hist_flow;
    bool res_hist_quiet;
    const cJSON *res_hist_doc; /* the results document res_hist was taken from (identity) */
    bool res_hist_ok;
    bool class_drawn; /* this frame's percentile table had room for the lines by class */
    /* Where the last frame put things, for clicks: the percentile table's label width,
     * column width, first column shown and columns shown; the selection number of each of
     * the counters pane's rows (-1: a heading or a note). */
    int pct_labw, pct_colw, pct_first, pct_fit;
    int ctr_row_sel[LIVE_MAX_CLICK_ROWS];
    /* The drill's page: its scroll, following the newest lines unless scrolled back, for
     * the drill that started at drill_start_ns. */
    struct ui_list drill_scroll;
    bool drill_follow;
    int drill_rows; /* rows of text at the last draw */
    uint64_t drill_start_ns;
};

/* A pane: drawn into r (its frame included) from the view's state; focus: it has the keys. */
struct live_pane {
    void (*draw)(struct app *a, struct live_state *s, struct ui *u, const struct rect *r,
                 bool focus);
    /* A key while the pane has the focus, before the view's own keys: REACT_* (REACT_NONE
     * passes it on to the view). NULL: the pane takes none of its own. */
    int (*key)(struct app *a, struct live_state *s, int ch);
    /* A click at row, col inside the pane (the pane has the focus already): REACT_*. NULL:
     * a click only gives the focus. */
    int (*click)(struct app *a, struct live_state *s, int row, int col);
};

extern const struct live_pane live_hist_pane;
extern const struct live_pane live_pct_pane;
extern const struct live_pane live_flows_pane;
extern const struct live_pane live_counters_pane;
extern const struct live_pane live_events_pane;
/* A fault drill's page (a->drill), drawn into the whole body. */
extern const struct live_pane live_drill_pane;

/* The percentile pane's column for a flow's snapshot numbers (the view keeps the
 * foreground's quiet one while the quiet phase runs). */
void live_pct_from_snap(struct live_pcol *c, const struct snap_flow *f, const char *head);

/* The lines by flow class (live_class.c) at y, x within w columns and at most rows lines,
 * when the run's mix has classes: how many were drawn. */
int live_class_draw(struct app *a, struct ui *u, int y, int x, int w, int rows);
/* The same in one line ("by class: tp p99 46.5us J1.00; kv p99 n/a J0.99"), for a pane
 * too short for the lines; false when the mix has no classes. */
bool live_class_brief(const struct app *a, char *buf, size_t len);

/* ---- shared by the panes (live_pane.c) ---- */

/* The latency kind of the run's flow i (MIX_LAT_NONE when unknown). */
enum mix_latency_kind live_pane_kind_of(const struct app *a, int i);
/* "half round trip" (brief: "half RTT"), "round trip", "per operation", "no latency". */
const char *live_pane_kind_words(enum mix_latency_kind k, bool brief);
/* Gb/s (or GB/s) with 3-4 significant digits; "n/a" for NaN. */
void live_pane_fmt_gbps(char *buf, size_t len, double g);
/* The first of n titles that fits the box's top edge, and the box. */
void live_pane_box(struct ui *u, const struct rect *r, bool focus, const char *const *variants,
                   int n);
/* Move pane's selection by d (clamped to its items at the last draw; the events pane
 * follows the newest again at the end): REACT_REDRAW, or REACT_HANDLED when nothing moved. */
int live_pane_sel_move(struct live_state *s, int pane, int d);
/* A simulated flow's share done (0 to 1): bytes acknowledged of its operations' bytes
 * (operations done where its size is a distribution); -1 for a background flow. */
double live_pane_sim_flow_done(const struct snap_flow *f, const struct fabric_snap_flow *ff);
/* The share of the simulated foreground flows done, -1 when the run simulates none. */
double live_pane_sim_done(const struct runner_snapshot *snap);
/* Columns of vertical bars (fractions of height rows) with their bottom at y_bottom. */
void live_pane_vbars(struct ui *u, int y_bottom, int x, int height, const double *frac, int n,
                     enum theme_role role);

#endif
