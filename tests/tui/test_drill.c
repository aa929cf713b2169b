/* test_drill: the setup view's Drill action in process (newterm on /dev/null): a peer-kill
 * drill of a ping-pong mix (tp-decode at one size) against the in-process agent, started with
 * D; the repetition running shown as it runs, then each repetition's detection against its
 * bound and by what, recovery against its deadline, the quiet p99, the requests by outcome
 * and the agent's count agreeing with the client's, with their units; the summary; w saving
 * the document; q asking first while a drill runs; the settings remembered. A preset with its
 * own policy and bulk neighbours (their rates as load). Refusals, one status line each: a
 * stream preset (drill_check_mix's message), a size sweep, the Drill field off, a bad FOR x
 * TIMES, a run or a second drill while a drill runs. */
#include <errno.h>
#include <ftw.h>
#include <locale.h>
#include <setjmp.h>
#include <signal.h>
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
#include "engine/results/results_drill.h"
#include "tests/topology/synth_xml.h"
#include "tests/tui/screen.h"

static char tmpdir[256];
static char cfgdir[300];

/* ---- the screen ---- */

static void dump(struct screen *s)
{
    char *t = screen_dump(s);
    fprintf(stderr, "--- the screen:\n%s---\n", t);
    free(t);
}

/* Draw, then the row holding needle, into buf (and its number); fails when there is none. */
static int expect_row(struct screen *s, const char *needle, char *buf, size_t len)
{
    screen_draw(s);
    int y = screen_find_row(s, needle);
    if (y < 0) {
        dump(s);
        fail_msg("'%s' is not on the screen", needle);
    }
    screen_row(s, y, buf, len);
    return y;
}

static void expect(struct screen *s, const char *needle)
{
    char buf[2048];
    expect_row(s, needle, buf, sizeof(buf));
}

/* The row holding needle must also hold each of the NULL-terminated parts. */
static void expect_parts(struct screen *s, const char *needle, ...)
{
    char buf[2048];
    expect_row(s, needle, buf, sizeof(buf));
    va_list ap;
    va_start(ap, needle);
    for (const char *p = va_arg(ap, const char *); p; p = va_arg(ap, const char *))
        if (!strstr(buf, p)) {
            dump(s);
            va_end(ap);
            fail_msg("the row '%s' lacks '%s'", buf, p);
        }
    va_end(ap);
}

/* Press Right on the selected field until its row shows want. */
static void choose(struct screen *s, const char *label, const char *want)
{
    char buf[2048];
    for (int i = 0; i < 40; i++) {
        expect_row(s, label, buf, sizeof(buf));
        if (strstr(buf, want))
            return;
        app_key(&s->app, KEY_RIGHT);
    }
    dump(s);
    fail_msg("%s never showed '%s'", label, want);
}

/* Enter on the selected field, its text replaced by text, Enter. */
static void type_value(struct screen *s, const char *text)
{
    app_key(&s->app, '\n');
    app_key(&s->app, 21); /* Ctrl-U */
    for (const char *p = text; *p; p++)
        app_key(&s->app, (unsigned char)*p);
    app_key(&s->app, '\n');
}

/* The setup form with preset chosen (g: the Preset field). */
static void open_setup(struct screen *s, int rows, int cols, const char *preset)
{
    struct app_opts o = {.input = "synth.xml", .config_dir = cfgdir, .no_color = true};
    assert_int_equal(screen_open(s, NULL, rows, cols, &o), 0);
    screen_keys(s, "F2 g");
    assert_int_equal(s->app.view, VIEW_SETUP);
    choose(s, "Preset", preset);
}

/* The Drill field: the one above Start (G: Start, k: up one). */
static void go_drill(struct screen *s)
{
    screen_keys(s, "G k");
}

/* ---- tests ---- */

