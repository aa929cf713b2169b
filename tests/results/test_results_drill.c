/* test_results_drill: the fabtop-drill document's reader and writer (results_drill.h): a
 * document `fabtop drill -o` wrote reads back and writes out byte for byte; so does a sparse
 * one (absent members, nulls), and a rank-loss drill's; malformed ones are refused with the key
 * named. */
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

static void test_sparse(void **state)
{
    (void)state;
    roundtrip_text("{\"format\":\"fabtop-drill\",\"version\":1,\"mix\":null,\"complete\":false,"
                   "\"repetitions\":[{\"index\":0,\"flows\":[{\"name\":\"pp\",\"detect_s\":null,"
                   "\"requests\":{\"issued\":3,\"late\":null}}],\"agent\":null}],"
                   "\"summary\":{\"drills\":1,\"detect\":{\"min_s\":null,\"n\":0}}}");
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_document),
        cmocka_unit_test(test_loaded_document),
        cmocka_unit_test(test_rank_loss_document),
        cmocka_unit_test(test_sparse),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
