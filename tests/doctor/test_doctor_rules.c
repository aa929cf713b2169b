/* test_doctor_rules: each comparison rule of the handshake doctor triggered by made-up facts
 * and quiet on matched ones; the facts' JSON round trip; a RoCE v1 GID read from a made-up
 * sysfs tree (gid_attrs/types "IB/RoCE v1") through the topology discovery. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../sysfs/sysfs_tree.h"
#include "engine/doctor/doctor.h"

static void base(struct doctor_facts *f, const char *host, const char *addr, const char *peer,
                 const char *dev)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->host, sizeof(f->host), "%s", host);
    snprintf(f->local_addr, sizeof(f->local_addr), "%s", addr);
    snprintf(f->peer_addr, sizeof(f->peer_addr), "%s", peer);
    snprintf(f->addr_dev, sizeof(f->addr_dev), "%s", dev);
    snprintf(f->route_dev, sizeof(f->route_dev), "%s", dev);
    snprintf(f->subnet, sizeof(f->subnet), "10.0.0.0/24");
    f->mtu = f->addr_mtu = 1500;
    f->tcp_ecn = 2;
    f->memlock_soft = f->memlock_hard = DOCTOR_UNLIMITED;
    f->iommu_groups = DOCTOR_UNKNOWN;
}

static void roce(struct doctor_facts *f, const char *dev, int netdev_mtu, const char *gid0)
{
    struct doctor_rdma_port *r = &f->rdma[f->nrdma++];
    memset(r, 0, sizeof(*r));
    snprintf(r->dev, sizeof(r->dev), "%s", dev);
    r->port = 1;
    snprintf(r->link_layer, sizeof(r->link_layer), "Ethernet");
    snprintf(r->state, sizeof(r->state), "ACTIVE");
    r->netdev_mtu = netdev_mtu;
    r->active_mtu = doctor_roce_mtu(netdev_mtu);
    r->max_mtu = 4096;
    snprintf(r->netdev, sizeof(r->netdev), "eth1");
    r->ngids = 2;
    r->gids[0].index = 0;
    snprintf(r->gids[0].type, sizeof(r->gids[0].type), "%s", gid0);
    r->gids[1].index = 1;
    snprintf(r->gids[1].type, sizeof(r->gids[1].type), "RoCE v2");
}

static struct doctor_facts L, P;
static struct doctor_finding F[16];

static int setup(void **st)
{
    (void)st;
    base(&L, "hostA", "10.0.0.1", "10.0.0.2", "eth1");
    base(&P, "hostB", "10.0.0.2", "10.0.0.1", "eth1");
    return 0;
}

static const struct doctor_finding *find(int n, const char *rule)
{
    for (int i = 0; i < n && i < 16; i++)
        if (!strcmp(F[i].rule, rule))
            return &F[i];
    return NULL;
}

static void test_clean(void **st)
{
    (void)st;
    struct doctor_pmtu pr = {true, 1500, 1500, 0};
    roce(&L, "rxe0", 4200, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, 1, 4096, ""};
    int n = doctor_compare(&L, &P, &qp, &pr, F, 16);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "unexpected: %s\n", F[i].msg);
    assert_int_equal(n, 0);
    assert_int_equal(doctor_status(F, n), 0);
}

static void test_roce_mtu(void **st)
{
    (void)st;
    assert_int_equal(doctor_roce_mtu(1500), 1024);
    assert_int_equal(doctor_roce_mtu(4200), 4096);
    assert_int_equal(doctor_roce_mtu(4192), 4096);
    assert_int_equal(doctor_roce_mtu(4191), 2048);
    assert_int_equal(doctor_roce_mtu(9000), 4096);
    assert_int_equal(doctor_roce_mtu(300), 0);
}

static void test_netdev_mtu(void **st)
{
    (void)st;
    P.mtu = 9000;
    int n = doctor_rule_mtu(&L, &P, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "mtu-mismatch");
    assert_string_equal(F[0].local, "1500");
    assert_string_equal(F[0].peer, "9000");
    assert_int_equal(F[0].sev, DOCTOR_WARN);
    P.mtu = 1500;
    assert_int_equal(doctor_rule_mtu(&L, &P, F, 16), 0);
}

static void test_path_mtu_vs_active(void **st)
{
    (void)st;
    roce(&L, "rxe0", 1500, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, 1, 4096, ""};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    const struct doctor_finding *f = find(n, "path-mtu");
    assert_non_null(f);
    assert_int_equal(f->sev, DOCTOR_ERROR);
    assert_string_equal(f->msg, "path MTU 4096 > rxe0 active MTU 1024 on hostA; set both "
                                "netdevs' MTU to 4200 or use 1024");
    const struct doctor_finding *m = find(n, "roce-netdev-mtu");
    assert_non_null(m);
    assert_string_equal(m->local, "1500");
    assert_string_equal(m->peer, "4200");
    /* 1024 fits both ends: no path MTU finding. */
    qp.path_mtu = 1024;
    n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_null(find(n, "path-mtu"));
}