static void test_drill_peer_kill(void **state)
{
    (void)state;
    struct screen s;
    struct app *a = &s.app;
    open_setup(&s, 24, 80, "< tp-decode >");
    /* One size: the sweep cannot be drilled (below); the 6th field is the message size. */
    screen_keys(&s, "g j j j j j");
    type_value(&s, "4KiB");
    go_drill(&s);
    expect_parts(&s, "Drill ", "< off >", "off: Left/Right picks a fault", NULL);
    app_key(a, KEY_RIGHT);
    app_key(a, KEY_RIGHT);
    expect_parts(&s, "Drill ", "< peer-kill, 2 s x 1 >", "injected at 1 s; D drills it", NULL);
    /* The key line says D; typing the timing says its form. */
    expect(&s, "S start  D drill");
    app_key(a, '\n');
    expect(&s, "type FOR x TIMES (2 x 3: the fault for 2 s, 3 times)");
    app_key(a, 27);
    type_value(&s, "abc");
    assert_non_null(strstr(a->msg, "Drill 'abc': give FOR x TIMES, 0.1 to 30 s and 1 to 100"));
    app_key(a, 'D');
    assert_null(a->drill);
    assert_non_null(strstr(a->msg, "Drill 'abc'"));
    /* Seconds in digits only, within 0.1 to 30 s, 1 to 100 times. */
    static const char *const bad[] = {"0x3", "inf", "31", "2 x 0", "2 x 101", "2 x", "2 y 3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        a->msg[0] = '\0';
        type_value(&s, bad[i]);
        char want[64];
        snprintf(want, sizeof(want), "Drill '%s': give FOR x TIMES", bad[i]);
        if (!strstr(a->msg, want))
            fail_msg("'%s' was taken: %s", bad[i], a->msg);
    }
    type_value(&s, "2.5s x3");
    expect_parts(&s, "Drill ", "< peer-kill, 2.5 s x 3 >", NULL);
    type_value(&s, "1 x 2");
    expect_parts(&s, "Drill ", "< peer-kill, 1 s x 2 >", NULL);

    /* D: the drill starts in the background; the live view follows it. */
    a->msg[0] = '\0';
    app_key(a, 'D');
    if (!a->drill) {
        dump(&s);
        fail_msg("no drill started: %s", a->msg);
    }
    assert_int_equal(a->view, VIEW_LIVE);
    assert_non_null(strstr(a->msg, "drilling tp-decode: peer-kill at 1 s for 1 s, 2 repetitions"));
    expect(&s, "Repetition 1 of 2: running (fault at 1 s for 1 s)");
    expect(&s, "drill tp-decode peer-kill: repetition 1/2");
    a->msg[0] = '\0'; /* the key line instead */
    expect(&s, "Up/Down scroll  s stop  w save so far  F2 setup");

    /* One at a time: no run and no second drill meanwhile. */
    screen_keys(&s, "F2 S");
    assert_null(a->runner);
    assert_non_null(strstr(a->msg, "a drill is running: s in the live view stops it"));
    a->msg[0] = '\0';
    app_key(a, 'D');
    assert_non_null(strstr(a->msg, "a drill is running"));
    expect(&s, "a drill is running (F4 live)");
    screen_keys(&s, "F4");
    /* q asks first (quitting waits for the drill); q again quits. */
    app_key(a, 'q');
    assert_false(a->quit);
    assert_non_null(strstr(a->msg, "a drill is running (repetition 1 of 2): q again stops it"));
    app_key(a, 'q');
    assert_true(a->quit);
    a->quit = false;

    /* As it happens: the first repetition's lines while the second runs, then the end. */
    bool seen_second = false;
    for (int i = 0; i < 600 && app_drill_running(a->drill); i++) {
        app_poll(a);
        if (a->drill->doc_ok && a->drill->doc.nreps == 1 && app_drill_running(a->drill) &&
            !seen_second) {
            screen_draw(&s);
            seen_second = screen_find_row(&s, "Repetition 2 of 2: running (fault at 1 s") >= 0 &&
                          screen_find_row(&s, "drill tp-decode peer-kill: repetition 2/2") >= 0;
            if (!seen_second) {
                dump(&s);
                fail_msg("the second repetition is not shown as running");
            }
        }
        usleep(50000);
    }
    assert_false(app_drill_running(a->drill));
    assert_true(seen_second);
    if (a->drill->rc != 0)
        fail_msg("the drill failed: %s", a->drill->error);
    assert_non_null(strstr(a->msg, "drill finished: 2 drills, 0 broke a bound, 0 never recovered"));

    /* The whole page on a larger screen. */
    screen_resize(&s, 50, 160);
    expect(&s, "Drill of tp-decode against the in-process agent: peer-kill at 1 s for 1 s, "
               "2 repetitions");
    expect(&s, "Recovery: the mix had no \"recover\" policy; the explorer gave its flow 20 "
               "attempts, backoff 20-300 ms, deadline 8 s.");
    expect(&s, "Repetition 1 of 2: peer-kill injected at ");
    expect(&s, "Repetition 2 of 2: peer-kill injected at ");
    for (int rep = 0; rep < 2; rep++) {
        const struct results_drill_flow *f = &a->drill->doc.reps[rep].flows[0];
        assert_true(results_bool_true(&f->detect_ok));
        assert_true(results_bool_true(&f->recover_ok));
        assert_true(f->hanging.st == RESULTS_SET && f->hanging.v == 0);
        assert_true(results_bool_true(&a->drill->doc.reps[rep].agree));
    }
    char row[2048];
    int y = expect_row(&s, "tp-sync (pingpong, 1 connection): detected after ", row, sizeof(row));
    double det, bound;
    const char *at = strstr(row, "detected after ");
    assert_int_equal(sscanf(at, "detected after %lf s (bound %lf s, ok) by error: ", &det, &bound),
                     2);
    assert_true(det >= 0 && det <= bound);
    assert_true(bound > 2.09 && bound < 2.11);
    assert_non_null(strstr(row, "s, ok) by error: "));
    screen_row(&s, y + 1, row, sizeof(row));
    double rec, deadline, p99, back;
    at = strstr(row, "recovered after ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "recovered after %lf s (deadline %lf s, ok)", &rec, &deadline), 2);
    /* The agent refuses new sessions for the fault's 1 s; backoff up to 300 ms after it. */
    assert_true(rec > 0.5 && rec < deadline);
    assert_true(deadline == 8);
    at = strstr(row, "back at the quiet p99 (");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "back at the quiet p99 (%lf us round trip) at %lf s", &p99, &back),
                     2);
    assert_true(p99 > 0 && back > 1);
    screen_row(&s, y + 2, row, sizeof(row));
    long issued, completed, failed, abandoned, hanging;
    at = strstr(row, "requests: ");
    assert_non_null(at);
    assert_int_equal(sscanf(at,
                            "requests: %ld issued, %ld completed, %ld failed, %ld abandoned at "
                            "their deadline, %ld hanging",
                            &issued, &completed, &failed, &abandoned, &hanging),
                     5);
    assert_true(completed > 0 && failed + abandoned >= 1);
    assert_int_equal(issued, completed + failed + abandoned + hanging);
    assert_int_equal(hanging, 0);
    screen_row(&s, y + 3, row, sizeof(row));
    long answered, client;
    at = strstr(row, "the agent answered ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "the agent answered %ld requests, the client completed %ld: ",
                            &answered, &client),
                     2);
    assert_int_equal(answered, client);
    assert_int_equal(client, completed);
    assert_non_null(strstr(row, ": agree"));
    expect(&s, "Summary of 2 repetitions: 2 drills (flow x repetition), 0 broke a bound, 0 never "
               "recovered, 0 with the agent's count different");
    expect_parts(&s, "  detect: min ", " s, p50 ", " s, max ", NULL);
    expect_parts(&s, "  recover: min ", " s, p50 ", " s, max ", NULL);
    expect_parts(&s, "this process: ", " descriptors before, ", " threads before, ", NULL);
    expect(&s, "The drill has finished: w saves its document.");
    assert_true(screen_find_row(&s, "DISAGREE") < 0 && screen_find_row(&s, "BROKEN") < 0);

    /* Back at 80x24 the page follows its end; Home scrolls to its top. */
    screen_resize(&s, 24, 80);
    expect(&s, "The drill has finished: w saves its document.");
    assert_true(screen_find_row(&s, "Drill of tp-decode") < 0);
    screen_keys(&s, "Home");
    expect(&s, "Drill of tp-decode against the in-process agent");
    a->msg[0] = '\0';
    expect(&s, "Up/Down scroll  w save  F2 setup  F5 results");

    /* w: the document, atomically, in the drills directory. */
    app_key(a, 'w');
    char want[600];
    snprintf(want, sizeof(want), "Drill saved to %s/data/fabtop/drills/", tmpdir);
    if (!strstr(a->msg, want))
        fail_msg("'%s' is not '%s...'", a->msg, want);
    const char *path = strstr(a->msg, " to ") + 4;
    cJSON *doc = NULL;
    struct ft_err err = {0};
    assert_int_equal(jsonutil_load(path, &doc, &err), 0);
    struct results_drill_doc d;
    assert_int_equal(results_drill_read(doc, path, &d, &err), 0);
    assert_int_equal(d.nreps, 2);
    assert_true(results_bool_true(&d.complete));
    results_drill_free(&d);
    cJSON_Delete(doc);
    screen_close(&s);

    /* The next explorer remembers the drill's settings. */
    open_setup(&s, 24, 80, "< tp-decode >");
    expect_parts(&s, "Drill ", "< peer-kill, 1 s x 2 >", NULL);
    screen_close(&s);
}

