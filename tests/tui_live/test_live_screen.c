/* test_live_screen: the live view drawn in process (newterm on /dev/null, read back with
 * mvwinnstr) at 80x24 and 132x43: before any run, during and after a real 1 s loopback TCP
 * ping-pong, a short quiet-vs-loaded run, and a made-up snapshot with port-wide counters
 * (n/a, saturated, a rising error counter, ? on a counter); results that cannot go into the
 * results directory saved to a fallback file. Screens are printed. */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curses.h>

#include "common/jsonutil.h"
#include "engine/flow/flow.h"
#include "engine/flow/mix.h"
#include "engine/results/results.h"
#include "engine/run/runner.h"
#include "tui/app.h"
#include "tui/live_plot.h"
#include "tests/tui/screen.h"

#include "../topology/synth_xml.h"
#include "tests/run/mixtest.h"

/* A topology path long enough that the header must cut it short at 80 columns. */
#define LONG_DIR   "topologies-captured-during-rack-bring-up/node-17"
#define LONG_INPUT LONG_DIR "/synth.xml"

static char tmpdir[64];
static char topo_path[128];
static SCREEN *scr;
static FILE *scr_out, *scr_in;
static char screen[64][1024]; /* the last grab, one line per row, trailing blanks cut */
static int screen_rows;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void resize(int rows, int cols)
{
    resizeterm(rows, cols);
}

/* Draw one frame and read the screen back. */
static void frame(struct app *a)
{
    app_draw(a);
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    (void)cols;
    screen_rows = rows;
    for (int y = 0; y < rows && y < 64; y++) {
        char *l = screen[y];
        int n = mvwinnstr(stdscr, y, 0, l, (int)sizeof(screen[y]) - 1);
        if (n < 0)
            n = 0;
        l[n] = '\0';
        while (n > 0 && l[n - 1] == ' ')
            l[--n] = '\0';
    }
}

static void print_screen(const char *what)
{
    int cols;
    int rows;
    getmaxyx(stdscr, rows, cols);
    printf("---- %s (%dx%d) ----\n", what, cols, rows);
    for (int y = 0; y < screen_rows; y++)
        printf("%s\n", screen[y]);
    fflush(stdout);
}

static int find_line(const char *needle)
{
    for (int y = 0; y < screen_rows; y++)
        if (strstr(screen[y], needle))
            return y;
    return -1;
}

/* The column (in characters) where needle starts in line, or -1. */
static int text_col(const char *line, const char *needle)
{
    const char *p = strstr(line, needle);
    if (!p)
        return -1;
    int x = 0;
    for (const char *q = line; q < p; q++)
        x += ((unsigned char)*q & 0xc0) != 0x80;
    return x;
}

static bool on_screen(const char *needle)
{
    return find_line(needle) >= 0;
}

/* The histogram pane's title row (the first line with "Latency "), or "". */
static const char *hist_title(void)
{
    int y = find_line("Latency ");
    return y >= 0 ? screen[y] : "";
}

#define assert_on_screen(s)                                                                        \
    do {                                                                                           \
        if (!on_screen(s)) {                                                                       \
            print_screen("missing: " s);                                                           \
            fail_msg("not on the screen: %s", s);                                                  \
        }                                                                                          \
    } while (0)

/* Numbers that follow label in the percentile pane's row (right of the histogram's border,
 * read back as ACS 'x' or as U+2502): up to max of them; n/a counts as NaN. Returns how
 * many, or -1 when there is no such row. */
static int row_numbers(const char *label, double *v, int max)
{
    for (int y = 0; y < screen_rows; y++) {
        const char *p = NULL;
        for (int k = 0; k < 2 && !p; k++) {
            char pat[32];
            snprintf(pat, sizeof(pat), "%s%s ", k ? "\u2502" : "x", label);
            p = strstr(screen[y], pat);
            if (p)
                p += strlen(pat);
        }
        if (!p)
            continue;
        int n = 0;
        while (n < max) {
            while (*p == ' ')
                p++;
            if (!strncmp(p, "n/a", 3)) {
                v[n++] = NAN;
                p += 3;
                continue;
            }
            char *end;
            double d = strtod(p, &end);
            if (end == p)
                break;
            v[n++] = d;
            p = end;
            while (*p && *p != ' ')
                p++;
        }
        return n;
    }
    return -1;
}

static int setup(void **state)
{
    (void)state;
    setlocale(LC_ALL, "C.UTF-8");
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabtop-live-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    snprintf(topo_path, sizeof(topo_path), "%s/synth.xml", tmpdir);
    FILE *f = fopen(topo_path, "w");
    assert_non_null(f);
    fputs(synth_v2_xml, f);
    fclose(f);
    assert_int_equal(chdir(tmpdir), 0);
    assert_int_equal(system("mkdir -p " LONG_DIR " && cp synth.xml " LONG_INPUT), 0);
    char data[128];
    snprintf(data, sizeof(data), "%s/data", tmpdir);
    setenv("XDG_DATA_HOME", data, 1);
    scr_out = fopen("/dev/null", "w");
    scr_in = fopen("/dev/null", "r");
    scr = newterm("xterm-256color", scr_out, scr_in);
    assert_non_null(scr);
    set_term(scr);
    resize(24, 80);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    endwin();
    delscreen(scr);
    fclose(scr_out);
    fclose(scr_in);
    if (chdir("/") != 0)
        fprintf(stderr, "chdir /: %m\n");
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return 0;
}

/* A topology path long enough that the header must cut it short at 80 columns. */

