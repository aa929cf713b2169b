/* test_drill: the setup view's Drill action in process (newterm on /dev/null): a peer-kill
 * drill of a ping-pong mix (tp-decode at one size) against the in-process agent, started with
 * D; the repetition running shown as it runs, then each repetition's detection against its
 * bound and by what, recovery against its deadline, the quiet p99, the requests by outcome
 * and the agent's count agreeing with the client's, with their units; the summary; w saving
 * the document; q asking first while a drill runs; the settings remembered. A preset with its
 * own policy and bulk neighbours (their rates as load). Refusals, one status line each: a
 * stream preset (drill_check_mix's message), a size sweep, the Drill field off, a bad FOR x
 * TIMES, a run or a second drill while a drill runs. Every fault kind on the Drill field: what
 * D does with each on a TCP mix (drill_check_mix_fault's line for rank-loss; for blackhole and
 * link-down, which need a namespace or a netdev of the drill's own, nothing started, the mix
 * written to a file and the `fabtop drill` line shown), and each kind remembered in the
 * config. With --nccl (a process of its own: the stand-in CUDA runtime and NCCL, and the
 * fabtop binary as the victim agent): a rank-loss drill of an NCCL mix. With --verbs: the
 * agent's blackhole of a verbs ping-pong, or, where this machine has no RDMA, the lines that
 * say so, then exit 77 (skipped, never passed). */
#include <dirent.h>
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
#include "engine/flow/mix.h"
#include "engine/results/results_drill.h"
#include "engine/run/drill.h"
#include "engine/run/mix_build.h"
#include "engine/run/runner.h"
#include "tests/topology/synth_xml.h"
#include "tests/tui/screen.h"

static char tmpdir[256];
static bool skipped; /* a test could not run here: exit 77, never a pass */
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

/* The screen's rows joined into one text (each row's first blank cut, one space between
 * rows), so that a line wrapped over rows is found whole. The caller frees it. */
static char *joined(struct screen *s)
{
    screen_draw(s);
    char *t = screen_dump(s);
    size_t n = strlen(t);
    char *out = malloc(n + 1), *o = out;
    for (char *line = t; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *p = line + (len && line[0] == ' ');
        size_t k = len - (size_t)(p - line);
        if (o != out)
            *o++ = ' ';
        memcpy(o, p, k);
        o += k;
        line += len + (nl != NULL);
    }
    *o = '\0';
    free(t);
    return out;
}

/* The screen holds text, wrapped or not. */
static void expect_text(struct screen *s, const char *text)
{
    char *j = joined(s);
    bool ok = strstr(j, text) != NULL;
    free(j);
    if (!ok) {
        dump(s);
        fail_msg("'%s' is not on the screen", text);
    }
}

static void expect_no_text(struct screen *s, const char *text)
{
    char *j = joined(s);
    bool found = strstr(j, text) != NULL;
    free(j);
    if (found) {
        dump(s);
        fail_msg("'%s' is on the screen", text);
    }
}

/* preset at size (NULL: the preset's) from endpoint (NULL: any), as the form builds it, named
 * as the view names it in its messages. */
static void form_mix(const char *preset, const char *size, const char *endpoint, struct mix *m)
{
    struct mix_build b;
    struct ft_err err = {0};
    mix_build_init(&b);
    b.edited_by = "the explorer";
    assert_int_equal(mix_build_load(&b, preset, &err), 0);
    if (size)
        assert_int_equal(mix_build_set(&b, MIX_KNOB_SIZE, size, &err), 0);
    if (endpoint)
        assert_int_equal(mix_build_set(&b, MIX_KNOB_ENDPOINT, endpoint, &err), 0);
    char why[512];
    if (mix_build_make(&b, m, why, sizeof(why)) < 0)
        fail_msg("%s: %s", preset, why);
    snprintf(m->source, sizeof(m->source), "%s", m->name);
    mix_build_free(&b);
}

