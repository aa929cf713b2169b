/* test_ctr_synth: counter semantics on trees the test writes and changes between samples:
 * 4-byte words shown as bytes, rates over the interval (a fake clock), 32- and 64-bit
 * wraps, saturation at every IB width (and the 32-or-64-bit data counters), resets
 * (a decrease), counters that vanish and come back, unreadable files, "N/A (no PMA)",
 * gauges vs counters, slow (firmware) counters read at their own period, the port filter,
 * JSON with n/a as null, and the ports a test uses taken from the topology. */
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
#include "tests/counters/ctr_test.h"
#include "topology/topo_model.h"

#define IB  "sys/class/infiniband/mlx5_0/ports/1/counters/"
#define HWC "sys/class/infiniband/mlx5_0/ports/1/hw_counters/"
#define NET "sys/class/net/eth0/statistics/"

static char root[256];

static void put(const char *rel, const char *text)
{
    tree_file(root, rel, text);
}

static void put_u64(const char *rel, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    put(rel, buf);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/fabtop-ctr-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    put(IB "port_xmit_data", "100");
    put(IB "port_rcv_data", "0");
    put(IB "port_xmit_wait", "10");
    put(IB "symbol_error", "0");
    put(IB "link_downed", "0");
    put(IB "local_link_integrity_errors", "0");
    put(IB "port_xmit_discards", "0");
    put(HWC "out_of_sequence", "4294967290");
    put(HWC "np_cnp_sent", "7");
    put(HWC "lifespan", "10");
    put(HWC "some_new_firmware_drops", "1");
    put(NET "rx_bytes", "1000");
    put(NET "tx_bytes", "18446744073709551605"); /* 2^64 - 11 */
    put(NET "rx_dropped", "0");
    tree_file(root, "proc/net/snmp",
              "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens CurrEstab RetransSegs\n"
              "Tcp: 1 200 120000 -1 10 5 100");
    tree_file(root, "proc/net/netstat",
              "TcpExt: TCPTimeouts SomethingNew\n"
              "TcpExt: 3 0");
    /* Device-wide hw_counters (mlx5 in switchdev mode), and a Soft-RoCE device. */
    put("sys/class/infiniband/mlx5_0/hw_counters/np_cnp_sent", "3");
    put("sys/class/infiniband/rxe0/ports/1/hw_counters/ack_deferred", "0");
    put("sys/class/infiniband/rxe0/ports/1/hw_counters/duplicate_request", "9");
    put("sys/class/infiniband/rxe0/ports/1/hw_counters/lifespan", "10");
    fake_now_ns = 1000000000ull;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tree_remove(root);
    return 0;
}

static struct counters_set *open_set(bool snmp)
{
    struct counters_opts o = {.sys_root = root,
                              .proc_root = root,
                              .with_snmp = snmp,
                              .slow_period_s = 1.0,
                              .clock_ns = fake_clock};
    struct counters_set *s;
    struct ft_err err = {0};
    if (counters_set_open(&o, &s, &err) < 0)
        fail_msg("counters_set_open: %s", err.msg);
    return s;
}

static void step(struct counters_set *s, double secs)
{
    fake_now_ns += (uint64_t)(secs * 1e9);
    assert_int_equal(counters_set_sample(s), 0);
}

static void test_discovery(void **state)
{
    (void)state;
    struct counters_set *s = open_set(true);
    /* lifespan is a setting, not a counter. */
    assert_null(ctr_find(s, "mlx5_0/1", "lifespan"));
    assert_int_equal(ctr_count_object(s, "mlx5_0/1"), 7 + 3);
    assert_int_equal(ctr_count_object(s, "eth0"), 3);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", "some_new_firmware_drops");
    /* Unknown names are still shown, by name, with a guessed group and no width. */
    assert_false(v->known);
    assert_int_equal(v->source, COUNTERS_SRC_HW);
    assert_int_equal(v->group, COUNTERS_LOSS);
    assert_int_equal(v->behaviour, COUNTERS_WIDTH_UNKNOWN);
    v = ctr_get(s, "mlx5_0/1", "out_of_sequence");
    assert_true(v->known);
    assert_int_equal(v->width, 32);
    assert_int_equal(v->behaviour, COUNTERS_WRAPS);
    assert_int_equal(ctr_get(s, "mlx5_0/1", "np_cnp_sent")->width, 64);
    assert_int_equal(ctr_get(s, "mlx5_0/1", "symbol_error")->behaviour, COUNTERS_SATURATES);
    assert_int_equal(ctr_get(s, "Tcp", "CurrEstab")->kind, COUNTERS_GAUGE);
    assert_int_equal(ctr_get(s, "Tcp", "RetransSegs")->kind, COUNTERS_COUNTER);
    assert_int_equal(ctr_get(s, "mlx5_0", "np_cnp_sent")->source, COUNTERS_SRC_HW);
    /* One name, two providers: a 32-bit Q counter on mlx5, an atomic64 on rxe. */
    assert_int_equal(ctr_count_object(s, "rxe0/1"), 2);
    assert_int_equal(ctr_get(s, "rxe0/1", "duplicate_request")->width, 64);
    assert_true(ctr_get(s, "rxe0/1", "duplicate_request")->known);
    const char *const *objs;
    int n = counters_set_objects(s, &objs);
    bool rxe = false;
    for (int i = 0; i < n; i++)
        rxe |= !strcmp(objs[i], "rxe0/1 (RDMA port, rxe)");
    assert_true(rxe);
    counters_set_close(s);
}