static void test_gid_index_missing(void **st)
{
    (void)st;
    roce(&L, "rxe0", 4200, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, 5, 0, ""};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_int_equal(n, 2); /* both ends */
    assert_string_equal(F[0].rule, "gid-index");
    assert_non_null(strstr(F[0].msg, "GID index 5 does not exist on rxe0 port 1 at hostA"));
    assert_non_null(strstr(F[1].msg, "at hostB"));
}

static void test_gid_type_v1(void **st)
{
    (void)st;
    roce(&L, "mlx5_0", 4200, "RoCE v1");
    roce(&P, "mlx5_0", 4200, "RoCE v2");
    struct doctor_qp qp = {"mlx5_0", 1, 0, 0, ""};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "gid-type");
    assert_string_equal(F[0].local, "RoCE v1");
    assert_non_null(strstr(F[0].msg, "no IP header"));
    assert_int_equal(F[0].sev, DOCTOR_WARN);
    qp.gid_index = 1;
    assert_int_equal(doctor_rule_rdma(&L, &P, &qp, F, 16), 0);
}

static void test_link_layer_and_state(void **st)
{
    (void)st;
    roce(&L, "mlx5_0", 4200, "RoCE v2");
    roce(&P, "mlx5_0", 4200, "RoCE v2");
    snprintf(P.rdma[0].link_layer, sizeof(P.rdma[0].link_layer), "InfiniBand");
    snprintf(P.rdma[0].state, sizeof(P.rdma[0].state), "DOWN");
    struct doctor_qp qp = {"mlx5_0", 1, -1, 0, ""};
    int n = doctor_rule_rdma(&L, &P, &qp, F, 16);
    assert_non_null(find(n, "link-layer"));
    const struct doctor_finding *s = find(n, "port-state");
    assert_non_null(s);
    assert_string_equal(s->peer, "DOWN");
}

static void test_rp_filter(void **st)
{
    (void)st;
    snprintf(P.route_dev, sizeof(P.route_dev), "eth2");
    P.rp_filter_all = 0;
    P.rp_filter_dev = 1;
    int n = doctor_rule_route(&L, &P, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "rp-filter");
    assert_int_equal(F[0].sev, DOCTOR_ERROR);
    assert_non_null(strstr(F[0].msg, "strict (1) on eth1 at hostB"));
    /* 'all' wins when larger (max of all and the interface), loose is fine. */
    P.rp_filter_dev = 0;
    P.rp_filter_all = 1;
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 1);
    P.rp_filter_all = 2;
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 0);
    /* Strict on a symmetric route: fine. */
    P.rp_filter_all = 1;
    snprintf(P.route_dev, sizeof(P.route_dev), "eth1");
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 0);
}

