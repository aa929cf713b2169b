/* test_sim_run: what a sim run gives the rest of fabtop: the sim/ presets in the preset list,
 * per-operation latency for sim streams, no host counters for an all-sim mix, the simulated
 * fabric's counters in the runner's snapshots (during the run and after it), the goodput in
 * simulated time wherever results are read (thresholds, compare), and reproducible results
 * (results_make_reproducible: two runs of one seed, byte-identical documents). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
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
#include "common/strbuf.h"
#include "engine/results/compare.h"
#include "engine/counters/counters.h"
#include "engine/xport/xport.h"
#include "engine/results/results.h"
#include "engine/run/runner.h"
#include "engine/run/thresholds.h"
#include "tests/run/mixtest.h"

/* Run a mix to the end; the caller frees the runner. */
static struct runner *run(struct mix *m)
{
    struct runner_opts o = {.mix = m};
    struct runner *r;
    struct ft_err err = {0};
    if (runner_start(&o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    runner_wait(r);
    return r;
}

static const cJSON *flow_named(const cJSON *res, const char *name)
{
    const cJSON *ph =
        cJSON_GetArrayItem(cJSON_GetObjectItem(res, "phases"),
                           cJSON_GetArraySize(cJSON_GetObjectItem(res, "phases")) - 1);
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(ph, "flows"))
    {
        if (!strcmp(jsonutil_str(f, "name"), name))
            return f;
    }
    return NULL;
}

/* ---- the preset list ---- */

static void test_presets(void **state)
{
    (void)state;
    const char *src = getenv("FABTOP_SRC");
    if (!src)
        skip();
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/engine/mixes/sim", src);
    DIR *d = opendir(dir);
    assert_non_null(d);
    char **names = mix_list_presets();
    int nsim = 0, first_sim = -1, last_plain = -1;
    for (int i = 0; names[i]; i++) {
        if (!strncmp(names[i], "sim/", 4)) {
            nsim++;
            if (first_sim < 0)
                first_sim = i;
        } else {
            last_plain = i;
        }
        /* Topology files sit one folder deeper; they are not mixes. */
        if (strstr(names[i], "topolog"))
            fail_msg("a topology listed as a preset: %s", names[i]);
    }
    assert_true(last_plain >= 0 && first_sim > last_plain);
    /* Every shipped sim mix is listed as sim/NAME, loads, and has its lesson. */
    int shipped = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json"))
            continue;
        char want[300];
        snprintf(want, sizeof(want), "sim/%.*s", (int)(n - 5), de->d_name);
        bool found = false;
        for (int i = 0; names[i]; i++)
            found |= !strcmp(names[i], want);
        if (!found)
            fail_msg("%s is not in the preset list", want);
        struct mix m;
        struct ft_err err = {0};
        if (mix_load(want, &m, &err) < 0)
            fail_msg("%s: %s", want, err.msg);
        assert_string_equal(m.name, want);
        assert_true(m.lesson[0] != '\0');
        /* Every sim stream reports per-operation latency, like a verbs stream. */
        for (int i = 0; i < m.nflows; i++)
            if (m.flows[i].op == MIX_OP_STREAM)
                assert_int_equal(mix_latency_kind_of(&m.flows[i]), MIX_LAT_PER_OP);
        mix_free(&m);
        shipped++;
    }
    closedir(d);
    assert_true(shipped > 0);
    assert_int_equal(nsim, shipped);
    mix_free_names(names);
}

/* ---- latency kind, counters ---- */

static const char stream_mix[] =
    "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"s\", \"flows\": ["
    "{\"name\": \"bulk\", \"transport\": \"sim\", \"op\": \"stream\", \"size\": \"64KiB\", "
    "\"iterations\": 40, \"warmup_s\": 0, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", "
    "\"topology\": \"star8-100g\"}},"
    "{\"name\": \"other\", \"transport\": \"sim\", \"op\": \"stream\", \"size\": \"64KiB\", "
    "\"iterations\": 40, \"warmup_s\": 0, \"params\": {\"src\": \"h2\", \"dst\": \"h0\"}}]}";

