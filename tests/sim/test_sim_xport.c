/* test_sim_xport: the sim transport through the real runner: a simulated ping-pong's
 * histogram holds every operation with exactly the model's latency, a victim measured quiet
 * and then loaded runs in two simulations (one per phase), the results carry simulated-time
 * outcomes and counters, the fabric view and playback controls answer while it runs, and bad
 * sim flows are refused before anything starts. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/flow/hist.h"
#include "engine/results/results.h"
#include "engine/run/runner.h"
#include "tests/run/mixtest.h"

static const char pingpong_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"t\", \"flows\": ["
    "{\"name\": \"pp\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 4096, "
    "\"iterations\": 500, \"warmup_s\": 0, \"params\": {\"src\": \"h1\", \"dst\": \"h2\", "
    "\"topology\": {\"format\": \"fabtop-sim-topology\", \"name\": \"t4\", \"kind\": \"star\", "
    "\"hosts\": 4, "
    "\"link_gbps\": 400, \"link_delay_ns\": 500}, \"fabric\": {\"switch_latency_ns\": 450}}},"
    "{\"name\": \"bulk\", \"role\": \"background\", \"transport\": \"sim\", \"op\": \"stream\", "
    "\"size\": \"64KiB\", \"warmup_s\": 0, \"params\": {\"src\": \"h3\", \"dst\": \"h0\"}}]}";

static void test_pingpong(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(pingpong_mix);
    struct runner_opts o = {.mix = &m};
    struct runner *r;
    struct ft_err err = {0};
    if (runner_start(&o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    const cJSON *res = runner_wait(r);
    assert_int_equal(runner_status(r), 0);
    const cJSON *pp = mixtest_flow(res, 0, "pp");
    assert_string_equal(jsonutil_str(pp, "status"), "ok");
    assert_string_equal(jsonutil_str(pp, "latency_kind"), "half_round_trip");
    const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(pp, "points"), 0);
    double ops, count, min, max, payload;
    assert_true(jsonutil_num(pt, "ops", &ops));
    assert_int_equal((int)ops, 500);
    const cJSON *lat = cJSON_GetObjectItem(pt, "latency");
    assert_true(jsonutil_num(lat, "count", &count));
    assert_int_equal((int)count, 500); /* every operation is a sample */
    /* Half round trip = 2 (t_ser + t_prop) + t_switch (+ half or all of an ACK): 2 x (83.88 +
     * 500) + 450 ns = 1.618 us (sim-reference §2), in simulated time. */
    assert_true(jsonutil_num(lat, "min", &min) && jsonutil_num(lat, "max", &max));
    if (!(min > 1.617 && min < 1.620 && max < 1.621))
        fail_msg("ping-pong latency %.4f-%.4f us", min, max);
    assert_true(jsonutil_num(pt, "payload_bytes", &payload));
    assert_int_equal((long)payload, 2L * 500 * 4096);
    /* Results in simulated time, with the fabric's counters under the first flow. */
    const cJSON *sim = cJSON_GetObjectItem(cJSON_GetObjectItem(pp, "conditions"), "sim");
    assert_non_null(sim);
    const cJSON *sr = cJSON_GetObjectItem(sim, "results");
    double sops;
    assert_true(jsonutil_num(sr, "ops", &sops) && sops == 500);
    const cJSON *fab = cJSON_GetObjectItem(sim, "fabric");
    const cJSON *h1 = cJSON_GetObjectItem(cJSON_GetObjectItem(fab, "counters"), "h1");
    double words;
    assert_true(jsonutil_num(h1, "port_xmit_data", &words) && words > 500 * 4096 / 4);
    /* The background stream ran until the foreground was done, and stopped cleanly. */
    const cJSON *bulk = mixtest_flow(res, 0, "bulk");
    assert_string_equal(jsonutil_str(bulk, "status"), "ok");
    const cJSON *bpt = cJSON_GetArrayItem(cJSON_GetObjectItem(bulk, "points"), 0);
    double bytes;
    assert_true(jsonutil_num(bpt, "payload_bytes", &bytes) && bytes > 1e6);
    assert_string_equal(jsonutil_str(bulk, "peer"), "simulated h3 -> h0 (t4)");
    runner_free(r);
    mix_free(&m);
}

static const char victim_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"v\", \"phases\": [\"quiet\", "
    "\"loaded\"], \"flows\": ["
    "{\"name\": \"victim\", \"transport\": \"sim\", \"op\": \"rr\", \"size\": \"64KiB\", "
    "\"response_size\": 64, \"iterations\": 300, \"warmup_s\": 0, \"params\": {\"src\": "
    "\"h1\", \"dst\": \"h2\", \"topology\": \"star8-100g\", \"fabric\": {\"pfc\": {\"mode\": "
    "\"static\", \"xoff_bytes\": 65536, \"xon_bytes\": 32768}}}},"
    "{\"name\": \"a\", \"role\": \"background\", \"transport\": \"sim\", \"op\": \"stream\", "
    "\"size\": \"1MiB\", \"warmup_s\": 0, \"params\": {\"src\": \"h3\", \"dst\": \"h2\"}},"
    "{\"name\": \"b\", \"role\": \"background\", \"transport\": \"sim\", \"op\": \"stream\", "
    "\"size\": \"1MiB\", \"warmup_s\": 0, \"params\": {\"src\": \"h4\", \"dst\": \"h2\"}}]}";

