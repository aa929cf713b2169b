/* test_setup: the test setup view at 80x24 in process: the form's fields, transports that
 * cannot run with their reasons, the command-line equivalent, a bad value refused with one
 * message, short loopback TCP runs started from the form (every setting said as a
 * `fabtop run` flag; no mix file saved), the settings remembered across two app_init
 * calls, and a model preset's layout, sizes, refusal and loopback TCP run. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curses.h>

#include "common/jsonutil.h"
#include "engine/flow/mix.h"
#include "engine/run/runner.h"
#include "topology/topo_json.h"
#include "topology/topo_load.h"
#include "tui/app.h"

#include "../topology/synth_xml.h"

#define ROWS     24  /* lines */
#define COLS     80  /* columns */
#define LINE_MAX 160 /* columns read back per row */

static char tmpdir[64];
static char topo_path[128]; /* the snapshot the explorer reads */
static char cfg_dir[128];   /* $XDG_CONFIG_HOME/fabtop */
static SCREEN *scr;
static FILE *scr_out, *scr_in;

/* The synthetic machine (2 GPUs, mlx5_0 port 1 with netdev ib0) plus a netdev "lo" with
 * 127.0.0.1, so an IP endpoint can carry a loopback run. */
static void write_topology(void)
{
    char xml[128];
    snprintf(xml, sizeof(xml), "%s/synth.xml", tmpdir);
    FILE *f = fopen(xml, "w");
    assert_non_null(f);
    fputs(synth_v2_xml, f);
    fclose(f);
    struct topo_load_opts o = {.input = xml, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    struct ft_err err = {0};
    if (topo_load(&o, &m, &err) < 0)
        fail_msg("%s", err.msg);
    int d = topo_model_add_netdev(m);
    snprintf(m->netdevs[d].name, sizeof(m->netdevs[d].name), "lo");
    m->netdevs[d].pci = m->netdevs[d].nic = -1;
    snprintf(m->netdevs[d].addrs, sizeof(m->netdevs[d].addrs), "127.0.0.1");
    cJSON *doc = topo_json_from_model(m);
    snprintf(topo_path, sizeof(topo_path), "%s/node.json", tmpdir);
    assert_int_equal(jsonutil_save(topo_path, doc, true, &err), 0);
    cJSON_Delete(doc);
    topo_model_free(m);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/fabtop-setup-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    char xdg[128];
    snprintf(xdg, sizeof(xdg), "%s/xdg", tmpdir);
    setenv("XDG_CONFIG_HOME", xdg, 1);
    snprintf(cfg_dir, sizeof(cfg_dir), "%s/fabtop", xdg);
    char data[128];
    snprintf(data, sizeof(data), "%s/data", tmpdir);
    setenv("XDG_DATA_HOME", data, 1);
    unsetenv("FABTOP_KEY");
    write_topology();
    scr_out = fopen("/dev/null", "w");
    scr_in = fopen("/dev/null", "r");
    scr = newterm("xterm", scr_out, scr_in);
    if (!scr)
        return -1;
    set_term(scr);
    resizeterm(ROWS, COLS);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    endwin();
    delscreen(scr);
    fclose(scr_out);
    fclose(scr_in);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd);
}

/* ---- the screen ---- */

static void open_app(struct app *a)
{
    struct app_opts o = {.input = topo_path, .no_color = true, .config_dir = cfg_dir};
    struct ft_err err = {0};
    if (app_init(a, &o, &err) < 0)
        fail_msg("app_init: %s", err.msg);
    ui_setup(&a->ui, stdscr, &a->theme, true);
    app_key(a, KEY_F(2));
    assert_int_equal(a->view, VIEW_SETUP);
}

static void row(int y, char *buf)
{
    int n = mvwinnstr(stdscr, y, 0, buf, getmaxx(stdscr) < LINE_MAX ? getmaxx(stdscr) : LINE_MAX);
    if (n < 0)
        n = 0;
    buf[n] = '\0';
    while (n && buf[n - 1] == ' ')
        buf[--n] = '\0';
}

