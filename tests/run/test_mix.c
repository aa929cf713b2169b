/* test_mix: every shipped preset parses and names its foreground; a mix survives
 * to_json -> from_json unchanged; malformed mixes get one error naming the file, the flow
 * and the field; unknown keys are refused with the nearest known one; sizes with units
 * parse; --expect terms parse and check results, and thresholds that can never pass (NaN,
 * infinite, negative, "< 0") are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/run/thresholds.h"
#include "engine/flow/mix.h"
#include "engine/xport/xport.h"

static void test_presets(void **state)
{
    (void)state;
    static const char *const want[] = {"tp-decode", "kv-transfer",    "api", "incast", "bidir",
                                       "neighbour", "quiet-vs-loaded"};
    char **names = mix_list_presets();
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        bool found = false;
        for (char **p = names; *p; p++)
            found |= !strcmp(*p, want[i]);
        if (!found)
            fail_msg("preset %s is not shipped", want[i]);
        struct mix m;
        struct ft_err err = {0};
        if (mix_load(want[i], &m, &err) < 0)
            fail_msg("%s", err.msg);
        assert_string_equal(m.name, want[i]);
        assert_true(mix_foreground(&m) >= 0);
        assert_true(m.description[0] != '\0');
        assert_true(m.lesson[0] != '\0');
        mix_free(&m);
    }
    mix_free_names(names);
    struct mix m;
    struct ft_err err = {0};
    assert_int_equal(mix_load("tp-decode", &m, &err), 0);
    const struct mix_flow *f = &m.flows[0];
    assert_int_equal(f->size.kind, MIX_SIZE_SWEEP);
    assert_int_equal(f->size.n, 5); /* 16, 32, 64, 128, 256 KiB */
    assert_int_equal(f->size.bytes[0], 16384);
    assert_int_equal(f->size.bytes[4], 262144);
    assert_int_equal(mix_latency_kind_of(f), MIX_LAT_HALF_RTT);
    mix_free(&m);
    assert_int_equal(mix_load("incast", &m, &err), 0);
    assert_true(m.quiet_then_loaded);
    int senders = 0;
    for (int i = 0; i < m.nflows; i++)
        senders += m.flows[i].role == MIX_ROLE_BACKGROUND && m.flows[i].dir == MIX_DIR_RX;
    assert_int_equal(senders, 4);
    mix_free(&m);
}

static void test_round_trip(void **state)
{
    (void)state;
    char **names = mix_list_presets();
    for (char **p = names; *p; p++) {
        struct mix a, b;
        struct ft_err err = {0};
        assert_int_equal(mix_load(*p, &a, &err), 0);
        cJSON *ja = mix_to_json(&a);
        if (mix_from_json(ja, *p, &b, &err) < 0)
            fail_msg("%s: %s", *p, err.msg);
        cJSON *jb = mix_to_json(&b);
        char *sa = cJSON_PrintUnformatted(ja), *sb = cJSON_PrintUnformatted(jb);
        if (strcmp(sa, sb))
            fail_msg("%s changed on a round trip:\n%s\n%s", *p, sa, sb);
        cJSON_free(sa);
        cJSON_free(sb);
        cJSON_Delete(ja);
        cJSON_Delete(jb);
        mix_free(&a);
        mix_free(&b);
    }
    mix_free_names(names);
}

/* A sweep whose factor does not divide its points into whole bytes: the saved mix (the
 * explorer's last-setup, a results file's "mix") must sweep the same points. It used to write
 * "to" as the last point and the factor as bytes[1] / bytes[0] (1.703125 for 1.7), and the
 * mix read back swept 64..538 B instead of 64..909 B. */
