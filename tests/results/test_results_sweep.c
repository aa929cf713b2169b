/* results sweep: a rack sweep's document (results_sweep.h) read into its typed fields and
 * written back byte for byte (the hand-written sweep-4ranks.json: 4 ranks, 6 pairs with one
 * failed, 2 verdicts, events, 2 tests, one with a real run); absent and null keys kept apart;
 * the reader's refusals (another format, a newer version, wrong types, a rank index not in
 * ranks[], a negative round or rail, a run the run reader refuses), each one line naming the
 * file and the field, with the document left empty; what a builder fills is written. */
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
#include "engine/results/results_sweep.h"

#ifndef SWEEP_FIXTURE
#error "SWEEP_FIXTURE: the path of tests/results/sweep-4ranks.json"
#endif

static cJSON *fixture(void)
{
    cJSON *j = NULL;
    struct ft_err err = {0};
    if (jsonutil_load(SWEEP_FIXTURE, &j, &err) < 0)
        fail_msg("%s", err.msg);
    return j;
}

static cJSON *parse(const char *text)
{
    cJSON *j = NULL;
    assert_int_equal(jsonutil_parse(text, strlen(text), "text", &j, NULL), 0);
    return j;
}

/* The member at path ("tests[0].run.phases[0].flows[0]"), or NULL. */
static cJSON *at(cJSON *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t && j;
         t = strtok_r(NULL, ".", &save)) {
        char *br = strchr(t, '[');
        if (br)
            *br = '\0';
        if (*t)
            j = cJSON_GetObjectItemCaseSensitive(j, t);
        for (; br && j; br = strchr(br + 1, '['))
            j = cJSON_GetArrayItem(j, atoi(br + 1));
    }
    return j;
}

/* Replace the member at path (an object's member or an array's entry) with v. */
static void set(cJSON *j, const char *path, cJSON *v)
{
    char parent[256];
    snprintf(parent, sizeof(parent), "%s", path);
    char *end = strrchr(parent, ']'), *br = strrchr(parent, '[');
    if (end && end[1] == '\0' && br) {
        *br = '\0';
        cJSON *a = at(j, parent);
        assert_non_null(a);
        assert_true(cJSON_ReplaceItemInArray(a, atoi(br + 1), v));
        return;
    }
    char *dot = strrchr(parent, '.');
    const char *key = dot ? dot + 1 : parent;
    cJSON *o = j;
    if (dot) {
        *dot = '\0';
        o = at(j, parent);
    }
    assert_non_null(o);
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
    else
        cJSON_AddItemToObject(o, key, v);
}

static bool empty(const struct results_sweep *s)
{
    static const struct results_sweep zero;
    return !memcmp(s, &zero, sizeof(zero));
}

/* Reading j fails with -EBADMSG, one line that starts with "s.json: " and holds want, and
 * leaves the document empty. Deletes j. */
static void refused(cJSON *j, const char *want)
{
    struct results_sweep s;
    struct ft_err err = {0};
    assert_int_equal(results_sweep_read(j, "s.json", &s, &err), -EBADMSG);
    assert_true(empty(&s));
    assert_int_equal(strncmp(err.msg, "s.json: ", 8), 0);
    if (!strstr(err.msg, want))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
    assert_null(strchr(err.msg, '\n'));
    cJSON_Delete(j);
}

/* j reads and writes back byte for byte (compact); returns the model read (caller frees). */
static void round_trip(const cJSON *j, struct results_sweep *s)
{
    struct ft_err err = {0};
    if (results_sweep_read(j, "s.json", s, &err) < 0)
        fail_msg("%s", err.msg);
    cJSON *w = results_sweep_write(s);
    char *x = cJSON_PrintUnformatted(j), *y = cJSON_PrintUnformatted(w);
    if (strcmp(x, y))
        fail_msg("read -> write differs:\n%s\n%s", x, y);
    cJSON_free(x);
    cJSON_free(y);
    cJSON_Delete(w);
}

