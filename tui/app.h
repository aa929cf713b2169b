/* app: the explorer's state and its one event loop: poll on the keyboard, the engine's
 * snapshot wake-up and a 10 Hz timer; redraw at most 10 times a second; views are tables
 * of functions (struct view_ops) that draw from the state and answer keys with reaction
 * flags, never blocking on measurement. */
#ifndef APP_H
#define APP_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/flow/mix.h"
#include "engine/results/results_model.h"
#include "engine/run/runner.h"
#include "topology/topo_affinity.h"
#include "topology/topo_lint.h"
#include "topology/topo_model.h"
#include "tui/app_drill.h"
#include "tui/layout.h"
#include "tui/theme.h"
#include "tui/ui.h"
#include "tui/ui_list.h"

struct app;

enum view_id {
    VIEW_TOPO = 0,
    VIEW_SETUP,
    VIEW_LIVE,
    VIEW_RESULTS,
    VIEW_HELP,
    VIEW_FABRIC,
    VIEW_SWEEP,
    VIEW_COUNT
};

/* What a key did, for the loop to act on. */
enum {
    REACT_NONE = 0,         /* not handled */
    REACT_HANDLED = 1 << 0, /* handled, nothing to redraw */
    REACT_REDRAW = 1 << 1,  /* handled, redraw */
    REACT_QUIT = 1 << 2,    /* leave the program */
};

/* A view: one tab of the explorer. */
struct view_ops {
    const char *name; /* tab label, "Topology" */
    int fkey;         /* its function key number (F1 help, F2 setup, ...), 0 none */
    enum layout_kind layout;
    /* Allocate the view's state (app->vstate[id]); called once. */
    void (*init)(struct app *a);
    void (*fini)(struct app *a);
    /* Became the current view. May be NULL. */
    void (*enter)(struct app *a);
    /* Draw the body into l's panes. Must not block. */
    void (*draw)(struct app *a, struct ui *ui, const struct layout *l);
    /* Answer a key (ncurses key code); return REACT_*. */
    int (*key)(struct app *a, int ch);
    /* 10 Hz while on screen; return REACT_REDRAW when something to show changed. May be
     * NULL. */
    int (*tick)(struct app *a);
    /* After every engine poll, on screen or not: keep what must outlive a switch to another
     * view (the live view's quiet-phase numbers). May be NULL. */
    void (*observe)(struct app *a);
    /* The status line's key hints for this view. */
    const char *(*keys)(const struct app *a);
    /* A click at row, col inside pane (its frame excluded), after the pane got the focus:
     * select what is there; REACT_*. May be NULL (the focus alone). */
    int (*click)(struct app *a, int pane, int row, int col);
};

struct app_opts {
    const char *input;      /* --input: a topology file instead of the live system */
    const char *sysfs_root; /* --sysfs-root */
    const char *results;    /* --results: open this results file (a sweep's: the sweep view) */
    const char *attach;     /* --attach: follow this sweep document, re-read when it changes */
    const char *theme;      /* --theme NAME|FILE (overrides the config) */
    bool no_color;          /* --no-color or NO_COLOR */
    int iterations;         /* > 0: draw this many frames and exit (tests, sanitizers) */
    const char *keys;       /* scripted keys for tests, processed before the keyboard */
    const char *config_dir; /* override $XDG_CONFIG_HOME/fabtop (tests) */
    bool no_mouse;          /* --no-mouse: no clicks, no wheel */
    const char *agent_exe;  /* rank-loss drills: the fabtop that serves as the victim agent
                             * (NULL: this program, /proc/self/exe; tests name fabtop) */
};

/* Where the mouse can act, as the last frame drew it: the tabs and the keys of the key
 * line (x0 <= x < x1 on their row). */
struct app_hit {
    int x0, x1;
    int what; /* a view (tabs) or a key code (the key line) */
};
#define APP_MAX_HITS 24