static void test_quiet_then_loaded(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(victim_mix);
    struct runner_opts o = {.mix = &m};
    struct runner *r;
    struct ft_err err = {0};
    if (runner_start(&o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    /* While it runs the fabric view answers (once the simulation exists). */
    bool viewed = false;
    while (!runner_done(r)) {
        struct fabric_snap v;
        struct runner_snapshot *sn;
        if (mixtest_fabric(r, &v, &sn) == 0) {
            viewed |= v.nports == 16 && v.nnodes == 9 && !strcmp(v.topology, "star8-100g");
            /* Playback answers while a simulation runs; between the phases the quiet one's
             * final state stays readable (retired), and one may end between two calls. */
            int rc = runner_playback(r, FABRIC_PLAY_SKIP_IDLE, true);
            if (rc != 0 && !(rc == -ENOENT))
                fail_msg("skip_idle: %d", rc);
            if (v.retired)
                assert_true(v.finished);
            runner_snapshot_release(sn);
        }
        usleep(2000);
    }
    const cJSON *res = runner_wait(r);
    assert_int_equal(runner_status(r), 0);
    (void)viewed; /* a fast run may finish between two looks */
    assert_null(mixtest_flow(res, 0, "a"));
    double q99, l99;
    const cJSON *sum = cJSON_GetObjectItem(res, "summary");
    assert_true(jsonutil_num(cJSON_GetObjectItem(sum, "quiet"), "p99", &q99));
    assert_true(jsonutil_num(cJSON_GetObjectItem(sum, "loaded"), "p99", &l99));
    /* The victim's requests queue behind two streams into the same host in the loaded phase
     * (its responses come back through the same switch). */
    print_message("victim p99: quiet %.2f us, loaded %.2f us\n", q99, l99);
    assert_true(l99 > 2 * q99);
    /* Each phase had its own simulation: the loaded one knows the background apps. */
    const cJSON *v0 = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(mixtest_flow(res, 0, "victim"), "conditions"),
                            "sim"),
        "fabric");
    const cJSON *v1 = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(mixtest_flow(res, 1, "victim"), "conditions"),
                            "sim"),
        "fabric");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(v0, "apps")), 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(v1, "apps")), 3);
    assert_int_equal(runner_playback(r, FABRIC_PLAY_PAUSE, true),
                     -2); /* over: no simulation any more */
    /* ... but its final state stays readable until the runner is freed: the loaded phase's,
     * with the background apps, matching the results. */
    struct fabric_snap fin;
    struct runner_snapshot *fsn;
    assert_int_equal(mixtest_fabric(r, &fin, &fsn), 0);
    assert_true(fin.retired && fin.finished);
    assert_int_equal(fin.phase, 1);
    assert_int_equal(fin.nflows, 3);
    assert_int_equal(fin.nports, 16);
    double sim_us;
    assert_true(jsonutil_num(v1, "sim_time_us", &sim_us));
    assert_int_equal((long long)fin.sim_now_ps, llround(sim_us * 1e6));
    assert_string_equal(fin.flows[0].name, "victim");
    assert_true(fin.flows[0].st.done && fin.flows[0].st.ops == 300);
    runner_snapshot_release(fsn);
    runner_free(r);
    mix_free(&m);
}

static void refused(const char *flow_json, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"bad\", \"flows\": [%s]}",
             flow_json);
    struct mix m = mixtest_parse(text);
    struct runner_opts o = {.mix = &m};
    struct runner *r;
    struct ft_err err = {0};
    assert_true(runner_start(&o, &r, &err) < 0);
    if (!strstr(err.msg, needle))
        fail_msg("error '%s' does not say '%s'", err.msg, needle);
    mix_free(&m);
}

static void test_validation(void **state)
{
    (void)state;
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"dst\": \"h0\", \"topology\": \"star8-100g\"}}",
            "params.src");
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"duration_s\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
            "\"star8-100g\"}}",
            "iterations");
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h9\", \"topology\": "
            "\"star8-100g\"}}",
            "h0-h7");
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
            "\"no-such-topology\"}}",
            "no-such-topology");
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
            "\"star8-100g\", \"fabric\": {\"pfc\": {\"xof\": 1}}}}",
            "xof");
    /* A setting group that is an array, not an object: its items have no keys (the check
     * of the keys passed strcmp a NULL name and crashed). */
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
            "\"star8-100g\", \"fabric\": {\"pfc\": [{\"mode\": \"static\"}]}}}",
            "flow x: fabric.pfc must be an object");
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
            "\"star8-100g\", \"fabric\": {\"link_events\": [[1]]}}}",
            "flow x: fabric.link_events[] must be an object");
    /* A table entry beyond uint32_t nanoseconds (its conversion was undefined). */
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
            "\"ib-star16-200g\", \"fabric\": {\"cc\": \"ibcc\", \"ibcc\": "
            "{\"CongestionControlTable\": {\"entries_ns\": [0, 1e20]}}}}}",
            "flow x: fabric.ibcc.CongestionControlTable.entries_ns must be numbers from 0 to 1e9");
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"pingpong\", \"size\": 64, "
            "\"iterations\": 1, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
            "\"ib-star16-200g\", \"fabric\": {\"cc\": \"dcqcn\"}}}",
            "InfiniBand uses");
    refused("{\"name\": \"x\", \"transport\": \"sim\", \"op\": \"stream\", \"size\": {\"sweep\": "
            "{\"from\": 64, \"to\": 256}}, \"iterations\": 1, \"params\": {\"src\": \"h1\", "
            "\"dst\": \"h0\", \"topology\": \"star8-100g\"}}",
            "sweep");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pingpong),
        cmocka_unit_test(test_quiet_then_loaded),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
