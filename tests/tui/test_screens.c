/* test_screens: the explorer's views drawn in process (newterm on /dev/null) and read back,
 * against expected screens in tests/tui/expected: the topology view (tree, detail, matrix,
 * findings, Enter on a finding, search), help, too small, bad themes, NO_COLOR and colour
 * fallbacks, the t key, the sweep view (8 and 50 ranks). With --shared, the same on real topology
 * exports from $FABTOP_SHARED_DATA (exit 77 when they are absent). */
#include <errno.h>
#include <ftw.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "common/strbuf.h"
#include "engine/xport/xport.h"
#include "tests/topology/synth_xml.h"
#include "tests/tui/screen.h"
#include "tui/config.h"

static char tmpdir[256];
static char cfgdir[300];
static char shared_dir[1024];

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

static struct app_opts synth_opts(void)
{
    struct app_opts o = {.input = "synth.xml", .config_dir = cfgdir};
    return o;
}

/* Open a screen on opts at rows x cols, feed keys, draw, compare with NAME-COLSxROWS. */
static void scenario(const char *name, const struct app_opts *o, const char *keys, int rows,
                     int cols)
{
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, rows, cols, o), 0);
    screen_draw(&s);
    screen_keys(&s, keys);
    screen_draw(&s);
    char full[128];
    snprintf(full, sizeof(full), "%s-%dx%d", name, cols, rows);
    bool ok = screen_matches(&s, full);
    screen_close(&s);
    assert_true(ok);
}

static void both_sizes(const char *name, const char *keys)
{
    struct app_opts o = synth_opts();
    scenario(name, &o, keys, 24, 80);
    scenario(name, &o, keys, 43, 132);
}

/* The colour pair of role r, as ui_setup made it. */
static short pair_of(enum theme_role r)
{
    return (short)(r + 1);
}

static bool cell_has_pair(struct screen *s, int y, int x, enum theme_role r)
{
    return PAIR_NUMBER(screen_attr(s, y, x)) == pair_of(r);
}

/* ---- the topology view ---- */

static void test_topo_tree(void **state)
{
    (void)state;
    both_sizes("topo-tree", "");
    /* The first tree line is selected; the port is ACTIVE (ok), GPUs have their role. */
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    assert_true(cell_has_pair(&s, 3, 1, ROLE_SELECTED));
    int y = screen_find_row(&s, "port 1 ACTIVE");
    assert_true(y > 0);
    assert_true(cell_has_pair(&s, y, 11, ROLE_OK));
    y = screen_find_row(&s, "GPU1 0000:81:00.0");
    assert_true(y > 0);
    assert_true(cell_has_pair(&s, y, 7, ROLE_GPU));
    assert_true(cell_has_pair(&s, 0, 0, ROLE_HEADER));
    assert_true(cell_has_pair(&s, 23, 0, ROLE_STATUS));
    /* The focused pane's border. */
    assert_true(cell_has_pair(&s, 2, 0, ROLE_BORDER_FOCUS));
    assert_true(cell_has_pair(&s, 2, 44, ROLE_BORDER));
    screen_close(&s);
}

static void test_topo_gpu_detail(void **state)
{
    (void)state;
    both_sizes("topo-gpu", "j j j j");
}

static void test_topo_port_detail(void **state)
{
    (void)state;
    both_sizes("topo-port", "j j j j j j");
}

static void test_topo_matrix(void **state)
{
    (void)state;
    both_sizes("topo-matrix", "m");
    /* m again: back to the detail. */
    both_sizes("topo-tree", "m m");
}

static void test_topo_findings(void **state)
{
    (void)state;
    both_sizes("topo-findings", "Tab Tab j");
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_keys(&s, "Tab Tab");
    screen_draw(&s);
    int warn = screen_find_row(&s, "WARN  GPU1");
    int info = screen_find_row(&s, "INFO  synth");
    assert_true(warn > 0 && info == warn + 1);
    /* Focused findings: the selected one is highlighted, the others keep their severity. */
    assert_true(cell_has_pair(&s, warn, 1, ROLE_SELECTED));
    assert_true(cell_has_pair(&s, info, 1, ROLE_INFO));
    assert_true(cell_has_pair(&s, warn - 1, 0, ROLE_BORDER_FOCUS));
    screen_keys(&s, "j");
    screen_draw(&s);
    assert_true(cell_has_pair(&s, warn, 1, ROLE_WARN));
    assert_true(cell_has_pair(&s, info, 1, ROLE_SELECTED));
    screen_close(&s);
}