static void test_arp_flux(void **st)
{
    (void)st;
    L.nsib = 1;
    snprintf(L.sib[0], sizeof(L.sib[0]), "eth2");
    L.arp_ignore_all = L.arp_ignore_dev = 0;
    int n = doctor_rule_route(&L, &P, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "arp-flux");
    assert_non_null(strstr(F[0].msg, "eth1 and eth2 hold addresses in 10.0.0.0/24"));
    L.arp_ignore_all = 1;
    assert_int_equal(doctor_rule_route(&L, &P, F, 16), 0);
}

static void test_pmtu(void **st)
{
    (void)st;
    struct doctor_pmtu hole = {true, 1500, 1280, 0};
    int n = doctor_rule_pmtu(&L, &P, &hole, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "pmtu-blackhole");
    assert_non_null(strstr(F[0].msg, "packets above 1280 bytes vanish"));
    struct doctor_pmtu icmp = {true, 1500, 1280, 1280};
    n = doctor_rule_pmtu(&L, &P, &icmp, F, 16);
    assert_int_equal(n, 1);
    assert_string_equal(F[0].rule, "pmtu-smaller");
    assert_int_equal(F[0].sev, DOCTOR_WARN);
    struct doctor_pmtu none = {true, 1500, 0, 0};
    assert_int_equal(doctor_rule_pmtu(&L, &P, &none, F, 16), 1);
    assert_string_equal(F[0].rule, "pmtu-none");
    struct doctor_pmtu ok = {true, 1500, 1500, 0};
    assert_int_equal(doctor_rule_pmtu(&L, &P, &ok, F, 16), 0);
}

static void test_host(void **st)
{
    (void)st;
    roce(&L, "rxe0", 4200, "RoCE v2");
    roce(&P, "rxe0", 4200, "RoCE v2");
    struct doctor_qp qp = {"rxe0", 1, -1, 0, ""};
    P.memlock_soft = 8 << 20;
    L.tcp_ecn = 0;
    P.tcp_ecn = 1;
    int n = doctor_rule_host(&L, &P, &qp, F, 16);
    assert_int_equal(n, 2);
    assert_string_equal(F[0].rule, "memlock");
    assert_string_equal(F[0].peer, "8192 KiB");
    assert_string_equal(F[1].rule, "ecn");
    /* memlock matters for verbs only */
    assert_int_equal(doctor_rule_host(&L, &P, NULL, F, 16), 1);
}

static void test_json_round_trip(void **st)
{
    (void)st;
    roce(&L, "rxe0", 1500, "RoCE v1");
    L.nsib = 1;
    snprintf(L.sib[0], sizeof(L.sib[0]), "eth9");
    L.rp_filter_dev = DOCTOR_UNKNOWN;
    L.memlock_soft = 65536;
    cJSON *j = doctor_facts_json(&L);
    struct doctor_facts back;
    struct ft_err err = {0};
    assert_int_equal(doctor_facts_from_json(j, &back, &err), 0);
    cJSON_Delete(j);
    assert_string_equal(back.host, "hostA");
    assert_int_equal(back.mtu, 1500);
    assert_int_equal(back.rp_filter_dev, DOCTOR_UNKNOWN);
    assert_int_equal(back.memlock_soft, 65536);
    assert_int_equal(back.memlock_hard, DOCTOR_UNLIMITED);
    assert_int_equal(back.nsib, 1);
    assert_string_equal(back.sib[0], "eth9");
    assert_int_equal(back.nrdma, 1);
    assert_int_equal(back.rdma[0].active_mtu, 1024);
    assert_string_equal(back.rdma[0].gids[0].type, "RoCE v1");
    assert_int_equal(doctor_facts_from_json(NULL, &back, &err), -EPROTO);
}

/* ---- a made-up sysfs tree: a virtual RoCE device whose GID 0 is "IB/RoCE v1" ---- */