/* The setup section of the config file: its "drill" and "drill_time". */
static void config_drill(char *fault, size_t flen, char *time, size_t tlen)
{
    char path[400];
    snprintf(path, sizeof(path), "%s/config.json", cfgdir);
    cJSON *j = NULL;
    struct ft_err err = {0};
    assert_int_equal(jsonutil_load(path, &j, &err), 0);
    const cJSON *setup = cJSON_GetObjectItemCaseSensitive(j, "setup");
    fault[0] = time[0] = '\0';
    jsonutil_strcpy(setup, "drill", fault, flen);
    jsonutil_strcpy(setup, "drill_time", time, tlen);
    cJSON_Delete(j);
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
    /* On the status line, and under the form as long as the Drill field holds the fault. */
    char status[2048];
    screen_row(&s, 23, status, sizeof(status));
    assert_non_null(strstr(status, "drills run TCP pingpong and rr flows"));
    assert_true(screen_find_row(&s, "drills run TCP pingpong and rr flows") < 23);

    /* A size sweep: one fixed size only. */
    screen_keys(&s, "g");
    choose(&s, "Preset", "< tp-decode >");
    app_key(a, 'D');
    assert_null(a->drill);
    expect(&s, "tp-decode: flow tp-sync: a drill takes one fixed size");
    screen_close(&s);
}

/* Every kind on the Drill field of a TCP ping-pong mix: Right and Left step through them all;
 * what each one does with D. */