static void test_topo_finding_jump(void **state)
{
    (void)state;
    /* The first finding is about GPU1: Enter selects it in the tree and shows its detail. */
    both_sizes("topo-jump", "Tab Tab Enter");
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_keys(&s, "Tab Tab Enter");
    screen_draw(&s);
    int y = screen_find_row(&s, "GPU1 0000:81:00.0");
    assert_true(y > 0);
    assert_true(cell_has_pair(&s, y, 1, ROLE_SELECTED));
    assert_int_equal(s.app.focus, 0);
    assert_true(cell_has_pair(&s, 2, 0, ROLE_BORDER_FOCUS));
    screen_close(&s);
}

static void test_topo_search(void **state)
{
    (void)state;
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    /* While typing, the query shows above the key line. */
    screen_keys(&s, "/ p o r");
    screen_draw(&s);
    char row[512];
    screen_row(&s, 22, row, sizeof(row));
    assert_int_equal(strncmp(row, "/por      ", 10), 0);
    screen_keys(&s, "t Enter");
    screen_draw(&s);
    int y = screen_find_row(&s, "port 1 ACTIVE");
    assert_true(y > 0);
    assert_true(cell_has_pair(&s, y, 1, ROLE_SELECTED));
    /* A search that finds nothing says so. */
    screen_keys(&s, "/nvswitch");
    screen_draw(&s);
    screen_row(&s, 23, row, sizeof(row));
    assert_non_null(strstr(row, "'nvswitch' not found"));
    screen_close(&s);
}

/* ---- the other views ---- */

/* The live and fabric views before any run: what to do next. */
static void test_idle_views(void **state)
{
    (void)state;
    both_sizes("live-idle", "F4");
    both_sizes("fabric-idle", "F6");
}

/* tests/tui/data/sweep-8.json, the end-to-end test's 8-rank sweep document. */
static const char *sweep8_path(void)
{
    static char doc[1100];
    const char *src = getenv("FABTOP_SRC");
    snprintf(doc, sizeof(doc), "%s/tests/tui/data/sweep-8.json", src ? src : "..");
    return doc;
}

/* The sweep view on the 8-rank document of the end-to-end test: the same screen at 80x24,
 * the shades' colours (rk-h5's row red, a healthy pair green), the cursor's pair, a verdict
 * jump. */
static void test_sweep_view(void **state)
{
    (void)state;
    const char *doc = sweep8_path();
    struct app_opts o = synth_opts();
    o.results = doc;
    scenario("sweep", &o, "", 24, 80);
    scenario("sweep", &o, "", 43, 132);
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    int y = screen_find_row(&s, "5!rk-h5");
    assert_int_equal(y, 12);
    assert_true(cell_has_pair(&s, 12, 12, ROLE_ERROR));                /* [5][0] at 0.25x */
    assert_true(cell_has_pair(&s, 7, 15, ROLE_OK));                    /* [0][1] */
    assert_true(cell_has_pair(&s, 8, 1 + 10 + 3 * 3 + 1, ROLE_ERROR)); /* [1][3] failed */
    screen_keys(&s, "Right Right");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "bw 0->1 94.2 Gb/s") > 0);
    assert_true(screen_find_row(&s, "[#]") == 7);
    screen_keys(&s, "Tab Down Enter");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Pair 1 -> 3 ─") > 0);
    assert_true(screen_find_row(&s, "[X]") == 8);
    screen_close(&s);
}

/* The verdicts sort and filter as every list does (> or F6, <, \\), and a click on a cell
 * or a verdict selects it (issue 21). */