static char root[256];

static void put(const char *rel, const char *text)
{
    tree_file(root, rel, text);
}

static void write_tree(void)
{
    tree_cpus(root);
    const char *d = "sys/devices/virtual/infiniband/roce9";
    char rel[256];
#define P(f, v)                                                                                    \
    do {                                                                                           \
        snprintf(rel, sizeof(rel), "%s/%s", d, f);                                                 \
        put(rel, v);                                                                               \
    } while (0)
    P("ports/1/state", "4: ACTIVE");
    P("ports/1/phys_state", "5: LinkUp");
    P("ports/1/link_layer", "Ethernet");
    P("ports/1/rate", "10 Gb/sec (1X QDR)");
    P("ports/1/gids/0", "0000:0000:0000:0000:0000:ffff:0a00:0001");
    P("ports/1/gid_attrs/types/0", "IB/RoCE v1");
    P("ports/1/gid_attrs/ndevs/0", "eth1");
    P("ports/1/gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0001");
    P("ports/1/gid_attrs/types/1", "RoCE v2");
    P("ports/1/gid_attrs/ndevs/1", "eth1");
    P("fw_ver", "1.2.3");
#undef P
    tree_link(root, "sys/class/infiniband/roce9", "../../devices/virtual/infiniband/roce9");
    put("sys/devices/virtual/net/eth1/mtu", "1500");
    put("sys/devices/virtual/net/eth1/operstate", "up");
    tree_link(root, "sys/class/net/eth1", "../../devices/virtual/net/eth1");
}

static void test_sysfs_roce_v1(void **st)
{
    (void)st;
    snprintf(root, sizeof(root), "/tmp/fabtop-doctor.XXXXXX");
    if (!mkdtemp(root))
        fail_msg("mkdtemp: %s", strerror(errno));
    write_tree();
    struct doctor_facts f;
    memset(&f, 0, sizeof(f));
    doctor_facts_rdma(&f, root);
    tree_remove(root);
    if (f.nrdma != 1)
        fail_msg("expected one RDMA port from the made-up tree, got %d", f.nrdma);
    assert_string_equal(f.rdma[0].dev, "roce9");
    assert_string_equal(f.rdma[0].link_layer, "Ethernet");
    assert_int_equal(f.rdma[0].ngids, 2);
    assert_string_equal(f.rdma[0].gids[0].type, "RoCE v1");
    assert_string_equal(f.rdma[0].gids[1].type, "RoCE v2");
    /* The v1 GID chosen for a queue pair is named, with what v1 costs. */
    struct doctor_facts p = f;
    snprintf(f.host, sizeof(f.host), "hostA");
    struct doctor_qp qp = {"roce9", 1, 0, 0, ""};
    int n = doctor_rule_rdma(&f, &p, &qp, F, 16);
    assert_int_equal(n, 2);
    assert_string_equal(F[0].rule, "gid-type");
    assert_non_null(strstr(F[0].msg, "GID index 0 on roce9 at hostA is RoCE v1, not RoCE v2"));
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test_setup(test_clean, setup),
        cmocka_unit_test_setup(test_roce_mtu, setup),
        cmocka_unit_test_setup(test_netdev_mtu, setup),
        cmocka_unit_test_setup(test_path_mtu_vs_active, setup),
        cmocka_unit_test_setup(test_gid_index_missing, setup),
        cmocka_unit_test_setup(test_gid_type_v1, setup),
        cmocka_unit_test_setup(test_link_layer_and_state, setup),
        cmocka_unit_test_setup(test_rp_filter, setup),
        cmocka_unit_test_setup(test_arp_flux, setup),
        cmocka_unit_test_setup(test_pmtu, setup),
        cmocka_unit_test_setup(test_host, setup),
        cmocka_unit_test_setup(test_json_round_trip, setup),
        cmocka_unit_test_setup(test_sysfs_roce_v1, setup),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
