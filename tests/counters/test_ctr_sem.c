/* test_ctr_sem: the counter semantics table: mlx5 Q counters 32-bit and wrapping, mlx5
 * congestion counters and rxe counters 64-bit, one name with different widths per
 * provider, IB PortCounters taken from topo_ibcounters (saturating, 4-byte words), ethtool
 * per-priority patterns, qdisc gauges vs 32-bit counters, snmp lines, guesses for unknown
 * names, and a meaning for every known counter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/counters/counters.h"
#include "engine/counters/counters_sem.h"
#include "topology/topo_ibcounters.h"

static struct counters_info get(enum counters_source src, const char *prov, const char *name,
                                bool known)
{
    struct counters_info i;
    bool k = counters_info_get(src, prov, name, &i);
    if (k != known)
        fail_msg("%s/%s: known=%d, expected %d", prov ? prov : "-", name, k, known);
    return i;
}

static void test_mlx5_widths(void **state)
{
    (void)state;
    /* Q counters: be32 fields of query_q_counter_out. */
    static const char *const q32[] = {
        "out_of_sequence",   "packet_seq_err",    "local_ack_timeout_err", "implied_nak_seq_err",
        "rnr_nak_retry_err", "duplicate_request", "out_of_buffer",         "rx_write_requests",
        "roce_adp_retrans",  "roce_slow_restart", "req_cqe_error",         "resp_cqe_flush_error"};
    for (size_t i = 0; i < sizeof(q32) / sizeof(q32[0]); i++) {
        struct counters_info c = get(COUNTERS_SRC_HW, "mlx5", q32[i], true);
        if (c.width != 32 || c.behaviour != COUNTERS_WRAPS || c.kind != COUNTERS_COUNTER)
            fail_msg("%s: width %d behaviour %d", q32[i], c.width, c.behaviour);
    }
    /* cong_cnts and ext_ppcnt: 64-bit */
    static const char *const c64[] = {"np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled",
                                      "rp_cnp_ignored", "rx_icrc_encapsulated"};
    for (size_t i = 0; i < sizeof(c64) / sizeof(c64[0]); i++)
        assert_int_equal(get(COUNTERS_SRC_HW, "mlx5", c64[i], true).width, 64);
    assert_int_equal(get(COUNTERS_SRC_HW, "mlx5", "np_cnp_sent", true).group, COUNTERS_CONGESTION);
    assert_int_equal(get(COUNTERS_SRC_HW, "mlx5", "out_of_sequence", true).group, COUNTERS_LOSS);
    assert_int_equal(get(COUNTERS_SRC_HW, "mlx5", "req_cqe_error", true).group, COUNTERS_ERRORS);
    assert_true(get(COUNTERS_SRC_HW, "mlx5", "rp_cnp_ignored", true).error_like);
    /* An eSwitch representor's vport_ copy has the same semantics. */
    assert_int_equal(get(COUNTERS_SRC_HW, "mlx5", "vport_out_of_sequence", true).width, 32);
}

static void test_rxe_and_providers(void **state)
{
    (void)state;
    /* duplicate_request: a 32-bit Q counter on mlx5, an atomic64 on rxe. */
    assert_int_equal(get(COUNTERS_SRC_HW, "mlx5", "duplicate_request", true).width, 32);
    assert_int_equal(get(COUNTERS_SRC_HW, "rxe", "duplicate_request", true).width, 64);
    assert_int_equal(get(COUNTERS_SRC_HW, "rxe", "out_of_seq_request", true).group, COUNTERS_LOSS);
    assert_int_equal(get(COUNTERS_SRC_HW, "rxe", "ack_deferred", true).group, COUNTERS_CONGESTION);
    assert_int_equal(get(COUNTERS_SRC_HW, "rxe", "sent_pkts", true).group, COUNTERS_TRAFFIC);
    /* mlx5-only names are not claimed for another provider; unknown provider: guessed. */
    struct counters_info c = get(COUNTERS_SRC_HW, "bnxt_re", "out_of_sequence", false);
    assert_int_equal(c.behaviour, COUNTERS_WIDTH_UNKNOWN);
    assert_int_equal(c.group, COUNTERS_LOSS);
}