/* A preset with its own policy and two bulk neighbours: they run as load beside the probe,
 * with their rates around the fault. */
static void test_drill_under_load(void **state)
{
    (void)state;
    struct screen s;
    struct app *a = &s.app;
    open_setup(&s, 43, 132, "< quiet-vs-loaded >");
    go_drill(&s);
    choose(&s, "Drill ", "< peer-kill, "); /* the timing may be remembered: typed below */
    type_value(&s, "0.5");
    expect_parts(&s, "Drill ", "< peer-kill, 0.5 s x 1 >", NULL);
    app_key(a, 'D');
    if (!a->drill) {
        dump(&s);
        fail_msg("no drill started: %s", a->msg);
    }
    for (int i = 0; i < 600 && app_drill_running(a->drill); i++) {
        app_poll(a);
        usleep(50000);
    }
    assert_false(app_drill_running(a->drill));
    if (a->drill->rc != 0)
        fail_msg("the drill failed: %s", a->drill->error);
    expect(&s, "Recovery: each flow's own \"recover\" policy in the mix.");
    expect_parts(&s, "probe (pingpong, 1 connection): detected after ", "s, ok) by error: ", NULL);
    expect_parts(&s, "recovered after ", "(deadline 10 s, ok)", NULL);
    static const char *const bulk[] = {"neighbour bulk-out (", "neighbour bulk-in ("};
    for (int i = 0; i < 2; i++) {
        char row[2048];
        expect_row(&s, bulk[i], row, sizeof(row));
        const char *at = strstr(row, "connection");
        double before, during, after;
        assert_non_null(at);
        at = strchr(at, ':');
        assert_non_null(at);
        assert_int_equal(sscanf(at,
                                ": %lf Gb/s before the fault, %lf Gb/s during it, %lf Gb/s "
                                "after; ",
                                &before, &during, &after),
                         3);
        /* Bulk TCP on loopback moves far more than 0.01 Gb/s before and after the fault. */
        assert_true(before > 0.01 && after > 0.01 && during >= 0);
    }
    expect(&s, ": agree");
    screen_close(&s);
}