static void dump(void)
{
    char buf[LINE_MAX + 1];
    for (int y = 0; y < getmaxy(stdscr); y++) {
        row(y, buf);
        fprintf(stderr, "%2d|%s\n", y, buf);
    }
}

/* Draw, then the first row holding needle (-1 if none). */
static int find(struct app *a, const char *needle)
{
    app_draw(a);
    char buf[LINE_MAX + 1];
    for (int y = 0; y < getmaxy(stdscr); y++) {
        row(y, buf);
        if (strstr(buf, needle))
            return y;
    }
    return -1;
}

static void expect(struct app *a, const char *needle)
{
    if (find(a, needle) < 0) {
        dump();
        fail_msg("'%s' is not on the screen", needle);
    }
}

static void expect_not(struct app *a, const char *needle)
{
    if (find(a, needle) >= 0) {
        dump();
        fail_msg("'%s' should not be on the screen", needle);
    }
}

/* The form row of a field, by its label. */
static void field_row(struct app *a, const char *label, char *buf)
{
    int y = find(a, label);
    if (y < 0) {
        dump();
        fail_msg("no field %s", label);
    }
    row(y, buf);
}

static void keys(struct app *a, const char *s)
{
    for (; *s; s++)
        app_key(a, (unsigned char)*s);
}

/* Select the k-th field from the top (all fields before it apply to the preset). */
static void go(struct app *a, int k)
{
    app_key(a, 'g');
    for (int i = 0; i < k; i++)
        app_key(a, 'j');
}

/* Press Right on the selected choice until its row shows want. */
static void choose(struct app *a, const char *label, const char *want)
{
    char buf[LINE_MAX + 1];
    for (int i = 0; i < 40; i++) {
        field_row(a, label, buf);
        if (strstr(buf, want))
            return;
        app_key(a, KEY_RIGHT);
    }
    dump();
    fail_msg("%s never showed '%s'", label, want);
}

/* Enter, replace the text, Enter. */
static void type_field(struct app *a, int k, const char *text)
{
    go(a, k);
    app_key(a, '\n');
    app_key(a, 21); /* Ctrl-U */
    keys(a, text);
    app_key(a, '\n');
}

enum { K_PRESET = 0, K_ENDPOINT, K_PEER, K_KEY, K_TRANSPORT, K_SIZE, K_CONC, K_DURATION };

/* Wait for the run to end (at most 30 s) and check that it measured without failing. */
static void wait_run(struct app *a)
{
    assert_non_null(a->runner);
    for (int i = 0; i < 3000 && !runner_done(a->runner); i++)
        usleep(10000);
    assert_true(runner_done(a->runner));
    const cJSON *res = runner_wait(a->runner);
    assert_non_null(res);
    if (runner_status(a->runner) != 0) {
        char *t = cJSON_Print(res);
        fprintf(stderr, "%s\n", t);
        cJSON_free(t);
        fail_msg("the run failed");
    }
}

/* ---- tests ---- */