static void test_ib_from_topo_table(void **state)
{
    (void)state;
    struct counters_info c = get(COUNTERS_SRC_IB, "mlx4", "port_xmit_wait", true);
    assert_int_equal(c.width, 32);
    assert_int_equal(c.behaviour, COUNTERS_SATURATES);
    assert_string_equal(c.unit, "ticks");
    assert_int_equal(c.group, COUNTERS_CONGESTION);
    c = get(COUNTERS_SRC_IB, NULL, "port_xmit_data", true);
    assert_int_equal(c.scale, 4);
    assert_string_equal(c.unit, "bytes");
    assert_int_equal(c.ext_width, 64);
    c = get(COUNTERS_SRC_IB, NULL, "symbol_error", true);
    assert_int_equal(c.width, 16);
    assert_true(c.error_like);
    assert_int_equal(c.group, COUNTERS_ERRORS);
    assert_int_equal(get(COUNTERS_SRC_IB, NULL, "link_downed", true).width, 8);
    assert_int_equal(get(COUNTERS_SRC_IB, NULL, "port_rcv_discards", true).behaviour,
                     COUNTERS_WIDTH_UNKNOWN);
    assert_int_equal(get(COUNTERS_SRC_IB, NULL, "port_xmit_data_64", true).scale, 4);
    /* The meaning comes from the IB table, not a copy. */
    assert_ptr_equal(counters_meaning("symbol_error"), topo_ibc_find("symbol_error")->meaning);
}

static void test_patterns(void **state)
{
    (void)state;
    assert_true(counters_sem_match("rx_prio#_pause", "rx_prio3_pause"));
    assert_true(counters_sem_match("rx_prio#_pause", "rx_prio12_pause"));
    assert_false(counters_sem_match("rx_prio#_pause", "rx_prio_pause"));
    assert_false(counters_sem_match("rx_prio#_pause", "rx_prio3_pause_duration"));
    assert_false(counters_sem_match("rx_prio#_pause", "rx_prioX_pause"));
    struct counters_info c = get(COUNTERS_SRC_ETHTOOL, "mlx5_core", "rx_prio3_pause", true);
    assert_int_equal(c.group, COUNTERS_CONGESTION);
    c = get(COUNTERS_SRC_ETHTOOL, "mlx5_core", "tx_prio3_pause_duration", true);
    assert_string_equal(c.unit, "us");
    assert_int_equal(get(COUNTERS_SRC_ETHTOOL, NULL, "rx_prio0_discards", true).group,
                     COUNTERS_LOSS);
    assert_true(get(COUNTERS_SRC_ETHTOOL, NULL, "tx_pause_storm_error_events", true).error_like);
    assert_int_equal(get(COUNTERS_SRC_ETHTOOL, NULL, "rx_discards_phy", true).group, COUNTERS_LOSS);
    assert_int_equal(get(COUNTERS_SRC_ETHTOOL, NULL, "outbound_pci_stalled_rd", true).kind,
                     COUNTERS_GAUGE);
    assert_int_equal(get(COUNTERS_SRC_ETHTOOL, "veth", "peer_ifindex", true).kind, COUNTERS_GAUGE);
}

static void test_qdisc_snmp(void **state)
{
    (void)state;
    struct counters_info c = get(COUNTERS_SRC_QDISC, NULL, "backlog", true);
    assert_int_equal(c.kind, COUNTERS_GAUGE);
    assert_string_equal(c.unit, "bytes");
    c = get(COUNTERS_SRC_QDISC, NULL, "drops", true);
    assert_int_equal(c.width, 32); /* __u32 drops in struct gnet_stats_queue */
    assert_int_equal(c.behaviour, COUNTERS_WRAPS);
    assert_true(c.error_like);
    assert_int_equal(get(COUNTERS_SRC_QDISC, NULL, "overlimits", true).group, COUNTERS_CONGESTION);
    assert_int_equal(get(COUNTERS_SRC_QDISC, NULL, "bytes", true).width, 64);
    assert_int_equal(get(COUNTERS_SRC_SNMP, "Tcp", "RetransSegs", true).group, COUNTERS_LOSS);
    assert_int_equal(get(COUNTERS_SRC_SNMP, "Tcp", "CurrEstab", true).kind, COUNTERS_GAUGE);
    assert_int_equal(get(COUNTERS_SRC_SNMP, "TcpExt", "TCPTimeouts", true).group, COUNTERS_LOSS);
    assert_int_equal(get(COUNTERS_SRC_SNMP, "IpExt", "InCEPkts", true).group, COUNTERS_CONGESTION);
    /* The same column name means different things on different lines. */
    assert_int_equal(get(COUNTERS_SRC_SNMP, "Udp", "InErrors", true).group, COUNTERS_LOSS);
    get(COUNTERS_SRC_SNMP, "Tcp", "InErrors", false);
    assert_int_equal(get(COUNTERS_SRC_SNMP, "Tcp", "InCsumErrors", true).group, COUNTERS_ERRORS);
}