static void test_sweep_sort_click(void **state)
{
    (void)state;
    const char *doc = sweep8_path();
    struct app_opts o = synth_opts();
    o.results = doc;
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 43, 132, &o), 0);
    screen_draw(&s);
    int named = screen_find_row(&s, "NAMED   rank "), failed = screen_find_row(&s, "pair_failed");
    assert_true(named > 0 && failed == named + 1);
    /* By kind: pair_failed, rank, uplink. */
    screen_keys(&s, "> >");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Verdicts (3 by kind)") > 0);
    assert_int_equal(screen_find_row(&s, "pair_failed"), named);
    assert_int_equal(screen_find_row(&s, "NAMED   rank "), named + 1);
    /* By ratio the rank's 0.25x (4x off the rack's) first. */
    screen_keys(&s, ">");
    screen_draw(&s);
    assert_int_equal(screen_find_row(&s, "NAMED   rank "), named);
    /* The filter rk-h1 leaves the failed pair; Enter jumps to its cell. */
    screen_keys(&s, "\\ r k - h 1 Enter");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Verdicts (3, 1 shown by ratio 'rk-h1')") > 0);
    assert_int_equal(screen_find_row(&s, "NAMED   rank "), -1);
    screen_keys(&s, "Enter");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Pair 1 -> 3 \u2500") > 0);
    /* Nothing holds zzz; an empty filter and < back to the document's order. */
    screen_keys(&s, "\\ z z z Enter");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "No verdict holds the filter's text") > 0);
    screen_keys(&s, "\\ Enter < < <");
    s.app.msg[0] = '\0';
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Verdicts (3): ") > 0);
    assert_int_equal(screen_find_row(&s, "NAMED   rank "), named);
    screen_close(&s);
    /* Clicks at 80x24: cell [5][0] (the one test_sweep_view finds at row 12, column 12),
     * then rank 2's number, then the second verdict, whose Enter jumps to pair 1 -> 3. */
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    app_mouse(&s.app, 12, 12, BUTTON1_PRESSED);
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Pair 5 -> 0 \u2500") > 0);
    int r2 = screen_find_row(&s, "2 rk-h2");
    assert_true(r2 > 0);
    app_mouse(&s.app, r2, 3, BUTTON1_PRESSED);
    screen_draw(&s);
    assert_true(screen_find_row(&s, "rank 2  rk-h2") > 0);
    int v2 = screen_find_row(&s, "pair_failed");
    app_mouse(&s.app, v2, 10, BUTTON1_PRESSED);
    screen_keys(&s, "Enter");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Pair 1 -> 3 \u2500") > 0);
    screen_close(&s);
}

/* Past SWEEP_GRID_SUMMARY_OVER ranks, one line per rank (sweep-8.json's ranks copied to 50,
 * the new ones not measured), scrolling with the cursor. */
static void test_sweep_many_ranks(void **state)
{
    (void)state;
    const char *doc = sweep8_path();
    cJSON *j = NULL;
    assert_int_equal(jsonutil_load(doc, &j, NULL), 0);
    cJSON *ranks = cJSON_GetObjectItem(j, "ranks");
    for (int i = 8; i < 50; i++) {
        cJSON *r = cJSON_Duplicate(cJSON_GetArrayItem(ranks, 0), 1);
        char host[16];
        snprintf(host, sizeof(host), "node-%02d", i);
        cJSON_ReplaceItemInObject(r, "rank", cJSON_CreateNumber(i));
        cJSON_ReplaceItemInObject(r, "host", cJSON_CreateString(host));
        cJSON_AddItemToArray(ranks, r);
    }
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    assert_true(write_text("sweep-50.json", text));
    free(text);
    struct app_opts o = synth_opts();
    o.results = "sweep-50.json";
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    assert_true(screen_find_row(&s, "50 ranks  pairs  failed  round 7 of 7") > 0);
    assert_true(screen_find_row(&s, "rank host     median     ratio worst X") > 0);
    assert_true(screen_find_row(&s, "   5!rk-h5    23.4 Gb/s  0.25x 0 0.25x") > 0);
    assert_true(screen_find_row(&s, "   1 rk-h1    93.7 Gb/s  1.00x 5 0.25x X1") > 0);
    assert_true(screen_find_row(&s, " more ") > 0);
    assert_int_equal(screen_find_row(&s, "node-49"), -1);
    screen_keys(&s, "End");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "  49 node-49  n/a") > 0);
    assert_true(screen_find_row(&s, "rank 49  node-49") > 0);
    screen_close(&s);
}