static void test_drill_kinds(void **state)
{
    (void)state;
    struct screen s;
    struct app *a = &s.app;
    open_setup(&s, 24, 80, "< tp-decode >");
    screen_keys(&s, "g j j j j j");
    type_value(&s, "4KiB");
    go_drill(&s);
    type_value(&s, "1.5 x 2");
    choose(&s, "Drill ", "< off >");
    static const char *const kinds[] = {"peer-stall", "peer-kill", "blackhole", "rank-loss",
                                        "link-down"};
    char want[1024];
    for (int i = 0; i < 5; i++) {
        app_key(a, KEY_RIGHT);
        snprintf(want, sizeof(want), "< %s, 1.5 s x 2 >", kinds[i]);
        expect_parts(&s, "Drill ", want, NULL);
    }
    app_key(a, KEY_RIGHT);
    expect_parts(&s, "Drill ", "< off >", NULL);
    for (int i = 4; i >= 0; i--) {
        app_key(a, KEY_LEFT);
        snprintf(want, sizeof(want), "< %s, 1.5 s x 2 >", kinds[i]);
        expect_parts(&s, "Drill ", want, NULL);
    }

    /* peer-stall (as peer-kill): the explorer drills it; the command line stays the run's. */
    expect_parts(&s, "Drill ", "< peer-stall, 1.5 s x 2 >", "injected at 1 s; D drills it", NULL);
    expect_text(&s, "Drill peer-stall at 1 s for 1.5 s, 2 repetitions, against the in-process "
                    "agent: the agent answers none of the drill's sessions. D starts it.");
    expect_text(&s, "$ fabtop run --mix tp-decode --size 4KiB");

    /* blackhole of a TCP flow: a namespace of the drill's own is needed, which the explorer
     * has not; D starts nothing, writes the mix as it would drill it, and the Drill field
     * shows the `fabtop drill` line for that file. */
    struct mix m;
    form_mix("tp-decode", "4KiB", NULL, &m);
    /* The file is in the drills directory; the form says $HOME as ~ (HOME is tmpdir). */
    char path[600];
    const char *shown = "~/data/fabtop/drills/tp-decode.mix.json";
    snprintf(path, sizeof(path), "%s/data/fabtop/drills/tp-decode.mix.json", tmpdir);
    remove(path);
    choose(&s, "Drill ", "< blackhole, ");
    expect_parts(&s, "Drill ", "needs `fabtop drill` (below)", NULL);
    expect_text(&s, "tp-decode: flow tp-sync: a blackhole of tcp traffic needs a network "
                    "namespace the drill owns (`fabtop drill --netns NAME`); the agent's own "
                    "blackhole takes verbs ping-pongs only.");
    snprintf(want, sizeof(want),
             "$ fabtop drill --mix %s --fault blackhole --netns NAME --peer HOST --for 1.5 "
             "--repeat 2",
             shown);
    expect_text(&s, want);
    expect_no_text(&s, "$ fabtop run");
    /* Another field: the run's line again; D from there selects the Drill field. */
    app_key(a, KEY_UP);
    expect_text(&s, "$ fabtop run --mix tp-decode --size 4KiB");
    a->msg[0] = '\0';
    app_key(a, 'D');
    assert_null(a->drill);
    assert_null(a->runner);
    assert_int_equal(a->view, VIEW_SETUP);
    snprintf(want, sizeof(want),
             "blackhole not started: the `fabtop drill` line below runs it; the mix is in %s",
             shown);
    assert_string_equal(a->msg, want);
    expect_parts(&s, "Drill ", "< blackhole, 1.5 s x 2 >", NULL);
    screen_draw(&s);
    char row[2048];
    screen_row(&s, 23, row, sizeof(row));
    snprintf(want, sizeof(want), "blackhole not started");
    assert_non_null(strstr(row, want)); /* the status line */
    /* The file: the form's mix at its one size, with the policy the explorer gives, which
     * the drill takes for a blackhole in a namespace. */
    struct mix saved;
    struct ft_err err = {0};
    if (mix_load_file(path, &saved, &err) < 0)
        fail_msg("%s: %s", path, err.msg);
    assert_int_equal(saved.nflows, 1);
    assert_int_equal(saved.flows[0].size.kind, MIX_SIZE_FIXED);
    assert_int_equal(saved.flows[0].size.bytes[0], 4096);
    assert_string_equal(saved.flows[0].transport, "tcp");
    assert_true(saved.flows[0].recover.set);
    assert_int_equal(saved.flows[0].recover.attempts, 20);
    assert_true(saved.flows[0].recover.deadline_s == 8);
    assert_true(saved.flows[0].recover.backoff_max_ms == 300);
    assert_int_equal(drill_check_mix_fault(&saved, DRILL_BLACKHOLE, &err), 0);
    mix_free(&saved);
    char fault[32], time[32];
    config_drill(fault, sizeof(fault), time, sizeof(time));
    assert_string_equal(fault, "blackhole");
    assert_string_equal(time, "1.5 x 2");

    /* rank-loss: drill_check_mix_fault's own line, on the form and on D. */
    struct ft_err ferr = {0};
    assert_int_equal(drill_check_mix_fault(&m, DRILL_RANK_LOSS, &ferr), -EINVAL);
    choose(&s, "Drill ", "< rank-loss, ");
    expect_parts(&s, "Drill ", "this mix cannot take it (below)", NULL);
    expect_text(&s, ferr.msg);
    expect_text(&s, "$ fabtop run --mix tp-decode --size 4KiB");
    a->msg[0] = '\0';
    app_key(a, 'D');
    assert_null(a->drill);
    assert_string_equal(a->msg, ferr.msg);

    /* link-down: the explorer takes down no interface; the line names what it needs. */
    choose(&s, "Drill ", "< link-down, ");
    expect_parts(&s, "Drill ", "needs `fabtop drill` (below)", NULL);
    expect_text(&s, "tp-decode: link-down takes down a netdev that the explorer does not name: "
                    "`fabtop drill --netns NAME` (or --device DEV --owned) with --data-peer HOST "
                    "does.");
    snprintf(want, sizeof(want),
             "$ fabtop drill --mix %s --fault link-down --netns NAME --peer HOST --data-peer "
             "HOST --for 1.5 --repeat 2",
             shown);
    expect_text(&s, want);
    remove(path);
    a->msg[0] = '\0';
    app_key(a, 'D');
    assert_null(a->drill);
    assert_non_null(strstr(a->msg, "link-down not started: the `fabtop drill` line below"));
    assert_int_equal(access(path, R_OK), 0);
    config_drill(fault, sizeof(fault), time, sizeof(time));
    assert_string_equal(fault, "link-down");
    /* With a peer in the form, the line drills that agent. */
    screen_keys(&s, "g j j");
    type_value(&s, "10.0.0.9:7000");
    go_drill(&s);
    snprintf(want, sizeof(want),
             "$ fabtop drill --mix %s --fault link-down --netns NAME --peer 10.0.0.9:7000 "
             "--data-peer HOST --for 1.5 --repeat 2",
             shown);
    expect_text(&s, want);
    screen_keys(&s, "g j j");
    app_key(a, KEY_DC); /* Del: the Peer back to loopback */
    expect_parts(&s, "Peer ", "loopback", NULL);
    mix_free(&m);
    screen_close(&s);

    /* The next explorer has link-down, as D remembered it. */
    open_setup(&s, 24, 80, "< tp-decode >");
    expect_parts(&s, "Drill ", "< link-down, 1.5 s x 2 >", NULL);
    screen_close(&s);
}