static void test_form(void **state)
{
    (void)state;
    struct app a;
    open_app(&a);
    expect(&a, "F2 Setup");
    static const char *const labels[] = {
        "Preset",      "Endpoint", "Peer",           "Key file",   "Transport", "Message size",
        "Concurrency", "Duration", "Incast senders", "Neighbours", "[ Start ]"};
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
        expect(&a, labels[i]);
    /* Fresh config: the first preset, its description and the plain command line. */
    expect(&a, "< api >");
    expect(&a, "api: Front-end API traffic");
    expect(&a, "any (default route)");
    expect(&a, "$ fabtop run --mix api");
    expect(&a, "Usable transports: tcp");

    /* A GPU endpoint: TCP cannot use it, and says so. */
    go(&a, K_ENDPOINT);
    choose(&a, "Endpoint", "GPU0");
    expect(&a, "< tcp (not usable) >");
    expect(&a, "tcp: TCP cannot use a GPU endpoint");
    expect(&a, "verbs: ");
    /* An RDMA port with a netdev: TCP runs over ib0; a flag says it. */
    choose(&a, "Endpoint", "mlx5_0:1 (ib0)");
    expect(&a, "Usable transports: tcp");
    expect(&a, "$ fabtop run --mix api --endpoint rdma:mlx5_0:1");
    expect_not(&a, "Start saves");
    /* Del: back to the default route. */
    app_key(&a, KEY_DC);
    expect(&a, "any (default route)");
    expect(&a, "$ fabtop run --mix api");

    /* Typed size and duration become flags. */
    type_field(&a, K_SIZE, "64KiB");
    type_field(&a, K_DURATION, "2");
    expect(&a, "$ fabtop run --mix api --size 64KiB --duration 2");
    /* Left/Right on the size halve and double it. */
    go(&a, K_SIZE);
    app_key(&a, KEY_RIGHT);
    expect(&a, "--size 128KiB");
    /* A remote peer and key file are flags too. */
    type_field(&a, K_PEER, "10.1.2.3:4791");
    type_field(&a, K_KEY, "/etc/fabtop.key");
    expect(&a, "--peer 10.1.2.3:4791 --key-file /etc/fabtop.key");
    expect(&a, "a `fabtop serve` agent");
    /* Left/Right on the peer goes back to loopback. */
    go(&a, K_PEER);
    app_key(&a, KEY_LEFT);
    expect_not(&a, "--peer");
    /* Esc cancels an edit. */
    go(&a, K_CONC);
    app_key(&a, '\n');
    keys(&a, "77");
    expect(&a, "77_");
    app_key(&a, 27);
    expect_not(&a, "77");

    /* Incast: the senders field; neighbours off drops them (a flag). */
    go(&a, K_PRESET);
    choose(&a, "Preset", "< incast >");
    /* At 80x24 its description fills the rows below the form; the lesson shows larger. */
    expect(&a, "incast: Incast N->1: four senders stream into this host at once");
    char buf[LINE_MAX + 1];
    field_row(&a, "Incast senders", buf);
    assert_non_null(strstr(buf, " 4 "));
    go(&a, 9);
    app_key(&a, KEY_RIGHT);
    field_row(&a, "Neighbours", buf);
    assert_non_null(strstr(buf, "< off >"));
    field_row(&a, "Incast senders", buf);
    assert_non_null(strstr(buf, "n/a"));
    expect(&a, "$ fabtop run --mix incast --neighbours off");
    /* Everything drawn stays inside 80x24: the command line is on the body's last row. */
    assert_int_equal(find(&a, "$ fabtop run"), ROWS - 2);
    /* A larger terminal shows the whole lesson; back to 80x24 after. */
    resizeterm(40, 120);
    app_key(&a, KEY_RESIZE);
    expect(&a, "Lesson: When several senders");
    expect(&a, "host to make it real.");
    expect(&a, "$ fabtop run --mix incast --neighbours off");
    resizeterm(ROWS, COLS);
    app_key(&a, KEY_RESIZE);
    /* F5 is the results tab everywhere, this form included; S starts a test. */
    app_key(&a, KEY_F(5));
    assert_int_equal(a.view, VIEW_RESULTS);
    assert_null(a.runner);
    app_fini(&a);
}

