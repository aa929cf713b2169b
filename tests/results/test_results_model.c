/* results model: the reader's refusals (another format, a newer version, a field of the
 * wrong type, an out-of-range size, a histogram that does not add up), each one line naming
 * the file and the field; what the typed fields hold for a document; making a document
 * reproducible in the model; the cJSON entry points going through the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/jsonutil.h"
#include "engine/results/results.h"
#include "engine/results/results_json.h"
#include "topology/topo_ceiling.h"
#include "topology/topo_load.h"
#include "tests/compare/docs.h"

static char dir[] = "/tmp/fabtop-results-model-XXXXXX";

static const char *write_text(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* The default compare document with one change made by the caller, saved as name. */
static const char *write_doc(const char *name, void (*edit)(cJSON *))
{
    struct doc_opts o;
    doc_defaults(&o);
    cJSON *d = doc_make(&o);
    if (edit)
        edit(d);
    char *t = cJSON_Print(d);
    cJSON_Delete(d);
    const char *p = write_text(name, t);
    free(t);
    return p;
}

/* Loading path fails with -EBADMSG and a message that starts with the path and holds want. */
static void refused(const char *path, const char *want)
{
    struct results_doc d;
    struct ft_err err = {0};
    assert_int_equal(results_doc_load(path, &d, &err), -EBADMSG);
    assert_int_equal(d.nruns, 0);
    assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
    if (!strstr(err.msg, want))
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
    assert_null(strchr(err.msg, '\n'));
    /* The cJSON entry point refuses it the same way. */
    cJSON *j = (cJSON *)1;
    struct ft_err err2 = {0};
    assert_int_equal(results_load(path, &j, &err2), -EBADMSG);
    assert_null(j);
    assert_string_equal(err.msg, err2.msg);
}

static void test_refuses_other_format(void **state)
{
    (void)state;
    const char *p = write_text("r.json", "{\"format\": \"fabtop-topology\", \"version\": 1}");
    refused(p, "format is \"fabtop-topology\"");
    refused(p, "this is a topology snapshot: open it with --input");
    p = write_text("mix.json", "{\"format\": \"fabtop-mix\", \"version\": 1, \"flows\": []}");
    refused(p, "format is \"fabtop-mix\"");
    refused(write_text("none.json", "{\"version\": 1}"), "no \"format\"");
    refused(write_text("arr.json", "[1, 2]"), "no \"format\"");
}

static void test_refuses_newer_version(void **state)
{
    (void)state;
    refused(write_text("v2.json", "{\"format\": \"fabtop-results\", \"version\": 2}"),
            "version 2 is newer than this fabtop reads (1)");
    refused(write_text("v99.json", "{\"format\": \"fabtop-results\", \"version\": 99}"),
            "version 99 is newer than this fabtop reads (1)");
    /* Not a version number at all: never converted to an integer. */
    refused(write_text("vhalf.json", "{\"format\": \"fabtop-results\", \"version\": 1.5}"),
            "version 1.5 is no version");
    refused(write_text("vhuge.json", "{\"format\": \"fabtop-results\", \"version\": 1e300}"),
            "version 1e+300 is no version");
    refused(write_text("vstr.json", "{\"format\": \"fabtop-results\", \"version\": \"1\"}"),
            "\"version\" is not a number");
}

static cJSON *flow0(cJSON *d)
{
    return cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "phases"), 0), "flows"), 0);
}

static void status_number(cJSON *d)
{
    cJSON_ReplaceItemInObject(flow0(d), "status", cJSON_CreateNumber(5));
}

static void huge_point(cJSON *d)
{
    cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(flow0(d), "points"), 0);
    cJSON_ReplaceItemInObject(pt, "size_bytes", cJSON_CreateNumber(9.3e18));
}

static void bad_histogram(cJSON *d)
{
    cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(flow0(d), "points"), 0);
    cJSON *h = NULL;
    assert_int_equal(jsonutil_parse("{\"count\": 3, \"min_ns\": 100, \"max_ns\": 100, "
                                    "\"sum_ns\": 300, \"sumsq_ns2\": 30000, \"overflow\": 0, "
                                    "\"buckets\": [[100, 2]]}",
                                    strlen("{\"count\": 3, \"min_ns\": 100, \"max_ns\": 100, "
                                           "\"sum_ns\": 300, \"sumsq_ns2\": 30000, \"overflow\": "
                                           "0, \"buckets\": [[100, 2]]}"),
                                    "h", &h, NULL),
                     0);
    cJSON_AddItemToObject(pt, "histogram", h);
}