static void test_words_rates_and_deltas(void **state)
{
    (void)state;
    struct counters_set *s = open_set(false);
    step(s, 0);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", "port_xmit_data");
    assert_true(v->valid & COUNTERS_V_VALUE);
    assert_false(v->valid & COUNTERS_V_RATE); /* one sample: no rate yet */
    assert_near(v->value, 400, 0);            /* 100 words = 400 bytes */
    assert_string_equal(v->unit, "bytes");
    counters_set_mark(s);
    assert_near(v->delta, 0, 0);
    put(IB "port_xmit_data", "350");
    put(NET "rx_bytes", "6000");
    step(s, 0.5);
    /* Fast counters move at once; the IB counters (firmware) wait for their 1 s period. */
    v = ctr_get(s, "eth0", "rx_bytes");
    assert_true(v->valid & COUNTERS_V_RATE);
    assert_near(v->rate, 10000, 1e-6); /* 5000 bytes in 0.5 s */
    assert_near(v->delta, 5000, 0);
    v = ctr_get(s, "mlx5_0/1", "port_xmit_data");
    assert_near(v->value, 400, 0);
    step(s, 0.5);
    assert_near(v->value, 1400, 0);
    assert_near(v->rate, 1000, 1e-6); /* 250 words = 1000 bytes over its own 1 s */
    assert_near(v->delta, 1000, 0);
    /* A new mark restarts the deltas. */
    counters_set_mark(s);
    assert_near(v->delta, 0, 0);
    assert_near(ctr_get(s, "eth0", "rx_bytes")->delta, 0, 0);
    counters_set_close(s);
}

static void test_wrap(void **state)
{
    (void)state;
    struct counters_set *s = open_set(false);
    step(s, 0);
    counters_set_mark(s);
    put(HWC "out_of_sequence", "5"); /* 32-bit Q counter: 4294967290 -> 5 is +11 */
    put(NET "tx_bytes", "5");        /* 64-bit: 2^64 - 11 -> 5 is +16 */
    step(s, 1.0);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", "out_of_sequence");
    assert_false(v->reset);
    assert_true(v->valid & COUNTERS_V_RATE);
    assert_near(v->rate, 11, 1e-9);
    assert_near(v->delta, 11, 0);
    v = ctr_get(s, "eth0", "tx_bytes");
    assert_false(v->reset);
    assert_near(v->delta, 16, 0);
    assert_near(v->rate, 16, 1e-9);
    counters_set_close(s);
}

static void test_reset(void **state)
{
    (void)state;
    put(HWC "out_of_sequence", "1000");
    struct counters_set *s = open_set(false);
    step(s, 0);
    counters_set_mark(s);
    put(HWC "out_of_sequence", "1500");
    step(s, 1.0);
    /* Cleared (a decrease far from the top of the width): a reset, not a wrap. */
    put(HWC "out_of_sequence", "20");
    step(s, 1.0);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", "out_of_sequence");
    assert_true(v->reset);
    assert_true(v->reset_since_mark);
    assert_false(v->valid & COUNTERS_V_RATE); /* no negative or huge rate */
    assert_true(v->valid & COUNTERS_V_DELTA);
    assert_near(v->delta, 500 + 20, 0); /* the growth before, plus the count since zero */
    put(HWC "out_of_sequence", "30");
    step(s, 1.0);
    assert_false(v->reset);
    assert_true(v->reset_since_mark);
    assert_near(v->rate, 10, 1e-9);
    assert_near(v->delta, 530, 0);
    cJSON *j = counters_set_json(s, true);
    const cJSON *e;
    bool seen = false;
    cJSON_ArrayForEach(e, j)
    {
        if (strcmp(jsonutil_str(e, "name"), "out_of_sequence"))
            continue;
        seen = true;
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "reset")));
        assert_null(cJSON_GetObjectItem(e, "rate")); /* deltas only */
    }
    assert_true(seen);
    cJSON_Delete(j);
    counters_set_close(s);
}