/* s on the drill's page stops it: the repetition running is dropped, the ones done stay, the
 * status line says how many, and the document kept is not complete. */
static void test_drill_stop(void **state)
{
    (void)state;
    struct screen s;
    struct app *a = &s.app;
    open_setup(&s, 43, 132, "< quiet-vs-loaded >");
    go_drill(&s);
    choose(&s, "Drill ", "< peer-kill, ");
    type_value(&s, "0.3 x 50");
    expect_parts(&s, "Drill ", "< peer-kill, 0.3 s x 50 >", NULL);
    app_key(a, 'D');
    if (!a->drill) {
        dump(&s);
        fail_msg("no drill started: %s", a->msg);
    }
    for (int i = 0; i < 600 && !(a->drill->doc_ok && a->drill->doc.nreps >= 1); i++) {
        app_poll(a);
        usleep(50000);
    }
    assert_true(a->drill->doc_ok && a->drill->doc.nreps >= 1);
    app_key(a, 's');
    assert_non_null(strstr(a->msg, "stopping the drill"));
    /* A repetition takes at least 2.5 s here: the stop must not wait for the other 49. */
    int i = 0;
    for (; i < 200 && app_drill_running(a->drill); i++) {
        app_poll(a);
        usleep(50000);
    }
    assert_false(app_drill_running(a->drill));
    assert_true(i < 200);
    assert_int_equal(a->drill->rc, -ECANCELED);
    int kept = a->drill->doc.nreps;
    assert_true(kept >= 1 && kept < 50);
    char want[64];
    snprintf(want, sizeof(want), "drill stopped: %d repetition%s kept", kept, kept == 1 ? "" : "s");
    if (!strstr(a->msg, want))
        fail_msg("the status line says '%s', not '%s'", a->msg, want);
    assert_false(results_bool_true(&a->drill->doc.complete));
    app_key(a, 's');
    assert_non_null(strstr(a->msg, "The drill has finished."));
    screen_close(&s);
}