static void phases_object(cJSON *d)
{
    cJSON_ReplaceItemInObject(d, "phases", cJSON_CreateObject());
}

static void test_refuses_bad_fields(void **state)
{
    (void)state;
    refused(write_doc("status.json", status_number),
            "phases[0].flows[0].status is not a string or null");
    refused(write_doc("huge.json", huge_point),
            "phases[0].flows[0].points[0].size_bytes = 9.3e+18 is out of range 1-17179869184 "
            "(bytes)");
    refused(write_doc("hist.json", bad_histogram),
            "phases[0].flows[0].points[0].histogram is not a histogram that adds up");
    refused(write_doc("phases.json", phases_object), "phases is not an array");
}

static void test_typed_fields(void **state)
{
    (void)state;
    struct results_doc d;
    struct ft_err err = {0};
    assert_int_equal(results_doc_load(write_doc("ok.json", NULL), &d, &err), 0);
    assert_int_equal(d.nruns, 1);
    const struct results_run *r = &d.runs[0];
    assert_string_equal(r->format.s, RESULTS_FORMAT);
    assert_int_equal(r->version.st, RESULTS_SET);
    assert_string_equal(r->host_local.s, "node1");
    assert_int_equal(r->npeers, 1);
    assert_int_equal(r->nphases, 1);
    assert_string_equal(r->phases[0].name.s, "loaded");
    const struct results_flow *f = &r->phases[0].flows[0];
    assert_string_equal(f->name.s, "probe");
    assert_string_equal(f->status.s, "ok");
    assert_int_equal(f->npoints, 1);
    const struct results_point *p = &f->points[0];
    assert_int_equal(p->size_bytes.st, RESULTS_SET);
    assert_true(p->size_bytes.v == 4096);
    assert_int_equal(p->latency_st, RESULTS_SET);
    assert_string_equal(p->latency.kind.s, "half_round_trip");
    assert_int_equal(p->latency.count.st, RESULTS_ABSENT); /* not in this sparse document */
    assert_int_equal(p->ops_per_s.st, RESULTS_ABSENT);
    assert_int_equal(f->timeline_st, RESULTS_ABSENT);
    assert_null(p->histogram);
    assert_non_null(f->conditions);
    assert_int_equal(r->topology_st, RESULTS_SET);
    double g;
    bool sim;
    assert_true(results_point_goodput(f, p, &g, &sim));
    assert_false(sim);
    results_doc_free(&d);
}

/* A simulated flow's goodput comes from its conditions; reproducible nulls the times. */
static void test_reproducible_and_sim_goodput(void **state)
{
    (void)state;
    const char *p = write_text(
        "sim.json",
        "{\"format\": \"fabtop-results\", \"version\": 1, \"started_at\": \"x\", "
        "\"duration_s\": 3, \"phases\": [{\"name\": \"loaded\", \"duration_s\": 1, "
        "\"counters\": {\"a\": 1}, \"flows\": [{\"name\": \"f\", \"transport\": \"sim\", "
        "\"setup_s\": 0.1, \"points\": [{\"size_bytes\": 64, \"goodput_gbps\": 1}], "
        "\"timeline\": {\"t\": \"s\", \"t_s\": [0.5]}, \"conditions\": {\"sim\": {\"results\": "
        "{\"goodput_gbps\": 97.5}}}}]}], \"events\": [\"  1.250s b\", \"  0.500s a\"]}\n");
    struct results_doc d;
    struct ft_err err = {0};
    assert_int_equal(results_doc_load(p, &d, &err), 0);
    const struct results_flow *f = &d.runs[0].phases[0].flows[0];
    double g;
    bool sim;
    assert_true(results_point_goodput(f, &f->points[0], &g, &sim));
    assert_true(sim);
    assert_true(g == 97.5);
    results_doc_make_reproducible(&d);
    cJSON *w = results_json_write(&d);
    char *t = cJSON_PrintUnformatted(w);
    assert_string_equal(
        t, "{\"format\":\"fabtop-results\",\"version\":1,\"started_at\":null,\"duration_s\":null,"
           "\"phases\":[{\"name\":\"loaded\",\"duration_s\":null,\"counters\":null,\"flows\":[{"
           "\"name\":\"f\",\"transport\":\"sim\",\"setup_s\":null,\"points\":[{\"size_bytes\":64,"
           "\"goodput_gbps\":null}],\"timeline\":null,\"conditions\":{\"sim\":{\"results\":{"
           "\"goodput_gbps\":97.5}}}}]}],\"events\":[\"a\",\"b\"],\"reproducible\":\"fabtop run "
           "--reproducible: wall-clock times and durations, the rates and timelines computed "
           "from them, the events' times (events sorted) and the host's counters are null\"}");
    free(t);
    /* The cJSON entry point does the same in place. */
    cJSON *j = NULL;
    assert_int_equal(results_load(p, &j, &err), 0);
    results_make_reproducible(j);
    char *t2 = cJSON_PrintUnformatted(j);
    char *t3 = cJSON_PrintUnformatted(w);
    assert_string_equal(t2, t3);
    free(t2);
    free(t3);
    cJSON_Delete(j);
    cJSON_Delete(w);
    results_doc_free(&d);
}

