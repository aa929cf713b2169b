/* test_ctr_captures: every counter capture in the reference data parses with the right
 * semantics: the mlx5 port with hw_counters (Q counters 32-bit, lifespan skipped), the
 * mlx4 ports and hfi1, node_exporter's mlx4 with counters_ext/ and the saturated 32-bit
 * port_xmit_wait = 4294967295, the iWARP i40iw whose counters read "N/A (no PMA)", the
 * hwloc mlx4 FDR port and ib0 netdev statistics, the procfs-net snmp/netstat captures,
 * and the ethtool fixture's names. Skipped (77) without FABTOP_SHARED_DATA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fsutil.h"
#include "common/jsonutil.h"
#include "tests/counters/ctr_test.h"

static const char *data;

static struct counters_set *open_tree(const char *sub, const char *const *only, int nonly)
{
    char sys[1024];
    snprintf(sys, sizeof(sys), "%s/sysfs-infiniband/%s", data, sub);
    struct counters_opts o = {
        .sys_root = sys, .only = only, .nonly = nonly, .clock_ns = fake_clock};
    struct counters_set *s;
    struct ft_err err = {0};
    if (counters_set_open(&o, &s, &err) < 0)
        fail_msg("%s: %s", sub, err.msg);
    fake_now_ns += 1000000000ull;
    counters_set_sample_all(s);
    return s;
}

/* Each counter of a set is known, from the right source, and read. */
static void all_read(const struct counters_set *s, const char *object, int expect_n)
{
    int n, k = 0;
    const struct counters_value *v = counters_set_values(s, &n);
    for (int i = 0; i < n; i++) {
        if (strcmp(v[i].object, object))
            continue;
        k++;
        if (!(v[i].valid & COUNTERS_V_VALUE))
            fail_msg("%s %s: not read", object, v[i].name);
    }
    if (k != expect_n)
        fail_msg("%s: %d counters, expected %d", object, k, expect_n);
}

static void test_mlx5_hw_counters(void **state)
{
    (void)state;
    struct counters_set *s = open_tree("prometheus-procfs", NULL, 0);
    /* 21 PortCounters + 25 hw_counters files, lifespan (a setting) left out */
    all_read(s, "mlx5_0/1", 21 + 24);
    const struct counters_value *v = ctr_get(s, "mlx5_0/1", "local_ack_timeout_err");
    assert_int_equal(v->source, COUNTERS_SRC_HW);
    assert_true(v->known);
    assert_int_equal(v->width, 32);
    assert_int_equal(v->group, COUNTERS_LOSS);
    assert_near(v->value, 131, 0);
    v = ctr_get(s, "mlx5_0/1", "roce_adp_retrans");
    assert_near(v->value, 99, 0);
    assert_int_equal(v->group, COUNTERS_LOSS);
    assert_near(ctr_get(s, "mlx5_0/1", "resp_cqe_error")->value, 8109, 0);
    assert_int_equal(ctr_get(s, "mlx5_0/1", "resp_cqe_error")->group, COUNTERS_ERRORS);
    assert_int_equal(ctr_get(s, "mlx5_0/1", "roce_slow_restart_cnps")->group, COUNTERS_CONGESTION);
    assert_null(ctr_find(s, "mlx5_0/1", "lifespan"));
    /* port_xmit_data counts 4-byte words: shown as bytes. Its value needs 64 bits. */
    v = ctr_get(s, "mlx5_0/1", "port_xmit_data");
    assert_near(v->value, 2880761508848.0 * 4, 0);
    assert_string_equal(v->unit, "bytes");
    assert_int_equal(v->width, 64);
    assert_false(v->saturated);
    /* The other devices of the capture. */
    all_read(s, "mlx4_0/1", 17);
    all_read(s, "mlx4_0/2", 17);
    assert_near(ctr_get(s, "mlx4_0/2", "port_xmit_wait")->value, 3846, 0);
    assert_false(ctr_get(s, "mlx4_0/2", "port_xmit_wait")->saturated);
    all_read(s, "hfi1_0/1", 17);
    counters_set_close(s);
}