static void app_open_input(struct app *a, const char *input)
{
    char cfg[128];
    snprintf(cfg, sizeof(cfg), "%s/config", tmpdir);
    struct app_opts o = {.input = input, .config_dir = cfg};
    struct ft_err err = {0};
    if (app_init(a, &o, &err) < 0)
        fail_msg("app_init: %s", err.msg);
    ui_setup(&a->ui, stdscr, &a->theme, false);
    a->msg[0] = '\0';
}

/* Relative to the working directory (tmpdir), so that the header reads the same in every
 * run (the expected screens). */
static void app_open(struct app *a)
{
    app_open_input(a, "synth.xml");
}

/* What the event loop does with the engine: the newest snapshot, the results at the end. */
static void pump(struct app *a)
{
    app_poll(a);
}

static void start(struct app *a, const char *json)
{
    struct mix m = mixtest_parse(json);
    struct ft_err err = {0};
    if (app_start_run(a, &m, NULL, &err) < 0)
        fail_msg("app_start_run: %s", err.msg);
    mix_free(&m);
    assert_int_equal(a->view, VIEW_LIVE);
}

static const char pingpong_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"live-pp\", \"flows\": [{\"name\": "
    "\"pp\", \"transport\": \"tcp\", \"op\": \"pingpong\", \"size\": 64, \"warmup_s\": 0.2, "
    "\"duration_s\": 1, \"peer\": \"loopback\"}]}";

static void no_run(void **state)
{
    (void)state;
    struct app a;
    app_open(&a);
    app_switch(&a, VIEW_LIVE);
    resize(24, 80);
    frame(&a);
    print_screen("no run");
    assert_on_screen("F4 Live");
    assert_on_screen("No test has run");
    assert_on_screen("F2");
    app_key(&a, 's');
    assert_non_null(strstr(a.msg, "No test is running"));
    app_key(&a, 'w');
    assert_non_null(strstr(a.msg, "Not saved"));
    app_fini(&a);
}

static void pingpong(void **state)
{
    (void)state;
    struct app a;
    app_open_input(&a, LONG_INPUT);
    resize(24, 80);
    start(&a, pingpong_mix);
    bool saw_measuring = false, saw_setup = false;
    for (int i = 0; i < 200 && !a.results; i++) {
        pump(&a);
        frame(&a);
        saw_setup |= on_screen("connecting (setup)") || on_screen("warm-up");
        if (!saw_measuring && on_screen("measuring,") && on_screen("s left")) {
            saw_measuring = true;
            a.msg[0] = '\0';
            frame(&a);
            print_screen("ping-pong, measuring");
            /* At 80 columns the header cuts the host and topology path short and keeps the
             * run's status whole at its right end; the key line keeps whole keys and F10. */
            assert_null(strstr(screen[0], "synth.xml")); /* cut short */
            const char *st = strstr(screen[0], "live-pp ");
            assert_non_null(st);
            assert_non_null(strstr(st, ": measuring "));
            assert_non_null(strstr(st, "/1.2 s"));
            assert_non_null(strstr(screen[0], " fabtop "));
            const char *keys = screen[screen_rows - 1];
            assert_non_null(strstr(keys, " ? explain "));
            assert_non_null(strstr(keys, "  F10 quit"));
            assert_string_equal(keys + strlen(keys) - strlen("F10 quit"), "F10 quit");
            /* Saving while it runs is refused with a reason. */
            app_key(&a, 'w');
            assert_non_null(strstr(a.msg, "still running"));
        }
        sleep_ms(50);
    }
    assert_non_null(a.results);
    assert_true(saw_measuring);
    (void)saw_setup;

    for (int size = 0; size < 2; size++) {
        resize(size ? 43 : 24, size ? 132 : 80);
        a.msg[0] = '\0';
        frame(&a);
        print_screen("ping-pong, done");
        /* The histogram: title with the latency kind, decade labels, markers, legend. */
        assert_on_screen("Latency pp");
        assert_on_screen("half");
        /* The transport's choices on the histogram's bottom edge. */
        assert_on_screen(" MSS ");
        assert_on_screen("▲p50");
        assert_on_screen("p99.9");
        bool decade =
            on_screen("1us ") || on_screen("10us") || on_screen("100us") || on_screen("1ms");
        assert_true(decade);
        /* The percentile table with numbers: p50 <= p99 <= max. */
        assert_on_screen("Percentiles");
        double p50[4], p99[4], mx[4];
        assert_int_equal(row_numbers("p50", p50, 4), 1);
        assert_int_equal(row_numbers("p99", p99, 4), 1);
        assert_int_equal(row_numbers("max", mx, 4), 1);
        assert_true(p50[0] > 0 && p50[0] <= p99[0] && p99[0] <= mx[0]);
        /* The timeline and the events with the progress at the end. */
        assert_on_screen("Goodput");
        assert_on_screen("Events");
        assert_on_screen("pp: done");
        assert_on_screen("done after");
        assert_on_screen("TCP");
    }

    /* Every size from the minimum up keeps every pane readable; below it, the app says so. */
    static const int rows[] = {24, 25, 31, 43, 60, 75}, cols[] = {80, 81, 99, 132, 201, 260};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        for (size_t j = 0; j < sizeof(cols) / sizeof(cols[0]); j++) {
            resize(rows[i], cols[j]);
            frame(&a);
            assert_on_screen("▲p50");
            assert_on_screen("Goodput");
            assert_on_screen("Events");
            assert_on_screen("done after");
            double v[2];
            assert_int_equal(row_numbers("p99", v, 2), 1);
        }
    resize(23, 79);
    frame(&a);
    assert_on_screen("too small");
    resize(24, 80);

    /* Keys: y switches the count scale, p pauses the display, w saves. */
    app_key(&a, 'y');
    frame(&a);
    assert_on_screen("linear");
    app_key(&a, 'p');
    assert_true(a.display_paused);
    app_key(&a, 'p');
    assert_false(a.display_paused);
    app_key(&a, 'w');
    assert_non_null(strstr(a.msg, "Results saved to"));
    struct stat sb;
    assert_int_equal(stat(a.results_path, &sb), 0);
    /* Tab moves the focus through the five panes. */
    for (int i = 0; i < 5; i++)
        app_key(&a, '\t');
    assert_int_equal(a.focus, 0);
    app_fini(&a);
}