static void test_round_trip(void **state)
{
    (void)state;
    cJSON *j = fixture();
    assert_true(results_sweep_is(j));
    struct results_sweep s;
    round_trip(j, &s);
    assert_string_equal(results_str_get(&s.format), RESULTS_SWEEP_FORMAT);
    assert_string_equal(results_str_get(&s.launcher), "mpirun");
    assert_int_equal(s.npatterns, 1);
    assert_string_equal(s.patterns[0], "pairs");
    assert_int_equal(s.nranks, 4);
    assert_int_equal(s.npairs, 6);
    assert_int_equal(s.nverdicts, 2);
    assert_int_equal(s.nevents, 2);
    assert_int_equal(s.ntests, 2);
    assert_non_null(s.mix);
    /* Ranks: carried members, absent and null apart. */
    assert_string_equal(s.ranks[2].host, "rk-h2");
    assert_string_equal(results_str_get(&s.ranks[2].unlike), "eth0 MTU 1400 (the others 9000)");
    assert_int_equal(s.ranks[0].unlike.st, RESULTS_ABSENT);
    assert_int_equal(s.ranks[1].address.st, RESULTS_NULL);
    assert_int_equal(s.ranks[3].gpus.st, RESULTS_ABSENT);
    assert_int_equal(s.ranks[2].gpus.st, RESULTS_SET);
    assert_true(cJSON_IsArray(s.ranks[0].nics));
    assert_true(cJSON_IsNull(s.ranks[3].topology));
    assert_true(cJSON_IsObject(s.ranks[0].conditions));
    /* Pairs: the failed one, a missing p99.9 and null figures. */
    const struct results_sweep_pair *f = &s.pairs[4];
    assert_int_equal(f->a, 1);
    assert_int_equal(f->b, 3);
    assert_true(results_bool_true(&f->failed));
    assert_int_equal(f->bw_ab_gbps.st, RESULTS_NULL);
    assert_int_equal(f->unlike.st, RESULTS_ABSENT);
    assert_int_equal(s.pairs[2].lat_p999_us.st, RESULTS_ABSENT);
    double v;
    assert_true(results_num_get(&s.pairs[0].bw_ab_gbps, &v));
    assert_true(v == 94.1);
    assert_true(results_bool_true(&s.pairs[1].unlike));
    /* Verdicts: quantities present, null and absent. */
    const struct results_sweep_verdict *n = &s.verdicts[0];
    assert_string_equal(n->kind, "rank");
    assert_string_equal(n->state, "named");
    assert_int_equal(n->rank.st, RESULTS_SET);
    assert_true(n->rank.v == 2);
    assert_int_equal(n->peer.st, RESULTS_NULL);
    assert_int_equal(n->observed.st, RESULTS_SET);
    assert_string_equal(results_str_get(&n->observed.unit), "Gb/s");
    assert_true(n->ratio.value.v == 0.27);
    assert_int_equal(s.verdicts[1].observed.st, RESULTS_NULL);
    assert_int_equal(s.verdicts[1].reference.st, RESULTS_ABSENT);
    assert_int_equal(s.verdicts[1].group_a.st, RESULTS_ABSENT);
    /* Tests: the run read through the run reader; the failed test's run is null. */
    const struct results_sweep_test *t = &s.tests[0];
    assert_int_equal(t->run_st, RESULTS_SET);
    assert_int_equal(t->run.nphases, 1);
    assert_int_equal(t->run.phases[0].nflows, 1);
    assert_non_null(t->run.phases[0].flows[0].points[0].histogram);
    assert_int_equal(t->run.phases[0].flows[0].cond.mss_bytes, 8948);
    assert_int_equal(t->phase.st, RESULTS_ABSENT);
    assert_int_equal(s.tests[1].phase.st, RESULTS_NULL);
    assert_int_equal(s.tests[1].run_st, RESULTS_NULL);
    assert_int_equal(s.tests[1].src, 1);
    assert_int_equal(s.tests[1].dst, 3);
    assert_string_equal(s.tests[1].status, "failed");
    results_sweep_free(&s);
    assert_true(empty(&s));
    cJSON_Delete(j);
}

