/* test_ctr_runner: counters attributed to a running test: a loopback TCP mix runs quiet
 * then loaded; its flows' netdev is lo, so the snapshots carry lo's counters while it
 * runs, and each phase in the results holds counter deltas since that phase started
 * (labelled port-wide), with lo's bytes and the Tcp segments grown by at least what the
 * flows moved. */
#include <poll.h>
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
#include "engine/results/results.h"
#include "engine/run/runner.h"
#include "tests/run/mixtest.h"

static const char mix_text[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"t\", \"phases\": [\"quiet\", "
    "\"loaded\"], \"flows\": ["
    "{\"name\": \"pp\", \"op\": \"pingpong\", \"size\": 256, \"warmup_s\": 0.1, "
    "\"duration_s\": 0.6},"
    "{\"name\": \"bulk\", \"role\": \"background\", \"op\": \"stream\", \"direction\": \"tx\", "
    "\"size\": \"64KiB\", \"warmup_s\": 0.1, \"rate_gbps\": 0.2}]}";

static const cJSON *counter(const cJSON *phase, const char *object, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(cJSON_GetObjectItem(phase, "counters"), "counters"))
    {
        if (!strcmp(jsonutil_str(e, "object"), object) && !strcmp(jsonutil_str(e, "name"), name))
            return e;
    }
    fail_msg("phase %s: no counter %s %s", jsonutil_str(phase, "name"), object, name);
    return NULL;
}

static double delta(const cJSON *phase, const char *object, const char *name)
{
    double d;
    if (!jsonutil_num(counter(phase, object, name), "delta", &d))
        fail_msg("%s %s: delta is not a number", object, name);
    return d;
}

static void test_phases_carry_counter_deltas(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(mix_text);
    struct ft_err err = {0};
    struct runner_opts o = {.mix = &m};
    struct runner *r;
    if (runner_start(&o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    bool saw_lo = false;
    while (!runner_done(r)) {
        struct pollfd p = {runner_wake_fd(r), POLLIN, 0};
        poll(&p, 1, 200);
        char buf[64];
        while (read(p.fd, buf, sizeof(buf)) > 0)
            ;
        struct runner_snapshot *s = runner_snapshot(r);
        for (int i = 0; i < s->ncounters; i++)
            if (!strcmp(s->counters[i].object, "lo") && !strcmp(s->counters[i].name, "rx_bytes") &&
                (s->counters[i].valid & COUNTERS_V_VALUE))
                saw_lo = true;
        runner_snapshot_release(s);
    }
    const cJSON *res = runner_wait(r);
    assert_int_equal(runner_status(r), 0);
    assert_true(saw_lo);
    const cJSON *phases = cJSON_GetObjectItem(res, "phases");
    assert_int_equal(cJSON_GetArraySize(phases), 2);
    for (int p = 0; p < 2; p++) {
        const cJSON *ph = cJSON_GetArrayItem(phases, p);
        const cJSON *c = cJSON_GetObjectItem(ph, "counters");
        assert_true(cJSON_IsObject(c));
        assert_non_null(strstr(jsonutil_str(c, "scope"), "port-wide"));
        char *objs = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "objects"));
        assert_non_null(strstr(objs, "lo (netdev)"));
        free(objs);
        /* What the flows moved in their measure windows went over lo in this phase. */
        double payload = 0;
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(ph, "flows"))
        {
            double b;
            if (jsonutil_num(cJSON_GetArrayItem(cJSON_GetObjectItem(f, "points"), 0),
                             "payload_bytes", &b))
                payload += b;
        }
        double lo_rx = delta(ph, "lo", "rx_bytes");
        printf("%s: flows' payload %.0f bytes, lo rx_bytes delta %.0f, Tcp OutSegs %.0f\n",
               jsonutil_str(ph, "name"), payload, lo_rx, delta(ph, "Tcp", "OutSegs"));
        assert_true(payload > 0);
        assert_true(lo_rx >= payload);
        assert_true(delta(ph, "Tcp", "OutSegs") > 0);
        /* Deltas only in the results: no instantaneous value or rate. */
        assert_null(cJSON_GetObjectItem(counter(ph, "lo", "rx_bytes"), "rate"));
        assert_true(cJSON_IsBool(cJSON_GetObjectItem(counter(ph, "lo", "rx_bytes"), "reset")));
    }
    /* The counters are port-wide: other traffic on lo (tests running in parallel) lands in
     * either phase, so only lower bounds are asserted, not that the loaded phase carried more
     * than the quiet one. */
    runner_free(r);
    mix_free(&m);
}

int main(void)
{
    struct stat st;
    if (stat("/sys/class/net/lo/statistics", &st) < 0) {
        printf("SKIP: no /sys/class/net/lo\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phases_carry_counter_deltas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