/* The setup view on the synthetic machine, where only TCP can run: the reasons verbs and
 * NCCL give are this machine's (the driver's words), so they are masked; the transports'
 * own tests check them. Skipped where verbs or NCCL can run (other lines differ there). */
static void test_setup_view(void **state)
{
    (void)state;
    char why[256];
    if (xport_verbs.available(why, sizeof(why)) == 0 || xport_nccl.available(why, sizeof(why)) == 0)
        skip();
    struct app_opts o = synth_opts();
    for (int size = 0; size < 2; size++) {
        struct screen s;
        int rows = size ? 43 : 24, cols = size ? 132 : 80;
        assert_int_equal(screen_open(&s, NULL, rows, cols, &o), 0);
        screen_keys(&s, "F2");
        screen_draw(&s);
        char *text = screen_dump(&s);
        screen_close(&s);
        struct strbuf sb;
        strbuf_init(&sb);
        for (char *line = text, *nl; *line; line = nl + 1) {
            nl = strchr(line, '\n');
            if (!nl)
                break;
            *nl = '\0';
            if (!strncmp(line, "   verbs: ", 10) || !strncmp(line, "   nccl: ", 9)) {
                *strchr(line + 3, ':') = '\0';
                strbuf_printf(&sb, "%s: (this machine's reason)\n", line);
            } else {
                strbuf_printf(&sb, "%s\n", line);
            }
        }
        free(text);
        char name[64];
        snprintf(name, sizeof(name), "setup-%dx%d", cols, rows);
        bool ok = screen_text_matches(sb.s, name);
        strbuf_free(&sb);
        assert_true(ok);
    }
}

/* ---- help, too small ---- */

static void test_help(void **state)
{
    (void)state;
    both_sizes("help", "F1");
    struct app_opts o = synth_opts();
    scenario("help-page2", &o, "F1 PgDn", 24, 80);
    /* Esc goes back to the topology view. */
    both_sizes("topo-tree", "F1 Esc");
}

static void test_too_small(void **state)
{
    (void)state;
    struct app_opts o = synth_opts();
    scenario("too-small", &o, "", 20, 60);
    /* Shrinking a running explorer and growing it back. */
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    screen_resize(&s, 23, 80);
    assert_true(screen_find_row(&s, "Terminal too small: 80x23.") >= 0);
    screen_resize(&s, 24, 79);
    assert_true(screen_find_row(&s, "Terminal too small: 79x24.") >= 0);
    screen_resize(&s, 24, 80);
    bool ok = screen_matches(&s, "topo-tree-80x24");
    screen_resize(&s, 43, 132);
    ok = ok && screen_matches(&s, "topo-tree-132x43");
    screen_close(&s);
    assert_true(ok);
}

/* ---- themes and colours ---- */

static void assert_default_colours(struct screen *s)
{
    struct theme d;
    theme_default(&d);
    assert_string_equal(s->app.theme.name, "default");
    assert_memory_equal(s->app.theme.role, d.role, sizeof(d.role));
    short fg, bg;
    pair_content(pair_of(ROLE_HEADER), &fg, &bg);
    assert_int_equal(fg, 15);
    assert_int_equal(bg, 4);
    assert_true(screen_attr(s, 0, 0) & A_BOLD);
}

