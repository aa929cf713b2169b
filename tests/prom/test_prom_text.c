/* test_prom_text: the Prometheus exposition writer: label and HELP escaping, values, snake_case
 * names, units converted to base units, each source's metric names and labels (numbers of
 * priorities and queues as labels), what node_exporter already exports left out, the
 * saturation gauge, families kept together with one HELP and TYPE, duplicate series and bad
 * names refused, and the ISO 8601 start times of results. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strbuf.h"
#include "engine/counters/counters.h"
#include "text/prom_text.h"

static char *esc_label(const char *in)
{
    static char out[256];
    struct strbuf sb;
    strbuf_init(&sb);
    prom_text_escape_label(&sb, in);
    snprintf(out, sizeof(out), "%s", sb.s);
    strbuf_free(&sb);
    return out;
}

static void test_escape(void **state)
{
    (void)state;
    assert_string_equal(esc_label("mlx5_0"), "mlx5_0");
    assert_string_equal(esc_label("a\\b"), "a\\\\b");
    assert_string_equal(esc_label("say \"hi\""), "say \\\"hi\\\"");
    assert_string_equal(esc_label("two\nlines"), "two\\nlines");
    assert_string_equal(esc_label("\\\"\n"), "\\\\\\\"\\n");
    assert_string_equal(esc_label(""), "");
    struct strbuf sb;
    strbuf_init(&sb);
    prom_text_escape_help(&sb, "a \"quoted\" \\ path\nnext");
    /* HELP keeps double quotes as they are. */
    assert_string_equal(sb.s, "a \"quoted\" \\\\ path\\nnext");
    strbuf_free(&sb);
}

static const char *val(double v)
{
    static char out[64];
    struct strbuf sb;
    strbuf_init(&sb);
    prom_text_value(&sb, v);
    snprintf(out, sizeof(out), "%s", sb.s);
    strbuf_free(&sb);
    return out;
}

static void test_values(void **state)
{
    (void)state;
    assert_string_equal(val(0), "0");
    assert_string_equal(val(4294967295.0), "4294967295");
    assert_string_equal(val(11523046035392.0), "11523046035392");
    assert_string_equal(val(-3), "-3");
    assert_string_equal(val(0.1), "0.1");
    assert_string_equal(val(1.5e-6), "1.5e-06");
    assert_string_equal(val(0.0 / 0.0), "NaN");
    assert_string_equal(val(1.0 / 0.0), "+Inf");
    assert_string_equal(val(-1.0 / 0.0), "-Inf");
    /* microseconds to seconds without binary noise */
    assert_string_equal(val(prom_text_convert(7.1835, 1e-6)), "7.1835e-06");
    assert_string_equal(val(prom_text_convert(1500, 1e-6)), "0.0015");
    assert_string_equal(val(prom_text_convert(25, 0.01)), "0.25");
}

static const char *snake(const char *in)
{
    static char out[128];
    prom_text_snake(in, out, sizeof(out));
    return out;
}

static void test_snake(void **state)
{
    (void)state;
    assert_string_equal(snake("TCPTimeouts"), "tcp_timeouts");
    assert_string_equal(snake("RetransSegs"), "retrans_segs");
    assert_string_equal(snake("InECT0Pkts"), "in_ect0_pkts");
    assert_string_equal(snake("TCPOFOQueue"), "tcpofo_queue");
    assert_string_equal(snake("TcpExt"), "tcp_ext");
    assert_string_equal(snake("VL15_dropped"), "vl15_dropped");
    assert_string_equal(snake("rx_prio3_pause"), "rx_prio3_pause");
    assert_string_equal(snake("a-b.c__d_"), "a_b_c_d");
}

static void test_units(void **state)
{
    (void)state;
    double f;
    const char *sfx;
    assert_true(prom_text_unit("bytes", &f, &sfx));
    assert_true(f == 1);
    assert_string_equal(sfx, "bytes");
    assert_true(prom_text_unit("us", &f, &sfx));
    assert_true(f == 1e-6);
    assert_string_equal(sfx, "seconds");
    assert_true(prom_text_unit("ms", &f, &sfx));
    assert_true(f == 1e-3);
    assert_true(prom_text_unit("%", &f, &sfx));
    assert_string_equal(sfx, "ratio");
    /* counts of things: no unit in the name, no conversion */
    assert_false(prom_text_unit("packets", &f, &sfx));
    assert_true(f == 1 && sfx == NULL);
    assert_false(prom_text_unit("ticks", &f, &sfx));
}