/* Sparse documents: absent keys stay absent, nulls stay null, empty arrays stay empty. */
static void test_absent_and_null(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"format\":\"fabtop-sweep\",\"version\":1}",
        "{\"format\":\"fabtop-sweep\",\"version\":1,\"launcher\":null,\"patterns\":null,"
        "\"summary\":null,\"mix\":null,\"ranks\":[],\"pairs\":null,\"verdicts\":[],"
        "\"events\":null,\"tests\":[]}",
        "{\"format\":\"fabtop-sweep\",\"version\":1,\"ranks\":[{\"rank\":0,\"host\":null},"
        "{\"rank\":1,\"host\":\"b\",\"nics\":null,\"conditions\":null}],\"pairs\":[{\"a\":0,"
        "\"b\":1,\"rail\":0,\"bw_ab_gbps\":null,\"failed\":null}],\"verdicts\":[{\"kind\":null,"
        "\"metric\":\"latency p50\",\"state\":\"suspect\",\"rank\":1,\"observed\":{},"
        "\"ratio\":{\"value\":null},\"message\":null}],\"tests\":[{\"round\":0,\"step\":1,"
        "\"pattern\":\"pairs\",\"role\":null,\"src\":1,\"dst\":0,\"rail\":0,\"status\":\"ok\","
        "\"run\":{}}]}",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        cJSON *j = parse(docs[i]);
        struct results_sweep s;
        round_trip(j, &s);
        results_sweep_free(&s);
        cJSON_Delete(j);
    }
}

static void test_refuses_other_format_and_version(void **state)
{
    (void)state;
    cJSON *j = fixture();
    set(j, "format", cJSON_CreateString("fabtop-results"));
    assert_false(results_sweep_is(j));
    refused(j, "not a fabtop sweep document (expected \"format\": \"fabtop-sweep\", version 1); "
               "format is \"fabtop-results\"");
    refused(parse("{\"version\": 1}"), "no \"format\"");
    refused(parse("[1]"), "s.json: the document is not a sweep document (an object)");
    j = fixture();
    set(j, "version", cJSON_CreateNumber(2));
    refused(j, "version 2 is newer than this fabtop reads (1)");
    refused(parse("{\"format\": \"fabtop-sweep\", \"version\": 1.5}"), "version 1.5 is no version");
    refused(parse("{\"format\": \"fabtop-sweep\", \"version\": \"1\"}"),
            "\"version\" is not a number");
}

/* The fixture with the member at path replaced by the JSON text v, refused with want. */
static void refused_edit(const char *path, const char *v, const char *want)
{
    cJSON *j = fixture();
    set(j, path, parse(v));
    refused(j, want);
}

static void test_refuses_wrong_types(void **state)
{
    (void)state;
    refused_edit("launcher", "5", "s.json: launcher is not a string or null");
    refused_edit("interrupted", "\"no\"", "s.json: interrupted is not true, false or null");
    refused_edit("patterns", "[\"pairs\", 3]", "s.json: patterns is not an array of strings");
    refused_edit("ranks", "{}", "s.json: ranks is not an array or null");
    refused_edit("ranks[1].host", "5", "s.json: ranks[1].host is not a string or null");
    refused_edit("ranks[0].nics", "{}", "s.json: ranks[0].nics is not an array or null");
    refused_edit("ranks[2].topology", "[]", "s.json: ranks[2].topology is not an object or null");
    refused_edit("mix", "3", "s.json: mix is not an object or null");
    refused_edit("pairs[0].bw_ab_gbps", "\"fast\"",
                 "s.json: pairs[0].bw_ab_gbps is not a number or null");
    refused_edit("pairs[3]", "7", "s.json: pairs[3] is not an object");
    refused_edit("verdicts", "{}", "s.json: verdicts is not an array or null");
    refused_edit("verdicts[0].observed", "1", "s.json: verdicts[0].observed is not an object");
    refused_edit("verdicts[0].ratio.unit", "1", "s.json: verdicts[0].ratio.unit is not a string");
    refused_edit("verdicts[1].message", "[]", "s.json: verdicts[1].message is not a string");
    refused_edit("events", "[1]", "s.json: events is not an array of strings");
    refused_edit("tests[0].round", "\"0\"", "s.json: tests[0].round is not a whole number");
    refused_edit("tests[0].round", "0.5", "s.json: tests[0].round = 0.5 is out of range");
    refused_edit("tests[1].pattern", "false", "s.json: tests[1].pattern is not a string or null");
    refused_edit("tests[1].src", "null", "s.json: tests[1].src is not a rank (a whole number)");
}

