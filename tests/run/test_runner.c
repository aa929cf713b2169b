/* test_runner: the runner end to end over real loopback TCP with the in-process agent:
 * phases, timed setup apart from measurement, snapshots published while it runs, results
 * that keep every sample (histogram count = operations) and round-trip through a file;
 * a stop request keeps what was measured. */
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

static const char mix_text[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"t\", \"phases\": [\"quiet\", "
    "\"loaded\"], \"flows\": ["
    "{\"name\": \"pp\", \"op\": \"pingpong\", \"size\": {\"sweep\": {\"from\": 64, \"to\": 256, "
    "\"factor\": 4}}, \"warmup_s\": 0.1, \"duration_s\": 0.5},"
    "{\"name\": \"bulk\", \"role\": \"background\", \"op\": \"stream\", \"direction\": \"tx\", "
    "\"size\": \"64KiB\", \"warmup_s\": 0.1, \"rate_gbps\": 0.2}]}";

static void test_full_run(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(mix_text);
    struct runner_opts o = {.mix = &m};
    struct runner *r;
    struct ft_err err = {0};
    if (runner_start(&o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    /* Snapshots arrive while it runs, with increasing generations. */
    uint64_t last_gen = 0;
    int seen = 0;
    bool saw_measure = false;
    while (!runner_done(r)) {
        struct pollfd p = {runner_wake_fd(r), POLLIN, 0};
        poll(&p, 1, 200);
        char buf[64];
        while (read(p.fd, buf, sizeof(buf)) > 0)
            ;
        struct runner_snapshot *s = runner_snapshot(r);
        assert_true(s->gen >= last_gen);
        if (s->gen > last_gen)
            seen++;
        last_gen = s->gen;
        saw_measure |= s->run_phase == RUN_PH_MEASURE;
        runner_snapshot_release(s);
    }
    assert_true(seen > 10); /* ~10 Hz over about three seconds */
    assert_true(saw_measure);
    const cJSON *res = runner_wait(r);
    assert_int_equal(runner_status(r), 0);
    assert_string_equal(jsonutil_str(res, "format"), "fabtop-results");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(res, "phases")), 2);
    /* Quiet: the foreground alone; loaded: the neighbour too. */
    assert_null(mixtest_flow(res, 0, "bulk"));
    assert_non_null(mixtest_flow(res, 1, "bulk"));
    const cJSON *pp = mixtest_flow(res, 1, "pp");
    assert_string_equal(jsonutil_str(pp, "status"), "ok");
    assert_string_equal(jsonutil_str(pp, "latency_kind"), "half_round_trip");
    double setup;
    assert_true(jsonutil_num(pp, "setup_s", &setup) && setup > 0 && setup < 2);
    const cJSON *pts = cJSON_GetObjectItem(pp, "points");
    assert_int_equal(cJSON_GetArraySize(pts), 2); /* 64 and 256 bytes */
    const cJSON *pt;
    double sizes[2];
    int k = 0;
    cJSON_ArrayForEach(pt, pts)
    {
        assert_true(jsonutil_num(pt, "size_bytes", &sizes[k++]));
        double ops, secs, count;
        assert_true(jsonutil_num(pt, "ops", &ops) && ops > 100);
        assert_true(jsonutil_num(pt, "measure_s", &secs) && secs > 0.45 && secs < 0.8);
        const cJSON *lat = cJSON_GetObjectItem(pt, "latency");
        assert_true(jsonutil_num(lat, "count", &count));
        /* Every measured operation is a sample: nothing dropped (within the one operation
         * in flight at each edge of the window). */
        assert_true(count >= ops - 2 && count <= ops + 2);
        struct hist *h = malloc(sizeof(*h));
        assert_int_equal(hist_from_json(cJSON_GetObjectItem(pt, "histogram"), h), 0);
        assert_int_equal(atomic_load(&h->count), (uint64_t)count);
        double p50, min, max;
        jsonutil_num(lat, "p50", &p50);
        jsonutil_num(lat, "min", &min);
        jsonutil_num(lat, "max", &max);
        assert_true(min <= p50 && p50 <= max && p50 > 0);
        free(h);
    }
    assert_true(sizes[0] == 64 && sizes[1] == 256);
    /* The neighbour respected its 0.2 Gb/s pacing (within 20%). */
    const cJSON *bpt =
        cJSON_GetArrayItem(cJSON_GetObjectItem(mixtest_flow(res, 1, "bulk"), "points"), 0);
    double g;
    assert_true(jsonutil_num(bpt, "goodput_gbps", &g));
    if (!(g > 0.16 && g < 0.24))
        fail_msg("paced neighbour ran at %.3f Gb/s, want 0.2", g);

    /* Results round-trip through a file exactly. */
    char path[] = "/tmp/fabtop-res-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    assert_int_equal(results_save(path, res, &err), 0);
    cJSON *back;
    assert_int_equal(results_load(path, &back, &err), 0);
    char *a = cJSON_PrintUnformatted(res), *b = cJSON_PrintUnformatted(back);
    assert_string_equal(a, b);
    cJSON_free(a);
    cJSON_free(b);
    cJSON_Delete(back);
    unlink(path);
    runner_free(r);
    mix_free(&m);
}

static void test_stop_keeps_data(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(mix_text);
    m.quiet_then_loaded = false;
    m.flows[0].duration_s = 30;
    struct runner_opts o = {.mix = &m};
    struct runner *r;
    struct ft_err err = {0};
    assert_int_equal(runner_start(&o, &r, &err), 0);
    for (;;) {
        struct runner_snapshot *s = runner_snapshot(r);
        bool measuring = s->run_phase == RUN_PH_MEASURE && (s->flows[0].valid & SNAP_V_LAT);
        runner_snapshot_release(s);
        if (measuring)
            break;
        usleep(20000);
    }
    usleep(300000);
    runner_stop(r);
    const cJSON *res = runner_wait(r);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res, "interrupted")));
    const cJSON *pp = mixtest_flow(res, 0, "pp");
    assert_string_equal(jsonutil_str(pp, "status"), "stopped");
    const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(pp, "points"), 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(pt, "measured")));
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(pt, "complete")));
    double count;
    assert_true(jsonutil_num(cJSON_GetObjectItem(pt, "latency"), "count", &count) && count > 10);
    runner_free(r);
    mix_free(&m);
}

static void test_unreachable_peer(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(mix_text);
    m.quiet_then_loaded = false;
    m.nflows = 1;
    /* A port nobody listens on: the flow fails with the reason, the run still ends. */
    struct runner_opts o = {.mix = &m, .peer_override = "127.0.0.1:1"};
    setenv("FABTOP_KEY", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 1);
    struct runner *r;
    struct ft_err err = {0};
    assert_int_equal(runner_start(&o, &r, &err), 0);
    const cJSON *res = runner_wait(r);
    assert_int_equal(runner_status(r), 2);
    const cJSON *pp = mixtest_flow(res, 0, "pp");
    assert_string_equal(jsonutil_str(pp, "status"), "failed");
    assert_non_null(strstr(jsonutil_str(pp, "error"), "127.0.0.1"));
    runner_free(r);
    mix_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_run),
        cmocka_unit_test(test_stop_keeps_data),
        cmocka_unit_test(test_unreachable_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