/* A saturating counter at 2^w - 1 says "saturated": no rate (not a healthy 0), no delta. */
static void check_saturation(const char *name, int width)
{
    char rel[256];
    snprintf(rel, sizeof(rel), IB "%s", name);
    uint64_t max = width == 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
    put_u64(rel, max - 1);
    struct counters_set *s = open_set(false);
    step(s, 0);
    counters_set_mark(s);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", name);
    assert_false(v->saturated);
    put_u64(rel, max);
    step(s, 1.0);
    if (!v->saturated)
        fail_msg("%s at 2^%d-1 is not saturated", name, width);
    assert_true(v->valid & COUNTERS_V_VALUE);
    assert_false(v->valid & COUNTERS_V_RATE);
    assert_false(v->valid & COUNTERS_V_DELTA);
    step(s, 1.0); /* still stuck: still no rate of 0 */
    assert_true(v->saturated);
    assert_false(v->valid & COUNTERS_V_RATE);
    /* perfquery -R clears it: counting resumes, the delta is known again from the next mark */
    put_u64(rel, 2);
    step(s, 1.0);
    assert_false(v->saturated);
    assert_true(v->reset);
    assert_false(v->valid & COUNTERS_V_DELTA);
    counters_set_mark(s);
    put_u64(rel, 5);
    step(s, 1.0);
    assert_near(v->delta, 3.0 * (strstr(name, "_data") ? 4 : 1), 0);
    assert_true(v->valid & COUNTERS_V_RATE);
    counters_set_close(s);
    put(rel, "0");
}

static void test_saturation_each_width(void **state)
{
    (void)state;
    check_saturation("local_link_integrity_errors", 4);
    check_saturation("link_downed", 8);
    check_saturation("symbol_error", 16);
    check_saturation("port_xmit_discards", 16);
    check_saturation("port_xmit_wait", 32);
    /* The data counters are 32-bit PortCounters or 64-bit PortCountersExtended under the
     * same file name: both ceilings count. */
    check_saturation("port_xmit_data", 32);
    check_saturation("port_rcv_data", 64);
}

static void test_value_wider_than_width(void **state)
{
    (void)state;
    /* 2^32 + 1 words: only the 64-bit extended counter can hold it. */
    put(IB "port_xmit_data", "4294967297");
    /* A 16-bit error counter above 65535 means this device is wider than documented:
     * never call it saturated or wrapped then. */
    put(IB "symbol_error", "70000");
    struct counters_set *s = open_set(false);
    step(s, 0);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", "port_xmit_data");
    assert_int_equal(v->width, 64);
    assert_false(v->saturated);
    assert_near(v->value, 4294967297.0 * 4, 0);
    v = ctr_get(s, "mlx5_0/1", "symbol_error");
    assert_false(v->saturated);
    assert_int_equal(v->width, 0);
    assert_int_equal(v->behaviour, COUNTERS_WIDTH_UNKNOWN);
    counters_set_close(s);
}