static void test_round_trip_sweep(void **state)
{
    (void)state;
    static const char text[] = "{\"flows\": [{\"op\": \"pingpong\", \"role\": \"foreground\", "
                               "\"size\": {\"sweep\": {\"from\": 64, \"to\": 1000, \"factor\": "
                               "1.7}}}]}";
    cJSON *doc = cJSON_Parse(text);
    struct mix a, b;
    struct ft_err err = {0};
    assert_int_equal(mix_from_json(doc, "sweep.json", &a, &err), 0);
    cJSON_Delete(doc);
    assert_int_equal(a.flows[0].size.n, 6); /* 64 109 185 315 535 909 */
    cJSON *ja = mix_to_json(&a);
    if (mix_from_json(ja, "saved", &b, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(b.flows[0].size.n, a.flows[0].size.n);
    for (int i = 0; i < a.flows[0].size.n; i++)
        assert_int_equal(b.flows[0].size.bytes[i], a.flows[0].size.bytes[i]);
    cJSON_Delete(ja);
    mix_free(&a);
    mix_free(&b);
}

static void refused(const char *text, const char *needle)
{
    cJSON *doc = NULL;
    struct ft_err err = {0};
    struct mix m;
    int rc = jsonutil_parse(text, strlen(text), "bad.json", &doc, &err);
    if (rc == 0) {
        rc = mix_from_json(doc, "bad.json", &m, &err);
        cJSON_Delete(doc);
        /* The params each transport reads: checked by the registry (runner_validate). */
        if (rc == 0) {
            rc = xport_check_params(&m, &err);
            mix_free(&m);
        }
    }
    assert_true(rc < 0);
    if (!strstr(err.msg, needle) || !strstr(err.msg, "bad.json"))
        fail_msg("'%s' lacks '%s'", err.msg, needle);
}

static void test_malformed(void **state)
{
    (void)state;
    refused("{\"flows\": [}", "bad.json:1:");
    refused("{\"format\": \"fabtop-topology\"}", "not a fabtop mix");
    refused("{\"flows\": []}", "flows must be a non-empty array");
    refused("{\"flows\": [{\"op\": \"pingpong\"}]}", "flows[0].size is required");
    refused("{\"flows\": [{\"op\": \"teleport\", \"size\": 64}]}", "flows[0].op");
    refused("{\"flows\": [{\"op\": \"pingpong\", \"size\": \"12 parsecs\"}]}", "flows[0].size");
    refused("{\"flows\": [{\"op\": \"pingpong\", \"size\": 64, \"concurrency\": 4}]}",
            "flows[0].concurrency");
    refused("{\"flows\": [{\"op\": \"stream\", \"size\": 64, \"role\": \"background\"}]}",
            "foreground");
    refused("{\"flows\": [{\"name\": \"a\", \"op\": \"stream\", \"size\": 64}, "
            "{\"name\": \"a\", \"op\": \"stream\", \"size\": 64}]}",
            "flows[1].name \"a\" is used twice");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": {\"sweep\": {\"from\": 64, \"to\": 8}}}]}",
            "flows[0].size.sweep");
    refused("{\"phases\": [\"loaded\", \"quiet\"], \"flows\": [{\"op\": \"rr\", \"size\": 64}]}",
            "phases");
    refused("{\"version\": 7, \"flows\": []}", "mix version 7");
}

/* A key the reader does not know is refused with the nearest known one, at every level:
 * the document, a flow, its local endpoint, its size, and the params of its transport. */
static void test_unknown_keys(void **state)
{
    (void)state;
    refused("{\"flow\": [{\"op\": \"rr\", \"size\": 64}]}",
            "bad.json: unknown key 'flow' (did you mean 'flows'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64}, {\"name\": \"b\", \"op\": \"rr\", "
            "\"size\": 64, \"duraton_s\": 3}]}",
            "bad.json: flows[1]: unknown key 'duraton_s' (did you mean 'duration_s'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"sise\": 64}]}",
            "flows[0]: unknown key 'sise' (did you mean 'size'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"local\": {\"netdve\": \"eth0\"}}]}",
            "flows[0].local: unknown key 'netdve' (did you mean 'netdev'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": {\"swep\": {}}}]}",
            "flows[0].size: unknown key 'swep' (did you mean 'sweep'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": {\"sweep\": {\"fro\": 64, \"to\": 128}}}]}",
            "flows[0].size.sweep: unknown key 'fro' (did you mean 'from'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"params\": "
            "{\"congestion_contrl\": \"bbr\"}}]}",
            "flows[0].params: unknown key 'congestion_contrl' (did you mean "
            "'congestion_control'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"transport\": \"verbs\", \"size\": 64, "
            "\"params\": {\"dcsp\": 26}}]}",
            "flows[0].params: unknown key 'dcsp' (did you mean 'dscp'?)");
    refused("{\"flows\": [{\"op\": \"stream\", \"transport\": \"sim\", \"size\": 64, "
            "\"params\": {\"src\": \"h0\", \"dts\": \"h1\"}}]}",
            "flows[0].params: unknown key 'dts' (did you mean 'dst'?)");
    refused("{\"flows\": [{\"op\": \"copy\", \"transport\": \"nccl\", \"size\": 64, "
            "\"params\": {\"collective\": \"all_reduce\"}}]}",
            "flows[0].params: unknown key 'collective' (known: copy, pinned, depth, gpus)");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"colour\": 1}]}",
            "flows[0]: unknown key 'colour' (known: name, transport, op,");
}

/* A flow's recovery policy (fabtop drill): checked, unknown keys refused, written back. */
static void test_recover(void **state)
{
    (void)state;
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": {\"atempts\": 3}}]}",
            "flows[0].recover: unknown key 'atempts' (did you mean 'attempts'?)");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": {\"attempts\": 0}}]}",
            "flows[0].recover.attempts must be a number from 1 to 1000");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": "
            "{\"backoff_ms\": [500, 50]}}]}",
            "flows[0].recover.backoff_ms must be [MIN, MAX]");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": 5}]}",
            "flows[0].recover must be an object");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": "
            "{\"failover\": \"hostB\"}}]}",
            "flows[0].recover.failover must be a list of at most 4 agents, HOST[:PORT]");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": "
            "{\"failover\": [\"a\", \"b\", \"c\", \"d\", \"e\"]}}]}",
            "flows[0].recover.failover must be a list of at most 4");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": "
            "{\"failover\": [\"host B\"]}}]}",
            "flows[0].recover.failover entries must be HOST[:PORT]");
    refused("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": "
            "{\"failover\": [7470]}}]}",
            "flows[0].recover.failover entries must be HOST[:PORT]");
    cJSON *doc = cJSON_Parse("{\"flows\": [{\"op\": \"rr\", \"size\": 64, \"recover\": "
                             "{\"attempts\": 7, \"backoff_ms\": [10, 200], \"deadline_s\": 3, "
                             "\"failover\": [\"10.0.0.3:7470\", \"[fd00::3]\"]}}, "
                             "{\"name\": \"b\", \"op\": \"rr\", \"size\": 64}]}");
    struct mix a, b;
    struct ft_err err = {0};
    assert_int_equal(mix_from_json(doc, "r.json", &a, &err), 0);
    assert_true(a.flows[0].recover.set && !a.flows[1].recover.set);
    assert_int_equal(a.flows[0].recover.attempts, 7);
    assert_true(a.flows[0].recover.backoff_min_ms == 10 &&
                a.flows[0].recover.backoff_max_ms == 200);
    assert_true(a.flows[0].recover.deadline_s == 3);
    assert_int_equal(a.flows[0].recover.nfailover, 2);
    assert_string_equal(a.flows[0].recover.failover[0], "10.0.0.3:7470");
    assert_string_equal(a.flows[0].recover.failover[1], "[fd00::3]");
    cJSON *back = mix_to_json(&a);
    assert_int_equal(mix_from_json(back, "saved", &b, &err), 0);
    assert_memory_equal(&a.flows[0].recover, &b.flows[0].recover, sizeof(a.flows[0].recover));
    assert_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(back, "flows"), 1), "recover"));
    cJSON_Delete(back);
    cJSON_Delete(doc);
    mix_free(&a);
    mix_free(&b);
}