/* Nulls where objects and arrays go are kept as nulls: read -> write gives the same text. */
static void test_nulls_kept(void **state)
{
    (void)state;
    static const char text[] =
        "{\"format\":\"fabtop-results\",\"version\":1,\"hosts\":{\"local\":\"n\","
        "\"peers\":null},\"versions\":null,\"conditions\":{\"sim\":null,\"tcp_ecn\":null,"
        "\"netdev_mtu\":null},\"phases\":[{\"name\":\"loaded\",\"flows\":[{\"name\":\"f\","
        "\"points\":null,\"timeline\":null}]},{\"name\":\"quiet\",\"flows\":null}],"
        "\"summary\":null,\"events\":null,\"topology\":null}";
    cJSON *j = NULL;
    struct ft_err err = {0};
    assert_int_equal(jsonutil_parse(text, strlen(text), "nulls", &j, &err), 0);
    struct results_doc d;
    assert_int_equal(results_json_read(j, "nulls.json", &d, &err), 0);
    cJSON_Delete(j);
    assert_int_equal(d.runs[0].versions_st, RESULTS_NULL);
    assert_int_equal(d.runs[0].phases[0].flows[0].points_st, RESULTS_NULL);
    cJSON *w = results_json_write(&d);
    char *t = cJSON_PrintUnformatted(w);
    assert_string_equal(t, text);
    free(t);
    cJSON_Delete(w);
    results_doc_free(&d);
}

/* A flow's path ceiling (results_model.h struct results_ceiling): a hand-written document
 * with one reads and writes back byte for byte; null stays null; a ceiling built from
 * topo_ceiling carries every term; a bad field is refused naming it; percent of ceiling. */