static void test_refuses_rank_indexes(void **state)
{
    (void)state;
    refused_edit("tests[1].dst", "4", "s.json: tests[1].dst = 4 is no rank in ranks[] (4 ranks)");
    refused_edit("tests[0].src", "-1", "s.json: tests[0].src = -1 is no rank in ranks[] (4 ranks)");
    refused_edit("pairs[2].a", "7", "s.json: pairs[2].a = 7 is no rank in ranks[] (4 ranks)");
    refused_edit("pairs[5].b", "1.5", "s.json: pairs[5].b = 1.5 is no rank in ranks[] (4 ranks)");
    refused_edit("verdicts[0].rank", "9",
                 "s.json: verdicts[0].rank = 9 is no rank in ranks[] (4 ranks)");
    refused_edit("verdicts[1].peer", "4",
                 "s.json: verdicts[1].peer = 4 is no rank in ranks[] (4 ranks)");
    /* With one rank left, every pair names a rank that is not there. */
    refused_edit("ranks", "[{\"rank\": 0, \"host\": \"rk-h0\"}]",
                 "s.json: pairs[0].b = 1 is no rank in ranks[] (1 rank)");
    refused_edit("ranks", "null", "s.json: pairs[0].a = 0 is no rank in ranks[] (0 ranks)");
}

static void test_refuses_negative_round_and_rail(void **state)
{
    (void)state;
    refused_edit("tests[0].round", "-1",
                 "s.json: tests[0].round = -1 is out of range 0-2147483647");
    refused_edit("tests[1].rail", "-2", "s.json: tests[1].rail = -2 is out of range 0-2147483647");
    refused_edit("pairs[1].rail", "-1", "s.json: pairs[1].rail = -1 is out of range 0-2147483647");
    refused_edit("verdicts[0].rail", "-1",
                 "s.json: verdicts[0].rail = -1 is out of range 0-2147483647");
    refused_edit("ranks[3].rail", "-1", "s.json: ranks[3].rail = -1 is out of range 0-2147483647");
    refused_edit("ranks[3].rank", "-3", "s.json: ranks[3].rank = -3 is out of range 0-2147483647");
}

static void test_refuses_bad_run(void **state)
{
    (void)state;
    refused_edit("tests[0].run.phases[0].flows[0].status", "3",
                 "s.json: tests[0].run: phases[0].flows[0].status is not a string or null");
    refused_edit("tests[0].run.phases[0].flows[0].points[0].histogram",
                 "{\"count\": 3, \"min_ns\": 100, \"max_ns\": 100, \"sum_ns\": 300, "
                 "\"sumsq_ns2\": 30000, \"overflow\": 0, \"buckets\": [[100, 2]]}",
                 "s.json: tests[0].run: phases[0].flows[0].points[0].histogram is not a histogram "
                 "that adds up");
    refused_edit("tests[0].run.phases[0].flows[0].points[0].size_bytes", "-1",
                 "s.json: tests[0].run: phases[0].flows[0].points[0].size_bytes = -1 is out of "
                 "range");
    refused_edit("tests[1].run", "[]",
                 "s.json: tests[1].run: the document is not a results object");
}

/* What a builder fills without the presence states of arrays and quantities is written. */
/* A transport per test, pair and verdict: absent reads as tcp (the first documents'), set
 * ones are written after the rail and read back; anything but tcp, verbs or nccl is refused. */
static void test_transports(void **state)
{
    (void)state;
    cJSON *j = fixture();
    struct results_sweep s;
    struct ft_err err = {0};
    assert_int_equal(results_sweep_read(j, "s.json", &s, &err), 0);
    cJSON_Delete(j);
    assert_string_equal(results_sweep_transport(&s.pairs[0].transport), "tcp");
    assert_string_equal(results_sweep_transport(&s.tests[0].transport), "tcp");
    results_str_set(&s.pairs[1].transport, "verbs");
    results_str_set(&s.tests[1].transport, "nccl");
    results_str_set(&s.verdicts[0].transport, "verbs");
    j = results_sweep_write(&s);
    results_sweep_free(&s);
    assert_string_equal(cJSON_GetStringValue(at(j, "pairs[1].transport")), "verbs");
    /* After the rail, in the writer's one order. */
    assert_string_equal(at(j, "pairs[1].rail")->next->string, "transport");
    round_trip(j, &s);
    assert_string_equal(results_sweep_transport(&s.pairs[1].transport), "verbs");
    assert_string_equal(results_sweep_transport(&s.tests[1].transport), "nccl");
    assert_string_equal(results_sweep_transport(&s.verdicts[0].transport), "verbs");
    assert_string_equal(results_sweep_transport(&s.pairs[0].transport), "tcp");
    assert_int_equal(s.pairs[0].transport.st, RESULTS_ABSENT);
    results_sweep_free(&s);
    set(j, "pairs[1].transport", cJSON_CreateString("rdma"));
    refused(j, "s.json: pairs[1].transport = \"rdma\": want tcp, verbs or nccl");
    j = fixture();
    set(j, "tests[0].transport", cJSON_CreateNumber(3));
    refused(j, "s.json: tests[0].transport is not a string or null");
}