struct app {
    struct app_opts o;
    /* topology */
    struct topo_model *topo;
    struct topo_affinity aff;
    struct topo_findings findings;
    char topo_error[512]; /* why there is no topology */
    /* look */
    struct theme theme;
    struct ui ui;
    /* navigation */
    enum view_id view, prev;
    int focus; /* focused pane of the current view */
    void *vstate[VIEW_COUNT];
    /* a run in progress or just finished */
    struct runner *runner;
    struct mix run_mix;
    bool have_run_mix;
    struct runner_snapshot *snap; /* latest snapshot shown */
    /* What a sim run started here plays at (the fabric view sets it; runner_opts.playback). */
    struct sim_ctl_state playback;
    bool display_paused; /* keep showing the snapshot we had */
    cJSON *results;      /* the finished run's results as written (owned) */
    /* ... and as the results model (app_results_run), read from results when it changes */
    struct results_run results_run;
    bool results_run_ok;
    const cJSON *results_run_of;
    char results_path[512]; /* where it was saved, "" if not yet */
    /* a rack sweep's document the sweep view shows (--results of a sweep, --attach) */
    char sweep_path[512];
    bool sweep_follow;      /* --attach: re-read it when it changes */
    char run_key_file[512]; /* key file for the next run's remote peers, "" = default */
    /* a fault drill in progress or just finished (the live view shows it instead of the
     * run); only one run or drill at a time */
    struct app_drill *drill;
    uint64_t quit_asked_ns; /* q while a drill runs: asked when (q again within 4 s quits) */
    /* the status line */
    char msg[256];
    enum theme_role msg_role;
    uint64_t msg_until_ns;
    bool quit;
    bool dirty;
    /* the mouse's targets in the last frame */
    struct app_hit tab_hits[APP_MAX_HITS], key_hits[APP_MAX_HITS];
    int ntab_hits, nkey_hits;
};

extern const struct view_ops *const app_views[VIEW_COUNT];

/* Initialise state (topology, theme, views). Does not touch the terminal. */
int app_init(struct app *a, const struct app_opts *o, struct ft_err *err);
void app_fini(struct app *a);
/* Run the explorer on the terminal until quit; returns the exit status. */
int app_run(struct app *a);
/* Take the engine's newest snapshot (unless the display is paused) and, at the end, its
 * results; then let every view observe them. The event loop calls it; so can tests. */
void app_poll(struct app *a);
/* Draw one complete frame into the current screen (used by app_run and by screen tests). */
void app_draw(struct app *a);
/* Feed one key as the loop would (screen tests). */
void app_key(struct app *a, int ch);
/* A mouse event at screen row y, column x (ncurses bstate bits): a tab switches views, a
 * key of the key line acts as that key, a click in a pane focuses it and selects what is
 * under it, the wheel scrolls the pane under the pointer. KEY_MOUSE comes here too. */
void app_mouse(struct app *a, int y, int x, unsigned long bstate);

void app_switch(struct app *a, enum view_id v);
void app_message(struct app *a, enum theme_role r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A key for a list's order and filter (ui_order_key); a new order is said on the message
 * line: "WHAT in order of NAME (> next, < previous)." */
enum ui_order_step app_order_key(struct app *a, struct ui_order *o, int ch, const char *what);
/* Start running a mix (the live view follows); -errno with a message on failure. */
int app_start_run(struct app *a, const struct mix *m, const char *peer, struct ft_err *err);
/* Stop the run in progress (results keep what was measured). */
void app_stop_run(struct app *a);
/* Start a fault drill (app_drill.h) in the background (the live view follows): -errno with a
 * message when a run or another drill is in progress, or the mix cannot be drilled. */
int app_start_drill(struct app *a, const struct app_drill_opts *o, struct ft_err *err);
/* Save the drill's document atomically into the drills directory (app_drills_dir) with its
 * path in path: 0; 1 when it went to a fallback file instead (err says why, path where);
 * -errno. */
int app_save_drill(struct app *a, char *path, size_t len, struct ft_err *err);
/* Where saved drills live: $XDG_DATA_HOME/fabtop/drills (or ~/.local/share/...). */
void app_drills_dir(char *buf, size_t len);
/* The file a mix the explorer cannot drill itself is written to for `fabtop drill --mix
 * FILE` (app_drill_save_mix): NAME.mix.json in the drills directory. */
void app_drill_mix_path(const char *name, char *buf, size_t len);
/* Write m there (creating the directory), as app_drill_save_mix writes it: 0 or -errno. */
int app_save_drill_mix(const struct mix *m, double for_s, char *path, size_t len,
                       struct ft_err *err);
/* Save the current results atomically into the results directory (or path): 0. When that
 * fails they go to a fallback file (common/jsonutil.h: jsonutil_save_fallback): 1, with err saying
 * why and where, and results_path naming it. -errno when they could not be saved anywhere. */
int app_save_results(struct app *a, const char *path, struct ft_err *err);
/* The results (a->results) as the results model, NULL when there are none or they cannot
 * be read; read again whenever a->results is another document. Views take this. */
const struct results_run *app_results_run(const struct app *a);
/* Where saved results live: $XDG_DATA_HOME/fabtop/results (or ~/.local/share/...). */
void app_results_dir(char *buf, size_t len);

#endif