static void test_ceiling_field(void **state)
{
    (void)state;
    static const char text[] =
        "{\"format\":\"fabtop-results\",\"version\":1,\"phases\":[{\"name\":\"loaded\","
        "\"flows\":[{\"name\":\"f\",\"transport\":\"verbs\",\"points\":[{\"size_bytes\":"
        "1048576,\"measured\":true,\"goodput_gbps\":90}],\"ceiling\":{\"path\":\"mlx5_0 port 1, "
        "RoCE v2, 1 MiB messages\",\"gbps\":98.0359,\"narrowest\":\"port payload\",\"terms\":"
        "[{\"name\":\"path MTU\",\"kind\":\"size\",\"value\":4096,\"unit\":\"B\",\"detail\":"
        "\"payload bytes per packet\"},{\"name\":\"port payload\",\"kind\":\"limit\",\"value\":"
        "98.0359,\"unit\":\"Gb/s\"}]},\"conditions\":{}},{\"name\":\"g\",\"ceiling\":null},"
        "{\"name\":\"h\",\"ceiling\":{\"path\":\"p\",\"gbps\":null,\"terms\":null}}]}]}";
    cJSON *j = NULL;
    struct ft_err err = {0};
    assert_int_equal(jsonutil_parse(text, strlen(text), "ceiling", &j, &err), 0);
    struct results_doc d;
    assert_int_equal(results_json_read(j, "ceiling.json", &d, &err), 0);
    cJSON_Delete(j);
    const struct results_flow *f = &d.runs[0].phases[0].flows[0];
    assert_int_equal(f->ceiling.st, RESULTS_SET);
    assert_true(f->ceiling.gbps.v == 98.0359);
    assert_string_equal(f->ceiling.narrowest.s, "port payload");
    assert_int_equal(f->ceiling.nterms, 2);
    assert_string_equal(f->ceiling.terms[1].kind.s, "limit");
    assert_int_equal(f->ceiling.terms[1].detail.st, RESULTS_ABSENT);
    /* 90 / 98.0359 = 91.80 % */
    double pct = results_ceiling_percent(&f->ceiling, 90);
    assert_true(fabs(pct - 91.8036) < 1e-3);
    assert_int_equal(d.runs[0].phases[0].flows[1].ceiling.st, RESULTS_NULL);
    assert_true(isnan(results_ceiling_percent(&d.runs[0].phases[0].flows[1].ceiling, 90)));
    assert_true(isnan(results_ceiling_percent(&d.runs[0].phases[0].flows[2].ceiling, 90)));
    cJSON *w = results_json_write(&d);
    char *t = cJSON_PrintUnformatted(w);
    assert_string_equal(t, text);
    free(t);
    cJSON_Delete(w);

    /* From topo_ceiling: every term goes in, in order, with its kind's name. */
    struct topo_ceil_wire wire = {
        .proto = TOPO_CEIL_ROCE_V2, .op = TOPO_CEIL_WRITE, .mtu = 4096, .msg_bytes = 1 << 20};
    struct topo_ceiling c = {.narrowest = -1};
    double frac;
    assert_int_equal(topo_ceiling_wire_fraction(&wire, &frac, &c), 0);
    topo_ceiling_add(&c, "port payload", TOPO_CEIL_LIMIT, 100 * frac, "Gb/s", "100 x %.6f", frac);
    topo_ceiling_settle(&c);
    snprintf(c.path, sizeof(c.path), "synthetic");
    struct results_flow *g = &d.runs[0].phases[0].flows[1];
    results_ceiling_set(&g->ceiling, &c);
    assert_int_equal(g->ceiling.nterms, c.nterms);
    assert_true(fabs(g->ceiling.gbps.v - 98.03587) < 1e-4);
    assert_string_equal(g->ceiling.narrowest.s, "port payload");
    assert_string_equal(g->ceiling.terms[0].kind.s, "size");
    w = results_json_write(&d);
    t = cJSON_PrintUnformatted(w);
    cJSON_Delete(w);
    results_doc_free(&d);
    /* ... and that document too reads back and writes out byte for byte */
    assert_int_equal(jsonutil_parse(t, strlen(t), "ceiling2", &j, &err), 0);
    assert_int_equal(results_json_read(j, "ceiling2.json", &d, &err), 0);
    cJSON_Delete(j);
    w = results_json_write(&d);
    char *t2 = cJSON_PrintUnformatted(w);
    assert_string_equal(t2, t);
    free(t2);
    free(t);
    cJSON_Delete(w);
    results_doc_free(&d);

    /* refusals name the field */
    static const struct {
        const char *doc, *want;
    } bad[] = {
        {"{\"format\":\"fabtop-results\",\"version\":1,\"phases\":[{\"name\":\"l\",\"flows\":"
         "[{\"name\":\"f\",\"ceiling\":{\"gbps\":\"fast\"}}]}]}",
         "phases[0].flows[0].ceiling.gbps"},
        {"{\"format\":\"fabtop-results\",\"version\":1,\"phases\":[{\"name\":\"l\",\"flows\":"
         "[{\"name\":\"f\",\"ceiling\":{\"terms\":[{\"value\":\"x\"}]}}]}]}",
         "phases[0].flows[0].ceiling.terms[0].value"},
        {"{\"format\":\"fabtop-results\",\"version\":1,\"phases\":[{\"name\":\"l\",\"flows\":"
         "[{\"name\":\"f\",\"ceiling\":[1]}]}]}",
         "phases[0].flows[0].ceiling"},
        {"{\"format\":\"fabtop-results\",\"version\":1,\"phases\":[{\"name\":\"l\",\"flows\":"
         "[{\"name\":\"f\",\"ceiling\":{\"terms\":[3]}}]}]}",
         "phases[0].flows[0].ceiling.terms[0]"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(jsonutil_parse(bad[i].doc, strlen(bad[i].doc), "bad", &j, &err), 0);
        struct ft_err e = {0};
        assert_true(results_json_read(j, "bad.json", &d, &e) < 0);
        cJSON_Delete(j);
        if (!strstr(e.msg, bad[i].want))
            fail_msg("'%s' lacks '%s'", e.msg, bad[i].want);
    }
}

/* A real run: host<->GPU copies on one H200 (bench/device/h200x1-2026-12-02: the document
 * and the node's topology, recorded without the ceiling by an older fabtop). Filled from that
 * topology: one lane "GPU 0", no PCI address recorded, no CUDA index in the model (fabtop run
 * loads it without the GPU libraries), one GPU: that one. Its Gen5 x16 host path 63.015 GB/s
 * x 8 x 256/280 = 460.913 Gb/s; h2d 50.49 GB/s x 8 = 403.9 Gb/s: 87.6 % of it. */
static void test_ceiling_of_device_copies(void **state)
{
    (void)state;
    const char *src = getenv("FABTOP_SRC");
    char doc[1024], topo[1024];
    snprintf(doc, sizeof(doc), "%s/bench/device/h200x1-2026-12-02/copies.json", src ? src : ".");
    snprintf(topo, sizeof(topo), "%s/bench/device/h200x1-2026-12-02/topo.json", src ? src : ".");
    struct results_doc d;
    struct ft_err err = {0};
    if (results_doc_load(doc, &d, &err) < 0)
        fail_msg("%s", err.msg);
    struct topo_load_opts lo = {.input = topo, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m = NULL;
    if (topo_load(&lo, &m, &err) < 0)
        fail_msg("%s", err.msg);
    struct mix_flow s = {.op = MIX_OP_COPY};
    snprintf(s.transport, sizeof(s.transport), "nccl");
    struct results_flow *f = &d.runs[0].phases[0].flows[0];
    assert_int_equal(f->ceiling.st, RESULTS_ABSENT);
    results_flow_ceiling(f, &s, m);
    assert_int_equal(f->ceiling.st, RESULTS_SET);
    assert_true(fabs(f->ceiling.gbps.v - 460.913) < 1e-3);
    assert_string_equal(f->ceiling.path.s, "GPU0 <-> host memory, PCIe, at once");
    const cJSON *cp = cJSON_GetObjectItem(f->points[0].figures, "copy");
    double h2d;
    assert_true(jsonutil_num(cp, "h2d_GBps", &h2d));
    assert_true(fabs(results_ceiling_percent(&f->ceiling, h2d * 8) - 87.6) < 0.1);
    /* the same flow as TCP or verbs: no such path in its conditions, no ceiling */
    struct results_flow *g = &d.runs[0].phases[0].flows[1];
    snprintf(s.transport, sizeof(s.transport), "verbs");
    results_flow_ceiling(g, &s, m);
    assert_int_equal(g->ceiling.st, RESULTS_ABSENT);
    /* and the document with its ceiling reads back and writes out byte for byte */
    cJSON *w = results_json_write(&d);
    char *t = cJSON_PrintUnformatted(w);
    cJSON_Delete(w);
    results_doc_free(&d);
    cJSON *j = NULL;
    assert_int_equal(jsonutil_parse(t, strlen(t), "copies2", &j, &err), 0);
    assert_int_equal(results_json_read(j, "copies2.json", &d, &err), 0);
    cJSON_Delete(j);
    w = results_json_write(&d);
    char *t2 = cJSON_PrintUnformatted(w);
    assert_string_equal(t2, t);
    free(t);
    free(t2);
    cJSON_Delete(w);
    results_doc_free(&d);
    topo_model_free(m);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refuses_other_format),
        cmocka_unit_test(test_refuses_newer_version),
        cmocka_unit_test(test_refuses_bad_fields),
        cmocka_unit_test(test_typed_fields),
        cmocka_unit_test(test_reproducible_and_sim_goodput),
        cmocka_unit_test(test_nulls_kept),
        cmocka_unit_test(test_ceiling_field),
        cmocka_unit_test(test_ceiling_of_device_copies),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