static void test_stream_latency(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(stream_mix);
    struct runner *r = run(&m);
    assert_int_equal(runner_status(r), 0);
    const cJSON *f = flow_named(runner_wait(r), "bulk");
    assert_string_equal(jsonutil_str(f, "latency_kind"), "per_operation");
    const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "points"), 0);
    const cJSON *lat = cJSON_GetObjectItem(pt, "latency");
    double count, ops, max, smax, smin, min;
    assert_true(jsonutil_num(lat, "count", &count) && jsonutil_num(pt, "ops", &ops));
    assert_true(ops == 40 && count == ops); /* every message is a sample */
    const cJSON *sr = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(f, "conditions"), "sim"), "results");
    assert_true(jsonutil_num(sr, "latency_max_us", &smax) &&
                jsonutil_num(sr, "latency_min_us", &smin));
    assert_true(jsonutil_num(lat, "max", &max) && jsonutil_num(lat, "min", &min));
    /* The histogram holds the simulation's own post-to-completion times (to the ns). */
    assert_true(fabs(max - smax) < 0.001 + smax * 0.01 && fabs(min - smin) < 0.001 + smin * 0.01);
    assert_non_null(cJSON_GetObjectItem(pt, "histogram"));
    runner_free(r);
    mix_free(&m);
}

static void test_no_host_counters(void **state)
{
    (void)state;
    struct mix m = mixtest_parse(stream_mix);
    struct counters_set *cs = NULL;
    struct ft_err err = {0};
    assert_int_equal(counters_set_for_mix(&m, NULL, xport_local_port, NULL, &cs, &err), -ENOENT);
    assert_null(cs);
    assert_non_null(strstr(err.msg, "simulated"));
    /* One real flow beside them: the host's counters are wanted again. */
    struct mix mixed = mixtest_parse(
        "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"x\", \"flows\": ["
        "{\"name\": \"pp\", \"transport\": \"tcp\", \"op\": \"pingpong\", \"size\": 64, "
        "\"duration_s\": 1, \"peer\": \"loopback\"},"
        "{\"name\": \"s\", \"role\": \"background\", \"transport\": \"sim\", \"op\": \"stream\", "
        "\"size\": 64, \"params\": {\"src\": \"h1\", \"dst\": \"h0\", \"topology\": "
        "\"star8-100g\"}}]}");
    struct ft_err err2 = {0};
    int rc = counters_set_for_mix(&mixed, NULL, xport_local_port, NULL, &cs, &err2);
    if (rc == 0)
        counters_set_close(cs);
    else
        assert_null(strstr(err2.msg, "simulated"));
    mix_free(&mixed);
    mix_free(&m);
}

/* The value of counter name on object in a snapshot; NAN when absent. */
static double snap_counter(const struct runner_snapshot *s, const char *object, const char *name)
{
    for (int i = 0; i < s->ncounters; i++)
        if (!strcmp(s->counters[i].object, object) && !strcmp(s->counters[i].name, name))
            return s->counters[i].value;
    return NAN;
}