/* Results that cannot go into the results directory (a file stands where its parent should
 * be): a warning when the run starts, and w saves them to a named fallback file in the
 * current directory instead of losing them. */
static void unsaveable(void **state)
{
    (void)state;
    char blocked[160], data[160];
    snprintf(blocked, sizeof(blocked), "%s/blocked", tmpdir);
    assert_int_equal(mkdir(blocked, 0755), 0);
    snprintf(data, sizeof(data), "%s/blocked/fabtop", tmpdir);
    FILE *f = fopen(data, "w");
    assert_non_null(f);
    fclose(f);
    const char *old = getenv("XDG_DATA_HOME");
    char saved[160];
    snprintf(saved, sizeof(saved), "%s", old ? old : "");
    setenv("XDG_DATA_HOME", blocked, 1);
    struct app a;
    app_open(&a);
    start(&a, pingpong_mix);
    if (!strstr(a.msg, "results cannot be saved in ") || !strstr(a.msg, "blocked/fabtop/results"))
        fail_msg("no warning when the run starts: '%s'", a.msg);
    for (int i = 0; i < 200 && !a.results; i++) {
        pump(&a);
        sleep_ms(50);
    }
    assert_non_null(a.results);
    app_key(&a, 'w');
    if (!strstr(a.msg, "cannot create the results directory") || !strstr(a.msg, "instead"))
        fail_msg("w: '%s'", a.msg);
    char want[200];
    snprintf(want, sizeof(want), "%s/fabtop-results-", tmpdir);
    assert_non_null(strstr(a.results_path, want));
    cJSON *doc = NULL;
    struct ft_err err = {0};
    assert_int_equal(results_load(a.results_path, &doc, &err), 0);
    cJSON_Delete(doc);
    unlink(a.results_path);
    app_fini(&a);
    setenv("XDG_DATA_HOME", saved, 1);
}

static const char quiet_loaded_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"live-ql\", \"phases\": "
    "[\"quiet\", \"loaded\"], \"flows\": [{\"name\": \"probe\", \"role\": \"foreground\", "
    "\"transport\": \"tcp\", \"op\": \"pingpong\", \"size\": 64, \"warmup_s\": 0.1, "
    "\"duration_s\": 0.6, \"peer\": \"loopback\"}, {\"name\": \"bulk\", \"role\": "
    "\"background\", \"transport\": \"tcp\", \"op\": \"stream\", \"size\": \"64KiB\", "
    "\"warmup_s\": 0.1, \"rate_gbps\": 2, \"peer\": \"loopback\"}]}";

static void quiet_vs_loaded(void **state)
{
    (void)state;
    struct app a;
    app_open(&a);
    resize(24, 80);
    start(&a, quiet_loaded_mix);
    bool checked_loaded = false;
    for (int i = 0; i < 300 && !a.results; i++) {
        pump(&a);
        frame(&a);
        /* In the loaded phase, the quiet column keeps the quiet phase's numbers. */
        if (!checked_loaded && a.snap->phase_index == 1 && !a.snap->done &&
            (a.snap->flows[0].valid & SNAP_V_LAT)) {
            double v[4];
            int n = row_numbers("p50", v, 4);
            if (n >= 2 && !isnan(v[1])) {
                print_screen("quiet vs loaded, loaded phase");
                assert_false(isnan(v[0]));
                /* The quiet phase's distribution over the loaded one, as dots on the same
                 * axis (issue 21). */
                int ty = find_line("probe loaded"), dots = 0;
                assert_true(ty >= 0);
                for (int y = ty + 1; y < ty + 8 && y < screen_rows; y++)
                    dots += strstr(screen[y], "\u2022") != NULL;
                assert_true(dots > 0);
                checked_loaded = true;
            }
        }
        sleep_ms(50);
    }
    assert_non_null(a.results);
    assert_true(checked_loaded);
    for (int size = 0; size < 2; size++) {
        resize(size ? 43 : 24, size ? 132 : 80);
        a.msg[0] = '\0';
        frame(&a);
        print_screen("quiet vs loaded, done");
        assert_on_screen("quiet");
        assert_on_screen("loaded");
        assert_on_screen("l/q");
        double v[4];
        assert_true(row_numbers("p99", v, 4) >= 3);
        assert_false(isnan(v[0]) || isnan(v[1]) || isnan(v[2]));
        assert_on_screen("bulk: done");
        /* The timeline's header keeps its now and max columns. */
        int y = find_line("each on its own");
        assert_true(y >= 0);
        assert_non_null(strstr(screen[y], "now    max"));
    }
    /* The events pane scrolls back to the first event. */
    a.focus = 4;
    app_key(&a, KEY_HOME);
    frame(&a);
    assert_on_screen("phase quiet");
    app_key(&a, KEY_END);
    frame(&a);
    assert_false(on_screen("phase quiet"));
    assert_on_screen("bulk: done");
    /* After the run the loaded histogram is shown (the quiet dots with their p99 where the
     * legend has room: 132 columns); picking the quiet column in the table shows the quiet
     * phase's, from the results (its count, not the loaded one's). */
    assert_non_null(strstr(hist_title(), "Latency probe loaded,"));
    {
        int ty = find_line("Latency probe loaded,"), dots = 0;
        for (int y = ty + 1; y < ty + 16 && y < screen_rows; y++)
            dots += strstr(screen[y], "\u2022") != NULL;
        assert_true(dots > 0);
    }
    /* d: the CDF, which reaches all samples (a full column) at the largest latency. */
    app_key(&a, 'd');
    frame(&a);
    {
        int cy = find_line("CDF probe loaded,");
        assert_true(cy >= 0);
        assert_non_null(strstr(screen[cy + 1], "\u2588"));
    }
    app_key(&a, 'd');
    frame(&a);
    assert_non_null(strstr(hist_title(), "Latency probe loaded,"));
    a.focus = 1;
    app_key(&a, KEY_HOME);
    frame(&a);
    assert_non_null(strstr(hist_title(), "Latency probe quiet,"));
    double v[4];
    assert_true(row_numbers("count", v, 4) >= 2);
    char want[32], legend[48];
    live_fmt_si(want, sizeof(want), v[0]);
    snprintf(legend, sizeof(legend), "n=%s", want);
    if (!on_screen(legend))
        fail_msg("the quiet histogram's legend lacks %s", legend);
    app_key(&a, KEY_RIGHT);
    frame(&a);
    assert_non_null(strstr(hist_title(), "Latency probe loaded,"));
    live_fmt_si(want, sizeof(want), v[1]);
    snprintf(legend, sizeof(legend), "n=%s", want);
    if (!on_screen(legend))
        fail_msg("the loaded histogram's legend lacks %s", legend);
    app_fini(&a);
}

