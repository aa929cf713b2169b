/* theme: colours as named roles. Drawing code only ever asks for a role's attributes;
 * themes (JSON files in themes/) map roles to colours, with 256-, 16- and 8-colour and
 * monochrome fallbacks, NO_COLOR honoured, and a compiled-in default. */
#ifndef THEME_H
#define THEME_H

#include <stdbool.h>

#include "common/ft_err.h"
#include "engine/results/compare.h"

/* Every role the UI draws with: X(name, "json-key", what it is for). */
#define THEME_ROLES(X)                                                                             \
    X(NORMAL, "normal", "ordinary text")                                                           \
    X(DIM, "dim", "secondary text: units, n/a, hints")                                             \
    X(HEADER, "header", "the title bar")                                                           \
    X(TAB, "tab", "an inactive view tab")                                                          \
    X(TAB_ACTIVE, "tab_active", "the current view tab")                                            \
    X(STATUS, "status", "the key bar at the bottom")                                               \
    X(BORDER, "border", "pane borders and titles")                                                 \
    X(BORDER_FOCUS, "border_focus", "the focused pane's border")                                   \
    X(SELECTED, "selected", "the selected line")                                                   \
    X(OK, "ok", "healthy: ACTIVE ports, passed checks")                                            \
    X(WARN, "warn", "warnings, degraded links")                                                    \
    X(ERROR, "error", "errors, failed flows, rising error counters")                               \
    X(INFO, "info", "informational findings")                                                      \
    X(GPU, "gpu", "GPUs in the tree")                                                              \
    X(NIC, "nic", "NICs and ports in the tree")                                                    \
    X(SWITCH, "switch", "PCIe and fabric switches")                                                \
    X(BAR, "bar", "histogram and throughput bars")                                                 \
    X(BAR_LOADED, "bar_loaded", "the loaded phase's bars beside the quiet ones")                   \
    X(P50, "p50", "the p50 marker (identity, not a rating)")                                       \
    X(P99, "p99", "the p99 marker (identity, not a rating)")                                       \
    X(P999, "p999", "the p99.9 marker (identity, not a rating)")                                   \
    X(BETTER, "better", "a change for the better (compare_change_of: 10 % or more)")               \
    X(WORSE, "worse", "a change for the worse, by 10 % up to 2x")                                  \
    X(MUCH_WORSE, "much_worse", "a change for the worse by 2x or more")                            \
    X(DIFF, "diff", "a test condition that differs between compared results")                      \
    X(INPUT, "input", "an editable field")                                                         \
    X(KEY, "key", "a key name in the help and the key bar")

enum theme_role {
#define THEME_ENUM(name, key, what) ROLE_##name,
    THEME_ROLES(THEME_ENUM)
#undef THEME_ENUM
        ROLE_COUNT
};

/* How one role looks: colours as 0-255 (-1 = the terminal's default) and attributes. */
struct theme_style {
    short fg, bg;
    unsigned attrs; /* THEME_A_* */
    unsigned mono;  /* attributes used without colour */
};

enum {
    THEME_A_BOLD = 1u << 0,
    THEME_A_UNDERLINE = 1u << 1,
    THEME_A_REVERSE = 1u << 2,
    THEME_A_DIM = 1u << 3,
    THEME_A_STANDOUT = 1u << 4,
};

struct theme {
    char name[64];
    struct theme_style role[ROLE_COUNT];
};

/* The compiled-in default theme. */
void theme_default(struct theme *t);
/* Load a theme by name (searched in $XDG_CONFIG_HOME/fabtop/themes, the installed
 * share/fabtop/themes, this source tree's themes/) or path; t->name becomes the file's name
 * without ".json". Roles the file leaves out keep the default's look. On any error t keeps
 * the default and err says what was wrong with which file. */
int theme_load(const char *name_or_path, struct theme *t, struct ft_err *err);
/* Theme names available, "default" first, then sorted (NULL-terminated; free with
 * theme_free_names). "default" is listed even without a file: it is compiled in. */
char **theme_list(void);
/* Replace t with the theme after t->name in theme_list() order, wrapping round (the t key).
 * Themes that fail to load are skipped: the first failure is described in err and its -errno
 * returned, and t holds the next theme that did load (the compiled-in default if none). */
int theme_next(struct theme *t, struct ft_err *err);
void theme_free_names(char **names);
const char *theme_role_name(enum theme_role r);
/* The role that shows a change (compare_change_of, engine/results/compare.h): better,
 * worse, much worse; no change is NORMAL. */
enum theme_role theme_role_of_change(enum compare_change c);
const char *theme_role_what(enum theme_role r);
/* Parse "red", "brightblue", "default", "208", "#ff8700" into 0-255 / -1. */
int theme_parse_color(const char *s, short *out);
/* Nearest of the first n colours (8, 16 or 256) for a 256-colour index; -1 stays -1. */
short theme_downsample(short c, int ncolors);
/* The colour pair to use for a style on a terminal of ncolors (8, 16 or 256): both colours
 * down-sampled; without default colours (use_default_colors() failed) -1 becomes white text
 * on black; a foreground that fell onto its background's colour becomes black or white. */
void theme_resolve(const struct theme_style *s, int ncolors, bool default_colors, short *fg,
                   short *bg);

#endif