static void test_drill_refused(void **state)
{
    (void)state;
    struct screen s;
    struct app *a = &s.app;
    /* The default preset takes a drill, but the Drill field is off. */
    open_setup(&s, 24, 80, "< api >");
    app_key(a, 'D');
    assert_null(a->drill);
    assert_non_null(strstr(a->msg, "Drill is off: Left/Right on the Drill field picks"));

    /* A stream: refused with drill_check_mix's reason, on the status line. */
    screen_keys(&s, "g");
    choose(&s, "Preset", "< bidir >");
    go_drill(&s);
    choose(&s, "Drill ", "< peer-stall, 2 s x 1 >");
    app_key(a, 'D');
    assert_null(a->drill);
    assert_int_equal(a->view, VIEW_SETUP);
    expect(&s, "bidir: flow both-ways: drills run TCP pingpong and rr flows for now, not tcp");
    assert_int_equal(screen_find_row(&s, "drills run TCP pingpong and rr flows"), 23);

    /* A size sweep: one fixed size only. */
    screen_keys(&s, "g");
    choose(&s, "Preset", "< tp-decode >");
    app_key(a, 'D');
    assert_null(a->drill);
    expect(&s, "tp-decode: flow tp-sync: a drill takes one fixed size");
    screen_close(&s);
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
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabtop-tui-drill-XXXXXX");
    if (!mkdtemp(tmpdir) || chdir(tmpdir) < 0)
        return -1;
    snprintf(cfgdir, sizeof(cfgdir), "%s/config", tmpdir);
    char data[300];
    snprintf(data, sizeof(data), "%s/data", tmpdir);
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
    setenv("XDG_DATA_HOME", data, 1);
    setenv("HOME", tmpdir, 1);
    unsetenv("FABTOP_KEY");
    unsetenv("LINES");
    unsetenv("COLUMNS");
    (void)synth_v1_xml;
    FILE *f = fopen("synth.xml", "w");
    if (!f)
        return -1;
    fputs(synth_v2_xml, f);
    return fclose(f) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    if (chdir("/") == 0 && tmpdir[0])
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8"))
        setlocale(LC_ALL, "");
    signal(SIGPIPE, SIG_IGN); /* as the explorer does */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drill_refused),
        cmocka_unit_test(test_drill_peer_kill),
        cmocka_unit_test(test_drill_under_load),
        cmocka_unit_test(test_drill_stop),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