/* The quiet phase watched from another view: back on F4 in the loaded phase, the quiet
 * column still has the quiet phase's numbers (before the results exist). */
static void quiet_off_screen(void **state)
{
    (void)state;
    struct app a;
    app_open(&a);
    resize(24, 80);
    start(&a, quiet_loaded_mix);
    app_switch(&a, VIEW_TOPO);
    bool saw_quiet = false, checked = false;
    for (int i = 0; i < 300 && !a.results && !checked; i++) {
        pump(&a);
        frame(&a);
        if (!a.snap)
            continue;
        saw_quiet |= a.snap->phase_index == 0 && (a.snap->flows[0].valid & SNAP_V_LAT);
        if (a.snap->phase_index == 1 && !a.snap->done && (a.snap->flows[0].valid & SNAP_V_LAT)) {
            assert_false(on_screen("Percentiles"));
            app_switch(&a, VIEW_LIVE);
            frame(&a);
            double v[4];
            int n = row_numbers("p50", v, 4);
            if (n < 2 || isnan(v[1])) { /* the loaded column not filled yet: look again */
                app_switch(&a, VIEW_TOPO);
                continue;
            }
            print_screen("quiet vs loaded, back on F4 in the loaded phase");
            assert_false(isnan(v[0]));
            assert_true(v[0] > 0);
            checked = true;
        }
        sleep_ms(50);
    }
    assert_true(saw_quiet);
    assert_true(checked);
    app_stop_run(&a);
    app_fini(&a);
}

/* A snapshot made up here, with counters of every kind the panel must show. */
static struct runner_snapshot *fake_snapshot(void)
{
    struct runner_snapshot *s = calloc(1, sizeof(*s));
    atomic_init(&s->refs, 1);
    s->gen = 5;
    s->nphases = 1;
    snprintf(s->phase_name, sizeof(s->phase_name), "loaded");
    s->run_phase = RUN_PH_MEASURE;
    s->phase_elapsed_s = 1.5;
    s->phase_total_s = 4;
    s->t_s = 1.7;
    s->nflows = 1;
    s->flows = calloc(1, sizeof(*s->flows));
    snprintf(s->flows[0].name, sizeof(s->flows[0].name), "pp");
    s->flows[0].status = FLOW_RUNNING;
    s->flows[0].state = FLOW_ST_MEASURE;
    s->fg = 0;
    hist_init(&s->hist);
    s->nevents = 2;
    snprintf(s->events[0], sizeof(s->events[0]), "  0.001s phase loaded: all flows");
    snprintf(s->events[1], sizeof(s->events[1]), "  1.200s pp FAILED: peer gone");
    s->ncounters = 6;
    s->counters = calloc(6, sizeof(*s->counters));
    struct counters_value *c = s->counters;
    for (int i = 0; i < 6; i++) {
        c[i].source = COUNTERS_SRC_NETDEV;
        snprintf(c[i].object, sizeof(c[i].object), "eth0");
        c[i].unit = "packets";
        c[i].valid = COUNTERS_V_VALUE | COUNTERS_V_RATE | COUNTERS_V_DELTA;
    }
    snprintf(c[0].name, sizeof(c[0].name), "rx_packets");
    c[0].value = 123456789;
    c[0].rate = 12345;
    c[0].delta = 45678;
    snprintf(c[1].name, sizeof(c[1].name), "rx_dropped");
    c[1].error_like = true;
    c[1].value = 10;
    c[1].rate = 1;
    c[1].delta = 3;
    snprintf(c[2].name, sizeof(c[2].name), "tx_errors");
    c[2].error_like = true;
    c[2].valid = 0;
    /* Known not to have moved: listed only after z. */
    snprintf(c[4].name, sizeof(c[4].name), "tx_carrier_errors");
    c[4].error_like = true;
    /* A gauge: its level and its peak during the test. */
    c[5].source = COUNTERS_SRC_QDISC;
    snprintf(c[5].object, sizeof(c[5].object), "eth0 qdisc 1: htb");
    snprintf(c[5].name, sizeof(c[5].name), "backlog");
    c[5].kind = COUNTERS_GAUGE;
    c[5].unit = "bytes";
    c[5].valid = COUNTERS_V_VALUE | COUNTERS_V_PEAK;
    c[5].value = 3000;
    c[5].peak = 64000;
    c[3].source = COUNTERS_SRC_IB;
    snprintf(c[3].object, sizeof(c[3].object), "mlx5_0/1");
    snprintf(c[3].name, sizeof(c[3].name), "symbol_error");
    c[3].error_like = true;
    c[3].saturated = true;
    c[3].value = 65535;
    return s;
}