static void test_bytes(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(mix_parse_bytes("4096", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(mix_parse_bytes("64KiB", &v), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(mix_parse_bytes("4MiB", &v), 0);
    assert_int_equal(v, 4u << 20);
    assert_int_equal(mix_parse_bytes("1G", &v), 0);
    assert_int_equal(v, 1u << 30);
    assert_int_equal(mix_parse_bytes("512B", &v), 0);
    assert_int_equal(v, 512);
    assert_int_equal(mix_parse_bytes("0", &v), -EINVAL);
    assert_int_equal(mix_parse_bytes("1.5", &v), -EINVAL);
    assert_int_equal(mix_parse_bytes("4 parsecs", &v), -EINVAL);
    assert_int_equal(mix_parse_bytes("-4", &v), -EINVAL);
}

static void test_expect(void **state)
{
    (void)state;
    struct thresholds e;
    struct ft_err err = {0};
    assert_int_equal(thresholds_parse("p99<50us, gbps>9 ,probe.quiet.p99.9<2ms,max<1s", &e, &err),
                     0);
    assert_int_equal(e.n, 4);
    assert_int_equal(e.t[0].stat, EXP_P99);
    assert_true(e.t[0].less);
    assert_true(e.t[0].value == 50);
    assert_int_equal(e.t[1].stat, EXP_GBPS);
    assert_false(e.t[1].less);
    assert_string_equal(e.t[2].flow, "probe");
    assert_string_equal(e.t[2].phase, "quiet");
    assert_int_equal(e.t[2].stat, EXP_P999);
    assert_true(e.t[2].value == 2000);
    assert_true(e.t[3].value == 1e6);
    assert_true(thresholds_parse("p42<3", &e, &err) < 0);
    ft_err_clear(&err);
    assert_true(thresholds_parse("probe.quiet.gpbs>9", &e, &err) < 0);
    assert_non_null(strstr(err.msg, "unknown statistic (did you mean 'gbps'?"));
    assert_true(thresholds_parse("p99=3", &e, &err) < 0);
    assert_true(thresholds_parse("p99<3 parsecs", &e, &err) < 0);
    /* Thresholds no result can meet, or that mean nothing. */
    static const char *const never[] = {"p99<nan", "p99<-5us",  "p99<inf",   "gbps>inf",
                                        "p99<0",   "retrans<0", "p99<1e999", "gbps>-1",
                                        "ops<-0",  "max>NaN",   NULL};
    for (const char *const *t = never; *t; t++) {
        ft_err_clear(&err);
        if (thresholds_parse(*t, &e, &err) != -EINVAL || !strstr(err.msg, *t))
            fail_msg("--expect '%s' accepted or refused without naming it: %s", *t, err.msg);
    }
    ft_err_clear(&err);
    assert_int_equal(thresholds_parse("p99<-5us", &e, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "a negative threshold; p99 is never below 0"));
    ft_err_clear(&err);
    assert_int_equal(thresholds_parse("retrans<0", &e, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "can never pass"));
    assert_int_equal(thresholds_parse("retrans<1,p99>0", &e, &err), 0);

    /* Terms this mix cannot meet, known before the run: no such flow or phase, a background
     * flow in the quiet phase, a statistic the flow does not record. */
    static const char mixtext[] =
        "{\"name\": \"m\", \"phases\": [\"quiet\", \"loaded\"], \"flows\": ["
        "{\"name\": \"probe\", \"op\": \"pingpong\", \"size\": 64},"
        "{\"name\": \"bulk\", \"role\": \"background\", \"op\": \"stream\", \"size\": 65536},"
        "{\"name\": \"sim\", \"role\": \"background\", \"transport\": \"sim\", \"op\": "
        "\"stream\", \"size\": 65536, \"params\": {\"src\": \"h0\", \"dst\": \"h1\"}}]}";
    cJSON *mdoc = cJSON_Parse(mixtext);
    struct mix m;
    assert_int_equal(mix_from_json(mdoc, "m.json", &m, &err), 0);
    cJSON_Delete(mdoc);
    static const struct {
        const char *term, *why;
    } cannot[] = {
        {"prbe.p99<5ms", "mix m has no flow 'prbe' (did you mean 'probe'?)"},
        {"bulk.quiet.gbps>1", "bulk is a background flow; it runs in the loaded phase only"},
        {"bulk.p99<5ms", "flow bulk (tcp stream) records no latency"},
        {"sim.retrans<1", "flow sim (sim) has no retrans"},
        {"sim.wire_gbps>1", "flow sim (sim) has no wire_gbps"},
    };
    for (size_t i = 0; i < sizeof(cannot) / sizeof(cannot[0]); i++) {
        ft_err_clear(&err);
        assert_int_equal(thresholds_parse(cannot[i].term, &e, &err), 0);
        if (thresholds_check_mix(&e, &m, &err) != -EINVAL || !strstr(err.msg, cannot[i].why))
            fail_msg("'%s' against the mix: '%s'", cannot[i].term, err.msg);
    }
    assert_int_equal(
        thresholds_parse("p99<5ms,quiet.p50<1ms,bulk.gbps>1,bulk.retrans<9,sim.gbps>1", &e, &err),
        0);
    assert_int_equal(thresholds_check_mix(&e, &m, &err), 0);
    m.quiet_then_loaded = false;
    assert_int_equal(thresholds_parse("quiet.p99<5ms", &e, &err), 0);
    assert_int_equal(thresholds_check_mix(&e, &m, &err), -EINVAL);
    mix_free(&m);

    const char *res =
        "{\"phases\": [{\"name\": \"loaded\", \"flows\": [{\"name\": \"probe\", \"role\": "
        "\"foreground\", \"points\": [{\"size_bytes\": 64, \"goodput_gbps\": 3, \"latency\": "
        "{\"p99\": 40, \"max\": 90}}, {\"size_bytes\": 128, \"goodput_gbps\": 12, \"latency\": "
        "{\"p99\": 60, \"max\": 95}}]}]}]}";
    cJSON *doc;
    assert_int_equal(jsonutil_parse(res, strlen(res), "r", &doc, &err), 0);
    char report[1024];
    assert_int_equal(thresholds_parse("p99<50us", &e, &err), 0);
    assert_int_equal(thresholds_check(&e, doc, report, sizeof(report)), 1); /* the 128 B point */
    assert_non_null(strstr(report, "at 128 B"));
    assert_int_equal(thresholds_parse("max<100us,gbps>2", &e, &err), 0);
    assert_int_equal(thresholds_check(&e, doc, report, sizeof(report)), 0);
    assert_int_equal(thresholds_parse("wire_gbps>1", &e, &err), 0);
    assert_int_equal(thresholds_check(&e, doc, report, sizeof(report)), 1); /* n/a is a failure */
    assert_int_equal(thresholds_parse("nosuch.p99<5", &e, &err), 0);
    assert_int_equal(thresholds_check(&e, doc, report, sizeof(report)), 1);
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_round_trip_sweep),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_expect),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_recover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
