/* test_sim_screen: the explorer on a simulated run, in process (newterm on /dev/null, rows read
 * back): the fabric view (F6) before any run says how to start one; sim/incast-pfc picked and
 * started in the setup view (F2) lands on the fabric view, paused as asked; stepping by 1 us and
 * by one event, the time scale keys and skip idle drive the running simulation; what each port
 * row shows (queue, watermark, pause state) is the simulation's state; the lesson is shown and
 * can be read whole; the live view (F4) lists the simulated counters with their real names;
 * full speed runs it to the end and the final fabric stays, matching the results; the results
 * view shows the goodput in simulated time; 80x24 and 132x43 (the flows' progress); a TCP run
 * has no fabric to show. */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "tests/tui/screen.h"
#include "tui/live_plot.h"
#include "tui/views.h"

#include "../topology/synth_xml.h"
#include "tests/run/mixtest.h"

static char tmpdir[64];
static char topo_path[128];
static char cfg_dir[128];

static int setup(void **state)
{
    (void)state;
    setlocale(LC_ALL, "C.UTF-8");
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabtop-simscr-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(topo_path, sizeof(topo_path), "%s/synth.xml", tmpdir);
    FILE *f = fopen(topo_path, "w");
    if (!f)
        return -1;
    fputs(synth_v2_xml, f);
    fclose(f);
    char xdg[128], data[128];
    snprintf(xdg, sizeof(xdg), "%s/xdg", tmpdir);
    setenv("XDG_CONFIG_HOME", xdg, 1);
    snprintf(cfg_dir, sizeof(cfg_dir), "%s/fabtop", xdg);
    snprintf(data, sizeof(data), "%s/data", tmpdir);
    setenv("XDG_DATA_HOME", data, 1);
    screen_set_actual_dir(tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void open_screen(struct screen *s, int rows, int cols)
{
    struct app_opts o = {.input = topo_path, .config_dir = cfg_dir};
    if (screen_open(s, NULL, rows, cols, &o) < 0)
        fail_msg("cannot open the screen");
    s->app.msg[0] = '\0';
}

static void print_screen(struct screen *s, const char *what)
{
    char *d = screen_dump(s);
    printf("---- %s ----\n%s", what, d);
    fflush(stdout);
    free(d);
}

static void assert_on_screen(struct screen *s, const char *text)
{
    if (screen_find_row(s, text) < 0) {
        print_screen(s, "missing");
        fail_msg("not on the screen: %s", text);
    }
}

/* What the event loop does between frames: the newest snapshot, the results at the end, the
 * current view's tick; then a frame. */
static void pump(struct screen *s)
{
    struct app *a = &s->app;
    if (a->runner) {
        struct runner_snapshot *sn = runner_snapshot(a->runner);
        runner_snapshot_release(a->snap);
        a->snap = sn;
        if (runner_done(a->runner) && !a->results) {
            a->results = cJSON_Duplicate(runner_wait(a->runner), 1);
            runner_snapshot_release(a->snap);
            a->snap = runner_snapshot(a->runner);
        }
    }
    if (app_views[a->view]->tick)
        app_views[a->view]->tick(a);
    screen_draw(s);
}

/* Pump until text is on the screen (at most about 20 s). */
static bool wait_for(struct screen *s, const char *text)
{
    for (int i = 0; i < 2000; i++) {
        pump(s);
        if (screen_find_row(s, text) >= 0)
            return true;
        sleep_ms(10);
    }
    return false;
}

static void assert_wait_for(struct screen *s, const char *text)
{
    if (!wait_for(s, text)) {
        print_screen(s, "never appeared");
        fail_msg("never on the screen: %s", text);
    }
}

/* The status row of the fabric box: "sim time T us  STATE, SCALE...  N events". */
static void status_of(struct screen *s, double *t_us, unsigned long long *events)
{
    int y = screen_find_row(s, "sim time ");
    assert_true(y >= 0);
    char buf[512];
    screen_row(s, y, buf, sizeof(buf));
    const char *p = strstr(buf, "sim time ");
    *t_us = strtod(p + 9, NULL);
    const char *e = strstr(buf, " events");
    assert_non_null(e);
    while (e > buf && e[-1] >= '0' && e[-1] <= '9')
        e--;
    *events = strtoull(e, NULL, 10);
}

/* The view as the simulation published it (the screen draws the same copy); its arrays
 * belong to the snapshot kept in sim_sn until sim_view_free. */
static struct runner_snapshot *sim_sn;
static void sim_view(struct screen *s, struct fabric_snap *v)
{
    assert_int_equal(mixtest_fabric(s->app.runner, v, &sim_sn), 0);
}

static void sim_view_free(struct fabric_snap *v)
{
    (void)v;
    runner_snapshot_release(sim_sn);
    sim_sn = NULL;
}

/* The row of a port ("sw0/0 " at its start inside the box), or "" when not shown. */
static void port_row(struct screen *s, const char *label, char *buf, size_t len)
{
    buf[0] = '\0';
    int rows = getmaxy(stdscr);
    for (int y = 0; y < rows; y++) {
        char r[1024], want[64];
        screen_row(s, y, r, sizeof(r));
        snprintf(want, sizeof(want), "\u2502%s ", label);
        if (!strncmp(r, want, strlen(want))) {
            snprintf(buf, len, "%s", r);
            return;
        }
    }
}

/* Every port row on the screen says what the simulation says: its depth, watermark and
 * pause state. Returns how many rows were checked. */
static int check_port_rows(struct screen *s, const struct fabric_snap *v, int *held)
{
    int checked = 0;
    for (int i = 0; i < v->nports; i++) {
        const struct sim_port_snap *p = &v->ports[i];
        char label[64], row[1024];
        if (p->host)
            snprintf(label, sizeof(label), "%s", v->node_names[p->node]);
        else
            snprintf(label, sizeof(label), "%s/%d", v->node_names[p->node], p->port);
        port_row(s, label, row, sizeof(row));
        if (!row[0])
            continue;
        char depth[16], wm[16], want[64];
        live_fmt_queue(depth, sizeof(depth), p->queue_bytes);
        live_fmt_queue(wm, sizeof(wm), p->watermark_bytes);
        const char *pause = p->paused && p->pausing ? "held+X"
                            : p->paused             ? "held"
                            : p->pausing            ? "XOFF"
                                                    : "-";
        snprintf(want, sizeof(want), " %s %s %s ", depth, wm, pause);
        /* Collapse runs of blanks in the row to compare the columns. */
        char flat[1024];
        size_t n = 0;
        for (const char *c = row; *c && n + 1 < sizeof(flat); c++)
            if (!(*c == ' ' && n && flat[n - 1] == ' '))
                flat[n++] = *c;
        flat[n] = '\0';
        if (!strstr(flat, want)) {
            print_screen(s, "a port row that disagrees with the simulation");
            fail_msg("%s: row '%s' lacks '%s'", label, flat, want);
        }
        *held += p->paused || p->pausing;
        checked++;
    }
    return checked;
}

/* ---- before any run ---- */

static void test_no_run(void **state)
{
    (void)state;
    struct screen s;
    open_screen(&s, 24, 80);
    screen_keys(&s, "F6");
    assert_int_equal(s.app.view, VIEW_FABRIC);
    screen_draw(&s);
    assert_on_screen(&s, "F6 Fabric");
    assert_on_screen(&s, "No simulated run is active.");
    assert_on_screen(&s, "F2 (setup)");
    assert_on_screen(&s, "fabtop run --mix sim/incast-pfc");
    /* The explorer plays sim runs in slow motion, skipping idle stretches, by default. */
    struct sim_ctl_state c;
    c = s.app.playback;
    assert_true(c.scale == 1000000 && c.skip_idle && !c.paused);
    assert_on_screen(&s, "1 us per 1 ms, skipping idle");
    /* The keys set what the next run starts with. */
    screen_keys(&s, "+");
    c = s.app.playback;
    assert_int_equal(c.scale, 500000);
    screen_keys(&s, "- - -");
    c = s.app.playback;
    assert_int_equal(c.scale, 5000000);
    screen_keys(&s, "i Space");
    c = s.app.playback;
    assert_true(!c.skip_idle && c.paused);
    screen_draw(&s);
    assert_on_screen(&s, "1 us per 5 ms, starting paused");
    screen_keys(&s, "f");
    c = s.app.playback;
    assert_int_equal(c.scale, 0);
    screen_keys(&s, "f");
    c = s.app.playback;
    assert_int_equal(c.scale, 5000000); /* back to the slow motion it had */
    /* The fastest slow motion is 1 us per 10 us; faster is full speed; the slowest 100 ms. */
    for (int i = 0; i < 20; i++)
        screen_keys(&s, "-");
    c = s.app.playback;
    assert_int_equal(c.scale, 100000000);
    for (int i = 0; i < 12; i++)
        screen_keys(&s, "+");
    c = s.app.playback;
    assert_int_equal(c.scale, 10000);
    screen_keys(&s, "+");
    c = s.app.playback;
    assert_int_equal(c.scale, 0);
    screen_keys(&s, "-");
    c = s.app.playback;
    assert_int_equal(c.scale, 10000);
    /* The help lists the view's keys. */
    screen_keys(&s, "F1");
    screen_draw(&s);
    assert_on_screen(&s, "F6 or 6    simulated fabric");
    screen_keys(&s, "6");
    assert_int_equal(s.app.view, VIEW_FABRIC);
    screen_close(&s);
    /* Closing the explorer puts the library's default back: full speed. */
    c = s.app.playback;
    assert_true(c.scale == 0 && !c.paused);
}

/* ---- a simulated incast, watched ---- */

static void test_incast(void **state)
{
    (void)state;
    struct screen s;
    open_screen(&s, 24, 80);
    /* Ask for the next run to start paused, then pick the preset in the setup view. */
    screen_keys(&s, "F6 Space F2");
    assert_int_equal(s.app.view, VIEW_SETUP);
    screen_draw(&s);
    for (int i = 0; i < 60 && screen_find_row(&s, "< sim/incast-pfc >") < 0; i++) {
        screen_keys(&s, "Right");
        screen_draw(&s);
    }
    assert_on_screen(&s, "< sim/incast-pfc >");
    /* Nothing of this host applies to a simulated fabric. */
    assert_on_screen(&s, "Endpoint       n/a");
    assert_on_screen(&s, "Peer           n/a");
    assert_on_screen(&s, "Transport      < sim >");
    assert_on_screen(&s, "$ fabtop run --mix sim/incast-pfc");
    /* The scenario's fifteen senders, not "n/a" (issue 21), and no file users lack. */
    assert_on_screen(&s, "Incast senders 15 ");
    assert_on_screen(&s, "simulated, into h0 (fixed)");
    assert_int_equal(screen_find_row(&s, "sim-reference"), -1);
    screen_keys(&s, "S");
    assert_non_null(s.app.runner);
    assert_int_equal(s.app.view, VIEW_FABRIC);
    assert_wait_for(&s, "PAUSED");
    assert_on_screen(&s, "Fabric star16-100g: RoCE, PFC, 16 hosts, 1 switch");
    assert_on_screen(&s, "Lesson: sim/incast-pfc");
    assert_on_screen(&s, "Fifteen senders converge");
    double t;
    unsigned long long ev, ev2;
    status_of(&s, &t, &ev);
    assert_true(t == 0);
    /* n: 1 us of simulated time; e: one event. */
    screen_keys(&s, "n");
    assert_wait_for(&s, "sim time 1.000 us");
    status_of(&s, &t, &ev);
    screen_keys(&s, "e");
    for (int i = 0; i < 500; i++) {
        pump(&s);
        status_of(&s, &t, &ev2);
        if (ev2 != ev)
            break;
        sleep_ms(10);
    }
    assert_int_equal(ev2, ev + 1);
    /* The scale keys drive the running simulation. */
    struct fabric_snap v;
    screen_keys(&s, "-");
    assert_wait_for(&s, "1 us per 2 ms");
    sim_view(&s, &v);
    assert_int_equal(v.ctl.scale, 2000000);
    sim_view_free(&v);
    screen_keys(&s, "i");
    sim_view(&s, &v);
    assert_false(v.ctl.skip_idle);
    sim_view_free(&v);
    screen_keys(&s, "i");
    /* Play 400 us at 1 us per 2 ms (0.8 s), then pause and compare every port row with the
     * simulation. */
    screen_keys(&s, "Space");
    do {
        pump(&s);
        status_of(&s, &t, &ev);
        sleep_ms(10);
    } while (t < 400);
    screen_keys(&s, "Space");
    /* Paused: wait until the copy on screen is the paused state's. */
    for (int i = 0; i < 500; i++) {
        sleep_ms(60);
        sim_view(&s, &v);
        pump(&s);
        status_of(&s, &t, &ev);
        bool same = v.ctl.paused && fabs(t - v.sim_now_ps / 1e6) < 0.0005;
        if (same)
            break;
        sim_view_free(&v);
    }
    assert_true(v.ctl.paused);
    assert_on_screen(&s, "PAUSED");
    /* The fabric drawn (the first mode): the switch's row with one mark per port toward the
     * hosts, in port order, each what the simulation says (H held, X pausing, a queue bar,
     * + traffic, a dot idle), and under it the hosts' own ports; then v for the table. */
    {
        uint64_t qm = 0;
        for (int i = 0; i < v.nports; i++)
            qm = v.ports[i].watermark_bytes > qm ? v.ports[i].watermark_bytes : qm;
        char want_sw[512] = "sw0 \u2193", want_h[512] = "h0-15 ";
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < v.nports; i++) {
                const struct sim_port_snap *p = &v.ports[i];
                if (p->host != (pass == 1))
                    continue;
                const char *m = !p->up           ? "!"
                                : p->paused      ? "H"
                                : p->pausing     ? "X"
                                : p->queue_bytes ? NULL
                                                 : NULL;
                char bar[8];
                if (!m && p->queue_bytes) {
                    static const char *const b8[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                                     "\u2585", "\u2586", "\u2587", "\u2588"};
                    int k = (int)((double)p->queue_bytes / (double)qm * 8 + 0.999) - 1;
                    snprintf(bar, sizeof(bar), "%s", b8[k < 0 ? 0 : k > 7 ? 7 : k]);
                    m = bar;
                }
                /* Traffic or idle depends on the last interval's utilisation, which the
                 * test does not have: either is accepted below as '?'. */
                strcat(pass ? want_h : want_sw, m ? m : "?");
            }
        for (int which = 0; which < 2; which++) {
            const char *want = which ? want_h : want_sw;
            int y = screen_find_row(&s, which ? "h0-15 " : "sw0 \u2193");
            if (y < 0) {
                print_screen(&s, "the drawing");
                fail_msg("no row for %s", which ? "the hosts" : "sw0");
            }
            char row[1024];
            screen_row(&s, y, row, sizeof(row));
            const char *got = strstr(row, which ? "h0-15 " : "sw0 \u2193");
            /* Compare mark by mark (UTF-8 sequences), '?' matching '+' or the dot. */
            const char *w = want, *g = got;
            while (*w && *g) {
                int wl = (*w & 0x80) ? ((*w & 0xe0) == 0xc0 ? 2 : 3) : 1;
                int gl = (*g & 0x80) ? ((*g & 0xe0) == 0xc0 ? 2 : 3) : 1;
                bool ok = (wl == gl && !strncmp(w, g, (size_t)wl)) ||
                          (*w == '?' && (!strncmp(g, "+", 1) || !strncmp(g, "\u00b7", 2)));
                if (!ok)
                    fail_msg("drawn '%s', the simulation says '%s'", got, want);
                w += wl;
                g += gl;
            }
            assert_int_equal(*w, '\0');
        }
        assert_on_screen(&s, "v: table  "); /* the legend in the form that fits 80 */
        /* The lesson's port (sw0/0, the egress toward h0) is highlighted: in the table (v)
         * its name is drawn selected, first, and the next port's is not. (The drawing's
         * marks are multi-byte characters, whose attributes winch cannot report.) */
        assert_on_screen(&s, "reversed: lesson's"); /* the legend's form at 80 */
        screen_keys(&s, "v");
        screen_draw(&s);
        int ly = screen_find_row(&s, "\u2502sw0/0 ");
        assert_int_equal(ly, screen_find_row(&s, "link to") + 1);
        attr_t sel = s.app.ui.attr[ROLE_SELECTED];
        assert_true((screen_attr(&s, ly, 1) & A_COLOR) == (sel & A_COLOR));
        assert_true((screen_attr(&s, ly + 1, 1) & A_COLOR) != (sel & A_COLOR));
    }
    /* What is left, from the share done: simulated time, and wall time at this scale, in
     * the fabric box's title (issue 21), at 80 columns as the short form of the title. */
    {
        int ty = screen_find_row(&s, "\u250c\u2500 Fabric ");
        assert_true(ty >= 0);
        char tr[1024];
        screen_row(&s, ty, tr, sizeof(tr));
        if (!strstr(tr, "% done, ~") || !strstr(tr, " s left"))
            fail_msg("the fabric's title says nothing of the time left: '%s'", tr);
    }
    int held = 0;
    int rows = check_port_rows(&s, &v, &held);
    assert_true(rows >= 8); /* 80x24 shows 9 port rows */
    /* The incast's queue builds at the switch's egress toward h0: the deepest watermark,
     * that port's row first on the screen. */
    int deepest = 0;
    for (int i = 1; i < v.nports; i++)
        if (v.ports[i].watermark_bytes > v.ports[deepest].watermark_bytes)
            deepest = i;
    assert_false(v.ports[deepest].host);
    assert_true(v.node_host[v.ports[deepest].peer_node]);
    assert_string_equal(v.node_names[v.ports[deepest].peer_node], "h0");
    assert_true(v.ports[deepest].queue_bytes > 0);
    char row[1024];
    port_row(&s, "sw0/0", row, sizeof(row));
    assert_non_null(strstr(row, " h0 "));
    assert_true(screen_find_row(&s, "\u2502sw0/0 ") == screen_find_row(&s, "link to") + 1);
    sim_view_free(&v);
    /* a: the active ports only; the title says what a does. */
    assert_on_screen(&s, "(a: active only)");
    screen_keys(&s, "a");
    screen_draw(&s);
    assert_on_screen(&s, "(a: all ports)");
    screen_keys(&s, "a");
    /* Sort (> cycles, as htop's F6) and filter (\\, as htop's): by name h0 comes first; by
     * watermark the incast's egress toward h0; the filter h15 leaves h15 and its switch
     * port; an empty filter and < back to the table's own order. */
    int head = screen_find_row(&s, "link to");
    screen_keys(&s, ">");
    screen_draw(&s);
    assert_on_screen(&s, " by name");
    assert_int_equal(screen_find_row(&s, "\u2502h0 "), head + 1);
    screen_keys(&s, "> >");
    screen_draw(&s);
    assert_on_screen(&s, " by watermark");
    assert_int_equal(screen_find_row(&s, "\u2502sw0/0 "), head + 1);
    screen_keys(&s, "\\ h 1 5 Enter");
    screen_draw(&s);
    assert_on_screen(&s, "1-2/2 by watermark 'h15'");
    assert_true(screen_find_row(&s, "\u2502h15 ") > head);
    assert_true(screen_find_row(&s, "\u2502sw0/15 ") > head);
    assert_int_equal(screen_find_row(&s, "\u2502sw0/0 "), -1);
    screen_keys(&s, "\\ Enter < < <");
    screen_draw(&s);
    assert_int_equal(screen_find_row(&s, " by watermark"), -1);
    assert_int_equal(screen_find_row(&s, "\u2502sw0/0 "), head + 1);
    /* l: the whole lesson, and back. */
    const char *lesson = s.app.run_mix.lesson;
    const char *tail = lesson + strlen(lesson);
    for (int k = 0; k < 3 && tail > lesson; tail--)
        k += tail[-1] == ' ';
    screen_keys(&s, "l");
    screen_draw(&s);
    assert_on_screen(&s, "l: back to the fabric");
    assert_on_screen(&s, tail + 1);
    screen_keys(&s, "l");
    screen_draw(&s);
    assert_on_screen(&s, "sim time ");
    /* The keys fit the bottom row of 80 columns (once the last message is gone). */
    s.app.msg[0] = '\0';
    screen_draw(&s);
    assert_on_screen(&s, "l lesson  F10 quit");
    /* The live view lists the simulated fabric's counters with their real names. */
    screen_keys(&s, "F4");
    screen_resize(&s, 43, 132);
    pump(&s);
    assert_on_screen(&s, "port_xmit_data");
    assert_on_screen(&s, "h1 (");
    assert_on_screen(&s, "rx_prio3_pause "); /* the senders were paused */
    /* Issue 21's sim facts: goodput in simulated time (on a 100 Gb/s fabric fifteen
     * senders get about 6 Gb/s each, not the 0.003 Gb/s of a wall-clock rate), the
     * run's clock and share done instead of "1.8/0.0 s", a heading per source and
     * columns that never run together. */
    assert_on_screen(&s, "Goodput per flow, Gb/s in simulated time");
    {
        char fr[1024];
        int fy = screen_find_row(&s, "\u2502sender1 ");
        assert_true(fy >= 0);
        screen_row(&s, fy, fr, sizeof(fr));
        const char *ops = strstr(fr, " ops ");
        assert_non_null(ops);
        double g = strtod(ops + 5, NULL);
        if (!(g > 1 && g < 100))
            fail_msg("sender1's simulated goodput %g Gb/s is not within 1-100: '%s'", g, fr);
        int hy = screen_find_row(&s, "measuring, simulated ");
        assert_true(hy == 0);
        assert_true(screen_find_row(&s, "% done") >= 0);
        assert_int_equal(screen_find_row(&s, "/0.0 s"), -1);
    }
    assert_on_screen(&s, "h1 (simulated, IB port counters)");
    assert_on_screen(&s, "h1 (simulated, ethtool)");
    assert_on_screen(&s, "per sim s");
    {
        char cr[1024];
        screen_row(&s, screen_find_row(&s, "rx_prio3_pause "), cr, sizeof(cr));
        for (const char *q = strstr(cr, "rx_prio3_pause ") + 15; *q; q++)
            if (q[0] >= 'a' && q[0] <= 'z' && q[1] >= '0' && q[1] <= '9')
                fail_msg("columns run together: '%s'", cr);
    }
    screen_keys(&s, "F6");
    pump(&s);
    /* 132x43: the flows' progress too. */
    assert_on_screen(&s, "Flows");
    assert_on_screen(&s, "h1->h0");
    /* f: full speed to the end; the final fabric stays, as the results have it. */
    screen_keys(&s, "f");
    for (int i = 0; i < 3000 && !s.app.results; i++) {
        pump(&s);
        sleep_ms(10);
    }
    assert_non_null(s.app.results);
    assert_wait_for(&s, "finished");
    /* The run's answer on the fabric view (issue 21). */
    assert_on_screen(&s, "Result: sender1 p99 ");
    /* The paused start was this run's: the next one plays (issue 21). */
    assert_false(s.app.playback.paused);
    const cJSON *fl = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(s.app.results, "phases"), 0),
                            "flows"),
        0);
    const cJSON *fab = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(fl, "conditions"), "sim"), "fabric");
    double sim_us, wm;
    assert_true(jsonutil_num(fab, "sim_time_us", &sim_us));
    char want[96];
    snprintf(want, sizeof(want), "sim time %.3f us  finished", sim_us);
    assert_on_screen(&s, want);
    assert_true(jsonutil_num(cJSON_GetObjectItem(cJSON_GetObjectItem(fab, "counters"), "sw0/0"),
                             "queue_watermark", &wm));
    char wms[16];
    live_fmt_queue(wms, sizeof(wms), (uint64_t)wm);
    port_row(&s, "sw0/0", row, sizeof(row));
    if (!strstr(row, wms))
        fail_msg("sw0/0's final watermark: '%s' lacks %s", row, wms);
    assert_on_screen(&s, "avg"); /* utilisation over the whole run */
    assert_on_screen(&s, "done");
    /* The end as expected screens (the simulation is deterministic): the port table as it
     * stands, then the switch ports (the filter sw0) deepest watermark first, then the drawing. */
    s.app.msg[0] = '\0';
    screen_draw(&s);
    bool same = screen_matches(&s, "fabric-finished-132x43");
    /* The table's selection: its first row, said in words under the table; Down moves it,
     * a click on a row selects that port (sw0/3's row). */
    assert_true(screen_find_row(&s, "sw0/0 -> h0: queue ") > 0);
    screen_keys(&s, "Down");
    screen_draw(&s);
    assert_true(screen_find_row(&s, "sw0/1 -> h1: queue ") > 0);
    int r3 = screen_find_row(&s, "sw0/3  ");
    assert_true(r3 > 0);
    app_mouse(&s.app, r3, 5, BUTTON1_PRESSED);
    screen_draw(&s);
    assert_true(screen_find_row(&s, "sw0/3 -> h3: queue ") > 0);
    screen_keys(&s, "Home");
    screen_keys(&s, "> > > \\ s w 0 Enter");
    s.app.msg[0] = '\0';
    screen_draw(&s);
    same &= screen_matches(&s, "fabric-sorted-132x43");
    screen_keys(&s, "\\ Enter < < < v");
    s.app.msg[0] = '\0';
    screen_draw(&s);
    same &= screen_matches(&s, "fabric-drawn-132x43");
    /* The drawing and the table at 80x24 too. */
    screen_resize(&s, 24, 80);
    s.app.msg[0] = '\0';
    screen_draw(&s);
    same &= screen_matches(&s, "fabric-drawn-80x24");
    screen_keys(&s, "v");
    s.app.msg[0] = '\0';
    screen_draw(&s);
    same &= screen_matches(&s, "fabric-finished-80x24");
    screen_resize(&s, 43, 132);
    assert_true(same);
    /* The results view: goodput in simulated time. */
    screen_keys(&s, "F5");
    pump(&s);
    assert_on_screen(&s, "sim Gb/s");
    screen_keys(&s, "Enter");
    pump(&s);
    assert_on_screen(&s, "Gb/s in simulated time");
    screen_close(&s);
}

/* ---- a run without simulated flows ---- */

static void test_tcp_run(void **state)
{
    (void)state;
    struct screen s;
    open_screen(&s, 24, 80);
    const char text[] =
        "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"tcp-pp\", \"flows\": [{\"name\": "
        "\"pp\", \"transport\": \"tcp\", \"op\": \"pingpong\", \"size\": 64, \"warmup_s\": 0, "
        "\"duration_s\": 0.3, \"peer\": \"loopback\"}]}";
    struct mix m = mixtest_parse(text);
    struct ft_err err = {0};
    if (app_start_run(&s.app, &m, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    mix_free(&m);
    screen_keys(&s, "F6");
    pump(&s);
    assert_on_screen(&s, "The test tcp-pp has no simulated flows");
    /* Stepping has nothing to step. */
    screen_keys(&s, "n");
    assert_non_null(strstr(s.app.msg, "nothing to step"));
    runner_wait(s.app.runner);
    screen_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_run),
        cmocka_unit_test(test_incast),
        cmocka_unit_test(test_tcp_run),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