static void test_node_exporter_saturated_and_no_pma(void **state)
{
    (void)state;
    struct counters_set *s = open_tree("node_exporter", NULL, 0);
    const struct counters_value *v = ctr_get(s, "mlx4_0/1", "port_xmit_wait");
    assert_near(v->value, 4294967295.0, 0);
    assert_true(v->saturated);
    assert_int_equal(v->group, COUNTERS_CONGESTION);
    counters_set_mark(s);
    fake_now_ns += 1000000000ull;
    counters_set_sample(s);
    /* Saturated: never a rate of 0 that reads as healthy, never a delta. */
    assert_true(v->saturated);
    assert_false(v->valid & COUNTERS_V_RATE);
    assert_false(v->valid & COUNTERS_V_DELTA);
    /* An unsaturated neighbour has a real rate of 0 and a delta of 0. */
    const struct counters_value *w = ctr_get(s, "mlx4_0/1", "port_xmit_discards");
    assert_true(w->valid & COUNTERS_V_RATE);
    assert_near(w->rate, 0, 0);
    assert_near(w->value, 5, 0);
    /* counters_ext: the legacy 64-bit names, data in 4-byte words. */
    v = ctr_get(s, "mlx4_0/1", "port_xmit_data_64");
    assert_near(v->value, 3733440.0 * 4, 0);
    assert_near(ctr_get(s, "mlx4_0/2", "port_unicast_rcv_packets")->value, 61148, 0);
    v = ctr_get(s, "mlx4_0/1", "port_rcv_discards");
    assert_int_equal(v->behaviour, COUNTERS_WIDTH_UNKNOWN);
    /* port_rcv_packets 6825908347 > 2^32: the 64-bit counter, not saturated. */
    v = ctr_get(s, "mlx4_0/1", "port_rcv_packets");
    assert_int_equal(v->width, 64);
    assert_false(v->saturated);
    /* i40iw: every counter says "N/A (no PMA)": n/a, not 0. */
    int n, nna = 0;
    const struct counters_value *all = counters_set_values(s, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(all[i].object, "i40iw0/1")) {
            assert_int_equal(all[i].valid, 0);
            nna++;
        }
    assert_int_equal(nna, 17);
    cJSON *j = counters_set_json(s, false);
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        if (strcmp(jsonutil_str(e, "object"), "i40iw0/1"))
            continue;
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "value")));
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "rate")));
    }
    cJSON_ArrayForEach(e, j)
    {
        if (!strcmp(jsonutil_str(e, "object"), "mlx4_0/1") &&
            !strcmp(jsonutil_str(e, "name"), "port_xmit_wait")) {
            assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e, "saturated")));
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "rate")));
        }
    }
    cJSON_Delete(j);
    counters_set_close(s);
    /* Only the iWARP port: nothing readable at all. */
    const char *const only[] = {"i40iw0:1"};
    s = open_tree("node_exporter", only, 1);
    assert_int_equal(counters_set_sample(s), -EIO);
    counters_set_close(s);
}

static void test_hwloc_fdr_and_ib0(void **state)
{
    (void)state;
    struct counters_set *s = open_tree("hwloc-32em64t", NULL, 0);
    all_read(s, "mlx4_0/1", 17);
    assert_near(ctr_get(s, "mlx4_0/1", "port_xmit_wait")->value, 21833, 0);
    assert_near(ctr_get(s, "mlx4_0/1", "port_xmit_data")->value, 8039908.0 * 4, 0);
    assert_int_equal(ctr_get(s, "mlx4_0/1", "port_xmit_data")->width, 32);
    all_read(s, "ib0", 23);
    const struct counters_value *v = ctr_get(s, "ib0", "rx_bytes");
    assert_near(v->value, 78713432, 0);
    assert_int_equal(v->source, COUNTERS_SRC_NETDEV);
    assert_int_equal(v->width, 64);
    assert_true(ctr_get(s, "ib0", "rx_dropped")->error_like);
    assert_int_equal(ctr_get(s, "ib0", "rx_crc_errors")->group, COUNTERS_ERRORS);
    counters_set_close(s);
}

static struct counters_set *open_proc(const char *proc_root)
{
    struct counters_opts o = {.sys_root = proc_root, /* has no sys/: only the snmp counters */
                              .proc_root = proc_root,
                              .with_snmp = true,
                              .clock_ns = fake_clock};
    struct counters_set *s;
    struct ft_err err = {0};
    if (counters_set_open(&o, &s, &err) < 0)
        fail_msg("%s: %s", proc_root, err.msg);
    counters_set_sample(s);
    return s;
}