/* Each kind as the config holds it comes back on the Drill field; an unknown one is off. */
static void test_drill_config(void **state)
{
    (void)state;
    static const char *const kinds[] = {"peer-stall", "peer-kill", "blackhole",
                                        "rank-loss",  "link-down", "meltdown"};
    char path[400];
    snprintf(path, sizeof(path), "%s/config.json", cfgdir);
    mkdir(cfgdir, 0700); /* a test before may have made it */
    for (int i = 0; i < 6; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f,
                "{\"mix\": \"api\", \"setup\": {\"drill\": \"%s\", \"drill_time\": \"3 x 4\"}}\n",
                kinds[i]);
        assert_int_equal(fclose(f), 0);
        struct screen s;
        open_setup(&s, 24, 80, "< api >");
        char want[64];
        if (i < 5)
            snprintf(want, sizeof(want), "< %s, 3 s x 4 >", kinds[i]);
        else
            snprintf(want, sizeof(want), "< off >");
        expect_parts(&s, "Drill ", want, NULL);
        screen_close(&s);
    }
    remove(path);
}

/* ---- in processes of their own ---- */

/* Wait for the drill to end (at most 60 s), drawing as the loop would. */
static void wait_drill(struct screen *s)
{
    struct app *a = &s->app;
    for (int i = 0; i < 1200 && app_drill_running(a->drill); i++) {
        app_poll(a);
        usleep(50000);
    }
    assert_false(app_drill_running(a->drill));
    if (a->drill->rc != 0) {
        dump(s);
        fail_msg("the drill failed: %s", a->drill->error);
    }
}

/* rank-loss of an NCCL all-reduce on the stand-in CUDA runtime and NCCL (two devices here,
 * two on the victim agent, a fabtop serve the drill starts and kills). */