static void test_snapshot_counters(void **state)
{
    (void)state;
    /* Start paused (as the explorer can), so the run is caught in the middle. */
    struct sim_ctl_state paused = {.paused = true};
    struct mix m;
    struct ft_err err = {0};
    assert_int_equal(mix_load("sim/incast-pfc", &m, &err), 0);
    struct runner_opts o = {.mix = &m, .playback = &paused};
    struct runner *r;
    if (runner_start(&o, &r, &err) < 0)
        fail_msg("%s", err.msg);
    /* The simulation exists once its flows are set up, and has state to show once its thread
     * published it. */
    struct fabric_snap v;
    struct runner_snapshot *vsn;
    int tries = 0;
    for (; tries < 2000; tries++) {
        if (mixtest_fabric(r, &v, &vsn) == 0) {
            if (v.nports)
                break;
            runner_snapshot_release(vsn);
        }
        usleep(5000);
    }
    assert_true(tries < 2000);
    assert_false(v.retired || v.finished);
    assert_true(v.ctl.paused);
    assert_int_equal(v.nflows, 15);
    assert_int_equal(v.fabric, SIM_FABRIC_ROCE);
    assert_true(v.pfc && !v.ecn);
    runner_snapshot_release(vsn);
    /* Let 500 us of simulated time play, then look at a snapshot: the simulated counters are
     * there, with their real names, next to nothing of the host's. */
    assert_int_equal(runner_playback(r, FABRIC_PLAY_STEP, 500 * 1000000ull), 0);
    struct runner_snapshot *s = NULL;
    for (tries = 0; tries < 400; tries++) {
        s = runner_snapshot(r);
        if (snap_counter(s, "sw0/0", "port_xmit_data") > 0)
            break;
        runner_snapshot_release(s);
        s = NULL;
        usleep(10000);
    }
    assert_non_null(s);
    assert_true(snap_counter(s, "h1", "port_xmit_data") > 0);
    assert_true(snap_counter(s, "sw0/0", "queue_depth") > 0); /* the incast's queue */
    assert_false(isnan(snap_counter(s, "h1", "rx_prio3_pause")));
    for (int i = 0; i < s->ncounters; i++)
        if (s->counters[i].object[0] != 'h' && strncmp(s->counters[i].object, "sw0/", 4))
            fail_msg("a host counter in an all-sim run: %s %s", s->counters[i].object,
                     s->counters[i].name);
    runner_snapshot_release(s);
    /* Then full speed to the end: the final snapshot keeps the fabric's final counters,
     * the same as the results. */
    runner_playback(r, FABRIC_PLAY_SCALE, 0);
    runner_playback(r, FABRIC_PLAY_PAUSE, false);
    const cJSON *res = runner_wait(r);
    assert_int_equal(runner_status(r), 0);
    s = runner_snapshot(r);
    assert_true(s->done);
    const cJSON *ctr = cJSON_GetObjectItem(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(flow_named(res, "sender1"), "conditions"),
                                "sim"),
            "fabric"),
        "counters");
    double want;
    assert_true(jsonutil_num(cJSON_GetObjectItem(ctr, "sw0/0"), "queue_watermark", &want));
    assert_true(want > 0);
    assert_true(snap_counter(s, "sw0/0", "queue_watermark") == want);
    assert_true(jsonutil_num(cJSON_GetObjectItem(ctr, "h1"), "rx_prio3_pause", &want));
    assert_true(want > 0 && snap_counter(s, "h1", "rx_prio3_pause") == want);
    runner_snapshot_release(s);
    runner_free(r);
    mix_free(&m);
}

/* Back to full speed for the next tests, also when one fails half-way: playback is the
 * run's own (runner_opts.playback), so nothing carries over. */
/* ---- the lessons' pace ---- */

/* Each shipped scenario at the explorer's default pace (SIM_SCALE_LESSON) with its moments
 * (params.playback.moments of its flows) plays in under 60 s of wall time (issue 21: a
 * lesson must make its point within a minute): its simulated time, from a run at full
 * speed, through the playback's plan (an upper bound: skipped idle stretches only shorten
 * it). The table goes to stdout for the record. */