/* The incast and bisection streams' shares: written after the pairs, read back, a src that
 * is no rank refused. */
static void test_shares(void **state)
{
    (void)state;
    cJSON *j = fixture();
    struct results_sweep s;
    struct ft_err err = {0};
    assert_int_equal(results_sweep_read(j, "s.json", &s, &err), 0);
    cJSON_Delete(j);
    assert_int_equal(s.nshares, 0);
    s.shares = realloc(s.shares, 2 * sizeof(*s.shares));
    memset(s.shares, 0, 2 * sizeof(*s.shares));
    s.nshares = 2;
    for (int i = 0; i < 2; i++) {
        s.shares[i].pattern = strdup("incast");
        s.shares[i].round = 4;
        s.shares[i].src = i + 1;
        s.shares[i].dst = 0;
        results_num_set(&s.shares[i].gbps, true, i ? 30.0 : 60.0);
        results_num_set(&s.shares[i].fair_gbps, true, 45.0);
        results_num_set(&s.shares[i].share, true, i ? 30.0 / 45 : 60.0 / 45);
        results_str_set(&s.shares[i].fair_kind, "the senders' aggregate / senders");
    }
    j = results_sweep_write(&s);
    results_sweep_free(&s);
    assert_string_equal(at(j, "pairs")->next->string, "shares");
    round_trip(j, &s);
    assert_int_equal(s.nshares, 2);
    assert_string_equal(s.shares[1].pattern, "incast");
    assert_int_equal(s.shares[1].src, 2);
    assert_true(s.shares[1].share.st == RESULTS_SET && s.shares[1].share.v < 0.67);
    assert_string_equal(results_str_get(&s.shares[0].fair_kind),
                        "the senders' aggregate / senders");
    results_sweep_free(&s);
    set(j, "shares[1].src", cJSON_CreateNumber(9));
    refused(j, "s.json: shares[1].src = 9 is no rank in ranks[] (4 ranks)");
}

static void test_builder_written(void **state)
{
    (void)state;
    struct results_sweep s = {0};
    results_str_set(&s.format, RESULTS_SWEEP_FORMAT);
    results_num_set(&s.version, true, RESULTS_SWEEP_VERSION);
    s.nranks = 2;
    s.ranks = calloc(2, sizeof(*s.ranks));
    s.ranks[0].host = strdup("a");
    s.ranks[1].rank = 1;
    s.nverdicts = 1;
    s.verdicts = calloc(1, sizeof(*s.verdicts));
    results_num_set(&s.verdicts[0].ratio.value, true, 0.5);
    s.verdicts[0].message = strdup("m");
    s.tests_st = RESULTS_SET;
    s.events_st = RESULTS_NULL;
    cJSON *w = results_sweep_write(&s);
    char *x = cJSON_PrintUnformatted(w);
    assert_string_equal(x, "{\"format\":\"fabtop-sweep\",\"version\":1,\"ranks\":[{\"rank\":0,"
                           "\"host\":\"a\"},{\"rank\":1,\"host\":null}],\"verdicts\":[{\"kind\":"
                           "null,\"metric\":null,\"state\":null,\"ratio\":{\"value\":0.5},"
                           "\"message\":\"m\"}],\"events\":null,\"tests\":[]}");
    struct results_sweep back;
    round_trip(w, &back);
    results_sweep_free(&back);
    cJSON_free(x);
    cJSON_Delete(w);
    results_sweep_free(&s);
    assert_true(empty(&s));
    results_sweep_free(NULL);
    assert_null(results_sweep_write(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_absent_and_null),
        cmocka_unit_test(test_refuses_other_format_and_version),
        cmocka_unit_test(test_refuses_wrong_types),
        cmocka_unit_test(test_refuses_rank_indexes),
        cmocka_unit_test(test_refuses_negative_round_and_rail),
        cmocka_unit_test(test_refuses_bad_run),
        cmocka_unit_test(test_transports),
        cmocka_unit_test(test_shares),
        cmocka_unit_test(test_builder_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