static struct counters_value cv(enum counters_source src, const char *obj, const char *name,
                                const char *unit, enum counters_kind kind, double value)
{
    struct counters_value v;
    memset(&v, 0, sizeof(v));
    v.source = src;
    snprintf(v.object, sizeof(v.object), "%s", obj);
    snprintf(v.name, sizeof(v.name), "%s", name);
    v.unit = unit;
    v.kind = kind;
    v.known = true;
    v.valid = COUNTERS_V_VALUE;
    v.value = value;
    return v;
}

static const char *label(const struct prom_counter_name *n, const char *name)
{
    for (int i = 0; i < n->nlabels; i++)
        if (!strcmp(n->labels[i].name, name))
            return n->labels[i].value;
    return NULL;
}

static void test_counter_names(void **state)
{
    (void)state;
    struct prom_counter_name n;
    /* The example: an IB PortCounter, device and port as labels. */
    struct counters_value v =
        cv(COUNTERS_SRC_IB, "mlx5_0/1", "port_xmit_wait", "ticks", COUNTERS_COUNTER, 5);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_port_xmit_wait_total");
    assert_string_equal(label(&n, "device"), "mlx5_0");
    assert_string_equal(label(&n, "port"), "1");
    /* 4-byte words are bytes already (counters_value.value is x4): the unit in the name. */
    v = cv(COUNTERS_SRC_IB, "mlx4_0/2", "port_xmit_data", "bytes", COUNTERS_COUNTER, 4000);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_port_xmit_data_bytes_total");
    assert_true(n.factor == 1);
    v = cv(COUNTERS_SRC_HW, "mlx5_0/1", "local_ack_timeout_err", "events", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_rdma_local_ack_timeout_err_total");
    v = cv(COUNTERS_SRC_HW, "mlx5_0/1", "rdma_tx_bytes", "bytes", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_rdma_rdma_tx_bytes_total"); /* no "_bytes_bytes" */
    /* PFC per priority: the priority is a label, the pause time in seconds. */
    v = cv(COUNTERS_SRC_ETHTOOL, "eth2", "rx_prio3_pause", "frames", COUNTERS_COUNTER, 7);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_ethtool_rx_prio_pause_total");
    assert_string_equal(label(&n, "device"), "eth2");
    assert_string_equal(label(&n, "priority"), "3");
    assert_string_equal(n.pattern, "rx_prio#_pause");
    v = cv(COUNTERS_SRC_ETHTOOL, "eth2", "tx_prio5_pause_duration", "us", COUNTERS_COUNTER, 1500);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_ethtool_tx_prio_pause_duration_seconds_total");
    assert_string_equal(label(&n, "priority"), "5");
    assert_true(n.factor == 1e-6);
    v = cv(COUNTERS_SRC_ETHTOOL, "eth2", "rx7_ecn_mark", "packets", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_ethtool_rx_queue_ecn_mark_total");
    assert_string_equal(label(&n, "queue"), "7");
    v = cv(COUNTERS_SRC_ETHTOOL, "veth0", "rx_queue_0_xdp_packets", "packets", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_ethtool_rx_queue_xdp_packets_total");
    assert_string_equal(label(&n, "queue"), "0");
    v = cv(COUNTERS_SRC_ETHTOOL, "eth2", "outbound_pci_stalled_rd", "%", COUNTERS_GAUGE, 25);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_ethtool_outbound_pci_stalled_rd_ratio");
    /* qdisc: device, handle and kind; a gauge has no _total. */
    v = cv(COUNTERS_SRC_QDISC, "pr qdisc 10: bfifo", "backlog", "bytes", COUNTERS_GAUGE, 3000);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_qdisc_backlog_bytes");
    assert_string_equal(label(&n, "device"), "pr");
    assert_string_equal(label(&n, "handle"), "10:");
    assert_string_equal(label(&n, "kind"), "bfifo");
    v = cv(COUNTERS_SRC_QDISC, "pr qdisc 1: htb", "bytes", "bytes", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_qdisc_bytes_total");
    /* snmp: the line's protocol in the name, snake_case. */
    v = cv(COUNTERS_SRC_SNMP, "TcpExt", "TCPLostRetransmit", "segments", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_snmp_tcp_ext_tcp_lost_retransmit_total");
    assert_int_equal(n.nlabels, 0);
    /* a token promtool would take for an abbreviated unit ("h": hours) is joined on */
    v = cv(COUNTERS_SRC_SNMP, "MPTcpExt", "MPJoinAckHMacFailure", "count", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_snmp_mp_tcp_ext_mp_join_ack_hmac_failure_total");
    v = cv(COUNTERS_SRC_NETDEV, "eth0", "rx_dropped", "packets", COUNTERS_COUNTER, 1);
    assert_true(prom_text_counter_name(&v, &n));
    assert_string_equal(n.family, "fabtop_netdev_rx_dropped_total");
}

static void test_node_exporter_overlap(void **state)
{
    (void)state;
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_IB, "mlx5_0/1", "port_xmit_wait"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_IB, "mlx5_0/1", "port_xmit_data"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_IB, "mlx4_0/1", "port_rcv_data_64"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_IB, "mlx4_0/1", "VL15_dropped"));
    assert_false(prom_text_node_exporter_has(COUNTERS_SRC_HW, "mlx5_0/1", "out_of_sequence"));
    assert_false(prom_text_node_exporter_has(COUNTERS_SRC_ETHTOOL, "eth0", "rx_prio3_pause"));
    assert_false(prom_text_node_exporter_has(COUNTERS_SRC_QDISC, "eth0 qdisc 1: htb", "drops"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_NETDEV, "eth0", "rx_crc_errors"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_SNMP, "Tcp", "RetransSegs"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_SNMP, "Udp", "InErrors"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_SNMP, "TcpExt", "ListenOverflows"));
    assert_true(prom_text_node_exporter_has(COUNTERS_SRC_SNMP, "TcpExt", "TCPTimeouts"));
    assert_false(prom_text_node_exporter_has(COUNTERS_SRC_SNMP, "TcpExt", "TCPLostRetransmit"));
    assert_false(prom_text_node_exporter_has(COUNTERS_SRC_SNMP, "Tcp", "InCsumErrors"));
    assert_false(prom_text_node_exporter_has(COUNTERS_SRC_SNMP, "Ip", "InHdrErrors"));
}

static char *render(struct prom_text *p)
{
    struct strbuf sb;
    strbuf_init(&sb);
    prom_text_render(p, &sb);
    char *t = strbuf_steal(&sb);
    strbuf_free(&sb);
    return t;
}

static void test_counters(void **state)
{
    (void)state;
    struct counters_value v[6];
    v[0] =
        cv(COUNTERS_SRC_IB, "mlx4_0/1", "port_xmit_wait", "ticks", COUNTERS_COUNTER, 4294967295.0);
    v[0].behaviour = COUNTERS_SATURATES;
    v[0].saturated = true;
    v[1] = cv(COUNTERS_SRC_IB, "mlx4_0/1", "port_xmit_data", "bytes", COUNTERS_COUNTER, 4000);
    v[1].behaviour = COUNTERS_SATURATES;
    v[2] = cv(COUNTERS_SRC_HW, "mlx5_0/1", "out_of_sequence", "packets", COUNTERS_COUNTER, 12);
    v[3] = cv(COUNTERS_SRC_HW, "mlx5_0/1", "np_cnp_sent", "packets", COUNTERS_COUNTER, 0);
    v[3].valid = 0; /* n/a: left out, never 0 */
    v[4] = cv(COUNTERS_SRC_SNMP, "Tcp", "RtoMin", "ms", COUNTERS_GAUGE, 200);
    v[4].setting = true; /* a setting, not a measurement */
    v[5] = cv(COUNTERS_SRC_ETHTOOL, "eth0", "rx_queue_9_foo", "count", COUNTERS_COUNTER, 3);
    v[5].known = false; /* only with all */

    struct prom_text *p = prom_text_new();
    struct prom_counters_opts o = {0};
    prom_text_counters(p, v, 6, &o);
    char *t = render(p);
    /* node_exporter's counters are left out; their saturation is not. */
    assert_null(strstr(t, "fabtop_port_xmit_wait_total"));
    assert_null(strstr(t, "fabtop_port_xmit_data_bytes_total"));
    assert_non_null(strstr(t, "# TYPE fabtop_port_saturated gauge\n"));
    assert_non_null(strstr(
        t, "fabtop_port_saturated{device=\"mlx4_0\",port=\"1\",counter=\"port_xmit_wait\"} 1\n"));
    assert_non_null(strstr(
        t, "fabtop_port_saturated{device=\"mlx4_0\",port=\"1\",counter=\"port_xmit_data\"} 0\n"));
    assert_non_null(strstr(t, "# TYPE fabtop_rdma_out_of_sequence_total counter\n"
                              "fabtop_rdma_out_of_sequence_total{device=\"mlx5_0\",port=\"1\"} "
                              "12\n"));
    assert_null(strstr(t, "np_cnp_sent"));
    assert_null(strstr(t, "rto_min"));
    assert_null(strstr(t, "foo"));
    assert_int_equal(prom_text_count(p), 3);
    free(t);
    prom_text_free(p);

    p = prom_text_new();
    o.all = o.overlap = true;
    prom_text_counters(p, v, 6, &o);
    t = render(p);
    assert_non_null(
        strstr(t, "fabtop_port_xmit_wait_total{device=\"mlx4_0\",port=\"1\"} 4294967295\n"));
    assert_non_null(
        strstr(t, "fabtop_port_xmit_data_bytes_total{device=\"mlx4_0\",port=\"1\"} 4000\n"));
    assert_non_null(
        strstr(t, "fabtop_ethtool_rx_queue_foo_total{device=\"eth0\",queue=\"9\"} 3\n"));
    assert_non_null(strstr(t, "not in fabtop's table"));
    free(t);
    prom_text_free(p);
}

static void test_builder(void **state)
{
    (void)state;
    struct prom_text *p = prom_text_new();
    struct prom_label a[1] = {{"device", "a"}}, b[1] = {{"device", "b\"x"}};
    assert_int_equal(prom_text_add(p, "x_total", "", PROM_COUNTER, "X.", a, 1, 1), 0);
    assert_int_equal(prom_text_add(p, "y", "", PROM_GAUGE, "Y\nline", a, 1, 2), 0);
    /* the same family again, after another: its samples still come together */
    assert_int_equal(prom_text_add(p, "x_total", "", PROM_COUNTER, "other help", b, 1, 3), 0);
    assert_int_equal(prom_text_add(p, "x_total", "", PROM_COUNTER, "X.", a, 1, 9), -EEXIST);
    assert_int_equal(prom_text_add(p, "x_total", "", PROM_GAUGE, "X.", b, 1, 9), -EINVAL);
    assert_int_equal(prom_text_add(p, "9bad", "", PROM_GAUGE, "", NULL, 0, 1), -EINVAL);
    assert_int_equal(prom_text_add(p, "bad-name", "", PROM_GAUGE, "", NULL, 0, 1), -EINVAL);
    struct prom_label bad[1] = {{"__reserved", "v"}}, twice[2] = {{"a", "1"}, {"a", "2"}};
    assert_int_equal(prom_text_add(p, "z", "", PROM_GAUGE, "", bad, 1, 1), -EINVAL);
    assert_int_equal(prom_text_add(p, "z", "", PROM_GAUGE, "", twice, 2, 1), -EINVAL);
    struct prom_label q[2] = {{"flow", "probe"}, {"quantile", "0.99"}};
    assert_int_equal(prom_text_add(p, "lat_seconds", "", PROM_SUMMARY, "L.", q, 2, 0.5), 0);
    assert_int_equal(prom_text_add(p, "lat_seconds", "_count", PROM_SUMMARY, "L.", q, 1, 10), 0);
    char *t = render(p);
    assert_string_equal(t, "# HELP x_total X.\n"
                           "# TYPE x_total counter\n"
                           "x_total{device=\"a\"} 1\n"
                           "x_total{device=\"b\\\"x\"} 3\n"
                           "# HELP y Y\\nline\n"
                           "# TYPE y gauge\n"
                           "y{device=\"a\"} 2\n"
                           "# HELP lat_seconds L.\n"
                           "# TYPE lat_seconds summary\n"
                           "lat_seconds{flow=\"probe\",quantile=\"0.99\"} 0.5\n"
                           "lat_seconds_count{flow=\"probe\"} 10\n");
    assert_int_equal(prom_text_count(p), 5);
    free(t);
    prom_text_free(p);
}

static void test_iso_time(void **state)
{
    (void)state;
    double t;
    assert_true(prom_text_iso_time("1970-01-01T00:00:00Z", &t));
    assert_true(t == 0);
    assert_true(prom_text_iso_time("2026-12-01T22:10:02.600Z", &t));
    assert_true(t > 1796163002.59 && t < 1796163002.61);
    assert_false(prom_text_iso_time("2026-12-01 22:10:02", &t));
    assert_false(prom_text_iso_time("2026-12-01T22:10:02+01:00", &t));
    assert_false(prom_text_iso_time(NULL, &t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),        cmocka_unit_test(test_values),
        cmocka_unit_test(test_snake),         cmocka_unit_test(test_units),
        cmocka_unit_test(test_counter_names), cmocka_unit_test(test_node_exporter_overlap),
        cmocka_unit_test(test_counters),      cmocka_unit_test(test_builder),
        cmocka_unit_test(test_iso_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
