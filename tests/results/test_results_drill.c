/* test_results_drill: the fabtop-drill document's reader and writer (results_drill.h): a
 * document `fabtop drill -o` wrote reads back and writes out byte for byte; so does a sparse
 * one (absent members, nulls), and a rank-loss drill's; what saw the fault ("seen_by");
 * malformed ones are refused with the key named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "engine/results/results_drill.h"

static void roundtrip_text(const char *text)
{
    cJSON *in = cJSON_Parse(text);
    assert_non_null(in);
    struct results_drill_doc d;
    struct ft_err err = {0};
    int rc = results_drill_read(in, "test", &d, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    cJSON *out = results_drill_write(&d);
    char *a = cJSON_PrintUnformatted(in), *b = cJSON_PrintUnformatted(out);
    assert_string_equal(a, b);
    cJSON_free(a);
    cJSON_free(b);
    cJSON_Delete(out);
    results_drill_free(&d);
    cJSON_Delete(in);
}

/* tests/results/NAME, written back byte for byte, then read into d; the parsed document. */
static cJSON *fixture(const char *name, struct results_drill_doc *d)
{
    const char *src = getenv("FABTOP_SRC");
    if (!src)
        skip();
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/results/%s", src, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    roundtrip_text(buf);
    cJSON *in = cJSON_Parse(buf);
    struct ft_err err = {0};
    assert_int_equal(results_drill_read(in, "test", d, &err), 0);
    return in;
}

static void test_written_document(void **state)
{
    (void)state;
    /* And the typed values are the document's. */
    struct results_drill_doc d;
    cJSON *in = fixture("drill-rr-kill.json", &d);
    assert_int_equal(d.nreps, 1);
    assert_int_equal(d.reps[0].nflows, 1);
    assert_string_equal(d.kind.s, "peer-kill");
    assert_int_equal(d.reps[0].flows[0].late.st, RESULTS_NULL);
    assert_true(d.reps[0].flows[0].issued.v == d.reps[0].flows[0].completed.v +
                                                   d.reps[0].flows[0].failed.v +
                                                   d.reps[0].flows[0].abandoned.v);
    results_drill_free(&d);
    cJSON_Delete(in);
}

/* A drill under load, as fabtop wrote it (quiet-vs-loaded with fail_bound_s 0.5, peer-kill):
 * its neighbours' figures read and write back. */
static void test_loaded_document(void **state)
{
    (void)state;
    struct results_drill_doc d;
    cJSON *in = fixture("drill-loaded-kill.json", &d);
    assert_int_equal(d.reps[0].nflows, 1); /* the probe; the neighbours are load */
    assert_int_equal(d.reps[0].load_st, RESULTS_SET);
    assert_int_equal(d.reps[0].nload, 2);
    assert_string_equal(d.reps[0].load[0].name.s, "bulk-out");
    assert_string_equal(d.reps[0].load[1].direction.s, "rx");
    for (int i = 0; i < 2; i++)
        assert_true(d.reps[0].load[i].before_gbps.v > d.reps[0].load[i].during_gbps.v);
    results_drill_free(&d);
    cJSON_Delete(in);
}

/* A rank-loss drill of an NCCL all-reduce (the stand-in NCCL): its ranks before and after,
 * how they were rebuilt, and no agent count (the victim was killed). */
static void test_rank_loss_document(void **state)
{
    (void)state;
    struct results_drill_doc d;
    cJSON *in = fixture("drill-rank-loss.json", &d);
    assert_string_equal(d.transport.s, "nccl");
    assert_string_equal(d.kind.s, "rank-loss");
    assert_int_equal(d.nreps, 2);
    for (int i = 0; i < d.nreps; i++) {
        const struct results_drill_flow *f = &d.reps[i].flows[0];
        assert_int_equal(d.reps[i].agent_st, RESULTS_ABSENT);
        assert_true(f->ranks_before.st == RESULTS_SET && f->ranks_before.v == 4);
        assert_true(f->ranks_after.st == RESULTS_SET && f->ranks_after.v == 2);
        assert_string_equal(f->rebuilt.s, "ncclCommShrink");
    }
    results_drill_free(&d);
    cJSON_Delete(in);
}

/* A verbs SEND ping-pong under two peer-stalls, as `fabtop drill -o` wrote it in the Soft-RoCE
 * VM (tests/vm/drill_verbs.sh): what saw each stall reads back, receiver-not-ready with the
 * port's rcvd_rnr_err moved, then the queue pair's retry exceeded. */
static void test_send_stall_document(void **state)
{
    (void)state;
    struct results_drill_doc d;
    cJSON *in = fixture("drill-verbs-send-stall.json", &d);
    assert_string_equal(d.transport.s, "verbs");
    assert_string_equal(d.kind.s, "peer-stall");
    assert_int_equal(d.nreps, 2);
    for (int i = 0; i < d.nreps; i++) {
        const struct results_drill_flow *f = &d.reps[i].flows[0];
        assert_int_equal(f->seen_st, RESULTS_SET);
        assert_int_equal(f->ndid, 2);
        assert_string_equal(f->did[1].s, "receiver-not-ready");
        assert_string_equal(f->queue_pair.s, "receiver-not-ready, then retry exceeded");
        assert_int_equal(f->counters_st, RESULTS_SET);
        double rnr = 0;
        for (int k = 0; k < f->ncounters; k++)
            if (!strcmp(f->counters[k].name.s, "rcvd_rnr_err"))
                rnr = f->counters[k].delta.v;
        assert_true(rnr > 0);
        assert_non_null(strstr(f->seen_text.s, "rcvd_rnr_err +"));
    }
    results_drill_free(&d);
    cJSON_Delete(in);
}

