/* test_view_results: the results view drawn in process (newterm on /dev/null, 80x24 and
 * larger): `fabtop --results FILE` opens that file's conditions and outcome; the list shows
 * the saved results in $XDG_DATA_HOME newest first (an unreadable one says so) and scrolls;
 * Space marks two, c compares them with the differing condition in the diff colour and why
 * it matters; v shows the report; Esc goes back. SHOW_SCREENS=1 prints every screen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <cmocka.h>
#include <curses.h>

#include "common/strbuf.h"
#include "tests/compare/docs.h"
#include "tests/topology/synth_xml.h"
#include "tests/tui/screen.h"
#include "tui/app.h"

static char tmp[256];

struct scr {
    SCREEN *s;
    FILE *out, *in;
    struct app app;
};

static void row(int y, char *buf, int len)
{
    int n = mvinnstr(y, 0, buf, len - 1);
    if (n < 0)
        n = 0;
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == ' ')
        buf[--n] = '\0';
}

static void show(const char *title)
{
    if (!getenv("SHOW_SCREENS"))
        return;
    printf("---- %s (%dx%d)\n", title, COLS, LINES);
    /* Line-drawing cells (ACS letters) as the box characters a terminal shows. */
    static const char acs[] = "qxlkmjtu", *const box[] = {"─", "│", "┌", "┐", "└", "┘", "├", "┤"};
    for (int y = 0; y < LINES; y++) {
        char line[2048];
        size_t n = 0;
        int end = 0;
        for (int x = 0; x < COLS; x++)
            if ((mvinch(y, x) & A_CHARTEXT) != ' ')
                end = x + 1;
        for (int x = 0; x < end && n + 4 < sizeof(line); x++) {
            chtype c = mvinch(y, x);
            const char *k = (c & A_ALTCHARSET) ? strchr(acs, (int)(c & A_CHARTEXT)) : NULL;
            if (k) {
                n += (size_t)snprintf(line + n, sizeof(line) - n, "%s", box[k - acs]);
            } else {
                line[n++] = (char)(c & A_CHARTEXT);
            }
        }
        line[n] = '\0';
        printf("%s\n", line);
    }
}

/* Row containing needle (from row `from`), or -1; *x gets its column. */
static int find_text(const char *needle, int from, int *x)
{
    char buf[512];
    for (int y = from; y < LINES; y++) {
        row(y, buf, sizeof(buf));
        char *p = strstr(buf, needle);
        if (p) {
            if (x)
                *x = (int)(p - buf);
            return y;
        }
    }
    return -1;
}

static void expect_text(const char *needle)
{
    if (find_text(needle, 0, NULL) < 0) {
        char buf[512];
        for (int y = 0; y < LINES; y++) {
            row(y, buf, sizeof(buf));
            fprintf(stderr, "|%s\n", buf);
        }
        fail_msg("not on the screen: '%s'", needle);
    }
}

static void draw(struct scr *s)
{
    app_draw(&s->app);
}

static void keys(struct scr *s, const int *k, int n)
{
    for (int i = 0; i < n; i++) {
        app_key(&s->app, k[i]);
        draw(s);
    }
}