static void test_bad_theme(void **state)
{
    (void)state;
    assert_true(write_text("bad.json", "{\n  \"name\": \"bad\",\n  \"roles\": {\n"
                                       "    \"header\": {\"fg\": \"red\" \"bg\": \"blue\"}\n"
                                       "  }\n}\n"));
    struct app_opts o = synth_opts();
    o.theme = "./bad.json";
    scenario("topo-badtheme", &o, "", 24, 80);
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    assert_default_colours(&s);
    assert_true(cell_has_pair(&s, 23, 0, ROLE_WARN));
    screen_close(&s);

    /* Well-formed JSON that is not right: the role is named. */
    assert_true(write_text("typo.json", "{\"roles\": {\"headr\": {\"fg\": \"red\"}}}\n"));
    o.theme = "./typo.json";
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    char row[512];
    screen_row(&s, 23, row, sizeof(row));
    assert_string_equal(row, "using the default theme: ./typo.json: unknown role \"headr\"");
    assert_default_colours(&s);
    screen_close(&s);

    /* A theme name that does not exist lists the ones that do. */
    o.theme = "solarized";
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    screen_row(&s, 23, row, sizeof(row));
    assert_string_equal(row, "using the default theme: theme 'solarized' not found (themes: "
                             "default, high-con");
    assert_default_colours(&s);
    screen_close(&s);
}

/* Every cell without colour; header, key line and selection in reverse video. */
static void assert_monochrome(struct screen *s, const char *what)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++)
            if (screen_attr(s, y, x) & A_COLOR)
                fail_msg("%s: cell %d,%d has colour pair %d", what, y, x,
                         (int)PAIR_NUMBER(screen_attr(s, y, x)));
    assert_int_equal(s->app.ui.ncolors, 0);
    assert_true((screen_attr(s, 0, 0) & (A_REVERSE | A_BOLD)) == (A_REVERSE | A_BOLD));
    assert_true(screen_attr(s, 23, 0) & A_REVERSE);
    assert_true(screen_attr(s, 3, 1) & A_REVERSE); /* the selected tree line */
    int y = screen_find_row(s, "WARN  GPU1");
    assert_true(y > 0 && (screen_attr(s, y, 1) & A_BOLD));
}

static void test_no_color(void **state)
{
    (void)state;
    /* NO_COLOR (cli_explore turns it into no_color) on a colour terminal. */
    struct app_opts o = synth_opts();
    o.no_color = true;
    scenario("topo-tree", &o, "", 24, 80);
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    assert_monochrome(&s, "NO_COLOR");
    screen_close(&s);
    /* A terminal without colours gives the same. */
    o.no_color = false;
    assert_int_equal(screen_open(&s, "vt100", 24, 80, &o), 0);
    screen_draw(&s);
    assert_monochrome(&s, "vt100");
    screen_close(&s);
}

/* Each role's pair is what theme_resolve says for this terminal, and readable. */
static void assert_pairs(struct screen *s, int ncolors)
{
    assert_int_equal(s->app.ui.ncolors, ncolors);
    for (int r = 0; r < ROLE_COUNT; r++) {
        short fg, bg, wfg, wbg;
        pair_content(pair_of((enum theme_role)r), &fg, &bg);
        theme_resolve(&s->app.theme.role[r], ncolors, true, &wfg, &wbg);
        assert_int_equal(fg, wfg);
        assert_int_equal(bg, wbg);
        assert_true(fg < ncolors && bg < ncolors);
        if (fg >= 0 && fg == bg)
            fail_msg("%s: role %s is %d on %d at %d colours", s->app.theme.name,
                     theme_role_name((enum theme_role)r), fg, bg, ncolors);
    }
}

static void test_colour_fallbacks(void **state)
{
    (void)state;
    static const char *const themes[] = {"default", "high-contrast", "light", "monochrome"};
    static const struct {
        const char *term;
        int ncolors;
    } terms[] = {{"xterm-256color", 256}, {"rxvt-unicode", 16}, {"xterm", 8}}; /* 88: 16 */
    for (size_t t = 0; t < sizeof(themes) / sizeof(themes[0]); t++)
        for (size_t k = 0; k < sizeof(terms) / sizeof(terms[0]); k++) {
            struct app_opts o = synth_opts();
            o.theme = themes[t];
            struct screen s;
            assert_int_equal(screen_open(&s, terms[k].term, 24, 80, &o), 0);
            assert_string_equal(s.app.theme.name, themes[t]);
            screen_draw(&s);
            assert_pairs(&s, terms[k].ncolors);
            assert_true(cell_has_pair(&s, 0, 0, ROLE_HEADER));
            screen_close(&s);
        }
    /* The default theme's input field, bright white on grey, is white on white in 8 colours
     * unless the fallback picks another foreground. */
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, "xterm", 24, 80, &o), 0);
    short fg, bg;
    pair_content(pair_of(ROLE_INPUT), &fg, &bg);
    assert_int_equal(bg, 7);
    assert_int_equal(fg, 0);
    pair_content(pair_of(ROLE_GPU), &fg, &bg);
    assert_int_equal(fg, 2); /* bright green -> green */
    screen_close(&s);
}