static void test_sparse(void **state)
{
    (void)state;
    roundtrip_text("{\"format\":\"fabtop-drill\",\"version\":1,\"mix\":null,\"complete\":false,"
                   "\"repetitions\":[{\"index\":0,\"flows\":[{\"name\":\"pp\",\"detect_s\":null,"
                   "\"requests\":{\"issued\":3,\"late\":null}}],\"agent\":null}],"
                   "\"summary\":{\"drills\":1,\"detect\":{\"min_s\":null,\"n\":0}}}");
}

/* "seen_by": what could see the fault and what did, the queue pair's view, the counters that
 * moved (or null: not read; absent: not verbs) round trip, in the writer's order. */
static void test_seen_by(void **state)
{
    (void)state;
    roundtrip_text(
        "{\"format\":\"fabtop-drill\",\"version\":1,\"complete\":true,\"repetitions\":[{"
        "\"index\":0,\"flows\":[{\"name\":\"vpp\",\"requests\":{\"issued\":9},\"seen_by\":{"
        "\"could\":[\"request deadline\",\"receiver-not-ready\"],\"did\":[\"request "
        "deadline\",\"receiver-not-ready\"],\"queue_pair\":\"receiver-not-ready\",\"text\":"
        "\"receiver-not-ready: rcvd_rnr_err +12 on rxe0/1\",\"counters_window_s\":3.01,"
        "\"counters\":[{\"object\":\"rxe0/1\",\"name\":\"rcvd_rnr_err\",\"delta\":12}]}},"
        "{\"name\":\"w\",\"seen_by\":{\"could\":[\"request deadline\"],\"did\":[],"
        "\"queue_pair\":\"saw nothing\",\"text\":\"nothing saw the fault\","
        "\"counters_window_s\":null,\"counters\":null}},"
        "{\"name\":\"tcp\",\"seen_by\":{\"could\":[\"request deadline\"],\"did\":[\"request "
        "deadline\"],\"queue_pair\":null,\"text\":\"the request's deadline did\"}}]}]}");
    cJSON *in =
        cJSON_Parse("{\"format\":\"fabtop-drill\",\"version\":1,\"repetitions\":[{\"flows\":[{"
                    "\"seen_by\":{\"could\":[\"request deadline\"],\"did\":[\"request deadline\"],"
                    "\"queue_pair\":\"saw nothing\",\"counters\":[]}},{\"name\":\"old\"}]}]}");
    struct results_drill_doc d;
    struct ft_err err = {0};
    assert_int_equal(results_drill_read(in, "test", &d, &err), 0);
    const struct results_drill_flow *f = &d.reps[0].flows[0];
    assert_int_equal(f->seen_st, RESULTS_SET);
    assert_int_equal(f->ncould, 1);
    assert_string_equal(f->did[0].s, "request deadline");
    assert_string_equal(f->queue_pair.s, "saw nothing");
    assert_int_equal(f->counters_st, RESULTS_SET);
    assert_int_equal(f->ncounters, 0);
    assert_int_equal(d.reps[0].flows[1].seen_st, RESULTS_ABSENT);
    assert_int_equal(d.reps[0].flows[1].counters_st, RESULTS_ABSENT);
    results_drill_free(&d);
    cJSON_Delete(in);
}

static void refused(const char *text, const char *needle)
{
    cJSON *in = cJSON_Parse(text);
    assert_non_null(in);
    struct results_drill_doc d;
    struct ft_err err = {0};
    assert_true(results_drill_read(in, "doc.json", &d, &err) < 0);
    if (!strstr(err.msg, needle))
        fprintf(stderr, "got: %s\n", err.msg);
    assert_non_null(strstr(err.msg, needle));
    cJSON_Delete(in);
}

static void test_refused(void **state)
{
    (void)state;
    refused("{\"format\":\"fabtop-results\",\"version\":1}", "not a fabtop drill document");
    refused("{\"format\":\"fabtop-drill\",\"version\":2}", "drill document version 2");
    refused("{\"format\":\"fabtop-drill\",\"version\":1,\"repetitions\":[{\"flows\":[{\"detect_s\":"
            "\"soon\"}]}]}",
            "repetitions[0].flows[0].detect_s is not a number or null");
    refused("{\"format\":\"fabtop-drill\",\"version\":1,\"fault\":[]}",
            "fault is not an object or null");
    refused("{\"format\":\"fabtop-drill\",\"version\":1,\"repetitions\":[{\"load\":{}}]}",
            "repetitions[0].load is not an array");
    refused("{\"format\":\"fabtop-drill\",\"version\":1,\"repetitions\":[{\"load\":[{"
            "\"before_gbps\":\"fast\"}]}]}",
            "repetitions[0].load[0].before_gbps is not a number or null");
    refused("{\"format\":\"fabtop-drill\",\"version\":1,\"repetitions\":[{\"flows\":[{"
            "\"seen_by\":{\"could\":\"deadline\"}}]}]}",
            "repetitions[0].flows[0].seen_by.could is not an array");
    refused("{\"format\":\"fabtop-drill\",\"version\":1,\"repetitions\":[{\"flows\":[{"
            "\"seen_by\":{\"did\":[1]}}]}]}",
            "repetitions[0].flows[0].seen_by.did is not an array of strings");
    refused("{\"format\":\"fabtop-drill\",\"version\":1,\"repetitions\":[{\"flows\":[{"
            "\"seen_by\":{\"counters\":[{\"delta\":\"many\"}]}}]}]}",
            "repetitions[0].flows[0].seen_by.counters[0].delta is not a number or null");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_document),
        cmocka_unit_test(test_loaded_document),
        cmocka_unit_test(test_rank_loss_document),
        cmocka_unit_test(test_send_stall_document),
        cmocka_unit_test(test_sparse),
        cmocka_unit_test(test_seen_by),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
