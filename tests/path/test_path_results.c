/* test_path_results: the run's "path" object (engine/results/results_path.h) built from
 * made-up runs: a quiet 30 us / loaded 8 ms TCP probe with neither end's qdisc holding more
 * than 2 packets is "between"; without the peer's counters "beyond"; a peer qdisc at 120
 * packets is "peer"; a 6 ms quiet minimum with a tp flow is wide area with the rule's
 * warning; the object round trips through the reader and writer byte for byte; compare
 * calls a different path class unfair. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/xalloc.h"
#include "engine/flow/mix.h"
#include "engine/results/compare.h"
#include "engine/results/results_json.h"
#include "engine/results/results_path.h"

/* A qdisc report as counters_set_report_json (deltas) writes it. */
static cJSON *qdisc_report(const char *obj, double qlen, double backlog)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"scope\":\"port-wide\",\"objects\":[],\"notes\":[],\"counters\":["
             "{\"source\":\"qdisc\",\"object\":\"%s\",\"name\":\"qlen\",\"kind\":\"gauge\","
             "\"peak\":%g,\"last\":0},"
             "{\"source\":\"qdisc\",\"object\":\"%s\",\"name\":\"backlog\",\"kind\":\"gauge\","
             "\"peak\":%g,\"last\":0},"
             "{\"source\":\"qdisc\",\"object\":\"%s\",\"name\":\"drops\",\"kind\":\"counter\","
             "\"delta\":3}]}",
             obj, qlen, obj, backlog, obj);
    return cJSON_Parse(buf);
}

/* A run with a foreground "probe" (TCP, half round trip latency) in quiet and loaded. */
static void make_run(struct results_run *r, double quiet_rtt, double loaded_rtt, double qmin_us,
                     double local_qlen)
{
    memset(r, 0, sizeof(*r));
    results_str_set(&r->format, "fabtop-results");
    results_num_set(&r->version, true, 1);
    r->npeers = 1;
    r->peers = xalloc_zero(2, sizeof(char *));
    r->peers[0] = xalloc_strdup("192.0.2.77");
    r->summary.st = RESULTS_SET;
    results_str_set(&r->summary.foreground, "probe");
    r->nphases = 2;
    r->phases_st = RESULTS_SET;
    r->phases = xalloc_zero(2, sizeof(*r->phases));
    const char *names[] = {"quiet", "loaded"};
    double rtts[] = {quiet_rtt, loaded_rtt};
    for (int p = 0; p < 2; p++) {
        struct results_phase *ph = &r->phases[p];
        results_str_set(&ph->name, names[p]);
        ph->counters_st = RESULTS_SET;
        ph->counters = qdisc_report("eth0 qdisc 8001: pfifo_fast", p ? local_qlen : 0, 1000);
        ph->flows_st = RESULTS_SET;
        ph->nflows = 1;
        ph->flows = xalloc_zero(1, sizeof(*ph->flows));
        struct results_flow *f = &ph->flows[0];
        results_str_set(&f->name, "probe");
        f->points_st = RESULTS_SET;
        f->npoints = 1;
        f->points = xalloc_zero(1, sizeof(*f->points));
        struct results_point *pt = &f->points[0];
        pt->tcp_st = RESULTS_SET;
        results_num_set(&pt->tcp.rtt_us, true, rtts[p]);
        results_num_set(&pt->tcp.retrans_segments, true, p ? 12 : 0);
        pt->latency_st = RESULTS_SET;
        results_str_set(&pt->latency.kind, "half_round_trip");
        results_num_set(&pt->latency.min, true, p ? 4000 : qmin_us / 2);
    }
}

static void fill(struct results_run *r, const char *cls_of_flow, const cJSON *peer_loaded)
{
    struct mix m;
    memset(&m, 0, sizeof(m));
    m.nflows = 1;
    snprintf(m.flows[0].name, sizeof(m.flows[0].name), "probe");
    snprintf(m.flows[0].class_name, sizeof(m.flows[0].class_name), "%s", cls_of_flow);
    struct results_path_in in = {.ttl = 64, .ttl_initial = 64, .same_leaf = -1};
    in.peer_counters[1] = peer_loaded;
    results_path_fill(r, &m, &in);
}

static void test_verdicts(void **state)
{
    (void)state;
    struct results_run r;
    cJSON *calm = qdisc_report("eth0 qdisc 1: htb", 2, 3000),
          *busy = qdisc_report("eth0 qdisc 1: htb", 120, 180000);
    make_run(&r, 30, 8000, 40, 2);
    fill(&r, "kv", calm);
    assert_string_equal(r.path.cls.s, "leaf");
    assert_true(r.path.min_rtt_us.v == 30); /* srtt 30 < 2 x 20 us */
    assert_string_equal(r.path.queue.s, "between");
    assert_non_null(strstr(r.path.verdict.s, "rose 267x"));
    assert_true(r.path.peer.peak_packets.v == 2);
    assert_int_equal(r.path.nwarnings, 0);
    /* Round trip, byte for byte. */
    cJSON *j = results_json_write_run(&r);
    char *a = cJSON_PrintUnformatted(j);
    struct results_doc d;
    assert_int_equal(results_json_read(j, "test", &d, NULL), 0);
    cJSON *j2 = results_json_write_run(&d.runs[0]);
    char *b = cJSON_PrintUnformatted(j2);
    assert_string_equal(a, b);
    free(a);
    free(b);
    cJSON_Delete(j);
    cJSON_Delete(j2);

    fill(&r, "kv", NULL);
    assert_string_equal(r.path.queue.s, "beyond");
    fill(&r, "kv", busy);
    assert_string_equal(r.path.queue.s, "peer");
    assert_non_null(strstr(r.path.verdict.s, "at the peer"));
    results_run_free(&r);

    make_run(&r, 30, 8000, 40, 150);
    fill(&r, "kv", calm);
    assert_string_equal(r.path.queue.s, "local");
    assert_non_null(
        strstr(r.path.verdict.s, "this host's qdisc (eth0 qdisc 8001: pfifo_fast: 150"));

    /* Far: 6 ms quiet minimum, a tp flow: wide area, warned; compare calls it unfair. */
    struct results_run far;
    make_run(&far, 6100, 6200, 6000, 0);
    fill(&far, "tp", calm);
    assert_string_equal(far.path.cls.s, "wan");
    assert_int_equal(far.path.nwarnings, 1);
    assert_non_null(
        strstr(far.path.warnings[0], "keep tightly coupled ranks inside one validated site"));
    struct compare_result cr;
    compare_runs(&r, &far, &cr);
    bool seen = false;
    for (int i = 0; i < cr.nconds; i++)
        if (!strcmp(cr.conds[i].field, "path class")) {
            seen = true;
            assert_int_equal(cr.conds[i].severity, COMPARE_UNFAIR);
            assert_string_equal(cr.conds[i].a, "leaf");
            assert_string_equal(cr.conds[i].b, "wan");
        }
    assert_true(seen);
    compare_free(&cr);
    results_run_free(&r);
    results_run_free(&far);
    results_doc_free(&d);
    cJSON_Delete(calm);
    cJSON_Delete(busy);
}

int main(void)
{
    const struct CMUnitTest t[] = {cmocka_unit_test(test_verdicts)};
    return cmocka_run_group_tests(t, NULL, NULL);
}