static void test_drill_rank_loss(void **state)
{
    (void)state;
    struct screen s;
    struct app *a = &s.app;
    struct app_opts o = {.input = "synth.xml",
                         .config_dir = cfgdir,
                         .no_color = true,
                         .agent_exe = getenv("FABTOP_BIN")};
    assert_non_null(o.agent_exe);
    assert_int_equal(screen_open(&s, NULL, 43, 132, &o), 0);
    screen_keys(&s, "F2 g");
    choose(&s, "Preset", "< nccl-decode >");
    /* A GPU endpoint (NCCL needs one), one size. */
    screen_keys(&s, "g j");
    choose(&s, "Endpoint", "< GPU0 ");
    screen_keys(&s, "g j j j j j");
    type_value(&s, "16KiB");
    go_drill(&s);
    type_value(&s, "1 x 1");
    /* NCCL flows take rank-loss alone: drill_check_mix_fault's line for the others. */
    struct mix m;
    form_mix("nccl-decode", "16KiB", "gpu:0", &m);
    struct ft_err ferr = {0};
    assert_int_equal(drill_check_mix_fault(&m, DRILL_PEER_KILL, &ferr), -EINVAL);
    choose(&s, "Drill ", "< peer-kill, ");
    expect_text(&s, ferr.msg);
    app_key(a, 'D');
    assert_null(a->drill);
    assert_string_equal(a->msg, ferr.msg);
    mix_free(&m);
    /* Not with a peer in the form: the victim is the drill's own. */
    choose(&s, "Drill ", "< rank-loss, 1 s x 1 >");
    screen_keys(&s, "g j j");
    type_value(&s, "10.0.0.9:7000");
    a->msg[0] = '\0';
    app_key(a, 'D');
    assert_null(a->drill);
    assert_string_equal(a->msg, "nccl-decode: rank-loss kills a victim agent the drill starts "
                                "itself, not the agent at 10.0.0.9:7000: Del on the Peer field "
                                "drills it here");
    screen_keys(&s, "g j j");
    app_key(a, KEY_DC); /* Del: the Peer back to loopback */
    expect_parts(&s, "Peer ", "loopback", NULL);
    go_drill(&s);
    expect_parts(&s, "Drill ", "< rank-loss, 1 s x 1 >", "injected at 1 s; D drills it", NULL);
    expect_text(&s, "Drill rank-loss at 1 s for 1 s, 1 repetition, against a victim agent it "
                    "starts: it kills its victim (a fabtop serve of its own with the peer NCCL "
                    "ranks), then restarts it. D starts it.");
    app_key(a, 'D');
    if (!a->drill) {
        dump(&s);
        fail_msg("no drill started: %s", a->msg);
    }
    assert_int_equal(a->view, VIEW_LIVE);
    wait_drill(&s);
    const struct results_drill_doc *d = &a->drill->doc;
    assert_true(a->drill->doc_ok);
    assert_int_equal(d->nreps, 1);
    const struct results_drill_flow *f = &d->reps[0].flows[0];
    assert_true(results_bool_true(&f->detect_ok));
    assert_true(results_bool_true(&f->recovered));
    assert_true(f->ranks_before.st == RESULTS_SET && f->ranks_before.v == 4);
    assert_true(f->ranks_after.st == RESULTS_SET && f->ranks_after.v == 2);
    assert_true(d->reps[0].agent_st != RESULTS_SET);
    expect(&s, "Drill of nccl-decode against its victim agent (fabtop serve on 127.0.0.1, "
               "started by the drill): rank-loss at 1 s for 1 s");
    expect(&s, "ranks: 4 before, 2 after; rebuilt by ncclCommShrink");
    expect(&s, "no count of answers from the agent: its victim was killed");
    expect_parts(&s, "tp-allreduce (collective, 1 connection): detected after ", "s, ok) by ",
                 NULL);
    expect_parts(&s, "recovered after ", " us per operation) at ", NULL);
    expect(&s, "Summary of 1 repetition: 1 drill (flow x repetition), 0 broke a bound, 0 never "
               "recovered");
    /* Nothing of the victim is left: its private directory is gone. */
    DIR *dir = opendir(tmpdir);
    assert_non_null(dir);
    for (struct dirent *e; (e = readdir(dir));)
        if (!strncmp(e->d_name, "fabtop-drill-", 13))
            fail_msg("the victim's directory %s/%s is left", tmpdir, e->d_name);
    closedir(dir);
    char fault[32], time[32];
    config_drill(fault, sizeof(fault), time, sizeof(time));
    assert_string_equal(fault, "rank-loss");
    screen_close(&s);
}

/* blackhole of a verbs ping-pong by the agent (its queue pairs to the error state), on this
 * machine's own topology; without RDMA here, the lines that say why, then skipped. */