static void write_doc(const char *name, const char *mix, const char *when, int mtu)
{
    struct doc_opts o;
    doc_defaults(&o);
    o.mix = mix;
    o.started_at = when;
    o.active_mtu = mtu;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmp, name);
    if (doc_write(&o, path) < 0)
        fail_msg("cannot write %s", path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof(tmp), "/tmp/fabtop-view-results-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    char dir[400];
    snprintf(dir, sizeof(dir), "%s/data", tmp);
    mkdir(dir, 0755);
    snprintf(dir, sizeof(dir), "%s/data/fabtop", tmp);
    mkdir(dir, 0755);
    snprintf(dir, sizeof(dir), "%s/data/fabtop/results", tmp);
    mkdir(dir, 0755);
    snprintf(dir, sizeof(dir), "%s/config", tmp);
    mkdir(dir, 0755);
    write_doc("data/fabtop/results/20260102-030405-probe-test.json", "probe-test",
              "2026-01-02T03:04:05.000Z", 4096);
    write_doc("data/fabtop/results/20260103-030405-probe-mtu.json", "probe-mtu",
              "2026-01-03T03:04:05.000Z", 1024);
    for (int i = 1; i <= 3; i++) {
        char name[128], when[64];
        snprintf(name, sizeof(name), "data/fabtop/results/2025120%d-old.json", i);
        snprintf(when, sizeof(when), "2025-12-0%dT10:00:00.000Z", i);
        write_doc(name, "old-run", when, 4096);
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/data/fabtop/results/garbage.json", tmp);
    FILE *f = fopen(path, "w");
    fputs("{\"format\": \"fabtop-topology\", \"version\": 1}", f);
    fclose(f);
    /* The list dates an unreadable file by its mtime: a fixed one (2025-11-30 00:00 UTC). */
    struct utimbuf ut = {.actime = 1764460800, .modtime = 1764460800};
    utime(path, &ut);
    write_doc("opened.json", "opened-run", "2026-01-04T03:04:05.000Z", 4096);
    snprintf(path, sizeof(path), "%s/synth.xml", tmp);
    f = fopen(path, "w");
    fputs(synth_v2_xml, f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/data", tmp);
    setenv("XDG_DATA_HOME", path, 1);
    setenv("TZ", "UTC", 1);
    unsetenv("NO_COLOR");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static void open_screen(struct scr *s, int rows, int cols)
{
    char results[400], config[400], input[400];
    snprintf(results, sizeof(results), "%s/opened.json", tmp);
    snprintf(config, sizeof(config), "%s/config", tmp);
    /* The synthetic machine, so that the header names the same host everywhere. */
    snprintf(input, sizeof(input), "%s/synth.xml", tmp);
    struct app_opts o = {.results = results, .config_dir = config, .input = input};
    struct ft_err err = {0};
    memset(s, 0, sizeof(*s));
    if (app_init(&s->app, &o, &err) < 0)
        fail_msg("app_init: %s", err.msg);
    s->out = fopen("/dev/null", "w");
    s->in = fopen("/dev/null", "r");
    s->s = newterm("xterm-256color", s->out, s->in);
    if (!s->s)
        fail_msg("newterm: no xterm-256color terminfo entry");
    set_term(s->s);
    resizeterm(rows, cols);
    ui_setup(&s->app.ui, stdscr, &s->app.theme, false);
    draw(s);
}

static void close_screen(struct scr *s)
{
    endwin();
    delscreen(s->s);
    fclose(s->out);
    fclose(s->in);
    app_fini(&s->app);
}

static void test_view_80x24(void **state)
{
    (void)state;
    struct scr s;
    open_screen(&s, 24, 80);
    /* --results FILE opens the results view on that file. */
    assert_int_equal(s.app.view, VIEW_RESULTS);
    show("--results opened.json");
    expect_text("F5 Results");
    expect_text("Results: 7 saved, 0 marked");
    expect_text("Conditions: opened-run");
    expect_text("active MTU: 4096 bytes");
    expect_text("loaded probe 4KiB");
    expect_text("p99 4.00");
    /* Newest first: the opened file (Jan 4), then Jan 3, then Jan 2. */
    int y0 = find_text("opened-run", 3, NULL), y1 = find_text("probe-mtu", 3, NULL),
        y2 = find_text("probe-test", 3, NULL);
    assert_true(y0 > 0 && y1 > y0 && y2 > y1);
    int x;
    int y = find_text("*2026-01-04 03:04", 3, &x);
    assert_true(y == y0);
    expect_text("node2:7000");
    expect_text("p99 4.0 us");

    /* The list scrolls: the unreadable file is last and says why. */
    keys(&s, (const int[]){KEY_END}, 1);
    show("End: the unreadable file");
    expect_text("garbage.json");
    expect_text("bad     not a fabtop");
    assert_true(find_text("opened-run", 3, NULL) < 0 ||
                find_text("opened-run", 3, NULL) > 8); /* scrolled off the list */
    keys(&s, (const int[]){'\n'}, 1);
    expect_text("this is a topology snapshot");

    /* Mark Jan 3 (MTU 1024) and Jan 2 (MTU 4096), compare. */
    keys(&s, (const int[]){KEY_HOME, KEY_DOWN, ' ', KEY_DOWN, ' '}, 5);
    show("two marked");
    y = find_text("A 2026-01-03", 3, NULL);
    assert_true(y > 0);
    assert_true(find_text("B 2026-01-02", 3, NULL) == y + 1);
    keys(&s, (const int[]){'c'}, 1);
    show("c: compare");
    expect_text("A|B: 1 unfair, 0 caution, 1 info");
    expect_text("Not like for like");
    y = find_text("UNFAIR port mlx5_0/1: active MTU", 10, &x);
    assert_true(y > 0);
    /* Left pane, in the diff colour. */
    assert_true(x < 40);
    attr_t want = ui_attr(&s.app.ui, ROLE_DIFF);
    assert_true(want != ui_attr(&s.app.ui, ROLE_NORMAL));
    assert_int_equal(mvinch(y, x + 2) & (A_ATTRIBUTES | A_COLOR), want);
    y = find_text("A 1024 bytes", 10, &x);
    assert_true(y > 0);
    assert_int_equal(mvinch(y, x) & (A_ATTRIBUTES | A_COLOR), want);
    expect_text("B 4096 bytes");
    expect_text("why: a smaller MTU");
    /* The outcome side by side with the ratio. */
    expect_text("Outcome A|B");
    expect_text("p99 us");
    expect_text("x1.00");

    /* z widens the conditions pane; scrolling reaches the conditions that are the same. */
    keys(&s, (const int[]){'\t', 'z'}, 2);
    show("Tab z: conditions zoomed");
    expect_text("A 1024 bytes");
    keys(&s, (const int[]){KEY_NPAGE, KEY_NPAGE}, 2);
    show("PgDn PgDn: the same conditions");
    expect_text("link layer: InfiniBand");
    keys(&s, (const int[]){'z', 27}, 2);

    /* Esc leaves the comparison; Enter and v show the report of the selected result. */
    keys(&s, (const int[]){KEY_BTAB, KEY_HOME, '\n', 'v'}, 4);
    show("Enter v: report");
    expect_text("Report:");
    expect_text("mix opened-run");
    expect_text("Phase loaded");
    close_screen(&s);
}

static void test_view_large(void **state)
{
    (void)state;
    struct scr s;
    open_screen(&s, 40, 140);
    keys(&s, (const int[]){KEY_DOWN, ' ', KEY_DOWN, ' ', 'c'}, 5);
    show("compare at 140x40");
    expect_text("UNFAIR port mlx5_0/1: active MTU");
    /* Wide enough: A and B on one line. */
    int x;
    int y = find_text("A 1024 bytes", 10, &x);
    assert_true(y > 0);
    assert_true(find_text("B 4096 bytes", y, NULL) == y);
    expect_text("(probe, loaded)");
    /* Too small: a message, no crash. */
    resizeterm(20, 60);
    app_key(&s.app, KEY_RESIZE);
    draw(&s);
    expect_text("Terminal too small");
    close_screen(&s);
}

/* A finished run's results not saved yet: listed first, opened on entering the view; w
 * saves them into the results directory, after which they are listed once, as saved. */
static void test_view_unsaved(void **state)
{
    (void)state;
    char config[400];
    snprintf(config, sizeof(config), "%s/config", tmp);
    struct app_opts o = {.config_dir = config};
    struct ft_err err = {0};
    struct scr s;
    memset(&s, 0, sizeof(s));
    if (app_init(&s.app, &o, &err) < 0)
        fail_msg("app_init: %s", err.msg);
    struct doc_opts d;
    doc_defaults(&d);
    d.mix = "fresh-run";
    d.started_at = "2026-02-01T00:00:00.000Z";
    s.app.results = doc_make(&d);
    s.out = fopen("/dev/null", "w");
    s.in = fopen("/dev/null", "r");
    s.s = newterm("xterm-256color", s.out, s.in);
    assert_non_null(s.s);
    set_term(s.s);
    resizeterm(24, 80);
    ui_setup(&s.app.ui, stdscr, &s.app.theme, false);
    app_switch(&s.app, VIEW_RESULTS);
    draw(&s);
    show("a finished run, not saved");
    expect_text("+ this run, not saved (w saves)");
    expect_text("Conditions: fresh-run");
    int y = find_text("fresh-run", 3, NULL);
    assert_true(y > 0 && y < find_text("probe-mtu", 3, NULL));
    keys(&s, (const int[]){'w'}, 1);
    assert_true(s.app.results_path[0] != '\0');
    assert_non_null(strstr(s.app.results_path, "/data/fabtop/results/"));
    assert_int_equal(access(s.app.results_path, R_OK), 0);
    /* The tick notices the saved path and lists the file once. */
    app_views[VIEW_RESULTS]->tick(&s.app);
    draw(&s);
    show("w: saved");
    expect_text("Results: 7 saved, 0 marked");
    assert_true(find_text("not saved", 0, NULL) < 0);
    y = find_text("fresh-run", 3, NULL);
    assert_true(y > 0 && find_text("fresh-run", y + 1, NULL) != y + 1);
    expect_text(" *2026-02-01 00:00 fresh-run");
    close_screen(&s);
    unlink(s.app.results_path);
}

/* The screen against expected/NAME-COLSxROWS.txt, the temporary directory read as $TMP;
 * without the passing message (it is timed, so it would depend on the machine's speed). */
static bool matches(struct scr *s, const char *name)
{
    s->app.msg[0] = '\0';
    draw(s);
    char *text = screen_dump(NULL);
    struct strbuf sb;
    strbuf_init(&sb);
    size_t n = strlen(tmp);
    for (const char *p = text; *p;) {
        if (!strncmp(p, tmp, n)) {
            strbuf_add(&sb, "$TMP");
            p += n;
        } else {
            strbuf_addn(&sb, p++, 1);
        }
    }
    free(text);
    char full[128];
    snprintf(full, sizeof(full), "%s-%dx%d", name, COLS, LINES);
    bool ok = screen_text_matches(sb.s, full);
    strbuf_free(&sb);
    return ok;
}

/* The list with the opened result, two compared, and a report, against expected screens. */
static void test_expected_screens(void **state)
{
    (void)state;
    bool ok = true;
    for (int size = 0; size < 2; size++) {
        struct scr s;
        open_screen(&s, size ? 43 : 24, size ? 132 : 80);
        ok &= matches(&s, "results-opened");
        keys(&s, (const int[]){KEY_DOWN, ' ', KEY_DOWN, ' ', 'c'}, 5);
        ok &= matches(&s, "results-compare");
        keys(&s, (const int[]){27, KEY_HOME, '\n', 'v'}, 4);
        ok &= matches(&s, "results-report");
        /* Sorted by name and filtered to the old runs (issue 21: sort and filter in every
         * list). */
        keys(&s, (const int[]){'v', 27, 27, KEY_HOME, '>', '\\', 'o', 'l', 'd', '\n'}, 10);
        ok &= matches(&s, "results-filtered");
        close_screen(&s);
    }
    assert_true(ok);
}

/* Sort and filter in the list, as htop's: > (F6) and < step through the orders, \\ filters
 * on the row's text as typed; the selection stays on its result; Enter opens the row
 * selected, not the entry of the same number in the unfiltered list. */
static void test_sort_filter(void **state)
{
    (void)state;
    struct scr s;
    open_screen(&s, 43, 132);
    keys(&s, (const int[]){27, 27}, 2);
    int yo = find_text("opened-run", 0, NULL);
    assert_true(yo > 0);
    /* By mix: the file that is no result (named after itself), old-run, opened-run,
     * probe-mtu, probe-test. */
    keys(&s, (const int[]){'>'}, 1);
    s.app.msg[0] = '\0';
    draw(&s);
    expect_text(" by mix ");
    int yg = find_text("garbage.json", 0, NULL), yd = find_text("old-run", 0, NULL),
        ym = find_text("probe-mtu", 0, NULL), yt = find_text("probe-test", 0, NULL);
    yo = find_text("opened-run", 0, NULL);
    if (!(yg > 0 && yg < yd && yd < yo && yo < ym && ym < yt))
        fail_msg("not in order of mix: garbage %d old %d opened %d mtu %d test %d", yg, yd, yo, ym,
                 yt);
    /* F6 steps on (peer), < comes back to mix. */
    keys(&s, (const int[]){KEY_F(6), '<'}, 2);
    expect_text(" by mix ");
    /* The filter applies as typed: "probe-" leaves the two probe mixes. */
    keys(&s, (const int[]){'\\', 'p', 'r', 'o', 'b', 'e', '-'}, 7);
    expect_text("/probe-");
    expect_text("2 shown by mix 'probe-'");
    assert_int_equal(find_text("old-run", 0, NULL), -1);
    keys(&s, (const int[]){'\n', KEY_DOWN, '\n'}, 3);
    expect_text("Conditions: probe-test");
    /* A filter that holds nothing says so; an empty one lists them all again. */
    keys(&s, (const int[]){'\\', 'z', 'z', 'q'}, 4);
    expect_text("No result holds the filter's text");
    keys(&s, (const int[]){'\n', '\\', '\n'}, 3);
    assert_true(find_text("old-run", 0, NULL) > 0);
    assert_int_equal(find_text(" shown", 0, NULL), -1);
    /* < back to the list's own order, newest first: the selection stays on probe-test. */
    keys(&s, (const int[]){'<'}, 1);
    s.app.msg[0] = '\0';
    draw(&s);
    assert_int_equal(find_text(" by ", 0, NULL), -1);
    assert_true(find_text("probe-mtu", 0, NULL) < find_text("probe-test", 0, NULL));
    keys(&s, (const int[]){'\n'}, 1);
    expect_text("Conditions: probe-test");
    close_screen(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_80x24),   cmocka_unit_test(test_view_large),
        cmocka_unit_test(test_view_unsaved), cmocka_unit_test(test_expected_screens),
        cmocka_unit_test(test_sort_filter),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