static void test_guesses(void **state)
{
    (void)state;
    struct counters_info c =
        get(COUNTERS_SRC_ETHTOOL, "ice", "rx_vport_rdma_unicast_packets", false);
    assert_int_equal(c.group, COUNTERS_TRAFFIC);
    assert_string_equal(c.unit, "packets");
    c = get(COUNTERS_SRC_ETHTOOL, "ice", "rx_queue_7_drops", false);
    assert_int_equal(c.group, COUNTERS_LOSS);
    assert_true(c.error_like);
    c = get(COUNTERS_SRC_HW, "irdma", "ip4RxDiscards", false);
    assert_int_equal(c.group, COUNTERS_LOSS);
    /* FECN is InfiniBand's forward congestion notification. */
    assert_int_equal(get(COUNTERS_SRC_IB, NULL, "port_rcv_fecn", false).group, COUNTERS_CONGESTION);
    c = get(COUNTERS_SRC_IB, NULL, "vl_arbitration_hits", false);
    assert_int_equal(c.group, COUNTERS_TRAFFIC);
    assert_int_equal(c.behaviour, COUNTERS_WIDTH_UNKNOWN);
    assert_int_equal(get(COUNTERS_SRC_NETDEV, NULL, "rx_crc_errors", true).group, COUNTERS_ERRORS);
}

static void test_table_complete(void **state)
{
    (void)state;
    int n;
    const struct counters_info *t = counters_table(&n);
    assert_true(n > 100);
    for (int i = 0; i < n; i++) {
        if (!t[i].meaning || !t[i].unit || !*t[i].meaning)
            fail_msg("%s: no meaning or unit", t[i].name);
        if (!counters_meaning(t[i].name))
            fail_msg("counters_meaning(%s) is NULL", t[i].name);
        if (t[i].kind == COUNTERS_COUNTER && (t[i].width != 32 && t[i].width != 64))
            fail_msg("%s: counter width %d", t[i].name, t[i].width);
        if (t[i].kind == COUNTERS_GAUGE && t[i].width)
            fail_msg("%s: a gauge has no width", t[i].name);
        if ((unsigned)t[i].group >= COUNTERS_GROUP_COUNT)
            fail_msg("%s: bad group", t[i].name);
        /* no two rows for one (source, provider, name) */
        for (int j = 0; j < i; j++)
            if (t[j].source == t[i].source && !strcmp(t[j].name, t[i].name) &&
                ((!t[j].provider && !t[i].provider) ||
                 (t[j].provider && t[i].provider && !strcmp(t[j].provider, t[i].provider))))
                fail_msg("%s listed twice", t[i].name);
    }
    for (int i = 0; i < topo_ibcounters_n; i++)
        assert_non_null(counters_meaning(topo_ibcounters[i].name));
    assert_null(counters_meaning("no_such_counter"));
    assert_string_equal(counters_group_str(COUNTERS_LOSS), "loss/retransmission");
    assert_string_equal(counters_source_str(COUNTERS_SRC_QDISC), "qdisc");
    assert_string_equal(counters_behaviour_str(COUNTERS_SATURATES), "saturates");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlx5_widths),        cmocka_unit_test(test_rxe_and_providers),
        cmocka_unit_test(test_ib_from_topo_table), cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_qdisc_snmp),         cmocka_unit_test(test_guesses),
        cmocka_unit_test(test_table_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