/* The live view on a made-up snapshot of a run of mix (JSON). */
static void open_made_up(struct app *a, const char *mix, struct runner_snapshot *snap)
{
    app_open(a);
    app_switch(a, VIEW_LIVE);
    a->run_mix = mixtest_parse(mix);
    a->have_run_mix = true;
    a->snap = snap;
}

static void counters(void **state)
{
    (void)state;
    struct app a;
    open_made_up(&a, pingpong_mix, fake_snapshot());
    for (int size = 0; size < 2; size++) {
        resize(size ? 43 : 24, size ? 132 : 80);
        a.focus = 0;
        frame(&a);
        print_screen("made-up counters");
        assert_on_screen("port-wide");
        assert_on_screen("rx_packets");
        assert_on_screen("12.3k pkt");
        if (!size) {
            /* 80x24 has room for five lines: the last one is reached by scrolling. */
            assert_false(on_screen("saturated"));
            a.focus = 3;
            app_key(&a, KEY_END);
            frame(&a);
            print_screen("made-up counters, End in the counters pane");
            assert_on_screen("symbol_error");
            /* Unfocused, so no line is drawn selected for the colour check below. */
            a.focus = 0;
            frame(&a);
        }
        assert_on_screen("saturated");
        assert_on_screen("No samples yet");
        int y = find_line("rx_dropped");
        assert_true(y >= 0);
        /* The rising error counter is drawn in the error role. */
        const char *p = strstr(screen[y], "rx_dropped");
        int x = 0;
        for (const char *q = screen[y]; q < p; q++)
            x += ((unsigned char)*q & 0xc0) != 0x80;
        chtype ch = mvwinch(stdscr, y, x);
        assert_int_equal(PAIR_NUMBER(ch & A_COLOR), PAIR_NUMBER(a.ui.attr[ROLE_ERROR] & A_COLOR));
        int ty = find_line("tx_errors");
        assert_true(ty >= 0);
        assert_non_null(strstr(screen[ty], "n/a"));
        assert_on_screen("pp FAILED");
        assert_false(on_screen("tx_carrier_errors"));
        if (size) {
            assert_on_screen("5/6 moved");
            int g = find_line("backlog");
            assert_true(g >= 0);
            assert_non_null(strstr(screen[g], "3.00k B"));
            assert_non_null(strstr(screen[g], "max 64.0k B"));
        }
    }
    /* z lists every counter, also those that did not move. */
    app_key(&a, 'z');
    frame(&a);
    assert_on_screen("tx_carrier_errors");
    assert_on_screen("all 6 counters");
    app_key(&a, 'z');
    /* Select a counter in the counters pane and ask what it means. */
    a.focus = 3;
    app_key(&a, KEY_UP);
    frame(&a);
    app_key(&a, '?');
    assert_int_equal(a.view, VIEW_HELP);
    /* A click on a counter's row selects it: ? then explains that one (issue 21). */
    app_switch(&a, VIEW_LIVE);
    a.focus = 0;
    frame(&a);
    int cy = find_line("rx_dropped");
    assert_true(cy >= 0);
    app_mouse(&a, cy, text_col(screen[cy], "rx_dropped"), BUTTON1_PRESSED);
    assert_int_equal(a.focus, 3);
    frame(&a);
    app_key(&a, '?');
    assert_int_equal(a.view, VIEW_HELP);
    frame(&a);
    print_screen("? after a click on rx_dropped");
    assert_on_screen("rx_dropped");
    app_fini(&a);
}

/* ---- the histogram follows the selected flow ---- */

/* Two ping-pong flows: Right in the percentile table moves the histogram to the other one
 * while the run goes on (the runner's snapshots switch), Left brings the foreground back
 * after the run (from the results document, same count as the results say). */