static void test_lesson_pace(void **state)
{
    (void)state;
    char **names = mix_list_presets();
    int checked = 0;
    for (int i = 0; names[i]; i++) {
        if (strncmp(names[i], "sim/", 4))
            continue;
        struct mix m;
        struct ft_err err = {0};
        if (mix_load(names[i], &m, &err) < 0)
            fail_msg("%s: %s", names[i], err.msg);
        uint64_t mo[SIM_MAX_MOMENTS][2];
        int nm = 0;
        const cJSON *hl = NULL;
        for (int f = 0; f < m.nflows; f++) {
            const cJSON *pm =
                cJSON_GetObjectItem(cJSON_GetObjectItem(m.flows[f].params, "playback"), "moments");
            if (!hl)
                hl = cJSON_GetObjectItem(cJSON_GetObjectItem(m.flows[f].params, "playback"),
                                         "highlight");
            const cJSON *e;
            cJSON_ArrayForEach(e, pm)
            {
                double a = 0, b = 0;
                jsonutil_num(e, "from_us", &a);
                jsonutil_num(e, "to_us", &b);
                assert_true(nm < SIM_MAX_MOMENTS);
                mo[nm][0] = (uint64_t)(a * 1e6);
                mo[nm][1] = (uint64_t)(b * 1e6);
                nm++;
            }
        }
        struct runner *r = run(&m);
        const cJSON *res = runner_wait(r);
        double sim_us = 0;
        const cJSON *ph;
        cJSON_ArrayForEach(ph, cJSON_GetObjectItem(res, "phases"))
        {
            double t = 0;
            const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(ph, "flows"), 0);
            const cJSON *sim = cJSON_GetObjectItem(cJSON_GetObjectItem(f0, "conditions"), "sim");
            if (jsonutil_num(cJSON_GetObjectItem(sim, "fabric"), "sim_time_us", &t))
                sim_us += t;
        }
        assert_true(sim_us > 0);
        /* The ports a lesson highlights are ports of its fabric that moved: each has
         * counters in the last phase's fabric. */
        const cJSON *phs = cJSON_GetObjectItem(res, "phases");
        const cJSON *last = cJSON_GetArrayItem(phs, cJSON_GetArraySize(phs) - 1);
        const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(last, "flows"), 0);
        const cJSON *fab = cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(f0, "conditions"), "sim"), "fabric");
        const cJSON *ctrs = cJSON_GetObjectItem(fab, "counters");
        const cJSON *h;
        cJSON_ArrayForEach(h, hl)
        {
            if (!cJSON_GetObjectItem(ctrs, h->valuestring))
                fail_msg("%s highlights %s, which is no port of its fabric that moved", names[i],
                         h->valuestring);
        }
        double wall =
            sim_playback_wall_ns(SIM_SCALE_LESSON, mo, nm, (uint64_t)(sim_us * 1e6)) / 1e9;
        printf("%-20s %10.1f us simulated, %d moment%s, plays in %5.1f s at 1 us per 1 ms\n",
               names[i], sim_us, nm, nm == 1 ? "" : "s", wall);
        if (!(wall < 60))
            fail_msg("%s plays %.1f s at the default pace (> 60 s): mark its moments", names[i],
                     wall);
        runner_free(r);
        mix_free(&m);
        checked++;
    }
    for (int i = 0; names[i]; i++)
        free(names[i]);
    free(names);
    assert_true(checked >= 12);
}

static int full_speed(void **state)
{
    (void)state;
    return 0;
}

/* ---- goodput in simulated time ---- */

static void test_goodput(void **state)
{
    (void)state;
    struct mix m;
    struct ft_err err = {0};
    assert_int_equal(mix_load("sim/baseline", &m, &err), 0);
    struct runner *r = run(&m);
    const cJSON *res = runner_wait(r);
    const cJSON *pp = flow_named(res, "pingpong");
    const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(pp, "points"), 0);
    double sim_g, wall_g, g;
    bool simulated = false;
    assert_true(jsonutil_num(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pp, "conditions"), "sim"),
                            "results"),
        "goodput_gbps", &sim_g));
    assert_true(jsonutil_num(pt, "goodput_gbps", &wall_g));
    assert_true(results_goodput(pp, pt, &g, &simulated));
    assert_true(simulated);
    assert_true(g == sim_g);
    /* A real flow's is its point's, per wall-clock second. */
    cJSON *tcp = cJSON_Duplicate(pp, 1);
    cJSON_ReplaceItemInObject(tcp, "transport", cJSON_CreateString("tcp"));
    assert_true(results_goodput(tcp, pt, &g, &simulated));
    assert_false(simulated);
    assert_true(g == wall_g);
    cJSON_Delete(tcp);

    /* Thresholds test the simulated goodput. */
    char terms[64], report[1024];
    struct thresholds ex;
    snprintf(terms, sizeof(terms), "gbps>%.4f", sim_g * 0.99);
    assert_int_equal(thresholds_parse(terms, &ex, &err), 0);
    assert_int_equal(thresholds_check(&ex, res, report, sizeof(report)), 0);
    snprintf(terms, sizeof(terms), "gbps>%.4f", sim_g * 1.01);
    assert_int_equal(thresholds_parse(terms, &ex, &err), 0);
    report[0] = '\0';
    assert_int_equal(thresholds_check(&ex, res, report, sizeof(report)), 1);
    assert_non_null(strstr(report, "simulated time"));

    /* Compare: the outcome rows and the brief carry it, flagged; no ratio against a goodput
     * per wall-clock second. */
    struct compare_result c;
    assert_int_equal(compare_results(res, res, &c, &err), 0);
    bool seen = false;
    for (int i = 0; i < c.nrows; i++)
        if (!strcmp(c.rows[i].flow, "pingpong")) {
            seen = true;
            assert_true(c.rows[i].sim_a && c.rows[i].sim_b);
            assert_true(c.rows[i].valid_a[COMPARE_GBPS] && c.rows[i].a[COMPARE_GBPS] == sim_g);
            double ratio;
            assert_true(compare_ratio(&c.rows[i], COMPARE_GBPS, &ratio) && ratio == 1);
            c.rows[i].sim_b = false;
            assert_false(compare_ratio(&c.rows[i], COMPARE_GBPS, &ratio));
        }
    assert_true(seen);
    compare_free(&c);
    struct compare_brief b;
    compare_brief(res, &b);
    assert_true(b.have_gbps && b.gbps_simulated && b.gbps == sim_g);
    runner_free(r);
    mix_free(&m);
}