static void test_vanish_and_unreadable(void **state)
{
    (void)state;
    put(IB "port_rcv_data", "N/A (no PMA)");
    tree_unreadable(root, HWC "broken_counter"); /* read() fails (EISDIR) */
    struct counters_set *s = open_set(false);
    step(s, 0);
    counters_set_mark(s);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", "port_rcv_data");
    assert_int_equal(v->valid, 0); /* n/a, never 0 */
    v = ctr_get(s, "mlx5_0/1", "broken_counter");
    assert_int_equal(v->valid, 0);
    /* rx_dropped vanishes between samples (a device going away). */
    char path[512];
    snprintf(path, sizeof(path), "%s/" NET "rx_dropped", root);
    assert_int_equal(unlink(path), 0);
    step(s, 0.5);
    v = ctr_get(s, "eth0", "rx_dropped");
    assert_int_equal(v->valid, 0);
    cJSON *j = counters_set_json(s, false);
    const cJSON *e;
    int nulls = 0;
    cJSON_ArrayForEach(e, j)
    {
        const char *n = jsonutil_str(e, "name");
        if (!strcmp(n, "rx_dropped") || !strcmp(n, "port_rcv_data") ||
            !strcmp(n, "broken_counter")) {
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "value")));
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "rate")));
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "delta")));
            nulls++;
        }
    }
    assert_int_equal(nulls, 3);
    cJSON_Delete(j);
    /* It comes back: a value again, but its growth while away is unknown until the next
     * mark, and the first interval has no rate. */
    put(NET "rx_dropped", "42");
    step(s, 0.5);
    assert_true(v->valid & COUNTERS_V_VALUE);
    assert_near(v->value, 42, 0);
    assert_false(v->valid & COUNTERS_V_RATE);
    assert_false(v->valid & COUNTERS_V_DELTA);
    put(NET "rx_dropped", "43");
    step(s, 0.5);
    assert_near(v->rate, 2, 1e-9);
    assert_false(v->valid & COUNTERS_V_DELTA);
    counters_set_mark(s);
    assert_true(v->valid & COUNTERS_V_DELTA);
    counters_set_close(s);
}

static void test_gauges(void **state)
{
    (void)state;
    struct counters_set *s = open_set(true);
    step(s, 0);
    counters_set_mark(s);
    const struct counters_value *g = ctr_get(s, "Tcp", "CurrEstab");
    assert_near(g->value, 5, 0);
    assert_near(ctr_get(s, "Tcp", "MaxConn")->value, -1, 0);
    tree_file(root, "proc/net/snmp",
              "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens CurrEstab RetransSegs\n"
              "Tcp: 1 200 120000 -1 14 9 160");
    step(s, 0.5);
    tree_file(root, "proc/net/snmp",
              "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens CurrEstab RetransSegs\n"
              "Tcp: 1 200 120000 -1 15 3 160");
    step(s, 0.5);
    /* A gauge going down is a value, not a reset; it has no rate and no delta. */
    assert_near(g->value, 3, 0);
    assert_false(g->reset);
    assert_false(g->valid & (COUNTERS_V_RATE | COUNTERS_V_DELTA));
    assert_true(g->valid & COUNTERS_V_PEAK);
    assert_near(g->peak, 9, 0);
    const struct counters_value *c = ctr_get(s, "Tcp", "RetransSegs");
    assert_near(c->delta, 60, 0);
    assert_near(c->rate, 0, 0); /* moved 0 in the last interval: a real, known 0 */
    assert_true(c->valid & COUNTERS_V_RATE);
    assert_near(ctr_get(s, "Tcp", "ActiveOpens")->rate, 2, 1e-9);
    /* In the report, unknown counters that did not move are left out of deltas. */
    cJSON *r = counters_set_report_json(s, true);
    bool saw_new = false, saw_timeouts = false;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(r, "counters"))
    {
        saw_new |= !strcmp(jsonutil_str(e, "name"), "SomethingNew");
        saw_timeouts |= !strcmp(jsonutil_str(e, "name"), "TCPTimeouts");
        if (!strcmp(jsonutil_str(e, "name"), "CurrEstab")) {
            double peak;
            assert_true(jsonutil_num(e, "peak", &peak));
            assert_near(peak, 9, 0);
            assert_null(cJSON_GetObjectItem(e, "delta"));
        }
    }
    assert_false(saw_new);
    assert_true(saw_timeouts);
    assert_non_null(strstr(jsonutil_str(r, "scope"), "port-wide"));
    cJSON_Delete(r);
    counters_set_close(s);
}

