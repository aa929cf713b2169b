/* test_mix_build: the mix builder against the setup form it came out of. The mixes in
 * tests/run/mix_build/ were written by the explorer's setup form as it was before the
 * builder (issue 15), driven by keys on the synthetic machine of tests/tui_setup (GPUs,
 * mlx5_0 port 1 with netdev ib0 and no address, a netdev lo with 127.0.0.1) and saved with
 * mix_to_json at Start; each case here gives the builder the same choices and must produce
 * the same document byte for byte. Then: each refusal names its knob, in the documented
 * order; the command line says every knob away from the preset as a flag; the knob table
 * is complete; the endpoint and neighbours values are parsed. */
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

#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "engine/run/mix_build.h"
#include "tests/run/mixtest.h"

/* The cases below list the choices positionally and leave the rest NULL (the preset's). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static char tmpdir[64];

/* One case: the form's choices. NULL: the preset's value. */
struct choice {
    const char *golden, *preset, *endpoint, *peer, *size, *conc, *duration, *senders, *neighbours;
};

static const struct choice cases[] = {
    {"api-default", "api"},
    {"api-ip-size-conc-duration", "api", "ip:127.0.0.1", NULL, "1KiB", "2", "0.3"},
    {"api-rdma-tcp", "api", "rdma:mlx5_0:1"},
    {"api-netdev-size-duration", "api", "netdev:lo", NULL, "64KiB", NULL, "2"},
    {"api-size-duration-flags", "api", NULL, NULL, "4MiB", NULL, "1.5"},
    {"api-remote-peer", "api", NULL, "10.1.2.3:4791", "512"},
    {"incast-default", "incast"},
    {"incast-5-senders", "incast", NULL, NULL, "1KiB", NULL, "0.2", "5"},
    {"incast-2-senders", "incast", NULL, NULL, NULL, NULL, NULL, "2"},
    {"incast-no-neighbours", "incast", NULL, NULL, NULL, NULL, NULL, NULL, "off"},
    {"quiet-vs-loaded-default", "quiet-vs-loaded"},
    {"quiet-vs-loaded-no-neighbours", "quiet-vs-loaded", NULL, NULL, NULL, "1", NULL, NULL, "off"},
    {"neighbour-conc-8", "neighbour", NULL, NULL, NULL, "8"},
    {"tp-decode-size-256", "tp-decode", NULL, NULL, "256"},
    {"bidir-default", "bidir"},
    {"sim-baseline-default", "sim/baseline"},
    {"sim-baseline-size", "sim/baseline", NULL, NULL, "64KiB"},
    {"sim-ib-incast-default", "sim/ib-incast"},
};

static int setup(void **state)
{
    (void)state;
    return mixtest_tmp_home(tmpdir, sizeof(tmpdir), "mixbuild"); /* the shipped presets only */
}

static int teardown(void **state)
{
    (void)state;
    return mixtest_tmp_remove(tmpdir);
}

/* The builder as the form sets it up, with c's choices. */
static void load(struct mix_build *b, const struct choice *c)
{
    struct ft_err err = {0};
    mix_build_init(b);
    b->edited_by = "the explorer";
    b->node_has_rdma = b->node_has_gpu = true;
    if (mix_build_load(b, c->preset, &err) < 0)
        fail_msg("%s: %s", c->preset, err.msg);
    const char *v[MIX_KNOB_COUNT] = {[MIX_KNOB_ENDPOINT] = c->endpoint,
                                     [MIX_KNOB_PEER] = c->peer,
                                     [MIX_KNOB_SIZE] = c->size,
                                     [MIX_KNOB_CONC] = c->conc,
                                     [MIX_KNOB_DURATION] = c->duration,
                                     [MIX_KNOB_SENDERS] = c->senders,
                                     [MIX_KNOB_NEIGHBOURS] = c->neighbours};
    for (int k = 0; k < MIX_KNOB_COUNT; k++)
        if (v[k] && mix_build_set(b, (enum mix_knob)k, v[k], &err) < 0)
            fail_msg("%s: %s", c->golden, err.msg);
    /* The form knows the RDMA port's netdev from the topology. */
    if (b->ep.kind == MIX_EP_RDMA)
        snprintf(b->ep.netdev, sizeof(b->ep.netdev), "ib0");
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: cannot open", path);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void same_as_the_form(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct choice *c = &cases[i];
        struct mix_build b;
        load(&b, c);
        struct mix m;
        char why[512];
        if (mix_build_make(&b, &m, why, sizeof(why)) < 0)
            fail_msg("%s: %s", c->golden, why);
        char path[256], want[512];
        snprintf(path, sizeof(path), "%s/%s.json", tmpdir, c->golden);
        snprintf(want, sizeof(want), "%s/mix_build/%s.json", MIX_BUILD_GOLDEN_DIR, c->golden);
        cJSON *doc = mix_to_json(&m);
        struct ft_err err = {0};
        assert_int_equal(jsonutil_save(path, doc, true, &err), 0);
        cJSON_Delete(doc);
        char *got = slurp(path), *exp = slurp(want);
        /* UPDATE_EXPECTED=1 rewrites the golden file (as the screen tests do): for a preset
         * whose mix changed on purpose, the diff then shows what changed. */
        if (strcmp(got, exp) && getenv("UPDATE_EXPECTED")) {
            FILE *w = fopen(want, "w");
            assert_non_null(w);
            fputs(got, w);
            fclose(w);
        } else if (strcmp(got, exp)) {
            fail_msg("%s: the builder's mix differs from the form's (%s vs %s)", c->golden, path,
                     want);
        }
        free(got);
        free(exp);
        mix_free(&m);
        mix_build_free(&b);
    }
}