static void hist_follows_selection(void **state)
{
    (void)state;
    struct app a;
    app_open(&a);
    resize(43, 132);
    start(&a, "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"two-pp\", \"flows\": "
              "[{\"name\": \"pp\", \"transport\": \"tcp\", \"op\": \"pingpong\", \"size\": "
              "64, \"warmup_s\": 0.1, \"duration_s\": 1.2, \"peer\": \"loopback\"}, "
              "{\"name\": \"other\", \"role\": \"background\", \"transport\": \"tcp\", "
              "\"op\": \"pingpong\", \"size\": 1024, \"warmup_s\": 0.1, \"peer\": "
              "\"loopback\"}]}");
    bool switched = false;
    for (int i = 0; i < 300 && !a.results; i++) {
        pump(&a);
        frame(&a);
        if (!switched && a.snap && (a.snap->flows[0].valid & SNAP_V_LAT)) {
            assert_non_null(strstr(hist_title(), "Latency pp,"));
            a.focus = 1; /* the percentile table */
            app_key(&a, KEY_RIGHT);
            frame(&a); /* tells the runner */
            switched = true;
        }
        if (switched && !a.snap->done && a.snap->hist_flow == 1 &&
            (a.snap->flows[1].valid & SNAP_V_LAT)) {
            frame(&a);
            assert_non_null(strstr(hist_title(), "Latency other,"));
            /* The histogram holds the other flow's samples, not the foreground's. */
            uint64_t n = atomic_load(&a.snap->hist.count);
            assert_int_equal(n, a.snap->flows[1].lat.count);
            print_screen("histogram of the selected flow, running");
            break;
        }
        sleep_ms(30);
    }
    assert_true(switched);
    assert_int_equal(a.snap->hist_flow, 1);
    while (!a.results) {
        pump(&a);
        sleep_ms(30);
    }
    pump(&a);
    /* After the run: Left selects the foreground again; its histogram comes from the
     * results, whose count it must match. */
    app_key(&a, KEY_LEFT);
    frame(&a);
    assert_non_null(strstr(hist_title(), "Latency pp,"));
    const cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(a.results, "phases"), 0);
    const cJSON *fl = cJSON_GetArrayItem(cJSON_GetObjectItem(ph, "flows"), 0);
    const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(fl, "points"), 0);
    double cnt = 0;
    assert_true(jsonutil_num(cJSON_GetObjectItem(pt, "latency"), "count", &cnt));
    char want[32];
    live_fmt_si(want, sizeof(want), cnt);
    char legend[64];
    snprintf(legend, sizeof(legend), "n=%s", want);
    print_screen("the foreground's histogram from the results");
    if (!on_screen(legend))
        fail_msg("not on the screen: %s", legend);
    /* A click on the other flow's column in the percentile table picks it, as Right does
     * (issue 21); one on the first column's brings the foreground back. */
    int py = find_line("Percentiles");
    assert_true(py >= 0);
    int ox = text_col(screen[py + 1], "other"), px = text_col(screen[py + 1], "   pp");
    assert_true(ox > 0 && px > 0);
    a.focus = 0;
    app_mouse(&a, py + 1, ox, BUTTON1_PRESSED);
    frame(&a);
    assert_int_equal(a.focus, 1);
    assert_non_null(strstr(hist_title(), "Latency other,"));
    app_mouse(&a, py + 1, px + 3, BUTTON1_PRESSED);
    frame(&a);
    assert_non_null(strstr(hist_title(), "Latency pp,"));
    app_fini(&a);
}

/* ---- collectives: bus bandwidth ---- */

static const char two_phase_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"ar-ql\", \"phases\": "
    "[\"quiet\", \"loaded\"], \"flows\": [{\"name\": \"ar\", \"transport\": \"tcp\", "
    "\"op\": \"pingpong\", \"size\": \"64KiB\", \"peer\": \"loopback\"}, {\"name\": "
    "\"bulk\", \"role\": \"background\", \"transport\": \"tcp\", \"op\": \"stream\", "
    "\"size\": \"64KiB\", \"peer\": \"loopback\"}]}";

/* The last number in the percentile pane's row for label; NaN when absent. */
static double row_value(const char *label, int col)
{
    double v[4];
    int n = row_numbers(label, v, 4);
    return n > col ? v[col] : NAN;
}

/* A real run of the nccl transport on the stand-in CUDA runtime and NCCL (tests/gpu/
 * fake_cudanccl.c, two devices): the table has a busbw row, and its value is the point's S
 * over the mean per-operation time times the all_reduce factor, 2(n-1)/n = 1 for 2 ranks. */
static void nccl_busbw(void **state)
{
    (void)state;
#ifndef FAKE_CUDANCCL
    skip();
#else
    setenv("FABTOP_CUDART", FAKE_CUDANCCL, 1);
    setenv("FABTOP_NCCL", FAKE_CUDANCCL, 1);
    setenv("FAKE_CUDA_DEVICES", "2", 1);
    unsetenv("NCCL_DEBUG");
    struct app a;
    app_open(&a);
    resize(24, 80);
    start(&a, "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"ar\", \"flows\": "
              "[{\"name\": \"ar\", \"transport\": \"nccl\", \"op\": \"collective\", "
              "\"size\": \"64KiB\", \"warmup_s\": 0.05, \"duration_s\": 0.4, \"params\": "
              "{\"collective\": \"all_reduce\", \"gpus\": \"all\"}}]}");
    bool seen = false;
    for (int i = 0; i < 300 && !a.results; i++) {
        pump(&a);
        if (a.snap && a.snap->nflows == 1 && (a.snap->flows[0].valid & SNAP_V_LAT) &&
            !a.snap->done) {
            const struct snap_flow *f = &a.snap->flows[0];
            assert_true(f->bw_factor == 1.0);
            assert_int_equal(f->bw_bytes, 65536);
            frame(&a);
            double want = (double)f->bw_bytes / f->lat.mean, got = row_value("bus GB/s", 0);
            if (!seen)
                print_screen("nccl all_reduce on the stand-in, measuring");
            /* No TCP section for a flow without TCP; settings (IP forwarding, TTL) are not
             * counters that moved. */
            assert_false(on_screen("TCP per flow"));
            assert_on_screen("Counters, port-wide");
            assert_false(on_screen("Forwarding"));
            assert_false(on_screen("DefaultTTL"));
            assert_false(isnan(got));
            /* As drawn: 3 or 4 significant digits. */
            assert_true(fabs(got - want) <= 0.0051 * want + 0.0005);
            seen = true;
        }
        sleep_ms(20);
    }
    assert_true(seen);
    assert_non_null(a.results);
    app_fini(&a);
    unsetenv("FABTOP_CUDART");
    unsetenv("FABTOP_NCCL");
#endif
}