static void test_slow_period(void **state)
{
    (void)state;
    struct counters_set *s = open_set(false);
    step(s, 0);
    put(IB "port_xmit_wait", "20");
    put(HWC "np_cnp_sent", "17");
    put(NET "rx_bytes", "2000");
    for (int i = 0; i < 9; i++) {
        step(s, 0.1);
        /* 10 Hz sampling reads the cheap files every time, the firmware ones once a second */
        assert_near(ctr_get(s, "eth0", "rx_bytes")->value, 2000, 0);
        assert_near(ctr_get(s, "mlx5_0/1", "port_xmit_wait")->value, 10, 0);
        assert_near(ctr_get(s, "mlx5_0/1", "np_cnp_sent")->value, 7, 0);
    }
    step(s, 0.1);
    assert_near(ctr_get(s, "mlx5_0/1", "port_xmit_wait")->value, 20, 0);
    assert_near(ctr_get(s, "mlx5_0/1", "port_xmit_wait")->rate, 10, 1e-6);
    assert_near(ctr_get(s, "mlx5_0/1", "np_cnp_sent")->value, 17, 0);
    /* sample_all reads everything now (before a mark). */
    put(IB "port_xmit_wait", "25");
    fake_now_ns += 100000000ull;
    assert_int_equal(counters_set_sample_all(s), 0);
    assert_near(ctr_get(s, "mlx5_0/1", "port_xmit_wait")->value, 25, 0);
    counters_set_close(s);
}

static void test_filter(void **state)
{
    (void)state;
    tree_file(root, "sys/class/net/eth1/statistics/rx_bytes", "1");
    tree_file(root, "sys/class/infiniband/mlx5_1/ports/1/counters/symbol_error", "0");
    const char *const only[] = {"mlx5_0:1", "eth1"};
    struct counters_opts o = {.sys_root = root, .only = only, .nonly = 2, .clock_ns = fake_clock};
    struct counters_set *s;
    struct ft_err err = {0};
    assert_int_equal(counters_set_open(&o, &s, &err), 0);
    assert_true(ctr_count_object(s, "mlx5_0/1") > 0);
    assert_int_equal(ctr_count_object(s, "mlx5_1/1"), 0);
    assert_int_equal(ctr_count_object(s, "eth0"), 0);
    assert_int_equal(ctr_count_object(s, "eth1"), 1);
    counters_set_close(s);
    const char *const bad[] = {"mlx5_0/1", "eth9"};
    o.only = bad;
    assert_int_equal(counters_set_open(&o, &s, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "eth9"));
    struct counters_opts empty = {.sys_root = "/nonexistent-fabtop", .proc_root = "/nonexistent"};
    ft_err_clear(&err);
    assert_int_equal(counters_set_open(&empty, &s, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no counters"));
}

/* The ports a test uses, from the topology: eth0 carries the RoCE port mlx5_0:1. */
static void test_for_test_attribution(void **state)
{
    (void)state;
    tree_file(root, "sys/class/net/eth1/statistics/rx_bytes", "1");
    struct topo_model *m = topo_model_new();
    int nic = topo_model_add_nic(m);
    snprintf(m->nics[nic].rdma_dev, sizeof(m->nics[nic].rdma_dev), "mlx5_0");
    m->nics[nic].pci = -1;
    int nd = topo_model_add_netdev(m);
    snprintf(m->netdevs[nd].name, sizeof(m->netdevs[nd].name), "eth0");
    m->netdevs[nd].nic = nic;
    int p = topo_model_add_port(m);
    m->ports[p].nic = nic;
    m->ports[p].num = 1;
    m->ports[p].netdev = nd;
    m->nics[nic].first_port = p;
    m->nics[nic].nports = 1;
    struct counters_opts base = {.sys_root = root, .proc_root = root, .clock_ns = fake_clock};
    const char *const nds[] = {"eth0", "veth-gone"};
    struct counters_set *s;
    struct ft_err err = {0};
    if (counters_set_for_test(&base, m, nds, 2, NULL, 0, &s, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(ctr_count_object(s, "mlx5_0/1") > 0); /* the RoCE port under eth0 */
    assert_true(ctr_count_object(s, "eth0") > 0);
    assert_int_equal(ctr_count_object(s, "eth1"), 0); /* not the test's */
    assert_true(ctr_has_note(s, "veth-gone"));
    counters_set_close(s);
    /* And the other way: an RDMA port brings its netdev. */
    const char *const ports[] = {"mlx5_0:1"};
    if (counters_set_for_test(&base, m, NULL, 0, ports, 1, &s, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(ctr_count_object(s, "eth0") > 0);
    cJSON *r = counters_set_report_json(s, true);
    char *txt = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "objects"));
    assert_non_null(strstr(txt, "mlx5_0/1"));
    assert_non_null(strstr(txt, "eth0"));
    free(txt);
    cJSON_Delete(r);
    counters_set_close(s);
    topo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_words_rates_and_deltas, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_saturation_each_width, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_wider_than_width, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vanish_and_unreadable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gauges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_period, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_for_test_attribution, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
