/* test_ctr_live: counters of the running system without root: lo's netdev statistics and
 * the Udp snmp counters move when the test sends datagrams over loopback; a qdisc dump over
 * rtnetlink works (lo has noqueue, which is said, not shown as zeros); ethtool on lo says
 * it has no statistics; the netdev behind an address or a peer is found (lo for
 * loopback); a verbs flow that names no RDMA port gets the port the transport will choose
 * (here, with no RDMA device, a note saying why not), a librdmacm one the route's netdev.
 * Skips (77) when /sys/class/net/lo or /proc/net/snmp is missing. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/flow/mix.h"
#include "engine/xport/xport.h"

#include "tests/counters/ctr_test.h"
#include "tests/run/mixtest.h"

/* Send n UDP datagrams to 127.0.0.1 (to a bound socket, so they are delivered). */
static void udp_over_lo(int n)
{
    int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(rx >= 0 && tx >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(rx, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t al = sizeof(a);
    getsockname(rx, (struct sockaddr *)&a, &al);
    char buf[1000] = {0};
    for (int i = 0; i < n; i++)
        assert_int_equal(sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&a, sizeof(a)),
                         (ssize_t)sizeof(buf));
    close(tx);
    close(rx);
}

static void test_lo_and_snmp_move(void **state)
{
    (void)state;
    const char *const only[] = {"lo"};
    struct counters_opts o = {
        .only = only, .nonly = 1, .with_snmp = true, .with_qdisc = true, .with_ethtool = true};
    struct counters_set *s;
    struct ft_err err = {0};
    if (counters_set_open(&o, &s, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(counters_set_sample_all(s), 0);
    counters_set_mark(s);
    udp_over_lo(50);
    usleep(20000);
    assert_int_equal(counters_set_sample_all(s), 0);
    const struct counters_value *v = ctr_get(s, "lo", "rx_packets");
    assert_true(v->valid & COUNTERS_V_DELTA);
    if (v->delta < 50)
        fail_msg("lo rx_packets grew by %.0f, expected >= 50", v->delta);
    assert_true(ctr_get(s, "lo", "rx_bytes")->delta >= 50 * 1000);
    assert_true(ctr_get(s, "lo", "rx_bytes")->valid & COUNTERS_V_RATE);
    v = ctr_get(s, "Udp", "OutDatagrams");
    if (v->delta < 50)
        fail_msg("Udp OutDatagrams grew by %.0f, expected >= 50", v->delta);
    assert_int_equal(ctr_get(s, "Tcp", "CurrEstab")->kind, COUNTERS_GAUGE);
    /* lo: no ethtool statistics, a noqueue qdisc: both said, neither shown as zeros. */
    assert_true(ctr_has_note(s, "lo: no ethtool statistics"));
    assert_true(ctr_has_note(s, "noqueue"));
    int n;
    const struct counters_value *all = counters_set_values(s, &n);
    for (int i = 0; i < n; i++)
        assert_true(all[i].source != COUNTERS_SRC_ETHTOOL && all[i].source != COUNTERS_SRC_QDISC);
    counters_set_close(s);
}

/* Every live qdisc with a queue appears with gauges and 32-bit counters. */
static void test_qdisc_dump(void **state)
{
    (void)state;
    struct counters_opts o = {.with_qdisc = true};
    struct counters_set *s;
    struct ft_err err = {0};
    if (counters_set_open(&o, &s, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(counters_set_sample(s), 0);
    int n, nq = 0;
    const struct counters_value *v = counters_set_values(s, &n);
    for (int i = 0; i < n; i++) {
        if (v[i].source != COUNTERS_SRC_QDISC)
            continue;
        nq++;
        assert_true(v[i].valid & COUNTERS_V_VALUE);
        assert_non_null(strstr(v[i].object, " qdisc "));
        if (!strcmp(v[i].name, "backlog"))
            assert_int_equal(v[i].kind, COUNTERS_GAUGE);
        if (!strcmp(v[i].name, "drops"))
            assert_int_equal(v[i].width, 32);
    }
    printf("live qdisc counters: %d\n", nq);
    counters_set_close(s);
}

static void test_route_netdev(void **state)
{
    (void)state;
    char ifn[64];
    struct ft_err err = {0};
    assert_int_equal(counters_route_netdev("loopback", NULL, ifn, sizeof(ifn), &err), 0);
    assert_string_equal(ifn, "lo");
    assert_int_equal(counters_route_netdev("127.0.0.1:7470", NULL, ifn, sizeof(ifn), &err), 0);
    assert_string_equal(ifn, "lo");
    assert_int_equal(counters_route_netdev("10.1.2.3", "127.0.0.1", ifn, sizeof(ifn), &err), 0);
    assert_string_equal(ifn, "lo");
    if (counters_route_netdev("[::1]:7470", NULL, ifn, sizeof(ifn), &err) == 0)
        assert_string_equal(ifn, "lo");
    assert_true(counters_route_netdev(NULL, "192.0.2.99", ifn, sizeof(ifn), &err) < 0);
    assert_non_null(strstr(err.msg, "192.0.2.99"));
}

static bool has(const char *const *l, int n, const char *needle)
{
    for (int i = 0; i < n; i++)
        if (strstr(l[i], needle))
            return true;
    return false;
}

/* How many RDMA devices the kernel lists (symlinks in /sys/class/infiniband). */
static int rdma_devices(void)
{
    DIR *d = opendir("/sys/class/infiniband");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_verbs_attribution(void **state)
{
    (void)state;
    static const char *const connect[] = {"ctl", "rdmacm"};
    for (int k = 0; k < 2; k++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{\"format\": \"fabtop-mix\", \"version\": 1, \"name\": \"v\", \"flows\": "
                 "[{\"name\": \"wr\", \"transport\": \"verbs\", \"op\": \"pingpong\", "
                 "\"size\": 2, \"duration_s\": 1, \"peer\": \"127.0.0.1\", \"params\": "
                 "{\"verb\": \"write\", \"connect\": \"%s\"}}]}",
                 connect[k]);
        struct mix m = mixtest_parse(json);
        struct ft_err err = {0};
        struct counters_set *cs = NULL;
        assert_int_equal(counters_set_for_mix(&m, NULL, xport_local_port, NULL, &cs, &err), 0);
        const char *const *obj, *const *notes;
        int nobj = counters_set_objects(cs, &obj), nnotes = counters_set_notes(cs, &notes);
        for (int i = 0; i < nnotes; i++)
            printf("%s: note: %s\n", connect[k], notes[i]);
        for (int i = 0; i < nobj; i++)
            printf("%s: object: %s\n", connect[k], obj[i]);
        bool rdma = rdma_devices() > 0;
        if (k == 1) {
            /* librdmacm picks its device by the route: lo's netdev, like TCP. */
            assert_true(has(obj, nobj, "lo"));
            assert_false(has(notes, nnotes, "RDMA port unknown"));
        } else if (!rdma) {
            assert_true(has(notes, nnotes, "flow wr: RDMA port unknown (no RDMA device here"));
        } else {
            assert_false(has(notes, nnotes, "RDMA port unknown"));
        }
        counters_set_close(cs);
        mix_free(&m);
    }
}

int main(void)
{
    struct stat st;
    if (stat("/sys/class/net/lo/statistics", &st) < 0 || stat("/proc/net/snmp", &st) < 0) {
        printf("SKIP: no /sys/class/net/lo or /proc/net/snmp\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lo_and_snmp_move),
        cmocka_unit_test(test_qdisc_dump),
        cmocka_unit_test(test_route_netdev),
        cmocka_unit_test(test_verbs_attribution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