/* From a results document: quiet and loaded busbw from each phase's last point (nccl.bytes
 * over latency.mean, times nccl.busbw_factor) and their ratio. */
static void busbw_from_results(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"phases\": [{\"name\": \"quiet\", \"flows\": [{\"name\": \"ar\", \"points\": "
        "[{\"measured\": true, \"size_bytes\": 65536, \"latency\": {\"count\": 100, "
        "\"mean\": 10.0, \"p50\": 9.8, \"p90\": 10.5, \"p99\": 12.0, \"p99.9\": 13.0, "
        "\"max\": 14.0}, \"nccl\": {\"bytes\": 65536, \"busbw_factor\": 1.5}}]}]}, "
        "{\"name\": \"loaded\", \"flows\": [{\"name\": \"ar\", \"points\": [{\"measured\": "
        "true, \"size_bytes\": 65536, \"latency\": {\"count\": 100, \"mean\": 20.0, \"p50\": "
        "19.5, \"p90\": 21.0, \"p99\": 24.0, \"p99.9\": 26.0, \"max\": 28.0}, \"nccl\": "
        "{\"bytes\": 65536, \"busbw_factor\": 1.5}}]}]}]}";
    struct app a;
    open_made_up(&a, two_phase_mix, fake_snapshot());
    a.snap->nphases = 2;
    a.snap->phase_index = 1;
    a.snap->done = true;
    snprintf(a.snap->flows[0].name, sizeof(a.snap->flows[0].name), "ar");
    a.results = cJSON_Parse(doc);
    assert_non_null(a.results);
    resize(43, 132);
    frame(&a);
    print_screen("busbw from results");
    double v[4];
    assert_int_equal(row_numbers("bus GB/s", v, 4), 3);
    assert_true(fabs(v[0] - 9.83) < 0.006);  /* 65536 B / 10 us x 1.5 = 9.830 GB/s */
    assert_true(fabs(v[1] - 4.915) < 0.001); /* over 20 us */
    assert_true(fabs(v[2] - 0.50) < 0.001);  /* loaded / quiet */
    app_fini(&a);
}

/* ---- expected screens ---- */

static const char two_flow_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"live-2\", \"flows\": ["
    "{\"name\": \"pp\", \"transport\": \"tcp\", \"op\": \"pingpong\", \"size\": 64, "
    "\"duration_s\": 4, \"peer\": \"loopback\"}, {\"name\": \"bulk\", \"role\": "
    "\"background\", \"transport\": \"tcp\", \"op\": \"stream\", \"size\": \"64KiB\", "
    "\"peer\": \"loopback\"}]}";

static void fill_flow(struct snap_flow *f, const char *name, int op, int role, double gbps)
{
    snprintf(f->name, sizeof(f->name), "%s", name);
    snprintf(f->transport, sizeof(f->transport), "tcp");
    f->op = op;
    f->role = role;
    f->status = FLOW_RUNNING;
    f->state = FLOW_ST_MEASURE;
    f->npoints = 1;
    f->valid = SNAP_V_RATE | SNAP_V_WIRE;
    f->goodput_gbps = gbps;
    f->wire_gbps = gbps * 1.02;
    f->ntl = 30;
    for (int i = 0; i < f->ntl; i++) {
        f->tl_t[i] = 0.2f + 0.1f * (float)i;
        /* A dip in the middle, where the neighbour pushed hardest. */
        f->tl_goodput[i] = (float)(gbps * (i >= 12 && i < 18 ? 0.6 : 1.0 + 0.01 * (i % 3)));
    }
    f->wire.valid = true;
}

/* Every pane filled from made-up, fixed numbers: the foreground's histogram (20000 samples
 * around 18-27 us with a 1% tail at 0.15-0.75 ms), two flows, their goodput timelines, TCP
 * per flow, counters and events. */
static struct runner_snapshot *full_snapshot(void)
{
    struct runner_snapshot *s = fake_snapshot();
    free(s->flows);
    s->nflows = 2;
    s->flows = calloc(2, sizeof(*s->flows));
    struct snap_flow *pp = &s->flows[0], *bulk = &s->flows[1];
    fill_flow(pp, "pp", MIX_OP_PINGPONG, MIX_ROLE_FOREGROUND, 0.0213);
    fill_flow(bulk, "bulk", MIX_OP_STREAM, MIX_ROLE_BACKGROUND, 9.87);
    pp->size = 64;
    bulk->size = 65536;
    for (uint64_t i = 0; i < 20000; i++)
        hist_record(&s->hist,
                    i % 100 == 99 ? 150000 + (i * 7919) % 600000 : 18000 + (i * 7919) % 9000);
    hist_stats(&s->hist, &pp->lat);
    pp->valid |= SNAP_V_LAT;
    pp->ops_per_s = 41650;
    pp->ops = 62475;
    pp->wire.rtt_us = 41.5;
    pp->wire.rttvar_us = 9.25;
    pp->wire.cwnd_bytes = 14480;
    bulk->ops_per_s = 18826; /* 9.87 Gb/s of 64 KiB messages */
    bulk->wire.retrans = 17;
    bulk->wire.rtt_us = 212.0;
    bulk->wire.rttvar_us = 40.5;
    bulk->wire.cwnd_bytes = 2621440;
    snprintf(pp->brief, sizeof(pp->brief), "lo, MSS 65483, cubic, TCP_NODELAY");
    s->nevents = 3;
    snprintf(s->events[0], sizeof(s->events[0]), "  0.000s setup: 2 flows connected in 2.1 ms");
    snprintf(s->events[1], sizeof(s->events[1]), "  0.201s phase loaded: all flows");
    snprintf(s->events[2], sizeof(s->events[2]), "  1.402s bulk: 17 retransmissions");
    return s;
}