static void test_procfs_net(void **state)
{
    (void)state;
    char root[1024];
    snprintf(root, sizeof(root), "%s/procfs-net/node_exporter", data);
    struct counters_set *s = open_proc(root);
    assert_near(ctr_get(s, "Tcp", "RetransSegs")->value, 227, 0);
    assert_int_equal(ctr_get(s, "Tcp", "RetransSegs")->group, COUNTERS_LOSS);
    assert_int_equal(ctr_get(s, "Tcp", "CurrEstab")->kind, COUNTERS_GAUGE);
    assert_near(ctr_get(s, "Tcp", "MaxConn")->value, -1, 0);
    assert_near(ctr_get(s, "TcpExt", "TCPTimeouts")->value, 115, 0);
    assert_near(ctr_get(s, "IpExt", "InOctets")->value, 6286396970.0, 0);
    assert_near(ctr_get(s, "Udp", "RcvbufErrors")->value, 9, 0);
    assert_near(ctr_get(s, "Ip", "OutNoRoutes")->value, 54, 0);
    assert_true(ctr_get(s, "IcmpMsg", "OutType3")->valid & COUNTERS_V_VALUE);
    counters_set_close(s);
    /* A per-process capture (proc/PID/net) through a tree whose proc/net points at it. */
    char tmp[] = "/tmp/fabtop-ctrproc-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char target[1024];
    snprintf(target, sizeof(target), "%s/procfs-net/prometheus-procfs/proc/26231/net", data);
    tree_link(tmp, "proc/net", target);
    s = open_proc(tmp);
    assert_near(ctr_get(s, "Tcp", "RetransSegs")->value, 348, 0);
    assert_near(ctr_get(s, "Tcp", "CurrEstab")->value, 15, 0);
    assert_near(ctr_get(s, "IpExt", "InOctets")->value, 190585481, 0);
    /* A column fabtop does not know is still there, by name. */
    const struct counters_value *v = ctr_get(s, "Udp", "IgnoredMulti");
    assert_false(v->known);
    assert_near(v->value, 58, 0);
    counters_set_close(s);
    tree_remove(tmp);
}

/* ethtool -S text: the ioctl needs a real netdev, so the names are classified here. */
static void test_ethtool_fixture_names(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof(path), "%s/ethtool/node_exporter_eth0_statistics.txt", data);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int n = 0;
    struct {
        const char *name;
        enum counters_group g;
        bool err;
    } want[] = {{"tx_packets", COUNTERS_TRAFFIC, false},  {"rx_errors", COUNTERS_ERRORS, true},
                {"port.rx_dropped", COUNTERS_LOSS, true}, {"rx_missed", COUNTERS_LOSS, true},
                {"align_errors", COUNTERS_ERRORS, true},  {"rx_unicast", COUNTERS_TRAFFIC, false}};
    int found = 0;
    while (fgets(line, sizeof(line), f)) {
        char *c = strrchr(line, ':');
        if (line[0] != ' ' || !c)
            continue;
        *c = '\0';
        char *name = line;
        while (*name == ' ')
            name++;
        struct counters_info info;
        counters_info_get(COUNTERS_SRC_ETHTOOL, "e1000e", name, &info);
        n++;
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
            if (!strcmp(want[i].name, name)) {
                if (info.group != want[i].g || info.error_like != want[i].err)
                    fail_msg("%s: group %s error_like %d", name, counters_group_str(info.group),
                             info.error_like);
                found++;
            }
    }
    fclose(f);
    assert_true(n >= 15);
    assert_int_equal(found, 6);
}

int main(void)
{
    data = getenv("FABTOP_SHARED_DATA");
    char probe[1024];
    snprintf(probe, sizeof(probe), "%s/sysfs-infiniband", data ? data : "");
    struct stat st;
    if (!data || stat(probe, &st) < 0) {
        printf("SKIP: no reference data (FABTOP_SHARED_DATA=%s)\n", data ? data : "");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlx5_hw_counters),
        cmocka_unit_test(test_node_exporter_saturated_and_no_pma),
        cmocka_unit_test(test_hwloc_fdr_and_ib0),
        cmocka_unit_test(test_procfs_net),
        cmocka_unit_test(test_ethtool_fixture_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