static void test_drill_blackhole_verbs(void **state)
{
    (void)state;
    char why[256] = "";
    bool verbs = runner_transport_available("verbs", why, sizeof(why)) == 0;
    struct screen s;
    struct app *a = &s.app;
    struct app_opts o = {
        .input = verbs ? NULL : "synth.xml", .config_dir = cfgdir, .no_color = true};
    assert_int_equal(screen_open(&s, NULL, 43, 132, &o), 0);
    screen_keys(&s, "F2 g");
    choose(&s, "Preset", "< tp-decode >");
    /* An RDMA port: its id is on the command line. */
    screen_keys(&s, "g j");
    for (int i = 0; i < 40 && (screen_draw(&s), screen_find_row(&s, "--endpoint rdma:")) < 0; i++)
        app_key(a, KEY_RIGHT);
    if (screen_find_row(&s, "--endpoint rdma:") < 0) {
        dump(&s);
        fail_msg("no RDMA port to choose as the endpoint");
    }
    screen_keys(&s, "g j j j j j");
    type_value(&s, "4KiB");
    go_drill(&s);
    type_value(&s, "1 x 1");
    choose(&s, "Drill ", "< blackhole, 1 s x 1 >");
    if (!verbs) {
        /* Verbs cannot be chosen; the form says why, and why a TCP blackhole is not the
         * explorer's. */
        screen_keys(&s, "g j j j j");
        for (int i = 0; i < 6; i++) {
            app_key(a, KEY_RIGHT);
            char row[2048];
            expect_row(&s, "Transport", row, sizeof(row));
            if (strstr(row, "< verbs >"))
                fail_msg("verbs was chosen without RDMA: %s", row);
        }
        char line[400];
        snprintf(line, sizeof(line), "verbs: %s", why);
        line[60] = '\0'; /* the transports' lines are cut to the width */
        expect_text(&s, line);
        expect_text(&s, "a blackhole of tcp traffic needs a network namespace the drill owns "
                        "(`fabtop drill --netns NAME`); the agent's own blackhole takes verbs "
                        "ping-pongs only.");
        app_key(a, 'D');
        assert_null(a->drill);
        screen_close(&s);
        printf("SKIP: no RDMA here (verbs: %s): the agent's blackhole of a verbs ping-pong is "
               "not drilled\n",
               why);
        skipped = true; /* main's exit status: 77 */
        return;
    }
    screen_keys(&s, "g j j j j");
    choose(&s, "Transport", "< verbs >");
    go_drill(&s);
    expect_parts(&s, "Drill ", "injected at 1 s; D drills it", NULL);
    expect_text(&s, "the agent moves the ping-pongs' queue pairs to the error state. D starts it.");
    app_key(a, 'D');
    if (!a->drill) {
        dump(&s);
        fail_msg("no drill started: %s", a->msg);
    }
    wait_drill(&s);
    const struct results_drill_flow *f = &a->drill->doc.reps[0].flows[0];
    assert_true(results_bool_true(&f->detect_ok));
    assert_true(results_bool_true(&f->recovered));
    expect(&s, "Repetition 1 of 1: blackhole injected at ");
    expect(&s, "no count of answers from the agent: a verbs agent's replies are its NIC's writes");
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
    setenv("TMPDIR", tmpdir, 1); /* a rank-loss victim's directory */
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

int main(int argc, char **argv)
{
    if (!setlocale(LC_ALL, "C.UTF-8"))
        setlocale(LC_ALL, "");
    signal(SIGPIPE, SIG_IGN); /* as the explorer does */
    /* The stand-in NCCL is loaded once per process: its drill runs in a process of its own. */
    if (argc > 1 && !strcmp(argv[1], "--nccl")) {
#ifndef FAKE_CUDANCCL
        return 77;
#else
        setenv("FABTOP_CUDART", FAKE_CUDANCCL, 1);
        setenv("FABTOP_NCCL", FAKE_CUDANCCL, 1);
        setenv("FAKE_CUDA_DEVICES", "2", 1);
        unsetenv("NCCL_DEBUG");
        const struct CMUnitTest nccl[] = {cmocka_unit_test(test_drill_rank_loss)};
        return cmocka_run_group_tests(nccl, group_setup, group_teardown);
#endif
    }
    if (argc > 1 && !strcmp(argv[1], "--verbs")) {
        const struct CMUnitTest verbs[] = {cmocka_unit_test(test_drill_blackhole_verbs)};
        int rc = cmocka_run_group_tests(verbs, group_setup, group_teardown);
        return rc == 0 && skipped ? 77 : rc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drill_refused),    cmocka_unit_test(test_drill_kinds),
        cmocka_unit_test(test_drill_config),     cmocka_unit_test(test_drill_peer_kill),
        cmocka_unit_test(test_drill_under_load), cmocka_unit_test(test_drill_stop),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