static void test_theme_key(void **state)
{
    (void)state;
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    assert_string_equal(s.app.theme.name, "default");
    static const char *const order[] = {"high-contrast", "light", "monochrome", "default"};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        screen_keys(&s, "t");
        screen_draw(&s);
        assert_string_equal(s.app.theme.name, order[i]);
        char name[96];
        snprintf(name, sizeof(name), "topo-theme-%s-80x24", order[i]);
        assert_true(screen_matches(&s, name));
        assert_pairs(&s, 256);
        /* Remembered in the config file. */
        struct config c;
        config_load(cfgdir, &c);
        assert_string_equal(c.error, "");
        assert_string_equal(c.theme, order[i]);
        config_free(&c);
        if (i == 0) {
            /* The next start opens with the remembered theme. */
            screen_close(&s);
            assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
            assert_string_equal(s.app.theme.name, "high-contrast");
        }
    }
    /* --theme overrides the remembered one for this session. */
    screen_keys(&s, "t");
    screen_close(&s);
    o.theme = "light";
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    assert_string_equal(s.app.theme.name, "light");
    screen_close(&s);
    remove("config/config.json");
}

/* A malformed config.json: one message naming the file at start, the file left as it is
 * (not overwritten by t), and the explorer usable with defaults. */
static void test_bad_config(void **state)
{
    (void)state;
    mkdir("config", 0755);
    static const char bad[] = "{\"theme\": \"light\",\n \"peer\": }\n";
    assert_true(write_text("config/config.json", bad));
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    char row[512];
    screen_row(&s, 23, row, sizeof(row));
    /* HOME is the temporary directory: the path is shown from ~. */
    static const char want[] = "settings ignored, ~/config/config.json:2:10: malformed JSON "
                               "(check for a missin";
    assert_true(!strncmp(row, want, strlen(want)));
    assert_true(cell_has_pair(&s, 23, 0, ROLE_WARN));
    assert_string_equal(s.app.theme.name, "default");
    assert_true(screen_find_row(&s, "GPU0") >= 0);
    /* t changes the theme for this session but leaves the owner's file alone. */
    screen_keys(&s, "t");
    screen_draw(&s);
    assert_string_equal(s.app.theme.name, "high-contrast");
    screen_row(&s, 23, row, sizeof(row));
    assert_non_null(strstr(row, "not remembered"));
    screen_close(&s);
    FILE *f = fopen("config/config.json", "r");
    assert_non_null(f);
    char back[128] = "";
    size_t n = fread(back, 1, sizeof(back) - 1, f);
    fclose(f);
    back[n] = '\0';
    assert_string_equal(back, bad);
    remove("config/config.json");
}

/* The key line at 80 columns: whole keys only, and the way out always there. */
static void test_key_line(void **state)
{
    (void)state;
    struct app_opts o = synth_opts();
    struct screen s;
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    screen_draw(&s);
    char row[512];
    screen_row(&s, 23, row, sizeof(row));
    assert_string_equal(row, " Up/Down move  Tab pane  Enter go to finding  m matrix  / search"
                             "  F10 quit");
    screen_resize(&s, 43, 132);
    screen_row(&s, 42, row, sizeof(row));
    assert_string_equal(row, " Up/Down move  Tab pane  Enter go to finding  m matrix  / search"
                             "  n next  F2 setup  F10 quit");
    screen_close(&s);
}

/* Key routing: digit n is Fn everywhere but in the setup form, where a digit typed on a
 * field goes into the field and one typed on a row that takes no typing (Start, a choice)
 * is refused with a word, neither starting a run nor leaving the view (issue 21: "64KiB"
 * typed on Start used to start a run and jump to the live view). */