/* ---- the lines by flow class ---- */

static const char class_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"live-cls\", \"phases\": "
    "[\"quiet\", \"loaded\"], \"flows\": ["
    "{\"name\": \"pp\", \"class\": \"tp\", \"per_step\": 4, \"transport\": \"tcp\", \"op\": "
    "\"pingpong\", \"size\": 64, \"warmup_s\": 0.1, \"duration_s\": 0.4, \"peer\": "
    "\"loopback\"}, {\"name\": \"kv-a\", \"class\": \"kv\", \"role\": \"background\", "
    "\"transport\": \"tcp\", \"op\": \"stream\", \"size\": \"64KiB\", \"warmup_s\": 0.1, "
    "\"peer\": \"loopback\"}, {\"name\": \"kv-b\", \"class\": \"kv\", \"role\": "
    "\"background\", \"transport\": \"tcp\", \"op\": \"stream\", \"size\": \"64KiB\", "
    "\"warmup_s\": 0.1, \"peer\": \"loopback\"}]}";

/* A made-up snapshot of class_mix's loaded phase (two kv streams at 9 and 3 Gb/s: Jain's
 * index 12^2 / (2 (81 + 9)) = 0.8), then a real run of it: after the run the lines come from
 * the results' scoreboard. Under the percentile table at 132x43, in one line of the events
 * pane at 80x24. */
static void classes(void **state)
{
    (void)state;
    struct app a;
    struct runner_snapshot *s = full_snapshot();
    free(s->flows);
    s->nflows = 3;
    s->flows = calloc(3, sizeof(*s->flows));
    fill_flow(&s->flows[0], "pp", MIX_OP_PINGPONG, MIX_ROLE_FOREGROUND, 0.0213);
    fill_flow(&s->flows[1], "kv-a", MIX_OP_STREAM, MIX_ROLE_BACKGROUND, 9);
    fill_flow(&s->flows[2], "kv-b", MIX_OP_STREAM, MIX_ROLE_BACKGROUND, 3);
    hist_stats(&s->hist, &s->flows[0].lat);
    s->flows[0].valid |= SNAP_V_LAT;
    open_made_up(&a, class_mix, s);
    resize(43, 132);
    a.focus = 0;
    frame(&a);
    print_screen("made-up classes");
    assert_on_screen("By class (now: the worst flow's p99; Jain over rates)");
    int y = find_line("kv          2 fl  p99      n/a us  Jain 0.800");
    if (y < 0) {
        print_screen("missing kv line");
        fail_msg("no kv line");
    }
    assert_true(find_line("tp          1 fl  p99 ") >= 0);
    /* At 80x24 the table has no rows left: one line in the events pane. */
    resize(24, 80);
    frame(&a);
    assert_on_screen("by class now: tp p99 ");
    assert_on_screen("; kv p99 n/a J0.80");
    assert_false(on_screen("By class ("));
    app_fini(&a);

    app_open(&a);
    resize(43, 132);
    start(&a, class_mix);
    for (int i = 0; i < 300 && !a.results; i++) {
        pump(&a);
        frame(&a);
        sleep_ms(50);
    }
    assert_non_null(a.results);
    for (int size = 0; size < 2; size++) {
        resize(size ? 43 : 24, size ? 132 : 80);
        a.msg[0] = '\0';
        frame(&a);
        print_screen("classes, done");
        if (!size)
            assert_on_screen("by class: tp p99 ");
        if (size) {
            assert_on_screen("By class (loaded, all samples merged; SLO: share within)");
            assert_true(find_line("kv          2 fl  p99      n/a us  Jain ") >= 0);
            assert_true(find_line("tp          1 fl  p99 ") >= 0);
        }
    }
    app_fini(&a);
}

static void expected_screens(void **state)
{
    (void)state;
    struct app a;
    open_made_up(&a, two_flow_mix, full_snapshot());
    static const struct {
        const char *name, *keys;
    } views[] = {{"live-full", ""}, {"live-tcp", "c"}, {"live-linear", "y"}};
    bool ok = true;
    for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
        for (const char *k = views[v].keys; *k; k++)
            app_key(&a, *k);
        for (int size = 0; size < 2; size++) {
            resize(size ? 43 : 24, size ? 132 : 80);
            a.focus = 0;
            a.msg[0] = '\0';
            frame(&a);
            char *text = screen_dump(NULL);
            char name[64];
            snprintf(name, sizeof(name), "%s-%dx%d", views[v].name, size ? 132 : 80,
                     size ? 43 : 24);
            ok &= screen_text_matches(text, name);
            free(text);
        }
        for (const char *k = views[v].keys; *k; k++)
            app_key(&a, *k);
    }
    app_fini(&a);
    assert_true(ok);
}

int main(int argc, char **argv)
{
    /* --nccl: the nccl run alone, in a process of its own (the CUDA runtime is loaded once
     * per process, so the stand-in must be named before anything probes for it). */
    if (argc > 1 && !strcmp(argv[1], "--nccl")) {
        const struct CMUnitTest nccl[] = {cmocka_unit_test(nccl_busbw)};
        return cmocka_run_group_tests(nccl, setup, teardown);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_run),
        cmocka_unit_test(pingpong),
        cmocka_unit_test(unsaveable),
        cmocka_unit_test(quiet_vs_loaded),
        cmocka_unit_test(quiet_off_screen),
        cmocka_unit_test(counters),
        cmocka_unit_test(expected_screens),
        cmocka_unit_test(busbw_from_results),
        cmocka_unit_test(hist_follows_selection),
        cmocka_unit_test(classes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