static void test_bad_values(void **state)
{
    (void)state;
    struct app a;
    open_app(&a);
    type_field(&a, K_SIZE, "12QB");
    /* Confirming the edit already says what is wrong ... */
    assert_non_null(strstr(a.msg, "Message size '12QB'"));
    a.msg[0] = '\0';
    /* ... and Start refuses with the same one message. */
    app_key(&a, 'S');
    assert_null(a.runner);
    assert_non_null(strstr(a.msg, "Message size '12QB'"));
    expect(&a, "Message size '12QB': give bytes");
    app_key(&a, KEY_DC);

    /* Ping-pong keeps one message in flight. */
    go(&a, K_PRESET);
    choose(&a, "Preset", "< tp-decode >");
    type_field(&a, K_CONC, "4");
    app_key(&a, 'S');
    assert_null(a.runner);
    assert_non_null(strstr(a.msg, "ping-pong"));
    type_field(&a, K_CONC, "");

    /* A transport's own limit (TCP ping-pong messages carry a 16-byte header). */
    type_field(&a, K_SIZE, "8");
    app_key(&a, 'S');
    assert_null(a.runner);
    assert_non_null(strstr(a.msg, "16 B to 1 GiB"));

    /* No transport for a GPU endpoint. */
    type_field(&a, K_SIZE, "");
    go(&a, K_ENDPOINT);
    choose(&a, "Endpoint", "GPU1");
    app_key(&a, 'S');
    assert_null(a.runner);
    assert_non_null(strstr(a.msg, "Transport"));
    app_fini(&a);
}

static void test_start_and_remember(void **state)
{
    (void)state;
    struct app a;
    open_app(&a);
    /* api over 127.0.0.1 (bound as the local IP), 2 in flight, 0.3 s. */
    go(&a, K_ENDPOINT);
    choose(&a, "Endpoint", "ip 127.0.0.1 (lo)");
    type_field(&a, K_SIZE, "1KiB");
    type_field(&a, K_CONC, "2");
    type_field(&a, K_DURATION, "0.3");
    /* At 80 columns the command line takes two rows. */
    static const char *const api_line =
        "$ fabtop run --mix api --size 1KiB --duration 0.3 --endpoint ip:127.0.0.1";
    expect(&a, api_line);
    expect(&a, "--concurrency 2");
    go(&a, 10 - 2); /* api has no background flows: Start follows Duration */
    app_key(&a, 'j');
    app_key(&a, '\n');
    if (!a.runner) {
        dump();
        fail_msg("no run started: %s", a.msg);
    }
    assert_string_equal(a.run_mix.name, "api");
    wait_run(&a);

    /* The mix that ran has every setting; no "last-setup" mix file is written any more. */
    const struct mix *m = &a.run_mix;
    assert_int_equal(m->nflows, 1);
    assert_string_equal(m->flows[0].local_ip, "127.0.0.1");
    assert_int_equal(m->flows[0].concurrency, 2);
    assert_int_equal(m->flows[0].size.bytes[0], 1024);
    assert_true(m->flows[0].duration_s > 0.29 && m->flows[0].duration_s < 0.31);
    struct mix none;
    struct ft_err err = {0};
    assert_int_equal(mix_load("last-setup", &none, &err), -ENOENT);
    app_fini(&a);

    /* A second explorer remembers all of it. */
    open_app(&a);
    expect(&a, "< api >");
    expect(&a, "ip 127.0.0.1 (lo)");
    char buf[LINE_MAX + 1];
    field_row(&a, "Concurrency", buf);
    assert_non_null(strstr(buf, " 2 "));
    field_row(&a, "Duration", buf);
    assert_non_null(strstr(buf, "0.3 s"));
    expect(&a, api_line);
    expect(&a, "--concurrency 2");

    /* Incast with five senders: the fifth is a copy of the last under a new name. */
    go(&a, K_ENDPOINT);
    app_key(&a, KEY_DC);
    go(&a, K_PRESET);
    choose(&a, "Preset", "< incast >");
    type_field(&a, K_SIZE, "1KiB");
    type_field(&a, K_DURATION, "0.2");
    type_field(&a, 8, "5");
    app_key(&a, 'S');
    if (!a.runner) {
        dump();
        fail_msg("no run started: %s", a.msg);
    }
    wait_run(&a);
    app_key(&a, KEY_F(2));
    expect(&a, "$ fabtop run --mix incast --size 1KiB --duration 0.2 --senders 5");
    assert_int_equal(m->nflows, 6);
    assert_string_equal(m->flows[5].name, "sender5");
    assert_int_equal(m->flows[5].dir, MIX_DIR_RX);
    assert_true(m->quiet_then_loaded);
    app_fini(&a);

    open_app(&a);
    expect(&a, "< incast >");
    field_row(&a, "Incast senders", buf);
    assert_non_null(strstr(buf, " 5 "));
    app_fini(&a);
}