/* ---- reproducible results ---- */

static char *reproducible_text(const char *preset, cJSON **keep)
{
    struct mix m;
    struct ft_err err = {0};
    assert_int_equal(mix_load(preset, &m, &err), 0);
    struct runner *r = run(&m);
    cJSON *doc = cJSON_Duplicate(runner_wait(r), 1);
    runner_free(r);
    mix_free(&m);
    results_make_reproducible(doc);
    char *text = cJSON_PrintUnformatted(doc);
    /* Doing it twice changes nothing. */
    results_make_reproducible(doc);
    char *again = cJSON_PrintUnformatted(doc);
    assert_string_equal(text, again);
    cJSON_free(again);
    if (keep)
        *keep = doc;
    else
        cJSON_Delete(doc);
    return text;
}

static void test_reproducible(void **state)
{
    (void)state;
    cJSON *doc;
    char *a = reproducible_text("sim/victim-dcqcn", &doc);
    char *b = reproducible_text("sim/victim-dcqcn", NULL);
    if (strcmp(a, b))
        fail_msg("two runs of one seed differ after results_make_reproducible");
    cJSON_free(a);
    cJSON_free(b);
    /* The wall-clock fields are null, the simulated outcome is all there. */
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(doc, "started_at")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(doc, "duration_s")));
    assert_true(cJSON_IsString(cJSON_GetObjectItem(doc, "reproducible")));
    const cJSON *ph;
    cJSON_ArrayForEach(ph, cJSON_GetObjectItem(doc, "phases"))
    {
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(ph, "duration_s")));
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(ph, "flows"))
        {
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(f, "setup_s")));
            const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "points"), 0);
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(pt, "measure_s")));
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(pt, "goodput_gbps")));
            double ops;
            assert_true(jsonutil_num(pt, "ops", &ops) && ops > 0);
            double g;
            bool sim;
            assert_true(results_goodput(f, pt, &g, &sim) && sim && g > 0);
        }
    }
    const cJSON *e, *prev = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "events"))
    {
        assert_true(e->valuestring[0] != ' ' &&
                    !(e->valuestring[0] >= '0' && e->valuestring[0] <= '9'));
        if (prev)
            assert_true(strcmp(prev->valuestring, e->valuestring) <= 0);
        prev = e;
    }
    assert_non_null(prev);
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_stream_latency),
        cmocka_unit_test(test_no_host_counters),
        cmocka_unit_test_teardown(test_snapshot_counters, full_speed),
        cmocka_unit_test(test_goodput),
        cmocka_unit_test(test_lesson_pace),
        cmocka_unit_test(test_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