static void test_key_routing(void **state)
{
    (void)state;
    struct app_opts o = synth_opts();
    struct screen s;
    char row[512];
    assert_int_equal(screen_open(&s, NULL, 24, 80, &o), 0);
    /* The digits follow the tabs' F-keys: 3 is F3 Topology, 1 is F1 Help, 2 is F2 Setup. */
    screen_keys(&s, "3");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "Topology") >= 0);
    screen_keys(&s, "1");
    screen_draw(&s);
    screen_row(&s, 2, row, sizeof(row));
    assert_non_null(strstr(row, "Help"));
    screen_keys(&s, "2");
    screen_draw(&s);
    screen_row(&s, 2, row, sizeof(row));
    assert_non_null(strstr(row, "Test setup"));
    /* Typed on Message size (five rows down), the digits are the field's. */
    screen_keys(&s, "Down Down Down Down Down 6 4 K i B Enter");
    screen_draw(&s);
    int y = screen_find_row(&s, "Message size");
    assert_true(y >= 0);
    screen_row(&s, y, row, sizeof(row));
    assert_non_null(strstr(row, "64KiB"));
    assert_non_null(strstr(row, "preset: 512 B"));
    screen_row(&s, 2, row, sizeof(row));
    assert_non_null(strstr(row, "Test setup"));
    /* On Start (six rows further) a digit is refused: the view stays, no run starts. */
    screen_keys(&s, "Down Down Down Down Down Down 4");
    screen_draw(&s);
    screen_row(&s, 2, row, sizeof(row));
    assert_non_null(strstr(row, "Test setup"));
    assert_true(screen_find_row(&s, "this row takes no typing") >= 0);
    assert_int_equal(screen_find_row(&s, "Live run"), -1);
    assert_int_equal(screen_find_row(&s, "measuring"), -1);
    screen_close(&s);
}

/* ---- real topology exports (--shared) ---- */

static void shared_scenario(const char *file, const char *name, const char *keys, int rows,
                            int cols)
{
    /* A relative path, so that the header reads the same wherever the data lives. */
    char dir[1200];
    snprintf(dir, sizeof(dir), "%s/hwloc-xml", shared_dir);
    assert_int_equal(chdir(dir), 0);
    struct app_opts o = synth_opts();
    o.input = file;
    scenario(name, &o, keys, rows, cols);
    assert_int_equal(chdir(tmpdir), 0);
}

static void test_shared_dgx2(void **state)
{
    (void)state;
    /* 16 V100 behind PLX switches, 8 InfiniBand HCAs, 12 NVSwitches. */
    shared_scenario("hwloc-tests_nvidiaDGX2.xml", "dgx2-tree", "", 43, 132);
    shared_scenario("hwloc-tests_nvidiaDGX2.xml", "dgx2-tree", "", 24, 80);
    shared_scenario("hwloc-tests_nvidiaDGX2.xml", "dgx2-matrix", "m", 43, 132);
    /* The matrix scrolled: 16 GPU columns do not fit 80x24; Right moves the columns under
     * the frozen row labels and column heads, Down the rows under the heads. */
    shared_scenario("hwloc-tests_nvidiaDGX2.xml", "dgx2-matrix-scrolled",
                    "m Tab Right Right Right Right Right Down Down Down", 24, 80);
    /* Far right: the last columns (CPU and NUMA affinity) fill the pane, no further. */
    shared_scenario("hwloc-tests_nvidiaDGX2.xml", "dgx2-matrix-right",
                    "m Tab Right Right Right Right Right Right Right Right Right Right Right Right "
                    "Right Right Right Right Right Right Right Right",
                    24, 80);
}

/* ipa20's five findings at 80x24: the lint list scrolls to the last one and the detail
 * pane shows it whole with its fix line (issue 21: 3 of 5 were shown, never a fix). */
static void test_shared_ipa20(void **state)
{
    (void)state;
    shared_scenario("flux-core_ipa20.xml", "ipa20-lint-scrolled", "Tab Tab End", 24, 80);
}