/* A model preset: its layout's fields, the sizes following TP, a refusal in the status
 * line, a typed number, Del, and a loopback TCP run of the model's mix (mix_model_make). */
static void test_model(void **state)
{
    (void)state;
    enum { M_TP = 1, M_BATCH = 4, M_PROMPT = 6, M_TRANSPORT = 10 };
    char buf[LINE_MAX + 1];
    struct app a;
    open_app(&a);
    go(&a, K_PRESET);
    choose(&a, "Preset", "< model Llama-3.1-8B >");
    expect(&a, "32 layers, 32/8 heads/KV");
    expect(&a, "KV per token 128 KiB, per rank 128 KiB (8 KV heads per rank)");
    expect(&a, "All-reduce: none at TP 1");
    expect_not(&a, "Endpoint");
    go(&a, M_TP);
    app_key(&a, KEY_RIGHT);
    expect(&a, "per rank 64 KiB (4 KV heads per rank)");
    expect(&a, "All-reduce 256 KiB per decode (64 a step)");
    /* TP 3: refused, in the status line (one line) and below the form. */
    app_key(&a, KEY_RIGHT);
    assert_non_null(strstr(a.msg, "refused: --tp 3 does not divide Llama-3.1-8B's 32"));
    assert_null(strchr(a.msg, '\n'));
    app_key(&a, 'S');
    assert_null(a.runner);
    /* Back to a layout it takes: the refusal goes. */
    app_key(&a, KEY_LEFT);
    assert_null(strstr(a.msg, "refused"));
    /* A typed number, a bad one said, Del back to the default. */
    type_field(&a, M_BATCH, "abc");
    assert_non_null(strstr(a.msg, "Batch 'abc': give a whole number from 1 to 65536"));
    type_field(&a, M_BATCH, "4");
    expect(&a, "All-reduce 32 KiB per decode");
    go(&a, M_BATCH);
    app_key(&a, KEY_DC);
    expect(&a, "All-reduce 256 KiB per decode");
    type_field(&a, M_BATCH, "4");
    type_field(&a, M_PROMPT, "256");
    go(&a, M_TRANSPORT);
    choose(&a, "Transport", "< tcp >");
    /* At 80 columns the command line takes two rows. */
    expect(&a, "$ fabtop run --model Llama-3.1-8B --tp 2 --batch 4 --prompt 256 --transport");
    assert_int_equal(find(&a, "$ fabtop run --model"), ROWS - 3);
    row(ROWS - 2, buf);
    assert_string_equal(buf, " tcp");
    expect(&a, "ring 2 x 16 KiB");
    /* Start: the model's mix over loopback TCP, in the live view. */
    app_key(&a, 'S');
    if (!a.runner) {
        dump();
        fail_msg("no run started: %s", a.msg);
    }
    assert_int_equal(a.view, VIEW_LIVE);
    assert_string_equal(a.run_mix.name, "model-Llama-3.1-8B");
    bool tp = false, kv = false;
    for (int i = 0; i < a.run_mix.nflows; i++) {
        tp |= !strcmp(a.run_mix.flows[i].class_name, "tp");
        kv |= !strcmp(a.run_mix.flows[i].class_name, "kv");
        assert_string_equal(a.run_mix.flows[i].transport, "tcp");
    }
    assert_true(tp && kv);
    wait_run(&a);
    /* Back in the form the model is still chosen. */
    app_key(&a, KEY_F(2));
    expect(&a, "< model Llama-3.1-8B >");
    app_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_start_and_remember),
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