/* The first wrong knob in the documented order names itself. */
static void refusals(void **state)
{
    (void)state;
    static const struct {
        struct choice c;
        const char *transport, *key_file, *msg;
    } bad[] = {
        {{"", "api", NULL, NULL, "12QB", "0"}, NULL, NULL, "Message size '12QB'"},
        {{"", "api", NULL, NULL, "2GiB"}, NULL, NULL, "Message size '2GiB'"},
        {{"", "api", NULL, NULL, NULL, "0", "-1"}, NULL, NULL, "Concurrency '0'"},
        {{"", "tp-decode", NULL, NULL, NULL, "4"}, NULL, NULL, "ping-pong"},
        {{"", "api", NULL, NULL, NULL, NULL, "0"}, NULL, NULL, "Duration '0'"},
        {{"", "incast", NULL, NULL, NULL, NULL, NULL, "99"}, NULL, NULL, "Incast senders '99'"},
        {{"", "api", NULL, "host:0"}, NULL, NULL, "Peer 'host:0'"},
        {{"", "api", NULL, "10.1.2.3"}, NULL, "/nonexistent/key", "Key file /nonexistent/key"},
        {{"", "api", "gpu:0"}, NULL, NULL, "Transport tcp: TCP cannot use a GPU endpoint"},
        {{"", "api"}, "verbs", NULL, "Transport verbs: "},
        {{"", "api"}, "sim", NULL, "Transport: pick one"},
        {{"", "api"}, "smoke-signals", NULL, "Transport: pick one"},
        {{"", "api", "rdma:mlx5_9:1"}, NULL, NULL, "Transport tcp: mlx5_9:1 has no netdev"},
        {{"", "tp-decode", NULL, NULL, "8"}, NULL, NULL, "16 B to 1 GiB"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct mix_build b;
        load(&b, &bad[i].c);
        if (b.ep.kind == MIX_EP_RDMA)
            b.ep.netdev[0] = '\0'; /* a port without a netdev */
        if (bad[i].transport)
            mix_build_set(&b, MIX_KNOB_TRANSPORT, bad[i].transport, NULL);
        if (bad[i].key_file)
            mix_build_set(&b, MIX_KNOB_KEY_FILE, bad[i].key_file, NULL);
        struct mix m;
        char why[512] = "";
        assert_int_equal(mix_build_make(&b, &m, why, sizeof(why)), -EINVAL);
        if (!strstr(why, bad[i].msg))
            fail_msg("case %zu: '%s' does not say '%s'", i, why, bad[i].msg);
        mix_build_free(&b);
    }
    /* No preset: its error. */
    struct mix_build b;
    mix_build_init(&b);
    struct ft_err err = {0};
    assert_int_equal(mix_build_load(&b, "no-such-mix", &err), -ENOENT);
    struct mix m;
    char why[512];
    assert_int_equal(mix_build_make(&b, &m, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "no-such-mix"));
    mix_build_free(&b);
}

static void command_lines(void **state)
{
    (void)state;
    static const struct {
        struct choice c;
        const char *want;
    } cl[] = {
        {{"", "api"}, "fabtop run --mix api"},
        {{"", "api", NULL, NULL, "65536", NULL, "2.50s"},
         "fabtop run --mix api --size 64KiB --duration 2.5"},
        {{"", "api", "ip:127.0.0.1", "10.1.2.3:4791", "1KiB", "2", "0.3"},
         "fabtop run --mix api --peer 10.1.2.3:4791 --size 1KiB --duration 0.3 --endpoint "
         "ip:127.0.0.1 --concurrency 2"},
        {{"", "api", NULL, NULL, NULL, "32"}, "fabtop run --mix api"}, /* the preset's 32 */
        {{"", "incast", NULL, NULL, NULL, NULL, NULL, "5"}, "fabtop run --mix incast --senders 5"},
        {{"", "incast", NULL, NULL, NULL, NULL, NULL, "4"}, "fabtop run --mix incast"},
        {{"", "incast", NULL, NULL, NULL, NULL, NULL, "5", "off"},
         "fabtop run --mix incast --neighbours off"},
        {{"", "sim/baseline", "gpu:0", NULL, "64KiB", NULL, "3"},
         "fabtop run --mix sim/baseline --size 64KiB"}, /* no endpoint, no duration in sim */
        {{"", "api", NULL, "h o"}, "fabtop run --mix api --peer 'h o'"},
    };
    for (size_t i = 0; i < sizeof(cl) / sizeof(cl[0]); i++) {
        struct mix_build b;
        load(&b, &cl[i].c);
        struct strbuf sb;
        strbuf_init(&sb);
        mix_build_command_line(&b, &sb);
        assert_string_equal(sb.s, cl[i].want);
        /* The edited note goes with the flags the preset's own do not cover. */
        bool beyond = strstr(sb.s, "--endpoint") || strstr(sb.s, "--concurrency") ||
                      strstr(sb.s, "--senders") || strstr(sb.s, "--neighbours") ||
                      strstr(sb.s, "--transport");
        assert_int_equal(mix_build_edited(&b), beyond);
        strbuf_free(&sb);
        mix_build_free(&b);
    }
    /* Another transport for a preset whose flows use tcp. */
    struct mix_build b;
    load(&b, &(struct choice){"", "api"});
    mix_build_set(&b, MIX_KNOB_TRANSPORT, "verbs", NULL);
    struct strbuf sb;
    strbuf_init(&sb);
    mix_build_command_line(&b, &sb);
    assert_string_equal(sb.s, "fabtop run --mix api --transport verbs");
    strbuf_free(&sb);
    mix_build_free(&b);
}

static void knobs_and_values(void **state)
{
    (void)state;
    for (int k = 0; k < MIX_KNOB_COUNT; k++) {
        assert_non_null(mix_build_knobs[k].flag);
        assert_non_null(mix_build_knobs[k].arg);
        assert_true(strlen(mix_build_knobs[k].help) > 10);
        for (int j = 0; j < k; j++)
            assert_string_not_equal(mix_build_knobs[j].flag, mix_build_knobs[k].flag);
    }
    struct mix_build_endpoint e;
    struct ft_err err = {0};
    assert_int_equal(mix_build_parse_endpoint("rdma:mlx5_0:1", &e, &err), 0);
    assert_int_equal(e.kind, MIX_EP_RDMA);
    assert_string_equal(e.rdma, "mlx5_0:1");
    assert_int_equal(mix_build_parse_endpoint("gpu:3", &e, &err), 0);
    assert_int_equal(e.gpu, 3);
    assert_int_equal(mix_build_parse_endpoint("netdev:eth0", &e, &err), 0);
    assert_string_equal(e.netdev, "eth0");
    assert_int_equal(mix_build_parse_endpoint("ip:::1", &e, &err), 0);
    assert_string_equal(e.ip, "::1");
    static const char *const badeps[] = {"eth0", "gpu:x", "gpu:-1", "rdma:mlx5_0", "netdev:", ""};
    for (size_t i = 0; i < sizeof(badeps) / sizeof(badeps[0]); i++) {
        err = (struct ft_err){0};
        assert_int_equal(mix_build_parse_endpoint(badeps[i], &e, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "endpoint '"));
    }
    struct mix_build b;
    mix_build_init(&b);
    assert_int_equal(mix_build_set(&b, MIX_KNOB_NEIGHBOURS, "off", &err), 0);
    assert_false(b.neighbours);
    err = (struct ft_err){0};
    assert_int_equal(mix_build_set(&b, MIX_KNOB_NEIGHBOURS, "maybe", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "neighbours 'maybe'"));
    assert_int_equal(mix_build_set(&b, MIX_KNOB_PEER, "loopback", &err), 0);
    assert_string_equal(b.peer, "");
    mix_build_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_as_the_form),
        cmocka_unit_test(refusals),
        cmocka_unit_test(command_lines),
        cmocka_unit_test(knobs_and_values),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