static void test_shared_wholeio(void **state)
{
    (void)state;
    /* Two Xeon E5 sockets, Tesla GPUs, an AMD GPU and a ConnectX HCA: findings; Enter on
     * GPU1's jumps to GPU1; Enter on the machine-wide note says it has no line in the tree. */
    shared_scenario("hwloc-tests_32em64t-2n8c2t-pci-wholeio.xml", "wholeio-tree", "", 43, 132);
    shared_scenario("hwloc-tests_32em64t-2n8c2t-pci-wholeio.xml", "wholeio-jump", "Tab Tab j Enter",
                    43, 132);
    shared_scenario("hwloc-tests_32em64t-2n8c2t-pci-wholeio.xml", "wholeio-nojump",
                    "Tab Tab End Enter", 24, 80);
    shared_scenario("hwloc-tests_32em64t-2n8c2t-pci-wholeio.xml", "wholeio-matrix", "m", 24, 80);
}

static void test_shared_lassen(void **state)
{
    (void)state;
    /* POWER9 with NVLink-attached V100s whose memory shows up as NUMA nodes. */
    shared_scenario("mpibind_coral-lassen.xml", "lassen-tree", "", 43, 132);
    shared_scenario("mpibind_coral-lassen.xml", "lassen-matrix", "m", 43, 132);
}

/* ---- set-up ---- */

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabtop-tui-XXXXXX");
    if (!mkdtemp(tmpdir) || chdir(tmpdir) < 0)
        return -1;
    snprintf(cfgdir, sizeof(cfgdir), "%s/config", tmpdir);
    /* No user themes or config, no inherited size or colour wishes. */
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
    setenv("HOME", tmpdir, 1);
    unsetenv("LINES");
    unsetenv("COLUMNS");
    unsetenv("NO_COLOR");
    (void)synth_v1_xml;
    return write_text("synth.xml", synth_v2_xml) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    if (chdir("/") == 0 && tmpdir[0])
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

int main(int argc, char **argv)
{
    /* Screens that differ land where ctest runs us, not in the temporary directory. */
    char cwd[1024];
    if (getcwd(cwd, sizeof(cwd)))
        screen_set_actual_dir(cwd);
    /* Expected screens are UTF-8 (box characters); the views draw with the locale. */
    if (!setlocale(LC_ALL, "C.UTF-8"))
        setlocale(LC_ALL, "");
    if (argc > 1 && !strcmp(argv[1], "--shared")) {
        const char *d = getenv("FABTOP_SHARED_DATA");
        char probe[1200];
        snprintf(probe, sizeof(probe), "%s/hwloc-xml/hwloc-tests_nvidiaDGX2.xml", d ? d : "");
        if (!d || !*d || access(probe, R_OK) != 0) {
            printf("SKIP: no reference topologies (FABTOP_SHARED_DATA=%s)\n", d ? d : "");
            return 77;
        }
        snprintf(shared_dir, sizeof(shared_dir), "%s", d);
        const struct CMUnitTest shared[] = {
            cmocka_unit_test(test_shared_dgx2),
            cmocka_unit_test(test_shared_wholeio),
            cmocka_unit_test(test_shared_lassen),
            cmocka_unit_test(test_shared_ipa20),
        };
        return cmocka_run_group_tests(shared, group_setup, group_teardown);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_tree),        cmocka_unit_test(test_topo_gpu_detail),
        cmocka_unit_test(test_topo_port_detail), cmocka_unit_test(test_topo_matrix),
        cmocka_unit_test(test_topo_findings),    cmocka_unit_test(test_topo_finding_jump),
        cmocka_unit_test(test_topo_search),      cmocka_unit_test(test_help),
        cmocka_unit_test(test_setup_view),       cmocka_unit_test(test_idle_views),
        cmocka_unit_test(test_too_small),        cmocka_unit_test(test_bad_theme),
        cmocka_unit_test(test_no_color),         cmocka_unit_test(test_colour_fallbacks),
        cmocka_unit_test(test_theme_key),        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_key_line),         cmocka_unit_test(test_sweep_view),
        cmocka_unit_test(test_sweep_many_ranks), cmocka_unit_test(test_sweep_sort_click),
        cmocka_unit_test(test_key_routing),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
